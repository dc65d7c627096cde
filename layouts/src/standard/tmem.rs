//! Blackwell tensor memory: where a tensor lives in TMEM (`TensorMemoryLayout`, in-dims `row, col`), and the
//! register layout a warp sees when it moves that tensor with `tcgen05.ld` / `tcgen05.st` (`TmemRegLayout`).
//!
//! TMEM has 128 rows (lanes) of 32-bit columns. The `col` in-dim counts element-sized slots: for 32-bit
//! elements these are the TMEM columns; for packed 16-bit elements (`col_stride` 1) two slots share a column;
//! with `col_stride` 2 (unpacked 16-bit) every other slot is unused, which the layout records as a zero `col`
//! basis.

use crate::linear::{LinearLayout, Result, bail};

use super::common::{DISTRIBUTED_IN_DIMS, check_pow2, check_pow2_list, check_shape, normalize_dims};
use super::{TensorMemoryLayout, TensorMemoryScalesLayout, TmemAccess, TmemRegLayout};

impl TensorMemoryLayout {
    pub fn rank(&self) -> usize {
        2
    }

    /// `col_stride` of the older spelling `unpacked=True`: one element per 32-bit column, whatever its width,
    /// which is `32 / bitwidth` once the element type is known ([`Self::for_bits`]).
    pub const UNPACKED: u32 = 0;

    /// This layout for `bits`-bit elements: `unpacked=True` becomes `col_stride = 32 / bits`.
    pub fn for_bits(&self, bits: u32) -> TensorMemoryLayout {
        let col_stride = if self.col_stride == Self::UNPACKED { (32 / bits.max(1)).max(1) } else { self.col_stride };
        TensorMemoryLayout { col_stride, ..self.clone() }
    }

    /// Checks block M (64 or 128), block N, `col_stride` and the CTA split (powers of two).
    pub fn validate(&self) -> Result<()> {
        let [m, n] = self.block;
        if m != 64 && m != 128 {
            bail!("TensorMemoryLayout: block M must be 64 or 128, got {m}");
        }
        check_pow2(n, "TensorMemoryLayout: block N")?;
        if self.col_stride != Self::UNPACKED {
            check_pow2(self.col_stride, "TensorMemoryLayout: col_stride")?;
        }
        check_pow2_list(&self.cta_split, "TensorMemoryLayout: cta_split_num")?;
        Ok(())
    }

    /// `row, col → dim0, dim1`. Block M 128: row r holds tensor row r, columns hold the block's N extent.
    /// Block M 64: each group of 16 rows (one warp's quarter of TMEM) holds 16 tensor rows; the row bit 16
    /// selects the second 64-row block (or the second N block, or nothing when the tensor has only one block),
    /// and rows 32 and 64 select the next groups of 16. Further blocks follow in columns, M first, then N; the
    /// CTA split (M, then N) takes the last column bits.
    pub fn to_linear(&self, shape: &[u32]) -> Result<LinearLayout> {
        self.validate()?;
        if self.col_stride == Self::UNPACKED {
            bail!(
                "TensorMemoryLayout: an unpacked=True layout has no linear layout until an element type gives its col_stride"
            );
        }
        if shape.len() == 3 {
            return self.buffers_to_linear(shape);
        }
        check_shape(shape, 2, "TensorMemoryLayout")?;
        let layout = self.split_to_linear([shape[0], shape[1]], self.cta_split)?;
        normalize_tmem_dims(layout)
    }

    /// `[buffers, M, N]`: each buffer laid out as `[M, N]`, the buffers one after another in the columns
    /// (`dim0` takes the last `col` bits).
    fn buffers_to_linear(&self, shape: &[u32]) -> Result<LinearLayout> {
        check_shape(shape, 3, "TensorMemoryLayout")?;
        buffers_one_after_another(&self.to_linear(&shape[1..])?, shape[0])
    }

    fn split_to_linear(&self, shape: [u32; 2], split: [u32; 2]) -> Result<LinearLayout> {
        let [split_m, split_n] = split;
        if shape[0] < split_m || shape[1] < split_n {
            bail!("TensorMemoryLayout: shape {shape:?} is smaller than the CTA split {:?}", self.cta_split);
        }
        if split_n > 1 {
            let inner = self.split_to_linear([shape[0], shape[1] / split_n], [split_m, 1])?;
            return Ok(inner * LinearLayout::identity_1d(split_n, "col", "dim1"));
        }
        if split_m > 1 {
            // Block M 64 across a CTA pair is laid out as the transpose of a 128-row block: the pair's halves sit
            // in each CTA's rows 0..64 and the last row and column bits trade places.
            let m64_pair = self.block[0] == 64 && self.two_ctas;
            let (block_m, split_m) = if m64_pair { (128, split_m / 2) } else { (self.block[0], split_m) };
            let inner = TensorMemoryLayout { block: [block_m, self.block[1]], ..self.clone() };
            let ret = inner.split_to_linear([shape[0] / split_m, shape[1]], [1, 1])?
                * LinearLayout::identity_1d(split_m, "col", "dim0");
            if !m64_pair {
                return Ok(ret);
            }
            let ret = normalize_tmem_dims(ret)?;
            let mut bases = ret.bases_vec();
            let (Some(row), Some(col)) = (bases[0].1.pop(), bases[1].1.pop()) else {
                bail!("TensorMemoryLayout: block M 64 across two CTAs needs at least one row and one column bit");
            };
            bases[0].1.push(col);
            bases[1].1.push(row);
            return LinearLayout::new(bases, ret.out_dim_sizes());
        }
        let block_m = self.block[0];
        let block_n = self.block[1].min(shape[1]);
        let mut tile = LinearLayout::zeros_1d(self.col_stride, "col", "dim1");
        if block_m == 64 {
            tile = normalize_tmem_dims(
                tile * (LinearLayout::identity_1d(16, "row", "dim0")
                    * LinearLayout::identity_1d(block_n, "col", "dim1")),
            )?;
            let mut bases = tile.bases_vec();
            let extra = if shape[0] > 64 {
                vec![64, 0]
            } else if shape[1] > block_n {
                vec![0, block_n]
            } else {
                // Rows 16..32 of each warp's quarter hold nothing.
                vec![0, 0]
            };
            bases[0].1.extend([extra, vec![16, 0], vec![32, 0]]);
            tile = LinearLayout::from_bases(bases, ["dim0", "dim1"])?;
        } else {
            tile = tile
                * LinearLayout::identity_1d(block_m, "row", "dim0")
                * LinearLayout::identity_1d(block_n, "col", "dim1");
        }
        let (tile_m, tile_n) = (tile.out_dim_size("dim0"), tile.out_dim_size("dim1"));
        if shape[0] < tile_m || shape[1] < tile_n {
            bail!(
                "TensorMemoryLayout: a per-CTA shape of {shape:?} is smaller than one TMEM block of {tile_m}x{tile_n} \
                 (block {:?})",
                self.block
            );
        }
        Ok(tile
            * LinearLayout::identity_1d(shape[0] / tile_m, "col", "dim0")
            * LinearLayout::identity_1d(shape[1] / tile_n, "col", "dim1"))
    }
}

impl TensorMemoryScalesLayout {
    /// `row, col → dim0, dim1` for `[rows, scales]` of 8-bit scales, as the ISA's scale-factor layout for
    /// `scale_vec::1X` places them: lane r of each 32-lane quarter holds rows r and r + 32 (the quarters hold
    /// copies: the row bits 32 and 64 are zero), a 32-bit column holds 4 scales of a row; further rows, then
    /// further scales, take the following columns. The CTA split takes the last column bits (M, then N). A
    /// tensor smaller than 64 x 4 leaves the slots past it empty.
    /// `[buffers, rows, scales]` places the buffers one after another in the columns, as a `TensorMemoryLayout`'s.
    pub fn to_linear(&self, shape: &[u32]) -> Result<LinearLayout> {
        if shape.len() == 3 {
            check_shape(shape, 3, "TensorMemoryScalesLayout")?;
            return buffers_one_after_another(&self.to_linear(&shape[1..])?, shape[0]);
        }
        check_shape(shape, 2, "TensorMemoryScalesLayout")?;
        check_pow2_list(&self.cta_split, "TensorMemoryScalesLayout: cta_split_num")?;
        let [split_m, split_n] = self.cta_split;
        if shape[0] < split_m || shape[1] < split_n {
            bail!("TensorMemoryScalesLayout: shape {shape:?} is smaller than the CTA split {:?}", self.cta_split);
        }
        let (m, n) = (shape[0] / split_m, shape[1] / split_n);
        // One block: 64 rows by 4 scales, then repeated in the columns (M first).
        // A step past the tensor's extent holds nothing (a zero basis).
        let fit = |v: u32, size: u32| if v < size { v } else { 0 };
        let mut row: Vec<Vec<u32>> = (0..5).map(|b| vec![fit(1 << b, m), 0]).collect();
        row.extend([vec![0, 0], vec![0, 0]]);
        let mut col = vec![vec![0, fit(1, n)], vec![0, fit(2, n)], vec![fit(32, m), 0]];
        for b in 6..m.trailing_zeros() {
            col.push(vec![1 << b, 0]);
        }
        for b in 2..n.trailing_zeros() {
            col.push(vec![0, 1 << b]);
        }
        for b in 0..split_m.trailing_zeros() {
            col.push(vec![m << b, 0]);
        }
        for b in 0..split_n.trailing_zeros() {
            col.push(vec![0, n << b]);
        }
        // A broadcast: the next CTAs' columns hold the same scales again.
        check_pow2(self.broadcast, "TensorMemoryScalesLayout: broadcast")?;
        if self.broadcast > 1 && self.cta_split != [1, 1] {
            bail!("TensorMemoryScalesLayout: a layout both split and broadcast over CTAs is not supported");
        }
        col.extend((0..self.broadcast.trailing_zeros()).map(|_| vec![0, 0]));
        LinearLayout::new([("row", row), ("col", col)], [("dim0", shape[0]), ("dim1", shape[1])])
    }
}

impl TensorMemoryScalesLayout {
    /// The register layout of moving a `shape` tensor of 8-bit scales laid out by this layout with `access` over
    /// `num_warps` warps (`register, lane, warp, block → dim0, dim1`): four scales of a row per 32-bit register,
    /// each warp's lane quarter holding its own copy (warps 1-3 move the same elements as warp 0); under a
    /// broadcast, each CTA moving its copy.
    pub fn reg_layout(&self, shape: &[u32], access: TmemAccess, num_warps: u32) -> Result<LinearLayout> {
        if self.cta_split != [1, 1] {
            bail!("TensorMemoryScalesLayout: register layouts of scales split across CTAs are not supported");
        }
        if !num_warps.is_power_of_two() || num_warps < 4 {
            bail!("TensorMemoryScalesLayout: num_warps must be a power of two, at least 4, got {num_warps}");
        }
        // Each CTA of a broadcast moves its own copy: the CTA (`block`) bits are zero.
        let ll = TensorMemoryScalesLayout { broadcast: 1, ..self.clone() }.to_linear(shape)?;
        let regs = regs_for(&ll, access, num_warps, 8, &self.to_string())?;
        normalize_dims(regs * LinearLayout::zeros_1d(self.broadcast, "block", "dim0"), &DISTRIBUTED_IN_DIMS)
    }
}

/// `[buffers, ...]` of the 2-D buffer layout `one`: the buffers one after another in the columns (`dim0` takes
/// the last `col` bits), so buffer i starts `one`'s columns times i on.
fn buffers_one_after_another(one: &LinearLayout, buffers: u32) -> Result<LinearLayout> {
    let one = one.clone().rename_out_dim("dim1", "dim2").rename_out_dim("dim0", "dim1");
    let (rows, cols) = (one.out_dim_size("dim1"), one.out_dim_size("dim2"));
    let mut bases = one.bases_vec();
    for (_, b) in &mut bases {
        for v in b.iter_mut() {
            v.insert(0, 0);
        }
    }
    let col = bases.iter_mut().find(|(n, _)| n.as_str() == "col").expect("a col in-dim");
    for i in 0..buffers.trailing_zeros() {
        col.1.push(vec![1 << i, 0, 0]);
    }
    LinearLayout::new(bases, [("dim0", buffers), ("dim1", rows), ("dim2", cols)])
}

/// In-dims `row, col`, out-dims `dim0, dim1`.
fn normalize_tmem_dims(layout: LinearLayout) -> Result<LinearLayout> {
    let mut layout = layout;
    for name in ["row", "col"] {
        if !layout.has_in_dim(name) {
            layout *= LinearLayout::identity_1d(1, name, "dim0");
        }
    }
    for name in ["dim0", "dim1"] {
        if !layout.has_out_dim(name) {
            layout *= LinearLayout::identity_1d(1, "row", name);
        }
    }
    layout.transpose_ins(&["row", "col"])?.transpose_outs(&["dim0", "dim1"])
}

impl TmemAccess {
    /// The PTX spelling of the shape, e.g. `32x32b`.
    pub fn ptx_name(self) -> &'static str {
        match self {
            TmemAccess::B32x32 => "32x32b",
            TmemAccess::B16x64 => "16x64b",
            TmemAccess::B16x128 => "16x128b",
            TmemAccess::B16x256 => "16x256b",
        }
    }

    /// What one warp's `tcgen05.ld/st` with `.num` = 1 moves: `register, lane → row, col` over 32-bit TMEM
    /// cells (rows relative to the warp's 32-row quarter).
    ///
    /// * `.32x32b`: lane l reads row l, register r column r.
    /// * `.16x64b`: 16 rows of 2 columns. Lanes 0-3 are rows 0, 8, 0, 8 with columns 0, 0, 1, 1; the next
    ///   quads step down one row (lane l: row `(l >> 2) + 8 * (l & 1)`, column `(l >> 1) & 1`).
    /// * `.16x128b`: 16 rows of 4 columns; a quad covers one row, the eight quads rows 0-7, and the second
    ///   register rows 8-15.
    /// * `.16x256b`: as `.16x128b` with two consecutive columns per register pair.
    pub fn tile(self) -> Result<LinearLayout> {
        let empty = LinearLayout::new([("register", vec![]), ("lane", vec![])], [("row", 1), ("col", 1)])?;
        Ok(match self {
            TmemAccess::B32x32 => empty * LinearLayout::identity_1d(32, "lane", "row"),
            TmemAccess::B16x64 => {
                let lane = vec![vec![8, 0], vec![0, 1], vec![1, 0], vec![2, 0], vec![4, 0]];
                LinearLayout::new([("register", vec![]), ("lane", lane)], [("row", 16), ("col", 2)])?
            }
            TmemAccess::B16x128 => {
                empty
                    * LinearLayout::identity_1d(4, "lane", "col")
                    * LinearLayout::identity_1d(8, "lane", "row")
                    * LinearLayout::identity_1d(2, "register", "row")
            }
            TmemAccess::B16x256 => {
                empty
                    * LinearLayout::identity_1d(2, "register", "col")
                    * LinearLayout::identity_1d(4, "lane", "col")
                    * LinearLayout::identity_1d(8, "lane", "row")
                    * LinearLayout::identity_1d(2, "register", "row")
            }
        })
    }
}

impl TmemRegLayout {
    /// The layout for a 32-bit element type.
    pub fn new(tmem: TensorMemoryLayout, access: TmemAccess, num_warps: u32) -> Self {
        TmemRegLayout { tmem, access, num_warps, element_bitwidth: 32, split_n: false }
    }

    pub fn rank(&self) -> usize {
        2
    }

    pub fn validate(&self) -> Result<()> {
        self.tmem.validate()?;
        if !self.num_warps.is_power_of_two() || self.num_warps < 4 || self.num_warps > 1 << 16 {
            bail!(
                "TmemRegLayout: num_warps must be a power of two, at least 4 (one warpgroup covers the 128 TMEM rows), \
                 got {}",
                self.num_warps
            );
        }
        if ![8, 16, 32].contains(&self.element_bitwidth) {
            bail!("TmemRegLayout: element bitwidth must be 8, 16 or 32, got {}", self.element_bitwidth);
        }
        if self.split_n && self.access != TmemAccess::B32x32 {
            bail!("TmemRegLayout: 32x32b_splitn is a 32x32b layout, not {}", self.access.ptx_name());
        }
        Ok(())
    }

    /// `register, lane, warp, block → dim0, dim1`: what each thread holds after `tcgen05.ld` (or must hold before
    /// `tcgen05.st`) of a tensor of `shape` stored with `self.tmem`. Warp w of each warpgroup reaches TMEM rows
    /// `32 * (w % 4)..`; the instruction's tile is repeated in registers along the columns; extra warpgroups
    /// take the row bit 16 (for 16-row instructions on a 32-row layout) or split the columns, and broadcast once
    /// the columns run out. The result is the instruction tile composed with the TMEM layout.
    pub fn to_linear(&self, shape: &[u32]) -> Result<LinearLayout> {
        self.validate()?;
        let ll = self.tmem.to_linear(shape)?;
        let [split_m, split_n] = self.tmem.cta_split;
        let (per_cta, block) = if split_m * split_n > 1 {
            let cta_cols =
                LinearLayout::identity_1d(split_m, "col", "dim0") * LinearLayout::identity_1d(split_n, "col", "dim1");
            let per_cta = LinearLayout::divide_right(&ll, &cta_cols).map_err(|e| {
                crate::linear::LayoutError(format!("TmemRegLayout: the CTA split is not the last column bits ({e})"))
            })?;
            let block = LinearLayout::identity_1d(split_m, "block", "dim0")
                * LinearLayout::identity_1d(split_n, "block", "dim1");
            (per_cta, block)
        } else {
            (ll, LinearLayout::identity_1d(1, "block", "dim0"))
        };
        let regs = regs_for(&per_cta, self.access, self.num_warps, self.element_bitwidth, &self.tmem.to_string())?;
        let layout = normalize_dims(regs * block, &DISTRIBUTED_IN_DIMS)?;
        if !self.split_n {
            return Ok(layout);
        }
        let bases = |d: &str| layout.bases(d).iter().map(|b| b.to_vec()).collect::<Vec<Vec<u32>>>();
        let spec = super::DistributedLinearLayout {
            reg_bases: bases("register"),
            lane_bases: bases("lane"),
            warp_bases: bases("warp"),
            block_bases: bases("block"),
            shape: shape.to_vec(),
        };
        let split = spec.split_n(shape[1], self.element_bitwidth).map_err(crate::linear::LayoutError)?;
        split.as_written()
    }
}

/// The register layout of moving one CTA's part `ll` (`row, col → dims`, any tensor-memory layout: a
/// `TensorMemoryLayout`'s or a `TensorMemoryScalesLayout`'s) of `bitwidth`-bit elements with `access` over
/// `num_warps` warps: packs narrow elements into 32-bit registers, then tiles the 32-bit instruction. `what` names
/// the tensor-memory layout in errors.
pub fn regs_for(
    ll: &LinearLayout,
    access: TmemAccess,
    num_warps: u32,
    bitwidth: u32,
    what: &str,
) -> Result<LinearLayout> {
    if bitwidth == 32 {
        return regs_for_b32(ll, access, num_warps, what);
    }
    // Consecutive elements along dim1 in consecutive columns pack into one 32-bit register.
    let mut best = (1, ll.clone());
    let mut contig = 2;
    while bitwidth * contig <= 32 {
        match LinearLayout::divide_left(ll, &LinearLayout::identity_1d(contig, "col", "dim1")) {
            Ok(q) => best = (contig, q),
            Err(_) => break,
        }
        contig *= 2;
    }
    if best.0 > 1 {
        let inner = regs_for(&best.1, access, num_warps, bitwidth * best.0, what)?;
        return Ok(LinearLayout::identity_1d(best.0, "register", "dim1") * inner);
    }
    let padding = LinearLayout::zeros_1d(32 / bitwidth, "col", "dim1");
    if bitwidth == 16
        && let Ok(q) = LinearLayout::divide_left(ll, &(padding.clone() * LinearLayout::identity_1d(2, "col", "dim1")))
    {
        // Unpacked 16-bit: each column holds one element in its low half.
        let inner = regs_for_b32(&q, access, num_warps, what)?;
        return Ok(LinearLayout::identity_1d(2, "register", "dim1") * inner);
    }
    if let Ok(q) = LinearLayout::divide_left(ll, &padding) {
        return regs_for_b32(&q, access, num_warps, what);
    }
    if ll.in_dim_size("col") == 1 {
        return regs_for_b32(ll, access, num_warps, what);
    }
    bail!(
        "TmemRegLayout: {}-bit elements stored this way ({}) cannot be packed into 32-bit TMEM columns",
        bitwidth,
        what
    )
}

fn regs_for_b32(ll: &LinearLayout, access: TmemAccess, num_warps: u32, what: &str) -> Result<LinearLayout> {
    let mut tile = access.tile()?;
    let cols_tile = tile.out_dim_size("col");
    let cols_ll = ll.in_dim_size("col");
    if cols_ll < cols_tile {
        bail!(
            "TmemRegLayout: the tensor spans {cols_ll} TMEM column(s) per row, fewer than one .{} access ({cols_tile})",
            access.ptx_name()
        );
    }
    let mut cols_missing = cols_ll / cols_tile;
    let rows32 = access == TmemAccess::B32x32;
    let rows_16 = ll.bases("row").get(4).is_some_and(|b| b.iter().all(|&c| c == 0));

    // The instruction must not read any element twice (nor an undefined cell) within its own footprint.
    let mut comp = tile.compose(ll)?;
    if rows32 {
        // Lanes 16-31 of a 32x32b access on a 16-row layout are served by the 16x32bx2 form instead.
        let mut bases = comp.bases_vec();
        if let Some(lane) = bases.iter_mut().find(|(n, _)| *n == "lane") {
            lane.1.pop();
        }
        comp = LinearLayout::new(bases, comp.out_dim_sizes())?;
    }
    if !comp.is_injective() {
        bail!(
            "TmemRegLayout: one .{} access would read the same element (or an undefined TMEM cell) twice with \
             {}",
            access.ptx_name(),
            what
        );
    }

    // Row 16 of a 32-row layout read with a 16-row instruction: a second warpgroup if there is one, else a
    // register.
    #[derive(PartialEq)]
    enum Row16 {
        None,
        Warp,
        Register,
    }
    let row16 = if rows32 || rows_16 {
        Row16::None
    } else if num_warps > 4 {
        Row16::Warp
    } else {
        Row16::Register
    };
    let mut warps_to_tile = num_warps / if row16 == Row16::Warp { 8 } else { 4 };
    let warp_broadcast = warps_to_tile / cols_missing.min(warps_to_tile);
    warps_to_tile /= warp_broadcast;
    cols_missing /= warps_to_tile;

    if cols_missing > 1 {
        if rows32 && rows_16 {
            // Lanes 0-15 read the first half of the columns, lanes 16-31 the second (16x32bx2).
            tile = LinearLayout::divide_left(&tile, &LinearLayout::identity_1d(2, "lane", "row"))?
                * LinearLayout::identity_1d(cols_missing / 2, "register", "col")
                * LinearLayout::identity_1d(2, "lane", "col");
        } else {
            tile *= LinearLayout::identity_1d(cols_missing, "register", "col");
        }
    }
    let cols = tile.out_dim_size("col");
    let mut bases = tile.bases_vec();
    bases.push(("warp".into(), vec![vec![32, 0], vec![64, 0]]));
    let row16_dim = match row16 {
        Row16::None => None,
        Row16::Warp => Some("warp"),
        Row16::Register => Some("register"),
    };
    if let Some(name) = row16_dim
        && let Some(d) = bases.iter_mut().find(|(n, _)| *n == name)
    {
        d.1.push(vec![16, 0]);
    }
    let tile = LinearLayout::new(bases, [("row", 128), ("col", cols)])?
        * LinearLayout::identity_1d(warps_to_tile, "warp", "col")
        * LinearLayout::zeros_1d(warp_broadcast, "warp", "col");
    if tile.out_dim_size("col") != cols_ll {
        bail!("internal error: the tcgen05 tiling covers {} columns, the tensor {cols_ll}", tile.out_dim_size("col"));
    }
    tile.compose(ll)
}

impl super::DistributedLinearLayout {
    /// The `32x32b_splitn` register layout from the `32x32b` one (`self`, for a `[M, n]` tensor of `bits`-bit
    /// elements): the last register basis becomes the column half `[0, n / 2]`, so that `split` of the loaded
    /// tensor along N gives each half in its own registers. The basis it trades places with comes from the
    /// lanes, or from the warps past the first four (which own their TMEM lanes, so cannot move); with no
    /// register basis at all, the lane's `[0, n / 2]` becomes a register one and that lane repeats.
    pub fn split_n(mut self, n: u32, bits: u32) -> std::result::Result<Self, String> {
        let half = vec![0, n / 2];
        if n < 2 {
            return Err(format!("32x32b_splitn needs at least 2 columns, got {n}"));
        }
        if self.reg_bases.is_empty() {
            if self.lane_bases.last() != Some(&half) {
                return Err(format!(
                    "32x32b_splitn with one register needs the last lane basis to be {half:?}, got {:?}",
                    self.lane_bases
                ));
            }
            self.reg_bases.push(half);
            *self.lane_bases.last_mut().expect("a lane basis") = vec![0, 0];
            return Ok(self);
        }
        if self.reg_bases.last() == Some(&half) {
            return Ok(self);
        }
        let regs = 1u64 << self.reg_bases.len();
        if regs <= (32 / bits.max(1)) as u64 {
            return Err(format!(
                "32x32b_splitn needs more than {} {bits}-bit registers per thread (two 32x32b.x1 accesses), this \
                 layout has {regs}; use \"32x32b\" and convert_layout to the split one",
                32 / bits.max(1)
            ));
        }
        let last = self.reg_bases.len() - 1;
        let found = match self.lane_bases.iter().position(|b| *b == half) {
            Some(i) => Some(&mut self.lane_bases[i]),
            None => self.warp_bases.iter().skip(2).position(|b| *b == half).map(|i| &mut self.warp_bases[i + 2]),
        };
        match found {
            Some(b) => {
                std::mem::swap(b, &mut self.reg_bases[last]);
                Ok(self)
            }
            None => Err(format!(
                "32x32b_splitn needs a lane basis, or a warp basis past the first two, of {half:?}; the 32x32b \
                 layout has lanes {:?} and warps {:?}",
                self.lane_bases, self.warp_bases
            )),
        }
    }
}
