"""ONNX models as tensor graphs.

The importer walks the nodes of an ONNX graph in order and resolves every value
name to either a NumPy array (initializers, `Constant` nodes and everything
folded from them) or a `Tensor` of the graph being built. Operations whose
inputs are all constant and that only move data (Reshape, Flatten, Transpose,
Identity, ...) or do elementwise arithmetic are folded in NumPy, so weights
stay constants embedded in the leaf that uses them.

Only float tensors (float16, float32, float64) of static shapes flow through
the graph; integer tensors are read only where an operation takes them as
constants (the shape of Reshape). Anything the importer cannot express exactly
raises `HPVMError` naming the node and its op type, and so does a model onnxruntime
refuses (a value or a node name defined twice, an initializer unlike the graph input of
its name, tensor data that does not fill its dims, inputs of two element types). External
data is read from the model's folder (`base_dir`), never from the current directory.
"""

from __future__ import annotations

import math
import os
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from ..errors import HPVMError
from ..ir import float_literal
from ..tensor import Tensor, TensorGraph
from .. import tensor as T

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
_FLOAT_DTYPES = (np.float16, np.float32, np.float64)


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
                 base_dir: Optional[str] = None):
        self.model = model
        self.graph_proto = model.graph
        #: The folder external data files are read from; None: the model came without one
        #: (bytes or a ModelProto), and a tensor with external data is an error.
        self.base_dir = base_dir
        self.input_shapes = _input_shapes(input_shapes)
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
        # Indices of the BatchNormalization nodes folded into the Conv before them.
        self._folded: set = set()

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
            raise HPVMError(f"input_shapes names {sorted(unknown)}, which are not inputs of "
                            f"the model (inputs: {inputs})")
        for value_info in g.input:
            if value_info.name in self.values:
                continue  # an initializer: a constant
            self._add_input(value_info)
        nodes = [_Node(proto, index) for index, proto in enumerate(g.node)]
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
                    value = self._constant_tensor(value, value_info.name, "the graph output")
                except _NodeError as error:
                    raise HPVMError(str(error)) from None
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
        element = _FLOAT_ELEMENTS.get(tensor_type.elem_type)
        if element is None:
            self.values[name] = _Unusable(
                f"the graph input '{name}' is a tensor of {_element_name(tensor_type.elem_type)}; "
                "only float16, float32 and float64 tensors are supported as graph inputs")
            if name in self.input_shapes:
                raise HPVMError(f"input_shapes gives a shape for '{name}', a tensor of "
                                f"{_element_name(tensor_type.elem_type)}; only float inputs "
                                "are supported")
            return
        shape = self._input_shape(name, tensor_type)
        if 0 in shape:
            self.values[name] = _Unusable(f"the graph input '{name}' has the shape {list(shape)} "
                                          "with a zero-size dimension; expected sizes >= 1")
            return
        self.values[name] = self.graph.input(name, shape, element)

    def _input_shape(self, name: str, tensor_type) -> Shape:
        given = self.input_shapes.get(name)
        if not tensor_type.HasField("shape"):
            if given is None:
                raise HPVMError(f"the ONNX graph input '{name}' has no shape; give it with "
                                f"input_shapes={{'{name}': (...)}} (--input-shape {name}=AxBx...)")
            return given
        dims = list(tensor_type.shape.dim)
        if given is not None:
            if len(given) != len(dims):
                raise HPVMError(f"input_shapes['{name}'] is {list(given)} of rank {len(given)}; "
                                f"the model's input has rank {len(dims)}")
            for axis, (dim, size) in enumerate(zip(dims, given)):
                if dim.HasField("dim_value") and dim.dim_value != size:
                    raise HPVMError(f"input_shapes['{name}'] is {list(given)}, but dimension "
                                    f"{axis} of the model's input is fixed to {dim.dim_value}")
                if size <= 0:
                    raise HPVMError(f"input_shapes['{name}'] is {list(given)}; expected "
                                    "positive sizes")
            return given
        shape = []
        for axis, dim in enumerate(dims):
            if dim.HasField("dim_value"):
                if axis == 0 and self.batch_given and dim.dim_value != self.batch_size:
                    # Silently returning the model's batch would hand back fewer results.
                    fixed = "x".join(str(d.dim_value) if d.HasField("dim_value") else "?"
                                     for d in dims)
                    raise HPVMError(
                        f"batch_size={self.batch_size}, but the ONNX graph input '{name}' has "
                        f"the static shape {fixed}: its batch is fixed to {dim.dim_value}. "
                        f"Export the model with a dynamic batch dimension (torch.onnx.export"
                        f"(..., dynamic_axes={{'{name}': {{0: 'batch'}}}})) or with batch "
                        f"{self.batch_size}")
                shape.append(int(dim.dim_value))
            elif axis == 0:
                shape.append(self.batch_size)
            else:
                symbol = f" ('{dim.dim_param}')" if dim.HasField("dim_param") else ""
                raise HPVMError(
                    f"the ONNX graph input '{name}' has a dynamic dimension {axis}{symbol}; "
                    f"only the first one takes batch_size. Give the shape with "
                    f"input_shapes={{'{name}': (...)}} (--input-shape {name}=AxBx...)")
        return tuple(shape)

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
        value = self.value(node, i)
        if isinstance(value, np.ndarray):
            return self._constant_tensor(value, node.input(i), f"input {i}")
        return value

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

    def float_constant(self, node: _Node, i: int, what: str) -> np.ndarray:
        value = self.value(node, i)
        if not isinstance(value, np.ndarray):
            _fail(f"{what} (input {i}, '{node.input(i)}') must be a constant (an initializer "
                  "or a Constant node); found a value computed by the graph")
        return value

    def set_output(self, node: _Node, value: Value, i: int = 0) -> None:
        if i < len(node.outputs) and node.outputs[i]:
            self.values[node.outputs[i]] = value

    def check_float(self, node: _Node, value: Value, i: int) -> Value:
        if isinstance(value, np.ndarray) and value.dtype not in _FLOAT_DTYPES:
            _fail(f"input {i} '{node.input(i)}' is a tensor of {value.dtype}; only float16, "
                  "float32 and float64 tensors flow through operations")
        return value

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
        if node.index in self._folded:  # applied by the Conv before it (_foldable_bn)
            self.set_output(node, self.value(node, 0))
            return
        handler = _HANDLERS.get(node.op_type)
        if handler is None:
            _fail(f"the operator {node.op_type} is not supported; supported operators: "
                  + ", ".join(sorted(_HANDLERS)))
        handler(self, node)


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
    im._folded.add(bn.index)
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
    if int(node.attr("ceil_mode", 0)) != 0:
        _fail(f"ceil_mode {node.attr('ceil_mode')} is not supported; expected 0")
    strides, begin, end = _window_attributes(node, x, kernel)
    rank = x.rank
    if rank == 3:
        kernel, strides, begin, end = [1] + kernel, [1] + strides, [0] + begin, [0] + end
    x2 = _to_2d(x)
    if any(b >= k or e >= k for b, e, k in zip(begin, end, kernel)):
        _fail(f"pads {node.ints('pads')} are not smaller than the kernel {node.ints('kernel_shape')}")
    count_include_pad = int(node.attr("count_include_pad", 0))
    name = node.leaf_name if rank == 4 else None
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


_NUMPY_BINARY = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": np.divide}
_ARITH = {"Add": "arith.addf", "Sub": "arith.subf", "Mul": "arith.mulf", "Div": "arith.divf"}


def _binary(im: Importer, node: _Node) -> None:
    _check_unknown_attributes(node, ["broadcast", "axis", "consumed_inputs"])
    if node.attr("axis") is not None:
        _fail("the legacy axis attribute (opset < 7) is not supported; expected NumPy "
              "(trailing) broadcasting")
    a = im.check_float(node, im.value(node, 0), 0)
    b = im.check_float(node, im.value(node, 1), 1)
    _same_element(node, [a, b])
    op = node.op_type
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


def _unary(builder: Callable) -> Callable[[Importer, _Node], None]:
    def handler(im: Importer, node: _Node) -> None:
        _check_unknown_attributes(node, ["consumed_inputs"])
        im.set_output(node, builder(im.tensor(node, 0), name=node.leaf_name))
    return handler


def _clip(im: Importer, node: _Node) -> None:
    _check_unknown_attributes(node, ["min", "max"])
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
    if isinstance(x, np.ndarray):
        im.set_output(node, x.reshape(resolved))
    else:
        im.set_output(node, T.reshape(x, resolved, name=node.leaf_name))


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


_HANDLERS: Dict[str, Callable[[Importer, _Node], None]] = {
    "Add": _binary, "Sub": _binary, "Mul": _binary, "Div": _binary,
    "AveragePool": _average_pool,
    "BatchNormalization": _batch_norm,
    "Clip": _clip,
    "Constant": _constant,
    "Conv": _conv,
    "Dropout": _dropout,
    "Flatten": _flatten,
    "Gemm": _gemm,
    "GlobalAveragePool": _global_pool("mean"),
    "GlobalMaxPool": _global_pool("max"),
    "Identity": _identity,
    "MatMul": _matmul,
    "MaxPool": _max_pool,
    "Relu": _unary(T.relu),
    "Reshape": _reshape,
    "Sigmoid": _unary(T.sigmoid),
    "Softmax": _softmax,
    "Tanh": _unary(T.tanh),
    "Transpose": _transpose,
}

#: The ONNX operators `load` converts.
SUPPORTED_OPS = tuple(sorted(_HANDLERS))


def load_model(model, load_external_data: bool = True):
    """A ModelProto from a path, serialized bytes or a ModelProto. The external data of a
    model given by path is read from the model's folder (unless `load_external_data` is
    false: then the tensors still name their files)."""
    _require_onnx()
    if isinstance(model, onnx.ModelProto):
        return model
    if isinstance(model, (bytes, bytearray, memoryview)):
        try:
            return onnx.load_from_string(bytes(model))
        except Exception as error:  # DecodeError and friends
            raise HPVMError(f"cannot parse the ONNX model: {error}") from None
    if isinstance(model, (str, os.PathLike)):
        path = os.fspath(model)
        if not os.path.exists(path):
            raise HPVMError(f"the ONNX model '{path}' does not exist")
        try:
            return onnx.load(path, load_external_data=load_external_data)
        except Exception as error:
            raise HPVMError(f"cannot read the ONNX model '{path}': {error}") from None
    raise HPVMError(f"expected an ONNX model (a path, bytes or an onnx.ModelProto), found "
                    f"{type(model).__name__}")


def load(model, input_shapes: Optional[Mapping[str, Sequence[int]]] = None,
         batch_size: Optional[int] = None, name: Optional[str] = None,
         base_dir: Union[None, str, os.PathLike] = None) -> TensorGraph:
    """An ONNX model (path, bytes or ModelProto) as a TensorGraph.

    Dynamic dimensions take `batch_size` (default 1) for the first dimension of an
    input, or the shapes given as `input_shapes={name: shape}`. Initializers (also
    those listed as graph inputs) are constants. Outputs keep the model's order and
    names. Tensors with external data are read from `base_dir`, by default the folder
    of a model given by path; a model given as bytes or a ModelProto has no folder, so
    its external data needs `base_dir`. Raises HPVMError for an unsupported operator,
    attribute or type, naming the node, and for a model onnxruntime refuses too (a value
    or node name defined twice, an initializer that does not match the graph input of
    its name, data that does not match its dims)."""
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
        return Importer(proto, input_shapes, batch_size, name, base_dir).build()
    except HPVMError:
        raise
    except Exception as error:  # a malformed model this importer did not foresee
        raise HPVMError(f"cannot import the ONNX model ({type(error).__name__}: "
                        f"{error})") from error


def _input_shapes(input_shapes) -> Dict[str, Shape]:
    """input_shapes= as {name: tuple of ints}; HPVMError for anything else."""
    if input_shapes is None:
        return {}
    if not isinstance(input_shapes, Mapping):
        raise HPVMError(f"input_shapes: expected a dict of input name -> shape, found "
                        f"{type(input_shapes).__name__}")
    shapes = {}
    for key, shape in input_shapes.items():
        try:
            dims = tuple(shape)
            if not all(isinstance(d, (int, np.integer)) and not isinstance(d, bool)
                       for d in dims):
                raise TypeError
        except TypeError:
            raise HPVMError(f"input_shapes[{key!r}]: expected a sequence of positive "
                            f"integers, found {shape!r}") from None
        if any(d <= 0 for d in dims):
            raise HPVMError(f"input_shapes[{key!r}] is {list(dims)}; expected positive sizes")
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
