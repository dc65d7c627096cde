//! Shared-memory access from lowered code: the scalar and vector `st.shared`/`ld.shared` forms every user
//! shares, the scratch space an op borrows (placed by the allocator above the buffers live at that op, after
//! a barrier when the barrier analysis says earlier accesses may still be in flight), and CTA barriers.

use std::collections::HashMap;

use super::Lower;
use crate::ptx::{Operand, Reg, RegClass, mem, mem_off, sym, vector};
use crate::smem::{Access, Sync};

impl Lower<'_> {
    /// A CTA barrier: every shared-memory access before it is complete for every thread after it.
    pub(crate) fn barrier(&mut self) {
        match self.bar {
            (0, 0) => self.b.effect("bar.sync", 0),
            (id, threads) => self.b.effect("bar.sync", (id, threads)),
        }
        self.hazards.clear();
    }

    /// Emits what the barrier analysis requires before `spans` are accessed.
    pub(crate) fn sync_for(&mut self, spans: &[crate::smem::Span]) {
        let need = self.hazards.needs(spans);
        self.sync(need);
    }

    fn sync(&mut self, need: Sync) {
        match need {
            Sync::None => {}
            Sync::Barrier => self.barrier(),
            Sync::FenceBarrier => {
                self.b.effect("fence.proxy.async.shared::cta", ());
                self.barrier();
                self.hazards.clear_fenced();
            }
        }
    }

    /// `bytes` of scratch for the op being lowered: the address of its first byte. The space sits above every
    /// buffer live at the op; a barrier comes first if an earlier access to it may still be in flight. Users
    /// end with [`Lower::barrier`] so that the next user may reuse the space.
    pub(crate) fn scratch(&mut self, bytes: u32) -> Result<Reg, crate::CompileError> {
        let at = self.scratch_at(bytes)?;
        let base = self.b.reg(RegClass::B32);
        self.b.op("mov.u32", base, sym("global_smem"));
        if at != 0 {
            self.b.op("add.u32", base, (base, at));
        }
        Ok(base)
    }
}

impl Lower<'_> {
    /// The offset of [`Lower::scratch`]'s space, with its barrier and bookkeeping done.
    pub(crate) fn scratch_at(&mut self, bytes: u32) -> Result<u32, crate::CompileError> {
        let at = self.alloc.scratch_base(self.cur_op).max(self.scratch_floor.next_multiple_of(128));
        let span = [(at, at + bytes, Access::Write)];
        self.in_flight.check(&span)?;
        self.sync_for(&span);
        self.hazards.record(&span);
        self.smem_bytes = self.smem_bytes.max(at + bytes);
        Ok(at)
    }
}

/// Shared-memory addresses of an access whose element offset is linear in the thread and register bits:
/// `thread ^ c` for a per-thread part (XOR of `lane_vals`/`warp_vals` over `%tid`'s bits) and a per-register
/// constant `c`. The part of `c` on the thread's bits is XORed into a register once per distinct value; the rest
/// shares no bit with it, so XOR is addition there and it goes into the address's immediate (`[r+imm]`).
pub(crate) struct Addresses {
    base: Reg,
    thread: Option<Reg>,
    thread_bits: u32,
    eb: u32,
    /// The address of `thread ^ c` for each thread-bit part `c` seen so far (0: at the entry when `base` is).
    at: HashMap<u32, Reg>,
}

impl Addresses {
    /// Addresses of `eb`-byte elements from `base`; the thread's part is added at the kernel entry when `base`
    /// is computed there too (a whole allocation), else here (a view's base, often a run-time ring index).
    pub(crate) fn new(l: &mut Lower, lane_vals: Vec<u32>, warp_vals: Vec<u32>, base: Reg, eb: u32) -> Addresses {
        Addresses::new_cta(l, lane_vals, warp_vals, Vec::new(), base, eb)
    }

    /// [`Addresses::new`] whose offsets also depend on the CTA's rank in its cluster (`block_vals`, the offsets
    /// of the rank's bits).
    pub(crate) fn new_cta(
        l: &mut Lower,
        lane_vals: Vec<u32>,
        warp_vals: Vec<u32>,
        block_vals: Vec<u32>,
        base: Reg,
        eb: u32,
    ) -> Addresses {
        let thread_bits = lane_vals.iter().chain(&warp_vals).chain(&block_vals).fold(0, |a, &b| a | b);
        let thread = l.thread_xor_cta(lane_vals, warp_vals, block_vals);
        l.b.set_prologue(l.entry_regs.contains(&base));
        let at = l.b.reg(RegClass::B32);
        match thread {
            Some(t) => l.b.op("mad.lo.u32", at, (t, eb, base)),
            None => l.b.op("mov.b32", at, base),
        }
        l.b.set_prologue(false);
        Addresses { base, thread, thread_bits, eb, at: HashMap::from([(0, at)]) }
    }

    /// The address (`[r]` or `[r+offset]`) of element offset `thread ^ c`.
    pub(crate) fn of(&mut self, l: &mut Lower, c: u32) -> Operand {
        let (on_thread, apart) = (c & self.thread_bits, c & !self.thread_bits);
        let at = *self.at.entry(on_thread).or_insert_with(|| {
            let idx = l.xor_const(self.thread, on_thread, 0);
            let a = l.b.reg(RegClass::B32);
            l.b.op("mad.lo.u32", a, (idx, self.eb, self.base));
            a
        });
        if apart == 0 { mem(at) } else { mem_off(at, apart * self.eb) }
    }
}

pub(crate) fn slot_bytes(c: RegClass) -> u32 {
    if c.bits() == 64 { 8 } else { 4 }
}

pub(crate) fn st_shared(l: &mut Lower, addr: Reg, v: Reg) {
    match v.class {
        RegClass::B16 => l.b.effect("st.shared.b16", (mem(addr), v)),
        RegClass::Pred => {
            let w = l.b.reg(RegClass::B32);
            l.b.op("selp.b32", w, (1, 0, v));
            l.b.effect("st.shared.b32", (mem(addr), w));
        }
        c => l.b.effect(format!("st.shared.b{}", c.bits()), (mem(addr), v)),
    }
}

pub(crate) fn ld_shared(l: &mut Lower, addr: Reg, class: RegClass) -> Reg {
    ld_shared_space(l, addr, class, "shared")
}

/// [`ld_shared`] from state space `space` (`shared`, or `shared::cluster` for an address from `mapa`).
pub(crate) fn ld_shared_space(l: &mut Lower, addr: Reg, class: RegClass, space: &str) -> Reg {
    let d = l.b.reg(class);
    match class {
        RegClass::B16 => l.b.op(format!("ld.{space}.b16"), d, mem(addr)),
        RegClass::Pred => {
            let w = l.b.reg(RegClass::B32);
            l.b.op(format!("ld.{space}.b32"), w, mem(addr));
            l.b.op("setp.ne.u32", d, (w, 0));
        }
        c => l.b.op(format!("ld.{space}.b{}", c.bits()), d, mem(addr)),
    }
    d
}

/// `n` consecutive slots (of [`slot_bytes`] each) from `addr`, as `ld.shared.v4.b32` / `.v2.b64` where the
/// slots allow (a 32-bit slot holding a 16-bit value is not a packed vector: those stay scalar).
pub(crate) fn ld_shared_run(l: &mut Lower, addr: Reg, class: RegClass, n: u32) -> Vec<Reg> {
    let vec = match class {
        RegClass::B32 | RegClass::F32 | RegClass::Pred => 4,
        RegClass::B64 | RegClass::F64 => 2,
        RegClass::B16 => 1,
        RegClass::B128 => unreachable!("no tensor element is 128 bits (only cluster launch control responses)"),
    }
    .min(n);
    let bytes = slot_bytes(class);
    let mut out = Vec::with_capacity(n as usize);
    for first in (0..n).step_by(vec as usize) {
        let at = l.b.reg(RegClass::B32);
        l.b.op("add.u32", at, (addr, first * bytes));
        if vec == 1 {
            out.push(ld_shared(l, at, class));
            continue;
        }
        let load_class = if class == RegClass::Pred { RegClass::B32 } else { class };
        let regs: Vec<Reg> = (0..vec).map(|_| l.b.reg(load_class)).collect();
        l.b.op(format!("ld.shared.v{vec}.b{}", load_class.bits()), vector(&regs), mem(at));
        for r in regs {
            if class == RegClass::Pred {
                let p = l.b.reg(RegClass::Pred);
                l.b.op("setp.ne.u32", p, (r, 0));
                out.push(p);
            } else {
                out.push(r);
            }
        }
    }
    out
}

/// The type suffix and operand of a store of `vals` (16-bit pairs packed into .b32 words).
pub(crate) fn pack(l: &mut Lower, vals: &[Reg], bits: u32) -> (String, Operand) {
    let words: Vec<Reg> = if bits == 16 && vals.len() >= 2 {
        vals.chunks(2)
            .map(|p| {
                let w = l.b.reg(RegClass::B32);
                l.b.op("mov.b32", w, vector(&[p[0], p[1]]));
                w
            })
            .collect()
    } else {
        vals.to_vec()
    };
    let wb = if bits == 16 && vals.len() >= 2 { 32 } else { bits };
    match words.len() {
        1 => (format!(".b{wb}"), words[0].into()),
        n => (format!(".v{n}.b{wb}"), vector(&words)),
    }
}

/// `v` elements of `bits` from address `addr` (`[r]`, `[r+offset]`), one register each (of the storage class
/// for that width).
pub(crate) fn ld_vec(l: &mut Lower, addr: Operand, v: u32, bits: u32) -> Vec<Reg> {
    let class = match bits {
        16 => RegClass::B16,
        32 => RegClass::B32,
        _ => RegClass::B64,
    };
    let dst: Vec<Reg> = (0..v).map(|_| l.b.reg(class)).collect();
    if bits == 16 && v >= 2 {
        let words: Vec<Reg> = (0..v / 2).map(|_| l.b.reg(RegClass::B32)).collect();
        let (ty, op) = if words.len() == 1 {
            (".b32".to_string(), words[0].into())
        } else {
            (format!(".v{}.b32", words.len()), vector(&words))
        };
        l.b.op(format!("ld.shared{ty}"), op, addr);
        for (i, w) in words.iter().enumerate() {
            l.b.op("mov.b32", vector(&[dst[2 * i], dst[2 * i + 1]]), w);
        }
    } else {
        let op = if v == 1 { dst[0].into() } else { vector(&dst) };
        let ty = if v == 1 { format!(".b{bits}") } else { format!(".v{v}.b{bits}") };
        l.b.op(format!("ld.shared{ty}"), op, addr);
    }
    dst
}
