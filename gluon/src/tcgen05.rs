//! Blackwell's asynchronous tensor-core ops (`triton.experimental.gluon.language.nvidia.blackwell`):
//! `tcgen05_mma(a, b, acc, *, use_acc=True, pred=True, multicast=False, mbarriers=None, mbarrier_preds=None)`
//! (`tcgen05_mma`), `tcgen05_mma_scaled(a, b, acc, a_scale, b_scale, a_type, b_type, *, ...)` (the block-scaled
//! MMA, `tcgen05_mma_scaled`), `tcgen05_copy(src, dst)` (shared to tensor memory, `tcgen05_copy`) and
//! `tcgen05_commit(barrier, pred=True, descs=())` (`tcgen05_commit`). In a cluster, `multicast=True` on `tcgen05_mma` makes
//! its completion reach every CTA holding a copy of its operands (`tcgen05_commit {multicast}`), and
//! `tcgen05_mma_barrier_count(smems, multicast, two_ctas=False)` is the count such a barrier needs
//! (`tessel_tile::cluster`). Each is checked here against the rule the verifier
//! and codegen share (`tessel_tile::verify_tmem`, `tessel_tile::mma_scaled`, `tessel_tile::tcgen05_copy`), so a
//! kernel they cannot lower is refused at the call.

use tessel_lang::Span;
use tessel_lang::elab::builtins::{Arg, Bound};
use tessel_lang::elab::registry::{Handler, Registry};
use tessel_lang::elab::value::{Dtype, Tv, Value};
use tessel_lang::elab::{Elab, R};
use tessel_tile::ops::{Const, MxFormat, Op};
use tessel_tile::{ScalarType, Type};

use crate::BLACKWELL;
use crate::blackwell::tmem_desc;
use crate::smem::memdesc;

const MMA_SIG: &str = "a, b, acc, *, use_acc=True, pred=True, multicast=False, mbarriers=None, mbarrier_preds=None";
const MMA_SCALED_SIG: &str = "a, b, acc, a_scale, b_scale, a_type, b_type, *, use_acc=True, pred=True, \
                              multicast=False, mbarriers=None, mbarrier_preds=None";

pub fn register(r: &mut Registry) {
    r.add(BLACKWELL, "tcgen05_mma", Handler::Bound(MMA_SIG, mma));
    r.add(BLACKWELL, "tcgen05_mma_scaled", Handler::Bound(MMA_SCALED_SIG, mma_scaled));
    r.add(BLACKWELL, "tcgen05_copy", Handler::Bound("src, dst", copy));
    r.add(BLACKWELL, "tcgen05_commit", Handler::Bound("barrier, pred=True, descs=None", commit));
    r.add(BLACKWELL, "tcgen05_mma_barrier_count", Handler::Bound("smems, multicast, two_ctas=False", barrier_count));
}

/// `tcgen05_mma_barrier_count(smems, multicast, two_ctas=False)`: the arrivals each CTA's barrier gets from one
/// round of MMAs over the shared-memory operands `smems` whose completion is multicast (1 without multicast):
/// how many issuing CTAs (pairs, with `two_ctas`) reach it (`tessel_tile::cluster::commit_arrivals`).
fn barrier_count<'a>(e: &mut Elab<'a>, b: Bound<'a>) -> R<Value<'a>> {
    let fname = b.fname.clone();
    let s = b.req("smems");
    let items = s.value.items().ok_or_else(|| e.err(s.span, format!("`smems` of `{fname}` must be a list")))?;
    if items.is_empty() {
        return Err(e.err(s.span, format!("`{fname}` needs the MMAs' shared-memory operands, got an empty list")));
    }
    let mut tys = Vec::new();
    for v in &items {
        match memdesc(v).filter(|t| !t.ty.is_tmem()) {
            Some(t) => tys.push(t.ty.clone()),
            None => {
                return Err(e.err(
                    s.span,
                    format!("`smems` of `{fname}` must be shared-memory descriptors, got {}", v.describe()),
                ));
            }
        }
    }
    let group = match b.opt("two_ctas") {
        Some(a) if e.const_bool(a, &fname, "two_ctas")? => 2,
        _ => 1,
    };
    let n = e.func.config.num_ctas;
    if !e.const_bool(b.req("multicast"), &fname, "multicast")? || n == 1 {
        return Ok(Value::Int(1));
    }
    let refs: Vec<&Type> = tys.iter().collect();
    let mask = tessel_tile::cluster::commit_ctas(&refs, group, n);
    Ok(Value::Int(tessel_tile::cluster::commit_arrivals(mask, group, n) as i128))
}

/// An i1 predicate operand: a runtime scalar, or a compile-time bool made a constant.
fn pred_operand<'a>(e: &mut Elab<'a>, a: &Arg<'a>, fname: &str, what: &str) -> R<Tv> {
    match &a.value {
        Value::Tensor(t) if t.is_block() => {
            Err(e.err(a.span, format!("`{what}` of `{fname}` must be a scalar, got {}", t.ty)))
        }
        Value::Tensor(t) => e.cast(t.clone(), Dtype::Scalar(ScalarType::I1), a.span),
        _ => {
            let v = e.const_bool(a, fname, what)?;
            e.constant(Const::Int(v as i64), Type::scalar(ScalarType::I1), a.span)
        }
    }
}

fn barrier_arg<'a>(e: &Elab<'a>, v: &Value<'a>, span: Span, fname: &str) -> R<Tv> {
    match memdesc(v) {
        Some(t)
            if !t.ty.is_tmem()
                && t.ty.memdesc().is_some_and(|(s, el, _)| el == ScalarType::I64 && s.iter().product::<u32>() == 1) =>
        {
            Ok(t.clone())
        }
        _ => Err(e.err_hint(
            span,
            format!("`{fname}` needs mbarriers, got {}", v.describe()),
            "allocate one with `mbarrier.allocate_mbarrier()` and `mbarrier.init(bar, count=1)`",
        )),
    }
}

/// The accumulator argument: a tensor-memory descriptor.
fn accumulator<'a>(e: &Elab<'a>, b: &Bound<'a>, fname: &str) -> R<Tv> {
    let ca = b.req("acc");
    tmem_desc(&ca.value).cloned().ok_or_else(|| {
        e.err_hint(
            ca.span,
            format!("the accumulator of `{fname}` must be a tensor-memory descriptor, got {}", ca.value.describe()),
            "allocate it with `allocate_tensor_memory(gl.float32, [M, N], TensorMemoryLayout((M, N), col_stride=1))`",
        )
    })
}

/// `use_acc`, `pred` and the `(barrier, predicate)` operands of an MMA.
fn mma_tail<'a>(e: &mut Elab<'a>, b: &Bound<'a>, fname: &str) -> R<Vec<Tv>> {
    let mut operands =
        vec![pred_operand(e, b.req("use_acc"), fname, "use_acc")?, pred_operand(e, b.req("pred"), fname, "pred")?];
    let bars: Vec<Value<'a>> = match b.opt("mbarriers").filter(|a| !matches!(a.value, Value::None)) {
        None => vec![],
        Some(m) => m.value.items().ok_or_else(|| e.err(m.span, "`mbarriers` must be a list of mbarriers"))?,
    };
    let preds: Option<(Vec<Value<'a>>, Span)> =
        match b.opt("mbarrier_preds").filter(|a| !matches!(a.value, Value::None)) {
            None => None,
            Some(p) => Some((p.value.items().ok_or_else(|| e.err(p.span, "`mbarrier_preds` must be a list"))?, p.span)),
        };
    let bar_span = b.opt("mbarriers").map_or(b.span, |a| a.span);
    if let Some((p, span)) = &preds
        && p.len() != bars.len()
    {
        return Err(e.err(*span, format!("{} mbarrier_preds for {} mbarriers", p.len(), bars.len())));
    }
    for (i, bar) in bars.iter().enumerate() {
        operands.push(barrier_arg(e, bar, bar_span, fname)?);
        let p = match &preds {
            None => e.constant(Const::Int(1), Type::scalar(ScalarType::I1), bar_span)?,
            Some((p, span)) => {
                let arg = Arg { value: p[i].clone(), span: *span, expr: None };
                pred_operand(e, &arg, fname, "mbarrier_preds")?
            }
        };
        operands.push(p);
    }
    Ok(operands)
}

/// `tcgen05_mma(a, b, acc, *, use_acc=True, pred=True, multicast=False, mbarriers=None, mbarrier_preds=None)`.
fn mma<'a>(e: &mut Elab<'a>, b: Bound<'a>) -> R<Value<'a>> {
    let fname = b.fname.clone();
    let (aa, ba) = (b.req("a"), b.req("b"));
    let acc = accumulator(e, &b, &fname)?;
    let Some(a) = memdesc(&aa.value).cloned() else {
        return Err(e.err(
            aa.span,
            format!(
                "operand A of `{fname}` must be a shared- or tensor-memory descriptor, got {}",
                aa.value.describe()
            ),
        ));
    };
    let Some(bm) = memdesc(&ba.value).cloned().filter(|t| !t.ty.is_tmem()) else {
        return Err(e.err(
            ba.span,
            format!("operand B of `{fname}` must be a shared-memory descriptor, got {}", ba.value.describe()),
        ));
    };
    let mut operands = vec![a, bm, acc];
    operands.extend(mma_tail(e, &b, &fname)?);
    let tys: Vec<&Type> = operands.iter().map(|t| &t.ty).collect();
    if let Err(m) = tessel_tile::verify_tmem::check_mma(&tys) {
        return Err(e.err(b.span, format!("`{fname}`: {m}")));
    }
    let mask = multicast(e, &b, &fname, &operands[..3])?;
    emit_mma(e, Op::Tcgen05Mma, operands, 3, mask, b.span)
}

/// Emits MMA `op` over `operands` (`core` operands, then `use_acc`, `pred` and the `(barrier, predicate)` pairs).
/// With a multicast completion (`mask`): the MMA without its barriers, then a commit of it to each barrier in
/// every CTA of the set.
fn emit_mma<'a>(
    e: &mut Elab<'a>,
    op: Op,
    operands: Vec<Tv>,
    core: usize,
    mask: Option<u16>,
    span: Span,
) -> R<Value<'a>> {
    let Some(mask) = mask else {
        e.emit(op, &operands, vec![], span)?;
        return Ok(Value::None);
    };
    let (pred, tail) = (core + 1, core + 2);
    e.emit(op, &operands[..tail], vec![], span)?;
    for pair in operands[tail..].chunks(2) {
        let p = e.arith(tessel_tile::ops::BinOp::And, operands[pred].clone(), pair[1].clone(), span)?;
        e.emit(Op::Tcgen05Commit { multicast: mask }, &[pair[0].clone(), p], vec![], span)?;
    }
    Ok(Value::None)
}

/// `multicast=True` of an MMA in a cluster: the CTAs its completion must reach (a mask of CTA offsets,
/// `tessel_tile::cluster::commit_ctas`) from its shared-memory operands' layouts; `None` without multicast, or in
/// a one-CTA program, where there is no one else to tell.
fn multicast<'a>(e: &Elab<'a>, b: &Bound<'a>, fname: &str, operands: &[Tv]) -> R<Option<u16>> {
    let Some(m) = b.opt("multicast") else { return Ok(None) };
    let n = e.func.config.num_ctas;
    if !e.const_bool(m, fname, "multicast")? || n == 1 {
        return Ok(None);
    }
    let group = if tessel_tile::cluster::two_ctas(&operands[2].ty) { 2 } else { 1 };
    let smem: Vec<&Type> = operands[..2].iter().map(|t| &t.ty).filter(|t| !t.is_tmem()).collect();
    Ok(Some(tessel_tile::cluster::commit_ctas(&smem, group, n)))
}

/// `a_type`/`b_type` of `tcgen05_mma_scaled`: "e2m1", "e4m3" or "e5m2".
fn format_arg<'a>(e: &Elab<'a>, a: &Arg<'a>, fname: &str, what: &str) -> R<MxFormat> {
    let s = match &a.value {
        Value::Str(s) => s.to_string(),
        other => {
            return Err(e.err(a.span, format!("`{what}` of `{fname}` must be a string, got {}", other.describe())));
        }
    };
    MxFormat::from_word(&s).ok_or_else(|| {
        e.err(a.span, format!("`{what}` of `{fname}` must be one of {:?}, got \"{s}\"", MxFormat::WORDS))
    })
}

/// `tcgen05_mma_scaled(a, b, acc, a_scale, b_scale, a_type, b_type, *, use_acc=True, pred=True,
/// multicast=False, mbarriers=None, mbarrier_preds=None)`: `acc = (a · a_scale) @ (b · b_scale) (+ acc)`.
fn mma_scaled<'a>(e: &mut Elab<'a>, b: Bound<'a>) -> R<Value<'a>> {
    let fname = b.fname.clone();
    let acc = accumulator(e, &b, &fname)?;
    let shared = |e: &Elab<'a>, k: &str, what: &str| -> R<Tv> {
        let a = b.req(k);
        memdesc(&a.value).cloned().filter(|t| !t.ty.is_tmem()).ok_or_else(|| {
            e.err(a.span, format!("{what} of `{fname}` must be a shared-memory descriptor, got {}", a.value.describe()))
        })
    };
    let scales = |e: &Elab<'a>, k: &str, what: &str| -> R<Tv> {
        let a = b.req(k);
        match tmem_desc(&a.value) {
            Some(t) if t.ty.is_tmem_scales() => Ok(t.clone()),
            _ => Err(e.err_hint(
                a.span,
                format!(
                    "{what} of `{fname}` must be tensor memory laid out by a TensorMemoryScalesLayout, got {}",
                    a.value.describe()
                ),
                "allocate_tensor_memory(gl.uint8, [rows, K // VEC_SIZE], TensorMemoryScalesLayout())",
            )),
        }
    };
    let a = shared(e, "a", "operand A")?;
    let bm = shared(e, "b", "operand B")?;
    let sa = scales(e, "a_scale", "`a_scale`")?;
    let sb = scales(e, "b_scale", "`b_scale`")?;
    let a_format = format_arg(e, b.req("a_type"), &fname, "a_type")?;
    let b_format = format_arg(e, b.req("b_type"), &fname, "b_type")?;
    let mut operands = vec![a, bm, acc, sa, sb];
    operands.extend(mma_tail(e, &b, &fname)?);
    let tys: Vec<&Type> = operands.iter().map(|t| &t.ty).collect();
    if let Err(m) = tessel_tile::mma_scaled::plan(&tys, a_format, b_format) {
        return Err(e.err(b.span, format!("`{fname}`: {m}")));
    }
    let mask = multicast(e, &b, &fname, &operands[..3])?;
    emit_mma(e, Op::Tcgen05MmaScaled { a_format, b_format }, operands, 5, mask, b.span)
}

/// `tcgen05_copy(src, dst)`: shared memory into tensor memory, asynchronously (`tcgen05.cp`).
fn copy<'a>(e: &mut Elab<'a>, b: Bound<'a>) -> R<Value<'a>> {
    let fname = b.fname.clone();
    let (sa, da) = (b.req("src"), b.req("dst"));
    let Some(src) = memdesc(&sa.value).cloned().filter(|t| !t.ty.is_tmem()) else {
        return Err(e.err(
            sa.span,
            format!("the source of `{fname}` must be a shared-memory descriptor, got {}", sa.value.describe()),
        ));
    };
    let Some(dst) = tmem_desc(&da.value).cloned() else {
        return Err(e.err(
            da.span,
            format!("the destination of `{fname}` must be a tensor-memory descriptor, got {}", da.value.describe()),
        ));
    };
    if let Err(m) = tessel_tile::tcgen05_copy::plan(&src.ty, &dst.ty) {
        return Err(e.err_hint(
            b.span,
            format!("`{fname}`: {m}"),
            "a TensorMemoryLayout destination takes swizzled NVMMASharedLayout sources of 32-bit elements; scales take \
             the unswizzled view of their TMA block",
        ));
    }
    e.emit(Op::Tcgen05Copy, &[src, dst], vec![], b.span)?;
    Ok(Value::None)
}

/// `tcgen05_commit(barrier, pred=True, descs=())`. With `descs` (shared-memory operands of the MMAs it commits) in
/// a cluster, the completion reaches every CTA holding a copy of them, as an MMA's `multicast=True` does
/// (`tessel_tile::cluster::commit_ctas`), in the kernel's `cta_group` mode (that of the MMAs elaborated before it,
/// or `::2` for a two-CTA barrier). A set that is only the issuer (and its pair) is a plain commit.
fn commit<'a>(e: &mut Elab<'a>, b: Bound<'a>) -> R<Value<'a>> {
    let fname = b.fname.clone();
    let a = b.req("barrier");
    let bar = barrier_arg(e, &a.value, a.span, &fname)?;
    // The kernel's tensor-core mode: `cta_group::2` when an MMA elaborated so far uses CTA pairs (every op made,
    // also those of regions still being built), or the barrier is a pair's.
    let pairs = e.func.ops.iter().any(|d| {
        matches!(d.op, Op::Tcgen05Mma | Op::Tcgen05MmaScaled { .. })
            && tessel_tile::cluster::two_ctas(e.func.ty(d.operands[2]))
    });
    let group = if pairs { 2 } else { tessel_tile::cluster::barrier_ctas(&bar.ty) };
    let mut smem = Vec::new();
    if let Some(d) = b.opt("descs").filter(|d| !matches!(d.value, Value::None)) {
        let items = d.value.items().ok_or_else(|| e.err(d.span, format!("`descs` of `{fname}` must be a list")))?;
        for v in &items {
            match memdesc(v).filter(|t| !t.ty.is_tmem()) {
                Some(t) => smem.push(t.ty.clone()),
                None => {
                    let got = v.describe();
                    return Err(
                        e.err(d.span, format!("`descs` of `{fname}` must be shared-memory descriptors, got {got}"))
                    );
                }
            }
        }
    }
    let n = e.func.config.num_ctas;
    let refs: Vec<&Type> = smem.iter().collect();
    let mask = match tessel_tile::cluster::commit_ctas(&refs, group, n) {
        m if n == 1 || smem.is_empty() || m == tessel_tile::cluster::default_commit_ctas(group) => 0,
        m => m,
    };
    let mut operands = vec![bar];
    let p = b.req("pred");
    if !matches!(p.value, Value::Bool(true)) {
        operands.push(pred_operand(e, p, &fname, "pred")?);
    }
    e.emit(Op::Tcgen05Commit { multicast: mask }, &operands, vec![], b.span)?;
    Ok(Value::None)
}
