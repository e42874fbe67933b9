"""Tensor graphs: `hpvm.tensor.*` operations as a dataflow graph.

    import numpy as np, hpvm
    from hpvm import tensor as T

    g = hpvm.TensorGraph("layer")
    x = g.input("x", (1, 1, 28, 28))
    w = g.constant(np.random.rand(8, 1, 3, 3).astype(np.float32))
    y = T.max_pool(T.relu(T.conv2d(x, w, padding=(1, 1))), window=(2, 2))
    g.output(y)
    print(g.mlir())          # leaves, the root internal node, the host function
    run = hpvm.compile(g)    # a shared library through hpvm-cc
    (out,) = run(x=np.ones((1, 1, 28, 28), np.float32))

Each operation becomes one leaf node of the graph (the unfused form a frontend
emits; `hpvm-fuse-tensor-nodes` joins chains of them); tensors flowing between
operations become edges of the root internal node, graph inputs become its
arguments and constants live in the leaf that uses them. The host function
`@<name>` takes the inputs and the outputs as memrefs.

Besides the dialect's ops, `reshape`, `transpose`, `broadcast_to`, `pad`,
`global_pool` and the elementwise helpers (`multiply`, `subtract`, `divide`, `maximum`, `minimum`,
`clip`) build leaves from upstream ops (`tensor`, `linalg`) or `hpvm.tensor.map`; so do
`concat`, `strided_slice`, `take`, `take_axes`, `lerp_axis`, `cast`, `reduce_axes`,
`layer_norm` and `pad_border` (one leaf of `linalg.generic` ops each). `elementwise` and
`convert` take tensors of any element type (floats, i1, i8 ... i64): masks and token ids.

This module builds and checks the graph; the MLIR text is written by `hpvm.tensor_mlir`.
"""

from __future__ import annotations

import math
import os
import warnings
from typing import Dict, Iterable, List, Optional, Sequence, Tuple, Union

import numpy as np

from .errors import HPVMError
from .files import check_output, is_stream, same_file, write_text
from .ir import (FLOAT_TYPES, TensorType, check_tensor_size, is_parameter_archive,
                 numpy_type_of, symbol_name, unique, write_parameter_archive)
from . import tensor_mlir as _mlir
from . import toolchain


class Tensor:
    """A value of a tensor graph: an input, a constant or an operation's result."""

    def __init__(self, graph: "TensorGraph", type_: TensorType, kind: str, name: str,
                 op: Optional["_Op"] = None, array: Optional[np.ndarray] = None):
        self.graph = graph
        self.type = type_
        self.kind = kind  # "input", "constant" or "op"
        self.name = name
        self.op = op
        self.array = array

    @property
    def shape(self) -> Tuple[int, ...]:
        return self.type.shape

    @property
    def element(self) -> str:
        return self.type.element

    @property
    def rank(self) -> int:
        return len(self.type.shape)

    def __repr__(self) -> str:
        return f"<hpvm Tensor {self.name}: {self.type}>"

    # Operators build the elementwise helpers.
    def __add__(self, other): return add(self, other)
    def __sub__(self, other): return subtract(self, other)
    def __mul__(self, other): return multiply(self, other)
    def __truediv__(self, other): return divide(self, other)
    def __matmul__(self, other): return matmul(self, other)


class _Op:
    def __init__(self, kind: str, name: str, operands: List[Tensor], result: TensorType,
                 emit: _mlir.Emitter):
        self.kind = kind
        self.name = name
        self.operands = operands
        self.result = result
        self.emit = emit
        #: The budget of this op's output (hpvm.error on its leaf), or None.
        self.error: Optional[Tuple[float, float]] = None


class TensorGraph:
    """A graph of tensor operations with named inputs and ordered outputs."""

    def __init__(self, name: str = "graph", error: Optional[Tuple[float, float]] = None):
        self.name = symbol_name(name)
        #: The end-to-end error budget (relative L1, relative L2 of the outputs against the
        #: exact ones, as ApproxHPVM's), or None: `hpvm.error` on the root node, which the
        #: accuracy tuner checks every configuration against.
        self.error: Optional[Tuple[float, float]] = None
        self._budgeted: List[Tensor] = []
        if error is not None:
            self.set_error_budget(*error)
        self.inputs: List[Tensor] = []
        self.outputs: List[Tensor] = []
        self.output_names: List[str] = []
        self._symbols = {self.name, f"{self.name}_root"}
        self._next_suffix: Dict[str, int] = {}  # unique(): where each base's search resumes
        self._input_names: set = set()
        self._values: set = set()
        self._constants = 0
        #: The file the graph was read from (hpvm.onnx.load sets it), or None: `save`
        #: refuses to write over it.
        self.source: Optional[str] = None
        #: The range checks of indices that are graph inputs (`gather`): (the op's result,
        #: the input's name, n, what, where): a compiled call refuses an argument with an
        #: element outside [-n, n) before it runs, when the op is reachable.
        self.index_checks: List[Tuple[Tensor, str, int, str, str]] = []

    def set_error_budget(self, l1: float, l2: float, node: Optional[Tensor] = None) -> None:
        """The outputs may differ from the exact ones by at most `l1` in relative L1 norm
        (sum |approx - exact| / sum |exact|) and `l2` in relative L2 norm; with `node` (the
        result of an op of this graph), that op's output may (hpvm.error on its leaf)."""
        budget = []
        for norm, value in (("l1", l1), ("l2", l2)):
            value = float(value)
            if not (math.isfinite(value) and value >= 0.0):
                raise HPVMError(f"graph '{self.name}': expected a finite {norm} budget >= 0, "
                                f"found {value!r}")
            budget.append(value)
        if node is None:
            self.error = (budget[0], budget[1])
            return
        self._own(node, "set_error_budget")
        if node.op is None:
            raise HPVMError(f"set_error_budget: '{node.name}' is a graph {node.kind}, not the "
                            f"result of an op (a node budget goes on an op's output)")
        node.op.error = (budget[0], budget[1])
        if all(t is not node for t in self._budgeted):
            self._budgeted.append(node)

    def node_budgets(self) -> Dict[str, Tuple[Tensor, Tuple[float, float]]]:
        """The ops with a budget of their own: leaf name -> (its result, (l1, l2))."""
        return {t.op.name: (t, t.op.error) for t in self._budgeted}

    # -- values ------------------------------------------------------------
    def input(self, name: str, shape: Sequence[int], element: str = "f32") -> Tensor:
        """A graph input of static `shape` (NCHW images, row-major matrices); HPVMError
        when it would hold more than `hpvm.ir.MAX_TENSOR_BYTES` bytes."""
        type_ = TensorType(tuple(shape), element)
        check_tensor_size(type_, f"graph '{self.name}': the input '{name}'")
        if str(name) in self._input_names:
            raise HPVMError(f"graph '{self.name}' already has an input named '{name}'")
        value = Tensor(self, type_, "input", str(name))
        self.inputs.append(value)
        self._input_names.add(str(name))
        return value

    def constant(self, array, name: Optional[str] = None, element: Optional[str] = None) -> Tensor:
        """A constant tensor (weights, biases); it is written into the leaf that uses it."""
        data = np.asarray(array)
        if element is None:
            element = "f64" if data.dtype == np.float64 else "f16" if data.dtype == np.float16 else "f32"
        type_ = TensorType(data.shape, element)
        data = np.asarray(data, dtype=type_.dtype, order="C")  # ascontiguousarray makes rank 1
        self._constants += 1
        return Tensor(self, type_, "constant", name or f"constant{self._constants}", array=data)

    def output(self, *values: Tensor, names: Optional[Sequence[str]] = None) -> None:
        """Appends graph outputs (returned by a compiled graph in this order)."""
        for i, value in enumerate(values):
            self._own(value, "output")
            self.outputs.append(value)
            given = names[i] if names and i < len(names) else None
            self.output_names.append(given or value.name)

    def _own(self, value, what: str) -> Tensor:
        if not isinstance(value, Tensor):
            raise HPVMError(f"{what}: expected a Tensor of graph '{self.name}', found {value!r}")
        if value.graph is not self:
            raise HPVMError(f"{what}: the tensor '{value.name}' belongs to graph "
                            f"'{value.graph.name}', not '{self.name}'")
        return value

    def _apply(self, kind: str, operands: Sequence[Tensor], result: TensorType,
               emit: _mlir.Emitter, name: Optional[str] = None) -> Tensor:
        for operand in operands:
            self._own(operand, kind)
        check_tensor_size(result, f"graph '{self.name}': the result of {kind}"
                          + (f" '{name}'" if name else ""))
        leaf = unique(name or kind, self._symbols, self._next_suffix)
        if name is not None and symbol_name(name) in (self.name, f"{self.name}_root"):
            # The graph's host function and root node own these symbols: the leaf is renamed,
            # and knob files must name it as renamed.
            warnings.warn(f"graph '{self.name}': the op name '{name}' is the graph's own "
                          f"symbol; its leaf is named '{leaf}' (knob files must use that)",
                          stacklevel=3)
        op = _Op(kind, leaf, list(operands), result, emit)
        return Tensor(self, result, "op", op.name, op=op)

    # -- printing ------------------------------------------------------------
    def _reachable_ops(self) -> List[_Op]:
        """The ops the outputs depend on, in a topological order."""
        order: List[_Op] = []
        state: Dict[int, int] = {}
        for root in self.outputs:
            if root.op is None:
                continue
            stack = [(root.op, False)]
            while stack:
                op, done = stack.pop()
                if done:
                    if state.get(id(op)) != 2:
                        state[id(op)] = 2
                        order.append(op)
                    continue
                if state.get(id(op)):
                    continue
                state[id(op)] = 1
                stack.append((op, True))
                for operand in reversed(op.operands):
                    if operand.op is not None and not state.get(id(operand.op)):
                        stack.append((operand.op, False))
        return order

    def mlir(self, parameters: Optional[str] = None) -> str:
        """The graph in the hpvm dialect: one leaf per op, the root internal
        node `@<name>_root`, and the host function `@<name>`. Constants are written in
        the text; with `parameters` (the path of a parameter archive, relative to the
        MLIR file's folder), those of at least 4 KiB are `dense_resource<key>` instead,
        the module naming the archive (`hpvm.parameters`) that `self.parameters()`
        fills (`save` writes both)."""
        text, _ = self._module(parameters)
        return text

    def parameters(self) -> Dict[str, np.ndarray]:
        """The constants that `mlir(parameters=...)` leaves out of the text: key ->
        array, as a parameter archive holds them (`hpvm.ir.write_parameter_archive`)."""
        return self._module("parameters")[1]

    def save(self, path, inline_weights: bool = False) -> Tuple[str, Optional[str]]:
        """Writes the graph as MLIR at `path` and, when it has constants of 4 KiB or
        more, their parameter archive beside it (`<stem>.params`, which the MLIR names);
        `hpvm-cc path` compiles it. The text is verified first (HPVMError, and nothing
        written, when it is invalid). Returns both paths (the archive's or None).

        With `inline_weights`, or when `path` is a stream (/dev/stdout, a pipe: nothing
        can go beside it), every constant is written into the text and no archive is.
        Nothing but the graph's own files is overwritten: HPVMError for a `path` ending
        in `.params` (its own archive's name), for a parameter archive at `path`, for an
        archive path holding a file that is not a parameter archive, and for the file
        the graph was read from (`source`) at either path."""
        path = check_output(path, "save: the MLIR file")
        stream = is_stream(path)
        stem = os.path.splitext(os.path.basename(path))[0]
        if not stream and path.endswith(".params"):
            raise HPVMError(f"save: the MLIR file '{path}' ends in '.params', the name of "
                            "its own parameter archive; expected another name, such as "
                            f"'{stem}.mlir'")
        self._refuse_source(path)
        if not stream and is_parameter_archive(path):
            raise HPVMError(f"save: '{path}' is a parameter archive; MLIR text written there "
                            "would destroy it; expected the path of an .mlir file")
        if stream or inline_weights:
            text = self.verify()
            write_text(path, text, "the MLIR file")
            return path, None
        archive = stem + ".params"
        text, entries = self._module(archive)
        toolchain.verify(text, os.path.basename(path))
        archive_path = None
        if entries:
            archive_path = os.path.join(os.path.dirname(path), archive)
            self._refuse_source(archive_path)
            if same_file(archive_path, path):
                raise HPVMError(f"save: the parameter archive '{archive_path}' is the MLIR "
                                f"file '{path}' (a link); expected two files")
            if os.path.lexists(archive_path) and not is_parameter_archive(archive_path):
                what = ("a folder" if os.path.isdir(archive_path) else
                        "not a regular file" if not os.path.isfile(archive_path) else
                        "a file that is not a parameter archive")
                raise HPVMError(f"save: the parameter archive would replace '{archive_path}', "
                                f"{what}; expected no file there, or an archive an earlier "
                                "save wrote (move it, or save under another name)")
            write_parameter_archive(archive_path, entries)
        write_text(path, text, "the MLIR file")
        return path, archive_path

    def _refuse_source(self, path: str) -> None:
        """HPVMError when `path` is the file the graph was read from."""
        if self.source is not None and same_file(path, self.source):
            raise HPVMError(f"save: the input file '{self.source}' is the same as the output "
                            f"file '{path}'; expected another path (the model would be lost)")

    def _module(self, parameters: Optional[str],
                device: bool = False) -> Tuple[str, Dict[str, np.ndarray]]:
        """The text, and the constants it names in the archive `parameters`. With
        `device`, every leaf is hinted for a device (`#hpvm.target<gpu>`): compiled
        for one, each becomes a kernel that keeps its CPU version."""
        if not self.outputs:
            raise HPVMError(f"graph '{self.name}' has no outputs; call output(...) first")
        # Outputs that are inputs or constants (or repeated) are copied by a leaf,
        # so that each output port of the root has its own node port.
        outputs: List[Tensor] = []
        seen = set()
        for value in self.outputs:
            if value.op is None or id(value) in seen:
                value = _copy(value)
            seen.add(id(value))
            outputs.append(value)
        saved = self.outputs
        self.outputs = outputs
        try:
            ops = self._reachable_ops()
        finally:
            self.outputs = saved
        return _mlir.module_text(self, ops, outputs, parameters, device)

    def verify(self) -> str:
        """Verifies the graph with the dialect's verifier; returns its text."""
        text = self.mlir()
        toolchain.verify(text, f"{self.name}.mlir")
        return text

    def signature(self):
        """(inputs, outputs) of the host function: each a (name, TensorType)."""
        return ([(t.name, t.type) for t in self.inputs],
                [(name, t.type) for name, t in zip(self.output_names, self.outputs)])


# --------------------------------------------------------------------------
# Operation builders
# --------------------------------------------------------------------------

def _graph_of(*values) -> "TensorGraph":
    for value in values:
        if isinstance(value, Tensor):
            return value.graph
    raise HPVMError("expected at least one Tensor operand; found "
                    + ", ".join(repr(v) for v in values))


def _tensor(value, graph: TensorGraph, element: str) -> Tensor:
    """A Tensor operand: Tensors as they are, numbers and arrays as constants."""
    if isinstance(value, Tensor):
        return value
    if isinstance(value, (int, float, np.ndarray, np.generic, list, tuple)):
        return graph.constant(np.asarray(value, dtype=TensorType((), element).dtype),
                              element=element)
    raise HPVMError(f"expected a Tensor, a number or an array, found {value!r}")


def _pair(value, what: str) -> Tuple[int, int]:
    if isinstance(value, (int, np.integer)):
        return (int(value), int(value))
    try:
        a, b = value
        return (int(a), int(b))
    except (TypeError, ValueError):
        raise HPVMError(f"{what}: expected an integer or a pair of integers, found {value!r}") from None


def _broadcast_shape(a: Sequence[int], b: Sequence[int], what: str) -> Tuple[int, ...]:
    """NumPy broadcasting of two shapes."""
    rank = max(len(a), len(b))
    a = (1,) * (rank - len(a)) + tuple(a)
    b = (1,) * (rank - len(b)) + tuple(b)
    shape = []
    for x, y in zip(a, b):
        if x != y and x != 1 and y != 1:
            raise HPVMError(f"{what}: shapes {tuple(a)} and {tuple(b)} do not broadcast "
                            "(sizes must be equal or 1)")
        shape.append(max(x, y) if x and y else 0)
    return tuple(shape)


def add(a, b, name: Optional[str] = None) -> Tensor:
    """`hpvm.tensor.add`: elementwise sum, size-1 dimensions broadcast (the bias add);
    an operand of lower rank gets leading size-1 dimensions first."""
    graph = _graph_of(a, b)
    element = (a if isinstance(a, Tensor) else b).element
    a, b = _tensor(a, graph, element), _tensor(b, graph, element)
    shape = _broadcast_shape(a.shape, b.shape, "add")
    a, b = _lift_rank(a, len(shape)), _lift_rank(b, len(shape))
    result = TensorType(shape, element)

    def emit(body, ops):
        return _mlir.op_add(body, ops, a, b, result)

    return graph._apply("add", [a, b], result, emit, name)


def _lift_rank(value: Tensor, rank: int) -> Tensor:
    if value.rank == rank:
        return value
    shape = (1,) * (rank - value.rank) + value.shape
    if value.kind == "constant":
        return value.graph.constant(value.array.reshape(shape), element=value.element)
    return reshape(value, shape)


def matmul(a: Tensor, b: Tensor, name: Optional[str] = None) -> Tensor:
    """`hpvm.tensor.mul`: `[..., M, K] x [..., K, N] -> [..., M, N]`."""
    graph = _graph_of(a, b)
    a, b = graph._own(a, "matmul"), graph._own(b, "matmul")
    if a.rank < 2 or b.rank < 2:
        raise HPVMError(f"matmul: expected operands of rank >= 2, found {a.type} and {b.type}")
    result = TensorType(a.shape[:-1] + (b.shape[-1],), a.element)

    def emit(body, ops):
        return _mlir.op_matmul(body, ops, a, b, result)

    return graph._apply("mul", [a, b], result, emit, name)


mul = matmul


def _window_outputs(x: Tensor, window, strides, padding, what: str,
                    padding_end=None) -> Tuple[int, int]:
    """Output height and width of windows sliding over an NCHW image padded by `padding`
    before it and `padding_end` (default: `padding`) after it (the verifier reports sizes
    below 1; they are clamped to 0 here only to print a type)."""
    if strides[0] <= 0 or strides[1] <= 0:
        raise HPVMError(f"{what}: expected positive strides, found {strides}")
    end = padding if padding_end is None else padding_end
    return tuple(max((x.shape[2 + d] + padding[d] + end[d] - window[d]) // strides[d] + 1, 0)
                 for d in range(2))


def conv2d(x: Tensor, w: Tensor, padding=(0, 0), strides=(1, 1), groups: int = 1,
           name: Optional[str] = None) -> Tensor:
    """`hpvm.tensor.conv2d`: NCHW input, FCHW filter (C / groups channels each)."""
    graph = _graph_of(x, w)
    x, w = graph._own(x, "conv2d"), graph._own(w, "conv2d")
    padding, strides = _pair(padding, "conv2d padding"), _pair(strides, "conv2d strides")
    if x.rank != 4 or w.rank != 4:
        raise HPVMError(f"conv2d: expected a rank-4 input and filter, found {x.type} and {w.type}")
    result = TensorType((x.shape[0], w.shape[0]) +
                        _window_outputs(x, w.shape[2:], strides, padding, "conv2d"), x.element)

    def emit(body, ops):
        return _mlir.op_conv2d(body, ops, groups, padding, result, strides, w, x)

    return graph._apply("conv2d", [x, w], result, emit, name)


def pool(x: Tensor, kind: str, window, strides=None, padding=(0, 0),
         name: Optional[str] = None, padding_end=None) -> Tensor:
    """`hpvm.tensor.pool` with `kind` max, min or mean (strides default to the window).
    `padding` pads before the image and, unless `padding_end` is given, after it too
    (`padding_end` past `padding`: ceil_mode)."""
    graph = _graph_of(x)
    x = graph._own(x, "pool")
    if kind not in ("max", "min", "mean"):
        raise HPVMError(f"pool: unknown kind '{kind}'; expected max, min or mean")
    window = _pair(window, "pool window")
    strides = _pair(window if strides is None else strides, "pool strides")
    padding = _pair(padding, "pool padding")
    if padding_end is not None:
        padding_end = _pair(padding_end, "pool padding_end")
        if padding_end == padding:
            padding_end = None
    if x.rank != 4:
        raise HPVMError(f"pool: expected a rank-4 (NCHW) input, found {x.type}")
    result = TensorType(x.shape[:2] + _window_outputs(x, window, strides, padding, "pool",
                                                      padding_end), x.element)

    def emit(body, ops):
        return _mlir.op_pool(body, ops, kind, padding, result, strides, window, x,
                             padding_end)

    return graph._apply(f"{kind}_pool", [x], result, emit, name)


def max_pool(x, window, strides=None, padding=(0, 0), name=None, padding_end=None):
    return pool(x, "max", window, strides, padding, name, padding_end)


def min_pool(x, window, strides=None, padding=(0, 0), name=None, padding_end=None):
    return pool(x, "min", window, strides, padding, name, padding_end)


def mean_pool(x, window, strides=None, padding=(0, 0), name=None, padding_end=None):
    return pool(x, "mean", window, strides, padding, name, padding_end)


avg_pool = mean_pool


def _activation(kind: str, x: Tensor, name: Optional[str], extra: str = "") -> Tensor:
    graph = _graph_of(x)
    x = graph._own(x, kind)

    def emit(body, ops):
        return _mlir.op_activation(body, ops, extra, kind, x)

    return graph._apply(kind, [x], x.type, emit, name)


def relu(x, name=None):
    """`hpvm.tensor.relu`: max(x, 0)."""
    return _activation("relu", x, name)


def tanh(x, name=None):
    return _activation("tanh", x, name)


def sigmoid(x, name=None):
    return _activation("sigmoid", x, name)


def clipped_relu(x, max: float, name=None):
    """`hpvm.tensor.clipped_relu`: min(max(x, 0), max), e.g. ReLU6."""
    return _activation("clipped_relu", x, name, _mlir.clipped_relu_attribute(max))


def softmax(x, axis: int = 1, name=None):
    """`hpvm.tensor.softmax` along `axis` (negative counts from the end)."""
    graph = _graph_of(x)
    x = graph._own(x, "softmax")
    if isinstance(axis, (int, np.integer)) and -x.rank <= axis < 0:
        axis += x.rank

    def emit(body, ops):
        return _mlir.op_softmax(body, ops, axis, x)

    return graph._apply("softmax", [x], x.type, emit, name)


def batchnorm(x, gamma, beta, mean, variance, epsilon: float = 1e-5, name=None):
    """`hpvm.tensor.batchnorm` per channel of an NCHW image (parameters [C] or [1, C, 1, 1])."""
    graph = _graph_of(x)
    operands = [graph._own(x, "batchnorm")] + [_tensor(p, graph, x.element)
                                               for p in (gamma, beta, mean, variance)]

    def emit(body, ops):
        return _mlir.op_batchnorm(body, ops, epsilon, operands, x)

    return graph._apply("batchnorm", operands, x.type, emit, name)


def map(inputs: Sequence[Tensor], body: str, name: Optional[str] = None,
        result: str = "%r") -> Tensor:
    """`hpvm.tensor.map` over tensors of one shape. `body` is MLIR for one element:
    the elements are `%e0`, `%e1`, ...; it must define `%r` (or the value named by
    `result`), the result element, e.g. `"%r = arith.mulf %e0, %e1 : f32"`."""
    inputs = list(inputs)
    graph = _graph_of(*inputs)
    for value in inputs:
        graph._own(value, "map")
    if not isinstance(body, str):
        raise HPVMError(f"map: expected the region body as MLIR text, found {body!r}")
    first = inputs[0]
    result_type = TensorType(first.shape, first.element)

    def emit(b, ops):
        return _mlir.op_map(b, ops, body, first, inputs, result, result_type)

    return graph._apply("map", inputs, result_type, emit, name)


def reduce(x: Tensor, init: float, axis: int, combiner: str, name: Optional[str] = None) -> Tensor:
    """`hpvm.tensor.reduce` along `axis`; `combiner` is 'add', 'mul', 'max', 'min' or MLIR
    text combining `%acc` and `%e` into `%r`."""
    graph = _graph_of(x)
    x = graph._own(x, "reduce")
    if not -x.rank <= axis < x.rank:
        raise HPVMError(f"reduce: axis {axis} is out of range for {x.type}")
    axis %= x.rank
    result = TensorType(x.shape[:axis] + x.shape[axis + 1:], x.element)
    text = (_mlir.binary_line(combiner, "%acc", "%e", x.element) if combiner in _mlir.BINARY
            else combiner)

    def emit(b, ops):
        return _mlir.op_reduce(b, ops, axis, init, result, text, x)

    return graph._apply("reduce", [x], result, emit, name)


def _elementwise(kind: str, a, b, name: Optional[str]) -> Tensor:
    graph = _graph_of(a, b)
    element = (a if isinstance(a, Tensor) else b).element
    a, b = _tensor(a, graph, element), _tensor(b, graph, element)
    shape = _broadcast_shape(a.shape, b.shape, kind)
    a, b = broadcast_to(a, shape), broadcast_to(b, shape)
    return map([a, b], _mlir.binary_line(kind, "%e0", "%e1", element), name or kind)


def multiply(a, b, name=None):
    """Elementwise product (NumPy broadcasting)."""
    return _elementwise("mul", a, b, name)


def subtract(a, b, name=None):
    return _elementwise("sub", a, b, name)


def divide(a, b, name=None):
    return _elementwise("div", a, b, name)


def maximum(a, b, name=None):
    return _elementwise("max", a, b, name)


def minimum(a, b, name=None):
    return _elementwise("min", a, b, name)


def clip(x: Tensor, low: Optional[float] = None, high: Optional[float] = None, name=None) -> Tensor:
    """min(max(x, low), high); `clipped_relu` when low is 0."""
    graph = _graph_of(x)
    x = graph._own(x, "clip")
    if low is not None and high is not None and low > high:
        raise HPVMError(f"clip: the lower bound {low} is above the upper bound {high}")
    if low == 0 and high is not None and high > 0:
        return clipped_relu(x, high, name)
    if low == 0 and high is None:
        return relu(x, name)
    text = _mlir.clip_body(low, high, x.element)
    if text is None:
        return _copy(x)
    return map([x], text, name or "clip")


def _copy(x: Tensor) -> Tensor:
    """A leaf that yields its input (an output that is an input or a constant)."""
    if x.element not in FLOAT_TYPES:
        return elementwise([x], "", x.element, name="copy", kind="copy", result="%e0")
    return map([x], "", name="copy", result="%e0")


def reshape(x: Tensor, shape: Sequence[int], name: Optional[str] = None) -> Tensor:
    """The same elements in a new static shape (row-major): `tensor.collapse_shape` to
    one dimension and `tensor.expand_shape` to the new shape."""
    graph = _graph_of(x)
    x = graph._own(x, "reshape")
    shape = tuple(int(d) for d in shape)
    if -1 in shape:
        known = math.prod(d for d in shape if d != -1)
        if shape.count(-1) > 1 or known == 0 or math.prod(x.shape) % known:
            raise HPVMError(f"reshape: cannot infer the -1 of {shape} for {x.type}")
        shape = tuple(math.prod(x.shape) // known if d == -1 else d for d in shape)
    if math.prod(shape) != math.prod(x.shape) or any(d < 0 for d in shape):
        raise HPVMError(f"reshape: {x.type} has {math.prod(x.shape)} elements; "
                        f"the shape {shape} has {math.prod(shape)}")
    result = TensorType(shape, x.element)
    if x.kind == "constant":
        return graph.constant(x.array.reshape(shape), element=x.element)

    def emit(body, ops):
        return _mlir.op_reshape(body, ops, shape, x)

    if x.shape == shape:
        return x
    return graph._apply("reshape", [x], result, emit, name)


def transpose(x: Tensor, permutation: Sequence[int], name: Optional[str] = None) -> Tensor:
    """Dimensions permuted (`linalg.transpose`): result dim i is input dim permutation[i]."""
    graph = _graph_of(x)
    x = graph._own(x, "transpose")
    permutation = [int(p) for p in permutation]
    if sorted(permutation) != list(range(x.rank)):
        raise HPVMError(f"transpose: {permutation} is not a permutation of the "
                        f"{x.rank} dimensions of {x.type}")
    if x.kind == "constant":
        return graph.constant(np.transpose(x.array, permutation), element=x.element)
    if x.rank == 0:
        return x  # nothing to permute (and MLIR's verifier crashes on a rank-0 linalg.transpose)
    result = TensorType(tuple(x.shape[p] for p in permutation), x.element)

    def emit(body, ops):
        return _mlir.op_transpose(body, ops, permutation, result, x)

    return graph._apply("transpose", [x], result, emit, name)


def broadcast_to(x: Tensor, shape: Sequence[int], name: Optional[str] = None) -> Tensor:
    """`x` repeated along its size-1 (and missing leading) dimensions to `shape`
    (a `linalg.generic` whose input map reads index 0 there)."""
    graph = _graph_of(x)
    x = graph._own(x, "broadcast_to")
    shape = tuple(int(d) for d in shape)
    if x.shape == shape:
        return x
    _broadcast_shape(x.shape, shape, "broadcast_to")
    if len(shape) < x.rank:
        raise HPVMError(f"broadcast_to: cannot broadcast {x.type} to the lower rank of {shape}")
    if x.kind == "constant":
        return graph.constant(np.broadcast_to(x.array, shape).copy(), element=x.element)
    result = TensorType(shape, x.element)

    def emit(body, ops):
        return _mlir.op_broadcast_to(body, ops, result, shape, x)

    return graph._apply("broadcast", [x], result, emit, name)


def _pads(values, rank: int, what: str) -> Tuple[int, ...]:
    values = tuple(int(v) for v in (values if values is not None else (0,) * rank))
    if len(values) != rank or any(v < 0 for v in values):
        raise HPVMError(f"{what}: expected {rank} non-negative sizes, found {list(values)}")
    return values


def pad(x: Tensor, low: Sequence[int], high: Optional[Sequence[int]] = None,
        value: float = 0.0, name: Optional[str] = None) -> Tensor:
    """`x` with `low[d]` elements of `value` before and `high[d]` after each dimension d
    (`high` defaults to `low`; `value` may be ±inf, e.g. for max pooling).
    A `linalg.generic` that reads `x` at clamped indices."""
    graph = _graph_of(x)
    x = graph._own(x, "pad")
    low = _pads(low, x.rank, "pad low")
    high = _pads(low if high is None else high, x.rank, "pad high")
    if not any(low) and not any(high):
        return x
    if x.kind == "constant":
        return graph.constant(np.pad(x.array, list(zip(low, high)), constant_values=value),
                              element=x.element)
    result = TensorType(tuple(s + lo + hi for s, lo, hi in zip(x.shape, low, high)), x.element)

    def emit(body, ops):
        return _mlir.op_pad(body, ops, high, low, value, x)

    return graph._apply("pad", [x], result, emit, name)


def global_pool(x: Tensor, kind: str, name: Optional[str] = None) -> Tensor:
    """Pooling of `kind` (max, min, mean) over all of H and W of an NCHW image:
    `[N, C, H, W] -> [N, C, 1, 1]`."""
    graph = _graph_of(x)
    x = graph._own(x, "global_pool")
    if x.rank != 4:
        raise HPVMError(f"global_pool: expected a rank-4 (NCHW) input, found {x.type}")
    return pool(x, kind, window=x.shape[2:], strides=(1, 1), name=name)


# --------------------------------------------------------------------------
# Data movement, casts and reductions from `linalg.generic`
#
# Each builder below writes one leaf of `linalg.generic` ops whose loops run over the
# result (and, for reductions, the reduced dimensions). Slices, gathers, concatenations
# and padding read their inputs with `tensor.extract` or strided affine maps instead of
# `tensor.extract_slice` / `tensor.insert_slice`: those bufferize to `memref.copy` of
# strided memrefs, which the CPU lowering turns into calls of `memrefCopy`, a function
# of MLIR's C runner utilities that compiled graphs do not link.
# --------------------------------------------------------------------------

def _check_same(values: Sequence[Tensor], what: str) -> None:
    elements = {v.element for v in values}
    if len(elements) > 1:
        raise HPVMError(f"{what}: expected tensors of one element type, found "
                        + ", ".join(str(v.type) for v in values))


def concat(values: Sequence[Tensor], axis: int, name: Optional[str] = None) -> Tensor:
    """The tensors joined along `axis` (all other dimensions equal): a `linalg.generic`
    over the result that reads each element from the input its position falls in."""
    values = list(values)
    if not values:
        raise HPVMError("concat: expected at least one tensor")
    graph = _graph_of(*values)
    for value in values:
        graph._own(value, "concat")
    _check_same(values, "concat")
    first = values[0]
    rank = first.rank
    if rank == 0:
        raise HPVMError("concat: expected tensors of rank >= 1, found a scalar")
    if not -rank <= axis < rank:
        raise HPVMError(f"concat: axis {axis} is out of range for {first.type}")
    axis %= rank
    for value in values:
        if value.rank != rank or any(a != b for d, (a, b) in
                                     enumerate(zip(value.shape, first.shape)) if d != axis):
            raise HPVMError(f"concat: {value.type} does not match {first.type} outside "
                            f"axis {axis}")
    if len(values) == 1:
        return first
    if all(v.kind == "constant" for v in values):
        return graph.constant(np.concatenate([v.array for v in values], axis=axis),
                              element=first.element)
    offsets = [0]
    for value in values:
        offsets.append(offsets[-1] + value.shape[axis])
    shape = first.shape[:axis] + (offsets[-1],) + first.shape[axis + 1:]
    result = TensorType(shape, first.element)
    element = first.element

    def emit(body, ops):
        return _mlir.op_concat(body, ops, axis, element, offsets, rank, result, values)

    return graph._apply("concat", values, result, emit, name)


def strided_slice(x: Tensor, starts: Sequence[int], steps: Sequence[int],
                  shape: Sequence[int], name: Optional[str] = None) -> Tensor:
    """The elements `x[starts[d] + steps[d] * i]` for `i < shape[d]` in each dimension d
    (a step may be negative: the slice runs backwards). Every index must lie inside `x`.
    A `linalg.generic` over the result that reads `x` at `starts + steps * index`."""
    graph = _graph_of(x)
    x = graph._own(x, "strided_slice")
    starts, steps, shape = ([int(v) for v in values] for values in (starts, steps, shape))
    if not len(starts) == len(steps) == len(shape) == x.rank:
        raise HPVMError(f"strided_slice: expected {x.rank} starts, steps and sizes for "
                        f"{x.type}, found {starts}, {steps}, {shape}")
    for d, (start, step, size, n) in enumerate(zip(starts, steps, shape, x.shape)):
        if size < 1 or step == 0:
            raise HPVMError(f"strided_slice: dimension {d} has size {size} and step {step}; "
                            "expected a size >= 1 and a nonzero step")
        last = start + step * (size - 1)
        if not (0 <= start < n and 0 <= last < n):
            raise HPVMError(f"strided_slice: dimension {d} reads indices {start} to {last} "
                            f"of {x.type}; expected indices in [0, {n})")
    if (all(s == 0 for s in starts) and all(s == 1 for s in steps)
            and tuple(shape) == x.shape):
        return x
    result = TensorType(tuple(shape), x.element)
    if x.kind == "constant":
        index = np.ix_(*[start + step * np.arange(size)
                         for start, step, size in zip(starts, steps, shape)])
        return graph.constant(x.array[index] if x.rank else x.array, element=x.element)
    def emit(body, ops):
        return _mlir.op_strided_slice(body, ops, result, starts, steps, x)

    return graph._apply("slice", [x], result, emit, name)


def take(x: Tensor, indices, axis: int = 0, name: Optional[str] = None) -> Tensor:
    """`np.take(x, indices, axis)` for constant integer `indices` (negative ones count
    from the end): the result has the shape `x.shape[:axis] + indices.shape +
    x.shape[axis + 1:]`. Evenly spaced indices are a strided slice; others a
    `linalg.generic` that reads the index from a constant."""
    graph = _graph_of(x)
    x = graph._own(x, "take")
    indices = np.asarray(indices)
    if indices.dtype.kind not in "iu":
        raise HPVMError(f"take: expected integer indices, found {indices.dtype}")
    if x.rank == 0:
        raise HPVMError("take: expected a tensor of rank >= 1, found a scalar")
    if not -x.rank <= axis < x.rank:
        raise HPVMError(f"take: axis {axis} is out of range for {x.type}")
    axis %= x.rank
    n = x.shape[axis]
    if indices.size == 0:
        raise HPVMError("take: expected at least one index")
    if np.any(indices < -n) or np.any(indices >= n):
        raise HPVMError(f"take: the indices {indices.tolist()} are out of range for the "
                        f"{n} elements of dimension {axis} of {x.type}")
    indices = np.where(indices < 0, indices + n, indices).astype(np.int64)
    shape = x.shape[:axis] + indices.shape + x.shape[axis + 1:]
    if x.kind == "constant":
        return graph.constant(np.take(x.array, indices, axis=axis), element=x.element)
    flat = indices.reshape(-1)
    step = int(flat[1] - flat[0]) if flat.size > 1 else 1
    evenly_spaced = np.array_equal(flat, flat[0] + step * np.arange(flat.size))
    if indices.ndim <= 1 and step != 0 and evenly_spaced:
        starts = [0] * x.rank
        steps = [1] * x.rank
        sizes = list(x.shape)
        starts[axis], steps[axis], sizes[axis] = int(flat[0]), step, int(flat.size)
        sliced = strided_slice(x, starts, steps, sizes, name=name if indices.ndim else None)
        return sliced if indices.ndim else reshape(sliced, shape, name=name)
    result = TensorType(shape, x.element)
    k = indices.ndim
    rank = len(shape)

    def emit(body, ops):
        return _mlir.op_take(body, ops, axis, indices, k, rank, result, x)

    return graph._apply("take", [x], result, emit, name)


def _run_time_indices(op: str, x: Tensor, indices: Tensor, axis: int,
                      bounds: Optional[Tuple[int, int]]) -> int:
    """Checks of gather / gather_elements: int32 / int64 indices that are a graph input (the
    call checks them) or, with `bounds` (lo, hi) that the caller proved, any tensor whose
    elements lie in [lo, hi] inside [-n, n). Returns the normalized axis."""
    if indices.element not in ("i32", "i64"):
        raise HPVMError(f"{op}: expected int32 or int64 indices, found {indices.type}")
    if x.rank == 0:
        raise HPVMError(f"{op}: expected a tensor of rank >= 1, found a scalar")
    if not -x.rank <= axis < x.rank:
        raise HPVMError(f"{op}: axis {axis} is out of range for {x.type}")
    axis %= x.rank
    n = x.shape[axis]
    if bounds is None:
        if indices.kind != "input":
            raise HPVMError(f"{op}: expected the indices as a graph input (an argument the call "
                            f"checks) or with bounds, found '{indices.name}', a {indices.kind}")
    elif not -n <= bounds[0] <= bounds[1] < n:
        raise HPVMError(f"{op}: the indices' bounds [{bounds[0]}, {bounds[1]}] are not inside "
                        f"[{-n}, {n}) for the {n} elements of axis {axis} of {x.type}")
    return axis


def gather(x: Tensor, indices: Tensor, axis: int = 0, name: Optional[str] = None,
           what: Optional[str] = None, bounds: Optional[Tuple[int, int]] = None) -> Tensor:
    """`np.take(x, indices, axis)` for `indices` computed at run time: a graph input of
    int32 or int64 elements, any rank (negative indices count from the end). The result
    has the shape `x.shape[:axis] + indices.shape + x.shape[axis + 1:]`: a
    `linalg.generic` that reads each index, adds `x.shape[axis]` to a negative one and
    `tensor.extract`s that element. A compiled call checks the argument before it runs
    (an index outside [-n, n) raises HPVMError naming `what`, default the leaf); the leaf
    also clamps each index into [0, n), so that a call that bypasses the check never
    reads outside `x`. With `bounds=(lo, hi)`, which the caller proved for every element
    (inside [-n, n)), the indices may be any tensor the graph computes, and nothing is
    checked at the call."""
    graph = _graph_of(x, indices)
    x = graph._own(x, "gather")
    indices = graph._own(indices, "gather")
    axis = _run_time_indices("gather", x, indices, axis, bounds)
    shape = x.shape[:axis] + indices.shape + x.shape[axis + 1:]
    if not shape:
        raise HPVMError("gather: a scalar index into a tensor of rank 1 is not supported "
                        "(the result would be a scalar)")
    k = indices.rank
    return _take(graph, "gather", x, indices, TensorType(shape, x.element), axis, k,
                 _mlir.dim_names(axis + k)[axis:], name, what, bounds)


def _take(graph, op: str, x: Tensor, indices: Tensor, result: TensorType, axis: int,
          span: int, index_dims: List[str], name: Optional[str], what: Optional[str],
          bounds: Optional[Tuple[int, int]]) -> Tensor:
    """The leaf of gather and gather_elements: one generic over `result` that reads `x` at
    the loop's position with its dimensions [axis, axis + span) replaced by the index
    (read through `index_dims`, clamped into [0, n): the call's check refuses such indices
    before it runs); the call's check when the caller proved no `bounds`."""
    n = x.shape[axis]
    rank = len(result.shape)
    element = indices.element

    def emit(body, ops):
        return _mlir.op_take_run_time(body, ops, axis, element, index_dims, indices, n, rank,
                                      result, span, x)

    out = graph._apply(op, [x, indices], result, emit, name)
    if bounds is None:
        graph.index_checks.append((out, indices.name, n, what or f"{op} '{out.op.name}'",
                                   f"axis {axis} of {x.type}"))
    return out


def gather_elements(x: Tensor, indices: Tensor, axis: int = 0, name: Optional[str] = None,
                    what: Optional[str] = None,
                    bounds: Optional[Tuple[int, int]] = None) -> Tensor:
    """`np.take_along_axis(x, indices, axis)` (ONNX GatherElements) for int32 / int64
    `indices` of x's rank computed at run time, each dimension but `axis` at most x's: the
    result has the indices' shape, element [i...] read from x at [i...] with the index on
    `axis` (negative ones count from the end). As `gather`: indices that are a graph input
    are checked by the call (HPVMError naming `what`), others need `bounds=(lo, hi)`
    proved by the caller; the leaf clamps each index into [0, n) as well."""
    graph = _graph_of(x, indices)
    x = graph._own(x, "gather_elements")
    indices = graph._own(indices, "gather_elements")
    axis = _run_time_indices("gather_elements", x, indices, axis, bounds)
    if indices.rank != x.rank or any(i > d for a, (i, d) in
                                     enumerate(zip(indices.shape, x.shape)) if a != axis):
        raise HPVMError(f"gather_elements: the indices {indices.type} do not fit {x.type}: "
                        "expected the same rank, each dimension but the axis at most x's")
    return _take(graph, "gather_elements", x, indices, TensorType(indices.shape, x.element),
                 axis, 1, _mlir.dim_names(x.rank), name, what, bounds)


def cast(x: Tensor, element: str, name: Optional[str] = None) -> Tensor:
    """`x` converted to the float type `element` (`arith.extf` / `arith.truncf`, which
    rounds to nearest even)."""
    graph = _graph_of(x)
    x = graph._own(x, "cast")
    if element not in FLOAT_TYPES:
        raise HPVMError(f"cast: expected a float element type (f16, f32, f64), found "
                        f"'{element}'")
    if element == x.element:
        return x
    if x.kind == "constant":
        return graph.constant(x.array.astype(FLOAT_TYPES[element]), element=element)
    result = TensorType(x.shape, element)
    rank = x.rank

    def emit(body, ops):
        return _mlir.op_cast(body, ops, element, rank, result, x)

    return graph._apply("cast", [x], result, emit, name)


def elementwise(inputs: Sequence[Tensor], body: str, element: str,
                name: Optional[str] = None, kind: str = "elementwise",
                result: str = "%r") -> Tensor:
    """An elementwise function of tensors of any element types (floats, integers, i1)
    with NumPy broadcasting: one `linalg.generic` whose input maps read index 0 along
    broadcast dimensions. `body` is MLIR for one element: the elements are `%e0`, `%e1`,
    ...; it must define `%r` (or the value named by `result`), the result element of type
    `element`."""
    inputs = list(inputs)
    graph = _graph_of(*inputs)
    for value in inputs:
        graph._own(value, kind)
    if not isinstance(body, str):
        raise HPVMError(f"{kind}: expected the body as MLIR text, found {body!r}")
    numpy_type_of(element)
    shape: Tuple[int, ...] = ()
    for value in inputs:
        shape = _broadcast_shape(shape, value.shape, kind)
    yielded = result
    result = TensorType(shape, element)

    def emit(b, ops):
        return _mlir.op_elementwise(b, ops, body, element, inputs, shape, yielded)

    return graph._apply(kind, inputs, result, emit, name)


def cumsum(x: Tensor, axis: int, exclusive: bool = False, reverse: bool = False,
           name: Optional[str] = None) -> Tensor:
    """The running sums of `x` along `axis` (floats or integers; integers wrap around):
    a `linalg.generic` with one more loop, a reduction over the source position along
    `axis`, that adds the elements before (or with `reverse` after) each position, and
    that position's own unless `exclusive`."""
    graph = _graph_of(x)
    x = graph._own(x, "cumsum")
    if x.element == "i1":
        raise HPVMError("cumsum: expected a float or integer tensor, found " + str(x.type))
    if not -x.rank <= axis < x.rank:
        raise HPVMError(f"cumsum: axis {axis} is out of range for {x.type}")
    axis %= x.rank
    rank = x.rank

    def emit(b, ops):
        return _mlir.op_cumsum(b, ops, axis, exclusive, rank, reverse, x)

    return graph._apply("cumsum", [x], x.type, emit, name)


def gather_nd(x: Tensor, indices: Tensor, bounds: Sequence[Tuple[int, int]],
              batch_dims: int = 0, name: Optional[str] = None) -> Tensor:
    """ONNX GatherND for int32 / int64 `indices` computed at run time, whose last
    dimension k names the coordinates of x's axes batch_dims ... batch_dims + k - 1: the
    result has the shape `indices.shape[:-1] + x.shape[batch_dims + k:]`. `bounds` gives,
    for each of the k coordinates, the (lo, hi) that the caller proved for it, inside
    [-n, n) of its axis (negative ones count from the end); the leaf reads each coordinate
    with `tensor.extract`, and clamps it into [0, n) as well."""
    graph = _graph_of(x, indices)
    x = graph._own(x, "gather_nd")
    indices = graph._own(indices, "gather_nd")
    b = int(batch_dims)
    if indices.element not in ("i32", "i64"):
        raise HPVMError(f"gather_nd: expected int32 or int64 indices, found {indices.type}")
    if indices.rank < 1 or not 0 <= b < min(x.rank, indices.rank):
        raise HPVMError(f"gather_nd: batch_dims {b} does not fit {x.type} and {indices.type}")
    k = indices.shape[-1]
    if not 1 <= k <= x.rank - b or tuple(indices.shape[:b]) != tuple(x.shape[:b]):
        raise HPVMError(f"gather_nd: the indices {indices.type} do not fit {x.type} with "
                        f"batch_dims {b}")
    if len(bounds) != k:
        raise HPVMError(f"gather_nd: {len(bounds)} bounds for {k} coordinates")
    for j, (lo, hi) in enumerate(bounds):
        n = x.shape[b + j]
        if not -n <= lo <= hi < n:
            raise HPVMError(f"gather_nd: the bounds [{lo}, {hi}] of coordinate {j} are not "
                            f"inside [{-n}, {n}) for axis {b + j} of {x.type}")
    shape = tuple(indices.shape[:-1]) + tuple(x.shape[b + k:])
    if not shape:
        raise HPVMError("gather_nd: the result would be a scalar; expected rank >= 1")
    result = TensorType(shape, x.element)
    rank, q = len(shape), indices.rank
    element = indices.element

    def emit(body, ops):
        return _mlir.op_gather_nd(body, ops, b, element, indices, k, q, rank, result, x)

    return graph._apply("gather_nd", [x, indices], result, emit, name)


def arg_reduce(x: Tensor, axis: int, kind: str = "max", keepdims: bool = False,
               select_last: bool = False, name: Optional[str] = None) -> Tensor:
    """The int64 index of the greatest (`kind` "max") or least ("min") element of `x`
    (floats or integers) along `axis`: the first such index, or with `select_last` the
    last one; that dimension dropped, or kept as size 1 with `keepdims`. One
    `linalg.generic` reduction with two outputs, the best value so far and its index."""
    graph = _graph_of(x)
    x = graph._own(x, "arg_reduce")
    if kind not in ("max", "min"):
        raise HPVMError(f"arg_reduce: unknown kind '{kind}'; expected max or min")
    if x.element == "i1" or x.rank == 0:
        raise HPVMError(f"arg_reduce: expected a float or integer tensor of rank >= 1, found "
                        f"{x.type}")
    if not -x.rank <= axis < x.rank:
        raise HPVMError(f"arg_reduce: axis {axis} is out of range for {x.type}")
    axis %= x.rank
    rank = x.rank
    kept = [d for d in range(rank) if d != axis]
    values = TensorType(tuple(x.shape[d] for d in kept), x.element)
    indices = TensorType(values.shape, "i64")
    result = TensorType(tuple(1 if d == axis else x.shape[d] for d in range(rank))
                        if keepdims else values.shape, "i64")

    def emit(b, ops):
        return _mlir.op_arg_reduce(b, ops, axis, indices, kept, kind, rank, result, select_last,
                                   values, x)

    return graph._apply("arg_reduce", [x], result, emit, name)


def convert(x: Tensor, element: str, name: Optional[str] = None) -> Tensor:
    """`x` converted to any element type (floats, i1, i8 ... i64): see `tensor_mlir.convert_line`."""
    graph = _graph_of(x)
    x = graph._own(x, "convert")
    numpy_type_of(element)
    if element == x.element:
        return x
    if x.kind == "constant":
        with np.errstate(all="ignore"):
            data = x.array != 0 if element == "i1" else x.array.astype(numpy_type_of(element))
        return graph.constant(data, element=element)
    return elementwise([x], _mlir.convert_line(x.element, element), element, name, kind="convert")


def reduce_axes(x: Tensor, axes: Sequence[int], kind: str, keepdims: bool = False,
                name: Optional[str] = None) -> Tensor:
    """The sum, mean, max or min of `x` over `axes` (negative ones count from the end),
    those dimensions dropped, or kept as size 1 with `keepdims`. One leaf: a
    `linalg.generic` reduction (float16 sums accumulate in float32), the mean's
    division, the reshape. No axes: `x` itself."""
    graph = _graph_of(x)
    x = graph._own(x, "reduce_axes")
    if kind not in _mlir.REDUCTIONS:
        raise HPVMError(f"reduce_axes: unknown kind '{kind}'; expected one of "
                        f"{', '.join(_mlir.REDUCTIONS)}")
    rank = x.rank
    normalized = set()
    for a in axes:
        if not -rank <= int(a) < rank:
            raise HPVMError(f"reduce_axes: axis {a} is out of range for {x.type}")
        normalized.add(int(a) % rank)
    if len(normalized) != len(list(axes)):
        raise HPVMError(f"reduce_axes: the axes {list(axes)} repeat a dimension")
    if not normalized:
        return x
    kept = [d for d in range(rank) if d not in normalized]
    reduced_shape = tuple(x.shape[d] for d in kept)
    shape = (tuple(1 if d in normalized else x.shape[d] for d in range(rank)) if keepdims
             else reduced_shape)
    count = math.prod(x.shape[d] for d in normalized)
    if x.kind == "constant":
        numpy_reduce = {"sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min}[kind]
        folded = numpy_reduce(x.array, axis=tuple(sorted(normalized)), keepdims=keepdims)
        return graph.constant(np.asarray(folded, dtype=x.type.dtype), element=x.element)
    result = TensorType(shape, x.element)
    combiner, init = _mlir.REDUCTIONS[kind]
    accumulate = "f32" if x.element == "f16" and kind in ("sum", "mean") else x.element

    def emit(body, ops):
        return _mlir.op_reduce_axes(body, ops, accumulate, combiner, count, init, kept, kind,
                                    normalized, rank, reduced_shape, shape, x)

    return graph._apply(f"reduce_{kind}", [x], result, emit, name)


def layer_norm(x: Tensor, axis: int = -1, epsilon: float = 1e-5,
               scale: Optional[Tensor] = None, bias: Optional[Tensor] = None,
               name: Optional[str] = None) -> Tensor:
    """Normalization of `x` over its dimensions from `axis` on:
    `(x - mean) / sqrt(variance + epsilon) * scale + bias`, the mean and (biased)
    variance taken over those dimensions (two passes; float16 accumulates in float32).
    `scale` and `bias` broadcast to `x.shape[axis:]`. One leaf of `linalg.generic` ops."""
    graph = _graph_of(x)
    x = graph._own(x, "layer_norm")
    rank = x.rank
    if rank == 0:
        raise HPVMError("layer_norm: expected a tensor of rank >= 1, found a scalar")
    if not -rank <= axis < rank:
        raise HPVMError(f"layer_norm: axis {axis} is out of range for {x.type}")
    axis %= rank
    normalized = x.shape[axis:]
    operands = [x]
    for what, p in (("scale", scale), ("bias", bias)):
        if p is None:
            continue
        graph._own(p, "layer_norm")
        if p.element != x.element:
            raise HPVMError(f"layer_norm: the {what} {p.type} does not have the element "
                            f"type of {x.type}")
        if p.rank > len(normalized) or any(
                s != 1 and s != normalized[i + len(normalized) - p.rank]
                for i, s in enumerate(p.shape)):
            raise HPVMError(f"layer_norm: the {what} {p.type} does not broadcast to the "
                            f"normalized dimensions {list(normalized)} of {x.type}")
        operands.append(p)
    has_scale, has_bias = scale is not None, bias is not None
    count = float(math.prod(normalized))

    def emit(body, ops):
        return _mlir.op_layer_norm(body, ops, axis, count, epsilon, has_bias, has_scale,
                                   operands, rank, x)

    return graph._apply("layer_norm", operands, x.type, emit, name)


def pad_border(x: Tensor, low: Sequence[int], high: Optional[Sequence[int]] = None,
               mode: str = "edge", name: Optional[str] = None) -> Tensor:
    """`x` padded with `low[d]` / `high[d]` elements before / after dimension d taken
    from `x` itself, as `np.pad` does: "edge" repeats the border element, "reflect"
    mirrors the elements next to it (pads below the dimension's size), "wrap" repeats
    the other end. A `linalg.generic` that reads `x` at the mapped index."""
    graph = _graph_of(x)
    x = graph._own(x, "pad_border")
    if mode not in ("edge", "reflect", "wrap"):
        raise HPVMError(f"pad_border: unknown mode '{mode}'; expected edge, reflect or wrap")
    low = _pads(low, x.rank, "pad_border low")
    high = _pads(low if high is None else high, x.rank, "pad_border high")
    if mode == "reflect":
        for d, (lo, hi, n) in enumerate(zip(low, high, x.shape)):
            if (lo or hi) and (lo >= n or hi >= n):
                raise HPVMError(f"pad_border: reflect pads {lo} and {hi} of dimension {d} of "
                                f"{x.type}; expected pads below its size {n}")
    if not any(low) and not any(high):
        return x
    if x.kind == "constant":
        numpy_mode = {"edge": "edge", "reflect": "reflect", "wrap": "wrap"}[mode]
        return graph.constant(np.pad(x.array, list(zip(low, high)), mode=numpy_mode),
                              element=x.element)
    shape = tuple(s + lo + hi for s, lo, hi in zip(x.shape, low, high))
    result = TensorType(shape, x.element)
    rank = x.rank

    def emit(body, ops):
        return _mlir.op_pad_border(body, ops, high, low, mode, rank, result, x)

    return graph._apply("pad", [x], result, emit, name)


def _axis_indices(x: Tensor, axis: int, indices, what: str) -> np.ndarray:
    values = np.asarray(indices)
    if values.ndim != 1 or values.size == 0 or values.dtype.kind not in "iu":
        raise HPVMError(f"{what}: expected a non-empty 1-D list of integer indices for axis "
                        f"{axis}, found {values.tolist()!r}")
    if np.any(values < 0) or np.any(values >= x.shape[axis]):
        raise HPVMError(f"{what}: the indices {values.tolist()} are out of range for the "
                        f"{x.shape[axis]} elements of dimension {axis} of {x.type}")
    return values.astype(np.int64)


def take_axes(x: Tensor, indices: Dict[int, Sequence[int]],
              name: Optional[str] = None) -> Tensor:
    """Along each axis named in `indices`, the elements at those constant indices (other
    axes whole): `x[np.ix_(...)]`, e.g. a nearest-neighbour resize. A `linalg.generic`
    that reads each index from a constant."""
    graph = _graph_of(x)
    x = graph._own(x, "take_axes")
    gathered: Dict[int, np.ndarray] = {}
    for axis, values in indices.items():
        if not -x.rank <= int(axis) < x.rank:
            raise HPVMError(f"take_axes: axis {axis} is out of range for {x.type}")
        gathered[int(axis) % x.rank] = _axis_indices(x, int(axis) % x.rank, values, "take_axes")
    shape = tuple(gathered[d].size if d in gathered else n for d, n in enumerate(x.shape))
    if not gathered or all(np.array_equal(v, np.arange(x.shape[d])) for d, v in gathered.items()):
        return x
    if x.kind == "constant":
        index = np.ix_(*[gathered.get(d, np.arange(n)) for d, n in enumerate(x.shape)])
        return graph.constant(x.array[index], element=x.element)
    result = TensorType(shape, x.element)
    axes = sorted(gathered)
    rank = x.rank

    def emit(body, ops):
        return _mlir.op_take_axes(body, ops, axes, gathered, rank, result, x)

    return graph._apply("take", [x], result, emit, name)


def lerp_axis(x: Tensor, axis: int, lower: Sequence[int], upper: Sequence[int],
              weights: Sequence[float], name: Optional[str] = None) -> Tensor:
    """Linear interpolation along `axis`: element i of the result is
    `x[lower[i]] * (1 - weights[i]) + x[upper[i]] * weights[i]` (the indices and weights
    constant), e.g. one axis of a bilinear resize. A `linalg.generic` whose inputs are
    the constants."""
    graph = _graph_of(x)
    x = graph._own(x, "lerp_axis")
    if not -x.rank <= axis < x.rank:
        raise HPVMError(f"lerp_axis: axis {axis} is out of range for {x.type}")
    axis %= x.rank
    lower = _axis_indices(x, axis, lower, "lerp_axis")
    upper = _axis_indices(x, axis, upper, "lerp_axis")
    weights = np.asarray(weights, dtype=np.float64)
    if not lower.size == upper.size == weights.size or weights.ndim != 1:
        raise HPVMError(f"lerp_axis: expected as many lower and upper indices and weights, "
                        f"found {lower.size}, {upper.size} and {weights.size}")
    if not np.all(np.isfinite(weights)):
        raise HPVMError("lerp_axis: expected finite weights")
    shape = x.shape[:axis] + (lower.size,) + x.shape[axis + 1:]
    dtype = FLOAT_TYPES[x.element]
    keep = (1.0 - weights).astype(dtype)
    take = weights.astype(dtype)
    if x.kind == "constant":
        view = (1,) * axis + (lower.size,) + (1,) * (x.rank - axis - 1)
        y = (np.take(x.array, lower, axis=axis) * keep.reshape(view)
             + np.take(x.array, upper, axis=axis) * take.reshape(view))
        return graph.constant(y.astype(dtype), element=x.element)
    result = TensorType(shape, x.element)
    rank = x.rank

    def emit(body, ops):
        return _mlir.op_lerp_axis(body, ops, axis, keep, lower, rank, result, take, upper, x)

    return graph._apply("lerp", [x], result, emit, name)
