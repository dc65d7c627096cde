//! tessel-gluon owns the gluon builtins: layout constructors, shared and tensor memory, mbarriers, TMA,
//! wgmma/tcgen05 and warp_specialize, their checks against the layouts the author wrote, and their lowering into
//! the layout IR. Nothing is implemented here yet.
