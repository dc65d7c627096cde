//! The builtins lang owns, registered into its builtin registry ([`registry`]): the modules a kernel may import
//! (`triton`, `triton.language` as `tl`, `tl.math`, libdevice, gluon's `gl` with `tl`'s names, `tessel`) and,
//! file by file, the builtins of each concept, each declared once with its module, name, signature and handler:
//!
//! - [`core`]: program ids, creation and shape ops, casts, hints, loop ranges, `tl`'s types and decorators;
//! - [`memory`]: loads, stores, atomics, tensor descriptors;
//! - [`math`]: elementwise math (in `tl` and `tl.math`); [`reduce`]: `reduce`, `associative_scan`, `dot`;
//! - [`libdevice`] (and the files it is cut into): `triton.language.extra.libdevice`;
//! - [`python`]: Python's builtins and the host-level names of `triton`, gluon and `tessel`;
//! - `stdlib`: what compile-time helpers use of Python's standard library (`math.log2`, `copy.deepcopy`);
//! - [`methods`]: methods of tensors, descriptors, dtypes, strings, lists and dicts;
//! - [`debug`]: `static_print`, `static_assert`, `device_print`, `device_assert`;
//! - [`extra`]: `gather`, `histogram`, `inline_asm_elementwise`, `tl.extra.cuda`;
//! - [`prelude`]: library functions written in the kernel language itself (`tl.sum`, `tl.softmax`, `tl.rand`...);
//! - [`layout`]: how gluon layouts follow tensors through the ops above (the `gl.*` builtins themselves live in
//!   the gluon crate, which adds them to a copy of this registry).
//!
//! Arguments are bound by [`crate::elab::args`] (re-exported here for the plug-ins' handlers).

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
pub mod methods;
pub mod prelude;
pub mod python;
pub mod reduce;
mod stdlib;

use std::sync::OnceLock;

use tessel_tile::ScalarType;

pub use crate::elab::args::{Arg, Bound, CallArgs, bind};
use crate::elab::names::{
    BUILTINS, CUDA, EXPERIMENTAL, EXTRA, GL, GLUON, IMPORTLIB, LIBDEVICE, MATH, TENSOR, TESSEL, TL, TRITON,
};
use crate::elab::registry::Registry;
use crate::elab::value::Dtype;

/// lang's builtins, registered once: every module a kernel may import and its members, without plug-ins.
pub fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(|| {
        let mut r = Registry::default();
        r.namespace(BUILTINS, "");
        r.namespace(IMPORTLIB, "importlib");
        r.module(TRITON, "triton");
        r.module(TL, "tl");
        r.namespace(TENSOR, "tensor");
        r.module(MATH, "tl.math");
        r.module(EXTRA, "tl.extra");
        r.namespace(CUDA, "tl.extra.cuda");
        // libdevice has `tl.math`'s functions (some in versions of its own) and `tl.extra.cuda`'s.
        r.module(LIBDEVICE, "libdevice");
        r.reexport(LIBDEVICE, MATH);
        r.reexport(LIBDEVICE, CUDA);
        r.module(EXPERIMENTAL, "triton.experimental");
        r.module(GLUON, "gluon");
        // `gl` has `tl`'s names; gluon adds its own (which come first).
        r.module(GL, "gl");
        r.reexport(GL, TL);
        r.module(TESSEL, "tessel");
        r.reexport(TESSEL, TL);
        register_dtypes(&mut r);
        python::register(&mut r);
        core::register(&mut r);
        memory::register(&mut r);
        math::register(&mut r);
        reduce::register(&mut r);
        debug::register(&mut r);
        extra::register(&mut r);
        libdevice::register(&mut r);
        methods::register(&mut r);
        prelude::register(&mut r);
        stdlib::register(&mut r);
        r
    })
}

/// The dtypes of `triton.language`.
fn register_dtypes(r: &mut Registry) {
    use ScalarType::*;
    for (name, s) in [
        ("int1", I1),
        ("int8", I8),
        ("int16", I16),
        ("int32", I32),
        ("int64", I64),
        ("uint8", U8),
        ("uint16", U16),
        ("uint32", U32),
        ("uint64", U64),
        ("float16", F16),
        ("bfloat16", BF16),
        ("float32", F32),
        ("float64", F64),
        ("float8e4nv", F8E4M3),
        ("float8e5", F8E5M2),
        // Other spellings of float8e4nv.
        ("float8_e4m3fn", F8E4M3),
        ("float8e4m3", F8E4M3),
    ] {
        r.dtype(TL, name, Dtype::Scalar(s));
    }
    r.dtype(TL, "void", Dtype::Void);
}
