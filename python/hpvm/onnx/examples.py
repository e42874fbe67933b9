"""Small models built with onnx.helper, for the tests, the demo and the benchmarks:
a LeNet-like CNN, a MobileNet-style block and a ResNet-18 (float32, random weights from
a seed).

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


def resnet18(batch: int = 1, size: int = 224, classes: int = 1000, seed: int = 2):
    """ResNet-18 as torchvision defines it (7x7 stem, max pool, four stages of two
    basic blocks with 1x1 downsampling, global average pool, fully connected), with
    BatchNormalization after every convolution; any `size` that is a multiple of 32."""
    rng = np.random.default_rng(seed)
    initializers, nodes = [], []

    def conv_bn(x, name, cin, cout, kernel, stride, relu):
        w = (rng.standard_normal((cout, cin, kernel, kernel))
             * np.sqrt(2.0 / (cin * kernel * kernel))).astype(np.float32)
        initializers.extend([
            (f"{name}.w", w),
            (f"{name}.gamma", rng.uniform(0.5, 1.0, cout).astype(np.float32)),
            (f"{name}.beta", rng.normal(0, 0.1, cout).astype(np.float32)),
            (f"{name}.mean", rng.normal(0, 0.1, cout).astype(np.float32)),
            (f"{name}.var", rng.uniform(0.5, 1.5, cout).astype(np.float32))])
        pad = kernel // 2
        nodes.append(helper.make_node("Conv", [x, f"{name}.w"], [f"{name}.c"], name=name,
                                      kernel_shape=[kernel, kernel], strides=[stride, stride],
                                      pads=[pad] * 4))
        nodes.append(helper.make_node(
            "BatchNormalization", [f"{name}.c", f"{name}.gamma", f"{name}.beta",
                                   f"{name}.mean", f"{name}.var"], [f"{name}.bn"],
            name=f"{name}_bn"))
        if not relu:
            return f"{name}.bn"
        nodes.append(helper.make_node("Relu", [f"{name}.bn"], [f"{name}.r"],
                                      name=f"{name}_relu"))
        return f"{name}.r"

    x = conv_bn("input", "stem", 3, 64, 7, 2, relu=True)
    nodes.append(helper.make_node("MaxPool", [x], ["stem.pool"], name="stem_pool",
                                  kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]))
    x, channels = "stem.pool", 64
    for stage, width in enumerate((64, 128, 256, 512)):
        for block in range(2):
            name = f"layer{stage + 1}.{block}"
            stride = 2 if stage > 0 and block == 0 else 1
            y = conv_bn(x, f"{name}.conv1", channels, width, 3, stride, relu=True)
            y = conv_bn(y, f"{name}.conv2", width, width, 3, 1, relu=False)
            shortcut = x
            if stride != 1 or channels != width:
                shortcut = conv_bn(x, f"{name}.down", channels, width, 1, stride, relu=False)
            nodes.append(helper.make_node("Add", [y, shortcut], [f"{name}.sum"],
                                          name=f"{name}_add"))
            nodes.append(helper.make_node("Relu", [f"{name}.sum"], [f"{name}.out"],
                                          name=f"{name}_relu"))
            x, channels = f"{name}.out", width
    nodes.append(helper.make_node("GlobalAveragePool", [x], ["pooled"], name="avgpool"))
    nodes.append(helper.make_node("Flatten", ["pooled"], ["flat"], name="flatten", axis=1))
    initializers.extend([
        ("fc.w", (rng.standard_normal((classes, 512)) / np.sqrt(512)).astype(np.float32)),
        ("fc.b", rng.normal(0, 0.1, classes).astype(np.float32))])
    nodes.append(helper.make_node("Gemm", ["flat", "fc.w", "fc.b"], ["logits"], name="fc",
                                  transB=1))
    return make_model(nodes, [("input", (batch, 3, size, size))],
                      [("logits", (batch, classes))], initializers, name="resnet18")
