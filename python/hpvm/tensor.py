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
`clip`) build leaves from upstream ops (`tensor`, `linalg`) or `hpvm.tensor.map`.
"""

from __future__ import annotations

import math
import os
import re
import warnings
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple, Union

import numpy as np

from .errors import HPVMError
from .ir import (PARAMETER_MIN_BYTES, TensorType, MemRefType, dense_attr, float_literal,
                 format_list, is_splat, string_literal, symbol_name, unique,
                 write_parameter_archive)
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


class _Body:
    """The lines of one leaf: fresh SSA names and constants."""

    def __init__(self):
        self.lines: List[str] = []
        self.count = 0

    def fresh(self, hint: str = "v") -> str:
        self.count += 1
        return f"%{hint}{self.count}"

    def emit(self, line: str) -> None:
        self.lines.append(line)


# An emitter receives the body and the SSA names of the op's operands, and
# returns the SSA name of its result.
Emitter = Callable[[_Body, List[str]], str]


class _Op:
    def __init__(self, kind: str, name: str, operands: List[Tensor], result: TensorType,
                 emit: Emitter):
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
        """A graph input of static `shape` (NCHW images, row-major matrices)."""
        type_ = TensorType(tuple(shape), element)
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

    def _apply(self, kind: str, operands: Sequence[Tensor], result: TensorType, emit: Emitter,
               name: Optional[str] = None) -> Tensor:
        for operand in operands:
            self._own(operand, kind)
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

    def save(self, path) -> Tuple[str, Optional[str]]:
        """Writes the graph as MLIR at `path` and, when it has constants of 4 KiB or
        more, their parameter archive beside it (`<stem>.params`, which the MLIR names);
        `hpvm-cc path` compiles it. The text is verified first (HPVMError, and nothing
        written, when it is invalid). Returns both paths (the archive's or None)."""
        path = os.fspath(path)
        archive = os.path.splitext(os.path.basename(path))[0] + ".params"
        text, entries = self._module(archive)
        toolchain.verify(text, os.path.basename(path))
        archive_path = None
        if entries:
            archive_path = os.path.join(os.path.dirname(path), archive)
            write_parameter_archive(archive_path, entries)
        with open(path, "w") as stream:
            stream.write(text)
        return path, archive_path

    def _module(self, parameters: Optional[str]) -> Tuple[str, Dict[str, np.ndarray]]:
        """The text, and the constants it names in the archive `parameters`."""
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
        archive = _Archive() if parameters is not None else None
        lines: List[str] = [f"// Tensor graph '{self.name}' built by the hpvm Python package."]
        for op in ops:
            lines.extend(_leaf_text(op, archive))
        lines.extend(self._root_text(ops, outputs))
        lines.extend(self._host_text())
        if not archive or not archive.entries:
            return "\n".join(lines) + "\n", {}
        lines[1:] = [f"module attributes {{hpvm.parameters = {string_literal(parameters)}}} {{",
                     *lines[1:], "}"]
        return "\n".join(lines) + "\n", archive.entries

    def _root_text(self, ops: List[_Op], outputs: List[Tensor]) -> List[str]:
        args = ", ".join(f"%in{i}: {t.type}" for i, t in enumerate(self.inputs))
        results = ", ".join(str(t.type) for t in outputs)
        lines = [f"hpvm.internal @{self.name}_root({args}) -> ({results})"
                 f"{_budget_attributes(self.error)} {{"]
        handles = {}
        for op in ops:
            handles[id(op)] = f"%{op.name}"
            lines.append(f"  %{op.name} = hpvm.create_node @{op.name} : !hpvm.node")
        input_index = {id(t): i for i, t in enumerate(self.inputs)}
        for op in ops:
            for port, operand in enumerate(_leaf_operands(op)):
                if operand.kind == "input":
                    lines.append(f"  hpvm.bind_in %in{input_index[id(operand)]} -> "
                                 f"%{op.name}[{port}] : {operand.type}")
                else:
                    # A value used by several ops fans out from its one port.
                    lines.append(f"  hpvm.edge {handles[id(operand.op)]}[0] -> "
                                 f"%{op.name}[{port}] one_to_one")
        for i, value in enumerate(outputs):
            lines.append(f"  hpvm.bind_out {handles[id(value.op)]}[0] -> {i}")
        lines.append("}")
        return lines

    def _host_text(self) -> List[str]:
        params = [f"%in{i}: {_memref(t.type)}" for i, t in enumerate(self.inputs)]
        params += [f"%out{i}: {_memref(t.type)}" for i, t in enumerate(self.outputs)]
        lines = [f"func.func @{self.name}({', '.join(params)}) {{"]
        for i, t in enumerate(self.inputs):
            lines.append(f"  %t{i} = bufferization.to_tensor %in{i} restrict : "
                         f"{_memref(t.type)} to {t.type}")
        args = ", ".join(f"%t{i}" for i in range(len(self.inputs)))
        types = ", ".join(str(t.type) for t in self.inputs)
        lines.append(f"  %g = hpvm.launch @{self.name}_root({args}) : ({types}) -> !hpvm.graph")
        results = ", ".join(f"%r{i}" for i in range(len(self.outputs)))
        lines.append(f"  {results} = hpvm.wait %g : "
                     + ", ".join(str(t.type) for t in self.outputs))
        for i, t in enumerate(self.outputs):
            lines.append(f"  bufferization.materialize_in_destination %r{i} in restrict writable "
                         f"%out{i} : ({t.type}, {_memref(t.type)}) -> ()")
        lines.append("  return")
        lines.append("}")
        return lines

    def verify(self) -> str:
        """Verifies the graph with the dialect's verifier; returns its text."""
        text = self.mlir()
        toolchain.verify(text, f"{self.name}.mlir")
        return text

    def signature(self):
        """(inputs, outputs) of the host function: each a (name, TensorType)."""
        return ([(t.name, t.type) for t in self.inputs],
                [(name, t.type) for name, t in zip(self.output_names, self.outputs)])


def _memref(type_: TensorType) -> MemRefType:
    return MemRefType(type_.shape, type_.element)


def _leaf_operands(op: _Op) -> List[Tensor]:
    """The operands that arrive through ports (constants are written in the leaf);
    each distinct value once."""
    seen, ports = set(), []
    for operand in op.operands:
        if operand.kind != "constant" and id(operand) not in seen:
            seen.add(id(operand))
            ports.append(operand)
    return ports


def _budget_attributes(budget: Optional[Tuple[float, float]]) -> str:
    """` attributes {hpvm.error = ...}` of a node with an error budget, else nothing."""
    if budget is None:
        return ""
    return (f" attributes {{hpvm.error = #hpvm.error<l1 = {budget[0]:.9e}, "
            f"l2 = {budget[1]:.9e}>}}")


class _Archive:
    """The large constants of a module in the making: each Tensor once, under a key
    made of its name."""

    def __init__(self):
        self.entries: Dict[str, np.ndarray] = {}
        self._keys: Dict[int, str] = {}

    def key(self, constant: Tensor) -> Optional[str]:
        """The key of `constant` in the archive, or None when it stays in the text
        (small, or one value repeated)."""
        if id(constant) in self._keys:
            return self._keys[id(constant)]
        data = constant.array
        if data.nbytes < PARAMETER_MIN_BYTES or is_splat(data):
            return None
        base = re.sub(r"[^A-Za-z0-9_]", "_", constant.name) or "w"
        if not base[0].isalpha():
            base = "w_" + base
        key, n = base, 1
        while key in self.entries:
            n += 1
            key = f"{base}_{n}"
        self.entries[key] = np.asarray(data, dtype=constant.type.dtype)
        self._keys[id(constant)] = key
        return key


def _leaf_text(op: _Op, archive: Optional[_Archive] = None) -> List[str]:
    body = _Body()
    ports = _leaf_operands(op)
    names: Dict[int, str] = {}
    params = []
    for port, operand in enumerate(ports):
        names[id(operand)] = f"%a{port}"
        params.append(f"%a{port}: {operand.type}")
    for operand in op.operands:
        if operand.kind == "constant" and id(operand) not in names:
            name = body.fresh("cst")
            key = archive.key(operand) if archive else None
            value = (f"dense_resource<{key}>" if key
                     else dense_attr(operand.array, operand.type))
            body.emit(f"{name} = arith.constant {value} : {operand.type}")
            names[id(operand)] = name
    result = op.emit(body, [names[id(o)] for o in op.operands])
    types = str(op.result)
    values = result
    lines = [f"hpvm.leaf @{op.name}({', '.join(params)}) -> ({types})"
             f"{_budget_attributes(op.error)} {{"]
    lines += ["  " + line for line in body.lines]
    lines.append(f"  hpvm.return {values} : {types}")
    lines.append("}")
    return lines


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


def _sig(types: Sequence, result) -> str:
    """`(operand types) -> result type` of an op's functional type."""
    return f"({', '.join(str(t) for t in types)}) -> {result}"


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
        r = body.fresh()
        body.emit(f"{r} = hpvm.tensor.add {ops[0]}, {ops[1]} : "
                  f"{_sig([a.type, b.type], result)}")
        return r

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
        r = body.fresh()
        body.emit(f"{r} = hpvm.tensor.mul {ops[0]}, {ops[1]} : "
                  f"{_sig([a.type, b.type], result)}")
        return r

    return graph._apply("mul", [a, b], result, emit, name)


mul = matmul


def _window_outputs(x: Tensor, window, strides, padding, what: str) -> Tuple[int, int]:
    """Output height and width of windows sliding over an NCHW image (the verifier
    reports sizes below 1; they are clamped to 0 here only to print a type)."""
    if strides[0] <= 0 or strides[1] <= 0:
        raise HPVMError(f"{what}: expected positive strides, found {strides}")
    return tuple(max((x.shape[2 + d] + 2 * padding[d] - window[d]) // strides[d] + 1, 0)
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
        r = body.fresh()
        body.emit(f"{r} = hpvm.tensor.conv2d {ops[0]}, {ops[1]} {{padding = {format_list(padding)}, "
                  f"strides = {format_list(strides)}, groups = {int(groups)}}} : "
                  f"{_sig([x.type, w.type], result)}")
        return r

    return graph._apply("conv2d", [x, w], result, emit, name)


def pool(x: Tensor, kind: str, window, strides=None, padding=(0, 0),
         name: Optional[str] = None) -> Tensor:
    """`hpvm.tensor.pool` with `kind` max, min or mean (strides default to the window)."""
    graph = _graph_of(x)
    x = graph._own(x, "pool")
    if kind not in ("max", "min", "mean"):
        raise HPVMError(f"pool: unknown kind '{kind}'; expected max, min or mean")
    window = _pair(window, "pool window")
    strides = _pair(window if strides is None else strides, "pool strides")
    padding = _pair(padding, "pool padding")
    if x.rank != 4:
        raise HPVMError(f"pool: expected a rank-4 (NCHW) input, found {x.type}")
    result = TensorType(x.shape[:2] + _window_outputs(x, window, strides, padding, "pool"),
                        x.element)

    def emit(body, ops):
        r = body.fresh()
        body.emit(f"{r} = hpvm.tensor.pool {kind} {ops[0]} {{window = {format_list(window)}, "
                  f"strides = {format_list(strides)}, padding = {format_list(padding)}}} : "
                  f"{x.type} -> {result}")
        return r

    return graph._apply(f"{kind}_pool", [x], result, emit, name)


def max_pool(x, window, strides=None, padding=(0, 0), name=None):
    return pool(x, "max", window, strides, padding, name)


def min_pool(x, window, strides=None, padding=(0, 0), name=None):
    return pool(x, "min", window, strides, padding, name)


def mean_pool(x, window, strides=None, padding=(0, 0), name=None):
    return pool(x, "mean", window, strides, padding, name)


avg_pool = mean_pool


def _activation(kind: str, x: Tensor, name: Optional[str], extra: str = "") -> Tensor:
    graph = _graph_of(x)
    x = graph._own(x, kind)

    def emit(body, ops):
        r = body.fresh()
        body.emit(f"{r} = hpvm.tensor.{kind} {ops[0]}{extra} : {x.type}")
        return r

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
    return _activation("clipped_relu", x, name, f" max {float_literal(max)}")


def softmax(x, axis: int = 1, name=None):
    """`hpvm.tensor.softmax` along `axis` (negative counts from the end)."""
    graph = _graph_of(x)
    x = graph._own(x, "softmax")
    if isinstance(axis, (int, np.integer)) and -x.rank <= axis < 0:
        axis += x.rank

    def emit(body, ops):
        r = body.fresh()
        body.emit(f"{r} = hpvm.tensor.softmax {ops[0]} {{axis = {int(axis)}}} : {x.type}")
        return r

    return graph._apply("softmax", [x], x.type, emit, name)


def batchnorm(x, gamma, beta, mean, variance, epsilon: float = 1e-5, name=None):
    """`hpvm.tensor.batchnorm` per channel of an NCHW image (parameters [C] or [1, C, 1, 1])."""
    graph = _graph_of(x)
    operands = [graph._own(x, "batchnorm")] + [_tensor(p, graph, x.element)
                                               for p in (gamma, beta, mean, variance)]

    def emit(body, ops):
        r = body.fresh()
        body.emit(f"{r} = hpvm.tensor.batchnorm {', '.join(ops)} "
                  f"{{epsilon = {float_literal(epsilon)} : f64}} : "
                  f"{_sig([o.type for o in operands], x.type)}")
        return r

    return graph._apply("batchnorm", operands, x.type, emit, name)


#: Binary and unary arith ops the elementwise helpers and `map` accept by name.
_BINARY = {"add": "arith.addf", "sub": "arith.subf", "mul": "arith.mulf",
           "div": "arith.divf", "max": "arith.maximumf", "min": "arith.minimumf"}


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
        r = b.fresh()
        _region(b, f"{r} = hpvm.tensor.map {', '.join(ops)} : "
                   f"{_sig([v.type for v in inputs], result_type)}",
                ", ".join(f"%e{i}: {v.element}" for i, v in enumerate(inputs)), body, result,
                first.element)
        return r

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
    text = (f"%r = {_BINARY[combiner]} %acc, %e : {x.element}" if combiner in _BINARY
            else combiner)

    def emit(b, ops):
        r = b.fresh()
        _region(b, f"{r} = hpvm.tensor.reduce {ops[0]}, {_scalar(b, init, x.element)} "
                   f"axis {axis} : ({x.type}, {x.element}) -> {result}",
                f"%acc: {x.element}, %e: {x.element}", text, "%r", x.element)
        return r

    return graph._apply("reduce", [x], result, emit, name)


def _region(b: _Body, opening: str, block_args: str, text: str, yielded: str,
            element: str) -> None:
    """An op with one region of one block: `opening {`, the block's arguments, the lines of
    `text`, and the yield of `yielded`."""
    b.emit(opening + " {")
    b.emit(f"^bb0({block_args}):")
    for line in text.strip().splitlines():
        b.emit("  " + line.strip())
    b.emit(f"  hpvm.tensor.yield {yielded} : {element}")
    b.emit("}")


def _scalar(body: _Body, value: float, element: str) -> str:
    name = body.fresh("c")
    body.emit(f"{name} = arith.constant {float_literal(value, element)} : {element}")
    return name


def _elementwise(kind: str, a, b, name: Optional[str]) -> Tensor:
    graph = _graph_of(a, b)
    element = (a if isinstance(a, Tensor) else b).element
    a, b = _tensor(a, graph, element), _tensor(b, graph, element)
    shape = _broadcast_shape(a.shape, b.shape, kind)
    a, b = broadcast_to(a, shape), broadcast_to(b, shape)
    return map([a, b], f"%r = {_BINARY[kind]} %e0, %e1 : {element}", name or kind)


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
    lines, value = [], "%e0"
    if low is not None:
        lines += [f"%lo = arith.constant {float_literal(low, x.element)} : {x.element}",
                  f"%m = arith.maximumf {value}, %lo : {x.element}"]
        value = "%m"
    if high is not None:
        lines += [f"%hi = arith.constant {float_literal(high, x.element)} : {x.element}",
                  f"%n = arith.minimumf {value}, %hi : {x.element}"]
        value = "%n"
    if value == "%e0":
        return _copy(x)
    lines[-1] = lines[-1].replace(f"{value} =", "%r =", 1)
    return map([x], "\n".join(lines), name or "clip")


def _copy(x: Tensor) -> Tensor:
    """A leaf that yields its input (an output that is an input or a constant)."""
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
        value, type_ = ops[0], x.type
        flat = TensorType((math.prod(x.shape),), x.element)
        if x.rank == 0:  # a scalar: expand to one element (no reassociation groups)
            v = body.fresh()
            body.emit(f"{v} = tensor.expand_shape {value} [] output_shape [1] : "
                      f"{type_} into {flat}")
            value, type_ = v, flat
        elif x.rank != 1:
            grouped = "[" + ", ".join(str(i) for i in range(x.rank)) + "]"
            v = body.fresh()
            body.emit(f"{v} = tensor.collapse_shape {value} [{grouped}] : {type_} into {flat}")
            value, type_ = v, flat
        if len(shape) == 0:  # one element to a scalar
            v = body.fresh()
            body.emit(f"{v} = tensor.collapse_shape {value} [] : {type_} into {result}")
            value = v
        elif len(shape) != 1:
            grouped = "[" + ", ".join(str(i) for i in range(len(shape))) + "]"
            v = body.fresh()
            body.emit(f"{v} = tensor.expand_shape {value} [{grouped}] output_shape "
                      f"{format_list(shape)} : {type_} into {result}")
            value = v
        return value

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
        empty, r = body.fresh("e"), body.fresh()
        body.emit(f"{empty} = tensor.empty() : {result}")
        body.emit(f"{r} = linalg.transpose ins({ops[0]} : {x.type}) outs({empty} : {result}) "
                  f"permutation = {format_list(permutation)}")
        return r

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
    lead = len(shape) - x.rank
    dims = [f"d{i}" for i in range(len(shape))]
    reads = ["0" if x.shape[i] == 1 and shape[lead + i] != 1 else dims[lead + i]
             for i in range(x.rank)]
    in_map = f"affine_map<({', '.join(dims)}) -> ({', '.join(reads)})>"
    out_map = f"affine_map<({', '.join(dims)}) -> ({', '.join(dims)})>"
    iterators = ", ".join(['"parallel"'] * len(shape))

    def emit(body, ops):
        empty, r = body.fresh("e"), body.fresh()
        body.emit(f"{empty} = tensor.empty() : {result}")
        body.emit(f"{r} = linalg.generic {{indexing_maps = [{in_map}, {out_map}], "
                  f"iterator_types = [{iterators}]}} ins({ops[0]} : {x.type}) "
                  f"outs({empty} : {result}) {{")
        body.emit(f"^bb0(%in: {x.element}, %out: {x.element}):")
        body.emit(f"  linalg.yield %in : {x.element}")
        body.emit(f"}} -> {result}")
        return r

    return graph._apply("broadcast", [x], result, emit, name)


def _emit_pad(body: _Body, value: str, type_: TensorType, low: Sequence[int],
              high: Sequence[int], pad_value: float) -> Tuple[str, TensorType]:
    """Lines of a `linalg.generic` that writes `value` into a larger tensor with
    `low[d]` / `high[d]` elements of `pad_value` before / after dimension d.
    It reads the input at clamped indices and selects the pad value outside it
    (the same form as the dialect's own padding of images)."""
    shape = tuple(s + lo + hi for s, lo, hi in zip(type_.shape, low, high))
    result = TensorType(shape, type_.element)
    rank = len(shape)
    dims = ", ".join(f"d{i}" for i in range(rank))
    iterators = ", ".join(['"parallel"'] * rank)
    empty, r = body.fresh("e"), body.fresh()
    body.emit(f"{empty} = tensor.empty() : {result}")
    body.emit(f"{r} = linalg.generic {{indexing_maps = [affine_map<({dims}) -> ({dims})>], "
              f"iterator_types = [{iterators}]}} outs({empty} : {result}) {{")
    body.emit(f"^bb0(%out: {type_.element}):")
    lines: List[str] = []
    fill = body.fresh("pad")
    lines.append(f"{fill} = arith.constant {float_literal(pad_value, type_.element)} : "
                 f"{type_.element}")
    zero = body.fresh("c")
    lines.append(f"{zero} = arith.constant 0 : index")
    indices, inside = [], None
    for d in range(rank):
        index = body.fresh("i")
        lines.append(f"{index} = linalg.index {d} : index")
        if low[d] == 0 and high[d] == 0:
            indices.append(index)
            continue
        position, last = index, body.fresh("c")
        lines.append(f"{last} = arith.constant {type_.shape[d] - 1} : index")
        if low[d]:
            offset, position = body.fresh("c"), body.fresh("p")
            lines.append(f"{offset} = arith.constant {low[d]} : index")
            lines.append(f"{position} = arith.subi {index}, {offset} : index")
        ge, le, valid = body.fresh("b"), body.fresh("b"), body.fresh("b")
        lines.append(f"{ge} = arith.cmpi sge, {position}, {zero} : index")
        lines.append(f"{le} = arith.cmpi sle, {position}, {last} : index")
        lines.append(f"{valid} = arith.andi {ge}, {le} : i1")
        if inside is None:
            inside = valid
        else:
            both = body.fresh("b")
            lines.append(f"{both} = arith.andi {inside}, {valid} : i1")
            inside = both
        low_clamped, clamped = body.fresh("p"), body.fresh("p")
        lines.append(f"{low_clamped} = arith.maxsi {position}, {zero} : index")
        lines.append(f"{clamped} = arith.minsi {low_clamped}, {last} : index")
        indices.append(clamped)
    element, selected = body.fresh("x"), body.fresh("s")
    lines.append(f"{element} = tensor.extract {value}[{', '.join(indices)}] : {type_}")
    if inside is None:
        lines.append(f"linalg.yield {element} : {type_.element}")
    else:
        lines.append(f"{selected} = arith.select {inside}, {element}, {fill} : {type_.element}")
        lines.append(f"linalg.yield {selected} : {type_.element}")
    for line in lines:
        body.emit("  " + line)
    body.emit(f"}} -> {result}")
    return r, result


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
        return _emit_pad(body, ops[0], x.type, low, high, value)[0]

    return graph._apply("pad", [x], result, emit, name)


def global_pool(x: Tensor, kind: str, name: Optional[str] = None) -> Tensor:
    """Pooling of `kind` (max, min, mean) over all of H and W of an NCHW image:
    `[N, C, H, W] -> [N, C, 1, 1]`."""
    graph = _graph_of(x)
    x = graph._own(x, "global_pool")
    if x.rank != 4:
        raise HPVMError(f"global_pool: expected a rank-4 (NCHW) input, found {x.type}")
    return pool(x, kind, window=x.shape[2:], strides=(1, 1), name=name)
