//! The Gluon layout constructors: each takes its bound arguments and builds the spec type, checking it with the
//! type's own `validate` so that a bad parameter is reported at the call.

use super::{
    Arg, Bound, Call, Param, Result, Sp, Value, err, legacy, opt, req, suggest, to_bases, to_u32, to_u32_list,
};
use crate::standard::{
    AnyLayout, BlockedLayout, CgaLayout, DistributedLayout, DistributedLinearLayout, DotOperandLayout,
    NvmmaDistributedLayout, NvmmaSharedLayout, SharedLayout, SharedLinearLayout, SliceLayout, SwizzledSharedLayout,
    TensorMemoryLayout, TensorMemoryScalesLayout, TmemAccess, TmemRegLayout,
};

/// The Gluon names of the layouts and layout functions this parser knows.
pub const KNOWN_CALLABLES: &[&str] = &[
    "BlockedLayout",
    "SliceLayout",
    "DotOperandLayout",
    "NVMMADistributedLayout",
    "DistributedLinearLayout",
    "SwizzledSharedLayout",
    "NVMMASharedLayout",
    "NVMMASharedLayout.get_default_for",
    "SharedLinearLayout",
    "MBarrierLayout",
    "MBarrierLayout.multicta",
    "TensorMemoryLayout",
    "TensorMemoryScalesLayout",
    "get_tmem_reg_layout",
];

const LEGACY_CGA: [Param; 3] = [legacy("ctas_per_cga"), legacy("cta_split_num"), legacy("cta_order")];

/// Evaluates a call of a Gluon layout constructor or function.
pub(super) fn call(call: &Call, args: Vec<Arg>) -> Result<Value> {
    let name = call.path.last().expect("a path has a name").as_str();
    let owner = call.path.len().checked_sub(2).map(|i| call.path[i].as_str());
    match (owner, name) {
        (Some("NVMMASharedLayout"), "get_default_for") => {
            return nvmma_default_for(call.bind(name, &NVMMA_DEFAULT, args)?);
        }
        (Some("MBarrierLayout"), "multicta") => {
            return mbarrier_multicta(call.bind(name, &[req("num_ctas"), opt("two_cta", "False")], args)?);
        }
        (_, "constexpr") => {
            const VALUE: [Param; 1] = [req("value")];
            let mut b = call.bind(name, &VALUE, args)?;
            return Ok(b.required("value")?.value);
        }
        _ => {}
    }
    match name {
        "BlockedLayout" => blocked(call.bind(name, &BLOCKED, args)?),
        "SliceLayout" => slice(call.bind(name, &[req("dim"), req("parent")], args)?),
        "DotOperandLayout" => {
            dot_operand(call.bind(name, &[req("operand_index"), req("parent"), req("k_width")], args)?)
        }
        "NVMMADistributedLayout" => nvmma_distributed(call.bind(name, &NVMMA_DIST, args)?),
        "DistributedLinearLayout" => distributed_linear(call.bind(name, &DIST_LINEAR, args)?),
        "SwizzledSharedLayout" => swizzled(call.bind(name, &SWIZZLED, args)?),
        "NVMMASharedLayout" => nvmma_shared(call.bind(name, &NVMMA_SHARED, args)?),
        "SharedLinearLayout" => shared_linear(call.bind(name, &SHARED_LINEAR, args)?),
        "MBarrierLayout" => mbarrier(call.bind(name, &[opt("cga_layout", "None")], args)?),
        "TensorMemoryLayout" => tensor_memory(call.bind(name, &TMEM, args)?),
        "get_tmem_reg_layout" => tmem_reg(call, args),
        "AutoLayout" | "CoalescedLayout" => err(
            call.path_span.clone(),
            format!("`{name}` is a placeholder that the compiler resolves; it has no linear layout of its own"),
        ),
        "TensorMemoryScalesLayout" => {
            tensor_memory_scales(call.bind(name, &[opt("cga_layout", "[]"), legacy("cta_split_num")], args)?)
        }
        "PaddedSharedLayout" | "PartitionedSharedLayout" => {
            err(call.path_span.clone(), format!("`{name}` is not supported by tessel yet"))
        }
        n if n.starts_with("AMD") => {
            err(call.path_span.clone(), format!("`{name}`: AMD layouts are not supported yet"))
        }
        _ => {
            let full = call.path.join(".");
            let hint = suggest(name, KNOWN_CALLABLES).map(|s| format!("did you mean `{s}`? ")).unwrap_or_default();
            err(call.path_span.clone(), format!("unknown layout `{full}`; {hint}known: {}", KNOWN_CALLABLES.join(", ")))
        }
    }
}

/// Gluon dtype names and their bit widths (for `get_default_for` and `get_tmem_reg_layout`).
const DTYPES: &[(&str, u32)] = &[
    ("int1", 1),
    ("int8", 8),
    ("uint8", 8),
    ("float8e5", 8),
    ("float8e5b16", 8),
    ("float8e4nv", 8),
    ("float8e4b8", 8),
    ("float8e4b15", 8),
    ("int16", 16),
    ("uint16", 16),
    ("float16", 16),
    ("bfloat16", 16),
    ("int32", 32),
    ("uint32", 32),
    ("float32", 32),
    ("int64", 64),
    ("uint64", 64),
    ("float64", 64),
];

fn to_bits(v: &Sp<Value>, what: &str) -> Result<u32> {
    let name = match &v.value {
        Value::Name(n) => n.rsplit('.').next().unwrap_or(n),
        other => {
            return err(
                v.span.clone(),
                format!("{what} must be a dtype such as `gl.float16`, found {}", other.describe()),
            );
        }
    };
    match DTYPES.iter().find(|(n, _)| *n == name) {
        Some(&(_, bits)) => Ok(bits),
        None => {
            let names: Vec<&str> = DTYPES.iter().map(|(n, _)| *n).collect();
            let hint = suggest(name, &names).map(|s| format!("did you mean `{s}`? ")).unwrap_or_default();
            err(v.span.clone(), format!("{what}: unknown dtype `{name}`; {hint}known: {}", names.join(", ")))
        }
    }
}

fn dist(d: DistributedLayout, shape: Option<Vec<u32>>) -> Value {
    Value::Layout(AnyLayout::Distributed(d), shape)
}

fn shared(s: SharedLayout, shape: Option<Vec<u32>>) -> Value {
    Value::Layout(AnyLayout::Shared(s), shape)
}

const BLOCKED: [Param; 8] = [
    req("size_per_thread"),
    req("threads_per_warp"),
    req("warps_per_cta"),
    req("order"),
    opt("cga_layout", "[]"),
    LEGACY_CGA[0],
    LEGACY_CGA[1],
    LEGACY_CGA[2],
];

fn blocked(mut b: Bound) -> Result<Value> {
    let size_per_thread = b.list("size_per_thread")?;
    let threads_per_warp = b.list("threads_per_warp")?;
    let warps_per_cta = b.list("warps_per_cta")?;
    let order = b.list("order")?;
    let cga = b.cga(order.len())?;
    let l = BlockedLayout { size_per_thread, threads_per_warp, warps_per_cta, order, cga };
    b.checked(l.validate())?;
    Ok(dist(DistributedLayout::Blocked(l), None))
}

fn slice(mut b: Bound) -> Result<Value> {
    let dim = b.u32("dim")?;
    let (parent, parent_shape) = b.distributed("parent")?;
    let shape = parent_shape.map(|mut s| {
        if (dim as usize) < s.len() {
            s.remove(dim as usize);
        }
        s
    });
    let l = SliceLayout { dim, parent: Box::new(parent) };
    b.checked(l.validate())?;
    Ok(dist(DistributedLayout::Slice(l), shape))
}

fn dot_operand(mut b: Bound) -> Result<Value> {
    let operand_index = b.u32("operand_index")?;
    let (parent, _) = b.distributed("parent")?;
    let k_width = b.u32("k_width")?;
    let l = DotOperandLayout { operand_index, parent: Box::new(parent), k_width };
    b.checked(l.validate())?;
    Ok(dist(DistributedLayout::DotOperand(l), None))
}

const NVMMA_DIST: [Param; 7] = [
    req("version"),
    req("warps_per_cta"),
    req("instr_shape"),
    opt("cga_layout", "[]"),
    LEGACY_CGA[0],
    LEGACY_CGA[1],
    LEGACY_CGA[2],
];

fn nvmma_distributed(mut b: Bound) -> Result<Value> {
    let v = b.required("version")?;
    let version = match to_u32_list(&v, "NVMMADistributedLayout: version")?.as_slice() {
        &[major, minor] => [major, minor],
        other => return err(v.span, format!("NVMMADistributedLayout: version must be [major, minor], got {other:?}")),
    };
    let warps_per_cta = b.list("warps_per_cta")?;
    let instr_shape = b.list("instr_shape")?;
    let cga = b.cga(warps_per_cta.len())?;
    let l = NvmmaDistributedLayout { version, warps_per_cta, instr_shape, cga };
    b.checked(l.validate())?;
    Ok(dist(DistributedLayout::Nvmma(l), None))
}

const DIST_LINEAR: [Param; 5] =
    [req("reg_bases"), req("lane_bases"), req("warp_bases"), req("block_bases"), req("shape")];

fn distributed_linear(mut b: Bound) -> Result<Value> {
    let l = DistributedLinearLayout {
        reg_bases: b.bases("reg_bases")?,
        lane_bases: b.bases("lane_bases")?,
        warp_bases: b.bases("warp_bases")?,
        block_bases: b.bases("block_bases")?,
        shape: b.list("shape")?,
    };
    b.checked(l.validate())?;
    let shape = Some(l.shape.clone());
    Ok(dist(DistributedLayout::Linear(l), shape))
}

const SWIZZLED: [Param; 8] = [
    req("vec"),
    req("per_phase"),
    req("max_phase"),
    req("order"),
    opt("cga_layout", "[]"),
    LEGACY_CGA[0],
    LEGACY_CGA[1],
    LEGACY_CGA[2],
];

fn swizzled(mut b: Bound) -> Result<Value> {
    let (vec, per_phase, max_phase) = (b.u32("vec")?, b.u32("per_phase")?, b.u32("max_phase")?);
    let order = b.list("order")?;
    let cga = b.cga(order.len())?;
    let l = SwizzledSharedLayout { vec, per_phase, max_phase, order, cga };
    b.checked(l.validate())?;
    Ok(shared(SharedLayout::Swizzled(l), None))
}

fn mbarrier(mut b: Bound) -> Result<Value> {
    let cga = b.cga(1)?;
    let l = SwizzledSharedLayout { vec: 1, per_phase: 1, max_phase: 1, order: vec![0], cga };
    b.checked(l.validate())?;
    Ok(shared(SharedLayout::Swizzled(l), None))
}

/// `MBarrierLayout.multicta(num_ctas, two_cta=False)`: one barrier per CTA of a cluster of `num_ctas` (a
/// power of two); with `two_cta`, one per CTA pair (the pair's CTAs share the even CTA's, a zero block basis).
fn mbarrier_multicta(mut b: Bound) -> Result<Value> {
    let num_ctas = b.u32("num_ctas")?;
    let two_cta = b.bool_or("two_cta", false)?;
    if num_ctas == 0 || !num_ctas.is_power_of_two() {
        return err(
            b.call.span.clone(),
            format!("MBarrierLayout.multicta: num_ctas must be a power of two, got {num_ctas}"),
        );
    }
    if two_cta && num_ctas % 2 != 0 {
        return err(b.call.span.clone(), "MBarrierLayout.multicta: two_cta needs an even num_ctas, got 1".to_string());
    }
    let mut bases = Vec::new();
    let mut rest = num_ctas;
    if two_cta {
        bases.push(vec![0]);
        rest /= 2;
    }
    bases.extend((0..rest.trailing_zeros()).map(|i| vec![1u32 << i]));
    let cga = if bases.is_empty() { CgaLayout::Single } else { CgaLayout::Bases(bases) };
    let l = SwizzledSharedLayout { vec: 1, per_phase: 1, max_phase: 1, order: vec![0], cga };
    b.checked(l.validate())?;
    Ok(shared(SharedLayout::Swizzled(l), None))
}

const NVMMA_SHARED: [Param; 9] = [
    req("swizzle_byte_width"),
    req("element_bitwidth"),
    opt("rank", "2"),
    opt("transposed", "False"),
    opt("fp4_padded", "False"),
    opt("cga_layout", "[]"),
    LEGACY_CGA[0],
    LEGACY_CGA[1],
    LEGACY_CGA[2],
];

fn nvmma_shared(mut b: Bound) -> Result<Value> {
    let swizzle_byte_width = b.u32("swizzle_byte_width")?;
    let element_bitwidth = b.u32("element_bitwidth")?;
    let rank = b.u32_or("rank", 2)?;
    let transposed = b.bool_or("transposed", false)?;
    let fp4_padded = b.bool_or("fp4_padded", false)?;
    let cga = b.cga(rank as usize)?;
    let l = NvmmaSharedLayout { swizzle_byte_width, element_bitwidth, rank, transposed, fp4_padded, cga };
    b.checked(l.validate())?;
    Ok(shared(SharedLayout::Nvmma(l), None))
}

const NVMMA_DEFAULT: [Param; 8] = [
    req("block_shape"),
    req("dtype"),
    opt("transposed", "False"),
    opt("fp4_padded", "False"),
    opt("cga_layout", "None"),
    LEGACY_CGA[0],
    LEGACY_CGA[1],
    LEGACY_CGA[2],
];

/// `NVMMASharedLayout.get_default_for`: the widest swizzle (128, 64, 32 or 0 bytes) that the contiguous dim of
/// one CTA's tile fills exactly; none for rank 1 or fewer than 8 rows.
fn nvmma_default_for(mut b: Bound) -> Result<Value> {
    let block_shape = b.list("block_shape")?;
    let dtype = b.required("dtype")?;
    let bits = to_bits(&dtype, "get_default_for: dtype")?;
    let transposed = b.bool_or("transposed", false)?;
    let fp4_padded = b.bool_or("fp4_padded", false)?;
    let rank = block_shape.len();
    let cga = b.cga(rank)?;
    let split = cga.split_per_dim(rank).or_else(|e| err(b.call.span.clone(), e.0))?;
    let mut per_cta: Vec<u64> = block_shape.iter().zip(&split).map(|(&s, &c)| (s / c.max(1)).max(1) as u64).collect();
    if transposed && !per_cta.is_empty() {
        per_cta.rotate_left(1);
    }
    let swizzle = crate::standard::default_swizzle(&per_cta, bits, fp4_padded);
    let l = NvmmaSharedLayout {
        swizzle_byte_width: swizzle,
        element_bitwidth: bits,
        rank: rank as u32,
        transposed,
        fp4_padded,
        cga,
    };
    b.checked(l.validate())?;
    Ok(shared(SharedLayout::Nvmma(l), Some(block_shape)))
}

const SHARED_LINEAR: [Param; 3] = [req("offset_bases"), opt("block_bases", "[]"), opt("alignment", "16")];

fn shared_linear(mut b: Bound) -> Result<Value> {
    let offset_bases = b.bases("offset_bases")?;
    if offset_bases.is_empty() {
        return err(b.call.span.clone(), "SharedLinearLayout: offset_bases must not be empty");
    }
    let block_bases = b.bases("block_bases")?;
    let alignment = b.u32_or("alignment", 16)?;
    // Gluon's `SharedLinearLayout.shape`: twice the largest coordinate per dim.
    let rank = offset_bases.first().map_or(0, Vec::len);
    let shape = (0..rank)
        .map(|d| {
            2 * offset_bases.iter().chain(&block_bases).filter_map(|v| v.get(d)).copied().max().unwrap_or(0).max(1)
        })
        .collect();
    let l = SharedLinearLayout { offset_bases, block_bases, alignment };
    b.checked(l.validate())?;
    Ok(shared(SharedLayout::Linear(l), Some(shape)))
}

const TMEM: [Param; 7] = [
    req("block"),
    opt("col_stride", "None"),
    opt("cga_layout", "[]"),
    opt("two_ctas", "False"),
    opt("fp4_padded", "False"),
    legacy("cta_split_num"),
    legacy("unpacked"),
];

/// `TensorMemoryLayout(block, col_stride, ...)`, or the older spelling `TensorMemoryLayout(block, unpacked, ...)`
/// (a bool in `col_stride`'s place is `unpacked`): `unpacked=False` is `col_stride=1`, `unpacked=True` one element
/// per 32-bit column, [`TensorMemoryLayout::UNPACKED`] until an element type resolves it.
fn tensor_memory(mut b: Bound) -> Result<Value> {
    let block_v = b.required("block")?;
    let block = match to_u32_list(&block_v, "TensorMemoryLayout: block")?.as_slice() {
        &[m, n] => [m, n],
        other => return err(block_v.span, format!("TensorMemoryLayout: block must be (M, N), got {other:?}")),
    };
    let stride = b.get("col_stride");
    let unpacked = b.get("unpacked");
    let col_stride = match (stride, unpacked) {
        (Some(s), Some(_)) => {
            return err(s.span, "TensorMemoryLayout: give either col_stride or the older unpacked, not both");
        }
        (Some(Sp { value: Value::Bool(u), .. }), None) | (None, Some(Sp { value: Value::Bool(u), .. })) => {
            if u {
                TensorMemoryLayout::UNPACKED
            } else {
                1
            }
        }
        (None, Some(v)) => {
            let found = v.value.describe();
            return err(v.span, format!("TensorMemoryLayout: unpacked must be True or False, found {found}"));
        }
        (Some(s), None) => to_u32(&s, "TensorMemoryLayout: col_stride")?,
        (None, None) => {
            return err(block_v.span, "TensorMemoryLayout: give col_stride (1 packed, 32 / bitwidth unpacked)");
        }
    };
    let two_ctas = b.bool_or("two_ctas", false)?;
    if let Some(v) = b.get("fp4_padded").filter(|v| !matches!(v.value, Value::Bool(false))) {
        return err(v.span, "TensorMemoryLayout: fp4_padded tensor memory is not supported by tessel yet");
    }
    let cga = b.get("cga_layout");
    let cta_split = match (cga, b.get("cta_split_num")) {
        (Some(c), Some(_)) => {
            return err(c.span, "TensorMemoryLayout: give either cga_layout or cta_split_num, not both");
        }
        (None, Some(s)) => match to_u32_list(&s, "TensorMemoryLayout: cta_split_num")?.as_slice() {
            &[m, n] => [m, n],
            other => return err(s.span, format!("TensorMemoryLayout: cta_split_num must be (M, N), got {other:?}")),
        },
        (Some(c), None) => {
            let bases = to_bases(&c, "TensorMemoryLayout: cga_layout")?;
            let cga = if bases.is_empty() { CgaLayout::Single } else { CgaLayout::Bases(bases.clone()) };
            let split = cga.split_per_dim(2).or_else(|e| err(c.span.clone(), format!("TensorMemoryLayout: {e}")))?;
            if split.iter().product::<u32>() != 1 << bases.len() {
                return err(c.span, "TensorMemoryLayout: cga_layout must split the tensor (no zero bases)");
            }
            [split[0], split[1]]
        }
        (None, None) => [1, 1],
    };
    let l = TensorMemoryLayout { block, col_stride, two_ctas, cta_split };
    b.checked(l.validate())?;
    Ok(Value::Layout(AnyLayout::TensorMemory(l), None))
}

/// `TensorMemoryScalesLayout(cga_layout=[])`: the CTA split read off the CGA bases.
fn tensor_memory_scales(mut b: Bound) -> Result<Value> {
    let mut broadcast = 1;
    let cta_split = match (b.get("cga_layout"), b.get("cta_split_num")) {
        (Some(c), Some(_)) => {
            return err(c.span, "TensorMemoryScalesLayout: give either cga_layout or cta_split_num, not both");
        }
        (None, None) => [1, 1],
        (None, Some(s)) => match to_u32_list(&s, "TensorMemoryScalesLayout: cta_split_num")?.as_slice() {
            &[m, n] => [m, n],
            other => {
                return err(s.span, format!("TensorMemoryScalesLayout: cta_split_num must be (M, N), got {other:?}"));
            }
        },
        (Some(c), None) => {
            let bases = to_bases(&c, "TensorMemoryScalesLayout: cga_layout")?;
            let zero = |b: &Vec<u32>| b.iter().all(|&x| x == 0);
            if !bases.is_empty() && bases.iter().all(zero) {
                // Every CTA holds all the scales (those of the A operand a CTA pair shares).
                broadcast = 1 << bases.len();
                return Ok(Value::Layout(
                    AnyLayout::TensorMemoryScales(TensorMemoryScalesLayout { cta_split: [1, 1], broadcast }),
                    None,
                ));
            }
            if bases.iter().any(zero) {
                return err(
                    c.span,
                    "TensorMemoryScalesLayout: cga_layout must split the tensor or broadcast it (all bases zero), \
                     not both",
                );
            }
            let cga = if bases.is_empty() { CgaLayout::Single } else { CgaLayout::Bases(bases.clone()) };
            let split =
                cga.split_per_dim(2).or_else(|e| err(c.span.clone(), format!("TensorMemoryScalesLayout: {e}")))?;
            if split.iter().product::<u32>() != 1 << bases.len() {
                return err(c.span, "TensorMemoryScalesLayout: cga_layout must split the tensor (no zero bases)");
            }
            [split[0], split[1]]
        }
    };
    Ok(Value::Layout(AnyLayout::TensorMemoryScales(TensorMemoryScalesLayout { cta_split, broadcast }), None))
}

/// Why `instr_variant` `s` has no register layout here: a variant tessel does not model yet, or an unknown one.
pub fn tmem_variant_error(s: &str) -> String {
    const ACCESSES: [TmemAccess; 4] =
        [TmemAccess::B32x32, TmemAccess::B16x64, TmemAccess::B16x128, TmemAccess::B16x256];
    match s {
        "16x32bx2" => "instr_variant \"16x32bx2\" is not supported by tessel yet (the 32x32b variant of a block-M-64 \
                       layout uses the 16x32bx2 access where it needs it)"
            .into(),
        _ => {
            let names: Vec<String> = ACCESSES.iter().map(|a| format!("{:?}", a.ptx_name())).collect();
            format!("unknown instr_variant {s:?}; choose one of {}", names.join(", "))
        }
    }
}

/// `get_tmem_reg_layout` in Gluon's form `(element_ty, shape, layout, num_warps, instr_variant="32x32b",
/// cga_layout=())`, or in the short form `(layout, num_warps, instr_variant="32x32b")` that leaves the shape to
/// the caller.
fn tmem_reg(call: &Call, args: Vec<Arg>) -> Result<Value> {
    const ACCESSES: [TmemAccess; 4] =
        [TmemAccess::B32x32, TmemAccess::B16x64, TmemAccess::B16x128, TmemAccess::B16x256];
    const FULL: [Param; 6] = [
        req("element_ty"),
        req("shape"),
        req("layout"),
        req("num_warps"),
        opt("instr_variant", "\"32x32b\""),
        opt("cga_layout", "()"),
    ];
    const SHORT: [Param; 3] = [req("layout"), req("num_warps"), opt("instr_variant", "\"32x32b\"")];
    let first_is_layout = matches!(args.first(), Some(Arg { name: None, value: Sp { value: Value::Layout(..), .. } }))
        || args.iter().all(|a| a.name.as_ref().is_some_and(|n| SHORT.iter().any(|p| p.name == n.value)));
    let func = "get_tmem_reg_layout";
    let (mut b, shape, element_bitwidth) = if first_is_layout {
        (call.bind(func, &SHORT, args)?, None, 32)
    } else {
        let mut b = call.bind(func, &FULL, args)?;
        let ty = b.required("element_ty")?;
        let bits = to_bits(&ty, "get_tmem_reg_layout: element_ty")?;
        let shape = b.list("shape")?;
        if let Some(c) = b.get("cga_layout") {
            if !to_bases(&c, "get_tmem_reg_layout: cga_layout")?.is_empty() {
                return err(
                    c.span,
                    "get_tmem_reg_layout: a cga_layout is not supported yet; use the layout's cga_layout",
                );
            }
        }
        (b, Some(shape), bits)
    };
    let lv = b.required("layout")?;
    let tmem = match lv.value {
        Value::Layout(AnyLayout::TensorMemory(t), _) => t,
        other => {
            return err(lv.span, format!("{func}: layout must be a TensorMemoryLayout, found {}", other.describe()));
        }
    };
    let num_warps = b.u32("num_warps")?;
    let (access, split_n) = match b.get("instr_variant") {
        None => (TmemAccess::B32x32, false),
        Some(Sp { value: Value::Str(s), .. }) if s == "32x32b_splitn" => (TmemAccess::B32x32, true),
        Some(Sp { value: Value::Str(s), span }) => match ACCESSES.iter().find(|a| a.ptx_name() == s) {
            Some(&a) => (a, false),
            None => return err(span, format!("{func}: {}", tmem_variant_error(&s))),
        },
        Some(v) => return err(v.span, format!("{func}: instr_variant must be a string, found {}", v.value.describe())),
    };
    let tmem = tmem.for_bits(element_bitwidth);
    let l = TmemRegLayout { tmem, access, num_warps, element_bitwidth, split_n };
    b.checked(l.validate())?;
    Ok(dist(DistributedLayout::TmemReg(l), shape))
}
