//! Prints the PTX of a layout-IR file: `cargo run -p tessel-codegen --example emit_ptx -- FILE.tir [sm_90a]`.

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(path) = args.get(1) else {
        eprintln!("usage: emit_ptx FILE.tir [sm_80|sm_90a|sm_100a]");
        std::process::exit(2);
    };
    let arch = tessel_codegen::Target::parse(args.get(2).map_or("sm_90a", |s| s.as_str())).expect("unknown target");
    let src = std::fs::read_to_string(path).expect("reading the file");
    let mut f = tessel_tile::parse::parse_func(&src).unwrap_or_else(|e| panic!("{path}: {e}"));
    f.target = arch;
    match tessel_codegen::compile(&f) {
        Ok(k) => print!("{}", k.ptx),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}
