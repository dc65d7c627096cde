//! What a block of statements holds, read off the AST without running it: the names it assigns
//! ([`assigned_names`]: what a runtime loop or `if` carries), whether it returns ([`contains_return`]), whether it
//! jumps out of its loop ([`contains_jump`]: whether the loop needs `break`/`continue` flags, `elab::jumps`).

use crate::ast::{Expr, ExprKind, Stmt, StmtKind};

/// The names a block of statements assigns (targets of assignments, `for` targets, nested blocks), in order of
/// first assignment; nested `def`s and classes are not entered.
pub fn assigned_names(stmts: &[Stmt], out: &mut Vec<String>) {
    fn target(e: &Expr, out: &mut Vec<String>) {
        match &e.kind {
            ExprKind::Name(n) if !out.contains(n) => out.push(n.clone()),
            ExprKind::Name(_) => {}
            ExprKind::Tuple(items) | ExprKind::List(items) => items.iter().for_each(|i| target(i, out)),
            ExprKind::Starred(inner) => target(inner, out),
            // `obj.field = v` mutates `obj`: carry `obj` too.
            ExprKind::Attribute { value, .. } | ExprKind::Subscript { value, .. } => target(value, out),
            _ => {}
        }
    }
    for s in stmts {
        match &s.kind {
            StmtKind::Assign { targets, .. } => targets.iter().for_each(|t| target(t, out)),
            StmtKind::AugAssign { target: t, .. } | StmtKind::AnnAssign { target: t, .. } => target(t, out),
            StmtKind::For { target: t, body, orelse, .. } => {
                target(t, out);
                assigned_names(body, out);
                assigned_names(orelse, out);
            }
            StmtKind::If { body, orelse, .. } | StmtKind::While { body, orelse, .. } => {
                assigned_names(body, out);
                assigned_names(orelse, out);
            }
            StmtKind::With { body, .. } => assigned_names(body, out),
            StmtKind::Match { cases, .. } => cases.iter().for_each(|c| assigned_names(&c.body, out)),
            StmtKind::Try { body, handlers, orelse, finalbody, .. } => {
                assigned_names(body, out);
                handlers.iter().for_each(|h| assigned_names(&h.body, out));
                assigned_names(orelse, out);
                assigned_names(finalbody, out);
            }
            _ => {}
        }
    }
}

/// Whether a block contains a `return` (outside nested functions).
pub fn contains_return(stmts: &[Stmt]) -> bool {
    stmts.iter().any(|s| match &s.kind {
        StmtKind::Return(_) => true,
        StmtKind::If { body, orelse, .. }
        | StmtKind::For { body, orelse, .. }
        | StmtKind::While { body, orelse, .. } => contains_return(body) || contains_return(orelse),
        StmtKind::With { body, .. } => contains_return(body),
        _ => false,
    })
}

/// Whether `stmts` hold a `break` (`want_break`) or a `continue` that belongs to the loop whose body they are:
/// nested loops' bodies are not entered (their `else` blocks are, whose jumps leave the enclosing loop).
pub fn contains_jump(stmts: &[Stmt], want_break: bool) -> bool {
    stmts.iter().any(|s| match &s.kind {
        StmtKind::Break => want_break,
        StmtKind::Continue => !want_break,
        StmtKind::If { body, orelse, .. } => contains_jump(body, want_break) || contains_jump(orelse, want_break),
        StmtKind::For { orelse, .. } | StmtKind::While { orelse, .. } => contains_jump(orelse, want_break),
        StmtKind::With { body, .. } => contains_jump(body, want_break),
        StmtKind::Match { cases, .. } => cases.iter().any(|c| contains_jump(&c.body, want_break)),
        StmtKind::Try { body, handlers, orelse, finalbody, .. } => {
            contains_jump(body, want_break)
                || handlers.iter().any(|h| contains_jump(&h.body, want_break))
                || contains_jump(orelse, want_break)
                || contains_jump(finalbody, want_break)
        }
        _ => false,
    })
}
