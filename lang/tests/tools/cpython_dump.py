"""Prints CPython's AST of a file in the format of `tessel_lang::ast::dump(module, spans=false)`.

Used by `tests/cpython_diff.rs` to check the tessel parser against CPython (3.12 or newer) on the corpus:
`TESSEL_PYTHON=python3.12 cargo test -p tessel-lang --test cpython_diff -- --ignored`.
The mapping follows the differences documented in `src/ast/mod.rs`: parameters carry their defaults, dict items are
`key:`/`**:` entries, and a self-documenting f-string field (`{x = }`) keeps its text instead of being expanded.
"""

import ast
import sys

SYMBOLS = {
    ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.MatMult: "@", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%",
    ast.Pow: "**", ast.LShift: "<<", ast.RShift: ">>", ast.BitOr: "|", ast.BitXor: "^", ast.BitAnd: "&",
    ast.Not: "not", ast.Invert: "~", ast.UAdd: "+", ast.USub: "-", ast.And: "and", ast.Or: "or", ast.Eq: "==",
    ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Is: "is", ast.IsNot: "is not",
    ast.In: "in", ast.NotIn: "not in",
}


def rust_float(v):
    """Rust's `{:?}` of an f64 (same thresholds as Python's repr, different exponent spelling)."""
    r = repr(v)
    if "e" in r:
        mantissa, exp = r.split("e")
        return f"{mantissa}e{int(exp)}"
    return r


def rust_str(s):
    """Rust's `{:?}` of a str, for the characters that occur in practice."""
    out = []
    for c in s:
        if c in '"\\':
            out.append("\\" + c)
        elif c in "\n\r\t":
            out.append({"\n": "\\n", "\r": "\\r", "\t": "\\t"}[c])
        elif c == "\0":
            out.append("\\0")
        elif c.isprintable():
            out.append(c)
        else:
            out.append("\\u{%x}" % ord(c))
    return '"' + "".join(out) + '"'


def rust_bytes(b):
    """`b"..."` with Rust's `escape_ascii`."""
    named = {9: "\\t", 10: "\\n", 13: "\\r", 34: '\\"', 39: "\\'", 92: "\\\\"}
    return 'b"' + "".join(named.get(x) or (chr(x) if 0x20 <= x < 0x7f else "\\x%02x" % x) for x in b) + '"'


def constant(v):
    if v is None or v is True or v is False:
        return str(v)
    if v is Ellipsis:
        return "..."
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return rust_float(v)
    if isinstance(v, str):
        return rust_str(v)
    if isinstance(v, bytes):
        return rust_bytes(v)
    raise ValueError(f"unexpected constant {v!r}")


class Dumper:

    def __init__(self, source):
        self.out = []
        self.source = source.encode()
        self.line_starts = [0]
        for i, b in enumerate(self.source):
            if b == ord("\n"):
                self.line_starts.append(i + 1)

    def offset(self, line, col):
        return self.line_starts[line - 1] + col

    def line(self, d, label, head):
        self.out.append("  " * d + (f"{label}: " if label else "") + head)

    def header(self, d, label):
        self.out.append("  " * d + label + ":")

    def stmts(self, d, label, body):
        if label and body:
            self.header(d, label)
            d += 1
        for s in body:
            self.stmt(d, s)

    def exprs(self, d, label, es):
        if es:
            self.header(d, label)
            for e in es:
                self.expr(d + 1, None, e)

    def opt(self, d, label, e):
        if e is not None:
            self.expr(d, label, e)

    def params(self, d, a):
        positional = a.posonlyargs + a.args
        defaults = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
        groups = [
            ("posonly", list(zip(a.posonlyargs, defaults))),
            ("args", list(zip(a.args, defaults[len(a.posonlyargs):]))),
            ("vararg", [(a.vararg, None)] if a.vararg else []),
            ("kwonly", list(zip(a.kwonlyargs, a.kw_defaults))),
            ("kwarg", [(a.kwarg, None)] if a.kwarg else []),
        ]
        for label, params in groups:
            if not params:
                continue
            self.header(d, label)
            for p, default in params:
                self.line(d + 1, None, f"Param {p.arg}")
                self.opt(d + 2, "annotation", p.annotation)
                self.opt(d + 2, "default", default)

    def type_params(self, d, params):
        if params:
            self.header(d, "type_params")
            for p in params:
                self.line(d + 1, None, f"{type(p).__name__} {p.name}")
                self.opt(d + 2, "bound", getattr(p, "bound", None))
                self.opt(d + 2, "default", getattr(p, "default_value", None))

    def keywords(self, d, keywords):
        if keywords:
            self.header(d, "keywords")
            for k in keywords:
                self.line(d + 1, None, f"Keyword {k.arg}" if k.arg else "Keyword **")
                self.expr(d + 2, None, k.value)

    def aliases(self, d, names):
        for a in names:
            self.line(d, None, f"Alias {a.name} as {a.asname}" if a.asname else f"Alias {a.name}")

    def stmt(self, d, s):
        c = d + 1
        kind = type(s).__name__
        if isinstance(s, ast.Expr):
            self.line(d, None, "Expr")
            self.expr(c, None, s.value)
        elif isinstance(s, ast.Assign):
            self.line(d, None, "Assign")
            self.exprs(c, "targets", s.targets)
            self.expr(c, "value", s.value)
        elif isinstance(s, ast.AugAssign):
            self.line(d, None, f"AugAssign {SYMBOLS[type(s.op)]}=")
            self.expr(c, "target", s.target)
            self.expr(c, "value", s.value)
        elif isinstance(s, ast.AnnAssign):
            self.line(d, None, "AnnAssign simple" if s.simple else "AnnAssign")
            self.expr(c, "target", s.target)
            self.expr(c, "annotation", s.annotation)
            self.opt(c, "value", s.value)
        elif isinstance(s, ast.FunctionDef):
            self.line(d, None, f"FunctionDef {s.name}")
            self.exprs(c, "decorators", s.decorator_list)
            self.type_params(c, getattr(s, "type_params", []))
            self.params(c, s.args)
            self.opt(c, "returns", s.returns)
            self.stmts(c, "body", s.body)
        elif isinstance(s, ast.ClassDef):
            self.line(d, None, f"ClassDef {s.name}")
            self.exprs(c, "decorators", s.decorator_list)
            self.type_params(c, getattr(s, "type_params", []))
            self.exprs(c, "bases", s.bases)
            self.keywords(c, s.keywords)
            self.stmts(c, "body", s.body)
        elif isinstance(s, ast.Return):
            self.line(d, None, "Return")
            self.opt(c, "value", s.value)
        elif isinstance(s, (ast.If, ast.While)):
            self.line(d, None, kind)
            self.expr(c, "test", s.test)
            self.stmts(c, "body", s.body)
            self.stmts(c, "orelse", s.orelse)
        elif isinstance(s, ast.For):
            self.line(d, None, "For")
            self.expr(c, "target", s.target)
            self.expr(c, "iter", s.iter)
            self.stmts(c, "body", s.body)
            self.stmts(c, "orelse", s.orelse)
        elif isinstance(s, (ast.Break, ast.Continue, ast.Pass)):
            self.line(d, None, kind)
        elif isinstance(s, ast.Import):
            self.line(d, None, "Import")
            self.aliases(c, s.names)
        elif isinstance(s, ast.ImportFrom):
            self.line(d, None, "ImportFrom " + "." * s.level + (s.module or ""))
            self.aliases(c, s.names)
        elif isinstance(s, (ast.Global, ast.Nonlocal)):
            self.line(d, None, f"{kind} " + ", ".join(s.names))
        elif isinstance(s, ast.Delete):
            self.line(d, None, "Delete")
            self.exprs(c, "targets", s.targets)
        elif isinstance(s, ast.Assert):
            self.line(d, None, "Assert")
            self.expr(c, "test", s.test)
            self.opt(c, "msg", s.msg)
        elif isinstance(s, ast.Raise):
            self.line(d, None, "Raise")
            self.opt(c, "exc", s.exc)
            self.opt(c, "cause", s.cause)
        elif kind in ("Try", "TryStar"):
            self.line(d, None, kind)
            self.stmts(c, "body", s.body)
            for h in s.handlers:
                self.line(c, None, "ExceptHandler")
                self.opt(c + 1, "type", h.type)
                if h.name:
                    self.line(c + 1, "name", h.name)
                self.stmts(c + 1, "body", h.body)
            self.stmts(c, "orelse", s.orelse)
            self.stmts(c, "finalbody", s.finalbody)
        elif isinstance(s, ast.With):
            self.line(d, None, "With")
            for item in s.items:
                self.header(c, "item")
                self.expr(c + 1, "context", item.context_expr)
                self.opt(c + 1, "target", item.optional_vars)
            self.stmts(c, "body", s.body)
        elif kind == "TypeAlias":
            self.line(d, None, f"TypeAlias {s.name.id}")
            self.type_params(c, s.type_params)
            self.expr(c, "value", s.value)
        else:
            raise ValueError(f"unsupported statement {kind}")

    def generators(self, d, generators):
        for g in generators:
            self.line(d, None, "Comprehension")
            self.expr(d + 1, "target", g.target)
            self.expr(d + 1, "iter", g.iter)
            self.exprs(d + 1, "ifs", g.ifs)

    def debug_text(self, literal, field):
        """For `{x = }`, CPython appends the text `x = ` to the preceding literal; take it back out."""
        value = field.value
        end = self.offset(value.end_lineno, value.end_col_offset)
        after = self.source[end:].lstrip()
        if not after.startswith(b"=") or after.startswith(b"=="):
            return None
        start = self.offset(value.lineno, value.col_offset)
        brace = self.source.rindex(b"{", 0, start)
        eq = self.source.index(b"=", end)
        stop = eq + 1
        while self.source[stop:stop + 1] in (b" ", b"\t"):
            stop += 1
        text = self.source[brace + 1:stop].decode()
        assert literal is not None and literal.endswith(text), (literal, text)
        return text

    def fstring_parts(self, d, values):
        parts = []
        for v in values:
            if isinstance(v, ast.Constant):
                parts.append(["lit", v.value])
                continue
            text = self.debug_text(parts[-1][1] if parts and parts[-1][0] == "lit" else None, v)
            conversion = v.conversion
            if text is not None:
                parts[-1][1] = parts[-1][1][:-len(text)]
                if not parts[-1][1]:
                    parts.pop()
                explicit = self.source[self.source.index(b"=", self.offset(v.value.end_lineno, v.value.end_col_offset)):]
                if conversion == ord("r") and not explicit[1:].lstrip().startswith(b"!r"):
                    conversion = -1
            parts.append(["field", v, text, conversion])
        for part in parts:
            if part[0] == "lit":
                self.line(d, None, "Literal " + rust_str(part[1]))
                continue
            _, v, text, conversion = part
            head = "FormattedValue"
            if text is not None:
                head += " debug=" + rust_str(text)
            if conversion != -1:
                head += " !" + chr(conversion)
            self.line(d, None, head)
            self.expr(d + 1, "value", v.value)
            if v.format_spec is not None:
                self.header(d + 1, "format_spec")
                self.fstring_parts(d + 2, v.format_spec.values)

    def expr(self, d, label, e):
        c = d + 1
        head = lambda text: self.line(d, label, text)
        if isinstance(e, ast.Name):
            head(f"Name {e.id}")
        elif isinstance(e, ast.Constant):
            head("Constant " + constant(e.value))
        elif isinstance(e, ast.Attribute):
            head(f"Attribute .{e.attr}")
            self.expr(c, None, e.value)
        elif isinstance(e, ast.Subscript):
            head("Subscript")
            self.expr(c, "value", e.value)
            self.expr(c, "index", e.slice)
        elif isinstance(e, ast.Slice):
            head("Slice")
            self.opt(c, "lower", e.lower)
            self.opt(c, "upper", e.upper)
            self.opt(c, "step", e.step)
        elif isinstance(e, ast.Call):
            head("Call")
            self.expr(c, "func", e.func)
            self.exprs(c, "args", e.args)
            self.keywords(c, e.keywords)
        elif isinstance(e, ast.BinOp):
            head(f"BinOp {SYMBOLS[type(e.op)]}")
            self.expr(c, None, e.left)
            self.expr(c, None, e.right)
        elif isinstance(e, ast.UnaryOp):
            head(f"UnaryOp {SYMBOLS[type(e.op)]}")
            self.expr(c, None, e.operand)
        elif isinstance(e, ast.BoolOp):
            head(f"BoolOp {SYMBOLS[type(e.op)]}")
            for v in e.values:
                self.expr(c, None, v)
        elif isinstance(e, ast.Compare):
            head("Compare " + " ".join(SYMBOLS[type(o)] for o in e.ops))
            self.expr(c, None, e.left)
            for v in e.comparators:
                self.expr(c, None, v)
        elif isinstance(e, ast.IfExp):
            head("IfExp")
            self.expr(c, "test", e.test)
            self.expr(c, "body", e.body)
            self.expr(c, "orelse", e.orelse)
        elif isinstance(e, ast.Lambda):
            head("Lambda")
            self.params(c, e.args)
            self.expr(c, "body", e.body)
        elif isinstance(e, (ast.Tuple, ast.List, ast.Set)):
            head(type(e).__name__)
            for v in e.elts:
                self.expr(c, None, v)
        elif isinstance(e, ast.Dict):
            head("Dict")
            for k, v in zip(e.keys, e.values):
                if k is None:
                    self.expr(c, "**", v)
                else:
                    self.expr(c, "key", k)
                    self.expr(c + 1, "value", v)
        elif isinstance(e, (ast.ListComp, ast.SetComp, ast.GeneratorExp)):
            head(type(e).__name__)
            self.expr(c, "elt", e.elt)
            self.generators(c, e.generators)
        elif isinstance(e, ast.DictComp):
            head("DictComp")
            self.expr(c, "key", e.key)
            self.expr(c, "value", e.value)
            self.generators(c, e.generators)
        elif isinstance(e, ast.Starred):
            head("Starred")
            self.expr(c, None, e.value)
        elif isinstance(e, ast.NamedExpr):
            head(f"NamedExpr {e.target.id}")
            self.expr(c, None, e.value)
        elif isinstance(e, ast.JoinedStr):
            head("JoinedStr")
            self.fstring_parts(c, e.values)
        else:
            raise ValueError(f"unsupported expression {type(e).__name__}")


def main(path):
    with open(path, encoding="utf-8") as f:
        source = f.read()
    dumper = Dumper(source)
    dumper.line(0, None, "Module")
    dumper.stmts(1, None, ast.parse(source).body)
    print("\n".join(dumper.out))


if __name__ == "__main__":
    main(sys.argv[1])
