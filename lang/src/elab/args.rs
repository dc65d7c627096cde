//! Call arguments and their binding: [`CallArgs`] as written at a call, [`bind`] (one binder for every builtin,
//! lang's and the plug-ins', against a signature written as text: `"pointer, mask?, other?, *, cache_modifier?"`),
//! the [`Bound`] arguments a builtin's handler reads, and the readers that check one argument's kind
//! (`const_int`, `tensor_arg`, `shape_arg`...) with the messages that name it.

use crate::ast::Expr;
use crate::elab::names::closest;
use crate::elab::value::{Dtype, Tv, Value};
use crate::elab::{Elab, R};
use crate::span::Span;

/// One argument of a call: its value, and where it was written.
#[derive(Clone, Debug)]
pub struct Arg<'a> {
    pub value: Value<'a>,
    pub span: Span,
    pub expr: Option<&'a Expr>,
}

impl<'a> Arg<'a> {
    pub fn new(value: Value<'a>, span: Span) -> Arg<'a> {
        Arg { value, span, expr: None }
    }

    /// How to name this argument in a message: its source text if short, else `what`.
    pub fn name_or(&self, what: &str) -> String {
        match self.expr {
            Some(e) => {
                let text = e.to_string();
                if text.len() <= 40 { format!("`{text}`") } else { what.to_string() }
            }
            None => what.to_string(),
        }
    }
}

/// The arguments of a call, positional and by keyword.
#[derive(Clone, Debug, Default)]
pub struct CallArgs<'a> {
    pub pos: Vec<Arg<'a>>,
    pub kw: Vec<(String, Arg<'a>)>,
    /// The whole call.
    pub span: Span,
}

/// Arguments bound to a builtin's parameters.
pub struct Bound<'a> {
    pub fname: String,
    names: Vec<&'static str>,
    vals: Vec<Option<Arg<'a>>>,
    /// Extra positional arguments (`*args` parameters).
    pub rest: Vec<Arg<'a>>,
    pub span: Span,
}

impl<'a> Bound<'a> {
    fn index(&self, name: &str) -> usize {
        self.names.iter().position(|n| *n == name).unwrap_or_else(|| panic!("builtin has no parameter `{name}`"))
    }

    /// The argument for `name`, if given and not `None`.
    pub fn opt(&self, name: &str) -> Option<&Arg<'a>> {
        self.vals[self.index(name)].as_ref().filter(|a| !matches!(a.value, Value::None))
    }

    /// The argument for a required parameter.
    pub fn req(&self, name: &str) -> &Arg<'a> {
        self.vals[self.index(name)].as_ref().expect("required parameters are bound")
    }

    pub fn take(&mut self, name: &str) -> Option<Arg<'a>> {
        let i = self.index(name);
        self.vals[i].take().filter(|a| !matches!(a.value, Value::None))
    }
}

/// Binds `args` to the parameters in `sig`: `"pointer, mask?, other?, *, cache_modifier?, pred=True"` — names
/// separated by commas, `?` for optional, `=literal` for a default (`True`, `False`, `None`, an integer, a quoted
/// string: bound when the argument is left out), `*name` for a var-positional parameter, a bare `*` before
/// keyword-only ones.
pub fn bind<'a>(fname: &str, sig: &'static str, args: CallArgs<'a>) -> Result<Bound<'a>, (Span, String)> {
    let mut names = Vec::new();
    let mut required = Vec::new();
    let mut defaults: Vec<(usize, Value<'a>)> = Vec::new();
    let mut n_positional = usize::MAX;
    let mut var_pos = false;
    for p in sig.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        if p == "*" {
            n_positional = names.len();
        } else if let Some(rest) = p.strip_prefix('*') {
            let _ = rest;
            n_positional = names.len();
            var_pos = true;
        } else if let Some(n) = p.strip_suffix('?') {
            names.push(n);
            required.push(false);
        } else if let Some((n, d)) = p.split_once('=') {
            defaults.push((names.len(), default_literal(d.trim())));
            names.push(n.trim());
            required.push(false);
        } else {
            names.push(p);
            required.push(true);
        }
    }
    let n_positional = n_positional.min(names.len());
    let mut vals: Vec<Option<Arg<'a>>> = vec![None; names.len()];
    let mut rest = Vec::new();
    let n_pos_given = args.pos.len();
    for (i, a) in args.pos.into_iter().enumerate() {
        if i < n_positional {
            vals[i] = Some(a);
        } else if var_pos {
            rest.push(a);
        } else {
            return Err((
                a.span,
                format!("`{fname}` takes at most {n_positional} positional arguments, got {n_pos_given}"),
            ));
        }
    }
    for (k, a) in args.kw {
        match names.iter().position(|n| *n == k) {
            Some(i) if vals[i].is_some() => return Err((a.span, format!("`{fname}` got multiple values for `{k}`"))),
            Some(i) => vals[i] = Some(a),
            None => {
                let mut msg = format!("`{fname}` got an unexpected keyword argument `{k}`");
                if let Some(best) = closest(&k, names.iter().copied()) {
                    msg.push_str(&format!(" (did you mean `{best}`?)"));
                }
                return Err((a.span, msg));
            }
        }
    }
    for (i, n) in names.iter().enumerate() {
        if required[i] && vals[i].is_none() {
            return Err((args.span, format!("`{fname}` is missing the required argument `{n}`")));
        }
    }
    for (i, d) in defaults {
        if vals[i].is_none() {
            vals[i] = Some(Arg::new(d, args.span));
        }
    }
    Ok(Bound { fname: fname.to_string(), names, vals, rest, span: args.span })
}

/// The value of a default written in a signature.
fn default_literal<'a>(d: &str) -> Value<'a> {
    match d {
        "True" => Value::Bool(true),
        "False" => Value::Bool(false),
        "None" => Value::None,
        _ if d.starts_with(['\'', '"']) => Value::str(&d[1..d.len() - 1]),
        _ => Value::Int(d.parse().unwrap_or_else(|_| panic!("signature default `{d}` is not a literal"))),
    }
}

impl<'a> Elab<'a> {
    /// [`bind`], with errors as diagnostics.
    pub fn bind(&self, fname: &str, sig: &'static str, args: CallArgs<'a>) -> R<Bound<'a>> {
        bind(fname, sig, args).map_err(|(span, msg)| self.err(span, msg))
    }

    /// A compile-time integer argument.
    pub fn const_int(&self, a: &Arg<'a>, fname: &str, what: &str) -> R<i128> {
        match &a.value {
            Value::Int(i) => Ok(*i),
            Value::Bool(b) => Ok(*b as i128),
            Value::Tensor(t) => Err(self.not_constexpr(a, fname, what, &t.ty.to_string())),
            other => {
                Err(self.err(a.span, format!("`{what}` of `{fname}` must be an integer, got {}", other.describe())))
            }
        }
    }

    /// The error for a runtime value where a compile-time one is needed.
    pub fn not_constexpr(&self, a: &Arg<'a>, fname: &str, what: &str, ty: &str) -> Box<crate::elab::ElabError> {
        let mut e = self.err(
            a.span,
            format!("`{what}` of `{fname}` must be a compile-time constant (tl.constexpr), but {} is a runtime value of type {ty}", a.name_or("it")),
        );
        if let Some(n) = a.expr.and_then(|e| e.as_name()) {
            e.diag = e.diag.with_hint(format!("if `{n}` is a kernel parameter, declare it as `{n}: tl.constexpr`"));
        }
        e
    }

    /// A compile-time bool argument.
    pub fn const_bool(&self, a: &Arg<'a>, fname: &str, what: &str) -> R<bool> {
        match &a.value {
            Value::Bool(b) => Ok(*b),
            Value::Int(i) => Ok(*i != 0),
            Value::Tensor(t) => Err(self.not_constexpr(a, fname, what, &t.ty.to_string())),
            other => Err(self.err(a.span, format!("`{what}` of `{fname}` must be a bool, got {}", other.describe()))),
        }
    }

    /// A compile-time string argument.
    pub fn const_str(&self, a: &Arg<'a>, fname: &str, what: &str) -> R<String> {
        match &a.value {
            Value::Str(s) => Ok(s.to_string()),
            other => Err(self.err(a.span, format!("`{what}` of `{fname}` must be a string, got {}", other.describe()))),
        }
    }

    /// A dtype argument.
    pub fn dtype_arg(&self, a: &Arg<'a>, fname: &str, what: &str) -> R<Dtype> {
        match &a.value {
            Value::Dtype(d) => Ok(*d),
            other => Err(self.err(a.span, format!("`{what}` of `{fname}` must be a dtype, got {}", other.describe()))),
        }
    }

    /// A tensor argument (Python numbers become scalars of their default type; descriptors are not tensors).
    pub fn tensor_arg(&mut self, a: &Arg<'a>, fname: &str, what: &str) -> R<Tv> {
        match &a.value {
            Value::Tensor(t) if matches!(t.ty, tessel_tile::Type::TensorDesc { .. }) => {
                Err(self.err(a.span, format!("`{what}` of `{fname}` must be a tensor, got the descriptor {}", t.ty)))
            }
            Value::Tensor(t)
                if matches!(
                    t.ty,
                    tessel_tile::Type::MemDesc { .. } | tessel_tile::Type::Token | tessel_tile::Type::ClcResult
                ) =>
            {
                Err(self.err_hint(
                    a.span,
                    format!("`{what}` of `{fname}` must be a tensor, got {}", t.ty),
                    "a shared-memory descriptor holds a tensor: read it with `.load(layout)`",
                ))
            }
            Value::Tensor(t) => Ok(t.clone()),
            v if v.is_number() => self.to_tensor(v, a.span),
            other => Err(self.err(a.span, format!("`{what}` of `{fname}` must be a tensor, got {}", other.describe()))),
        }
    }

    /// A list of compile-time integers (a shape, axes), from a tuple/list or varargs.
    pub fn int_list(&self, a: &Arg<'a>, fname: &str, what: &str) -> R<Vec<i128>> {
        let items = match &a.value {
            Value::Tuple(_) | Value::List(_) => a.value.items().unwrap(),
            Value::Int(_) | Value::Bool(_) => vec![a.value.clone()],
            Value::Tensor(t) => return Err(self.not_constexpr(a, fname, what, &t.ty.to_string())),
            other => {
                return Err(self.err(
                    a.span,
                    format!("`{what}` of `{fname}` must be a list of integers, got {}", other.describe()),
                ));
            }
        };
        let exprs = match a.expr.map(|e| &e.kind) {
            Some(crate::ast::ExprKind::Tuple(es) | crate::ast::ExprKind::List(es)) if es.len() == items.len() => {
                es.iter().map(Some).collect()
            }
            _ => vec![None; items.len()],
        };
        items
            .iter()
            .zip(exprs)
            .map(|(v, e)| {
                let arg = Arg { value: v.clone(), span: e.map_or(a.span, |e: &Expr| e.span), expr: e };
                self.const_int(&arg, fname, what)
            })
            .collect()
    }

    /// A shape: compile-time integers, each a power of two.
    pub fn shape_arg(&self, a: &Arg<'a>, fname: &str) -> R<Vec<u32>> {
        let dims = self.int_list(a, fname, "shape")?;
        let exprs: Vec<Option<&Expr>> = match a.expr.map(|e| &e.kind) {
            Some(crate::ast::ExprKind::Tuple(es) | crate::ast::ExprKind::List(es)) if es.len() == dims.len() => {
                es.iter().map(Some).collect()
            }
            _ => vec![None; dims.len()],
        };
        let mut out = Vec::new();
        for (i, (&d, e)) in dims.iter().zip(exprs).enumerate() {
            let span = e.map_or(a.span, |e| e.span);
            let label = match e {
                Some(e) if e.as_name().is_some() => e.to_string(),
                _ => format!("shape[{i}]"),
            };
            self.check_pow2(d, &label, span)?;
            out.push(d as u32);
        }
        Ok(out)
    }

    /// Tile dimensions must be powers of two (and small enough to index with 32 bits).
    pub fn check_pow2(&self, d: i128, label: &str, span: Span) -> R<()> {
        if d > 0 && (d & (d - 1)) == 0 && d > crate::elab::MAX_TILE_ELEMENTS as i128 {
            return Err(self.err(
                span,
                format!("{label} is {d}, more than the {} elements a tile may have", crate::elab::MAX_TILE_ELEMENTS),
            ));
        }
        if d <= 0 || (d & (d - 1)) != 0 {
            let mut e = self.err(span, format!("{label} must be a power of two, got {d}"));
            if d > 0 {
                let next = (d as u128).next_power_of_two();
                e.diag = e.diag.with_hint(format!(
                    "tile sizes must be powers of two (at most 2^20 elements); use {next} and mask the extra elements"
                ));
            }
            return Err(e);
        }
        Ok(())
    }
}
