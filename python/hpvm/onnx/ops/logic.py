"""Comparisons, logic and masks: Equal, Less, Greater (OrEqual), And, Or, Xor, Not,
IsNaN, IsInf, Where and Trilu."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from ... import tensor as T
from ..nodes import _ELEMENT_NAMES, _FLOAT_NAMES, _NUMBERS, _Node, _element_of, _fail
from .common import _check_unknown_attributes, _int_input, _literal, _map_node, _one_type, _rank

if TYPE_CHECKING:
    from ..importer import Importer


_COMPARISONS = {"Equal": ("oeq", "eq", np.equal), "Less": ("olt", "slt", np.less),
                "LessOrEqual": ("ole", "sle", np.less_equal),
                "Greater": ("ogt", "sgt", np.greater),
                "GreaterOrEqual": ("oge", "sge", np.greater_equal)}


def _compare(im: Importer, node: _Node) -> None:
    _check_unknown_attributes(node, [])
    fpred, ipred, fold = _COMPARISONS[node.op_type]

    def body(elements):
        allowed = _NUMBERS + ("i1",) if node.op_type == "Equal" else _NUMBERS
        e = _one_type(node, elements, allowed)
        if e in _FLOAT_NAMES:
            return f"%r = arith.cmpf {fpred}, %e0, %e1 : {e}", "i1"
        return f"%r = arith.cmpi {ipred}, %e0, %e1 : {e}", "i1"

    _map_node(im, node, [0, 1], fold, body)


_LOGIC = {"And": ("arith.andi", np.logical_and), "Or": ("arith.ori", np.logical_or),
          "Xor": ("arith.xori", np.logical_xor)}


def _logic(im: Importer, node: _Node) -> None:
    _check_unknown_attributes(node, [])
    op, fold = _LOGIC[node.op_type]

    def body(elements):
        _one_type(node, elements, ("i1",))
        return f"%r = {op} %e0, %e1 : i1", "i1"

    _map_node(im, node, [0, 1], fold, body)


def _not(im: Importer, node: _Node) -> None:
    _check_unknown_attributes(node, [])

    def body(elements):
        _one_type(node, elements, ("i1",))
        return "%t = arith.constant true\n%r = arith.xori %e0, %t : i1", "i1"

    _map_node(im, node, [0], np.logical_not, body)


def _is_nan(im: Importer, node: _Node) -> None:
    _check_unknown_attributes(node, [])

    def body(elements):
        e = _one_type(node, elements, _FLOAT_NAMES)
        return f"%r = arith.cmpf uno, %e0, %e0 : {e}", "i1"

    _map_node(im, node, [0], np.isnan, body)


def _is_inf(im: Importer, node: _Node) -> None:
    _check_unknown_attributes(node, ["detect_negative", "detect_positive"])
    negative = int(node.attr("detect_negative", 1))
    positive = int(node.attr("detect_positive", 1))

    def fold(x):
        return np.isinf(x) & (((x > 0) & bool(positive)) | ((x < 0) & bool(negative)))

    def body(elements):
        e = _one_type(node, elements, _FLOAT_NAMES)
        lines = [f"%inf = arith.constant {_literal(math.inf, e)} : {e}",
                 f"%ninf = arith.constant {_literal(-math.inf, e)} : {e}",
                 f"%p = arith.cmpf oeq, %e0, %inf : {e}",
                 f"%n = arith.cmpf oeq, %e0, %ninf : {e}"]
        if positive and negative:
            lines.append("%r = arith.ori %p, %n : i1")
        elif positive or negative:
            lines.append(f"%r = arith.ori {'%p, %p' if positive else '%n, %n'} : i1")
        else:
            lines.append("%r = arith.constant false")
        return "\n".join(lines), "i1"

    _map_node(im, node, [0], fold, body)


def _trilu(im: Importer, node: _Node) -> None:
    """Trilu: the elements on and above (upper=1) or below (upper=0) the k-th diagonal of
    the last two dimensions; the others are 0. A select of a constant bool mask."""
    _check_unknown_attributes(node, ["upper"])
    upper = int(node.attr("upper", 1))
    if upper not in (0, 1):
        _fail(f"upper is {upper}; expected 0 or 1")
    k = 0
    if node.input(1):
        value = _int_input(im, node, 1, "k")
        if value.size != 1:
            _fail(f"k (input 1, '{node.input(1)}') has the shape {list(value.shape)}; expected "
                  "a scalar")
        k = int(value.reshape(()))
    x = im.value(node, 0)
    if _rank(x) < 2:
        _fail(f"the input has rank {_rank(x)}; expected rank 2 or more")
    rows, cols = x.shape[-2], x.shape[-1]
    ones = np.ones((rows, cols), np.bool_)
    # np.triu / np.tril take any k: the diagonals past the matrix keep all or nothing.
    k = max(min(k, cols + 1), -rows - 1)
    mask = np.triu(ones, k) if upper else np.tril(ones, k)
    element = _element_of(node, 0, x)
    if isinstance(x, np.ndarray):
        im.set_output(node, np.where(mask, x, np.zeros((), x.dtype)).astype(x.dtype))
        return
    if 0 in x.shape:
        _fail(f"the input has the shape {list(x.shape)} with a zero-size dimension; expected "
              "sizes >= 1")
    zero = ("false" if element == "i1" else f"{_literal(0.0, element)}"
            if element in _FLOAT_NAMES else "0")
    body = (f"%z = arith.constant {zero} : {element}\n"
            f"%r = arith.select %e0, %e1, %z : {element}")
    keep = im.graph.constant(mask, element="i1")
    im.set_output(node, T.elementwise([keep, x], body, element, name=node.leaf_name,
                                      kind="trilu"))


def _where(im: Importer, node: _Node) -> None:
    _check_unknown_attributes(node, [])

    def body(elements):
        if elements[0] != "i1":
            _fail(f"the condition '{node.input(0)}' is a tensor of "
                  f"{_ELEMENT_NAMES[elements[0]]}; expected bool")
        e = _one_type(node, elements[1:], _NUMBERS + ("i1",), names=(1, 2))
        return f"%r = arith.select %e0, %e1, %e2 : {e}", e

    _map_node(im, node, [0, 1, 2], np.where, body)


#: The operators of this module.
HANDLERS = {
    "And": _logic,
    "Equal": _compare,
    "Greater": _compare,
    "GreaterOrEqual": _compare,
    "IsInf": _is_inf,
    "IsNaN": _is_nan,
    "Less": _compare,
    "LessOrEqual": _compare,
    "Not": _not,
    "Or": _logic,
    "Xor": _logic,
    "Trilu": _trilu,
    "Where": _where,
}
