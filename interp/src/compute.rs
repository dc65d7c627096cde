//! The ops without regions: elementwise arithmetic, memory, dots, prints and asserts, and the rest by module
//! (`shape_ops`, `data_ops`).

use super::value::Tensor;
use super::{Fault, Program, data_ops, memory, shape_ops, tensor_in};
use tessel_tile::eval::arith;
use tessel_tile::eval::value::{Val, convert, from_bits, round_float, round_tf32, to_bits};
use tessel_tile::ir::OpId;
use tessel_tile::ops::{AtomicOp, BinOp, Const, InputPrecision, Op};
use tessel_tile::types::{Elem, ScalarType};

impl Program<'_> {
    /// Ops without regions: returns their results.
    pub(super) fn compute(&mut self, o: OpId) -> Result<Vec<Tensor>, Fault> {
        let f = self.f;
        let data = f.op(o);
        let env = &self.env;
        let ins: Vec<&Tensor> = data.operands.iter().map(|&v| tensor_in(env, v)).collect();
        let rty = |i: usize| f.ty(data.results[i]);
        let relem = |i: usize| rty(i).elem().expect("tensor or scalar result");
        let scalar_of = |e: Elem| e.scalar().ok_or(Fault::Unverified("expected numbers, got pointers"));
        let out = match &data.op {
            Op::Constant(c) => {
                let e = relem(0);
                let v = match (c, scalar_of(e)?) {
                    (Const::Int(i), s) if s.is_int() => Val::Int(tessel_tile::eval::value::wrap_int(*i, s)),
                    (Const::Int(i), s) => Val::Float(tessel_tile::eval::value::int_to_float(*i as i128, s)),
                    (Const::Float(x), s) if s.is_float() => Val::Float(round_float(*x, s)),
                    (Const::Float(x), s) => convert(Val::Float(*x), Elem::Scalar(ScalarType::F64), Elem::Scalar(s)),
                };
                vec![Tensor::splat(rty(0).shape(), e, v)]
            }
            Op::ProgramId(a) => vec![Tensor::scalar(relem(0), Val::Int(self.pid[*a as usize] as i64))],
            Op::NumPrograms(a) => vec![Tensor::scalar(relem(0), Val::Int(self.grid[*a as usize] as i64))],
            Op::Arange { start, end } => {
                vec![Tensor {
                    shape: vec![(end - start) as u32],
                    elem: relem(0),
                    data: (*start..*end).map(|i| Val::Int(i as i64)).collect(),
                }]
            }
            Op::Binary { op, propagate_nan } => {
                let t = scalar_of(ins[0].elem)?;
                let data = ins[0]
                    .data
                    .iter()
                    .zip(&ins[1].data)
                    .map(|(&a, &b)| arith::binary(*op, *propagate_nan, t, a, b))
                    .collect::<Result<_, _>>()?;
                vec![Tensor { shape: ins[0].shape.clone(), elem: ins[0].elem, data }]
            }
            Op::Unary(op) => {
                let t = scalar_of(ins[0].elem)?;
                let data = ins[0].data.iter().map(|&a| arith::unary(*op, t, a)).collect::<Result<_, _>>()?;
                vec![Tensor { shape: ins[0].shape.clone(), elem: ins[0].elem, data }]
            }
            Op::Cmp(p) => {
                let t = match ins[0].elem {
                    Elem::Scalar(s) => s,
                    Elem::Ptr(..) => ScalarType::U64,
                };
                let data = ins[0].data.iter().zip(&ins[1].data).map(|(&a, &b)| arith::compare(*p, t, a, b)).collect();
                vec![Tensor { shape: ins[0].shape.clone(), elem: relem(0), data }]
            }
            Op::Select => {
                let data = (0..ins[1].numel())
                    .map(|i| if ins[0].data[i].is_true() { ins[1].data[i] } else { ins[2].data[i] })
                    .collect();
                vec![Tensor { shape: ins[1].shape.clone(), elem: ins[1].elem, data }]
            }
            Op::Fma => {
                let t = scalar_of(ins[0].elem)?;
                let data = (0..ins[0].numel())
                    .map(|i| {
                        let (x, y, z) = (ins[0].data[i].as_f64(), ins[1].data[i].as_f64(), ins[2].data[i].as_f64());
                        Val::Float(arith::fma(t, x, y, z))
                    })
                    .collect();
                vec![Tensor { shape: ins[0].shape.clone(), elem: ins[0].elem, data }]
            }
            Op::FmaRound(dir) => {
                let t = scalar_of(ins[0].elem)?;
                let data = (0..ins[0].numel())
                    .map(|i| {
                        let (x, y, z) = (ins[0].data[i].as_f64(), ins[1].data[i].as_f64(), ins[2].data[i].as_f64());
                        Val::Float(tessel_math::rounding::libdevice_fma(*dir, t.float_format(), x, y, z))
                    })
                    .collect();
                vec![Tensor { shape: ins[0].shape.clone(), elem: ins[0].elem, data }]
            }
            Op::BesselN(kind) => {
                let t = scalar_of(ins[1].elem)?;
                let data = (0..ins[1].numel())
                    .map(|i| {
                        arith::bessel_n(*kind, t, ins[0].data[i].as_i64(), ins[1].data[i].as_f64()).map(Val::Float)
                    })
                    .collect::<Result<_, _>>()?;
                vec![Tensor { shape: ins[1].shape.clone(), elem: ins[1].elem, data }]
            }
            Op::Norm { recip } => {
                let t = scalar_of(ins[0].elem)?;
                let data = (0..ins[0].numel())
                    .map(|i| {
                        let xs: Vec<f64> = ins.iter().map(|v| v.data[i].as_f64()).collect();
                        arith::norm(t, &xs, *recip).map(Val::Float)
                    })
                    .collect::<Result<_, _>>()?;
                vec![Tensor { shape: ins[0].shape.clone(), elem: ins[0].elem, data }]
            }
            Op::Clamp { propagate_nan } => {
                let t = scalar_of(ins[0].elem)?;
                let data = (0..ins[0].numel())
                    .map(|i| {
                        let lo = arith::binary(BinOp::Max, *propagate_nan, t, ins[0].data[i], ins[1].data[i])?;
                        arith::binary(BinOp::Min, *propagate_nan, t, lo, ins[2].data[i])
                    })
                    .collect::<Result<_, _>>()?;
                vec![Tensor { shape: ins[0].shape.clone(), elem: ins[0].elem, data }]
            }
            Op::CastRound(dir) => {
                let (from, to) = (scalar_of(ins[0].elem)?, scalar_of(relem(0))?);
                let data = ins[0]
                    .data
                    .iter()
                    .map(|&v| {
                        Val::Float(if from == ScalarType::F64 {
                            tessel_math::rounding::f64_to_f32(*dir, v.as_f64())
                        } else {
                            let i = v.as_i64();
                            let (neg, mag) = if from.is_unsigned_int() {
                                (false, i as u64 & if from.bits() == 64 { u64::MAX } else { 0xffff_ffff })
                            } else {
                                (i < 0, i.unsigned_abs())
                            };
                            tessel_math::rounding::int_to_float(*dir, to.float_format(), neg, mag)
                        })
                    })
                    .collect();
                vec![Tensor { shape: ins[0].shape.clone(), elem: relem(0), data }]
            }
            Op::Cast => {
                let (from, to) = (ins[0].elem, relem(0));
                vec![Tensor {
                    shape: ins[0].shape.clone(),
                    elem: to,
                    data: ins[0].data.iter().map(|&v| convert(v, from, to)).collect(),
                }]
            }
            // A pointer reinterpreted as a pointer to another type: the same address.
            Op::Bitcast if ins[0].elem.is_ptr() && relem(0).is_ptr() => {
                vec![Tensor { shape: ins[0].shape.clone(), elem: relem(0), data: ins[0].data.clone() }]
            }
            Op::Bitcast => {
                let (from, to) = (scalar_of(ins[0].elem)?, scalar_of(relem(0))?);
                let data = ins[0].data.iter().map(|&v| from_bits(to_bits(v, from), to)).collect();
                vec![Tensor { shape: ins[0].shape.clone(), elem: relem(0), data }]
            }
            Op::AddPtr => {
                let Elem::Ptr(pointee, _) = ins[0].elem else { unreachable!() };
                let size = pointee.bytes() as i64;
                let data = ins[0]
                    .data
                    .iter()
                    .zip(&ins[1].data)
                    .map(|(&p, &off)| {
                        Val::Ptr(memory::offset_address(p.as_i64() as u64, off.as_i64() as i128 * size as i128))
                    })
                    .collect();
                vec![Tensor { shape: ins[0].shape.clone(), elem: ins[0].elem, data }]
            }
            Op::Load { .. } => {
                let Elem::Ptr(pointee, _) = ins[0].elem else { unreachable!() };
                let mut data = Vec::with_capacity(ins[0].numel());
                for i in 0..ins[0].numel() {
                    let on = ins.get(1).is_none_or(|m| m.data[i].is_true());
                    data.push(if on {
                        self.mem.load(ins[0].data[i].as_i64() as u64, pointee)?
                    } else if let Some(other) = ins.get(2) {
                        other.data[i]
                    } else if pointee.is_float() {
                        Val::Float(0.0)
                    } else {
                        Val::Int(0)
                    });
                }
                vec![Tensor { shape: ins[0].shape.clone(), elem: Elem::Scalar(pointee), data }]
            }
            Op::Store { .. } => {
                let Elem::Ptr(pointee, _) = ins[0].elem else { unreachable!() };
                let (ptrs, vals, mask) = (ins[0].clone(), ins[1].clone(), ins.get(2).map(|m| (*m).clone()));
                for i in 0..ptrs.numel() {
                    if mask.as_ref().is_none_or(|m| m.data[i].is_true()) {
                        self.mem.store(ptrs.data[i].as_i64() as u64, pointee, vals.data[i])?;
                    }
                }
                vec![]
            }
            Op::Atomic { op, .. } => {
                self.mem.atomic(self.pid, data.loc)?;
                let Elem::Ptr(pointee, _) = ins[0].elem else { unreachable!() };
                let (ptrs, vals, mask) = (ins[0].clone(), ins[1].clone(), ins.get(2).map(|m| (*m).clone()));
                let mut old = Vec::with_capacity(ptrs.numel());
                for i in 0..ptrs.numel() {
                    let addr = ptrs.data[i].as_i64() as u64;
                    if mask.as_ref().is_some_and(|m| !m.data[i].is_true()) {
                        old.push(if pointee.is_float() { Val::Float(0.0) } else { Val::Int(0) });
                        continue;
                    }
                    let prev = self.mem.load(addr, pointee)?;
                    let new = match op {
                        AtomicOp::Xchg => vals.data[i],
                        AtomicOp::Add => arith::binary(BinOp::Add, false, pointee, prev, vals.data[i])?,
                        AtomicOp::Max => arith::binary(BinOp::Max, false, pointee, prev, vals.data[i])?,
                        AtomicOp::Min => arith::binary(BinOp::Min, false, pointee, prev, vals.data[i])?,
                        AtomicOp::And => arith::binary(BinOp::And, false, pointee, prev, vals.data[i])?,
                        AtomicOp::Or => arith::binary(BinOp::Or, false, pointee, prev, vals.data[i])?,
                        AtomicOp::Xor => arith::binary(BinOp::Xor, false, pointee, prev, vals.data[i])?,
                    };
                    self.mem.store(addr, pointee, new)?;
                    old.push(prev);
                }
                vec![Tensor { shape: ptrs.shape.clone(), elem: Elem::Scalar(pointee), data: old }]
            }
            Op::AtomicCas { .. } => {
                self.mem.atomic(self.pid, data.loc)?;
                let Elem::Ptr(pointee, _) = ins[0].elem else { unreachable!() };
                let (ptrs, cmp, vals) = (ins[0].clone(), ins[1].clone(), ins[2].clone());
                let mut old = Vec::with_capacity(ptrs.numel());
                for i in 0..ptrs.numel() {
                    let addr = ptrs.data[i].as_i64() as u64;
                    let prev = self.mem.load(addr, pointee)?;
                    if arith::compare(tessel_tile::ops::CmpPred::Eq, pointee, prev, cmp.data[i]).is_true() {
                        self.mem.store(addr, pointee, vals.data[i])?;
                    }
                    old.push(prev);
                }
                vec![Tensor { shape: ptrs.shape.clone(), elem: Elem::Scalar(pointee), data: old }]
            }
            Op::Dot { precision, .. } => vec![dot(ins[0], ins[1], ins[2], *precision)?],
            // What the target computes: the block-scaled MMA's products where it takes the dot (its scales read
            // as the hardware reads them: e8m0 0 is 2^-127, e4m3 unsigned), else those of the upcast operands.
            Op::DotScaled { a_format, b_format } if tessel_tile::layout::dot_scaled::why_not(f, o).is_none() => {
                let (a, b) = super::shared::scaled::dequantize(ins[0], ins[2], ins[1], ins[3], *a_format, *b_format);
                vec![dot(&a, &b, ins[4], InputPrecision::Ieee)?]
            }
            Op::DotScaled { .. } => vec![dot(ins[5], ins[6], ins[4], InputPrecision::Ieee)?],
            Op::Assume => {
                if !ins[0].data[0].is_true() {
                    return Err(Fault::AssumeFailed);
                }
                vec![]
            }
            Op::MultipleOf(_) | Op::MaxContiguous(_) | Op::MaxConstancy(_) | Op::ConvertLayout => vec![ins[0].clone()],
            Op::Print { prefix, hex } => {
                self.log.extend(print_lines(self.pid, prefix, *hex, &ins));
                vec![]
            }
            Op::Assert { message } => {
                if let Some(i) = ins[0].data.iter().position(|v| !v.is_true()) {
                    let idx = Tensor::unravel(&ins[0].shape, i);
                    return Err(Fault::AssertFailed { index: idx, message: message.clone() });
                }
                vec![]
            }
            // The interpreter runs a cluster as one program (its logical view): nothing to order between CTAs.
            Op::DebugBarrier | Op::ClusterBarrier => vec![],
            op @ (Op::Gather { .. }
            | Op::Histogram { .. }
            | Op::InlineAsm { .. }
            | Op::GlobalTimer
            | Op::SmId
            | Op::GdcWait
            | Op::GdcLaunchDependents) => data_ops::eval(op, &ins)?,
            op => shape_ops::eval(op, &ins, rty(0))?,
        };
        Ok(out)
    }
}

/// `device_print` lines in Triton's format: `pid (x, y, z) idx (i, j) prefix value`.
pub(super) fn print_lines(pid: [u32; 3], prefix: &str, hex: bool, ins: &[&Tensor]) -> Vec<String> {
    let [x, y, z] = pid;
    let fmt_val = |v: Val, e: Elem| match (v, hex) {
        (Val::Float(f), false) => format!("{f}"),
        (Val::Float(f), true) => format!("{:#x}", to_bits(Val::Float(f), e.scalar().unwrap())),
        (Val::Int(i), true) => format!("{i:#x}"),
        (Val::Int(i), false) => format!("{i}"),
        (Val::Ptr(p), _) => format!("{p:#x}"),
    };
    if ins.is_empty() {
        return vec![format!("pid ({x}, {y}, {z}) {prefix}")];
    }
    let mut lines = Vec::new();
    for t in ins {
        for (i, &v) in t.data.iter().enumerate() {
            let idx: Vec<String> = Tensor::unravel(&t.shape, i).iter().map(|d| format!("{d:>3}")).collect();
            lines.push(format!("pid ({x}, {y}, {z}) idx ({}) {prefix}{}", idx.join(","), fmt_val(v, t.elem)));
        }
    }
    lines
}

/// `a @ b + acc`, with the operands rounded as `precision` says and products accumulated in the
/// accumulator's type (in K order).
pub(crate) fn dot(a: &Tensor, b: &Tensor, acc: &Tensor, precision: InputPrecision) -> Result<Tensor, Fault> {
    let r = a.shape.len();
    let (m, k, n) = (a.shape[r - 2] as usize, a.shape[r - 1] as usize, b.shape[r - 1] as usize);
    let batch = if r == 3 { a.shape[0] as usize } else { 1 };
    let acc_t = acc.elem.scalar().ok_or(Fault::Unverified("dot accumulator must be numeric"))?;
    let in_t = a.elem.scalar().ok_or(Fault::Unverified("dot operands must be numeric"))?;
    let prep = |v: Val| -> f64 {
        let x = v.as_f64();
        match (in_t, precision) {
            (ScalarType::F32, InputPrecision::Tf32) => round_tf32(x as f32) as f64,
            _ => x,
        }
    };
    let mut out = acc.clone();
    for bt in 0..batch {
        for i in 0..m {
            for j in 0..n {
                let at = bt * m * n + i * n + j;
                if acc_t.is_int() {
                    let mut s = out.data[at].as_i64();
                    for kk in 0..k {
                        s = s.wrapping_add(
                            a.data[bt * m * k + i * k + kk]
                                .as_i64()
                                .wrapping_mul(b.data[bt * k * n + kk * n + j].as_i64()),
                        );
                    }
                    out.data[at] = Val::Int(tessel_tile::eval::value::wrap_int(s, acc_t));
                } else {
                    let mut s = out.data[at].as_f64();
                    for kk in 0..k {
                        let (x, y) = (prep(a.data[bt * m * k + i * k + kk]), prep(b.data[bt * k * n + kk * n + j]));
                        // An f32 accumulator takes one f32 rounding per step, as the GPU's `fma.rn.f32` (an f64
                        // fma rounded again to f32 could round twice).
                        s = if acc_t == ScalarType::F32 {
                            arith::fma(acc_t, x, y, s)
                        } else {
                            round_float(x.mul_add(y, s), acc_t)
                        };
                    }
                    out.data[at] = Val::Float(s);
                }
            }
        }
    }
    Ok(out)
}
