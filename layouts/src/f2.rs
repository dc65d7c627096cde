//! Elimination over F2 on bit-packed vectors: the one routine behind inversion, solving, rank and free variables.
//!
//! Vectors are `u128` (a layout's out-dims flattened, first out-dim in the low bits); a solution records which
//! input columns were XORed, also as a `u128` bit set. Columns are inserted in order and a column that reduces
//! to zero is *dependent* (a free variable); solutions only use pivot columns, so free variables are 0. Callers
//! order columns `register, lane, warp, block`, which makes solutions prefer to stay inside a thread, then a
//! warp, then a CTA.

/// An echelon basis of the span of the columns inserted so far.
#[derive(Clone, Debug, Default)]
pub struct Echelon {
    /// `(vector, combination)`; the highest set bit of `vector` is its pivot, and pivots are distinct.
    rows: Vec<(u128, u128)>,
    /// `pivot_row[bit]` = index into `rows` of the row whose pivot is `bit`.
    pivot_row: Vec<Option<u8>>,
}

impl Echelon {
    pub fn new() -> Self {
        Echelon { rows: Vec::new(), pivot_row: vec![None; 128] }
    }

    /// Reduces `v` against the basis; returns the remainder and the combination of inserted columns used.
    pub fn reduce(&self, v: u128) -> (u128, u128) {
        let (mut rem, mut comb) = (v, 0u128);
        // Walk the set bits from the top; XOR with a pivot row only touches bits at or below its pivot.
        let mut scan = rem;
        while scan != 0 {
            let top = 127 - scan.leading_zeros();
            if let Some(r) = self.pivot_row[top as usize] {
                let (rv, rc) = self.rows[r as usize];
                rem ^= rv;
                comb ^= rc;
            }
            scan = rem & ((1u128 << top) - 1);
        }
        (rem, comb)
    }

    /// Inserts column number `col` with image `v`. Returns true if it was independent (a pivot column).
    pub fn insert(&mut self, col: u32, v: u128) -> bool {
        let (rem, comb) = self.reduce(v);
        if rem == 0 {
            return false;
        }
        let top = 127 - rem.leading_zeros() as usize;
        self.pivot_row[top] = Some(self.rows.len() as u8);
        self.rows.push((rem, comb ^ (1u128 << col)));
        true
    }

    /// A solution `x` (a set of inserted columns) whose images XOR to `v`, or `None` if `v` is not in the span.
    pub fn solve(&self, v: u128) -> Option<u128> {
        let (rem, comb) = self.reduce(v);
        (rem == 0).then_some(comb)
    }

    pub fn rank(&self) -> u32 {
        self.rows.len() as u32
    }
}

/// Number of bits needed to index `size` (a power of two).
pub fn log2(size: u32) -> u32 {
    debug_assert!(size.is_power_of_two());
    size.trailing_zeros()
}
