"""The MLIR text of tensor graphs: everything `hpvm.tensor` writes.

`hpvm.tensor` builds the graph (its values, their types, the checks of each operation's
operands); this module writes it as MLIR text in the hpvm dialect: each operation's leaf
(`op_<operation>`: the lines of its body, given the SSA names of its operands), the leaves
themselves (`leaf_text`), the root internal node and the host function (`module_text`), and
the shared pieces of those bodies (`linalg.generic` ops, reshapes, padding, index arithmetic).
The text is written directly rather than through MLIR's Python bindings: the hpvm dialect has
none, and the package stays pure Python (see docs/Rationale.md, "Python, ONNX and tensor graphs
on the CPU").
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .ir import (FLOAT_TYPES, PARAMETER_MIN_BYTES, MemRefType, TensorType, dense_attr,
                 float_literal, format_list, is_splat, string_literal)

if TYPE_CHECKING:
    from .tensor import Tensor, TensorGraph, _Op


class Body:
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
Emitter = Callable[[Body, List[str]], str]


def memref_of(type_: TensorType) -> MemRefType:
    return MemRefType(type_.shape, type_.element)


def leaf_operands(op: _Op) -> List[Tensor]:
    """The operands that arrive through ports (constants are written in the leaf);
    each distinct value once."""
    seen, ports = set(), []
    for operand in op.operands:
        if operand.kind != "constant" and id(operand) not in seen:
            seen.add(id(operand))
            ports.append(operand)
    return ports


def node_attributes(budget: Optional[Tuple[float, float]], device: bool = False) -> str:
    """` attributes {...}` of a node: its error budget, if any, and with `device` the
    device hint; else nothing."""
    entries = []
    if budget is not None:
        entries.append(f"hpvm.error = #hpvm.error<l1 = {budget[0]:.9e}, "
                       f"l2 = {budget[1]:.9e}>")
    if device:
        entries.append("hpvm.targets = [#hpvm.target<gpu>]")
    return f" attributes {{{', '.join(entries)}}}" if entries else ""


class Archive:
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
        # Bools stay in the text too: the archive holds elements of whole bytes (a causal
        # mask of 128 x 128 tokens is 16 KiB of i1).
        if data.nbytes < PARAMETER_MIN_BYTES or is_splat(data) or constant.element == "i1":
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


def leaf_text(op: _Op, archive: Optional[Archive] = None, device: bool = False) -> List[str]:
    body = Body()
    ports = leaf_operands(op)
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
             f"{node_attributes(op.error, device)} {{"]
    lines += ["  " + line for line in body.lines]
    lines.append(f"  hpvm.return {values} : {types}")
    lines.append("}")
    return lines


def sig(types: Sequence, result) -> str:
    """`(operand types) -> result type` of an op's functional type."""
    return f"({', '.join(str(t) for t in types)}) -> {result}"


#: Binary and unary arith ops the elementwise helpers and `map` accept by name.
BINARY = {"add": "arith.addf", "sub": "arith.subf", "mul": "arith.mulf",
           "div": "arith.divf", "max": "arith.maximumf", "min": "arith.minimumf"}


def binary_line(kind: str, lhs: str, rhs: str, element: str) -> str:
    """The line `%r = <kind's arith op> lhs, rhs` (a body for `map` or a combiner)."""
    return f"%r = {BINARY[kind]} {lhs}, {rhs} : {element}"


def clip_body(low: Optional[float], high: Optional[float], element: str) -> Optional[str]:
    """The body of `map` that clips `%e0` into [low, high] (either may be None); None when
    both are."""
    lines, value = [], "%e0"
    if low is not None:
        lines += [f"%lo = arith.constant {float_literal(low, element)} : {element}",
                  f"%m = arith.maximumf {value}, %lo : {element}"]
        value = "%m"
    if high is not None:
        lines += [f"%hi = arith.constant {float_literal(high, element)} : {element}",
                  f"%n = arith.minimumf {value}, %hi : {element}"]
        value = "%n"
    if value == "%e0":
        return None
    lines[-1] = lines[-1].replace(f"{value} =", "%r =", 1)
    return "\n".join(lines)


def clipped_relu_attribute(high: float) -> str:
    """What follows the operand of `hpvm.tensor.clipped_relu`: its upper bound."""
    return f" max {float_literal(high)}"


def region(b: Body, opening: str, block_args: str, text: str, yielded: str,
            element: str) -> None:
    """An op with one region of one block: `opening {`, the block's arguments, the lines of
    `text`, and the yield of `yielded`."""
    b.emit(opening + " {")
    b.emit(f"^bb0({block_args}):")
    for line in text.strip().splitlines():
        b.emit("  " + line.strip())
    b.emit(f"  hpvm.tensor.yield {yielded} : {element}")
    b.emit("}")


def scalar(body: Body, value: float, element: str) -> str:
    name = body.fresh("c")
    body.emit(f"{name} = arith.constant {float_literal(value, element)} : {element}")
    return name


def emit_reshape(body: Body, value: str, type_: TensorType, shape: Sequence[int]) -> str:
    """Lines that give `value` (of `type_`) the static `shape` (row-major):
    `tensor.collapse_shape` to one dimension and `tensor.expand_shape` to the new shape."""
    shape = tuple(shape)
    result = TensorType(shape, type_.element)
    flat = TensorType((math.prod(type_.shape),), type_.element)
    if type_.shape == shape:
        return value
    if len(type_.shape) == 0:  # a scalar: expand to one element (no reassociation groups)
        v = body.fresh()
        body.emit(f"{v} = tensor.expand_shape {value} [] output_shape [1] : "
                  f"{type_} into {flat}")
        value, type_ = v, flat
    elif len(type_.shape) != 1:
        grouped = "[" + ", ".join(str(i) for i in range(len(type_.shape))) + "]"
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


def emit_pad(body: Body, value: str, type_: TensorType, low: Sequence[int],
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


def dim_names(rank: int) -> List[str]:
    return [f"d{i}" for i in range(rank)]


def affine_map(loops: int, results: Sequence[str]) -> str:
    return f"affine_map<({', '.join(dim_names(loops))}) -> ({', '.join(results)})>"


def emit_generic(body: Body, loops: int, ins: Sequence[Tuple[str, TensorType, Sequence[str]]],
                  out: Tuple[str, TensorType, Sequence[str]], iterators: Sequence[str],
                  block: Callable[[List[str], str], Tuple[List[str], str]]) -> str:
    """A `linalg.generic` of `loops` loops: `ins` are (value, type, map results), `out`
    (init value, type, map results); `block(input element names, output element name)`
    returns the body's lines and the yielded value. Returns the result's name."""
    maps = [affine_map(loops, results) for _, _, results in ins]
    maps.append(affine_map(loops, out[2]))
    kinds = ", ".join(f'"{k}"' for k in iterators)
    r = body.fresh()
    head = (f"{r} = linalg.generic {{indexing_maps = [{', '.join(maps)}], "
            f"iterator_types = [{kinds}]}}")
    if ins:
        head += (f" ins({', '.join(v for v, _, _ in ins)} : "
                 f"{', '.join(str(t) for _, t, _ in ins)})")
    body.emit(head + f" outs({out[0]} : {out[1]}) {{")
    args = [body.fresh("in") for _ in ins]
    out_arg = body.fresh("out")
    params = [f"{a}: {t.element}" for a, (_, t, _) in zip(args, ins)]
    params.append(f"{out_arg}: {out[1].element}")
    body.emit(f"^bb0({', '.join(params)}):")
    lines, yielded = block(args, out_arg)
    for line in lines:
        body.emit("  " + line)
    body.emit(f"  linalg.yield {yielded} : {out[1].element}")
    body.emit(f"}} -> {out[1]}")
    return r


def emit_empty(body: Body, type_: TensorType) -> str:
    empty = body.fresh("e")
    body.emit(f"{empty} = tensor.empty() : {type_}")
    return empty


def emit_indices(body: Body, lines: List[str], rank: int) -> List[str]:
    """`linalg.index` of each loop (lines appended to `lines`)."""
    names = []
    for d in range(rank):
        name = body.fresh("i")
        lines.append(f"{name} = linalg.index {d} : index")
        names.append(name)
    return names


def index_constant(body: Body, lines: List[str], value: int) -> str:
    name = body.fresh("c")
    lines.append(f"{name} = arith.constant {int(value)} : index")
    return name


def int_dense(array: np.ndarray) -> str:
    """`dense<...>` of an int64 array."""
    array = np.asarray(array, dtype=np.int64)
    if array.size and np.all(array == array.flat[0]):
        return f"dense<{int(array.flat[0])}>"
    return dense_attr(array, TensorType(array.shape, "i64"))


def emit_clamped_index(body: Body, lines: List[str], value: str, element: str,
                        n: int) -> str:
    """The index `value` (of `element`) plus n when negative, clamped into [0, n), as an
    `index`: a call whose indices were not checked still never reads outside."""
    zero, size, last = body.fresh("z"), body.fresh("n"), body.fresh("last")
    neg, wrapped, low, high = (body.fresh("neg"), body.fresh("w"), body.fresh("lo"),
                               body.fresh("hi"))
    position, clamped = body.fresh("p"), body.fresh("cl")
    lines.append(f"{zero} = arith.constant 0 : {element}")
    lines.append(f"{size} = arith.constant {n} : {element}")
    lines.append(f"{last} = arith.constant {n - 1} : {element}")
    lines.append(f"{neg} = arith.addi {value}, {size} : {element}")
    lines.append(f"{low} = arith.cmpi slt, {value}, {zero} : {element}")
    lines.append(f"{wrapped} = arith.select {low}, {neg}, {value} : {element}")
    lines.append(f"{high} = arith.maxsi {wrapped}, {zero} : {element}")
    lines.append(f"{clamped} = arith.minsi {high}, {last} : {element}")
    lines.append(f"{position} = arith.index_cast {clamped} : {element} to index")
    return position


def emit_cast_generic(body: Body, value: str, type_: TensorType, result: TensorType,
                       op: str) -> str:
    empty = emit_empty(body, result)
    rank = len(type_.shape)

    def block(args, out):
        v = body.fresh("x")
        return [f"{v} = {op} {args[0]} : {type_.element} to {result.element}"], v

    return emit_generic(body, rank, [(value, type_, dim_names(rank))],
                         (empty, result, dim_names(rank)), ["parallel"] * rank, block)


def convert_line(source: str, target: str) -> str:
    """The MLIR line `%r = <conversion> %e0` from the scalar type `source` to `target`
    (as C and onnxruntime: floats to integers truncate toward zero, to i1 is `!= 0`, i1
    to a number is 0 or 1)."""
    src_float, dst_float = source in FLOAT_TYPES, target in FLOAT_TYPES
    bits = {"i1": 1, "i8": 8, "i16": 16, "i32": 32, "i64": 64, "f16": 16, "f32": 32, "f64": 64}
    if target == "i1":
        if src_float:
            return (f"%z = arith.constant 0.0 : {source}\n"
                    f"%r = arith.cmpf une, %e0, %z : {source}")
        return f"%z = arith.constant 0 : {source}\n%r = arith.cmpi ne, %e0, %z : {source}"
    if src_float and dst_float:
        op = "arith.extf" if bits[target] > bits[source] else "arith.truncf"
    elif src_float:
        op = "arith.fptosi"
    elif dst_float:
        op = "arith.uitofp" if source == "i1" else "arith.sitofp"
    else:
        op = ("arith.extui" if source == "i1" else "arith.extsi") if bits[target] > bits[source] \
            else "arith.trunci"
    return f"%r = {op} %e0 : {source} to {target}"


#: The combiner and the initial value of each kind of `reduce_axes`.
REDUCTIONS = {"sum": ("arith.addf", 0.0), "mean": ("arith.addf", 0.0),
               "max": ("arith.maximumf", -np.inf), "min": ("arith.minimumf", np.inf)}


def module_text(graph: TensorGraph, ops: List[_Op], outputs: List[Tensor],
                parameters: Optional[str],
                device: bool) -> Tuple[str, Dict[str, np.ndarray]]:
    """The module of `graph`: the leaves of `ops`, the root node with `outputs` (each from its
    own node port) and the host function; and the constants it names in the archive
    `parameters` (None: every constant in the text). With `device`, every leaf is hinted for a
    device."""
    archive = Archive() if parameters is not None else None
    lines: List[str] = [f"// Tensor graph '{graph.name}' built by the hpvm Python package."]
    for op in ops:
        lines.extend(leaf_text(op, archive, device))
    lines.extend(root_text(graph, ops, outputs))
    lines.extend(host_text(graph))
    if not archive or not archive.entries:
        return "\n".join(lines) + "\n", {}
    lines[1:] = [f"module attributes {{hpvm.parameters = {string_literal(parameters)}}} {{",
                 *lines[1:], "}"]
    return "\n".join(lines) + "\n", archive.entries


def root_text(graph: TensorGraph, ops: List[_Op], outputs: List[Tensor]) -> List[str]:
    """The root internal node `@<graph>_root`: a node per op, its edges and bindings."""
    args = ", ".join(f"%in{i}: {t.type}" for i, t in enumerate(graph.inputs))
    results = ", ".join(str(t.type) for t in outputs)
    lines = [f"hpvm.internal @{graph.name}_root({args}) -> ({results})"
             f"{node_attributes(graph.error)} {{"]
    handles = {}
    for op in ops:
        handles[id(op)] = f"%{op.name}"
        lines.append(f"  %{op.name} = hpvm.create_node @{op.name} : !hpvm.node")
    input_index = {id(t): i for i, t in enumerate(graph.inputs)}
    for op in ops:
        for port, operand in enumerate(leaf_operands(op)):
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


def host_text(graph: TensorGraph) -> List[str]:
    """The host function `@<graph>`: the inputs and outputs as memrefs, the launch and the wait."""
    params = [f"%in{i}: {memref_of(t.type)}" for i, t in enumerate(graph.inputs)]
    params += [f"%out{i}: {memref_of(t.type)}" for i, t in enumerate(graph.outputs)]
    lines = [f"func.func @{graph.name}({', '.join(params)}) {{"]
    for i, t in enumerate(graph.inputs):
        lines.append(f"  %t{i} = bufferization.to_tensor %in{i} restrict : "
                     f"{memref_of(t.type)} to {t.type}")
    args = ", ".join(f"%t{i}" for i in range(len(graph.inputs)))
    types = ", ".join(str(t.type) for t in graph.inputs)
    lines.append(f"  %g = hpvm.launch @{graph.name}_root({args}) : ({types}) -> !hpvm.graph")
    results = ", ".join(f"%r{i}" for i in range(len(graph.outputs)))
    lines.append(f"  {results} = hpvm.wait %g : "
                 + ", ".join(str(t.type) for t in graph.outputs))
    for i, t in enumerate(graph.outputs):
        lines.append(f"  bufferization.materialize_in_destination %r{i} in restrict writable "
                     f"%out{i} : ({t.type}, {memref_of(t.type)}) -> ()")
    lines.append("  return")
    lines.append("}")
    return lines


# --------------------------------------------------------------------------
# The leaves of the operations: op_<operation>(body, SSA names of the operands, what the
# operation's builder knows) writes the lines and returns the SSA name of the result.
# --------------------------------------------------------------------------

def op_add(body, ops, a, b, result):
    r = body.fresh()
    body.emit(f"{r} = hpvm.tensor.add {ops[0]}, {ops[1]} : "
              f"{sig([a.type, b.type], result)}")
    return r


def op_matmul(body, ops, a, b, result):
    r = body.fresh()
    body.emit(f"{r} = hpvm.tensor.mul {ops[0]}, {ops[1]} : "
              f"{sig([a.type, b.type], result)}")
    return r


def op_conv2d(body, ops, groups, padding, result, strides, w, x):
    r = body.fresh()
    body.emit(f"{r} = hpvm.tensor.conv2d {ops[0]}, {ops[1]} {{padding = {format_list(padding)}, "
              f"strides = {format_list(strides)}, groups = {int(groups)}}} : "
              f"{sig([x.type, w.type], result)}")
    return r


def op_pool(body, ops, kind, padding, result, strides, window, x, padding_end=None):
    r = body.fresh()
    end = "" if padding_end is None else f", padding_end = {format_list(padding_end)}"
    body.emit(f"{r} = hpvm.tensor.pool {kind} {ops[0]} {{window = {format_list(window)}, "
              f"strides = {format_list(strides)}, padding = {format_list(padding)}{end}}} : "
              f"{x.type} -> {result}")
    return r


def op_activation(body, ops, extra, kind, x):
    r = body.fresh()
    body.emit(f"{r} = hpvm.tensor.{kind} {ops[0]}{extra} : {x.type}")
    return r


def op_softmax(body, ops, axis, x):
    r = body.fresh()
    body.emit(f"{r} = hpvm.tensor.softmax {ops[0]} {{axis = {int(axis)}}} : {x.type}")
    return r


def op_batchnorm(body, ops, epsilon, operands, x):
    r = body.fresh()
    body.emit(f"{r} = hpvm.tensor.batchnorm {', '.join(ops)} "
              f"{{epsilon = {float_literal(epsilon)} : f64}} : "
              f"{sig([o.type for o in operands], x.type)}")
    return r


def op_map(b, ops, body, first, inputs, result, result_type):
    r = b.fresh()
    region(b, f"{r} = hpvm.tensor.map {', '.join(ops)} : "
               f"{sig([v.type for v in inputs], result_type)}",
            ", ".join(f"%e{i}: {v.element}" for i, v in enumerate(inputs)), body, result,
            first.element)
    return r


def op_reduce(b, ops, axis, init, result, text, x):
    r = b.fresh()
    region(b, f"{r} = hpvm.tensor.reduce {ops[0]}, {scalar(b, init, x.element)} "
               f"axis {axis} : ({x.type}, {x.element}) -> {result}",
            f"%acc: {x.element}, %e: {x.element}", text, "%r", x.element)
    return r


def op_reshape(body, ops, shape, x):
    return emit_reshape(body, ops[0], x.type, shape)


def op_transpose(body, ops, permutation, result, x):
    empty, r = body.fresh("e"), body.fresh()
    body.emit(f"{empty} = tensor.empty() : {result}")
    body.emit(f"{r} = linalg.transpose ins({ops[0]} : {x.type}) outs({empty} : {result}) "
              f"permutation = {format_list(permutation)}")
    return r


def op_broadcast_to(body, ops, result, shape, x):
    lead = len(shape) - x.rank
    dims = [f"d{i}" for i in range(len(shape))]
    reads = ["0" if x.shape[i] == 1 and shape[lead + i] != 1 else dims[lead + i]
             for i in range(x.rank)]
    in_map = f"affine_map<({', '.join(dims)}) -> ({', '.join(reads)})>"
    out_map = f"affine_map<({', '.join(dims)}) -> ({', '.join(dims)})>"
    iterators = ", ".join(['"parallel"'] * len(shape))
    empty, r = body.fresh("e"), body.fresh()
    body.emit(f"{empty} = tensor.empty() : {result}")
    body.emit(f"{r} = linalg.generic {{indexing_maps = [{in_map}, {out_map}], "
              f"iterator_types = [{iterators}]}} ins({ops[0]} : {x.type}) "
              f"outs({empty} : {result}) {{")
    body.emit(f"^bb0(%in: {x.element}, %out: {x.element}):")
    body.emit(f"  linalg.yield %in : {x.element}")
    body.emit(f"}} -> {result}")
    return r


def op_pad(body, ops, high, low, value, x):
    return emit_pad(body, ops[0], x.type, low, high, value)[0]


def op_concat(body, ops, axis, element, offsets, rank, result, values):
    def block(args, out):
        lines: List[str] = []
        index = emit_indices(body, lines, rank)

        def pick(lo: int, hi: int) -> Tuple[List[str], str]:
            """The lines reading the element from inputs lo..hi-1, and its name."""
            if hi - lo == 1:
                part: List[str] = []
                position = index[axis]
                if offsets[lo]:
                    offset = index_constant(body, part, offsets[lo])
                    position = body.fresh("p")
                    part.append(f"{position} = arith.subi {index[axis]}, {offset} : index")
                where = index[:axis] + [position] + index[axis + 1:]
                v = body.fresh("x")
                part.append(f"{v} = tensor.extract {ops[lo]}[{', '.join(where)}] : "
                            f"{values[lo].type}")
                return part, v
            mid = (lo + hi) // 2
            part = []
            bound = index_constant(body, part, offsets[mid])
            below = body.fresh("b")
            part.append(f"{below} = arith.cmpi slt, {index[axis]}, {bound} : index")
            left, left_value = pick(lo, mid)
            right, right_value = pick(mid, hi)
            v = body.fresh("x")
            part.append(f"{v} = scf.if {below} -> ({element}) {{")
            part += ["  " + line for line in left]
            part.append(f"  scf.yield {left_value} : {element}")
            part.append("} else {")
            part += ["  " + line for line in right]
            part.append(f"  scf.yield {right_value} : {element}")
            part.append("}")
            return part, v

        part, value = pick(0, len(values))
        return lines + part, value

    empty = emit_empty(body, result)
    return emit_generic(body, rank, [], (empty, result, dim_names(rank)),
                         ["parallel"] * rank, block)


def op_strided_slice(body, ops, result, starts, steps, x):
    def block(args, out):
        lines: List[str] = []
        loop = emit_indices(body, lines, x.rank)
        where = []
        for d, (start, step) in enumerate(zip(starts, steps)):
            position = loop[d]
            if step != 1:
                factor, scaled = index_constant(body, lines, step), body.fresh("p")
                lines.append(f"{scaled} = arith.muli {position}, {factor} : index")
                position = scaled
            if start:
                offset, shifted = index_constant(body, lines, start), body.fresh("p")
                lines.append(f"{shifted} = arith.addi {position}, {offset} : index")
                position = shifted
            where.append(position)
        v = body.fresh("x")
        lines.append(f"{v} = tensor.extract {ops[0]}[{', '.join(where)}] : {x.type}")
        return lines, v

    empty = emit_empty(body, result)
    return emit_generic(body, x.rank, [], (empty, result, dim_names(x.rank)),
                         ["parallel"] * x.rank, block)


def op_take(body, ops, axis, indices, k, rank, result, x):
    constant = body.fresh("idx")
    index_type = f"tensor<{'x'.join(str(d) for d in indices.shape)}xi64>"
    body.emit(f"{constant} = arith.constant {int_dense(indices)} : {index_type}")
    empty = emit_empty(body, result)

    def block(args, out):
        lines: List[str] = []
        loop = emit_indices(body, lines, rank)
        position = body.fresh("p")
        lines.append(f"{position} = arith.index_cast {args[0]} : i64 to index")
        where = loop[:axis] + [position] + loop[axis + k:]
        v = body.fresh("x")
        lines.append(f"{v} = tensor.extract {ops[0]}[{', '.join(where)}] : {x.type}")
        return lines, v

    index_tensor = TensorType(indices.shape, "i64")
    return emit_generic(body, rank, [(constant, index_tensor,
                                       [f"d{axis + i}" for i in range(k)])],
                         (empty, result, dim_names(rank)), ["parallel"] * rank, block)


def op_take_run_time(body, ops, axis, element, index_dims, indices, n, rank, result, span, x):
    empty = emit_empty(body, result)

    def block(args, out):
        lines: List[str] = []
        loop = emit_indices(body, lines, rank)
        position = emit_clamped_index(body, lines, args[0], element, n)
        where = loop[:axis] + [position] + loop[axis + span:]
        v = body.fresh("x")
        lines.append(f"{v} = tensor.extract {ops[0]}[{', '.join(where)}] : {x.type}")
        return lines, v

    return emit_generic(body, rank, [(ops[1], indices.type, index_dims)],
                         (empty, result, dim_names(rank)), ["parallel"] * rank, block)


def op_cast(body, ops, element, rank, result, x):
    widen = np.dtype(FLOAT_TYPES[element]).itemsize > np.dtype(FLOAT_TYPES[x.element]).itemsize
    op = "arith.extf" if widen else "arith.truncf"
    if rank == 0:  # a generic needs loops: one element
        one = TensorType((1,), x.element)
        value = emit_reshape(body, ops[0], x.type, (1,))
        converted = emit_cast_generic(body, value, one, TensorType((1,), element), op)
        return emit_reshape(body, converted, TensorType((1,), element), ())
    return emit_cast_generic(body, ops[0], x.type, result, op)


def op_elementwise(b, ops, body, element, inputs, shape, yielded):
    # A rank-0 result: the generic runs over one loop of size 1.
    loops = max(len(shape), 1)
    run_shape = shape if shape else (1,)
    dims = dim_names(loops)
    ins = []
    for value, op in zip(inputs, ops):
        if value.rank == 0:
            op = emit_reshape(b, op, value.type, (1,))
            vtype = TensorType((1,), value.element)
        else:
            vtype = value.type
        lead = loops - vtype.rank
        reads = ["0" if vtype.shape[i] == 1 and run_shape[lead + i] != 1 else dims[lead + i]
                 for i in range(vtype.rank)]
        ins.append((op, vtype, reads))
    out_type = TensorType(run_shape, element)
    empty = b.fresh("init")  # not %eN: those are the body's element names
    b.emit(f"{empty} = tensor.empty() : {out_type}")
    maps = [affine_map(loops, reads) for _, _, reads in ins] + [affine_map(loops, dims)]
    kinds = ", ".join(['"parallel"'] * loops)
    r = b.fresh()
    b.emit(f"{r} = linalg.generic {{indexing_maps = [{', '.join(maps)}], "
           f"iterator_types = [{kinds}]}} ins({', '.join(op for op, _, _ in ins)} : "
           f"{', '.join(str(t) for _, t, _ in ins)}) outs({empty} : {out_type}) {{")
    params = [f"%e{i}: {t.element}" for i, (_, t, _) in enumerate(ins)]
    b.emit(f"^bb0({', '.join(params + [f'%out: {element}'])}):")
    for line in body.strip().splitlines():
        b.emit("  " + line.strip())
    b.emit(f"  linalg.yield {yielded} : {element}")
    b.emit(f"}} -> {out_type}")
    if not shape:
        r = emit_reshape(b, r, out_type, ())
    return r


def op_cumsum(b, ops, axis, exclusive, rank, reverse, x):
    float_ = x.element in FLOAT_TYPES
    add = "arith.addf" if float_ else "arith.addi"
    zero = "0.0" if float_ else "0"
    predicate = {(False, False): "ule", (True, False): "ult", (False, True): "uge",
                 (True, True): "ugt"}[(bool(exclusive), bool(reverse))]
    dims = dim_names(rank + 1)
    reads = [dims[rank] if d == axis else dims[d] for d in range(rank)]
    init, filled, r = b.fresh("init"), b.fresh("fill"), b.fresh()
    z = b.fresh("zero")
    b.emit(f"{z} = arith.constant {zero} : {x.element}")
    b.emit(f"{init} = tensor.empty() : {x.type}")
    b.emit(f"{filled} = linalg.fill ins({z} : {x.element}) outs({init} : {x.type}) -> "
           f"{x.type}")
    maps = [affine_map(rank + 1, reads), affine_map(rank + 1, dims[:rank])]
    kinds = ", ".join(['"parallel"'] * rank + ['"reduction"'])
    b.emit(f"{r} = linalg.generic {{indexing_maps = [{', '.join(maps)}], "
           f"iterator_types = [{kinds}]}} ins({ops[0]} : {x.type}) "
           f"outs({filled} : {x.type}) {{")
    b.emit(f"^bb0(%in: {x.element}, %acc: {x.element}):")
    b.emit(f"  %i = linalg.index {axis} : index")
    b.emit(f"  %j = linalg.index {rank} : index")
    b.emit(f"  %take = arith.cmpi {predicate}, %j, %i : index")
    b.emit(f"  %sum = {add} %acc, %in : {x.element}")
    b.emit(f"  %next = arith.select %take, %sum, %acc : {x.element}")
    b.emit(f"  linalg.yield %next : {x.element}")
    b.emit(f"}} -> {x.type}")
    return r


def op_gather_nd(body, ops, b, element, indices, k, q, rank, result, x):
    empty = emit_empty(body, result)

    def block(args, out):
        lines: List[str] = []
        loop = emit_indices(body, lines, rank)
        where = loop[:b]
        for j in range(k):
            column = index_constant(body, lines, j)
            value = body.fresh("ix")
            at = ", ".join(loop[:q - 1] + [column])
            lines.append(f"{value} = tensor.extract {ops[1]}[{at}] : {indices.type}")
            where.append(emit_clamped_index(body, lines, value, element, x.shape[b + j]))
        where += loop[q - 1:]
        v = body.fresh("x")
        lines.append(f"{v} = tensor.extract {ops[0]}[{', '.join(where)}] : {x.type}")
        return lines, v

    return emit_generic(body, rank, [], (empty, result, dim_names(rank)),
                         ["parallel"] * rank, block)


def op_arg_reduce(b, ops, axis, indices, kept, kind, rank, result, select_last, values, x):
    if x.element in FLOAT_TYPES:
        start = float_literal(-np.inf if kind == "max" else np.inf, x.element)
        compare = "arith.cmpf " + {("max", False): "ogt", ("max", True): "oge",
                                   ("min", False): "olt", ("min", True): "ole"}[
                                       (kind, bool(select_last))]
    else:
        bits = int(x.element[1:])
        start = str(-(1 << (bits - 1)) if kind == "max" else (1 << (bits - 1)) - 1)
        compare = "arith.cmpi " + {("max", False): "sgt", ("max", True): "sge",
                                   ("min", False): "slt", ("min", True): "sle"}[
                                       (kind, bool(select_last))]
    dims = dim_names(rank)
    out_dims = [dims[d] for d in kept]
    init_v, init_i, fill_v, fill_i = (b.fresh("initv"), b.fresh("initi"), b.fresh("fillv"),
                                      b.fresh("filli"))
    sv, si, r = b.fresh("start"), b.fresh("zero"), b.fresh()
    b.emit(f"{sv} = arith.constant {start} : {x.element}")
    b.emit(f"{si} = arith.constant 0 : i64")
    b.emit(f"{init_v} = tensor.empty() : {values}")
    b.emit(f"{init_i} = tensor.empty() : {indices}")
    b.emit(f"{fill_v} = linalg.fill ins({sv} : {x.element}) outs({init_v} : {values}) -> "
           f"{values}")
    b.emit(f"{fill_i} = linalg.fill ins({si} : i64) outs({init_i} : {indices}) -> "
           f"{indices}")
    maps = [affine_map(rank, dims), affine_map(rank, out_dims),
            affine_map(rank, out_dims)]
    kinds = ", ".join('"reduction"' if d == axis else '"parallel"' for d in range(rank))
    b.emit(f"{r}:2 = linalg.generic {{indexing_maps = [{', '.join(maps)}], "
           f"iterator_types = [{kinds}]}} ins({ops[0]} : {x.type}) "
           f"outs({fill_v}, {fill_i} : {values}, {indices}) {{")
    b.emit(f"^bb0(%in: {x.element}, %best: {x.element}, %at: i64):")
    b.emit(f"  %j = linalg.index {axis} : index")
    b.emit("  %ji = arith.index_cast %j : index to i64")
    b.emit(f"  %take = {compare}, %in, %best : {x.element}")
    b.emit(f"  %v = arith.select %take, %in, %best : {x.element}")
    b.emit("  %i = arith.select %take, %ji, %at : i64")
    b.emit(f"  linalg.yield %v, %i : {x.element}, i64")
    b.emit(f"}} -> ({values}, {indices})")
    if result.shape == indices.shape:
        return f"{r}#1"
    return emit_reshape(b, f"{r}#1", indices, result.shape)


def op_reduce_axes(body, ops, accumulate, combiner, count, init, kept, kind, normalized, rank,
                   reduced_shape, shape, x):
    acc_type = TensorType(reduced_shape, accumulate)
    start = body.fresh("c")
    body.emit(f"{start} = arith.constant {float_literal(init, accumulate)} : {accumulate}")
    empty = emit_empty(body, acc_type)
    filled = body.fresh("f")
    body.emit(f"{filled} = linalg.fill ins({start} : {accumulate}) outs({empty} : "
              f"{acc_type}) -> {acc_type}")

    def combine(args, out):
        lines, element = [], args[0]
        if accumulate != x.element:
            element = body.fresh("x")
            lines.append(f"{element} = arith.extf {args[0]} : {x.element} to {accumulate}")
        v = body.fresh("x")
        lines.append(f"{v} = {combiner} {out}, {element} : {accumulate}")
        return lines, v

    iterators = ["reduction" if d in normalized else "parallel" for d in range(rank)]
    value = emit_generic(body, rank, [(ops[0], x.type, dim_names(rank))],
                          (filled, acc_type, [f"d{d}" for d in kept]), iterators, combine)
    if kind == "mean" or accumulate != x.element:
        final = TensorType(reduced_shape, x.element)
        loops = len(reduced_shape)
        if loops == 0:  # a generic needs loops: one element
            value = emit_reshape(body, value, acc_type, (1,))
            acc_type, final_loops = TensorType((1,), accumulate), TensorType((1,), x.element)
        else:
            final_loops = final

        def finish(args, out):
            lines, v = [], args[0]
            if kind == "mean":
                n = body.fresh("c")
                lines.append(f"{n} = arith.constant {float_literal(float(count))} : "
                             f"{accumulate}")
                q = body.fresh("x")
                lines.append(f"{q} = arith.divf {v}, {n} : {accumulate}")
                v = q
            if accumulate != x.element:
                t = body.fresh("x")
                lines.append(f"{t} = arith.truncf {v} : {accumulate} to {x.element}")
                v = t
            return lines, v

        n_loops = len(final_loops.shape)
        empty = emit_empty(body, final_loops)
        value = emit_generic(body, n_loops, [(value, acc_type, dim_names(n_loops))],
                              (empty, final_loops, dim_names(n_loops)),
                              ["parallel"] * n_loops, finish)
        if loops == 0:
            value = emit_reshape(body, value, final_loops, ())
    return emit_reshape(body, value, TensorType(reduced_shape, x.element), shape)


def _layer_norm_steps(body, accumulate, element, n):
    """layer_norm's widen(lines, value) (an element in the accumulator's type) and
    centered(lines, args) (x - mean of the element args[0] and its row's sum args[1])."""
    def widen(lines, value):
        if accumulate == element:
            return value
        v = body.fresh("x")
        lines.append(f"{v} = arith.extf {value} : {element} to {accumulate}")
        return v

    def centered(lines, args):
        """x - mean of the element args[0] and its row's sum args[1]."""
        v = widen(lines, args[0])
        mean, d = body.fresh("x"), body.fresh("x")
        lines.append(f"{mean} = arith.divf {args[1]}, {n} : {accumulate}")
        lines.append(f"{d} = arith.subf {v}, {mean} : {accumulate}")
        return d

    return widen, centered


def _layer_norm_normalize(body, widen, centered, n, eps, has_scale, has_bias, accumulate,
                          element):
    """The block of layer_norm's last generic: (x - mean) / sqrt(variance + eps), scaled and
    shifted."""
    def normalize(args, out):
        lines: List[str] = []
        d = centered(lines, args)
        var, shifted, root, y = (body.fresh("x") for _ in range(4))
        lines.append(f"{var} = arith.divf {args[2]}, {n} : {accumulate}")
        lines.append(f"{shifted} = arith.addf {var}, {eps} : {accumulate}")
        lines.append(f"{root} = math.sqrt {shifted} : {accumulate}")
        lines.append(f"{y} = arith.divf {d}, {root} : {accumulate}")
        k = 3
        for present, op in ((has_scale, "arith.mulf"), (has_bias, "arith.addf")):
            if present:
                p = widen(lines, args[k])
                z = body.fresh("x")
                lines.append(f"{z} = {op} {y}, {p} : {accumulate}")
                y = z
                k += 1
        if accumulate != element:
            t = body.fresh("x")
            lines.append(f"{t} = arith.truncf {y} : {accumulate} to {element}")
            y = t
        return lines, y

    return normalize


def op_layer_norm(body, ops, axis, count, epsilon, has_bias, has_scale, operands, rank, x):
    # The scale's and the bias's maps: index 0 along the dimensions they broadcast.
    maps = [["0" if s == 1 and x.shape[rank - p.rank + i] != 1 else f"d{rank - p.rank + i}"
             for i, s in enumerate(p.shape)] for p in operands[1:]]
    element = x.element
    accumulate = "f32" if element == "f16" else element
    outer = TensorType(x.shape[:axis], accumulate)
    outer_map = [f"d{d}" for d in range(axis)]
    identity = dim_names(rank)
    iterators = ["parallel"] * axis + ["reduction"] * (rank - axis)
    zero = body.fresh("c")
    body.emit(f"{zero} = arith.constant 0.0 : {accumulate}")
    n = body.fresh("c")
    body.emit(f"{n} = arith.constant {float_literal(count)} : {accumulate}")
    eps = body.fresh("c")
    body.emit(f"{eps} = arith.constant {float_literal(float(epsilon))} : {accumulate}")
    widen, centered = _layer_norm_steps(body, accumulate, element, n)

    def filled():
        empty = emit_empty(body, outer)
        f = body.fresh("f")
        body.emit(f"{f} = linalg.fill ins({zero} : {accumulate}) outs({empty} : {outer}) "
                  f"-> {outer}")
        return f

    def add(args, out):
        lines: List[str] = []
        v = widen(lines, args[0])
        s = body.fresh("x")
        lines.append(f"{s} = arith.addf {out}, {v} : {accumulate}")
        return lines, s

    total = emit_generic(body, rank, [(ops[0], x.type, identity)],
                          (filled(), outer, outer_map), iterators, add)

    def square(args, out):
        lines: List[str] = []
        d = centered(lines, args)
        sq, s = body.fresh("x"), body.fresh("x")
        lines.append(f"{sq} = arith.mulf {d}, {d} : {accumulate}")
        lines.append(f"{s} = arith.addf {out}, {sq} : {accumulate}")
        return lines, s

    squares = emit_generic(body, rank, [(ops[0], x.type, identity),
                                         (total, outer, outer_map)],
                            (filled(), outer, outer_map), iterators, square)

    normalize = _layer_norm_normalize(body, widen, centered, n, eps, has_scale, has_bias,
                                      accumulate, element)
    ins = [(ops[0], x.type, identity), (total, outer, outer_map),
           (squares, outer, outer_map)]
    ins += [(ops[1 + i], operands[1 + i].type, m) for i, m in enumerate(maps)]
    empty = emit_empty(body, x.type)
    return emit_generic(body, rank, ins, (empty, x.type, identity), ["parallel"] * rank,
                         normalize)


def op_pad_border(body, ops, high, low, mode, rank, result, x):
    def block(args, out):
        lines: List[str] = []
        loop = emit_indices(body, lines, rank)
        where = []
        for d in range(rank):
            n = x.shape[d]
            if not low[d] and not high[d]:
                where.append(loop[d])
                continue
            position = loop[d]
            if low[d]:
                offset = index_constant(body, lines, low[d])
                position = body.fresh("p")
                lines.append(f"{position} = arith.subi {loop[d]}, {offset} : index")
            if mode == "edge":
                zero = index_constant(body, lines, 0)
                last = index_constant(body, lines, n - 1)
                a, b = body.fresh("p"), body.fresh("p")
                lines.append(f"{a} = arith.maxsi {position}, {zero} : index")
                lines.append(f"{b} = arith.minsi {a}, {last} : index")
            elif mode == "reflect":
                # |p|, then 2 (n - 1) - |p| past the end: min of the two.
                zero = index_constant(body, lines, 0)
                twice = index_constant(body, lines, 2 * (n - 1))
                negated, magnitude, mirrored, b = (body.fresh("p") for _ in range(4))
                lines.append(f"{negated} = arith.subi {zero}, {position} : index")
                lines.append(f"{magnitude} = arith.maxsi {position}, {negated} : index")
                lines.append(f"{mirrored} = arith.subi {twice}, {magnitude} : index")
                lines.append(f"{b} = arith.minsi {magnitude}, {mirrored} : index")
            else:  # wrap: (p + k n) mod n with k n >= low
                shift = index_constant(body, lines, -(-low[d] // n) * n)
                size = index_constant(body, lines, n)
                shifted, b = body.fresh("p"), body.fresh("p")
                lines.append(f"{shifted} = arith.addi {position}, {shift} : index")
                lines.append(f"{b} = arith.remsi {shifted}, {size} : index")
            where.append(b)
        v = body.fresh("x")
        lines.append(f"{v} = tensor.extract {ops[0]}[{', '.join(where)}] : {x.type}")
        return lines, v

    empty = emit_empty(body, result)
    return emit_generic(body, rank, [], (empty, result, dim_names(rank)),
                         ["parallel"] * rank, block)


def op_take_axes(body, ops, axes, gathered, rank, result, x):
    ins = []
    for d in axes:
        constant = body.fresh("idx")
        index_type = TensorType((gathered[d].size,), "i64")
        body.emit(f"{constant} = arith.constant {int_dense(gathered[d])} : {index_type}")
        ins.append((constant, index_type, [f"d{d}"]))
    empty = emit_empty(body, result)

    def block(args, out):
        lines: List[str] = []
        loop = emit_indices(body, lines, rank)
        where = list(loop)
        for d, arg in zip(axes, args):
            position = body.fresh("p")
            lines.append(f"{position} = arith.index_cast {arg} : i64 to index")
            where[d] = position
        v = body.fresh("x")
        lines.append(f"{v} = tensor.extract {ops[0]}[{', '.join(where)}] : {x.type}")
        return lines, v

    return emit_generic(body, rank, ins, (empty, result, dim_names(rank)),
                         ["parallel"] * rank, block)


def op_lerp_axis(body, ops, axis, keep, lower, rank, result, take, upper, x):
    ins = []
    for values in (lower, upper):
        constant = body.fresh("idx")
        index_type = TensorType((values.size,), "i64")
        body.emit(f"{constant} = arith.constant {int_dense(values)} : {index_type}")
        ins.append((constant, index_type, [f"d{axis}"]))
    for values in (keep, take):
        constant = body.fresh("w")
        weight_type = TensorType((values.size,), x.element)
        body.emit(f"{constant} = arith.constant {dense_attr(values, weight_type)} : "
                  f"{weight_type}")
        ins.append((constant, weight_type, [f"d{axis}"]))
    empty = emit_empty(body, result)

    def block(args, out):
        lines: List[str] = []
        loop = emit_indices(body, lines, rank)
        values = []
        for arg in args[:2]:
            position, v = body.fresh("p"), body.fresh("x")
            lines.append(f"{position} = arith.index_cast {arg} : i64 to index")
            where = loop[:axis] + [position] + loop[axis + 1:]
            lines.append(f"{v} = tensor.extract {ops[0]}[{', '.join(where)}] : {x.type}")
            values.append(v)
        a, b, s = body.fresh("x"), body.fresh("x"), body.fresh("x")
        e = x.element
        lines.append(f"{a} = arith.mulf {values[0]}, {args[2]} : {e}")
        lines.append(f"{b} = arith.mulf {values[1]}, {args[3]} : {e}")
        lines.append(f"{s} = arith.addf {a}, {b} : {e}")
        return lines, s

    return emit_generic(body, rank, ins, (empty, result, dim_names(rank)),
                         ["parallel"] * rank, block)
