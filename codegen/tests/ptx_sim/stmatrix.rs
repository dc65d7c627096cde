//! `stmatrix.sync.aligned.m8n8.x{1,2,4}.shared.b16` for the simulator, from the PTX ISA's fragment figure: lane
//! `8i + r` supplies the address of row `r` of matrix `i`, and register `i` of lane `4r + q` holds that row's
//! elements `2q` and `2q + 1`. Each 4-byte piece is written on behalf of the lane whose register holds it, so
//! the race check sees the same writers as 32-bit stores would have.

use super::{Cta, Opnd};

pub(super) fn stmatrix(c: &mut Cta, op: &str, args: &[Opnd], active: &[bool]) -> Result<(), String> {
    let count: usize =
        op.split('.').find_map(|p| p.strip_prefix('x').and_then(|n| n.parse().ok())).ok_or("no .x1/.x2/.x4")?;
    let Opnd::Vec(regs) = &args[1] else { return Err("the data operand is not a register list".into()) };
    if regs.len() != count {
        return Err(format!(".x{count} takes {count} registers, not {}", regs.len()));
    }
    for warp in 0..c.regs.len() / 32 {
        let base = warp * 32;
        let lanes = &active[base..base + 32];
        if lanes.iter().any(|&a| a) != lanes.iter().all(|&a| a) {
            return Err("stmatrix in a partly active warp".into());
        }
        if !lanes[0] {
            continue;
        }
        for (i, reg) in regs.iter().enumerate() {
            let reg = reg.ok_or("`_` in stmatrix")?;
            for r in 0..8 {
                let row = c.addr(base + 8 * i + r, &args[0])?;
                if row % 16 != 0 {
                    return Err(format!("row address {row} is not 16-byte aligned"));
                }
                for q in 0..4 {
                    let t = base + 4 * r + q;
                    let word = (c.regs[t][reg] as u32).to_le_bytes();
                    c.mark_generic(row + 4 * q as u64, 4);
                    c.smem(t, row + 4 * q as u64, 4, Some(&word))?.copy_from_slice(&word);
                }
            }
        }
    }
    Ok(())
}
