//! Shared by the simulator tests (examples, language constructs) and the differential tests: compile a kernel
//! source to PTX, run it on the PTX simulator of `ptx_sim` and in the interpreter on the same
//! inputs.
#![allow(dead_code)]

pub use tessel_ptx_sim as ptx_sim;
pub mod scaled;

use tessel::lang::elab::{ArgSpec, Specialization};
use tessel::pipeline::{Output, Stage};
use tessel::tile::ScalarType;
use tessel::tile::{KernelConfig, Target};
use tessel_interp::memory::Memory;
use tessel_interp::{Arg, Limits, MmaOrder, run, run_with_limits};
use tessel_tile::eval::value::from_bits;

/// A runtime argument of both sides: an input buffer, an output buffer of `len` elements, an integer, an f32, or
/// a tensor descriptor (`ArgSpec::TensorDesc`) over a row-major buffer of `shape`: an input of `data`, or (`None`)
/// an output, poisoned like `Out`.
pub enum V {
    Buf(ScalarType, Vec<f64>),
    Out(ScalarType, usize),
    Int(i64),
    F32(f32),
    Desc(ScalarType, Option<Vec<f64>>, Vec<u32>),
    /// A descriptor over an input buffer the kernel also writes (a TMA scatter's), compared after the run.
    DescInOut(ScalarType, Vec<f64>, Vec<u32>),
    /// An input buffer the kernel also writes (a lock, a counter), returned after the run as an output is.
    InOut(ScalarType, Vec<f64>),
    /// An im2col descriptor (`ArgSpec::TensorDescIm2col`) over an input buffer of `shape` (`[N, spatial..., C]`,
    /// row-major): the pixel box's lower and upper corners (spatial dims outermost first) and the element
    /// (traversal) strides, one per dim, as `TensorDescriptorIm2Col.from_tensor` takes them.
    Im2col {
        elem: ScalarType,
        data: Vec<f64>,
        shape: Vec<u32>,
        lower: Vec<i32>,
        upper: Vec<i32>,
        strides: Vec<u32>,
    },
}

/// How [`run_on`] compiles and what output buffers start as.
pub struct RunOptions<'a> {
    /// The file name diagnostics and `device_assert` report.
    pub file: &'a str,
    pub target: Target,
    pub num_warps: u32,
    pub num_stages: u32,
    /// Outputs start as NaN (floats) or -1 (integers) in the interpreter and as 0xFF bytes in the simulator, so
    /// an element nobody writes shows up; otherwise both start as -7.0, so untouched elements compare equal.
    pub poison: bool,
}

fn decode(bytes: &[u8], t: ScalarType) -> Vec<f64> {
    let w = t.bytes() as usize;
    bytes
        .chunks(w)
        .map(|ch| {
            let mut x = [0u8; 8];
            x[..w].copy_from_slice(ch);
            from_bits(u64::from_le_bytes(x), t).as_f64()
        })
        .collect()
}

/// Compiles `kernel` of `source` for sm_90a, runs it on the simulator and in the interpreter over `grid`;
/// asserts the outputs are equal (bit for bit, as decoded values) and returns them.
pub fn same_on_both(source: &str, kernel: &str, spec: Vec<ArgSpec>, vals: &[V], grid: [u32; 3]) -> Vec<Vec<f64>> {
    let source = format!("import triton\nimport triton.language as tl\n\n{source}");
    let both = run_both(&source, kernel, spec, 4, vals, grid).unwrap_or_else(|e| panic!("{e}"));
    both.into_iter()
        .map(|(got, want)| {
            assert_eq!(got, want, "{kernel}: simulated PTX vs interpreter");
            want
        })
        .collect()
}

/// One output buffer: its simulated values, then the interpreter's.
pub type SimAndInterp = (Vec<f64>, Vec<f64>);

/// Compiles `kernel` of `source` (a whole module) for sm_90a with `num_warps`, runs it on the simulator and in
/// the interpreter over `grid`; returns (simulated, interpreted) values of each output buffer.
pub fn run_both(
    source: &str,
    kernel: &str,
    spec: Vec<ArgSpec>,
    num_warps: u32,
    vals: &[V],
    grid: [u32; 3],
) -> Result<Vec<SimAndInterp>, String> {
    let opts = RunOptions { file: "test.py", target: Target::Sm90a, num_warps, num_stages: 3, poison: false };
    run_on(source, kernel, spec, &opts, vals, grid)
}

/// [`run_both`] with the target, stages, file name and output poisoning given.
pub fn run_on(
    source: &str,
    kernel: &str,
    spec: Vec<ArgSpec>,
    opts: &RunOptions,
    vals: &[V],
    grid: [u32; 3],
) -> Result<Vec<SimAndInterp>, String> {
    run_on_ctas(source, kernel, spec, opts, 1, vals, grid)
}

/// [`run_on`] for a kernel whose programs are clusters of `num_ctas` CTAs (`grid` counts programs).
pub fn run_on_ctas(
    source: &str,
    kernel: &str,
    spec: Vec<ArgSpec>,
    opts: &RunOptions,
    num_ctas: u32,
    vals: &[V],
    grid: [u32; 3],
) -> Result<Vec<SimAndInterp>, String> {
    run_on_ctas_ordered(source, kernel, spec, opts, num_ctas, vals, grid, MmaOrder::Isa)
}

/// [`run_on_ctas`] with the interpreter holding the kernel's tcgen05 ops to `order` (`MmaOrder::Issue` for a
/// kernel that relies on the tensor cores running one thread's MMAs in issue order, which the simulator does).
#[allow(clippy::too_many_arguments, dead_code)]
pub fn run_on_ctas_ordered(
    source: &str,
    kernel: &str,
    spec: Vec<ArgSpec>,
    opts: &RunOptions,
    num_ctas: u32,
    vals: &[V],
    grid: [u32; 3],
    order: MmaOrder,
) -> Result<Vec<SimAndInterp>, String> {
    let mut s = simulate(source, kernel, spec, opts, num_ctas, vals, grid)?;
    let limits = Limits { mma_order: order, ..Limits::default() };
    run_with_limits(&s.func, &s.iargs, grid, &mut s.mem, limits).map_err(|e| format!("{kernel}: interpreter: {e}"))?;
    Ok(s.outs
        .into_iter()
        .map(|(id, addr, t)| (decode(s.global.bytes(addr), t), decode(&s.mem.buffer(id).bytes, t)))
        .collect())
}

/// Compiles `kernel` and runs it on the simulator only (for PTX the interpreter cannot run: inline asm);
/// returns each output buffer's simulated values.
pub fn sim_only(
    source: &str,
    kernel: &str,
    spec: Vec<ArgSpec>,
    opts: &RunOptions,
    vals: &[V],
    grid: [u32; 3],
) -> Result<Vec<Vec<f64>>, String> {
    let s = simulate(source, kernel, spec, opts, 1, vals, grid)?;
    Ok(s.outs.into_iter().map(|(_, addr, t)| decode(s.global.bytes(addr), t)).collect())
}

/// A simulated run, with the interpreter's side prepared on the same inputs.
struct Simulated {
    func: tessel::tile::Func,
    mem: Memory,
    iargs: Vec<Arg>,
    global: ptx_sim::Global,
    /// Each output buffer: the interpreter's id, the simulator's address, its type.
    outs: Vec<(tessel_interp::memory::BufferId, u64, ScalarType)>,
}

fn simulate(
    source: &str,
    kernel: &str,
    spec: Vec<ArgSpec>,
    opts: &RunOptions,
    num_ctas: u32,
    vals: &[V],
    grid: [u32; 3],
) -> Result<Simulated, String> {
    simulate_edited(source, kernel, spec, opts, num_ctas, vals, grid, &|p| p.to_string())
}

/// `ptx` with the `n`-th `mbarrier.try_wait.parity` after the first `from` answering true at once (its predicate
/// set instead): a broken variant for the simulator to refuse.
pub fn skip_wait(ptx: &str, from: &str, n: usize) -> String {
    let start = ptx.find(from).unwrap_or_else(|| panic!("no {from}"));
    let at = start + ptx[start..].match_indices("mbarrier.try_wait.parity").nth(n).expect("a wait").0;
    let end = at + ptx[at..].find('\n').unwrap();
    let p = ptx[at..end].split_whitespace().nth(1).unwrap().trim_end_matches(',');
    format!("{}setp.eq.u32 {p}, 1, 1;{}", &ptx[..at], &ptx[end..])
}

/// Compiles `kernel` and runs `edit` of its PTX on the simulator alone (a test breaking the PTX on purpose, to
/// see the simulator refuse it); returns the simulator's error.
#[allow(dead_code)] // for the tests that break PTX
pub fn simulate_broken(
    source: &str,
    kernel: &str,
    spec: Vec<ArgSpec>,
    opts: &RunOptions,
    vals: &[V],
    grid: [u32; 3],
    edit: &dyn Fn(&str) -> String,
) -> Result<(), String> {
    simulate_broken_on_ctas(source, kernel, spec, opts, 1, vals, grid, edit)
}

/// [`simulate_broken`] for a kernel whose programs are clusters of `num_ctas` CTAs.
#[allow(dead_code)] // for the tests that break PTX
#[allow(clippy::too_many_arguments)]
pub fn simulate_broken_on_ctas(
    source: &str,
    kernel: &str,
    spec: Vec<ArgSpec>,
    opts: &RunOptions,
    num_ctas: u32,
    vals: &[V],
    grid: [u32; 3],
    edit: &dyn Fn(&str) -> String,
) -> Result<(), String> {
    simulate_edited(source, kernel, spec, opts, num_ctas, vals, grid, edit).map(|_| ())
}

/// [`run_on`] with `edit` applied to the PTX before the simulator runs it (a test breaking the PTX on purpose, to
/// see the comparison with the interpreter catch it).
#[allow(dead_code)] // for the tests that break PTX
pub fn run_edited(
    source: &str,
    kernel: &str,
    spec: Vec<ArgSpec>,
    opts: &RunOptions,
    vals: &[V],
    grid: [u32; 3],
    edit: &dyn Fn(&str) -> String,
) -> Result<Vec<SimAndInterp>, String> {
    let mut s = simulate_edited(source, kernel, spec, opts, 1, vals, grid, edit)?;
    run(&s.func, &s.iargs, grid, &mut s.mem).map_err(|e| format!("{kernel}: interpreter: {e}"))?;
    Ok(s.outs
        .into_iter()
        .map(|(id, addr, t)| (decode(s.global.bytes(addr), t), decode(&s.mem.buffer(id).bytes, t)))
        .collect())
}

#[allow(clippy::too_many_arguments)]
fn simulate_edited(
    source: &str,
    kernel: &str,
    spec: Vec<ArgSpec>,
    opts: &RunOptions,
    num_ctas: u32,
    vals: &[V],
    grid: [u32; 3],
    edit: &dyn Fn(&str) -> String,
) -> Result<Simulated, String> {
    let spec = Specialization::with_config(
        spec,
        KernelConfig { num_warps: opts.num_warps, num_stages: opts.num_stages, num_ctas, ..KernelConfig::DEFAULT },
    );
    let ks = tessel::KernelSource { file: opts.file, source, kernel, spec: &spec, module: None };
    let k = match tessel::pipeline::run(&ks, opts.target, Stage::Ptx, None, &mut Default::default()) {
        Ok(Output::Ptx { kernel: k, func }) => (k, func),
        Ok(_) => return Err(format!("{kernel}: not PTX")),
        Err(e) => return Err(format!("{kernel} does not compile to PTX: {e}")),
    };
    let (k, func) = k;
    let prog =
        ptx_sim::Program::parse(&edit(&k.ptx)).map_err(|e| format!("{kernel}: PTX the simulator cannot parse: {e}"))?;
    let (mut mem, mut global) = (Memory::new(), ptx_sim::Global::default());
    let (mut iargs, mut sargs, mut outs) = (Vec::new(), Vec::new(), Vec::new());
    for (i, v) in vals.iter().enumerate() {
        match v {
            V::Buf(t, data) | V::InOut(t, data) => {
                let id = mem.alloc_from(format!("a{i}"), *t, data);
                sargs.push(global.alloc(mem.buffer(id).bytes.clone()));
                iargs.push(Arg::Buffer(id));
                if matches!(v, V::InOut(..)) {
                    outs.push((id, *sargs.last().unwrap(), *t));
                }
            }
            V::Out(t, n) => {
                let start = match (opts.poison, t.is_float()) {
                    (true, true) => f64::NAN,
                    (true, false) => -1.0,
                    (false, _) => -7.0,
                };
                let id = mem.alloc_from(format!("a{i}"), *t, &vec![start; *n]);
                let bytes =
                    if opts.poison { vec![0xFF; mem.buffer(id).bytes.len()] } else { mem.buffer(id).bytes.clone() };
                sargs.push(global.alloc(bytes));
                iargs.push(Arg::Buffer(id));
                outs.push((id, *sargs.last().unwrap(), *t));
            }
            V::Int(x) => {
                sargs.push(*x as u64);
                iargs.push(Arg::Int(*x));
            }
            V::F32(x) => {
                sargs.push(x.to_bits() as u64);
                iargs.push(Arg::Float(*x as f64));
            }
            V::Desc(..) | V::DescInOut(..) => {
                let (t, data, shape, output) = match v {
                    V::Desc(t, data, shape) => (t, data.as_deref(), shape, data.is_none()),
                    V::DescInOut(t, data, shape) => (t, Some(data.as_slice()), shape, true),
                    _ => unreachable!(),
                };
                // Base, dims, element strides: the interpreter's descriptor and the kernel's parameters.
                let n = shape.iter().map(|&d| d as usize).product();
                let id = match data {
                    Some(d) => mem.alloc_from(format!("a{i}"), *t, d),
                    None => {
                        let start = if opts.poison { f64::NAN } else { -7.0 };
                        mem.alloc_from(format!("a{i}"), *t, &vec![start; n])
                    }
                };
                let bytes = match data {
                    None if opts.poison => vec![0xFF; mem.buffer(id).bytes.len()],
                    _ => mem.buffer(id).bytes.clone(),
                };
                sargs.push(global.alloc(bytes));
                iargs.push(Arg::Buffer(id));
                if output {
                    outs.push((id, *sargs.last().unwrap(), *t));
                }
                let strides: Vec<u64> =
                    (0..shape.len()).map(|d| shape[d + 1..].iter().map(|&x| x as u64).product()).collect();
                for &d in shape {
                    iargs.push(Arg::Int(d as i64));
                    sargs.push(d as u64);
                }
                for &st in &strides {
                    iargs.push(Arg::Int(st as i64));
                    sargs.push(st);
                }
            }
            V::Im2col { elem, data, shape, lower, upper, strides: element_strides } => {
                // Base, dims, strides in elements, then the corners and the traversal strides.
                let id = mem.alloc_from(format!("a{i}"), *elem, data);
                sargs.push(global.alloc(mem.buffer(id).bytes.clone()));
                iargs.push(Arg::Buffer(id));
                let strides = (0..shape.len()).map(|d| shape[d + 1..].iter().map(|&x| x as i64).product::<i64>());
                let ints = shape.iter().map(|&d| d as i64).chain(strides);
                let ints = ints.chain(lower.iter().chain(upper).map(|&c| c as i64));
                for x in ints.chain(element_strides.iter().map(|&e| e as i64)) {
                    iargs.push(Arg::Int(x));
                    sargs.push(x as u64);
                }
            }
        }
    }
    // The tensor maps the launch encodes, after the arguments: from each descriptor's values and the box and
    // swizzle of its block (`tile::tma::block`, the rule the runtime encodes with).
    for m in &k.tensor_maps {
        let b = m.base_arg.ok_or("a tensor map the kernel makes is not simulated")? as usize;
        let block = tessel::tile::tma::block_in(m.elem, &m.block_shape, m.layout.as_ref())
            .map_err(|e| format!("{kernel}: {e:?}"))?;
        let eb = m.elem.bytes() as u64;
        if m.nan_padding {
            return Err(format!("{kernel}: NaN-padded tensor maps are not simulated"));
        }
        if let Some(r) = m.im2col_rank {
            // cuTensorMapEncodeIm2col as the runtime calls it: the box is one block's pixels (Pixels-per-Column)
            // by one box's channels (Channels-per-Pixel); the corners and traversal strides follow the strides.
            let (r, s) = (r as usize, r as usize - 2);
            let int = |i: usize| sargs[i] as i64 as i32;
            let map = ptx_sim::Im2colMap {
                base: sargs[b],
                elem_bytes: m.elem.bytes(),
                dims: sargs[b + 1..b + 1 + r].to_vec(),
                strides: sargs[b + 1 + r..b + 1 + 2 * r].iter().map(|&x| x * eb).collect(),
                lower: (b + 1 + 2 * r..b + 1 + 2 * r + s).map(int).collect(),
                upper: (b + 1 + 2 * r + s..b + 1 + 2 * r + 2 * s).map(int).collect(),
                channels_per_pixel: block.box_dims[1],
                pixels_per_column: block.box_dims[0],
                element_strides: (b + 1 + 2 * r + 2 * s..b + 1 + 3 * r + 2 * s).map(|i| int(i) as u32).collect(),
                swizzle: block.layout.swizzle_byte_width,
            };
            let at = global.map_im2col(map);
            sargs.push(at);
            continue;
        }
        let r = m.block_shape.len();
        // An fp4_padded block is encoded as the runtime does (16U4_ALIGN16B): the innermost dim and box in 4-bit
        // elements.
        let padded = m.layout.as_ref().is_some_and(|l| l.fp4_padded);
        let mut dims = sargs[b + 1..b + 1 + r].to_vec();
        let mut box_dims = block.box_dims.clone();
        if padded {
            dims[r - 1] *= 2;
            box_dims[r - 1] *= 2;
        }
        let map = ptx_sim::TensorMap {
            base: sargs[b],
            elem_bytes: m.elem.bytes(),
            dims,
            strides: sargs[b + 1 + r..b + 1 + 2 * r].iter().map(|&x| x * eb).collect(),
            box_dims,
            swizzle: block.layout.swizzle_byte_width,
            fp4_padded: padded,
        };
        let at = global.map(map);
        sargs.push(at);
    }
    ptx_sim::run_clusters(&prog, &mut global, &sargs, grid, k.num_warps * 32, k.shared_bytes, k.num_ctas)
        .map_err(|e| format!("{kernel}: simulator: {e}"))?;
    Ok(Simulated { func, mem, iargs, global, outs })
}

/// The source of a public tutorial (`name`) from the directory the environment variable `var` names, with its
/// path for diagnostics; `None`, with a note, when `var` is unset (the tutorials are not in this repository).
pub fn tutorial(var: &str, name: &str) -> Option<(String, String)> {
    let Some(dir) = std::env::var_os(var) else {
        eprintln!("note: {var} is not set; {name} is not simulated");
        return None;
    };
    let path = std::path::Path::new(&dir).join(name);
    let src = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    Some((path.display().to_string(), src))
}

/// An `m x n x k` fp16 product through tensor descriptors, fresh random inputs from `seed`: the descriptors of A
/// (`m x k`), B (`k x n`) and C (poisoned), and the float64 product `A @ B` (row-major).
pub fn fp16_matmul_descs(m: usize, n: usize, k: usize, seed: u64) -> ([V; 3], Vec<f64>) {
    let f16 = ScalarType::F16;
    let random = |len: usize, s: u64| tessel::tile::testing::vec_of(&mut tessel_math::testing::Rng::new(s), len, f16);
    let (a, b) = (random(m * k, seed), random(k * n, seed + 1));
    let want = (0..m * n).map(|i| (0..k).map(|j| a[i / n * k + j] * b[j * n + i % n]).sum()).collect();
    let descs = [
        V::Desc(f16, Some(a), vec![m as u32, k as u32]),
        V::Desc(f16, Some(b), vec![k as u32, n as u32]),
        V::Desc(f16, None, vec![m as u32, n as u32]),
    ];
    (descs, want)
}

/// An fp16 product's output on the simulator (`sim`) and in the interpreter: equal bit for bit (`ulp`: false), or
/// within one fp16 ulp (`ulp`: true, for wgmma, whose sums run in another order than the interpreter's); and the
/// interpreter's within half an fp16 ulp and the f32 sums' rounding of the float64 product `want`.
pub fn check_fp16_product(what: &str, sim: &[f64], interp: &[f64], want: &[f64], ulp: bool) {
    for (j, ((&got, &r), &w)) in sim.iter().zip(interp).zip(want).enumerate() {
        let same = if ulp {
            got.is_finite() && (got - r).abs() <= r.abs() / 1024.0 + 1e-7
        } else {
            got.to_bits() == r.to_bits()
        };
        assert!(same, "{what}: C[{j}] = {got} on the simulator, {r} in the interpreter");
        assert!((r - w).abs() <= 1e-3 * w.abs() + 2e-3, "{what}: C[{j}] = {r}, float64 {w}");
    }
}

/// Whether `err` is the interpreter refusing, under the ISA's issue order, a `tcgen05_copy` of A's scales over
/// tensor-memory cells an earlier block-scaled MMA still in flight reads (tutorial 11, example 04).
pub fn refuses_scale_copy_over_mma(err: &str) -> bool {
    err.contains("interpreter")
        && err.contains(
            "the tcgen05_copy into `a_scale_tmem` writes tensor-memory cells that the earlier tcgen05_mma_scaled into",
        )
        && err.contains("still in flight, reads")
}
