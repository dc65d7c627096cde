//! `tessel bench --bytes EXPR / --flops EXPR`: Python arithmetic over the kernel's arguments, parsed by the
//! kernel language's own expression parser and evaluated in f64. Names are the scalar arguments (their values),
//! the buffer arguments (their sizes in bytes) and the numeric constexprs; the operators are `+ - * / // % **`
//! and unary minus, with `min`, `max` and `cdiv` (Triton's ceiling division). Mistakes are reported against
//! the formula with a caret, as kernel errors are against the source.

// `Diagnostic` is the kernel language's error type, large by design (see tessel-lang).
#![allow(clippy::result_large_err)]

use tessel_lang::Diagnostic;
use tessel_lang::ast::{BinOpKind, Constant, Expr, ExprKind, UnaryOpKind};

use super::CliError;

/// The value of `text`, or an error rendered against it under the name `label` (`--bytes`).
pub(super) fn eval(label: &str, text: &str, names: &[(String, f64)]) -> Result<f64, CliError> {
    let render = |d: Diagnostic| CliError::Diagnostic(d.render(label, text));
    let expr = tessel_lang::parse_expr(text).map_err(render)?;
    let v = value(&expr, names).map_err(render)?;
    if !v.is_finite() || v < 0.0 {
        return Err(CliError::Usage(format!("{label} `{text}` is {v}: expected a finite count")));
    }
    Ok(v)
}

fn value(e: &Expr, names: &[(String, f64)]) -> Result<f64, Diagnostic> {
    let err = |m: String| Err(Diagnostic::error(m, e.span));
    Ok(match &e.kind {
        ExprKind::Constant(Constant::Int(i)) => *i as f64,
        ExprKind::Constant(Constant::Float(x)) => *x,
        ExprKind::Name(n) => match names.iter().find(|(k, _)| k == n) {
            Some((_, v)) => *v,
            None => {
                let known: Vec<&str> = names.iter().map(|(k, _)| k.as_str()).collect();
                return err(format!("`{n}` is not an argument of the kernel; known: {}", known.join(", ")));
            }
        },
        ExprKind::UnaryOp { op: UnaryOpKind::USub, operand } => -value(operand, names)?,
        ExprKind::UnaryOp { op: UnaryOpKind::UAdd, operand } => value(operand, names)?,
        ExprKind::BinOp { left, op, right } => {
            let (a, b) = (value(left, names)?, value(right, names)?);
            match op {
                BinOpKind::Add => a + b,
                BinOpKind::Sub => a - b,
                BinOpKind::Mul => a * b,
                BinOpKind::Div if b != 0.0 => a / b,
                BinOpKind::FloorDiv if b != 0.0 => (a / b).floor(),
                BinOpKind::Mod if b != 0.0 => a - b * (a / b).floor(),
                BinOpKind::Pow => a.powf(b),
                BinOpKind::Div | BinOpKind::FloorDiv | BinOpKind::Mod => return err("division by zero".to_string()),
                other => return err(format!("`{other:?}` is not allowed in a formula (use + - * / // % **)")),
            }
        }
        ExprKind::Call { func, args, keywords } if keywords.is_empty() => {
            let vals = args.iter().map(|a| value(a, names)).collect::<Result<Vec<_>, _>>()?;
            match (&func.kind, vals.as_slice()) {
                (ExprKind::Name(f), [a, b]) if f == "cdiv" && *b != 0.0 => (a / b).ceil(),
                (ExprKind::Name(f), [_, _, ..]) if f == "min" => vals.iter().copied().fold(f64::INFINITY, f64::min),
                (ExprKind::Name(f), [_, _, ..]) if f == "max" => vals.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                _ => return err("the functions are min(a, b, ...), max(a, b, ...) and cdiv(a, b)".to_string()),
            }
        }
        _ => return err("a formula is arithmetic over the kernel's arguments, e.g. 2 * M * N * K".to_string()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> Vec<(String, f64)> {
        vec![("M".into(), 100.0), ("N".into(), 48.0), ("x".into(), 4096.0)]
    }

    fn ok(text: &str) -> f64 {
        eval("--bytes", text, &names()).unwrap_or_else(|e| panic!("{text}: {e:?}"))
    }

    fn fails(text: &str) -> String {
        match eval("--bytes", text, &names()) {
            Err(CliError::Diagnostic(s) | CliError::Usage(s)) => s,
            other => panic!("{text}: expected an error, got {other:?}"),
        }
    }

    #[test]
    fn arithmetic_over_arguments() {
        assert_eq!(ok("2 * 2 * M * N"), 19200.0);
        assert_eq!(ok("x + 2 * (M - N)"), 4200.0);
        assert_eq!(ok("M // 3 + M % 3 + 2 ** 10"), 33.0 + 1.0 + 1024.0);
        assert_eq!(ok("cdiv(M, 16) * 16"), 112.0);
        assert_eq!(ok("max(M, N, 7) - min(M, N)"), 52.0);
        assert_eq!(ok("1.5e3 / -(-3)"), 500.0);
    }

    #[test]
    fn mistakes_point_at_the_formula() {
        let e = fails("2 * M * K");
        assert!(e.contains("`K` is not an argument") && e.contains("known: M, N, x") && e.contains("--bytes"), "{e}");
        assert!(fails("M / (N - 48)").contains("division by zero"));
        assert!(fails("M << 2").contains("not allowed"));
        assert!(fails("M * ").contains("--bytes"));
        assert!(fails("sqrt(M)").contains("cdiv(a, b)"));
        assert!(fails("N - M").contains("expected a finite count"));
    }
}
