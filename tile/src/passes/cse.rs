//! Common-subexpression elimination: a pure, region-free op identical to one that dominates it (same op and
//! attributes, same operands, same result types) is replaced by the earlier one. Values defined in an
//! enclosing region dominate the nested regions, so the table is scoped by region.

use std::collections::HashMap;

use crate::ir::{Func, RegionId, ValueId};

pub fn cse(f: &mut Func) -> bool {
    let mut scopes: Vec<HashMap<String, Vec<ValueId>>> = vec![HashMap::new()];
    let mut replaced = HashMap::new();
    walk(f, f.body, &mut scopes, &mut replaced);
    f.replace_uses(&replaced);
    !replaced.is_empty()
}

fn walk(
    f: &Func,
    r: RegionId,
    scopes: &mut Vec<HashMap<String, Vec<ValueId>>>,
    replaced: &mut HashMap<ValueId, ValueId>,
) {
    for &o in &f.region(r).ops {
        let d = f.op(o);
        if d.op.is_pure() && d.regions.is_empty() && !d.results.is_empty() {
            let operands: Vec<String> =
                d.operands.iter().map(|&v| replaced.get(&v).unwrap_or(&v).to_string()).collect();
            let types: Vec<String> = d.results.iter().map(|&v| f.ty(v).to_string()).collect();
            let key = format!("{:?}|{}|{}", d.op, operands.join(","), types.join(","));
            if let Some(prev) = scopes.iter().rev().find_map(|s| s.get(&key)) {
                replaced.extend(d.results.iter().copied().zip(prev.iter().copied()));
                continue;
            }
            scopes.last_mut().unwrap().insert(key, d.results.to_vec());
        }
        for (i, &child) in d.regions.iter().enumerate() {
            if i > 0 && matches!(d.op, crate::ops::Op::WarpSpecialize(_)) {
                // A worker partition is isolated from above: nothing outside may stand in for its values.
                walk(f, child, &mut vec![HashMap::new()], replaced);
                continue;
            }
            scopes.push(HashMap::new());
            walk(f, child, scopes, replaced);
            scopes.pop();
        }
    }
}
