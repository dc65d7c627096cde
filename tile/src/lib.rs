//! tessel-tile owns the IR shared by both tiers: arena SSA values and ops with structured regions, tensor types
//! with an optional layout, the verifier, the textual printer and parser, generic passes (canonicalize, CSE,
//! DCE, LICM), the auto-mode layout-assignment passes, and the reference interpreter. Nothing is implemented
//! here yet.
