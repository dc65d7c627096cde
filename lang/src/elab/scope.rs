//! Names: the imports of a module (which alias means `triton.language`), its globals (functions, aggregate
//! classes, constants, evaluated lazily on first use), and the local frames of the functions being elaborated.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use crate::ast::{self, Expr, ExprKind, StmtKind};
pub use crate::elab::imports::Imports;
use crate::elab::imports::{ScanCtx, executed};
use crate::elab::modules::ModuleInfo;
use crate::elab::value::{ClassVal, Env, FnKind, FuncVal, Value};
use crate::elab::{Elab, R};
use crate::span::Span;

/// The canonical path of a module or module member (aliases of one module map to one name).
pub fn canonical(path: &str) -> String {
    const ALIASES: &[(&str, &str)] = &[
        ("tessel.language", "triton.language"),
        // The Python package's gluon namespace (`tessel.gluon.jit`, `tessel.gluon.language as gl`).
        ("tessel.gluon.language", "triton.experimental.gluon.language"),
        ("tessel.gluon", "triton.experimental.gluon"),
        ("triton.language.core", "triton.language"),
        ("triton.language.standard", "triton.language"),
        ("triton.language.semantic", "triton.language"),
        ("tessel.language.math", "triton.language.math"),
        ("triton.language.extra.cuda.libdevice", "triton.language.extra.libdevice"),
        ("triton.language.extra.cuda", "triton.language.extra.libdevice"),
        ("triton.language.random", "triton.language"),
        ("triton.experimental.gluon.language._core", "triton.experimental.gluon.language"),
        ("triton.experimental.gluon.language._layouts", "triton.experimental.gluon.language"),
        ("triton.experimental.gluon.language._standard", "triton.experimental.gluon.language"),
        ("triton.experimental.gluon.language._math", "triton.experimental.gluon.language"),
        ("triton.runtime.jit", "triton"),
        ("triton.runtime", "triton"),
        ("triton.experimental.gluon._runtime", "triton.experimental.gluon"),
    ];
    for (from, to) in ALIASES {
        if path == *from {
            return to.to_string();
        }
        if let Some(rest) = path.strip_prefix(from).and_then(|r| r.strip_prefix('.')) {
            return format!("{to}.{rest}");
        }
    }
    path.to_string()
}

/// A module-level name, evaluated on first use.
#[derive(Clone, Debug)]
pub enum Global<'a> {
    /// An imported name, by dotted path (resolved on first use).
    Import(String),
    /// A relative import that cannot be resolved (the import as written): an error where it is used.
    Unresolved(String),
    /// `NAME = expr` or `NAME: ann = expr` at the top level (the last such assignment).
    Pending(&'a Expr),
    /// Being evaluated (a cycle if met again).
    Evaluating,
    Done(Value<'a>),
}

/// One source module: its AST, its identity, the statements its top level ran (see [`executed`]) and its
/// global names.
pub struct ModuleCtx<'a> {
    pub ast: &'a ast::Module,
    /// Its dotted name (empty when unknown), for relative imports and messages.
    pub name: String,
    pub is_package: bool,
    pub executed: Vec<&'a ast::Stmt>,
    pub imports: Imports,
    /// What Python bound its globals to, when the host said (over the static scan).
    pub bindings: Option<HashMap<String, String>>,
    pub globals: RefCell<HashMap<String, Global<'a>>>,
}

impl<'a> ModuleCtx<'a> {
    /// A script with no module set around it.
    pub fn new(ast: &'a ast::Module) -> ModuleCtx<'a> {
        ModuleCtx::in_set(ast, &ModuleInfo::default(), &|_| false)
    }

    /// A module of a module set: `in_set` says which dotted names name modules of the set.
    pub fn in_set(ast: &'a ast::Module, info: &ModuleInfo, in_set: &dyn Fn(&str) -> bool) -> ModuleCtx<'a> {
        let ctx = ScanCtx { name: &info.name, is_package: info.is_package, in_set };
        let executed = executed(&ast.body, &ctx);
        let imports = Imports::collect_in(&executed, &ctx, info.bindings.as_ref());
        ModuleCtx {
            ast,
            name: info.name.clone(),
            is_package: info.is_package,
            executed,
            imports,
            bindings: info.bindings.clone(),
            globals: RefCell::new(HashMap::new()),
        }
    }

    /// The module's top-level `def`s as Python ran them (branches of module-level `if`/`try` included).
    pub fn defs(&self) -> impl Iterator<Item = &'a ast::FunctionDef> + '_ {
        self.executed.iter().filter_map(|s| match &s.kind {
            StmtKind::FunctionDef(d) => Some(d.as_ref()),
            _ => None,
        })
    }

    /// Registers the module's functions, classes, constants and imports, in the order they ran (the last
    /// binding of a name wins, as in Python), then its host bindings over them; `index` is this module's number.
    pub fn collect(&self, index: usize) {
        let mut globals = self.globals.borrow_mut();
        let no_set = |_: &str| false;
        let ctx = ScanCtx { name: &self.name, is_package: self.is_package, in_set: &no_set };
        for stmt in &self.executed {
            match &stmt.kind {
                StmtKind::Import(_) | StmtKind::ImportFrom { .. } => {
                    let one = Imports::collect_in(&[*stmt], &ctx, None);
                    for (name, path) in one.names {
                        globals.insert(name, Global::Import(path));
                    }
                    for (name, written) in one.unresolved {
                        globals.insert(name, Global::Unresolved(written));
                    }
                }
                StmtKind::FunctionDef(def) => {
                    let f = func_val(&self.imports, def, index, None);
                    globals.insert(def.name.name.clone(), Global::Done(Value::Func(f)));
                }
                StmtKind::ClassDef(def) => {
                    let c = class_val(&self.imports, def, index, None);
                    globals.insert(def.name.name.clone(), Global::Done(Value::Class(c)));
                }
                StmtKind::Assign { targets, value } => {
                    for t in targets {
                        if let Some(n) = t.as_name() {
                            globals.insert(n.to_string(), Global::Pending(value));
                        }
                    }
                }
                StmtKind::AnnAssign { target, value: Some(value), .. } => {
                    if let Some(n) = target.as_name() {
                        globals.insert(n.to_string(), Global::Pending(value));
                    }
                }
                _ => {}
            }
        }
        for (name, path) in self.bindings.iter().flatten() {
            globals.insert(name.clone(), Global::Import(path.clone()));
        }
    }
}

/// A function value for a `def`, classified by its decorators.
pub fn func_val<'a>(
    imports: &Imports,
    def: &'a ast::FunctionDef,
    module: usize,
    env: Option<Env<'a>>,
) -> Rc<FuncVal<'a>> {
    let kind = if imports.jit_decorator(&def.decorators).is_some() {
        FnKind::Jit
    } else if imports.has_decorator(&def.decorators, "jit") {
        // `@jit` from a module we do not know by path (say `tessel.jit` imported oddly).
        FnKind::Jit
    } else {
        FnKind::ConstexprFn
    };
    Rc::new(FuncVal { def, module, kind, env })
}

/// A class value: fields from the annotated names of the body, methods from its `def`s.
pub fn class_val<'a>(
    imports: &Imports,
    def: &'a ast::ClassDef,
    module: usize,
    env: Option<Env<'a>>,
) -> Rc<ClassVal<'a>> {
    let mut fields = Vec::new();
    let mut methods = HashMap::new();
    let mut statics = Vec::new();
    for stmt in &def.body {
        match &stmt.kind {
            StmtKind::AnnAssign { target, .. } => {
                if let Some(n) = target.as_name() {
                    fields.push(n.to_string());
                }
            }
            StmtKind::FunctionDef(m) => {
                if imports.has_decorator(&m.decorators, "staticmethod") {
                    statics.push(m.name.name.clone());
                }
                // Methods run inlined like jit functions unless they are constexpr functions.
                let kind = if imports.has_decorator(&m.decorators, "constexpr_function") {
                    FnKind::ConstexprFn
                } else {
                    FnKind::Jit
                };
                methods.insert(m.name.name.clone(), Rc::new(FuncVal { def: m, module, kind, env: env.clone() }));
            }
            _ => {}
        }
    }
    Rc::new(ClassVal { def, module, fields, methods, statics })
}

/// The local variables of one function being elaborated.
pub struct Frame<'a> {
    pub vars: HashMap<String, Value<'a>>,
    /// Names declared `x: tl.constexpr = ...` (they cannot be reassigned).
    pub constexpr_names: HashSet<String>,
    pub module: usize,
    /// Constexpr functions and global initializers run at compile time only.
    pub compile_time_only: bool,
    pub fn_name: String,
    /// How many runtime loops enclose the current statement (`return` is not allowed inside one).
    pub runtime_loops: u32,
    /// The `break`/`continue` flags of the enclosing loops, innermost last (see `elab::jumps`).
    pub jumps: Vec<crate::elab::jumps::JumpFlags>,
    /// What the function closes over, when it was defined inside another ([`FuncVal::env`]).
    pub env: Option<Env<'a>>,
    /// The environment of the definitions nested in this function, made at the first one.
    pub nested_env: Option<Env<'a>>,
}

impl<'a> Frame<'a> {
    pub fn new(module: usize, fn_name: &str, compile_time_only: bool) -> Frame<'a> {
        Frame {
            vars: HashMap::new(),
            constexpr_names: HashSet::new(),
            module,
            compile_time_only,
            fn_name: fn_name.to_string(),
            runtime_loops: 0,
            jumps: Vec::new(),
            env: None,
            nested_env: None,
        }
    }
}

impl<'a> Elab<'a> {
    pub fn frame(&mut self) -> &mut Frame<'a> {
        self.frames.last_mut().expect("inside a function")
    }

    /// Looks a name up: locals, then the module's globals, then Python's builtins.
    pub fn lookup(&mut self, name: &str, span: Span) -> R<Value<'a>> {
        if let Some(v) = self.frames.last().and_then(|f| f.vars.get(name)) {
            return Ok(v.clone());
        }
        if let Some(v) = self.frames.last().and_then(|f| f.env.as_ref()).and_then(|env| env.borrow().get(name).cloned())
        {
            return Ok(v);
        }
        let module = self.cur_module();
        if let Some(v) = self.global(module, name, span)? {
            return Ok(v);
        }
        if let Some(b) = crate::elab::builtins::python_builtin(name) {
            return Ok(Value::Builtin(b));
        }
        let mut candidates: Vec<String> = self
            .frames
            .last()
            .map(|f| f.vars.keys().filter(|k| !k.starts_with(crate::elab::jumps::FLAG_PREFIX)).cloned().collect())
            .unwrap_or_default();
        candidates.extend(self.modules[module].globals.borrow().keys().cloned());
        let mut e = self.err(span, format!("name `{name}` is not defined in {}", self.module_label(module)));
        if let Some(best) = closest(name, candidates.iter().map(String::as_str)) {
            e.diag = e.diag.with_hint(format!("did you mean `{best}`?"));
        }
        Err(e)
    }

    /// A global of module `module`, evaluating its initializer on first use.
    pub fn global(&mut self, module: usize, name: &str, span: Span) -> R<Option<Value<'a>>> {
        let entry = self.modules[module].globals.borrow().get(name).cloned();
        match entry {
            None => Ok(None),
            Some(Global::Done(v)) => Ok(Some(v)),
            Some(Global::Evaluating) => {
                Err(self.err(span, format!("the global `{name}` refers to itself while being computed")))
            }
            Some(Global::Import(path)) => {
                // Marked while resolving: two modules importing a name from each other is a cycle, not a hang.
                self.modules[module].globals.borrow_mut().insert(name.to_string(), Global::Evaluating);
                let resolved = self.resolve_path(&path, span);
                let entry = match &resolved {
                    Ok(v) => Global::Done(v.clone()),
                    Err(_) => Global::Import(path.clone()),
                };
                self.modules[module].globals.borrow_mut().insert(name.to_string(), entry);
                resolved.map(Some)
            }
            Some(Global::Unresolved(written)) => Err(self.err_hint(
                span,
                format!(
                    "`{name}` comes from `{written}`, a relative import that cannot be resolved in {}",
                    self.module_label(module)
                ),
                "a relative import needs the module's package: compile the module as part of its package (the \
                 CLI: `--path` the directory above the package; Python: import the package, not the file)",
            )),
            Some(Global::Pending(expr)) => {
                self.modules[module].globals.borrow_mut().insert(name.to_string(), Global::Evaluating);
                self.frames.push(Frame::new(module, name, true));
                let result = self.eval(expr);
                self.frames.pop();
                match result {
                    Ok(value) => {
                        self.modules[module].globals.borrow_mut().insert(name.to_string(), Global::Done(value.clone()));
                        Ok(Some(value))
                    }
                    Err(mut e) => {
                        self.modules[module].globals.borrow_mut().insert(name.to_string(), Global::Pending(expr));
                        e.diag.notes.push(format!("while computing the global `{name}` at compile time"));
                        Err(e)
                    }
                }
            }
        }
    }
}

/// The candidate closest to `name` by edit distance, if it is close enough to be a plausible typo.
pub fn closest<'s>(name: &str, candidates: impl Iterator<Item = &'s str>) -> Option<&'s str> {
    let limit = (name.chars().count() / 3).max(1);
    candidates
        .filter(|c| *c != name)
        .map(|c| (edit_distance(name, c), c))
        .filter(|&(d, _)| d <= limit)
        .min_by_key(|&(d, c)| (d, c.len(), c.to_string()))
        .map(|(_, c)| c)
}

/// Levenshtein distance over chars.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for i in 1..=a.len() {
        let mut cur = vec![i; b.len() + 1];
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            cur[j] = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// The names a block of statements assigns (targets of assignments, `for` targets, nested blocks), in order of
/// first assignment; nested `def`s and classes are not entered.
pub fn assigned_names(stmts: &[ast::Stmt], out: &mut Vec<String>) {
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
pub fn contains_return(stmts: &[ast::Stmt]) -> bool {
    stmts.iter().any(|s| match &s.kind {
        StmtKind::Return(_) => true,
        StmtKind::If { body, orelse, .. }
        | StmtKind::For { body, orelse, .. }
        | StmtKind::While { body, orelse, .. } => contains_return(body) || contains_return(orelse),
        StmtKind::With { body, .. } => contains_return(body),
        _ => false,
    })
}

impl<'a> Elab<'a> {
    /// A `def` or `class` inside a compile-time function (a host-side factory such as
    /// `def Scheduler(GROUP): ... class Impl: ...; return Impl`): the value closes over the function's locals at
    /// this point and over the other definitions nested in it, itself included (its methods may name the class).
    pub fn nested_definition(&mut self, stmt: &'a ast::Stmt) -> R<()> {
        let module = self.cur_module();
        let frame = self.frame();
        let env: Env<'a> = frame.nested_env.get_or_insert_with(|| Rc::new(RefCell::new(HashMap::new()))).clone();
        {
            // Locals assigned since an earlier nested definition are seen too (what ran before this one).
            let mut vars = env.borrow_mut();
            if let Some(outer) = &frame.env {
                for (k, v) in outer.borrow().iter() {
                    vars.entry(k.clone()).or_insert_with(|| v.clone());
                }
            }
            for (k, v) in &frame.vars {
                vars.insert(k.clone(), v.clone());
            }
        }
        let imports = &self.modules[module].imports;
        let (name, value) = match &stmt.kind {
            StmtKind::FunctionDef(def) => {
                (def.name.name.clone(), Value::Func(func_val(imports, def, module, Some(env.clone()))))
            }
            StmtKind::ClassDef(def) => {
                (def.name.name.clone(), Value::Class(class_val(imports, def, module, Some(env.clone()))))
            }
            _ => unreachable!("called on definitions only"),
        };
        env.borrow_mut().insert(name.clone(), value.clone());
        self.frame().vars.insert(name, value);
        Ok(())
    }
}
