//! Typing rules of the cluster launch control ops (sm_100a): `clc_try_cancel`, `clc_load_result`,
//! `clc_is_canceled` and `clc_program_id`, and [`check_target`], which refuses them where the hardware has no
//! cluster launch control. The response is 16 bytes: the buffer it lands in holds exactly 16 bytes of integers
//! (Gluon's `allocate_shared_memory(gl.int64, [2], ...)`), in shared memory, and its barrier is an mbarrier.

use crate::ir::{Func, OpId};
use crate::ops::Op;
use crate::target::Target;
use crate::types::{ScalarType, Type};
use crate::verify_checks::{Violation, counts, same};

/// Bytes of a response (`clusterlaunchcontrol.try_cancel` writes a `.b128`).
pub const RESPONSE_BYTES: u32 = 16;

/// The ops this module types.
pub fn is_clc_op(op: &Op) -> bool {
    matches!(op, Op::ClcTryCancel | Op::ClcLoadResult | Op::ClcIsCanceled | Op::ClcProgramId(_))
}

/// Why `t` cannot hold a response, if it cannot: a shared-memory buffer of 16 bytes of integers.
pub fn response_buffer_problem(t: &Type) -> Option<String> {
    match t.memdesc() {
        Some((shape, elem, _)) if !t.is_tmem() && elem.is_int() => {
            let bytes = shape.iter().map(|&d| d as u64).product::<u64>() * elem.bytes() as u64;
            (bytes != RESPONSE_BYTES as u64)
                .then(|| format!("a response buffer holds {RESPONSE_BYTES} bytes, {t} holds {bytes}"))
        }
        _ => {
            Some(format!("a response buffer is a shared-memory buffer of {RESPONSE_BYTES} bytes of integers, got {t}"))
        }
    }
}

/// Whether `t` is an mbarrier (`memdesc<1xi64>` in shared memory).
fn is_mbarrier(t: &Type) -> bool {
    !t.is_tmem() && matches!(t.memdesc(), Some((shape, ScalarType::I64, _)) if shape.iter().product::<u32>() == 1)
}

/// The rules for `op` with operand types `ins` and result types `outs`.
pub(crate) fn types(op: &Op, ins: &[&Type], outs: &[&Type]) -> Result<(), Violation> {
    match op {
        Op::ClcTryCancel => {
            counts(ins, outs, 2..=2, 0)?;
            if let Some(why) = response_buffer_problem(ins[0]) {
                return Err(Violation::Rule(why));
            }
            if !is_mbarrier(ins[1]) {
                return Err(Violation::Rule(format!(
                    "the barrier must be an mbarrier (memdesc<1xi64>), got {}",
                    ins[1]
                )));
            }
            Ok(())
        }
        Op::ClcLoadResult => {
            counts(ins, outs, 1..=1, 1)?;
            if let Some(why) = response_buffer_problem(ins[0]) {
                return Err(Violation::Rule(why));
            }
            same(outs[0], &Type::ClcResult, "result")
        }
        Op::ClcIsCanceled | Op::ClcProgramId(_) => {
            counts(ins, outs, 1..=1, 1)?;
            same(ins[0], &Type::ClcResult, "operand")?;
            match op {
                Op::ClcProgramId(axis) if *axis > 2 => {
                    Err(Violation::Rule(format!("axis must be 0, 1 or 2, got {axis}")))
                }
                Op::ClcProgramId(_) => same(outs[0], &Type::scalar(ScalarType::I32), "result"),
                _ => same(outs[0], &Type::scalar(ScalarType::I1), "result"),
            }
        }
        _ => unreachable!("not a cluster launch control op"),
    }
}

/// Cluster launch control needs sm_100a: in a kernel for `target`, the op and why not, else `Ok`. (In a
/// cluster, a request cancels a whole cluster and its response reaches every CTA's barrier.)
pub fn check_target(f: &Func, target: Target) -> Result<(), (OpId, String)> {
    if target == Target::Sm100a {
        return Ok(());
    }
    match f.all_ops().into_iter().find(|&o| is_clc_op(&f.op(o).op)) {
        Some(o) => Err((
            o,
            format!("cluster launch control (`clc.*`) needs sm_100a (Blackwell); this kernel compiles for {target}"),
        )),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    fn func(attrs: &str, resp: &str, bar: &str, tail: &str) -> crate::ir::Func {
        let text = format!(
            "func @k(%out: ptr<i32>) attributes {{{attrs}}} {{
  %bar = local_alloc : {bar}
  %resp = local_alloc : {resp}
  clc_try_cancel %resp, %bar
  {tail}
  return
}}
"
        );
        crate::parse::parse_func(&text).unwrap_or_else(|e| panic!("{e:?}\n{text}"))
    }

    const SM100: &str = "target = sm_100a, num_warps = 4, gluon = true";
    const RESP: &str = "memdesc<2xi64, SwizzledSharedLayout(1,1,1,[0])>";
    const BAR: &str = "memdesc<1xi64, SwizzledSharedLayout(1,1,1,[0])>";

    fn verify_err(f: &crate::ir::Func) -> String {
        crate::verify::verify(f).unwrap_err().to_string()
    }

    #[test]
    fn a_response_buffer_holds_sixteen_bytes_of_integers_and_completes_on_an_mbarrier() {
        crate::verify::verify(&func(SM100, RESP, BAR, "")).unwrap();
        crate::verify::verify(&func(SM100, "memdesc<4xi32, SwizzledSharedLayout(1,1,1,[0])>", BAR, "")).unwrap();
        let small = verify_err(&func(SM100, "memdesc<2xi32, SwizzledSharedLayout(1,1,1,[0])>", BAR, ""));
        assert!(small.contains("a response buffer holds 16 bytes, memdesc<2xi32"), "{small}");
        let float = verify_err(&func(SM100, "memdesc<4xf32, SwizzledSharedLayout(1,1,1,[0])>", BAR, ""));
        assert!(float.contains("16 bytes of integers"), "{float}");
        let bar = verify_err(&func(SM100, RESP, "memdesc<2xi64, SwizzledSharedLayout(1,1,1,[0])>", ""));
        assert!(bar.contains("the barrier must be an mbarrier"), "{bar}");
    }

    #[test]
    fn queries_read_a_response_and_name_an_axis() {
        let ok = "%r = clc_load_result %resp : clc_result\n  %c = clc_is_canceled %r : i1\n  %x = clc_program_id {axis = 2} %r : i32";
        crate::verify::verify(&func(SM100, RESP, BAR, ok)).unwrap();
        let axis = "%r = clc_load_result %resp : clc_result\n  %x = clc_program_id {axis = 3} %r : i32";
        assert!(verify_err(&func(SM100, RESP, BAR, axis)).contains("axis must be 0, 1 or 2, got 3"));
        let ty = "%r = clc_load_result %resp : clc_result\n  %x = clc_program_id {axis = 0} %r : i64";
        assert!(verify_err(&func(SM100, RESP, BAR, ty)).contains("result: expected i32, got i64"));
    }

    #[test]
    fn cluster_launch_control_needs_sm100a_in_programs_of_any_cluster_size() {
        let check = |f: crate::ir::Func| super::check_target(&f, f.target);
        assert!(check(func(SM100, RESP, BAR, "")).is_ok());
        let (_, sm90) = check(func("target = sm_90a, num_warps = 4", RESP, BAR, "")).unwrap_err();
        assert!(sm90.contains("needs sm_100a (Blackwell); this kernel compiles for sm_90a"), "{sm90}");
        let ctas = "target = sm_100a, num_warps = 4, num_ctas = 2, gluon = true";
        assert!(check(func(ctas, RESP, BAR, "")).is_ok());
    }
}
