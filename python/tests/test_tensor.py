"""hpvm.tensor builders: every op of the dialect (and the structural helpers) compiled
through hpvm-cc and compared with NumPy. One graph holds them all, so that one compile
serves the file."""

import numpy as np
import pytest

import hpvm
from hpvm import tensor as T

rng = np.random.default_rng(7)


def rand(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def conv_ref(x, w, padding, strides, groups=1):
    n, c, h, wd = x.shape
    f, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (padding[0],) * 2, (padding[1],) * 2))
    oh = (h + 2 * padding[0] - kh) // strides[0] + 1
    ow = (wd + 2 * padding[1] - kw) // strides[1] + 1
    out = np.zeros((n, f, oh, ow), np.float64)
    per_group = f // groups
    for o in range(f):
        g = o // per_group
        for i in range(oh):
            for j in range(ow):
                patch = xp[:, g * cg:(g + 1) * cg, i * strides[0]:i * strides[0] + kh,
                           j * strides[1]:j * strides[1] + kw]
                out[:, o, i, j] = (patch * w[o]).sum(axis=(1, 2, 3))
    return out


def pool_ref(x, kind, window, strides, padding):
    fill = {"max": -np.inf, "min": np.inf, "mean": 0.0}[kind]
    xp = np.pad(x, ((0, 0), (0, 0), (padding[0],) * 2, (padding[1],) * 2), constant_values=fill)
    oh = (x.shape[2] + 2 * padding[0] - window[0]) // strides[0] + 1
    ow = (x.shape[3] + 2 * padding[1] - window[1]) // strides[1] + 1
    out = np.zeros(x.shape[:2] + (oh, ow), np.float64)
    reduce = {"max": np.max, "min": np.min, "mean": np.mean}[kind]
    for i in range(oh):
        for j in range(ow):
            out[:, :, i, j] = reduce(xp[:, :, i * strides[0]:i * strides[0] + window[0],
                                        j * strides[1]:j * strides[1] + window[1]], axis=(2, 3))
    return out


def softmax_ref(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


X = rand(2, 4, 9, 9)
W = rand(6, 4, 3, 3)
WG = rand(4, 2, 3, 3)  # groups = 2
WD = rand(4, 1, 3, 3)  # depthwise
M = rand(3, 5, 7)
N = rand(3, 7, 2)
V = rand(4)
GAMMA, BETA, MEAN = rand(4), rand(4), rand(4)
VAR = np.abs(rand(4)) + 0.5

CASES = {}


def case(name, build, reference, rtol=1e-5, atol=1e-5):
    CASES[name] = (build, reference, rtol, atol)


case("conv2d_padded", lambda g, x, m, n: T.conv2d(x, g.constant(W), padding=(1, 1)),
     lambda: conv_ref(X, W, (1, 1), (1, 1)))
case("conv2d_strided", lambda g, x, m, n: T.conv2d(x, g.constant(W), padding=(0, 1), strides=(2, 3)),
     lambda: conv_ref(X, W, (0, 1), (2, 3)))
case("conv2d_groups", lambda g, x, m, n: T.conv2d(x, g.constant(WG), groups=2),
     lambda: conv_ref(X, WG, (0, 0), (1, 1), groups=2))
case("conv2d_depthwise", lambda g, x, m, n: T.conv2d(x, g.constant(WD), padding=1, groups=4),
     lambda: conv_ref(X, WD, (1, 1), (1, 1), groups=4))
case("max_pool", lambda g, x, m, n: T.max_pool(x, (2, 2)),
     lambda: pool_ref(X, "max", (2, 2), (2, 2), (0, 0)))
case("max_pool_padded", lambda g, x, m, n: T.max_pool(x, (3, 3), strides=(2, 2), padding=(1, 1)),
     lambda: pool_ref(X, "max", (3, 3), (2, 2), (1, 1)))
case("min_pool", lambda g, x, m, n: T.min_pool(x, (3, 2), strides=(1, 2)),
     lambda: pool_ref(X, "min", (3, 2), (1, 2), (0, 0)))
case("mean_pool", lambda g, x, m, n: T.mean_pool(x, (3, 3), strides=(3, 3)),
     lambda: pool_ref(X, "mean", (3, 3), (3, 3), (0, 0)))
case("add_bias", lambda g, x, m, n: T.add(x, g.constant(V.reshape(1, 4, 1, 1))),
     lambda: X + V.reshape(1, 4, 1, 1))
case("add_lower_rank", lambda g, x, m, n: x + g.constant(rand(9)[None].repeat(9, 0)),
     None)  # reference filled in below (needs the same constant)
case("matmul_batched", lambda g, x, m, n: m @ n, lambda: M @ N)
case("relu", lambda g, x, m, n: T.relu(x), lambda: np.maximum(X, 0))
case("tanh", lambda g, x, m, n: T.tanh(x), lambda: np.tanh(X))
case("sigmoid", lambda g, x, m, n: T.sigmoid(x), lambda: 1 / (1 + np.exp(-X.astype(np.float64))))
case("clipped_relu", lambda g, x, m, n: T.clipped_relu(x, 0.5), lambda: np.clip(X, 0, 0.5))
case("softmax_channels", lambda g, x, m, n: T.softmax(x, axis=1), lambda: softmax_ref(X, 1))
case("softmax_last", lambda g, x, m, n: T.softmax(m, axis=-1), lambda: softmax_ref(M, 2))
case("batchnorm", lambda g, x, m, n: T.batchnorm(x, GAMMA, BETA, MEAN, VAR, epsilon=1e-3),
     lambda: (GAMMA.reshape(1, 4, 1, 1) * (X - MEAN.reshape(1, 4, 1, 1))
              / np.sqrt(VAR.reshape(1, 4, 1, 1) + 1e-3) + BETA.reshape(1, 4, 1, 1)))
case("map", lambda g, x, m, n: T.map([x, T.relu(x)],
                                     "%t = arith.mulf %e0, %e1 : f32\n%r = arith.addf %t, %e0 : f32"),
     lambda: X * np.maximum(X, 0) + X)
case("reduce_sum", lambda g, x, m, n: T.reduce(m, 0.0, 1, "add"), lambda: M.sum(axis=1))
case("reduce_max", lambda g, x, m, n: T.reduce(m, -np.inf, 2, "max"),
     lambda: M.max(axis=2))
case("multiply_broadcast", lambda g, x, m, n: T.multiply(x, g.constant(V.reshape(4, 1, 1))),
     lambda: X * V.reshape(4, 1, 1))
case("subtract_divide", lambda g, x, m, n: (x - 1.5) / g.constant(np.float32(4.0)),
     lambda: (X - 1.5) / 4.0)
case("maximum_minimum", lambda g, x, m, n: T.minimum(T.maximum(x, -0.25), 0.75),
     lambda: np.clip(X, -0.25, 0.75))
case("clip", lambda g, x, m, n: T.clip(x, -0.5, 0.25), lambda: np.clip(X, -0.5, 0.25))
case("clip_low_only", lambda g, x, m, n: T.clip(x, low=-0.5), lambda: np.maximum(X, -0.5))
case("reshape", lambda g, x, m, n: T.reshape(x, (2, -1)), lambda: X.reshape(2, -1))
case("transpose", lambda g, x, m, n: T.transpose(m, (2, 0, 1)), lambda: M.transpose(2, 0, 1))
case("broadcast_to", lambda g, x, m, n: T.broadcast_to(T.reduce(m, 0.0, 1, "add"), (4, 3, 7)),
     lambda: np.broadcast_to(M.sum(axis=1), (4, 3, 7)))
case("input_as_output", lambda g, x, m, n: n, lambda: N)
case("chain", lambda g, x, m, n: T.softmax(
    T.reshape(T.max_pool(T.relu(T.add(T.conv2d(x, g.constant(W), padding=(1, 1)),
                                      g.constant(V[:1].repeat(6).reshape(1, 6, 1, 1)))), (3, 3)),
              (2, -1)) @ g.constant(rand(54, 10)), axis=1), None)


@pytest.fixture(scope="module")
def compiled():
    g = hpvm.TensorGraph("kitchen_sink")
    x, m, n = g.input("x", X.shape), g.input("m", M.shape), g.input("n", N.shape)
    outputs = {}
    for name, (build, _, _, _) in CASES.items():
        outputs[name] = build(g, x, m, n)
    g.output(*outputs.values(), names=list(outputs))
    function = hpvm.compile(g)
    results = function(X, m=M, n=N)
    return g, outputs, dict(zip(outputs, results))


@pytest.mark.parametrize("name", [n for n, c in CASES.items() if c[1] is not None])
def test_op_matches_numpy(compiled, name):
    _, outputs, results = compiled
    _, reference, rtol, atol = CASES[name]
    expected = reference()
    assert results[name].shape == expected.shape
    np.testing.assert_allclose(results[name], expected, rtol=rtol, atol=atol)


def test_add_of_lower_rank_constant(compiled):
    _, outputs, results = compiled
    # x + c with c of shape (9, 9): the constant gets two leading size-1 dimensions.
    add = outputs["add_lower_rank"]
    constant = next(o for o in add.op.operands if o.kind == "constant")
    np.testing.assert_allclose(results["add_lower_rank"], X + constant.array, rtol=1e-6)


def test_chain_is_a_distribution(compiled):
    _, _, results = compiled
    probabilities = results["chain"]
    assert probabilities.shape == (2, 10)
    np.testing.assert_allclose(probabilities.sum(axis=1), 1.0, rtol=1e-5)


def test_each_op_is_a_leaf_of_the_root(compiled):
    g, outputs, _ = compiled
    text = g.mlir()
    assert text.count("hpvm.leaf @") >= len(CASES)
    assert "hpvm.internal @kitchen_sink_root(" in text
    assert "func.func @kitchen_sink(" in text
    assert "hpvm.edge %relu" in text  # op-to-op flows are edges
    assert "hpvm.bind_in %in0" in text  # graph inputs are binds


def test_outputs_into_given_arrays_and_by_name():
    g = hpvm.TensorGraph("small")
    a = g.input("a", (3, 4))
    g.output(T.relu(a), T.tanh(a))
    run = hpvm.compile(g)
    data = rand(3, 4)
    out = (np.empty((3, 4), np.float32), np.empty((3, 4), np.float32))
    result = run(a=data, out=out)
    assert result[0] is out[0] and result[1] is out[1]
    np.testing.assert_allclose(out[0], np.maximum(data, 0))
    # A float64 or non-contiguous input is converted once; the results are the same.
    again = run(np.asfortranarray(data.astype(np.float64)))
    np.testing.assert_allclose(again[1], np.tanh(data), rtol=1e-5)


def test_fused_graph_gives_the_same_bits():
    g = hpvm.TensorGraph("fusable")
    x = g.input("x", (1, 2, 8, 8))
    y = T.max_pool(T.relu(T.add(T.conv2d(x, g.constant(rand(3, 2, 3, 3))),
                                g.constant(rand(1, 3, 1, 1)))), (2, 2))
    g.output(y)
    data = rand(1, 2, 8, 8)
    unfused = hpvm.compile(g)(data)
    fused = hpvm.compile(g, fuse=True)(data)
    assert np.array_equal(unfused, fused)


def test_call_errors_say_what_was_expected():
    g = hpvm.TensorGraph("checked")
    a = g.input("a", (2, 3))
    g.output(T.relu(a))
    run = hpvm.compile(g)
    with pytest.raises(hpvm.HPVMError, match=r"expects shape \(2, 3\).*found \(3, 2\)"):
        run(rand(3, 2))
    with pytest.raises(hpvm.HPVMError, match="missing argument 'a'"):
        run()
    with pytest.raises(hpvm.HPVMError, match="unknown argument"):
        run(a=rand(2, 3), b=1)
    with pytest.raises(hpvm.HPVMError, match="must be a C-contiguous array of float32"):
        run(rand(2, 3), out=[np.empty((3, 2), np.float32).T])
    # The graph writes its output while it reads its input: no overlap.
    data = rand(2, 3)
    with pytest.raises(hpvm.HPVMError, match=r"out= array for '.*' overlaps 'a'"):
        run(data, out=[data])


def test_outputs_written_in_place_are_whole():
    # The last leaf writes into the caller's array (destination passing): every
    # element is written, whatever the array held, and a second call into the
    # same array gives the same result.
    g = hpvm.TensorGraph("in_place")
    x = g.input("x", (2, 3, 9, 9))
    g.output(T.relu(T.conv2d(x, g.constant(rand(4, 3, 3, 3)), padding=(1, 1))))
    run = hpvm.compile(g, fuse=True)
    data = rand(2, 3, 9, 9)
    expected = run(data)
    out = np.full((2, 4, 9, 9), np.nan, np.float32)
    assert run(data, out=[out]) is out
    assert np.array_equal(out, expected)
    run(data, out=[out])
    assert np.array_equal(out, expected)


def test_verifier_diagnostics_reach_python():
    g = hpvm.TensorGraph("bad_softmax")
    x = g.input("x", (2, 3))
    g.output(T.softmax(x, axis=5))
    with pytest.raises(hpvm.HPVMError) as error:
        g.verify()
    assert "verifier rejected" in str(error.value)
    assert "error:" in error.value.diagnostics and "axis" in error.value.diagnostics


def test_builder_errors():
    g = hpvm.TensorGraph("builder")
    x = g.input("x", (2, 3))
    with pytest.raises(hpvm.HPVMError, match="do not broadcast"):
        T.add(x, g.constant(np.ones((4,), np.float32)))
    with pytest.raises(hpvm.HPVMError, match="has 6 elements"):
        T.reshape(x, (4, 2))
    with pytest.raises(hpvm.HPVMError, match="not a permutation"):
        T.transpose(x, (0, 0))
    with pytest.raises(hpvm.HPVMError, match="unknown kind"):
        T.pool(T.reshape(x, (1, 1, 2, 3)), "sum", (1, 1))
    other = hpvm.TensorGraph("other")
    with pytest.raises(hpvm.HPVMError, match="belongs to graph 'other'"):
        T.add(x, other.input("y", (2, 3)))
    with pytest.raises(hpvm.HPVMError, match="no outputs"):
        g.mlir()
