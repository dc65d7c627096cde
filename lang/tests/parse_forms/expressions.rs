//! Expressions: atoms, literals, trailers, operators and their precedence, displays and comprehensions.

use super::{assert_expr, assert_tree};

// ---------------------------------------------------------------- atoms and literals

#[test]
fn names_and_keyword_constants() {
    assert_expr("x_1", "Name x_1");
    assert_expr("True", "Constant True");
    assert_expr("False", "Constant False");
    assert_expr("None", "Constant None");
    assert_expr("...", "Constant ...");
}

#[test]
fn integer_literals() {
    assert_expr("1_000_000", "Constant 1000000");
    assert_expr("0xFF_ff", "Constant 65535");
    assert_expr("0o17", "Constant 15");
    assert_expr("0b1010", "Constant 10");
    assert_expr("0", "Constant 0");
    assert_expr("00", "Constant 0");
    assert_expr("0x_1", "Constant 1");
}

#[test]
fn float_literals() {
    assert_expr("1.", "Constant 1.0");
    assert_expr(".5", "Constant 0.5");
    assert_expr("1e3", "Constant 1000.0");
    assert_expr("1.5E-3", "Constant 0.0015");
    assert_expr("1_0.2_5e+1_0", "Constant 102500000000.0");
    assert_expr("0e0", "Constant 0.0");
}

#[test]
fn string_literals_with_every_prefix_and_quoting() {
    assert_expr(r#"'a\tb'"#, r#"Constant "a\tb""#);
    assert_expr(r#""it's""#, r#"Constant "it's""#);
    assert_expr(r#"r'\n\''"#, r#"Constant "\\n\\'""#);
    assert_expr(r#"R"\d""#, r#"Constant "\\d""#);
    assert_expr(r#"u'\u00e9\x41\101\q\U0001F600'"#, r#"Constant "éAA\\q😀""#);
    assert_expr("'''multi\nline'''", r#"Constant "multi\nline""#);
    assert_expr(r#""""say "hi" """"#, r#"Constant "say \"hi\" ""#);
    assert_expr("'a\\\nb'", r#"Constant "ab""#);
}

#[test]
fn bytes_literals() {
    assert_expr(r#"b'\x00\xff'"#, r#"Constant b"\x00\xff""#);
    assert_expr(r#"Rb'\x00'"#, r#"Constant b"\\x00""#);
    assert_expr(r#"bR"a""#, r#"Constant b"a""#);
    assert_expr(r#"b'a' b"b""#, r#"Constant b"ab""#);
}

#[test]
fn implicit_string_concatenation() {
    assert_expr(r#""a" 'b' """c""""#, r#"Constant "abc""#);
    let src = "x = ('first '\n     'second')";
    assert_tree(
        src,
        r#"
        Assign
          targets:
            Name x
          value: Constant "first second"
        "#,
    );
}

#[test]
fn fstring_fields_conversions_and_specs() {
    assert_expr(
        r#"f"a{x!r:>{width}.3}b{{c}}""#,
        r#"
        JoinedStr
          Literal "a"
          FormattedValue !r
            value: Name x
            format_spec:
              Literal ">"
              FormattedValue
                value: Name width
              Literal ".3"
          Literal "b{c}"
        "#,
    );
}

#[test]
fn fstring_self_documenting_field_and_nested_quotes() {
    assert_expr(
        r#"f"{x + 1 = }{d["k"]}""#,
        r#"
        JoinedStr
          FormattedValue debug="x + 1 = "
            value: BinOp +
              Name x
              Constant 1
          FormattedValue
            value: Subscript
              value: Name d
              index: Constant "k"
        "#,
    );
}

#[test]
fn fstring_concatenated_with_plain_strings() {
    assert_expr(
        r#"'a' f'{b}' rf'\{c}' "d""#,
        r#"
        JoinedStr
          Literal "a"
          FormattedValue
            value: Name b
          Literal "\\"
          FormattedValue
            value: Name c
          Literal "d"
        "#,
    );
}

#[test]
fn fstring_with_a_multiline_field() {
    let src = "f'''{\n    ', '.join(xs)\n} done'''";
    assert_expr(
        src,
        r#"
        JoinedStr
          FormattedValue
            value: Call
              func: Attribute .join
                Constant ", "
              args:
                Name xs
          Literal " done"
        "#,
    );
}

// ---------------------------------------------------------------- trailers

#[test]
fn attribute_chains() {
    assert_expr(
        "tl.language.constexpr",
        "
        Attribute .constexpr
          Attribute .language
            Name tl
        ",
    );
}

#[test]
fn subscript_with_index_slices_and_tuples() {
    assert_expr(
        "x[1:2, ::3, ..., None, i]",
        "
        Subscript
          value: Name x
          index: Tuple
            Slice
              lower: Constant 1
              upper: Constant 2
            Slice
              step: Constant 3
            Constant ...
            Constant None
            Name i
        ",
    );
    assert_expr(
        "x[a:]",
        "
        Subscript
          value: Name x
          index: Slice
            lower: Name a
        ",
    );
    assert_expr(
        "x[:, None]",
        "
        Subscript
          value: Name x
          index: Tuple
            Slice
            Constant None
        ",
    );
    assert_expr(
        "x[*idx]",
        "
        Subscript
          value: Name x
          index: Tuple
            Starred
              Name idx
        ",
    );
}

#[test]
fn call_with_every_argument_kind() {
    assert_expr(
        "f(a, *args, k=1, **kw, z=2,)",
        "
        Call
          func: Name f
          args:
            Name a
            Starred
              Name args
          keywords:
            Keyword k
              Constant 1
            Keyword **
              Name kw
            Keyword z
              Constant 2
        ",
    );
    assert_expr("f()", "Call\n  func: Name f");
}

#[test]
fn call_with_a_generator_argument() {
    assert_expr(
        "sum(x for x in xs)",
        "
        Call
          func: Name sum
          args:
            GeneratorExp
              elt: Name x
              Comprehension
                target: Name x
                iter: Name xs
        ",
    );
}

#[test]
fn launch_grid_subscript_then_call() {
    assert_expr(
        "kernel[grid](x, BLOCK=64)",
        "
        Call
          func: Subscript
            value: Name kernel
            index: Name grid
          args:
            Name x
          keywords:
            Keyword BLOCK
              Constant 64
        ",
    );
}

// ---------------------------------------------------------------- operators

#[test]
fn binary_operator_precedence_is_pythons() {
    // | < ^ < & < shifts < + - < * / // % @ < unary < **
    assert_expr(
        "a | b ^ c & d << e + f * g ** h",
        "
        BinOp |
          Name a
          BinOp ^
            Name b
            BinOp &
              Name c
              BinOp <<
                Name d
                BinOp +
                  Name e
                  BinOp *
                    Name f
                    BinOp **
                      Name g
                      Name h
        ",
    );
}

#[test]
fn binary_operators_associate_left_except_power() {
    assert_expr(
        "a - b - c",
        "
        BinOp -
          BinOp -
            Name a
            Name b
          Name c
        ",
    );
    assert_expr(
        "a ** b ** c",
        "
        BinOp **
          Name a
          BinOp **
            Name b
            Name c
        ",
    );
    assert_expr(
        "a @ b // c % d / e",
        "
        BinOp /
          BinOp %
            BinOp //
              BinOp @
                Name a
                Name b
              Name c
            Name d
          Name e
        ",
    );
}

#[test]
fn unary_operators_bind_looser_than_power() {
    assert_expr(
        "-x ** 2",
        "
        UnaryOp -
          BinOp **
            Name x
            Constant 2
        ",
    );
    assert_expr(
        "2 ** -1",
        "
        BinOp **
          Constant 2
          UnaryOp -
            Constant 1
        ",
    );
    assert_expr(
        "~+-x",
        "
        UnaryOp ~
          UnaryOp +
            UnaryOp -
              Name x
        ",
    );
}

#[test]
fn not_binds_looser_than_comparison() {
    assert_expr(
        "not a == b",
        "
        UnaryOp not
          Compare ==
            Name a
            Name b
        ",
    );
}

#[test]
fn boolean_operators_flatten_and_nest_by_precedence() {
    assert_expr(
        "a or b or c and d and not e",
        "
        BoolOp or
          Name a
          Name b
          BoolOp and
            Name c
            Name d
            UnaryOp not
              Name e
        ",
    );
}

#[test]
fn chained_comparisons_form_one_node() {
    assert_expr(
        "a < b <= c != d in e not in f is g is not h",
        "
        Compare < <= != in not in is is not
          Name a
          Name b
          Name c
          Name d
          Name e
          Name f
          Name g
          Name h
        ",
    );
    assert_expr(
        "a + 1 > b & c",
        "
        Compare >
          BinOp +
            Name a
            Constant 1
          BinOp &
            Name b
            Name c
        ",
    );
}

#[test]
fn conditional_expressions_nest_to_the_right() {
    assert_expr(
        "a if b else c if d else e",
        "
        IfExp
          test: Name b
          body: Name a
          orelse: IfExp
            test: Name d
            body: Name c
            orelse: Name e
        ",
    );
}

#[test]
fn lambda_with_all_parameter_kinds() {
    assert_expr(
        "lambda a, /, b=1, *c, d, e=2, **f: a",
        "
        Lambda
          posonly:
            Param a
          args:
            Param b
              default: Constant 1
          vararg:
            Param c
          kwonly:
            Param d
            Param e
              default: Constant 2
          kwarg:
            Param f
          body: Name a
        ",
    );
    assert_expr("lambda: 0", "Lambda\n  body: Constant 0");
    assert_expr(
        "lambda *, k: k",
        "
        Lambda
          kwonly:
            Param k
          body: Name k
        ",
    );
}

#[test]
fn named_expression() {
    assert_expr(
        "(n := len(x)) > 5",
        "
        Compare >
          NamedExpr n
            Call
              func: Name len
              args:
                Name x
          Constant 5
        ",
    );
}

// ---------------------------------------------------------------- displays and comprehensions

#[test]
fn tuples_with_and_without_parentheses() {
    assert_expr("()", "Tuple");
    assert_expr("(1,)", "Tuple\n  Constant 1");
    assert_expr("1, 2", "Tuple\n  Constant 1\n  Constant 2");
    assert_expr("(1)", "Constant 1");
    assert_expr("(*a, b)", "Tuple\n  Starred\n    Name a\n  Name b");
}

#[test]
fn list_set_and_dict_displays() {
    assert_expr("[]", "List");
    assert_expr("[1, *xs,]", "List\n  Constant 1\n  Starred\n    Name xs");
    assert_expr("{1, 2}", "Set\n  Constant 1\n  Constant 2");
    assert_expr("{}", "Dict");
    assert_expr(
        "{'a': 1, **rest, b: 2}",
        r#"
        Dict
          key: Constant "a"
            value: Constant 1
          **: Name rest
          key: Name b
            value: Constant 2
        "#,
    );
}

#[test]
fn comprehensions_of_all_four_kinds() {
    assert_expr(
        "[x * y for x in xs if x for y in range(x) if y if y > 1]",
        "
        ListComp
          elt: BinOp *
            Name x
            Name y
          Comprehension
            target: Name x
            iter: Name xs
            ifs:
              Name x
          Comprehension
            target: Name y
            iter: Call
              func: Name range
              args:
                Name x
            ifs:
              Name y
              Compare >
                Name y
                Constant 1
        ",
    );
    assert_expr(
        "{k: v for k, v in items}",
        "
        DictComp
          key: Name k
          value: Name v
          Comprehension
            target: Tuple
              Name k
              Name v
            iter: Name items
        ",
    );
    assert_expr(
        "{x for x in xs}",
        "
        SetComp
          elt: Name x
          Comprehension
            target: Name x
            iter: Name xs
        ",
    );
    assert_expr(
        "(x for x in xs)",
        "
        GeneratorExp
          elt: Name x
          Comprehension
            target: Name x
            iter: Name xs
        ",
    );
}

#[test]
fn comprehension_condition_is_a_disjunction_not_a_conditional() {
    // `[a for a in b if c]`: `if c` is a filter, not the start of `b if c else ...`.
    assert_expr(
        "[a for a in b if c]",
        "
        ListComp
          elt: Name a
          Comprehension
            target: Name a
            iter: Name b
            ifs:
              Name c
        ",
    );
}
