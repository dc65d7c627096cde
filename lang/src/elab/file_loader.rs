//! The host pattern that loads a sibling file as a module by its path, for files whose names are not
//! identifiers (`02-conv-common.py`):
//!
//! ```python
//! def _load_common():
//!     spec = importlib.util.spec_from_file_location(NAME, Path(__file__).with_name("02-conv-common.py"))
//!     module = importlib.util.module_from_spec(spec)
//!     sys.modules[NAME] = module
//!     spec.loader.exec_module(module)
//!     return module
//!
//! _common = _load_common()
//! ```
//!
//! A top-level function that calls `importlib.util.spec_from_file_location` with a path beside `__file__`
//! (`Path(__file__).with_name("F.py")`, `Path(__file__).parent / "F.py"`, `os.path.join(os.path.dirname(__file__),
//! "F.py")`, directly or through a local name) and returns what `module_from_spec` gave is a *file loader* of
//! the sibling `F`; a top-level `NAME = loader()` binds NAME to that sibling module, as
//! `importlib.import_module("F")` does. The loader's body is host Python and is not run.

use std::collections::HashMap;

use crate::ast::{self, Constant, Expr, ExprKind, StmtKind};

/// The file loaders among `stmts` (a module's top level as it ran): function name → sibling module name (the
/// file's stem).
pub fn file_loaders(stmts: &[&ast::Stmt]) -> HashMap<String, String> {
    stmts
        .iter()
        .filter_map(|s| match &s.kind {
            StmtKind::FunctionDef(def) => loaded_sibling(def).map(|m| (def.name.name.clone(), m)),
            _ => None,
        })
        .collect()
}

/// The sibling `value` loads when it is `loader()` of one of `loaders`.
pub fn loader_call(value: &Expr, loaders: &HashMap<String, String>) -> Option<String> {
    let ExprKind::Call { func, args, keywords } = &value.kind else { return None };
    if !args.is_empty() || !keywords.is_empty() {
        return None;
    }
    loaders.get(func.as_name()?).cloned()
}

/// The sibling module `def` loads, if it is a file loader: it calls `module_from_spec` and
/// `spec_from_file_location` with a path beside `__file__`.
fn loaded_sibling(def: &ast::FunctionDef) -> Option<String> {
    let mut locals: HashMap<&str, &Expr> = HashMap::new();
    let mut target = None;
    let mut module = None;
    let mut returned = None;
    for stmt in &def.body {
        if let StmtKind::Return(Some(e)) = &stmt.kind {
            returned = e.as_name();
        }
        let StmtKind::Assign { targets, value } = &stmt.kind else { continue };
        let one = match targets.as_slice() {
            [t] => t.as_name(),
            _ => None,
        };
        if let ExprKind::Call { func, args, .. } = &value.kind {
            if is_importlib_util(func, "spec_from_file_location") {
                target = args.get(1).and_then(|p| sibling_path(p, &locals));
            } else if is_importlib_util(func, "module_from_spec") {
                module = one;
            }
        }
        if let Some(n) = one {
            locals.insert(n, value);
        }
    }
    // The function's last top-level `return` gives back the module `module_from_spec` made.
    target.filter(|_| module.is_some() && returned == module)
}

/// Whether `f` is `importlib.util.NAME`.
fn is_importlib_util(f: &Expr, name: &str) -> bool {
    let ExprKind::Attribute { value, attr } = &f.kind else { return false };
    let ExprKind::Attribute { value: m, attr: util } = &value.kind else { return false };
    attr.name == name && util.name == "util" && m.as_name() == Some("importlib")
}

/// The stem of the `.py` file `e` names beside `__file__`, through the function's earlier locals.
fn sibling_path(e: &Expr, locals: &HashMap<&str, &Expr>) -> Option<String> {
    if let Some(n) = e.as_name() {
        return sibling_path(locals.get(n)?, locals);
    }
    let file = match &e.kind {
        // `Path(__file__).with_name("F.py")`
        ExprKind::Call { func, args, .. } => match &func.kind {
            ExprKind::Attribute { value, attr } if attr.name == "with_name" && is_path_of_file(value) => {
                str_const(args.first()?)?
            }
            // `os.path.join(os.path.dirname(__file__), "F.py")`
            _ if is_os_path(func, "join") && args.len() == 2 && is_dirname_of_file(&args[0]) => str_const(&args[1])?,
            _ => return None,
        },
        // `Path(__file__).parent / "F.py"`
        ExprKind::BinOp { left, op: ast::BinOpKind::Div, right } => match &left.kind {
            ExprKind::Attribute { value, attr } if attr.name == "parent" && is_path_of_file(value) => str_const(right)?,
            _ => return None,
        },
        _ => return None,
    };
    let stem = file.strip_suffix(".py")?;
    (!stem.is_empty() && !stem.contains(['/', '\\'])).then(|| stem.to_string())
}

fn str_const(e: &Expr) -> Option<&str> {
    match &e.kind {
        ExprKind::Constant(Constant::Str(s)) => Some(s),
        _ => None,
    }
}

/// `Path(__file__)` (or `pathlib.Path(__file__)`).
fn is_path_of_file(e: &Expr) -> bool {
    let ExprKind::Call { func, args, .. } = &e.kind else { return false };
    let is_path = match &func.kind {
        ExprKind::Name(n) => n == "Path",
        ExprKind::Attribute { value, attr } => attr.name == "Path" && value.as_name() == Some("pathlib"),
        _ => false,
    };
    is_path && matches!(args.as_slice(), [a] if a.as_name() == Some("__file__"))
}

/// `os.path.NAME`.
fn is_os_path(f: &Expr, name: &str) -> bool {
    let ExprKind::Attribute { value, attr } = &f.kind else { return false };
    let ExprKind::Attribute { value: os, attr: path } = &value.kind else { return false };
    attr.name == name && path.name == "path" && os.as_name() == Some("os")
}

/// `os.path.dirname(__file__)`.
fn is_dirname_of_file(e: &Expr) -> bool {
    let ExprKind::Call { func, args, .. } = &e.kind else { return false };
    is_os_path(func, "dirname") && matches!(args.as_slice(), [a] if a.as_name() == Some("__file__"))
}
