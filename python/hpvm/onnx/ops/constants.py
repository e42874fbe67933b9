"""Constants and values passed on: Constant, ConstantOfShape, Range, Cast, Identity and
Dropout (inference)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from ... import tensor as T
from ..nodes import _DTYPE_ELEMENTS, _FLOAT_NAMES, _NUMPY_TYPES, _Node, _element_name, _fail
from .common import _check_unknown_attributes, _constant_input, _int_list, _same_dtype

if TYPE_CHECKING:
    from ..importer import Importer


def _identity(im: Importer, node: _Node) -> None:
    _check_unknown_attributes(node, [])
    im.set_output(node, im.value(node, 0))


def _dropout(im: Importer, node: _Node) -> None:
    _check_unknown_attributes(node, ["ratio", "seed", "is_test", "consumed_inputs"])
    im.only_outputs(node, 1, " (the mask is a boolean tensor)")
    training = im.optional(node, 2)
    if training is not None:
        if not isinstance(training, np.ndarray) or training.size != 1:
            _fail(f"training_mode (input 2, '{node.input(2)}') must be a constant scalar; "
                  "found a value computed by the graph")
        if bool(training.reshape(())):
            _fail("training_mode is true; only inference (training_mode false) is supported")
    im.set_output(node, im.value(node, 0))


def _constant(im: Importer, node: _Node) -> None:
    if len(node.attributes) != 1:
        _fail(f"expected exactly one value attribute, found {sorted(node.attributes)}")
    (name, attribute), = node.attributes.items()
    value = node.attr(name)
    if name == "value":
        array = im.array(value, "the value")
    elif name == "value_float":
        array = np.asarray(value, dtype=np.float32)
    elif name == "value_floats":
        array = np.asarray(list(value), dtype=np.float32)
    elif name == "value_int":
        array = np.asarray(value, dtype=np.int64)
    elif name == "value_ints":
        array = np.asarray(list(value), dtype=np.int64)
    else:
        _fail(f"the attribute '{name}' is not supported; expected value, value_float(s) or "
              "value_int(s)")
    im.set_output(node, array)


def _cast(im: Importer, node: _Node) -> None:
    _check_unknown_attributes(node, ["to", "saturate"])
    to = node.attr("to")
    if to is None:
        _fail("the attribute to is missing")
    dtype = _NUMPY_TYPES.get(int(to))
    if dtype is None:
        _fail(f"casting to {_element_name(int(to))} is not supported; expected a float, "
              "integer or bool type")
    dtype = np.dtype(dtype)
    x = im.value(node, 0)
    if isinstance(x, np.ndarray):
        if x.dtype.kind not in "biuf":
            _fail(f"the input '{node.input(0)}' is a constant tensor of {x.dtype}; expected a "
                  "number or bool tensor")
        with np.errstate(all="ignore"):
            y = (x != 0) if dtype == np.bool_ else x.astype(dtype)
        im.set_output(node, np.asarray(y, dtype=dtype))
        return
    element = _DTYPE_ELEMENTS.get(dtype)
    if element is None:
        _fail(f"casting a tensor computed by the graph to {dtype} is not supported; tensors "
              "computed by the graph are float16, float32, float64, bool, int8, int16, int32 "
              "or int64")
    if x.element in _FLOAT_NAMES and element in _FLOAT_NAMES:
        im.set_output(node, T.cast(x, element, name=node.leaf_name))
    else:
        im.set_output(node, T.convert(x, element, name=node.leaf_name))


def _constant_of_shape(im: Importer, node: _Node) -> None:
    _check_unknown_attributes(node, ["value"])
    shape = _int_list(im, node, 0, "the shape")
    if any(d < 0 for d in shape):
        _fail(f"the shape {shape} has a negative size")
    value = node.attr("value")
    fill = np.zeros((), np.float32) if value is None else im.array(value, "the value")
    if fill.size != 1:
        _fail(f"the value has {fill.size} elements; expected one")
    im.set_output(node, np.full(shape, fill.reshape(()), dtype=fill.dtype))


def _range(im: Importer, node: _Node) -> None:
    _check_unknown_attributes(node, [])
    start, limit, delta = (_constant_input(im, node, i, what) for i, what in
                           enumerate(("the start", "the limit", "the delta")))
    for i, v in enumerate((start, limit, delta)):
        if v.size != 1:
            _fail(f"input {i} '{node.input(i)}' has the shape {list(v.shape)}; expected a scalar")
    _same_dtype(node, [start, limit, delta])
    dtype = start.dtype
    s, l, d = (v.reshape(()).item() for v in (start, limit, delta))
    if d == 0:
        _fail("the delta is 0; expected a nonzero step")
    count = max(int(math.ceil((l - s) / d)), 0)
    if count > 1 << 26:
        _fail(f"the range has {count} elements; expected at most {1 << 26}")
    # As onnxruntime: each element is the previous one plus delta, in the type.
    steps = np.full(count, d, dtype=dtype)
    if count:
        steps[0] = s
    with np.errstate(all="ignore"):
        im.set_output(node, np.add.accumulate(steps, dtype=dtype))


#: The operators of this module.
HANDLERS = {
    "Cast": _cast,
    "Constant": _constant,
    "ConstantOfShape": _constant_of_shape,
    "Dropout": _dropout,
    "Identity": _identity,
    "Range": _range,
}
