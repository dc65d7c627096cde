//! `tensor_memory_descriptor_type` as a value (01-attention-forward builds the types of its tensor-memory views
//! to ask for register layouts before any buffer exists): its attributes, `get_reg_layout` equal to a descriptor
//! of that type's, the `32x32b_splitn` variant, and the errors. Also what the same example needs around it: a
//! host factory's classes unpacked at the top level, `MBarrierLayout.multicta`, and `convert_layout` to a new
//! spelling of the same map (a `SliceLayout` for `expand_dims`).

mod common;

use common::*;
use tessel_interp::Arg;
use tessel_interp::memory::Memory;
use tessel_tile::ScalarType::*;

const BW: &str = r#"
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import mbarrier
from triton.experimental.gluon.language.nvidia.blackwell import (
    TensorMemoryLayout, allocate_tensor_memory, tensor_memory_descriptor, tensor_memory_descriptor_type)
"#;

#[test]
fn a_type_answers_as_a_descriptor_of_it_and_its_registers_move_a_slice() {
    // A [128, 64] view of a [128, 128] allocation: its type's register layout is the slice's, and data stored
    // through it in the slice's columns comes back.
    let body = r#"
@gluon.jit
def view_type(X, Y):
    layout: gl.constexpr = TensorMemoryLayout((128, 64), col_stride=1)
    ty: gl.constexpr = tensor_memory_descriptor_type(gl.float32, [128, 64], layout, [128, 128])
    gl.static_assert(ty.shape == (128, 64))
    gl.static_assert(ty.alloc_shape == (128, 128))
    gl.static_assert(ty.element_ty == gl.float32)
    gl.static_assert(ty.layout == layout)
    regs: gl.constexpr = ty.get_reg_layout(num_warps=4)
    mem = allocate_tensor_memory(gl.float32, [128, 128], layout)
    view = mem.slice(64, 64)
    gl.static_assert(view.get_reg_layout() == regs)
    gl.static_assert(ty.get_reg_layout(num_warps=4, instr_variant="32x32b_splitn") == regs)
    offs = (gl.arange(0, 128, layout=gl.SliceLayout(1, regs))[:, None] * 64
            + gl.arange(0, 64, layout=gl.SliceLayout(0, regs))[None, :])
    view.store(gl.load(X + offs))
    gl.store(Y + offs, view.load(regs))
"#;
    let f = elab(&format!("{BW}{body}"), "view_type", vec![ptr(F32), ptr(F32)]);
    let x = Rng::new(7).vec(128 * 64);
    let mut mem = Memory::new();
    let bx = mem.alloc_from("x", F32, &x);
    let by = poisoned(&mut mem, "y", F32, 128 * 64);
    run(&f, &[Arg::Buffer(bx), Arg::Buffer(by)], [1, 1, 1], &mut mem);
    assert_eq!(mem.read_f64(by), x.iter().map(|&v| v as f32 as f64).collect::<Vec<_>>());
}

#[test]
fn splitn_puts_the_column_half_in_the_last_register() {
    // Block M 64: the 32x32b layout has lanes 16-31 on the second column half; splitn trades that lane basis
    // with the last register one. The layout still covers the tensor: a conversion to it and back is exact.
    let body = r#"
@gluon.jit
def splitn(X, Y):
    layout: gl.constexpr = TensorMemoryLayout((64, 64), col_stride=1)
    ty: gl.constexpr = tensor_memory_descriptor_type(gl.float32, [64, 64], layout, [64, 64])
    plain: gl.constexpr = ty.get_reg_layout(num_warps=4)
    split: gl.constexpr = ty.get_reg_layout(num_warps=4, instr_variant="32x32b_splitn")
    gl.static_assert(split == gl.DistributedLinearLayout(
        [[0, 1], [0, 2], [0, 4], [0, 8], [0, 32]], [[1, 0], [2, 0], [4, 0], [8, 0], [0, 16]], [[16, 0], [32, 0]],
        [], [64, 64]))
    # A linear layout's fields read back as lists (the example's `_get_split_n_layout` reads them).
    gl.static_assert(split.reg_bases[len(split.reg_bases) - 1] == [0, split.shape[1] // 2])
    gl.static_assert(split.lane_bases[4] == [0, 16] and split.warp_bases == [[16, 0], [32, 0]])
    gl.static_assert(split.block_bases == [])
    offs = (gl.arange(0, 64, layout=gl.SliceLayout(1, plain))[:, None] * 64
            + gl.arange(0, 64, layout=gl.SliceLayout(0, plain))[None, :])
    x = gl.convert_layout(gl.load(X + offs), split)
    gl.store(Y + offs, gl.convert_layout(x, plain))
"#;
    let f = elab(&format!("{BW}{body}"), "splitn", vec![ptr(F32), ptr(F32)]);
    let x = Rng::new(3).vec(64 * 64);
    let mut mem = Memory::new();
    let bx = mem.alloc_from("x", F32, &x);
    let by = poisoned(&mut mem, "y", F32, 64 * 64);
    run(&f, &[Arg::Buffer(bx), Arg::Buffer(by)], [1, 1, 1], &mut mem);
    assert_eq!(mem.read_f64(by), x.iter().map(|&v| v as f32 as f64).collect::<Vec<_>>());
}

#[test]
fn bad_types_and_calls_are_errors_with_spans() {
    let case = |stmt: &str| {
        let src = format!(
            "{BW}\n@gluon.jit\ndef k(X):\n    layout: gl.constexpr = TensorMemoryLayout((128, 64), col_stride=1)\n    \
             {stmt}\n"
        );
        elab_error(&src, "k", vec![ptr(F32)])
    };
    let err = case("tensor_memory_descriptor_type(gl.float32, [128, 64], layout, [128, 64]).get_reg_layout()");
    assert!(err.contains("needs `num_warps`") && err.contains("test.py:11"), "{err}");
    let err =
        case("tensor_memory_descriptor_type(gl.float32, [128, 64], gl.BlockedLayout([1], [32], [4], [0]), [128, 64])");
    assert!(err.contains("must be a TensorMemoryLayout or TensorMemoryScalesLayout"), "{err}");
    let err = case("tensor_memory_descriptor_type(gl.float32, [64, 64], layout, [128, 64])");
    assert!(err.contains("is not a column slice of alloc_shape [128, 64]"), "{err}");
    let err = case("tensor_memory_descriptor_type(gl.int8, [128, 64], layout, [128, 64])");
    assert!(err.contains("32- or 16-bit elements"), "{err}");
    let err = case(
        "tensor_memory_descriptor_type(gl.float32, [128, 64], layout, [128, 64]).get_reg_layout(num_warps=4, \
         instr_variant=\"64x64b\")",
    );
    assert!(err.contains("unknown instr_variant \"64x64b\""), "{err}");
    let err = case("tensor_memory_descriptor_type(gl.float32, [128, 64], layout, [128, 64]).rows");
    assert!(err.contains("a tensor-memory descriptor type has no attribute `rows`"), "{err}");
}

#[test]
fn a_host_factorys_classes_unpacked_at_the_top_level_are_one_set() {
    // As 01-attention-forward's `Channel(T, alloc_fn)`: nested aggregates closing over the factory's arguments,
    // unpacked into globals. The producer's `channel` field is the same class the factory's `alloc` builds.
    let body = r#"
def Pair(T, alloc_fn):
    @gluon.aggregate
    class Box:
        mem: T
        n: gl.constexpr

        @gluon.jit
        def alloc(n: gl.constexpr):
            return Box(alloc_fn(gl.float32, [n], gl.SwizzledSharedLayout(1, 1, 1, [0])), n)

    @gluon.aggregate
    class User:
        box: Box

        @gluon.jit
        def store_load(self, x):
            self.box.mem.store(x)
            return self.box.mem.load(gl.BlockedLayout([1], [32], [4], [0]))

    return Box, User


SmemBox, SmemUser = Pair(gl.shared_memory_descriptor, gl.allocate_shared_memory)
(Again, ) = (SmemBox, )


@gluon.jit
def factory(X, Y):
    L: gl.constexpr = gl.BlockedLayout([1], [32], [4], [0])
    offs = gl.arange(0, 128, layout=L)
    u = SmemUser(Again.alloc(128))
    gl.store(Y + offs, u.store_load(gl.load(X + offs)) * 2)
"#;
    let f = elab(&format!("{BW}{body}"), "factory", vec![ptr(F32), ptr(F32)]);
    let x = Rng::new(5).vec(128);
    let mut mem = Memory::new();
    let bx = mem.alloc_from("x", F32, &x);
    let by = poisoned(&mut mem, "y", F32, 128);
    run(&f, &[Arg::Buffer(bx), Arg::Buffer(by)], [1, 1, 1], &mut mem);
    assert_eq!(mem.read_f64(by), x.iter().map(|&v| (v as f32 * 2.0) as f64).collect::<Vec<_>>());

    let bad = format!("{BW}\nA, B = (1, 2, 3)\n\n@gluon.jit\ndef k(X):\n    gl.static_assert(A == 1)\n");
    let err = elab_error(&bad, "k", vec![ptr(F32)]);
    assert!(err.contains("cannot unpack 3 values into 2 names") && err.contains("test.py:8"), "{err}");
}

#[test]
fn multicta_barriers_and_a_respelt_slice_layout() {
    // One barrier per CTA of the cluster (one CTA here: no block basis), and `convert_layout` of a tensor spelt
    // by its bases to the SliceLayout of the same map, which `expand_dims` needs.
    let body = r#"
@gluon.jit
def multicta(X, Y):
    sync: gl.constexpr = mbarrier.MBarrierLayout.multicta(gl.num_ctas())
    gl.static_assert(sync == mbarrier.MBarrierLayout())
    flags = gl.allocate_shared_memory(gl.int8, [gl.num_ctas()], sync)
    P: gl.constexpr = gl.DistributedLinearLayout([], [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0]], [[32, 0], [64, 0]],
                                                 [], [128, 1])
    lin: gl.constexpr = gl.DistributedLinearLayout([], [[1], [2], [4], [8], [16]], [[32], [64]], [], [128])
    x = gl.load(X + gl.arange(0, 128, layout=lin))
    x = gl.convert_layout(x, gl.SliceLayout(1, P))
    y = x[:, None]
    gl.store(Y + gl.arange(0, 128, layout=gl.SliceLayout(1, P))[:, None] + gl.arange(0, 1, layout=gl.SliceLayout(0, P))[None, :], y)
"#;
    let f = elab(&format!("{BW}{body}"), "multicta", vec![ptr(F32), ptr(F32)]);
    let x = Rng::new(9).vec(128);
    let mut mem = Memory::new();
    let bx = mem.alloc_from("x", F32, &x);
    let by = poisoned(&mut mem, "y", F32, 128);
    run(&f, &[Arg::Buffer(bx), Arg::Buffer(by)], [1, 1, 1], &mut mem);
    assert_eq!(mem.read_f64(by), x.iter().map(|&v| v as f32 as f64).collect::<Vec<_>>());
}
