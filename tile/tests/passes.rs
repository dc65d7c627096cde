//! Text-in, text-out tests of the generic passes: each `X.in.tir` canonicalizes to `X.out.tir`, and the
//! result verifies.

use tessel_tile::parse::parse_func;
use tessel_tile::passes::canonicalize;
use tessel_tile::print::print_func;
use tessel_tile::verify::verify;

fn check(input: &str, expected: &str) {
    let mut f = parse_func(input).unwrap_or_else(|e| panic!("{e}"));
    verify(&f).unwrap();
    canonicalize(&mut f);
    verify(&f).unwrap_or_else(|e| panic!("after canonicalize: {e}\n{}", print_func(&f)));
    assert_eq!(print_func(&f), expected);
}

#[test]
fn folds_constants_identities_and_transposes() {
    check(include_str!("passes/fold.in.tir"), include_str!("passes/fold.out.tir"));
}

#[test]
fn hoists_invariants_but_not_division_and_merges_duplicates() {
    check(include_str!("passes/licm_cse.in.tir"), include_str!("passes/licm_cse.out.tir"));
}
