"""The entry kernels of the public Gluon examples (python/examples/gluon of triton-lang/triton) at their own
configurations, for bench/gluon_tutorials.py (files under its `--examples` directory). All are Blackwell's
(sm_100a). The examples' sources are not copied here; each case is what the example's host code launches for one
of its tests, worked out by hand from that host code:

- 01-attention-forward: test_op_consan's problem (Z=1, H=1, N_CTX=1024, HEAD_DIM=64, fp16, not causal), on one CTA
  and on a CTA pair, at select_kernel_config's choice for it (256x128 blocks per CTA, SPLIT_EXP_FACTOR 4, 6 KV
  buffers, the exp2 turnstile, maxnreg 128), NUM_SMS of a 148-SM B200. Its MMA warp issues the next S over the
  tensor memory an earlier P V may still read, with no wait between: the PTX ISA runs two tcgen05 MMAs in issue
  order only into one accumulator, so under the interpreter's default (`--mma-order isa`) that is refused, naming
  both MMAs. The example relies on the tensor cores running one thread's MMAs in issue order; its cases run with
  `--mma-order issue`, which allows that and checks the rest (the label says so).
- 02-conv-fprop, -dgrad, -wgrad: each test's "asymmetric stride" problem (N=1 or 16, Ci=96, 1x8 image, Co=128,
  a 1x2 filter, stride (1, 2), no padding) through its `*_fixed` entry point's tile shape (fprop 128x128x64 with
  3 buffers; dgrad and wgrad 128x256x64 with 2), the im2col descriptors as its host code builds them. dgrad's host
  launches the kernel once per stride phase (two here, sub_b 0 and 1): one case each, each checking the columns
  its launch writes and that it leaves the others alone.
- 03-matmul-multicta: test_matmul_matches_torch at 100x200x200, 128x128x64 blocks, 2 stages, for each of its CTA
  layouts (1, 2 and 4 CTAs), with the descriptors' block shapes and cga_layouts of matmul_tma_set_block_size_hook.
- 04-2cta-block-scale-matmul: test_mma_scaled_warp_specialized's 1-CTA (BLOCK_N 128, epilogue 64, 5 buffers)
  and 2-CTA (BLOCK_M 256, 6 buffers) configurations under both schedulers, at 256x256x640, mxfp8 (and the fp4
  formats on one CTA). Operands and scales are made as tutorial 11's cases make them. As tutorial 11's
  warp-specialized kernel does, its MMA warp allocates the scales' tensor memory inside the K loop (the same
  planned columns every step) and, from a tile's second K step on, copies each step's scales into it while the
  previous step's MMA may still read them: the PTX ISA runs a tcgen05.cp before a later MMA in issue order, not
  an MMA before a later tcgen05.cp, so the interpreter's default refuses that, naming the copy and the MMA. A case
  of several K steps (every one here) runs with `--mma-order issue` (the label says so).
- 05-moe-bmm1-fused-gather: compile-only. Its host code builds every input with the `triton_kernels` package
  (ragged routing metadata, the MX4 value-shuffled weight layout, swiglu), which we cannot have. The kernel is
  compiled at test_op_consan's configuration (gpt-oss-120b, batch 128: _select_tiny16_config(4)); the weight
  descriptor's block is our reading of BlackwellMX4ValueShuffledLayout ([1, 1, 1, BLOCK_N, BLOCK_K / 2]).
"""

import numpy as np

from gluon_tutorial_cases import (Case, cdiv, dequantized, matmul_ref, packed_block_scales, quantized,
                                  unpacked_block_scales, vec_size)

B200_SMS = 148
BITS = {"fp16": 16, "bf16": 16, "fp32": 32, "fp8e4nv": 8, "u8": 8}


GL_DTYPE = {"fp16": "float16", "bf16": "bfloat16", "fp32": "float32", "fp8e4nv": "float8e4nv", "u8": "uint8"}


def nvmma_desc(dtype, block, cga=None, swizzle=None, rank=None, fp4_padded=False):
    """A descriptor's signature type with its layout: NVMMASharedLayout.get_default_for(block, dtype,
    cga_layout=cga) as the host code makes it (the swizzle from the per-CTA block), or an NVMMASharedLayout with
    the given swizzle."""
    block_s = ", ".join(map(str, block))
    cga_s = f", cga_layout={[list(b) for b in cga]}" if cga else ""
    fp4_s = ", fp4_padded=True" if fp4_padded else ""
    if swizzle is None:
        layout = f"NVMMASharedLayout.get_default_for([{block_s}], {GL_DTYPE[dtype]}{fp4_s}{cga_s})"
    else:
        layout = (f"NVMMASharedLayout(swizzle_byte_width={swizzle}, element_bitwidth={BITS[dtype]}, "
                  f"rank={rank or len(block)}{fp4_s}{cga_s})")
    return f"tensordesc<{dtype}[{block_s}],{layout}>"


def ex(*args, **kw):
    return Case(*args, dir="examples", arch="sm_100a", **kw)


CASES = []


# 01-attention-forward.
def attention_ref(z_h, n_ctx, sm_scale):
    def ref(b):
        q = b["q"].reshape(z_h, n_ctx, -1).astype(np.float64)
        k = b["k"].reshape(z_h, n_ctx, -1).astype(np.float64)
        v = b["v"].reshape(z_h, n_ctx, -1).astype(np.float64)
        s = np.einsum("bmd,bnd->bmn", q, k) * sm_scale
        p = np.exp(s - s.max(axis=-1, keepdims=True))
        p /= p.sum(axis=-1, keepdims=True)
        return [("o", np.einsum("bmn,bnd->bmd", p, v).reshape(z_h * n_ctx, -1), 1e-2)]

    return ref


def attention_case(cta_layout):
    Z, H, N_CTX, D, SM_SCALE = 1, 1, 1024, 64, 0.5
    split_m = 1 << sum(b[0] != 0 for b in cta_layout)
    block_m = 256 * split_m
    num_ctas = 2 ** len(cta_layout)
    lhs = ((1, 0),) if cta_layout else ()
    rhs = ((0, 1),) if cta_layout else ()
    k_cga = tuple((b[1], b[0]) for b in rhs)
    y = Z * H * N_CTX
    sig = ",".join(["fp32", "*fp32", "i32", "i32", "i32",
                    nvmma_desc("fp16", (block_m // 2, D), lhs), nvmma_desc("fp16", (128, D), k_cga),
                    nvmma_desc("fp16", (128, D), rhs), nvmma_desc("fp16", (block_m // 2, D), cta_layout)])
    consts = [("BLOCK_M", block_m), ("BLOCK_N", 128), ("HEAD_DIM", D), ("GROUP_SIZE_N", 1),
              ("NUM_SMS", max(1, B200_SMS // num_ctas)), ("STAGE", 1), ("SPLIT_EXP_FACTOR", 4), ("dtype", "float16"),
              ("num_warps", 4), ("use_tmem_red", False), ("NUM_KV_BUFFERS", 6), ("USE_EXP2_TURNSTILE", True),
              ("CGA_LAYOUT", repr(tuple(cta_layout)))]
    args = [("sm_scale", SM_SCALE), ("M", f"fill:nan:{y}"), ("Z", Z), ("H", H), ("N_CTX", N_CTX),
            ("q", f"randn:{y}x{D}:fp16"), ("k", f"randn:{y}x{D}:fp16"), ("v", f"randn:{y}x{D}:fp16"),
            ("o", f"fill:nan:{y}x{D}:fp16"), ("desc_q", f"desc:q:block={block_m // 2}x{D}"),
            ("desc_k", f"desc:k:block=128x{D}"), ("desc_v", f"desc:v:block=128x{D}"),
            ("desc_o", f"desc:o:block={block_m // 2}x{D}")]
    grid = min(max(1, B200_SMS // num_ctas), cdiv(N_CTX, block_m) * Z * H)
    return ex("01-attention-forward.py", "attention_kernel",
              f"ex01 attention_kernel (Z=1 H=1 N_CTX=1024 D=64 fp16, {num_ctas} CTA{'s' if num_ctas > 1 else ''}; "
              "MMAs in issue order)",
              sig, consts, 4, str(grid), args, attention_ref(Z * H, N_CTX, SM_SCALE),
              extra=["--maxnreg", "128", "--num-ctas", str(num_ctas)], run_extra=["--mma-order", "issue"])


CASES += [attention_case(()), attention_case(((1, 0),))]


# 02-conv: the asymmetric-stride problem of the three tests.
CONV = dict(Ci=96, H=1, W=8, Co=128, R=1, S=2, sh=1, sw=2, ph=0, pw=0)


def conv_out(H, W, R, S, sh, sw, ph, pw):
    return (H + 2 * ph - R) // sh + 1, (W + 2 * pw - S) // sw + 1


def conv_fprop(x, w, sh, sw, ph, pw):
    """y[n, oh, ow, co] = sum_{r, s, ci} x[n, oh sh - ph + r, ow sw - pw + s, ci] w[co, r, s, ci], in float64."""
    N, H, W, _ = x.shape
    Co, R, S, _ = w.shape
    oh, ow = conv_out(H, W, R, S, sh, sw, ph, pw)
    xp = np.pad(x, ((0, 0), (ph, ph + sh), (pw, pw + sw), (0, 0)))
    y = np.zeros((N, oh, ow, Co))
    for r in range(R):
        for s in range(S):
            patch = xp[:, r:r + oh * sh:sh, s:s + ow * sw:sw, :]
            y += np.einsum("nhwc,oc->nhwo", patch, w[:, r, s, :])
    return y


def fprop_case(N=1):
    c = CONV
    oh, ow = conv_out(c["H"], c["W"], c["R"], c["S"], c["sh"], c["sw"], c["ph"], c["pw"])
    upper = ((oh - 1) * c["sh"] + 1 - c["H"] - c["ph"], (ow - 1) * c["sw"] + 1 - c["W"] - c["pw"])
    K = c["R"] * c["S"] * c["Ci"]
    args = [("x", f"randn:{N}x{c['H']}x{c['W']}x{c['Ci']}:bf16"), ("w", f"randn:{c['Co']}x{c['R']}x{c['S']}x{c['Ci']}:bf16"),
            ("in_desc", f"desc_im2col:x:block=128x64:lower={-c['ph']}x{-c['pw']}:upper={upper[0]}x{upper[1]}"
                        f":element_strides=1x{c['sh']}x{c['sw']}x1"),
            ("weight_desc", f"desc:w:{c['Co']}x{K}:block=128x64"), ("output", f"fill:nan:{N}x{oh}x{ow}x{c['Co']}:bf16"),
            ("N", N), ("H", c["H"]), ("W", c["W"]), ("Ci", c["Ci"]), ("Co", c["Co"]), ("R", c["R"]), ("S", c["S"]),
            ("out_h", oh), ("out_w", ow), ("output_stride_n", oh * ow * c["Co"]), ("output_stride_h", ow * c["Co"]),
            ("output_stride_w", c["Co"]), ("stride_h", c["sh"]), ("stride_w", c["sw"]), ("pad_h", c["ph"]),
            ("pad_w", c["pw"])]
    consts = [("BLOCK_M", 128), ("BLOCK_N", 128), ("BLOCK_K", 64), ("GROUP_SIZE_M", 4), ("num_buffers", 3),
              ("num_acc_buffers", 2), ("num_warps", 4)]

    def ref(b):
        x = b["x"].reshape(N, c["H"], c["W"], c["Ci"]).astype(np.float64)
        w = b["w"].reshape(c["Co"], c["R"], c["S"], c["Ci"]).astype(np.float64)
        return [("output", conv_fprop(x, w, c["sh"], c["sw"], c["ph"], c["pw"]), 1e-2)]

    grid = min(B200_SMS, cdiv(N * oh * ow, 128) * cdiv(c["Co"], 128))
    return ex("02-conv-fprop.py", "conv2d_fprop_kernel", f"ex02 conv2d_fprop_kernel (N={N} Ci=96 1x8 Co=128 1x2 stride (1, 2))",
              "tensordesc_im2col<bf16[128, 64]>,tensordesc<bf16[128, 64]>,*bf16" + ",i32" * 16, consts, 4, str(grid),
              args, ref)


def dgrad_case(sub_b, N=16):
    """One of conv2d_dgrad_fixed's launches (the stride phase sub_b along w): the input gradient at the columns
    w = sub_b + 2 j, from W_rot = weight.flip(1, 2).permute(3, 1, 2, 0) flattened to (Ci, R S Co)."""
    c = CONV
    Ci, Co, R, S, sh, sw, ph, pw = c["Ci"], c["Co"], c["R"], c["S"], c["sh"], c["sw"], c["ph"], c["pw"]
    oh, ow = conv_out(c["H"], c["W"], R, S, sh, sw, ph, pw)
    H_sub, W_sub = cdiv(c["H"], sh), cdiv(c["W"], sw)
    pwp = S - 1 - pw
    s0 = ((pwp - sub_b) % sw + sw) % sw
    S_eff = (S - s0 + sw - 1) // sw
    off_b = (sub_b + s0 - pwp) // sw
    off_a = 0
    args = [("dy", f"randn:{N}x{oh}x{ow}x{Co}:bf16"), ("w_rot", f"randn:{Ci}x{R * S * Co}:bf16"),
            ("grad_y_desc", f"desc_im2col:dy:block=128x64:lower={off_a}x{off_b}:upper={H_sub + off_a - oh}x"
                            f"{W_sub + off_b - ow}"),
            ("weight_desc", "desc:w_rot:block=256x64"), ("output", f"fill:nan:{N}x{c['H']}x{c['W']}x{Ci}:bf16"),
            ("N", N), ("Co", Co), ("Ci", Ci), ("S_orig", S), ("H_sub", H_sub), ("W_sub", W_sub), ("H_full", c["H"]),
            ("W_full", c["W"]), ("output_stride_n", c["H"] * c["W"] * Ci), ("output_stride_h", c["W"] * Ci),
            ("output_stride_w", Ci), ("conv_stride_h", sh), ("conv_stride_w", sw), ("sub_a", 0), ("sub_b", sub_b),
            ("r0", 0), ("s0", s0), ("R_eff", 1), ("S_eff", S_eff), ("pad_h", -off_a), ("pad_w", -off_b)]
    consts = [("STORE_SPLIT_K_PARTIALS", False), ("BLOCK_M", 128), ("BLOCK_N", 256), ("BLOCK_K", 64),
              ("GROUP_SIZE_M", 4), ("SPLIT_K", 1), ("num_buffers", 2), ("num_acc_buffers", 2), ("num_warps", 4)]

    def ref(b):
        dy = b["dy"].reshape(N, oh, ow, Co).astype(np.float64)
        w_rot = b["w_rot"].reshape(Ci, R, S, Co).astype(np.float64)
        w = w_rot[:, ::-1, ::-1, :].transpose(3, 1, 2, 0)  # (Co, R, S, Ci)
        dx = np.zeros((N, c["H"] + 2 * ph + sh, c["W"] + 2 * pw + sw, Ci))
        for r in range(R):
            for s in range(S):
                dx[:, r:r + oh * sh:sh, s:s + ow * sw:sw, :] += np.einsum("nhwo,oc->nhwc", dy, w[:, r, s, :])
        dx = dx[:, ph:ph + c["H"], pw:pw + c["W"], :]
        dx[:, :, [j for j in range(c["W"]) if j % sw != sub_b], :] = np.nan  # the other launch's columns
        return [("output", dx, 1e-2)]

    grid = min(B200_SMS, cdiv(N * H_sub * W_sub, 128) * cdiv(Ci, 256))  # SPLIT_K 1: one split
    return ex("02-conv-dgrad.py", "conv2d_dgrad_kernel",
              f"ex02 conv2d_dgrad_kernel (N={N} Ci=96 1x8 Co=128 1x2 stride (1, 2), sub_b={sub_b})",
              "tensordesc_im2col<bf16[128, 64]>,tensordesc<bf16[256, 64]>,*bf16" + ",i32" * 21, consts, 4, str(grid),
              args, ref)


def wgrad_case(N=16):
    c = CONV
    Ci, Co, R, S, sh, sw, ph, pw = c["Ci"], c["Co"], c["R"], c["S"], c["sh"], c["sw"], c["ph"], c["pw"]
    oh, ow = conv_out(c["H"], c["W"], R, S, sh, sw, ph, pw)
    upper = ((oh - 1) * sh + 1 - c["H"] - ph, (ow - 1) * sw + 1 - c["W"] - pw)
    K_GEMM = R * S * Ci
    m_spatial = N * oh * ow
    args = [("x", f"randn:{N}x{c['H']}x{c['W']}x{Ci}:bf16"), ("dy", f"randn:{m_spatial}x{Co}:bf16"),
            ("in_desc", f"desc_im2col:x:block=64x256:lower={-ph}x{-pw}:upper={upper[0]}x{upper[1]}"
                        f":element_strides=1x{sh}x{sw}x1"),
            ("grad_out_desc", "desc:dy:block=64x128"), ("grad_weight", f"fill:nan:{Co}x{K_GEMM}"),
            ("N", N), ("Ci", Ci), ("Co", Co), ("R", R), ("S", S), ("out_h", oh), ("out_w", ow), ("stride_h", sh),
            ("stride_w", sw), ("pad_h", ph), ("pad_w", pw), ("K_GEMM", K_GEMM), ("grad_weight_stride_0", K_GEMM)]
    consts = [("BLOCK_M", 128), ("BLOCK_N", 256), ("BLOCK_K", 64), ("SPLIT_K", 1), ("num_buffers", 2),
              ("num_acc_buffers", 2), ("num_warps", 4)]

    def ref(b):
        x = b["x"].reshape(N, c["H"], c["W"], Ci).astype(np.float64)
        dy = b["dy"].reshape(N, oh, ow, Co).astype(np.float64)
        xp = np.pad(x, ((0, 0), (ph, ph + sh), (pw, pw + sw), (0, 0)))
        gw = np.zeros((Co, R, S, Ci))
        for r in range(R):
            for s in range(S):
                gw[:, r, s, :] = np.einsum("nhwo,nhwc->oc", dy, xp[:, r:r + oh * sh:sh, s:s + ow * sw:sw, :])
        return [("grad_weight", gw.reshape(Co, K_GEMM), 1e-3)]

    grid = min(B200_SMS, cdiv(Co, 128) * R * S * cdiv(Ci, 256))
    return ex("02-conv-wgrad.py", "conv2d_wgrad_kernel",
              f"ex02 conv2d_wgrad_kernel (N={N} Ci=96 1x8 Co=128 1x2 stride (1, 2))",
              "tensordesc_im2col<bf16[64, 256]>,tensordesc<bf16[64, 128]>,*fp32" + ",i32" * 13, consts, 4, str(grid),
              args, ref)


CASES += [fprop_case(), dgrad_case(0), dgrad_case(1), wgrad_case()]


# 03-matmul-multicta.
def split_dim(cga, dim):
    return 1 << sum(b[dim] != 0 for b in cga)


def operand_cga(cga, op_idx):
    if not cga:
        return ()
    first = (1, 0) if op_idx == 0 else (0, 1)
    return (first, *[(b[0], 0) if op_idx == 0 else (0, 2 * b[1]) for b in cga[1:]])


def matmul_multicta_case(cga, bm=128, bn=128, bk=64, stages=2, M=100, N=200, K=200):
    epi_n = bn if (bm == 64 and cga) or split_dim(cga, 1) > 1 else 32
    tile_m = bm * split_dim(cga, 0)
    num_ctas = 2 ** len(cga)
    sig = ",".join([nvmma_desc("fp16", (tile_m, bk), operand_cga(cga, 0)),
                    nvmma_desc("fp16", (bk, bn), operand_cga(cga, 1)),
                    nvmma_desc("fp16", (tile_m, epi_n), cga), "i32", "i32", "i32"])
    consts = [("BLOCK_SIZE_M", bm), ("BLOCK_SIZE_N", bn), ("BLOCK_SIZE_K", bk), ("GRID_MINOR_DIM", 0),
              ("GRID_TILE_WIDTH", 8), ("STAGES", stages), ("ACC_STAGES", 2), ("CGA_LAYOUT", repr(tuple(cga))),
              ("EPILOGUE_SIZE_N", epi_n), ("SUBTILE_STAGES", 4)]
    args = [("a", f"randn:{M}x{K}:fp16"), ("b", f"randn:{K}x{N}:fp16"), ("c", f"fill:nan:{M}x{N}:fp16"),
            ("a_desc", f"desc:a:block={tile_m}x{bk}"), ("b_desc", f"desc:b:block={bk}x{bn}"),
            ("c_desc", f"desc:c:block={tile_m}x{epi_n}"), ("M", M), ("N", N), ("K", K)]
    grid = cdiv(M, bm * (2 if cga else 1)) * cdiv(N, bn)
    return ex("03-matmul-multicta.py", "_matmul_kernel",
              f"ex03 _matmul_kernel ({M}x{N}x{K}, {bm}x{bn}x{bk}, {stages} stages, {num_ctas} CTA{'s' if num_ctas > 1 else ''})",
              sig, consts, 4, str(grid), args, matmul_ref("a", "b", "c", (M, K), (K, N)),
              extra=["--num-ctas", str(num_ctas)])


CASES += [matmul_multicta_case(cga) for cga in ((), ((1, 0),), ((1, 0), (2, 0)))]


# 04-2cta-block-scale-matmul.
def mma_scaled_ws_case(fmts, num_ctas, block_n, epi_n, nbuf, scheduler, M=256, N=256, K=640):
    fa, fb = fmts
    bm = 256 if num_ctas > 1 else 128
    bk = 128 if "mxfp8" in fmts else 256
    acc_bufs = 2 if block_n < 256 else 1
    cga = ((1, 0),) if num_ctas > 1 else ()
    mixed = fa != fb
    per = lambda f: 1 if f == "mxfp8" else 2
    dt = lambda f: "fp8e4nv" if f == "mxfp8" else "u8"
    vec = vec_size(fa)
    a_block, b_block = (bm, bk // per(fa)), (block_n, bk // per(fb))
    a_sig = nvmma_desc(dt(fa), a_block, cga, fp4_padded=mixed and fa != "mxfp8")
    b_sig = nvmma_desc(dt(fb), b_block, cga, fp4_padded=mixed and fb != "mxfp8")
    sdt = "fp8e4nv" if fa == "nvfp4" else "u8"
    rep_k = bk // (vec * 4)
    sa_block, sb_block = (1, bm // 128, rep_k, 2, 256), (1, block_n // 128, rep_k, 2, 256)
    sa_sig = nvmma_desc(sdt, sa_block, [[0, 1, 0, 0, 0]] if cga else None, swizzle=0)
    sb_sig = nvmma_desc(sdt, sb_block, [[0, 0, 0, 0, 0]] if cga else None, swizzle=0)
    sig = ",".join([a_sig, b_sig, nvmma_desc("fp16", (bm, epi_n), cga), sa_sig, sb_sig, "i32", "i32", "i32", "i32"])
    rep_m, rep_n, srep_k = cdiv(M, 128), cdiv(N, 128), cdiv(K // vec, 4)
    args = [("C", f"fill:nan:{M}x{N}:fp16"),
            ("a_desc", f"desc:A:{M}x{K // per(fa)}:block={a_block[0]}x{a_block[1]}"),
            ("b_desc", f"desc:B:{N}x{K // per(fb)}:block={b_block[0]}x{b_block[1]}"),
            ("c_desc", f"desc:C:block={bm}x{epi_n}"),
            ("a_scale_desc", f"desc:SA:1x{rep_m}x{srep_k}x2x256:block={'x'.join(map(str, sa_block))}"),
            ("b_scale_desc", f"desc:SB:1x{rep_n}x{srep_k}x2x256:block={'x'.join(map(str, sb_block))}"),
            ("M", M), ("N", N), ("K", K), ("A_ELEM_PER_BYTE", per(fa))]
    consts = [("num_buffers", nbuf), ("BLOCK_M", bm), ("BLOCK_N", block_n), ("BLOCK_K", bk),
              ("EPILOGUE_BLOCK_N", epi_n), ("num_acc_buffers", acc_bufs), ("GRID_MINOR_DIM", 0),
              ("GRID_TILE_WIDTH", 4), ("CGA_LAYOUT", repr(cga)), ("scheduler", scheduler)]

    def inputs(rng):
        (av, sa), (bv, sb) = quantized(rng, M, K, fa), quantized(rng, N, K, fb)
        return {"A": av, "B": bv, "SA": (packed_block_scales(sa[0]), sa[1]), "SB": (packed_block_scales(sb[0]), sb[1])}

    def ref(b):
        sk = K // vec
        sa = unpacked_block_scales(b["SA"].reshape(-1, cdiv(sk, 4), 32, 4, 4), M, sk)
        sb = unpacked_block_scales(b["SB"].reshape(-1, cdiv(sk, 4), 32, 4, 4), N, sk)
        a = dequantized(b["A"], sa, M, K, fa)
        bb = dequantized(b["B"], sb, N, K, fb)
        return [("C", a @ bb.T, 1e-3)]

    num_pid = cdiv(M, bm) * cdiv(N, block_n)
    grid = num_pid if scheduler == "SCHEDULER_CLC" else max(1, min(num_pid, B200_SMS // num_ctas))
    sched = "CLC" if scheduler == "SCHEDULER_CLC" else "static persistent"
    # A tile of several K steps copies scales over those an MMA in flight reads: refused under the ISA's order.
    in_issue_order = cdiv(K, bk) >= 2
    return ex("04-2cta-block-scale-matmul.py", "mma_scaled_warp_specialized_kernel",
              f"ex04 mma_scaled_warp_specialized_kernel ({fa} x {fb}, {M}x{N}x{K}, {num_ctas} CTA"
              f"{'s' if num_ctas > 1 else ''}, BLOCK_N {block_n}, {nbuf} buffers, {sched}"
              f"{'; copies in issue order' if in_issue_order else ''})",
              sig, consts, 4, str(grid), args, ref, inputs=inputs, extra=["--num-ctas", str(num_ctas)],
              run_extra=["--mma-order", "issue"] if in_issue_order else [])


CASES += [mma_scaled_ws_case(("mxfp8", "mxfp8"), n, 128, 64, nbuf, s)
          for n, nbuf in ((1, 5), (2, 6)) for s in ("SCHEDULER_CLC", "SCHEDULER_SPS")]
CASES += [mma_scaled_ws_case(f, 1, 128, 64, 5, "SCHEDULER_SPS") for f in (("mxfp4", "mxfp4"), ("nvfp4", "nvfp4"))]


# 05-moe-bmm1-fused-gather: compile-only (its inputs are triton_kernels objects; see the module docstring). The
# configuration is test_op_consan's: gpt-oss-120b (K = 2880, N = 2 x 2880, 16 local experts), batch 128 with 4
# experts per token (M = 512 gathered rows), _select_tiny16_config(4): 16x256x128 blocks on a CTA pair, 10 X and
# 6 W buffers, one accumulator, 4 warps, maxnreg 52. The swiglu constants are drawn by the test at random in
# [1, 1.2) and [1.3, 1.5); these are two such values. x_scale and out_scale are pointers, w_scale is None (the
# test's InFlexData() for the weights), and there is no fpsan probe.
CASES += [
    ex("05-moe-bmm1-fused-gather.py", "ws_matmul_kernel", "ex05 ws_matmul_kernel (gpt-oss-120b, batch 128, 2 CTAs)",
       ",".join([nvmma_desc("fp8e4nv", (1, 128), ((1, 0),), swizzle=128),
                 nvmma_desc("u8", (1, 1, 1, 256, 64), ((0, 0, 0, 1, 0),), swizzle=128, fp4_padded=True),
                 nvmma_desc("u8", (1, 2, 1, 2, 256), ((0, 1, 0, 0, 0),), swizzle=0),
                 nvmma_desc("fp8e4nv", (16, 128), swizzle=128),
                 "*fp8e4nv", "*fp32", "i32", "*i32", "*i32", "*i32", "*i32", "*i32", "*fp32", "*fp32"]),
       [("w_scale_ptr", None), ("acc_fpsan_probe_ptr", None), ("M", 512), ("N", 5760), ("K", 2880),
        ("NUM_SLICES", 16), ("SWIGLU_ALPHA", 1.1), ("SWIGLU_LIMIT", 1.4), ("REDUCTION_N", 2),
        ("FLEXPOINT_SATURATE_INF", True), ("BLOCK_M", 16), ("BLOCK_N", 256), ("BLOCK_K", 128),
        ("NUM_SMS", B200_SMS), ("X_NUM_BUFS", 10), ("W_NUM_BUFS", 6), ("ACC_NUM_BUFS", 1),
        ("LOAD_ACTIVATION_WARPS", 1), ("LOAD_WEIGHT_WARPS", 1), ("MMA_WARPS", 1), ("LOAD_ACTIVATION_REGS", 40),
        ("LOAD_WEIGHT_REGS", 32), ("MMA_REGS", 32), ("SWIGLU_SUBTILE_FACTOR", 1), ("BAND_N", 26),
        ("X_GATHER_MULTICAST", True), ("W_SCALE_MULTICAST", True), ("FORCE_EPILOGUE_WARPS_N1", True),
        ("REUSE_GATHER_INDICES", False), ("INLINE_MMA_INPUT_RELEASE", False), ("SCALE_SIZE_OUTER", 128),
        ("SCALE_SIZE_INNER", 4), ("MXFP_BLOCK_SIZE", 32), ("REVERSE_K_TILES", False)],
       4, str(B200_SMS), [], has_reference=False, compile_only=True,
       extra=["--maxnreg", "52", "--num-ctas", "2"]),
]
