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

/// A kernel of `n` steps, each giving every pass something to do: a constant repeated (CSE), an addition of
/// -0.0 (folding), a dead multiplication chained to the previous step's (DCE, which must not need a walk per
/// link), an `if` (a region for the verifier to scope) and a loop with an invariant product (LICM).
fn long_kernel(n: usize) -> String {
    let mut s = String::from("func @k(%p: ptr<f32>, %m: i32) {\n  %x0 = load %p : f32\n  %d0 = load %p : f32\n");
    s.push_str("  %zero = constant {value = 0} : i32\n  %one = constant {value = 1} : i32\n");
    for i in 1..=n {
        let j = i - 1;
        s.push_str(&format!(
            "  %c{i} = constant {{value = 1.0}} : f32\n  %z{i} = constant {{value = -0.0}} : f32\n  %a{i} = add %x{j}, \
             %c{i} : f32\n  %b{i} = add %a{i}, %z{i} : f32\n  %d{i} = mul %d{j}, %c{i} : f32\n  %t{i} = cmp {{pred = gt}} \
             %m, %zero : i1\n  %x{i} = if %t{i} : f32 {{\n    yield %b{i}\n  }} else {{\n    %e{i} = sub %b{i}, %c{i} : \
             f32\n    yield %e{i}\n  }}\n  for %zero, %m, %one {{\n  ^(%i{i}: i32):\n    %k{i} = mul %m, %m : i32\n    \
             %q{i} = addptr %p, %k{i} : ptr<f32>\n    store %q{i}, %x{i}\n    yield\n  }}\n"
        ));
    }
    s.push_str(&format!("  store %p, %x{n}\n  return\n}}\n"));
    s
}

#[test]
fn canonicalization_is_linear_in_the_size_of_the_kernel() {
    // The passes do what the kernel asks of them...
    let mut f = parse_func(&long_kernel(3)).unwrap_or_else(|e| panic!("{e}"));
    canonicalize(&mut f);
    verify(&f).unwrap();
    let text = print_func(&f);
    let count = |what: &str| text.matches(what).count();
    // One constant 1.0, no -0.0 nor dead product, three additions and branches, the invariant address computed
    // once in front of the loops.
    let counts = [" = constant {value = 1.0}", "-0.0", " = mul %d", " = add ", " = if ", " = mul %m", " = addptr "];
    assert_eq!(counts.map(count), [1, 0, 0, 3, 3, 1, 1], "{text}");
    assert!(text.contains("  %q1 = addptr %p, %k1 : ptr<f32>\n  for "), "{text}");
    // ...in time linear in its size: parsed, verified, canonicalized, verified and printed.
    tessel_tile::testing::assert_near_linear("canonicalize", 1500, long_kernel, |text| {
        let mut f = parse_func(text).unwrap();
        verify(&f).unwrap();
        canonicalize(&mut f);
        verify(&f).unwrap();
        print_func(&f);
    });
}
