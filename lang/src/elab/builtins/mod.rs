//! Builtins: the names of `triton` / `triton.language` (`tl`) / `tl.math` / gluon (`gl`) / `tessel` and of Python,
//! argument binding against their signatures, and dispatch to the implementations:
//!
//! - [`core`]: program ids, creation and shape ops, casts, hints;
//! - [`memory`]: loads, stores, atomics, tensor descriptors;
//! - [`math`]: elementwise math; [`reduce`]: `reduce`, `associative_scan`, `dot`;
//! - [`python`]: Python builtins and compile-time helpers (`range`, `len`, `min`, `isinstance`, dtype methods...);
//! - [`debug`]: `static_print`, `static_assert`, `device_print`, `device_assert`;
//! - [`extra`]: `gather`, `histogram`, `inline_asm_elementwise`, `tl.extra.cuda`, the AMD-only modules' error;
//! - [`layout`]: how gluon layouts follow tensors through the ops above (the `gl.*` builtins themselves live in
//!   the gluon crate and plug in through [`crate::elab::registry`]);
//! - [`prelude`]: library functions written in the kernel language itself (`tl.sum`, `tl.softmax`, `tl.rand`...).

pub mod core;
pub mod debug;
pub mod extra;
pub mod layout;
pub mod libdevice;
mod libdevice_bessel;
mod libdevice_exponent;
pub mod libdevice_int;
mod libdevice_norm;
mod libdevice_remainder;
pub mod math;
pub mod memory;
pub mod prelude;
pub mod python;
pub mod reduce;

use crate::ast::Expr;
use crate::elab::names::{canonical, closest, is_amd_path};
use crate::elab::value::{Builtin, Dtype, Ns, Tv, Value};
use crate::elab::{Elab, PRELUDE_MODULE, R};
use crate::span::Span;
use tessel_tile::ScalarType;

// Here rather than beside the type in `value`: the spelling reads the name tables of this module.
impl Builtin {
    /// How the user would write it (`tl.load`), for messages.
    pub fn display(&self) -> String {
        let prefix = match self.ns {
            Ns::Py | Ns::Method | Ns::Plugin(_) => "",
            Ns::Triton => "triton.",
            Ns::Tl => "tl.",
            Ns::Math => "tl.math.",
            Ns::Libdevice if extra::CUDA_NAMES.contains(&self.name) => "tl.extra.cuda.",
            Ns::Libdevice => "libdevice.",
            Ns::Gluon => "gluon.",
            Ns::Gl => "gl.",
            Ns::Tessel => "tessel.",
        };
        format!("{prefix}{}", self.name)
    }
}

const PY_NAMES: &[&str] = &[
    "range",
    "len",
    "min",
    "max",
    "abs",
    "int",
    "float",
    "bool",
    "str",
    "tuple",
    "list",
    "dict",
    "isinstance",
    "print",
    "enumerate",
    "zip",
    "sum",
    "any",
    "all",
    "sorted",
    "reversed",
    "getattr",
    "hasattr",
    "round",
    "divmod",
    "pow",
    "type",
    "staticmethod",
    "property",
    "ValueError",
    "TypeError",
    "AssertionError",
    "NotImplementedError",
    "RuntimeError",
];

/// Native builtins of `triton.language` (also `tessel.language`).
pub const TL_NAMES: &[&str] = &[
    "program_id",
    "num_programs",
    "arange",
    "full",
    "zeros",
    "zeros_like",
    "full_like",
    "splat",
    "broadcast",
    "broadcast_to",
    "expand_dims",
    "reshape",
    "view",
    "permute",
    "trans",
    "join",
    "split",
    "cat",
    "where",
    "load",
    "store",
    "atomic_add",
    "atomic_max",
    "atomic_min",
    "atomic_and",
    "atomic_or",
    "atomic_xor",
    "atomic_xchg",
    "atomic_cas",
    "dot",
    "reduce",
    "associative_scan",
    "exp",
    "exp2",
    "log",
    "log2",
    "sqrt",
    "sqrt_rn",
    "rsqrt",
    "sin",
    "cos",
    "abs",
    "erf",
    "floor",
    "ceil",
    "fma",
    "maximum",
    "minimum",
    "umulhi",
    "div_rn",
    "fdiv",
    "clamp",
    "cast",
    "multiple_of",
    "max_contiguous",
    "max_constancy",
    "assume",
    "debug_barrier",
    "device_print",
    "device_assert",
    "static_print",
    "static_assert",
    "make_tensor_descriptor",
    "load_tensor_descriptor",
    "store_tensor_descriptor",
    "range",
    "static_range",
    "constexpr",
    "tensor",
    "tensor_descriptor",
    "dtype",
    "pointer_type",
    "to_tensor",
    "PropagateNan",
    "constexpr_function",
    "aggregate",
    "_aggregate",
    "tuple",
    "jit",
    "gather",
    "histogram",
    "inline_asm_elementwise",
];

/// The dtype names of `triton.language`.
pub const DTYPE_NAMES: &[(&str, ScalarType)] = &[
    ("int1", ScalarType::I1),
    ("int8", ScalarType::I8),
    ("int16", ScalarType::I16),
    ("int32", ScalarType::I32),
    ("int64", ScalarType::I64),
    ("uint8", ScalarType::U8),
    ("uint16", ScalarType::U16),
    ("uint32", ScalarType::U32),
    ("uint64", ScalarType::U64),
    ("float16", ScalarType::F16),
    ("bfloat16", ScalarType::BF16),
    ("float32", ScalarType::F32),
    ("float64", ScalarType::F64),
    ("float8e4nv", ScalarType::F8E4M3),
    ("float8e5", ScalarType::F8E5M2),
];

const MATH_NAMES: &[&str] = &[
    "exp", "exp2", "log", "log2", "sqrt", "sqrt_rn", "rsqrt", "sin", "cos", "abs", "erf", "floor", "ceil", "fma",
    "umulhi", "div_rn", "fdiv", "maximum", "minimum", "clamp",
];

const TRITON_NAMES: &[&str] =
    &["jit", "autotune", "heuristics", "Config", "cdiv", "next_power_of_2", "constexpr_function", "must_use_result"];

const GLUON_NAMES: &[&str] = &["jit", "aggregate", "constexpr_function", "must_use_result"];

/// Names of `tl` that the prelude defines (in the kernel language).
pub const PRELUDE_NAMES: &[&str] = &[
    "cdiv",
    "_log2",
    "_is_power_of_two",
    "get_int_dtype",
    "sigmoid",
    "softmax",
    "sum",
    "max",
    "min",
    "argmax",
    "argmin",
    "xor_sum",
    "reduce_or",
    "cumsum",
    "cumprod",
    "ravel",
    "swizzle2d",
    "rand",
    "randn",
    "randint",
    "randint4x",
    "philox",
    "philox_impl",
    "uint_to_uniform_float",
    "pair_uniform_to_normal",
    "interleave",
    "flip",
    "sort",
    "dot_scaled",
];

const KNOWN_MODULES: &[(&str, Option<Ns>)] = &[
    ("triton", Some(Ns::Triton)),
    ("triton.language", Some(Ns::Tl)),
    ("triton.language.math", Some(Ns::Math)),
    ("triton.language.extra", None),
    ("triton.language.extra.libdevice", Some(Ns::Libdevice)),
    ("triton.experimental", None),
    ("triton.experimental.gluon", Some(Ns::Gluon)),
    ("triton.experimental.gluon.language", Some(Ns::Gl)),
    ("tessel", Some(Ns::Tessel)),
];

/// A builtin of Python by name.
pub fn python_builtin(name: &str) -> Option<Builtin> {
    PY_NAMES.iter().find(|n| **n == name).map(|n| Builtin { ns: Ns::Py, name: n })
}

fn find(names: &'static [&'static str], name: &str) -> Option<&'static str> {
    names.iter().find(|n| **n == name).copied()
}

/// Whether `path` (canonical) names a module we know, and its namespace.
pub(crate) fn known_module(path: &str) -> Option<Option<Ns>> {
    KNOWN_MODULES.iter().find(|(p, _)| *p == path).map(|(_, ns)| *ns)
}

impl<'a> Elab<'a> {
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
        if let Some(b) = self.plugin_builtin(&module, name) {
            return Ok(Value::Builtin(b));
        }
        let ns = match known_module(&module) {
            Some(Some(ns)) => ns,
            Some(None) => {
                return Err(self.err(span, format!("module `{module}` has no member `{name}` that tessel knows")));
            }
            None if module == "importlib" && name == "import_module" => {
                return Ok(Value::Builtin(Builtin { ns: Ns::Py, name: "import_module" }));
            }
            None if self.registry.has_module(&module) => return Err(self.unknown_plugin_name(&module, name, span)),
            None if module.starts_with("triton.") || module.starts_with("tessel.") => {
                return Err(self.err(span, format!("`{module}.{name}` is not supported by tessel's elaborator yet")));
            }
            None => return Err(self.host_side(&format!("{module}.{name}"), span)),
        };
        let shared_tl = matches!(ns, Ns::Tl | Ns::Gl | Ns::Tessel);
        if shared_tl || ns == Ns::Math {
            if let Some((_, s)) = DTYPE_NAMES.iter().find(|(n, _)| *n == name).filter(|_| shared_tl) {
                return Ok(Value::Dtype(Dtype::Scalar(*s)));
            }
            if name == "void" && shared_tl {
                return Ok(Value::Dtype(Dtype::Void));
            }
            if shared_tl && matches!(name, "float8_e4m3fn" | "float8e4m3") {
                return Ok(Value::Dtype(Dtype::Scalar(ScalarType::F8E4M3)));
            }
            let table = if ns == Ns::Math { MATH_NAMES } else { TL_NAMES };
            if let Some(n) = find(table, name) {
                return Ok(Value::Builtin(Builtin { ns: if ns == Ns::Math { Ns::Math } else { Ns::Tl }, name: n }));
            }
            if shared_tl && PRELUDE_NAMES.contains(&name) {
                if let Some(v) = self.global(PRELUDE_MODULE, name, span)? {
                    return Ok(v);
                }
            }
        }
        let table: &[&'static str] = match ns {
            Ns::Triton => TRITON_NAMES,
            Ns::Gluon | Ns::Tessel => GLUON_NAMES,
            Ns::Libdevice => MATH_NAMES,
            _ => &[],
        };
        if ns == Ns::Libdevice
            && let Some(n) = find(libdevice::OWN_VERSIONS, name)
        {
            return Ok(Value::Builtin(Builtin { ns, name: n }));
        }
        if let Some(n) = find(table, name) {
            let ns = if ns == Ns::Libdevice { Ns::Math } else { ns };
            return Ok(Value::Builtin(Builtin { ns, name: n }));
        }
        if ns == Ns::Libdevice
            && let Some(n) = find(extra::CUDA_NAMES, name)
                .or_else(|| find(libdevice::LIBDEVICE_NAMES, name))
                .or_else(|| find(libdevice_int::NAMES, name))
                .or_else(|| find(libdevice::CONVERSIONS, name))
        {
            return Ok(Value::Builtin(Builtin { ns, name: n }));
        }
        if ns == Ns::Tessel && matches!(name, "language") {
            return Ok(Value::Module("triton.language".into()));
        }
        // Unknown: suggest the closest name of the namespace.
        let mut candidates: Vec<&str> = table.to_vec();
        if ns == Ns::Libdevice {
            candidates.extend(libdevice::LIBDEVICE_NAMES);
            candidates.extend(libdevice_int::NAMES);
        }
        if shared_tl || ns == Ns::Math {
            candidates.extend(if ns == Ns::Math { MATH_NAMES } else { TL_NAMES });
            if shared_tl {
                candidates.extend(PRELUDE_NAMES);
                candidates.extend(DTYPE_NAMES.iter().map(|(n, _)| *n));
            }
            if ns == Ns::Gl {
                candidates.extend(self.registry.names(&module));
            }
        }
        let alias = match ns {
            Ns::Tl => "tl".to_string(),
            Ns::Gl => "gl".to_string(),
            Ns::Math => "tl.math".to_string(),
            _ => module.clone(),
        };
        let mut e = self.err(span, format!("unknown builtin `{alias}.{name}`"));
        if let Some(best) = closest(name, candidates.into_iter()) {
            e.diag = e.diag.with_hint(format!("did you mean `{alias}.{best}`?"));
        }
        Err(e)
    }
}

/// One argument of a call: its value, and where it was written.
#[derive(Clone, Debug)]
pub struct Arg<'a> {
    pub value: Value<'a>,
    pub span: Span,
    pub expr: Option<&'a Expr>,
}

impl<'a> Arg<'a> {
    pub fn new(value: Value<'a>, span: Span) -> Arg<'a> {
        Arg { value, span, expr: None }
    }

    /// How to name this argument in a message: its source text if short, else `what`.
    pub fn name_or(&self, what: &str) -> String {
        match self.expr {
            Some(e) => {
                let text = e.to_string();
                if text.len() <= 40 { format!("`{text}`") } else { what.to_string() }
            }
            None => what.to_string(),
        }
    }
}

/// The arguments of a call, positional and by keyword.
#[derive(Clone, Debug, Default)]
pub struct CallArgs<'a> {
    pub pos: Vec<Arg<'a>>,
    pub kw: Vec<(String, Arg<'a>)>,
    /// The whole call.
    pub span: Span,
}

/// Arguments bound to a builtin's parameters.
pub struct Bound<'a> {
    pub fname: String,
    names: Vec<&'static str>,
    vals: Vec<Option<Arg<'a>>>,
    /// Extra positional arguments (`*args` parameters).
    pub rest: Vec<Arg<'a>>,
    pub span: Span,
}

impl<'a> Bound<'a> {
    fn index(&self, name: &str) -> usize {
        self.names.iter().position(|n| *n == name).unwrap_or_else(|| panic!("builtin has no parameter `{name}`"))
    }

    /// The argument for `name`, if given and not `None`.
    pub fn opt(&self, name: &str) -> Option<&Arg<'a>> {
        self.vals[self.index(name)].as_ref().filter(|a| !matches!(a.value, Value::None))
    }

    /// The argument for a required parameter.
    pub fn req(&self, name: &str) -> &Arg<'a> {
        self.vals[self.index(name)].as_ref().expect("required parameters are bound")
    }

    pub fn take(&mut self, name: &str) -> Option<Arg<'a>> {
        let i = self.index(name);
        self.vals[i].take().filter(|a| !matches!(a.value, Value::None))
    }
}

/// Binds `args` to the parameters in `sig`: `"pointer, mask?, other?, *, cache_modifier?, pred=True"` — names
/// separated by commas, `?` for optional, `=literal` for a default (`True`, `False`, `None`, an integer, a quoted
/// string: bound when the argument is left out), `*name` for a var-positional parameter, a bare `*` before
/// keyword-only ones.
pub fn bind<'a>(fname: &str, sig: &'static str, args: CallArgs<'a>) -> Result<Bound<'a>, (Span, String)> {
    let mut names = Vec::new();
    let mut required = Vec::new();
    let mut defaults: Vec<(usize, Value<'a>)> = Vec::new();
    let mut n_positional = usize::MAX;
    let mut var_pos = false;
    for p in sig.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        if p == "*" {
            n_positional = names.len();
        } else if let Some(rest) = p.strip_prefix('*') {
            let _ = rest;
            n_positional = names.len();
            var_pos = true;
        } else if let Some(n) = p.strip_suffix('?') {
            names.push(n);
            required.push(false);
        } else if let Some((n, d)) = p.split_once('=') {
            defaults.push((names.len(), default_literal(d.trim())));
            names.push(n.trim());
            required.push(false);
        } else {
            names.push(p);
            required.push(true);
        }
    }
    let n_positional = n_positional.min(names.len());
    let mut vals: Vec<Option<Arg<'a>>> = vec![None; names.len()];
    let mut rest = Vec::new();
    let n_pos_given = args.pos.len();
    for (i, a) in args.pos.into_iter().enumerate() {
        if i < n_positional {
            vals[i] = Some(a);
        } else if var_pos {
            rest.push(a);
        } else {
            return Err((
                a.span,
                format!("`{fname}` takes at most {n_positional} positional arguments, got {n_pos_given}"),
            ));
        }
    }
    for (k, a) in args.kw {
        match names.iter().position(|n| *n == k) {
            Some(i) if vals[i].is_some() => return Err((a.span, format!("`{fname}` got multiple values for `{k}`"))),
            Some(i) => vals[i] = Some(a),
            None => {
                let mut msg = format!("`{fname}` got an unexpected keyword argument `{k}`");
                if let Some(best) = closest(&k, names.iter().copied()) {
                    msg.push_str(&format!(" (did you mean `{best}`?)"));
                }
                return Err((a.span, msg));
            }
        }
    }
    for (i, n) in names.iter().enumerate() {
        if required[i] && vals[i].is_none() {
            return Err((args.span, format!("`{fname}` is missing the required argument `{n}`")));
        }
    }
    for (i, d) in defaults {
        if vals[i].is_none() {
            vals[i] = Some(Arg::new(d, args.span));
        }
    }
    Ok(Bound { fname: fname.to_string(), names, vals, rest, span: args.span })
}

/// The value of a default written in a signature.
fn default_literal<'a>(d: &str) -> Value<'a> {
    match d {
        "True" => Value::Bool(true),
        "False" => Value::Bool(false),
        "None" => Value::None,
        _ if d.starts_with(['\'', '"']) => Value::str(&d[1..d.len() - 1]),
        _ => Value::Int(d.parse().unwrap_or_else(|_| panic!("signature default `{d}` is not a literal"))),
    }
}

impl<'a> Elab<'a> {
    /// [`bind`], with errors as diagnostics.
    pub fn bind(&self, fname: &str, sig: &'static str, args: CallArgs<'a>) -> R<Bound<'a>> {
        bind(fname, sig, args).map_err(|(span, msg)| self.err(span, msg))
    }

    /// Calls a builtin.
    pub fn call_builtin(&mut self, b: Builtin, args: CallArgs<'a>) -> R<Value<'a>> {
        let fname = b.display();
        match b.ns {
            Ns::Py => self.call_python(b.name, &fname, args),
            Ns::Triton | Ns::Gluon | Ns::Tessel => self.call_host(b.name, &fname, args),
            Ns::Method => unreachable!("methods are called through Value::Method"),
            Ns::Plugin(i) => self.call_plugin(i as usize, args),
            Ns::Tl | Ns::Math | Ns::Libdevice | Ns::Gl => {
                if let Some(v) = self.call_extra(b, &fname, &args)? {
                    return Ok(v);
                }
                if b.ns == Ns::Libdevice
                    && let Some(v) = self.call_libdevice(b.name, &fname, &args)?
                {
                    return Ok(v);
                }
                if let Some(v) = self.call_math(b.name, &fname, &args)? {
                    return Ok(v);
                }
                if let Some(v) = self.call_memory(b.name, &fname, &args)? {
                    return Ok(v);
                }
                if let Some(v) = self.call_reduce(b.name, &fname, &args)? {
                    return Ok(v);
                }
                if let Some(v) = self.call_debug(b.name, &fname, &args)? {
                    return Ok(v);
                }
                self.call_core(b.name, &fname, args)
            }
        }
    }

    /// A compile-time integer argument.
    pub fn const_int(&self, a: &Arg<'a>, fname: &str, what: &str) -> R<i128> {
        match &a.value {
            Value::Int(i) => Ok(*i),
            Value::Bool(b) => Ok(*b as i128),
            Value::Tensor(t) => Err(self.not_constexpr(a, fname, what, &t.ty.to_string())),
            other => {
                Err(self.err(a.span, format!("`{what}` of `{fname}` must be an integer, got {}", other.describe())))
            }
        }
    }

    /// The error for a runtime value where a compile-time one is needed.
    pub fn not_constexpr(&self, a: &Arg<'a>, fname: &str, what: &str, ty: &str) -> Box<crate::elab::ElabError> {
        let mut e = self.err(
            a.span,
            format!("`{what}` of `{fname}` must be a compile-time constant (tl.constexpr), but {} is a runtime value of type {ty}", a.name_or("it")),
        );
        if let Some(n) = a.expr.and_then(|e| e.as_name()) {
            e.diag = e.diag.with_hint(format!("if `{n}` is a kernel parameter, declare it as `{n}: tl.constexpr`"));
        }
        e
    }

    /// A compile-time bool argument.
    pub fn const_bool(&self, a: &Arg<'a>, fname: &str, what: &str) -> R<bool> {
        match &a.value {
            Value::Bool(b) => Ok(*b),
            Value::Int(i) => Ok(*i != 0),
            Value::Tensor(t) => Err(self.not_constexpr(a, fname, what, &t.ty.to_string())),
            other => Err(self.err(a.span, format!("`{what}` of `{fname}` must be a bool, got {}", other.describe()))),
        }
    }

    /// A compile-time string argument.
    pub fn const_str(&self, a: &Arg<'a>, fname: &str, what: &str) -> R<String> {
        match &a.value {
            Value::Str(s) => Ok(s.to_string()),
            other => Err(self.err(a.span, format!("`{what}` of `{fname}` must be a string, got {}", other.describe()))),
        }
    }

    /// A dtype argument.
    pub fn dtype_arg(&self, a: &Arg<'a>, fname: &str, what: &str) -> R<Dtype> {
        match &a.value {
            Value::Dtype(d) => Ok(*d),
            other => Err(self.err(a.span, format!("`{what}` of `{fname}` must be a dtype, got {}", other.describe()))),
        }
    }

    /// A tensor argument (Python numbers become scalars of their default type; descriptors are not tensors).
    pub fn tensor_arg(&mut self, a: &Arg<'a>, fname: &str, what: &str) -> R<Tv> {
        match &a.value {
            Value::Tensor(t) if matches!(t.ty, tessel_tile::Type::TensorDesc { .. }) => {
                Err(self.err(a.span, format!("`{what}` of `{fname}` must be a tensor, got the descriptor {}", t.ty)))
            }
            Value::Tensor(t) if matches!(t.ty, tessel_tile::Type::MemDesc { .. } | tessel_tile::Type::Token) => {
                Err(self.err_hint(
                    a.span,
                    format!("`{what}` of `{fname}` must be a tensor, got {}", t.ty),
                    "a shared-memory descriptor holds a tensor: read it with `.load(layout)`",
                ))
            }
            Value::Tensor(t) => Ok(t.clone()),
            v if v.is_number() => self.to_tensor(v, a.span),
            other => Err(self.err(a.span, format!("`{what}` of `{fname}` must be a tensor, got {}", other.describe()))),
        }
    }

    /// A list of compile-time integers (a shape, axes), from a tuple/list or varargs.
    pub fn int_list(&self, a: &Arg<'a>, fname: &str, what: &str) -> R<Vec<i128>> {
        let items = match &a.value {
            Value::Tuple(_) | Value::List(_) => a.value.items().unwrap(),
            Value::Int(_) | Value::Bool(_) => vec![a.value.clone()],
            Value::Tensor(t) => return Err(self.not_constexpr(a, fname, what, &t.ty.to_string())),
            other => {
                return Err(self.err(
                    a.span,
                    format!("`{what}` of `{fname}` must be a list of integers, got {}", other.describe()),
                ));
            }
        };
        let exprs = match a.expr.map(|e| &e.kind) {
            Some(crate::ast::ExprKind::Tuple(es) | crate::ast::ExprKind::List(es)) if es.len() == items.len() => {
                es.iter().map(Some).collect()
            }
            _ => vec![None; items.len()],
        };
        items
            .iter()
            .zip(exprs)
            .map(|(v, e)| {
                let arg = Arg { value: v.clone(), span: e.map_or(a.span, |e: &Expr| e.span), expr: e };
                self.const_int(&arg, fname, what)
            })
            .collect()
    }

    /// A shape: compile-time integers, each a power of two.
    pub fn shape_arg(&self, a: &Arg<'a>, fname: &str) -> R<Vec<u32>> {
        let dims = self.int_list(a, fname, "shape")?;
        let exprs: Vec<Option<&Expr>> = match a.expr.map(|e| &e.kind) {
            Some(crate::ast::ExprKind::Tuple(es) | crate::ast::ExprKind::List(es)) if es.len() == dims.len() => {
                es.iter().map(Some).collect()
            }
            _ => vec![None; dims.len()],
        };
        let mut out = Vec::new();
        for (i, (&d, e)) in dims.iter().zip(exprs).enumerate() {
            let span = e.map_or(a.span, |e| e.span);
            let label = match e {
                Some(e) if e.as_name().is_some() => e.to_string(),
                _ => format!("shape[{i}]"),
            };
            self.check_pow2(d, &label, span)?;
            out.push(d as u32);
        }
        Ok(out)
    }

    /// Tile dimensions must be powers of two (and small enough to index with 32 bits).
    pub fn check_pow2(&self, d: i128, label: &str, span: Span) -> R<()> {
        if d > 0 && (d & (d - 1)) == 0 && d > crate::elab::MAX_TILE_ELEMENTS as i128 {
            return Err(self.err(
                span,
                format!("{label} is {d}, more than the {} elements a tile may have", crate::elab::MAX_TILE_ELEMENTS),
            ));
        }
        if d <= 0 || (d & (d - 1)) != 0 {
            let mut e = self.err(span, format!("{label} must be a power of two, got {d}"));
            if d > 0 {
                let next = (d as u128).next_power_of_two();
                e.diag = e.diag.with_hint(format!(
                    "tile sizes must be powers of two (at most 2^20 elements); use {next} and mask the extra elements"
                ));
            }
            return Err(e);
        }
        Ok(())
    }
}
