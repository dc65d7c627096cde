//! Diagnostics: one error (or warning) with a primary span, optional secondary labels, a hint and notes, rendered by ariadne.

use std::fmt;
use std::sync::Arc;

use ariadne::{Config, IndexType, Label, Report, ReportKind, Source};

use crate::span::Span;

/// An error in a source file.
///
/// `span` is the offending code and `label` says what is wrong with it there; `secondary` points at related code
/// (say, the bracket that was never closed). `hint` is a suggestion; `notes` carry extra facts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub message: String,
    pub span: Span,
    pub label: String,
    pub secondary: Vec<(Span, String)>,
    pub hint: Option<String>,
    pub notes: Vec<String>,
    /// The file the spans point into (its name and text) when it is not the one being compiled: a sibling module
    /// the kernel's file imports. `render` shows that file instead of the one it is given.
    pub file: Option<(String, Arc<str>)>,
    /// An error stops the compile; a warning reports what the compiler did about questionable code and goes on.
    pub severity: Severity,
}

/// Whether a [`Diagnostic`] stops the compile.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Severity {
    #[default]
    Error,
    Warning,
}

impl Diagnostic {
    /// An error at `span` whose label repeats the message.
    pub fn error(message: impl Into<String>, span: Span) -> Self {
        let message = message.into();
        Diagnostic {
            label: message.clone(),
            message,
            span,
            secondary: Vec::new(),
            hint: None,
            notes: Vec::new(),
            file: None,
            severity: Severity::Error,
        }
    }

    /// A warning at `span` whose label repeats the message.
    pub fn warning(message: impl Into<String>, span: Span) -> Self {
        Diagnostic { severity: Severity::Warning, ..Diagnostic::error(message, span) }
    }

    pub fn with_label(mut self, label: impl Into<String>) -> Self {
        self.label = label.into();
        self
    }

    pub fn with_secondary(mut self, span: Span, label: impl Into<String>) -> Self {
        self.secondary.push((span, label.into()));
        self
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// The same error, located in another file (see [`Diagnostic::file`]); a located one keeps its file.
    pub fn in_file(mut self, file: &str, source: Arc<str>) -> Self {
        self.file.get_or_insert_with(|| (file.to_string(), source));
        self
    }

    pub fn with_note(mut self, note: impl Into<String>) -> Self {
        self.notes.push(note.into());
        self
    }

    /// Renders the report as plain text (no ANSI colours), as shown in tests and logs.
    pub fn render(&self, file_name: &str, source: &str) -> String {
        self.render_with(file_name, source, false)
    }

    /// Renders the report, with ANSI colours if `color` (for terminals).
    pub fn render_with(&self, file_name: &str, source: &str, color: bool) -> String {
        let (file_name, source) = match &self.file {
            Some((f, s)) => (f.as_str(), s.as_ref()),
            None => (file_name, source),
        };
        // Inside the source and on char boundaries: ariadne slices the source at these offsets, and a span that
        // splits a multi-byte character would panic there.
        let floor = |mut i: usize| {
            i = i.min(source.len());
            while !source.is_char_boundary(i) {
                i -= 1;
            }
            i
        };
        let clamp = |span: Span| {
            let end = floor(span.end);
            floor(span.start).min(end)..end
        };
        let config = Config::default().with_color(color).with_index_type(IndexType::Byte);
        let kind = match self.severity {
            Severity::Error => ReportKind::Error,
            Severity::Warning => ReportKind::Warning,
        };
        let mut report = Report::build(kind, (file_name, clamp(self.span)))
            .with_config(config)
            .with_message(&self.message)
            .with_label(Label::new((file_name, clamp(self.span))).with_message(&self.label).with_order(0));
        for (i, (span, label)) in self.secondary.iter().enumerate() {
            report =
                report.with_label(Label::new((file_name, clamp(*span))).with_message(label).with_order(1 + i as i32));
        }
        if let Some(hint) = &self.hint {
            report = report.with_help(hint);
        }
        for note in &self.notes {
            report = report.with_note(note);
        }
        let mut out = Vec::new();
        report
            .finish()
            .write((file_name, Source::from(source)), &mut out)
            .expect("writing a report into memory cannot fail");
        String::from_utf8_lossy(&out).into_owned()
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "error at {}: {}", self.span, self.message)
    }
}

impl std::error::Error for Diagnostic {}
