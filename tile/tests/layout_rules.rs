//! The layout transforms behind propagation agree with the Gluon constructors and invert each other, and the
//! coalescing helpers give Triton's parameters.

use std::sync::Arc;

use tessel_layouts::{BlockedLayout, CgaLayout, DistributedLayout, SliceLayout};
use tessel_tile::layout::coalesce::{Ctas, blocked, default_blocked, order_from_contiguity};
use tessel_tile::layout::rules::{self, from_spec};
use tessel_tile::types::Layout;

fn b(spt: &[u32], tpw: &[u32], wpc: &[u32], order: &[u32]) -> BlockedLayout {
    BlockedLayout {
        size_per_thread: spt.to_vec(),
        threads_per_warp: tpw.to_vec(),
        warps_per_cta: wpc.to_vec(),
        order: order.to_vec(),
        cga: CgaLayout::Single,
    }
}

fn samples() -> Vec<(BlockedLayout, Vec<u32>)> {
    vec![
        (b(&[1, 4], &[1, 32], &[2, 2], &[1, 0]), vec![4, 256]),
        (b(&[1, 4], &[2, 16], &[4, 1], &[1, 0]), vec![64, 64]),
        (b(&[4, 1], &[16, 2], &[1, 4], &[0, 1]), vec![64, 64]),
        (b(&[2, 2], &[4, 8], &[2, 2], &[1, 0]), vec![8, 128]),
        (b(&[1, 1], &[8, 4], &[4, 1], &[0, 1]), vec![128, 4]),
        (b(&[1, 2, 4], &[2, 4, 4], &[1, 2, 2], &[2, 1, 0]), vec![4, 16, 32]),
    ]
}

#[test]
fn slicing_the_linear_layout_is_the_slice_layout() {
    for (p, shape) in samples() {
        let parent = from_spec(DistributedLayout::Blocked(p.clone()), &shape).unwrap();
        for axis in 0..shape.len() {
            let mut small = shape.clone();
            small.remove(axis);
            let spec = DistributedLayout::Slice(SliceLayout {
                dim: axis as u32,
                parent: Box::new(DistributedLayout::Blocked(p.clone())),
            });
            let want = spec.to_linear(&small).unwrap();
            let got = rules::slice(&parent, axis).unwrap();
            assert_eq!(got.linear, want, "{p} axis {axis}");
            assert!(got.spec.is_some(), "a slice of a blocked layout keeps its spelling");
            // expand_dims of the slice gives the parent back (at the shape with a 1 at `axis`).
            let mut unit = shape.clone();
            unit[axis] = 1;
            let back = rules::expand_dims(&got, axis, &unit).unwrap();
            assert_eq!(back.linear, p.to_linear(&unit).unwrap(), "{p} axis {axis}");
        }
    }
}

#[test]
fn shrinking_for_a_broadcast_is_the_layout_at_the_smaller_shape() {
    for (p, shape) in samples() {
        let full = from_spec(DistributedLayout::Blocked(p.clone()), &shape).unwrap();
        for mask in 1..(1u32 << shape.len()) {
            let small: Vec<u32> =
                shape.iter().enumerate().map(|(i, &s)| if mask >> i & 1 == 1 { 1 } else { s }).collect();
            let got = rules::shrink(&full, &small).unwrap();
            assert_eq!(got.linear, p.to_linear(&small).unwrap(), "{p} at {small:?}");
        }
    }
}

#[test]
fn permute_reshape_join_split_and_cat_invert() {
    for (p, shape) in samples() {
        let l: Arc<Layout> = from_spec(DistributedLayout::Blocked(p.clone()), &shape).unwrap();
        let rank = shape.len() as u32;
        let order: Vec<u32> = (0..rank).rev().collect();
        let t = rules::permute(&l, &order).unwrap();
        assert_eq!(rules::permute(&t, &rules::inverse_order(&order)).unwrap().linear, l.linear);
        // Transposing moves the coordinates: register 0 of a [1,4]-per-thread layout walks dim1, then dim0.
        assert_eq!(
            t.linear.basis("register", 0).iter().rev().copied().collect::<Vec<_>>(),
            l.linear.basis("register", 0)
        );
        let numel: u32 = shape.iter().product();
        let flat = rules::reshape(&l, &[numel]).unwrap();
        assert_eq!(rules::reshape(&flat, &shape).unwrap().linear, l.linear);
        let j = rules::join(&l).unwrap();
        assert_eq!(j.linear.basis("register", 0).last(), Some(&1));
        assert_eq!(rules::split(&j).unwrap().linear, l.linear);
        let c = rules::cat(&l).unwrap();
        assert_eq!(c.linear.out_dim_size("dim0"), 2 * shape[0]);
    }
    // A row-major flatten of a row-major layout keeps each thread's 4 consecutive elements consecutive.
    let l = from_spec(DistributedLayout::Blocked(b(&[1, 4], &[2, 16], &[4, 1], &[1, 0])), &[64, 64]).unwrap();
    let flat = rules::reshape(&l, &[4096]).unwrap();
    assert_eq!(flat.linear.num_consecutive_in_out(), 4);
    // Split needs the last dim in one register bit: a layout spreading it over lanes has no split.
    let lanes = from_spec(DistributedLayout::Blocked(b(&[1, 1], &[16, 2], &[4, 1], &[1, 0])), &[64, 2]).unwrap();
    assert!(rules::split(&lanes).is_none());
}

#[test]
fn cluster_blocked_layouts_split_the_slowest_dims_first() {
    let cga = |bases: &[&[u32]]| CgaLayout::Bases(bases.iter().map(|b| b.to_vec()).collect());
    let with = |l: BlockedLayout, cga: CgaLayout| BlockedLayout { cga, ..l };
    // 1024 elements in vectors of 4 over 2 CTAs: 512 each, one vector per thread.
    assert_eq!(blocked(&[1024], &[4], &[0], 4, Ctas(2)), with(b(&[4], &[32], &[4], &[0]), cga(&[&[1]])));
    // Rows first: 64x32 over 4 CTAs is 16 rows each, the threads laid out on a 16x32 part.
    assert_eq!(
        blocked(&[64, 32], &[1, 4], &[1, 0], 4, Ctas(4)),
        with(b(&[1, 4], &[4, 8], &[4, 1], &[1, 0]), cga(&[&[1, 0], &[2, 0]]))
    );
    // Two rows: the rows split in two, then the columns (8 vectors of 4) in two, the rank's low bit on the
    // columns (the fastest dim); each CTA's 1x16 part takes four lanes along the columns, the rest of its threads
    // repeating it.
    assert_eq!(
        blocked(&[2, 32], &[1, 4], &[1, 0], 4, Ctas(4)),
        with(b(&[1, 4], &[8, 4], &[4, 1], &[1, 0]), cga(&[&[0, 1], &[1, 0]]))
    );
    // Two rows of one vector over 4 CTAs: the rows split in two, the other two CTAs hold copies; the rank's low bit
    // is the copies' (on the fastest dim, which is not split), the next the rows'.
    assert_eq!(blocked(&[2, 4], &[1, 4], &[1, 0], 4, Ctas(4)).cga, cga(&[&[0, 0], &[1, 0]]));
    // Column-major order splits the columns first.
    assert_eq!(
        blocked(&[64, 64], &[4, 1], &[0, 1], 4, Ctas(2)),
        with(b(&[4, 1], &[16, 2], &[1, 4], &[0, 1]), cga(&[&[0, 1]]))
    );
    // One vector: nothing to split, so both CTAs hold a copy (a zero block basis).
    let one = blocked(&[4], &[4], &[0], 4, Ctas(2));
    assert_eq!(one.cga, cga(&[&[0]]));
    let lin = from_spec(DistributedLayout::Blocked(one), &[4]).unwrap();
    assert_eq!(lin.linear.bases("block").iter().map(|b| b.to_vec()).collect::<Vec<_>>(), vec![vec![0]]);
    // One CTA: no cga at all.
    assert_eq!(blocked(&[64, 32], &[1, 4], &[1, 0], 4, Ctas::ONE).cga, CgaLayout::Single);
}

#[test]
fn blocked_parameters_follow_triton() {
    assert_eq!(blocked(&[1024], &[4], &[0], 4, Ctas::ONE), b(&[4], &[32], &[4], &[0]));
    assert_eq!(blocked(&[4, 256], &[1, 4], &[1, 0], 4, Ctas::ONE), b(&[1, 4], &[1, 32], &[2, 2], &[1, 0]));
    assert_eq!(blocked(&[64, 64], &[4, 1], &[0, 1], 4, Ctas::ONE), b(&[4, 1], &[16, 2], &[1, 4], &[0, 1]));
    // A narrow fast dim takes only as many lanes as it has vectors; the rest go to the slow dim.
    assert_eq!(blocked(&[128, 8], &[1, 4], &[1, 0], 8, Ctas::ONE), b(&[1, 4], &[16, 2], &[8, 1], &[1, 0]));
    assert_eq!(default_blocked(&[64, 64], 4, Ctas::ONE), b(&[1, 1], &[1, 32], &[2, 2], &[1, 0]));
    assert_eq!(order_from_contiguity(&[1, 1]), vec![1, 0]);
    assert_eq!(order_from_contiguity(&[64, 1]), vec![0, 1]);
    assert_eq!(order_from_contiguity(&[4, 1, 16]), vec![2, 0, 1]);
}
