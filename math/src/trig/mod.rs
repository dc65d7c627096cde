//! Trigonometric functions and their argument reductions: libdevice's f32 `sinf`/`cosf` (Payne–Hanek in 32-bit
//! words), `sinpif`/`cospif`, f64 `sinpi`/`cospi`, and its f64 reduction (Cody–Waite, then Payne–Hanek), which its
//! f64 Bessel functions inline; tessel's own f64 `sin`/`cos` ([`sincos64`]). One table of 2/π serves the three
//! Payne–Hanek reductions.

pub mod atan64;
pub mod reduce64;
pub mod sincos32;
pub mod sincos64;
pub mod sinpi32;
pub mod sinpi64;

/// The bits of 2/π after the binary point, t_1 ... t_1216, the most significant word first: the one table every
/// Payne–Hanek reduction here reads, each through its own view ([`zero_padded`], [`low_word_first`],
/// [`low_half_first`]; libdevice keeps the same bits as `__cudart_i2opi_d` and `__cudart_i2opi_f`).
pub(crate) const TWO_OVER_PI: [u64; 19] = [
    0xa2f9_836e_4e44_1529,
    0xfc27_57d1_f534_ddc0,
    0xdb62_9599_3c43_9041,
    0xfe51_63ab_debb_c561,
    0xb724_6e3a_424d_d2e0,
    0x0649_2eea_09d1_921c,
    0xfe1d_eb1c_b129_a73e,
    0xe882_35f5_2ebb_4484,
    0xe99c_7026_b45f_7e41,
    0x3991_d639_8353_39f4,
    0x9c84_5f8b_bdf9_283b,
    0x1ff8_97ff_de05_980f,
    0xef2f_118b_5a0a_6d1f,
    0x6d36_7ecf_27cb_09b7,
    0x4f46_3f66_9e5f_ea2d,
    0x7527_bac7_ebe5_f17b,
    0x3d07_39f7_8a52_92ea,
    0x6bfb_5fb1_1f8d_5d08,
    0x5603_3046_fc7b_6bab,
];

/// A zero word, then [`TWO_OVER_PI`] (tessel's own f64 reduction, [`sincos64`]).
pub(crate) const fn zero_padded() -> [u64; 20] {
    let mut w = [0; 20];
    let mut i = 0;
    while i < 19 {
        w[i + 1] = TWO_OVER_PI[i];
        i += 1;
    }
    w
}

/// The first `N` words of [`TWO_OVER_PI`], the low word first (libdevice's `__cudart_i2opi_d` for N = 18, its f64
/// reduction, [`reduce64`]).
pub(crate) const fn low_word_first<const N: usize>() -> [u64; N] {
    let mut w = [0; N];
    let mut i = 0;
    while i < N {
        w[i] = TWO_OVER_PI[N - 1 - i];
        i += 1;
    }
    w
}

/// The first `N` 32-bit words of [`TWO_OVER_PI`], the low word first (libdevice's `__cudart_i2opi_f` for N = 6,
/// its f32 reduction, [`sincos32`]).
pub(crate) const fn low_half_first<const N: usize>() -> [u64; N] {
    let mut w = [0; N];
    let mut i = 0;
    while i < N {
        let j = N - 1 - i;
        w[i] = (TWO_OVER_PI[j / 2] >> if j % 2 == 0 { 32 } else { 0 }) & 0xffff_ffff;
        i += 1;
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The views are libdevice's own tables: `__cudart_i2opi_f` whole, `__cudart_i2opi_d` at both ends.
    #[test]
    fn views_are_libdevices_tables() {
        assert_eq!(
            low_half_first::<6>(),
            [0x3c43_9041, 0xdb62_9599, 0xf534_ddc0, 0xfc27_57d1, 0x4e44_1529, 0xa2f9_836e]
        );
        let d = low_word_first::<18>();
        assert_eq!((d[0], d[17]), (0x6bfb_5fb1_1f8d_5d08, 0xa2f9_836e_4e44_1529));
        assert_eq!(zero_padded()[..2], [0, 0xa2f9_836e_4e44_1529]);
    }
}
