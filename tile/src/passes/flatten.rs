//! `tl.range(..., flatten=True)`: a loop nest fused into one loop, so that the software pipeliner runs across
//! the inner loop's boundaries (a persistent GEMM issues the next tile's first loads while the current tile's
//! last K steps and its epilogue run), as Triton's fuse-nested-loops does before pipelining.
//!
//! ```text
//! for i in range(lb, ub, s) [flatten]:          n1 = trips(lb, ub, s), n2 = trips(lb2, ub2, s2)
//!     P(i, o)                                   if n2 > 0:
//!     c = for j in range(lb2, ub2, s2), c0:         for t in range(0, n1 * n2), carrying o, c:
//!         c = B(i, j, c)                                 i = lb + t / n2 * s;  j = lb2 + t % n2 * s2
//!     o = E(i, c, o)                                     P(i, o)
//!                                                        c = B(i, j, t % n2 == 0 ? c0 : c)
//!                                                        o = if t % n2 == n2 - 1: E(i, c, o) else: o
//!                                               else (no inner iterations):
//!                                                   for i in range(lb, ub, s): P(i, o); o = E(i, c0, o)
//! ```
//!
//! The prologue `P` runs every iteration of the fused loop, so it must be pure and flat (the tile coordinates of
//! a persistent kernel are); the inner loop's bounds must not depend on the outer loop; both steps must be
//! positive constants. The epilogue runs under an `if` on the inner loop's last step. A restarted accumulator
//! (`c0` a constant zero, as `tl.zeros` gives) is what the pipeliner turns into wgmma's `use_acc` predicate, so
//! that the dot stays asynchronous across the tile boundary. A nest that does not qualify runs as written, and
//! the reason is returned for a warning.

use std::collections::{HashMap, HashSet};

use super::build::{Builder, clone_op, const_int};
use crate::ir::{Func, OpId, ValueId};
use crate::ops::{BinOp, CmpPred, Const, LoopAttrs, Op};
use crate::types::{Elem, ScalarType, Type};

/// Why a loop nest that asks to be fused (`flatten=True`) runs as written.
#[derive(Clone, Debug, PartialEq)]
pub enum NotFused {
    NoInnerLoop,
    /// The body holds more than one loop, or a `while`.
    NotOneInnerLoop,
    /// An op before the inner loop that is not pure or has branches.
    ImpurePrologue(&'static str),
    /// The inner loop's bounds or step depend on the outer loop.
    DependentBounds,
    NonConstantSteps,
    NonPositiveSteps,
    /// The loops count in different types.
    CounterTypes {
        outer: Type,
        inner: Type,
    },
    /// The inner loop carries a value of a type with no zero.
    NoZero(Type),
}

impl std::fmt::Display for NotFused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotFused::NoInnerLoop => f.write_str("the loop has no inner loop to fuse with"),
            NotFused::NotOneInnerLoop => {
                f.write_str("the loop's body must hold exactly one `for` loop (and no `while`) to be fused")
            }
            NotFused::ImpurePrologue(op) => write!(
                f,
                "the code before the inner loop must be pure and without branches, as it runs on every step of the \
                 fused loop; `{op}` is not"
            ),
            NotFused::DependentBounds => f.write_str("the inner loop's bounds and step depend on the outer loop"),
            NotFused::NonConstantSteps => f.write_str("both loops need constant steps"),
            NotFused::NonPositiveSteps => f.write_str("both loops need positive steps"),
            NotFused::CounterTypes { outer, inner } => {
                write!(f, "the loops count in different types ({outer} and {inner})")
            }
            NotFused::NoZero(t) => {
                write!(f, "the inner loop carries {t}, which has no zero to start the fused loop with")
            }
        }
    }
}

/// Fuses every loop nest whose outer loop asks for it (`flatten=True`); returns whether any was, and the loops
/// left as written with the reason.
pub fn flatten_loops(f: &mut Func) -> (bool, Vec<(OpId, NotFused)>) {
    let (mut changed, mut refused) = (false, Vec::new());
    for o in f.all_ops() {
        if f.op(o).parent.is_none() || !matches!(&f.op(o).op, Op::For(a) if a.flatten) {
            continue;
        }
        match flatten(f, o) {
            Ok(()) => changed = true,
            Err(why) => {
                if let Op::For(a) = &mut f.op_mut(o).op {
                    a.flatten = false;
                }
                refused.push((o, why));
            }
        }
    }
    if changed {
        f.attrs.flattened = true;
    }
    (changed, refused)
}

/// The values defined inside op `o` (its regions' arguments and every nested result).
fn defined_inside(f: &Func, o: OpId) -> HashSet<ValueId> {
    let mut out = HashSet::new();
    f.walk_op(o, &mut |x| {
        out.extend(f.op(x).results.iter().copied());
        for &r in &f.op(x).regions {
            out.extend(f.region(r).args.iter().copied());
        }
    });
    out
}

impl Builder<'_> {
    /// `ub > lb ? (ub - lb + s - 1) / s : 0` for a positive constant step `s`.
    fn trips(&mut self, lb: ValueId, ub: ValueId, s: i64) -> ValueId {
        let ty = self.f.ty(lb).clone();
        let diff = self.binary(BinOp::Sub, ub, lb);
        let up = self.int(s - 1, &ty);
        let diff = self.binary(BinOp::Add, diff, up);
        let step = self.int(s, &ty);
        let q = self.binary(BinOp::Div, diff, step);
        let some = self.cmp(CmpPred::Gt, ub, lb);
        let zero = self.int(0, &ty);
        self.value(Op::Select, &[some, q, zero], ty)
    }

    /// `cond ? a : b`, the condition splatted over tensors.
    fn select(&mut self, cond: ValueId, a: ValueId, b: ValueId) -> ValueId {
        let ty = self.f.ty(a).clone();
        let cond = if ty.is_tensor() {
            let t = ty.with_elem(Elem::Scalar(ScalarType::I1));
            self.value(Op::Splat, &[cond], t)
        } else {
            cond
        };
        self.value(Op::Select, &[cond, a, b], ty)
    }
}

fn flatten(f: &mut Func, o: OpId) -> Result<(), NotFused> {
    let d = f.op(o).clone();
    let Op::For(attrs) = d.op.clone() else { unreachable!("a for loop") };
    let body = d.regions[0];
    let ops = f.region(body).ops.clone();
    let (&outer_yield, ops) = ops.split_last().expect("verified: a body ends in yield");
    let loops: Vec<usize> = ops
        .iter()
        .enumerate()
        .filter(|(_, x)| matches!(f.op(**x).op, Op::For(_) | Op::While))
        .map(|(i, _)| i)
        .collect();
    let k = match loops[..] {
        [k] if matches!(f.op(ops[k]).op, Op::For(_)) => k,
        [] => return Err(NotFused::NoInnerLoop),
        _ => return Err(NotFused::NotOneInnerLoop),
    };
    let (prologue, inner, epilogue) = (&ops[..k], ops[k], &ops[k + 1..]);
    if let Some(&x) = prologue.iter().find(|&&x| !f.op(x).op.is_pure() || !f.op(x).regions.is_empty()) {
        return Err(NotFused::ImpurePrologue(f.op(x).op.name()));
    }
    let id = f.op(inner).clone();
    let Op::For(inner_attrs) = id.op.clone() else { unreachable!("a for loop") };
    let inside = defined_inside(f, o);
    if id.operands[..3].iter().any(|v| inside.contains(v)) {
        return Err(NotFused::DependentBounds);
    }
    let (Some(s1), Some(s2)) = (const_int(f, d.operands[2]), const_int(f, id.operands[2])) else {
        return Err(NotFused::NonConstantSteps);
    };
    if s1 <= 0 || s2 <= 0 {
        return Err(NotFused::NonPositiveSteps);
    }
    let ity = f.ty(d.operands[0]).clone();
    if *f.ty(id.operands[0]) != ity {
        return Err(NotFused::CounterTypes { outer: ity, inner: f.ty(id.operands[0]).clone() });
    }
    let (oargs, iargs) = (f.region(body).args.clone(), f.region(id.regions[0]).args.clone());
    let inner_inits = id.operands[3..].to_vec();
    // The fused loop's first step restarts the inner values from their initial values; the values it enters
    // with only need the right types: the initial values themselves when the loop can see them, else zeros.
    let mut entry = Vec::new();
    for (&init, &a) in inner_inits.iter().zip(&iargs[1..]) {
        if !inside.contains(&init) {
            entry.push(Ok(init));
        } else if matches!(f.ty(a).elem(), Some(Elem::Scalar(_))) {
            entry.push(Err(f.ty(a).clone()));
        } else {
            return Err(NotFused::NoZero(f.ty(a).clone()));
        }
    }

    // Prologue values the inner loop uses only as descriptor-load coordinates (a persistent kernel's tile
    // offsets): the fused loop computes them on a tile's first step and carries them, instead of recomputing the
    // prologue (its divisions) on every step. The pipeliner runs that branch ahead with the loads; the epilogue
    // computes its own copy.
    let prologue_values: HashSet<ValueId> = prologue.iter().flat_map(|&x| f.op(x).results.to_vec()).collect();
    let mut tile_values: Vec<ValueId> = Vec::new();
    let mut only_coords = true;
    f.walk_op(inner, &mut |x| {
        for (n, v) in f.op(x).operands.iter().enumerate() {
            if prologue_values.contains(v) {
                only_coords &= f.op(x).op == Op::DescLoad && n > 0;
                if !tile_values.contains(v) {
                    tile_values.push(*v);
                }
            }
        }
    });
    let carry_tile = only_coords
        && !tile_values.is_empty()
        && tile_values.iter().all(|&v| matches!(f.ty(v).elem(), Some(Elem::Scalar(_))) && !f.ty(v).is_tensor());

    // Before the loop: trip counts, the fused count and the choice between the two forms.
    let parent = d.parent.expect("linked loop");
    let (pre, then_r, else_r) = (f.new_region(), f.new_region(), f.new_region());
    let mut b = Builder { f, region: pre, at: None, loc: d.loc };
    let n1 = b.trips(d.operands[0], d.operands[1], s1);
    let n2 = b.trips(id.operands[0], id.operands[1], s2);
    let zero = b.int(0, &ity);
    let one = b.int(1, &ity);
    let has_inner = b.cmp(CmpPred::Gt, n2, zero);
    let total = b.binary(BinOp::Mul, n1, n2);
    let last_j = b.binary(BinOp::Sub, n2, one);
    let mut inits: Vec<ValueId> = d.operands[3..].to_vec();
    for e in entry {
        inits.push(match e {
            Ok(v) => v,
            Err(ty) => {
                let c = if ty.elem().and_then(Elem::scalar).is_some_and(ScalarType::is_float) {
                    Const::Float(0.0)
                } else {
                    Const::Int(0)
                };
                b.value(Op::Constant(c), &[], ty)
            }
        });
    }

    let tile_inits: Vec<ValueId> = if carry_tile {
        tile_values
            .iter()
            .map(|&v| {
                let ty = b.f.ty(v).clone();
                b.value(Op::Constant(Const::Int(0)), &[], ty)
            })
            .collect()
    } else {
        Vec::new()
    };

    // The fused loop's `t / n2` is a multiply-high by a reciprocal computed once, in the branch where the loop
    // runs (n2 > 0, and t counts up from 0, so both are non-negative): a division by a run-time value is a
    // dozen instructions on every step (ptxas does not hoist its reciprocal), the multiply-high a few.
    let f = b.f;
    let reciprocal = (ity == Type::scalar(ScalarType::I32)).then(|| {
        let mut b = Builder { f, region: then_r, at: None, loc: d.loc };
        reciprocal_u32(&mut b, n2)
    });

    // The fused loop.
    let flat = f.new_region();
    let t = f.add_region_arg(flat, ity.clone(), Some("t".into()));
    let oc: Vec<ValueId> = oargs[1..].iter().map(|&a| f.add_region_arg(flat, f.ty(a).clone(), None)).collect();
    let ic: Vec<ValueId> = iargs[1..].iter().map(|&a| f.add_region_arg(flat, f.ty(a).clone(), None)).collect();
    let tc: Vec<ValueId> = tile_inits.iter().map(|&v| f.add_region_arg(flat, f.ty(v).clone(), None)).collect();
    let mut b = Builder { f, region: flat, at: None, loc: d.loc };
    let ii = match reciprocal {
        Some(r) => r.divide(&mut b, t),
        None => b.binary(BinOp::Div, t, n2),
    };
    let span = b.binary(BinOp::Mul, ii, n2);
    let jj = b.binary(BinOp::Sub, t, span);
    let step1 = b.int(s1, &ity);
    let off1 = b.binary(BinOp::Mul, ii, step1);
    let i = b.binary(BinOp::Add, d.operands[0], off1);
    let step2 = b.int(s2, &ity);
    let off2 = b.binary(BinOp::Mul, jj, step2);
    let j = b.binary(BinOp::Add, id.operands[0], off2);
    let f = b.f;
    let mut map: HashMap<ValueId, ValueId> = HashMap::new();
    map.insert(oargs[0], i);
    for (&a, &c) in oargs[1..].iter().zip(&oc) {
        map.insert(a, c);
    }
    let mut b = Builder { f, region: flat, at: None, loc: d.loc };
    let first = b.cmp(CmpPred::Eq, jj, zero);
    let last = b.cmp(CmpPred::Eq, jj, last_j);
    let f = b.f;
    // The epilogue's own copy of the prologue, from the same `i` (it runs on the tile's last step).
    let epilogue_map = map.clone();
    let tile_now = if carry_tile {
        let (then_p, else_p) = (f.new_region(), f.new_region());
        let mut inner_map = map.clone();
        for &x in prologue {
            clone_op(f, x, then_p, &mut inner_map);
        }
        let fresh: Vec<ValueId> = tile_values.iter().map(|v| inner_map[v]).collect();
        f.append(then_p, Op::Yield, &fresh, vec![], &[], d.loc);
        f.append(else_p, Op::Yield, &tc, vec![], &[], d.loc);
        let types: Vec<Type> = tc.iter().map(|&v| f.ty(v).clone()).collect();
        let on_first = f.append(flat, Op::If, &[first], types, &[then_p, else_p], d.loc);
        let now = f.op(on_first).results.to_vec();
        for (&v, &r) in tile_values.iter().zip(&now) {
            map.insert(v, r);
        }
        now
    } else {
        for &x in prologue {
            clone_op(f, x, flat, &mut map);
        }
        Vec::new()
    };
    let mut b = Builder { f, region: flat, at: None, loc: d.loc };
    map.insert(iargs[0], j);
    for ((&a, &c), &init) in iargs[1..].iter().zip(&ic).zip(&inner_inits) {
        let init = *map.get(&init).unwrap_or(&init);
        let cur = b.select(first, init, c);
        map.insert(a, cur);
    }
    let f = b.f;
    let inner_ops = f.region(id.regions[0]).ops.clone();
    let (&inner_yield, inner_ops) = inner_ops.split_last().expect("verified: a body ends in yield");
    for &x in inner_ops {
        clone_op(f, x, flat, &mut map);
    }
    let new_c: Vec<ValueId> = f.op(inner_yield).operands.iter().map(|v| *map.get(v).unwrap_or(v)).collect();
    for (&r, &c) in id.results.iter().zip(&new_c) {
        map.insert(r, c);
    }
    // The epilogue, on the inner loop's last step.
    let (epi_then, epi_else) = (f.new_region(), f.new_region());
    if carry_tile {
        // The prologue's values as the epilogue sees them: computed again from `i`, the inner loop's results as
        // the step left them.
        let mut em = epilogue_map;
        for &x in prologue {
            clone_op(f, x, epi_then, &mut em);
        }
        for (k, v) in map.iter() {
            if !prologue_values.contains(k) {
                em.entry(*k).or_insert(*v);
            }
        }
        map = em;
    }
    for &x in epilogue {
        clone_op(f, x, epi_then, &mut map);
    }
    let new_o: Vec<ValueId> = f.op(outer_yield).operands.iter().map(|v| *map.get(v).unwrap_or(v)).collect();
    f.append(epi_then, Op::Yield, &new_o, vec![], &[], d.loc);
    f.append(epi_else, Op::Yield, &oc, vec![], &[], d.loc);
    let otypes: Vec<Type> = oc.iter().map(|&v| f.ty(v).clone()).collect();
    let epi = f.append(flat, Op::If, &[last], otypes.clone(), &[epi_then, epi_else], d.loc);
    let mut yields = f.op(epi).results.to_vec();
    yields.extend(&new_c);
    yields.extend(&tile_now);
    f.append(flat, Op::Yield, &yields, vec![], &[], d.loc);
    let flat_attrs = LoopAttrs {
        num_stages: inner_attrs.num_stages.or(attrs.num_stages),
        loop_unroll_factor: None,
        warp_specialize: attrs.warp_specialize || inner_attrs.warp_specialize,
        flatten: false,
        disallow_acc_multi_buffer: attrs.disallow_acc_multi_buffer || inner_attrs.disallow_acc_multi_buffer,
    };
    let mut operands = vec![zero, total, one];
    operands.extend(&inits);
    operands.extend(&tile_inits);
    let mut types = otypes.clone();
    types.extend(ic.iter().map(|&v| f.ty(v).clone()));
    types.extend(tc.iter().map(|&v| f.ty(v).clone()));
    let fused = f.append(then_r, Op::For(flat_attrs), &operands, types, &[flat], d.loc);
    let fused_results = f.op(fused).results[..oc.len()].to_vec();
    f.append(then_r, Op::Yield, &fused_results, vec![], &[], d.loc);

    // No inner iterations: the outer loop with the inner loop's results its initial values.
    let nest = f.new_region();
    let iv = f.add_region_arg(nest, ity.clone(), f.value(oargs[0]).name.clone());
    let mut map: HashMap<ValueId, ValueId> = HashMap::new();
    map.insert(oargs[0], iv);
    for &a in &oargs[1..] {
        let n = f.add_region_arg(nest, f.ty(a).clone(), f.value(a).name.clone());
        map.insert(a, n);
    }
    for &x in prologue {
        clone_op(f, x, nest, &mut map);
    }
    for (&r, &init) in id.results.iter().zip(&inner_inits) {
        map.insert(r, *map.get(&init).unwrap_or(&init));
    }
    for &x in epilogue {
        clone_op(f, x, nest, &mut map);
    }
    let ys: Vec<ValueId> = f.op(outer_yield).operands.iter().map(|v| *map.get(v).unwrap_or(v)).collect();
    f.append(nest, Op::Yield, &ys, vec![], &[], d.loc);
    let nest_attrs = LoopAttrs { flatten: false, ..attrs };
    let plain = f.append(else_r, Op::For(nest_attrs), &d.operands, otypes.clone(), &[nest], d.loc);
    let plain_results = f.op(plain).results.to_vec();
    f.append(else_r, Op::Yield, &plain_results, vec![], &[], d.loc);

    // Replace the nest.
    let choice = f.append(pre, Op::If, &[has_inner], otypes, &[then_r, else_r], d.loc);
    for (&old, &new) in d.results.iter().zip(&f.op(choice).results.clone()) {
        f.replace_all_uses(old, new);
    }
    let new_ops = std::mem::take(&mut f.region_mut(pre).ops);
    let at = f.region(parent).ops.iter().position(|&x| x == o).expect("linked loop");
    for &x in &new_ops {
        f.op_mut(x).parent = Some(parent);
    }
    f.region_mut(parent).ops.splice(at..at, new_ops);
    f.unlink(o);
    Ok(())
}

/// `⌊n / d⌋` for non-negative i32 `n` and positive i32 `d` by one 64-bit multiply-high: with
/// `m = ⌈2^64 / d⌉ = (2^64 − 1) / d + 1`, `m·d = 2^64 + e` with `0 ≤ e < d`, so `n·m / 2^64 = n/d + n·e/(d·2^64)`
/// exceeds `n/d` by less than `2^-32 < 1/d`, never reaching the next integer. `d = 1` wraps `m` to 0 and
/// takes `n` itself.
#[derive(Clone, Copy)]
struct Reciprocal {
    m: ValueId,
    is_one: ValueId,
}

fn reciprocal_u32(b: &mut Builder, d: ValueId) -> Reciprocal {
    let u64t = Type::scalar(ScalarType::U64);
    let wide = b.value(Op::Cast, &[d], u64t.clone());
    let all_ones = b.int(-1, &u64t);
    let one = b.int(1, &u64t);
    let q = b.binary(BinOp::Div, all_ones, wide);
    let m = b.binary(BinOp::Add, q, one);
    let is_one = b.cmp(CmpPred::Eq, wide, one);
    Reciprocal { m, is_one }
}

impl Reciprocal {
    fn divide(self, b: &mut Builder, n: ValueId) -> ValueId {
        let ty = b.f.ty(n).clone();
        let wide = b.value(Op::Cast, &[n], Type::scalar(ScalarType::U64));
        let hi = b.binary(BinOp::UMulHi, wide, self.m);
        let q = b.value(Op::Select, &[self.is_one, wide, hi], Type::scalar(ScalarType::U64));
        b.value(Op::Cast, &[q], ty)
    }
}
