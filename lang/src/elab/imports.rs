//! What a module's top level binds, read from its source: which statements Python ran when it imported the
//! module ([`executed`]: module-level `if`/`elif`/`else`, `try`/`except`/`else`/`finally` and `with` blocks
//! resolved by the rules below), and the dotted path each imported name stands for ([`Imports`]: `tl` →
//! `triton.language`, `h` → `pkg.utils.helper`, relative imports resolved against the module's own name).
//!
//! When the Python package hands over a module's host bindings (what Python really bound each global to), they
//! override this scan name by name ([`crate::elab::modules::ModuleInfo::bindings`]); the scan is what the CLI,
//! and any module without bindings, goes by.
//!
//! The rules, for blocks whose outcome is not written in the source:
//! - `try`: the `try` body (then its `else`) ran to completion when every module it imports is *known* — a
//!   `triton`/`tessel` module tessel provides (not an AMD-only one) or a module of the module set; its bindings
//!   win. Otherwise an import in it is taken to have failed and the first handler whose own imports are all
//!   known ran instead (the first handler when none is). `finally` always runs; a `try` without handlers ran
//!   its body (had it failed, so would the import of the module).
//! - `if`/`elif`/`else`: a condition decided by its text (`True`, `False`, numbers, `None`, `TYPE_CHECKING`,
//!   `not`/`and`/`or` of those) picks its branch as Python would. Past the first condition that cannot be
//!   decided, the first branch (in order, `else` last) whose imports are all known is taken: of
//!   `if triton_version_ok(): from triton.language.extra.libdevice import rsqrt / else: from
//!   triton.language.math import rsqrt` that is the first. When no branch qualifies, the first undecided one is.
//! - `with` bodies run; `for`/`while`/`match` bodies and definitions' bodies are not module-level bindings.

use std::collections::HashMap;

use crate::ast::{self, Expr, ExprKind, StmtKind};
use crate::elab::Decorator;
use crate::elab::names::{canonical, is_amd_path};

/// Who is scanning: the module's dotted name and kind, for relative imports, and which modules are known.
#[derive(Clone, Copy)]
pub struct ScanCtx<'c> {
    /// The module's dotted name (`pkg.ops.norm`); empty when unknown (a script: its relative imports fail, as in
    /// Python: "attempted relative import with no known parent package").
    pub name: &'c str,
    /// Whether the module is a package's `__init__` (its relative imports start from itself, not its parent).
    pub is_package: bool,
    /// Whether a dotted path names a module of the module set.
    pub in_set: &'c dyn Fn(&str) -> bool,
}

impl ScanCtx<'static> {
    /// A script with no module set (what `kernels` and tests without a set use).
    pub fn script() -> ScanCtx<'static> {
        ScanCtx { name: "", is_package: false, in_set: &|_| false }
    }
}

impl ScanCtx<'_> {
    /// The absolute module path of `from <.. level dots><module> import ...`, or `None` when a relative import
    /// goes above the top-level package (or the module has no package).
    pub fn absolute(&self, module: Option<&str>, level: u32) -> Option<String> {
        if level == 0 {
            return module.map(str::to_string);
        }
        let mut package: Vec<&str> = if self.name.is_empty() { Vec::new() } else { self.name.split('.').collect() };
        if !self.is_package {
            package.pop();
        }
        for _ in 1..level {
            package.pop()?;
        }
        if package.is_empty() {
            return None;
        }
        let mut path = package.join(".");
        if let Some(m) = module {
            path.push('.');
            path.push_str(m);
        }
        Some(path)
    }

    /// Whether importing `module` succeeds for tessel's purposes: a `triton`/`tessel` module tessel stands in
    /// for (not an AMD-only one), or a module of the set.
    pub fn known(&self, module: &str) -> bool {
        let c = canonical(module);
        let ours =
            ["triton", "tessel"].iter().any(|r| c == *r || c.strip_prefix(r).is_some_and(|t| t.starts_with('.')));
        (ours && !is_amd_path(&c)) || (self.in_set)(module)
    }

    /// Whether every import in `stmts` (already resolved to what ran) is of a known module.
    fn imports_known(&self, stmts: &[&ast::Stmt]) -> bool {
        stmts.iter().all(|s| match &s.kind {
            StmtKind::Import(aliases) => aliases.iter().all(|a| self.known(&a.name)),
            StmtKind::ImportFrom { module, level, names } => match self.absolute(module.as_deref(), *level) {
                Some(m) => self.known(&m) || names.iter().all(|a| self.known(&format!("{m}.{}", a.name))),
                None => false,
            },
            _ => true,
        })
    }
}

/// The statements of `stmts` (a module's body) that ran at import, in order, with `if`/`try`/`with` blocks
/// replaced by the statements of the branch taken (see the module's rules).
pub fn executed<'s>(stmts: &'s [ast::Stmt], ctx: &ScanCtx) -> Vec<&'s ast::Stmt> {
    let mut out = Vec::new();
    run(stmts, ctx, &mut out);
    out
}

fn run<'s>(stmts: &'s [ast::Stmt], ctx: &ScanCtx, out: &mut Vec<&'s ast::Stmt>) {
    for stmt in stmts {
        match &stmt.kind {
            StmtKind::If { .. } => {
                let mut branches: Vec<&'s [ast::Stmt]> = Vec::new();
                let mut s = stmt;
                // Walk the `elif` chain: decided conditions pick or skip their branch.
                loop {
                    let StmtKind::If { test, body, orelse } = &s.kind else {
                        unreachable!("only `if` statements are walked")
                    };
                    match decide(test) {
                        // Taken whenever it is reached: the last candidate.
                        Some(true) => {
                            branches.push(body);
                            break;
                        }
                        Some(false) => {}
                        None => branches.push(body),
                    }
                    match orelse.as_slice() {
                        [next] if matches!(next.kind, StmtKind::If { .. }) => s = next,
                        rest => {
                            branches.push(rest);
                            break;
                        }
                    }
                }
                if branches.is_empty() {
                    continue;
                }
                // Undecided: the first branch whose imports are all known.
                let resolved: Vec<Vec<&'s ast::Stmt>> = branches.iter().map(|b| executed(b, ctx)).collect();
                let pick = resolved.iter().position(|b| ctx.imports_known(b)).unwrap_or(0);
                out.extend(resolved.into_iter().nth(pick).unwrap_or_default());
            }
            StmtKind::Try { body, handlers, orelse, finalbody, .. } => {
                let tried = executed(body, ctx);
                // Without handlers a failing body fails the import of the module itself: it ran.
                if handlers.is_empty() || ctx.imports_known(&tried) {
                    out.extend(tried);
                    run(orelse, ctx, out);
                } else if !handlers.is_empty() {
                    let resolved: Vec<Vec<&'s ast::Stmt>> = handlers.iter().map(|h| executed(&h.body, ctx)).collect();
                    let pick = resolved.iter().position(|b| ctx.imports_known(b)).unwrap_or(0);
                    out.extend(resolved.into_iter().nth(pick).unwrap_or_default());
                }
                run(finalbody, ctx, out);
            }
            StmtKind::With { body, .. } => run(body, ctx, out),
            _ => out.push(stmt),
        }
    }
}

/// The value of a module-level `if` condition when its text decides it.
fn decide(e: &Expr) -> Option<bool> {
    match &e.kind {
        ExprKind::Constant(c) => Some(match c {
            ast::Constant::None => false,
            ast::Constant::Bool(b) => *b,
            ast::Constant::Int(i) => *i != 0,
            ast::Constant::Float(f) => *f != 0.0,
            ast::Constant::Str(s) => !s.is_empty(),
            _ => return None,
        }),
        // `typing.TYPE_CHECKING` is False when the program runs.
        _ if e.dotted_name().is_some_and(|d| d == "TYPE_CHECKING" || d.ends_with(".TYPE_CHECKING")) => Some(false),
        ExprKind::UnaryOp { op: ast::UnaryOpKind::Not, operand } => decide(operand).map(|b| !b),
        ExprKind::BoolOp { op, values } => {
            let and = *op == ast::BoolOpKind::And;
            let mut all_known = true;
            for v in values {
                match decide(v) {
                    // `and` stops at the first false, `or` at the first true.
                    Some(b) if b != and => return Some(b),
                    Some(_) => {}
                    None => all_known = false,
                }
            }
            all_known.then_some(and)
        }
        _ => None,
    }
}

/// What the import statements of a module bind: alias → dotted path (`tl` → `triton.language`,
/// `jit` → `triton.jit`), with the module's host bindings over them.
#[derive(Clone, Debug, Default)]
pub struct Imports {
    pub names: HashMap<String, String>,
    /// Names bound by a relative import that cannot be resolved (the module has no package, or the import goes
    /// above the top-level package), with the import as written.
    pub unresolved: HashMap<String, String>,
}

impl Imports {
    /// The imports at the top level of a script `module` with no module set.
    pub fn collect(module: &ast::Module) -> Imports {
        Imports::collect_in(&executed(&module.body, &ScanCtx::script()), &ScanCtx::script(), None)
    }

    /// The imports among `executed` (a module's statements that ran, see [`executed`]), then `bindings` (the
    /// module's host bindings: name → dotted path) over them.
    pub fn collect_in(executed: &[&ast::Stmt], ctx: &ScanCtx, bindings: Option<&HashMap<String, String>>) -> Imports {
        let mut imports = Imports::default();
        for stmt in executed {
            imports.scan(stmt, ctx);
        }
        for (name, path) in bindings.into_iter().flatten() {
            imports.unresolved.remove(name);
            imports.names.insert(name.clone(), path.clone());
        }
        imports
    }

    fn scan(&mut self, stmt: &ast::Stmt, ctx: &ScanCtx) {
        match &stmt.kind {
            StmtKind::Import(aliases) => {
                for a in aliases {
                    let (bound, path) = match &a.asname {
                        Some(alias) => (alias.name.clone(), a.name.clone()),
                        None => {
                            let first = a.name.split('.').next().unwrap_or(&a.name).to_string();
                            (first.clone(), first)
                        }
                    };
                    self.unresolved.remove(&bound);
                    self.names.insert(bound, path);
                }
            }
            StmtKind::ImportFrom { module, names, level } => {
                let base = ctx.absolute(module.as_deref(), *level);
                for a in names {
                    if a.name == "*" {
                        continue;
                    }
                    let bound = a.asname.as_ref().map_or(a.name.clone(), |i| i.name.clone());
                    match &base {
                        Some(m) => {
                            self.unresolved.remove(&bound);
                            self.names.insert(bound, format!("{m}.{}", a.name));
                        }
                        None => {
                            let dots = ".".repeat(*level as usize);
                            let written = format!("from {dots}{} import {}", module.as_deref().unwrap_or(""), a.name);
                            self.names.remove(&bound);
                            self.unresolved.insert(bound, written);
                        }
                    }
                }
            }
            _ => {}
        }
    }

    /// The dotted path an expression like `tl.constexpr` or `triton.jit` refers to, through the imports.
    pub fn resolve_dotted(&self, e: &Expr) -> Option<String> {
        let dotted = e.dotted_name()?;
        let (first, rest) = match dotted.split_once('.') {
            Some((f, r)) => (f, Some(r)),
            None => (dotted.as_str(), None),
        };
        let base = self.names.get(first)?;
        Some(match rest {
            Some(r) => format!("{base}.{r}"),
            None => base.clone(),
        })
    }

    /// Which `jit` decorator, if any, is among `decorators`.
    pub fn jit_decorator(&self, decorators: &[Expr]) -> Option<Decorator> {
        decorators.iter().find_map(|d| {
            let d = match &d.kind {
                ExprKind::Call { func, .. } => func,
                _ => d,
            };
            jit_kind(&canonical(&self.resolve_dotted(d)?))
        })
    }

    /// Whether `decorators` hold `@constexpr_function` (any namespace).
    pub fn has_decorator(&self, decorators: &[Expr], last: &str) -> bool {
        decorators.iter().any(|d| {
            let d = match &d.kind {
                ExprKind::Call { func, .. } => func,
                _ => d,
            };
            let path = self.resolve_dotted(d).or_else(|| d.dotted_name());
            path.is_some_and(|p| p.rsplit('.').next() == Some(last))
        })
    }

    /// Whether an annotation means `constexpr` (`tl.constexpr`, `gl.constexpr`, `constexpr`, or the string form).
    pub fn is_constexpr_annotation(&self, a: &Expr) -> bool {
        if let ExprKind::Constant(ast::Constant::Str(s)) = &a.kind {
            return s == "constexpr" || s.ends_with(".constexpr");
        }
        match self.resolve_dotted(a) {
            Some(p) => p.rsplit('.').next() == Some("constexpr"),
            None => a.dotted_name().is_some_and(|d| d == "constexpr" || d.ends_with(".constexpr")),
        }
    }
}

fn jit_kind(path: &str) -> Option<Decorator> {
    match path {
        "triton.jit" | "triton.language.jit" => Some(Decorator::Triton),
        "triton.experimental.gluon.jit" => Some(Decorator::Gluon),
        "tessel.jit" => Some(Decorator::Tessel),
        _ => None,
    }
}
