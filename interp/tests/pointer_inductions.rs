//! The loop rewrite of pointer inductions (`tessel_tile::passes::reassociate_pointer_inductions`) computes what
//! the loop did: run in the interpreter before and after on fresh random inputs, the outputs are identical.

use tessel_interp::memory::Memory;
use tessel_interp::{Arg, run};
use tessel_tile::parse::parse_func;
use tessel_tile::types::ScalarType;

/// A loop over `n` column blocks of a row-major `rows x (n * 16)` matrix: `%pa` advances by a runtime stride
/// (negative strides included: the matrix is walked from its end), `%pb` by a constant, and the final `%pb`
/// is stored through after the loop.
#[test]
fn the_rewritten_loop_reads_and_writes_the_same_elements() {
    let src = "func @k(%x: ptr<f32>, %y: ptr<f32>, %start: i32, %s: i32, %n: i32) {
  %lb = constant {value = 0} : i32
  %step = constant {value = 1} : i32
  %r = arange {start = 0, end = 16} : tensor<16xi32>
  %xs = splat %x : tensor<16xptr<f32>>
  %x0 = addptr %xs, %r : tensor<16xptr<f32>>
  %st = splat %start : tensor<16xi32>
  %a0 = addptr %x0, %st : tensor<16xptr<f32>>
  %ss = splat %s : tensor<16xi32>
  %c16 = constant {value = 16} : tensor<16xi32>
  %zero = constant {value = 0.0} : tensor<16xf32>
  %acc, %a, %b = for %lb, %n, %step, %zero, %a0, %x0 : tensor<16xf32>, tensor<16xptr<f32>>, tensor<16xptr<f32>> {
  ^(%i: i32, %t: tensor<16xf32>, %pa: tensor<16xptr<f32>>, %pb: tensor<16xptr<f32>>):
    %va = load %pa : tensor<16xf32>
    %vb = load %pb : tensor<16xf32>
    %m = mul %va, %vb : tensor<16xf32>
    %u = add %t, %m : tensor<16xf32>
    %na = addptr %pa, %ss : tensor<16xptr<f32>>
    %nb = addptr %pb, %c16 : tensor<16xptr<f32>>
    yield %u, %na, %nb
  }
  %ys = splat %y : tensor<16xptr<f32>>
  %yp = addptr %ys, %r : tensor<16xptr<f32>>
  store %yp, %acc
  %back = constant {value = -16} : tensor<16xi32>
  %last = addptr %b, %back : tensor<16xptr<f32>>
  %v = load %last : tensor<16xf32>
  %w = add %v, %acc : tensor<16xf32>
  %y16 = addptr %yp, %c16 : tensor<16xptr<f32>>
  store %y16, %w
  return
}";
    let f = parse_func(src).unwrap();
    let mut g = f.clone();
    assert!(tessel_tile::passes::reassociate_pointer_inductions(&mut g));
    tessel_tile::verify::verify(&g).unwrap();
    let text = tessel_tile::print::print_func(&g);
    assert!(text.contains("%pa_offset: i64") && text.contains("%pb_offset: i64"), "{text}");
    let seed = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64;
    let n = 7usize;
    let xs = tessel_math::testing::Rng::new(seed).vec(n * 16 * 2);
    for (start, s) in [(0i64, 16i64), (n as i64 * 32 - 16, -16), (3, 32)] {
        let out: Vec<Vec<f64>> = [&f, &g]
            .iter()
            .map(|func| {
                let mut mem = Memory::new();
                let x = mem.alloc_from("x", ScalarType::F32, &xs);
                // Poisoned: an element the loop fails to write shows as NaN on one side only.
                let y = mem.alloc_from("y", ScalarType::F32, &[f64::NAN; 32]);
                let args = [Arg::Buffer(x), Arg::Buffer(y), Arg::Int(start), Arg::Int(s), Arg::Int(n as i64)];
                run(func, &args, [1, 1, 1], &mut mem).unwrap();
                mem.read_f64(y)
            })
            .collect();
        assert!(out[0].iter().all(|v| !v.is_nan()), "seed {seed}: the original left elements unwritten");
        assert_eq!(out[0], out[1], "seed {seed}, start {start}, stride {s}");
    }
}
