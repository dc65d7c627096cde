//! The compile options that reach the PTX: Triton's `maxnreg` becomes `.maxnreg N` in the entry and
//! `enable_fp_fusion=False` keeps `a * b + c` a multiply and an add (each also keys the cache, through the
//! specialization); `num_ctas` > 1 is a cluster launch (`tests/clusters.rs`).

mod common;

use std::path::Path;

use common::{c, int, ptr};
use tessel::lang::elab::Specialization;
use tessel::pipeline::{Output, Stage};
use tessel::tile::ScalarType::F32;
use tessel::tile::{KernelConfig, Target};

fn vector_add(maxnreg: Option<u32>) -> Specialization {
    let args = vec![ptr(F32), ptr(F32), ptr(F32), int(false), c(1024)];
    Specialization::with_config(args, KernelConfig { maxnreg, ..KernelConfig::DEFAULT })
}

fn ptx(spec: &Specialization, target: Target) -> Result<String, String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let source = std::fs::read_to_string(root.join("examples/vector_add.py")).unwrap();
    ptx_of(&source, "add_kernel", spec, target)
}

fn ptx_of(source: &str, kernel: &str, spec: &Specialization, target: Target) -> Result<String, String> {
    let ks = tessel::KernelSource { file: "kernel.py", source, kernel, spec, module: None };
    match tessel::pipeline::run(&ks, target, Stage::Ptx, None, &mut Default::default()) {
        Ok(Output::Ptx { kernel, .. }) => Ok(kernel.ptx),
        Ok(_) => unreachable!("the pipeline stops at the stage asked for"),
        Err(e) => Err(e.to_string()),
    }
}

#[test]
fn maxnreg_is_an_entry_directive() {
    for target in [Target::Sm80, Target::Sm90a] {
        let plain = ptx(&vector_add(None), target).unwrap();
        assert!(!plain.contains(".maxnreg"), "{plain}");
        let capped = ptx(&vector_add(Some(40)), target).unwrap();
        assert!(capped.contains(".reqntid 128, 1, 1\n.maxnreg 40\n{\n"), "{capped}");
        // Only the directive differs.
        assert_eq!(capped.replace(".maxnreg 40\n", ""), plain);
        // ptxas takes it (CI has ptxas and sets TESSEL_REQUIRE_PTXAS).
        if tessel::runtime::find_ptxas().is_some() || std::env::var_os("TESSEL_REQUIRE_PTXAS").is_some() {
            let kernel = tessel::codegen::Kernel {
                ptx: capped,
                name: "add_kernel".into(),
                num_warps: 4,
                shared_bytes: 0,
                target,
                tensor_maps: Vec::new(),
                scratch_bytes: 0,
                num_ctas: 1,
            };
            tessel::runtime::assemble(&kernel).unwrap();
        }
    }
}

#[test]
fn maxnreg_is_part_of_the_cache_key() {
    let ks = |maxnreg| {
        let spec = vector_add(maxnreg);
        tessel::KernelSource { file: "f.py", source: "", kernel: "k", spec: &spec, module: None }
            .cache_key(Target::Sm90a)
    };
    assert_ne!(ks(None), ks(Some(64)));
    assert_ne!(ks(Some(32)), ks(Some(64)));
}

#[test]
fn maxnreg_out_of_range_is_refused() {
    let e = ptx(&vector_add(Some(300)), Target::Sm90a).unwrap_err();
    assert!(e.contains("maxnreg must be in 24..=256"), "{e}");
}

fn mul_add_source() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/kernels/mul_add.py")).unwrap()
}

fn mul_add(fp_fusion: bool) -> Specialization {
    let args = vec![ptr(F32), ptr(F32), ptr(F32), ptr(F32), c(256)];
    Specialization::with_config(args, KernelConfig { fp_fusion, ..KernelConfig::DEFAULT })
}

#[test]
fn fp_fusion_off_keeps_multiply_and_add_apart() {
    assert_eq!(KernelConfig::DEFAULT, mul_add(true).config, "fusion is on by default, as in Triton");
    let source = mul_add_source();
    for target in [Target::Sm80, Target::Sm90a] {
        let fused = ptx_of(&source, "mul_add", &mul_add(true), target).unwrap();
        assert!(fused.contains("fma.rn.f32"), "{fused}");
        assert!(!fused.contains("mul.rn.f32") && !fused.contains("add.rn.f32"), "{fused}");
        let apart = ptx_of(&source, "mul_add", &mul_add(false), target).unwrap();
        assert!(!apart.contains("fma"), "{apart}");
        assert!(apart.contains("mul.rn.f32") && apart.contains("add.rn.f32"), "{apart}");
    }
}

#[test]
fn fp_fusion_is_part_of_the_cache_key() {
    let source = mul_add_source();
    let key = |fp_fusion| {
        let spec = mul_add(fp_fusion);
        tessel::KernelSource { file: "f.py", source: &source, kernel: "mul_add", spec: &spec, module: None }
            .cache_key(Target::Sm90a)
    };
    assert_ne!(key(true), key(false));
    assert_eq!(key(false), key(false));
}
