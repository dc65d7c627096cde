//! Runs a conversion plan on plain arrays: every thread's registers, every lane's shuffles, every CTA's shared
//! memory, with destinations poisoned first so that a register the plan never writes is caught.
//!
//! Tensors are flat slices in row-major order (the last dim fastest), as in NumPy.

use std::collections::HashSet;
use std::fmt::Debug;

use crate::convert::plan::ConversionPlan;
use crate::convert::swizzle::{BarrierKind, SharedPlan};
use crate::convert::{BLOCK, Flat, LANE, Pair, REGISTER, WARP};
use crate::linear::{LinearLayout, Result, bail};

/// The registers of every thread of a grid of CTAs: `blocks × warps × lanes` threads with `regs` registers each.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThreadRegs<T> {
    blocks: u32,
    warps: u32,
    lanes: u32,
    regs: u32,
    data: Vec<T>,
}

impl<T: Copy> ThreadRegs<T> {
    /// Every register set to `fill`.
    pub fn filled(blocks: u32, warps: u32, lanes: u32, regs: u32, fill: T) -> Self {
        let n = blocks as usize * warps as usize * lanes as usize * regs as usize;
        ThreadRegs { blocks, warps, lanes, regs, data: vec![fill; n] }
    }

    /// Registers shaped for `layout` (sizes of its `block`, `warp`, `lane` and `register` in-dims).
    pub fn for_layout(layout: &LinearLayout, fill: T) -> Self {
        let size = |n| layout.in_dim_size(n);
        Self::filled(size(BLOCK), size(WARP), size(LANE), size(REGISTER), fill)
    }

    /// `(blocks, warps, lanes, registers)`.
    pub fn shape(&self) -> (u32, u32, u32, u32) {
        (self.blocks, self.warps, self.lanes, self.regs)
    }

    fn index(&self, block: u32, warp: u32, lane: u32, reg: u32) -> usize {
        assert!(block < self.blocks && warp < self.warps && lane < self.lanes && reg < self.regs);
        (((block * self.warps + warp) * self.lanes + lane) * self.regs + reg) as usize
    }

    pub fn get(&self, block: u32, warp: u32, lane: u32, reg: u32) -> T {
        self.data[self.index(block, warp, lane, reg)]
    }

    pub fn set(&mut self, block: u32, warp: u32, lane: u32, reg: u32, value: T) {
        let i = self.index(block, warp, lane, reg);
        self.data[i] = value;
    }

    /// The registers of one thread.
    pub fn thread(&self, block: u32, warp: u32, lane: u32) -> &[T] {
        let start = self.index(block, warp, lane, 0);
        &self.data[start..start + self.regs as usize]
    }

    /// Every `(block, warp, lane, register)`, in storage order.
    fn slots(&self) -> impl Iterator<Item = (u32, u32, u32, u32)> + use<T> {
        let (nb, nw, nl, nr) = self.shape();
        (0..nb)
            .flat_map(move |b| (0..nw).flat_map(move |w| (0..nl).flat_map(move |l| (0..nr).map(move |r| (b, w, l, r)))))
    }
}

/// The row-major index of flat element `v` (first out-dim in the low bits) of `layout`'s tensor.
pub(crate) fn row_major(layout: &LinearLayout, v: u128) -> usize {
    let coords = layout.unflatten_out(v);
    layout
        .out_dim_sizes()
        .iter()
        .zip(coords.iter())
        .fold(0usize, |acc, ((_, size), &c)| acc * *size as usize + c as usize)
}

/// Loads `tensor` (row-major, the size of `layout`'s out-dims) into registers: register `r` of thread
/// `(block, warp, lane)` gets the element `layout(r, lane, warp, block)`.
pub fn distribute<T: Copy + Default>(layout: &LinearLayout, tensor: &[T]) -> Result<ThreadRegs<T>> {
    let flat = Flat::of(layout, "distributed")?;
    if tensor.len() as u64 != layout.total_out_size() {
        bail!("distribute: the tensor has {} elements but the layout covers {}", tensor.len(), layout.total_out_size());
    }
    let mut regs = ThreadRegs::for_layout(layout, T::default());
    for (b, w, l, r) in regs.slots().collect::<Vec<_>>() {
        regs.set(b, w, l, r, tensor[row_major(layout, flat.eval(r, l, w, b))]);
    }
    Ok(regs)
}

/// Checks that every register holds the element of `tensor` that `layout` puts there.
pub fn check<T: Copy + PartialEq + Debug>(layout: &LinearLayout, regs: &ThreadRegs<T>, tensor: &[T]) -> Result<()> {
    let flat = Flat::of(layout, "distributed")?;
    if regs.shape() != ThreadRegs::for_layout(layout, ()).shape() {
        bail!("check: registers shaped {:?} do not fit the layout", regs.shape());
    }
    for (b, w, l, r) in regs.slots() {
        let v = flat.eval(r, l, w, b);
        let (want, got) = (tensor[row_major(layout, v)], regs.get(b, w, l, r));
        if want != got {
            let coords = layout.unflatten_out(v);
            bail!("block {b} warp {w} lane {l} register {r} holds {got:?}, but element {coords:?} is {want:?}");
        }
    }
    Ok(())
}

/// Rebuilds the tensor (row-major) from registers laid out by `layout`; copies of one element must agree and
/// every element must be held somewhere.
pub fn gather<T: Copy + Default + PartialEq + Debug>(layout: &LinearLayout, regs: &ThreadRegs<T>) -> Result<Vec<T>> {
    let flat = Flat::of(layout, "distributed")?;
    let mut out: Vec<Option<T>> = vec![None; layout.total_out_size() as usize];
    for (b, w, l, r) in regs.slots() {
        let i = row_major(layout, flat.eval(r, l, w, b));
        let x = regs.get(b, w, l, r);
        match out[i] {
            Some(y) if y != x => bail!("gather: element {i} is held as both {y:?} and {x:?}"),
            _ => out[i] = Some(x),
        }
    }
    out.iter().enumerate().map(|(i, x)| x.ok_or_else(|| err(format!("gather: no thread holds element {i}")))).collect()
}

fn err(msg: String) -> crate::linear::LayoutError {
    crate::linear::LayoutError(msg)
}

/// Executes `plan` on the source registers and returns the destination registers.
pub fn run_plan<T: Copy + Default>(
    plan: &ConversionPlan,
    src: &LinearLayout,
    dst: &LinearLayout,
    src_regs: &ThreadRegs<T>,
) -> Result<ThreadRegs<T>> {
    let pair = Pair::new(src, dst)?;
    if src_regs.shape() != ThreadRegs::for_layout(src, ()).shape() {
        bail!("run_plan: source registers shaped {:?} do not fit the source layout", src_regs.shape());
    }
    let (nb, nw, nl, nrs) = src_regs.shape();
    let nrd = dst.in_dim_size(REGISTER);
    let mut out: ThreadRegs<Option<T>> = ThreadRegs::filled(nb, nw, nl, nrd, None);
    let write = |out: &mut ThreadRegs<Option<T>>, (b, w, l, r): (u32, u32, u32, u32), x: T| -> Result<()> {
        if r >= nrd {
            bail!("the plan writes register {r} but the destination has {nrd}");
        }
        if out.get(b, w, l, r).is_some() {
            bail!("the plan writes register {r} of block {b} warp {w} lane {l} twice");
        }
        out.set(b, w, l, r, Some(x));
        Ok(())
    };
    match plan {
        ConversionPlan::NoOp => {
            if nrs != nrd {
                bail!("a no-op conversion between layouts with {nrs} and {nrd} registers");
            }
            for slot in src_regs.slots() {
                write(&mut out, slot, src_regs.get(slot.0, slot.1, slot.2, slot.3))?;
            }
        }
        ConversionPlan::RegisterPermutation { src_register } => {
            if src_register.len() != nrd as usize {
                bail!("the permutation lists {} registers but the destination has {nrd}", src_register.len());
            }
            for slot @ (b, w, l, r) in out.slots().collect::<Vec<_>>() {
                let from = src_register[r as usize];
                if from >= nrs {
                    bail!("the permutation reads register {from} but the source has {nrs}");
                }
                write(&mut out, slot, src_regs.get(b, w, l, from))?;
            }
        }
        ConversionPlan::WarpShuffle(sh) => {
            for (j, round) in sh.rounds.iter().enumerate() {
                if [&round.send_register, &round.read_lane, &round.write_register]
                    .iter()
                    .any(|t| t.len() != nl as usize)
                {
                    bail!("shuffle round {j} does not list one entry per lane ({nl})");
                }
                for (b, w, l) in (0..nb).flat_map(|b| (0..nw).flat_map(move |w| (0..nl).map(move |l| (b, w, l)))) {
                    let from = round.read_lane[l as usize];
                    if from >= nl {
                        bail!("shuffle round {j}: lane {l} reads lane {from}");
                    }
                    let reg = round.send_register[from as usize];
                    if reg >= nrs {
                        bail!("shuffle round {j}: lane {from} sends register {reg} but the source has {nrs}");
                    }
                    write(&mut out, (b, w, l, round.write_register[l as usize]), src_regs.get(b, w, from, reg))?;
                }
            }
        }
        ConversionPlan::SharedRoundTrip(sp) => run_shared(sp, &pair, src_regs, &mut out, write)?,
    }
    let mut result = ThreadRegs::filled(nb, nw, nl, nrd, T::default());
    for (b, w, l, r) in out.slots() {
        match out.get(b, w, l, r) {
            Some(x) => result.set(b, w, l, r, x),
            None => bail!("the plan never writes register {r} of block {b} warp {w} lane {l}"),
        }
    }
    Ok(result)
}

/// One CTA at a time: per repetition, poison the buffer, run every store, the barrier, every load. Each vector
/// access must be complete (the thread holds all `vec` elements of the aligned group), each offset is stored
/// once per repetition, and a warp barrier lets a warp read only what it stored itself.
fn run_shared<T: Copy + Default>(
    sp: &SharedPlan,
    pair: &Pair,
    src_regs: &ThreadRegs<T>,
    out: &mut ThreadRegs<Option<T>>,
    write: impl Fn(&mut ThreadRegs<Option<T>>, (u32, u32, u32, u32), T) -> Result<()>,
) -> Result<()> {
    let (nb, nw, nl, nrs) = src_regs.shape();
    let nrd = pair.dst.in_dim_size(REGISTER);
    let size = sp.shared.in_dim_size("offset") as usize;
    if sp.store_map.out_dim_size("offset") as usize != size || sp.load_map.out_dim_size("offset") as usize != size {
        bail!("the store and load maps do not address the shared buffer of {size} elements");
    }
    let vec = sp.vec;
    let mask = sp.store_mask;
    for b in 0..nb {
        for rep in 0..sp.reps {
            let mut buffer: Vec<Option<(T, u32)>> = vec![None; size];
            for w in (0..nw).filter(|w| w & mask.warp == 0) {
                for l in (0..nl).filter(|l| l & mask.lane == 0) {
                    let mut stored = HashSet::new();
                    for r in (0..nrs).filter(|r| r & mask.register == 0) {
                        let at = sp.store_map.apply(&[r, l, w, b]);
                        if at[1] != rep {
                            continue;
                        }
                        let slot = &mut buffer[at[0] as usize];
                        if slot.is_some() {
                            bail!("block {b} rep {rep}: offset {} is stored twice (warp {w} lane {l} reg {r})", at[0]);
                        }
                        *slot = Some((src_regs.get(b, w, l, r), w));
                        stored.insert(at[0]);
                    }
                    check_vectors(&stored, vec, "stores", (b, w, l))?;
                }
            }
            for w in 0..nw {
                for l in 0..nl {
                    let mut loaded = HashSet::new();
                    for r in 0..nrd {
                        let at = sp.load_map.apply(&[r, l, w, b]);
                        if at[1] != rep {
                            continue;
                        }
                        let Some((x, writer)) = buffer[at[0] as usize] else {
                            bail!(
                                "block {b} rep {rep}: warp {w} lane {l} reg {r} loads offset {} which nothing stored",
                                at[0]
                            );
                        };
                        if sp.barrier == BarrierKind::Warp && writer != w {
                            bail!("warp {w} reads offset {} stored by warp {writer} behind only a warp barrier", at[0]);
                        }
                        loaded.insert(at[0]);
                        write(out, (b, w, l, r), x)?;
                    }
                    check_vectors(&loaded, vec, "loads", (b, w, l))?;
                }
            }
        }
    }
    Ok(())
}

/// Every offset a thread accesses must come with the whole aligned group of `vec` offsets around it.
fn check_vectors(offsets: &HashSet<u32>, vec: u32, what: &str, (b, w, l): (u32, u32, u32)) -> Result<()> {
    for &o in offsets {
        if let Some(missing) = (0..vec).map(|i| (o & !(vec - 1)) | i).find(|x| !offsets.contains(x)) {
            bail!(
                "block {b} warp {w} lane {l} {what} offset {o} but not offset {missing} of the same {vec}-element vector"
            );
        }
    }
    Ok(())
}
