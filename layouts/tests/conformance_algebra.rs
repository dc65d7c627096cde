//! Conformance cases 1–18 of `shared/conformance/layouts.md`: the algebra, checked exactly (bases in order).

use tessel_layouts::LinearLayout;

fn id(size: u32, i: &str, o: &str) -> LinearLayout {
    LinearLayout::identity_1d(size, i, o)
}

fn zeros(size: u32, i: &str, o: &str) -> LinearLayout {
    LinearLayout::zeros_1d(size, i, o)
}

/// A layout from `(in-dim, bases)` with out-dim sizes inferred.
fn ll(ins: &[(&str, &[&[u32]])], outs: &[&str]) -> LinearLayout {
    LinearLayout::from_bases(
        ins.iter().map(|(n, b)| (*n, b.iter().map(|v| v.to_vec()).collect())),
        outs.iter().copied(),
    )
    .unwrap()
}

/// A layout with explicit out-dim sizes.
fn ll_sized(ins: &[(&str, &[&[u32]])], outs: &[(&str, u32)]) -> LinearLayout {
    LinearLayout::new(ins.iter().map(|(n, b)| (*n, b.iter().map(|v| v.to_vec()).collect())), outs.iter().copied())
        .unwrap()
}

fn bases(l: &LinearLayout, dim: &str) -> Vec<Vec<u32>> {
    l.bases(dim).iter().map(|b| b.to_vec()).collect()
}

fn flat(l: &LinearLayout, dim: &str) -> Vec<u32> {
    l.bases(dim).iter().map(|b| b[0]).collect()
}

#[test]
fn case01_identity() {
    let l = id(32, "in", "out");
    assert_eq!(flat(&l, "in"), [1, 2, 4, 8, 16]);
    assert_eq!(l.in_dim_size("in"), 32);
    assert_eq!(l.out_dim_size("out"), 32);
    assert_eq!(flat(&id(1, "in", "out"), "in"), Vec::<u32>::new());
}

#[test]
fn case02_zeros() {
    let l = zeros(32, "in", "out");
    assert_eq!(flat(&l, "in"), [0, 0, 0, 0, 0]);
    assert_eq!(l.out_dim_size("out"), 1);
}

#[test]
fn case03_product_same_dims() {
    let l = id(16, "in", "out") * id(32, "in", "out");
    assert_eq!(flat(&l, "in"), [1, 2, 4, 8, 16, 32, 64, 128, 256]);
}

#[test]
fn case04_product_disjoint_dims() {
    let l = id(32, "in1", "out1") * id(16, "in2", "out2");
    assert_eq!(bases(&l, "in1"), [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0]]);
    assert_eq!(bases(&l, "in2"), [[0, 1], [0, 2], [0, 4], [0, 8]]);
}

#[test]
fn case05_product_with_zeros() {
    let l = id(8, "in", "out") * zeros(16, "in", "out");
    assert_eq!(flat(&l, "in"), [1, 2, 4, 0, 0, 0, 0]);
}

#[test]
fn case06_product_shared_in_dim() {
    let l = id(4, "in", "out1") * id(8, "in", "out2");
    assert_eq!(bases(&l, "in"), [[1, 0], [2, 0], [0, 1], [0, 2], [0, 4]]);
}

#[test]
fn case07_apply_not_surjective() {
    let l =
        ll_sized(&[("in1", &[&[4, 2], &[2, 1], &[1, 0]]), ("in2", &[&[1, 2], &[2, 1]])], &[("out1", 8), ("out2", 4)]);
    assert_eq!(l.apply(&[1, 0]).to_vec(), [4, 2]);
    assert_eq!(l.apply(&[0, 1]).to_vec(), [1, 2]);
    assert_eq!(l.apply(&[0, 0]).to_vec(), [0, 0]);
    assert!(!l.is_surjective());
}

#[test]
fn case08_compose() {
    let l1 = ll(&[("in1", &[&[1, 1], &[0, 1]]), ("in2", &[&[1, 0], &[1, 2]])], &["out1", "out2"]);
    let l2 = ll(&[("out1", &[&[2, 2], &[1, 0]]), ("out2", &[&[1, 1], &[2, 1]])], &["out3", "out4"]);
    let c = l1.compose(&l2).unwrap();
    assert_eq!(bases(&c, "in1"), [[3, 3], [1, 1]]);
    assert_eq!(bases(&c, "in2"), [[2, 2], [0, 3]]);
    assert_eq!(c.out_dim_size("out3"), 4);
    assert_eq!(c.out_dim_size("out4"), 4);
    assert!(!c.is_surjective());
}

#[test]
fn case09_reshape_ins() {
    let l = ll(&[("in1", &[&[1], &[4], &[8]]), ("in2", &[&[2]])], &["out"]);
    let r = l.reshape_ins(&[("in3", 2), ("in4", 8)]).unwrap();
    assert_eq!(r.in_dim_names(), ["in3".into(), "in4".into()] as [tessel_layouts::Dim; 2]);
    assert_eq!(flat(&r, "in3"), [1]);
    assert_eq!(flat(&r, "in4"), [4, 8, 2]);
}

#[test]
fn case10_reshape_outs() {
    let l = ll_sized(&[("in1", &[&[1], &[4], &[8]]), ("in2", &[&[3]])], &[("out", 16)]);
    let r = l.reshape_outs(&[("out2", 2), ("out3", 8)]).unwrap();
    assert_eq!(bases(&r, "in1"), [[1, 0], [0, 2], [0, 4]]);
    assert_eq!(bases(&r, "in2"), [[1, 1]]);
}

#[test]
fn case11_invert_and_compose() {
    let l1 = ll(&[("in1", &[&[2], &[1], &[4]])], &["out"]);
    let l2 = ll(&[("in2", &[&[4], &[1], &[2]])], &["out"]);
    let r = l1.invert_and_compose(&l2).unwrap();
    assert_eq!(flat(&r, "in1"), [4, 2, 1]);
    assert_eq!(r.out_dim_names(), ["in2".into()] as [tessel_layouts::Dim; 1]);
    assert_eq!(r.compose(&l2).unwrap(), l1);
}

#[test]
fn case12_invert_and_compose_free_variables_zero() {
    let l1 = ll(&[("in1", &[&[2], &[1], &[4]])], &["out"]);
    let l2 = ll(&[("in2", &[&[0], &[2], &[1], &[4]])], &["out"]);
    assert_eq!(l2.in_dim_size("in2"), 16);
    let r = l1.invert_and_compose(&l2).unwrap();
    assert_eq!(flat(&r, "in1"), [2, 4, 8]);
    assert_eq!(r.out_dim_size("in2"), 16);
    assert!(!r.is_surjective());
}

#[test]
fn case13_register_to_shared_offsets() {
    let reg = ll_sized(
        &[
            ("register", &[&[0, 1], &[0, 2], &[0, 4], &[0, 32], &[32, 0]]),
            ("lane", &[&[0, 8], &[0, 16], &[1, 0], &[2, 0], &[4, 0]]),
            ("warp", &[&[8, 0], &[16, 0]]),
            ("block", &[]),
        ],
        &[("dim0", 256), ("dim1", 128)],
    );
    let shared = ll_sized(
        &[
            (
                "offset",
                &[
                    &[0, 1],
                    &[0, 2],
                    &[0, 4],
                    &[0, 8],
                    &[0, 16],
                    &[0, 32],
                    &[0, 64],
                    &[1, 8],
                    &[2, 16],
                    &[4, 32],
                    &[8, 0],
                    &[16, 0],
                    &[32, 0],
                    &[64, 0],
                    &[128, 0],
                ],
            ),
            ("block", &[]),
        ],
        &[("dim0", 256), ("dim1", 128)],
    );
    let r = reg.invert_and_compose(&shared).unwrap();
    assert_eq!(r.out_dim_size("offset"), 32768);
    assert_eq!(r.out_dim_size("block"), 1);
    let col = |d: &str| bases(&r, d).into_iter().map(|b| b[0]).collect::<Vec<_>>();
    assert_eq!(col("register"), [1, 2, 4, 32, 4096]);
    assert_eq!(col("lane"), [8, 16, 136, 272, 544]);
    assert_eq!(col("warp"), [1024, 2048]);
    assert!(bases(&r, "register").iter().all(|b| b[1] == 0));
    assert_eq!(r, reg.compose(&shared.invert().unwrap()).unwrap());
}

#[test]
fn case14_num_consecutive_in_out() {
    assert_eq!(id(1, "in", "out").num_consecutive_in_out(), 1);
    assert_eq!(id(4, "in", "out").num_consecutive_in_out(), 4);
    assert_eq!((id(4, "in1", "out") * id(8, "in2", "out")).num_consecutive_in_out(), 4);
    let one = |b: &[&[u32]]| ll(&[("in", b)], &["out"]).num_consecutive_in_out();
    assert_eq!(one(&[&[1], &[2], &[4], &[9]]), 1);
    assert_eq!(one(&[&[1], &[2], &[4], &[10]]), 2);
    assert_eq!(one(&[&[1], &[4], &[2]]), 2);
    let two = ll(&[("in", &[&[1], &[2], &[4]]), ("in2", &[&[8], &[18]])], &["out"]);
    assert_eq!(two.num_consecutive_in_out(), 2);
}

#[test]
fn case15_free_variable_masks() {
    let masks =
        |l: &LinearLayout| l.free_variable_masks().into_iter().map(|(d, m)| (d.to_string(), m)).collect::<Vec<_>>();
    assert_eq!(masks(&id(4, "in", "out")), [("in".to_string(), 0)]);
    assert_eq!(masks(&zeros(16, "in", "out")), [("in".to_string(), 0b1111)]);
    let l = id(2, "in", "out") * zeros(4, "in", "out") * id(4, "in", "out") * zeros(2, "in", "out");
    assert_eq!(masks(&l), [("in".to_string(), 0b100110)]);
    let l = ll(&[("in1", &[&[1, 1], &[2, 2], &[0, 0]]), ("in2", &[&[1, 0], &[0, 1], &[2, 0]])], &["out1", "out2"]);
    assert_eq!(masks(&l), [("in1".to_string(), 0b100), ("in2".to_string(), 0b10)]);
}

#[test]
fn case16_sublayout() {
    let l = ll(&[("in1", &[&[1, 0], &[0, 1], &[2, 0]]), ("in2", &[&[0, 1]])], &["out1", "out2"]);
    let s = l.sublayout(&["in1", "in2"], &["out1"]);
    assert_eq!(flat(&s, "in1"), [1, 0, 2]);
    assert_eq!(flat(&s, "in2"), [0]);
    let s = l.sublayout(&["in1"], &[]);
    assert_eq!(s.num_in_dims(), 1);
    assert_eq!(s.num_out_dims(), 0);
    assert_eq!(bases(&s, "in1"), [Vec::<u32>::new(), vec![], vec![]]);
}

#[test]
fn case17_divide() {
    let l1 = ll(&[("in1", &[&[1, 1], &[2, 2], &[0, 8], &[0, 4]]), ("in2", &[&[0, 2], &[0, 1]])], &["out1", "out2"]);
    let l2 = ll(&[("in1", &[&[1, 1], &[2, 2]]), ("in2", &[&[0, 2], &[0, 1]])], &["out1", "out2"]);
    let l3 = ll(&[("in1", &[&[0, 2], &[0, 1]]), ("in2", &[])], &["out1", "out2"]);
    assert_eq!(&l2 * &l3, l1);
    assert_eq!(LinearLayout::divide_left(&l1, &l2).unwrap(), l3);
    assert_eq!(LinearLayout::divide_right(&l1, &l3).unwrap(), l2);
}

#[test]
fn case18_quotient() {
    let l = ll_sized(&[("dim1", &[&[1, 0]]), ("dim2", &[&[0, 0]])], &[("dim1", 2), ("dim2", 1)]);
    let q = l.quotient(&["dim1"]).unwrap();
    assert_eq!(q, zeros(2, "dim2", "dim2"));
    assert!(q.quotient(&["dim2"]).is_err());
}
