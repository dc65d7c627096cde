//! Specialization helpers shared by the end-to-end tests over the example kernels.

use tessel::lang::elab::{ArgSpec, ConstValue};
use tessel::tile::ScalarType::{self, F16, F32, I32};

/// A pointer argument (16-byte aligned, as PyTorch allocations are).
pub fn ptr(t: ScalarType) -> ArgSpec {
    ArgSpec::Pointer(t, true)
}

/// An i32 argument, specialized as a multiple of 16 when `div16`.
pub fn int(div16: bool) -> ArgSpec {
    ArgSpec::Int(I32, div16)
}

/// An integer constexpr.
pub fn c(v: i64) -> ArgSpec {
    ArgSpec::Constexpr(ConstValue::Int(v))
}

/// The specialization of `attn_bwd_dkdv` (`tests/kernels/attn_bwd.py`) at head dim 64: Q, K, V, dO, M, D, dK, dV,
/// sm_scale, the row stride, BLOCK_M1 64, BLOCK_N1 32, HEAD_DIM 64 and whether the causal mask applies.
#[allow(dead_code)] // for the attention-backward tests only
pub fn attn_bwd_dkdv_spec(mask: bool) -> Vec<ArgSpec> {
    let mut spec = vec![ptr(F16), ptr(F16), ptr(F16), ptr(F16), ptr(F32), ptr(F32), ptr(F16), ptr(F16)];
    spec.extend([ArgSpec::Float(F32), int(true), c(64), c(32), c(64), ArgSpec::Constexpr(ConstValue::Bool(mask))]);
    spec
}

/// ptxas (found as the runtime finds it) accepts `ptx` for `arch` without a word; without a ptxas, a note (a
/// panic when `TESSEL_REQUIRE_PTXAS` is set).
#[allow(dead_code)] // not every test file assembles
pub fn assemble(name: &str, ptx: &str, arch: &str) {
    let found = tessel::runtime::find_ptxas();
    if found.is_none() && std::env::var_os("TESSEL_REQUIRE_PTXAS").is_some() {
        panic!("TESSEL_REQUIRE_PTXAS is set but no ptxas was found (set PTXAS)");
    }
    let Some(ptxas) = found else {
        eprintln!("note: no ptxas here; {name} is not assembled");
        return;
    };
    let dir = std::env::temp_dir().join(format!("tessel-clusters-{name}-{arch}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.ptx"));
    std::fs::write(&path, ptx).unwrap();
    let out = std::process::Command::new(ptxas)
        .args(["-arch", arch, "-o"])
        .arg(path.with_extension("cubin"))
        .arg(&path)
        .output();
    let out = out.unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && stderr.trim().is_empty(), "ptxas -arch {arch} {name}:\n{stderr}\n{ptx}");
    std::fs::remove_dir_all(dir).ok();
}
