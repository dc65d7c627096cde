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

/// Whether `text` holds `name` as a whole identifier directly followed by one of `after`.
fn uses(text: &str, name: &str, after: &[&str]) -> bool {
    text.match_indices(name).any(|(i, _)| {
        let before_ok = !text[..i].chars().next_back().is_some_and(|c| ident_char(c) || c == '.');
        let rest = &text[i + name.len()..];
        before_ok && after.iter().any(|a| rest.starts_with(a))
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
pub fn roles(module: &ast::Module, jit: &[&str]) -> Vec<Role> {
    let texts: Vec<(Option<&str>, String)> = module
        .body
        .iter()
        .map(|s| {
            let name = match &s.kind {
                StmtKind::FunctionDef(d) => Some(d.name.name.as_str()),
                _ => None,
            };
            (name, s.to_string())
        })
        .collect();
    jit.iter()
        .map(|&name| {
            let launched = texts.iter().any(|(_, t)| uses(t, name, &["[", ".run(", ".warmup("]));
            if launched {
                return Role::Kernel;
            }
            let callers: Vec<String> = texts
                .iter()
                .filter(|(owner, t)| owner.is_some_and(|o| o != name && jit.contains(&o)) && uses(t, name, &["("]))
                .map(|(owner, _)| owner.unwrap().to_string())
                .collect();
            let def = module.body.iter().find_map(|s| match &s.kind {
                StmtKind::FunctionDef(d) if d.name.name == name => Some(d),
                _ => None,
            });
            if !callers.is_empty() || def.is_some_and(|d| returns_value(&d.body)) {
                Role::Helper { callers }
            } else {
                Role::Kernel
            }
        })
        .collect()
}
