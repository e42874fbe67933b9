"""Elementwise arithmetic: Add, Sub, Mul, Div (float and integer), Clip, Max, Min, Sum,
Mean, Abs, Sign, Floor, Ceil, Round, Mod and Pow."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, List, Optional

import numpy as np

from ... import tensor as T
from ...tensor import Tensor
from ..nodes import Value, _ELEMENT_NAMES, _FLOAT_NAMES, _INTS, _NUMBERS, _Node, _element_of, _fail
from .common import (_broadcast_map, _check_unknown_attributes, _constant_input, _literal,
                     _map_node, _one_type, _same_dtype, _same_element, _scalar_literal)

if TYPE_CHECKING:
    from ..importer import Importer


_NUMPY_BINARY = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": np.divide}
_ARITH = {"Add": "arith.addf", "Sub": "arith.subf", "Mul": "arith.mulf", "Div": "arith.divf"}


def _binary(im: Importer, node: _Node) -> None:
    _check_unknown_attributes(node, ["broadcast", "axis", "consumed_inputs"])
    if node.attr("axis") is not None:
        _fail("the legacy axis attribute (opset < 7) is not supported; expected NumPy "
              "(trailing) broadcasting")
    op = node.op_type
    a, b = im.value(node, 0), im.value(node, 1)
    if (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)
            and (a.dtype.kind in "iu" or b.dtype.kind in "iu")):
        im.set_output(node, _integer_binary(node, a, b))  # shape computations
        return
    if any(isinstance(v, Tensor) and v.element not in _FLOAT_NAMES for v in (a, b)):
        _integer_tensor_binary(im, node)
        return
    a = im.check_float(node, a, 0)
    b = im.check_float(node, b, 1)
    _same_element(node, [a, b])
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        try:
            folded = _NUMPY_BINARY[op](a, b)
        except ValueError:
            _fail(f"the shapes {list(a.shape)} and {list(b.shape)} do not broadcast")
        im.set_output(node, folded.astype(np.result_type(a, b)))
        return
    shapes = [v.shape for v in (a, b)]
    try:
        shape = tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        _fail(f"the shapes {list(shapes[0])} and {list(shapes[1])} do not broadcast")
    # A one-element constant operand is written inline in a map.
    for const_index in (0, 1):
        const, other = (a, b) if const_index == 0 else (b, a)
        if isinstance(const, np.ndarray) and const.size == 1 and other.shape == shape:
            literal = _scalar_literal(const.reshape(()).item(), node, f"the constant input "
                                      f"'{node.input(const_index)}'")
            e = other.element
            operands = "%k, %e0" if const_index == 0 else "%e0, %k"
            body = f"%k = arith.constant {literal} : {e}\n%r = {_ARITH[op]} {operands} : {e}"
            im.set_output(node, T.map([other], body, name=node.leaf_name))
            return
    ta, tb = im.tensor(node, 0), im.tensor(node, 1)
    if op == "Add":
        y = T.add(ta, tb, name=node.leaf_name)
    else:
        builder = {"Sub": T.subtract, "Mul": T.multiply, "Div": T.divide}[op]
        y = builder(ta, tb, name=node.leaf_name)
    im.set_output(node, y)


def _integer_tensor_binary(im: Importer, node: _Node) -> None:
    """Add, Sub or Mul of integer tensors (position ids, mask arithmetic), wrapping around
    as onnxruntime does."""
    op = node.op_type
    if op == "Div":
        _fail("Div of integer tensors computed by the graph is not supported (a zero divisor "
              "has no result); expected float tensors or constant integers")
    arith = {"Add": "arith.addi", "Sub": "arith.subi", "Mul": "arith.muli"}[op]

    def body(elements):
        e = _one_type(node, elements, _INTS)
        return f"%r = {arith} %e0, %e1 : {e}", e

    _map_node(im, node, [0, 1], _NUMPY_BINARY[op], body)


def _integer_binary(node: _Node, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Add, Sub, Mul or Div of integer constants (shape arithmetic), as onnxruntime: in the
    type, wrapping around; Div truncates toward zero."""
    _same_dtype(node, [a, b])
    try:
        shape = np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        _fail(f"the shapes {list(a.shape)} and {list(b.shape)} do not broadcast")
    with np.errstate(all="ignore"):
        if node.op_type == "Div":
            if np.any(b == 0):
                _fail(f"the divisor '{node.input(1)}' has a zero element")
            quotient = np.abs(a.astype(np.int64)) // np.abs(b.astype(np.int64))
            negative = (a < 0) != (b < 0)
            folded = np.where(negative, -quotient, quotient)
        else:
            folded = _NUMPY_BINARY[node.op_type](a, b)
    return np.asarray(np.broadcast_to(folded, shape)).astype(a.dtype)


def _clip_integers(im: Importer, node: _Node) -> None:
    """Clip of an int32 / int64 tensor by constant bounds of its type (relative positions):
    min(max(x, min), max), so that min > max gives max everywhere, as ONNX says."""
    if node.attributes:
        _fail(f"the attributes {sorted(node.attributes)} are not valid in opset {im.opset}; "
              "expected min and max as inputs 1 and 2")
    x = im.value(node, 0)
    element = _element_of(node, 0, x)
    limits = []
    for i in (1, 2):
        if not node.input(i):
            limits.append(None)
            continue
        value = _constant_input(im, node, i, ("the min", "the max")[i - 1],
                                "integer Clip takes constant bounds")
        if value.size != 1 or value.ndim:
            _fail(f"input {i} '{node.input(i)}' has the shape {list(value.shape)}; expected a "
                  "scalar")
        if _element_of(node, i, value) != element:
            _fail(f"input {i} '{node.input(i)}' is a tensor of {value.dtype}; expected the "
                  f"input's {_ELEMENT_NAMES[element]}")
        limits.append(int(value))
    low, high = limits
    if isinstance(x, np.ndarray):
        y = x if low is None else np.maximum(x, np.asarray(low, x.dtype))
        im.set_output(node, y if high is None else np.minimum(y, np.asarray(high, x.dtype)))
        return
    lines, last = [], "%e0"
    for i, (bound, op) in enumerate(((low, "arith.maxsi"), (high, "arith.minsi"))):
        if bound is not None:
            lines.append(f"%b{i} = arith.constant {bound} : {element}")
            lines.append(f"%v{i} = {op} {last}, %b{i} : {element}")
            last = f"%v{i}"
    if last == "%e0":
        im.set_output(node, x)
        return
    lines[-1] = "%r = " + lines[-1].split(" = ", 1)[1]
    im.set_output(node, T.elementwise([x], "\n".join(lines), element, node.leaf_name,
                                      kind="clip"))


def _clip(im: Importer, node: _Node) -> None:
    _check_unknown_attributes(node, ["min", "max"])
    if (im.opset >= 11 and _element_of(node, 0, im.value(node, 0)) in ("i32", "i64")
            and all(isinstance(im.value(node, i), np.ndarray) for i in (1, 2)
                    if node.input(i))):
        _clip_integers(im, node)
        return
    x = im.tensor(node, 0)
    bounds: List[Optional[Value]] = [None, None]
    if im.opset < 11:
        for i, attr in enumerate(("min", "max")):
            if node.attr(attr) is not None:
                bounds[i] = np.asarray(float(node.attr(attr)))
    else:
        if node.attributes:
            _fail(f"the attributes {sorted(node.attributes)} are not valid in opset "
                  f"{im.opset}; expected min and max as inputs 1 and 2")
        for i in (1, 2):
            value = im.optional(node, i)
            if value is not None:
                im.check_float(node, value, i)
                if value.ndim if isinstance(value, np.ndarray) else value.rank:
                    _fail(f"input {i} '{node.input(i)}' has the shape "
                          f"{list(value.shape)}; expected a scalar")
                bounds[i - 1] = value
        _same_element(node, [x] + bounds)
    low, high = bounds
    if all(b is None or isinstance(b, np.ndarray) for b in bounds):
        lo = None if low is None else float(low)
        hi = None if high is None else float(high)
        if lo is not None and hi is not None and lo > hi:
            # ONNX: every element becomes max when min > max.
            lines = [f"%lo = arith.constant {_scalar_literal(lo, node, 'min')} : {x.element}",
                     f"%hi = arith.constant {_scalar_literal(hi, node, 'max')} : {x.element}",
                     f"%m = arith.maximumf %e0, %lo : {x.element}",
                     f"%r = arith.minimumf %m, %hi : {x.element}"]
            im.set_output(node, T.map([x], "\n".join(lines), name=node.leaf_name))
            return
        # An infinite bound on its own side clips nothing.
        lo = None if lo is not None and lo == -np.inf else lo
        hi = None if hi is not None and hi == np.inf else hi
        for what, v in (("min", lo), ("max", hi)):
            if v is not None and not np.isfinite(v):
                _fail(f"{what} is {v}; expected a finite number (or -inf / inf)")
        im.set_output(node, T.clip(x, lo, hi, name=node.leaf_name))
        return
    y = x
    if low is not None:
        lt = low if isinstance(low, Tensor) else im._constant_tensor(low, node.input(1), "min")
        y = T.maximum(y, lt, name=None if high is not None else node.leaf_name)
    if high is not None:
        ht = high if isinstance(high, Tensor) else im._constant_tensor(high, node.input(2), "max")
        y = T.minimum(y, ht, name=node.leaf_name)
    im.set_output(node, y)


def _abs(im: Importer, node: _Node) -> None:
    _check_unknown_attributes(node, [])

    def body(elements):
        e = _one_type(node, elements, _NUMBERS)
        if e in _FLOAT_NAMES:
            return f"%r = math.absf %e0 : {e}", e
        return (f"%z = arith.constant 0 : {e}\n%n = arith.subi %z, %e0 : {e}\n"
                f"%c = arith.cmpi slt, %e0, %z : {e}\n%r = arith.select %c, %n, %e0 : {e}"), e

    _map_node(im, node, [0], np.abs, body)


def _sign(im: Importer, node: _Node) -> None:
    _check_unknown_attributes(node, [])

    def body(elements):
        e = _one_type(node, elements, _NUMBERS)
        if e in _FLOAT_NAMES:  # 0, -0 and NaN are their own sign
            return (f"%z = arith.constant 0.0 : {e}\n%one = arith.constant 1.0 : {e}\n"
                    f"%m = arith.constant -1.0 : {e}\n%p = arith.cmpf ogt, %e0, %z : {e}\n"
                    f"%n = arith.cmpf olt, %e0, %z : {e}\n"
                    f"%s = arith.select %n, %m, %e0 : {e}\n%r = arith.select %p, %one, %s : {e}"
                    ), e
        return (f"%z = arith.constant 0 : {e}\n%one = arith.constant 1 : {e}\n"
                f"%m = arith.constant -1 : {e}\n%p = arith.cmpi sgt, %e0, %z : {e}\n"
                f"%n = arith.cmpi slt, %e0, %z : {e}\n"
                f"%s = arith.select %n, %m, %z : {e}\n%r = arith.select %p, %one, %s : {e}"), e

    _map_node(im, node, [0], np.sign, body)


_VARIADIC = {"Max": ("arith.maximumf", "arith.maxsi"), "Min": ("arith.minimumf", "arith.minsi"),
             "Sum": ("arith.addf", None), "Mean": ("arith.addf", None)}


def _variadic(im: Importer, node: _Node) -> None:
    """Max, Min, Sum and Mean of n inputs (NumPy broadcasting); as onnxruntime, NaN
    propagates through Max and Min, and Mean is the sum, left to right, over n."""
    _check_unknown_attributes(node, [])
    fop, iop = _VARIADIC[node.op_type]
    count = len(node.inputs)
    if count == 0 or any(not name for name in node.inputs):
        _fail("expected one or more inputs, none of them missing")

    def fold(*arrays):
        with np.errstate(all="ignore"):
            if node.op_type in ("Max", "Min"):
                pick = np.maximum if node.op_type == "Max" else np.minimum
                result = arrays[0]
                for a in arrays[1:]:
                    result = pick(result, a)
                return result
            result = arrays[0]
            for a in arrays[1:]:
                result = np.add(result, a, dtype=arrays[0].dtype)
            if node.op_type == "Mean":
                result = result / np.asarray(count, arrays[0].dtype)
            return result

    def body(elements):
        allowed = _FLOAT_NAMES if iop is None else _NUMBERS
        e = _one_type(node, elements, allowed)
        op = fop if e in _FLOAT_NAMES else iop
        mean = node.op_type == "Mean"
        lines, last = [], "%e0"
        for i in range(1, count):
            # The last step is the result, unless Mean divides it.
            step = "%r" if i == count - 1 and not mean else f"%s{i}"
            lines.append(f"{step} = {op} {last}, %e{i} : {e}")
            last = step
        if mean:
            lines.append(f"%n = arith.constant {_literal(count, e)} : {e}")
            lines.append(f"%r = arith.divf {last}, %n : {e}")
        elif count == 1:  # one input: the result is that input
            lines.append("%true = arith.constant true")
            lines.append(f"%r = arith.select %true, %e0, %e0 : {e}")
        return "\n".join(lines), e

    _map_node(im, node, list(range(count)), fold, body)


_ROUNDING = {"Floor": ("math.floor", np.floor), "Ceil": ("math.ceil", np.ceil),
             "Round": ("math.roundeven", np.round)}


def _rounding(im: Importer, node: _Node) -> None:
    """Floor, Ceil and Round (half to even, as onnxruntime) of float tensors."""
    _check_unknown_attributes(node, [])
    op, fold = _ROUNDING[node.op_type]

    def body(elements):
        e = _one_type(node, elements, _FLOAT_NAMES)
        return f"%r = {op} %e0 : {e}", e

    _map_node(im, node, [0], fold, body)


def _mod(im: Importer, node: _Node) -> None:
    _check_unknown_attributes(node, ["fmod"])
    fmod = int(node.attr("fmod", 0))
    if fmod not in (0, 1):
        _fail(f"fmod {fmod} is not valid; expected 0 or 1")
    a, b = im.value(node, 0), im.value(node, 1)
    for i, v in enumerate((a, b)):
        if isinstance(v, Tensor):
            im.check_float(node, v, i)  # integer Mod of tensors: a zero divisor has no result
    floats = any(not isinstance(v, np.ndarray) or v.dtype.kind == "f" for v in (a, b))
    if floats and not fmod and im.opset < 28:
        _fail(f"fmod 0 with float inputs is not valid in opset {im.opset} (from opset 28: the "
              "sign of the divisor); expected fmod 1")
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        _same_dtype(node, [a, b])
        if a.dtype.kind in "iu" and np.any(b == 0):
            _fail(f"the divisor '{node.input(1)}' has a zero element")
        with np.errstate(all="ignore"):
            folded = np.fmod(a, b) if fmod else np.mod(a, b)
        im.set_output(node, np.asarray(folded, dtype=a.dtype))
        return
    for i, v in enumerate((a, b)):
        im.check_float(node, v, i)
    _same_element(node, [a, b])
    ta, tb = im.tensor(node, 0), im.tensor(node, 1)
    if fmod:  # the sign of the dividend (C's fmod)
        im.set_output(node, _broadcast_map(node, ta, tb, "arith.remf"))
        return
    # fmod 0 (for floats from opset 28): the sign of the divisor, as NumPy's mod: fmod, plus
    # the divisor when the signs differ.
    try:
        shape = tuple(np.broadcast_shapes(ta.shape, tb.shape))
    except ValueError:
        _fail(f"the shapes {list(ta.shape)} and {list(tb.shape)} do not broadcast")
    e = ta.element
    body = "\n".join([f"%zero = arith.constant 0.0 : {e}",
                      f"%m = arith.remf %e0, %e1 : {e}",
                      f"%nonzero = arith.cmpf one, %m, %zero : {e}",
                      f"%mneg = arith.cmpf olt, %m, %zero : {e}",
                      f"%dneg = arith.cmpf olt, %e1, %zero : {e}",
                      "%differ = arith.xori %mneg, %dneg : i1",
                      "%fix = arith.andi %nonzero, %differ : i1",
                      f"%shifted = arith.addf %m, %e1 : {e}",
                      f"%r = arith.select %fix, %shifted, %m : {e}"])
    operands = [T.broadcast_to(ta, shape), T.broadcast_to(tb, shape)]
    im.set_output(node, T.map(operands, body, name=node.leaf_name))


def _pow(im: Importer, node: _Node) -> None:
    _check_unknown_attributes(node, [])
    x, y = im.value(node, 0), im.value(node, 1)
    if isinstance(y, np.ndarray) and y.dtype.kind not in "iuf":
        _fail(f"the exponent '{node.input(1)}' is a tensor of {y.dtype}; expected numbers")
    if isinstance(x, np.ndarray) and isinstance(y, np.ndarray):
        if x.dtype.kind not in "iuf":
            _fail(f"the base '{node.input(0)}' is a tensor of {x.dtype}; expected numbers")
        try:
            shape = np.broadcast_shapes(x.shape, y.shape)
        except ValueError:
            _fail(f"the shapes {list(x.shape)} and {list(y.shape)} do not broadcast")
        with np.errstate(all="ignore"):
            if x.dtype.kind == "f":
                folded = np.power(x.astype(np.float64), y.astype(np.float64))
            else:
                if np.any(y < 0):
                    _fail("an integer base with a negative exponent")
                folded = np.power(x.astype(np.int64), y.astype(np.int64))
        im.set_output(node, np.broadcast_to(folded, shape).astype(x.dtype))
        return
    im.check_float(node, x, 0)
    x = im.tensor(node, 0)
    e = x.element
    if isinstance(y, np.ndarray):
        if y.size == 1 and len(y.shape) <= x.rank:
            exponent = float(y.reshape(()).item())
            if exponent == 2.0:
                body = f"%r = arith.mulf %e0, %e0 : {e}"
            elif exponent == 3.0:
                body = f"%s = arith.mulf %e0, %e0 : {e}\n%r = arith.mulf %s, %e0 : {e}"
            elif exponent == 1.0:
                body = ""
            else:
                if math.isnan(exponent):
                    _fail("the exponent is NaN; expected a number")
                body = (f"%k = arith.constant {_literal(exponent, e)} : {e}\n"
                        f"%r = math.powf %e0, %k : {e}")
            x = T.broadcast_to(x, tuple(np.broadcast_shapes(x.shape, y.shape)))
            im.set_output(node, T.map([x], body, name=node.leaf_name,
                                      result="%r" if body else "%e0"))
            return
        y = y.astype(x.type.dtype)
        exponent_tensor = im._constant_tensor(y, node.input(1), "the exponent")
    else:
        if y.element != e:
            _fail(f"the base {x.type} and the exponent {y.type} have different element types; "
                  "expected one type (or a constant exponent)")
        exponent_tensor = y
    im.set_output(node, _broadcast_map(node, x, exponent_tensor, "math.powf"))


#: The operators of this module.
HANDLERS = {
    "Add": _binary,
    "Sub": _binary,
    "Mul": _binary,
    "Div": _binary,
    "Clip": _clip,
    "Abs": _abs,
    "Sign": _sign,
    "Ceil": _rounding,
    "Floor": _rounding,
    "Max": _variadic,
    "Mean": _variadic,
    "Min": _variadic,
    "Mod": _mod,
    "Pow": _pow,
    "Round": _rounding,
    "Sum": _variadic,
}
