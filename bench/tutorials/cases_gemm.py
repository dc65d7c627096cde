"""The tensor-core tutorials: 06 fused attention, 08 grouped GEMM, 09 persistent matmul, 10 block-scaled matmul
(see case_types.py for what a case is)."""

from __future__ import annotations

import itertools

import numpy as np

from case_types import Case, Config, Desc, Gen, Problem, Ptrs, on_sm100
from refs import B200_SMS, H100_SMS, LOG2E, TOL, cdiv, f64, randn

LN2 = 0.6931471805599453


# --- 06 fused attention -----------------------------------------------------------------------------------------

def attn_probs(q, k, sm_scale, causal):
    """Softmax probabilities and the base-2 log-sum-exp the kernel stores in M (per row)."""
    s = f64(q) @ f64(k).swapaxes(-1, -2) * sm_scale
    if causal:
        n = s.shape[-1]
        s = np.where(np.tril(np.ones((n, n), bool)), s, -np.inf)
    mx = s.max(axis=-1, keepdims=True)
    e = np.exp(s - mx)
    lse = mx[..., 0] + np.log(e.sum(axis=-1))
    return e / e.sum(axis=-1, keepdims=True), lse / LN2


def p_attn_fwd(cfg, rng):
    g = cfg.consts
    D, BM, BN, fp8, ws = g["HEAD_DIM"], g["BLOCK_M"], g["BLOCK_N"], g["FP8_OUTPUT"], g["warp_specialize"]
    causal = g["STAGE"] == 3
    # fp8: the host views V^T as [HEAD_DIM, Z*H*N_CTX] with row stride N_CTX, and head h reads columns from
    # h*N_CTX*HEAD_DIM on: inside the view's bounds (else zero-padded, in Triton too) only for one head; one here.
    Z, H, N = (1, 1, 256) if fp8 else (1, 2, 256)
    y = Z * H * N
    sm_scale = 0.5
    if fp8:  # q, k in e5m2; v permuted so that memory holds each head's V^T (D x N_CTX)
        q, k, v = Gen(f"randn:{y}x{D}:fp8e5"), Gen(f"randn:{y}x{D}:fp8e5"), Gen(f"randn:{D}x{y}:fp8e5")
        o = Gen(f"zeros:{y}x{D}:fp8e5")
    else:
        q, k, v = (randn(rng, (y, D), np.float16, 0.5) for _ in range(3))
        o = np.zeros((y, D), np.float16)
    bufs = dict(q=q, k=k, v=v, o=o)
    if ws and g["IS_HOPPER"]:  # on Hopper, warp_specialize passes the tensors and the kernel makes descriptors
        descs = dict(desc_q=q, desc_k=k, desc_v=v, desc_o=o)
        extra = {}
    else:
        descs = dict(desc_q=Desc("q", (BM, D)), desc_k=Desc("k", (BN, D)),
                     desc_v=Desc("v", (D, BN)) if fp8 else Desc("v", (BN, D)), desc_o=Desc("o", (BM, D)))
        extra = bufs
    args = dict(sm_scale=sm_scale, M=np.zeros(y, np.float32), Z=Z, H=H, **descs, N_CTX=N)

    dev = ws and g["IS_HOPPER"]

    def check(b):
        out = "desc_o" if dev else "o"
        Q = f64(b["desc_q" if dev else "q"]).reshape(Z * H, N, D)
        K = f64(b["desc_k" if dev else "k"]).reshape(Z * H, N, D)
        V = f64(b["desc_v" if dev else "v"])
        V = V.reshape(Z * H, D, N).swapaxes(1, 2) if fp8 else V.reshape(Z * H, N, D)
        p, m = attn_probs(Q, K, sm_scale, causal)
        # fp8: P is rounded to e5m2 (2 mantissa bits) before P @ V and O is e5m2 too
        return [(out, b[out], p @ V, 0.2 if fp8 else TOL["fp16"]), ("M", b["M"], m, TOL["fp32"])]

    return Problem((cdiv(N, BM), Z * H, 1), args, check, extra)


def attn_fwd_configs():
    out = []
    for D, causal, fp8 in itertools.product((64, 128), (False, True), (False, True)):
        # the benchmark enables warp_specialize on Hopper for the non-causal forward pass
        for ws in (False, True) if not causal else (False,):
            for BM, BN, s, w in itertools.product((64, 128), (32, 64, 128), (2, 3, 4), (4, 8)):
                if BM * BN < 128 * 128 and w == 8:  # keep(): dropped on compute capability 9
                    continue
                if causal and BM < BN:  # prune_invalid_configs
                    continue
                if BN > D:  # tl.static_assert(BLOCK_N <= HEAD_DIM): the autotuner skips the config
                    continue
                label = f"D{D} {'causal' if causal else 'full'} {'e5m2' if fp8 else 'fp16'}{' ws' if ws else ''} " \
                        f"{BM}x{BN} s{s} w{w}"
                out.append(Config(label, {"HEAD_DIM": D, "BLOCK_M": BM, "BLOCK_N": BN, "FP8_OUTPUT": fp8,
                                          "STAGE": 3 if causal else 1, "warp_specialize": ws, "IS_HOPPER": True},
                                  num_warps=w, num_stages=s,
                                  fast=(D, causal, fp8, ws, BM, BN, s, w) == (64, True, False, False, 128, 64, 3, 4)))
    return out


def attn_fwd_bw():
    """On a capability-10 GPU: keep() drops nothing (its rule is for capability 9), the benchmark runs
    warp_specialize on and off for the causal and the full forward pass, always through host descriptors, with
    IS_HOPPER false and maxnreg 168 (head dim 128, fp16) or 80 when warp-specialized."""
    out = []
    for D, causal, fp8, ws in itertools.product((64, 128), (False, True), (False, True), (False, True)):
        for BM, BN, s, w in itertools.product((64, 128), (32, 64, 128), (2, 3, 4), (4, 8)):
            if (causal and BM < BN) or BN > D:  # prune_invalid_configs; tl.static_assert(BLOCK_N <= HEAD_DIM)
                continue
            label = f"D{D} {'causal' if causal else 'full'} {'e5m2' if fp8 else 'fp16'}{' ws' if ws else ''} " \
                    f"{BM}x{BN} s{s} w{w}"
            maxnreg = (168 if D == 128 and not fp8 else 80) if ws else None
            out.append(Config(label, {"HEAD_DIM": D, "BLOCK_M": BM, "BLOCK_N": BN, "FP8_OUTPUT": fp8,
                                      "STAGE": 3 if causal else 1, "warp_specialize": ws, "IS_HOPPER": False},
                              num_warps=w, num_stages=s, arch="sm_100a", maxnreg=maxnreg,
                              fast=(D, fp8, BM, BN, s, w) == (64, False, 128, 64, 3, 4)))
    return out


def p_attn_pre(cfg, rng):
    D = cfg.consts["HEAD_DIM"]
    Z, H, N = 1, 2, 256
    o, do = randn(rng, (Z * H * N, D), np.float16), randn(rng, (Z * H * N, D), np.float16)
    args = dict(O=o, DO=do, Delta=np.zeros(Z * H * N, np.float32), Z=Z, H=H, N_CTX=N)
    return Problem((N // 128, Z * H), args, lambda b: [("Delta", b["Delta"], (f64(o) * f64(do)).sum(1), 1e-5)])


def p_attn_bwd(cfg, rng):
    D, causal = cfg.consts["HEAD_DIM"], cfg.consts["CAUSAL"]
    Z, H, N = 1, 2, 256
    sm_scale = 0.5
    q, k, v, do = (randn(rng, (Z, H, N, D), np.float16, 0.5) for _ in range(4))
    arg_k = (f64(k) * (sm_scale * LOG2E)).astype(np.float16)  # the host scales K by sm_scale / ln 2
    p, m = attn_probs(q, k, sm_scale, causal)
    delta = ((p @ f64(v)) * f64(do)).sum(-1)
    m, delta = m.astype(np.float32), delta.astype(np.float32)
    # The kernel recomputes P from arg_k and M: P = 2^(q . arg_k - M).
    s2 = f64(q) @ f64(arg_k).swapaxes(-1, -2)
    if causal:
        s2 = np.where(np.tril(np.ones((N, N), bool)), s2, -np.inf)
    p = np.exp2(s2 - f64(m)[..., None])
    dp = f64(do) @ f64(v).swapaxes(-1, -2)
    ds = p * (dp - f64(delta)[..., None])
    dv = p.swapaxes(-1, -2) @ f64(do)
    dk = sm_scale * ds.swapaxes(-1, -2) @ f64(q)
    dq = LN2 * ds @ f64(arg_k)
    z = np.zeros_like(q)
    args = dict(Q=q, K=arg_k, V=v, sm_scale=sm_scale, DO=do, DQ=z, DK=z.copy(), DV=z.copy(), M=m, D=delta,
                stride_z=H * N * D, stride_h=N * D, stride_tok=D, stride_d=1, H=H, N_CTX=N)
    return Problem((N // 128, 1, Z * H), args, lambda b: [("DQ", b["DQ"], dq, 5e-3), ("DK", b["DK"], dk, 5e-3),
                                                          ("DV", b["DV"], dv, 5e-3)])


C06a = Case("06-fused-attention", "_attn_fwd", attn_fwd_configs(), p_attn_fwd, bw=attn_fwd_bw(), tc="tcgen05.mma")
C06b = Case("06-fused-attention", "_attn_bwd_preprocess", [
    Config(f"D{D} BLOCK_M=128", {"BLOCK_M": 128, "HEAD_DIM": D}, fast=D == 64) for D in (64, 128)], p_attn_pre)
C06c = Case("06-fused-attention", "_attn_bwd", [
    Config(f"D{D} {'causal' if c else 'full'} 32/128/128/32 s5 w4",
           {"BLOCK_M1": 32, "BLOCK_N1": 128, "BLOCK_M2": 128, "BLOCK_N2": 32, "BLK_SLICE_FACTOR": 2, "HEAD_DIM": D,
            "CAUSAL": c}, num_warps=4, num_stages=5, fast=(D, c) == (64, True))
    for D, c in itertools.product((64, 128), (False, True))], p_attn_bwd, tc="tcgen05.mma")


# --- 08 grouped GEMM --------------------------------------------------------------------------------------------

GROUP08 = [(256, 128, 192), (128, 256, 64), (128, 128, 128)]  # (M, N, K): multiples of every block (no masks)


def p_grouped(cfg, rng):
    tma = "FP8" in cfg.consts
    extra, sizes, lds, want = {}, [], [], {}
    for i, (M, N, K) in enumerate(GROUP08):
        a = rng.random((M, K)).astype(np.float16)
        b = rng.random((N, K) if tma else (K, N)).astype(np.float16)  # the TMA variant takes B transposed
        extra[f"a{i}"], extra[f"b{i}"], extra[f"c{i}"] = a, b, np.zeros((M, N), np.float16)
        sizes += [M, N, K]
        lds += [K, K if tma else N, N]
        want[f"c{i}"] = f64(a) @ (f64(b).T if tma else f64(b))
    args = dict(group_a_ptrs=Ptrs([f"a{i}" for i in range(3)]), group_b_ptrs=Ptrs([f"b{i}" for i in range(3)]),
                group_c_ptrs=Ptrs([f"c{i}" for i in range(3)]), group_gemm_sizes=np.array(sizes, np.int32),
                g_lds=np.array(lds, np.int32), group_size=len(GROUP08))
    return Problem((cfg.consts["NUM_SM"],), args, lambda b: [(n, b[n], w, TOL["fp16"]) for n, w in want.items()],
                   extra)


def grouped_configs(sms, arch="sm_90a"):
    """The autotuner's list: NUM_SM 84 and 128 written out, num_sms() (`sms`) in the last two."""
    return [Config(f"{bm}x{bn}x{bk} NUM_SM={sm}", {"BLOCK_SIZE_M": bm, "BLOCK_SIZE_N": bn, "BLOCK_SIZE_K": bk,
                                                   "NUM_SM": sm}, arch=arch, fast=(bm, sm) == (64, 84))
            for bm, bn, bk, sm in [(128, 128, 32, 84), (128, 128, 32, 128), (64, 64, 32, 84), (64, 64, 32, 128),
                                   (128, 128, 64, sms), (64, 128, 64, sms)]]


def grouped_tma_configs(sms, arch="sm_90a"):
    return [Config(f"128x{bn}x{bk} s{s} w{w}", {"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": bn, "BLOCK_SIZE_K": bk,
                                                 "FP8": False, "NUM_SM": sms}, num_warps=w, num_stages=s, arch=arch,
                   fast=(bn, bk, s, w) == (128, 64, 3, 4))
            for bn, bk, s, w in itertools.product((128, 256), (64, 128), (3, 4), (4, 8))]


C08a = Case("08-grouped-gemm", "grouped_matmul_kernel", grouped_configs(H100_SMS), p_grouped,
            bw=grouped_configs(B200_SMS, "sm_100a"), tc="tcgen05.mma")
C08b = Case("08-grouped-gemm", "grouped_matmul_tma_kernel", grouped_tma_configs(H100_SMS), p_grouped,
            bw=grouped_tma_configs(B200_SMS, "sm_100a"), tc="tcgen05.mma")


# --- 09 persistent matmul ---------------------------------------------------------------------------------------

M09, N09, K09 = 300, 208, 176  # N: fp8 rows must be 16-byte multiples for the host descriptors


def mm09_configs(subtile=False, extra=({},), fast_key=None):
    out = []
    for dt in ("fp16", "fp8e4nv"):
        for bn, bk, s, w in itertools.product((128, 256), (64, 128), (2, 3, 4), (4, 8)):
            for st in (False, True) if subtile else (None,):
                for e in extra:
                    if e.get("_no_subtile") and st:
                        continue
                    consts = {"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": bn, "BLOCK_SIZE_K": bk, "GROUP_SIZE_M": 8,
                              "_dtype": dt, **{k: v for k, v in e.items() if k != "_no_subtile"}}
                    if st is not None:
                        consts["EPILOGUE_SUBTILE"] = st
                    label = f"{dt} 128x{bn}x{bk} s{s} w{w}" + (" subtile" if st else "") + \
                        "".join(f" {k}={v}" for k, v in e.items() if not k.startswith("_"))
                    fast = (dt, bn, bk, s, w, bool(st)) == ("fp16", 128, 64, 3, 4, False) and not e.get("_no_subtile")
                    out.append(Config(label, consts, num_warps=w, num_stages=s, fast=fast))
    return out


def mm09_inputs(cfg, rng):
    dt = cfg.consts["_dtype"]
    if dt == "fp16":
        a = randn(rng, (M09, K09), np.float16)
        b = randn(rng, (N09, K09), np.float16)  # b = b.T.contiguous(): N x K
        c = np.zeros((M09, N09), np.float16)
    else:
        a, b, c = Gen(f"randn:{M09}x{K09}:{dt}"), Gen(f"randn:{N09}x{K09}:{dt}"), Gen(f"zeros:{M09}x{N09}:{dt}")
    tol = TOL["fp8"] if dt != "fp16" else TOL["fp16"]
    return a, b, c, tol


def mm09_check(names, tol):
    an, bn, cn = names
    return lambda b: [(cn, b[cn], f64(b[an]).reshape(M09, K09) @ f64(b[bn]).reshape(N09, K09).T, tol)]


def tiles(cfg):
    return cdiv(M09, cfg.consts["BLOCK_SIZE_M"]) * cdiv(N09, cfg.consts["BLOCK_SIZE_N"])


def p_mm09_ptr(cfg, rng, persistent=False):
    a, b, c, tol = mm09_inputs(cfg, rng)
    # matmul(a, b.T): B is K x N with strides (1, K)
    args = dict(a_ptr=a, b_ptr=b, c_ptr=c, M=M09, N=N09, K=K09, stride_am=K09, stride_ak=1, stride_bk=1,
                stride_bn=K09, stride_cm=N09, stride_cn=1)
    grid = min(cfg.consts["NUM_SMS"], tiles(cfg)) if persistent else tiles(cfg)
    return Problem((grid,), args, mm09_check(("a_ptr", "b_ptr", "c_ptr"), tol))


def p_mm09_tma(cfg, rng, persistent=False):
    a, b, c, tol = mm09_inputs(cfg, rng)
    g = cfg.consts
    bm, bn, bk = g["BLOCK_SIZE_M"], g["BLOCK_SIZE_N"], g["BLOCK_SIZE_K"]
    cb = (bm, bn // 2) if g.get("EPILOGUE_SUBTILE") else (bm, bn)
    args = dict(a_desc=Desc("a", (bm, bk)), b_desc=Desc("b", (bn, bk)), c_desc=Desc("c", cb), M=M09, N=N09, K=K09)
    grid = min(cfg.consts["NUM_SMS"], tiles(cfg)) if persistent else tiles(cfg)
    return Problem((grid,), args, mm09_check(("a", "b", "c"), tol), dict(a=a, b=b, c=c))


def p_mm09_devdesc(cfg, rng):
    a, b, c, tol = mm09_inputs(cfg, rng)
    args = dict(a_ptr=a, b_ptr=b, c_ptr=c, M=M09, N=N09, K=K09)
    return Problem((min(cfg.consts["NUM_SMS"], tiles(cfg)),), args, mm09_check(("a_ptr", "b_ptr", "c_ptr"), tol))


def fp8_out(cfgs):
    for c in cfgs:
        c.consts["FP8_OUTPUT"] = c.consts["_dtype"] != "fp16"
    return cfgs


# The tutorial's 8192 x 8192 x 512 problem (B transposed: stride_bk = 1, stride_bn = K).
T09 = dict(M=8192, N=8192, K=512, stride_am=512, stride_bn=512, stride_cm=8192)

def ws_both(**consts):
    """WARP_SPECIALIZE off and on, with `consts` (the tutorial runs both wherever it has tensor descriptors, on a
    capability-10 GPU for the host-descriptor kernels too)."""
    return tuple({**consts, "WARP_SPECIALIZE": ws} for ws in (False, True))


def mm09_bw(**kw):
    return on_sm100(mm09_configs(**kw))


# On a capability-10 GPU: the B200's 148 SMs, WARP_SPECIALIZE off and on for every descriptor kernel, and FLATTEN
# always (only Hopper's warp specialization turns it off).
C09 = [
    Case("09-persistent-matmul", "matmul_kernel", mm09_configs(), p_mm09_ptr, tut_ints=T09, bw=mm09_bw(),
         tc="tcgen05.mma"),
    # On Hopper the tutorial runs the host-descriptor kernels without warp specialization.
    Case("09-persistent-matmul", "matmul_kernel_tma", fp8_out(mm09_configs(extra=({"WARP_SPECIALIZE": False},))),
         p_mm09_tma, tut_ints=T09, bw=fp8_out(mm09_bw(extra=ws_both())), tc="tcgen05.mma"),
    Case("09-persistent-matmul", "matmul_kernel_persistent", mm09_configs(extra=({"NUM_SMS": H100_SMS},)),
         lambda c, r: p_mm09_ptr(c, r, persistent=True), tut_ints=T09,
         bw=mm09_bw(extra=({"NUM_SMS": B200_SMS},)), tc="tcgen05.mma"),
    Case("09-persistent-matmul", "matmul_kernel_tma_persistent",
         fp8_out(mm09_configs(subtile=True, extra=({"NUM_SMS": H100_SMS, "WARP_SPECIALIZE": False},))),
         lambda c, r: p_mm09_tma(c, r, persistent=True), tut_ints=T09,
         bw=fp8_out(mm09_bw(subtile=True, extra=ws_both(NUM_SMS=B200_SMS))), tc="tcgen05.mma"),
    # warp_specialize on Hopper runs without flatten, and prune_invalid_configs drops subtiling without flatten.
    Case("09-persistent-matmul", "matmul_kernel_descriptor_persistent",
         mm09_configs(subtile=True, extra=({"NUM_SMS": H100_SMS, "WARP_SPECIALIZE": False, "FLATTEN": True},
                                           {"NUM_SMS": H100_SMS, "WARP_SPECIALIZE": True, "FLATTEN": False,
                                            "_no_subtile": True})), p_mm09_devdesc, tut_ints=T09,
         bw=mm09_bw(subtile=True, extra=ws_both(NUM_SMS=B200_SMS, FLATTEN=True)), tc="tcgen05.mma"),
]


# --- 10 block-scaled matmul -------------------------------------------------------------------------------------

E2M1 = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6])


def unpack_e2m1(packed: np.ndarray) -> np.ndarray:
    """Two e2m1 values a byte, the even element in the low nibble (Triton's packing along K)."""
    lo, hi = E2M1[packed & 0xF], E2M1[packed >> 4]
    return np.stack([lo, hi], axis=-1).reshape(*packed.shape[:-1], packed.shape[-1] * 2)


def unpack_scale(s5: np.ndarray, rows: int, vec: int, K: int) -> np.ndarray:
    """The tutorial's 5-D scale layout [1, rows/128, K/vec/4, 2, 256] back to one scale per (row, k)."""
    s = s5.reshape(rows // 128, K // vec // 4, 32, 4, 4).transpose(0, 3, 2, 1, 4).reshape(rows, K // vec)
    return np.repeat(s, vec, axis=1)


def p_block_scaled(cfg, rng):
    g = cfg.consts
    kind = g["_kind"]
    BM, BN, BK, VEC = g["BLOCK_M"], g["BLOCK_N"], g["BLOCK_K"], g["VEC_SIZE"]
    M, N, K = g["M"], g["N"], g["K"]
    epa, epb = g["ELEM_PER_BYTE_A"], g["ELEM_PER_BYTE_B"]
    bufs = {}
    bufs["a"] = Gen(f"randn:{M}x{K}:fp8e4nv") if epa == 1 else rng.integers(0, 256, (M, K // 2), dtype=np.uint8)
    bufs["b"] = Gen(f"randn:{N}x{K}:fp8e4nv") if epb == 1 else rng.integers(0, 256, (N, K // 2), dtype=np.uint8)
    for x, rows in (("a_scale", M), ("b_scale", N)):
        shape = (1, rows // 128, K // VEC // 4, 2, 256)
        bufs[x] = Gen(f"rand:{'x'.join(map(str, shape))}:fp8e4nv") if kind == "nvfp4" else \
            rng.integers(124, 131, shape, dtype=np.uint8)  # e8m0: 2^-3 .. 2^3
    bufs["c"] = np.zeros((M, N), np.float16)
    rep_k = g["rep_k"]
    args = dict(a_desc=Desc("a", (BM, BK // epa)), a_scale_desc=Desc("a_scale", (1, g["rep_m"], rep_k, 2, 256)),
                b_desc=Desc("b", (BN, BK // epb)), b_scale_desc=Desc("b_scale", (1, g["rep_n"], rep_k, 2, 256)),
                c_desc=Desc("c", (BM, BN)))

    def operand(b, name, ep, rows):
        v = f64(b[name]).reshape(rows, K) if ep == 1 else unpack_e2m1(b[name].astype(np.uint8).reshape(rows, K // 2))
        s = f64(b[name + "_scale"])
        s = s if kind == "nvfp4" else np.exp2(s - 127)
        return v * unpack_scale(s, rows, VEC, K)

    def check(b):
        want = operand(b, "a", epa, M) @ operand(b, "b", epb, N).T
        return [("c", b["c"], want, 5e-3)]

    return Problem((cdiv(M, BM) * cdiv(N, BN), 1), args, check, bufs)


def block_scaled_configs():
    out = []
    for kind in ("nvfp4", "mxfp4", "mxfp8", "mixed"):
        BM, BN = 128, 256
        BK = 256 if "fp4" in kind else 128
        VEC = 16 if kind == "nvfp4" else 32
        M, N, K = 128, 256, 2 * BK
        consts = {"M": M, "N": N, "K": K, "output_type": 1, "ELEM_PER_BYTE_A": 2 if "fp4" in kind else 1,
                  "ELEM_PER_BYTE_B": 1 if kind == "mxfp8" else 2, "VEC_SIZE": VEC, "BLOCK_M": BM, "BLOCK_N": BN,
                  "BLOCK_K": BK, "rep_m": BM // 128, "rep_n": BN // 128, "rep_k": BK // VEC // 4, "NUM_STAGES": 4,
                  "_kind": kind}
        out.append(Config(f"{kind} {BM}x{BN}x{BK} stages=4", consts, arch="sm_100a", fast=kind == "mxfp8"))
    return out


def p_cdna4(cfg, rng):
    """The CDNA4 kernel's own problem: mxfp4 operands, e8m0 scales shuffled for the MFMA layout."""
    g = cfg.consts
    BM, BN, nonk = g["BLOCK_M"], g["BLOCK_N"], g["mfma_nonkdim"]
    M, N, K = 256, 128, 512
    x = rng.integers(0, 256, (M, K // 2), dtype=np.uint8)
    w = rng.integers(0, 256, (N, K // 2), dtype=np.uint8)
    xs = rng.integers(124, 128, (M, K // 32), dtype=np.uint8)
    ws = rng.integers(124, 128, (N, K // 32), dtype=np.uint8)

    def shuffle(s):  # shuffle_scales_cdna4
        sm, sn = s.shape
        if nonk == 32:
            s = s.reshape(sm // 32, 32, sn // 8, 4, 2, 1).transpose(0, 2, 4, 1, 3, 5)
        else:
            s = s.reshape(sm // 32, 2, 16, sn // 8, 2, 4, 1).transpose(0, 3, 5, 2, 4, 1, 6)
        return np.ascontiguousarray(s).reshape(sm // 32, sn * 32)

    xsh, wsh = shuffle(xs), shuffle(ws)
    want = (unpack_e2m1(x) * np.exp2(np.repeat(f64(xs), 32, 1) - 127)) @ \
        (unpack_e2m1(w) * np.exp2(np.repeat(f64(ws), 32, 1) - 127)).T
    # w = w.T: B is (K/2) x N with strides (1, K/2)
    # K is the packed operand's width (M, K = x.shape after packing two e2m1 per byte)
    args = dict(a_ptr=x, b_ptr=w, c_ptr=np.zeros((M, N), np.float32), a_scales_ptr=xsh, b_scales_ptr=wsh, M=M, N=N,
                K=K // 2, stride_am=K // 2, stride_ak=1, stride_bk=1, stride_bn=K // 2, stride_ck=0, stride_cm=N,
                stride_cn=1, stride_asm=xsh.shape[1], stride_ask=1, stride_bsn=wsh.shape[1], stride_bsk=1)
    return Problem((cdiv(M, BM) * cdiv(N, BN), 1), args, lambda b: [("c_ptr", b["c_ptr"], want, 1e-5)])


C10 = [
    Case("10-block-scaled-matmul", "block_scaled_matmul_kernel", block_scaled_configs(), p_block_scaled,
         bw=block_scaled_configs(), tc="block_scale"),
    # The CDNA4 kernel's body is portable Triton (loads, dot_scaled, reshapes); what is AMD's is its launch option
    # matrix_instr_nonkdim and its scale shuffle (a layout chosen for MFMA). It is checked as any kernel here.
    Case("10-block-scaled-matmul", "block_scaled_matmul_kernel_cdna4", [
        Config(f"128x128x256 mfma_nonkdim={n} s2 w8", {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 256,
                                                     "mfma_nonkdim": n}, num_warps=8, num_stages=2, fast=n == 16)
        for n in (16, 32)], p_cdna4, bw=[]),  # on a capability-10 GPU the tutorial runs the kernel above
]

CASES_GEMM = [C06a, C06b, C06c, C08a, C08b] + C09 + C10
