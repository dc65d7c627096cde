//! Checking random conversions between layout families outside a `#[test]`: a seeded proptest run that stops at
//! the first wrong conversion and shrinks it to a minimal one (what `tessel layout fuzz` runs).

use std::cell::RefCell;
use std::collections::BTreeMap;

use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestError, TestRng, TestRunner};

use super::check::{ConversionReport, check_plan};
use super::corrupt::corrupt_plan;
use super::families::{ConversionCase, Family, conversion_case};
use crate::convert::{PlanOptions, plan_conversion};

/// What [`fuzz_conversions`] checks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FuzzOptions {
    /// Register-layout families to draw both sides from.
    pub families: Vec<Family>,
    /// Random conversions to check.
    pub cases: u32,
    /// The run is a function of the seed.
    pub seed: u64,
    /// Test hook: break every plan with [`super::corrupt_plan`] before running it.
    pub corrupt: bool,
}

/// The result of a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FuzzOutcome {
    /// Conversions that passed (before the failure, if any), and how many of each plan kind.
    pub passed: u32,
    pub plan_kinds: BTreeMap<&'static str, u32>,
    /// The first failure, shrunk to a minimal case.
    pub failure: Option<FuzzFailure>,
}

/// A shrunk counterexample.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FuzzFailure {
    pub case: ConversionCase,
    /// What goes wrong in `case`: the planner's error or the checker's counterexample.
    pub reason: String,
}

/// Plans `case`, optionally corrupts the plan, runs it on random data and returns its costs or why it fails.
pub fn check_case(case: &ConversionCase, corrupt: bool) -> Result<ConversionReport, String> {
    let shape = case.ctx.shape;
    let src = case.src.to_linear(&shape).map_err(|e| format!("cannot build the source {}: {e}", case.src))?;
    let dst = case.dst.to_linear(&shape).map_err(|e| format!("cannot build the destination {}: {e}", case.dst))?;
    let opts = PlanOptions { allow_shuffles: case.allow_shuffles, ..PlanOptions::default() };
    let mut plan = plan_conversion(&src, &dst, case.ctx.bits, &opts).map_err(|e| format!("planning failed: {e}"))?;
    if corrupt && let Some(broken) = corrupt_plan(&plan, &src, &dst) {
        plan = broken;
    }
    check_plan(&plan, &src, &dst, case.ctx.bits, case.seed).map_err(|f| format!("{f}\nplan: {plan}"))?;
    Ok(ConversionReport::of(plan, case.ctx.bits))
}

/// 32 bytes of ChaCha seed from a `u64`.
fn seed_bytes(seed: u64) -> [u8; 32] {
    let mut out = [0u8; 32];
    let mut x = seed;
    for chunk in out.chunks_mut(8) {
        x = x.wrapping_mul(0x5851_f42d_4c95_7f2d).wrapping_add(0x1405_7b7e_f767_814f);
        chunk.copy_from_slice(&(x ^ (x >> 29)).to_le_bytes());
    }
    out
}

/// Checks `opts.cases` random conversions among `opts.families`; on the first failure, proptest shrinks the case
/// (simpler layouts, smaller shapes, fewer warps) while it still fails.
///
/// # Panics
/// If `opts.families` is empty or holds a memory family (see [`conversion_case`]).
pub fn fuzz_conversions(opts: &FuzzOptions) -> FuzzOutcome {
    // Every shrinking step re-plans and re-runs a conversion: allow enough of them to reach a small case.
    let config = Config {
        cases: opts.cases,
        failure_persistence: None,
        max_shrink_iters: 4096,
        max_shrink_time: 60_000,
        ..Config::default()
    };
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &seed_bytes(opts.seed));
    let mut runner = TestRunner::new_with_rng(config, rng);
    // Passes and plan kinds up to the first failure: shrinking runs the test again on simpler cases.
    let tally = RefCell::new((0u32, BTreeMap::new(), false));
    let corrupt = opts.corrupt;
    let result = runner.run(&conversion_case(&opts.families), |case| {
        let result = check_case(&case, corrupt);
        let mut t = tally.borrow_mut();
        match result {
            Ok(report) => {
                if !t.2 {
                    t.0 += 1;
                    *t.1.entry(report.plan.kind()).or_insert(0) += 1;
                }
                Ok(())
            }
            Err(reason) => {
                t.2 = true;
                Err(TestCaseError::fail(reason))
            }
        }
    });
    let (passed, plan_kinds, _) = tally.into_inner();
    let failure = match result {
        Ok(()) => None,
        Err(TestError::Fail(reason, case)) => Some(FuzzFailure { case, reason: reason.to_string() }),
        Err(TestError::Abort(reason)) => {
            panic!("fuzz_conversions: proptest gave up ({reason}); the strategies reject too many cases")
        }
    };
    FuzzOutcome { passed, plan_kinds, failure }
}
