"""The host side of Triton's device-function modules: `triton.language.core`, `triton.language.standard`,
`triton.language.math`, `triton.language.extra.libdevice`, `triton.language.extra.cuda(.libdevice)`.

tessel compiles kernel bodies from their source, resolving `from triton.language.extra.libdevice import rsqrt`
(and `libdevice.rsqrt(x)`, `tl.math.rsqrt(x)`) itself; these modules exist so that host code imports the same
names as with Triton. Each device function is a host stand-in whose `__module__` and `__name__` say what it is
(`triton.language.extra.libdevice`, `rsqrt`), so that whatever reads Python's bindings maps it back to the
device function; calling one on the host raises, as calling a device function outside a kernel does in Triton.
The names are those tessel's kernel compiler implements (`lang/src/elab/builtins`: `tests/test_runtime_face.py`
checks that the lists agree); a name it lacks is an ImportError here, as on a Triton without it.
"""

from __future__ import annotations

import inspect

from .. import language as tl

# tessel's `triton.language.math` (lang/src/elab/builtins/mod.rs MATH_NAMES).
MATH_NAMES = (
    "exp exp2 log log2 sqrt sqrt_rn rsqrt sin cos abs erf floor ceil fma umulhi div_rn fdiv maximum minimum clamp"
).split()

# `triton.language.extra.libdevice` beyond the math names (lang/src/elab/builtins/libdevice.rs LIBDEVICE_NAMES
# and CONVERSIONS, libdevice_int.rs NAMES).
LIBDEVICE_NAMES = """
tanh sinh cosh tan asin acos atan asinh acosh atanh log1p expm1 log10 exp10 cbrt sinpi cospi rcbrt logb erfinv erfc
normcdf erfcx erfcinv normcdfinv cyl_bessel_i0 cyl_bessel_i1 tgamma lgamma j0 j1 y0 y1 jn yn norm3d norm4d rnorm3d
rnorm4d rsqrt_rn rcp64h trunc rint nearbyint round atan2 hypot rhypot pow fmod remainder add_rn add_rz add_rd add_ru
sub_rn sub_rz sub_rd sub_ru mul_rn mul_rz mul_rd mul_ru div_rz div_rd div_ru rcp_rn rcp_rz rcp_rd rcp_ru sqrt_rz
sqrt_rd sqrt_ru ldexp scalbn ilogb fma_rn fma_rz fma_rd fma_ru fast_expf fast_exp10f fast_log2f fast_logf
fast_log10f fast_sinf fast_cosf fast_tanf fast_powf fast_dividef fmax fmin fdim saturatef nextafter float_as_int
int_as_float double_as_longlong longlong_as_double double2float_rn int2float_rz int2float_rd int2float_ru
uint2float_rz uint2float_rd uint2float_ru ll2float_rz ll2float_rd ll2float_ru ull2float_rz ull2float_rd ull2float_ru
ll2double_rz ll2double_rd ll2double_ru ull2double_rz ull2double_rd ull2double_ru double2float_rz double2float_rd
double2float_ru int2float_rn uint2float_rn ll2float_rn ull2float_rn int2double_rn uint2double_rn ll2double_rn
ull2double_rn isnan isinf finitef isfinited signbit copysign
float2int_rn float2int_rz float2int_rd float2int_ru float2uint_rn float2uint_rz float2uint_rd float2uint_ru
float2ll_rn float2ll_rz float2ll_rd float2ll_ru float2ull_rn float2ull_rz float2ull_rd float2ull_ru double2int_rn
double2int_rz double2int_rd double2int_ru double2uint_rn double2uint_rz double2uint_rd double2uint_ru double2ll_rn
double2ll_rz double2ll_rd double2ll_ru double2ull_rn double2ull_rz double2ull_rd double2ull_ru
popc clz brev ffs mulhi mul24 sad hadd rhadd byte_perm float_as_uint uint_as_float double2hiint double2loint
hiloint2double llrint llround
""".split()

# The kernel-language functions Triton writes in `triton.language.standard` and tessel in its prelude
# (lang/src/elab/builtins/mod.rs PRELUDE_NAMES): torch's inductor imports `_log2` from there.
STANDARD_NAMES = ("cdiv _log2 _is_power_of_two get_int_dtype sigmoid softmax sum max min argmax argmin xor_sum reduce_or cumsum "
                  "cumprod ravel swizzle2d rand randn randint randint4x philox philox_impl uint_to_uniform_float "
                  "pair_uniform_to_normal interleave flip sort dot_scaled").split()

# `triton.language.extra.cuda`'s own functions (lang/src/elab/builtins/extra.rs CUDA_NAMES).
CUDA_NAMES = ("globaltimer smid num_threads num_warps convert_custom_float8 convert_custom_float8_sm70 "
              "convert_custom_float8_sm80 gdc_wait gdc_launch_dependents").split()

_SIGNATURE = inspect.Signature([
    inspect.Parameter("args", inspect.Parameter.VAR_POSITIONAL),
    inspect.Parameter("_semantic", inspect.Parameter.KEYWORD_ONLY, default=None),
    inspect.Parameter("kwargs", inspect.Parameter.VAR_KEYWORD),
])


def device_function(module: str, name: str):
    """The host stand-in for the device function `module.name`: it names itself, and calling it raises."""

    def stand_in(*args, _semantic=None, **kwargs):
        raise RuntimeError(
            f"{module}.{name} is a device function: call it inside a @triton.jit kernel (tessel compiles kernel "
            "bodies from their source; on the host it cannot run)"
        )

    stand_in.__name__ = stand_in.__qualname__ = name
    stand_in.__module__ = module
    stand_in.__signature__ = _SIGNATURE  # Triton 3.6's builtins take `_semantic` (torch's inductor probes it)
    stand_in.__triton_builtin__ = True
    return stand_in


def functions(module: str, names) -> dict:
    return {n: device_function(module, n) for n in names}


def builtin(fn):
    """`triton.language.core.builtin`: marks `fn` as a builtin of the kernel language. tessel's compiler
    implements its builtins itself, so a kernel calling a library's own builtin does not compile."""
    fn.__triton_builtin__ = True
    return fn


def is_builtin(fn) -> bool:
    return getattr(fn, "__triton_builtin__", False)


def _unwrap_if_constexpr(o):
    return o.value if isinstance(o, tl.constexpr) else o


def core_attrs() -> dict:
    """`triton.language.core`'s host names besides `triton.language`'s (the module falls back to those)."""
    from ..gluon._aggregate import aggregate

    attrs = functions("triton.language.core", ["view", "reshape", "full", "zeros", "load", "store", "cast", "dot",
                                               "where", "arange", "program_id", "num_programs", "static_assert",
                                               "static_print", "device_print", "device_assert"])
    attrs.update(_aggregate=aggregate, builtin=builtin, is_builtin=is_builtin,
                 _unwrap_if_constexpr=_unwrap_if_constexpr)
    return attrs


def module_getattr(module: str, fallback):
    """A module `__getattr__` that answers from `fallback` (`triton.language.core` from `triton.language`)."""

    def __getattr__(name):
        if name.startswith("__"):
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        return getattr(fallback, name)

    return __getattr__


def modules(make_module) -> dict:
    """The modules by name, made with the shim's `make_module(name, doc, **attrs)`."""
    core = make_module("triton.language.core", "triton.language's core names (host side)", **core_attrs())
    core.__getattr__ = module_getattr("triton.language.core", tl)
    standard = make_module("triton.language.standard", "triton.language's functions written in the language",
                           **functions("triton.language.standard", STANDARD_NAMES))
    standard.__getattr__ = module_getattr("triton.language.standard", tl)
    math_mod = make_module("triton.language.math", "device math functions: compiled by tessel inside kernels",
                           **functions("triton.language.math", MATH_NAMES))
    ld = "triton.language.extra.libdevice"
    libdevice = make_module(ld, "libdevice's device functions: compiled by tessel inside kernels",
                            **functions(ld, MATH_NAMES + LIBDEVICE_NAMES))
    cld = "triton.language.extra.cuda.libdevice"
    cuda_libdevice = make_module(cld, "libdevice's device functions: compiled by tessel inside kernels",
                                 **functions(cld, MATH_NAMES + LIBDEVICE_NAMES))
    cuda = make_module("triton.language.extra.cuda", "CUDA device functions: compiled by tessel inside kernels",
                       libdevice=cuda_libdevice, **functions("triton.language.extra.cuda", CUDA_NAMES))
    extra = make_module("triton.language.extra", "tessel's triton.language.extra", libdevice=libdevice, cuda=cuda)
    return {
        "triton.language.core": core,
        "triton.language.standard": standard,
        "triton.language.math": math_mod,
        "triton.language.extra": extra,
        "triton.language.extra.libdevice": libdevice,
        "triton.language.extra.cuda": cuda,
        "triton.language.extra.cuda.libdevice": cuda_libdevice,
    }
