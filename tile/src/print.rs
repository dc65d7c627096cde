//! The textual form of the IR. Every op prints in one generic shape:
//!
//! ```text
//! %r0, %r1 = name {attr = value, ...} %operand, ... : result types  { ^(%arg: type, ...): ... } else { ... }
//! ```
//!
//! Value names come from the source where the elaborator recorded one (`%offsets`), made unique with a
//! numeric suffix, else a number (`%7`). [`crate::parse`] reads this text back; printing the parsed function
//! gives the same text.

use std::collections::{HashMap, HashSet};
use std::fmt::Write;

use crate::ir::{Func, Module, OpId, RegionId, ValueId};
use crate::ops::Op;

/// Names of values as printed.
struct Namer {
    names: Vec<Option<String>>,
    /// How many values asked for each hint.
    taken: HashMap<String, u32>,
    /// Every name given so far.
    used: HashSet<String>,
    next: u32,
}

impl Namer {
    fn new(f: &Func) -> Self {
        Namer { names: vec![None; f.values.len()], taken: HashMap::new(), used: HashSet::new(), next: 0 }
    }

    fn define(&mut self, f: &Func, v: ValueId) -> String {
        let name = match f.value(v).name.as_deref().filter(|n| is_ident(n)) {
            Some(hint) => {
                let count = self.taken.entry(hint.to_string()).or_insert(0);
                *count += 1;
                if *count == 1 && !hint.chars().next().is_some_and(|c| c.is_ascii_digit()) {
                    hint.to_string()
                } else {
                    format!("{hint}_{}", *count - 1)
                }
            }
            None => {
                let n = self.next;
                self.next += 1;
                n.to_string()
            }
        };
        // A hint may collide with a suffixed name produced earlier; fall back to a number then.
        let name = if self.used.contains(&name) {
            let n = self.next;
            self.next += 1;
            n.to_string()
        } else {
            name
        };
        self.used.insert(name.clone());
        self.names[v.index()] = Some(name.clone());
        name
    }

    fn get(&self, v: ValueId) -> String {
        match &self.names[v.index()] {
            Some(n) => format!("%{n}"),
            None => format!("%<undefined {}>", v.0),
        }
    }
}

fn is_ident(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
}

/// Prints a whole module: its functions separated by blank lines.
pub fn print_module(m: &Module) -> String {
    m.funcs.iter().map(print_func).collect::<Vec<_>>().join("\n")
}

/// Prints one function.
pub fn print_func(f: &Func) -> String {
    let mut namer = Namer::new(f);
    let mut out = String::new();
    let args: Vec<String> = f
        .args()
        .iter()
        .map(|&a| {
            let n = namer.define(f, a);
            format!("%{n}: {}", f.ty(a))
        })
        .collect();
    write!(out, "func @{}({})", f.name, args.join(", ")).unwrap();
    let c = &f.config;
    let mut attrs = vec![
        format!("target = {}", f.target),
        format!("num_warps = {}", c.num_warps),
        format!("num_stages = {}", c.num_stages),
    ];
    if c.num_ctas != 1 {
        attrs.push(format!("num_ctas = {}", c.num_ctas));
    }
    if let Some(n) = c.maxnreg {
        attrs.push(format!("maxnreg = {n}"));
    }
    let facts = &f.attrs;
    if facts.gluon {
        attrs.push("gluon = true".into());
    }
    if facts.flattened {
        attrs.push("flattened = true".into());
    }
    // A compile option, printed here, among the facts, where the text form has always had it.
    if !c.fp_fusion {
        attrs.push("enable_fp_fusion = false".into());
    }
    if !facts.divisible_by_16.is_empty() {
        let args: Vec<String> = facts.divisible_by_16.iter().map(u32::to_string).collect();
        attrs.push(format!("divisible_by_16 = [{}]", args.join(", ")));
    }
    write!(out, " attributes {{{}}}", attrs.join(", ")).unwrap();
    out.push_str(" {\n");
    for note in &f.notes {
        writeln!(out, "  // note: {note}").unwrap();
    }
    print_ops(f, f.body, 1, &mut namer, &mut out);
    out.push_str("}\n");
    out
}

fn print_ops(f: &Func, r: RegionId, depth: usize, namer: &mut Namer, out: &mut String) {
    for &o in &f.region(r).ops {
        print_op(f, o, depth, namer, out);
    }
}

fn print_op(f: &Func, o: OpId, depth: usize, namer: &mut Namer, out: &mut String) {
    let data = f.op(o);
    let indent = "  ".repeat(depth);
    out.push_str(&indent);
    if !data.results.is_empty() {
        let names: Vec<String> = data.results.iter().map(|&v| format!("%{}", namer.define(f, v))).collect();
        write!(out, "{} = ", names.join(", ")).unwrap();
    }
    out.push_str(data.op.name());
    let attrs = data.op.attrs();
    if !attrs.is_empty() {
        let parts: Vec<String> = attrs.iter().map(|(k, v)| format!("{k} = {v}")).collect();
        write!(out, " {{{}}}", parts.join(", ")).unwrap();
    }
    if !data.operands.is_empty() {
        let ops: Vec<String> = data.operands.iter().map(|&v| namer.get(v)).collect();
        write!(out, " {}", ops.join(", ")).unwrap();
    }
    if !data.results.is_empty() {
        let tys: Vec<String> = data.results.iter().map(|&v| f.ty(v).to_string()).collect();
        write!(out, " : {}", tys.join(", ")).unwrap();
    }
    for (i, &r) in data.regions.iter().enumerate() {
        if i > 0 {
            write!(out, " {}", region_separator(&data.op)).unwrap();
        }
        out.push_str(" {\n");
        let region = f.region(r);
        if !region.args.is_empty() {
            let args: Vec<String> =
                region.args.iter().map(|&a| format!("%{}: {}", namer.define(f, a), f.ty(a))).collect();
            writeln!(out, "{indent}^({}):", args.join(", ")).unwrap();
        }
        print_ops(f, r, depth + 1, namer, out);
        out.push_str(&indent);
        out.push('}');
    }
    out.push('\n');
}

/// The word between an op's regions: `if ... {} else {}`, `while ... {} do {}`.
pub(crate) fn region_separator(op: &Op) -> &'static str {
    match op {
        Op::If => "else",
        Op::While => "do",
        _ => ",",
    }
}

impl std::fmt::Display for Func {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&print_func(self))
    }
}

impl std::fmt::Display for Module {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&print_module(self))
    }
}
