//! Every spec type printed the way a Gluon kernel writes it:
//!
//! ```text
//! BlockedLayout([1,4],[8,4],[4,1],[1,0])
//! BlockedLayout([1],[32],[4],[0],cga_layout=[[1]])
//! BlockedLayout([1],[4],[4],[0],ctas_per_cga=[4],cta_split_num=[2],cta_order=[0])
//! SliceLayout(0, BlockedLayout([1,4],[8,4],[4,1],[1,0]))
//! NVMMADistributedLayout([3,0],[4,1],[16,128,16])
//! DotOperandLayout(0, NVMMADistributedLayout([2,0],[4,1],[16,8]), 2)
//! DistributedLinearLayout([[0,1]],[[0,2],[0,4],[1,0],[2,0],[4,0]],[],[],[8,4])
//! TmemRegLayout(TensorMemoryLayout((128,128), 1), "32x32b", 4, 32)
//! SwizzledSharedLayout(2,2,4,[1,0])
//! NVMMASharedLayout(128, 16)
//! NVMMASharedLayout(64, 8, rank=3, transposed=True, cga_layout=[[1,0,0]])
//! SharedLinearLayout([[0,1],[1,0]], block_bases=[[2,0]], alignment=32)
//! TensorMemoryLayout((128,128), 1)
//! TensorMemoryLayout((64,256), 2, cta_split_num=(2,1), two_ctas=True)
//! ```
//!
//! Lists print without spaces; optional parameters are printed only when they differ from Gluon's defaults,
//! as keyword arguments. `TmemRegLayout` is not a Gluon class (Gluon's `get_tmem_reg_layout` returns a
//! `DistributedLinearLayout`); it prints its TMEM layout, the PTX shape, the warp count and the element width.

use std::fmt::{self, Display, Formatter, Write};

use super::{
    BlockedLayout, CgaLayout, DistributedLayout, DistributedLinearLayout, DotOperandLayout, NvmmaDistributedLayout,
    NvmmaSharedLayout, SharedLayout, SharedLinearLayout, SliceLayout, SwizzledSharedLayout, TensorMemoryLayout,
    TensorMemoryScalesLayout, TmemRegLayout,
};

fn list(f: &mut impl Write, values: &[u32]) -> fmt::Result {
    f.write_char('[')?;
    for (i, v) in values.iter().enumerate() {
        if i > 0 {
            f.write_char(',')?;
        }
        write!(f, "{v}")?;
    }
    f.write_char(']')
}

fn nested(f: &mut impl Write, values: &[Vec<u32>]) -> fmt::Result {
    f.write_char('[')?;
    for (i, v) in values.iter().enumerate() {
        if i > 0 {
            f.write_char(',')?;
        }
        list(f, v)?;
    }
    f.write_char(']')
}

/// The CGA keyword arguments, each preceded by `sep` (nothing for a single CTA).
fn cga_kwargs(f: &mut Formatter<'_>, cga: &CgaLayout, sep: &str) -> fmt::Result {
    match cga {
        CgaLayout::Single => Ok(()),
        CgaLayout::Bases(b) if b.is_empty() => Ok(()),
        CgaLayout::Bases(b) => {
            write!(f, "{sep}cga_layout=")?;
            nested(f, b)
        }
        CgaLayout::Legacy { ctas_per_cga, cta_split, cta_order } => {
            write!(f, "{sep}ctas_per_cga=")?;
            list(f, ctas_per_cga)?;
            write!(f, "{sep}cta_split_num=")?;
            list(f, cta_split)?;
            write!(f, "{sep}cta_order=")?;
            list(f, cta_order)
        }
    }
}

impl Display for BlockedLayout {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str("BlockedLayout(")?;
        list(f, &self.size_per_thread)?;
        f.write_char(',')?;
        list(f, &self.threads_per_warp)?;
        f.write_char(',')?;
        list(f, &self.warps_per_cta)?;
        f.write_char(',')?;
        list(f, &self.order)?;
        cga_kwargs(f, &self.cga, ",")?;
        f.write_char(')')
    }
}

impl Display for SliceLayout {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "SliceLayout({}, {})", self.dim, self.parent)
    }
}

impl Display for DotOperandLayout {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "DotOperandLayout({}, {}, {})", self.operand_index, self.parent, self.k_width)
    }
}

impl Display for NvmmaDistributedLayout {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str("NVMMADistributedLayout(")?;
        list(f, &self.version)?;
        f.write_char(',')?;
        list(f, &self.warps_per_cta)?;
        f.write_char(',')?;
        list(f, &self.instr_shape)?;
        cga_kwargs(f, &self.cga, ",")?;
        f.write_char(')')
    }
}

impl Display for DistributedLinearLayout {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str("DistributedLinearLayout(")?;
        for bases in [&self.reg_bases, &self.lane_bases, &self.warp_bases, &self.block_bases] {
            nested(f, bases)?;
            f.write_char(',')?;
        }
        list(f, &self.shape)?;
        f.write_char(')')
    }
}

impl Display for TmemRegLayout {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "TmemRegLayout({}, \"{}{}\", {}, {})",
            self.tmem,
            self.access.ptx_name(),
            if self.split_n { "_splitn" } else { "" },
            self.num_warps,
            self.element_bitwidth
        )
    }
}

impl Display for DistributedLayout {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            DistributedLayout::Blocked(l) => l.fmt(f),
            DistributedLayout::Slice(l) => l.fmt(f),
            DistributedLayout::DotOperand(l) => l.fmt(f),
            DistributedLayout::Nvmma(l) => l.fmt(f),
            DistributedLayout::Linear(l) => l.fmt(f),
            DistributedLayout::TmemReg(l) => l.fmt(f),
        }
    }
}

impl Display for SwizzledSharedLayout {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "SwizzledSharedLayout({},{},{},", self.vec, self.per_phase, self.max_phase)?;
        list(f, &self.order)?;
        cga_kwargs(f, &self.cga, ",")?;
        f.write_char(')')
    }
}

impl Display for NvmmaSharedLayout {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "NVMMASharedLayout({}, {}", self.swizzle_byte_width, self.element_bitwidth)?;
        if self.rank != 2 {
            write!(f, ", rank={}", self.rank)?;
        }
        if self.transposed {
            f.write_str(", transposed=True")?;
        }
        if self.fp4_padded {
            f.write_str(", fp4_padded=True")?;
        }
        cga_kwargs(f, &self.cga, ", ")?;
        f.write_char(')')
    }
}

impl Display for SharedLinearLayout {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str("SharedLinearLayout(")?;
        nested(f, &self.offset_bases)?;
        if !self.block_bases.is_empty() {
            f.write_str(", block_bases=")?;
            nested(f, &self.block_bases)?;
        }
        if self.alignment != 16 {
            write!(f, ", alignment={}", self.alignment)?;
        }
        f.write_char(')')
    }
}

impl Display for SharedLayout {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            SharedLayout::Swizzled(l) => l.fmt(f),
            SharedLayout::Nvmma(l) => l.fmt(f),
            SharedLayout::Linear(l) => l.fmt(f),
        }
    }
}

impl Display for TensorMemoryLayout {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "TensorMemoryLayout(({},{}), ", self.block[0], self.block[1])?;
        match self.col_stride {
            TensorMemoryLayout::UNPACKED => f.write_str("unpacked=True")?,
            s => write!(f, "{s}")?,
        }
        if self.cta_split != [1, 1] {
            write!(f, ", cta_split_num=({},{})", self.cta_split[0], self.cta_split[1])?;
        }
        if self.two_ctas {
            f.write_str(", two_ctas=True")?;
        }
        f.write_char(')')
    }
}

impl Display for TensorMemoryScalesLayout {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str("TensorMemoryScalesLayout(")?;
        if self.cta_split != [1, 1] {
            write!(f, "cta_split_num=({},{})", self.cta_split[0], self.cta_split[1])?;
        }
        if self.broadcast > 1 {
            let zeros: Vec<&str> = (0..self.broadcast.trailing_zeros()).map(|_| "[0, 0]").collect();
            write!(f, "cga_layout=[{}]", zeros.join(", "))?;
        }
        f.write_char(')')
    }
}
