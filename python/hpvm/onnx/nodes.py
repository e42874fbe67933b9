"""What the importer and its operators share: an ONNX node with its attributes decoded
(`_Node`), the error an operator raises (`_fail`, which the importer prefixes with the
node's name), a graph input that cannot be used (`_Unusable`), and the element types that
flow through a tensor graph with their ONNX, NumPy and MLIR names."""

from __future__ import annotations

from typing import List, Optional, Tuple, Union

import numpy as np

from ..errors import HPVMError
from ..tensor import Tensor


try:  # onnx is an optional dependency of the package
    import onnx
    from onnx import numpy_helper
except ImportError:  # pragma: no cover - reported by load()
    onnx = None
    numpy_helper = None


Value = Union[Tensor, np.ndarray]
Shape = Tuple[int, ...]

#: ONNX element types that flow through a tensor graph, with their MLIR names.
_FLOAT_ELEMENTS = {1: "f32", 10: "f16", 11: "f64"}  # FLOAT, FLOAT16, DOUBLE
#: The element types of graph inputs: floats, and the bool and signed integer tensors
#: of token ids and masks.
_INPUT_ELEMENTS = {**_FLOAT_ELEMENTS, 9: "i1", 3: "i8", 5: "i16", 6: "i32", 7: "i64"}
_INPUT_TYPES = "float16, float32, float64, bool, int8, int16, int32 and int64"
_FLOAT_DTYPES = (np.float16, np.float32, np.float64)
_FLOAT_NAMES = ("f16", "f32", "f64")


def _require_onnx():
    if onnx is None:
        raise HPVMError("hpvm.onnx needs the 'onnx' package: pip install onnx")


def _element_name(elem_type: int) -> str:
    try:
        return onnx.TensorProto.DataType.Name(elem_type).lower()
    except ValueError:
        return f"element type {elem_type}"


class _Unusable:
    """A graph input the importer cannot give a tensor for (non-float, not a tensor,
    zero-size); the error is raised by the node that uses it."""

    def __init__(self, reason: str):
        self.reason = reason


class _NodeError(Exception):
    """An error raised inside an op handler; the importer adds the node's name."""


def _fail(message: str):
    raise _NodeError(message)


class _Node:
    """One ONNX node with its attributes decoded."""

    def __init__(self, proto, index: int):
        self.proto = proto
        self.index = index
        self.op_type = proto.op_type
        self.name = proto.name
        self.inputs = list(proto.input)
        self.outputs = list(proto.output)
        self.attributes = {a.name: a for a in proto.attribute}

    @property
    def label(self) -> str:
        if self.name:
            return f"ONNX node '{self.name}' ({self.op_type})"
        first = next((o for o in self.outputs if o), "")
        return f"ONNX node #{self.index} ({self.op_type}, output '{first}')"

    @property
    def leaf_name(self) -> str:
        return self.name or next((o for o in self.outputs if o), self.op_type.lower())

    def attr(self, name: str, default=None):
        if name not in self.attributes:
            return default
        return onnx.helper.get_attribute_value(self.attributes[name])

    def ints(self, name: str, default=None) -> Optional[List[int]]:
        value = self.attr(name, default)
        return None if value is None else [int(v) for v in value]

    def string(self, name: str, default: str = "") -> str:
        value = self.attr(name, default)
        return value.decode() if isinstance(value, bytes) else str(value)

    def input(self, i: int) -> str:
        """The name of input `i`, or "" when it is absent (optional inputs)."""
        return self.inputs[i] if i < len(self.inputs) else ""


#: ONNX element types of constants (the `to` of Cast, ...) and their NumPy types.
_NUMPY_TYPES = {1: np.float32, 2: np.uint8, 3: np.int8, 4: np.uint16, 5: np.int16,
                6: np.int32, 7: np.int64, 9: np.bool_, 10: np.float16, 11: np.float64,
                12: np.uint32, 13: np.uint64}

_ELEMENT_NAMES = {"i1": "bool", "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64",
                  "f16": "float16", "f32": "float32", "f64": "float64"}
_DTYPE_ELEMENTS = {np.dtype(np.bool_): "i1", np.dtype(np.int8): "i8", np.dtype(np.int16): "i16",
                   np.dtype(np.int32): "i32", np.dtype(np.int64): "i64",
                   np.dtype(np.float16): "f16", np.dtype(np.float32): "f32",
                   np.dtype(np.float64): "f64"}


def _element_of(node: _Node, i: int, value: Value) -> str:
    """The MLIR element type of input `i` (a Tensor, or a constant of a type the graph
    has)."""
    if isinstance(value, Tensor):
        return value.element
    element = _DTYPE_ELEMENTS.get(np.dtype(value.dtype))
    if element is None:
        _fail(f"input {i} '{node.input(i)}' is a tensor of {value.dtype}; tensors computed "
              "by the graph are float16, float32, float64, bool, int8, int16, int32 or int64")
    return element


_INTS = ("i8", "i16", "i32", "i64")
_NUMBERS = _INTS + _FLOAT_NAMES
