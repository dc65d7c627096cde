//! The text form of ops, both ways: [`Op::name`] (from [`crate::op_facts`]'s table) and [`Op::attrs`] give an
//! op's name and attributes as the printer writes them, [`Op::from_parts`] rebuilds the op from them (an op
//! without attributes by the table's name, [`crate::op_facts::PLAIN`]), reporting missing, mistyped and
//! unexpected attributes.

use crate::ops::*;

type Attrs = Vec<(&'static str, Attr)>;

/// Why a name and attributes are no op ([`Op::from_parts`]).
#[derive(Clone, Debug, PartialEq)]
pub enum OpTextError {
    UnknownOp(String),
    /// `op` needs attribute `key`.
    MissingAttr {
        op: String,
        key: String,
    },
    /// Attribute `key` of `op` is not `want` (`an integer`, `a word`...).
    AttrKind {
        op: String,
        key: String,
        want: &'static str,
        got: Attr,
    },
    /// `op` has no attribute `key`.
    UnknownAttr {
        op: String,
        key: String,
    },
    /// A word attribute (`what`: predicate, atomic op, input precision) that is none of `valid`.
    UnknownWord {
        what: &'static str,
        got: String,
        valid: &'static [&'static str],
    },
    /// `constant` without a number.
    ConstantValue,
    /// A `layout` attribute that is no NVMMA shared layout.
    BadLayout(String),
    /// A list attribute of `op` that holds a negative number.
    Negative {
        op: String,
        key: String,
        value: i64,
    },
}

impl std::fmt::Display for OpTextError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OpTextError::UnknownOp(name) => write!(f, "unknown op `{name}`"),
            OpTextError::MissingAttr { op, key } => write!(f, "`{op}` needs attribute `{key}`"),
            OpTextError::AttrKind { op, key, want, got } => {
                write!(f, "`{op}`: attribute `{key}` must be {want}, got `{got}`")
            }
            OpTextError::UnknownAttr { op, key } => write!(f, "`{op}` has no attribute `{key}`"),
            OpTextError::UnknownWord { what, got, valid } => {
                write!(f, "unknown {what} `{got}` (expected one of: {})", valid.join(", "))
            }
            OpTextError::ConstantValue => f.write_str("`constant` needs `value = <number>`"),
            OpTextError::BadLayout(text) => write!(f, "`layout = \"{text}\"` is not an NVMMASharedLayout"),
            OpTextError::Negative { op, key, value } => write!(f, "`{op}`: `{key}` has {value}"),
        }
    }
}

impl std::error::Error for OpTextError {}

fn word(s: &str) -> Attr {
    Attr::Word(s.to_string())
}

impl Op {
    /// The attributes, in printing order; defaults are omitted.
    pub fn attrs(&self) -> Attrs {
        let mut a: Attrs = Vec::new();
        let opt_str = |a: &mut Attrs, k: &'static str, v: &str| {
            if !v.is_empty() {
                a.push((k, word(v)));
            }
        };
        match self {
            Op::Constant(Const::Int(v)) => a.push(("value", Attr::Int(*v))),
            Op::Constant(Const::Float(v)) => a.push(("value", Attr::Float(*v))),
            Op::ProgramId(axis) | Op::NumPrograms(axis) | Op::ClcProgramId(axis) => {
                a.push(("axis", Attr::Int(*axis as i64)))
            }
            Op::Arange { start, end } => {
                a.push(("start", Attr::Int(*start as i64)));
                a.push(("end", Attr::Int(*end as i64)));
            }
            Op::Binary { propagate_nan: true, .. } | Op::Clamp { propagate_nan: true } => {
                a.push(("propagate_nan", Attr::Bool(true)))
            }
            Op::Cmp(p) => a.push(("pred", word(p.word()))),
            Op::ExpandDims { axis } => a.push(("axis", Attr::Int(*axis as i64))),
            Op::Reshape { can_reorder: true } => a.push(("can_reorder", Attr::Bool(true))),
            Op::Permute { order } => a.push(("order", Attr::Ints(order.iter().map(|&x| x as i64).collect()))),
            Op::Load { cache, evict, volatile } => {
                opt_str(&mut a, "cache", cache);
                opt_str(&mut a, "evict", evict);
                if *volatile {
                    a.push(("volatile", Attr::Bool(true)));
                }
            }
            Op::Store { cache, evict } => {
                opt_str(&mut a, "cache", cache);
                opt_str(&mut a, "evict", evict);
            }
            Op::Atomic { op, sem, scope } => {
                a.push(("op", word(op.word())));
                opt_str(&mut a, "sem", sem);
                opt_str(&mut a, "scope", scope);
            }
            Op::AtomicCas { sem, scope } => {
                opt_str(&mut a, "sem", sem);
                opt_str(&mut a, "scope", scope);
            }
            Op::Dot { precision, max_num_imprecise_acc }
            | Op::WarpGroupDot { precision, max_num_imprecise_acc, .. } => {
                a.push(("precision", word(precision.word())));
                if *max_num_imprecise_acc != 0 {
                    a.push(("max_num_imprecise_acc", Attr::Int(*max_num_imprecise_acc as i64)));
                }
                if let Op::WarpGroupDot { is_async: true, .. } = self {
                    a.push(("is_async", Attr::Bool(true)));
                }
            }
            Op::WarpGroupDotWait { pending } | Op::AsyncWait { pending } => {
                a.push(("pending", Attr::Int(*pending as i64)))
            }
            Op::TmaStoreWait { pending, writes } => {
                a.push(("pending", Attr::Int(*pending as i64)));
                if *writes {
                    a.push(("writes", Attr::Bool(true)));
                }
            }
            Op::MBarrierInit { count } => a.push(("count", Attr::Int(*count as i64))),
            Op::MBarrierArrive { count, per_warpgroup, cta_mask } => {
                a.push(("count", Attr::Int(*count as i64)));
                if *per_warpgroup {
                    a.push(("per_warpgroup", Attr::Bool(true)));
                }
                if *cta_mask != 0 {
                    a.push(("cta_mask", Attr::Int(*cta_mask as i64)));
                }
            }
            Op::MBarrierExpect { bytes } => a.push(("bytes", Attr::Int(*bytes as i64))),
            Op::AsyncCopyMBarrierArrive { arrivals } => a.push(("arrivals", Attr::Int(*arrivals as i64))),
            Op::Reduce { axis } => a.push(("axis", Attr::Int(*axis as i64))),
            Op::Scan { axis, reverse } => {
                a.push(("axis", Attr::Int(*axis as i64)));
                if *reverse {
                    a.push(("reverse", Attr::Bool(true)));
                }
            }
            Op::For(l) => {
                if let Some(n) = l.num_stages {
                    a.push(("num_stages", Attr::Int(n as i64)));
                }
                if let Some(n) = l.loop_unroll_factor {
                    a.push(("loop_unroll_factor", Attr::Int(n as i64)));
                }
                for (k, v) in [
                    ("warp_specialize", l.warp_specialize),
                    ("flatten", l.flatten),
                    ("disallow_acc_multi_buffer", l.disallow_acc_multi_buffer),
                ] {
                    if v {
                        a.push((k, Attr::Bool(true)));
                    }
                }
            }
            Op::MultipleOf(v) | Op::MaxContiguous(v) | Op::MaxConstancy(v) => a.push(("values", Attr::Ints(v.clone()))),
            Op::Print { prefix, hex } => {
                a.push(("prefix", Attr::Str(prefix.clone())));
                if *hex {
                    a.push(("hex", Attr::Bool(true)));
                }
            }
            Op::Assert { message } => a.push(("message", Attr::Str(message.clone()))),
            Op::TmaLoadIm2col { rank } => a.push(("rank", Attr::Int(*rank as i64))),
            Op::TmaLoad { multicast: true } | Op::TmaGather { multicast: true } => {
                a.push(("multicast", Attr::Bool(true)))
            }
            Op::FenceAsyncShared { cluster: true } => a.push(("cluster", Attr::Bool(true))),
            Op::Tcgen05Commit { multicast } if *multicast != 0 => a.push(("multicast", Attr::Int(*multicast as i64))),
            Op::MakeTensorDesc { rank, padding, layout } => {
                a.push(("rank", Attr::Int(*rank as i64)));
                opt_str(&mut a, "padding", padding);
                if let Some(l) = layout {
                    a.push(("layout", Attr::Str(l.to_string())));
                }
            }
            Op::MakeTensorDescIm2col { rank, padding } => {
                a.push(("rank", Attr::Int(*rank as i64)));
                opt_str(&mut a, "padding", padding);
            }
            Op::Gather { axis } => a.push(("axis", Attr::Int(*axis as i64))),
            Op::Histogram { num_bins } => a.push(("num_bins", Attr::Int(*num_bins as i64))),
            Op::InlineAsm { asm, constraints, pure, pack } => {
                a.push(("asm", Attr::Str(asm.clone())));
                a.push(("constraints", Attr::Str(constraints.clone())));
                a.push(("pure", Attr::Bool(*pure)));
                a.push(("pack", Attr::Int(*pack as i64)));
            }
            Op::MemDescPermute { order } => a.push(("order", Attr::Ints(order.iter().map(|&x| x as i64).collect()))),
            Op::MemDescSlice { dim, start } => {
                a.push(("dim", Attr::Int(*dim as i64)));
                a.push(("start", Attr::Int(*start as i64)));
            }
            Op::Tcgen05MmaScaled { a_format, b_format } | Op::DotScaled { a_format, b_format } => {
                a.push(("a_format", word(a_format.word())));
                a.push(("b_format", word(b_format.word())));
            }
            Op::WarpSpecialize(w) => {
                let ints = |v: &[u32]| Attr::Ints(v.iter().map(|&x| x as i64).collect());
                a.push(("worker_num_warps", ints(&w.worker_num_warps)));
                for (k, v) in
                    [("worker_num_regs", &w.worker_num_regs), ("warp_starts", &w.warp_starts), ("regs", &w.regs)]
                {
                    if !v.is_empty() {
                        a.push((k, ints(v)));
                    }
                }
            }
            _ => {}
        }
        a
    }
}

impl Op {
    /// Rebuilds an op from its name and attributes (the inverse of [`Op::name`] + [`Op::attrs`]).
    pub fn from_parts(name: &str, attrs: &[(String, Attr)]) -> Result<Op, OpTextError> {
        let mut bag = AttrBag { name, attrs, used: vec![false; attrs.len()] };
        if let Some(op) = crate::op_facts::PLAIN.iter().find(|op| op.name() == name) {
            bag.finish()?;
            return Ok(op.clone());
        }
        let op = match name {
            "constant" => match bag.take("value")? {
                Some(Attr::Int(v)) => Op::Constant(Const::Int(v)),
                Some(Attr::Float(v)) => Op::Constant(Const::Float(v)),
                Some(Attr::Bool(b)) => Op::Constant(Const::Int(b as i64)),
                _ => return Err(OpTextError::ConstantValue),
            },
            "program_id" => Op::ProgramId(bag.int("axis")? as u32),
            "num_programs" => Op::NumPrograms(bag.int("axis")? as u32),
            "clc_program_id" => Op::ClcProgramId(bag.int("axis")? as u32),
            "arange" => Op::Arange { start: bag.int("start")? as i32, end: bag.int("end")? as i32 },
            "cmp" => {
                let w = bag.word("pred")?;
                Op::Cmp(CmpPred::from_word(&w).ok_or_else(|| unknown("predicate", &w, CmpPred::WORDS))?)
            }
            "clamp" => Op::Clamp { propagate_nan: bag.flag("propagate_nan")? },
            "expand_dims" => Op::ExpandDims { axis: bag.int("axis")? as u32 },
            "reshape" => Op::Reshape { can_reorder: bag.flag("can_reorder")? },
            "permute" => Op::Permute { order: bag.ints("order")?.into_iter().map(|x| x as u32).collect() },
            "load" => Op::Load {
                cache: bag.opt_word("cache")?,
                evict: bag.opt_word("evict")?,
                volatile: bag.flag("volatile")?,
            },
            "store" => Op::Store { cache: bag.opt_word("cache")?, evict: bag.opt_word("evict")? },
            "atomic" => {
                let w = bag.word("op")?;
                let op = AtomicOp::from_word(&w).ok_or_else(|| unknown("atomic op", &w, AtomicOp::WORDS))?;
                Op::Atomic { op, sem: bag.opt_word("sem")?, scope: bag.opt_word("scope")? }
            }
            "atomic_cas" => Op::AtomicCas { sem: bag.opt_word("sem")?, scope: bag.opt_word("scope")? },
            "dot" | "warpgroup_dot" => {
                let w = bag.word("precision")?;
                let precision = InputPrecision::from_word(&w)
                    .ok_or_else(|| unknown("input precision", &w, InputPrecision::WORDS))?;
                let max = bag.opt_int("max_num_imprecise_acc")?.unwrap_or(0) as u32;
                if name == "dot" {
                    Op::Dot { precision, max_num_imprecise_acc: max }
                } else {
                    Op::WarpGroupDot { precision, max_num_imprecise_acc: max, is_async: bag.flag("is_async")? }
                }
            }
            "warpgroup_dot_wait" => Op::WarpGroupDotWait { pending: bag.int("pending")? as u32 },
            "async_wait" => Op::AsyncWait { pending: bag.int("pending")? as u32 },
            "async_copy_mbarrier_arrive" => Op::AsyncCopyMBarrierArrive { arrivals: bag.int("arrivals")? as u32 },
            "mbarrier_init" => Op::MBarrierInit { count: bag.int("count")? as u32 },
            "mbarrier_expect" => Op::MBarrierExpect { bytes: bag.int("bytes")? as u32 },
            "mbarrier_arrive" => {
                let mask = bag.opt_int("cta_mask")?.unwrap_or(0);
                let Ok(cta_mask) = u16::try_from(mask) else {
                    return Err(OpTextError::Negative { op: name.into(), key: "cta_mask".into(), value: mask });
                };
                Op::MBarrierArrive {
                    count: bag.int("count")? as u32,
                    per_warpgroup: bag.flag("per_warpgroup")?,
                    cta_mask,
                }
            }
            "tma_load_im2col" => Op::TmaLoadIm2col { rank: bag.int("rank")? as u32 },
            "tma_load" => Op::TmaLoad { multicast: bag.flag("multicast")? },
            "tma_gather" => Op::TmaGather { multicast: bag.flag("multicast")? },
            "fence_async_shared" => Op::FenceAsyncShared { cluster: bag.flag("cluster")? },
            "tcgen05_commit" => {
                let mask = bag.opt_int("multicast")?.unwrap_or(0);
                let Ok(multicast) = u16::try_from(mask) else {
                    return Err(OpTextError::Negative { op: name.into(), key: "multicast".into(), value: mask });
                };
                Op::Tcgen05Commit { multicast }
            }
            "tma_store_wait" => Op::TmaStoreWait { pending: bag.int("pending")? as u32, writes: bag.flag("writes")? },
            "reduce" => Op::Reduce { axis: bag.int("axis")? as u32 },
            "scan" => Op::Scan { axis: bag.int("axis")? as u32, reverse: bag.flag("reverse")? },
            "for" => Op::For(LoopAttrs {
                num_stages: bag.opt_int("num_stages")?.map(|v| v as u32),
                loop_unroll_factor: bag.opt_int("loop_unroll_factor")?.map(|v| v as u32),
                warp_specialize: bag.flag("warp_specialize")?,
                flatten: bag.flag("flatten")?,
                disallow_acc_multi_buffer: bag.flag("disallow_acc_multi_buffer")?,
            }),
            "multiple_of" => Op::MultipleOf(bag.ints("values")?),
            "max_contiguous" => Op::MaxContiguous(bag.ints("values")?),
            "max_constancy" => Op::MaxConstancy(bag.ints("values")?),
            "print" => Op::Print { prefix: bag.string("prefix")?, hex: bag.flag("hex")? },
            "assert" => Op::Assert { message: bag.string("message")? },
            "make_tensor_desc" => {
                let layout = match Some(bag.string("layout")?).filter(|t| !t.is_empty()) {
                    None => None,
                    Some(text) => match tessel_layouts::expr::parse_layout(&text) {
                        Ok(tessel_layouts::AnyLayout::Shared(tessel_layouts::SharedLayout::Nvmma(l))) => Some(l),
                        _ => return Err(OpTextError::BadLayout(text)),
                    },
                };
                Op::MakeTensorDesc { rank: bag.int("rank")? as u32, padding: bag.opt_word("padding")?, layout }
            }
            "make_tensor_desc_im2col" => {
                Op::MakeTensorDescIm2col { rank: bag.int("rank")? as u32, padding: bag.opt_word("padding")? }
            }
            "gather" => Op::Gather { axis: bag.int("axis")? as u32 },
            "histogram" => Op::Histogram { num_bins: bag.int("num_bins")? as u32 },
            "inline_asm" => Op::InlineAsm {
                asm: bag.string("asm")?,
                constraints: bag.string("constraints")?,
                pure: bag.flag("pure")?,
                pack: bag.opt_int("pack")?.unwrap_or(1) as u32,
            },
            "memdesc_permute" => {
                Op::MemDescPermute { order: bag.ints("order")?.into_iter().map(|x| x as u32).collect() }
            }
            "memdesc_slice" => Op::MemDescSlice { dim: bag.int("dim")? as u32, start: bag.int("start")? as u32 },
            "tcgen05_mma_scaled" | "dot_scaled" => {
                let mut format = |k: &str| -> Result<MxFormat, OpTextError> {
                    let w = bag.word(k)?;
                    MxFormat::from_word(&w).ok_or_else(|| unknown("block-scaled format", &w, MxFormat::WORDS))
                };
                let (a_format, b_format) = (format("a_format")?, format("b_format")?);
                if name == "dot_scaled" {
                    Op::DotScaled { a_format, b_format }
                } else {
                    Op::Tcgen05MmaScaled { a_format, b_format }
                }
            }
            "warp_specialize" => {
                let mut ints = |k: &str, required: bool| -> Result<Vec<u32>, OpTextError> {
                    let v = if required { bag.ints(k)? } else { bag.opt_ints(k)? };
                    let negative = |value| OpTextError::Negative { op: name.into(), key: k.into(), value };
                    v.into_iter().map(|x| u32::try_from(x).map_err(|_| negative(x))).collect()
                };
                Op::WarpSpecialize(WarpSpec {
                    worker_num_warps: ints("worker_num_warps", true)?,
                    worker_num_regs: ints("worker_num_regs", false)?,
                    warp_starts: ints("warp_starts", false)?,
                    regs: ints("regs", false)?,
                })
            }
            other => {
                if let Some(op) = BinOp::from_word(other) {
                    Op::Binary { op, propagate_nan: bag.flag("propagate_nan")? }
                } else if let Some(op) = UnOp::from_word(other) {
                    Op::Unary(op)
                } else {
                    return Err(OpTextError::UnknownOp(other.into()));
                }
            }
        };
        bag.finish()?;
        Ok(op)
    }
}

fn unknown(what: &'static str, got: &str, valid: &'static [&'static str]) -> OpTextError {
    OpTextError::UnknownWord { what, got: got.into(), valid }
}

/// Attribute lookup that reports missing, mistyped and unexpected attributes.
struct AttrBag<'a> {
    name: &'a str,
    attrs: &'a [(String, Attr)],
    used: Vec<bool>,
}

impl AttrBag<'_> {
    fn missing(&self, key: &str) -> OpTextError {
        OpTextError::MissingAttr { op: self.name.into(), key: key.into() }
    }

    fn kind(&self, key: &str, want: &'static str, got: Attr) -> OpTextError {
        OpTextError::AttrKind { op: self.name.into(), key: key.into(), want, got }
    }

    fn take(&mut self, key: &str) -> Result<Option<Attr>, OpTextError> {
        match self.attrs.iter().position(|(k, _)| k == key) {
            Some(i) => {
                self.used[i] = true;
                Ok(Some(self.attrs[i].1.clone()))
            }
            None => Ok(None),
        }
    }

    fn opt_int(&mut self, key: &str) -> Result<Option<i64>, OpTextError> {
        match self.take(key)? {
            None => Ok(None),
            Some(Attr::Int(v)) => Ok(Some(v)),
            Some(other) => Err(self.kind(key, "an integer", other)),
        }
    }

    fn int(&mut self, key: &str) -> Result<i64, OpTextError> {
        self.opt_int(key)?.ok_or_else(|| self.missing(key))
    }

    fn flag(&mut self, key: &str) -> Result<bool, OpTextError> {
        match self.take(key)? {
            None => Ok(false),
            Some(Attr::Bool(b)) => Ok(b),
            Some(other) => Err(self.kind(key, "true or false", other)),
        }
    }

    fn opt_word(&mut self, key: &str) -> Result<String, OpTextError> {
        match self.take(key)? {
            None => Ok(String::new()),
            Some(Attr::Word(w)) | Some(Attr::Str(w)) => Ok(w),
            // The text form reads the words `nan` and `inf` as numbers; as word attributes they are words.
            Some(Attr::Float(f)) if f.is_nan() => Ok("nan".into()),
            Some(Attr::Float(f)) if f == f64::INFINITY => Ok("inf".into()),
            Some(other) => Err(self.kind(key, "a word", other)),
        }
    }

    fn word(&mut self, key: &str) -> Result<String, OpTextError> {
        let w = self.opt_word(key)?;
        if w.is_empty() { Err(self.missing(key)) } else { Ok(w) }
    }

    fn string(&mut self, key: &str) -> Result<String, OpTextError> {
        match self.take(key)? {
            Some(Attr::Str(s)) => Ok(s),
            None => Ok(String::new()),
            Some(other) => Err(self.kind(key, "a string", other)),
        }
    }

    fn ints(&mut self, key: &str) -> Result<Vec<i64>, OpTextError> {
        match self.take(key)? {
            Some(Attr::Ints(v)) => Ok(v),
            None => Err(self.missing(key)),
            Some(other) => Err(self.kind(key, "a list of integers", other)),
        }
    }

    fn opt_ints(&mut self, key: &str) -> Result<Vec<i64>, OpTextError> {
        if self.attrs.iter().any(|(k, _)| k == key) { self.ints(key) } else { Ok(Vec::new()) }
    }

    fn finish(self) -> Result<(), OpTextError> {
        match self.attrs.iter().zip(&self.used).find(|(_, u)| !**u) {
            Some(((k, _), _)) => Err(OpTextError::UnknownAttr { op: self.name.into(), key: k.clone() }),
            None => Ok(()),
        }
    }
}
