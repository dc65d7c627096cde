//! The textual IR parses back to the same program: print(parse(text)) == text, and the result verifies.

use tessel_tile::parse::parse_func;
use tessel_tile::print::print_func;
use tessel_tile::verify::verify;

fn round_trip(text: &str) {
    let f = parse_func(text).unwrap_or_else(|e| panic!("parse error at {e}"));
    verify(&f).unwrap_or_else(|e| panic!("verifier: {e}"));
    let printed = print_func(&f);
    assert_eq!(printed, text, "printing the parsed IR changed it");
    let again = print_func(&parse_func(&printed).unwrap());
    assert_eq!(again, printed);
}

#[test]
fn vector_add_round_trips() {
    round_trip(include_str!("ir/add_kernel.tir"));
}

#[test]
fn loops_reductions_and_branches_round_trip() {
    round_trip(include_str!("ir/row_max_loop.tir"));
}

#[test]
fn parse_errors_point_at_the_problem() {
    let e = parse_func("func @f() {\n  %a = add %b, %b : i32\n  return\n}\n").unwrap_err();
    assert_eq!((e.line, e.column), (2, 12));
    assert!(e.message.contains("undefined value `%b`"), "{}", e.message);
    let e = parse_func("func @f() {\n  %a = frobnicate : i32\n  return\n}\n").unwrap_err();
    assert!(e.message.contains("unknown op `frobnicate`"), "{}", e.message);
    let e = parse_func("func @f() {\n  %a = constant {value = 1, colour = red} : i32\n  return\n}\n").unwrap_err();
    assert!(e.message.contains("has no attribute `colour`"), "{}", e.message);
    let e = parse_func("func @f(%x: tensor<4xq8>) {\n  return\n}\n").unwrap_err();
    assert!(e.message.contains("unknown scalar type `q8`"), "{}", e.message);
}

#[test]
fn verifier_rejects_ill_typed_ops() {
    let bad = [
        (
            "func @f(%a: i32, %b: f32) {\n  %c = add %a, %b : i32\n  return\n}\n",
            "operands must have one type, got i32 and f32",
        ),
        ("func @f(%a: f32) {\n  %c = xor %a, %a : f32\n  return\n}\n", "needs integer operands"),
        ("func @f() {\n  %r = arange {start = 0, end = 1000} : tensor<1000xi32>\n  return\n}\n", "power of two"),
        ("func @f(%p: ptr<f32>) {\n  %v = load %p : f16\n  return\n}\n", "result: expected f32, got f16"),
        ("func @f() {\n  %a = constant {value = 1} : i32\n}\n", "must end with `return`"),
        (
            "func @f(%a: tensor<16x32xf16>, %b: tensor<16x32xf16>, %c: tensor<16x32xf32>) {\n  %d = dot {precision = ieee} %a, %b, %c : tensor<16x32xf32>\n  return\n}\n",
            "do not form a matrix product",
        ),
        ("func @f(%a: f32) {\n  %n = norm %a, %a : f32\n  return\n}\n", "expected 3 to 4 operands, got 2"),
        ("func @f(%a: f32) {\n  %n = jn %a : f32\n  return\n}\n", "expected 2 operands, got 1"),
        ("func @f(%n: i32, %a: i32) {\n  %j = yn %n, %a : i32\n  return\n}\n", "`yn` is defined on f32 and f64 only"),
        ("func @f(%n: i64, %a: f32) {\n  %j = jn %n, %a : f32\n  return\n}\n", "order: expected i32, got i64"),
        ("func @f(%a: i32) {\n  %n = rnorm %a, %a, %a : i32\n  return\n}\n", "`rnorm` is defined on f32 and f64 only"),
        (
            "func @f(%a: f32, %b: f64) {\n  %n = norm %a, %a, %b : f32\n  return\n}\n",
            "operands must have one type, got f32 and f64",
        ),
    ];
    for (text, want) in bad {
        let f = parse_func(text).unwrap_or_else(|e| panic!("parse error {e} in\n{text}"));
        let e = verify(&f).expect_err(text);
        assert!(e.to_string().contains(want), "expected `{want}` in `{e}`");
    }
}

#[test]
fn kernel_facts_are_typed_and_round_trip() {
    let head = "func @f(%p: ptr<f32>, %n: i32) attributes {target = sm_90a, num_warps = 4, num_stages = 3";
    let facts = "gluon = true, flattened = true, enable_fp_fusion = false, divisible_by_16 = [0, 1]";
    let text = format!("{head}, {facts}}} {{\n  return\n}}\n");
    round_trip(&text);
    let f = parse_func(&text).unwrap();
    let facts = &f.attrs;
    assert!(facts.gluon && facts.flattened && !f.config.fp_fusion);
    assert_eq!(facts.divisible_by_16, [0, 1]);
    // The defaults print nothing.
    let plain = parse_func(&format!("{head}, gluon = false, enable_fp_fusion = true}} {{\n  return\n}}\n")).unwrap();
    assert_eq!(plain.attrs, tessel_tile::FuncAttrs::default());
    assert!(plain.config.fp_fusion);
    assert_eq!(print_func(&plain), format!("{head}}} {{\n  return\n}}\n"));
    let err = |attr: &str| parse_func(&format!("{head}, {attr}}} {{\n  return\n}}\n")).unwrap_err().message;
    assert!(err("colour = red").contains("unknown function attribute `colour`"));
    assert!(err("gluon = 1").contains("must be true or false"));
    assert!(err("divisible_by_16 = [-1]").contains("argument indices"));
}
