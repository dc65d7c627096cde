//! `device_print` through `vprintf` and `device_assert` through `__assertfail`, as Triton lowers them.
//!
//! Print: one `vprintf` call per element, issued by the one thread that owns it (elements a layout replicates
//! over lanes, warps or registers print once). The line matches the interpreter's
//! `pid (x, y, z) idx (  i,  j) PREFIXvalue` (`%3u` per index, `,`-separated; a print without operands prints
//! `pid (x, y, z) PREFIX` once per program). Triton writes no space before the prefix (its frontend makes the
//! prefix start with one); the interpreter does, and so do we. Arguments are packed in the kernel's `.local`
//! buffer at their C vararg positions (ints 4 bytes, 64-bit ints and doubles 8, naturally aligned; floats
//! promoted to double).
//! Where the GPU text necessarily differs from the interpreter's (both print the same values):
//! - floats print with `%.17g`, which round-trips every element exactly, where the interpreter writes Rust's
//!   shortest round-trip decimal without exponent (`0.1` vs `0.10000000000000001`, `1e+20` vs
//!   `100000000000000000000`); Triton itself prints `%f`;
//! - u64 values print as unsigned, where the interpreter shows values at or above 2^63 as negative;
//! - pointers print GPU addresses (the interpreter's addresses are its own);
//! - NaN payloads in hex prints are whatever the GPU produced.
//!
//! Assert: like Triton, each thread ORs the failures of the elements it holds and calls
//! `__assertfail(message, file, line, function, 1)` once if any failed (the device runtime prints
//! `file:line: function: block: [..], thread: [..] Assertion `message` failed.` and traps, so a second call
//! could never run); a tensor assert ends with a CTA barrier, as Triton's does, so no thread runs ahead into an
//! op the assert was guarding. `file` and `line` come from the op's location when the caller gave the source
//! text ([`crate::Source`]); otherwise `unknown` and 0, as Triton does without a location.

use tessel_tile::ir::OpData;
use tessel_tile::types::{Elem, ScalarType, Type};

use super::coords::{bases, layout_of, reg_coords};
use super::memory::global_owner_pred;
use super::{Lower, class_of};
use crate::CompileError;
use crate::ptx::{Instr, Operand, Reg, RegClass, instr, mem_off, mem_sym, not, special, sym};

const VPRINTF: &str =
    ".extern .func (.param .b32 func_retval0) vprintf (.param .b64 vprintf_param_0, .param .b64 vprintf_param_1)";
const ASSERTFAIL: &str = ".extern .func __assertfail (.param .b64 __assertfail_param_0, .param .b64 \
                          __assertfail_param_1, .param .b32 __assertfail_param_2, .param .b64 __assertfail_param_3, \
                          .param .b64 __assertfail_param_4)";

/// `%` is the only byte of a user string that means something to printf.
fn escape(s: &str) -> String {
    s.replace('%', "%%")
}

/// A generic address of the module string `text`.
fn string_address(l: &mut Lower, text: &str) -> Reg {
    let name = l.b.global_string(text);
    let (a, g) = (l.b.reg(RegClass::B64), l.b.reg(RegClass::B64));
    l.b.op("mov.u64", a, sym(name));
    l.b.op("cvta.global.u64", g, a);
    g
}

/// `call.uni (ret), func, (params...)`: the call of a function declared at module level, with the `.param`
/// variables of the open call scope.
fn call(ret: Option<&'static str>, func: &'static str, params: &[&'static str]) -> Instr {
    let ins = instr("call.uni");
    let ins = match ret {
        Some(r) => ins.dst(Operand::List(vec![sym(r)])),
        None => ins,
    };
    ins.srcs((sym(func), Operand::List(params.iter().map(|&p| sym(p)).collect())))
}

/// Calls `vprintf(fmt, args)`. `args` are 32-bit (`%d`, `%u`, `%x`) or 64-bit (`%lld`, `%g` on a double...)
/// registers, stored at their natural alignment in the `.local` buffer.
fn vprintf(l: &mut Lower, fmt: &str, args: &[Reg]) {
    l.b.extern_func(VPRINTF);
    let mut offsets = Vec::with_capacity(args.len());
    let mut end = 0u32;
    for a in args {
        let size = if a.class.bits() == 64 { 8 } else { 4 };
        let at = end.next_multiple_of(size);
        offsets.push(at);
        end = at + size;
    }
    let buffer = if args.is_empty() {
        None
    } else {
        let depot = l.b.local_depot(end.next_multiple_of(8));
        let (local, generic) = (l.b.reg(RegClass::B64), l.b.reg(RegClass::B64));
        l.b.op("mov.u64", local, sym(depot));
        l.b.op("cvta.local.u64", generic, local);
        for (a, at) in args.iter().zip(&offsets) {
            let ty = match a.class {
                RegClass::F64 => "f64",
                c if c.bits() == 64 => "b64",
                _ => "b32",
            };
            l.b.effect(format!("st.local.{ty}"), (mem_off(local, *at), *a));
        }
        Some(generic)
    };
    let f = string_address(l, fmt);
    let ret = l.b.reg(RegClass::B32);
    l.b.open();
    l.b.param("b64", "param0");
    l.b.effect("st.param.b64", (mem_sym("param0"), f));
    l.b.param("b64", "param1");
    match buffer {
        Some(g) => l.b.effect("st.param.b64", (mem_sym("param1"), g)),
        None => l.b.effect("st.param.b64", (mem_sym("param1"), 0)),
    }
    l.b.param("b32", "retval0");
    l.b.emit(call(Some("retval0"), "vprintf", &["param0", "param1"]));
    l.b.op("ld.param.b32", ret, mem_sym("retval0"));
    l.b.close();
}

/// The `%` conversion and the register to pass for one element `x` of type `e`.
fn format_value(l: &mut Lower, x: Reg, e: Elem, hex: bool) -> Result<(&'static str, Reg), CompileError> {
    let s = match e {
        Elem::Ptr(..) => return Ok(("0x%llx", x)),
        Elem::Scalar(s) => s,
    };
    let r32 = |l: &mut Lower, signed: bool| {
        let d = l.b.reg(RegClass::B32);
        match x.class {
            RegClass::Pred => l.b.op("selp.u32", d, (1, 0, x)),
            RegClass::B16 => {
                let t = if signed { "s" } else { "u" };
                l.b.op(format!("cvt.{t}32.{t}16"), d, x)
            }
            _ => l.b.op("mov.b32", d, x),
        }
        d
    };
    Ok(match (s, hex) {
        (ScalarType::I1, false) => ("%d", r32(l, false)),
        (ScalarType::I1, true) => ("0x%x", r32(l, false)),
        (ScalarType::I8 | ScalarType::I16 | ScalarType::I32, false) => ("%d", r32(l, true)),
        (ScalarType::U8 | ScalarType::U16 | ScalarType::U32, false) => ("%u", r32(l, false)),
        (ScalarType::U8 | ScalarType::U16 | ScalarType::U32, true) => ("0x%x", r32(l, false)),
        // The interpreter shows signed values in hex as 64-bit two's complement (`{:#x}` of an i64).
        (ScalarType::I8 | ScalarType::I16 | ScalarType::I32, true) => {
            let w = r32(l, true);
            let d = l.b.reg(RegClass::B64);
            l.b.op("cvt.s64.s32", d, w);
            ("0x%llx", d)
        }
        (ScalarType::I64, false) => ("%lld", x),
        (ScalarType::U64, false) => ("%llu", x),
        (ScalarType::I64 | ScalarType::U64, true) => ("0x%llx", x),
        (ScalarType::F64, true) => {
            let d = l.b.reg(RegClass::B64);
            l.b.op("mov.b64", d, x);
            ("0x%llx", d)
        }
        (_, true) => {
            // f32, f16, bf16, fp8: the element's bits, zero-extended.
            let d = l.b.reg(RegClass::B32);
            match x.class {
                RegClass::B16 => l.b.op("cvt.u32.u16", d, x),
                _ => l.b.op("mov.b32", d, x),
            }
            ("0x%x", d)
        }
        (_, false) => {
            // Every float goes to vprintf as a double (C vararg promotion); 17 digits round-trip it.
            let f = l.widen(x, s);
            let d = if s == ScalarType::F64 {
                f
            } else {
                let d = l.b.reg(RegClass::F64);
                l.b.op("cvt.f64.f32", d, f);
                d
            };
            ("%.17g", d)
        }
    })
}

/// The program id along x, y, z (`%ctaid`, or `%clusterid` in a cluster).
fn program_ids(l: &mut Lower) -> [Reg; 3] {
    let clusters = l.launch_ctas > 1;
    [0, 1, 2].map(|axis| {
        let r = l.b.reg(RegClass::B32);
        let sreg = super::cluster::program_sreg(clusters, false, axis).expect("axes 0..3");
        l.b.op("mov.u32", r, special(sreg));
        r
    })
}

/// Register indices that hold distinct elements (a zero register basis makes copies; the first copy prints).
fn distinct_registers(ty: &Type) -> Result<Vec<u32>, CompileError> {
    if !ty.is_tensor() {
        return Ok(vec![0]);
    }
    let lin = layout_of(ty)?;
    let dup: u32 = bases(lin, "register")
        .iter()
        .enumerate()
        .filter(|(_, b)| b.iter().all(|&x| x == 0))
        .fold(0, |m, (i, _)| m | 1 << i);
    Ok((0..lin.in_dim_size("register")).filter(|r| r & dup == 0).collect())
}

/// Branches around the following code unless `pred` holds; returns the label to place after it.
fn guard(l: &mut Lower, pred: Option<Reg>, hint: &str) -> Option<String> {
    pred.map(|p| {
        let skip = l.b.new_label(hint);
        l.b.emit(Instr::bra(&skip).unless(p));
        skip
    })
}

pub(crate) fn print(l: &mut Lower, data: &OpData, prefix: &str, hex: bool) -> Result<(), CompileError> {
    let prefix = escape(prefix);
    if data.operands.is_empty() {
        // Once per program: thread 0.
        let owner = global_owner_pred(l, &Type::Scalar(Elem::Scalar(ScalarType::I32)))?;
        let skip = guard(l, owner, "print_skip");
        let pid = program_ids(l);
        vprintf(l, &format!("pid (%u, %u, %u) {prefix}\n"), &pid);
        if let Some(s) = skip {
            l.b.label(&s);
        }
        return Ok(());
    }
    for &v in &data.operands {
        let ty = l.f.ty(v).clone();
        let e = ty.elem().ok_or_else(|| CompileError::new("print of a value without an element type"))?;
        class_of(e)?;
        let regs = l.get(v)?.to_vec();
        let rank = ty.shape().len();
        let lin = if ty.is_tensor() { Some(layout_of(&ty)?.clone()) } else { None };
        let owner = global_owner_pred(l, &ty)?;
        let idx_fmt = vec!["%3u"; rank].join(",");
        l.b.comment(format!("print {v}: one vprintf per element, from its owning thread"));
        for r in distinct_registers(&ty)? {
            let skip = guard(l, owner, "print_skip");
            let mut args = program_ids(l).to_vec();
            if let Some(lin) = &lin {
                let c = reg_coords(lin, r);
                for (d, &cd) in c.iter().enumerate() {
                    let t = l.thread_coord(lin, d);
                    args.push(l.xor_const(t, cd, 0));
                }
            }
            let (conv, val) = format_value(l, regs[r as usize], e, hex)?;
            args.push(val);
            vprintf(l, &format!("pid (%u, %u, %u) idx ({idx_fmt}) {prefix}{conv}\n"), &args);
            if let Some(s) = skip {
                l.b.label(&s);
            }
        }
    }
    Ok(())
}

/// 1-based line of byte offset `at` in `text`.
fn line_of(text: &str, at: usize) -> u32 {
    1 + text.as_bytes()[..at.min(text.len())].iter().filter(|&&b| b == b'\n').count() as u32
}

pub(crate) fn assert(l: &mut Lower, data: &OpData, message: &str) -> Result<(), CompileError> {
    let c = data.operands[0];
    let ty = l.f.ty(c).clone();
    let regs = l.get(c)?.to_vec();
    if regs.iter().any(|r| r.class != RegClass::Pred) {
        return Err(CompileError::new("the condition of `assert` must be i1"));
    }
    // any = OR of the failed elements this thread holds.
    let mut any: Option<Reg> = None;
    for r in distinct_registers(&ty)? {
        let ok = regs[r as usize];
        let d = l.b.reg(RegClass::Pred);
        match any {
            None => l.b.op("not.pred", d, ok),
            Some(a) => l.b.op("or.pred", d, (a, not(ok))),
        }
        any = Some(d);
    }
    let any = any.expect("a value has at least one register");
    fail_if(l, any, message, data.loc);
    if ty.is_tensor() {
        l.barrier();
    }
    Ok(())
}

/// Where `failed` holds, the thread reports `message` with the source position of `loc` through
/// `__assertfail` (as a failed `tl.device_assert` does) and the kernel stops with an error the host sees.
pub(crate) fn fail_if(l: &mut Lower, failed: Reg, message: &str, loc: Option<tessel_tile::ir::Loc>) {
    let any = failed;
    let (file, line) = match (loc, l.source) {
        (Some(loc), Some(src)) => (src.file.to_string(), line_of(src.text, loc.start as usize)),
        _ => ("unknown".to_string(), 0),
    };
    l.b.extern_func(ASSERTFAIL);
    let skip = l.b.new_label("assert_ok");
    l.b.emit(Instr::bra(&skip).unless(any));
    let msg = string_address(l, message);
    let file = string_address(l, &file);
    let func = string_address(l, &l.f.name.clone());
    l.b.open();
    let args: [(&'static str, &'static str, Operand); 5] = [
        ("b64", "param0", msg.into()),
        ("b64", "param1", file.into()),
        ("b32", "param2", line.into()),
        ("b64", "param3", func.into()),
        ("b64", "param4", 1.into()),
    ];
    for (ty, name, value) in args {
        l.b.param(ty, name);
        l.b.emit(instr("st.param").m(ty).srcs((mem_sym(name), value)));
    }
    l.b.emit(call(None, "__assertfail", &["param0", "param1", "param2", "param3", "param4"]));
    l.b.close();
    l.b.label(&skip);
}
