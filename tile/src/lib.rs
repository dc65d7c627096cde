//! tessel-tile owns the IR shared by both tiers: arena SSA values and ops with structured regions
//! ([`ir`]), scalar/pointer/tensor types with an optional layout slot ([`types`]), the op set ([`ops`]), the
//! textual printer and parser ([`print`], [`parse`]) and the verifier ([`verify`]). Still to come here: the
//! generic passes (canonicalize, CSE, DCE, LICM), the auto-mode layout-assignment passes, and the reference
//! interpreter.

pub mod interp;
pub mod ir;
pub mod ops;
pub mod parse;
pub mod passes;
pub mod print;
pub mod types;
pub mod verify;

pub use ir::{Func, Loc, Module, OpId, RegionId, ValueId};
pub use ops::Op;
pub use types::{AddrSpace, Elem, Layout, ScalarType, Type};
