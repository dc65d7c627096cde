//! Cluster launch control (`triton.experimental.gluon.language.nvidia.blackwell.clc`, sm_100a): a program that
//! finishes its work early cancels a program of the grid that has not started and runs its work instead.
//! `clc.try_cancel(result, mbar)` asks for one (`clc_try_cancel`): the 16-byte response lands in `result` (a
//! shared-memory buffer of 16 bytes, Gluon's `allocate_shared_memory(gl.int64, [2], ...)`) and completes 16
//! transaction bytes on mbarrier `mbar`, which the kernel arms with `mbarrier.expect(mbar, 16)` and waits on;
//! `clc.load_result(src)` reads it (`clc_load_result`) into a `clc_result` whose `.is_canceled()`
//! (`clc_is_canceled`) says whether a program was canceled and `.program_id(dim)` (`clc_program_id`) which one.
//! The ops are refused below sm_100a at the call's span (`tessel_tile::verify_clc::check_target`).

use std::rc::Rc;

use tessel_lang::Span;
use tessel_lang::elab::builtins::{Bound, CallArgs};
use tessel_lang::elab::registry::{Handler, Registry};
use tessel_lang::elab::value::{Tv, Value};
use tessel_lang::elab::{Elab, R};
use tessel_tile::ops::Op;
use tessel_tile::{ScalarType, Type};

use crate::smem::memdesc;

/// `…nvidia.blackwell.clc`.
pub const BLACKWELL_CLC: &str = "triton.experimental.gluon.language.nvidia.blackwell.clc";

/// The methods of a `clc_result`.
const METHODS: &[&str] = &["is_canceled", "program_id"];

pub fn register(r: &mut Registry) {
    r.module(BLACKWELL_CLC, "clc");
    r.add(BLACKWELL_CLC, "try_cancel", Handler::Bound("result, mbar", try_cancel));
    r.add(BLACKWELL_CLC, "load_result", Handler::Bound("src", load_result));
}

/// The response buffer argument `what` of `b`: a shared-memory descriptor of 16 bytes of integers.
fn response_buffer<'a>(e: &Elab<'a>, b: &Bound<'a>, what: &str) -> R<Tv> {
    let a = b.req(what);
    let hint = "allocate it with `gl.allocate_shared_memory(gl.int64, [2], gl.SwizzledSharedLayout(1, 1, 1, [0]))`";
    let Some(t) = memdesc(&a.value) else {
        let msg = format!("`{what}` of `{}` must be a shared-memory descriptor, got {}", b.fname, a.value.describe());
        return Err(e.err_hint(a.span, msg, hint));
    };
    match tessel_tile::verify_clc::response_buffer_problem(&t.ty) {
        Some(why) => Err(e.err_hint(a.span, format!("`{what}` of `{}`: {why}", b.fname), hint)),
        None => Ok(t.clone()),
    }
}

fn try_cancel<'a>(e: &mut Elab<'a>, b: Bound<'a>) -> R<Value<'a>> {
    let result = response_buffer(e, &b, "result")?;
    let a = b.req("mbar");
    let bar = match memdesc(&a.value) {
        Some(t) if !t.ty.is_tmem() && matches!(t.ty.memdesc(), Some(([1], ScalarType::I64, _))) => t.clone(),
        _ => {
            return Err(e.err_hint(
                a.span,
                format!("`mbar` of `{}` must be an mbarrier, got {}", b.fname, a.value.describe()),
                "allocate one with `mbarrier.allocate_mbarrier()` and `mbarrier.init(bar, count=1)`",
            ));
        }
    };
    e.emit(Op::ClcTryCancel, &[result, bar], vec![], b.span)?;
    Ok(Value::None)
}

fn load_result<'a>(e: &mut Elab<'a>, b: Bound<'a>) -> R<Value<'a>> {
    let src = response_buffer(e, &b, "src")?;
    Ok(Value::Tensor(e.emit1(Op::ClcLoadResult, &[src], Type::ClcResult, b.span)?))
}

/// The attributes of a `clc_result` (the value `v`): its methods.
pub fn attr<'a>(e: &Elab<'a>, v: &Value<'a>, name: &str, span: Span) -> R<Option<Value<'a>>> {
    if METHODS.contains(&name) {
        return Ok(Some(Value::Method(Rc::new((v.clone(), name.to_string())))));
    }
    let mut err = e.err(span, format!("a `clc_result` has no attribute `{name}`"));
    if let Some(best) = tessel_lang::elab::names::closest(name, METHODS.iter().copied()) {
        err.diag = err.diag.with_hint(format!("did you mean `.{best}()`?"));
    }
    Err(err)
}

/// `r.is_canceled()` and `r.program_id(dim)` of the response `r`.
pub fn method<'a>(e: &mut Elab<'a>, r: Tv, name: &str, args: CallArgs<'a>, span: Span) -> R<Option<Value<'a>>> {
    let fname = format!("clc_result.{name}");
    match name {
        "is_canceled" => {
            e.bind(&fname, "", args)?;
            Ok(Some(Value::Tensor(e.emit1(Op::ClcIsCanceled, &[r], Type::scalar(ScalarType::I1), span)?)))
        }
        "program_id" => {
            let b = e.bind(&fname, "dim", args)?;
            let a = b.req("dim");
            let dim = e.const_int(a, &fname, "dim")?;
            if !(0..=2).contains(&dim) {
                return Err(e.err(a.span, format!("`dim` of `{fname}` must be 0, 1 or 2, got {dim}")));
            }
            let ty = Type::scalar(ScalarType::I32);
            Ok(Some(Value::Tensor(e.emit1(Op::ClcProgramId(dim as u32), &[r], ty, span)?)))
        }
        _ => attr(e, &Value::Tensor(r), name, span).map(|_| None),
    }
}
