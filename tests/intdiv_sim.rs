//! Integer `//` and `%` by a constant power of two (codegen's `lower/intdiv.rs`: shifts and masks instead of
//! ptxas's general division), run on the PTX simulator of `ptx_sim` against the interpreter, on
//! fresh random dividends of both signs plus the extremes, outputs poisoned first.

mod common;
mod sim_common;

use common::{c, int, ptr};
use sim_common::{RunOptions, V};
use tessel::lang::elab::{ArgSpec, Specialization};
use tessel::pipeline::{Output, Stage};
use tessel::tile::ScalarType::{self, I32, I64, U32};
use tessel::tile::{KernelConfig, Target};

const KERNELS: &str = r#"import triton
import triton.language as tl


@triton.jit
def divmod_pow2(Q, R, N, X, K, BLOCK: tl.constexpr, D: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(X + offs)
    tl.store(Q + offs, x // D)
    tl.store(R + offs, x % D)
    # A scalar, as in a matmul's `tl.cdiv(K, BLOCK_K)` trip count.
    n = tl.cdiv(K, D) + K % D
    tl.store(N + offs, tl.full((BLOCK,), 0, tl.int32) + n)
"#;

fn opts() -> RunOptions<'static> {
    RunOptions { file: "test.py", target: Target::Sm90a, num_warps: 4, num_stages: 3, poison: true }
}

fn spec(t: ScalarType, block: i64, d: i64) -> Vec<ArgSpec> {
    vec![ptr(t), ptr(t), ptr(I32), ptr(t), int(false), c(block), c(d)]
}

fn ptx(t: ScalarType, block: i64, d: i64) -> String {
    let spec = Specialization::with_config(spec(t, block, d), KernelConfig::DEFAULT);
    let ks =
        tessel::KernelSource { file: "test.py", source: KERNELS, kernel: "divmod_pow2", spec: &spec, module: None };
    match tessel::pipeline::run(&ks, Target::Sm90a, Stage::Ptx, None, &mut Default::default()) {
        Ok(Output::Ptx { kernel, .. }) => kernel.ptx,
        Ok(_) => panic!("not PTX"),
        Err(e) => panic!("divmod_pow2 ({t}, D={d}) does not compile: {e}"),
    }
}

/// A small xorshift generator, seeded from the clock so each run sees new dividends (the seed is printed).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// `n` dividends of type `t` as f64 (exact: 64-bit values stay within ±2^53, plus i64::MIN): the extremes and
/// the values around multiples of `d` first, then random ones of every magnitude and both signs.
fn dividends(t: ScalarType, n: usize, d: i64, rng: &mut Rng) -> Vec<f64> {
    let (lo, hi): (i64, i64) = match t {
        I32 => (i32::MIN.into(), i32::MAX.into()),
        U32 => (0, u32::MAX.into()),
        _ => (-(1 << 53), 1 << 53),
    };
    let mut v: Vec<i64> = vec![lo, hi, 0, 1, -1, d, -d, d - 1, 1 - d, d + 1, -d - 1, 2 * d - 1, -2 * d + 1];
    if t == I64 {
        v.push(i64::MIN);
    }
    while v.len() < n {
        let bits = rng.next() % 64;
        let x = (rng.next() >> (63 - bits.min(62))) as i64;
        v.push(if rng.next() % 2 == 0 { x } else { -x });
    }
    v.into_iter().take(n).map(|x| if x == i64::MIN { x } else { x.clamp(lo, hi) } as f64).collect()
}

#[test]
fn division_by_powers_of_two_matches_the_interpreter() {
    let seed = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64 | 1;
    let mut rng = Rng(seed);
    let block = 256usize;
    for t in [I32, U32, I64] {
        for d in [2i64, 32, 128, 1 << 20, 1 << 30] {
            let code = ptx(t, block as i64, d);
            let division =
                code.lines().any(|l| l.trim_start().starts_with("div.") || l.trim_start().starts_with("rem."));
            assert!(!division, "{t} // {d}: the PTX still divides:\n{code}");
            let x = dividends(t, block, d, &mut rng);
            let k = (rng.next() % 100_000) as i64 - 50_000;
            let vals = [V::Out(t, block), V::Out(t, block), V::Out(I32, block), V::Buf(t, x.clone()), V::Int(k)];
            let outs = sim_common::run_on(KERNELS, "divmod_pow2", spec(t, block as i64, d), &opts(), &vals, [1, 1, 1])
                .unwrap_or_else(|e| panic!("{e}"));
            for ((sim, interp), what) in outs.iter().zip(["x // D", "x % D", "cdiv(K, D) + K % D"]) {
                assert_eq!(sim, interp, "{t}, D = {d}, {what}, K = {k} (seed {seed}): simulated PTX vs interpreter");
            }
            // And against the definition: division rounds toward zero, the remainder takes the dividend's sign.
            for (i, &xi) in x.iter().enumerate() {
                let xi = xi as i128;
                let (q, r) = (xi / i128::from(d), xi % i128::from(d));
                assert_eq!((outs[0].1[i] as i128, outs[1].1[i] as i128), (q, r), "{t}: {xi} divmod {d} (seed {seed})");
            }
        }
    }
}
