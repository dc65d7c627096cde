//! TMA im2col loads for the simulator, from the PTX ISA (§5.5.4 "im2col mode" and `cp.async.bulk.tensor`) and the
//! parameters of `cuTensorMapEncodeIm2col`, independently of tessel-codegen and of the interpreter:
//! `cp.async.bulk.tensor.{3,4,5}d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes [dst], [map, {coords}],
//! [mbar], {offsets}`.
//!
//! The tensor is a batch of images, channels innermost: `NWC`, `NHWC` or `NDHWC`. The map holds a *bounding box* in
//! the spatial (DHW) space: per spatial dim, the lower corner (relative to coordinate 0) and the upper corner
//! (relative to the dim's last coordinate, `dim - 1`), both inclusive; *Pixels-per-Column*, how many pixels (in NDHW
//! space) a load reads; *Channels-per-Pixel*, how many channels of each; and a traversal stride per dim.
//!
//! The instruction's coordinates (innermost first: C, then W, H, D, then N) are, along N and C, where the load starts
//! as in tile mode, and along DHW the position of the filter's base in the tensor, which must lie in the bounding
//! box. The load walks the bounding box from that position: W fastest, by its traversal stride, a dim that passes
//! the box's upper corner starting again at its lower corner and carrying into the next outer dim, past the
//! outermost spatial dim into the next image (N). Each position of the walk, shifted by the im2col offsets (unsigned,
//! one per spatial dim, innermost first: up to 2^16-1, 2^8-1 and 2^5-1 for 3, 4 and 5 dims), is one pixel: its
//! channels `c .. c + Channels-per-Pixel` form one row of the box in shared memory, the rows in walk order, swizzled
//! in the shared address as any TMA box. An element outside the tensor (a shifted position outside the image, an
//! image past the batch, a channel past C) reads zero (the tile mode's fill; NaN-filled maps are not simulated).
//! The box's bytes complete on the mbarrier at once, as a tile load's (`tma::land`).
//!
//! Not simulated (refused): `.multicast::cluster`, the `im2col::w` modes, traversal strides other than 1 along N
//! and C.

use super::tma::{Delivery, swizzled};
use super::{Cta, Global, Ins, Opnd};

/// An im2col tensor map (`cuTensorMapEncodeIm2col`): dims and byte strides outermost first (`[N, (D,) (H,) W, C]`;
/// the innermost stride is the element size), the bounding box's corners per spatial dim outermost first (lower
/// relative to 0, upper relative to `dim - 1`), Channels-per-Pixel and Pixels-per-Column (the box in shared memory),
/// a traversal stride per dim outermost first, and the swizzle span in bytes (0, 32, 64 or 128).
#[derive(Clone, Debug)]
pub struct Im2colMap {
    pub base: u64,
    pub elem_bytes: u32,
    pub dims: Vec<u64>,
    pub strides: Vec<u64>,
    pub lower: Vec<i32>,
    pub upper: Vec<i32>,
    pub channels_per_pixel: u32,
    pub pixels_per_column: u32,
    pub element_strides: Vec<u32>,
    pub swizzle: u32,
}

/// Checks the map against what `cuTensorMapEncodeIm2col` accepts and what is simulated.
fn check_map(m: &Im2colMap) -> Result<(), String> {
    let r = m.dims.len();
    if !(3..=5).contains(&r) || m.strides.len() != r || m.element_strides.len() != r {
        return Err(format!(
            "an im2col map has rank 3 to 5 with a stride and a traversal stride per dim: dims {:?}, strides {:?}, \
             traversal strides {:?}",
            m.dims, m.strides, m.element_strides
        ));
    }
    if m.lower.len() != r - 2 || m.upper.len() != r - 2 {
        return Err(format!(
            "a rank-{r} im2col map has {} corners per side, got {:?} and {:?}",
            r - 2,
            m.lower,
            m.upper
        ));
    }
    // The corners are signed 16-, 8- and 5-bit numbers for 3, 4 and 5 dims.
    let bits = [16, 8, 5][r - 3];
    let (lo, hi) = (-(1i64 << (bits - 1)), (1i64 << (bits - 1)) - 1);
    if let Some(c) = m.lower.iter().chain(&m.upper).find(|&&c| !(lo..=hi).contains(&(c as i64))) {
        return Err(format!("an im2col corner of a rank-{r} map is within {lo}..={hi}, got {c}"));
    }
    if m.element_strides.iter().any(|&s| !(1..=8).contains(&s)) {
        return Err(format!("traversal strides are 1 to 8, got {:?}", m.element_strides));
    }
    if m.element_strides[0] != 1 || m.element_strides[r - 1] != 1 {
        return Err(format!(
            "im2col traversal strides along N and C other than 1 are not simulated: {:?}",
            m.element_strides
        ));
    }
    if !(1..=256).contains(&m.pixels_per_column) || !(1..=256).contains(&m.channels_per_pixel) {
        return Err(format!(
            "Pixels-per-Column and Channels-per-Pixel are 1 to 256, got {} and {}",
            m.pixels_per_column, m.channels_per_pixel
        ));
    }
    let row = m.channels_per_pixel * m.elem_bytes;
    if m.swizzle != 0 && row > m.swizzle {
        return Err(format!("a pixel's {row} bytes of channels are wider than the {}-byte swizzle span", m.swizzle));
    }
    if m.strides[r - 1] != m.elem_bytes as u64 {
        return Err(format!("the channels of an im2col map are contiguous, not {} bytes apart", m.strides[r - 1]));
    }
    Ok(())
}

/// The global address of each element of the box a load at `coords` with `offsets` reads (both innermost first, as
/// the instruction gives them), pixel by pixel in walk order and channels innermost; `None` outside the tensor.
fn elements(m: &Im2colMap, coords: &[i64], offsets: &[i64]) -> Result<Vec<Option<u64>>, String> {
    check_map(m)?;
    let r = m.dims.len();
    let s = r - 2;
    if coords.len() != r || offsets.len() != s {
        return Err(format!(
            "a rank-{r} im2col load takes {r} coordinates and {s} offsets, got {} and {}",
            coords.len(),
            offsets.len()
        ));
    }
    // The offsets are unsigned 16-, 8- and 5-bit numbers for 3, 4 and 5 dims.
    let off_max = [(1i64 << 16) - 1, (1 << 8) - 1, (1 << 5) - 1][r - 3];
    if let Some(o) = offsets.iter().find(|&&o| !(0..=off_max).contains(&o)) {
        return Err(format!("an im2col offset of a rank-{r} load is within 0..={off_max}, got {o}"));
    }
    // Outermost first from here: spatial dim k is tensor dim k + 1.
    let (n0, c0) = (coords[r - 1], coords[0]);
    let mut at: Vec<i64> = (0..s).map(|k| coords[r - 2 - k]).collect();
    let shift: Vec<i64> = (0..s).map(|k| offsets[s - 1 - k]).collect();
    let first: Vec<i64> = m.lower.iter().map(|&l| l as i64).collect();
    let last: Vec<i64> = (0..s).map(|k| m.dims[k + 1] as i64 - 1 + m.upper[k] as i64).collect();
    for k in 0..s {
        if !(first[k]..=last[k]).contains(&at[k]) {
            return Err(format!(
                "im2col load at spatial coordinate {} along dim {}: the filter base must lie in the bounding box \
                 {}..={}",
                at[k],
                k + 1,
                first[k],
                last[k]
            ));
        }
    }
    let inside = |x: i64, d: usize| x >= 0 && (x as u64) < m.dims[d];
    let mut n = n0;
    let mut out = Vec::with_capacity((m.pixels_per_column * m.channels_per_pixel) as usize);
    for _ in 0..m.pixels_per_column {
        // The pixel's address, if the image and its shifted position are inside the tensor.
        let mut pixel = inside(n, 0).then(|| m.base + n as u64 * m.strides[0]);
        for k in 0..s {
            let x = at[k] + shift[k];
            pixel = pixel.filter(|_| inside(x, k + 1)).map(|a| a + x as u64 * m.strides[k + 1]);
        }
        for j in 0..m.channels_per_pixel as i64 {
            let ch = c0 + j;
            out.push(pixel.filter(|_| inside(ch, r - 1)).map(|a| a + ch as u64 * m.strides[r - 1]));
        }
        // The next position: the innermost spatial dim by its stride, wrapping at the box's upper corner.
        let mut k = s;
        loop {
            if k == 0 {
                n += 1;
                break;
            }
            k -= 1;
            at[k] += m.element_strides[k + 1] as i64;
            if at[k] <= last[k] {
                break;
            }
            at[k] = first[k];
        }
    }
    Ok(out)
}

/// `cp.async.bulk.tensor.Nd...im2col` by thread `t`: the box lands in shared memory and completes its bytes on the
/// mbarrier.
pub(super) fn copy(c: &mut Cta, g: &mut Global, ins: &Ins, t: usize) -> Result<(), String> {
    let op = ins.op.as_str();
    if op.contains("im2col::") || op.contains(".multicast") {
        return Err("only plain im2col loads are simulated (not multicast, not the im2col::w modes)".into());
    }
    if !(op.contains(".shared::cluster.global") || op.contains(".shared::cta.global")) {
        return Err("an im2col copy is a load from global to shared memory".into());
    }
    let a = &ins.args;
    let (Some(Opnd::Coords(map_op, regs)), Some(Opnd::Vec(offs))) = (a.get(1), a.get(3)) else {
        return Err("an im2col load takes [dst], [tensor map, {coordinates}], [mbarrier], {offsets}".into());
    };
    let map_at = c.val(t, map_op)?;
    let m = g.im2col.get(&map_at).ok_or_else(|| format!("no im2col tensor map at {map_at:#x}"))?.clone();
    let rank = op.split('.').find_map(|p| p.strip_suffix('d').and_then(|d| d.parse::<usize>().ok()));
    if rank != Some(m.dims.len()) {
        return Err(format!("`{op}` over a rank-{} im2col map", m.dims.len()));
    }
    let coords: Vec<i64> = regs.iter().map(|&r| c.regs[t][r] as u32 as i32 as i64).collect();
    let offsets = offs
        .iter()
        .map(|r| r.map(|r| c.regs[t][r] as u16 as i64).ok_or("`_` among the im2col offsets"))
        .collect::<Result<Vec<i64>, _>>()?;
    let elems = elements(&m, &coords, &offsets)?;
    let dst = c.addr(t, &a[0])?;
    if dst % 128 != 0 {
        return Err(format!("an im2col load to shared address {dst}: bulk tensor copies need 128-byte alignment"));
    }
    let eb = m.elem_bytes as usize;
    let mut writes = Vec::with_capacity(elems.len());
    for (i, at) in elems.iter().enumerate() {
        let bytes = match at {
            Some(a) => g.slice(*a, eb)?.to_vec(),
            None => vec![0; eb],
        };
        let s = swizzled(dst, (i * eb) as u64, m.swizzle) as usize;
        if s + eb > c.smem.len() {
            return Err(format!("an im2col load writes shared bytes {s}.. past the {} allocated", c.smem.len()));
        }
        writes.push((s, bytes));
    }
    let bar = c.addr(t, &a[2])?;
    super::tma::land(c, Delivery { writes, bar, tx: (elems.len() * eb) as u32, known: 0 }, Some(t))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 4-byte-element `[n, 4, 4, 32]` image at address 0 with the given corners, 16 pixels of 32 channels.
    fn map(n: u64, lower: [i32; 2], upper: [i32; 2]) -> Im2colMap {
        Im2colMap {
            base: 0,
            elem_bytes: 4,
            dims: vec![n, 4, 4, 32],
            strides: vec![4 * 4 * 32 * 4, 4 * 32 * 4, 32 * 4, 4],
            lower: lower.to_vec(),
            upper: upper.to_vec(),
            channels_per_pixel: 32,
            pixels_per_column: 16,
            element_strides: vec![1; 4],
            swizzle: 128,
        }
    }

    /// Channel 0 of each pixel of a load at `[n, h, w, c]` with offsets `[h, w]`, the image holding pixel number
    /// plus one in every channel (as NVIDIA's Gluon tutorial 13 fills it): 0 where the load reads padding.
    fn column(m: &Im2colMap, nhwc: [i64; 4], offsets: [i64; 2]) -> Vec<u64> {
        let coords: Vec<i64> = nhwc.iter().rev().copied().collect();
        let offs: Vec<i64> = offsets.iter().rev().copied().collect();
        let elems = elements(m, &coords, &offs).unwrap();
        elems.chunks(32).map(|px| px[0].map_or(0, |a| a / (32 * 4) + 1)).collect()
    }

    /// The five examples of NVIDIA's Gluon tutorial 13 (13-conv-im2col.py), with the values its text gives for them
    /// (what the GPU loads): no padding, a padded box, the same shifted by offsets, and two across images.
    #[test]
    fn the_tutorial_examples_load_what_the_tutorial_says() {
        let all: Vec<u64> = (1..=16).collect();
        assert_eq!(column(&map(1, [0, 0], [0, 0]), [0, 0, 0, 0], [0, 0]), all);
        let padded = map(1, [-1, -1], [-1, -1]);
        assert_eq!(column(&padded, [0, -1, -1, 0], [0, 0]), [0, 0, 0, 0, 0, 1, 2, 3, 0, 5, 6, 7, 0, 9, 10, 11]);
        assert_eq!(column(&padded, [0, -1, -1, 0], [1, 1]), all);
        assert_eq!(column(&map(2, [0, 0], [0, 0]), [0, 1, 3, 0], [0, 0]), (8..=23).collect::<Vec<u64>>());
        let two = map(2, [-1, -1], [-1, -1]);
        assert_eq!(column(&two, [0, 1, 2, 0], [0, 0]), [7, 0, 9, 10, 11, 0, 0, 0, 0, 0, 17, 18, 19, 0, 21, 22]);
    }

    /// A wrong corner or offset, or channels past the tensor, change what a load reads; a filter base outside the
    /// bounding box and offsets out of range are refused.
    #[test]
    fn corners_offsets_and_channels_matter() {
        let padded = column(&map(1, [-1, -1], [-1, -1]), [0, -1, -1, 0], [0, 0]);
        assert_ne!(column(&map(1, [-1, -1], [-1, 0]), [0, -1, -1, 0], [0, 0]), padded, "upper corner W");
        assert_ne!(column(&map(1, [-1, -2], [-1, -1]), [0, -1, -1, 0], [0, 0]), padded, "lower corner W");
        assert_ne!(column(&map(1, [-1, -1], [-1, -1]), [0, -1, -1, 0], [0, 1]), padded, "offset W");
        assert_ne!(column(&map(1, [-1, -1], [-1, -1]), [0, -1, -1, 0], [1, 0]), padded, "offset H");
        // An offset along H alone: the rows move down one, the column before the image stays padding.
        let h_only = column(&map(1, [-1, -1], [-1, -1]), [0, -1, -1, 0], [1, 0]);
        assert_eq!(h_only, [0, 1, 2, 3, 0, 5, 6, 7, 0, 9, 10, 11, 0, 13, 14, 15]);
        // Channels 16.. of a 32-channel image: the last 16 of each pixel read zero.
        let elems = elements(&map(1, [0, 0], [0, 0]), &[16, 0, 0, 0], &[0, 0]).unwrap();
        assert!(
            elems.chunks(32).all(|px| px[..16].iter().all(Option::is_some) && px[16..].iter().all(Option::is_none))
        );
        assert!(elements(&map(1, [0, 0], [0, 0]), &[0, -1, 0, 0], &[0, 0]).is_err(), "base outside the box");
        assert!(elements(&map(1, [0, 0], [0, 0]), &[0, 0, 0, 0], &[256, 0]).is_err(), "4-d offsets are 8-bit");
    }

    /// A traversal stride of 2 along H and W (a strided convolution's output pixels) visits every other position of
    /// the box, each row from the lower corner.
    #[test]
    fn traversal_strides_step_through_the_box() {
        let mut m = map(1, [-1, -1], [-1, -1]);
        m.element_strides = vec![1, 2, 2, 1];
        m.pixels_per_column = 4;
        // Box H, W in -1..=2: positions -1 and 1 along each; shifted by (1, 1): 0 and 2.
        assert_eq!(column(&m, [0, -1, -1, 0], [1, 1]), [1, 3, 9, 11]);
    }
}
