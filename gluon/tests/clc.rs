//! Cluster launch control in gluon kernels (`tests/kernels/gluon_clc.py`), in the interpreter: a persistent
//! kernel whose programs steal the tiles of programs not started computes the same under every answer the
//! interpreter may give (`next`, `none`, `random:SEED`), each tile exactly once, by the program the policy says;
//! and the misuses are named: a response read before its phase, a request after a failed response, a canceled
//! program's response left unread, a barrier nobody arms (a deadlock), a response buffer of the wrong size.

mod common;

use common::*;
use tessel_interp::memory::Memory;
use tessel_interp::{Arg, ClcPolicy, Limits};
use tessel_tile::ScalarType::*;

fn source() -> String {
    let path = format!("{}/../tests/kernels/gluon_clc.py", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn run_under(f: &tessel_tile::Func, args: &[Arg], grid: u32, mem: &mut Memory, clc: ClcPolicy) -> Result<(), String> {
    let limits = Limits { clc, ..Default::default() };
    tessel_interp::run_with_limits(f, args, [grid, 1, 1], mem, limits).map(|_| ()).map_err(|e| e.to_string())
}

#[test]
fn stolen_tiles_are_computed_once_under_every_policy() {
    let (n, block) = (1000usize, 128usize);
    let tiles = n.div_ceil(block);
    let f = elab(&source(), "clc_steal", vec![ptr(F32), ptr(F32), ptr(I32), ptr(I32), int(), cint(block as i64)]);
    let text = f.to_string();
    for op in ["clc_try_cancel", "clc_load_result", "clc_is_canceled", "clc_program_id {axis = 0}"] {
        assert!(text.contains(op), "{op}:\n{text}");
    }
    let x = Rng::new(12).vec(n);
    let want: Vec<f64> = x.iter().map(|&v| (v as f32 * 2.0 + 1.0) as f64).collect();
    let mut random_owners = Vec::new();
    for policy in ["next", "none", "random:1", "random:2", "random:3", "random:4"] {
        let clc: ClcPolicy = policy.parse().unwrap();
        let mut mem = Memory::new();
        let bx = mem.alloc_from("x", F32, &x);
        let by = poisoned(&mut mem, "y", F32, n);
        let visits = mem.alloc_from("visits", I32, &vec![0.0; tiles]);
        let owner = mem.alloc_from("owner", I32, &vec![-1.0; tiles]);
        let args = [Arg::Buffer(bx), Arg::Buffer(by), Arg::Buffer(visits), Arg::Buffer(owner), Arg::Int(n as i64)];
        run_under(&f, &args, tiles as u32, &mut mem, clc).unwrap_or_else(|e| panic!("{policy}: {e}"));
        assert_eq!(mem.read_f64(by), want, "{policy}");
        assert_eq!(mem.read_f64(visits), vec![1.0; tiles], "{policy}: every tile once");
        let owners: Vec<usize> = mem.read_f64(owner).iter().map(|&o| o as usize).collect();
        match clc {
            // Program 0 takes every program after it, in order; with no answers each program does its own.
            ClcPolicy::Next => assert_eq!(owners, vec![0; tiles]),
            ClcPolicy::None => assert_eq!(owners, (0..tiles).collect::<Vec<_>>()),
            ClcPolicy::Random(_) => {
                // A tile is done by a program that ran (one that owns its own tile) and started no later.
                for (t, &o) in owners.iter().enumerate() {
                    assert!(o <= t && owners[o] == o, "{policy}: tile {t} done by program {o}: {owners:?}");
                }
                random_owners.push(owners);
            }
        }
    }
    // The random answers differ between seeds: some stealing, some failures.
    assert!(random_owners.iter().any(|o| o.iter().enumerate().any(|(t, &p)| p != t)), "{random_owners:?}");
    assert!(random_owners.iter().any(|o| o != &vec![0; tiles]), "{random_owners:?}");
}

#[test]
fn a_response_read_before_its_phase_is_an_error() {
    let f = elab(&source(), "clc_read_early", vec![ptr(I32)]);
    let mut mem = Memory::new();
    let out = mem.alloc_from("out", I32, &[0.0]);
    let err = run_under(&f, &[Arg::Buffer(out)], 2, &mut mem, ClcPolicy::Next).unwrap_err();
    assert!(err.contains("clc_load_result reads response buffer") && err.contains("before an mbarrier_wait"), "{err}");
}

#[test]
fn a_request_after_a_failed_response_is_an_error_and_after_a_success_is_not() {
    let f = elab(&source(), "clc_ask_twice", vec![ptr(I32)]);
    let mut mem = Memory::new();
    let out = mem.alloc_from("out", I32, &[0.0, 0.0]);
    run_under(&f, &[Arg::Buffer(out)], 3, &mut mem, ClcPolicy::Next).unwrap();
    assert_eq!(mem.read_f64(out), [1.0, 2.0], "program 0 canceled programs 1 and 2, in order");
    let err = run_under(&f, &[Arg::Buffer(out)], 3, &mut mem, ClcPolicy::None).unwrap_err();
    assert!(err.contains("clc_try_cancel after this program read a response that canceled nothing"), "{err}");
}

#[test]
fn a_canceled_program_whose_response_nobody_reads_is_lost() {
    let f = elab(&source(), "clc_unread", vec![ptr(I32)]);
    let mut mem = Memory::new();
    let out = mem.alloc_from("out", I32, &[0.0]);
    let err = run_under(&f, &[Arg::Buffer(out)], 2, &mut mem, ClcPolicy::Next).unwrap_err();
    assert!(err.contains("unread cluster launch control response that canceled program (1, 0, 0)"), "{err}");
    // Nothing canceled, nothing lost.
    run_under(&f, &[Arg::Buffer(out)], 2, &mut mem, ClcPolicy::None).unwrap();
}

#[test]
fn a_request_whose_barrier_nobody_arms_deadlocks() {
    let f = elab(&source(), "clc_unarmed", vec![ptr(I32)]);
    let mut mem = Memory::new();
    let out = mem.alloc_from("out", I32, &[0.0]);
    let err = run_under(&f, &[Arg::Buffer(out)], 2, &mut mem, ClcPolicy::Next).unwrap_err();
    assert!(err.contains("deadlock: waiting for phase parity 0"), "{err}");
    assert!(err.contains("lacks 1 arrival(s) and 0 transaction byte(s), with 16 byte(s) completed"), "{err}");
}

#[test]
fn a_response_buffer_of_the_wrong_size_is_refused_at_its_argument() {
    let err = elab_error(&source(), "clc_small_buffer", vec![ptr(I32)]);
    assert!(err.contains("`result` of `clc.try_cancel`: a response buffer holds 16 bytes"), "{err}");
    assert!(err.contains("clc.try_cancel(response, bar)"), "{err}");
}

#[test]
fn policies_are_spelled_next_none_and_random_seed() {
    assert_eq!("next".parse::<ClcPolicy>(), Ok(ClcPolicy::Next));
    assert_eq!("none".parse::<ClcPolicy>(), Ok(ClcPolicy::None));
    assert_eq!("random:7".parse::<ClcPolicy>(), Ok(ClcPolicy::Random(7)));
    assert_eq!(ClcPolicy::Random(7).to_string(), "random:7");
    assert!("random".parse::<ClcPolicy>().unwrap_err().contains("`next`, `none` or `random:SEED`"));
}
