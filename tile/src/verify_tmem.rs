//! Typing rules of the tensor-memory ops (Blackwell): `tmem_alloc`, `tmem_load`, `tmem_store`, `tcgen05_mma`,
//! `tcgen05_commit`, `tcgen05_copy` and `tcgen05_mma_scaled`, with the rules the hardware imposes: a
//! tensor-memory buffer is 2-D and laid out by a `TensorMemoryLayout` (block M 64 or 128, block N a power of two
//! ≤ 256) or, for block scales, by a `TensorMemoryScalesLayout`; a tensor moved in or out of it is in one of the
//! access register layouts of that layout over 4 or 8 warps; `tcgen05_mma` multiplies operands of one dense kind
//! ([`crate::tcgen05_kind`]: f16/bf16, tf32, fp8 into f32, i8 into i32; A in shared or, for kind::f16, tensor
//! memory, B in NVMMA shared memory) into an accumulator in tensor memory. The copy and the
//! block-scaled MMA have their rules, and the instructions they lower to, in [`crate::tcgen05_copy`] and
//! [`crate::mma_scaled`]; what the types are, [`crate::tmem_types`]. [`crate::verify`]'s table hands these ops
//! here, before the shared-memory rules.

use tessel_layouts::{AnyLayout, SharedLayout};

use crate::ir::Func;
use crate::ops::Op;
use crate::target::Target;
use crate::tcgen05_kind::Tcgen05Kind;
use crate::tmem_types::{
    access_of, check_barrier, check_barriers, check_buffer, check_pred, columns, index_type, instr_shape, layout_name,
    slice_layout, tmem_parts,
};
use crate::types::{Elem, Type};
use crate::verify_checks::{Violation, counts};

/// A tensor moved to or from the buffer `mem` has its shape, element type and, when it has a layout, the
/// buffer's 32x32b register layout over the kernel's warps.
fn check_moved(f: &Func, t: &Type, mem: &Type) -> Result<(), String> {
    let (shape, elem, _) = mem.memdesc().ok_or_else(|| format!("needs a tensor-memory memdesc, got {mem}"))?;
    if shape.len() != 2 {
        return Err(format!("tensor memory moves to and from registers as 2-D buffers; index {mem} first"));
    }
    if !t.is_tensor() || t.shape() != shape || t.elem() != Some(Elem::Scalar(elem)) {
        return Err(format!("the tensor {t} does not have the shape and element type of the buffer {mem}"));
    }
    let Some(have) = t.layout() else { return Ok(()) };
    let warps = f.config.num_warps;
    if warps != 4 && warps != 8 {
        return Err(format!("tensor-memory loads and stores need 4 or 8 warps, the kernel has {warps}"));
    }
    if access_of(&have.linear, mem, warps).is_none() {
        return Err(format!(
            "the tensor's layout must be a register layout of {} over {warps} warps (`get_tmem_reg_layout` with \
             instr_variant 32x32b, 32x32b_splitn, 16x64b, 16x128b or 16x256b), got {}",
            layout_name(mem),
            crate::types::linear_spelling(&have.linear)
        ));
    }
    Ok(())
}

/// `memdesc_index mem, i` of a `[buffers, M, N]` tensor-memory buffer: buffer i, `[M, N]` in the same
/// `TensorMemoryLayout`, [`columns`] of the view on.
pub(crate) fn check_index(mem: &Type, view: &Type) -> Result<(), String> {
    check_buffer(mem)?;
    let want = index_type(mem)?;
    if *view != want {
        return Err(format!("{view} is not one buffer of {mem} (that is {want})"));
    }
    Ok(())
}

/// `memdesc_reinterpret` of tensor memory: the same cells as elements of another type, shape or layout (S in
/// f32 reread as P in f16, or as single f32 columns). The view is a buffer of its own within the columns of the
/// one it reinterprets.
pub fn check_reinterpret(mem: &Type, view: &Type) -> Result<(), String> {
    tmem_parts(mem)?;
    tmem_parts(view)?;
    check_buffer(mem)?;
    check_buffer(view)?;
    let (have, want) = (columns(mem), columns(view));
    if want > have {
        return Err(format!("{view} takes {want} tensor-memory columns, more than the {have} of {mem}"));
    }
    Ok(())
}

/// `memdesc_slice {dim = 1, start}` of a tensor-memory buffer: the layout [`slice_layout`] gives.
pub(crate) fn check_slice(op: &Op, mem: &Type, view: &Type) -> Result<(), String> {
    let Op::MemDescSlice { dim: 1, start } = op else {
        return Err(format!("tensor memory has no {} view (only slices along dim 1)", op.name()));
    };
    let (want, _) = slice_layout(mem, *start, view.shape().get(1).copied().unwrap_or(0))?;
    match view.memdesc() {
        Some((shape, elem, l))
            if shape[0] == mem.shape()[0] && Some(elem) == mem.memdesc().map(|m| m.1) && *l == *want =>
        {
            Ok(())
        }
        _ => Err(format!("{view} is not the slice of {mem} from column {start}")),
    }
}

/// The rules for `op` of `f` with operand types `ins` and result types `outs`.
pub(crate) fn types(f: &Func, op: &Op, ins: &[&Type], outs: &[&Type]) -> Result<(), Violation> {
    if let Op::TmemAlloc | Op::TmemLoad | Op::TmemStore | Op::Tcgen05Commit { .. } = op {
        let (n_in, n_out) = match op {
            Op::TmemAlloc => (0..=1, 1),
            Op::TmemLoad => (1..=1, 1),
            Op::TmemStore => (2..=2, 0),
            _ => (1..=2, 0),
        };
        counts(ins, outs, n_in, n_out)?;
    }
    rules(f, op, ins, outs).map_err(Violation::Rule)
}

fn rules(f: &Func, op: &Op, ins: &[&Type], outs: &[&Type]) -> Result<(), String> {
    match op {
        Op::TmemAlloc => {
            check_buffer(outs[0])?;
            match ins.first() {
                Some(t) => check_moved(f, t, outs[0]),
                None => Ok(()),
            }
        }
        Op::TmemLoad => {
            check_buffer(ins[0])?;
            check_moved(f, outs[0], ins[0])
        }
        Op::TmemStore => {
            check_buffer(ins[1])?;
            check_moved(f, ins[0], ins[1])
        }
        Op::Tcgen05Mma => {
            if !outs.is_empty() {
                return Err("tcgen05_mma has no results".into());
            }
            check_mma(ins)
        }
        Op::Tcgen05Commit { multicast } => {
            check_barrier(ins[0])?;
            let n = f.config.num_ctas;
            if *multicast != 0 && (*multicast & 1 == 0 || (n < 16 && *multicast >> n != 0)) {
                return Err(format!(
                    "the multicast set {multicast:#b} of `tcgen05_commit` must hold the issuing CTA (bit 0) and \
                     only CTAs of the cluster of {n}"
                ));
            }
            match ins.get(1) {
                Some(p) => check_pred(p, "pred"),
                None => Ok(()),
            }
        }
        Op::Tcgen05Copy => {
            if ins.len() != 2 || !outs.is_empty() {
                return Err(format!("expects a source and a destination and no results; got {} operands", ins.len()));
            }
            check_buffer(ins[1])?;
            crate::tcgen05_copy::plan(ins[0], ins[1]).map(|_| ())
        }
        Op::Tcgen05MmaScaled { a_format, b_format } => {
            if !outs.is_empty() {
                return Err("tcgen05_mma_scaled has no results".into());
            }
            crate::mma_scaled::plan(ins, *a_format, *b_format).map(|_| ())
        }
        _ => unreachable!("not a tensor-memory op: {}", op.name()),
    }
}

/// `tcgen05_mma`'s operands: `a, b, acc, use_acc, pred, (barrier, predicate)...` (see [`mma_operands`]).
pub fn check_mma(ins: &[&Type]) -> Result<(), String> {
    if ins.len() < 5 || (ins.len() - 5) % 2 != 0 {
        return Err(format!(
            "expects a, b, acc, use_acc, pred and (barrier, predicate) pairs; got {} operands",
            ins.len()
        ));
    }
    check_pred(ins[3], "use_acc")?;
    check_pred(ins[4], "pred")?;
    check_barriers(&ins[5..])?;
    mma_operands(ins[0], ins[1], ins[2])
}

/// A dense `tcgen05.mma`'s operands: `a` `[M, K]` in NVMMA shared memory (or tensor memory, kind::f16), `b`
/// `[K, N]` in NVMMA shared memory, `acc` `[M, N]` in tensor memory, of types one kind multiplies
/// ([`Tcgen05Kind::of`]: f16/bf16, f32 as tf32, fp8 into f32; i8 into i32): M 64 (one block of block M 64) or a
/// multiple of 128 (blocks of block M 128), each MMA's N ([`instr_shape`]) a multiple of the kind's N step up
/// to 256, K a multiple of the kind's K step (32 bytes).
fn mma_operands(a: &Type, b: &Type, acc: &Type) -> Result<(), String> {
    check_buffer(acc)?;
    let (c, c_elem, c_layout) = tmem_parts(acc)?;
    let nvmma = |t: &Type, what: &str| -> Result<(), String> {
        match t.memdesc() {
            Some((_, _, l)) if matches!(l.spec, Some(AnyLayout::Shared(SharedLayout::Nvmma(_)))) => Ok(()),
            _ => Err(format!("operand {what} in shared memory must be laid out by an NVMMASharedLayout, got {t}")),
        }
    };
    let Some((a_shape, a_elem, _)) = a.memdesc() else {
        return Err(format!("operand A must be a shared- or tensor-memory memdesc, got {a}"));
    };
    if a.is_tmem() {
        check_buffer(a)?;
    } else {
        nvmma(a, "A")?;
    }
    let Some((b_shape, b_elem, _)) = b.memdesc() else {
        return Err(format!("operand B must be a shared-memory memdesc, got {b}"));
    };
    if b.is_tmem() {
        return Err(format!("operand B must be in shared memory, got {b}"));
    }
    nvmma(b, "B")?;
    if a_shape.len() != 2 || b_shape.len() != 2 || a_shape[1] != b_shape[0] || c != [a_shape[0], b_shape[1]] {
        return Err(format!("shapes do not form a matrix product: {a} x {b} -> {acc}"));
    }
    let kind = Tcgen05Kind::of(a_elem, b_elem, c_elem)?;
    if a.is_tmem() && !kind.a_in_tmem_ok() {
        return Err(format!("operand A in tensor memory is read by kind::f16 only, not kind::{}", kind.name()));
    }
    let [m, n, k] = [a_shape[0], b_shape[1], a_shape[1]];
    let [im, in_] = instr_shape(c_layout, m, n);
    if m != 64 && m % 128 != 0 {
        return Err(format!("M must be 64 or a multiple of 128, got {m}"));
    }
    if c_layout.block[0] != m.min(128) {
        return Err(format!(
            "the accumulator's TensorMemoryLayout must have block M = {} for M = {m}, has {} (block M 64 holds \
             one block only)",
            m.min(128),
            c_layout.block[0]
        ));
    }
    let n_step = kind.n_step(im);
    if in_ % n_step != 0 || !(n_step..=256).contains(&in_) || n % in_ != 0 {
        return Err(format!(
            "each MMA's N (the accumulator's block N, at most N) must be a multiple of {n_step} in {n_step}..=256 \
             for M = {im}, got {in_} of N = {n}"
        ));
    }
    let k_step = kind.k_step(a_elem);
    if k % k_step != 0 {
        return Err(format!("K must be a multiple of {k_step} (kind::{}), got {k}", kind.name()));
    }
    Ok(())
}

/// The ops this module types: tensor memory and the tcgen05 ops.
pub fn is_tmem_op(op: &Op) -> bool {
    matches!(
        op,
        Op::TmemAlloc
            | Op::TmemLoad
            | Op::TmemStore
            | Op::Tcgen05Mma
            | Op::Tcgen05Commit { .. }
            | Op::Tcgen05Copy
            | Op::Tcgen05MmaScaled { .. }
    )
}

/// Tensor memory and tcgen05 exist on sm_100a only, in at most 512 columns: the first tensor-memory op of a
/// kernel for another target, or the allocation past the budget ([`crate::tmem::plan`]), with the message to
/// report at its location. Cluster launch control's ops ([`crate::verify_clc::check_target`]) and TMA gather and
/// scatter ([`crate::tma_gather::check_target`]) are checked first, so the pipeline's one target check covers all.
pub fn check_target(f: &Func) -> Result<(), (crate::ir::OpId, String)> {
    if f.target == Target::Sm100a {
        crate::cluster::cta_group(f)?;
        return crate::tmem::plan(f).map(|_| ());
    }
    below_sm100a(f, f.target)
}

/// Whether `f` uses what only sm_100a (Blackwell) has, whatever target it names: tensor memory, tcgen05, cluster
/// launch control, TMA gather or scatter. The tile IR is the same for every target, so the interpreter, which
/// needs none, runs such a kernel when it is elaborated for sm_100a.
pub fn needs_sm100a(f: &Func) -> bool {
    below_sm100a(f, Target::Sm90a).is_err()
}

/// The first op of `f` a kernel for `target` (below sm_100a) cannot have, with the message.
fn below_sm100a(f: &Func, target: Target) -> Result<(), (crate::ir::OpId, String)> {
    crate::verify_clc::check_target(f, target)?;
    crate::tma_gather::check_target(f, target)?;
    for o in f.all_ops() {
        let op = &f.op(o).op;
        if is_tmem_op(op) {
            let what = match op {
                Op::TmemAlloc => "tensor memory (`allocate_tensor_memory`)",
                Op::Tcgen05Mma => "`tcgen05_mma`",
                Op::Tcgen05Commit { .. } => "`tcgen05_commit`",
                Op::Tcgen05Copy => "`tcgen05_copy`",
                Op::Tcgen05MmaScaled { .. } => "`tcgen05_mma_scaled`",
                _ => "tensor memory",
            };
            return Err((o, format!("{what} needs sm_100a (Blackwell); this kernel compiles for {target}")));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    fn verify_err(text: &str) -> String {
        let f = crate::parse::parse_func(text).unwrap();
        crate::verify::verify(&f).unwrap_err().to_string()
    }

    #[test]
    fn a_tensor_memory_load_must_be_in_an_access_layout() {
        let err = verify_err(
            "func @k() attributes {target = sm_100a, num_warps = 4} {
  %t = tmem_alloc : memdesc<128x64xf32, TensorMemoryLayout((128,64), 1)>
  %x = tmem_load %t : tensor<128x64xf32, BlockedLayout([1,8],[4,8],[4,1],[1,0])>
  return
}",
        );
        assert!(err.contains("must be a register layout of TensorMemoryLayout((128,64), 1) over 4 warps"), "{err}");
    }

    #[test]
    fn mma_shapes_and_types_follow_the_instruction() {
        let mma = |a: &str, b: &str, acc: &str| {
            format!(
                "func @k() attributes {{target = sm_100a, num_warps = 4}} {{
  %a = local_alloc : memdesc<{a}, NVMMASharedLayout(64, 16)>
  %b = local_alloc : memdesc<{b}, NVMMASharedLayout(128, 16)>
  %acc = tmem_alloc : memdesc<{acc}>
  %t = constant {{value = 1}} : i1
  tcgen05_mma %a, %b, %acc, %t, %t
  return
}}"
            )
        };
        let err = verify_err(&mma("128x24xf16", "24x64xf16", "128x64xf32, TensorMemoryLayout((128,64), 1)"));
        assert!(err.contains("K must be a multiple of 16 (kind::f16), got 24"), "{err}");
        let err = verify_err(&mma("128x32xf16", "32x64xf16", "128x64xf16, TensorMemoryLayout((128,64), 1)"));
        assert!(err.contains("f16 x f16 -> f16: a dense tcgen05.mma multiplies"), "{err}");
        let err = verify_err(&mma("128x32xf16", "32x64xf16", "128x64xf32, TensorMemoryLayout((64,64), 1)"));
        assert!(err.contains("must have block M = 128 for M = 128, has 64"), "{err}");
        let ok = mma("128x32xf16", "32x64xf16", "128x64xf32, TensorMemoryLayout((128,64), 1)");
        crate::verify::verify(&crate::parse::parse_func(&ok).unwrap()).unwrap();
        // M 64 in one block of block M 64; M 256 as two blocks of 128; N 64 as two MMAs of the block's 32.
        for (a, b, acc) in [
            ("64x32xf16", "32x64xf16", "64x64xf32, TensorMemoryLayout((64,64), 1)"),
            ("256x32xf16", "32x64xf16", "256x64xf32, TensorMemoryLayout((128,64), 1)"),
            ("128x32xf16", "32x64xf16", "128x64xf32, TensorMemoryLayout((128,32), 1)"),
        ] {
            crate::verify::verify(&crate::parse::parse_func(&mma(a, b, acc)).unwrap()).unwrap();
        }
        let err = verify_err(&mma("128x32xf16", "32x64xf16", "128x64xf32, TensorMemoryLayout((64,64), 1)"));
        assert!(err.contains("block M 64 holds one block only"), "{err}");
    }

    /// The other dense kinds: fp8 (either format, into f32) and i8 (into i32) step K by 32, tf32 (f32) by 8;
    /// kind::i8's N steps by 16 even at M 64; A in tensor memory is kind::f16's only.
    #[test]
    fn mma_kinds_beyond_f16_follow_their_steps() {
        let mma = |a: &str, b: &str, acc: &str| {
            format!(
                "func @k() attributes {{target = sm_100a, num_warps = 4}} {{
  %a = local_alloc : memdesc<{a}, NVMMASharedLayout(64, 8)>
  %b = local_alloc : memdesc<{b}, NVMMASharedLayout(64, 8, transposed=True)>
  %acc = tmem_alloc : memdesc<{acc}>
  %t = constant {{value = 1}} : i1
  tcgen05_mma %a, %b, %acc, %t, %t
  return
}}"
            )
        };
        for (a, b, acc) in [
            ("128x64xf8e4m3", "64x64xf8e4m3", "128x64xf32, TensorMemoryLayout((128,64), 1)"),
            ("128x64xf8e5m2", "64x64xf8e5m2", "128x64xf32, TensorMemoryLayout((128,64), 1)"),
            ("128x64xi8", "64x64xi8", "128x64xi32, TensorMemoryLayout((128,64), 1)"),
            ("64x64xi8", "64x32xi8", "64x32xi32, TensorMemoryLayout((64,32), 1)"),
        ] {
            crate::verify::verify(&crate::parse::parse_func(&mma(a, b, acc)).unwrap()).unwrap();
        }
        let tf32 = mma("128x16xf32", "16x64xf32", "128x64xf32, TensorMemoryLayout((128,64), 1)")
            .replace("NVMMASharedLayout(64, 8", "NVMMASharedLayout(64, 32");
        crate::verify::verify(&crate::parse::parse_func(&tf32).unwrap()).unwrap();
        let err = verify_err(&mma("128x48xf8e4m3", "48x64xf8e4m3", "128x64xf32, TensorMemoryLayout((128,64), 1)"));
        assert!(err.contains("K must be a multiple of 32 (kind::f8f6f4), got 48"), "{err}");
        let err = verify_err(&mma("128x64xi8", "64x64xi8", "128x64xf32, TensorMemoryLayout((128,64), 1)"));
        assert!(err.contains("i8 x i8 -> f32"), "{err}");
        let err = verify_err(&mma("64x64xi8", "64x8xi8", "64x8xi32, TensorMemoryLayout((64,8), 1)"));
        assert!(err.contains("a multiple of 16 in 16..=256 for M = 64"), "{err}");
    }

    #[test]
    fn buffers_index_and_reinterpret_within_their_columns() {
        let f = |body: &str| {
            format!(
                "func @k() attributes {{target = sm_100a, num_warps = 4}} {{
  %t = tmem_alloc : memdesc<2x128x64xf32, TensorMemoryLayout((128,64), 1)>
  %i = constant {{value = 1}} : i32
{body}
  return
}}"
            )
        };
        let ok = f("  %b = memdesc_index %t, %i : memdesc<128x64xf32, TensorMemoryLayout((128,64), 1)>
  %p = memdesc_reinterpret %b : memdesc<128x64xf16, TensorMemoryLayout((128,64), 2)>
  %q = memdesc_reinterpret %b : memdesc<128x128xf16, TensorMemoryLayout((128,128), 1)>
  %s = memdesc_reinterpret %b : memdesc<128x2xf32, TensorMemoryLayout((128,2), 1)>");
        crate::verify::verify(&crate::parse::parse_func(&ok).unwrap()).unwrap();
        let err = verify_err(&f("  %b = memdesc_index %t, %i : memdesc<128x64xf32, TensorMemoryLayout((64,64), 1)>"));
        assert!(err.contains("is not one buffer of"), "{err}");
        let err = verify_err(&f("  %b = memdesc_index %t, %i : memdesc<128x64xf32, TensorMemoryLayout((128,64), 1)>
  %p = memdesc_reinterpret %b : memdesc<128x128xf32, TensorMemoryLayout((128,128), 1)>"));
        assert!(err.contains("takes 128 tensor-memory columns, more than the 64 of"), "{err}");
    }
}
