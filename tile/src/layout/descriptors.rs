//! Tensor descriptors lowered to pointer tiles: the auto-mode path for `desc.load` / `desc.store`.
//!
//! `desc_load d, o0..o(r-1)` of a `B0 x .. x B(r-1)` block becomes the masked `load` that reads the same
//! elements: pointers `base + Σ (o_i + arange(B_i)) · stride_i` and mask `0 ≤ o_i + arange(B_i) < shape_i` for
//! every dim, with `other` = 0 (or NaN for `padding="nan"`), which is exactly the TMA semantics the
//! interpreter implements (out-of-bounds elements read as padding and are never written). `desc_store` becomes
//! the masked `store`. The last dim's stride is taken as 1: a tensor descriptor requires a contiguous last
//! dim (TMA has no stride for it; the interpreter rejects any other value), and knowing it lets coalescing give
//! the accesses 16-byte vectors. Index math is in i64, as the strides are.
//!
//! This is the portable lowering (what Triton does where TMA is unavailable). On sm_90a and newer, accesses of
//! descriptors with a tensor map whose blocks TMA can copy ([`crate::tma::usable`]: host descriptors, and those
//! the kernel makes once per program) are left for `tessel_sched::tma_copies` (after the software pipeliner,
//! which issues its own TMA loads); descriptors made in loops or branches are read and written here.

use crate::ir::{Cursor, Func, OpId, ValueId};
use crate::ops::{BinOp, CmpPred, Const, Op};
use crate::types::{Elem, ScalarType, Type};

/// Why a descriptor access cannot be lowered to pointer ops.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DescriptorError {
    /// The access's operand 0 (of op `op`) is no tensor descriptor.
    NotADescriptor { op: &'static str },
    /// The descriptor is not made by a `make_tensor_desc` in the kernel.
    NotMade { op: &'static str },
    /// A descriptor whose block has another rank than its tensor.
    Rank { rank: usize, block: usize },
}

impl std::fmt::Display for DescriptorError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DescriptorError::NotADescriptor { op } => write!(f, "{op}: operand 0 is not a tensor descriptor"),
            DescriptorError::NotMade { op } => {
                write!(f, "{op}: the descriptor is not formed by a `make_tensor_desc` in the kernel")
            }
            DescriptorError::Rank { rank, block } => {
                write!(f, "descriptor of rank {rank} with a block of rank {block}")
            }
        }
    }
}

impl std::error::Error for DescriptorError {}

/// Rewrites every `desc_load` / `desc_store` of `f` into pointer loads/stores and removes the then-unused
/// `make_tensor_desc` ops; returns whether anything changed. Fails when a descriptor is not formed by a
/// `make_tensor_desc` in the kernel.
pub fn lower_descriptors(f: &mut Func) -> Result<bool, DescriptorError> {
    // Accesses TMA can make stay: `tessel_sched::tma_copies` lowers them once the pipeliner has taken its loads.
    let accesses: Vec<OpId> = f
        .all_ops()
        .into_iter()
        .filter(|&o| matches!(f.op(o).op, Op::DescLoad | Op::DescStore))
        .filter(|&o| !crate::tma::usable(f, f.op(o).operands[0]))
        .collect();
    let changed = !accesses.is_empty();
    for o in accesses {
        lower_access(f, o)?;
    }
    let counts = f.use_counts();
    for o in f.all_ops() {
        if matches!(f.op(o).op, Op::MakeTensorDesc { .. }) && counts[f.op(o).results[0].index()] == 0 {
            f.unlink(o);
        }
    }
    Ok(changed)
}

impl Cursor<'_> {
    fn binary(&mut self, op: BinOp, a: ValueId, b: ValueId) -> ValueId {
        let ty = self.f.ty(a).clone();
        self.op(Op::Binary { op, propagate_nan: false }, &[a, b], ty)
    }

    fn cmp(&mut self, p: CmpPred, a: ValueId, b: ValueId) -> ValueId {
        let ty = self.f.ty(a).with_elem(Elem::Scalar(ScalarType::I1));
        self.op(Op::Cmp(p), &[a, b], ty)
    }

    fn splat(&mut self, s: ValueId, shape: &[u32]) -> ValueId {
        let elem = self.f.ty(s).elem().expect("a scalar");
        self.op(Op::Splat, &[s], Type::tensor(shape, elem))
    }

    /// A 1-D tensor along dim `d` made rank `shape.len()` (size 1 elsewhere), then broadcast to `shape`.
    fn along(&mut self, mut v: ValueId, d: usize, shape: &[u32]) -> ValueId {
        let elem = self.f.ty(v).elem().expect("a tensor");
        let mut cur: Vec<u32> = vec![shape[d]];
        for axis in 0..shape.len() {
            if axis == d {
                continue;
            }
            cur.insert(axis, 1);
            v = self.op(Op::ExpandDims { axis: axis as u32 }, &[v], Type::tensor(&cur, elem));
        }
        if shape.len() > 1 {
            v = self.op(Op::Broadcast, &[v], Type::tensor(shape, elem));
        }
        v
    }
}

fn lower_access(f: &mut Func, o: OpId) -> Result<(), DescriptorError> {
    let data = f.op(o).clone();
    let is_load = matches!(data.op, Op::DescLoad);
    let desc = data.operands[0];
    let Type::TensorDesc { elem, block_shape } = f.ty(desc).clone() else {
        return Err(DescriptorError::NotADescriptor { op: data.op.name() });
    };
    let Some(maker) = f.all_ops().into_iter().find(|&m| f.op(m).results.first() == Some(&desc)) else {
        return Err(DescriptorError::NotMade { op: data.op.name() });
    };
    let (Op::MakeTensorDesc { rank, padding, .. }, m) = (f.op(maker).op.clone(), f.op(maker).operands.clone()) else {
        return Err(DescriptorError::NotMade { op: data.op.name() });
    };
    let rank = rank as usize;
    if block_shape.len() != rank {
        return Err(DescriptorError::Rank { rank, block: block_shape.len() });
    }
    let (base, sizes, strides) = (m[0], m[1..1 + rank].to_vec(), m[1 + rank..1 + 2 * rank].to_vec());
    let offsets = data.operands[if is_load { 1 } else { 2 }..].to_vec();
    let shape: Vec<u32> = block_shape.to_vec();
    let i32t = |s: &[u32]| Type::tensor(s, Elem::Scalar(ScalarType::I32));
    let i64t = |s: &[u32]| Type::tensor(s, Elem::Scalar(ScalarType::I64));

    let mut c = Cursor { f, anchor: o };
    let (mut offset, mut mask) = (None, None);
    for d in 0..rank {
        let n = [shape[d]];
        let idx = c.op(Op::Arange { start: 0, end: shape[d] as i32 }, &[], i32t(&n));
        let start = c.splat(offsets[d], &n);
        let coord = c.binary(BinOp::Add, start, idx);
        let zero = c.constant(Const::Int(0), i32t(&n));
        let size = c.splat(sizes[d], &n);
        let (ge, lt) = (c.cmp(CmpPred::Ge, coord, zero), c.cmp(CmpPred::Lt, coord, size));
        let inside = c.binary(BinOp::And, ge, lt);
        let mut term = c.op(Op::Cast, &[coord], i64t(&n));
        if d + 1 < rank {
            let stride = c.splat(strides[d], &n);
            term = c.binary(BinOp::Mul, term, stride);
        }
        let (term, inside) = (c.along(term, d, &shape), c.along(inside, d, &shape));
        offset = Some(offset.map_or(term, |acc| c.binary(BinOp::Add, acc, term)));
        mask = Some(mask.map_or(inside, |acc| c.binary(BinOp::And, acc, inside)));
    }
    let (offset, mask) = (offset.expect("rank ≥ 1"), mask.expect("rank ≥ 1"));
    let ptr_elem = c.f.ty(base).elem().expect("a pointer");
    let base_tile = c.splat(base, &shape);
    let ptrs = c.op(Op::AddPtr, &[base_tile, offset], Type::tensor(&shape, ptr_elem));
    if is_load {
        let pad = match (elem.is_float(), padding.as_str()) {
            (true, "nan") => Const::Float(f64::NAN),
            (true, _) => Const::Float(0.0),
            (false, _) => Const::Int(0),
        };
        let other = c.constant(pad, Type::tensor(&shape, Elem::Scalar(elem)));
        let load = Op::Load { cache: String::new(), evict: String::new(), volatile: false };
        let v = c.op(load, &[ptrs, mask, other], Type::tensor(&shape, Elem::Scalar(elem)));
        c.f.replace_all_uses(data.results[0], v);
    } else {
        let store = Op::Store { cache: String::new(), evict: String::new() };
        c.insert(store, &[ptrs, data.operands[1], mask], vec![]);
    }
    let f = c.f;
    f.unlink(o);
    Ok(())
}
