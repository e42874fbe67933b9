"""Gemm and MatMul, with a bias Add that only reads a MatMul folded into it."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Optional, Tuple

import numpy as np

from ... import tensor as T
from ...ir import float_literal
from ...tensor import Tensor
from ..nodes import _DTYPE_ELEMENTS, _Node, _fail
from .common import _check_unknown_attributes, _same_element

if TYPE_CHECKING:
    from ..importer import Importer


def _gemm(im: Importer, node: _Node) -> None:
    _check_unknown_attributes(node, ["alpha", "beta", "transA", "transB", "broadcast"])
    a, b = im.value(node, 0), im.value(node, 1)
    for i, v in enumerate((a, b)):
        im.check_float(node, v, i)
    _same_element(node, [a, b, im.optional(node, 2)])
    ranks = [v.ndim if isinstance(v, np.ndarray) else v.rank for v in (a, b)]
    if ranks != [2, 2]:
        _fail(f"expected matrices A and B, found operands of rank {ranks[0]} and {ranks[1]}")
    alpha, beta = float(node.attr("alpha", 1.0)), float(node.attr("beta", 1.0))
    if int(node.attr("transA", 0)):
        a = a.T.copy() if isinstance(a, np.ndarray) else T.transpose(a, (1, 0))
    if int(node.attr("transB", 0)):
        b = b.T.copy() if isinstance(b, np.ndarray) else T.transpose(b, (1, 0))
    if alpha != 1.0:  # folded into a constant operand where there is one
        if isinstance(b, np.ndarray):
            b = (b * b.dtype.type(alpha)).astype(b.dtype)
            alpha = 1.0
        elif isinstance(a, np.ndarray):
            a = (a * a.dtype.type(alpha)).astype(a.dtype)
            alpha = 1.0
    ta = a if isinstance(a, Tensor) else im._constant_tensor(a, node.input(0), "input 0")
    tb = b if isinstance(b, Tensor) else im._constant_tensor(b, node.input(1), "input 1")
    if ta.shape[1] != tb.shape[0]:
        _fail(f"A' {ta.type} and B' {tb.type} (after transA / transB) do not multiply")
    c = im.optional(node, 2)
    has_bias = c is not None and beta != 0.0
    y = T.matmul(ta, tb, name=None if has_bias or alpha != 1.0 else node.leaf_name)
    if alpha != 1.0:
        y = _scale(y, alpha, None if has_bias else node.leaf_name)
    if has_bias:
        im.check_float(node, c, 2)
        if isinstance(c, np.ndarray):
            c = (c * c.dtype.type(beta)).astype(c.dtype) if beta != 1.0 else c
            c = im._constant_tensor(c, f"{node.input(2)}*beta", "input 2")
        elif beta != 1.0:
            c = _scale(c, beta, None)
        if len(c.shape) > 2 or any(cs != ys and cs != 1 for cs, ys in
                                   zip(c.shape[::-1], y.shape[::-1])):
            _fail(f"the bias C {c.type} does not broadcast to the product {y.type}")
        y = T.add(y, c, name=node.leaf_name)
    im.set_output(node, y)


def _scale(x: Tensor, factor: float, name: Optional[str]) -> Tensor:
    """x * factor as a map with the factor inline."""
    literal = float_literal(factor)
    return T.map([x], f"%k = arith.constant {literal} : {x.element}\n"
                      f"%r = arith.mulf %e0, %k : {x.element}", name=name or "scale")


def _matmul(im: Importer, node: _Node) -> None:
    _check_unknown_attributes(node, [])
    a = im.check_float(node, im.value(node, 0), 0)
    b = im.check_float(node, im.value(node, 1), 1)
    _same_element(node, [a, b])
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        im.set_output(node, np.matmul(a, b))
        return
    a, b = im.tensor(node, 0), im.tensor(node, 1)
    if a.rank == 0 or b.rank == 0:
        _fail(f"expected operands of rank >= 1, found {a.type} and {b.type}")
    squeeze_rows, squeeze_cols = a.rank == 1, b.rank == 1
    if squeeze_rows:
        a = T.reshape(a, (1, a.shape[0]))
    if squeeze_cols:
        b = T.reshape(b, (b.shape[0], 1))
    if a.shape[-1] != b.shape[-2]:
        _fail(f"the operands {a.type} and {b.type} do not multiply (K = {a.shape[-1]} and "
              f"{b.shape[-2]})")
    if a.rank > 2 and b.rank == 2:
        # A batch of matrices times one matrix: one product of all the rows (the weights
        # are not repeated per batch).
        rows = T.reshape(a, (int(math.prod(a.shape[:-1])), a.shape[-1]))
        y = T.matmul(rows, b)
        final = a.shape[:-1] + ((b.shape[-1],) if not squeeze_cols else ())
        bias = None if squeeze_cols else _fold_bias_add(im, node, a.element, b.shape[-1],
                                                        len(final))
        if bias is not None:
            # The bias added to the rows, before they take the batch's shape again: the
            # add then fuses into the product's epilogue (no pass over the result).
            added, constant, name = bias
            y = T.add(y, im._constant_tensor(constant, name, "the bias"))
            im.set_output(node, T.reshape(y, final, name=added.leaf_name))
            return
        im.set_output(node, T.reshape(y, final, name=node.leaf_name))
        return
    try:
        batch = tuple(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]))
    except ValueError:
        _fail(f"the batch dimensions of {a.type} and {b.type} do not broadcast")
    a = T.broadcast_to(a, batch + a.shape[-2:])
    b = T.broadcast_to(b, batch + b.shape[-2:])
    final = batch + ((a.shape[-2],) if not squeeze_rows else ()) + \
        ((b.shape[-1],) if not squeeze_cols else ())
    plain = not squeeze_rows and not squeeze_cols
    y = T.matmul(a, b, name=node.leaf_name if plain else None)
    if not plain:
        y = T.reshape(y, final, name=node.leaf_name)
    im.set_output(node, y)


def _fold_bias_add(im: Importer, node: _Node, element: str, columns: int,
                   rank: int) -> Optional[Tuple[_Node, np.ndarray, str]]:
    """The Add that alone reads the output of MatMul `node` (of `rank` dimensions and
    `columns` columns) with a constant of the same element type that has a value per column
    ([columns], [1, columns], [1, 1, columns], ...), and that constant as [1, columns],
    marking the Add folded (its output is then the MatMul's value), and the constant's name;
    None when there is no such node."""
    out = node.outputs[0] if node.outputs else ""
    readers = im._readers.get(out, [])
    if not out or columns < 1 or im._uses.get(out) != 1 or len(readers) != 1:
        return None
    add = readers[0]
    if (add.op_type != "Add" or add.proto.domain not in ("", "ai.onnx") or add.attributes
            or len(add.inputs) != 2 or len([o for o in add.outputs if o]) != 1
            or add.input(0) == add.input(1)):
        return None
    port = 0 if add.input(0) == out else 1
    bias = im.values.get(add.input(1 - port))
    if (not isinstance(bias, np.ndarray) or _DTYPE_ELEMENTS.get(np.dtype(bias.dtype)) != element
            or bias.ndim < 1 or bias.ndim > rank or bias.shape[-1] != columns
            or any(d != 1 for d in bias.shape[:-1])):
        return None
    im._folded[add.index] = port
    return add, bias.reshape((1, columns)), add.input(1 - port)


#: The operators of this module.
HANDLERS = {
    "Gemm": _gemm,
    "MatMul": _matmul,
}
