//! Layout propagation: give every tensor value a layout, then insert `convert_layout` where a use needs another.
//!
//! Anchors are the coalesced memory ops, `dot` (its blocked accumulator, with FMA operand layouts) and the
//! descriptor accesses. From them, layouts spread backward (an op's result layout decides the layouts its
//! operands need, by [`rules::backward`]) and forward (operand layouts decide results, by [`rules::forward`]),
//! through elementwise ops, shape ops, reductions and the carried values of `for`/`if`/`while`, which form
//! *tied groups* (region argument, result, and the slots that feed them share one layout).
//!
//! A value takes the first layout that reaches it. Reaching is ordered by loop depth, innermost first, then
//! breadth-first: the inside of a loop settles before the code around it, so where two layouts meet the
//! conversion lands outside the loop. A value whose defining op cannot produce a proposed layout (a reduction
//! asked for a non-slice layout) refuses it and gets its layout forward instead. Values no anchor reaches take
//! the default blocked layout and spread it the same way.
//!
//! The rewrite then sets every type and, for each use whose required layout differs from the value's, inserts a
//! `convert_layout` just before the user (the init of a loop converts before the loop, a yielded value before
//! the `yield`).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use tessel_layouts::DistributedLayout;

use crate::ir::{Func, OpId, RegionId, ValueDef, ValueId};
use crate::layout::coalesce::{Ctas, default_blocked};
use crate::layout::insert::{convert_before, insert_after};
use crate::layout::rules::{self, Kind, L, from_spec};
use crate::ops::Op;

/// The layouts chosen for every tensor value.
pub struct Assignment {
    pub layouts: Vec<Option<L>>,
}

struct Propagator<'a> {
    f: &'a Func,
    num_warps: u32,
    ctas: Ctas,
    lay: Vec<Option<L>>,
    /// Values tied together (loop-carried values, branch results) and the slots feeding them.
    groups: Vec<TiedGroup>,
    /// The group of each tied value.
    group: HashMap<ValueId, usize>,
    /// The groups each structured op's operand slots feed: `(operand index, group)`.
    feeds: HashMap<OpId, Vec<(usize, usize)>>,
    users: Vec<Vec<OpId>>,
    depth: HashMap<OpId, u32>,
    /// Results of expensive anchors (memory ops with at least one element per thread, dots): they keep the
    /// anchor's layout, as in Triton, where only such loads and stores are layout anchors.
    fixed: HashMap<ValueId, L>,
    heap: BinaryHeap<(u32, Reverse<u64>, ValueId, usize)>,
    proposals: Vec<L>,
    seq: u64,
}

/// Values that share one layout (a loop's result and region argument, a branch's result), and the operand slots
/// `(op, operand index)` that feed them (inits, yields, the forwarded values of `condition`).
pub type TiedGroup = (Vec<ValueId>, Vec<(OpId, usize)>);

/// The tied groups of every structured op of `f`.
pub fn tied_groups(f: &Func) -> Vec<TiedGroup> {
    let mut out = Vec::new();
    let term = |r: RegionId| *f.region(r).ops.last().expect("region has a terminator");
    for o in f.all_ops() {
        let d = f.op(o);
        match d.op {
            Op::For(_) => {
                let body = d.regions[0];
                let y = term(body);
                for (i, &res) in d.results.iter().enumerate() {
                    let arg = f.region(body).args[i + 1];
                    out.push((vec![res, arg], vec![(o, i + 3), (y, i)]));
                }
            }
            Op::If => {
                let (t, e) = (term(d.regions[0]), term(d.regions[1]));
                for (i, &res) in d.results.iter().enumerate() {
                    out.push((vec![res], vec![(t, i), (e, i)]));
                }
            }
            Op::While => {
                let (b, a) = (d.regions[0], d.regions[1]);
                let (c, y) = (term(b), term(a));
                for (i, &arg) in f.region(b).args.iter().enumerate() {
                    out.push((vec![arg], vec![(o, i), (y, i)]));
                }
                for (i, &res) in d.results.iter().enumerate() {
                    out.push((vec![res, f.region(a).args[i]], vec![(c, i + 1)]));
                }
            }
            Op::WarpSpecialize(_) => {
                let y = term(d.regions[0]);
                for (i, &res) in d.results.iter().enumerate() {
                    out.push((vec![res], vec![(y, i)]));
                }
            }
            _ => {}
        }
    }
    out
}

fn loop_depths(f: &Func) -> HashMap<OpId, u32> {
    fn walk(f: &Func, r: RegionId, depth: u32, out: &mut HashMap<OpId, u32>) {
        for &o in &f.region(r).ops {
            out.insert(o, depth);
            let inner = depth + matches!(f.op(o).op, Op::For(_) | Op::While) as u32;
            for &c in &f.op(o).regions {
                walk(f, c, inner, out);
            }
        }
    }
    let mut out = HashMap::new();
    walk(f, f.body, 0, &mut out);
    out
}

impl<'a> Propagator<'a> {
    fn new(f: &'a Func, num_warps: u32, ctas: Ctas) -> Self {
        let mut users = vec![Vec::new(); f.values.len()];
        for o in f.all_ops() {
            for &v in &f.op(o).operands {
                if !users[v.index()].contains(&o) {
                    users[v.index()].push(o);
                }
            }
        }
        let groups = tied_groups(f);
        let mut group = HashMap::new();
        let mut feeds: HashMap<OpId, Vec<(usize, usize)>> = HashMap::new();
        for (g, (vals, slots)) in groups.iter().enumerate() {
            for &v in vals {
                group.insert(v, g);
            }
            for &(o, i) in slots {
                feeds.entry(o).or_default().push((i, g));
            }
        }
        Propagator {
            f,
            num_warps,
            ctas,
            lay: vec![None; f.values.len()],
            groups,
            group,
            feeds,
            users,
            depth: loop_depths(f),
            fixed: HashMap::new(),
            heap: BinaryHeap::new(),
            proposals: Vec::new(),
            seq: 0,
        }
    }

    fn propose(&mut self, depth: u32, v: ValueId, l: L) {
        if self.lay[v.index()].is_some() || !self.f.ty(v).is_tensor() {
            return;
        }
        self.seq += 1;
        self.proposals.push(l);
        self.heap.push((depth, Reverse(self.seq), v, self.proposals.len() - 1));
    }

    fn depth_of(&self, o: OpId) -> u32 {
        self.depth.get(&o).copied().unwrap_or(0)
    }

    /// The layouts the results of `o` would have if result `v` took `l` (every tensor result shares it), if
    /// `o` can produce them.
    fn accepts(&self, v: ValueId, l: &L) -> Option<Vec<ValueId>> {
        let f = self.f;
        if let Some(&g) = self.group.get(&v) {
            return Some(self.groups[g].0.clone());
        }
        if let Some(a) = self.fixed.get(&v)
            && a != l
        {
            return None;
        }
        match f.value(v).def {
            ValueDef::Arg(..) => Some(vec![v]),
            ValueDef::Result(o, _) => {
                let d = f.op(o);
                let res: Vec<Option<L>> = d.results.iter().map(|&r| f.ty(r).is_tensor().then(|| l.clone())).collect();
                rules::backward(f, o, &res)?;
                Some(d.results.iter().copied().filter(|&r| f.ty(r).is_tensor()).collect())
            }
        }
    }

    fn run(&mut self) {
        while let Some((_, _, v, idx)) = self.heap.pop() {
            if self.lay[v.index()].is_some() {
                continue;
            }
            let l = self.proposals[idx].clone();
            if let Some(vals) = self.accepts(v, &l) {
                self.assign(&vals, l);
            }
        }
    }

    fn assign(&mut self, vals: &[ValueId], l: L) {
        let f = self.f;
        for &v in vals {
            self.lay[v.index()] = Some(l.clone());
        }
        // Backward: what the defining op (or the slots feeding a tied group) must be given.
        if let Some(&v0) = vals.first() {
            if let Some(&g) = self.group.get(&v0) {
                for (o, i) in self.groups[g].1.clone() {
                    let w = f.op(o).operands[i];
                    self.propose(self.depth_of(o), w, l.clone());
                }
            } else if let ValueDef::Result(o, _) = f.value(v0).def {
                let res: Vec<Option<L>> = f.op(o).results.iter().map(|&r| self.lay[r.index()].clone()).collect();
                if let Some(reqs) = rules::backward(f, o, &res) {
                    for (&w, req) in f.op(o).operands.iter().zip(reqs) {
                        if let Some(req) = req {
                            self.propose(self.depth_of(o), w, req);
                        }
                    }
                }
            }
        }
        // Forward: users' results, and their other operands.
        for &v in vals {
            for u in self.users[v.index()].clone() {
                self.forward_through(u);
            }
        }
    }

    fn forward_through(&mut self, u: OpId) {
        let f = self.f;
        let d = f.op(u);
        let depth = self.depth_of(u);
        if rules::kind(&d.op) == Kind::Structured {
            // An init or a yielded value reaching a tied group.
            for (i, g) in self.feeds.get(&u).cloned().unwrap_or_default() {
                if let Some(l) = self.lay[d.operands[i].index()].clone() {
                    self.propose(depth, self.groups[g].0[0], l);
                }
            }
            return;
        }
        let ins: Vec<Option<L>> = d.operands.iter().map(|&w| self.lay[w.index()].clone()).collect();
        let Some(outs) = rules::forward(f, u, &ins) else {
            // Ops with no results (stores) still tie their operands together.
            if rules::kind(&d.op) == Kind::Same
                && let Some(l) = ins.iter().flatten().next().cloned()
            {
                for &w in &d.operands {
                    self.propose(depth, w, l.clone());
                }
            }
            return;
        };
        for (&r, l) in d.results.iter().zip(&outs) {
            if let Some(l) = l {
                self.propose(depth, r, l.clone());
            }
        }
        let res: Vec<Option<L>> =
            d.results.iter().zip(&outs).map(|(&r, l)| self.lay[r.index()].clone().or_else(|| l.clone())).collect();
        if let Some(reqs) = rules::backward(f, u, &res) {
            for (&w, req) in d.operands.iter().zip(reqs) {
                if let Some(req) = req {
                    self.propose(depth, w, req);
                }
            }
        }
    }

    fn default_for(&self, v: ValueId) -> Result<L, tessel_layouts::LayoutError> {
        let shape = self.f.ty(v).shape().to_vec();
        from_spec(DistributedLayout::Blocked(default_blocked(&shape, self.num_warps, self.ctas)), &shape)
    }
}

/// Every tensor value of `f` in program order: kernel arguments, then region arguments and results.
pub fn tensor_values(f: &Func) -> Vec<ValueId> {
    let mut out: Vec<ValueId> = f.args().to_vec();
    for o in f.all_ops() {
        out.extend(f.op(o).results.iter().copied());
        for &r in &f.op(o).regions {
            out.extend(f.region(r).args.iter().copied());
        }
    }
    out.retain(|&v| f.ty(v).is_tensor());
    out
}

/// Chooses a layout for every tensor value from the anchors (op → layout of its tile).
pub fn propagate(
    f: &Func,
    anchors: &HashMap<OpId, L>,
    num_warps: u32,
    ctas: Ctas,
) -> Result<Assignment, tessel_layouts::LayoutError> {
    let mut p = Propagator::new(f, num_warps, ctas);
    // A gluon kernel with values left to the compiler (`gl.AutoLayout`): the layouts the author wrote stay, and
    // spread like anchors; a value the author converts (`gl.set_auto_layout`) is proposed the conversion's
    // layout, so that it needs none.
    if f.attrs.gluon {
        for v in tensor_values(f) {
            if let Some(l) = rules::layout_of(f, v) {
                p.fixed.insert(v, l.clone());
                p.assign(&[v], l);
            }
        }
        for o in f.all_ops() {
            let d = f.op(o);
            if matches!(d.op, Op::ConvertLayout)
                && rules::layout_of(f, d.operands[0]).is_none()
                && let Some(l) = rules::layout_of(f, d.results[0])
            {
                p.propose(p.depth_of(o), d.operands[0], l);
            }
        }
    }
    let mut seeds: Vec<(&OpId, &L)> = anchors.iter().collect();
    seeds.sort_by_key(|(o, _)| **o);
    for (&o, l) in seeds {
        let d = f.op(o);
        if d.results.iter().any(|&r| p.lay[r.index()].is_some()) {
            continue;
        }
        let depth = p.depth_of(o);
        let numel: u32 = l.linear.out_dim_sizes().iter().map(|(_, s)| *s).product();
        if numel >= num_warps * tessel_layouts::standard::WARP_SIZE * ctas.0 || matches!(d.op, Op::Dot { .. }) {
            for &r in &d.results {
                if f.ty(r).is_tensor() {
                    p.fixed.insert(r, l.clone());
                }
            }
        }
        for &r in &d.results {
            if f.ty(r).is_tensor() {
                p.propose(depth, r, l.clone());
            }
        }
        if d.results.iter().all(|&r| !f.ty(r).is_tensor()) {
            for &w in &d.operands {
                if f.ty(w).shape() == l.linear.out_dim_sizes().iter().map(|(_, s)| *s).collect::<Vec<_>>() {
                    p.propose(depth, w, l.clone());
                }
            }
        }
    }
    p.run();
    // Values no anchor reached: the default layout, spread like an anchor's.
    loop {
        let pending: Vec<ValueId> = tensor_values(f).into_iter().filter(|&v| p.lay[v.index()].is_none()).collect();
        let Some(&first) = pending.first() else { break };
        let pick = pending
            .iter()
            .copied()
            .find(|&v| p.default_for(v).ok().is_some_and(|l| p.accepts(v, &l).is_some()))
            .unwrap_or(first);
        let l = p.default_for(pick)?;
        match p.accepts(pick, &l) {
            Some(vals) => p.assign(&vals, l),
            // Nothing accepts the default: force it; the rewrite converts after the op.
            None => p.assign(&[pick], l),
        }
        p.run();
    }
    Ok(Assignment { layouts: p.lay })
}

/// The layout each operand of `o` must have (`None`: no requirement), given the layouts now in the types.
pub fn requirements(f: &Func, o: OpId, anchors: &HashMap<OpId, L>) -> Option<Vec<Option<L>>> {
    let d = f.op(o);
    let lay = |v: ValueId| rules::layout_of(f, v);
    match rules::kind(&d.op) {
        Kind::Structured => {
            let mut reqs = vec![None; d.operands.len()];
            let parent = d.parent.and_then(|r| f.region(r).parent);
            match (&d.op, parent.map(|p| &f.op(p).op)) {
                (Op::For(_), _) => {
                    let body = d.regions[0];
                    for (i, r) in reqs.iter_mut().enumerate().skip(3) {
                        *r = lay(f.region(body).args[i - 2]);
                    }
                }
                (Op::While, _) => {
                    let before = d.regions[0];
                    for (i, r) in reqs.iter_mut().enumerate() {
                        *r = lay(f.region(before).args[i]);
                    }
                }
                (Op::Yield, Some(Op::For(_) | Op::If)) => {
                    let p = parent.unwrap();
                    for (i, r) in reqs.iter_mut().enumerate() {
                        *r = lay(f.op(p).results[i]);
                    }
                }
                (Op::Yield, Some(Op::While)) => {
                    let before = f.op(parent.unwrap()).regions[0];
                    for (i, r) in reqs.iter_mut().enumerate() {
                        *r = lay(f.region(before).args[i]);
                    }
                }
                (Op::Condition, Some(Op::While)) => {
                    let p = parent.unwrap();
                    for (i, r) in reqs.iter_mut().enumerate().skip(1) {
                        *r = lay(f.op(p).results[i - 1]);
                    }
                }
                _ => {}
            }
            Some(reqs)
        }
        Kind::Sink => Some(vec![None; d.operands.len()]),
        _ if d.results.iter().all(|&r| !f.ty(r).is_tensor()) && rules::kind(&d.op) == Kind::Same => {
            // A store (or a scalar-result op): the anchor's tile, else the pointer's layout.
            let l = anchors.get(&o).cloned().or_else(|| lay(d.operands[0]));
            Some(d.operands.iter().map(|&w| if f.ty(w).is_tensor() { l.clone() } else { None }).collect())
        }
        _ => {
            let res: Vec<Option<L>> = d.results.iter().map(|&r| lay(r)).collect();
            rules::backward(f, o, &res)
        }
    }
}

/// Writes the assignment into the types and inserts the conversions uses need.
pub fn rewrite(f: &mut Func, a: &Assignment, anchors: &HashMap<OpId, L>) -> Result<(), super::AssignError> {
    for v in tensor_values(f) {
        let l = a.layouts[v.index()].clone().ok_or(super::AssignError::NoLayout(v))?;
        f.values[v.index()].ty = f.ty(v).with_layout(Some(l));
    }
    for o in f.all_ops() {
        let reqs = match requirements(f, o, anchors) {
            Some(r) => r,
            None => {
                // The op cannot produce its assigned result layouts: give it the ones its operands produce
                // and convert after it. The operands of a reduction combine register by register, so they
                // must share one layout first (argmax's indices with its values): the first operand's.
                if matches!(f.op(o).op, Op::Reduce { .. }) {
                    let first = rules::layout_of(f, f.op(o).operands[0]);
                    for i in 1..f.op(o).operands.len() {
                        let w = f.op(o).operands[i];
                        if let Some(l) = first.clone()
                            && rules::layout_of(f, w).as_deref() != Some(&*l)
                        {
                            let c = convert_before(f, o, w, l);
                            f.op_mut(o).operands[i] = c;
                        }
                    }
                }
                let d = f.op(o).clone();
                let ins: Vec<Option<L>> = d.operands.iter().map(|&w| rules::layout_of(f, w)).collect();
                let outs = rules::forward(f, o, &ins).ok_or(super::AssignError::NoFit(d.op.name()))?;
                for (&r, natural) in d.results.iter().zip(outs) {
                    let want = rules::layout_of(f, r);
                    if natural.is_none() || natural == want {
                        continue;
                    }
                    f.values[r.index()].ty = f.ty(r).with_layout(natural);
                    let ty = f.ty(r).with_layout(want);
                    let region = d.parent.expect("linked op");
                    let c = f.append(region, Op::ConvertLayout, &[r], vec![ty], &[], d.loc);
                    f.region_mut(region).ops.pop();
                    insert_after(f, o, c);
                    let nv = f.op(c).results[0];
                    f.replace_all_uses(r, nv);
                    f.op_mut(c).operands[0] = r;
                }
                continue;
            }
        };
        for (i, req) in reqs.into_iter().enumerate() {
            let w = f.op(o).operands[i];
            if let Some(req) = req
                && f.ty(w).is_tensor()
                && rules::layout_of(f, w).as_deref() != Some(&*req)
            {
                let c = convert_before(f, o, w, req);
                f.op_mut(o).operands[i] = c;
            }
        }
    }
    Ok(())
}
