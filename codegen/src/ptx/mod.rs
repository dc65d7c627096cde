//! A small PTX text builder: virtual registers by class, instructions, labels, module-level declarations
//! (external functions such as `vprintf`, constant byte strings in `.global`), a per-kernel `.local` scratch
//! buffer, and the module/entry wrapper. It knows nothing about the IR; `lower` decides what to emit.
//! [`dce`] removes the pure instructions whose results nothing reads when the body is finished.

use std::fmt::Write;

use tessel_tile::Target;

pub mod dce;

/// A PTX register class. 8-bit integers live in 16-bit registers (PTX has no 8-bit registers).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RegClass {
    Pred,
    B16,
    B32,
    B64,
    F32,
    F64,
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
        }
    }

    pub fn bits(self) -> u32 {
        match self {
            RegClass::Pred => 1,
            RegClass::B16 => 16,
            RegClass::B32 | RegClass::F32 => 32,
            RegClass::B64 | RegClass::F64 => 64,
        }
    }

    const ALL: [RegClass; 6] =
        [RegClass::Pred, RegClass::B16, RegClass::B32, RegClass::B64, RegClass::F32, RegClass::F64];
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
    counts: [u32; 6],
    /// Instructions placed at the kernel entry, before the body (values that depend only on thread ids).
    prologue: String,
    body: String,
    labels: u32,
    /// While set, `ins` appends to the prologue.
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

    /// One instruction (without the trailing `;`).
    pub fn ins(&mut self, text: impl AsRef<str>) {
        let out = if self.in_prologue { &mut self.prologue } else { &mut self.body };
        let _ = writeln!(out, "    {};", text.as_ref());
    }

    /// A line without the trailing `;` (the braces of a call's parameter scope).
    pub fn raw(&mut self, text: impl AsRef<str>) {
        let out = if self.in_prologue { &mut self.prologue } else { &mut self.body };
        let _ = writeln!(out, "    {}", text.as_ref());
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
    pub fn comment(&mut self, text: impl AsRef<str>) {
        let _ = writeln!(self.body, "    // {}", text.as_ref());
    }

    pub fn new_label(&mut self, hint: &str) -> String {
        self.labels += 1;
        format!("$L_{hint}_{}", self.labels)
    }

    pub fn label(&mut self, l: &str) {
        let _ = writeln!(self.body, "{l}:");
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

    /// Register (and scratch buffer) declarations followed by the instructions, without dead pure ones.
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
        s += &dce::eliminate(&format!("{}{}", self.prologue, self.body));
        s
    }
}

/// A kernel parameter: its PTX name and type (`.u64` pointer, `.u32`...).
pub struct Param {
    pub name: String,
    pub ty: &'static str,
}

/// The whole module text for one entry: header, the builder's module-level declarations, dynamic shared memory
/// when used, and the entry with the builder's body.
pub fn module(arch: Target, name: &str, params: &[Param], threads: u32, uses_smem: bool, b: &Builder) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "//\n// Generated by tessel-codegen\n//\n");
    let _ = writeln!(s, ".version {}\n.target {}\n.address_size 64\n", arch.isa_version(), arch.name());
    let decls = b.declarations();
    if !decls.is_empty() {
        let _ = writeln!(s, "{decls}");
    }
    if uses_smem {
        let _ = writeln!(s, ".extern .shared .align 1024 .b8 global_smem[];\n");
    }
    let _ = writeln!(s, ".visible .entry {name}(");
    let ps: Vec<String> = params.iter().map(|p| format!("    .param {} {}", p.ty, p.name)).collect();
    let _ = writeln!(s, "{}\n)", ps.join(",\n"));
    let _ = writeln!(s, ".reqntid {threads}, 1, 1\n{{");
    s += &b.finish();
    let _ = writeln!(s, "}}");
    s
}

/// A PTX immediate for an f32 constant (`0f3F800000`).
pub fn f32_imm(v: f32) -> String {
    format!("0f{:08X}", v.to_bits())
}

/// A PTX immediate for an f64 constant.
pub fn f64_imm(v: f64) -> String {
    format!("0d{:016X}", v.to_bits())
}
