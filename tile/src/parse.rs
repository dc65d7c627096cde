//! Reads the textual IR that [`crate::print`] writes, so that passes can be tested text-in, text-out.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use crate::ir::{Func, Module, RegionId, ValueId};
use crate::ops::{Attr, Op};
use crate::types::{AddrSpace, Elem, Layout, ScalarType, Shape, Type};

/// A syntax or consistency error in IR text, at a byte offset.
#[derive(Clone, Debug, PartialEq)]
pub struct ParseError {
    pub message: String,
    pub offset: usize,
    pub line: usize,
    pub column: usize,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.column, self.message)
    }
}

impl std::error::Error for ParseError {}

type PResult<T> = Result<T, ParseError>;

/// Parses a module: one or more functions.
pub fn parse_module(text: &str) -> PResult<Module> {
    let mut p = Parser { src: text, pos: 0, names: HashMap::new() };
    let mut module = Module::default();
    p.skip_ws();
    while p.pos < p.src.len() {
        module.funcs.push(p.func()?);
        p.skip_ws();
    }
    Ok(module)
}

/// Parses exactly one function.
pub fn parse_func(text: &str) -> PResult<Func> {
    let mut m = parse_module(text)?;
    match m.funcs.len() {
        1 => Ok(m.funcs.pop().unwrap()),
        n => Err(ParseError { message: format!("expected one function, found {n}"), offset: 0, line: 1, column: 1 }),
    }
}

/// Parses one type (`tensor<64x128xf16, ...>`, `memdesc<...>`, `i32`...), the whole text.
pub fn parse_type(text: &str) -> PResult<Type> {
    let mut p = Parser { src: text, pos: 0, names: HashMap::new() };
    let t = p.ty()?;
    p.skip_ws();
    if p.pos < p.src.len() {
        return p.error("expected the end of the type");
    }
    Ok(t)
}

struct Parser<'a> {
    src: &'a str,
    pos: usize,
    names: HashMap<String, ValueId>,
}

impl<'a> Parser<'a> {
    fn error<T>(&self, message: impl Into<String>) -> PResult<T> {
        self.error_at(self.pos, message)
    }

    fn error_at<T>(&self, offset: usize, message: impl Into<String>) -> PResult<T> {
        let before = &self.src[..offset.min(self.src.len())];
        let line = before.matches('\n').count() + 1;
        let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
        Err(ParseError { message: message.into(), offset, line, column })
    }

    fn rest(&self) -> &'a str {
        &self.src[self.pos..]
    }

    fn skip_ws(&mut self) {
        loop {
            let rest = self.rest();
            let trimmed = rest.trim_start();
            self.pos += rest.len() - trimmed.len();
            if trimmed.starts_with("//") {
                self.pos += trimmed.find('\n').unwrap_or(trimmed.len());
            } else {
                break;
            }
        }
    }

    fn peek_char(&mut self) -> Option<char> {
        self.skip_ws();
        self.rest().chars().next()
    }

    fn eat(&mut self, s: &str) -> bool {
        self.skip_ws();
        if self.rest().starts_with(s) {
            self.pos += s.len();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, s: &str) -> PResult<()> {
        if self.eat(s) { Ok(()) } else { self.error(format!("expected `{s}`")) }
    }

    /// Eats a keyword only when it is a whole word.
    fn eat_word(&mut self, w: &str) -> bool {
        self.skip_ws();
        let rest = self.rest();
        if rest.starts_with(w) && !rest[w.len()..].starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_') {
            self.pos += w.len();
            true
        } else {
            false
        }
    }

    fn ident(&mut self) -> PResult<&'a str> {
        self.skip_ws();
        let rest = self.rest();
        let len = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.')).unwrap_or(rest.len());
        if len == 0 {
            return self.error("expected a name");
        }
        self.pos += len;
        Ok(&rest[..len])
    }

    fn value_name(&mut self) -> PResult<&'a str> {
        self.expect("%")?;
        self.ident()
    }

    fn use_value(&mut self) -> PResult<ValueId> {
        let at = self.pos;
        let name = self.value_name()?;
        match self.names.get(name) {
            Some(&v) => Ok(v),
            None => self.error_at(at, format!("use of undefined value `%{name}`")),
        }
    }

    fn bind(&mut self, f: &mut Func, at: usize, name: &str, v: ValueId) -> PResult<()> {
        if self.names.insert(name.to_string(), v).is_some() {
            return self.error_at(at, format!("value `%{name}` is defined twice"));
        }
        if !name.starts_with(|c: char| c.is_ascii_digit()) {
            f.values[v.index()].name = Some(name.to_string());
        }
        Ok(())
    }

    fn func(&mut self) -> PResult<Func> {
        self.names.clear();
        if !self.eat_word("func") {
            return self.error("expected `func`");
        }
        self.expect("@")?;
        let name = self.ident()?.to_string();
        self.expect("(")?;
        let mut args = Vec::new();
        if !self.eat(")") {
            loop {
                let at = self.pos;
                let n = self.value_name()?;
                self.expect(":")?;
                args.push((at, n, self.ty()?));
                if self.eat(")") {
                    break;
                }
                self.expect(",")?;
            }
        }
        let mut f = Func::new(name, args.iter().map(|(_, _, t)| (None, t.clone())));
        for (i, (at, n, _)) in args.iter().enumerate() {
            let v = f.args()[i];
            self.bind(&mut f, *at, n, v)?;
        }
        if self.eat_word("attributes") {
            let at = self.pos;
            for (k, v) in self.attr_dict()? {
                if let Err(e) = set_func_attr(&mut f, &k, v) {
                    return self.error_at(at, e.to_string());
                }
            }
        }
        self.expect("{")?;
        let body = f.body;
        self.ops_until_close(&mut f, body)?;
        Ok(f)
    }

    fn ops_until_close(&mut self, f: &mut Func, r: RegionId) -> PResult<()> {
        while !self.eat("}") {
            if self.pos >= self.src.len() {
                return self.error("unexpected end of input: missing `}`");
            }
            self.op(f, r)?;
        }
        Ok(())
    }

    fn op(&mut self, f: &mut Func, r: RegionId) -> PResult<()> {
        self.skip_ws();
        let mut results = Vec::new();
        if self.peek_char() == Some('%') {
            loop {
                let at = self.pos;
                results.push((at, self.value_name()?));
                if !self.eat(",") {
                    break;
                }
            }
            self.expect("=")?;
        }
        let name_at = self.pos;
        let name = self.ident()?;
        let attrs = if self.looks_like_attrs() { self.attr_dict()? } else { Vec::new() };
        let op = match Op::from_parts(name, &attrs) {
            Ok(op) => op,
            Err(e) => return self.error_at(name_at, e.to_string()),
        };
        let mut operands = Vec::new();
        // Operands are on the op's line: `debug_barrier` followed by `%x = ...` has none.
        if self.rest().trim_start_matches([' ', '\t']).starts_with('%') {
            self.skip_ws();
            loop {
                operands.push(self.use_value()?);
                if !self.eat(",") {
                    break;
                }
            }
        }
        let mut types = Vec::new();
        if !results.is_empty() {
            self.expect(":")?;
            for i in 0..results.len() {
                if i > 0 {
                    self.expect(",")?;
                }
                types.push(self.ty()?);
            }
        }
        let mut regions = Vec::new();
        while self.peek_char() == Some('{') {
            regions.push(self.region(f)?);
            let sep = crate::print::region_separator(&op);
            let save = self.pos;
            if !(if sep == "," { self.eat(",") } else { self.eat_word(sep) }) || self.peek_char() != Some('{') {
                self.pos = save;
                break;
            }
        }
        let id = f.append(r, op, &operands, types, &regions, None);
        let result_ids: Vec<ValueId> = f.op(id).results.to_vec();
        for ((at, n), v) in results.into_iter().zip(result_ids) {
            self.bind(f, at, n, v)?;
        }
        Ok(())
    }

    fn region(&mut self, f: &mut Func) -> PResult<RegionId> {
        self.expect("{")?;
        let r = f.new_region();
        if self.eat("^") {
            self.expect("(")?;
            if !self.eat(")") {
                loop {
                    let at = self.pos;
                    let n = self.value_name()?;
                    self.expect(":")?;
                    let t = self.ty()?;
                    let v = f.add_region_arg(r, t, None);
                    self.bind(f, at, n, v)?;
                    if self.eat(")") {
                        break;
                    }
                    self.expect(",")?;
                }
            }
            self.expect(":")?;
        }
        self.ops_until_close(f, r)?;
        Ok(r)
    }

    /// `{` starts an attribute dictionary when it is followed by `name =`, a region otherwise.
    fn looks_like_attrs(&mut self) -> bool {
        // Attributes are on the op's line (do not skip into the next op).
        let Some(rest) = self.rest().trim_start_matches([' ', '\t']).strip_prefix('{') else { return false };
        let rest = rest.trim_start();
        let len = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(rest.len());
        len > 0 && rest[len..].trim_start().starts_with('=')
    }

    fn attr_dict(&mut self) -> PResult<Vec<(String, Attr)>> {
        self.expect("{")?;
        let mut out = Vec::new();
        if self.eat("}") {
            return Ok(out);
        }
        loop {
            let key = self.ident()?.to_string();
            self.expect("=")?;
            out.push((key, self.attr()?));
            if self.eat("}") {
                return Ok(out);
            }
            self.expect(",")?;
        }
    }

    fn attr(&mut self) -> PResult<Attr> {
        self.skip_ws();
        let c = self.rest().chars().next();
        match c {
            Some('"') => self.string().map(Attr::Str),
            Some('[') => {
                self.pos += 1;
                let mut v = Vec::new();
                if self.eat("]") {
                    return Ok(Attr::Ints(v));
                }
                loop {
                    match self.number()? {
                        Attr::Int(i) => v.push(i),
                        _ => return self.error("expected an integer in the list"),
                    }
                    if self.eat("]") {
                        return Ok(Attr::Ints(v));
                    }
                    self.expect(",")?;
                }
            }
            Some(c) if c.is_ascii_digit() || c == '-' => self.number(),
            _ => {
                let w = self.ident()?;
                Ok(match w {
                    "true" => Attr::Bool(true),
                    "false" => Attr::Bool(false),
                    "inf" => Attr::Float(f64::INFINITY),
                    "nan" => Attr::Float(f64::NAN),
                    _ => Attr::Word(w.to_string()),
                })
            }
        }
    }

    fn number(&mut self) -> PResult<Attr> {
        self.skip_ws();
        let start = self.pos;
        let rest = self.rest();
        if rest.starts_with("-inf") {
            self.pos += 4;
            return Ok(Attr::Float(f64::NEG_INFINITY));
        }
        let len = rest
            .char_indices()
            .find(|&(i, c)| {
                !(c.is_ascii_digit()
                    || c == '.'
                    || c == 'e'
                    || c == 'E'
                    || ((c == '-' || c == '+') && (i == 0 || matches!(rest.as_bytes()[i - 1], b'e' | b'E'))))
            })
            .map_or(rest.len(), |(i, _)| i);
        let text = &rest[..len];
        self.pos += len;
        if text.contains(['.', 'e', 'E']) {
            text.parse().map(Attr::Float).or_else(|_| self.error_at(start, format!("bad number `{text}`")))
        } else {
            text.parse().map(Attr::Int).or_else(|_| self.error_at(start, format!("bad integer `{text}`")))
        }
    }

    fn string(&mut self) -> PResult<String> {
        self.expect("\"")?;
        let mut out = String::new();
        let mut chars = self.rest().char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                '"' => {
                    self.pos += i + 1;
                    return Ok(out);
                }
                '\\' => match chars.next().map(|(_, c)| c) {
                    Some('n') => out.push('\n'),
                    Some('t') => out.push('\t'),
                    Some('r') => out.push('\r'),
                    Some('0') => out.push('\0'),
                    Some(c @ ('\\' | '"' | '\'')) => out.push(c),
                    _ => return self.error_at(self.pos + i, "unknown escape in string"),
                },
                c => out.push(c),
            }
        }
        self.error("unterminated string")
    }

    fn scalar(&mut self) -> PResult<ScalarType> {
        let at = self.pos;
        let w = self.ident()?;
        ScalarType::from_name(w).map_or_else(|| self.error_at(at, format!("unknown scalar type `{w}`")), Ok)
    }

    fn elem(&mut self) -> PResult<Elem> {
        if self.eat_word("ptr") {
            self.expect("<")?;
            let s = self.scalar()?;
            let space = if self.eat(",") {
                if !self.eat_word("shared") {
                    return self.error("expected `shared`");
                }
                AddrSpace::Shared
            } else {
                AddrSpace::Global
            };
            self.expect(">")?;
            Ok(Elem::Ptr(s, space))
        } else {
            Ok(Elem::Scalar(self.scalar()?))
        }
    }

    /// `64x128x` before the element type of a tensor.
    fn dims(&mut self) -> PResult<Shape> {
        let mut shape = Shape::new();
        self.skip_ws();
        loop {
            let rest = self.rest();
            let len = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
            if len == 0 || !rest[len..].starts_with('x') {
                return Ok(shape);
            }
            let d: u32 = rest[..len].parse().or_else(|_| self.error("dimension too large"))?;
            shape.push(d);
            self.pos += len + 1;
        }
    }

    fn ty(&mut self) -> PResult<Type> {
        self.skip_ws();
        if self.eat_word("tensor") {
            self.expect("<")?;
            let shape = self.dims()?;
            if shape.is_empty() {
                return self.error("a tensor type needs a shape, e.g. `tensor<64x128xf16>`");
            }
            let elem = self.elem()?;
            let layout = if self.eat(",") { Some(Arc::new(self.layout(&shape)?)) } else { None };
            self.expect(">")?;
            Ok(Type::Tensor { shape, elem, layout })
        } else if self.eat_word("token") {
            Ok(Type::Token)
        } else if self.eat_word("clc_result") {
            Ok(Type::ClcResult)
        } else if self.eat_word("memdesc") {
            self.expect("<")?;
            let shape = self.dims()?;
            let elem = self.scalar()?;
            self.expect(",")?;
            // A ring of buffers may hold any number of them (the pipeliner's `num_stages`); its layout spans the
            // next power of two, and only the first buffers exist.
            let padded: Vec<u32> = shape.iter().map(|d| d.next_power_of_two()).collect();
            let layout = Arc::new(self.layout(&padded)?);
            // A tensor-memory buffer is laid out by a TensorMemoryLayout or TensorMemoryScalesLayout (row, col ->
            // tensor coordinates).
            let tmem = matches!(
                layout.spec,
                Some(tessel_layouts::AnyLayout::TensorMemory(_) | tessel_layouts::AnyLayout::TensorMemoryScales(_))
            );
            if !tmem && !layout.linear.has_in_dim("offset") {
                return self.error("a memdesc needs a shared layout (offset -> tensor coordinates)");
            }
            self.expect(">")?;
            Ok(Type::MemDesc { shape, elem, layout })
        } else if self.eat_word("tensordesc") {
            self.expect("<")?;
            let block_shape = self.dims()?;
            let elem = self.scalar()?;
            self.expect(">")?;
            Ok(Type::TensorDesc { elem, block_shape })
        } else {
            Ok(Type::Scalar(self.elem()?))
        }
    }

    /// A layout in Gluon spelling, up to the `>` that closes the tensor type.
    fn layout(&mut self, shape: &[u32]) -> PResult<Layout> {
        self.skip_ws();
        let start = self.pos;
        let mut depth = 0i32;
        let end = self
            .rest()
            .char_indices()
            .find(|&(_, c)| {
                match c {
                    '(' | '[' => depth += 1,
                    ')' | ']' => depth -= 1,
                    _ => {}
                }
                depth == 0 && c == '>'
            })
            .map(|(i, _)| start + i);
        let Some(end) = end else { return self.error("unterminated layout in tensor type") };
        let text = self.src[start..end].trim_end();
        let spec = match tessel_layouts::expr::parse_layout(text) {
            Ok(spec) => spec,
            Err(e) => return self.error_at(start, format!("bad layout: {e}")),
        };
        // A shared layout may lay out leading buffer dims beyond its rank (a multi-buffered memdesc).
        let linear = match spec.to_linear_buffered(shape) {
            Ok(l) => l,
            Err(e) => return self.error_at(start, format!("layout does not fit the tensor: {e}")),
        };
        self.pos = end;
        Ok(Layout { spec: Some(spec), linear })
    }
}

/// Why a function attribute is refused.
#[derive(Clone, Debug, PartialEq)]
pub enum FuncAttrError {
    NotPositive {
        key: String,
        got: Attr,
    },
    NotFlag {
        key: String,
        got: Attr,
    },
    NotIndices {
        key: String,
        got: Attr,
    },
    /// An argument index out of `u32`.
    Index {
        key: String,
        got: i64,
    },
    UnknownTarget(crate::target::UnknownTarget),
    Unknown(String),
    /// The launch configuration it leaves is out of range.
    Config(crate::target::ConfigError),
}

impl fmt::Display for FuncAttrError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FuncAttrError::NotPositive { key, got } => {
                write!(f, "function attribute `{key}` must be a positive integer, got `{got}`")
            }
            FuncAttrError::NotFlag { key, got } => {
                write!(f, "function attribute `{key}` must be true or false, got `{got}`")
            }
            FuncAttrError::NotIndices { key, got } => {
                write!(f, "function attribute `{key}` must be a list of integers, got `{got}`")
            }
            FuncAttrError::Index { key, got } => write!(f, "`{key}` lists argument indices, got `{got}`"),
            FuncAttrError::UnknownTarget(e) => write!(f, "{e}"),
            FuncAttrError::Unknown(key) => write!(
                f,
                "unknown function attribute `{key}` (expected target, num_warps, num_stages, num_ctas, maxnreg, gluon, \
                 flattened, enable_fp_fusion or divisible_by_16)"
            ),
            FuncAttrError::Config(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for FuncAttrError {}

/// Sets function attribute `key` into its typed field: the target, the launch configuration ([`Func::config`]) or
/// one of the kernel's facts ([`Func::attrs`]).
fn set_func_attr(f: &mut Func, key: &str, v: Attr) -> Result<(), FuncAttrError> {
    let int = |v: &Attr| match v {
        Attr::Int(n) if *n > 0 && *n <= u32::MAX as i64 => Ok(*n as u32),
        other => Err(FuncAttrError::NotPositive { key: key.into(), got: other.clone() }),
    };
    let flag = |v: &Attr| match v {
        Attr::Bool(b) => Ok(*b),
        other => Err(FuncAttrError::NotFlag { key: key.into(), got: other.clone() }),
    };
    let indices = |v: &Attr| {
        let list = match v {
            Attr::Ints(list) => list.as_slice(),
            Attr::Int(n) => std::slice::from_ref(n),
            other => return Err(FuncAttrError::NotIndices { key: key.into(), got: other.clone() }),
        };
        let index = |&n: &i64| u32::try_from(n).map_err(|_| FuncAttrError::Index { key: key.into(), got: n });
        list.iter().map(index).collect::<Result<Vec<u32>, FuncAttrError>>()
    };
    match key {
        "target" => {
            let name = match &v {
                Attr::Word(w) | Attr::Str(w) => w.clone(),
                other => other.to_string(),
            };
            f.target = name.parse().map_err(FuncAttrError::UnknownTarget)?;
        }
        "num_warps" => f.config.num_warps = int(&v)?,
        "num_stages" => f.config.num_stages = int(&v)?,
        "num_ctas" => f.config.num_ctas = int(&v)?,
        "maxnreg" => f.config.maxnreg = Some(int(&v)?),
        "gluon" => f.attrs.gluon = flag(&v)?,
        "flattened" => f.attrs.flattened = flag(&v)?,
        "enable_fp_fusion" => f.config.fp_fusion = flag(&v)?,
        "divisible_by_16" => f.attrs.divisible_by_16 = indices(&v)?,
        _ => return Err(FuncAttrError::Unknown(key.into())),
    }
    f.config.validate().map_err(FuncAttrError::Config)
}
