//! The values of the partial evaluator.
//!
//! A value is either known now (compile time: Python numbers, strings, tuples, lists, dtypes, functions,
//! `@aggregate` classes and instances, module aliases, slices, ranges) or known only on the GPU: a runtime
//! [`Tv`], an SSA value of the IR with its type. A tuple or aggregate instance may mix both; loops and branches
//! carry its runtime leaves (see [`Value::flatten`]).

use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt;
use std::rc::Rc;

use tessel_tile::{Elem, ScalarType, Type, ValueId};

use crate::ast;

/// A builtin function or class: entry `id` of the elaborator's builtin registry (the `registry` module), whose
/// name it carries for messages that need no registry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Builtin {
    pub id: u16,
    pub name: &'static str,
}

/// A runtime value: an SSA value and its type.
#[derive(Clone, Debug, PartialEq)]
pub struct Tv {
    pub v: ValueId,
    pub ty: Type,
}

impl Tv {
    pub fn new(v: ValueId, ty: Type) -> Tv {
        Tv { v, ty }
    }

    /// The element type (a scalar or a pointer); descriptors have none.
    pub fn elem(&self) -> Option<Elem> {
        self.ty.elem()
    }

    /// The scalar element type, if the element is a number.
    pub fn scalar(&self) -> Option<ScalarType> {
        self.ty.elem().and_then(Elem::scalar)
    }

    pub fn shape(&self) -> &[u32] {
        self.ty.shape()
    }

    pub fn is_block(&self) -> bool {
        self.ty.is_tensor()
    }

    pub fn dtype(&self) -> Option<Dtype> {
        self.ty.elem().map(Dtype::from_elem)
    }
}

/// A Triton dtype as a compile-time value (`tl.float16`, `tl.pointer_type(tl.int32)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dtype {
    Scalar(ScalarType),
    Ptr(ScalarType),
    Void,
}

impl Dtype {
    pub fn from_elem(e: Elem) -> Dtype {
        match e {
            Elem::Scalar(s) => Dtype::Scalar(s),
            Elem::Ptr(s, _) => Dtype::Ptr(s),
        }
    }

    pub fn elem(self) -> Option<Elem> {
        match self {
            Dtype::Scalar(s) => Some(Elem::Scalar(s)),
            Dtype::Ptr(s) => Some(Elem::Ptr(s, tessel_tile::AddrSpace::Global)),
            Dtype::Void => None,
        }
    }

    pub fn scalar(self) -> Option<ScalarType> {
        match self {
            Dtype::Scalar(s) => Some(s),
            _ => None,
        }
    }
}

impl fmt::Display for Dtype {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Dtype::Scalar(s) => f.write_str(s.triton_name()),
            Dtype::Ptr(s) => write!(f, "pointer<{}>", s.triton_name()),
            Dtype::Void => f.write_str("void"),
        }
    }
}

/// How a user function is called.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FnKind {
    /// `@triton.jit` / `@gluon.jit` / `@tessel.jit`: inlined at the call site; may emit IR.
    Jit,
    /// `@constexpr_function`, or a plain Python function: run at compile time on compile-time values.
    ConstexprFn,
}

/// A user-defined function, with the module it was defined in (for its globals).
#[derive(Debug)]
pub struct FuncVal<'a> {
    pub def: &'a ast::FunctionDef,
    pub module: usize,
    pub kind: FnKind,
    /// For a function defined inside another (a method of a class a host-side factory builds): the names it
    /// closes over, looked up after its locals and before its module's globals.
    pub env: Option<Env<'a>>,
}

/// The variables a nested definition closes over: the enclosing function's locals when the definition ran, and
/// the names defined beside it in that function (so a class's methods see the class).
pub type Env<'a> = Rc<RefCell<HashMap<String, Value<'a>>>>;

/// An `@aggregate` class: its fields in declaration order and its methods.
#[derive(Debug)]
pub struct ClassVal<'a> {
    pub def: &'a ast::ClassDef,
    pub module: usize,
    pub fields: Vec<String>,
    pub methods: HashMap<String, Rc<FuncVal<'a>>>,
    /// Methods decorated with `@staticmethod` (called without `self`).
    pub statics: Vec<String>,
}

/// An instance of an aggregate class: named fields, any of which may hold runtime values.
#[derive(Debug)]
pub struct Instance<'a> {
    pub class: Rc<ClassVal<'a>>,
    pub fields: RefCell<Vec<(String, Value<'a>)>>,
}

impl<'a> Instance<'a> {
    pub fn get(&self, name: &str) -> Option<Value<'a>> {
        self.fields.borrow().iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
    }

    pub fn set(&self, name: &str, value: Value<'a>) {
        let mut fields = self.fields.borrow_mut();
        match fields.iter_mut().find(|(k, _)| k == name) {
            Some(slot) => slot.1 = value,
            None => fields.push((name.to_string(), value)),
        }
    }
}

/// What a `for` statement iterates over when it is a range.
#[derive(Clone, Debug)]
pub struct RangeVal<'a> {
    /// `tl.static_range`: unrolled at compile time.
    pub is_static: bool,
    /// Python's `range` (compile-time iteration in constexpr functions, an `scf.for` in kernels).
    pub is_python: bool,
    pub start: Value<'a>,
    pub end: Value<'a>,
    pub step: Value<'a>,
    pub attrs: tessel_tile::ops::LoopAttrs,
}

/// A compile-time or runtime value.
#[derive(Clone, Debug)]
pub enum Value<'a> {
    None,
    Bool(bool),
    Int(i128),
    Float(f64),
    Str(Rc<str>),
    Ellipsis,
    Tuple(Rc<Vec<Value<'a>>>),
    List(Rc<RefCell<Vec<Value<'a>>>>),
    Dict(Rc<RefCell<Vec<(Value<'a>, Value<'a>)>>>),
    Dtype(Dtype),
    Func(Rc<FuncVal<'a>>),
    Builtin(Builtin),
    /// `receiver.name` where `name` is a method: bound at the attribute, called later.
    Method(Rc<(Value<'a>, String)>),
    Class(Rc<ClassVal<'a>>),
    Instance(Rc<Instance<'a>>),
    /// An imported module, by canonical path (`triton.language`).
    Module(Rc<str>),
    /// A sibling module of the kernel's file (`importlib.import_module("05-wgmma")`): the elaborator's module
    /// number; its globals are its attributes.
    UserModule(usize),
    Slice(Option<i128>, Option<i128>, Option<i128>),
    Range(Rc<RangeVal<'a>>),
    /// A gluon layout object.
    Layout(Rc<tessel_layouts::AnyLayout>),
    /// Triton's `block_type` (a descriptor's `desc.block_type`), or Gluon's `distributed_type` (a register
    /// tensor's `x.type`, which adds the layout): `shape` (a list), `element_ty`, `nbytes`, `numel`...
    BlockType(Rc<BlockType>),
    /// A memory descriptor's type, known at compile time (Gluon's `tensor_memory_descriptor_type(element_ty,
    /// shape, layout, alloc_shape)`): what a descriptor of it would carry. Its attributes and methods are the
    /// registry's attribute and method hooks' (gluon mode).
    MemType(Rc<MemType>),
    Tensor(Tv),
}

/// A block type as a value: Triton's `block_type`, or Gluon's `distributed_type` when `layout` is set.
#[derive(Clone, Debug, PartialEq)]
pub struct BlockType {
    pub elem: Dtype,
    pub shape: Vec<u32>,
    pub layout: BlockLayout,
}

/// The layout of a [`BlockType`].
#[derive(Clone, Debug, PartialEq)]
pub enum BlockLayout {
    /// Triton's `block_type`: no layout.
    None,
    /// A `distributed_type` whose layout layout assignment picks (`gl.AutoLayout()`, `None` as a value).
    Auto,
    /// A `distributed_type` of this layout.
    Of(Rc<tessel_layouts::AnyLayout>),
}

/// A memory descriptor type as a value: `ty` is the `MemDesc` type of a descriptor of `shape` (a view of an
/// allocation of `alloc_shape`, whose layout it carries).
#[derive(Clone, Debug, PartialEq)]
pub struct MemType {
    pub ty: Type,
    pub alloc_shape: Vec<u32>,
}

impl<'a> Value<'a> {
    pub fn tuple(items: Vec<Value<'a>>) -> Value<'a> {
        Value::Tuple(Rc::new(items))
    }

    pub fn str(s: &str) -> Value<'a> {
        Value::Str(Rc::from(s))
    }

    pub fn is_runtime(&self) -> bool {
        matches!(self, Value::Tensor(_))
    }

    /// A Python number (`bool`, `int`, `float`): what Triton calls a constexpr scalar.
    pub fn is_number(&self) -> bool {
        matches!(self, Value::Bool(_) | Value::Int(_) | Value::Float(_))
    }

    /// Whether any runtime value is inside (a tensor, or a tuple/list/instance holding one).
    pub fn has_runtime(&self) -> bool {
        match self {
            Value::Tensor(_) => true,
            Value::Tuple(t) => t.iter().any(Value::has_runtime),
            Value::List(l) => l.borrow().iter().any(Value::has_runtime),
            Value::Instance(i) => i.fields.borrow().iter().any(|(_, v)| v.has_runtime()),
            Value::Method(m) => m.0.has_runtime(),
            _ => false,
        }
    }

    pub fn as_int(&self) -> Option<i128> {
        match self {
            Value::Int(i) => Some(*i),
            Value::Bool(b) => Some(*b as i128),
            _ => None,
        }
    }

    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Int(i) => Some(*i as f64),
            Value::Bool(b) => Some(*b as i64 as f64),
            Value::Float(f) => Some(*f),
            _ => None,
        }
    }

    pub fn as_tensor(&self) -> Option<&Tv> {
        match self {
            Value::Tensor(t) => Some(t),
            _ => None,
        }
    }

    /// The items of a tuple or list.
    pub fn items(&self) -> Option<Vec<Value<'a>>> {
        match self {
            Value::Tuple(t) => Some(t.as_ref().clone()),
            Value::List(l) => Some(l.borrow().clone()),
            _ => None,
        }
    }

    /// Python truthiness of a compile-time value (`None` for runtime values and objects without one).
    pub fn truth(&self) -> Option<bool> {
        Some(match self {
            Value::None => false,
            Value::Bool(b) => *b,
            Value::Int(i) => *i != 0,
            Value::Float(f) => *f != 0.0,
            Value::Str(s) => !s.is_empty(),
            Value::Tuple(t) => !t.is_empty(),
            Value::List(l) => !l.borrow().is_empty(),
            Value::Dict(d) => !d.borrow().is_empty(),
            Value::Tensor(_) => return None,
            _ => true,
        })
    }

    /// The Python type name, or the IR type of a runtime value (for messages).
    pub fn type_name(&self) -> String {
        match self {
            Value::None => "None".into(),
            Value::Bool(_) => "bool".into(),
            Value::Int(_) => "int".into(),
            Value::Float(_) => "float".into(),
            Value::Str(_) => "str".into(),
            Value::Ellipsis => "ellipsis".into(),
            Value::Tuple(_) => "tuple".into(),
            Value::List(_) => "list".into(),
            Value::Dict(_) => "dict".into(),
            Value::Dtype(_) => "dtype".into(),
            Value::Func(f) => format!("function `{}`", f.def.name.name),
            Value::Builtin(b) => format!("builtin `{}`", b.name),
            Value::Method(m) => format!("method `{}`", m.1),
            Value::Class(c) => format!("class `{}`", c.def.name.name),
            Value::Instance(i) => format!("`{}` instance", i.class.def.name.name),
            Value::Module(m) => format!("module `{m}`"),
            Value::UserModule(_) => "module".into(),
            Value::Slice(..) => "slice".into(),
            Value::Range(_) => "range".into(),
            Value::Layout(_) => "layout".into(),
            Value::BlockType(_) => "block type".into(),
            Value::MemType(m) => format!("type {}", m.ty),
            Value::Tensor(t) => t.ty.to_string(),
        }
    }

    /// Splits a value into its runtime leaves, in a fixed order; [`Value::unflatten`] rebuilds it from new leaves.
    pub fn flatten(&self, out: &mut Vec<Tv>) {
        match self {
            Value::Tensor(t) => out.push(t.clone()),
            Value::Tuple(t) => t.iter().for_each(|v| v.flatten(out)),
            Value::Instance(i) => i.fields.borrow().iter().for_each(|(_, v)| v.flatten(out)),
            _ => {}
        }
    }

    /// This value with its runtime leaves replaced, in [`Value::flatten`] order, by `leaves`.
    pub fn unflatten(&self, leaves: &mut impl Iterator<Item = Tv>) -> Value<'a> {
        match self {
            Value::Tensor(_) => Value::Tensor(leaves.next().expect("as many leaves as flatten produced")),
            Value::Tuple(t) => Value::tuple(t.iter().map(|v| v.unflatten(leaves)).collect()),
            Value::Instance(i) => {
                let fields = i.fields.borrow().iter().map(|(k, v)| (k.clone(), v.unflatten(leaves))).collect();
                Value::Instance(Rc::new(Instance { class: i.class.clone(), fields: RefCell::new(fields) }))
            }
            other => other.clone(),
        }
    }

    /// Whether two values have the same compile-time skeleton (the same structure and equal compile-time parts)
    /// and runtime leaves of the same types; on a mismatch, says what differs.
    pub fn same_shape_as(&self, other: &Value<'a>) -> Result<(), String> {
        match (self, other) {
            (Value::Tensor(a), Value::Tensor(b)) => {
                if a.ty == b.ty {
                    Ok(())
                } else {
                    Err(format!("{} and {}", a.ty, b.ty))
                }
            }
            (Value::Tuple(a), Value::Tuple(b)) => {
                if a.len() != b.len() {
                    return Err(format!("tuples of {} and {} items", a.len(), b.len()));
                }
                a.iter().zip(b.iter()).try_for_each(|(x, y)| x.same_shape_as(y))
            }
            (Value::Instance(a), Value::Instance(b)) if Rc::ptr_eq(&a.class, &b.class) => {
                let (fa, fb) = (a.fields.borrow(), b.fields.borrow());
                if fa.len() != fb.len() || fa.iter().zip(fb.iter()).any(|(x, y)| x.0 != y.0) {
                    return Err(format!("`{}` instances with different fields", a.class.def.name.name));
                }
                fa.iter().zip(fb.iter()).try_for_each(|(x, y)| x.1.same_shape_as(&y.1))
            }
            (a, b) if !a.has_runtime() && !b.has_runtime() => {
                if py_eq(a, b) == Some(true) {
                    Ok(())
                } else {
                    Err(format!("{} and {}", a.describe(), b.describe()))
                }
            }
            (a, b) => Err(format!("{} and {}", a.describe(), b.describe())),
        }
    }

    /// A short description for messages: the value itself for small compile-time values, else its type.
    pub fn describe(&self) -> String {
        match self {
            Value::None | Value::Bool(_) | Value::Int(_) | Value::Float(_) | Value::Str(_) | Value::Dtype(_) => {
                repr(self)
            }
            Value::Tuple(_) | Value::List(_) if !self.has_runtime() && repr(self).len() < 60 => repr(self),
            _ => self.type_name(),
        }
    }
}

/// Python equality of compile-time values; `None` when it is not decidable now (runtime values).
pub fn py_eq<'a>(a: &Value<'a>, b: &Value<'a>) -> Option<bool> {
    Some(match (a, b) {
        (Value::Tensor(_), _) | (_, Value::Tensor(_)) => return None,
        (Value::None, Value::None) => true,
        (Value::Ellipsis, Value::Ellipsis) => true,
        (Value::Str(x), Value::Str(y)) => x == y,
        (Value::Float(_), _) | (_, Value::Float(_)) if a.is_number() && b.is_number() => a.as_f64() == b.as_f64(),
        (x, y) if x.is_number() && y.is_number() => x.as_int() == y.as_int(),
        (Value::Tuple(_) | Value::List(_), Value::Tuple(_) | Value::List(_)) => {
            if std::mem::discriminant(a) != std::mem::discriminant(b) {
                return Some(false);
            }
            let (x, y) = (a.items().unwrap(), b.items().unwrap());
            if x.len() != y.len() {
                return Some(false);
            }
            for (p, q) in x.iter().zip(&y) {
                if !py_eq(p, q)? {
                    return Some(false);
                }
            }
            true
        }
        (Value::Dtype(x), Value::Dtype(y)) => x == y,
        (Value::Func(x), Value::Func(y)) => std::ptr::eq(x.def, y.def),
        (Value::Builtin(x), Value::Builtin(y)) => x == y,
        (Value::Class(x), Value::Class(y)) => std::ptr::eq(x.def, y.def),
        (Value::Instance(x), Value::Instance(y)) => Rc::ptr_eq(x, y),
        (Value::Module(x), Value::Module(y)) => x == y,
        (Value::UserModule(x), Value::UserModule(y)) => x == y,
        (Value::Layout(x), Value::Layout(y)) => x == y,
        (Value::BlockType(x), Value::BlockType(y)) => x == y,
        (Value::MemType(x), Value::MemType(y)) => x == y,
        (Value::Slice(a0, a1, a2), Value::Slice(b0, b1, b2)) => (a0, a1, a2) == (b0, b1, b2),
        _ => false,
    })
}

/// Python's `repr` of a compile-time value (runtime values show their type).
pub fn repr(v: &Value) -> String {
    match v {
        Value::Str(s) => format!("'{s}'"),
        other => py_str(other),
    }
}

/// Python's `str` of a compile-time value.
pub fn py_str(v: &Value) -> String {
    match v {
        Value::None => "None".into(),
        Value::Bool(b) => if *b { "True" } else { "False" }.into(),
        Value::Int(i) => i.to_string(),
        Value::Float(f) => fmt_py_float(*f),
        Value::Str(s) => s.to_string(),
        Value::Ellipsis => "Ellipsis".into(),
        Value::Tuple(t) => {
            let parts: Vec<String> = t.iter().map(repr).collect();
            if parts.len() == 1 { format!("({},)", parts[0]) } else { format!("({})", parts.join(", ")) }
        }
        Value::List(l) => format!("[{}]", l.borrow().iter().map(repr).collect::<Vec<_>>().join(", ")),
        Value::Dict(d) => {
            let parts: Vec<String> = d.borrow().iter().map(|(k, v)| format!("{}: {}", repr(k), repr(v))).collect();
            format!("{{{}}}", parts.join(", "))
        }
        Value::Dtype(d) => d.to_string(),
        Value::Slice(a, b, c) => {
            let s = |x: &Option<i128>| x.map_or("None".to_string(), |v| v.to_string());
            format!("slice({}, {}, {})", s(a), s(b), s(c))
        }
        Value::Layout(l) => l.to_string(),
        Value::MemType(m) => m.ty.to_string(),
        Value::BlockType(b) => {
            let dims: Vec<String> = b.shape.iter().map(u32::to_string).collect();
            match &b.layout {
                BlockLayout::None => format!("<[{}], {}>", dims.join(", "), b.elem),
                BlockLayout::Auto => format!("<[{}], {}, AutoLayout()>", dims.join(", "), b.elem),
                BlockLayout::Of(l) => format!("<[{}], {}, {l}>", dims.join(", "), b.elem),
            }
        }
        Value::Instance(i) => {
            let fields: Vec<String> = i.fields.borrow().iter().map(|(k, v)| format!("{k}={}", repr(v))).collect();
            format!("{}({})", i.class.def.name.name, fields.join(", "))
        }
        other => other.type_name(),
    }
}

/// Formats a float as Python does (`1.0`, `0.1`, `1e-05`, `inf`).
pub fn fmt_py_float(f: f64) -> String {
    if f.is_nan() {
        return "nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf".into() } else { "-inf".into() };
    }
    if f == f.trunc() && f.abs() < 1e16 {
        return format!("{f:.1}");
    }
    let s = format!("{f:?}");
    // Rust writes `1e-5`; Python writes `1e-05`.
    match s.split_once('e') {
        Some((m, e)) => {
            let (sign, digits) = if let Some(d) = e.strip_prefix('-') { ("-", d) } else { ("+", e) };
            format!("{m}e{sign}{digits:0>2}")
        }
        None => s,
    }
}
