//! Views of a linear layout for people: the bases as JSON, the tensor as a text table of which hardware slots
//! hold each element, and an SVG picture of the tensor colored by warp (or by shared-memory bank).
//!
//! The table and the picture enumerate every input of the layout; [`check_viewable`] says whether a layout is
//! small enough (at most 2^[`MAX_VIEW_LOG2`] inputs and elements) and callers should ask it first. A layout that is
//! too large gets a one-line note instead of a table, and an SVG that says so.

use std::fmt::Write;

use crate::linear::{LinearLayout, Result, bail};

/// The largest layout (inputs and elements, log2) the table and the picture enumerate.
pub const MAX_VIEW_LOG2: u32 = 24;

/// A table is drawn as a grid when its lines are at most this wide; otherwise one line per element.
const MAX_GRID_WIDTH: usize = 200;

/// Whether [`to_table`] and [`to_svg`] can draw `layout`.
pub fn check_viewable(layout: &LinearLayout) -> Result<()> {
    let (ins, outs) = (layout.total_in_log2(), layout.total_out_log2());
    if ins > MAX_VIEW_LOG2 || outs > MAX_VIEW_LOG2 {
        bail!(
            "the layout has 2^{ins} hardware slots and 2^{outs} elements; views draw at most 2^{MAX_VIEW_LOG2} of each"
        );
    }
    Ok(())
}

/// The bases as JSON: `{"in_dims": {"register": [[0, 1], ...], "lane": [...], ...}, "out_dims": {"dim0": 64, ...}}`,
/// in-dims in the layout's order, each basis one coordinate per out-dim in out-dim order.
pub fn to_json(layout: &LinearLayout) -> String {
    let mut s = String::from("{\"in_dims\": {");
    for (i, (name, bases)) in layout.bases_vec().iter().enumerate() {
        let list: Vec<String> = bases
            .iter()
            .map(|b| format!("[{}]", b.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")))
            .collect();
        let _ = write!(s, "{}{}: [{}]", if i > 0 { ", " } else { "" }, json_str(name.as_str()), list.join(", "));
    }
    s.push_str("}, \"out_dims\": {");
    for (i, (name, size)) in layout.out_dim_sizes().iter().enumerate() {
        let _ = write!(s, "{}{}: {size}", if i > 0 { ", " } else { "" }, json_str(name.as_str()));
    }
    s.push_str("}}");
    s
}

fn json_str(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

// ----- who holds each element -----

/// What the in-dims of a layout are, which decides how a holder is written.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    /// `register, lane, warp, block`: written `T<thread>:r<register>`.
    Distributed,
    /// `offset, block`: written as the offset.
    Shared,
    /// `row, col` (tensor memory): written `row,col`.
    TensorMemory,
    /// Anything else: `name=value` pairs.
    Other,
}

/// For every element of the tensor (row-major over the out-dims, last out-dim fastest), the inputs that map to
/// it, each input a flat index (first in-dim in the low bits), sorted.
struct Holders<'a> {
    layout: &'a LinearLayout,
    kind: Kind,
    /// `(name, bit offset, log2 size)` of every in-dim.
    in_fields: Vec<(String, u32, u32)>,
    shape: Vec<u32>,
    start: Vec<usize>,
    slots: Vec<u64>,
}

impl<'a> Holders<'a> {
    fn new(layout: &'a LinearLayout) -> Self {
        let shape: Vec<u32> = layout.out_dim_sizes().into_iter().map(|(_, s)| s).collect();
        // Row-major flat index of an out coordinate: the last out-dim in the low bits. With power-of-two sizes
        // this is a concatenation of bits, so it is linear: the image of an input is the XOR of basis images.
        let mut shifts = vec![0u32; shape.len()];
        for k in (0..shape.len().saturating_sub(1)).rev() {
            shifts[k] = shifts[k + 1] + shape[k + 1].trailing_zeros();
        }
        let flat = |b: &[u32]| b.iter().zip(&shifts).fold(0u64, |acc, (&c, &s)| acc | (c as u64) << s);
        let mut in_fields = Vec::new();
        let mut images = Vec::new();
        let mut offset = 0;
        for (name, bases) in layout.bases_vec() {
            in_fields.push((name.as_str().to_string(), offset, bases.len() as u32));
            offset += bases.len() as u32;
            images.extend(bases.iter().map(|b| flat(b)));
        }
        let n_elems = 1usize << shape.iter().map(|s| s.trailing_zeros()).sum::<u32>();
        let n_in = 1u64 << images.len();
        // Visit the inputs in Gray-code order: one XOR per step.
        let visit = |f: &mut dyn FnMut(u64, usize)| {
            let mut cur = 0u64;
            for x in 0..n_in {
                if x > 0 {
                    cur ^= images[x.trailing_zeros() as usize];
                }
                f(x ^ (x >> 1), cur as usize);
            }
        };
        let mut count = vec![0usize; n_elems + 1];
        visit(&mut |_, e| count[e + 1] += 1);
        for i in 0..n_elems {
            count[i + 1] += count[i];
        }
        let start = count.clone();
        let mut fill = count;
        let mut slots = vec![0u64; n_in as usize];
        visit(&mut |x, e| {
            slots[fill[e]] = x;
            fill[e] += 1;
        });
        for e in 0..n_elems {
            slots[start[e]..start[e + 1]].sort_unstable();
        }
        let has = |n: &str| layout.has_in_dim(n);
        let kind = if has("register") || has("lane") || has("warp") {
            Kind::Distributed
        } else if has("offset") {
            Kind::Shared
        } else if has("row") && has("col") {
            Kind::TensorMemory
        } else {
            Kind::Other
        };
        Holders { layout, kind, in_fields, shape, start, slots }
    }

    fn of(&self, elem: usize) -> &[u64] {
        &self.slots[self.start[elem]..self.start[elem + 1]]
    }

    /// The value of in-dim `name` in input `x` (0 if there is no such dim).
    fn get(&self, x: u64, name: &str) -> u32 {
        self.in_fields.iter().find(|f| f.0 == name).map_or(0, |&(_, off, bits)| ((x >> off) & ((1 << bits) - 1)) as u32)
    }

    fn size(&self, name: &str) -> u32 {
        self.layout.in_dim_size(name)
    }

    /// The global thread index (`warp * lanes + lane`) of a distributed input.
    fn thread(&self, x: u64) -> u64 {
        self.get(x, "warp") as u64 * self.size("lane") as u64 + self.get(x, "lane") as u64
    }

    /// The warp an input belongs to, counting across blocks (`block * warps + warp`).
    fn global_warp(&self, x: u64) -> u64 {
        self.get(x, "block") as u64 * self.size("warp") as u64 + self.get(x, "warp") as u64
    }

    /// One holder as the table writes it.
    fn label(&self, x: u64) -> String {
        let block = if self.size("block") > 1 { format!("B{}:", self.get(x, "block")) } else { String::new() };
        match self.kind {
            Kind::Distributed => format!("{block}T{}:r{}", self.thread(x), self.get(x, "register")),
            Kind::Shared => format!("{block}{}", self.get(x, "offset")),
            Kind::TensorMemory => format!("{},{}", self.get(x, "row"), self.get(x, "col")),
            Kind::Other => {
                let parts: Vec<String> =
                    self.in_fields.iter().map(|(n, ..)| format!("{n}={}", self.get(x, n))).collect();
                parts.join(",")
            }
        }
    }

    fn cell(&self, elem: usize) -> String {
        let holders = self.of(elem);
        if holders.is_empty() {
            return "-".to_string();
        }
        holders.iter().map(|&x| self.label(x)).collect::<Vec<_>>().join("|")
    }

    /// The tensor coordinate of a row-major element index.
    fn coords(&self, mut elem: usize) -> Vec<u32> {
        let mut c = vec![0; self.shape.len()];
        for k in (0..self.shape.len()).rev() {
            c[k] = (elem % self.shape[k] as usize) as u32;
            elem /= self.shape[k] as usize;
        }
        c
    }

    /// How the other holders of an element follow from the first: `first ^ k` for every `k` in the kernel of the
    /// layout (the inputs that map to element 0), described by a basis of the kernel.
    fn kernel_note(&self) -> String {
        let kernel = self.of(0);
        let mut basis: Vec<u64> = Vec::new();
        for &k in kernel {
            let reduced = basis.iter().fold(k, |v, &b| v.min(v ^ b));
            if reduced != 0 {
                basis.push(reduced);
                basis.sort_unstable_by(|a, b| b.cmp(a));
            }
        }
        basis.sort_unstable();
        let parts: Vec<String> = basis.iter().map(|&k| self.xor_label(k)).collect();
        format!(
            "each element is held {}x: the cell shows the first holder, the others are it with {}{}",
            kernel.len(),
            if parts.len() > 1 { "any combination of " } else { "" },
            parts.join(", ")
        )
    }

    /// An input used as an XOR mask, e.g. `T^64` or `r^1 T^4`.
    fn xor_label(&self, k: u64) -> String {
        let mut parts = Vec::new();
        if self.kind == Kind::Distributed {
            for (name, prefix) in [("block", "B"), ("register", "r")] {
                let v = self.get(k, name);
                if v != 0 {
                    parts.push(format!("{prefix}^{v}"));
                }
            }
            if self.thread(k) != 0 {
                parts.push(format!("T^{}", self.thread(k)));
            }
        } else {
            for (name, ..) in &self.in_fields {
                let v = self.get(k, name);
                if v != 0 {
                    parts.push(format!("{name}^{v}"));
                }
            }
        }
        parts.join(" ")
    }

    /// What a cell means, for the line under a table.
    fn legend(&self) -> String {
        match self.kind {
            Kind::Distributed => {
                let (lanes, warps) = (self.size("lane"), self.size("warp"));
                let mut s = format!("T<t>:r<r> = thread t (warp t/{lanes}, lane t%{lanes}), register r");
                if warps > 1 && warps <= 8 {
                    let ranges: Vec<String> =
                        (0..warps).map(|w| format!("warp {w} = T{}..T{}", w * lanes, (w + 1) * lanes - 1)).collect();
                    let _ = write!(s, " [{}]", ranges.join(", "));
                }
                if self.size("block") > 1 {
                    s = format!("B<b>: = block (CTA) b; {s}");
                }
                s
            }
            Kind::Shared => {
                let block = if self.size("block") > 1 { "B<b>: = block (CTA) b; " } else { "" };
                format!("{block}cell = offset of the element in shared memory, in elements")
            }
            Kind::TensorMemory => "cell = row,col of the element in tensor memory".to_string(),
            Kind::Other => "cell = the inputs that map to the element".to_string(),
        }
    }
}

// ----- table -----

/// For every element of the tensor, which hardware slots hold it: a grid for 1-D and 2-D tensors (stacked 2-D
/// slices for higher ranks; a long 1-D tensor wrapped into rows) when it fits in 200 columns, otherwise one line
/// per element. Distributed layouts write
/// a holder as `T5:r2` (thread 5 within the CTA, register 2; `B1:` in front for block 1), shared layouts as the
/// offset, tensor memory as `row,col`; `-` marks an element no slot holds.
///
/// The holders of a broadcast element are joined by `|`. When that makes the grid too wide, the grid shows the
/// first holder of each element and a note says how the others follow from it: the holders of every element are
/// the first one XOR the same set of inputs (the kernel of the layout).
pub fn to_table(layout: &LinearLayout) -> String {
    if let Err(e) = check_viewable(layout) {
        return format!("(no table: {e})\n");
    }
    let h = Holders::new(layout);
    let names: Vec<String> = layout.out_dims().map(|d| d.as_str().to_string()).collect();
    let n_elems: usize = h.shape.iter().map(|&s| s as usize).product();
    let shape_text = h.shape.iter().map(u32::to_string).collect::<Vec<_>>().join("x");
    let mut out = format!("{shape_text} tensor ({}); {}\n", names.join(", "), h.legend());

    let rank = h.shape.len();
    // Grids to try: the last two dims as they are; a 1-D tensor as one row, else wrapped into rows of k elements
    // (each row labelled with the index it starts at).
    let grids: Vec<(usize, usize)> = match rank {
        0 => Vec::new(),
        1 => {
            let n = h.shape[0] as usize;
            std::iter::successors(Some(n), |k| Some(k / 2)).take_while(|&k| k >= n.min(4)).map(|k| (n / k, k)).collect()
        }
        _ => vec![(h.shape[rank - 2] as usize, h.shape[rank - 1] as usize)],
    };
    let row_label = |(rows, cols): (usize, usize)| match (rank, rows) {
        (1, 1) => 0,
        (1, _) => ((rows - 1) * cols).to_string().len(),
        _ => (rows - 1).to_string().len(),
    };
    let fits = |cells: &[String], grid: &(usize, usize)| {
        let width = cells.iter().map(String::len).max().unwrap_or(1);
        row_label(*grid) + 2 + grid.1 * (width + 1) <= MAX_GRID_WIDTH
    };
    let all: Vec<String> = (0..n_elems).map(|e| h.cell(e)).collect();
    let (cells, (rows, cols)) = if let Some(&grid) = grids.iter().find(|g| fits(&all, g)) {
        (all, grid)
    } else {
        let first: Vec<String> =
            (0..n_elems).map(|e| h.of(e).first().map_or_else(|| "-".to_string(), |&x| h.label(x))).collect();
        let Some(&grid) = grids.iter().find(|g| fits(&first, g)) else {
            let coord_width = h.shape.iter().map(|s| s.saturating_sub(1).to_string().len()).collect::<Vec<_>>();
            for (e, cell) in all.iter().enumerate() {
                let c: Vec<String> = h.coords(e).iter().zip(&coord_width).map(|(v, w)| format!("{v:>w$}")).collect();
                let _ = writeln!(out, "({})  {cell}", c.join(", "));
            }
            return out;
        };
        let _ = writeln!(out, "{}", h.kernel_note());
        (first, grid)
    };
    let width = cells.iter().map(String::len).max().unwrap_or(1);
    let label_width = row_label((rows, cols));
    for s in 0..n_elems / (rows * cols) {
        if rank >= 3 {
            let lead = h.coords(s * rows * cols);
            let idx: Vec<String> = lead[..rank - 2].iter().map(u32::to_string).collect();
            let _ = writeln!(out, "\n[{}, :, :]", idx.join(", "));
        }
        let header: Vec<String> = (0..cols).map(|c| format!("{c:>width$}")).collect();
        let _ = writeln!(out, "{:label_width$}  {}", "", header.join(" ").trim_end());
        for r in 0..rows {
            let base = (s * rows + r) * cols;
            let line: Vec<String> = cells[base..base + cols].iter().map(|c| format!("{c:>width$}")).collect();
            let label = match label_width {
                0 => String::new(),
                _ if rank == 1 => format!("{:>label_width$}", r * cols),
                _ => format!("{r:>label_width$}"),
            };
            let _ = writeln!(out, "{label}  {}", line.join(" ").trim_end());
        }
    }
    out
}

// ----- SVG -----

/// How to draw an SVG.
#[derive(Clone, Debug)]
pub struct SvgOptions {
    /// The heading; the layout expression is a good one.
    pub title: Option<String>,
    /// Element size in bits, for the banks of a shared layout (4-byte banks, 32 of them).
    pub elem_bits: u32,
}

impl Default for SvgOptions {
    fn default() -> Self {
        SvgOptions { title: None, elem_bits: 16 }
    }
}

/// The tensor as a grid with default options; see [`to_svg_with`].
pub fn to_svg(layout: &LinearLayout) -> String {
    to_svg_with(layout, &SvgOptions::default())
}

/// Light colors that black text reads well on and that are easy to tell apart (ColorBrewer Set3).
const PALETTE: [[u8; 3]; 12] = [
    [0x8d, 0xd3, 0xc7],
    [0xff, 0xff, 0xb3],
    [0xbe, 0xba, 0xda],
    [0xfb, 0x80, 0x72],
    [0x80, 0xb1, 0xd3],
    [0xfd, 0xb4, 0x62],
    [0xb3, 0xde, 0x69],
    [0xfc, 0xcd, 0xe5],
    [0xd9, 0xd9, 0xd9],
    [0xbc, 0x80, 0xbd],
    [0xcc, 0xeb, 0xc5],
    [0xff, 0xed, 0x6f],
];

/// The color of warp `i`: the palette, then hues a golden angle apart, light enough for black text.
fn warp_rgb(i: u64) -> [u8; 3] {
    match PALETTE.get(i as usize) {
        Some(&c) => c,
        None => hsl_rgb((i as f64 * 137.508) % 360.0, 0.65, if i % 2 == 0 { 0.78 } else { 0.68 }),
    }
}

fn hsl_rgb(h: f64, s: f64, l: f64) -> [u8; 3] {
    let c = (1.0 - (2.0 * l - 1.0).abs()) * s;
    let x = c * (1.0 - ((h / 60.0) % 2.0 - 1.0).abs());
    let (r, g, b) = match (h / 60.0) as u32 {
        0 => (c, x, 0.0),
        1 => (x, c, 0.0),
        2 => (0.0, c, x),
        3 => (0.0, x, c),
        4 => (x, 0.0, c),
        _ => (c, 0.0, x),
    };
    let m = l - c / 2.0;
    [r, g, b].map(|v| ((v + m) * 255.0).round() as u8)
}

/// `#rrggbb`, darkened by `shade` (1.0 = as is): odd lanes are drawn a little darker so that the cells of one
/// thread stand out from its neighbours'.
fn hex(rgb: [u8; 3], shade: f64) -> String {
    let [r, g, b] = rgb.map(|v| (v as f64 * shade).round() as u8);
    format!("#{r:02x}{g:02x}{b:02x}")
}

fn color(i: u64) -> String {
    hex(warp_rgb(i), 1.0)
}

fn bank_color(bank: u64) -> String {
    hex(hsl_rgb(bank as f64 * 360.0 / 32.0, 0.7, if bank % 2 == 0 { 0.8 } else { 0.7 }), 1.0)
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// The tensor as a grid of cells (1-D as one row, 2-D as rows × columns, higher ranks as stacked 2-D slices).
/// Distributed layouts: each cell colored by the warp that holds it and labelled `t<lane> r<register>` (with
/// `+n` when n more slots hold it too, and every holder in the cell's tooltip). Shared layouts: colored by bank
/// and labelled with the offset. Tensor memory: colored by 32-row group, labelled `row,col`. Axis labels, a
/// legend and a title; cells shrink and lose their labels when the tensor is large.
pub fn to_svg_with(layout: &LinearLayout, opts: &SvgOptions) -> String {
    const MAX_W: f64 = 1800.0;
    const MAX_H: f64 = 2400.0;
    let title = opts.title.clone().unwrap_or_else(|| "linear layout".to_string());
    if let Err(e) = check_viewable(layout) {
        return format!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"900\" height=\"60\"><text x=\"10\" y=\"25\" \
             font-family=\"sans-serif\" font-size=\"14\">{}</text><text x=\"10\" y=\"45\" font-family=\"sans-serif\" \
             font-size=\"12\">{}</text></svg>\n",
            esc(&title),
            esc(&e.0)
        );
    }
    let h = Holders::new(layout);
    let rank = h.shape.len();
    let cols = if rank == 0 { 1 } else { h.shape[rank - 1] as usize };
    let rows = if rank >= 2 { h.shape[rank - 2] as usize } else { 1 };
    let n_elems: usize = h.shape.iter().map(|&s| s as usize).product();
    let slices = n_elems / (rows * cols);
    let elem_bits = (opts.elem_bits as u64).max(1);

    // Label, color and tooltip of each cell.
    let cell = |e: usize| -> (String, String, String) {
        let holders = h.of(e);
        let Some(&x) = holders.first() else {
            return (String::new(), "#ffffff".to_string(), "held by no slot".to_string());
        };
        let more = if holders.len() > 1 { format!(" +{}", holders.len() - 1) } else { String::new() };
        let tip = holders.iter().map(|&x| h.label(x)).collect::<Vec<_>>().join(" | ");
        match h.kind {
            Kind::Distributed => {
                let block = if h.size("block") > 1 { format!("b{} ", h.get(x, "block")) } else { String::new() };
                let label = format!("{block}t{} r{}{more}", h.get(x, "lane"), h.get(x, "register"));
                let shade = if h.get(x, "lane") % 2 == 1 { 0.88 } else { 1.0 };
                (label, hex(warp_rgb(h.global_warp(x)), shade), tip)
            }
            Kind::Shared => {
                let offset = h.get(x, "offset") as u64;
                let bank = offset * elem_bits / 32 % 32;
                (format!("{offset}{more}"), bank_color(bank), format!("offset {tip}, bank {bank}"))
            }
            Kind::TensorMemory => (h.label(x), color(h.get(x, "row") as u64 / 32), tip),
            Kind::Other => (h.label(x), color(0), tip),
        }
    };
    let cells: Vec<(String, String, String)> = (0..n_elems).map(cell).collect();

    // Cell size: labelled at font size 10, else 8; unlabelled squares when even that is too large.
    let label_chars = cells.iter().map(|c| c.0.chars().count()).max().unwrap_or(1).max(2) as f64;
    let total_rows = (rows * slices) as f64;
    let labelled =
        [(10.0, 6.1), (8.0, 4.9)].into_iter().map(|(font, char_w)| (font, label_chars * char_w + 6.0, font + 8.0));
    let (font, cw, ch) = labelled
        .into_iter()
        .find(|&(_, cw, ch)| cols as f64 * cw <= MAX_W && total_rows * ch <= MAX_H)
        .unwrap_or_else(|| {
            let side = (MAX_W / cols as f64).min(MAX_H / total_rows).clamp(3.0, 16.0);
            (0.0, side, side)
        });
    let labels = font > 0.0;

    // Page geometry.
    let left = 70.0;
    let top = 86.0;
    let slice_gap = if rank >= 3 { 26.0 } else { 0.0 };
    let grid_w = cols as f64 * cw;
    let slice_h = rows as f64 * ch + slice_gap;
    let grid_bottom = top + slices as f64 * slice_h;
    let legend = legend_entries(&h, opts.elem_bits);
    let legend_per_row = 8usize;
    let legend_step = 30.0 + legend.iter().map(|(_, t)| t.chars().count()).max().unwrap_or(0) as f64 * 6.7;
    let legend_rows = legend.len().div_ceil(legend_per_row);
    let subtitle = subtitle(&h, layout);
    let width = (left + grid_w + 30.0)
        .max(20.0 + title.len() as f64 * 8.0)
        .max(20.0 + subtitle.len() as f64 * 6.5)
        .max(20.0 + legend_per_row.min(legend.len()) as f64 * legend_step);
    let height = grid_bottom + 30.0 + legend_rows as f64 * 22.0 + 20.0;

    let mut s = String::new();
    let _ = writeln!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width:.0}\" height=\"{height:.0}\" \
         viewBox=\"0 0 {width:.0} {height:.0}\" font-family=\"DejaVu Sans Mono, Menlo, Consolas, monospace\">"
    );
    let _ = writeln!(s, "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>");
    let _ = writeln!(s, "<text x=\"10\" y=\"24\" font-size=\"15\" font-weight=\"bold\">{}</text>", esc(&title));
    let _ = writeln!(s, "<text x=\"10\" y=\"42\" font-size=\"11\" fill=\"#444\">{}</text>", esc(&subtitle));

    // Axis names and tick labels.
    let col_name = layout.out_dims().last().map_or("dim0".to_string(), |d| d.as_str().to_string());
    let row_name = if rank >= 2 { layout.out_dims().nth(rank - 2).map(|d| d.as_str().to_string()) } else { None };
    let _ = writeln!(
        s,
        "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\" text-anchor=\"middle\">{col_name} →</text>",
        left + grid_w / 2.0,
        top - 26.0
    );
    if let Some(row_name) = &row_name {
        let _ = writeln!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\" text-anchor=\"end\">{row_name} ↓</text>",
            left - 5.0,
            top - 26.0
        );
    }
    let col_step = tick_step(cw, 26.0);
    for c in (0..cols).step_by(col_step) {
        let x = left + (c as f64 + 0.5) * cw;
        let _ =
            writeln!(s, "<text x=\"{x:.1}\" y=\"{:.1}\" font-size=\"9\" text-anchor=\"middle\">{c}</text>", top - 6.0);
    }

    for sl in 0..slices {
        let y0 = top + sl as f64 * slice_h + slice_gap;
        if rank >= 3 {
            let lead = h.coords(sl * rows * cols);
            let idx: Vec<String> = lead[..rank - 2].iter().map(u32::to_string).collect();
            let _ = writeln!(
                s,
                "<text x=\"{left}\" y=\"{:.1}\" font-size=\"11\">[{}, :, :]</text>",
                y0 - 8.0,
                idx.join(", ")
            );
        }
        if rank >= 2 {
            for r in (0..rows).step_by(tick_step(ch, 12.0)) {
                let y = y0 + (r as f64 + 0.5) * ch + 3.0;
                let _ = writeln!(
                    s,
                    "<text x=\"{:.1}\" y=\"{y:.1}\" font-size=\"9\" text-anchor=\"end\">{r}</text>",
                    left - 5.0
                );
            }
        }
        for r in 0..rows {
            for c in 0..cols {
                let (label, fill, tip) = &cells[(sl * rows + r) * cols + c];
                let (x, y) = (left + c as f64 * cw, y0 + r as f64 * ch);
                let stroke = if labels { " stroke=\"#777\" stroke-width=\"0.5\"" } else { "" };
                let _ = write!(
                    s,
                    "<rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{cw:.1}\" height=\"{ch:.1}\" fill=\"{fill}\"{stroke}><title>{}</title></rect>",
                    esc(tip)
                );
                if labels && !label.is_empty() {
                    let _ = write!(
                        s,
                        "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"{font}\" text-anchor=\"middle\">{}</text>",
                        x + cw / 2.0,
                        y + ch / 2.0 + font * 0.35,
                        esc(label)
                    );
                }
                s.push('\n');
            }
        }
        let _ = writeln!(
            s,
            "<rect x=\"{left}\" y=\"{y0:.1}\" width=\"{grid_w:.1}\" height=\"{:.1}\" fill=\"none\" stroke=\"#222\" stroke-width=\"1\"/>",
            rows as f64 * ch
        );
    }

    for (i, (fill, text)) in legend.iter().enumerate() {
        let x = 10.0 + (i % legend_per_row) as f64 * legend_step;
        let y = grid_bottom + 24.0 + (i / legend_per_row) as f64 * 22.0;
        let _ = writeln!(
            s,
            "<rect x=\"{x}\" y=\"{:.1}\" width=\"14\" height=\"14\" fill=\"{fill}\" stroke=\"#777\" stroke-width=\"0.5\"/>\
             <text x=\"{:.1}\" y=\"{y:.1}\" font-size=\"11\">{}</text>",
            y - 11.0,
            x + 19.0,
            esc(text)
        );
    }
    s.push_str("</svg>\n");
    s
}

/// Every `step`-th tick so that labels `min_gap` apart do not overlap; a power of two.
fn tick_step(cell: f64, min_gap: f64) -> usize {
    let mut step = 1;
    while (step as f64) * cell < min_gap {
        step *= 2;
    }
    step
}

fn subtitle(h: &Holders, layout: &LinearLayout) -> String {
    let shape: Vec<String> = h.shape.iter().map(u32::to_string).collect();
    let ins: Vec<String> =
        layout.in_dim_sizes().iter().map(|(n, s)| format!("{s} {n}{}", if *s == 1 { "" } else { "s" })).collect();
    let what = match h.kind {
        Kind::Distributed => "cell = t<lane> r<register>, color = warp",
        Kind::Shared => "cell = offset, color = bank",
        Kind::TensorMemory => "cell = row,col, color = 32-row group",
        Kind::Other => "cell = inputs",
    };
    let copies = h.of(0).len();
    let more = if copies > 1 {
        format!(" · each element held {copies}x: +n = n more holders (hover for all)")
    } else {
        String::new()
    };
    format!("tensor {} · {} · {what}{more}", shape.join("×"), ins.join(" × "))
}

/// `(color, text)` of each legend entry: the warps (up to 32), the banks, or the row groups.
fn legend_entries(h: &Holders, elem_bits: u32) -> Vec<(String, String)> {
    match h.kind {
        Kind::Distributed => {
            let (warps, blocks) = (h.size("warp") as u64, h.size("block") as u64);
            let total = warps * blocks;
            let mut v: Vec<(String, String)> = (0..total.min(32))
                .map(|g| {
                    let text = if blocks > 1 {
                        format!("block {} warp {}", g / warps, g % warps)
                    } else {
                        format!("warp {g}")
                    };
                    (color(g), text)
                })
                .collect();
            if total > 32 {
                v.push(("#ffffff".to_string(), format!("... {} warps", total)));
            }
            v
        }
        Kind::Shared => {
            let mut v: Vec<(String, String)> = (0..32).map(|b| (bank_color(b), format!("bank {b}"))).collect();
            v.push(("#ffffff".to_string(), format!("{elem_bits}-bit elems")));
            v
        }
        Kind::TensorMemory => {
            let groups = (h.size("row") as u64).div_ceil(32);
            (0..groups).map(|g| (color(g), format!("rows {}..{}", g * 32, g * 32 + 31))).collect()
        }
        Kind::Other => Vec::new(),
    }
}

#[cfg(test)]
mod tests;
