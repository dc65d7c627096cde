//! Shared memory as the code generator sees it: where each buffer sits ([`alloc`]) and which barriers and
//! proxy fences its accesses need ([`hazards`]).

pub mod alloc;
pub mod hazards;

pub use alloc::{Allocation, Buffer};
pub use hazards::{Access, Hazards, Span, Sync};
