//! A reduction whose operand carries a layout combines in the order the generated code combines in
//! (`tessel-codegen`'s `lower/reduce.rs`, which is Triton's order), so that a floating-point reduction here
//! rounds as the kernel's does, bit for bit. Without a layout (the IR before layout assignment) the interpreter
//! reduces by a balanced tree ([`Program::reduce`]).
//!
//! The order, for each element of the result:
//! 1. each thread folds its own registers of the row, in register order, skipping replicated registers. A sum
//!    of products `tl.sum(x * y)` that the code generator contracts (f32/f64, `enable_fp_fusion`, the product
//!    used only here) steps through `fma` as it does: `fma(x0, y0, x1*y1)`, then `fma(xi, yi, acc)`;
//! 2. the lanes of the axis combine by butterfly, the highest lane bit first (`shfl.sync.bfly`): each thread
//!    combines its own value (first argument) with its partner's;
//! 3. the warps of the axis, then 4. the CTAs of the axis (a cluster): every thread takes the partials in the
//!    order of their axis index and combines them from the widest stride down, ((p0 + p2) + (p1 + p3)).
//!
//! Each element of the result is read from the first thread (CTA, then warp, then lane) that holds it. For the
//! combines kernels use (add, max, min, and their index-carrying forms) every thread holds the same value.

use crate::value::Tensor;
use crate::{Program, R};
use tessel_tile::eval::arith;
use tessel_tile::eval::value::Val;
use tessel_tile::ir::OpId;
use tessel_tile::types::Elem;

/// Where a thread's bits go, per hardware dimension: the bases of `lane`, `warp` and `block`.
struct Threads {
    lane: Vec<Vec<u32>>,
    warp: Vec<Vec<u32>>,
    block: Vec<Vec<u32>>,
}

impl Threads {
    fn count(&self) -> usize {
        1 << (self.lane.len() + self.warp.len() + self.block.len())
    }

    /// The (lane, warp, block) of thread index `t` (lane bits lowest).
    fn split(&self, t: usize) -> [u32; 3] {
        let (l, w) = (self.lane.len(), self.warp.len());
        [(t & ((1 << l) - 1)) as u32, (t >> l & ((1 << w) - 1)) as u32, (t >> (l + w)) as u32]
    }
}

impl Program<'_> {
    /// `reduce` op `o` along `axis` in the order of its operand's layout, or `None` when the operand has no
    /// layout the code generator would reduce (the caller then reduces by a balanced tree).
    pub(crate) fn reduce_by_layout(&mut self, o: OpId, inputs: &[Tensor], axis: usize) -> R<Option<Vec<Tensor>>> {
        let data = self.f.op(o);
        let Some(layout) = self.f.ty(data.operands[0]).layout() else { return Ok(None) };
        let lin = &layout.linear;
        let shape = &inputs[0].shape;
        let names: Vec<String> = lin.in_dim_names().iter().map(|d| d.as_str().to_string()).collect();
        let outs = lin.out_dim_sizes();
        if !lin.has_in_dim("register")
            || names.iter().any(|n| !matches!(n.as_str(), "register" | "lane" | "warp" | "block"))
            || outs.len() != shape.len()
            || outs.iter().zip(shape).any(|((_, s), &d)| *s != d)
        {
            return Ok(None);
        }
        let bases = |n: &str| -> Vec<Vec<u32>> { lin.bases(n).iter().map(|b| b.to_vec()).collect() };
        let threads = Threads { lane: bases("lane"), warp: bases("warp"), block: bases("block") };
        // A basis that moves along the axis and another dimension at once: the code generator refuses it.
        let mixes = |b: &Vec<u32>| b[axis] != 0 && b.iter().enumerate().any(|(d, &x)| d != axis && x != 0);
        if threads.lane.iter().chain(&threads.warp).chain(&threads.block).any(mixes) {
            return Ok(None);
        }
        let coords = |r: u32, [lane, warp, block]: [u32; 3]| -> Vec<u32> {
            let input: Vec<u32> = names
                .iter()
                .map(|n| match n.as_str() {
                    "register" => r,
                    "lane" => lane,
                    "warp" => warp,
                    _ => block,
                })
                .collect();
            lin.apply(&input).to_vec()
        };
        let drop_axis =
            |c: &[u32]| -> Vec<u32> { c.iter().enumerate().filter(|&(d, _)| d != axis).map(|(_, &x)| x).collect() };

        // The thread's registers of each result element, in register order: keyed by the register part alone,
        // since a thread's own part moves every register's coordinates alike.
        let reg_bases = bases("register");
        let dup: u32 =
            reg_bases.iter().enumerate().filter(|(_, b)| b.iter().all(|&x| x == 0)).fold(0, |m, (i, _)| m | 1 << i);
        let mut groups: Vec<(Vec<u32>, Vec<u32>)> = Vec::new();
        for r in (0..lin.in_dim_size("register")).filter(|r| r & dup == 0) {
            let key = drop_axis(&coords(r, [0, 0, 0]));
            match groups.iter_mut().find(|(k, _)| *k == key) {
                Some((_, regs)) => regs.push(r),
                None => groups.push((key, vec![r])),
            }
        }

        let elems: Vec<Elem> = inputs.iter().map(|t| t.elem).collect();
        let strides = Tensor::strides(shape);
        let at = |c: &[u32]| -> usize { c.iter().zip(&strides).map(|(&x, &s)| x as usize * s).sum() };
        // A sum of products the code generator contracts: its factors.
        let products = tessel_tile::reduce::contracted_product(self.f, o)
            .map(|(ty, x, y)| (ty, self.tensor(x).clone(), self.tensor(y).clone()));
        let region = data.regions[0];
        let (n_threads, n_groups) = (threads.count(), groups.len());

        // 1. In-thread.
        let mut part: Vec<Vec<Val>> = Vec::with_capacity(n_threads * n_groups);
        for t in 0..n_threads {
            let hw = threads.split(t);
            for (_, regs) in &groups {
                let flat: Vec<usize> = regs.iter().map(|&r| at(&coords(r, hw))).collect();
                let mut acc: Vec<Val> = inputs.iter().map(|x| x.data[flat[0]]).collect();
                for (i, &e) in flat.iter().enumerate().skip(1) {
                    acc = match &products {
                        Some((ty, xs, ys)) => {
                            // acc + x*y, the product still pending when acc is the row's first element alone.
                            let (j, addend) = if i == 1 { (flat[0], inputs[0].data[e]) } else { (e, acc[0]) };
                            let (x, y) = (xs.data[j].as_f64(), ys.data[j].as_f64());
                            vec![Val::Float(arith::fma(*ty, x, y, addend.as_f64()))]
                        }
                        None => {
                            let args: Vec<Val> = acc.iter().copied().chain(inputs.iter().map(|x| x.data[e])).collect();
                            self.combine(region, &elems, &args)?
                        }
                    };
                }
                part.push(acc);
            }
        }

        // 2. Lanes, the highest bit first; 3. warps and 4. CTAs, each partial in its axis index's order.
        let lane_bits = threads.lane.len();
        for (i, b) in threads.lane.iter().enumerate().rev() {
            if b[axis] == 0 {
                continue;
            }
            let before = part.clone();
            for t in 0..n_threads {
                for g in 0..n_groups {
                    let args: Vec<Val> =
                        before[t * n_groups + g].iter().chain(&before[(t ^ 1 << i) * n_groups + g]).copied().collect();
                    part[t * n_groups + g] = self.combine(region, &elems, &args)?;
                }
            }
        }
        let warp_shift = lane_bits;
        let block_shift = lane_bits + threads.warp.len();
        for (dim_bases, shift) in [(&threads.warp, warp_shift), (&threads.block, block_shift)] {
            let axis_bits: Vec<usize> =
                dim_bases.iter().enumerate().filter(|(_, b)| b[axis] != 0).map(|(i, _)| i + shift).collect();
            if axis_bits.is_empty() {
                continue;
            }
            let mask: usize = axis_bits.iter().fold(0, |m, &i| m | 1 << i);
            let before = part.clone();
            for t in 0..n_threads {
                for g in 0..n_groups {
                    let mut level: Vec<Vec<Val>> = (0..1usize << axis_bits.len())
                        .map(|j| {
                            let bits = axis_bits
                                .iter()
                                .enumerate()
                                .filter(|(k, _)| j >> k & 1 == 1)
                                .fold(0, |m, (_, &i)| m | 1 << i);
                            before[((t & !mask) | bits) * n_groups + g].clone()
                        })
                        .collect();
                    let mut stride = level.len() / 2;
                    while stride > 0 {
                        for i in 0..stride {
                            let args: Vec<Val> = level[i].iter().chain(&level[i + stride]).copied().collect();
                            level[i] = self.combine(region, &elems, &args)?;
                        }
                        stride /= 2;
                    }
                    part[t * n_groups + g] = level.swap_remove(0);
                }
            }
        }

        // The result: each element from the first thread holding it.
        let out_shape = drop_axis(shape);
        let out_strides = Tensor::strides(&out_shape);
        let out_len: usize = out_shape.iter().map(|&d| d as usize).product();
        let mut result: Vec<Option<Vec<Val>>> = vec![None; out_len];
        for t in 0..n_threads {
            let hw = threads.split(t);
            for (g, (_, regs)) in groups.iter().enumerate() {
                let c = drop_axis(&coords(regs[0], hw));
                let k: usize = c.iter().zip(&out_strides).map(|(&x, &s)| x as usize * s).sum();
                result[k].get_or_insert_with(|| part[t * n_groups + g].clone());
            }
        }
        let mut tensors: Vec<Tensor> = elems
            .iter()
            .map(|&e| Tensor { shape: out_shape.clone(), elem: e, data: Vec::with_capacity(out_len) })
            .collect();
        for vals in result {
            let Some(vals) = vals else { return Ok(None) };
            for (t, v) in tensors.iter_mut().zip(vals) {
                t.data.push(v);
            }
        }
        Ok(Some(tensors))
    }
}
