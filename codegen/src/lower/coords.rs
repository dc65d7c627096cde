//! Element coordinates from thread ids, and ops that only re-index registers (splat is in `mod.rs`):
//! `arange`, `broadcast`, `expand_dims` (`convert_layout` is in `convert.rs`).
//!
//! A coordinate is linear over F2: `c = XOR of basis[i] over the set bits i of (register, lane, warp)`. The
//! register part is a compile-time constant per register; the thread part is computed once per distinct set
//! of lane/warp basis values, from `%tid.x` by a mask and a shift per distance a basis moves its bit.

use std::collections::HashMap;

use tessel_layouts::LinearLayout;
use tessel_tile::ir::{OpData, ValueId};
use tessel_tile::ops::Op;
use tessel_tile::types::Type;

use super::Lower;
use crate::CompileError;
use crate::ptx::{Reg, RegClass};

/// What a thread's coordinate part is cached by: the lane, warp and block (CTA) values of its bits.
pub(crate) type CoordKey = (Vec<u32>, Vec<u32>, Vec<u32>);

pub(crate) fn layout_of(ty: &Type) -> Result<&LinearLayout, CompileError> {
    ty.layout().map(|l| &l.linear).ok_or_else(|| CompileError::new(format!("`{ty}` has no layout")))
}

/// The bases of in-dim `name` (none when the layout lacks it).
pub(crate) fn bases(l: &LinearLayout, name: &str) -> Vec<Vec<u32>> {
    if !l.has_in_dim(name) {
        return Vec::new();
    }
    l.bases(name).iter().map(|b| b.to_vec()).collect()
}

/// `l` with a `block` in-dim of `n` CTAs: a layout written without a cga_layout (no `block` dim, or one of size
/// 1) is held alike by every CTA of the cluster, so its block bases are zero.
pub(crate) fn over_ctas(l: &LinearLayout, n: u32) -> LinearLayout {
    let have = if l.has_in_dim("block") { l.in_dim_size("block") } else { 1 };
    if n <= have || l.num_out_dims() == 0 {
        return l.clone();
    }
    let first = l.out_dim_names()[0].clone();
    l * &LinearLayout::zeros_1d(n / have, "block", first)
}

/// The coordinates of register `r` when lane = warp = 0.
pub(crate) fn reg_coords(l: &LinearLayout, r: u32) -> Vec<u32> {
    let input: Vec<u32> = l.in_dim_names().iter().map(|d| if d.as_str() == "register" { r } else { 0 }).collect();
    l.apply(&input).to_vec()
}

/// Row-major flattening of coordinates for `shape` (all powers of two, so a bit-disjoint OR: linear over F2).
pub(crate) fn flatten(c: &[u32], shape: &[u32]) -> u32 {
    let mut acc = 0u32;
    for (x, s) in c.iter().zip(shape) {
        acc = acc * s + x;
    }
    acc
}

/// The thread map `tid -> XOR_i (tid bit i ? vals[i] : 0)` (lane bits 0..5 of `tid`, warp bits from 5) as
/// `(distance, mask)` groups in ascending distance: the map is `XOR_d shift_d(tid & mask_d)`, where a positive
/// distance shifts left. Every (input bit, output bit) term of the map lands in the group of its distance.
pub(crate) fn shift_groups(lane_vals: &[u32], warp_vals: &[u32]) -> Vec<(i32, u32)> {
    let mut groups: std::collections::BTreeMap<i32, u32> = std::collections::BTreeMap::new();
    let inputs = lane_vals.iter().enumerate().map(|(i, &v)| (i as i32, v));
    for (bit, v) in inputs.chain(warp_vals.iter().enumerate().map(|(j, &v)| (5 + j as i32, v))) {
        for o in (0..32).filter(|o| v >> o & 1 == 1) {
            *groups.entry(o - bit).or_insert(0) |= 1 << bit;
        }
    }
    groups.into_iter().collect()
}

impl Lower<'_> {
    /// The thread part `XOR_i (lane bit i ? lane_vals[i] : 0) ^ XOR_j (warp bit j ? warp_vals[j] : 0)`, or
    /// `None` when it is always zero.
    ///
    /// Lane bit `i` is bit `i` of `%tid.x` and warp bit `j` is bit `5 + j`, so the map is linear in the bits
    /// of `tid`. Every (input bit `i`, output bit `o`) term moves one bit by `o - i`; grouping the terms by
    /// that distance gives `XOR_d shift_d(tid & mask_d)`, a shift and a mask per distinct distance. The usual
    /// blocked layout is a single group (`(tid << 3) & 0x7f8`, or just `tid << 3`), as in Triton's code.
    pub(crate) fn thread_xor(&mut self, lane_vals: Vec<u32>, warp_vals: Vec<u32>) -> Option<Reg> {
        self.thread_xor_cta(lane_vals, warp_vals, Vec::new())
    }

    /// [`Lower::thread_xor`] plus the CTA's part in a cluster: `XOR_k (rank bit k ? block_vals[k] : 0)` of
    /// `%cluster_ctarank`, computed by the same shift groups.
    pub(crate) fn thread_xor_cta(
        &mut self,
        lane_vals: Vec<u32>,
        warp_vals: Vec<u32>,
        block_vals: Vec<u32>,
    ) -> Option<Reg> {
        if lane_vals.iter().chain(&warp_vals).chain(&block_vals).all(|&v| v == 0) {
            return None;
        }
        let key = (lane_vals, warp_vals, block_vals);
        if let Some(r) = self.coord_cache.get(&key) {
            return Some(*r);
        }
        let acc = self.tid_xor(&key.0, &key.1);
        let acc = match self.cta_xor(&key.2) {
            None => acc,
            Some(c) => Some(match acc {
                None => c,
                Some(a) => {
                    self.b.set_prologue(true);
                    let x = self.b.reg(RegClass::B32);
                    self.b.op("xor.b32", x, (a, c));
                    self.b.set_prologue(false);
                    x
                }
            }),
        };
        let acc = acc.expect("a nonzero map has a term");
        self.coord_cache.insert(key, acc);
        Some(acc)
    }

    /// The block part of [`Lower::thread_xor_cta`], from `%cluster_ctarank` (`None` when it is zero).
    fn cta_xor(&mut self, block_vals: &[u32]) -> Option<Reg> {
        if block_vals.iter().all(|&v| v == 0) {
            return None;
        }
        let rank = self.cta_rank();
        let live = self.f.config.num_ctas.next_power_of_two() - 1;
        Some(self.shifted_terms(rank, shift_groups(block_vals, &[]), live))
    }

    /// The lane/warp part of [`Lower::thread_xor_cta`], from `%tid.x` (`None` when it is zero).
    fn tid_xor(&mut self, lane_vals: &[u32], warp_vals: &[u32]) -> Option<Reg> {
        if lane_vals.iter().chain(warp_vals).all(|&v| v == 0) {
            return None;
        }
        let groups = shift_groups(lane_vals, warp_vals);
        // Bits of tid that can be set: tid < 32 * num_warps.
        let live = (32 * self.num_warps).next_power_of_two() - 1;
        Some(self.shifted_terms(self.tid, groups, live))
    }

    /// `XOR_d shift_d(src & mask_d)` for the `(distance, mask)` groups, at the kernel entry; `live` has the bits
    /// `src` can have set.
    fn shifted_terms(&mut self, src: Reg, groups: Vec<(i32, u32)>, live: u32) -> Reg {
        // Emitted at the kernel entry: the first request may come from inside a branch or loop body.
        self.b.set_prologue(true);
        let mut acc: Option<Reg> = None;
        for (d, mask) in groups {
            let t = self.b.reg(RegClass::B32);
            let (shift, amount) = if d >= 0 { ("shl.b32", d) } else { ("shr.u32", -d) };
            // Shift first when the mask covers every live bit on the kept side, so no `and` is needed.
            let kept = if d >= 0 { live } else { live & !((1u32 << amount) - 1) };
            if mask & kept == kept && amount == 0 {
                self.b.op("mov.b32", t, src);
            } else if mask & kept == kept {
                self.b.op(shift, t, (src, amount));
            } else if amount == 0 {
                self.b.op("and.b32", t, (src, mask));
            } else {
                self.b.op("and.b32", t, (src, mask));
                self.b.op(shift, t, (t, amount));
            }
            acc = Some(match acc {
                None => t,
                Some(a) => {
                    let x = self.b.reg(RegClass::B32);
                    self.b.op("xor.b32", x, (a, t));
                    x
                }
            });
        }
        self.b.set_prologue(false);
        acc.expect("a nonzero map has a term")
    }

    /// The thread part of out-dim `d` of `l` (with the CTA's, in a cluster).
    pub(crate) fn thread_coord(&mut self, l: &LinearLayout, d: usize) -> Option<Reg> {
        let lv = bases(l, "lane").iter().map(|b| b[d]).collect();
        let wv = bases(l, "warp").iter().map(|b| b[d]).collect();
        let bv = bases(l, "block").iter().map(|b| b[d]).collect();
        self.thread_xor_cta(lv, wv, bv)
    }

    /// `thread ^ constant` (+ `add`) as a fresh register.
    pub(crate) fn xor_const(&mut self, thread: Option<Reg>, c: u32, add: i64) -> Reg {
        let r = self.b.reg(RegClass::B32);
        match thread {
            None => self.b.op("mov.b32", r, (c as i64 + add) as i32),
            Some(t) => {
                if c == 0 {
                    self.b.op("mov.b32", r, t);
                } else {
                    self.b.op("xor.b32", r, (t, c));
                }
                if add != 0 {
                    self.b.op("add.s32", r, (r, add));
                }
            }
        }
        r
    }
}

/// `arange start..end` in the result's (1-D) layout.
pub(crate) fn arange(l: &mut Lower, v: ValueId, start: i32) -> Result<Vec<Reg>, CompileError> {
    let lin = layout_of(l.f.ty(v))?.clone();
    let t = l.thread_coord(&lin, 0);
    let n = lin.in_dim_size("register");
    Ok((0..n).map(|r| l.xor_const(t, reg_coords(&lin, r)[0], start as i64)).collect())
}

/// One input of a re-indexing: its registers and layout, a linear map `key` from its element coordinates to a
/// common key space, and a constant XORed into every key (which operand of a `join`/`cat` it is).
pub(crate) struct Source<'a> {
    pub regs: &'a [Reg],
    pub layout: &'a LinearLayout,
    pub key: &'a dyn Fn(&[u32]) -> Vec<u32>,
    pub tag: Vec<u32>,
}

/// The `dim` bases of `l`, padded with zero vectors to `n` (a missing in-dim holds the same data everywhere).
fn padded_bases(l: &LinearLayout, dim: &str, n: usize) -> Vec<Vec<u32>> {
    let mut b = bases(l, dim);
    b.resize(n, vec![0; l.num_out_dims()]);
    b
}

/// For each register of `dst`, a source register holding the element with the same key in the same thread:
/// the element of `dst` at coordinates `c` is the source element `s` with `key(s) ^ tag == fd(c)`. Both key
/// maps are linear, so this holds in every thread exactly when every lane and warp basis of each source maps
/// to the key of the same basis of `dst` and every register of `dst` finds its key among the sources'
/// registers at lane = warp = 0. `None` when some element lives in another thread (a data movement).
pub(crate) fn gather(srcs: &[Source], dst: &LinearLayout, fd: &dyn Fn(&[u32]) -> Vec<u32>) -> Option<Vec<Reg>> {
    for dim in ["lane", "warp"] {
        let n = srcs.iter().map(|s| bases(s.layout, dim).len()).chain([bases(dst, dim).len()]).max().unwrap_or(0);
        let bd = padded_bases(dst, dim, n);
        for s in srcs {
            if padded_bases(s.layout, dim, n).iter().zip(&bd).any(|(a, b)| (s.key)(a) != fd(b)) {
                return None;
            }
        }
    }
    let mut by_key: HashMap<Vec<u32>, Reg> = HashMap::new();
    for s in srcs {
        for r in 0..s.layout.in_dim_size("register") {
            let k: Vec<u32> = (s.key)(&reg_coords(s.layout, r)).iter().zip(&s.tag).map(|(a, b)| a ^ b).collect();
            by_key.entry(k).or_insert(s.regs[r as usize]);
        }
    }
    (0..dst.in_dim_size("register")).map(|r| by_key.get(&fd(&reg_coords(dst, r))).copied()).collect()
}

/// Re-indexes `src_regs` (laid out by `src`) for `dst` with the key maps `fs`/`fd`.
pub(crate) fn remap(
    src_regs: &[Reg],
    src: &LinearLayout,
    dst: &LinearLayout,
    fs: &dyn Fn(&[u32]) -> Vec<u32>,
    fd: &dyn Fn(&[u32]) -> Vec<u32>,
) -> Option<Vec<Reg>> {
    let tag = vec![0; fs(&vec![0; src.num_out_dims()]).len()];
    gather(&[Source { regs: src_regs, layout: src, key: fs, tag }], dst, fd)
}

/// `broadcast`, `expand_dims`: the element a register holds is already in the same thread.
pub(crate) fn relayout(l: &mut Lower, data: &OpData) -> Result<(), CompileError> {
    let (x, v) = (data.operands[0], data.results[0]);
    let (tx, tv) = (l.f.ty(x).clone(), l.f.ty(v).clone());
    let regs = l.get(x)?.to_vec();
    let (ls, ld) = (layout_of(&tx)?.clone(), layout_of(&tv)?.clone());
    let id = |c: &[u32]| c.to_vec();
    let mapped = match &data.op {
        Op::Broadcast => {
            let (ss, ds) = (tx.shape().to_vec(), tv.shape().to_vec());
            let fd = move |c: &[u32]| c.iter().enumerate().map(|(d, &x)| if ss[d] == 1 { 0 } else { x }).collect();
            let _ = ds;
            remap(&regs, &ls, &ld, &id, &fd)
        }
        Op::ExpandDims { axis } => {
            let a = *axis as usize;
            let fd = move |c: &[u32]| c.iter().enumerate().filter(|(d, _)| *d != a).map(|(_, &x)| x).collect();
            remap(&regs, &ls, &ld, &id, &fd)
        }
        other => return Err(CompileError::new(format!("`{}` is not a re-indexing op", other.name()))),
    };
    let out = match mapped {
        Some(m) => m,
        None => {
            return Err(CompileError::new(format!(
                "`{}` from {tx} to {tv} moves data between threads; insert a convert_layout",
                data.op.name()
            )));
        }
    };
    l.vals.insert(v, out);
    Ok(())
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::shift_groups;

    proptest! {
        /// The shift groups compute the same map as the XOR over the set bits of every thread id.
        #[test]
        fn shift_groups_are_the_linear_map(
            lane in proptest::collection::vec(any::<u32>(), 5),
            warp in proptest::collection::vec(any::<u32>(), 0..4),
        ) {
            let groups = shift_groups(&lane, &warp);
            for tid in 0u32..(32 << warp.len()) {
                let direct = lane.iter().chain(&warp).enumerate()
                    .filter(|(i, _)| tid >> i & 1 == 1)
                    .fold(0, |acc, (_, &v)| acc ^ v);
                let grouped = groups.iter().fold(0, |acc, &(d, mask)| {
                    let t = tid & mask;
                    acc ^ if d >= 0 { t << d } else { t >> -d }
                });
                prop_assert_eq!(direct, grouped, "tid {}", tid);
            }
        }
    }
}
