//! How the elaborator finds and calls builtins, through the [`Registry`] alone: an import path or a module
//! attribute (`tl.load`, `from triton.language.extra import libdevice`) to a module or an entry, with the error
//! for an unknown name (its did-you-mean from the names the module has) and for an AMD-only module; Python's
//! builtins by bare name; a tensor's methods; calling an entry (the gl-only rule, [`crate::elab::args::bind`],
//! the handler); and the plug-in hooks for the attributes and methods of values lang does not interpret.

use tessel_tile::Type;

use crate::elab::args::CallArgs;
use crate::elab::names::{BUILTINS, canonical, closest, is_amd_path};
use crate::elab::registry::{Handler, Kind};
use crate::elab::value::{Builtin, Value};
use crate::elab::{Elab, ElabError, PRELUDE_MODULE, R};
use crate::span::Span;

impl<'a> Elab<'a> {
    /// Whether `path` (canonical) is a module a kernel may import.
    pub fn is_module(&self, path: &str) -> bool {
        self.registry.has_module(path)
    }

    /// The value an import path refers to: a module, or a member of one (`from triton import jit`).
    pub fn resolve_path(&mut self, path: &str, span: Span) -> R<Value<'a>> {
        if path.starts_with('.') {
            return Err(self.host_side(path, span));
        }
        // A module of the module set, or a global of one (`pkg.utils.helper`).
        if let Some(v) = self.resolve_in_set(path, span)? {
            return Ok(v);
        }
        let path = canonical(path);
        if is_amd_path(&path) {
            return Err(self.amd_error(&path, span));
        }
        if self.is_module(&path) {
            return Ok(Value::Module(path.as_str().into()));
        }
        match path.rsplit_once('.') {
            Some((parent, name)) if self.is_module(&canonical(parent)) => self.module_attr(parent, name, span),
            // A module we do not know (torch, numpy...): usable only by host code.
            _ => Ok(Value::Module(path.as_str().into())),
        }
    }

    /// `module.name`.
    pub fn module_attr(&mut self, module: &str, name: &str, span: Span) -> R<Value<'a>> {
        let module = canonical(module);
        let sub = canonical(&format!("{module}.{name}"));
        if is_amd_path(&sub) {
            return Err(self.amd_error(&sub, span));
        }
        if self.is_module(&sub) {
            return Ok(Value::Module(sub.as_str().into()));
        }
        // `import pkg.mod` binds `pkg`: `pkg.mod` is a module of the set even when `pkg` is not.
        if let Some(v) = self.resolve_in_set(&format!("{module}.{name}"), span)? {
            return Ok(v);
        }
        if let Some(id) = self.registry.find(&module, name) {
            return self.member_value(id, span);
        }
        if self.is_module(&module) {
            return Err(self.unknown_member(&module, name, span));
        }
        if module.starts_with("triton.") || module.starts_with("tessel.") {
            return Err(self.err(span, format!("`{module}.{name}` is not supported by tessel's elaborator yet")));
        }
        Err(self.host_side(&format!("{module}.{name}"), span))
    }

    /// The value of registry entry `id`: the builtin, the dtype, or the prelude's function it is.
    pub fn member_value(&mut self, id: u16, span: Span) -> R<Value<'a>> {
        let e = *self.registry.entry(id);
        match e.kind {
            Kind::Builtin(_) => Ok(Value::Builtin(self.registry.builtin(id))),
            Kind::Dtype(d) => Ok(Value::Dtype(d)),
            Kind::Prelude => self.global(PRELUDE_MODULE, e.name, span)?.ok_or_else(|| {
                self.err(span, format!("internal error: tessel's prelude does not define `{}`", e.name))
            }),
        }
    }

    /// The error for a name the registered module `module` does not have, with the closest one it has as a hint.
    fn unknown_member(&self, module: &str, name: &str, span: Span) -> Box<ElabError> {
        let names = self.registry.names(module);
        if names.is_empty() {
            return self.err(span, format!("module `{module}` has no member `{name}` that tessel knows"));
        }
        let alias = self.registry.alias(module).unwrap_or(module);
        let mut msg = format!("unknown builtin `{alias}.{name}`");
        // A bare module name (`from ... import mbarrier`) may be any of several modules: say which.
        if module.ends_with(&format!(".{alias}")) {
            msg.push_str(&format!(" (module `{module}`)"));
        }
        let mut e = self.err(span, msg);
        if let Some(best) = closest(name, names.into_iter()) {
            e.diag = e.diag.with_hint(format!("did you mean `{alias}.{best}`?"));
        }
        e
    }

    /// The error for a use of an AMD-only module (which they are: [`crate::elab::names::is_amd_path`]).
    pub fn amd_error(&self, path: &str, span: Span) -> Box<ElabError> {
        self.err_hint(
            span,
            format!("AMD targets are not supported yet: `{path}` is AMD-only"),
            "tessel compiles for NVIDIA GPUs (sm_80, sm_90a, sm_100a); use the CUDA path of this kernel",
        )
    }

    /// Python's builtin `name` (`len`, `range`).
    pub fn python_builtin(&self, name: &str) -> Option<Value<'a>> {
        self.registry.find(BUILTINS, name).map(|id| Value::Builtin(self.registry.builtin(id)))
    }

    /// Whether `name` is a method of tensors (`x.exp()`, `x.to(...)`).
    pub fn is_tensor_method(&self, name: &str) -> bool {
        self.registry.method(name).is_some()
    }

    /// `recv.name(args)` for a tensor `recv`: the method's entry called with `recv` first.
    pub fn call_tensor_method(
        &mut self,
        name: &str,
        mut args: CallArgs<'a>,
        recv: Value<'a>,
        span: Span,
    ) -> R<Value<'a>> {
        let Some(id) = self.registry.method(name) else {
            return Err(self.err(span, format!("a tensor has no method `{name}`")));
        };
        args.pos.insert(0, crate::elab::args::Arg::new(recv, span));
        let f = self.member_value(id, span)?;
        self.call_value(f, args, span)
    }

    /// Calls the registered `module.name` (one lang registers: a builtin calling another, `min` of tensors
    /// calling `tl.minimum`).
    pub fn call_named(&mut self, module: &str, name: &str, args: CallArgs<'a>) -> R<Value<'a>> {
        let span = args.span;
        let id = self.registry.find(module, name).unwrap_or_else(|| panic!("`{module}.{name}` is registered"));
        let f = self.member_value(id, span)?;
        self.call_value(f, args, span)
    }

    /// Calls a builtin: gluon's only in `@gluon.jit` kernels; the arguments bound to its handler's signature.
    pub fn call_builtin(&mut self, b: Builtin, args: CallArgs<'a>) -> R<Value<'a>> {
        let e = *self.registry.entry(b.id);
        let fname = self.registry.display(b.id);
        if e.gluon_only && !self.gluon {
            return Err(self.err_hint(
                args.span,
                format!("`{fname}` is a gluon builtin: it needs a `@gluon.jit` kernel"),
                "decorate the kernel with `@gluon.jit` (`from triton.experimental import gluon`)",
            ));
        }
        let Kind::Builtin(handler) = e.kind else { unreachable!("only builtin entries are Value::Builtin") };
        let span = args.span;
        match handler {
            Handler::Bound(sig, f) => {
                let b = self.bind(&fname, sig, args)?;
                f(self, b)
            }
            Handler::Raw(f) => f(self, e.name, args),
            Handler::Type => Err(self.err(span, format!("`{fname}` is a type; it cannot be called"))),
            Handler::Decorator => {
                Err(self.err(span, format!("`{fname}` is a decorator; write it as `@{fname}` above a definition")))
            }
            Handler::HostSide => {
                Err(self.err(span, format!("`{fname}` is host-side; it cannot be called inside a kernel")))
            }
        }
    }

    /// Whether the registry owns `v`'s attributes and methods: shared-memory descriptors, tokens, cluster launch
    /// control responses, layouts, memory descriptor types.
    fn plugin_owned(v: &Value<'a>) -> bool {
        match v {
            Value::Tensor(t) => matches!(t.ty, Type::MemDesc { .. } | Type::Token | Type::ClcResult),
            Value::Layout(_) | Value::MemType(_) => true,
            _ => false,
        }
    }

    /// `v.name` through the registry: a static member of a registered class (`NVMMASharedLayout.get_default_for`),
    /// or an attribute the attribute hook knows. `Ok(None)`: lang handles it.
    pub fn plugin_attr(&mut self, v: &Value<'a>, name: &str, span: Span) -> R<Option<Value<'a>>> {
        if let Value::Builtin(b) = v {
            let e = *self.registry.entry(b.id);
            if let Some(id) = self.registry.find(e.module, &format!("{}.{name}", e.name)) {
                return self.member_value(id, span).map(Some);
            }
            if e.gluon_only {
                return Err(self.err(span, format!("`{}` has no attribute `{name}`", self.registry.display(b.id))));
            }
            return Ok(None);
        }
        // Tensor descriptors are lang's, but the registry may add attributes (gluon's `desc.layout`); so may a
        // block tensor's `type` (gluon's is a `distributed_type`, which carries the layout).
        let desc = matches!(v, Value::Tensor(t) if matches!(t.ty, Type::TensorDesc { .. }));
        let block_type = name == "type" && matches!(v, Value::Tensor(t) if t.is_block());
        if !Self::plugin_owned(v) && !desc && !block_type {
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
