"""A MatMul of a batch of matrices by one matrix followed by the Add of a per-column constant
(a transformer's projection, as both exporters write nn.Linear on 3-D inputs) imports as one
product of all the rows with the bias added before they take the batch's shape again, so
that hpvm-fuse-tensor-nodes puts the add into the product's epilogue: the same bits with and
without fusion, and onnxruntime's values. Adds that are not such a bias stay as they were."""

from __future__ import annotations

import re

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import hpvm
import hpvm.onnx

from onnx_cases import make_model

ROWS, DEPTH, COLS = 2 * 7, 32, 48


def _model():
    rng = np.random.default_rng(11)

    def w(*shape):
        return (rng.standard_normal(shape) * 0.2).astype(np.float32)

    consts = [("w1", w(DEPTH, COLS)), ("b1", w(COLS)),            # bias second, [N]
              ("w2", w(DEPTH, COLS)), ("b2", w(1, 1, COLS)),      # bias first, [1, 1, N]
              ("w3", w(DEPTH, COLS)), ("b3", w(1, COLS)),         # [1, N], then ReLU
              ("w4", w(DEPTH, COLS)), ("b4", w(COLS)),            # the product read twice
              ("w5", w(DEPTH, COLS)), ("b5", w(7, 1)),            # per row: not a bias
              ("w6", w(DEPTH, COLS)), ("b6", w(1, 1, 1, COLS))]   # raises the rank
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["m1"]),
        helper.make_node("Add", ["m1", "b1"], ["a1"]),
        helper.make_node("MatMul", ["x", "w2"], ["m2"]),
        helper.make_node("Add", ["b2", "m2"], ["a2"]),
        helper.make_node("MatMul", ["x", "w3"], ["m3"]),
        helper.make_node("Add", ["m3", "b3"], ["a3"]),
        helper.make_node("Relu", ["a3"], ["r3"]),
        helper.make_node("MatMul", ["x", "w4"], ["m4"]),
        helper.make_node("Add", ["m4", "b4"], ["a4"]),
        helper.make_node("Sigmoid", ["m4"], ["s4"]),
        helper.make_node("MatMul", ["x", "w5"], ["m5"]),
        helper.make_node("Add", ["m5", "b5"], ["a5"]),
        helper.make_node("MatMul", ["x", "w6"], ["m6"]),
        helper.make_node("Add", ["m6", "b6"], ["a6"]),
        helper.make_node("ReduceSum", ["a6", "axes0"], ["a6r"], keepdims=0),
        helper.make_node("Sum", ["a1", "a2", "r3", "a4", "s4", "a5", "a6r"], ["y"]),
    ]
    consts.append(("axes0", np.array([0], np.int64)))
    model = make_model(nodes, [("x", [2, 7, DEPTH])], [("y", [2, 7, COLS])], [], opset=17)
    model.graph.initializer.extend(numpy_helper.from_array(a, n) for n, a in consts)
    return model


def test_the_bias_adds_import_into_the_products_rows():
    graph = hpvm.onnx.load(_model())
    text = graph.mlir()
    # Three adds of a [1, N] bias to the [B * S, N] rows: b1, b2, b3 (not b4, b5, b6).
    rows_add = re.findall(rf"hpvm\.tensor\.add %\w+, %\w+ : \(tensor<{ROWS}x{COLS}xf32>, "
                          rf"tensor<1x{COLS}xf32>\)", text)
    assert len(rows_add) == 3


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    path = tmp_path_factory.mktemp("bias") / "bias.onnx"
    path.write_bytes(_model().SerializeToString())
    graph = hpvm.onnx.load(str(path))
    return str(path), hpvm.compile(graph, fuse=True), hpvm.compile(graph, fuse=False)


def test_the_fused_bias_keeps_the_bits_and_matches_onnxruntime(builds):
    path, fused, plain = builds
    x = np.random.default_rng(12).standard_normal((2, 7, DEPTH)).astype(np.float32)
    got, want = np.asarray(fused(x)), np.asarray(plain(x))
    assert got.tobytes() == want.tobytes()
    reference = ort.InferenceSession(path).run(None, {"x": x})[0]
    assert np.abs(got - reference).max() <= 1e-4 * np.abs(reference).max()


def test_a_bias_of_another_type_is_not_folded():
    """A float64 bias beside float32 products is the Add's error, as before."""
    model = make_model([helper.make_node("MatMul", ["x", "w"], ["m"]),
                        helper.make_node("Add", ["m", "b"], ["y"])],
                       [("x", [2, 3, 4])], [("y", [2, 3, 5])], [("w", np.ones((4, 5), np.float32))],
                       opset=17)
    model.graph.initializer.append(numpy_helper.from_array(np.ones(5, np.float64), "b"))
    model.graph.output[0].type.tensor_type.elem_type = TensorProto.DOUBLE
    with pytest.raises(hpvm.HPVMError, match="different element types"):
        hpvm.onnx.load(model)


def test_a_batch_of_any_rank_takes_its_bias_into_the_rows():
    """[2, 3, 4, K] by [K, N] plus a [N] bias: one product of the 24 rows with the bias."""
    w = np.ones((8, 5), np.float32)
    model = make_model([helper.make_node("MatMul", ["x", "w"], ["m"]),
                        helper.make_node("Add", ["m", "b"], ["y"])],
                       [("x", [2, 3, 4, 8])], [("y", [2, 3, 4, 5])],
                       [("w", w), ("b", np.arange(5, dtype=np.float32))], opset=17)
    text = hpvm.onnx.load(model).mlir()
    assert re.search(r"hpvm\.tensor\.add %\w+, %\w+ : \(tensor<24x5xf32>, tensor<1x5xf32>\)",
                     text)
