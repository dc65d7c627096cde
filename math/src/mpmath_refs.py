"""The references of tessel-math's tests: mpmath at 200 bits, rounded once to f64.

    python3 math/src/mpmath_refs.py erfcinv 0.5 1e-300 1.9
    python3 math/src/mpmath_refs.py jn 5,2.5 30,1e4

prints one `(x, f(x)),` row per argument (`(n, x, f(n, x)),` for jn/yn), as the tests' tables hold them (f32
tables hold f32 arguments, written as the f64 of the same value). Every row of a table can be checked this way.
The precision grows with x's exponent (200 bits past it), which the Bessel functions' huge arguments need.
"""

import sys

import mpmath as mp

mp.mp.prec = 200


def erfcinv(x):
    """erfc(y) = x: erfinv(1 − x) where 1 − x loses nothing, else Newton on ln erfc (x down to subnormals)."""
    if x > 1:
        return -erfcinv(2 - x)
    if x == 1:
        return mp.mpf(0)
    if x > mp.mpf("1e-3"):
        return mp.erfinv(1 - x)
    return mp.findroot(lambda y: mp.log(mp.erfc(y)) - mp.log(x), mp.sqrt(-mp.log(x)))


def erfcx(x):
    """e^(x²)·erfc(x); the asymptotic series past 1e6, where mpmath's erfc overflows its own checks."""
    if x > 1e6:
        t = 1 / (2 * x * x)
        s, term = mp.mpf(0), mp.mpf(1)
        for k in range(8):
            s += term
            term *= -(2 * k + 1) * t
        return s / (x * mp.sqrt(mp.pi))
    return mp.exp(x * x) * mp.erfc(x)


FUNCTIONS = {
    "erfc": mp.erfc,
    "normcdf": mp.ncdf,
    "rcbrt": lambda x: mp.sign(x) / mp.cbrt(abs(x)),
    "erfinv": mp.erfinv,
    "erfcinv": erfcinv,
    "normcdfinv": lambda x: -mp.sqrt(2) * erfcinv(2 * x),
    "erfcx": erfcx,
    "tgamma": mp.gamma,
    "lgamma": lambda x: mp.log(abs(mp.gamma(x))),
    "j0": lambda x: mp.besselj(0, x),
    "j1": lambda x: mp.besselj(1, x),
    "y0": lambda x: mp.bessely(0, x),
    "y1": lambda x: mp.bessely(1, x),
    "i0": lambda x: mp.besseli(0, x),
    "i1": lambda x: mp.besseli(1, x),
}


# Of an integer order n and x, the arguments written `n,x`.
FUNCTIONS2 = {
    "jn": lambda n, x: mp.besselj(n, x),
    "yn": lambda n, x: mp.bessely(n, x),
}


def main():
    if sys.argv[1] in FUNCTIONS2:
        f = FUNCTIONS2[sys.argv[1]]
        for a in sys.argv[2:]:
            n, x = a.split(",")
            n, x = int(n), float(x)
            mp.mp.prec = 200 + max(0, int(mp.mag(x)))
            v = float(f(n, mp.mpf(x)))
            v = {float("inf"): "f64::INFINITY", float("-inf"): "f64::NEG_INFINITY"}.get(v, repr(v))
            print(f"    ({n}, {x!r}, {v}),")
        return
    f = FUNCTIONS[sys.argv[1]]
    for a in sys.argv[2:]:
        x = float(a)
        # 200 bits beyond x's own exponent, so that the periodic functions' reduction of a huge x keeps them.
        mp.mp.prec = 200 + max(0, int(mp.mag(x)))
        print(f"    ({x!r}, {float(f(mp.mpf(x)))!r}),")


if __name__ == "__main__":
    main()
