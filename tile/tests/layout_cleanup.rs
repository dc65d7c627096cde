//! Removal of redundant conversions on hand-written layout IR: `layout/cleanup.in.tir` becomes
//! `layout/cleanup.out.tir` (`BLESS=1` rewrites it).

use tessel_tile::layout::cleanup::cleanup;
use tessel_tile::parse::parse_func;
use tessel_tile::passes::canonicalize;
use tessel_tile::print::print_func;
use tessel_tile::verify::{verify, verify_layouts};

#[test]
fn chains_fold_cheap_values_recompute_and_broadcasts_convert_their_source() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/layout");
    let mut f = parse_func(&std::fs::read_to_string(format!("{dir}/cleanup.in.tir")).unwrap()).unwrap();
    verify(&f).unwrap();
    verify_layouts(&f).unwrap();
    cleanup(&mut f);
    canonicalize(&mut f);
    verify(&f).unwrap();
    verify_layouts(&f).unwrap();
    let out = print_func(&f);
    let path = format!("{dir}/cleanup.out.tir");
    if std::env::var_os("BLESS").is_some() {
        std::fs::write(&path, &out).unwrap();
    }
    assert_eq!(out, std::fs::read_to_string(&path).unwrap_or_default());
    // x → [1] → [2]: one conversion to [2]; x → [1] → [2] → [4] is x itself.
    assert!(out.contains("convert_layout %x : tensor<256xf32, BlockedLayout([2],[32],[2],[0])>"), "{out}");
    assert!(!out.contains("BlockedLayout([1],[32],[2],[0])"), "{out}");
    // The offsets (arange + splat) and the pointers are recomputed in the other layout, not converted.
    assert!(out.contains("arange {start = 0, end = 256} : tensor<256xi32, BlockedLayout([2],[32],[2],[0])>"), "{out}");
    assert!(!out.contains("convert_layout %off") && !out.contains("convert_layout %q"), "{out}");
    // The 8x256 broadcast tile is not converted: the conversion moves above the broadcast and the
    // expand_dims, to the 256-element row (as the slice of the target layout).
    assert!(
        out.contains("convert_layout %x : tensor<256xf32, SliceLayout(0, BlockedLayout([1,1],[1,32],[1,2],[1,0]))>"),
        "{out}"
    );
    assert_eq!(out.matches("convert_layout").count(), 2, "{out}");
}
