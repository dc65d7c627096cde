//! The front end takes time linear in the size of its input: a module of many small `@jit` helpers (`tessel
//! check` lists them with their roles) and a long straight-line kernel (elaborated into tile IR).

use tessel_lang::elab::roles::Role;
use tessel_lang::elab::{ArgSpec, Specialization, elaborate_full};
use tessel_tile::ScalarType;
use tessel_tile::testing::assert_near_linear;

const HEAD: &str = "import triton\nimport triton.language as tl\n\n";

/// `n` one-line helpers, each called by the next, and a kernel calling the last.
fn helpers(n: usize) -> String {
    let mut s = String::from(HEAD);
    s.push_str("@triton.jit\ndef h0(x): return x + 1\n\n");
    for i in 1..n {
        s.push_str(&format!("@triton.jit\ndef h{i}(x): return h{}(x) + {i}\n\n", i - 1));
    }
    s.push_str(&format!("@triton.jit\ndef k(P):\n    tl.store(P, h{}(tl.load(P)))\n", n - 1));
    s
}

#[test]
fn listing_the_kernels_of_a_module_is_linear_in_its_size() {
    let module = tessel_lang::parse_module(&helpers(3)).unwrap();
    let roles: Vec<(String, Role)> =
        tessel_lang::elab::kernels(&module).into_iter().map(|k| (k.name, k.role)).collect();
    let helper = |c: &str| Role::Helper { callers: vec![c.to_string()] };
    assert_eq!(
        roles,
        [
            ("h0".into(), helper("h1")),
            ("h1".into(), helper("h2")),
            ("h2".into(), helper("k")),
            ("k".into(), Role::Kernel)
        ]
    );
    assert_near_linear("parse + kernels", 500, helpers, |src| {
        let module = tessel_lang::parse_module(src).unwrap();
        assert_eq!(tessel_lang::elab::kernels(&module).len(), src.matches("\ndef ").count());
    });
}

/// A kernel of `n` steps of straight-line code, each an update and a branch.
fn straight_line(n: usize) -> String {
    let mut s = format!("{HEAD}@triton.jit\ndef k(P, m):\n    x = tl.load(P)\n");
    for _ in 0..n {
        s.push_str("    x = x + 1.0\n    if m > 0:\n        x = x * 2.0\n");
    }
    s.push_str("    tl.store(P, x)\n");
    s
}

#[test]
fn elaborating_a_long_kernel_is_linear_in_its_length() {
    let args =
        || Specialization::new(vec![ArgSpec::Pointer(ScalarType::F32, false), ArgSpec::Int(ScalarType::I32, false)]);
    let elaborate = |src: &str| {
        let module = tessel_lang::parse_module(src).unwrap();
        elaborate_full(&module, "k", &args()).unwrap_or_else(|d| panic!("{}", d.render("k.py", src))).func
    };
    let f = elaborate(&straight_line(2));
    let text = f.to_string();
    assert_eq!((text.matches(" = add ").count(), text.matches(" = if ").count()), (2, 2), "{text}");
    assert_near_linear("parse + elaborate", 300, straight_line, |src| {
        elaborate(src);
    });
}
