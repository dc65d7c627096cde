//! `stmatrix.sync.aligned.m8n8.x{1,2,4}.shared.b16` and `ldmatrix.sync.aligned.m8n8.x{1,2,4}{,.trans}.shared.b16`
//! for the simulator, from the PTX ISA's fragment figures: lane `8i + r` supplies the address of row `r` of
//! matrix `i`, and register `i` of lane `4r + q` holds that row's elements `2q` and `2q + 1`; with `.trans`,
//! element `r` of rows `2q` (low half) and `2q + 1` (high half). Each piece is read or written on behalf of the
//! lane whose register holds it, so the race check sees the same threads as 16- and 32-bit accesses would.

use super::{Cta, Opnd};

/// The matrix count of an `.x1/.x2/.x4` opcode.
fn count(op: &str) -> Result<usize, String> {
    op.split('.').find_map(|p| p.strip_prefix('x').and_then(|n| n.parse().ok())).ok_or_else(|| "no .x1/.x2/.x4".into())
}

/// The 8 row addresses of matrix `i` in the warp at thread `base` (16-byte aligned).
fn rows(c: &Cta, base: usize, i: usize, addr: &Opnd) -> Result<[u64; 8], String> {
    let mut out = [0; 8];
    for (r, row) in out.iter_mut().enumerate() {
        *row = c.addr(base + 8 * i + r, addr)?;
        if *row % 16 != 0 {
            return Err(format!("row address {row} is not 16-byte aligned"));
        }
    }
    Ok(out)
}

/// Whether the warp at `base` runs the instruction: all its lanes or none (`.sync.aligned`).
fn warp_active(active: &[bool], base: usize, what: &str) -> Result<bool, String> {
    let lanes = &active[base..base + 32];
    if lanes.iter().any(|&a| a) != lanes.iter().all(|&a| a) {
        return Err(format!("{what} in a partly active warp"));
    }
    Ok(lanes[0])
}

pub(super) fn ldmatrix(c: &mut Cta, op: &str, args: &[Opnd], active: &[bool]) -> Result<(), String> {
    let count = count(op)?;
    let trans = op.split('.').any(|p| p == "trans");
    let Opnd::Vec(regs) = &args[0] else { return Err("the destination is not a register list".into()) };
    if regs.len() != count {
        return Err(format!(".x{count} takes {count} registers, not {}", regs.len()));
    }
    for warp in 0..c.regs.len() / 32 {
        let base = warp * 32;
        if !warp_active(active, base, "ldmatrix")? {
            continue;
        }
        // Every address is read before any register is written.
        let all: Vec<[u64; 8]> = (0..count).map(|i| rows(c, base, i, &args[1])).collect::<Result<_, _>>()?;
        for (reg, rows) in regs.iter().zip(all) {
            let reg = reg.ok_or("`_` in ldmatrix")?;
            for lane in 0..32 {
                let (r, q) = (lane / 4, lane % 4);
                let t = base + lane;
                let mut word = [0u8; 4];
                if trans {
                    for (h, half) in word.chunks_mut(2).enumerate() {
                        half.copy_from_slice(c.smem(t, rows[2 * q + h] + 2 * r as u64, 2, None)?);
                    }
                } else {
                    word.copy_from_slice(c.smem(t, rows[r] + 4 * q as u64, 4, None)?);
                }
                c.regs[t][reg] = u32::from_le_bytes(word) as u64;
            }
        }
    }
    Ok(())
}

pub(super) fn stmatrix(c: &mut Cta, op: &str, args: &[Opnd], active: &[bool]) -> Result<(), String> {
    let count = count(op)?;
    let Opnd::Vec(regs) = &args[1] else { return Err("the data operand is not a register list".into()) };
    if regs.len() != count {
        return Err(format!(".x{count} takes {count} registers, not {}", regs.len()));
    }
    for warp in 0..c.regs.len() / 32 {
        let base = warp * 32;
        if !warp_active(active, base, "stmatrix")? {
            continue;
        }
        for (i, reg) in regs.iter().enumerate() {
            let reg = reg.ok_or("`_` in stmatrix")?;
            let rows = rows(c, base, i, &args[0])?;
            for (r, &row) in rows.iter().enumerate() {
                for q in 0..4 {
                    let t = base + 4 * r + q;
                    let word = (c.regs[t][reg] as u32).to_le_bytes();
                    c.mark_generic(t, row + 4 * q as u64, 4);
                    c.smem(t, row + 4 * q as u64, 4, Some(&word))?.copy_from_slice(&word);
                }
            }
        }
    }
    Ok(())
}
