"""ONNX Erf and Gelu on float32 tensors: computed in float32 arithmetic without calls (a
polynomial erf, a polynomial exp for the tanh form), so that the loops vectorize.

The compiled erf is measured against math.erf (float64) over a dense sweep of [-10, 10],
every float32 near the switch between the two polynomials and the special values; Gelu
(exact and tanh) against its float64 formula; and constant folding (NumPy) must give the
very bits the compiled code gives.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

import hpvm
import hpvm.onnx
from onnx import TensorProto, helper

from onnx_cases import make_model

F32 = np.float32
SPECIALS = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1e-45, -1e-45, 1e-40,
                     -1e-40, 1.1754942e-38, 1e-30, 3.4028235e38, -3.4028235e38, 3.92,
                     -3.92, 1.0, -1.0, np.nextafter(F32(1), F32(0))], F32)


def _sweep(count: int) -> np.ndarray:
    # A dense sweep, every float32 of [0.99, 1.01] (the two polynomials meet at 1), and
    # the special values.
    lo, hi = np.array([0.99, 1.01], F32).view(np.int32)
    near_one = np.arange(lo, hi, dtype=np.int32).view(F32)
    return np.concatenate([np.linspace(-10, 10, count, dtype=F32), near_one, -near_one,
                           SPECIALS])


def _compiled(nodes, x, outputs, constant=None):
    """Compiles the nodes (fused, as the model zoo runs) on a graph input x, or folds them
    at import when `constant` names an initializer holding x."""
    inits = [(constant, x)] if constant else []
    inputs = [] if constant else [("x", x.shape)]
    model = make_model(nodes, inputs, [(n, None) for n in outputs], inits, opset=20)
    graph = hpvm.onnx.load(model)
    if constant:
        return graph
    results = hpvm.compile(graph, fuse=True)(x)
    return (list(results) if isinstance(results, (list, tuple)) else [results]), graph


def _reference_erf(x: np.ndarray) -> np.ndarray:
    return np.frompyfunc(math.erf, 1, 1)(x.astype(np.float64)).astype(np.float64)


def test_erf_f32_error_bound_and_special_values():
    x = _sweep(10_000_001)
    (y,), graph = _compiled([helper.make_node("Erf", ["x"], ["y"])], x, ["y"])
    assert y.dtype == F32
    text = graph.mlir()
    assert not re.search(r"math\.(exp|erf|tanh)|f64", text), "erf should be f32 arithmetic"
    finite = ~np.isnan(x)
    error = np.abs(y[finite].astype(np.float64) - _reference_erf(x[finite]))
    assert error.max() <= 2e-7, (error.max(), x[finite][np.argmax(error)])
    assert np.all(np.isnan(y[np.isnan(x)]))
    assert y[x == np.inf].tolist() == [1.0] and y[x == -np.inf].tolist() == [-1.0]
    assert np.all(np.signbit(y[finite]) == np.signbit(x[finite]))   # -0 gives -0
    assert np.all(np.abs(y[finite]) <= 1)
    # Tiny inputs (denormals included) give 2 / sqrt(pi) x.
    tiny = (np.abs(x) < 1e-30) & (x != 0)
    np.testing.assert_allclose(y[tiny], 2 / math.sqrt(math.pi) * x[tiny].astype(np.float64),
                               rtol=1e-6, atol=1e-45)


def test_erf_is_odd():
    x = np.linspace(0, 6, 100_001, dtype=F32)
    (y, z), _ = _compiled([helper.make_node("Erf", ["x"], ["y"]),
                           helper.make_node("Neg", ["x"], ["n"]),
                           helper.make_node("Erf", ["n"], ["z"])], x, ["y", "z"])
    assert np.array_equal(y, -z)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_f32_error(approximate):
    x = np.concatenate([np.linspace(-10, 10, 1_000_001, dtype=F32), SPECIALS[:2]])
    node = helper.make_node("Gelu", ["x"], ["y"], approximate=approximate)
    (y,), graph = _compiled([node], x, ["y"])
    assert not re.search(r"math\.(exp|erf|tanh)|f64", graph.mlir())
    x64 = x.astype(np.float64)
    if approximate == "tanh":
        ref = 0.5 * x64 * (1 + np.tanh(math.sqrt(2 / math.pi) * (x64 + 0.044715 * x64 ** 3)))
    else:
        ref = 0.5 * x64 * (1 + _reference_erf(x64 / math.sqrt(2)))
    error = np.abs(y - ref)
    # The model zoo's check is max|diff| / max|ref| <= 1e-4; measured 5e-8.
    assert error.max() / np.abs(ref).max() <= 1e-6
    # Pointwise: a few ulp of the result, or of 1 + erf where that cancels (x < 0).
    assert np.all(error <= 4e-7 * np.maximum(np.abs(ref), np.abs(x64)) + 1e-37)
    assert np.array_equal(np.signbit(y[x == 0]), np.signbit(x[x == 0]))
    # Extreme inputs: x for large x, 0 for very negative x, NaN for NaN.
    edge = np.array([np.inf, 3.4e38, 1e20, 50.0, -50.0, -1e20, -3.4e38, np.nan], F32)
    (e,), _ = _compiled([node], edge, ["y"])
    assert e[:4].tolist() == edge[:4].tolist()
    assert np.all(e[4:7] == 0) and np.isnan(e[7])


@pytest.mark.parametrize("op, attributes", [("Erf", {}), ("Gelu", {}),
                                            ("Gelu", {"approximate": "tanh"})])
def test_folding_gives_the_compiled_bits(op, attributes):
    """A constant input is folded by NumPy at import: the same float32 operations in the
    same order, so the same bits as the compiled leaf."""
    x = _sweep(200_001)
    node = helper.make_node(op, ["x"], ["y"], **attributes)
    (compiled,), _ = _compiled([node], x, ["y"])
    # Folded: the constant input, then y + 0 so that the graph computes something.
    nodes = [helper.make_node(op, ["c"], ["f"], **attributes),
             helper.make_node("Add", ["f", "zero"], ["y"])]
    model = make_model(nodes, [("zero", (1,))], [("y", None)], [("c", x)], opset=20)
    graph = hpvm.onnx.load(model)
    assert op not in graph.mlir() and "math." not in graph.mlir()
    (folded,) = hpvm.run(graph, [np.zeros(1, F32)])
    assert np.array_equal(folded, compiled, equal_nan=True)


def test_float64_erf_and_gelu_stay_float64():
    x = np.linspace(-5, 5, 101)
    nodes = [helper.make_node("Erf", ["x"], ["e"]), helper.make_node("Gelu", ["x"], ["g"])]
    graph = helper.make_graph(nodes, "f64",
                              [helper.make_tensor_value_info("x", TensorProto.DOUBLE, x.shape)],
                              [helper.make_tensor_value_info(n, TensorProto.DOUBLE, None)
                               for n in ("e", "g")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    e, g = hpvm.run(hpvm.onnx.load(model), [x])
    erf = _reference_erf(x)
    np.testing.assert_allclose(e, erf, rtol=0, atol=1e-8)
    np.testing.assert_allclose(g, 0.5 * x * (1 + _reference_erf(x / math.sqrt(2))),
                               rtol=0, atol=1e-8)
