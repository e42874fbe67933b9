"""Conv, with a BatchNormalization that only reads it folded into its weights and bias."""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Tuple

import numpy as np

from ... import tensor as T
from ..nodes import _FLOAT_DTYPES, _Node, _fail
from .common import _check_unknown_attributes, _same_element
from .windows import _from_2d, _spatial_rank, _to_2d, _window_attributes

if TYPE_CHECKING:
    from ..importer import Importer


def _conv(im: Importer, node: _Node) -> None:
    _check_unknown_attributes(node, ["auto_pad", "dilations", "group", "kernel_shape",
                                     "pads", "strides"])
    x, w = im.tensor(node, 0), im.tensor(node, 1)
    _same_element(node, [x, w, im.optional(node, 2)])
    _spatial_rank(node, x)
    if w.rank != x.rank:
        _fail(f"the weights {w.type} do not match the input {x.type}; expected the same rank")
    kernel = list(w.shape[2:])
    given = node.ints("kernel_shape")
    if given is not None and list(given) != kernel:
        _fail(f"kernel_shape {given} does not match the weights {w.type}")
    groups = int(node.attr("group", 1))
    if groups <= 0 or x.shape[1] != w.shape[1] * groups or w.shape[0] % groups:
        _fail(f"group {groups} does not fit {x.shape[1]} input channels and weights {w.type}")
    strides, begin, end = _window_attributes(node, x, kernel)
    rank = x.rank
    x2, w2 = _to_2d(x), _to_2d(w)
    if rank == 3:
        strides, begin, end = [1] + strides, [0] + begin, [0] + end
    if begin == end:
        padding = tuple(begin)
    else:
        x2 = T.pad(x2, [0, 0] + begin, [0, 0] + end, 0.0)
        padding = (0, 0)
    bias = im.optional(node, 2)
    b = None if bias is None else im.tensor(node, 2)
    if b is not None and b.shape != (w.shape[0],):
        _fail(f"the bias {b.type} does not match {w.shape[0]} filters")
    folded = _fold_batch_norm(im, node)
    if folded is not None:  # the BatchNormalization after the conv, in its weights and bias
        w2 = _to_2d(im._constant_tensor(folded[0], node.input(1), "input 1"))
        bias = folded[1].reshape((1, w.shape[0], 1, 1))
        b = im._constant_tensor(bias, node.input(2) or node.outputs[0] + ".bias", "the bias")
    conv_name = node.leaf_name if bias is None and rank == 4 else None
    y = T.conv2d(x2, w2, padding=padding, strides=tuple(strides), groups=groups,
                 name=conv_name)
    if bias is not None:
        # A [1, F, 1, 1] constant: the add fuses into the conv's epilogue.
        bias_4d = b.shape == (1, w.shape[0], 1, 1)
        y = T.add(y, b if bias_4d else T.reshape(b, (1, w.shape[0], 1, 1)),
                  name=node.leaf_name if rank == 4 else None)
    im.set_output(node, _from_2d(y, rank))


_BATCH_NORM_ATTRIBUTES = ("epsilon", "momentum", "training_mode", "spatial", "is_test",
                          "consumed_inputs")


def _fold_batch_norm(im: Importer, node: _Node) -> Optional[Tuple[np.ndarray, np.ndarray]]:
    """The weights and bias of Conv `node` with the BatchNormalization that alone reads its
    output folded in (W * s, (b - mean) * s + beta per filter, s = gamma / sqrt(var + eps),
    computed in float64), marking that node folded; None when there is no such node or
    anything of it is not a constant (the BatchNormalization then runs as an op)."""
    out = node.outputs[0] if node.outputs else ""
    readers = im._readers.get(out, [])
    if not out or im._uses.get(out) != 1 or len(readers) != 1:
        return None
    bn = readers[0]
    if (bn.op_type != "BatchNormalization" or bn.proto.domain not in ("", "ai.onnx")
            or bn.input(0) != out or len(bn.inputs) < 5
            or set(bn.attributes) - set(_BATCH_NORM_ATTRIBUTES)
            or int(bn.attr("training_mode", 0)) != 0 or int(bn.attr("spatial", 1)) != 1
            or any(o for o in bn.outputs[1:])):
        return None
    weights, bias = im.value(node, 1), im.optional(node, 2)
    if not isinstance(weights, np.ndarray) or weights.dtype not in _FLOAT_DTYPES:
        return None
    if bias is not None and (not isinstance(bias, np.ndarray) or bias.dtype not in _FLOAT_DTYPES):
        return None
    filters = weights.shape[0]
    params = []
    for i in range(1, 5):
        p = im.values.get(bn.input(i))
        if (not isinstance(p, np.ndarray) or p.dtype not in _FLOAT_DTYPES
                or p.shape != (filters,)):
            return None
        params.append(p.astype(np.float64))
    gamma, beta, mean, var = params
    with np.errstate(all="ignore"):
        scale = gamma / np.sqrt(var + float(bn.attr("epsilon", 1e-5)))
        shift = -mean if bias is None else bias.astype(np.float64) - mean
        w = weights.astype(np.float64) * scale.reshape((filters,) + (1,) * (weights.ndim - 1))
        b = shift * scale + beta
    if not (np.all(np.isfinite(w)) and np.all(np.isfinite(b))):
        return None
    im._folded[bn.index] = 0
    return w.astype(weights.dtype), b.astype(weights.dtype)


#: The operators of this module.
HANDLERS = {
    "Conv": _conv,
}
