//! `tessel layout check`: run the planned conversion between two layouts on random data and report what it costs;
//! `tessel layout fuzz`: do the same for random pairs of layout families and print the first shrunk
//! counterexample. Both are `tessel_layouts::testing` behind a command line.

use std::io::Write;

use clap::Args;

use super::layout_input::{Shape, parse, parse_bits, resolve_shape, to_linear};
use super::{CliError, Failure};
use crate::layouts::AnyLayout;
use crate::layouts::convert::{ConversionPlan, PlanOptions, plan_conversion};
use crate::layouts::expr::layout_kind;
use crate::layouts::testing::{ConversionReport, Family, FuzzOptions, check_plan, corrupt_plan, fuzz_conversions};

pub const CHECK_ABOUT: &str = "\
Check the conversion of a tensor from layout SRC to layout DST: plan it, run the plan thread by thread on
random data at each element width, and report whether every element lands where DST says, with the plan's
shuffles, shared-memory accesses (their width and bank conflicts) and barriers. Exits with 0 when the
conversion is correct at every width, 1 when it is not (with the first wrong register: which element, held by
which source slot, landed where), 2 on bad input.";

pub const FUZZ_ABOUT: &str = "\
Check random conversions between layouts drawn from the given families (both sides at one random shape,
warp count and element width) and stop at the first wrong one, shrunk to a minimal case. Exits with 0 when
every conversion is correct, 1 otherwise.

Families: blocked, slice, dot-fma, dot-mma-v2, dot-mma-v3, mma-v2, mma-v3, tmem-reg, linear; groups: mma (both
accumulators), dot (every dot operand), distributed (all of them).";

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The layout the tensor is in, in Gluon spelling
    #[arg(value_name = "SRC")]
    pub src: String,

    /// The layout the tensor should be in
    #[arg(value_name = "DST")]
    pub dst: String,

    /// Tensor shape, e.g. 64x128 (optional when SRC or DST fixes it)
    #[arg(long, value_name = "SHAPE")]
    pub shape: Option<Shape>,

    /// Element sizes in bits, comma-separated: 8, 16, 32, 64
    #[arg(long, value_name = "BITS", default_value = "8,16,32", value_delimiter = ',', value_parser = parse_bits)]
    pub bits: Vec<u32>,

    /// Random tensors to run the plan on, per element size
    #[arg(long, value_name = "N", default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..))]
    pub cases: u32,

    /// The most shared memory the conversion may use, in bytes per CTA
    #[arg(long, value_name = "BYTES")]
    pub max_scratch: Option<u32>,

    /// Never use warp shuffles; go through shared memory instead
    #[arg(long)]
    pub no_shuffles: bool,

    /// Test hook: break the plan on purpose before running it, to see what a failure looks like
    #[arg(long, hide = true)]
    pub corrupt_plan: bool,
}

#[derive(Debug, Args)]
pub struct FuzzArgs {
    /// Layout families to draw both sides from, comma-separated (see above)
    #[arg(long, value_name = "LIST", default_value = "distributed")]
    pub families: String,

    /// Random conversions to check
    #[arg(long, value_name = "N", default_value_t = 256, value_parser = clap::value_parser!(u32).range(1..))]
    pub cases: u32,

    /// Seed of the run (printed; the same seed draws the same conversions) [default: from the clock]
    #[arg(long, value_name = "S")]
    pub seed: Option<u64>,

    /// Test hook: break every plan on purpose before running it, to see what a failure looks like
    #[arg(long, hide = true)]
    pub corrupt_plan: bool,
}

pub(super) fn check(args: CheckArgs, out: &mut dyn Write) -> Result<(), Failure> {
    let src = parse("SRC", &args.src)?;
    let dst = parse("DST", &args.dst)?;
    for (label, p) in [("SRC", &src), ("DST", &dst)] {
        if !matches!(p.layout, AnyLayout::Distributed(_)) {
            return Err(CliError::Usage(format!(
                "{label} is a {}; `layout check` converts between distributed (register) layouts (use `layout \
                 convert` for the bank conflicts of a shared-memory access)",
                layout_kind(&p.layout)
            ))
            .into());
        }
    }
    let shape = resolve_shape(args.shape, &[&src, &dst])?;
    let (s, d) = (to_linear(&src.layout, &shape)?, to_linear(&dst.layout, &shape)?);
    let opts = PlanOptions { max_scratch_bytes: args.max_scratch, allow_shuffles: !args.no_shuffles };
    let mut bits: Vec<u32> = Vec::new();
    for b in args.bits {
        if !bits.contains(&b) {
            bits.push(b);
        }
    }
    // Plan every width first: a conversion that cannot be planned is bad input, reported before any output.
    let mut plans = Vec::new();
    for &b in &bits {
        let plan = plan_conversion(&s, &d, b, &opts)
            .map_err(|e| CliError::Usage(format!("cannot plan the conversion at {b} bits: {e}")))?;
        plans.push((b, plan));
    }
    writeln!(out, "{} -> {} on {shape}", src.layout, dst.layout)?;
    let mut failures: Vec<String> = Vec::new();
    let mut conflicts = 0;
    for (b, plan) in plans {
        let plan = if args.corrupt_plan {
            match corrupt_plan(&plan, &s, &d) {
                Some(broken) => {
                    writeln!(out, "{b}-bit: (test hook) the plan is corrupted on purpose")?;
                    broken
                }
                None => {
                    writeln!(out, "{b}-bit: (test hook) nothing in this plan can be corrupted")?;
                    plan
                }
            }
        } else {
            plan
        };
        let result = (0..args.cases).try_for_each(|k| check_plan(&plan, &s, &d, b, k as u64));
        let report = ConversionReport::of(plan, b);
        let verdict = match &result {
            Ok(()) => format!("correct on {} random tensor{}", args.cases, if args.cases == 1 { "" } else { "s" }),
            Err(_) => "WRONG".to_string(),
        };
        writeln!(out, "{b}-bit: {verdict}")?;
        write_report(out, &report)?;
        conflicts += report.store_conflicts + report.load_conflicts;
        if let Err(f) = result {
            failures.push(format!("at {b} bits: {f}"));
        }
    }
    let widths = bits.iter().map(u32::to_string).collect::<Vec<_>>().join(", ");
    if failures.is_empty() {
        writeln!(out, "result: pass (correct at {widths} bits; {conflicts} bank conflicts)")?;
        return Ok(());
    }
    writeln!(out, "result: FAIL")?;
    let msg = format!("the conversion is wrong {}", failures.join("\nand "));
    Err(CliError::Failed(msg).into())
}

/// The plan's first line, its instructions, its access width and its bank conflicts.
fn write_report(out: &mut dyn Write, r: &ConversionReport) -> std::io::Result<()> {
    let first = r.plan.to_string();
    writeln!(out, "  plan: {}", first.lines().next().unwrap_or(""))?;
    writeln!(
        out,
        "  instructions: {} shfl.sync per thread, {} st.shared + {} ld.shared per CTA, {} barrier{} per thread",
        r.shuffles,
        r.shared_stores,
        r.shared_loads,
        r.barriers,
        if r.barriers == 1 { "" } else { "s" }
    )?;
    if let ConversionPlan::SharedRoundTrip(_) = r.plan {
        writeln!(out, "  vector width: {} bytes per lane", r.access_bytes)?;
        writeln!(out, "  bank conflicts: store {}, load {}", r.store_conflicts, r.load_conflicts)?;
    }
    Ok(())
}

pub(super) fn fuzz(args: FuzzArgs, out: &mut dyn Write) -> Result<(), Failure> {
    let families = Family::parse_list(&args.families).map_err(CliError::Usage)?;
    if let Some(f) = families.iter().find(|f| !f.is_distributed()) {
        let names: Vec<&str> = Family::DISTRIBUTED.iter().map(|f| f.name()).collect();
        return Err(CliError::Usage(format!(
            "{f} is a memory layout; `layout fuzz` draws conversions between register layouts: {}",
            names.join(", ")
        ))
        .into());
    }
    let seed = args.seed.unwrap_or_else(|| {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64)
    });
    let names: Vec<&str> = families.iter().map(|f| f.name()).collect();
    writeln!(out, "fuzz: {} random conversions among {} (seed {seed})", args.cases, names.join(", "))?;
    if args.corrupt_plan {
        writeln!(out, "(test hook) every plan is corrupted on purpose")?;
    }
    let outcome = fuzz_conversions(&FuzzOptions { families, cases: args.cases, seed, corrupt: args.corrupt_plan });
    let kinds: Vec<String> = outcome.plan_kinds.iter().map(|(k, n)| format!("{k} {n}")).collect();
    match outcome.failure {
        None => {
            writeln!(out, "result: pass ({} conversions correct: {})", outcome.passed, kinds.join(", "))?;
            Ok(())
        }
        Some(f) => {
            writeln!(out, "result: FAIL after {} correct conversions", outcome.passed)?;
            let msg = format!("a conversion is wrong; the smallest failing case found:\n  {}\n{}", f.case, f.reason);
            Err(CliError::Failed(msg).into())
        }
    }
}
