//! The layout families, one per kind of layout the crate constructs, and the strategies that draw a conversion
//! between two of them.
//!
//! [`Family::of`] matches every variant of [`AnyLayout`] (and of [`DistributedLayout`] and [`SharedLayout`])
//! without a wildcard, so a new layout variant does not compile until it has a family, and the family list's test
//! fails until the family has a strategy.

use std::fmt;

use proptest::prelude::*;

use super::distributed::{
    blocked_2d, distributed_linear, dot_fma, dot_mma_v2, dot_mma_v3, mma_v2, mma_v3, slice, tmem_reg, tmem_reg_choices,
};
use super::shared::{nvmma_shared, shared_linear, swizzled_shared, tensor_memory};
use crate::standard::{AnyLayout, DistributedLayout, SharedLayout};

/// The setting both sides of a conversion share: a rank-2 shape, `2^log_warps` warps per CTA (one CTA), and the
/// element width in bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ctx {
    pub shape: [u32; 2],
    pub log_warps: u32,
    pub bits: u32,
}

/// A kind of layout. Distributed families come first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Family {
    /// `BlockedLayout`.
    Blocked,
    /// `SliceLayout` of a blocked or batched `mma.sync` parent.
    Slice,
    /// `DotOperandLayout` of a blocked accumulator (the FMA dot).
    DotFma,
    /// `DotOperandLayout` of an `mma.sync` accumulator (A or B).
    DotMmaV2,
    /// `DotOperandLayout` of a `wgmma` accumulator (A in registers).
    DotMmaV3,
    /// `NVMMADistributedLayout` version 2 (`mma.sync`).
    MmaV2,
    /// `NVMMADistributedLayout` version 3 (`wgmma`).
    MmaV3,
    /// The register layout of `tcgen05.ld/st` (`TmemRegLayout`).
    TmemReg,
    /// `DistributedLinearLayout`, written as bases (possibly broadcasting).
    Linear,
    /// `SwizzledSharedLayout`.
    SwizzledShared,
    /// `NVMMASharedLayout`.
    NvmmaShared,
    /// `SharedLinearLayout`.
    SharedLinear,
    /// `TensorMemoryLayout`.
    TensorMemory,
}

impl Family {
    /// Every family, in declaration order.
    pub const ALL: [Family; 13] = [
        Family::Blocked,
        Family::Slice,
        Family::DotFma,
        Family::DotMmaV2,
        Family::DotMmaV3,
        Family::MmaV2,
        Family::MmaV3,
        Family::TmemReg,
        Family::Linear,
        Family::SwizzledShared,
        Family::NvmmaShared,
        Family::SharedLinear,
        Family::TensorMemory,
    ];

    /// The families of register layouts: what a conversion goes between.
    pub const DISTRIBUTED: [Family; 9] = [
        Family::Blocked,
        Family::Slice,
        Family::DotFma,
        Family::DotMmaV2,
        Family::DotMmaV3,
        Family::MmaV2,
        Family::MmaV3,
        Family::TmemReg,
        Family::Linear,
    ];

    /// The family of a layout. A dot operand is classified by its parent (an invalid parent counts as FMA).
    pub fn of(layout: &AnyLayout) -> Family {
        match layout {
            AnyLayout::Distributed(d) => Family::of_distributed(d),
            AnyLayout::Shared(s) => match s {
                SharedLayout::Swizzled(_) => Family::SwizzledShared,
                SharedLayout::Nvmma(_) => Family::NvmmaShared,
                SharedLayout::Linear(_) => Family::SharedLinear,
            },
            AnyLayout::TensorMemory(_) | AnyLayout::TensorMemoryScales(_) => Family::TensorMemory,
        }
    }

    /// The family of a distributed layout.
    pub fn of_distributed(layout: &DistributedLayout) -> Family {
        match layout {
            DistributedLayout::Blocked(_) => Family::Blocked,
            DistributedLayout::Slice(_) => Family::Slice,
            DistributedLayout::DotOperand(d) => match &*d.parent {
                DistributedLayout::Nvmma(m) if m.is_hopper() => Family::DotMmaV3,
                DistributedLayout::Nvmma(_) => Family::DotMmaV2,
                _ => Family::DotFma,
            },
            DistributedLayout::Nvmma(m) if m.is_hopper() => Family::MmaV3,
            DistributedLayout::Nvmma(_) => Family::MmaV2,
            DistributedLayout::Linear(_) => Family::Linear,
            DistributedLayout::TmemReg(_) => Family::TmemReg,
        }
    }

    /// The name `tessel layout fuzz --families` takes.
    pub fn name(self) -> &'static str {
        match self {
            Family::Blocked => "blocked",
            Family::Slice => "slice",
            Family::DotFma => "dot-fma",
            Family::DotMmaV2 => "dot-mma-v2",
            Family::DotMmaV3 => "dot-mma-v3",
            Family::MmaV2 => "mma-v2",
            Family::MmaV3 => "mma-v3",
            Family::TmemReg => "tmem-reg",
            Family::Linear => "linear",
            Family::SwizzledShared => "swizzled-shared",
            Family::NvmmaShared => "nvmma-shared",
            Family::SharedLinear => "shared-linear",
            Family::TensorMemory => "tmem",
        }
    }

    /// Parses a comma-separated list of family names and groups (`mma` = both accumulators, `dot` = every dot
    /// operand, `distributed`, `shared`, `all`); duplicates are dropped, the order kept.
    pub fn parse_list(list: &str) -> Result<Vec<Family>, String> {
        let mut out: Vec<Family> = Vec::new();
        for word in list.split(',').map(str::trim).filter(|w| !w.is_empty()) {
            let group: Vec<Family> = match word.to_ascii_lowercase().as_str() {
                "mma" => vec![Family::MmaV2, Family::MmaV3],
                "dot" => vec![Family::DotFma, Family::DotMmaV2, Family::DotMmaV3],
                "distributed" => Family::DISTRIBUTED.to_vec(),
                "shared" => vec![Family::SwizzledShared, Family::NvmmaShared, Family::SharedLinear],
                "all" => Family::ALL.to_vec(),
                w => match Family::ALL.iter().find(|f| f.name() == w) {
                    Some(&f) => vec![f],
                    None => {
                        let names: Vec<&str> = Family::ALL.iter().map(|f| f.name()).collect();
                        return Err(format!(
                            "unknown layout family `{word}`; known: {}, and the groups mma, dot, distributed, shared, all",
                            names.join(", ")
                        ));
                    }
                },
            };
            for f in group {
                if !out.contains(&f) {
                    out.push(f);
                }
            }
        }
        if out.is_empty() {
            return Err("no layout family given".into());
        }
        Ok(out)
    }

    /// A register layout (one side of a conversion), as opposed to a memory layout.
    pub fn is_distributed(self) -> bool {
        Family::DISTRIBUTED.contains(&self)
    }

    /// The fewest warps (log2) a layout of this family needs: a warpgroup for `wgmma` and tcgen05.
    pub fn min_log_warps(self) -> u32 {
        match self {
            Family::MmaV3 | Family::DotMmaV3 | Family::TmemReg => 2,
            _ => 0,
        }
    }

    /// The fewest tensor rows (log2) a layout of this family needs: the 128 TMEM lanes for tcgen05.
    pub fn min_rows_log2(self) -> u32 {
        match self {
            Family::TmemReg | Family::TensorMemory => 7,
            _ => 0,
        }
    }

    /// Whether some layout of this family builds at `ctx`.
    pub fn available(self, ctx: &Ctx) -> bool {
        let widths_ok = !matches!(self, Family::MmaV3 | Family::DotMmaV3 | Family::DotMmaV2 | Family::TmemReg)
            || matches!(ctx.bits, 8 | 16 | 32);
        widths_ok
            && ctx.log_warps >= self.min_log_warps()
            && ctx.shape[0].trailing_zeros() >= self.min_rows_log2()
            && (self != Family::TmemReg || !tmem_reg_choices(ctx).is_empty())
    }

    /// A strategy for register layouts of this family at `ctx`.
    ///
    /// # Panics
    /// If the family is not distributed or not [`available`](Self::available) at `ctx`.
    pub fn distributed_strategy(self, ctx: &Ctx) -> BoxedStrategy<DistributedLayout> {
        assert!(self.available(ctx), "no {} layout builds at {ctx:?}", self.name());
        let (lw, bits) = (ctx.log_warps, ctx.bits);
        match self {
            Family::Blocked => blocked_2d(lw).boxed(),
            Family::Slice => slice(lw).boxed(),
            Family::DotFma => dot_fma(lw).boxed(),
            Family::DotMmaV2 => dot_mma_v2(lw, bits).boxed(),
            Family::DotMmaV3 => dot_mma_v3(lw, bits).boxed(),
            Family::MmaV2 => mma_v2(lw).boxed(),
            Family::MmaV3 => mma_v3(lw, bits).boxed(),
            Family::TmemReg => tmem_reg(ctx).boxed(),
            Family::Linear => distributed_linear(ctx.shape, lw).boxed(),
            Family::SwizzledShared | Family::NvmmaShared | Family::SharedLinear | Family::TensorMemory => {
                panic!("{} is a memory layout, not a register layout", self.name())
            }
        }
    }

    /// A strategy for layouts of this family at `ctx` (of any kind).
    ///
    /// # Panics
    /// If the family is not [`available`](Self::available) at `ctx`.
    pub fn strategy(self, ctx: &Ctx) -> BoxedStrategy<AnyLayout> {
        match self {
            Family::SwizzledShared => {
                swizzled_shared(2).prop_map(|l| AnyLayout::Shared(SharedLayout::Swizzled(l))).boxed()
            }
            Family::NvmmaShared => nvmma_shared(ctx).prop_map(AnyLayout::Shared).boxed(),
            Family::SharedLinear => shared_linear(ctx.shape).prop_map(AnyLayout::Shared).boxed(),
            Family::TensorMemory => {
                assert!(self.available(ctx), "no {} layout builds at {ctx:?}", self.name());
                tensor_memory(ctx).prop_map(AnyLayout::TensorMemory).boxed()
            }
            _ => self.distributed_strategy(ctx).prop_map(AnyLayout::Distributed).boxed(),
        }
    }
}

impl fmt::Display for Family {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A setting every family in `families` is available at: rows and columns 16 to 128 (at most 8K elements; at
/// least 128 rows when a tcgen05 family is among them), enough warps for each family (up to 8), 8-, 16- or 32-bit
/// elements.
pub fn ctx(families: &[Family]) -> impl Strategy<Value = Ctx> + Clone + use<> {
    let families = families.to_vec();
    let min_lw = families.iter().map(|f| f.min_log_warps()).max().unwrap_or(0);
    let min_m = families.iter().map(|f| f.min_rows_log2()).max().unwrap_or(0).max(4);
    let max_total = 13u32.max(min_m + 4);
    (min_m..=max_total - 4)
        .prop_flat_map(move |m| (Just(m), 4..=7u32.min(max_total - m)))
        .prop_flat_map(move |(m, n)| (Just([1u32 << m, 1 << n]), min_lw..=3, prop::sample::select(vec![8u32, 16, 32])))
        .prop_map(|(shape, log_warps, bits)| Ctx { shape, log_warps, bits })
        .prop_filter("a family has no layout at this setting", move |c| families.iter().all(|f| f.available(c)))
}

/// One conversion to check: two register layouts at one setting, whether shuffles are allowed, and a data seed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConversionCase {
    pub ctx: Ctx,
    pub src: DistributedLayout,
    pub dst: DistributedLayout,
    pub allow_shuffles: bool,
    pub seed: u64,
}

impl fmt::Display for ConversionCase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [m, n] = self.ctx.shape;
        write!(f, "{} -> {} on {m}x{n}, {}-bit elements", self.src, self.dst, self.ctx.bits)?;
        if !self.allow_shuffles {
            f.write_str(", no shuffles")?;
        }
        Ok(())
    }
}

/// A conversion between two register layouts drawn from `families` (each side from one family; both at the
/// same setting), with shuffles allowed four times in five.
///
/// # Panics
/// If `families` is empty or holds a memory family.
pub fn conversion_case(families: &[Family]) -> impl Strategy<Value = ConversionCase> + Clone + use<> {
    assert!(!families.is_empty(), "conversion_case: no families");
    if let Some(f) = families.iter().find(|f| !f.is_distributed()) {
        panic!("conversion_case: {f} is a memory layout; conversions go between register layouts");
    }
    let families = families.to_vec();
    let pick = prop::sample::select(families);
    (pick.clone(), pick).prop_flat_map(|(a, b)| {
        ctx(&[a, b])
            .prop_flat_map(move |c| {
                (
                    Just(c),
                    a.distributed_strategy(&c),
                    b.distributed_strategy(&c),
                    prop::bool::weighted(0.8),
                    any::<u64>(),
                )
            })
            .prop_map(|(ctx, src, dst, allow_shuffles, seed)| ConversionCase { ctx, src, dst, allow_shuffles, seed })
    })
}
