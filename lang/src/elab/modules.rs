//! The module set a kernel's module comes with: the other modules whose kernel-language code it may use (a
//! package's helpers, torch inductor's `triton_helpers`, the siblings `importlib.import_module("NAME")` loads),
//! each with its dotted name, its file and source (errors inside it point there), whether it is a package, and
//! optionally its *host bindings*: what Python bound its globals to at import, as dotted paths (`rsqrt` →
//! `triton.language.extra.libdevice.rsqrt`, `tl_math` → `triton.language.math`), which override the static scan
//! of its imports ([`crate::elab::imports`]).
//!
//! The elaborator resolves a dotted path that names a module of the set to that module (a module value whose
//! attributes are its globals), and `pkg.mod.name` to that module's global. The Python package builds the set
//! from the live interpreter; the CLI reads it from disk with [`load`], searching the kernel file's directory and
//! `--path` entries as Python searches `sys.path`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::ast::{self, Expr, ExprKind, StmtKind};
use crate::diag::Diagnostic;
use crate::elab::imports::{ScanCtx, executed};
use crate::source::ReadError;
use crate::span::Span;

/// Who a module is: its dotted name (`pkg.ops.norm`; empty when unknown), whether it is a package's
/// `__init__`, and what Python bound its globals to, when known.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ModuleInfo {
    pub name: String,
    pub is_package: bool,
    /// Global name → dotted path of what it is bound to (a module's name, or `module.qualname` of a function
    /// or class defined in another module). Names left out fall back to the static scan.
    pub bindings: Option<HashMap<String, String>>,
}

/// One module of the set, parsed. A module that does not parse is kept: the error is reported where a kernel
/// uses it.
#[derive(Clone, Debug)]
pub struct SourceModule {
    pub info: ModuleInfo,
    /// Its path, for diagnostics.
    pub file: String,
    pub source: Arc<str>,
    pub parsed: Result<ast::Module, Diagnostic>,
}

impl SourceModule {
    pub fn new(info: ModuleInfo, file: String, source: Arc<str>) -> SourceModule {
        let parsed = crate::parse_module(&source).map_err(|d| d.in_file(&file, source.clone()));
        SourceModule { info, file, source, parsed }
    }
}

/// The kernel's module (its identity; its source is compiled from elsewhere) and the other modules.
#[derive(Clone, Debug, Default)]
pub struct ModuleSet {
    pub main: ModuleInfo,
    pub modules: Vec<SourceModule>,
}

impl ModuleSet {
    /// The module named `name` (a dotted name, or an `import_module` string).
    pub fn find(&self, name: &str) -> Option<&SourceModule> {
        self.modules.iter().find(|m| m.info.name == name)
    }

    /// Whether `name` names the kernel's module or a module of the set.
    pub fn contains(&self, name: &str) -> bool {
        !name.is_empty() && (self.main.name == name || self.find(name).is_some())
    }

    /// What a compile of the kernel's module depends on besides its own source, as one string for cache keys:
    /// every module's name, kind, file, source and bindings, in a fixed order.
    pub fn fingerprint(&self) -> String {
        let info = |i: &ModuleInfo| {
            let mut b: Vec<_> = i.bindings.iter().flatten().map(|(k, v)| format!("{k}={v}")).collect();
            b.sort();
            format!("{}\0{}\0{}\0{}", i.name, i.is_package, i.bindings.is_some(), b.join(","))
        };
        let mut parts = vec![info(&self.main)];
        let mut others: Vec<_> =
            self.modules.iter().map(|m| format!("{}\0{}\0{}", info(&m.info), m.file, m.source)).collect();
        others.sort();
        parts.extend(others);
        parts.join("\u{1}")
    }
}

/// The most modules [`load`] reads for one kernel.
pub const MAX_MODULES: usize = 256;

/// The module set of the kernel's `module` (read from `file`) found on disk: the siblings its top level loads
/// with `importlib.import_module("NAME")` (NAME.py beside `file`), and the modules its imports name, found as
/// Python finds them (`a/b/__init__.py`, else `a/b.py`) under the kernel file's directory, then each
/// of `search` in order. The kernel's own dotted name is its path under the first `search` entry holding it
/// (`DIR/pkg/kern.py` → `pkg.kern`, so that its relative imports resolve), else its file stem (a script).
///
/// Only what exists is loaded; an import that is not found stays host-side (an error only where a kernel uses
/// it). The imports of a loaded module are followed in turn when it defines kernel-language code (`@jit`,
/// `@constexpr_function`, `@aggregate` definitions), as the Python package does. A missing `import_module`
/// sibling is an error at its call.
pub fn load(module: &ast::Module, file: &Path, search: &[PathBuf]) -> Result<ModuleSet, Diagnostic> {
    let dir = file.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new(".")).to_path_buf();
    let mut set = ModuleSet { main: main_info(file, search), modules: Vec::new() };
    let mut roots = vec![dir.clone()];
    roots.extend(search.iter().cloned());
    let no_set = |_: &str| false;
    let ctx = ScanCtx { name: &set.main.name, is_package: set.main.is_package, in_set: &no_set };
    let mut pending: Vec<(Want, Option<usize>)> = wanted(module, &ctx).into_iter().map(|w| (w, None)).collect();
    while let Some((want, from)) = pending.pop() {
        if set.modules.len() >= MAX_MODULES {
            break;
        }
        let (name, m) = match &want {
            Want::Sibling(name, span) => {
                if set.find(name).is_some() {
                    continue;
                }
                let path = dir.join(format!("{name}.py"));
                let info = ModuleInfo { name: name.clone(), is_package: false, bindings: None };
                match read_module(info, &path) {
                    Ok(m) => (name.clone(), m),
                    Err(e) => {
                        let d = Diagnostic::error(
                            format!("cannot read the module `{name}` ({}): {e}", path.display()),
                            *span,
                        )
                        .with_hint("`importlib.import_module(NAME)` loads NAME.py from the kernel's directory");
                        // An error at an import inside a loaded module points into that module.
                        return Err(match from {
                            Some(i) => {
                                let m: &SourceModule = &set.modules[i];
                                d.in_file(&m.file, m.source.clone())
                            }
                            None => d,
                        });
                    }
                }
            }
            Want::Module(name) => {
                if set.contains(name) || !worth_searching(name) {
                    continue;
                }
                let Some(m) = find_module(name, &roots) else { continue };
                (name.clone(), m)
            }
        };
        if let Ok(parsed) = &m.parsed
            && defines_kernel_code(parsed)
        {
            let ctx = ScanCtx { name: &name, is_package: m.info.is_package, in_set: &no_set };
            let index = set.modules.len();
            pending.extend(wanted(parsed, &ctx).into_iter().map(|w| (w, Some(index))));
        }
        set.modules.push(m);
    }
    Ok(set)
}

/// A module [`load`] looks for.
enum Want {
    /// `importlib.import_module("NAME")` with a string literal, at its call.
    Sibling(String, Span),
    /// A dotted module path an import names (which may not be a module at all: `from m import f`).
    Module(String),
}

/// The kernel's module's identity on disk (see [`load`]).
fn main_info(file: &Path, search: &[PathBuf]) -> ModuleInfo {
    let stem = file.file_stem().map(|s| s.to_string_lossy().to_string()).unwrap_or_default();
    let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let file_c = canon(file);
    for root in search {
        let Ok(rel) = file_c.strip_prefix(canon(root)) else { continue };
        let mut parts: Vec<String> = rel.iter().map(|c| c.to_string_lossy().to_string()).collect();
        let is_package = parts.last().is_some_and(|l| l == "__init__.py");
        if is_package {
            parts.pop();
        } else if let Some(last) = parts.last_mut() {
            *last = stem.clone();
        }
        if !parts.is_empty() && parts.iter().all(|p| is_identifier(p)) {
            return ModuleInfo { name: parts.join("."), is_package, bindings: None };
        }
    }
    ModuleInfo { name: stem, is_package: false, bindings: None }
}

fn is_identifier(s: &str) -> bool {
    let mut c = s.chars();
    c.next().is_some_and(|f| f.is_alphabetic() || f == '_') && c.all(|x| x.is_alphanumeric() || x == '_')
}

/// Modules never read from disk: those tessel stands in for.
fn worth_searching(name: &str) -> bool {
    let top = name.split('.').next().unwrap_or(name);
    !matches!(top, "triton" | "tessel" | "importlib" | "__future__")
}

/// `a/b/__init__.py` or `a/b.py` for `a.b` under the first root that has one, read (see [`read_module`]).
fn find_module(name: &str, roots: &[PathBuf]) -> Option<SourceModule> {
    if !name.split('.').all(is_identifier) {
        return None;
    }
    let rel: PathBuf = name.split('.').collect();
    for root in roots {
        for (path, is_package) in
            [(root.join(&rel).join("__init__.py"), true), (root.join(&rel).with_extension("py"), false)]
        {
            let info = ModuleInfo { name: name.to_string(), is_package, bindings: None };
            if let Ok(m) = read_module(info, &path) {
                return Some(m);
            }
        }
    }
    None
}

/// The module at `path`, read and parsed. One that is too large or not UTF-8 is kept with that error, reported
/// where a kernel uses it (as a module that does not parse); `Err` when the file cannot be read at all.
fn read_module(info: ModuleInfo, path: &Path) -> Result<SourceModule, std::io::Error> {
    let file = path.display().to_string();
    let d = match crate::source::read(path) {
        Ok(text) => return Ok(SourceModule::new(info, file, text.into())),
        Err(ReadError::Io(e)) => return Err(e),
        Err(ReadError::NotUtf8(d)) => *d,
        Err(e) => Diagnostic::error(format!("cannot read {file}: {e}"), Span::point(0)).in_file(&file, "".into()),
    };
    let source = d.file.as_ref().map_or_else(|| "".into(), |(_, text)| text.clone());
    Ok(SourceModule { info, file, source, parsed: Err(d) })
}

/// Whether a module defines kernel-language code: a definition decorated `@jit`, `@constexpr_function` or
/// `@aggregate` (any namespace), at its top level as Python ran it.
pub fn defines_kernel_code(module: &ast::Module) -> bool {
    let marked = |decorators: &[Expr]| {
        decorators.iter().any(|d| {
            let d = match &d.kind {
                ExprKind::Call { func, .. } => func,
                _ => d,
            };
            d.dotted_name().is_some_and(|p| {
                matches!(p.rsplit('.').next(), Some("jit" | "constexpr_function" | "aggregate" | "autotune"))
            })
        })
    };
    executed(&module.body, &ScanCtx::script()).iter().any(|s| match &s.kind {
        StmtKind::FunctionDef(def) => marked(&def.decorators),
        StmtKind::ClassDef(def) => marked(&def.decorators),
        _ => false,
    })
}

/// What the top level of a module (as Python ran it) imports: the sibling names of `import_module` calls, and
/// for each import the module paths it may name (`import a.b` → `a`, `a.b`; `from m import x` → `m`, `m.x`).
fn wanted(module: &ast::Module, ctx: &ScanCtx) -> Vec<Want> {
    let mut out = Vec::new();
    let ran = executed(&module.body, ctx);
    let loaders = crate::elab::file_loader::file_loaders(&ran);
    for stmt in ran {
        match &stmt.kind {
            StmtKind::Import(aliases) => {
                for a in aliases {
                    let parts: Vec<&str> = a.name.split('.').collect();
                    out.extend((1..=parts.len()).map(|n| Want::Module(parts[..n].join("."))));
                }
            }
            StmtKind::ImportFrom { module, names, level } => {
                let Some(base) = ctx.absolute(module.as_deref(), *level) else { continue };
                out.push(Want::Module(base.clone()));
                out.extend(names.iter().filter(|a| a.name != "*").map(|a| Want::Module(format!("{base}.{}", a.name))));
            }
            StmtKind::Assign { value, .. } | StmtKind::AnnAssign { value: Some(value), .. } => {
                if let Some(name) =
                    import_module_call(value).or_else(|| crate::elab::file_loader::loader_call(value, &loaders))
                {
                    out.push(Want::Sibling(name, value.span));
                }
            }
            _ => {}
        }
    }
    // Popped from the end: the first import is looked for first.
    out.reverse();
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

impl<'a> crate::elab::Elab<'a> {
    /// The elaborator's number of the module of the set named `name` (the kernel's module too, by its name).
    pub fn set_module(&self, name: &str) -> Option<usize> {
        self.module_names.iter().find(|(n, _)| *n == name).map(|&(_, i)| i)
    }

    /// How messages name module `m`.
    pub fn module_label(&self, m: usize) -> String {
        match (m, self.modules.get(m).map(|c| c.name.as_str())) {
            (crate::elab::PRELUDE_MODULE, _) => "tessel's prelude".to_string(),
            (crate::elab::USER_MODULE, None | Some("")) => "the kernel's module".to_string(),
            (_, Some(name)) if !name.is_empty() => format!("module `{name}`"),
            _ => "this module".to_string(),
        }
    }

    /// `path` resolved into the module set, when a prefix of it names a module of the set: the module itself,
    /// or its global (`pkg.mod.name`), attribute after attribute. `None` when no prefix is in the set.
    pub fn resolve_in_set(&mut self, path: &str, span: Span) -> crate::elab::R<Option<crate::elab::value::Value<'a>>> {
        let parts: Vec<&str> = path.split('.').collect();
        for n in (1..=parts.len()).rev() {
            let prefix = parts[..n].join(".");
            if let Some(&(_, d)) = self.broken.iter().find(|(b, _)| *b == prefix) {
                let d = d.clone().with_note(format!("the kernel uses the module `{prefix}`, which does not parse"));
                return Err(self.diag(d));
            }
            if let Some(m) = self.set_module(&prefix) {
                // `pkg.missing.f` with `pkg` given but no `pkg.missing`: a module not found, host-side to tessel.
                if let Some(&next) = parts.get(n) {
                    let sub = format!("{prefix}.{next}");
                    let known = self.modules[m].globals.borrow().contains_key(next)
                        || self.set_module(&sub).is_some()
                        || self.broken.iter().any(|(b, _)| *b == sub);
                    if !known && n + 1 < parts.len() {
                        return Err(self.host_side(path, span));
                    }
                }
                let mut v = crate::elab::value::Value::UserModule(m);
                for attr in &parts[n..] {
                    v = self.get_attr(v, attr, span)?;
                }
                return Ok(Some(v));
            }
        }
        Ok(None)
    }

    /// `module.name` for module `m` of the set: its global, else its submodule in the set (`import pkg.mod`
    /// makes `pkg.mod` an attribute of `pkg`).
    pub fn set_module_attr(
        &mut self,
        m: usize,
        name: &str,
        span: Span,
    ) -> crate::elab::R<crate::elab::value::Value<'a>> {
        if let Some(v) = self.global(m, name, span)? {
            return Ok(v);
        }
        let module = self.modules[m].name.clone();
        let sub = format!("{module}.{name}");
        // Only the submodule itself: a shorter prefix would be this module again.
        let is_submodule = self.set_module(&sub).is_some() || self.broken.iter().any(|(b, _)| *b == sub);
        if !module.is_empty()
            && is_submodule
            && let Some(v) = self.resolve_in_set(&sub, span)?
        {
            return Ok(v);
        }
        let mut e = self.err(span, format!("{} has no global `{name}`", self.module_label(m)));
        let globals: Vec<String> = self.modules[m].globals.borrow().keys().cloned().collect();
        e.diag = match crate::elab::names::closest(name, globals.iter().map(String::as_str)) {
            Some(best) => e.diag.with_hint(format!("did you mean `{best}`?")),
            // Perhaps a submodule tessel was not given.
            None => e.diag.with_hint(HOST_SIDE_HINT),
        };
        Err(e)
    }

    /// The error for a name bound to `path`, a module (or a member of one) the compiler has no source for, used
    /// in a kernel at `span`.
    pub fn host_side(&self, path: &str, span: Span) -> Box<crate::elab::ElabError> {
        let module = path.rsplit_once('.').map_or(path, |(m, _)| m);
        self.err_hint(
            span,
            format!("`{path}` cannot be used in a kernel: module `{module}` is host-side Python to tessel"),
            HOST_SIDE_HINT,
        )
    }
}

/// Where the compiler finds the modules a kernel's module imports.
pub const HOST_SIDE_HINT: &str = "kernels may use `@jit` functions, constexpr globals and classes of the \
    modules tessel is given: the CLI finds imported modules in the kernel file's directory and under each `--path \
    DIR`; the Python package passes the modules the kernel's module imports that define kernel code";
