//! Warp-specialized partitions asking for different register counts (`tests/kernels/gluon_ws_registers.py`:
//! worker 0 a warpgroup of its own at 152, workers 1 and 2 sharing one at 56, the default partition the rest):
//! the plan reallocates by warpgroup, each warpgroup's warps meet at their own `setmaxnreg`, ptxas takes it, and
//! on the PTX simulator every partition does its own quarter of the work, equal to the interpreter's.

mod cli_common;
mod common;
mod sim_common;

use common::{c, ptr};
use sim_common::{RunOptions, V, run_on};
use tessel::tile::ScalarType::F32;
use tessel::tile::Target;

const FILE: &str = "tests/kernels/gluon_ws_registers.py";

#[test]
fn partitions_get_their_registers_by_warpgroup() {
    let src =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/kernels/gluon_ws_registers.py")).unwrap();
    let (code, ptx, err) = cli_common::tessel(&[
        "compile",
        &format!("{FILE}::partitions_by_warpgroup"),
        "--arch",
        "sm_90a",
        "--signature",
        "*fp32,*fp32",
        "--const",
        "N=512",
        "--emit",
        "ptx",
    ]);
    assert_eq!(code, 0, "{err}");
    for count in ["setmaxnreg.dec.sync.aligned.u32 152;", "setmaxnreg.dec.sync.aligned.u32 56;"] {
        assert_eq!(ptx.matches(count).count(), 1, "one {count} per warpgroup:\n{ptx}");
    }
    assert!(ptx.contains("setmaxnreg.inc.sync.aligned.u32 256;"), "the default partition:\n{ptx}");
    common::assemble("ws_registers", &ptx, "sm_90a");

    let x: Vec<f64> = (0..2048).map(|i| (i as f64 * 0.37).sin()).collect();
    let opts = RunOptions { file: FILE, target: Target::Sm90a, num_warps: 4, num_stages: 1, poison: true };
    let outs = run_on(
        &src,
        "partitions_by_warpgroup",
        vec![ptr(F32), ptr(F32), c(512)],
        &opts,
        &[V::Buf(F32, x.clone()), V::Out(F32, 2048)],
        [1, 1, 1],
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let (sim, interp) = &outs[0];
    for (i, (s, v)) in sim.iter().zip(interp).enumerate() {
        let want = (x[i] as f32 * (i / 512 + 1) as f32) as f64;
        assert_eq!((*s, *v), (want, want), "element {i} (partition {})", i / 512);
    }
}
