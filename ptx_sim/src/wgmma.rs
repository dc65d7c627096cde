//! `wgmma` for the simulator, written from the PTX ISA (the canonical shared-memory layouts of the matrix
//! descriptor, and the fragment of the `m64nNk*` accumulator) independently of tessel-codegen's derivation, so
//! that a kernel's descriptors, register order and barriers are checked against the interpreter on the CPU.
//!
//! A `wgmma` completes when its warpgroup issues it (all four warps together: `warps` makes a warpgroup wait
//! for its warps); `commit_group`/`wait_group`/`wgmma.fence` are then no-ops. The async proxy's reads are checked
//! like the warpgroup's first thread's reads (a missing barrier after other threads' stores is a race), and a
//! byte a thread stored without a `fence.proxy.async` since is an error.

use tessel_tile::eval::value::from_bits;

use super::{Cta, Opnd};

/// The fields of a 64-bit matrix descriptor, in bytes.
struct Desc {
    start: u64,
    lbo: u64,
    sbo: u64,
    /// Swizzle span in bytes (128, 64, 32), or 0 for none.
    swizzle: u64,
}

fn decode(d: u64) -> Result<Desc, String> {
    let field = |shift: u32| ((d >> shift) & 0x3FFF) << 4;
    let swizzle = match d >> 62 {
        1 => 128,
        2 => 64,
        3 => 32,
        _ => return Err("descriptors without swizzle are not simulated".into()),
    };
    if (d >> 49) & 7 != 0 {
        return Err("a nonzero descriptor base offset is not simulated".into());
    }
    Ok(Desc { start: field(0), lbo: field(16), sbo: field(32), swizzle })
}

/// The byte the hardware reads for element (row, k): K-major rows are one swizzle span apart in 8-row groups
/// SBO apart; MN-major runs of one span along the rows repeat LBO apart, with 8-deep K groups SBO apart. Then
/// the 16-byte chunk index is XORed with the row of the 8-row swizzle atom (address bits 7 and up).
fn address(d: &Desc, mn_major: bool, row: u64, k: u64, eb: u64) -> u64 {
    let w = d.swizzle;
    let a = if mn_major {
        let span = w / eb;
        d.start + (row / span) * d.lbo + (row % span) * eb + (k % 8) * w + (k / 8) * d.sbo
    } else {
        d.start + (row / 8) * d.sbo + (row % 8) * w + k * eb
    };
    a ^ (((a >> 7) & (w / 16 - 1)) << 4)
}

/// [`address`] from the decoded fields (the tcgen05 MMAs read the same canonical layouts).
#[allow(clippy::too_many_arguments)]
pub(super) fn address_of(
    start: u64,
    lbo: u64,
    sbo: u64,
    swizzle: u64,
    mn_major: bool,
    row: u64,
    k: u64,
    eb: u64,
) -> u64 {
    address(&Desc { start, lbo, sbo, swizzle }, mn_major, row, k, eb)
}

fn value(bytes: &[u8], ty: &str) -> Result<f64, String> {
    let mut b = [0u8; 8];
    b[..bytes.len()].copy_from_slice(bytes);
    let x = u64::from_le_bytes(b);
    Ok(match ty {
        "f16" => from_bits(x, tessel_tile::ScalarType::F16).as_f64(),
        "bf16" => from_bits(x, tessel_tile::ScalarType::BF16).as_f64(),
        "e4m3" => from_bits(x, tessel_tile::ScalarType::F8E4M3).as_f64(),
        "e5m2" => from_bits(x, tessel_tile::ScalarType::F8E5M2).as_f64(),
        // The tensor cores read the top 19 bits of a tf32 operand.
        "tf32" => f32::from_bits((x as u32) & !0x1FFF) as f64,
        "s8" => x as u8 as i8 as f64,
        "u8" => x as u8 as f64,
        other => return Err(format!("wgmma operand type {other} is not simulated")),
    })
}

/// Executes `wgmma.mma_async` for every warpgroup of the CTA whose threads are active (whole warpgroups).
pub(super) fn mma_async(c: &mut Cta, op: &str, args: &[Opnd], active: &[bool]) -> Result<(), String> {
    let parts: Vec<&str> = op.split('.').collect();
    let shape = parts.iter().find(|p| p.starts_with("m64n")).ok_or("no shape")?;
    let (n, k): (u64, u64) = {
        let rest = &shape[4..];
        let (n, k) = rest.split_once('k').ok_or("bad shape")?;
        (n.parse().map_err(|_| "bad N")?, k.parse().map_err(|_| "bad K")?)
    };
    let (ty_d, ty_a, ty_b) = (parts[parts.len() - 3], parts[parts.len() - 2], parts[parts.len() - 1]);
    let eb = 32 / k;
    let Opnd::Vec(d_regs) = &args[0] else { return Err("D must be a register list".into()) };
    let d_regs: Vec<usize> = d_regs.iter().map(|r| r.ok_or("`_` in D")).collect::<Result<_, _>>()?;
    if d_regs.len() as u64 != n / 2 {
        return Err(format!("m64n{n} needs {} D registers, got {}", n / 2, d_regs.len()));
    }
    let imm = |i: usize| match args.get(i) {
        Some(Opnd::Imm(x)) => Some(*x),
        _ => None,
    };
    // scale-d: 1 accumulates onto D; 0 (an immediate or a false predicate, uniform over the warpgroup) replaces
    // D with the product.
    let scale_d = |c: &Cta, t: usize| -> Result<bool, String> {
        match args.get(3) {
            Some(Opnd::Imm(x)) if *x <= 1 => Ok(*x == 1),
            Some(Opnd::Reg(r)) => Ok(c.regs[t][*r] != 0),
            other => Err(format!("scale-d {other:?} is neither 0, 1 nor a predicate")),
        }
    };
    // A from registers (a `{..}` list of four) drops the A transpose immediate.
    let a_regs: Option<Vec<usize>> = match &args[1] {
        Opnd::Vec(v) => Some(v.iter().map(|r| r.ok_or("`_` in A")).collect::<Result<_, _>>()?),
        _ => None,
    };
    let (trans_a, trans_b) = match (matches!(ty_a, "f16" | "bf16"), &a_regs) {
        (true, None) => (imm(6) == Some(1), imm(7) == Some(1)),
        (true, Some(_)) => (false, imm(6) == Some(1)),
        (false, _) => (false, false),
    };
    let threads = c.regs.len();
    for wg in 0..threads.div_ceil(128) {
        let lead = wg * 128;
        if !active[lead] {
            continue;
        }
        if lead + 128 > threads {
            return Err("wgmma needs whole warpgroups".into());
        }
        let reg = |c: &Cta, o: &Opnd| match o {
            Opnd::Reg(r) => Ok(c.regs[lead][*r]),
            other => Err(format!("descriptor {other:?} is not a register")),
        };
        let keep = scale_d(c, lead)?;
        if (lead..lead + 128).any(|t| scale_d(c, t) != Ok(keep)) {
            return Err(format!("scale-d differs across warpgroup {wg}"));
        }
        let db = decode(reg(c, &args[2])?)?;
        let da = if a_regs.is_none() { Some(decode(reg(c, &args[1])?)?) } else { None };
        for t in lead..lead + 128 {
            for (i, o) in args[1..3].iter().enumerate() {
                if let Opnd::Reg(r) = o
                    && c.regs[t][*r] != c.regs[lead][*r]
                {
                    return Err(format!("descriptor {} differs across warpgroup {wg}", if i == 0 { "A" } else { "B" }));
                }
            }
        }
        let read = |c: &mut Cta, addr: u64, ty: &str| -> Result<f64, String> {
            for i in 0..eb {
                c.async_read(addr + i, "wgmma")?;
            }
            let bytes = c.smem(lead, addr, eb as usize, None)?.to_vec();
            value(&bytes, ty)
        };
        let mut a = vec![0f64; (64 * k) as usize];
        match (&da, &a_regs) {
            (Some(da), _) => {
                for row in 0..64 {
                    for kk in 0..k {
                        a[(row * k + kk) as usize] = read(c, address(da, trans_a, row, kk, eb), ty_a)?;
                    }
                }
            }
            (None, Some(regs)) => {
                // Register j = 2kh + h of lane l in warp w holds `per` = 4 / eb elements, element e at
                // A[16w + l/4 + 8h][(k / 2)·kh + per·(l%4) + e]: 16-bit types two to a register over K 16,
                // 8-bit ones four over K 32 (the ISA's register fragments for A).
                let per = 4 / eb;
                for t in lead..lead + 128 {
                    let (w, l) = (((t - lead) / 32) as u64, (t % 32) as u64);
                    for (j, &r) in regs.iter().enumerate() {
                        let (kh, h) = (j as u64 / 2, j as u64 % 2);
                        for e in 0..per {
                            let bytes = ((c.regs[t][r] >> (8 * eb * e)) as u32).to_le_bytes();
                            let row = 16 * w + l / 4 + 8 * h;
                            let col = k / 2 * kh + per * (l % 4) + e;
                            a[(row * k + col) as usize] = value(&bytes[..eb as usize], ty_a)?;
                        }
                    }
                }
            }
            (None, None) => unreachable!(),
        }
        let mut b = vec![0f64; (k * n) as usize];
        for col in 0..n {
            for kk in 0..k {
                b[(kk * n + col) as usize] = read(c, address(&db, trans_b, col, kk, eb), ty_b)?;
            }
        }
        // Fragment: register 4j + 2h + c of lane l in warp w holds D[16w + l/4 + 8h][8j + 2(l%4) + c].
        for t in lead..lead + 128 {
            let (w, l) = (((t - lead) / 32) as u64, (t % 32) as u64);
            for (i, &r) in d_regs.iter().enumerate() {
                let i = i as u64;
                let (j, h, cc) = (i / 4, (i / 2) % 2, i % 2);
                let (row, col) = (16 * w + l / 4 + 8 * h, 8 * j + 2 * (l % 4) + cc);
                let dot: f64 = (0..k).map(|kk| a[(row * k + kk) as usize] * b[(kk * n + col) as usize]).sum();
                let old = if keep { c.regs[t][r] } else { 0 };
                c.regs[t][r] = match ty_d {
                    "f32" => (f32::from_bits(old as u32) + dot as f32).to_bits() as u64,
                    "s32" => (old as u32 as i32).wrapping_add(dot as i32) as u32 as u64,
                    other => return Err(format!("accumulator type {other} is not simulated")),
                };
            }
        }
    }
    Ok(())
}
