//! Memory builtins: `load`, `store`, atomics, and tensor descriptors (`make_tensor_descriptor`, `desc.load`,
//! `desc.store`), with Triton's rules for masks, `other`, broadcasting and value conversion.

use tessel_tile::ops::{AtomicOp, Op};
use tessel_tile::{Elem, ScalarType, Type};

use crate::elab::args::{Arg, Bound};
use crate::elab::names::TL;
use crate::elab::registry::{Handler, Registry};
use crate::elab::value::{Dtype, Tv, Value};
use crate::elab::{Elab, R};
use crate::span::Span;

const LOAD_SIG: &str = "pointer, mask?, other?, boundary_check?, padding_option?, cache_modifier?, \
                        eviction_policy?, volatile?, cache_policy?";
const STORE_SIG: &str = "pointer, value, mask?, boundary_check?, cache_modifier?, eviction_policy?, cache_policy?";
const ATOMIC_SIG: &str = "pointer, val, mask?, sem?, scope?";

const LOAD_CACHE: &[&str] = &["", ".ca", ".cg", ".cv"];
const STORE_CACHE: &[&str] = &["", ".wb", ".cg", ".cs", ".wt"];
const EVICTION: &[&str] = &["", "evict_normal", "evict_first", "evict_last"];
const SEMS: &[&str] = &["acquire", "release", "acq_rel", "relaxed"];
const SCOPES: &[&str] = &["gpu", "cta", "sys"];

pub(super) fn register(r: &mut Registry) {
    r.add(TL, "load", Handler::Bound(LOAD_SIG, |e, b| Ok(Value::Tensor(e.load(&b, &b.fname, b.span)?))));
    r.add(
        TL,
        "store",
        Handler::Bound(STORE_SIG, |e, b| {
            e.store(&b, &b.fname, b.span)?;
            Ok(Value::None)
        }),
    );
    r.add(TL, "atomic_add", Handler::Bound(ATOMIC_SIG, |e, b| e.atomic_rmw(b, AtomicOp::Add)));
    r.add(TL, "atomic_max", Handler::Bound(ATOMIC_SIG, |e, b| e.atomic_rmw(b, AtomicOp::Max)));
    r.add(TL, "atomic_min", Handler::Bound(ATOMIC_SIG, |e, b| e.atomic_rmw(b, AtomicOp::Min)));
    r.add(TL, "atomic_and", Handler::Bound(ATOMIC_SIG, |e, b| e.atomic_rmw(b, AtomicOp::And)));
    r.add(TL, "atomic_or", Handler::Bound(ATOMIC_SIG, |e, b| e.atomic_rmw(b, AtomicOp::Or)));
    r.add(TL, "atomic_xor", Handler::Bound(ATOMIC_SIG, |e, b| e.atomic_rmw(b, AtomicOp::Xor)));
    r.add(TL, "atomic_xchg", Handler::Bound(ATOMIC_SIG, |e, b| e.atomic_rmw(b, AtomicOp::Xchg)));
    r.add(TL, "atomic_cas", Handler::Bound("pointer, cmp, val, sem?, scope?", |e, b| e.atomic_cas(b)));
    r.add(
        TL,
        "make_tensor_descriptor",
        Handler::Bound("base, shape, strides, block_shape, padding_option?", |e, b| {
            Ok(Value::Tensor(e.make_descriptor(&b, &b.fname, b.span)?))
        }),
    );
    r.add(
        TL,
        "load_tensor_descriptor",
        Handler::Bound("desc, offsets", |e, b| {
            let desc = e.desc_arg(b.req("desc"), &b.fname)?;
            Ok(Value::Tensor(e.desc_load(desc, b.req("offsets"), &b.fname, b.span)?))
        }),
    );
    r.add(
        TL,
        "store_tensor_descriptor",
        Handler::Bound("desc, offsets, value", |e, b| {
            let desc = e.desc_arg(b.req("desc"), &b.fname)?;
            e.desc_store(desc, b.req("offsets"), b.req("value"), &b.fname, b.span)?;
            Ok(Value::None)
        }),
    );
}

impl<'a> Elab<'a> {
    fn atomic_rmw(&mut self, b: Bound<'a>, op: AtomicOp) -> R<Value<'a>> {
        Ok(Value::Tensor(self.atomic(&b, op, &b.fname, b.span)?))
    }

    fn atomic_cas(&mut self, b: Bound<'a>) -> R<Value<'a>> {
        let (fname, span) = (&b.fname, b.span);
        let ptr = self.pointer_arg(b.req("pointer"), fname)?;
        let Some(Elem::Ptr(pointee, _)) = ptr.elem() else { unreachable!() };
        if ![16, 32, 64].contains(&pointee.bits()) {
            return Err(self
                .err(span, format!("`{fname}` supports 16-, 32- and 64-bit elements, got {}", pointee.triton_name())));
        }
        let (sem, scope) = self.sem_scope(&b, fname)?;
        let cmp = self.value_for(b.req("cmp"), &ptr, pointee, fname, "cmp", span)?;
        let val = self.value_for(b.req("val"), &ptr, pointee, fname, "val", span)?;
        let ty = cmp.ty.clone();
        Ok(Value::Tensor(self.emit1(Op::AtomicCas { sem, scope }, &[ptr, cmp, val], ty, span)?))
    }

    fn desc_arg(&self, a: &Arg<'a>, fname: &str) -> R<Tv> {
        match &a.value {
            Value::Tensor(t) if matches!(t.ty, Type::TensorDesc { .. }) => Ok(t.clone()),
            other => Err(self.err(a.span, format!("`{fname}` needs a tensor descriptor, got {}", other.type_name()))),
        }
    }

    fn pointer_arg(&mut self, a: &Arg<'a>, fname: &str) -> R<Tv> {
        let t = self.tensor_arg(a, fname, "pointer")?;
        if !t.elem().is_some_and(Elem::is_ptr) {
            return Err(self.err(a.span, format!("`{fname}` needs a pointer or a tensor of pointers, got {}", t.ty)));
        }
        Ok(t)
    }

    /// A mask operand: `int1`, broadcast with the pointer.
    fn mask_arg(&mut self, a: &Arg<'a>, fname: &str) -> R<Tv> {
        let m = self.tensor_arg(a, fname, "mask")?;
        if m.scalar() != Some(ScalarType::I1) {
            return Err(self.err(a.span, format!("the mask of `{fname}` must be boolean (int1), got {}", m.ty)));
        }
        Ok(m)
    }

    fn modifier(&self, b: &Bound<'a>, key: &str, valid: &[&str], fname: &str) -> R<String> {
        let Some(a) = b.opt(key) else { return Ok(String::new()) };
        let s = self.const_str(a, fname, key)?;
        if !valid.contains(&s.as_str()) {
            let list: Vec<String> = valid.iter().filter(|v| !v.is_empty()).map(|v| format!("\"{v}\"")).collect();
            return Err(
                self.err(a.span, format!("unknown {key} \"{s}\" for `{fname}` (expected one of {})", list.join(", ")))
            );
        }
        Ok(s.trim_start_matches('.').to_string())
    }

    fn load(&mut self, b: &Bound<'a>, fname: &str, span: Span) -> R<Tv> {
        let mut ptr = self.pointer_arg(b.req("pointer"), fname)?;
        if let Some(a) = b.opt("boundary_check").filter(|a| !matches!(&a.value, Value::Tuple(t) if t.is_empty())) {
            return Err(self
                .err(a.span, "`boundary_check` applies to block pointers, which tessel does not support; use a mask"));
        }
        if let Some(a) = b.opt("padding_option").filter(|a| !matches!(&a.value, Value::Str(s) if s.is_empty())) {
            return Err(self.err(a.span, "`padding_option` applies to block pointers; use `other` with a mask"));
        }
        let mask = match b.opt("mask") {
            Some(m) => Some(self.mask_arg(m, fname)?),
            None => None,
        };
        if let (None, Some(o)) = (&mask, b.opt("other")) {
            return Err(self.err_hint(
                o.span,
                "`other` given without `mask`",
                "`other` is the value of masked-off lanes; add `mask=`",
            ));
        }
        let cache = self.modifier(b, "cache_modifier", LOAD_CACHE, fname)?;
        let evict = self.modifier(b, "eviction_policy", EVICTION, fname)?;
        let volatile = match b.opt("volatile") {
            Some(a) => self.const_bool(a, fname, "volatile")?,
            None => false,
        };
        let Some(Elem::Ptr(pointee, _)) = ptr.elem() else { unreachable!() };
        let mut operands = Vec::new();
        if let Some(m) = mask {
            if !ptr.is_block() && m.is_block() {
                let span = b.opt("mask").map_or(span, |a| a.span);
                return Err(self.err(span, format!("the mask is a tensor ({}) but the pointer is a scalar", m.ty)));
            }
            let (p, m) = self.broadcast_pair(ptr, m, span)?;
            ptr = p;
            operands.push(m);
        }
        if let Some(o) = b.opt("other") {
            let other = match &o.value {
                v if v.is_number() => self.scalar_constant(v, pointee, o.span)?,
                _ => {
                    let other = self.tensor_arg(o, fname, "other")?;
                    if !ptr.is_block() && other.is_block() {
                        return Err(
                            self.err(o.span, format!("`other` is a tensor ({}) but the pointer is a scalar", other.ty))
                        );
                    }
                    self.cast(other, Dtype::Scalar(pointee), o.span)?
                }
            };
            let (p, other) = self.broadcast_pair(ptr, other, o.span)?;
            ptr = p;
            if let Some(m) = operands.first_mut() {
                *m = self.broadcast_like(m.clone(), &ptr.ty.with_elem(Elem::Scalar(ScalarType::I1)), span)?;
            }
            operands.push(other);
        }
        let mut all = vec![ptr.clone()];
        all.extend(operands);
        let ty = ptr.ty.with_elem(Elem::Scalar(pointee));
        self.emit1(Op::Load { cache, evict, volatile }, &all, ty, span)
    }

    fn store(&mut self, b: &Bound<'a>, fname: &str, span: Span) -> R<()> {
        let ptr = self.pointer_arg(b.req("pointer"), fname)?;
        if let Some(a) = b.opt("boundary_check").filter(|a| !matches!(&a.value, Value::Tuple(t) if t.is_empty())) {
            return Err(self
                .err(a.span, "`boundary_check` applies to block pointers, which tessel does not support; use a mask"));
        }
        let cache = self.modifier(b, "cache_modifier", STORE_CACHE, fname)?;
        let evict = self.modifier(b, "eviction_policy", EVICTION, fname)?;
        let Some(Elem::Ptr(pointee, _)) = ptr.elem() else { unreachable!() };
        let value = self.value_for(b.req("value"), &ptr, pointee, fname, "value", span)?;
        let mut operands = vec![ptr.clone(), value];
        if let Some(m) = b.opt("mask") {
            let mask = self.mask_arg(m, fname)?;
            if !ptr.is_block() && mask.is_block() {
                return Err(self.err(m.span, format!("the mask is a tensor ({}) but the pointer is a scalar", mask.ty)));
            }
            operands.push(self.broadcast_like(mask, &ptr.ty.with_elem(Elem::Scalar(ScalarType::I1)), m.span)?);
        }
        self.emit(Op::Store { cache, evict }, &operands, vec![], span)?;
        Ok(())
    }

    /// A value stored through `ptr`: converted to the pointee type and broadcast to the pointer's shape.
    fn value_for(&mut self, a: &Arg<'a>, ptr: &Tv, pointee: ScalarType, fname: &str, what: &str, span: Span) -> R<Tv> {
        let v = match &a.value {
            v if v.is_number() => self.scalar_constant(v, pointee, a.span)?,
            _ => {
                let t = self.tensor_arg(a, fname, what)?;
                if !ptr.is_block() && t.is_block() {
                    return Err(
                        self.err(a.span, format!("`{what}` is a tensor ({}) but the pointer is a scalar", t.ty))
                    );
                }
                self.cast(t, Dtype::Scalar(pointee), a.span)?
            }
        };
        if ptr.is_block() {
            let like = ptr.ty.with_elem(Elem::Scalar(pointee));
            self.broadcast_like(v, &like, span).map_err(|mut e| {
                e.diag.message = format!("`{what}` of `{fname}` does not fit the pointer's shape: {}", e.diag.message);
                e.diag.label = e.diag.message.clone();
                e
            })
        } else {
            Ok(v)
        }
    }

    fn sem_scope(&self, b: &Bound<'a>, fname: &str) -> R<(String, String)> {
        let get = |key: &str, valid: &[&str]| -> R<String> {
            match b.opt(key) {
                None => Ok(String::new()),
                Some(a) => {
                    let s = self.const_str(a, fname, key)?;
                    if !valid.contains(&s.as_str()) {
                        return Err(
                            self.err(a.span, format!("unknown {key} \"{s}\" (expected one of {})", valid.join(", ")))
                        );
                    }
                    Ok(s)
                }
            }
        };
        Ok((get("sem", SEMS)?, get("scope", SCOPES)?))
    }

    fn atomic(&mut self, b: &Bound<'a>, op: AtomicOp, fname: &str, span: Span) -> R<Tv> {
        let ptr = self.pointer_arg(b.req("pointer"), fname)?;
        let Some(Elem::Ptr(pointee, _)) = ptr.elem() else { unreachable!() };
        // Triton's `atom_red_typechecking_impl`: 16-bit floats only add; no integers narrower than 32 bits, no fp8.
        if matches!(pointee, ScalarType::F16 | ScalarType::BF16) && op != AtomicOp::Add {
            return Err(self.err(span, format!("`{fname}` does not support {} elements", pointee.triton_name())));
        }
        if pointee.bits() < 16 || matches!(pointee, ScalarType::I16 | ScalarType::U16) {
            return Err(self.err(span, format!("`{fname}` does not support {} elements", pointee.triton_name())));
        }
        if matches!(op, AtomicOp::And | AtomicOp::Or | AtomicOp::Xor) && pointee.is_float() {
            return Err(self.err(span, format!("`{fname}` needs integer elements, got {}", pointee.triton_name())));
        }
        let (sem, scope) = self.sem_scope(b, fname)?;
        let val = self.value_for(b.req("val"), &ptr, pointee, fname, "val", span)?;
        let mut mask = None;
        if let Some(m) = b.opt("mask") {
            let mk = self.mask_arg(m, fname)?;
            if !ptr.is_block() && mk.is_block() {
                return Err(self.err(m.span, format!("the mask is a tensor ({}) but the pointer is a scalar", mk.ty)));
            }
            mask = Some(self.broadcast_like(mk, &ptr.ty.with_elem(Elem::Scalar(ScalarType::I1)), m.span)?);
        }
        if pointee.is_float() && matches!(op, AtomicOp::Max | AtomicOp::Min) {
            return self.float_atomic_min_max(op, ptr, val, mask, (sem, scope), span);
        }
        let mut operands = vec![ptr.clone(), val.clone()];
        operands.extend(mask);
        self.emit1(Op::Atomic { op, sem, scope }, &operands, val.ty, span)
    }

    /// Float `atomic_max`/`atomic_min` as Triton builds them, on the bits: values with the sign bit clear
    /// order as signed integers (`atomic_max`/`min` of the i32/i64 bits), values with it set in reverse as
    /// unsigned ones (`atomic_min`/`max` of the u32/u64 bits); the old value comes back from whichever ran.
    fn float_atomic_min_max(
        &mut self,
        op: AtomicOp,
        ptr: Tv,
        val: Tv,
        mask: Option<Tv>,
        (sem, scope): (String, String),
        span: Span,
    ) -> R<Tv> {
        let ft = val.scalar().expect("a float value");
        let (it, ut) =
            if ft == ScalarType::F64 { (ScalarType::I64, ScalarType::U64) } else { (ScalarType::I32, ScalarType::U32) };
        let ival = self.bitcast(val.clone(), Dtype::Scalar(it), span)?;
        let uval = self.bitcast(val, Dtype::Scalar(ut), span)?;
        let iptr = self.bitcast(ptr.clone(), Dtype::Ptr(it), span)?;
        let uptr = self.bitcast(ptr, Dtype::Ptr(ut), span)?;
        let zero = self.zero_like(&ival, span)?;
        let bty = ival.ty.with_elem(Elem::Scalar(ScalarType::I1));
        let neg = self.emit1(Op::Cmp(tessel_tile::ops::CmpPred::Lt), &[ival.clone(), zero], bty.clone(), span)?;
        let pos = self.emit1(Op::Unary(tessel_tile::ops::UnOp::Not), std::slice::from_ref(&neg), bty, span)?;
        let (pm, nm) = match mask {
            Some(m) => (
                self.arith(tessel_tile::ops::BinOp::And, m.clone(), pos.clone(), span)?,
                self.arith(tessel_tile::ops::BinOp::And, m, neg, span)?,
            ),
            None => (pos.clone(), neg),
        };
        let (iop, uop) =
            if op == AtomicOp::Max { (AtomicOp::Max, AtomicOp::Min) } else { (AtomicOp::Min, AtomicOp::Max) };
        let ity = ival.ty.clone();
        let (sem2, scope2) = (sem.clone(), scope.clone());
        let pr = self.emit1(Op::Atomic { op: iop, sem, scope }, &[iptr, ival, pm], ity.clone(), span)?;
        let uty = uval.ty.clone();
        let nr = self.emit1(Op::Atomic { op: uop, sem: sem2, scope: scope2 }, &[uptr, uval, nm], uty, span)?;
        let nr = self.bitcast(nr, Dtype::Scalar(it), span)?;
        let r = self.emit1(Op::Select, &[pos, pr, nr], ity, span)?;
        self.bitcast(r, Dtype::Scalar(ft), span)
    }

    fn make_descriptor(&mut self, b: &Bound<'a>, fname: &str, span: Span) -> R<Tv> {
        let base = self.pointer_arg(b.req("base"), fname)?;
        if base.is_block() {
            return Err(self.err(b.req("base").span, format!("`base` must be a scalar pointer, got {}", base.ty)));
        }
        let Some(Elem::Ptr(elem, _)) = base.elem() else { unreachable!() };
        let block = self.shape_arg(b.req("block_shape"), fname)?;
        self.check_desc_block(elem, &block, b.req("block_shape").span)?;
        let rank = block.len();
        let shape = self.scalar_list(b.req("shape"), rank, ScalarType::I32, fname, "shape")?;
        let strides_arg = b.req("strides");
        let last_stride = strides_arg.value.items().and_then(|v| v.last().cloned());
        if !matches!(last_stride, Some(Value::Int(1))) {
            return Err(self.err_hint(
                strides_arg.span,
                "the last stride of a tensor descriptor must be the constant 1",
                "TMA needs the innermost dim to be contiguous",
            ));
        }
        let strides = self.scalar_list(strides_arg, rank, ScalarType::I64, fname, "strides")?;
        let padding = match b.opt("padding_option") {
            None => String::new(),
            Some(a) => match self.const_str(a, fname, "padding_option")?.as_str() {
                "zero" => String::new(),
                "nan" => "nan".into(),
                other => {
                    return Err(
                        self.err(a.span, format!("padding_option must be \"zero\" or \"nan\", got \"{other}\""))
                    );
                }
            },
        };
        let mut operands = vec![base];
        operands.extend(shape);
        operands.extend(strides);
        let ty = Type::TensorDesc { elem, block_shape: block.as_slice().into() };
        self.emit1(Op::MakeTensorDesc { rank: rank as u32, padding, layout: None }, &operands, ty, span)
    }

    /// The rules every descriptor's block obeys (made in the kernel or on the host): rank 1 to 5, and a last
    /// dim spanning at least 16 bytes (a TMA box's inner extent). Dims are powers of two, checked by the caller.
    pub fn check_desc_block(&self, elem: ScalarType, block: &[u32], span: Span) -> R<()> {
        let rank = block.len();
        if !(1..=5).contains(&rank) {
            return Err(self.err(span, format!("descriptors have rank 1 to 5, got {rank}")));
        }
        if (block[rank - 1] as u64) * (elem.bytes() as u64) < 16 {
            return Err(self.err(
                span,
                format!(
                    "the last block dim must span at least 16 bytes, got {} x {} bytes",
                    block[rank - 1],
                    elem.bytes()
                ),
            ));
        }
        Ok(())
    }

    /// `rank` integer scalars of type `s` from a tuple/list argument.
    pub fn scalar_list(&mut self, a: &Arg<'a>, rank: usize, s: ScalarType, fname: &str, what: &str) -> R<Vec<Tv>> {
        let Some(items) = a.value.items() else {
            return Err(self.err(a.span, format!("`{what}` of `{fname}` must be a list, got {}", a.value.describe())));
        };
        if items.len() != rank {
            return Err(self.err(a.span, format!("`{what}` of `{fname}` needs {rank} entries, got {}", items.len())));
        }
        let mut out = Vec::new();
        for v in items {
            let t = self.to_tensor(&v, a.span)?;
            if !t.scalar().is_some_and(ScalarType::is_int) || t.is_block() {
                return Err(self.err(a.span, format!("`{what}` entries must be integer scalars, got {}", t.ty)));
            }
            out.push(self.cast(t, Dtype::Scalar(s), a.span)?);
        }
        Ok(out)
    }

    /// `desc.load(offsets)`.
    pub fn desc_load(&mut self, desc: Tv, offsets: &Arg<'a>, fname: &str, span: Span) -> R<Tv> {
        let Type::TensorDesc { elem, block_shape } = desc.ty.clone() else {
            return Err(self.err(span, format!("`{fname}` needs a tensor descriptor, got {}", desc.ty)));
        };
        if tessel_tile::tma::is_im2col(&self.func, desc.v) {
            return Err(
                self.err(span, format!("`{fname}` reads tiles; an im2col descriptor is read by TMA im2col loads"))
            );
        }
        let offs = self.scalar_list(offsets, block_shape.len(), ScalarType::I32, fname, "offsets")?;
        let mut operands = vec![desc];
        operands.extend(offs);
        self.emit1(Op::DescLoad, &operands, Type::tensor(&block_shape, Elem::Scalar(elem)), span)
    }

    /// `desc.store(offsets, value)`.
    pub fn desc_store(&mut self, desc: Tv, offsets: &Arg<'a>, value: &Arg<'a>, fname: &str, span: Span) -> R<()> {
        let Type::TensorDesc { elem, block_shape } = desc.ty.clone() else {
            return Err(self.err(span, format!("`{fname}` needs a tensor descriptor, got {}", desc.ty)));
        };
        if tessel_tile::tma::is_im2col(&self.func, desc.v) {
            return Err(self.err(span, format!("`{fname}` writes tiles; an im2col descriptor is only loaded")));
        }
        let v = self.tensor_arg(value, fname, "value")?;
        if v.shape() != block_shape.as_slice() {
            return Err(self.err(
                value.span,
                format!(
                    "the stored value has shape {:?}, but the descriptor's block is {:?}",
                    v.shape(),
                    block_shape.as_slice()
                ),
            ));
        }
        let v = self.cast(v, Dtype::Scalar(elem), value.span)?;
        let offs = self.scalar_list(offsets, block_shape.len(), ScalarType::I32, fname, "offsets")?;
        let mut operands = vec![desc, v];
        operands.extend(offs);
        self.emit(Op::DescStore, &operands, vec![], span)?;
        Ok(())
    }
}
