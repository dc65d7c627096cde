//! The CPU model: the same operations on `f32`/`f64` values (Rust's float ops round to nearest even and keep
//! subnormals, as the PTX forms without `.ftz` do; the `_ftz` forms flush f32 subnormal operands and results).

use crate::FloatOps;
use crate::rounding::{Arith, Dir, Format, flush_f32, fma as fma_dir, libdevice};

macro_rules! model {
    ($name:ident, $f:ty, $u:ty, $s:ty, $t:expr) => {
        pub struct $name;

        impl FloatOps for $name {
            type F = $f;
            type I = $u;
            type P = bool;

            fn fc(&mut self, v: f64) -> $f {
                v as $f
            }
            fn fbits(&mut self, bits: u64) -> $f {
                <$f>::from_bits(bits as $u)
            }
            fn ic(&mut self, v: u64) -> $u {
                v as $u
            }
            fn add(&mut self, a: $f, b: $f) -> $f {
                a + b
            }
            fn sub(&mut self, a: $f, b: $f) -> $f {
                a - b
            }
            fn mul(&mut self, a: $f, b: $f) -> $f {
                a * b
            }
            fn div(&mut self, a: $f, b: $f) -> $f {
                a / b
            }
            fn sqrt(&mut self, a: $f) -> $f {
                a.sqrt()
            }
            fn fma(&mut self, a: $f, b: $f, c: $f) -> $f {
                a.mul_add(b, c)
            }
            fn neg(&mut self, a: $f) -> $f {
                -a
            }
            fn abs(&mut self, a: $f) -> $f {
                a.abs()
            }
            fn rni(&mut self, a: $f) -> $f {
                a.round_ties_even()
            }
            fn trunc(&mut self, a: $f) -> $f {
                a.trunc()
            }
            fn f2i(&mut self, a: $f) -> $u {
                a.round_ties_even() as $s as $u
            }
            fn i2f(&mut self, a: $u) -> $f {
                a as $s as $f
            }
            fn u2f(&mut self, a: $u) -> $f {
                a as $f
            }
            fn f_to_bits(&mut self, a: $f) -> $u {
                a.to_bits()
            }
            fn bits_to_f(&mut self, a: $u) -> $f {
                <$f>::from_bits(a)
            }
            fn iadd(&mut self, a: $u, b: $u) -> $u {
                a.wrapping_add(b)
            }
            fn isub(&mut self, a: $u, b: $u) -> $u {
                a.wrapping_sub(b)
            }
            fn iand(&mut self, a: $u, b: $u) -> $u {
                a & b
            }
            fn ior(&mut self, a: $u, b: $u) -> $u {
                a | b
            }
            fn shl(&mut self, a: $u, n: u32) -> $u {
                a << n
            }
            fn shr(&mut self, a: $u, n: u32) -> $u {
                a >> n
            }
            fn sar(&mut self, a: $u, n: u32) -> $u {
                ((a as $s) >> n) as $u
            }
            fn shl_v(&mut self, a: $u, n: $u) -> $u {
                if n < <$u>::BITS as $u { a << n } else { 0 }
            }
            fn shr_v(&mut self, a: $u, n: $u) -> $u {
                if n < <$u>::BITS as $u { a >> n } else { 0 }
            }
            fn urem(&mut self, a: $u, b: $u) -> $u {
                a % b
            }
            fn umulhi(&mut self, a: $u, b: $u) -> $u {
                ((a as u128 * b as u128) >> <$u>::BITS) as $u
            }
            fn imul(&mut self, a: $u, b: $u) -> $u {
                a.wrapping_mul(b)
            }
            fn slt(&mut self, a: $u, b: $u) -> bool {
                (a as $s) < (b as $s)
            }
            fn ult(&mut self, a: $u, b: $u) -> bool {
                a < b
            }
            fn umin(&mut self, a: $u, b: $u) -> $u {
                a.min(b)
            }
            fn lt(&mut self, a: $f, b: $f) -> bool {
                a < b
            }
            fn le(&mut self, a: $f, b: $f) -> bool {
                a <= b
            }
            fn eq(&mut self, a: $f, b: $f) -> bool {
                a == b
            }
            fn ne(&mut self, a: $f, b: $f) -> bool {
                a != b
            }
            fn is_nan(&mut self, a: $f) -> bool {
                a.is_nan()
            }
            fn sel(&mut self, p: bool, a: $f, b: $f) -> $f {
                if p { a } else { b }
            }
            fn isel(&mut self, p: bool, a: $u, b: $u) -> $u {
                if p { a } else { b }
            }
            fn and(&mut self, a: bool, b: bool) -> bool {
                a && b
            }
            fn or(&mut self, a: bool, b: bool) -> bool {
                a || b
            }
            fn not(&mut self, a: bool) -> bool {
                !a
            }
            fn fma_ftz(&mut self, a: $f, b: $f, c: $f) -> $f {
                let f = |v: $f| Self::flush(v);
                f(f(a).mul_add(f(b), f(c)))
            }
            fn fma_rm_ftz(&mut self, a: $f, b: $f, c: $f) -> $f {
                let f = |v: $f| Self::flush(v);
                f(fma_dir(Dir::Down, $t, f(a) as f64, f(b) as f64, f(c) as f64) as $f)
            }
            fn sat_ftz(&mut self, a: $f) -> $f {
                let a = Self::flush(a);
                if a.is_nan() || a <= 0.0 { 0.0 } else { a.min(1.0) }
            }
            fn ex2_approx_ftz(&mut self, a: $f) -> $f {
                Self::flush((Self::flush(a) as f64).exp2() as $f)
            }
            fn lg2_approx_ftz(&mut self, a: $f) -> $f {
                Self::flush((Self::flush(a) as f64).log2() as $f)
            }
            fn abs_ftz(&mut self, a: $f) -> $f {
                Self::flush(a.abs())
            }
            fn mul_ftz(&mut self, a: $f, b: $f) -> $f {
                Self::flush(Self::flush(a) * Self::flush(b))
            }
            fn ixor(&mut self, a: $u, b: $u) -> $u {
                a ^ b
            }
            fn f32_rni_scaled(&mut self, a: $f, k: u32) -> $f {
                ((a as f32) * f32::from_bits(k)).round_ties_even() as $f
            }
            fn ex2_f32_widened(&mut self, n: $f) -> $f {
                let n = n as f32;
                // 2^n for an integer n: exact, flushed below the smallest normal.
                let r = if n.is_nan() { f32::NAN } else { (n as f64).exp2() as f32 };
                flush_f32(r as f64) as $f
            }
            fn s64_scaled_to_f32(&mut self, hi: $u, lo: $u, scale: u64) -> $f {
                let v = ((hi as u64) << 32 | lo as u64 & 0xffff_ffff) as i64;
                (v as f64 * f64::from_bits(scale)) as f32 as $f
            }
            fn rcp_approx_ftz(&mut self, a: $f) -> $f {
                Self::flush_ftz((1.0 / Self::flush_ftz(a) as f64) as $f)
            }
            fn arith_ftz(&mut self, op: Arith, dir: Dir, a: $f, b: $f) -> $f {
                libdevice(op, dir, $t, a as f64, b as f64) as $f
            }
            fn sqrt_approx_ftz(&mut self, a: $f) -> $f {
                Self::flush(Self::flush(a).sqrt())
            }
            fn rsqrt_approx_ftz(&mut self, a: $f) -> $f {
                let a = Self::flush_ftz(a);
                // 1/√a rounded once (through f64 at 32 bits; at 64 bits the division rounds twice at worst
                // by half an ulp, inside the unit's own error).
                Self::flush_ftz(if $t == Format::F32 { (1.0 / (a as f64).sqrt()) as $f } else { 1.0 / a.sqrt() })
            }
            fn smin(&mut self, a: $u, b: $u) -> $u {
                (a as $s).min(b as $s) as $u
            }
            fn smax(&mut self, a: $u, b: $u) -> $u {
                (a as $s).max(b as $s) as $u
            }
            fn clz(&mut self, a: $u) -> $u {
                a.leading_zeros() as $u
            }
            fn ieq(&mut self, a: $u, b: $u) -> bool {
                a == b
            }
            fn umax(&mut self, a: $u, b: $u) -> $u {
                a.max(b)
            }
            fn fmin(&mut self, a: $f, b: $f) -> $f {
                a.min(b)
            }
            fn fmax(&mut self, a: $f, b: $f) -> $f {
                a.max(b)
            }
            fn floor_ftz(&mut self, a: $f) -> $f {
                Self::flush(a).floor()
            }
            fn abs_as_f32(&mut self, a: $f) -> $f {
                flush_f32(((a as f32).abs()) as f64) as $f
            }
            fn rsqrt_approx(&mut self, a: $f) -> $f {
                1.0 / a.sqrt()
            }
            fn div_approx_ftz(&mut self, a: $f, b: $f) -> $f {
                crate::approx::div(a as f64, b as f64) as $f
            }
            fn f32_exp2_scaled_log2(&mut self, a: $f, k: u32) -> $f {
                let l = (flush_f32((a as f32) as f64).log2()) as f32;
                let t = l * f32::from_bits(k);
                flush_f32((t as f64).exp2()) as f32 as $f
            }
        }

        impl $name {
            /// A subnormal read as zero at 32 bits.
            fn flush(v: $f) -> $f {
                if $t == Format::F32 { flush_f32(v as f64) as $f } else { v }
            }
            /// A subnormal read as zero at either width: the `.ftz` of `rcp.approx.ftz.f64` and
            /// `rsqrt.approx.ftz.f64`, the only f64 instructions with one.
            fn flush_ftz(v: $f) -> $f {
                if v.is_subnormal() { (0.0 as $f).copysign(v) } else { v }
            }
        }
    };
}

model!(M32, f32, u32, i32, Format::F32);
model!(M64, f64, u64, i64, Format::F64);
