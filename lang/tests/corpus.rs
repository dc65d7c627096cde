//! Whole modules in the style of the Triton tutorials and test suites (`tests/corpus/*.py`): every file parses,
//! its structure is spot-checked, every span lies inside the file, and unparsing gives source that parses back
//! to the same tree.

mod common;

use std::path::PathBuf;

use tessel_lang::ast::{self, ClassDef, Expr, ExprKind, FunctionDef, Module, Stmt, StmtKind};
use tessel_lang::parse_module;

fn corpus_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/corpus")
}

fn corpus() -> Vec<(String, String)> {
    let mut files: Vec<(String, String)> = std::fs::read_dir(corpus_dir())
        .expect("tests/corpus exists")
        .map(|entry| entry.expect("readable directory entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "py"))
        .map(|path| {
            let name = path.file_name().expect("a file name").to_string_lossy().into_owned();
            (name, std::fs::read_to_string(&path).expect("readable corpus file"))
        })
        .collect();
    files.sort();
    files
}

fn load(name: &str) -> (String, Module) {
    let src = std::fs::read_to_string(corpus_dir().join(name)).expect("corpus file exists");
    let module = common::parse(&src);
    (src, module)
}

fn functions(body: &[Stmt]) -> impl Iterator<Item = &FunctionDef> {
    body.iter().filter_map(|s| match &s.kind {
        StmtKind::FunctionDef(f) => Some(&**f),
        _ => None,
    })
}

fn classes(body: &[Stmt]) -> impl Iterator<Item = &ClassDef> {
    body.iter().filter_map(|s| match &s.kind {
        StmtKind::ClassDef(c) => Some(&**c),
        _ => None,
    })
}

fn function<'m>(body: &'m [Stmt], name: &str) -> &'m FunctionDef {
    functions(body).find(|f| f.name.name == name).unwrap_or_else(|| panic!("no function `{name}`"))
}

fn class<'m>(body: &'m [Stmt], name: &str) -> &'m ClassDef {
    classes(body).find(|c| c.name.name == name).unwrap_or_else(|| panic!("no class `{name}`"))
}

/// The dotted name of a decorator, looking through a call (`@pytest.mark.parametrize(...)`).
fn decorator_name(e: &Expr) -> String {
    match &e.kind {
        ExprKind::Call { func, .. } => decorator_name(func),
        _ => e.dotted_name().unwrap_or_else(|| "?".into()),
    }
}

fn decorators(f: &FunctionDef) -> Vec<String> {
    f.decorators.iter().map(decorator_name).collect()
}

#[test]
fn corpus_is_not_empty() {
    assert!(corpus().len() >= 6, "expected at least six corpus files");
}

#[test]
fn every_corpus_file_parses() {
    for (name, src) in corpus() {
        if let Err(d) = parse_module(&src) {
            panic!("{name} does not parse:\n{}", d.render(&name, &src));
        }
    }
}

#[test]
fn every_span_lies_inside_its_file() {
    for (name, src) in corpus() {
        let module = common::parse(&src);
        let dump = ast::dump(&module, true);
        // Every node line ends in ` @start..end`; field headers (`body:`) carry none.
        for line in dump.lines().filter(|l| !l.ends_with(':')) {
            let span = line.rsplit_once(" @").map(|(_, s)| s).unwrap_or_else(|| panic!("{name}: no span in `{line}`"));
            let (start, end) = span.split_once("..").expect("spans print as start..end");
            let (start, end): (usize, usize) = (start.parse().unwrap(), end.parse().unwrap());
            assert!(start <= end && end <= src.len(), "{name}: span {span} out of bounds in `{line}`");
            assert!(src.is_char_boundary(start) && src.is_char_boundary(end), "{name}: span {span} splits a char");
        }
    }
}

#[test]
fn unparsed_source_parses_back_to_the_same_tree() {
    for (name, src) in corpus() {
        let module = common::parse(&src);
        let printed = ast::unparse(&module);
        let reparsed = parse_module(&printed)
            .unwrap_or_else(|d| panic!("{name}: unparsed source does not parse:\n{}", d.render(&name, &printed)));
        assert_eq!(ast::dump(&module, false), ast::dump(&reparsed, false), "{name}: round trip changed the tree");
        // Printing is a fixed point after one round.
        assert_eq!(printed, ast::unparse(&reparsed), "{name}: unparse is not stable");
    }
}

#[test]
fn vector_add_kernel_and_benchmark() {
    let (_, m) = load("vector_add.py");
    let kernel = function(&m.body, "add_kernel");
    assert_eq!(decorators(kernel), ["triton.jit"]);
    let names: Vec<&str> = kernel.params.args.iter().map(|p| p.name.name.as_str()).collect();
    assert_eq!(names, ["a_ptr", "b_ptr", "c_ptr", "n", "BLOCK"]);
    let block = &kernel.params.args[4];
    assert_eq!(block.annotation.as_ref().and_then(Expr::dotted_name).as_deref(), Some("tl.constexpr"));
    assert_eq!(kernel.body.len(), 6);
    let bench = function(&m.body, "benchmark");
    assert_eq!(decorators(bench), ["triton.testing.perf_report"]);
    // `if __name__ == "__main__":` at the end.
    assert!(matches!(&m.body.last().unwrap().kind, StmtKind::If { test, .. }
        if matches!(&test.kind, ExprKind::Compare { .. })));
}

#[test]
fn softmax_persistent_loop() {
    let (_, m) = load("fused_softmax.py");
    let kernel = function(&m.body, "softmax_kernel");
    let StmtKind::For { iter, body, .. } = &kernel.body[2].kind else { panic!("expected the row loop") };
    let ExprKind::Call { func, keywords, .. } = &iter.kind else { panic!("expected tl.range(...)") };
    assert_eq!(func.dotted_name().as_deref(), Some("tl.range"));
    assert_eq!(keywords[0].arg.as_ref().unwrap().name, "num_stages");
    assert_eq!(body.len(), 7);
}

#[test]
fn matmul_autotune_configs() {
    let (_, m) = load("matmul.py");
    let kernel = function(&m.body, "matmul_kernel");
    assert_eq!(decorators(kernel), ["triton.autotune", "triton.jit"]);
    let ExprKind::Call { keywords, .. } = &kernel.decorators[0].kind else { panic!("autotune is called") };
    let kw: Vec<&str> = keywords.iter().map(|k| k.arg.as_ref().unwrap().name.as_str()).collect();
    assert_eq!(kw, ["configs", "key"]);
    let constexprs = kernel
        .params
        .args
        .iter()
        .filter(|p| p.annotation.as_ref().and_then(Expr::dotted_name).as_deref() == Some("tl.constexpr"))
        .count();
    assert_eq!(constexprs, 5);
    // The configs are a list comprehension over a list of tuples.
    let configs = function(&m.body, "cuda_configs");
    let StmtKind::Return(Some(ret)) = &configs.body[1].kind else { panic!("returns the configs") };
    assert!(matches!(&ret.kind, ExprKind::ListComp { generators, .. } if generators.len() == 1));
}

#[test]
fn layer_norm_autograd_function() {
    let (_, m) = load("layer_norm.py");
    let ln = class(&m.body, "LayerNorm");
    assert_eq!(ln.bases[0].dotted_name().as_deref(), Some("torch.autograd.Function"));
    let methods: Vec<&str> = functions(&ln.body).map(|f| f.name.name.as_str()).collect();
    assert_eq!(methods, ["forward", "backward"]);
    for method in functions(&ln.body) {
        assert_eq!(decorators(method), ["staticmethod"]);
    }
    let forward = function(&ln.body, "forward");
    assert_eq!(
        forward.params.args.last().unwrap().default,
        Some(Expr::new(
            ExprKind::Constant(ast::Constant::Float(1e-5)),
            forward.params.args.last().unwrap().default.as_ref().unwrap().span,
        ))
    );
    assert!(forward.returns.is_some());
    assert_eq!(functions(&m.body).filter(|f| decorators(f) == ["triton.jit"]).count(), 3);
    // `try: import apex / except ImportError as err:` near the top.
    assert!(m.body.iter().any(|s| matches!(&s.kind, StmtKind::Try { handlers, .. }
        if handlers[0].name.as_ref().is_some_and(|n| n.name == "err"))));
}

#[test]
fn gluon_aggregates_and_constexpr_functions() {
    let (_, m) = load("gluon_pipelined_gemm.py");
    for name in ["Ring", "Tile"] {
        let c = class(&m.body, name);
        assert_eq!(c.decorators[0].dotted_name().as_deref(), Some("gluon.aggregate"), "{name}");
        assert!(c.body.iter().any(|s| matches!(s.kind, StmtKind::AnnAssign { .. })), "{name} declares fields");
    }
    let constexpr_fns: Vec<&str> = functions(&m.body)
        .filter(|f| decorators(f) == ["gluon.constexpr_function"])
        .map(|f| f.name.name.as_str())
        .collect();
    assert_eq!(constexpr_fns, ["num_stages_for", "blocked_for"]);
    let jit_fns = functions(&m.body).filter(|f| decorators(f) == ["gluon.jit"]).count();
    assert_eq!(jit_fns, 4);
    let kernel = function(&m.body, "gemm_kernel");
    let ws = kernel.body.iter().find_map(|s| match &s.kind {
        StmtKind::Expr(Expr { kind: ExprKind::Call { func, args, .. }, .. }) => {
            (func.dotted_name().as_deref() == Some("gl.warp_specialize")).then_some(args.len())
        }
        _ => None,
    });
    assert_eq!(ws, Some(6));
    // `BLOCK_M: gl.constexpr = c_desc.block_type.shape[0]` is an annotated assignment.
    assert!(matches!(&kernel.body[0].kind, StmtKind::AnnAssign { simple: true, value: Some(_), .. }));
}

#[test]
fn pytest_module_forms() {
    let (_, m) = load("test_host_forms.py");
    let unary = function(&m.body, "test_unary");
    assert_eq!(decorators(unary), ["pytest.mark.interpreter", "pytest.mark.parametrize", "pytest.mark.parametrize"]);
    assert!(unary.returns.is_some());
    let bump = function(&function(&m.body, "counter").body, "bump");
    assert_eq!((bump.params.posonly.len(), bump.params.kwonly.len()), (1, 1));
    let log = function(&m.body, "_log");
    assert!(log.params.vararg.is_some() && log.params.kwarg.is_some());
    let recorder = class(&m.body, "Recorder");
    assert_eq!(functions(&recorder.body).count(), 7);
    let stmt_kinds: Vec<&StmtKind> = m.body.iter().map(|s| &s.kind).collect();
    assert!(stmt_kinds.iter().any(|k| matches!(k, StmtKind::TypeAlias { .. })));
    assert!(stmt_kinds.iter().any(|k| matches!(k, StmtKind::ImportFrom { level: 3, module: Some(_), .. })));
}
