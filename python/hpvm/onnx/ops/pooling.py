"""MaxPool, AveragePool (ceil_mode and count_include_pad included), GlobalAveragePool and
GlobalMaxPool."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, List, Optional, Sequence

import numpy as np

from ... import tensor as T
from ...tensor import Tensor
from ..nodes import _Node, _fail
from .common import _check_unknown_attributes
from .windows import _from_2d, _spatial_rank, _to_2d, _window_attributes

if TYPE_CHECKING:
    from ..importer import Importer


def _pool_common(im: Importer, node: _Node, kind: str) -> None:
    known = ["auto_pad", "ceil_mode", "dilations", "kernel_shape", "pads", "strides"]
    known += ["storage_order"] if kind == "max" else ["count_include_pad"]
    _check_unknown_attributes(node, known)
    im.only_outputs(node, 1, " (the Indices output of MaxPool is an int64 tensor)")
    x = im.tensor(node, 0)
    _spatial_rank(node, x)
    kernel = node.ints("kernel_shape")
    if kernel is None or len(kernel) != x.rank - 2 or any(k <= 0 for k in kernel):
        _fail(f"kernel_shape {kernel} is not valid; expected {x.rank - 2} positive sizes")
    ceil_mode = int(node.attr("ceil_mode", 0))
    if ceil_mode not in (0, 1):
        _fail(f"ceil_mode {ceil_mode} is not valid; expected 0 or 1")
    auto_pad = node.string("auto_pad", "NOTSET")
    if ceil_mode and auto_pad not in ("NOTSET", ""):
        _fail(f"ceil_mode 1 with auto_pad '{auto_pad}' is not supported; expected auto_pad "
              "NOTSET (explicit pads) with ceil_mode 1")
    strides, begin, end = _window_attributes(node, x, kernel)
    rank = x.rank
    if rank == 3:
        kernel, strides, begin, end = [1] + kernel, [1] + strides, [0] + begin, [0] + end
    x2 = _to_2d(x)
    if any(b >= k or e >= k for b, e, k in zip(begin, end, kernel)):
        _fail(f"pads {node.ints('pads')} are not smaller than the kernel "
              f"{node.ints('kernel_shape')}")
    count_include_pad = int(node.attr("count_include_pad", 0))
    name = node.leaf_name if rank == 4 else None
    extra = _ceil_extra(x2.shape[2:], kernel, strides, begin, end) if ceil_mode else [0, 0]
    y = _pool(x2, kind, kernel, strides, begin, end, extra, count_include_pad, name)
    im.set_output(node, _from_2d(y, rank))


def _ceil_extra(spatial: Sequence[int], kernel: Sequence[int], strides: Sequence[int],
                begin: Sequence[int], end: Sequence[int]) -> List[int]:
    """The elements past the end padding that the last window of ceil_mode 1 covers, per
    spatial dimension: the output size rounds up, but (as in ONNX and onnxruntime) a last
    window that would start past the input and its begin padding is dropped."""
    extra = []
    for size, k, s, b, e in zip(spatial, kernel, strides, begin, end):
        span = size + b + e - k
        out = -(-span // s) + 1
        if (out - 1) * s >= size + b:
            out -= 1
        extra.append(max((out - 1) * s + k - (size + b + e), 0))
    return extra


def _pool(x2: Tensor, kind: str, kernel: Sequence[int], strides: Sequence[int],
          begin: Sequence[int], end: Sequence[int], extra: Sequence[int],
          count_include_pad: int, name: Optional[str]) -> Tensor:
    """A pool of the image padded by `begin` before it and by `end`, then `extra`, after it
    (`extra`: ceil_mode's last windows, past the end padding), all inside the op. Max
    ignores the padding; the average divides by the elements of each window inside the
    input (count_include_pad 0) or inside the input and its pads (count_include_pad 1),
    never counting `extra`: the window mean (which counts all padding) times the window's
    area over that count."""
    after = [e + x for e, x in zip(end, extra)]
    padded = any(begin) or any(end)
    if kind == "max" or not (any(extra) or (padded and not count_include_pad)):
        return T.pool(x2, kind, tuple(kernel), tuple(strides), tuple(begin), name=name,
                      padding_end=tuple(after))
    y = T.pool(x2, "mean", tuple(kernel), tuple(strides), tuple(begin),
               padding_end=tuple(after))
    spatial = x2.shape[2:]
    if count_include_pad:
        inside = np.pad(np.ones([s + b + e for s, b, e in zip(spatial, begin, end)]),
                        [(0, x) for x in extra])
    else:
        inside = np.pad(np.ones(spatial), list(zip(begin, after)))
    counts = _window_counts(inside, y.shape[2:], kernel, strides)
    scale = (kernel[0] * kernel[1] / counts).astype(y.type.dtype)
    return T.multiply(y, scale.reshape((1, 1) + scale.shape), name=name)


def _window_counts(inside: np.ndarray, shape: Sequence[int], kernel: Sequence[int],
                   strides: Sequence[int]) -> np.ndarray:
    """How many elements of `inside` (0 / 1) each window of the output `shape` covers."""
    summed = np.pad(inside, [(1, 0), (1, 0)]).cumsum(0).cumsum(1)
    rows = np.arange(shape[0]) * strides[0]
    cols = np.arange(shape[1]) * strides[1]
    r0, c0 = rows[:, None], cols[None, :]
    r1, c1 = r0 + kernel[0], c0 + kernel[1]
    return summed[r1, c1] - summed[r0, c1] - summed[r1, c0] + summed[r0, c0]


def _max_pool(im: Importer, node: _Node) -> None:
    _pool_common(im, node, "max")


def _average_pool(im: Importer, node: _Node) -> None:
    _pool_common(im, node, "mean")


def _global_pool(kind: str) -> Callable[[Importer, _Node], None]:
    def handler(im: Importer, node: _Node) -> None:
        _check_unknown_attributes(node, [])
        x = im.tensor(node, 0)
        _spatial_rank(node, x)
        y = T.global_pool(_to_2d(x), kind, name=node.leaf_name if x.rank == 4 else None)
        im.set_output(node, _from_2d(y, x.rank))
    return handler


#: The operators of this module.
HANDLERS = {
    "AveragePool": _average_pool,
    "GlobalAveragePool": _global_pool("mean"),
    "GlobalMaxPool": _global_pool("max"),
    "MaxPool": _max_pool,
}
