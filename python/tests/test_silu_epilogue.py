"""SiLU (ONNX's Sigmoid, then Mul(x, sigmoid(x))), Sigmoid and HardSwish (the importer's map,
which the kernels apply operation for operation) after a convolution or a
product run in the kernel's epilogue once the graph is fused (hpvm-fuse-tensor-nodes fuses
the diamond into the convolution's leaf, the kernel call takes the activation), and the
results are the unfused graph's, bit for bit: the runtime's sigmoid is the compiled code's
expansion of hpvm.tensor.sigmoid, operation for operation. Every convolution strategy of
the runtime is covered (direct rows, across filters, pointwise, depthwise, strided tap
lists, strided few filters through the im2col product) and products (Gemm).
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import hpvm
import hpvm.onnx
from hpvm import toolchain
from onnx import TensorProto, helper, numpy_helper

from onnx_cases import run_onnxruntime

F32 = np.float32


def _model(kind: str, activation: str, swapped: bool = False, **shape):
    """A graph of one Conv (or Gemm) with bias, then the activation ("silu": Sigmoid and
    Mul of the layer's result and the sigmoid; "sigmoid")."""
    rng = np.random.default_rng(7)
    nodes, inits = [], []
    if kind == "conv":
        n, c, h, w, f = shape["n"], shape["c"], shape["h"], shape["w"], shape["f"]
        k, stride, group = shape.get("k", 3), shape.get("stride", 1), shape.get("group", 1)
        x_shape = [n, c, h, w]
        weights = rng.standard_normal((f, c // group, k, k)).astype(F32) * 2
        inits.append(numpy_helper.from_array(weights, "W"))
        nodes.append(helper.make_node("Conv", ["x", "W", "B"], ["z"], pads=[k // 2] * 4,
                                      strides=[stride, stride], group=group))
        bias_size = f
    else:
        m, k, n = shape["m"], shape["k"], shape["n"]
        x_shape = [m, k]
        inits.append(numpy_helper.from_array(rng.standard_normal((k, n)).astype(F32), "W"))
        nodes.append(helper.make_node("Gemm", ["x", "W", "B"], ["z"]))
        bias_size = n
    inits.append(numpy_helper.from_array(rng.standard_normal(bias_size).astype(F32), "B"))
    if activation == "hardswish":
        nodes.append(helper.make_node("HardSwish", ["z"], ["s"]))
    else:
        nodes.append(helper.make_node("Sigmoid", ["z"], ["s"]))
    out = "s"
    if activation == "silu":
        nodes.append(helper.make_node("Mul", ["s", "z"] if swapped else ["z", "s"], ["y"]))
        out = "y"
    graph = helper.make_graph(
        nodes, "silu", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
        [helper.make_tensor_value_info(out, TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    x = (rng.standard_normal(x_shape) * 3).astype(F32)
    x.flat[:4] = [0.0, -0.0, 40.0, -40.0]
    return model, x


CASES = {
    "direct": ("conv", dict(n=2, c=8, h=9, w=37, f=16)),
    "narrow": ("conv", dict(n=2, c=12, h=5, w=5, f=37)),
    "pointwise": ("conv", dict(n=1, c=24, h=14, w=14, f=40, k=1)),
    "depthwise": ("conv", dict(n=1, c=16, h=13, w=19, f=16, group=16)),
    "depthwise_strided": ("conv", dict(n=1, c=8, h=12, w=17, f=8, group=8, stride=2)),
    "strided": ("conv", dict(n=2, c=9, h=15, w=17, f=29, stride=2)),
    "strided_few_filters": ("conv", dict(n=2, c=5, h=23, w=29, f=3, stride=2)),
    "gemm": ("gemm", dict(m=5, k=33, n=70)),
}


@pytest.mark.parametrize("activation", ["silu", "sigmoid", "hardswish"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_fused_equals_unfused_bit_for_bit(case, activation):
    kind, shape = CASES[case]
    model, x = _model(kind, activation, swapped=case == "direct", **shape)
    graph = hpvm.onnx.load(model)
    # Fused: one leaf, whose layer call takes the activation.
    fused_text = toolchain.run_opt(graph.mlir(), ["--hpvm-fuse-tensor-nodes"])
    root = fused_text[fused_text.index("hpvm.internal"):]
    assert len(re.findall(r"hpvm\.create_node", root)) == 1, fused_text
    fused_name = re.search(r"hpvm\.create_node @(\S+) ", root).group(1)
    lowered = toolchain.run_opt(fused_text, ["--convert-hpvm-tensor-to-linalg"])
    leaf = next(chunk for chunk in lowered.split("hpvm.leaf @")
                if chunk.startswith(fused_name + "("))
    leaf = leaf.split("hpvm.internal @")[0]
    code = {"silu": 4, "sigmoid": 3, "hardswish": 5}[activation]
    call = re.search(r"call @hpvm_rt_tensor_(conv2d_constant|matmul_constant)_f32\(([^)]*)\)", leaf)
    assert call, leaf
    activation_arg = call.group(2).split(", ")[-2]
    assert re.search(rf"^\s*{re.escape(activation_arg)} = arith\.constant {code} : i64$", leaf,
                     re.M), (activation_arg, leaf)
    assert "linalg.generic" not in leaf.split(call.group(0))[1], leaf

    fused = np.asarray(hpvm.compile(graph, fuse=True)(x))
    unfused = np.asarray(hpvm.compile(graph, fuse=False)(x))
    assert fused.dtype == F32 and fused.shape == unfused.shape
    same = (fused.view(np.int32) == unfused.view(np.int32)) | (np.isnan(fused) & np.isnan(unfused))
    assert same.all(), (np.flatnonzero(~same)[:8], fused[~same][:8], unfused[~same][:8])
    # And the function itself: onnxruntime's, up to rounding (HardSwish's slope passes on the
    # sums' rounding, which reaches 1e-5 on these sums of up to ~60).
    expected = run_onnxruntime(model, {"x": x})[0]
    tolerance = 1e-4 if activation == "hardswish" else 2e-5
    np.testing.assert_allclose(fused, expected, rtol=2e-5, atol=tolerance)
