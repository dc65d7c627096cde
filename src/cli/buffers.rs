//! The contents of generated and loaded `--arg` buffers, built directly as little-endian elements of the
//! buffer's dtype: nothing passes through `f64` on the way, so 64-bit integers keep their full range and
//! `fill:0x...` can write any bit pattern (signalling NaNs included).

use tessel_interp::memory::try_zeroed;
use tessel_tile::ScalarType;
use tessel_tile::eval::value::{Val, convert, from_bits, int_limits, int_to_float, round_float, to_bits};
use tessel_tile::types::Elem;

use super::CliError;
use crate::npy;

/// How a buffer `--arg` is filled.
pub(super) enum BufferInit {
    /// Floats: uniform in [-1, 1). Integers: uniform over every value of the type (all bit patterns).
    Rand,
    /// Floats: standard normal. Integers: `round(σ·N(0, 1))` with σ = 100 (16 for 8-bit types), clamped to
    /// the type (its absolute value for unsigned types).
    Randn,
    /// Every element this value, written as a number (`-3`, `1.5e-40`, `inf`, `nan`, `18446744073709551615`)
    /// or as the element's bits in hex (`0x7fa00000`).
    Fill(String),
    /// 0, 1, 2, ...
    Arange,
    /// A `.npy` file's array (converted as `.to(dtype)` would if the buffer's dtype differs).
    Data(npy::Array),
}

/// Checks a `fill:VALUE` early, before the buffer's dtype is known.
pub(super) fn check_fill(v: &str) -> Result<(), CliError> {
    let ok = v.strip_prefix("0x").map_or_else(|| v.parse::<f64>().is_ok(), |h| u64::from_str_radix(h, 16).is_ok());
    if ok { Ok(()) } else { Err(CliError::Usage(format!("fill value `{v}` is not a number or 0x-bits"))) }
}

/// The value `v` of a `fill:` for type `t`, exactly: integers are parsed as integers (and must fit), floats
/// are rounded once to `t`, hex gives the bits.
fn fill_value(v: &str, t: ScalarType) -> Result<Val, CliError> {
    let bad = |why: &str| CliError::Usage(format!("fill value `{v}` for {t}: {why}"));
    if let Some(h) = v.strip_prefix("0x") {
        let bits = u64::from_str_radix(h, 16).map_err(|_| bad("bad hex"))?;
        if t.bits() < 64 && bits >> (t.bytes() * 8) != 0 {
            return Err(bad("more bits than the type has"));
        }
        return Ok(from_bits(bits, t));
    }
    if t.is_float() {
        return Ok(Val::Float(round_float(v.parse::<f64>().map_err(|_| bad("not a number"))?, t)));
    }
    let i: i128 = match v.parse::<i128>() {
        Ok(i) => i,
        // An integral float (`1e3`, `-0.0`) is that integer.
        Err(_) => match v.parse::<f64>() {
            Ok(x) if x.fract() == 0.0 && x.abs() < 1e38 => x as i128,
            _ => return Err(bad("not an integer")),
        },
    };
    let (lo, hi) = int_limits(t);
    if i < lo || i > hi {
        return Err(bad(&format!("outside [{lo}, {hi}]")));
    }
    Ok(Val::Int(i as i64))
}

/// Element `k` of a splitmix64 stream: counter-based, so any element is computed alone (and buffers are filled
/// in parallel with the same values as one pass in order).
fn splitmix(seed: u64, k: usize) -> u64 {
    const GOLDEN: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut z = seed.wrapping_add(GOLDEN.wrapping_mul(k as u64 + 2));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Deterministic uniform [-1, 1): element `k`.
fn uniform(seed: u64, k: usize) -> f64 {
    (splitmix(seed, k) >> 11) as f64 / (1u64 << 52) as f64 - 1.0
}

/// Deterministic standard normal (Box–Muller over uniforms `2i` and `2i + 1`): element `i`.
fn normal(seed: u64, i: usize) -> f64 {
    let (u, v) = (uniform(seed, 2 * i), uniform(seed, 2 * i + 1));
    (-2.0 * (0.5 * (u + 1.0)).max(1e-300).ln()).sqrt() * (std::f64::consts::PI * v).cos()
}

/// `len` elements of type `t`, element `i` being `at(i)`, as little-endian bytes, filled in parallel chunks; an
/// error instead of an abort when there is no memory for them.
fn generate(len: usize, t: ScalarType, at: impl Fn(usize) -> Val + Sync) -> Result<Vec<u8>, CliError> {
    use rayon::prelude::*;
    const CHUNK: usize = 1 << 16;
    let n = t.bytes() as usize;
    let size = len
        .checked_mul(n)
        .ok_or_else(|| CliError::Usage(format!("{len} elements of {} are more than 2^64 bytes", t.triton_name())))?;
    let mut out = try_zeroed(size).map_err(|e| CliError::Usage(e.to_string()))?;
    out.par_chunks_mut(CHUNK * n).enumerate().for_each(|(c, bytes)| {
        for (j, e) in bytes.chunks_exact_mut(n).enumerate() {
            e.copy_from_slice(&to_bits(at(c * CHUNK + j), t).to_le_bytes()[..n]);
        }
    });
    Ok(out)
}

/// The `len` elements of a buffer of type `t` filled as `init` says, as little-endian bytes.
pub(super) fn bytes(init: &BufferInit, t: ScalarType, len: usize, seed: u64) -> Result<Vec<u8>, CliError> {
    match init {
        BufferInit::Rand if t.is_float() => generate(len, t, |i| Val::Float(round_float(uniform(seed, i), t))),
        BufferInit::Rand => generate(len, t, |i| from_bits(splitmix(seed, i), t)),
        BufferInit::Randn if t.is_float() => generate(len, t, |i| Val::Float(round_float(normal(seed, i), t))),
        BufferInit::Randn => {
            let sigma = if t.bits() <= 8 { 16.0 } else { 100.0 };
            let (lo, hi) = int_limits(t);
            generate(len, t, |i| {
                let r = (sigma * normal(seed, i)).round() as i128;
                let r = if t.is_unsigned_int() || t == ScalarType::I1 { r.abs() } else { r };
                Val::Int(r.clamp(lo, hi) as i64)
            })
        }
        BufferInit::Fill(v) => {
            let v = fill_value(v, t)?;
            generate(len, t, |_| v)
        }
        BufferInit::Arange if t.is_float() => generate(len, t, |i| Val::Float(int_to_float(i as i128, t))),
        BufferInit::Arange => generate(len, t, |i| from_bits(i as u64, t)),
        BufferInit::Data(a) if a.elem == t => {
            let mut copy = try_zeroed(a.data.len()).map_err(|e| CliError::Usage(e.to_string()))?;
            copy.copy_from_slice(&a.data);
            Ok(copy)
        }
        BufferInit::Data(a) => {
            // Element by element: no list of every value on the way.
            let n = a.elem.bytes() as usize;
            generate(len.min(a.data.len() / n), t, |i| {
                let mut raw = [0u8; 8];
                raw[..n].copy_from_slice(&a.data[i * n..(i + 1) * n]);
                let v = from_bits(u64::from_le_bytes(raw), a.elem);
                match v {
                    // A NaN keeps its payload and quiet bit (what fits of them) in another float type, so that a
                    // bf16 NaN passed as f32 (NumPy has no bf16) arrives with its own bits. An infinity stays one:
                    // an e5m2 infinity passed as f32 is the e5m2 infinity, not the saturated 57344 of a computed
                    // cast.
                    Val::Float(x) if (x.is_nan() || x.is_infinite()) && t.is_float() => v,
                    _ => convert(v, Elem::Scalar(a.elem), Elem::Scalar(t)),
                }
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tessel_tile::eval::value::decode_vals;

    fn vals(init: BufferInit, t: ScalarType, len: usize) -> Vec<Val> {
        decode_vals(&bytes(&init, t, len, 7).unwrap(), t)
    }

    #[test]
    fn fills_are_exact_in_every_type() {
        let fill = |v: &str, t| vals(BufferInit::Fill(v.into()), t, 2);
        assert_eq!(fill("18446744073709551615", ScalarType::U64), vec![Val::Int(-1); 2]);
        assert_eq!(fill("-9223372036854775808", ScalarType::I64), vec![Val::Int(i64::MIN); 2]);
        assert_eq!(fill("9007199254740993", ScalarType::I64), vec![Val::Int((1 << 53) + 1); 2]);
        assert_eq!(fill("0x7fa00001", ScalarType::F32)[0].as_f64().to_bits(), 0x7ff4_0000_2000_0000);
        let raw = bytes(&BufferInit::Fill("0x7fa00001".into()), ScalarType::F32, 1, 0).unwrap();
        assert_eq!(raw, 0x7fa0_0001u32.to_le_bytes());
        assert_eq!(fill("1e-45", ScalarType::F32)[0].as_f64(), f32::from_bits(1) as f64);
        assert!(bytes(&BufferInit::Fill("300".into()), ScalarType::I8, 1, 0).is_err());
        assert!(bytes(&BufferInit::Fill("-1".into()), ScalarType::U32, 1, 0).is_err());
        assert!(bytes(&BufferInit::Fill("0x1ff".into()), ScalarType::U8, 1, 0).is_err());
        assert!(check_fill("abc").is_err() && check_fill("nan").is_ok() && check_fill("0xff").is_ok());
    }

    #[test]
    fn random_integers_cover_their_type() {
        let r = vals(BufferInit::Rand, ScalarType::I64, 4096);
        // Uniform over all 2^64 values: about half negative, and many beyond 2^53 in magnitude.
        let neg = r.iter().filter(|v| v.as_i64() < 0).count();
        let wide = r.iter().filter(|v| v.as_i64().unsigned_abs() > 1 << 53).count();
        assert!((1800..2300).contains(&neg), "{neg} negative of 4096");
        assert!(wide > 4000, "{wide} beyond 2^53");
        let r = vals(BufferInit::Rand, ScalarType::U8, 4096);
        assert!(r.iter().any(|v| v.as_i64() > 200) && r.iter().any(|v| v.as_i64() < 50));
        let n = vals(BufferInit::Randn, ScalarType::I32, 4096);
        let mean_abs = n.iter().map(|v| v.as_i64().abs() as f64).sum::<f64>() / 4096.0;
        // E|N(0, 100²)| = 100·sqrt(2/π) ≈ 79.8.
        assert!((70.0..90.0).contains(&mean_abs), "{mean_abs}");
        assert!(n.iter().any(|v| v.as_i64() != n[0].as_i64()));
        let a = vals(BufferInit::Arange, ScalarType::U64, 5);
        assert_eq!(a, (0..5).map(Val::Int).collect::<Vec<_>>());
    }

    #[test]
    fn parallel_generation_is_the_sequential_stream_across_chunks() {
        // The splitmix64 stream as one pass in order (how buffers were filled before they were filled in
        // parallel chunks of 2^16 elements): every element, chunk boundaries included, must be the same.
        let (seed, n) = (7u64, 3 * (1 << 16) + 5);
        let mut s = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let sequential: Vec<Val> = (0..n)
            .map(|_| {
                s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
                let mut z = s;
                z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
                from_bits(z ^ (z >> 31), ScalarType::U64)
            })
            .collect();
        assert_eq!(vals(BufferInit::Rand, ScalarType::U64, n), sequential);
        // Normals pair uniforms 2i and 2i + 1 of the same stream.
        let u = |k: usize| (splitmix(seed, k) >> 11) as f64 / (1u64 << 52) as f64 - 1.0;
        let i = (1 << 16) - 1;
        let want =
            (-2.0 * (0.5 * (u(2 * i) + 1.0)).max(1e-300).ln()).sqrt() * (std::f64::consts::PI * u(2 * i + 1)).cos();
        assert_eq!(vals(BufferInit::Randn, ScalarType::F64, i + 2)[i], Val::Float(want));
    }

    #[test]
    fn npy_data_converts_like_a_cast_when_the_dtype_differs() {
        let a = npy::Array {
            elem: ScalarType::I64,
            shape: vec![2],
            data: [i64::MAX, -3].iter().flat_map(|v| v.to_le_bytes()).collect(),
        };
        assert_eq!(bytes(&BufferInit::Data(a.clone()), ScalarType::I64, 2, 0).unwrap(), a.data);
        let f = decode_vals(&bytes(&BufferInit::Data(a), ScalarType::F32, 2, 0).unwrap(), ScalarType::F32);
        assert_eq!(f, vec![Val::Float(2f64.powi(63)), Val::Float(-3.0)]);
        // bf16 values (a signalling NaN included) given as f32 arrive bit for bit.
        let bits: [u32; 2] = [0x7f81_0000, 0xbfc0_0000];
        let a = npy::Array {
            elem: ScalarType::F32,
            shape: vec![2],
            data: bits.iter().flat_map(|b| b.to_le_bytes()).collect(),
        };
        assert_eq!(bytes(&BufferInit::Data(a), ScalarType::BF16, 2, 0).unwrap(), [0x81, 0x7f, 0xc0, 0xbf]);
        // e5m2 infinities given as f32 stay infinities (0x7c, 0xfc), not the saturated 57344 (0x7b) of a cast.
        let bits: [u32; 3] = [0x7f80_0000, 0xff80_0000, 0x4760_0000];
        let a = npy::Array {
            elem: ScalarType::F32,
            shape: vec![3],
            data: bits.iter().flat_map(|b| b.to_le_bytes()).collect(),
        };
        assert_eq!(bytes(&BufferInit::Data(a), ScalarType::F8E5M2, 3, 0).unwrap(), [0x7c, 0xfc, 0x7b]);
    }
}
