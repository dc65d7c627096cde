//! Edits a pass collects over one walk and applies together: values replaced, ops removed, new ops placed
//! before existing ones. Applying them rewrites each touched region once and walks the function once, so a pass
//! making k edits to a function of n ops costs O(n + k) rather than the O(n·k) of editing in place (every
//! in-place removal or insertion shifts its region, every in-place replacement walks the whole function).

use std::collections::{HashMap, HashSet};

use crate::ir::{Func, OpId, RegionId, ValueId, resolve};
use crate::ops::Op;
use crate::types::Type;

#[derive(Default)]
pub(crate) struct Edits {
    replace: HashMap<ValueId, ValueId>,
    remove: HashSet<OpId>,
    before: HashMap<OpId, Vec<OpId>>,
}

impl Edits {
    /// Every use of `from` becomes a use of `to`.
    pub fn replace(&mut self, from: ValueId, to: ValueId) {
        self.replace.insert(from, to);
    }

    /// Rewrites the operands of `o` through the replacements so far, as in-place replacement would have: a pass
    /// walking in program order calls this before it reads an op.
    pub fn resolve_operands(&self, f: &mut Func, o: OpId) {
        if !self.replace.is_empty() {
            for v in f.op_mut(o).operands.iter_mut() {
                *v = resolve(&self.replace, *v);
            }
        }
    }

    /// Op `o` leaves its region (its results must be unused once the replacements are made).
    pub fn remove(&mut self, o: OpId) {
        self.remove.insert(o);
    }

    /// The new op `o` (created, in no region's list) goes just before `anchor`, after those placed there earlier.
    pub fn insert_before(&mut self, anchor: OpId, o: OpId) {
        self.before.entry(anchor).or_default().push(o);
    }

    /// A new op `op(operands)` with one result of type `ty` (its value returned), placed just before `anchor`,
    /// with the anchor's source location.
    pub fn new_op_before(&mut self, f: &mut Func, anchor: OpId, op: Op, operands: &[ValueId], ty: Type) -> ValueId {
        let r = f.op(anchor).parent.expect("linked op");
        let loc = f.op(anchor).loc;
        let new = f.append(r, op, operands, vec![ty], &[], loc);
        f.region_mut(r).ops.pop();
        self.insert_before(anchor, new);
        f.op(new).results[0]
    }

    /// Applies the edits; whether there were any.
    pub fn apply(mut self, f: &mut Func) -> bool {
        let changed = !(self.replace.is_empty() && self.remove.is_empty() && self.before.is_empty());
        let mut regions: Vec<RegionId> =
            self.remove.iter().chain(self.before.keys()).filter_map(|&o| f.op(o).parent).collect();
        regions.sort_unstable();
        regions.dedup();
        for r in regions {
            let old = std::mem::take(&mut f.region_mut(r).ops);
            let mut ops = Vec::with_capacity(old.len());
            for x in old {
                for new in self.before.remove(&x).unwrap_or_default() {
                    f.op_mut(new).parent = Some(r);
                    ops.push(new);
                }
                if self.remove.contains(&x) {
                    f.op_mut(x).parent = None;
                } else {
                    ops.push(x);
                }
            }
            f.region_mut(r).ops = ops;
        }
        f.replace_uses(&self.replace);
        changed
    }
}
