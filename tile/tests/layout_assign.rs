//! Text-in, text-out tests of auto-mode layout assignment: each `layout/X.in.tir` becomes `layout/X.out.tir`
//! under `assign_layouts`, verifies (with the layout rules), and parses back. Set `BLESS=1` to rewrite the
//! expected files after checking a change by eye.

use tessel_tile::layout::assign_layouts;
use tessel_tile::parse::parse_func;
use tessel_tile::print::print_func;
use tessel_tile::verify::{verify, verify_layouts};

fn assign(name: &str) -> String {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/layout");
    let input = std::fs::read_to_string(format!("{dir}/{name}.in.tir")).unwrap();
    let mut f = parse_func(&input).unwrap_or_else(|e| panic!("{name}: {e}"));
    verify(&f).unwrap();
    assign_layouts(&mut f).unwrap_or_else(|e| panic!("{name}: {e}\n{}", print_func(&f)));
    verify(&f).unwrap();
    verify_layouts(&f).unwrap();
    let out = print_func(&f);
    let path = format!("{dir}/{name}.out.tir");
    if std::env::var_os("BLESS").is_some() {
        std::fs::write(&path, &out).unwrap();
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_default();
    assert_eq!(out, expected, "{name}: output differs from {path}");
    // The layout IR parses back and verifies with the same layouts.
    let back = parse_func(&out).unwrap_or_else(|e| panic!("{name}: reparse: {e}"));
    verify(&back).unwrap();
    verify_layouts(&back).unwrap();
    // Assigning layouts again to layout IR changes no layout (a spelling may differ) and adds no conversion.
    let mut again = back.clone();
    assign_layouts(&mut again).unwrap();
    for (i, v) in back.values.iter().enumerate() {
        assert_eq!(v.ty, again.values[i].ty, "{name}: a second assignment changed the type of value {i}");
    }
    assert_eq!(converts(&print_func(&again)), converts(&out), "{name}");
    out
}

fn converts(text: &str) -> usize {
    text.matches("convert_layout").count()
}

#[test]
fn vector_add_is_coalesced_with_16_byte_vectors() {
    let out = assign("vector_add");
    assert_eq!(converts(&out), 0);
    // Every tensor, pointers, offsets and mask included, has the one coalesced layout.
    let tensors = out.matches("tensor<").count();
    assert_eq!(out.matches("tensor<1024x").count(), tensors);
    assert_eq!(out.matches(", BlockedLayout([4],[32],[4],[0])>").count(), tensors, "{out}");
}

#[test]
fn a_ragged_bound_does_not_narrow_the_layout() {
    // `n` is not known to be a multiple of 16: the mask splits vectors, which codegen sees through the mask's
    // constancy; the layout keeps 4 elements per thread.
    let out = assign("vector_add_ragged");
    assert_eq!(converts(&out), 0);
    assert!(out.contains("tensor<1024xf32, BlockedLayout([4],[32],[4],[0])>"), "{out}");
}

#[test]
fn f16_takes_8_element_vectors() {
    let out = assign("vector_add_f16");
    assert_eq!(converts(&out), 0);
    assert!(out.contains("tensor<1024xf16, BlockedLayout([8],[32],[4],[0])>"), "{out}");
}

#[test]
fn row_softmax_reduces_into_slices_without_conversions() {
    let out = assign("softmax");
    assert_eq!(converts(&out), 0, "{out}");
    let blocked = "BlockedLayout([1,4],[1,32],[2,2],[1,0])";
    assert!(out.contains(&format!("tensor<4x256xf32, {blocked}>")), "{out}");
    assert!(out.contains(&format!("tensor<4xf32, SliceLayout(1, {blocked})>")), "{out}");
    assert!(out.contains(&format!("tensor<256xi32, SliceLayout(0, {blocked})>")), "{out}");
}

#[test]
fn a_transposed_store_needs_exactly_one_conversion() {
    let out = assign("transpose");
    assert_eq!(converts(&out), 1, "{out}");
    let convert = out.lines().find(|l| l.contains("convert_layout")).unwrap();
    assert!(
        convert.contains("%x : tensor<64x64xf32, BlockedLayout([4,1],[16,2],[1,4],[0,1])>"),
        "the loaded tile is converted to the store's column-major layout: {convert}"
    );
    assert!(out.contains("load %p : tensor<64x64xf32, BlockedLayout([1,4],[2,16],[4,1],[1,0])>"), "{out}");
}

#[test]
fn a_loop_carried_accumulator_keeps_the_load_layout_and_converts_outside() {
    let out = assign("loop_acc");
    let header = out.lines().find(|l| l.contains("%acc = for")).unwrap();
    assert!(header.ends_with(": tensor<512xf32, BlockedLayout([4],[32],[4],[0])> {"), "{out}");
    // The misaligned store (out + 1) takes scalar accesses; its conversion sits after the loop, not in it.
    assert_eq!(converts(&out), 1, "{out}");
    let body_end = out.find("    yield").unwrap();
    assert!(out.find("convert_layout").unwrap() > body_end, "{out}");
    assert!(out.contains("BlockedLayout([1],[32],[4],[0])"), "{out}");
}

#[test]
fn fma_dot_operands_are_dot_operand_slices_of_the_blocked_accumulator() {
    let out = assign("dot");
    let acc = "BlockedLayout([1,1],[1,32],[4,1],[1,0])";
    assert!(out.contains(&format!("DotOperandLayout(0, {acc}, 0)")), "{out}");
    assert!(out.contains(&format!("DotOperandLayout(1, {acc}, 0)")), "{out}");
    // The two loaded operands are converted; the accumulator constant is built in place, the `max` runs in
    // the accumulator's layout, and its result is converted once for the coalesced store.
    assert_eq!(converts(&out), 3, "{out}");
}

#[test]
fn reshape_permute_join_split_and_branches_transform_linear_layouts() {
    let out = assign("shapes");
    // The reshaped and transposed tiles carry the loaded layout moved by the linear-layout algebra.
    assert!(out.contains("%m = reshape %x : tensor<32x32xf32, DistributedLinearLayout("), "{out}");
    assert!(out.contains("%t = permute {order = [1, 0]} %m : tensor<32x32xf32, DistributedLinearLayout("), "{out}");
    assert!(out.contains("%j = join"), "{out}");
}

#[test]
fn a_conversion_of_a_loop_invariant_is_hoisted_out_of_the_loop() {
    let out = assign("loop_invariant");
    // `wv` is loaded outside the loop in its own coalesced layout (2 per thread) and used inside as a row of
    // the tile: one conversion to the tile's slice, placed before the loop.
    assert_eq!(converts(&out), 1, "{out}");
    let convert = out.find("convert_layout %wv").expect("wv is converted");
    assert!(convert < out.find("= for").unwrap(), "{out}");
    assert!(out.contains("SliceLayout(0, BlockedLayout([1,4],[1,32],[2,2],[1,0]))"), "{out}");
    assert!(out.contains("%wv = load %wp : tensor<256xf32, BlockedLayout([2],[32],[4],[0])>"), "{out}");
}

#[test]
fn a_widening_cast_is_converted_before_it_on_the_narrow_type() {
    let out = assign("widen");
    assert_eq!(converts(&out), 1, "{out}");
    let convert = out.lines().find(|l| l.contains("convert_layout")).unwrap();
    assert!(
        convert.contains("convert_layout %h : tensor<64x64xf16"),
        "the f16 tile is converted, not the f32 one: {out}"
    );
}

#[test]
fn a_store_in_another_layout_converts_the_narrowest_value_once() {
    // Layer norm's tail: 16-byte-aligned f16 loads (8 per thread), f32 math, and an f16 store through a
    // pointer known only 2-byte aligned (1 per thread). The conversion sinks past the f32 ops to the f16
    // result, as Triton places it: one conversion, of `%rh`, and all the math in the load layout.
    let out = assign("narrow_store");
    assert_eq!(converts(&out), 1, "{out}");
    let convert = out.lines().find(|l| l.contains("convert_layout")).unwrap();
    assert!(convert.contains("convert_layout %rh : tensor<4096xf16, BlockedLayout([1],[32],[8],[0])>"), "{out}");
    assert!(out.contains("%r = add %xw, %bf : tensor<4096xf32, BlockedLayout([8],[32],[8],[0])>"), "{out}");
}

#[test]
fn while_loops_carry_one_layout_through_both_regions() {
    let out = assign("while");
    assert_eq!(converts(&out), 0, "{out}");
    let l = "tensor<256xf32, BlockedLayout([2],[32],[4],[0])>";
    assert!(out.contains(&format!("^(%v: {l}):")) && out.contains(&format!("^(%w: {l}):")), "{out}");
}
