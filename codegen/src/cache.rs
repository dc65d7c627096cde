//! The on-disk kernel cache: compiled kernels (PTX and launch facts) and the cubins `ptxas` assembled from
//! them, so that a kernel compiled once starts in the next process without elaboration, code generation or
//! assembly. (Without a `ptxas` the driver's JIT assembles the PTX and keeps its own cache.)
//!
//! An entry is a directory named by a SHA-256 key that the caller builds from everything the PTX depends on
//! (for source kernels: the source text, kernel name, specialization and target; see `tessel::jit`), to which
//! [`DiskCache::key`] adds the compiler's identity ([`compiler_id`]), so a rebuilt compiler never reads an
//! older one's output. It holds `kernel.ptx`, `kernel.meta` (name, warps, dynamic shared memory, target) and
//! one `DEVICE.cubin` per device and driver ([`crate::runtime::Gpu::device_tag`]): a cubin is valid only for
//! the GPU it was assembled for, and the driver version in the tag re-assembles after a driver update. Files
//! are written to a temporary name and renamed into place, so a concurrent reader sees a whole file or none;
//! an unreadable or inconsistent entry is a miss, never an error.
//!
//! The directory is `$TESSEL_CACHE_DIR`, else `$XDG_CACHE_HOME/tessel`, else `$HOME/.cache/tessel`;
//! `TESSEL_CACHE=0` turns the cache off.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use sha2::{Digest, Sha256};

use crate::{Kernel, Target};

/// A kernel cache rooted at one directory.
#[derive(Clone, Debug)]
pub struct DiskCache {
    dir: PathBuf,
}

/// The compiler's identity in cache keys: the crate version and the size and modification time of the running
/// executable, which change with every rebuild (a development build does not bump the version).
pub fn compiler_id() -> &'static str {
    static ID: OnceLock<String> = OnceLock::new();
    ID.get_or_init(|| {
        let exe = std::env::current_exe().and_then(std::fs::metadata);
        let stamp = exe
            .ok()
            .and_then(|m| {
                let t = m.modified().ok()?.duration_since(std::time::UNIX_EPOCH).ok()?;
                Some(format!("{}-{}", m.len(), t.as_nanos()))
            })
            .unwrap_or_else(|| "unknown-build".to_string());
        format!("tessel-codegen {} {stamp}", env!("CARGO_PKG_VERSION"))
    })
}

impl DiskCache {
    /// The cache the environment asks for (see the module docs), or `None` when it is turned off or there is
    /// no home directory to put it in.
    pub fn from_env() -> Option<DiskCache> {
        let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
        if var("TESSEL_CACHE").is_some_and(|v| v == "0" || v == "off") {
            return None;
        }
        let dir = var("TESSEL_CACHE_DIR")
            .map(PathBuf::from)
            .or_else(|| var("XDG_CACHE_HOME").map(|d| PathBuf::from(d).join("tessel")))
            .or_else(|| var("HOME").map(|h| PathBuf::from(h).join(".cache").join("tessel")))?;
        Some(DiskCache::at(dir))
    }

    pub fn at(dir: impl Into<PathBuf>) -> DiskCache {
        DiskCache { dir: dir.into() }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The key of an entry: SHA-256 (hex) over the compiler's identity and each part, length-prefixed so that
    /// no two part lists collide by concatenation.
    pub fn key(parts: &[&[u8]]) -> String {
        let mut h = Sha256::new();
        for part in std::iter::once(compiler_id().as_bytes()).chain(parts.iter().copied()) {
            h.update((part.len() as u64).to_le_bytes());
            h.update(part);
        }
        h.finalize().iter().map(|b| format!("{b:02x}")).collect()
    }

    fn entry(&self, key: &str) -> PathBuf {
        self.dir.join(key)
    }

    /// The kernel stored under `key`, if a whole and consistent entry is there.
    pub fn get(&self, key: &str) -> Option<Kernel> {
        let dir = self.entry(key);
        let ptx = std::fs::read_to_string(dir.join("kernel.ptx")).ok()?;
        let meta = std::fs::read_to_string(dir.join("kernel.meta")).ok()?;
        let field = |name: &str| meta.lines().find_map(|l| l.strip_prefix(name)?.strip_prefix('='));
        let kernel = Kernel {
            name: field("name")?.to_string(),
            num_warps: field("num_warps")?.parse().ok()?,
            shared_bytes: field("shared_bytes")?.parse().ok()?,
            target: Target::parse(field("arch")?)?,
            tensor_maps: match field("tensor_maps")? {
                "" => Vec::new(),
                maps => maps.split(';').map(crate::TensorMapArg::from_text).collect::<Option<_>>()?,
            },
            scratch_bytes: field("scratch_bytes")?.parse().ok()?,
            ptx,
        };
        // The entry point must be the one the metadata names (a guard against a mismatched pair of files).
        kernel.ptx.contains(&format!(".entry {}(", kernel.name)).then_some(kernel)
    }

    /// Stores `kernel` under `key` (replacing what was there).
    pub fn put(&self, key: &str, kernel: &Kernel) -> io::Result<()> {
        let meta = format!(
            "name={}\nnum_warps={}\nshared_bytes={}\narch={}\ntensor_maps={}\nscratch_bytes={}\n",
            kernel.name,
            kernel.num_warps,
            kernel.shared_bytes,
            kernel.target.name(),
            kernel.tensor_maps.iter().map(crate::TensorMapArg::to_text).collect::<Vec<_>>().join(";"),
            kernel.scratch_bytes
        );
        let dir = self.entry(key);
        write_atomic(&dir, "kernel.ptx", kernel.ptx.as_bytes())?;
        write_atomic(&dir, "kernel.meta", meta.as_bytes())
    }

    /// The cubin assembled for `device` from the PTX under `key`.
    pub fn get_cubin(&self, key: &str, device: &str) -> Option<Vec<u8>> {
        std::fs::read(self.entry(key).join(format!("{device}.cubin"))).ok().filter(|b| b.starts_with(b"\x7fELF"))
    }

    pub fn put_cubin(&self, key: &str, device: &str, cubin: &[u8]) -> io::Result<()> {
        write_atomic(&self.entry(key), &format!("{device}.cubin"), cubin)
    }
}

/// Writes `dir/name` through a temporary file in the same directory and a rename.
fn write_atomic(dir: &Path, name: &str, bytes: &[u8]) -> io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, dir.join(name)).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kernel() -> Kernel {
        Kernel {
            ptx: ".version 8.0\n.visible .entry k(\n)\n{\n    ret;\n}\n".to_string(),
            name: "k".to_string(),
            num_warps: 8,
            shared_bytes: 4096,
            target: Target::Sm90a,
            tensor_maps: vec![
                crate::TensorMapArg {
                    base_arg: Some(2),
                    elem: tessel_tile::ScalarType::F16,
                    block_shape: vec![64, 128],
                    nan_padding: true,
                    im2col_rank: None,
                },
                crate::TensorMapArg {
                    base_arg: None,
                    elem: tessel_tile::ScalarType::BF16,
                    block_shape: vec![128, 64],
                    nan_padding: false,
                    im2col_rank: None,
                },
            ],
            scratch_bytes: 128,
        }
    }

    fn scratch(tag: &str) -> DiskCache {
        let dir = std::env::temp_dir().join(format!("tessel-cache-test-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        DiskCache::at(dir)
    }

    #[test]
    fn keys_separate_their_parts_and_include_the_compiler() {
        let k = DiskCache::key(&[b"ab", b"c"]);
        assert_eq!(k.len(), 64);
        assert_eq!(k, DiskCache::key(&[b"ab", b"c"]));
        assert_ne!(k, DiskCache::key(&[b"a", b"bc"]));
        assert_ne!(k, DiskCache::key(&[b"abc"]));
        assert!(compiler_id().starts_with("tessel-codegen "));
    }

    #[test]
    fn kernels_and_cubins_round_trip() {
        let cache = scratch("roundtrip");
        let key = DiskCache::key(&[b"source", b"spec"]);
        assert!(cache.get(&key).is_none());
        cache.put(&key, &kernel()).unwrap();
        let back = cache.get(&key).unwrap();
        assert_eq!(
            (back.ptx, back.name, back.num_warps, back.shared_bytes, back.target, back.tensor_maps, back.scratch_bytes),
            {
                let k = kernel();
                (k.ptx, k.name, k.num_warps, k.shared_bytes, k.target, k.tensor_maps, k.scratch_bytes)
            }
        );
        assert!(cache.get_cubin(&key, "sm90-drv13000").is_none());
        cache.put_cubin(&key, "sm90-drv13000", b"\x7fELF-and-the-rest").unwrap();
        assert_eq!(cache.get_cubin(&key, "sm90-drv13000").unwrap(), b"\x7fELF-and-the-rest");
        assert!(cache.get_cubin(&key, "sm80-drv13000").is_none());
        std::fs::remove_dir_all(cache.dir()).unwrap();
    }

    #[test]
    fn damaged_entries_are_misses() {
        let cache = scratch("damaged");
        let key = DiskCache::key(&[b"x"]);
        cache.put(&key, &kernel()).unwrap();
        let dir = cache.dir().join(&key);
        // Metadata naming another entry point, unparsable metadata, a cubin that is not an ELF image.
        std::fs::write(dir.join("kernel.meta"), "name=other\nnum_warps=8\nshared_bytes=0\narch=sm_90a\n").unwrap();
        assert!(cache.get(&key).is_none());
        std::fs::write(dir.join("kernel.meta"), "name=k\nnum_warps=eight\n").unwrap();
        assert!(cache.get(&key).is_none());
        std::fs::write(dir.join("sm90-drv1.cubin"), b"truncated").unwrap();
        assert!(cache.get_cubin(&key, "sm90-drv1").is_none());
        std::fs::remove_dir_all(cache.dir()).unwrap();
    }
}
