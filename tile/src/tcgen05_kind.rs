//! The dense (not block-scaled) kinds of `tcgen05.mma`: which kind multiplies a pair of operand types into an
//! accumulator type, and the per-kind facts the verifier, auto mode, codegen and the interpreter share.
//!
//! Every kind reads 32 bytes of K per instruction (PTX ISA, "Matrix shape"): `kind::f16` (f16 or bf16 into
//! f32) 16 elements, `kind::tf32` (f32 read as tf32, into f32) 8, `kind::f8f6f4` (e4m3/e5m2 in any pairing, into
//! f32) 32, `kind::i8` (s8 into s32) 32. The 16-bit kind reads operands K-major or MN-major; the others are
//! staged and read K-major only (the layout wgmma requires of them, and the one their instruction tiles are
//! checked for here).

use crate::types::ScalarType::{self, *};

/// A dense `tcgen05.mma` kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tcgen05Kind {
    F16,
    Tf32,
    F8f6f4,
    I8,
}

impl Tcgen05Kind {
    /// The kind multiplying `a` by `b` into an accumulator of `acc`, or why there is none.
    pub fn of(a: ScalarType, b: ScalarType, acc: ScalarType) -> Result<Tcgen05Kind, String> {
        let fp8 = |t| matches!(t, F8E4M3 | F8E5M2);
        match (a, b, acc) {
            (F16, F16, ScalarType::F32) | (BF16, BF16, ScalarType::F32) => Ok(Tcgen05Kind::F16),
            (ScalarType::F32, ScalarType::F32, ScalarType::F32) => Ok(Tcgen05Kind::Tf32),
            (x, y, ScalarType::F32) if fp8(x) && fp8(y) => Ok(Tcgen05Kind::F8f6f4),
            (ScalarType::I8, ScalarType::I8, I32) => Ok(Tcgen05Kind::I8),
            _ => Err(format!(
                "{a} x {b} -> {acc}: a dense tcgen05.mma multiplies f16 x f16 or bf16 x bf16 into f32 (kind::f16), \
                 f32 x f32 into f32 (kind::tf32), e4m3/e5m2 x e4m3/e5m2 into f32 (kind::f8f6f4) or i8 x i8 into \
                 i32 (kind::i8)"
            )),
        }
    }

    /// The PTX spelling after `kind::`.
    pub fn name(self) -> &'static str {
        match self {
            Tcgen05Kind::F16 => "f16",
            Tcgen05Kind::Tf32 => "tf32",
            Tcgen05Kind::F8f6f4 => "f8f6f4",
            Tcgen05Kind::I8 => "i8",
        }
    }

    /// K per instruction, in elements of `elem` (32 bytes).
    pub fn k_step(self, elem: ScalarType) -> u32 {
        256 / elem.bits()
    }

    /// The step of an instruction's N for an `m`-row tile: 8 for M 64 and 16 for M 128, except `kind::i8`,
    /// which takes multiples of 16 here at either M (its M 64 shapes are sparser past N 32).
    pub fn n_step(self, m: u32) -> u32 {
        if m == 64 && self != Tcgen05Kind::I8 { 8 } else { 16 }
    }

    /// Whether operands may be MN-major in shared memory (16-bit kinds only here).
    pub fn mn_major_ok(self) -> bool {
        self == Tcgen05Kind::F16
    }

    /// Whether A may be read from tensor memory (the 16-bit kind only here).
    pub fn a_in_tmem_ok(self) -> bool {
        self == Tcgen05Kind::F16
    }

    /// The instruction descriptor's D format (bits 4-5): F32 1, S32 2.
    pub fn d_format(self) -> u32 {
        if self == Tcgen05Kind::I8 { 2 } else { 1 }
    }

    /// The instruction descriptor's code of operand type `t` (bits 7-9 for A, 10-12 for B): kind::f16 f16 0,
    /// bf16 1; kind::tf32 2; kind::f8f6f4 E4M3 0, E5M2 1; kind::i8 u8 0, s8 1.
    pub fn format(self, t: ScalarType) -> u32 {
        match (self, t) {
            (Tcgen05Kind::F16, BF16) => 1,
            (Tcgen05Kind::Tf32, _) => 2,
            (Tcgen05Kind::F8f6f4, F8E5M2) => 1,
            (Tcgen05Kind::I8, ScalarType::I8) => 1,
            _ => 0,
        }
    }

    /// The instruction descriptor (PTX ISA, "Instruction descriptor" of the kinds f16, tf32, f8f6f4 and i8):
    /// dense, D format (bits 4-5), A and B formats (7-9, 10-12), no negation, A and B major (15, 16: 1 =
    /// MN-major), N >> 3 (17-22), M >> 4 (24-28).
    pub fn idesc(self, a: ScalarType, b: ScalarType, m: u32, n: u32, a_mn_major: bool, b_mn_major: bool) -> u32 {
        (self.d_format() << 4)
            | (self.format(a) << 7)
            | (self.format(b) << 10)
            | ((a_mn_major as u32) << 15)
            | ((b_mn_major as u32) << 16)
            | ((n >> 3) << 17)
            | ((m >> 4) << 24)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_of_operand_and_accumulator_types() {
        assert_eq!(Tcgen05Kind::of(F16, F16, ScalarType::F32), Ok(Tcgen05Kind::F16));
        assert_eq!(Tcgen05Kind::of(ScalarType::F32, ScalarType::F32, ScalarType::F32), Ok(Tcgen05Kind::Tf32));
        assert_eq!(Tcgen05Kind::of(F8E5M2, F8E4M3, ScalarType::F32), Ok(Tcgen05Kind::F8f6f4));
        assert_eq!(Tcgen05Kind::of(ScalarType::I8, ScalarType::I8, I32), Ok(Tcgen05Kind::I8));
        assert!(Tcgen05Kind::of(F16, BF16, ScalarType::F32).is_err());
        assert!(Tcgen05Kind::of(F16, F16, F16).is_err());
        assert!(Tcgen05Kind::of(ScalarType::I8, ScalarType::I8, ScalarType::F32).is_err());
        assert_eq!([F16, ScalarType::F32, F8E4M3, ScalarType::I8].map(|t| Tcgen05Kind::F16.k_step(t)), [16, 8, 32, 32]);
    }

    /// The descriptors, bit by bit against the ISA's table (and the examples of the reference's §7.3).
    #[test]
    fn instruction_descriptors_of_each_kind_are_the_documented_words() {
        use Tcgen05Kind as K;
        // kind::f16: f16 M128 N128 0x08200010; bf16 M128 N256 0x08400490.
        assert_eq!(K::F16.idesc(F16, F16, 128, 128, false, false), 0x0820_0010);
        assert_eq!(K::F16.idesc(BF16, BF16, 128, 256, false, false), 0x0840_0490);
        // kind::tf32, M128 N128: A and B format 2 (0x100 | 0x800), D F32: 0x08200910.
        let f32t = ScalarType::F32;
        assert_eq!(K::Tf32.idesc(f32t, f32t, 128, 128, false, false), 0x0820_0910);
        // kind::f8f6f4: e4m3 x e4m3 M128 N256 0x08400010; e5m2 x e5m2 M128 N128 0x08200490; e4m3 x e5m2 M64 N64.
        assert_eq!(K::F8f6f4.idesc(F8E4M3, F8E4M3, 128, 256, false, false), 0x0840_0010);
        assert_eq!(K::F8f6f4.idesc(F8E5M2, F8E5M2, 128, 128, false, false), 0x0820_0490);
        assert_eq!(K::F8f6f4.idesc(F8E4M3, F8E5M2, 64, 64, false, false), 0x0410_0410);
        // kind::i8: D S32 (0x20), s8 x s8 (0x80 | 0x400), M128 N128: 0x082004a0; M64 N32: 0x040804a0.
        let i8t = ScalarType::I8;
        assert_eq!(K::I8.idesc(i8t, i8t, 128, 128, false, false), 0x0820_04a0);
        assert_eq!(K::I8.idesc(i8t, i8t, 64, 32, false, false), 0x0408_04a0);
    }
}
