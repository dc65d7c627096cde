//! tessel-sched owns loop scheduling: the latency model, the CoarseSchedule (stage, cluster per op), loop
//! expansion into prologue/steady state/epilogue with multi-buffering and mbarrier phases, and the lowering of
//! warp-specialized partitions. Nothing is implemented here yet.
