//! Errors for typical mistakes: one report, at the offending token, saying what was expected in plain words.

use super::common::{dedent, error, error_at};

/// Renders the error for `src` the way the CLI prints it (without colours).
fn rendered(src: &str) -> String {
    error(src).render("kernel.py", src)
}

#[test]
fn unclosed_paren_is_reported_at_the_next_token_and_points_at_the_opener() {
    let src = "x = foo(1, 2\ny = 3\n";
    let (d, at) = error_at(src);
    assert_eq!(d.message, "expected `,` or `)`, found name `y`");
    assert_eq!(at, "y");
    assert_eq!(d.secondary.len(), 1);
    assert_eq!(&src[d.secondary[0].0.range()], "(");
    assert_eq!(d.secondary[0].1, "unclosed `(` opened here");
    assert_eq!(
        rendered(src),
        dedent(
            "
            Error: expected `,` or `)`, found name `y`
               ╭─[ kernel.py:2:1 ]
               │
             2 │ y = 3
               │ ┬  
               │ ╰── expected `,` or `)`
               │
               ├─[ kernel.py:2:1 ]
               │
             1 │ x = foo(1, 2
               │        ┬  
               │        ╰── unclosed `(` opened here
               │ 
               │ Help: close it with `)`
            ───╯
            "
        ) + "\n"
    );
}

#[test]
fn unclosed_bracket_at_end_of_input() {
    let src = "xs = [1, 2,\n";
    let d = error(src);
    assert_eq!(d.message, "expected an expression or `]`, found end of input");
    assert_eq!(&src[d.secondary[0].0.range()], "[");
}

/// Host code may define generators (a `@contextmanager` fixture, say): `yield` and `yield from` parse, in every
/// place Python allows them, and print back (parenthesized) to the same tree. Kernels refuse them when elaborated
/// (`lang/tests/elab_errors.rs`).
#[test]
fn yield_parses_in_host_code() {
    let src = "from contextlib import contextmanager\n\n@contextmanager\ndef cuda_graph():\n    g = setup()\n    \
               try:\n        yield g\n    finally:\n        g.reset()\n\ndef gen(xs):\n    yield\n    x = yield 1, 2\n    \
               y = [(yield from xs) for _ in xs]\n    z = await_(x)\n    return (yield)\n";
    let module = tessel_lang::parse_module(src).unwrap_or_else(|d| panic!("{}", d.render("host.py", src)));
    let dumped = tessel_lang::ast::dump(&module, false);
    assert!(dumped.contains("Yield") && dumped.contains("YieldFrom"), "{dumped}");
    let printed = tessel_lang::ast::unparse(&module);
    assert!(printed.contains("(yield g)") && printed.contains("(yield from xs)"), "{printed}");
    let reparsed = tessel_lang::parse_module(&printed).unwrap();
    assert_eq!(tessel_lang::ast::dump(&reparsed, false), dumped);
}

#[test]
fn async_def_for_and_with_are_rejected_at_async() {
    for src in
        ["async def f():\n    pass\n", "@d\nasync def f(): pass\n", "def f():\n    async with x:\n        pass\n"]
    {
        let (d, at) = error_at(src);
        assert_eq!(d.message, "`async` is not supported in tessel kernels/modules", "for {src:?}");
        assert_eq!(at, "async");
    }
    let (d, at) = error_at("xs = [x async for x in y]\n");
    assert_eq!((d.message.as_str(), at), ("`async` is not supported in tessel kernels/modules", "async"));
}

#[test]
fn await_is_rejected() {
    let (d, at) = error_at("def f():\n    return await g()\n");
    assert_eq!(d.message, "`await` is not supported in tessel kernels/modules");
    assert_eq!(at, "await");
}

#[test]
fn the_earliest_problem_is_reported() {
    let (d, at) = error_at("def f():\n    async with x:\n        pass\n\nx = (\n");
    assert_eq!((d.message.as_str(), at), ("`async` is not supported in tessel kernels/modules", "async"));
}

#[test]
fn unexpected_indent() {
    let src = "x = 1\n    y = 2\n";
    let (d, at) = error_at(src);
    assert_eq!(d.message, "unexpected indent");
    assert_eq!(at, "    ");
}

#[test]
fn unindent_that_matches_no_outer_level() {
    let src = "if x:\n        a = 1\n    b = 2\n";
    let (d, at) = error_at(src);
    assert_eq!(d.message, "unindent does not match any outer indentation level");
    assert_eq!(at, "    ");
}

#[test]
fn missing_indented_block_names_the_statement() {
    let src = "for i in range(3):\nprint(i)\n";
    let (d, at) = error_at(src);
    assert_eq!(d.message, "expected an indented block after `for` on line 1");
    assert_eq!(at, "print");
    assert_eq!(&src[d.secondary[0].0.range()], "for");
}

#[test]
fn inconsistent_tabs_and_spaces() {
    let src = "if x:\n\ty = 1\n        z = 2\n";
    let (d, _) = error_at(src);
    assert_eq!(d.message, "inconsistent use of tabs and spaces in indentation");
    assert_eq!(d.span.start, src.find("        z").unwrap());
}

#[test]
fn stray_tokens() {
    let (d, at) = error_at("x = 1 2\n");
    assert_eq!((d.message.as_str(), at), ("expected end of line, found number", "2"));
    let (d, at) = error_at("x = 1 )\n");
    assert_eq!((d.message.as_str(), at), ("unmatched `)`", ")"));
    let (d, at) = error_at("f(a b)\n");
    assert_eq!((d.message.as_str(), at), ("expected `,` or `)`, found name `b`", "b"));
    let (d, at) = error_at("x = (1, 2]\n");
    assert_eq!((d.message.as_str(), at), ("closing `]` does not match opening `(`", "]"));
    let (d, at) = error_at("for x y in z:\n    pass\n");
    assert_eq!((d.message.as_str(), at), ("expected `,` or `in`, found name `y`", "y"));
}

#[test]
fn missing_expression() {
    let (d, _) = error_at("x = \n");
    assert_eq!(d.message, "expected an expression, found end of line");
    let (d, at) = error_at("y = 1 + * 2\n");
    assert_eq!((d.message.as_str(), at), ("expected an expression, found `*`", "*"));
}

#[test]
fn assignment_in_a_condition_suggests_comparison() {
    let (d, at) = error_at("if x = 1:\n    pass\n");
    assert_eq!((d.message.as_str(), at), ("expected `:`, found `=`", "="));
    assert_eq!(d.hint.as_deref(), Some("to compare, use `==`; to assign inside an expression, use `:=`"));
}

#[test]
fn keyword_used_as_a_name() {
    let (d, at) = error_at("def class(): pass\n");
    assert_eq!((d.message.as_str(), at), ("expected a name, found keyword `class`", "class"));
    assert_eq!(d.hint.as_deref(), Some("`class` is a keyword and cannot be used as a name"));
}

#[test]
fn python2_print_statement() {
    let (d, at) = error_at("print 'hello'\n");
    assert_eq!(at, "'hello'");
    assert_eq!(d.hint.as_deref(), Some("`print` is a function: write `print(...)`"));
}

#[test]
fn invalid_assignment_targets() {
    let (d, at) = error_at("f() = 3\n");
    assert_eq!((d.message.as_str(), at), ("cannot assign to a function call", "f()"));
    let (d, at) = error_at("x + 1 += 2\n");
    assert_eq!((d.message.as_str(), at), ("An expression cannot be augmented-assigned", "x + 1"));
    let (d, at) = error_at("a, b: int = 1, 2\n");
    assert_eq!((d.message.as_str(), at), ("only a single target (not a tuple or list) can be annotated", "a, b"));
    let (d, at) = error_at("for f() in x: pass\n");
    assert_eq!((d.message.as_str(), at), ("cannot assign to a function call", "f()"));
    let (d, at) = error_at("del f()\n");
    assert_eq!((d.message.as_str(), at), ("cannot delete a function call", "f()"));
    let (d, at) = error_at("*a, *b = c\n");
    assert_eq!((d.message.as_str(), at), ("multiple starred expressions in assignment", "*b"));
    let (d, at) = error_at("[x for 1 in y]\n");
    assert_eq!((d.message.as_str(), at), ("cannot assign to a literal", "1"));
}

#[test]
fn parameter_order_errors() {
    let (d, at) = error_at("def f(x=1, y): pass\n");
    assert_eq!((d.message.as_str(), at), ("parameter without a default follows parameter with a default", "y"));
    let (d, at) = error_at("def f(*, **k): pass\n");
    assert_eq!((d.message.as_str(), at), ("named parameters must follow bare `*`", "*"));
    let (d, at) = error_at("def f(a, a): pass\n");
    assert_eq!((d.message.as_str(), at), ("duplicate parameter `a`", "a"));
    let (d, at) = error_at("def f(**k, a): pass\n");
    assert_eq!((d.message.as_str(), at), ("parameters cannot follow `**k`", "a"));
    let (d, at) = error_at("def f(*a, /): pass\n");
    assert_eq!((d.message.as_str(), at), ("`/` must come before `*`", "/"));
}

#[test]
fn argument_order_errors() {
    let (d, at) = error_at("f(a=1, b)\n");
    assert_eq!((d.message.as_str(), at), ("positional argument follows keyword argument", "b"));
    let (d, at) = error_at("f(x for x in y, 1)\n");
    assert_eq!((d.message.as_str(), at), ("generator expression must be parenthesized", "x for x in y"));
    let (d, at) = error_at("f(a=1, a=2)\n");
    assert_eq!((d.message.as_str(), at), ("keyword argument repeated: `a`", "a"));
}

#[test]
fn try_without_handlers() {
    let (d, at) = error_at("try:\n    pass\nx = 1\n");
    assert_eq!((d.message.as_str(), at), ("expected `except` or `finally`, found name `x`", "x"));
    let (d, _) = error_at("try:\n    pass\nexcept:\n    pass\nexcept E:\n    pass\n");
    assert_eq!(d.message, "a bare `except:` must be last");
}

#[test]
fn lexical_errors() {
    let (d, at) = error_at("s = 'abc\n");
    assert_eq!((d.message.as_str(), at), ("unterminated string literal", "'"));
    let (d, at) = error_at("s = \"\"\"abc\n");
    assert_eq!((d.message.as_str(), at), ("unterminated triple-quoted string literal", "\"\"\""));
    let (d, at) = error_at("z = 1j\n");
    assert_eq!((d.message.as_str(), at), ("imaginary literals are not supported", "1j"));
    let (d, at) = error_at("x = 0777\n");
    assert_eq!((d.message.as_str(), at), ("leading zeros in decimal integer literals are not permitted", "0777"));
    let (d, at) = error_at("x = 1__0\n");
    assert_eq!((d.message.as_str(), at), ("invalid decimal literal", "1__0"));
    let (d, at) = error_at("x = 0b102\n");
    assert_eq!((d.message.as_str(), at), ("invalid binary literal", "0b102"));
    let (d, at) = error_at("x = $y\n");
    assert_eq!((d.message.as_str(), at), ("invalid character `$` in source", "$"));
    let (d, at) = error_at("x = 1 \\ 2\n");
    assert_eq!((d.message.as_str(), at), ("unexpected character after line continuation character", "\\"));
    let (d, at) = error_at("s = '\\x4'\n");
    assert_eq!((d.message.as_str(), at), ("truncated `\\x` escape", "\\x4'"));
    let (d, at) = error_at("b = b'é'\n");
    assert_eq!((d.message.as_str(), at), ("bytes can only contain ASCII literal characters", "é"));
    let (d, _) = error_at("x = 'a' b'b'\n");
    assert_eq!(d.message, "cannot mix bytes and nonbytes literals");
}

#[test]
fn fstring_errors() {
    let (d, at) = error_at("s = f'{x!z}'\n");
    assert_eq!((d.message.as_str(), at), ("f-string: invalid conversion character `z`", "z"));
    let (d, at) = error_at("s = f'a}b'\n");
    assert_eq!((d.message.as_str(), at), ("f-string: single `}` is not allowed", "}"));
    let (d, at) = error_at("s = f'{x'\n");
    assert_eq!(d.message, "unterminated string literal");
    assert_eq!(at, "'");
    let (d, at) = error_at("s = f'{x:abc'\n");
    assert_eq!((d.message.as_str(), at), ("f-string: expecting `}`", "'"));
    let (d, at) = error_at("s = f'{}'\n");
    assert_eq!((d.message.as_str(), at), ("expected an expression, found `}`", "}"));
}

#[test]
fn dangling_else_says_what_it_must_line_up_with() {
    let (d, at) = error_at("x = 1\nelse:\n    pass\n");
    assert_eq!((d.message.as_str(), at), ("expected a statement or end of input, found keyword `else`", "else"));
    assert_eq!(
        d.hint.as_deref(),
        Some("`else` must line up with the statement it continues (`if`, `for`, `while` or `try`)")
    );
}

#[test]
fn missing_colons() {
    let (d, at) = error_at("def f(x)\n    return x\n");
    assert_eq!((d.message.as_str(), at), ("expected `->` or `:`, found end of line", "\n"));
    let (d, at) = error_at("d = {'a': 1, 'b' 2}\n");
    assert_eq!((d.message.as_str(), at), ("expected `:`, found number", "2"));
    let (d, at) = error_at("if x > 0:\n    y = 1\nelse\n    y = 2\n");
    assert_eq!((d.message.as_str(), at), ("expected `:`, found end of line", "\n"));
}
