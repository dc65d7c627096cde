//! Counterexamples for the memory-side assertions: the two lanes of one phase that hit the same bank with
//! different words, and the element that keeps an access from being wider.

use crate::convert::{BankReport, InstrBanks};

/// One side of a shared-memory access, seen from the hardware: where each `(register, lane, warp)` of CTA 0 goes
/// and which element it moves.
pub(crate) struct AccessSide<'a> {
    /// `st.shared` or `ld.shared`.
    pub what: &'a str,
    /// `(register, lane, warp)` → element offset in the buffer.
    pub offset: &'a dyn Fn(u32, u32, u32) -> u32,
    /// `(register, lane, warp)` → the element, e.g. `(dim0=0, dim1=8)`.
    pub element: &'a dyn Fn(u32, u32, u32) -> String,
    pub lanes: u32,
    /// Lanes that skip the access (`lane & mask != 0`): they hold duplicates.
    pub lane_mask: u32,
    pub elem_bits: u32,
}

/// The instruction with the most extra wavefronts, and two lanes of one of its phases that touch different
/// 4-byte words of the same bank.
pub(crate) fn explain_conflict(side: &AccessSide, report: &BankReport) -> String {
    // The first of the worst instructions (in warp, repetition, register order).
    let worst =
        report.instructions.iter().min_by_key(|i| (std::cmp::Reverse(i.conflicts()), i.warp, i.rep, i.register));
    let Some(worst) = worst else {
        return format!("{} has no instructions", side.what);
    };
    let head = format!(
        "{} of warp {} (register {}{}) takes {} wavefronts where {} would do ({} extra in all, {} instructions)",
        side.what,
        worst.warp,
        worst.register,
        if worst.rep > 0 { format!(", repetition {}", worst.rep) } else { String::new() },
        worst.wavefronts,
        worst.phases,
        report.conflicts,
        report.instructions.len()
    );
    match clash(side, report, worst) {
        Some(text) => format!("{head}:\n  {text}"),
        None => head,
    }
}

/// Two lanes of one phase of `instr` whose words differ but share a bank.
fn clash(side: &AccessSide, report: &BankReport, instr: &InstrBanks) -> Option<String> {
    let unit = report.bytes_per_access as u64;
    let k = report.vec.trailing_zeros();
    let per_phase = report.lanes_per_phase.max(1);
    for p in (0..side.lanes).step_by(per_phase as usize) {
        // bank -> (word, lane) of the first lane that touched each word
        let mut seen: Vec<Vec<(u64, u32)>> = vec![Vec::new(); 32];
        for l in (p..p + per_phase).filter(|l| l & side.lane_mask == 0) {
            let o = (side.offset)(instr.register, l, instr.warp);
            let start = ((o >> k) as u64) * unit;
            for word in start / 4..=(start + unit - 1) / 4 {
                let bank = (word % 32) as usize;
                if let Some(&(w0, l0)) = seen[bank].iter().find(|(w, _)| *w != word) {
                    let lane_text = |lane: u32, w: u64| {
                        let off = (side.offset)(instr.register, lane, instr.warp);
                        format!(
                            "lane {lane} (element {}, offset {off}, word {w})",
                            (side.element)(instr.register, lane, instr.warp)
                        )
                    };
                    return Some(format!(
                        "{} and {} hit bank {bank} in the same phase ({}-bit elements, {} bytes per lane)",
                        lane_text(l0, w0),
                        lane_text(l, word),
                        side.elem_bits,
                        unit
                    ));
                }
                if !seen[bank].iter().any(|(w, _)| *w == word) {
                    seen[bank].push((word, l));
                }
            }
        }
    }
    None
}
