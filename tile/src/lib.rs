//! tessel-tile owns the IR shared by both tiers: arena SSA values and ops with structured regions ([`ir`]), the
//! typed target and launch configuration every function carries ([`target`]) and its typed facts ([`FuncAttrs`]:
//! gluon mode, a fused loop nest, fp fusion, arguments divisible by 16), scalar/pointer/tensor/shared-memory types
//! with an optional layout slot ([`types`]), the op set ([`ops`]) and the one table of what each op is
//! ([`op_facts`]: name, effects, layout kind, shared memory, views, terminators), the textual printer and parser
//! ([`print`], [`parse`]), the verifier ([`verify`]), the generic passes ([`passes`]: folding, CSE, LICM, DCE,
//! loop transformations), auto-mode layout assignment ([`layout`]: axis analysis, coalescing, tensor-core
//! selection and operand staging, propagation, removal of redundant conversions), the element semantics of the ops
//! ([`eval`]: what one element computes, the number formats; folding, the interpreter and codegen's constants
//! share them). The reference interpreter is its own crate, `tessel-interp`; the math routines the ops' semantics
//! run are `tessel-math`'s.
//!
//! Failures are data, each type beside what reports it: [`parse::ParseError`] (at a line and column),
//! [`verify::VerifyError`] (the op, its location and the [`verify::Check`] that failed), [`layout::AssignError`],
//! [`target::ConfigError`] (the launch option out of range), [`tma::TmaError`], [`eval::arith::EvalError`],
//! [`OpTextError`], [`passes::NotFused`] (why a loop nest runs as written).

pub mod cluster;
pub mod cluster_part;
pub mod eval;
pub mod filetest;
pub mod ir;
pub mod layout;
pub mod mma_scaled;
pub mod op_facts;
pub mod ops;
mod ops_text;
pub mod parse;
pub mod passes;
pub mod print;
pub mod reduce;
pub mod smem_desc;
pub mod target;
pub mod tcgen05_copy;
pub mod tcgen05_kind;
pub mod testing;
pub mod tma;
pub mod tma_gather;
pub mod tma_im2col;
pub mod tmem;
pub mod tmem_types;
pub mod types;
pub mod verify;
mod verify_checks;
pub mod verify_clc;
mod verify_ext;
mod verify_smem;
pub mod verify_tmem;

pub use ir::{Func, FuncAttrs, Loc, Module, OpId, RegionId, ValueId};
pub use ops::Op;
pub use ops_text::OpTextError;
pub use target::{KernelConfig, MmaKind, Target};
pub use types::{AddrSpace, Elem, Layout, ScalarType, Type};
