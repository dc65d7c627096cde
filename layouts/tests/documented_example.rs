//! The example of docs/layouts.md's "Property-testing layouts" section, run as a test; the last test checks
//! that the page quotes this file's example verbatim.

use proptest::prelude::*;
use tessel_layouts::testing::{
    assert_bank_conflict_free, assert_conversion_correct, blocked_2d, mma_elem_bits, mma_v3,
};

proptest! {
    /// Any wgmma accumulator (4 or 8 warps, instruction N from 8 to 256) converts to any blocked layout over the
    /// same warps, at 8, 16 and 32 bits: every element lands in the register the blocked layout names, and the
    /// shared-memory round trip (when there is one) has no bank conflicts.
    #[test]
    fn mma_v3_accumulator_to_blocked(
        (bits, acc, blocked) in (mma_elem_bits(), 2u32..=3)
            .prop_flat_map(|(bits, log_warps)| (Just(bits), mma_v3(log_warps, bits), blocked_2d(log_warps))),
        shape in prop::sample::select(vec![[64u32, 64], [64, 128], [128, 256]]),
    ) {
        assert_conversion_correct(&acc, &blocked, &shape, bits);
        assert_bank_conflict_free(&acc, &blocked, &shape, bits);
    }
}
// ----- end of the documented example -----

#[test]
fn docs_layouts_quotes_this_example_verbatim() {
    let source = include_str!("documented_example.rs");
    let start = source.find("use proptest::prelude::*;").expect("the example's first line");
    let end = source.find("// ----- end of the documented example -----").expect("the end marker");
    let example = source[start..end].trim_end();
    let doc =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/layouts.md")).expect("docs/layouts.md");
    let section = doc.split("## Property-testing layouts").nth(1).expect("a \"Property-testing layouts\" section");
    assert!(section.contains(&format!("```rust\n{example}\n```")), "docs/layouts.md does not quote:\n{example}");
}
