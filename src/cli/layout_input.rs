//! What the `tessel layout` commands read from the command line: a layout in Gluon spelling, a tensor shape, an
//! element size; and the layout built from them, with mistakes reported as usage errors.

use std::fmt;
use std::str::FromStr;

use super::CliError;
use crate::layouts::expr::{ParsedLayout, layout_kind, parse_layout_expr};
use crate::layouts::{AnyLayout, LinearLayout};

/// `--bits`: an element size of 8, 16, 32 or 64 bits.
pub(super) fn parse_bits(s: &str) -> Result<u32, String> {
    match s.trim().parse::<u32>() {
        Ok(b @ (8 | 16 | 32 | 64)) => Ok(b),
        _ => Err(format!("`{s}` is not an element size; use 8, 16, 32 or 64")),
    }
}

/// A tensor shape: power-of-two sizes, written `64x128` (also `64,128` or `[64, 128]`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shape(pub Vec<u32>);

impl FromStr for Shape {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let inner = s.trim().trim_start_matches(['[', '(']).trim_end_matches([']', ')']);
        let dims = inner
            .split(['x', 'X', ',', '×'])
            .map(|part| {
                let part = part.trim();
                match part.parse::<u32>() {
                    Ok(n) if n.is_power_of_two() => Ok(n),
                    Ok(n) => Err(format!("{n} is not a power of two (every tensor dim must be)")),
                    Err(_) if part.parse::<u64>().is_ok() => Err(format!("{part} is too large (at most 2^31)")),
                    Err(_) => {
                        Err(format!("`{part}` is not a size; write the shape as sizes separated by x, e.g. 64x128"))
                    }
                }
            })
            .collect::<Result<Vec<u32>, String>>()?;
        Ok(Shape(dims))
    }
}

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.iter().map(u32::to_string).collect::<Vec<_>>().join("x"))
    }
}

pub(super) fn parse(label: &'static str, src: &str) -> Result<ParsedLayout, CliError> {
    parse_layout_expr(src).map_err(|err| CliError::Expr { label, src: src.to_string(), err })
}

/// `--shape` if given, else the shape the expressions fix (they must agree).
pub(super) fn resolve_shape(given: Option<Shape>, parsed: &[&ParsedLayout]) -> Result<Shape, CliError> {
    if let Some(s) = given {
        return Ok(s);
    }
    let mut implied = parsed.iter().filter_map(|p| p.shape.as_ref());
    match implied.next() {
        Some(first) if implied.all(|s| s == first) => Ok(Shape(first.clone())),
        Some(_) => Err(CliError::Usage("the layouts fix different shapes; give one with --shape".into())),
        None => Err(CliError::Usage(format!(
            "--shape is required: {} does not fix the tensor shape (e.g. --shape 64x128)",
            layout_kind(&parsed[0].layout)
        ))),
    }
}

pub(super) fn to_linear(layout: &AnyLayout, shape: &Shape) -> Result<LinearLayout, CliError> {
    layout.to_linear(&shape.0).map_err(|e| CliError::Usage(format!("{e}\n  (while building {layout} on {shape})")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_parse_in_every_spelling() {
        assert_eq!("64x128".parse(), Ok(Shape(vec![64, 128])));
        assert_eq!("[64, 128]".parse(), Ok(Shape(vec![64, 128])));
        assert_eq!("2,4,8".parse(), Ok(Shape(vec![2, 4, 8])));
        assert_eq!("128".parse(), Ok(Shape(vec![128])));
        assert_eq!("64x100".parse::<Shape>(), Err("100 is not a power of two (every tensor dim must be)".into()));
        assert!("64xx8".parse::<Shape>().unwrap_err().contains("`` is not a size"));
        assert_eq!("4294967296".parse::<Shape>(), Err("4294967296 is too large (at most 2^31)".into()));
        assert_eq!(Shape(vec![64, 128]).to_string(), "64x128");
    }
}
