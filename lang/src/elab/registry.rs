//! The plug-in point for builtins that live outside this crate: the gluon crate registers every `gl.*` builtin
//! (and the modules under `triton.experimental.gluon.language`) here, and the facade passes the registry to
//! [`crate::elab::elaborate_with`]. lang owns only the dispatch:
//!
//! - a module path the registry lists is importable (`from ...nvidia.hopper import mbarrier`), and its members
//!   are [`Entry`]s, found by name (`mbarrier.init`) or as an attribute of another entry
//!   (`gl.NVMMASharedLayout.get_default_for` is the entry `NVMMASharedLayout.get_default_for`);
//! - a call binds the arguments to the entry's signature (with defaults: `"bar, count=1, pred=True"`) and runs
//!   its handler; registered builtins run only in `@gluon.jit` kernels;
//! - attributes and methods of the runtime values lang itself does not interpret (shared-memory descriptors,
//!   tokens) and attributes of layout objects go to the registry's hooks.

use tessel_tile::Type;

use crate::elab::args::{Bound, CallArgs};
use crate::elab::names::closest;
use crate::elab::value::{Builtin, Ns, Value};
use crate::elab::{Elab, R};
use crate::span::Span;

/// What runs when a registered builtin is called.
#[derive(Clone, Copy)]
pub enum Handler {
    /// The arguments bound to a signature first (see [`crate::elab::builtins::bind`] for its syntax).
    Bound(&'static str, for<'a> fn(&mut Elab<'a>, Bound<'a>) -> R<Value<'a>>),
    /// The arguments as written, for a handler that binds them itself; it gets the entry's name.
    Raw(for<'a> fn(&mut Elab<'a>, &'static str, CallArgs<'a>) -> R<Value<'a>>),
}

/// One registered builtin.
#[derive(Clone, Copy)]
pub struct Entry {
    /// The canonical path of the module it is a member of.
    pub module: &'static str,
    /// Its name in the module; `Class.method` for a static method of a builtin class.
    pub name: &'static str,
    pub handler: Handler,
}

/// `value.name` for values the registry owns; `Ok(None)`: not one of them.
pub type AttrHook = for<'a> fn(&mut Elab<'a>, &Value<'a>, &str, Span) -> R<Option<Value<'a>>>;
/// `value.name(args)` for values the registry owns; `Ok(None)`: not one of them.
pub type MethodHook = for<'a> fn(&mut Elab<'a>, &Value<'a>, &str, CallArgs<'a>, Span) -> R<Option<Value<'a>>>;

/// The builtins other crates plug into the elaborator.
#[derive(Default)]
pub struct Registry {
    modules: Vec<(&'static str, &'static str)>,
    entries: Vec<Entry>,
    attr: Option<AttrHook>,
    method: Option<MethodHook>,
}

static EMPTY: Registry = Registry { modules: Vec::new(), entries: Vec::new(), attr: None, method: None };

impl Registry {
    /// No plug-ins: the `tl.*` surface alone.
    pub fn empty() -> &'static Registry {
        &EMPTY
    }

    /// Makes the module at canonical `path` importable; `alias` is how messages name its members (`mbarrier`).
    pub fn module(&mut self, path: &'static str, alias: &'static str) {
        if !self.modules.iter().any(|(p, _)| *p == path) {
            self.modules.push((path, alias));
        }
    }

    /// Registers `name` in `module` (which must have been registered with [`Registry::module`]).
    pub fn add(&mut self, module: &'static str, name: &'static str, handler: Handler) {
        assert!(self.has_module(module), "register the module `{module}` before its members");
        assert!(self.find(module, name).is_none(), "`{module}.{name}` is registered twice");
        self.entries.push(Entry { module, name, handler });
    }

    pub fn set_attr_hook(&mut self, hook: AttrHook) {
        self.attr = Some(hook);
    }

    pub fn set_method_hook(&mut self, hook: MethodHook) {
        self.method = Some(hook);
    }

    pub fn has_module(&self, path: &str) -> bool {
        self.modules.iter().any(|(p, _)| *p == path)
    }

    /// The index of `module.name`.
    pub fn find(&self, module: &str, name: &str) -> Option<usize> {
        self.entries.iter().position(|e| e.module == module && e.name == name)
    }

    pub fn entry(&self, i: usize) -> &Entry {
        &self.entries[i]
    }

    /// The names of `module`'s members (for "did you mean" hints).
    pub fn names(&self, module: &str) -> impl Iterator<Item = &'static str> + '_ {
        let module = module.to_string();
        self.entries.iter().filter(move |e| e.module == module).map(|e| e.name)
    }

    /// How messages name entry `i`: `gl.allocate_shared_memory`, `mbarrier.init`.
    pub fn display(&self, i: usize) -> String {
        let e = &self.entries[i];
        let alias = self.modules.iter().find(|(p, _)| *p == e.module).map_or(e.module, |(_, a)| *a);
        format!("{alias}.{}", e.name)
    }

    pub fn attr_hook(&self) -> Option<AttrHook> {
        self.attr
    }

    pub fn method_hook(&self) -> Option<MethodHook> {
        self.method
    }
}

impl<'a> Elab<'a> {
    /// Whether `path` (canonical) is a module a kernel may import: lang's own or a registered one.
    pub fn is_module(&self, path: &str) -> bool {
        crate::elab::builtins::known_module(path).is_some() || self.registry.has_module(path)
    }

    /// `module.name` when the registry has it.
    pub fn plugin_builtin(&self, module: &str, name: &str) -> Option<Builtin> {
        let i = self.registry.find(module, name)?;
        Some(Builtin { ns: Ns::Plugin(i as u16), name: self.registry.entry(i).name })
    }

    /// The error for a name a registered module does not have, with the closest one as a hint.
    pub fn unknown_plugin_name(&self, module: &str, name: &str, span: Span) -> Box<crate::elab::ElabError> {
        let alias = module.rsplit('.').next().unwrap_or(module);
        let mut e = self.err(span, format!("unknown builtin `{alias}.{name}` (module `{module}`)"));
        if let Some(best) = closest(name, self.registry.names(module)) {
            e.diag = e.diag.with_hint(format!("did you mean `{alias}.{best}`?"));
        }
        e
    }

    /// Calls registry entry `i`.
    pub fn call_plugin(&mut self, i: usize, args: CallArgs<'a>) -> R<Value<'a>> {
        let entry = *self.registry.entry(i);
        let fname = self.registry.display(i);
        if !self.gluon {
            return Err(self.err_hint(
                args.span,
                format!("`{fname}` is a gluon builtin: it needs a `@gluon.jit` kernel"),
                "decorate the kernel with `@gluon.jit` (`from triton.experimental import gluon`)",
            ));
        }
        match entry.handler {
            Handler::Bound(sig, f) => {
                let b = self.bind(&fname, sig, args)?;
                f(self, b)
            }
            Handler::Raw(f) => f(self, entry.name, args),
        }
    }

    /// Whether the registry owns `v`'s attributes and methods: shared-memory descriptors, tokens, layouts.
    fn plugin_owned(v: &Value<'a>) -> bool {
        match v {
            Value::Tensor(t) => matches!(t.ty, Type::MemDesc { .. } | Type::Token),
            Value::Layout(_) => true,
            _ => false,
        }
    }

    /// `v.name` through the registry: a static member of a registered class (`NVMMASharedLayout.get_default_for`),
    /// or an attribute the attribute hook knows. `Ok(None)`: lang handles it.
    pub fn plugin_attr(&mut self, v: &Value<'a>, name: &str, span: Span) -> R<Option<Value<'a>>> {
        if let Value::Builtin(Builtin { ns: Ns::Plugin(i), .. }) = v {
            let e = *self.registry.entry(*i as usize);
            let dotted = format!("{}.{name}", e.name);
            return match self.plugin_builtin(e.module, &dotted) {
                Some(b) => Ok(Some(Value::Builtin(b))),
                None => {
                    Err(self.err(span, format!("`{}` has no attribute `{name}`", self.registry.display(*i as usize))))
                }
            };
        }
        // Tensor descriptors are lang's, but the registry may add attributes (gluon's `desc.layout`).
        let desc = matches!(v, Value::Tensor(t) if matches!(t.ty, Type::TensorDesc { .. }));
        if !Self::plugin_owned(v) && !desc {
            return Ok(None);
        }
        match self.registry.attr_hook() {
            Some(hook) => hook(self, v, name, span),
            None => Ok(None),
        }
    }

    /// `recv.name(args)` when the registry owns `recv`; `Ok(None)` (with the arguments back) otherwise.
    pub fn plugin_method(
        &mut self,
        recv: &Value<'a>,
        name: &str,
        args: CallArgs<'a>,
        span: Span,
    ) -> R<Result<Value<'a>, CallArgs<'a>>> {
        if !Self::plugin_owned(recv) {
            return Ok(Err(args));
        }
        let found = match self.registry.method_hook() {
            Some(hook) => hook(self, recv, name, args, span)?,
            None => None,
        };
        match found {
            Some(v) => Ok(Ok(v)),
            None => Err(self.err(span, format!("{} has no method `{name}`", recv.type_name()))),
        }
    }
}
