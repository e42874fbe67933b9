"""Indexing: Gather, GatherElements, GatherND (at constant indices, or at computed ones
whose range is known or checked at the call) and ScatterND."""

from __future__ import annotations

from typing import TYPE_CHECKING, List, Optional, Tuple

import numpy as np

from ... import tensor as T
from ...tensor import Tensor
from ..nodes import Value, _FLOAT_NAMES, _NUMBERS, _Node, _element_of, _fail
from .common import _check_unknown_attributes, _int_input, _one_type, _rank, _same_dtype

if TYPE_CHECKING:
    from ..importer import Importer


def _gather(im: Importer, node: _Node) -> None:
    _check_unknown_attributes(node, ["axis"])
    x = im.value(node, 0)
    rank = _rank(x)
    if rank == 0:
        _fail("the data is a scalar; expected rank >= 1")
    axis = int(node.attr("axis", 0))
    if not -rank <= axis < rank:
        _fail(f"axis {axis} is out of range for rank {rank}")
    axis %= rank
    if not isinstance(im.value(node, 1), np.ndarray):
        _gather_computed(im, node, x, axis)
        return
    indices = _int_input(im, node, 1, "the indices")
    n = x.shape[axis]
    if np.any(indices < -n) or np.any(indices >= n):
        _fail(f"the indices {indices.tolist()} are out of range for the {n} elements of axis "
              f"{axis}")
    indices = np.where(indices < 0, indices + n, indices).astype(np.int64)
    if isinstance(x, np.ndarray):
        im.set_output(node, np.take(x, indices, axis=axis))
        return
    if indices.size == 0:
        _fail("the indices are empty; the result would have a zero-size dimension")
    im.set_output(node, T.take(x, indices, axis, name=node.leaf_name))


def _gather_computed(im: Importer, node: _Node, x, axis: int) -> None:
    """Gather by indices that are a graph input (token ids): the call checks each index
    against [-n, n) before it runs (tensor.gather)."""
    indices = im.value(node, 1)
    if indices.element not in ("i32", "i64"):
        _fail(f"the indices (input 1, '{node.input(1)}') are a tensor of {indices.element}; "
              "expected int64 (or int32)")
    bounds = _computed_index_bounds(im, node, x.shape[axis], axis)
    if isinstance(x, np.ndarray):
        x = im.operand(node, 0)
    if x.rank - 1 + indices.rank == 0:
        _fail(f"the indices (input 1, '{node.input(1)}') are a scalar into a 1-D tensor; "
              "expected a result of rank >= 1")
    im.set_output(node, T.gather(x, indices, axis, name=node.leaf_name, what=node.label,
                                 bounds=bounds))


def _computed_index_bounds(im: Importer, node: _Node, n: int,
                           axis: int) -> Optional[Tuple[int, int]]:
    """None for indices (input 1) that are a graph input (the call checks them); else
    their proved bounds (_note_bounds), which must lie in [-n, n): an index the graph
    computes that might fall outside is refused here, never read."""
    indices = im.value(node, 1)
    if indices.kind == "input":
        return None
    bounds = im.interval(node.input(1))
    if bounds is None:
        _fail(f"the indices (input 1, '{node.input(1)}') are computed by the graph; expected "
              "a constant or a graph input (whose range the call checks), or indices computed "
              "from values of known range (positions, masks, ArgMax), which these are not")
    if not -n <= bounds[0] <= bounds[1] < n:
        _fail(f"the indices (input 1, '{node.input(1)}') are computed by the graph and may "
              f"take values in [{bounds[0]}, {bounds[1]}], outside [{-n}, {n}) for the {n} "
              f"elements of axis {axis}")
    return bounds


def _gather_elements(im: Importer, node: _Node) -> None:
    """GatherElements: y[i...] = x[i... with index[i...] on `axis`] (np.take_along_axis).
    Constant indices fold, or a tensor x reads them through a flat take; indices that are
    a graph input are checked by the call, and indices the graph computes need bounds
    inside the axis (_computed_index_bounds)."""
    _check_unknown_attributes(node, ["axis"])
    x = im.value(node, 0)
    rank = _rank(x)
    if rank == 0:
        _fail("the data is a scalar; expected rank >= 1")
    axis = int(node.attr("axis", 0))
    if not -rank <= axis < rank:
        _fail(f"axis {axis} is out of range for rank {rank}")
    axis %= rank
    if not isinstance(im.value(node, 1), np.ndarray):
        indices = im.value(node, 1)
        if indices.element not in ("i32", "i64"):
            _fail(f"the indices (input 1, '{node.input(1)}') are a tensor of "
                  f"{indices.element}; expected int64 (or int32)")
        if indices.rank != rank:
            _fail(f"the indices have rank {indices.rank}; expected the data's rank {rank}")
        for d in range(rank):
            if d != axis and indices.shape[d] > x.shape[d]:
                _fail(f"the indices {list(indices.shape)} are larger than the data "
                      f"{list(x.shape)} in dimension {d}")
        bounds = _computed_index_bounds(im, node, x.shape[axis], axis)
        im.set_output(node, T.gather_elements(im.operand(node, 0), indices, axis,
                                              name=node.leaf_name, what=node.label,
                                              bounds=bounds))
        return
    indices = _int_input(im, node, 1, "the indices")
    if indices.ndim != rank:
        _fail(f"the indices have rank {indices.ndim}; expected the data's rank {rank}")
    for d in range(rank):
        if d != axis and indices.shape[d] > x.shape[d]:
            _fail(f"the indices {list(indices.shape)} are larger than the data "
                  f"{list(x.shape)} in dimension {d}")
    n = x.shape[axis]
    bad = (indices < -n) | (indices >= n)
    if np.any(bad):
        at = [int(i) for i in np.argwhere(bad)[0]]
        _fail(f"the index {int(indices[tuple(at)])} at {at} is out of range for the {n} "
              f"elements of axis {axis}")
    indices = np.where(indices < 0, indices + n, indices).astype(np.int64)
    # The coordinates in x of each element of the result.
    where = list(np.indices(indices.shape, dtype=np.int64))
    where[axis] = indices
    if isinstance(x, np.ndarray):
        im.set_output(node, x[tuple(where)])
        return
    if indices.size == 0:
        _fail("the indices are empty; the result would have a zero-size dimension")
    flat = np.ravel_multi_index(tuple(where), x.shape)
    im.set_output(node, T.take(T.reshape(x, (int(np.prod(x.shape)),)), flat, 0,
                               name=node.leaf_name))


def _gather_nd_computed(im: Importer, node: _Node, x: Value, b: int) -> None:
    """GatherND by indices the graph computes: each of the k coordinates needs proved
    bounds inside its axis. The coordinates' bounds are the pieces' when the indices are a
    Concat along their last axis (a batch position beside an ArgMax: GPT-2's and CLIP's
    pooling of one token per sequence), else the whole tensor's."""
    indices = im.value(node, 1)
    what = f"the indices (input 1, '{node.input(1)}')"
    if indices.element not in ("i32", "i64"):
        _fail(f"{what} are a tensor of {indices.element}; expected int64 (or int32)")
    if indices.kind == "input":
        _fail(f"{what} are a graph input; expected a constant or indices the graph computes "
              "from values of known range")
    rank = _rank(x)
    k = indices.shape[-1] if indices.rank else 0
    if indices.rank < 1 or not 0 <= b < min(rank, indices.rank) or not 1 <= k <= rank - b \
            or tuple(indices.shape[:b]) != tuple(x.shape[:b]):
        _fail(f"{what} {list(indices.shape)} do not fit the data {list(x.shape)} with "
              f"batch_dims {b}")
    columns: List[Optional[Tuple[int, int]]] = [im.interval(node.input(1))] * k
    producer = im._producers.get(node.input(1))
    if producer is not None and producer.op_type == "Concat" and \
            int(producer.attr("axis", 0)) % indices.rank == indices.rank - 1:
        columns = []
        for name in producer.inputs:
            part = im.values.get(name)
            columns += [im.interval(name)] * int(part.shape[-1])
    for j, bounds in enumerate(columns):
        n = x.shape[b + j]
        if bounds is None:
            _fail(f"{what} are computed by the graph, and coordinate {j} comes from values "
                  "whose range is not known; expected a constant or indices computed from "
                  "values of known range (positions, masks, ArgMax)")
        if not -n <= bounds[0] <= bounds[1] < n:
            _fail(f"{what} are computed by the graph, and coordinate {j} may take values in "
                  f"[{bounds[0]}, {bounds[1]}], outside [{-n}, {n}) for the {n} elements of "
                  f"axis {b + j}")
    data = im.operand(node, 0) if isinstance(x, np.ndarray) else x
    im.set_output(node, T.gather_nd(data, indices, columns, b, name=node.leaf_name))


def _gather_nd(im: Importer, node: _Node) -> None:
    """GatherND: the slices x[b..., i_1, ..., i_k, ...] that the last axis of the indices
    names. Constant indices (the dynamo exporter's boolean-mask reads) are read through a
    take along the first axis of x with its leading b + k axes merged; indices the graph
    computes need proved bounds (_gather_nd_computed)."""
    _check_unknown_attributes(node, ["batch_dims"])
    x = im.value(node, 0)
    rank = _rank(x)
    b = int(node.attr("batch_dims", 0))
    if not isinstance(im.value(node, 1), np.ndarray):
        _gather_nd_computed(im, node, x, b)
        return
    indices = _int_input(im, node, 1, "the indices")
    if indices.ndim < 1 or not 0 <= b < min(rank, indices.ndim):
        _fail(f"batch_dims {b} does not fit the data of rank {rank} and the indices of rank "
              f"{indices.ndim}")
    k = indices.shape[-1]
    shape = tuple(x.shape)
    if not 1 <= k <= rank - b:
        _fail(f"the last dimension of the indices {list(indices.shape)} is {k}; expected 1 to "
              f"{rank - b} (the data's rank less batch_dims)")
    if tuple(indices.shape[:b]) != shape[:b]:
        _fail(f"the indices {list(indices.shape)} and the data {list(shape)} differ in their "
              f"first {b} (batch) dimensions")
    sizes = np.array(shape[b:b + k], dtype=np.int64)
    bad = (indices < -sizes) | (indices >= sizes)
    if np.any(bad):
        at = [int(i) for i in np.argwhere(bad)[0]]
        _fail(f"the index {int(indices[tuple(at)])} at {at} is out of range for the "
              f"{int(sizes[at[-1]])} elements of axis {b + at[-1]}")
    indices = np.where(indices < 0, indices + sizes, indices).astype(np.int64)
    batch = list(np.indices(indices.shape[:-1], dtype=np.int64)[:b])
    rows = np.ravel_multi_index(tuple(batch) + tuple(np.moveaxis(indices, -1, 0)),
                                shape[:b + k])
    merged = (int(np.prod(shape[:b + k])),) + shape[b + k:]
    if isinstance(x, np.ndarray):
        im.set_output(node, np.take(x.reshape(merged), rows, axis=0))
        return
    if rows.size == 0:
        _fail("the indices are empty; the result would have a zero-size dimension")
    if rows.ndim + len(shape) - b - k == 0:
        _fail("the result is a scalar; expected rank >= 1")
    im.set_output(node, T.take(T.reshape(x, merged), rows, 0, name=node.leaf_name))


_SCATTER_FOLD = {"add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum}


def _scatter_nd(im: Importer, node: _Node) -> None:
    """ScatterND with constant indices: the slices x[i_1, ..., i_k, ...] that the last axis
    of the indices names replaced by the updates (or, with reduction add / mul / max / min,
    combined with them in the updates' order). All constant: folded (BEiT's relative
    position index). Else the rows of x (its first k axes merged) and of the updates are
    joined and read back through a take: each row from the last update that names it, or
    from x; a reduction combines each row with its first, second, ... update, one
    elementwise pass each."""
    _check_unknown_attributes(node, ["reduction"])
    reduction = node.string("reduction", "none")
    if reduction not in ("none", *_SCATTER_FOLD):
        _fail(f"reduction '{reduction}' is not valid; expected none, add, mul, max or min")
    x, updates = im.value(node, 0), im.value(node, 2)
    if not isinstance(im.value(node, 1), np.ndarray):
        _fail(f"the indices (input 1, '{node.input(1)}') are computed by the graph; expected a "
              "constant")
    indices = _int_input(im, node, 1, "the indices")
    rank = _rank(x)
    k = indices.shape[-1] if indices.ndim else 0
    if indices.ndim < 1 or not 1 <= k <= rank:
        _fail(f"the indices {list(indices.shape)} do not fit the data {list(x.shape)}: "
              f"expected a last dimension of 1 to {rank}")
    shape = tuple(x.shape)
    expected = tuple(indices.shape[:-1]) + shape[k:]
    if tuple(updates.shape) != expected:
        _fail(f"the updates {list(updates.shape)} do not fit: expected {list(expected)} (the "
              f"indices' {list(indices.shape[:-1])} and the data's {list(shape[k:])})")
    sizes = np.array(shape[:k], dtype=np.int64)
    bad = (indices < -sizes) | (indices >= sizes)
    if np.any(bad):
        at = [int(i) for i in np.argwhere(bad)[0]]
        _fail(f"the index {int(indices[tuple(at)])} at {at} is out of range for the "
              f"{int(sizes[at[-1]])} elements of axis {at[-1]}")
    indices = np.where(indices < 0, indices + sizes, indices).astype(np.int64)
    rows = np.ravel_multi_index(tuple(np.moveaxis(indices, -1, 0)), shape[:k]).reshape(-1)
    count, rest = int(np.prod(shape[:k])), shape[k:]
    if isinstance(x, np.ndarray) and isinstance(updates, np.ndarray):
        _same_dtype(node, [x, updates])
        y = x.reshape((count,) + rest).copy()
        flat = updates.reshape((rows.size,) + rest)
        for j, r in enumerate(rows):
            y[r] = flat[j] if reduction == "none" else _SCATTER_FOLD[reduction](y[r], flat[j])
        im.set_output(node, y.reshape(shape))
        return
    element = _one_type(node, [_element_of(node, 0, x), _element_of(node, 2, updates)],
                        _NUMBERS + ("i1",) if reduction == "none" else _NUMBERS, names=(0, 2))
    if rows.size == 0:
        im.set_output(node, x)
        return
    joined = T.concat([T.reshape(im.operand(node, 0), (count,) + rest),
                       T.reshape(im.operand(node, 2), (rows.size,) + rest)], 0)
    if reduction == "none":
        source = np.arange(count, dtype=np.int64)
        source[rows] = count + np.arange(rows.size, dtype=np.int64)  # the last update wins
        im.set_output(node, T.reshape(T.take(joined, source, 0), shape, name=node.leaf_name))
        return
    y = _scatter_passes(im, node, joined, rows, (count,) + rest, element, reduction)
    im.set_output(node, T.reshape(y, shape, name=node.leaf_name))


def _scatter_passes(im: Importer, node: _Node, joined: Tensor, rows: np.ndarray,
                    merged: Tuple[int, ...], element: str, reduction: str) -> Tensor:
    """ScatterND's reduction over the rows of x (its first k axes merged: `merged`):
    pass t combines each row with its t-th update (in the updates' order), where it has
    one; `joined` holds the rows of x, then those of the updates, and `rows` says which
    row of x each update is for."""
    count, rest = merged[0], merged[1:]
    floats = element in _FLOAT_NAMES
    combine = {"add": "arith.addf" if floats else "arith.addi",
               "mul": "arith.mulf" if floats else "arith.muli",
               "max": "arith.maximumf" if floats else "arith.maxsi",
               "min": "arith.minimumf" if floats else "arith.minsi"}[reduction]
    y = T.reshape(im.operand(node, 0), (count,) + rest)
    seen = np.zeros(count, dtype=np.int64)
    passes: List[List[Tuple[int, int]]] = []
    for j, r in enumerate(rows):
        if seen[r] == len(passes):
            passes.append([])
        passes[seen[r]].append((int(r), j))
        seen[r] += 1
    for t, pairs in enumerate(passes):
        source = np.arange(count, dtype=np.int64)
        mask = np.zeros((count,) + (1,) * len(rest), dtype=bool)
        for r, j in pairs:
            source[r] = count + j
            mask[r] = True
        picked = T.take(joined, source, 0)
        y = T.elementwise([im.graph.constant(mask, element="i1"), y, picked],
                          f"%c = {combine} %e1, %e2 : {element}\n"
                          f"%r = arith.select %e0, %c, %e1 : {element}", element,
                          kind="scatter_nd")
    return y


#: The operators of this module.
HANDLERS = {
    "Gather": _gather,
    "GatherElements": _gather_elements,
    "GatherND": _gather_nd,
    "ScatterND": _scatter_nd,
}
