//! Cluster launch control end to end (`tests/kernels/gluon_clc.py`): the stealing persistent kernel compiled for
//! sm_100a, assembled by `ptxas -arch=sm_100a` when there is one (`TESSEL_REQUIRE_PTXAS` makes it required), and
//! run on the PTX simulator against the interpreter (both answer a request with the next program not started, so
//! the first program does every tile), with the outputs poisoned; and the refusals at the call's span: sm_90a,
//! a program of several CTAs.

mod common;
#[path = "sim_common/mod.rs"]
mod sim_common;

use common::assemble;

use sim_common::{RunOptions, V, run_on};
use tessel::lang::elab::{ArgSpec, ConstValue, Specialization};
use tessel::pipeline::{Output, Stage};
use tessel::tile::ScalarType::{self, *};
use tessel::tile::{KernelConfig, Target};
use tessel_math::testing::Rng;

const FILE: &str = "tests/kernels/gluon_clc.py";

fn source() -> String {
    std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(FILE)).unwrap()
}

fn ptr(t: ScalarType) -> ArgSpec {
    ArgSpec::Pointer(t, true)
}

fn steal_args(block: i64) -> Vec<ArgSpec> {
    vec![ptr(F32), ptr(F32), ptr(I32), ptr(I32), ArgSpec::Int(I32, false), ArgSpec::Constexpr(ConstValue::Int(block))]
}

fn ptx(kernel: &str, args: Vec<ArgSpec>, target: Target, num_ctas: u32) -> Result<String, String> {
    let config = KernelConfig { num_warps: 4, num_ctas, ..KernelConfig::DEFAULT };
    let spec = Specialization::with_config(args, config);
    let src = source();
    let ks = tessel::KernelSource { file: FILE, source: &src, kernel, spec: &spec, module: None };
    match tessel::pipeline::run(&ks, target, Stage::Ptx, None, &mut Default::default()) {
        Ok(Output::Ptx { kernel, .. }) => Ok(kernel.ptx),
        Ok(_) => unreachable!("the pipeline stops at the stage asked for"),
        Err(e) => Err(e.to_string()),
    }
}

#[test]
fn a_stealing_persistent_kernel_assembles_and_agrees_with_the_interpreter_on_the_simulator() {
    let code = ptx("clc_steal", steal_args(128), Target::Sm100a, 1).unwrap();
    for form in [
        "clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes.b128",
        "clusterlaunchcontrol.query_cancel.is_canceled.pred.b128",
        "clusterlaunchcontrol.query_cancel.get_first_ctaid::x.b32.b128",
    ] {
        assert!(code.contains(form), "{form}:\n{code}");
    }
    assemble("clc_steal", &code, "sm_100a");
    for (n, block) in [(1000usize, 128usize), (96, 32)] {
        let tiles = n.div_ceil(block);
        let x = Rng::new(n as u64).vec(n);
        let vals = [V::Buf(F32, x.clone()), V::Out(F32, n), V::Out(I32, tiles), V::Out(I32, tiles), V::Int(n as i64)];
        let opts = RunOptions { file: FILE, target: Target::Sm100a, num_warps: 4, num_stages: 1, poison: true };
        let outs = run_on(&source(), "clc_steal", steal_args(block as i64), &opts, &vals, [tiles as u32, 1, 1])
            .unwrap_or_else(|e| panic!("{n} elements: {e}"));
        for (i, (sim, interp)) in outs.iter().enumerate() {
            assert_eq!(sim, interp, "{n} elements, output {i}: simulated PTX vs interpreter");
        }
        let want: Vec<f64> = x.iter().map(|&v| (v as f32 * 2.0 + 1.0) as f64).collect();
        assert_eq!(outs[0].1, want, "{n} elements: y");
        // The visit counters start poisoned at -1: each tile was done exactly once, all by program 0.
        assert_eq!(outs[1].1, vec![0.0; tiles], "{n} elements: visits");
        assert_eq!(outs[2].1, vec![0.0; tiles], "{n} elements: owners");
    }
}

/// The simulator failing every request: each program does its own tile (the interpreter, answering `next`, has
/// program 0 do them all), and the results are the same.
#[test]
fn on_the_simulator_a_kernel_whose_requests_all_fail_computes_the_same() {
    let (n, block) = (1000usize, 128usize);
    let tiles = n.div_ceil(block);
    let x = Rng::new(5).vec(n);
    let vals = [V::Buf(F32, x), V::Out(F32, n), V::Out(I32, tiles), V::Out(I32, tiles), V::Int(n as i64)];
    let opts = RunOptions { file: FILE, target: Target::Sm100a, num_warps: 4, num_stages: 1, poison: true };
    sim_common::ptx_sim::answer_every_request(false);
    let outs = run_on(&source(), "clc_steal", steal_args(block as i64), &opts, &vals, [tiles as u32, 1, 1]);
    sim_common::ptx_sim::answer_every_request(true);
    let outs = outs.unwrap();
    assert_eq!(outs[0].0, outs[0].1, "y: simulated PTX vs interpreter");
    assert_eq!(outs[1].0, vec![0.0; tiles], "visits: each tile once");
    assert_eq!(outs[2].0, (0..tiles).map(|t| t as f64).collect::<Vec<_>>(), "owners: each program its own tile");
    assert_eq!(outs[2].1, vec![0.0; tiles], "the interpreter's program 0 did them all");
}

#[test]
fn cluster_launch_control_is_refused_below_sm100a_at_the_call() {
    let err = ptx("clc_steal", steal_args(128), Target::Sm90a, 1).unwrap_err();
    assert!(err.contains("cluster launch control (`clc.*`) needs sm_100a (Blackwell)"), "{err}");
    assert!(err.contains("clc.try_cancel(response, bar)"), "the call's span: {err}");
}

/// In clusters of 2 and 4 CTAs a program is a cluster: its first CTA asks (`.multicast::cluster::all`: the
/// response and its bytes reach every CTA's buffer and barrier, so the CTAs meet once their barriers exist),
/// and the canceled program's id is its first CTA's x over the cluster's CTAs; ptxas accepts it. This kernel is
/// written for one CTA per program: in a cluster its first CTA may ask again before the others have consumed the
/// last response, and the simulator, running CTA 0 ahead, shows it (CTA 1's barrier gets more bytes than it
/// expects: a deadlock). Example 03 of the public Gluon examples, which passes each response on only once every
/// CTA has consumed the last, runs on the simulator against the interpreter at 2 CTAs (`tests/examples_sim.rs`).
#[test]
fn a_stealing_kernel_in_clusters_asks_once_per_cluster() {
    for ctas in [2u32, 4] {
        let code = ptx("clc_steal", steal_args(128), Target::Sm100a, ctas).unwrap();
        let ask = code.lines().find(|l| l.contains("clusterlaunchcontrol.try_cancel")).expect("a request");
        assert!(ask.contains(".multicast::cluster::all.b128"), "{ask}");
        let meet = code.find("barrier.cluster.arrive").expect("the CTAs meet");
        assert!(meet < code.find("clusterlaunchcontrol.try_cancel").unwrap(), "they meet before the first request");
        let ctaid = code.find("get_first_ctaid::x").unwrap();
        assert!(code[ctaid..].contains("div.s32"), "the program id is the cluster's");
        assemble(&format!("clc_steal_{ctas}ctas"), &code, "sm_100a");
    }
    let (n, block) = (1000usize, 128usize);
    let tiles = n.div_ceil(block);
    let vals =
        [V::Buf(F32, Rng::new(17).vec(n)), V::Out(F32, n), V::Out(I32, tiles), V::Out(I32, tiles), V::Int(n as i64)];
    let opts = RunOptions { file: FILE, target: Target::Sm100a, num_warps: 4, num_stages: 1, poison: true };
    let err = sim_common::run_on_ctas(
        &source(),
        "clc_steal",
        steal_args(block as i64),
        &opts,
        2,
        &vals,
        [tiles as u32, 1, 1],
    )
    .unwrap_err();
    assert!(
        err.contains("deadlock") && err.contains("CTA 1 waits") && err.contains("lacks 0 arrival(s) and -"),
        "{err}"
    );
}
