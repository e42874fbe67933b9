"""ONNX models as tensor graphs.

The importer walks the nodes of an ONNX graph in order and resolves every value
name to either a NumPy array (initializers, `Constant` nodes and everything
folded from them) or a `Tensor` of the graph being built. Operations whose
inputs are all constant and that only move data (Reshape, Flatten, Transpose,
Identity, ...) or do elementwise arithmetic are folded in NumPy, so weights
stay constants embedded in the leaf that uses them.

Tensors of static shapes flow through the graph: float (float16, float32, float64)
tensors through every operator, and bool and signed integer (int8 ... int64) tensors,
which graph inputs may be too (token ids, attention masks), through the elementwise
operators of masks and positions (comparisons, logic, Where, Cast, Abs, Sign, IsNaN, IsInf,
Trilu, integer Add, Sub, Mul, Max, Min and CumSum) and the operators that only move data
(Reshape, Unsqueeze, Transpose, Concat, ...). The shapes,
axes, indices and pads operations take are constants (Gather's indices may also be an
int32 / int64 graph input, which the compiled call range-checks), and so are the shape sub-graphs of
exported models (Shape of a tensor is a constant, since shapes are static, and Gather,
Unsqueeze, Concat, integer arithmetic, Equal, Where, ... of constants fold in NumPy).
Before anything is
converted, every operator the importer lacks is reported at once. Anything the
importer cannot express exactly raises `HPVMError` naming the node and its op type, and
so does a model onnxruntime refuses (a value or a node name defined twice, an
initializer unlike the graph input of its name, tensor data that does not fill its
dims, inputs of two element types). External data is read from the model's folder
(`base_dir`), never from the current directory.
"""

from __future__ import annotations

import math
import os
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from ..errors import HPVMError
from ..files import path_text, read_bytes, regular_file
from ..ir import float_literal
from ..tensor import Tensor, TensorGraph
from .. import tensor as T
from .dims import DimBinder, positive_sizes

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


class Importer:
    """Builds a TensorGraph from an ONNX ModelProto."""

    def __init__(self, model, input_shapes: Optional[Mapping[str, Sequence[int]]] = None,
                 batch_size: Optional[int] = None, name: Optional[str] = None,
                 base_dir: Optional[str] = None, dims: Optional[Mapping[str, int]] = None,
                 keyword: str = "input_shapes"):
        self.model = model
        self.graph_proto = model.graph
        #: The folder external data files are read from; None: the model came without one
        #: (bytes or a ModelProto), and a tensor with external data is an error.
        self.base_dir = base_dir
        #: The keyword the shapes came by (shapes= or input_shapes=), for the messages.
        self.keyword = keyword
        self.input_shapes = _input_shapes(input_shapes, keyword)
        self.dims = positive_sizes(dims, "dims")
        if batch_size is not None and (not isinstance(batch_size, (int, np.integer))
                                       or isinstance(batch_size, bool) or batch_size <= 0):
            raise HPVMError(f"batch_size: expected a positive integer, found {batch_size!r}")
        self.batch_size = 1 if batch_size is None else int(batch_size)
        self.batch_given = batch_size is not None
        self.opset = self._opset(model)
        graph_name = name or self.graph_proto.name or "onnx_graph"
        self.graph = TensorGraph(graph_name)
        self.values: Dict[str, Union[Value, _Unusable]] = {}
        # id(array) -> (array, its graph constant): one Tensor per constant array.
        self._constants: Dict[int, Tuple[np.ndarray, Tensor]] = {}
        # value name -> how many nodes (and graph outputs) read it; node output name ->
        # the nodes reading it (for folding a BatchNormalization into its Conv).
        self._uses: Dict[str, int] = {}
        self._readers: Dict[str, List[_Node]] = {}
        # Indices of the nodes folded into the node before them (a BatchNormalization into
        # its Conv, a bias Add into its MatMul) -> the input that carries that node's value.
        self._folded: Dict[int, int] = {}
        # value name -> the node that computed it (errors about graph outputs name it).
        self._producers: Dict[str, _Node] = {}
        # integer value computed by the graph -> (lo, hi) that each of its elements lies in,
        # where the operators that made it say (_note_bounds): indices that Gather and
        # GatherElements may read without a check at the call.
        self.bounds: Dict[str, Tuple[int, int]] = {}

    # -- model -------------------------------------------------------------
    @staticmethod
    def _opset(model) -> int:
        version = None
        for entry in model.opset_import:
            if entry.domain in ("", "ai.onnx"):
                version = int(entry.version)
        if version is None:
            raise HPVMError("the ONNX model imports no version of the default operator set "
                            "(ai.onnx); expected an opset_import entry for domain ''")
        return version

    def array(self, tensor, what: str) -> np.ndarray:
        """A TensorProto's data as an array; its external data (if any) read from
        base_dir. Errors name the tensor."""
        label = f"{what} '{tensor.name}'" if tensor.name else what
        if onnx.external_data_helper.uses_external_data(tensor):
            location = next((e.value for e in tensor.external_data if e.key == "location"), "")
            if self.base_dir is None:
                raise _NodeError(
                    f"{label} keeps its data in the external file '{location}', and the "
                    "model was given as bytes or a ModelProto, which do not say which folder "
                    "that file is in; expected base_dir= (the folder of the .onnx file), or "
                    "the model's path")
            wrong = _external_data_error(tensor, self.base_dir)
            if wrong:
                raise _NodeError(f"{label} (dims {list(tensor.dims)}, data type "
                                 f"{_element_name(tensor.data_type)}) cannot be read: {wrong}")
        try:
            array = numpy_helper.to_array(tensor, base_dir=self.base_dir or "")
        except Exception as error:  # ValueError, TypeError, OSError, onnx's checks...
            dims = list(tensor.dims)
            raise _NodeError(f"{label} (dims {dims}, data type "
                             f"{_element_name(tensor.data_type)}) cannot be read: "
                             f"{error}; expected data that matches its dims and data "
                             "type") from None
        if tuple(array.shape) != tuple(tensor.dims):
            raise _NodeError(f"{label} has dims {list(tensor.dims)} but its data has the shape "
                             f"{list(array.shape)}")
        return array

    def _check_definitions(self) -> None:
        """Each value is defined once (a graph input, an initializer or a node output) and
        each node name is used once, as onnxruntime requires; an initializer also listed
        as a graph input has that input's element type and shape."""
        g = self.graph_proto
        defined: Dict[str, str] = {}

        def define(name: str, what: str) -> None:
            if name in defined:
                raise HPVMError(f"the value '{name}' is defined twice, as {defined[name]} and "
                                f"as {what}; expected each value defined once (SSA form, "
                                "as onnxruntime requires)")
            defined[name] = what

        inputs = set()
        for value_info in g.input:
            if value_info.name in inputs:
                raise HPVMError(f"the ONNX graph has two inputs named '{value_info.name}'; "
                                "expected each input once (as onnxruntime requires)")
            inputs.add(value_info.name)
        initializers = set()
        for init in g.initializer:
            if init.name in initializers:
                raise HPVMError(f"the ONNX graph has two initializers named '{init.name}'; "
                                "expected each initializer once (the ONNX checker refuses "
                                "this; onnxruntime would take the last)")
            initializers.add(init.name)
        by_name = {v.name: v for v in g.input}
        for init in g.initializer:
            if init.name in by_name:
                _check_initializer_input(init, by_name[init.name])
            define(init.name, f"the initializer '{init.name}'")
        for value_info in g.input:
            if value_info.name not in initializers:
                define(value_info.name, f"the graph input '{value_info.name}'")
        names: Dict[str, int] = {}
        for index, proto in enumerate(g.node):
            node = _Node(proto, index)
            if proto.name:
                if proto.name in names:
                    raise HPVMError(f"the ONNX graph has two nodes named '{proto.name}' (#"
                                    f"{names[proto.name]} and #{index}); expected unique node "
                                    "names (as onnxruntime requires)")
                names[proto.name] = index
            for output in proto.output:
                if output:
                    define(output, f"an output of {node.label}")

    def build(self) -> TensorGraph:
        g = self.graph_proto
        self._check_definitions()
        if len(g.sparse_initializer):
            raise HPVMError("the ONNX model has sparse initializers; expected dense ones")
        for init in g.initializer:
            try:
                self.values[init.name] = self.array(init, "the initializer")
            except _NodeError as error:
                raise HPVMError(str(error)) from None
        inputs = [v.name for v in g.input if v.name not in self.values]
        unknown = set(self.input_shapes) - set(inputs)
        if unknown:
            raise HPVMError(f"{self.keyword} names {sorted(unknown)}, which are not inputs of "
                            f"the model (inputs: {inputs})")
        self.binder = DimBinder([v for v in g.input if v.name not in self.values],
                                self.input_shapes, self.dims, self.batch_size,
                                self.batch_given, self.keyword)
        for value_info in g.input:
            if value_info.name in self.values:
                continue  # an initializer: a constant
            self._add_input(value_info)
        nodes = [_Node(proto, index) for index, proto in enumerate(g.node)]
        _check_operators(nodes)
        for node in nodes:
            for name in node.inputs:
                if name:
                    self._uses[name] = self._uses.get(name, 0) + 1
                    self._readers.setdefault(name, []).append(node)
        for value_info in g.output:
            self._uses[value_info.name] = self._uses.get(value_info.name, 0) + 1
        for node in nodes:
            try:
                self._convert(node)
                _note_bounds(self, node)
            except _NodeError as error:
                raise HPVMError(f"{node.label}: {error}") from None
            except HPVMError as error:
                labelled = HPVMError(f"{node.label}: {error}")  # the text has the diagnostics
                labelled.diagnostics = error.diagnostics
                raise labelled from None
            except (ValueError, TypeError, ArithmeticError, IndexError, KeyError,
                    AttributeError, MemoryError, RecursionError) as error:
                # A model this importer did not foresee (an attribute of the wrong kind, a
                # size NumPy refuses): still an HPVMError naming the node.
                raise HPVMError(f"{node.label}: cannot be converted ({type(error).__name__}: "
                                f"{error})") from error
        outputs, names = [], []
        for value_info in g.output:
            value = self.values.get(value_info.name)
            if value is None:
                raise HPVMError(f"the ONNX graph output '{value_info.name}' is not computed "
                                "by any node, initializer or input")
            if isinstance(value, _Unusable):
                raise HPVMError(f"the ONNX graph output '{value_info.name}': {value.reason}")
            if isinstance(value, np.ndarray):
                try:
                    value = self._output_constant(value, value_info.name)
                except _NodeError as error:
                    producer = self._producers.get(value_info.name)
                    if producer is None:
                        raise HPVMError(str(error)) from None
                    raise HPVMError(f"{producer.label}: {error}") from None
            outputs.append(value)
            names.append(value_info.name)
        if not outputs:
            raise HPVMError("the ONNX graph has no outputs")
        used = {name for node in g.node for name in node.input} | {v.name for v in g.output}
        for value_info in g.input:
            value = self.values.get(value_info.name)
            if isinstance(value, _Unusable) and value_info.name not in used:
                raise HPVMError(f"{value.reason} (it is not used by any node, but a compiled "
                                "graph would have no way to take it)")
        self.graph.output(*outputs, names=names)
        return self.graph

    def _add_input(self, value_info) -> None:
        name = value_info.name
        type_proto = value_info.type
        kind = type_proto.WhichOneof("value")
        if kind != "tensor_type":
            what = {"sequence_type": "a sequence", "map_type": "a map",
                    "optional_type": "an optional", "sparse_tensor_type": "a sparse tensor"}.get(
                        kind, "of no type")
            self.values[name] = _Unusable(f"the graph input '{name}' is {what}; expected a "
                                          "(dense) tensor")
            return
        tensor_type = type_proto.tensor_type
        element = _INPUT_ELEMENTS.get(tensor_type.elem_type)
        if element is None:
            self.values[name] = _Unusable(
                f"the graph input '{name}' is a tensor of {_element_name(tensor_type.elem_type)}; "
                f"only {_INPUT_TYPES} tensors are supported as graph inputs")
            if name in self.input_shapes:
                raise HPVMError(f"{self.keyword} gives a shape for '{name}', a tensor of "
                                f"{_element_name(tensor_type.elem_type)}; only {_INPUT_TYPES} "
                                "inputs are supported")
            return
        shape = self.binder.shape(name, tensor_type)
        if 0 in shape:
            self.values[name] = _Unusable(f"the graph input '{name}' has the shape {list(shape)} "
                                          "with a zero-size dimension; expected sizes >= 1")
            return
        self.values[name] = self.graph.input(name, shape, element)

    # -- values ------------------------------------------------------------
    def value(self, node: _Node, i: int) -> Value:
        """Input `i` of `node` (a Tensor or a constant array)."""
        name = node.input(i)
        if not name:
            _fail(f"input {i} is missing")
        if name not in self.values:
            _fail(f"input '{name}' is not computed by any earlier node, initializer or input")
        value = self.values[name]
        if isinstance(value, _Unusable):
            _fail(value.reason)
        return value

    def optional(self, node: _Node, i: int) -> Optional[Value]:
        return self.value(node, i) if node.input(i) else None

    def tensor(self, node: _Node, i: int) -> Tensor:
        """Input `i` as a float Tensor (constants become graph constants)."""
        value = self.check_float(node, self.value(node, i), i)
        if isinstance(value, np.ndarray):
            return self._constant_tensor(value, node.input(i), f"input {i}")
        return value

    def operand(self, node: _Node, i: int) -> Tensor:
        """Input `i` as a Tensor of any element type the graph has (floats, bool, signed
        integers; constants become graph constants)."""
        value = self.value(node, i)
        if not isinstance(value, np.ndarray):
            return value
        element = _element_of(node, i, value)
        if 0 in value.shape:
            _fail(f"input {i} '{node.input(i)}' has the shape {list(value.shape)} with a "
                  "zero-size dimension; expected sizes >= 1")
        cached = self._constants.get(id(value))
        if cached is None or cached[0] is not value:
            cached = (value, self.graph.constant(value, element=element))
            self._constants[id(value)] = cached
        return cached[1]

    def _constant_tensor(self, array: np.ndarray, name: str, what: str) -> Tensor:
        if array.dtype not in _FLOAT_DTYPES:
            _fail(f"{what} '{name}' is a constant tensor of {array.dtype}; only float16, "
                  "float32 and float64 tensors flow through operations")
        if 0 in array.shape:
            _fail(f"{what} '{name}' has the shape {list(array.shape)} with a zero-size "
                  "dimension; expected sizes >= 1")
        cached = self._constants.get(id(array))
        if cached is None or cached[0] is not array:
            cached = (array, self.graph.constant(array))
            self._constants[id(array)] = cached
        return cached[1]

    def _output_constant(self, array: np.ndarray, name: str) -> Tensor:
        """A graph output that is a constant (folded shape code: Shape, Equal of
        constants, ...), of any element type the graph has."""
        element = _DTYPE_ELEMENTS.get(np.dtype(array.dtype))
        if element is None:
            _fail(f"the graph output '{name}' is a constant tensor of {array.dtype}; graph "
                  f"outputs are {_INPUT_TYPES} tensors")
        if element in _FLOAT_NAMES:
            return self._constant_tensor(array, name, "the graph output")
        if 0 in array.shape:
            _fail(f"the graph output '{name}' has the shape {list(array.shape)} with a "
                  "zero-size dimension; expected sizes >= 1")
        return self.graph.constant(array, element=element)

    def float_constant(self, node: _Node, i: int, what: str) -> np.ndarray:
        value = self.value(node, i)
        if not isinstance(value, np.ndarray):
            _fail(f"{what} (input {i}, '{node.input(i)}') must be a constant (an initializer "
                  "or a Constant node); found a value computed by the graph")
        return value

    def set_output(self, node: _Node, value: Value, i: int = 0) -> None:
        if isinstance(value, np.generic):  # NumPy folds of 0-d arrays give scalars
            value = np.asarray(value)
        if i < len(node.outputs) and node.outputs[i]:
            self.values[node.outputs[i]] = value
            self._producers[node.outputs[i]] = node

    def check_float(self, node: _Node, value: Value, i: int) -> Value:
        if isinstance(value, np.ndarray) and value.dtype not in _FLOAT_DTYPES:
            _fail(f"input {i} '{node.input(i)}' is a tensor of {value.dtype}; only float16, "
                  "float32 and float64 tensors flow through operations")
        if isinstance(value, Tensor) and value.element not in _FLOAT_NAMES:
            _fail(f"input {i} '{node.input(i)}' is a tensor of {value.type.dtype}; this "
                  "operator takes float16, float32 and float64 tensors only")
        return value

    def interval(self, name: str) -> Optional[Tuple[int, int]]:
        """(lo, hi) that every element of the integer or bool value `name` lies in, when
        known: a constant's least and greatest element, [0, 1] for bools, the bounds
        _note_bounds gave a computed value; None when unknown (graph inputs)."""
        value = self.values.get(name) if name else None
        if isinstance(value, np.ndarray):
            if value.dtype.kind in "biu" and value.size:
                return int(value.min()), int(value.max())
            return None
        if isinstance(value, Tensor):
            if value.element == "i1":
                return 0, 1
            return self.bounds.get(name)
        return None

    def only_outputs(self, node: _Node, count: int, why: str = "") -> None:
        extra = [o for o in node.outputs[count:] if o]
        if extra:
            _fail(f"the optional output(s) {extra} are not supported{why}; expected only "
                  f"{count} output(s)")

    # -- conversion ----------------------------------------------------------
    def _convert(self, node: _Node) -> None:
        proto = node.proto
        if proto.domain not in ("", "ai.onnx"):
            _fail(f"operators of the domain '{proto.domain}' are not supported; expected the "
                  "default domain (ai.onnx)")
        if node.index in self._folded:  # applied by the node before it (_fold_batch_norm,
            self.set_output(node, self.value(node, self._folded[node.index]))  # _fold_bias_add)
            return
        handler = _HANDLERS.get(node.op_type)
        if handler is None:
            _fail(f"the operator {node.op_type} is not supported; supported operators: "
                  + ", ".join(sorted(_HANDLERS)))
        handler(self, node)


def _check_operators(nodes: Sequence[_Node]) -> None:
    """Every operator of the default domain that the importer lacks, reported at once
    before anything is converted: each op type with its number of nodes and its first
    node (the message of one unsupported node is the per-node one)."""
    missing: Dict[str, List[_Node]] = {}
    for node in nodes:
        if node.proto.domain in ("", "ai.onnx") and node.op_type not in _HANDLERS:
            missing.setdefault(node.op_type, []).append(node)
    if not missing:
        return
    supported = "supported operators: " + ", ".join(sorted(_HANDLERS))
    (op, first), *others = missing.items()
    if not others and len(first) == 1:
        raise HPVMError(f"{first[0].label}: the operator {op} is not supported; {supported}")

    def count(found: List[_Node]) -> str:
        return f"{len(found)} node{'s' if len(found) > 1 else ''}"

    parts = [f"{first[0].label}: the operator {op} is not supported ({count(first)}, the "
             "first is this one)"]
    parts += [f"the operator {other} is not supported ({count(found)}, the first is "
              f"{found[0].label})" for other, found in others]
    raise HPVMError("; ".join(parts) + f"; {supported}")


# --------------------------------------------------------------------------
# Helpers shared by the op handlers
# --------------------------------------------------------------------------

def _check_unknown_attributes(node: _Node, known: Sequence[str]) -> None:
    unknown = sorted(set(node.attributes) - set(known))
    if unknown:
        _fail(f"the attribute(s) {unknown} are not supported; expected only {sorted(known)}")


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


# --------------------------------------------------------------------------
# Op handlers
# --------------------------------------------------------------------------

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
        _fail(f"pads {node.ints('pads')} are not smaller than the kernel {node.ints('kernel_shape')}")
    count_include_pad = int(node.attr("count_include_pad", 0))
    name = node.leaf_name if rank == 4 else None
    extra = _ceil_extra(x2.shape[2:], kernel, strides, begin, end) if ceil_mode else [0, 0]
    if any(extra):
        im.set_output(node, _from_2d(_ceil_pool(x2, kind, kernel, strides, begin, end, extra,
                                                count_include_pad, name), rank))
        return
    padded = any(begin) or any(end)
    if kind == "max" or count_include_pad or not padded:
        if begin == end:
            y = T.pool(x2, kind, tuple(kernel), tuple(strides), tuple(begin), name=name)
        else:
            fill = -np.inf if kind == "max" else 0.0
            x2 = T.pad(x2, [0, 0] + begin, [0, 0] + end, fill)
            y = T.pool(x2, kind, tuple(kernel), tuple(strides), (0, 0), name=name)
    else:
        # The mean of the elements inside the image only: the window mean (which
        # counts padding) times area / count of each output position.
        if begin == end:
            y = T.pool(x2, "mean", tuple(kernel), tuple(strides), tuple(begin))
        else:
            y = T.pool(T.pad(x2, [0, 0] + begin, [0, 0] + end, 0.0), "mean", tuple(kernel),
                       tuple(strides), (0, 0))
        inside = np.pad(np.ones(x2.shape[2:]), list(zip(begin, end)))
        counts = np.empty(y.shape[2:])
        for i in range(counts.shape[0]):
            for j in range(counts.shape[1]):
                r, c = i * strides[0], j * strides[1]
                counts[i, j] = inside[r:r + kernel[0], c:c + kernel[1]].sum()
        scale = (kernel[0] * kernel[1] / counts).astype(y.type.dtype)
        y = T.multiply(y, scale.reshape((1, 1) + scale.shape), name=name)
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


def _ceil_pool(x2: Tensor, kind: str, kernel: Sequence[int], strides: Sequence[int],
               begin: Sequence[int], end: Sequence[int], extra: Sequence[int],
               count_include_pad: int, name: Optional[str]) -> Tensor:
    """Pooling whose last windows hang past the padded input (ceil_mode 1): the input is
    padded by `extra` more elements at the end. Max ignores them (-inf); the average
    divides by the elements of the window inside the input (count_include_pad 0) or
    inside the input and its pads (count_include_pad 1), never counting `extra`."""
    after = [e + x for e, x in zip(end, extra)]
    if kind == "max":
        x2 = T.pad(x2, [0, 0] + list(begin), [0, 0] + after, -np.inf)
        return T.pool(x2, "max", tuple(kernel), tuple(strides), (0, 0), name=name)
    y = T.pool(T.pad(x2, [0, 0] + list(begin), [0, 0] + after, 0.0), "mean", tuple(kernel),
               tuple(strides), (0, 0))
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


_NUMPY_BINARY = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": np.divide}
_ARITH = {"Add": "arith.addf", "Sub": "arith.subf", "Mul": "arith.mulf", "Div": "arith.divf"}


def _binary(im: Importer, node: _Node) -> None:
    _check_unknown_attributes(node, ["broadcast", "axis", "consumed_inputs"])
    if node.attr("axis") is not None:
        _fail("the legacy axis attribute (opset < 7) is not supported; expected NumPy "
              "(trailing) broadcasting")
    op = node.op_type
    a, b = im.value(node, 0), im.value(node, 1)
    if (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)
            and (a.dtype.kind in "iu" or b.dtype.kind in "iu")):
        im.set_output(node, _integer_binary(node, a, b))  # shape computations
        return
    if any(isinstance(v, Tensor) and v.element not in _FLOAT_NAMES for v in (a, b)):
        _integer_tensor_binary(im, node)
        return
    a = im.check_float(node, a, 0)
    b = im.check_float(node, b, 1)
    _same_element(node, [a, b])
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        try:
            folded = _NUMPY_BINARY[op](a, b)
        except ValueError:
            _fail(f"the shapes {list(a.shape)} and {list(b.shape)} do not broadcast")
        im.set_output(node, folded.astype(np.result_type(a, b)))
        return
    shapes = [v.shape for v in (a, b)]
    try:
        shape = tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        _fail(f"the shapes {list(shapes[0])} and {list(shapes[1])} do not broadcast")
    # A one-element constant operand is written inline in a map.
    for const_index in (0, 1):
        const, other = (a, b) if const_index == 0 else (b, a)
        if isinstance(const, np.ndarray) and const.size == 1 and other.shape == shape:
            literal = _scalar_literal(const.reshape(()).item(), node, f"the constant input "
                                      f"'{node.input(const_index)}'")
            e = other.element
            operands = "%k, %e0" if const_index == 0 else "%e0, %k"
            body = f"%k = arith.constant {literal} : {e}\n%r = {_ARITH[op]} {operands} : {e}"
            im.set_output(node, T.map([other], body, name=node.leaf_name))
            return
    ta, tb = im.tensor(node, 0), im.tensor(node, 1)
    if op == "Add":
        y = T.add(ta, tb, name=node.leaf_name)
    else:
        builder = {"Sub": T.subtract, "Mul": T.multiply, "Div": T.divide}[op]
        y = builder(ta, tb, name=node.leaf_name)
    im.set_output(node, y)


def _integer_tensor_binary(im: Importer, node: _Node) -> None:
    """Add, Sub or Mul of integer tensors (position ids, mask arithmetic), wrapping around
    as onnxruntime does."""
    op = node.op_type
    if op == "Div":
        _fail("Div of integer tensors computed by the graph is not supported (a zero divisor "
              "has no result); expected float tensors or constant integers")
    arith = {"Add": "arith.addi", "Sub": "arith.subi", "Mul": "arith.muli"}[op]

    def body(elements):
        e = _one_type(node, elements, _INTS)
        return f"%r = {arith} %e0, %e1 : {e}", e

    _map_node(im, node, [0, 1], _NUMPY_BINARY[op], body)


def _integer_binary(node: _Node, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Add, Sub, Mul or Div of integer constants (shape arithmetic), as onnxruntime: in the
    type, wrapping around; Div truncates toward zero."""
    _same_dtype(node, [a, b])
    try:
        shape = np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        _fail(f"the shapes {list(a.shape)} and {list(b.shape)} do not broadcast")
    with np.errstate(all="ignore"):
        if node.op_type == "Div":
            if np.any(b == 0):
                _fail(f"the divisor '{node.input(1)}' has a zero element")
            quotient = np.abs(a.astype(np.int64)) // np.abs(b.astype(np.int64))
            negative = (a < 0) != (b < 0)
            folded = np.where(negative, -quotient, quotient)
        else:
            folded = _NUMPY_BINARY[node.op_type](a, b)
    return np.asarray(np.broadcast_to(folded, shape)).astype(a.dtype)


def _unary(builder: Callable) -> Callable[[Importer, _Node], None]:
    def handler(im: Importer, node: _Node) -> None:
        _check_unknown_attributes(node, ["consumed_inputs"])
        im.set_output(node, builder(im.tensor(node, 0), name=node.leaf_name))
    return handler


def _clip_integers(im: Importer, node: _Node) -> None:
    """Clip of an int32 / int64 tensor by constant bounds of its type (relative positions):
    min(max(x, min), max), so that min > max gives max everywhere, as ONNX says."""
    if node.attributes:
        _fail(f"the attributes {sorted(node.attributes)} are not valid in opset {im.opset}; "
              "expected min and max as inputs 1 and 2")
    x = im.value(node, 0)
    element = _element_of(node, 0, x)
    limits = []
    for i in (1, 2):
        if not node.input(i):
            limits.append(None)
            continue
        value = _constant_input(im, node, i, ("the min", "the max")[i - 1],
                                "integer Clip takes constant bounds")
        if value.size != 1 or value.ndim:
            _fail(f"input {i} '{node.input(i)}' has the shape {list(value.shape)}; expected a "
                  "scalar")
        if _element_of(node, i, value) != element:
            _fail(f"input {i} '{node.input(i)}' is a tensor of {value.dtype}; expected the "
                  f"input's {_ELEMENT_NAMES[element]}")
        limits.append(int(value))
    low, high = limits
    if isinstance(x, np.ndarray):
        y = x if low is None else np.maximum(x, np.asarray(low, x.dtype))
        im.set_output(node, y if high is None else np.minimum(y, np.asarray(high, x.dtype)))
        return
    lines, last = [], "%e0"
    for i, (bound, op) in enumerate(((low, "arith.maxsi"), (high, "arith.minsi"))):
        if bound is not None:
            lines.append(f"%b{i} = arith.constant {bound} : {element}")
            lines.append(f"%v{i} = {op} {last}, %b{i} : {element}")
            last = f"%v{i}"
    if last == "%e0":
        im.set_output(node, x)
        return
    lines[-1] = "%r = " + lines[-1].split(" = ", 1)[1]
    im.set_output(node, T.elementwise([x], "\n".join(lines), element, node.leaf_name,
                                      kind="clip"))


def _clip(im: Importer, node: _Node) -> None:
    _check_unknown_attributes(node, ["min", "max"])
    if (im.opset >= 11 and _element_of(node, 0, im.value(node, 0)) in ("i32", "i64")
            and all(isinstance(im.value(node, i), np.ndarray) for i in (1, 2)
                    if node.input(i))):
        _clip_integers(im, node)
        return
    x = im.tensor(node, 0)
    bounds: List[Optional[Value]] = [None, None]
    if im.opset < 11:
        for i, attr in enumerate(("min", "max")):
            if node.attr(attr) is not None:
                bounds[i] = np.asarray(float(node.attr(attr)))
    else:
        if node.attributes:
            _fail(f"the attributes {sorted(node.attributes)} are not valid in opset "
                  f"{im.opset}; expected min and max as inputs 1 and 2")
        for i in (1, 2):
            value = im.optional(node, i)
            if value is not None:
                im.check_float(node, value, i)
                if value.ndim if isinstance(value, np.ndarray) else value.rank:
                    _fail(f"input {i} '{node.input(i)}' has the shape "
                          f"{list(value.shape)}; expected a scalar")
                bounds[i - 1] = value
        _same_element(node, [x] + bounds)
    low, high = bounds
    if all(b is None or isinstance(b, np.ndarray) for b in bounds):
        lo = None if low is None else float(low)
        hi = None if high is None else float(high)
        if lo is not None and hi is not None and lo > hi:
            # ONNX: every element becomes max when min > max.
            lines = [f"%lo = arith.constant {_scalar_literal(lo, node, 'min')} : {x.element}",
                     f"%hi = arith.constant {_scalar_literal(hi, node, 'max')} : {x.element}",
                     f"%m = arith.maximumf %e0, %lo : {x.element}",
                     f"%r = arith.minimumf %m, %hi : {x.element}"]
            im.set_output(node, T.map([x], "\n".join(lines), name=node.leaf_name))
            return
        # An infinite bound on its own side clips nothing.
        lo = None if lo is not None and lo == -np.inf else lo
        hi = None if hi is not None and hi == np.inf else hi
        for what, v in (("min", lo), ("max", hi)):
            if v is not None and not np.isfinite(v):
                _fail(f"{what} is {v}; expected a finite number (or -inf / inf)")
        im.set_output(node, T.clip(x, lo, hi, name=node.leaf_name))
        return
    y = x
    if low is not None:
        lt = low if isinstance(low, Tensor) else im._constant_tensor(low, node.input(1), "min")
        y = T.maximum(y, lt, name=None if high is not None else node.leaf_name)
    if high is not None:
        ht = high if isinstance(high, Tensor) else im._constant_tensor(high, node.input(2), "max")
        y = T.minimum(y, ht, name=node.leaf_name)
    im.set_output(node, y)


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


def _flatten(im: Importer, node: _Node) -> None:
    _check_unknown_attributes(node, ["axis"])
    x = im.value(node, 0)
    rank = x.ndim if isinstance(x, np.ndarray) else x.rank
    axis = int(node.attr("axis", 1))
    if not -rank <= axis <= rank:
        _fail(f"axis {axis} is out of range for rank {rank}")
    if axis < 0:
        axis += rank
    shape = (int(math.prod(x.shape[:axis])), int(math.prod(x.shape[axis:])))
    if isinstance(x, np.ndarray):
        im.set_output(node, x.reshape(shape))
    else:
        im.set_output(node, T.reshape(x, shape, name=node.leaf_name))


def _reshape(im: Importer, node: _Node) -> None:
    _check_unknown_attributes(node, ["allowzero", "shape", "consumed_inputs"])
    x = im.value(node, 0)
    if im.opset < 5:
        shape = node.ints("shape")
        if shape is None:
            _fail("the shape attribute is missing")
    else:
        value = im.value(node, 1)
        if not isinstance(value, np.ndarray):
            _fail(f"the shape (input 1, '{node.input(1)}') must be a constant (an initializer or "
                  "a Constant node); found a value computed by the graph (only static shapes "
                  "are supported)")
        if value.dtype != np.int64 or value.ndim != 1:
            _fail(f"the shape '{node.input(1)}' is a {value.dtype} tensor of shape "
                  f"{list(value.shape)}; expected a 1-D int64 tensor")
        shape = [int(v) for v in value]
    allowzero = int(node.attr("allowzero", 0))
    source = list(x.shape)
    resolved = []
    for i, d in enumerate(shape):
        if d == 0 and not allowzero:
            if i >= len(source):
                _fail(f"the shape {shape} copies dimension {i} (0), which the input "
                      f"{source} does not have")
            resolved.append(source[i])
        else:
            resolved.append(d)
    if resolved.count(-1) > 1 or any(d < -1 for d in resolved):
        _fail(f"the shape {shape} is not valid; expected at most one -1 and no other "
              "negative size")
    total = int(math.prod(source))
    if -1 in resolved:
        known = int(math.prod(d for d in resolved if d != -1))
        if known == 0 or total % known:
            _fail(f"cannot infer the -1 of the shape {shape} for the input {source}")
        resolved = [total // known if d == -1 else d for d in resolved]
    if int(math.prod(resolved)) != total:
        _fail(f"the input {source} has {total} elements; the shape {shape} gives "
              f"{resolved} with {int(math.prod(resolved))}")
    if 0 in resolved:
        _fail(f"the shape {resolved} has a zero-size dimension; expected sizes >= 1")
    _reshaped(im, node, x, resolved)


def _transpose(im: Importer, node: _Node) -> None:
    _check_unknown_attributes(node, ["perm"])
    x = im.value(node, 0)
    rank = x.ndim if isinstance(x, np.ndarray) else x.rank
    perm = node.ints("perm", list(range(rank))[::-1])
    if sorted(perm) != list(range(rank)):
        _fail(f"perm {perm} is not a permutation of the {rank} dimensions")
    if isinstance(x, np.ndarray):
        im.set_output(node, np.asarray(np.transpose(x, perm), order="C"))  # keeps rank 0
    else:
        im.set_output(node, T.transpose(x, perm, name=node.leaf_name))


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


# --------------------------------------------------------------------------
# Shapes, indices and constants: folded in NumPy when every input is constant
# --------------------------------------------------------------------------

#: ONNX element types of constants (the `to` of Cast, ...) and their NumPy types.
_NUMPY_TYPES = {1: np.float32, 2: np.uint8, 3: np.int8, 4: np.uint16, 5: np.int16,
                6: np.int32, 7: np.int64, 9: np.bool_, 10: np.float16, 11: np.float64,
                12: np.uint32, 13: np.uint64}


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


def _shape(im: Importer, node: _Node) -> None:
    _check_unknown_attributes(node, ["start", "end"])
    shape = list(im.value(node, 0).shape)
    start, end = node.attr("start"), node.attr("end")
    rank = len(shape)
    start = 0 if start is None else int(start)
    end = rank if end is None else int(end)
    start = min(max(start + rank if start < 0 else start, 0), rank)
    end = min(max(end + rank if end < 0 else end, 0), rank)
    im.set_output(node, np.asarray(shape[start:end], dtype=np.int64).reshape(-1))


def _size(im: Importer, node: _Node) -> None:
    _check_unknown_attributes(node, [])
    im.set_output(node, np.asarray(math.prod(im.value(node, 0).shape), dtype=np.int64))


def _reshaped(im: Importer, node: _Node, x: Value, shape: Sequence[int]) -> None:
    if isinstance(x, np.ndarray):
        im.set_output(node, x.reshape(shape))
    else:
        im.set_output(node, T.reshape(x, shape, name=node.leaf_name))


def _unsqueeze(im: Importer, node: _Node) -> None:
    _check_unknown_attributes(node, ["axes"])
    x = im.value(node, 0)
    axes = _axes(im, node, 1, 13)
    if not axes:
        _fail("the axes are missing; expected the dimensions to insert")
    rank = _rank(x) + len(axes)
    axes = _normalize_axes(axes, rank)
    dims = iter(x.shape)
    _reshaped(im, node, x, [1 if d in axes else next(dims) for d in range(rank)])


def _squeeze(im: Importer, node: _Node) -> None:
    _check_unknown_attributes(node, ["axes"])
    x = im.value(node, 0)
    axes = _axes(im, node, 1, 13)
    shape = list(x.shape)
    if axes is None:
        axes = [d for d, n in enumerate(shape) if n == 1]
    axes = _normalize_axes(axes, len(shape))
    for a in axes:
        if shape[a] != 1:
            _fail(f"dimension {a} of the input {shape} has size {shape[a]}; expected size 1 "
                  "for each squeezed axis")
    _reshaped(im, node, x, [n for d, n in enumerate(shape) if d not in axes])


def _expand(im: Importer, node: _Node) -> None:
    _check_unknown_attributes(node, [])
    x = im.value(node, 0)
    target = _int_list(im, node, 1, "the shape")
    try:
        shape = tuple(np.broadcast_shapes(tuple(x.shape), tuple(target)))
    except ValueError:
        _fail(f"the input shape {list(x.shape)} does not broadcast with the shape {target}")
    if isinstance(x, np.ndarray):
        im.set_output(node, np.broadcast_to(x, shape).copy())
    else:
        if 0 in shape:
            _fail(f"the result shape {list(shape)} has a zero-size dimension; expected sizes "
                  ">= 1")
        y = T.broadcast_to(x, shape, name=node.leaf_name)
        im.set_output(node, y)


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


def _map_node(im: Importer, node: _Node, inputs: Sequence[int], fold: Callable,
              body: Callable[[List[str]], Tuple[str, str]]) -> None:
    """An elementwise operator of `inputs` (NumPy broadcasting): `fold(*arrays)` folds
    constant inputs in NumPy; `body(input element types)` gives the MLIR of one element
    (`%e0`, `%e1`, ... to `%r`) and the result's element type, or fails."""
    values = [im.value(node, i) for i in inputs]
    if (all(isinstance(v, np.ndarray) for v in values)
            and any(np.dtype(v.dtype) not in _DTYPE_ELEMENTS for v in values)):  # shape code of other types (uint8, ...): folded as they are
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


_INTS = ("i8", "i16", "i32", "i64")
_NUMBERS = _INTS + _FLOAT_NAMES
_COMPARISONS = {"Equal": ("oeq", "eq", np.equal), "Less": ("olt", "slt", np.less),
                "LessOrEqual": ("ole", "sle", np.less_equal),
                "Greater": ("ogt", "sgt", np.greater),
                "GreaterOrEqual": ("oge", "sge", np.greater_equal)}


def _compare(im: Importer, node: _Node) -> None:
    _check_unknown_attributes(node, [])
    fpred, ipred, fold = _COMPARISONS[node.op_type]

    def body(elements):
        allowed = _NUMBERS + ("i1",) if node.op_type == "Equal" else _NUMBERS
        e = _one_type(node, elements, allowed)
        if e in _FLOAT_NAMES:
            return f"%r = arith.cmpf {fpred}, %e0, %e1 : {e}", "i1"
        return f"%r = arith.cmpi {ipred}, %e0, %e1 : {e}", "i1"

    _map_node(im, node, [0, 1], fold, body)


_LOGIC = {"And": ("arith.andi", np.logical_and), "Or": ("arith.ori", np.logical_or),
          "Xor": ("arith.xori", np.logical_xor)}


def _logic(im: Importer, node: _Node) -> None:
    _check_unknown_attributes(node, [])
    op, fold = _LOGIC[node.op_type]

    def body(elements):
        _one_type(node, elements, ("i1",))
        return f"%r = {op} %e0, %e1 : i1", "i1"

    _map_node(im, node, [0, 1], fold, body)


def _not(im: Importer, node: _Node) -> None:
    _check_unknown_attributes(node, [])

    def body(elements):
        _one_type(node, elements, ("i1",))
        return "%t = arith.constant true\n%r = arith.xori %e0, %t : i1", "i1"

    _map_node(im, node, [0], np.logical_not, body)


def _is_nan(im: Importer, node: _Node) -> None:
    _check_unknown_attributes(node, [])

    def body(elements):
        e = _one_type(node, elements, _FLOAT_NAMES)
        return f"%r = arith.cmpf uno, %e0, %e0 : {e}", "i1"

    _map_node(im, node, [0], np.isnan, body)


def _is_inf(im: Importer, node: _Node) -> None:
    _check_unknown_attributes(node, ["detect_negative", "detect_positive"])
    negative = int(node.attr("detect_negative", 1))
    positive = int(node.attr("detect_positive", 1))

    def fold(x):
        return np.isinf(x) & (((x > 0) & bool(positive)) | ((x < 0) & bool(negative)))

    def body(elements):
        e = _one_type(node, elements, _FLOAT_NAMES)
        lines = [f"%inf = arith.constant {_literal(math.inf, e)} : {e}",
                 f"%ninf = arith.constant {_literal(-math.inf, e)} : {e}",
                 f"%p = arith.cmpf oeq, %e0, %inf : {e}",
                 f"%n = arith.cmpf oeq, %e0, %ninf : {e}"]
        if positive and negative:
            lines.append("%r = arith.ori %p, %n : i1")
        elif positive or negative:
            lines.append(f"%r = arith.ori {'%p, %p' if positive else '%n, %n'} : i1")
        else:
            lines.append("%r = arith.constant false")
        return "\n".join(lines), "i1"

    _map_node(im, node, [0], fold, body)


def _abs(im: Importer, node: _Node) -> None:
    _check_unknown_attributes(node, [])

    def body(elements):
        e = _one_type(node, elements, _NUMBERS)
        if e in _FLOAT_NAMES:
            return f"%r = math.absf %e0 : {e}", e
        return (f"%z = arith.constant 0 : {e}\n%n = arith.subi %z, %e0 : {e}\n"
                f"%c = arith.cmpi slt, %e0, %z : {e}\n%r = arith.select %c, %n, %e0 : {e}"), e

    _map_node(im, node, [0], np.abs, body)


def _sign(im: Importer, node: _Node) -> None:
    _check_unknown_attributes(node, [])

    def body(elements):
        e = _one_type(node, elements, _NUMBERS)
        if e in _FLOAT_NAMES:  # 0, -0 and NaN are their own sign
            return (f"%z = arith.constant 0.0 : {e}\n%one = arith.constant 1.0 : {e}\n"
                    f"%m = arith.constant -1.0 : {e}\n%p = arith.cmpf ogt, %e0, %z : {e}\n"
                    f"%n = arith.cmpf olt, %e0, %z : {e}\n"
                    f"%s = arith.select %n, %m, %e0 : {e}\n%r = arith.select %p, %one, %s : {e}"
                    ), e
        return (f"%z = arith.constant 0 : {e}\n%one = arith.constant 1 : {e}\n"
                f"%m = arith.constant -1 : {e}\n%p = arith.cmpi sgt, %e0, %z : {e}\n"
                f"%n = arith.cmpi slt, %e0, %z : {e}\n"
                f"%s = arith.select %n, %m, %z : {e}\n%r = arith.select %p, %one, %s : {e}"), e

    _map_node(im, node, [0], np.sign, body)


_VARIADIC = {"Max": ("arith.maximumf", "arith.maxsi"), "Min": ("arith.minimumf", "arith.minsi"),
             "Sum": ("arith.addf", None), "Mean": ("arith.addf", None)}


def _variadic(im: Importer, node: _Node) -> None:
    """Max, Min, Sum and Mean of n inputs (NumPy broadcasting); as onnxruntime, NaN
    propagates through Max and Min, and Mean is the sum, left to right, over n."""
    _check_unknown_attributes(node, [])
    fop, iop = _VARIADIC[node.op_type]
    count = len(node.inputs)
    if count == 0 or any(not name for name in node.inputs):
        _fail("expected one or more inputs, none of them missing")

    def fold(*arrays):
        with np.errstate(all="ignore"):
            if node.op_type in ("Max", "Min"):
                pick = np.maximum if node.op_type == "Max" else np.minimum
                result = arrays[0]
                for a in arrays[1:]:
                    result = pick(result, a)
                return result
            result = arrays[0]
            for a in arrays[1:]:
                result = np.add(result, a, dtype=arrays[0].dtype)
            if node.op_type == "Mean":
                result = result / np.asarray(count, arrays[0].dtype)
            return result

    def body(elements):
        allowed = _FLOAT_NAMES if iop is None else _NUMBERS
        e = _one_type(node, elements, allowed)
        op = fop if e in _FLOAT_NAMES else iop
        mean = node.op_type == "Mean"
        lines, last = [], "%e0"
        for i in range(1, count):
            # The last step is the result, unless Mean divides it.
            step = "%r" if i == count - 1 and not mean else f"%s{i}"
            lines.append(f"{step} = {op} {last}, %e{i} : {e}")
            last = step
        if mean:
            lines.append(f"%n = arith.constant {_literal(count, e)} : {e}")
            lines.append(f"%r = arith.divf {last}, %n : {e}")
        elif count == 1:  # one input: the result is that input
            lines.append("%true = arith.constant true")
            lines.append(f"%r = arith.select %true, %e0, %e0 : {e}")
        return "\n".join(lines), e

    _map_node(im, node, list(range(count)), fold, body)


_ROUNDING = {"Floor": ("math.floor", np.floor), "Ceil": ("math.ceil", np.ceil),
             "Round": ("math.roundeven", np.round)}


def _rounding(im: Importer, node: _Node) -> None:
    """Floor, Ceil and Round (half to even, as onnxruntime) of float tensors."""
    _check_unknown_attributes(node, [])
    op, fold = _ROUNDING[node.op_type]

    def body(elements):
        e = _one_type(node, elements, _FLOAT_NAMES)
        return f"%r = {op} %e0 : {e}", e

    _map_node(im, node, [0], fold, body)


def _trilu(im: Importer, node: _Node) -> None:
    """Trilu: the elements on and above (upper=1) or below (upper=0) the k-th diagonal of
    the last two dimensions; the others are 0. A select of a constant bool mask."""
    _check_unknown_attributes(node, ["upper"])
    upper = int(node.attr("upper", 1))
    if upper not in (0, 1):
        _fail(f"upper is {upper}; expected 0 or 1")
    k = 0
    if node.input(1):
        value = _int_input(im, node, 1, "k")
        if value.size != 1:
            _fail(f"k (input 1, '{node.input(1)}') has the shape {list(value.shape)}; expected "
                  "a scalar")
        k = int(value.reshape(()))
    x = im.value(node, 0)
    if _rank(x) < 2:
        _fail(f"the input has rank {_rank(x)}; expected rank 2 or more")
    rows, cols = x.shape[-2], x.shape[-1]
    ones = np.ones((rows, cols), np.bool_)
    # np.triu / np.tril take any k: the diagonals past the matrix keep all or nothing.
    k = max(min(k, cols + 1), -rows - 1)
    mask = np.triu(ones, k) if upper else np.tril(ones, k)
    element = _element_of(node, 0, x)
    if isinstance(x, np.ndarray):
        im.set_output(node, np.where(mask, x, np.zeros((), x.dtype)).astype(x.dtype))
        return
    if 0 in x.shape:
        _fail(f"the input has the shape {list(x.shape)} with a zero-size dimension; expected "
              "sizes >= 1")
    zero = ("false" if element == "i1" else f"{_literal(0.0, element)}"
            if element in _FLOAT_NAMES else "0")
    body = (f"%z = arith.constant {zero} : {element}\n"
            f"%r = arith.select %e0, %e1, %z : {element}")
    keep = im.graph.constant(mask, element="i1")
    im.set_output(node, T.elementwise([keep, x], body, element, name=node.leaf_name,
                                      kind="trilu"))


def _cumsum(im: Importer, node: _Node) -> None:
    _check_unknown_attributes(node, ["exclusive", "reverse"])
    exclusive, reverse = (int(node.attr(a, 0)) for a in ("exclusive", "reverse"))
    for name, flag in (("exclusive", exclusive), ("reverse", reverse)):
        if flag not in (0, 1):
            _fail(f"{name} is {flag}; expected 0 or 1")
    value = _int_input(im, node, 1, "the axis")
    if value.size != 1:
        _fail(f"the axis (input 1, '{node.input(1)}') has the shape {list(value.shape)}; "
              "expected a scalar")
    axis = int(value.reshape(()))
    x = im.value(node, 0)
    element = _element_of(node, 0, x)
    if element not in _NUMBERS:
        _fail(f"the input '{node.input(0)}' is a tensor of {_ELEMENT_NAMES[element]}; "
              "expected numbers")
    rank = _rank(x)
    if not -rank <= axis < rank:
        _fail(f"the axis {axis} is out of range for rank {rank}")
    if isinstance(x, np.ndarray):
        y = np.flip(x, axis) if reverse else x
        with np.errstate(all="ignore"):
            y = np.cumsum(y, axis=axis, dtype=x.dtype)
        if exclusive:
            y = np.concatenate([np.zeros_like(np.take(y, [0], axis)),
                                np.delete(y, -1, axis)], axis) if y.shape[axis] else y
        im.set_output(node, np.flip(y, axis) if reverse else y)
        return
    im.set_output(node, T.cumsum(x, axis, bool(exclusive), bool(reverse), name=node.leaf_name))


def _where(im: Importer, node: _Node) -> None:
    _check_unknown_attributes(node, [])

    def body(elements):
        if elements[0] != "i1":
            _fail(f"the condition '{node.input(0)}' is a tensor of "
                  f"{_ELEMENT_NAMES[elements[0]]}; expected bool")
        e = _one_type(node, elements[1:], _NUMBERS + ("i1",), names=(1, 2))
        return f"%r = arith.select %e0, %e1, %e2 : {e}", e

    _map_node(im, node, [0, 1, 2], np.where, body)


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


def _mod(im: Importer, node: _Node) -> None:
    _check_unknown_attributes(node, ["fmod"])
    fmod = int(node.attr("fmod", 0))
    if fmod not in (0, 1):
        _fail(f"fmod {fmod} is not valid; expected 0 or 1")
    a, b = im.value(node, 0), im.value(node, 1)
    for i, v in enumerate((a, b)):
        if isinstance(v, Tensor):
            im.check_float(node, v, i)  # integer Mod of tensors: a zero divisor has no result
    floats = any(not isinstance(v, np.ndarray) or v.dtype.kind == "f" for v in (a, b))
    if floats and not fmod and im.opset < 28:
        _fail(f"fmod 0 with float inputs is not valid in opset {im.opset} (from opset 28: the "
              "sign of the divisor); expected fmod 1")
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        _same_dtype(node, [a, b])
        if a.dtype.kind in "iu" and np.any(b == 0):
            _fail(f"the divisor '{node.input(1)}' has a zero element")
        with np.errstate(all="ignore"):
            folded = np.fmod(a, b) if fmod else np.mod(a, b)
        im.set_output(node, np.asarray(folded, dtype=a.dtype))
        return
    for i, v in enumerate((a, b)):
        im.check_float(node, v, i)
    _same_element(node, [a, b])
    ta, tb = im.tensor(node, 0), im.tensor(node, 1)
    if fmod:  # the sign of the dividend (C's fmod)
        im.set_output(node, _broadcast_map(node, ta, tb, "arith.remf"))
        return
    # fmod 0 (for floats from opset 28): the sign of the divisor, as NumPy's mod: fmod, plus
    # the divisor when the signs differ.
    try:
        shape = tuple(np.broadcast_shapes(ta.shape, tb.shape))
    except ValueError:
        _fail(f"the shapes {list(ta.shape)} and {list(tb.shape)} do not broadcast")
    e = ta.element
    body = "\n".join([f"%zero = arith.constant 0.0 : {e}",
                      f"%m = arith.remf %e0, %e1 : {e}",
                      f"%nonzero = arith.cmpf one, %m, %zero : {e}",
                      f"%mneg = arith.cmpf olt, %m, %zero : {e}",
                      f"%dneg = arith.cmpf olt, %e1, %zero : {e}",
                      "%differ = arith.xori %mneg, %dneg : i1",
                      "%fix = arith.andi %nonzero, %differ : i1",
                      f"%shifted = arith.addf %m, %e1 : {e}",
                      f"%r = arith.select %fix, %shifted, %m : {e}"])
    operands = [T.broadcast_to(ta, shape), T.broadcast_to(tb, shape)]
    im.set_output(node, T.map(operands, body, name=node.leaf_name))


def _broadcast_map(node: _Node, a: Tensor, b: Tensor, op: str) -> Tensor:
    """`op` (an arith or math op of two floats) of a and b with NumPy broadcasting."""
    try:
        shape = tuple(np.broadcast_shapes(a.shape, b.shape))
    except ValueError:
        _fail(f"the shapes {list(a.shape)} and {list(b.shape)} do not broadcast")
    a, b = T.broadcast_to(a, shape), T.broadcast_to(b, shape)
    return T.map([a, b], f"%r = {op} %e0, %e1 : {a.element}", name=node.leaf_name)


# --------------------------------------------------------------------------
# Data movement: Concat, Split, Slice, Pad, Gather
# --------------------------------------------------------------------------

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


_INT_RANGES = {"i8": 8, "i16": 16, "i32": 32, "i64": 64}
# Operators whose output 0 holds elements of input 0 only (data movement).
_MOVES_INPUT0 = {"Identity", "Reshape", "Unsqueeze", "Squeeze", "Transpose", "Flatten",
                 "Expand", "Slice", "Split", "Gather", "GatherElements", "GatherND", "Tile",
                 "ReduceMax", "ReduceMin"}


def _note_bounds(im: Importer, node: _Node) -> None:
    """Records in im.bounds the (lo, hi) of the integer tensors `node` computed, where its
    inputs' intervals say: data movement keeps them, Concat, Where and ScatterND join them,
    Add, Sub, Mul, Neg, Abs, Max, Min, CumSum and Clip follow interval arithmetic, Cast keeps
    integers and bools, ArgMax / ArgMin give [0, n). A result outside its type's range (it
    would wrap) is left unknown."""
    outputs = [o for o in node.outputs if o and isinstance(im.values.get(o), Tensor)
               and im.values[o].element in _INT_RANGES]
    if not outputs:
        return
    op = node.op_type
    got = [im.interval(name) for name in node.inputs]

    def join(items):
        if not items or any(i is None for i in items):
            return None
        return min(i[0] for i in items), max(i[1] for i in items)

    bounds = None
    if op in _MOVES_INPUT0 and got:
        bounds = got[0]
        if op == "Split":  # every output holds elements of input 0
            for name in outputs:
                _set_bounds(im, name, bounds)
            return
    elif op == "Concat":
        bounds = join(got)
    elif op == "Where" and len(got) == 3:
        bounds = join(got[1:])
    elif op == "ScatterND" and len(got) == 3:
        bounds = join([got[0], got[2]])
    elif op in ("Max", "Min") and got and all(g is not None for g in got):
        pick = max if op == "Max" else min
        bounds = pick(g[0] for g in got), pick(g[1] for g in got)
    elif op in ("Add", "Sub", "Mul") and len(got) == 2 and None not in got:
        (a, b), (c, d) = got
        if op == "Add":
            bounds = a + c, b + d
        elif op == "Sub":
            bounds = a - d, b - c
        else:
            products = [a * c, a * d, b * c, b * d]
            bounds = min(products), max(products)
    elif op == "Neg" and got[0] is not None:
        bounds = -got[0][1], -got[0][0]
    elif op == "Abs" and got[0] is not None:
        lo, hi = got[0]
        bounds = (0 if lo <= 0 <= hi else min(abs(lo), abs(hi))), max(abs(lo), abs(hi))
    elif op == "Cast":  # of integers or bools (a float input has no interval)
        bounds = got[0]
    elif op == "Clip":  # min(max(x, low), high)
        lo, hi = got[0] if got[0] is not None else (-math.inf, math.inf)
        if len(got) > 1 and got[1] is not None:
            lo, hi = max(lo, got[1][0]), max(hi, got[1][0])
        if len(got) > 2 and got[2] is not None:
            lo, hi = min(lo, got[2][1]), min(hi, got[2][1])
        bounds = (lo, hi) if math.isfinite(lo) and math.isfinite(hi) else None
    elif op == "CumSum" and got[0] is not None:
        x, axis = im.values[node.inputs[0]], im.values.get(node.inputs[1])
        if isinstance(axis, np.ndarray) and axis.size == 1:
            length = _shape_of(x)[int(axis.reshape(())) % _rank(x)]
            lo, hi = got[0]
            bounds = min(0, lo, lo * length), max(0, hi, hi * length)
    elif op in ("ArgMax", "ArgMin"):
        x = im.values[node.inputs[0]]
        axis = int(node.attr("axis", 0)) % max(_rank(x), 1)
        bounds = 0, _shape_of(x)[axis] - 1
    if bounds is not None:
        for name in outputs[:1]:
            _set_bounds(im, name, bounds)


def _set_bounds(im: Importer, name: str, bounds: Tuple[int, int]) -> None:
    bits = _INT_RANGES[im.values[name].element]
    if -(1 << (bits - 1)) <= bounds[0] <= bounds[1] < (1 << (bits - 1)):
        im.bounds[name] = (int(bounds[0]), int(bounds[1]))


def _shape_of(value: Value) -> Tuple[int, ...]:
    return tuple(value.shape)


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


def _tile(im: Importer, node: _Node) -> None:
    """Tile by constant repeats: x as (1, d0, 1, d1, ...) broadcast to (r0, d0, r1, d1, ...),
    then merged to (r0 * d0, r1 * d1, ...)."""
    _check_unknown_attributes(node, [])
    x = im.value(node, 0)
    repeats = _int_list(im, node, 1, "the repeats")
    rank = _rank(x)
    if len(repeats) != rank:
        _fail(f"the repeats {repeats} have {len(repeats)} elements; expected one per dimension "
              f"of the input's {rank}")
    if any(r < 0 for r in repeats):
        _fail(f"the repeats {repeats} are negative; expected sizes >= 0")
    if isinstance(x, np.ndarray):
        im.set_output(node, np.tile(x, repeats))
        return
    if 0 in repeats:
        _fail(f"the repeats {repeats} make a zero-size dimension; expected repeats >= 1")
    if all(r == 1 for r in repeats):
        im.set_output(node, x)
        return
    spread = [d for n in x.shape for d in (1, n)]
    repeated = [d for r, n in zip(repeats, x.shape) for d in (r, n)]
    y = T.broadcast_to(T.reshape(x, spread), repeated)
    im.set_output(node, T.reshape(y, [r * n for r, n in zip(repeats, x.shape)],
                                  name=node.leaf_name))


def _arg_reduce(kind: str) -> Callable[[Importer, _Node], None]:
    """ArgMax / ArgMin: the int64 index of the greatest / least element along axis (the
    first, or with select_last_index the last)."""
    def handler(im: Importer, node: _Node) -> None:
        _check_unknown_attributes(node, ["axis", "keepdims", "select_last_index"])
        x = im.value(node, 0)
        rank = _rank(x)
        if rank == 0:
            _fail("the input is a scalar; expected rank >= 1")
        axis = int(node.attr("axis", 0))
        if not -rank <= axis < rank:
            _fail(f"axis {axis} is out of range for rank {rank}")
        axis %= rank
        keepdims, last = int(node.attr("keepdims", 1)), int(node.attr("select_last_index", 0))
        element = _element_of(node, 0, x)
        if element not in _NUMBERS:
            _fail(f"the input '{node.input(0)}' is a tensor of {_ELEMENT_NAMES[element]}; "
                  "expected numbers")
        if x.shape[axis] == 0:
            _fail(f"axis {axis} of the input {list(x.shape)} is empty")
        if isinstance(x, np.ndarray):
            pick = np.argmax if kind == "max" else np.argmin
            if last:
                found = x.shape[axis] - 1 - pick(np.flip(x, axis), axis=axis)
            else:
                found = pick(x, axis=axis)
            found = np.asarray(found, dtype=np.int64)
            im.set_output(node, np.expand_dims(found, axis) if keepdims else found)
            return
        if rank == 1 and not keepdims:
            _fail("the result would be a scalar; expected keepdims 1 or an input of rank >= 2")
        im.set_output(node, T.arg_reduce(x, axis, kind, bool(keepdims), bool(last),
                                         name=node.leaf_name))
    return handler


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
    # A reduction: pass t combines each row with its t-th update (in the updates' order),
    # where it has one.
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
    im.set_output(node, T.reshape(y, shape, name=node.leaf_name))

# --------------------------------------------------------------------------
# Reductions and normalization
# --------------------------------------------------------------------------

_NUMPY_REDUCE = {"sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min,
                 "l2": lambda x, **kw: np.sqrt(np.sum(np.square(x), **kw))}


def _reduce(kind: str) -> Callable[[Importer, _Node], None]:
    def handler(im: Importer, node: _Node) -> None:
        _check_unknown_attributes(node, ["axes", "keepdims", "noop_with_empty_axes"])
        x = im.value(node, 0)
        rank = _rank(x)
        axes = _axes(im, node, 1, 13 if kind == "sum" else 18)
        keepdims = int(node.attr("keepdims", 1))
        noop = int(node.attr("noop_with_empty_axes", 0))
        if not axes:
            if noop:
                im.set_output(node, x)
                return
            axes = list(range(rank))
        axes = sorted(_normalize_axes(axes, rank))
        if isinstance(x, np.ndarray):
            if x.dtype.kind not in "biuf":
                _fail(f"the input is a constant tensor of {x.dtype}; expected numbers")
            if x.size == 0 and kind in ("max", "min"):
                _fail(f"the input {list(x.shape)} is empty; expected elements to reduce")
            with np.errstate(all="ignore"):
                folded = _NUMPY_REDUCE[kind](x, axis=tuple(axes), keepdims=bool(keepdims))
            im.set_output(node, np.asarray(folded).astype(x.dtype))
            return
        im.check_float(node, x, 0)
        if kind in ("mean", "max") and rank == 4 and axes == [2, 3]:
            # Over the image of NCHW: the runtime's global pooling.
            name = node.leaf_name if keepdims else None
            y = T.global_pool(x, kind, name=name)
            im.set_output(node, y if keepdims else T.reshape(y, x.shape[:2], name=node.leaf_name))
            return
        if kind == "l2":
            # sqrt(sum(x * x)) over the axes.
            e = x.element
            squares = T.map([x], f"%r = arith.mulf %e0, %e0 : {e}")
            total = T.reduce_axes(squares, axes, "sum", bool(keepdims))
            im.set_output(node, T.map([total], f"%r = math.sqrt %e0 : {e}",
                                      name=node.leaf_name))
            return
        im.set_output(node, T.reduce_axes(x, axes, kind, bool(keepdims), name=node.leaf_name))
    return handler


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


# --------------------------------------------------------------------------
# Elementwise functions
# --------------------------------------------------------------------------

def _elementwise(numpy_fn: Callable, body: Callable[[_Node, str], str],
                 attributes: Sequence[str] = (), integers: bool = False
                 ) -> Callable[[Importer, _Node], None]:
    """A unary elementwise operator: `numpy_fn(node, array)` folds a constant input,
    `body(node, element)` is the `hpvm.tensor.map` region of a tensor input."""
    def handler(im: Importer, node: _Node) -> None:
        _check_unknown_attributes(node, list(attributes))
        x = im.value(node, 0)
        if not (integers and isinstance(x, np.ndarray) and x.dtype.kind in "iu"):
            im.check_float(node, x, 0)
        if isinstance(x, np.ndarray):
            with np.errstate(all="ignore"):
                folded = numpy_fn(node, x)
            im.set_output(node, np.asarray(folded).astype(x.dtype))
            return
        text = body(node, x.element)
        text, result = (text, "%r") if isinstance(text, str) else text
        im.set_output(node, T.map([x], text, name=node.leaf_name, result=result))
    return handler


def _literal(value: float, element: str) -> str:
    return float_literal(float(value), element)


#: erf(x) = 2 / sqrt(pi) * sum_n (-1)^n x^(2n+1) / (n! (2n + 1)) for |x| < 1 (13 terms:
#: below 1e-9), and for |x| >= 1, erf = 1 - erfc with erfc(z) = t exp(-z^2 + P(t)),
#: t = 1 / (1 + z / 2), P the Chebyshev fit of Numerical Recipes (fractional error
#: < 1.2e-7 of erfc, which is < 0.16 there). Evaluated in float64: |error| < 1e-8.
#: Only for float64 tensors; the narrower types use the float32 form below.
_ERF_SERIES = [(-1) ** n / (math.factorial(n) * (2 * n + 1)) * 2 / math.sqrt(math.pi)
               for n in range(14)]
_ERFC_FIT = [-1.26551223, 1.00002368, 0.37409196, 0.09678418, -0.18628806, 0.27886807,
             -1.13520398, 1.48851587, -0.82215223, 0.17087277]

#: erf in float32 arithmetic, no calls (it vectorizes): with a = min(|x|, 3.92),
#:   a < 1:  erf = a + a * S(a^2), S(s) ~ erf(sqrt s) / sqrt s - 1 (degree 6),
#:   a >= 1: erf = 1 - L(a - 2.46), L ~ erfc on [1, 3.92] (degree 14),
#: the sign copied from x. Both are one Horner chain whose coefficients are selected by
#: the branch. S and L are Chebyshev interpolants (numpy's chebfit at 400 Chebyshev nodes)
#: turned into powers and rounded to float32; the large terms (a, 1) are added last, so
#: the rounding errors are those of the small corrections. Past 3.92 erfc < 2.8e-8, below
#: half an ulp of 1. Measured over every float32 in [1e-6, 4) and a sweep of [-10, 10]:
#: |error| < 8.5e-8 (1.5 ulp of 1.0); NaN gives NaN, +-inf gives +-1.
_ERF32_SPLIT = 1.0
_ERF32_CLAMP = 3.92
_ERF32_CENTER = 2.46
_ERF32_SMALL = [0.12837916612625122, -0.3761262595653534, 0.11283597350120544,
                -0.02685432881116867, 0.005189312156289816, -0.0008018855005502701,
                7.882497448008507e-05]
_ERF32_LARGE = [0.0005033535999245942, -0.0026562369894236326, 0.006534520536661148,
                -0.009832456707954407, 0.009914183989167213, -0.006799545604735613,
                0.002937170909717679, -0.00045933123328723013, -0.0003558973257895559,
                0.00029961674590595067, -7.582805119454861e-05, -2.4706278054509312e-05,
                1.7332071365672164e-05, -9.4817231399702e-08, -1.0944362429654575e-06]

#: exp in float32 arithmetic, no calls: y clamped to [-87, 88] (NaN-dropping: the Gelu
#: result is NaN through x), y = k ln2 + r with k = round(y / ln2) (the 1.5 * 2^23 trick)
#: and ln2 in two parts (k ln2_hi exact), exp(r) by a degree-6 Chebyshev interpolant on
#: [-ln2/2, ln2/2] (relative error < 3e-9 before rounding), times 2^k built in the
#: exponent bits.
_EXP32_LOG2E = 1.4426950216293335
_EXP32_MAGIC = 12582912.0
_EXP32_LN2_HI = 0.693145751953125
_EXP32_LN2_LO = 1.428606765330187e-06
_EXP32_POLY = [1.0, 1.0, 0.5, 0.16666415333747864, 0.041666217148303986,
               0.008375128731131554, 0.001394858118146658]


def _erf_lines(value: str, prefix: str) -> Tuple[List[str], str]:
    """MLIR lines computing erf of the f64 `value`; names start with `%<prefix>`."""
    p = f"%{prefix}"
    lines = [f"{p}abs = math.absf {value} : f64",
             f"{p}sq = arith.mulf {value}, {value} : f64"]
    count = [0]

    def const(c: float) -> str:
        count[0] += 1
        name = f"{p}k{count[0]}"
        lines.append(f"{name} = arith.constant {float_literal(c)} : f64")
        return name

    def fresh() -> str:
        count[0] += 1
        return f"{p}v{count[0]}"

    # The series, in x^2 by Horner's rule, times x.
    acc = const(_ERF_SERIES[-1])
    for c in reversed(_ERF_SERIES[:-1]):
        m, a = fresh(), fresh()
        lines += [f"{m} = arith.mulf {acc}, {p}sq : f64", f"{a} = arith.addf {m}, {const(c)} : f64"]
        acc = a
    small = fresh()
    lines.append(f"{small} = arith.mulf {acc}, {value} : f64")
    # 1 - erfc(|x|), its sign copied from x.
    one, half = const(1.0), const(0.5)
    h, d, t = fresh(), fresh(), fresh()
    lines += [f"{h} = arith.mulf {p}abs, {half} : f64", f"{d} = arith.addf {h}, {one} : f64",
              f"{t} = arith.divf {one}, {d} : f64"]
    acc = const(_ERFC_FIT[-1])
    for c in reversed(_ERFC_FIT[:-1]):
        m, a = fresh(), fresh()
        lines += [f"{m} = arith.mulf {acc}, {t} : f64", f"{a} = arith.addf {m}, {const(c)} : f64"]
        acc = a
    exponent, e, erfc, large, signed = fresh(), fresh(), fresh(), fresh(), fresh()
    lines += [f"{exponent} = arith.subf {acc}, {p}sq : f64",
              f"{e} = math.exp {exponent} : f64",
              f"{erfc} = arith.mulf {t}, {e} : f64",
              f"{large} = arith.subf {one}, {erfc} : f64",
              f"{signed} = math.copysign {large}, {value} : f64"]
    below, result = fresh(), fresh()
    lines += [f"{below} = arith.cmpf olt, {p}abs, {one} : f64",
              f"{result} = arith.select {below}, {small}, {signed} : f64"]
    return lines, result


def _in_f64(element: str, compute: Callable[[str], Tuple[List[str], str]]) -> Tuple[str, str]:
    """A map body that computes in float64: %e0 widened, `compute(value)`, narrowed to %r;
    the body and the name of its result."""
    lines, value = [], "%e0"
    if element != "f64":
        lines.append(f"%w = arith.extf %e0 : {element} to f64")
        value = "%w"
    more, result = compute(value)
    lines += more
    if element != "f64":
        lines.append(f"%r = arith.truncf {result} : f64 to {element}")
        result = "%r"
    return "\n".join(lines), result


def _in_f32(element: str, compute: Callable[[str], Tuple[List[str], str]]) -> Tuple[str, str]:
    """A map body that computes in float32: %e0 widened (f16, bf16), `compute(value)`,
    narrowed to %r; the body and the name of its result."""
    lines, value = [], "%e0"
    if element != "f32":
        lines.append(f"%w = arith.extf %e0 : {element} to f32")
        value = "%w"
    more, result = compute(value)
    lines += more
    if element != "f32":
        lines.append(f"%r = arith.truncf {result} : f32 to {element}")
        result = "%r"
    return "\n".join(lines), result


class _Lines:
    """MLIR lines of float32 scalar arithmetic, names starting with `%<prefix>`."""

    def __init__(self, prefix: str):
        self.prefix, self.lines, self.count = f"%{prefix}", [], 0

    def fresh(self) -> str:
        self.count += 1
        return f"{self.prefix}v{self.count}"

    def op(self, text: str, type_: str = "f32") -> str:
        name = self.fresh()
        self.lines.append(f"{name} = {text} : {type_}")
        return name

    def const(self, c: float) -> str:
        return self.op(f"arith.constant {float_literal(float(np.float32(c)), 'f32')}")


def _erf32_lines(value: str, prefix: str) -> Tuple[List[str], str]:
    """MLIR lines computing erf of the f32 `value` (the float32 form above)."""
    m = _Lines(prefix)
    a = m.op(f"math.absf {value}")
    c = m.op(f"arith.minimumf {a}, {m.const(_ERF32_CLAMP)}")
    one = m.const(1.0)
    small = m.op(f"arith.cmpf olt, {c}, {m.const(_ERF32_SPLIT)}")
    sq = m.op(f"arith.mulf {c}, {c}")
    t = m.op(f"arith.subf {c}, {m.const(_ERF32_CENTER)}")
    u = m.op(f"arith.select {small}, {sq}, {t}")
    n = len(_ERF32_LARGE)
    lows = [0.0] * (n - len(_ERF32_SMALL)) + _ERF32_SMALL[::-1]
    highs = _ERF32_LARGE[::-1]

    def coefficient(k: int) -> str:
        return m.op(f"arith.select {small}, {m.const(lows[k])}, {m.const(highs[k])}")

    p = coefficient(0)
    for k in range(1, n):
        p = m.op(f"arith.addf {m.op(f'arith.mulf {p}, {u}')}, {coefficient(k)}")
    scale = m.op(f"arith.select {small}, {c}, {m.const(-1.0)}")
    base = m.op(f"arith.select {small}, {c}, {one}")
    magnitude = m.op(f"arith.addf {base}, {m.op(f'arith.mulf {scale}, {p}')}")
    return m.lines, m.op(f"math.copysign {magnitude}, {value}")


def _numpy_erf32(x: np.ndarray) -> np.ndarray:
    """`_erf32_lines` in NumPy, operation for operation (the same float32 results)."""
    f = np.float32
    x = np.asarray(x, dtype=f)
    c = np.minimum(np.abs(x), f(_ERF32_CLAMP))
    small = c < f(_ERF32_SPLIT)
    u = np.where(small, c * c, c - f(_ERF32_CENTER))
    n = len(_ERF32_LARGE)
    lows = [0.0] * (n - len(_ERF32_SMALL)) + _ERF32_SMALL[::-1]
    highs = _ERF32_LARGE[::-1]
    p = np.where(small, f(lows[0]), f(highs[0]))
    for k in range(1, n):
        p = p * u + np.where(small, f(lows[k]), f(highs[k]))
    magnitude = np.where(small, c, f(1.0)) + np.where(small, c, f(-1.0)) * p
    return np.copysign(magnitude, x).astype(f)


def _exp32_lines(value: str, prefix: str) -> Tuple[List[str], str]:
    """MLIR lines computing exp of the f32 `value` (the float32 form above)."""
    m = _Lines(prefix)
    y = m.op(f"arith.maxnumf {value}, {m.const(-87.0)}")
    y = m.op(f"arith.minnumf {y}, {m.const(88.0)}")
    magic = m.const(_EXP32_MAGIC)
    shifted = m.op(f"arith.addf {m.op(f'arith.mulf {y}, {m.const(_EXP32_LOG2E)}')}, {magic}")
    k = m.op(f"arith.subf {shifted}, {magic}")
    r = m.op(f"arith.subf {y}, {m.op(f'arith.mulf {k}, {m.const(_EXP32_LN2_HI)}')}")
    r = m.op(f"arith.subf {r}, {m.op(f'arith.mulf {k}, {m.const(_EXP32_LN2_LO)}')}")
    p = m.const(_EXP32_POLY[-1])
    for c in reversed(_EXP32_POLY[:-1]):
        p = m.op(f"arith.addf {m.op(f'arith.mulf {p}, {r}')}, {m.const(c)}")
    ki = m.fresh()
    m.lines.append(f"{ki} = arith.fptosi {k} : f32 to i32")
    bias = m.op("arith.constant 127", "i32")
    shift = m.op("arith.constant 23", "i32")
    bits = m.op(f"arith.shli {m.op(f'arith.addi {ki}, {bias}', 'i32')}, {shift}", "i32")
    power = m.fresh()
    m.lines.append(f"{power} = arith.bitcast {bits} : i32 to f32")
    finite = m.op(f"arith.mulf {p}, {power}")
    over = m.op(f"arith.cmpf ogt, {value}, {m.const(88.0)}")
    return m.lines, m.op(f"arith.select {over}, {m.const(math.inf)}, {finite}")


def _numpy_exp32(x: np.ndarray) -> np.ndarray:
    """`_exp32_lines` in NumPy, operation for operation."""
    f = np.float32
    y = np.fmin(np.fmax(np.asarray(x, dtype=f), f(-87.0)), f(88.0))
    k = (y * f(_EXP32_LOG2E) + f(_EXP32_MAGIC)) - f(_EXP32_MAGIC)
    r = (y - k * f(_EXP32_LN2_HI)) - k * f(_EXP32_LN2_LO)
    p = f(_EXP32_POLY[-1])
    for c in reversed(_EXP32_POLY[:-1]):
        p = p * r + f(c)
    bits = (np.asarray(k).astype(np.int32) + np.int32(127)) << np.int32(23)
    power = np.asarray(bits, dtype=np.int32).view(f)
    return np.where(np.asarray(x, dtype=f) > f(88.0), f(math.inf), p * power).astype(f)


def _erf_body(node: _Node, element: str) -> Tuple[str, str]:
    if element == "f64":
        return _in_f64(element, lambda v: _erf_lines(v, "erf"))
    return _in_f32(element, lambda v: _erf32_lines(v, "erf"))


def _numpy_erf(node: _Node, x: np.ndarray) -> np.ndarray:
    if x.dtype != np.float64:
        return _numpy_erf32(x)
    flat = [math.erf(v) for v in x.astype(np.float64).reshape(-1)]
    return np.asarray(flat, dtype=np.float64).reshape(x.shape)


def _gelu_f64_lines(approximate: str, v: str) -> Tuple[List[str], str]:
    """Gelu of the f64 `value` in float64 (float64 tensors only)."""
    if approximate == "tanh":
        # 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))
        return ([f"%c = arith.constant {float_literal(math.sqrt(2 / math.pi))} : f64",
                 "%k = arith.constant 0.044715 : f64",
                 "%half = arith.constant 0.5 : f64",
                 "%one = arith.constant 1.0 : f64",
                 f"%x2 = arith.mulf {v}, {v} : f64",
                 f"%x3 = arith.mulf %x2, {v} : f64",
                 "%kx3 = arith.mulf %x3, %k : f64",
                 f"%s = arith.addf {v}, %kx3 : f64",
                 "%u = arith.mulf %s, %c : f64",
                 "%t = math.tanh %u : f64",
                 "%t1 = arith.addf %t, %one : f64",
                 f"%hx = arith.mulf {v}, %half : f64",
                 "%g = arith.mulf %hx, %t1 : f64"], "%g")
    # 0.5 x (1 + erf(x / sqrt(2)))
    lines = [f"%c = arith.constant {float_literal(1 / math.sqrt(2))} : f64",
             "%half = arith.constant 0.5 : f64",
             "%one = arith.constant 1.0 : f64",
             f"%s = arith.mulf {v}, %c : f64"]
    more, erf = _erf_lines("%s", "erf")
    lines += more
    lines += [f"%t1 = arith.addf {erf}, %one : f64",
              f"%hx = arith.mulf {v}, %half : f64",
              "%g = arith.mulf %hx, %t1 : f64"]
    return lines, "%g"


#: The tanh form's exp(-2 u), u = sqrt(2 / pi) (x + 0.044715 x^3), is exp of this factor
#: times x + 0.044715 x^3.
_GELU_TANH_SCALE = -2 * math.sqrt(2 / math.pi)


def _gelu_body(node: _Node, element: str) -> Tuple[str, str]:
    approximate = node.string("approximate", "none")
    if element == "f64":
        return _in_f64(element, lambda v: _gelu_f64_lines(approximate, v))
    if approximate == "tanh":
        # 0.5 x (1 + tanh(u)) = x / (1 + exp(-2 u))
        def compute(v):
            m = _Lines("g")
            x2 = m.op(f"arith.mulf {v}, {v}")
            x3 = m.op(f"arith.mulf {x2}, {v}")
            s = m.op(f"arith.addf {v}, {m.op(f'arith.mulf {x3}, {m.const(0.044715)}')}")
            y = m.op(f"arith.mulf {s}, {m.const(_GELU_TANH_SCALE)}")
            more, e = _exp32_lines(y, "exp")
            lines = m.lines + more
            return lines + ["%gone = arith.constant 1.0 : f32",
                            f"%gden = arith.addf {e}, %gone : f32",
                            f"%g = arith.divf {v}, %gden : f32"], "%g"
    else:
        # 0.5 x (1 + erf(x / sqrt(2)))
        def compute(v):
            lines = [f"%c = arith.constant {float_literal(float(np.float32(1 / math.sqrt(2))))}"
                     " : f32",
                     "%half = arith.constant 0.5 : f32",
                     "%one = arith.constant 1.0 : f32",
                     f"%s = arith.mulf {v}, %c : f32"]
            more, erf = _erf32_lines("%s", "erf")
            lines += more
            lines += [f"%t1 = arith.addf {erf}, %one : f32",
                      f"%hx = arith.mulf {v}, %half : f32",
                      "%g = arith.mulf %hx, %t1 : f32"]
            return lines, "%g"
    return _in_f32(element, compute)


def _numpy_gelu(node: _Node, x: np.ndarray) -> np.ndarray:
    tanh = node.string("approximate", "none") == "tanh"
    if x.dtype == np.float64:
        if tanh:
            return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
        return 0.5 * x * (1 + _numpy_erf(node, x / math.sqrt(2)))
    f = np.float32
    x = np.asarray(x, dtype=f)
    if tanh:
        s = x + (x * x * x) * f(0.044715)
        return x / (_numpy_exp32(s * f(_GELU_TANH_SCALE)) + f(1.0))
    erf = _numpy_erf32(x * f(1 / math.sqrt(2)))
    return (x * f(0.5)) * (erf + f(1.0))


def _gelu(im: Importer, node: _Node) -> None:
    approximate = node.string("approximate", "none")
    if approximate not in ("none", "tanh"):
        _fail(f"approximate '{approximate}' is not valid; expected none or tanh")
    _elementwise(_numpy_gelu, _gelu_body, ["approximate"])(im, node)


def _hard_sigmoid_lines(alpha: float, beta: float, element: str, result: str) -> List[str]:
    e = element
    return [f"%alpha = arith.constant {_literal(alpha, e)} : {e}",
            f"%beta = arith.constant {_literal(beta, e)} : {e}",
            f"%zero = arith.constant 0.0 : {e}",
            f"%one = arith.constant 1.0 : {e}",
            f"%ax = arith.mulf %e0, %alpha : {e}",
            f"%lin = arith.addf %ax, %beta : {e}",
            f"%low = arith.minimumf %lin, %one : {e}",
            f"{result} = arith.maximumf %low, %zero : {e}"]


def _hard_sigmoid_parameters(node: _Node) -> Tuple[float, float]:
    alpha, beta = float(node.attr("alpha", 0.2)), float(node.attr("beta", 0.5))
    for what, v in (("alpha", alpha), ("beta", beta)):
        if not math.isfinite(v):
            _fail(f"{what} is {v}; expected a finite number")
    return alpha, beta


def _hard_sigmoid_body(node: _Node, element: str) -> str:
    return "\n".join(_hard_sigmoid_lines(*_hard_sigmoid_parameters(node), element, "%r"))


def _numpy_hard_sigmoid(node: _Node, x: np.ndarray) -> np.ndarray:
    alpha, beta = _hard_sigmoid_parameters(node)
    return np.maximum(np.minimum(x * x.dtype.type(alpha) + x.dtype.type(beta), 1), 0)


def _hard_swish_body(node: _Node, element: str) -> str:
    lines = _hard_sigmoid_lines(1 / 6, 0.5, element, "%h")
    return "\n".join(lines + [f"%r = arith.mulf %e0, %h : {element}"])


def _numpy_hard_swish(node: _Node, x: np.ndarray) -> np.ndarray:
    alpha = x.dtype.type(1 / 6)
    return x * np.maximum(np.minimum(x * alpha + x.dtype.type(0.5), 1), 0)


def _simple_body(op: str) -> Callable[[_Node, str], str]:
    return lambda node, element: f"%r = {op} %e0 : {element}"


def _reciprocal_body(node: _Node, element: str) -> str:
    return f"%one = arith.constant 1.0 : {element}\n%r = arith.divf %one, %e0 : {element}"


def _pow(im: Importer, node: _Node) -> None:
    _check_unknown_attributes(node, [])
    x, y = im.value(node, 0), im.value(node, 1)
    if isinstance(y, np.ndarray) and y.dtype.kind not in "iuf":
        _fail(f"the exponent '{node.input(1)}' is a tensor of {y.dtype}; expected numbers")
    if isinstance(x, np.ndarray) and isinstance(y, np.ndarray):
        if x.dtype.kind not in "iuf":
            _fail(f"the base '{node.input(0)}' is a tensor of {x.dtype}; expected numbers")
        try:
            shape = np.broadcast_shapes(x.shape, y.shape)
        except ValueError:
            _fail(f"the shapes {list(x.shape)} and {list(y.shape)} do not broadcast")
        with np.errstate(all="ignore"):
            if x.dtype.kind == "f":
                folded = np.power(x.astype(np.float64), y.astype(np.float64))
            else:
                if np.any(y < 0):
                    _fail("an integer base with a negative exponent")
                folded = np.power(x.astype(np.int64), y.astype(np.int64))
        im.set_output(node, np.broadcast_to(folded, shape).astype(x.dtype))
        return
    im.check_float(node, x, 0)
    x = im.tensor(node, 0)
    e = x.element
    if isinstance(y, np.ndarray):
        if y.size == 1 and len(y.shape) <= x.rank:
            exponent = float(y.reshape(()).item())
            if exponent == 2.0:
                body = f"%r = arith.mulf %e0, %e0 : {e}"
            elif exponent == 3.0:
                body = f"%s = arith.mulf %e0, %e0 : {e}\n%r = arith.mulf %s, %e0 : {e}"
            elif exponent == 1.0:
                body = ""
            else:
                if math.isnan(exponent):
                    _fail("the exponent is NaN; expected a number")
                body = (f"%k = arith.constant {_literal(exponent, e)} : {e}\n"
                        f"%r = math.powf %e0, %k : {e}")
            x = T.broadcast_to(x, tuple(np.broadcast_shapes(x.shape, y.shape)))
            im.set_output(node, T.map([x], body, name=node.leaf_name,
                                      result="%r" if body else "%e0"))
            return
        y = y.astype(x.type.dtype)
        exponent_tensor = im._constant_tensor(y, node.input(1), "the exponent")
    else:
        if y.element != e:
            _fail(f"the base {x.type} and the exponent {y.type} have different element types; "
                  "expected one type (or a constant exponent)")
        exponent_tensor = y
    im.set_output(node, _broadcast_map(node, x, exponent_tensor, "math.powf"))


# --------------------------------------------------------------------------
# Resize
# --------------------------------------------------------------------------

_COORDINATE_MODES = ("half_pixel", "half_pixel_symmetric", "pytorch_half_pixel",
                     "align_corners", "asymmetric", "tf_half_pixel_for_nn")


def _optional_constant(im: Importer, node: _Node, i: int, what: str) -> Optional[np.ndarray]:
    """Input `i` as a constant, or None when it is absent or empty (opset 11 models give
    the unused one of scales / sizes as an empty tensor)."""
    if not node.input(i):
        return None
    value = _constant_input(im, node, i, what)
    return value if value.size else None


def _source_coordinates(mode: str, size: int, out: int, scale: float) -> np.ndarray:
    """The coordinate in the input of each output position along one axis, as ONNX's
    coordinate_transformation_mode defines it (in float64). The output length in these
    formulas is `scale * size` before rounding, as in ONNX's reference implementation and
    backend tests; with scales whose product is fractional, onnxruntime's align_corners
    uses the rounded length instead (the two then differ; with sizes they agree)."""
    y = np.arange(out, dtype=np.float64)
    width = scale * size  # the output size before it is rounded down
    if mode == "align_corners":
        return np.zeros(out) if width == 1 else y * (size - 1) / (width - 1)
    if mode == "asymmetric":
        return y / scale
    if mode == "tf_half_pixel_for_nn":
        return (y + 0.5) / scale
    if mode == "pytorch_half_pixel":
        return np.full(out, -0.5) if width == 1 else (y + 0.5) / scale - 0.5
    if mode == "half_pixel_symmetric":
        offset = size / 2 * (1 - out / width)
        return offset + (y + 0.5) / scale - 0.5
    return (y + 0.5) / scale - 0.5  # half_pixel


def _nearest_indices(x: np.ndarray, rounding: str, size: int) -> np.ndarray:
    low = np.floor(x)
    fraction = x - low
    if rounding == "floor":
        up = np.zeros(x.shape, bool)
    elif rounding == "ceil":
        up = fraction > 0
    elif rounding == "round_prefer_ceil":
        up = fraction >= 0.5
    else:  # round_prefer_floor
        up = fraction > 0.5
    return np.clip(low + up, 0, size - 1).astype(np.int64)


def _resize(im: Importer, node: _Node) -> None:
    _check_unknown_attributes(node, ["mode", "coordinate_transformation_mode", "nearest_mode",
                                     "cubic_coeff_a", "exclude_outside", "extrapolation_value",
                                     "antialias", "axes", "keep_aspect_ratio_policy"])
    if im.opset < 11:
        _fail(f"Resize of opset {im.opset} (scales as input 1, its own rounding) is not "
              "supported; expected opset 11 or later")
    mode = node.string("mode", "nearest")
    if mode not in ("nearest", "linear", "cubic"):
        _fail(f"mode '{mode}' is not valid; expected nearest, linear or cubic")
    if mode == "cubic":
        _fail("mode 'cubic' is not supported; expected nearest or linear")
    transform = node.string("coordinate_transformation_mode", "half_pixel")
    if transform == "tf_crop_and_resize":
        _fail("coordinate_transformation_mode 'tf_crop_and_resize' is not supported; expected "
              + ", ".join(_COORDINATE_MODES))
    if transform not in _COORDINATE_MODES:
        _fail(f"coordinate_transformation_mode '{transform}' is not valid; expected "
              + ", ".join(_COORDINATE_MODES))
    rounding = node.string("nearest_mode", "round_prefer_floor")
    if rounding not in ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil"):
        _fail(f"nearest_mode '{rounding}' is not valid; expected round_prefer_floor, "
              "round_prefer_ceil, floor or ceil")
    if int(node.attr("antialias", 0)) and mode != "nearest":
        _fail("antialias 1 is not supported; expected 0")
    policy = node.string("keep_aspect_ratio_policy", "stretch")
    if policy not in ("stretch", "not_larger", "not_smaller"):
        _fail(f"keep_aspect_ratio_policy '{policy}' is not valid; expected stretch, not_larger "
              "or not_smaller")
    x = im.tensor(node, 0)
    axes = node.ints("axes")
    axes = list(range(x.rank)) if axes is None else _normalize_axes(axes, x.rank)
    scales = _optional_constant(im, node, 2, "the scales")
    sizes = _optional_constant(im, node, 3, "the sizes")
    if (scales is None) == (sizes is None):
        _fail("expected exactly one of the scales (input 2) and the sizes (input 3)")
    given = scales if scales is not None else sizes
    if given.ndim != 1 or given.size != len(axes):
        _fail(f"the {'scales' if scales is not None else 'sizes'} {given.tolist()} do not "
              f"give one value for each of the {len(axes)} axes {axes}")
    factor = [1.0] * x.rank
    out = list(x.shape)
    if scales is not None:
        if scales.dtype.kind != "f" or not np.all(np.isfinite(scales)) or np.any(scales <= 0):
            _fail(f"the scales {scales.tolist()} are not valid; expected positive numbers")
        for a, s in zip(axes, scales.astype(np.float64)):
            factor[a], out[a] = float(s), int(float(s) * x.shape[a])
    else:
        if sizes.dtype.kind not in "iu" or np.any(sizes <= 0):
            _fail(f"the sizes {sizes.tolist()} are not valid; expected positive integers")
        ratios = [int(n) / x.shape[a] for a, n in zip(axes, sizes)]
        if policy != "stretch":
            ratio = min(ratios) if policy == "not_larger" else max(ratios)
            ratios = [ratio] * len(axes)
            sizes = [int(math.floor(ratio * x.shape[a] + 0.5)) for a in axes]
        for a, r, n in zip(axes, ratios, sizes):
            factor[a], out[a] = r, int(n)
    if 0 in out:
        _fail(f"the output shape {out} has a zero-size dimension; expected sizes >= 1")
    y = x
    resized = [a for a in range(x.rank) if not (out[a] == x.shape[a] and factor[a] == 1.0)]
    if mode == "nearest":
        indices = {a: _nearest_indices(_source_coordinates(transform, x.shape[a], out[a],
                                                           factor[a]), rounding, x.shape[a])
                   for a in resized}
        y = T.take_axes(x, indices, name=node.leaf_name)
    else:
        for k, a in enumerate(resized):
            source = _source_coordinates(transform, x.shape[a], out[a], factor[a])
            low = np.floor(source)
            weight = source - low
            lower = np.clip(low, 0, x.shape[a] - 1).astype(np.int64)
            upper = np.clip(low + 1, 0, x.shape[a] - 1).astype(np.int64)
            last = k == len(resized) - 1
            y = T.lerp_axis(y, a, lower, upper, weight, name=node.leaf_name if last else None)
    im.set_output(node, y)


_HANDLERS: Dict[str, Callable[[Importer, _Node], None]] = {
    "Add": _binary, "Sub": _binary, "Mul": _binary, "Div": _binary,
    "ArgMax": _arg_reduce("max"),
    "ArgMin": _arg_reduce("min"),
    "AveragePool": _average_pool,
    "BatchNormalization": _batch_norm,
    "Cast": _cast,
    "Clip": _clip,
    "Concat": _concat,
    "Constant": _constant,
    "ConstantOfShape": _constant_of_shape,
    "Conv": _conv,
    "Cos": _elementwise(lambda node, x: np.cos(x), _simple_body("math.cos")),
    "CumSum": _cumsum,
    "Dropout": _dropout,
    "Abs": _abs,
    "And": _logic,
    "Equal": _compare,
    "Greater": _compare,
    "GreaterOrEqual": _compare,
    "IsInf": _is_inf,
    "IsNaN": _is_nan,
    "Less": _compare,
    "LessOrEqual": _compare,
    "Not": _not,
    "Or": _logic,
    "Sign": _sign,
    "Xor": _logic,
    "Erf": _elementwise(_numpy_erf, _erf_body),
    "Exp": _elementwise(lambda node, x: np.exp(x), _simple_body("math.exp")),
    "Expand": _expand,
    "Ceil": _rounding,
    "Flatten": _flatten,
    "Floor": _rounding,
    "Gather": _gather,
    "GatherElements": _gather_elements,
    "GatherND": _gather_nd,
    "Gelu": _gelu,
    "Gemm": _gemm,
    "GlobalAveragePool": _global_pool("mean"),
    "GlobalMaxPool": _global_pool("max"),
    "HardSigmoid": _elementwise(_numpy_hard_sigmoid, _hard_sigmoid_body, ["alpha", "beta"]),
    "HardSwish": _elementwise(_numpy_hard_swish, _hard_swish_body),
    "Identity": _identity,
    "InstanceNormalization": _instance_norm,
    "LayerNormalization": _layer_norm,
    "Log": _elementwise(lambda node, x: np.log(x), _simple_body("math.log")),
    "MatMul": _matmul,
    "Max": _variadic,
    "MaxPool": _max_pool,
    "Mean": _variadic,
    "Min": _variadic,
    "Mod": _mod,
    "Neg": _elementwise(lambda node, x: np.negative(x), _simple_body("arith.negf"),
                        integers=True),
    "Pad": _pad,
    "Pow": _pow,
    "Range": _range,
    "Reciprocal": _elementwise(lambda node, x: np.reciprocal(x), _reciprocal_body),
    "ReduceL2": _reduce("l2"),
    "ReduceMax": _reduce("max"),
    "ReduceMean": _reduce("mean"),
    "ReduceMin": _reduce("min"),
    "ReduceSum": _reduce("sum"),
    "Relu": _unary(T.relu),
    "Reshape": _reshape,
    "Round": _rounding,
    "Resize": _resize,
    "ScatterND": _scatter_nd,
    "Shape": _shape,
    "Sigmoid": _unary(T.sigmoid),
    "Sin": _elementwise(lambda node, x: np.sin(x), _simple_body("math.sin")),
    "Size": _size,
    "Slice": _slice,
    "Softmax": _softmax,
    "Split": _split,
    "Sqrt": _elementwise(lambda node, x: np.sqrt(x), _simple_body("math.sqrt")),
    "Squeeze": _squeeze,
    "Sum": _variadic,
    "Tanh": _unary(T.tanh),
    "Transpose": _transpose,
    "Tile": _tile,
    "Trilu": _trilu,
    "Unsqueeze": _unsqueeze,
    "Where": _where,
}

#: The ONNX operators `load` converts.
SUPPORTED_OPS = tuple(sorted(_HANDLERS))


#: The largest ONNX file read: protobuf parses no message over 2 GiB.
_MODEL_LIMIT = (1 << 31) - 1


def _external_data_error(tensor, base_dir: str) -> Optional[str]:
    """What is wrong with the external data file of `tensor` (read from `base_dir`)
    before onnx reads it, or None: it must be a regular file (after links; a link to
    /dev/zero or a named pipe is refused before anything is read) that holds the bytes
    its offset and length name, and no more than the tensor needs when no length is
    given (onnx would read the rest of the file)."""
    info = {e.key: e.value for e in tensor.external_data}
    location = info.get("location", "")
    if not location:
        return "it keeps its data in an external file but names none; expected a 'location'"
    try:
        offset = int(info.get("offset") or 0)
        length = int(info["length"]) if info.get("length") else None
    except ValueError:
        return (f"the offset '{info.get('offset')}' or length '{info.get('length')}' of its "
                "external data is not an integer")
    path = os.path.join(base_dir, location)
    try:
        size = regular_file(path, "its external data file").st_size
    except HPVMError as error:
        return str(error)
    try:
        itemsize = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(tensor.data_type)).itemsize
        needed = math.prod(int(d) for d in tensor.dims) * itemsize
    except Exception:  # an unknown or packed data type: onnx's own checks decide
        needed = None
    if offset < 0 or offset > size or (length is not None and (
            length < 0 or length > size - offset)):
        return (f"its external data file '{path}' holds {size} bytes; expected "
                f"{'?' if length is None else length} bytes at byte {offset}")
    if needed is not None and (length if length is not None else size - offset) > needed:
        given = (f"a length of {length} bytes" if length is not None else
                 f"no length, and onnx would read the {size - offset} bytes after byte "
                 f"{offset}")
        return (f"its external data file '{path}' gives {given}; expected at most the "
                f"{needed} bytes of its dims {list(tensor.dims)}")
    return None


def load_model(model, load_external_data: bool = True):
    """A ModelProto from a path, serialized bytes or a ModelProto. The external data of a
    model given by path is read from the model's folder (unless `load_external_data` is
    false: then the tensors still name their files). A path must name a regular file
    (after links) of at most 2 GiB, external data files too: HPVMError otherwise."""
    _require_onnx()
    if isinstance(model, onnx.ModelProto):
        return model
    if isinstance(model, (bytes, bytearray, memoryview)):
        try:
            return onnx.load_from_string(bytes(model))
        except Exception as error:  # DecodeError and friends
            raise HPVMError(f"cannot parse the ONNX model: {error}") from None
    if isinstance(model, (str, os.PathLike)):
        path = path_text(model, "the ONNX model")
        data = read_bytes(path, "the ONNX model", _MODEL_LIMIT,
                          " (protobuf reads no larger message; a larger model keeps its "
                          "weights in external data files)")
        try:
            proto = onnx.load_from_string(data)
        except Exception as error:
            raise HPVMError(f"cannot read the ONNX model '{path}': {error}") from None
        if load_external_data:
            base_dir = os.path.dirname(os.path.abspath(path))
            tensors = getattr(onnx.external_data_helper, "_get_all_tensors",
                              lambda m: list(m.graph.initializer))(proto)
            for index, tensor in enumerate(tensors):
                if onnx.external_data_helper.uses_external_data(tensor):
                    wrong = _external_data_error(tensor, base_dir)
                    if wrong:
                        label = (f"the tensor '{tensor.name}'" if tensor.name
                                 else f"tensor #{index}")
                        raise HPVMError(f"the ONNX model '{path}': {label} (dims "
                                        f"{list(tensor.dims)}) cannot be read: {wrong}")
            try:
                onnx.external_data_helper.load_external_data_for_model(proto, base_dir)
            except Exception as error:
                raise HPVMError(f"cannot read the external data of the ONNX model '{path}': "
                                f"{error}") from None
        return proto
    raise HPVMError(f"expected an ONNX model (a path, bytes or an onnx.ModelProto), found "
                    f"{type(model).__name__}")


def load(model, shapes: Optional[Mapping[str, Sequence[int]]] = None,
         batch_size: Optional[int] = None, name: Optional[str] = None,
         base_dir: Union[None, str, os.PathLike] = None,
         dims: Optional[Mapping[str, int]] = None,
         input_shapes: Optional[Mapping[str, Sequence[int]]] = None) -> TensorGraph:
    """An ONNX model (path, bytes or ModelProto) as a TensorGraph.

    A tensor graph has static shapes: the dynamic dimensions of the inputs get their sizes
    here (hpvm.onnx.dims). `shapes={input: shape}` gives inputs' shapes (`input_shapes=`
    is its older name), `dims={name: size}` binds a named dimension (`dim_param`) of every
    input that has it, and a named dimension of an input given by `shapes` binds it for
    the others; sizes that disagree are an error naming the dimension. The first dimension
    that nothing binds takes `batch_size` (default 1), any other is an error naming it
    (compile_dynamic compiles at the shapes of each call instead). Initializers (also
    those listed as graph inputs) are constants. Outputs keep the model's order and
    names. Tensors with external data are read from `base_dir`, by default the folder
    of a model given by path; a model given as bytes or a ModelProto has no folder, so
    its external data needs `base_dir`. Raises HPVMError for an unsupported operator,
    attribute or type, naming the node, and for a model onnxruntime refuses too (a value
    or node name defined twice, an initializer that does not match the graph input of
    its name, data that does not match its dims)."""
    if shapes is not None and input_shapes is not None:
        raise HPVMError("shapes= and input_shapes= are one argument (input_shapes is its "
                        "older name); expected one of them")
    keyword = "input_shapes" if input_shapes is not None else "shapes"
    shapes = input_shapes if input_shapes is not None else shapes
    if base_dir is not None:
        if not isinstance(base_dir, (str, os.PathLike)) or not os.path.isdir(base_dir):
            raise HPVMError(f"base_dir: expected the folder of the model's external data, "
                            f"found {base_dir!r}")
        base_dir = os.fspath(base_dir)
    elif isinstance(model, (str, os.PathLike)):
        base_dir = os.path.dirname(os.path.abspath(os.fspath(model)))
    by_path = isinstance(model, (str, os.PathLike))
    proto = load_model(model, load_external_data=False) if by_path else load_model(model)
    try:
        graph = Importer(proto, shapes, batch_size, name, base_dir, dims, keyword).build()
        if by_path:
            graph.source = os.path.abspath(os.fspath(model))
        return graph
    except HPVMError:
        raise
    except Exception as error:  # a malformed model this importer did not foresee
        raise HPVMError(f"cannot import the ONNX model ({type(error).__name__}: "
                        f"{error})") from error


def _input_shapes(input_shapes, keyword: str = "input_shapes") -> Dict[str, Shape]:
    """shapes= (input_shapes=) as {name: tuple of ints}; HPVMError for anything else."""
    if input_shapes is None:
        return {}
    if not isinstance(input_shapes, Mapping):
        raise HPVMError(f"{keyword}: expected a dict of input name -> shape, found "
                        f"{type(input_shapes).__name__}")
    shapes = {}
    for key, shape in input_shapes.items():
        try:
            dims = tuple(shape)
            if not all(isinstance(d, (int, np.integer)) and not isinstance(d, bool)
                       for d in dims):
                raise TypeError
        except TypeError:
            raise HPVMError(f"{keyword}[{key!r}]: expected a sequence of positive "
                            f"integers, found {shape!r}") from None
        if any(d <= 0 for d in dims):
            raise HPVMError(f"{keyword}[{key!r}] is {list(dims)}; expected positive sizes")
        shapes[str(key)] = tuple(int(d) for d in dims)
    return shapes


def _check_initializer_input(init, value_info) -> None:
    """An initializer listed as a graph input: onnxruntime refuses it when its element type
    or shape differs from the input's; so does the importer (which takes the initializer
    as a constant)."""
    type_proto = value_info.type
    if type_proto.WhichOneof("value") != "tensor_type":
        raise HPVMError(f"the initializer '{init.name}' is also a graph input, which is not a "
                        "tensor; expected a tensor input of the initializer's type and shape")
    tensor_type = type_proto.tensor_type
    if tensor_type.elem_type and tensor_type.elem_type != init.data_type:
        raise HPVMError(f"the initializer '{init.name}' holds {_element_name(init.data_type)} "
                        f"but the graph input of its name is a tensor of "
                        f"{_element_name(tensor_type.elem_type)}; expected the same type "
                        "(as onnxruntime requires)")
    if not tensor_type.HasField("shape"):
        return
    dims = list(tensor_type.shape.dim)
    declared = ["?" if not d.HasField("dim_value") else int(d.dim_value) for d in dims]
    if len(dims) != len(init.dims) or any(
            d.HasField("dim_value") and int(d.dim_value) != size
            for d, size in zip(dims, init.dims)):
        raise HPVMError(f"the initializer '{init.name}' has the shape {list(init.dims)} but "
                        f"the graph input of its name has the shape {declared}; expected the "
                        "same shape (as onnxruntime requires)")
