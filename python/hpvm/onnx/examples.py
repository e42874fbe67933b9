"""Small models built with onnx.helper, for the tests, the demo and the benchmarks:
a LeNet-like CNN and a MobileNet-style block (float32, random weights from a seed).

    from hpvm.onnx.examples import lenet
    model = lenet(batch=8)              # an onnx.ModelProto
    graph = hpvm.onnx.load(model)
"""

from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper, numpy_helper


def make_model(nodes, inputs, outputs, initializers=(), opset: int = 13, name: str = "model"):
    """A ModelProto of `nodes`; `inputs` / `outputs` are (name, shape) pairs of float32."""
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in outputs],
        [numpy_helper.from_array(np.asarray(a), n) for n, a in initializers])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


def lenet(batch: int = 4, seed: int = 0):
    """conv-relu-maxpool x2, flatten, gemm-relu-gemm, softmax on 1x28x28 images."""
    rng = np.random.default_rng(seed)

    def weights(*shape, scale=None):
        scale = scale or 1.0 / np.sqrt(np.prod(shape[1:]))
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    initializers = [
        ("conv1.w", weights(6, 1, 5, 5)), ("conv1.b", weights(6, scale=0.1)),
        ("conv2.w", weights(16, 6, 5, 5)), ("conv2.b", weights(16, scale=0.1)),
        ("fc1.w", weights(120, 400)), ("fc1.b", weights(120, scale=0.1)),
        ("fc2.w", weights(10, 120)), ("fc2.b", weights(10, scale=0.1)),
    ]
    nodes = [
        helper.make_node("Conv", ["input", "conv1.w", "conv1.b"], ["c1"], name="conv1",
                         pads=[2, 2, 2, 2], kernel_shape=[5, 5]),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("MaxPool", ["r1"], ["p1"], name="pool1", kernel_shape=[2, 2],
                         strides=[2, 2]),
        helper.make_node("Conv", ["p1", "conv2.w", "conv2.b"], ["c2"], name="conv2"),
        helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
        helper.make_node("MaxPool", ["r2"], ["p2"], name="pool2", kernel_shape=[2, 2],
                         strides=[2, 2]),
        helper.make_node("Flatten", ["p2"], ["f"], name="flatten", axis=1),
        helper.make_node("Gemm", ["f", "fc1.w", "fc1.b"], ["g1"], name="fc1", transB=1),
        helper.make_node("Relu", ["g1"], ["r3"], name="relu3"),
        helper.make_node("Gemm", ["r3", "fc2.w", "fc2.b"], ["g2"], name="fc2", transB=1),
        helper.make_node("Softmax", ["g2"], ["probabilities"], name="softmax", axis=1),
    ]
    return make_model(nodes, [("input", (batch, 1, 28, 28))],
                      [("probabilities", (batch, 10))], initializers, name="lenet")


def mobilenet_block(batch: int = 2, channels: int = 8, out_channels: int = 16,
                    size: int = 16, seed: int = 1):
    """Depthwise 3x3 conv (group = C, stride 2) + BN + ReLU6 (Clip 0..6), pointwise
    1x1 conv + BN + ReLU6."""
    rng = np.random.default_rng(seed)

    def bn(prefix, c):
        return [(f"{prefix}.gamma", rng.uniform(0.5, 1.5, c).astype(np.float32)),
                (f"{prefix}.beta", rng.normal(0, 0.1, c).astype(np.float32)),
                (f"{prefix}.mean", rng.normal(0, 0.1, c).astype(np.float32)),
                (f"{prefix}.var", rng.uniform(0.5, 1.5, c).astype(np.float32))]

    initializers = [
        ("dw.w", (rng.standard_normal((channels, 1, 3, 3)) / 3).astype(np.float32)),
        *bn("bn1", channels),
        ("pw.w", (rng.standard_normal((out_channels, channels, 1, 1))
                  / np.sqrt(channels)).astype(np.float32)),
        *bn("bn2", out_channels),
        ("zero", np.array(0.0, np.float32)), ("six", np.array(6.0, np.float32)),
    ]
    nodes = [
        helper.make_node("Conv", ["input", "dw.w"], ["d"], name="depthwise", group=channels,
                         pads=[1, 1, 1, 1], strides=[2, 2], kernel_shape=[3, 3]),
        helper.make_node("BatchNormalization",
                         ["d", "bn1.gamma", "bn1.beta", "bn1.mean", "bn1.var"], ["b1"],
                         name="bn1", epsilon=1e-3),
        helper.make_node("Clip", ["b1", "zero", "six"], ["a1"], name="relu6_1"),
        helper.make_node("Conv", ["a1", "pw.w"], ["p"], name="pointwise", kernel_shape=[1, 1]),
        helper.make_node("BatchNormalization",
                         ["p", "bn2.gamma", "bn2.beta", "bn2.mean", "bn2.var"], ["b2"],
                         name="bn2", epsilon=1e-3),
        helper.make_node("Clip", ["b2", "zero", "six"], ["output"], name="relu6_2"),
    ]
    half = size // 2
    return make_model(nodes, [("input", (batch, channels, size, size))],
                      [("output", (batch, out_channels, half, half))], initializers,
                      name="mobilenet_block")
