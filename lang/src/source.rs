//! Reading a source file: at most [`MAX_SOURCE_BYTES`] (a device such as `/dev/zero` never ends), and as UTF-8
//! text, Python's source encoding (PEP 3120), with the first byte that is not UTF-8 located by line and column.

use std::fmt;
use std::io::Read;
use std::path::Path;

use crate::diag::Diagnostic;
use crate::span::Span;

/// The most bytes [`read`] takes from one source file: 64 MiB.
pub const MAX_SOURCE_BYTES: u64 = 64 << 20;

/// Why a source file could not be read.
#[derive(Debug)]
pub enum ReadError {
    /// Opening or reading it failed.
    Io(std::io::Error),
    /// It holds more than [`MAX_SOURCE_BYTES`].
    TooLarge,
    /// It is not UTF-8: the diagnostic points at the first invalid byte, in the file's text with the invalid
    /// bytes shown as U+FFFD (the diagnostic carries that text, see [`Diagnostic::file`]).
    NotUtf8(Box<Diagnostic>),
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadError::Io(e) => write!(f, "{e}"),
            ReadError::TooLarge => {
                write!(f, "it is larger than {} MiB, the most tessel reads from a source file", MAX_SOURCE_BYTES >> 20)
            }
            ReadError::NotUtf8(d) => f.write_str(&d.message),
        }
    }
}

impl std::error::Error for ReadError {}

/// The text of the source file at `path`. A regular file larger than the cap is refused before it is read; any
/// other file (a pipe, a device) is read up to the cap and refused if it goes on.
pub fn read(path: &Path) -> Result<String, ReadError> {
    let file = std::fs::File::open(path).map_err(ReadError::Io)?;
    let meta = file.metadata().map_err(ReadError::Io)?;
    if meta.is_file() && meta.len() > MAX_SOURCE_BYTES {
        return Err(ReadError::TooLarge);
    }
    let mut bytes = Vec::new();
    file.take(MAX_SOURCE_BYTES + 1).read_to_end(&mut bytes).map_err(ReadError::Io)?;
    if bytes.len() as u64 > MAX_SOURCE_BYTES {
        return Err(ReadError::TooLarge);
    }
    decode(bytes, &path.display().to_string())
}

/// `bytes` (the contents of `file`) as text, or an error at the first byte that is not UTF-8.
pub fn decode(bytes: Vec<u8>, file: &str) -> Result<String, ReadError> {
    let e = match String::from_utf8(bytes) {
        Ok(text) => return Ok(text),
        Err(e) => e,
    };
    let at = e.utf8_error().valid_up_to();
    let why = match e.utf8_error().error_len() {
        Some(_) => "is not valid UTF-8",
        None => "starts a UTF-8 sequence the file ends inside",
    };
    let bytes = e.into_bytes();
    let byte = bytes[at];
    // Everything before `at` is valid, so offsets up to it are the file's; the invalid bytes there become one
    // U+FFFD, which the span covers.
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let line = text[..at].matches('\n').count() + 1;
    let column = text[line_start..at].chars().count() + 1;
    let d = Diagnostic::error(
        format!("{file}:{line}:{column}: byte 0x{byte:02x} (offset {at}) {why}; source files are read as UTF-8"),
        Span::new(at, at + char::REPLACEMENT_CHARACTER.len_utf8()),
    )
    .with_label(format!("byte 0x{byte:02x} {why}"))
    .with_hint("save the file as UTF-8: Python reads sources as UTF-8 (PEP 3120), and tessel reads no other encoding")
    .in_file(file, text.into());
    Err(ReadError::NotUtf8(Box::new(d)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf8_text_is_read_as_is() {
        assert_eq!(decode("x = 'é'\n".as_bytes().to_vec(), "a.py").unwrap(), "x = 'é'\n");
    }

    #[test]
    fn the_first_invalid_byte_is_located_by_line_and_column() {
        let Err(ReadError::NotUtf8(d)) = decode(b"import triton\nx = '\xc3\xa9\xe9t\xff'\n".to_vec(), "a.py") else {
            panic!("expected a UTF-8 error")
        };
        // Line 2, after `x = '` and `é` (one character, two bytes): column 7.
        assert_eq!(d.message, "a.py:2:7: byte 0xe9 (offset 21) is not valid UTF-8; source files are read as UTF-8");
        assert_eq!(d.span, Span::new(21, 24));
        let shown = d.render("ignored.py", "");
        assert!(shown.contains("a.py:2:7") && shown.contains("byte 0xe9 is not valid UTF-8"), "{shown}");
    }

    #[test]
    fn a_sequence_cut_by_the_end_of_the_file_is_named() {
        let Err(ReadError::NotUtf8(d)) = decode(b"x = 1\n\xe2\x82".to_vec(), "a.py") else { panic!() };
        assert!(d.message.starts_with("a.py:2:1: byte 0xe2 (offset 6) starts a UTF-8 sequence"), "{}", d.message);
    }

    #[test]
    fn a_file_over_the_cap_is_refused_before_it_is_read() {
        let dir = std::env::temp_dir().join(format!("tessel-source-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("big.py");
        let f = std::fs::File::create(&path).unwrap();
        // Sparse: no 64 MiB written.
        f.set_len(MAX_SOURCE_BYTES + 1).unwrap();
        let e = read(&path).unwrap_err();
        assert!(matches!(e, ReadError::TooLarge), "{e}");
        assert!(e.to_string().contains("larger than 64 MiB"), "{e}");
        f.set_len(3).unwrap();
        std::fs::write(&path, "x=1").unwrap();
        assert_eq!(read(&path).unwrap(), "x=1");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn an_endless_device_is_read_up_to_the_cap_only() {
        let e = read(Path::new("/dev/zero")).unwrap_err();
        assert!(matches!(e, ReadError::TooLarge), "{e}");
    }
}
