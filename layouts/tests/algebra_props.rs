//! Algebraic laws of `LinearLayout`, checked on random layouts.

use proptest::prelude::*;
use tessel_layouts::LinearLayout;

/// Random layout with the given in-dims (name, number of bits in `0..=max`) and out-dims (name, log2 size in
/// `0..=max`); bases are uniform over the out space.
fn arb_layout(
    ins: &'static [(&'static str, u32)],
    outs: &'static [(&'static str, u32)],
) -> BoxedStrategy<LinearLayout> {
    let out_sizes: Vec<_> = outs.iter().map(|&(_, max)| 0..=max).collect();
    let in_bits: Vec<_> = ins.iter().map(|&(_, max)| 0..=max).collect();
    (out_sizes, in_bits)
        .prop_flat_map(move |(out_log2, in_bits)| {
            let coord: Vec<_> = out_log2.iter().map(|&l| 0u32..(1u32 << l)).collect();
            let dims: Vec<_> = in_bits.iter().map(|&n| prop::collection::vec(coord.clone(), n as usize)).collect();
            (Just(out_log2), dims)
        })
        .prop_map(move |(out_log2, dims)| {
            LinearLayout::new(
                ins.iter().zip(dims).map(|(&(n, _), b)| (n, b)),
                outs.iter().zip(out_log2).map(|(&(n, _), l)| (n, 1u32 << l)),
            )
            .unwrap()
        })
        .boxed()
}

/// Random surjective layout from `ins` onto `outs` (in bits >= out bits): unit vectors for every out bit plus
/// random columns, mixed by random swaps and column additions (which keep the span), then split into the named
/// dims. With as many in bits as out bits it is invertible.
fn arb_surjective(
    ins: &'static [(&'static str, u32)],
    outs: &'static [(&'static str, u32)],
) -> BoxedStrategy<LinearLayout> {
    let n_out: u32 = outs.iter().map(|o| o.1).sum();
    let n_in: u32 = ins.iter().map(|i| i.1).sum();
    assert!(n_in >= n_out && n_in <= 32);
    let n = n_in as usize;
    let extra = prop::collection::vec(0u32..(1u32 << n_out), n - n_out as usize);
    (extra, prop::collection::vec((0..n, 0..n, any::<bool>()), 0..64))
        .prop_map(move |(extra, ops)| {
            let mut cols: Vec<u32> = (0..n_out).map(|i| 1u32 << i).chain(extra).collect();
            for (a, b, swap) in ops {
                if a == b {
                    continue;
                }
                if swap { cols.swap(a, b) } else { cols[a] ^= cols[b] }
            }
            let flat =
                LinearLayout::new([("x", cols.iter().map(|&c| vec![c]).collect::<Vec<_>>())], [("y", 1u32 << n_out)])
                    .unwrap();
            let out_dims: Vec<(&str, u32)> = outs.iter().map(|&(d, l)| (d, 1u32 << l)).collect();
            let in_dims: Vec<(&str, u32)> = ins.iter().map(|&(d, l)| (d, 1u32 << l)).collect();
            flat.reshape_outs(&out_dims).unwrap().reshape_ins(&in_dims).unwrap()
        })
        .boxed()
}

/// Three composable random layouts `a: (i, j) -> (p, q)`, `b: (p, q) -> r`, `c: r -> (s, t)`, where each
/// outer layout's in-dims have exactly the inner layout's out-dim sizes.
fn arb_chain() -> BoxedStrategy<(LinearLayout, LinearLayout, LinearLayout)> {
    (0u32..=3, 0u32..=2, 0u32..=4)
        .prop_flat_map(|(p, q, r)| {
            let coord = |l: u32| 0u32..(1u32 << l);
            let a = (
                prop::collection::vec((coord(p), coord(q)), 0..=5),
                prop::collection::vec((coord(p), coord(q)), 0..=2),
            );
            let b = (prop::collection::vec(coord(r), p as usize), prop::collection::vec(coord(r), q as usize));
            let c = prop::collection::vec((coord(3), coord(3)), r as usize);
            (Just((p, q, r)), a, b, c)
        })
        .prop_map(|((p, q, r), (ai, aj), (bp, bq), c)| {
            let pair = |v: Vec<(u32, u32)>| v.into_iter().map(|(x, y)| vec![x, y]).collect::<Vec<_>>();
            let one = |v: Vec<u32>| v.into_iter().map(|x| vec![x]).collect::<Vec<_>>();
            let a = LinearLayout::new([("i", pair(ai)), ("j", pair(aj))], [("p", 1 << p), ("q", 1 << q)]).unwrap();
            let b = LinearLayout::new([("p", one(bp)), ("q", one(bq))], [("r", 1 << r)]).unwrap();
            let c = LinearLayout::new([("r", pair(c))], [("s", 8), ("t", 8)]).unwrap();
            (a, b, c)
        })
        .boxed()
}

fn config() -> ProptestConfig {
    ProptestConfig::default() // 256 cases, or PROPTEST_CASES
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn apply_is_linear(l in arb_layout(&[("a", 4), ("b", 3)], &[("x", 4), ("y", 3)]), p in any::<u32>(), q in any::<u32>()) {
        let na = l.in_dim_size("a") - 1;
        let nb = l.in_dim_size("b") - 1;
        let (x, y) = ([p & na, (p >> 8) & nb], [q & na, (q >> 8) & nb]);
        let sum = l.apply(&[x[0] ^ y[0], x[1] ^ y[1]]);
        let (lx, ly) = (l.apply(&x), l.apply(&y));
        prop_assert_eq!(sum.to_vec(), lx.iter().zip(&ly).map(|(a, b)| a ^ b).collect::<Vec<_>>());
    }

    #[test]
    fn compose_is_associative((a, b, c) in arb_chain()) {
        let left = a.compose(&b).unwrap().compose(&c).unwrap();
        let right = a.compose(&b.compose(&c).unwrap()).unwrap();
        prop_assert_eq!(left, right);
    }

    #[test]
    fn invert_is_a_two_sided_inverse(l in arb_surjective(&[("register", 2), ("lane", 5), ("warp", 2)], &[("dim0", 4), ("dim1", 5)])) {
        prop_assert!(l.is_invertible());
        let inv = l.invert().unwrap();
        let id_in = l.compose(&inv).unwrap();
        let id_out = inv.compose(&l).unwrap();
        for (d, s) in l.in_dim_sizes() {
            for bit in 0..s.trailing_zeros() as usize {
                let image: Vec<(String, u32)> = id_in.dims_of(&d, bit);
                prop_assert_eq!(image, expected_unit(&l.in_dim_sizes(), d.as_str(), bit));
            }
        }
        for (d, s) in l.out_dim_sizes() {
            for bit in 0..s.trailing_zeros() as usize {
                let image: Vec<(String, u32)> = id_out.dims_of(&d, bit);
                prop_assert_eq!(image, expected_unit(&l.out_dim_sizes(), d.as_str(), bit));
            }
        }
    }

    #[test]
    fn invert_and_compose_solves_for_surjective_outer(
        b in arb_surjective(&[("register", 4), ("lane", 5), ("warp", 2)], &[("dim0", 3), ("dim1", 3)]),
        a in arb_layout(&[("register", 3), ("lane", 5), ("warp", 2)], &[("dim0", 3), ("dim1", 3)]),
    ) {
        // `a`'s out-dims are at most as large as `b`'s, which covers all of them.
        let x = a.invert_and_compose(&b).unwrap();
        let back = x.compose(&b).unwrap();
        // Same map; `back` may have larger out-dims than `a`, so compare images.
        for (d, s) in a.in_dim_sizes() {
            for bit in 0..s.trailing_zeros() as usize {
                prop_assert_eq!(back.basis(d.as_str(), bit), a.basis(d.as_str(), bit));
            }
        }
    }

    #[test]
    fn pseudo_invert_is_a_right_inverse(b in arb_surjective(&[("register", 4), ("lane", 4)], &[("dim0", 3), ("dim1", 2)])) {
        prop_assert!(b.is_surjective());
        let p = b.pseudo_invert().unwrap();
        let id = p.compose(&b).unwrap();
        for (d, s) in b.out_dim_sizes() {
            for bit in 0..s.trailing_zeros() as usize {
                prop_assert_eq!(id.dims_of(&d, bit), expected_unit(&b.out_dim_sizes(), d.as_str(), bit));
            }
        }
    }

    #[test]
    fn rank_and_free_variables_agree(l in arb_layout(&[("register", 4), ("lane", 5), ("warp", 3)], &[("dim0", 4), ("dim1", 4)])) {
        let free: u32 = l.free_variable_masks().iter().map(|(_, m)| m.count_ones()).sum();
        prop_assert_eq!(l.rank() + free, l.total_in_log2());
        prop_assert_eq!(l.is_injective(), free == 0);
    }

    #[test]
    fn product_then_sublayout_or_divide_round_trips(
        a in arb_layout(&[("register", 3), ("lane", 3)], &[("dim0", 3), ("dim1", 2)]),
        b in arb_layout(&[("register", 2), ("warp", 2)], &[("dim0", 2), ("dim2", 2)]),
        c in arb_layout(&[("block", 2)], &[("dim3", 2)]),
    ) {
        let ab = &a * &b;
        prop_assert_eq!(LinearLayout::divide_left(&ab, &a).unwrap().bases_vec(), widen(&b, &ab).bases_vec());
        prop_assert_eq!(LinearLayout::divide_right(&ab, &b).unwrap().bases_vec(), widen(&a, &ab).bases_vec());
        // Disjoint dims: the product is a direct sum and sublayout recovers each factor.
        let ac = &a * &c;
        prop_assert_eq!(ac.sublayout(&["register", "lane"], &["dim0", "dim1"]), a.clone());
        prop_assert_eq!(ac.sublayout(&["block"], &["dim3"]), c);
    }

    #[test]
    fn reshapes_round_trip(l in arb_layout(&[("register", 3), ("lane", 5), ("warp", 2)], &[("dim0", 4), ("dim1", 4), ("dim2", 2)]), split in 0u32..=16) {
        let total_in = l.total_in_log2();
        let s = split.min(total_in);
        let r = l.reshape_ins(&[("a", 1 << s), ("b", 1 << (total_in - s))]).unwrap();
        prop_assert_eq!(r.reshape_ins(&sizes(&l.in_dim_sizes())).unwrap(), l.clone());
        let total_out = l.total_out_log2();
        let s = split.min(total_out);
        let r = l.reshape_outs(&[("x", 1 << s), ("y", 1 << (total_out - s))]).unwrap();
        prop_assert_eq!(r.reshape_outs(&sizes(&l.out_dim_sizes())).unwrap(), l.clone());
        let t = l.transpose_outs(&["dim2", "dim0", "dim1"]).unwrap();
        prop_assert!(t.equivalent(&l));
        prop_assert_eq!(t.transpose_outs(&["dim0", "dim1", "dim2"]).unwrap(), l.clone());
        let t = l.transpose_ins(&["warp", "register", "lane"]).unwrap();
        prop_assert!(t.equivalent(&l));
        prop_assert_eq!(l.flatten_outs().flatten_ins().total_in_log2(), l.total_in_log2());
    }
}

/// `b` with the out-dims of `ab` it lacks added at size 1, in `ab`'s out-dim order: division keeps every
/// out-dim of the dividend.
fn widen(b: &LinearLayout, ab: &LinearLayout) -> LinearLayout {
    let names: Vec<String> = ab.out_dims().map(|d| d.to_string()).collect();
    let mut ins_all: Vec<(String, Vec<Vec<u32>>)> = Vec::new();
    for d in ab.in_dims() {
        let bases = (0..b.in_dim_size_log2(d.as_str()) as usize)
            .map(|bit| {
                names
                    .iter()
                    .map(|o| {
                        b.apply_named(&[(d.as_str(), 1 << bit)])
                            .iter()
                            .find(|(n, _)| n == o.as_str())
                            .map_or(0, |p| p.1)
                    })
                    .collect()
            })
            .collect();
        ins_all.push((d.to_string(), bases));
    }
    LinearLayout::new(ins_all, names.iter().map(|o| (o.clone(), b.out_dim_size(o)))).unwrap()
}

fn sizes(dims: &[(tessel_layouts::Dim, u32)]) -> Vec<(&str, u32)> {
    dims.iter().map(|(d, s)| (d.as_str(), *s)).collect()
}

fn expected_unit(dims: &[(tessel_layouts::Dim, u32)], dim: &str, bit: usize) -> Vec<(String, u32)> {
    dims.iter().map(|(d, _)| (d.to_string(), if d == dim { 1 << bit } else { 0 })).collect()
}

trait DimsOf {
    fn dims_of(&self, dim: &tessel_layouts::Dim, bit: usize) -> Vec<(String, u32)>;
}

impl DimsOf for LinearLayout {
    /// The image of one input bit, as `(out-dim, coordinate)` pairs.
    fn dims_of(&self, dim: &tessel_layouts::Dim, bit: usize) -> Vec<(String, u32)> {
        self.apply_named(&[(dim.as_str(), 1 << bit)]).into_iter().map(|(d, c)| (d.to_string(), c)).collect()
    }
}
