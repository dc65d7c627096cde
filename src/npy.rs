//! Reading and writing NumPy `.npy` files (format version 1.0, little-endian, C order): the way `tessel run`
//! takes inputs from and hands outputs to Python.

use tessel_tile::ScalarType;

/// A 1-D view of an array: its element type and values as `f64` (integers up to 2^53 are exact).
#[derive(Clone, Debug, PartialEq)]
pub struct Array {
    pub elem: ScalarType,
    pub shape: Vec<usize>,
    pub values: Vec<f64>,
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
    for &v in &a.values {
        match elem {
            ScalarType::F16 => out.extend_from_slice(&half::f16::from_f64(v).to_le_bytes()),
            ScalarType::F32 => out.extend_from_slice(&(v as f32).to_le_bytes()),
            ScalarType::F64 => out.extend_from_slice(&v.to_le_bytes()),
            t => out.extend_from_slice(&(v as i64).to_le_bytes()[..t.bytes() as usize]),
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
    let values = (0..n)
        .map(|i| {
            let b = &data[i * size..(i + 1) * size];
            match elem {
                ScalarType::F16 => half::f16::from_le_bytes([b[0], b[1]]).to_f64(),
                ScalarType::F32 => f32::from_le_bytes(b.try_into().unwrap()) as f64,
                ScalarType::F64 => f64::from_le_bytes(b.try_into().unwrap()),
                t => {
                    let mut raw = [0u8; 8];
                    raw[..size].copy_from_slice(b);
                    let v = u64::from_le_bytes(raw);
                    if t.is_signed_int() {
                        let shift = 64 - 8 * size as u32;
                        ((v << shift) as i64 >> shift) as f64
                    } else {
                        v as f64
                    }
                }
            }
        })
        .collect();
    Ok(Array { elem, shape, values })
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
            let a = Array { elem, shape: vec![2, 3], values: vec![0.0, 1.0, -2.0, 3.0, 100.0, -7.0] };
            let a = if elem.is_unsigned_int() {
                Array { values: a.values.iter().map(|v| v.abs()).collect(), ..a }
            } else {
                a
            };
            let bytes = write(&a);
            assert_eq!((10 + u16::from_le_bytes([bytes[8], bytes[9]]) as usize) % 64, 0, "header is 64-byte aligned");
            assert_eq!(read(&bytes).unwrap(), a, "{elem}");
        }
    }

    #[test]
    fn rejects_what_it_cannot_read() {
        assert!(read(b"hello").unwrap_err().contains("magic"));
        let mut bytes = write(&Array { elem: ScalarType::F32, shape: vec![4], values: vec![1.0; 4] });
        bytes.truncate(bytes.len() - 4);
        assert!(read(&bytes).unwrap_err().contains("shape needs 16"));
    }
}
