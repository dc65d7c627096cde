//! One comparison of a kernel's outputs computed two ways: on a GPU or the PTX simulator against this
//! interpreter, which defines the right answer.
//!
//! It owns the rules every harness applies to one output buffer, so that they cannot drift apart: the PTX
//! simulator's tests (`codegen/tests/simulate.rs`), `gpu_check` (`runtime/examples/gpu_check.rs`) and
//! `tessel run --check` / `tessel bench --check` all call [`compare_bytes`] (or [`compare_values`]) and judge the
//! [`Diff`] with [`Diff::check`] under their [`Rules`]:
//!
//! - an element NaN on both sides is skipped (an output poisoned with NaN that neither side wrote);
//! - an element NaN on one side only fails, whatever the tolerance;
//! - floats are held to a bound on the relative L2 error `‖actual − expected‖ / ‖expected‖` (the absolute
//!   `‖actual − expected‖` when `‖expected‖` is 0), over the elements that are numbers on both sides;
//! - integers are exact under [`Rules::exact_ints`], otherwise held to the same bound as floats;
//! - under [`Rules::require_data`], a buffer with no element compared (empty, or NaN on both sides throughout:
//!   an output the kernel never wrote) fails.
//!
//! An infinity is compared as a number: `inf − inf` is NaN, so a buffer holding an infinity (on either side) has
//! a NaN or infinite error, which no tolerance accepts.

use std::fmt;

use tessel_tile::eval::value::decode_le;
use tessel_tile::types::ScalarType;

/// How strict [`Diff::check`] is beyond the tolerance on the relative error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rules {
    /// Integer elements must be equal; otherwise integers are held to the tolerance like floats.
    pub exact_ints: bool,
    /// A buffer with no element compared fails (an output must have data).
    pub require_data: bool,
}

impl Rules {
    /// The test harnesses' rules (the PTX simulator's tests, `gpu_check`): integers exact, and an output with
    /// nothing compared (never written: poison on both sides) fails.
    pub const STRICT: Rules = Rules { exact_ints: true, require_data: true };
    /// Every element held to the tolerance alone: integers too, and a buffer with nothing compared passes
    /// (`tessel run --check` compares every buffer, inputs included, some of which may hold only NaN).
    pub const TOLERANCE_ONLY: Rules = Rules { exact_ints: false, require_data: false };
}

/// One element of a comparison: its index and the value on each side.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Element {
    pub index: usize,
    pub expected: f64,
    pub actual: f64,
}

/// How one buffer computed two ways differs: `expected` (the interpreter's) against `actual` (the GPU's or the
/// simulator's).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Diff {
    /// Whether the elements are integers (for [`Rules::exact_ints`]).
    pub int: bool,
    /// Elements on each side.
    pub len: usize,
    /// Elements compared: those not NaN on both sides.
    pub compared: usize,
    /// Elements NaN on one side only.
    pub nan_one_side: usize,
    /// The first element NaN on one side only.
    pub first_nan_one_side: Option<Element>,
    /// The first element whose values differ (`expected != actual`, so `-0.0` equals `0.0`), NaN on both sides
    /// excepted.
    pub first_unequal: Option<Element>,
    /// Elements whose bits differ: the stored bytes for [`compare_bytes`] (NaN payloads and unused bits
    /// included), the `f64` bits for [`compare_values`].
    pub differ_in_bits: usize,
    /// `‖actual − expected‖ / ‖expected‖` over the elements compared (`‖actual − expected‖` when `‖expected‖` is
    /// 0; 0 when nothing was compared); infinite when an element is NaN on one side only.
    pub rel_err: f64,
}

/// Why [`Diff::check`] fails.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Failure {
    /// An element NaN on one side only (the first such).
    NanOnOneSide(Element),
    /// Under [`Rules::exact_ints`], an integer element that differs (the first such).
    IntDiffers(Element),
    /// Under [`Rules::require_data`], nothing was compared.
    NoData,
    /// The relative error is above the tolerance (or NaN).
    AboveTolerance { rel_err: f64, tol: f64 },
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::NanOnOneSide(e) => {
                write!(f, "element {} is NaN on one side only: {} against {} expected", e.index, e.actual, e.expected)
            }
            Failure::IntDiffers(e) => {
                write!(f, "integer element {} differs: {} against {} expected", e.index, e.actual, e.expected)
            }
            Failure::NoData => write!(f, "no element compared (empty, or NaN on both sides throughout)"),
            Failure::AboveTolerance { rel_err, tol } => write!(f, "relative error {rel_err:.3e} above {tol:e}"),
        }
    }
}

impl Diff {
    /// The failures that no tolerance excuses, in this order: the first element NaN on one side only or (under
    /// `exact_ints`) the first integer that differs, whichever comes first; then, under `require_data`, no
    /// element compared.
    pub fn element_failure(&self, rules: Rules) -> Option<Failure> {
        let int = self.first_unequal.filter(|_| self.int && rules.exact_ints);
        let first = match (self.first_nan_one_side, int) {
            (Some(nan), Some(int)) if int.index < nan.index => Some(Failure::IntDiffers(int)),
            (Some(nan), _) => Some(Failure::NanOnOneSide(nan)),
            (None, int) => int.map(Failure::IntDiffers),
        };
        first.or((rules.require_data && self.compared == 0).then_some(Failure::NoData))
    }

    /// Whether the relative error is at most `tol` (never when it is NaN or infinite: NaN on one side only).
    pub fn within(&self, tol: f64) -> bool {
        self.rel_err <= tol
    }

    /// The verdict: [`Diff::element_failure`], then the relative error against `tol` (skipped for integers
    /// under `exact_ints`: equal integers have no error).
    pub fn check(&self, tol: f64, rules: Rules) -> Result<(), Failure> {
        if let Some(f) = self.element_failure(rules) {
            return Err(f);
        }
        if (self.int && rules.exact_ints) || self.within(tol) {
            Ok(())
        } else {
            Err(Failure::AboveTolerance { rel_err: self.rel_err, tol })
        }
    }
}

/// Compares two buffers of element type `elem` as stored (little-endian bytes, e.g. the interpreter's
/// [`Buffer::bytes`](crate::memory::Buffer) and a copy back from a GPU): the values as
/// [`decode_le`] reads them, the bits as stored. Panics when the lengths differ.
pub fn compare_bytes(elem: ScalarType, expected: &[u8], actual: &[u8]) -> Diff {
    assert_eq!(expected.len(), actual.len(), "compare_bytes: buffers of different sizes");
    let mut d = compare_values(&decode_le(expected, elem), &decode_le(actual, elem), !elem.is_float());
    let size = elem.bytes() as usize;
    d.differ_in_bits = expected.chunks(size).zip(actual.chunks(size)).filter(|(e, a)| e != a).count();
    d
}

/// Compares two buffers of values (integer elements when `int`). Panics when the lengths differ.
pub fn compare_values(expected: &[f64], actual: &[f64], int: bool) -> Diff {
    assert_eq!(expected.len(), actual.len(), "compare_values: buffers of different lengths");
    let mut d = Diff {
        int,
        len: expected.len(),
        compared: 0,
        nan_one_side: 0,
        first_nan_one_side: None,
        first_unequal: None,
        differ_in_bits: 0,
        rel_err: 0.0,
    };
    let (mut num, mut den) = (0.0, 0.0);
    for (index, (&e, &a)) in expected.iter().zip(actual).enumerate() {
        if e.to_bits() != a.to_bits() {
            d.differ_in_bits += 1;
        }
        let element = Element { index, expected: e, actual: a };
        match (e.is_nan(), a.is_nan()) {
            (true, true) => continue,
            (false, false) => {
                d.compared += 1;
                num += (a - e) * (a - e);
                den += e * e;
            }
            _ => {
                d.nan_one_side += 1;
                d.first_nan_one_side.get_or_insert(element);
            }
        }
        if e != a {
            d.first_unequal.get_or_insert(element);
        }
    }
    d.rel_err = if d.nan_one_side > 0 {
        f64::INFINITY
    } else if den == 0.0 {
        f64::sqrt(num)
    } else {
        (num / den).sqrt()
    };
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAN: f64 = f64::NAN;

    #[test]
    fn nan_on_both_sides_is_skipped() {
        let d = compare_values(&[1.0, NAN, 3.0], &[1.0, NAN, 3.0], false);
        assert_eq!((d.len, d.compared, d.nan_one_side, d.rel_err), (3, 2, 0, 0.0));
        assert_eq!(d.check(0.0, Rules::STRICT), Ok(()));
        // Different NaN payloads are equal as values, not as bits.
        let other_nan = f64::from_bits(NAN.to_bits() ^ 1);
        let d = compare_values(&[NAN, 2.0], &[other_nan, 2.0], false);
        assert_eq!((d.compared, d.differ_in_bits, d.first_unequal), (1, 1, None));
        assert_eq!(d.check(0.0, Rules::STRICT), Ok(()));
    }

    #[test]
    fn nan_on_one_side_fails_whatever_the_tolerance() {
        for (expected, actual) in [([1.0, 2.0, 3.0], [1.0, NAN, NAN]), ([1.0, NAN, 3.0], [1.0, 2.0, NAN])] {
            let d = compare_values(&expected, &actual, false);
            assert_eq!(d.nan_one_side, 2);
            assert_eq!(d.rel_err, f64::INFINITY);
            let first = Element { index: 1, expected: expected[1], actual: actual[1] };
            for rules in [Rules::STRICT, Rules::TOLERANCE_ONLY] {
                match d.check(f64::MAX, rules) {
                    Err(Failure::NanOnOneSide(e)) => {
                        assert_eq!(e.index, first.index);
                        assert_eq!(e.expected.to_bits(), first.expected.to_bits());
                        assert_eq!(e.actual.to_bits(), first.actual.to_bits());
                    }
                    other => panic!("{other:?}"),
                }
            }
        }
    }

    #[test]
    fn integers_are_exact_or_held_to_the_tolerance() {
        let d = compare_values(&[1000.0, 2000.0], &[1000.0, 2001.0], true);
        let unequal = Element { index: 1, expected: 2000.0, actual: 2001.0 };
        assert_eq!(d.first_unequal, Some(unequal));
        assert_eq!(d.check(1e-2, Rules::STRICT), Err(Failure::IntDiffers(unequal)));
        // Held to the tolerance instead: 1 / ‖(1000, 2000)‖ ≈ 4.5e-4.
        assert_eq!(d.check(1e-2, Rules::TOLERANCE_ONLY), Ok(()));
        assert!(matches!(d.check(1e-4, Rules::TOLERANCE_ONLY), Err(Failure::AboveTolerance { .. })));
        // The same values as floats are never held exact.
        assert_eq!(compare_values(&[1000.0, 2000.0], &[1000.0, 2001.0], false).check(1e-2, Rules::STRICT), Ok(()));
        // Equal integers pass under any tolerance when exact.
        assert_eq!(compare_values(&[5.0], &[5.0], true).check(0.0, Rules::STRICT), Ok(()));
    }

    #[test]
    fn the_first_failing_element_is_reported() {
        // An integer difference before a NaN-on-one-side element (integers decode to no NaN, but the rule is
        // by index).
        let d = compare_values(&[1.0, 2.0, NAN], &[1.0, 3.0, 4.0], true);
        assert!(matches!(d.element_failure(Rules::STRICT), Some(Failure::IntDiffers(Element { index: 1, .. }))));
        assert!(matches!(
            d.element_failure(Rules::TOLERANCE_ONLY),
            Some(Failure::NanOnOneSide(Element { index: 2, .. }))
        ));
    }

    #[test]
    fn nothing_compared_fails_only_when_data_is_required() {
        for (expected, actual) in [(vec![], vec![]), (vec![NAN, NAN], vec![NAN, NAN])] {
            let d = compare_values(&expected, &actual, false);
            assert_eq!((d.compared, d.rel_err), (0, 0.0));
            assert_eq!(d.check(1e-2, Rules::STRICT), Err(Failure::NoData));
            assert_eq!(d.check(1e-2, Rules::TOLERANCE_ONLY), Ok(()));
        }
    }

    #[test]
    fn the_relative_error_is_the_l2_norm_ratio() {
        // ‖(0, 0, 4)‖ / ‖(3, 4, 0)‖ = 4 / 5, the NaN pair skipped.
        let d = compare_values(&[3.0, 4.0, 0.0, NAN], &[3.0, 4.0, 4.0, NAN], false);
        assert_eq!(d.rel_err, 0.8);
        assert!(d.within(0.8) && !d.within(0.79));
        assert_eq!(d.check(0.5, Rules::STRICT), Err(Failure::AboveTolerance { rel_err: 0.8, tol: 0.5 }));
        // A zero reference: the absolute error.
        assert_eq!(compare_values(&[0.0, 0.0], &[3.0, 4.0], false).rel_err, 5.0);
        // -0.0 and 0.0 are equal values with different bits.
        let d = compare_values(&[0.0], &[-0.0], false);
        assert_eq!((d.rel_err, d.differ_in_bits, d.first_unequal), (0.0, 1, None));
        // An infinity has no finite error.
        assert!(compare_values(&[f64::INFINITY], &[f64::INFINITY], false).rel_err.is_nan());
        assert!(!compare_values(&[1.0], &[f64::INFINITY], false).within(f64::MAX));
    }

    #[test]
    fn bytes_are_decoded_by_type_and_their_bits_counted() {
        // f16: 1.0 (0x3c00) and 1.0 + 2^-10 (0x3c01); 0xffff is a NaN on both sides with the same bits.
        let e = [0x00, 0x3c, 0x00, 0x3c, 0xff, 0xff];
        let a = [0x00, 0x3c, 0x01, 0x3c, 0xff, 0xff];
        let d = compare_bytes(ScalarType::F16, &e, &a);
        assert_eq!((d.int, d.len, d.compared, d.differ_in_bits), (false, 3, 2, 1));
        assert_eq!(d.rel_err, (2f64.powi(-20) / 2.0).sqrt());
        // u8: 255 is a number, not poison; unsigned values are read unsigned.
        let d = compare_bytes(ScalarType::U8, &[255, 1], &[255, 2]);
        assert!(d.int);
        assert_eq!(d.first_unequal, Some(Element { index: 1, expected: 1.0, actual: 2.0 }));
        assert_eq!(d.compared, 2);
    }
}
