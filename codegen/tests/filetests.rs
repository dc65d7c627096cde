//! File tests through code generation (`tests/filetests/*.tir`; see `tessel_tile::filetest`): the tile crate's
//! stages plus `ptx`, whose output is the kernel's PTX text.

use std::path::Path;

use tessel_tile::filetest::{Stage, StageOutput, run_dir, tile_stages};
use tessel_tile::ir::Func;

#[test]
fn filetests() {
    let stages = tile_stages();
    let ptx = |f: &mut Func| tessel_codegen::compile(f).map(|k| StageOutput::Text(k.ptx)).map_err(|e| e.into());
    let mut table: Vec<Stage> = stages.iter().map(|(n, f)| (*n, f as &dyn Fn(&mut Func) -> _)).collect();
    table.push(("ptx", &ptx));
    run_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/filetests"), &table);
}
