//! Layout expressions written the way a Gluon kernel writes them: `gl.BlockedLayout([1, 4], [8, 4], [4, 1], [1, 0])`,
//! `SliceLayout(0, parent)`, `NVMMASharedLayout(128, 16, transposed=True)`, `get_tmem_reg_layout(...)`.
//!
//! A small hand-written recursive-descent parser that evaluates as it goes: integers (with `+ - * // % ** << >>`),
//! `True`/`False`/`None`, strings, lists and tuples, dtype names, and calls of the Gluon layout constructors with
//! positional and keyword arguments, Gluon's parameter names and Gluon's defaults. Module prefixes (`gl.`, `ttgl.`,
//! `gl.nvidia.blackwell.`, ...) are accepted and ignored. Every error carries the byte span it is about.

use std::fmt;
use std::ops::Range;

use crate::standard::{AnyLayout, CgaLayout, DistributedLayout, SharedLayout};

mod build;

/// A byte range of the source text.
pub type Span = Range<usize>;

/// Why an expression could not be read, and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExprError {
    pub message: String,
    pub span: Span,
}

impl fmt::Display for ExprError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (at bytes {}..{})", self.message, self.span.start, self.span.end)
    }
}

impl std::error::Error for ExprError {}

type Result<T> = std::result::Result<T, ExprError>;

fn err<T>(span: Span, message: impl Into<String>) -> Result<T> {
    Err(ExprError { message: message.into(), span })
}

/// A parsed layout, with the tensor shape the expression itself implies, if any (the `shape` of a
/// `DistributedLinearLayout` or of `get_tmem_reg_layout`, the `block_shape` of `get_default_for`, the span of a
/// `SharedLinearLayout`'s bases).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParsedLayout {
    pub layout: AnyLayout,
    pub shape: Option<Vec<u32>>,
}

/// Parses one layout expression.
pub fn parse_layout(src: &str) -> Result<AnyLayout> {
    parse_layout_expr(src).map(|p| p.layout)
}

/// Parses one layout expression and keeps the shape it implies.
pub fn parse_layout_expr(src: &str) -> Result<ParsedLayout> {
    let mut p = Parser { tokens: lex(src)?, pos: 0, depth: 0 };
    let v = p.expr()?;
    let end = p.peek();
    if end.tok != Tok::Eof {
        return err(end.span.clone(), format!("unexpected {} after the end of the expression", end.tok));
    }
    match v.value {
        Value::Layout(layout, shape) => Ok(ParsedLayout { layout, shape }),
        other => err(
            v.span,
            format!(
                "expected a layout such as `BlockedLayout([1, 4], [8, 4], [4, 1], [1, 0])`, found {}",
                other.describe()
            ),
        ),
    }
}

pub use build::{KNOWN_CALLABLES, tmem_variant_error};

/// An argument value already evaluated by the caller (the kernel elaborator evaluates `gl.BlockedLayout(...)`'s
/// arguments itself), for [`call_layout`]: the same binder, parameter names, defaults and checks as the text form.
#[derive(Clone, Debug, PartialEq)]
pub enum ArgValue {
    Int(i64),
    Bool(bool),
    Str(String),
    None,
    List(Vec<ArgValue>),
    Tuple(Vec<ArgValue>),
    /// A dtype, by its Gluon name (`float16`).
    Dtype(String),
    Layout(AnyLayout),
}

/// One argument of a [`call_layout`]: its keyword (if passed by name), its value and where it was written.
#[derive(Clone, Debug)]
pub struct CallArg {
    pub name: Option<String>,
    pub value: ArgValue,
    pub span: Span,
}

fn from_arg(v: ArgValue, span: &Span) -> Sp<Value> {
    let seq = |items: Vec<ArgValue>, tuple| Value::Seq(items.into_iter().map(|i| from_arg(i, span)).collect(), tuple);
    let value = match v {
        ArgValue::Int(i) => Value::Int(i),
        ArgValue::Bool(b) => Value::Bool(b),
        ArgValue::Str(s) => Value::Str(s),
        ArgValue::None => Value::None,
        ArgValue::List(items) => seq(items, false),
        ArgValue::Tuple(items) => seq(items, true),
        ArgValue::Dtype(n) => Value::Name(n),
        ArgValue::Layout(l) => Value::Layout(l, None),
    };
    Sp { value, span: span.clone() }
}

/// Calls the Gluon layout constructor or function named by `path` (`["BlockedLayout"]`,
/// `["NVMMASharedLayout", "get_default_for"]`) on arguments evaluated elsewhere. Spans are the caller's (byte
/// ranges of its own source): `path_span` the callee, `span` the whole call; errors point into them.
pub fn call_layout(path: &[&str], path_span: Span, span: Span, args: Vec<CallArg>) -> Result<ParsedLayout> {
    let path: Vec<String> = path.iter().map(|s| s.to_string()).collect();
    let call = Call { path: &path, path_span, span: span.clone(), open: span };
    let args = args
        .into_iter()
        .map(|a| Arg { name: a.name.map(|n| Sp { value: n, span: a.span.clone() }), value: from_arg(a.value, &a.span) })
        .collect();
    match build::call(&call, args)? {
        Value::Layout(layout, shape) => Ok(ParsedLayout { layout, shape }),
        other => err(call.span.clone(), format!("expected a layout, found {}", other.describe())),
    }
}

// ----- lexer -----

#[derive(Clone, Debug, PartialEq, Eq)]
enum Tok {
    Ident(String),
    Int(i64),
    Str(String),
    Sym(&'static str),
    Eof,
}

impl fmt::Display for Tok {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tok::Ident(s) => write!(f, "name `{s}`"),
            Tok::Int(i) => write!(f, "number `{i}`"),
            Tok::Str(s) => write!(f, "string {s:?}"),
            Tok::Sym(s) => write!(f, "`{s}`"),
            Tok::Eof => f.write_str("end of input"),
        }
    }
}

#[derive(Clone, Debug)]
struct Token {
    tok: Tok,
    span: Span,
}

const SYMBOLS: &[&str] = &["**", "//", "<<", ">>", "(", ")", "[", "]", ",", "=", ".", "+", "-", "*", "%"];

fn lex(src: &str) -> Result<Vec<Token>> {
    let bytes = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        let start = i;
        if c.is_ascii_whitespace() || c == b'\\' && bytes.get(i + 1) == Some(&b'\n') {
            i += if c == b'\\' { 2 } else { 1 };
            continue;
        }
        let tok = if c.is_ascii_alphabetic() || c == b'_' {
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            Tok::Ident(src[start..i].to_string())
        } else if c.is_ascii_digit() {
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            Tok::Int(parse_int(&src[start..i], start..i)?)
        } else if c == b'"' || c == b'\'' {
            i += 1;
            while i < bytes.len() && bytes[i] != c && bytes[i] != b'\n' {
                i += 1;
            }
            if i >= bytes.len() || bytes[i] != c {
                return err(start..i, "this string is not closed");
            }
            i += 1;
            Tok::Str(src[start + 1..i - 1].to_string())
        } else if let Some(sym) = SYMBOLS.iter().find(|s| src[i..].starts_with(**s)) {
            i += sym.len();
            Tok::Sym(sym)
        } else {
            let ch = src[i..].chars().next().unwrap_or('?');
            return err(i..i + ch.len_utf8(), format!("unexpected character `{ch}`"));
        };
        out.push(Token { tok, span: start..i });
    }
    out.push(Token { tok: Tok::Eof, span: src.len()..src.len() });
    Ok(out)
}

fn parse_int(text: &str, span: Span) -> Result<i64> {
    let clean: String = text.chars().filter(|&c| c != '_').collect();
    let lower = clean.to_ascii_lowercase();
    let (digits, radix) = match lower.get(..2) {
        Some("0x") => (&lower[2..], 16),
        Some("0b") => (&lower[2..], 2),
        Some("0o") => (&lower[2..], 8),
        _ => (lower.as_str(), 10),
    };
    i64::from_str_radix(digits, radix)
        .or_else(|_| err(span, format!("`{text}` is not an integer this parser can read")))
}

// ----- values -----

#[derive(Clone, Debug)]
struct Sp<T> {
    value: T,
    span: Span,
}

#[derive(Clone, Debug)]
enum Value {
    Int(i64),
    Bool(bool),
    Str(String),
    None,
    /// A list (`false`) or tuple (`true`).
    Seq(Vec<Sp<Value>>, bool),
    /// A dotted name that is not called, such as `gl.float16`.
    Name(String),
    /// A layout and the tensor shape its expression implies, if any.
    Layout(AnyLayout, Option<Vec<u32>>),
}

impl Value {
    fn describe(&self) -> String {
        match self {
            Value::Int(i) => format!("the integer {i}"),
            Value::Bool(b) => format!("`{}`", if *b { "True" } else { "False" }),
            Value::Str(s) => format!("the string {s:?}"),
            Value::None => "`None`".to_string(),
            Value::Seq(_, false) => "a list".to_string(),
            Value::Seq(_, true) => "a tuple".to_string(),
            Value::Name(n) => format!("the name `{n}`"),
            Value::Layout(l, _) => format!("a {}", layout_kind(l)),
        }
    }
}

/// The Gluon class name of a layout.
pub fn layout_kind(layout: &AnyLayout) -> &'static str {
    match layout {
        AnyLayout::Distributed(d) => match d {
            DistributedLayout::Blocked(_) => "BlockedLayout",
            DistributedLayout::Slice(_) => "SliceLayout",
            DistributedLayout::DotOperand(_) => "DotOperandLayout",
            DistributedLayout::Nvmma(_) => "NVMMADistributedLayout",
            DistributedLayout::Linear(_) => "DistributedLinearLayout",
            DistributedLayout::TmemReg(_) => "tensor-memory register layout",
        },
        AnyLayout::Shared(s) => match s {
            SharedLayout::Swizzled(_) => "SwizzledSharedLayout",
            SharedLayout::Nvmma(_) => "NVMMASharedLayout",
            SharedLayout::Linear(_) => "SharedLinearLayout",
        },
        AnyLayout::TensorMemory(_) => "TensorMemoryLayout",
        AnyLayout::TensorMemoryScales(_) => "TensorMemoryScalesLayout",
    }
}

// ----- parser (evaluates as it parses) -----

struct Parser {
    tokens: Vec<Token>,
    pos: usize,
    /// Nesting of expressions and unary operators, bounded so that deep input cannot exhaust the stack.
    depth: usize,
}

/// How deeply expressions may nest.
const MAX_DEPTH: usize = 64;

struct Arg {
    name: Option<Sp<String>>,
    value: Sp<Value>,
}

impl Parser {
    fn peek(&self) -> &Token {
        &self.tokens[self.pos]
    }

    fn bump(&mut self) -> Token {
        let t = self.tokens[self.pos].clone();
        if t.tok != Tok::Eof {
            self.pos += 1;
        }
        t
    }

    fn at(&self, sym: &str) -> bool {
        matches!(&self.peek().tok, Tok::Sym(s) if *s == sym)
    }

    fn eat(&mut self, sym: &str) -> bool {
        let hit = self.at(sym);
        if hit {
            self.pos += 1;
        }
        hit
    }

    fn expect(&mut self, sym: &str, context: &str) -> Result<Span> {
        let t = self.peek().clone();
        if self.eat(sym) { Ok(t.span) } else { err(t.span, format!("expected `{sym}` {context}, found {}", t.tok)) }
    }

    fn expr(&mut self) -> Result<Sp<Value>> {
        self.nested(|p| p.binary(0))
    }

    fn nested(&mut self, f: impl FnOnce(&mut Self) -> Result<Sp<Value>>) -> Result<Sp<Value>> {
        if self.depth >= MAX_DEPTH {
            return err(self.peek().span.clone(), format!("the expression nests more than {MAX_DEPTH} levels deep"));
        }
        self.depth += 1;
        let r = f(self);
        self.depth -= 1;
        r
    }

    /// Binary operators by Python precedence: `<< >>`, then `+ -`, then `* // %`.
    fn binary(&mut self, level: usize) -> Result<Sp<Value>> {
        const LEVELS: [&[&str]; 3] = [&["<<", ">>"], &["+", "-"], &["*", "//", "%"]];
        if level == LEVELS.len() {
            return self.unary();
        }
        let mut lhs = self.binary(level + 1)?;
        while let Some(op) = LEVELS[level].iter().find(|op| self.at(op)) {
            let op_span = self.bump().span;
            let rhs = self.binary(level + 1)?;
            let span = lhs.span.start..rhs.span.end;
            lhs = Sp { value: apply_op(op, lhs, rhs, op_span)?, span };
        }
        Ok(lhs)
    }

    fn unary(&mut self) -> Result<Sp<Value>> {
        if self.at("-") || self.at("+") {
            let op = self.bump();
            let v = self.nested(Self::unary)?;
            let span = op.span.start..v.span.end;
            return match v.value {
                Value::Int(i) if op.tok == Tok::Sym("-") => Ok(Sp { value: Value::Int(-i), span }),
                Value::Int(i) => Ok(Sp { value: Value::Int(i), span }),
                other => err(span, format!("unary `{}` needs an integer, found {}", op.tok, other.describe())),
            };
        }
        self.power()
    }

    fn power(&mut self) -> Result<Sp<Value>> {
        let base = self.atom()?;
        if self.at("**") {
            let op_span = self.bump().span;
            let exp = self.nested(Self::unary)?;
            let span = base.span.start..exp.span.end;
            return Ok(Sp { value: apply_op("**", base, exp, op_span)?, span });
        }
        Ok(base)
    }

    fn atom(&mut self) -> Result<Sp<Value>> {
        let t = self.bump();
        match t.tok {
            Tok::Int(i) => Ok(Sp { value: Value::Int(i), span: t.span }),
            Tok::Str(s) => Ok(Sp { value: Value::Str(s), span: t.span }),
            Tok::Sym("[") => {
                let (items, end) = self.items("]", "to close the list")?;
                Ok(Sp { value: Value::Seq(items, false), span: t.span.start..end.end })
            }
            Tok::Sym("(") => {
                let (mut items, end, trailing_comma) = self.items_with_comma(")", "to close the parentheses")?;
                let span = t.span.start..end.end;
                if items.len() == 1 && !trailing_comma {
                    let inner = items.pop().expect("one item");
                    return Ok(Sp { value: inner.value, span });
                }
                Ok(Sp { value: Value::Seq(items, true), span })
            }
            Tok::Ident(first) => {
                let mut path = vec![first];
                let mut end = t.span.end;
                while self.eat(".") {
                    let n = self.bump();
                    let Tok::Ident(name) = n.tok else {
                        return err(n.span, format!("expected a name after `.`, found {}", n.tok));
                    };
                    path.push(name);
                    end = n.span.end;
                }
                let path_span = t.span.start..end;
                if self.at("(") {
                    let open = self.bump().span;
                    let args = self.args()?;
                    let close = self.expect(")", "to close the argument list")?;
                    let call = Call { path: &path, path_span, span: t.span.start..close.end, open };
                    let value = build::call(&call, args)?;
                    return Ok(Sp { value, span: t.span.start..close.end });
                }
                let value = match (path.len(), path[0].as_str()) {
                    (1, "True") => Value::Bool(true),
                    (1, "False") => Value::Bool(false),
                    (1, "None") => Value::None,
                    _ => Value::Name(path.join(".")),
                };
                Ok(Sp { value, span: path_span })
            }
            tok => err(t.span, format!("expected a value, found {tok}")),
        }
    }

    fn items(&mut self, close: &str, context: &str) -> Result<(Vec<Sp<Value>>, Span)> {
        self.items_with_comma(close, context).map(|(items, end, _)| (items, end))
    }

    /// Comma-separated values up to `close`; also says whether a comma came last (`(1,)` is a tuple).
    fn items_with_comma(&mut self, close: &str, context: &str) -> Result<(Vec<Sp<Value>>, Span, bool)> {
        let mut items = Vec::new();
        let mut trailing = false;
        loop {
            if self.at(close) {
                break;
            }
            items.push(self.expr()?);
            trailing = self.eat(",");
            if !trailing {
                break;
            }
        }
        let end = self.expect(close, context)?;
        Ok((items, end, trailing))
    }

    fn args(&mut self) -> Result<Vec<Arg>> {
        let mut args: Vec<Arg> = Vec::new();
        while !self.at(")") {
            let is_kw = matches!(self.peek().tok, Tok::Ident(_))
                && matches!(self.tokens.get(self.pos + 1).map(|t| &t.tok), Some(Tok::Sym("=")));
            let arg = if is_kw {
                let name_tok = self.bump();
                self.bump();
                let Tok::Ident(name) = name_tok.tok else { unreachable!("checked above") };
                Arg { name: Some(Sp { value: name, span: name_tok.span }), value: self.expr()? }
            } else {
                let value = self.expr()?;
                if args.iter().any(|a| a.name.is_some()) {
                    return err(value.span, "positional argument follows keyword argument");
                }
                Arg { name: None, value }
            };
            args.push(arg);
            if !self.eat(",") {
                break;
            }
        }
        Ok(args)
    }
}

fn apply_op(op: &str, lhs: Sp<Value>, rhs: Sp<Value>, op_span: Span) -> Result<Value> {
    let overflow = || ExprError { message: format!("`{op}` overflows"), span: lhs.span.start..rhs.span.end };
    match (lhs.value, rhs.value) {
        (Value::Int(a), Value::Int(b)) => {
            let r = match op {
                "+" => a.checked_add(b),
                "-" => a.checked_sub(b),
                "*" => a.checked_mul(b),
                "//" | "%" if b == 0 => return err(rhs.span, "division by zero"),
                "//" => floor_div(a, b),
                "%" => floor_div(a, b).and_then(|q| a.checked_sub(q.checked_mul(b)?)),
                "**" if b < 0 => return err(rhs.span, "a negative exponent does not give an integer"),
                "**" => u32::try_from(b).ok().and_then(|b| a.checked_pow(b)),
                "<<" | ">>" if !(0..63).contains(&b) => return err(rhs.span, format!("shift by {b} is out of range")),
                "<<" => a.checked_mul(1 << b),
                ">>" => Some(a >> b),
                _ => unreachable!("operator table"),
            };
            r.map(Value::Int).ok_or_else(overflow)
        }
        (Value::Seq(mut a, t), Value::Seq(b, u)) if op == "+" && t == u => {
            a.extend(b);
            Ok(Value::Seq(a, t))
        }
        (Value::Seq(items, t), Value::Int(n)) | (Value::Int(n), Value::Seq(items, t)) if op == "*" => {
            let n = usize::try_from(n).unwrap_or(0);
            if items.len().saturating_mul(n) > 4096 {
                return Err(overflow());
            }
            Ok(Value::Seq(items.iter().cloned().cycle().take(items.len() * n).collect(), t))
        }
        (a, b) => err(op_span, format!("`{op}` cannot combine {} and {}", a.describe(), b.describe())),
    }
}

/// Python's `//`: the quotient rounded toward negative infinity.
fn floor_div(a: i64, b: i64) -> Option<i64> {
    let q = a.checked_div(b)?;
    Some(if a % b != 0 && (a < 0) != (b < 0) { q - 1 } else { q })
}

// ----- calls -----

/// One parameter of a Gluon function: its name, its default (as Gluon writes it; `None` = required) and whether
/// it is a legacy keyword-only parameter (accepted, not advertised).
#[derive(Clone, Copy)]
struct Param {
    name: &'static str,
    default: Option<&'static str>,
    legacy: bool,
}

const fn req(name: &'static str) -> Param {
    Param { name, default: None, legacy: false }
}

const fn opt(name: &'static str, default: &'static str) -> Param {
    Param { name, default: Some(default), legacy: false }
}

const fn legacy(name: &'static str) -> Param {
    Param { name, default: Some("None"), legacy: true }
}

fn signature(name: &str, params: &[Param]) -> String {
    let shown: Vec<String> = params
        .iter()
        .filter(|p| !p.legacy)
        .map(|p| match p.default {
            Some(d) => format!("{}={d}", p.name),
            None => p.name.to_string(),
        })
        .collect();
    format!("{name}({})", shown.join(", "))
}

struct Call<'a> {
    path: &'a [String],
    path_span: Span,
    span: Span,
    /// The opening parenthesis (where a missing argument is reported).
    open: Span,
}

/// The arguments of one call, bound to the parameters of the function called.
struct Bound<'a> {
    func: &'a str,
    params: &'a [Param],
    values: Vec<Option<Sp<Value>>>,
    call: &'a Call<'a>,
}

impl Call<'_> {
    fn bind<'a>(&'a self, func: &'a str, params: &'a [Param], args: Vec<Arg>) -> Result<Bound<'a>> {
        let mut values: Vec<Option<Sp<Value>>> = params.iter().map(|_| None).collect();
        let positional = params.iter().filter(|p| !p.legacy).count();
        for (i, arg) in args.into_iter().enumerate() {
            let slot = match &arg.name {
                None if i >= positional => {
                    return err(
                        arg.value.span,
                        format!(
                            "{func} takes at most {positional} positional argument{}: {}",
                            if positional == 1 { "" } else { "s" },
                            signature(func, params)
                        ),
                    );
                }
                None => i,
                Some(kw) => match params.iter().position(|p| p.name == kw.value) {
                    Some(j) => j,
                    None => {
                        let names: Vec<&str> = params.iter().filter(|p| !p.legacy).map(|p| p.name).collect();
                        let all: Vec<&str> = params.iter().map(|p| p.name).collect();
                        let hint =
                            suggest(&kw.value, &all).map(|s| format!("did you mean `{s}`? ")).unwrap_or_default();
                        return err(
                            kw.span.clone(),
                            format!(
                                "{func} has no parameter `{}`; {hint}its parameters are: {}",
                                kw.value,
                                names.join(", ")
                            ),
                        );
                    }
                },
            };
            if values[slot].is_some() {
                let span = arg.name.map_or(arg.value.span, |n| n.span);
                return err(span, format!("{func} got the argument `{}` twice", params[slot].name));
            }
            values[slot] = Some(arg.value);
        }
        if let Some(missing) = params.iter().zip(&values).find(|(p, v)| p.default.is_none() && v.is_none()) {
            return err(
                self.open.start..self.span.end,
                format!("{func} is missing the argument `{}`: {}", missing.0.name, signature(func, params)),
            );
        }
        Ok(Bound { func, params, values, call: self })
    }
}

impl Bound<'_> {
    /// The argument for `name`, if given and not `None`.
    fn get(&mut self, name: &str) -> Option<Sp<Value>> {
        let i = self.params.iter().position(|p| p.name == name).expect("parameter is in the signature");
        self.values[i].take().filter(|v| !matches!(v.value, Value::None))
    }

    fn required(&mut self, name: &str) -> Result<Sp<Value>> {
        let span = self.call.span.clone();
        self.get(name).map_or_else(|| err(span, format!("{}: `{name}` cannot be None", self.func)), Ok)
    }

    fn u32(&mut self, name: &str) -> Result<u32> {
        let v = self.required(name)?;
        to_u32(&v, &format!("{}: {name}", self.func))
    }

    fn u32_or(&mut self, name: &str, default: u32) -> Result<u32> {
        self.get(name).map_or(Ok(default), |v| to_u32(&v, &format!("{}: {name}", self.func)))
    }

    fn list(&mut self, name: &str) -> Result<Vec<u32>> {
        let v = self.required(name)?;
        to_u32_list(&v, &format!("{}: {name}", self.func))
    }

    fn bases(&mut self, name: &str) -> Result<Vec<Vec<u32>>> {
        self.get(name).map_or(Ok(Vec::new()), |v| to_bases(&v, &format!("{}: {name}", self.func)))
    }

    fn bool_or(&mut self, name: &str, default: bool) -> Result<bool> {
        match self.get(name) {
            None => Ok(default),
            Some(Sp { value: Value::Bool(b), .. }) => Ok(b),
            Some(v) => {
                err(v.span, format!("{}: {name} must be True or False, found {}", self.func, v.value.describe()))
            }
        }
    }

    fn distributed(&mut self, name: &str) -> Result<(DistributedLayout, Option<Vec<u32>>)> {
        let v = self.required(name)?;
        match v.value {
            Value::Layout(AnyLayout::Distributed(d), shape) => Ok((d, shape)),
            other => err(
                v.span,
                format!("{}: {name} must be a distributed (register) layout, found {}", self.func, other.describe()),
            ),
        }
    }

    /// `cga_layout` (bases) or the legacy `ctas_per_cga` / `cta_split_num` / `cta_order` for a layout of `rank`.
    fn cga(&mut self, rank: usize) -> Result<CgaLayout> {
        let cga = self.get("cga_layout");
        let has_legacy = self.params.iter().any(|p| p.name == "ctas_per_cga");
        let (ctas, split, order) = if has_legacy {
            (self.get("ctas_per_cga"), self.get("cta_split_num"), self.get("cta_order"))
        } else {
            (None, None, None)
        };
        let legacy_span = ctas.iter().chain(&split).chain(&order).map(|v| v.span.clone()).next();
        match (cga, legacy_span) {
            (Some(c), Some(_)) => err(
                c.span,
                format!(
                    "{}: give either cga_layout or the legacy ctas_per_cga/cta_split_num/cta_order, not both",
                    self.func
                ),
            ),
            (Some(c), None) => {
                let bases = to_bases(&c, &format!("{}: cga_layout", self.func))?;
                Ok(if bases.is_empty() { CgaLayout::Single } else { CgaLayout::Bases(bases) })
            }
            (None, Some(_)) => {
                let list = |v: Option<Sp<Value>>, what: &str, default: Vec<u32>| {
                    v.map_or(Ok(default), |v| to_u32_list(&v, &format!("{}: {what}", self.func)))
                };
                Ok(CgaLayout::Legacy {
                    ctas_per_cga: list(ctas, "ctas_per_cga", vec![1; rank])?,
                    cta_split: list(split, "cta_split_num", vec![1; rank])?,
                    cta_order: list(order, "cta_order", (0..rank as u32).rev().collect())?,
                })
            }
            (None, None) => Ok(CgaLayout::Single),
        }
    }

    /// Checks a layout built from these arguments with its own `validate`, blaming the whole call.
    fn checked(&self, v: std::result::Result<(), crate::LayoutError>) -> Result<()> {
        v.or_else(|e| err(self.call.span.clone(), e.0))
    }
}

fn to_u32(v: &Sp<Value>, what: &str) -> Result<u32> {
    match v.value {
        Value::Int(i) => {
            u32::try_from(i).or_else(|_| err(v.span.clone(), format!("{what} must be in 0..2^32, got {i}")))
        }
        ref other => err(v.span.clone(), format!("{what} must be an integer, found {}", other.describe())),
    }
}

fn to_u32_list(v: &Sp<Value>, what: &str) -> Result<Vec<u32>> {
    match &v.value {
        Value::Seq(items, _) => items.iter().map(|x| to_u32(x, &format!("{what} entries"))).collect(),
        other => err(v.span.clone(), format!("{what} must be a list of integers, found {}", other.describe())),
    }
}

fn to_bases(v: &Sp<Value>, what: &str) -> Result<Vec<Vec<u32>>> {
    match &v.value {
        Value::Seq(items, _) => items.iter().map(|b| to_u32_list(b, &format!("each basis of {what}"))).collect(),
        other => err(
            v.span.clone(),
            format!("{what} must be a list of bases (lists of integers), found {}", other.describe()),
        ),
    }
}

/// The closest of `choices` to `word` (by edit distance, ignoring case), if it is close enough to be a typo.
fn suggest<'a>(word: &str, choices: &[&'a str]) -> Option<&'a str> {
    let w = word.to_ascii_lowercase();
    choices
        .iter()
        .map(|c| (edit_distance(&w, &c.to_ascii_lowercase()), *c))
        .filter(|&(d, c)| d <= (c.len() / 3).max(1))
        .min_by_key(|&(d, _)| d)
        .map(|(_, c)| c)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests;
