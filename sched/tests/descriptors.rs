//! Tensor-descriptor accesses lowered to pointer ops or TMA copies (`tessel_tile::layout::descriptors`,
//! [`tessel_sched::tma_copies`]) compute what the descriptors did, run in the interpreter.

use tessel_interp::memory::Memory;
use tessel_interp::{Arg, run};
use tessel_tile::layout::descriptors::lower_descriptors;
use tessel_tile::parse::parse_func;
use tessel_tile::types::ScalarType;

/// A transposing copy through descriptors, run in the interpreter before and after the rewrite on a
/// ragged 19 x 45 input (blocks 8 x 16, rows padded to 16-byte multiples as descriptors require): the
/// outputs must be identical, padding and clipping included.
#[test]
fn rewrite_preserves_semantics_on_ragged_tiles() {
    let src = "func @t(%x: ptr<f32>, %m: i32, %n: i32, %sx: i64, %one: i64, %y: ptr<f32>, %sy: i64) {
  %dx = make_tensor_desc {rank = 2, padding = \"nan\"} %x, %m, %n, %sx, %one : tensordesc<8x16xf32>
  %dy = make_tensor_desc {rank = 2} %y, %n, %m, %sy, %one : tensordesc<16x8xf32>
  %p = program_id {axis = 0} : i32
  %q = program_id {axis = 1} : i32
  %c8 = constant {value = 8} : i32
  %c16 = constant {value = 16} : i32
  %om = mul %p, %c8 : i32
  %on = mul %q, %c16 : i32
  %t = desc_load %dx, %om, %on : tensor<8x16xf32>
  %tt = permute {order = [1, 0]} %t : tensor<16x8xf32>
  desc_store %dy, %tt, %on, %om
  return
}";
    let mut f = parse_func(src).unwrap();
    // sm_80 has no TMA: every access becomes pointer loads and stores.
    f.target = tessel_tile::Target::Sm80;
    let mut g = f.clone();
    lower_descriptors(&mut g).unwrap();
    tessel_tile::verify::verify(&g).unwrap();
    let text = tessel_tile::print::print_func(&g);
    assert!(!text.contains("desc"), "{text}");
    // On sm_90a both stay for TMA: `%dx` is a host descriptor (the kernel's arguments in a descriptor's
    // order), `%dy` one the kernel makes once (at the top level), which gets a tensor map in global scratch.
    let mut h = f.clone();
    h.target = tessel_tile::Target::Sm90a;
    lower_descriptors(&mut h).unwrap();
    let text = tessel_tile::print::print_func(&h);
    assert!(text.contains("desc_load") && text.contains("desc_store"), "{text}");
    assert!(
        tessel_sched::tma_copies::lower_tma_copies(&mut h, tessel_sched::tma_copies::StoreWaits::Deferred)
            .unwrap()
            .accesses
            > 0
    );
    tessel_tile::verify::verify(&h).unwrap();
    let text = tessel_tile::print::print_func(&h);
    assert!(text.contains("tma_load") && text.contains("tma_store") && !text.contains("desc_load"), "{text}");
    let (m, n, sx, sy) = (19usize, 45usize, 48usize, 20usize);
    let outputs: Vec<Vec<f64>> = [&f, &g, &h]
        .iter()
        .map(|func| {
            let mut mem = Memory::new();
            let xs: Vec<f64> = (0..m * sx).map(|i| (i / sx * n + i % sx) as f64).collect();
            let x = mem.alloc_from("x", ScalarType::F32, &xs);
            let y = mem.alloc_from("y", ScalarType::F32, &vec![-1.0; n * sy]);
            let args = [
                Arg::Buffer(x),
                Arg::Int(m as i64),
                Arg::Int(n as i64),
                Arg::Int(sx as i64),
                Arg::Int(1),
                Arg::Buffer(y),
                Arg::Int(sy as i64),
            ];
            run(func, &args, [3, 3, 1], &mut mem).unwrap();
            mem.read_f64(y)
        })
        .collect();
    assert_eq!(outputs[0], outputs[1]);
    assert_eq!(outputs[0], outputs[2], "the TMA lowering");
    // y[r][c] = x[c][r] inside the 45 x 19 result; the row padding keeps its -1.
    let expect: Vec<f64> =
        (0..n * sy).map(|i| if i % sy < m { ((i % sy) * n + i / sy) as f64 } else { -1.0 }).collect();
    assert_eq!(outputs[1], expect);
}
