//! tessel-codegen owns the way to the hardware: per-thread lowering of the layout IR, shared-memory allocation,
//! barrier insertion, PTX emission per target (sm_80, sm_90a, sm_100a) and the CUDA runtime (module load, launch,
//! TMA maps, kernel cache). Nothing is implemented here yet.
