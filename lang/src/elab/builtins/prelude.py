"""tessel's prelude: the library functions of `triton.language` that Triton writes in its own language.

They follow Triton 3.x's `standard.py` and `random.py` (same dtype rules, same combine functions, same
Philox constants), so results match Triton's, bit for bit for the random numbers.
"""
import triton
import triton.language as tl

N_ROUNDS_DEFAULT = 10  # rounds of Philox


@triton.jit
def cdiv(x, div):
    return (x + div - 1) // div


@triton.jit
def sigmoid(x):
    return 1 / (1 + tl.exp(-x))


@triton.jit
def softmax(x, dim=None, keep_dims=False, ieee_rounding=False):
    if dim is None:
        _dim: tl.constexpr = 0
    else:
        _dim: tl.constexpr = dim
    z = x - max(x, _dim, keep_dims=keep_dims)
    num = tl.exp(z)
    den = sum(num, _dim, keep_dims=keep_dims)
    return tl.fdiv(num, den, ieee_rounding)


@triton.jit
def ravel(x, can_reorder=False):
    return tl.reshape(x, [x.numel], can_reorder=can_reorder)


@triton.jit
def swizzle2d(i, j, size_i, size_j, size_g):
    ij = i * size_j + j
    size_gj = size_g * size_j
    group_id = ij // size_gj
    off_i = group_id * size_g
    size_g = tl.minimum(size_i - off_i, size_g)
    ij = ij % size_gj
    new_i = off_i + ij % size_g
    new_j = ij // size_g
    return new_i, new_j


@triton.jit
def interleave(a, b):
    c = tl.join(a, b)
    if len(c.shape) == 1:
        return c
    else:
        return tl.reshape(c, c.shape[:-2] + (2 * c.shape[-2], ))


# Reductions


@triton.jit
def _sum_combine(a, b):
    return a + b


@triton.jit
def _prod_combine(a, b):
    return a * b


@triton.jit
def _xor_combine(a, b):
    return a ^ b


@triton.jit
def _or_combine(a, b):
    return a | b


@triton.jit
def _elementwise_max(a, b):
    return tl.maximum(a, b)


@triton.jit
def _elementwise_min(a, b):
    return tl.minimum(a, b)


@triton.jit
def _accumulation_input(input, dtype: tl.constexpr):
    # Integers narrower than 32 bits accumulate in 32 bits (with their signedness) unless a dtype is given.
    if dtype is not None:
        input = input.to(dtype)
    elif input.dtype.is_int_signed() and input.dtype.int_bitwidth < 32:
        input = input.to(tl.int32)
    elif input.dtype.is_int_unsigned() and input.dtype.int_bitwidth < 32:
        input = input.to(tl.uint32)
    return input


@triton.jit
def sum(input, axis=None, keep_dims=False, dtype: tl.constexpr = None):
    input = _accumulation_input(input, dtype)
    return tl.reduce(input, axis, _sum_combine, keep_dims=keep_dims)


@triton.jit
def xor_sum(input, axis=None, keep_dims=False):
    tl.static_assert(input.dtype.is_int(), "xor_sum only supported for integers")
    return tl.reduce(input, axis, _xor_combine, keep_dims=keep_dims)


@triton.jit
def reduce_or(input, axis, keep_dims=False):
    tl.static_assert(input.dtype.is_int(), "reduce_or only supported for integers")
    return tl.reduce(input, axis, _or_combine, keep_dims=keep_dims)


@triton.jit
def _argmax_combine_tie_break_left(value1, index1, value2, index2):
    tie = value1 == value2 and index1 < index2
    gt = value1 > value2 or tie
    v_ret = tl.where(gt, value1, value2)
    i_ret = tl.where(gt, index1, index2)
    return v_ret, i_ret


@triton.jit
def _argmax_combine_tie_break_fast(value1, index1, value2, index2):
    gt = value1 > value2
    v_ret = tl.where(gt, value1, value2)
    i_ret = tl.where(gt, index1, index2)
    return v_ret, i_ret


@triton.jit
def _argmin_combine_tie_break_left(value1, index1, value2, index2):
    tie = value1 == value2 and index1 < index2
    lt = value1 < value2 or tie
    v_ret = tl.where(lt, value1, value2)
    i_ret = tl.where(lt, index1, index2)
    return v_ret, i_ret


@triton.jit
def _argmin_combine_tie_break_fast(value1, index1, value2, index2):
    lt = value1 < value2
    v_ret = tl.where(lt, value1, value2)
    i_ret = tl.where(lt, index1, index2)
    return v_ret, i_ret


@triton.jit
def _reduce_with_indices(input, axis: tl.constexpr, combine_fn: tl.constexpr, keep_dims: tl.constexpr = False):
    tl.static_assert(axis is not None, "reductions that return indices need an axis")
    rank: tl.constexpr = len(input.shape)
    _axis: tl.constexpr = axis if axis >= 0 else axis + rank
    n: tl.constexpr = input.shape[_axis]
    index = tl.arange(0, n)
    if rank > 1:
        others: tl.constexpr = [d for d in range(rank) if d != _axis]
        index = tl.expand_dims(index, others)
        index = tl.broadcast_to(index, input.shape)
    rvalue, rindices = tl.reduce((input, index), _axis, combine_fn, keep_dims=keep_dims)
    return rvalue, rindices


@triton.jit
def _min_or_max(input, axis, return_indices, return_indices_tie_break_left, keep_dims, combine, combine_left,
                combine_fast):
    # The shared body of `max` and `min`: bf16 and narrow types reduce in 32 bits, as Triton does.
    if input.dtype == tl.bfloat16:
        input = input.to(tl.float32)
    if return_indices:
        if return_indices_tie_break_left:
            return _reduce_with_indices(input, axis, combine_left, keep_dims=keep_dims)
        else:
            return _reduce_with_indices(input, axis, combine_fast, keep_dims=keep_dims)
    else:
        if input.dtype.primitive_bitwidth < 32:
            if input.dtype.is_floating():
                input = input.to(tl.float32)
            else:
                input = input.to(tl.int32)
        return tl.reduce(input, axis, combine, keep_dims=keep_dims)


@triton.jit
def max(input, axis=None, return_indices=False, return_indices_tie_break_left=True, keep_dims=False):
    return _min_or_max(input, axis, return_indices, return_indices_tie_break_left, keep_dims, _elementwise_max,
                       _argmax_combine_tie_break_left, _argmax_combine_tie_break_fast)


@triton.jit
def min(input, axis=None, return_indices=False, return_indices_tie_break_left=True, keep_dims=False):
    return _min_or_max(input, axis, return_indices, return_indices_tie_break_left, keep_dims, _elementwise_min,
                       _argmin_combine_tie_break_left, _argmin_combine_tie_break_fast)


@triton.jit
def argmax(input, axis, tie_break_left=True, keep_dims=False):
    (_, ret) = max(input, axis, return_indices=True, return_indices_tie_break_left=tie_break_left, keep_dims=keep_dims)
    return ret


@triton.jit
def argmin(input, axis, tie_break_left=True, keep_dims=False):
    _, ret = min(input, axis, return_indices=True, return_indices_tie_break_left=tie_break_left, keep_dims=keep_dims)
    return ret


# Scans


@triton.jit
def cumsum(input, axis=0, reverse=False, dtype: tl.constexpr = None):
    input = _accumulation_input(input, dtype)
    return tl.associative_scan(input, axis, _sum_combine, reverse)


@triton.jit
def cumprod(input, axis=0, reverse=False):
    return tl.associative_scan(input, axis, _prod_combine, reverse)


# Random numbers: Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11)


@triton.jit
def philox_impl(c0, c1, c2, c3, k0, k1, n_rounds: tl.constexpr = N_ROUNDS_DEFAULT):
    if c0.dtype == tl.uint32:
        PHILOX_KEY_A: tl.constexpr = 0x9E3779B9
        PHILOX_KEY_B: tl.constexpr = 0xBB67AE85
        PHILOX_ROUND_A: tl.constexpr = 0xD2511F53
        PHILOX_ROUND_B: tl.constexpr = 0xCD9E8D57
    else:
        tl.static_assert(c0.dtype == tl.uint64, "dtype not supported in philox_impl")
        PHILOX_KEY_A: tl.constexpr = 0x9E3779B97F4A7C15
        PHILOX_KEY_B: tl.constexpr = 0xBB67AE8584CAA73B
        PHILOX_ROUND_A: tl.constexpr = 0xD2E7470EE14C6C93
        PHILOX_ROUND_B: tl.constexpr = 0xCA5A826395121157
    for _ in tl.static_range(n_rounds):
        A = PHILOX_ROUND_A
        B = PHILOX_ROUND_B
        _c0, _c2 = c0, c2
        c0 = tl.umulhi(B, _c2) ^ c1 ^ k0
        c2 = tl.umulhi(A, _c0) ^ c3 ^ k1
        c1 = B * _c2
        c3 = A * _c0
        k0 = k0 + PHILOX_KEY_A
        k1 = k1 + PHILOX_KEY_B
    return c0, c1, c2, c3


@triton.jit
def philox(seed, c0, c1, c2, c3, n_rounds: tl.constexpr = N_ROUNDS_DEFAULT):
    seed = tl.to_tensor(seed)
    tl.static_assert(seed.dtype.is_int(), "the seed must be an integer")
    seed = seed.to(tl.uint64)
    c0 = tl.to_tensor(c0)
    c1 = tl.to_tensor(c1)
    c2 = tl.to_tensor(c2)
    c3 = tl.to_tensor(c3)
    if c0.dtype.primitive_bitwidth == 32:
        int_dtype: tl.constexpr = tl.uint32
        seed_hi = ((seed >> 32) & 0xffffffff).to(tl.uint32)
        seed_lo = (seed & 0xffffffff).to(tl.uint32)
    else:
        tl.static_assert(c0.dtype.primitive_bitwidth == 64, "bitwidth not supported in philox")
        int_dtype: tl.constexpr = tl.uint64
        seed_hi = tl.full((1, ), 0, dtype=int_dtype)
        seed_lo = seed
    c0 = c0.to(int_dtype, bitcast=True)
    c1 = c1.to(int_dtype, bitcast=True)
    c2 = c2.to(int_dtype, bitcast=True)
    c3 = c3.to(int_dtype, bitcast=True)
    return philox_impl(c0, c1, c2, c3, seed_lo, seed_hi, n_rounds)


@triton.jit
def randint4x(seed, offset, n_rounds: tl.constexpr = N_ROUNDS_DEFAULT):
    _0 = offset * 0
    return philox(seed, offset, _0, _0, _0, n_rounds)


@triton.jit
def randint(seed, offset, n_rounds: tl.constexpr = N_ROUNDS_DEFAULT):
    ret, _, _, _ = randint4x(seed, offset, n_rounds)
    return ret


@triton.jit
def uint_to_uniform_float(x):
    # Maps a random integer to [0, 1): the largest scale with MAX_INT * scale < 1.0 after rounding.
    if x.dtype == tl.uint32 or x.dtype == tl.int32:
        x = x.to(tl.int32, bitcast=True)
        scale = 4.6566127342e-10
    else:
        tl.static_assert(x.dtype == tl.uint64 or x.dtype == tl.int64, "uint_to_uniform_float needs 32- or 64-bit integers")
        x = x.to(tl.int64, bitcast=True)
        scale = 1.0842020432385337e-19
    x = tl.where(x < 0, -x - 1, x)
    return x * scale


@triton.jit
def rand(seed, offset, n_rounds: tl.constexpr = N_ROUNDS_DEFAULT):
    offset = offset.to(tl.uint32, bitcast=True)
    source = randint(seed, offset, n_rounds)
    return uint_to_uniform_float(source)


@triton.jit
def pair_uniform_to_normal(u1, u2):
    # Box-Muller transform.
    u1 = tl.maximum(1.0e-7, u1)
    th = 6.283185307179586 * u2
    r = tl.sqrt(-2.0 * tl.log(u1))
    return r * tl.cos(th), r * tl.sin(th)


@triton.jit
def randn(seed, offset, n_rounds: tl.constexpr = N_ROUNDS_DEFAULT):
    i1, i2, _, _ = randint4x(seed, offset, n_rounds)
    u1 = uint_to_uniform_float(i1)
    u2 = uint_to_uniform_float(i2)
    n1, _ = pair_uniform_to_normal(u1, u2)
    return n1


# Flip and sort. Triton builds them from reshapes, xor tricks and sum-reductions over size-2 axes; these are
# tessel's own: the axis is viewed as `log2(n)` axes of size 2 and pairs are exchanged with `split`/`join`, so
# they lower through the shape ops codegen already has.


def _norm_dim(dim, rank, what):
    if dim is None:
        return rank - 1
    if dim < -rank or dim >= rank:
        raise ValueError(f"{what}: dim {dim} is out of range for a tensor of rank {rank}")
    if dim < 0:
        return dim + rank
    return dim


def _log2(i):
    # `triton.language.standard._log2` (inductor's helpers import it): floor(log2(i)) of a compile-time int.
    log2 = 0
    n = i
    while n > 1:
        n >>= 1
        log2 += 1
    return log2


def _is_power_of_two(i):
    return (i & (i - 1)) == 0 and i != 0


def get_int_dtype(bitwidth, signed):
    # `triton.language.core.get_int_dtype` (torch inductor's sort helpers): the integer dtype of a width.
    if bitwidth == 1:
        return tl.int1
    if bitwidth != 8 and bitwidth != 16 and bitwidth != 32 and bitwidth != 64:
        raise ValueError(f"get_int_dtype: no integer type of {bitwidth} bits")
    if signed:
        return (tl.int8, tl.int16, tl.int32, tl.int64)[_log2(bitwidth) - 3]
    return (tl.uint8, tl.uint16, tl.uint32, tl.uint64)[_log2(bitwidth) - 3]


def _log2_exact(n, what):
    k = 0
    while (1 << k) < n:
        k += 1
    if (1 << k) != n:
        raise ValueError(f"{what}: the dimension must be a power of two, got {n}")
    return k


def _to_last(rank, axis):
    return [d for d in range(rank) if d != axis] + [axis]


def _from_last(rank, axis):
    return [d if d < axis else (rank - 1 if d == axis else d - 1) for d in range(rank)]


@triton.jit
def _swap_pairs(y, axis: tl.constexpr):
    # Exchanges the two halves of the size-2 axis `axis`.
    rank: tl.constexpr = len(y.shape)
    z = tl.permute(y, _to_last(rank, axis))
    a, b = tl.split(z)
    z = tl.join(b, a)
    return tl.permute(z, _from_last(rank, axis))


@triton.jit
def flip(x, dim=None):
    rank: tl.constexpr = len(x.shape)
    d: tl.constexpr = _norm_dim(dim, rank, "flip")
    steps: tl.constexpr = _log2_exact(x.shape[d], "flip")
    if steps == 0:
        return x
    # Index i of the axis becomes n-1-i = i ^ (n-1): every one of its bits flips.
    y = tl.reshape(x, list(x.shape[:d]) + [2] * steps + list(x.shape[d + 1:]))
    for i in tl.static_range(steps):
        y = _swap_pairs(y, d + i)
    return tl.reshape(y, x.shape)


@triton.jit
def _compare_and_swap(x, descending, i: tl.constexpr, stage: tl.constexpr, n_dims: tl.constexpr):
    # Compare-and-swap of the elements whose last-axis indices differ in bit `n_dims - 1 - i`; with
    # `descending` None, the direction alternates with bit `stage` of the index (a bitonic merge step).
    n_outer: tl.constexpr = x.numel >> n_dims
    outer: tl.constexpr = n_outer << i
    inner: tl.constexpr = 1 << (n_dims - i - 1)
    y = tl.reshape(x, [outer, 2, inner])
    y = tl.permute(y, [0, 2, 1])
    left, right = tl.split(y)
    if descending is None:
        o = tl.arange(0, outer)[:, None] % (1 << i)
        j = tl.arange(0, inner)[None, :]
        flip = (((o << (n_dims - i)) | j) >> stage) & 1
        swap = (left > right) != (flip != 0)
    else:
        swap = (left > right) != descending
    new_left = tl.where(swap, right, left)
    new_right = tl.where(swap, left, right)
    y = tl.join(new_left, new_right)
    y = tl.permute(y, [0, 2, 1])
    return tl.reshape(y, x.shape)


@triton.jit
def _sort_last(x, descending: tl.constexpr):
    n_dims: tl.constexpr = _log2_exact(x.shape[len(x.shape) - 1], "sort")
    for stage in tl.static_range(1, n_dims + 1):
        for i in tl.static_range(n_dims - stage, n_dims):
            if stage < n_dims:
                x = _compare_and_swap(x, None, i, stage, n_dims)
            else:
                x = _compare_and_swap(x, descending, i, stage, n_dims)
    return x


@triton.jit
def sort(x, dim: tl.constexpr = None, descending: tl.constexpr = False):
    rank: tl.constexpr = len(x.shape)
    d: tl.constexpr = _norm_dim(dim, rank, "sort")
    if d == rank - 1:
        return _sort_last(x, descending)
    else:
        y = _sort_last(tl.permute(x, _to_last(rank, d)), descending)
        return tl.permute(y, _from_last(rank, d))


# dot_scaled: Triton's microscaling dot, lowered as Triton lowers it where the tensor cores have no scaled MMA (its
# DecomposeScaledBlocked pass): each operand is upcast to bf16 (fp16 when either format is fp16), scaled per 32
# elements along K by 2^(scale - 127) (an e8m0 scale is an f32 exponent field: scale 0 gives 0, and 255 gives NaN
# unless fast_math), or, for NVFP4 (e2m1 with fp8e4nv scales), per 16 elements by the scale's value; then an ordinary
# dot accumulates in f32. A form the block-scaled MMA may take (e2m1/e4m3/e5m2 operands packed along K, both scales,
# an f32 result) becomes the `dot_scaled` op, which carries both the packed operands with their scales (an e2m1
# operand beside an fp8 one as e4m3 values) and the upcast ones: layout assignment runs it on sm_100a's block-scaled
# tcgen05.mma when that takes it, else as the dot of the upcast operands (tile/src/layout/dot_scaled.rs).

_MX_FORMATS = ("e2m1", "e4m3", "e5m2", "bf16", "fp16")


def _mx_check(fmt, x, side, k_pack, scaled):
    if fmt not in _MX_FORMATS:
        raise ValueError(f"dot_scaled: {side}_format must be one of e2m1, e4m3, e5m2, bf16, fp16, got {fmt!r}")
    if len(x.shape) != 2:
        raise ValueError(f"dot_scaled: {side} must be a 2-D tensor, got shape {list(x.shape)} (batched dot_scaled "
                         "is not supported yet)")
    if not k_pack and fmt != "e2m1":
        raise ValueError(f"dot_scaled: only e2m1 operands can be packed along another dim than K ({side}_k_pack)")
    # The raw bits in an integer tensor, or the format's own dtype.
    want = {"e2m1": (tl.uint8, ), "e4m3": (tl.uint8, tl.float8e4nv), "e5m2": (tl.uint8, tl.float8e5),
            "bf16": (tl.uint16, tl.bfloat16), "fp16": (tl.uint16, tl.float16)}[fmt]
    names = {"e2m1": "uint8", "e4m3": "uint8 or fp8e4nv", "e5m2": "uint8 or fp8e5", "bf16": "uint16 or bf16",
             "fp16": "uint16 or fp16"}[fmt]
    if x.dtype not in want:
        raise TypeError(f"dot_scaled: a {fmt} {side} must hold {names}, got {x.dtype}")
    return 0


def _mx_group(scale):
    # Elements along K per scale: 32 for e8m0 scales (uint8, the MX formats), 16 for e4m3 scales (NVFP4).
    if scale.dtype == tl.float8e4nv:
        return 16
    return 32


def _mx_scale_check(scale, side, fmt, rows, k):
    if scale is not None:
        if scale.dtype != tl.uint8 and scale.dtype != tl.float8e4nv:
            raise TypeError(f"dot_scaled: {side}_scale must hold uint8 (e8m0) or fp8e4nv (NVFP4) scales, got "
                            f"{scale.dtype}")
        if scale.dtype == tl.float8e4nv and fmt != "e2m1":
            raise TypeError(f"dot_scaled: fp8e4nv scales go with e2m1 operands (NVFP4), not {fmt}")
        group = _mx_group(scale)
        if k % group != 0:
            raise ValueError(f"dot_scaled: K = {k} must be a multiple of {group} (one scale per {group} elements "
                             "along K)")
        if list(scale.shape) != [rows, k // group]:
            raise ValueError(f"dot_scaled: {side}_scale must have shape {[rows, k // group]}, got "
                             f"{list(scale.shape)}")
    return 0


def _mx_compute(lhs_format, rhs_format):
    if lhs_format == "fp16" or rhs_format == "fp16":
        return tl.float16
    return tl.bfloat16


@triton.jit
def _e2m1_bits(n, bias: tl.constexpr, mant: tl.constexpr, half: tl.constexpr, sign: tl.constexpr):
    # One fp4 value per nibble (sign, 2 exponent bits of bias 1, 1 mantissa bit; 0b001 is the subnormal 0.5) as
    # the bits of a wider float format: the exponent rebiased by `bias` above mantissa bit `mant`, `half` the
    # format's 0.5, the sign at bit `sign`.
    n = n.to(tl.int32)
    mag = n & 7
    bits = tl.where(mag >= 2, (((mag >> 1) + bias) << (mant + 1)) | ((mag & 1) << mant),
                    tl.where(mag == 1, half, 0))
    return bits | ((n >> 3) << sign)


@triton.jit
def _e2m1_to_bf16(n):
    return _e2m1_bits(n, 126, 6, 0x3F00, 15).to(tl.uint16).to(tl.bfloat16, bitcast=True)


@triton.jit
def _e2m1_to_e4m3(n):
    # Every e2m1 value is an fp8e4nv value.
    return _e2m1_bits(n, 6, 2, 0x30, 7).to(tl.uint8).to(tl.float8e4nv, bitcast=True)


@triton.jit
def _e2m1_unpack(x, along_rows: tl.constexpr, as_e4m3: tl.constexpr):
    # e2m1 pairs unpacked along the packed dim (the low nibble first), as bf16 or e4m3 values.
    if as_e4m3:
        lo = _e2m1_to_e4m3(x & 15)
        hi = _e2m1_to_e4m3(x >> 4)
    else:
        lo = _e2m1_to_bf16(x & 15)
        hi = _e2m1_to_bf16(x >> 4)
    if along_rows:
        return tl.reshape(tl.permute(tl.join(lo, hi), (0, 2, 1)), (2 * x.shape[0], x.shape[1]))
    else:
        return tl.reshape(tl.join(lo, hi), (x.shape[0], 2 * x.shape[1]))


@triton.jit
def _mx_upcast(x, fmt: tl.constexpr, ct: tl.constexpr, along_rows: tl.constexpr):
    # The operand's values in the compute type.
    if fmt == "e2m1":
        v = _e2m1_unpack(x, along_rows, False)
    elif fmt == "e4m3":
        v = x.to(tl.float8e4nv, bitcast=True)
    elif fmt == "e5m2":
        v = x.to(tl.float8e5, bitcast=True)
    elif fmt == "bf16":
        v = x.to(tl.bfloat16, bitcast=True)
    else:
        v = x.to(tl.float16, bitcast=True)
    return v.to(ct)


@triton.jit
def _mx_scale(v, scale, ct: tl.constexpr, fast_math: tl.constexpr):
    # v [R, K] times its scale per G elements along K (scale [R, K / G]): 2^(scale - 127) for e8m0 (G = 32), the
    # e4m3 value itself for NVFP4 (G = 16; exact in bf16 and fp16, a NaN scale gives NaN products).
    R: tl.constexpr = v.shape[0]
    K: tl.constexpr = v.shape[1]
    G: tl.constexpr = _mx_group(scale)
    if scale.dtype == tl.float8e4nv:
        s = scale.to(ct)
    elif ct == tl.bfloat16:
        bits16 = (scale.to(tl.int32) << 7).to(tl.uint16)
        s = bits16.to(tl.bfloat16, bitcast=True)
    else:
        bits32 = (scale.to(tl.int32) << 23).to(tl.uint32)
        s = bits32.to(tl.float32, bitcast=True).to(tl.float16)
    s = tl.reshape(tl.broadcast_to(tl.expand_dims(s, 2), (R, K // G, G)), (R, K))
    out = v * s
    if not fast_math and scale.dtype == tl.uint8:
        raw = tl.reshape(tl.broadcast_to(tl.expand_dims(scale, 2), (R, K // G, G)), (R, K))
        out = tl.where(raw == 255, float("nan"), out)
    return out


def _mx_native(lhs_format, rhs_format, lhs_scale, rhs_scale, lhs_k_pack, rhs_k_pack, acc, out_dtype):
    # Whether the block-scaled MMA may take the dot (layout assignment decides on the target and shapes).
    mx = ("e2m1", "e4m3", "e5m2")
    if lhs_format not in mx or rhs_format not in mx or lhs_scale is None or rhs_scale is None:
        return False
    if not lhs_k_pack or not rhs_k_pack:
        return False
    if acc is None:
        return out_dtype == tl.float32
    return acc.dtype == tl.float32


def _mx_mma_format(fmt, other):
    # The format the MMA reads an operand in: e2m1 beside an 8-bit operand as e4m3 (the same values; the MMA
    # would read it padded to a byte per value in shared memory, which is what e4m3 takes).
    if fmt == "e2m1" and other != "e2m1":
        return "e4m3"
    return fmt


@triton.jit
def _mx_packed(x, fmt: tl.constexpr, mma_fmt: tl.constexpr, along_rows: tl.constexpr):
    # The operand as the MMA reads it: fp8 values in their own dtype, e2m1 pairs in bytes, or e2m1 as e4m3.
    if mma_fmt != fmt:
        return _e2m1_unpack(x, along_rows, True)
    elif fmt == "e4m3":
        return x.to(tl.float8e4nv, bitcast=True)
    elif fmt == "e5m2":
        return x.to(tl.float8e5, bitcast=True)
    else:
        return x


@triton.jit
def dot_scaled(lhs, lhs_scale, lhs_format: tl.constexpr, rhs, rhs_scale, rhs_format: tl.constexpr, acc=None,
               fast_math: tl.constexpr = False, lhs_k_pack: tl.constexpr = True, rhs_k_pack: tl.constexpr = True,
               out_dtype: tl.constexpr = tl.float32):
    _c0: tl.constexpr = _mx_check(lhs_format, lhs, "lhs", lhs_k_pack, lhs_scale is not None)
    _c1: tl.constexpr = _mx_check(rhs_format, rhs, "rhs", rhs_k_pack, rhs_scale is not None)
    ct: tl.constexpr = _mx_compute(lhs_format, rhs_format)
    a = _mx_upcast(lhs, lhs_format, ct, not lhs_k_pack)
    b = _mx_upcast(rhs, rhs_format, ct, rhs_k_pack)
    _c2: tl.constexpr = _mx_scale_check(lhs_scale, "lhs", lhs_format, a.shape[0], a.shape[1])
    _c3: tl.constexpr = _mx_scale_check(rhs_scale, "rhs", rhs_format, b.shape[1], b.shape[0])
    if lhs_scale is not None:
        a = _mx_scale(a, lhs_scale, ct, fast_math)
    if rhs_scale is not None:
        b = tl.trans(_mx_scale(tl.trans(b), rhs_scale, ct, fast_math))
    native: tl.constexpr = _mx_native(lhs_format, rhs_format, lhs_scale, rhs_scale, lhs_k_pack, rhs_k_pack, acc,
                                      out_dtype)
    if native:
        if acc is None:
            acc0 = tl.zeros((a.shape[0], b.shape[1]), dtype=tl.float32)
        else:
            acc0 = acc
        fa: tl.constexpr = _mx_mma_format(lhs_format, rhs_format)
        fb: tl.constexpr = _mx_mma_format(rhs_format, lhs_format)
        return tl._dot_scaled_op(_mx_packed(lhs, lhs_format, fa, False), lhs_scale, fa,
                                 _mx_packed(rhs, rhs_format, fb, True), rhs_scale, fb, acc0, a, b)
    if acc is None:
        return tl.dot(a, b, out_dtype=out_dtype)
    else:
        return tl.dot(a, b, acc)
