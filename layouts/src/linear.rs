//! The `LinearLayout` type: named input and output dimensions and one basis vector per input bit.

use std::fmt;
use std::sync::Arc;

use smallvec::SmallVec;

use crate::f2::Echelon;

/// The name of a dimension (`register`, `lane`, `warp`, `block`, `offset`, `dim0`, ...). Cheap to clone.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Dim(Arc<str>);

impl Dim {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl From<&str> for Dim {
    fn from(s: &str) -> Self {
        Dim(Arc::from(s))
    }
}

impl From<String> for Dim {
    fn from(s: String) -> Self {
        Dim(Arc::from(s))
    }
}

impl From<&Dim> for Dim {
    fn from(d: &Dim) -> Self {
        d.clone()
    }
}

impl fmt::Display for Dim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for Dim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", &*self.0)
    }
}

impl PartialEq<str> for Dim {
    fn eq(&self, other: &str) -> bool {
        &*self.0 == other
    }
}

impl PartialEq<&str> for Dim {
    fn eq(&self, other: &&str) -> bool {
        &*self.0 == *other
    }
}

/// The standard out-dim names `dim0, dim1, ...` of a rank-`rank` tensor.
pub fn standard_out_dims(rank: usize) -> Vec<Dim> {
    (0..rank).map(|i| Dim::from(format!("dim{i}"))).collect()
}

/// One basis vector: its coordinate in each out-dim, in out-dim order.
pub type Basis = SmallVec<[u32; 4]>;

/// An input dimension: its name and the image of each of its bits.
#[derive(Clone, PartialEq, Eq, Debug)]
pub(crate) struct InDim {
    pub(crate) name: Dim,
    pub(crate) bases: SmallVec<[Basis; 8]>,
}

/// An output dimension: its name and the log2 of its size.
#[derive(Clone, PartialEq, Eq, Debug)]
pub(crate) struct OutDim {
    pub(crate) name: Dim,
    pub(crate) log2: u32,
}

/// Why a layout could not be built or an operation could not be carried out.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct LayoutError(pub String);

impl fmt::Display for LayoutError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for LayoutError {}

pub type Result<T> = std::result::Result<T, LayoutError>;

macro_rules! bail {
    ($($arg:tt)*) => { return Err($crate::linear::LayoutError(format!($($arg)*))) };
}
pub(crate) use bail;

/// Largest size of one dimension: 2^31.
pub const MAX_DIM_LOG2: u32 = 31;

/// A linear map over F2 from named input dims to named output dims, all of power-of-two size.
///
/// `L(x)` for an input `x` is the XOR of the bases of the set bits of `x`, computed per out-dim. A zero basis
/// vector means the input bit does not move the output: several hardware slots hold the same element.
/// Equality (`==`) is exact, including the order of dims; see [`LinearLayout::equivalent`] for equality up to
/// dim order.
#[derive(Clone, PartialEq, Eq)]
pub struct LinearLayout {
    pub(crate) ins: SmallVec<[InDim; 4]>,
    pub(crate) outs: SmallVec<[OutDim; 4]>,
}

fn size_log2(size: u64, what: &str, name: &str) -> Result<u32> {
    if size == 0 || !size.is_power_of_two() {
        bail!("{what} `{name}` has size {size}, which is not a power of two");
    }
    let l = size.trailing_zeros();
    if l > MAX_DIM_LOG2 {
        bail!("{what} `{name}` has size {size}, larger than the maximum 2^{MAX_DIM_LOG2}");
    }
    Ok(l)
}

impl LinearLayout {
    /// The layout with no dims: the unit of the product.
    pub fn empty() -> Self {
        LinearLayout { ins: SmallVec::new(), outs: SmallVec::new() }
    }

    /// Builds a layout with explicit out-dim sizes. `ins` lists `(name, bases)`, each basis one coordinate per
    /// out-dim in the order of `outs`. Every coordinate must be below its out-dim's size; the layout need not
    /// be surjective.
    pub fn new<I, O, N, M>(ins: I, outs: O) -> Result<Self>
    where
        I: IntoIterator<Item = (N, Vec<Vec<u32>>)>,
        O: IntoIterator<Item = (M, u32)>,
        N: Into<Dim>,
        M: Into<Dim>,
    {
        let mut layout = LinearLayout::empty();
        for (name, size) in outs {
            let name = name.into();
            let log2 = size_log2(size as u64, "out-dim", name.as_str())?;
            if layout.outs.iter().any(|o| o.name == name) {
                bail!("out-dim `{name}` is listed twice");
            }
            layout.outs.push(OutDim { name, log2 });
        }
        for (name, bases) in ins {
            let name = name.into();
            if layout.ins.iter().any(|d| d.name == name) {
                bail!("in-dim `{name}` is listed twice");
            }
            if bases.len() as u32 > MAX_DIM_LOG2 {
                bail!("in-dim `{name}` has {} bases; at most {MAX_DIM_LOG2} are allowed", bases.len());
            }
            let mut dim = InDim { name, bases: SmallVec::new() };
            for (i, basis) in bases.into_iter().enumerate() {
                if basis.len() != layout.outs.len() {
                    bail!(
                        "basis {i} of in-dim `{}` has {} coordinates but there are {} out-dims",
                        dim.name,
                        basis.len(),
                        layout.outs.len()
                    );
                }
                for (o, &v) in layout.outs.iter().zip(&basis) {
                    if (v as u64) >> o.log2 != 0 {
                        bail!(
                            "basis {i} of in-dim `{}` maps to {v} in out-dim `{}`, which has size {}",
                            dim.name,
                            o.name,
                            1u64 << o.log2
                        );
                    }
                }
                dim.bases.push(Basis::from_vec(basis));
            }
            layout.ins.push(dim);
        }
        layout.check_bit_budget()?;
        Ok(layout)
    }

    /// Builds a layout whose out-dim sizes are inferred: each is the smallest power of two above every
    /// coordinate the bases reach in it.
    pub fn from_bases<I, O, N, M>(ins: I, out_names: O) -> Result<Self>
    where
        I: IntoIterator<Item = (N, Vec<Vec<u32>>)>,
        O: IntoIterator<Item = M>,
        N: Into<Dim>,
        M: Into<Dim>,
    {
        let out_names: Vec<Dim> = out_names.into_iter().map(Into::into).collect();
        let ins: Vec<(Dim, Vec<Vec<u32>>)> = ins.into_iter().map(|(n, b)| (n.into(), b)).collect();
        let mut sizes = vec![1u64; out_names.len()];
        for (_, bases) in &ins {
            for basis in bases {
                for (s, &v) in sizes.iter_mut().zip(basis) {
                    *s = (*s).max((v as u64 + 1).next_power_of_two());
                }
            }
        }
        if let Some((n, s)) = out_names.iter().zip(&sizes).find(|(_, s)| **s > 1 << MAX_DIM_LOG2) {
            bail!("out-dim `{n}` would need size {s}, larger than the maximum 2^{MAX_DIM_LOG2}");
        }
        LinearLayout::new(ins, out_names.into_iter().zip(sizes.into_iter().map(|s| s as u32)))
    }

    /// `in` of size `size` mapped onto `out` of the same size by the identity.
    pub fn identity_1d(size: u32, in_dim: impl Into<Dim>, out_dim: impl Into<Dim>) -> Self {
        assert!(size.is_power_of_two(), "identity_1d: size {size} is not a power of two");
        let log2 = size.trailing_zeros();
        let bases = (0..log2).map(|i| Basis::from_slice(&[1 << i])).collect();
        LinearLayout {
            ins: SmallVec::from_elem(InDim { name: in_dim.into(), bases }, 1),
            outs: SmallVec::from_elem(OutDim { name: out_dim.into(), log2 }, 1),
        }
    }

    /// `in` of size `size` mapped onto element 0 of `out` (of size 1): every input holds the same element.
    pub fn zeros_1d(size: u32, in_dim: impl Into<Dim>, out_dim: impl Into<Dim>) -> Self {
        assert!(size.is_power_of_two(), "zeros_1d: size {size} is not a power of two");
        let bases = (0..size.trailing_zeros()).map(|_| Basis::from_slice(&[0])).collect();
        LinearLayout {
            ins: SmallVec::from_elem(InDim { name: in_dim.into(), bases }, 1),
            outs: SmallVec::from_elem(OutDim { name: out_dim.into(), log2: 0 }, 1),
        }
    }

    /// The algebra flattens inputs and outputs into 128-bit vectors; refuse layouts that do not fit.
    pub(crate) fn check_bit_budget(&self) -> Result<()> {
        if self.total_in_log2() > 128 || self.total_out_log2() > 128 {
            bail!(
                "layout has {} input bits and {} output bits; at most 128 of each are supported",
                self.total_in_log2(),
                self.total_out_log2()
            );
        }
        Ok(())
    }

    // ----- dims -----

    pub fn in_dims(&self) -> impl ExactSizeIterator<Item = &Dim> + '_ {
        self.ins.iter().map(|d| &d.name)
    }

    pub fn out_dims(&self) -> impl ExactSizeIterator<Item = &Dim> + '_ {
        self.outs.iter().map(|d| &d.name)
    }

    pub fn in_dim_names(&self) -> Vec<Dim> {
        self.in_dims().cloned().collect()
    }

    pub fn out_dim_names(&self) -> Vec<Dim> {
        self.out_dims().cloned().collect()
    }

    pub fn num_in_dims(&self) -> usize {
        self.ins.len()
    }

    pub fn num_out_dims(&self) -> usize {
        self.outs.len()
    }

    pub fn has_in_dim(&self, name: &str) -> bool {
        self.in_index(name).is_some()
    }

    pub fn has_out_dim(&self, name: &str) -> bool {
        self.out_index(name).is_some()
    }

    pub(crate) fn in_index(&self, name: &str) -> Option<usize> {
        self.ins.iter().position(|d| d.name == name)
    }

    pub(crate) fn out_index(&self, name: &str) -> Option<usize> {
        self.outs.iter().position(|d| d.name == name)
    }

    /// log2 of the size of in-dim `name`; 0 if the layout has no such dim.
    pub fn in_dim_size_log2(&self, name: &str) -> u32 {
        self.in_index(name).map_or(0, |i| self.ins[i].bases.len() as u32)
    }

    /// Size of in-dim `name`; 1 if the layout has no such dim.
    pub fn in_dim_size(&self, name: &str) -> u32 {
        1 << self.in_dim_size_log2(name)
    }

    /// log2 of the size of out-dim `name`; 0 if the layout has no such dim.
    pub fn out_dim_size_log2(&self, name: &str) -> u32 {
        self.out_index(name).map_or(0, |i| self.outs[i].log2)
    }

    /// Size of out-dim `name`; 1 if the layout has no such dim.
    pub fn out_dim_size(&self, name: &str) -> u32 {
        1 << self.out_dim_size_log2(name)
    }

    /// `(name, size)` of every out-dim, in order.
    pub fn out_dim_sizes(&self) -> Vec<(Dim, u32)> {
        self.outs.iter().map(|o| (o.name.clone(), 1 << o.log2)).collect()
    }

    /// `(name, size)` of every in-dim, in order.
    pub fn in_dim_sizes(&self) -> Vec<(Dim, u32)> {
        self.ins.iter().map(|d| (d.name.clone(), 1 << d.bases.len())).collect()
    }

    pub fn total_in_log2(&self) -> u32 {
        self.ins.iter().map(|d| d.bases.len() as u32).sum()
    }

    pub fn total_out_log2(&self) -> u32 {
        self.outs.iter().map(|o| o.log2).sum()
    }

    /// Product of the in-dim sizes.
    pub fn total_in_size(&self) -> u64 {
        1 << self.total_in_log2()
    }

    /// Product of the out-dim sizes.
    pub fn total_out_size(&self) -> u64 {
        1 << self.total_out_log2()
    }

    /// The bases of in-dim `name` (empty if there is no such dim).
    pub fn bases(&self, name: &str) -> &[Basis] {
        self.in_index(name).map_or(&[], |i| &self.ins[i].bases)
    }

    /// The image of bit `bit` of in-dim `name`, one coordinate per out-dim.
    pub fn basis(&self, name: &str, bit: usize) -> &[u32] {
        &self.bases(name)[bit]
    }

    /// Every in-dim with its bases as plain vectors, in order.
    pub fn bases_vec(&self) -> Vec<(Dim, Vec<Vec<u32>>)> {
        self.ins.iter().map(|d| (d.name.clone(), d.bases.iter().map(|b| b.to_vec()).collect())).collect()
    }

    // ----- evaluation -----

    /// Applies the layout to one index per in-dim (in in-dim order); returns one coordinate per out-dim.
    pub fn apply(&self, input: &[u32]) -> Basis {
        assert_eq!(input.len(), self.ins.len(), "apply: expected one index per in-dim");
        let mut out = Basis::from_elem(0, self.outs.len());
        for (dim, &x) in self.ins.iter().zip(input) {
            debug_assert!((x as u64) >> dim.bases.len() == 0, "apply: index {x} out of range for `{}`", dim.name);
            for (bit, basis) in dim.bases.iter().enumerate() {
                if x >> bit & 1 == 1 {
                    for (o, b) in out.iter_mut().zip(basis) {
                        *o ^= b;
                    }
                }
            }
        }
        out
    }

    /// Applies the layout to named indices; in-dims not mentioned are 0. Returns `(out-dim, coordinate)`.
    pub fn apply_named(&self, input: &[(&str, u32)]) -> Vec<(Dim, u32)> {
        for (name, _) in input {
            assert!(self.has_in_dim(name), "apply_named: no in-dim `{name}`");
        }
        let positional: Vec<u32> =
            self.ins.iter().map(|d| input.iter().find(|(n, _)| d.name == *n).map_or(0, |&(_, x)| x)).collect();
        self.out_dims().cloned().zip(self.apply(&positional)).collect()
    }

    /// Applies the layout to a flattened input index (first in-dim in the low bits) and returns the flattened
    /// output index (first out-dim in the low bits).
    pub fn apply_flat(&self, x: u128) -> u128 {
        let mut out = 0u128;
        let mut bit = 0;
        for dim in &self.ins {
            for basis in &dim.bases {
                if x >> bit & 1 == 1 {
                    out ^= self.flatten_basis(basis);
                }
                bit += 1;
            }
        }
        out
    }

    /// A basis vector as a flat out index (first out-dim in the low bits).
    pub(crate) fn flatten_basis(&self, basis: &[u32]) -> u128 {
        let mut v = 0u128;
        let mut shift = 0;
        for (o, &c) in self.outs.iter().zip(basis) {
            v |= (c as u128) << shift;
            shift += o.log2;
        }
        v
    }

    /// Inverse of [`Self::flatten_basis`].
    pub(crate) fn unflatten_out(&self, mut v: u128) -> Basis {
        self.outs
            .iter()
            .map(|o| {
                let c = (v & ((1u128 << o.log2) - 1)) as u32;
                v >>= o.log2;
                c
            })
            .collect()
    }

    /// Every input bit's flat image, in order (in-dims in order, low bits first).
    pub(crate) fn flat_columns(&self) -> Vec<u128> {
        self.ins.iter().flat_map(|d| d.bases.iter()).map(|b| self.flatten_basis(b)).collect()
    }

    pub(crate) fn echelon(&self) -> Echelon {
        let mut e = Echelon::new();
        for (col, v) in self.flat_columns().into_iter().enumerate() {
            e.insert(col as u32, v);
        }
        e
    }

    // ----- properties -----

    /// Dimension of the image.
    pub fn rank(&self) -> u32 {
        self.echelon().rank()
    }

    /// Every output is reached by some input.
    pub fn is_surjective(&self) -> bool {
        self.rank() == self.total_out_log2()
    }

    /// No two inputs reach the same output.
    pub fn is_injective(&self) -> bool {
        self.rank() == self.total_in_log2()
    }

    pub fn is_invertible(&self) -> bool {
        self.total_in_log2() == self.total_out_log2() && self.is_surjective()
    }

    /// For each in-dim, the bits that are free variables: bits whose image lies in the span of the images of
    /// earlier bits (earlier in-dims first, lower bits first). A zero basis is always free: it is a broadcast.
    pub fn free_variable_masks(&self) -> Vec<(Dim, u32)> {
        let mut e = Echelon::new();
        let mut col = 0;
        self.ins
            .iter()
            .map(|d| {
                let mut mask = 0u32;
                for (bit, b) in d.bases.iter().enumerate() {
                    if !e.insert(col, self.flatten_basis(b)) {
                        mask |= 1 << bit;
                    }
                    col += 1;
                }
                (d.name.clone(), mask)
            })
            .collect()
    }

    /// How many consecutive values of the first in-dim map to consecutive values of the flattened output
    /// (first out-dim fastest), such that no other input bit breaks that run: the largest vector a thread can
    /// move with one access when the first in-dim is `register`.
    pub fn num_consecutive_in_out(&self) -> u32 {
        if self.ins.is_empty() || self.outs.is_empty() {
            return 1;
        }
        let first = &self.ins[0];
        let mut consec_log2 = 0u32;
        while (consec_log2 as usize) < first.bases.len()
            && self.flatten_basis(&first.bases[consec_log2 as usize]) == 1u128 << consec_log2
        {
            consec_log2 += 1;
        }
        // Any other basis with a set bit below the run splits it.
        let others = first.bases[consec_log2 as usize..]
            .iter()
            .chain(self.ins[1..].iter().flat_map(|d| d.bases.iter()))
            .map(|b| self.flatten_basis(b))
            .fold(0u128, |acc, v| acc | v);
        let limit = if others == 0 { 127 } else { others.trailing_zeros() };
        1 << consec_log2.min(limit)
    }

    /// The same layout with every zero basis of in-dim `name` removed (the dim shrinks accordingly).
    pub fn remove_zero_bases(&self, name: &str) -> Self {
        let mut out = self.clone();
        if let Some(i) = out.in_index(name) {
            out.ins[i].bases.retain(|b| b.iter().any(|&c| c != 0));
        }
        out
    }

    /// Equal up to the order of in-dims and out-dims (bases within a dim keep their order).
    pub fn equivalent(&self, other: &Self) -> bool {
        if self.ins.len() != other.ins.len() || self.outs.len() != other.outs.len() {
            return false;
        }
        let Some(out_map) = self
            .outs
            .iter()
            .map(|o| other.out_index(o.name.as_str()).filter(|&j| other.outs[j].log2 == o.log2))
            .collect::<Option<Vec<usize>>>()
        else {
            return false;
        };
        self.ins.iter().all(|d| {
            other.in_index(d.name.as_str()).is_some_and(|j| {
                let od = &other.ins[j];
                od.bases.len() == d.bases.len()
                    && d.bases.iter().zip(&od.bases).all(|(a, b)| a.iter().zip(&out_map).all(|(&c, &k)| c == b[k]))
            })
        })
    }

    /// Renames in-dim `from` to `to`.
    pub fn rename_in_dim(&self, from: &str, to: impl Into<Dim>) -> Self {
        let mut out = self.clone();
        if let Some(i) = out.in_index(from) {
            out.ins[i].name = to.into();
        }
        out
    }

    /// Renames out-dim `from` to `to`.
    pub fn rename_out_dim(&self, from: &str, to: impl Into<Dim>) -> Self {
        let mut out = self.clone();
        if let Some(i) = out.out_index(from) {
            out.outs[i].name = to.into();
        }
        out
    }
}

impl fmt::Debug for LinearLayout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self}")
    }
}

/// Prints the bases: one line per in-dim, then the out-dims with their sizes, e.g.
/// `register: [(0,1), (8,0)]` ... `-> dim0: 16, dim1: 16`.
impl fmt::Display for LinearLayout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let width = self.ins.iter().map(|d| d.name.as_str().len()).max().unwrap_or(0);
        for d in &self.ins {
            write!(f, "{:width$}: [", format!("{}", d.name), width = width)?;
            for (i, b) in d.bases.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write_basis(f, b)?;
            }
            f.write_str("]\n")?;
        }
        f.write_str("->")?;
        for (i, o) in self.outs.iter().enumerate() {
            write!(f, "{} {}: {}", if i > 0 { "," } else { "" }, o.name, 1u64 << o.log2)?;
        }
        Ok(())
    }
}

pub(crate) fn write_basis(f: &mut impl fmt::Write, b: &[u32]) -> fmt::Result {
    if b.len() == 1 {
        return write!(f, "{}", b[0]);
    }
    f.write_char('(')?;
    for (i, c) in b.iter().enumerate() {
        if i > 0 {
            f.write_char(',')?;
        }
        write!(f, "{c}")?;
    }
    f.write_char(')')
}
