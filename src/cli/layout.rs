//! `tessel layout`: show a layout written in Gluon spelling on a tensor shape, and `tessel layout convert`: plan
//! the conversion between two layouts (`check` and `fuzz` are in `layout_check.rs`, what they all read from the
//! command line in `layout_input.rs`).

use std::io::Write;
use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::layout_check::{CHECK_ABOUT, CheckArgs, FUZZ_ABOUT, FuzzArgs};
use super::layout_input::{Shape, parse, parse_bits, resolve_shape, to_linear};
use super::{CliError, Failure};
use crate::layouts::convert::{ConversionPlan, PlanOptions, bank_conflicts, plan_conversion};
use crate::layouts::expr::layout_kind;
use crate::layouts::view::{self, SvgOptions};
use crate::layouts::{AnyLayout, LinearLayout, SharedLayout};

const LAYOUT_EXAMPLES: &str = "\
Examples:
  tessel layout 'BlockedLayout([1,4],[8,4],[4,1],[1,0])' --shape 64x128
  tessel layout 'gl.SliceLayout(0, gl.BlockedLayout([1,4],[8,4],[4,1],[1,0]))' --shape 128 --table
  tessel layout 'NVMMADistributedLayout([3,0],[4,1],[16,64,16])' --shape 64x64 --svg wgmma.svg
  tessel layout 'NVMMASharedLayout(128, 16)' --shape 64x64 --json
  tessel layout convert 'BlockedLayout([1,8],[4,8],[4,1],[1,0])' 'NVMMADistributedLayout([3,0],[4,1],[16,64,16])' \\
      --shape 64x64
  tessel layout check 'NVMMADistributedLayout([2,0],[2,2],[16,8])' 'BlockedLayout([1,8],[4,8],[4,1],[1,0])' \\
      --shape 64x128 --bits 16,32
  tessel layout fuzz --families mma,blocked,slice --cases 200 --seed 1

The expression is what a Gluon kernel writes (quote it for the shell): positional or keyword arguments with
Gluon's names and defaults; gl./ttgl./gl.nvidia.blackwell. prefixes are optional. Layouts: BlockedLayout,
SliceLayout, DotOperandLayout, NVMMADistributedLayout, DistributedLinearLayout, SwizzledSharedLayout,
NVMMASharedLayout (and NVMMASharedLayout.get_default_for), SharedLinearLayout, MBarrierLayout, TensorMemoryLayout,
get_tmem_reg_layout.";

const CONVERT_ABOUT: &str = "\
Plan the conversion of a tensor from layout SRC to layout DST and count its bank conflicts.

Between two distributed layouts, the planner picks the cheapest correct transfer: nothing, a permutation
of each thread's registers, intra-warp shuffles, or a round trip through shared memory with a swizzle that
keeps the vectorized stores and loads free of bank conflicts. With a shared layout on one side, it counts
the bank conflicts of the store into it (or the load from it).";

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true, after_help = LAYOUT_EXAMPLES)]
pub struct LayoutArgs {
    #[command(subcommand)]
    pub command: Option<LayoutCommand>,

    /// The layout in Gluon spelling, e.g. 'BlockedLayout([1,4],[8,4],[4,1],[1,0])'
    #[arg(value_name = "EXPR", required = true)]
    pub expr: Option<String>,

    /// Tensor shape, e.g. 64x128 (optional when the expression fixes it)
    #[arg(long, value_name = "SHAPE")]
    pub shape: Option<Shape>,

    /// Print the bases as JSON
    #[arg(long, group = "view")]
    pub json: bool,

    /// Print which thread and register hold each element
    #[arg(long, group = "view")]
    pub table: bool,

    /// Write an SVG picture to FILE ('-' = stdout): colored by warp, or by bank for shared layouts
    #[arg(long, value_name = "FILE", group = "view")]
    pub svg: Option<PathBuf>,

    /// Element bits, for the shared-memory banks in the SVG [default: the layout's own, else 16]
    #[arg(long, value_name = "BITS", value_parser = parse_bits)]
    pub bits: Option<u32>,
}

#[derive(Debug, Subcommand)]
pub enum LayoutCommand {
    /// Plan the conversion of a tensor from layout SRC to layout DST and count its bank conflicts
    #[command(long_about = CONVERT_ABOUT)]
    Convert(ConvertArgs),
    /// Run the planned conversion from SRC to DST on random data: correctness, bank conflicts, vector widths,
    /// instruction counts
    #[command(long_about = CHECK_ABOUT)]
    Check(CheckArgs),
    /// Check random conversions between layout families and print the first shrunk counterexample
    #[command(long_about = FUZZ_ABOUT)]
    Fuzz(FuzzArgs),
}

#[derive(Debug, Args)]
pub struct ConvertArgs {
    /// The layout the tensor is in, in Gluon spelling
    #[arg(value_name = "SRC")]
    pub src: String,

    /// The layout the tensor should be in
    #[arg(value_name = "DST")]
    pub dst: String,

    /// Tensor shape, e.g. 64x128 (optional when SRC or DST fixes it)
    #[arg(long, value_name = "SHAPE")]
    pub shape: Option<Shape>,

    /// Element size in bits: 8, 16, 32 or 64
    #[arg(long, value_name = "BITS", default_value_t = 16, value_parser = parse_bits)]
    pub bits: u32,

    /// The most shared memory the conversion may use, in bytes per CTA
    #[arg(long, value_name = "BYTES")]
    pub max_scratch: Option<u32>,

    /// Never use warp shuffles; go through shared memory instead
    #[arg(long)]
    pub no_shuffles: bool,
}

pub(super) fn run(args: LayoutArgs, out: &mut dyn Write) -> Result<(), Failure> {
    match args.command {
        Some(LayoutCommand::Convert(c)) => return convert(c, out),
        Some(LayoutCommand::Check(c)) => return super::layout_check::check(c, out),
        Some(LayoutCommand::Fuzz(c)) => return super::layout_check::fuzz(c, out),
        None => {}
    }
    let Some(src) = args.expr else {
        return Err(CliError::Usage("no layout given; try `tessel layout --help`".into()).into());
    };
    let parsed = parse("EXPR", &src)?;
    let shape = resolve_shape(args.shape, &[&parsed])?;
    let linear = to_linear(&parsed.layout, &shape)?;
    if args.json {
        writeln!(out, "{}", view::to_json(&linear))?;
    } else if args.table {
        viewable(&linear)?;
        writeln!(out, "{} on {shape}:", parsed.layout)?;
        write!(out, "{}", view::to_table(&linear))?;
    } else if let Some(path) = args.svg {
        viewable(&linear)?;
        let bits = args.bits.unwrap_or(match &parsed.layout {
            AnyLayout::Shared(SharedLayout::Nvmma(l)) => l.element_bitwidth,
            _ => 16,
        });
        let title = Some(format!("{} on {shape}", parsed.layout));
        let svg = view::to_svg_with(&linear, &SvgOptions { title, elem_bits: bits });
        if path.as_os_str() == "-" {
            out.write_all(svg.as_bytes())?;
        } else {
            std::fs::write(&path, svg)
                .map_err(|e| CliError::Failed(format!("cannot write {}: {e}", path.display())))?;
            writeln!(out, "wrote {} ({} on {shape})", path.display(), layout_kind(&parsed.layout))?;
        }
    } else {
        writeln!(out, "{} on {shape}:", parsed.layout)?;
        writeln!(out, "{linear}")?;
        writeln!(out, "{}", summary(&linear))?;
    }
    Ok(())
}

fn convert(args: ConvertArgs, out: &mut dyn Write) -> Result<(), Failure> {
    let src = parse("SRC", &args.src)?;
    let dst = parse("DST", &args.dst)?;
    let is = |l: &AnyLayout, dist: bool| {
        matches!((l, dist), (AnyLayout::Distributed(_), true) | (AnyLayout::Shared(_), false))
    };
    let (src_dist, dst_dist) = (is(&src.layout, true), is(&dst.layout, true));
    if !(src_dist && (dst_dist || is(&dst.layout, false)) || dst_dist && is(&src.layout, false)) {
        let msg = format!(
            "cannot convert a {} to a {}: one side must be a distributed (register) layout, the other a distributed \
             or shared layout",
            layout_kind(&src.layout),
            layout_kind(&dst.layout)
        );
        return Err(CliError::Usage(msg).into());
    }
    let shape = resolve_shape(args.shape, &[&src, &dst])?;
    let (s, d) = (to_linear(&src.layout, &shape)?, to_linear(&dst.layout, &shape)?);
    let usage = |e: crate::layouts::LayoutError| CliError::Usage(e.0);
    let header = format!("{} -> {} on {shape}, {}-bit elements", src.layout, dst.layout, args.bits);
    if src_dist && dst_dist {
        let opts = PlanOptions { max_scratch_bytes: args.max_scratch, allow_shuffles: !args.no_shuffles };
        let plan = plan_conversion(&s, &d, args.bits, &opts).map_err(usage)?;
        let conflicts = match &plan {
            ConversionPlan::SharedRoundTrip(p) => p.store_conflicts + p.load_conflicts,
            _ => 0,
        };
        write!(out, "{header}\n{plan}bank conflicts: {conflicts}\n")?;
    } else {
        let (dist, shared, what) =
            if src_dist { (&s, &d, "store into shared memory") } else { (&d, &s, "load from shared memory") };
        let r = bank_conflicts(dist, shared, args.bits).map_err(usage)?;
        writeln!(out, "{header}")?;
        writeln!(
            out,
            "{what}: {} instructions of {} bytes/lane ({} lanes/phase), {} wavefronts (ideal {})",
            r.instructions.len(),
            r.bytes_per_access,
            r.lanes_per_phase,
            r.wavefronts,
            r.ideal_wavefronts
        )?;
        writeln!(out, "bank conflicts: {}", r.conflicts)?;
    }
    Ok(())
}

fn viewable(layout: &LinearLayout) -> Result<(), CliError> {
    view::check_viewable(layout).map_err(|e| CliError::Usage(format!("{e}; use the default output or --json")))
}

/// One line: surjective / injective, how much each element is duplicated and by which bits, and what each
/// thread (or the memory) holds.
pub fn summary(l: &LinearLayout) -> String {
    let (ins, outs, rank) = (l.total_in_log2(), l.total_out_log2(), l.rank());
    let mut parts = vec![if rank == outs {
        "surjective".to_string()
    } else {
        format!("not surjective (2^{rank} of the 2^{outs} elements are held)")
    }];
    let free: Vec<String> =
        l.free_variable_masks().into_iter().filter(|&(_, m)| m != 0).map(|(d, m)| format!("{d} {m:#b}")).collect();
    if free.is_empty() {
        parts.push("injective (no broadcast)".to_string());
    } else {
        parts.push(format!("each element held {}x (broadcast bits: {})", 1u64 << (ins - rank), free.join(", ")));
    }
    let size = |d: &str| l.in_dim_size(d);
    if l.has_in_dim("register") || l.has_in_dim("lane") {
        let regs = size("register");
        let run = register_run(l);
        let run_text = match run {
            Some((n, dim)) if n > 1 => format!(" (runs of {n} along {dim})"),
            _ => String::new(),
        };
        parts.push(format!("{} per thread{run_text}", count(regs, "register")));
        parts.push(format!(
            "{} x {} x {}",
            count(size("lane"), "lane"),
            count(size("warp"), "warp"),
            count(size("block"), "block")
        ));
    } else if l.has_in_dim("offset") {
        parts.push(format!("{} x {}", count(size("offset"), "offset"), count(size("block"), "block")));
    } else if l.has_in_dim("row") {
        parts.push(format!("{} x {}", count(size("row"), "row"), count(size("col"), "column")));
    }
    parts.join("; ")
}

fn count(n: u32, word: &str) -> String {
    format!("{n} {word}{}", if n == 1 { "" } else { "s" })
}

/// How many consecutive elements along one out-dim a thread's first registers hold: the leading register bases
/// `1, 2, 4, ...` along the same dim.
fn register_run(l: &LinearLayout) -> Option<(u32, String)> {
    let bases = l.bases("register");
    let first = bases.first()?;
    let dim = first.iter().position(|&c| c == 1)?;
    let unit = |b: &[u32], v: u32| b.iter().enumerate().all(|(k, &c)| c == if k == dim { v } else { 0 });
    let n = bases.iter().enumerate().take_while(|(i, b)| unit(b, 1 << i)).count();
    Some((1 << n, l.out_dims().nth(dim)?.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_names_broadcast_bits_and_register_runs() {
        let blocked = crate::layouts::expr::parse_layout("BlockedLayout([1,4],[8,4],[4,1],[1,0])").expect("parses");
        let l = blocked.to_linear(&[64, 128]).expect("builds");
        assert_eq!(
            summary(&l),
            "surjective; injective (no broadcast); 64 registers per thread (runs of 4 along dim1); 32 lanes x 4 warps \
             x 1 block"
        );
        // 16x16 with 128 threads of 4 elements: half the warps hold copies.
        let small = blocked.to_linear(&[16, 16]).expect("builds");
        assert_eq!(
            summary(&small),
            "surjective; each element held 2x (broadcast bits: warp 0b10); 4 registers per thread (runs of 4 along \
             dim1); 32 lanes x 4 warps x 1 block"
        );
    }
}
