//! Hopper TMA (`triton.experimental.gluon.language.nvidia.hopper.tma`): `async_load(tensor_desc, coord,
//! barrier, result, pred=True)` (alias `async_copy_global_to_shared`) copies the descriptor's block at `coord`
//! into the shared-memory buffer `result` and completes its bytes on `barrier` (armed by the author with
//! `mbarrier.expect(barrier, tensor_desc.nbytes_per_cta)`; with `multicast=True` in a cluster, one CTA's copy
//! lands in every CTA's `result` and completes on every CTA's `barrier`); `async_store(tensor_desc, coord, src)` (alias
//! `async_copy_shared_to_global`) copies a buffer to the block; `store_wait(pendings)` waits until at most
//! `pendings` stores still read their buffers. They emit `tma_load` / `tma_store` / `tma_store_wait`, the ops
//! auto mode's descriptor accesses lower to, with one lowering.
//!
//! A descriptor's block lives in shared memory in its TMA layout, `tensor_desc.layout` (Gluon's
//! `NVMMASharedLayout.get_default_for(block_shape, dtype)`): the layout the runtime encodes the tensor map for,
//! so a buffer in any other layout is refused at the call.

use tessel_lang::elab::builtins::{Arg, Bound};
use tessel_lang::elab::registry::{Handler, Registry};
use tessel_lang::elab::value::{Tv, Value};
use tessel_lang::elab::{Elab, R};
use tessel_tile::ops::Op;
use tessel_tile::{ScalarType, Type};

use crate::HOPPER_TMA;
use crate::smem::memdesc_arg;

const LOAD_SIG: &str = "tensor_desc, coord, barrier, result, pred=True, multicast=False, cache_policy=None";
const IM2COL_SIG: &str = "tensor_desc, coord, offsets, barrier, result, pred=True, multicast=False, cache_policy=None";
const STORE_SIG: &str = "tensor_desc, coord, src, cache_policy=None";

pub fn register(r: &mut Registry) {
    r.add(HOPPER_TMA, "async_load", Handler::Bound(LOAD_SIG, load));
    r.add(HOPPER_TMA, "async_copy_global_to_shared", Handler::Bound(LOAD_SIG, load));
    r.add(HOPPER_TMA, "async_load_im2col", Handler::Bound(IM2COL_SIG, load_im2col));
    r.add(HOPPER_TMA, "async_copy_global_to_shared_im2col", Handler::Bound(IM2COL_SIG, load_im2col));
    r.add(HOPPER_TMA, "async_store", Handler::Bound(STORE_SIG, store));
    r.add(HOPPER_TMA, "async_copy_shared_to_global", Handler::Bound(STORE_SIG, store));
    r.add(HOPPER_TMA, "store_wait", Handler::Bound("pendings, read_only=True", store_wait));
}

pub(crate) const NOT_HOST: &str = "TMA copies need a descriptor passed to the kernel (a TensorDescriptor \
                                   argument); descriptors made in the kernel have no tensor map yet";

/// Whether `t` is an argument of a region still being built: a `warp_specialize` worker's (the op, made after
/// its regions, checks the worker's copies: `warp_specialize::check_worker_tma`).
fn in_worker(e: &Elab<'_>, t: &Tv) -> bool {
    match e.func.value(t.v).def {
        tessel_tile::ir::ValueDef::Arg(r, _) => r != e.func.body && e.func.region(r).parent.is_none(),
        _ => false,
    }
}

/// The descriptor argument: a host `TensorDescriptor` parameter (only those have a tensor map).
pub(crate) fn descriptor<'a>(e: &Elab<'a>, b: &Bound<'a>) -> R<(Tv, ScalarType, Vec<u32>)> {
    let a = b.req("tensor_desc");
    match &a.value {
        Value::Tensor(t) if matches!(t.ty, Type::TensorDesc { .. }) => {
            let (elem, block) = tessel_tile::tma::desc_block(&t.ty).expect("a tensordesc");
            if tessel_tile::tma::is_im2col(&e.func, t.v) {
                return Err(e.err_hint(
                    a.span,
                    format!("`{}` copies tiles, but this is an im2col descriptor (TensorDescriptorIm2Col)", b.fname),
                    "load it with `tma.async_load_im2col(desc, coord, offsets, barrier, result)`",
                ));
            }
            if tessel_tile::tma::host_desc_base(&e.func, t.v).is_none() && !in_worker(e, t) {
                return Err(e.err(a.span, NOT_HOST));
            }
            Ok((t.clone(), elem, block.to_vec()))
        }
        other => Err(e.err(
            a.span,
            format!("`tensor_desc` of `{}` must be a tensor descriptor, got {}", b.fname, other.describe()),
        )),
    }
}

/// The memdesc type of one block of descriptor `desc` in its TMA layout (the layout the host descriptor gives,
/// found through a worker partition's arguments too).
pub(crate) fn desc_buffer_type(e: &Elab<'_>, desc: &Tv) -> Result<Type, tessel_tile::tma::TmaError> {
    let mut v = desc.v;
    while let Some(&outer) = e.worker_args.get(&v) {
        v = outer;
    }
    tessel_tile::tma::desc_buffer_type(&e.func, v)
}

/// A buffer holding the descriptor's block in its TMA layout.
fn block_buffer<'a>(e: &Elab<'a>, a: &Arg<'a>, fname: &str, what: &str, desc: &Tv) -> R<Tv> {
    let (elem, block) = tessel_tile::tma::desc_block(&desc.ty).expect("a tensordesc");
    let mem = memdesc_arg(e, a, fname, what)?;
    let (shape, got, layout) = mem.ty.memdesc().expect("a memdesc");
    if shape != block || got != elem {
        return Err(e.err(
            a.span,
            format!(
                "`{what}` must hold the descriptor's block ({} {block:?}), got {} {shape:?}",
                elem.triton_name(),
                got.triton_name()
            ),
        ));
    }
    let want = desc_buffer_type(e, desc).map_err(|m| e.err(a.span, m))?;
    // A layout spanning no CTAs is the one whose CTAs all hold the whole block (zero block bases); two spanning
    // the same CTAs must be equal (which CTA holds which part).
    let want = &want.memdesc().expect("a memdesc").2.linear;
    let ctas = |l: &tessel_layouts::LinearLayout| if l.has_in_dim("block") { l.in_dim_size("block") } else { 1 };
    let same = if ctas(want) == ctas(&layout.linear) {
        *want == layout.linear
    } else {
        want.remove_zero_bases("block") == layout.linear.remove_zero_bases("block")
    };
    if !same {
        return Err(e.err_hint(
            a.span,
            format!("`{what}` is not in the descriptor's TMA layout, which TMA writes and reads"),
            "allocate it with the descriptor's layout: `gl.allocate_shared_memory(desc.dtype, desc.block_shape, desc.layout)`",
        ));
    }
    Ok(mem)
}

/// `cache_policy`, which tessel does not have yet, and `multicast` where it has no meaning: im2col loads
/// (`load` reads it itself through [`multicast`]).
fn refuse_options<'a>(e: &mut Elab<'a>, b: &Bound<'a>, im2col: bool) -> R<()> {
    if im2col
        && let Some(a) = b.opt("multicast")
        && e.const_bool(a, &b.fname, "multicast")?
    {
        return Err(e.err(a.span, "multicast im2col TMA loads are not supported by tessel yet"));
    }
    if let Some(a) = b.opt("cache_policy")
        && !matches!(a.value, Value::None)
    {
        return Err(e.err(a.span, format!("`cache_policy` of `{}` is not supported by tessel yet", b.fname)));
    }
    Ok(())
}

/// `multicast=True` of a tile load: in a cluster, one CTA's copy goes to every CTA's `result` (each holds the
/// whole buffer: shared memory split over the CTAs is refused). In a one-CTA program there is no one to share
/// with, and it is an ordinary load (as in Triton).
fn multicast<'a>(e: &mut Elab<'a>, b: &Bound<'a>) -> R<bool> {
    let Some(a) = b.opt("multicast") else { return Ok(false) };
    Ok(e.const_bool(a, &b.fname, "multicast")? && e.func.config.num_ctas > 1)
}

/// The `barrier` argument of a TMA load: an mbarrier (shape [1], int64).
pub(crate) fn barrier_arg<'a>(e: &mut Elab<'a>, b: &Bound<'a>) -> R<Tv> {
    let ba = b.req("barrier");
    let bar = memdesc_arg(e, ba, &b.fname, "barrier")?;
    if !matches!(bar.ty.memdesc(), Some(([1], ScalarType::I64, _))) {
        return Err(e.err(ba.span, format!("`barrier` must be an mbarrier (shape [1], int64), got {}", bar.ty)));
    }
    Ok(bar)
}

fn load<'a>(e: &mut Elab<'a>, b: Bound<'a>) -> R<Value<'a>> {
    let (desc, _, block) = descriptor(e, &b)?;
    refuse_options(e, &b, false)?;
    let coords = e.scalar_list(b.req("coord"), block.len(), ScalarType::I32, &b.fname, "coord")?;
    let bar = barrier_arg(e, &b)?;
    let result = block_buffer(e, b.req("result"), &b.fname, "result", &desc)?;
    let multicast = multicast(e, &b)?;
    let mut operands = vec![desc, result, bar];
    operands.extend(coords);
    match crate::mbarrier::pred(e, b.req("pred"), &b.fname)? {
        None => return Ok(Value::None),
        Some(None) => {}
        Some(Some(p)) => operands.push(p),
    }
    e.emit(Op::TmaLoad { multicast }, &operands, vec![], b.span)?;
    Ok(Value::None)
}

/// `async_load_im2col(tensor_desc, coord, offsets, barrier, result, pred=True)`: TMA's im2col load of a host
/// `TensorDescriptorIm2Col` (`tensordesc_im2col<...>`): `coord` has one entry per dim of the tensor, `offsets`
/// (16-bit) one per spatial dim.
fn load_im2col<'a>(e: &mut Elab<'a>, b: Bound<'a>) -> R<Value<'a>> {
    let a = b.req("tensor_desc");
    let desc = match &a.value {
        Value::Tensor(t) if matches!(t.ty, Type::TensorDesc { .. }) => t.clone(),
        other => {
            return Err(e.err(
                a.span,
                format!("`tensor_desc` of `{}` must be an im2col tensor descriptor, got {}", b.fname, other.describe()),
            ));
        }
    };
    // In a worker partition the descriptor is the partition's argument: its source is what the caller passed
    // (the warp_specialize op that will say so is emitted after the partitions).
    let mut source = desc.v;
    while let Some(&outer) = e.worker_args.get(&source) {
        source = outer;
    }
    let rank = match tessel_tile::tma::host_im2col_base(&e.func, source) {
        Some((_, rank)) => rank as usize,
        None => {
            return Err(e.err_hint(
                a.span,
                format!("`{}` needs an im2col descriptor passed to the kernel (a TensorDescriptorIm2Col)", b.fname),
                "declare the parameter as tensordesc_im2col<DTYPE[PIXELS, CHANNELS]> in the signature",
            ));
        }
    };
    refuse_options(e, &b, true)?;
    let coords = e.scalar_list(b.req("coord"), rank, ScalarType::I32, &b.fname, "coord")?;
    let offsets = e.scalar_list(b.req("offsets"), rank - 2, ScalarType::I16, &b.fname, "offsets")?;
    let bar = barrier_arg(e, &b)?;
    let result = block_buffer(e, b.req("result"), &b.fname, "result", &desc)?;
    let mut operands = vec![desc, result, bar];
    operands.extend(coords);
    operands.extend(offsets);
    match crate::mbarrier::pred(e, b.req("pred"), &b.fname)? {
        None => return Ok(Value::None),
        Some(None) => {}
        Some(Some(p)) => operands.push(p),
    }
    e.emit(Op::TmaLoadIm2col { rank: rank as u32 }, &operands, vec![], b.span)?;
    Ok(Value::None)
}

fn store<'a>(e: &mut Elab<'a>, b: Bound<'a>) -> R<Value<'a>> {
    let (desc, _, block) = descriptor(e, &b)?;
    refuse_options(e, &b, false)?;
    let coords = e.scalar_list(b.req("coord"), block.len(), ScalarType::I32, &b.fname, "coord")?;
    let src = block_buffer(e, b.req("src"), &b.fname, "src", &desc)?;
    let mut operands = vec![desc, src];
    operands.extend(coords);
    e.emit(Op::TmaStore, &operands, vec![], b.span)?;
    Ok(Value::None)
}

fn store_wait<'a>(e: &mut Elab<'a>, b: Bound<'a>) -> R<Value<'a>> {
    let a = b.req("pendings");
    let n = e.const_int(a, &b.fname, "pendings")?;
    let Ok(pending) = u32::try_from(n) else {
        return Err(e.err(a.span, format!("`pendings` must be a non-negative count, got {n}")));
    };
    // `read_only=False`: wait until the stores' writes are done, not only their reads of shared memory.
    let writes = match b.opt("read_only") {
        Some(r) => !e.const_bool(r, &b.fname, "read_only")?,
        None => false,
    };
    e.emit(Op::TmaStoreWait { pending, writes }, &[], vec![], b.span)?;
    Ok(Value::None)
}

/// Attributes of a tensor descriptor that gluon adds to lang's (`block_shape`, `shape`, `strides`, `dtype`,
/// `load`, `store`): `layout` (its block's TMA layout) and `nbytes_per_cta` (the bytes a copy of the block moves,
/// what `mbarrier.expect` waits for). `Ok(None)`: lang's attribute.
pub fn desc_attr<'a>(e: &Elab<'a>, t: &Tv, name: &str, span: tessel_lang::Span) -> R<Option<Value<'a>>> {
    let (elem, block) = tessel_tile::tma::desc_block(&t.ty).expect("a tensordesc");
    match name {
        "layout" => {
            // A layout the host descriptor gives is the answer even where it has no tile copy of the block (a
            // gather descriptor's, whose `[1, cols]` block lands as rows of a larger buffer).
            let mut v = t.v;
            while let Some(&outer) = e.worker_args.get(&v) {
                v = outer;
            }
            if let Some(given) = tessel_tile::tma::desc_layout(&e.func, v) {
                let spec = tessel_layouts::AnyLayout::Shared(tessel_layouts::SharedLayout::Nvmma(given));
                return Ok(Some(Value::Layout(std::rc::Rc::new(spec))));
            }
            let ty = desc_buffer_type(e, t).map_err(|m| e.err(span, m))?;
            let (_, _, layout) = ty.memdesc().expect("a memdesc");
            Ok(Some(Value::Layout(std::rc::Rc::new(crate::layouts::spec_of(layout)))))
        }
        // The block's bytes in one CTA: its part, when its layout's cga_layout splits it over the CTAs.
        "nbytes_per_cta" => {
            let n: u64 = block.iter().map(|&d| d as u64).product::<u64>() * elem.bits() as u64 / 8;
            let ty = desc_buffer_type(e, t).map_err(|m| e.err(span, m))?;
            let (_, _, layout) = ty.memdesc().expect("a memdesc");
            Ok(Some(Value::Int((n / tessel_tile::cluster::parts(&layout.linear) as u64) as i128)))
        }
        _ => Ok(None),
    }
}
