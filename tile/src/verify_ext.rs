//! Typing rules of the data-dependent and target-specific ops (`gather`, `histogram`, `inline_asm`,
//! `globaltimer`, `smid`, `gdc_wait`, `gdc_launch_dependents`, `make_tensor_desc_im2col`) and of auto mode's
//! `dot_scaled`, kept beside [`crate::verify`]'s table.

use crate::ops::Op;
use crate::types::{Elem, ScalarType, Type};
use crate::verify_checks::{Violation, counts};

fn int_elem(t: &Type, what: &str) -> Result<ScalarType, Violation> {
    match t.elem().and_then(Elem::scalar) {
        Some(s) if s.is_int() => Ok(s),
        _ => Err(Violation::Rule(format!("{what} must be integers, got {t}"))),
    }
}

/// The typing rule of `op` (one of this module's ops).
pub(crate) fn types(op: &Op, ins: &[&Type], outs: &[&Type]) -> Result<(), Violation> {
    match op {
        Op::Gather { axis } => {
            counts(ins, outs, 2..=2, 1)?;
            let (src, index, out) = (ins[0], ins[1], outs[0]);
            int_elem(index, "indices")?;
            let (ss, is) = (src.shape(), index.shape());
            if !src.is_tensor() || !index.is_tensor() || ss.len() != is.len() {
                return Err(Violation::Rule(format!(
                    "source and indices must be tensors of one rank, got {src} and {index}"
                )));
            }
            let a = *axis as usize;
            if a >= ss.len() {
                return Err(Violation::Rule(format!("axis {axis} is out of range for rank {}", ss.len())));
            }
            if let Some(d) = (0..ss.len()).find(|&d| d != a && ss[d] != is[d]) {
                return Err(Violation::Rule(format!(
                    "source and indices differ in dim {d} (not the gather axis): {src} and {index}"
                )));
            }
            if out.shape() != is || out.elem() != src.elem() {
                return Err(Violation::Rule(format!(
                    "result must be shaped like the indices with the source's elements, got {out}"
                )));
            }
            Ok(())
        }
        Op::Histogram { num_bins } => {
            counts(ins, outs, 1..=2, 1)?;
            int_elem(ins[0], "input")?;
            if ins[0].shape().len() != 1 {
                return Err(Violation::Rule(format!("input must be a 1-D tensor, got {}", ins[0])));
            }
            if let Some(m) = ins.get(1)
                && (m.shape() != ins[0].shape() || m.elem() != Some(Elem::Scalar(ScalarType::I1)))
            {
                return Err(Violation::Rule(format!("mask must be i1 shaped like the input, got {m}")));
            }
            let out = outs[0];
            if out.shape() != [*num_bins] || out.elem() != Some(Elem::Scalar(ScalarType::I32)) {
                return Err(Violation::Rule(format!("result must be tensor<{num_bins}xi32>, got {out}")));
            }
            Ok(())
        }
        Op::InlineAsm { pack, .. } => {
            if outs.is_empty() {
                return Err(Violation::Rule("needs at least one result".into()));
            }
            let shape = outs[0].shape();
            if let Some(t) = ins.iter().chain(outs).find(|t| t.shape() != shape || t.elem().is_none()) {
                return Err(Violation::Rule(format!(
                    "operands and results must be tensors or scalars of one shape, got {t}"
                )));
            }
            let n: u32 = shape.iter().product();
            if *pack == 0 || n % *pack != 0 {
                return Err(Violation::Rule(format!("pack {pack} must divide the {n} elements")));
            }
            Ok(())
        }
        Op::GlobalTimer | Op::SmId => {
            counts(ins, outs, 0..=0, 1)?;
            let want = if matches!(op, Op::GlobalTimer) { ScalarType::I64 } else { ScalarType::I32 };
            if *outs[0] != Type::scalar(want) {
                return Err(Violation::Rule(format!("result must be {want}, got {}", outs[0])));
            }
            Ok(())
        }
        Op::GdcWait | Op::GdcLaunchDependents => counts(ins, outs, 0..=0, 0),
        Op::MakeTensorDescIm2col { rank, .. } => {
            let r = *rank as usize;
            if !(3..=crate::tma::MAX_RANK).contains(&r) {
                return Err(Violation::Rule(format!("an im2col descriptor is over a tensor of rank 3 to 5, not {r}")));
            }
            // base, shape, strides, lower and upper corners (spatial dims), element strides.
            counts(ins, outs, 1 + 5 * r - 4..=1 + 5 * r - 4, 1)?;
            let Some(Elem::Ptr(pointee, _)) = ins[0].elem() else {
                return Err(Violation::Rule(format!("the base must be a pointer, got {}", ins[0])));
            };
            let want = |range: std::ops::Range<usize>, s: ScalarType, what: &str| match ins[range]
                .iter()
                .find(|t| ***t != Type::scalar(s))
            {
                Some(t) => Err(Violation::Rule(format!("{what} must be {s} scalars, got {t}"))),
                None => Ok(()),
            };
            want(1..1 + r, ScalarType::I32, "the shape")?;
            want(1 + r..1 + 2 * r, ScalarType::I64, "the strides")?;
            want(1 + 2 * r..ins.len(), ScalarType::I32, "the corners and element strides")?;
            match outs[0] {
                Type::TensorDesc { elem, block_shape } if *elem == pointee && block_shape.len() == 2 => Ok(()),
                other => Err(Violation::Rule(format!(
                    "result must be a [pixels, channels] tensordesc of {pointee}, got {other}"
                ))),
            }
        }
        Op::DotScaled { a_format, b_format } => dot_scaled(ins, outs, *a_format, *b_format),
        other => Err(Violation::Rule(format!("`{}` is not typed here", other.name()))),
    }
}

/// `dot_scaled a, a_scale, b, b_scale, acc, a_up, b_up`: A `[M, K']` and B `[K'', N]` of the formats' storage
/// types (K' = K / 2 for e2m1), the scales `[M, G]` and `[N, G]` of one 8-bit type with G dividing K, `acc` and
/// the result `[M, N]` f32, and the upcast operands `[M, K]` and `[K, N]` of one float type.
pub(crate) fn dot_scaled(
    ins: &[&Type],
    outs: &[&Type],
    a_format: crate::ops::MxFormat,
    b_format: crate::ops::MxFormat,
) -> Result<(), Violation> {
    counts(ins, outs, 7..=7, 1)?;
    let (a, sa, b, sb, acc, au, bu) = (ins[0], ins[1], ins[2], ins[3], ins[4], ins[5], ins[6]);
    if let Some(t) = ins.iter().find(|t| !t.is_tensor() || t.shape().len() != 2) {
        return Err(Violation::Rule(format!("operands must be 2-D tensors, got {t}")));
    }
    for (t, f, what) in [(a, a_format, "A"), (b, b_format, "B")] {
        if t.elem() != Some(Elem::Scalar(f.storage())) {
            return Err(Violation::Rule(format!(
                "operand {what} of format {} must hold {} (e2m1 packs two values per byte along K), got {t}",
                f.word(),
                f.storage()
            )));
        }
    }
    let per_byte = |f: crate::ops::MxFormat| 8 / f.bits();
    let (m, k, n) = (a.shape()[0], a.shape()[1] * per_byte(a_format), b.shape()[1]);
    let f32t = Some(Elem::Scalar(ScalarType::F32));
    if b.shape()[0] * per_byte(b_format) != k || acc.shape() != [m, n] || acc.elem() != f32t {
        return Err(Violation::Rule(format!(
            "shapes do not form a matrix product into f32: {a} ({}) x {b} ({}) -> {acc}",
            a_format.word(),
            b_format.word()
        )));
    }
    let groups = sa.shape()[1];
    let scale_elem = sa.elem().and_then(Elem::scalar);
    if !matches!(scale_elem, Some(ScalarType::U8 | ScalarType::F8E4M3))
        || sb.elem() != sa.elem()
        || sa.shape() != [m, groups]
        || sb.shape() != [n, groups]
        || groups == 0
        || k % groups != 0
    {
        return Err(Violation::Rule(format!(
            "the scales must be [{m}, G] and [{n}, G] of u8 or f8e4m3, G dividing K = {k}, got {sa} and {sb}"
        )));
    }
    if au.shape() != [m, k]
        || bu.shape() != [k, n]
        || au.elem() != bu.elem()
        || !au.elem().and_then(Elem::scalar).is_some_and(ScalarType::is_float)
    {
        return Err(Violation::Rule(format!(
            "the upcast operands must be [{m}, {k}] and [{k}, {n}] of one float type, got {au} and {bu}"
        )));
    }
    if *outs[0] != *acc {
        return Err(Violation::Rule(format!("result must be {acc}, got {}", outs[0])));
    }
    Ok(())
}
