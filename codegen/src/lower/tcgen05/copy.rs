//! `tcgen05_copy`: one thread issues the `tcgen05.cp` instructions of the plan
//! `tessel_tile::tcgen05_copy` derives from the source's shared layout and the destination's tensor-memory
//! layout (shape, one matrix descriptor, each instruction's column and start byte); in a kernel of CTA pairs the
//! even CTA issues `cta_group::2` copies, each CTA's part of the source into its part of the destination. The barrier analysis fences
//! the threads' writes of the source for the async proxy (`fence.proxy.async` + `bar.sync`) first; the copy
//! completes with the tcgen05 ops before a `tcgen05_commit`, in order with the MMAs issued after it.

use tessel_tile::ir::OpData;
use tessel_tile::tcgen05_copy::Shape;

use super::super::Lower;
use super::mma::encode;
use super::thread_sync;
use crate::CompileError;
use crate::ptx::{RegClass, instr, mem};

/// The instruction of a copy shape in the kernel's CTA group (`tcgen05.cp.cta_group::N.shape`, no multicast, no
/// decompression). A pair's copy (`cta_group::2`, issued by the even CTA) copies each CTA's shared memory at the
/// source address into that CTA's tensor memory at the destination address.
fn opcode(group: &str, shape: Shape) -> String {
    format!("tcgen05.cp.{group}.{}", shape.ptx())
}

/// `tcgen05_copy src, dst`.
pub(crate) fn copy(l: &mut Lower, data: &OpData) -> Result<(), CompileError> {
    let (src, dst) = (data.operands[0], data.operands[1]);
    let plan = tessel_tile::tcgen05_copy::plan(l.f.ty(src), l.f.ty(dst)).map_err(CompileError::new)?;
    // Every warp's tensor-memory accesses before are done before the one thread issues.
    thread_sync(l);
    let issuer = super::issuer(l, None)?;
    let (s_base, d_base) = (l.get(src)?[0], l.get(dst)?[0]);
    l.b.comment(format!(
        "tcgen05_copy: {} x tcgen05.cp.{} (swizzle {}, LBO {}, SBO {})",
        plan.instrs.len(),
        plan.shape.ptx(),
        plan.desc.swizzle,
        plan.desc.lbo,
        plan.desc.sbo
    ));
    let op = opcode(super::group(l), plan.shape);
    for i in &plan.instrs {
        let desc = encode(l, s_base, i.start, &plan.desc);
        let d = l.b.reg(RegClass::B32);
        l.b.op("add.u32", d, (d_base, i.column));
        l.b.emit(instr(op.clone()).guard(issuer).srcs((mem(d), desc)));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use tessel_tile::smem_desc::MatrixDesc;
    use tessel_tile::tcgen05_copy::{Instr, plan};

    use super::super::mma::desc_hi;
    use super::*;

    /// Each form tessel emits: the instruction, the descriptor's constant words (high: SBO >> 4 in bits 0-13, the
    /// version bit 14, the swizzle in bits 29-31; low: LBO >> 4 in bits 16-29 above the start address) and the
    /// instructions' columns and start bytes.
    #[test]
    fn copy_instructions_and_descriptors_are_the_documented_words() {
        let ty = |t: &str| tessel_tile::parse::parse_type(t).unwrap();
        let forms = [
            // f32 in the 64-byte swizzle (SBO 8 rows of 64 bytes) into a 128-row accumulator: 32 bytes of a row each.
            (
                "memdesc<128x16xf32, NVMMASharedLayout(64, 32)>",
                "memdesc<128x16xf32, TensorMemoryLayout((128,16), 1)>",
                "tcgen05.cp.cta_group::1.128x256b",
                (0x8000_4020u32, 0x0001_0000u32),
                vec![(0, 0), (8, 32)],
            ),
            // M 256 in TMEM blocks of 4 columns: 128-bit rows, the second row block 128 rows x 32 bytes on.
            (
                "memdesc<256x32xf32, NVMMASharedLayout(32, 32)>",
                "memdesc<256x32xf32, TensorMemoryLayout((128,4), 1)>",
                "tcgen05.cp.cta_group::1.128x128b",
                (0xC000_4010, 0x0001_0000),
                vec![(0, 0), (4, 4096), (8, 16), (12, 4112)],
            ),
            // Tutorial 11's scales, the unswizzled view of their packed block: 32 lanes to each quarter.
            (
                "memdesc<128x4xu8, SharedLinearLayout([[0,1],[0,2],[32,0],[64,0],[1,0],[2,0],[4,0],[8,0],[16,0]], [], 128)>",
                "memdesc<128x4xu8, TensorMemoryScalesLayout()>",
                "tcgen05.cp.cta_group::1.32x128b.warpx4",
                (0x0000_4008, 0x0001_0000),
                vec![(0, 0)],
            ),
        ];
        for (src, dst, op, (hi, lo), instrs) in forms {
            let p = plan(&ty(src), &ty(dst)).unwrap_or_else(|e| panic!("{src}: {e}"));
            assert_eq!(opcode("cta_group::1", p.shape), op, "{src}");
            let d: MatrixDesc = p.desc;
            assert_eq!((desc_hi(&d), d.lbo_field()), (hi, lo), "{src}: {d:?}");
            let got: Vec<(u32, u32)> = p.instrs.iter().map(|&Instr { column, start }| (column, start)).collect();
            assert_eq!(got[..instrs.len().min(got.len())], instrs[..], "{src}");
        }
    }
}
