//! Statements, simple and compound, and the spans of nodes.

use super::assert_tree;
use super::common::parse;
use tessel_lang::ast::{Constant, ExprKind, StmtKind};

// ---------------------------------------------------------------- simple statements

#[test]
fn expression_statement_and_docstring() {
    assert_tree(
        "'''Doc.'''\nf(x)\n",
        r#"
        Expr
          Constant "Doc."
        Expr
          Call
            func: Name f
            args:
              Name x
        "#,
    );
}

#[test]
fn chained_and_unpacking_assignment() {
    assert_tree(
        "a = b.c = d[0] = 1\nfirst, *rest = [x] = xs\n",
        "
        Assign
          targets:
            Name a
            Attribute .c
              Name b
            Subscript
              value: Name d
              index: Constant 0
          value: Constant 1
        Assign
          targets:
            Tuple
              Name first
              Starred
                Name rest
            List
              Name x
          value: Name xs
        ",
    );
}

#[test]
fn augmented_assignment_with_every_operator() {
    let ops = ["+", "-", "*", "@", "/", "//", "%", "**", "<<", ">>", "|", "^", "&"];
    for op in ops {
        let src = format!("x {op}= y\n");
        assert_tree(&src, &format!("AugAssign {op}=\n  target: Name x\n  value: Name y"));
    }
}

#[test]
fn annotated_assignment() {
    assert_tree(
        "BLOCK: tl.constexpr = 3\nx: int\n(y): float = 1.0\nself.z: T\n",
        "
        AnnAssign simple
          target: Name BLOCK
          annotation: Attribute .constexpr
            Name tl
          value: Constant 3
        AnnAssign simple
          target: Name x
          annotation: Name int
        AnnAssign
          target: Name y
          annotation: Name float
          value: Constant 1.0
        AnnAssign
          target: Attribute .z
            Name self
          annotation: Name T
        ",
    );
}

#[test]
fn return_pass_break_continue() {
    assert_tree(
        "def f():\n    while x:\n        break\n        continue\n    pass\n    return\n    return a, b\n",
        "
        FunctionDef f
          body:
            While
              test: Name x
              body:
                Break
                Continue
            Pass
            Return
            Return
              value: Tuple
                Name a
                Name b
        ",
    );
}

#[test]
fn imports() {
    assert_tree(
        "import triton.language as tl, os\nfrom ..a.b import (c as d, e,)\nfrom . import f\nfrom ...g import *\n",
        "
        Import
          Alias triton.language as tl
          Alias os
        ImportFrom ..a.b
          Alias c as d
          Alias e
        ImportFrom .
          Alias f
        ImportFrom ...g
          Alias *
        ",
    );
}

#[test]
fn global_nonlocal_del_assert_raise() {
    assert_tree(
        "global a, b\nnonlocal c\ndel x[0], y.z\nassert x, 'msg'\nraise\nraise E('m') from err\n",
        r#"
        Global a, b
        Nonlocal c
        Delete
          targets:
            Subscript
              value: Name x
              index: Constant 0
            Attribute .z
              Name y
        Assert
          test: Name x
          msg: Constant "msg"
        Raise
        Raise
          exc: Call
            func: Name E
            args:
              Constant "m"
          cause: Name err
        "#,
    );
}

#[test]
fn semicolon_separated_statements() {
    assert_tree(
        "a = 1; b = 2;\n",
        "Assign\n  targets:\n    Name a\n  value: Constant 1\nAssign\n  targets:\n    Name b\n  value: Constant 2",
    );
}

#[test]
fn type_alias_statement() {
    assert_tree(
        "type Pair[K, V = int] = tuple[K, V]\n",
        "
        TypeAlias Pair
          type_params:
            TypeVar K
            TypeVar V
              default: Name int
          value: Subscript
            value: Name tuple
            index: Tuple
              Name K
              Name V
        ",
    );
    // `type` is a soft keyword: still a name elsewhere.
    assert_tree("type = 1\n", "Assign\n  targets:\n    Name type\n  value: Constant 1");
}

// ---------------------------------------------------------------- compound statements

#[test]
fn function_definition_with_all_parameter_kinds() {
    assert_tree(
        "@triton.jit\n@deco(1)\ndef k(a, /, b: int, c=2, *args: T, d, e: tl.constexpr = 3, **kw) -> None:\n    pass\n",
        "
        FunctionDef k
          decorators:
            Attribute .jit
              Name triton
            Call
              func: Name deco
              args:
                Constant 1
          posonly:
            Param a
          args:
            Param b
              annotation: Name int
            Param c
              default: Constant 2
          vararg:
            Param args
              annotation: Name T
          kwonly:
            Param d
            Param e
              annotation: Attribute .constexpr
                Name tl
              default: Constant 3
          kwarg:
            Param kw
          returns: Constant None
          body:
            Pass
        ",
    );
}

#[test]
fn generic_function_and_class() {
    assert_tree(
        "def f[T: int, *Ts, **P](x: T) -> T: return x\nclass C[T]: pass\n",
        "
        FunctionDef f
          type_params:
            TypeVar T
              bound: Name int
            TypeVarTuple Ts
            ParamSpec P
          args:
            Param x
              annotation: Name T
          returns: Name T
          body:
            Return
              value: Name x
        ClassDef C
          type_params:
            TypeVar T
          body:
            Pass
        ",
    );
}

#[test]
fn class_definition_with_bases_keywords_and_decorators() {
    assert_tree(
        "@gluon.aggregate\nclass A(B, metaclass=M, **kw):\n    x: gl.constexpr\n    def f(self): ...\n",
        "
        ClassDef A
          decorators:
            Attribute .aggregate
              Name gluon
          bases:
            Name B
          keywords:
            Keyword metaclass
              Name M
            Keyword **
              Name kw
          body:
            AnnAssign simple
              target: Name x
              annotation: Attribute .constexpr
                Name gl
            FunctionDef f
              args:
                Param self
              body:
                Expr
                  Constant ...
        ",
    );
}

#[test]
fn if_elif_else_nests_in_orelse() {
    assert_tree(
        "if a:\n    x\nelif b:\n    y\nelse:\n    z\n",
        "
        If
          test: Name a
          body:
            Expr
              Name x
          orelse:
            If
              test: Name b
              body:
                Expr
                  Name y
              orelse:
                Expr
                  Name z
        ",
    );
}

#[test]
fn for_and_while_with_else() {
    assert_tree(
        "for i, (j, k) in pairs:\n    pass\nelse:\n    done()\nwhile n := next():\n    pass\nelse: pass\n",
        "
        For
          target: Tuple
            Name i
            Tuple
              Name j
              Name k
          iter: Name pairs
          body:
            Pass
          orelse:
            Expr
              Call
                func: Name done
        While
          test: NamedExpr n
            Call
              func: Name next
          body:
            Pass
          orelse:
            Pass
        ",
    );
}

#[test]
fn try_with_handlers_else_and_finally() {
    assert_tree(
        "try:\n    a\nexcept (E, F) as e:\n    b\nexcept G:\n    c\nexcept:\n    d\nelse:\n    f\nfinally:\n    g\n",
        "
        Try
          body:
            Expr
              Name a
          ExceptHandler
            type: Tuple
              Name E
              Name F
            name: e
            body:
              Expr
                Name b
          ExceptHandler
            type: Name G
            body:
              Expr
                Name c
          ExceptHandler
            body:
              Expr
                Name d
          orelse:
            Expr
              Name f
          finalbody:
            Expr
              Name g
        ",
    );
}

#[test]
fn try_finally_and_except_star() {
    assert_tree(
        "try:\n    a\nfinally:\n    b\ntry:\n    c\nexcept* E:\n    d\n",
        "
        Try
          body:
            Expr
              Name a
          finalbody:
            Expr
              Name b
        TryStar
          body:
            Expr
              Name c
          ExceptHandler
            type: Name E
            body:
              Expr
                Name d
        ",
    );
}

#[test]
fn with_items_plain_and_parenthesized() {
    let expected = "
        With
          item:
            context: Call
              func: Name open
              args:
                Name p
            target: Name f
          item:
            context: Name lock
          body:
            Pass
        ";
    assert_tree("with open(p) as f, lock:\n    pass\n", expected);
    assert_tree("with (\n    open(p) as f,\n    lock,\n):\n    pass\n", expected);
    // A parenthesized expression followed by `as` is one item whose context is a tuple.
    assert_tree(
        "with (a, b) as c: pass\n",
        "
        With
          item:
            context: Tuple
              Name a
              Name b
            target: Name c
          body:
            Pass
        ",
    );
}

#[test]
fn line_continuations_comments_and_blank_lines() {
    assert_tree(
        "x = 1 + \\\n    2  # comment\n\n   # indented comment\n\ny = (3 +\n# inside\n     4)\n",
        "
        Assign
          targets:
            Name x
          value: BinOp +
            Constant 1
            Constant 2
        Assign
          targets:
            Name y
          value: BinOp +
            Constant 3
            Constant 4
        ",
    );
}

/// `match` in host code: each case's pattern (read as an expression), its `as` name and guard, and its body;
/// the printed form parses back to the same tree.
#[test]
fn match_statement() {
    let src = "match cmd:\n    case {'op': 'add', **rest}:\n        pass\n    case [x, y, *_] as pair if x > 0:\n        \
               pass\n    case Point(x=0) | None:\n        pass\n    case 1, -2:\n        pass\n    case _:\n        pass\n";
    assert_tree(
        src,
        "
        Match
          subject: Name cmd
          match_case
            pattern: Dict
              key: Constant \"op\"
                value: Constant \"add\"
              **: Name rest
            body:
              Pass
          match_case
            pattern: List
              Name x
              Name y
              Starred
                Name _
            as: pair
            guard: Compare >
              Name x
              Constant 0
            body:
              Pass
          match_case
            pattern: BinOp |
              Call
                func: Name Point
                keywords:
                  Keyword x
                    Constant 0
              Constant None
            body:
              Pass
          match_case
            pattern: Tuple
              Constant 1
              UnaryOp -
                Constant 2
            body:
              Pass
          match_case
            pattern: Name _
            body:
              Pass
        ",
    );
    let module = tessel_lang::parse_module(src).unwrap();
    let printed = tessel_lang::ast::unparse(&module);
    assert_eq!(
        tessel_lang::ast::dump(&tessel_lang::parse_module(&printed).unwrap(), false),
        tessel_lang::ast::dump(&module, false),
        "{printed}"
    );
}

#[test]
fn soft_keyword_match_is_still_a_name() {
    assert_tree(
        "match = re.match(p, s)\nmatch(x)\n",
        "
        Assign
          targets:
            Name match
          value: Call
            func: Attribute .match
              Name re
            args:
              Name p
              Name s
        Expr
          Call
            func: Name match
            args:
              Name x
        ",
    );
}

// ---------------------------------------------------------------- spans

#[test]
fn spans_cover_the_source_of_each_node() {
    let src = "y = f(a, b=2) + (c)\n";
    let module = parse(src);
    let stmt = &module.body[0];
    assert_eq!(&src[stmt.span.range()], "y = f(a, b=2) + (c)");
    let StmtKind::Assign { value, .. } = &stmt.kind else { panic!("not an assignment") };
    assert_eq!(&src[value.span.range()], "f(a, b=2) + (c)");
    let ExprKind::BinOp { left, right, .. } = &value.kind else { panic!("not a binop") };
    assert_eq!(&src[left.span.range()], "f(a, b=2)");
    // A parenthesized expression keeps the span of what is inside, as in Python.
    assert_eq!(&src[right.span.range()], "c");
    let ExprKind::Call { keywords, .. } = &left.kind else { panic!("not a call") };
    assert_eq!(&src[keywords[0].span.range()], "b=2");
}

#[test]
fn compound_statement_spans_end_at_their_last_statement() {
    let src = "@jit\ndef f(x):\n    if x:\n        return 1\n\n    return 2\n\nz = 3\n";
    let module = parse(src);
    let def = &module.body[0];
    assert_eq!(&src[def.span.range()], "def f(x):\n    if x:\n        return 1\n\n    return 2");
    let StmtKind::FunctionDef(f) = &def.kind else { panic!("not a def") };
    assert_eq!(&src[f.decorators[0].span.range()], "jit");
    assert_eq!(&src[f.body[0].span.range()], "if x:\n        return 1");
    assert_eq!(&src[module.body[1].span.range()], "z = 3");
}

#[test]
fn constants_carry_decoded_values() {
    let module = parse("x = 'a\\x41'\n");
    let StmtKind::Assign { value, .. } = &module.body[0].kind else { panic!("not an assignment") };
    assert_eq!(value.kind, ExprKind::Constant(Constant::Str("aA".into())));
}
