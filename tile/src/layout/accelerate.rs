//! Dot acceleration: which tensor-core instruction a `dot` runs on, the accumulator layout that instruction
//! produces, and (for `wgmma`) the shared-memory staging of its operands.
//!
//! [`accumulator_layout`] is consulted by coalescing, where a `dot` is a layout anchor: on sm_90a a dot whose
//! types and shape `wgmma` accepts gets an `NVMMADistributedLayout([3, 0], warps, [16, N, K])` accumulator
//! (warps and instruction N chosen as upstream Triton chooses them), on sm_80 (and on sm_90a where `wgmma`
//! cannot run the dot: fewer than 4 warps, say) an `mma.sync` layout, otherwise the blocked FMA layout. After
//! propagation, [`stage_operands`] rewrites every `dot` with an MMA v3 accumulator into `local_alloc` of each
//! operand into an NVMMA-swizzled shared layout and a `warpgroup_dot` reading them, so codegen sees shared
//! memory as IR values.
//!
//! On sm_80 a dot gets an `NVMMADistributedLayout([2, 0], warps, [16, 8])` accumulator and its operands
//! `DotOperandLayout`s of it (propagation inserts the conversions from the loads' layouts); codegen issues
//! `mma.sync` from registers.
//!
//! A 16-bit `wgmma` A operand computed in registers (attention's `p @ v`) stays in registers.
//!
//! On sm_100a the dots `tcgen05.mma` runs are [`super::tcgen05`]'s; the others run on `mma.sync`, as on sm_80.
//!
//! Not yet: f16 accumulators, `tf32x3`, and an 8-bit A in registers in auto mode (gluon kernels may write it).

use tessel_layouts::standard::CgaLayout;
use tessel_layouts::{AnyLayout, DistributedLayout, NvmmaDistributedLayout};

use crate::ir::{Func, OpId, ValueDef, ValueId};
use crate::layout::insert::convert_before;
use crate::layout::rules::{L, from_spec};
use crate::layout::staging::{Hoisted, stage_operand};
use crate::ops::{InputPrecision, Op};
use crate::target::{MmaKind, Target};
use crate::types::{Elem, ScalarType, Type};

use ScalarType::*;

/// K elements one `wgmma` consumes: 32 bytes of the operand type.
fn k_per_instr(op: ScalarType) -> u32 {
    256 / op.bits()
}

/// Whether `wgmma` multiplies `op` operands into an `acc` accumulator (with `precision` for f32 operands).
fn wgmma_types(op: ScalarType, acc: ScalarType, precision: InputPrecision) -> bool {
    match (op, acc) {
        (F16 | BF16 | F8E4M3 | F8E5M2, F32) => true,
        (F32, F32) => precision == InputPrecision::Tf32,
        (I8 | U8, I32) => true,
        _ => false,
    }
}

/// Whether some `dot` uses a value computed from `o`'s result (a chained dot, as in attention).
pub(crate) fn feeds_a_dot(f: &Func, o: OpId) -> bool {
    let mut frontier = vec![f.op(o).results[0]];
    let mut seen = std::collections::HashSet::new();
    let ops = f.all_ops();
    while let Some(v) = frontier.pop() {
        if !seen.insert(v) {
            continue;
        }
        for &u in &ops {
            let d = f.op(u);
            if d.operands.contains(&v) {
                if matches!(d.op, Op::Dot { .. }) && u != o {
                    return true;
                }
                frontier.extend(d.results.iter().copied());
            }
        }
    }
    false
}

/// The MMA v3 accumulator layout for `dot` op `o` on sm_90a, or `None` when `wgmma` cannot run it. In a kernel
/// spread over `ctas` CTAs (1: not spread) the accumulator is split as [`wgmma_split`] says, each CTA's part laid out as a
/// dot of that shape would be.
fn wgmma_layout(f: &Func, o: OpId, ctas: u32) -> Option<NvmmaDistributedLayout> {
    let shape = f.ty(f.op(o).results[0]).shape();
    if shape.len() != 2 {
        return None;
    }
    let [sm, sn] = if ctas > 1 { wgmma_split(f, o, ctas)? } else { [1, 1] };
    let layout = wgmma_layout_at(f, o, shape[0] / sm, shape[1] / sn)?;
    let cga = if ctas > 1 { split_cga(sm, sn, [true, true]) } else { CgaLayout::default() };
    Some(NvmmaDistributedLayout { cga, ..layout })
}

/// How `wgmma` dot `o` (2-D) splits over the `ctas` CTAs of a cluster: `[parts of M, parts of N]`. Each halving
/// takes the longer side of a CTA's part (M on a tie), so that the part is as square as the tile allows and its
/// operands bring the fewest bytes per K step (a 128x256 tile over 2 CTAs: 128x128 each, 32 KiB of A and B per
/// 64-deep step, not 64x256 and 40 KiB), as far as M keeps a whole warpgroup's rows (64) and B at least 32 bytes
/// of columns (an N-major B is staged with its columns contiguous, and `wgmma` reads no narrower rows); `None`
/// when the CTAs cannot all get such a part of a dot `wgmma` runs. Each CTA multiplies its rows of A by its
/// columns of B: A is split along M and held whole along K by the CTAs that share its rows, B likewise along N
/// ([`operand_cga`]).
pub fn wgmma_split(f: &Func, o: OpId, ctas: u32) -> Option<[u32; 2]> {
    let shape = f.ty(f.op(o).results[0]).shape();
    let &[m, n] = shape else { return None };
    let b_bits = f.ty(f.op(o).operands[1]).elem()?.scalar()?.bits();
    let (mut sm, mut sn) = (1, 1);
    while sm * sn < ctas {
        let m_halves = m % (2 * sm) == 0 && (m / (2 * sm)) % 64 == 0;
        let n_halves = n % (2 * sn) == 0 && (n / (2 * sn)) * b_bits / 8 >= 32;
        match (m_halves, n_halves) {
            (true, true) if m / sm >= n / sn => sm *= 2,
            (_, true) => sn *= 2,
            (true, false) => sm *= 2,
            (false, false) => return None,
        }
    }
    wgmma_layout_at(f, o, m / sm, n / sn).is_some().then_some([sm, sn])
}

/// The CTA arrangement of a dot's accumulator split `sm` x `sn` ([`wgmma_split`]), in units of one CTA's part:
/// the low rank bits split M, the high ones N. `keep` says which of the two splits a tensor follows (an
/// operand holds the other dim whole: a zero basis, its CTAs holding copies).
pub fn split_cga(sm: u32, sn: u32, keep: [bool; 2]) -> CgaLayout {
    let m_bits = (0..sm.trailing_zeros()).map(|i| if keep[0] { vec![1 << i, 0] } else { vec![0, 0] });
    let n_bits = (0..sn.trailing_zeros()).map(|i| if keep[1] { vec![0, 1 << i] } else { vec![0, 0] });
    CgaLayout::Bases(m_bits.chain(n_bits).collect())
}

/// The CTA arrangement of operand `index` (0: A `[M, K]`, 1: B `[K, N]`) of a dot split `sm` x `sn`: A's rows
/// split as the accumulator's, B's columns likewise, K held whole.
pub fn operand_cga(sm: u32, sn: u32, index: usize) -> CgaLayout {
    // A's M and B's N are dims 0 and 1, as the accumulator's.
    split_cga(sm, sn, [index == 0, index == 1])
}

/// [`wgmma_layout`] for an `m` x `n` accumulator (one CTA's part of `o`'s).
fn wgmma_layout_at(f: &Func, o: OpId, m: u32, n: u32) -> Option<NvmmaDistributedLayout> {
    let d = f.op(o);
    let Op::Dot { precision, .. } = d.op else { return None };
    let (a, c) = (f.ty(d.operands[0]), f.ty(d.results[0]));
    let (op_t, acc_t) = (a.elem()?.scalar()?, c.elem()?.scalar()?);
    let num_warps = f.config.num_warps;
    if num_warps < 4 || !wgmma_types(op_t, acc_t, precision) {
        return None;
    }
    let k = a.shape()[1];
    let k_instr = k_per_instr(op_t);
    // Warps: a warpgroup (4 warps down M) is the unit; more warps go down M while M has rows for them, then
    // along N. A dot feeding another dot keeps all warps along M (rows stay within a warp for the softmax).
    let mut warps = [4u32, 1];
    if feeds_a_dot(f, o) {
        warps = [num_warps, 1];
    } else {
        while warps[0] * warps[1] < num_warps {
            if m > 16 * warps[0] {
                warps[0] *= 2;
            } else {
                warps[1] *= 2;
            }
        }
    }
    // Instruction N: the largest power of two in 8..=256 that divides the warpgroup's columns.
    let n_per_wg = n / warps[1];
    let n_instr = (3..=8).map(|s| 1u32 << s).rev().find(|&x| x <= n_per_wg && n_per_wg % x == 0)?;
    let int8 = matches!(op_t, I8 | U8);
    if (int8 && n_instr > 32 && n_instr % 16 != 0) || m % (16 * warps[0]) != 0 || k % k_instr != 0 {
        return None;
    }
    let layout = NvmmaDistributedLayout {
        version: [3, 0],
        warps_per_cta: warps.to_vec(),
        instr_shape: vec![16, n_instr, k_instr],
        cga: CgaLayout::default(),
    };
    layout.validate().ok()?;
    Some(layout)
}

/// Whether `mma.sync` on `target` multiplies `op` operands into an `acc` accumulator (with `precision` for f32
/// operands). fp8 operands (`m16n8k32`, e4m3 and e5m2) need sm_89 or newer: sm_90a and sm_100a here.
fn mma_sync_types(op: ScalarType, acc: ScalarType, precision: InputPrecision, target: Target) -> bool {
    match (op, acc) {
        (F16 | BF16, F32) => true,
        (F32, F32) => precision == InputPrecision::Tf32,
        (I8 | U8, I32) => true,
        (F8E4M3 | F8E5M2, F32) => target != Target::Sm80,
        _ => false,
    }
}

/// The MMA v2 accumulator layout for `dot` op `o` on sm_80, or `None` when `mma.sync` cannot run it. Warps are
/// placed as upstream Triton places them: doubling along whichever dim has more 16x8 tiles left per warp.
fn mma_sync_layout(f: &Func, o: OpId) -> Option<NvmmaDistributedLayout> {
    let d = f.op(o);
    let Op::Dot { precision, .. } = d.op else { return None };
    let (a, c) = (f.ty(d.operands[0]), f.ty(d.results[0]));
    let (op_t, acc_t) = (a.elem()?.scalar()?, c.elem()?.scalar()?);
    let shape = c.shape();
    let b_t = f.ty(d.operands[1]).elem()?.scalar()?;
    let fp8 = |t: ScalarType| matches!(t, F8E4M3 | F8E5M2);
    let same_kind = b_t == op_t || (fp8(op_t) && fp8(b_t));
    if shape.len() != 2 || !same_kind || !mma_sync_types(op_t, acc_t, precision, f.target) {
        return None;
    }
    let (m, n, k) = (shape[0], shape[1], a.shape()[1]);
    let k_instr = 8 * 32 / op_t.bits();
    if m < 16 || n < 8 || k % k_instr != 0 {
        return None;
    }
    let num_warps = f.config.num_warps;
    let mut warps = [1u32, 1];
    if feeds_a_dot(f, o) {
        warps = [num_warps.min(m / 16).max(1), 1];
    }
    while warps[0] * warps[1] < num_warps {
        if m / 16 / warps[0] >= n / 16 / warps[1] && warps[0] < m / 16 {
            warps[0] *= 2;
        } else if warps[1] < n / 8 {
            warps[1] *= 2;
        } else {
            warps[0] *= 2;
        }
    }
    let layout = NvmmaDistributedLayout {
        version: [2, 0],
        warps_per_cta: warps.to_vec(),
        instr_shape: vec![16, 8],
        cga: CgaLayout::default(),
    };
    layout.validate().ok()?;
    Some(layout)
}

/// Whether a `dot` with a result of type `t` runs on `mma.sync` (sm_80, and sm_100a where `tcgen05` cannot): its
/// accumulator has a pre-Hopper NVMMA layout. The other `dot`s left after layout assignment run on FMAs (those
/// `wgmma` runs became `warpgroup_dot`s); codegen and the facade's limit on unrolled FMA dots both ask this.
pub fn runs_on_mma_sync(t: &Type) -> bool {
    matches!(
        t.layout().and_then(|l| l.spec.as_ref()),
        Some(AnyLayout::Distributed(DistributedLayout::Nvmma(m))) if !m.is_hopper()
    )
}

/// The accumulator layout `dot` op `o` gets on the function's target, when a tensor-core instruction can run
/// it; `None` leaves it on the FMA path. On Blackwell (sm_100a) a dot `tcgen05.mma` runs gets the register
/// layout of its tensor-memory accumulator ([`super::tcgen05`]); the others run `mma.sync`, which is there on
/// every target from sm_80 on.
pub fn accumulator_layout(f: &Func, o: OpId, ctas: u32) -> Option<L> {
    let shape = f.ty(f.op(o).results[0]).shape().to_vec();
    let spec = match f.target.mma_kind() {
        // A kernel spread over a cluster's CTAs has only dots wgmma runs split (`super::spreads_over_ctas`).
        MmaKind::Wgmma if ctas > 1 => DistributedLayout::Nvmma(wgmma_layout(f, o, ctas)?),
        // A dot wgmma cannot run (fewer than 4 warps, a shape or type it lacks) runs on mma.sync, as Triton's
        // MMA v2 fallback does, rather than on FMAs: 60x faster for tutorial 03's 2-warp configs.
        MmaKind::Wgmma => DistributedLayout::Nvmma(wgmma_layout(f, o, ctas).or_else(|| mma_sync_layout(f, o))?),
        MmaKind::Tcgen05 if let Ok(l) = super::tcgen05::accumulator_layout(f, o) => return Some(l),
        MmaKind::MmaSync | MmaKind::Tcgen05 => DistributedLayout::Nvmma(mma_sync_layout(f, o)?),
    };
    from_spec(spec, &shape).ok()
}

/// Whether `v` comes straight from memory (a load, through layout conversions): such an operand is staged in
/// shared memory rather than kept in registers.
pub(crate) fn loaded(f: &Func, mut v: ValueId) -> bool {
    loop {
        let ValueDef::Result(o, _) = f.value(v).def else { return false };
        match f.op(o).op {
            Op::Load { .. } | Op::LocalLoad | Op::DescLoad => return true,
            Op::ConvertLayout => v = f.op(o).operands[0],
            _ => return false,
        }
    }
}

/// Rewrites every `dot` whose accumulator has an MMA v3 layout into `local_alloc`s of its operands and a
/// `warpgroup_dot`. Returns whether anything changed.
pub fn stage_operands(f: &mut Func) -> Result<bool, super::AssignError> {
    let mut changed = false;
    let mut hoisted = Hoisted::new();
    for o in f.all_ops() {
        let d = f.op(o).clone();
        let Op::Dot { precision, max_num_imprecise_acc } = d.op else { continue };
        let acc_layout = f.ty(d.results[0]).layout().and_then(|l| l.spec.clone());
        let Some(AnyLayout::Distributed(DistributedLayout::Nvmma(m))) = acc_layout else { continue };
        if !m.is_hopper() {
            continue;
        }
        let mut staged = [d.operands[0], d.operands[1]];
        // An A computed in registers (attention's P) stays there: wgmma reads it from registers in the
        // dot-operand layout of the accumulator. A 16-bit A is a register permutation away from an MMA v3 result;
        // an 8-bit one (fp8 attention's P, k_width 4) is a warp shuffle away, which codegen does four bytes to a
        // word (one shuffle, one select and one byte permute per register of A, as Triton does). Staging it in
        // shared memory instead costs a byte store per element and two CTA barriers per dot (tutorial 06, fp8,
        // head dim 128: 0.85-0.90x of Triton staged).
        let a_elem = f.ty(d.operands[0]).elem().and_then(Elem::scalar);
        let a_bits = a_elem.map_or(0, |e| e.bits());
        let a_in_registers = matches!(a_bits, 8 | 16) && !loaded(f, d.operands[0]);
        if a_in_registers {
            let spec = DistributedLayout::DotOperand(tessel_layouts::DotOperandLayout {
                operand_index: 0,
                parent: Box::new(DistributedLayout::Nvmma(m.clone())),
                k_width: 32 / a_bits,
            });
            let layout = from_spec(spec, f.ty(d.operands[0]).shape())?;
            staged[0] = convert_before(f, o, d.operands[0], layout);
        }
        for (i, slot) in staged.iter_mut().enumerate() {
            if i == 0 && a_in_registers {
                continue;
            }
            *slot = stage_operand(f, o, *slot, i == 1, &mut hoisted)?;
        }
        let data = f.op_mut(o);
        data.op = Op::WarpGroupDot { precision, max_num_imprecise_acc, is_async: false };
        data.operands[0] = staged[0];
        data.operands[1] = staged[1];
        changed = true;
    }
    Ok(changed)
}
