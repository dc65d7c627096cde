//! Kernels using what their module imports: a module set (`tessel_lang::elab::modules`) of a helper module with
//! `@jit` functions, a constexpr global and an alias of `triton.language.math`, reached by relative imports,
//! dotted module paths and host bindings; errors inside the helper rendered with the helper's file.

use std::collections::HashMap;
use std::sync::Arc;

use tessel_lang::elab::builtins::registry;
use tessel_lang::elab::modules::{ModuleInfo, ModuleSet, SourceModule};
use tessel_lang::elab::{ArgSpec, ConstValue, Specialization};
use tessel_tile::ScalarType::*;

const HELPERS: &str = "\
import triton
import triton.language as tl
from triton.language import math as tl_math
from . import consts

SCALE: tl.constexpr = tl.constexpr(4)


@triton.jit
def scaled_exp(x):
    return tl_math.exp(x) * SCALE + consts.BIAS


@triton.jit
def broken(x):
    return x + missing_name
";

const CONSTS: &str = "BIAS = 7\n";

fn module(name: &str, file: &str, source: &str, bindings: Option<HashMap<String, String>>) -> SourceModule {
    let info = ModuleInfo { name: name.into(), is_package: false, bindings };
    SourceModule::new(info, file.into(), Arc::from(source))
}

fn set(main: &str, helpers: &str) -> ModuleSet {
    ModuleSet {
        main: ModuleInfo { name: main.into(), is_package: false, bindings: None },
        modules: vec![
            module("pkg.helpers", "pkg/helpers.py", helpers, None),
            module("pkg.consts", "pkg/consts.py", CONSTS, None),
        ],
    }
}

fn spec() -> Specialization {
    Specialization::new(vec![ArgSpec::Pointer(F32, false), ArgSpec::Constexpr(ConstValue::Int(16))])
}

fn kernel(call: &str) -> String {
    format!(
        "import triton\nimport triton.language as tl\n{call}\n\n@triton.jit\ndef k(X, BLOCK: tl.constexpr):\n    \
         offs = tl.arange(0, BLOCK)\n    x = tl.load(X + offs)\n    tl.store(X + offs, USE)\n"
    )
}

fn elaborate(source: &str, set: &ModuleSet) -> Result<String, String> {
    let main = tessel_lang::parse_module(source).map_err(|d| d.render("pkg/kern.py", source))?;
    tessel_lang::elab::elaborate_in(&main, set, "k", &spec(), registry())
        .map(|e| tessel_tile::print::print_func(&e.func))
        .map_err(|d| d.render("pkg/kern.py", source))
}

#[test]
fn a_helper_module_is_reached_by_a_relative_import() {
    let src = kernel("from .helpers import scaled_exp as f").replace("USE", "f(x)");
    let ir = elaborate(&src, &set("pkg.kern", HELPERS)).unwrap();
    assert!(ir.contains("= exp %x"), "{ir}");
    assert!(ir.contains("constant {value = 4.0}") && ir.contains("constant {value = 7.0}"), "{ir}");
}

#[test]
fn a_helper_module_is_reached_by_its_dotted_path() {
    for import in ["import pkg.helpers", "import pkg.helpers as ph", "from pkg import helpers"] {
        let call = match import {
            "import pkg.helpers" => "pkg.helpers.scaled_exp(x) + pkg.helpers.SCALE",
            "import pkg.helpers as ph" => "ph.scaled_exp(x) + ph.SCALE",
            _ => "helpers.scaled_exp(x) + helpers.SCALE",
        };
        let src = kernel(import).replace("USE", call);
        let ir = elaborate(&src, &set("pkg.kern", HELPERS)).unwrap_or_else(|e| panic!("{import}: {e}"));
        assert!(ir.contains("= exp %x"), "{import}: {ir}");
    }
}

#[test]
fn host_bindings_decide_what_a_name_is() {
    // The helper's `tl_math` is bound by Python, whatever its source says; the kernel's `f` too.
    let helpers = HELPERS.replace("from triton.language import math as tl_math", "tl_math = None");
    let bindings: HashMap<String, String> = [("tl_math".to_string(), "triton.language.math".to_string())].into();
    let mut s = set("pkg.kern", &helpers);
    s.modules[0] = module("pkg.helpers", "pkg/helpers.py", &helpers, Some(bindings));
    s.main.bindings = Some([("f".to_string(), "pkg.helpers.scaled_exp".to_string())].into());
    let src = kernel("f = None").replace("USE", "f(x)");
    let ir = elaborate(&src, &s).unwrap();
    assert!(ir.contains("= exp %x"), "{ir}");
}

#[test]
fn an_error_inside_a_helper_points_into_its_file() {
    let src = kernel("from .helpers import broken").replace("USE", "broken(x)");
    let err = elaborate(&src, &set("pkg.kern", HELPERS)).unwrap_err();
    assert!(err.contains("name `missing_name` is not defined in module `pkg.helpers`"), "{err}");
    assert!(err.contains("pkg/helpers.py:16:16"), "{err}");
}

#[test]
fn a_helper_that_does_not_parse_is_reported_where_it_is_used() {
    let src = kernel("from .helpers import scaled_exp").replace("USE", "scaled_exp(x)");
    let err = elaborate(&src, &set("pkg.kern", "def broken(:\n")).unwrap_err();
    assert!(err.contains("pkg/helpers.py"), "{err}");
    assert!(err.contains("the kernel uses the module `pkg.helpers`, which does not parse"), "{err}");
}

#[test]
fn a_module_outside_the_set_is_host_side_at_the_use() {
    let src = kernel("from .elsewhere import helper as h").replace("USE", "h(x)");
    let err = elaborate(&src, &set("pkg.kern", HELPERS)).unwrap_err();
    assert!(
        err.contains("`pkg.elsewhere.helper` cannot be used in a kernel: module `pkg.elsewhere` is host-side"),
        "{err}"
    );
    assert!(err.contains("pkg/kern.py:9:24"), "{err}");
    assert!(err.contains("--path"), "{err}");
    // A relative import in a module without a package.
    let err = elaborate(&src, &set("kern", HELPERS)).unwrap_err();
    assert!(err.contains("`h` comes from `from .elsewhere import helper`, a relative import"), "{err}");
}

#[test]
fn import_module_siblings_are_modules_of_the_set() {
    let src =
        kernel("import importlib\nhx = importlib.import_module(\"05-helpers\")").replace("USE", "hx.scaled_exp(x)");
    let mut s = set("kern", HELPERS.replace("from . import consts", "import pkg.consts as consts").as_str());
    s.modules[0].info.name = "05-helpers".into();
    let ir = elaborate(&src, &s).unwrap();
    assert!(ir.contains("= exp %x"), "{ir}");
}

#[test]
fn tensor_logical_methods_and_log2() {
    let src = kernel("")
        .replace("USE", "tl.where((x > 0).logical_and(x < 1).logical_or(x == 5), x, tl.standard._log2(16) + 0.0)");
    let ir = elaborate(
        &src.replace("import triton.language as tl", "import triton.language as tl\nimport triton.language.standard"),
        &ModuleSet::default(),
    )
    .unwrap();
    assert!(ir.contains("and ") && ir.contains("or "), "{ir}");
    assert!(ir.contains("constant {value = 4.0}"), "{ir}");
}

#[test]
fn get_int_dtype_picks_the_integer_type_of_a_width() {
    // torch inductor's sort helpers: `tl.core.get_int_dtype(x.dtype.primitive_bitwidth, signed=...)`.
    let src = kernel("import triton.language.core").replace(
        "USE",
        "(x.to(tl.core.get_int_dtype(x.dtype.primitive_bitwidth, signed=False), bitcast=True) + 1).to(\
         tl.core.get_int_dtype(bitwidth=32, signed=True)).to(x.dtype)",
    );
    let ir = elaborate(&src, &ModuleSet::default()).unwrap();
    assert!(ir.contains("u32"), "{ir}");
    let bad = kernel("").replace("USE", "x.to(tl.core.get_int_dtype(24, signed=True))");
    let err = elaborate(&bad, &ModuleSet::default()).unwrap_err();
    assert!(err.contains("no integer type of 24 bits"), "{err}");
}

/// The host pattern that loads a sibling whose name is not an identifier by its path
/// (`spec_from_file_location`, as the Gluon conv examples load `02-conv-common.py`).
const FILE_LOADER: &str = "\
import importlib.util
import sys
from pathlib import Path


def _load_common():
    module = sys.modules.get(\"examples_common\")
    if module is not None:
        return module
    module_path = Path(__file__).with_name(\"05-helpers.py\")
    spec = importlib.util.spec_from_file_location(\"examples_common\", module_path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[\"examples_common\"] = module
    spec.loader.exec_module(module)
    return module


_common = _load_common()
scaled = _common.scaled_exp";

#[test]
fn a_sibling_loaded_by_its_path_is_a_module_of_the_set() {
    // Found on disk by `load` (the loader names the file beside the kernel), and bound as a module.
    let dir = std::env::temp_dir().join(format!("tessel-file-loader-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let helpers = HELPERS.replace("from . import consts", "BIAS_MOD = 0").replace("consts.BIAS", "7");
    std::fs::write(dir.join("05-helpers.py"), &helpers).unwrap();
    let src = kernel(FILE_LOADER).replace("USE", "scaled(x)");
    let file = dir.join("kern.py");
    std::fs::write(&file, &src).unwrap();
    let main = tessel_lang::parse_module(&src).unwrap();
    let set = tessel_lang::elab::modules::load(&main, &file, &[]).map_err(|d| d.render("kern.py", &src)).unwrap();
    std::fs::remove_dir_all(&dir).ok();
    assert!(set.find("05-helpers").is_some(), "the sibling was not loaded");
    let ir = elaborate(&src, &set).unwrap();
    assert!(ir.contains("= exp %x"), "{ir}");

    // Without the sibling in the set, the module is host-side where the kernel uses it.
    let err = elaborate(&src, &ModuleSet::default()).unwrap_err();
    assert!(err.contains("cannot be used in a kernel"), "{err}");
    // A function that does not give back the module it made is no loader: its host code is not followed.
    let not_loader = src.replace("    spec.loader.exec_module(module)\n    return module", "    return spec");
    assert_ne!(not_loader, src);
    let err = elaborate(&not_loader, &set).unwrap_err();
    assert!(err.contains("cannot be used in a kernel"), "{err}");
}
