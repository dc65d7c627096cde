//! What a tensor-memory type is (Blackwell): a buffer's parts (shape, element type, `TensorMemoryLayout` or
//! `TensorMemoryScalesLayout`), its name and its 32-bit columns, the register layouts `tcgen05.ld/st` move it in,
//! the types of its views (one buffer of several, a column slice), and the operand checks every tcgen05 op
//! shares (the f32 accumulator, the i1 predicates, the mbarriers an MMA commits to). The ops' own rules are
//! [`crate::verify_tmem`]'s, [`crate::tcgen05_copy`]'s and [`crate::mma_scaled`]'s; all three read types here.

use tessel_layouts::{AnyLayout, TensorMemoryLayout, TensorMemoryScalesLayout, TmemAccess, TmemRegLayout};

use crate::types::{ScalarType, Type};

/// The tensor-memory buffer `t`: its shape, element type and layout.
pub fn tmem_parts(t: &Type) -> Result<(&[u32], ScalarType, &TensorMemoryLayout), String> {
    match t {
        Type::MemDesc { shape, elem, layout } => match &layout.spec {
            Some(AnyLayout::TensorMemory(l)) => Ok((shape, *elem, l)),
            _ => Err(format!("needs a tensor-memory memdesc (laid out by a TensorMemoryLayout), got {t}")),
        },
        _ => Err(format!("needs a tensor-memory memdesc, got {t}")),
    }
}

/// The block-scales buffer `t` (laid out by a `TensorMemoryScalesLayout`): its shape, element type and layout.
pub fn scales_parts(t: &Type) -> Result<(&[u32], ScalarType, &TensorMemoryScalesLayout), String> {
    match t {
        Type::MemDesc { shape, elem, layout } => match &layout.spec {
            Some(AnyLayout::TensorMemoryScales(l)) => Ok((shape, *elem, l)),
            _ => Err(format!("needs a tensor-memory memdesc laid out by a TensorMemoryScalesLayout, got {t}")),
        },
        _ => Err(format!("needs a tensor-memory memdesc, got {t}")),
    }
}

/// The register layout a warp group sees moving a tensor of `shape` and `elem` laid out by `tmem` with
/// `tcgen05.ld/st.32x32b` over `num_warps` warps.
pub fn reg_layout_32x32b(
    tmem: &TensorMemoryLayout,
    shape: &[u32],
    elem: ScalarType,
    num_warps: u32,
) -> Result<tessel_layouts::LinearLayout, String> {
    reg_layout(tmem, TmemAccess::B32x32, shape, elem, num_warps)
}

/// The register layout of moving a tensor of `shape` and `elem` laid out by `tmem` with the `access` shape of
/// `tcgen05.ld/st` over `num_warps` warps.
pub fn reg_layout(
    tmem: &TensorMemoryLayout,
    access: TmemAccess,
    shape: &[u32],
    elem: ScalarType,
    num_warps: u32,
) -> Result<tessel_layouts::LinearLayout, String> {
    let reg = TmemRegLayout { element_bitwidth: elem.bits(), ..TmemRegLayout::new(tmem.clone(), access, num_warps) };
    tessel_layouts::DistributedLayout::TmemReg(reg).to_linear(shape).map_err(|e| e.to_string())
}

/// The register layout of moving the whole tensor-memory buffer `mem` (either kind of tensor-memory layout) with
/// the `access` shape over `num_warps` warps.
pub fn mem_reg_layout(mem: &Type, access: TmemAccess, num_warps: u32) -> Result<tessel_layouts::LinearLayout, String> {
    if let Ok((shape, _, scales)) = scales_parts(mem) {
        return scales.reg_layout(shape, access, num_warps).map_err(|e| e.to_string());
    }
    let (shape, elem, tmem) = tmem_parts(mem)?;
    reg_layout(tmem, access, shape, elem, num_warps)
}

/// The access shapes of `tcgen05.ld/st`, in the order a register layout is matched against them.
pub const ACCESSES: [TmemAccess; 4] =
    [TmemAccess::B32x32, TmemAccess::B16x64, TmemAccess::B16x128, TmemAccess::B16x256];

/// The access shape whose register layout `have` is, for moving the tensor-memory buffer `mem` over `num_warps`
/// warps (32x32b also for its `32x32b_splitn` variant); `None` when it is none of them.
pub fn access_of(have: &tessel_layouts::LinearLayout, mem: &Type, num_warps: u32) -> Option<TmemAccess> {
    ACCESSES.into_iter().find(|&a| mem_reg_layout(mem, a, num_warps).is_ok_and(|l| l == *have)).or_else(|| {
        let (shape, elem, tmem) = tmem_parts(mem).ok()?;
        let reg = TmemRegLayout {
            element_bitwidth: elem.bits(),
            split_n: true,
            ..TmemRegLayout::new(tmem.clone(), TmemAccess::B32x32, num_warps)
        };
        let split = tessel_layouts::DistributedLayout::TmemReg(reg).to_linear(shape).ok()?;
        (split == *have).then_some(TmemAccess::B32x32)
    })
}

/// The tensor-memory layout of `mem`, in words: its spelling.
pub fn layout_name(mem: &Type) -> String {
    match mem.memdesc().and_then(|(_, _, l)| l.spec.as_ref()) {
        Some(spec) => spec.to_string(),
        None => mem.to_string(),
    }
}

/// The 32-bit columns each row of the tensor-memory buffer `t` takes.
pub fn columns(t: &Type) -> u32 {
    let (_, elem, layout) = t.memdesc().expect("a memdesc");
    (layout.linear.in_dim_size("col") * elem.bits()).div_ceil(32).max(1)
}

/// A buffer of block scales: `[rows, scales]` of 8-bit elements (e8m0 as `u8`, or e4m3), a power of two of at
/// least 16 rows (an MMA's N is at least 16; 16 rows take lanes 0-15 of each warp quarter); or
/// `[buffers, rows, scales]`, buffers of them one after another.
pub fn check_scales_type(t: &Type) -> Result<(), String> {
    let (shape, elem, _) = scales_parts(t)?;
    if shape.len() != 2 && shape.len() != 3 {
        return Err(format!(
            "a tensor-memory buffer of scales is 2-D ([rows, scales], or 3-D: buffers of them), got shape {shape:?}"
        ));
    }
    let shape = &shape[shape.len() - 2..];
    if !matches!(elem, ScalarType::U8 | ScalarType::F8E4M3) {
        return Err(format!("block scales are 8-bit: u8 (e8m0) or float8e4nv (e4m3), got {elem}"));
    }
    if shape[0] < 16 || !shape[0].is_power_of_two() {
        return Err(format!(
            "a buffer of scales holds a power of two of at least 16 rows (an MMA's N is at least 16), got {}",
            shape[0]
        ));
    }
    Ok(())
}

/// A buffer of `[M, N]` or `[buffers, M, N]`.
pub(crate) fn check_buffer(t: &Type) -> Result<(), String> {
    if t.is_tmem_scales() {
        return check_scales_type(t);
    }
    let (shape, elem, l) = tmem_parts(t)?;
    l.validate().map_err(|e| e.to_string())?;
    if l.col_stride == TensorMemoryLayout::UNPACKED {
        return Err(format!("{t}: an unpacked=True layout must be resolved for its element type"));
    }
    if shape.len() != 2 && shape.len() != 3 {
        return Err(format!("a tensor-memory buffer is 2-D (or 3-D: buffers of 2-D), got shape {shape:?}"));
    }
    if l.block[1] > 256 {
        return Err(format!("TensorMemoryLayout block N must be at most 256, got {}", l.block[1]));
    }
    if elem.bits() != 32 && elem.bits() != 16 {
        return Err(format!("tensor memory holds 32- or 16-bit elements, got {elem}"));
    }
    if elem.bits() == 32 && l.col_stride != 1 {
        return Err(format!("32-bit elements take one column each: col_stride must be 1, got {}", l.col_stride));
    }
    Ok(())
}

/// The type of one buffer of the `[buffers, M, N]` tensor-memory buffer `mem` (or of `[buffers, rows, scales]`).
pub fn index_type(mem: &Type) -> Result<Type, String> {
    if let Ok((shape, elem, l)) = scales_parts(mem) {
        if shape.len() != 3 {
            return Err(format!(
                "only a 3-D buffer of scales ([buffers, rows, scales]) has buffers to index, not {mem}"
            ));
        }
        let any = AnyLayout::TensorMemoryScales(l.clone());
        let linear = any.to_linear(&shape[1..]).map_err(|e| format!("{any} for {:?}: {e}", &shape[1..]))?;
        let layout = std::sync::Arc::new(crate::types::Layout { spec: Some(any), linear });
        return Ok(Type::MemDesc { shape: crate::types::Shape::from_slice(&shape[1..]), elem, layout });
    }
    let (shape, elem, l) = tmem_parts(mem)?;
    if shape.len() != 3 {
        return Err(format!("only a 3-D tensor-memory buffer ([buffers, M, N]) has buffers to index, not {mem}"));
    }
    tmem_type(&shape[1..], elem, l)
}

/// The tensor-memory memdesc of `shape` and `elem` laid out by `l`.
pub fn tmem_type(shape: &[u32], elem: ScalarType, l: &TensorMemoryLayout) -> Result<Type, String> {
    let any = AnyLayout::TensorMemory(l.clone());
    let linear = any.to_linear(shape).map_err(|e| format!("{any} for {shape:?}: {e}"))?;
    let layout = std::sync::Arc::new(crate::types::Layout { spec: Some(any), linear });
    Ok(Type::MemDesc { shape: crate::types::Shape::from_slice(shape), elem, layout })
}

pub(crate) fn check_pred(t: &Type, what: &str) -> Result<(), String> {
    if *t != Type::scalar(ScalarType::I1) {
        return Err(format!("`{what}` must be an i1 scalar, got {t}"));
    }
    Ok(())
}

pub(crate) fn check_barrier(t: &Type) -> Result<(), String> {
    match t.memdesc() {
        Some((shape, ScalarType::I64, _)) if !t.is_tmem() && shape.iter().product::<u32>() == 1 => Ok(()),
        _ => Err(format!("an mbarrier must be a shared-memory memdesc of one i64, got {t}")),
    }
}

/// The layout of `mem.slice(start, length)` (columns `start..start + length` of a tensor-memory buffer), and the
/// columns its first element is past the buffer's: only buffers with block M 128 and packed elements (col_stride
/// 1), whose element (i, j) sits in lane i at element slot j, slice into a layout of their own kind.
pub fn slice_layout(
    mem: &Type,
    start: u32,
    length: u32,
) -> Result<(std::sync::Arc<crate::types::Layout>, u32), String> {
    let (shape, elem, l) = tmem_parts(mem)?;
    if l.block[0] != 128 || l.col_stride != 1 {
        return Err(format!(
            "slices of tensor memory are supported for block M 128 and col_stride 1, not {}",
            AnyLayout::TensorMemory(l.clone())
        ));
    }
    if !length.is_power_of_two() || start.checked_add(length).is_none_or(|end| end > shape[1]) {
        return Err(format!("columns {start}..{start}+{length} are not a power-of-two slice of {mem}"));
    }
    if (start * elem.bits()) % 32 != 0 {
        return Err(format!("a slice must start on a 32-bit column, {start} {elem} elements do not"));
    }
    let sub = TensorMemoryLayout { block: [128, l.block[1].min(length)], ..l.clone() };
    let any = AnyLayout::TensorMemory(sub);
    let linear = any.to_linear(&[shape[0], length]).map_err(|e| e.to_string())?;
    Ok((std::sync::Arc::new(crate::types::Layout { spec: Some(any), linear }), start * elem.bits() / 32))
}

/// The `(barrier, predicate)` pairs an MMA commits to.
pub(crate) fn check_barriers(pairs: &[&Type]) -> Result<(), String> {
    if pairs.len() % 2 != 0 {
        return Err("barriers come in (barrier, predicate) pairs".into());
    }
    for pair in pairs.chunks(2) {
        check_barrier(pair[0])?;
        check_pred(pair[1], "barrier predicate")?;
    }
    Ok(())
}

/// The i1 predicate operands of an MMA.
pub(crate) fn check_mma_preds(use_acc: &Type, pred: &Type) -> Result<(), String> {
    check_pred(use_acc, "use_acc")?;
    check_pred(pred, "pred")
}

/// The f32 accumulator `acc` of an MMA: a tensor-memory buffer and its layout.
pub(crate) fn check_accumulator(acc: &Type) -> Result<(&[u32], &TensorMemoryLayout), String> {
    check_buffer(acc)?;
    let (c, c_elem, c_layout) = tmem_parts(acc)?;
    if c_elem != ScalarType::F32 {
        return Err(format!("the accumulator must hold f32, got {c_elem}"));
    }
    Ok((c, c_layout))
}

/// The shape `[M, N]` of each `tcgen05.mma` of an `m x n` product into an accumulator laid out by `acc`: its
/// block M (64 or 128) by its block N (at most N); the product is a grid of them.
pub fn instr_shape(acc: &TensorMemoryLayout, m: u32, n: u32) -> [u32; 2] {
    [acc.block[0].min(m), acc.block[1].min(n)]
}
