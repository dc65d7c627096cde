//! A test hook: breaking a correct plan on purpose, so that the checker's counterexamples (and the tools that
//! print them) can themselves be tested.

use crate::convert::{ConversionPlan, LANE, REGISTER, ShufflePlan, ShuffleRound};
use crate::linear::LinearLayout;

/// A copy of `plan` (for `src → dst`) with one data movement redirected, so that running it lands some element in
/// the wrong register while everything stays well-formed (no register written twice, no vector split):
///
/// * no-op or register permutation: destination register 0 reads source register `r ^ 1`;
/// * warp shuffle: in round 0, lanes 0 and 1 read each other's source lane;
/// * shared round trip: every odd lane loads from its offset XOR 1.
///
/// Returns `None` when the layouts leave nothing to redirect (one register and one lane). The result is wrong
/// only if the redirected slots hold different elements; with broadcast layouts they may not.
pub fn corrupt_plan(plan: &ConversionPlan, src: &LinearLayout, dst: &LinearLayout) -> Option<ConversionPlan> {
    let (nrs, nrd, lanes) = (src.in_dim_size(REGISTER), dst.in_dim_size(REGISTER), src.in_dim_size(LANE));
    match plan {
        ConversionPlan::NoOp | ConversionPlan::RegisterPermutation { .. } => {
            let mut table: Vec<u32> = match plan {
                ConversionPlan::RegisterPermutation { src_register } => src_register.clone(),
                _ => (0..nrd).collect(),
            };
            if nrs >= 2 && !table.is_empty() {
                table[0] ^= 1;
                return Some(ConversionPlan::RegisterPermutation { src_register: table });
            }
            // One register: swap what lanes 0 and 1 get, as a single shuffle round.
            (lanes >= 2 && nrd == 1).then(|| {
                let round = ShuffleRound {
                    send_register: vec![0; lanes as usize],
                    read_lane: (0..lanes).map(|l| l ^ 1).collect(),
                    write_register: vec![0; lanes as usize],
                };
                ConversionPlan::WarpShuffle(ShufflePlan {
                    rounds: vec![round],
                    lane_to_register: vec![0; lanes.trailing_zeros() as usize],
                    round_to_lane: vec![],
                    lane_to_lane: (0..lanes.trailing_zeros()).map(|i| 1 << i).collect(),
                })
            })
        }
        ConversionPlan::WarpShuffle(sh) => {
            let mut sh = sh.clone();
            let round = sh.rounds.first_mut()?;
            if round.read_lane.len() < 2 {
                return None;
            }
            round.read_lane.swap(0, 1);
            Some(ConversionPlan::WarpShuffle(sh))
        }
        ConversionPlan::SharedRoundTrip(sp) => {
            let mut sp = sp.clone();
            let mut bases = sp.load_map.bases_vec();
            let lane = bases.iter_mut().find(|(n, _)| *n == LANE)?;
            let first = lane.1.first_mut()?;
            if sp.load_map.out_dim_size("offset") < 2 {
                return None;
            }
            first[0] ^= 1;
            sp.load_map = LinearLayout::new(bases, sp.load_map.out_dim_sizes()).ok()?;
            Some(ConversionPlan::SharedRoundTrip(sp))
        }
    }
}
