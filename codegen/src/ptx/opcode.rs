//! The opcode of a PTX instruction: its base [`Mnemonic`], a closed enum of what tessel emits, and its dotted
//! modifiers as text. Lowering may spell an opcode as dotted text (`"ld.shared.v4.b32"`, `format!("cvt.rn.{t}.f32")`);
//! it is split, and its base parsed into the enum, once, when the [`Opcode`] is made. Every question about an
//! instruction's kind (what [`Opcode::is_pure`] lets DCE delete, [`Opcode::is`]) matches on the enum.
//!
//! A base that is not in the enum is a compiler bug, not a user error (no kernel text reaches a mnemonic; inline
//! PTX is [`super::Stmt::Asm`]). Two checks keep it out: a unit test below scans every dotted string literal in
//! `codegen/src` and parses its base, and a `debug_assert` where the opcode is made stops every debug build
//! (every test that compiles a kernel) at one. A release build does not panic: it keeps the text as
//! [`Mnemonic::Unknown`], prints it unchanged, and treats it as having effects.

use std::borrow::Cow;
use std::fmt;

/// Text that is usually a literal (opcode parts, symbols) and sometimes built at run time.
pub type Text = Cow<'static, str>;

macro_rules! mnemonics {
    ($($(#[$doc:meta])* $v:ident = $t:literal,)*) => {
        /// A PTX base mnemonic tessel emits (`mov`, `ld`, `wgmma`...), printed as its text.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Mnemonic {
            $($(#[$doc])* $v,)*
            /// A base not listed here (a compiler bug: see the module doc); its text is the opcode's first
            /// modifier.
            Unknown,
        }

        impl Mnemonic {
            /// Every known mnemonic.
            pub const ALL: &[Mnemonic] = &[$(Mnemonic::$v),*];

            /// The PTX text (empty for [`Mnemonic::Unknown`]).
            pub fn text(self) -> &'static str {
                match self {
                    $(Mnemonic::$v => $t,)*
                    Mnemonic::Unknown => "",
                }
            }

            /// The mnemonic spelled `s`, if tessel knows it.
            pub fn parse(s: &str) -> Option<Mnemonic> {
                match s {
                    $($t => Some(Mnemonic::$v),)*
                    _ => None,
                }
            }
        }
    };
}

mnemonics! {
    Abs = "abs",
    Activemask = "activemask",
    Add = "add",
    And = "and",
    Atom = "atom",
    Bar = "bar",
    Barrier = "barrier",
    Bfe = "bfe",
    Bfi = "bfi",
    Bra = "bra",
    Brev = "brev",
    Call = "call",
    Clusterlaunchcontrol = "clusterlaunchcontrol",
    Clz = "clz",
    Cos = "cos",
    Cp = "cp",
    Cvt = "cvt",
    Cvta = "cvta",
    Div = "div",
    Elect = "elect",
    Exit = "exit",
    Ex2 = "ex2",
    Fence = "fence",
    Fma = "fma",
    Griddepcontrol = "griddepcontrol",
    Ld = "ld",
    Ldmatrix = "ldmatrix",
    Lg2 = "lg2",
    Mad = "mad",
    Mapa = "mapa",
    Max = "max",
    Mbarrier = "mbarrier",
    Min = "min",
    Mma = "mma",
    Mov = "mov",
    Mul = "mul",
    Neg = "neg",
    Not = "not",
    Or = "or",
    Popc = "popc",
    Prmt = "prmt",
    Rcp = "rcp",
    Red = "red",
    Rem = "rem",
    Ret = "ret",
    Rsqrt = "rsqrt",
    Selp = "selp",
    Setmaxnreg = "setmaxnreg",
    Setp = "setp",
    Shfl = "shfl",
    Shl = "shl",
    Shr = "shr",
    Sin = "sin",
    Sqrt = "sqrt",
    St = "st",
    Stmatrix = "stmatrix",
    Sub = "sub",
    Tcgen05 = "tcgen05",
    Tensormap = "tensormap",
    Trap = "trap",
    Vote = "vote",
    Wgmma = "wgmma",
    Xor = "xor",
}

impl fmt::Display for Mnemonic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.text())
    }
}

/// An opcode: the base mnemonic and its dotted modifiers in order (`mul.wide.s32` is [`Mnemonic::Mul`] with
/// `["wide", "s32"]`; `ld.shared.v4.b32` is [`Mnemonic::Ld`] with `["shared", "v4", "b32"]`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Opcode {
    pub base: Mnemonic,
    pub mods: Vec<Text>,
}

/// State spaces, as they appear among an opcode's modifiers.
const SPACES: &[&str] = &["global", "shared", "shared::cta", "shared::cluster", "local", "param", "const"];

impl Opcode {
    /// Splits dotted text (`"ld.shared.v4.b32"`) into its base, parsed once, and its modifiers; `part` makes a
    /// modifier's text from its slice of `s`.
    fn split<'a>(s: &'a str, part: impl Fn(&'a str) -> Text) -> Opcode {
        let mut parts = s.split('.');
        let first = parts.next().unwrap_or("");
        let mods = parts.map(&part);
        let base = Mnemonic::parse(first);
        debug_assert!(base.is_some(), "PTX mnemonic `{first}` (in `{s}`) has no `Mnemonic` variant: add one");
        match base {
            Some(base) => Opcode { base, mods: mods.collect() },
            None => Opcode { base: Mnemonic::Unknown, mods: std::iter::once(part(first)).chain(mods).collect() },
        }
    }

    /// Whether the base mnemonic is `base`.
    pub fn is(&self, base: Mnemonic) -> bool {
        self.base == base
    }

    /// Whether `m` is one of the modifiers.
    pub fn has(&self, m: &str) -> bool {
        self.mods.iter().any(|x| x == m)
    }

    /// The state space named by the modifiers (`global`, `shared`, `shared::cta`, `local`, `param`...).
    pub fn space(&self) -> Option<&str> {
        self.mods.iter().map(|m| m.as_ref()).find(|m| SPACES.contains(m))
    }

    /// The vector width of a `.v2`/`.v4` access.
    pub fn vector(&self) -> Option<u32> {
        self.mods.iter().find_map(|m| m.strip_prefix('v').and_then(|n| n.parse().ok()))
    }

    /// The last type suffix (`b32`, `f16`, `s64`, `pred`, `f16x2`...): the operand type of most instructions
    /// (the source type of a `cvt`).
    pub fn ty(&self) -> Option<&str> {
        self.mods.iter().rev().map(|m| m.as_ref()).find(|m| is_type(m))
    }

    /// Appends a modifier.
    pub fn push(&mut self, m: impl Into<Text>) {
        self.mods.push(m.into());
    }

    /// Whether executing the instruction does nothing but write its destinations: the per-mnemonic table of
    /// what dead-code elimination may remove (exhaustive, so a new mnemonic needs a decision). Memory (except
    /// `ld.param`), barriers, fences, control flow, calls, shuffles, votes, atomics, `cp.async`, `mma`, `wgmma`,
    /// `mbarrier`, `clusterlaunchcontrol` and [`Mnemonic::Unknown`] have effects; so do the carry-chain forms (`.cc`: a later
    /// instruction reads the carry flag).
    pub fn is_pure(&self) -> bool {
        use Mnemonic::*;
        let pure = match self.base {
            Mov | Add | Sub | Mul | Mad | Fma | Shl | Shr | And | Or | Xor | Not | Cvt | Cvta | Setp | Selp | Bfe
            | Bfi | Min | Max | Neg | Abs | Rcp | Sqrt | Rsqrt | Ex2 | Lg2 | Sin | Cos | Div | Rem | Popc | Clz
            | Brev | Mapa | Prmt => true,
            Ld => self.space() == Some("param"),
            Activemask | Atom | Bar | Barrier | Bra | Call | Clusterlaunchcontrol | Cp | Elect | Exit | Fence
            | Griddepcontrol | Ldmatrix | Mbarrier | Mma | Red | Ret | Setmaxnreg | Shfl | St | Stmatrix | Tcgen05
            | Tensormap | Trap | Vote | Wgmma | Unknown => false,
        };
        pure && !self.has("cc")
    }
}

/// Whether an opcode modifier is a type suffix.
fn is_type(m: &str) -> bool {
    let m = m.strip_suffix("x2").unwrap_or(m);
    if matches!(m, "pred" | "bf16" | "tf32" | "e4m3" | "e5m2") {
        return true;
    }
    m.strip_prefix(['b', 's', 'u', 'f']).is_some_and(|bits| matches!(bits, "8" | "16" | "32" | "64" | "128"))
}

impl From<Mnemonic> for Opcode {
    fn from(base: Mnemonic) -> Opcode {
        Opcode { base, mods: Vec::new() }
    }
}

impl From<&'static str> for Opcode {
    fn from(s: &'static str) -> Opcode {
        Opcode::split(s, Cow::Borrowed)
    }
}

impl From<String> for Opcode {
    fn from(s: String) -> Opcode {
        Opcode::split(&s, |p| Cow::Owned(p.to_string()))
    }
}

impl fmt::Display for Opcode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // An unknown base is kept as the first modifier; it prints where the base would.
        let mods = match self.base {
            Mnemonic::Unknown => {
                f.write_str(self.mods.first().map_or("", |m| m.as_ref()))?;
                self.mods.get(1..).unwrap_or(&[])
            }
            base => {
                f.write_str(base.text())?;
                &self.mods
            }
        };
        for m in mods {
            write!(f, ".{m}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ptx::instr;

    #[test]
    fn opcodes_answer_questions_without_parsing() {
        let ld = Opcode::from("ld.shared.v4.b32");
        assert!(
            ld.is(Mnemonic::Ld) && ld.space() == Some("shared") && ld.vector() == Some(4) && ld.ty() == Some("b32")
        );
        assert!(!ld.is_pure());
        assert!(Opcode::from("ld.param.u64").is_pure());
        let cvt = Opcode::from(format!("cvt.rn.{}.f32", "bf16"));
        assert_eq!((cvt.base, cvt.mods.len(), cvt.ty()), (Mnemonic::Cvt, 3, Some("f32")));
        assert!(cvt.is_pure());
        assert!(!Opcode::from("add.cc.u32").is_pure());
        for effect in [
            "st.global.b32",
            "bar.sync",
            "bra.uni",
            "shfl.sync.idx.b32",
            "atom.global.add.f32",
            "call.uni",
            "wgmma.fence.sync.aligned",
            "mbarrier.try_wait.parity.shared::cta.b64",
            "vote.sync.any.pred",
        ] {
            assert!(!Opcode::from(effect).is_pure(), "{effect}");
        }
        assert_eq!(Opcode::from("mbarrier.init.shared::cta.b64").space(), Some("shared::cta"));
        assert_eq!(instr("add").m("s32").op, Opcode::from("add.s32"));
        assert_eq!(instr(Mnemonic::Add).m("s32").op, Opcode::from("add.s32"));
        assert_eq!(Opcode::from("ret").to_string(), "ret");
    }

    #[test]
    fn every_mnemonic_round_trips_through_its_text() {
        for &m in Mnemonic::ALL {
            assert_eq!(Mnemonic::parse(m.text()), Some(m), "{m:?}");
            assert_eq!(Opcode::from(format!("{m}.b32")).to_string(), format!("{}.b32", m.text()));
        }
        assert_eq!(Mnemonic::parse(""), None);
        assert_eq!(Mnemonic::parse("Unknown"), None);
    }

    /// A base tessel does not know stops a debug build (the check tests rely on) and, in a release build,
    /// prints unchanged and counts as having effects.
    #[test]
    fn an_unknown_base_is_caught_in_debug_and_kept_in_release() {
        // Built at run time, so that the source scan below does not read it as an opcode.
        let text = ["nanosleep", "u32"].join(".");
        let made = std::panic::catch_unwind(|| Opcode::from(text.clone()));
        if cfg!(debug_assertions) {
            assert!(made.is_err());
        } else {
            let op = made.expect("release builds do not panic");
            assert_eq!((op.base, op.to_string(), op.is_pure()), (Mnemonic::Unknown, text, false));
        }
    }

    /// The string literals in `codegen/src` that look like dotted opcodes (`"cvt.rn.f32.s32"`, a `format!` text
    /// such as `"mul.wide.{}"`) or are the first argument of a builder shortcut (`effect("ret", ..)`,
    /// `instr("trap")`): `(file, line, text)`.
    fn opcode_literals() -> Vec<(String, usize, String)> {
        fn rs_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
            for e in std::fs::read_dir(dir).expect("codegen/src is readable").flatten() {
                let p = e.path();
                if p.is_dir() {
                    rs_files(&p, out);
                } else if p.extension().is_some_and(|x| x == "rs") {
                    out.push(p);
                }
            }
        }
        let mut files = Vec::new();
        rs_files(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), &mut files);
        let dotted = |s: &str| {
            let (base, rest) = s.split_once('.').unwrap_or((s, ""));
            !rest.is_empty()
                && base.starts_with(|c: char| c.is_ascii_lowercase())
                && base.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
                && rest.chars().all(|c| c.is_ascii_alphanumeric() || "_:.{}".contains(c))
        };
        let shortcuts = ["op(", "effect(", "instr(", "fop(", "iop(", "approx(", "ishift(", "one(l, "];
        let mut found = Vec::new();
        for path in files {
            let text = std::fs::read_to_string(&path).expect("a source file is readable");
            for (n, line) in text.lines().enumerate() {
                if line.trim_start().starts_with("//") {
                    continue;
                }
                // Literals: the text between each pair of quotes on the line.
                let mut rest = line;
                while let Some(open) = rest.find('"') {
                    let before = &rest[..open];
                    let Some(len) = rest[open + 1..].find('"') else { break };
                    let lit = &rest[open + 1..open + 1 + len];
                    let shortcut = shortcuts.iter().any(|s| before.trim_end().ends_with(s));
                    if dotted(lit) || (shortcut && !lit.is_empty() && !lit.contains(' ')) {
                        found.push((path.display().to_string(), n + 1, lit.to_string()));
                    }
                    rest = &rest[open + len + 2..];
                }
            }
        }
        found
    }

    #[test]
    fn every_opcode_literal_in_codegen_has_a_mnemonic() {
        let lits = opcode_literals();
        assert!(lits.len() > 300, "the scan found only {} opcode literals", lits.len());
        let mut seen = std::collections::HashSet::new();
        for (file, line, lit) in &lits {
            let base = lit.split('.').next().unwrap_or("");
            if base.contains('{') {
                continue;
            }
            let m = Mnemonic::parse(base);
            assert!(m.is_some(), "{file}:{line}: `{lit}`: the PTX mnemonic `{base}` has no `Mnemonic` variant");
            seen.extend(m);
        }
        // And the scan sees every variant: each is emitted somewhere.
        let unused: Vec<_> = Mnemonic::ALL.iter().filter(|m| !seen.contains(m)).collect();
        assert!(unused.is_empty(), "mnemonics no opcode literal names: {unused:?}");
    }
}
