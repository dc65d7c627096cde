//! What the loop transformations (`unroll`, `flatten`) share: an op builder that inserts at a position of a
//! region (which then advances) or appends at its end, constant lookup, and cloning ops through a value map.

use std::collections::HashMap;

use crate::ir::{Func, Loc, OpId, RegionId, ValueDef, ValueId};
use crate::ops::{BinOp, CmpPred, Const, Op};
use crate::types::{ScalarType, Type};

/// Builds ops into `region`: at index `at` (each op after the previous one) or, with `at: None`, at its end.
pub(crate) struct Builder<'f> {
    pub f: &'f mut Func,
    pub region: RegionId,
    pub at: Option<usize>,
    pub loc: Option<Loc>,
}

impl Builder<'_> {
    pub fn value(&mut self, op: Op, operands: &[ValueId], ty: Type) -> ValueId {
        let o = self.f.append(self.region, op, operands, vec![ty], &[], self.loc);
        if let Some(at) = self.at.as_mut() {
            let ops = &mut self.f.region_mut(self.region).ops;
            ops.pop();
            ops.insert(*at, o);
            *at += 1;
        }
        self.f.op(o).results[0]
    }

    pub fn int(&mut self, x: i64, ty: &Type) -> ValueId {
        self.value(Op::Constant(Const::Int(x)), &[], ty.clone())
    }

    pub fn binary(&mut self, op: BinOp, a: ValueId, b: ValueId) -> ValueId {
        let ty = self.f.ty(a).clone();
        self.value(Op::Binary { op, propagate_nan: false }, &[a, b], ty)
    }

    pub fn cmp(&mut self, p: CmpPred, a: ValueId, b: ValueId) -> ValueId {
        self.value(Op::Cmp(p), &[a, b], Type::scalar(ScalarType::I1))
    }
}

/// The value of `v` when it is an integer constant.
pub(crate) fn const_int(f: &Func, v: ValueId) -> Option<i64> {
    match f.value(v).def {
        ValueDef::Result(p, _) => match f.op(p).op {
            Op::Constant(Const::Int(x)) => Some(x),
            _ => None,
        },
        ValueDef::Arg(..) => None,
    }
}

/// Clones op `x` (and its regions) to the end of region `r`, its operands through `map`; records its results.
pub fn clone_op(f: &mut Func, x: OpId, r: RegionId, map: &mut HashMap<ValueId, ValueId>) -> OpId {
    let xd = f.op(x).clone();
    let operands: Vec<ValueId> = xd.operands.iter().map(|v| *map.get(v).unwrap_or(v)).collect();
    let regions: Vec<RegionId> = xd.regions.iter().map(|&old| clone_region(f, old, map)).collect();
    let types = xd.results.iter().map(|&v| f.ty(v).clone()).collect();
    let c = f.append(r, xd.op.clone(), &operands, types, &regions, xd.loc);
    for (&old, &new) in xd.results.iter().zip(&f.op(c).results.clone()) {
        map.insert(old, new);
        f.values[new.index()].name = f.value(old).name.clone();
    }
    c
}

/// A new region holding copies of region `r`'s arguments and ops, their operands through `map`, which records
/// every copied value (the software pipeliner copies stage-0 branches into the loop's prologue with it).
pub fn clone_region(f: &mut Func, r: RegionId, map: &mut HashMap<ValueId, ValueId>) -> RegionId {
    let new = f.new_region();
    for a in f.region(r).args.clone() {
        let (ty, name) = (f.ty(a).clone(), f.value(a).name.clone());
        let n = f.add_region_arg(new, ty, name);
        map.insert(a, n);
    }
    for x in f.region(r).ops.clone() {
        clone_op(f, x, new, map);
    }
    new
}
