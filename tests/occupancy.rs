//! The occupancy hint (`codegen/src/lower/occupancy.rs`): `.minnctapersm 2` where two CTAs fit and the
//! accumulators leave room, nothing where they do not, and a user's `maxnreg` instead of the hint.

mod common;

use std::path::Path;

use common::{c, int, ptr};
use tessel::lang::elab::{ArgSpec, ConstValue, Specialization};
use tessel::pipeline::{Output, Stage};
use tessel::tile::ScalarType::F16;
use tessel::tile::{KernelConfig, Target};

fn matmul_ptx((bm, bn, bk): (i64, i64, i64), warps: u32, stages: u32, maxnreg: Option<u32>) -> String {
    let mut args = vec![ptr(F16), ptr(F16), ptr(F16), int(true), int(true), int(true)];
    args.extend([int(true), c(1), int(true), c(1), int(true), c(1)]);
    args.extend([c(bm), c(bn), c(bk), c(8), ArgSpec::Constexpr(ConstValue::Str(String::new()))]);
    let source = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/matmul.py")).unwrap();
    let spec = Specialization::with_config(
        args,
        KernelConfig { num_warps: warps, num_stages: stages, maxnreg, ..KernelConfig::DEFAULT },
    );
    let ks =
        tessel::KernelSource { file: "matmul.py", source: &source, kernel: "matmul_kernel", spec: &spec, module: None };
    match tessel::pipeline::run(&ks, Target::Sm90a, Stage::Ptx, None, &mut Default::default()) {
        Ok(Output::Ptx { kernel, .. }) => kernel.ptx,
        Ok(_) => unreachable!("stopped at PTX"),
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn two_ctas_are_asked_for_where_they_fit() {
    // 64 accumulator registers of 128 per thread, 32 KiB (no pipelining) or 96 KiB (3-buffer rings) per CTA.
    assert!(matmul_ptx((128, 128, 64), 8, 1, None).contains(".minnctapersm 2"));
    assert!(matmul_ptx((128, 128, 64), 8, 3, None).contains(".minnctapersm 2"));
}

#[test]
fn no_hint_where_two_ctas_do_not_fit() {
    // 128 accumulator registers per thread: two CTAs would leave no room for the operands.
    assert!(!matmul_ptx((128, 256, 64), 8, 1, None).contains(".minnctapersm"));
    // Four 32 KiB stages: 128 KiB per CTA, one CTA per SM whatever the registers.
    assert!(!matmul_ptx((128, 128, 64), 8, 4, None).contains(".minnctapersm"));
}

#[test]
fn a_users_maxnreg_replaces_the_hint() {
    let ptx = matmul_ptx((128, 128, 64), 8, 1, Some(168));
    assert!(ptx.contains(".maxnreg 168") && !ptx.contains(".minnctapersm"), "{ptx}");
}
