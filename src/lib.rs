//! tessel: a GPU kernel compiler with two tiers over one compiler: Triton-style *auto mode*, where the compiler
//! picks layouts, shared memory and tensor-core instructions, and Gluon-style *gluon mode*, where the kernel
//! author writes them and the compiler checks and lowers. Both lower into one layout IR in which every tensor
//! carries an F2 linear layout.
//!
//! This facade crate owns the compile pipeline ([`pipeline`]: the one order of the stages, and the place where
//! gluon's `gl.*` builtins are handed to lang's elaborator), the public API (re-exports of the workspace crates
//! under short names) and the `tessel` command-line tool ([`cli`]): argument parsing, the rendering of errors
//! against the user's input, and the output formats. The work itself lives in the crates it re-exports; the
//! facade adds no pass of its own.

pub use tessel_codegen as codegen;
pub use tessel_gluon as gluon;
pub use tessel_interp as interp;
pub use tessel_lang as lang;
pub use tessel_layouts as layouts;
pub use tessel_math as math;
pub use tessel_runtime as runtime;
pub use tessel_tile as tile;

mod api;
pub mod cli;
mod error;
pub mod npy;
pub mod pipeline;

pub use api::{Jit, compile, interpret, jit, load, target_of};
pub use error::{Error, Internal};
pub use pipeline::{CacheUse, KernelSource, Stage, Timings};
pub use tessel_sched as sched;
