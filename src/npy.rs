//! Reading and writing NumPy `.npy` files (format version 1.0, little-endian, C order): the way `tessel run`
//! takes inputs from and hands outputs to Python.

use tessel_tile::ScalarType;
use tessel_tile::interp::value::{Val, decode_le, decode_vals, encode_vals, round_float, to_bits, wrap_int};

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

/// Decodes a `.npy` file.
pub fn read(bytes: &[u8]) -> Result<Array, String> {
    if bytes.len() < 10 || &bytes[..6] != b"\x93NUMPY" {
        return Err("not a .npy file (bad magic)".into());
    }
    let (header_len, start) = match bytes[6] {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        2 | 3 if bytes.len() >= 12 => (u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize, 12),
        v => return Err(format!("unsupported .npy version {v}")),
    };
    let header = std::str::from_utf8(bytes.get(start..start + header_len).ok_or("truncated .npy header")?)
        .map_err(|_| "the .npy header is not text")?;
    let field = |key: &str| -> Result<&str, String> {
        let at = header.find(&format!("'{key}'")).ok_or(format!("the .npy header has no '{key}'"))?;
        Ok(header[at + key.len() + 2..].trim_start_matches([':', ' ']))
    };
    let d = field("descr")?.trim_start_matches('\'');
    let d = &d[..d.find('\'').ok_or("bad descr in .npy header")?];
    if field("fortran_order")?.starts_with("True") {
        return Err("Fortran-ordered arrays are not supported; save with np.ascontiguousarray".into());
    }
    let shape_text = field("shape")?;
    let shape_text = &shape_text[1..shape_text.find(')').ok_or("bad shape in .npy header")?];
    let shape: Vec<usize> = shape_text
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().map_err(|_| format!("bad dimension `{s}` in .npy shape")))
        .collect::<Result<_, _>>()?;
    let elem = ScalarType::ALL
        .into_iter()
        .find(|&t| descr(t) == Some(d) || (d == "<b1" && t == ScalarType::I1))
        .ok_or(format!("unsupported .npy dtype `{d}`"))?;
    let n: usize = shape.iter().product();
    let size = elem.bytes() as usize;
    let data = bytes.get(start + header_len..).ok_or("truncated .npy data")?;
    if data.len() < n * size {
        return Err(format!("the .npy file holds {} bytes of data, its shape needs {}", data.len(), n * size));
    }
    Ok(Array { elem, shape, data: data[..n * size].to_vec() })
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
        assert!(read(b"hello").unwrap_err().contains("magic"));
        let mut bytes = write(&Array::from_f64(ScalarType::F32, vec![4], &[1.0; 4]));
        bytes.truncate(bytes.len() - 4);
        assert!(read(&bytes).unwrap_err().contains("shape needs 16"));
    }
}
