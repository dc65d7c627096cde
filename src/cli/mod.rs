//! The `tessel` command line: argument parsing (clap), dispatch, and error rendering.
//!
//! [`run`] takes the arguments and the two output streams and returns the exit status: 0 on success, 2 when the
//! input is wrong (bad arguments, an expression that does not parse, a layout that does not fit the shape), 1 when
//! the tool itself fails (a file that cannot be written), 130 when Ctrl-C stops an interpreter run. It never panics
//! on user input, and a closed pipe (`tessel layout ... --table | head`) ends it quietly.

use std::ffi::OsString;
use std::io::{self, Write};

use clap::{Parser, Subcommand};

use crate::layouts::expr::ExprError;

mod args;
mod buffers;
mod formula;
mod interrupt;
mod kernel;
mod layout;
mod layout_check;
mod layout_input;
mod run;

pub use layout::LayoutArgs;
pub use layout_input::Shape;

const ABOUT: &str = "tessel: a GPU kernel compiler for Triton-style and Gluon-style kernels";

const LONG_ABOUT: &str = "\
tessel: a GPU kernel compiler for Triton-style and Gluon-style kernels.

Kernels are written in Python syntax, in auto mode (@triton.jit: the compiler picks layouts, shared
memory and tensor-core instructions) or in gluon mode (@gluon.jit: the author writes them). Both lower
into one IR in which every tensor carries an F2 linear layout. `run` compiles to PTX and launches on the GPU when
one is present and the kernel's ops are supported, and uses the reference interpreter otherwise. Kernels may call
the @jit functions and use the constants of the modules their file imports: the kernel commands find them, as
Python does, in the file's directory and under each `--path DIR`.";

const AFTER_HELP: &str = "Run `tessel <COMMAND> --help` for examples.";

#[derive(Debug, Parser)]
#[command(name = "tessel", version, about = ABOUT, long_about = LONG_ABOUT, propagate_version = true)]
#[command(help_expected = true, after_help = AFTER_HELP)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// List the kernels of a Python file and their parameters
    Check(kernel::CheckArgs),
    /// Compile one specialization of a kernel and print a stage (--emit ast|tile|layout|ptx)
    Compile(kernel::CompileArgs),
    /// Run a kernel on generated or .npy inputs (on the GPU when there is one) and print or save its buffers
    Run(run::RunArgs),
    /// Time a kernel on the GPU (CUDA events, median) and report GB/s or TFLOP/s from a formula
    Bench(run::BenchArgs),
    /// Show a layout written in Gluon spelling on a tensor shape (bases, table, SVG); plan conversions
    Layout(LayoutArgs),
}

/// What went wrong, and how it is shown.
#[derive(Debug)]
pub enum CliError {
    /// The input is wrong; exit status 2.
    Usage(String),
    /// An expression did not parse: shown with a caret under the span. `label` names the argument.
    Expr { label: &'static str, src: String, err: ExprError },
    /// The tool failed (I/O); exit status 1.
    Failed(String),
    /// A diagnostic already rendered against the user's source; exit status 2.
    Diagnostic(String),
    /// Ctrl-C stopped an interpreter run; exit status 130 (128 + SIGINT, as a shell reports it).
    Interrupted(String),
}

impl CliError {
    fn status(&self) -> u8 {
        match self {
            CliError::Usage(_) | CliError::Expr { .. } | CliError::Diagnostic(_) => 2,
            CliError::Failed(_) => 1,
            CliError::Interrupted(_) => 130,
        }
    }

    fn render(&self) -> String {
        match self {
            CliError::Usage(m) | CliError::Failed(m) | CliError::Interrupted(m) => format!("error: {m}\n"),
            CliError::Diagnostic(text) => text.clone(),
            CliError::Expr { label, src, err } => format!("error: {}\n{}", err.message, caret(label, src, err)),
        }
    }
}

/// The line of `src` that holds the error, with `^` under its span:
///
/// ```text
///  --> EXPR:1:1
///   |
/// 1 | BlokedLayout([1,4],[8,4],[4,1],[1,0])
///   | ^^^^^^^^^^^^
/// ```
pub fn caret(label: &str, src: &str, err: &ExprError) -> String {
    let start = floor_char_boundary(src, err.span.start.min(src.len()));
    let end = floor_char_boundary(src, err.span.end.clamp(start, src.len()));
    let line_start = src[..start].rfind('\n').map_or(0, |i| i + 1);
    let line_end = src[start..].find('\n').map_or(src.len(), |i| start + i);
    let line_no = src[..start].matches('\n').count() + 1;
    let line = &src[line_start..line_end];
    let col = src[line_start..start].chars().count();
    let width = src[start..end.min(line_end)].chars().count().max(1);
    let gutter = " ".repeat(line_no.to_string().len());
    format!(
        "{gutter}--> {label}:{line_no}:{}\n{gutter} |\n{line_no} | {}\n{gutter} | {}{}\n",
        col + 1,
        line.replace('\t', " "),
        " ".repeat(col),
        "^".repeat(width)
    )
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// Runs the command line `args` (the program name first), writing results to `out` and errors to `err`;
/// returns the exit status.
pub fn run<I, T>(args: I, out: &mut dyn Write, err: &mut dyn Write) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            // --help and --version come here too; they go to stdout and succeed.
            let text = e.render().to_string();
            if e.use_stderr() {
                let written = err.write_all(text.as_bytes());
                return finish(written, 2, err);
            }
            return finish(out.write_all(text.as_bytes()), 0, err);
        }
    };
    let result = match cli.command {
        Command::Check(args) => kernel::check(args, out),
        Command::Compile(args) => kernel::compile(args, out, err),
        Command::Run(args) => run::run(args, out, err),
        Command::Bench(args) => run::bench(args, out, err),
        Command::Layout(args) => layout::run(args, out),
    };
    match result {
        Ok(()) => finish(out.flush(), 0, err),
        Err(Failure::Cli(e)) => finish(err.write_all(e.render().as_bytes()), e.status(), err),
        // A closed pipe ends the output early but is not a failure; any other write error is.
        Err(Failure::Io(e)) => finish(Err(e), 0, err),
    }
}

/// A command fails with a message for the user, or because writing its output failed.
#[derive(Debug)]
pub enum Failure {
    Cli(CliError),
    Io(io::Error),
}

impl From<io::Error> for Failure {
    fn from(e: io::Error) -> Self {
        Failure::Io(e)
    }
}

impl From<CliError> for Failure {
    fn from(e: CliError) -> Self {
        Failure::Cli(e)
    }
}

/// The exit status after the last write: a closed pipe is not an error; any other write error is.
fn finish(write: io::Result<()>, status: u8, err: &mut dyn Write) -> u8 {
    match write {
        Ok(()) => status,
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => status,
        Err(e) => {
            let _ = writeln!(err, "error: cannot write the output: {e}");
            1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_str(args: &[&str]) -> (u8, String, String) {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let argv = std::iter::once("tessel").chain(args.iter().copied());
        let status = run(argv, &mut out, &mut err);
        (status, String::from_utf8(out).expect("utf-8"), String::from_utf8(err).expect("utf-8"))
    }

    #[test]
    fn caret_points_at_the_span_on_its_line() {
        let e = ExprError { message: "m".into(), span: 3..7 };
        assert_eq!(caret("EXPR", "gl.Blok(1)", &e), " --> EXPR:1:4\n  |\n1 | gl.Blok(1)\n  |    ^^^^\n");
        let e = ExprError { message: "m".into(), span: 18..19 };
        assert_eq!(caret("SRC", "Blocked(\n  [1],\n  $)", &e), " --> SRC:3:3\n  |\n3 |   $)\n  |   ^\n");
        // An empty span at the end still gets one caret, after the last character.
        let e = ExprError { message: "m".into(), span: 4..4 };
        assert_eq!(caret("EXPR", "f(1,", &e), " --> EXPR:1:5\n  |\n1 | f(1,\n  |     ^\n");
        // Spans inside a multi-byte character do not split it.
        let e = ExprError { message: "m".into(), span: 1..2 };
        assert_eq!(caret("EXPR", "é", &e), " --> EXPR:1:1\n  |\n1 | é\n  | ^\n");
    }

    #[test]
    fn help_and_version_succeed_on_stdout() {
        let (status, out, err) = run_str(&["--help"]);
        assert_eq!((status, err.as_str()), (0, ""));
        assert!(out.contains("Usage: tessel <COMMAND>"), "{out}");
        assert!(out.contains("layout"), "{out}");
        let (status, out, _) = run_str(&["--version"]);
        assert_eq!(status, 0);
        assert!(out.starts_with("tessel "), "{out}");
    }

    #[test]
    fn usage_errors_exit_2_on_stderr() {
        let (status, out, err) = run_str(&["frobnicate"]);
        assert_eq!((status, out.as_str()), (2, ""));
        assert!(err.contains("unrecognized subcommand 'frobnicate'"), "{err}");
        let (status, _, err) = run_str(&[]);
        assert_eq!(status, 2);
        assert!(err.contains("Usage: tessel <COMMAND>"), "{err}");
    }

    #[test]
    fn a_broken_pipe_is_not_an_error() {
        let mut sink = Vec::new();
        assert_eq!(finish(Err(io::Error::from(io::ErrorKind::BrokenPipe)), 0, &mut sink), 0);
        assert!(sink.is_empty());
        assert_eq!(finish(Err(io::Error::other("disk full")), 0, &mut sink), 1);
        assert_eq!(String::from_utf8(sink).expect("utf-8"), "error: cannot write the output: disk full\n");
    }
}
