//! sm_100's shared-memory matrix descriptor (`tcgen05.mma` operands, `tcgen05.cp` sources), decoded as the ISA
//! defines it; read by the dense MMAs (`tcgen05`) and the block-scaled ones and copies (`tcgen05_scaled`).

/// An sm_100 shared-memory descriptor: start, LBO, SBO (bytes) and swizzle span (0 for none). The version field
/// (bits 46-48) must be 1, the base offset and LBO mode (49-52) 0; swizzle (61-63): 0 none, 2 = 128B, 4 = 64B,
/// 6 = 32B. The block-scaled MMAs and `tcgen05.cp` read unswizzled descriptors (`tcgen05_scaled`).
pub(crate) fn smem_desc(d: u64) -> Result<(u64, u64, u64, u64), String> {
    let field = |shift: u32| ((d >> shift) & 0x3FFF) << 4;
    if (d >> 46) & 7 != 1 {
        return Err(format!("descriptor {d:#018x}: bits 46-48 must be 0b001 on sm_100"));
    }
    if (d >> 49) & 0xF != 0 {
        return Err(format!("descriptor {d:#018x}: a base offset or absolute LBO mode is not simulated"));
    }
    let swizzle = match d >> 61 {
        0 => 0,
        2 => 128,
        4 => 64,
        6 => 32,
        other => return Err(format!("descriptor {d:#018x}: swizzle mode {other} is not simulated")),
    };
    Ok((field(0), field(16), field(32), swizzle))
}
