//! Composition, inversion, products and their inverses (divisions), sub-layouts and quotients.

use std::ops::Mul;

use smallvec::SmallVec;

use crate::linear::{Basis, Dim, InDim, LinearLayout, OutDim, Result, bail};

impl LinearLayout {
    /// `outer ∘ self`: `self` maps A → B, `outer` maps B → C; the result maps A → C.
    ///
    /// `self`'s out-dims must be `outer`'s in-dims (in any order) and no larger.
    pub fn compose(&self, outer: &LinearLayout) -> Result<LinearLayout> {
        if self.outs.len() != outer.ins.len() {
            bail!(
                "compose: out-dims [{}] do not match the in-dims [{}] of the outer layout",
                names(self.out_dims()),
                names(outer.in_dims())
            );
        }
        // Where each of our out-dims sits among the outer layout's in-dims.
        let mut map = Vec::with_capacity(self.outs.len());
        for o in &self.outs {
            let Some(j) = outer.in_index(o.name.as_str()) else {
                bail!("compose: out-dim `{}` is not an in-dim of the outer layout", o.name)
            };
            if o.log2 > outer.ins[j].bases.len() as u32 {
                bail!(
                    "compose: out-dim `{}` has size {} but the outer layout's in-dim has size {}",
                    o.name,
                    1u64 << o.log2,
                    1u64 << outer.ins[j].bases.len()
                );
            }
            map.push(j);
        }
        let ins = self
            .ins
            .iter()
            .map(|d| InDim {
                name: d.name.clone(),
                bases: d
                    .bases
                    .iter()
                    .map(|b| {
                        let mut input = vec![0u32; outer.ins.len()];
                        for (&c, &j) in b.iter().zip(&map) {
                            input[j] = c;
                        }
                        outer.apply(&input)
                    })
                    .collect(),
            })
            .collect();
        Ok(LinearLayout { ins, outs: outer.outs.clone() })
    }

    /// Solves `outer ∘ X = self` for `X`: `self` maps A → C, `outer` maps B → C, and `X` maps A → B.
    ///
    /// Where `outer` is not injective the solution is not unique: free variables (later bits of `outer`'s
    /// in-dims, in order) are set to 0, so with `outer`'s in-dims ordered `register, lane, warp, block`, the
    /// solution crosses lanes, warps and blocks only when it must. Fails if some value of `self` is not in the
    /// image of `outer`.
    pub fn invert_and_compose(&self, outer: &LinearLayout) -> Result<LinearLayout> {
        // Express our out coordinates in `outer`'s out-dim order.
        let mut map = Vec::with_capacity(self.outs.len());
        for o in &self.outs {
            let Some(j) = outer.out_index(o.name.as_str()) else {
                bail!("invert_and_compose: out-dim `{}` is not an out-dim of the other layout", o.name)
            };
            if o.log2 > outer.outs[j].log2 {
                bail!(
                    "invert_and_compose: out-dim `{}` has size {} but the other layout's has size {}",
                    o.name,
                    1u64 << o.log2,
                    1u64 << outer.outs[j].log2
                );
            }
            map.push(j);
        }
        let echelon = outer.echelon();
        let mut ins = SmallVec::new();
        for d in &self.ins {
            let mut bases = SmallVec::new();
            for (bit, b) in d.bases.iter().enumerate() {
                let mut target = Basis::from_elem(0, outer.outs.len());
                for (&c, &j) in b.iter().zip(&map) {
                    target[j] = c;
                }
                let Some(x) = echelon.solve(outer.flatten_basis(&target)) else {
                    bail!(
                        "invert_and_compose: {}={} maps to {} which the other layout never reaches",
                        d.name,
                        1u64 << bit,
                        fmt_named(&self.out_dim_names(), b)
                    )
                };
                bases.push(split_flat_in(outer, x));
            }
            ins.push(InDim { name: d.name.clone(), bases });
        }
        let outs = outer.ins.iter().map(|d| OutDim { name: d.name.clone(), log2: d.bases.len() as u32 }).collect();
        Ok(LinearLayout { ins, outs })
    }

    /// The inverse of a bijective layout: out-dims become in-dims and vice versa.
    pub fn invert(&self) -> Result<LinearLayout> {
        if !self.is_invertible() {
            bail!(
                "invert: the layout is not invertible (it has {} input bits, {} output bits and rank {})",
                self.total_in_log2(),
                self.total_out_log2(),
                self.rank()
            );
        }
        self.pseudo_invert()
    }

    /// A right inverse of a surjective layout: `self ∘ self.pseudo_invert()` is the identity on the outputs.
    /// Where several inputs reach one output, the one with the free variables set to 0 is chosen.
    pub fn pseudo_invert(&self) -> Result<LinearLayout> {
        if !self.is_surjective() {
            bail!(
                "pseudo_invert: the layout is not surjective (rank {} of {} output bits)",
                self.rank(),
                self.total_out_log2()
            );
        }
        let identity = self
            .outs
            .iter()
            .fold(LinearLayout::empty(), |acc, o| acc * LinearLayout::identity_1d(1 << o.log2, &o.name, &o.name));
        identity.invert_and_compose(self)
    }

    /// The direct sum (`*`): in-dims and out-dims of both, in order, with the dims they share merged so that
    /// `self`'s bits are the low bits and `other`'s the high bits.
    pub fn product(&self, other: &LinearLayout) -> LinearLayout {
        let mut outs: SmallVec<[OutDim; 4]> = self.outs.clone();
        // For each of `other`'s out-dims: its index in the result and the shift applied to its coordinates.
        let mut other_out: Vec<(usize, u32)> = Vec::with_capacity(other.outs.len());
        for o in &other.outs {
            match outs.iter().position(|x| x.name == o.name) {
                Some(j) => {
                    other_out.push((j, outs[j].log2));
                    outs[j].log2 += o.log2;
                }
                None => {
                    other_out.push((outs.len(), 0));
                    outs.push(o.clone());
                }
            }
        }
        let n = outs.len();
        let widen = |b: &Basis| {
            let mut v = b.clone();
            v.resize(n, 0);
            v
        };
        let lift = |b: &Basis| {
            let mut v = Basis::from_elem(0, n);
            for (&c, &(j, shift)) in b.iter().zip(&other_out) {
                v[j] = c << shift;
            }
            v
        };
        let mut ins: SmallVec<[InDim; 4]> = self
            .ins
            .iter()
            .map(|d| InDim { name: d.name.clone(), bases: d.bases.iter().map(widen).collect() })
            .collect();
        for d in &other.ins {
            let lifted = d.bases.iter().map(lift);
            match ins.iter_mut().find(|x| x.name == d.name) {
                Some(x) => x.bases.extend(lifted),
                None => ins.push(InDim { name: d.name.clone(), bases: lifted.collect() }),
            }
        }
        let result = LinearLayout { ins, outs };
        debug_assert!(result.check_bit_budget().is_ok());
        result
    }

    /// Both layouts side by side over disjoint in-dims; they must have the same out-dims (the larger size of
    /// each is kept).
    pub fn concat_ins(&self, other: &LinearLayout) -> Result<LinearLayout> {
        if let Some(d) = other.ins.iter().find(|d| self.has_in_dim(d.name.as_str())) {
            bail!("concat_ins: in-dim `{}` is in both layouts", d.name);
        }
        if !same_names(self.out_dims(), other.out_dims()) {
            bail!("concat_ins: out-dims [{}] and [{}] differ", names(self.out_dims()), names(other.out_dims()));
        }
        let mut result = self.clone();
        for (o, oo) in result.outs.iter_mut().zip(&other.outs) {
            o.log2 = o.log2.max(oo.log2);
        }
        result.ins.extend(other.ins.iter().cloned());
        result.check_bit_budget()?;
        Ok(result)
    }

    /// Both layouts stacked over disjoint out-dims; they must have the same in-dims with the same sizes.
    pub fn concat_outs(&self, other: &LinearLayout) -> Result<LinearLayout> {
        if let Some(o) = other.outs.iter().find(|o| self.has_out_dim(o.name.as_str())) {
            bail!("concat_outs: out-dim `{}` is in both layouts", o.name);
        }
        if self.in_dim_sizes() != other.in_dim_sizes() {
            bail!("concat_outs: the in-dims of the two layouts differ");
        }
        let mut result = self.clone();
        for (d, od) in result.ins.iter_mut().zip(&other.ins) {
            for (b, ob) in d.bases.iter_mut().zip(&od.bases) {
                b.extend(ob.iter().copied());
            }
        }
        result.outs.extend(other.outs.iter().cloned());
        result.check_bit_budget()?;
        Ok(result)
    }

    /// The restriction to the given in-dims and the projection onto the given out-dims (dims keep this
    /// layout's order; names not present are ignored).
    pub fn sublayout(&self, in_dims: &[&str], out_dims: &[&str]) -> LinearLayout {
        let keep: Vec<usize> =
            (0..self.outs.len()).filter(|&j| out_dims.contains(&self.outs[j].name.as_str())).collect();
        let ins = self
            .ins
            .iter()
            .filter(|d| in_dims.contains(&d.name.as_str()))
            .map(|d| InDim {
                name: d.name.clone(),
                bases: d.bases.iter().map(|b| keep.iter().map(|&j| b[j]).collect()).collect(),
            })
            .collect();
        let outs = keep.iter().map(|&j| self.outs[j].clone()).collect();
        LinearLayout { ins, outs }
    }

    /// True if the layout is the identity on `dims` and keeps them apart from every other dim: each named
    /// dim is both an in-dim and an out-dim of the same size, its bits map to themselves, and no other in-dim
    /// reaches it.
    pub fn is_trivial_over(&self, dims: &[&str]) -> bool {
        dims.iter().all(|&name| {
            let (Some(i), Some(j)) = (self.in_index(name), self.out_index(name)) else { return false };
            if self.ins[i].bases.len() as u32 != self.outs[j].log2 {
                return false;
            }
            self.ins.iter().enumerate().all(|(k, d)| {
                d.bases.iter().enumerate().all(|(bit, b)| {
                    if k == i {
                        // Its own bits: exactly the identity onto `name`, nothing anywhere else.
                        b.iter().enumerate().all(|(o, &c)| c == if o == j { 1 << bit } else { 0 })
                    } else {
                        // No other in-dim reaches `name`.
                        b[j] == 0
                    }
                })
            })
        })
    }

    /// Removes `dims` from both sides when the layout is trivial over them ([`Self::is_trivial_over`]).
    pub fn quotient(&self, dims: &[&str]) -> Result<LinearLayout> {
        if !self.is_trivial_over(dims) {
            bail!("quotient: the layout is not the identity on [{}], so they cannot be factored out", dims.join(", "));
        }
        let ins: Vec<&str> = self.in_dims().map(Dim::as_str).filter(|n| !dims.contains(n)).collect();
        let outs: Vec<&str> = self.out_dims().map(Dim::as_str).filter(|n| !dims.contains(n)).collect();
        Ok(self.sublayout(&ins, &outs))
    }

    /// `C` such that `a == b * c`. Keeps all of `a`'s dims.
    pub fn divide_left(a: &LinearLayout, b: &LinearLayout) -> Result<LinearLayout> {
        let mut out_shift = Vec::with_capacity(a.outs.len());
        for o in &a.outs {
            let s = b.out_dim_size_log2(o.name.as_str());
            if s > o.log2 {
                bail!("divide_left: out-dim `{}` of the divisor is larger than the dividend's", o.name);
            }
            out_shift.push(s);
        }
        if let Some(o) = b.outs.iter().find(|o| !a.has_out_dim(o.name.as_str()) && o.log2 > 0) {
            bail!("divide_left: the divisor has out-dim `{}` which the dividend lacks", o.name);
        }
        if let Some(d) = b.ins.iter().find(|d| !a.has_in_dim(d.name.as_str()) && !d.bases.is_empty()) {
            bail!("divide_left: the divisor has in-dim `{}` which the dividend lacks", d.name);
        }
        let mut ins = SmallVec::new();
        for d in &a.ins {
            let nb = b.in_dim_size_log2(d.name.as_str()) as usize;
            if nb > d.bases.len() {
                bail!("divide_left: in-dim `{}` of the divisor is larger than the dividend's", d.name);
            }
            for (bit, ab) in d.bases[..nb].iter().enumerate() {
                let bb = b.basis(d.name.as_str(), bit);
                let expect: Basis = a.outs.iter().map(|o| b.out_index(o.name.as_str()).map_or(0, |j| bb[j])).collect();
                if *ab != expect {
                    bail!("divide_left: bit {bit} of in-dim `{}` differs from the divisor's", d.name);
                }
            }
            let mut bases = SmallVec::new();
            for (bit, ab) in d.bases[nb..].iter().enumerate() {
                let mut c = Basis::new();
                for (&v, &s) in ab.iter().zip(&out_shift) {
                    if v & ((1 << s) - 1) != 0 {
                        bail!("divide_left: bit {} of in-dim `{}` has low bits inside the divisor", nb + bit, d.name);
                    }
                    c.push(v >> s);
                }
                bases.push(c);
            }
            ins.push(InDim { name: d.name.clone(), bases });
        }
        let outs =
            a.outs.iter().zip(&out_shift).map(|(o, &s)| OutDim { name: o.name.clone(), log2: o.log2 - s }).collect();
        Ok(LinearLayout { ins, outs })
    }

    /// `B` such that `a == b * c`. Keeps all of `a`'s dims.
    pub fn divide_right(a: &LinearLayout, c: &LinearLayout) -> Result<LinearLayout> {
        let mut b_log2 = Vec::with_capacity(a.outs.len());
        for o in &a.outs {
            let s = c.out_dim_size_log2(o.name.as_str());
            if s > o.log2 {
                bail!("divide_right: out-dim `{}` of the divisor is larger than the dividend's", o.name);
            }
            b_log2.push(o.log2 - s);
        }
        if let Some(o) = c.outs.iter().find(|o| !a.has_out_dim(o.name.as_str()) && o.log2 > 0) {
            bail!("divide_right: the divisor has out-dim `{}` which the dividend lacks", o.name);
        }
        if let Some(d) = c.ins.iter().find(|d| !a.has_in_dim(d.name.as_str()) && !d.bases.is_empty()) {
            bail!("divide_right: the divisor has in-dim `{}` which the dividend lacks", d.name);
        }
        let mut ins = SmallVec::new();
        for d in &a.ins {
            let nc = c.in_dim_size_log2(d.name.as_str()) as usize;
            if nc > d.bases.len() {
                bail!("divide_right: in-dim `{}` of the divisor is larger than the dividend's", d.name);
            }
            let nb = d.bases.len() - nc;
            for (bit, ab) in d.bases[nb..].iter().enumerate() {
                let cb = c.basis(d.name.as_str(), bit);
                let expect: Basis = a
                    .outs
                    .iter()
                    .zip(&b_log2)
                    .map(|(o, &s)| c.out_index(o.name.as_str()).map_or(0, |j| cb[j] << s))
                    .collect();
                if *ab != expect {
                    bail!("divide_right: bit {} of in-dim `{}` differs from the divisor's", nb + bit, d.name);
                }
            }
            for (bit, ab) in d.bases[..nb].iter().enumerate() {
                if ab.iter().zip(&b_log2).any(|(&v, &s)| (v as u64) >> s != 0) {
                    bail!("divide_right: bit {bit} of in-dim `{}` reaches into the divisor's part", d.name);
                }
            }
            ins.push(InDim { name: d.name.clone(), bases: d.bases[..nb].iter().cloned().collect() });
        }
        let outs = a.outs.iter().zip(&b_log2).map(|(o, &s)| OutDim { name: o.name.clone(), log2: s }).collect();
        Ok(LinearLayout { ins, outs })
    }
}

impl Mul for LinearLayout {
    type Output = LinearLayout;
    fn mul(self, rhs: LinearLayout) -> LinearLayout {
        self.product(&rhs)
    }
}

impl Mul<&LinearLayout> for &LinearLayout {
    type Output = LinearLayout;
    fn mul(self, rhs: &LinearLayout) -> LinearLayout {
        self.product(rhs)
    }
}

impl std::ops::MulAssign for LinearLayout {
    fn mul_assign(&mut self, rhs: LinearLayout) {
        *self = self.product(&rhs);
    }
}

/// Splits a set of flat input bits of `layout` into one index per in-dim: the basis of the result.
fn split_flat_in(layout: &LinearLayout, mut x: u128) -> Basis {
    layout
        .ins
        .iter()
        .map(|d| {
            let n = d.bases.len();
            let v = (x & ((1u128 << n) - 1)) as u32;
            x >>= n;
            v
        })
        .collect()
}

fn names<'a>(it: impl Iterator<Item = &'a Dim>) -> String {
    it.map(Dim::as_str).collect::<Vec<_>>().join(", ")
}

fn same_names<'a>(a: impl Iterator<Item = &'a Dim>, b: impl Iterator<Item = &'a Dim>) -> bool {
    let mut a: Vec<&str> = a.map(Dim::as_str).collect();
    let mut b: Vec<&str> = b.map(Dim::as_str).collect();
    a.sort_unstable();
    b.sort_unstable();
    a == b
}

fn fmt_named(names: &[Dim], b: &[u32]) -> String {
    let parts: Vec<String> = names.iter().zip(b).map(|(n, c)| format!("{n}={c}")).collect();
    format!("({})", parts.join(", "))
}
