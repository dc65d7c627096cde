//! File tests of scheduling (`tests/filetests/*.tir`; see `tessel_tile::filetest`): the tile crate's stages plus
//! `schedule`, whose output is the printed CoarseSchedule of every loop, and `pipeline`, which expands the loops
//! the pipeliner takes (the output is the function), and `tma-copies`, the descriptor accesses left after it as
//! TMA copies (stores in loops waited for lazily, as the compile pipeline first lowers them).

use std::path::Path;

use tessel_sched::tma_copies::{StoreWaits, lower_tma_copies};
use tessel_tile::filetest::{Stage, StageOutput, run_dir, tile_stages};
use tessel_tile::ir::Func;

#[test]
fn filetests() {
    let stages = tile_stages();
    let schedule = |f: &mut Func| Ok(StageOutput::Text(tessel_sched::print(f, &tessel_sched::schedule(f))));
    let pipeline = |f: &mut Func| tessel_sched::pipeline(f).map(|_| StageOutput::Func).map_err(|e| e.into());
    let tma_copies =
        |f: &mut Func| lower_tma_copies(f, StoreWaits::Deferred).map(|_| StageOutput::Func).map_err(|e| e.into());
    let mut table: Vec<Stage> = stages.iter().map(|(n, f)| (*n, f as &dyn Fn(&mut Func) -> _)).collect();
    table.push(("schedule", &schedule));
    table.push(("pipeline", &pipeline));
    table.push(("tma-copies", &tma_copies));
    run_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/filetests"), &table);
}
