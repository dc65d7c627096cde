//! Sibling modules: `t5 = importlib.import_module("05-wgmma")` at the top of a kernel's file loads `05-wgmma.py`
//! from the same directory (as Python does when that directory is on `sys.path`, which running the file puts
//! it). The module value gives the sibling's `@jit` functions, classes, constexpr functions and globals as
//! attributes (`t5.pick_wgmma_layout(...)`, `t7.WGMMA`).
//!
//! The elaborator cannot read files: [`load`] finds the names the kernel's file (and, in turn, each sibling)
//! imports this way with a string literal, parses them, and hands them to [`crate::elab::elaborate_with_siblings`]
//! before elaboration starts. A name it could not find is reported when the kernel calls `import_module` on it.

use std::path::Path;
use std::sync::Arc;

use crate::ast::{self, Expr, ExprKind, StmtKind};
use crate::diag::Diagnostic;
use crate::span::Span;

/// A module loaded from beside the kernel's file.
pub struct Sibling {
    /// The name passed to `import_module` (`05-wgmma`).
    pub name: String,
    /// Its path, for diagnostics.
    pub file: String,
    pub source: Arc<str>,
    pub module: ast::Module,
}

/// The sibling modules `module` imports through `importlib.import_module("NAME")` at its top level, and those
/// they import, read from `dir` (each once). A sibling that is missing or does not parse is an error at the call.
#[allow(clippy::result_large_err)]
pub fn load(module: &ast::Module, dir: &Path) -> Result<Vec<Sibling>, Diagnostic> {
    let mut out: Vec<Sibling> = Vec::new();
    let mut pending: Vec<(String, Span, Option<usize>)> =
        imported_names(module).into_iter().map(|(n, s)| (n, s, None)).collect();
    while let Some((name, span, from)) = pending.pop() {
        if out.iter().any(|s| s.name == name) {
            continue;
        }
        let path = dir.join(format!("{name}.py"));
        let located = |d: Diagnostic| match from {
            // An error at an import inside a sibling points into that sibling.
            Some(i) => d.in_file(&out[i].file, out[i].source.clone()),
            None => d,
        };
        let source: Arc<str> = match std::fs::read_to_string(&path) {
            Ok(s) => s.into(),
            Err(e) => {
                let d = Diagnostic::error(format!("cannot read the module `{name}` ({}): {e}", path.display()), span)
                    .with_hint("`importlib.import_module(NAME)` loads NAME.py from the kernel's directory");
                return Err(located(d));
            }
        };
        let file = path.display().to_string();
        let parsed = crate::parse_module(&source).map_err(|d| d.in_file(&file, source.clone()))?;
        let index = out.len();
        pending.extend(imported_names(&parsed).into_iter().map(|(n, s)| (n, s, Some(index))));
        out.push(Sibling { name, file, source, module: parsed });
    }
    Ok(out)
}

/// The string literals passed to `importlib.import_module` at the top level of `module` (in assignments).
fn imported_names(module: &ast::Module) -> Vec<(String, Span)> {
    let mut out = Vec::new();
    for stmt in &module.body {
        let value = match &stmt.kind {
            StmtKind::Assign { value, .. } => value,
            StmtKind::AnnAssign { value: Some(value), .. } => value,
            _ => continue,
        };
        if let Some(name) = import_module_call(value) {
            out.push((name, value.span));
        }
    }
    out
}

/// `NAME` of `importlib.import_module("NAME")`.
fn import_module_call(e: &Expr) -> Option<String> {
    let ExprKind::Call { func, args, .. } = &e.kind else { return None };
    let ExprKind::Attribute { value, attr } = &func.kind else { return None };
    if attr.name != "import_module" || value.as_name() != Some("importlib") {
        return None;
    }
    match args.first().map(|a| &a.kind) {
        Some(ExprKind::Constant(ast::Constant::Str(s))) => Some(s.clone()),
        _ => None,
    }
}
