//! Auto mode's `tl.dot_scaled` (`dot_scaled`): on sm_100a, the block-scaled `tcgen05.mma` where it takes the
//! dot; elsewhere the dot of the operands the prelude upcast, as before.
//!
//! The decision ([`why_not`]) is the block-scaled MMA's own rule ([`crate::mma_scaled::plan`]) applied to the
//! operands as the lowering would place them: A and B staged K-major in NVMMA shared memory, packed as they
//! come (fp8, or e2m1 two per byte), the accumulator in a `TensorMemoryLayout((128, min(N, 256)), 1)` buffer
//! and the scales in `TensorMemoryScalesLayout` buffers (stored from registers), plus what auto mode's tcgen05
//! dots need besides (4 or 8 warps, the structured ops around the dot, at most 512 columns). [`fall_back`]
//! turns every other `dot_scaled` into `dot a_up, b_up, acc` (the prelude's upcast operands, bf16) and, on
//! sm_100a, keeps the reason on the function ([`crate::Func::notes`]), which codegen writes into the PTX
//! (`// dot_scaled, not block_scale: ...`). What stays is lowered with the dense dots
//! (`tcgen05::lower_dots`), `stage` giving its operands and its MMA.

use std::sync::Arc;

use tessel_layouts::{AnyLayout, TensorMemoryScalesLayout, TmemAccess};

use crate::ir::{Func, OpId, ValueId};
use crate::layout::staging::{Hoisted, operand_shared_layout, stage_operand};
use crate::ops::{InputPrecision, MxFormat, Op};
use crate::target::Target;
use crate::types::{Layout, ScalarType, Type};

/// The tensor-memory type of scales `[rows, groups]` of `elem`.
fn scales_type(shape: &[u32], elem: ScalarType) -> Result<Type, String> {
    let any = AnyLayout::TensorMemoryScales(TensorMemoryScalesLayout { cta_split: [1, 1], broadcast: 1 });
    let linear = any.to_linear(shape).map_err(|e| e.to_string())?;
    Ok(Type::MemDesc {
        shape: crate::types::Shape::from_slice(shape),
        elem,
        layout: Arc::new(Layout { spec: Some(any), linear }),
    })
}

/// The register layout `tcgen05.st.32x32b` stores scales of `shape` from, over `num_warps` warps.
fn scales_reg_layout(shape: &[u32], num_warps: u32) -> Result<Arc<Layout>, String> {
    let linear = TensorMemoryScalesLayout { cta_split: [1, 1], broadcast: 1 }
        .reg_layout(shape, TmemAccess::B32x32, num_warps)
        .map_err(|e| e.to_string())?;
    Ok(Arc::new(Layout { spec: None, linear }))
}

/// The formats of `dot_scaled` op `o`.
fn formats(f: &Func, o: OpId) -> (MxFormat, MxFormat) {
    match f.op(o).op {
        Op::DotScaled { a_format, b_format } => (a_format, b_format),
        ref other => unreachable!("not a dot_scaled: {}", other.name()),
    }
}

/// Why `dot_scaled` op `o` cannot run on the block-scaled `tcgen05.mma`, or `None` when it can.
pub fn why_not(f: &Func, o: OpId) -> Option<String> {
    check(f, o).err()
}

fn check(f: &Func, o: OpId) -> Result<(), String> {
    if f.target != Target::Sm100a {
        return Err(format!("the block-scaled tcgen05.mma needs sm_100a, the kernel compiles for {}", f.target));
    }
    let warps = f.config.num_warps;
    if warps != 4 && warps != 8 {
        return Err(format!("{warps} warps (tensor-memory loads need 4 or 8)"));
    }
    let d = f.op(o);
    let (a_format, b_format) = formats(f, o);
    if (a_format == MxFormat::E2m1) != (b_format == MxFormat::E2m1) {
        return Err("an e2m1 operand beside an 8-bit one (kind::mxf8f6f4) is read padded in shared memory \
                    (fp4_padded), which auto mode does not stage yet"
            .into());
    }
    let ty = |i: usize| f.ty(d.operands[i]);
    let (a, sa, b, sb) = (ty(0), ty(1), ty(2), ty(3));
    let scalar = |t: &Type| t.elem().and_then(|e| e.scalar()).expect("a verified dot_scaled");
    let (m, n) = (a.shape()[0], b.shape()[1]);
    let staged = |t: &Type, is_b: bool| -> Result<Type, String> {
        let l = operand_shared_layout(t.shape(), scalar(t), is_b, false).map_err(|e| e.to_string())?;
        Ok(Type::MemDesc { shape: crate::types::Shape::from_slice(t.shape()), elem: scalar(t), layout: l })
    };
    let acc = crate::tmem_types::tmem_type(&[m, n], ScalarType::F32, &super::tcgen05_site::tmem_layout(m, n))?;
    let i1 = Type::scalar(ScalarType::I1);
    let (sa_t, sb_t) = (scales_type(sa.shape(), scalar(sa))?, scales_type(sb.shape(), scalar(sb))?);
    let ins = [&staged(a, false)?, &staged(b, true)?, &acc, &sa_t, &sb_t, &i1, &i1];
    crate::mma_scaled::plan(&ins, a_format, b_format)?;
    for s in [sa, sb] {
        scales_reg_layout(s.shape(), warps)?;
    }
    let columns = n * m.div_ceil(128) + crate::tmem_types::columns(&sa_t) + crate::tmem_types::columns(&sb_t);
    if columns > 512 {
        return Err(format!("the accumulator and scales take {columns} tensor-memory columns, more than 512"));
    }
    super::tcgen05_site::enclosing_ops(f, o)?;
    Ok(())
}

/// Turns each `dot_scaled` the block-scaled MMA cannot take into the dot of its upcast operands, noting why on
/// the function when it compiles for sm_100a. Returns whether any is left (for the block-scaled MMA).
pub fn fall_back(f: &mut Func) -> bool {
    let mut kept = false;
    for o in f.all_ops() {
        if !matches!(f.op(o).op, Op::DotScaled { .. }) {
            continue;
        }
        let Some(why) = why_not(f, o) else {
            kept = true;
            continue;
        };
        let d = f.op_mut(o);
        d.op = Op::Dot { precision: InputPrecision::Ieee, max_num_imprecise_acc: 0 };
        d.operands = [d.operands[5], d.operands[6], d.operands[4]].into_iter().collect();
        // Only sm_100a has the instruction: elsewhere there is nothing to say.
        if f.target == Target::Sm100a {
            f.notes.push(format!("dot_scaled, not block_scale: {why}"));
        }
    }
    kept
}

/// Stages `dot_scaled` op `o`'s operands where the block-scaled MMA reads them, right before it: A and B in
/// NVMMA shared memory, the scales in tensor memory (stored from registers). Returns the MMA and its operands
/// A, B, A's scales, B's scales.
pub(super) fn stage(f: &mut Func, o: OpId, hoisted: &mut Hoisted) -> Result<(Op, [ValueId; 4]), super::AssignError> {
    let d = f.op(o).clone();
    let Op::DotScaled { a_format, b_format } = d.op else { unreachable!("not a dot_scaled") };
    let a = stage_operand(f, o, d.operands[0], false, hoisted)?;
    let b = stage_operand(f, o, d.operands[2], true, hoisted)?;
    let warps = f.config.num_warps;
    let mut scales = [a, b];
    for (i, &v) in [d.operands[1], d.operands[3]].iter().enumerate() {
        let t = f.ty(v).clone();
        let elem = t.elem().and_then(|e| e.scalar()).ok_or(super::AssignError::NotATensor(v))?;
        let (l, mem) = scales_reg_layout(t.shape(), warps)
            .and_then(|l| Ok((l, scales_type(t.shape(), elem)?)))
            .map_err(|_| super::AssignError::NoFit("dot_scaled"))?;
        let regs = crate::layout::insert::convert_before(f, o, v, l);
        scales[i] = crate::ir::Cursor { f, anchor: o }.op(Op::TmemAlloc, &[regs], mem);
    }
    Ok((Op::Tcgen05MmaScaled { a_format, b_format }, [a, b, scales[0], scales[1]]))
}
