//! The CUDA toolkit's programs, run as subprocesses: `ptxas` (whole-program cubins, for loading and for the offline
//! check) and `nvdisasm` / `cuobjdump` (the SASS of `--emit sass`). None needs a GPU.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};

use tessel_codegen::Kernel;

use crate::error::RuntimeError;

/// The `ptxas` to assemble with: `$PTXAS`, else `ptxas` on `PATH`, else under `$CUDA_HOME` or
/// `/usr/local/cuda`; `PTXAS=` (empty) means none (use the driver's JIT).
pub fn find_ptxas() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("PTXAS") {
        return (!p.is_empty()).then(|| PathBuf::from(p));
    }
    let on_path = std::env::var_os("PATH").into_iter().flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>());
    let cuda = [std::env::var_os("CUDA_HOME").map(PathBuf::from), Some(PathBuf::from("/usr/local/cuda"))];
    on_path.chain(cuda.into_iter().flatten().map(|d| d.join("bin"))).map(|d| d.join("ptxas")).find(|p| p.is_file())
}

/// `ptxas -arch ARCH` over `ptx` (whole-program, default optimization), returning the cubin.
pub(crate) fn run_ptxas(ptxas: &Path, arch: &str, ptx: &str) -> Result<Vec<u8>, RuntimeError> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let base = std::env::temp_dir().join(format!("tessel-{}-{n}", std::process::id()));
    let (src, out) = (base.with_extension("ptx"), base.with_extension("cubin"));
    let result = (|| {
        std::fs::write(&src, ptx).map_err(|e| RuntimeError::Tool(format!("writing {}: {e}", src.display())))?;
        let run = Command::new(ptxas)
            .args(["-arch", arch, "-o"])
            .arg(&out)
            .arg(&src)
            .output()
            .map_err(|e| RuntimeError::Tool(format!("running {}: {e}", ptxas.display())))?;
        if !run.status.success() {
            return Err(RuntimeError::Tool(format!("ptxas: {}", String::from_utf8_lossy(&run.stderr))));
        }
        std::fs::read(&out).map_err(|e| RuntimeError::Tool(format!("reading {}: {e}", out.display())))
    })();
    let _ = std::fs::remove_file(&src);
    let _ = std::fs::remove_file(&out);
    result
}

/// Assembles `k` offline with `ptxas` for its own target (no GPU needed): the cubin.
pub fn assemble(k: &Kernel) -> Result<Vec<u8>, RuntimeError> {
    let ptxas = find_ptxas().ok_or_else(|| {
        RuntimeError::Tool(
            "no ptxas found: set PTXAS, put it on PATH, or install CUDA (or the nvidia-cuda-nvcc wheel)".into(),
        )
    })?;
    run_ptxas(&ptxas, k.target.name(), &k.ptx)
}

/// The SASS of `k`: assembled by `ptxas`, disassembled by `nvdisasm` (or `cuobjdump -sass`) found next to
/// `ptxas`, on `PATH`, or under `$CUDA_HOME` / `/usr/local/cuda`.
pub fn sass(k: &Kernel) -> Result<String, RuntimeError> {
    let cubin = assemble(k)?;
    let near_ptxas = find_ptxas().and_then(|p| p.parent().map(Path::to_path_buf));
    let on_path = std::env::var_os("PATH").into_iter().flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>());
    let cuda = [std::env::var_os("CUDA_HOME").map(PathBuf::from), Some(PathBuf::from("/usr/local/cuda"))];
    let dirs: Vec<PathBuf> =
        near_ptxas.into_iter().chain(on_path).chain(cuda.into_iter().flatten().map(|d| d.join("bin"))).collect();
    let tool = ["nvdisasm", "cuobjdump"].iter().find_map(|t| dirs.iter().map(|d| d.join(t)).find(|p| p.is_file()));
    let Some(tool) = tool else {
        return Err(RuntimeError::Tool(
            "--emit sass needs nvdisasm or cuobjdump (from a CUDA toolkit); neither is next to ptxas, on PATH or \
             under $CUDA_HOME"
                .into(),
        ));
    };
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let file = std::env::temp_dir().join(format!(
        "tessel-sass-{}-{}.cubin",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::write(&file, &cubin).map_err(|e| RuntimeError::Tool(format!("writing {}: {e}", file.display())))?;
    let is_nvdisasm = tool.file_name().is_some_and(|n| n == "nvdisasm");
    let mut cmd = Command::new(&tool);
    if is_nvdisasm {
        cmd.arg("-c");
    } else {
        cmd.arg("-sass");
    }
    let out = cmd.arg(&file).output();
    let _ = std::fs::remove_file(&file);
    let out = out.map_err(|e| RuntimeError::Tool(format!("running {}: {e}", tool.display())))?;
    if !out.status.success() {
        return Err(RuntimeError::Tool(format!("{}: {}", tool.display(), String::from_utf8_lossy(&out.stderr))));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `ptxas` (when there is one: CI installs it and sets TESSEL_REQUIRE_PTXAS) assembles whole-program code:
    /// an executable ELF, not the relocatable object `cuLink*` would build (more registers, slower kernels).
    #[test]
    fn ptxas_builds_whole_program_cubins() {
        let Some(ptxas) = find_ptxas() else {
            assert!(std::env::var_os("TESSEL_REQUIRE_PTXAS").is_none(), "TESSEL_REQUIRE_PTXAS is set but no ptxas");
            return;
        };
        let ptx = ".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n    \
                   .reg .b64 %rd<2>;\n    ld.param.u64 %rd1, [p];\n    st.global.u32 [%rd1], 7;\n    ret;\n}\n";
        let cubin = run_ptxas(&ptxas, "sm_90a", ptx).unwrap();
        assert!(cubin.starts_with(b"\x7fELF"));
        assert_eq!(u16::from_le_bytes([cubin[16], cubin[17]]), 2, "e_type must be ET_EXEC");
        let bad = run_ptxas(&ptxas, "sm_90a", "not ptx").unwrap_err();
        assert!(matches!(&bad, RuntimeError::Tool(m) if m.starts_with("ptxas: ")), "{bad}");
    }
}
