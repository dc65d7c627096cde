//! Names: the imports of a module (which alias means `triton.language`), its globals (functions, aggregate
//! classes, constants, evaluated lazily on first use), and the local frames of the functions being elaborated
//! (their variables, the hidden `break`/`continue` flags of their loops among them).

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use crate::ast::{self, Expr, ExprKind, StmtKind};
pub use crate::elab::imports::Imports;
use crate::elab::imports::{ScanCtx, executed};
use crate::elab::modules::ModuleInfo;
use crate::elab::names::closest;
use crate::elab::value::{ClassVal, Env, FnKind, FuncVal, Value};
use crate::elab::{Elab, R};
use crate::span::Span;

/// A module-level name, evaluated on first use.
#[derive(Clone, Debug)]
pub enum Global<'a> {
    /// An imported name, by dotted path (resolved on first use).
    Import(String),
    /// A relative import that cannot be resolved (the import as written): an error where it is used.
    Unresolved(String),
    /// `NAME = expr` or `NAME: ann = expr` at the top level (the last such assignment).
    Pending(&'a Expr),
    /// A name bound by unpacking at the top level (`A, (B, C) = expr`): the target it is part of and the value.
    /// The value is computed once, and binds every name of the target (a factory's classes stay one set).
    PendingUnpack(&'a Expr, &'a Expr),
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
        let loaders = crate::elab::file_loader::file_loaders(&self.executed);
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
                    // `NAME = loader()` of a file loader: the sibling module it loads (see `file_loader`).
                    let loaded = crate::elab::file_loader::loader_call(value, &loaders);
                    for t in targets {
                        if let (Some(n), Some(m)) = (t.as_name(), &loaded) {
                            globals.insert(n.to_string(), Global::Import(m.clone()));
                        } else if let Some(n) = t.as_name() {
                            globals.insert(n.to_string(), Global::Pending(value));
                        } else if matches!(t.kind, ExprKind::Tuple(_) | ExprKind::List(_)) {
                            let mut names = Vec::new();
                            target_names(t, &mut names);
                            for n in names {
                                globals.insert(n, Global::PendingUnpack(t, value));
                            }
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

/// The names (in the frame's variables) of one loop's `break`/`continue` flags, which `elab::jumps` sets and
/// reads. They start with [`FLAG_PREFIX`], which no Python identifier does.
#[derive(Clone, Debug)]
pub struct JumpFlags {
    pub skip: String,
    pub brk: String,
}

pub const FLAG_PREFIX: &str = "\u{0}";

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
    pub jumps: Vec<JumpFlags>,
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
        if let Some(b) = self.python_builtin(name) {
            return Ok(b);
        }
        let mut candidates: Vec<String> = self
            .frames
            .last()
            .map(|f| f.vars.keys().filter(|k| !k.starts_with(FLAG_PREFIX)).cloned().collect())
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
            Some(Global::PendingUnpack(target, expr)) => {
                let mut names = Vec::new();
                target_names(target, &mut names);
                let set = |this: &Self, g: &dyn Fn(&str) -> Global<'a>| {
                    let mut globals = this.modules[module].globals.borrow_mut();
                    for n in &names {
                        globals.insert(n.clone(), g(n));
                    }
                };
                set(self, &|_| Global::Evaluating);
                self.frames.push(Frame::new(module, name, true));
                let result = self.eval(expr).and_then(|v| {
                    let mut bound = Vec::new();
                    self.unpack_global(target, v, &mut bound)?;
                    Ok(bound)
                });
                self.frames.pop();
                match result {
                    Ok(bound) => {
                        let mut globals = self.modules[module].globals.borrow_mut();
                        for (n, v) in bound {
                            globals.insert(n, Global::Done(v));
                        }
                        drop(globals);
                        self.global(module, name, span)
                    }
                    Err(mut e) => {
                        set(self, &|_| Global::PendingUnpack(target, expr));
                        e.diag.notes.push(format!("while computing the global `{name}` at compile time"));
                        Err(e)
                    }
                }
            }
        }
    }

    /// Binds the names of the top-level unpacking target `target` to the parts of `v`, into `out`.
    fn unpack_global(&self, target: &'a Expr, v: Value<'a>, out: &mut Vec<(String, Value<'a>)>) -> R<()> {
        match &target.kind {
            ExprKind::Tuple(ts) | ExprKind::List(ts) => {
                let Some(items) = v.items() else {
                    return Err(
                        self.err(target.span, format!("cannot unpack {} into {} names", v.describe(), ts.len()))
                    );
                };
                if items.len() != ts.len() {
                    return Err(
                        self.err(target.span, format!("cannot unpack {} values into {} names", items.len(), ts.len()))
                    );
                }
                ts.iter().zip(items).try_for_each(|(t, x)| self.unpack_global(t, x, out))
            }
            _ => match target.as_name() {
                Some(n) => {
                    out.push((n.to_string(), v));
                    Ok(())
                }
                None => {
                    Err(self.err(target.span, "a top-level unpacking target must be names (nested tuples of them)"))
                }
            },
        }
    }
}

/// The names a top-level unpacking target binds (`A, (B, C)`), in order.
fn target_names(t: &Expr, out: &mut Vec<String>) {
    match &t.kind {
        ExprKind::Tuple(ts) | ExprKind::List(ts) => ts.iter().for_each(|t| target_names(t, out)),
        _ => out.extend(t.as_name().map(str::to_string)),
    }
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
