"""Small CNNs built with onnx.helper, imported by hpvm.onnx and compared with
onnxruntime; and the `python -m hpvm.onnx` command line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper

import hpvm
import hpvm.onnx
from hpvm.onnx.examples import lenet, make_model, mobilenet_block
from onnx_cases import run_onnxruntime

RTOL, ATOL = 1e-4, 1e-5


def _compare(model, feeds, fuse=(False,)):
    expected = run_onnxruntime(model, feeds)
    graph = hpvm.onnx.load(model)
    for fused in fuse:
        got = hpvm.run(graph, feeds, fuse=fused)
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            assert g.shape == e.shape
            np.testing.assert_allclose(g, e, rtol=RTOL, atol=ATOL)
    return graph


def test_lenet_matches_onnxruntime():
    rng = np.random.default_rng(7)
    x = rng.random((4, 1, 28, 28), dtype=np.float32)
    graph = _compare(lenet(), {"input": x})
    text = graph.mlir()
    assert text.count("hpvm.tensor.conv2d") == 2
    assert text.count("hpvm.tensor.pool max") == 2
    assert "hpvm.tensor.softmax" in text


def test_mobilenet_block_matches_onnxruntime():
    rng = np.random.default_rng(8)
    x = (rng.standard_normal((2, 8, 16, 16)) * 2).astype(np.float32)
    graph = _compare(mobilenet_block(), {"input": x}, fuse=(False, True))
    text = graph.mlir()
    # Both BatchNormalizations are folded into the convs before them (now with biases).
    assert "hpvm.tensor.batchnorm" not in text
    assert text.count("hpvm.tensor.add") == 2
    assert text.count("hpvm.tensor.clipped_relu") == 2
    assert text.count("hpvm.tensor.conv2d") == 2
    assert "groups = 8" in text  # the depthwise one


# --------------------------------------------------------------------------
# The command line
# --------------------------------------------------------------------------

def _cli(*args):
    env = dict(os.environ)
    package_root = str(Path(hpvm.__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
    return subprocess.run([sys.executable, "-m", "hpvm.onnx", *map(str, args)],
                          capture_output=True, text=True, env=env)


def test_cli_writes_verified_mlir(tmp_path):
    model_path = tmp_path / "lenet.onnx"
    model_path.write_bytes(lenet().SerializeToString())
    output = tmp_path / "lenet.mlir"
    result = _cli(model_path, "-o", output, "--batch-size", "4")
    assert result.returncode == 0, result.stderr
    text = output.read_text()
    assert "hpvm.tensor.conv2d" in text
    assert "func.func @lenet(%in0: memref<4x1x28x28xf32>" in text


def test_cli_input_shape(tmp_path):
    node = helper.make_node("Relu", ["x"], ["y"], name="r")
    graph = helper.make_graph(
        [node], "dyn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ("N", "C"))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model_path = tmp_path / "dyn.onnx"
    model_path.write_bytes(helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString())
    result = _cli(model_path)
    assert result.returncode == 1
    assert "hpvm-onnx: error:" in result.stderr and "dynamic dimension 1 ('C')" in result.stderr
    result = _cli(model_path, "--input-shape", "x=3x5")
    assert result.returncode == 0, result.stderr
    assert "memref<3x5xf32>" in result.stdout


def test_cli_unsupported_op(tmp_path):
    node = helper.make_node("Einsum", ["a", "b"], ["c"], name="contract7", equation="ij,jk->ik")
    model = make_model([node], [("a", (2, 3)), ("b", (3, 4))], [("c", (2, 4))])
    model_path = tmp_path / "einsum.onnx"
    model_path.write_bytes(model.SerializeToString())
    output = tmp_path / "einsum.mlir"
    result = _cli(model_path, "-o", output)
    assert result.returncode == 1
    assert result.stderr.startswith("hpvm-onnx: error: ONNX node 'contract7' (Einsum): "
                                    "the operator Einsum is not supported")
    assert not output.exists()


def test_cli_missing_model(tmp_path):
    result = _cli(tmp_path / "missing.onnx")
    assert result.returncode == 1
    assert "hpvm-onnx: error:" in result.stderr and "does not exist" in result.stderr


def test_main_returns_status(tmp_path, capsys):
    from hpvm.onnx.__main__ import main

    model_path = tmp_path / "block.onnx"
    model_path.write_bytes(mobilenet_block().SerializeToString())
    assert main([str(model_path), "-o", str(tmp_path / "block.mlir")]) == 0
    assert "hpvm.tensor.clipped_relu" in (tmp_path / "block.mlir").read_text()
    assert main([str(tmp_path / "missing.onnx")]) == 1
    assert "hpvm-onnx: error:" in capsys.readouterr().err


def attention_head(batch: int = 2, tokens: int = 5, width: int = 8, seed: int = 2):
    """Single-head self-attention with a residual: MatMul, Transpose, Div, Softmax,
    Add, Reshape, Sigmoid gating and Mul."""
    rng = np.random.default_rng(seed)

    def weights(*shape):
        return (rng.standard_normal(shape) / np.sqrt(shape[0])).astype(np.float32)

    initializers = [("wq", weights(width, width)), ("wk", weights(width, width)),
                    ("wv", weights(width, width)), ("scale", np.array(np.sqrt(width), np.float32)),
                    ("bias", weights(1, width)[0]),
                    ("flat", np.array([batch * tokens, width], np.int64)),
                    ("back", np.array([batch, tokens, width], np.int64))]
    nodes = [
        helper.make_node("MatMul", ["x", "wq"], ["q"], name="q"),
        helper.make_node("MatMul", ["x", "wk"], ["k"], name="k"),
        helper.make_node("MatMul", ["x", "wv"], ["v"], name="v"),
        helper.make_node("Transpose", ["k"], ["kt"], name="kt", perm=[0, 2, 1]),
        helper.make_node("MatMul", ["q", "kt"], ["s"], name="scores"),
        helper.make_node("Div", ["s", "scale"], ["ss"], name="scaled"),
        helper.make_node("Softmax", ["ss"], ["p"], name="attention", axis=-1),
        helper.make_node("MatMul", ["p", "v"], ["o"], name="mix"),
        helper.make_node("Add", ["o", "x"], ["r"], name="residual"),
        helper.make_node("Reshape", ["r", "flat"], ["r2"], name="rows"),
        helper.make_node("Add", ["r2", "bias"], ["rb"], name="bias"),
        helper.make_node("Sigmoid", ["rb"], ["gate"], name="gate"),
        helper.make_node("Mul", ["rb", "gate"], ["swish"], name="swish"),
        helper.make_node("Reshape", ["swish", "back"], ["y"], name="unrows"),
    ]
    return make_model(nodes, [("x", (batch, tokens, width))], [("y", (batch, tokens, width)),
                                                               ("p", (batch, tokens, tokens))],
                      initializers, name="attention")


def test_attention_head_matches_onnxruntime():
    x = np.random.default_rng(9).standard_normal((2, 5, 8)).astype(np.float32)
    graph = _compare(attention_head(), {"x": x})
    assert graph.output_names == ["y", "p"]


def residual_block(batch: int = 2, channels: int = 4, size: int = 8, seed: int = 3):
    """A stem conv + ReLU whose result feeds both a conv-BN-ReLU-conv path and the
    skip connection (one value, two consumers), then Add, ReLU, GlobalAveragePool."""
    rng = np.random.default_rng(seed)
    c = channels

    def conv_w():
        return (rng.standard_normal((c, c, 3, 3)) / np.sqrt(9 * c)).astype(np.float32)

    initializers = [
        ("stem.w", conv_w()), ("c1.w", conv_w()), ("c2.w", conv_w()),
        ("c2.b", rng.normal(0, 0.1, c).astype(np.float32)),
        ("bn.gamma", rng.uniform(0.5, 1.5, c).astype(np.float32)),
        ("bn.beta", rng.normal(0, 0.1, c).astype(np.float32)),
        ("bn.mean", rng.normal(0, 0.1, c).astype(np.float32)),
        ("bn.var", rng.uniform(0.5, 1.5, c).astype(np.float32)),
    ]
    nodes = [
        helper.make_node("Conv", ["input", "stem.w"], ["s"], name="stem", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["s"], ["sr"], name="stem_relu"),
        helper.make_node("Conv", ["sr", "c1.w"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization",
                         ["c1", "bn.gamma", "bn.beta", "bn.mean", "bn.var"], ["b1"], name="bn1"),
        helper.make_node("Relu", ["b1"], ["r1"], name="relu1"),
        helper.make_node("Conv", ["r1", "c2.w", "c2.b"], ["c2"], name="conv2",
                         auto_pad="SAME_UPPER"),
        helper.make_node("Add", ["c2", "sr"], ["sum"], name="skip"),
        helper.make_node("Relu", ["sum"], ["out"], name="relu2"),
        helper.make_node("GlobalAveragePool", ["out"], ["pooled"], name="gap"),
    ]
    return make_model(nodes, [("input", (batch, c, size, size))],
                      [("pooled", (batch, c, 1, 1))], initializers, name="residual")


def test_residual_block_matches_onnxruntime():
    x = np.random.default_rng(10).standard_normal((2, 4, 8, 8)).astype(np.float32)
    _compare(residual_block(), {"input": x})


def _conv_bn_model(conv_bias: bool, bn_on_input: bool, shared: bool):
    """Conv (3x3, pads 1, optional bias) -> BatchNormalization -> Clip(0, 6), plus a
    BatchNormalization straight on the graph input when bn_on_input (not foldable), and
    the conv's output also as a graph output when shared (not foldable)."""
    rng = np.random.default_rng(11)
    c, f = 3, 5
    initializers = [
        ("w", (rng.standard_normal((f, c, 3, 3)) / 5).astype(np.float32)),
        ("b", rng.normal(0, 0.5, f).astype(np.float32)),
        ("gamma", rng.uniform(0.5, 1.5, f).astype(np.float32)),
        ("beta", rng.normal(0, 0.1, f).astype(np.float32)),
        ("mean", rng.normal(0, 0.3, f).astype(np.float32)),
        ("var", rng.uniform(0.2, 1.5, f).astype(np.float32)),
        ("in.gamma", rng.uniform(0.5, 1.5, c).astype(np.float32)),
        ("in.beta", rng.normal(0, 0.1, c).astype(np.float32)),
        ("in.mean", rng.normal(0, 0.3, c).astype(np.float32)),
        ("in.var", rng.uniform(0.2, 1.5, c).astype(np.float32)),
        ("zero", np.array(0.0, np.float32)), ("six", np.array(6.0, np.float32)),
    ]
    nodes = []
    source = "input"
    if bn_on_input:
        nodes.append(helper.make_node("BatchNormalization",
                                      ["input", "in.gamma", "in.beta", "in.mean", "in.var"],
                                      ["normed"], name="bn_in"))
        source = "normed"
    nodes += [
        helper.make_node("Conv", [source, "w"] + (["b"] if conv_bias else []), ["conv"],
                         name="conv", pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["conv", "gamma", "beta", "mean", "var"],
                         ["bn"], name="bn", epsilon=1e-3),
        helper.make_node("Clip", ["bn", "zero", "six"], ["output"], name="relu6"),
    ]
    outputs = [("output", (2, f, 6, 6))] + ([("conv", (2, f, 6, 6))] if shared else [])
    return make_model(nodes, [("input", (2, c, 6, 6))], outputs, initializers, name="conv_bn")


@pytest.mark.parametrize("conv_bias", [False, True])
def test_batchnorm_folded_into_conv(conv_bias):
    x = (np.random.default_rng(12).standard_normal((2, 3, 6, 6)) * 2).astype(np.float32)
    graph = _compare(_conv_bn_model(conv_bias, bn_on_input=True, shared=False), {"input": x},
                     fuse=(False, True))
    text = graph.mlir()
    # The BN after the conv is folded (the conv gets a [1, F, 1, 1] bias add); the one on
    # the graph input has no conv to fold into: with constant statistics it is a
    # per-channel multiply-add ([1, C, 1, 1] scale and shift), no division per element.
    assert "hpvm.tensor.batchnorm" not in text
    assert "tensor<3xf32>" not in text and "tensor<5xf32>" not in text
    assert text.count("hpvm.tensor.add") == 2
    assert "tensor<1x5x1x1xf32>" in text and "tensor<1x3x1x1xf32>" in text
    assert "hpvm.tensor.clipped_relu" in text


def test_batchnorm_not_folded_when_conv_output_is_shared():
    x = np.random.default_rng(13).standard_normal((2, 3, 6, 6)).astype(np.float32)
    graph = _compare(_conv_bn_model(True, bn_on_input=False, shared=True), {"input": x})
    text = graph.mlir()
    # Not folded: a per-channel multiply-add of its own.
    assert "hpvm.tensor.batchnorm" not in text and text.count("hpvm.tensor.add") == 2


def test_batchnorm_of_doubles_computes_its_scale_in_doubles():
    """Constant statistics of an f64 input: the scale and shift are made in f64 (made in
    f32 they were 1e-8 off)."""
    rng = np.random.default_rng(15)
    c = 3
    stats = {"gamma": rng.uniform(0.5, 1.5, c), "beta": rng.normal(0, 0.1, c),
             "mean": rng.normal(0, 0.3, c), "var": rng.uniform(0.2, 1.5, c)}
    from onnx import numpy_helper
    graph = helper.make_graph(
        [helper.make_node("BatchNormalization", ["input", *stats], ["output"], name="bn",
                          epsilon=1e-3)], "bn_f64",
        [helper.make_tensor_value_info("input", TensorProto.DOUBLE, (1, c, 4, 4))],
        [helper.make_tensor_value_info("output", TensorProto.DOUBLE, (1, c, 4, 4))],
        [numpy_helper.from_array(v, k) for k, v in stats.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    x = rng.standard_normal((1, c, 4, 4))
    g = hpvm.onnx.load(model)
    assert "hpvm.tensor.batchnorm" not in g.mlir()
    got = hpvm.run(g, {"input": x})[0]
    scale = stats["gamma"] / np.sqrt(stats["var"] + float(np.float32(1e-3)))  # an f32 attribute
    want = x * scale[:, None, None] + (stats["beta"] - stats["mean"] * scale)[:, None, None]
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-14)


def test_batchnorm_with_statistics_from_inputs_stays_an_op():
    """Statistics that are graph inputs are not known when importing: the op divides."""
    rng = np.random.default_rng(14)
    c = 4
    stats = ["gamma", "beta", "mean", "var"]
    model = make_model([helper.make_node("BatchNormalization", ["input"] + stats, ["output"],
                                         name="bn", epsilon=1e-3)],
                       [("input", (2, c, 5, 5))] + [(name, (c,)) for name in stats],
                       [("output", (2, c, 5, 5))], [], name="bn_inputs")
    feeds = {"input": rng.standard_normal((2, c, 5, 5)).astype(np.float32),
             "gamma": rng.uniform(0.5, 1.5, c).astype(np.float32),
             "beta": rng.normal(0, 0.1, c).astype(np.float32),
             "mean": rng.normal(0, 0.3, c).astype(np.float32),
             "var": rng.uniform(0.2, 1.5, c).astype(np.float32)}
    graph = _compare(model, feeds)
    assert graph.mlir().count("hpvm.tensor.batchnorm") == 1
