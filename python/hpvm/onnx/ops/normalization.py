"""BatchNormalization (inference), InstanceNormalization, LayerNormalization and Softmax."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from ... import tensor as T
from ...ir import float_literal
from ..nodes import _Node, _fail
from .common import _check_unknown_attributes, _same_element

if TYPE_CHECKING:
    from ..importer import Importer


def _batch_norm(im: Importer, node: _Node) -> None:
    _check_unknown_attributes(node, ["epsilon", "momentum", "training_mode", "spatial",
                                     "is_test", "consumed_inputs"])
    if int(node.attr("training_mode", 0)) != 0:
        _fail(f"training_mode {node.attr('training_mode')} is not supported; expected 0 "
              "(inference)")
    if int(node.attr("spatial", 1)) != 1:
        _fail(f"spatial {node.attr('spatial')} is not supported; expected 1")
    im.only_outputs(node, 1, " (running statistics are outputs of training mode)")
    x = im.tensor(node, 0)
    if x.rank < 2:
        _fail(f"expected an input of rank >= 2 (N, C, ...), found {x.type}")
    channels = x.shape[1]
    constants = _constant_statistics(im, node, x, channels)
    if constants is not None:
        scale, shift = constants
        image = x if x.rank == 4 else T.reshape(
            x, (x.shape[0], channels, 1, int(math.prod(x.shape[2:]))))
        y = T.add(T.multiply(image, scale), shift, name=node.leaf_name if x.rank == 4 else None)
        im.set_output(node, y if x.rank == 4 else T.reshape(y, x.shape))
        return
    params = []
    for i in range(1, 5):
        value = im.check_float(node, im.value(node, i), i)
        if isinstance(value, np.ndarray) and value.dtype != x.type.dtype:
            # Opset 15 lets scale and bias (T1), mean and variance (T2) have other float
            # types than X: constants are converted to X's.
            value = value.astype(x.type.dtype)
            p = im._constant_tensor(value, node.input(i), f"input {i}")
        else:
            _same_element(node, [x] + [None] * (i - 1) + [value])
            p = im.tensor(node, i)
        if p.shape != (channels,):
            _fail(f"input {i} '{node.input(i)}' is {p.type}; expected [{channels}] "
                  "(one value per channel)")
        params.append(p)
    epsilon = float(node.attr("epsilon", 1e-5))
    image = x if x.rank == 4 else T.reshape(
        x, (x.shape[0], channels, 1, int(math.prod(x.shape[2:]))))
    y = T.batchnorm(image, *params, epsilon=epsilon, name=node.leaf_name if x.rank == 4 else None)
    im.set_output(node, y if x.rank == 4 else T.reshape(y, x.shape))


def _constant_statistics(im: Importer, node: _Node, x, channels: int):
    """(scale, shift) as [1, C, 1, 1] arrays of X's type when scale, bias, mean and variance
    are all constants of one value per channel: the normalization is then x * scale + shift
    with scale = gamma / sqrt(variance + epsilon) and shift = beta - mean * scale, made here
    in X's type as onnxruntime makes them, one multiply-add per element where the op divides
    (densenet121's normalizations of its concatenations: 12% of its time). Else None."""
    values = [im.value(node, i) for i in range(1, 5)]
    if not all(isinstance(v, np.ndarray) and v.shape == (channels,) and
               v.dtype.kind == "f" for v in values):
        return None
    dtype = x.type.dtype
    if dtype not in (np.float32, np.float64):
        return None
    gamma, beta, mean, variance = (v.astype(dtype) for v in values)
    epsilon = dtype.type(node.attr("epsilon", 1e-5))
    scale = gamma / np.sqrt(variance + epsilon)
    shift = beta - mean * scale
    shape = (1, channels, 1, 1)
    return scale.reshape(shape), shift.reshape(shape)


def _instance_norm(im: Importer, node: _Node) -> None:
    """Each channel of each batch item normalized over its other dimensions, then scaled
    and shifted per channel: a layer normalization from axis 2 on, times scale[c], plus
    B[c]."""
    _check_unknown_attributes(node, ["epsilon"])
    x = im.tensor(node, 0)
    if x.rank < 3:
        _fail(f"expected an input of rank >= 3 (N, C, D1, ...), found {x.type}")
    im.check_float(node, x, 0)
    channels = x.shape[1]
    epsilon = float(node.attr("epsilon", 1e-5))
    if not math.isfinite(epsilon):
        _fail(f"epsilon is {epsilon}; expected a finite number")
    params = []
    for i in (1, 2):
        value = im.check_float(node, im.value(node, i), i)
        _same_element(node, [x] + [None] * (i - 1) + [value])
        p = im.tensor(node, i)
        if p.shape != (channels,):
            _fail(f"input {i} '{node.input(i)}' is {p.type}; expected [{channels}] "
                  "(one value per channel)")
        params.append(T.reshape(p, (channels,) + (1,) * (x.rank - 2)))
    normalized = T.layer_norm(x, 2, epsilon)
    im.set_output(node, T.add(T.multiply(normalized, params[0]), params[1],
                              name=node.leaf_name))


def _softmax(im: Importer, node: _Node) -> None:
    _check_unknown_attributes(node, ["axis"])
    x = im.tensor(node, 0)
    if x.rank == 0:
        _fail(f"expected an input of rank >= 1, found {x.type}")
    axis = int(node.attr("axis", -1 if im.opset >= 13 else 1))
    if not -x.rank <= axis < x.rank:
        _fail(f"axis {axis} is out of range for {x.type}")
    axis %= x.rank
    if im.opset >= 13 or x.rank == 1:
        im.set_output(node, T.softmax(x, axis=axis, name=node.leaf_name))
        return
    # opset < 13: softmax of the 2-D [prod(dims < axis), prod(dims >= axis)] matrix, row-wise.
    rows = int(math.prod(x.shape[:axis]))
    flat = T.reshape(x, (rows, int(math.prod(x.shape[axis:]))))
    y = T.reshape(T.softmax(flat, axis=1, name=node.leaf_name), x.shape)
    im.set_output(node, y)


def _layer_norm(im: Importer, node: _Node) -> None:
    _check_unknown_attributes(node, ["axis", "epsilon", "stash_type"])
    x = im.tensor(node, 0)
    if x.rank == 0:
        _fail(f"expected an input of rank >= 1, found {x.type}")
    axis = int(node.attr("axis", -1))
    if not -x.rank <= axis < x.rank:
        _fail(f"axis {axis} is out of range for {x.type}")
    axis %= x.rank
    if int(node.attr("stash_type", 1)) != 1:
        _fail(f"stash_type {node.attr('stash_type')} is not supported; expected 1 (float)")
    epsilon = float(node.attr("epsilon", 1e-5))
    if not math.isfinite(epsilon):
        _fail(f"epsilon is {epsilon}; expected a finite number")
    scale = im.check_float(node, im.value(node, 1), 1)
    bias = im.optional(node, 2)
    _same_element(node, [x, scale, bias])
    scale = im.tensor(node, 1)
    bias = im.tensor(node, 2) if bias is not None else None
    normalized = x.shape[axis:]
    for what, p in (("scale", scale), ("bias", bias)):
        if p is not None and (p.rank > len(normalized) or any(
                s != 1 and s != normalized[len(normalized) - p.rank + i]
                for i, s in enumerate(p.shape))):
            _fail(f"the {what} {p.type} does not broadcast to the normalized dimensions "
                  f"{list(normalized)} of {x.type}")
    y = T.layer_norm(x, axis, epsilon, scale, bias, name=node.leaf_name)
    im.set_output(node, y)
    if any(node.outputs[1:3]):
        # Mean and InvStdDev (float32 for float16 inputs, the stash type), keeping dims.
        axes = list(range(axis, x.rank))
        stats = T.cast(x, "f32") if x.element == "f16" else x
        mean = T.reduce_axes(stats, axes, "mean", keepdims=True,
                             name=f"{node.leaf_name}_mean")
        if len(node.outputs) > 1 and node.outputs[1]:
            im.set_output(node, mean, 1)
        if len(node.outputs) > 2 and node.outputs[2]:
            centered = T.subtract(stats, mean)
            squares = T.map([centered], f"%r = arith.mulf %e0, %e0 : {stats.element}")
            variance = T.reduce_axes(squares, axes, "mean", keepdims=True)
            e = stats.element
            inverse = T.map([variance], f"%eps = arith.constant {float_literal(epsilon)} : {e}\n"
                                        f"%s = arith.addf %e0, %eps : {e}\n"
                                        f"%q = math.sqrt %s : {e}\n"
                                        f"%one = arith.constant 1.0 : {e}\n"
                                        f"%r = arith.divf %one, %q : {e}",
                            name=f"{node.leaf_name}_inv_std_dev")
            im.set_output(node, inverse, 2)
    im.only_outputs(node, 3)


#: The operators of this module.
HANDLERS = {
    "BatchNormalization": _batch_norm,
    "InstanceNormalization": _instance_norm,
    "LayerNormalization": _layer_norm,
    "Softmax": _softmax,
}
