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

use crate::elab::args::Bound;
use crate::elab::names::LIBDEVICE;
use crate::elab::registry::{Handler, Registry};
use crate::elab::value::{Dtype, Tv, Value};
use crate::elab::{Elab, R};
use crate::span::Span;

use ScalarType::{F32, F64, I32, I64, U32, U64};

/// The integer and bit functions.
#[derive(Clone, Copy, PartialEq, Eq)]
enum IntFn {
    Popc,
    Clz,
    Brev,
    Ffs,
    Mulhi,
    Mul24,
    Sad,
    Hadd,
    Rhadd,
    BytePerm,
    FloatAsUint,
    UintAsFloat,
    Double2Hiint,
    Double2Loint,
    Hiloint2double,
    Llrint,
    Llround,
}

pub(super) fn register(r: &mut Registry) {
    use IntFn::*;
    macro_rules! int_fn {
        ($($name:literal => $f:ident),* $(,)?) => {
            $( r.add(LIBDEVICE, $name, Handler::Bound($f.sig(), |e, b| e.libdevice_int(b, $f).map(Value::Tensor))); )*
        };
    }
    int_fn! {
        "popc" => Popc, "clz" => Clz, "brev" => Brev, "ffs" => Ffs, "mulhi" => Mulhi, "mul24" => Mul24, "sad" => Sad,
        "hadd" => Hadd, "rhadd" => Rhadd, "byte_perm" => BytePerm, "float_as_uint" => FloatAsUint,
        "uint_as_float" => UintAsFloat, "double2hiint" => Double2Hiint, "double2loint" => Double2Loint,
        "hiloint2double" => Hiloint2double, "llrint" => Llrint, "llround" => Llround,
    }
}

/// The parameters of a function of one, two or three operands.
const PARAMS: [&str; 3] = ["arg0", "arg1", "arg2"];

impl IntFn {
    /// Its signature: `arg0`... by its arity.
    fn sig(self) -> &'static str {
        ["arg0", "arg0, arg1", "arg0, arg1, arg2"][self.arity() - 1]
    }

    /// How many operands it takes.
    fn arity(self) -> usize {
        match self {
            IntFn::Mulhi | IntFn::Mul24 | IntFn::Hadd | IntFn::Rhadd | IntFn::Hiloint2double => 2,
            IntFn::Sad | IntFn::BytePerm => 3,
            _ => 1,
        }
    }

    /// The types its operands may have (`sad`'s third is uint32).
    fn allowed(self) -> &'static [ScalarType] {
        match self {
            IntFn::Popc | IntFn::Clz | IntFn::Brev | IntFn::Ffs | IntFn::Mulhi => &[I32, U32, I64, U64],
            IntFn::Mul24 | IntFn::Hadd | IntFn::Rhadd | IntFn::Sad => &[I32, U32],
            IntFn::BytePerm | IntFn::Hiloint2double => &[I32],
            IntFn::FloatAsUint => &[F32],
            IntFn::Llrint | IntFn::Llround => &[F32, F64],
            IntFn::UintAsFloat => &[U32],
            IntFn::Double2Hiint | IntFn::Double2Loint => &[F64],
        }
    }
}

impl<'a> Elab<'a> {
    /// The integer or bit function `f` of the arguments bound to `arg0`...
    fn libdevice_int(&mut self, b: Bound<'a>, f: IntFn) -> R<Tv> {
        let (fname, span) = (&b.fname, b.span);
        let params = &PARAMS[..f.arity()];
        let mut xs = Vec::new();
        for p in params {
            xs.push(self.tensor_arg(b.req(p), fname, p)?);
        }
        for (x, p) in xs.iter().zip(params) {
            let allowed = if f == IntFn::Sad && *p == "arg2" { &[U32][..] } else { f.allowed() };
            self.check_dtype(x, allowed, fname, b.req(p).span)?;
        }
        if xs.len() >= 2 && f != IntFn::Sad {
            let (x, y) = self.broadcast_pair(xs[0].clone(), xs[1].clone(), span)?;
            if x.ty != y.ty {
                return Err(self.err(span, format!("`{fname}` needs operands of one type, got {} and {}", x.ty, y.ty)));
            }
            xs[0] = x;
            xs[1] = y;
        }
        let x = xs[0].clone();
        let to_i32 = |e: &mut Self, v: Tv| e.cast(v, Dtype::Scalar(I32), span);
        Ok(match f {
            IntFn::Popc | IntFn::Clz => {
                let op = if f == IntFn::Popc { UnOp::Popc } else { UnOp::Clz };
                let r = self.un(op, x, span)?;
                to_i32(self, r)?
            }
            IntFn::Brev => self.un(UnOp::Brev, x, span)?,
            IntFn::Ffs => {
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
            IntFn::Mulhi => {
                let op = if x.scalar().is_some_and(|s| s.is_unsigned_int()) { BinOp::UMulHi } else { BinOp::MulHi };
                self.arith(op, x, xs[1].clone(), span)?
            }
            IntFn::Mul24 => {
                // The low 24 bits (sign-extended when signed: `<< 8` then an arithmetic `>> 8`).
                let low24 = |e: &mut Self, v: Tv| -> R<Tv> {
                    let k = e.int_like(&v, 8, span)?;
                    let up = e.arith(BinOp::Shl, v, k.clone(), span)?;
                    e.arith(BinOp::Shr, up, k, span)
                };
                let (a, c) = (low24(self, x)?, low24(self, xs[1].clone())?);
                self.arith(BinOp::Mul, a, c, span)?
            }
            IntFn::Hadd | IntFn::Rhadd => {
                // (x & y) + ((x ^ y) >> 1) rounds down; (x | y) − ((x ^ y) >> 1) up; neither overflows.
                let y = xs[1].clone();
                let one = self.int_like(&x, 1, span)?;
                let d = self.arith(BinOp::Xor, x.clone(), y.clone(), span)?;
                let h = self.arith(BinOp::Shr, d, one, span)?;
                if f == IntFn::Hadd {
                    let a = self.arith(BinOp::And, x, y, span)?;
                    self.arith(BinOp::Add, a, h, span)?
                } else {
                    let o = self.arith(BinOp::Or, x, y, span)?;
                    self.arith(BinOp::Sub, o, h, span)?
                }
            }
            IntFn::Sad => {
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
            IntFn::BytePerm => self.byte_perm(x, xs[1].clone(), xs[2].clone(), span)?,
            IntFn::Llrint | IntFn::Llround => {
                let op = if f == IntFn::Llrint { UnOp::Rint } else { UnOp::Round };
                let r = self.un(op, x, span)?;
                self.cast(r, Dtype::Scalar(I64), span)?
            }
            IntFn::FloatAsUint => self.bitcast(x, Dtype::Scalar(U32), span)?,
            IntFn::UintAsFloat => self.bitcast(x, Dtype::Scalar(F32), span)?,
            IntFn::Double2Hiint | IntFn::Double2Loint => {
                let bits = self.bitcast(x, Dtype::Scalar(I64), span)?;
                let bits = if f == IntFn::Double2Hiint {
                    let k = self.int_like(&bits, 32, span)?;
                    self.arith(BinOp::Shr, bits, k, span)?
                } else {
                    bits
                };
                to_i32(self, bits)?
            }
            IntFn::Hiloint2double => {
                // hiloint2double(hi, lo): the f64 whose high word is hi and low word lo.
                let hi = self.cast(x, Dtype::Scalar(I64), span)?;
                let k = self.int_like(&hi, 32, span)?;
                let hi = self.arith(BinOp::Shl, hi, k, span)?;
                let lo = self.bitcast(xs[1].clone(), Dtype::Scalar(U32), span)?;
                let lo = self.cast(lo, Dtype::Scalar(I64), span)?;
                let v = self.arith(BinOp::Or, hi, lo, span)?;
                self.bitcast(v, Dtype::Scalar(F64), span)?
            }
        })
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
