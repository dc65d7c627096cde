//! The static reading of a module's top level (`tessel_lang::elab::imports`): which branch of a module-level
//! `if`/`try` ran, relative imports, and host bindings over the scan. Each case is the module's source in and the
//! bindings (name → dotted path) out.

use std::collections::HashMap;

use tessel_lang::elab::imports::{Imports, ScanCtx, executed};

/// `name → path` of every import binding of `source`, sorted, one per line; unresolved relative imports as
/// `name ?? written`.
fn scan(source: &str, ctx: &ScanCtx, bindings: Option<&HashMap<String, String>>) -> String {
    let module = tessel_lang::parse_module(source).expect("parses");
    let imports = Imports::collect_in(&executed(&module.body, ctx), ctx, bindings);
    let mut lines: Vec<String> = imports.names.iter().map(|(k, v)| format!("{k} -> {v}")).collect();
    lines.extend(imports.unresolved.iter().map(|(k, v)| format!("{k} ?? {v}")));
    lines.sort();
    lines.join("\n")
}

fn script(source: &str) -> String {
    scan(source, &ScanCtx::script(), None)
}

const LIGER: &str = "\
import operator
if compare_version(\"triton\", operator.ge, \"3.0.0\") and not is_npu_available():
    try:
        from triton.language.extra.libdevice import rsqrt
    except ModuleNotFoundError:
        from triton.language.extra.cuda.libdevice import rsqrt
else:
    from triton.language.math import rsqrt
";

#[test]
fn an_undecided_if_takes_its_first_branch_whose_imports_are_known() {
    assert_eq!(script(LIGER), "operator -> operator\nrsqrt -> triton.language.extra.libdevice.rsqrt");
    // A first branch importing what tessel does not know gives way to the next.
    let src = "if is_hip():\n    from triton.language.extra.hip import libdevice\nelif cuda():\n    import torch as libdevice\nelse:\n    from triton.language.extra.cuda import libdevice\n";
    assert_eq!(script(src), "libdevice -> triton.language.extra.cuda.libdevice");
    // None qualifies: the first.
    let src = "if a:\n    import torch as t\nelse:\n    import numpy as t\n";
    assert_eq!(script(src), "t -> torch");
}

#[test]
fn a_decided_if_takes_the_branch_python_took() {
    let src = "if False:\n    import a as m\nelif TYPE_CHECKING:\n    import b as m\nelif not 0:\n    import triton.language as m\nelse:\n    import d as m\n";
    assert_eq!(script(src), "m -> triton.language");
    let src = "if True or x:\n    import torch as m\nelse:\n    import triton as m\n";
    assert_eq!(script(src), "m -> torch");
    let src = "if 0:\n    import torch as m\n";
    assert_eq!(script(src), "");
}

#[test]
fn a_try_whose_imports_are_known_wins_over_its_handlers() {
    let src = "try:\n    from triton.language.extra.libdevice import fast_expf as e\nexcept ImportError:\n    from triton.language.math import exp as e\nelse:\n    import triton.language as tl\nfinally:\n    import triton\n";
    assert_eq!(script(src), "e -> triton.language.extra.libdevice.fast_expf\ntl -> triton.language\ntriton -> triton");
    // The try body imports a module tessel does not have: Python may have failed there; the handler ran.
    let src = "try:\n    from torch._inductor import helpers as h\nexcept ImportError:\n    from triton.language import math as h\nfinally:\n    x = 1\n";
    assert_eq!(script(src), "h -> triton.language.math");
}

#[test]
fn a_module_of_the_set_is_known() {
    let in_set = |m: &str| m == "pkg.fast";
    let ctx = ScanCtx { name: "pkg.ops", is_package: false, in_set: &in_set };
    let src = "try:\n    from .fast import helper\nexcept ImportError:\n    from .slow import helper\n";
    assert_eq!(scan(src, &ctx, None), "helper -> pkg.fast.helper");
    let none = |_: &str| false;
    let ctx = ScanCtx { name: "pkg.ops", is_package: false, in_set: &none };
    assert_eq!(scan(src, &ctx, None), "helper -> pkg.slow.helper");
}

#[test]
fn relative_imports_resolve_against_the_module_and_its_package() {
    let src = "from . import utils\nfrom .utils import helper as h\nfrom ..common.x import y\nfrom .. import top\n";
    let none = |_: &str| false;
    let plain = ScanCtx { name: "pkg.sub.mod", is_package: false, in_set: &none };
    assert_eq!(
        scan(src, &plain, None),
        "h -> pkg.sub.utils.helper\ntop -> pkg.top\nutils -> pkg.sub.utils\ny -> pkg.common.x.y"
    );
    // A package's `__init__` is its own package.
    let init = ScanCtx { name: "pkg.sub", is_package: true, in_set: &none };
    assert_eq!(
        scan(src, &init, None),
        "h -> pkg.sub.utils.helper\ntop -> pkg.top\nutils -> pkg.sub.utils\ny -> pkg.common.x.y"
    );
    // Above the top-level package, or in a script: unresolved, as Python refuses them.
    let shallow = ScanCtx { name: "mod", is_package: false, in_set: &none };
    assert_eq!(
        scan("from .utils import helper as h\nfrom triton import jit\n", &shallow, None),
        "h ?? from .utils import helper\njit -> triton.jit"
    );
}

#[test]
fn host_bindings_override_the_scan_name_by_name() {
    let bindings: HashMap<String, String> = [
        ("rsqrt".to_string(), "triton.language.math.rsqrt".to_string()),
        ("h".to_string(), "pkg.utils.helper".to_string()),
    ]
    .into();
    let out = scan(&format!("{LIGER}from .nowhere import h\n"), &ScanCtx::script(), Some(&bindings));
    assert_eq!(out, "h -> pkg.utils.helper\noperator -> operator\nrsqrt -> triton.language.math.rsqrt");
}

#[test]
fn a_try_without_handlers_ran_its_body() {
    assert_eq!(script("try:\n    import torch as t\nfinally:\n    import triton\n"), "t -> torch\ntriton -> triton");
}
