//! The PTX text the simulator runs, parsed: operands, instructions, labels and parameters.

use std::collections::HashMap;

#[derive(Clone, Debug)]
pub(super) enum Opnd {
    Reg(usize),
    NotReg(usize),
    Imm(u64),
    Special(&'static str),
    /// A symbol: a parameter name or `global_smem`.
    Sym(String),
    /// `[base + off]`.
    Mem(Box<Opnd>, i64),
    /// `{a, b, ..}`; `None` for `_`.
    Vec(Vec<Option<usize>>),
    /// `[tmap, {c0, c1, ..}]`: a tensor map and coordinates (TMA).
    Coords(Box<Opnd>, Vec<usize>),
    /// `%r|%p` (`elect.sync`'s two destinations).
    Pair(usize, usize),
}

impl Opnd {
    /// The register the operand names (an instruction's destination).
    pub(super) fn reg(&self) -> Result<usize, String> {
        match self {
            Opnd::Reg(r) => Ok(*r),
            other => Err(format!("{other:?} is not a register")),
        }
    }
}

#[derive(Clone, Debug)]
pub(super) struct Ins {
    pub(super) pred: Option<(usize, bool)>,
    pub(super) op: String,
    pub(super) args: Vec<Opnd>,
    pub(super) line: usize,
}

/// A parsed kernel.
pub struct Program {
    pub(super) ins: Vec<Ins>,
    pub(super) labels: HashMap<String, usize>,
    pub(super) n_regs: usize,
    pub(super) params: Vec<String>,
}

fn parse_imm(s: &str) -> Option<u64> {
    if let Some(h) = s.strip_prefix("0f") {
        return u32::from_str_radix(h, 16).ok().map(u64::from);
    }
    if let Some(h) = s.strip_prefix("0d") {
        return u64::from_str_radix(h, 16).ok();
    }
    if let Some(h) = s.strip_prefix("0x") {
        return u64::from_str_radix(h, 16).ok();
    }
    // Decimal, signed or (as `mov.b64 %rd, 11743562013128004905` writes) unsigned beyond i64.
    s.parse::<i64>().ok().map(|v| v as u64).or_else(|| s.parse::<u64>().ok())
}

/// Splits at top-level commas (not inside `{}` or `[]`).
fn split_args(s: &str) -> Vec<String> {
    let (mut out, mut cur, mut depth) = (Vec::new(), String::new(), 0);
    for ch in s.chars() {
        match ch {
            '{' | '[' => depth += 1,
            '}' | ']' => depth -= 1,
            ',' if depth == 0 => {
                out.push(cur.trim().to_string());
                cur.clear();
                continue;
            }
            _ => {}
        }
        cur.push(ch);
    }
    if !cur.trim().is_empty() {
        out.push(cur.trim().to_string());
    }
    out
}

impl Program {
    pub fn parse(ptx: &str) -> Result<Program, String> {
        let mut regs: HashMap<String, usize> = HashMap::new();
        // A `.b128` register (`%q`) takes two 64-bit slots: its number and the next.
        let mut reg = |name: &str| {
            let n = regs.len();
            let r = *regs.entry(name.to_string()).or_insert(n);
            if r == n && name.starts_with("%q") {
                regs.insert(format!("{name}.hi"), n + 1);
            }
            r
        };
        let (mut ins, mut labels, mut params) = (Vec::new(), HashMap::new(), Vec::new());
        let mut in_body = false;
        for (ln, raw) in ptx.lines().enumerate() {
            let line = raw.split("//").next().unwrap().trim();
            if line.is_empty() {
                continue;
            }
            if !in_body {
                if let Some(p) = line.strip_prefix(".param ") {
                    // `name`, or `name[128]` for a byte array (a tensor map).
                    let name = p.split_whitespace().last().unwrap().trim_end_matches(',');
                    params.push(name.split('[').next().unwrap().to_string());
                }
                in_body = line == "{";
                continue;
            }
            // Scopes inside the body (inline asm, call parameters) are flat here: registers are global names.
            if line == "{" || line == "}" || line.starts_with(".reg") {
                continue;
            }
            if let Some(l) = line.strip_suffix(':') {
                labels.insert(l.to_string(), ins.len());
                continue;
            }
            let line = line.trim_end_matches(';');
            let (pred, rest) = match line.strip_prefix('@') {
                Some(r) => {
                    let (p, rest) = r.split_once(' ').ok_or("bad predicate")?;
                    let (neg, p) = match p.strip_prefix('!') {
                        Some(p) => (true, p),
                        None => (false, p),
                    };
                    (Some((reg(p), !neg)), rest.trim())
                }
                None => (None, line),
            };
            let (op, rest) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
            let mut args = Vec::new();
            for a in split_args(rest) {
                args.push(Self::operand(&a, &mut reg).ok_or_else(|| format!("line {}: operand `{a}`", ln + 1))?);
            }
            ins.push(Ins { pred, op: op.to_string(), args, line: ln + 1 });
        }
        Ok(Program { ins, labels, n_regs: regs.len(), params })
    }

    fn operand(a: &str, reg: &mut impl FnMut(&str) -> usize) -> Option<Opnd> {
        let a = a.trim();
        if let Some(inner) = a.strip_prefix('[').and_then(|x| x.strip_suffix(']')) {
            if let Some((map, coords)) = inner.split_once(", {") {
                let coords = coords.strip_suffix('}')?.split(',').map(|x| reg(x.trim())).collect();
                return Some(Opnd::Coords(Box::new(Self::operand(map, reg)?), coords));
            }
            let (base, off) = match inner.split_once('+') {
                Some((b, o)) => (b.trim(), o.trim().parse().ok()?),
                None => (inner.trim(), 0),
            };
            return Some(Opnd::Mem(Box::new(Self::operand(base, reg)?), off));
        }
        if let Some(inner) = a.strip_prefix('{').and_then(|x| x.strip_suffix('}')) {
            return Some(Opnd::Vec(
                inner.split(',').map(|x| x.trim()).map(|x| if x == "_" { None } else { Some(reg(x)) }).collect(),
            ));
        }
        const SPECIAL: [&str; 16] = [
            "%tid.x",
            "%ctaid.x",
            "%ctaid.y",
            "%ctaid.z",
            "%nctaid.x",
            "%nctaid.y",
            "%nctaid.z",
            "%laneid",
            "%cluster_ctarank",
            "%cluster_nctarank",
            "%clusterid.x",
            "%clusterid.y",
            "%clusterid.z",
            "%nclusterid.x",
            "%nclusterid.y",
            "%nclusterid.z",
        ];
        for s in SPECIAL {
            if a == s {
                return Some(Opnd::Special(s));
            }
        }
        if let Some((d, p)) = a.split_once('|') {
            return Some(Opnd::Pair(reg(d.trim()), reg(p.trim())));
        }
        if let Some(r) = a.strip_prefix('!') {
            return Some(Opnd::NotReg(reg(r)));
        }
        if a.starts_with('%') {
            return Some(Opnd::Reg(reg(a)));
        }
        if let Some(v) = parse_imm(a) {
            return Some(Opnd::Imm(v));
        }
        Some(Opnd::Sym(a.to_string()))
    }
}
