//! What the cache's files hold, and the checks a file must pass before its contents are used.
//!
//! `kernel.meta` is lines of `field=value`: the format's name, the entry's key, the kernel's launch facts, the
//! length and SHA-256 of `kernel.ptx`, and last a `check=` line, the SHA-256 of every byte before it. A cubin
//! file is the cubin followed by a 56-byte trailer: a magic, the cubin's length (u64, little-endian) and the
//! SHA-256 of the entry's key, the device tag and the cubin. A file that was truncated, flipped, copied from
//! another entry or device, or written by another format fails these checks, and
//! the kernel it describes must also be one this compiler could have produced (warps, shared memory, an entry
//! point of the name given), so that nothing read back launches differently from what was stored.

use sha2::{Digest, Sha256};

use tessel_codegen::{Kernel, Target, TensorMapArg};

/// The first line of every `kernel.meta` this format writes.
const FORMAT: &str = "format=tessel-cache-3";

/// The fields of `kernel.meta` between the format line and the `check=` line, in the order they are written.
const FIELDS: [&str; 10] = [
    "key",
    "name",
    "num_warps",
    "shared_bytes",
    "arch",
    "tensor_maps",
    "scratch_bytes",
    "num_ctas",
    "ptx_bytes",
    "ptx_sha256",
];

/// Ends every cubin file: what precedes the length and hash of the cubin.
const CUBIN_MAGIC: &[u8; 16] = b"\ntessel-cubin-2\n";
const CUBIN_TRAILER: usize = CUBIN_MAGIC.len() + 8 + 32;

fn sha256(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(bytes).into()
}

/// SHA-256 over each part, length-prefixed so that no two part lists collide by concatenation.
fn sha256_parts(parts: &[&[u8]]) -> [u8; 32] {
    let mut h = Sha256::new();
    for part in parts {
        h.update((part.len() as u64).to_le_bytes());
        h.update(part);
    }
    h.finalize().into()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `base:elem:BxB:zero|nan[:im2colR][:layout=SPELLING]` (`base` is `kernel` for a descriptor the kernel makes):
/// a tensor-map parameter as `kernel.meta` stores it (a layout's spelling has no `:` or `;`).
fn map_to_text(m: &TensorMapArg) -> String {
    let block: Vec<String> = m.block_shape.iter().map(u32::to_string).collect();
    let padding = if m.nan_padding { "nan" } else { "zero" };
    let im2col = m.im2col_rank.map_or(String::new(), |r| format!(":im2col{r}"));
    let layout = m.layout.as_ref().map_or(String::new(), |l| format!(":layout={l}"));
    let base = m.base_arg.map_or_else(|| "kernel".to_string(), |b| b.to_string());
    format!("{base}:{}:{}:{padding}{im2col}{layout}", m.elem, block.join("x"))
}

/// The inverse of [`map_to_text`].
fn map_from_text(s: &str) -> Option<TensorMapArg> {
    let mut parts = s.split(':');
    let base_arg = match parts.next()? {
        "kernel" => None,
        b => Some(b.parse().ok()?),
    };
    let elem = tessel_tile::ScalarType::from_name(parts.next()?)?;
    let block_shape = parts.next()?.split('x').map(|d| d.parse().ok()).collect::<Option<Vec<u32>>>()?;
    let nan_padding = match parts.next()? {
        "nan" => true,
        "zero" => false,
        _ => return None,
    };
    let (mut im2col_rank, mut layout) = (None, None);
    for part in parts {
        if let Some(r) = part.strip_prefix("im2col") {
            im2col_rank = Some(r.parse().ok()?);
        } else {
            match tessel_layouts::expr::parse_layout(part.strip_prefix("layout=")?).ok()? {
                tessel_layouts::AnyLayout::Shared(tessel_layouts::SharedLayout::Nvmma(l)) => layout = Some(l),
                _ => return None,
            }
        }
    }
    Some(TensorMapArg { base_arg, elem, block_shape, nan_padding, im2col_rank, layout })
}

/// The text of `kernel.meta` for `kernel` stored under `key`.
pub(super) fn encode_meta(key: &str, kernel: &Kernel) -> String {
    let maps = kernel.tensor_maps.iter().map(map_to_text).collect::<Vec<_>>().join(";");
    let values = [
        key.to_string(),
        kernel.name.clone(),
        kernel.num_warps.to_string(),
        kernel.shared_bytes.to_string(),
        kernel.target.name().to_string(),
        maps,
        kernel.scratch_bytes.to_string(),
        kernel.num_ctas.to_string(),
        kernel.ptx.len().to_string(),
        hex(&sha256(kernel.ptx.as_bytes())),
    ];
    let mut text = format!("{FORMAT}\n");
    for (field, value) in FIELDS.iter().zip(values) {
        text += &format!("{field}={value}\n");
    }
    let check = hex(&sha256(text.as_bytes()));
    text + &format!("check={check}\n")
}

/// The launch facts of a `kernel.meta` and what it says of its PTX.
pub(super) struct Meta {
    /// The kernel with an empty `ptx`, which [`Meta::kernel`] fills in.
    kernel: Kernel,
    ptx_bytes: usize,
    ptx_sha256: String,
}

/// The contents of a `kernel.meta`, when it is whole (its `check=` line matches), of this format, written for
/// `key`, and describes a kernel this compiler could have produced.
pub(super) fn decode_meta(key: &str, bytes: &[u8]) -> Option<Meta> {
    let text = std::str::from_utf8(bytes).ok()?;
    let body_end = text.strip_suffix('\n')?.rfind('\n')? + 1;
    let (body, check) = text.split_at(body_end);
    if check != format!("check={}\n", hex(&sha256(body.as_bytes()))) {
        return None;
    }
    let mut lines = body.lines();
    if lines.next()? != FORMAT {
        return None;
    }
    let mut values = Vec::with_capacity(FIELDS.len());
    for field in FIELDS {
        values.push(lines.next()?.strip_prefix(field)?.strip_prefix('=')?);
    }
    if lines.next().is_some() {
        return None;
    }
    let [written_for, name, num_warps, shared_bytes, arch, maps, scratch_bytes, num_ctas, ptx_bytes, ptx_sha256] =
        values[..]
    else {
        return None;
    };
    if written_for != key {
        return None;
    }
    let kernel = Kernel {
        ptx: String::new(),
        name: name.to_string(),
        num_warps: num_warps.parse().ok()?,
        shared_bytes: shared_bytes.parse().ok()?,
        target: Target::parse(arch)?,
        tensor_maps: match maps {
            "" => Vec::new(),
            maps => maps.split(';').map(map_from_text).collect::<Option<_>>()?,
        },
        scratch_bytes: scratch_bytes.parse().ok()?,
        num_ctas: num_ctas.parse().ok()?,
    };
    let plausible = is_identifier(&kernel.name)
        && (1..=32).contains(&kernel.num_warps)
        && kernel.num_ctas.is_power_of_two()
        && kernel.num_ctas <= 16
        && kernel.shared_bytes <= kernel.target.smem_per_block()
        && ptx_sha256.len() == 64;
    plausible.then_some(Meta { kernel, ptx_bytes: ptx_bytes.parse().ok()?, ptx_sha256: ptx_sha256.to_string() })
}

/// A PTX identifier (`[A-Za-z_$%][A-Za-z0-9_$]*`), as an entry point's name must be.
fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || "_$%".contains(c))
        && chars.all(|c| c.is_ascii_alphanumeric() || "_$".contains(c))
}

impl Meta {
    /// The kernel, given the bytes of its `kernel.ptx`: `None` unless they are the PTX this metadata was written
    /// with (length and hash) and declare the entry point and target it names.
    pub(super) fn kernel(self, ptx: Vec<u8>) -> Option<Kernel> {
        if ptx.len() != self.ptx_bytes || hex(&sha256(&ptx)) != self.ptx_sha256 {
            return None;
        }
        let ptx = String::from_utf8(ptx).ok()?;
        let k = self.kernel;
        let cluster = k.num_ctas == 1 || ptx.contains(&format!(".reqnctapercluster {}, 1, 1", k.num_ctas));
        let declares = ptx.contains(&format!(".entry {}(", k.name))
            && ptx.lines().any(|l| l.trim() == format!(".target {}", k.target.name()))
            && cluster;
        declares.then_some(Kernel { ptx, ..k })
    }
}

/// The bytes of the cubin file of `device` under `key` holding `cubin`.
pub(super) fn encode_cubin(key: &str, device: &str, cubin: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(cubin.len() + CUBIN_TRAILER);
    out.extend_from_slice(cubin);
    out.extend_from_slice(CUBIN_MAGIC);
    out.extend_from_slice(&(cubin.len() as u64).to_le_bytes());
    out.extend_from_slice(&sha256_parts(&[key.as_bytes(), device.as_bytes(), cubin]));
    out
}

/// The cubin the cubin file of `device` under `key` holds: an ELF image whose length and hash are the
/// trailer's.
pub(super) fn decode_cubin(key: &str, device: &str, mut file: Vec<u8>) -> Option<Vec<u8>> {
    let n = file.len().checked_sub(CUBIN_TRAILER)?;
    let (cubin, trailer) = file.split_at(n);
    let (magic, rest) = trailer.split_at(CUBIN_MAGIC.len());
    let (len, hash) = rest.split_at(8);
    let whole = magic == CUBIN_MAGIC
        && u64::from_le_bytes(len.try_into().ok()?) == n as u64
        && hash == sha256_parts(&[key.as_bytes(), device.as_bytes(), cubin])
        && cubin.starts_with(b"\x7fELF");
    whole.then(|| {
        file.truncate(n);
        file
    })
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// A kernel as codegen makes them, with a tensor map.
    pub(in crate::cache) fn kernel() -> Kernel {
        Kernel {
            ptx: ".version 8.0\n.target sm_90a\n.address_size 64\n\n.visible .entry k(\n)\n.reqnctapercluster 2, 1, 1\n{\n    \
                  ret;\n}\n"
                .to_string(),
            name: "k".to_string(),
            num_warps: 8,
            shared_bytes: 4096,
            target: Target::Sm90a,
            tensor_maps: vec![TensorMapArg {
                base_arg: Some(2),
                elem: tessel_tile::ScalarType::F16,
                block_shape: vec![64, 128],
                nan_padding: true,
                im2col_rank: None,
                layout: None,
            }],
            scratch_bytes: 0,
            num_ctas: 2,
        }
    }

    /// Everything a kernel says, to compare two.
    pub(in crate::cache) type Facts = (String, String, u32, u32, Target, Vec<TensorMapArg>, u32, u32);

    pub(in crate::cache) fn facts(k: &Kernel) -> Facts {
        let k = k.clone();
        (k.ptx, k.name, k.num_warps, k.shared_bytes, k.target, k.tensor_maps, k.scratch_bytes, k.num_ctas)
    }

    /// `kernel.meta` with one field's value replaced, its `check=` line recomputed: a file that is whole but
    /// says something wrong.
    fn resealed(field: &str, value: &str) -> String {
        let text: String = encode_meta("K", &kernel())
            .lines()
            .map(|l| match l.split_once('=') {
                Some((f, _)) if f == field => format!("{f}={value}\n"),
                _ => format!("{l}\n"),
            })
            .collect();
        reseal(&text)
    }

    /// `text` with its `check=` line recomputed.
    fn reseal(text: &str) -> String {
        let body = &text[..text.rfind("check=").unwrap_or(text.len())];
        format!("{body}check={}\n", hex(&sha256(body.as_bytes())))
    }

    fn read(meta: &str, ptx: &str) -> Option<Kernel> {
        decode_meta("K", meta.as_bytes())?.kernel(ptx.as_bytes().to_vec())
    }

    #[test]
    fn metadata_round_trips_and_seals_its_ptx() {
        let k = kernel();
        let meta = encode_meta("K", &k);
        assert_eq!(facts(&read(&meta, &k.ptx).unwrap()), facts(&k));
        // The same metadata with PTX one byte shorter, or one byte different.
        assert!(read(&meta, &k.ptx[..k.ptx.len() - 1]).is_none());
        assert!(read(&meta, &k.ptx.replace("ret", "rex")).is_none());
        // Resealing with the value it had reads back; the check catches a field changed without resealing.
        assert!(read(&resealed("num_warps", "8"), &k.ptx).is_some());
        assert!(read(&meta.replace("num_warps=8", "num_warps=4"), &k.ptx).is_none());
        // Metadata written for another key.
        assert!(decode_meta("K2", meta.as_bytes()).is_none());
    }

    #[test]
    fn whole_metadata_that_says_something_impossible_is_refused() {
        let ptx = kernel().ptx;
        for (field, value) in [
            ("num_warps", "999999"),
            ("num_warps", "0"),
            ("shared_bytes", "4000000000"),
            ("shared_bytes", "232449"), // one byte more than a Hopper CTA may have
            ("name", "k;rm"),
            ("name", ""),
            ("arch", "sm_75"),
            ("tensor_maps", "2:f16:64x128"),
            ("ptx_bytes", "-1"),
            ("ptx_sha256", "00"),
            ("num_ctas", "3"),
            ("num_ctas", "32"),
            ("key", "K2"),
        ] {
            let meta = resealed(field, value);
            assert!(meta.contains(&format!("\n{field}={value}\n")), "{meta}");
            assert!(read(&meta, &ptx).is_none(), "{field}={value}");
        }
        // The metadata names another entry point or target than the PTX declares.
        let other = resealed("name", "other");
        assert!(decode_meta("K", other.as_bytes()).is_some() && read(&other, &ptx).is_none());
        let sm80 = resealed("arch", "sm_80");
        assert!(decode_meta("K", sm80.as_bytes()).is_some() && read(&sm80, &ptx).is_none());
        // The previous format (no format line, no check), a duplicated field, an extra one.
        assert!(
            read("name=k\nnum_warps=8\nshared_bytes=0\narch=sm_90a\ntensor_maps=\nscratch_bytes=0\n", &ptx).is_none()
        );
        let meta = encode_meta("K", &kernel());
        assert!(read(&reseal(&meta.replacen("num_warps=8\n", "num_warps=8\nnum_warps=8\n", 1)), &ptx).is_none());
        assert!(read(&reseal(&meta.replacen("check=", "extra=1\ncheck=", 1)), &ptx).is_none());
        assert!(read(&reseal(&meta), &ptx).is_some());
    }

    /// Every kind of tensor-map parameter reads back as written: a host descriptor's, one the kernel makes, an
    /// im2col map; zero and NaN padding.
    #[test]
    fn tensor_maps_round_trip() {
        let map = |base_arg, nan_padding, im2col_rank| TensorMapArg {
            base_arg,
            elem: tessel_tile::ScalarType::BF16,
            block_shape: vec![2, 8, 64],
            nan_padding,
            im2col_rank,
            layout: None,
        };
        // A host descriptor's own NVMMA layout (here fp4_padded) rides along.
        let padded = tessel_layouts::standard::NvmmaSharedLayout {
            swizzle_byte_width: 128,
            element_bitwidth: 8,
            rank: 2,
            transposed: false,
            fp4_padded: true,
            cga: tessel_layouts::CgaLayout::Single,
        };
        let with_layout = TensorMapArg {
            elem: tessel_tile::ScalarType::U8,
            block_shape: vec![128, 64],
            layout: Some(padded),
            ..map(Some(1), false, None)
        };
        for m in [map(Some(0), false, None), map(None, true, None), map(Some(7), false, Some(4)), with_layout] {
            assert_eq!(map_from_text(&map_to_text(&m)), Some(m.clone()), "{}", map_to_text(&m));
        }
        assert_eq!(map_to_text(&map(None, true, None)), "kernel:bf16:2x8x64:nan");
        for bad in ["", "0:bf16:64", "0:bf16:64:zero:im2col", "0:bf16:64:zero:x4", "0:bf16:64:zero:im2col4:1"] {
            assert_eq!(map_from_text(bad), None, "{bad}");
        }
    }

    #[test]
    fn cubins_carry_their_length_and_hash() {
        let cubin = b"\x7fELF and the rest".to_vec();
        let file = encode_cubin("K", "sm90", &cubin);
        assert_eq!(decode_cubin("K", "sm90", file.clone()).unwrap(), cubin);
        assert!(decode_cubin("K", "sm90", file[..file.len() - 1].to_vec()).is_none());
        assert!(decode_cubin("K", "sm90", file[1..].to_vec()).is_none());
        assert!(decode_cubin("K", "sm90", cubin.clone()).is_none(), "a bare cubin (the previous format)");
        assert!(decode_cubin("K2", "sm90", file.clone()).is_none(), "another entry's");
        assert!(decode_cubin("K", "sm100", file.clone()).is_none(), "another device's");
        let mut flipped = file.clone();
        flipped[6] ^= 4;
        assert!(decode_cubin("K", "sm90", flipped).is_none());
        assert!(decode_cubin("K", "sm90", encode_cubin("K", "sm90", b"not an ELF image")).is_none());
        assert!(decode_cubin("K", "sm90", Vec::new()).is_none());
    }
}
