//! Staging a dot operand in NVMMA-swizzled shared memory, as `wgmma` ([`super::accelerate`]) and `tcgen05.mma`
//! ([`super::tcgen05`]) read it: the operand's shared layout, and where its `local_alloc` goes.

use std::sync::Arc;

use tessel_layouts::standard::CgaLayout;
use tessel_layouts::{AnyLayout, NvmmaSharedLayout, SharedLayout, SwizzledSharedLayout};

use crate::ir::{Func, OpId, ValueDef, ValueId};
use crate::layout::insert::insert_after;
use crate::layout::rules::L;
use crate::ops::Op;
use crate::passes::insert_before;
use crate::types::{Elem, Layout, ScalarType, Type};

/// The NVMMA shared layout a `wgmma` operand of `shape` and `elem` is staged in: K-major (the contiguous dim is
/// K) unless `mn_major` (allowed for 16-bit types only), with the widest swizzle (128, 64 or 32 bytes) that one
/// row of the contiguous dim fills.
pub fn operand_shared_layout(
    shape: &[u32],
    elem: ScalarType,
    is_b: bool,
    mn_major: bool,
) -> Result<L, super::AssignError> {
    operand_shared_layout_over(shape, elem, is_b, mn_major, CgaLayout::default())
}

/// [`operand_shared_layout`] for a buffer spread over the CTAs of a cluster as `cga` says (each CTA's part laid
/// out as the buffer of that part's shape would be).
pub fn operand_shared_layout_over(
    shape: &[u32],
    elem: ScalarType,
    is_b: bool,
    mn_major: bool,
    cga: CgaLayout,
) -> Result<L, super::AssignError> {
    let parts = cga.split_per_dim(shape.len())?;
    let part: Vec<u32> = shape.iter().zip(&parts).map(|(&s, &p)| s / p).collect();
    let bits = elem.bits();
    // The contiguous dim: K for A is dim 1 and for B dim 0; M/N for A is dim 0 and for B dim 1.
    let contig_dim = match (is_b, mn_major) {
        (false, false) | (true, true) => 1,
        (false, true) | (true, false) => 0,
    };
    let contig_bytes = part[contig_dim] * bits / 8;
    let swizzle =
        [128, 64, 32].into_iter().find(|&s| contig_bytes >= s).ok_or(super::AssignError::OperandBytes(contig_bytes))?;
    let spec = NvmmaSharedLayout {
        swizzle_byte_width: swizzle,
        element_bitwidth: bits,
        rank: 2,
        transposed: contig_dim == 0,
        fp4_padded: false,
        cga,
    };
    let linear = spec.to_linear(shape)?;
    Ok(Arc::new(Layout { spec: Some(AnyLayout::Shared(SharedLayout::Nvmma(spec))), linear }))
}

/// The CTA arrangement of a tensor of `shape` whose layout is `l`, in units of one CTA's part (Gluon's
/// `cga_layout`): a buffer staged from it is spread over the CTAs as the registers are.
pub(crate) fn cga_of(l: &tessel_layouts::LinearLayout, shape: &[u32]) -> CgaLayout {
    let bases = crate::cluster::block_bases(l);
    // A split that is not one aligned box per CTA has no cga_layout: the buffer then holds the tensor whole in
    // every CTA, which code generation refuses to meet with spread registers (and the kernel runs unspread).
    match crate::cluster_part::part_shape(shape, &bases) {
        Ok(part) if !bases.is_empty() => {
            CgaLayout::Bases(bases.iter().map(|b| b.iter().zip(&part).map(|(&x, &p)| x / p).collect()).collect())
        }
        _ => CgaLayout::default(),
    }
}

/// The swizzled shared layout an `mma.sync` operand tile of `shape` (2-D) and `elem` is staged in when it is
/// read back into its dot-operand registers (`ldmatrix`), with `contig_dim` (the dim its global rows run along)
/// contiguous: 16-byte chunks (the unit of `cp.async` and of an `ldmatrix` row) stay whole, and chunk `c` of row
/// `r` sits at chunk `c ^ ((r / per_phase) % max_phase)` of its row, where `per_phase` rows share one 128-byte
/// line. The 8 rows one `ldmatrix` matrix reads (8 consecutive rows at one chunk) then fall in 8 distinct chunks
/// of the 32 banks, whatever the row length.
pub fn mma_sync_operand_layout(shape: &[u32], elem: ScalarType, contig_dim: usize) -> Result<L, super::AssignError> {
    let row_bytes = shape[contig_dim] * elem.bits() / 8;
    let vec = (128 / elem.bits()).max(1);
    let per_phase = (128 / row_bytes.max(1)).max(1);
    let max_phase = (row_bytes / 16).clamp(1, 8);
    let spec = SwizzledSharedLayout {
        vec,
        per_phase,
        max_phase,
        order: vec![contig_dim as u32, 1 - contig_dim as u32],
        cga: CgaLayout::default(),
    };
    let linear = spec.to_linear(shape)?;
    Ok(Arc::new(Layout { spec: Some(AnyLayout::Shared(SharedLayout::Swizzled(spec))), linear }))
}

/// Whether `dim` is the dim along which tensor `v`'s elements are adjacent in its layout: the first register
/// (else lane) basis that is a unit step moves along `dim`. Staging with `dim` contiguous then keeps the
/// shared-memory stores as wide as the registers allow.
fn fastest_dim_is(f: &Func, v: ValueId, dim: usize) -> bool {
    let Some(l) = f.ty(v).layout() else { return false };
    let unit = |b: &&tessel_layouts::Basis| b.iter().filter(|&&x| x != 0).count() == 1 && b.contains(&1);
    let mut bases = l.linear.bases("register").iter().chain(l.linear.bases("lane"));
    bases.find(unit).is_some_and(|b| b[dim] == 1)
}

/// Operands staged where they are made (outside their dot's region), by value and buffer type: another dot
/// reading the same value the same way (attention's Q, read by the off-diagonal and the diagonal loops) shares
/// the buffer, which nothing writes after its `local_alloc`.
pub(crate) type Hoisted = Vec<(ValueId, Type, ValueId)>;

/// Stages operand `v` of `dot` op `o` (B when `is_b`) in an NVMMA-swizzled shared buffer, as `wgmma` and
/// `tcgen05.mma` read it; returns the buffer.
pub(crate) fn stage_operand(
    f: &mut Func,
    o: OpId,
    v: ValueId,
    is_b: bool,
    hoisted: &mut Hoisted,
) -> Result<ValueId, super::AssignError> {
    let r = f.op(o).parent.expect("linked op");
    let loc = f.op(o).loc;
    let Type::Tensor { shape, elem: Elem::Scalar(elem), .. } = f.ty(v).clone() else {
        return Err(super::AssignError::NotATensor(v));
    };
    // 16-bit operands may be MN-major; keep whichever major the registers already run along.
    let mn_dim = if is_b { 1 } else { 0 };
    let mn_major = elem.bits() == 16 && fastest_dim_is(f, v, mn_dim);
    let cga = f.ty(v).layout().map_or_else(CgaLayout::default, |l| cga_of(&l.linear, &shape));
    let layout = operand_shared_layout_over(&shape, elem, is_b, mn_major, cga)?;
    let ty = Type::MemDesc { shape: shape.clone(), elem, layout };
    let outer = match f.value(v).def {
        ValueDef::Result(def, _) => f.op(def).parent != Some(r),
        ValueDef::Arg(region, _) => region != r,
    };
    if outer && let Some((.., m)) = hoisted.iter().find(|(x, t, _)| *x == v && *t == ty) {
        return Ok(*m);
    }
    // An operand made in the dot's own region is staged right before the dot, as Triton does: every global load
    // of both operands is issued before the first shared store, so their latencies overlap (storing A right after
    // its load makes the B loads wait for A's data). An operand made in an outer region (attention's Q,
    // loop-invariant) is staged right after it is made: stored once, before the loop, not in every iteration.
    let a = f.append(r, Op::LocalAlloc, &[v], vec![ty.clone()], &[], loc);
    f.region_mut(r).ops.pop();
    match f.value(v).def {
        ValueDef::Result(def, _) if f.op(def).parent != Some(r) => insert_after(f, def, a),
        ValueDef::Arg(region, _) if region != r => {
            f.region_mut(region).ops.insert(0, a);
            f.op_mut(a).parent = Some(region);
        }
        _ => insert_before(f, r, o, a),
    }
    let staged = f.op(a).results[0];
    if outer {
        hoisted.push((v, ty, staged));
    }
    Ok(staged)
}
