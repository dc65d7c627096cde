//! The abstract syntax tree of a module.
//!
//! The shape follows Python's `ast` module closely (so anyone who knows it can read this one), with three
//! simplifications: no expression contexts (Load/Store/Del follow from where an expression sits), parameters carry
//! their own defaults, and dict displays are a list of items instead of parallel key/value lists. Every node
//! carries the [`Span`] of the source it was parsed from; as in Python, a parenthesized expression has the span of
//! what is inside the parentheses (tuples and generator expressions include theirs).
//!
//! [`dump`] prints the tree for `--emit ast`; `Display` on [`Module`], [`Stmt`] and [`Expr`] prints Python source
//! back ([`unparse`]).

mod dump;
mod unparse;

pub use dump::{dump, dump_expr};
pub use unparse::unparse;

pub use crate::span::Span;

/// A whole source file.
#[derive(Clone, Debug, PartialEq)]
pub struct Module {
    pub body: Vec<Stmt>,
    pub span: Span,
}

/// A name as written where one is declared or referenced by a statement (def, class, parameter, alias, global).
#[derive(Clone, Debug, PartialEq)]
pub struct Ident {
    pub name: String,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Stmt {
    pub kind: StmtKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum StmtKind {
    /// An expression evaluated for its effect (a call, a docstring).
    Expr(Expr),
    /// `a = b = value`: one or more targets.
    Assign {
        targets: Vec<Expr>,
        value: Expr,
    },
    AugAssign {
        target: Expr,
        op: BinOpKind,
        value: Expr,
    },
    /// `target: annotation [= value]`; `simple` when the target is a bare name (not parenthesized).
    AnnAssign {
        target: Expr,
        annotation: Expr,
        value: Option<Expr>,
        simple: bool,
    },
    FunctionDef(Box<FunctionDef>),
    ClassDef(Box<ClassDef>),
    Return(Option<Expr>),
    /// `if`; an `elif` chain is an `If` nested alone in `orelse`, as in Python's AST.
    If {
        test: Expr,
        body: Vec<Stmt>,
        orelse: Vec<Stmt>,
    },
    For {
        target: Expr,
        iter: Expr,
        body: Vec<Stmt>,
        orelse: Vec<Stmt>,
    },
    While {
        test: Expr,
        body: Vec<Stmt>,
        orelse: Vec<Stmt>,
    },
    Break,
    Continue,
    Pass,
    Import(Vec<Alias>),
    /// `from ..module import names`; `level` counts the leading dots; `names` is a single `*` alias for a star
    /// import.
    ImportFrom {
        module: Option<String>,
        names: Vec<Alias>,
        level: u32,
    },
    Global(Vec<Ident>),
    Nonlocal(Vec<Ident>),
    Delete(Vec<Expr>),
    Assert {
        test: Expr,
        msg: Option<Expr>,
    },
    Raise {
        exc: Option<Expr>,
        cause: Option<Expr>,
    },
    /// `try`; `star` for `except*` handlers.
    Try {
        body: Vec<Stmt>,
        handlers: Vec<ExceptHandler>,
        orelse: Vec<Stmt>,
        finalbody: Vec<Stmt>,
        star: bool,
    },
    With {
        items: Vec<WithItem>,
        body: Vec<Stmt>,
    },
    /// `match subject:` and its `case`s (host code; kernels reject it).
    Match {
        subject: Expr,
        cases: Vec<MatchCase>,
    },
    /// `type Name[params] = value` (Python 3.12).
    TypeAlias {
        name: Ident,
        type_params: Vec<TypeParam>,
        value: Expr,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub struct FunctionDef {
    pub name: Ident,
    pub decorators: Vec<Expr>,
    pub type_params: Vec<TypeParam>,
    pub params: Parameters,
    pub returns: Option<Expr>,
    pub body: Vec<Stmt>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ClassDef {
    pub name: Ident,
    pub decorators: Vec<Expr>,
    pub type_params: Vec<TypeParam>,
    pub bases: Vec<Expr>,
    pub keywords: Vec<Keyword>,
    pub body: Vec<Stmt>,
}

/// A parameter list, in Python's order: `posonly, /, args, *vararg, kwonly, **kwarg`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Parameters {
    pub posonly: Vec<Param>,
    pub args: Vec<Param>,
    pub vararg: Option<Param>,
    pub kwonly: Vec<Param>,
    pub kwarg: Option<Param>,
}

impl Parameters {
    /// All parameters in declaration order.
    pub fn iter(&self) -> impl Iterator<Item = &Param> {
        self.posonly.iter().chain(&self.args).chain(&self.vararg).chain(&self.kwonly).chain(&self.kwarg)
    }

    pub fn is_empty(&self) -> bool {
        self.iter().next().is_none()
    }
}

/// One parameter: `name[: annotation][= default]` (annotations never appear in lambdas).
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    pub name: Ident,
    pub annotation: Option<Expr>,
    pub default: Option<Expr>,
    pub span: Span,
}

/// A type parameter of a generic def, class or type alias (Python 3.12).
#[derive(Clone, Debug, PartialEq)]
pub struct TypeParam {
    pub kind: TypeParamKind,
    pub name: Ident,
    pub bound: Option<Expr>,
    pub default: Option<Expr>,
    pub span: Span,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum TypeParamKind {
    /// `T`
    TypeVar,
    /// `*Ts`
    TypeVarTuple,
    /// `**P`
    ParamSpec,
}

/// `name [as asname]` in an import; `name` is dotted (`triton.language`).
#[derive(Clone, Debug, PartialEq)]
pub struct Alias {
    pub name: String,
    pub asname: Option<Ident>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ExceptHandler {
    pub typ: Option<Expr>,
    pub name: Option<Ident>,
    pub body: Vec<Stmt>,
    pub span: Span,
}

/// `case pattern [as name] [if guard]: body`. The pattern is read as an expression: Python's patterns (literals,
/// captures, `_`, dotted values, sequences, `*rest`, mappings with `**rest`, class patterns `Point(x=0)`, `|`
/// alternatives) are all expressions in form; only `as` is not, and it is taken at the top of a case. A nested
/// `(p as q)` does not parse, and some expressions that are not patterns (`a + b`) are accepted.
#[derive(Clone, Debug, PartialEq)]
pub struct MatchCase {
    pub pattern: Expr,
    pub alias: Option<Ident>,
    pub guard: Option<Expr>,
    pub body: Vec<Stmt>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct WithItem {
    pub context: Expr,
    pub target: Option<Expr>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    Name(String),
    Constant(Constant),
    /// `value.attr`
    Attribute {
        value: Box<Expr>,
        attr: Ident,
    },
    /// `value[index]`; several indices form a `Tuple`, `a:b:c` a `Slice`.
    Subscript {
        value: Box<Expr>,
        index: Box<Expr>,
    },
    /// `lower:upper:step`, only as (part of) a subscript index.
    Slice {
        lower: Option<Box<Expr>>,
        upper: Option<Box<Expr>>,
        step: Option<Box<Expr>>,
    },
    /// `func(args, keywords)`; `*xs` arguments are `Starred`, `**kw` keywords have no name.
    Call {
        func: Box<Expr>,
        args: Vec<Expr>,
        keywords: Vec<Keyword>,
    },
    BinOp {
        left: Box<Expr>,
        op: BinOpKind,
        right: Box<Expr>,
    },
    UnaryOp {
        op: UnaryOpKind,
        operand: Box<Expr>,
    },
    /// `a and b and c`: one operator over two or more values.
    BoolOp {
        op: BoolOpKind,
        values: Vec<Expr>,
    },
    /// `a < b <= c`: `ops[i]` compares the previous operand with `comparators[i]`.
    Compare {
        left: Box<Expr>,
        ops: Vec<CmpOp>,
        comparators: Vec<Expr>,
    },
    /// `body if test else orelse`
    IfExp {
        test: Box<Expr>,
        body: Box<Expr>,
        orelse: Box<Expr>,
    },
    Lambda {
        params: Box<Parameters>,
        body: Box<Expr>,
    },
    /// `yield [value]`: host code only (generators, `@contextmanager`); kernels reject it.
    Yield(Option<Box<Expr>>),
    /// `yield from value`
    YieldFrom(Box<Expr>),
    Tuple(Vec<Expr>),
    List(Vec<Expr>),
    Set(Vec<Expr>),
    Dict(Vec<DictItem>),
    ListComp {
        elt: Box<Expr>,
        generators: Vec<Comprehension>,
    },
    SetComp {
        elt: Box<Expr>,
        generators: Vec<Comprehension>,
    },
    GeneratorExp {
        elt: Box<Expr>,
        generators: Vec<Comprehension>,
    },
    DictComp {
        key: Box<Expr>,
        value: Box<Expr>,
        generators: Vec<Comprehension>,
    },
    /// `*value` in a call, display or assignment target.
    Starred(Box<Expr>),
    /// `target := value`
    NamedExpr {
        target: Ident,
        value: Box<Expr>,
    },
    /// An f-string (possibly implicitly concatenated with plain strings).
    JoinedStr(Vec<FStringPart>),
}

#[derive(Clone, Debug, PartialEq)]
pub enum Constant {
    None,
    Bool(bool),
    /// An integer literal (always non-negative; `-1` is a `UnaryOp`).
    Int(u128),
    Float(f64),
    Str(String),
    Bytes(Vec<u8>),
    Ellipsis,
}

/// One `{key: value}` or `{**mapping}` item of a dict display.
#[derive(Clone, Debug, PartialEq)]
pub enum DictItem {
    Pair { key: Expr, value: Expr },
    Spread(Expr),
}

/// `name=value`, or `**value` when `arg` is `None`.
#[derive(Clone, Debug, PartialEq)]
pub struct Keyword {
    pub arg: Option<Ident>,
    pub value: Expr,
    pub span: Span,
}

/// `for target in iter if cond...` in a comprehension.
#[derive(Clone, Debug, PartialEq)]
pub struct Comprehension {
    pub target: Expr,
    pub iter: Expr,
    pub ifs: Vec<Expr>,
    pub span: Span,
}

/// A piece of an f-string.
#[derive(Clone, Debug, PartialEq)]
pub enum FStringPart {
    Literal(String, Span),
    Field(FormattedValue),
}

/// A replacement field `{value[=][!conversion][:format_spec]}`.
#[derive(Clone, Debug, PartialEq)]
pub struct FormattedValue {
    pub value: Box<Expr>,
    /// For `{x = }`, the text Python prints before the value (`"x = "`). Python then formats the value with
    /// `repr` unless a conversion or format spec is given.
    pub debug_text: Option<String>,
    /// `'s'`, `'r'` or `'a'`.
    pub conversion: Option<char>,
    /// The format spec, itself an f-string (it may contain fields: `{x:{width}}`).
    pub format_spec: Option<Vec<FStringPart>>,
    pub span: Span,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum BinOpKind {
    Add,
    Sub,
    Mul,
    MatMul,
    Div,
    FloorDiv,
    Mod,
    Pow,
    LShift,
    RShift,
    BitOr,
    BitXor,
    BitAnd,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum UnaryOpKind {
    /// `not`
    Not,
    /// `~`
    Invert,
    /// `+`
    UAdd,
    /// `-`
    USub,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum BoolOpKind {
    And,
    Or,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum CmpOp {
    Eq,
    NotEq,
    Lt,
    LtE,
    Gt,
    GtE,
    Is,
    IsNot,
    In,
    NotIn,
}

impl BinOpKind {
    pub fn symbol(self) -> &'static str {
        use BinOpKind::*;
        match self {
            Add => "+",
            Sub => "-",
            Mul => "*",
            MatMul => "@",
            Div => "/",
            FloorDiv => "//",
            Mod => "%",
            Pow => "**",
            LShift => "<<",
            RShift => ">>",
            BitOr => "|",
            BitXor => "^",
            BitAnd => "&",
        }
    }
}

impl UnaryOpKind {
    pub fn symbol(self) -> &'static str {
        match self {
            UnaryOpKind::Not => "not",
            UnaryOpKind::Invert => "~",
            UnaryOpKind::UAdd => "+",
            UnaryOpKind::USub => "-",
        }
    }
}

impl BoolOpKind {
    pub fn symbol(self) -> &'static str {
        match self {
            BoolOpKind::And => "and",
            BoolOpKind::Or => "or",
        }
    }
}

impl CmpOp {
    pub fn symbol(self) -> &'static str {
        use CmpOp::*;
        match self {
            Eq => "==",
            NotEq => "!=",
            Lt => "<",
            LtE => "<=",
            Gt => ">",
            GtE => ">=",
            Is => "is",
            IsNot => "is not",
            In => "in",
            NotIn => "not in",
        }
    }
}

impl Expr {
    pub fn new(kind: ExprKind, span: Span) -> Self {
        Expr { kind, span }
    }

    /// The name if this is a plain `Name`.
    pub fn as_name(&self) -> Option<&str> {
        match &self.kind {
            ExprKind::Name(n) => Some(n),
            _ => None,
        }
    }

    /// The dotted path of a `Name`/`Attribute` chain (`triton.language.constexpr`), if it is one.
    pub fn dotted_name(&self) -> Option<String> {
        match &self.kind {
            ExprKind::Name(n) => Some(n.clone()),
            ExprKind::Attribute { value, attr } => Some(format!("{}.{}", value.dotted_name()?, attr.name)),
            _ => None,
        }
    }
}

impl Stmt {
    pub fn new(kind: StmtKind, span: Span) -> Self {
        Stmt { kind, span }
    }
}
