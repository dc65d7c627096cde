use super::*;
use crate::standard::{
    BlockedLayout, DistributedLinearLayout, DotOperandLayout, NvmmaDistributedLayout, NvmmaSharedLayout,
    SharedLinearLayout, SliceLayout, SwizzledSharedLayout, TensorMemoryLayout, TensorMemoryScalesLayout, TmemAccess,
    TmemRegLayout,
};

fn parse(src: &str) -> AnyLayout {
    parse_layout(src).unwrap_or_else(|e| panic!("{src}: {e}"))
}

/// The message and the spanned text of the error `src` gives.
fn fail(src: &str) -> (String, &str) {
    match parse_layout(src) {
        Ok(l) => panic!("{src} parsed as {l:?}"),
        Err(e) => (e.message, &src[e.span]),
    }
}

fn blocked_1448() -> BlockedLayout {
    BlockedLayout {
        size_per_thread: vec![1, 4],
        threads_per_warp: vec![8, 4],
        warps_per_cta: vec![4, 1],
        order: vec![1, 0],
        cga: CgaLayout::Single,
    }
}

fn blocked(b: BlockedLayout) -> AnyLayout {
    AnyLayout::Distributed(DistributedLayout::Blocked(b))
}

fn wgmma() -> NvmmaDistributedLayout {
    NvmmaDistributedLayout {
        version: [3, 0],
        warps_per_cta: vec![4, 1],
        instr_shape: vec![16, 128, 16],
        cga: CgaLayout::Single,
    }
}

fn tmem_128() -> TensorMemoryLayout {
    TensorMemoryLayout { block: [128, 128], col_stride: 1, two_ctas: false, cta_split: [1, 1] }
}

#[test]
fn blocked_positional_keyword_and_prefixed_are_the_same() {
    let want = blocked(blocked_1448());
    assert_eq!(parse("BlockedLayout([1,4],[8,4],[4,1],[1,0])"), want);
    assert_eq!(
        parse("BlockedLayout(size_per_thread=[1, 4], threads_per_warp=[8, 4], warps_per_cta=[4, 1], order=[1, 0])"),
        want
    );
    assert_eq!(parse("gl.BlockedLayout([1, 4], [8, 4], warps_per_cta=(4, 1), order=[1, 0],)"), want);
    assert_eq!(parse("ttgl.BlockedLayout([1,4],[8,4],[4,1],[1,0], cga_layout=[])"), want);
    assert_eq!(parse("triton.experimental.gluon.language.BlockedLayout([1,4],[8,4],[4,1],[1,0])"), want);
    assert_eq!(parse("  gl.constexpr(BlockedLayout([1, 256 // 64], [2 ** 3, 2 * 2], [4, 1], [1, 0]))\n"), want);
    assert_eq!(parse("BlockedLayout([1] + [4], [8, 4], [4, 1 << 0], [1, 0])"), want);
}

#[test]
fn blocked_cga_layout_and_legacy_cta_parameters() {
    let mut b = blocked_1448();
    b.cga = CgaLayout::Bases(vec![vec![1, 0]]);
    let src = "BlockedLayout(size_per_thread=[1,4], threads_per_warp=[8,4], warps_per_cta=[4,1], order=[1,0], \
               cga_layout=[[1,0]])";
    assert_eq!(parse(src), blocked(b));
    let legacy = parse("BlockedLayout([1], [32], [4], [0], ctas_per_cga=[2], cta_split_num=[2])");
    let AnyLayout::Distributed(DistributedLayout::Blocked(l)) = legacy else { panic!("{legacy:?}") };
    assert_eq!(l.cga, CgaLayout::Legacy { ctas_per_cga: vec![2], cta_split: vec![2], cta_order: vec![0] });
    let (msg, at) = fail("BlockedLayout([1], [32], [4], [0], cga_layout=[[1]], ctas_per_cga=[2])");
    assert!(msg.contains("either cga_layout or the legacy"), "{msg}");
    assert_eq!(at, "[[1]]");
}

#[test]
fn slice_and_dot_operand_nest() {
    let parent = DistributedLayout::Blocked(blocked_1448());
    assert_eq!(
        parse("SliceLayout(0, BlockedLayout([1,4],[8,4],[4,1],[1,0]))"),
        AnyLayout::Distributed(DistributedLayout::Slice(SliceLayout { dim: 0, parent: Box::new(parent.clone()) }))
    );
    assert_eq!(
        parse("SliceLayout(dim=1, parent=gl.SliceLayout(0, BlockedLayout([1,1,4],[1,8,4],[1,4,1],[2,1,0])))")
            .to_string()
            .matches("SliceLayout")
            .count(),
        2
    );
    assert_eq!(
        parse("DotOperandLayout(0, NVMMADistributedLayout([3,0],[4,1],[16,128,16]), 2)"),
        AnyLayout::Distributed(DistributedLayout::DotOperand(DotOperandLayout {
            operand_index: 0,
            parent: Box::new(DistributedLayout::Nvmma(wgmma())),
            k_width: 2,
        }))
    );
    let (msg, at) = fail("SliceLayout(0, NVMMASharedLayout(128, 16))");
    assert!(msg.contains("must be a distributed (register) layout, found a NVMMASharedLayout"), "{msg}");
    assert_eq!(at, "NVMMASharedLayout(128, 16)");
}

#[test]
fn nvmma_distributed_and_its_checks() {
    assert_eq!(
        parse("gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4, 1], instr_shape=[16, 128, 16])"),
        AnyLayout::Distributed(DistributedLayout::Nvmma(wgmma()))
    );
    let (msg, at) = fail("NVMMADistributedLayout([3], [4, 1], [16, 128, 16])");
    assert!(msg.contains("version must be [major, minor]"), "{msg}");
    assert_eq!(at, "[3]");
    let (msg, at) = fail("NVMMADistributedLayout([5, 0], [4, 1], [16, 128, 16])");
    assert!(msg.contains("[2, 0] (mma.sync) or [3, 0] (wgmma)"), "{msg}");
    assert_eq!(at, "NVMMADistributedLayout([5, 0], [4, 1], [16, 128, 16])");
}

#[test]
fn distributed_linear_keeps_its_shape() {
    let src = "DistributedLinearLayout(reg_bases=[[0,1]], lane_bases=[[0,2],[0,4],[1,0],[2,0],[4,0]], \
               warp_bases=[[8,0]], block_bases=[], shape=[16, 8])";
    let p = parse_layout_expr(src).expect("parses");
    assert_eq!(p.shape, Some(vec![16, 8]));
    assert_eq!(
        p.layout,
        AnyLayout::Distributed(DistributedLayout::Linear(DistributedLinearLayout {
            reg_bases: vec![vec![0, 1]],
            lane_bases: vec![vec![0, 2], vec![0, 4], vec![1, 0], vec![2, 0], vec![4, 0]],
            warp_bases: vec![vec![8, 0]],
            block_bases: vec![],
            shape: vec![16, 8],
        }))
    );
    let sliced = parse_layout_expr(&format!("SliceLayout(1, {src})")).expect("parses");
    assert_eq!(sliced.shape, Some(vec![16]));
    let (msg, _) = fail("DistributedLinearLayout(reg_bases=[], lane_bases=[], warp_bases=[], shape=[4])");
    assert!(msg.contains("missing the argument `block_bases`"), "{msg}");
}

#[test]
fn shared_layouts() {
    let nvmma = |swizzle, bits, rank, transposed| {
        AnyLayout::Shared(SharedLayout::Nvmma(NvmmaSharedLayout {
            swizzle_byte_width: swizzle,
            element_bitwidth: bits,
            rank,
            transposed,
            fp4_padded: false,
            cga: CgaLayout::Single,
        }))
    };
    assert_eq!(parse("NVMMASharedLayout(128, 16)"), nvmma(128, 16, 2, false));
    assert_eq!(
        parse("gl.NVMMASharedLayout(swizzle_byte_width=64, element_bitwidth=8, transposed=True)"),
        nvmma(64, 8, 2, true)
    );
    assert_eq!(parse("NVMMASharedLayout(32, 32, rank=3)"), nvmma(32, 32, 3, false));
    let (msg, at) = fail("NVMMASharedLayout(128, 16, transposed=1)");
    assert!(msg.contains("transposed must be True or False"), "{msg}");
    assert_eq!(at, "1");
    assert_eq!(
        parse("SwizzledSharedLayout(2, 2, 4, [1, 0])"),
        AnyLayout::Shared(SharedLayout::Swizzled(SwizzledSharedLayout {
            vec: 2,
            per_phase: 2,
            max_phase: 4,
            order: vec![1, 0],
            cga: CgaLayout::Single,
        }))
    );
    assert_eq!(
        parse("gl.nvidia.hopper.mbarrier.MBarrierLayout()"),
        AnyLayout::Shared(SharedLayout::Swizzled(SwizzledSharedLayout {
            vec: 1,
            per_phase: 1,
            max_phase: 1,
            order: vec![0],
            cga: CgaLayout::Single,
        }))
    );
    let p = parse_layout_expr("SharedLinearLayout(offset_bases=[[0,1],[0,2],[1,0],[2,4]])").expect("parses");
    assert_eq!(p.shape, Some(vec![4, 8]));
    let (msg, at) = fail("SharedLinearLayout([])");
    assert_eq!((msg.as_str(), at), ("SharedLinearLayout: offset_bases must not be empty", "SharedLinearLayout([])"));
    assert_eq!(
        p.layout,
        AnyLayout::Shared(SharedLayout::Linear(SharedLinearLayout {
            offset_bases: vec![vec![0, 1], vec![0, 2], vec![1, 0], vec![2, 4]],
            block_bases: vec![],
            alignment: 16,
        }))
    );
}

#[test]
fn nvmma_default_for_picks_the_widest_swizzle_the_row_fills() {
    let swizzle = |src: &str| match parse_layout_expr(src).expect("parses") {
        ParsedLayout { layout: AnyLayout::Shared(SharedLayout::Nvmma(l)), shape } => {
            (l.swizzle_byte_width, l.element_bitwidth, shape.expect("block_shape"))
        }
        other => panic!("{other:?}"),
    };
    assert_eq!(swizzle("gl.NVMMASharedLayout.get_default_for([128, 64], gl.float16)"), (128, 16, vec![128, 64]));
    assert_eq!(swizzle("NVMMASharedLayout.get_default_for([64, 32], gl.float16)"), (64, 16, vec![64, 32]));
    assert_eq!(swizzle("NVMMASharedLayout.get_default_for([64, 16], gl.bfloat16)"), (32, 16, vec![64, 16]));
    assert_eq!(swizzle("NVMMASharedLayout.get_default_for([4, 64], gl.float16)"), (0, 16, vec![4, 64]));
    assert_eq!(swizzle("NVMMASharedLayout.get_default_for([256, 16], ttgl.float8e4nv)"), (0, 8, vec![256, 16]));
    // Transposed: the contiguous dim is dim0.
    assert_eq!(
        swizzle("NVMMASharedLayout.get_default_for([64, 8], gl.float16, transposed=True)"),
        (128, 16, vec![64, 8])
    );
    let (msg, at) = fail("NVMMASharedLayout.get_default_for([64, 64], gl.float17)");
    assert!(msg.contains("unknown dtype `float17`; did you mean `float16`?"), "{msg}");
    assert_eq!(at, "gl.float17");
}

#[test]
fn tensor_memory_and_its_register_layout() {
    let t = AnyLayout::TensorMemory(tmem_128());
    assert_eq!(parse("TensorMemoryLayout(block=(128, 128), col_stride=1)"), t);
    assert_eq!(parse("gl.nvidia.blackwell.TensorMemoryLayout((128, 128), 1)"), t);
    let split = parse("TensorMemoryLayout((128, 128), 1, cta_split_num=(2, 1))");
    assert_eq!(split, AnyLayout::TensorMemory(TensorMemoryLayout { cta_split: [2, 1], ..tmem_128() }));
    assert_eq!(parse("TensorMemoryLayout((128, 128), 1, cga_layout=[[1, 0]])"), split);

    let reg = |access, bits| {
        AnyLayout::Distributed(DistributedLayout::TmemReg(TmemRegLayout {
            tmem: tmem_128(),
            access,
            num_warps: 4,
            element_bitwidth: bits,
            split_n: false,
        }))
    };
    let short =
        "get_tmem_reg_layout(TensorMemoryLayout(block=(128,128), col_stride=1), num_warps=4, instr_variant=\"32x32b\")";
    assert_eq!(
        parse_layout_expr(short).expect("parses"),
        ParsedLayout { layout: reg(TmemAccess::B32x32, 32), shape: None }
    );
    assert_eq!(
        parse("blackwell.get_tmem_reg_layout(TensorMemoryLayout((128, 128), 1), 4, '16x64b')"),
        reg(TmemAccess::B16x64, 32)
    );
    let full = "get_tmem_reg_layout(gl.float16, [128, 64], TensorMemoryLayout((128, 128), 1), num_warps=4)";
    assert_eq!(
        parse_layout_expr(full).expect("parses"),
        ParsedLayout { layout: reg(TmemAccess::B32x32, 16), shape: Some(vec![128, 64]) }
    );
    let (msg, at) = fail("get_tmem_reg_layout(TensorMemoryLayout((128, 128), 1), 4, instr_variant=\"32x64b\")");
    assert!(msg.contains("unknown instr_variant \"32x64b\"; choose one of \"32x32b\", \"16x64b\""), "{msg}");
    assert_eq!(at, "\"32x64b\"");
    let (msg, at) = fail("get_tmem_reg_layout(BlockedLayout([1],[32],[4],[0]), 4)");
    assert!(msg.contains("layout must be a TensorMemoryLayout, found a BlockedLayout"), "{msg}");
    assert_eq!(at, "BlockedLayout([1],[32],[4],[0])");
    let (msg, at) = fail("TensorMemoryLayout(block=(128, 128, 1), col_stride=1)");
    assert!(msg.contains("block must be (M, N)"), "{msg}");
    assert_eq!(at, "(128, 128, 1)");
}

#[test]
fn tensor_memory_takes_the_older_unpacked_spelling() {
    // `unpacked=False` is packed (col_stride 1); `unpacked=True` is one element per column, resolved by the
    // element type: 32 / bitwidth.
    assert_eq!(parse("TensorMemoryLayout((128, 128), unpacked=False)"), AnyLayout::TensorMemory(tmem_128()));
    let AnyLayout::TensorMemory(u) = parse("TensorMemoryLayout(block=(128, 128), unpacked=True)") else {
        panic!("a TensorMemoryLayout")
    };
    assert_eq!(parse("TensorMemoryLayout((128, 128), True)"), AnyLayout::TensorMemory(u.clone()));
    assert_eq!(u.col_stride, TensorMemoryLayout::UNPACKED);
    assert_eq!(u.to_string(), "TensorMemoryLayout((128,128), unpacked=True)");
    assert_eq!(parse(&u.to_string()), AnyLayout::TensorMemory(u.clone()));
    assert_eq!(u.for_bits(16), TensorMemoryLayout { col_stride: 2, ..tmem_128() });
    assert_eq!(u.for_bits(32), tmem_128());
    assert!(u.to_linear(&[128, 128]).unwrap_err().to_string().contains("until an element type gives its col_stride"));
    // In get_tmem_reg_layout the element type resolves it.
    let full = "get_tmem_reg_layout(gl.float16, [128, 64], TensorMemoryLayout((128, 64), unpacked=True), 4)";
    let ParsedLayout { layout: AnyLayout::Distributed(DistributedLayout::TmemReg(r)), .. } =
        parse_layout_expr(full).expect("parses")
    else {
        panic!("a tensor-memory register layout")
    };
    assert_eq!(r.tmem.col_stride, 2);
    let (msg, _) = fail("TensorMemoryLayout((128, 128), col_stride=1, unpacked=True)");
    assert!(msg.contains("either col_stride or the older unpacked"), "{msg}");
    let (msg, _) = fail("TensorMemoryLayout((128, 128))");
    assert!(msg.contains("give col_stride"), "{msg}");
}

#[test]
fn tensor_memory_scales_is_a_layout() {
    let l = parse("TensorMemoryScalesLayout()");
    assert_eq!(l, AnyLayout::TensorMemoryScales(TensorMemoryScalesLayout { cta_split: [1, 1], broadcast: 1 }));
    assert_eq!(l.to_string(), "TensorMemoryScalesLayout()");
    let split = parse("blackwell.TensorMemoryScalesLayout(cga_layout=[[1, 0]])");
    assert_eq!(split, AnyLayout::TensorMemoryScales(TensorMemoryScalesLayout { cta_split: [2, 1], broadcast: 1 }));
    assert_eq!(parse(&split.to_string()), split);
}

#[test]
fn register_variants_tessel_does_not_model_are_named() {
    let (msg, at) = fail("get_tmem_reg_layout(TensorMemoryLayout((64, 64), 1), 4, instr_variant=\"16x32bx2\")");
    assert!(msg.contains("instr_variant \"16x32bx2\" is not supported by tessel yet"), "{msg}");
    assert_eq!(at, "\"16x32bx2\"");
}

/// `32x32b_splitn` on 8 warps: the second warpgroup's column basis (the half, 64 of 128 columns) trades places
/// with the last register's (32), so each thread holds 32 columns of each half; on 4 warps the last register
/// already holds the half and the layout is 32x32b's.
#[test]
fn split_n_register_layouts_keep_each_half_in_registers() {
    let layout = |warps: u32, variant: &str| {
        let src = format!(
            "get_tmem_reg_layout(float32, [128, 128], TensorMemoryLayout((128, 128), 1), {warps}, instr_variant=\"{variant}\")"
        );
        let p = parse_layout_expr(&src).unwrap();
        (p.layout.to_string(), p.layout.to_linear(&[128, 128]).unwrap())
    };
    let (text, split) = layout(8, "32x32b_splitn");
    assert_eq!(text, "TmemRegLayout(TensorMemoryLayout((128,128), 1), \"32x32b_splitn\", 8, 32)");
    assert_eq!(split.bases("register").last().map(|b| b.to_vec()), Some(vec![0, 64]));
    assert_eq!(split.bases("warp").iter().map(|b| b.to_vec()).collect::<Vec<_>>(), [[32, 0], [64, 0], [0, 32]]);
    assert_ne!(split, layout(8, "32x32b").1);
    assert_eq!(layout(4, "32x32b_splitn").1, layout(4, "32x32b").1);
}

#[test]
fn unknown_names_suggest_the_closest() {
    let (msg, at) = fail("gl.BlokedLayout([1,4],[8,4],[4,1],[1,0])");
    assert!(
        msg.starts_with("unknown layout `gl.BlokedLayout`; did you mean `BlockedLayout`? known: BlockedLayout,"),
        "{msg}"
    );
    assert_eq!(at, "gl.BlokedLayout");
    let (msg, _) = fail("Layout()");
    assert!(msg.starts_with("unknown layout `Layout`; known: "), "{msg}");
    let (msg, at) = fail("gl.AutoLayout()");
    assert!(msg.contains("placeholder"), "{msg}");
    assert_eq!(at, "gl.AutoLayout");
}

#[test]
fn arity_and_keyword_errors_name_the_parameters() {
    let (msg, at) = fail("BlockedLayout([1,4],[8,4],[4,1],[1,0],[],[2])");
    assert_eq!(
        msg,
        "BlockedLayout takes at most 5 positional arguments: BlockedLayout(size_per_thread, threads_per_warp, \
         warps_per_cta, order, cga_layout=[])"
    );
    assert_eq!(at, "[2]");
    let (msg, at) = fail("BlockedLayout([1,4],[8,4],[4,1],orderr=[1,0])");
    assert_eq!(
        msg,
        "BlockedLayout has no parameter `orderr`; did you mean `order`? its parameters are: size_per_thread, \
         threads_per_warp, warps_per_cta, order, cga_layout"
    );
    assert_eq!(at, "orderr");
    let (msg, at) = fail("BlockedLayout([1,4],[8,4],[4,1])");
    assert!(msg.starts_with("BlockedLayout is missing the argument `order`: BlockedLayout(size_per_thread,"), "{msg}");
    assert_eq!(at, "([1,4],[8,4],[4,1])");
    let (msg, at) = fail("BlockedLayout([1,4],[8,4],[4,1],[1,0], size_per_thread=[1,4])");
    assert_eq!(msg, "BlockedLayout got the argument `size_per_thread` twice");
    assert_eq!(at, "size_per_thread");
    let (msg, at) = fail("BlockedLayout(size_per_thread=[1,4], [8,4], [4,1], [1,0])");
    assert_eq!(msg, "positional argument follows keyword argument");
    assert_eq!(at, "[8,4]");
}

#[test]
fn type_and_value_errors_point_at_the_argument() {
    let (msg, at) = fail("BlockedLayout([-1,4],[8,4],[4,1],[1,0])");
    assert_eq!(msg, "BlockedLayout: size_per_thread entries must be in 0..2^32, got -1");
    assert_eq!(at, "-1");
    let (msg, at) = fail("BlockedLayout(4,[8,4],[4,1],[1,0])");
    assert_eq!(msg, "BlockedLayout: size_per_thread must be a list of integers, found the integer 4");
    assert_eq!(at, "4");
    let (msg, at) = fail("SwizzledSharedLayout('2', 2, 4, [1, 0])");
    assert_eq!(msg, "SwizzledSharedLayout: vec must be an integer, found the string \"2\"");
    assert_eq!(at, "'2'");
    // The layout's own checks report at the whole call.
    let (msg, at) = fail("gl.BlockedLayout([1,4],[8,8],[4,1],[1,0])");
    assert!(msg.contains("threads_per_warp [8, 8] multiplies out to 64"), "{msg}");
    assert_eq!(at, "gl.BlockedLayout([1,4],[8,8],[4,1],[1,0])");
    let (msg, at) = fail("BlockedLayout([1,4],[8,4],[4,1],[1,0], cga_layout=None) + 1");
    assert_eq!(msg, "`+` cannot combine a BlockedLayout and the integer 1");
    assert_eq!(at, "+");
}

#[test]
fn syntax_errors_have_spans() {
    let (msg, at) = fail("BlockedLayout([1,4],[8,4],[4,1],[1,0]");
    assert_eq!(msg, "expected `)` to close the argument list, found end of input");
    assert_eq!(at, "");
    let (msg, at) = fail("BlockedLayout([1,4] [8,4])");
    assert_eq!(msg, "expected `)` to close the argument list, found `[`");
    assert_eq!(at, "[");
    let (msg, at) = fail("BlockedLayout([1,4],[8,4],[4,1],[1,0]) extra");
    assert_eq!(msg, "unexpected name `extra` after the end of the expression");
    assert_eq!(at, "extra");
    let (msg, at) = fail("BlockedLayout([1,4],[8,4],[4,1],[1,$])");
    assert_eq!(msg, "unexpected character `$`");
    assert_eq!(at, "$");
    let (msg, at) = fail("get_tmem_reg_layout(TensorMemoryLayout((128,128),1), 4, \"32x32b)");
    assert_eq!(msg, "this string is not closed");
    assert_eq!(at, "\"32x32b)");
    let (msg, at) = fail("[1, 2]");
    assert!(msg.starts_with("expected a layout such as `BlockedLayout("), "{msg}");
    assert_eq!(at, "[1, 2]");
    let (msg, at) = fail("BlockedLayout([1, 4 // 0], [8, 4], [4, 1], [1, 0])");
    assert_eq!(msg, "division by zero");
    assert_eq!(at, "0");
    let (msg, _) = fail("");
    assert_eq!(msg, "expected a value, found end of input");
    // Deep nesting is refused, not a stack overflow.
    for deep in ["[".repeat(100_000), "-".repeat(100_000) + "1", "2 ** ".repeat(100_000) + "2"] {
        let (msg, _) = fail(&deep);
        assert_eq!(msg, "the expression nests more than 64 levels deep");
    }
    assert_eq!(
        fail(&format!("{}1{}", "(".repeat(60), ")".repeat(60))).0.split(',').next(),
        Some("expected a layout such as `BlockedLayout([1")
    );
}

#[test]
fn python_integer_arithmetic() {
    let eval = |src: &str| {
        let mut p = Parser { tokens: lex(src).expect("lexes"), pos: 0, depth: 0 };
        match p.expr().expect("evaluates").value {
            Value::Int(i) => i,
            other => panic!("{other:?}"),
        }
    };
    assert_eq!(eval("-7 // 2"), -4);
    assert_eq!(eval("-7 % 2"), 1);
    assert_eq!(eval("7 % -2"), -1);
    assert_eq!(eval("2 ** 3 ** 2"), 512);
    assert_eq!(eval("1 + 2 * 3 << 1"), 14);
    assert_eq!(eval("0x10 + 0b11 + 1_000"), 1019);
    assert_eq!(eval("-(2 - 5)"), 3);
}

#[test]
fn call_layout_binds_evaluated_arguments_and_reports_at_their_spans() {
    let arg = |name: Option<&str>, value: ArgValue, span: Span| CallArg { name: name.map(str::to_string), value, span };
    let ints = |v: &[i64]| ArgValue::List(v.iter().map(|&i| ArgValue::Int(i)).collect());
    let b = call_layout(
        &["BlockedLayout"],
        0..13,
        0..40,
        vec![
            arg(None, ints(&[1, 4]), 14..20),
            arg(None, ints(&[8, 4]), 21..27),
            arg(None, ints(&[4, 1]), 28..34),
            arg(Some("order"), ints(&[1, 0]), 35..39),
        ],
    )
    .unwrap();
    assert_eq!(b.layout, blocked(blocked_1448()));
    let d = call_layout(
        &["NVMMASharedLayout", "get_default_for"],
        0..5,
        0..30,
        vec![arg(None, ints(&[64, 64]), 6..14), arg(None, ArgValue::Dtype("float16".into()), 15..25)],
    )
    .unwrap();
    assert_eq!(d.layout.to_string(), "NVMMASharedLayout(128, 16)");
    assert_eq!(d.shape, Some(vec![64, 64]));
    let one = || ArgValue::Int(1);
    let args = vec![
        arg(None, ArgValue::Str("x".into()), 7..10),
        arg(None, one(), 11..12),
        arg(None, one(), 13..14),
        arg(None, ints(&[0]), 15..18),
    ];
    let e = call_layout(&["SwizzledSharedLayout"], 0..5, 0..30, args).unwrap_err();
    assert_eq!(e.span, 7..10, "{e}");
}

#[test]
fn a_shared_layout_lays_out_leading_buffer_dims_one_after_another() {
    let l = parse("NVMMASharedLayout(128, 16)");
    let one = l.to_linear(&[64, 64]).unwrap();
    let ring = l.to_linear_buffered(&[4, 64, 64]).unwrap();
    assert_eq!(ring.in_dim_size("offset"), 4 * 64 * 64);
    for i in 0..4u32 {
        for off in [0u32, 1, 77, 4095] {
            let got = ring.apply(&[i * 4096 + off, 0]);
            let want = one.apply(&[off, 0]);
            assert_eq!(&got[..], &[&[i][..], &want[..]].concat()[..], "buffer {i}, offset {off}");
        }
    }
    // A ring of 3 (num_stages = 3) spans the offsets of 4 buffers, laid out the same way.
    assert_eq!(l.to_linear_buffered(&[3, 64, 64]).unwrap(), ring);
}

#[test]
fn mbarrier_multicta_has_one_barrier_per_cta_or_per_pair() {
    let cga = |src: &str| match parse(src) {
        AnyLayout::Shared(SharedLayout::Swizzled(s)) => s.cga,
        other => panic!("{src}: {other:?}"),
    };
    assert_eq!(cga("MBarrierLayout.multicta(1)"), CgaLayout::Single);
    assert_eq!(cga("MBarrierLayout.multicta(4)"), CgaLayout::Bases(vec![vec![1], vec![2]]));
    assert_eq!(cga("MBarrierLayout.multicta(4, two_cta=True)"), CgaLayout::Bases(vec![vec![0], vec![1]]));
    let (msg, _) = fail("MBarrierLayout.multicta(3)");
    assert!(msg.contains("num_ctas must be a power of two, got 3"), "{msg}");
    let (msg, _) = fail("MBarrierLayout.multicta(1, two_cta=True)");
    assert!(msg.contains("two_cta needs an even num_ctas"), "{msg}");
}

#[test]
fn scales_broadcast_over_a_cta_pair_hold_a_copy_in_each() {
    let l = parse("TensorMemoryScalesLayout(cga_layout=[[0, 0]])");
    let AnyLayout::TensorMemoryScales(s) = &l else { panic!("{l:?}") };
    assert_eq!((s.cta_split, s.broadcast), ([1, 1], 2));
    assert_eq!(l.to_string(), "TensorMemoryScalesLayout(cga_layout=[[0, 0]])");
    assert_eq!(parse(&l.to_string()), l);
    // The copy takes the next columns: one more `col` bit, holding nothing new.
    let lin = s.to_linear(&[128, 4]).unwrap();
    let single = TensorMemoryScalesLayout { cta_split: [1, 1], broadcast: 1 }.to_linear(&[128, 4]).unwrap();
    assert_eq!(lin.in_dim_size("col"), 2 * single.in_dim_size("col"));
    assert_eq!(lin.bases("col").last().map(|b| b.to_vec()), Some(vec![0, 0]));
    // In registers each CTA moves its own copy: a zero block basis.
    let regs = s.reg_layout(&[128, 4], TmemAccess::B32x32, 4).unwrap();
    assert_eq!(regs.bases("block").iter().map(|b| b.to_vec()).collect::<Vec<_>>(), vec![vec![0, 0]]);
    let (msg, _) = fail("TensorMemoryScalesLayout(cga_layout=[[1, 0], [0, 0]])");
    assert!(msg.contains("must split the tensor or broadcast it (all bases zero), not both"), "{msg}");
}
