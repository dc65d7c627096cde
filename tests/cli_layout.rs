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

// ----- layout check / layout fuzz -----

const ROWS: &str = "BlockedLayout([1,8],[4,8],[4,1],[1,0])";
const COLS: &str = "BlockedLayout([8,1],[8,4],[1,4],[0,1])";
const MMA_V2: &str = "NVMMADistributedLayout([2,0],[2,2],[16,8])";
const MMA_V3: &str = "NVMMADistributedLayout([3,0],[4,1],[16,128,16])";

/// `tessel layout check SRC DST --shape SHAPE --bits BITS`, expected to pass; returns stdout.
fn check_passes(src: &str, dst: &str, shape: &str, bits: &str) -> String {
    let out = ok(&["layout", "check", src, dst, "--shape", shape, "--bits", bits]);
    assert!(out.starts_with(&format!("{src} -> {dst} on {shape}\n")), "{out}");
    assert!(out.ends_with(" bank conflicts)\n"), "{out}");
    out
}

/// The report lines of one element width.
fn width_lines(out: &str, bits: u32) -> Vec<&str> {
    let head = format!("{bits}-bit: ");
    let mut lines = out.lines().skip_while(|l| !l.starts_with(&head));
    let first = lines.next().unwrap_or_else(|| panic!("no {bits}-bit report in\n{out}"));
    std::iter::once(first).chain(lines.take_while(|l| l.starts_with("  "))).collect()
}

#[test]
fn check_reports_the_classic_conversions_correct_and_conflict_free() {
    let pairs = [(ROWS, COLS, "64x128"), (MMA_V2, ROWS, "64x128"), (MMA_V3, ROWS, "64x128")];
    for (a, b, shape) in pairs {
        for (src, dst) in [(a, b), (b, a)] {
            let out = check_passes(src, dst, shape, "16,32");
            assert!(out.ends_with("result: pass (correct at 16, 32 bits; 0 bank conflicts)\n"), "{out}");
            for bits in [16, 32] {
                let lines = width_lines(&out, bits);
                assert_eq!(lines[0], format!("{bits}-bit: correct on 4 random tensors"), "{out}");
                assert!(lines[1].starts_with("  plan: shared memory round trip: "), "{out}");
                assert!(lines[2].starts_with("  instructions: 0 shfl.sync per thread, "), "{out}");
                assert!(lines[2].ends_with(" per CTA, 1 barrier per thread"), "{out}");
                assert_eq!(lines[4], "  bank conflicts: store 0, load 0", "{out}");
            }
        }
    }
    // What the planner gives, stated: rows and columns share only repetition directions in registers, so their
    // round trip moves 2 elements per access; the MMA accumulators reach 16 bytes at 32 bits.
    let out = check_passes(ROWS, COLS, "64x128", "16,32");
    assert_eq!(width_lines(&out, 16)[3], "  vector width: 4 bytes per lane");
    assert_eq!(width_lines(&out, 32)[3], "  vector width: 8 bytes per lane");
    let out = check_passes(MMA_V2, ROWS, "64x128", "16,32");
    assert_eq!(width_lines(&out, 16)[3], "  vector width: 16 bytes per lane");
    assert_eq!(
        width_lines(&out, 16)[2],
        "  instructions: 0 shfl.sync per thread, 32 st.shared + 32 ld.shared per CTA, 1 barrier per thread"
    );
    let out = check_passes(MMA_V3, ROWS, "64x128", "32");
    assert_eq!(width_lines(&out, 32)[3], "  vector width: 16 bytes per lane");
}

#[test]
fn check_mma_v2_accumulator_to_dot_operand() {
    // Operand A (k_width = 32 bits of K) of the accumulator's own dot: warps along N hold copies, so the data
    // goes through shared memory, conflict-free, 16 bytes per access.
    for (bits, k_width) in [(16, 2), (32, 1)] {
        for operand in [0, 1] {
            let dot = format!("DotOperandLayout({operand}, {MMA_V2}, {k_width})");
            let out = check_passes(MMA_V2, &dot, "64x64", &bits.to_string());
            let lines = width_lines(&out, bits);
            assert_eq!(lines[0], format!("{bits}-bit: correct on 4 random tensors"), "{out}");
            assert_eq!(lines[3], "  vector width: 16 bytes per lane", "{out}");
            assert_eq!(lines[4], "  bank conflicts: store 0, load 0", "{out}");
        }
    }
    // With the warps all along M, the 16-bit accumulator already is operand A; at 32 bits it takes shuffles.
    let (acc, dot) = ("NVMMADistributedLayout([2,0],[4,1],[16,8])", "NVMMADistributedLayout([2,0],[4,1],[16,8])");
    let out = check_passes(acc, &format!("DotOperandLayout(0, {dot}, 2)"), "64x64", "16");
    assert_eq!(width_lines(&out, 16)[1], "  plan: no-op: every thread already holds its elements in place");
    let out = check_passes(acc, &format!("DotOperandLayout(0, {dot}, 1)"), "64x64", "32");
    assert!(width_lines(&out, 32)[1].starts_with("  plan: warp shuffle: 32 rounds"), "{out}");
    assert!(width_lines(&out, 32)[2].starts_with("  instructions: 32 shfl.sync per thread, 0 st.shared"), "{out}");
}

#[test]
fn check_of_a_corrupted_plan_fails_with_a_counterexample() {
    let o = tessel(&["layout", "check", ROWS, COLS, "--shape", "64x128", "--bits", "16", "--corrupt-plan"]);
    assert_eq!(o.status.code(), Some(1), "{}{}", stdout(&o), stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("16-bit: (test hook) the plan is corrupted on purpose\n16-bit: WRONG\n"), "{out}");
    assert!(out.ends_with("result: FAIL\n"), "{out}");
    assert_eq!(
        stderr(&o),
        "error: the conversion is wrong at 16 bits: element (dim0=8, dim1=64), held in the source by (block 0, \
         warp 2, lane 0, register 8), lands in the destination at (block 0, warp 0, lane 1, register 0)\n  but the \
         destination layout puts it at (block 0, warp 0, lane 1, register 32)\n  and wants element (dim0=8, dim1=0) \
         at (block 0, warp 0, lane 1, register 0) (held in the source by (block 0, warp 2, lane 0, register 0))\n  \
         4096 of 8192 destination registers are wrong\n"
    );
    // The hook is not advertised.
    assert!(!ok(&["layout", "check", "--help"]).contains("corrupt"));
}

#[test]
fn check_rejects_bad_input_with_a_message() {
    let err = fails(&["layout", "check", ROWS, "NVMMASharedLayout(128, 16)", "--shape", "64x64"], 2);
    assert!(err.starts_with("error: DST is a NVMMASharedLayout; `layout check` converts between distributed"), "{err}");
    let err = fails(&["layout", "check", ROWS, COLS, "--shape", "64x64", "--bits", "16,12"], 2);
    assert!(err.contains("`12` is not an element size; use 8, 16, 32 or 64"), "{err}");
    let err = fails(&["layout", "check", ROWS, COLS, "--shape", "64x64", "--cases", "0"], 2);
    assert!(err.contains("invalid value '0' for '--cases <N>'"), "{err}");
    let err = fails(&["layout", "check", ROWS, "BlockedLayout([1],[32],[4],[0])", "--shape", "64x64"], 2);
    assert!(err.starts_with("error: BlockedLayout: the layout has rank 1 but the shape [64, 64] has rank 2"), "{err}");
    let err = fails(&["layout", "check", ROWS, "BlockedLayout([1,8],[4,8],[2,1],[1,0])", "--shape", "64x64"], 2);
    assert_eq!(
        err,
        "error: cannot plan the conversion at 8 bits: mismatched dims: the source has 4 warps but the destination \
         has 2\n"
    );
}

#[test]
fn fuzz_passes_on_the_planner_and_shrinks_a_broken_plan() {
    let out = ok(&["layout", "fuzz", "--families", "mma,blocked,slice", "--cases", "40", "--seed", "1"]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "fuzz: 40 random conversions among mma-v2, mma-v3, blocked, slice (seed 1)");
    assert!(lines[1].starts_with("result: pass (40 conversions correct: "), "{out}");
    // The same seed draws the same conversions.
    assert_eq!(ok(&["layout", "fuzz", "--families", "mma,blocked,slice", "--cases", "40", "--seed", "1"]), out);

    let o = tessel(&["layout", "fuzz", "--families", "blocked", "--cases", "20", "--seed", "3", "--corrupt-plan"]);
    assert_eq!(o.status.code(), Some(1), "{}{}", stdout(&o), stderr(&o));
    assert_eq!(
        stdout(&o),
        "fuzz: 20 random conversions among blocked (seed 3)\n(test hook) every plan is corrupted on purpose\nresult: \
         FAIL after 0 correct conversions\n"
    );
    let err = stderr(&o);
    assert!(
        err.starts_with(
            "error: a conversion is wrong; the smallest failing case found:\n  BlockedLayout([1,1],[1,32],[1,1],[0,1]) \
             -> BlockedLayout([1,1],[1,32],[1,1],[0,1]) on 16x16, 8-bit elements, no shuffles\nelement (dim0=1, \
             dim1=0), held in the source by (block 0, warp 0, lane 0, register 1), lands in the destination at \
             (block 0, warp 0, lane 0, register 0)\n"
        ),
        "{err}"
    );
}

#[test]
fn fuzz_rejects_unknown_and_memory_families() {
    let err = fails(&["layout", "fuzz", "--families", "blocked,mmma"], 2);
    assert!(err.starts_with("error: unknown layout family `mmma`; known: blocked, slice, dot-fma,"), "{err}");
    let err = fails(&["layout", "fuzz", "--families", "nvmma-shared"], 2);
    assert!(
        err.starts_with("error: nvmma-shared is a memory layout; `layout fuzz` draws conversions between"),
        "{err}"
    );
    let err = fails(&["layout", "fuzz", "--cases", "0"], 2);
    assert!(err.contains("invalid value '0' for '--cases <N>'"), "{err}");
}
