//! Shared memory: `gl.allocate_shared_memory(element_ty, shape, layout, value=None)` and the shared-memory
//! descriptor it returns, a `memdesc` value of the IR (`local_alloc`). Its methods: `load(layout)`
//! (`local_load` into a distributed layout), `store(value)` (`local_store`), `index(i)` (`memdesc_index`: buffer
//! `i` of a multi-buffered allocation, the leading dim dropped), the views `permute(order)`, `reshape(shape)`,
//! `slice(start, length, dim=0)` (`memdesc_permute/reshape/slice`), `_keep_alive()`; its attributes: `shape`,
//! `dtype` (`element_ty`), `layout`, `rank`, `numel`, `nbytes_per_cta`, and `type` (the descriptor itself, so
//! that `smem.type.shape` and `smem.type.layout` read as in Gluon).
//!
//! A shared layout of rank `r` lays out an allocation of rank `r + k`: the `k` leading dims count whole buffers
//! (`AnyLayout::to_linear_buffered`), as in Gluon.

use std::rc::Rc;
use std::sync::Arc;

use tessel_lang::Span;
use tessel_lang::elab::builtins::{Arg, Bound, CallArgs};
use tessel_lang::elab::registry::{Handler, Registry};
use tessel_lang::elab::value::{Dtype, Tv, Value};
use tessel_lang::elab::{Elab, R};
use tessel_layouts::{AnyLayout, SharedLayout};
use tessel_tile::ops::{Const, Op};
use tessel_tile::types::Shape;
use tessel_tile::{Elem, Layout, ScalarType, Type};

use crate::GL;
use crate::layouts::{distributed_arg, shared_arg, spec_of};

pub fn register(r: &mut Registry) {
    r.add(GL, "allocate_shared_memory", Handler::Bound("element_ty, shape, layout, value=None", allocate));
    // The descriptor's class: a name for annotations and for factories that take the class as a value.
    r.add(GL, "shared_memory_descriptor", Handler::Type);
}

/// The names a descriptor answers to as methods.
const METHODS: &[&str] =
    &["load", "store", "index", "permute", "reshape", "slice", "reinterpret", "_reinterpret", "_keep_alive"];
/// Methods of Gluon's descriptor tessel does not have yet.
const NOT_YET: &[&str] = &["gather", "scatter"];
const ATTRS: &[&str] = &["shape", "dtype", "element_ty", "layout", "rank", "numel", "nbytes_per_cta", "type"];

/// `gl.allocate_shared_memory(element_ty, shape, layout, value=None)`.
fn allocate<'a>(e: &mut Elab<'a>, b: Bound<'a>) -> R<Value<'a>> {
    let fname = b.fname.clone();
    let elem = scalar_dtype(e, b.req("element_ty"), &fname, "element_ty")?;
    let layout_arg = b.req("layout");
    let spec = shared_arg(e, layout_arg, &fname)?;
    let shape = buffer_shape(e, b.req("shape"), &fname, spec.rank())?;
    let layout = shared_layout(e, &spec, &shape, elem, layout_arg.span)?;
    let ty = Type::MemDesc { shape: Shape::from_slice(&shape), elem, layout };
    let init = match b.opt("value") {
        Some(a) => {
            let t = e.tensor_arg(a, &fname, "value")?;
            check_fits(e, &t, &ty, "shared-memory", a.span)?;
            vec![t]
        }
        None => vec![],
    };
    Ok(Value::Tensor(e.emit1(Op::LocalAlloc, &init, ty, b.span)?))
}

/// The shape of a buffer laid out by a rank-`rank` shared layout: the trailing `rank` dims are powers of two, as
/// tile dims are; the leading ones count buffers (a ring of 3 is fine, the layout spans the next power of two).
fn buffer_shape<'a>(e: &Elab<'a>, a: &Arg<'a>, fname: &str, rank: usize) -> R<Vec<u32>> {
    let dims = e.int_list(a, fname, "shape")?;
    let lead = dims.len().saturating_sub(rank);
    let mut out = Vec::with_capacity(dims.len());
    for (i, &d) in dims.iter().enumerate() {
        if i >= lead {
            e.check_pow2(d, &format!("shape[{i}]"), a.span)?;
        } else if !(1..=1 << 16).contains(&d) {
            return Err(e.err(a.span, format!("shape[{i}] counts buffers: it must be in 1..=65536, got {d}")));
        }
        out.push(d as u32);
    }
    Ok(out)
}

/// A dtype argument that is a scalar type.
pub fn scalar_dtype<'a>(e: &Elab<'a>, a: &Arg<'a>, fname: &str, what: &str) -> R<ScalarType> {
    match e.dtype_arg(a, fname, what)? {
        Dtype::Scalar(s) => Ok(s),
        other => Err(e.err(a.span, format!("`{what}` of `{fname}` must be a scalar dtype, got {other}"))),
    }
}

/// The layout of a buffer of `shape` and `elem` laid out by `spec`, checked against both (at `span`).
pub fn shared_layout<'a>(
    e: &Elab<'a>,
    spec: &SharedLayout,
    shape: &[u32],
    elem: ScalarType,
    span: Span,
) -> R<Arc<Layout>> {
    if spec.rank() > shape.len() {
        return Err(
            e.err(span, format!("a rank-{} shared layout cannot lay out a buffer of shape {shape:?}", spec.rank()))
        );
    }
    if let SharedLayout::Nvmma(n) = spec
        && n.element_bitwidth != elem.bits()
    {
        return Err(e.err_hint(
            span,
            format!(
                "this NVMMASharedLayout is for {}-bit elements, but the buffer holds {} ({} bits)",
                n.element_bitwidth,
                elem.triton_name(),
                elem.bits()
            ),
            "use `gl.NVMMASharedLayout.get_default_for(block_shape, dtype)`",
        ));
    }
    let any = AnyLayout::Shared(spec.clone());
    let linear = any.to_linear_buffered(shape).map_err(|err| e.err(span, format!("layout {any}: {err}")))?;
    Ok(Arc::new(Layout { spec: Some(any), linear }))
}

/// A tensor stored into (or allocated with) a buffer must have its shape and element type; `space` names the
/// buffer's memory in messages ("shared-memory", "tensor-memory").
pub(crate) fn check_fits<'a>(e: &Elab<'a>, t: &Tv, mem: &Type, space: &str, span: Span) -> R<()> {
    let (shape, elem, _) = mem.memdesc().expect("a memdesc");
    if !t.is_block() || t.shape() != shape {
        return Err(
            e.err(span, format!("the tensor has shape {:?}, but the {space} buffer has shape {shape:?}", t.shape()))
        );
    }
    if t.elem() != Some(Elem::Scalar(elem)) {
        return Err(e.err_hint(
            span,
            format!("the tensor holds {}, but the {space} buffer holds {}", t.ty, elem.triton_name()),
            format!("convert it first with `.to(gl.{})`", elem.triton_name()),
        ));
    }
    Ok(())
}

/// The memdesc inside a value, if it is one.
pub fn memdesc<'v>(v: &'v Value<'_>) -> Option<&'v Tv> {
    match v {
        Value::Tensor(t) if t.ty.is_memdesc() => Some(t),
        _ => None,
    }
}

/// A shared-memory descriptor argument.
pub fn memdesc_arg<'a>(e: &Elab<'a>, a: &Arg<'a>, fname: &str, what: &str) -> R<Tv> {
    memdesc(&a.value).cloned().ok_or_else(|| {
        e.err_hint(
            a.span,
            format!("`{what}` of `{fname}` must be a shared-memory descriptor, got {}", a.value.describe()),
            "make one with `gl.allocate_shared_memory(dtype, shape, layout)`",
        )
    })
}

/// The attributes of a shared-memory descriptor `t` (the value `v`): `shape`, `dtype`, `layout`... and its methods
/// as bound values.
pub fn attr<'a>(e: &Elab<'a>, v: &Value<'a>, t: &Tv, name: &str, span: Span) -> R<Option<Value<'a>>> {
    let (shape, elem, layout) = t.ty.memdesc().expect("the registry owns memdescs and tokens");
    let ints = |v: &[u32]| Value::tuple(v.iter().map(|&x| Value::Int(x as i128)).collect());
    let numel: u64 = shape.iter().map(|&d| d as u64).product();
    Ok(Some(match name {
        "shape" => ints(shape),
        "dtype" | "element_ty" => Value::Dtype(Dtype::Scalar(elem)),
        "layout" => Value::Layout(Rc::new(spec_of(layout))),
        "rank" => Value::Int(shape.len() as i128),
        "numel" => Value::Int(numel as i128),
        // Each CTA holds its part of a buffer the CTAs of a cluster split.
        "nbytes_per_cta" => {
            let parts = tessel_tile::cluster::parts(&layout.linear) as u64;
            Value::Int((numel * elem.bits() as u64 / 8 / parts) as i128)
        }
        "type" => v.clone(),
        m if METHODS.contains(&m) || NOT_YET.contains(&m) => Value::Method(Rc::new((v.clone(), m.to_string()))),
        _ => {
            let mut err = e.err(span, format!("a shared-memory descriptor has no attribute `{name}`"));
            let known = METHODS.iter().chain(ATTRS).copied();
            if let Some(best) = tessel_lang::elab::names::closest(name, known) {
                err.diag = err.diag.with_hint(format!("did you mean `.{best}`?"));
            }
            return Err(err);
        }
    }))
}

/// The registry's method hook: descriptor methods.
pub fn method<'a>(
    e: &mut Elab<'a>,
    recv: &Value<'a>,
    name: &str,
    args: CallArgs<'a>,
    span: Span,
) -> R<Option<Value<'a>>> {
    let Some(mem) = memdesc(recv).cloned() else { return Ok(None) };
    let fname = format!("shared_memory_descriptor.{name}");
    match name {
        "load" => {
            let b = e.bind(&fname, "layout", args)?;
            // `gl.AutoLayout()` (no layout of its own): layout assignment gives the loaded tensor one, propagated
            // back from where a layout is set (`gl.set_auto_layout`).
            let auto = distributed_arg(e, b.req("layout"), &fname)?.is_none();
            let (shape, elem, _) = mem.ty.memdesc().expect("a memdesc");
            let layout = if auto { None } else { e.layout_kwarg(&b, shape)? };
            let ty = Type::Tensor { shape: Shape::from_slice(shape), elem: Elem::Scalar(elem), layout };
            Ok(Some(Value::Tensor(e.emit1(Op::LocalLoad, &[mem], ty, span)?)))
        }
        "store" => {
            let b = e.bind(&fname, "value", args)?;
            let t = e.tensor_arg(b.req("value"), &fname, "value")?;
            check_fits(e, &t, &mem.ty, "shared-memory", b.req("value").span)?;
            e.emit(Op::LocalStore, &[t, mem], vec![], span)?;
            Ok(Some(Value::None))
        }
        "index" => {
            let b = e.bind(&fname, "index", args)?;
            index(e, mem, b.req("index"), span).map(|t| Some(Value::Tensor(t)))
        }
        "permute" | "reshape" | "slice" => view(e, mem, name, &fname, args, span).map(|t| Some(Value::Tensor(t))),
        "reinterpret" | "_reinterpret" => {
            let b = e.bind(&fname, "dtype=None, shape=None, layout=None", args)?;
            reinterpret(e, mem, b, span).map(|t| Some(Value::Tensor(t)))
        }
        "_keep_alive" => {
            e.bind(&fname, "", args)?;
            Ok(Some(Value::None))
        }
        _ => Err(e.err(span, format!("`{fname}` is not supported by tessel yet"))),
    }
}

/// `mem.permute(order)`, `mem.reshape(shape)`, `mem.slice(start, length, dim=0)`: views of the same bytes
/// (`tessel_tile::layout::shared_views` says which slices are views tessel can address).
fn view<'a>(e: &mut Elab<'a>, mem: Tv, name: &str, fname: &str, args: CallArgs<'a>, span: Span) -> R<Tv> {
    use tessel_tile::layout::shared_views;
    let (shape, elem, layout) = mem.ty.memdesc().expect("a memdesc");
    let shape = shape.to_vec();
    let ints = |e: &Elab<'a>, a: &Arg<'a>, what: &str| -> R<Vec<u32>> {
        let items = match &a.value {
            Value::Tuple(t) => t.to_vec(),
            Value::List(l) => l.borrow().clone(),
            other => {
                return Err(e.err(a.span, format!("`{what}` of `{fname}` must be a tuple, got {}", other.describe())));
            }
        };
        items
            .iter()
            .map(|x| match x.as_int() {
                Some(i) if (0..=u32::MAX as i128).contains(&i) => Ok(i as u32),
                _ => Err(e.err(a.span, format!("`{what}` of `{fname}` must hold compile-time integers"))),
            })
            .collect()
    };
    let (op, result) = match name {
        "permute" => {
            let b = e.bind(fname, "order", args)?;
            let order = ints(e, b.req("order"), "order")?;
            let l = shared_views::permute(layout, &order).map_err(|m| e.err(b.req("order").span, m))?;
            let sh: Vec<u32> = order.iter().map(|&d| shape[d as usize]).collect();
            (Op::MemDescPermute { order }, (sh, l))
        }
        "reshape" => {
            let b = e.bind(fname, "shape", args)?;
            let sh = e.shape_arg(b.req("shape"), fname)?;
            let l = shared_views::reshape(layout, &sh).map_err(|m| e.err(b.req("shape").span, m))?;
            (Op::MemDescReshape, (sh, l))
        }
        _ => {
            let b = e.bind(fname, "start, length, dim=0", args)?;
            let get = |k: &str| -> R<u32> {
                let a = b.req(k);
                match e.const_int(a, fname, k)? {
                    v if (0..=u32::MAX as i128).contains(&v) => Ok(v as u32),
                    v => Err(e.err(a.span, format!("`{k}` of `{fname}` must be a non-negative integer, got {v}"))),
                }
            };
            let (start, length, dim) = (get("start")?, get("length")?, get("dim")?);
            if dim as usize >= shape.len() {
                return Err(e.err(b.req("dim").span, format!("dim {dim} is out of range for shape {shape:?}")));
            }
            let (l, _) = shared_views::slice(layout, dim as usize, start, length).map_err(|m| e.err(span, m))?;
            let mut sh = shape.clone();
            sh[dim as usize] = length;
            (Op::MemDescSlice { dim, start }, (sh, l))
        }
    };
    let ty = Type::MemDesc { shape: Shape::from_slice(&result.0), elem, layout: result.1 };
    e.emit1(op, &[mem], ty, span)
}

/// `mem._reinterpret(dtype, shape, layout)`: the same bytes as `dtype` elements of `shape`, laid out by `layout`
/// (each, when left out, the buffer's own). The elements must keep their size (tessel's interpreter keeps buffers
/// as elements, not bytes).
fn reinterpret<'a>(e: &mut Elab<'a>, mem: Tv, b: Bound<'a>, span: Span) -> R<Tv> {
    let fname = b.fname.clone();
    let (shape, elem, own) = mem.ty.memdesc().expect("a memdesc");
    let numel: u64 = shape.iter().map(|&d| d as u64).product();
    let given = |name: &str| b.opt(name).filter(|a| !matches!(a.value, Value::None));
    let to = match given("dtype") {
        Some(a) => scalar_dtype(e, a, &fname, "dtype")?,
        None => elem,
    };
    if to.bits() != elem.bits() {
        return Err(e.err(
            given("dtype").map_or(span, |a| a.span),
            format!(
                "reinterpreting {} ({} bits) as {} ({} bits) changes the element size, which tessel does not support yet",
                elem.triton_name(),
                elem.bits(),
                to.triton_name(),
                to.bits()
            ),
        ));
    }
    let new_shape = match given("shape") {
        Some(a) => e.shape_arg(a, &fname)?,
        None => shape.to_vec(),
    };
    if new_shape.iter().map(|&d| d as u64).product::<u64>() != numel {
        return Err(e.err(
            given("shape").map_or(span, |a| a.span),
            format!("a view of shape {new_shape:?} does not hold the {numel} elements of {}", mem.ty),
        ));
    }
    let layout = match given("layout") {
        Some(a) => {
            let spec = shared_arg(e, a, &fname)?;
            shared_layout(e, &spec, &new_shape, to, a.span)?
        }
        None => match &own.spec {
            Some(AnyLayout::Shared(spec)) => shared_layout(e, spec, &new_shape, to, span)?,
            _ => return Err(e.err(span, format!("`{fname}` needs a `layout`: the buffer's has no Gluon spelling"))),
        },
    };
    let ty = Type::MemDesc { shape: Shape::from_slice(&new_shape), elem: to, layout };
    e.emit1(Op::MemDescReinterpret, &[mem], ty, span)
}

/// `mem.index(i)`: buffer `i` of a multi-buffered allocation.
pub fn index<'a>(e: &mut Elab<'a>, mem: Tv, i: &Arg<'a>, span: Span) -> R<Tv> {
    let (shape, elem, layout) = mem.ty.memdesc().expect("a memdesc");
    if shape.len() < 2 {
        return Err(e.err(span, format!("`index` needs a buffer with a leading buffer dim, got shape {shape:?}")));
    }
    let sub: Vec<u32> = shape[1..].to_vec();
    let sub_layout = sub_layout(layout, &sub)
        .ok_or_else(|| e.err(span, format!("the layout of {} does not hold its buffers one after another", mem.ty)))?;
    let idx = index_operand(e, i, shape[0])?;
    let ty = Type::MemDesc { shape: Shape::from_slice(&sub), elem, layout: sub_layout };
    e.emit1(Op::MemDescIndex, &[mem, idx], ty, span)
}

/// The i32 operand of `mem.index(i)` over `n` buffers (a constant one checked against `n`).
pub fn index_operand<'a>(e: &mut Elab<'a>, i: &Arg<'a>, n: u32) -> R<Tv> {
    Ok(match &i.value {
        Value::Int(k) if !(0..n as i128).contains(k) => {
            return Err(e.err(i.span, format!("index {k} is out of range for {n} buffers")));
        }
        Value::Int(k) => e.constant(Const::Int(*k as i64), Type::scalar(ScalarType::I32), i.span)?,
        Value::Tensor(t) if t.ty.is_tensor() || t.scalar().is_none_or(|s| !s.is_int()) => {
            return Err(e.err(i.span, format!("a buffer index must be an integer scalar, got {}", t.ty)));
        }
        Value::Tensor(t) => e.cast(t.clone(), Dtype::Scalar(ScalarType::I32), i.span)?,
        other => return Err(e.err(i.span, format!("a buffer index must be an integer, got {}", other.describe()))),
    })
}

/// The layout of one buffer: the spec's own when it fits the buffer's rank, else the first offset bases. A buffer
/// split over a cluster's CTAs (block bases) keeps its split when the CTAs split the buffer, not the buffers: each
/// CTA holds its part of every buffer, one after another, and the buffer's first offset bases are that part's.
fn sub_layout(l: &Layout, sub: &[u32]) -> Option<Arc<Layout>> {
    if let Some(spec @ AnyLayout::Shared(s)) = &l.spec
        && s.rank() <= sub.len()
    {
        let linear = spec.to_linear_buffered(sub).ok()?;
        return Some(Arc::new(Layout { spec: Some(spec.clone()), linear }));
    }
    let block = l.linear.bases("block");
    if block.iter().any(|b| b[0] != 0) {
        return None;
    }
    let split = block.iter().filter(|b| b.iter().any(|&x| x != 0)).count();
    let k = sub.iter().map(|d| d.trailing_zeros() as usize).sum::<usize>().checked_sub(split)?;
    let bases = l.linear.bases("offset");
    if bases.len() < k
        || bases[..k].iter().any(|b| b[0] != 0)
        || bases[k..].iter().any(|b| b[1..].iter().any(|&x| x != 0))
    {
        return None;
    }
    let offset_bases = bases[..k].iter().map(|b| b[1..].to_vec()).collect();
    let block_bases = block.iter().map(|b| b[1..].to_vec()).collect();
    let spec = AnyLayout::Shared(SharedLayout::Linear(tessel_layouts::SharedLinearLayout {
        offset_bases,
        block_bases,
        alignment: 16,
    }));
    let linear = spec.to_linear_buffered(sub).ok()?;
    Some(Arc::new(Layout { spec: Some(spec), linear }))
}
