//! What the tests of every crate share: the IR round-trip check, inputs rounded to their type, relative errors,
//! timing and campaign helpers (the one test random-number generator is `tessel_math::testing::Rng`, in the
//! lowest crate whose tests draw from it; the interpreter's helpers are `tessel_interp::testing`).

use crate::eval::value::round_float;
use crate::ir::Func;
use crate::parse::parse_func;
use crate::print::print_func;
use crate::types::ScalarType;
use crate::verify::verify;
use tessel_math::testing::Rng;

/// The IR verifies, and prints → parses → prints to the same text.
pub fn check_ir(f: &Func) {
    verify(f).unwrap_or_else(|e| panic!("verifier: {e}\n{f}"));
    let text = print_func(f);
    let parsed = parse_func(&text).unwrap_or_else(|e| panic!("parse error {e} in\n{text}"));
    verify(&parsed).unwrap_or_else(|e| panic!("verifier (parsed): {e}"));
    assert_eq!(print_func(&parsed), text, "print(parse(print(f))) differs");
}

/// The values as stored in `t` (rounded), so references are computed from exactly what the kernel reads.
pub fn rounded(t: ScalarType, v: &[f64]) -> Vec<f64> {
    v.iter().map(|&x| round_float(x, t)).collect()
}

/// ‖out − ref‖ / ‖ref‖ (infinite if any output is NaN).
pub fn rel_err(out: &[f64], reference: &[f64]) -> f64 {
    assert_eq!(out.len(), reference.len());
    if out.iter().any(|x| x.is_nan()) {
        return f64::INFINITY;
    }
    let num: f64 = out.iter().zip(reference).map(|(a, b)| (a - b) * (a - b)).sum();
    let den: f64 = reference.iter().map(|b| b * b).sum();
    (num / den).sqrt()
}

/// `n` values uniform in [-1, 1), each rounded to `t` (what a buffer of `t` holds, so references computed from
/// them see exactly what the kernel reads).
pub fn vec_of(rng: &mut Rng, n: usize, t: ScalarType) -> Vec<f64> {
    (0..n).map(|_| round_float(rng.uniform(), t)).collect()
}

/// Asserts that `run` grows near-linearly with its input: `run(make(4n))` takes less than 8 times as long as
/// `run(make(n))` (linear growth gives 4, quadratic 16). The two sizes are timed in turns, up to 6 rounds, each
/// keeping its best time, until the ratio holds: a load that slows the machine for a while slows both sides
/// of a round, and a quadratic pass stays at 16 in every round. Building the input is not timed. `n` should
/// make `run(make(n))` take some milliseconds, or fixed costs hide the growth. Such tests of one binary take
/// turns, rather than time each other.
pub fn assert_near_linear<T>(what: &str, n: usize, make: impl Fn(usize) -> T, run: impl Fn(&T)) {
    static TURN: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let time = |input: &T| {
        let start = std::time::Instant::now();
        run(input);
        start.elapsed()
    };
    let (small_input, large_input) = (make(n), make(4 * n));
    let (mut small, mut large) = (std::time::Duration::MAX, std::time::Duration::MAX);
    for _ in 0..6 {
        small = small.min(time(&small_input));
        large = large.min(time(&large_input));
        if large < small * 8 {
            break;
        }
    }
    let ratio = large.as_secs_f64() / small.as_secs_f64().max(1e-9);
    eprintln!("{what}: n = {n}: {small:?}, 4n: {large:?} (x{ratio:.1})");
    assert!(
        ratio < 8.0,
        "{what} is not linear: n = {n} takes {small:?}, 4n takes {large:?} (x{ratio:.1}; linear is x4)"
    );
}

/// Cases for a property test whose default is `default` (chosen to keep `cargo test` quick): `PROPTEST_CASES`
/// when set, so that one variable turns every such test into a longer fuzzing campaign (docs/testing.md, "Fuzzing").
pub fn campaign_cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(default)
}
