//! Every layout the crate can construct has a family with a strategy in `tessel_layouts::testing`.
//!
//! `variant` matches every variant of every layout enum without a wildcard, so a new variant does not compile
//! until it is listed here (and in `Family::of`), and `every_variant_has_a_strategy` fails until some family's
//! strategy draws it.

use std::collections::BTreeSet;

use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use tessel_layouts::testing::{Family, conversion_case, ctx};
use tessel_layouts::{AnyLayout, DistributedLayout, SharedLayout};

/// The name of `layout`'s enum variant.
fn variant(layout: &AnyLayout) -> &'static str {
    match layout {
        AnyLayout::Distributed(d) => match d {
            DistributedLayout::Blocked(_) => "Distributed::Blocked",
            DistributedLayout::Slice(_) => "Distributed::Slice",
            DistributedLayout::DotOperand(_) => "Distributed::DotOperand",
            DistributedLayout::Nvmma(_) => "Distributed::Nvmma",
            DistributedLayout::Linear(_) => "Distributed::Linear",
            DistributedLayout::TmemReg(_) => "Distributed::TmemReg",
        },
        AnyLayout::Shared(s) => match s {
            SharedLayout::Swizzled(_) => "Shared::Swizzled",
            SharedLayout::Nvmma(_) => "Shared::Nvmma",
            SharedLayout::Linear(_) => "Shared::Linear",
        },
        AnyLayout::TensorMemory(_) => "TensorMemory",
        AnyLayout::TensorMemoryScales(_) => "TensorMemoryScales",
    }
}

/// Every variant `variant` can return.
const VARIANTS: [&str; 10] = [
    "Distributed::Blocked",
    "Distributed::Slice",
    "Distributed::DotOperand",
    "Distributed::Nvmma",
    "Distributed::Linear",
    "Distributed::TmemReg",
    "Shared::Swizzled",
    "Shared::Nvmma",
    "Shared::Linear",
    "TensorMemory",
];

/// The position of each family in `Family::ALL` (no wildcard: a new family must be placed).
fn position(f: Family) -> usize {
    match f {
        Family::Blocked => 0,
        Family::Slice => 1,
        Family::DotFma => 2,
        Family::DotMmaV2 => 3,
        Family::DotMmaV3 => 4,
        Family::MmaV2 => 5,
        Family::MmaV3 => 6,
        Family::TmemReg => 7,
        Family::Linear => 8,
        Family::SwizzledShared => 9,
        Family::NvmmaShared => 10,
        Family::SharedLinear => 11,
        Family::TensorMemory => 12,
    }
}

fn runner(seed: u8) -> TestRunner {
    TestRunner::new_with_rng(Config::default(), TestRng::from_seed(RngAlgorithm::ChaCha, &[seed; 32]))
}

fn draw<S: Strategy>(s: &S, runner: &mut TestRunner) -> S::Value {
    s.new_tree(runner).expect("the strategy draws a value").current()
}

/// Samples drawn per family.
const SAMPLES: usize = 48;

#[test]
fn family_list_is_complete_and_in_order() {
    for (i, &f) in Family::ALL.iter().enumerate() {
        assert_eq!(position(f), i, "{f} is out of place in Family::ALL");
    }
    assert_eq!(Family::ALL.len(), position(Family::TensorMemory) + 1);
    let distributed: Vec<Family> = Family::ALL.iter().copied().filter(|f| f.is_distributed()).collect();
    assert_eq!(distributed, Family::DISTRIBUTED);
    // Names round-trip through the parser, and the groups expand.
    let names: Vec<&str> = Family::ALL.iter().map(|f| f.name()).collect();
    assert_eq!(Family::parse_list(&names.join(",")).unwrap(), Family::ALL);
    assert_eq!(Family::parse_list("mma, blocked,mma-v2").unwrap(), [Family::MmaV2, Family::MmaV3, Family::Blocked]);
    assert_eq!(Family::parse_list("dot").unwrap(), [Family::DotFma, Family::DotMmaV2, Family::DotMmaV3]);
    let err = Family::parse_list("blocked,mmma").unwrap_err();
    assert!(err.starts_with("unknown layout family `mmma`; known: blocked, slice,"), "{err}");
    assert_eq!(Family::parse_list(" , ").unwrap_err(), "no layout family given");
}

/// Each family's strategy draws layouts of that family (and only that family) which build at the drawn setting
/// and cover the whole tensor; together they draw every layout variant.
#[test]
fn every_variant_has_a_strategy() {
    let mut runner = runner(7);
    let mut seen = BTreeSet::new();
    for family in Family::ALL {
        let setting = ctx(&[family]);
        for _ in 0..SAMPLES {
            let c = draw(&setting, &mut runner);
            assert!(family.available(&c), "ctx drew {c:?}, where {family} has no layout");
            let layout = draw(&family.strategy(&c), &mut runner);
            assert_eq!(Family::of(&layout), family, "the {family} strategy drew {layout}");
            let l = layout.to_linear(&c.shape).unwrap_or_else(|e| panic!("{layout} on {:?}: {e}", c.shape));
            let sizes: Vec<u32> = l.out_dim_sizes().into_iter().map(|(_, s)| s).collect();
            assert_eq!(sizes, c.shape, "{layout}");
            assert!(l.is_surjective(), "{layout} on {:?} misses elements:\n{l}", c.shape);
            seen.insert(variant(&layout));
        }
    }
    let missing: Vec<&str> = VARIANTS.iter().copied().filter(|v| !seen.contains(v)).collect();
    assert!(missing.is_empty(), "no strategy draws {missing:?}");
}

/// A conversion case over one family has that family on both sides, at a setting both build at.
#[test]
fn conversion_cases_stay_in_their_families() {
    let mut runner = runner(11);
    for family in Family::DISTRIBUTED {
        let cases = conversion_case(&[family]);
        for _ in 0..SAMPLES / 4 {
            let case = draw(&cases, &mut runner);
            assert_eq!(Family::of_distributed(&case.src), family, "{case}");
            assert_eq!(Family::of_distributed(&case.dst), family, "{case}");
            case.src.to_linear(&case.ctx.shape).unwrap_or_else(|e| panic!("{case}: {e}"));
            case.dst.to_linear(&case.ctx.shape).unwrap_or_else(|e| panic!("{case}: {e}"));
        }
    }
}
