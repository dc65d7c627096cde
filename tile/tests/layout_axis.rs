//! Axis analysis, text in and text out: `layout/X.in.tir` analyzes to the listing in `layout/X.axis` (one line
//! per integer or pointer value). `BLESS=1` rewrites the listings after checking a change by eye.

use tessel_tile::ir::{Func, ValueId};
use tessel_tile::layout::axis::{AxisAnalysis, analyze, dump};
use tessel_tile::parse::parse_func;

fn load(name: &str) -> (Func, AxisAnalysis) {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/layout");
    let f = parse_func(&std::fs::read_to_string(format!("{dir}/{name}.in.tir")).unwrap()).unwrap();
    let a = analyze(&f);
    let out = dump(&f, &a);
    let path = format!("{dir}/{name}.axis");
    if std::env::var_os("BLESS").is_some() {
        std::fs::write(&path, &out).unwrap();
    }
    assert_eq!(out, std::fs::read_to_string(&path).unwrap_or_default(), "{name}: listing differs from {path}");
    (f, a)
}

fn named(f: &Func, name: &str) -> ValueId {
    (0..f.values.len() as u32)
        .map(ValueId)
        .find(|&v| f.value(v).name.as_deref() == Some(name))
        .unwrap_or_else(|| panic!("no value `{name}`"))
}

#[test]
fn vector_add_offsets_are_contiguous_and_the_mask_follows_n() {
    let (f, a) = load("vector_add");
    let off = a.get(named(&f, "offsets")).unwrap();
    assert_eq!((off.contiguity[0], off.divisibility[0], off.constancy[0]), (1024, 1024, 1));
    // Pointers count divisibility in bytes: 16 from the argument, 4096 from the offsets.
    assert_eq!(a.get(named(&f, "xp")).unwrap().divisibility[0], 16);
    // With n a multiple of 16, the mask is constant over aligned runs of 16.
    assert_eq!(a.mask_alignment(named(&f, "mask"), 0), 16);
    let (g, b) = load("vector_add_ragged");
    assert_eq!(b.mask_alignment(named(&g, "mask"), 0), 1);
}

#[test]
fn transfer_functions_of_arithmetic_shapes_and_loops() {
    let (f, a) = load("axis_ops");
    let get = |n: &str| a.get(named(&f, n)).unwrap().clone();
    // r % 48: runs of 16 (48 = 16 * 3) starting at multiples of 16.
    assert_eq!((get("rem").contiguity[0], get("rem").divisibility[0]), (16, 16));
    assert_eq!(get("quot").constancy[0], 4);
    assert_eq!((get("shl").contiguity[0], get("shl").divisibility[0]), (1, 8));
    // r + r steps by 2: no runs, and only the first element is a multiple of everything.
    assert_eq!((get("twice").contiguity[0], get("twice").divisibility[0]), (1, 1));
    assert_eq!((get("contig").contiguity[0], get("contig").divisibility[0]), (64, 8));
    assert_eq!(get("lt").constancy[0], 16);
    // `r > n` flips inside a run (at r = n): no constancy; `n <= r` is `!(r < n)`, constant like `r < n`.
    assert_eq!(get("gt").constancy[0], 1);
    assert_eq!(get("le").constancy[0], 16);
    // Choosing between a run and a constant keeps neither.
    assert_eq!((get("sel").contiguity[0], get("sel").constancy[0]), (1, 1));
    assert_eq!(get("b").constancy, vec![4, 1]);
    assert_eq!(get("t").contiguity, vec![8, 1]);
    assert_eq!(get("flat").contiguity, vec![8]);
    // Adding a multiple of 16 elements each iteration keeps the runs and the 16-byte alignment; adding 3
    // elements (6 bytes) leaves 2-byte alignment.
    assert_eq!(get("i").divisibility[0], 16);
    assert_eq!((get("res").contiguity[0], get("res").divisibility[0]), (64, 16));
    assert_eq!((get("drift").contiguity[0], get("drift").divisibility[0]), (64, 2));
}
