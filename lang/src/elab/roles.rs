//! Which `jit` functions of a module are launchable kernels and which are helpers, for `tessel check`.
//!
//! Triton can launch any `@jit` function, but a module's own code says how each is meant to be used:
//! - launched from host code (`f[grid](...)`, `f.run(...)`, `f.warmup(...)`): a kernel;
//! - otherwise, returning a value (a kernel cannot), or called by another `jit` function: a helper (inlined at
//!   its call sites);
//! - otherwise: a kernel.
//!
//! The uses are found in the unparsed text of each top-level statement (names followed by `(`, `[`, `.run(`,
//! `.warmup(`), which is exact for code and may only be fooled by string literals spelling a call.

use std::collections::{HashMap, HashSet};

use crate::ast::{self, StmtKind};

/// How a `jit` function is used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Role {
    /// Launchable: launched from host code, or not called by any other jit function.
    Kernel,
    /// Called by other jit functions (named here), or returns a value.
    Helper { callers: Vec<String> },
}

fn ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// How a whole identifier is used where it stands in the unparsed text of a statement.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Use {
    /// `f[`, `f.run(`, `f.warmup(`: launched from host code.
    Launch,
    /// `f(`.
    Call,
}

/// Every whole identifier of `text` not preceded by `.` (not an attribute) and followed by a launch or a call,
/// in one pass over the text.
fn uses(text: &str) -> impl Iterator<Item = (&str, Use)> {
    let mut words = Vec::new();
    let mut start: Option<usize> = None;
    let mut before = None;
    for (i, c) in text.char_indices().chain([(text.len(), ' ')]) {
        match (ident_char(c), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                start = None;
                if before != Some('.') {
                    words.push((s, i));
                }
            }
            _ => {}
        }
        if start.is_none() {
            before = Some(c);
        }
    }
    words.into_iter().filter_map(move |(s, e)| {
        let rest = &text[e..];
        let how = if ["[", ".run(", ".warmup("].iter().any(|a| rest.starts_with(a)) {
            Use::Launch
        } else if rest.starts_with('(') {
            Use::Call
        } else {
            return None;
        };
        Some((&text[s..e], how))
    })
}

fn returns_value(stmts: &[ast::Stmt]) -> bool {
    stmts.iter().any(|s| match &s.kind {
        StmtKind::Return(Some(e)) => !matches!(e.kind, ast::ExprKind::Constant(ast::Constant::None)),
        StmtKind::If { body, orelse, .. }
        | StmtKind::For { body, orelse, .. }
        | StmtKind::While { body, orelse, .. } => returns_value(body) || returns_value(orelse),
        StmtKind::With { body, .. } => returns_value(body),
        _ => false,
    })
}

/// The role of each function named in `jit` (the module's `jit` functions), in that order.
///
/// Each top-level statement is unparsed and scanned once, so this is linear in the size of the module.
pub fn roles(module: &ast::Module, jit: &[&str]) -> Vec<Role> {
    let jit_set: HashSet<&str> = jit.iter().copied().collect();
    let mut launched: HashSet<&str> = HashSet::new();
    // Callee → the jit functions calling it, in the order of their definitions.
    let mut callers: HashMap<&str, Vec<String>> = HashMap::new();
    // The first definition of each name.
    let mut defs: HashMap<&str, &ast::FunctionDef> = HashMap::new();
    for stmt in &module.body {
        let owner = match &stmt.kind {
            StmtKind::FunctionDef(d) => {
                defs.entry(d.name.name.as_str()).or_insert(&**d);
                Some(d.name.name.as_str()).filter(|o| jit_set.contains(o))
            }
            _ => None,
        };
        let text = stmt.to_string();
        let mut called: HashSet<&str> = HashSet::new();
        for (word, how) in uses(&text) {
            let Some(&name) = jit_set.get(word) else { continue };
            match (how, owner) {
                (Use::Launch, _) => {
                    launched.insert(name);
                }
                (Use::Call, Some(o)) if o != name && called.insert(name) => {
                    callers.entry(name).or_default().push(o.to_string());
                }
                (Use::Call, _) => {}
            }
        }
    }
    jit.iter()
        .map(|&name| {
            if launched.contains(name) {
                return Role::Kernel;
            }
            let callers = callers.get(name).cloned().unwrap_or_default();
            if !callers.is_empty() || defs.get(name).is_some_and(|d| returns_value(&d.body)) {
                Role::Helper { callers }
            } else {
                Role::Kernel
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_whole_names_that_are_called_or_launched() {
        let text = "y = h(x) + o.h(x) + xh(x) + h2 (x) + 9h(x) + k[g](x) + m.run(x) + w.warmup(x) + é(x) + h";
        let found: Vec<(&str, bool)> = uses(text).map(|(w, how)| (w, how == Use::Launch)).collect();
        // `9h` is one word, which no jit function is named.
        let want = [("h", false), ("xh", false), ("9h", false), ("k", true), ("m", true), ("w", true), ("é", false)];
        assert_eq!(found, want);
    }

    #[test]
    fn callers_are_listed_once_per_definition_in_order() {
        let src = "@jit\ndef h(x):\n    return x\n\n@jit\ndef b(x):\n    return h(h(x))\n\n@jit\ndef a(x):\n    \
                   return h(x)\n\ndef h2():\n    h(1)\n";
        let module = crate::parse_module(src).unwrap();
        let callers = |c: &[&str]| Role::Helper { callers: c.iter().map(|s| s.to_string()).collect() };
        assert_eq!(roles(&module, &["h", "b", "a"]), [callers(&["b", "a"]), callers(&[]), callers(&[])]);
    }
}
