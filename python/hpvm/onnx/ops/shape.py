"""Operators on shapes: Reshape, Flatten, Transpose, Unsqueeze, Squeeze, Expand, Tile,
and Shape and Size (constants, since shapes are static)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Sequence

import numpy as np

from ... import tensor as T
from ..nodes import Value, _Node, _fail
from .common import _axes, _check_unknown_attributes, _int_list, _normalize_axes, _rank

if TYPE_CHECKING:
    from ..importer import Importer


def _flatten(im: Importer, node: _Node) -> None:
    _check_unknown_attributes(node, ["axis"])
    x = im.value(node, 0)
    rank = x.ndim if isinstance(x, np.ndarray) else x.rank
    axis = int(node.attr("axis", 1))
    if not -rank <= axis <= rank:
        _fail(f"axis {axis} is out of range for rank {rank}")
    if axis < 0:
        axis += rank
    shape = (int(math.prod(x.shape[:axis])), int(math.prod(x.shape[axis:])))
    if isinstance(x, np.ndarray):
        im.set_output(node, x.reshape(shape))
    else:
        im.set_output(node, T.reshape(x, shape, name=node.leaf_name))


def _reshape(im: Importer, node: _Node) -> None:
    _check_unknown_attributes(node, ["allowzero", "shape", "consumed_inputs"])
    x = im.value(node, 0)
    if im.opset < 5:
        shape = node.ints("shape")
        if shape is None:
            _fail("the shape attribute is missing")
    else:
        value = im.value(node, 1)
        if not isinstance(value, np.ndarray):
            _fail(f"the shape (input 1, '{node.input(1)}') must be a constant (an initializer or "
                  "a Constant node); found a value computed by the graph (only static shapes "
                  "are supported)")
        if value.dtype != np.int64 or value.ndim != 1:
            _fail(f"the shape '{node.input(1)}' is a {value.dtype} tensor of shape "
                  f"{list(value.shape)}; expected a 1-D int64 tensor")
        shape = [int(v) for v in value]
    allowzero = int(node.attr("allowzero", 0))
    source = list(x.shape)
    resolved = []
    for i, d in enumerate(shape):
        if d == 0 and not allowzero:
            if i >= len(source):
                _fail(f"the shape {shape} copies dimension {i} (0), which the input "
                      f"{source} does not have")
            resolved.append(source[i])
        else:
            resolved.append(d)
    if resolved.count(-1) > 1 or any(d < -1 for d in resolved):
        _fail(f"the shape {shape} is not valid; expected at most one -1 and no other "
              "negative size")
    total = int(math.prod(source))
    if -1 in resolved:
        known = int(math.prod(d for d in resolved if d != -1))
        if known == 0 or total % known:
            _fail(f"cannot infer the -1 of the shape {shape} for the input {source}")
        resolved = [total // known if d == -1 else d for d in resolved]
    if int(math.prod(resolved)) != total:
        _fail(f"the input {source} has {total} elements; the shape {shape} gives "
              f"{resolved} with {int(math.prod(resolved))}")
    if 0 in resolved:
        _fail(f"the shape {resolved} has a zero-size dimension; expected sizes >= 1")
    _reshaped(im, node, x, resolved)


def _transpose(im: Importer, node: _Node) -> None:
    _check_unknown_attributes(node, ["perm"])
    x = im.value(node, 0)
    rank = x.ndim if isinstance(x, np.ndarray) else x.rank
    perm = node.ints("perm", list(range(rank))[::-1])
    if sorted(perm) != list(range(rank)):
        _fail(f"perm {perm} is not a permutation of the {rank} dimensions")
    if isinstance(x, np.ndarray):
        im.set_output(node, np.asarray(np.transpose(x, perm), order="C"))  # keeps rank 0
    else:
        im.set_output(node, T.transpose(x, perm, name=node.leaf_name))


def _shape(im: Importer, node: _Node) -> None:
    _check_unknown_attributes(node, ["start", "end"])
    shape = list(im.value(node, 0).shape)
    start, end = node.attr("start"), node.attr("end")
    rank = len(shape)
    start = 0 if start is None else int(start)
    end = rank if end is None else int(end)
    start = min(max(start + rank if start < 0 else start, 0), rank)
    end = min(max(end + rank if end < 0 else end, 0), rank)
    im.set_output(node, np.asarray(shape[start:end], dtype=np.int64).reshape(-1))


def _size(im: Importer, node: _Node) -> None:
    _check_unknown_attributes(node, [])
    im.set_output(node, np.asarray(math.prod(im.value(node, 0).shape), dtype=np.int64))


def _reshaped(im: Importer, node: _Node, x: Value, shape: Sequence[int]) -> None:
    if isinstance(x, np.ndarray):
        im.set_output(node, x.reshape(shape))
    else:
        im.set_output(node, T.reshape(x, shape, name=node.leaf_name))


def _unsqueeze(im: Importer, node: _Node) -> None:
    _check_unknown_attributes(node, ["axes"])
    x = im.value(node, 0)
    axes = _axes(im, node, 1, 13)
    if not axes:
        _fail("the axes are missing; expected the dimensions to insert")
    rank = _rank(x) + len(axes)
    axes = _normalize_axes(axes, rank)
    dims = iter(x.shape)
    _reshaped(im, node, x, [1 if d in axes else next(dims) for d in range(rank)])


def _squeeze(im: Importer, node: _Node) -> None:
    _check_unknown_attributes(node, ["axes"])
    x = im.value(node, 0)
    axes = _axes(im, node, 1, 13)
    shape = list(x.shape)
    if axes is None:
        axes = [d for d, n in enumerate(shape) if n == 1]
    axes = _normalize_axes(axes, len(shape))
    for a in axes:
        if shape[a] != 1:
            _fail(f"dimension {a} of the input {shape} has size {shape[a]}; expected size 1 "
                  "for each squeezed axis")
    _reshaped(im, node, x, [n for d, n in enumerate(shape) if d not in axes])


def _expand(im: Importer, node: _Node) -> None:
    _check_unknown_attributes(node, [])
    x = im.value(node, 0)
    target = _int_list(im, node, 1, "the shape")
    try:
        shape = tuple(np.broadcast_shapes(tuple(x.shape), tuple(target)))
    except ValueError:
        _fail(f"the input shape {list(x.shape)} does not broadcast with the shape {target}")
    if isinstance(x, np.ndarray):
        im.set_output(node, np.broadcast_to(x, shape).copy())
    else:
        if 0 in shape:
            _fail(f"the result shape {list(shape)} has a zero-size dimension; expected sizes "
                  ">= 1")
        y = T.broadcast_to(x, shape, name=node.leaf_name)
        im.set_output(node, y)


def _tile(im: Importer, node: _Node) -> None:
    """Tile by constant repeats: x as (1, d0, 1, d1, ...) broadcast to (r0, d0, r1, d1, ...),
    then merged to (r0 * d0, r1 * d1, ...)."""
    _check_unknown_attributes(node, [])
    x = im.value(node, 0)
    repeats = _int_list(im, node, 1, "the repeats")
    rank = _rank(x)
    if len(repeats) != rank:
        _fail(f"the repeats {repeats} have {len(repeats)} elements; expected one per dimension "
              f"of the input's {rank}")
    if any(r < 0 for r in repeats):
        _fail(f"the repeats {repeats} are negative; expected sizes >= 0")
    if isinstance(x, np.ndarray):
        im.set_output(node, np.tile(x, repeats))
        return
    if 0 in repeats:
        _fail(f"the repeats {repeats} make a zero-size dimension; expected repeats >= 1")
    if all(r == 1 for r in repeats):
        im.set_output(node, x)
        return
    spread = [d for n in x.shape for d in (1, n)]
    repeated = [d for r, n in zip(repeats, x.shape) for d in (r, n)]
    y = T.broadcast_to(T.reshape(x, spread), repeated)
    im.set_output(node, T.reshape(y, [r * n for r, n in zip(repeats, x.shape)],
                                  name=node.leaf_name))


#: The operators of this module.
HANDLERS = {
    "Expand": _expand,
    "Flatten": _flatten,
    "Reshape": _reshape,
    "Shape": _shape,
    "Size": _size,
    "Squeeze": _squeeze,
    "Transpose": _transpose,
    "Tile": _tile,
    "Unsqueeze": _unsqueeze,
}
