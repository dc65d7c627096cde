//! TMA gather and scatter (`cp.async.bulk.tensor.2d...tile::gather4` / `tile::scatter4`, sm_100a only): the
//! rows of a 2-d descriptor picked one by one by a tensor of row indices.
//!
//! A gather descriptor's block is `[1, cols]`; its layout (the host `TensorDescriptor`'s) is the NVMMA layout of
//! the `[rows, cols]` buffer the rows land in, not of the block. `tma_gather desc, mem, bar, x, y` reads rows
//! `x[i]`, columns `y .. y + cols` of the tensor into row `i` of `mem`; a row or column outside the tensor reads
//! the descriptor's padding (zero unless `padding=nan`), and the barrier gets `rows * cols` elements' bytes.
//! `tma_scatter desc, mem, x, y` writes row `i` of `mem` to row `x[i]`, dropping what falls outside the tensor;
//! it is a bulk group, like `tma_store`, retired by `tma_store_wait`. Negative scatter coordinates and a column
//! offset that is not 16-byte aligned are illegal instructions on the GPU, so the interpreter refuses them.
//!
//! The hardware facts the lowering relies on (PTX ISA, checked with ptxas 13.0 for sm_100a; sm_90a refuses
//! `.tile::gather4` with a `.shared::cluster` destination):
//!
//! - One instruction moves four rows: coordinates `{col, row0, row1, row2, row3}`, the tensor map's box
//!   `{w, 1}` (`w` columns, one row). The rows land one after another at the destination address, each `w`
//!   elements, with the map's swizzle applied to the shared addresses as for any TMA box; so a buffer whose
//!   rows are `w` elements apart (an NVMMA layout whose box holds all rows) takes each group of four rows at
//!   the address of its first row. A block wider than a swizzle row is several column boxes, each its own
//!   instruction, as for tile copies ([`crate::tma::block_in`]).
//! - The instruction is issued by one lane of a warp from that lane's registers, so the index tensor's layout
//!   must give every lane the same indices (lane bases zero) and put each group of four consecutive indices in
//!   four consecutive registers (the first two register bases `[1]` and `[2]`); the other register and warp
//!   bases must move by whole groups (multiples of 4). A warp basis of zero repeats the indices, and only the
//!   warps with those bits clear issue.
//!
//! In a cluster (`num_ctas` > 1) a gather's buffer may be split over the CTAs along its rows (a `cga_layout`):
//! each CTA gathers the rows of its part, from the row indices it holds, into its part (laid out as the layout
//! without its CTA bases), so the indices must be split over the CTAs as the rows are ([`cluster_problem`]).
//! With `multicast`, the CTAs holding the same part share its rows: each group of four is gathered by one of them
//! and lands in all (`.multicast::cluster`).
//!
//! [`check_target`] refuses both ops below sm_100a at the op's location.

use tessel_layouts::LinearLayout;
use tessel_layouts::standard::NvmmaSharedLayout;

use crate::ir::{Func, OpId};
use crate::ops::Op;
use crate::target::Target;
use crate::tma::{TmaBlock, TmaError};
use crate::types::{ScalarType, Type};

/// The fewest rows a gather or scatter moves (Gluon's rule: two `gather4`s).
pub const MIN_ROWS: u32 = 8;
/// The fewest bytes a gathered row holds (Gluon's rule: `cols >= (32 // bitwidth) * 8`, 32 bytes).
pub const MIN_ROW_BYTES: u32 = 32;

/// Gluon's names of the ops, for messages.
pub fn display_name(op: &Op) -> &'static str {
    match op {
        Op::TmaScatter => "tma.async_scatter",
        _ => "tma.async_gather",
    }
}

/// How a gather of `rows` rows of descriptor block `block` (`[1, cols]` of `elem`) in `layout` (the
/// descriptor's, else `NVMMASharedLayout.get_default_for([rows, cols])`) is copied: the tensor map's box
/// `[1, w]` and the column boxes, and the buffer layout the rows land in. The error says what breaks the rules.
pub fn gather_block(
    elem: ScalarType,
    block: &[u32],
    layout: Option<&NvmmaSharedLayout>,
    rows: u32,
) -> Result<(TmaBlock, LinearLayout), String> {
    if block.len() != 2 || block[0] != 1 {
        return Err(format!("gathers and scatters need a 2-d descriptor whose block is [1, cols], got {block:?}"));
    }
    let cols = block[1];
    if rows < MIN_ROWS || !rows.is_power_of_two() {
        return Err(format!("gathers and scatters move a power of two of at least {MIN_ROWS} rows, got {rows}"));
    }
    if cols * elem.bits() / 8 < MIN_ROW_BYTES {
        return Err(format!(
            "a gathered row holds at least {MIN_ROW_BYTES} bytes ({} {} elements), got {cols}",
            MIN_ROW_BYTES * 8 / elem.bits(),
            elem.triton_name()
        ));
    }
    let default = NvmmaSharedLayout::default_for(&[rows, cols], elem.bits());
    let layout = layout.unwrap_or(&default);
    if layout.fp4_padded {
        return Err("gathers of fp4_padded blocks are not supported".into());
    }
    let tma = crate::tma::block_in(elem, block, Some(layout)).map_err(|e: TmaError| e.to_string())?;
    let linear = layout.to_linear(&[rows, cols]).map_err(|e| e.to_string())?;
    // A buffer spread over a cluster's CTAs (a `cga_layout`): each CTA's rows land in its own part, laid out as
    // the layout without its CTA bases over the part's shape; the CTAs split the rows, never the columns (a
    // gathered row is one box).
    let spec = tessel_layouts::AnyLayout::Shared(tessel_layouts::SharedLayout::Nvmma(layout.clone()));
    let whole = crate::types::Layout { spec: Some(spec), linear: linear.clone() };
    let (part_rows, part) = match crate::cluster_part::local_shared(&whole, &[rows, cols])? {
        None => (rows, linear.clone()),
        Some(p) if p.shape[1] != cols => {
            return Err(format!(
                "the buffer layout {layout} splits the gathered rows' columns over the CTAs; a gather's CTAs may \
                 split its rows only"
            ));
        }
        Some(p) => (p.shape[0], p.layout.linear.clone()),
    };
    // Each group of four rows lands at its first row's address: row `p` of column box `o` starts `p * w`
    // elements after the box's first row, which holds when the layout's box holds every row.
    let w = tma.box_dims[1];
    for origin in &tma.boxes {
        let start = crate::tma::box_offset(&part, &[0, origin[1]]).map_err(|e| e.to_string())?;
        for p in 0..part_rows {
            let at = crate::tma::box_offset(&part, &[p, origin[1]]).map_err(|e| e.to_string())?;
            if at < start || (at - start) / w != p {
                return Err(format!(
                    "the buffer layout {layout} over [{rows}, {cols}] does not keep the rows {w} elements apart, as \
                     gather4 writes them"
                ));
            }
        }
    }
    Ok((tma, linear))
}

/// The memdesc type of the buffer a gather of `rows` rows of descriptor block `block` writes.
pub fn buffer_type(
    elem: ScalarType,
    block: &[u32],
    layout: Option<&NvmmaSharedLayout>,
    rows: u32,
) -> Result<Type, String> {
    let (tma, linear) = gather_block(elem, block, layout, rows)?;
    let spec = tessel_layouts::AnyLayout::Shared(tessel_layouts::SharedLayout::Nvmma(tma.layout));
    Ok(Type::MemDesc {
        shape: [rows, block[1]].as_slice().into(),
        elem,
        layout: std::sync::Arc::new(crate::types::Layout { spec: Some(spec), linear }),
    })
}

/// Why the linear layout of a row-index tensor cannot feed gather4/scatter4 (see the module's rules), if it
/// cannot.
pub fn index_layout_problem(linear: &LinearLayout) -> Option<String> {
    let one = |dim: &str| -> Vec<u32> { linear.bases(dim).iter().map(|b| b[0]).collect() };
    let (regs, lanes, warps) = (one("register"), one("lane"), one("warp"));
    if regs.len() < 2 || regs[0] != 1 || regs[1] != 2 {
        return Some(format!(
            "each group of four consecutive row indices must sit in four consecutive registers of a thread (the \
             first register bases [1] and [2]); the register bases are {regs:?}"
        ));
    }
    if lanes.iter().any(|&b| b != 0) {
        return Some(format!(
            "every lane of a warp must hold the same row indices (lane bases all [0]); the lane bases are {lanes:?}"
        ));
    }
    if let Some(b) = regs[2..].iter().chain(&warps).find(|&&b| b % 4 != 0) {
        return Some(format!(
            "the register and warp bases past the first two must move by groups of four rows, got [{b}]"
        ));
    }
    None
}

/// Why row indices in layout `index` cannot gather into a buffer in layout `buffer` in a cluster of `num_ctas`
/// CTAs, if they cannot. Each CTA gathers into its own part of the buffer from the indices it holds, so for each
/// CTA bit the indices must be split as the buffer's rows are (the indices of a CTA's rows in that CTA), or held
/// whole by the CTAs that hold the buffer whole. CTAs holding the same part gather the same rows, each into its
/// own copy, or, with `multicast`, share them (each row gathered once, landing in all of them).
pub fn cluster_problem(index: &LinearLayout, buffer: &LinearLayout, num_ctas: u32) -> Option<String> {
    let (xb, bb) = (crate::cluster::block_bases(index), crate::cluster::block_bases(buffer));
    for i in 0..num_ctas.trailing_zeros() as usize {
        let x = xb.get(i).map_or(0, |b| b[0]);
        let (r, c) = bb.get(i).map_or((0, 0), |b| (b[0], b[1]));
        if c != 0 {
            return Some(format!(
                "CTA bit {i} splits the buffer's columns ({c}..); a gather's CTAs may split its rows only"
            ));
        }
        if r != x && r != 0 {
            return Some(format!(
                "CTA bit {i} moves the buffer by {r} rows but the row indices by {x}: each CTA gathers the rows of its \
                 own part of the buffer from the indices it holds, so the indices must be split over the CTAs as the \
                 buffer's rows are (give `x_offsets` the buffer's cga_layout along its rows)"
            ));
        }
        if r != x {
            return Some(format!(
                "CTA bit {i} splits the row indices ({x}..) over CTAs that each hold the whole buffer; each CTA would \
                 hold only some of the rows it must gather (gathering other CTAs' indices into a shared buffer is not \
                 supported)"
            ));
        }
    }
    None
}

/// The rule of `tma_gather desc, mem, bar, x, y [, pred]` and `tma_scatter desc, mem, x, y`.
pub(crate) fn types(op: &Op, ins: &[&Type], outs: &[&Type]) -> Result<(), crate::verify_checks::Violation> {
    use crate::verify_checks::{Violation, counts};
    let gather = matches!(op, Op::TmaGather { .. });
    let fixed = if gather { 5 } else { 4 };
    counts(ins, outs, fixed..=fixed + gather as usize, 0)?;
    let Type::TensorDesc { elem, block_shape } = ins[0] else {
        return Err(Violation::Rule("the first operand must be a tensordesc".into()));
    };
    if block_shape.len() != 2 || block_shape[0] != 1 {
        return Err(Violation::Rule(format!("the descriptor's block must be [1, cols], got {}", ins[0])));
    }
    let rows = match ins[1].memdesc() {
        Some((&[rows, cols], e, _)) if cols == block_shape[1] && e == *elem => rows,
        _ => {
            return Err(Violation::Rule(format!(
                "the buffer must be a memdesc of rows of the block ({}), got {}",
                ins[0], ins[1]
            )));
        }
    };
    if gather && !matches!(ins[2].memdesc(), Some((shape, ScalarType::I64, _)) if shape == [1]) {
        return Err(Violation::Rule(format!("the barrier must be a memdesc<1xi64>, got {}", ins[2])));
    }
    let x = ins[fixed - 2];
    if !x.is_tensor() || x.shape() != [rows] || x.elem() != Some(crate::types::Elem::Scalar(ScalarType::I32)) {
        return Err(Violation::Rule(format!("the row indices must be a tensor<{rows}xi32>, got {x}")));
    }
    if let Some(problem) = x.layout().and_then(|l| index_layout_problem(&l.linear)) {
        return Err(Violation::Rule(format!("the row indices' layout: {problem}")));
    }
    if *ins[fixed - 1] != Type::scalar(ScalarType::I32) {
        return Err(Violation::Rule(format!("the column offset must be an i32, got {}", ins[fixed - 1])));
    }
    match ins.get(fixed) {
        Some(t) if **t != Type::scalar(ScalarType::I1) => {
            Err(Violation::Rule(format!("the predicate must be an i1, got {t}")))
        }
        _ => Ok(()),
    }
}

/// Gather and scatter exist on sm_100a only: in a kernel for `target`, the first such op, with the message.
pub fn check_target(f: &Func, target: Target) -> Result<(), (OpId, String)> {
    if target == Target::Sm100a {
        return Ok(());
    }
    for o in f.all_ops() {
        let op = &f.op(o).op;
        if matches!(op, Op::TmaGather { .. } | Op::TmaScatter) {
            let what = if matches!(op, Op::TmaGather { .. }) { "gather4" } else { "scatter4" };
            return Err((
                o,
                format!(
                    "`{}` (TMA {what}) needs sm_100a (Blackwell); this kernel compiles for {target}",
                    display_name(op)
                ),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_wider_than_a_swizzle_row_is_gathered_as_column_boxes() {
        // bf16 rows of 128: the 128-byte swizzle of a [128, 128] buffer, two 64-column boxes of one row.
        let l = NvmmaSharedLayout::default_for(&[128, 128], 16);
        let (b, _) = gather_block(ScalarType::BF16, &[1, 128], Some(&l), 128).unwrap();
        assert_eq!((b.box_dims.as_slice(), b.swizzle_bytes()), ([1, 64].as_slice(), 128));
        assert_eq!(b.boxes, [vec![0, 0], vec![0, 64]]);
        // f32 rows of 16 in an [8, 16] buffer: one box with the 64-byte swizzle.
        let l = NvmmaSharedLayout::default_for(&[8, 16], 32);
        let (b, _) = gather_block(ScalarType::F32, &[1, 16], Some(&l), 8).unwrap();
        assert_eq!((b.box_dims.as_slice(), b.boxes.len(), b.swizzle_bytes()), ([1, 16].as_slice(), 1, 64));
    }

    #[test]
    fn gathers_refuse_short_rows_few_rows_and_other_blocks() {
        let e = gather_block(ScalarType::BF16, &[1, 8], None, 8).unwrap_err();
        assert!(e.contains("at least 32 bytes (16 bfloat16 elements), got 8"), "{e}");
        let e = gather_block(ScalarType::F32, &[1, 16], None, 4).unwrap_err();
        assert!(e.contains("at least 8 rows, got 4"), "{e}");
        let e = gather_block(ScalarType::F32, &[2, 16], None, 8).unwrap_err();
        assert!(e.contains("block is [1, cols], got [2, 16]"), "{e}");
    }

    #[test]
    fn index_layouts_need_groups_of_four_in_registers_and_no_lane_bases() {
        use tessel_layouts::LinearLayout as L;
        let make = |reg: &[u32], lane: &[u32], warp: &[u32]| {
            let v = |b: &[u32]| b.iter().map(|&x| vec![x]).collect::<Vec<_>>();
            L::from_bases([("register", v(reg)), ("lane", v(lane)), ("warp", v(warp))], ["dim0"]).unwrap()
        };
        // SliceLayout(0, BlockedLayout([1, 4], [32, 1], [1, 4], [1, 0])) over 256 rows.
        assert_eq!(index_layout_problem(&make(&[1, 2, 16, 32, 64, 128], &[0; 5], &[4, 8])), None);
        // BlockedLayout([256], [32], [4], [0]): every warp holds every index (warp 0 issues).
        assert_eq!(index_layout_problem(&make(&[1, 2, 4, 8, 16, 32, 64, 128], &[0; 5], &[0, 0])), None);
        // BlockedLayout([4], [32], [4], [0]): lanes hold different indices.
        let e = index_layout_problem(&make(&[1, 2], &[4, 8, 16, 32, 64], &[128, 0])).unwrap();
        assert!(e.contains("lane bases all [0]"), "{e}");
        // BlockedLayout([1], [32], [4], [0]): one index per thread.
        let e = index_layout_problem(&make(&[], &[1, 2, 4, 8, 16], &[32, 64])).unwrap();
        assert!(e.contains("first register bases [1] and [2]"), "{e}");
        let e = index_layout_problem(&make(&[1, 2, 8, 4], &[0; 5], &[18])).unwrap();
        assert!(e.contains("groups of four rows, got [18]"), "{e}");
    }

    fn nvmma(text: &str) -> NvmmaSharedLayout {
        match tessel_layouts::expr::parse_layout(text) {
            Ok(tessel_layouts::AnyLayout::Shared(tessel_layouts::SharedLayout::Nvmma(l))) => l,
            other => panic!("{text}: {other:?}"),
        }
    }

    #[test]
    fn a_buffer_split_over_a_pair_along_its_rows_is_gathered_by_parts() {
        // Example 05's: fp8 rows of 128 split over a CTA pair, 8 of the 16 rows in each CTA.
        let split = "NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=8, rank=2, cga_layout=[[1, 0]])";
        let (b, linear) = gather_block(ScalarType::F8E4M3, &[1, 128], Some(&nvmma(split)), 16).unwrap();
        assert_eq!(b.box_dims, [1, 128]);
        assert_eq!(crate::cluster::block_bases(&linear), [vec![8, 0]]);
        // Columns split over the pair: a gathered row would be two CTAs' boxes.
        let cols = "NVMMASharedLayout(swizzle_byte_width=64, element_bitwidth=8, rank=2, cga_layout=[[0, 1]])";
        let e = gather_block(ScalarType::F8E4M3, &[1, 128], Some(&nvmma(cols)), 16).unwrap_err();
        assert!(e.contains("splits the gathered rows' columns over the CTAs"), "{e}");
    }

    #[test]
    fn in_a_cluster_the_indices_are_split_as_the_rows_are() {
        use tessel_layouts::LinearLayout as L;
        let v = |b: &[u32]| b.iter().map(|&x| vec![x]).collect::<Vec<_>>();
        // 16 indices, four per warp of two, CTA bases `block`.
        let index = |block: &[u32]| {
            L::from_bases(
                [("register", v(&[1, 2])), ("lane", v(&[0; 5])), ("warp", v(&[4])), ("block", v(block))],
                ["dim0"],
            )
            .unwrap()
        };
        let buffer = |cga: &str| {
            let swizzle = if cga.contains("[0, 1]") { 64 } else { 128 };
            let text = format!(
                "NVMMASharedLayout(swizzle_byte_width={swizzle}, element_bitwidth=8, rank=2, cga_layout={cga})"
            );
            nvmma(&text).to_linear(&[16, 128]).unwrap()
        };
        // Split alike (example 05), both whole, and no cga at all in a pair (both whole): fine.
        assert_eq!(cluster_problem(&index(&[8]), &buffer("[[1, 0]]"), 2), None);
        assert_eq!(cluster_problem(&index(&[0]), &buffer("[[0, 0]]"), 2), None);
        assert_eq!(cluster_problem(&index(&[]), &buffer("[]"), 2), None);
        // The buffer split, the indices whole: each CTA would gather every row into its half.
        let e = cluster_problem(&index(&[0]), &buffer("[[1, 0]]"), 2).unwrap();
        assert!(e.contains("CTA bit 0 moves the buffer by 8 rows but the row indices by 0"), "{e}");
        // The indices split, the buffer whole in each CTA.
        let e = cluster_problem(&index(&[8]), &buffer("[[0, 0]]"), 2).unwrap();
        assert!(e.contains("CTA bit 0 splits the row indices (8..) over CTAs that each hold the whole buffer"), "{e}");
        // The columns split.
        let e = cluster_problem(&index(&[0]), &buffer("[[0, 1]]"), 2).unwrap();
        assert!(e.contains("CTA bit 0 splits the buffer's columns (64..)"), "{e}");
    }

    fn gather_func(rows: u32, layout: &str, target: &str) -> crate::ir::Func {
        let t = |n: u32| format!("tensor<{n}xi32, {layout}>");
        let text = format!(
            "func @k(%d: ptr<f32>, %s0: i32, %s1: i32, %t0: i64, %t1: i64, %x: ptr<i32>, %y: i32) attributes {{target = {target}, num_warps = 4, gluon = true}} {{
  %desc = make_tensor_desc {{rank = 2, layout = \"NVMMASharedLayout(64, 32)\"}} %d, %s0, %s1, %t0, %t1 : tensordesc<1x16xf32>
  %1 = arange {{start = 0, end = {rows}}} : {}
  %2 = splat %x : tensor<{rows}xptr<i32>, {layout}>
  %3 = addptr %2, %1 : tensor<{rows}xptr<i32>, {layout}>
  %rows = load %3 : {}
  %buf = local_alloc : memdesc<16x16xf32, NVMMASharedLayout(64, 32)>
  %bar = local_alloc : memdesc<1xi64, SwizzledSharedLayout(1,1,1,[0])>
  tma_gather %desc, %buf, %bar, %rows, %y
  return
}}",
            t(rows),
            t(rows)
        );
        crate::parse::parse_func(&text).unwrap()
    }

    fn verify_err(rows: u32, layout: &str) -> String {
        let f = gather_func(rows, layout, "sm_100a");
        crate::verify::verify(&f).map(|_| String::new()).unwrap_or_else(|e| e.to_string())
    }

    #[test]
    fn below_sm100a_the_gather_is_refused_naming_the_op() {
        let slice = "SliceLayout(0, BlockedLayout([1,4],[32,1],[1,4],[1,0]))";
        let check = |f: Func| check_target(&f, f.target);
        assert!(check(gather_func(16, slice, "sm_100a")).is_ok());
        let (_, e) = check(gather_func(16, slice, "sm_90a")).unwrap_err();
        assert_eq!(e, "`tma.async_gather` (TMA gather4) needs sm_100a (Blackwell); this kernel compiles for sm_90a");
    }

    #[test]
    fn the_verifier_names_a_wrong_index_count_and_layout() {
        let slice = "SliceLayout(0, BlockedLayout([1,4],[32,1],[1,4],[1,0]))";
        assert_eq!(verify_err(16, slice), "");
        let e = verify_err(8, slice);
        assert!(e.contains("the row indices must be a tensor<16xi32>"), "{e}");
        let e = verify_err(16, "BlockedLayout([1],[32],[4],[0])");
        assert!(e.contains("the row indices' layout") && e.contains("first register bases [1] and [2]"), "{e}");
    }
}
