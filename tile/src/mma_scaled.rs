//! `tcgen05_mma_scaled`: the rules of the block-scaled MMA and the instructions it lowers to, derived from the
//! operands' layouts and checked at every element, so that the verifier, gluon (at the call's span) and codegen
//! share one rule.
//!
//! `acc = (a · a_scale) @ (b · b_scale) (+ acc)`: A `[M, K]` and B `[K, N]` in shared memory hold e4m3, e5m2 or
//! e2m1 values (e2m1 two per `u8` along K: A `[M, K/2]`, B `[K/2, N]`); the scales `[M, K/VEC]` and
//! `[N, K/VEC]` sit in tensor memory laid out by a `TensorMemoryScalesLayout`, each scaling VEC consecutive
//! elements along K. The instruction kinds (PTX ISA `tcgen05.mma ... .block_scale`; `reference/ptx.md` §7.6):
//!
//! * `kind::mxf8f6f4` (`scale_vec::1X`, `.block32`): any mix of e4m3, e5m2 and e2m1, K 32 per instruction, e8m0
//!   scales per 32 elements. An e2m1 operand is read padded: each 16 values (8 bytes) followed by 8 bytes of
//!   padding, which is what `NVMMASharedLayout(fp4_padded=True)` lays out (its padding offsets map onto the data).
//! * `kind::mxf4` (`scale_vec::2X`, `.block32`): e2m1 × e2m1 packed, K 64, e8m0 scales per 32 elements.
//! * `kind::mxf4nvf4` (`scale_vec::4X`, `.block16`; or `2X`, `.block32`): e2m1 × e2m1 packed, K 64, e4m3 scales
//!   per 16 (or 32) elements (nvfp4).
//!
//! The product is a grid of `[128, block N]` instruction tiles (the accumulator's `TensorMemoryLayout`, block M
//! 128) by K steps. Each instruction reads its A and B tiles through matrix descriptors ([`crate::smem_desc`],
//! K-major: 32 bytes of K per row), and the scales of its K step from a tensor-memory address and a byte
//! (`SF_ID`) within the 32-bit column: row i of an A tile (or B's N row i) at lane `i % 32`, column
//! `column + i / 32`, bytes `SF_ID..SF_ID + scales per step`. A `TensorMemoryScalesLayout` places the scales
//! so (four per column along K, the row blocks of 32 in the next columns, the lane quarters holding copies),
//! which the plan checks for every scale.

use tessel_layouts::LinearLayout;

use crate::ops::MxFormat;
use crate::smem_desc::{self, MatrixDesc, Offsets};
use crate::tmem_types;
use crate::types::{ScalarType, Type};
use crate::{cluster, cluster_part};

/// The `.kind` of a block-scaled `tcgen05.mma`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Mxf8f6f4,
    Mxf4,
    Mxf4Nvf4,
}

impl Kind {
    /// `kind::<name>`.
    pub fn ptx(self) -> &'static str {
        match self {
            Kind::Mxf8f6f4 => "mxf8f6f4",
            Kind::Mxf4 => "mxf4",
            Kind::Mxf4Nvf4 => "mxf4nvf4",
        }
    }

    /// The K of one instruction, in values.
    pub fn k_step(self) -> u32 {
        if self == Kind::Mxf8f6f4 { 32 } else { 64 }
    }
}

/// Bytes of K each instruction reads per row of A and B: 32 values of 8 bits, 64 packed e2m1, or 32 e2m1 padded.
const K_BYTES: u32 = 32;

/// One block-scaled MMA: the instruction kind and shape, the operands' descriptors and where each instruction
/// reads and writes. Tiles are indexed `[m or n tile][K step]` (`acc_columns` `[m tile][n tile]`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    pub kind: Kind,
    /// Values per scale (16 or 32).
    pub vec: u32,
    /// e4m3 scales (`ue4m3`), else e8m0.
    pub scale_e4m3: bool,
    pub m: u32,
    pub n: u32,
    pub k: u32,
    /// `[128, block N]` of each instruction.
    pub instr: [u32; 2],
    pub steps: u32,
    pub a_desc: MatrixDesc,
    pub b_desc: MatrixDesc,
    /// The shared-memory byte offset (from the operand's base) each A and B tile's descriptor starts at.
    pub a_starts: Vec<Vec<u32>>,
    pub b_starts: Vec<Vec<u32>>,
    /// Each accumulator tile's first column (from the accumulator's).
    pub acc_columns: Vec<Vec<u32>>,
    /// Each A and B tile's scales: (column from the scales buffer's, `SF_ID`).
    pub a_scales: Vec<Vec<(u32, u32)>>,
    pub b_scales: Vec<Vec<(u32, u32)>>,
}

impl Plan {
    /// Scales each instruction reads per row (1, 2 or 4).
    pub fn scales_per_step(&self) -> u32 {
        self.kind.k_step() / self.vec
    }
}

/// Whether a shared layout pads (several offsets hold one element: an `fp4_padded` NVMMA layout).
fn padded(t: &Type) -> bool {
    t.memdesc().is_some_and(|(_, _, l)| l.linear.bases("offset").iter().any(|b| b.iter().all(|&c| c == 0)))
}

/// The plan of `tcgen05_mma_scaled a, b, acc, a_scale, b_scale, use_acc, pred, (bar, pred)...`, or why the
/// operands are none the instruction takes.
pub fn plan(ins: &[&Type], a_format: MxFormat, b_format: MxFormat) -> Result<Plan, String> {
    if ins.len() < 7 || (ins.len() - 7) % 2 != 0 {
        return Err(format!(
            "expects a, b, acc, a_scale, b_scale, use_acc, pred and (barrier, predicate) pairs; got {} operands",
            ins.len()
        ));
    }
    tmem_types::check_mma_preds(ins[5], ins[6])?;
    tmem_types::check_barriers(&ins[7..])?;
    // A CTA pair's MMA is planned on one CTA's part of each operand (the types codegen compiles against).
    let local: Vec<Type> = ins[..5].iter().map(|t| cluster_part::local_type(t)).collect::<Result<_, _>>()?;
    let (a, b, acc, sa, sb) = (&local[0], &local[1], &local[2], &local[3], &local[4]);
    let pair = cluster::two_ctas(acc);
    let (c_shape, c_layout) = tmem_types::check_accumulator(acc)?;
    let operand = |t: &Type, what: &str, f: MxFormat| -> Result<(Vec<u32>, LinearLayout), String> {
        let Some((shape, elem, l)) = t.memdesc().filter(|_| !t.is_tmem()) else {
            return Err(format!("operand {what} must be a shared-memory memdesc, got {t}"));
        };
        if elem != f.storage() || shape.len() != 2 {
            return Err(format!(
                "operand {what} of format {} is a 2-D buffer of {} (e2m1 packs two values per byte along K), got {t}",
                f.word(),
                f.storage()
            ));
        }
        Ok((shape.to_vec(), l.linear.clone()))
    };
    let (a_shape, a_l) = operand(a, "A", a_format)?;
    let (b_shape, b_l) = operand(b, "B", b_format)?;
    let per_byte = |f: MxFormat| 8 / f.bits();
    // A pair's MMA: each CTA holds its rows of A and of the accumulator, and half of B's columns.
    let halves = if pair { 2 } else { 1 };
    let (m, k, n) = (a_shape[0], a_shape[1] * per_byte(a_format), b_shape[1] * halves);
    if b_shape[0] * per_byte(b_format) != k || c_shape != [m, n] {
        return Err(format!(
            "shapes do not form a matrix product: {a} ({}) x {b} ({}) -> {acc}",
            a_format.word(),
            b_format.word()
        ));
    }
    // The scales.
    let scales = |t: &Type, rows: u32, what: &str| -> Result<(u32, ScalarType, LinearLayout), String> {
        tmem_types::check_scales_type(t).map_err(|e| format!("{what}: {e}"))?;
        let (shape, elem, _) = tmem_types::scales_parts(t)?;
        if shape[0] != rows || shape[1] == 0 || k % shape[1] != 0 {
            return Err(format!("{what} must be [{rows}, K / VEC] for K = {k}, got {t}"));
        }
        Ok((shape[1], elem, t.memdesc().expect("a memdesc").2.linear.clone()))
    };
    if pair
        && (cluster_part::cta_bases(ins[3])? != cluster_part::cta_bases(ins[0])?
            || cluster_part::is_spread(ins[4]) && !cluster_part::cta_bases(ins[4])?.is_empty())
    {
        return Err(format!(
            "a CTA pair's MMA reads A's scales split with A (TensorMemoryScalesLayout(cga_layout=[[1, 0]])) and B's \
             whole in each CTA (cga_layout=[[0, 0]]): each CTA's half of the data path multiplies its rows by every \
             column of B; got {} and {}",
            ins[3], ins[4]
        ));
    }
    let (sa_n, sa_elem, sa_l) = scales(sa, m, "the scales of A")?;
    let (sb_n, sb_elem, sb_l) = scales(sb, n, "the scales of B")?;
    if sa_n != sb_n || sa_elem != sb_elem {
        return Err(format!("the scales of A and B must have one element type and VEC: {sa} and {sb}"));
    }
    let vec = k / sa_n;
    let scale_e4m3 = sa_elem == ScalarType::F8E4M3;
    let fp4 = |f: MxFormat| f == MxFormat::E2m1;
    let (a_pad, b_pad) = (padded(a), padded(b));
    let kind = if fp4(a_format) && fp4(b_format) && !a_pad && !b_pad {
        if scale_e4m3 { Kind::Mxf4Nvf4 } else { Kind::Mxf4 }
    } else {
        for (f, pad, what) in [(a_format, a_pad, "A"), (b_format, b_pad, "B")] {
            if fp4(f) && !pad {
                return Err(format!(
                    "operand {what} (e2m1) of an MMA with an 8-bit operand (kind::mxf8f6f4) is read padded: lay it \
                     out with NVMMASharedLayout(..., fp4_padded=True)"
                ));
            }
            if !fp4(f) && pad {
                return Err(format!("operand {what} ({}) is in a padded (fp4_padded) layout", f.word()));
            }
        }
        Kind::Mxf8f6f4
    };
    match (kind, scale_e4m3, vec) {
        (Kind::Mxf4Nvf4, _, 16 | 32) | (Kind::Mxf4 | Kind::Mxf8f6f4, false, 32) => {}
        (Kind::Mxf8f6f4, true, _) => {
            return Err("e4m3 scales (nvfp4) go with two e2m1 operands; an fp8 operand takes e8m0 (u8) scales".into());
        }
        _ => {
            return Err(format!(
                "{} scales per {vec} values are not a block-scaled MMA of sm_100a (e8m0 scales scale 32 values, e4m3 \
                 scales 16 or 32 e2m1 values)",
                if scale_e4m3 { "e4m3" } else { "e8m0" }
            ));
        }
    }
    let k_step = kind.k_step();
    if k % k_step != 0 {
        return Err(format!("K must be a multiple of {k_step} for kind::{}, got {k}", kind.ptx()));
    }
    if c_layout.block[0] != 128 || m % 128 != 0 {
        return Err(format!(
            "the block-scaled MMA is M 128 per instruction: M a multiple of 128 and the accumulator's block M 128, \
             got M {m} in {}",
            tmem_types::layout_name(acc)
        ));
    }
    let [im, inn] = tmem_types::instr_shape(c_layout, m, n);
    if inn % 16 != 0 || !(16..=256).contains(&inn) || n % inn != 0 {
        return Err(format!(
            "each MMA's N (the accumulator's block N, at most N) must be a multiple of 16 in 16..=256, got {inn} of \
             N = {n}"
        ));
    }
    if pair && n != inn {
        return Err(format!(
            "a CTA pair's block-scaled MMA is one instruction along N (the accumulator's block N, {inn}, must be \
             N = {n}): each CTA holds half of each instruction's B columns"
        ));
    }
    let steps = k / k_step;
    let (m_tiles, n_tiles) = (m / im, n / inn);
    // The operands' descriptors.
    let operand_plan = |l: &LinearLayout, op: smem_desc::Operand, pad: bool, rows: u32, tiles: u32, what: &str| {
        let offsets = Offsets::new(l)?;
        let at = |row: u32, kb: u32| -> u32 {
            if pad {
                // Padded byte kb: data byte (kb / 16) * 8 + kb % 8 of the packed row, or the 8 bytes after it.
                offsets.of(op.coords(row, kb / 16 * 8 + kb % 8)) + if kb % 16 >= 8 { 8 } else { 0 }
            } else {
                offsets.of(op.coords(row, kb))
            }
        };
        let origins: Vec<(u32, u32)> =
            (0..tiles).flat_map(|t| (0..steps).map(move |s| (t * rows, s * K_BYTES))).collect();
        let desc =
            smem_desc::derive_by(&at, 1, rows, K_BYTES, &origins, false).map_err(|e| format!("operand {what}: {e}"))?;
        if desc.mn_major {
            return Err(format!(
                "operand {what} of a block-scaled MMA must be K-major (K contiguous) in shared memory"
            ));
        }
        let starts: Vec<Vec<u32>> =
            (0..tiles).map(|t| (0..steps).map(|s| at(t * rows, s * K_BYTES)).collect()).collect();
        Ok::<_, String>((desc, starts))
    };
    let (a_desc, a_starts) = operand_plan(&a_l, smem_desc::Operand::A, a_pad, im, m_tiles, "A")?;
    let (b_desc, b_starts) = operand_plan(&b_l, smem_desc::Operand::B, b_pad, inn / halves, n_tiles, "B")?;
    let acc_columns = accumulator_columns(&acc.memdesc().expect("a memdesc").2.linear, [im, inn], [m_tiles, n_tiles])?;
    let cps = k_step / vec;
    let ids: &[u32] = match cps {
        1 => &[0, 1, 2, 3],
        2 => &[0, 2],
        _ => &[0],
    };
    let a_scales = scale_plan(&sa_l, im, m_tiles, steps, cps, ids, "the scales of A")?;
    let b_scales = scale_plan(&sb_l, inn, n_tiles, steps, cps, ids, "the scales of B")?;
    Ok(Plan {
        kind,
        vec,
        scale_e4m3,
        m,
        n,
        k,
        instr: [im, inn],
        steps,
        a_desc,
        b_desc,
        a_starts,
        b_starts,
        acc_columns,
        a_scales,
        b_scales,
    })
}

/// The first column of each `[tile M, tile N]` accumulator tile, checked: row i of a tile in lane i, column j
/// `j` columns on (the data path of an M-128 instruction).
fn accumulator_columns(acc: &LinearLayout, tile: [u32; 2], tiles: [u32; 2]) -> Result<Vec<Vec<u32>>, String> {
    let place = crate::tmem::placements(acc);
    let mut out = Vec::new();
    for mi in 0..tiles[0] {
        let mut row = Vec::new();
        for ni in 0..tiles[1] {
            let origin = (mi * tile[0], ni * tile[1]);
            let (_, c0) = place[&origin][0];
            for i in 0..tile[0] {
                for j in 0..tile[1] {
                    let at = &place[&(origin.0 + i, origin.1 + j)];
                    if !at.contains(&(i, c0 + j)) {
                        return Err(format!(
                            "the accumulator's tile at {origin:?} is not in the data path layout of an M-128 MMA: \
                             element ({}, {}) is at {at:?} (lane, column), the instruction writes it at ({i}, {})",
                            origin.0 + i,
                            origin.1 + j,
                            c0 + j
                        ));
                    }
                }
            }
            row.push(c0);
        }
        out.push(row);
    }
    Ok(out)
}

/// Where each instruction reads its scales: for `tiles` tiles of `rows` rows and `steps` K steps of `cps`
/// scales, (column, `SF_ID`) of the tile's first scale, checked for every scale: row i at lane `i % 32`,
/// column `column + i / 32`, byte `SF_ID + j` for its j-th scale. `ids` are the `SF_ID`s the kind allows.
fn scale_plan(
    layout: &LinearLayout,
    rows: u32,
    tiles: u32,
    steps: u32,
    cps: u32,
    ids: &[u32],
    what: &str,
) -> Result<Vec<Vec<(u32, u32)>>, String> {
    let place = crate::tmem::placements(layout);
    let lane0 = |e: (u32, u32)| -> Option<(u32, u32)> { place.get(&e)?.iter().copied().find(|&(lane, _)| lane < 32) };
    let mut out = Vec::new();
    for t in 0..tiles {
        let mut row = Vec::new();
        for s in 0..steps {
            let origin = (t * rows, s * cps);
            let Some((0, slot0)) = lane0(origin) else {
                return Err(format!("{what}: scale {origin:?} is not at lane 0 of tensor memory"));
            };
            let (col0, id) = (slot0 / 4, slot0 % 4);
            if !ids.contains(&id) {
                return Err(format!(
                    "{what}: the {cps} scale(s) per instruction of scale {origin:?} start at byte {id} of a column \
                     (the instruction takes SF_ID {ids:?})"
                ));
            }
            for i in 0..rows {
                for j in 0..cps {
                    let e = (origin.0 + i, origin.1 + j);
                    let want = (i % 32, (col0 + i / 32) * 4 + id + j);
                    if !place.get(&e).is_some_and(|at| at.contains(&want)) {
                        return Err(format!(
                            "{what}: scale {e:?} is not where the instruction reads it (lane {}, column {}, byte {})",
                            want.0,
                            want.1 / 4,
                            want.1 % 4
                        ));
                    }
                }
            }
            row.push((col0, id));
        }
        out.push(row);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ty(text: &str) -> Type {
        crate::parse::parse_type(text).unwrap()
    }

    fn ops(a: &str, b: &str, acc: &str, sa: &str, sb: &str) -> Vec<Type> {
        let i1 = ty("i1");
        vec![ty(a), ty(b), ty(acc), ty(sa), ty(sb), i1.clone(), i1]
    }

    fn run(v: &[Type], fa: MxFormat, fb: MxFormat) -> Result<Plan, String> {
        plan(&v.iter().collect::<Vec<_>>(), fa, fb)
    }

    // B is the transposed view of an [N, K] buffer, as the tutorial passes `b_smem.permute((1, 0))`.
    const ACC: &str = "memdesc<128x128xf32, TensorMemoryLayout((128,128), 1)>";

    #[test]
    fn mxfp8_reads_32_bytes_of_k_per_instruction_and_one_scale_per_row() {
        let v = ops(
            "memdesc<128x128xf8e4m3, NVMMASharedLayout(128, 8)>",
            "memdesc<128x128xf8e4m3, NVMMASharedLayout(128, 8, transposed=True)>",
            ACC,
            "memdesc<128x4xu8, TensorMemoryScalesLayout()>",
            "memdesc<128x4xu8, TensorMemoryScalesLayout()>",
        );
        let p = run(&v, MxFormat::E4m3, MxFormat::E4m3).unwrap();
        assert_eq!((p.kind, p.vec, p.steps, p.instr), (Kind::Mxf8f6f4, 32, 4, [128, 128]));
        assert_eq!(p.a_desc, MatrixDesc { swizzle: 128, mn_major: false, lbo: 16, sbo: 1024 });
        assert_eq!(p.a_starts[0], [0, 32, 64, 96]);
        // One scale per step: bytes 0..3 of columns 0..3 (a column per 32 rows).
        assert_eq!(p.a_scales[0], [(0, 0), (0, 1), (0, 2), (0, 3)]);
    }

    #[test]
    fn nvfp4_takes_four_e4m3_scales_per_instruction_and_mxfp4_two() {
        let v = |scale: &str| {
            ops(
                "memdesc<128x128xu8, NVMMASharedLayout(128, 8)>",
                "memdesc<128x128xu8, NVMMASharedLayout(128, 8, transposed=True)>",
                ACC,
                &format!("memdesc<128x{}, TensorMemoryScalesLayout()>", scale),
                &format!("memdesc<128x{}, TensorMemoryScalesLayout()>", scale),
            )
        };
        let p = run(&v("16xf8e4m3"), MxFormat::E2m1, MxFormat::E2m1).unwrap();
        assert_eq!((p.kind, p.vec, p.steps, p.scales_per_step()), (Kind::Mxf4Nvf4, 16, 4, 4));
        // Four scales per step fill a column: the next step's are 4 columns (the 128 rows) on.
        assert_eq!(p.a_scales[0], [(0, 0), (4, 0), (8, 0), (12, 0)]);
        let p = run(&v("8xu8"), MxFormat::E2m1, MxFormat::E2m1).unwrap();
        assert_eq!((p.kind, p.vec, p.scales_per_step()), (Kind::Mxf4, 32, 2));
        assert_eq!(p.a_scales[0], [(0, 0), (0, 2), (4, 0), (4, 2)]);
    }

    #[test]
    fn an_e2m1_operand_beside_fp8_must_be_padded() {
        let sa = "memdesc<128x4xu8, TensorMemoryScalesLayout()>";
        let v = ops(
            "memdesc<128x128xf8e4m3, NVMMASharedLayout(128, 8)>",
            "memdesc<64x128xu8, NVMMASharedLayout(64, 8, transposed=True)>",
            ACC,
            sa,
            sa,
        );
        let e = run(&v, MxFormat::E4m3, MxFormat::E2m1).unwrap_err();
        assert!(e.contains("fp4_padded=True"), "{e}");
        let v = ops(
            "memdesc<128x128xf8e4m3, NVMMASharedLayout(128, 8)>",
            "memdesc<64x128xu8, NVMMASharedLayout(128, 8, transposed=True, fp4_padded=True)>",
            ACC,
            sa,
            sa,
        );
        let p = run(&v, MxFormat::E4m3, MxFormat::E2m1).unwrap();
        assert_eq!((p.kind, p.steps), (Kind::Mxf8f6f4, 4));
        // 32 padded bytes per step: 16 data bytes of K.
        assert_eq!(p.b_desc.swizzle, 128);
    }

    #[test]
    fn a_cta_pair_is_planned_on_one_ctas_part() {
        // Example 04 on a pair: A [256, 128] and B [128, 128] split by the pair, the accumulator of the pair, A's
        // scales split with A and B's whole in each CTA.
        let sa = "memdesc<256x4xu8, TensorMemoryScalesLayout(cga_layout=[[1, 0]])>";
        let sb = "memdesc<128x4xu8, TensorMemoryScalesLayout(cga_layout=[[0, 0]])>";
        let v = |sa: &str, sb: &str| {
            ops(
                "memdesc<256x128xf8e4m3, NVMMASharedLayout(128, 8, cga_layout=[[1,0]])>",
                "memdesc<128x128xf8e4m3, NVMMASharedLayout(128, 8, transposed=True, cga_layout=[[0,1]])>",
                "memdesc<256x128xf32, TensorMemoryLayout((128,128), 1, cta_split_num=(2,1), two_ctas=True)>",
                sa,
                sb,
            )
        };
        let p = run(&v(sa, sb), MxFormat::E4m3, MxFormat::E4m3).unwrap();
        // Each CTA's instruction tile: its 128 rows by all 128 columns, B's descriptor over its 64 rows of N.
        assert_eq!((p.m, p.n, p.instr, p.a_starts.len(), p.b_starts.len()), (128, 128, [128, 128], 1, 1));
        assert_eq!(p.b_scales[0], [(0, 0), (0, 1), (0, 2), (0, 3)]);
        // B's scales split like A's: refused, saying how a pair reads them.
        let split_b = "memdesc<128x4xu8, TensorMemoryScalesLayout(cga_layout=[[1, 0]])>";
        let e = run(&v(sa, split_b), MxFormat::E4m3, MxFormat::E4m3).unwrap_err();
        assert!(e.contains("whole in each CTA"), "{e}");
    }

    #[test]
    fn wrong_scales_are_refused_by_name() {
        let a = "memdesc<128x128xf8e4m3, NVMMASharedLayout(128, 8)>";
        let b = "memdesc<128x128xf8e4m3, NVMMASharedLayout(128, 8, transposed=True)>";
        // Scales in a TensorMemoryLayout buffer.
        let v = ops(
            a,
            b,
            ACC,
            "memdesc<128x4xf32, TensorMemoryLayout((128,4), 1)>",
            "memdesc<128x4xu8, TensorMemoryScalesLayout()>",
        );
        let e = run(&v, MxFormat::E4m3, MxFormat::E4m3).unwrap_err();
        assert!(e.contains("the scales of A") && e.contains("TensorMemoryScalesLayout"), "{e}");
        // e4m3 scales with fp8 operands.
        let s = "memdesc<128x4xf8e4m3, TensorMemoryScalesLayout()>";
        let e = run(&ops(a, b, ACC, s, s), MxFormat::E4m3, MxFormat::E4m3).unwrap_err();
        assert!(e.contains("an fp8 operand takes e8m0"), "{e}");
        // VEC 16 with e8m0 scales.
        let s = "memdesc<128x8xu8, TensorMemoryScalesLayout()>";
        let e = run(&ops(a, b, ACC, s, s), MxFormat::E4m3, MxFormat::E4m3).unwrap_err();
        assert!(e.contains("per 16 values are not a block-scaled MMA"), "{e}");
    }
}
