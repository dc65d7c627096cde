//! Robustness: lexing and parsing arbitrary input never panics, every error points inside the source (and renders),
//! and whatever parses survives an unparse/parse round trip unchanged.
//!
//! Inputs are random byte strings, soups of Python tokens, and corpus files mutated by deleting, duplicating,
//! swapping and inserting pieces.

use std::time::{Duration, Instant};

use proptest::prelude::*;
use tessel_lang::{ast, lex, parse_module};

const CORPUS: &[&str] = &[
    include_str!("corpus/vector_add.py"),
    include_str!("corpus/fused_softmax.py"),
    include_str!("corpus/matmul.py"),
    include_str!("corpus/layer_norm.py"),
    include_str!("corpus/gluon_pipelined_gemm.py"),
    include_str!("corpus/test_host_forms.py"),
];

/// Pieces of Python source, for token soups and insertions.
const PIECES: &[&str] = &[
    "x",
    "tl",
    "_",
    "match",
    "type",
    "case",
    "0",
    "1_0",
    "0x1f",
    "1.5e3",
    ".5",
    "1j",
    "'s'",
    "\"s\"",
    "'''t\n'''",
    "r'\\'",
    "b'\\xff'",
    "f'{x}'",
    "f\"{x!r:>{w}}\"",
    "f'{x=}'",
    "f'{",
    "}'",
    "{",
    "}",
    "(",
    ")",
    "[",
    "]",
    ",",
    ":",
    ";",
    ".",
    "...",
    "=",
    "==",
    "!=",
    "!",
    "+",
    "-",
    "*",
    "**",
    "/",
    "//",
    "%",
    "@",
    "<<",
    ">>",
    "&",
    "|",
    "^",
    "~",
    "<",
    ">",
    "<=",
    ">=",
    ":=",
    "->",
    "+=",
    "**=",
    "\n",
    "\n    ",
    "\n        ",
    "\n  ",
    "\t",
    " ",
    "\\\n",
    "#c\n",
    "def",
    "class",
    "return",
    "if",
    "elif",
    "else",
    "for",
    "in",
    "while",
    "try",
    "except",
    "except*",
    "finally",
    "with",
    "as",
    "lambda",
    "yield",
    "await",
    "async",
    "import",
    "from",
    "global",
    "nonlocal",
    "del",
    "assert",
    "raise",
    "pass",
    "break",
    "continue",
    "not",
    "and",
    "or",
    "is",
    "None",
    "True",
    "False",
    "@triton.jit\n",
    "é",
    "$",
    "\r\n",
    "\x0c",
];

/// Parses `src`; on failure checks the error points inside `src` and renders; on success checks the round trip.
fn check(src: &str) {
    match parse_module(src) {
        Err(d) => {
            assert!(
                d.span.start <= d.span.end && d.span.end <= src.len(),
                "span {} outside {} bytes",
                d.span,
                src.len()
            );
            assert!(
                src.is_char_boundary(d.span.start) && src.is_char_boundary(d.span.end),
                "span {} splits a char",
                d.span
            );
            for (span, _) in &d.secondary {
                assert!(
                    span.end <= src.len() && src.is_char_boundary(span.start),
                    "secondary span {span} out of bounds"
                );
            }
            assert!(!d.message.is_empty());
            let rendered = d.render("fuzz.py", src);
            assert!(rendered.contains(&d.message), "the report shows its message");
        }
        Ok(module) => {
            let printed = ast::unparse(&module);
            let reparsed = parse_module(&printed).unwrap_or_else(|d| {
                panic!("unparsed source does not parse: {}\n--- source\n{src}\n--- printed\n{printed}", d.message)
            });
            assert_eq!(ast::dump(&module, false), ast::dump(&reparsed, false), "round trip of:\n{src}\n---\n{printed}");
        }
    }
    // The lexer alone never panics either.
    let _ = lex(src);
}

#[derive(Clone, Debug)]
enum Mutation {
    Delete { at: usize, len: usize },
    Duplicate { at: usize, len: usize },
    Swap { a: usize, b: usize, len: usize },
    Insert { at: usize, piece: usize },
}

fn floor_boundary(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// Applies a mutation; offsets are taken modulo the length and moved back to char boundaries.
fn mutate(src: &str, m: &Mutation) -> String {
    let n = src.len().max(1);
    let range = |at: usize, len: usize| {
        let start = floor_boundary(src, at % n);
        (start, floor_boundary(src, start + len))
    };
    match *m {
        Mutation::Delete { at, len } => {
            let (s, e) = range(at, len);
            format!("{}{}", &src[..s], &src[e..])
        }
        Mutation::Duplicate { at, len } => {
            let (s, e) = range(at, len);
            format!("{}{}{}", &src[..e], &src[s..e], &src[e..])
        }
        Mutation::Swap { a, b, len } => {
            let (mut r1, mut r2) = (range(a, len), range(b, len));
            if r1.0 > r2.0 {
                std::mem::swap(&mut r1, &mut r2);
            }
            if r1.1 > r2.0 {
                return src.to_string();
            }
            format!("{}{}{}{}{}", &src[..r1.0], &src[r2.0..r2.1], &src[r1.1..r2.0], &src[r1.0..r1.1], &src[r2.1..])
        }
        Mutation::Insert { at, piece } => {
            let at = floor_boundary(src, at % n);
            format!("{}{}{}", &src[..at], PIECES[piece % PIECES.len()], &src[at..])
        }
    }
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), 1..40usize).prop_map(|(at, len)| Mutation::Delete { at, len }),
        (any::<usize>(), 1..40usize).prop_map(|(at, len)| Mutation::Duplicate { at, len }),
        (any::<usize>(), any::<usize>(), 1..20usize).prop_map(|(a, b, len)| Mutation::Swap { a, b, len }),
        (any::<usize>(), any::<usize>()).prop_map(|(at, piece)| Mutation::Insert { at, piece }),
    ]
}

proptest! {
    // 256 cases each (proptest's default); set PROPTEST_CASES to run more.
    #![proptest_config(ProptestConfig::default())]

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        check(&String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn token_soup_never_panics(pieces in prop::collection::vec(0..PIECES.len(), 0..60)) {
        let src: String = pieces.iter().map(|&i| PIECES[i]).collect();
        check(&src);
    }

    #[test]
    fn mutated_corpus_never_panics(file in 0..CORPUS.len(), mutations in prop::collection::vec(mutation(), 1..6)) {
        let mut src = CORPUS[file].to_string();
        for m in &mutations {
            src = mutate(&src, m);
        }
        check(&src);
    }
}

/// A generated expression: Python source and how tightly it binds (the precedence levels of `ast.unparse`).
type Gen = (String, u8);

const TEST: u8 = 1;
const OR: u8 = 2;
const AND: u8 = 3;
const NOT: u8 = 4;
const CMP: u8 = 5;
const BOR: u8 = 6;
const FACTOR: u8 = 12;
const POWER: u8 = 13;
const ATOM: u8 = 15;

/// `s`, parenthesized if it binds looser than `need`.
fn wrap((s, have): &Gen, need: u8) -> String {
    if *have < need { format!("({s})") } else { s.clone() }
}

/// Random valid expressions covering every expression form, parenthesized only where Python requires it.
fn expression() -> impl Strategy<Value = Gen> {
    let leaf = prop::sample::select(vec![
        "x", "tl", "_y2", "0", "7", "1_000", "0xff", "1.5", ".5", "1e3", "'s'", "\"t\"", "b'b'", "None", "True", "...",
    ])
    .prop_map(|s| (s.to_string(), ATOM));
    leaf.prop_recursive(5, 48, 3, |inner| {
        let binop = prop::sample::select(vec![
            ("|", 6u8),
            ("^", 7),
            ("&", 8),
            ("<<", 9),
            (">>", 9),
            ("+", 10),
            ("-", 10),
            ("*", 11),
            ("/", 11),
            ("//", 11),
            ("%", 11),
            ("@", 11),
            ("**", POWER),
        ]);
        let cmp = prop::sample::select(vec!["<", "<=", "==", "!=", ">", ">=", "in", "not in", "is", "is not"]);
        prop_oneof![
            (inner.clone(), binop, inner.clone()).prop_map(|(a, (op, p), b)| {
                let (l, r) =
                    if op == "**" { (wrap(&a, ATOM - 1), wrap(&b, FACTOR)) } else { (wrap(&a, p), wrap(&b, p + 1)) };
                (format!("{l} {op} {r}"), p)
            }),
            (prop::sample::select(vec!["-", "+", "~"]), inner.clone())
                .prop_map(|(op, a)| (format!("{op}{}", wrap(&a, FACTOR)), FACTOR)),
            inner.clone().prop_map(|a| (format!("not {}", wrap(&a, NOT)), NOT)),
            (prop::bool::ANY, prop::collection::vec(inner.clone(), 2..4)).prop_map(|(and, xs)| {
                let (op, p) = if and { ("and", AND) } else { ("or", OR) };
                (xs.iter().map(|x| wrap(x, p + 1)).collect::<Vec<_>>().join(&format!(" {op} ")), p)
            }),
            (inner.clone(), prop::collection::vec((cmp, inner.clone()), 1..3)).prop_map(|(first, rest)| {
                let tail: String = rest.iter().map(|(op, x)| format!(" {op} {}", wrap(x, BOR))).collect();
                (format!("{}{tail}", wrap(&first, BOR)), CMP)
            }),
            (inner.clone(), inner.clone(), inner.clone())
                .prop_map(|(a, b, c)| (format!("{} if {} else {}", wrap(&a, OR), wrap(&b, OR), wrap(&c, TEST)), TEST)),
            inner.clone().prop_map(|a| (format!("lambda p, /, q=1, *r, s, **t: {}", wrap(&a, TEST)), TEST)),
            (inner.clone(), prop::collection::vec(inner.clone(), 0..3)).prop_map(|(f, args)| {
                let mut args: Vec<String> = args.iter().map(|a| wrap(a, TEST)).collect();
                let kw = args.first().map_or("0".to_string(), |a| format!("k={a}"));
                args.extend(["*a".to_string(), kw, "**kw".to_string()]);
                (format!("{}({})", wrap(&f, ATOM), args.join(", ")), ATOM)
            }),
            (inner.clone(), inner.clone(), inner.clone()).prop_map(|(v, a, b)| {
                (
                    format!(
                        "{}[{}, {}:{}:, ::{}]",
                        wrap(&v, ATOM),
                        wrap(&a, TEST),
                        wrap(&a, TEST),
                        wrap(&b, TEST),
                        wrap(&b, TEST)
                    ),
                    ATOM,
                )
            }),
            inner.clone().prop_map(|a| {
                let v =
                    if a.0.starts_with(|c: char| c.is_ascii_digit()) { format!("({})", a.0) } else { wrap(&a, ATOM) };
                (format!("{v}.attr"), ATOM)
            }),
            prop::collection::vec(inner.clone(), 0..4).prop_map(|xs| {
                let mut items: Vec<String> = xs.iter().map(|x| wrap(x, TEST)).collect();
                let tuple =
                    if items.len() == 1 { format!("({},)", items[0]) } else { format!("({})", items.join(", ")) };
                items.push(format!("*{tuple}"));
                (format!("[{}]", items.join(", ")), ATOM)
            }),
            (inner.clone(), inner.clone()).prop_map(|(k, v)| {
                let (k, v, spread) = (wrap(&k, TEST), wrap(&v, TEST), wrap(&v, BOR));
                (format!("{{{k}: {v}, **{spread}, {v}: {k}}}"), ATOM)
            }),
            (inner.clone(), inner.clone(), inner.clone(), 0..4u8).prop_map(|(e, it, cond, kind)| {
                let clauses =
                    format!("for n, m in {} if {} for o in {}", wrap(&it, OR), wrap(&cond, OR), wrap(&it, OR));
                let e = wrap(&e, TEST);
                let s = match kind {
                    0 => format!("[{e} {clauses}]"),
                    1 => format!("{{{e} {clauses}}}"),
                    2 => format!("{{{e}: {e} {clauses}}}"),
                    _ => format!("({e} {clauses})"),
                };
                (s, ATOM)
            }),
            inner.clone().prop_map(|a| (format!("(w := {})", wrap(&a, TEST)), ATOM)),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| {
                // Spaces inside the braces: `{{` would be an escaped brace.
                (format!("f'<{{ {} !r:>{{ {} }}}}>{{{{lit}}}}' 'tail'", wrap(&a, ATOM), wrap(&b, ATOM)), ATOM)
            }),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::default())]

    /// Every generated expression parses, as an expression statement, an assignment value and inside a kernel; and
    /// it survives the unparse/parse round trip.
    #[test]
    fn generated_expressions_parse(e in expression()) {
        let src = format!("{0}\ny = {0}\n@jit\ndef k(a: tl.constexpr = {0}):\n    return {0}\n", e.0);
        if let Err(d) = parse_module(&src) {
            panic!("valid Python rejected: {}\n{}", d.message, d.render("gen.py", &src));
        }
        check(&src);
    }
}

/// Deeply nested and very long inputs parse in linear time (no backtracking blow-up) and without overflowing the
/// stack.
#[test]
fn pathological_inputs_parse_quickly() {
    let depth = 200;
    let inputs = [
        format!("x = {}1{}\n", "(".repeat(depth), ")".repeat(depth)),
        format!("x = {}1{}\n", "f(".repeat(depth), ")".repeat(depth)),
        format!("x = {}{}\n", "[".repeat(depth), "]".repeat(depth)),
        format!("x = {}1{}\n", "a[".repeat(depth), "]".repeat(depth)),
        format!("x = {}1{}\n", "{1: ".repeat(depth), "}".repeat(depth)),
        format!("x = {}1\n", "-".repeat(depth)),
        format!("x = {}1\n", "not ".repeat(depth)),
        format!("x = 1{}\n", " + 1".repeat(5000)),
        format!("x = 1{}\n", " if c else 1".repeat(depth)),
        format!("x = {}1\n", "lambda: ".repeat(depth)),
        format!("with {}a{}: pass\n", "(".repeat(depth), ")".repeat(depth)),
        format!("if a:\n    pass\n{}else:\n    pass\n", "elif b:\n    pass\n".repeat(1000)),
        (0..60).map(|i| format!("{}if x:\n", "    ".repeat(i))).collect::<String>() + &"    ".repeat(60) + "pass\n",
        format!("x = ({}\n", "(".repeat(depth)),
    ];
    for src in &inputs {
        let start = Instant::now();
        let result = parse_module(src);
        let elapsed = start.elapsed();
        assert!(elapsed < Duration::from_secs(2), "{elapsed:?} for input starting {:?}", &src[..src.len().min(40)]);
        if let Err(d) = result {
            assert!(d.span.end <= src.len());
            // 5000 terms nest deeper than CPython's compiler (or tessel) goes.
            let too_deep = src.starts_with("x = 1 + 1") && d.message == "expression too deeply nested";
            assert!(src.starts_with("x = (((") || too_deep, "unexpected error: {}", d.message);
        }
    }
}

/// Nesting past the limits is refused with CPython's words, before the parser builds a tree whose recursive
/// walks (its `Drop` included) would overflow the stack; just inside the limits parses.
#[test]
fn nesting_limits_are_errors_not_stack_overflows() {
    let n = 100_000;
    let refused = [
        (format!("x = 1{}\n", " + 1".repeat(n)), "expression too deeply nested"),
        (format!("x = {}1\n", "-".repeat(n)), "expression too deeply nested"),
        (format!("x = {}1\n", "not ".repeat(n)), "expression too deeply nested"),
        (format!("x = {}1\n", "lambda a, b: ".repeat(n)), "expression too deeply nested"),
        (format!("x = a{}\n", ".b".repeat(n)), "expression too deeply nested"),
        (format!("x = f{}\n", "()".repeat(n)), "expression too deeply nested"),
        (format!("x = 1{}\n", " if c else 1".repeat(n)), "expression too deeply nested"),
        (format!("x = {}1{}\n", "[".repeat(n), "]".repeat(n)), "too many nested parentheses"),
        (format!("x = {}1{}\n", "f(".repeat(201), ")".repeat(201)), "too many nested parentheses"),
        (format!("x = f'{}'\n", "{f'".repeat(300)), "too many nested parentheses"),
        (
            (0..101).map(|i| format!("{}if x:\n", " ".repeat(i))).collect::<String>() + &" ".repeat(101) + "pass\n",
            "too many levels of indentation",
        ),
    ];
    for (src, message) in &refused {
        let start = Instant::now();
        let d = parse_module(src).expect_err(&src[..40.min(src.len())]);
        assert_eq!(d.message, *message, "for {:?}", &src[..40.min(src.len())]);
        assert!(start.elapsed() < Duration::from_secs(5), "{:?}", start.elapsed());
        assert!(d.render("deep.py", src).contains(message));
    }
    let accepted = [
        format!("x = {}1{}\n", "(-".repeat(199), ")".repeat(199)),
        format!("x = 1{}\n", " + 1".repeat(2900)),
        format!("x = [{}]\n", "-1, ".repeat(n)),
        (0..99).map(|i| format!("{}if x:\n", " ".repeat(i))).collect::<String>() + &" ".repeat(99) + "pass\n",
    ];
    for src in &accepted {
        let module = parse_module(src).unwrap_or_else(|d| panic!("{} for {:?}", d.message, &src[..40]));
        // Printing and dumping the deepest accepted trees recurses once per level: no overflow on a test thread.
        let _ = ast::unparse(&module);
        let _ = ast::dump(&module, false);
    }
}

/// "expected an indented block" marks the character after the colon's line, a whole `é` rather than one byte of
/// it (ariadne would panic slicing inside the character).
#[test]
fn missing_block_before_a_multibyte_character() {
    for src in ["def f():\né = 1\n", "if x:\néa\n", "class C:\n    def f():\né = 1\n", "if a:\n  if b:\nλ\n"] {
        let d = parse_module(src).expect_err(src);
        assert!(src.is_char_boundary(d.span.start) && src.is_char_boundary(d.span.end), "{} in {src:?}", d.span);
        assert!(d.render("mb.py", src).contains("indented block"), "{}", d.message);
    }
}
