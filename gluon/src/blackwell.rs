//! Blackwell (`triton.experimental.gluon.language.nvidia.blackwell`): tensor memory. `TensorMemoryLayout(block,
//! col_stride)`, `TensorMemoryScalesLayout()` and `get_tmem_reg_layout` are the shared layout binder's;
//! `get_tmem_32x32b_reg_layout(M, N, shape, num_warps)` is the register layout of the `32x32b` access;
//! `allocate_tensor_memory(element_ty, shape, layout, value=None)` (`tmem_alloc`) returns a tensor-memory
//! descriptor with `load(layout)` (`tmem_load`), `store(value)` (`tmem_store`), `get_reg_layout()`, and for
//! `TensorMemoryLayout` buffers `slice(start, length)` (columns, `memdesc_slice`), `index(i)` and
//! `_reinterpret(...)`; its attributes are `shape`, `dtype`, `layout`, `type`. A buffer laid out by a
//! `TensorMemoryScalesLayout` holds the 8-bit block scales of `tcgen05_mma_scaled`. The tensor-core ops
//! (`tcgen05_mma`, `tcgen05_mma_scaled`, `tcgen05_copy`, `tcgen05_commit`) are [`crate::tcgen05`]'s; the module's
//! `mbarrier`, `tma` and `fence_async_shared` are Hopper's.

use std::rc::Rc;
use std::sync::Arc;

use tessel_lang::Span;
use tessel_lang::elab::builtins::{Arg, Bound, CallArgs};
use tessel_lang::elab::registry::{Handler, Registry};
use tessel_lang::elab::value::{Dtype, Tv, Value};
use tessel_lang::elab::{Elab, R};
use tessel_layouts::{
    AnyLayout, DistributedLayout, TensorMemoryLayout, TensorMemoryScalesLayout, TmemAccess, TmemRegLayout,
};
use tessel_tile::ops::Op;
use tessel_tile::types::Shape;
use tessel_tile::{Elem, Layout, ScalarType, Type};

use crate::layouts::{distributed_arg, linear_spec};
use crate::smem::{memdesc, scalar_dtype};
use crate::{BLACKWELL, HOPPER_MBARRIER, HOPPER_TMA};

pub const BLACKWELL_MBARRIER: &str = "triton.experimental.gluon.language.nvidia.blackwell.mbarrier";
pub const BLACKWELL_TMA: &str = "triton.experimental.gluon.language.nvidia.blackwell.tma";

pub fn register(r: &mut Registry) {
    r.module(BLACKWELL_MBARRIER, "mbarrier");
    r.reexport(BLACKWELL_MBARRIER, HOPPER_MBARRIER);
    r.module(BLACKWELL_TMA, "tma");
    r.reexport(BLACKWELL_TMA, HOPPER_TMA);
    r.add(BLACKWELL, "fence_async_shared", Handler::Bound("cluster=False", crate::mbarrier::fence));
    r.add(BLACKWELL, "TensorMemoryLayout", Handler::Raw(crate::layouts::layout_call));
    r.add(BLACKWELL, "TensorMemoryScalesLayout", Handler::Raw(crate::layouts::layout_call));
    r.add(BLACKWELL, "get_tmem_reg_layout", Handler::Raw(reg_layout));
    r.add(BLACKWELL, "get_tmem_32x32b_reg_layout", Handler::Bound("M, N, shape, num_warps", reg_layout_32x32b));
    r.add(BLACKWELL, "allocate_tensor_memory", Handler::Bound("element_ty, shape, layout, value=None", allocate));
    // The descriptor's class: a name for annotations and for factories that take the class as a value.
    r.add(BLACKWELL, "tensor_memory_descriptor", Handler::Type);
}

const METHODS: &[&str] = &["load", "store", "slice", "index", "_reinterpret", "reinterpret", "get_reg_layout"];
/// Methods of Gluon's tensor-memory descriptor tessel does not have yet (`tcgen05.ld.red` is not on sm_100a).
const NOT_YET: &[&str] = &["load_min", "load_max"];
const ATTRS: &[&str] = &["shape", "dtype", "element_ty", "layout", "type"];

/// `get_tmem_32x32b_reg_layout(M, N, shape, num_warps)`: the register layout of `tcgen05.ld/st.32x32b` for a
/// `shape` tensor in a `TensorMemoryLayout((M, N), 1)` buffer.
fn reg_layout_32x32b<'a>(e: &mut Elab<'a>, b: Bound<'a>) -> R<Value<'a>> {
    let fname = b.fname.clone();
    let int = |e: &Elab<'a>, k: &str| -> R<u32> {
        let a = b.req(k);
        match e.const_int(a, &fname, k)? {
            v if (1..=1 << 16).contains(&v) => Ok(v as u32),
            v => Err(e.err(a.span, format!("`{k}` of `{fname}` must be a positive integer, got {v}"))),
        }
    };
    let (m, n, num_warps) = (int(e, "M")?, int(e, "N")?, int(e, "num_warps")?);
    let shape = e.shape_arg(b.req("shape"), &fname)?;
    let tmem = TensorMemoryLayout { block: [m, n], col_stride: 1, two_ctas: false, cta_split: [1, 1] };
    let reg = TmemRegLayout::new(tmem, TmemAccess::B32x32, num_warps);
    let layout = AnyLayout::Distributed(DistributedLayout::TmemReg(reg));
    let linear = as_linear(&layout, &shape).map_err(|err| e.err(b.span, format!("`{fname}`: {err}")))?;
    Ok(Value::Layout(Rc::new(linear)))
}

/// A register layout for tensors of `shape` spelt by its bases (`DistributedLinearLayout`), as Gluon returns
/// tensor-memory register layouts: its slices then lay out the row and column indices.
fn as_linear(layout: &AnyLayout, shape: &[u32]) -> Result<AnyLayout, String> {
    let l = layout.to_linear(shape).map_err(|e| e.to_string())?;
    Ok(linear_spec(&l, shape))
}

/// `get_tmem_reg_layout(element_ty, shape, layout, num_warps, instr_variant="32x32b")` (the layout binder's),
/// returned as its bases for `shape`.
fn reg_layout<'a>(e: &mut Elab<'a>, name: &'static str, args: CallArgs<'a>) -> R<Value<'a>> {
    let fname = format!("blackwell.{name}");
    let shape_arg =
        args.kw.iter().find(|(k, _)| k == "shape").map(|(_, a)| a.clone()).or_else(|| args.pos.get(1).cloned());
    let span = args.span;
    let v = crate::layouts::layout_call(e, name, args)?;
    let (Value::Layout(l), Some(shape_arg)) = (&v, shape_arg) else { return Ok(v) };
    if !matches!(l.as_ref(), AnyLayout::Distributed(DistributedLayout::TmemReg(_))) {
        return Ok(v);
    }
    let shape = e.shape_arg(&shape_arg, &fname)?;
    let linear = as_linear(l, &shape).map_err(|err| e.err(span, format!("`{fname}`: {err}")))?;
    Ok(Value::Layout(Rc::new(linear)))
}

/// The tensor-memory descriptor inside a value, if it is one.
pub fn tmem_desc<'v>(v: &'v Value<'_>) -> Option<&'v Tv> {
    memdesc(v).filter(|t| t.ty.is_tmem())
}

fn tmem_layout<'a>(e: &Elab<'a>, a: &Arg<'a>, fname: &str) -> R<TensorMemoryLayout> {
    match &a.value {
        Value::Layout(l) => match l.as_ref() {
            AnyLayout::TensorMemory(t) => Ok(t.clone()),
            AnyLayout::TensorMemoryScales(_) => Err(e.err(
                a.span,
                format!(
                    "`{fname}`: tensor memory laid out by a TensorMemoryScalesLayout (block scales for \
                     tcgen05_mma_scaled) is not supported by tessel yet"
                ),
            )),
            other => Err(e.err_hint(
                a.span,
                format!("`layout` of `{fname}` must be a TensorMemoryLayout, got {other}"),
                "e.g. `TensorMemoryLayout(block=(128, 64), col_stride=1)`",
            )),
        },
        other => {
            Err(e.err(a.span, format!("`layout` of `{fname}` must be a TensorMemoryLayout, got {}", other.describe())))
        }
    }
}

/// `allocate_tensor_memory(element_ty, shape, layout, value=None)`.
fn allocate<'a>(e: &mut Elab<'a>, b: Bound<'a>) -> R<Value<'a>> {
    let fname = b.fname.clone();
    let elem = scalar_dtype(e, b.req("element_ty"), &fname, "element_ty")?;
    if let Value::Layout(l) = &b.req("layout").value
        && let AnyLayout::TensorMemoryScales(scales) = l.as_ref()
    {
        return allocate_scales(e, &b, elem, scales);
    }
    let tmem = tmem_layout(e, b.req("layout"), &fname)?.for_bits(elem.bits());
    if elem.bits() != 32 && elem.bits() != 16 {
        return Err(e.err(
            b.req("element_ty").span,
            format!("tensor memory holds 32- or 16-bit elements, got {}", elem.triton_name()),
        ));
    }
    let shape_arg = b.req("shape");
    let shape = e.shape_arg(shape_arg, &fname)?;
    if shape.len() != 2 && shape.len() != 3 {
        return Err(e.err(
            shape_arg.span,
            format!("tensor memory holds matrices ([M, N], or [buffers, M, N]), got shape {shape:?}"),
        ));
    }
    let ty = buffer_type(e, &b, AnyLayout::TensorMemory(tmem), &shape, elem)?;
    emit_alloc(e, &b, &fname, ty)
}

/// The tensor-memory memdesc of `shape` and `elem` laid out by `any` (the call's `layout` argument).
fn buffer_type<'a>(e: &mut Elab<'a>, b: &Bound<'a>, any: AnyLayout, shape: &[u32], elem: ScalarType) -> R<Type> {
    let linear = any.to_linear(shape).map_err(|err| e.err(b.req("layout").span, format!("layout {any}: {err}")))?;
    let layout = Arc::new(Layout { spec: Some(any), linear });
    Ok(Type::MemDesc { shape: Shape::from_slice(shape), elem, layout })
}

/// `tmem_alloc` of a buffer of type `ty`, initialized from the call's `value` when it has one.
fn emit_alloc<'a>(e: &mut Elab<'a>, b: &Bound<'a>, fname: &str, ty: Type) -> R<Value<'a>> {
    let init = match b.opt("value").filter(|a| !matches!(a.value, Value::None)) {
        Some(a) => {
            let t = e.tensor_arg(a, fname, "value")?;
            check_moved(e, &t, &ty, a.span)?;
            vec![t]
        }
        None => vec![],
    };
    Ok(Value::Tensor(e.emit1(Op::TmemAlloc, &init, ty, b.span)?))
}

/// `allocate_tensor_memory(element_ty, shape, TensorMemoryScalesLayout(), value=None)`: a buffer of block
/// scales (`[rows, scales]` of u8 e8m0 or float8e4nv e4m3).
fn allocate_scales<'a>(
    e: &mut Elab<'a>,
    b: &Bound<'a>,
    elem: ScalarType,
    scales: &TensorMemoryScalesLayout,
) -> R<Value<'a>> {
    let fname = b.fname.clone();
    let shape_arg = b.req("shape");
    let shape = e.shape_arg(shape_arg, &fname)?;
    if shape.len() != 2 {
        return Err(
            e.err(shape_arg.span, format!("a buffer of scales is 2-D ([rows, K // VEC_SIZE]), got shape {shape:?}"))
        );
    }
    let ty = buffer_type(e, b, AnyLayout::TensorMemoryScales(scales.clone()), &shape, elem)?;
    if let Err(m) = tessel_tile::tmem_types::check_scales_type(&ty) {
        return Err(e.err(b.span, format!("`{fname}`: {m}")));
    }
    emit_alloc(e, b, &fname, ty)
}

/// A tensor stored into (or allocated with) a tensor-memory buffer: its shape, element type and register layout.
fn check_moved<'a>(e: &Elab<'a>, t: &Tv, mem: &Type, span: Span) -> R<()> {
    crate::smem::check_fits(e, t, mem, "tensor-memory", span)?;
    check_reg_layout(e, t.ty.layout(), mem, span)
}

/// A register layout moving `mem` must be one of its access layouts (`get_tmem_reg_layout`'s variants) over the
/// kernel's warps (4 or 8).
fn check_reg_layout<'a>(e: &Elab<'a>, have: Option<&Layout>, mem: &Type, span: Span) -> R<()> {
    let Some(have) = have else { return Ok(()) };
    let (shape, elem, _) = mem.memdesc().expect("a memdesc");
    if shape.len() != 2 {
        return Err(e.err(span, format!("tensor memory moves to and from registers as [M, N]; `index` {} first", mem)));
    }
    let warps = e.warps();
    if warps != 4 && warps != 8 {
        return Err(e.err(span, format!("tensor-memory loads and stores need 4 or 8 warps, the kernel has {warps}")));
    }
    if tessel_tile::tmem_types::access_of(&have.linear, mem, warps).is_none() {
        return Err(e.err_hint(
            span,
            format!(
                "the register layout must be an access layout of {} over {warps} warps, got {}",
                tessel_tile::tmem_types::layout_name(mem),
                have.spec.as_ref().map_or_else(|| tessel_tile::types::linear_spelling(&have.linear), |s| s.to_string())
            ),
            format!(
                "use `mem.get_reg_layout()` or `get_tmem_reg_layout({}, {shape:?}, layout, {warps})`",
                elem.triton_name()
            ),
        ));
    }
    Ok(())
}

/// The attributes of a tensor-memory descriptor.
pub fn attr<'a>(e: &Elab<'a>, v: &Value<'a>, t: &Tv, name: &str, span: Span) -> R<Option<Value<'a>>> {
    let (shape, elem, layout) = t.ty.memdesc().expect("a memdesc");
    let ints = |v: &[u32]| Value::tuple(v.iter().map(|&x| Value::Int(x as i128)).collect());
    Ok(Some(match name {
        "shape" => ints(shape),
        "dtype" | "element_ty" => Value::Dtype(Dtype::Scalar(elem)),
        "layout" => Value::Layout(Rc::new(layout.spec.clone().expect("a TensorMemoryLayout"))),
        "type" => v.clone(),
        m if METHODS.contains(&m) || NOT_YET.contains(&m) => Value::Method(Rc::new((v.clone(), m.to_string()))),
        _ => {
            let mut err = e.err(span, format!("a tensor-memory descriptor has no attribute `{name}`"));
            if let Some(best) = tessel_lang::elab::names::closest(name, METHODS.iter().chain(ATTRS).copied()) {
                err.diag = err.diag.with_hint(format!("did you mean `.{best}`?"));
            }
            return Err(err);
        }
    }))
}

/// The methods of a tensor-memory descriptor (the registry's method hook sends them here).
pub fn method<'a>(e: &mut Elab<'a>, mem: Tv, name: &str, args: CallArgs<'a>, span: Span) -> R<Option<Value<'a>>> {
    let fname = format!("tensor_memory_descriptor.{name}");
    match name {
        "load" => {
            let b = e.bind(&fname, "layout=None", args)?;
            let (shape, elem, _) = mem.ty.memdesc().expect("a memdesc");
            let layout = match b.opt("layout").filter(|a| !matches!(a.value, Value::None)) {
                // The 32x32b access layout, as `get_reg_layout()` gives it.
                None => {
                    let variant = crate::tmem_type::RegVariant::Access(TmemAccess::B32x32);
                    let spec = crate::tmem_type::reg_layout_of(e, &mem.ty, variant, e.warps(), span)?;
                    let linear = spec.to_linear(shape).map_err(|m| e.err(span, m.to_string()))?;
                    Some(Arc::new(Layout { spec: Some(spec), linear }))
                }
                Some(a) => {
                    if distributed_arg(e, a, &fname)?.is_none() {
                        return Err(e.err(a.span, format!("`{fname}` needs the layout of the loaded tensor")));
                    }
                    e.layout_kwarg(&b, shape)?
                }
            };
            check_reg_layout(e, layout.as_deref(), &mem.ty, b.opt("layout").map_or(span, |a| a.span))?;
            let ty = Type::Tensor { shape: Shape::from_slice(shape), elem: Elem::Scalar(elem), layout };
            Ok(Some(Value::Tensor(e.emit1(Op::TmemLoad, &[mem], ty, span)?)))
        }
        "store" => {
            let b = e.bind(&fname, "value, pred=True", args)?;
            if !matches!(b.req("pred").value, Value::Bool(true)) {
                return Err(e.err(b.req("pred").span, format!("`pred` of `{fname}` is not supported by tessel yet")));
            }
            let t = e.tensor_arg(b.req("value"), &fname, "value")?;
            check_moved(e, &t, &mem.ty, b.req("value").span)?;
            e.emit(Op::TmemStore, &[t, mem], vec![], span)?;
            Ok(Some(Value::None))
        }
        "slice" => {
            let b = e.bind(&fname, "start, length", args)?;
            let get = |e: &Elab<'a>, k: &str| -> R<u32> {
                let a = b.req(k);
                match e.const_int(a, &fname, k)? {
                    v if (0..=u32::MAX as i128).contains(&v) => Ok(v as u32),
                    v => Err(e.err(a.span, format!("`{k}` of `{fname}` must be a non-negative integer, got {v}"))),
                }
            };
            let (start, length) = (get(e, "start")?, get(e, "length")?);
            let (layout, _) =
                tessel_tile::tmem_types::slice_layout(&mem.ty, start, length).map_err(|m| e.err(span, m))?;
            let (shape, elem, _) = mem.ty.memdesc().expect("a memdesc");
            let ty = Type::MemDesc { shape: Shape::from_slice(&[shape[0], length]), elem, layout };
            Ok(Some(Value::Tensor(e.emit1(Op::MemDescSlice { dim: 1, start }, &[mem], ty, span)?)))
        }
        "get_reg_layout" => {
            let b = e.bind(&fname, "num_warps=None, instr_variant=\"32x32b\"", args)?;
            let warps = match b.opt("num_warps").filter(|a| !matches!(a.value, Value::None)) {
                Some(a) => crate::tmem_type::warps_arg(e, a, &fname)?,
                None => e.warps(),
            };
            let variant = crate::tmem_type::variant_arg(e, b.opt("instr_variant"), &fname)?;
            Ok(Some(Value::Layout(Rc::new(crate::tmem_type::reg_layout_of(e, &mem.ty, variant, warps, span)?))))
        }
        "index" => {
            let b = e.bind(&fname, "index", args)?;
            let ty = tessel_tile::tmem_types::index_type(&mem.ty).map_err(|m| e.err(span, m))?;
            let n = mem.ty.shape()[0];
            let idx = crate::smem::index_operand(e, b.req("index"), n)?;
            Ok(Some(Value::Tensor(e.emit1(Op::MemDescIndex, &[mem, idx], ty, span)?)))
        }
        "_reinterpret" | "reinterpret" => {
            let b = e.bind(&fname, "dtype=None, shape=None, layout=None", args)?;
            let (shape, elem, own) = tessel_tile::tmem_types::tmem_parts(&mem.ty).map_err(|m| e.err(span, m))?;
            let given = |name: &str| b.opt(name).filter(|a| !matches!(a.value, Value::None));
            let to = match given("dtype") {
                Some(a) => scalar_dtype(e, a, &fname, "dtype")?,
                None => elem,
            };
            let new_shape = match given("shape") {
                Some(a) => e.shape_arg(a, &fname)?,
                None => shape.to_vec(),
            };
            let layout = match given("layout") {
                Some(a) => tmem_layout(e, a, &fname)?,
                None => own.clone(),
            }
            .for_bits(to.bits());
            let at = given("layout").map_or(span, |a| a.span);
            let ty = tessel_tile::tmem_types::tmem_type(&new_shape, to, &layout).map_err(|m| e.err(at, m))?;
            if let Err(m) = tessel_tile::verify_tmem::check_reinterpret(&mem.ty, &ty) {
                return Err(e.err(span, format!("`{fname}`: {m}")));
            }
            Ok(Some(Value::Tensor(e.emit1(Op::MemDescReinterpret, &[mem], ty, span)?)))
        }
        _ => Err(e.err(span, format!("`{fname}` is not supported by tessel yet"))),
    }
}
