//! A small SIMT simulator for the PTX that tessel-codegen emits, so that tests can run kernels on the CPU and
//! compare them with the reference interpreter where no GPU is at hand.
//!
//! Scope: one `.entry` with labels and branches, virtual registers, `ld.param`, global memory as bounds-checked
//! buffers, dynamic shared memory, and the instruction forms the code generator uses. A CTA's threads run in
//! *groups* (`warps`): threads that agree on every branch run in lockstep, one instruction at a time over the
//! group, with every result computed from the state before the instruction (so `shfl.sync` reads its peers'
//! sources); a branch they disagree on splits the group, and groups meet again where they come to the same pc.
//! The groups of a CTA are scheduled one at a time, each until it blocks (a named barrier not complete, an
//! mbarrier wait that fails, a cluster barrier, a warpgroup-collective instruction its other warps have not
//! reached), exits or has run a while; so warp-specialized kernels (partitions on their own warps meeting at
//! named barriers and mbarriers) run, and a state where nothing can move is reported as a deadlock naming who
//! waits where. CTAs run one after another (the CTAs of a cluster together, `cluster`).
//!
//! Because the order the simulator happens to run threads in would hide a missing barrier, every shared-memory
//! access is checked by happens-before (`race`): vector clocks per warp, joined through the barriers (named
//! barriers, mbarrier phases, cluster barriers, `bar.warp.sync` within a warp, a peer CTA's arrivals) and through
//! the mbarriers that asynchronous copies and tcgen05 commits complete on; an access that conflicts with an earlier
//! one not ordered before it (read after write, write after read, different values written) is an error. Tensor
//! memory likewise, with the tcgen05 fences and waits (`tmem_race`). Instruction semantics follow the PTX ISA:
//! `shfl.sync.up/down/idx/bfly` with their clamp rules (an out-of-range source gives the lane its own value), `bfe`
//! with sign extension, `cvt.rna.tf32.f32` rounding to nearest with ties away from zero, `.approx` math done
//! exactly; mbarriers in `mbarrier`; tensor memory and tcgen05 in `tcgen05` (the dense MMA's arithmetic in
//! `tcgen05_dense`, a CTA pair's MMAs in `tcgen05_pair`); TMA in `tma` (gather4/scatter4 in `tma_gather`, im2col
//! loads in `tma_im2col`); clusters in `cluster` (their addresses in `cluster_addr`); cluster launch control in
//! `clc`. It is a test oracle for data movement, arithmetic order and synchronization, not a model of timing or of
//! the memory consistency model beyond happens-before.

mod bits;
mod clc;
mod cluster;
mod cluster_addr;
mod matrix;
mod mbarrier;
mod mma;
mod parse;
mod race;
mod smem_desc;
mod tcgen05;
mod tcgen05_dense;
mod tcgen05_pair;
mod tcgen05_scaled;
mod tma;
mod tma_gather;
mod tma_im2col;
mod tmem_race;
mod warps;
mod wgmma;

use std::collections::HashMap;

use bits::{from_f, int_val, mask, scalar, sext, suffix_bits, to_f};
pub use parse::Program;
use parse::{Ins, Opnd};
use tessel_tile::eval::value::{Val, from_bits, to_bits};
use tessel_tile::types::ScalarType;
pub use tma::TensorMap;
pub use tma_im2col::Im2colMap;

/// Global memory: buffers at distinct addresses, every access bounds-checked; and the tensor maps a launch
/// passes (at addresses of their own, which the kernel reads through its parameters): tiled ones and im2col ones.
#[derive(Default)]
pub struct Global {
    bufs: Vec<(u64, Vec<u8>)>,
    maps: HashMap<u64, TensorMap>,
    im2col: HashMap<u64, Im2colMap>,
}

impl Global {
    /// Registers a tensor map and returns the address the kernel's `.param .b8 tmap[128]` stands for.
    pub fn map(&mut self, m: TensorMap) -> u64 {
        let at = self.next_map();
        self.maps.insert(at, m);
        at
    }

    /// Registers an im2col tensor map ([`Im2colMap`]) and returns the address its parameter stands for.
    pub fn map_im2col(&mut self, m: Im2colMap) -> u64 {
        let at = self.next_map();
        self.im2col.insert(at, m);
        at
    }

    fn next_map(&self) -> u64 {
        0xF000_0000_0000 + 256 * (self.maps.len() + self.im2col.len()) as u64
    }

    /// Places `bytes` in memory and returns its address.
    pub fn alloc(&mut self, bytes: Vec<u8>) -> u64 {
        let base = self.bufs.last().map_or(1 << 20, |(b, v)| (b + v.len() as u64 + 4096) & !255);
        self.bufs.push((base, bytes));
        base
    }

    pub fn bytes(&self, addr: u64) -> &[u8] {
        &self.bufs.iter().find(|(b, _)| *b == addr).expect("no buffer at this address").1
    }

    fn slice(&mut self, addr: u64, n: usize) -> Result<&mut [u8], String> {
        for (b, v) in &mut self.bufs {
            if addr >= *b && addr + n as u64 <= *b + v.len() as u64 {
                let o = (addr - *b) as usize;
                return Ok(&mut v[o..o + n]);
            }
        }
        Err(format!("global access of {n} bytes at {addr:#x} is outside every buffer"))
    }
}

/// One CTA's execution state.
struct Cta<'a> {
    p: &'a Program,
    regs: Vec<Vec<u64>>,
    params: &'a HashMap<String, u64>,
    ctaid: [u32; 3],
    grid: [u32; 3],
    smem: Vec<u8>,
    /// Who last wrote each byte of shared memory and who read it since (see [`Cta::smem`]).
    shadow: Vec<race::Shadow>,
    /// The warps' vector clocks (`race`).
    clocks: race::Clocks,
    /// Which shared bytes threads stored without a `fence.proxy.async` of their warp since (the warp plus one;
    /// 0: fenced), and the warps with any: the async proxy's reads (tensor cores, TMA stores) check the bytes
    /// they read against it.
    unfenced: Vec<u8>,
    unfenced_warps: u64,
    /// The groups of threads, their pcs and the named and cluster barriers (`warps`).
    sched: warps::Sched,
    /// mbarriers (`mbarrier`).
    mbar: mbarrier::State,
    /// Tensor memory (`tcgen05`).
    tmem: tcgen05::State,
    /// Its cluster (`cluster`): rank, ids, the peers' shared memory.
    cluster: cluster::Member,
}

impl Cta<'_> {
    fn val(&self, t: usize, o: &Opnd) -> Result<u64, String> {
        Ok(match o {
            Opnd::Reg(r) => self.regs[t][*r],
            Opnd::NotReg(r) => (self.regs[t][*r] == 0) as u64,
            Opnd::Imm(v) => *v,
            Opnd::Special(s) => match *s {
                "%tid.x" => t as u64,
                "%laneid" => (t % 32) as u64,
                "%ctaid.x" => self.ctaid[0] as u64,
                "%ctaid.y" => self.ctaid[1] as u64,
                "%ctaid.z" => self.ctaid[2] as u64,
                "%nctaid.x" => self.grid[0] as u64,
                "%nctaid.y" => self.grid[1] as u64,
                "%nctaid.z" => self.grid[2] as u64,
                s => self.cluster.special(s).ok_or_else(|| format!("special register {s} is not simulated"))?,
            },
            Opnd::Sym(s) if s == "global_smem" => 0,
            // A parameter's address (`mov.b64 %rd, k_tmap_0`): what the launch passed for it.
            Opnd::Sym(s) if self.params.contains_key(s) => self.params[s],
            other => return Err(format!("cannot read {other:?} as a value")),
        })
    }

    fn addr(&self, t: usize, o: &Opnd) -> Result<u64, String> {
        match o {
            Opnd::Mem(base, off) => Ok(self.val(t, base)?.wrapping_add(*off as u64)),
            other => Err(format!("{other:?} is not an address")),
        }
    }
}

/// Runs `prog` over `grid` CTAs of `threads` threads with `smem_bytes` of shared memory; `args` are the entry's
/// parameters in order, as raw bits (addresses from [`Global::alloc`], integers, f32/f64 bit patterns).
pub fn run(
    prog: &Program,
    global: &mut Global,
    args: &[u64],
    grid: [u32; 3],
    threads: u32,
    smem_bytes: u32,
) -> Result<(), String> {
    cluster::run(prog, global, args, grid, threads, smem_bytes, 1)
}

#[allow(unused_imports)]
pub use clc::answer_every_request;
#[allow(unused_imports)]
pub use cluster::run as run_clusters;
#[allow(unused_imports)]
pub use tcgen05::check_mma_order;
pub use tcgen05_scaled::check_copy_order;

/// Where a CTA stopped ([`warps::run_cta`]).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Stop {
    Exited,
    /// Every live thread waits at a cluster barrier.
    ClusterWait,
    /// No thread can move, and some wait (on a barrier another CTA's copy or arrival may complete, or a
    /// deadlock).
    Blocked,
}

/// Executes an instruction other than control flow and barriers (`warps` runs those) for the `active` threads of
/// a group, in lockstep: every result from the state before the instruction.
fn step(c: &mut Cta, g: &mut Global, ins: &Ins, active: &[bool]) -> Result<(), String> {
    let n = c.regs.len();
    let at = |e: String| format!("line {}: `{}`: {e}", ins.line, ins.op);
    match ins.op.split('.').next().unwrap() {
        "clusterlaunchcontrol" | "mov" if clc::handles(&ins.op) => return clc::step(c, ins, active).map_err(at),
        "tcgen05" if tcgen05::handles(&ins.op) => return tcgen05::exec(c, ins, active).map_err(at),
        "mbarrier" if cluster::handles_arrive(&ins.op) => return cluster::arrive(c, ins, active).map_err(at),
        "mbarrier" | "fence" if mbarrier::handles(&ins.op) => return mbarrier::step(c, ins, active).map_err(at),
        "fence" if ins.op.starts_with("fence.proxy.async") => {
            c.proxy_fence(warps::Mask::of(active).warps());
            return Ok(());
        }
        "mma" => {
            let warps = warps::Mask::of(active);
            if (0..n).any(|t| warps.warps() >> (t / 32) & 1 == 1 && !active[t]) {
                return Err(format!("line {}: predicated mma.sync", ins.line));
            }
            return mma::mma_sync(c, &ins.op, &ins.args, active).map_err(|e| format!("line {}: {e}", ins.line));
        }
        "stmatrix" => {
            return matrix::stmatrix(c, &ins.op, &ins.args, active).map_err(|e| format!("line {}: {e}", ins.line));
        }
        "ldmatrix" => {
            return matrix::ldmatrix(c, &ins.op, &ins.args, active).map_err(|e| format!("line {}: {e}", ins.line));
        }
        "wgmma" => {
            if ins.op.starts_with("wgmma.mma_async") {
                let groups = warps::Mask::of(active).warps();
                if (0..n).any(|t| groups >> (t / 128 * 4) & 0xf != 0 && !active[t]) {
                    return Err(format!("line {}: predicated wgmma", ins.line));
                }
                wgmma::mma_async(c, &ins.op, &ins.args, active).map_err(|e| format!("line {}: {e}", ins.line))?;
            }
            return Ok(());
        }
        // Copies land as they are issued (the earliest the hardware may land them), so commit and wait
        // groups order nothing here: a missing wait is the interpreter's to catch, not the simulator's.
        "cp" if ins.op.starts_with("cp.async.commit_group")
            || ins.op.starts_with("cp.async.wait_group")
            || ins.op.starts_with("cp.async.bulk.commit_group")
            || ins.op.starts_with("cp.async.bulk.wait_group") =>
        {
            return Ok(());
        }
        "cp" if ins.op.starts_with("cp.async.bulk.tensor") => {
            let gather = ins.op.contains(".tile::gather4") || ins.op.contains(".tile::scatter4");
            let im2col = ins.op.contains(".im2col");
            for t in (0..n).filter(|&t| active[t]) {
                if gather {
                    tma_gather::copy(c, g, ins, t)
                } else if im2col {
                    tma_im2col::copy(c, g, ins, t)
                } else {
                    tma::copy(c, g, ins, t)
                }
                .map_err(at)?;
            }
            return Ok(());
        }
        "elect" => {
            // `elect.sync %r|%p, membermask`: the lowest active lane of each warp (in the mask) leads.
            let Opnd::Pair(d, p) = ins.args[0] else { return Err(format!("line {}: bad elect.sync", ins.line)) };
            if !matches!(ins.args.get(1), Some(Opnd::Imm(m)) if *m as u32 == u32::MAX) {
                return Err(format!("line {}: elect.sync with a partial member mask is not simulated", ins.line));
            }
            for t in 0..n {
                let warp = t / 32;
                let leader = (warp * 32..(warp * 32 + 32).min(n)).find(|&u| active[u]);
                if active[t] {
                    let l = leader.expect("an active thread") as u64 % 32;
                    c.regs[t][d] = l;
                    c.regs[t][p] = (Some(t) == leader) as u64;
                }
            }
            return Ok(());
        }
        "activemask" => {
            // The lanes of the thread's warp executing it (its warp is converged: `warps` checks).
            let d = ins.args[0].reg().map_err(at)?;
            for t in (0..n).filter(|&t| active[t]) {
                let w = t / 32 * 32;
                c.regs[t][d] = (0..32).filter(|l| w + l < n && active[w + l]).fold(0, |m, l| m | 1 << l);
            }
            return Ok(());
        }
        _ => {}
    }
    let mut writes: Vec<(usize, usize, u64)> = Vec::new();
    for (t, _) in active.iter().enumerate().filter(|(_, a)| **a) {
        exec(c, g, ins, t, &mut writes).map_err(at)?;
    }
    for (t, r, v) in writes {
        c.regs[t][r] = v;
    }
    Ok(())
}

/// Executes `ins` for thread `t`, recording register writes.
fn exec(c: &mut Cta, g: &mut Global, ins: &Ins, t: usize, w: &mut Vec<(usize, usize, u64)>) -> Result<(), String> {
    let parts: Vec<&str> = ins.op.split('.').collect();
    let ty = *parts.last().unwrap();
    let bits = suffix_bits(ty);
    let a = &ins.args;
    let v = |i: usize| c.val(t, &a[i]);
    let float = scalar(ty).is_some();
    let mut put = |o: &Opnd, x: u64| -> Result<(), String> {
        w.push((t, o.reg()?, x));
        Ok(())
    };
    match parts[0] {
        "mov" => match (&a[0], &a[1]) {
            (Opnd::Vec(parts_d), src) => {
                let x = c.val(t, src)?;
                let each = bits / parts_d.len() as u32;
                for (i, d) in parts_d.iter().enumerate() {
                    if let Some(d) = d {
                        w.push((t, *d, (x >> (each * i as u32)) & mask(each)));
                    }
                }
            }
            (d, Opnd::Vec(srcs)) => {
                let each = bits / srcs.len() as u32;
                let mut x = 0;
                for (i, s) in srcs.iter().enumerate() {
                    x |= (c.regs[t][s.ok_or("`_` in a pack")?] & mask(each)) << (each * i as u32);
                }
                put(d, x)?;
            }
            (d, s) => put(d, c.val(t, s)? & mask(bits.max(1)))?,
        },
        "ld" if parts[1] == "param" => {
            let Opnd::Mem(b, _) = &a[1] else { return Err("bad param".into()) };
            let Opnd::Sym(name) = &**b else { return Err("bad param".into()) };
            put(&a[0], c.params[name])?
        }
        "cvta" => put(&a[0], v(1)?)?,
        "mapa" => put(&a[0], cluster_addr::mapa(c, v(1)?, v(2)?)?)?,
        "ld" if parts[1] == "shared::cluster" => {
            let eb = (bits / 8) as usize;
            let bytes = cluster::read(c, t, c.addr(t, &a[1])?, eb)?;
            let mut b8 = [0u8; 8];
            b8[..eb].copy_from_slice(&bytes);
            put(&a[0], u64::from_le_bytes(b8))?
        }
        "atom" | "red" => {
            // `atom{.sem}{.scope}.space.op.type d, [a], b` (returns the old value) and `red...` (does not).
            let (mem_op, first) = if parts[0] == "atom" { (&a[1], 2) } else { (&a[0], 1) };
            let addr = c.addr(t, mem_op)?;
            // `.shared` and `.shared::cta` are the CTA's own shared memory.
            let shared = parts.iter().any(|&p| p == "shared" || p == "shared::cta");
            // The operation is the last part before the type, but for `.noftz` (16-bit float adds).
            let op = parts[..parts.len() - 1].iter().rev().find(|&&p| p != "noftz").copied().unwrap_or_default();
            let eb = (bits / 8) as usize;
            let b = v(first)?;
            // `cas`'s value to swap in (its second source).
            let swap = if op == "cas" { v(first + 1)? } else { 0 };
            let bytes: &mut [u8] = if shared { c.smem_atomic(t, addr, eb)? } else { g.slice(addr, eb)? };
            let mut b8 = [0u8; 8];
            b8[..eb].copy_from_slice(bytes);
            let old = u64::from_le_bytes(b8);
            let signed = ty.starts_with('s');
            let new = match op {
                "add" if float => from_f(to_f(old, ty) + to_f(b, ty), ty),
                "add" => old.wrapping_add(b),
                "and" => old & b,
                "or" => old | b,
                "xor" => old ^ b,
                "exch" => b,
                // `atom.cas.bN d, [a], b, c`: c where the old value is b.
                "cas" if old & mask(bits) == b & mask(bits) => swap,
                "cas" => old,
                "min" | "max" => {
                    let (x, y) = if signed {
                        (sext(old, bits) as i128, sext(b, bits) as i128)
                    } else {
                        (old as i128, b as i128)
                    };
                    if (op == "min") == (y < x) { b } else { old }
                }
                other => return Err(format!("atomic `{other}` is not simulated")),
            } & mask(bits);
            bytes.copy_from_slice(&new.to_le_bytes()[..eb]);
            if parts[0] == "atom" {
                put(&a[0], old)?;
            }
        }
        "cp" if parts[1] == "async" => {
            // `cp.async.{ca,cg}.shared.global [dst], [src], size[, src_size]`: src_size bytes, zeros after.
            let (dst, src) = (c.addr(t, &a[0])?, c.addr(t, &a[1])?);
            let size = v(2)? as usize;
            let from = if a.len() > 3 { v(3)? as usize } else { size };
            let mut data = vec![0u8; size];
            if from > 0 {
                data[..from].copy_from_slice(g.slice(src, from)?);
            }
            // A landed copy is ordered for the threads by its wait and a barrier (the race check below), and for
            // the tensor cores the same way: no proxy fence (codegen/src/smem/hazards.rs says why).
            c.smem(t, dst, size, Some(&data))?.copy_from_slice(&data);
        }
        "ld" | "st" => {
            let shared = parts[1] == "shared";
            let vecn: usize = parts.iter().find_map(|p| p.strip_prefix('v').and_then(|n| n.parse().ok())).unwrap_or(1);
            let eb = (bits / 8) as usize;
            let (mem_op, regs_op) = if parts[0] == "ld" { (&a[1], &a[0]) } else { (&a[0], &a[1]) };
            let addr = c.addr(t, mem_op)?;
            let regs: Vec<Option<usize>> = match regs_op {
                Opnd::Vec(v) => v.clone(),
                Opnd::Reg(r) => vec![Some(*r)],
                Opnd::Imm(_) => vec![None],
                other => return Err(format!("bad data operand {other:?}")),
            };
            // Values to store, read before borrowing memory.
            let vals: Vec<u64> = regs
                .iter()
                .map(|r| match (r, regs_op) {
                    (Some(r), _) => c.regs[t][*r],
                    (None, Opnd::Imm(x)) => *x,
                    _ => 0,
                })
                .collect();
            let stored: Vec<u8> = vals.iter().flat_map(|v| v.to_le_bytes()[..eb].to_vec()).collect();
            let write = (parts[0] == "st").then_some(&stored[..]);
            if shared && write.is_some() {
                c.mark_generic(t, addr, eb * vecn);
            }
            let bytes: &mut [u8] = if shared { c.smem(t, addr, eb * vecn, write)? } else { g.slice(addr, eb * vecn)? };
            for (i, r) in regs.iter().enumerate() {
                let chunk = &mut bytes[i * eb..(i + 1) * eb];
                if parts[0] == "ld" {
                    let mut b8 = [0u8; 8];
                    b8[..eb].copy_from_slice(chunk);
                    w.push((t, r.ok_or("`_` in a load")?, u64::from_le_bytes(b8)));
                } else {
                    chunk.copy_from_slice(&vals[i].to_le_bytes()[..eb]);
                }
            }
        }
        "add" | "sub" | "mul" | "min" | "max" if ty.strip_suffix("x2").is_some_and(|h| scalar(h).is_some()) => {
            // Packed halves (`add.rn.f16x2`...): each 16-bit lane on its own, rounded once.
            let half = &ty[..ty.len() - 2];
            let (x, y) = (v(1)?, v(2)?);
            let mut r = 0;
            for shift in [0, 16] {
                let (p, q) = (to_f(x >> shift & 0xffff, half), to_f(y >> shift & 0xffff, half));
                let z = match parts[0] {
                    "add" => p + q,
                    "sub" => p - q,
                    "mul" => p * q,
                    "min" => p.min(q),
                    _ => p.max(q),
                };
                r |= from_f(z, half) << shift;
            }
            put(&a[0], r)?
        }
        "add" | "sub" | "mul" | "div" | "sqrt"
            if float
                && parts.iter().any(|p| matches!(*p, "rz" | "rm" | "rp") || (*p == "rn" && parts.contains(&"ftz"))) =>
        {
            // Directed rounding (`add.rz.f32`, `sqrt.rp.f64`, `div.rn.ftz.f32`...), by the interpreter's exact
            // rounding; `.ftz` flushes f32 subnormal operands and results.
            use tessel_math::rounding::{Arith, Dir, Format, directed, flush_f32};
            let dir = if parts.contains(&"rz") {
                Dir::Zero
            } else if parts.contains(&"rm") {
                Dir::Down
            } else if parts.contains(&"rp") {
                Dir::Up
            } else {
                Dir::Nearest
            };
            let ftz = parts.contains(&"ftz") && ty == "f32";
            let flush = |v: f64| if ftz { flush_f32(v) } else { v };
            let t = if ty == "f64" { Format::F64 } else { Format::F32 };
            let x = flush(to_f(v(1)?, ty));
            let (op, y) = match parts[0] {
                "add" => (Arith::Add, flush(to_f(v(2)?, ty))),
                "sub" => (Arith::Sub, flush(to_f(v(2)?, ty))),
                "mul" => (Arith::Mul, flush(to_f(v(2)?, ty))),
                "div" => (Arith::Div, flush(to_f(v(2)?, ty))),
                _ => (Arith::Sqrt, 0.0),
            };
            put(&a[0], from_f(flush(directed(op, dir, t, x, y)), ty))?
        }
        "add" | "sub" | "mul" | "div" | "rem" | "min" | "max" if float => {
            let (x, y) = (to_f(v(1)?, ty), to_f(v(2)?, ty));
            let r = match parts[0] {
                "add" => x + y,
                "sub" => x - y,
                "mul" => x * y,
                "div" => x / y,
                // PTX orders −0 below +0.
                "min" if x == 0.0 && y == 0.0 => {
                    if x.is_sign_negative() {
                        x
                    } else {
                        y
                    }
                }
                "max" if x == 0.0 && y == 0.0 => {
                    if x.is_sign_negative() {
                        y
                    } else {
                        x
                    }
                }
                "min" => x.min(y),
                "max" => x.max(y),
                _ => return Err("float rem".into()),
            };
            // One rounding to the type (f32 sums of f32 values are exact in f64, then rounded once).
            put(&a[0], from_f(r, ty))?
        }
        "prmt" if parts.len() == 2 && ty == "b32" => {
            // prmt.b32 d, a, b, c (the default mode): byte i of d is byte (c >> 4i) & 7 of the 8 bytes {b, a}
            // (a's bytes 0-3, b's 4-7); when bit 3 of that nibble is set, the selected byte's sign bit fills it.
            let bytes = (v(2)? << 32 | v(1)? & 0xffff_ffff).to_le_bytes();
            let c = v(3)?;
            let r = (0..4).fold(0u64, |r, i| {
                let sel = (c >> (4 * i)) & 0xf;
                let byte = bytes[(sel & 7) as usize];
                let byte = if sel & 8 != 0 { if byte & 0x80 != 0 { 0xff } else { 0 } } else { byte };
                r | (byte as u64) << (8 * i)
            });
            put(&a[0], r)?
        }
        "add" | "sub" | "mul" | "div" | "rem" | "min" | "max" | "and" | "or" | "xor" | "shl" | "shr" => {
            if ty == "pred" {
                let (x, y) = (v(1)?, v(2)?);
                let r = match parts[0] {
                    "and" => x & y,
                    "or" => x | y,
                    "xor" => x ^ y,
                    _ => return Err("pred op".into()),
                };
                return put(&a[0], r);
            }
            let (x, y) = (int_val(v(1)?, ty), int_val(v(2)?, ty));
            let wide = parts.get(1) == Some(&"wide");
            let hi = parts.get(1) == Some(&"hi");
            let r: i128 = match parts[0] {
                "add" => x + y,
                "sub" => x - y,
                // Wrapping: u64 operands multiply to up to 2^128 (the low 128 bits are what matter).
                "mul" if hi => x.wrapping_mul(y) >> bits,
                "mul" => x.wrapping_mul(y),
                "div" => {
                    if y == 0 {
                        -1
                    } else {
                        x / y
                    }
                }
                // By zero the hardware gives all ones, for the remainder too (measured through Triton on an
                // H100: i32 `0 % 0` is -1).
                "rem" => {
                    if y == 0 {
                        -1
                    } else {
                        x % y
                    }
                }
                "min" => x.min(y),
                "max" => x.max(y),
                "and" => x & y,
                "or" => x | y,
                "xor" => x ^ y,
                "shl" => {
                    let s = v(2)? as u32;
                    if s >= bits { 0 } else { x << s }
                }
                _ => {
                    let s = (v(2)? as u32).min(bits);
                    if ty.starts_with('s') { x >> s.min(bits - 1) } else { (x & mask(bits) as i128) >> s.min(127) }
                }
            };
            put(&a[0], r as u64 & mask(if wide { 2 * bits } else { bits }))?
        }
        "mad" => {
            let (x, y, z) = (int_val(v(1)?, ty), int_val(v(2)?, ty), int_val(v(3)?, ty));
            let wide = parts.get(1) == Some(&"wide");
            put(&a[0], (x * y + z) as u64 & mask(if wide { 2 * bits } else { bits }))?
        }
        "fma" => {
            // `.ftz` reads f32 subnormal operands as ±0 and flushes a subnormal result; `.rm`/`.rp`/`.rz` round
            // exactly in that direction.
            use tessel_math::rounding::{Dir, Format, flush_f32, fma};
            let flush = |v: f64| if parts.contains(&"ftz") && ty == "f32" { flush_f32(v) } else { v };
            let (x, y, z) = (flush(to_f(v(1)?, ty)), flush(to_f(v(2)?, ty)), flush(to_f(v(3)?, ty)));
            let dir = match parts.get(1) {
                Some(&"rm") => Dir::Down,
                Some(&"rp") => Dir::Up,
                Some(&"rz") => Dir::Zero,
                _ => Dir::Nearest,
            };
            let t = if ty == "f32" { Format::F32 } else { Format::F64 };
            put(&a[0], from_f(flush(fma(dir, t, x, y, z)), ty))?
        }
        "clz" => {
            // The leading zero bits of the b32/b64 operand (its width for 0), into a 32-bit register.
            let x = v(1)? & mask(bits);
            put(&a[0], (x.leading_zeros() - (64 - bits)) as u64)?
        }
        "neg" | "abs" | "not" | "ex2" | "lg2" | "sqrt" | "rsqrt" | "sin" | "cos" | "rcp" => {
            let x = v(1)?;
            let r = if float {
                let ftz = parts.contains(&"ftz") && ty == "f32";
                let flush = |v: f64| if ftz { tessel_math::rounding::flush_f32(v) } else { v };
                let f = flush(to_f(x, ty));
                let r = match parts[0] {
                    "neg" => -f,
                    "abs" => f.abs(),
                    "ex2" => f.exp2(),
                    "lg2" => f.log2(),
                    "sqrt" => f.sqrt(),
                    "rsqrt" => 1.0 / f.sqrt(),
                    "sin" => f.sin(),
                    "cos" => f.cos(),
                    _ => 1.0 / f,
                };
                from_f(flush(r), ty)
            } else {
                match parts[0] {
                    "neg" => (-int_val(x, ty)) as u64 & mask(bits),
                    "abs" => int_val(x, ty).unsigned_abs() as u64 & mask(bits),
                    "not" if ty == "pred" => (x == 0) as u64,
                    _ => !x & mask(bits),
                }
            };
            put(&a[0], r)?
        }
        "bfe" => {
            let (x, pos, len) = (v(1)?, v(2)? as u32, v(3)? as u32);
            let f = (x >> pos.min(63)) & mask(len);
            let r = if ty == "s32" && len > 0 { sext(f, len) as u64 } else { f };
            put(&a[0], r & mask(bits))?
        }
        "bfi" => {
            // Bits pos..pos+len of b replaced by the low len bits of a (PTX: both clamped to the width).
            let (x, y, pos, len) = (v(1)?, v(2)?, v(3)? as u32 & 0xff, v(4)? as u32 & 0xff);
            let field = mask(len.min(bits)).checked_shl(pos).unwrap_or(0);
            put(&a[0], ((y & !field) | (x.checked_shl(pos).unwrap_or(0) & field)) & mask(bits))?
        }
        "selp" => put(&a[0], if v(3)? != 0 { v(1)? } else { v(2)? })?,
        "setp" => {
            let cmp = parts[1];
            let r = if float {
                let (x, y) = (to_f(v(1)?, ty), to_f(v(2)?, ty));
                let unordered = x.is_nan() || y.is_nan();
                match cmp {
                    "eq" => x == y,
                    "ne" => !unordered && x != y,
                    "neu" => unordered || x != y,
                    "nan" => unordered,
                    "num" => !unordered,
                    "lt" => x < y,
                    "le" => x <= y,
                    "gt" => x > y,
                    "ge" => x >= y,
                    other => return Err(format!("setp.{other}")),
                }
            } else {
                let (x, y) = (int_val(v(1)?, ty), int_val(v(2)?, ty));
                match cmp {
                    "eq" => x == y,
                    "ne" => x != y,
                    "lt" => x < y,
                    "le" => x <= y,
                    "gt" => x > y,
                    "ge" => x >= y,
                    other => return Err(format!("setp.{other}")),
                }
            };
            // `setp.cmp.bop.type p, a, b, c`: the comparison combined with predicate c.
            let r = match (parts.get(2).copied(), a.get(3)) {
                (Some("and"), Some(_)) => r && v(3)? != 0,
                (Some("or"), Some(_)) => r || v(3)? != 0,
                (Some("xor"), Some(_)) => r ^ (v(3)? != 0),
                (_, Some(_)) => return Err(format!("`{}`: a fourth operand without .and/.or/.xor", ins.op)),
                _ => r,
            };
            put(&a[0], r as u64)?
        }
        "cvt" => {
            let (dt, st) = (parts[parts.len() - 2], parts[parts.len() - 1]);
            let x = v(1)?;
            let fp8 = |t: &str| match t {
                "e4m3x2" => Some(ScalarType::F8E4M3),
                "e5m2x2" => Some(ScalarType::F8E5M2),
                _ => None,
            };
            let r = if let (Some(half), Some(f8)) = (dt.strip_suffix("x2"), fp8(st)) {
                // cvt.rn.f16x2.e4m3x2 d, a: the low byte of a into the lower half, the high byte into the upper
                // (every fp8 value is exact in f16).
                let each = |b: u64| from_f(from_bits(b & 0xff, f8).as_f64(), half);
                (each(x >> 8) << 16) | each(x)
            } else if let (Some(f8), "f32") = (fp8(dt), st) {
                // cvt.rn.satfinite.e5m2x2.f32 d, a, b: a into the upper byte, b into the lower, rounded to
                // nearest even; .satfinite clamps a finite or infinite value past the largest finite one to it
                // (NaN stays NaN).
                let max = from_bits(if f8 == ScalarType::F8E4M3 { 0x7e } else { 0x7b }, f8).as_f64();
                let each = |b: u64| {
                    let f = to_f(b, st);
                    let f = if f.is_nan() || !parts.contains(&"satfinite") { f } else { f.clamp(-max, max) };
                    to_bits(Val::Float(f), f8)
                };
                (each(x) << 8) | each(v(2)?)
            } else if let Some(half) = dt.strip_suffix("x2") {
                // cvt.rn.f16x2.f32 d, a, b: a rounded into the upper half, b into the lower.
                (from_f(to_f(x, st), half) << 16) | from_f(to_f(v(2)?, st), half)
            } else if dt == "tf32" {
                let f = f32::from_bits(x as u32);
                if f.is_finite() { (x as u32).wrapping_add(1 << 12) as u64 & 0xffff_e000 } else { x }
            } else {
                match (scalar(dt).is_some(), scalar(st).is_some()) {
                    (true, true) => {
                        // .ftz flushes a subnormal f32 source to ±0; .rmi/.rpi/.rni/.rzi round to an integer.
                        let mut f = to_f(x, st);
                        if parts.contains(&"ftz") && st == "f32" && (f as f32).is_subnormal() {
                            f = 0.0f64.copysign(f);
                        }
                        let f = match parts[1] {
                            "rmi" => f.floor(),
                            "rpi" => f.ceil(),
                            "rni" => f.round_ties_even(),
                            "rzi" => f.trunc(),
                            _ => f,
                        };
                        // .ftz flushes a subnormal f32 result too.
                        let f = if parts.contains(&"ftz") && dt == "f32" {
                            tessel_math::rounding::flush_f32(f as f32 as f64)
                        } else {
                            f
                        };
                        from_f(f, dt)
                    }
                    (true, false) => from_f(int_val(x, st) as f64, dt),
                    (false, true) => {
                        // Rounded by the mode (`.rni`...; truncated by default), saturated to the integer's
                        // range; NaN as the GPU converts it (`nan_to_int`).
                        let f = to_f(x, st);
                        let f = match parts[1] {
                            "rmi" => f.floor(),
                            "rpi" => f.ceil(),
                            "rni" => f.round_ties_even(),
                            _ => f.trunc(),
                        };
                        let n = suffix_bits(dt);
                        let (lo, hi) = if dt.starts_with('s') {
                            (-(1i128 << (n - 1)), (1i128 << (n - 1)) - 1)
                        } else {
                            (0, (1i128 << n) - 1)
                        };
                        let r = if f.is_nan() {
                            let from = if st == "f64" { ScalarType::F64 } else { ScalarType::F32 };
                            let to = match (dt.starts_with('s'), n) {
                                (true, 64) => ScalarType::I64,
                                (false, 64) => ScalarType::U64,
                                (true, _) => ScalarType::I32,
                                (false, _) => ScalarType::U32,
                            };
                            tessel_tile::eval::value::nan_to_int(from, to) as i128
                        } else {
                            (f.clamp(lo as f64, hi as f64) as i128).clamp(lo, hi)
                        };
                        r as u64 & mask(n)
                    }
                    (false, false) => int_val(x, st) as u64 & mask(suffix_bits(dt)),
                }
            };
            put(&a[0], r)?
        }
        "shfl" => {
            let (mode, lane) = (parts[2], t % 32);
            let (b, cc) = (v(2)? as usize, v(3)? as usize);
            let (clamp, seg) = (cc & 31, (cc >> 8) & 31);
            let (min_lane, max_lane) = (lane & seg, (lane & seg) | (clamp & !seg));
            let (j, ok) = match mode {
                "up" => (lane.wrapping_sub(b), lane >= b && lane - b >= max_lane),
                "down" => (lane + b, lane + b <= max_lane),
                "bfly" => (lane ^ b, (lane ^ b) <= max_lane),
                _ => (min_lane | (b & !seg & 31), (min_lane | (b & !seg & 31)) <= max_lane),
            };
            let warp = t - lane;
            let src = if ok { warp + j } else { t };
            let r = c.val(src, &a[1])?;
            put(&a[0], r)?
        }
        "vote" => {
            // vote.sync.{any,all}.pred d, p, membermask: over the lanes of the mask in this thread's warp.
            let (warp, m) = (t - t % 32, c.val(t, &a[2])?);
            let lanes: Vec<usize> = (0..32).filter(|l| m >> l & 1 == 1 && warp + l < c.regs.len()).collect();
            let preds = lanes.iter().map(|l| c.val(warp + l, &a[1]).map(|p| p != 0)).collect::<Result<Vec<_>, _>>()?;
            let r = match parts[1] {
                "sync" if parts[2] == "any" => preds.iter().any(|&p| p),
                "sync" if parts[2] == "all" => preds.iter().all(|&p| p),
                _ => return Err(format!("{} is not simulated", ins.op)),
            };
            put(&a[0], r as u64)?
        }
        other => return Err(format!("instruction `{other}` is not simulated")),
    }
    Ok(())
}
