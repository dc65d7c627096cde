//! TMA's im2col mode (`cuTensorMapEncodeIm2col`, `cp.async.bulk.tensor.Nd...im2col`): which elements of a
//! channels-last tensor (`[N, spatial..., C]`, rank 3 to 5) a load of a `[pixels, channels]` block reads.
//!
//! The tensor map holds the pixel box: per spatial dim `d`, the base positions `lower[d] ..= dim[d] - 1 +
//! upper[d]` (closed at both ends). A load walks the box's base positions from its coordinates (batch and
//! spatial), the last spatial dim fastest, a dim that passes its upper bound restarting at its lower bound and
//! carrying into the next outer dim, the batch last (unbounded: batches past the tensor read padding). Pixel `p`
//! of the block is the `p`-th position of the walk shifted by the load's offsets (the filter tap), and its
//! channels are `coord_c ..` (the block's channel count). Positions outside the tensor read the padding value.
//! A spatial dim's element stride is the step of its walk (a strided convolution's output pixels: the box's
//! lower corner is then the first position of each row). This is the rule of NVIDIA's Gluon tutorial 13 (its
//! examples are the tests below, its strided convolution the last); the batch and channel strides must be 1.

/// The pixel box of an im2col tensor map, as the kernel's arguments give it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PixelBox<'a> {
    /// The tensor's dims, `[N, spatial..., C]`.
    pub shape: &'a [i64],
    /// Per spatial dim: the box's lower corner (relative to 0) and upper corner (relative to `dim - 1`).
    pub lower: &'a [i64],
    pub upper: &'a [i64],
    /// The traversal stride of each dim.
    pub element_strides: &'a [i64],
}

/// Why a load has no pixels: the box or the load's coordinates do not fit the rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PixelBoxError {
    /// A tensor of rank other than 3 to 5.
    Rank(usize),
    /// Corners, offsets or coordinates that do not match the rank.
    Counts { rank: usize, lower: usize, upper: usize, offsets: usize, coords: usize },
    /// Element strides other than 1 for the batch and the channels and 1 to 8 for the spatial dims.
    ElementStrides(Vec<i64>),
    /// No base position along spatial dim `dim`: `lower ..= last` is empty.
    Empty { dim: usize, lower: i64, last: i64, upper: i64 },
}

impl std::fmt::Display for PixelBoxError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PixelBoxError::Rank(r) => write!(f, "an im2col tensor has rank 3 to 5, not {r}"),
            PixelBoxError::Counts { rank: r, lower, upper, offsets, coords } => write!(
                f,
                "an im2col load over a rank-{r} tensor needs {s} lower and upper corners and offsets and {r} \
                 coordinates, got {lower}, {upper}, {offsets} and {coords}",
                s = r - 2
            ),
            PixelBoxError::ElementStrides(es) => write!(
                f,
                "im2col element strides are 1 for the batch and the channels and 1 to 8 for the spatial dims here, \
                 got {es:?}"
            ),
            PixelBoxError::Empty { dim, lower, last, upper } => write!(
                f,
                "the im2col pixel box is empty along spatial dim {dim}: {lower} ..= {last} (lower corner {lower}, \
                 upper corner {upper})"
            ),
        }
    }
}

impl std::error::Error for PixelBoxError {}

/// The `[N, spatial..., C]` coordinates of the first channel of each of the block's `pixels` pixels, for a load
/// at `coords` (one per dim) with `offsets` (one per spatial dim). Coordinates outside the tensor are returned
/// as they are: the caller reads padding there.
pub fn pixels(b: &PixelBox, coords: &[i64], offsets: &[i64], pixels: u32) -> Result<Vec<Vec<i64>>, PixelBoxError> {
    let r = b.shape.len();
    if !(3..=crate::tma::MAX_RANK).contains(&r) {
        return Err(PixelBoxError::Rank(r));
    }
    let s = r - 2;
    if b.lower.len() != s || b.upper.len() != s || offsets.len() != s || coords.len() != r {
        return Err(PixelBoxError::Counts {
            rank: r,
            lower: b.lower.len(),
            upper: b.upper.len(),
            offsets: offsets.len(),
            coords: coords.len(),
        });
    }
    let es = b.element_strides;
    if es.len() != r || es[0] != 1 || es[r - 1] != 1 || es.iter().any(|&e| !(1..=8).contains(&e)) {
        return Err(PixelBoxError::ElementStrides(es.to_vec()));
    }
    let hi: Vec<i64> = (0..s).map(|d| b.shape[1 + d] - 1 + b.upper[d]).collect();
    if let Some(d) = (0..s).find(|&d| hi[d] < b.lower[d]) {
        return Err(PixelBoxError::Empty { dim: d, lower: b.lower[d], last: hi[d], upper: b.upper[d] });
    }
    let mut pos: Vec<i64> = coords[..r - 1].to_vec();
    let mut out = Vec::with_capacity(pixels as usize);
    for _ in 0..pixels {
        let mut at = Vec::with_capacity(r);
        at.push(pos[0]);
        at.extend((0..s).map(|d| pos[1 + d] + offsets[d]));
        at.push(coords[r - 1]);
        out.push(at);
        // Advance: the last spatial dim fastest, carrying into the batch.
        let mut d = s;
        loop {
            if d == 0 {
                pos[0] += 1;
                break;
            }
            pos[d] += es[d];
            if pos[d] <= hi[d - 1] {
                break;
            }
            pos[d] = b.lower[d - 1];
            d -= 1;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The value `h * 4 + w + 1 + 16 * n` at each pixel of `[2, 4, 4, C]` (`None`: padding), spatial part only.
    fn walk(lower: [i64; 2], upper: [i64; 2], coords: [i64; 4], offsets: [i64; 2]) -> Vec<Option<i64>> {
        let shape = [2, 4, 4, 32];
        let b = PixelBox { shape: &shape, lower: &lower, upper: &upper, element_strides: &[1; 4] };
        pixels(&b, &coords, &offsets, 16)
            .unwrap()
            .iter()
            .map(|p| {
                let inside = (0..3).all(|d| (0..shape[d]).contains(&p[d]));
                inside.then(|| 16 * p[0] + 4 * p[1] + p[2] + 1)
            })
            .collect()
    }

    #[test]
    fn a_box_equal_to_the_image_reads_it_in_row_major_order() {
        let v = walk([0, 0], [0, 0], [0, 0, 0, 0], [0, 0]);
        assert_eq!(v, (1..=16).map(Some).collect::<Vec<_>>());
    }

    #[test]
    fn negative_corners_read_the_padding_and_offsets_shift_the_pixels() {
        // Box [-1, 2] x [-1, 2]: a row and a column of padding, then the image's top-left 3 x 3.
        let v = walk([-1, -1], [-1, -1], [0, -1, -1, 0], [0, 0]);
        let want = [0, 0, 0, 0, 0, 1, 2, 3, 0, 5, 6, 7, 0, 9, 10, 11];
        assert_eq!(v, want.iter().map(|&x| (x != 0).then_some(x)).collect::<Vec<_>>());
        // Offsets [1, 1] over the same box: exactly the image.
        let v = walk([-1, -1], [-1, -1], [0, -1, -1, 0], [1, 1]);
        assert_eq!(v, (1..=16).map(Some).collect::<Vec<_>>());
    }

    #[test]
    fn the_walk_carries_from_the_last_pixel_of_an_image_into_the_next_batch() {
        let v = walk([0, 0], [0, 0], [0, 1, 3, 0], [0, 0]);
        assert_eq!(v, (8..=23).map(Some).collect::<Vec<_>>());
    }

    #[test]
    fn spatial_element_strides_step_the_walk_from_the_lower_corner() {
        // A stride-2 convolution with padding 1 over a 5 x 5 image: output pixels at h, w in {-1, 1, 3}.
        let shape = [1, 5, 5, 16];
        let b = PixelBox { shape: &shape, lower: &[-1, -1], upper: &[-1, -1], element_strides: &[1, 2, 2, 1] };
        let p = pixels(&b, &[0, -1, 1, 0], &[1, 0], 5).unwrap();
        let hw: Vec<(i64, i64)> = p.iter().map(|q| (q[1], q[2])).collect();
        assert_eq!(hw, [(0, 1), (0, 3), (2, -1), (2, 1), (2, 3)]);
    }

    #[test]
    fn unmodelled_element_strides_and_empty_boxes_are_refused() {
        let shape = [1, 4, 4, 32];
        let b = PixelBox { shape: &shape, lower: &[0, 0], upper: &[0, 0], element_strides: &[1, 1, 1, 2] };
        assert_eq!(pixels(&b, &[0; 4], &[0, 0], 4), Err(PixelBoxError::ElementStrides(vec![1, 1, 1, 2])));
        let b = PixelBox { shape: &shape, lower: &[0, 0], upper: &[-4, 0], element_strides: &[1; 4] };
        let empty = PixelBoxError::Empty { dim: 0, lower: 0, last: -1, upper: -4 };
        assert_eq!(pixels(&b, &[0; 4], &[0, 0], 4), Err(empty.clone()));
        assert_eq!(
            empty.to_string(),
            "the im2col pixel box is empty along spatial dim 0: 0 ..= -1 (lower corner 0, upper corner -4)"
        );
    }
}
