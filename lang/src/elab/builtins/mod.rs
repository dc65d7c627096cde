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

pub use crate::elab::args::{Arg, Bound, CallArgs, bind};
use crate::elab::names::{canonical, closest, is_amd_path};
use crate::elab::value::{Builtin, Dtype, Ns, Value};
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

impl<'a> Elab<'a> {
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
}
