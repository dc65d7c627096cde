use super::*;
use crate::expr::parse_layout;

fn build(src: &str, shape: &[u32]) -> LinearLayout {
    parse_layout(src).expect("parses").to_linear(shape).expect("builds")
}

/// register: [(0,1)], lane: [(0,2),(1,0),(2,0)] on 4x4: thread t holds row t/2, columns 2(t%2) and 2(t%2)+1.
fn four_by_four() -> LinearLayout {
    let ins = [
        ("register", vec![vec![0, 1]]),
        ("lane", vec![vec![0, 2], vec![1, 0], vec![2, 0]]),
        ("warp", vec![]),
        ("block", vec![]),
    ];
    LinearLayout::new(ins, [("dim0", 4), ("dim1", 4)]).expect("valid")
}

#[test]
fn json_lists_bases_per_in_dim_and_out_dim_sizes() {
    let l = build("BlockedLayout([1,2],[4,8],[2,1],[1,0])", &[8, 16]);
    assert_eq!(
        to_json(&l),
        "{\"in_dims\": {\"register\": [[0, 1]], \"lane\": [[0, 2], [0, 4], [0, 8], [1, 0], [2, 0]], \"warp\": [[4, 0]], \
         \"block\": []}, \"out_dims\": {\"dim0\": 8, \"dim1\": 16}}"
    );
    let shared = build("SwizzledSharedLayout(1, 1, 1, [0])", &[4]);
    assert_eq!(to_json(&shared), "{\"in_dims\": {\"offset\": [[1], [2]], \"block\": []}, \"out_dims\": {\"dim0\": 4}}");
}

#[test]
fn table_of_a_4x4_layout_is_the_grid_people_draw() {
    assert_eq!(
        to_table(&four_by_four()),
        "4x4 tensor (dim0, dim1); T<t>:r<r> = thread t (warp t/8, lane t%8), register r\n\
         \x20      0     1     2     3\n\
         0  T0:r0 T0:r1 T1:r0 T1:r1\n\
         1  T2:r0 T2:r1 T3:r0 T3:r1\n\
         2  T4:r0 T4:r1 T5:r0 T5:r1\n\
         3  T6:r0 T6:r1 T7:r0 T7:r1\n"
    );
}

#[test]
fn table_lists_every_holder_of_a_broadcast_element() {
    // 4 rows x 8 columns of lanes on a 4x4 tensor: lanes 4 apart hold the same element.
    let t = to_table(&build("BlockedLayout([1,1],[4,8],[1,1],[1,0])", &[4, 4]));
    let rows: Vec<&str> = t.lines().collect();
    assert_eq!(rows[2], "0    T0:r0|T4:r0   T1:r0|T5:r0   T2:r0|T6:r0   T3:r0|T7:r0");
    assert_eq!(rows[5], "3  T24:r0|T28:r0 T25:r0|T29:r0 T26:r0|T30:r0 T27:r0|T31:r0");
    // All holders are too wide for a grid, the first ones are not: the grid shows those and says how the others
    // follow (lanes 1 and 2 and warp 2 split dim1 of the parent, so they hold copies).
    let t = to_table(&build("SliceLayout(1, BlockedLayout([1,4],[8,4],[4,1],[1,0]))", &[16]));
    let rows: Vec<&str> = t.lines().collect();
    assert_eq!(
        rows[1],
        "each element is held 8x: the cell shows the first holder, the others are it with any combination of T^1, \
         T^2, T^64"
    );
    assert_eq!(
        rows[3],
        "   T0:r0  T4:r0  T8:r0 T12:r0 T16:r0 T20:r0 T24:r0 T28:r0 T32:r0 T36:r0 T40:r0 T44:r0 T48:r0 T52:r0 T56:r0 T60:r0"
    );
    // A long 1-D tensor wraps into rows, each labelled with the index it starts at.
    let t = to_table(&build("SliceLayout(1, BlockedLayout([1,4],[8,4],[4,1],[1,0]))", &[64]));
    let rows: Vec<&str> = t.lines().collect();
    assert_eq!(rows.len(), 2 + 16);
    assert!(rows[1].ends_with("  2                               3"), "{t}");
    assert_eq!(
        rows[9],
        "28  T112:r0|T113:r0|T114:r0|T115:r0 T116:r0|T117:r0|T118:r0|T119:r0 T120:r0|T121:r0|T122:r0|T123:r0 T124:r0|T125:r0|T126:r0|T127:r0"
    );
    // Even the first holders are too wide for a grid: one line per element, with every holder.
    let t = to_table(&build("BlockedLayout([1,4],[8,4],[4,1],[1,0])", &[2, 64]));
    assert_eq!(t.lines().count(), 1 + 128);
    assert!(t.contains("\n(0, 37)  T1:r9|T9:r9|T17:r9|T25:r9|T33:r9|T41:r9|T49:r9|T57:r9|T65:r9|T73:r9|T81:r9|T89:r9|T97:r9|T105:r9|T113:r9|T121:r9\n"), "{t}");
}

#[test]
fn table_of_higher_ranks_stacks_slices_and_marks_unheld_elements() {
    let t = to_table(&build("BlockedLayout([1,1,2],[1,4,8],[2,1,1],[2,1,0])", &[2, 4, 4]));
    assert!(t.contains("\n[0, :, :]\n"), "{t}");
    assert!(t.contains("\n[1, :, :]\n"), "{t}");
    assert!(t.contains("\n0  T32:r0|T34:r0|T36:r0|T38:r0 T32:r1|"), "{t}");
    // Only even columns are reached.
    let l = LinearLayout::new([("register", vec![vec![2]])], [("dim0", 4)]).expect("valid");
    assert_eq!(to_table(&l).lines().nth(2), Some("  T0:r0     - T0:r1     -"));
}

#[test]
fn table_of_shared_and_block_layouts() {
    // NVMMA 32-byte swizzle, 16-bit: rows 4-7 swap their two 8-element halves (conformance case 35).
    let t = to_table(&build("NVMMASharedLayout(32, 16)", &[8, 16]));
    assert!(t.starts_with("8x16 tensor (dim0, dim1); cell = offset of the element in shared memory, in elements\n"));
    assert!(t.contains("\n4   72  73  74  75  76  77  78  79  64  65  66  67  68  69  70  71\n"), "{t}");
    let two_ctas = build("BlockedLayout([1], [32], [1], [0], cga_layout=[[1]])", &[64]);
    let t = to_table(&two_ctas);
    assert!(t.starts_with("64 tensor (dim0); B<b>: = block (CTA) b; T<t>:r<r>"), "{t}");
    assert!(t.contains("\n32   B1:T0:r0  B1:T1:r0  B1:T2:r0"), "{t}");
}

#[test]
fn svg_draws_one_labelled_cell_per_element_colored_by_warp() {
    let l = build("BlockedLayout([1,2],[4,8],[2,1],[1,0])", &[8, 16]);
    let opts = SvgOptions { title: Some("BlockedLayout([1,2],[4,8],[2,1],[1,0]) on 8x16".into()), elem_bits: 16 };
    let svg = to_svg_with(&l, &opts);
    assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
    assert!(svg.trim_end().ends_with("</svg>"));
    assert!(svg.contains(">BlockedLayout([1,2],[4,8],[2,1],[1,0]) on 8x16</text>"));
    assert_eq!(svg.matches("<title>").count(), 128);
    // Row 4 belongs to warp 1: thread 32 = lane 0 of warp 1.
    assert!(svg.contains(&format!("fill=\"{}\" stroke=\"#777\" stroke-width=\"0.5\"><title>T32:r0</title>", color(1))));
    assert!(svg.contains(">t0 r1</text>"));
    assert!(svg.contains(">warp 1</text>"));
    assert!(svg.contains(">dim1 →</text>"));
}

#[test]
fn svg_of_shared_memory_colors_banks_and_labels_offsets() {
    let svg = to_svg_with(&build("NVMMASharedLayout(32, 16)", &[8, 16]), &SvgOptions::default());
    // Offset 64 of 16-bit elements is byte 128: bank 0.
    assert!(svg.contains(&format!("fill=\"{}\"", bank_color(0))));
    assert!(svg.contains("<title>offset 64, bank 0</title>"));
    assert!(svg.contains(">bank 31</text>"));
}

#[test]
fn large_tensors_shrink_cells_and_drop_labels() {
    let l = build("BlockedLayout([1,4],[8,4],[4,1],[1,0])", &[256, 256]);
    let svg = to_svg(&l);
    assert_eq!(svg.matches("<rect x=").count() - svg.matches("width=\"14\" height=\"14\"").count(), 65536 + 1);
    assert!(!svg.contains(" r63</text>"), "cell labels should be dropped");
    let huge = LinearLayout::identity_1d(1 << 25, "register", "dim0");
    assert!(check_viewable(&huge).is_err());
    assert!(to_svg(&huge).contains("views draw at most 2^24 of each"));
    assert!(to_table(&huge).starts_with("(no table: "));
}
