//! tessel-gluon owns the `gl.*` builtins of gluon mode (`@gluon.jit`): the layout classes, shared memory and its
//! descriptor, mbarriers, `cp.async` copies and `wgmma`, with the checks against what the author wrote (shapes,
//! dtypes, layouts), registered into a copy of tessel-lang's builtin registry ([`registry`]). They emit the same tile IR ops
//! auto mode uses (`local_alloc`, `async_copy`, `warpgroup_dot`, `mbarrier_*`), so the verifier, the interpreter
//! and codegen are shared; this crate only elaborates.
//!
//! - [`layouts`]: layout constructors (bound by `tessel_layouts::expr`, the binder the `tessel layout` CLI uses),
//!   layout attributes, `convert_layout`, `num_warps`, `thread_barrier`;
//! - [`smem`]: `allocate_shared_memory` and the shared-memory descriptor (`load`, `store`, `index`, attributes);
//! - [`mbarrier`]: `mbarrier.*` and `fence_async_shared`;
//! - [`async_copy`]: `cp.async` (`async_copy_global_to_shared`, `commit_group`, `wait_group`);
//! - [`tma`]: Hopper TMA copies (`async_load`, `async_store`, `store_wait`) and the descriptor's `layout` and
//!   `nbytes_per_cta`;
//! - [`wgmma`]: `warpgroup_mma`, `warpgroup_mma_wait`, `warpgroup_mma_init`;
//! - [`blackwell`]: tensor memory and its descriptor, [`tmem_type`] its type as a value (and the register
//!   layouts both give); [`tcgen05`]: `tcgen05_mma`, `tcgen05_mma_scaled`,
//!   `tcgen05_copy`, `tcgen05_commit`; [`clc`]: cluster launch control (`clc.try_cancel`, `clc.load_result`);
//! - [`warp_specialize`]: `warp_specialize` (both spellings), partitions on warps of their own;
//! - `map_elementwise` in [`elementwise`]; Blackwell's packed arithmetic (`mul2`, `fma2`, ...) in [`packed`].
//!
//! To add a builtin: write its handler in the module of its concept and register it in that module's
//! `register` with its Gluon signature (defaults included). The registry's attribute hook, here, sends each
//! value's attributes to the module of its concept; its method hook is [`smem::method`].

pub mod async_copy;
pub mod blackwell;
pub mod clc;
pub mod elementwise;
pub mod layouts;
pub mod mbarrier;
pub mod packed;
pub mod smem;
pub mod tcgen05;
pub mod tma;
pub mod tma_gather;
pub mod tmem_type;
pub mod warp_specialize;
pub mod wgmma;

use std::sync::OnceLock;

use tessel_lang::Span;
use tessel_lang::elab::registry::Registry;
use tessel_lang::elab::value::Value;
use tessel_lang::elab::{Elab, R};
use tessel_tile::Type;

/// `triton.experimental.gluon.language` (`gl`).
pub const GL: &str = "triton.experimental.gluon.language";
pub const NVIDIA: &str = "triton.experimental.gluon.language.nvidia";
pub const AMPERE: &str = "triton.experimental.gluon.language.nvidia.ampere";
pub const HOPPER: &str = "triton.experimental.gluon.language.nvidia.hopper";
pub const AMPERE_ASYNC_COPY: &str = "triton.experimental.gluon.language.nvidia.ampere.async_copy";
pub const AMPERE_MBARRIER: &str = "triton.experimental.gluon.language.nvidia.ampere.mbarrier";
pub const HOPPER_MBARRIER: &str = "triton.experimental.gluon.language.nvidia.hopper.mbarrier";
pub const HOPPER_TMA: &str = "triton.experimental.gluon.language.nvidia.hopper.tma";
pub const BLACKWELL: &str = "triton.experimental.gluon.language.nvidia.blackwell";

/// Every builtin of gluon mode, registered once: lang's ([`tessel_lang::elab::builtins::registry`], which has
/// the `gl` module with `tl`'s names) and gluon's.
pub fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(|| {
        let mut r = tessel_lang::elab::builtins::registry().clone();
        r.module(NVIDIA, "nvidia");
        r.module(AMPERE, "ampere");
        r.module(HOPPER, "hopper");
        r.module(AMPERE_ASYNC_COPY, "async_copy");
        r.module(AMPERE_MBARRIER, "mbarrier");
        r.module(HOPPER_MBARRIER, "mbarrier");
        r.module(HOPPER_TMA, "tma");
        r.module(BLACKWELL, "blackwell");
        layouts::register(&mut r);
        smem::register(&mut r);
        mbarrier::register(&mut r);
        async_copy::register(&mut r);
        tma::register(&mut r);
        wgmma::register(&mut r);
        blackwell::register(&mut r);
        tmem_type::register(&mut r);
        packed::register(&mut r);
        tma_gather::register(&mut r);
        tcgen05::register(&mut r);
        clc::register(&mut r);
        warp_specialize::register(&mut r);
        elementwise::register(&mut r);
        r.set_attr_hook(attr);
        r.set_method_hook(method);
        r
    })
}

/// The registry's attribute hook: each value answers from the module of its concept (layouts, TMA descriptors,
/// shared-memory descriptors, a register tensor's `type`).
fn attr<'a>(e: &mut Elab<'a>, v: &Value<'a>, name: &str, span: Span) -> R<Option<Value<'a>>> {
    match v {
        Value::Layout(l) => Ok(layouts::layout_attr(l, name)),
        Value::MemType(m) => tmem_type::attr(e, v, m, name, span),
        Value::Tensor(t) if t.ty == Type::Token => {
            Err(e.err(span, format!("an async token has no attribute `{name}`")))
        }
        Value::Tensor(t) if matches!(t.ty, Type::TensorDesc { .. }) => tma::desc_attr(e, t, name, span),
        Value::Tensor(t) if t.ty.is_tmem() => blackwell::attr(e, v, t, name, span),
        Value::Tensor(t) if t.ty == Type::ClcResult => clc::attr(e, v, name, span),
        // lang offers a block tensor's `type` only; in a `@triton.jit` kernel it stays lang's (the dtype).
        Value::Tensor(t) if t.is_block() => Ok(if e.gluon { layouts::distributed_type(t) } else { None }),
        Value::Tensor(t) => smem::attr(e, v, t, name, span),
        _ => Ok(None),
    }
}

/// The registry's method hook: tensor-memory descriptors answer from [`blackwell`], cluster launch control
/// responses from [`clc`], shared-memory ones from [`smem`].
fn method<'a>(
    e: &mut Elab<'a>,
    recv: &Value<'a>,
    name: &str,
    args: tessel_lang::elab::builtins::CallArgs<'a>,
    span: Span,
) -> R<Option<Value<'a>>> {
    if let Value::MemType(m) = recv {
        return tmem_type::method(e, m, name, args, span);
    }
    if let Value::Tensor(t) = recv
        && t.ty == Type::ClcResult
    {
        return clc::method(e, t.clone(), name, args, span);
    }
    match blackwell::tmem_desc(recv).cloned() {
        Some(mem) => blackwell::method(e, mem, name, args, span),
        None => smem::method(e, recv, name, args, span),
    }
}
