//! A readable multi-line summary of a conversion plan (what `tessel layout convert` prints).

use std::fmt;

use crate::convert::banks::BankReport;
use crate::convert::plan::ConversionPlan;
use crate::convert::swizzle::BarrierKind;
use crate::linear::write_basis;

/// Rounds printed in full; longer plans print the linear maps and the first rounds only.
const ROUNDS_SHOWN: usize = 4;

fn list(f: &mut fmt::Formatter<'_>, xs: &[u32]) -> fmt::Result {
    f.write_str("[")?;
    for (i, x) in xs.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        write!(f, "{x}")?;
    }
    f.write_str("]")
}

fn bank_line(f: &mut fmt::Formatter<'_>, what: &str, r: &BankReport) -> fmt::Result {
    writeln!(
        f,
        "  {what}: {} instructions of {} bytes/lane ({} lanes/phase), {} wavefronts (ideal {}), {} conflicts",
        r.instructions.len(),
        r.bytes_per_access,
        r.lanes_per_phase,
        r.wavefronts,
        r.ideal_wavefronts,
        r.conflicts
    )
}

impl fmt::Display for ConversionPlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConversionPlan::NoOp => writeln!(f, "no-op: every thread already holds its elements in place"),
            ConversionPlan::RegisterPermutation { src_register } => {
                writeln!(
                    f,
                    "register permutation: {} destination registers, no data leaves a thread",
                    src_register.len()
                )?;
                f.write_str("  dst register r <- src register ")?;
                list(f, src_register)?;
                writeln!(f, "[r]")
            }
            ConversionPlan::WarpShuffle(sh) => {
                writeln!(
                    f,
                    "warp shuffle: {} rounds of shfl.sync.idx{}",
                    sh.rounds.len(),
                    if sh.is_uniform() { "" } else { " with lane-dependent register selects" }
                )?;
                f.write_str("  round j, lane l: reads lane A j ^ M l, writes register j ^ F l; A = ")?;
                list(f, &sh.round_to_lane)?;
                f.write_str(", M = ")?;
                list(f, &sh.lane_to_lane)?;
                f.write_str(", F = ")?;
                list(f, &sh.lane_to_register)?;
                writeln!(f)?;
                for (j, r) in sh.rounds.iter().enumerate().take(ROUNDS_SHOWN) {
                    write!(f, "  round {j}: read lane ")?;
                    list(f, &r.read_lane)?;
                    f.write_str("\n           send reg  ")?;
                    list(f, &r.send_register)?;
                    f.write_str("\n           write reg ")?;
                    list(f, &r.write_register)?;
                    writeln!(f)?;
                }
                if sh.rounds.len() > ROUNDS_SHOWN {
                    writeln!(f, "  ... {} more rounds", sh.rounds.len() - ROUNDS_SHOWN)?;
                }
                Ok(())
            }
            ConversionPlan::SharedRoundTrip(sp) => {
                writeln!(
                    f,
                    "shared memory round trip: vec {} ({} bytes), {} rep{}, {} bytes per CTA, {} barrier",
                    sp.vec,
                    sp.vec * sp.elem_bits / 8,
                    sp.reps,
                    if sp.reps == 1 { "" } else { "s" },
                    sp.scratch_bytes,
                    match sp.barrier {
                        BarrierKind::Warp => "warp",
                        BarrierKind::Cta => "CTA",
                    }
                )?;
                writeln!(f, "  conflicts: store {}, load {}", sp.store_conflicts, sp.load_conflicts)?;
                bank_line(f, "stores", &sp.store_report)?;
                bank_line(f, "loads", &sp.load_report)?;
                let m = sp.store_mask;
                writeln!(
                    f,
                    "  store mask (duplicates skip): register {:#x}, lane {:#x}, warp {:#x}",
                    m.register, m.lane, m.warp
                )?;
                if !sp.rep_bases.is_empty() {
                    f.write_str("  rep: [")?;
                    for (i, b) in sp.rep_bases.iter().enumerate() {
                        if i > 0 {
                            f.write_str(", ")?;
                        }
                        write_basis(f, b)?;
                    }
                    writeln!(f, "]")?;
                }
                for line in sp.shared.to_string().lines() {
                    writeln!(f, "  {line}")?;
                }
                Ok(())
            }
        }
    }
}
