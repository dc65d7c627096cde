//! The hand-written lexer: Python's tokenizer, with byte spans.
//!
//! Line structure follows the Python reference: a logical line ends in `NEWLINE`; blank and comment-only lines
//! produce nothing; lines are joined implicitly inside `()`, `[]`, `{}` and explicitly by a trailing `\`. The
//! indentation of each logical line is compared with a stack of open levels, producing `INDENT` and `DEDENT`.
//! Tabs advance to the next multiple of 8, and, as in CPython, the indentation is also measured with tabs as one
//! column: if the two measures order two lines differently, the file mixes tabs and spaces inconsistently and is
//! rejected. f-strings are lexed per PEP 701 (see [`crate::token`]).

mod literal;

use crate::diag::Diagnostic;
use crate::span::Span;
use crate::token::{Token, TokenKind};
use literal::{Buf, is_ident_continue, is_ident_start};

/// The tokens of a module, plus the brackets still open at the end of the input.
///
/// The parser reports an error for unclosed brackets (it runs out of input inside them); `unclosed` lets that
/// error point at the bracket that was opened.
#[derive(Clone, Debug)]
pub struct Lexed {
    pub tokens: Vec<Token>,
    pub unclosed: Vec<(char, Span)>,
}

/// Splits `source` into tokens, ending with `NEWLINE` (if the last line has tokens) and the `DEDENT`s that close
/// the open indentation levels.
pub fn tokenize(source: &str) -> Result<Lexed, Diagnostic> {
    let mut lexer = Lexer {
        src: source,
        // A UTF-8 byte order mark at the start is not part of the program.
        pos: if source.starts_with('\u{feff}') { '\u{feff}'.len_utf8() } else { 0 },
        tokens: Vec::new(),
        indents: vec![(0, 0)],
        brackets: Vec::new(),
        modes: Vec::new(),
        line_has_tokens: false,
        at_line_start: true,
    };
    lexer.run()?;
    check_nesting(&lexer.tokens)?;
    let unclosed = lexer.brackets.iter().map(|open| (open.ch as char, open.span)).collect();
    Ok(Lexed { tokens: lexer.tokens, unclosed })
}

/// Brackets (and f-string replacement fields) open at once, at most: CPython's tokenizer limit, with its message.
pub const MAX_BRACKET_DEPTH: usize = 200;
/// Open indentation levels, at most (CPython's limit, "too many levels of indentation").
pub const MAX_INDENT_LEVELS: usize = 100;
/// How deep one expression may nest, counted as [`check_nesting`] bounds it. CPython's compiler gives up near the
/// same depth ("maximum recursion depth exceeded during compilation" for a sum of 5000 terms); every pass over the
/// syntax tree, its `Drop` included, recurses once per level, so the tree must never get deeper than this.
pub const MAX_NESTING: usize = 3000;

/// Refuses expressions whose syntax tree could nest deeper than [`MAX_NESTING`], before the parser builds them.
///
/// A bound from the tokens alone: every level of an expression tree is owed to a token of its own (an operator, a
/// keyword such as `lambda`, `if` or `not`, a `.`, or a bracket), so within one bracket group the depth is at most
/// the count of such tokens in one comma-separated item, plus the depth of the deepest group nested in that item,
/// plus a few levels for the group itself (a call or subscript, a tuple, a slice). `lambda` and `for` keep counting
/// past commas, since their parameters and targets are comma lists inside the node they open.
pub fn check_nesting(tokens: &[Token]) -> Result<(), Diagnostic> {
    use TokenKind as T;
    #[derive(Default)]
    struct Group {
        /// Nesting tokens in the current item, and those that carry over commas.
        ops: usize,
        sticky: usize,
        /// The deepest group closed inside the current item; the deepest finished item.
        child: usize,
        best: usize,
    }
    let mut stack = vec![Group::default()];
    for token in tokens {
        let nested = stack.len() > 1;
        let top = stack.last_mut().expect("the line's group is never popped");
        match token.kind {
            T::Name(_) | T::Int(_) | T::Float(_) | T::Str(_) | T::Bytes(_) | T::FStringMiddle(_) | T::Colon => {}
            T::Newline | T::Indent | T::Dedent => stack = vec![Group::default()],
            T::Comma => {
                top.best = top.best.max(top.ops + top.child);
                top.ops = top.sticky;
                top.child = 0;
            }
            T::LParen | T::LBracket | T::LBrace => {
                top.ops += 1;
                stack.push(Group::default());
            }
            T::RParen | T::RBracket | T::RBrace if nested => {
                let depth = top.best.max(top.ops + top.child) + 3;
                stack.pop();
                let parent = stack.last_mut().expect("popped only above the line's group");
                parent.child = parent.child.max(depth);
            }
            T::Lambda | T::For => {
                top.ops += 1;
                top.sticky += 1;
            }
            _ => top.ops += 1,
        }
        let top = stack.last().expect("the line's group is never popped");
        if top.ops + top.child > MAX_NESTING {
            return Err(Diagnostic::error("expression too deeply nested", token.span)
                .with_label(format!("more than {MAX_NESTING} nested operations reach here"))
                .with_note(format!(
                    "one expression may nest at most {MAX_NESTING} operations deep (CPython stops near there too)"
                ))
                .with_hint("split it into several statements"));
        }
    }
    Ok(())
}

#[derive(Copy, Clone, Debug)]
struct Open {
    ch: u8,
    span: Span,
    /// The `{` of an f-string replacement field.
    field: bool,
}

#[derive(Copy, Clone, Debug)]
struct FString {
    quote: u8,
    triple: bool,
    raw: bool,
    /// The prefix and opening quote(s).
    start: Span,
}

#[derive(Copy, Clone, Debug)]
enum Mode {
    /// Literal text of an f-string.
    FString(FString),
    /// Code inside a replacement field `{...}`.
    Field,
    /// Literal text of a format spec, after the `:` of a replacement field.
    Spec,
}

struct Lexer<'s> {
    src: &'s str,
    pos: usize,
    tokens: Vec<Token>,
    /// Open indentation levels: (columns with tabs to the next multiple of 8, columns with tabs as 1).
    indents: Vec<(usize, usize)>,
    brackets: Vec<Open>,
    modes: Vec<Mode>,
    line_has_tokens: bool,
    at_line_start: bool,
}

impl<'s> Lexer<'s> {
    fn run(&mut self) -> Result<(), Diagnostic> {
        loop {
            match self.modes.last() {
                Some(Mode::FString(_) | Mode::Spec) => self.fstring_text()?,
                _ => {
                    if self.at_line_start && self.brackets.is_empty() {
                        self.indentation()?;
                    }
                    if self.pos >= self.src.len() {
                        break;
                    }
                    self.code()?;
                }
            }
        }
        // Inside an unclosed bracket the logical line never ended; the parser reports the end of input there.
        if self.line_has_tokens && self.brackets.is_empty() {
            self.push(TokenKind::Newline, Span::point(self.src.len()));
            self.line_has_tokens = false;
        }
        while self.indents.len() > 1 {
            self.indents.pop();
            self.push(TokenKind::Dedent, Span::point(self.src.len()));
        }
        Ok(())
    }

    /// Refuses to open one more bracket past [`MAX_BRACKET_DEPTH`].
    fn check_bracket_depth(&self, span: Span) -> Result<(), Diagnostic> {
        if self.brackets.len() < MAX_BRACKET_DEPTH {
            return Ok(());
        }
        Err(Diagnostic::error("too many nested parentheses", span)
            .with_label(format!("bracket {} opened here", self.brackets.len() + 1))
            .with_note(format!("brackets nest at most {MAX_BRACKET_DEPTH} deep (as in CPython)")))
    }

    fn peek(&self) -> Option<char> {
        self.src[self.pos..].chars().next()
    }

    fn peek_byte(&self, ahead: usize) -> Option<u8> {
        self.src.as_bytes().get(self.pos + ahead).copied()
    }

    fn push(&mut self, kind: TokenKind, span: Span) {
        if !matches!(kind, TokenKind::Newline | TokenKind::Indent | TokenKind::Dedent) {
            self.line_has_tokens = true;
        }
        self.tokens.push(Token { kind, span });
    }

    /// At the start of a line outside brackets: skips blank and comment lines, then compares the indentation of
    /// the first line with code against the open levels.
    fn indentation(&mut self) -> Result<(), Diagnostic> {
        loop {
            let line_start = self.pos;
            let (mut col, mut alt) = (0usize, 0usize);
            while let Some(c) = self.peek_byte(0) {
                match c {
                    b' ' => (col, alt) = (col + 1, alt + 1),
                    b'\t' => (col, alt) = ((col / 8 + 1) * 8, alt + 1),
                    b'\x0c' => (col, alt) = (0, 0),
                    _ => break,
                }
                self.pos += 1;
            }
            match self.peek_byte(0) {
                None => return Ok(()),
                Some(b'#') => {
                    self.skip_comment();
                    self.skip_newline();
                    continue;
                }
                Some(b'\n' | b'\r') => {
                    self.skip_newline();
                    continue;
                }
                _ => {}
            }
            self.at_line_start = false;
            let ws = Span::new(line_start, self.pos);
            let inconsistent = || {
                Diagnostic::error("inconsistent use of tabs and spaces in indentation", ws)
                    .with_label("this indentation mixes tabs and spaces differently from the lines around it")
                    .with_hint("indent with spaces only")
            };
            let &(top, top_alt) = self.indents.last().expect("the indent stack always holds level 0");
            if col > top {
                if alt <= top_alt {
                    return Err(inconsistent());
                }
                if self.indents.len() > MAX_INDENT_LEVELS {
                    return Err(Diagnostic::error("too many levels of indentation", ws)
                        .with_label(format!("this line opens block level {}", self.indents.len()))
                        .with_note(format!("blocks nest at most {MAX_INDENT_LEVELS} deep (as in CPython)")));
                }
                self.indents.push((col, alt));
                self.push(TokenKind::Indent, ws);
            } else {
                while col < self.indents.last().expect("level 0 is never popped").0 {
                    self.indents.pop();
                    self.push(TokenKind::Dedent, Span::point(self.pos));
                }
                let &(level, level_alt) = self.indents.last().expect("level 0 is never popped");
                if col != level {
                    let at = Span::new(line_start, self.pos.max(line_start + 1));
                    return Err(Diagnostic::error("unindent does not match any outer indentation level", at)
                        .with_label(
                            "this line is indented less than the block it is in, but more than the block around it",
                        ));
                }
                if alt != level_alt {
                    return Err(inconsistent());
                }
            }
            return Ok(());
        }
    }

    fn skip_comment(&mut self) {
        let rest = &self.src[self.pos..];
        self.pos += rest.find(['\n', '\r']).unwrap_or(rest.len());
    }

    /// Skips one `\n`, `\r\n` or `\r`; returns its span.
    fn skip_newline(&mut self) -> Span {
        let start = self.pos;
        if self.src[self.pos..].starts_with("\r\n") {
            self.pos += 2;
        } else {
            self.pos += 1;
        }
        Span::new(start, self.pos)
    }

    /// Lexes one token of code (or skips whitespace, a comment, a line end or a continuation).
    fn code(&mut self) -> Result<(), Diagnostic> {
        let start = self.pos;
        let c = self.peek().expect("code() is called before the end of input");
        match c {
            ' ' | '\t' | '\x0c' => self.pos += 1,
            '#' => self.skip_comment(),
            '\n' | '\r' => {
                let span = self.skip_newline();
                if self.brackets.is_empty() {
                    if self.line_has_tokens {
                        self.push(TokenKind::Newline, span);
                        self.line_has_tokens = false;
                    }
                    self.at_line_start = true;
                }
            }
            '\\' => {
                self.pos += 1;
                match self.peek() {
                    Some('\n' | '\r') => {
                        self.skip_newline();
                    }
                    None => {
                        return Err(Diagnostic::error(
                            "unexpected end of file after line continuation",
                            Span::new(start, self.pos),
                        ));
                    }
                    Some(_) => {
                        return Err(Diagnostic::error(
                            "unexpected character after line continuation character",
                            Span::new(start, self.pos),
                        )
                        .with_hint("a `\\` outside a string must be the last character on its line"));
                    }
                }
            }
            '0'..='9' => self.number(start)?,
            '.' if self.peek_byte(1).is_some_and(|b| b.is_ascii_digit()) => self.number(start)?,
            '"' | '\'' => self.string(start, "")?,
            c if is_ident_start(c) => {
                let len = self.src[start..].find(|c: char| !is_ident_continue(c)).unwrap_or(self.src.len() - start);
                let word = &self.src[start..start + len];
                self.pos = start + len;
                if matches!(self.peek(), Some('"' | '\'')) && is_string_prefix(word) {
                    return self.string(start, word);
                }
                // Keywords as written (Python's: `ｉｆ` is the name `if`, not the keyword).
                let kind = match TokenKind::keyword(word) {
                    Some(keyword) => keyword,
                    None => TokenKind::Name(literal::identifier(word, start)?),
                };
                self.push(kind, Span::new(start, self.pos));
            }
            _ => self.operator(start, c)?,
        }
        Ok(())
    }

    fn number(&mut self, start: usize) -> Result<(), Diagnostic> {
        let (kind, end) = literal::number(self.src, start)?;
        self.pos = end;
        self.push(kind, Span::new(start, end));
        Ok(())
    }

    fn operator(&mut self, start: usize, c: char) -> Result<(), Diagnostic> {
        use TokenKind::*;
        const OPS: &[(&str, TokenKind)] = &[
            ("**=", DoubleStarEq),
            ("//=", DoubleSlashEq),
            (">>=", RShiftEq),
            ("<<=", LShiftEq),
            ("...", Ellipsis),
            ("**", DoubleStar),
            ("//", DoubleSlash),
            ("<<", LShift),
            (">>", RShift),
            ("<=", Le),
            (">=", Ge),
            ("==", EqEq),
            ("!=", NotEq),
            ("->", Arrow),
            (":=", Walrus),
            ("+=", PlusEq),
            ("-=", MinusEq),
            ("*=", StarEq),
            ("/=", SlashEq),
            ("%=", PercentEq),
            ("@=", AtEq),
            ("&=", AmpEq),
            ("|=", PipeEq),
            ("^=", CaretEq),
            ("+", Plus),
            ("-", Minus),
            ("*", Star),
            ("/", Slash),
            ("%", Percent),
            ("@", At),
            ("&", Amp),
            ("|", Pipe),
            ("^", Caret),
            ("~", Tilde),
            ("<", Lt),
            (">", Gt),
            ("(", LParen),
            (")", RParen),
            ("[", LBracket),
            ("]", RBracket),
            ("{", LBrace),
            ("}", RBrace),
            (",", Comma),
            (":", Colon),
            (";", Semi),
            (".", Dot),
            ("=", Eq),
        ];
        let rest = &self.src[start..];
        let in_field = self.brackets.last().is_some_and(|open| open.field);
        // At the top level of an f-string replacement field, `:` starts the format spec, `!` the conversion
        // and a lone `=` marks a self-documenting field (`f"{x=}"`).
        if in_field {
            if rest.starts_with(':') {
                self.pos += 1;
                self.push(Colon, Span::new(start, self.pos));
                *self.modes.last_mut().expect("a field bracket implies field mode") = Mode::Spec;
                return Ok(());
            }
            if rest.starts_with('!') && !rest.starts_with("!=") {
                self.pos += 1;
                self.push(Bang, Span::new(start, self.pos));
                return Ok(());
            }
        }
        let Some((text, kind)) = OPS.iter().find(|(text, _)| rest.starts_with(text)) else {
            let span = Span::new(start, start + c.len_utf8());
            let diag = Diagnostic::error(format!("invalid character `{}` in source", c.escape_debug()), span);
            return Err(match c {
                '!' => diag.with_hint("use `not` for logical negation"),
                '$' | '?' | '`' => diag.with_label("not part of Python syntax"),
                _ => diag,
            });
        };
        let span = Span::new(start, start + text.len());
        self.pos = span.end;
        match kind {
            LParen | LBracket | LBrace => {
                self.check_bracket_depth(span)?;
                self.brackets.push(Open { ch: text.as_bytes()[0], span, field: false })
            }
            RParen | RBracket | RBrace => {
                let close = text.as_bytes()[0];
                let Some(open) = self.brackets.pop() else {
                    return Err(Diagnostic::error(format!("unmatched `{text}`"), span)
                        .with_label("there is no open bracket to close here"));
                };
                let expected = match open.ch {
                    b'(' => b')',
                    b'[' => b']',
                    _ => b'}',
                };
                if close != expected {
                    return Err(Diagnostic::error(
                        format!("closing `{text}` does not match opening `{}`", open.ch as char),
                        span,
                    )
                    .with_label(format!("expected `{}` here", expected as char))
                    .with_secondary(open.span, format!("`{}` opened here", open.ch as char)));
                }
                if open.field {
                    self.modes.pop();
                }
            }
            Eq if in_field => {
                // The text of a self-documenting field, from after `{` through `=` and the spaces after it.
                let field_start = self.brackets.last().expect("in_field").span.end;
                let ws = self.src[self.pos..].len() - self.src[self.pos..].trim_start_matches([' ', '\t']).len();
                self.pos += ws;
                let text = self.src[field_start..self.pos].to_string();
                self.push(FStringDebug(text), span);
                return Ok(());
            }
            _ => {}
        }
        self.push(kind.clone(), span);
        Ok(())
    }

    /// A string literal (or the start of an f-string) whose prefix `prefix` starts at `start`.
    fn string(&mut self, start: usize, prefix: &str) -> Result<(), Diagnostic> {
        let lower = prefix.to_ascii_lowercase();
        let (raw, bytes, fstring) = (lower.contains('r'), lower.contains('b'), lower.contains('f'));
        let quote = self.peek_byte(0).expect("string() is called at a quote");
        let triple = self.peek_byte(1) == Some(quote) && self.peek_byte(2) == Some(quote);
        self.pos += if triple { 3 } else { 1 };
        if fstring {
            let span = Span::new(start, self.pos);
            self.push(TokenKind::FStringStart, span);
            self.modes.push(Mode::FString(FString { quote, triple, raw, start: span }));
            return Ok(());
        }
        let opening = Span::new(start, self.pos);
        let mut buf = if bytes { Buf::Bytes(Vec::new()) } else { Buf::Text(String::new()) };
        loop {
            let at = self.pos;
            let Some(c) = self.peek() else {
                return Err(unterminated(opening, triple, "string"));
            };
            if c as u32 == quote as u32 && (!triple || self.src[at..].starts_with(triple_quote(quote))) {
                self.pos += if triple { 3 } else { 1 };
                break;
            }
            match c {
                '\n' | '\r' if !triple => return Err(unterminated(opening, triple, "string")),
                '\\' if raw => {
                    // A raw string keeps the backslash and the character after it (which never ends the string).
                    buf.push_char('\\', Span::new(at, at + 1))?;
                    self.pos += 1;
                    if let Some(next) = self.peek() {
                        buf.push_char(next, Span::new(self.pos, self.pos + next.len_utf8()))?;
                        self.pos += next.len_utf8();
                    }
                }
                '\\' => self.pos = literal::escape(self.src, at, &mut buf)?,
                c => {
                    buf.push_char(c, Span::new(at, at + c.len_utf8()))?;
                    self.pos += c.len_utf8();
                }
            }
        }
        let kind = match buf {
            Buf::Text(s) => TokenKind::Str(s),
            Buf::Bytes(b) => TokenKind::Bytes(b),
        };
        self.push(kind, Span::new(start, self.pos));
        Ok(())
    }

    /// The innermost f-string (the one whose literal text or format spec is being lexed).
    fn current_fstring(&self) -> FString {
        self.modes
            .iter()
            .rev()
            .find_map(|m| match m {
                Mode::FString(f) => Some(*f),
                _ => None,
            })
            .expect("f-string text is lexed only inside an f-string")
    }

    /// Literal text of an f-string or format spec, up to a replacement field, the end of the spec or the closing
    /// quote.
    fn fstring_text(&mut self) -> Result<(), Diagnostic> {
        let fs = self.current_fstring();
        let in_spec = matches!(self.modes.last(), Some(Mode::Spec));
        let text_start = self.pos;
        let mut buf = Buf::Text(String::new());
        let flush = |lexer: &mut Self, buf: Buf, end: usize| {
            if !buf.is_empty() {
                let Buf::Text(text) = buf else { unreachable!("f-string text is never bytes") };
                lexer.push(TokenKind::FStringMiddle(text), Span::new(text_start, end));
            }
        };
        loop {
            let at = self.pos;
            let Some(c) = self.peek() else {
                return Err(unterminated(fs.start, fs.triple, "f-string"));
            };
            let closes =
                c as u32 == fs.quote as u32 && (!fs.triple || self.src[at..].starts_with(triple_quote(fs.quote)));
            if closes {
                if in_spec {
                    return Err(Diagnostic::error("f-string: expecting `}`", Span::new(at, at + 1))
                        .with_label("the format spec ends before its replacement field is closed"));
                }
                flush(self, buf, at);
                self.pos += if fs.triple { 3 } else { 1 };
                self.push(TokenKind::FStringEnd, Span::new(at, self.pos));
                self.modes.pop();
                return Ok(());
            }
            match c {
                '\n' | '\r' if !fs.triple => return Err(unterminated(fs.start, fs.triple, "f-string")),
                '{' | '}' if !in_spec && self.peek_byte(1) == Some(c as u8) => {
                    buf.push_str(if c == '{' { "{" } else { "}" });
                    self.pos += 2;
                }
                '{' => {
                    flush(self, buf, at);
                    self.pos += 1;
                    let span = Span::new(at, at + 1);
                    self.push(TokenKind::LBrace, span);
                    self.check_bracket_depth(span)?;
                    self.brackets.push(Open { ch: b'{', span, field: true });
                    self.modes.push(Mode::Field);
                    return Ok(());
                }
                '}' if in_spec => {
                    flush(self, buf, at);
                    self.pos += 1;
                    self.push(TokenKind::RBrace, Span::new(at, at + 1));
                    self.modes.pop();
                    self.brackets.pop();
                    return Ok(());
                }
                '}' => {
                    return Err(Diagnostic::error("f-string: single `}` is not allowed", Span::new(at, at + 1))
                        .with_hint("write `}}` for a literal `}`"));
                }
                '\\' if fs.raw => {
                    // A raw f-string keeps its backslashes; one still protects a quote or a backslash after it.
                    buf.push_str("\\");
                    self.pos += 1;
                    if let Some(next @ ('\\' | '"' | '\'')) = self.peek() {
                        buf.push_str(if next == '\\' {
                            "\\"
                        } else if next == '"' {
                            "\""
                        } else {
                            "'"
                        });
                        self.pos += 1;
                    }
                }
                '\\' => self.pos = literal::escape(self.src, at, &mut buf)?,
                c => {
                    buf.push_char(c, Span::new(at, at + c.len_utf8()))?;
                    self.pos += c.len_utf8();
                }
            }
        }
    }
}

fn triple_quote(quote: u8) -> &'static str {
    if quote == b'"' { "\"\"\"" } else { "'''" }
}

fn is_string_prefix(word: &str) -> bool {
    matches!(word.to_ascii_lowercase().as_str(), "r" | "u" | "b" | "br" | "rb" | "f" | "fr" | "rf")
}

fn unterminated(span: Span, triple: bool, what: &str) -> Diagnostic {
    let kind = if triple { "triple-quoted " } else { "" };
    Diagnostic::error(format!("unterminated {kind}{what} literal"), span)
        .with_label(format!("this {what} is never closed"))
        .with_hint(if triple {
            "close it with the same three quotes it opens with"
        } else {
            "close it with the same quote on the same line, or use triple quotes for a multi-line string"
        })
}
