//! `tessel layout` and `tessel layout convert`, run as a user runs them: the built binary, its stdout, stderr and
//! exit status.

use std::path::PathBuf;
use std::process::{Command, Output};

use serde_json::{Value, json};

const BLOCKED: &str = "BlockedLayout([1,4],[8,4],[4,1],[1,0])";

fn tessel(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tessel")).args(args).output().expect("the tessel binary runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("utf-8 stdout")
}

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).expect("utf-8 stderr")
}

/// Runs and expects success; returns stdout.
fn ok(args: &[&str]) -> String {
    let o = tessel(args);
    assert!(o.status.success(), "tessel {args:?} failed: {}", stderr(&o));
    assert_eq!(stderr(&o), "", "tessel {args:?} wrote to stderr");
    stdout(&o)
}

/// Runs and expects exit status `code`; returns stderr.
fn fails(args: &[&str], code: i32) -> String {
    let o = tessel(args);
    assert_eq!(o.status.code(), Some(code), "tessel {args:?}: stdout {} stderr {}", stdout(&o), stderr(&o));
    assert_eq!(stdout(&o), "", "tessel {args:?} wrote to stdout on failure");
    stderr(&o)
}

fn tmp(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name)
}

#[test]
fn json_bases_of_a_blocked_layout_follow_its_definition() {
    let out = ok(&["layout", BLOCKED, "--shape", "64x128", "--json"]);
    let v: Value = serde_json::from_str(&out).expect("valid JSON");
    // Per thread a 1x4 strip along dim1 (order [1, 0]: dim1 first); lanes 4 along dim1 then 8 along dim0; warps 4
    // along dim0. The CTA tile is 32x16, so the 64x128 tensor repeats it in registers 8 times along dim1, then
    // twice along dim0.
    let want = json!({
        "in_dims": {
            "register": [[0, 1], [0, 2], [0, 16], [0, 32], [0, 64], [32, 0]],
            "lane": [[0, 4], [0, 8], [1, 0], [2, 0], [4, 0]],
            "warp": [[8, 0], [16, 0]],
            "block": []
        },
        "out_dims": {"dim0": 64, "dim1": 128}
    });
    assert_eq!(v, want);
    // In-dims in hardware order, out-dims in dim order.
    assert!(out.starts_with("{\"in_dims\": {\"register\": "), "{out}");
    assert!(out.contains("\"out_dims\": {\"dim0\": 64, \"dim1\": 128}"), "{out}");
}

#[test]
fn default_output_is_the_bases_and_a_summary() {
    let out = ok(&["layout", &format!("gl.{BLOCKED}"), "--shape", "64x128"]);
    assert_eq!(
        out,
        "BlockedLayout([1,4],[8,4],[4,1],[1,0]) on 64x128:\n\
         register: [(0,1), (0,2), (0,16), (0,32), (0,64), (32,0)]\n\
         lane    : [(0,4), (0,8), (1,0), (2,0), (4,0)]\n\
         warp    : [(8,0), (16,0)]\n\
         block   : []\n\
         -> dim0: 64, dim1: 128\n\
         surjective; injective (no broadcast); 64 registers per thread (runs of 4 along dim1); 32 lanes x 4 warps x \
         1 block\n"
    );
    // A slice broadcasts: the 4 lanes that split dim1 hold the same element; the summary names their bits.
    let out = ok(&["layout", &format!("SliceLayout(1, {BLOCKED})"), "--shape", "64"]);
    assert!(
        out.ends_with(
            "\nsurjective; each element held 4x (broadcast bits: lane 0b11); 2 registers per thread; 32 lanes x 4 \
             warps x 1 block\n"
        ),
        "{out}"
    );
}

#[test]
fn table_shows_who_holds_each_element() {
    let out = ok(&["layout", BLOCKED, "--shape", "16x16", "--table"]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "BlockedLayout([1,4],[8,4],[4,1],[1,0]) on 16x16:");
    assert!(lines[1].starts_with("16x16 tensor (dim0, dim1); T<t>:r<r> = thread t (warp t/32, lane t%32), register r"));
    // 16 rows of a 32-row tile: warps 2 and 3 hold copies of warps 0 and 1.
    assert_eq!(lines[2], "each element is held 2x: the cell shows the first holder, the others are it with T^64");
    assert_eq!(lines[3].split_whitespace().collect::<Vec<_>>(), (0..16).map(|c| c.to_string()).collect::<Vec<_>>());
    assert!(lines[4].starts_with(" 0   T0:r0  T0:r1  T0:r2  T0:r3  T1:r0"), "{}", lines[4]);
    assert!(lines[12].starts_with(" 8  T32:r0 T32:r1"), "{}", lines[12]);
    assert_eq!(lines.len(), 4 + 16);
}

#[test]
fn svg_is_written_to_a_file_or_stdout() {
    let path = tmp("blocked.svg");
    let _ = std::fs::remove_file(&path);
    let p = path.to_str().expect("utf-8 path");
    let out = ok(&["layout", BLOCKED, "--shape", "32x32", "--svg", p]);
    assert_eq!(out, format!("wrote {p} (BlockedLayout on 32x32)\n"));
    let svg = std::fs::read_to_string(&path).expect("the SVG was written");
    assert!(svg.starts_with("<svg"), "{}", &svg[..80.min(svg.len())]);
    assert!(svg.trim_end().ends_with("</svg>"));
    assert!(svg.contains("BlockedLayout([1,4],[8,4],[4,1],[1,0]) on 32x32"));
    assert_eq!(svg.matches("<title>").count(), 32 * 32);
    let to_stdout = ok(&["layout", "NVMMASharedLayout(128, 16)", "--shape", "8x64", "--svg", "-"]);
    assert!(to_stdout.starts_with("<svg") && to_stdout.contains(">bank 31</text>"));
}

#[test]
fn the_shape_can_come_from_the_expression() {
    let expr = "DistributedLinearLayout(reg_bases=[[0,1]], lane_bases=[[0,2],[0,4],[1,0],[2,0],[4,0]], \
                warp_bases=[[8,0]], block_bases=[], shape=[16, 8])";
    let v: Value = serde_json::from_str(&ok(&["layout", expr, "--json"])).expect("valid JSON");
    assert_eq!(v["out_dims"], json!({"dim0": 16, "dim1": 8}));
    assert_eq!(v["in_dims"]["warp"], json!([[8, 0]]));
    let err = fails(&["layout", BLOCKED], 2);
    assert_eq!(err, "error: --shape is required: BlockedLayout does not fix the tensor shape (e.g. --shape 64x128)\n");
}

#[test]
fn convert_prints_the_plan_and_its_bank_conflicts() {
    let out = ok(&[
        "layout",
        "convert",
        "BlockedLayout([1,8],[4,8],[4,1],[1,0])",
        "NVMMADistributedLayout([3,0],[4,1],[16,64,16])",
        "--shape",
        "64x64",
    ]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0],
        "BlockedLayout([1,8],[4,8],[4,1],[1,0]) -> NVMMADistributedLayout([3,0],[4,1],[16,64,16]) on 64x64, 16-bit \
         elements"
    );
    assert!(lines[1].starts_with("shared memory round trip: "), "{out}");
    assert_eq!(lines.last(), Some(&"bank conflicts: 0"));
    // The same layout twice is a no-op.
    let out = ok(&["layout", "convert", BLOCKED, BLOCKED, "--shape", "64x64", "--bits", "32"]);
    assert!(out.ends_with("no-op: every thread already holds its elements in place\nbank conflicts: 0\n"), "{out}");
    // Within one warp the data moves by shuffles, unless they are ruled out.
    let (from, to) = ("BlockedLayout([1],[32],[1],[0])", "BlockedLayout([2],[32],[1],[0])");
    let out = ok(&["layout", "convert", from, to, "--shape", "64"]);
    assert!(out.lines().nth(1).is_some_and(|l| l.starts_with("warp shuffle: ")), "{out}");
    let out = ok(&["layout", "convert", from, to, "--shape", "64", "--no-shuffles"]);
    assert!(out.lines().nth(1).is_some_and(|l| l.starts_with("shared memory round trip: ")), "{out}");
    // --max-scratch bounds the shared memory of a round trip.
    let scratch = |extra: &[&str]| -> u32 {
        let (t, u) = ("BlockedLayout([1,4],[8,4],[4,1],[1,0])", "BlockedLayout([4,1],[4,8],[1,4],[0,1])");
        let out = ok(&[&["layout", "convert", t, u, "--shape", "64x64"], extra].concat());
        let line = out.lines().nth(1).expect("a plan line");
        let bytes = line.split(" bytes per CTA").next().and_then(|l| l.rsplit(' ').next()).expect("a byte count");
        bytes.parse().unwrap_or_else(|_| panic!("{line}"))
    };
    assert_eq!(scratch(&[]), 8192);
    assert!(scratch(&["--max-scratch", "4096"]) <= 4096);
    // A shared layout on one side: the store's bank conflicts.
    let out = ok(&[
        "layout",
        "convert",
        "BlockedLayout([1,8],[4,8],[4,1],[1,0])",
        "NVMMASharedLayout(128, 16)",
        "--shape",
        "64x64",
    ]);
    assert!(out.contains("\nstore into shared memory: 16 instructions of 16 bytes/lane"), "{out}");
    assert!(out.ends_with("bank conflicts: 0\n"), "{out}");
}

#[test]
fn bad_expressions_point_at_the_mistake() {
    let err = fails(&["layout", "gl.BlokedLayout([1,4],[8,4],[4,1],[1,0])", "--shape", "64x128"], 2);
    assert!(err.starts_with("error: unknown layout `gl.BlokedLayout`; did you mean `BlockedLayout`? known: "), "{err}");
    assert!(
        err.ends_with(" --> EXPR:1:1\n  |\n1 | gl.BlokedLayout([1,4],[8,4],[4,1],[1,0])\n  | ^^^^^^^^^^^^^^^\n"),
        "{err}"
    );
    let err = fails(&["layout", "BlockedLayout([1,4],[8,4],[4,1],orderr=[1,0])", "--shape", "64x128"], 2);
    assert!(err.starts_with("error: BlockedLayout has no parameter `orderr`; did you mean `order`?"), "{err}");
    assert!(
        err.ends_with(
            "1 | BlockedLayout([1,4],[8,4],[4,1],orderr=[1,0])\n  |                                 ^^^^^^\n"
        ),
        "{err}"
    );
    let err = fails(&["layout", "convert", BLOCKED, "SliceLayout(0)", "--shape", "64x64"], 2);
    assert!(
        err.starts_with(
            "error: SliceLayout is missing the argument `parent`: SliceLayout(dim, parent)\n --> DST:1:12\n"
        )
    );
    // The layout is fine but does not fit the shape.
    let err = fails(&["layout", BLOCKED, "--shape", "64"], 2);
    assert_eq!(
        err,
        "error: BlockedLayout: the layout has rank 2 but the shape [64] has rank 1\n  (while building \
         BlockedLayout([1,4],[8,4],[4,1],[1,0]) on 64)\n"
    );
}

#[test]
fn usage_errors_exit_2_and_say_what_is_wrong() {
    let err = fails(&["layout", BLOCKED, "--shape", "64x100"], 2);
    assert!(err.contains("invalid value '64x100' for '--shape <SHAPE>': 100 is not a power of two"), "{err}");
    let err = fails(&["layout", BLOCKED, "--shape", "64x64", "--json", "--table"], 2);
    assert!(err.contains("the argument '--json' cannot be used with '--table'"), "{err}");
    let err = fails(&["layout"], 2);
    assert!(err.contains("the following required arguments were not provided"), "{err}");
    let err = fails(&["layout", "convert", BLOCKED, BLOCKED, "--shape", "64x64", "--bits", "12"], 2);
    assert!(err.contains("`12` is not an element size; use 8, 16, 32 or 64"), "{err}");
    let err = fails(&["layout", "convert", BLOCKED, "TensorMemoryLayout((128, 64), 1)", "--shape", "128x64"], 2);
    assert!(err.starts_with("error: cannot convert a BlockedLayout to a TensorMemoryLayout"), "{err}");
    let err = fails(&["layout", BLOCKED, "--shape", "64x64", "--svg", "/nonexistent-dir/x.svg"], 1);
    assert!(err.starts_with("error: cannot write /nonexistent-dir/x.svg: "), "{err}");
}

#[test]
fn help_describes_the_tool_and_only_what_exists() {
    let out = ok(&["--help"]);
    assert!(out.starts_with("tessel: a GPU kernel compiler for Triton-style and Gluon-style kernels."), "{out}");
    let commands: Vec<&str> = out
        .split("Commands:\n")
        .nth(1)
        .expect("a Commands section")
        .lines()
        .take_while(|l| !l.is_empty())
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(commands, ["check", "compile", "run", "bench", "layout", "help"]);
    let out = ok(&["layout", "--help"]);
    assert!(out.contains("Usage: tessel layout [OPTIONS] <EXPR>\n       tessel layout <COMMAND>"), "{out}");
    assert!(out.contains("--table"), "{out}");
    assert!(
        out.contains("Examples:\n  tessel layout 'BlockedLayout([1,4],[8,4],[4,1],[1,0])' --shape 64x128"),
        "{out}"
    );
}
