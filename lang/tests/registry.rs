//! The builtin registry is the one place builtins are declared: lookup (a module's own entries and those it
//! re-exports), how messages name an entry, which names are tensor methods, and the did-you-mean candidates of a
//! misspelt name all come from the registrations, for lang's builtins as for a plug-in's.

mod elab_common;

use elab_common::*;
use tessel_lang::ast::StmtKind;
use tessel_lang::elab::builtins::{prelude, registry};
use tessel_lang::elab::names::{LIBDEVICE, MATH, TL};
use tessel_lang::elab::registry::{Handler, Kind, Registry};
use tessel_lang::elab::value::Value;
use tessel_lang::elab::{ArgSpec, Specialization, elaborate_with};
use tessel_tile::ScalarType::*;

/// How messages name `module.name`, found through the registry (`None`: not there).
fn found(r: &Registry, module: &str, name: &str) -> Option<String> {
    r.find(module, name).map(|id| r.display(id))
}

#[test]
fn tl_builtins_tensor_methods_and_libdevice_functions_are_found_through_the_registry() {
    let r = registry();
    assert_eq!(found(r, TL, "load").as_deref(), Some("tl.load"));
    assert_eq!(found(r, MATH, "exp").as_deref(), Some("tl.math.exp"));
    // libdevice's own functions, `tl.math`'s (the same entries: messages name them as `tl.math`'s) and
    // `tl.extra.cuda`'s.
    assert_eq!(found(r, LIBDEVICE, "tanh").as_deref(), Some("libdevice.tanh"));
    assert_eq!(found(r, LIBDEVICE, "exp"), found(r, MATH, "exp"));
    assert_eq!(found(r, LIBDEVICE, "smid").as_deref(), Some("tl.extra.cuda.smid"));
    // libdevice's own versions come before `tl.math`'s.
    assert_eq!(found(r, LIBDEVICE, "div_rn").as_deref(), Some("libdevice.div_rn"));
    // `gl` has `tl`'s names, dtypes and prelude functions included.
    assert_eq!(found(r, "triton.experimental.gluon.language", "arange").as_deref(), Some("tl.arange"));
    assert!(matches!(r.entry(r.find(TL, "float16").unwrap()).kind, Kind::Dtype(_)));
    assert!(matches!(r.entry(r.find(TL, "sum").unwrap()).kind, Kind::Prelude));
    // Tensor methods: `tl` functions (`x.exp()` is `tl.exp(x)`) and the methods of their own (`x.to(...)`).
    assert_eq!(r.method("exp").map(|id| r.display(id)).as_deref(), Some("tl.exp"));
    assert_eq!(r.method("to").map(|id| r.display(id)).as_deref(), Some("tensor.to"));
    assert!(r.method("sum").is_some() && r.method("load").is_none());
    assert_eq!(found(r, TL, "nonexistent"), None);
    assert_eq!(found(r, "builtins", "len").as_deref(), Some("len"));
}

fn error(body: &str, registry: &Registry) -> String {
    let src = format!(
        "import triton\nimport triton.language as tl\nfrom triton.language.extra import libdevice\n\n\
         @triton.jit\ndef k(X):\n    x = tl.load(X + tl.arange(0, 16))\n{body}"
    );
    let module = tessel_lang::parse_module(&src).unwrap();
    let spec = Specialization::new(vec![ArgSpec::Pointer(F32, false)]);
    match elaborate_with(&module, "k", &spec, registry) {
        Ok(e) => panic!("expected an error, got\n{}", e.func),
        Err(d) => d.render("test.py", &src),
    }
}

#[test]
fn misspelt_builtins_get_a_did_you_mean_from_the_registrations() {
    let r = registry();
    let msg = error("    y = tl.loadd(X)\n", r);
    assert!(msg.contains("unknown builtin `tl.loadd`") && msg.contains("did you mean `tl.load`?"), "{msg}");
    let msg = error("    y = x.exq()\n", r);
    assert!(msg.contains("a tensor has no attribute `exq`") && msg.contains("did you mean `.exp`?"), "{msg}");
    let msg = error("    y = libdevice.tanhh(x)\n", r);
    assert!(
        msg.contains("unknown builtin `libdevice.tanhh`") && msg.contains("did you mean `libdevice.tanh`?"),
        "{msg}"
    );
    // `tl.extra.cuda`'s functions, which libdevice has too, are candidates.
    let msg = error("    y = libdevice.smidd()\n", r);
    assert!(msg.contains("did you mean `libdevice.smid`?"), "{msg}");
}

/// A plug-in's builtin, added to a copy of lang's registry.
fn frobnicate<'a>(
    e: &mut tessel_lang::elab::Elab<'a>,
    b: tessel_lang::elab::builtins::Bound<'a>,
) -> tessel_lang::elab::R<Value<'a>> {
    let x = e.tensor_arg(b.req("x"), &b.fname, "x")?;
    Ok(Value::Tensor(x))
}

#[test]
fn a_new_registration_is_found_called_suggested_and_a_method() {
    let mut r = registry().clone();
    r.add(TL, "frobnicate", Handler::Bound("x", frobnicate)).method();
    let r: &'static Registry = Box::leak(Box::new(r));
    // Suggested for a misspelling, in `tl` and as a tensor method.
    let msg = error("    y = tl.frobnicat(x)\n", r);
    assert!(msg.contains("did you mean `tl.frobnicate`?"), "{msg}");
    let msg = error("    y = x.frobnicat()\n", r);
    assert!(msg.contains("did you mean `.frobnicate`?"), "{msg}");
    // Called through its signature, by name and as a method; lang's own registry does not have it.
    let msg = error("    y = tl.frobnicate(x, 1)\n", r);
    assert!(msg.contains("`tl.frobnicate` takes at most 1 positional arguments, got 2"), "{msg}");
    let msg = error("    y = x.frobnicate(z=1)\n", r);
    assert!(msg.contains("`tl.frobnicate` got an unexpected keyword argument `z`"), "{msg}");
    let msg = error("    y = tl.frobnicate(x)\n", registry());
    assert!(msg.contains("unknown builtin `tl.frobnicate`"), "{msg}");
    let src = "import triton\nimport triton.language as tl\n\n@triton.jit\ndef k(X):\n    \
               offs = tl.arange(0, 16)\n    tl.store(X + offs, tl.load(X + offs).frobnicate())\n";
    let module = tessel_lang::parse_module(src).unwrap();
    let spec = Specialization::new(vec![ArgSpec::Pointer(F32, false)]);
    let f = elaborate_with(&module, "k", &spec, r).unwrap_or_else(|d| panic!("{}", d.render("test.py", src))).func;
    check_ir(&f);
}

/// Every prelude function the registry names as `tl`'s is one the prelude defines.
#[test]
fn registered_prelude_functions_are_defined() {
    let r = registry();
    let module = prelude::module().unwrap();
    let defined: Vec<&str> = module
        .body
        .iter()
        .filter_map(|s| match &s.kind {
            StmtKind::FunctionDef(f) => Some(f.name.name.as_str()),
            _ => None,
        })
        .collect();
    let registered: Vec<&str> = r.members(TL).filter(|e| matches!(e.kind, Kind::Prelude)).map(|e| e.name).collect();
    assert!(registered.len() > 20, "{registered:?}");
    for name in registered {
        assert!(defined.contains(&name), "`tl.{name}` is registered as the prelude's, which does not define it");
    }
}
