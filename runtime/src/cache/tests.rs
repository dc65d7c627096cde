//! The cache as its callers use it: round trips, damage of every kind between runs, concurrent writers, and
//! directories that cannot be written.

use std::fs;
use std::path::{Path, PathBuf};

use proptest::prelude::*;

use super::format::tests::{facts, kernel};
use super::*;

fn scratch(tag: &str) -> DiskCache {
    let dir = std::env::temp_dir().join(format!("tessel-cache-test-{tag}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    DiskCache::at(dir)
}

const DEVICE: &str = "sm90-drv13000";
const CUBIN: &[u8] = b"\x7fELF-and-the-rest";

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
    assert_eq!(facts(&cache.get(&key).unwrap()), facts(&kernel()));
    assert!(cache.get_cubin(&key, DEVICE).is_none());
    cache.put_cubin(&key, DEVICE, CUBIN).unwrap();
    assert_eq!(cache.get_cubin(&key, DEVICE).unwrap(), CUBIN);
    assert!(cache.get_cubin(&key, "sm80-drv13000").is_none());
    fs::remove_dir_all(cache.dir()).unwrap();
}

#[test]
fn a_truncated_ptx_is_a_miss_and_is_removed() {
    // The probe's case: `kernel.ptx` cut short (a crash between write and rename on a file system that
    // reorders them) was returned as the kernel, and stayed.
    let cache = scratch("truncated");
    let key = DiskCache::key(&[b"x"]);
    cache.put(&key, &kernel()).unwrap();
    let ptx = cache.dir().join(&key).join("kernel.ptx");
    let whole = fs::read(&ptx).unwrap();
    // Cut inside the body: the entry point is still declared.
    fs::write(&ptx, &whole[..whole.len() - 8]).unwrap();
    assert!(cache.get(&key).is_none());
    assert!(!ptx.exists());
    cache.put(&key, &kernel()).unwrap();
    assert_eq!(facts(&cache.get(&key).unwrap()), facts(&kernel()));
    fs::remove_dir_all(cache.dir()).unwrap();
}

/// What is done to a cache file between one run and the next.
#[derive(Clone, Debug)]
enum Damage {
    /// Cut to this fraction of its length (per mille, below 1000).
    Truncate(u16),
    /// One bit flipped, at a position taken modulo the length.
    FlipBit(usize, u8),
    Empty,
    /// Other bytes in its place.
    Replace(Vec<u8>),
    /// Bytes added at its end.
    Append(Vec<u8>),
    /// A directory (holding a file) in its place.
    Directory,
    Removed,
    /// The same file of another entry (or, for a cubin, of another device) copied over it.
    Swapped,
}

fn damage() -> impl Strategy<Value = Damage> {
    prop_oneof![
        (0u16..1000).prop_map(Damage::Truncate),
        (any::<usize>(), 0u8..8).prop_map(|(at, bit)| Damage::FlipBit(at, bit)),
        Just(Damage::Empty),
        prop::collection::vec(any::<u8>(), 1..200).prop_map(Damage::Replace),
        prop::collection::vec(any::<u8>(), 1..20).prop_map(Damage::Append),
        Just(Damage::Directory),
        Just(Damage::Removed),
        Just(Damage::Swapped),
    ]
}

/// Applies `damage` to `path`; `other` is the same file of another entry.
fn apply(damage: &Damage, path: &Path, other: &Path) {
    let bytes = fs::read(path).unwrap();
    match damage {
        Damage::Truncate(per_mille) => fs::write(path, &bytes[..bytes.len() * *per_mille as usize / 1000]).unwrap(),
        Damage::FlipBit(at, bit) => {
            let mut bytes = bytes;
            let n = bytes.len();
            bytes[at % n] ^= 1 << bit;
            fs::write(path, bytes).unwrap();
        }
        Damage::Empty => fs::write(path, b"").unwrap(),
        Damage::Replace(new) => fs::write(path, new).unwrap(),
        Damage::Append(more) => fs::write(path, [bytes, more.clone()].concat()).unwrap(),
        Damage::Directory => {
            fs::remove_file(path).unwrap();
            fs::create_dir_all(path.join("inside")).unwrap();
            fs::write(path.join("inside/file"), b"x").unwrap();
        }
        Damage::Removed => fs::remove_file(path).unwrap(),
        Damage::Swapped => {
            fs::copy(other, path).unwrap();
        }
    }
}

/// The same kernel compiled under another name, stored under another key: what a swapped file comes from.
fn other_kernel() -> Kernel {
    let k = kernel();
    Kernel { ptx: k.ptx.replace(".entry k(", ".entry k2("), name: "k2".to_string(), num_warps: 4, ..k }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: tessel_tile::testing::campaign_cases(128), ..ProptestConfig::default() })]

    /// Whatever happens to one of an entry's files between runs, the next run gets the kernel that was stored or
    /// a miss, never an error or another kernel; a miss removes what was damaged, and storing again is a hit.
    #[test]
    fn damaged_files_are_misses_and_are_repaired(file in 0usize..4, damage in damage()) {
        let cache = scratch("damage");
        let (key, other) = (DiskCache::key(&[b"a"]), DiskCache::key(&[b"b"]));
        cache.put(&key, &kernel()).unwrap();
        cache.put_cubin(&key, DEVICE, CUBIN).unwrap();
        cache.put(&other, &other_kernel()).unwrap();
        cache.put_cubin(&other, "sm100-drv13000", b"\x7fELF-of-another-device").unwrap();
        let entry = cache.dir().join(&key);
        let (path, swapped_from): (PathBuf, PathBuf) = match file {
            0 => (entry.join("kernel.meta"), cache.dir().join(&other).join("kernel.meta")),
            1 => (entry.join("kernel.ptx"), cache.dir().join(&other).join("kernel.ptx")),
            2 => (entry.join(format!("{DEVICE}.cubin")), cache.dir().join(&other).join("sm100-drv13000.cubin")),
            // The entry's directory: a file in its place (from any damage that leaves bytes).
            _ => (entry.clone(), PathBuf::new()),
        };
        if file == 3 {
            fs::remove_dir_all(&entry).unwrap();
            fs::write(&entry, b"not a directory").unwrap();
        } else {
            apply(&damage, &path, &swapped_from);
        }

        let got = cache.get(&key);
        let cubin = cache.get_cubin(&key, DEVICE);
        if file == 2 {
            // The cubin's damage leaves the kernel alone.
            prop_assert_eq!(facts(got.as_ref().unwrap()), facts(&kernel()));
        } else {
            prop_assert!(got.is_none(), "damaged {path:?} ({damage:?}) gave a kernel");
        }
        if file == 2 || file == 3 {
            prop_assert!(cubin.is_none(), "damaged {path:?} ({damage:?}) gave a cubin");
        } else {
            prop_assert_eq!(cubin, Some(CUBIN.to_vec()));
        }
        prop_assert!(!path.exists(), "damaged {path:?} ({damage:?}) was left in place");
        // Nothing that was fine is lost: the other entry still reads back.
        prop_assert_eq!(facts(&cache.get(&other).unwrap()), facts(&other_kernel()));

        cache.put(&key, &kernel()).unwrap();
        cache.put_cubin(&key, DEVICE, CUBIN).unwrap();
        prop_assert_eq!(facts(&cache.get(&key).unwrap()), facts(&kernel()));
        prop_assert_eq!(cache.get_cubin(&key, DEVICE), Some(CUBIN.to_vec()));
        fs::remove_dir_all(cache.dir()).unwrap();
    }
}

#[test]
fn concurrent_writers_keep_every_entry() {
    // Eight writers of distinct entries at once, then eight writers (and readers) of one entry: no entry is
    // lost, no write fails, and no read sees anything but the kernel.
    let cache = scratch("concurrent");
    let keys: Vec<String> = (0..8u8).map(|i| DiskCache::key(&[&[i]])).collect();
    let start = std::sync::Barrier::new(8);
    std::thread::scope(|s| {
        for key in &keys {
            let (cache, start) = (&cache, &start);
            s.spawn(move || {
                start.wait();
                cache.put(key, &kernel()).unwrap();
                cache.put_cubin(key, DEVICE, CUBIN).unwrap();
            });
        }
    });
    for key in &keys {
        assert_eq!(facts(&cache.get(key).unwrap()), facts(&kernel()));
        assert_eq!(cache.get_cubin(key, DEVICE).unwrap(), CUBIN);
    }
    let shared = DiskCache::key(&[b"shared"]);
    std::thread::scope(|s| {
        for _ in 0..8 {
            let (cache, start, shared) = (&cache, &start, &shared);
            s.spawn(move || {
                start.wait();
                for _ in 0..20 {
                    cache.put(shared, &kernel()).unwrap();
                    cache.put_cubin(shared, DEVICE, CUBIN).unwrap();
                    if let Some(k) = cache.get(shared) {
                        assert_eq!(facts(&k), facts(&kernel()));
                    }
                    assert!(cache.get_cubin(shared, DEVICE).is_none_or(|c| c == CUBIN));
                }
            });
        }
    });
    assert_eq!(facts(&cache.get(&shared).unwrap()), facts(&kernel()));
    let names = fs::read_dir(cache.dir().join(&shared)).unwrap().map(|e| e.unwrap().file_name()).collect::<Vec<_>>();
    assert_eq!(names.len(), 3, "no temporary file left: {names:?}");
    fs::remove_dir_all(cache.dir()).unwrap();
}

/// Stores into `cache`, which cannot be written: an error (said once on stderr), never a panic, and reads miss.
fn store_fails(cache: &DiskCache) {
    let key = DiskCache::key(&[b"unwritable"]);
    assert!(cache.put(&key, &kernel()).is_err());
    assert!(cache.put_cubin(&key, DEVICE, CUBIN).is_err());
    assert!(cache.get(&key).is_none() && cache.get_cubin(&key, DEVICE).is_none());
    // The failures above gave the process's one warning.
    assert!(!files::warn_unwritable(cache.dir(), &io::Error::other("again")));
}

#[test]
fn a_file_in_place_of_the_cache_directory_is_only_a_miss() {
    // Holds for root too, which the permission bits below do not stop.
    let cache = scratch("file-root");
    fs::write(cache.dir(), b"a file").unwrap();
    store_fails(&cache);
    assert_eq!(fs::read(cache.dir()).unwrap(), b"a file", "the cache's own directory is not the cache's to remove");
    let under = DiskCache::at(cache.dir().join("tessel"));
    store_fails(&under);
    fs::remove_file(cache.dir()).unwrap();
}

#[cfg(unix)]
#[test]
fn a_read_only_cache_directory_is_only_a_miss() {
    use std::os::unix::fs::PermissionsExt;
    let cache = scratch("read-only");
    let key = DiskCache::key(&[b"readable"]);
    cache.put(&key, &kernel()).unwrap();
    fs::set_permissions(cache.dir(), fs::Permissions::from_mode(0o555)).unwrap();
    // Root (or a process with CAP_DAC_OVERRIDE) writes anyway: nothing to test then.
    if fs::write(cache.dir().join("probe"), b"").is_err() {
        store_fails(&cache);
        // What is there still reads back.
        assert_eq!(facts(&cache.get(&key).unwrap()), facts(&kernel()));
    }
    fs::set_permissions(cache.dir(), fs::Permissions::from_mode(0o755)).unwrap();
    fs::remove_dir_all(cache.dir()).unwrap();
}

#[test]
#[cfg(target_os = "linux")]
fn the_compiler_is_identified_by_the_file_its_code_was_loaded_from() {
    // In a test binary the code is in the executable itself; in the Python extension it is the `.so`, not the
    // interpreter (`current_exe`), which a reinstall of tessel does not change.
    let image = super::loaded_image().expect("this function's mapping in /proc/self/maps");
    let exe = std::env::current_exe().unwrap();
    assert_eq!(image.canonicalize().unwrap(), exe.canonicalize().unwrap());
    assert!(compiler_id().contains(&image.display().to_string()), "{}", compiler_id());
}
