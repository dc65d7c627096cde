//! Reading and writing NumPy `.npy` files (format version 1.0, little-endian, C order): the way `tessel run`
//! takes inputs from and hands outputs to Python.

use tessel_tile::ScalarType;
use tessel_tile::eval::value::{Val, decode_le, decode_vals, encode_vals, round_float, to_bits, wrap_int};

/// An array: its element type, shape and raw little-endian elements (so every dtype round-trips bit for bit:
/// 64-bit integers over their whole range, NaN payloads included).
#[derive(Clone, Debug, PartialEq)]
pub struct Array {
    pub elem: ScalarType,
    pub shape: Vec<usize>,
    /// `shape.product()` elements of `elem`, `elem.bytes()` little-endian bytes each.
    pub data: Vec<u8>,
}

impl Array {
    /// An array of `values` rounded (floats) or wrapped (integers) to `elem`: a convenience for tests, exact
    /// for integers up to 2^53.
    pub fn from_f64(elem: ScalarType, shape: Vec<usize>, values: &[f64]) -> Array {
        let vals: Vec<Val> =
            values
                .iter()
                .map(|&v| {
                    if elem.is_float() { Val::Float(round_float(v, elem)) } else { Val::Int(wrap_int(v as i64, elem)) }
                })
                .collect();
        Array { elem, shape, data: encode_vals(&vals, elem) }
    }

    /// The elements exactly.
    pub fn vals(&self) -> Vec<Val> {
        decode_vals(&self.data, self.elem)
    }

    /// The elements as `f64` (unsigned integers by value; integers beyond 2^53 round).
    pub fn to_f64(&self) -> Vec<f64> {
        decode_le(&self.data, self.elem)
    }
}

fn descr(t: ScalarType) -> Option<&'static str> {
    Some(match t {
        ScalarType::I1 => "|b1",
        ScalarType::I8 => "|i1",
        ScalarType::U8 => "|u1",
        ScalarType::I16 => "<i2",
        ScalarType::U16 => "<u2",
        ScalarType::I32 => "<i4",
        ScalarType::U32 => "<u4",
        ScalarType::I64 => "<i8",
        ScalarType::U64 => "<u8",
        ScalarType::F16 => "<f2",
        ScalarType::F32 => "<f4",
        ScalarType::F64 => "<f8",
        // NumPy has no bf16/fp8: such arrays are written as f32.
        ScalarType::BF16 | ScalarType::F8E4M3 | ScalarType::F8E5M2 => return None,
    })
}

/// Encodes `a` as a `.npy` file (bf16/fp8 are widened to f32, which NumPy can read).
pub fn write(a: &Array) -> Vec<u8> {
    let (elem, d) = match descr(a.elem) {
        Some(d) => (a.elem, d),
        None => (ScalarType::F32, "<f4"),
    };
    let shape = match a.shape.as_slice() {
        [n] => format!("({n},)"),
        s => format!("({})", s.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(", ")),
    };
    let mut header = format!("{{'descr': '{d}', 'fortran_order': False, 'shape': {shape}, }}");
    // Magic (6) + version (2) + header length (2) + header, padded with spaces to a multiple of 64, ending in \n.
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    if elem == a.elem {
        out.extend_from_slice(&a.data);
    } else {
        // bf16 and fp8 widen to f32 exactly (a NaN keeps its payload).
        for v in a.vals() {
            out.extend_from_slice(&(to_bits(v, ScalarType::F32) as u32).to_le_bytes());
        }
    }
    out
}

/// Why bytes are not a `.npy` file tessel reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NpyError {
    Magic,
    Version(u8),
    /// A header of `says` bytes in a file with `has` after the preamble.
    TruncatedHeader {
        says: usize,
        has: usize,
    },
    HeaderNotText,
    /// A header without the field (`descr`, `fortran_order`, `shape`).
    NoField(&'static str),
    BadDescr,
    FortranOrder,
    /// A shape that is no tuple (`detail` says how).
    BadShape(&'static str),
    BadDimension(String),
    UnsupportedDtype(String),
    /// A shape whose byte size overflows 64 bits.
    TooLarge {
        shape: Vec<usize>,
        descr: String,
    },
    /// Data of `has` bytes where the shape needs `need`.
    DataSize {
        has: usize,
        shape: Vec<usize>,
        descr: String,
        need: usize,
    },
    NoMemory(usize),
}

fn show_shape(shape: &[usize]) -> String {
    format!("({})", shape.iter().map(usize::to_string).collect::<Vec<_>>().join(", "))
}

impl std::fmt::Display for NpyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NpyError::Magic => f.write_str("not a .npy file (bad magic)"),
            NpyError::Version(v) => write!(f, "unsupported .npy version {v}"),
            NpyError::TruncatedHeader { says, has } => {
                write!(f, "truncated .npy header: it says {says} bytes, the file has {has}")
            }
            NpyError::HeaderNotText => f.write_str("the .npy header is not text"),
            NpyError::NoField(key) => write!(f, "the .npy header has no '{key}'"),
            NpyError::BadDescr => f.write_str("bad descr in .npy header"),
            NpyError::FortranOrder => {
                f.write_str("Fortran-ordered arrays are not supported; save with np.ascontiguousarray")
            }
            NpyError::BadShape(detail) => write!(f, "bad shape in .npy header: {detail}"),
            NpyError::BadDimension(d) => write!(f, "bad dimension `{d}` in .npy shape"),
            NpyError::UnsupportedDtype(d) => write!(f, "unsupported .npy dtype `{d}`"),
            NpyError::TooLarge { shape, descr } => {
                write!(f, "the .npy shape {} of {descr} holds more than 2^64 bytes", show_shape(shape))
            }
            NpyError::DataSize { has, shape, descr, need } => write!(
                f,
                "the .npy file holds {has} bytes of data, its shape {} of {descr} needs {need}",
                show_shape(shape)
            ),
            NpyError::NoMemory(n) => write!(f, "no memory for the {n} bytes of the .npy data"),
        }
    }
}

impl std::error::Error for NpyError {}

/// Decodes a `.npy` file. Everything the header says is checked against the file: its dtype, a shape whose
/// element count and byte size fit in 64 bits, and data of exactly that size (never a panic, nor an array of
/// another size).
pub fn read(bytes: &[u8]) -> Result<Array, NpyError> {
    if bytes.len() < 10 || &bytes[..6] != b"\x93NUMPY" {
        return Err(NpyError::Magic);
    }
    let (header_len, start) = match bytes[6] {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10usize),
        2 | 3 if bytes.len() >= 12 => (u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize, 12),
        v => return Err(NpyError::Version(v)),
    };
    let header = bytes
        .get(start..start.saturating_add(header_len))
        .ok_or(NpyError::TruncatedHeader { says: header_len, has: bytes.len() - start })?;
    let header = std::str::from_utf8(header).map_err(|_| NpyError::HeaderNotText)?;
    let field = |key: &'static str| -> Result<&str, NpyError> {
        let at = header.find(&format!("'{key}'")).ok_or(NpyError::NoField(key))?;
        Ok(header[at + key.len() + 2..].trim_start_matches([':', ' ']))
    };
    let d = field("descr")?.strip_prefix('\'').ok_or(NpyError::BadDescr)?;
    let d = &d[..d.find('\'').ok_or(NpyError::BadDescr)?];
    if field("fortran_order")?.starts_with("True") {
        return Err(NpyError::FortranOrder);
    }
    let shape_text = field("shape")?.strip_prefix('(').ok_or(NpyError::BadShape("expected a tuple"))?;
    let shape_text = &shape_text[..shape_text.find(')').ok_or(NpyError::BadShape("no `)`"))?];
    let shape: Vec<usize> = shape_text
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().map_err(|_| NpyError::BadDimension(s.into())))
        .collect::<Result<_, _>>()?;
    let elem = ScalarType::ALL
        .into_iter()
        .find(|&t| descr(t) == Some(d) || (d == "<b1" && t == ScalarType::I1))
        .ok_or_else(|| NpyError::UnsupportedDtype(d.into()))?;
    let size = elem.bytes() as usize;
    let need = shape
        .iter()
        .try_fold(size, |acc, &dim| acc.checked_mul(dim))
        .ok_or_else(|| NpyError::TooLarge { shape: shape.clone(), descr: d.into() })?;
    let data = &bytes[start + header_len..];
    if data.len() != need {
        return Err(NpyError::DataSize { has: data.len(), shape, descr: d.into(), need });
    }
    let mut copy = Vec::new();
    copy.try_reserve_exact(need).map_err(|_| NpyError::NoMemory(need))?;
    copy.extend_from_slice(data);
    Ok(Array { elem, shape, data: copy })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_every_numpy_dtype() {
        for elem in [
            ScalarType::F16,
            ScalarType::F32,
            ScalarType::F64,
            ScalarType::I8,
            ScalarType::I32,
            ScalarType::U16,
            ScalarType::I64,
        ] {
            let values: [f64; 6] = [0.0, 1.0, -2.0, 3.0, 100.0, -7.0];
            let values: Vec<f64> = values.iter().map(|v| if elem.is_unsigned_int() { v.abs() } else { *v }).collect();
            let a = Array::from_f64(elem, vec![2, 3], &values);
            let bytes = write(&a);
            assert_eq!((10 + u16::from_le_bytes([bytes[8], bytes[9]]) as usize) % 64, 0, "header is 64-byte aligned");
            let back = read(&bytes).unwrap();
            assert_eq!(back, a, "{elem}");
            assert_eq!(back.to_f64(), values, "{elem}");
        }
    }

    /// 64-bit integers at the ends of their ranges and NaNs with payloads come back bit for bit.
    #[test]
    fn extreme_values_round_trip_exactly() {
        let i64s: Vec<u8> =
            [i64::MAX, i64::MIN, i64::MAX - 1, (1 << 53) + 1].iter().flat_map(|v| v.to_le_bytes()).collect();
        let u64s: Vec<u8> = [u64::MAX, u64::MAX - 1, 1 << 63].iter().flat_map(|v| v.to_le_bytes()).collect();
        let f32s: Vec<u8> = [0x7f80_0001u32, 0xffa0_0000, 0x7fc0_1234].iter().flat_map(|v| v.to_le_bytes()).collect();
        for (elem, data) in [(ScalarType::I64, i64s), (ScalarType::U64, u64s), (ScalarType::F32, f32s)] {
            let a = Array { elem, shape: vec![data.len() / elem.bytes() as usize], data };
            assert_eq!(read(&write(&a)).unwrap(), a, "{elem}");
        }
        // bf16 is saved as f32: the same value, NaN payload included.
        let a = Array { elem: ScalarType::BF16, shape: vec![2], data: vec![0x81, 0x7f, 0x80, 0x3f] };
        let back = read(&write(&a)).unwrap();
        assert_eq!(back.elem, ScalarType::F32);
        assert_eq!(back.data, [0x7f810000u32.to_le_bytes(), 0x3f800000u32.to_le_bytes()].concat());
    }

    #[test]
    fn rejects_what_it_cannot_read() {
        assert_eq!(read(b"hello"), Err(NpyError::Magic));
        let mut bytes = write(&Array::from_f64(ScalarType::F32, vec![4], &[1.0; 4]));
        bytes.truncate(bytes.len() - 4);
        assert_eq!(
            read(&bytes).unwrap_err().to_string(),
            "the .npy file holds 12 bytes of data, its shape (4) of <f4 needs 16"
        );
    }

    /// The header of a `.npy` file of `shape` (as written), `descr` and `data`.
    fn file(descr: &str, shape: &str, data: &[u8]) -> Vec<u8> {
        let header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}\n");
        let mut out = b"\x93NUMPY\x01\x00".to_vec();
        out.extend_from_slice(&(header.len() as u16).to_le_bytes());
        out.extend_from_slice(header.as_bytes());
        out.extend_from_slice(data);
        out
    }

    /// A shape whose element count overflows 64 bits (4611686018427387908 x 4 is 16 modulo 2^64) used to load as
    /// a 16-element array (and be written back as `(16,)`); it is refused, as is data longer or shorter than the
    /// shape, and a header that is not what NumPy writes never panics.
    #[test]
    fn the_header_must_agree_with_the_data() {
        let sixteen = [0u8; 64];
        let e = read(&file("<f4", "(4611686018427387908, 4)", &sixteen)).unwrap_err();
        assert_eq!(e.to_string(), "the .npy shape (4611686018427387908, 4) of <f4 holds more than 2^64 bytes");
        let e = read(&file("<f4", "(4611686018427387904,)", &sixteen)).unwrap_err();
        assert!(matches!(e, NpyError::TooLarge { .. }), "{e}");
        assert!(matches!(read(&file("<f4", "(18446744073709551616,)", &sixteen)), Err(NpyError::BadDimension(_))));
        assert_eq!(read(&file("<f4", "(4, 4)", &sixteen)).unwrap().shape, vec![4, 4]);
        let e = read(&file("<f4", "(15,)", &sixteen)).unwrap_err();
        assert_eq!(e.to_string(), "the .npy file holds 64 bytes of data, its shape (15) of <f4 needs 60");
        assert_eq!(read(&file(">f4", "(16,)", &sixteen)).unwrap_err().to_string(), "unsupported .npy dtype `>f4`");
        assert_eq!(read(&file("<c8", "(8,)", &sixteen)), Err(NpyError::UnsupportedDtype("<c8".into())));
        for bad in ["", "é", "[16]", "(16", "(-1,)", "(1.5,)"] {
            assert!(read(&file("<f4", bad, &sixteen)).is_err(), "shape `{bad}`");
        }
        let mut long = file("<f4", "(16,)", &sixteen);
        long[8] = 0xff;
        assert!(matches!(read(&long), Err(NpyError::TruncatedHeader { .. })));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: tessel_tile::testing::campaign_cases(256), ..Default::default() })]

        /// Any header text and data length: an array whose data is exactly its shape's size, or an error.
        #[test]
        fn any_header_reads_or_fails_cleanly(
            descr in "[<>|]?[a-z][0-9]{0,2}|<f4|<i8|\\|b1",
            dims in proptest::collection::vec(
                proptest::prop_oneof![0u64..20, proptest::prelude::any::<u64>(), proptest::prelude::Just(1u64 << 62)],
                0..4,
            ),
            junk in "[ -~]{0,12}",
            data_len in 0usize..200,
        ) {
            let shape = format!("({}{junk})", dims.iter().map(u64::to_string).collect::<Vec<_>>().join(", "));
            let bytes = file(&descr, &shape, &vec![0u8; data_len]);
            if let Ok(a) = read(&bytes) {
                let n: usize = a.shape.iter().product();
                proptest::prop_assert_eq!(a.data.len(), n * a.elem.bytes() as usize);
                proptest::prop_assert_eq!(a.data.len(), data_len);
            }
            // Arbitrary bytes after the magic never panic either.
            let mut raw = b"\x93NUMPY".to_vec();
            raw.extend_from_slice(shape.as_bytes());
            let _ = read(&raw);
        }
    }
}
