//! `scan` (`tl.cumsum`, `tl.associative_scan`): an inclusive scan along one axis with a combine region over N
//! operands, forward or `reverse`, its result in the operand's layout.
//!
//! Let `p` be an element's position in scan order along the axis (`x`, or `n - 1 - x = x ^ (n - 1)` when
//! reversed: the same bits, flipped). Every bit of `p` belongs to exactly one register, lane or warp basis of
//! the layout (checked: each basis touching the axis moves along it alone, by one power of two). The bits are
//! processed from low to high in *segments* of one kind, keeping for every element `S`, the scan within its
//! aligned block of the bits done so far, and `T`, that block's total (shared by the block's elements):
//!
//! - register bits: sequentially within the thread, `S = combine(carry, S)` and `carry = combine(carry, T)`
//!   over the sub-blocks in scan order; for the lowest bits this is exactly the interpreter's left fold;
//! - consecutive lane bits: a Hillis-Steele scan of the block totals over the lanes with `shfl.sync.up`
//!   (`.down` when reversed) and lane-index guards, the exclusive prefix one more shuffle away, and the
//!   segment total from the last lane (`shfl.sync.idx`);
//! - warp bits: each warp stores its block totals to shared memory, `bar.sync`, every thread combines the
//!   totals of the warps before it in scan order, then `bar.sync` so shared memory may be reused.
//!
//! `combine` is always applied as `combine(earlier, later)` in scan order, as the interpreter does, so any
//! associative combine (commutative or not) gives its result; integer scans are exact, float sums differ
//! from the interpreter's left fold only by association.

use std::collections::HashMap;

use tessel_tile::ir::{OpData, RegionId};

use super::Lower;
use super::arith::select_reg;
use super::coords::{bases, flatten, layout_of, reg_coords};
use super::reduce::shuffle;
use super::shared::{ld_shared, slot_bytes, st_shared};
use crate::CompileError;
use crate::ptx::{Reg, RegClass};

/// Which in-dim holds a bit of the scan position.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Level {
    Register,
    Lane,
    Warp,
}

/// Bits `lo..lo + basis.len()` of `p`, bit `lo + i` held by basis `basis[i]` of `level`.
struct Segment {
    level: Level,
    lo: u32,
    basis: Vec<u32>,
}

/// The scan state: combines are memoized on their inputs (the combine region is pure), so the same sums
/// computed for `S` and `T` are emitted once.
struct Scan {
    region: RegionId,
    memo: HashMap<(Vec<Reg>, Vec<Reg>), Vec<Reg>>,
}

impl Scan {
    fn combine(&mut self, l: &mut Lower, a: &[Reg], b: &[Reg]) -> Result<Vec<Reg>, CompileError> {
        let key = (a.to_vec(), b.to_vec());
        if let Some(r) = self.memo.get(&key) {
            return Ok(r.clone());
        }
        let r = l.combine(self.region, a, b)?;
        self.memo.insert(key, r.clone());
        Ok(r)
    }
}

fn select_all(l: &mut Lower, c: Reg, x: &[Reg], y: &[Reg]) -> Vec<Reg> {
    x.iter().zip(y).map(|(&a, &b)| if a == b { a } else { select_reg(l, c, a, b) }).collect()
}

/// Bits of `x` at the set bits of `mask`, packed (a linear map over F2).
fn pext(x: u32, mask: u32) -> u32 {
    let (mut r, mut k) = (0, 0);
    for bit in 0..32 {
        if mask >> bit & 1 == 1 {
            r |= (x >> bit & 1) << k;
            k += 1;
        }
    }
    r
}

/// The segments of the scan position's bits, after checking that each basis moving along `axis` moves along it
/// alone by one power of two and that each bit has exactly one such basis.
fn segments(lin: &tessel_layouts::LinearLayout, axis: usize, n: u32) -> Result<Vec<Segment>, CompileError> {
    let nb = n.trailing_zeros();
    let mut owner: Vec<Option<(Level, u32)>> = vec![None; nb as usize];
    for (level, dim) in [(Level::Register, "register"), (Level::Lane, "lane"), (Level::Warp, "warp")] {
        for (i, b) in bases(lin, dim).iter().enumerate() {
            if b[axis] == 0 {
                continue;
            }
            if !b[axis].is_power_of_two() || b.iter().enumerate().any(|(d, &x)| d != axis && x != 0) {
                return Err(CompileError::new(format!(
                    "scan: {dim} basis {i} ({b:?}) mixes the scanned axis {axis} with other coordinates; \
                     a convert_layout to a blocked layout is needed"
                )));
            }
            let bit = b[axis].trailing_zeros() as usize;
            if owner[bit].replace((level, i as u32)).is_some() {
                return Err(CompileError::new(format!(
                    "scan: two bases of the layout move along axis {axis} by {}; not supported",
                    b[axis]
                )));
            }
        }
    }
    let mut segs: Vec<Segment> = Vec::new();
    for (bit, o) in owner.iter().enumerate() {
        let (level, i) = o.ok_or_else(|| CompileError::new("scan: the layout does not cover the scanned axis"))?;
        match segs.last_mut() {
            // Lane segments need consecutive lane bits (a shuffle offset per step); warp and register ones not.
            Some(s) if s.level == level && (level != Level::Lane || *s.basis.last().unwrap() + 1 == i) => {
                s.basis.push(i)
            }
            _ => segs.push(Segment { level, lo: bit as u32, basis: vec![i] }),
        }
    }
    Ok(segs)
}

pub(crate) fn scan(l: &mut Lower, data: &OpData, axis: u32, reverse: bool) -> Result<(), CompileError> {
    let a = axis as usize;
    let in_ty = l.f.ty(data.operands[0]).clone();
    let lin = layout_of(&in_ty)?.clone();
    for &v in data.operands.iter().chain(&data.results) {
        if layout_of(l.f.ty(v))? != &lin {
            return Err(CompileError::new("scan operands and results must share one layout"));
        }
    }
    let shape = in_ty.shape().to_vec();
    let n = shape[a];
    let rev = if reverse { n - 1 } else { 0 };
    let segs = segments(&lin, a, n)?;
    let inputs: Vec<Vec<Reg>> =
        data.operands.iter().map(|&o| l.get(o).map(|r| r.to_vec())).collect::<Result<_, _>>()?;

    // The thread's distinct elements (registers holding the same element share one) and their state.
    let n_regs = lin.in_dim_size("register");
    let mut coords: Vec<Vec<u32>> = Vec::new();
    let mut reg_elem = Vec::with_capacity(n_regs as usize);
    let mut s: Vec<Vec<Reg>> = Vec::new();
    for r in 0..n_regs {
        let c = reg_coords(&lin, r);
        let e = match coords.iter().position(|x| *x == c) {
            Some(e) => e,
            None => {
                coords.push(c);
                s.push(inputs.iter().map(|rs| rs[r as usize]).collect());
                coords.len() - 1
            }
        };
        reg_elem.push(e);
    }
    let mut t = s.clone();
    let mut st = Scan { region: data.regions[0], memo: HashMap::new() };
    if !segs.is_empty() {
        l.b.comment(format!(
            "scan along axis {a}{}: {}",
            if reverse { " (reverse)" } else { "" },
            segs.iter().map(|g| format!("{:?} x{}", g.level, 1 << g.basis.len())).collect::<Vec<_>>().join(", ")
        ));
    }
    for (si, seg) in segs.iter().enumerate() {
        let last = si + 1 == segs.len();
        match seg.level {
            Level::Register => register_segment(l, &mut st, seg, (a, rev), last, &coords, &mut s, &mut t)?,
            Level::Lane => lane_segment(l, &mut st, seg, reverse, last, &mut s, &mut t)?,
            Level::Warp => {
                let classes: Vec<RegClass> = inputs.iter().map(|r| r[0].class).collect();
                warp_segment(l, &mut st, seg, (&lin, &shape, a), rev, last, &coords, &classes, &mut s, &mut t)?
            }
        }
    }
    for (k, &v) in data.results.iter().enumerate() {
        l.vals.insert(v, reg_elem.iter().map(|&e| s[e][k]).collect());
    }
    Ok(())
}

/// Register bits `lo..lo + k`: within each block of the thread, a left fold over its `2^k` sub-blocks in scan
/// order, `S = combine(carry, S)` for the sub-block's elements and `carry = combine(carry, T)`.
#[allow(clippy::too_many_arguments)]
fn register_segment(
    l: &mut Lower,
    st: &mut Scan,
    seg: &Segment,
    (a, rev): (usize, u32),
    last: bool,
    coords: &[Vec<u32>],
    s: &mut [Vec<Reg>],
    t: &mut [Vec<Reg>],
) -> Result<(), CompileError> {
    let (lo, k) = (seg.lo, seg.basis.len() as u32);
    // The elements of one block: the same coordinates once the axis bits below lo + k are cleared.
    let block_mask = !((1u32 << (lo + k)) - 1);
    let mut blocks: Vec<(Vec<u32>, Vec<Vec<usize>>)> = Vec::new();
    for (e, c) in coords.iter().enumerate() {
        let mut key = c.clone();
        key[a] &= block_mask;
        let sub = (((c[a] ^ rev) >> lo) & ((1 << k) - 1)) as usize;
        let b = match blocks.iter().position(|(x, _)| *x == key) {
            Some(b) => b,
            None => {
                blocks.push((key, vec![Vec::new(); 1 << k]));
                blocks.len() - 1
            }
        };
        blocks[b].1[sub].push(e);
    }
    for (_, subs) in &blocks {
        let mut carry: Option<Vec<Reg>> = None;
        for (i, members) in subs.iter().enumerate() {
            let ti = t[members[0]].clone();
            if let Some(cy) = &carry {
                for &e in members {
                    s[e] = st.combine(l, cy, &s[e])?;
                }
            }
            if last && i + 1 == subs.len() {
                break;
            }
            carry = Some(match carry {
                None => ti,
                Some(cy) => st.combine(l, &cy, &ti)?,
            });
        }
        if !last {
            let total = carry.unwrap();
            for members in subs {
                for &e in members {
                    t[e] = total.clone();
                }
            }
        }
    }
    Ok(())
}

/// Groups elements by their `T` registers (elements of one block share them).
fn groups_by_total(t: &[Vec<Reg>]) -> Vec<(Vec<Reg>, Vec<usize>)> {
    let mut g: Vec<(Vec<Reg>, Vec<usize>)> = Vec::new();
    for (e, te) in t.iter().enumerate() {
        match g.iter().position(|(x, _)| x == te) {
            Some(i) => g[i].1.push(e),
            None => g.push((te.clone(), vec![e])),
        }
    }
    g
}

/// Hillis-Steele over lane bits `l0..l0 + k` (in scan order: up the lanes, or down when reversed).
fn lane_segment(
    l: &mut Lower,
    st: &mut Scan,
    seg: &Segment,
    reverse: bool,
    last: bool,
    s: &mut [Vec<Reg>],
    t: &mut [Vec<Reg>],
) -> Result<(), CompileError> {
    let (l0, k) = (seg.basis[0], seg.basis.len() as u32);
    let field = ((1u32 << k) - 1) << l0;
    // q: the lane's position in scan order among the lanes of the segment.
    let q = l.b.reg(RegClass::B32);
    l.b.op("bfe.u32", q, (l.lane, l0, k));
    if reverse {
        l.b.op("xor.b32", q, (q, (1 << k) - 1));
    }
    let ge: Vec<Reg> = (0..k)
        .map(|i| {
            let p = l.b.reg(RegClass::Pred);
            l.b.op("setp.ge.u32", p, (q, 1 << i));
            p
        })
        .collect();
    let (mode, c) = if reverse { ("down", 31) } else { ("up", 0) };
    let src_lane = (!last).then(|| {
        let r = l.b.reg(RegClass::B32);
        if reverse {
            l.b.op("and.b32", r, (l.lane, !field));
        } else {
            l.b.op("or.b32", r, (l.lane, field));
        }
        r
    });
    for (total, members) in groups_by_total(t) {
        let mut inc = total.clone();
        for (i, &g) in ge.iter().enumerate() {
            let off = 1u32 << (l0 + i as u32);
            let prev: Vec<Reg> = inc.iter().map(|&v| shuffle(l, v, mode, off.into(), c)).collect();
            let cand = st.combine(l, &prev, &inc)?;
            inc = select_all(l, g, &cand, &inc);
        }
        let mut excl: Option<Vec<Reg>> = None;
        for &e in &members {
            if s[e] == total {
                s[e] = inc.clone();
                continue;
            }
            if excl.is_none() {
                let off = 1u32 << l0;
                excl = Some(inc.iter().map(|&v| shuffle(l, v, mode, off.into(), c)).collect());
            }
            let cand = st.combine(l, excl.as_ref().unwrap(), &s[e])?;
            s[e] = select_all(l, ge[0], &cand, &s[e]);
        }
        if let Some(src) = src_lane {
            let all: Vec<Reg> = inc.iter().map(|&v| shuffle(l, v, "idx", src.into(), 31)).collect();
            for &e in &members {
                t[e] = all.clone();
            }
        }
    }
    Ok(())
}

/// Warp bits of the scan position through shared memory: block totals are stored at a compact slot index
/// (the row-major index with the axis bits below the segment dropped: every element of a block shares it),
/// then each thread reads the totals of the segment's warps in scan order.
#[allow(clippy::too_many_arguments)]
fn warp_segment(
    l: &mut Lower,
    st: &mut Scan,
    seg: &Segment,
    (lin, shape, a): (&tessel_layouts::LinearLayout, &[u32], usize),
    rev: u32,
    last: bool,
    coords: &[Vec<u32>],
    classes: &[RegClass],
    s: &mut [Vec<Reg>],
    t: &mut [Vec<Reg>],
) -> Result<(), CompileError> {
    let (lo, k) = (seg.lo, seg.basis.len() as u32);
    let w = 1u32 << k;
    let numel: u32 = shape.iter().product();
    let axis_shift = shape[a + 1..].iter().product::<u32>().trailing_zeros();
    let keep = (numel - 1) & !(((1u32 << lo) - 1) << axis_shift);
    let slot = |c: &[u32]| pext(flatten(c, shape), keep);
    let slots = numel >> lo;
    let region_bytes: Vec<u32> = classes.iter().map(|&c| slots * slot_bytes(c)).collect();
    let scratch_bytes: u32 = region_bytes.iter().sum();
    // q: this warp's position in scan order among the warps of the segment.
    let q = l.b.reg(RegClass::B32);
    l.b.op("mov.b32", q, if rev != 0 { w - 1 } else { 0 });
    for (i, &wb) in seg.basis.iter().enumerate() {
        let bit = l.b.reg(RegClass::B32);
        l.b.op("bfe.u32", bit, (l.warp, wb, 1));
        l.b.op("shl.b32", bit, (bit, i));
        l.b.op("xor.b32", q, (q, bit));
    }
    let lane_keys: Vec<u32> = bases(lin, "lane").iter().map(|b| slot(b)).collect();
    let warp_bases = bases(lin, "warp");
    let own = l.thread_xor(lane_keys.clone(), warp_bases.iter().map(|b| slot(b)).collect());
    // The same without this segment's warp bits: the slot of warp 0 of the segment.
    let seg_free =
        warp_bases.iter().enumerate().map(|(i, b)| if seg.basis.contains(&(i as u32)) { 0 } else { slot(b) }).collect();
    let base_thread = l.thread_xor(lane_keys, seg_free);
    let smem = l.scratch(scratch_bytes)?;
    let address = |l: &mut Lower, idx: Reg, op: usize| {
        let addr = l.b.reg(RegClass::B32);
        l.b.op("mad.lo.u32", addr, (idx, slot_bytes(classes[op]), smem));
        let off: u32 = region_bytes[..op].iter().sum();
        if off > 0 {
            l.b.op("add.u32", addr, (addr, off));
        }
        addr
    };
    // One group per block of the thread: elements with the same slot.
    let mut groups: Vec<(u32, Vec<usize>)> = Vec::new();
    for (e, c) in coords.iter().enumerate() {
        let kc = slot(c);
        match groups.iter().position(|(x, _)| *x == kc) {
            Some(g) => groups[g].1.push(e),
            None => groups.push((kc, vec![e])),
        }
    }
    for (kc, members) in &groups {
        let idx = l.xor_const(own, *kc, 0);
        for (op, &total) in t[members[0]].iter().enumerate() {
            let addr = address(l, idx, op);
            st_shared(l, addr, total);
        }
    }
    l.barrier();
    let before: Vec<Reg> = (1..w)
        .map(|i| {
            let p = l.b.reg(RegClass::Pred);
            l.b.op("setp.gt.u32", p, (q, i - 1));
            p
        })
        .collect();
    let axis_at = |qi: u32| {
        let mut c = vec![0; shape.len()];
        c[a] = ((qi ^ if rev != 0 { w - 1 } else { 0 }) << lo) & (shape[a] - 1);
        c
    };
    for (kc, members) in &groups {
        let totals: Vec<Vec<Reg>> = (0..w)
            .map(|qi| {
                let idx = l.xor_const(base_thread, *kc ^ slot(&axis_at(qi)), 0);
                (0..classes.len())
                    .map(|op| {
                        let addr = address(l, idx, op);
                        ld_shared(l, addr, classes[op])
                    })
                    .collect()
            })
            .collect();
        // Exclusive prefix over the warps before this one (meaningful when q >= 1).
        let mut excl = totals[0].clone();
        for qi in 1..w - 1 {
            let cand = st.combine(l, &excl, &totals[qi as usize])?;
            excl = select_all(l, before[qi as usize], &cand, &excl);
        }
        for &e in members {
            let cand = st.combine(l, &excl, &s[e])?;
            s[e] = select_all(l, before[0], &cand, &s[e]);
        }
        if !last {
            let mut all = totals[0].clone();
            for tq in &totals[1..] {
                all = st.combine(l, &all, tq)?;
            }
            for &e in members {
                t[e] = all.clone();
            }
        }
    }
    l.barrier();
    Ok(())
}
