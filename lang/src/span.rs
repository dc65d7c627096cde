//! Byte ranges into the source text.

use std::fmt;
use std::ops::Range;

/// A half-open byte range `start..end` into the source of one module.
///
/// Every token, AST node and diagnostic carries one. Offsets are bytes (not chars), which is also how the
/// diagnostics are rendered.
#[derive(Copy, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Span {
    pub start: usize,
    pub end: usize,
}

impl Span {
    pub const fn new(start: usize, end: usize) -> Self {
        Span { start, end }
    }

    /// An empty span at `offset`.
    pub const fn point(offset: usize) -> Self {
        Span { start: offset, end: offset }
    }

    /// The smallest span covering both `self` and `other`.
    pub fn to(self, other: Span) -> Span {
        Span { start: self.start.min(other.start), end: self.end.max(other.end) }
    }

    pub fn len(self) -> usize {
        self.end - self.start
    }

    pub fn is_empty(self) -> bool {
        self.start == self.end
    }

    pub fn range(self) -> Range<usize> {
        self.start..self.end
    }

    /// The text this span covers in `source`.
    pub fn text(self, source: &str) -> &str {
        &source[self.start..self.end]
    }
}

impl From<Range<usize>> for Span {
    fn from(range: Range<usize>) -> Self {
        Span { start: range.start, end: range.end }
    }
}

impl fmt::Debug for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}..{}", self.start, self.end)
    }
}

impl fmt::Display for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}..{}", self.start, self.end)
    }
}

/// Lets chumsky produce our spans directly (`e.span()` in the parser is an `ast::Span`).
impl chumsky::span::Span for Span {
    type Context = ();
    type Offset = usize;

    fn new((): (), range: Range<usize>) -> Self {
        Span::from(range)
    }

    fn context(&self) {}

    fn start(&self) -> usize {
        self.start
    }

    fn end(&self) -> usize {
        self.end
    }
}
