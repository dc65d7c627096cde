//! `convert_layout` through warp shuffles: the planner's `ShufflePlan`, executed with `shfl.sync.idx`.
//!
//! The plan lists, per round `j` and lane `l`, the lane read, the register the reading lane writes, and the
//! register each lane sends. All three are affine in the lane id (the plan derives them from linear maps), so a
//! round becomes one `shfl.sync.idx` per 32-bit word: the source lane is `base ⊕ M·lane` (XOR of constants
//! selected by lane bits), the sent register `base ⊕ P·lane` and the written one `j ⊕ F·lane`; when `P` or
//! `F` is not zero the register is picked at run time by a tree of `selp` on the parities of lane-bit masks
//! ([`LaneSelect`]). The plan's tables are re-derived into that affine form and checked entry by entry, so a
//! table that is not affine is a compile error rather than wrong code; the unit tests run the derived program
//! on the CPU against the layouts crate's plan executor.
//!
//! Packing: 64-bit values shuffle as two 32-bit halves; 16-bit values (f16, bf16, i16, and the 8-bit types,
//! which live in 16-bit registers) travel two rounds to a shuffle when the two rounds read the same lanes (a
//! register bit the source lane does not depend on): the low half carries the first round. Predicates go as
//! 0/1 words.

use tessel_layouts::convert::ShufflePlan;

use super::Lower;
use crate::CompileError;
use crate::ptx::{Reg, RegClass, not, vector};

/// A register (or lane) index chosen per lane, linearly: `base ⊕ XOR of cols[b] over the set bits b of the
/// lane id`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct LaneSelect {
    pub base: u32,
    pub cols: Vec<u32>,
}

impl LaneSelect {
    pub fn at(&self, lane: u32) -> u32 {
        self.cols.iter().enumerate().filter(|(b, _)| lane >> b & 1 == 1).fold(self.base, |acc, (_, &c)| acc ^ c)
    }

    /// The affine form of `table` (indexed by lane) over the lanes in `domain`, which must be an affine
    /// subspace containing `domain[0]`; entries outside `domain` are don't-cares (and get the affine value).
    fn fit(table: &[u32], domain: &[u32], what: &str) -> Result<LaneSelect, CompileError> {
        let lanes = table.len() as u32;
        let bits = lanes.trailing_zeros() as usize;
        let origin = domain[0];
        // Echelon rows: (lane difference, value difference), keyed by the highest set bit of the difference.
        let mut rows: Vec<(u32, u32)> = Vec::new();
        let reduce = |rows: &[(u32, u32)], mut x: u32, mut y: u32| {
            for &(rx, ry) in rows {
                if x & (1 << (31 - rx.leading_zeros())) != 0 {
                    x ^= rx;
                    y ^= ry;
                }
            }
            (x, y)
        };
        for &l in domain {
            let (x, y) = reduce(&rows, l ^ origin, table[l as usize] ^ table[origin as usize]);
            if x != 0 {
                rows.push((x, y));
                rows.sort_by_key(|&(rx, _)| std::cmp::Reverse(rx));
            } else if y != 0 {
                return Err(CompileError::new(format!("shuffle plan: the {what} is not affine in the lane id")));
            }
        }
        // A linear map on all lane bits: each unit vector reduced through the rows (directions outside the
        // domain's span map to 0).
        let cols: Vec<u32> = (0..bits).map(|b| reduce(&rows, 1 << b, 0).1).collect();
        let lin = LaneSelect { base: 0, cols: cols.clone() };
        let base = table[origin as usize] ^ lin.at(origin);
        let sel = LaneSelect { base, cols };
        match domain.iter().find(|&&l| sel.at(l) != table[l as usize]) {
            Some(l) => Err(CompileError::new(format!("shuffle plan: the {what} of lane {l} is not affine"))),
            None => Ok(sel),
        }
    }
}

/// One `shfl.sync.idx`: each lane reads lane `read.at(lane)`; the word it sends holds, from the low half up,
/// the registers `send[k].at(lane)` for the rounds `rounds[k]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Shfl {
    pub read: LaneSelect,
    pub send: Vec<LaneSelect>,
    pub rounds: Vec<u32>,
}

/// The shuffles of a conversion and where the received rounds go: destination register `d` of lane `l` is
/// round `d ⊕ F·l`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ShuffleProgram {
    pub shuffles: Vec<Shfl>,
    pub write: LaneSelect,
    pub rounds: u32,
}

/// Round offsets `k` (independent, at most `dims`, smallest first) such that rounds `j` and `j ⊕ k` read the
/// same lanes in every lane: the rounds of one coset of their span can travel in one shuffle.
fn pairing(plan: &ShufflePlan, dims: u32) -> Vec<u32> {
    let n = plan.rounds.len() as u32;
    let same = |k: u32| (0..n).all(|j| plan.rounds[j as usize].read_lane == plan.rounds[(j ^ k) as usize].read_lane);
    let mut basis: Vec<u32> = Vec::new();
    for k in 1..n {
        if basis.len() as u32 == dims {
            break;
        }
        if !span(&basis).contains(&k) && same(k) {
            basis.push(k);
        }
    }
    basis
}

/// Every XOR combination of `basis`, combination `t` (bit i: basis[i]) at index `t`.
fn span(basis: &[u32]) -> Vec<u32> {
    (0..1u32 << basis.len())
        .map(|t| basis.iter().enumerate().filter(|(i, _)| t >> i & 1 == 1).fold(0, |a, (_, &k)| a ^ k))
        .collect()
}

/// Derives the affine program of `plan`, packing `pack` (1, 2 or 4) rounds per shuffle where the plan allows.
pub(crate) fn derive(plan: &ShufflePlan, pack: u32) -> Result<ShuffleProgram, CompileError> {
    let n = plan.rounds.len() as u32;
    let lanes = plan.rounds.first().map_or(0, |r| r.read_lane.len());
    if lanes != 32 || !n.is_power_of_two() {
        return Err(CompileError::new(format!("shuffle plan with {lanes} lanes and {n} rounds: expected 32 lanes")));
    }
    let all: Vec<u32> = (0..32).collect();
    // Every round writes with the same F: destination register = round ⊕ F·lane.
    let mut write = LaneSelect::fit(&plan.rounds[0].write_register, &all, "written register")?;
    write.base = 0;
    for (j, r) in plan.rounds.iter().enumerate() {
        if (0..32).any(|l| r.write_register[l as usize] != j as u32 ^ write.at(l)) {
            return Err(CompileError::new(format!("shuffle plan: round {j} writes other registers than round 0")));
        }
    }
    let offsets = span(&pairing(plan, pack.trailing_zeros()));
    let mut shuffles = Vec::new();
    for j in 0..n {
        // One shuffle per coset of the offsets, led by its smallest round.
        if offsets.iter().any(|&k| j ^ k < j) {
            continue;
        }
        let rounds: Vec<u32> = offsets.iter().map(|&k| j ^ k).collect();
        let r = &plan.rounds[j as usize];
        let read = LaneSelect::fit(&r.read_lane, &all, "source lane")?;
        // Senders that nobody reads send anything: only the lanes read in this round constrain the register.
        let mut readers: Vec<u32> = r.read_lane.clone();
        readers.sort_unstable();
        readers.dedup();
        let send = rounds
            .iter()
            .map(|&jj| LaneSelect::fit(&plan.rounds[jj as usize].send_register, &readers, "sent register"))
            .collect::<Result<Vec<_>, _>>()?;
        shuffles.push(Shfl { read, send, rounds });
    }
    Ok(ShuffleProgram { shuffles, write, rounds: n })
}

impl Lower<'_> {
    /// A predicate: the parity of `lane & mask` (cached at the kernel entry).
    fn lane_parity(&mut self, mask: u32) -> Reg {
        if let Some(&r) = self.parity_cache.get(&mask) {
            return r;
        }
        self.b.set_prologue(true);
        let (t, p) = (self.b.reg(RegClass::B32), self.b.reg(RegClass::Pred));
        self.b.op("and.b32", t, (self.lane, mask));
        if !mask.is_power_of_two() {
            self.b.op("popc.b32", t, t);
            self.b.op("and.b32", t, (t, 1));
        }
        self.b.op("setp.ne.u32", p, (t, 0));
        self.b.set_prologue(false);
        self.parity_cache.insert(mask, p);
        p
    }

    /// `regs[sel.at(lane)]` in every lane: a `selp` tree over the parities that choose among the registers.
    pub(crate) fn select_by_lane(&mut self, regs: &[Reg], sel: &LaneSelect) -> Reg {
        self.select_tree(&sel.cols, |_, v| regs[(sel.base ^ v) as usize])
    }

    /// The value `pick(v)` in every lane, where `v` is the XOR of `cols[b]` over the set bits `b` of the lane
    /// id: `pick` makes the candidates (one per `v` in the span of `cols`), then a `selp` tree chooses.
    pub(crate) fn select_tree(&mut self, cols: &[u32], mut pick: impl FnMut(&mut Self, u32) -> Reg) -> Reg {
        let (basis, masks) = lane_basis(cols);
        // Candidate `t` is the value for the parities `t` (bit i: the parity under masks[i]).
        let mut cands: Vec<Reg> = span(&basis).into_iter().map(|v| pick(self, v)).collect();
        for i in (0..basis.len()).rev() {
            let p = self.lane_parity(masks[i]);
            let half = 1 << i;
            cands = (0..half).map(|t| self.select(p, cands[t | half], cands[t])).collect();
        }
        cands[0]
    }

    /// A 32-bit register holding `table[lane]` in every lane, computed once at the kernel entry; `table` must
    /// depend on the lane only through `cols` (as in [`Lower::select_tree`]).
    pub(crate) fn lane_table(&mut self, table: &[u32], cols: &[u32]) -> Reg {
        if let Some(&r) = self.lane_tables.get(table) {
            return r;
        }
        let (basis, masks) = lane_basis(cols);
        let parities = |l: u32| (0..masks.len()).fold(0u32, |t, i| t | ((l & masks[i]).count_ones() & 1) << i);
        debug_assert!(
            (0..32).all(|l| (0..32).all(|m| parities(l) != parities(m) || table[l as usize] == table[m as usize])),
            "a lane table that depends on more than its columns"
        );
        let preds: Vec<Reg> = masks.iter().map(|&m| self.lane_parity(m)).collect();
        self.b.set_prologue(true);
        // Candidate `t`: the table at a lane whose parities are `t` (the masks are independent, so one exists).
        let mut cands: Vec<Reg> = (0..1u32 << basis.len())
            .map(|t| {
                let lane = (0..32).find(|&l| parities(l) == t);
                let r = self.b.reg(RegClass::B32);
                self.b.op("mov.b32", r, table[lane.expect("every parity vector has a lane") as usize]);
                r
            })
            .collect();
        for (i, &p) in preds.iter().enumerate().rev() {
            let half = 1 << i;
            cands = (0..half).map(|t| self.select(p, cands[t | half], cands[t])).collect();
        }
        self.b.set_prologue(false);
        self.lane_tables.insert(table.to_vec(), cands[0]);
        cands[0]
    }

    /// `p ? a : b` for any register class.
    fn select(&mut self, p: Reg, a: Reg, b: Reg) -> Reg {
        if a == b {
            return a;
        }
        let d = self.b.reg(a.class);
        match a.class {
            RegClass::Pred => {
                let (t, u) = (self.b.reg(RegClass::Pred), self.b.reg(RegClass::Pred));
                self.b.op("and.pred", t, (p, a));
                self.b.op("and.pred", u, (not(p), b));
                self.b.op("or.pred", d, (t, u));
            }
            c => self.b.op(format!("selp.b{}", c.bits()), d, (a, b, p)),
        }
        d
    }
}

/// A basis of the span of `cols`, and for each basis vector the lane bits whose column uses it (the XOR of the
/// columns of the lane's set bits is `v` in the span: its coordinates are the parities of `lane & masks[i]`).
fn lane_basis(cols: &[u32]) -> (Vec<u32>, Vec<u32>) {
    let mut basis: Vec<u32> = Vec::new();
    let mut masks: Vec<u32> = Vec::new();
    for (b, &c) in cols.iter().enumerate() {
        let mut x = c;
        let mut used = Vec::new();
        for (i, &v) in basis.iter().enumerate() {
            if x & (1 << (31 - v.leading_zeros())) != 0 {
                x ^= v;
                used.push(i);
            }
        }
        if x != 0 {
            // A new direction; it has none of the earlier pivots, so reducing in insertion order stays exact.
            basis.push(x);
            masks.push(0);
            used.push(basis.len() - 1);
        }
        for i in used {
            masks[i] ^= 1 << b;
        }
    }
    (basis, masks)
}

/// `shfl.sync.idx` of one 32-bit word from lane `src`.
fn shfl(l: &mut Lower, w: Reg, src: Reg) -> Reg {
    let d = l.b.reg(RegClass::B32);
    l.b.op("shfl.sync.idx.b32", d, (w, src, 31, -1));
    d
}

/// Converts `regs` by the shuffle plan; returns the destination registers. `bytes`: the elements are 8-bit
/// (`Some(signed)`), which travel four to a shuffle ([`shuffle_bytes`]).
pub(crate) fn warp_shuffle(
    l: &mut Lower,
    regs: &[Reg],
    plan: &ShufflePlan,
    class: RegClass,
    bytes: Option<bool>,
) -> Result<Vec<Reg>, CompileError> {
    if let Some(signed) = bytes {
        return shuffle_bytes(l, regs, plan, signed);
    }
    let prog = derive(plan, if class == RegClass::B16 { 2 } else { 1 })?;
    l.b.comment(format!("convert_layout: {} warp shuffle(s) for {} round(s)", prog.shuffles.len(), prog.rounds));
    let mut recv: Vec<Option<Reg>> = vec![None; prog.rounds as usize];
    for s in &prog.shuffles {
        let src = {
            let t = l.thread_xor(s.read.cols.clone(), Vec::new());
            l.xor_const(t, s.read.base, 0)
        };
        let sent: Vec<Reg> = s.send.iter().map(|sel| l.select_by_lane(regs, sel)).collect();
        let got: Vec<Reg> = match class {
            RegClass::B128 => unreachable!("no tensor element is 128 bits (only cluster launch control responses)"),
            RegClass::B32 | RegClass::F32 => {
                let w = shfl(l, sent[0], src);
                let d = l.b.reg(class);
                l.b.op("mov.b32", d, w);
                vec![d]
            }
            RegClass::B64 | RegClass::F64 => {
                let (lo, hi) = (l.b.reg(RegClass::B32), l.b.reg(RegClass::B32));
                l.b.op("mov.b64", vector(&[lo, hi]), sent[0]);
                let (lo2, hi2) = (shfl(l, lo, src), shfl(l, hi, src));
                let d = l.b.reg(class);
                l.b.op("mov.b64", d, vector(&[lo2, hi2]));
                vec![d]
            }
            RegClass::B16 => {
                let w = l.b.reg(RegClass::B32);
                match sent.as_slice() {
                    [a, b] => l.b.op("mov.b32", w, vector(&[*a, *b])),
                    [a] => l.b.op("cvt.u32.u16", w, a),
                    _ => unreachable!("at most two rounds per shuffle"),
                }
                let g = shfl(l, w, src);
                let (lo, hi) = (l.b.reg(RegClass::B16), l.b.reg(RegClass::B16));
                l.b.op("mov.b32", vector(&[lo, hi]), g);
                if sent.len() == 2 { vec![lo, hi] } else { vec![lo] }
            }
            RegClass::Pred => {
                let w = l.b.reg(RegClass::B32);
                l.b.op("selp.b32", w, (1, 0, sent[0]));
                let g = shfl(l, w, src);
                let d = l.b.reg(RegClass::Pred);
                l.b.op("setp.ne.u32", d, (g, 0));
                vec![d]
            }
        };
        for (&j, r) in s.rounds.iter().zip(got) {
            recv[j as usize] = Some(r);
        }
    }
    let recv: Vec<Reg> = recv
        .into_iter()
        .map(|r| r.ok_or_else(|| CompileError::new("shuffle plan left a round unread")))
        .collect::<Result<_, _>>()?;
    Ok((0..prog.rounds)
        .map(|d| {
            let sel = LaneSelect { base: d, cols: prog.write.cols.clone() };
            l.select_by_lane(&recv, &sel)
        })
        .collect())
}

/// 8-bit elements: four rounds to a shuffle, each word sent built from the packed registers its bytes sit in
/// (one `selp` per word where the sent registers depend on the lane), and the destination registers taken four
/// at a time out of at most two received words by one `prmt` whose selector depends on the lane (the rounds a
/// lane writes to its registers `4m..4m+3` are `4m+i ⊕ F·lane`). Where four consecutive destination registers
/// need more than two received words, each is chosen by a `selp` tree as in [`warp_shuffle`].
fn shuffle_bytes(l: &mut Lower, regs: &[Reg], plan: &ShufflePlan, signed: bool) -> Result<Vec<Reg>, CompileError> {
    let prog = derive(plan, 4)?;
    l.b.comment(format!("convert_layout: {} warp shuffle(s) for {} byte round(s)", prog.shuffles.len(), prog.rounds));
    let mut packed: std::collections::HashMap<Vec<Reg>, Reg> = Default::default();
    let mut pack = |l: &mut Lower, elems: Vec<Reg>| match packed.get(&elems) {
        Some(&w) => w,
        None => {
            let w = l.pack_bytes(&elems);
            packed.insert(elems, w);
            w
        }
    };
    // Round r arrives as byte `at[r].1` of received word `at[r].0`.
    let mut got: Vec<Reg> = Vec::new();
    let mut at: Vec<(usize, u8)> = vec![(usize::MAX, 0); prog.rounds as usize];
    for s in &prog.shuffles {
        let src = {
            let t = l.thread_xor(s.read.cols.clone(), Vec::new());
            l.xor_const(t, s.read.base, 0)
        };
        let word = if s.send.iter().all(|sel| sel.cols == s.send[0].cols) {
            // The lane picks among whole words: build each candidate word once.
            l.select_tree(&s.send[0].cols.clone(), |l, v| {
                pack(l, s.send.iter().map(|sel| regs[(sel.base ^ v) as usize]).collect())
            })
        } else {
            let sent: Vec<Reg> = s.send.iter().map(|sel| l.select_by_lane(regs, sel)).collect();
            pack(l, sent)
        };
        for (k, &r) in s.rounds.iter().enumerate() {
            at[r as usize] = (got.len(), k as u8);
        }
        got.push(shfl(l, word, src));
    }
    if at.iter().any(|&(w, _)| w == usize::MAX) {
        return Err(CompileError::new("shuffle plan left a round unread"));
    }
    let n = prog.rounds;
    let group = n.min(4);
    let cols = prog.write.cols.clone();
    let mut out = Vec::with_capacity(n as usize);
    let mut round_elems: Vec<Option<Reg>> = vec![None; n as usize];
    for m in 0..n / group {
        // The received words destination registers group·m.. read, over every lane.
        let source = |lane: u32, i: u32| at[((group * m + i) ^ prog.write.at(lane)) as usize];
        let mut words: Vec<usize> = Vec::new();
        for lane in 0..32 {
            for i in 0..group {
                if !words.contains(&source(lane, i).0) {
                    words.push(source(lane, i).0);
                }
            }
        }
        if words.len() <= 2 {
            let table: Vec<u32> = (0..32u32)
                .map(|lane| {
                    let sel: Vec<Option<u8>> = (0..group)
                        .map(|i| {
                            let (w, k) = source(lane, i);
                            Some(k + if w == words[0] { 0 } else { 4 })
                        })
                        .collect();
                    super::bytes::selector(&sel)
                })
                .collect();
            let (a, b) = (got[words[0]], got[*words.last().expect("one word at least")]);
            let identity = super::bytes::selector(&(0..group as u8).map(Some).collect::<Vec<_>>());
            let word = if words.len() == 1 && table.iter().all(|&t| t == identity) {
                a
            } else {
                let d = l.b.reg(RegClass::B32);
                if table.iter().all(|&t| t == table[0]) {
                    l.b.op("prmt.b32", d, (a, b, table[0]));
                } else {
                    let sel = l.lane_table(&table, &cols);
                    l.b.op("prmt.b32", d, (a, b, sel));
                }
                d
            };
            out.extend((0..group as u8).map(|i| l.extract_byte(word, i, signed)));
        } else {
            for i in 0..group {
                let mut elem = |l: &mut Lower, r: u32| {
                    *round_elems[r as usize].get_or_insert_with(|| {
                        let (w, k) = at[r as usize];
                        l.extract_byte(got[w], k, signed)
                    })
                };
                let d = group * m + i;
                let v = l.select_tree(&cols, |l, v| elem(l, d ^ v));
                out.push(v);
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tessel_layouts::convert::{ThreadRegs, check, distribute, run_plan};
    use tessel_layouts::{ConversionPlan, LinearLayout, PlanOptions, plan_conversion};

    /// Runs `prog` on the registers of every warp as the emitted PTX does.
    fn simulate(prog: &ShuffleProgram, src: &ThreadRegs<u32>, pack: usize) -> ThreadRegs<u32> {
        let (nb, nw, nl, _) = src.shape();
        let mut out = ThreadRegs::filled(nb, nw, nl, prog.rounds, 0u32);
        for b in 0..nb {
            for w in 0..nw {
                let mut recv = vec![vec![None; prog.rounds as usize]; nl as usize];
                for s in &prog.shuffles {
                    assert!(s.send.len() <= pack);
                    for lane in 0..nl {
                        let from = s.read.at(lane);
                        for (sel, &j) in s.send.iter().zip(&s.rounds) {
                            recv[lane as usize][j as usize] = Some(src.get(b, w, from, sel.at(from)));
                        }
                    }
                }
                for lane in 0..nl {
                    for d in 0..prog.rounds {
                        let j = d ^ prog.write.at(lane);
                        out.set(b, w, lane, d, recv[lane as usize][j as usize].expect("round received"));
                    }
                }
            }
        }
        out
    }

    fn layout(reg: &[u32], lane: &[u32], warp: &[u32], size: u32) -> LinearLayout {
        let v = |b: &[u32]| b.iter().map(|&x| vec![x]).collect::<Vec<_>>();
        LinearLayout::new([("register", v(reg)), ("lane", v(lane)), ("warp", v(warp))], [("dim0", size)]).unwrap()
    }

    /// Plans `src → dst`; when the plan shuffles, the derived program must move every element where the plan
    /// executor does, with one, two (16-bit) and four (8-bit) rounds to a shuffle. Returns whether it shuffled.
    fn agrees(src: &LinearLayout, dst: &LinearLayout) -> bool {
        let ConversionPlan::WarpShuffle(plan) = plan_conversion(src, dst, 16, &PlanOptions::default()).unwrap() else {
            return false;
        };
        let tensor: Vec<u32> = (0..src.total_out_size() as u32).map(|i| i.wrapping_mul(2654435761) | 1).collect();
        let regs = distribute(src, &tensor).unwrap();
        let want = run_plan(&ConversionPlan::WarpShuffle(plan.clone()), src, dst, &regs).unwrap();
        for pack in [1, 2, 4] {
            let prog = derive(&plan, pack).unwrap();
            let got = simulate(&prog, &regs, pack as usize);
            check(dst, &got, &tensor).unwrap_or_else(|e| panic!("pack {pack}: {e}\n{prog:?}"));
            assert!((0..dst.in_dim_size("register")).all(|r| got.get(0, 0, 5, r) == want.get(0, 0, 5, r)));
        }
        true
    }

    #[test]
    fn derived_programs_match_the_plan_executor() {
        let lanes = [1, 2, 4, 8, 16];
        // A lane permutation (uniform rounds), a register/lane transpose (selects on both sides), a broadcast
        // destination (lanes reading the same source lane).
        assert!(agrees(&layout(&[32], &lanes, &[64], 128), &layout(&[32], &[2, 1, 8, 4, 16], &[64], 128)));
        assert!(agrees(
            &layout(&[1, 2], &[4, 8, 16, 32, 64], &[], 128),
            &layout(&[32, 64], &[1, 2, 4, 8, 16], &[], 128)
        ));
        assert!(agrees(&layout(&[1], &[2, 4, 8, 16, 32], &[], 64), &layout(&[16, 32], &[1, 2, 4, 8, 0], &[], 64)));
        // Random invertible recombinations of a warp-local layout's bits.
        let mut rng = tessel_math::testing::Rng::new(3);
        let mut next = || rng.next_u64();
        let mut shuffled = 0;
        for _ in 0..300 {
            let nr = 1 + next() % 3;
            let size = 1u32 << (5 + nr);
            let src = layout(&(0..nr as u32).map(|i| 1 << (5 + i)).collect::<Vec<_>>(), &lanes, &[], size);
            // dst bases: a random invertible F2 matrix applied to the 5 + nr element bits.
            let n = 5 + nr as u32;
            let mut cols: Vec<u32> = (0..n).map(|i| 1 << i).collect();
            for _ in 0..20 {
                let (a, b) = ((next() % n as u64) as usize, (next() % n as u64) as usize);
                if a != b {
                    cols[a] ^= cols[b];
                }
            }
            for i in (1..cols.len()).rev() {
                cols.swap(i, (next() % (i as u64 + 1)) as usize);
            }
            let dst = layout(&cols[5..], &cols[..5], &[], size);
            shuffled += agrees(&src, &dst) as u32;
        }
        assert!(shuffled > 50, "only {shuffled} random conversions shuffled");
    }

    /// Four rounds to a shuffle where two destination register bits keep the source lane (as in fp8
    /// attention's P, the accumulator's layout to wgmma's A with four K elements to a register).
    #[test]
    fn byte_rounds_pack_four_to_a_shuffle_where_they_read_the_same_lanes() {
        let src = layout(&[1, 2, 4], &[8, 16, 32, 64, 128], &[], 256);
        let dst = layout(&[1, 2, 8], &[4, 16, 32, 64, 128], &[], 256);
        assert!(agrees(&src, &dst));
        let ConversionPlan::WarpShuffle(plan) = plan_conversion(&src, &dst, 8, &PlanOptions::default()).unwrap() else {
            panic!("a warp-local conversion")
        };
        let counts: Vec<usize> = [1, 2, 4].iter().map(|&p| derive(&plan, p).unwrap().shuffles.len()).collect();
        assert_eq!(counts, [8, 4, 2]);
    }

    #[test]
    fn non_affine_tables_are_rejected() {
        let table: Vec<u32> = (0..32).map(|l| (l * l) % 7).collect();
        let all: Vec<u32> = (0..32).collect();
        assert!(LaneSelect::fit(&table, &all, "source lane").is_err());
        let affine: Vec<u32> = (0..32).map(|l| 5 ^ (l & 3) ^ (l >> 4)).collect();
        let sel = LaneSelect::fit(&affine, &all, "source lane").unwrap();
        assert!((0..32).all(|l| sel.at(l) == affine[l as usize]));
    }
}
