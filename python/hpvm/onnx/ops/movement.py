"""Data movement: Concat, Slice, Split and Pad."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Sequence

import numpy as np

from ... import tensor as T
from ..nodes import Value, _NUMBERS, _Node, _element_of, _fail
from .common import (_check_unknown_attributes, _constant_input, _int_list, _normalize_axes,
                     _one_type, _rank, _same_dtype)

if TYPE_CHECKING:
    from ..importer import Importer


def _concat(im: Importer, node: _Node) -> None:
    _check_unknown_attributes(node, ["axis"])
    if not node.inputs:
        _fail("expected at least one input")
    values = [im.value(node, i) for i in range(len(node.inputs))]
    axis = node.attr("axis")
    if axis is None:
        if im.opset >= 4:
            _fail("the attribute axis is missing")
        axis = 1
    axis = int(axis)
    rank = _rank(values[0])
    if not -rank <= axis < rank:
        _fail(f"axis {axis} is out of range for rank {rank}")
    axis %= rank
    for i, v in enumerate(values):
        if _rank(v) != rank or any(a != b for d, (a, b) in enumerate(zip(v.shape, values[0].shape))
                                   if d != axis):
            _fail(f"input {i} '{node.input(i)}' has the shape {list(v.shape)}, which does not "
                  f"match {list(values[0].shape)} outside axis {axis}")
    if all(isinstance(v, np.ndarray) for v in values):
        _same_dtype(node, values)
        im.set_output(node, np.concatenate(values, axis=axis))
        return
    # Empty constants add nothing (shape computations concatenate them).
    kept = [(i, v) for i, v in enumerate(values)
            if not (isinstance(v, np.ndarray) and v.shape[axis] == 0)]
    elements = [_element_of(node, i, v) for i, v in kept]
    _one_type(node, elements, _NUMBERS + ("i1",), names=[i for i, _ in kept])
    tensors = [im.operand(node, i) for i, _ in kept]
    im.set_output(node, T.concat(tensors, axis, name=node.leaf_name))


def _slice_of(im: Importer, node: _Node, x: Value, starts: Sequence[int],
              steps: Sequence[int], sizes: Sequence[int], output: int = 0) -> None:
    """Output `output` of `node`: the strided slice of x (a tensor or a constant)."""
    if isinstance(x, np.ndarray):
        index = tuple(slice(start, start + step * size if start + step * size >= 0 else None,
                            step) if size else slice(0, 0)
                      for start, step, size in zip(starts, steps, sizes))
        im.set_output(node, np.ascontiguousarray(x[index]) if x.ndim else x, output)
        return
    if 0 in sizes:
        # An empty slice holds no data: it is the empty constant of its shape (which a
        # Concat drops, and which a graph output or an operation refuses).
        im.set_output(node, np.zeros(sizes, dtype=x.type.dtype), output)
        return
    im.set_output(node, T.strided_slice(x, starts, steps, sizes,
                                        name=node.leaf_name if output == 0 else
                                        f"{node.leaf_name}_{output}"), output)


def _slice(im: Importer, node: _Node) -> None:
    x = im.value(node, 0)
    rank = _rank(x)
    if im.opset < 10:
        _check_unknown_attributes(node, ["starts", "ends", "axes"])
        starts, ends = node.ints("starts"), node.ints("ends")
        if starts is None or ends is None:
            _fail("the attributes starts and ends are required")
        axes, steps = node.ints("axes"), None
    else:
        _check_unknown_attributes(node, [])
        starts = _int_list(im, node, 1, "the starts")
        ends = _int_list(im, node, 2, "the ends")
        axes = _int_list(im, node, 3, "the axes") if node.input(3) else None
        steps = _int_list(im, node, 4, "the steps") if node.input(4) else None
    axes = list(range(len(starts))) if axes is None else axes
    steps = [1] * len(starts) if steps is None else steps
    if not len(starts) == len(ends) == len(axes) == len(steps):
        _fail(f"starts {starts}, ends {ends}, axes {axes} and steps {steps} differ in length")
    axes = _normalize_axes(axes, rank)
    first, step_of, sizes = [0] * rank, [1] * rank, list(x.shape)
    for a, start, end, step in zip(axes, starts, ends, steps):
        n = x.shape[a]
        if step == 0:
            _fail(f"the step of axis {a} is 0; expected a nonzero step")
        start = start + n if start < 0 else start
        end = end + n if end < 0 else end
        if step > 0:
            start, end = min(max(start, 0), n), min(max(end, 0), n)
        else:
            start, end = min(max(start, 0), n - 1), min(max(end, -1), n - 1)
        count = max(-(-(end - start) // step), 0)
        first[a], step_of[a], sizes[a] = (start if count else 0), step, count
    _slice_of(im, node, x, first, step_of, sizes)


def _split(im: Importer, node: _Node) -> None:
    _check_unknown_attributes(node, ["axis", "split", "num_outputs"])
    x = im.value(node, 0)
    rank = _rank(x)
    axis = int(node.attr("axis", 0))
    if not -rank <= axis < rank:
        _fail(f"axis {axis} is out of range for rank {rank}")
    axis %= rank
    n = x.shape[axis]
    outputs = len(node.outputs)
    if im.opset >= 13:
        if "split" in node.attributes:
            _fail(f"the attribute split is not valid in opset {im.opset}; expected the sizes as "
                  "input 1")
        split = _int_list(im, node, 1, "the split") if node.input(1) else None
    else:
        split = node.ints("split")
    count = node.attr("num_outputs")
    if count is not None:
        if im.opset < 18:
            _fail(f"the attribute num_outputs is not valid in opset {im.opset}")
        if split is not None:
            _fail("both split and num_outputs are given; expected one of them")
        count = int(count)
        if count != outputs or count < 1:
            _fail(f"num_outputs is {count} but the node has {outputs} outputs")
        chunk = -(-n // count)
        split = [chunk] * (count - 1) + [n - chunk * (count - 1)]
        if split[-1] < 0:
            _fail(f"{count} outputs of {chunk} elements exceed the {n} elements of axis {axis}")
    elif split is None:
        if im.opset >= 18:
            _fail("neither split nor num_outputs is given; expected one of them")
        if n % outputs:
            _fail(f"the {n} elements of axis {axis} do not split evenly into {outputs} outputs")
        split = [n // outputs] * outputs
    if len(split) != outputs:
        _fail(f"the split {split} has {len(split)} sizes for {outputs} outputs")
    if any(s < 0 for s in split) or sum(split) != n:
        _fail(f"the split {split} does not add up to the {n} elements of axis {axis}")
    offset = 0
    for i, size in enumerate(split):
        starts, steps, sizes = [0] * rank, [1] * rank, list(x.shape)
        starts[axis], sizes[axis] = offset, size
        if node.outputs[i]:
            _slice_of(im, node, x, starts, steps, sizes, output=i)
        offset += size


def _pad(im: Importer, node: _Node) -> None:
    x = im.value(node, 0)
    rank = _rank(x)
    mode = node.string("mode", "constant")
    if im.opset < 11:
        _check_unknown_attributes(node, ["mode", "pads", "value", "paddings"])
        pads = node.ints("pads", node.ints("paddings"))
        if pads is None:
            _fail("the attribute pads is missing")
        value = float(node.attr("value", 0.0))
        axes = list(range(rank))
    else:
        _check_unknown_attributes(node, ["mode"])
        pads = _int_list(im, node, 1, "the pads")
        value = 0.0
        if node.input(2):
            given = _constant_input(im, node, 2, "the constant value")
            if given.size != 1:
                _fail(f"the constant value (input 2, '{node.input(2)}') has the shape "
                      f"{list(given.shape)}; expected a scalar")
            value = given.reshape(()).item()
        axes = _int_list(im, node, 3, "the axes") if node.input(3) else list(range(rank))
        axes = _normalize_axes(axes, rank)
    if len(pads) != 2 * len(axes):
        _fail(f"pads {pads} are not valid; expected {2 * len(axes)} sizes (begin and end of "
              f"each of the {len(axes)} padded axes)")
    if mode not in ("constant", "reflect", "edge", "wrap"):
        _fail(f"mode '{mode}' is not valid; expected constant, reflect, edge or wrap")
    low, high = [0] * rank, [0] * rank
    for k, a in enumerate(axes):
        low[a], high[a] = pads[k], pads[k + len(axes)]
    if mode != "constant" and any(p < 0 for p in low + high):
        _fail(f"negative pads {pads} with mode '{mode}' are not supported; expected them with "
              "mode constant")
    # Negative pads crop: the slice of the dimensions they remove, then the padding.
    starts = [-p if p < 0 else 0 for p in low]
    sizes = [n + min(lo, 0) + min(hi, 0) for n, lo, hi in zip(x.shape, low, high)]
    if any(s < 0 for s in sizes):
        _fail(f"pads {pads} remove more than the input {list(x.shape)} has")
    if any(p < 0 for p in low + high):
        low, high = [max(p, 0) for p in low], [max(p, 0) for p in high]
        if isinstance(x, np.ndarray):
            x = x[tuple(slice(s, s + n) for s, n in zip(starts, sizes))]
        elif 0 in sizes:
            # Nothing of the input is left: the result is the constant value throughout.
            shape = [n + lo + hi for n, lo, hi in zip(sizes, low, high)]
            im.set_output(node, np.full(shape, value, dtype=x.type.dtype))
            return
        else:
            x = T.strided_slice(x, starts, [1] * rank, sizes)
    if isinstance(x, np.ndarray):
        numpy_mode = {"constant": "constant", "reflect": "reflect", "edge": "edge",
                      "wrap": "wrap"}[mode]
        extra = {"constant_values": value} if mode == "constant" else {}
        if mode != "constant" and 0 in x.shape and (any(low) or any(high)):
            _fail(f"mode '{mode}' pads an empty input {list(x.shape)}")
        im.set_output(node, np.pad(x, list(zip(low, high)), mode=numpy_mode, **extra)
                      .astype(x.dtype))
        return
    im.check_float(node, x, 0)
    if mode == "constant":
        if math.isnan(value):
            _fail("the constant value is NaN; expected a number")
        y = T.pad(x, low, high, value, name=node.leaf_name)
    else:
        for d, (lo, hi, n) in enumerate(zip(low, high, x.shape)):
            if mode == "reflect" and (lo or hi) and (lo >= n or hi >= n):
                _fail(f"the reflect pads {lo} and {hi} of axis {d} are not smaller than its "
                      f"size {n}")
        y = T.pad_border(x, low, high, mode, name=node.leaf_name)
    im.set_output(node, y)


#: The operators of this module.
HANDLERS = {
    "Concat": _concat,
    "Pad": _pad,
    "Slice": _slice,
    "Split": _split,
}
