//! `gather`, `histogram`, `inline_asm` and the special-register ops: their typing rules and their semantics in
//! the interpreter (`inline_asm` is refused there, at the op).

use tessel_interp::memory::Memory;
use tessel_interp::{Arg, run};
use tessel_tile::parse::parse_func;
use tessel_tile::types::ScalarType::{F32, I32};
use tessel_tile::verify::verify;

const GATHER_2D: &str = r#"
func @k(%src: ptr<f32>, %idx: ptr<i32>, %out: ptr<f32>) attributes {target = sm_90a, num_warps = 4, num_stages = 3} {
  %r = arange {start = 0, end = 4} : tensor<4xi32>
  %c = arange {start = 0, end = 8} : tensor<8xi32>
  %r2 = expand_dims {axis = 1} %r : tensor<4x1xi32>
  %c2 = expand_dims {axis = 0} %c : tensor<1x8xi32>
  %eight = constant {value = 8} : tensor<4x1xi32>
  %rows = mul %r2, %eight : tensor<4x1xi32>
  %rb = broadcast %rows : tensor<4x8xi32>
  %cb = broadcast %c2 : tensor<4x8xi32>
  %off = add %rb, %cb : tensor<4x8xi32>
  %ps = splat %src : tensor<4x8xptr<f32>>
  %pss = addptr %ps, %off : tensor<4x8xptr<f32>>
  %s = load %pss : tensor<4x8xf32>
  %cs = arange {start = 0, end = 2} : tensor<2xi32>
  %cs2 = expand_dims {axis = 0} %cs : tensor<1x2xi32>
  %two = constant {value = 2} : tensor<4x1xi32>
  %rows2 = mul %r2, %two : tensor<4x1xi32>
  %rb2 = broadcast %rows2 : tensor<4x2xi32>
  %cb2 = broadcast %cs2 : tensor<4x2xi32>
  %off2 = add %rb2, %cb2 : tensor<4x2xi32>
  %pi = splat %idx : tensor<4x2xptr<i32>>
  %pii = addptr %pi, %off2 : tensor<4x2xptr<i32>>
  %i = load %pii : tensor<4x2xi32>
  %g = gather {axis = 1} %s, %i : tensor<4x2xf32>
  %po = splat %out : tensor<4x2xptr<f32>>
  %poo = addptr %po, %off2 : tensor<4x2xptr<f32>>
  store %poo, %g
  return
}
"#;

#[test]
fn gather_picks_along_one_axis() {
    let f = parse_func(GATHER_2D).unwrap();
    verify(&f).unwrap();
    let mut mem = Memory::new();
    let src: Vec<f64> = (0..32).map(|i| i as f64).collect();
    let s = mem.alloc_from("src", F32, &src);
    let idx = [7.0, 0.0, 3.0, 3.0, 1.0, 6.0, 0.0, 5.0];
    let i = mem.alloc_from("idx", I32, &idx);
    let o = mem.alloc_from("out", F32, &[f64::NAN; 8]);
    run(&f, &[Arg::Buffer(s), Arg::Buffer(i), Arg::Buffer(o)], [1, 1, 1], &mut mem).unwrap();
    let want: Vec<f64> = idx.iter().enumerate().map(|(k, &j)| ((k / 2) * 8) as f64 + j).collect();
    assert_eq!(mem.read_f64(o), want);
    // An index past the axis is an error at the op, naming the program.
    let bad = mem.alloc_from("idx", I32, &[0.0, 8.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
    let e = run(&f, &[Arg::Buffer(s), Arg::Buffer(bad), Arg::Buffer(o)], [1, 1, 1], &mut mem).unwrap_err();
    assert!(
        e.fault.to_string().contains("gather index 8 (at [0, 1] of the indices) is out of range for dim 1 of size 8"),
        "{e}"
    );
}

const HISTOGRAM: &str = r#"
func @k(%x: ptr<i32>, %out: ptr<i32>, %n: i32) attributes {target = sm_90a, num_warps = 4, num_stages = 3} {
  %i = arange {start = 0, end = 16} : tensor<16xi32>
  %px = splat %x : tensor<16xptr<i32>>
  %pxx = addptr %px, %i : tensor<16xptr<i32>>
  %v = load %pxx : tensor<16xi32>
  %ns = splat %n : tensor<16xi32>
  %m = cmp {pred = lt} %i, %ns : tensor<16xi1>
  %h = histogram {num_bins = 4} %v, %m : tensor<4xi32>
  %j = arange {start = 0, end = 4} : tensor<4xi32>
  %po = splat %out : tensor<4xptr<i32>>
  %poo = addptr %po, %j : tensor<4xptr<i32>>
  store %poo, %h
  return
}
"#;

#[test]
fn histogram_counts_unmasked_values_in_range() {
    let f = parse_func(HISTOGRAM).unwrap();
    verify(&f).unwrap();
    let mut mem = Memory::new();
    let x = [0.0, 1.0, 1.0, 3.0, -1.0, 4.0, 2.0, 3.0, 3.0, 0.0, 1.0, 2.0, 3.0, 3.0, 3.0, 3.0];
    let bx = mem.alloc_from("x", I32, &x);
    let o = mem.alloc_from("out", I32, &[-1.0; 4]);
    run(&f, &[Arg::Buffer(bx), Arg::Buffer(o), Arg::Int(12)], [1, 1, 1], &mut mem).unwrap();
    // The first 12 values; -1 and 4 fall outside the bins.
    assert_eq!(mem.read_f64(o), [2.0, 3.0, 2.0, 3.0]);
}

#[test]
fn inline_asm_is_refused_by_the_interpreter_at_the_op() {
    let src = r#"
func @k(%x: f32) attributes {target = sm_90a, num_warps = 4, num_stages = 3} {
  %y = inline_asm {asm = "mov.b32 $0, $1;", constraints = "=r,r", pure = false, pack = 1} %x : f32
  %t = globaltimer : i64
  %s = smid : i32
  gdc_wait
  gdc_launch_dependents
  return
}
"#;
    let f = parse_func(src).unwrap();
    verify(&f).unwrap();
    let e = run(&f, &[Arg::Float(1.0)], [1, 1, 1], &mut Memory::new()).unwrap_err();
    assert_eq!(e.fault.to_string(), "inline PTX cannot run in the interpreter");
    assert!(e.loc.is_none() && e.op.is_some(), "the error names the op");
    // Without the asm, the special registers and grid-dependency ops run.
    let f = parse_func(&src.replace(
        "  %y = inline_asm {asm = \"mov.b32 $0, $1;\", constraints = \"=r,r\", pure = false, pack = 1} %x : f32\n",
        "",
    ))
    .unwrap();
    run(&f, &[Arg::Float(1.0)], [1, 1, 1], &mut Memory::new()).unwrap();
}

#[test]
fn typing_rules_of_the_new_ops() {
    let bad = |body: &str| {
        let src = format!(
            "func @k(%x: ptr<f32>) attributes {{target = sm_90a, num_warps = 4, num_stages = 3}} {{\n  %i = arange {{start = 0, end = 8}} : tensor<8xi32>\n  %f = constant {{value = 1.0}} : tensor<8xf32>\n{body}\n  return\n}}\n"
        );
        verify(&parse_func(&src).unwrap()).unwrap_err().to_string()
    };
    let e = bad("  %g = gather {axis = 0} %i, %f : tensor<8xi32>");
    assert!(e.contains("indices must be integers"), "{e}");
    let e = bad("  %g = gather {axis = 1} %f, %i : tensor<8xf32>");
    assert!(e.contains("axis 1 is out of range for rank 1"), "{e}");
    let e = bad("  %h = histogram {num_bins = 4} %i : tensor<8xi32>");
    assert!(e.contains("result must be tensor<4xi32>"), "{e}");
    let e = bad("  %h = histogram {num_bins = 4} %f : tensor<4xi32>");
    assert!(e.contains("input must be integers"), "{e}");
    let e = bad("  %y = inline_asm {asm = \"\", constraints = \"=r,r\", pure = true, pack = 3} %f : tensor<8xf32>");
    assert!(e.contains("pack 3 must divide the 8 elements"), "{e}");
    let e = bad("  %t = globaltimer : i32");
    assert!(e.contains("result must be i64"), "{e}");
}
