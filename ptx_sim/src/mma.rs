//! `mma.sync.aligned.m16n8kK.row.col` for the simulator, from the PTX ISA's fragment figures (g = lane / 4,
//! q = lane % 4, `w` = 32 / bits elements per register, K = 8w): C/D register `2h + c` is `C[g + 8h][2q + c]`;
//! A register `2kh + h` holds `A[g + 8h][kh·4w + q·w + t]` in its element `t`; B register `kh` holds
//! `B[kh·4w + q·w + t][g]`. Each warp multiplies its own fragments.

use tessel_tile::eval::value::from_bits;

use super::{Cta, Opnd};

fn element(reg: u64, t: u32, ty: &str) -> Result<f64, String> {
    Ok(match ty {
        "f16" => from_bits((reg >> (16 * t)) & 0xffff, tessel_tile::ScalarType::F16).as_f64(),
        "bf16" => from_bits((reg >> (16 * t)) & 0xffff, tessel_tile::ScalarType::BF16).as_f64(),
        "tf32" => f32::from_bits((reg as u32) & !0x1FFF) as f64,
        "s8" => ((reg >> (8 * t)) & 0xff) as u8 as i8 as f64,
        "u8" => ((reg >> (8 * t)) & 0xff) as f64,
        "e4m3" => from_bits((reg >> (8 * t)) & 0xff, tessel_tile::ScalarType::F8E4M3).as_f64(),
        "e5m2" => from_bits((reg >> (8 * t)) & 0xff, tessel_tile::ScalarType::F8E5M2).as_f64(),
        other => return Err(format!("mma operand type {other} is not simulated")),
    })
}

fn regs(o: &Opnd) -> Result<Vec<usize>, String> {
    match o {
        Opnd::Vec(v) => v.iter().map(|r| r.ok_or_else(|| "`_` in an mma operand".to_string())).collect(),
        other => Err(format!("{other:?} is not a register list")),
    }
}

/// Executes `mma.sync` for every warp of the CTA whose threads are active.
pub(super) fn mma_sync(c: &mut Cta, op: &str, args: &[Opnd], active: &[bool]) -> Result<(), String> {
    let parts: Vec<&str> = op.split('.').collect();
    let shape = parts.iter().find(|p| p.starts_with("m16n8k")).ok_or("no shape")?;
    let k: u32 = shape[6..].parse().map_err(|_| "bad K")?;
    let n = parts.len();
    let (ty_d, ty_a, ty_b) = (parts[n - 4], parts[n - 3], parts[n - 2]);
    let w = k / 8;
    let (d, a, b, cc) = (regs(&args[0])?, regs(&args[1])?, regs(&args[2])?, regs(&args[3])?);
    if d.len() != 4 || a.len() != 4 || b.len() != 2 || cc.len() != 4 {
        return Err("m16n8k* takes 4 D, 4 A, 2 B and 4 C registers".into());
    }
    let threads = c.regs.len();
    for warp in 0..threads / 32 {
        let base = warp * 32;
        if !active[base] {
            continue;
        }
        let mut am = vec![0f64; (16 * k) as usize];
        let mut bm = vec![0f64; (k * 8) as usize];
        let mut cm = vec![0f64; 16 * 8];
        for lane in 0..32u32 {
            let t_reg = |r: usize| c.regs[base + lane as usize][r];
            let (g, q) = (lane / 4, lane % 4);
            for (j, &r) in a.iter().enumerate() {
                let (kh, h) = (j as u32 / 2, j as u32 % 2);
                for t in 0..w {
                    let (row, kk) = (g + 8 * h, kh * 4 * w + q * w + t);
                    am[(row * k + kk) as usize] = element(t_reg(r), t, ty_a)?;
                }
            }
            for (kh, &r) in b.iter().enumerate() {
                for t in 0..w {
                    let kk = kh as u32 * 4 * w + q * w + t;
                    bm[(kk * 8 + g) as usize] = element(t_reg(r), t, ty_b)?;
                }
            }
            for (i, &r) in cc.iter().enumerate() {
                let (h, col) = (i as u32 / 2, i as u32 % 2);
                let x = t_reg(r);
                cm[((g + 8 * h) * 8 + 2 * q + col) as usize] =
                    if ty_d == "f32" { f32::from_bits(x as u32) as f64 } else { x as u32 as i32 as f64 };
            }
        }
        for lane in 0..32u32 {
            let (g, q) = (lane / 4, lane % 4);
            for (i, &r) in d.iter().enumerate() {
                let (h, col) = (i as u32 / 2, i as u32 % 2);
                let (row, cl) = (g + 8 * h, 2 * q + col);
                let sum: f64 = (0..k).map(|kk| am[(row * k + kk) as usize] * bm[(kk * 8 + cl) as usize]).sum();
                let acc = cm[(row * 8 + cl) as usize];
                c.regs[base + lane as usize][r] = match ty_d {
                    "f32" => ((acc + sum) as f32).to_bits() as u64,
                    "s32" => (acc as i64 + sum as i64) as i32 as u32 as u64,
                    other => return Err(format!("accumulator type {other} is not simulated")),
                };
            }
        }
    }
    Ok(())
}
