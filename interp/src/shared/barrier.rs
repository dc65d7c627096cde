//! mbarriers in the interpreter. A program stands for every CTA of its cluster, so one barrier of the program is
//! one barrier per CTA: each CTA's own, or for a two-CTA barrier (`tessel_tile::cluster::barrier_ctas`) the one in
//! each pair's lead that both CTAs of the pair arrive on. Each copy counts its own arrivals and transaction bytes
//! as the hardware does (a two-CTA barrier's count is the pair's: `init` doubles it, each CTA's `expect` adds its
//! bytes and one arrival to the lead's copy, each CTA's copies into its shared memory complete their bytes there);
//! the program's view of a barrier is its slowest copy: a phase is complete when it is in every copy. Copies that
//! disagree (a tcgen05 commit that reaches some CTAs but not others) leave the program stuck at the wait, naming
//! what the lagging copy lacks and whose copy it is (the CTA; a two-CTA barrier's is its pair's lead).

use crate::error::{CopyAt, Lacks, SharedFault};

/// One CTA's copy: arrivals expected per phase, those still missing in the current phase, transaction bytes the
/// phase still waits for, and the index of the current (incomplete) phase.
#[derive(Clone, Copy, Debug)]
struct Copy {
    count: u32,
    pending: u32,
    tx: i64,
    phase: u64,
}

impl Copy {
    fn arrive(&mut self, n: u32) -> Result<(), SharedFault> {
        if n > self.pending {
            return Err(SharedFault::Arrivals { n, pending: self.pending });
        }
        self.pending -= n;
        self.try_complete();
        Ok(())
    }

    fn try_complete(&mut self) {
        if self.pending == 0 && self.tx == 0 {
            self.phase += 1;
            self.pending = self.count;
        }
    }
}

/// A barrier of the program: its copy in each CTA that holds one.
#[derive(Clone, Debug)]
pub(in crate::shared) struct Barrier {
    /// CTAs per barrier: 1, or 2 for a two-CTA barrier.
    group: u32,
    /// One per CTA of the cluster (the odd CTAs' unused for a two-CTA barrier).
    copies: Vec<Copy>,
}

impl Barrier {
    /// `mbarrier.init` with `count` in a cluster of `ctas`: a two-CTA barrier (`group` 2) expects the pair's.
    pub(in crate::shared) fn new(count: u32, group: u32, ctas: u32) -> Barrier {
        let count = count * group;
        Barrier { group, copies: vec![Copy { count, pending: count, tx: 0, phase: 0 }; ctas as usize] }
    }

    /// The copy CTA `cta` arrives on.
    fn lead(&self, cta: u32) -> usize {
        (cta & !(self.group - 1)) as usize
    }

    fn leads(&self) -> impl Iterator<Item = &Copy> {
        self.copies.iter().step_by(self.group as usize)
    }

    /// The program's phase: the slowest copy's.
    pub(in crate::shared) fn phase(&self) -> u64 {
        self.leads().map(|c| c.phase).min().expect("a barrier has a copy")
    }

    /// What the program's running phase still lacks, in the slowest copy.
    pub(in crate::shared) fn lacks(&self) -> Lacks {
        let (at, c) = self.leads().enumerate().min_by_key(|(_, c)| c.phase).expect("a barrier has a copy");
        let cta = at as u32 * self.group;
        let state = |c: &Copy| (c.phase, c.pending, c.tx);
        let copy = match (self.copies.len(), self.group) {
            (1, _) => None,
            (_, 2) => Some(CopyAt::Pair(cta)),
            _ if self.leads().all(|d| state(d) == state(c)) => Some(CopyAt::Every),
            _ => Some(CopyAt::Cta(cta)),
        };
        Lacks { phase: c.phase, arrivals: c.pending, bytes: c.tx, copy }
    }

    /// Runs `f` on each CTA's copy; whether that completed the program's phase.
    fn each(&mut self, mut f: impl FnMut(&mut Copy) -> Result<(), SharedFault>) -> Result<bool, SharedFault> {
        let before = self.phase();
        for cta in 0..self.copies.len() as u32 {
            let at = self.lead(cta);
            f(&mut self.copies[at])?;
        }
        Ok(self.phase() > before)
    }

    /// `n` arrivals from every CTA; whether they completed the phase.
    pub(in crate::shared) fn arrive(&mut self, n: u32) -> Result<bool, SharedFault> {
        self.each(|c| c.arrive(n))
    }

    /// `n` arrivals from every CTA on the barrier of each CTA whose rank differs from its own only in `mask`'s
    /// bits (its own included): `mbarrier.arrive` with a `cta_mask`. A CTA's copy then counts the arrivals of
    /// all `2^popcount(mask)` CTAs of its class.
    pub(in crate::shared) fn arrive_masked(&mut self, n: u32, mask: u16) -> Result<bool, SharedFault> {
        if mask == 0 {
            return self.arrive(n);
        }
        let before = self.phase();
        let ctas = self.copies.len() as u32;
        for cta in 0..ctas {
            for d in (0..ctas).filter(|d| d & !u32::from(mask) == 0) {
                let at = self.lead(cta ^ d);
                self.copies[at].arrive(n)?;
            }
        }
        Ok(self.phase() > before)
    }

    /// Every CTA's `mbarrier.expect(bytes)`: the bytes, and one arrival.
    pub(in crate::shared) fn expect(&mut self, bytes: u32) -> Result<bool, SharedFault> {
        self.each(|c| {
            c.tx += bytes as i64;
            c.arrive(1)
        })
    }

    /// `bytes` of transactions done in every CTA (a copy landed in each CTA's part of its buffer).
    pub(in crate::shared) fn complete_tx(&mut self, bytes: i64) -> bool {
        self.each(|c| {
            c.tx -= bytes;
            c.try_complete();
            Ok(())
        })
        .expect("completing bytes never fails")
    }

    /// One arrival on the barrier in each CTA `issuer ^ d` for `d` in `mask`, from every issuer: a tcgen05 commit.
    pub(in crate::shared) fn commit(&mut self, issuers: &[u32], mask: u16) -> Result<bool, SharedFault> {
        let before = self.phase();
        let n = self.copies.len() as u32;
        for &i in issuers {
            for d in (0..n.min(16)).filter(|d| mask >> d & 1 == 1) {
                let at = self.lead(i ^ d);
                self.copies[at].arrive(1)?;
            }
        }
        Ok(self.phase() > before)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deadlock names whose copy lags: one CTA's (a commit that reached only CTA 0), every CTA's alike, or a
    /// pair's, in its lead; outside a cluster, none.
    #[test]
    fn what_a_phase_lacks_names_the_copy() {
        let mut b = Barrier::new(1, 1, 2);
        assert_eq!(b.lacks().copy, Some(CopyAt::Every));
        b.commit(&[0], 0b1).unwrap();
        assert_eq!((b.lacks().copy, b.lacks().arrivals), (Some(CopyAt::Cta(1)), 1));
        let mut pair = Barrier::new(1, 2, 2);
        pair.expect(64).unwrap();
        let l = pair.lacks();
        assert_eq!((l.copy, l.arrivals, l.bytes), (Some(CopyAt::Pair(0)), 0, 128));
        assert_eq!(Barrier::new(1, 1, 1).lacks().copy, None);
        assert!(l.to_string().ends_with("128 transaction byte(s) in the pair's copy in CTA 0"), "{l}");
    }
}
