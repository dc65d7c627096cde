//! The IR's storage: functions own arenas of values, ops and regions, addressed by small indices.
//!
//! Control flow is structured: a region is one block of ops ending in a terminator, with block arguments
//! (loop induction variables and carried values, combine-function arguments). An op's results are defined
//! once; uses are by `ValueId`. Ops are never deleted from the arena — passes unlink them from their region.

use std::collections::{HashMap, HashSet};

use smallvec::SmallVec;

use crate::ops::Op;
use crate::types::Type;

macro_rules! id_type {
    ($name:ident, $prefix:literal) => {
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(pub u32);
        impl $name {
            pub fn index(self) -> usize {
                self.0 as usize
            }
        }
        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, concat!($prefix, "{}"), self.0)
            }
        }
    };
}

id_type!(ValueId, "%");
id_type!(OpId, "op");
id_type!(RegionId, "region");

/// A byte range in the kernel source, for diagnostics that point back at the user's code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Loc {
    pub start: u32,
    pub end: u32,
}

/// Where a value comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValueDef {
    /// Result `index` of an op.
    Result(OpId, u32),
    /// Argument `index` of a region (function arguments are the body region's arguments).
    Arg(RegionId, u32),
}

#[derive(Clone, Debug)]
pub struct ValueData {
    pub ty: Type,
    pub def: ValueDef,
    /// A name from the source (`offsets`, `acc`) used when printing; the printer makes names unique.
    pub name: Option<String>,
}

#[derive(Clone, Debug)]
pub struct OpData {
    pub op: Op,
    pub operands: SmallVec<[ValueId; 4]>,
    pub results: SmallVec<[ValueId; 2]>,
    pub regions: SmallVec<[RegionId; 2]>,
    /// The region this op sits in (`None` once unlinked).
    pub parent: Option<RegionId>,
    pub loc: Option<Loc>,
}

#[derive(Clone, Debug, Default)]
pub struct RegionData {
    pub args: Vec<ValueId>,
    pub ops: Vec<OpId>,
    /// The op owning this region (`None` for a function body).
    pub parent: Option<OpId>,
}

/// A kernel: its signature, its attributes, and the arenas.
#[derive(Clone, Debug)]
pub struct Func {
    pub name: String,
    pub body: RegionId,
    pub values: Vec<ValueData>,
    pub ops: Vec<OpData>,
    pub regions: Vec<RegionData>,
    /// The architecture the kernel is compiled for.
    pub target: crate::target::Target,
    /// The compile options (`num_warps`, `num_stages`, ..., `fp_fusion`).
    pub config: crate::target::KernelConfig,
    /// What the stages know of the kernel besides its ops, target and compile options.
    pub attrs: FuncAttrs,
    /// Why a pass lowered an op otherwise than the target could (`dot_scaled, not block_scale: ...`), in the
    /// order found: the text form prints each as a `// note:` comment line after the signature (the parser
    /// skips comments, so they do not round-trip), and codegen writes each into the PTX as a comment.
    pub notes: Vec<String>,
}

/// The facts about a kernel that one stage learns or is told and later stages read, each a typed field. The text
/// form prints those that differ from the default after the compile options, in this order: `gluon = true`,
/// `flattened = true`, `divisible_by_16 = [i, ...]` (`tile::parse` reads them back); the compile option
/// `enable_fp_fusion = false` ([`crate::KernelConfig::fp_fusion`]) prints between the last two.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FuncAttrs {
    /// A `@gluon.jit` kernel (set by the elaborator): its layouts, shared memory and schedule are the author's, so
    /// no pass chooses them: the software pipeliner leaves its loops as written, and layout assignment only checks
    /// a kernel whose tensors all carry layouts.
    pub gluon: bool,
    /// A loop nest was fused into one loop (`flatten=True`; set by `passes::flatten_loops`): the compile pipeline
    /// falls back to the nest as written when the fused loop does not fit in shared memory.
    pub flattened: bool,
    /// The arguments, by index, known to be multiples of 16 (pointers: 16-byte aligned), as Triton's
    /// `tt.divisibility = 16` specialization; read by axis analysis. The elaborator marks such arguments with a
    /// `multiple_of [16]` at entry instead; this is how a hand-written kernel says it.
    pub divisible_by_16: Vec<u32>,
}

impl Func {
    /// An empty kernel with arguments of the given types.
    pub fn new(name: impl Into<String>, arg_types: impl IntoIterator<Item = (Option<String>, Type)>) -> Func {
        let mut f = Func {
            name: name.into(),
            body: RegionId(0),
            values: Vec::new(),
            ops: Vec::new(),
            regions: vec![RegionData::default()],
            target: crate::target::Target::Sm90a,
            config: crate::target::KernelConfig::default(),
            attrs: FuncAttrs::default(),
            notes: Vec::new(),
        };
        for (name, ty) in arg_types {
            f.add_region_arg(RegionId(0), ty, name);
        }
        f
    }

    pub fn args(&self) -> &[ValueId] {
        &self.regions[self.body.index()].args
    }

    pub fn value(&self, v: ValueId) -> &ValueData {
        &self.values[v.index()]
    }

    pub fn ty(&self, v: ValueId) -> &Type {
        &self.values[v.index()].ty
    }

    pub fn op(&self, o: OpId) -> &OpData {
        &self.ops[o.index()]
    }

    pub fn op_mut(&mut self, o: OpId) -> &mut OpData {
        &mut self.ops[o.index()]
    }

    pub fn region(&self, r: RegionId) -> &RegionData {
        &self.regions[r.index()]
    }

    pub fn region_mut(&mut self, r: RegionId) -> &mut RegionData {
        &mut self.regions[r.index()]
    }

    pub fn new_region(&mut self) -> RegionId {
        self.regions.push(RegionData::default());
        RegionId(self.regions.len() as u32 - 1)
    }

    pub fn add_region_arg(&mut self, r: RegionId, ty: Type, name: Option<String>) -> ValueId {
        let index = self.regions[r.index()].args.len() as u32;
        let v = self.new_value(ty, ValueDef::Arg(r, index), name);
        self.regions[r.index()].args.push(v);
        v
    }

    fn new_value(&mut self, ty: Type, def: ValueDef, name: Option<String>) -> ValueId {
        self.values.push(ValueData { ty, def, name });
        ValueId(self.values.len() as u32 - 1)
    }

    /// Creates an op with results of `result_types` and appends it to region `r`.
    pub fn append(
        &mut self,
        r: RegionId,
        op: Op,
        operands: &[ValueId],
        result_types: Vec<Type>,
        regions: &[RegionId],
        loc: Option<Loc>,
    ) -> OpId {
        let id = OpId(self.ops.len() as u32);
        let results = result_types
            .into_iter()
            .enumerate()
            .map(|(i, ty)| self.new_value(ty, ValueDef::Result(id, i as u32), None))
            .collect();
        self.ops.push(OpData {
            op,
            operands: SmallVec::from_slice(operands),
            results,
            regions: SmallVec::from_slice(regions),
            parent: Some(r),
            loc,
        });
        for &child in regions {
            self.regions[child.index()].parent = Some(id);
        }
        self.regions[r.index()].ops.push(id);
        id
    }

    /// The ops of region `r` and, recursively, of the regions nested in them, in program order.
    pub fn walk(&self, r: RegionId, visit: &mut impl FnMut(OpId)) {
        for &o in &self.regions[r.index()].ops {
            visit(o);
            for &child in &self.ops[o.index()].regions {
                self.walk(child, visit);
            }
        }
    }

    /// Op `o` and the ops of the regions nested in it, in program order.
    pub fn walk_op(&self, o: OpId, visit: &mut impl FnMut(OpId)) {
        visit(o);
        for &child in &self.ops[o.index()].regions {
            self.walk(child, visit);
        }
    }

    /// Every op reachable from the body, in program order.
    pub fn all_ops(&self) -> Vec<OpId> {
        let mut out = Vec::new();
        self.walk(self.body, &mut |o| out.push(o));
        out
    }

    /// Replaces every use of `from` by `to` in the linked ops.
    pub fn replace_all_uses(&mut self, from: ValueId, to: ValueId) {
        for o in self.all_ops() {
            for v in self.ops[o.index()].operands.iter_mut() {
                if *v == from {
                    *v = to;
                }
            }
        }
    }

    /// Replaces every use of each key of `map` by its value (followed to the end: `a → b`, `b → c` replaces `a`
    /// by `c`) in the linked ops, in one walk: a pass replacing many values calls this once rather than
    /// [`Func::replace_all_uses`] per value, which walks the whole function each time.
    pub fn replace_uses(&mut self, map: &HashMap<ValueId, ValueId>) {
        if map.is_empty() {
            return;
        }
        for o in self.all_ops() {
            for v in self.ops[o.index()].operands.iter_mut() {
                *v = resolve(map, *v);
            }
        }
    }

    /// Removes op `o` from its region (its results must be unused).
    pub fn unlink(&mut self, o: OpId) {
        if let Some(r) = self.ops[o.index()].parent.take() {
            self.regions[r.index()].ops.retain(|&x| x != o);
        }
    }

    /// Removes every op of `ops` from its region (their results must be unused), each region rewritten once.
    pub fn unlink_all(&mut self, ops: &HashSet<OpId>) {
        let mut regions: Vec<RegionId> = ops.iter().filter_map(|&o| self.ops[o.index()].parent.take()).collect();
        regions.sort_unstable();
        regions.dedup();
        for r in regions {
            self.regions[r.index()].ops.retain(|x| !ops.contains(x));
        }
    }

    /// How many times each value is used by linked ops.
    pub fn use_counts(&self) -> Vec<u32> {
        let mut counts = vec![0u32; self.values.len()];
        for o in self.all_ops() {
            for v in &self.ops[o.index()].operands {
                counts[v.index()] += 1;
            }
        }
        counts
    }
}

/// Inserts new ops before `anchor`, in order, each at the anchor's source location (the passes that expand one op
/// into several: descriptor accesses into pointer ops, `tma_copies` in tessel-sched).
pub struct Cursor<'f> {
    pub f: &'f mut Func,
    pub anchor: OpId,
}

impl Cursor<'_> {
    /// Inserts `op` before the anchor; returns the new op.
    pub fn insert(&mut self, op: Op, operands: &[ValueId], results: Vec<Type>) -> OpId {
        let region = self.f.op(self.anchor).parent.expect("a linked op");
        let loc = self.f.op(self.anchor).loc;
        let new = self.f.append(region, op, operands, results, &[], loc);
        let ops = &mut self.f.region_mut(region).ops;
        ops.pop();
        let at = ops.iter().position(|&x| x == self.anchor).expect("the anchor is in its region");
        ops.insert(at, new);
        new
    }

    /// Inserts a one-result op before the anchor; returns its result.
    pub fn op(&mut self, op: Op, operands: &[ValueId], ty: Type) -> ValueId {
        let new = self.insert(op, operands, vec![ty]);
        self.f.op(new).results[0]
    }

    pub fn constant(&mut self, c: crate::ops::Const, ty: Type) -> ValueId {
        self.op(Op::Constant(c), &[], ty)
    }
}

/// `v` after the replacements of `map`, followed to the end.
pub fn resolve(map: &HashMap<ValueId, ValueId>, mut v: ValueId) -> ValueId {
    while let Some(&to) = map.get(&v) {
        v = to;
    }
    v
}

/// A compilation unit: the kernels elaborated from one source file for one specialization.
#[derive(Clone, Debug, Default)]
pub struct Module {
    pub funcs: Vec<Func>,
}
