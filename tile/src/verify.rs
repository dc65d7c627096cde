//! The verifier: structural rules (dominance, terminators, region signatures) and each op's typing rules.
//! Every pass's output is verified in tests; a failure names the op and, where known, its source location.

use std::collections::HashSet;
use std::fmt;

use crate::ir::{Func, Loc, OpId, RegionId, ValueDef, ValueId};
use crate::layout::rules::LayoutMismatch;
use crate::ops::{BinOp, Op, UnOp};
use crate::types::{Elem, ScalarType, Type};
pub use crate::verify_checks::Violation;
use crate::verify_checks::{counts, pointee, same};

/// A rule the function breaks: which check, at which op (its id and name) and source location, when it is at one.
#[derive(Clone, Debug, PartialEq)]
pub struct VerifyError {
    pub op: Option<OpId>,
    /// The op's name (`add`, `local_load`).
    pub name: Option<&'static str>,
    pub loc: Option<Loc>,
    pub check: Check,
}

/// Which check failed, and what it found.
#[derive(Clone, Debug, PartialEq)]
pub enum Check {
    /// A terminator before the end of its region.
    TerminatorNotLast,
    /// A region that does not end with the terminator it needs (`yield`, `condition`, `return`).
    RegionEnd(&'static str),
    /// An operand used where it is not defined: before its definition, or outside its scope.
    Undefined(ValueId),
    /// A `ring_release` result used other than as the predicate of the refill it elects.
    ElectedUse(ValueId),
    /// The op's typing rule.
    Types(Box<Violation>),
    /// A tensor without a layout in layout IR (a kernel argument when there is no op).
    NoLayout(ValueId),
    /// The layouts of an op's operands and results do not fit together.
    Layouts(LayoutMismatch),
}

impl fmt::Display for Check {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Check::TerminatorNotLast => f.write_str("must be the last op of its region"),
            Check::RegionEnd(want) => write!(f, "region must end with `{want}`"),
            Check::Undefined(v) => write!(f, "operand {v} is not defined before this use"),
            Check::ElectedUse(v) => {
                write!(f, "{v}, a ring_release result, may only be the predicate of mbarrier_expect or tma_load")
            }
            Check::Types(v) => write!(f, "{v}"),
            Check::NoLayout(v) => write!(f, "tensor {v} has no layout"),
            Check::Layouts(m) => write!(f, "{m}"),
        }
    }
}

impl fmt::Display for VerifyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.name, &self.check) {
            (Some(name), Check::TerminatorNotLast) => write!(f, "`{name}`: `{name}` {}", self.check),
            (Some(name), check) => write!(f, "`{name}`: {check}"),
            (None, Check::NoLayout(a)) => write!(f, "argument {a} has no layout"),
            (None, check) => write!(f, "{check}"),
        }
    }
}

impl std::error::Error for VerifyError {}

/// Checks `f`; returns the first violation.
pub fn verify(f: &Func) -> Result<(), VerifyError> {
    let mut v = Verifier { f, visible: HashSet::new(), defined: Vec::new() };
    v.region(f.body, Terminator::Return)
}

#[derive(Clone, Copy, PartialEq)]
enum Terminator {
    Return,
    Yield,
    Condition,
}

struct Verifier<'a> {
    f: &'a Func,
    /// The values in scope at the op being checked.
    visible: HashSet<ValueId>,
    /// The values made visible, in order: a region leaving scope takes back those it added (rather than
    /// restoring a copy of the set, which would cost the whole scope per region).
    defined: Vec<ValueId>,
}

impl Verifier<'_> {
    fn define(&mut self, values: &[ValueId]) {
        for &v in values {
            if self.visible.insert(v) {
                self.defined.push(v);
            }
        }
    }

    fn region(&mut self, r: RegionId, term: Terminator) -> Result<(), VerifyError> {
        let region = self.f.region(r);
        let mark = self.defined.len();
        self.define(&region.args);
        let n = region.ops.len();
        for (i, &o) in region.ops.iter().enumerate() {
            let op = &self.f.op(o).op;
            if op.is_terminator() && i + 1 != n {
                return Err(self.err(o, Check::TerminatorNotLast));
            }
            self.op(o)?;
        }
        let last = region.ops.last().map(|&o| &self.f.op(o).op);
        let ok = match term {
            Terminator::Return => matches!(last, Some(Op::Return)),
            Terminator::Yield => matches!(last, Some(Op::Yield)),
            Terminator::Condition => matches!(last, Some(Op::Condition)),
        };
        if !ok {
            let want = match term {
                Terminator::Return => "return",
                Terminator::Yield => "yield",
                Terminator::Condition => "condition",
            };
            return Err(VerifyError { op: None, name: None, loc: None, check: Check::RegionEnd(want) });
        }
        for v in self.defined.drain(mark..) {
            self.visible.remove(&v);
        }
        Ok(())
    }

    fn err(&self, o: OpId, check: Check) -> VerifyError {
        at(self.f, o, check)
    }

    /// A `ring_release` result is true in one thread only: it may predicate the refill it elects (an
    /// `mbarrier_expect` or a `tma_load`, which that thread issues) and nothing else.
    fn elected_uses(&self, o: OpId) -> Result<(), VerifyError> {
        let data = self.f.op(o);
        for (k, &v) in data.operands.iter().enumerate() {
            let ValueDef::Result(p, _) = self.f.value(v).def else { continue };
            if !matches!(self.f.op(p).op, Op::RingRelease) {
                continue;
            }
            let predicate = match data.op {
                Op::MBarrierExpect { .. } => k == 1,
                Op::TmaLoad { .. } => k >= 4 && k + 1 == data.operands.len(),
                _ => false,
            };
            if !predicate {
                return Err(self.err(o, Check::ElectedUse(v)));
            }
        }
        Ok(())
    }

    fn op(&mut self, o: OpId) -> Result<(), VerifyError> {
        let data = self.f.op(o);
        for &v in &data.operands {
            if !self.visible.contains(&v) {
                return Err(self.err(o, Check::Undefined(v)));
            }
        }
        self.types(o).map_err(|m| self.err(o, Check::Types(Box::new(m))))?;
        self.elected_uses(o)?;
        let op = &data.op;
        let regions: Vec<RegionId> = data.regions.to_vec();
        match op {
            Op::While => {
                self.region(regions[0], Terminator::Condition)?;
                self.region(regions[1], Terminator::Yield)?;
            }
            Op::WarpSpecialize(_) => {
                self.region(regions[0], Terminator::Yield)?;
                // Worker partitions run on other warps: they see only their arguments (the captures).
                for &r in &regions[1..] {
                    let saved = std::mem::take(&mut self.visible);
                    let res = self.region(r, Terminator::Yield);
                    self.visible = saved;
                    res?;
                }
            }
            _ => {
                for r in regions {
                    self.region(r, Terminator::Yield)?;
                }
            }
        }
        let f = self.f;
        self.define(&f.op(o).results);
        Ok(())
    }

    /// The typing rule of one op.
    fn types(&self, o: OpId) -> Result<(), Violation> {
        let f = self.f;
        let data = f.op(o);
        let ins: Vec<&Type> = data.operands.iter().map(|&v| f.ty(v)).collect();
        let outs: Vec<&Type> = data.results.iter().map(|&v| f.ty(v)).collect();
        let count = |n_in: std::ops::RangeInclusive<usize>, n_out: usize| counts(&ins, &outs, n_in, n_out);
        let regions = data.regions.len();
        let need_regions = |n: usize| {
            if regions == n { Ok(()) } else { Err(Violation::Rule(format!("expected {n} regions, got {regions}"))) }
        };
        match &data.op {
            op if crate::verify_tmem::is_tmem_op(op) => crate::verify_tmem::types(f, op, &ins, &outs),
            op if crate::verify_clc::is_clc_op(op) => crate::verify_clc::types(op, &ins, &outs),
            Op::MBarrierArrive { cta_mask, .. } if *cta_mask != 0 && u32::from(*cta_mask) >= f.config.num_ctas => {
                Err(Violation::Rule(format!(
                    "the cta_mask {cta_mask:#b} of `mbarrier_arrive` names CTAs past the cluster of {} (it must be \
                     below num_ctas)",
                    f.config.num_ctas
                )))
            }
            op if op.is_shared_memory_op() => crate::verify_smem::types(op, &ins, &outs),
            Op::Constant(_) => {
                count(0..=0, 1)?;
                scalar_elem(outs[0]).map(|_| ())
            }
            Op::ProgramId(axis) | Op::NumPrograms(axis) => {
                count(0..=0, 1)?;
                if *axis > 2 {
                    return Err(Violation::Rule(format!("axis must be 0, 1 or 2, got {axis}")));
                }
                same(outs[0], &Type::scalar(ScalarType::I32), "result")
            }
            Op::Arange { start, end } => {
                count(0..=0, 1)?;
                let n = end - start;
                if n <= 0 || !(n as u32).is_power_of_two() {
                    return Err(Violation::Rule(format!("end - start must be a positive power of two, got {n}")));
                }
                same_but_layout(outs[0], &Type::tensor(&[n as u32], Elem::Scalar(ScalarType::I32)), "result")
            }
            Op::Binary { op, .. } => {
                count(2..=2, 1)?;
                same(ins[0], ins[1], "operands")?;
                same(outs[0], ins[0], "result")?;
                let s = scalar_elem(ins[0])?;
                let int_only = matches!(
                    op,
                    BinOp::And | BinOp::Or | BinOp::Xor | BinOp::Shl | BinOp::Shr | BinOp::UMulHi | BinOp::MulHi
                );
                let float_only =
                    matches!(op, BinOp::DivRn | BinOp::Pow | BinOp::Atan2 | BinOp::Hypot | BinOp::Rhypot | BinOp::Fmod)
                        || op.directed().is_some();
                if int_only && s.is_float() {
                    return Err(Violation::Rule(format!("needs integer operands, got {s}")));
                }
                if float_only && s.is_int() {
                    return Err(Violation::Rule(format!("needs float operands, got {s}")));
                }
                Ok(())
            }
            Op::Unary(op) => {
                count(1..=1, 1)?;
                same(outs[0], ins[0], "result")?;
                let s = scalar_elem(ins[0])?;
                match op {
                    UnOp::Neg | UnOp::Abs => Ok(()),
                    UnOp::Not if s.is_int() => Ok(()),
                    UnOp::Not => Err(Violation::Rule(format!("needs integer operands, got {s}"))),
                    UnOp::Popc | UnOp::Clz | UnOp::Brev if matches!(s.bits(), 32 | 64) && s.is_int() => Ok(()),
                    UnOp::Popc | UnOp::Clz | UnOp::Brev => {
                        Err(Violation::Rule(format!("needs 32- or 64-bit integers, got {s}")))
                    }
                    _ if s.is_float() => Ok(()),
                    _ => Err(Violation::Rule(format!("needs float operands, got {s}"))),
                }
            }
            Op::Cmp(_) => {
                count(2..=2, 1)?;
                same(ins[0], ins[1], "operands")?;
                same(outs[0], &ins[0].with_elem(Elem::Scalar(ScalarType::I1)), "result")
            }
            Op::Select => {
                count(3..=3, 1)?;
                same(ins[0], &ins[1].with_elem(Elem::Scalar(ScalarType::I1)), "condition")?;
                same(ins[1], ins[2], "operands")?;
                same(outs[0], ins[1], "result")
            }
            Op::FmaRound(_) | Op::Norm { .. }
                if !matches!(ins[0].elem(), Some(Elem::Scalar(ScalarType::F32 | ScalarType::F64))) =>
            {
                Err(Violation::Rule(format!("`{}` is defined on f32 and f64 only, not {}", data.op.name(), ins[0])))
            }
            Op::CastRound(_) => {
                count(1..=1, 1)?;
                if ins[0].shape() != outs[0].shape() {
                    return Err(Violation::Rule(format!("shape changes from {} to {}", ins[0], outs[0])));
                }
                let (from, to) = (scalar_elem(ins[0])?, scalar_elem(outs[0])?);
                let int = from.is_int() && from != ScalarType::I1 && matches!(from.bits(), 32 | 64);
                match to {
                    ScalarType::F32 | ScalarType::F64 if int => Ok(()),
                    ScalarType::F32 if from == ScalarType::F64 => Ok(()),
                    _ => Err(Violation::Rule(format!(
                        "converts a 32/64-bit integer to f32/f64 or f64 to f32, not {from} to {to}"
                    ))),
                }
            }
            Op::BesselN(_) => {
                count(2..=2, 1)?;
                same(ins[0], &ins[1].with_elem(Elem::Scalar(ScalarType::I32)), "order")?;
                if !matches!(ins[1].elem(), Some(Elem::Scalar(ScalarType::F32 | ScalarType::F64))) {
                    return Err(Violation::Rule(format!(
                        "`{}` is defined on f32 and f64 only, not {}",
                        data.op.name(),
                        ins[1]
                    )));
                }
                same(outs[0], ins[1], "result")
            }
            Op::Norm { .. } => {
                count(3..=4, 1)?;
                ins[1..].iter().try_for_each(|i| same(ins[0], i, "operands"))?;
                same(outs[0], ins[0], "result")
            }
            Op::Fma | Op::FmaRound(_) | Op::Clamp { .. } => {
                count(3..=3, 1)?;
                same(ins[0], ins[1], "operands")?;
                same(ins[0], ins[2], "operands")?;
                same(outs[0], ins[0], "result")
            }
            Op::Cast | Op::Bitcast | Op::ConvertLayout => {
                count(1..=1, 1)?;
                if ins[0].shape() != outs[0].shape() {
                    return Err(Violation::Rule(format!("shape changes from {} to {}", ins[0], outs[0])));
                }
                if matches!(data.op, Op::Bitcast) && ins[0].elem().map(Elem::bits) != outs[0].elem().map(Elem::bits) {
                    return Err(Violation::Rule(format!(
                        "bitcast between types of different widths: {} to {}",
                        ins[0], outs[0]
                    )));
                }
                if matches!(data.op, Op::ConvertLayout) && ins[0].elem() != outs[0].elem() {
                    return Err(Violation::Rule("convert_layout must keep the element type".into()));
                }
                Ok(())
            }
            Op::AddPtr => {
                count(2..=2, 1)?;
                if !ins[0].elem().is_some_and(Elem::is_ptr) {
                    return Err(Violation::Rule(format!("first operand must be a pointer, got {}", ins[0])));
                }
                let off = scalar_elem(ins[1])?;
                if !off.is_int() || ins[0].shape() != ins[1].shape() {
                    return Err(Violation::Rule(format!(
                        "offset must be an integer of the pointer's shape, got {}",
                        ins[1]
                    )));
                }
                same(outs[0], ins[0], "result")
            }
            Op::Splat => {
                count(1..=1, 1)?;
                if ins[0].is_tensor() || !outs[0].is_tensor() || ins[0].elem() != outs[0].elem() {
                    return Err(Violation::Rule(format!(
                        "splats a scalar to a tensor of its type, got {} to {}",
                        ins[0], outs[0]
                    )));
                }
                Ok(())
            }
            Op::Broadcast => {
                count(1..=1, 1)?;
                let (a, b) = (ins[0].shape(), outs[0].shape());
                if a.len() != b.len()
                    || a.iter().zip(b).any(|(&x, &y)| x != y && x != 1)
                    || ins[0].elem() != outs[0].elem()
                {
                    return Err(Violation::Rule(format!("cannot broadcast {} to {}", ins[0], outs[0])));
                }
                Ok(())
            }
            Op::ExpandDims { axis } => {
                count(1..=1, 1)?;
                let mut want = ins[0].shape().to_vec();
                if *axis as usize > want.len() {
                    return Err(Violation::Rule(format!("axis {axis} out of range for {}", ins[0])));
                }
                want.insert(*axis as usize, 1);
                shape_is(outs[0], &want)
            }
            Op::Reshape { .. } => {
                count(1..=1, 1)?;
                if ins[0].numel() != outs[0].numel() || ins[0].elem() != outs[0].elem() {
                    return Err(Violation::Rule(format!("cannot reshape {} to {}", ins[0], outs[0])));
                }
                Ok(())
            }
            Op::Permute { order } => {
                count(1..=1, 1)?;
                let shape = ins[0].shape();
                let mut seen = order.clone();
                seen.sort_unstable();
                if seen != (0..shape.len() as u32).collect::<Vec<_>>() {
                    return Err(Violation::Rule(format!(
                        "order {order:?} is not a permutation of the {} dims",
                        shape.len()
                    )));
                }
                shape_is(outs[0], &order.iter().map(|&d| shape[d as usize]).collect::<Vec<_>>())
            }
            Op::Join => {
                count(2..=2, 1)?;
                same(ins[0], ins[1], "operands")?;
                let mut want = ins[0].shape().to_vec();
                want.push(2);
                shape_is(outs[0], &want)
            }
            Op::Split => {
                count(1..=1, 2)?;
                let shape = ins[0].shape();
                if shape.last() != Some(&2) {
                    return Err(Violation::Rule(format!("the last dim must be 2, got {}", ins[0])));
                }
                same(outs[0], outs[1], "results")?;
                shape_is(outs[0], &shape[..shape.len() - 1])
            }
            Op::Cat => {
                count(2..=2, 1)?;
                same(ins[0], ins[1], "operands")?;
                let mut want = ins[0].shape().to_vec();
                match want.first_mut() {
                    Some(d) => *d *= 2,
                    None => return Err(Violation::Rule("operands must be tensors".into())),
                }
                shape_is(outs[0], &want)
            }
            Op::Load { .. } => {
                count(1..=3, 1)?;
                let pointee = pointee(ins[0])?;
                if ins.len() >= 2 {
                    same(ins[1], &ins[0].with_elem(Elem::Scalar(ScalarType::I1)), "mask")?;
                }
                if ins.len() == 3 {
                    same(ins[2], &ins[0].with_elem(Elem::Scalar(pointee)), "other")?;
                }
                same(outs[0], &ins[0].with_elem(Elem::Scalar(pointee)), "result")
            }
            Op::Store { .. } => {
                count(2..=3, 0)?;
                let pointee = pointee(ins[0])?;
                same(ins[1], &ins[0].with_elem(Elem::Scalar(pointee)), "value")?;
                if ins.len() == 3 {
                    same(ins[2], &ins[0].with_elem(Elem::Scalar(ScalarType::I1)), "mask")?;
                }
                Ok(())
            }
            Op::Atomic { .. } => {
                count(2..=3, 1)?;
                let pointee = pointee(ins[0])?;
                same(ins[1], &ins[0].with_elem(Elem::Scalar(pointee)), "value")?;
                if ins.len() == 3 {
                    same(ins[2], &ins[0].with_elem(Elem::Scalar(ScalarType::I1)), "mask")?;
                }
                same(outs[0], ins[1], "result")
            }
            Op::AtomicCas { .. } => {
                count(3..=3, 1)?;
                let pointee = pointee(ins[0])?;
                same(ins[1], &ins[0].with_elem(Elem::Scalar(pointee)), "compare value")?;
                same(ins[2], ins[1], "value")?;
                same(outs[0], ins[1], "result")
            }
            Op::Dot { .. } => {
                count(3..=3, 1)?;
                let (a, b, c) = (ins[0].shape(), ins[1].shape(), ins[2].shape());
                let r = a.len();
                let ok = (r == 2 || r == 3)
                    && b.len() == r
                    && c.len() == r
                    && a[r - 1] == b[r - 2]
                    && c[r - 2] == a[r - 2]
                    && c[r - 1] == b[r - 1]
                    && (r == 2 || (a[0] == b[0] && a[0] == c[0]));
                if !ok {
                    return Err(Violation::Rule(format!(
                        "shapes do not form a matrix product: {} x {} -> {}",
                        ins[0], ins[1], ins[2]
                    )));
                }
                if ins[0].elem() != ins[1].elem() {
                    return Err(Violation::Rule(format!(
                        "operands must have one element type, got {} and {}",
                        ins[0], ins[1]
                    )));
                }
                same(outs[0], ins[2], "result")
            }
            Op::Reduce { axis } | Op::Scan { axis, .. } => {
                need_regions(1)?;
                if ins.is_empty() || outs.len() != ins.len() {
                    return Err(Violation::Rule("needs N > 0 operands and N results".into()));
                }
                let shape = ins[0].shape();
                if *axis as usize >= shape.len() {
                    return Err(Violation::Rule(format!("axis {axis} out of range for {}", ins[0])));
                }
                let reduced: Vec<u32> =
                    shape.iter().enumerate().filter(|&(i, _)| i != *axis as usize).map(|(_, &d)| d).collect();
                for (i, (a, r)) in ins.iter().zip(&outs).enumerate() {
                    if a.shape() != shape {
                        return Err(Violation::Rule(format!("operand {i} has shape {a}; all operands need one shape")));
                    }
                    if matches!(data.op, Op::Scan { .. }) {
                        same(r, a, "result")?;
                    } else if reduced.is_empty() {
                        same(r, &Type::Scalar(a.elem().unwrap()), "result")?;
                    } else {
                        same_but_layout(r, &Type::tensor(&reduced, a.elem().unwrap()), "result")?;
                    }
                }
                let args: Vec<Type> = ins.iter().chain(&ins).map(|t| Type::Scalar(t.elem().unwrap())).collect();
                self.region_sig(data.regions[0], &args, &args[..ins.len()])
            }
            Op::For(_) => {
                need_regions(1)?;
                if ins.len() < 3 {
                    return Err(Violation::Rule("needs lower bound, upper bound and step".into()));
                }
                let iv = ins[0];
                if !matches!(iv, Type::Scalar(Elem::Scalar(s)) if s.is_int()) || ins[1] != iv || ins[2] != iv {
                    return Err(Violation::Rule(format!(
                        "bounds and step must be integer scalars of one type, got {}, {}, {}",
                        ins[0], ins[1], ins[2]
                    )));
                }
                let iters: Vec<Type> = ins[3..].iter().map(|t| (*t).clone()).collect();
                if outs.len() != iters.len() || outs.iter().zip(&iters).any(|(a, b)| *a != b) {
                    return Err(Violation::Rule("results must have the types of the loop-carried values".into()));
                }
                let args: Vec<Type> = std::iter::once(iv.clone()).chain(iters.iter().cloned()).collect();
                self.region_sig(data.regions[0], &args, &iters)
            }
            Op::If => {
                need_regions(2)?;
                count(1..=1, outs.len())?;
                same(ins[0], &Type::scalar(ScalarType::I1), "condition")?;
                let results: Vec<Type> = outs.iter().map(|t| (*t).clone()).collect();
                self.region_sig(data.regions[0], &[], &results)?;
                self.region_sig(data.regions[1], &[], &results)
            }
            Op::While => {
                need_regions(2)?;
                let inits: Vec<Type> = ins.iter().map(|t| (*t).clone()).collect();
                let results: Vec<Type> = outs.iter().map(|t| (*t).clone()).collect();
                let before = f.region(data.regions[0]);
                if before.args.iter().map(|&a| f.ty(a)).ne(inits.iter()) {
                    return Err(Violation::Rule(
                        "the `before` region's arguments must have the types of the initial values".into(),
                    ));
                }
                if let Some(&last) = before.ops.last() {
                    let cond = &f.op(last).operands;
                    if cond.is_empty() || *f.ty(cond[0]) != Type::scalar(ScalarType::I1) {
                        return Err(Violation::Rule("`condition` needs an i1 scalar first".into()));
                    }
                    if cond[1..].iter().map(|&v| f.ty(v)).ne(results.iter()) {
                        return Err(Violation::Rule("`condition` must forward values of the result types".into()));
                    }
                }
                self.region_sig(data.regions[1], &results, &inits)
            }
            Op::Yield | Op::Condition => Ok(()),
            Op::WarpSpecialize(w) => {
                need_regions(1 + w.worker_num_warps.len())?;
                self.warp_specialize_types(o, w)
            }
            Op::Return => count(0..=0, 0),
            Op::Assume => {
                count(1..=1, 0)?;
                same(ins[0], &Type::scalar(ScalarType::I1), "operand")
            }
            Op::MultipleOf(v) | Op::MaxContiguous(v) | Op::MaxConstancy(v) => {
                count(1..=1, 1)?;
                same(outs[0], ins[0], "result")?;
                let rank = ins[0].shape().len().max(1);
                if v.len() != rank {
                    return Err(Violation::Rule(format!("needs {rank} values (one per dim), got {}", v.len())));
                }
                Ok(())
            }
            Op::Print { .. } => count(0..=usize::MAX, 0),
            Op::Assert { .. } => {
                count(1..=1, 0)?;
                match scalar_elem(ins[0])? {
                    ScalarType::I1 => Ok(()),
                    s => Err(Violation::Rule(format!("condition must be i1, got {s}"))),
                }
            }
            Op::DebugBarrier | Op::ClusterBarrier => count(0..=0, 0),
            Op::MakeTensorDesc { rank, .. } => {
                let r = *rank as usize;
                count(1 + 2 * r..=1 + 2 * r, 1)?;
                let pointee = pointee(ins[0])?;
                match outs[0] {
                    Type::TensorDesc { elem, block_shape } if *elem == pointee && block_shape.len() == r => Ok(()),
                    other => {
                        Err(Violation::Rule(format!("result must be a rank-{r} tensordesc of {pointee}, got {other}")))
                    }
                }
            }
            Op::Gather { .. }
            | Op::Histogram { .. }
            | Op::InlineAsm { .. }
            | Op::GlobalTimer
            | Op::SmId
            | Op::GdcWait
            | Op::GdcLaunchDependents
            | Op::MakeTensorDescIm2col { .. }
            | Op::DotScaled { .. } => crate::verify_ext::types(&data.op, &ins, &outs),
            Op::DescLoad | Op::DescStore => {
                let Some(Type::TensorDesc { elem, block_shape }) = ins.first() else {
                    return Err(Violation::Rule("first operand must be a tensordesc".into()));
                };
                // A block in any layout (auto mode gives a load one before the TMA lowering).
                let fits = |t: &Type| {
                    t.is_tensor() && t.shape() == block_shape.as_slice() && t.elem() == Some(Elem::Scalar(*elem))
                };
                let value = Type::tensor(block_shape, Elem::Scalar(*elem));
                let r = block_shape.len();
                let (t, what) = if matches!(data.op, Op::DescLoad) {
                    count(1 + r..=1 + r, 1)?;
                    (outs[0], "result")
                } else {
                    count(2 + r..=2 + r, 0)?;
                    (ins[1], "value")
                };
                if fits(t) { Ok(()) } else { Err(Violation::Rule(format!("{what}: expected {value}, got {t}"))) }
            }
            // Every shared-memory op is typed by the first arm.
            other => Err(Violation::Rule(format!("`{}` has no typing rule", other.name()))),
        }
    }

    /// Checks a region's argument types and the types its terminator yields.
    /// `warp_specialize`: partition warp counts, register requests, the plan's shape, and the regions' signatures.
    fn warp_specialize_types(&self, o: OpId, w: &crate::ops::WarpSpec) -> Result<(), Violation> {
        let f = self.f;
        let data = f.op(o);
        let n = w.worker_num_warps.len();
        if n == 0 {
            return Err(Violation::Rule("needs at least one worker partition".into()));
        }
        if let Some(x) = w.worker_num_warps.iter().find(|x| !x.is_power_of_two()) {
            return Err(Violation::Rule(format!("worker warp counts must be powers of two, got {x}")));
        }
        if !w.worker_num_regs.is_empty() && w.worker_num_regs.len() != n {
            return Err(Violation::Rule(format!(
                "`worker_num_regs` needs one entry per worker ({n}), got {}",
                w.worker_num_regs.len()
            )));
        }
        if let Some(x) = w.worker_num_regs.iter().find(|&&x| !(24..=256).contains(&x) || x % 8 != 0) {
            return Err(Violation::Rule(format!("worker register counts must be multiples of 8 in 24..=256, got {x}")));
        }
        if !w.warp_starts.is_empty() && w.warp_starts.len() != n + 1 {
            return Err(Violation::Rule(format!(
                "`warp_starts` needs one entry per partition ({}), got {}",
                n + 1,
                w.warp_starts.len()
            )));
        }
        if !w.regs.is_empty() && w.regs.len() != n + 1 {
            return Err(Violation::Rule(format!(
                "`regs` needs one entry per partition ({}), got {}",
                n + 1,
                w.regs.len()
            )));
        }
        let mut inside = false;
        let mut p = data.parent.and_then(|r| f.region(r).parent);
        while let Some(q) = p {
            inside |= matches!(f.op(q).op, Op::WarpSpecialize(_));
            p = f.op(q).parent.and_then(|r| f.region(r).parent);
        }
        if inside {
            return Err(Violation::Rule("a warp_specialize cannot be nested in a partition".into()));
        }
        let results: Vec<Type> = data.results.iter().map(|&v| f.ty(v).clone()).collect();
        self.region_sig(data.regions[0], &[], &results)?;
        let captures: Vec<Type> = data.operands.iter().map(|&v| f.ty(v).clone()).collect();
        for &r in &data.regions[1..] {
            self.region_sig(r, &captures, &[])?;
        }
        Ok(())
    }

    fn region_sig(&self, r: RegionId, args: &[Type], yields: &[Type]) -> Result<(), Violation> {
        let f = self.f;
        let region = f.region(r);
        if region.args.len() != args.len() || region.args.iter().zip(args).any(|(&a, t)| f.ty(a) != t) {
            let got: Vec<String> = region.args.iter().map(|&a| f.ty(a).to_string()).collect();
            let want: Vec<String> = args.iter().map(|t| t.to_string()).collect();
            return Err(Violation::Rule(format!(
                "region arguments must be ({}), got ({})",
                want.join(", "),
                got.join(", ")
            )));
        }
        if let Some(&last) = region.ops.last()
            && matches!(f.op(last).op, Op::Yield)
        {
            let got: Vec<&Type> = f.op(last).operands.iter().map(|&v| f.ty(v)).collect();
            if got.len() != yields.len() || got.iter().zip(yields).any(|(a, b)| *a != b) {
                let got: Vec<String> = got.iter().map(|t| t.to_string()).collect();
                let want: Vec<String> = yields.iter().map(|t| t.to_string()).collect();
                return Err(Violation::Rule(format!(
                    "region must yield ({}), yields ({})",
                    want.join(", "),
                    got.join(", ")
                )));
            }
        }
        Ok(())
    }
}

/// `a` is `b` up to its layout (ops whose result layout is chosen by the author or by layout assignment).
fn same_but_layout(a: &Type, b: &Type, what: &str) -> Result<(), Violation> {
    if a.shape() == b.shape() && a.elem() == b.elem() && a.is_tensor() == b.is_tensor() {
        Ok(())
    } else {
        Err(Violation::Mismatch { what: what.into(), expected: b.clone(), got: a.clone() })
    }
}

fn shape_is(t: &Type, shape: &[u32]) -> Result<(), Violation> {
    if t.shape() == shape { Ok(()) } else { Err(Violation::Rule(format!("result shape must be {shape:?}, got {t}"))) }
}

fn scalar_elem(t: &Type) -> Result<ScalarType, Violation> {
    t.elem().and_then(Elem::scalar).ok_or_else(|| Violation::NotNumeric(t.clone()))
}

// ----- Layout IR (opt-in) -----

/// The typing rule of `dot_scaled` (`ins`: a, a_scale, b, b_scale, acc, a_up, b_up), for the elaborator to check
/// a call at its span.
pub fn dot_scaled_types(
    ins: &[&Type],
    outs: &[&Type],
    a_format: crate::ops::MxFormat,
    b_format: crate::ops::MxFormat,
) -> Result<(), String> {
    crate::verify_ext::dot_scaled(ins, outs, a_format, b_format).map_err(|v| v.to_string())
}

/// The layout-IR rules, checked after layout assignment (opt-in: tile IR before assignment has no layouts).
/// Every tensor value (arguments, op results, region arguments) has a layout, and each op's layouts fit
/// ([`crate::layout::rules::check`]): elementwise operands and results share one layout, a reduction's result
/// is the slice of its operand's along the axis, a broadcast's operand is its result's layout at the smaller
/// shape, an `expand_dims` operand is the slice of its result's, a store's pointer, value and mask agree, dot
/// operands are dot-operand layouts of the accumulator's. A `convert_layout` changing more than the layout,
/// and region signatures (loop-carried values, branch results, layouts included), are caught by [`verify`].
pub fn verify_layouts(f: &Func) -> Result<(), VerifyError> {
    for &a in f.args() {
        if f.ty(a).is_tensor() && f.ty(a).layout().is_none() {
            return Err(VerifyError { op: None, name: None, loc: None, check: Check::NoLayout(a) });
        }
    }
    for o in f.all_ops() {
        let d = f.op(o);
        let region_args = d.regions.iter().flat_map(|&r| f.region(r).args.iter());
        if let Some(v) =
            d.results.iter().chain(region_args).find(|&&v| f.ty(v).is_tensor() && f.ty(v).layout().is_none())
        {
            return Err(at(f, o, Check::NoLayout(*v)));
        }
        crate::layout::rules::check(f, o).map_err(|m| at(f, o, Check::Layouts(m)))?;
    }
    Ok(())
}

/// `check` failed at op `o`.
fn at(f: &Func, o: OpId, check: Check) -> VerifyError {
    let d = f.op(o);
    VerifyError { op: Some(o), name: Some(d.op.name()), loc: d.loc, check }
}
