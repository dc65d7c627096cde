//! Reshaping, flattening and transposing the in-dims and out-dims of a layout.

use smallvec::SmallVec;

use crate::linear::{Basis, Dim, InDim, LinearLayout, OutDim, Result, bail};

impl LinearLayout {
    /// Reorders the in-dims; `order` must name each in-dim once.
    pub fn transpose_ins(&self, order: &[&str]) -> Result<LinearLayout> {
        let perm = permutation(self.in_dims(), order, "transpose_ins")?;
        Ok(LinearLayout { ins: perm.iter().map(|&i| self.ins[i].clone()).collect(), outs: self.outs.clone() })
    }

    /// Reorders the out-dims (and every basis's coordinates); `order` must name each out-dim once.
    pub fn transpose_outs(&self, order: &[&str]) -> Result<LinearLayout> {
        let perm = permutation(self.out_dims(), order, "transpose_outs")?;
        let ins = self
            .ins
            .iter()
            .map(|d| InDim {
                name: d.name.clone(),
                bases: d.bases.iter().map(|b| perm.iter().map(|&j| b[j]).collect()).collect(),
            })
            .collect();
        Ok(LinearLayout { ins, outs: perm.iter().map(|&j| self.outs[j].clone()).collect() })
    }

    /// Merges all in-dims into one (named like the first), then splits it into `new_ins` (first lowest).
    /// The total size must not change.
    pub fn reshape_ins(&self, new_ins: &[(&str, u32)]) -> Result<LinearLayout> {
        let total = check_reshape(new_ins, self.total_in_log2(), "reshape_ins")?;
        debug_assert_eq!(total, self.total_in_log2());
        let mut all = self.ins.iter().flat_map(|d| d.bases.iter().cloned());
        let ins = new_ins
            .iter()
            .map(|&(name, size)| InDim {
                name: Dim::from(name),
                bases: all.by_ref().take(size.trailing_zeros() as usize).collect(),
            })
            .collect();
        Ok(LinearLayout { ins, outs: self.outs.clone() })
    }

    /// Merges all out-dims into one (first out-dim lowest), then splits it into `new_outs` (first lowest).
    /// The total size must not change.
    pub fn reshape_outs(&self, new_outs: &[(&str, u32)]) -> Result<LinearLayout> {
        check_reshape(new_outs, self.total_out_log2(), "reshape_outs")?;
        let outs: SmallVec<[OutDim; 4]> =
            new_outs.iter().map(|&(n, s)| OutDim { name: Dim::from(n), log2: s.trailing_zeros() }).collect();
        let split = |mut v: u128| -> Basis {
            outs.iter()
                .map(|o| {
                    let c = (v & ((1u128 << o.log2) - 1)) as u32;
                    v >>= o.log2;
                    c
                })
                .collect()
        };
        let ins = self
            .ins
            .iter()
            .map(|d| InDim {
                name: d.name.clone(),
                bases: d.bases.iter().map(|b| split(self.flatten_basis(b))).collect(),
            })
            .collect();
        Ok(LinearLayout { ins, outs })
    }

    /// All in-dims merged into one, named like the first in-dim.
    pub fn flatten_ins(&self) -> LinearLayout {
        match self.ins.first() {
            None => self.clone(),
            Some(d) => {
                let name = d.name.clone();
                self.reshape_ins(&[(name.as_str(), self.total_in_size() as u32)]).expect("flatten_ins: size fits")
            }
        }
    }

    /// All out-dims merged into one (first out-dim lowest), named like the first out-dim.
    pub fn flatten_outs(&self) -> LinearLayout {
        match self.outs.first() {
            None => self.clone(),
            Some(o) => {
                let name = o.name.clone();
                self.reshape_outs(&[(name.as_str(), self.total_out_size() as u32)]).expect("flatten_outs: size fits")
            }
        }
    }
}

fn permutation<'a>(dims: impl Iterator<Item = &'a Dim>, order: &[&str], what: &str) -> Result<Vec<usize>> {
    let dims: Vec<&Dim> = dims.collect();
    if order.len() != dims.len() {
        bail!("{what}: expected {} dims, got {}", dims.len(), order.len());
    }
    let mut perm = Vec::with_capacity(order.len());
    for name in order {
        let Some(i) = dims.iter().position(|d| *d == name) else { bail!("{what}: no dim `{name}`") };
        if perm.contains(&i) {
            bail!("{what}: dim `{name}` is named twice");
        }
        perm.push(i);
    }
    Ok(perm)
}

fn check_reshape(new_dims: &[(&str, u32)], total_log2: u32, what: &str) -> Result<u32> {
    let mut sum = 0u32;
    for (i, &(name, size)) in new_dims.iter().enumerate() {
        if !size.is_power_of_two() {
            bail!("{what}: dim `{name}` has size {size}, which is not a power of two");
        }
        if new_dims[..i].iter().any(|(n, _)| *n == name) {
            bail!("{what}: dim `{name}` is named twice");
        }
        sum += size.trailing_zeros();
    }
    if sum != total_log2 {
        bail!("{what}: the new dims hold 2^{sum} elements but the layout has 2^{total_log2}");
    }
    Ok(sum)
}
