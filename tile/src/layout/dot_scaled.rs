//! Auto mode's `tl.dot_scaled` (`dot_scaled`): on sm_100a, the block-scaled `tcgen05.mma` where it takes the
//! dot; elsewhere the dot of the operands the prelude upcast, as before.
//!
//! The decision ([`why_not`]) is the block-scaled MMA's own rule ([`crate::mma_scaled::plan`]) applied to the
//! operands as the lowering would place them: A and B staged K-major in NVMMA shared memory, packed as they
//! come (fp8, or e2m1 two per byte), the accumulator in a `TensorMemoryLayout((128, min(N, 256)), 1)` buffer
//! and the scales in `TensorMemoryScalesLayout` buffers (copied by `tcgen05.cp` from shared memory, where the
//! threads store them in the order the copy reads: [`crate::tcgen05_copy::scales_source`]; the copy runs in
//! order before the MMA, with no wait between), plus what auto mode's tcgen05
//! dots need besides (4 or 8 warps, the structured ops around the dot, at most 512 columns). [`fall_back`]
//! turns every other `dot_scaled` into `dot a_up, b_up, acc` (the prelude's upcast operands, bf16) and, on
//! sm_100a, keeps the reason on the function ([`crate::Func::notes`]), which codegen writes into the PTX
//! (`// dot_scaled, not block_scale: ...`). What stays is lowered with the dense dots
//! (`tcgen05::lower_dots`), `stage` giving its operands and its MMA.

use std::sync::Arc;

use tessel_layouts::{AnyLayout, TensorMemoryScalesLayout};

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
    for t in [&sa_t, &sb_t] {
        crate::tcgen05_copy::plan(&crate::tcgen05_copy::scales_source(t)?, t)?;
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
/// NVMMA shared memory, the scales in tensor memory (stored to shared memory in the copy's order, then
/// `tcgen05_copy`). Returns the MMA and its operands A, B, A's scales, B's scales.
pub(super) fn stage(f: &mut Func, o: OpId, hoisted: &mut Hoisted) -> Result<(Op, [ValueId; 4]), super::AssignError> {
    let d = f.op(o).clone();
    let Op::DotScaled { a_format, b_format } = d.op else { unreachable!("not a dot_scaled") };
    let a = stage_operand(f, o, d.operands[0], false, hoisted)?;
    let b = stage_operand(f, o, d.operands[2], true, hoisted)?;
    // Both scales are stored before either copy issues: one barrier (and proxy fence) publishes both.
    let mut staged = Vec::new();
    for &v in &[d.operands[1], d.operands[3]] {
        let t = f.ty(v).clone();
        let elem = t.elem().and_then(|e| e.scalar()).ok_or(super::AssignError::NotATensor(v))?;
        let no_fit = |_| super::AssignError::NoFit("dot_scaled");
        let mem = scales_type(t.shape(), elem).map_err(no_fit)?;
        let src = crate::tcgen05_copy::scales_source(&mem).map_err(no_fit)?;
        staged.push((crate::ir::Cursor { f, anchor: o }.op(Op::LocalAlloc, &[v], src), mem));
    }
    let mut scales = [a, b];
    for (i, (src, mem)) in staged.into_iter().enumerate() {
        let mut at = crate::ir::Cursor { f, anchor: o };
        scales[i] = at.op(Op::TmemAlloc, &[], mem);
        at.insert(Op::Tcgen05Copy, &[src, scales[i]], vec![]);
    }
    Ok((Op::Tcgen05MmaScaled { a_format, b_format }, [a, b, scales[0], scales[1]]))
}

/// Scales TMA-loaded as a block and unpacked by `reshape`s and `permute`s (tutorial 10's 5-D blocks) can reach
/// tensor memory by `tcgen05.cp` straight from the TMA buffer when that buffer is unswizzled, which a block of 8
/// rows or more is not by default (`NVMMASharedLayout.get_default_for`: nvfp4's scale blocks). So a descriptor
/// all of whose loads are unpacked into buffers only `tcgen05_copy` reads gets the unswizzled NVMMA layout as its
/// block layout (its `make_tensor_desc`'s `layout`, which the tensor map is encoded with), as Triton chooses a
/// descriptor's layout from its uses. Whether the copies then read the TMA buffer is the pipeliner's to decide
/// (`sched::staging`). Runs after the dots are lowered and dead code is gone (the upcast operands' ops read the
/// scales too until then).
pub fn unswizzle_scale_descs(f: &mut Func) {
    if f.attrs.gluon || f.target != Target::Sm100a {
        return;
    }
    let ops = f.all_ops();
    let users = |f: &Func, x: ValueId| -> Vec<OpId> {
        ops.iter().copied().filter(|&u| f.op(u).operands.contains(&x)).collect()
    };
    // Whether loaded `x`, through single-use reshapes and permutes, is staged in a buffer only tcgen05_copy reads.
    let copied = |f: &Func, mut x: ValueId| loop {
        match users(f, x)[..] {
            [u] if matches!(f.op(u).op, Op::Reshape { .. } | Op::Permute { .. }) => x = f.op(u).results[0],
            [u] if f.op(u).op == Op::LocalAlloc => {
                let readers = users(f, f.op(u).results[0]);
                break !readers.is_empty()
                    && readers
                        .iter()
                        .all(|&r| f.op(r).op == Op::Tcgen05Copy && f.op(r).operands[0] == f.op(u).results[0]);
            }
            _ => break false,
        }
    };
    for &maker in &ops {
        let Op::MakeTensorDesc { layout: None, .. } = f.op(maker).op else { continue };
        let desc = f.op(maker).results[0];
        let Some((elem, block)) = crate::tma::desc_block(f.ty(desc)) else { continue };
        let default = tessel_layouts::NvmmaSharedLayout::default_for(block, elem.bits());
        let plain = tessel_layouts::NvmmaSharedLayout { swizzle_byte_width: 0, ..default.clone() };
        let loads = users(f, desc);
        let all_copied = !loads.is_empty()
            && loads
                .iter()
                .all(|&u| f.op(u).op == Op::DescLoad && f.op(u).operands[0] == desc && copied(f, f.op(u).results[0]));
        if default.swizzle_byte_width != 0 && all_copied && crate::tma::block_in(elem, block, Some(&plain)).is_ok() {
            if let Op::MakeTensorDesc { layout, .. } = &mut f.op_mut(maker).op {
                *layout = Some(plain);
            }
        }
    }
}
