//! PTX as data, and its text. This module owns:
//! - the typed instruction ([`Instr`]: guard, [`Opcode`], [`Operand`]s with the destinations marked) and the
//!   other statements of a body ([`Stmt`]: labels, comments, call scopes with their `.param` declarations), in
//!   `instr.rs`, with their printer;
//! - the [`Opcode`]: a [`Mnemonic`] (an enum of every base tessel emits, with its text) and the dotted
//!   modifiers as text, and the per-mnemonic table of what is pure, in `opcode.rs`;
//! - the [`Builder`]: virtual registers by class, the statement lists of one kernel (prologue and body),
//!   module-level declarations (external functions such as `vprintf`, constant byte strings in `.global`), a
//!   per-kernel `.local` scratch buffer;
//! - [`dce`]: removal of the pure instructions whose results nothing reads, over the typed statements;
//! - [`module`]: the module/entry wrapper, where the text is printed, once.
//!
//! It knows nothing about the IR; `lower` decides what to emit.

use std::fmt::Write;

use tessel_tile::Target;

pub mod dce;
mod instr;
mod opcode;

pub use instr::{
    Base, Guard, Imm, Instr, Operand, Srcs, Stmt, f32_imm, f64_imm, hex, instr, mem, mem_off, mem_sym, not, special,
    sym, vector,
};
pub use opcode::{Mnemonic, Opcode, Text};

/// A PTX register class. 8-bit integers live in 16-bit registers (PTX has no 8-bit registers).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RegClass {
    Pred,
    B16,
    B32,
    B64,
    F32,
    F64,
    /// 128 bits (a cluster launch control response, `.b128`).
    B128,
}

impl RegClass {
    fn decl(self) -> (&'static str, &'static str) {
        match self {
            RegClass::Pred => (".pred", "%p"),
            RegClass::B16 => (".b16", "%h"),
            RegClass::B32 => (".b32", "%r"),
            RegClass::B64 => (".b64", "%rd"),
            RegClass::F32 => (".f32", "%f"),
            RegClass::F64 => (".f64", "%fd"),
            RegClass::B128 => (".b128", "%q"),
        }
    }

    pub fn bits(self) -> u32 {
        match self {
            RegClass::Pred => 1,
            RegClass::B16 => 16,
            RegClass::B32 | RegClass::F32 => 32,
            RegClass::B64 | RegClass::F64 => 64,
            RegClass::B128 => 128,
        }
    }

    const ALL: [RegClass; 7] =
        [RegClass::Pred, RegClass::B16, RegClass::B32, RegClass::B64, RegClass::F32, RegClass::F64, RegClass::B128];
}

/// A virtual register: its class and number (printed as `%r7`, `%f3`...).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Reg {
    pub class: RegClass,
    pub num: u32,
}

impl std::fmt::Display for Reg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}{}", self.class.decl().1, self.num)
    }
}

/// The body of one kernel under construction, and what the module around it must declare.
#[derive(Default)]
pub struct Builder {
    counts: [u32; RegClass::ALL.len()],
    /// Statements placed at the kernel entry, before the body (values that depend only on thread ids).
    prologue: Vec<Stmt>,
    body: Vec<Stmt>,
    labels: u32,
    /// While set, instructions go to the prologue.
    in_prologue: bool,
    /// Module-level `.extern .func` prototypes, each once, in first-use order.
    externs: Vec<String>,
    /// Module-level byte strings: `(name, bytes)`, each distinct content once.
    strings: Vec<(String, Vec<u8>)>,
    /// Bytes of the kernel's `.local` scratch buffer (0: none); every user starts at offset 0.
    local_bytes: u32,
    /// Comment lines printed at the top of the entry body (the shared-memory table).
    header: String,
}

/// The `.local` scratch buffer of a kernel (one per entry, sized for its largest user).
pub const LOCAL_DEPOT: &str = "__local_depot";

impl Builder {
    pub fn new() -> Builder {
        Builder::default()
    }

    /// A fresh register of `class`.
    pub fn reg(&mut self, class: RegClass) -> Reg {
        let i = RegClass::ALL.iter().position(|&c| c == class).unwrap();
        self.counts[i] += 1;
        Reg { class, num: self.counts[i] }
    }

    fn push(&mut self, s: Stmt) {
        if self.in_prologue { self.prologue.push(s) } else { self.body.push(s) }
    }

    /// One instruction.
    pub fn emit(&mut self, i: Instr) {
        self.push(Stmt::Ins(i));
    }

    /// `op dst, srcs...`: an instruction with one destination.
    pub fn op(&mut self, op: impl Into<Opcode>, dst: impl Into<Operand>, srcs: impl Srcs) {
        self.emit(instr(op).dst(dst).srcs(srcs));
    }

    /// Whether the body's last statement is an unguarded `bar` (`bar.sync`): a second one right after it would
    /// order nothing more.
    pub fn ends_with_barrier(&self) -> bool {
        let bar_sync = |i: &Instr| i.guard.is_none() && i.op.is(Mnemonic::Bar) && i.op.has("sync");
        !self.in_prologue && matches!(self.body.last(), Some(Stmt::Ins(i)) if bar_sync(i))
    }

    /// Places `i` right before the body's last statement (the barrier [`Builder::ends_with_barrier`] found).
    pub fn emit_before_last(&mut self, i: Instr) {
        let at = self.body.len().saturating_sub(1);
        self.body.insert(at, Stmt::Ins(i));
    }

    /// `op srcs...`: an instruction without a destination (a store, a barrier, a wait).
    pub fn effect(&mut self, op: impl Into<Opcode>, srcs: impl Srcs) {
        self.emit(instr(op).srcs(srcs));
    }

    /// Inline PTX with its operands substituted (see [`Stmt::Asm`]); `regs`: every register it names.
    pub fn asm(&mut self, text: String, regs: Vec<Reg>) {
        self.push(Stmt::Asm { text, regs });
    }

    /// Opens the scope of a call's parameters (`{`); [`Builder::param`] declares them, [`Builder::close`] ends it.
    pub fn open(&mut self) {
        self.push(Stmt::Open);
    }

    /// Declares `.param .ty name` in the open call scope.
    pub fn param(&mut self, ty: &'static str, name: &'static str) {
        self.push(Stmt::Param { ty, name });
    }

    /// Closes a call scope (`}`).
    pub fn close(&mut self) {
        self.push(Stmt::Close);
    }

    /// Sends the following instructions to the kernel entry (`true`) or back to the current point (`false`):
    /// values computed there dominate every use, whatever branch first asked for them.
    pub fn set_prologue(&mut self, on: bool) {
        self.in_prologue = on;
    }

    /// Comment lines (each starting with `//`) printed at the top of the entry body.
    pub fn set_header(&mut self, text: String) {
        self.header = text;
    }

    /// A comment line.
    pub fn comment(&mut self, text: impl Into<String>) {
        self.body.push(Stmt::Comment(text.into()));
    }

    pub fn new_label(&mut self, hint: &str) -> String {
        self.labels += 1;
        format!("$L_{hint}_{}", self.labels)
    }

    pub fn label(&mut self, l: &str) {
        self.body.push(Stmt::Label(l.to_string()));
    }

    /// Declares the external function `name` with the prototype `decl` (the whole `.extern .func ...` line,
    /// without the `;`), once per module.
    pub fn extern_func(&mut self, decl: &str) {
        if !self.externs.iter().any(|d| d == decl) {
            self.externs.push(decl.to_string());
        }
    }

    /// A module-level NUL-terminated byte string holding `text`; returns its symbol. Equal strings share one
    /// symbol.
    pub fn global_string(&mut self, text: &str) -> String {
        let mut bytes = text.as_bytes().to_vec();
        bytes.push(0);
        if let Some((name, _)) = self.strings.iter().find(|(_, b)| *b == bytes) {
            return name.clone();
        }
        let name = format!("$str_{}", self.strings.len());
        self.strings.push((name.clone(), bytes));
        name
    }

    /// The kernel's `.local` scratch buffer ([`LOCAL_DEPOT`], 8-byte aligned), grown to at least `bytes`.
    pub fn local_depot(&mut self, bytes: u32) -> &'static str {
        self.local_bytes = self.local_bytes.max(bytes);
        LOCAL_DEPOT
    }

    /// The module-level declarations this kernel needs (external functions, then strings).
    pub fn declarations(&self) -> String {
        let mut s = String::new();
        for d in &self.externs {
            let _ = writeln!(s, "{d};");
        }
        for (name, bytes) in &self.strings {
            let list = bytes.iter().map(|b| b.to_string()).collect::<Vec<_>>().join(", ");
            let _ = writeln!(s, ".global .align 1 .b8 {name}[{}] = {{{list}}};", bytes.len());
        }
        s
    }

    /// Register (and scratch buffer) declarations followed by the statements, without dead pure instructions:
    /// the only place the body becomes text.
    pub fn finish(&self) -> String {
        let mut s = String::new();
        for line in self.header.lines() {
            let _ = writeln!(s, "    {line}");
        }
        if self.local_bytes > 0 {
            let _ = writeln!(s, "    .local .align 8 .b8 {LOCAL_DEPOT}[{}];", self.local_bytes);
        }
        for (i, c) in RegClass::ALL.iter().enumerate() {
            if self.counts[i] > 0 {
                let (ty, prefix) = c.decl();
                let _ = writeln!(s, "    .reg {ty} {prefix}<{}>;", self.counts[i] + 1);
            }
        }
        let stmts: Vec<&Stmt> = self.prologue.iter().chain(&self.body).collect();
        for (st, live) in stmts.iter().zip(dce::live(&stmts)) {
            if live {
                let _ = writeln!(s, "{st}");
            }
        }
        s
    }
}

/// A kernel parameter: its PTX name and type (`.u64` pointer, `.u32`...).
pub struct Param {
    pub name: String,
    pub ty: &'static str,
    /// An array of this many bytes (a tensor map: `.param .align 64 .b8 name[128]`) rather than a scalar.
    pub bytes: Option<u32>,
}

/// An entry's directives: threads per CTA (`.reqntid`), the register cap (`.maxnreg`, Triton's `maxnreg` launch
/// option), the occupancy wanted (`.minnctapersm`), which ptxas and the driver's JIT honour, and the cluster shape.
#[derive(Clone, Copy, Debug)]
pub struct Directives {
    pub threads: u32,
    pub maxnreg: Option<u32>,
    /// CTAs that should fit on one SM at once (`.minnctapersm`): ptxas caps registers to match.
    pub min_ctas: Option<u32>,
    /// The PTX ISA version (`.version`): the target's, or newer where an instruction needs it.
    pub isa: &'static str,
    /// CTAs per thread-block cluster (`num_ctas`): above 1 the entry says `.explicitcluster` and
    /// `.reqnctapercluster N, 1, 1`, so the driver refuses a launch without that cluster shape.
    pub cluster: u32,
}

/// The whole module text for one entry: header, the builder's module-level declarations, dynamic shared memory
/// when used, and the entry with the builder's body.
pub fn module(arch: Target, name: &str, params: &[Param], entry: Directives, uses_smem: bool, b: &Builder) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "//\n// Generated by tessel-codegen\n//\n");
    let _ = writeln!(s, ".version {}\n.target {}\n.address_size 64\n", entry.isa, arch.name());
    let decls = b.declarations();
    if !decls.is_empty() {
        let _ = writeln!(s, "{decls}");
    }
    if uses_smem {
        let _ = writeln!(s, ".extern .shared .align 1024 .b8 global_smem[];\n");
    }
    let _ = writeln!(s, ".visible .entry {name}(");
    let ps: Vec<String> = params
        .iter()
        .map(|p| match p.bytes {
            Some(n) => format!("    .param {} {}[{n}]", p.ty, p.name),
            None => format!("    .param {} {}", p.ty, p.name),
        })
        .collect();
    let _ = writeln!(s, "{}\n)", ps.join(",\n"));
    let _ = writeln!(s, ".reqntid {}, 1, 1", entry.threads);
    if let Some(n) = entry.maxnreg {
        let _ = writeln!(s, ".maxnreg {n}");
    }
    if let Some(n) = entry.min_ctas {
        let _ = writeln!(s, ".minnctapersm {n}");
    }
    if entry.cluster > 1 {
        let _ = writeln!(s, ".explicitcluster\n.reqnctapercluster {}, 1, 1", entry.cluster);
    }
    let _ = writeln!(s, "{{");
    s += &b.finish();
    let _ = writeln!(s, "}}");
    s
}
