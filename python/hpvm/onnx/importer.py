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

This module is the importer's core: the graph walk, the value table, graph inputs and
initializers, and `load`. The operators are in the `ops` package, one module per family
(arithmetic, logic, elementwise functions, erf and Gelu, matmul, convolution, pooling,
normalization, reductions, shape, movement, gather, resize, constants), each listing its
op types in its `HANDLERS`; `ops.HANDLERS` merges them. `nodes` holds what both sides
share (the decoded node, `_fail`, element types), `dims` the sizes of dynamic input
dimensions, and `model_files` the reading of model files and their external data.
"""

from __future__ import annotations

import os
from typing import Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from ..errors import HPVMError
from ..tensor import Tensor, TensorGraph
from .dims import DimBinder, positive_sizes
from .model_files import _external_data_error, load_model
from .nodes import (Shape, Value, _DTYPE_ELEMENTS, _FLOAT_DTYPES, _FLOAT_NAMES, _INPUT_ELEMENTS,
                    _INPUT_TYPES, _Node, _NodeError, _Unusable, _element_name, _element_of, _fail,
                    numpy_helper, onnx)
from .ops import HANDLERS, SUPPORTED_OPS  # SUPPORTED_OPS: also hpvm.onnx.importer.SUPPORTED_OPS
from .ops.bounds import _note_bounds


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
        if node.index in self._folded:  # applied by the node before it (Conv, MatMul)
            self.set_output(node, self.value(node, self._folded[node.index]))
            return
        handler = HANDLERS.get(node.op_type)
        if handler is None:
            _fail(f"the operator {node.op_type} is not supported; supported operators: "
                  + ", ".join(sorted(HANDLERS)))
        handler(self, node)


def _check_operators(nodes: Sequence[_Node]) -> None:
    """Every operator of the default domain that the importer lacks, reported at once
    before anything is converted: each op type with its number of nodes and its first
    node (the message of one unsupported node is the per-node one)."""
    missing: Dict[str, List[_Node]] = {}
    for node in nodes:
        if node.proto.domain in ("", "ai.onnx") and node.op_type not in HANDLERS:
            missing.setdefault(node.op_type, []).append(node)
    if not missing:
        return
    supported = "supported operators: " + ", ".join(sorted(HANDLERS))
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
