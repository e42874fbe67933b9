"""Elementwise functions of one float tensor (Relu, Sigmoid, Tanh, Exp, Log, Sqrt, Sin,
Cos, Neg, Reciprocal, HardSigmoid, HardSwish): folded in NumPy for a constant input,
otherwise one linalg map whose body the operator writes."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Callable, List, Sequence, Tuple

import numpy as np

from ... import tensor as T
from ..nodes import _Node, _fail
from .common import _check_unknown_attributes, _literal

if TYPE_CHECKING:
    from ..importer import Importer


def _unary(builder: Callable) -> Callable[[Importer, _Node], None]:
    def handler(im: Importer, node: _Node) -> None:
        _check_unknown_attributes(node, ["consumed_inputs"])
        im.set_output(node, builder(im.tensor(node, 0), name=node.leaf_name))
    return handler


def _elementwise(numpy_fn: Callable, body: Callable[[_Node, str], str],
                 attributes: Sequence[str] = (), integers: bool = False
                 ) -> Callable[[Importer, _Node], None]:
    """A unary elementwise operator: `numpy_fn(node, array)` folds a constant input,
    `body(node, element)` is the `hpvm.tensor.map` region of a tensor input."""
    def handler(im: Importer, node: _Node) -> None:
        _check_unknown_attributes(node, list(attributes))
        x = im.value(node, 0)
        if not (integers and isinstance(x, np.ndarray) and x.dtype.kind in "iu"):
            im.check_float(node, x, 0)
        if isinstance(x, np.ndarray):
            with np.errstate(all="ignore"):
                folded = numpy_fn(node, x)
            im.set_output(node, np.asarray(folded).astype(x.dtype))
            return
        text = body(node, x.element)
        text, result = (text, "%r") if isinstance(text, str) else text
        im.set_output(node, T.map([x], text, name=node.leaf_name, result=result))
    return handler


def _hard_sigmoid_lines(alpha: float, beta: float, element: str, result: str) -> List[str]:
    e = element
    return [f"%alpha = arith.constant {_literal(alpha, e)} : {e}",
            f"%beta = arith.constant {_literal(beta, e)} : {e}",
            f"%zero = arith.constant 0.0 : {e}",
            f"%one = arith.constant 1.0 : {e}",
            f"%ax = arith.mulf %e0, %alpha : {e}",
            f"%lin = arith.addf %ax, %beta : {e}",
            f"%low = arith.minimumf %lin, %one : {e}",
            f"{result} = arith.maximumf %low, %zero : {e}"]


def _hard_sigmoid_parameters(node: _Node) -> Tuple[float, float]:
    alpha, beta = float(node.attr("alpha", 0.2)), float(node.attr("beta", 0.5))
    for what, v in (("alpha", alpha), ("beta", beta)):
        if not math.isfinite(v):
            _fail(f"{what} is {v}; expected a finite number")
    return alpha, beta


def _hard_sigmoid_body(node: _Node, element: str) -> str:
    return "\n".join(_hard_sigmoid_lines(*_hard_sigmoid_parameters(node), element, "%r"))


def _numpy_hard_sigmoid(node: _Node, x: np.ndarray) -> np.ndarray:
    alpha, beta = _hard_sigmoid_parameters(node)
    return np.maximum(np.minimum(x * x.dtype.type(alpha) + x.dtype.type(beta), 1), 0)


def _hard_swish_body(node: _Node, element: str) -> str:
    lines = _hard_sigmoid_lines(1 / 6, 0.5, element, "%h")
    return "\n".join(lines + [f"%r = arith.mulf %e0, %h : {element}"])


def _numpy_hard_swish(node: _Node, x: np.ndarray) -> np.ndarray:
    alpha = x.dtype.type(1 / 6)
    return x * np.maximum(np.minimum(x * alpha + x.dtype.type(0.5), 1), 0)


def _simple_body(op: str) -> Callable[[_Node, str], str]:
    return lambda node, element: f"%r = {op} %e0 : {element}"


def _reciprocal_body(node: _Node, element: str) -> str:
    return f"%one = arith.constant 1.0 : {element}\n%r = arith.divf %one, %e0 : {element}"


#: The operators of this module.
HANDLERS = {
    "Cos": _elementwise(lambda node, x: np.cos(x), _simple_body("math.cos")),
    "Exp": _elementwise(lambda node, x: np.exp(x), _simple_body("math.exp")),
    "HardSigmoid": _elementwise(_numpy_hard_sigmoid, _hard_sigmoid_body, ["alpha", "beta"]),
    "HardSwish": _elementwise(_numpy_hard_swish, _hard_swish_body),
    "Log": _elementwise(lambda node, x: np.log(x), _simple_body("math.log")),
    "Neg": _elementwise(lambda node, x: np.negative(x), _simple_body("arith.negf"),
                        integers=True),
    "Reciprocal": _elementwise(lambda node, x: np.reciprocal(x), _reciprocal_body),
    "Relu": _unary(T.relu),
    "Sigmoid": _unary(T.sigmoid),
    "Sin": _elementwise(lambda node, x: np.sin(x), _simple_body("math.sin")),
    "Sqrt": _elementwise(lambda node, x: np.sqrt(x), _simple_body("math.sqrt")),
    "Tanh": _unary(T.tanh),
}
