//! Layouts do not change values: the interpreter (which runs `convert_layout` as the identity) computes the same
//! outputs, bit for bit, before and after `assign_layouts`, reductions combining by a balanced tree on both sides
//! (`ReduceOrder::Tree`: by default a layout decides the order a reduction rounds in, as on the GPU). Checked on every
//! scalar-argument kernel among the test files with random inputs, and on randomly generated kernels that mix
//! row- and column-major tiles, reductions, broadcasts, transposes and loop-carried accumulators.

use tessel_interp::memory::Memory;
use tessel_interp::{Arg, Limits, ReduceOrder, run_with_limits};
use tessel_tile::ir::Func;
use tessel_tile::layout::assign_layouts;
use tessel_tile::parse::parse_func;
use tessel_tile::print::print_func;
use tessel_tile::types::{Elem, Type};

use tessel_math::testing::Rng;

const BUFFER: usize = 1 << 15;

/// Runs `f` on inputs drawn from `seed`: every buffer's final contents (as bits) and the print log, or the
/// error message.
fn outcome(f: &Func, seed: u64) -> Result<(Vec<Vec<u64>>, Vec<String>), String> {
    let mut rng = Rng::new(seed);
    let mut mem = Memory::new();
    let mut args = Vec::new();
    let mut bufs = Vec::new();
    for (i, &a) in f.args().iter().enumerate() {
        match f.ty(a) {
            Type::Scalar(Elem::Ptr(s, _)) => {
                let vals: Vec<f64> = (0..BUFFER)
                    .map(|_| if s.is_float() { rng.uniform() * 4.0 } else { rng.below(64) as f64 })
                    .collect();
                let b = mem.alloc_from(format!("arg{i}"), *s, &vals);
                bufs.push(b);
                args.push(Arg::Buffer(b));
            }
            Type::Scalar(Elem::Scalar(s)) if s.is_float() => args.push(Arg::Float(rng.uniform())),
            Type::Scalar(Elem::Scalar(_)) => args.push(Arg::Int(1 + rng.below(40) as i64)),
            other => panic!("argument of type {other}"),
        }
    }
    let grid = [1 + rng.below(3) as u32, 1, 1];
    let limits = Limits { reduce_order: ReduceOrder::Tree, ..Limits::default() };
    let log = run_with_limits(f, &args, grid, &mut mem, limits).map_err(|e| e.fault.to_string())?;
    let contents = bufs.iter().map(|&b| mem.read_f64(b).iter().map(|x| x.to_bits()).collect()).collect();
    Ok((contents, log))
}

/// Checks one kernel; returns how many conversions assignment inserted and how many runs succeeded.
fn check_unchanged(src: &str, seeds: std::ops::Range<u64>) -> (usize, usize) {
    let f = parse_func(src).unwrap_or_else(|e| panic!("{e}\n{src}"));
    let mut g = f.clone();
    assign_layouts(&mut g).unwrap_or_else(|e| panic!("{e}\n{src}"));
    assert!(g.values.iter().all(|v| !v.ty.is_tensor() || v.ty.layout().is_some()));
    let mut ok = 0;
    for seed in seeds {
        let (a, b) = (outcome(&f, seed), outcome(&g, seed));
        assert!(a == b, "seed {seed}: results differ after layout assignment\n{src}\n{}", print_func(&g));
        ok += a.is_ok() as usize;
    }
    (print_func(&g).matches("convert_layout").count(), ok)
}

#[test]
fn test_file_kernels_compute_the_same_with_layouts() {
    // The IR test files are tile's (its round-trip and pass tests read them too).
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../tile");
    let mut files = Vec::new();
    for dir in ["tests/layout", "tests/ir", "tests/passes"] {
        for e in std::fs::read_dir(format!("{root}/{dir}")).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "tir") && !p.to_string_lossy().ends_with(".out.tir") {
                files.push(p);
            }
        }
    }
    files.sort();
    let mut ran = 0;
    for p in files {
        let src = std::fs::read_to_string(&p).unwrap();
        let f = parse_func(&src).unwrap();
        if f.args().iter().any(|&a| f.ty(a).is_tensor()) {
            // Not runnable (the interpreter takes scalar arguments), but layouts must still be assigned.
            let mut g = f.clone();
            assign_layouts(&mut g).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            continue;
        }
        check_unchanged(&src, 0..4);
        ran += 1;
    }
    assert!(ran >= 8, "only {ran} kernels ran");
}

/// A random kernel over `m x n` f32 tiles: loads in row- or column-major order (one masked), a chain of
/// elementwise ops, row/column reductions broadcast back, transposes (square tiles), reshapes, join/split,
/// branches and loop-carried accumulators, and a store in either order.
fn random_kernel(rng: &mut Rng) -> String {
    let m = 1u32 << (1 + rng.below(5));
    let n = 1u32 << (1 + rng.below(5));
    let mut s = String::new();
    let div: Vec<String> = (0..3).filter(|_| rng.below(4) != 0).map(|i: u32| i.to_string()).collect();
    s += &format!(
        "func @rand(%a: ptr<f32>, %b: ptr<f32>, %o: ptr<f32>, %k: i32) attributes {{num_warps = {}, divisible_by_16 = [{}]}} {{\n",
        1 << rng.below(3),
        div.join(", ")
    );
    s += &format!("  %i = arange {{start = 0, end = {m}}} : tensor<{m}xi32>\n");
    s += &format!("  %j = arange {{start = 0, end = {n}}} : tensor<{n}xi32>\n");
    s += &format!("  %ie = expand_dims {{axis = 1}} %i : tensor<{m}x1xi32>\n");
    s += &format!("  %je = expand_dims {{axis = 0}} %j : tensor<1x{n}xi32>\n");
    s += &format!("  %cm = constant {{value = {m}}} : i32\n  %cn = constant {{value = {n}}} : i32\n");
    s += &format!("  %cms = splat %cm : tensor<1x{n}xi32>\n  %cns = splat %cn : tensor<{m}x1xi32>\n");
    s += &format!("  %rowi = mul %ie, %cns : tensor<{m}x1xi32>\n  %colj = mul %je, %cms : tensor<1x{n}xi32>\n");
    let t = format!("tensor<{m}x{n}");
    s += &format!("  %rb = broadcast %rowi : {t}xi32>\n  %jb = broadcast %je : {t}xi32>\n");
    s += &format!("  %ib = broadcast %ie : {t}xi32>\n  %cb = broadcast %colj : {t}xi32>\n");
    s += &format!("  %rowmajor = add %rb, %jb : {t}xi32>\n  %colmajor = add %ib, %cb : {t}xi32>\n");
    let order = |rng: &mut Rng| if rng.below(2) == 0 { "%rowmajor" } else { "%colmajor" };
    let mut pool = Vec::new();
    for (k, p) in ["a", "b"].iter().enumerate() {
        s += &format!("  %ps{k} = splat %{p} : {t}xptr<f32>>\n");
        s += &format!("  %pp{k} = addptr %ps{k}, {} : {t}xptr<f32>>\n", order(rng));
        if k == 0 {
            s += &format!("  %x{k} = load %pp{k} : {t}xf32>\n");
        } else {
            // A masked load: elements at flat offsets >= k read 0.5.
            s += &format!("  %ks = splat %k : {t}xi32>\n  %mask = cmp {{pred = lt}} %rowmajor, %ks : {t}xi1>\n");
            s += &format!("  %half = constant {{value = 0.5}} : f32\n  %other = splat %half : {t}xf32>\n");
            s += &format!("  %x{k} = load %pp{k}, %mask, %other : {t}xf32>\n");
        }
        pool.push(format!("%x{k}"));
    }
    for step in 0..3 + rng.below(6) {
        let pick = |rng: &mut Rng, pool: &Vec<String>| pool[rng.below(pool.len() as u64) as usize].clone();
        let (a, b) = (pick(rng, &pool), pick(rng, &pool));
        let v = format!("%v{step}");
        match rng.below(9) {
            0 | 1 => {
                let op = ["add", "mul", "max", "sub"][rng.below(4) as usize];
                s += &format!("  {v} = {op} {a}, {b} : {t}xf32>\n");
            }
            2 => {
                let axis = rng.below(2);
                let (red, exp) = if axis == 0 { (n, format!("1x{n}")) } else { (m, format!("{m}x1")) };
                s += &format!("  {v}r = reduce {{axis = {axis}}} {a} : tensor<{red}xf32> {{\n");
                s += &format!("  ^(%p{step}: f32, %q{step}: f32):\n    %s{step} = add %p{step}, %q{step} : f32\n");
                s += &format!("    yield %s{step}\n  }}\n");
                s += &format!("  {v}e = expand_dims {{axis = {axis}}} {v}r : tensor<{exp}xf32>\n");
                s += &format!("  {v}b = broadcast {v}e : {t}xf32>\n");
                s += &format!("  {v} = sub {b}, {v}b : {t}xf32>\n");
            }
            3 if m == n => {
                s += &format!("  {v} = permute {{order = [1, 0]}} {a} : {t}xf32>\n");
            }
            4 => {
                s += &format!(
                    "  %lb{step} = constant {{value = 0}} : i32\n  %ub{step} = constant {{value = 3}} : i32\n"
                );
                s += &format!("  %st{step} = constant {{value = 1}} : i32\n");
                s += &format!("  {v} = for %lb{step}, %ub{step}, %st{step}, {a} : {t}xf32> {{\n");
                s += &format!("  ^(%it{step}: i32, %acc{step}: {t}xf32>):\n");
                s += &format!("    %n{step} = add %acc{step}, {b} : {t}xf32>\n    yield %n{step}\n  }}\n");
            }
            5 => {
                s += &format!("  {v}f = reshape {a} : tensor<{}xf32>\n", m * n);
                s += &format!("  {v} = reshape {v}f : {t}xf32>\n");
            }
            6 => {
                s += &format!("  {v}j = join {a}, {b} : {t}x2xf32>\n");
                s += &format!("  {v}l, {v}h = split {v}j : {t}xf32>, {t}xf32>\n");
                s += &format!("  {v} = sub {v}l, {v}h : {t}xf32>\n");
            }
            7 => {
                s += &format!("  %c{step} = cmp {{pred = lt}} %k, %cn : i1\n");
                s += &format!("  {v} = if %c{step} : {t}xf32> {{\n    yield {a}\n  }} else {{\n    yield {b}\n  }}\n");
            }
            _ => {
                s += &format!("  {v} = abs {a} : {t}xf32>\n");
            }
        }
        pool.push(v);
    }
    s += &format!("  %pso = splat %o : {t}xptr<f32>>\n");
    s += &format!("  %ppo = addptr %pso, {} : {t}xptr<f32>>\n", order(rng));
    s += &format!("  store %ppo, {}\n  return\n}}\n", pool.last().unwrap());
    s
}

#[test]
fn random_kernels_compute_the_same_with_layouts() {
    let cases: u64 = std::env::var("LAYOUT_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(48);
    let mut rng = Rng::new(0x5eed_1a70);
    let (mut converted, mut ok) = (0, 0);
    for _ in 0..cases {
        let src = random_kernel(&mut rng);
        let (c, k) = check_unchanged(&src, 0..2);
        converted += (c > 0) as u64;
        ok += k as u64;
    }
    // The generator must exercise conflicting layouts, and the kernels must run.
    assert!(converted * 4 >= cases, "only {converted} of {cases} kernels needed a conversion");
    assert_eq!(ok, 2 * cases, "every generated kernel runs without error");
}
