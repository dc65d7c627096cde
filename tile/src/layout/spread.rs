//! Which auto-mode cluster kernels (`num_ctas` > 1) spread their tensors over the cluster's CTAs, as Triton's
//! layouts do, rather than run the program in the cluster's first CTA alone.
//!
//! Spread, each blocked layout splits its tensor among the CTAs ([`super::coalesce::cta_split`]), each `wgmma`
//! dot its accumulator ([`super::accelerate::wgmma_split`]) and each tensor descriptor its block
//! ([`split_descriptors`]), and every CTA computes its part. [`spreads_over_ctas`]
//! says which kernels the compiler can spread; [`worth_it`], after a spread layout assignment, whether the spread
//! kernel is worth running (its reductions and conversions across the CTAs are not too small).

use std::collections::HashMap;

use tessel_layouts::standard::CgaLayout;
use tessel_layouts::{AnyLayout, NvmmaSharedLayout, SharedLayout};

use crate::cluster::block_bases;
use crate::ir::{Func, OpId, ValueDef, ValueId};
use crate::layout::accelerate;
use crate::layout::staging::cga_of;
use crate::ops::Op;
use crate::types::{ScalarType, Type};

/// Whether auto mode may spread the tensors of a cluster kernel (`num_ctas` > 1) over its CTAs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Spread {
    /// Where [`spreads_over_ctas`] allows and [`worth_it`] finds it pays; elsewhere the cluster's first CTA runs
    /// the program alone.
    WhereSupported,
    /// Never: every CTA holds every tensor whole, and code generation runs the program in the first CTA alone
    /// (what the compile driver falls back to when code generation cannot do a spread kernel's share per CTA).
    Never,
}

/// Whether auto mode can spread the tensors of `f`, a cluster kernel (`num_ctas` > 1), over its CTAs: each
/// blocked layout splits its tensor among them, each `wgmma` dot its accumulator (rows of A and columns of B
/// per CTA, staged in each CTA's part of the shared buffers), each tensor descriptor's block as its accesses
/// are ([`split_descriptors`]), and each CTA computes its part. Not yet: dots on other instructions (`tcgen05`
/// and `mma.sync`), a dot feeding another (attention) or with an A computed in registers, and im2col
/// descriptors; such a kernel's program runs in the cluster's first CTA alone. A Gluon kernel's spread is its
/// author's.
pub fn spreads_over_ctas(f: &Func) -> bool {
    let dot_splits = |o| {
        f.target == crate::Target::Sm90a
            && accelerate::wgmma_split(f, o, f.config.num_ctas).is_some()
            && !accelerate::feeds_a_dot(f, o)
            && accelerate::loaded(f, f.op(o).operands[0])
    };
    f.config.num_ctas > 1
        && f.target != crate::Target::Sm80
        && !f.attrs.gluon
        && f.all_ops().into_iter().all(|o| match f.op(o).op {
            Op::Dot { .. } => dot_splits(o),
            Op::DotScaled { .. } | Op::MakeTensorDescIm2col { .. } => false,
            _ => true,
        })
}

/// The fewest elements a reduction across the CTAs should reduce (its operand, the whole program's tensor), and
/// a conversion across them move. Such an op meets the cluster twice (each CTA's partials through distributed shared memory between two
/// cluster barriers), a cost that does not shrink with the tensor, while the first CTA alone leaves
/// `num_ctas - 1` of every cluster's SMs idle. Measured on the H200 (BENCHMARKS.md, 2026-12-03), spread against
/// first-CTA-alone time for a row softmax: rows of 16384 at 0.80 (2 CTAs) and 0.77 (4 CTAs); rows of 8192 at
/// 1.12 (2 CTAs); rows of 4096 at 1.23 and 1.66; rows of 1024 at 1.72 and 2.64; a 64x128 tile's column maxima
/// (8192 elements) at 1.04 and 2.68.
pub const MIN_CROSSING_ELEMENTS: u64 = 16384;

/// Whether `f`, laid out spread over its CTAs, is worth running so: every reduction along a dim the CTAs split,
/// and every conversion that moves data between CTAs (a transpose of a split tile), takes at least
/// [`MIN_CROSSING_ELEMENTS`], and no scan runs along such a dim (code generation would refuse it: each CTA would
/// need the earlier CTAs' totals).
pub fn worth_it(f: &Func) -> bool {
    f.all_ops().into_iter().all(|o| {
        let d = f.op(o);
        let (axis, scan) = match d.op {
            Op::Reduce { axis, .. } => (axis, false),
            Op::Scan { axis, .. } => (axis, true),
            Op::ConvertLayout => return !crosses_ctas(f, o) || numel(f, o) >= MIN_CROSSING_ELEMENTS,
            _ => return true,
        };
        let Some(l) = f.ty(d.operands[0]).layout() else { return true };
        if !block_bases(&l.linear).iter().any(|b| b.get(axis as usize).is_some_and(|&x| x != 0)) {
            return true;
        }
        !scan && numel(f, o) >= MIN_CROSSING_ELEMENTS
    })
}

/// The elements of op `o`'s first operand.
fn numel(f: &Func, o: OpId) -> u64 {
    f.ty(f.op(o).operands[0]).shape().iter().map(|&s| s as u64).product()
}

/// Whether conversion `o` needs data another CTA holds: some rank bit splits the source where the result has
/// another basis for it (a split tile made whole in every CTA, or split another way). The reverse, a tensor every
/// CTA holds whole split by the result, stays in each CTA.
fn crosses_ctas(f: &Func, o: OpId) -> bool {
    let d = f.op(o);
    let (Some(src), Some(dst)) = (f.ty(d.operands[0]).layout(), f.ty(d.results[0]).layout()) else { return false };
    let (src, dst) = (block_bases(&src.linear), block_bases(&dst.linear));
    src.iter().enumerate().any(|(i, b)| b.iter().any(|&x| x != 0) && dst.get(i) != Some(b))
}

/// In a kernel laid out spread over its CTAs, gives each tensor descriptor's block the CTA arrangement its
/// accesses have (its `make_tensor_desc`'s layout: the block's TMA layout, else
/// `NVMMASharedLayout.get_default_for`, with that `cga_layout`), so that each CTA's TMA copies move its part:
/// a load staged for a `wgmma` as its shared buffer is split (A's rows, B whole or its columns), any other load
/// and a store as their registers are. Code generation then copies each CTA's part with a box of that part's
/// shape (`tessel_codegen`'s `cluster_local`), and the tensor map the launch encodes is that box's.
///
/// Fails (and the kernel is laid out again unspread) when two accesses of one descriptor want its block split
/// differently, or when one CTA's part of a block is too small for a TMA box (rows under 16 bytes).
pub(crate) fn split_descriptors(f: &mut Func) -> Result<(), super::AssignError> {
    let mut want: HashMap<OpId, NvmmaSharedLayout> = HashMap::new();
    let counts = f.use_counts();
    let ops = f.all_ops();
    // The buffer each value is staged in, where a `local_alloc` stages it.
    let staging: HashMap<ValueId, ValueId> = ops
        .iter()
        .map(|&u| f.op(u))
        .filter(|d| d.op == Op::LocalAlloc && !d.operands.is_empty())
        .map(|d| (d.operands[0], d.results[0]))
        .collect();
    for &o in &ops {
        let d = f.op(o);
        let (desc, tile) = match d.op {
            Op::DescLoad => (d.operands[0], d.results[0]),
            Op::DescStore => (d.operands[0], d.operands[1]),
            _ => continue,
        };
        let ValueDef::Result(maker, _) = f.value(crate::tma::desc_source(f, desc)).def else { continue };
        let Op::MakeTensorDesc { layout: given, .. } = &f.op(maker).op else { continue };
        let Some((elem, block)) = crate::tma::desc_block(f.ty(desc)) else { continue };
        // A load whose one use stages it in shared memory (a wgmma operand) lands in that buffer's layout.
        let staged = staging.get(&tile).filter(|_| d.op == Op::DescLoad && counts[tile.index()] == 1);
        let layout = match staged.map(|&b| f.ty(b)) {
            Some(Type::MemDesc { layout, .. }) => match &layout.spec {
                Some(AnyLayout::Shared(SharedLayout::Nvmma(nv))) if given.is_none() && !nv.transposed => nv.clone(),
                _ => with_cga(given.as_ref(), elem, block, cga_of(&layout.linear, block))?,
            },
            _ => match f.ty(tile).layout() {
                Some(l) => with_cga(given.as_ref(), elem, block, cga_of(&l.linear, block))?,
                None => continue,
            },
        };
        // Each CTA's part must still be a block TMA can copy (a 16-byte row at least): a small block split
        // over many CTAs is not.
        let one_cta = NvmmaSharedLayout { cga: CgaLayout::default(), ..layout.clone() };
        let parts = layout.cga.split_per_dim(block.len())?;
        let part: Vec<u32> = block.iter().zip(&parts).map(|(&b, &p)| b / p).collect();
        if crate::tma::block_in(elem, &part, Some(&one_cta)).is_err() || want.get(&maker).is_some_and(|w| *w != layout)
        {
            return Err(super::AssignError::NoFit("make_tensor_desc"));
        }
        want.insert(maker, layout);
    }
    for (maker, nv) in want {
        if nv.cga != CgaLayout::default()
            && let Op::MakeTensorDesc { layout, .. } = &mut f.op_mut(maker).op
        {
            *layout = Some(nv);
        }
    }
    Ok(())
}

/// `given` (else the default TMA layout of one CTA's part of `block`, whose swizzle that part's rows fill) spread
/// over the CTAs as `cga` says.
fn with_cga(
    given: Option<&NvmmaSharedLayout>,
    elem: ScalarType,
    block: &[u32],
    cga: CgaLayout,
) -> Result<NvmmaSharedLayout, super::AssignError> {
    let parts = cga.split_per_dim(block.len())?;
    let part: Vec<u32> = block.iter().zip(&parts).map(|(&b, &p)| b / p).collect();
    let nv = given.cloned().unwrap_or_else(|| NvmmaSharedLayout::default_for(&part, elem.bits()));
    Ok(NvmmaSharedLayout { cga, ..nv })
}
