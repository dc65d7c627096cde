//! File tests of scheduling (`tests/filetests/*.tir`; see `tessel_tile::filetest`): the tile crate's stages plus
//! `schedule`, whose output is the printed CoarseSchedule of every loop, and `pipeline`, which expands the loops
//! the pipeliner takes (the output is the function).

use std::path::Path;

use tessel_tile::filetest::{Stage, StageOutput, run_dir, tile_stages};
use tessel_tile::ir::Func;

#[test]
fn filetests() {
    let stages = tile_stages();
    let schedule = |f: &mut Func| Ok(StageOutput::Text(tessel_sched::print(f, &tessel_sched::schedule(f))));
    let pipeline = |f: &mut Func| tessel_sched::pipeline(f).map(|_| StageOutput::Func);
    let mut table: Vec<Stage> = stages.iter().map(|(n, f)| (*n, f as &dyn Fn(&mut Func) -> _)).collect();
    table.push(("schedule", &schedule));
    table.push(("pipeline", &pipeline));
    run_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/filetests"), &table);
}
