//! What the CTAs of a thread-block cluster share, as the IR's types say it (gluon's `cga_layout`s): which CTAs
//! hold the same part of a shared-memory buffer, the CTAs one mbarrier stands for (a two-CTA barrier), the
//! tensor-core mode of a kernel (`cta_group::1`, or `::2`: MMAs over CTA pairs) and the CTAs a tcgen05 commit
//! must reach (its multicast set). The verifier, gluon (`tcgen05_mma_barrier_count`), the interpreter and codegen
//! read them here, so they agree.
//!
//! - A layout's `block` bases map a CTA's rank to the part of the tensor it holds (their XOR over the rank's set
//!   bits); a zero basis means the two CTAs that differ in that bit hold the same part.
//! - A two-CTA barrier (`allocate_mbarrier(two_ctas=True)`) is laid out as `MBarrierLayout(cga_layout=[[0]])`:
//!   the CTAs of a pair (ranks `2i`, `2i + 1`) share one barrier, in the even CTA (the pair's lead). Its count and
//!   expected bytes are the pair's (each CTA's arrivals and copies count on the lead's barrier), and only the lead
//!   waits on it. A barrier of any other layout is each CTA's own.
//! - In `cta_group::2` mode (the accumulator's `TensorMemoryLayout(two_ctas=True)`) the lead of each pair issues
//!   the MMA over both CTAs' operands and accumulators; every MMA of a kernel must use one mode.
//! - A commit's multicast set is a mask of CTA offsets (bit `d`: the CTA `issuer ^ d`); the default reaches the
//!   issuer, and in `cta_group::2` mode its pair.

use tessel_layouts::{AnyLayout, CgaLayout, LinearLayout, SharedLayout};

use crate::ir::{Func, OpId};
use crate::ops::Op;
use crate::types::Type;

/// The `block` bases of a layout (none without a `block` in-dim).
pub fn block_bases(l: &LinearLayout) -> Vec<Vec<u32>> {
    if !l.has_in_dim("block") {
        return vec![];
    }
    l.bases("block").iter().map(|b| b.to_vec()).collect()
}

/// The part of the tensor CTA `rank` holds: the XOR of the block bases of its set bits (bits past the layout's
/// bases hold what CTA 0 holds).
fn part(bases: &[Vec<u32>], rank: u32) -> Vec<u32> {
    let dims = bases.first().map_or(0, |b| b.len());
    let mut at = vec![0; dims];
    for (i, b) in bases.iter().enumerate() {
        if rank >> i & 1 == 1 {
            for (x, y) in at.iter_mut().zip(b) {
                *x ^= y;
            }
        }
    }
    at
}

/// How many parts the CTAs split a buffer into: `2^(nonzero block bases)`. One CTA holds `1 / parts` of it, so a
/// copy into every CTA's part moves `bytes / parts` into each.
pub fn parts(l: &LinearLayout) -> u32 {
    1 << block_bases(l).iter().filter(|b| b.iter().any(|&x| x != 0)).count()
}

/// The CTAs a barrier of this type stands for: 2 for a two-CTA barrier (its layout's cga_layout `[[0]]`), else 1.
pub fn barrier_ctas(ty: &Type) -> u32 {
    let Type::MemDesc { layout, .. } = ty else { return 1 };
    match &layout.spec {
        Some(AnyLayout::Shared(SharedLayout::Swizzled(s))) => match &s.cga {
            CgaLayout::Bases(b) if b.len() == 1 && b[0].iter().all(|&x| x == 0) => 2,
            _ => 1,
        },
        _ => 1,
    }
}

/// Whether a tensor-memory accumulator is laid out for `cta_group::2` MMAs (`TensorMemoryLayout(two_ctas=True)`).
pub fn two_ctas(acc: &Type) -> bool {
    matches!(acc, Type::MemDesc { layout, .. }
        if matches!(&layout.spec, Some(AnyLayout::TensorMemory(t)) if t.two_ctas))
}

/// The kernel's tensor-core mode: 2 when its MMAs use `cta_group::2`, else 1. Every tcgen05 MMA of a
/// kernel must use one mode (the tensor memory is allocated for one), a two-CTA MMA needs CTA pairs and its
/// operands placed for them (`pair_operands`), and tensor memory is split over at most the kernel's CTAs: the
/// first op that breaks a rule, with the message to report at it.
pub fn cta_group(f: &Func) -> Result<u32, (OpId, String)> {
    let mut mode: Option<(u32, OpId)> = None;
    for o in f.all_ops() {
        let d = f.op(o);
        if d.op == Op::TmemAlloc
            && let Type::MemDesc { layout, .. } = f.ty(d.results[0])
            && let Some(AnyLayout::TensorMemoryScales(t)) = &layout.spec
            && t.cta_split[0] * t.cta_split[1] * t.broadcast > f.config.num_ctas
        {
            return Err((
                o,
                format!(
                    "tensor-memory scales spread over {} CTAs in a kernel of num_ctas = {}",
                    t.cta_split[0] * t.cta_split[1] * t.broadcast,
                    f.config.num_ctas
                ),
            ));
        }
        if d.op == Op::TmemAlloc
            && let Type::MemDesc { layout, .. } = f.ty(d.results[0])
            && let Some(AnyLayout::TensorMemory(t)) = &layout.spec
            && t.cta_split[0] * t.cta_split[1] > f.config.num_ctas
        {
            return Err((
                o,
                format!(
                    "tensor memory split over {} CTAs in a kernel of num_ctas = {}",
                    t.cta_split[0] * t.cta_split[1],
                    f.config.num_ctas
                ),
            ));
        }
        let acc = match d.op {
            Op::Tcgen05Mma | Op::Tcgen05MmaScaled { .. } => d.operands[2],
            _ => continue,
        };
        let group = if two_ctas(f.ty(acc)) { 2 } else { 1 };
        if group == 2
            && let Err(m) = pair_operands(f.ty(d.operands[0]), f.ty(d.operands[1]), f.ty(acc))
        {
            return Err((o, m));
        }
        match mode {
            None => mode = Some((group, o)),
            Some((g, _)) if g == group => {}
            Some((g, _)) => {
                return Err((
                    o,
                    format!(
                        "this MMA is `cta_group::{group}` but an earlier one of the kernel is `cta_group::{g}`: once \
                         one tcgen05 MMA uses two CTAs (`TensorMemoryLayout(two_ctas=True)`), all must"
                    ),
                ));
            }
        }
    }
    let group = mode.map_or(1, |(g, _)| g);
    if group == 2 && (f.config.num_ctas < 2 || f.config.num_ctas % 2 != 0) {
        let (_, at) = mode.expect("a mode");
        return Err((
            at,
            format!("a two-CTA MMA needs a cluster of CTA pairs, the kernel has num_ctas = {}", f.config.num_ctas),
        ));
    }
    Ok(group)
}

/// A `cta_group::2` MMA's data placement: the pair splits A along M (A's first block basis is along dim 0 alone,
/// when A is in shared memory), B along N (its first along dim 1 alone), and the accumulator along M (its
/// `TensorMemoryLayout` splits M over at least the pair).
fn pair_operands(a: &Type, b: &Type, acc: &Type) -> Result<(), String> {
    let first = |t: &Type| match t {
        Type::MemDesc { layout, .. } => block_bases(&layout.linear).into_iter().next(),
        _ => None,
    };
    let along =
        |basis: Option<Vec<u32>>, dim: usize| basis.is_some_and(|b| b.len() == 2 && b[dim] != 0 && b[1 - dim] == 0);
    if !a.is_tmem() && !along(first(a), 0) {
        return Err(format!(
            "a two-CTA MMA reads A split along M by the CTA pair (its cga_layout's first basis [1, 0]), got {a}"
        ));
    }
    if !along(first(b), 1) {
        return Err(format!(
            "a two-CTA MMA reads B split along N by the CTA pair (its cga_layout's first basis [0, 1]), got {b}"
        ));
    }
    match acc {
        Type::MemDesc { layout, .. } if matches!(&layout.spec, Some(AnyLayout::TensorMemory(t)) if t.cta_split[0] >= 2) => {
            Ok(())
        }
        _ => Err(format!(
            "a two-CTA MMA's accumulator is split along M by the CTA pair (cga_layout [[1, 0], ...]), got {acc}"
        )),
    }
}

/// The multicast set (a mask of CTA offsets from the issuer) a commit of MMAs reading the shared-memory operands
/// `smem` needs to reach every CTA that holds a copy of what they read, so that whoever refills those copies (a
/// multicast TMA load writes every CTA of its group) learns that the MMAs are done with them: the issuer (and its
/// pair, in `cta_group::2` mode), and each CTA holding the same part of an operand as one of those.
pub fn commit_ctas(smem: &[&Type], group: u32, num_ctas: u32) -> u16 {
    let issuers: Vec<u32> = if group == 2 { vec![0, 1] } else { vec![0] };
    let parts: Vec<Vec<Vec<u32>>> = smem
        .iter()
        .filter_map(|t| match t {
            Type::MemDesc { layout, .. } => Some(block_bases(&layout.linear)),
            _ => None,
        })
        .collect();
    let mut mask = 0u16;
    for j in 0..num_ctas.min(16) {
        let shares = issuers.iter().any(|&i| i == j || parts.iter().any(|b| part(b, i) == part(b, j)));
        if shares {
            mask |= 1 << j;
        }
    }
    mask
}

/// The default multicast set of a commit: the issuer, and its pair in `cta_group::2` mode.
pub fn default_commit_ctas(group: u32) -> u16 {
    if group == 2 { 0b11 } else { 0b1 }
}

/// The CTAs that issue tcgen05 ops: every one, or each pair's lead in `cta_group::2` mode.
pub fn issuers(group: u32, num_ctas: u32) -> impl Iterator<Item = u32> {
    (0..num_ctas).filter(move |r| group == 1 || r % 2 == 0)
}

/// The arrivals one CTA's barrier gets when every issuer commits to the multicast set `mask`: how many issuers'
/// sets reach it (the same for every CTA: the sets are shifts of one). Gluon's `tcgen05_mma_barrier_count`.
pub fn commit_arrivals(mask: u16, group: u32, num_ctas: u32) -> u32 {
    issuers(group, num_ctas).filter(|&i| mask >> i & 1 == 1).count() as u32
}
