//! Who issues the copies of a TMA block, and with which operands.
//!
//! A block wider than its swizzle is several boxes (a 64×256 fp16 tile with the 128-byte swizzle is four
//! 64-column boxes), and the copies are the program's, not each thread's: one lane per box issues it. Three
//! things decide how fast that is:
//!
//! - **Which lane.** `elect.sync` in a warp whose index ptxas can see is uniform (a shuffle from lane 0), as
//!   Triton does. ptxas then issues each copy as one predicated uniform-datapath `UTMALDG`/`UTMASTG`. Behind
//!   `%tid == 0` it wrapped every copy in a loop over the active lanes, about a dozen instructions per copy
//!   that every warp ran through on every iteration: 65% more instructions than Triton's matmul. ncu at locked
//!   clocks timed both the same, but the extra issue drew power, and a long run paid for it in clock speed.
//! - **How many instructions.** When the boxes' origins and shared offsets step evenly (boxes side by side
//!   along one dim, the usual case), warp `w` issues box `w` of each round of `num_warps` boxes through one
//!   instruction whose coordinates and address are computed from `w`: a block costs one copy instruction
//!   however many boxes it has.
//! - **Ordering.** Boxes landing before the expecting thread's `mbarrier.arrive.expect_tx` take the
//!   transaction count below zero, which the PTX ISA allows (±(2^20 − 1)); the phase cannot complete before
//!   that arrival.
//!
//! A refill whose slot was released by `ring_release` is issued by the elected lane of the warp that completed
//! the round, which alone knows it may: every box from it, one after the other.

use tessel_tile::ir::ValueId;
use tessel_tile::tma::{self, TmaBlock};

use super::Lower;
use super::asynchronous::{first_thread, released_by_ring};
use crate::CompileError;
use crate::ptx::{Operand, Reg, RegClass};

/// One copy instruction: the predicate of the lane that issues it, its shared-memory address and its
/// coordinates (innermost dim first).
pub(crate) struct BoxCopy {
    pub pred: Reg,
    pub smem: Reg,
    pub coords: Vec<Reg>,
}

/// The copy instructions of block `b` of buffer `buf` at block coordinates `coords`, under the op's optional
/// predicate `pred`.
pub(crate) fn box_copies(
    l: &mut Lower,
    pred: Option<ValueId>,
    buf: ValueId,
    b: &TmaBlock,
    coords: &[Reg],
) -> Result<Vec<BoxCopy>, CompileError> {
    let offsets = box_offsets(l, buf, b)?;
    let even = even_steps(&b.boxes, &offsets).filter(|_| !pred.is_some_and(|x| released_by_ring(l, x)));
    let Some((origin_step, offset_step)) = even else {
        let issuers = copy_issuers(l, pred, b.boxes.len() as u32)?;
        let smem = box_addresses(l, buf, b)?;
        let mut out = Vec::with_capacity(b.boxes.len());
        for ((origin, smem), pred) in b.boxes.iter().zip(smem).zip(issuers) {
            out.push(BoxCopy { pred, smem, coords: box_coords(l, coords, origin, None, b.layout.fp4_padded)? });
        }
        return Ok(out);
    };
    let q = pred.map(|x| l.get(x).map(|r| r[0])).transpose()?;
    let base = l.get(buf)?[0];
    let (warp, elected) = warp_and_elected(l, q);
    let n = b.boxes.len() as u32;
    let nw = l.num_warps;
    // Round r: warp w < min(nw, n - r·nw) issues box r·nw + w.
    (0..n.div_ceil(nw))
        .map(|round| {
            let first = round * nw;
            let pred = l.b.reg(RegClass::Pred);
            l.b.op("setp.lt.and.u32", pred, (warp, (n - first).min(nw), elected));
            let index = if first == 0 {
                warp
            } else {
                let i = l.b.reg(RegClass::B32);
                l.b.op("add.u32", i, (warp, first));
                i
            };
            let at = if offsets[0] == 0 {
                base
            } else {
                let a = l.b.reg(RegClass::B32);
                l.b.op("add.u32", a, (base, offsets[0]));
                a
            };
            let smem = l.b.reg(RegClass::B32);
            l.b.op("mad.lo.u32", smem, (index, offset_step, at));
            let indexed = Some((index, origin_step.as_slice()));
            let coords = box_coords(l, coords, &b.boxes[0], indexed, b.layout.fp4_padded)?;
            Ok(BoxCopy { pred, smem, coords })
        })
        .collect()
}

/// The predicates of `n` copies that have no per-warp form. A refill released by `ring_release` comes from the
/// one lane that completed the round; otherwise copy `i` comes from the elected lane of warp `i mod num_warps`,
/// under the op's predicate `pred`.
pub(crate) fn copy_issuers(l: &mut Lower, pred: Option<ValueId>, n: u32) -> Result<Vec<Reg>, CompileError> {
    if pred.is_some_and(|x| released_by_ring(l, x)) {
        return Ok(vec![first_thread(l, pred)?; n as usize]);
    }
    let q = pred.map(|x| l.get(x).map(|r| r[0])).transpose()?;
    let (warp, elected) = warp_and_elected(l, q);
    let per_warp: Vec<Reg> = (0..n.min(l.num_warps))
        .map(|w| {
            let p = l.b.reg(RegClass::Pred);
            l.b.op("setp.eq.and.u32", p, (warp, w, elected));
            p
        })
        .collect();
    Ok((0..n as usize).map(|i| per_warp[i % per_warp.len()]).collect())
}

/// The warp index as ptxas can see it is uniform (a shuffle from lane 0), and one elected lane of each warp
/// under `q`.
pub(crate) fn warp_and_elected(l: &mut Lower, q: Option<Reg>) -> (Reg, Reg) {
    let warp = l.b.reg(RegClass::B32);
    l.b.op("shfl.sync.idx.b32", warp, (l.warp, 0, 31, -1));
    let (lane, elected) = (l.b.reg(RegClass::B32), l.b.reg(RegClass::Pred));
    l.b.op("elect.sync", Operand::PredPair(lane, elected), -1);
    if let Some(q) = q {
        l.b.op("and.pred", elected, (elected, q));
    }
    (warp, elected)
}

/// The per-box steps of the origins (per dim) and of the shared offsets when both are arithmetic progressions
/// over two or more boxes.
fn even_steps(boxes: &[Vec<u32>], offsets: &[u32]) -> Option<(Vec<u32>, u32)> {
    if boxes.len() < 2 {
        return None;
    }
    let step: Vec<u32> = boxes[1].iter().zip(&boxes[0]).map(|(b, a)| b.checked_sub(*a)).collect::<Option<_>>()?;
    let offset_step = offsets[1].checked_sub(offsets[0])?;
    let even = boxes.iter().zip(offsets).enumerate().all(|(i, (origin, &offset))| {
        let i = i as u32;
        offset == offsets[0] + i * offset_step
            && origin.iter().zip(&boxes[0]).zip(&step).all(|((o, o0), s)| *o == o0 + i * s)
    });
    even.then_some((step, offset_step))
}

/// The coordinates of a box, innermost dim first: the op's block coordinates plus the box origin, plus
/// `index × step` when the box is chosen at run time.
///
/// A `fp4_padded` block's map (`16U4_ALIGN16B`) counts its innermost dim in 4-bit elements while the program's
/// coordinates, the block and its boxes count packed bytes (two elements each): that coordinate is doubled.
fn box_coords(
    l: &mut Lower,
    coords: &[Reg],
    origin: &[u32],
    indexed: Option<(Reg, &[u32])>,
    fp4_padded: bool,
) -> Result<Vec<Reg>, CompileError> {
    let mut out = Vec::with_capacity(coords.len());
    let last = coords.len() - 1;
    for (d, (&c, &o)) in coords.iter().zip(origin).enumerate().rev() {
        let mut r = c;
        let unit = if fp4_padded && d == last { 2 } else { 1 };
        if unit != 1 {
            let s = l.b.reg(RegClass::B32);
            l.b.op("shl.b32", s, (r, 1u32));
            r = s;
        }
        if o != 0 {
            let s = l.b.reg(RegClass::B32);
            l.b.op("add.s32", s, (r, o * unit));
            r = s;
        }
        if let Some((index, step)) = indexed
            && step[d] != 0
        {
            let s = l.b.reg(RegClass::B32);
            l.b.op("mad.lo.s32", s, (index, step[d] * unit, r));
            r = s;
        }
        out.push(r);
    }
    Ok(out)
}

/// Each box's byte offset in the buffer: where the layout puts the box's first element.
fn box_offsets(l: &Lower, buf: ValueId, b: &TmaBlock) -> Result<Vec<u32>, CompileError> {
    let (_, elem, layout) = l.f.ty(buf).memdesc().expect("verified: a memdesc");
    b.boxes.iter().map(|origin| Ok(tma::box_offset(&layout.linear, origin)? * elem.bytes())).collect()
}

/// Each box's shared address: the buffer's base plus the box's offset.
pub(crate) fn box_addresses(l: &mut Lower, buf: ValueId, b: &TmaBlock) -> Result<Vec<Reg>, CompileError> {
    let base = l.get(buf)?[0];
    box_offsets(l, buf, b)?
        .into_iter()
        .map(|offset| {
            if offset == 0 {
                return Ok(base);
            }
            let a = l.b.reg(RegClass::B32);
            l.b.op("add.u32", a, (base, offset));
            Ok(a)
        })
        .collect()
}
