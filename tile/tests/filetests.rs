//! The directive-driven file tests of this crate's passes (`tests/filetests/*.tir`; see `tessel_tile::filetest`).

use std::path::Path;

use tessel_tile::filetest::{Stage, run_dir, tile_stages};

#[test]
fn filetests() {
    let stages = tile_stages();
    let table: Vec<Stage> = stages.iter().map(|(n, f)| (*n, f as &dyn Fn(&mut _) -> _)).collect();
    run_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/filetests"), &table);
}
