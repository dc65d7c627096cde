//! `tma_gather` / `tma_scatter` (sm_100a): TMA's `gather4` and `scatter4`, four rows of a 2-d tensor per
//! instruction, the rows picked by a tensor of row indices ([`tessel_tile::tma_gather`] states the rules).
//!
//! The PTX forms, as ptxas 13.0 accepts them for sm_100a (and refuses for sm_90a: "Feature '.tile::gather4 with
//! destination state space as .shared::cluster' not supported on .target 'sm_90a'"):
//!
//! ```text
//! cp.async.bulk.tensor.2d.shared::cluster.global.tile::gather4.mbarrier::complete_tx::bytes
//!     [dst], [map, {col, row0, row1, row2, row3}], [bar];
//! cp.async.bulk.tensor.2d.global.shared::cta.tile::scatter4.bulk_group [map, {col, row0, row1, row2, row3}], [src];
//! ```
//!
//! The tensor map's box is `{w, 1}` (the descriptor's `[1, cols]` block, `w` columns per box); each instruction
//! moves four rows of `w` columns to or from four consecutive rows of shared memory starting at `dst`/`src`, with
//! the map's swizzle applied to the addresses as for tile copies, so a row group's address is its first row's
//! unswizzled start (`row * w` elements after the column box's first row). A gather completes `4 * w` elements'
//! bytes on `bar` per instruction, whatever part of them falls outside the tensor; a scatter joins the thread's
//! bulk group, which every thread commits, as `tma_store`.
//!
//! Who issues: the row indices' layout puts each group of four in four consecutive registers of every lane of
//! a warp (lane bases zero), so one elected lane per warp issues its warp's groups from its own registers, one
//! instruction per group and column box. A group's rows start at the XOR of its register part (a constant) and
//! its warp part (computed once from the warp index); warps whose index has a bit of a zero warp basis hold the
//! same groups as a lower warp and issue nothing, and register groups repeated by a zero register basis are
//! issued once.
//!
//! In a cluster, each CTA issues the groups of its part of the indices into its part of the buffer (a buffer split
//! along its rows is localized by `cluster_local`, the indices split alike: the rows are the registers' without
//! the CTA bases); a two-CTA barrier takes the bytes in the pair's even CTA, and a multicast gather is dealt out
//! among the CTAs holding the same part, each gather4 landing in all of them:
//!
//! ```text
//! cp.async.bulk.tensor.2d.cta_group::2.shared::cluster.global.tile::gather4.mbarrier::complete_tx::bytes ...;
//! cp.async.bulk.tensor.2d.shared::cluster.global.tile::gather4.mbarrier::complete_tx::bytes.multicast::cluster
//!     [dst], [map, {col, row0, row1, row2, row3}], [bar], mask;
//! ```

use tessel_tile::ir::{OpData, ValueId};
use tessel_tile::tma::{self, TmaBlock};

use super::Lower;
use super::coords::{bases, layout_of, reg_coords};
use super::tma_issue::warp_and_elected;
use crate::CompileError;
use crate::ptx::{Operand, Reg, RegClass, instr, mem};

/// What the lowering needs of one gather or scatter.
struct Plan {
    block: TmaBlock,
    /// Bytes from one shared row to the next (`w` elements).
    row_bytes: u32,
    /// Each column box's byte offset in the buffer, with its column origin.
    col_boxes: Vec<(u32, u32)>,
    /// The first register of each group of four row indices this warp issues, and its rows' register part.
    groups: Vec<(usize, u32)>,
    /// The nonzero warp bases (bit, rows), and the warp bits of zero bases (those warps repeat others).
    warp_rows: Vec<(u32, u32)>,
    repeat_mask: u32,
}

fn plan(l: &Lower, desc: ValueId, buf: ValueId, x: ValueId) -> Result<Plan, CompileError> {
    let (elem, block) = tma::desc_block(l.f.ty(desc)).expect("verified: a tensordesc");
    let (shape, _, layout) = l.f.ty(buf).memdesc().expect("verified: a memdesc");
    let layout_spec = tma::desc_layout(l.f, desc);
    let (b, want) = tessel_tile::tma_gather::gather_block(elem, block, layout_spec.as_ref(), shape[0])
        .map_err(CompileError::new)?;
    if layout.linear.remove_zero_bases("block") != want {
        return Err(CompileError::new(format!(
            "the buffer {buf} of a TMA gather or scatter is not in the descriptor's layout, which TMA writes and reads"
        )));
    }
    let xl = layout_of(l.f.ty(x))?;
    if let Some(problem) = tessel_tile::tma_gather::index_layout_problem(xl) {
        return Err(CompileError::new(format!("the row indices {x} of a TMA gather or scatter: {problem}")));
    }
    // In a cluster, each CTA issues the groups of its part of the indices into its part of the buffer
    // (`cluster_local` checked that the two are split alike), so its rows are its registers' rows without the CTA
    // bases: `reg_coords` and the warp bases below.
    let col_boxes = b
        .boxes
        .iter()
        .map(|o| Ok((tma::box_offset(&want, &[0, o[1]])? * elem.bytes(), o[1])))
        .collect::<Result<Vec<_>, CompileError>>()?;
    let regs = bases(xl, "register");
    let repeated_regs: usize = regs.iter().enumerate().filter(|(_, b)| b[0] == 0).map(|(i, _)| 1 << i).sum();
    let groups = (0..xl.in_dim_size("register") as usize)
        .step_by(4)
        .filter(|r| r & repeated_regs == 0)
        .map(|r| (r, reg_coords(xl, r as u32)[0]))
        .collect();
    let warps = bases(xl, "warp");
    let warp_rows = warps.iter().enumerate().filter(|(_, b)| b[0] != 0).map(|(i, b)| (i as u32, b[0])).collect();
    let repeat_mask = warps.iter().enumerate().filter(|(_, b)| b[0] == 0).map(|(i, _)| 1u32 << i).sum();
    let row_bytes = b.box_dims[1] * elem.bytes();
    Ok(Plan { block: b, row_bytes, col_boxes, groups, warp_rows, repeat_mask })
}

fn need_sm100(l: &Lower, what: &str) -> Result<(), CompileError> {
    if l.arch != tessel_tile::Target::Sm100a {
        return Err(CompileError::new(format!("{what} needs sm_100a (Blackwell), not {}", l.arch)));
    }
    Ok(())
}

/// The issuing lane's predicate (the elected lane of a warp that holds groups no lower warp holds, under the
/// op's `pred`) and the warp's rows part.
fn issuer(l: &mut Lower, p: &Plan, pred: Option<ValueId>) -> Result<(Reg, Reg), CompileError> {
    let q = pred.map(|x| l.get(x).map(|r| r[0])).transpose()?;
    let (warp, elected) = warp_and_elected(l, q);
    let issue = if p.repeat_mask == 0 {
        elected
    } else {
        let (t, i) = (l.b.reg(RegClass::B32), l.b.reg(RegClass::Pred));
        l.b.op("and.b32", t, (warp, p.repeat_mask));
        l.b.op("setp.eq.and.u32", i, (t, 0u32, elected));
        i
    };
    let rows = l.b.reg(RegClass::B32);
    l.b.op("mov.u32", rows, 0u32);
    for &(bit, basis) in &p.warp_rows {
        let t = l.b.reg(RegClass::B32);
        l.b.op("bfe.u32", t, (warp, bit, 1u32));
        l.b.op("mul.lo.u32", t, (t, basis));
        l.b.op("xor.b32", rows, (rows, t));
    }
    Ok((issue, rows))
}

/// One instruction of a gather or scatter.
struct Copy {
    /// The issuing predicate, the shared address and the coordinates `{col, row0..row3}`.
    issue: Reg,
    smem: Reg,
    coords: Vec<Reg>,
    /// The group's first row in the buffer (this CTA's part), and its column box's index.
    row: Reg,
    column_box: u32,
}

/// The instructions of one gather or scatter: per group of four rows and per column box.
fn copies(
    l: &mut Lower,
    data: &OpData,
    x: ValueId,
    y: ValueId,
    pred: Option<ValueId>,
) -> Result<Vec<Copy>, CompileError> {
    let (desc, buf) = (data.operands[0], data.operands[1]);
    let p = plan(l, desc, buf, x)?;
    let (issue, warp_rows) = issuer(l, &p, pred)?;
    let base = l.get(buf)?[0];
    let indices = l.get(x)?.to_vec();
    let col = l.get(y)?[0];
    let mut out = Vec::new();
    for &(r, reg_rows) in &p.groups {
        let row = if reg_rows == 0 {
            warp_rows
        } else {
            let row = l.b.reg(RegClass::B32);
            l.b.op("xor.b32", row, (warp_rows, reg_rows));
            row
        };
        for (column_box, &(offset, origin)) in p.col_boxes.iter().enumerate() {
            let smem = l.b.reg(RegClass::B32);
            let at = if offset == 0 {
                base
            } else {
                let a = l.b.reg(RegClass::B32);
                l.b.op("add.u32", a, (base, offset));
                a
            };
            l.b.op("mad.lo.u32", smem, (row, p.row_bytes, at));
            let c = if origin == 0 {
                col
            } else {
                let c = l.b.reg(RegClass::B32);
                l.b.op("add.s32", c, (col, origin));
                c
            };
            let mut coords = vec![c];
            coords.extend_from_slice(&indices[r..r + 4]);
            out.push(Copy { issue, smem, coords, row, column_box: column_box as u32 });
        }
    }
    debug_assert_eq!(p.block.box_dims[0], 1);
    Ok(out)
}

/// `tma_gather desc, mem, bar, x, y [, pred] {multicast}`. A two-CTA barrier takes each CTA's bytes in its
/// pair's even CTA (`.cta_group::2` at that CTA's `mapa` address, as `tma_load`). With `multicast`, the CTAs that
/// hold the same part of the buffer deal out the groups of four rows (group `j`'s column box `b` issued by the
/// member at position `(j + b) % g` of the `g` members, whichever warp holds it), each landing in all of them
/// (`.multicast::cluster` with the group's mask).
pub(crate) fn gather(l: &mut Lower, data: &OpData, multicast: bool) -> Result<(), CompileError> {
    need_sm100(l, "`tma.async_gather` (TMA gather4)")?;
    let (desc, buf, bar) = (data.operands[0], data.operands[1], data.operands[2]);
    let map = super::tma::tensor_map(l, desc)?;
    let mut bar_addr = l.get(bar)?[0];
    let mut op = String::from("cp.async.bulk.tensor.2d");
    if tessel_tile::cluster::barrier_ctas(l.f.ty(bar)) == 2 {
        op.push_str(".cta_group::2");
        bar_addr = super::asynchronous::lead_barrier(l, bar_addr);
    }
    op.push_str(".shared::cluster.global.tile::gather4.mbarrier::complete_tx::bytes");
    let group = if multicast { super::tma::multicast_group(l, buf) } else { None };
    if group.is_some() {
        op.push_str(".multicast::cluster");
    }
    let copies = copies(l, data, data.operands[3], data.operands[4], data.operands.get(5).copied())?;
    for c in copies {
        let tensor = Operand::TensorAddr { map, coords: c.coords };
        match &group {
            Some(g) => {
                let (turn, mine, p) = (l.b.reg(RegClass::B32), l.b.reg(RegClass::Pred), l.b.reg(RegClass::Pred));
                l.b.op("shr.u32", turn, (c.row, 2u32));
                if c.column_box != 0 {
                    l.b.op("add.u32", turn, (turn, c.column_box));
                }
                l.b.op("and.b32", turn, (turn, g.members - 1));
                l.b.op("setp.eq.u32", mine, (turn, g.position));
                l.b.op("and.pred", p, (c.issue, mine));
                l.b.emit(instr(op.clone()).guard(p).srcs((mem(c.smem), tensor, mem(bar_addr), g.mask)));
            }
            None => l.b.emit(instr(op.clone()).guard(c.issue).srcs((mem(c.smem), tensor, mem(bar_addr)))),
        }
    }
    Ok(())
}

/// `tma_scatter desc, mem, x, y`: the instructions, then one bulk group for them from every thread.
pub(crate) fn scatter(l: &mut Lower, data: &OpData) -> Result<(), CompileError> {
    need_sm100(l, "`tma.async_scatter` (TMA scatter4)")?;
    let map = super::tma::tensor_map(l, data.operands[0])?;
    let op = "cp.async.bulk.tensor.2d.global.shared::cta.tile::scatter4.bulk_group";
    for c in copies(l, data, data.operands[2], data.operands[3], None)? {
        let tensor = Operand::TensorAddr { map, coords: c.coords };
        l.b.emit(instr(op).guard(c.issue).srcs((tensor, mem(c.smem))));
    }
    l.b.emit(instr("cp.async.bulk.commit_group"));
    Ok(())
}
