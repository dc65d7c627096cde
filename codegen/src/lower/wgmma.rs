//! `warpgroup_dot` on sm_90a: `wgmma.mma_async` with both operands read from shared memory through matrix
//! descriptors, accumulating in registers.
//!
//! The accumulator's layout must be an MMA v3 layout whose instruction tile is `64 x N` per warpgroup: register
//! `4j + 2h + c` of lane `l` (g = l/4, q = l%4) in warp `w` of the warpgroup holds element
//! `(16w + g + 8h, 8j + 2q + c)` of the tile (PTX ISA, wgmma D fragment; ptx.md §5.3). Rather than trusting the
//! layout's spelling, the lowering reads the tiles off its linear layout (the registers at lane 0 of warp 0
//! give each tile's origin and fragment index) and then checks every register of every thread against the
//! fragment formula, so a layout the instruction cannot produce is an error, not wrong code. The warpgroup's
//! own offset (warp bits 2 and up) is a per-thread part of the operand addresses.
//!
//! Each tile gets `K / k` instructions (k = 32 bytes of the operand type), issued between `wgmma.fence` and
//! one `commit_group`, then `wait_group 0`: the result is complete when the op ends (the pipeliner will make
//! the wait asynchronous). The accumulator is copied to fresh registers first, which the instructions then
//! update in place.

use std::collections::BTreeMap;

use tessel_layouts::LinearLayout;
use tessel_tile::ir::OpData;
use tessel_tile::ops::InputPrecision;
use tessel_tile::types::ScalarType;

use super::Lower;
use super::coords::{bases, layout_of};
use super::wgmma_desc::{self, MatrixDesc, Offsets, Operand};
use crate::CompileError;
use crate::ptx::{self, Reg, RegClass, instr, vector};

use ScalarType::*;

/// The PTX type of a wgmma operand (`.f16`, `.tf32`, `.e4m3`, `.s8`...).
fn operand_type(t: ScalarType, precision: InputPrecision) -> Result<&'static str, CompileError> {
    Ok(match t {
        F16 => "f16",
        BF16 => "bf16",
        F32 if precision == InputPrecision::Tf32 => "tf32",
        F8E4M3 => "e4m3",
        F8E5M2 => "e5m2",
        I8 => "s8",
        U8 => "u8",
        other => {
            return Err(CompileError::new(format!(
                "wgmma has no form for {other} operands with input precision {}",
                precision.word()
            )));
        }
    })
}

/// One instruction tile of the accumulator: its origin and its registers in fragment order.
struct Tile {
    origin: (u32, u32),
    regs: Vec<usize>,
}

/// Reads the instruction tiles (`64 x n` each) off the accumulator layout and checks the fragment mapping for
/// every register, lane and warp.
fn tiles(lc: &LinearLayout, n: u32, num_warps: u32) -> Result<Vec<Tile>, CompileError> {
    let coord = |r: u32, lane: u32, warp: u32| {
        let c = lc.apply_named(&[("register", r), ("lane", lane), ("warp", warp)]);
        (c[0].1, c[1].1)
    };
    let bad = |what: String| CompileError::new(format!("the accumulator layout is not a wgmma fragment: {what}"));
    let mut by_origin: BTreeMap<(u32, u32), Vec<Option<usize>>> = BTreeMap::new();
    let n_regs = lc.in_dim_size("register");
    for r in 0..n_regs {
        let (row, col) = coord(r, 0, 0);
        let (h, j, c) = ((row % 16) / 8, (col % n) / 8, col % 2);
        if row % 8 != 0 || col % 8 > 1 {
            return Err(bad(format!("register {r} of thread 0 holds ({row}, {col})")));
        }
        let origin = (row - row % 16, col - col % n);
        let frag = by_origin.entry(origin).or_insert_with(|| vec![None; (n / 2) as usize]);
        let i = (4 * j + 2 * h + c) as usize;
        if frag[i].replace(r as usize).is_some() {
            return Err(bad(format!("two registers hold fragment element {i} of the tile at {origin:?}")));
        }
    }
    // Every thread: register r holds the fragment element of its tile, shifted by its warpgroup's offset.
    let wg_offset = |warp: u32| coord(0, 0, warp & !3);
    let mut out = Vec::new();
    for (origin, frag) in by_origin {
        let regs: Vec<usize> = frag
            .iter()
            .map(|x| x.ok_or_else(|| bad(format!("the tile at {origin:?} is missing registers"))))
            .collect::<Result<_, _>>()?;
        for (i, &r) in regs.iter().enumerate() {
            let (j, h, c) = (i as u32 / 4, (i as u32 / 2) % 2, i as u32 % 2);
            for warp in 0..num_warps {
                let (wr, wc) = wg_offset(warp);
                for lane in 0..32 {
                    let (g, q) = (lane / 4, lane % 4);
                    let want = ((origin.0 + 16 * (warp % 4) + g + 8 * h) ^ wr, (origin.1 + 8 * j + 2 * q + c) ^ wc);
                    let got = coord(r as u32, lane, warp);
                    if got != want {
                        return Err(bad(format!(
                            "register {r} of lane {lane} in warp {warp} holds {got:?}, the fragment needs {want:?}"
                        )));
                    }
                }
            }
        }
        out.push(Tile { origin, regs });
    }
    Ok(out)
}

/// A warpgroup's offset along `dim` of the accumulator, per warp bit.
fn warpgroup_bits(lc: &LinearLayout, dim: usize) -> Vec<u32> {
    bases(lc, "warp").iter().enumerate().map(|(i, b)| if i < 2 { 0 } else { b[dim] }).collect()
}

/// One operand: its offsets, descriptor, and the descriptor of the warpgroup's first element (computed once,
/// at the kernel entry); `stride_free`: every tile origin's offset shares no bit with any warpgroup's, so a
/// tile's descriptor is the first one plus a constant.
struct OperandDesc {
    base: Reg,
    offsets: Offsets,
    desc: MatrixDesc,
    elem_bytes: u32,
    /// Per-thread element offset of the warpgroup's first row (None: warpgroup 0 only).
    thread: Option<Reg>,
    first: Reg,
    thread_bits: u32,
}

impl OperandDesc {
    fn new(l: &mut Lower, base: Reg, offsets: Offsets, desc: MatrixDesc, elem_bytes: u32, warp_vals: Vec<u32>) -> Self {
        let thread_bits = warp_vals.iter().fold(0, |a, &b| a | b);
        let thread = l.thread_xor(vec![0; 5], warp_vals);
        // At the entry when the buffer's address is known there; a ring buffer's only where it is indexed.
        let hoist = l.entry_regs.contains(&base);
        l.b.set_prologue(hoist);
        let first = Self::encode(l, thread, 0, elem_bytes, base, &desc);
        l.b.set_prologue(false);
        OperandDesc { base, offsets, desc, elem_bytes, thread, first, thread_bits }
    }

    /// The descriptor of the element at offset `thread ^ c`.
    fn encode(l: &mut Lower, thread: Option<Reg>, c: u32, eb: u32, base: Reg, desc: &MatrixDesc) -> Reg {
        let off = l.xor_const(thread, c, 0);
        let (lo, hi, d) = (l.b.reg(RegClass::B32), l.b.reg(RegClass::B32), l.b.reg(RegClass::B64));
        l.b.op("mad.lo.u32", lo, (off, eb, base));
        l.b.op("bfe.u32", lo, (lo, 4, 14));
        l.b.op("or.b32", lo, (lo, desc.lbo_field()));
        l.b.op("mov.b32", hi, desc.hi_word());
        l.b.op("mov.b64", d, vector(&[lo, hi]));
        d
    }

    /// The 64-bit descriptor of the tile starting at (row, k) of the warpgroup: the first descriptor advanced by
    /// the tile's byte offset (the start-address field cannot carry: shared addresses are below 256 KiB), or,
    /// when the offsets overlap the warpgroup's bits, encoded from scratch.
    fn at(&self, l: &mut Lower, op: Operand, row: u32, k: u32) -> Reg {
        let c = self.offsets.of(match op {
            Operand::A => [row, k],
            Operand::B => [k, row],
        });
        if c == 0 {
            return self.first;
        }
        if c & self.thread_bits != 0 {
            return Self::encode(l, self.thread, c, self.elem_bytes, self.base, &self.desc);
        }
        let d = l.b.reg(RegClass::B64);
        l.b.op("add.s64", d, (self.first, (c * self.elem_bytes) >> 4));
        d
    }
}

pub(crate) fn warpgroup_dot(
    l: &mut Lower,
    data: &OpData,
    precision: InputPrecision,
    is_async: bool,
) -> Result<(), CompileError> {
    if l.arch != tessel_tile::Target::Sm90a {
        return Err(CompileError::new(format!("warpgroup_dot (wgmma) needs sm_90a, the kernel targets {}", l.arch)));
    }
    let f = l.f;
    let [a, b, acc] = [data.operands[0], data.operands[1], data.operands[2]];
    let v = data.results[0];
    // A from shared memory (a memdesc), or from registers in the dot-operand layout of the accumulator.
    let (a_shape, a_elem, a_layout) = match f.ty(a).memdesc() {
        Some((shape, elem, layout)) => (shape.to_vec(), elem, Some(layout)),
        None => (f.ty(a).shape().to_vec(), l.scalar_of(a)?, None),
    };
    let (_, b_elem, b_layout) = f.ty(b).memdesc().expect("verified: B is a memdesc");
    let (lc, acc_t) = (layout_of(f.ty(v))?.clone(), l.scalar_of(v)?);
    let ty_a = operand_type(a_elem, precision)?;
    let ty_b = operand_type(b_elem, precision)?;
    let ty_d = match acc_t {
        F32 if a_elem.is_float() => "f32",
        I32 if !a_elem.is_float() => "s32",
        other => return Err(CompileError::new(format!("wgmma cannot accumulate {a_elem} products into {other}"))),
    };
    let Some(tessel_layouts::AnyLayout::Distributed(tessel_layouts::DistributedLayout::Nvmma(mma))) =
        f.ty(v).layout().and_then(|x| x.spec.clone())
    else {
        return Err(CompileError::new("the accumulator of warpgroup_dot must have an NVMMADistributedLayout"));
    };
    let (n, k_instr) = (mma.instr_shape[1], mma.instr_shape[2]);
    let eb = a_elem.bits() / 8;
    if k_instr * eb != 32 || a_shape[1] % k_instr != 0 {
        return Err(CompileError::new(format!(
            "instruction K {k_instr} does not match {a_elem} operands (32 bytes per instruction) and K = {}",
            a_shape[1]
        )));
    }
    let tiles = tiles(&lc, n, l.num_warps)?;
    let k_steps = a_shape[1] / k_instr;

    // Descriptors: derived from each buffer's layout and checked at every tile and K step of every warpgroup.
    let wg_row_bits = warpgroup_bits(&lc, 0);
    let wg_col_bits = warpgroup_bits(&lc, 1);
    let wg_origins = |bits: &[u32]| -> Vec<u32> {
        let mut v = vec![0u32];
        for &x in bits.iter().filter(|&&x| x != 0) {
            let more: Vec<u32> = v.iter().map(|y| y ^ x).collect();
            v.extend(more);
        }
        v
    };
    let (wg_rows, wg_cols) = (wg_origins(&wg_row_bits), wg_origins(&wg_col_bits));
    let mut a_origins = Vec::new();
    let mut b_origins = Vec::new();
    for t in &tiles {
        for ks in 0..k_steps {
            a_origins.extend(wg_rows.iter().map(|&w| (t.origin.0 ^ w, ks * k_instr)));
            b_origins.extend(wg_cols.iter().map(|&w| (t.origin.1 ^ w, ks * k_instr)));
        }
    }
    let mk = |l: &mut Lower, mem, layout: &tessel_tile::Layout, op, rows, origins: &[(u32, u32)], bits: &[u32]| {
        let offsets = Offsets::new(&layout.linear)?;
        let desc = wgmma_desc::derive(&offsets, op, eb, rows, k_instr, origins)?;
        // The swizzle XORs address bits: the descriptors assume a base aligned to its repeat (8 rows of the span).
        if let Some(buf) = l.alloc.buffer(mem).filter(|b| b.offset % (8 * desc.swizzle) != 0) {
            return Err(CompileError::new(format!(
                "wgmma operand {mem} lies in a buffer at shared offset {}, not a multiple of the {}-byte swizzle \
                 repeat",
                buf.offset,
                8 * desc.swizzle
            )));
        }
        // The warpgroup's first row, as an element offset of the buffer, per warp bit.
        let warp_vals: Vec<u32> = bits
            .iter()
            .map(|&x| if x == 0 { 0 } else { offsets.of(if op == Operand::A { [x, 0] } else { [0, x] }) })
            .collect();
        let base = l.get(mem)?[0];
        Ok::<_, CompileError>(OperandDesc::new(l, base, offsets, desc, eb, warp_vals))
    };
    let da = match a_layout {
        Some(layout) => Some(mk(l, a, layout, Operand::A, 64, &a_origins, &wg_row_bits)?),
        None => None,
    };
    let db = mk(l, b, b_layout, Operand::B, n, &b_origins, &wg_col_bits)?;
    let trans = |d: &MatrixDesc| if d.mn_major { 1 } else { 0 };
    // After the scale-d immediate 1: the scales of A and B, then the transpose flags of the operands in shared
    // memory.
    let imm: Vec<u32> = match (ty_a, ty_d, &da) {
        ("f16" | "bf16", _, Some(da)) => vec![1, 1, trans(&da.desc), trans(&db.desc)],
        ("f16" | "bf16", _, None) => vec![1, 1, trans(&db.desc)],
        (_, "s32", _) => vec![],
        _ => vec![1, 1],
    };
    // A in registers: its m64k(32 bytes) fragments are the mma.sync A fragments of the warpgroup's four warps,
    // `w` elements to a 32-bit register.
    let w = 32 / a_elem.bits();
    let a_regs = match &da {
        Some(_) => None,
        None => {
            if !matches!(a_elem.bits(), 8 | 16) {
                return Err(CompileError::new(format!(
                    "wgmma takes A in registers for 8- and 16-bit types, not {a_elem}"
                )));
            }
            let la = layout_of(f.ty(a))?.clone();
            let fr = super::mma::Fragment { tile: [16, k_instr], slots: 4 * w as usize, at: super::mma::a_at };
            let (a_tiles, a_warps) = super::mma::tiles(&la, &fr, w, l.num_warps, "operand A")?;
            let c_rows = |wp: u32| lc.apply_named(&[("warp", wp)])[0].1;
            for (wp, &(r, c)) in a_warps.iter().enumerate() {
                if c != 0 || r != c_rows(wp as u32) {
                    return Err(CompileError::new(format!(
                        "operand A's warp {wp} holds rows from {r} (k {c}), the accumulator's from {}: a convert_layout \
                         to DotOperandLayout(0, the accumulator's layout, {w}) is needed",
                        c_rows(wp as u32)
                    )));
                }
            }
            Some((a_tiles, l.get(a)?.to_vec()))
        }
    };

    let class = if ty_d == "f32" { RegClass::F32 } else { RegClass::B32 };
    let d_regs = match l.dot_dest.get(&v).cloned() {
        Some(dest) if is_async && l.can_accumulate_in(acc, &dest, class)? => {
            for (&d, s) in dest.iter().zip(l.get(acc)?.to_vec()) {
                if d != s {
                    l.mov(d, s);
                }
            }
            dest
        }
        _ => l.accumulator_registers(acc, class)?,
    };
    l.b.comment(format!(
        "warpgroup_dot: {} tile(s) of 64x{n} per warpgroup x {k_steps} wgmma.m64n{n}k{k_instr} (A {}, B {})",
        tiles.len(),
        match &da {
            Some(d) if d.desc.mn_major => "MN-major",
            Some(_) => "K-major",
            None => "in registers",
        },
        if db.desc.mn_major { "MN-major" } else { "K-major" },
    ));
    let mut issue = Vec::new();
    for t in &tiles {
        for ks in 0..k_steps {
            let a_operand = match (&da, &a_regs) {
                (Some(da), _) => ptx::Operand::Reg(da.at(l, Operand::A, t.origin.0, ks * k_instr)),
                (None, Some((a_tiles, regs))) => {
                    // Warp 0's 16-row slice of the tile's rows; the other warps hold theirs.
                    let slots = a_tiles.get(&(t.origin.0, ks * k_instr)).ok_or_else(|| {
                        CompileError::new(format!("operand A holds no fragment at {:?}", (t.origin.0, ks * k_instr)))
                    })?;
                    let w = w as usize;
                    let packed: Vec<Reg> = (0..4)
                        .map(|j| {
                            let elems: Vec<Reg> = slots[w * j..w * (j + 1)].iter().map(|&s| regs[s]).collect();
                            super::mma::pack(l, &elems, a_elem)
                        })
                        .collect();
                    ptx::Operand::Vector(packed)
                }
                (None, None) => unreachable!("A is in shared memory or in registers"),
            };
            let desc_b = db.at(l, Operand::B, t.origin.1, ks * k_instr);
            issue.push((t, a_operand, desc_b));
        }
    }
    // `use_acc`: scale-d of each tile's first K step is the predicate (0: the product alone); the later steps
    // accumulate onto it.
    let use_acc = match data.operands.get(3) {
        Some(&u) => Some(l.get(u)?[0]),
        None => None,
    };
    l.b.effect("wgmma.fence.sync.aligned", ());
    for (i, (t, desc_a, desc_b)) in issue.into_iter().enumerate() {
        let acc: Vec<Reg> = t.regs.iter().map(|&r| d_regs[r]).collect();
        let op = format!("wgmma.mma_async.sync.aligned.m64n{n}k{k_instr}.{ty_d}.{ty_a}.{ty_b}");
        let scale_d = match use_acc {
            Some(p) if i as u32 % k_steps == 0 => ptx::Operand::Reg(p),
            _ => ptx::Operand::from(1),
        };
        let ins = instr(op).dst(ptx::Operand::Vector(acc)).srcs((desc_a, desc_b, scale_d));
        l.b.emit(imm.iter().fold(ins, |i, &x| i.src(x)));
    }
    l.b.effect("wgmma.commit_group.sync.aligned", ());
    if is_async {
        // Complete at a warpgroup_dot_wait; until then the operands' buffers are in use.
        let reads = l.tracked_spans(l.cur_op);
        l.in_flight.dot_issued(v, reads);
    } else {
        l.b.effect("wgmma.wait_group.sync.aligned", 0);
    }
    l.vals.insert(v, d_regs);
    Ok(())
}
