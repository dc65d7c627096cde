//! Typing rules of the shared-memory and asynchronous ops, every op the table calls one
//! ([`Op::is_shared_memory_op`]): `local_alloc`/`load`/`store`/`dealloc`, the `memdesc` views, `warpgroup_dot`
//! and its wait, `async_copy` and its groups, the mbarrier ops, the TMA copies and their wait, the ring release
//! counters; kept beside [`crate::verify`]'s table, which hands them here.

use crate::op_facts::BarrierOperands;
use crate::ops::Op;
use crate::types::{Elem, ScalarType, Type};
use crate::verify_checks::{Violation, counts, pointee, same};

/// The rules for `op` with operand types `ins` and result types `outs`.
pub(crate) fn types(op: &Op, ins: &[&Type], outs: &[&Type]) -> Result<(), Violation> {
    if let Some(rest) = op.facts().barrier {
        return barrier(op, rest, ins, outs);
    }
    match op {
        Op::LocalAlloc | Op::LocalLoad | Op::LocalStore | Op::LocalDealloc => {
            let (mem, value) = match op {
                Op::LocalAlloc => {
                    counts(ins, outs, 0..=1, 1)?;
                    (outs[0], ins.first().copied())
                }
                Op::LocalLoad => {
                    counts(ins, outs, 1..=1, 1)?;
                    (ins[0], Some(outs[0]))
                }
                Op::LocalStore => {
                    counts(ins, outs, 2..=2, 0)?;
                    (ins[1], Some(ins[0]))
                }
                _ => {
                    counts(ins, outs, 1..=1, 0)?;
                    (ins[0], None)
                }
            };
            let Some((shape, elem, _)) = mem.memdesc() else {
                return Err(Violation::Rule(format!("needs a memdesc, got {mem}")));
            };
            match value {
                Some(t) if !t.is_tensor() || t.shape() != shape || t.elem() != Some(Elem::Scalar(elem)) => {
                    Err(Violation::Rule(format!(
                        "the tensor {t} does not have the shape and element type of the buffer {mem}"
                    )))
                }
                _ => Ok(()),
            }
        }
        Op::WarpGroupDot { .. } => {
            counts(ins, outs, 3..=4, 1)?;
            if let Some(u) = ins.get(3)
                && **u != Type::scalar(ScalarType::I1)
            {
                return Err(Violation::Rule(format!("`use_acc` must be an i1 scalar, got {u}")));
            }
            let Some((b, b_elem, _)) = ins[1].memdesc() else {
                return Err(Violation::Rule(format!("operand B must be a memdesc, got {}", ins[1])));
            };
            let (a, a_elem) = match ins[0].memdesc() {
                Some((a, e, _)) => (a, e),
                None if ins[0].is_tensor() => {
                    (ins[0].shape(), ins[0].elem().and_then(Elem::scalar).unwrap_or(ScalarType::I1))
                }
                None => {
                    return Err(Violation::Rule(format!("operand A must be a memdesc or a tensor, got {}", ins[0])));
                }
            };
            let c = ins[2].shape();
            if a.len() != 2 || b.len() != 2 || c.len() != 2 || a[1] != b[0] || c != [a[0], b[1]] {
                return Err(Violation::Rule(format!(
                    "shapes do not form a matrix product: {} x {} -> {}",
                    ins[0], ins[1], ins[2]
                )));
            }
            if a_elem != b_elem {
                return Err(Violation::Rule(format!("operands must have one element type, got {a_elem} and {b_elem}")));
            }
            same(outs[0], ins[2], "result")
        }
        Op::WarpGroupDotWait { .. } => {
            if outs.len() != ins.len() || ins.iter().zip(outs).any(|(a, b)| a != b) {
                return Err(Violation::Rule("results must be the operands' types, one per operand".into()));
            }
            Ok(())
        }
        Op::MemDescReinterpret => {
            counts(ins, outs, 1..=1, 1)?;
            if ins[0].is_tmem() || outs[0].is_tmem() {
                return crate::verify_tmem::check_reinterpret(ins[0], outs[0]).map_err(Violation::Rule);
            }
            let (Some((shape, elem, _)), Some((vshape, velem, _))) = (ins[0].memdesc(), outs[0].memdesc()) else {
                return Err(Violation::Rule("needs a memdesc operand and result".into()));
            };
            let numel = |s: &[u32]| s.iter().map(|&d| d as u64).product::<u64>();
            if elem.bits() != velem.bits() || numel(shape) != numel(vshape) {
                return Err(Violation::Rule(format!(
                    "{} is not the bytes of {} (element sizes and counts must match)",
                    outs[0], ins[0]
                )));
            }
            Ok(())
        }
        Op::MemDescPermute { .. } | Op::MemDescReshape | Op::MemDescSlice { .. } => {
            counts(ins, outs, 1..=1, 1)?;
            if ins[0].is_tmem() {
                return crate::verify_tmem::check_slice(op, ins[0], outs[0]).map_err(Violation::Rule);
            }
            crate::layout::shared_views::check(op, ins[0], outs[0]).map_err(|e| Violation::View(Box::new(e)))
        }
        Op::MemDescIndex => {
            counts(ins, outs, 2..=2, 1)?;
            same(ins[1], &Type::scalar(ScalarType::I32), "index")?;
            if ins[0].is_tmem() {
                return crate::verify_tmem::check_index(ins[0], outs[0]).map_err(Violation::Rule);
            }
            let (Some((shape, elem, l)), Some((sub, sub_elem, sub_l))) = (ins[0].memdesc(), outs[0].memdesc()) else {
                return Err(Violation::Rule("needs a memdesc operand and result".into()));
            };
            if shape.len() < 2 || sub != &shape[1..] || elem != sub_elem {
                return Err(Violation::Rule(format!("{} is not one buffer of {}", outs[0], ins[0])));
            }
            // Buffer i must be the i-th block of offsets, laid out as the result says.
            let k = sub_l.linear.in_dim_size_log2("offset") as usize;
            let bases = l.linear.bases("offset");
            let inner_ok = bases[..k.min(bases.len())]
                .iter()
                .zip(sub_l.linear.bases("offset"))
                .all(|(b, s)| b[0] == 0 && b[1..] == s[..]);
            let outer_ok = bases[k.min(bases.len())..].iter().all(|b| b[1..].iter().all(|&x| x == 0));
            if !inner_ok || !outer_ok {
                return Err(Violation::Rule(format!(
                    "the layout of {} does not hold its buffers one after another in the layout of {}",
                    ins[0], outs[0]
                )));
            }
            Ok(())
        }
        Op::AsyncCopy => {
            counts(ins, outs, 2..=3, 1)?;
            same(outs[0], &Type::Token, "result")?;
            let Some((shape, elem, _)) = ins[1].memdesc() else {
                return Err(Violation::Rule(format!("the destination must be a memdesc, got {}", ins[1])));
            };
            if ins[0].shape() != shape || pointee(ins[0]).ok() != Some(elem) {
                return Err(Violation::Rule(format!("pointers {} do not fit the buffer {}", ins[0], ins[1])));
            }
            if let Some(m) = ins.get(2)
                && (m.shape() != shape || m.elem() != Some(Elem::Scalar(ScalarType::I1)))
            {
                return Err(Violation::Rule(format!("the mask {m} must be i1 of the buffer's shape")));
            }
            Ok(())
        }
        Op::AsyncCommitGroup | Op::AsyncWait { .. } => {
            counts(ins, outs, 0..=usize::MAX, 1)?;
            same(outs[0], &Type::Token, "result")?;
            match ins.iter().find(|t| ***t != Type::Token) {
                Some(t) => Err(Violation::Rule(format!("operands must be tokens, got {t}"))),
                None => Ok(()),
            }
        }
        Op::FenceAsyncShared { .. } => counts(ins, outs, 0..=0, 0),
        Op::AsyncCopyMBarrierArrive { .. } => {
            counts(ins, outs, 1..=1, 0)?;
            match ins[0].memdesc() {
                Some((shape, ScalarType::I64, _)) if shape == [1] => Ok(()),
                _ => Err(Violation::Rule(format!("the barrier must be a memdesc<1xi64>, got {}", ins[0]))),
            }
        }
        Op::TmaLoad { .. } | Op::TmaStore => {
            let Some(Type::TensorDesc { elem, block_shape }) = ins.first() else {
                return Err(Violation::Rule("the first operand must be a tensordesc".into()));
            };
            let r = block_shape.len();
            let load = matches!(op, Op::TmaLoad { .. });
            let fixed = if load { 3 } else { 2 };
            counts(ins, outs, fixed + r..=fixed + r + load as usize, 0)?;
            match ins[1].memdesc() {
                Some((shape, e, _)) if shape == block_shape.as_slice() && e == *elem => {}
                _ => {
                    return Err(Violation::Rule(format!(
                        "the buffer must be a memdesc of the block ({}), got {}",
                        ins[0], ins[1]
                    )));
                }
            }
            if load && !matches!(ins[2].memdesc(), Some((shape, ScalarType::I64, _)) if shape == [1]) {
                return Err(Violation::Rule(format!("the barrier must be a memdesc<1xi64>, got {}", ins[2])));
            }
            if let Some(t) = ins[fixed..fixed + r].iter().find(|t| ***t != Type::scalar(ScalarType::I32)) {
                return Err(Violation::Rule(format!("coordinates must be i32 scalars, got {t}")));
            }
            match ins.get(fixed + r) {
                Some(t) if **t != Type::scalar(ScalarType::I1) => {
                    Err(Violation::Rule(format!("the predicate must be an i1, got {t}")))
                }
                _ => Ok(()),
            }
        }
        Op::TmaStoreWait { .. } => counts(ins, outs, 0..=0, 0),
        Op::TmaGather { .. } | Op::TmaScatter => crate::tma_gather::types(op, ins, outs),
        Op::RingCounterInit | Op::RingRelease => {
            let release = matches!(op, Op::RingRelease);
            counts(ins, outs, if release { 3..=usize::MAX } else { 1..=1 }, release as usize)?;
            if !matches!(ins[0].memdesc(), Some((shape, ScalarType::I32, _)) if shape == [1]) {
                return Err(Violation::Rule(format!("the release counter must be a memdesc<1xi32>, got {}", ins[0])));
            }
            if !release {
                return Ok(());
            }
            let i1 = Type::scalar(ScalarType::I1);
            if *ins[1] != i1 || *outs[0] != i1 {
                return Err(Violation::Rule(format!(
                    "the predicate and the result must be i1, got {} and {}",
                    ins[1], outs[0]
                )));
            }
            match ins[2..].iter().find(|t| !t.is_memdesc()) {
                Some(t) => Err(Violation::Rule(format!("the released buffers must be memdescs, got {t}"))),
                None => Ok(()),
            }
        }
        Op::TmaLoadIm2col { rank } => {
            let r = *rank as usize;
            let Some(Type::TensorDesc { elem, block_shape }) = ins.first() else {
                return Err(Violation::Rule("the first operand must be a tensordesc".into()));
            };
            counts(ins, outs, 3 + 2 * r - 2..=3 + 2 * r - 1, 0)?;
            match ins[1].memdesc() {
                Some((shape, e, _)) if shape == block_shape.as_slice() && e == *elem => {}
                _ => {
                    return Err(Violation::Rule(format!(
                        "the buffer must be a memdesc of the block ({}), got {}",
                        ins[0], ins[1]
                    )));
                }
            }
            if !matches!(ins[2].memdesc(), Some((shape, ScalarType::I64, _)) if shape == [1]) {
                return Err(Violation::Rule(format!("the barrier must be a memdesc<1xi64>, got {}", ins[2])));
            }
            if let Some(t) = ins[3..3 + r].iter().find(|t| ***t != Type::scalar(ScalarType::I32)) {
                return Err(Violation::Rule(format!("coordinates must be i32 scalars, got {t}")));
            }
            if let Some(t) = ins[3 + r..3 + 2 * r - 2].iter().find(|t| ***t != Type::scalar(ScalarType::I16)) {
                return Err(Violation::Rule(format!("im2col offsets must be i16 scalars, got {t}")));
            }
            match ins.get(3 + 2 * r - 2) {
                Some(t) if **t != Type::scalar(ScalarType::I1) => {
                    Err(Violation::Rule(format!("the predicate must be an i1, got {t}")))
                }
                _ => Ok(()),
            }
        }
        other => Err(Violation::Rule(format!("`{}` is not a shared-memory op", other.name()))),
    }
}

/// The rule of every op on an mbarrier: the barrier, then what the table says follows it.
fn barrier(op: &Op, rest: BarrierOperands, ins: &[&Type], outs: &[&Type]) -> Result<(), Violation> {
    let n_in = match rest {
        BarrierOperands::None => 1..=1,
        BarrierOperands::Predicate => 1..=2,
        BarrierOperands::Phase => 2..=2,
    };
    counts(ins, outs, n_in, 0)?;
    match ins[0].memdesc() {
        Some((shape, ScalarType::I64, _)) if shape == [1] => {}
        _ => return Err(Violation::Rule(format!("the barrier must be a memdesc<1xi64>, got {}", ins[0]))),
    }
    if let Op::MBarrierInit { count: 0 } | Op::MBarrierArrive { count: 0, .. } = op {
        return Err(Violation::Rule("the arrival count must be at least 1".into()));
    }
    if let Op::MBarrierArrive { cta_mask, .. } = op
        && *cta_mask != 0
        && crate::cluster::barrier_ctas(ins[0]) != 1
    {
        return Err(Violation::Rule(
            "an arrival with a cta_mask reaches each CTA's own barrier; a two-CTA barrier is arrived on through its \
             pair's lead already"
                .into(),
        ));
    }
    match (ins.get(1), rest) {
        (Some(t), BarrierOperands::Phase) if **t != Type::scalar(ScalarType::I32) => {
            Err(Violation::Rule(format!("the phase must be an i32, got {t}")))
        }
        (Some(t), BarrierOperands::Predicate) if **t != Type::scalar(ScalarType::I1) => {
            Err(Violation::Rule(format!("the predicate must be an i1, got {t}")))
        }
        _ => Ok(()),
    }
}
