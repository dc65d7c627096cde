//! `dot` on the CUDA cores (the FMA path; tensor-core MMAs are not emitted yet).
//!
//! Auto mode gives the accumulator `C` a blocked layout and the operands `DotOperandLayout(i, parent = C's
//! layout, k_width = 0)`: every thread holds the whole K extent of the rows of `A` and the columns of `B` that
//! its accumulator elements need. So per thread, for each accumulator element `(m, n)` (and batch index), the
//! result is `acc = fma(a[m, k], b[k, n], acc)` for `k = 0, 1, .., K-1`, in increasing `k`, as the interpreter
//! computes it (`tessel_interp`'s `compute::dot`). The correspondence of registers is derived from the layouts and checked first:
//! the lane and warp bases of `A` must equal `C`'s along the batch and M dims and be zero along K (likewise `B`
//! along batch/N), and each accumulator register must find its operands among the thread's registers; anything
//! else is an error asking for a `convert_layout`, never wrong code.
//!
//! Arithmetic, matching the interpreter's rounding: fp8/f16/bf16/f32 operands into an f32 accumulator are widened
//! (exactly) and combined with `fma.rn.f32`; f32 operands with `precision = tf32` are first rounded with
//! `cvt.rna.tf32.f32` (ties away from zero, as `round_tf32`); an f64 accumulator uses `fma.rn.f64`; f16 (bf16)
//! operands into an f16 (bf16) accumulator use `fma.rn.f16` (`.bf16`); integer dots use `mad.lo` at the
//! accumulator's width (the interpreter's wrapping i64 sum, reduced to that width, is the same value).

use std::collections::HashMap;

use tessel_layouts::LinearLayout;
use tessel_tile::ir::OpData;
use tessel_tile::ops::InputPrecision;
use tessel_tile::types::{Elem, ScalarType};

use super::Lower;
use super::arith::ty;
use super::coords::{bases, layout_of, reg_coords};
use crate::CompileError;
use crate::ptx::{Opcode, Reg, RegClass};

use ScalarType::*;

/// How products are accumulated.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Arith {
    /// `fma.rn.<t>` in float type `t` (operands converted to `t`); `tf32`: round f32 operands first.
    Float { t: ScalarType, tf32: bool },
    /// `mad.lo.s<bits>` (operands sign- or zero-extended, or truncated, to `bits`).
    Int { bits: u32 },
}

fn arith_for(op: ScalarType, acc: ScalarType, precision: InputPrecision) -> Result<Arith, CompileError> {
    let tf32 = op == F32 && precision == InputPrecision::Tf32;
    Ok(match (op, acc) {
        (F16 | BF16 | F32 | F8E4M3 | F8E5M2, F32) => Arith::Float { t: F32, tf32 },
        (F16 | BF16 | F32 | F64, F64) => Arith::Float { t: F64, tf32 },
        (F16, F16) => Arith::Float { t: F16, tf32: false },
        (BF16, BF16) => Arith::Float { t: BF16, tf32: false },
        (o, a) if o.is_int() && o != I1 && a.is_int() && a != I1 => Arith::Int { bits: a.bits() },
        _ => {
            return Err(CompileError::new(format!(
                "a dot of {op} operands into a {acc} accumulator is not supported by codegen"
            )));
        }
    })
}

/// Splits an operand's coordinates into (the coordinates it shares with the accumulator, k).
type Split<'a> = &'a dyn Fn(&[u32]) -> (Vec<u32>, u32);

/// The coordinates of a dot operand or accumulator split into (batch.., row-or-column) and k.
struct Dims {
    rank: usize,
}

impl Dims {
    /// `A[.., m, k]` → (`[.., m]`, `k`).
    fn a(&self, c: &[u32]) -> (Vec<u32>, u32) {
        (c[..self.rank - 1].to_vec(), c[self.rank - 1])
    }

    /// `B[.., k, n]` → (`[.., n]`, `k`).
    fn b(&self, c: &[u32]) -> (Vec<u32>, u32) {
        let r = self.rank;
        (c[..r - 2].iter().copied().chain([c[r - 1]]).collect(), c[r - 2])
    }

    /// `C[.., m, n]` → the parts `A` and `B` share with it: (`[.., m]`, `[.., n]`).
    fn c(&self, c: &[u32]) -> (Vec<u32>, Vec<u32>) {
        let r = self.rank;
        (c[..r - 1].to_vec(), c[..r - 2].iter().copied().chain([c[r - 1]]).collect())
    }
}

/// Checks that operand layout `lo` gives every thread the operand elements of the accumulator elements it
/// holds in `lc`, whatever its lane and warp: along the dims shared with `C` its thread bases are `C`'s, and
/// along K they are zero. `split` splits operand coordinates; `share` projects `C` coordinates.
fn check_threads(
    name: &str,
    lo: &LinearLayout,
    lc: &LinearLayout,
    split: Split,
    share: &dyn Fn(&[u32]) -> Vec<u32>,
) -> Result<(), CompileError> {
    for dim in ["lane", "warp"] {
        let (mut bo, mut bc) = (bases(lo, dim), bases(lc, dim));
        let n = bo.len().max(bc.len());
        bo.resize(n, vec![0; lo.num_out_dims()]);
        bc.resize(n, vec![0; lc.num_out_dims()]);
        for (i, (x, y)) in bo.iter().zip(&bc).enumerate() {
            let ((rows, k), want) = (split(x), share(y));
            if k != 0 || rows != want {
                return Err(CompileError::new(format!(
                    "operand {name} is not laid out for an FMA dot with this accumulator: {dim} bit {i} of the \
                     operand moves to coordinates {rows:?} (k = {k}) where the accumulator's moves to {want:?} \
                     (k must stay 0); a convert_layout to DotOperandLayout of the accumulator's layout is needed"
                )));
            }
        }
    }
    Ok(())
}

/// Register index of each (shared coordinates, k) of an operand, at lane = warp = 0 (the first of duplicates).
fn index(lo: &LinearLayout, split: Split) -> HashMap<(Vec<u32>, u32), usize> {
    let mut m = HashMap::new();
    for r in 0..lo.in_dim_size("register") {
        m.entry(split(&reg_coords(lo, r))).or_insert(r as usize);
    }
    m
}

/// Operand registers converted to the type the products are computed in, each converted once.
struct Prepared {
    op: ScalarType,
    arith: Arith,
    regs: Vec<Reg>,
    done: HashMap<usize, Reg>,
}

impl Prepared {
    fn get(&mut self, l: &mut Lower, i: usize) -> Reg {
        if let Some(&r) = self.done.get(&i) {
            return r;
        }
        let x = self.regs[i];
        let r = match self.arith {
            Arith::Float { t, tf32 } => {
                let mut x = if matches!(self.op, F16 | BF16 | F8E4M3 | F8E5M2) && t != self.op {
                    super::cast::widen_float(l, x, self.op)
                } else {
                    x
                };
                if tf32 {
                    // As the tensor cores read a tf32 operand (and Triton's `dot`): the low 13 bits dropped.
                    let (bits, low, w) = (l.b.reg(RegClass::B32), l.b.reg(RegClass::B32), l.b.reg(RegClass::F32));
                    l.b.op("mov.b32", bits, x);
                    l.b.op("and.b32", low, (bits, -8192));
                    l.b.op("mov.b32", w, low);
                    x = w;
                }
                if t == F64 && x.class == RegClass::F32 {
                    let w = l.b.reg(RegClass::F64);
                    l.b.op("cvt.f64.f32", w, x);
                    x = w;
                }
                x
            }
            Arith::Int { bits } => {
                let ob = self.op.bits();
                if ob == bits {
                    x
                } else {
                    let class = if bits == 64 {
                        RegClass::B64
                    } else if bits == 32 {
                        RegClass::B32
                    } else {
                        RegClass::B16
                    };
                    let w = l.b.reg(class);
                    // Wider: extend as the interpreter reads the value (signed or not); narrower: the low bits
                    // are all a product reduced modulo 2^bits depends on.
                    let s = if ob < bits && self.op.is_signed_int() { "s" } else { "u" };
                    l.b.op(format!("cvt.{s}{bits}.{s}{ob}"), w, x);
                    w
                }
            }
        };
        self.done.insert(i, r);
        r
    }
}

pub(crate) fn dot(l: &mut Lower, data: &OpData, precision: InputPrecision) -> Result<(), CompileError> {
    let f = l.f;
    let [a, b, c] = [data.operands[0], data.operands[1], data.operands[2]];
    let v = data.results[0];
    let (la, lb, lc, lv) = (layout_of(f.ty(a))?, layout_of(f.ty(b))?, layout_of(f.ty(c))?, layout_of(f.ty(v))?);
    if lv != lc {
        return Err(CompileError::new("the result of dot must have the accumulator's layout"));
    }
    let (op_t, acc_t) = (l.scalar_of(a)?, l.scalar_of(v)?);
    let arith = arith_for(op_t, acc_t, precision)?;
    let dims = Dims { rank: f.ty(c).shape().len() };
    let k_size = f.ty(a).shape()[dims.rank - 1];
    let (split_a, split_b) = (|x: &[u32]| dims.a(x), |x: &[u32]| dims.b(x));
    check_threads("A", la, lc, &split_a, &|x| dims.c(x).0)?;
    check_threads("B", lb, lc, &split_b, &|x| dims.c(x).1)?;
    let (ia, ib) = (index(la, &split_a), index(lb, &split_b));

    // The distinct accumulator elements of the thread, with their operand registers for every k.
    let c_regs = l.get(c)?.to_vec();
    let n_c = lc.in_dim_size("register");
    let mut elems: Vec<(Vec<u32>, usize)> = Vec::new();
    let mut reg_elem = Vec::with_capacity(n_c as usize);
    for r in 0..n_c {
        let coords = reg_coords(lc, r);
        let e = match elems.iter().position(|(x, _)| *x == coords) {
            Some(e) => e,
            None => {
                elems.push((coords, r as usize));
                elems.len() - 1
            }
        };
        reg_elem.push(e);
    }
    let mut operands: Vec<Vec<(usize, usize)>> = Vec::with_capacity(elems.len());
    for (coords, _) in &elems {
        let (ra, rb) = dims.c(coords);
        let ks = (0..k_size)
            .map(|k| match (ia.get(&(ra.clone(), k)), ib.get(&(rb.clone(), k))) {
                (Some(&x), Some(&y)) => Ok((x, y)),
                (x, _) => Err(CompileError::new(format!(
                    "operand {} does not hold the k = {k} element for accumulator element {coords:?} in the same \
                     thread; a convert_layout to DotOperandLayout of the accumulator's layout is needed",
                    if x.is_none() { "A" } else { "B" }
                ))),
            })
            .collect::<Result<Vec<_>, _>>()?;
        operands.push(ks);
    }

    let mut pa = Prepared { op: op_t, arith, regs: l.get(a)?.to_vec(), done: HashMap::new() };
    let mut pb = Prepared { op: op_t, arith, regs: l.get(b)?.to_vec(), done: HashMap::new() };
    let (class, op): (_, Opcode) = match arith {
        Arith::Float { t, .. } => (super::class_of(Elem::Scalar(t))?, format!("fma.rn.{}", ty(t)).into()),
        Arith::Int { bits } => (c_regs[0].class, format!("mad.lo.s{bits}").into()),
    };
    l.b.comment(format!("dot: {} accumulator element(s) x {k_size} k per thread on CUDA cores", elems.len()));
    let mut acc: Vec<Reg> = elems.iter().map(|&(_, r)| c_regs[r]).collect();
    // k outermost: each accumulator still sees increasing k, and consecutive FMAs are independent.
    for k in 0..k_size as usize {
        for (e, ops) in operands.iter().enumerate() {
            let (x, y) = (pa.get(l, ops[k].0), pb.get(l, ops[k].1));
            let d = l.b.reg(class);
            l.b.op(op.clone(), d, (x, y, acc[e]));
            acc[e] = d;
        }
    }
    l.vals.insert(v, reg_elem.iter().map(|&e| acc[e]).collect());
    Ok(())
}
