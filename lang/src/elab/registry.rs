//! The builtin registry: every name a kernel reaches in a module tessel knows — `tl.load`, `tl.math.exp`,
//! `libdevice.tanh`, `tl.float16`, `tl.sum`, Python's `len`, a tensor's `x.to(...)`, gluon's `gl.BlockedLayout` —
//! is one [`Entry`], registered once with its module's canonical path, its name and what it is ([`Kind`]): a
//! builtin called through its [`Handler`], a dtype, or a function of lang's prelude. Everything about builtins
//! derives from the registrations:
//!
//! - name lookup ([`Registry::find`]): a module's own entries, then those of the modules it re-exports (`gl` has
//!   `tl`'s, libdevice has `tl.math`'s); the did-you-mean candidates are the names lookup would find;
//! - how messages name an entry ([`Registry::display`]: its module's alias and its name, `tl.load`,
//!   `tl.math.exp` even when written `libdevice.exp`, `len` for Python's);
//! - which names are tensor methods (entries registered with [`Registration::method`]: `x.exp()` is `tl.exp(x)`);
//! - dispatch: a call binds the arguments to the handler's signature with [`crate::elab::args::bind`] and runs it.
//!
//! lang registers its own builtins (`builtins::registry`); a plug-in crate (gluon) starts from a copy of that
//! registry and adds its modules and entries, and the facade hands the result to
//! [`crate::elab::elaborate_with`]. The members of Gluon's language modules run only in `@gluon.jit` kernels
//! ([`crate::elab::names::in_gluon_language`]). Attributes and methods of the runtime values lang itself does not
//! interpret (shared-memory descriptors, tokens) and attributes of layout objects go to the registry's hooks.
//! How the elaborator looks names up and calls entries is the `lookup` module's.

use std::collections::HashMap;

use crate::elab::args::{Bound, CallArgs};
use crate::elab::names::in_gluon_language;
use crate::elab::value::{Builtin, Dtype, Value};
use crate::elab::{Elab, R};
use crate::span::Span;

/// A handler that gets the arguments bound to its signature.
pub type BoundFn = for<'a> fn(&mut Elab<'a>, Bound<'a>) -> R<Value<'a>>;
/// A handler that gets the arguments as written, and the entry's name.
pub type RawFn = for<'a> fn(&mut Elab<'a>, &'static str, CallArgs<'a>) -> R<Value<'a>>;

/// What runs when a builtin is called.
#[derive(Clone, Copy)]
pub enum Handler {
    /// The arguments bound to a signature first (see [`crate::elab::args::bind`] for its syntax).
    Bound(&'static str, BoundFn),
    /// The arguments as written, for a handler that binds them itself; it gets the entry's name.
    Raw(RawFn),
    /// A class a kernel names in annotations and `isinstance` (`tl.tensor`): calling it is an error.
    Type,
    /// A decorator (`tl.constexpr_function`): written above a definition, not called.
    Decorator,
    /// A host-side name a kernel's module may mention (`triton.autotune`): calling it in a kernel is an error.
    HostSide,
}

/// What a registered name is.
#[derive(Clone, Copy)]
pub enum Kind {
    /// A builtin function or class, called through its handler.
    Builtin(Handler),
    /// A dtype (`tl.float16`).
    Dtype(Dtype),
    /// The function of lang's prelude of the same name (`tl.sum`), written in the kernel language.
    Prelude,
}

/// One registered name.
#[derive(Clone, Copy)]
pub struct Entry {
    /// The canonical path of the module it is a member of.
    pub module: &'static str,
    /// Its name in the module; `Class.method` for a static method of a builtin class.
    pub name: &'static str,
    pub kind: Kind,
    /// Whether it runs only in `@gluon.jit` kernels (a member of Gluon's language modules).
    pub gluon_only: bool,
}

/// A module (or a namespace no import reaches) that entries are members of.
#[derive(Clone)]
struct Module {
    path: &'static str,
    /// How messages name it: `tl`, `gl`, `mbarrier`; empty for Python's builtins (`len`).
    alias: &'static str,
    /// Whether an import reaches it by its path (Python's builtins and tensor methods are reached otherwise).
    importable: bool,
    /// The modules whose entries it has too, after its own.
    reexports: Vec<&'static str>,
    /// Its own entries by name.
    members: HashMap<&'static str, u16>,
}

/// `value.name` for values the registry owns; `Ok(None)`: not one of them.
pub type AttrHook = for<'a> fn(&mut Elab<'a>, &Value<'a>, &str, Span) -> R<Option<Value<'a>>>;
/// `value.name(args)` for values the registry owns; `Ok(None)`: not one of them.
pub type MethodHook = for<'a> fn(&mut Elab<'a>, &Value<'a>, &str, CallArgs<'a>, Span) -> R<Option<Value<'a>>>;

/// Every builtin the elaborator knows, by module.
#[derive(Clone, Default)]
pub struct Registry {
    modules: Vec<Module>,
    entries: Vec<Entry>,
    /// The tensor methods by name.
    methods: HashMap<&'static str, u16>,
    attr: Option<AttrHook>,
    method: Option<MethodHook>,
}

/// A just-registered entry, for what else it is.
pub struct Registration<'r> {
    registry: &'r mut Registry,
    id: u16,
}

impl Registration<'_> {
    /// Makes the entry a method of tensors too: `x.name(args)` calls it with `x` first.
    pub fn method(self) {
        let name = self.registry.entries[self.id as usize].name;
        let old = self.registry.methods.insert(name, self.id);
        assert!(old.is_none(), "two tensor methods are named `{name}`");
    }
}

impl Registry {
    /// Makes the module at canonical `path` importable; `alias` is how messages name its members (`mbarrier`).
    /// Registering a module again keeps the first registration.
    pub fn module(&mut self, path: &'static str, alias: &'static str) {
        self.add_module(path, alias, true);
    }

    /// A namespace no import reaches by its path: Python's builtins, tensor methods, libdevice's `tl.extra.cuda`
    /// functions. Its entries are found by [`Registry::find`] and through the modules that re-export it.
    pub fn namespace(&mut self, path: &'static str, alias: &'static str) {
        self.add_module(path, alias, false);
    }

    fn add_module(&mut self, path: &'static str, alias: &'static str, importable: bool) {
        if self.module_at(path).is_none() {
            let members = HashMap::new();
            self.modules.push(Module { path, alias, importable, reexports: Vec::new(), members });
        }
    }

    /// Gives module `into` the entries of module `from` (after its own, and those of modules re-exported
    /// before). Both must be registered.
    pub fn reexport(&mut self, into: &'static str, from: &'static str) {
        assert!(self.module_at(from).is_some(), "register the module `{from}` before re-exporting it");
        let m = self.module_at(into).unwrap_or_else(|| panic!("register the module `{into}` before its re-exports"));
        self.modules[m].reexports.push(from);
    }

    /// Registers the builtin `name` in `module` (which must have been registered).
    pub fn add(&mut self, module: &'static str, name: &'static str, handler: Handler) -> Registration<'_> {
        self.add_entry(module, name, Kind::Builtin(handler))
    }

    /// Registers the dtype `d` as `module.name`.
    pub fn dtype(&mut self, module: &'static str, name: &'static str, d: Dtype) {
        self.add_entry(module, name, Kind::Dtype(d));
    }

    /// Registers `module.name` as the prelude's function `name`.
    pub fn prelude(&mut self, module: &'static str, name: &'static str) -> Registration<'_> {
        self.add_entry(module, name, Kind::Prelude)
    }

    fn add_entry(&mut self, module: &'static str, name: &'static str, kind: Kind) -> Registration<'_> {
        let m = self.module_at(module).unwrap_or_else(|| panic!("register the module `{module}` before its members"));
        let id = u16::try_from(self.entries.len()).expect("fewer than 65536 builtins");
        let old = self.modules[m].members.insert(name, id);
        assert!(old.is_none(), "`{module}.{name}` is registered twice");
        self.entries.push(Entry { module, name, kind, gluon_only: in_gluon_language(module) });
        Registration { registry: self, id }
    }

    pub fn set_attr_hook(&mut self, hook: AttrHook) {
        self.attr = Some(hook);
    }

    pub fn set_method_hook(&mut self, hook: MethodHook) {
        self.method = Some(hook);
    }

    fn module_at(&self, path: &str) -> Option<usize> {
        self.modules.iter().position(|m| m.path == path)
    }

    /// Whether an import reaches the module at canonical `path`.
    pub fn has_module(&self, path: &str) -> bool {
        self.module_at(path).is_some_and(|m| self.modules[m].importable)
    }

    /// How messages name the module at `path` (`tl`, `mbarrier`), if it is registered.
    pub fn alias(&self, path: &str) -> Option<&'static str> {
        self.module_at(path).map(|m| self.modules[m].alias)
    }

    /// The entry `name` of `module`: its own, else the first that a module it re-exports has.
    pub fn find(&self, module: &str, name: &str) -> Option<u16> {
        let m = &self.modules[self.module_at(module)?];
        m.members.get(name).copied().or_else(|| m.reexports.iter().find_map(|r| self.find(r, name)))
    }

    pub fn entry(&self, id: u16) -> &Entry {
        &self.entries[id as usize]
    }

    /// Entry `id` as a value of the elaborator (for a builtin entry).
    pub fn builtin(&self, id: u16) -> Builtin {
        Builtin { id, name: self.entry(id).name }
    }

    /// The names [`Registry::find`] finds in `module` (for "did you mean" hints).
    pub fn names(&self, module: &str) -> Vec<&'static str> {
        let Some(m) = self.module_at(module) else { return Vec::new() };
        let m = &self.modules[m];
        let mut out: Vec<&'static str> = self.members(m.path).map(|e| e.name).collect();
        for r in &m.reexports {
            out.extend(self.names(r));
        }
        out
    }

    /// `module`'s own entries, in the order they were registered (what the host side lists as a module's names).
    pub fn members<'r>(&'r self, module: &'r str) -> impl Iterator<Item = &'r Entry> + 'r {
        self.entries.iter().filter(move |e| e.module == module)
    }

    /// The tensor method `name`.
    pub fn method(&self, name: &str) -> Option<u16> {
        self.methods.get(name).copied()
    }

    /// The names of the tensor methods (for "did you mean" hints).
    pub fn method_names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.methods.keys().copied()
    }

    /// How messages name entry `id`: `tl.load`, `mbarrier.init`, `len`.
    pub fn display(&self, id: u16) -> String {
        let e = self.entry(id);
        match self.alias(e.module) {
            Some("") | None => e.name.to_string(),
            Some(alias) => format!("{alias}.{}", e.name),
        }
    }

    pub fn attr_hook(&self) -> Option<AttrHook> {
        self.attr
    }

    pub fn method_hook(&self) -> Option<MethodHook> {
        self.method
    }
}
