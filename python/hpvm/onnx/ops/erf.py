"""Erf and Gelu: the erf and exp approximations (float32 arithmetic without calls, so
that they vectorize; a float64 series for float64), written as map bodies and mirrored
in NumPy for constant inputs."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Callable, List, Tuple

import numpy as np

from ...ir import float_literal
from ..nodes import _Node, _fail
from .elementwise import _elementwise

if TYPE_CHECKING:
    from ..importer import Importer


#: erf(x) = 2 / sqrt(pi) * sum_n (-1)^n x^(2n+1) / (n! (2n + 1)) for |x| < 1 (13 terms:
#: below 1e-9), and for |x| >= 1, erf = 1 - erfc with erfc(z) = t exp(-z^2 + P(t)),
#: t = 1 / (1 + z / 2), P the Chebyshev fit of Numerical Recipes (fractional error
#: < 1.2e-7 of erfc, which is < 0.16 there). Evaluated in float64: |error| < 1e-8.
#: Only for float64 tensors; the narrower types use the float32 form below.
_ERF_SERIES = [(-1) ** n / (math.factorial(n) * (2 * n + 1)) * 2 / math.sqrt(math.pi)
               for n in range(14)]
_ERFC_FIT = [-1.26551223, 1.00002368, 0.37409196, 0.09678418, -0.18628806, 0.27886807,
             -1.13520398, 1.48851587, -0.82215223, 0.17087277]

#: erf in float32 arithmetic, no calls (it vectorizes): with a = min(|x|, 3.92),
#:   a < 1:  erf = a + a * S(a^2), S(s) ~ erf(sqrt s) / sqrt s - 1 (degree 6),
#:   a >= 1: erf = 1 - L(a - 2.46), L ~ erfc on [1, 3.92] (degree 14),
#: the sign copied from x. Both are one Horner chain whose coefficients are selected by
#: the branch. S and L are Chebyshev interpolants (numpy's chebfit at 400 Chebyshev nodes)
#: turned into powers and rounded to float32; the large terms (a, 1) are added last, so
#: the rounding errors are those of the small corrections. Past 3.92 erfc < 2.8e-8, below
#: half an ulp of 1. Measured over every float32 in [1e-6, 4) and a sweep of [-10, 10]:
#: |error| < 8.5e-8 (1.5 ulp of 1.0); NaN gives NaN, +-inf gives +-1.
_ERF32_SPLIT = 1.0
_ERF32_CLAMP = 3.92
_ERF32_CENTER = 2.46
_ERF32_SMALL = [0.12837916612625122, -0.3761262595653534, 0.11283597350120544,
                -0.02685432881116867, 0.005189312156289816, -0.0008018855005502701,
                7.882497448008507e-05]
_ERF32_LARGE = [0.0005033535999245942, -0.0026562369894236326, 0.006534520536661148,
                -0.009832456707954407, 0.009914183989167213, -0.006799545604735613,
                0.002937170909717679, -0.00045933123328723013, -0.0003558973257895559,
                0.00029961674590595067, -7.582805119454861e-05, -2.4706278054509312e-05,
                1.7332071365672164e-05, -9.4817231399702e-08, -1.0944362429654575e-06]

#: exp in float32 arithmetic, no calls: y clamped to [-87, 88] (NaN-dropping: the Gelu
#: result is NaN through x), y = k ln2 + r with k = round(y / ln2) (the 1.5 * 2^23 trick)
#: and ln2 in two parts (k ln2_hi exact), exp(r) by a degree-6 Chebyshev interpolant on
#: [-ln2/2, ln2/2] (relative error < 3e-9 before rounding), times 2^k built in the
#: exponent bits.
_EXP32_LOG2E = 1.4426950216293335
_EXP32_MAGIC = 12582912.0
_EXP32_LN2_HI = 0.693145751953125
_EXP32_LN2_LO = 1.428606765330187e-06
_EXP32_POLY = [1.0, 1.0, 0.5, 0.16666415333747864, 0.041666217148303986,
               0.008375128731131554, 0.001394858118146658]


def _erf_lines(value: str, prefix: str) -> Tuple[List[str], str]:
    """MLIR lines computing erf of the f64 `value`; names start with `%<prefix>`."""
    p = f"%{prefix}"
    lines = [f"{p}abs = math.absf {value} : f64",
             f"{p}sq = arith.mulf {value}, {value} : f64"]
    count = [0]

    def const(c: float) -> str:
        count[0] += 1
        name = f"{p}k{count[0]}"
        lines.append(f"{name} = arith.constant {float_literal(c)} : f64")
        return name

    def fresh() -> str:
        count[0] += 1
        return f"{p}v{count[0]}"

    # The series, in x^2 by Horner's rule, times x.
    acc = const(_ERF_SERIES[-1])
    for c in reversed(_ERF_SERIES[:-1]):
        m, a = fresh(), fresh()
        lines += [f"{m} = arith.mulf {acc}, {p}sq : f64", f"{a} = arith.addf {m}, {const(c)} : f64"]
        acc = a
    small = fresh()
    lines.append(f"{small} = arith.mulf {acc}, {value} : f64")
    # 1 - erfc(|x|), its sign copied from x.
    one, half = const(1.0), const(0.5)
    h, d, t = fresh(), fresh(), fresh()
    lines += [f"{h} = arith.mulf {p}abs, {half} : f64", f"{d} = arith.addf {h}, {one} : f64",
              f"{t} = arith.divf {one}, {d} : f64"]
    acc = const(_ERFC_FIT[-1])
    for c in reversed(_ERFC_FIT[:-1]):
        m, a = fresh(), fresh()
        lines += [f"{m} = arith.mulf {acc}, {t} : f64", f"{a} = arith.addf {m}, {const(c)} : f64"]
        acc = a
    exponent, e, erfc, large, signed = fresh(), fresh(), fresh(), fresh(), fresh()
    lines += [f"{exponent} = arith.subf {acc}, {p}sq : f64",
              f"{e} = math.exp {exponent} : f64",
              f"{erfc} = arith.mulf {t}, {e} : f64",
              f"{large} = arith.subf {one}, {erfc} : f64",
              f"{signed} = math.copysign {large}, {value} : f64"]
    below, result = fresh(), fresh()
    lines += [f"{below} = arith.cmpf olt, {p}abs, {one} : f64",
              f"{result} = arith.select {below}, {small}, {signed} : f64"]
    return lines, result


def _in_f64(element: str, compute: Callable[[str], Tuple[List[str], str]]) -> Tuple[str, str]:
    """A map body that computes in float64: %e0 widened, `compute(value)`, narrowed to %r;
    the body and the name of its result."""
    lines, value = [], "%e0"
    if element != "f64":
        lines.append(f"%w = arith.extf %e0 : {element} to f64")
        value = "%w"
    more, result = compute(value)
    lines += more
    if element != "f64":
        lines.append(f"%r = arith.truncf {result} : f64 to {element}")
        result = "%r"
    return "\n".join(lines), result


def _in_f32(element: str, compute: Callable[[str], Tuple[List[str], str]]) -> Tuple[str, str]:
    """A map body that computes in float32: %e0 widened (f16, bf16), `compute(value)`,
    narrowed to %r; the body and the name of its result."""
    lines, value = [], "%e0"
    if element != "f32":
        lines.append(f"%w = arith.extf %e0 : {element} to f32")
        value = "%w"
    more, result = compute(value)
    lines += more
    if element != "f32":
        lines.append(f"%r = arith.truncf {result} : f32 to {element}")
        result = "%r"
    return "\n".join(lines), result


class _Lines:
    """MLIR lines of float32 scalar arithmetic, names starting with `%<prefix>`."""

    def __init__(self, prefix: str):
        self.prefix, self.lines, self.count = f"%{prefix}", [], 0

    def fresh(self) -> str:
        self.count += 1
        return f"{self.prefix}v{self.count}"

    def op(self, text: str, type_: str = "f32") -> str:
        name = self.fresh()
        self.lines.append(f"{name} = {text} : {type_}")
        return name

    def const(self, c: float) -> str:
        return self.op(f"arith.constant {float_literal(float(np.float32(c)), 'f32')}")


def _erf32_lines(value: str, prefix: str) -> Tuple[List[str], str]:
    """MLIR lines computing erf of the f32 `value` (the float32 form above)."""
    m = _Lines(prefix)
    a = m.op(f"math.absf {value}")
    c = m.op(f"arith.minimumf {a}, {m.const(_ERF32_CLAMP)}")
    one = m.const(1.0)
    small = m.op(f"arith.cmpf olt, {c}, {m.const(_ERF32_SPLIT)}")
    sq = m.op(f"arith.mulf {c}, {c}")
    t = m.op(f"arith.subf {c}, {m.const(_ERF32_CENTER)}")
    u = m.op(f"arith.select {small}, {sq}, {t}")
    n = len(_ERF32_LARGE)
    lows = [0.0] * (n - len(_ERF32_SMALL)) + _ERF32_SMALL[::-1]
    highs = _ERF32_LARGE[::-1]

    def coefficient(k: int) -> str:
        return m.op(f"arith.select {small}, {m.const(lows[k])}, {m.const(highs[k])}")

    p = coefficient(0)
    for k in range(1, n):
        p = m.op(f"arith.addf {m.op(f'arith.mulf {p}, {u}')}, {coefficient(k)}")
    scale = m.op(f"arith.select {small}, {c}, {m.const(-1.0)}")
    base = m.op(f"arith.select {small}, {c}, {one}")
    magnitude = m.op(f"arith.addf {base}, {m.op(f'arith.mulf {scale}, {p}')}")
    return m.lines, m.op(f"math.copysign {magnitude}, {value}")


def _numpy_erf32(x: np.ndarray) -> np.ndarray:
    """`_erf32_lines` in NumPy, operation for operation (the same float32 results)."""
    f = np.float32
    x = np.asarray(x, dtype=f)
    c = np.minimum(np.abs(x), f(_ERF32_CLAMP))
    small = c < f(_ERF32_SPLIT)
    u = np.where(small, c * c, c - f(_ERF32_CENTER))
    n = len(_ERF32_LARGE)
    lows = [0.0] * (n - len(_ERF32_SMALL)) + _ERF32_SMALL[::-1]
    highs = _ERF32_LARGE[::-1]
    p = np.where(small, f(lows[0]), f(highs[0]))
    for k in range(1, n):
        p = p * u + np.where(small, f(lows[k]), f(highs[k]))
    magnitude = np.where(small, c, f(1.0)) + np.where(small, c, f(-1.0)) * p
    return np.copysign(magnitude, x).astype(f)


def _exp32_lines(value: str, prefix: str) -> Tuple[List[str], str]:
    """MLIR lines computing exp of the f32 `value` (the float32 form above)."""
    m = _Lines(prefix)
    y = m.op(f"arith.maxnumf {value}, {m.const(-87.0)}")
    y = m.op(f"arith.minnumf {y}, {m.const(88.0)}")
    magic = m.const(_EXP32_MAGIC)
    shifted = m.op(f"arith.addf {m.op(f'arith.mulf {y}, {m.const(_EXP32_LOG2E)}')}, {magic}")
    k = m.op(f"arith.subf {shifted}, {magic}")
    r = m.op(f"arith.subf {y}, {m.op(f'arith.mulf {k}, {m.const(_EXP32_LN2_HI)}')}")
    r = m.op(f"arith.subf {r}, {m.op(f'arith.mulf {k}, {m.const(_EXP32_LN2_LO)}')}")
    p = m.const(_EXP32_POLY[-1])
    for c in reversed(_EXP32_POLY[:-1]):
        p = m.op(f"arith.addf {m.op(f'arith.mulf {p}, {r}')}, {m.const(c)}")
    ki = m.fresh()
    m.lines.append(f"{ki} = arith.fptosi {k} : f32 to i32")
    bias = m.op("arith.constant 127", "i32")
    shift = m.op("arith.constant 23", "i32")
    bits = m.op(f"arith.shli {m.op(f'arith.addi {ki}, {bias}', 'i32')}, {shift}", "i32")
    power = m.fresh()
    m.lines.append(f"{power} = arith.bitcast {bits} : i32 to f32")
    finite = m.op(f"arith.mulf {p}, {power}")
    over = m.op(f"arith.cmpf ogt, {value}, {m.const(88.0)}")
    return m.lines, m.op(f"arith.select {over}, {m.const(math.inf)}, {finite}")


def _numpy_exp32(x: np.ndarray) -> np.ndarray:
    """`_exp32_lines` in NumPy, operation for operation."""
    f = np.float32
    y = np.fmin(np.fmax(np.asarray(x, dtype=f), f(-87.0)), f(88.0))
    k = (y * f(_EXP32_LOG2E) + f(_EXP32_MAGIC)) - f(_EXP32_MAGIC)
    r = (y - k * f(_EXP32_LN2_HI)) - k * f(_EXP32_LN2_LO)
    p = f(_EXP32_POLY[-1])
    for c in reversed(_EXP32_POLY[:-1]):
        p = p * r + f(c)
    bits = (np.asarray(k).astype(np.int32) + np.int32(127)) << np.int32(23)
    power = np.asarray(bits, dtype=np.int32).view(f)
    return np.where(np.asarray(x, dtype=f) > f(88.0), f(math.inf), p * power).astype(f)


def _erf_body(node: _Node, element: str) -> Tuple[str, str]:
    if element == "f64":
        return _in_f64(element, lambda v: _erf_lines(v, "erf"))
    return _in_f32(element, lambda v: _erf32_lines(v, "erf"))


def _numpy_erf(node: _Node, x: np.ndarray) -> np.ndarray:
    if x.dtype != np.float64:
        return _numpy_erf32(x)
    flat = [math.erf(v) for v in x.astype(np.float64).reshape(-1)]
    return np.asarray(flat, dtype=np.float64).reshape(x.shape)


def _gelu_f64_lines(approximate: str, v: str) -> Tuple[List[str], str]:
    """Gelu of the f64 `value` in float64 (float64 tensors only)."""
    if approximate == "tanh":
        # 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))
        return ([f"%c = arith.constant {float_literal(math.sqrt(2 / math.pi))} : f64",
                 "%k = arith.constant 0.044715 : f64",
                 "%half = arith.constant 0.5 : f64",
                 "%one = arith.constant 1.0 : f64",
                 f"%x2 = arith.mulf {v}, {v} : f64",
                 f"%x3 = arith.mulf %x2, {v} : f64",
                 "%kx3 = arith.mulf %x3, %k : f64",
                 f"%s = arith.addf {v}, %kx3 : f64",
                 "%u = arith.mulf %s, %c : f64",
                 "%t = math.tanh %u : f64",
                 "%t1 = arith.addf %t, %one : f64",
                 f"%hx = arith.mulf {v}, %half : f64",
                 "%g = arith.mulf %hx, %t1 : f64"], "%g")
    # 0.5 x (1 + erf(x / sqrt(2)))
    lines = [f"%c = arith.constant {float_literal(1 / math.sqrt(2))} : f64",
             "%half = arith.constant 0.5 : f64",
             "%one = arith.constant 1.0 : f64",
             f"%s = arith.mulf {v}, %c : f64"]
    more, erf = _erf_lines("%s", "erf")
    lines += more
    lines += [f"%t1 = arith.addf {erf}, %one : f64",
              f"%hx = arith.mulf {v}, %half : f64",
              "%g = arith.mulf %hx, %t1 : f64"]
    return lines, "%g"


#: The tanh form's exp(-2 u), u = sqrt(2 / pi) (x + 0.044715 x^3), is exp of this factor
#: times x + 0.044715 x^3.
_GELU_TANH_SCALE = -2 * math.sqrt(2 / math.pi)


def _gelu_body(node: _Node, element: str) -> Tuple[str, str]:
    approximate = node.string("approximate", "none")
    if element == "f64":
        return _in_f64(element, lambda v: _gelu_f64_lines(approximate, v))
    if approximate == "tanh":
        # 0.5 x (1 + tanh(u)) = x / (1 + exp(-2 u))
        def compute(v):
            m = _Lines("g")
            x2 = m.op(f"arith.mulf {v}, {v}")
            x3 = m.op(f"arith.mulf {x2}, {v}")
            s = m.op(f"arith.addf {v}, {m.op(f'arith.mulf {x3}, {m.const(0.044715)}')}")
            y = m.op(f"arith.mulf {s}, {m.const(_GELU_TANH_SCALE)}")
            more, e = _exp32_lines(y, "exp")
            lines = m.lines + more
            return lines + ["%gone = arith.constant 1.0 : f32",
                            f"%gden = arith.addf {e}, %gone : f32",
                            f"%g = arith.divf {v}, %gden : f32"], "%g"
    else:
        # 0.5 x (1 + erf(x / sqrt(2)))
        def compute(v):
            lines = [f"%c = arith.constant {float_literal(float(np.float32(1 / math.sqrt(2))))}"
                     " : f32",
                     "%half = arith.constant 0.5 : f32",
                     "%one = arith.constant 1.0 : f32",
                     f"%s = arith.mulf {v}, %c : f32"]
            more, erf = _erf32_lines("%s", "erf")
            lines += more
            lines += [f"%t1 = arith.addf {erf}, %one : f32",
                      f"%hx = arith.mulf {v}, %half : f32",
                      "%g = arith.mulf %hx, %t1 : f32"]
            return lines, "%g"
    return _in_f32(element, compute)


def _numpy_gelu(node: _Node, x: np.ndarray) -> np.ndarray:
    tanh = node.string("approximate", "none") == "tanh"
    if x.dtype == np.float64:
        if tanh:
            return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
        return 0.5 * x * (1 + _numpy_erf(node, x / math.sqrt(2)))
    f = np.float32
    x = np.asarray(x, dtype=f)
    if tanh:
        s = x + (x * x * x) * f(0.044715)
        return x / (_numpy_exp32(s * f(_GELU_TANH_SCALE)) + f(1.0))
    erf = _numpy_erf32(x * f(1 / math.sqrt(2)))
    return (x * f(0.5)) * (erf + f(1.0))


def _gelu(im: Importer, node: _Node) -> None:
    approximate = node.string("approximate", "none")
    if approximate not in ("none", "tanh"):
        _fail(f"approximate '{approximate}' is not valid; expected none or tanh")
    _elementwise(_numpy_gelu, _gelu_body, ["approximate"])(im, node)


#: The operators of this module.
HANDLERS = {
    "Erf": _elementwise(_numpy_erf, _erf_body),
    "Gelu": _gelu,
}
