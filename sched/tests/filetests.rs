//! File tests of scheduling (`tests/filetests/*.tir`; see `tessel_tile::filetest`): the tile crate's stages plus
//! `schedule`, whose output is the printed CoarseSchedule of every loop.

use std::path::Path;

use tessel_tile::filetest::{Stage, StageOutput, run_dir, tile_stages};
use tessel_tile::ir::Func;

#[test]
fn filetests() {
    let stages = tile_stages();
    let schedule = |f: &mut Func| Ok(StageOutput::Text(tessel_sched::print(f, &tessel_sched::schedule(f))));
    let mut table: Vec<Stage> = stages.iter().map(|(n, f)| (*n, f as &dyn Fn(&mut Func) -> _)).collect();
    table.push(("schedule", &schedule));
    run_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/filetests"), &table);
}
