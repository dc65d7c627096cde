//! Shared memory as the simulator's threads see it: every access checked against the other threads' accesses
//! since the last barrier that orders them (`bar.sync`, or `bar.warp.sync` within a warp), so that lockstep
//! execution does not hide a missing barrier; atomics ordered among themselves; and the proxy rule, a thread's
//! stores unfenced for the async proxy until a `fence.proxy.async`.

use super::Cta;

/// The last write and the reads since of one shared-memory byte: thread, CTA epoch, the thread's warp epoch.
#[derive(Clone, Copy, Default)]
pub(super) struct Shadow {
    pub(super) write: Option<(usize, u32, u32)>,
    /// The last reader, whether several threads read, and the warp of all readers (`None`: several warps).
    read: Option<(usize, u32, u32)>,
    readers_many: bool,
    readers_warp: Option<usize>,
    /// The last write was an atomic (atomics of different threads need no barrier between them).
    atomic: bool,
}

impl Cta<'_> {
    /// A thread's store of `n` shared bytes at `addr` (the generic proxy): unfenced until a `fence.proxy.async`.
    pub(super) fn mark_generic(&mut self, addr: u64, n: usize) {
        self.generic_since_fence = true;
        let a = addr as usize;
        if let Some(bytes) = self.unfenced.get_mut(a..a + n) {
            bytes.iter_mut().for_each(|b| *b = true);
        }
    }

    /// The async proxy (a tcgen05 op, `what`) reads shared byte `addr`: a thread's store to it must have been
    /// fenced since.
    pub(super) fn async_read(&self, addr: u64, what: &str) -> Result<(), String> {
        if self.unfenced.get(addr as usize).copied().unwrap_or(false) {
            return Err(format!(
                "{what} reads shared byte {addr}, which a thread stored without a fence.proxy.async since"
            ));
        }
        Ok(())
    }

    /// For an access (`what`) by thread `t` to shared bytes `a..a + n`, after checking they are allocated: whether
    /// an earlier access by thread `u` in barrier epoch `e` and warp epoch `we` is ordered before it (the same
    /// thread, a `bar.sync` since, or a `bar.warp.sync` since within the warp).
    fn ordering(
        &self,
        t: usize,
        a: usize,
        n: usize,
        what: &str,
    ) -> Result<impl Fn(usize, u32, u32) -> bool + use<>, String> {
        let len = self.smem.len();
        if a + n > len {
            return Err(format!("shared {what} of {n} bytes at {a} past the {len} bytes allocated"));
        }
        let (epoch, warp) = (self.epoch, t / 32);
        let wepoch = self.warp_epoch[warp];
        Ok(move |u: usize, e: u32, we: u32| u == t || e < epoch || (u / 32 == warp && we < wepoch))
    }

    /// Bytes `addr..addr + n` of shared memory for thread `t`, after checking the access against the other
    /// threads' accesses since the last barrier that orders them (`bar.sync`, or `bar.warp.sync` within a
    /// warp): a read of another thread's unordered write, a write over another thread's unordered read, or a
    /// different value over another thread's unordered write is a race, reported as an error. This is what
    /// lockstep execution would otherwise hide: a missing barrier.
    pub(super) fn smem(&mut self, t: usize, addr: u64, n: usize, write: Option<&[u8]>) -> Result<&mut [u8], String> {
        let a = addr as usize;
        let ordered = self.ordering(t, a, n, "access")?;
        if write.is_some() {
            self.tmem.flight.check_smem_write(addr, n, &format!("thread {t}'s store"))?;
        }
        let (epoch, warp) = (self.epoch, t / 32);
        let wepoch = self.warp_epoch[warp];
        for i in 0..n {
            let sh = &mut self.shadow[a + i];
            let race = |what: &str| Err(format!("shared byte {}: {what} without a barrier between", a + i));
            match write {
                None => {
                    if let Some((u, e, we)) = sh.write
                        && !ordered(u, e, we)
                    {
                        return race(&format!("thread {t} reads what thread {u} wrote"));
                    }
                    match sh.read {
                        Some((u, e, _)) if e == epoch && u != t => {
                            sh.readers_many = true;
                            if sh.readers_warp != Some(warp) {
                                sh.readers_warp = None;
                            }
                        }
                        Some((_, e, _)) if e == epoch => {}
                        _ => {
                            sh.readers_many = false;
                            sh.readers_warp = Some(warp);
                        }
                    }
                    sh.read = Some((t, epoch, wepoch));
                }
                Some(new) => {
                    if let Some((u, e, we)) = sh.read {
                        let others = sh.readers_many || u != t;
                        let warp_ordered = sh.readers_warp == Some(warp) && we < wepoch;
                        if others && e == epoch && !warp_ordered {
                            return race(&format!("thread {t} overwrites what thread {u} read"));
                        }
                    }
                    if let Some((u, e, we)) = sh.write
                        && !ordered(u, e, we)
                        && self.smem[a + i] != new[i]
                    {
                        return race(&format!("threads {u} and {t} write different values"));
                    }
                    self.shadow[a + i].write = Some((t, epoch, wepoch));
                    self.shadow[a + i].atomic = false;
                    self.cluster.wrote(a + i);
                }
            }
        }
        Ok(&mut self.smem[a..a + n])
    }

    /// Bytes `addr..addr + n` of shared memory for an atomic read-modify-write by thread `t`: ordered with
    /// other threads' atomics, but a race with their unordered plain reads and writes.
    pub(super) fn smem_atomic(&mut self, t: usize, addr: u64, n: usize) -> Result<&mut [u8], String> {
        let a = addr as usize;
        let ordered = self.ordering(t, a, n, "atomic")?;
        self.tmem.flight.check_smem_write(addr, n, &format!("thread {t}'s atomic"))?;
        let (epoch, wepoch) = (self.epoch, self.warp_epoch[t / 32]);
        for i in 0..n {
            let sh = &mut self.shadow[a + i];
            let race = |what: &str| Err(format!("shared byte {}: {what} without a barrier between", a + i));
            if let Some((u, e, we)) = sh.write
                && !sh.atomic
                && !ordered(u, e, we)
            {
                return race(&format!("thread {t}'s atomic meets thread {u}'s write"));
            }
            if let Some((u, e, we)) = sh.read
                && (sh.readers_many || u != t)
                && !ordered(u, e, we)
            {
                return race(&format!("thread {t}'s atomic meets thread {u}'s read"));
            }
            sh.write = Some((t, epoch, wepoch));
            sh.atomic = true;
        }
        Ok(&mut self.smem[a..a + n])
    }
}
