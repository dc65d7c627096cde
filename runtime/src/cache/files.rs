//! The cache's file operations: reads that tell an absent file from a bad one, atomic writes that concurrent
//! writers (threads or processes) cannot interleave, the removal of a bad file, and the one warning a process
//! gives when the cache cannot be written.
//!
//! Files and directories are created with the mode the user's umask leaves (0666 and 0777 before it), so a
//! cache shared by a group works as its umask says.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// What reading a cache file found.
enum Found {
    /// The file's bytes, and which file they came from (to remove that file, not a newer one, if they are bad).
    Bytes(Vec<u8>, Identity),
    /// Nothing there, or nothing that can be read now for a reason that may pass (too many open files, an I/O
    /// error): a miss, with nothing to remove.
    Absent,
    /// Something that cannot be read as a file (a directory, a file in place of the entry's directory, a file
    /// this user may not read, one longer than [`MAX_FILE`]): a miss, and a thing to remove.
    Unreadable,
}

/// Which file a read came from: its device and inode, and its size and modification time.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) struct Identity {
    dev_ino: (u64, u64),
    len: u64,
    modified: Option<std::time::SystemTime>,
}

impl Identity {
    fn of(m: &fs::Metadata) -> Identity {
        #[cfg(unix)]
        let dev_ino = {
            use std::os::unix::fs::MetadataExt;
            (m.dev(), m.ino())
        };
        #[cfg(not(unix))]
        let dev_ino = (0, 0);
        Identity { dev_ino, len: m.len(), modified: m.modified().ok() }
    }
}

/// The largest file the cache reads (PTX and cubins of the largest kernels are a few MiB): anything longer is
/// damage (a file extended by mistake, a sparse file), which would otherwise be read whole into memory.
pub(super) const MAX_FILE: u64 = 256 << 20;

fn read(path: &Path) -> Found {
    let opened = File::open(path).and_then(|f| Ok((f.metadata()?, f)));
    use io::ErrorKind::{IsADirectory, NotADirectory, PermissionDenied};
    match opened {
        Err(e) if matches!(e.kind(), IsADirectory | NotADirectory | PermissionDenied) => Found::Unreadable,
        Err(_) => Found::Absent,
        Ok((m, _)) if !m.is_file() || m.len() > MAX_FILE => Found::Unreadable,
        Ok((m, mut f)) => {
            let mut bytes = Vec::with_capacity(m.len() as usize);
            match f.read_to_end(&mut bytes) {
                Ok(_) => Found::Bytes(bytes, Identity::of(&m)),
                Err(e) if e.kind() == IsADirectory => Found::Unreadable,
                Err(_) => Found::Absent,
            }
        }
    }
}

/// What `decode` makes of the file at `path`; when the file is there but `decode` refuses it, or it is not a
/// file, it is removed (see [`discard`]).
pub(super) fn read_valid<T>(path: &Path, decode: impl FnOnce(Vec<u8>) -> Option<T>) -> Option<T> {
    match read(path) {
        Found::Bytes(bytes, id) => {
            let value = decode(bytes);
            if value.is_none() {
                discard(path, Some(id));
            }
            value
        }
        Found::Absent => None,
        Found::Unreadable => {
            discard(path, None);
            None
        }
    }
}

/// Removes what is at `path`, found bad by a read: the file the read came from (`Some(identity)`; a file that
/// replaced it since, perhaps a good one another writer renamed there, stays), or, for an unreadable thing
/// (`None`), a directory with all it holds, or a file or link. Best effort: a cache that cannot be repaired
/// is still only a miss.
pub(super) fn discard(path: &Path, read: Option<Identity>) {
    let Ok(m) = fs::symlink_metadata(path) else { return };
    let _ = match read {
        Some(identity) if !m.is_file() || Identity::of(&m) != identity => return,
        _ if m.is_dir() => fs::remove_dir_all(path),
        _ => fs::remove_file(path),
    };
}

/// Writes `dir/name` through a temporary file in `dir` and a rename, so a reader sees the whole file or none.
/// Each write has its own temporary file (process id and a per-process counter, created exclusively), so
/// concurrent writers of one file never write into each other's. What stands in the way of the entry and is
/// not a file (a file in place of `dir`, a directory in place of `dir/name`) is removed first.
pub(super) fn write_atomic(dir: &Path, name: &str, bytes: &[u8]) -> io::Result<()> {
    if fs::create_dir_all(dir).is_err() && fs::symlink_metadata(dir).is_ok_and(|m| m.is_file()) {
        fs::remove_file(dir)?;
    }
    fs::create_dir_all(dir)?;
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let (tmp, mut file) = loop {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let tmp = dir.join(format!(".{name}.{}.{n}.tmp", std::process::id()));
        match OpenOptions::new().write(true).create_new(true).open(&tmp) {
            Ok(f) => break (tmp, f),
            // Left by a process that crashed: its id came round again.
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    };
    let target = dir.join(name);
    let written = file.write_all(bytes).and_then(|()| {
        drop(file);
        if fs::symlink_metadata(&target).is_ok_and(|m| m.is_dir()) {
            fs::remove_dir_all(&target)?;
        }
        fs::rename(&tmp, &target)
    });
    written.inspect_err(|_| {
        let _ = fs::remove_file(&tmp);
    })
}

/// Says on stderr, once per process, that the cache in `dir` cannot be written, and why; returns whether this
/// call said it. Compiling goes on: the kernel is only compiled again by the next process.
pub(super) fn warn_unwritable(dir: &Path, err: &io::Error) -> bool {
    static WARNED: AtomicBool = AtomicBool::new(false);
    let first = !WARNED.swap(true, Ordering::Relaxed);
    if first {
        eprintln!(
            "tessel: warning: cannot write the kernel cache in {} ({err}); kernels will be compiled again by \
             each process (set TESSEL_CACHE_DIR to a writable directory, or TESSEL_CACHE=0)",
            dir.display()
        );
    }
    first
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(tag: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("tessel-cache-files-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn reads_tell_absent_from_unreadable() {
        let dir = scratch("read");
        assert!(matches!(read(&dir.join("none")), Found::Absent));
        assert!(matches!(read(&dir), Found::Unreadable), "a directory");
        fs::write(dir.join("f"), b"bytes").unwrap();
        assert!(matches!(read(&dir.join("f/under")), Found::Unreadable), "a file in place of a directory");
        let huge = File::create(dir.join("huge")).unwrap();
        huge.set_len(MAX_FILE + 1).unwrap(); // sparse: nothing written
        assert!(matches!(read(&dir.join("huge")), Found::Unreadable), "a file longer than any entry's");
        let Found::Bytes(bytes, _) = read(&dir.join("f")) else { panic!("a file") };
        assert_eq!(bytes, b"bytes");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn discarding_leaves_a_file_that_replaced_the_one_read() {
        let dir = scratch("discard");
        let path = dir.join("f");
        fs::write(&path, b"bad").unwrap();
        let Found::Bytes(_, old) = read(&path) else { panic!() };
        write_atomic(&dir, "f", b"a good one").unwrap();
        discard(&path, Some(old));
        assert_eq!(fs::read(&path).unwrap(), b"a good one");
        let Found::Bytes(_, new) = read(&path) else { panic!() };
        discard(&path, Some(new));
        assert!(!path.exists());
        fs::create_dir_all(path.join("deep")).unwrap();
        discard(&path, None);
        assert!(!path.exists());
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn atomic_writes_replace_what_stands_in_the_way_and_honor_the_umask() {
        let dir = scratch("write");
        fs::create_dir_all(dir.join("entry/f/inside")).unwrap();
        write_atomic(&dir.join("entry"), "f", b"1").unwrap();
        assert_eq!(fs::read(dir.join("entry/f")).unwrap(), b"1");
        fs::write(dir.join("file-entry"), b"not a directory").unwrap();
        write_atomic(&dir.join("file-entry"), "f", b"2").unwrap();
        assert_eq!(fs::read(dir.join("file-entry/f")).unwrap(), b"2");
        // No temporary file is left behind.
        let names: Vec<_> = fs::read_dir(dir.join("entry")).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, ["f"]);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            // 0666 less the umask, which the test reads off a file it creates the ordinary way.
            fs::write(dir.join("plain"), b"").unwrap();
            let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode(&dir.join("entry/f")), mode(&dir.join("plain")));
        }
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_unwritable_warning_is_given_once() {
        let err = io::Error::other("test");
        warn_unwritable(Path::new("/a"), &err);
        assert!(!warn_unwritable(Path::new("/b"), &err));
    }
}
