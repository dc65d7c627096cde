//! Bad gluon programs are refused at the line that is wrong, with an ariadne diagnostic, never a panic.

mod common;

use common::*;
use tessel_tile::ScalarType::*;

/// The diagnostic for `body` (indented as a kernel body) in a `@gluon.jit` kernel `k(X)` with a blocked
/// layout `L`, an NVMMA accumulator layout `ACC` and a 64x64 float16 buffer `s` already defined.
fn error(body: &str) -> String {
    let src = format!(
        "{HEADER}
@gluon.jit
def k(X):
    L: gl.constexpr = gl.BlockedLayout([1, 4], [8, 4], [4, 1], [1, 0])
    ACC: gl.constexpr = gl.NVMMADistributedLayout([3, 0], [4, 1], [16, 64, 16])
    s = gl.allocate_shared_memory(gl.float16, [64, 64], gl.NVMMASharedLayout.get_default_for([64, 64], gl.float16))
{body}"
    );
    elab_error(&src, "k", vec![ptr(F16)])
}

/// The error names `message` and shows the source text `at` under it.
fn check(body: &str, message: &str, at: &str) {
    let e = error(body);
    assert!(e.contains(message), "expected {message:?} in:\n{e}");
    assert!(e.contains(at), "expected the source {at:?} in:\n{e}");
    assert!(e.contains("test.py:"), "an ariadne report with a location:\n{e}");
}

#[test]
fn gluon_builtins_need_a_gluon_kernel() {
    let src = format!(
        "{HEADER}import triton\nimport triton.language as tl\n@triton.jit\ndef k(X):\n    \
         s = gl.allocate_shared_memory(gl.float16, [16, 16], gl.SwizzledSharedLayout(1, 1, 1, [1, 0]))\n"
    );
    let e = elab_error(&src, "k", vec![ptr(F16)]);
    // The layout argument is evaluated first: it is the first gluon builtin met.
    assert!(e.contains("`gl.SwizzledSharedLayout` is a gluon builtin: it needs a `@gluon.jit` kernel"), "{e}");
    assert!(e.contains("decorate the kernel with `@gluon.jit`"), "{e}");
}

#[test]
fn wrong_argument_counts_and_names() {
    check("    gl.allocate_shared_memory(gl.float16, [16])\n", "missing the required argument `layout`", "[16]");
    check(
        "    b = mbarrier.allocate_mbarrier()\n    mbarrier.init(b)\n",
        "missing the required argument `count`",
        "mbarrier.init(b)",
    );
    check("    async_copy.wait_group(1, 2)\n", "takes at most 1 positional arguments", "2");
    check("    async_copy.commit_group(groups=1)\n", "unexpected keyword argument `groups`", "1");
    check("    mbarrier.arive(s)\n", "unknown builtin `mbarrier.arive`", "mbarrier.arive");
}

#[test]
fn shared_memory_shapes_dtypes_and_layouts() {
    let x = "    x = gl.full([32, 64], 1.0, gl.float16, layout=L)\n";
    check(
        &format!("{x}    s.store(x)\n"),
        "the tensor has shape [32, 64], but the shared-memory buffer has shape [64, 64]",
        "s.store(x)",
    );
    let y = "    y = gl.full([64, 64], 1.0, gl.float32, layout=L)\n";
    check(&format!("{y}    s.store(y)\n"), "the shared-memory buffer holds float16", "y");
    check(
        "    t = gl.allocate_shared_memory(gl.float32, [64, 64], gl.NVMMASharedLayout(128, 16))\n",
        "this NVMMASharedLayout is for 16-bit elements, but the buffer holds float32",
        "gl.NVMMASharedLayout(128, 16)",
    );
    check(
        "    t = gl.allocate_shared_memory(gl.float16, [64, 64], L)\n",
        "needs a shared-memory layout, got the BlockedLayout",
        "L",
    );
    check(
        "    x = s.load(gl.NVMMASharedLayout(128, 16))\n",
        "needs a distributed (register) layout",
        "gl.NVMMASharedLayout(128, 16)",
    );
    check("    x = s + 1\n", "expected a tensor", "s + 1");
    check("    gl.store(X, s)\n", "must be a tensor, got memdesc<64x64xf16", "s");
    check("    x = s.lod(L)\n", "a shared-memory descriptor has no attribute `lod`", "s.lod");
    check(
        "    r = gl.allocate_shared_memory(gl.float16, [2, 16, 16], gl.SwizzledSharedLayout(1, 1, 1, [1, 0]))\n    t = r.index(2)\n",
        "index 2 is out of range for 2 buffers",
        "2",
    );
    check("    t = s._reinterpret(gl.int8, [64, 128], s.layout)\n", "changes the element size", "gl.int8");
    check("    t = s._reinterpret(gl.int16, [64, 32], s.layout)\n", "does not hold the 4096 elements", "[64, 32]");
}

#[test]
fn mbarrier_and_async_copy_arguments() {
    check("    mbarrier.init(s, 1)\n", "needs a barrier (a shared-memory descriptor of shape [1] and int64)", "s");
    check("    b = mbarrier.allocate_mbarrier()\n    mbarrier.wait(b, 2)\n", "is a parity, 0 or 1, got 2", "2");
    check(
        "    b = mbarrier.allocate_mbarrier()\n    mbarrier.expect(b)\n",
        "needs the transaction bytes",
        "mbarrier.expect(b)",
    );
    let p =
        "    p = X + gl.arange(0, 64, layout=gl.SliceLayout(0, L))[None, :] + gl.zeros([32, 64], gl.int32, layout=L)\n";
    check(
        &format!("{p}    async_copy.async_copy_global_to_shared(s, p)\n"),
        "the pointers have shape [32, 64], but the shared-memory buffer has shape [64, 64]",
        "p",
    );
}

#[test]
fn wgmma_operands_and_accumulator() {
    let acc = "    acc = gl.zeros([64, 64], gl.float32, layout=ACC)\n";
    let sw = "    w = gl.allocate_shared_memory(gl.float16, [64, 64], gl.SwizzledSharedLayout(8, 1, 8, [1, 0]))\n";
    check(
        &format!("{acc}{sw}    acc = warpgroup_mma(w, s, acc)\n"),
        "operand A of `hopper.warpgroup_mma` must be in an NVMMASharedLayout",
        "w",
    );
    check(
        "    acc = gl.zeros([64, 64], gl.float32, layout=L)\n    acc = warpgroup_mma(s, s, acc)\n",
        "must be in an NVMMADistributedLayout of version [3, 0]",
        "acc",
    );
    let t = "    t = gl.allocate_shared_memory(gl.float16, [32, 64], gl.NVMMASharedLayout.get_default_for([32, 64], gl.float16))\n";
    check(
        &format!("{acc}{t}    acc = warpgroup_mma(t, s, acc)\n"),
        "shapes do not form a matrix product",
        "warpgroup_mma(t, s, acc)",
    );
    check(
        &format!("{acc}    acc = warpgroup_mma(s, s, acc, precision=\"tf32x3\")\n"),
        "is not one wgmma runs",
        "\"tf32x3\"",
    );
    let x = "    x = gl.full([64, 64], 1.0, gl.float16, layout=L)\n";
    check(&format!("{acc}{x}    acc = warpgroup_mma(x, s, acc)\n"), "in registers must be in DotOperandLayout(0", "x");
}
