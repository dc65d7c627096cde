//! libdevice's integer and bit functions (`popc`, `clz`, `brev`, `ffs`, `mulhi`, `mul24`, `sad`, `hadd`,
//! `rhadd`, `byte_perm`) and the word-level reinterpretations (`float_as_uint`, `uint_as_float`,
//! `double2hiint`, `double2loint`, `hiloint2double`) and `llrint`/`llround` (to int64, ties to even or away
//! from zero), with Triton's signatures: `popc`/`clz`/`ffs` of int32
//! or int64 give int32, `brev` keeps its type, `mulhi` is the high half of the signed or unsigned product by
//! type, `mul24` multiplies the low 24 bits (sign-extended for int32), `sad(x, y, z)` is |x − y| + z as uint32,
//! `hadd`/`rhadd` the average rounded down/up without overflow, `byte_perm(x, y, s)` PTX's `prmt` (byte i of
//! the result is byte `s[4i..4i+3] & 7` of y:x). `popc`, `clz`, `brev` and the signed `mulhi` are IR ops
//! (PTX `popc`, `clz`, `brev`, `mul.hi`); the others are compositions of integer ops.

use tessel_tile::ScalarType;
use tessel_tile::ops::{BinOp, CmpPred, Const, Op, UnOp};

use crate::elab::args::CallArgs;
use crate::elab::value::{Dtype, Tv};
use crate::elab::{Elab, R};
use crate::span::Span;

use ScalarType::{F32, F64, I32, I64, U32, U64};

pub const NAMES: &[&str] = &[
    "popc",
    "clz",
    "brev",
    "ffs",
    "mulhi",
    "mul24",
    "sad",
    "hadd",
    "rhadd",
    "byte_perm",
    "float_as_uint",
    "uint_as_float",
    "double2hiint",
    "double2loint",
    "hiloint2double",
    "llrint",
    "llround",
];

impl<'a> Elab<'a> {
    pub fn call_libdevice_int(&mut self, name: &str, fname: &str, args: &CallArgs<'a>) -> R<Option<Tv>> {
        let span = args.span;
        let params: &'static str = match name {
            "popc" | "clz" | "brev" | "ffs" | "float_as_uint" | "uint_as_float" | "double2hiint" | "double2loint"
            | "llrint" | "llround" => "arg0",
            "mulhi" | "mul24" | "hadd" | "rhadd" | "hiloint2double" => "arg0, arg1",
            "sad" | "byte_perm" => "arg0, arg1, arg2",
            _ => return Ok(None),
        };
        let b = self.bind(fname, params, args.clone())?;
        let mut xs = Vec::new();
        for p in params.split(", ") {
            xs.push(self.tensor_arg(b.req(p), fname, p)?);
        }
        let allowed: &[ScalarType] = match name {
            "popc" | "clz" | "brev" | "ffs" | "mulhi" => &[I32, U32, I64, U64],
            "mul24" | "hadd" | "rhadd" | "sad" => &[I32, U32],
            "byte_perm" | "hiloint2double" => &[I32],
            "float_as_uint" => &[F32],
            "llrint" | "llround" => &[F32, F64],
            "uint_as_float" => &[U32],
            _ => &[F64],
        };
        for (x, p) in xs.iter().zip(params.split(", ")) {
            let allowed = if name == "sad" && p == "arg2" { &[U32][..] } else { allowed };
            self.check_dtype(x, allowed, fname, b.req(p).span)?;
        }
        if xs.len() >= 2 && name != "sad" {
            let (x, y) = self.broadcast_pair(xs[0].clone(), xs[1].clone(), span)?;
            if x.ty != y.ty {
                return Err(self.err(span, format!("`{fname}` needs operands of one type, got {} and {}", x.ty, y.ty)));
            }
            xs[0] = x;
            xs[1] = y;
        }
        let x = xs[0].clone();
        let to_i32 = |e: &mut Self, v: Tv| e.cast(v, Dtype::Scalar(I32), span);
        Ok(Some(match name {
            "popc" | "clz" => {
                let op = if name == "popc" { UnOp::Popc } else { UnOp::Clz };
                let r = self.un(op, x, span)?;
                to_i32(self, r)?
            }
            "brev" => self.un(UnOp::Brev, x, span)?,
            "ffs" => {
                // The 1-based position of the lowest set bit: popc(x ^ (x − 1)), 0 for x = 0.
                let one = self.int_like(&x, 1, span)?;
                let m = self.arith(BinOp::Sub, x.clone(), one, span)?;
                let low = self.arith(BinOp::Xor, x.clone(), m, span)?;
                let n = self.un(UnOp::Popc, low, span)?;
                let zero = self.int_like(&x, 0, span)?;
                let z = self.cmp_int(CmpPred::Eq, x, zero.clone(), span)?;
                let ty = n.ty.clone();
                let r = self.emit1(Op::Select, &[z, zero, n], ty, span)?;
                to_i32(self, r)?
            }
            "mulhi" => {
                let op = if x.scalar().is_some_and(|s| s.is_unsigned_int()) { BinOp::UMulHi } else { BinOp::MulHi };
                self.arith(op, x, xs[1].clone(), span)?
            }
            "mul24" => {
                // The low 24 bits (sign-extended when signed: `<< 8` then an arithmetic `>> 8`).
                let low24 = |e: &mut Self, v: Tv| -> R<Tv> {
                    let k = e.int_like(&v, 8, span)?;
                    let up = e.arith(BinOp::Shl, v, k.clone(), span)?;
                    e.arith(BinOp::Shr, up, k, span)
                };
                let (a, c) = (low24(self, x)?, low24(self, xs[1].clone())?);
                self.arith(BinOp::Mul, a, c, span)?
            }
            "hadd" | "rhadd" => {
                // (x & y) + ((x ^ y) >> 1) rounds down; (x | y) − ((x ^ y) >> 1) up; neither overflows.
                let y = xs[1].clone();
                let one = self.int_like(&x, 1, span)?;
                let d = self.arith(BinOp::Xor, x.clone(), y.clone(), span)?;
                let h = self.arith(BinOp::Shr, d, one, span)?;
                if name == "hadd" {
                    let a = self.arith(BinOp::And, x, y, span)?;
                    self.arith(BinOp::Add, a, h, span)?
                } else {
                    let o = self.arith(BinOp::Or, x, y, span)?;
                    self.arith(BinOp::Sub, o, h, span)?
                }
            }
            "sad" => {
                // |x − y| (exact as the wrapped difference, read unsigned) + z.
                let (x, y) = self.broadcast_pair(x, xs[1].clone(), span)?;
                if x.ty != y.ty {
                    return Err(
                        self.err(span, format!("`{fname}` needs x and y of one type, got {} and {}", x.ty, y.ty))
                    );
                }
                let lt = self.cmp_int(CmpPred::Lt, x.clone(), y.clone(), span)?;
                let a = self.arith(BinOp::Sub, y.clone(), x.clone(), span)?;
                let c = self.arith(BinOp::Sub, x, y, span)?;
                let ty = a.ty.clone();
                let d = self.emit1(Op::Select, &[lt, a, c], ty, span)?;
                let d = self.bitcast(d, Dtype::Scalar(U32), span)?;
                let (d, z) = self.broadcast_pair(d, xs[2].clone(), span)?;
                self.arith(BinOp::Add, d, z, span)?
            }
            "byte_perm" => self.byte_perm(x, xs[1].clone(), xs[2].clone(), span)?,
            "llrint" | "llround" => {
                let op = if name == "llrint" { UnOp::Rint } else { UnOp::Round };
                let r = self.un(op, x, span)?;
                self.cast(r, Dtype::Scalar(I64), span)?
            }
            "float_as_uint" => self.bitcast(x, Dtype::Scalar(U32), span)?,
            "uint_as_float" => self.bitcast(x, Dtype::Scalar(F32), span)?,
            "double2hiint" | "double2loint" => {
                let bits = self.bitcast(x, Dtype::Scalar(I64), span)?;
                let bits = if name == "double2hiint" {
                    let k = self.int_like(&bits, 32, span)?;
                    self.arith(BinOp::Shr, bits, k, span)?
                } else {
                    bits
                };
                to_i32(self, bits)?
            }
            _ => {
                // hiloint2double(hi, lo): the f64 whose high word is hi and low word lo.
                let hi = self.cast(x, Dtype::Scalar(I64), span)?;
                let k = self.int_like(&hi, 32, span)?;
                let hi = self.arith(BinOp::Shl, hi, k, span)?;
                let lo = self.bitcast(xs[1].clone(), Dtype::Scalar(U32), span)?;
                let lo = self.cast(lo, Dtype::Scalar(I64), span)?;
                let v = self.arith(BinOp::Or, hi, lo, span)?;
                self.bitcast(v, Dtype::Scalar(F64), span)?
            }
        }))
    }

    /// PTX `prmt.b32` in its default mode: byte i of the result is byte `(s >> 4i) & 7` of the 8 bytes y:x.
    fn byte_perm(&mut self, x: Tv, y: Tv, s: Tv, span: Span) -> R<Tv> {
        let (x, y) = self.broadcast_pair(x, y, span)?;
        let (x, s) = self.broadcast_pair(x, s, span)?;
        let (y, _) = self.broadcast_pair(y, s.clone(), span)?;
        let wide = |e: &mut Self, v: Tv| -> R<Tv> {
            let u = e.bitcast(v, Dtype::Scalar(U32), span)?;
            e.cast(u, Dtype::Scalar(U64), span)
        };
        let (xw, yw, sw) = (wide(self, x)?, wide(self, y)?, wide(self, s)?);
        let k32 = self.int_like(&yw, 32, span)?;
        let hi = self.arith(BinOp::Shl, yw, k32, span)?;
        let v = self.arith(BinOp::Or, hi, xw, span)?;
        let (seven, ff, eight) =
            (self.int_like(&sw, 7, span)?, self.int_like(&sw, 0xff, span)?, self.int_like(&sw, 8, span)?);
        let mut r = self.int_like(&sw, 0, span)?;
        for i in 0..4 {
            let sh = self.int_like(&sw, 4 * i, span)?;
            let sel = self.arith(BinOp::Shr, sw.clone(), sh, span)?;
            let sel = self.arith(BinOp::And, sel, seven.clone(), span)?;
            let at = self.arith(BinOp::Mul, sel, eight.clone(), span)?;
            let byte = self.arith(BinOp::Shr, v.clone(), at, span)?;
            let byte = self.arith(BinOp::And, byte, ff.clone(), span)?;
            let to = self.int_like(&sw, 8 * i, span)?;
            let byte = self.arith(BinOp::Shl, byte, to, span)?;
            r = self.arith(BinOp::Or, r, byte, span)?;
        }
        let r = self.cast(r, Dtype::Scalar(U32), span)?;
        self.bitcast(r, Dtype::Scalar(I32), span)
    }

    /// The integer constant `v` in the type of `like`.
    fn int_like(&mut self, like: &Tv, v: i64, span: Span) -> R<Tv> {
        self.constant(Const::Int(v), like.ty.clone(), span)
    }

    fn cmp_int(&mut self, pred: CmpPred, x: Tv, y: Tv, span: Span) -> R<Tv> {
        let ty = x.ty.with_elem(tessel_tile::Elem::Scalar(ScalarType::I1));
        self.emit1(Op::Cmp(pred), &[x, y], ty, span)
    }
}
