//! wgmma (`triton.experimental.gluon.language.nvidia.hopper`): `warpgroup_mma(a, b, acc, *, use_acc=True,
//! precision=None, max_num_imprecise_acc=None, is_async=False)` is `acc + a @ b` on the tensor cores
//! (`warpgroup_dot`), with `b` (and `a`, unless it is a register tensor in a `DotOperandLayout`) in
//! NVMMA-swizzled shared memory and `acc` in an `NVMMADistributedLayout` of version 3. With `is_async` the result
//! may only be used after `warpgroup_mma_wait(num_outstanding, deps)` (`warpgroup_dot_wait`), which returns the
//! tensors of `deps` made usable (one value for one dep, else a tuple). `warpgroup_mma_init(acc)` returns `acc`.

use tessel_lang::Span;
use tessel_lang::elab::builtins::{Arg, Bound};
use tessel_lang::elab::registry::{Handler, Registry};
use tessel_lang::elab::value::{Dtype, Tv, Value};
use tessel_lang::elab::{Elab, R};
use tessel_layouts::{AnyLayout, DistributedLayout, SharedLayout};
use tessel_tile::ops::{Const, InputPrecision, Op};
use tessel_tile::{ScalarType, Type};

use crate::HOPPER;
use crate::smem::memdesc;

pub fn register(r: &mut Registry) {
    r.add(
        HOPPER,
        "warpgroup_mma",
        Handler::Bound("a, b, acc, *, use_acc=True, precision=None, max_num_imprecise_acc=None, is_async=False", mma),
    );
    r.add(HOPPER, "warpgroup_mma_wait", Handler::Bound("num_outstanding=0, deps=None", wait));
    r.add(HOPPER, "warpgroup_mma_init", Handler::Bound("value", init));
}

/// An operand in shared memory: an NVMMA-swizzled, rank-2 buffer.
fn smem_operand<'a>(e: &Elab<'a>, a: &Arg<'a>, t: &Tv, which: &str, fname: &str) -> R<(Vec<u32>, ScalarType)> {
    let (shape, elem, layout) = t.ty.memdesc().expect("a memdesc");
    if !matches!(layout.spec, Some(AnyLayout::Shared(SharedLayout::Nvmma(_)))) {
        return Err(e.err_hint(
            a.span,
            format!("operand {which} of `{fname}` must be in an NVMMASharedLayout, got {}", t.ty),
            "allocate it with `gl.NVMMASharedLayout.get_default_for(shape, dtype)`",
        ));
    }
    if shape.len() != 2 {
        return Err(e.err(a.span, format!("operand {which} of `{fname}` must be a matrix, got shape {shape:?}")));
    }
    Ok((shape.to_vec(), elem))
}

/// The accumulator: a matrix in an `NVMMADistributedLayout` of version 3.
fn accumulator<'a>(e: &mut Elab<'a>, a: &Arg<'a>, fname: &str) -> R<Tv> {
    let acc = e.tensor_arg(a, fname, "acc")?;
    let nvmma_v3 = matches!(
        acc.ty.layout().and_then(|l| l.spec.as_ref()),
        Some(AnyLayout::Distributed(DistributedLayout::Nvmma(n))) if n.version[0] == 3
    );
    if !nvmma_v3 {
        return Err(e.err_hint(
            a.span,
            format!("the accumulator of `{fname}` must be in an NVMMADistributedLayout of version [3, 0], got {}", acc.ty),
            "e.g. `gl.zeros([M, N], gl.float32, layout=gl.NVMMADistributedLayout([3, 0], [num_warps, 1], [16, N, 16]))`",
        ));
    }
    if acc.shape().len() != 2 {
        return Err(e.err(a.span, format!("the accumulator of `{fname}` must be a matrix, got {}", acc.ty)));
    }
    Ok(acc)
}

fn mma<'a>(e: &mut Elab<'a>, b: Bound<'a>) -> R<Value<'a>> {
    let fname = b.fname.clone();
    let acc = accumulator(e, b.req("acc"), &fname)?;
    let (aa, ba) = (b.req("a"), b.req("b"));
    let Some(bm) = memdesc(&ba.value).cloned() else {
        return Err(e.err(
            ba.span,
            format!("operand B of `{fname}` must be a shared-memory descriptor, got {}", ba.value.describe()),
        ));
    };
    let (b_shape, b_elem) = smem_operand(e, ba, &bm, "B", &fname)?;
    let (a_val, a_shape, a_elem) = match memdesc(&aa.value).cloned() {
        Some(am) => {
            let (s, el) = smem_operand(e, aa, &am, "A", &fname)?;
            (am, s, el)
        }
        None => {
            let t = e.tensor_arg(aa, &fname, "a")?;
            check_register_a(e, aa, &t, &acc, &fname)?;
            let el = t.scalar().unwrap_or(ScalarType::I1);
            (t.clone(), t.shape().to_vec(), el)
        }
    };
    let (m, n) = (acc.shape()[0], acc.shape()[1]);
    if a_shape.len() != 2 || a_shape[0] != m || b_shape[1] != n || a_shape[1] != b_shape[0] {
        return Err(e.err(
            b.span,
            format!(
                "shapes do not form a matrix product: A {a_shape:?} @ B {b_shape:?} into an accumulator [{m}, {n}]"
            ),
        ));
    }
    if a_elem != b_elem {
        return Err(e.err(ba.span, format!("A holds {} but B holds {}", a_elem.triton_name(), b_elem.triton_name())));
    }
    let acc_elem = acc.scalar().unwrap_or(ScalarType::I1);
    let ok = match a_elem {
        ScalarType::F16 => matches!(acc_elem, ScalarType::F16 | ScalarType::F32),
        ScalarType::BF16 | ScalarType::F32 | ScalarType::F8E4M3 | ScalarType::F8E5M2 => acc_elem == ScalarType::F32,
        ScalarType::I8 | ScalarType::U8 => acc_elem == ScalarType::I32,
        _ => false,
    };
    if !ok {
        return Err(e.err(
            b.req("acc").span,
            format!("wgmma does not multiply {} into a {} accumulator", a_elem.triton_name(), acc_elem.triton_name()),
        ));
    }
    let precision = precision(e, &b, a_elem)?;
    let max_num_imprecise_acc = match b.opt("max_num_imprecise_acc") {
        Some(a) => u32::try_from(e.const_int(a, &fname, "max_num_imprecise_acc")?)
            .map_err(|_| e.err(a.span, "`max_num_imprecise_acc` must be a non-negative count"))?,
        None => 0,
    };
    let is_async = e.const_bool(b.req("is_async"), &fname, "is_async")?;
    let zero = if acc_elem.is_float() { Const::Float(0.0) } else { Const::Int(0) };
    let use_acc = b.req("use_acc");
    let (acc, flag) = match &use_acc.value {
        // A runtime flag (the accumulator is reset per tile, say): wgmma's scale-d predicate, as Triton lowers it.
        // The accumulator stays in its registers; with the flag false the product replaces it. (Selecting the
        // accumulator or zeros before the dot costs a select per accumulator register, and waits for the
        // previous asynchronous dot first.)
        Value::Tensor(t) => {
            if t.is_block() {
                return Err(e.err(use_acc.span, format!("`use_acc` must be a scalar, got {}", t.ty)));
            }
            (acc, Some(e.cast(t.clone(), Dtype::Scalar(ScalarType::I1), use_acc.span)?))
        }
        _ if e.const_bool(use_acc, &fname, "use_acc")? => (acc, None),
        _ => (e.constant(zero, acc.ty.clone(), b.span)?, None),
    };
    let ty = acc.ty.clone();
    let op = Op::WarpGroupDot { precision, max_num_imprecise_acc, is_async };
    let mut operands = vec![a_val, bm, acc];
    operands.extend(flag);
    Ok(Value::Tensor(e.emit1(op, &operands, ty, b.span)?))
}

/// A in registers: `DotOperandLayout(0, parent=<the accumulator's layout>, k_width=32 // bitwidth)`.
fn check_register_a<'a>(e: &Elab<'a>, a: &Arg<'a>, t: &Tv, acc: &Tv, fname: &str) -> R<()> {
    let parent = acc.ty.layout().and_then(|l| l.spec.clone());
    let ok = match t.ty.layout().and_then(|l| l.spec.as_ref()) {
        Some(AnyLayout::Distributed(DistributedLayout::DotOperand(d))) => {
            d.operand_index == 0 && parent.as_ref() == Some(&AnyLayout::Distributed((*d.parent).clone()))
        }
        _ => false,
    };
    if !ok {
        return Err(e.err_hint(
            a.span,
            format!("operand A of `{fname}` in registers must be in DotOperandLayout(0, <the accumulator's layout>, k_width), got {}", t.ty),
            "or pass A as a shared-memory descriptor in an NVMMASharedLayout",
        ));
    }
    Ok(())
}

fn precision<'a>(e: &Elab<'a>, b: &Bound<'a>, elem: ScalarType) -> R<InputPrecision> {
    let p = match b.opt("precision") {
        None => return Ok(if elem == ScalarType::F32 { InputPrecision::Tf32 } else { InputPrecision::Ieee }),
        Some(a) => (e.const_str(a, &b.fname, "precision")?, a.span),
    };
    match InputPrecision::from_word(&p.0) {
        Some(InputPrecision::Tf32x3) | None => {
            Err(e.err(p.1, format!("precision \"{}\" is not one wgmma runs (use \"tf32\" or \"ieee\")", p.0)))
        }
        Some(x) => Ok(x),
    }
}

fn wait<'a>(e: &mut Elab<'a>, b: Bound<'a>) -> R<Value<'a>> {
    let a = b.req("num_outstanding");
    let n = e.const_int(a, &b.fname, "num_outstanding")?;
    let Ok(pending) = u32::try_from(n) else {
        return Err(e.err(a.span, format!("`num_outstanding` must be a non-negative count, got {n}")));
    };
    let deps: Vec<Value<'a>> = match b.opt("deps") {
        None => vec![],
        Some(d) => d.value.items().ok_or_else(|| e.err(d.span, "`deps` must be a tuple or list of values"))?,
    };
    let span: Span = b.opt("deps").map_or(b.span, |d| d.span);
    // Tensors come back usable; descriptors stay as they are (the wait retires the reads of their buffers).
    let tensors: Vec<Tv> = deps.iter().filter_map(|v| v.as_tensor()).filter(|t| t.elem().is_some()).cloned().collect();
    for v in &deps {
        if !matches!(v, Value::Tensor(_)) {
            return Err(e.err(
                span,
                format!("`deps` of `{}` must hold tensors and descriptors, got {}", b.fname, v.describe()),
            ));
        }
    }
    let types: Vec<Type> = tensors.iter().map(|t| t.ty.clone()).collect();
    let mut waited = e.emit(Op::WarpGroupDotWait { pending }, &tensors, types, b.span)?.into_iter();
    let out: Vec<Value<'a>> = deps
        .into_iter()
        .map(|v| match &v {
            Value::Tensor(t) if t.elem().is_some() => Value::Tensor(waited.next().expect("one per tensor")),
            _ => v,
        })
        .collect();
    Ok(match <[Value<'a>; 1]>::try_from(out) {
        Ok([one]) => one,
        Err(many) => Value::tuple(many),
    })
}

fn init<'a>(e: &mut Elab<'a>, b: Bound<'a>) -> R<Value<'a>> {
    let t = e.tensor_arg(b.req("value"), &b.fname, "value")?;
    Ok(Value::Tensor(t))
}
