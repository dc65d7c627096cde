//! TMA gather4 and scatter4 for the simulator (sm_100a), from the PTX ISA, independently of tessel-codegen:
//! `cp.async.bulk.tensor.2d...tile::gather4` / `tile::scatter4` with coordinates `{col, row0, row1, row2,
//! row3}` over a 2-d tensor map whose box is one row of `w` columns. Row `k` of the four is tensor row `row_k`,
//! columns `col .. col + w`, at byte `k * w * elem` of the shared box (swizzled in the shared address as any TMA
//! box); a gather reads zero outside the tensor and completes `4 * w` elements' bytes on the mbarrier, a scatter
//! writes the elements inside it. The shared address is 128-byte aligned, as for every bulk tensor copy. A box of
//! more than one row is not simulated (and not what codegen encodes). A gather's destinations are a tile load's
//! (`tma::deliver`): `.multicast::cluster` lands the four rows at the same offset in every CTA of the mask, each
//! completing on its own mbarrier, and `.cta_group::2` completes each destination's bytes on its pair's even
//! CTA's mbarrier.

use super::tma::swizzled;
use super::{Cta, Global, Ins, Opnd};

/// `cp.async.bulk.tensor.2d...tile::gather4` or `tile::scatter4` by thread `t`.
pub(super) fn copy(c: &mut Cta, g: &mut Global, ins: &Ins, t: usize) -> Result<(), String> {
    let op = ins.op.as_str();
    let gather = op.contains("tile::gather4");
    let a = &ins.args;
    let (coords_op, smem_op) = if gather { (&a[1], &a[0]) } else { (&a[0], &a[1]) };
    let Opnd::Coords(map_op, regs) = coords_op else { return Err("no [tensor map, {coordinates}]".into()) };
    let map_at = c.val(t, map_op)?;
    let m = g.maps.get(&map_at).ok_or_else(|| format!("no tensor map at {map_at:#x}"))?.clone();
    if m.box_dims.len() != 2 || regs.len() != 5 {
        return Err(format!(
            "gather4/scatter4 take a 2-d tensor map and 5 coordinates, got rank {} and {}",
            m.box_dims.len(),
            regs.len()
        ));
    }
    if m.box_dims[0] != 1 || m.fp4_padded {
        return Err(format!("a gather4/scatter4 map with box {:?} is not simulated (one row only)", m.box_dims));
    }
    let coord = |k: usize| c.regs[t][regs[k]] as u32 as i32 as i64;
    let (col, rows) = (coord(0), [coord(1), coord(2), coord(3), coord(4)]);
    let (w, eb) = (m.box_dims[1] as i64, m.elem_bytes as usize);
    if !gather && (col < 0 || rows.iter().any(|&r| r < 0)) {
        return Err(format!("scatter4 to negative coordinates (col {col}, rows {rows:?}): an illegal instruction"));
    }
    if (col * eb as i64) % 16 != 0 {
        return Err(format!("gather4/scatter4 at column {col}: not 16-byte aligned, an illegal instruction"));
    }
    let at = |r: i64, j: i64| {
        let x = col + j;
        (r >= 0 && (r as u64) < m.dims[0] && x >= 0 && (x as u64) < m.dims[1])
            .then(|| m.base + r as u64 * m.strides[0] + x as u64 * m.strides[1])
    };
    let base = c.addr(t, smem_op)?;
    if base % 128 != 0 {
        return Err(format!("gather4/scatter4 at shared address {base}: bulk tensor copies need 128-byte alignment"));
    }
    if gather {
        let mut writes = Vec::with_capacity(4 * w as usize);
        for (k, &r) in rows.iter().enumerate() {
            for j in 0..w {
                let bytes = match at(r, j) {
                    Some(addr) => g.slice(addr, eb)?.to_vec(),
                    None => vec![0; eb],
                };
                let s = swizzled(base, ((k as i64 * w + j) as usize * eb) as u64, m.swizzle) as usize;
                if s + eb > c.smem.len() {
                    return Err(format!("a gather4 writes shared bytes {s}.. past the {} allocated", c.smem.len()));
                }
                writes.push((s, bytes));
            }
        }
        let bar = c.addr(t, &a[2])?;
        super::tma::deliver(c, t, op, a, writes, bar, (4 * w as usize * eb) as u32)
    } else {
        for (k, &r) in rows.iter().enumerate() {
            for j in 0..w {
                let s = swizzled(base, ((k as i64 * w + j) as usize * eb) as u64, m.swizzle);
                for i in 0..eb as u64 {
                    c.async_read(s + i, "a scatter4")?;
                }
                let bytes = c.smem(t, s, eb, None)?.to_vec();
                if let Some(addr) = at(r, j) {
                    g.slice(addr, eb)?.copy_from_slice(&bytes);
                }
            }
        }
        Ok(())
    }
}
