//! `tcgen05_copy src, dst`: which `tcgen05.cp` instructions copy a shared-memory buffer into a tensor-memory
//! buffer, derived from the two layouts and checked at every element, so that the verifier, gluon (at the
//! call's span) and codegen agree on one rule.
//!
//! A `tcgen05.cp.cta_group::1.<shape>` reads a matrix from shared memory through a matrix descriptor
//! ([`crate::smem_desc`]) whose rows are tensor-memory lanes and whose K extent is the bits the shape moves per
//! lane, and writes it at the lanes and consecutive 32-bit columns of its tensor-memory address (PTX ISA
//! `tcgen05.cp`; `reference/ptx.md` §7.5): `128x256b` (128 lanes, 8 columns), `128x128b` (128 lanes, 4 columns),
//! `32x128b.warpx4` (32 rows of 4 columns written to each of the four lane quarters). The source must be one of
//! the descriptor's canonical K-major layouts (128-, 64- or 32-byte swizzle, or none: 8-row by 16-byte core
//! matrices) and hold, at the byte the descriptor names for (lane, k), the element the destination's layout puts
//! at that lane and slot.
//!
//! A `TensorMemoryLayout` buffer of 32-bit elements copies 128 lanes at a time, 8 columns per instruction when
//! the buffer's columns and the source allow it, else 4. A `TensorMemoryScalesLayout` buffer (8-bit scales, the
//! lane quarters holding copies) copies 32 lanes with `.warpx4`, 4 columns (16 scales) per instruction. One
//! descriptor (swizzle, LBO, SBO) serves every instruction; each starts at its first element's byte.

use std::sync::Arc;

use tessel_layouts::{AnyLayout, SharedLayout, SharedLinearLayout};

use crate::cluster_part;
use crate::smem_desc::{self, MatrixDesc, Offsets};
use crate::types::{Layout, Type};

/// A `tcgen05.cp` shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// 128 lanes of 256 bits.
    R128x256b,
    /// 128 lanes of 128 bits.
    R128x128b,
    /// 32 lanes of 128 bits, written to each lane quarter (`.warpx4`).
    R32x128bWarpx4,
}

impl Shape {
    /// The shape's PTX modifiers, e.g. `128x256b` or `32x128b.warpx4`.
    pub fn ptx(self) -> &'static str {
        match self {
            Shape::R128x256b => "128x256b",
            Shape::R128x128b => "128x128b",
            Shape::R32x128bWarpx4 => "32x128b.warpx4",
        }
    }

    /// The lanes it reads rows for (those it writes, but for `.warpx4`'s copies).
    pub fn lanes(self) -> u32 {
        if self == Shape::R32x128bWarpx4 { 32 } else { 128 }
    }

    /// The 32-bit columns it writes per lane.
    pub fn columns(self) -> u32 {
        if self == Shape::R128x256b { 8 } else { 4 }
    }
}

/// One `tcgen05.cp`: its first tensor-memory column (from the buffer's) and the shared-memory byte offset (from
/// the source view's base) its descriptor starts at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Instr {
    pub column: u32,
    pub start: u32,
}

/// The instructions of one `tcgen05_copy`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    pub shape: Shape,
    pub desc: MatrixDesc,
    pub instrs: Vec<Instr>,
}

/// The plan of copying `src` (a shared-memory memdesc) into `dst` (a tensor-memory memdesc), or why none exists.
pub fn plan(src: &Type, dst: &Type) -> Result<Plan, String> {
    // In a cluster each CTA copies its part of the source into its part of the destination (a pair's
    // `tcgen05.cp.cta_group::2` copies in both CTAs), so both must be spread over the CTAs alike.
    let (sc, dc) = (cluster_part::cta_bases(src)?, cluster_part::cta_bases(dst)?);
    if sc != dc {
        return Err(format!(
            "the source and the destination are spread over the CTAs differently (CTA bases {sc:?} and {dc:?}): \
             each CTA copies its own part"
        ));
    }
    plan_local(&cluster_part::local_type(src)?, &cluster_part::local_type(dst)?)
}

/// [`plan`] for one CTA's part of each.
fn plan_local(src: &Type, dst: &Type) -> Result<Plan, String> {
    let (Some((s_shape, s_elem, s_layout)), Some((d_shape, d_elem, d_layout))) = (src.memdesc(), dst.memdesc()) else {
        return Err(format!("copies a shared-memory memdesc into a tensor-memory one, got {src} and {dst}"));
    };
    if src.is_tmem() || !dst.is_tmem() {
        return Err(format!("copies shared memory into tensor memory, got {src} into {dst}"));
    }
    if s_shape != d_shape || s_elem != d_elem {
        return Err(format!("the source {src} and the destination {dst} must have one shape and element type"));
    }
    let bits = d_elem.bits();
    let scales = dst.is_tmem_scales();
    if scales {
        crate::tmem_types::scales_parts(dst)?;
    } else {
        let (_, _, l) = crate::tmem_types::tmem_parts(dst)?;
        if bits != 32 {
            return Err(format!(
                "tcgen05_copy into a TensorMemoryLayout buffer copies 32-bit elements, got {d_elem} (8-bit scales go \
                 into a TensorMemoryScalesLayout buffer)"
            ));
        }
        if d_shape.len() != 2 || l.block[0] != 128 {
            return Err(format!(
                "tcgen05_copy copies 2-D buffers of block M 128 (a row per lane), got {}",
                crate::tmem_types::layout_name(dst)
            ));
        }
    }
    let tmem = &d_layout.linear;
    let offsets = Offsets::new(&s_layout.linear)?;
    let eb = bits / 8;
    let per_col = 32 / bits;
    let slots = tmem.in_dim_size("col");
    let columns = (slots * bits).div_ceil(32);
    // The lane quarters hold copies (scales): 32 lanes written to each quarter.
    let row_bases = tmem.bases("row");
    let quarters_copy = row_bases.len() == 7 && row_bases[5..].iter().all(|b| b.iter().all(|&c| c == 0));
    let shapes: &[Shape] = if scales || quarters_copy {
        if !(scales && quarters_copy) {
            return Err(format!(
                "the lanes of {} are not a tcgen05.cp destination",
                crate::tmem_types::layout_name(dst)
            ));
        }
        &[Shape::R32x128bWarpx4]
    } else {
        &[Shape::R128x256b, Shape::R128x128b]
    };
    let at = |lane: u32, slot: u32| -> u32 {
        let c = tmem.apply(&[lane, slot]);
        offsets.of([c[0], c[1]]) * eb
    };
    let mut first_error = None;
    for &shape in shapes {
        if columns % shape.columns() != 0 {
            continue;
        }
        let k = shape.columns() * per_col;
        let origins: Vec<(u32, u32)> = (0..columns / shape.columns()).map(|i| (0, i * k)).collect();
        match smem_desc::derive_by(&at, eb, shape.lanes(), k, &origins, true) {
            Ok(desc) => {
                let instrs = origins.iter().map(|&(_, s)| Instr { column: s / per_col, start: at(0, s) }).collect();
                return Ok(Plan { shape, desc, instrs });
            }
            Err(e) => {
                first_error.get_or_insert(format!("{}: {e}", shape.ptx()));
            }
        }
    }
    Err(format!(
        "no tcgen05.cp copies {src} into {dst}: {}",
        first_error.unwrap_or_else(|| format!("{columns} columns are not a whole number of instructions"))
    ))
}

/// The shared-memory buffer from which scales reach `dst` (a `TensorMemoryScalesLayout` buffer) by `tcgen05.cp`
/// with one unswizzled descriptor: each instruction's 16 bytes (4 columns) of each of 32 lanes, lane after lane
/// (8-row by 16-byte core matrices, one after another), instruction after instruction. So the buffer's byte
/// offset bits 0–3 are the destination's slot bits 0–3, bits 4–8 its lane bits, and the higher ones its further
/// slot bits, each placed where `dst`'s layout puts that slot or lane. Tutorial 10's scales, unpacked from their
/// TMA block, are laid out so ([`plan`]'s test).
pub fn scales_source(dst: &Type) -> Result<Type, String> {
    let (shape, elem, _) = crate::tmem_types::scales_parts(dst)?;
    let Some((_, _, layout)) = dst.memdesc() else { unreachable!("scales_parts checked a memdesc") };
    let tmem = &layout.linear;
    let (rows, slots) = (tmem.bases("row"), tmem.bases("col"));
    if rows.len() < 5 || slots.len() < 4 {
        return Err(format!("{} spans fewer than 32 lanes of 16 bytes", crate::tmem_types::layout_name(dst)));
    }
    let to_vec = |b: &[u32]| b.to_vec();
    let offset_bases: Vec<Vec<u32>> =
        slots[..4].iter().chain(&rows[..5]).chain(&slots[4..]).map(|b| to_vec(b)).collect();
    let any = AnyLayout::Shared(SharedLayout::Linear(SharedLinearLayout {
        offset_bases,
        block_bases: vec![],
        alignment: 128,
    }));
    let linear = any.to_linear_buffered(shape).map_err(|e| e.to_string())?;
    Ok(Type::MemDesc {
        shape: crate::types::Shape::from_slice(shape),
        elem,
        layout: Arc::new(Layout { spec: Some(any), linear }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ty(text: &str) -> Type {
        crate::parse::parse_type(text).unwrap()
    }

    #[test]
    fn f32_nvmma_buffers_copy_128_lanes_8_columns_at_a_time() {
        let src = ty("memdesc<128x64xf32, NVMMASharedLayout(128, 32)>");
        let dst = ty("memdesc<128x64xf32, TensorMemoryLayout((128,64), 1)>");
        let p = plan(&src, &dst).unwrap();
        assert_eq!(p.shape, Shape::R128x256b);
        assert_eq!(p.desc, MatrixDesc { swizzle: 128, mn_major: false, lbo: 16, sbo: 1024 });
        // Columns 0-31 are the first 128-byte swizzle atom's 32 elements, 32 bytes per instruction; columns 32-63
        // the second atom, 128 rows x 128 bytes on.
        let starts: Vec<(u32, u32)> = p.instrs.iter().map(|i| (i.column, i.start)).collect();
        assert_eq!(starts, [(0, 0), (8, 32), (16, 64), (24, 96), (32, 16384), (40, 16416), (48, 16448), (56, 16480)]);
    }

    #[test]
    fn scales_in_the_packed_block_view_copy_32_lanes_to_each_quarter() {
        // 128 rows by 8 e8m0 scales, as tutorial 11 unswizzles its TMA block: 4 scales of a row, then the rows
        // 32 and 64 apart, then 32 rows of 16 bytes, then the next 4 scales.
        let src = ty(
            "memdesc<128x8xu8, SharedLinearLayout([[0,1],[0,2],[32,0],[64,0],[1,0],[2,0],[4,0],[8,0],[16,0],[0,4]], [], 128)>",
        );
        let dst = ty("memdesc<128x8xu8, TensorMemoryScalesLayout()>");
        let p = plan(&src, &dst).unwrap();
        assert_eq!(p.shape, Shape::R32x128bWarpx4);
        assert_eq!(p.desc, MatrixDesc { swizzle: 0, mn_major: false, lbo: 16, sbo: 128 });
        assert_eq!(p.instrs, [Instr { column: 0, start: 0 }, Instr { column: 4, start: 512 }]);
    }

    /// The source [`scales_source`] derives is the tutorial's unpacked block for 128 x 8 scales, and a plan copies
    /// from it for every scales shape tutorial 10 uses (A: 128 rows, B: 256 rows; 4, 8 and 16 scales a row).
    #[test]
    fn scales_sources_are_the_packed_block_view() {
        let src = scales_source(&ty("memdesc<128x8xu8, TensorMemoryScalesLayout()>")).unwrap();
        let want = ty(
            "memdesc<128x8xu8, SharedLinearLayout([[0,1],[0,2],[32,0],[64,0],[1,0],[2,0],[4,0],[8,0],[16,0],[0,4]], [], 128)>",
        );
        assert_eq!(src.memdesc().unwrap().2.linear, want.memdesc().unwrap().2.linear);
        for (rows, groups) in [(128, 4), (128, 8), (128, 16), (256, 4), (256, 8), (256, 16)] {
            let dst = ty(&format!("memdesc<{rows}x{groups}xu8, TensorMemoryScalesLayout()>"));
            let p = plan(&scales_source(&dst).unwrap(), &dst).unwrap();
            assert_eq!(p.shape, Shape::R32x128bWarpx4, "{rows}x{groups}");
            assert_eq!(p.instrs.len() as u32, rows * groups / 512, "{rows}x{groups}");
        }
    }

    #[test]
    fn a_source_no_descriptor_reads_is_refused_by_name() {
        // Unswizzled NVMMA of 32-bit elements: 128-byte rows, which no canonical layout of 16-byte core matrices
        // without swizzle has.
        let src = ty("memdesc<128x32xf32, NVMMASharedLayout(0, 32)>");
        let dst = ty("memdesc<128x32xf32, TensorMemoryLayout((128,32), 1)>");
        let e = plan(&src, &dst).unwrap_err();
        assert!(e.contains("no tcgen05.cp copies") && e.contains("cannot be read through a matrix descriptor"), "{e}");
        let e = plan(
            &ty("memdesc<128x32xf16, NVMMASharedLayout(64, 16)>"),
            &ty("memdesc<128x32xf16, TensorMemoryLayout((128,32), 1)>"),
        )
        .unwrap_err();
        assert!(e.contains("copies 32-bit elements"), "{e}");
    }
}
