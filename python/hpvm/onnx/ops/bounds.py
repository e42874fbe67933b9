"""The range of each integer value computed by the graph, where the operator that made it
says (`Importer.bounds`): indices that Gather and GatherElements may read without a
check at the call."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Tuple

import numpy as np

from ...tensor import Tensor
from ..nodes import Value, _Node
from .common import _rank

if TYPE_CHECKING:
    from ..importer import Importer


_INT_RANGES = {"i8": 8, "i16": 16, "i32": 32, "i64": 64}
# Operators whose output 0 holds elements of input 0 only (data movement).
_MOVES_INPUT0 = {"Identity", "Reshape", "Unsqueeze", "Squeeze", "Transpose", "Flatten",
                 "Expand", "Slice", "Split", "Gather", "GatherElements", "GatherND", "Tile",
                 "ReduceMax", "ReduceMin"}


def _note_bounds(im: Importer, node: _Node) -> None:
    """Records in im.bounds the (lo, hi) of the integer tensors `node` computed, where its
    inputs' intervals say: data movement keeps them, Concat, Where and ScatterND join them,
    Add, Sub, Mul, Neg, Abs, Max, Min, CumSum and Clip follow interval arithmetic, Cast keeps
    integers and bools, ArgMax / ArgMin give [0, n). A result outside its type's range (it
    would wrap) is left unknown."""
    outputs = [o for o in node.outputs if o and isinstance(im.values.get(o), Tensor)
               and im.values[o].element in _INT_RANGES]
    if not outputs:
        return
    op = node.op_type
    got = [im.interval(name) for name in node.inputs]

    def join(items):
        if not items or any(i is None for i in items):
            return None
        return min(i[0] for i in items), max(i[1] for i in items)

    bounds = None
    if op in _MOVES_INPUT0 and got:
        bounds = got[0]
        if op == "Split":  # every output holds elements of input 0
            for name in outputs:
                _set_bounds(im, name, bounds)
            return
    elif op == "Concat":
        bounds = join(got)
    elif op == "Where" and len(got) == 3:
        bounds = join(got[1:])
    elif op == "ScatterND" and len(got) == 3:
        bounds = join([got[0], got[2]])
    elif op in ("Max", "Min") and got and all(g is not None for g in got):
        pick = max if op == "Max" else min
        bounds = pick(g[0] for g in got), pick(g[1] for g in got)
    elif op in ("Add", "Sub", "Mul") and len(got) == 2 and None not in got:
        (a, b), (c, d) = got
        if op == "Add":
            bounds = a + c, b + d
        elif op == "Sub":
            bounds = a - d, b - c
        else:
            products = [a * c, a * d, b * c, b * d]
            bounds = min(products), max(products)
    elif op == "Neg" and got[0] is not None:
        bounds = -got[0][1], -got[0][0]
    elif op == "Abs" and got[0] is not None:
        lo, hi = got[0]
        bounds = (0 if lo <= 0 <= hi else min(abs(lo), abs(hi))), max(abs(lo), abs(hi))
    elif op == "Cast":  # of integers or bools (a float input has no interval)
        bounds = got[0]
    elif op == "Clip":  # min(max(x, low), high)
        lo, hi = got[0] if got[0] is not None else (-math.inf, math.inf)
        if len(got) > 1 and got[1] is not None:
            lo, hi = max(lo, got[1][0]), max(hi, got[1][0])
        if len(got) > 2 and got[2] is not None:
            lo, hi = min(lo, got[2][1]), min(hi, got[2][1])
        bounds = (lo, hi) if math.isfinite(lo) and math.isfinite(hi) else None
    elif op == "CumSum" and got[0] is not None:
        x, axis = im.values[node.inputs[0]], im.values.get(node.inputs[1])
        if isinstance(axis, np.ndarray) and axis.size == 1:
            length = _shape_of(x)[int(axis.reshape(())) % _rank(x)]
            lo, hi = got[0]
            bounds = min(0, lo, lo * length), max(0, hi, hi * length)
    elif op in ("ArgMax", "ArgMin"):
        x = im.values[node.inputs[0]]
        axis = int(node.attr("axis", 0)) % max(_rank(x), 1)
        bounds = 0, _shape_of(x)[axis] - 1
    if bounds is not None:
        for name in outputs[:1]:
            _set_bounds(im, name, bounds)


def _set_bounds(im: Importer, name: str, bounds: Tuple[int, int]) -> None:
    bits = _INT_RANGES[im.values[name].element]
    if -(1 << (bits - 1)) <= bounds[0] <= bounds[1] < (1 << (bits - 1)):
        im.bounds[name] = (int(bounds[0]), int(bounds[1]))


def _shape_of(value: Value) -> Tuple[int, ...]:
    return tuple(value.shape)
