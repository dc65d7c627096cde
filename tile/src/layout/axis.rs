//! Axis analysis: for every integer, boolean and pointer value and every dim, what is known about runs of
//! elements along that dim (Triton's AxisInfo):
//!
//! - **contiguity** `c`: the dim splits into aligned groups of `c` elements (positions `[k*c, (k+1)*c)`), and
//!   within a group consecutive elements differ by 1 (pointers: by one element);
//! - **divisibility** `d`: the first element of every contiguity group is a multiple of `d` (pointers: `d` is
//!   in bytes), a power of two (`MAX_DIVISIBILITY` for 0);
//! - **constancy** `k`: the dim splits into aligned groups of `k` equal elements.
//!
//! Scalars have one dim of size 1. The transfer functions follow Triton's (`arange`, `splat`, constants,
//! `add`/`sub`/`mul`, division and remainder by constants, shifts, `addptr`, comparisons, `select`,
//! `broadcast`, `expand_dims`, `permute`, unit-dim reshapes, hints) with one refinement: when a result's runs
//! are shorter than an operand's, the operand's divisibility is taken at the result's granularity, so
//! `arange + arange` (stride 2) does not claim the divisibility of the run starts for every element. Loop-carried
//! values are the fixed point of joining (per dim, the gcd) the initial value with what the body yields.
//!
//! Kernel arguments: [`crate::FuncAttrs::divisible_by_16`] (`divisible_by_16 = [i, ...]` in the text) lists the
//! arguments known to be multiples of 16 (pointers: 16-byte aligned), Triton's `tt.divisibility = 16`
//! specialization (the elaborator marks them with a `multiple_of [16]` at entry instead). Other arguments are
//! known to nothing.

use crate::ir::{Func, OpId, RegionId, ValueId};
use crate::ops::{BinOp, CmpPred, Const, Op};
use crate::types::{Elem, Type};

/// The divisibility of 0: every power of two divides it.
pub const MAX_DIVISIBILITY: u64 = 1 << 62;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AxisInfo {
    pub contiguity: Vec<u64>,
    pub divisibility: Vec<u64>,
    pub constancy: Vec<u64>,
    /// The value of every element, when known.
    pub constant: Option<i64>,
}

impl AxisInfo {
    fn unknown(rank: usize) -> AxisInfo {
        AxisInfo { contiguity: vec![1; rank], divisibility: vec![1; rank], constancy: vec![1; rank], constant: None }
    }

    fn constant(shape: &[u64], c: i64) -> AxisInfo {
        AxisInfo {
            contiguity: vec![1; shape.len()],
            divisibility: vec![pow2_div(c); shape.len()],
            constancy: shape.to_vec(),
            constant: Some(c),
        }
    }

    fn rank(&self) -> usize {
        self.contiguity.len()
    }

    /// What holds for both (at a control-flow merge).
    fn join(&self, o: &AxisInfo) -> AxisInfo {
        let m = |a: &[u64], b: &[u64]| a.iter().zip(b).map(|(&x, &y)| gcd(x, y)).collect();
        AxisInfo {
            contiguity: m(&self.contiguity, &o.contiguity),
            divisibility: m(&self.divisibility, &o.divisibility),
            constancy: m(&self.constancy, &o.constancy),
            constant: if self.constant == o.constant { self.constant } else { None },
        }
    }

    /// Divisibility of the first element of each aligned group of `c` elements along `d`.
    fn div_at(&self, d: usize, c: u64) -> u64 {
        if self.contiguity[d] > c { self.divisibility[d].min(c) } else { self.divisibility[d] }
    }
}

/// The largest power of two dividing `c` (`MAX_DIVISIBILITY` for 0).
pub fn pow2_div(c: i64) -> u64 {
    if c == 0 { MAX_DIVISIBILITY } else { (1u64 << c.unsigned_abs().trailing_zeros()).min(MAX_DIVISIBILITY) }
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { gcd(b, a % b) }
}

fn mul_div(a: u64, b: u64) -> u64 {
    a.saturating_mul(b).min(MAX_DIVISIBILITY)
}

/// The analysis result: one entry per value (`None` for floats and descriptors).
#[derive(Clone, Debug, Default)]
pub struct AxisAnalysis {
    info: Vec<Option<AxisInfo>>,
}

impl AxisAnalysis {
    pub fn get(&self, v: ValueId) -> Option<&AxisInfo> {
        self.info.get(v.index()).and_then(Option::as_ref)
    }

    /// How many consecutive elements along `dim` a mask keeps or drops together: the most lanes of one vector
    /// access the mask lets through unsplit (Triton checks this when it vectorizes a masked access).
    pub fn mask_alignment(&self, mask: ValueId, dim: usize) -> u64 {
        self.get(mask).map_or(1, |i| i.constancy[dim])
    }

    /// Elements one thread moves per vector access of the memory op on `ptr` (with optional `mask`), as codegen
    /// vectorizes it: the run of consecutive elements along one dim that the pointers' layout gives a thread's
    /// registers, bounded by the pointers' contiguity and alignment, the mask's constancy and 16 bytes; a power of
    /// two. `eb` is the element size in bytes. The pipeliner asks it whether `cp.async` (4, 8 or 16 bytes) can
    /// copy a load.
    pub fn access_width(&self, f: &Func, ptr: ValueId, mask: Option<ValueId>, eb: u32) -> u32 {
        let Type::Tensor { layout: Some(layout), .. } = f.ty(ptr) else { return 1 };
        let (d, run) = register_run(&layout.linear);
        let Some(info) = self.get(ptr) else { return 1 };
        let mut v = (run as u64).min(info.contiguity[d]).min(info.divisibility[d] / eb as u64).min((16 / eb) as u64);
        if let Some(m) = mask {
            v = v.min(self.mask_alignment(m, d));
        }
        let v = v.max(1);
        1 << (63 - v.leading_zeros())
    }
}

/// The dim along which a thread's first registers walk and how many consecutive elements they cover: registers
/// `0..run` hold elements `0..run` along `dim` (and no other register, lane or warp base lands inside that run).
pub fn register_run(lin: &tessel_layouts::LinearLayout) -> (usize, u32) {
    let bases = |name: &str| -> Vec<Vec<u32>> {
        if lin.has_in_dim(name) { lin.bases(name).iter().map(|b| b.to_vec()).collect() } else { Vec::new() }
    };
    let regs = bases("register");
    let Some(first) = regs.first() else { return (0, 1) };
    let Some(d) = first.iter().position(|&x| x == 1) else { return (0, 1) };
    if first.iter().enumerate().any(|(i, &x)| i != d && x != 0) {
        return (0, 1);
    }
    let mut k = 0;
    while k < regs.len() && regs[k].iter().enumerate().all(|(i, &x)| if i == d { x == 1 << k } else { x == 0 }) {
        k += 1;
    }
    let others: u32 = regs[k..].iter().chain(&bases("lane")).chain(&bases("warp")).fold(0, |a, b| a | b[d]);
    let limit = if others == 0 { 31 } else { others.trailing_zeros() };
    (d, 1 << k.min(limit as usize))
}

/// Runs the analysis over `f`.
pub fn analyze(f: &Func) -> AxisAnalysis {
    let mut a = Analyzer { f, info: vec![None; f.values.len()] };
    for (i, &v) in f.args().iter().enumerate() {
        let mut info = a.unknown_of(v);
        if let Some(info) = info.as_mut()
            && !f.ty(v).is_tensor()
            && f.attrs.divisible_by_16.contains(&(i as u32))
        {
            info.divisibility[0] = 16;
        }
        a.info[v.index()] = info;
    }
    a.region(f.body);
    AxisAnalysis { info: a.info }
}

struct Analyzer<'a> {
    f: &'a Func,
    info: Vec<Option<AxisInfo>>,
}

fn analyzed(t: &Type) -> bool {
    match t.elem() {
        Some(Elem::Ptr(..)) => true,
        Some(Elem::Scalar(s)) => s.is_int(),
        None => false,
    }
}

fn shape64(t: &Type) -> Vec<u64> {
    if t.is_tensor() { t.shape().iter().map(|&d| d as u64).collect() } else { vec![1] }
}

impl Analyzer<'_> {
    fn unknown_of(&self, v: ValueId) -> Option<AxisInfo> {
        let t = self.f.ty(v);
        analyzed(t).then(|| AxisInfo::unknown(shape64(t).len()))
    }

    fn get(&self, v: ValueId) -> Option<AxisInfo> {
        self.info[v.index()].clone()
    }

    fn set(&mut self, v: ValueId, i: Option<AxisInfo>) {
        self.info[v.index()] = if analyzed(self.f.ty(v)) { i.or_else(|| self.unknown_of(v)) } else { None };
    }

    fn region(&mut self, r: RegionId) {
        for o in self.f.region(r).ops.clone() {
            self.op(o);
        }
    }

    fn yields(&self, r: RegionId) -> Vec<Option<AxisInfo>> {
        match self.f.region(r).ops.last() {
            Some(&t) => self.f.op(t).operands.iter().map(|&v| self.get(v)).collect(),
            None => Vec::new(),
        }
    }

    /// Iterates a loop region to a fixed point: `args` start from `init` and are joined with what the loop
    /// feeds back (`feedback`) until nothing changes.
    fn fixpoint(
        &mut self,
        args: &[ValueId],
        init: Vec<Option<AxisInfo>>,
        walk: &mut dyn FnMut(&mut Self) -> Vec<Option<AxisInfo>>,
    ) -> Vec<Option<AxisInfo>> {
        let mut cur = init;
        for round in 0.. {
            for (&a, i) in args.iter().zip(&cur) {
                self.set(a, i.clone());
            }
            let back = walk(self);
            let next: Vec<Option<AxisInfo>> = cur
                .iter()
                .zip(back.iter().chain(std::iter::repeat(&None)))
                .map(|(a, b)| match (a, b) {
                    (Some(a), Some(b)) => Some(a.join(b)),
                    _ => None,
                })
                .collect();
            if next == cur {
                break;
            }
            // Joins only lose facts, so this terminates; the cap guards against a transfer bug.
            cur = if round > 64 {
                next.iter().map(|i| i.as_ref().map(|i| AxisInfo::unknown(i.rank()))).collect()
            } else {
                next
            };
        }
        cur
    }

    fn op(&mut self, o: OpId) {
        let f = self.f;
        let d = f.op(o);
        let ins: Vec<Option<AxisInfo>> = d.operands.iter().map(|&v| self.get(v)).collect();
        let results = d.results.clone();
        match &d.op {
            Op::For(_) => {
                let body = d.regions[0];
                let args = f.region(body).args.clone();
                let (lb, step) = (ins[0].clone(), ins[2].clone());
                let iv_div = match (lb, step) {
                    (Some(l), Some(s)) => gcd(l.divisibility[0], s.divisibility[0]),
                    _ => 1,
                };
                let iv = self.unknown_of(args[0]).map(|mut i| {
                    i.divisibility[0] = iv_div;
                    i
                });
                self.set(args[0], iv);
                let out = self.fixpoint(&args[1..], ins[3..].to_vec(), &mut |s| {
                    s.region(body);
                    s.yields(body)
                });
                for (&r, i) in results.iter().zip(out) {
                    self.set(r, i);
                }
            }
            Op::If => {
                let (t, e) = (d.regions[0], d.regions[1]);
                self.region(t);
                self.region(e);
                let (yt, ye) = (self.yields(t), self.yields(e));
                for (k, &r) in results.iter().enumerate() {
                    let j = match (yt.get(k).cloned().flatten(), ye.get(k).cloned().flatten()) {
                        (Some(a), Some(b)) => Some(a.join(&b)),
                        _ => None,
                    };
                    self.set(r, j);
                }
            }
            Op::While => {
                let (before, after) = (d.regions[0], d.regions[1]);
                let bargs = f.region(before).args.clone();
                let aargs = f.region(after).args.clone();
                let mut cond = Vec::new();
                self.fixpoint(&bargs, ins.clone(), &mut |s| {
                    s.region(before);
                    cond = s.yields(before).get(1..).map(<[_]>::to_vec).unwrap_or_default();
                    for (&a, i) in aargs.iter().zip(&cond) {
                        s.set(a, i.clone());
                    }
                    s.region(after);
                    s.yields(after)
                });
                for (&r, i) in results.iter().zip(cond) {
                    self.set(r, i);
                }
            }
            Op::WarpSpecialize(_) => {
                // The default partition sees the enclosing values; the workers' arguments are the captures.
                for &r in &d.regions[1..] {
                    for (&a, i) in f.region(r).args.clone().iter().zip(&ins) {
                        self.set(a, i.clone());
                    }
                }
                for &r in &d.regions {
                    self.region(r);
                }
                for (&r, i) in results.iter().zip(self.yields(d.regions[0])) {
                    self.set(r, i);
                }
            }
            Op::Reduce { .. } | Op::Scan { .. } => {
                for &r in &d.regions {
                    for a in f.region(r).args.clone() {
                        self.set(a, None);
                    }
                    self.region(r);
                }
                for &r in &results {
                    self.set(r, None);
                }
            }
            _ => {
                let out = self.transfer(o, &ins);
                for &r in &results {
                    self.set(r, out.clone());
                }
            }
        }
    }

    /// The info of a single-result op's result from its operands' infos.
    fn transfer(&self, o: OpId, ins: &[Option<AxisInfo>]) -> Option<AxisInfo> {
        let f = self.f;
        let d = f.op(o);
        let rt = f.ty(*d.results.first()?);
        if !analyzed(rt) {
            return None;
        }
        let shape = shape64(rt);
        let rank = shape.len();
        let all = |v: Option<&AxisInfo>| v.cloned();
        match &d.op {
            Op::Constant(Const::Int(c)) => Some(AxisInfo::constant(&shape, *c)),
            Op::Arange { start, end } => Some(AxisInfo {
                contiguity: vec![(*end - *start) as u64],
                divisibility: vec![pow2_div(*start as i64)],
                constancy: vec![1],
                constant: None,
            }),
            Op::Splat => {
                let s = ins[0].as_ref()?;
                Some(AxisInfo {
                    contiguity: vec![1; rank],
                    divisibility: vec![s.divisibility[0]; rank],
                    constancy: shape.clone(),
                    constant: s.constant,
                })
            }
            Op::Binary { op, .. } => binary(*op, ins[0].as_ref()?, ins[1].as_ref()?, &shape, 1),
            Op::AddPtr => {
                let bytes = rt.elem().map_or(1, |e| match e {
                    Elem::Ptr(s, _) => s.bytes() as u64,
                    Elem::Scalar(_) => 1,
                });
                binary(BinOp::Add, ins[0].as_ref()?, ins[1].as_ref()?, &shape, bytes)
            }
            Op::Cmp(p) => {
                let (a, b) = (ins[0].as_ref()?, ins[1].as_ref()?);
                let mut out = AxisInfo::unknown(rank);
                for k in 0..rank {
                    let mut c = gcd(a.constancy[k], b.constancy[k]);
                    // A run [v, v+m) with m | v against a constant n with m | n is all below n or all not.
                    let run = |x: &AxisInfo, y: &AxisInfo| {
                        x.contiguity[k].min(x.divisibility[k]).min(y.divisibility[k]).min(y.constancy[k])
                    };
                    match p {
                        CmpPred::Lt | CmpPred::Ge if a.contiguity[k] > 1 => c = c.max(run(a, b)),
                        CmpPred::Gt | CmpPred::Le if b.contiguity[k] > 1 => c = c.max(run(b, a)),
                        _ => {}
                    }
                    out.constancy[k] = c;
                }
                Some(out)
            }
            Op::Select => {
                let (c, a, b) = (ins[0].as_ref(), ins[1].as_ref()?, ins[2].as_ref()?);
                match c.and_then(|c| c.constant) {
                    Some(v) => all(Some(if v != 0 { a } else { b })),
                    None => {
                        let c = c?;
                        let mut out = AxisInfo::unknown(rank);
                        for k in 0..rank {
                            let ck = c.constancy[k];
                            out.contiguity[k] = ck.min(a.contiguity[k]).min(b.contiguity[k]);
                            let cr = out.contiguity[k];
                            out.divisibility[k] = a.div_at(k, cr).min(b.div_at(k, cr));
                            out.constancy[k] = ck.min(a.constancy[k]).min(b.constancy[k]);
                        }
                        Some(out)
                    }
                }
            }
            Op::Cast => {
                let from = f.ty(d.operands[0]);
                if analyzed(from) { all(ins[0].as_ref()) } else { None }
            }
            Op::MultipleOf(v) | Op::MaxContiguous(v) | Op::MaxConstancy(v) => {
                let mut i = ins[0].clone()?;
                let field = match &d.op {
                    Op::MultipleOf(_) => &mut i.divisibility,
                    Op::MaxContiguous(_) => &mut i.contiguity,
                    _ => &mut i.constancy,
                };
                for (x, &h) in field.iter_mut().zip(v) {
                    *x = (*x).max(h.max(1) as u64);
                }
                Some(i)
            }
            Op::ConvertLayout => all(ins[0].as_ref()),
            Op::Broadcast => {
                let s = ins[0].as_ref()?;
                let src = shape64(f.ty(d.operands[0]));
                let mut out = s.clone();
                for k in 0..rank {
                    if src[k] == 1 && shape[k] > 1 {
                        out.contiguity[k] = 1;
                        out.constancy[k] = shape[k];
                    }
                }
                Some(out)
            }
            Op::ExpandDims { axis } => {
                let s = ins[0].as_ref()?;
                let new_div = match s.constant {
                    Some(c) => pow2_div(c),
                    None => (0..s.rank())
                        .map(|k| if s.contiguity[k] > 1 { 1 } else { s.divisibility[k] })
                        .fold(MAX_DIVISIBILITY, gcd),
                };
                let mut out = s.clone();
                let a = *axis as usize;
                out.contiguity.insert(a, 1);
                out.divisibility.insert(a, new_div);
                out.constancy.insert(a, 1);
                Some(out)
            }
            Op::Permute { order } => {
                let s = ins[0].as_ref()?;
                let p = |v: &[u64]| order.iter().map(|&k| v[k as usize]).collect();
                Some(AxisInfo {
                    contiguity: p(&s.contiguity),
                    divisibility: p(&s.divisibility),
                    constancy: p(&s.constancy),
                    constant: s.constant,
                })
            }
            Op::Reshape { .. } => {
                let s = ins[0].as_ref()?;
                let src = shape64(f.ty(d.operands[0]));
                reshape(s, &src, &shape)
            }
            _ => None,
        }
    }
}

/// Unit-dim insertions and removals keep the info of the other dims; a whole-tensor constant stays one.
fn reshape(s: &AxisInfo, src: &[u64], dst: &[u64]) -> Option<AxisInfo> {
    let kept_src: Vec<usize> = (0..src.len()).filter(|&k| src[k] != 1).collect();
    let kept_dst: Vec<usize> = (0..dst.len()).filter(|&k| dst[k] != 1).collect();
    let mut out = AxisInfo::unknown(dst.len());
    out.constant = s.constant;
    if kept_src.iter().map(|&k| src[k]).eq(kept_dst.iter().map(|&k| dst[k])) {
        for (&a, &b) in kept_src.iter().zip(&kept_dst) {
            out.contiguity[b] = s.contiguity[a];
            out.divisibility[b] = s.divisibility[a];
            out.constancy[b] = s.constancy[a];
        }
        let div = (0..s.rank()).map(|k| s.div_at(k, 1)).fold(MAX_DIVISIBILITY, gcd);
        for (d, &n) in out.divisibility.iter_mut().zip(dst) {
            if n == 1 {
                *d = div;
            }
        }
        return Some(out);
    }
    if s.constancy.iter().zip(src).all(|(c, n)| c >= n) {
        out.constancy = dst.to_vec();
        out.divisibility = vec![s.divisibility.iter().copied().fold(MAX_DIVISIBILITY, gcd); dst.len()];
    }
    Some(out)
}

/// `a op b`, with `b` scaled by `scale` first (`addptr`: the pointee size, so divisibility is in bytes).
fn binary(op: BinOp, a: &AxisInfo, b: &AxisInfo, shape: &[u64], scale: u64) -> Option<AxisInfo> {
    let rank = shape.len();
    let mut out = AxisInfo::unknown(rank);
    let cb = b.constant;
    out.constant = match (a.constant, cb) {
        (Some(x), Some(y)) => match op {
            BinOp::Add => x.checked_add(y.checked_mul(scale as i64)?),
            BinOp::Sub => x.checked_sub(y),
            BinOp::Mul => x.checked_mul(y),
            _ => None,
        },
        _ => None,
    };
    for k in 0..rank {
        let const_k = gcd(a.constancy[k], b.constancy[k]);
        out.constancy[k] = const_k;
        match op {
            BinOp::Add | BinOp::Sub => {
                let c = gcd(a.contiguity[k], b.constancy[k]);
                out.contiguity[k] = if op == BinOp::Add { c.max(gcd(a.constancy[k], b.contiguity[k])) } else { c };
                let cr = out.contiguity[k];
                out.divisibility[k] = gcd(a.div_at(k, cr), mul_div(b.div_at(k, cr), scale));
            }
            BinOp::Mul => {
                out.contiguity[k] = match (a.constant, cb) {
                    (_, Some(1)) => a.contiguity[k],
                    (Some(1), _) => b.contiguity[k],
                    _ => 1,
                };
                let cr = out.contiguity[k];
                out.divisibility[k] = match (a.constant, cb) {
                    (_, Some(1)) => a.divisibility[k],
                    (Some(1), _) => b.divisibility[k],
                    _ => mul_div(a.div_at(k, cr), b.div_at(k, cr)),
                };
            }
            BinOp::Rem | BinOp::Div | BinOp::Shr | BinOp::Shl => {
                let c = match (op, cb) {
                    (BinOp::Shl | BinOp::Shr, Some(s)) if (0..62).contains(&s) => 1i64 << s,
                    (BinOp::Rem | BinOp::Div, Some(c)) if c > 0 => c,
                    // `x % n` with `n` uniform along the dim and known to be a multiple of 2^j: wraps happen only
                    // at multiples of 2^j, so runs of x stay runs (Triton's rule: gcd of x's contiguity and n's
                    // divisibility).
                    (BinOp::Rem, None)
                        if b.constancy[k] >= shape.get(k).copied().unwrap_or(1) && b.divisibility[k] > 1 =>
                    {
                        b.divisibility[k].min(1 << 62) as i64
                    }
                    _ => continue,
                };
                let c2 = pow2_div(c);
                match op {
                    BinOp::Rem => {
                        let m = a.contiguity[k].min(a.divisibility[k]).min(c2);
                        out.contiguity[k] = m;
                        out.divisibility[k] = a.div_at(k, m).min(c2);
                        out.constancy[k] = a.constancy[k];
                    }
                    BinOp::Shl => {
                        out.divisibility[k] = mul_div(a.div_at(k, 1), c as u64);
                        out.constancy[k] = a.constancy[k];
                    }
                    _ if c == 1 => {
                        out.contiguity[k] = a.contiguity[k];
                        out.divisibility[k] = a.divisibility[k];
                        out.constancy[k] = a.constancy[k];
                    }
                    _ => {
                        // x / c with c a power of two is constant over aligned runs of c consecutive values.
                        let run = if c2 == c as u64 { a.contiguity[k].min(a.divisibility[k]).min(c2) } else { 1 };
                        out.constancy[k] = a.constancy[k].max(run);
                        let da = a.div_at(k, 1);
                        out.divisibility[k] = if c2 == c as u64 && da >= c2 { da / c2 } else { 1 };
                    }
                }
            }
            BinOp::Max | BinOp::Min => {
                out.contiguity[k] = a.contiguity[k].min(b.contiguity[k]);
                let cr = out.contiguity[k];
                out.divisibility[k] = a.div_at(k, cr).min(b.div_at(k, cr));
                out.constancy[k] = a.constancy[k].min(b.constancy[k]);
            }
            _ => {}
        }
    }
    if let Some(c) = out.constant {
        return Some(AxisInfo::constant(shape, c));
    }
    Some(out)
}

/// One line per analyzed value, in program order: `%name: contiguity=[..] divisibility=[..] constancy=[..]`
/// (and `constant=c` when known). Values print under their source name, or `#index` when they have none.
pub fn dump(f: &Func, a: &AxisAnalysis) -> String {
    let mut out = String::new();
    let mut line = |v: ValueId| {
        let Some(i) = a.get(v) else { return };
        let name = f.value(v).name.as_ref().map_or_else(|| format!("#{}", v.0), |n| format!("%{n}"));
        let fmt = |xs: &[u64]| {
            let parts: Vec<String> =
                xs.iter().map(|&x| if x == MAX_DIVISIBILITY { "max".to_string() } else { x.to_string() }).collect();
            format!("[{}]", parts.join(", "))
        };
        out.push_str(&format!(
            "{name}: contiguity={} divisibility={} constancy={}",
            fmt(&i.contiguity),
            fmt(&i.divisibility),
            fmt(&i.constancy)
        ));
        if let Some(c) = i.constant {
            out.push_str(&format!(" constant={c}"));
        }
        out.push('\n');
    };
    for &v in f.args() {
        line(v);
    }
    for o in f.all_ops() {
        for &r in &f.op(o).regions {
            for &v in &f.region(r).args {
                line(v);
            }
        }
        for &v in &f.op(o).results {
            line(v);
        }
    }
    out
}
