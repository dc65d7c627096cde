//! Tensor-memory descriptor types as values: `tensor_memory_descriptor_type(element_ty, shape, layout,
//! alloc_shape)` names the type of a descriptor of `shape` viewing an allocation of `alloc_shape` (the
//! attention example builds them to ask for register layouts before any buffer exists). Such a type answers
//! `element_ty`, `shape`, `layout`, `alloc_shape` and `get_reg_layout(num_warps, instr_variant="32x32b")`, the
//! same register layouts a descriptor of that type gives (its `get_reg_layout` is [`reg_layout_of`] too).
//!
//! `instr_variant` is one of `tcgen05.ld/st`'s access shapes, or `"32x32b_splitn"`: the `32x32b` layout with
//! the column half `[0, N / 2]` moved into the last register basis, so that `split` of a loaded tensor along N
//! is free (`DistributedLinearLayout::split_n`).

use std::rc::Rc;

use tessel_lang::Span;
use tessel_lang::elab::builtins::{Arg, Bound, CallArgs};
use tessel_lang::elab::registry::{Handler, Registry};
use tessel_lang::elab::value::{Dtype, MemType, Value};
use tessel_lang::elab::{Elab, R};
use tessel_layouts::{AnyLayout, DistributedLayout, TmemAccess};
use tessel_tile::Type;
use tessel_tile::types::Shape;

use crate::BLACKWELL;
use crate::smem::scalar_dtype;

pub fn register(r: &mut Registry) {
    r.add(BLACKWELL, "tensor_memory_descriptor_type", Handler::Bound("element_ty, shape, layout, alloc_shape", make));
}

const ATTRS: &[&str] = &["element_ty", "dtype", "shape", "layout", "alloc_shape", "get_reg_layout"];

/// A register-layout variant of `get_reg_layout`: an access shape, or `32x32b` split along N.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RegVariant {
    Access(TmemAccess),
    SplitN,
}

/// `tensor_memory_descriptor_type(element_ty, shape, layout, alloc_shape)`.
fn make<'a>(e: &mut Elab<'a>, b: Bound<'a>) -> R<Value<'a>> {
    let fname = b.fname.clone();
    let elem = scalar_dtype(e, b.req("element_ty"), &fname, "element_ty")?;
    let shape = e.shape_arg(b.req("shape"), &fname)?;
    let alloc_shape = e.shape_arg(b.req("alloc_shape"), &fname)?;
    let (layout_arg, shape_span) = (b.req("layout"), b.req("shape").span);
    let layout = match &layout_arg.value {
        Value::Layout(l) if matches!(l.as_ref(), AnyLayout::TensorMemory(_) | AnyLayout::TensorMemoryScales(_)) => {
            l.as_ref().clone()
        }
        other => {
            return Err(e.err_hint(
                layout_arg.span,
                format!(
                    "`layout` of `{fname}` must be a TensorMemoryLayout or TensorMemoryScalesLayout, got {}",
                    other.describe()
                ),
                "e.g. `TensorMemoryLayout(block=(128, 64), col_stride=1)`",
            ));
        }
    };
    if !(2..=3).contains(&shape.len()) || alloc_shape.len() < shape.len() {
        return Err(e.err(
            shape_span,
            format!(
                "a tensor-memory descriptor is [M, N] or [buffers, M, N] viewing an allocation of at least its rank, \
                 got shape {shape:?} of alloc_shape {alloc_shape:?}"
            ),
        ));
    }
    let ty = view_type(&shape, &alloc_shape, elem, &layout).map_err(|m| e.err(b.span, format!("`{fname}`: {m}")))?;
    Ok(Value::MemType(Rc::new(MemType { ty, alloc_shape })))
}

/// The memdesc type of a `shape` view (`index` of the leading dims, then a column `slice`) of an allocation of
/// `alloc_shape` laid out by `layout`: the type such a descriptor carries.
fn view_type(
    shape: &[u32],
    alloc_shape: &[u32],
    elem: tessel_tile::ScalarType,
    layout: &AnyLayout,
) -> Result<Type, String> {
    let inner = &alloc_shape[alloc_shape.len() - shape.len()..];
    match layout {
        AnyLayout::TensorMemoryScales(s) => {
            if shape != alloc_shape {
                return Err(format!(
                    "views of block-scale buffers are not supported, got shape {shape:?} of {alloc_shape:?}"
                ));
            }
            let any = AnyLayout::TensorMemoryScales(s.clone());
            let linear = any.to_linear(shape).map_err(|m| format!("{any}: {m}"))?;
            let layout = std::sync::Arc::new(tessel_tile::Layout { spec: Some(any), linear });
            let ty = Type::MemDesc { shape: Shape::from_slice(shape), elem, layout };
            tessel_tile::tmem_types::check_scales_type(&ty)?;
            Ok(ty)
        }
        AnyLayout::TensorMemory(t) => {
            if elem.bits() != 32 && elem.bits() != 16 {
                return Err(format!("tensor memory holds 32- or 16-bit elements, got {}", elem.triton_name()));
            }
            let tmem = t.for_bits(elem.bits());
            let full = tessel_tile::tmem_types::tmem_type(inner, elem, &tmem)?;
            if shape == inner {
                return Ok(full);
            }
            let r = shape.len();
            if shape[..r - 1] != inner[..r - 1] || shape[r - 1] > inner[r - 1] {
                return Err(format!(
                    "shape {shape:?} is not a column slice of alloc_shape {alloc_shape:?} (only the last dim may be \
                     narrower)"
                ));
            }
            if r != 2 {
                return Err(format!("column slices of buffered tensor memory ({shape:?}) are not supported"));
            }
            let (layout, _) = tessel_tile::tmem_types::slice_layout(&full, 0, shape[1])?;
            Ok(Type::MemDesc { shape: Shape::from_slice(shape), elem, layout })
        }
        _ => unreachable!("checked by `make`"),
    }
}

/// The attributes of a tensor-memory descriptor type.
pub fn attr<'a>(e: &Elab<'a>, v: &Value<'a>, m: &MemType, name: &str, span: Span) -> R<Option<Value<'a>>> {
    let (shape, elem, layout) = m.ty.memdesc().expect("a memdesc");
    let ints = |v: &[u32]| Value::tuple(v.iter().map(|&x| Value::Int(x as i128)).collect());
    Ok(Some(match name {
        "shape" => ints(shape),
        "alloc_shape" => ints(&m.alloc_shape),
        "element_ty" | "dtype" => Value::Dtype(Dtype::Scalar(elem)),
        "layout" => Value::Layout(Rc::new(layout.spec.clone().expect("a tensor-memory layout"))),
        "get_reg_layout" => Value::Method(Rc::new((v.clone(), name.to_string()))),
        _ => {
            let mut err = e.err(span, format!("a tensor-memory descriptor type has no attribute `{name}`"));
            if let Some(best) = tessel_lang::elab::names::closest(name, ATTRS.iter().copied()) {
                err.diag = err.diag.with_hint(format!("did you mean `.{best}`?"));
            }
            return Err(err);
        }
    }))
}

/// The methods of a tensor-memory descriptor type: `get_reg_layout(num_warps, instr_variant="32x32b")`, whose
/// `num_warps` is required (a type is not in a kernel's warps).
pub fn method<'a>(e: &mut Elab<'a>, m: &MemType, name: &str, args: CallArgs<'a>, span: Span) -> R<Option<Value<'a>>> {
    let fname = format!("tensor_memory_descriptor_type.{name}");
    if name != "get_reg_layout" {
        return Err(e.err(span, format!("a tensor-memory descriptor type has no method `{name}`")));
    }
    let b = e.bind(&fname, "num_warps=None, instr_variant=\"32x32b\"", args)?;
    let Some(w) = b.opt("num_warps").filter(|a| !matches!(a.value, Value::None)) else {
        return Err(e.err_hint(
            span,
            format!("`{fname}` needs `num_warps`: a type does not know the warps that will move it"),
            "pass it, e.g. `ty.get_reg_layout(num_warps=4)`",
        ));
    };
    let warps = warps_arg(e, w, &fname)?;
    let variant = variant_arg(e, b.opt("instr_variant"), &fname)?;
    reg_layout_of(e, &m.ty, variant, warps, span).map(|l| Some(Value::Layout(Rc::new(l))))
}

/// `num_warps` of `get_reg_layout`: a power of two, at least 4.
pub fn warps_arg<'a>(e: &Elab<'a>, a: &Arg<'a>, fname: &str) -> R<u32> {
    match e.const_int(a, fname, "num_warps")? {
        w if (4..=1 << 10).contains(&w) && (w & (w - 1)) == 0 => Ok(w as u32),
        w => Err(e.err(a.span, format!("`num_warps` of `{fname}` must be a power of two, at least 4, got {w}"))),
    }
}

/// `instr_variant` of `get_reg_layout`: an access shape or `"32x32b_splitn"`, or an error naming the variants.
pub fn variant_arg<'a>(e: &Elab<'a>, a: Option<&Arg<'a>>, fname: &str) -> R<RegVariant> {
    let Some(a) = a.filter(|a| !matches!(a.value, Value::None)) else {
        return Ok(RegVariant::Access(TmemAccess::B32x32));
    };
    let Value::Str(s) = &a.value else {
        return Err(e.err(a.span, format!("`instr_variant` of `{fname}` must be a string, got {}", a.value.describe())));
    };
    if &**s == "32x32b_splitn" {
        return Ok(RegVariant::SplitN);
    }
    match tessel_tile::tmem_types::ACCESSES.into_iter().find(|x| x.ptx_name() == &**s) {
        Some(x) => Ok(RegVariant::Access(x)),
        None => Err(e.err(a.span, tessel_layouts::expr::tmem_variant_error(s))),
    }
}

/// The register layout of moving a tensor-memory buffer of type `mem` with `variant` over `warps` warps, as its
/// bases.
pub fn reg_layout_of<'a>(e: &Elab<'a>, mem: &Type, variant: RegVariant, warps: u32, span: Span) -> R<AnyLayout> {
    let (shape, elem, _) = mem.memdesc().expect("a memdesc");
    let access = match variant {
        RegVariant::Access(a) => a,
        RegVariant::SplitN => TmemAccess::B32x32,
    };
    let l = tessel_tile::tmem_types::mem_reg_layout(mem, access, warps).map_err(|m| e.err(span, m))?;
    let AnyLayout::Distributed(DistributedLayout::Linear(spec)) = crate::layouts::linear_spec(&l, shape) else {
        unreachable!("linear_spec spells bases")
    };
    let spec = match variant {
        RegVariant::SplitN if shape.len() == 2 => spec.split_n(shape[1], elem.bits()).map_err(|m| e.err(span, m))?,
        RegVariant::SplitN => {
            return Err(e.err(span, format!("32x32b_splitn is for [M, N] tensor memory, got shape {shape:?}")));
        }
        RegVariant::Access(_) => spec,
    };
    Ok(AnyLayout::Distributed(DistributedLayout::Linear(spec)))
}
