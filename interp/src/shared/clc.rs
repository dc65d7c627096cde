//! Cluster launch control in the interpreter. Programs run in grid order, so the programs not yet started are
//! those after the running one that no response has handed out. A `clc_try_cancel` answers from that queue as
//! the run's [`ClcPolicy`] says: `next` (the next program in grid order, the hardware's launch order), `none`
//! (every request fails: each program does only its own work), `random:SEED` (a failure now and then, else any
//! program of the queue), so a kernel can be shown to compute the same under any answer. A program a response
//! canceled is not run on its own: the program that read the response runs its work.
//!
//! The response lands as a TMA load's data does: in the buffer when a wait sees the barrier phase its 16
//! transaction bytes complete on; reading it before is [`ClcFault::ReadEarly`]. Its encoding is the
//! interpreter's own (bit 0: canceled; then the program id's x, y, z in 32 bits each from bit 32), split over the
//! buffer's integer elements, low bits first. A request after a failed response was read, a response that
//! canceled a program overwritten or left unread at the end are errors naming the program whose work is lost.

use std::collections::BTreeSet;

use tessel_tile::eval::value::{Val, from_bits, to_bits, wrap_int};
use tessel_tile::ir::OpId;
use tessel_tile::ops::Op;
use tessel_tile::types::{Elem, ScalarType};

use super::super::value::Tensor;
use super::super::{Fault, Program, Value};
use crate::error::{ClcFault, SharedFault};

/// How the interpreter answers `clc_try_cancel` (see the module comment).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ClcPolicy {
    /// The next program not started, in grid order.
    #[default]
    Next,
    /// Every request fails.
    None,
    /// Seeded: a failure one time in four, else a program of the queue drawn at random.
    Random(u64),
}

impl std::str::FromStr for ClcPolicy {
    type Err = String;

    fn from_str(s: &str) -> Result<ClcPolicy, String> {
        match s {
            "next" => Ok(ClcPolicy::Next),
            "none" => Ok(ClcPolicy::None),
            _ => match s.strip_prefix("random:").map(str::parse::<u64>) {
                Some(Ok(seed)) => Ok(ClcPolicy::Random(seed)),
                _ => Err(format!("a cluster launch control policy is `next`, `none` or `random:SEED`, got `{s}`")),
            },
        }
    }
}

impl std::fmt::Display for ClcPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ClcPolicy::Next => f.write_str("next"),
            ClcPolicy::None => f.write_str("none"),
            ClcPolicy::Random(seed) => write!(f, "random:{seed}"),
        }
    }
}

/// The run's queue of programs not started, and the running program's responses. Kept in the shared state, so
/// it moves with a `warp_specialize`'s partitions; [`Clc::started`] carries the queue from one program to the next.
#[derive(Default)]
pub(crate) struct Clc {
    /// The running program (in grid order) and the programs responses handed out.
    current: u64,
    taken: BTreeSet<u64>,
    /// The random policy's state (splitmix64), seeded at the first request.
    rng: Option<u64>,
    /// This program read a response that canceled nothing.
    failed_seen: bool,
    /// This program's responses not read yet: buffer, first element, the program canceled (its index).
    unread: Vec<(usize, usize, Option<u64>)>,
}

impl Clc {
    /// Whether a response handed out program `n` (it is not run on its own).
    pub(crate) fn taken(&self, n: u64) -> bool {
        self.taken.contains(&n)
    }

    /// The queue as program `n` starts; the previous program's responses are forgotten.
    pub(crate) fn started(self, n: u64) -> Clc {
        Clc { current: n, taken: self.taken, rng: self.rng, ..Clc::default() }
    }

    /// A program a response canceled and nobody read: its work is lost.
    pub(crate) fn lost(&self) -> Option<u64> {
        self.unread.iter().find_map(|&(_, _, p)| p)
    }

    /// Answers a request under `policy` from the programs after the running one (of `programs`) not taken.
    fn answer(&mut self, policy: ClcPolicy, programs: u64) -> Option<u64> {
        let first = self.current + 1;
        let free = |n: &u64| !self.taken.contains(n);
        let pick = match policy {
            ClcPolicy::None => None,
            ClcPolicy::Next => (first..programs).find(free),
            ClcPolicy::Random(seed) => {
                let mut draw = || {
                    let s = self.rng.get_or_insert(seed);
                    *s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
                    let mut z = *s;
                    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
                    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
                    z ^ (z >> 31)
                };
                if first >= programs || draw() % 4 == 0 {
                    None
                } else {
                    // A random place in the queue, then the first program not taken from there (wrapping).
                    let start = first + draw() % (programs - first);
                    (start..programs).chain(first..start).find(free)
                }
            }
        };
        if let Some(n) = pick {
            self.taken.insert(n);
        }
        pick
    }
}

/// The 128-bit response the interpreter writes (see the module comment).
fn encode(program: Option<[u32; 3]>) -> u128 {
    match program {
        None => 0,
        Some([x, y, z]) => 1 | (x as u128) << 32 | (y as u128) << 64 | (z as u128) << 96,
    }
}

impl Program<'_> {
    /// `clc_try_cancel`, `clc_load_result`, `clc_is_canceled` and `clc_program_id`.
    pub(crate) fn clc(&mut self, o: OpId) -> Result<(), Fault> {
        let data = self.f.op(o);
        let ins = &data.operands;
        match &data.op {
            Op::ClcTryCancel => {
                if self.smem.clc.failed_seen {
                    return Err(SharedFault::Clc(ClcFault::AfterFailure).into());
                }
                let view = self.view(ins[0])?;
                let bar = self.view(ins[1])?;
                let key = (bar.buf, bar.start);
                if !self.smem.barriers.contains_key(&key) {
                    return Err(SharedFault::Clc(ClcFault::Uninitialized(ins[1])).into());
                }
                if let Some(&(_, _, Some(n))) =
                    self.smem.clc.unread.iter().find(|&&(b, s, _)| (b, s) == (view.buf, view.start))
                {
                    let program = crate::budget::program_at(self.grid, n);
                    return Err(SharedFault::Clc(ClcFault::Overwritten { buffer: ins[0], program }).into());
                }
                self.smem.clc.unread.retain(|&(b, s, _)| (b, s) != (view.buf, view.start));
                let programs = crate::budget::program_count(self.grid);
                let canceled = self.smem.clc.answer(self.limits.clc, programs);
                let bits = encode(canceled.map(|n| crate::budget::program_at(self.grid, n)));
                // Split over the buffer's elements, low bits first, as the buffer's own type.
                let elem = self.smem.buffers[view.buf].as_ref().ok_or(SharedFault::Deallocated(ins[0]))?.elem;
                let Elem::Scalar(s) = elem else { unreachable!("verified: a buffer of integers") };
                let width = s.bits();
                let writes = view
                    .elements()
                    .into_iter()
                    .enumerate()
                    .map(|(i, e)| {
                        let word = (bits >> (i as u32 * width)) as u64 & (u64::MAX >> (64 - width));
                        (view.buf, e, from_bits(word, s))
                    })
                    .collect();
                self.smem.clc.unread.push((view.buf, view.start, canceled));
                self.smem.tma_writes.push((key, None, writes));
                let barrier = self.smem.barriers.get_mut(&key).expect("checked");
                // The response reaches every CTA's barrier (`multicast::cluster::all`).
                if barrier.complete_tx(tessel_tile::verify_clc::RESPONSE_BYTES as i64) {
                    self.land_tma(key);
                }
            }
            Op::ClcLoadResult => {
                let view = self.view(ins[0])?;
                if self.smem.in_flight_copy(&view) {
                    return Err(SharedFault::Clc(ClcFault::ReadEarly(ins[0])).into());
                }
                let t = self.read_buffer(ins[0])?;
                let Elem::Scalar(s) = t.elem else { unreachable!("verified: a buffer of integers") };
                let bits = t.data.iter().enumerate().fold(0u128, |acc, (i, &x)| {
                    acc | (to_bits(x, s) as u128 & (u64::MAX >> (64 - s.bits())) as u128) << (i as u32 * s.bits())
                });
                if bits & 1 == 0 {
                    self.smem.clc.failed_seen = true;
                }
                self.smem.clc.unread.retain(|&(b, st, _)| (b, st) != (view.buf, view.start));
                let words = [bits as u64, (bits >> 64) as u64].map(|w| Val::Int(wrap_int(w as i64, ScalarType::I64)));
                let value = Tensor { shape: vec![2], elem: Elem::Scalar(ScalarType::I64), data: words.to_vec() };
                self.env[data.results[0].index()] = Some(Value::T(value));
            }
            Op::ClcIsCanceled | Op::ClcProgramId(_) => {
                let r = self.tensor(ins[0]);
                let bits = (r.data[0].as_i64() as u64 as u128) | (r.data[1].as_i64() as u64 as u128) << 64;
                let canceled = bits & 1 == 1;
                let out = match data.op {
                    Op::ClcIsCanceled => Tensor::scalar(Elem::Scalar(ScalarType::I1), Val::Int(canceled as i64)),
                    Op::ClcProgramId(axis) => {
                        let id = if canceled { (bits >> (32 * (axis + 1))) as u32 as i64 } else { -1 };
                        Tensor::scalar(Elem::Scalar(ScalarType::I32), Val::Int(id))
                    }
                    _ => unreachable!(),
                };
                self.set(o, 0, out);
            }
            _ => unreachable!("not a cluster launch control op"),
        }
        Ok(())
    }
}
