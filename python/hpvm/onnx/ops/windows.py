"""Sliding windows (Conv and the pools): spatial rank, kernel, strides, dilations and pads,
and the 2-D views of 1-D windows."""

from __future__ import annotations

from typing import List, Sequence, Tuple

from ... import tensor as T
from ...tensor import Tensor
from ..nodes import _Node, _fail


def _spatial_rank(node: _Node, x: Tensor) -> int:
    if x.rank not in (3, 4):
        _fail(f"expected an input of rank 3 (N, C, L) or 4 (N, C, H, W), found {x.type}; "
              "only 1-D and 2-D windows are supported")
    return x.rank - 2


def _window_pads(node: _Node, spatial: Sequence[int], kernel: Sequence[int],
                 strides: Sequence[int]) -> Tuple[List[int], List[int]]:
    """(begin, end) paddings of each spatial dimension from auto_pad / pads."""
    rank = len(spatial)
    auto_pad = node.string("auto_pad", "NOTSET")
    pads = node.ints("pads")
    if auto_pad in ("NOTSET", ""):
        pads = pads if pads is not None else [0] * (2 * rank)
        if len(pads) != 2 * rank or any(p < 0 for p in pads):
            _fail(f"pads {pads} are not valid; expected {2 * rank} non-negative sizes")
        return list(pads[:rank]), list(pads[rank:])
    if pads is not None and any(pads):
        _fail(f"pads {pads} are given together with auto_pad '{auto_pad}'; expected one of them")
    if auto_pad == "VALID":
        return [0] * rank, [0] * rank
    if auto_pad not in ("SAME_UPPER", "SAME_LOWER"):
        _fail(f"auto_pad '{auto_pad}' is not valid; expected NOTSET, VALID, SAME_UPPER or "
              "SAME_LOWER")
    begin, end = [], []
    for size, k, s in zip(spatial, kernel, strides):
        out = -(-size // s)
        total = max((out - 1) * s + k - size, 0)
        small = total // 2
        if auto_pad == "SAME_UPPER":
            begin.append(small)
            end.append(total - small)
        else:
            begin.append(total - small)
            end.append(small)
    return begin, end


def _window_attributes(node: _Node, x: Tensor, kernel: Sequence[int]):
    """strides, (begin, end) pads of a Conv or pool, dilations checked."""
    rank = x.rank - 2
    strides = node.ints("strides", [1] * rank)
    if len(strides) != rank or any(s <= 0 for s in strides):
        _fail(f"strides {strides} are not valid; expected {rank} positive integers")
    dilations = node.ints("dilations", [1] * rank)
    if any(d != 1 for d in dilations):
        _fail(f"dilations {dilations} are not supported; expected {[1] * rank}")
    begin, end = _window_pads(node, x.shape[2:], kernel, strides)
    for size, b, e, k in zip(x.shape[2:], begin, end, kernel):
        if size + b + e < k:
            _fail(f"the window {list(kernel)} is larger than the padded input {x.type} "
                  f"(pads {begin + end})")
    return strides, begin, end


def _to_2d(x: Tensor) -> Tensor:
    """A rank-3 (N, C, L) tensor as (N, C, 1, L)."""
    return T.reshape(x, (x.shape[0], x.shape[1], 1, x.shape[2])) if x.rank == 3 else x


def _from_2d(y: Tensor, rank: int) -> Tensor:
    return T.reshape(y, (y.shape[0], y.shape[1], y.shape[3])) if rank == 3 else y
