"""Helpers of the operators: attribute checks, constant inputs (shapes, axes, indices),
element types of mixed inputs, and the linalg maps of elementwise operators on tensors of
any element type."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, List, Optional, Sequence, Tuple

import numpy as np

from ... import tensor as T
from ...ir import float_literal
from ...tensor import Tensor
from ..nodes import Value, _DTYPE_ELEMENTS, _ELEMENT_NAMES, _Node, _element_of, _fail

if TYPE_CHECKING:
    from ..importer import Importer


def _check_unknown_attributes(node: _Node, known: Sequence[str]) -> None:
    unknown = sorted(set(node.attributes) - set(known))
    if unknown:
        _fail(f"the attribute(s) {unknown} are not supported; expected only {sorted(known)}")


def _same_element(node: _Node, values: Sequence[Optional[Value]]) -> None:
    """ONNX gives the inputs of an operator one element type (its T); inputs of two float
    types are an error (the dialect's ops take one type, and converting would hide it)."""
    types = []
    for i, v in enumerate(values):
        if v is None:
            continue
        dtype = np.dtype(v.dtype) if isinstance(v, np.ndarray) else np.dtype(v.type.dtype)
        types.append((i, dtype))
    if len({d for _, d in types}) > 1:
        listed = ", ".join(f"input {i} '{node.input(i)}' {d}" for i, d in types)
        _fail(f"the inputs have different element types ({listed}); expected one type "
              "for all of them (the operator's T)")


def _scalar_literal(value: float, node: _Node, what: str) -> str:
    if not np.isfinite(value):
        _fail(f"{what} is {value}; expected a finite number")
    return float_literal(float(value))


def _rank(value: Value) -> int:
    return value.ndim if isinstance(value, np.ndarray) else value.rank


def _constant_input(im: Importer, node: _Node, i: int, what: str,
                    why: str = "only static shapes and indices are supported") -> np.ndarray:
    """Input `i` as a constant array; a value computed by the graph is an error."""
    value = im.value(node, i)
    if not isinstance(value, np.ndarray):
        _fail(f"{what} (input {i}, '{node.input(i)}') must be a constant (an initializer, a "
              f"Constant node or a value folded from them); found a value computed by the "
              f"graph ({why})")
    return value


def _int_input(im: Importer, node: _Node, i: int, what: str) -> np.ndarray:
    value = _constant_input(im, node, i, what)
    if value.dtype.kind not in "iu":
        _fail(f"{what} (input {i}, '{node.input(i)}') is a tensor of {value.dtype}; expected "
              "int64 (or int32)")
    return value


def _int_list(im: Importer, node: _Node, i: int, what: str) -> List[int]:
    value = _int_input(im, node, i, what)
    if value.ndim != 1:
        _fail(f"{what} (input {i}, '{node.input(i)}') has the shape {list(value.shape)}; "
              "expected a 1-D tensor")
    return [int(v) for v in value]


def _axes(im: Importer, node: _Node, index: int, since: int) -> Optional[List[int]]:
    """The axes of a node: an attribute before opset `since`, input `index` from it
    (None when absent)."""
    if im.opset >= since:
        if "axes" in node.attributes:
            _fail(f"the attribute axes is not valid in opset {im.opset}; expected the axes as "
                  f"input {index}")
        return _int_list(im, node, index, "the axes") if node.input(index) else None
    if node.input(index):
        _fail(f"input {index} ('{node.input(index)}') is not valid in opset {im.opset}; "
              "expected the axes as an attribute")
    return node.ints("axes")


def _normalize_axes(axes: Sequence[int], rank: int, what: str = "axes") -> List[int]:
    normalized = []
    for a in axes:
        if not -rank <= a < rank:
            _fail(f"{what} {list(axes)} are out of range for rank {rank}")
        normalized.append(a % rank)
    if len(set(normalized)) != len(normalized):
        _fail(f"{what} {list(axes)} repeat a dimension")
    return normalized


def _same_dtype(node: _Node, arrays: Sequence[np.ndarray]) -> None:
    """Constant inputs of one ONNX type T (folded: NumPy would promote silently)."""
    if len({a.dtype for a in arrays}) > 1:
        listed = ", ".join(f"input {i} '{node.input(i)}' {a.dtype}" for i, a in enumerate(arrays))
        _fail(f"the inputs have different element types ({listed}); expected one type for "
              "all of them (the operator's T)")


def _map_node(im: Importer, node: _Node, inputs: Sequence[int], fold: Callable,
              body: Callable[[List[str]], Tuple[str, str]]) -> None:
    """An elementwise operator of `inputs` (NumPy broadcasting): `fold(*arrays)` folds
    constant inputs in NumPy; `body(input element types)` gives the MLIR of one element
    (`%e0`, `%e1`, ... to `%r`) and the result's element type, or fails."""
    values = [im.value(node, i) for i in inputs]
    # Shape code of other types (uint8, ...): folded as they are.
    if (all(isinstance(v, np.ndarray) for v in values)
            and any(np.dtype(v.dtype) not in _DTYPE_ELEMENTS for v in values)):
        _same_dtype(node, values)
        try:
            with np.errstate(all="ignore"):
                folded = np.asarray(fold(*values))
        except (ValueError, TypeError) as error:
            _fail(f"cannot fold the constant inputs ({error})")
        dtype = np.bool_ if folded.dtype == np.bool_ else values[-1].dtype
        im.set_output(node, folded.astype(dtype))
        return
    elements = [_element_of(node, i, v) for i, v in zip(inputs, values)]
    text, element = body(elements)
    try:
        shape = tuple(np.broadcast_shapes(*(tuple(v.shape) for v in values)))
    except ValueError:
        _fail("the shapes " + ", ".join(str(list(v.shape)) for v in values)
              + " do not broadcast")
    if all(isinstance(v, np.ndarray) for v in values):
        with np.errstate(all="ignore"):
            folded = np.asarray(fold(*values))
        dtype = T.numpy_type_of(element)
        im.set_output(node, np.broadcast_to(folded.astype(dtype), shape).copy())
        return
    if 0 in shape:
        _fail(f"the result shape {list(shape)} has a zero-size dimension; expected sizes >= 1")
    operands = [im.operand(node, i) for i in inputs]
    im.set_output(node, T.elementwise(operands, text, element, name=node.leaf_name,
                                      kind=node.op_type.lower()))


def _one_type(node: _Node, elements: Sequence[str], allowed: Sequence[str],
              names: Sequence[int] = ()) -> str:
    """The inputs' one element type (ONNX's T), which must be one of `allowed`."""
    indices = list(names) or list(range(len(elements)))
    if len(set(elements)) > 1:
        listed = ", ".join(f"input {i} '{node.input(i)}' {_ELEMENT_NAMES[e]}"
                           for i, e in zip(indices, elements))
        _fail(f"the inputs have different element types ({listed}); expected one type for "
              "all of them (the operator's T)")
    element = elements[0]
    if element not in allowed:
        _fail(f"input {indices[0]} '{node.input(indices[0])}' is a tensor of "
              f"{_ELEMENT_NAMES[element]}; expected "
              + ", ".join(_ELEMENT_NAMES[a] for a in allowed))
    return element


def _broadcast_map(node: _Node, a: Tensor, b: Tensor, op: str) -> Tensor:
    """`op` (an arith or math op of two floats) of a and b with NumPy broadcasting."""
    try:
        shape = tuple(np.broadcast_shapes(a.shape, b.shape))
    except ValueError:
        _fail(f"the shapes {list(a.shape)} and {list(b.shape)} do not broadcast")
    a, b = T.broadcast_to(a, shape), T.broadcast_to(b, shape)
    return T.map([a, b], f"%r = {op} %e0, %e1 : {a.element}", name=node.leaf_name)


def _literal(value: float, element: str) -> str:
    return float_literal(float(value), element)
