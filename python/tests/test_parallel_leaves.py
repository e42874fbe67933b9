"""The loops of leaves instantiated once on the runtime's pool (hpvm-parallel-leaf-loops):
elementwise ops, softmax, layer norm and reductions between the kernels give the same
bits with and without `-fno-hpvm-parallel-leaves`, and match onnxruntime; the compiled
library holds the outlined loop bodies only when the option is on."""

from __future__ import annotations

import subprocess

import numpy as np
import onnxruntime as ort
import pytest
from onnx import helper

import hpvm
import hpvm.onnx

from onnx_cases import make_model


def _model():
    rng = np.random.default_rng(7)
    w = (rng.standard_normal((48, 16, 1, 1)) * 0.25).astype(np.float32)
    b = rng.standard_normal(48).astype(np.float32)
    scale = rng.standard_normal(56).astype(np.float32)
    bias = rng.standard_normal(56).astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"]),
        helper.make_node("Sigmoid", ["c"], ["s"]),
        helper.make_node("Mul", ["c", "s"], ["silu"]),
        helper.make_node("Softmax", ["silu"], ["soft"], axis=3),
        helper.make_node("LayerNormalization", ["silu", "scale", "bias"], ["norm"], axis=-1,
                         epsilon=1e-5),
        helper.make_node("Add", ["soft", "norm"], ["sum"]),
        helper.make_node("ReduceMean", ["sum"], ["mean"], axes=[2, 3], keepdims=1),
    ]
    return make_model(nodes, [("x", [1, 16, 40, 56])],
                      [("sum", [1, 48, 40, 56]), ("mean", [1, 48, 1, 1])],
                      [("w", w), ("b", b), ("scale", scale), ("bias", bias)], opset=17)


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    model = _model()
    path = tmp_path_factory.mktemp("parallel") / "model.onnx"
    path.write_bytes(model.SerializeToString())
    graph = hpvm.onnx.load(str(path))
    return (str(path), hpvm.compile(graph, fuse=True),
            hpvm.compile(graph, fuse=True, flags=["-fno-hpvm-parallel-leaves"]))


def test_same_bits_with_and_without(builds):
    path, parallel, sequential = builds
    x = np.random.default_rng(1).standard_normal((1, 16, 40, 56)).astype(np.float32)
    for _ in range(3):  # every run, whatever boxes the threads took
        got, want = parallel(x), sequential(x)
        for a, b in zip(got, want):
            assert np.asarray(a).tobytes() == np.asarray(b).tobytes()
    reference = ort.InferenceSession(path).run(None, {"x": x})
    for a, b in zip(got, reference):
        assert np.abs(np.asarray(a) - b).max() <= 1e-4 * max(1.0, np.abs(b).max())


def _outlined_loops(library) -> int:
    symbols = subprocess.run(["nm", library.path], capture_output=True, text=True,
                             check=True).stdout
    return symbols.count("__hpvm_loop_")


def test_loops_outlined_only_when_on(builds):
    _, parallel, sequential = builds
    assert _outlined_loops(parallel) >= 3  # sigmoid, softmax's passes, layer norm, mean
    assert _outlined_loops(sequential) == 0
