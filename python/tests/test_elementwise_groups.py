"""Groups of elementwise leaves fused into one (hpvm-fuse-tensor-nodes after its chains):
GELU as the exporters write it (Div, Erf, Add, Mul, Mul), a layer scale and a residual add
give the same bits with and without fusion, and onnxruntime's values."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import helper

import hpvm
import hpvm.onnx

from onnx_cases import make_model


def _block():
    rng = np.random.default_rng(3)
    w = (rng.standard_normal((32, 64)) * 0.2).astype(np.float32)
    b = rng.standard_normal(64).astype(np.float32)
    gamma = rng.standard_normal(64).astype(np.float32)
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["m"]),
        helper.make_node("Add", ["m", "b"], ["h"]),
        helper.make_node("Div", ["h", "sqrt2"], ["d"]),
        helper.make_node("Erf", ["d"], ["e"]),
        helper.make_node("Add", ["e", "one"], ["e1"]),
        helper.make_node("Mul", ["h", "e1"], ["g"]),
        helper.make_node("Mul", ["g", "half"], ["gelu"]),
        helper.make_node("Mul", ["gelu", "gamma"], ["scaled"]),
        helper.make_node("Relu", ["m"], ["r"]),
        helper.make_node("Add", ["scaled", "r"], ["y"]),
    ]
    consts = [("w", w), ("b", b), ("gamma", gamma), ("sqrt2", np.array(1.4142135, np.float32)),
              ("one", np.array(1.0, np.float32)), ("half", np.array(0.5, np.float32))]
    return make_model(nodes, [("x", [2, 49, 32])], [("y", [2, 49, 64])], consts, opset=17)


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    path = tmp_path_factory.mktemp("groups") / "block.onnx"
    path.write_bytes(_block().SerializeToString())
    graph = hpvm.onnx.load(str(path))
    return str(path), hpvm.compile(graph, fuse=True), hpvm.compile(graph, fuse=False)


def test_groups_keep_the_bits_and_match_onnxruntime(builds):
    path, fused, plain = builds
    x = np.random.default_rng(4).standard_normal((2, 49, 32)).astype(np.float32) * 3
    got, want = np.asarray(fused(x)), np.asarray(plain(x))
    assert got.tobytes() == want.tobytes()
    reference = ort.InferenceSession(path).run(None, {"x": x})[0]
    assert np.abs(got - reference).max() <= 1e-4 * np.abs(reference).max()
