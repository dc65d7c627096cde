//! The lexer: layout tokens, spans, literals and f-string tokens.

use tessel_lang::{Span, TokenKind as T, lex};

fn kinds(src: &str) -> Vec<T> {
    lex(src).unwrap_or_else(|d| panic!("{}", d.render("t.py", src))).into_iter().map(|t| t.kind).collect()
}

fn name(s: &str) -> T {
    T::Name(s.into())
}

#[test]
fn indentation_produces_indent_dedent_and_newlines() {
    let src = "if a:\n    b\n    if c:\n        d\ne\n";
    assert_eq!(
        kinds(src),
        vec![
            T::If,
            name("a"),
            T::Colon,
            T::Newline,
            T::Indent,
            name("b"),
            T::Newline,
            T::If,
            name("c"),
            T::Colon,
            T::Newline,
            T::Indent,
            name("d"),
            T::Newline,
            T::Dedent,
            T::Dedent,
            name("e"),
            T::Newline,
        ]
    );
}

#[test]
fn end_of_input_closes_the_line_and_all_blocks() {
    assert_eq!(
        kinds("def f():\n  if x:\n    y"),
        vec![
            T::Def,
            name("f"),
            T::LParen,
            T::RParen,
            T::Colon,
            T::Newline,
            T::Indent,
            T::If,
            name("x"),
            T::Colon,
            T::Newline,
            T::Indent,
            name("y"),
            T::Newline,
            T::Dedent,
            T::Dedent,
        ]
    );
}

#[test]
fn blank_and_comment_lines_produce_nothing() {
    assert_eq!(kinds("\n\n# c\n   \n  # indented comment\nx  # trailing\n\n"), vec![name("x"), T::Newline]);
    assert_eq!(kinds(""), vec![]);
    assert_eq!(kinds("# only a comment"), vec![]);
}

#[test]
fn brackets_join_lines_implicitly_and_backslash_explicitly() {
    assert_eq!(
        kinds("f(a,\n      b)\nx = 1 + \\\n  2\n"),
        vec![
            name("f"),
            T::LParen,
            name("a"),
            T::Comma,
            name("b"),
            T::RParen,
            T::Newline,
            name("x"),
            T::Eq,
            T::Int(1),
            T::Plus,
            T::Int(2),
            T::Newline,
        ]
    );
}

#[test]
fn crlf_line_endings() {
    assert_eq!(
        kinds("if a:\r\n    b\r\n"),
        vec![T::If, name("a"), T::Colon, T::Newline, T::Indent, name("b"), T::Newline, T::Dedent]
    );
}

#[test]
fn tabs_advance_to_the_next_multiple_of_eight() {
    // A tab-indented block and a tab-indented nested block.
    assert_eq!(
        kinds("if a:\n\tif b:\n\t\tc\n\td\n"),
        vec![
            T::If,
            name("a"),
            T::Colon,
            T::Newline,
            T::Indent,
            T::If,
            name("b"),
            T::Colon,
            T::Newline,
            T::Indent,
            name("c"),
            T::Newline,
            T::Dedent,
            name("d"),
            T::Newline,
            T::Dedent,
        ]
    );
    // Four spaces then a tab reach column 8, as does one tab; CPython rejects the mix, and so do we.
    let err = lex("if a:\n\tb\n    \tc\n").unwrap_err();
    assert_eq!(err.message, "inconsistent use of tabs and spaces in indentation");
}

#[test]
fn token_spans_are_byte_ranges() {
    let src = "é = 'ü'  # c\nx.y\n";
    let tokens = lex(src).unwrap();
    let texts: Vec<&str> = tokens.iter().map(|t| &src[t.span.range()]).collect();
    assert_eq!(texts, vec!["é", "=", "'ü'", "\n", "x", ".", "y", "\n"]);
    assert_eq!(tokens[2].span, Span::new(5, 9));
}

#[test]
fn indent_and_dedent_spans() {
    let src = "if a:\n    b\nc\n";
    let tokens = lex(src).unwrap();
    let indent = tokens.iter().find(|t| t.kind == T::Indent).unwrap();
    assert_eq!(&src[indent.span.range()], "    ");
    let dedent = tokens.iter().find(|t| t.kind == T::Dedent).unwrap();
    assert_eq!(dedent.span, Span::point(src.find('c').unwrap()));
}

#[test]
fn keywords_soft_keywords_and_names() {
    assert_eq!(
        kinds("lambda match type _ case None nonlocal"),
        vec![T::Lambda, name("match"), name("type"), name("_"), name("case"), T::None, T::Nonlocal, T::Newline]
    );
}

#[test]
fn operators_take_the_longest_match() {
    assert_eq!(
        kinds("a **= b // c >>= d -> e := f != g ... h <<= i @= j"),
        vec![
            name("a"),
            T::DoubleStarEq,
            name("b"),
            T::DoubleSlash,
            name("c"),
            T::RShiftEq,
            name("d"),
            T::Arrow,
            name("e"),
            T::Walrus,
            name("f"),
            T::NotEq,
            name("g"),
            T::Ellipsis,
            name("h"),
            T::LShiftEq,
            name("i"),
            T::AtEq,
            name("j"),
            T::Newline,
        ]
    );
}

#[test]
fn numeric_literals() {
    assert_eq!(
        kinds("0 7 1_000 0x_Ff 0O17 0B11 1. .5 1e-3 2E+2 3.25 340282366920938463463374607431768211455"),
        vec![
            T::Int(0),
            T::Int(7),
            T::Int(1000),
            T::Int(255),
            T::Int(15),
            T::Int(3),
            T::Float(1.0),
            T::Float(0.5),
            T::Float(0.001),
            T::Float(200.0),
            T::Float(3.25),
            T::Int(u128::MAX),
            T::Newline,
        ]
    );
    assert_eq!(lex("340282366920938463463374607431768211456").unwrap_err().message, "integer literal is too large");
    // With a space, `1 .real` is an attribute of an int; without one, `1.real` is a malformed number, as in Python.
    assert_eq!(kinds("1 .real"), vec![T::Int(1), T::Dot, name("real"), T::Newline]);
    assert_eq!(lex("1.real").unwrap_err().message, "invalid decimal literal");
}

#[test]
fn string_prefixes_are_case_insensitive() {
    assert_eq!(
        kinds(r#"r'\n' R"\n" b'a' B"a" rb'\x' Rb'\x' bR'\x' BR'\x' u'x' U"x""#),
        vec![
            T::Str("\\n".into()),
            T::Str("\\n".into()),
            T::Bytes(b"a".to_vec()),
            T::Bytes(b"a".to_vec()),
            T::Bytes(b"\\x".to_vec()),
            T::Bytes(b"\\x".to_vec()),
            T::Bytes(b"\\x".to_vec()),
            T::Bytes(b"\\x".to_vec()),
            T::Str("x".into()),
            T::Str("x".into()),
            T::Newline,
        ]
    );
    // A prefix-like name not followed by a quote is a name.
    assert_eq!(kinds("rb"), vec![name("rb"), T::Newline]);
}

#[test]
fn escapes_are_decoded_in_plain_strings() {
    assert_eq!(
        kinds(r#"'\a\b\f\n\r\t\v\0\12\x41\u00e9\U0001f600\\\'\"\q'"#),
        vec![T::Str("\x07\x08\x0c\n\r\t\x0b\0\nAé😀\\'\"\\q".into()), T::Newline]
    );
    assert_eq!(kinds(r"b'\xff\377\u'"), vec![T::Bytes(vec![0xff, 0xff, b'\\', b'u']), T::Newline]);
    assert_eq!(lex(r"b'\400'").unwrap_err().message, "octal escape out of range for bytes");
    // A raw string keeps a backslash before its quote, and the quote does not end it.
    assert_eq!(kinds(r#"r'\''"#), vec![T::Str("\\'".into()), T::Newline]);
}

#[test]
fn triple_quoted_strings_span_lines_without_newline_tokens() {
    assert_eq!(kinds("x = '''a\n  b'''\n"), vec![name("x"), T::Eq, T::Str("a\n  b".into()), T::Newline]);
}

#[test]
fn fstrings_are_lexed_into_parts_and_field_tokens() {
    assert_eq!(
        kinds(r#"f"a{b!r:>{w}}{{c}}{d=}""#),
        vec![
            T::FStringStart,
            T::FStringMiddle("a".into()),
            T::LBrace,
            name("b"),
            T::Bang,
            name("r"),
            T::Colon,
            T::FStringMiddle(">".into()),
            T::LBrace,
            name("w"),
            T::RBrace,
            T::RBrace,
            T::FStringMiddle("{c}".into()),
            T::LBrace,
            name("d"),
            T::FStringDebug("d=".into()),
            T::RBrace,
            T::FStringEnd,
            T::Newline,
        ]
    );
}

#[test]
fn fstring_fields_allow_nested_strings_brackets_and_comparisons() {
    assert_eq!(
        kinds(r#"f'{x["k"]!s}{a[1:2]}{y != z}'"#),
        vec![
            T::FStringStart,
            T::LBrace,
            name("x"),
            T::LBracket,
            T::Str("k".into()),
            T::RBracket,
            T::Bang,
            name("s"),
            T::RBrace,
            T::LBrace,
            name("a"),
            T::LBracket,
            T::Int(1),
            T::Colon,
            T::Int(2),
            T::RBracket,
            T::RBrace,
            T::LBrace,
            name("y"),
            T::NotEq,
            name("z"),
            T::RBrace,
            T::FStringEnd,
            T::Newline,
        ]
    );
}

#[test]
fn lex_rejects_an_unclosed_bracket() {
    let err = lex("f(a,\n").unwrap_err();
    assert_eq!(err.message, "`(` was never closed");
    assert_eq!(err.span, Span::new(1, 2));
}

/// Names are read in their NFKC form, as Python reads identifiers (PEP 3131); keywords only as written.
#[test]
fn identifiers_are_normalized_as_python_does() {
    let src = "ﬁ = ｘ.ﬁeld + 𝐱² + é\nｉｆ\n";
    assert_eq!(
        kinds(src),
        vec![
            name("fi"),
            T::Eq,
            name("x"),
            T::Dot,
            name("field"),
            T::Plus,
            name("x2"),
            T::Plus,
            name("é"),
            T::Newline,
            name("if"),
            T::Newline
        ]
    );
    // The spans stay those of the text as written.
    let tokens = lex(src).unwrap();
    assert_eq!(&src[tokens[0].span.range()], "ﬁ");
    // `é` written as `e` and a combining accent is the same name.
    assert_eq!(kinds("e\u{301}\n")[0], name("é"));
    // A character whose normal form cannot be in a name is an error at that character, as in Python.
    let src = "x⑴ = 1\n";
    let err = lex(src).unwrap_err();
    assert_eq!(err.message, "invalid character `⑴` (U+2474) in identifier");
    assert_eq!(&src[err.span.range()], "⑴");
    assert!(err.label.contains("`x(1)`"), "{}", err.label);
}
