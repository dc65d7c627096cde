//! The typed PTX instruction: an optional guard, an [`Opcode`] (a [`Mnemonic`] and modifiers, `opcode.rs`), and
//! [`Operand`]s of which the leading `defs` are destinations. Lowering builds these, [`super::dce`] reads them,
//! and [`std::fmt::Display`] prints them once, when the module text is assembled.
//!
//! Construction is short on purpose: `instr("add.s32").dst(d).src(a).src(1)`, or through the [`Builder`]
//! shortcuts `b.op("add.s32", d, (a, 1))` (one destination) and `b.effect("st.shared.b32", (mem(p), v))` (none).
//! An opcode given as dotted text is split into its parts, and its base parsed into a [`Mnemonic`], once, when the
//! instruction is made.
//!
//! [`Builder`]: super::Builder
//! [`Mnemonic`]: super::Mnemonic

use std::fmt;

use super::{Opcode, Reg, Text};

/// An immediate operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Imm {
    /// Printed in decimal.
    Int(i64),
    /// Printed in decimal (values above `i64::MAX`).
    UInt(u64),
    /// Printed as `0x` and upper-case hex digits.
    Hex(u64),
    /// f32 bits, printed `0f3F800000`.
    F32(u32),
    /// f64 bits, printed `0d3FF0000000000000`.
    F64(u64),
}

impl fmt::Display for Imm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Imm::Int(v) => write!(f, "{v}"),
            Imm::UInt(v) => write!(f, "{v}"),
            Imm::Hex(v) => write!(f, "0x{v:X}"),
            Imm::F32(b) => write!(f, "0f{b:08X}"),
            Imm::F64(b) => write!(f, "0d{b:016X}"),
        }
    }
}

/// What an address is relative to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Base {
    Reg(Reg),
    /// A variable: a kernel parameter, `.param` of a call, the `.local` depot, a module string.
    Sym(Text),
}

/// An operand.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Operand {
    Reg(Reg),
    /// `{%r1, %r2, ...}`.
    Vector(Vec<Reg>),
    Imm(Imm),
    /// `[base]` or `[base+offset]` (the offset printed when given, even when 0).
    Addr {
        base: Base,
        offset: Option<i64>,
    },
    /// A branch target.
    Label(Text),
    /// A variable or function name used as a value (`mov.u64 %rd1, $str_0`, `mov.u32 %r1, global_smem`).
    Sym(Text),
    /// `%tid.x`, `%ctaid.y`...
    Special(&'static str),
    /// `%p1|%p2`: the two results of a `setp`.
    PredPair(Reg, Reg),
    /// `!%p1`.
    NotPred(Reg),
    /// `_`: a result nobody reads.
    Sink,
    /// `(a, b)`: the parameter lists of a `call`.
    List(Vec<Operand>),
    /// `[map, {c0, c1, ...}]`: a TMA tensor address, the tensor map's generic address and the box's
    /// coordinates, innermost dim first.
    TensorAddr {
        map: Reg,
        coords: Vec<Reg>,
    },
}

impl Operand {
    /// Calls `f` on every virtual register the operand mentions (address bases included).
    pub fn for_each_reg(&self, f: &mut impl FnMut(Reg)) {
        match self {
            Operand::Reg(r) | Operand::NotPred(r) | Operand::Addr { base: Base::Reg(r), .. } => f(*r),
            Operand::Vector(rs) => rs.iter().for_each(|&r| f(r)),
            Operand::PredPair(a, b) => {
                f(*a);
                f(*b)
            }
            Operand::List(ops) => ops.iter().for_each(|o| o.for_each_reg(f)),
            Operand::TensorAddr { map, coords } => {
                f(*map);
                coords.iter().for_each(|&r| f(r))
            }
            Operand::Imm(_)
            | Operand::Addr { base: Base::Sym(_), .. }
            | Operand::Label(_)
            | Operand::Sym(_)
            | Operand::Special(_)
            | Operand::Sink => {}
        }
    }
}

impl fmt::Display for Operand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Operand::Reg(r) => write!(f, "{r}"),
            Operand::Vector(rs) => {
                f.write_str("{")?;
                for (i, r) in rs.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{r}")?;
                }
                f.write_str("}")
            }
            Operand::Imm(i) => write!(f, "{i}"),
            Operand::Addr { base, offset } => {
                match base {
                    Base::Reg(r) => write!(f, "[{r}")?,
                    Base::Sym(s) => write!(f, "[{s}")?,
                }
                match offset {
                    Some(o) if *o < 0 => write!(f, "-{}]", o.unsigned_abs()),
                    Some(o) => write!(f, "+{o}]"),
                    None => f.write_str("]"),
                }
            }
            Operand::Label(s) | Operand::Sym(s) => f.write_str(s),
            Operand::Special(s) => f.write_str(s),
            Operand::PredPair(a, b) => write!(f, "{a}|{b}"),
            Operand::NotPred(r) => write!(f, "!{r}"),
            Operand::Sink => f.write_str("_"),
            Operand::List(ops) => {
                f.write_str("(")?;
                for (i, o) in ops.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{o}")?;
                }
                f.write_str(")")
            }
            Operand::TensorAddr { map, coords } => write!(f, "[{map}, {}]", Operand::Vector(coords.clone())),
        }
    }
}

impl From<Reg> for Operand {
    fn from(r: Reg) -> Operand {
        Operand::Reg(r)
    }
}

impl From<&Reg> for Operand {
    fn from(r: &Reg) -> Operand {
        Operand::Reg(*r)
    }
}

impl From<Imm> for Operand {
    fn from(i: Imm) -> Operand {
        Operand::Imm(i)
    }
}

macro_rules! int_operands {
    ($($t:ty),*) => {$(
        impl From<$t> for Operand {
            fn from(v: $t) -> Operand {
                Operand::Imm(Imm::Int(v as i64))
            }
        }
    )*};
}
int_operands!(i32, u32, i64, usize);

impl From<u64> for Operand {
    fn from(v: u64) -> Operand {
        Operand::Imm(if v <= i64::MAX as u64 { Imm::Int(v as i64) } else { Imm::UInt(v) })
    }
}

/// `[r]`.
pub fn mem(r: Reg) -> Operand {
    Operand::Addr { base: Base::Reg(r), offset: None }
}

/// `[r+offset]`.
pub fn mem_off(r: Reg, offset: impl Into<i64>) -> Operand {
    Operand::Addr { base: Base::Reg(r), offset: Some(offset.into()) }
}

/// `[name]`: a variable's address.
pub fn mem_sym(name: impl Into<Text>) -> Operand {
    Operand::Addr { base: Base::Sym(name.into()), offset: None }
}

/// A symbol used as a value.
pub fn sym(name: impl Into<Text>) -> Operand {
    Operand::Sym(name.into())
}

/// `{a, b, ...}`.
pub fn vector(regs: &[Reg]) -> Operand {
    Operand::Vector(regs.to_vec())
}

/// `%tid.x` and the like.
pub fn special(name: &'static str) -> Operand {
    Operand::Special(name)
}

/// `!p`.
pub fn not(p: Reg) -> Operand {
    Operand::NotPred(p)
}

/// `0x...` (upper-case digits).
pub fn hex(v: u64) -> Operand {
    Operand::Imm(Imm::Hex(v))
}

/// A PTX immediate for an f32 constant (`0f3F800000`).
pub fn f32_imm(v: f32) -> Operand {
    Operand::Imm(Imm::F32(v.to_bits()))
}

/// A PTX immediate for an f64 constant (`0d3FF0000000000000`).
pub fn f64_imm(v: f64) -> Operand {
    Operand::Imm(Imm::F64(v.to_bits()))
}

/// The sources of an instruction: one operand, or a tuple of them (`()` for none).
pub trait Srcs {
    fn push_to(self, out: &mut Vec<Operand>);
}

impl<T: Into<Operand>> Srcs for T {
    fn push_to(self, out: &mut Vec<Operand>) {
        out.push(self.into());
    }
}

impl Srcs for () {
    fn push_to(self, _: &mut Vec<Operand>) {}
}

macro_rules! tuple_srcs {
    ($($t:ident),*) => {
        impl<$($t: Into<Operand>),*> Srcs for ($($t,)*) {
            #[allow(non_snake_case)]
            fn push_to(self, out: &mut Vec<Operand>) {
                let ($($t,)*) = self;
                $(out.push($t.into());)*
            }
        }
    };
}
tuple_srcs!(A);
tuple_srcs!(A, B);
tuple_srcs!(A, B, C);
tuple_srcs!(A, B, C, D);
tuple_srcs!(A, B, C, D, E);
tuple_srcs!(A, B, C, D, E, F);
tuple_srcs!(A, B, C, D, E, F, G);
tuple_srcs!(A, B, C, D, E, F, G, H);

/// A guard predicate: `@%p` or, negated, `@!%p`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Guard {
    pub pred: Reg,
    pub negated: bool,
}

/// One instruction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Instr {
    pub guard: Option<Guard>,
    pub op: Opcode,
    /// Destinations first (`defs` of them), then sources.
    pub operands: Vec<Operand>,
    pub defs: usize,
}

/// An instruction with opcode `op` and no operands yet.
pub fn instr(op: impl Into<Opcode>) -> Instr {
    Instr { guard: None, op: op.into(), operands: Vec::new(), defs: 0 }
}

impl Instr {
    /// `bra target`.
    pub fn bra(target: &str) -> Instr {
        instr("bra").src(Operand::Label(target.to_string().into()))
    }

    /// `bra.uni target`: every thread of the warp goes the same way.
    pub fn bra_uni(target: &str) -> Instr {
        instr("bra.uni").src(Operand::Label(target.to_string().into()))
    }

    /// Appends a destination (after the destinations already there, before any source).
    pub fn dst(mut self, o: impl Into<Operand>) -> Instr {
        self.operands.insert(self.defs, o.into());
        self.defs += 1;
        self
    }

    /// Appends a source.
    pub fn src(mut self, o: impl Into<Operand>) -> Instr {
        self.operands.push(o.into());
        self
    }

    /// Appends sources.
    pub fn srcs(mut self, s: impl Srcs) -> Instr {
        s.push_to(&mut self.operands);
        self
    }

    /// Appends a modifier to the opcode (`instr("setp").m("lt").m("s32")`).
    pub fn m(mut self, m: impl Into<Text>) -> Instr {
        self.op.push(m);
        self
    }

    /// Runs only where `p` holds (`@p`).
    pub fn guard(mut self, p: Reg) -> Instr {
        self.guard = Some(Guard { pred: p, negated: false });
        self
    }

    /// Runs only where `p` does not hold (`@!p`).
    pub fn unless(mut self, p: Reg) -> Instr {
        self.guard = Some(Guard { pred: p, negated: true });
        self
    }

    /// Guarded by `p` when there is one.
    pub fn when(self, p: Option<Reg>) -> Instr {
        match p {
            Some(p) => self.guard(p),
            None => self,
        }
    }

    /// The destination operands.
    pub fn defs(&self) -> &[Operand] {
        &self.operands[..self.defs]
    }

    /// The source operands.
    pub fn uses(&self) -> &[Operand] {
        &self.operands[self.defs..]
    }

    /// Calls `f` on every register the instruction reads: the guard and the sources' registers (address bases
    /// included).
    pub fn for_each_use(&self, f: &mut impl FnMut(Reg)) {
        if let Some(g) = self.guard {
            f(g.pred);
        }
        self.uses().iter().for_each(|o| o.for_each_reg(f));
    }

    /// Calls `f` on every register the destinations name.
    pub fn for_each_def(&self, f: &mut impl FnMut(Reg)) {
        self.defs().iter().for_each(|o| o.for_each_reg(f));
    }
}

impl fmt::Display for Instr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(g) = self.guard {
            write!(f, "@{}{} ", if g.negated { "!" } else { "" }, g.pred)?;
        }
        write!(f, "{}", self.op)?;
        for (i, o) in self.operands.iter().enumerate() {
            write!(f, "{}{o}", if i == 0 { " " } else { ", " })?;
        }
        Ok(())
    }
}

/// A line of a kernel body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stmt {
    Ins(Instr),
    Label(String),
    Comment(String),
    /// `{`: opens the scope of a call's parameters.
    Open,
    /// `}`.
    Close,
    /// `.param .b64 param0`: a call parameter (or return value) in the enclosing scope.
    Param {
        ty: &'static str,
        name: &'static str,
    },
    /// Inline PTX written by the kernel's author (`inline_asm_elementwise`), its operands already substituted,
    /// printed in a `{ }` scope of its own (so that `.reg` declarations inside stay local). `regs` are every
    /// register the text names: it is never removed, and they all count as read.
    Asm {
        text: String,
        regs: Vec<Reg>,
    },
}

impl fmt::Display for Stmt {
    /// The line, without its newline.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Stmt::Ins(i) => write!(f, "    {i};"),
            Stmt::Label(l) => write!(f, "{l}:"),
            Stmt::Comment(c) => write!(f, "    // {c}"),
            Stmt::Open => f.write_str("    {"),
            Stmt::Close => f.write_str("    }"),
            Stmt::Param { ty, name } => write!(f, "    .param .{ty} {name};"),
            Stmt::Asm { text, .. } => {
                f.write_str("    {\n")?;
                for line in text.lines() {
                    writeln!(f, "    {}", line.trim())?;
                }
                f.write_str("    }")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ptx::RegClass;

    fn r(class: RegClass, num: u32) -> Reg {
        Reg { class, num }
    }

    fn line(i: Instr) -> String {
        Stmt::Ins(i).to_string()
    }

    #[test]
    fn representative_forms_print_as_ptx() {
        let (r1, r2, r3, r5) = (r(RegClass::B32, 1), r(RegClass::B32, 2), r(RegClass::B32, 3), r(RegClass::B32, 5));
        let (rd1, p1, p2) = (r(RegClass::B64, 1), r(RegClass::Pred, 1), r(RegClass::Pred, 2));
        let v: Vec<Reg> = (5..9).map(|n| r(RegClass::B32, n)).collect();
        assert_eq!(
            line(instr("ld.shared.v4.b32").dst(vector(&v)).src(mem(r3))),
            "    ld.shared.v4.b32 {%r5, %r6, %r7, %r8}, [%r3];"
        );
        assert_eq!(
            line(instr("st.global.v2.b32").guard(p1).srcs((mem(rd1), vector(&v[..2])))),
            "    @%p1 st.global.v2.b32 [%rd1], {%r5, %r6};"
        );
        assert_eq!(
            line(instr("st.local.f64").srcs((mem_off(rd1, 8), r(RegClass::F64, 2)))),
            "    st.local.f64 [%rd1+8], %fd2;"
        );
        assert_eq!(
            line(instr("ld.param.u64").dst(rd1).src(mem_sym("k_param_0"))),
            "    ld.param.u64 %rd1, [k_param_0];"
        );
        assert_eq!(line(instr("mov.u32").dst(r1).src(special("%tid.x"))), "    mov.u32 %r1, %tid.x;");
        assert_eq!(line(instr("mov.u32").dst(r1).src(sym("global_smem"))), "    mov.u32 %r1, global_smem;");
        assert_eq!(
            line(instr("setp.lt.s32").dst(Operand::PredPair(p1, p2)).srcs((r1, r2))),
            "    setp.lt.s32 %p1|%p2, %r1, %r2;"
        );
        assert_eq!(line(instr("or.pred").dst(p1).srcs((p2, not(p1)))), "    or.pred %p1, %p2, !%p1;");
        assert_eq!(line(Instr::bra("$L_x_1").unless(p2)), "    @!%p2 bra $L_x_1;");
        assert_eq!(line(instr("mov.f32").dst(r(RegClass::F32, 1)).src(f32_imm(1.0))), "    mov.f32 %f1, 0f3F800000;");
        assert_eq!(
            line(instr("mov.f64").dst(r(RegClass::F64, 1)).src(f64_imm(-2.0))),
            "    mov.f64 %fd1, 0dC000000000000000;"
        );
        assert_eq!(line(instr("mov.b16").dst(r(RegClass::B16, 1)).src(hex(0xff))), "    mov.b16 %h1, 0xFF;");
        assert_eq!(line(instr("and.b32").dst(r5).srcs((r5, -8192))), "    and.b32 %r5, %r5, -8192;");
        assert_eq!(
            line(instr("mbarrier.arrive.expect_tx.shared::cta.b64").guard(p1).dst(Operand::Sink).srcs((mem(r1), 64))),
            "    @%p1 mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r1], 64;"
        );
        assert_eq!(line(instr("bar.sync").src(0)), "    bar.sync 0;");
        assert_eq!(line(instr("ret")), "    ret;");
        let acc: Vec<Reg> = (1..5).map(|n| r(RegClass::F32, n)).collect();
        let (da, db) = (r(RegClass::B64, 2), r(RegClass::B64, 3));
        let wgmma =
            instr("wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16").dst(vector(&acc)).srcs((da, db, p1, 1, 1, 0, 0));
        assert_eq!(
            line(wgmma.clone()),
            "    wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f1, %f2, %f3, %f4}, %rd2, %rd3, %p1, 1, 1, 0, 0;"
        );
        assert_eq!(wgmma.defs().len(), 1);
        assert_eq!(wgmma.uses().len(), 7);
        let call = instr("call.uni")
            .dst(Operand::List(vec![sym("retval0")]))
            .src(sym("vprintf"))
            .src(Operand::List(vec![sym("param0"), sym("param1")]));
        assert_eq!(line(call), "    call.uni (retval0), vprintf, (param0, param1);");
        assert_eq!(Stmt::Param { ty: "b64", name: "param0" }.to_string(), "    .param .b64 param0;");
        assert_eq!(Stmt::Label("$L_exit".into()).to_string(), "$L_exit:");
    }
}
