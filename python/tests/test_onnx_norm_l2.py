"""InstanceNormalization (torch's GroupNorm with one group per channel, as in Wav2Vec2's
feature extractor) and ReduceL2 (weight normalization's norm, as the dynamo exporter writes
Wav2Vec2's positional convolution), on small graphs built with onnx.helper, compared with
onnxruntime (rtol 1e-4, atol 1e-5); and the forms the importer refuses, with their messages.
"""

from __future__ import annotations

import numpy as np
import pytest

import hpvm
import hpvm.onnx
from hpvm import HPVMError
from onnx import helper

from onnx_cases import compare_with_onnxruntime as _compare
from onnx_cases import make_model
from onnx_cases import outputs as _outputs

RNG = np.random.default_rng(57)


def _random(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def test_instance_normalization():
    x3, x4 = _random(2, 4, 7) * 3 + 1, _random(2, 3, 5, 6) * 2 - 1
    s4, b4 = _random(4), _random(4)
    s3, b3 = _random(3), _random(3)
    nodes = [helper.make_node("InstanceNormalization", ["x3", "s4", "b4"], ["rank3"]),
             helper.make_node("InstanceNormalization", ["x4", "s3", "b3"], ["rank4"],
                              epsilon=1e-2),
             # Scale and bias as graph inputs, not constants.
             helper.make_node("InstanceNormalization", ["x3", "s_in", "b_in"], ["inputs"])]
    model = make_model(nodes, [("x3", x3.shape), ("x4", x4.shape), ("s_in", (4,)),
                               ("b_in", (4,))],
                       _outputs("rank3", "rank4", "inputs"),
                       [("s4", s4), ("b4", b4), ("s3", s3), ("b3", b3)], opset=17)
    _compare(model, {"x3": x3, "x4": x4, "s_in": _random(4), "b_in": _random(4)})


def test_instance_normalization_refusals():
    ones = np.ones(3, np.float32)
    model = make_model([helper.make_node("InstanceNormalization", ["x", "s", "b"], ["y"],
                                         name="in")],
                       [("x", (2, 3))], _outputs("y"), [("s", ones), ("b", ones)], opset=17)
    with pytest.raises(HPVMError, match=r"ONNX node 'in' \(InstanceNormalization\): expected "
                                        r"an input of rank >= 3 \(N, C, D1, \.\.\.\), found "
                                        r"tensor<2x3xf32>"):
        hpvm.onnx.load(model)
    model = make_model([helper.make_node("InstanceNormalization", ["x", "s", "b"], ["y"],
                                         name="in")],
                       [("x", (2, 4, 5))], _outputs("y"), [("s", ones), ("b", ones)], opset=17)
    with pytest.raises(HPVMError, match=r"input 1 's' is tensor<3xf32>; expected \[4\] \(one "
                                        r"value per channel\)"):
        hpvm.onnx.load(model)
    model = make_model([helper.make_node("InstanceNormalization", ["x", "s", "b"], ["y"],
                                         name="in", epsilon=float("inf"))],
                       [("x", (2, 3, 5))], _outputs("y"), [("s", ones), ("b", ones)], opset=17)
    with pytest.raises(HPVMError, match=r"'in' \(InstanceNormalization\): epsilon is inf; "
                                        r"expected a finite number"):
        hpvm.onnx.load(model)


@pytest.mark.parametrize("opset", [17, 18])
def test_reduce_l2(opset):
    x = _random(3, 4, 5)
    w = _random(6, 2, 3)  # a constant: folded at import

    def node(inputs, output, axes, **attrs):
        if opset >= 18:
            return (helper.make_node("ReduceL2", inputs + [f"{output}_axes"], [output],
                                     **attrs), [(f"{output}_axes", np.array(axes, np.int64))])
        return helper.make_node("ReduceL2", inputs, [output], axes=axes, **attrs), []

    nodes, consts = [], [("w", w)]
    for n, c in (node(["x"], "last", [-1]), node(["x"], "two", [0, 2], keepdims=0),
                 node(["w"], "folded", [1, 2]), node(["x"], "middle", [1])):
        nodes.append(n)
        consts += c
    # All axes (no axes given).
    nodes.append(helper.make_node("ReduceL2", ["x"], ["all"], keepdims=0))
    # The folded constant feeds an op, so that it is an output of the graph through one.
    nodes.append(helper.make_node("Add", ["folded", "one"], ["folded_plus"]))
    consts.append(("one", np.ones((1, 1, 1), np.float32)))
    model = make_model(nodes, [("x", x.shape)],
                       _outputs("last", "two", "middle", "all", "folded_plus"), consts,
                       opset=opset)
    _compare(model, {"x": x})
