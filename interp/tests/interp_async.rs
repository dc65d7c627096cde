//! The interpreter's rules for shared memory and asynchronous work: `async_copy` data is visible only after the
//! `async_wait` that retires it, buffers of a multi-buffered allocation are independent, and an asynchronous
//! `warpgroup_dot`'s result and operand buffers are off limits until a `warpgroup_dot_wait`.

use tessel_interp::memory::Memory;
use tessel_interp::{Arg, run};
use tessel_tile::parse::parse_func;
use tessel_tile::types::ScalarType::F32;
use tessel_tile::verify::verify;

const L: &str = "BlockedLayout([1,1],[4,8],[1,1],[1,0])";
const S: &str = "SwizzledSharedLayout(1, 1, 1, [1, 0])";
const S3: &str = "SharedLinearLayout(offset_bases=[[0,0,1],[0,0,2],[0,0,4],[0,1,0],[0,2,0],[0,4,0],[1,0,0]])";

/// Copies the 8x8 input into buffer 1 of a 2-buffer allocation with `async_copy`, waits (unless `wait` is
/// false), loads it back and stores it to the output; buffer 0 gets `local_store` of zeros first.
fn copy_kernel(wait: bool) -> String {
    let wait_op = if wait { "  %w = async_wait {pending = 0} %g : token\n" } else { "" };
    format!(
        "func @k(%x: ptr<f32>, %y: ptr<f32>) attributes {{num_warps = 1}} {{
  %i = arange {{start = 0, end = 8}} : tensor<8xi32, SliceLayout(1, {L})>
  %j = arange {{start = 0, end = 8}} : tensor<8xi32, SliceLayout(0, {L})>
  %i2 = expand_dims {{axis = 1}} %i : tensor<8x1xi32, {L}>
  %j2 = expand_dims {{axis = 0}} %j : tensor<1x8xi32, {L}>
  %eight = constant {{value = 8}} : tensor<8x1xi32, {L}>
  %r = mul %i2, %eight : tensor<8x1xi32, {L}>
  %rb = broadcast %r : tensor<8x8xi32, {L}>
  %cb = broadcast %j2 : tensor<8x8xi32, {L}>
  %off = add %rb, %cb : tensor<8x8xi32, {L}>
  %px0 = splat %x : tensor<8x8xptr<f32>, {L}>
  %px = addptr %px0, %off : tensor<8x8xptr<f32>, {L}>
  %bufs = local_alloc : memdesc<2x8x8xf32, {S3}>
  %zero_i = constant {{value = 0}} : i32
  %one_i = constant {{value = 1}} : i32
  %b0 = memdesc_index %bufs, %zero_i : memdesc<8x8xf32, {S}>
  %b1 = memdesc_index %bufs, %one_i : memdesc<8x8xf32, {S}>
  %z = constant {{value = 0.0}} : tensor<8x8xf32, {L}>
  local_store %z, %b0
  %t = async_copy %px, %b1 : token
  %g = async_commit_group %t : token
{wait_op}  %v = local_load %b1 : tensor<8x8xf32, {L}>
  %u = local_load %b0 : tensor<8x8xf32, {L}>
  %s = add %v, %u : tensor<8x8xf32, {L}>
  %py0 = splat %y : tensor<8x8xptr<f32>, {L}>
  %py = addptr %py0, %off : tensor<8x8xptr<f32>, {L}>
  store %py, %s
  return
}}
"
    )
}

#[test]
fn async_copies_land_at_the_wait_in_their_own_buffer() {
    let f = parse_func(&copy_kernel(true)).unwrap_or_else(|e| panic!("{e}"));
    verify(&f).unwrap();
    let xs: Vec<f64> = (0..64).map(|i| i as f64 * 0.5).collect();
    let mut mem = Memory::new();
    let (x, y) = (mem.alloc_from("x", F32, &xs), mem.alloc_from("y", F32, &[f64::NAN; 64]));
    run(&f, &[Arg::Buffer(x), Arg::Buffer(y)], [1, 1, 1], &mut mem).unwrap();
    assert_eq!(mem.read_f64(y), xs);
}

#[test]
fn reading_a_buffer_with_a_copy_in_flight_is_an_error() {
    let f = parse_func(&copy_kernel(false)).unwrap();
    verify(&f).unwrap();
    let mut mem = Memory::new();
    let (x, y) = (mem.alloc_from("x", F32, &[1.0; 64]), mem.alloc_from("y", F32, &[0.0; 64]));
    let e = run(&f, &[Arg::Buffer(x), Arg::Buffer(y)], [1, 1, 1], &mut mem).unwrap_err();
    assert!(e.fault.to_string().contains("async_copy or a TMA load into it is in flight"), "{e}");
}

/// `acc = a @ a` with an asynchronous wgmma; `use_before_wait` reads the result before the wait,
/// `overwrite_before_wait` stores into an operand buffer before it.
fn async_dot_kernel(use_before_wait: bool, overwrite_before_wait: bool) -> String {
    let acc = "NVMMADistributedLayout([3,0],[4,1],[16,64,16])";
    let early =
        if use_before_wait { format!("  %bad = add %d, %d : tensor<64x64xf32, {acc}>\n") } else { String::new() };
    let clobber = if overwrite_before_wait { "  local_store %x, %sb\n" } else { "" };
    async_dot_kernel_with(&format!("{early}{clobber}"), "")
}

/// The kernel of [`async_dot_kernel`] with `before` and `after` (lines of IR) around the wait for the dot; `%sb`
/// is the dot's B buffer, `%c` a `memdesc<1xi32>` release counter zeroed first, `%yes` a true `i1`.
fn async_dot_kernel_with(before: &str, after: &str) -> String {
    let acc = "NVMMADistributedLayout([3,0],[4,1],[16,64,16])";
    let nv = "NVMMASharedLayout(128, 16)";
    let bl = "BlockedLayout([1,8],[8,4],[4,1],[1,0])";
    format!(
        "func @k(%p: ptr<f16>, %q: ptr<f32>) attributes {{target = sm_90a, num_warps = 4}} {{
  %i = arange {{start = 0, end = 64}} : tensor<64xi32, SliceLayout(1, {bl})>
  %j = arange {{start = 0, end = 64}} : tensor<64xi32, SliceLayout(0, {bl})>
  %i2 = expand_dims {{axis = 1}} %i : tensor<64x1xi32, {bl}>
  %j2 = expand_dims {{axis = 0}} %j : tensor<1x64xi32, {bl}>
  %n = constant {{value = 64}} : tensor<64x1xi32, {bl}>
  %r = mul %i2, %n : tensor<64x1xi32, {bl}>
  %rb = broadcast %r : tensor<64x64xi32, {bl}>
  %cb = broadcast %j2 : tensor<64x64xi32, {bl}>
  %off = add %rb, %cb : tensor<64x64xi32, {bl}>
  %p0 = splat %p : tensor<64x64xptr<f16>, {bl}>
  %pp = addptr %p0, %off : tensor<64x64xptr<f16>, {bl}>
  %x = load %pp : tensor<64x64xf16, {bl}>
  %sa = local_alloc %x : memdesc<64x64xf16, {nv}>
  %sb = local_alloc %x : memdesc<64x64xf16, {nv}>
  %c = local_alloc : memdesc<1xi32, SwizzledSharedLayout(1, 1, 1, [0])>
  ring_counter_init %c
  %yes = constant {{value = 1}} : i1
  %z = constant {{value = 0.0}} : tensor<64x64xf32, {acc}>
  fence_async_shared
  %d = warpgroup_dot {{precision = ieee, is_async = true}} %sa, %sb, %z : tensor<64x64xf32, {acc}>
{before}  %w = warpgroup_dot_wait {{pending = 0}} %d : tensor<64x64xf32, {acc}>
{after}  %o = convert_layout %w : tensor<64x64xf32, {bl}>
  %q0 = splat %q : tensor<64x64xptr<f32>, {bl}>
  %qq = addptr %q0, %off : tensor<64x64xptr<f32>, {bl}>
  store %qq, %o
  return
}}
"
    )
}

#[test]
fn async_wgmma_results_and_operands_wait_for_the_wait() {
    for (early, clobber, want) in [
        (false, false, None),
        (true, false, Some("read before a warpgroup_dot_wait")),
        (false, true, Some("may still read it")),
    ] {
        let f = parse_func(&async_dot_kernel(early, clobber)).unwrap_or_else(|e| panic!("{e}"));
        verify(&f).unwrap();
        let xs: Vec<f64> = (0..64 * 64).map(|i| ((i % 7) as f64 - 3.0) * 0.25).collect();
        let mut mem = Memory::new();
        let p = mem.alloc_from("p", tessel_tile::types::ScalarType::F16, &xs);
        let q = mem.alloc_from("q", F32, &[f64::NAN; 64 * 64]);
        let r = run(&f, &[Arg::Buffer(p), Arg::Buffer(q)], [1, 1, 1], &mut mem);
        match want {
            None => {
                r.unwrap();
                let out = mem.read_f64(q);
                for (row, col) in [(0usize, 0usize), (5, 63), (63, 17)] {
                    let want: f64 = (0..64).map(|k| xs[row * 64 + k] * xs[k * 64 + col]).sum();
                    assert_eq!(out[row * 64 + col], want, "({row}, {col})");
                }
            }
            Some(msg) => {
                let e = r.unwrap_err();
                assert!(e.fault.to_string().contains(msg), "expected `{msg}`, got: {e}");
            }
        };
    }
}

#[test]
fn a_ring_slot_is_released_only_once_no_wgmma_reads_it() {
    let release = "  %issue = ring_release %c, %yes, %sb : i1\n";
    let f = parse_func(&async_dot_kernel_with(release, "")).unwrap_or_else(|e| panic!("{e}"));
    verify(&f).unwrap();
    let mut mem = Memory::new();
    let p = mem.alloc_from("p", tessel_tile::types::ScalarType::F16, &[0.5; 64 * 64]);
    let q = mem.alloc_from("q", F32, &[f64::NAN; 64 * 64]);
    let e = run(&f, &[Arg::Buffer(p), Arg::Buffer(q)], [1, 1, 1], &mut mem).unwrap_err();
    assert!(e.fault.to_string().contains("released for a refill while asynchronous warpgroup_dot"), "{e}");
    let f = parse_func(&async_dot_kernel_with("", release)).unwrap_or_else(|e| panic!("{e}"));
    verify(&f).unwrap();
    run(&f, &[Arg::Buffer(p), Arg::Buffer(q)], [1, 1, 1], &mut mem).unwrap();
    assert!(mem.read_f64(q).iter().all(|&x| x == 16.0));
}

#[test]
fn a_ring_release_result_only_predicates_the_refill() {
    let misuse = "  %issue = ring_release %c, %yes, %sb : i1\n  %both = and %issue, %yes : i1\n";
    let f = parse_func(&async_dot_kernel_with("", misuse)).unwrap_or_else(|e| panic!("{e}"));
    let e = verify(&f).unwrap_err();
    assert!(e.to_string().contains("may only be the predicate of mbarrier_expect or tma_load"), "{e}");
}

/// A barrier in a buffer, then `body` (which may use `%bar`, `%zero`, `%one` and `%t`, a true predicate).
fn barrier_kernel(body: &str) -> String {
    format!(
        "func @k() attributes {{num_warps = 1}} {{
  %bar = local_alloc : memdesc<1xi64, SwizzledSharedLayout(1, 1, 1, [0])>
  %zero = constant {{value = 0}} : i32
  %one = constant {{value = 1}} : i32
  %t = constant {{value = 1}} : i1
  mbarrier_init {{count = 1}} %bar
{body}  return
}}
"
    )
}

#[test]
fn mbarrier_phases_complete_with_their_arrivals_and_unsatisfiable_waits_are_deadlocks() {
    let cases = [
        // A fresh barrier runs phase 0: waiting for parity 1 passes at once (the producer-start convention).
        ("  mbarrier_wait %bar, %one\n", None),
        ("  mbarrier_arrive {count = 1} %bar, %t\n  mbarrier_wait %bar, %zero\n", None),
        (
            "  mbarrier_wait %bar, %zero\n",
            Some(
                "waiting for phase parity 0 of mbarrier %0 (phase 0 running), which still lacks 1 arrival(s) and 0 transaction byte(s)",
            ),
        ),
        ("  mbarrier_arrive {count = 1} %bar, %t\n  mbarrier_wait %bar, %one\n", Some("phase 1 running")),
        (
            "  mbarrier_expect {bytes = 1024} %bar, %t\n  mbarrier_wait %bar, %zero\n",
            Some("lacks 0 arrival(s) and 1024 transaction byte(s)"),
        ),
        ("  mbarrier_arrive {count = 2} %bar, %t\n", Some("2 arrivals on a barrier phase that expects only 1 more")),
    ];
    for (body, want) in cases {
        let f = parse_func(&barrier_kernel(body)).unwrap_or_else(|e| panic!("{e}"));
        verify(&f).unwrap();
        let r = run(&f, &[], [1, 1, 1], &mut Memory::new());
        match (want, r) {
            (None, r) => {
                r.unwrap_or_else(|e| panic!("{body}: {e}"));
            }
            (Some(msg), Err(e)) => assert!(e.fault.to_string().contains(msg), "{body}: expected `{msg}`, got: {e}"),
            (Some(msg), Ok(_)) => panic!("{body}: expected an error containing `{msg}`"),
        }
    }
}
