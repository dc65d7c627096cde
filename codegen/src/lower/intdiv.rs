//! Integer `/` and `%` by a constant power of two, as shifts and masks.
//!
//! ptxas does not strength-reduce `div.s32`/`rem.s32` by a constant, not even by an immediate power of two: it
//! emits its general division (`I2F`, `MUFU.RCP`, `F2I` and a fix-up, about twenty instructions on a long
//! latency chain). LLVM's NVPTX backend does the reduction before ptxas sees the code, so Triton's kernels get
//! four shifts where tessel's got the division: every `tl.cdiv(M, BLOCK_M)` in a matmul's prologue, and
//! `offs // 2^k` index arithmetic. Keeping the trip count of a loop out of the `MUFU` path also lets ptxas keep
//! it in a uniform register.
//!
//! The sequences round toward zero, as `div.s`/`rem.s` do (the remainder takes the dividend's sign):
//! - signed `x / 2^k`: `(x + ((x >> (w-1)) >>> (w-k))) >> k` (the bias `2^k - 1` only for negative `x`);
//! - signed `x % 2^k`: `x - ((x + bias) & -2^k)`;
//! - unsigned: `x >>> k` and `x & (2^k - 1)`.
//!
//! Only 32- and 64-bit registers reach here (narrower integers are widened first, as for the division itself).

use tessel_tile::ir::ValueId;
use tessel_tile::ops::{BinOp, Const, Op};
use tessel_tile::types::ScalarType;

use super::Lower;
use crate::ptx::{Reg, RegClass};

/// `k` when `v` is the constant `2^k` with `k ≥ 1` (division by 1 is folded away before codegen).
pub(super) fn pow2_divisor(l: &Lower, v: ValueId) -> Option<u32> {
    let tessel_tile::ir::ValueDef::Result(o, 0) = l.f.value(v).def else { return None };
    match l.f.op(o).op {
        Op::Constant(Const::Int(c)) if c > 1 && (c as u64).is_power_of_two() => Some(c.trailing_zeros()),
        _ => None,
    }
}

/// `a / 2^k` (`op` = Div) or `a % 2^k` (`op` = Rem) on a register of `bits` (32 or 64) holding a `c` value.
pub(super) fn emit(l: &mut Lower, op: BinOp, c: ScalarType, bits: u32, a: Reg, k: u32) -> Reg {
    debug_assert!(matches!(op, BinOp::Div | BinOp::Rem) && (bits == 32 || bits == 64) && k >= 1 && k < bits);
    let class = if bits == 64 { RegClass::B64 } else { RegClass::B32 };
    let d = l.b.reg(class);
    let (signed, unsigned, b) = (format!("s{bits}"), format!("u{bits}"), format!("b{bits}"));
    // The mask literal at the register's width: `-2^k` as two's complement is `!(2^k - 1)`.
    let low = (1u64 << k) - 1;
    let (low_imm, high_imm) =
        if bits == 64 { (low as i64, !low as i64) } else { (i64::from(low as u32), i64::from(!(low as u32) as i32)) };
    if !c.is_signed_int() {
        match op {
            BinOp::Div => l.b.op(format!("shr.{unsigned}"), d, (a, k)),
            _ => l.b.op(format!("and.{b}"), d, (a, low_imm)),
        }
        return d;
    }
    let (sign, bias, biased) = (l.b.reg(class), l.b.reg(class), l.b.reg(class));
    l.b.op(format!("shr.{signed}"), sign, (a, bits - 1));
    l.b.op(format!("shr.{unsigned}"), bias, (sign, bits - k));
    l.b.op(format!("add.{signed}"), biased, (a, bias));
    match op {
        BinOp::Div => l.b.op(format!("shr.{signed}"), d, (biased, k)),
        _ => {
            let multiple = l.b.reg(class);
            l.b.op(format!("and.{b}"), multiple, (biased, high_imm));
            l.b.op(format!("sub.{signed}"), d, (a, multiple));
        }
    }
    d
}
