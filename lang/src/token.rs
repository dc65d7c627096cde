//! Tokens produced by the lexer.
//!
//! The token set is Python's: names, literals, keywords, operators and the layout tokens `NEWLINE`, `INDENT` and
//! `DEDENT`. f-strings follow PEP 701 (Python 3.12): an f-string is lexed as `FStringStart`, then literal text
//! (`FStringMiddle`) interleaved with replacement fields whose expressions are ordinary tokens between `{` and `}`
//! (with `!` before a conversion and `:` before a format spec), then `FStringEnd`. The parser therefore parses the
//! expressions inside f-strings with the same grammar as everywhere else, with exact spans.

use std::fmt;

use crate::span::Span;

/// One token and the bytes it covers.
#[derive(Clone, Debug, PartialEq)]
pub struct Token {
    pub kind: TokenKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum TokenKind {
    // Names and literals.
    Name(String),
    Int(u128),
    Float(f64),
    /// A (non-f) string literal, escapes decoded unless it was raw.
    Str(String),
    /// A bytes literal, escapes decoded unless it was raw.
    Bytes(Vec<u8>),
    /// The prefix and opening quote of an f-string.
    FStringStart,
    /// Literal text inside an f-string (or inside a format spec), `{{`/`}}` and escapes decoded.
    FStringMiddle(String),
    /// The closing quote of an f-string.
    FStringEnd,
    /// The `=` of a self-documenting replacement field (`f"{x = }"`), holding the field's text from after the `{`
    /// through the `=` and the spaces after it (`"x = "`), which is what Python prints before the value.
    FStringDebug(String),

    // Layout.
    Newline,
    Indent,
    Dedent,

    // Keywords.
    False,
    None,
    True,
    And,
    As,
    Assert,
    Async,
    Await,
    Break,
    Class,
    Continue,
    Def,
    Del,
    Elif,
    Else,
    Except,
    Finally,
    For,
    From,
    Global,
    If,
    Import,
    In,
    Is,
    Lambda,
    Nonlocal,
    Not,
    Or,
    Pass,
    Raise,
    Return,
    Try,
    While,
    With,
    Yield,

    // Delimiters.
    LParen,
    RParen,
    LBracket,
    RBracket,
    LBrace,
    RBrace,
    Comma,
    Colon,
    Semi,
    Dot,
    Ellipsis,
    Arrow,
    /// `!` before the conversion of an f-string replacement field (`f"{x!r}"`); nowhere else.
    Bang,

    // Operators.
    Plus,
    Minus,
    Star,
    DoubleStar,
    Slash,
    DoubleSlash,
    Percent,
    At,
    LShift,
    RShift,
    Amp,
    Pipe,
    Caret,
    Tilde,
    Walrus,
    Lt,
    Gt,
    Le,
    Ge,
    EqEq,
    NotEq,

    // Assignment.
    Eq,
    PlusEq,
    MinusEq,
    StarEq,
    DoubleStarEq,
    SlashEq,
    DoubleSlashEq,
    PercentEq,
    AtEq,
    LShiftEq,
    RShiftEq,
    AmpEq,
    PipeEq,
    CaretEq,
}

impl TokenKind {
    /// The keyword spelled `word`, if it is one (soft keywords such as `match` and `type` are names).
    pub fn keyword(word: &str) -> Option<TokenKind> {
        use TokenKind::*;
        Some(match word {
            "False" => False,
            "None" => None,
            "True" => True,
            "and" => And,
            "as" => As,
            "assert" => Assert,
            "async" => Async,
            "await" => Await,
            "break" => Break,
            "class" => Class,
            "continue" => Continue,
            "def" => Def,
            "del" => Del,
            "elif" => Elif,
            "else" => Else,
            "except" => Except,
            "finally" => Finally,
            "for" => For,
            "from" => From,
            "global" => Global,
            "if" => If,
            "import" => Import,
            "in" => In,
            "is" => Is,
            "lambda" => Lambda,
            "nonlocal" => Nonlocal,
            "not" => Not,
            "or" => Or,
            "pass" => Pass,
            "raise" => Raise,
            "return" => Return,
            "try" => Try,
            "while" => While,
            "with" => With,
            "yield" => Yield,
            _ => return Option::None,
        })
    }

    /// The fixed spelling of keywords, delimiters and operators; `None` for names, literals and layout tokens.
    pub fn spelling(&self) -> Option<&'static str> {
        use TokenKind::*;
        Some(match self {
            Name(_) | Int(_) | Float(_) | Str(_) | Bytes(_) | FStringStart | FStringMiddle(_) | FStringEnd
            | FStringDebug(_) | Newline | Indent | Dedent => return Option::None,
            False => "False",
            None => "None",
            True => "True",
            And => "and",
            As => "as",
            Assert => "assert",
            Async => "async",
            Await => "await",
            Break => "break",
            Class => "class",
            Continue => "continue",
            Def => "def",
            Del => "del",
            Elif => "elif",
            Else => "else",
            Except => "except",
            Finally => "finally",
            For => "for",
            From => "from",
            Global => "global",
            If => "if",
            Import => "import",
            In => "in",
            Is => "is",
            Lambda => "lambda",
            Nonlocal => "nonlocal",
            Not => "not",
            Or => "or",
            Pass => "pass",
            Raise => "raise",
            Return => "return",
            Try => "try",
            While => "while",
            With => "with",
            Yield => "yield",
            LParen => "(",
            RParen => ")",
            LBracket => "[",
            RBracket => "]",
            LBrace => "{",
            RBrace => "}",
            Comma => ",",
            Colon => ":",
            Semi => ";",
            Dot => ".",
            Ellipsis => "...",
            Arrow => "->",
            Bang => "!",
            Plus => "+",
            Minus => "-",
            Star => "*",
            DoubleStar => "**",
            Slash => "/",
            DoubleSlash => "//",
            Percent => "%",
            At => "@",
            LShift => "<<",
            RShift => ">>",
            Amp => "&",
            Pipe => "|",
            Caret => "^",
            Tilde => "~",
            Walrus => ":=",
            Lt => "<",
            Gt => ">",
            Le => "<=",
            Ge => ">=",
            EqEq => "==",
            NotEq => "!=",
            Eq => "=",
            PlusEq => "+=",
            MinusEq => "-=",
            StarEq => "*=",
            DoubleStarEq => "**=",
            SlashEq => "/=",
            DoubleSlashEq => "//=",
            PercentEq => "%=",
            AtEq => "@=",
            LShiftEq => "<<=",
            RShiftEq => ">>=",
            AmpEq => "&=",
            PipeEq => "|=",
            CaretEq => "^=",
        })
    }

    pub fn is_keyword(&self) -> bool {
        self.spelling().is_some_and(|s| s.starts_with(|c: char| c.is_ascii_alphabetic()))
    }

    /// The token in plain words, for diagnostics: "`)`", "name `x`", "newline", "indent".
    pub fn describe(&self) -> String {
        use TokenKind::*;
        match self {
            Name(n) => format!("name `{n}`"),
            Int(_) | Float(_) => "number".into(),
            Str(_) | Bytes(_) => "string literal".into(),
            FStringStart => "f-string".into(),
            FStringMiddle(_) => "f-string text".into(),
            FStringEnd => "end of f-string".into(),
            FStringDebug(_) => "`=`".into(),
            Newline => "end of line".into(),
            Indent => "indent".into(),
            Dedent => "dedent".into(),
            k if k.is_keyword() => format!("keyword `{k}`"),
            k => format!("`{k}`"),
        }
    }
}

impl fmt::Display for TokenKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use TokenKind::*;
        match self {
            Name(n) => f.write_str(n),
            Int(v) => write!(f, "{v}"),
            Float(v) => write!(f, "{v:?}"),
            Str(s) => write!(f, "{s:?}"),
            Bytes(b) => write!(f, "b\"{}\"", b.escape_ascii()),
            FStringStart => f.write_str("f\""),
            FStringMiddle(s) => f.write_str(s),
            FStringEnd => f.write_str("\""),
            FStringDebug(_) => f.write_str("="),
            Newline => f.write_str("NEWLINE"),
            Indent => f.write_str("INDENT"),
            Dedent => f.write_str("DEDENT"),
            k => f.write_str(k.spelling().unwrap_or("?")),
        }
    }
}
