//! `dot` on sm_80's tensor cores: `mma.sync.aligned.m16n8kK` with operands and accumulator in registers.
//!
//! Auto mode gives the accumulator an MMA v2 layout (`NVMMADistributedLayout([2, 0], warps, [16, 8])`) and the
//! operands `DotOperandLayout`s of it, so each warp holds whole instruction fragments. The fragment formulas are
//! those of the PTX ISA (ptx.md §6; g = lane / 4, q = lane % 4, `w` = 32 / bits elements per 32-bit register,
//! K = 8w per instruction):
//! - C/D register `2h + c`: `C[g + 8h][2q + c]`;
//! - A register `2kh + h`, element `t`: `A[g + 8h][kh·K/2 + q·w + t]`;
//! - B register `kh`, element `t`: `B[kh·K/2 + q·w + t][g]`.
//!
//! As for `wgmma`, the registers are read off the linear layouts (at lane 0 of warp 0, which element of which
//! instruction tile each register holds) and every register of every lane and warp is then checked against the
//! formula; a layout that does not hold whole fragments, or operands whose warps do not line up with the
//! accumulator's, is an error asking for a conversion, never wrong code.

use std::collections::{BTreeMap, HashMap};

use tessel_layouts::LinearLayout;
use tessel_tile::ir::{Func, OpData};
use tessel_tile::layout::accelerate::runs_on_mma_sync;
use tessel_tile::ops::{InputPrecision, Op};
use tessel_tile::types::ScalarType;

use super::Lower;
use super::coords::layout_of;
use crate::CompileError;
use crate::ptx::{Reg, RegClass, instr, vector};

use ScalarType::*;

/// An operand's fragment: the tile each instruction reads and, per slot (register-major, then element), the
/// coordinates the slot holds for a lane.
pub(crate) struct Fragment {
    pub tile: [u32; 2],
    pub slots: usize,
    pub at: fn(usize, u32, u32) -> (u32, u32),
}

/// The registers of each instruction tile of `l`, in slot order, keyed by the tile's origin in warp 0.
pub(crate) type Tiles = BTreeMap<(u32, u32), Vec<usize>>;

/// Reads the tiles of fragment `fr` (with `w` elements per 32-bit register) off layout `l` and checks every
/// register of every lane and warp. Returns the tiles and each warp's offset.
pub(crate) fn tiles(
    l: &LinearLayout,
    fr: &Fragment,
    w: u32,
    num_warps: u32,
    what: &str,
) -> Result<(Tiles, Vec<(u32, u32)>), CompileError> {
    let coord = |r: u32, lane: u32, warp: u32| {
        let c = l.apply_named(&[("register", r), ("lane", lane), ("warp", warp)]);
        (c[0].1, c[1].1)
    };
    let bad = |m: String| CompileError::new(format!("{what} is not laid out as mma.sync fragments: {m}"));
    let slot_at_lane0: HashMap<(u32, u32), usize> = (0..fr.slots).map(|s| ((fr.at)(s, 0, w), s)).collect();
    let mut out: Tiles = BTreeMap::new();
    for r in 0..l.in_dim_size("register") {
        let (row, col) = coord(r, 0, 0);
        let origin = (row - row % fr.tile[0], col - col % fr.tile[1]);
        let slot = *slot_at_lane0
            .get(&(row % fr.tile[0], col % fr.tile[1]))
            .ok_or_else(|| bad(format!("register {r} of thread 0 holds ({row}, {col})")))?;
        let regs = out.entry(origin).or_insert_with(|| vec![usize::MAX; fr.slots]);
        if regs[slot] != usize::MAX {
            return Err(bad(format!("two registers hold slot {slot} of the tile at {origin:?}")));
        }
        regs[slot] = r as usize;
    }
    let warp_off: Vec<(u32, u32)> = (0..num_warps).map(|wp| coord(0, 0, wp)).collect();
    for (origin, regs) in &out {
        if regs.contains(&usize::MAX) {
            return Err(bad(format!("the tile at {origin:?} is not held whole")));
        }
        for (slot, &r) in regs.iter().enumerate() {
            for (wp, &(wr, wc)) in warp_off.iter().enumerate() {
                for lane in 0..32 {
                    let (fr_r, fr_c) = (fr.at)(slot, lane, w);
                    let want = ((origin.0 + fr_r) ^ wr, (origin.1 + fr_c) ^ wc);
                    let got = coord(r as u32, lane, wp as u32);
                    if got != want {
                        return Err(bad(format!(
                            "register {r} of lane {lane} in warp {wp} holds {got:?}, not {want:?}"
                        )));
                    }
                }
            }
        }
    }
    Ok((out, warp_off))
}

fn c_at(slot: usize, lane: u32, _w: u32) -> (u32, u32) {
    let (h, c) = (slot as u32 / 2, slot as u32 % 2);
    (lane / 4 + 8 * h, 2 * (lane % 4) + c)
}

pub(crate) fn a_at(slot: usize, lane: u32, w: u32) -> (u32, u32) {
    let (j, t) = (slot as u32 / w, slot as u32 % w);
    let (kh, h) = (j / 2, j % 2);
    (lane / 4 + 8 * h, kh * 4 * w + (lane % 4) * w + t)
}

fn b_at(slot: usize, lane: u32, w: u32) -> (u32, u32) {
    let (kh, t) = (slot as u32 / w, slot as u32 % w);
    (kh * 4 * w + (lane % 4) * w + t, lane / 4)
}

/// The PTX operand type of `t` for `mma.sync`.
fn operand_type(t: ScalarType, precision: InputPrecision) -> Result<&'static str, CompileError> {
    Ok(match t {
        F16 => "f16",
        BF16 => "bf16",
        F32 if precision == InputPrecision::Tf32 => "tf32",
        I8 => "s8",
        U8 => "u8",
        F8E4M3 => "e4m3",
        F8E5M2 => "e5m2",
        other => {
            return Err(CompileError::new(format!(
                "mma.sync has no form for {other} operands with input precision {}",
                precision.word()
            )));
        }
    })
}

/// The PTX ISA version the kernel's `mma.sync` dots need beyond the target's: fp8 operands (`m16n8k32` e4m3 /
/// e5m2, sm_89+) are PTX 8.4.
pub fn isa_needed(f: &Func) -> Option<&'static str> {
    let fp8 = |v| matches!(f.ty(v).elem().and_then(|e| e.scalar()), Some(F8E4M3 | F8E5M2));
    let fp8_mma = |o| {
        let d = f.op(o);
        matches!(d.op, Op::Dot { .. }) && fp8(d.operands[0]) && runs_on_mma_sync(f.ty(d.results[0]))
    };
    f.all_ops().into_iter().any(fp8_mma).then_some("8.4")
}

/// Packs one 32-bit operand register from `w` elements (low element first).
pub(crate) fn pack(l: &mut Lower, elems: &[Reg], t: ScalarType) -> Reg {
    if t.bits() == 8 {
        // Bytes in the low halves of 16-bit registers, or in the packed words they came from.
        return l.pack_bytes(&elems[..4]);
    }
    let d = l.b.reg(RegClass::B32);
    if t.bits() == 32 {
        // tf32: the f32 bits as they are, as Triton passes them; the tensor cores ignore the low 13 bits (the
        // interpreter's `round_tf32`).
        l.b.op("mov.b32", d, elems[0]);
    } else {
        l.b.op("mov.b32", d, vector(&[elems[0], elems[1]]));
    }
    d
}

pub(crate) fn mma_sync(l: &mut Lower, data: &OpData, precision: InputPrecision) -> Result<(), CompileError> {
    let f = l.f;
    let [a, b, acc] = [data.operands[0], data.operands[1], data.operands[2]];
    let v = data.results[0];
    let (la, lb, lc) = (layout_of(f.ty(a))?.clone(), layout_of(f.ty(b))?.clone(), layout_of(f.ty(v))?.clone());
    let (op_t, acc_t) = (l.scalar_of(a)?, l.scalar_of(v)?);
    if f.ty(v).shape().len() != 2 {
        return Err(CompileError::new("mma.sync lowering handles rank-2 dots only"));
    }
    let ty_op = operand_type(op_t, precision)?;
    let ty_b = operand_type(l.scalar_of(b)?, precision)?;
    let (ty_d, class) = match acc_t {
        F32 if op_t.is_float() => ("f32", RegClass::F32),
        I32 if !op_t.is_float() => ("s32", RegClass::B32),
        other => return Err(CompileError::new(format!("mma.sync cannot accumulate {op_t} products into {other}"))),
    };
    let w = 32 / op_t.bits();
    let k_instr = 8 * w;
    let nw = l.num_warps;
    let (c_tiles, c_warps) = tiles(&lc, &Fragment { tile: [16, 8], slots: 4, at: c_at }, w, nw, "the accumulator")?;
    let (a_tiles, a_warps) =
        tiles(&la, &Fragment { tile: [16, k_instr], slots: (4 * w) as usize, at: a_at }, w, nw, "operand A")?;
    let (b_tiles, b_warps) =
        tiles(&lb, &Fragment { tile: [k_instr, 8], slots: (2 * w) as usize, at: b_at }, w, nw, "operand B")?;
    for wp in 0..nw as usize {
        if a_warps[wp] != (c_warps[wp].0, 0) || b_warps[wp] != (0, c_warps[wp].1) {
            return Err(CompileError::new(format!(
                "the warps of the dot operands do not line up with the accumulator's (warp {wp}: A at {:?}, B at \
                 {:?}, C at {:?}); a convert_layout to DotOperandLayout of the accumulator's layout is needed",
                a_warps[wp], b_warps[wp], c_warps[wp]
            )));
        }
    }
    let k = f.ty(a).shape()[1];
    let (a_regs, b_regs) = (l.get(a)?.to_vec(), l.get(b)?.to_vec());
    let mut packed: HashMap<(char, (u32, u32), usize), Reg> = HashMap::new();
    let mut operand = |l: &mut Lower, which: char, origin: (u32, u32), j: usize| -> Result<Reg, CompileError> {
        if let Some(&r) = packed.get(&(which, origin, j)) {
            return Ok(r);
        }
        let (tiles, regs) = if which == 'a' { (&a_tiles, &a_regs) } else { (&b_tiles, &b_regs) };
        let slots = tiles.get(&origin).ok_or_else(|| {
            CompileError::new(format!("operand {} holds no tile at {origin:?} in this thread", which.to_uppercase()))
        })?;
        let elems: Vec<Reg> = slots[j * w as usize..(j + 1) * w as usize].iter().map(|&s| regs[s]).collect();
        let r = pack(l, &elems, op_t);
        packed.insert((which, origin, j), r);
        Ok(r)
    };
    let d = l.accumulator_registers(acc, class)?;
    l.b.comment(format!(
        "dot: {} mma.sync.m16n8k{k_instr} tile(s) x {} k step(s) per warp",
        c_tiles.len(),
        k / k_instr
    ));
    for (&(m0, n0), c_slots) in &c_tiles {
        for k0 in (0..k).step_by(k_instr as usize) {
            let a4: Vec<Reg> = (0..4).map(|j| operand(l, 'a', (m0, k0), j)).collect::<Result<_, _>>()?;
            let b2: Vec<Reg> = (0..2).map(|j| operand(l, 'b', (k0, n0), j)).collect::<Result<_, _>>()?;
            let dr: Vec<Reg> = c_slots.iter().map(|&s| d[s]).collect();
            let op = format!("mma.sync.aligned.m16n8k{k_instr}.row.col.{ty_d}.{ty_op}.{ty_b}.{ty_d}");
            l.b.emit(instr(op).dst(vector(&dr)).srcs((vector(&a4), vector(&b2), vector(&dr))));
        }
    }
    l.vals.insert(v, d);
    Ok(())
}
