"""Reductions along axes: ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceL2, ArgMax,
ArgMin and CumSum."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import numpy as np

from ... import tensor as T
from ..nodes import _ELEMENT_NAMES, _NUMBERS, _Node, _element_of, _fail
from .common import _axes, _check_unknown_attributes, _int_input, _normalize_axes, _rank

if TYPE_CHECKING:
    from ..importer import Importer


def _cumsum(im: Importer, node: _Node) -> None:
    _check_unknown_attributes(node, ["exclusive", "reverse"])
    exclusive, reverse = (int(node.attr(a, 0)) for a in ("exclusive", "reverse"))
    for name, flag in (("exclusive", exclusive), ("reverse", reverse)):
        if flag not in (0, 1):
            _fail(f"{name} is {flag}; expected 0 or 1")
    value = _int_input(im, node, 1, "the axis")
    if value.size != 1:
        _fail(f"the axis (input 1, '{node.input(1)}') has the shape {list(value.shape)}; "
              "expected a scalar")
    axis = int(value.reshape(()))
    x = im.value(node, 0)
    element = _element_of(node, 0, x)
    if element not in _NUMBERS:
        _fail(f"the input '{node.input(0)}' is a tensor of {_ELEMENT_NAMES[element]}; "
              "expected numbers")
    rank = _rank(x)
    if not -rank <= axis < rank:
        _fail(f"the axis {axis} is out of range for rank {rank}")
    if isinstance(x, np.ndarray):
        y = np.flip(x, axis) if reverse else x
        with np.errstate(all="ignore"):
            y = np.cumsum(y, axis=axis, dtype=x.dtype)
        if exclusive:
            y = np.concatenate([np.zeros_like(np.take(y, [0], axis)),
                                np.delete(y, -1, axis)], axis) if y.shape[axis] else y
        im.set_output(node, np.flip(y, axis) if reverse else y)
        return
    im.set_output(node, T.cumsum(x, axis, bool(exclusive), bool(reverse), name=node.leaf_name))


def _arg_reduce(kind: str) -> Callable[[Importer, _Node], None]:
    """ArgMax / ArgMin: the int64 index of the greatest / least element along axis (the
    first, or with select_last_index the last)."""
    def handler(im: Importer, node: _Node) -> None:
        _check_unknown_attributes(node, ["axis", "keepdims", "select_last_index"])
        x = im.value(node, 0)
        rank = _rank(x)
        if rank == 0:
            _fail("the input is a scalar; expected rank >= 1")
        axis = int(node.attr("axis", 0))
        if not -rank <= axis < rank:
            _fail(f"axis {axis} is out of range for rank {rank}")
        axis %= rank
        keepdims, last = int(node.attr("keepdims", 1)), int(node.attr("select_last_index", 0))
        element = _element_of(node, 0, x)
        if element not in _NUMBERS:
            _fail(f"the input '{node.input(0)}' is a tensor of {_ELEMENT_NAMES[element]}; "
                  "expected numbers")
        if x.shape[axis] == 0:
            _fail(f"axis {axis} of the input {list(x.shape)} is empty")
        if isinstance(x, np.ndarray):
            pick = np.argmax if kind == "max" else np.argmin
            if last:
                found = x.shape[axis] - 1 - pick(np.flip(x, axis), axis=axis)
            else:
                found = pick(x, axis=axis)
            found = np.asarray(found, dtype=np.int64)
            im.set_output(node, np.expand_dims(found, axis) if keepdims else found)
            return
        if rank == 1 and not keepdims:
            _fail("the result would be a scalar; expected keepdims 1 or an input of rank >= 2")
        im.set_output(node, T.arg_reduce(x, axis, kind, bool(keepdims), bool(last),
                                         name=node.leaf_name))
    return handler


_NUMPY_REDUCE = {"sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min,
                 "l2": lambda x, **kw: np.sqrt(np.sum(np.square(x), **kw))}


def _reduce(kind: str) -> Callable[[Importer, _Node], None]:
    def handler(im: Importer, node: _Node) -> None:
        _check_unknown_attributes(node, ["axes", "keepdims", "noop_with_empty_axes"])
        x = im.value(node, 0)
        rank = _rank(x)
        axes = _axes(im, node, 1, 13 if kind == "sum" else 18)
        keepdims = int(node.attr("keepdims", 1))
        noop = int(node.attr("noop_with_empty_axes", 0))
        if not axes:
            if noop:
                im.set_output(node, x)
                return
            axes = list(range(rank))
        axes = sorted(_normalize_axes(axes, rank))
        if isinstance(x, np.ndarray):
            if x.dtype.kind not in "biuf":
                _fail(f"the input is a constant tensor of {x.dtype}; expected numbers")
            if x.size == 0 and kind in ("max", "min"):
                _fail(f"the input {list(x.shape)} is empty; expected elements to reduce")
            with np.errstate(all="ignore"):
                folded = _NUMPY_REDUCE[kind](x, axis=tuple(axes), keepdims=bool(keepdims))
            im.set_output(node, np.asarray(folded).astype(x.dtype))
            return
        im.check_float(node, x, 0)
        if kind in ("mean", "max") and rank == 4 and axes == [2, 3]:
            # Over the image of NCHW: the runtime's global pooling.
            name = node.leaf_name if keepdims else None
            y = T.global_pool(x, kind, name=name)
            im.set_output(node, y if keepdims else T.reshape(y, x.shape[:2], name=node.leaf_name))
            return
        if kind == "l2":
            # sqrt(sum(x * x)) over the axes.
            e = x.element
            squares = T.map([x], f"%r = arith.mulf %e0, %e0 : {e}")
            total = T.reduce_axes(squares, axes, "sum", bool(keepdims))
            im.set_output(node, T.map([total], f"%r = math.sqrt %e0 : {e}",
                                      name=node.leaf_name))
            return
        im.set_output(node, T.reduce_axes(x, axes, kind, bool(keepdims), name=node.leaf_name))
    return handler


#: The operators of this module.
HANDLERS = {
    "ArgMax": _arg_reduce("max"),
    "ArgMin": _arg_reduce("min"),
    "CumSum": _cumsum,
    "ReduceL2": _reduce("l2"),
    "ReduceMax": _reduce("max"),
    "ReduceMean": _reduce("mean"),
    "ReduceMin": _reduce("min"),
    "ReduceSum": _reduce("sum"),
}
