"""Property-based fuzzing of the Python surface (hypothesis).

* Random small ONNX models (elementwise ops with broadcasting constants and values,
  MatMul, Gemm, Conv, pooling, BatchNormalization, Relu / Sigmoid / Tanh, Clip, Softmax,
  Reshape, Flatten, Transpose) are imported, compiled and run on random inputs, and must
  match onnxruntime: |hpvm - onnxruntime| <= ATOL + RTOL * |onnxruntime| elementwise, with
  RTOL = 1e-3 and ATOL = 1e-4 (float32; sums taken in another order, exp and tanh from
  another library). A model onnxruntime runs must import (no HPVMError): the generator
  draws only what the importer supports.
* Random call arguments (wrong shapes, ranks and dtypes, lists, scalars, None,
  non-contiguous, Fortran-ordered, read-only and broadcast views, one array twice,
  overlapping views of one buffer, empty arrays, extents from -2^64 to 2^64) for a
  tensor graph and two Modules: each call gives the right answer or raises HPVMError.
  Nothing else: no other exception, no crash (the test runs in this process), and no
  write outside the arrays passed (every array lives between guard bands of one buffer,
  which must be untouched afterwards).
* Malformed ONNX models (supported operators with inputs of random ranks, element types
  and presence, attributes of random names and kinds, any opset), as a ModelProto or
  bytes: the importer returns a graph the verifier accepts (and that matches
  onnxruntime when it runs the model too) or raises HPVMError, nothing else. The verifier
  runs in this process, so a verifier crash on what the importer emits ends the run.

`make check` runs a fixed set of examples (derandomized, a few per test, under a minute
with the compiled graphs cached). `make fuzz` (scripts/fuzz.sh run) sets
HPVM_FUZZ_EXAMPLES to run that many random examples per test instead.
"""

import math
import os

import numpy as np
import onnx
import onnxruntime
from hypothesis import HealthCheck, assume, given, note, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper

import hpvm
import hpvm.onnx
from hpvm import tensor as T

from test_graph import vector_add_module

RTOL, ATOL = 1e-3, 1e-4

#: HPVM_FUZZ_EXAMPLES > 0: the long, random mode of `make fuzz`.
LONG = int(os.environ.get("HPVM_FUZZ_EXAMPLES", "0") or 0)


def fuzz_settings(examples: int):
    """Derandomized with `examples` examples in `make check`; random with
    HPVM_FUZZ_EXAMPLES examples under `make fuzz`. No example database (the tests run
    from the source tree)."""
    return settings(max_examples=LONG or examples, derandomize=not LONG, deadline=None,
                    database=None, print_blob=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.filter_too_much])


def ort_session(model):
    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3  # errors only: fuzzed models draw many warnings
    return onnxruntime.InferenceSession(model.SerializeToString(), options,
                                        providers=["CPUExecutionProvider"])


# --------------------------------------------------------------------------
# Random ONNX models
# --------------------------------------------------------------------------

class ModelBuilder:
    """An ONNX graph under construction: values with their shapes, nodes, initializers."""

    def __init__(self, draw, seed: int):
        self.draw = draw
        self.rng = np.random.default_rng(seed)
        self.nodes, self.initializers = [], []
        self.values = []  # (name, shape)
        self.count = 0

    def fresh(self, hint: str) -> str:
        self.count += 1
        return f"{hint}{self.count}"

    def constant(self, shape, low=-1.0, high=1.0, sign=1.0) -> str:
        data = (sign * self.rng.uniform(low, high, size=shape)).astype(np.float32)
        name = self.fresh("c")
        self.initializers.append(numpy_helper.from_array(data, name))
        return name

    def ints(self, values) -> str:
        name = self.fresh("s")
        self.initializers.append(numpy_helper.from_array(np.asarray(values, np.int64), name))
        return name

    def node(self, op: str, inputs, shape, **attributes) -> str:
        out = self.fresh(op.lower())
        self.nodes.append(helper.make_node(op, list(inputs), [out], name=out, **attributes))
        self.values.append((out, tuple(shape)))
        return out


def integers(draw, low, high):
    return draw(st.integers(low, high))


def broadcast_shape(draw, shape):
    """A shape that broadcasts to `shape` (NumPy rules): a suffix, each size 1 or its own."""
    keep = integers(draw, 0, len(shape))
    suffix = shape[len(shape) - keep:]
    return tuple(d if draw(st.booleans()) else 1 for d in suffix)


def unary(b, draw, name, shape):
    op = draw(st.sampled_from(["Relu", "Sigmoid", "Tanh"]))
    return b.node(op, [name], shape)


def with_constant(b, draw, name, shape):
    op = draw(st.sampled_from(["Add", "Sub", "Mul", "Div"]))
    const_shape = broadcast_shape(draw, shape)
    out_shape = tuple(np.broadcast_shapes(shape, const_shape))
    if op == "Div":  # divisors away from 0
        const = b.constant(const_shape, 0.5, 2.0, sign=draw(st.sampled_from([-1.0, 1.0])))
        return b.node(op, [name, const], out_shape)
    const = b.constant(const_shape)
    inputs = [const, name] if draw(st.booleans()) else [name, const]
    return b.node(op, inputs, out_shape)


def with_value(b, draw, name, shape):
    """A binary op of two computed values whose shapes broadcast."""
    partners = [(n, s) for n, s in b.values
                if _broadcasts(s, shape) and n != name]
    if not partners:
        return unary(b, draw, name, shape)
    other, other_shape = draw(st.sampled_from(partners))
    op = draw(st.sampled_from(["Add", "Sub", "Mul"]))
    out_shape = tuple(np.broadcast_shapes(shape, other_shape))
    inputs = [name, other] if draw(st.booleans()) else [other, name]
    return b.node(op, inputs, out_shape)


def _broadcasts(a, b):
    try:
        np.broadcast_shapes(a, b)
        return True
    except ValueError:
        return False


def softmax(b, draw, name, shape):
    axis = integers(draw, -len(shape), len(shape) - 1)
    return b.node("Softmax", [name], shape, axis=axis)


def clip(b, draw, name, shape):
    low = draw(st.sampled_from([None, -0.5, 0.0]))
    high = draw(st.sampled_from([None, 0.5, 1.0]))
    inputs = [name, "", ""]
    if low is not None:
        inputs[1] = b.fresh("lo")
        b.initializers.append(numpy_helper.from_array(np.array(low, np.float32), inputs[1]))
    if high is not None:
        inputs[2] = b.fresh("hi")
        b.initializers.append(numpy_helper.from_array(np.array(high, np.float32), inputs[2]))
    while inputs and inputs[-1] == "":
        inputs.pop()
    return b.node("Clip", inputs, shape)


def flatten(b, draw, name, shape):
    axis = integers(draw, 0, len(shape))
    out = (math.prod(shape[:axis]), math.prod(shape[axis:]))
    return b.node("Flatten", [name], out, axis=axis)


def reshape(b, draw, name, shape):
    dims = list(draw(st.permutations(list(shape))))
    if len(dims) > 1 and draw(st.booleans()):  # merge two neighbours
        i = integers(draw, 0, len(dims) - 2)
        dims[i:i + 2] = [dims[i] * dims[i + 1]]
    target = list(dims)
    if draw(st.booleans()):
        target[integers(draw, 0, len(target) - 1)] = -1
    return b.node("Reshape", [name, b.ints(target)], dims)


def transpose(b, draw, name, shape):
    perm = draw(st.permutations(list(range(len(shape)))))
    return b.node("Transpose", [name], tuple(shape[p] for p in perm), perm=list(perm))


def matmul(b, draw, name, shape):
    k, p = shape[-1], integers(draw, 1, 5)
    weights = b.constant((k, p), -1 / math.sqrt(k), 1 / math.sqrt(k))
    return b.node("MatMul", [name, weights], shape[:-1] + (p,))


def gemm(b, draw, name, shape):
    m, k = shape
    p = integers(draw, 1, 5)
    trans_b = integers(draw, 0, 1)
    weights = b.constant((p, k) if trans_b else (k, p), -1 / math.sqrt(k), 1 / math.sqrt(k))
    inputs = [name, weights]
    bias = draw(st.sampled_from([None, (p,), (1, p), (m, p), (1, 1)]))
    if bias is not None:
        inputs.append(b.constant(bias))
    alpha = draw(st.sampled_from([1.0, 0.5, 2.0]))
    beta = draw(st.sampled_from([1.0, 0.5, 2.0]))
    return b.node("Gemm", inputs, (m, p), transB=trans_b, alpha=alpha, beta=beta)


def _window(draw, size, max_kernel=3):
    kernel = integers(draw, 1, min(max_kernel, size + 2))
    pad_begin = integers(draw, 0, min(1, kernel - 1))
    pad_end = integers(draw, 0, min(1, kernel - 1))
    if size + pad_begin + pad_end < kernel:
        pad_begin = pad_end = 0
        kernel = min(kernel, size)
    stride = integers(draw, 1, 2)
    out = (size + pad_begin + pad_end - kernel) // stride + 1
    return kernel, pad_begin, pad_end, stride, out


def conv(b, draw, name, shape):
    n, c, h, w = shape
    kh, pt, pb, sh, oh = _window(draw, h)
    kw, pl, pr, sw, ow = _window(draw, w)
    depthwise = c > 1 and draw(st.booleans())
    group = c if depthwise else 1
    filters = c * integers(draw, 1, 2) if depthwise else integers(draw, 1, 4)
    fan_in = (c // group) * kh * kw
    weights = b.constant((filters, c // group, kh, kw), -1 / math.sqrt(fan_in),
                         1 / math.sqrt(fan_in))
    inputs = [name, weights]
    if draw(st.booleans()):
        inputs.append(b.constant((filters,)))
    return b.node("Conv", inputs, (n, filters, oh, ow), pads=[pt, pl, pb, pr],
                  strides=[sh, sw], group=group)


def pool(b, draw, name, shape):
    n, c, h, w = shape
    kh, pt, pb, sh, oh = _window(draw, h)
    kw, pl, pr, sw, ow = _window(draw, w)
    op = draw(st.sampled_from(["MaxPool", "AveragePool"]))
    attributes = dict(kernel_shape=[kh, kw], pads=[pt, pl, pb, pr], strides=[sh, sw])
    if op == "AveragePool":
        attributes["count_include_pad"] = integers(draw, 0, 1)
    return b.node(op, [name], (n, c, oh, ow), **attributes)


def global_pool(b, draw, name, shape):
    op = draw(st.sampled_from(["GlobalAveragePool", "GlobalMaxPool"]))
    return b.node(op, [name], shape[:2] + (1, 1))


def batch_norm(b, draw, name, shape):
    c = shape[1]
    inputs = [name, b.constant((c,), 0.5, 1.5), b.constant((c,)), b.constant((c,)),
              b.constant((c,), 0.5, 1.5)]
    return b.node("BatchNormalization", inputs, shape, epsilon=1e-5)


def ops_for(shape):
    ops = [unary, with_constant, with_value, softmax, clip, reshape, flatten]
    if len(shape) >= 2:
        ops += [transpose, matmul]
    if len(shape) == 2:
        ops.append(gemm)
    if len(shape) == 4:
        ops += [conv, conv, pool, global_pool, batch_norm]
    return ops


@st.composite
def onnx_models(draw):
    b = ModelBuilder(draw, draw(st.integers(0, 2 ** 32 - 1)))
    if draw(st.booleans()):
        shape = (integers(draw, 1, 2), integers(draw, 1, 3), integers(draw, 2, 6),
                 integers(draw, 2, 6))
    else:
        shape = (integers(draw, 1, 4), integers(draw, 1, 6))
    b.values.append(("x", shape))
    for _ in range(integers(draw, 1, 5)):
        name, current = draw(st.sampled_from(b.values[-2:]))
        if len(current) == 0 or len(current) > 4:
            continue
        op = draw(st.sampled_from(ops_for(current)))
        op(b, draw, name, current)
    outputs = [b.values[-1]]
    if len(b.values) > 2 and draw(st.booleans()):
        outputs.append(draw(st.sampled_from(b.values[1:-1])))
    graph = helper.make_graph(
        b.nodes, "fuzz", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(s)) for n, s in outputs],
        initializer=b.initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model, shape, b.rng.standard_normal(shape).astype(np.float32)


@fuzz_settings(examples=30)
@given(onnx_models())
def test_random_onnx_models_match_onnxruntime(case):
    model, shape, x = case
    note(onnx.printer.to_text(model.graph))
    try:
        session = ort_session(model)
        expected = session.run(None, {"x": x})
    except Exception as error:  # the generator drew a model onnxruntime refuses
        note(f"onnxruntime: {error}")
        assume(False)
    graph = hpvm.onnx.load(model)
    outputs = hpvm.compile(graph)(x)
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    assert len(outputs) == len(expected)
    for ours, theirs in zip(outputs, expected):
        assert ours.shape == theirs.shape
        np.testing.assert_allclose(ours, theirs, rtol=RTOL, atol=ATOL)


# --------------------------------------------------------------------------
# Random call arguments
# --------------------------------------------------------------------------

GUARD = 16  # elements of guard band around each array carved from a buffer
CANARY = np.float32(-12345.5)


class Arena:
    """One float32 buffer the fuzzed arrays are carved from, with guard bands between
    them: a write outside an array lands in a band, and `intact` sees it."""

    def __init__(self, size: int = 4096):
        self.buffer = np.full(size, CANARY, np.float32)
        self.used = np.zeros(size, bool)  # elements that belong to arrays
        self.next = GUARD

    def carve(self, count: int, values) -> np.ndarray:
        start = self.next
        assert start + count + GUARD <= self.buffer.size
        view = self.buffer[start:start + count]
        view[...] = values
        self.used[start:start + count] = True
        self.next = start + count + GUARD
        return view

    def intact(self) -> bool:
        return bool(np.all(self.buffer[~self.used] == CANARY))


def array_argument(draw, arena: Arena, rng, shape, others):
    """A hostile or well-formed argument for a float32 array of `shape`, and a short
    label of what it is."""
    kind = draw(st.sampled_from([
        "right", "right", "right", "wrong shape", "wrong rank", "float64", "int32", "float16",
        "complex", "bool", "object", "strings", "non-contiguous", "fortran", "read-only",
        "broadcast", "huge broadcast", "list", "scalar", "none", "empty", "same as another",
        "overlaps another", "big-endian"]))
    count = math.prod(shape)
    values = rng.standard_normal(count).astype(np.float32)
    if kind == "right":
        return arena.carve(count, values).reshape(shape), kind
    if kind == "wrong shape":
        bigger = tuple(d + integers(draw, 1, 3) for d in shape) if shape else (2,)
        return arena.carve(math.prod(bigger), 0).reshape(bigger), kind
    if kind == "wrong rank":
        return arena.carve(count, values).reshape(shape + (1,)), kind
    if kind in ("float64", "int32", "float16", "bool"):
        return values.reshape(shape).astype(kind), kind
    if kind == "complex":
        return (values + 1j).reshape(shape).astype(np.complex64), kind
    if kind == "object":
        return values.reshape(shape).astype(object), kind
    if kind == "strings":
        return values.reshape(shape).astype(str), kind
    if kind == "non-contiguous":
        base = arena.carve(2 * count, np.repeat(values, 2))
        return base[::2].reshape(shape) if len(shape) <= 1 else base.reshape(
            shape[:-1] + (2 * shape[-1],))[..., ::2], kind
    if kind == "fortran":
        return np.asfortranarray(values.reshape(shape)), kind
    if kind == "read-only":
        array = arena.carve(count, values).reshape(shape)
        array.flags.writeable = False
        return array, kind
    if kind == "broadcast":
        return np.broadcast_to(np.float32(1.5), shape), kind
    if kind == "huge broadcast":
        return np.broadcast_to(np.float32(1.5), (2 ** 40,) + tuple(shape[1:])), kind
    if kind == "list":
        return values.reshape(shape).tolist(), kind
    if kind == "scalar":
        return 1.5, kind
    if kind == "none":
        return None, kind
    if kind == "empty":
        return np.zeros((0,) + tuple(shape[1:]), np.float32), kind
    if kind == "big-endian":
        return values.reshape(shape).astype(">f4"), kind
    arrays = [o for o in others if isinstance(o, np.ndarray) and o.size]
    if not arrays:
        return arena.carve(count, values).reshape(shape), "right"
    other = draw(st.sampled_from(arrays))
    if kind == "same as another" or not (np.shares_memory(other, arena.buffer)
                                         and other.flags.c_contiguous):
        return other, "same as another"
    # A view of the same buffer that starts inside `other`.
    start = (other.ctypes.data - arena.buffer.ctypes.data) // arena.buffer.itemsize
    start += integers(draw, 1, max(1, other.size - 1)) if other.size > 1 else 0
    return arena.buffer[start:start + count].reshape(shape), kind


def index_argument(draw, length: int):
    return draw(st.one_of(
        st.sampled_from([0, 1, length, length - 1, length + 1, -1, -(2 ** 63),
                         2 ** 63 - 1, 2 ** 63, 2 ** 64, 2 ** 62, 4_000_000]),
        st.integers(-2 ** 65, 2 ** 65),
        st.sampled_from([2.0, 2.5, float("nan"), float("inf"), True, "3", None, [3],
                         np.int64(3), np.float32(1.0), np.array(2), np.array([2])])))


def float_argument(draw):
    return draw(st.one_of(st.floats(allow_nan=True, allow_infinity=True),
                          st.sampled_from([2, True, "2", None, 1e300, np.float64(2),
                                           np.array(2.0), np.ones(2)])))


def snapshot(arrays):
    """Copies of the (small) arrays; a huge broadcast view is read-only and kept as it is."""
    return [a.copy() if isinstance(a, np.ndarray) and a.size < 1 << 20 else a
            for a in arrays]


def call(function, args):
    """The call's result, or the HPVMError it raised (any other exception propagates)."""
    try:
        return function(*args), None
    except hpvm.HPVMError as error:
        return None, error


_compiled = {}


def compiled(name):
    if name not in _compiled:
        if name == "vadd":
            _compiled[name] = hpvm.compile(vector_add_module("fuzz_vadd")).vadd
        elif name == "saxpy":
            _compiled[name] = hpvm.compile(saxpy_module()).saxpy
        else:
            g = hpvm.TensorGraph("fuzz_pair")
            a, b = g.input("a", (2, 3)), g.input("b", (2, 3))
            g.output(T.add(a, b), T.relu(a))
            _compiled[name] = hpvm.compile(g)
    return _compiled[name]


def saxpy_module():
    m = hpvm.Module("fuzz_saxpy")
    leaf = m.leaf("fuzz_saxpy_leaf",
                  [("a", "f32"), ("x", "memref<?xf32>", "in"), ("y", "memref<?xf32>", "inout")],
                  body="""
                    %i = hpvm.instance_id x : index
                    %xi = memref.load %x[%i] : memref<?xf32>
                    %yi = memref.load %y[%i] : memref<?xf32>
                    %ax = arith.mulf %a, %xi : f32
                    %s = arith.addf %ax, %yi : f32
                    memref.store %s, %y[%i] : memref<?xf32>
                  """)
    root = m.internal("fuzz_saxpy_root", [("a", "f32"), ("x", "memref<?xf32>"),
                                          ("y", "memref<?xf32>"), ("n", "index")])
    node = root.create_node(leaf, grid=[root.arg("n")])
    for port, name in enumerate(["a", "x", "y"]):
        root.bind_in(root.arg(name), node, port)
    m.host("saxpy", root)
    return m


@fuzz_settings(examples=100)
@given(st.data())
def test_random_module_calls_are_right_or_errors(data):
    draw = data.draw
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    arena = Arena()
    length = draw(st.integers(1, 40))
    which = draw(st.sampled_from(["saxpy", "vadd"]))
    arrays, labels = [], []
    for _ in range(2 if which == "saxpy" else 3):
        array, label = array_argument(draw, arena, rng, (length,), arrays)
        arrays.append(array)
        labels.append(label)
    n = index_argument(draw, length)
    args = ([float_argument(draw)] + arrays + [n]) if which == "saxpy" else arrays + [n]
    note(f"{which}: {labels}, n = {n!r}, a = {args[0]!r}")
    before = snapshot(arrays)
    result, error = call(compiled(which), args)
    assert arena.intact(), "a call wrote outside its arrays"
    if error is not None:
        note(f"HPVMError: {error}")
        return
    assert result is None
    # It ran: the arguments were well-formed, and the answer must be right.
    count = int(n)
    assert 0 <= count <= length
    if which == "saxpy":
        a = np.float32(args[0])
        x, y = before
        separate, fused = y.copy(), y.copy()
        with np.errstate(all="ignore"):
            separate[:count] = a * x[:count] + y[:count]
            # What a fused multiply-add gives (the code may contract a * x + y): the
            # product exact in float64, one rounding of the sum.
            fused[:count] = (np.float64(a) * x[:count] + y[:count]).astype(np.float32)
        ours = arrays[1]
        same = lambda u, v: (u == v) | (np.isnan(u) & np.isnan(v))  # noqa: E731
        assert np.all(same(ours, separate) | same(ours, fused)), (ours, separate, fused)
        np.testing.assert_array_equal(arrays[0], x)
    else:
        a, b, c = before
        expected = c.copy()
        expected[:count] = a[:count] + b[:count]
        np.testing.assert_array_equal(arrays[2], expected)
        np.testing.assert_array_equal(arrays[0], a)
        np.testing.assert_array_equal(arrays[1], b)


@fuzz_settings(examples=100)
@given(st.data())
def test_random_tensor_graph_calls_are_right_or_errors(data):
    draw = data.draw
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    arena = Arena()
    function = compiled("pair")
    inputs, labels = [], []
    for _ in range(2):
        array, label = array_argument(draw, arena, rng, (2, 3), inputs)
        inputs.append(array)
        labels.append(label)
    style = draw(st.sampled_from(["position", "name", "out"]))
    out = None
    if style == "out":
        out = []
        for _ in range(2):
            array, label = array_argument(draw, arena, rng, (2, 3), inputs + out)
            out.append(array)
            labels.append(f"out {label}")
    note(f"{style}: {labels}")
    before = snapshot(inputs)
    try:
        if style == "name":
            result = function(a=inputs[0], b=inputs[1])
        elif style == "out":
            result = function(*inputs, out=out)
        else:
            result = function(*inputs)
    except hpvm.HPVMError as error:
        note(f"HPVMError: {error}")
        assert arena.intact(), "a call wrote outside its arrays"
        return
    assert arena.intact(), "a call wrote outside its arrays"
    a, b = (np.asarray(v, dtype=np.float32) for v in before)
    sums, relus = result
    np.testing.assert_array_equal(sums, a + b)
    np.testing.assert_array_equal(relus, np.maximum(a, 0))
    if out is not None:
        assert sums is out[0] and relus is out[1]
    for given_value, was in zip(inputs, before):  # inputs are only read
        if isinstance(was, np.ndarray):
            np.testing.assert_array_equal(given_value, was)


# --------------------------------------------------------------------------
# Malformed ONNX models
# --------------------------------------------------------------------------

_ATTRIBUTES = ["axis", "perm", "pads", "strides", "kernel_shape", "group", "dilations",
               "auto_pad", "alpha", "beta", "transA", "transB", "epsilon", "ceil_mode",
               "count_include_pad", "allowzero", "min", "max", "value", "value_float",
               "value_ints", "training_mode", "storage_order", "shape", "keepdims",
               "noop_with_empty_axes", "axes", "mode", "to", "split", "num_outputs", "starts",
               "ends", "start", "end", "fmod", "approximate", "stash_type", "unknown"]


@st.composite
def attribute_values(draw):
    kind = draw(st.sampled_from(["int", "float", "ints", "string", "tensor", "floats"]))
    if kind == "int":
        return draw(st.integers(-3, 5) | st.sampled_from([2 ** 40, -(2 ** 62)]))
    if kind == "float":
        return draw(st.floats(allow_nan=True, allow_infinity=True, width=32))
    if kind == "ints":
        return draw(st.lists(st.integers(-2, 4), max_size=5))
    if kind == "floats":
        return draw(st.lists(st.floats(-2, 2, width=32), min_size=1, max_size=3))
    if kind == "string":
        return draw(st.sampled_from(["SAME_UPPER", "VALID", "NOTSET", "bogus", "", "reflect",
                                     "edge", "tanh"]))
    shape = draw(st.lists(st.integers(0, 3), max_size=3))
    dtype = draw(st.sampled_from([np.float32, np.int64, np.float64, np.int32]))
    return numpy_helper.from_array(np.ones(shape, dtype))


@st.composite
def malformed_models(draw):
    """One or two nodes of supported operators with inputs of random ranks, types and
    presence, and attributes of random names and kinds; any opset."""
    elem = {np.float32: TensorProto.FLOAT, np.float64: TensorProto.DOUBLE,
            np.int64: TensorProto.INT64, np.float16: TensorProto.FLOAT16}
    inputs, initializers, pool = [], [], []
    for i in range(draw(st.integers(1, 3))):
        shape = draw(st.lists(st.integers(1, 4), max_size=5))
        dtype = draw(st.sampled_from([np.float32] * 4 + list(elem)))
        name = f"in{i}"
        if draw(st.booleans()):
            dims = [d if draw(st.integers(0, 5)) else "N" for d in shape]
            inputs.append(helper.make_tensor_value_info(name, elem[dtype], dims))
        else:
            initializers.append(numpy_helper.from_array(
                np.asarray(np.random.default_rng(i).standard_normal(shape)).astype(dtype), name))
        pool.append(name)
    nodes = []
    for k in range(draw(st.integers(1, 2))):
        op = draw(st.sampled_from(hpvm.onnx.SUPPORTED_OPS))
        names = draw(st.lists(st.sampled_from(pool * 3 + [""]), min_size=1, max_size=5))
        attributes = {}
        for attribute in draw(st.lists(st.sampled_from(_ATTRIBUTES), max_size=2, unique=True)):
            attributes[attribute] = draw(attribute_values())
        out = f"out{k}"
        try:
            nodes.append(helper.make_node(op, names, [out], **attributes))
        except Exception:  # onnx.helper refuses the attribute value
            nodes.append(helper.make_node(op, names, [out]))
        pool.append(out)
    if not inputs:
        inputs.append(helper.make_tensor_value_info("unused", TensorProto.FLOAT, [1]))
    outputs = [helper.make_tensor_value_info(pool[-1], TensorProto.FLOAT, None)]
    graph = helper.make_graph(nodes, "malformed", inputs, outputs, initializer=initializers)
    opset = draw(st.sampled_from([6, 9, 11, 13, 17, 21]))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


@fuzz_settings(examples=100)
@given(malformed_models(), st.sampled_from(["proto", "bytes"]))
def test_malformed_onnx_models_import_or_are_errors(model, form):
    """Whatever the model, the importer returns a graph or raises HPVMError (no other
    exception); a graph it returns is one the verifier accepts, and when onnxruntime runs
    the model too, the compiled graph gives its answer."""
    note(onnx.printer.to_text(model.graph))
    given_model = model if form == "proto" else model.SerializeToString()
    try:
        graph = hpvm.onnx.load(given_model, batch_size=2)
    except hpvm.HPVMError as error:
        note(f"HPVMError: {error}")
        return
    graph.verify()
    rng = np.random.default_rng(0)
    feeds = {t.name: rng.standard_normal(t.shape).astype(t.type.dtype) for t in graph.inputs}
    try:
        session = ort_session(model)
        expected = session.run(None, feeds)
    except Exception as error:  # onnxruntime refuses what the importer took: note it only
        note(f"onnxruntime: {error}")
        return
    outputs = hpvm.compile(graph)(**feeds)
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    for ours, theirs in zip(outputs, expected):
        assert ours.shape == theirs.shape
        np.testing.assert_allclose(ours, theirs.astype(ours.dtype), rtol=RTOL, atol=ATOL)
