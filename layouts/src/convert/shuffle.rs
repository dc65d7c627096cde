//! Warp shuffles: a conversion whose data stays inside each warp, as rounds of `shfl.sync.idx`.
//!
//! Solving the destination through the source restricted to `register, lane` gives a linear map
//! `X: (dst register r, dst lane l) → (src register r', src lane l')`, written `r' = C r ⊕ E l`,
//! `l' = A r ⊕ B l`. Round `j` (one per destination register) has destination lane `l` fill register `j ⊕ F l`
//! and read source lane `A j ⊕ M l` with `M = A F ⊕ B`; it needs source register `C j ⊕ N l` with
//! `N = C F ⊕ E`. One lane sends one register per round, so two lanes that read the same source lane must need
//! the same source register: `ker M ⊆ ker N`. We choose `F` (lane bits → register bits) column by column so
//! that the span of the columns `u_i = (M e_i, N e_i)` meets the pure-register space only in 0, backtracking
//! over a few candidates per lane bit; the sender of each round solves for its reader.

use crate::convert::{Pair, Space, apply_bits};
use crate::f2::Echelon;

/// One `shfl.sync.idx` over the warp: lane `l` sends its register `send_register[l]`, receives the value sent
/// by lane `read_lane[l]`, and writes it to its register `write_register[l]`. Lane-dependent register indices
/// become selects in codegen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShuffleRound {
    pub send_register: Vec<u32>,
    pub read_lane: Vec<u32>,
    pub write_register: Vec<u32>,
}

/// Rounds of shuffles, one per destination register, with the linear maps they come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShufflePlan {
    pub rounds: Vec<ShuffleRound>,
    /// `F`: for each lane bit, the destination register bits XORed into the round index
    /// (`write_register = j ⊕ F lane`).
    pub lane_to_register: Vec<u32>,
    /// `A`: for each destination register bit, the source lane bits of round `j` (`read_lane = A j ⊕ M lane`).
    pub round_to_lane: Vec<u32>,
    /// `M`: for each lane bit, the source lane bits it flips.
    pub lane_to_lane: Vec<u32>,
}

impl ShufflePlan {
    /// True if every round writes the same destination register in all lanes and every lane sends the same
    /// source register (no selects are needed).
    pub fn is_uniform(&self) -> bool {
        self.rounds.iter().all(|r| {
            r.write_register.iter().all(|&x| x == r.write_register[0])
                && r.send_register.iter().all(|&x| x == r.send_register[0])
        })
    }
}

/// Joint vectors: source lane bits in the low `nl` bits, source register bits above.
struct Joint {
    nl: u32,
}

impl Joint {
    fn pack(&self, lane: u32, reg: u32) -> u128 {
        lane as u128 | (reg as u128) << self.nl
    }
    fn lane(&self, v: u128) -> u32 {
        (v & ((1u128 << self.nl) - 1)) as u32
    }
    fn reg(&self, v: u128) -> u32 {
        (v >> self.nl) as u32
    }
}

/// Builds the shuffle rounds, or `None` if the conversion does not stay inside warps in a warp-independent way
/// or no `F` makes every round well defined.
pub(crate) fn build_shuffle(pair: &Pair) -> Option<ShufflePlan> {
    let (s, d) = (&pair.s, &pair.d);
    // The rounds are the same in every warp: the warp and block parts must agree exactly.
    if s.warp != d.warp || s.block != d.block {
        return None;
    }
    let (nrs, nl, nr) = (s.reg.len() as u32, s.lane.len() as u32, d.reg.len() as u32);
    let mut ech = Echelon::new();
    for (i, &v) in s.reg.iter().chain(&s.lane).enumerate() {
        ech.insert(i as u32, v);
    }
    let joint = Joint { nl };
    let solve = |v: u128| -> Option<u128> {
        let x = ech.solve(v)?;
        let reg = (x & ((1u128 << nrs) - 1)) as u32;
        let lane = (x >> nrs) as u32;
        Some(joint.pack(lane, reg))
    };
    // G: destination register bit → (A e_i, C e_i); H: destination lane bit → (B e_i, E e_i).
    let g: Vec<u128> = d.reg.iter().map(|&v| solve(v)).collect::<Option<_>>()?;
    let h: Vec<u128> = d.lane.iter().map(|&v| solve(v)).collect::<Option<_>>()?;

    let mut budget = 4096u32;
    let f = search_f(&joint, &g, &h, 0, Space::new(), Space::new(), &mut budget)?;

    // u_i = H e_i ⊕ G f_i: lane part M e_i, register part N e_i.
    let u: Vec<u128> = h.iter().zip(&f).map(|(&hi, &fi)| hi ^ apply_bits(&g, fi)).collect();
    let m: Vec<u32> = u.iter().map(|&x| joint.lane(x)).collect();
    let n: Vec<u32> = u.iter().map(|&x| joint.reg(x)).collect();
    let a: Vec<u32> = g.iter().map(|&x| joint.lane(x)).collect();
    let c: Vec<u32> = g.iter().map(|&x| joint.reg(x)).collect();
    let mut m_ech = Echelon::new();
    for (i, &v) in m.iter().enumerate() {
        m_ech.insert(i as u32, v as u128);
    }

    let lanes = 1u32 << nl;
    let rounds: Vec<ShuffleRound> = (0..1u32 << nr)
        .map(|j| {
            let (aj, cj) = (apply_bits(&a, j), apply_bits(&c, j));
            let write_register = (0..lanes).map(|l| j ^ apply_bits(&f, l)).collect();
            let read_lane = (0..lanes).map(|l| aj ^ apply_bits(&m, l)).collect();
            // The sender serves whoever reads it: any reader l (M l = s ⊕ A j) needs C j ⊕ N l, the same for all
            // readers because ker M ⊆ ker N. Lanes nobody reads send C j.
            let send_register = (0..lanes)
                .map(|sl| match m_ech.solve((sl ^ aj) as u128) {
                    Some(l) => cj ^ apply_bits(&n, l as u32),
                    None => cj,
                })
                .collect();
            ShuffleRound { send_register, read_lane, write_register }
        })
        .collect();
    let plan = ShufflePlan { rounds, lane_to_register: f, round_to_lane: a, lane_to_lane: m };

    // Check every round against the layouts themselves (warp and block parts agree, so warp 0 suffices).
    let ok = plan.rounds.iter().all(|round| {
        (0..lanes).all(|l| {
            let sl = round.read_lane[l as usize];
            let sent = round.send_register[sl as usize];
            sent < 1 << nrs && s.eval(sent, sl, 0, 0) == d.eval(round.write_register[l as usize], l, 0, 0)
        })
    });
    debug_assert!(ok, "shuffle plan construction produced a wrong round");
    ok.then_some(plan)
}

/// Depth-first search for `F`, one lane bit at a time. `u_span` is the span of the chosen columns `u_i` and
/// `lane_span` its projection on the lane bits; the invariant is that the projection is injective
/// (`u_span` meets the pure-register space only in 0).
fn search_f(
    joint: &Joint,
    g: &[u128],
    h: &[u128],
    i: usize,
    u_span: Space,
    lane_span: Space,
    budget: &mut u32,
) -> Option<Vec<u32>> {
    if i == h.len() {
        return Some(Vec::new());
    }
    if *budget == 0 {
        return None;
    }
    *budget -= 1;
    let nr = g.len() as u32;
    let hi = h[i];
    let lane_of = |x: u128| joint.lane(x) as u128;
    let mut candidates: Vec<u32> = Vec::new();
    // f = 0 keeps the destination register lane-independent: best when it works.
    if !lane_span.contains(lane_of(hi)) || u_span.contains(hi) {
        candidates.push(0);
    }
    // u inside the span so far: solve h ∈ span(u) + im G.
    let mut ech = Echelon::new();
    for (k, &v) in u_span.basis().iter().enumerate() {
        ech.insert(k as u32, v);
    }
    for (k, &v) in g.iter().enumerate() {
        ech.insert(64 + k as u32, v);
    }
    if let Some(x) = ech.solve(hi) {
        candidates.push((x >> 64) as u32);
    }
    // u with a new lane direction: one register bit mixed in.
    for k in 0..nr {
        if !lane_span.contains(lane_of(hi ^ g[k as usize])) {
            candidates.push(1 << k);
        }
    }
    let mut seen = Vec::new();
    for f in candidates {
        if seen.contains(&f) {
            continue;
        }
        seen.push(f);
        let u = hi ^ apply_bits(g, f);
        let (mut us, mut ls) = (u_span.clone(), lane_span.clone());
        if !us.contains(u) {
            if ls.contains(lane_of(u)) {
                continue;
            }
            us.insert(u);
            ls.insert(lane_of(u));
        }
        if let Some(mut rest) = search_f(joint, g, h, i + 1, us, ls, budget) {
            rest.insert(0, f);
            return Some(rest);
        }
    }
    None
}
