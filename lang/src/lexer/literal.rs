//! Identifiers (their characters and their NFKC form), numeric literals and string escapes.

use unicode_ident::{is_xid_continue, is_xid_start};
use unicode_normalization::UnicodeNormalization;

use crate::diag::Diagnostic;
use crate::span::Span;
use crate::token::TokenKind;

/// Whether `c` may start an identifier as written: what Python's identifiers start with (`_`, XID_Start), and
/// other letters, whose normal form [`identifier`] then checks.
pub(super) fn is_ident_start(c: char) -> bool {
    c == '_' || c.is_ascii_alphabetic() || (!c.is_ascii() && (is_xid_start(c) || c.is_alphabetic()))
}

/// Whether `c` may continue an identifier as written (XID_Continue, which holds combining marks, or another
/// letter or digit such as `²`, whose normal form [`identifier`] then checks).
pub(super) fn is_ident_continue(c: char) -> bool {
    c == '_' || c.is_ascii_alphanumeric() || (!c.is_ascii() && (is_xid_continue(c) || c.is_alphanumeric()))
}

/// The name an identifier spelled `word` (at byte `start`) stands for: its NFKC normal form, as Python
/// normalizes identifiers when it parses them (PEP 3131), so `ﬁ` is `fi` and `ｘ` is `x`. A non-ASCII character
/// whose normal form cannot stand in an identifier is an error at that character, as in Python.
pub(super) fn identifier(word: &str, start: usize) -> Result<String, Diagnostic> {
    if word.is_ascii() {
        return Ok(word.to_string());
    }
    // Python's rule, on the normal form: `_` or XID_Start, then XID_Continue.
    let starts = |c: char| c == '_' || is_xid_start(c);
    let name: String = word.nfkc().collect();
    let mut chars = name.chars();
    if chars.next().is_some_and(starts) && chars.all(is_xid_continue) {
        return Ok(name);
    }
    // The first character whose own normal form breaks the identifier (normalizing a character alone is not
    // normalizing it in context, but it finds the culprit); the whole word when none does alone.
    let mut first = true;
    let culprit = word.char_indices().find(|&(_, c)| {
        c.to_string().nfkc().any(|n| {
            let ok = if first { starts(n) } else { is_xid_continue(n) };
            first = false;
            !ok
        })
    });
    let (span, what) = match culprit {
        Some((i, c)) => (Span::new(start + i, start + i + c.len_utf8()), format!("`{c}` (U+{:04X})", c as u32)),
        None => (Span::new(start, start + word.len()), format!("`{word}`")),
    };
    Err(Diagnostic::error(format!("invalid character {what} in identifier"), span)
        .with_label(format!("normalized (NFKC), the identifier is `{name}`, which is not a valid name"))
        .with_hint("Python reads identifiers in their NFKC form (PEP 3131): it must start with a letter or `_`"))
}

/// Lexes the number starting at `start` (a digit, or a `.` followed by a digit). Returns the token and its end.
pub(super) fn number(src: &str, start: usize) -> Result<(TokenKind, usize), Diagnostic> {
    let b = src.as_bytes();
    let mut i = start;
    if b[i] == b'0' && i + 1 < b.len() && matches!(b[i + 1], b'x' | b'X' | b'o' | b'O' | b'b' | b'B') {
        let (radix, what) = match b[i + 1].to_ascii_lowercase() {
            b'x' => (16, "hexadecimal"),
            b'o' => (8, "octal"),
            _ => (2, "binary"),
        };
        i += 2;
        // `0x_ff` is allowed: an underscore may follow the prefix.
        let digits_start = if b.get(i) == Some(&b'_') { i + 1 } else { i };
        let (digits, end) = digits(src, digits_start, radix);
        let invalid = || Diagnostic::error(format!("invalid {what} literal"), Span::new(start, follow_end(src, end)));
        let digits = digits.ok_or_else(invalid)?;
        if followed_by_name_or_digit(src, end) {
            return Err(invalid());
        }
        let value = u128::from_str_radix(&digits, radix).map_err(|_| too_large(start, end))?;
        return Ok((TokenKind::Int(value), end));
    }

    let invalid = |end: usize| Diagnostic::error("invalid decimal literal", Span::new(start, follow_end(src, end)));
    let (int_part, mut end) = if b[i] == b'.' { (Some(String::new()), i) } else { digits(src, i, 10) };
    let int_part = int_part.ok_or_else(|| invalid(end))?;
    i = end;
    let mut is_float = false;
    let mut text = int_part.clone();
    if b.get(i) == Some(&b'.') {
        is_float = true;
        text.push('.');
        i += 1;
        end = i;
        if b.get(i).is_some_and(u8::is_ascii_digit) {
            let (frac, e) = digits(src, i, 10);
            text.push_str(&frac.ok_or_else(|| invalid(e))?);
            end = e;
        }
    }
    if matches!(b.get(end), Some(b'e' | b'E')) {
        let mut j = end + 1;
        let mut exp = String::from("e");
        if let Some(&sign @ (b'+' | b'-')) = b.get(j) {
            exp.push(sign as char);
            j += 1;
        }
        if b.get(j).is_some_and(u8::is_ascii_digit) {
            let (digits, e) = digits(src, j, 10);
            exp.push_str(&digits.ok_or_else(|| invalid(e))?);
            text.push_str(&exp);
            is_float = true;
            end = e;
        } else {
            return Err(invalid(j));
        }
    }
    if matches!(b.get(end), Some(b'j' | b'J')) {
        return Err(Diagnostic::error("imaginary literals are not supported", Span::new(start, end + 1))
            .with_label("complex number literal"));
    }
    if followed_by_name_or_digit(src, end) {
        return Err(invalid(end));
    }
    if is_float {
        let value: f64 = text.parse().map_err(|_| invalid(end))?;
        return Ok((TokenKind::Float(value), end));
    }
    if int_part.len() > 1 && int_part.starts_with('0') && int_part.bytes().any(|d| d != b'0') {
        return Err(Diagnostic::error(
            "leading zeros in decimal integer literals are not permitted",
            Span::new(start, end),
        )
        .with_hint("use an `0o` prefix for octal integers"));
    }
    let value = int_part.parse::<u128>().map_err(|_| too_large(start, end))?;
    Ok((TokenKind::Int(value), end))
}

fn too_large(start: usize, end: usize) -> Diagnostic {
    Diagnostic::error("integer literal is too large", Span::new(start, end))
        .with_note("integer literals up to 2**128 - 1 are supported")
}

/// Digits of `radix` starting at `i`, with single underscores between digits. Returns the digits without
/// underscores (`None` if there are none or an underscore is misplaced) and where the run ends.
fn digits(src: &str, mut i: usize, radix: u32) -> (Option<String>, usize) {
    let b = src.as_bytes();
    let mut out = String::new();
    let mut ok = true;
    while i < b.len() {
        let c = b[i] as char;
        if c.is_digit(radix) {
            out.push(c);
        } else if c == '_' && b.get(i + 1).is_some_and(|d| (*d as char).is_digit(radix)) && !out.is_empty() {
            // An underscore between two digits.
        } else if c == '_' || (radix < 10 && c.is_ascii_digit()) {
            // A misplaced underscore, or a decimal digit in an octal/binary literal.
            ok = false;
        } else {
            break;
        }
        i += 1;
    }
    ((ok && !out.is_empty()).then_some(out), i)
}

fn followed_by_name_or_digit(src: &str, end: usize) -> bool {
    src[end..].chars().next().is_some_and(is_ident_continue)
}

/// The end of the name-like junk glued to a malformed number, so the error covers all of it.
fn follow_end(src: &str, end: usize) -> usize {
    end + src[end..].find(|c: char| !is_ident_continue(c) && c != '.').unwrap_or(src.len() - end)
}

/// The decoded text of a string or bytes literal.
pub(super) enum Buf {
    Text(String),
    Bytes(Vec<u8>),
}

impl Buf {
    pub(super) fn push_char(&mut self, c: char, at: Span) -> Result<(), Diagnostic> {
        match self {
            Buf::Text(s) => s.push(c),
            Buf::Bytes(v) => {
                if !c.is_ascii() {
                    return Err(Diagnostic::error("bytes can only contain ASCII literal characters", at)
                        .with_hint("use an escape such as `\\xff`"));
                }
                v.push(c as u8);
            }
        }
        Ok(())
    }

    pub(super) fn push_str(&mut self, s: &str) {
        match self {
            Buf::Text(t) => t.push_str(s),
            Buf::Bytes(v) => v.extend_from_slice(s.as_bytes()),
        }
    }

    pub(super) fn is_empty(&self) -> bool {
        match self {
            Buf::Text(s) => s.is_empty(),
            Buf::Bytes(v) => v.is_empty(),
        }
    }
}

/// Decodes the escape whose backslash is at `at` into `buf`; returns the offset after the escape.
///
/// Unknown escapes keep their backslash, as Python does. `\N{...}` (named characters) is rejected.
pub(super) fn escape(src: &str, at: usize, buf: &mut Buf) -> Result<usize, Diagnostic> {
    let rest = &src[at + 1..];
    let Some(c) = rest.chars().next() else {
        return Err(Diagnostic::error("unterminated string literal", Span::new(at, at + 1)));
    };
    let after = at + 1 + c.len_utf8();
    let simple = match c {
        '\n' => Some(None),
        '\r' => {
            let end = if rest[1..].starts_with('\n') { after + 1 } else { after };
            return Ok(end);
        }
        '\\' => Some(Some('\\')),
        '\'' => Some(Some('\'')),
        '"' => Some(Some('"')),
        'a' => Some(Some('\x07')),
        'b' => Some(Some('\x08')),
        'f' => Some(Some('\x0c')),
        'n' => Some(Some('\n')),
        'r' => Some(Some('\r')),
        't' => Some(Some('\t')),
        'v' => Some(Some('\x0b')),
        _ => None,
    };
    if let Some(ch) = simple {
        if let Some(ch) = ch {
            buf.push_char(ch, Span::new(at, after))?;
        }
        return Ok(after);
    }
    let is_bytes = matches!(buf, Buf::Bytes(_));
    // `\x`, `\u`, `\U`: exactly `len` hex digits after the letter.
    let hex = |len: usize, what: &str| -> Result<(u32, usize), Diagnostic> {
        let digits = &rest[1..];
        let found = digits.bytes().take(len).take_while(u8::is_ascii_hexdigit).count();
        if found < len {
            // Cover the digits that are there and the character that stopped them.
            let stop = digits[found..].chars().next().map_or(0, char::len_utf8);
            return Err(Diagnostic::error(
                format!("truncated `\\{what}` escape"),
                Span::new(at, at + 2 + found + stop),
            )
            .with_hint(format!("`\\{what}` takes exactly {len} hexadecimal digits")));
        }
        Ok((u32::from_str_radix(&digits[..len], 16).expect("checked hex digits"), at + 2 + len))
    };
    let (code, end) = match c {
        '0'..='7' => {
            let len = rest.bytes().take(3).take_while(|d| (b'0'..=b'7').contains(d)).count();
            let code = u32::from_str_radix(&rest[..len], 8).expect("checked octal digits");
            if is_bytes && code > 0xff {
                return Err(Diagnostic::error("octal escape out of range for bytes", Span::new(at, at + 1 + len)));
            }
            (code, at + 1 + len)
        }
        'x' => hex(2, "x")?,
        'u' if !is_bytes => hex(4, "u")?,
        'U' if !is_bytes => hex(8, "U")?,
        'N' if !is_bytes => {
            let end = rest.find('}').map_or(after, |i| at + 2 + i);
            return Err(Diagnostic::error("named unicode escapes (`\\N{...}`) are not supported", Span::new(at, end))
                .with_hint("write the character itself or use `\\u`/`\\U` with its code point"));
        }
        _ => {
            // Not an escape: Python keeps the backslash.
            buf.push_char('\\', Span::new(at, at + 1))?;
            buf.push_char(c, Span::new(at + 1, after))?;
            return Ok(after);
        }
    };
    match buf {
        Buf::Bytes(v) => v.push(code as u8),
        Buf::Text(s) => match char::from_u32(code) {
            Some(ch) => s.push(ch),
            None => {
                return Err(Diagnostic::error(
                    format!("escape `{}` is not a valid character", &src[at..end]),
                    Span::new(at, end),
                ));
            }
        },
    }
    Ok(end)
}
