//! The on-disk kernel cache: compiled kernels (PTX and launch facts) and the cubins `ptxas` assembled from
//! them, so that a kernel compiled once starts in the next process without elaboration, code generation or
//! assembly. (Without a `ptxas` the driver's JIT assembles the PTX and keeps its own cache.)
//!
//! An entry is a directory named by a SHA-256 key that the caller builds from everything the PTX depends on
//! (for source kernels: the source text, kernel name, specialization and target; see `tessel::jit`), to which
//! [`DiskCache::key`] adds the compiler's identity ([`compiler_id`]), so a rebuilt compiler never reads an
//! older one's output. It holds `kernel.ptx`, `kernel.meta` (name, warps, dynamic shared memory, target, and
//! the PTX's length and SHA-256, sealed by a hash of its own) and one `DEVICE.cubin` per device and driver
//! ([`crate::Gpu::device_tag`]), the cubin followed by its length and hash: a cubin is valid only for
//! the GPU it was assembled for, and the driver version in the tag re-assembles after a driver update
//! (`format.rs` has the files' layout).
//!
//! Crash and concurrency safety: every file is written to a temporary file of its own and renamed into place
//! (`files.rs`), so a reader sees a whole file or none, and writers of distinct entries, or of one entry,
//! never lose each other's work (an entry's PTX is written before the metadata that seals it). Whatever is
//! read is checked (lengths, hashes, plausible launch facts) and anything wrong, a file truncated by a crash,
//! flipped bits, a directory where a file belongs, an entry of an older format, is a miss whose files are
//! removed, never an error or a wrong kernel. A cache that cannot be written says so once per process on
//! stderr, and compiling goes on.
//!
//! The directory is `$TESSEL_CACHE_DIR`, else `$XDG_CACHE_HOME/tessel`, else `$HOME/.cache/tessel`;
//! `TESSEL_CACHE=0` turns the cache off.

mod files;
mod format;
#[cfg(test)]
mod tests;

use std::io;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use sha2::{Digest, Sha256};

use tessel_codegen::Kernel;

/// A kernel cache rooted at one directory.
#[derive(Clone, Debug)]
pub struct DiskCache {
    dir: PathBuf,
}

/// The compiler's identity in cache keys: the crate version and the file this code was loaded from (its path,
/// size and modification time), which change with every rebuild and reinstall (a development build does not bump
/// the version). That file is the `tessel` executable, or the Python extension module: there the process's
/// executable is the Python interpreter, the same before and after `pip install` of a new tessel, which would
/// serve the old compiler's PTX to the new one.
pub fn compiler_id() -> &'static str {
    static ID: OnceLock<String> = OnceLock::new();
    ID.get_or_init(|| {
        let image = loaded_image().or_else(|| std::env::current_exe().ok());
        let stamp = image
            .as_ref()
            .and_then(|p| {
                let m = std::fs::metadata(p).ok()?;
                let t = m.modified().ok()?.duration_since(std::time::UNIX_EPOCH).ok()?;
                Some(format!("{} {}-{}", p.display(), m.len(), t.as_nanos()))
            })
            .unwrap_or_else(|| "unknown-build".to_string());
        format!("tessel-codegen {} {stamp}", env!("CARGO_PKG_VERSION"))
    })
}

/// The file mapped at this function's address (`/proc/self/maps`, Linux): the executable or shared library
/// holding the compiler. `None` elsewhere, or when the file was replaced since it was loaded (`(deleted)`).
fn loaded_image() -> Option<std::path::PathBuf> {
    let here = loaded_image as *const () as usize;
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    maps.lines().find_map(|line| {
        // address perms offset dev inode pathname
        let mut fields = line.splitn(6, ' ');
        let (lo, hi) = fields.next()?.split_once('-')?;
        let (lo, hi) = (usize::from_str_radix(lo, 16).ok()?, usize::from_str_radix(hi, 16).ok()?);
        let path = fields.nth(4)?.trim_start();
        ((lo..hi).contains(&here) && path.starts_with('/') && !path.ends_with("(deleted)")).then(|| path.into())
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

    /// The kernel stored under `key`, if a whole and consistent entry is there; a damaged one is removed.
    pub fn get(&self, key: &str) -> Option<Kernel> {
        let dir = self.entry(key);
        if dir.exists() && !dir.is_dir() {
            files::discard(&dir, None);
            return None;
        }
        let meta = files::read_valid(&dir.join("kernel.meta"), |bytes| format::decode_meta(key, &bytes))?;
        files::read_valid(&dir.join("kernel.ptx"), |ptx| meta.kernel(ptx))
    }

    /// Stores `kernel` under `key` (replacing what was there). An error is also said once per process on stderr.
    pub fn put(&self, key: &str, kernel: &Kernel) -> io::Result<()> {
        let dir = self.entry(key);
        // The PTX first: the metadata seals it, so a reader never takes the new metadata with other PTX.
        let written = files::write_atomic(&dir, "kernel.ptx", kernel.ptx.as_bytes())
            .and_then(|()| files::write_atomic(&dir, "kernel.meta", format::encode_meta(key, kernel).as_bytes()));
        self.warn_on_error(written)
    }

    /// The cubin assembled for `device` from the PTX under `key`, if a whole one is there; a damaged one is
    /// removed.
    pub fn get_cubin(&self, key: &str, device: &str) -> Option<Vec<u8>> {
        files::read_valid(&self.entry(key).join(format!("{device}.cubin")), |file| {
            format::decode_cubin(key, device, file)
        })
    }

    /// Stores the cubin assembled for `device` from the PTX under `key`. An error is also said once per process
    /// on stderr.
    pub fn put_cubin(&self, key: &str, device: &str, cubin: &[u8]) -> io::Result<()> {
        let written = files::write_atomic(
            &self.entry(key),
            &format!("{device}.cubin"),
            &format::encode_cubin(key, device, cubin),
        );
        self.warn_on_error(written)
    }

    fn warn_on_error(&self, written: io::Result<()>) -> io::Result<()> {
        written.inspect_err(|e| {
            files::warn_unwritable(&self.dir, e);
        })
    }
}
