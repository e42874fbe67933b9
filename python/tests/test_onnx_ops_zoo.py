"""The ONNX operators of the model zoo's CNNs and transformers (squeezenet, googlenet,
densenet, shufflenet, mobilenet_v3, mnasnet, convnext, vit, torch's TransformerEncoder)
and Resize, each on small graphs built with onnx.helper, in several attribute
combinations, compared with onnxruntime (rtol 1e-4, atol 1e-5); and the forms the
importer refuses, with their messages.

Several nodes share one model where they can (one compile for many checks): the suite
stays fast.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

import hpvm
import hpvm.onnx
from hpvm import HPVMError
from hpvm import tensor as T
from onnx import TensorProto, helper, numpy_helper

from onnx_cases import compare_with_onnxruntime as _compare
from onnx_cases import make_model
from onnx_cases import outputs as _outputs

RNG = np.random.default_rng(2024)


def _random(*shape, scale=1.0):
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


def _refused(model, pattern, **options):
    with pytest.raises(HPVMError, match=pattern) as error:
        hpvm.onnx.load(model, **options)
    return str(error.value)


# --------------------------------------------------------------------------
# Pooling with ceil_mode and count_include_pad
# --------------------------------------------------------------------------

def test_pools_with_ceil_mode():
    x = _random(2, 3, 9, 8)
    pool = dict(kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1)
    nodes = [
        helper.make_node("MaxPool", ["x"], ["max"], **pool),
        helper.make_node("MaxPool", ["x"], ["max_pads"], pads=[1, 0, 1, 2], **pool),
        helper.make_node("AveragePool", ["x"], ["avg"], **pool),
        helper.make_node("AveragePool", ["x"], ["avg_excl"], pads=[1, 1, 0, 1],
                         count_include_pad=0, **pool),
        helper.make_node("AveragePool", ["x"], ["avg_incl"], pads=[1, 1, 0, 1],
                         count_include_pad=1, **pool),
        # Kernel 2, stride 2 over 8 + 2 pads: the last window would start on the end pad
        # and is dropped (the output is 5 wide, not 6).
        helper.make_node("AveragePool", ["x"], ["avg_last"], kernel_shape=[2, 2],
                         strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1, count_include_pad=1),
        helper.make_node("MaxPool", ["x"], ["max_last"], kernel_shape=[2, 2],
                         strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1),
    ]
    names = ["max", "max_pads", "avg", "avg_excl", "avg_incl", "avg_last", "max_last"]
    model = make_model(nodes, [("x", x.shape)], _outputs(*names))
    graph = _compare(model, {"x": x})
    shapes = dict(zip(graph.output_names, (t.shape for t in graph.outputs)))
    assert shapes["max"] == (2, 3, 4, 4)          # ceil((9 - 3) / 2) + 1, ceil(5 / 2) + 1
    assert shapes["avg_last"] == (2, 3, 5, 5)
    # Every pool pads inside itself (padding_end past the end of the image): no padded
    # copy of the image is made first.
    text = graph.mlir()
    assert text.count("hpvm.tensor.pool") == 7, text
    assert "padding = [1, 0], padding_end = [1, 2]" in text, text        # max_pads
    assert "padding = [0, 0], padding_end = [0, 1]" in text, text        # max: ceil_mode
    spatial = [tuple(map(int, m)) for m in re.findall(r"tensor<2x3x(\d+)x(\d+)x", text)]
    assert spatial and all(h <= 9 and w <= 8 for h, w in spatial), text


def test_pools_with_ceil_mode_1d_and_floor_default():
    x = _random(1, 2, 10)
    nodes = [helper.make_node("MaxPool", ["x"], ["m"], kernel_shape=[3], strides=[2],
                              ceil_mode=1),
             helper.make_node("AveragePool", ["x"], ["a"], kernel_shape=[4], strides=[3],
                              pads=[1, 1], ceil_mode=1),
             # ceil_mode 1 where the division is exact: the same as ceil_mode 0.
             helper.make_node("MaxPool", ["x"], ["e"], kernel_shape=[2], strides=[2],
                              ceil_mode=1)]
    _compare(make_model(nodes, [("x", x.shape)], _outputs("m", "a", "e")), {"x": x})


def test_pool_ceil_mode_refusals():
    model = make_model([helper.make_node("MaxPool", ["x"], ["y"], name="mp", kernel_shape=[2, 2],
                                         ceil_mode=1, auto_pad="SAME_UPPER")],
                       [("x", (1, 1, 5, 5))], _outputs("y"))
    _refused(model, r"ONNX node 'mp' \(MaxPool\): ceil_mode 1 with auto_pad 'SAME_UPPER' is not "
                    r"supported; expected auto_pad NOTSET")
    model = make_model([helper.make_node("AveragePool", ["x"], ["y"], name="ap",
                                         kernel_shape=[2, 2], ceil_mode=2)],
                       [("x", (1, 1, 5, 5))], _outputs("y"))
    _refused(model, r"ONNX node 'ap' \(AveragePool\): ceil_mode 2 is not valid; expected 0 or 1")


# --------------------------------------------------------------------------
# Concat, Split, Slice, Pad, Gather
# --------------------------------------------------------------------------

def test_concat_of_tensors_and_constants():
    x, y = _random(2, 3, 4), _random(2, 1, 4)
    c = _random(2, 2, 4)
    nodes = [helper.make_node("Relu", ["x"], ["rx"]),
             helper.make_node("Concat", ["rx", "c", "y", "x"], ["along1"], axis=1),
             helper.make_node("Concat", ["x", "x"], ["last"], axis=-1),
             helper.make_node("Concat", ["c", "c"], ["constant"], axis=0),
             helper.make_node("Concat", ["x"], ["single"], axis=0)]
    model = make_model(nodes, [("x", x.shape), ("y", y.shape)],
                       _outputs("along1", "last", "constant", "single"), [("c", c)])
    _compare(model, {"x": x, "y": y})


def test_concat_refusals():
    model = make_model([helper.make_node("Concat", ["x", "y"], ["z"], name="cat", axis=1)],
                       [("x", (2, 3)), ("y", (3, 3))], _outputs("z"))
    _refused(model, r"ONNX node 'cat' \(Concat\): input 1 'y' has the shape \[3, 3\], which "
                    r"does not match \[2, 3\] outside axis 1")
    model = make_model([helper.make_node("Concat", ["x", "y"], ["z"], name="cat", axis=2)],
                       [("x", (2, 3)), ("y", (2, 3))], _outputs("z"))
    _refused(model, r"axis 2 is out of range for rank 2")


def test_split_forms():
    x = _random(2, 7, 6)
    opset13 = make_model(
        [helper.make_node("Split", ["x", "sizes"], ["a", "b", "c"], axis=1),
         helper.make_node("Split", ["x"], ["d", "e"], axis=-1)],
        [("x", x.shape)], _outputs("a", "b", "c", "d", "e"),
        [("sizes", np.array([2, 4, 1], np.int64))], opset=13)
    _compare(opset13, {"x": x})
    opset18 = make_model([helper.make_node("Split", ["x"], ["a", "b", "c"], axis=1,
                                           num_outputs=3)],
                         [("x", x.shape)], _outputs("a", "b", "c"), opset=18)
    graph = _compare(opset18, {"x": x})
    assert [t.shape[1] for t in graph.outputs] == [3, 3, 1]
    opset11 = make_model([helper.make_node("Split", ["x"], ["a", "b"], axis=2, split=[1, 5])],
                         [("x", x.shape)], _outputs("a", "b"), opset=11)
    _compare(opset11, {"x": x})


def test_split_refusals():
    model = make_model([helper.make_node("Split", ["x", "s"], ["a", "b"], name="sp", axis=0)],
                       [("x", (4, 2))], _outputs("a", "b"), [("s", np.array([1, 2], np.int64))])
    _refused(model, r"ONNX node 'sp' \(Split\): the split \[1, 2\] does not add up to the 4 "
                    r"elements of axis 0")
    model = make_model([helper.make_node("Split", ["x"], ["a", "b"], name="sp", axis=0)],
                       [("x", (5, 2))], _outputs("a", "b"))
    _refused(model, r"the 5 elements of axis 0 do not split evenly into 2 outputs")
    model = make_model([helper.make_node("Split", ["x", "s"], ["a", "b"], name="sp", axis=0)],
                       [("x", (4, 2))], _outputs("a", "b"), [("s", np.array([0, 4], np.int64))])
    # An empty part is the empty constant, which a graph output cannot be.
    _refused(model, r"ONNX node 'sp' \(Split\): the graph output 'a' has the shape \[0, 2\] "
                    r"with a zero-size dimension")


def test_slice_forms():
    x = _random(5, 6, 7)
    i64 = lambda *v: np.array(v, np.int64)  # noqa: E731
    nodes = [
        # A prefix of one axis (identity maps elsewhere).
        helper.make_node("Slice", ["x", "s0", "e0", "a0"], ["prefix"]),
        # Negative and clamped indices, negative axes and steps.
        helper.make_node("Slice", ["x", "s1", "e1", "a1", "p1"], ["strided"]),
        helper.make_node("Slice", ["x", "s2", "e2", "a2", "p2"], ["backwards"]),
        # Starting past the end with a negative step: clamped to the last element.
        helper.make_node("Slice", ["x", "s3", "e3", "a3", "p3"], ["reversed"]),
    ]
    inits = [("s0", i64(0)), ("e0", i64(3)), ("a0", i64(1)),
             ("s1", i64(-4, 1)), ("e1", i64(1 << 62, -1)), ("a1", i64(-1, 0)), ("p1", i64(2, 1)),
             ("s2", i64(-1, 4)), ("e2", i64(-100, 0)), ("a2", i64(2, 1)), ("p2", i64(-3, -2)),
             ("s3", i64(100)), ("e3", i64(-(1 << 62))), ("a3", i64(0)), ("p3", i64(-1))]
    model = make_model(nodes, [("x", x.shape)],
                       _outputs("prefix", "strided", "backwards", "reversed"), inits)
    _compare(model, {"x": x})
    # Opset 9: the attributes.
    model = make_model([helper.make_node("Slice", ["x"], ["y"], starts=[1, -3], ends=[4, 100],
                                         axes=[0, 2])],
                       [("x", x.shape)], _outputs("y"), opset=9)
    _compare(model, {"x": x})


def test_slice_refusals():
    i64 = lambda *v: np.array(v, np.int64)  # noqa: E731
    model = make_model([helper.make_node("Slice", ["x", "s", "e"], ["y"], name="sl")],
                       [("x", (4, 3))], _outputs("y"), [("s", i64(3)), ("e", i64(1))])
    _refused(model, r"ONNX node 'sl' \(Slice\): the graph output 'y' has the shape \[0, 3\] "
                    r"with a zero-size dimension")
    model = make_model([helper.make_node("Slice", ["x", "s", "e", "a", "p"], ["y"], name="sl")],
                       [("x", (4, 3))], _outputs("y"),
                       [("s", i64(0)), ("e", i64(2)), ("a", i64(0)), ("p", i64(0))])
    _refused(model, r"the step of axis 0 is 0; expected a nonzero step")
    node = helper.make_node("Slice", ["x", "s", "e"], ["y"], name="sl")
    graph = helper.make_graph([node], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, (4, 3)),
                               helper.make_tensor_value_info("s", TensorProto.INT64, (1,))],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              [numpy_helper.from_array(i64(2), "e")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    _refused(model, r"ONNX node 'sl' \(Slice\): the starts \(input 1, 's'\) must be a "
                    r"constant")


def test_pad_modes():
    x = _random(1, 2, 4, 5)
    i64 = lambda *v: np.array(v, np.int64)  # noqa: E731
    nodes = [
        helper.make_node("Pad", ["x", "p1", "v"], ["constant"], mode="constant"),
        helper.make_node("Pad", ["x", "p2"], ["cropped"]),                 # negative pads
        helper.make_node("Pad", ["x", "p3"], ["reflect"], mode="reflect"),
        helper.make_node("Pad", ["x", "p3"], ["edge"], mode="edge"),
    ]
    inits = [("p1", i64(0, 1, 2, 0, 0, 0, 1, 3)), ("v", np.array(1.5, np.float32)),
             ("p2", i64(0, 0, -1, 2, 0, 0, 1, -2)), ("p3", i64(0, 0, 3, 1, 0, 0, 2, 4))]
    model = make_model(nodes, [("x", x.shape)],
                       _outputs("constant", "cropped", "reflect", "edge"), inits)
    _compare(model, {"x": x})
    # Opset 19: axes, and wrap.
    nodes = [helper.make_node("Pad", ["x", "p", "", "axes"], ["wrap"], mode="wrap"),
             helper.make_node("Pad", ["x", "p", "", "axes"], ["zeros"])]
    model = make_model(nodes, [("x", x.shape)], _outputs("wrap", "zeros"),
                       [("p", i64(6, 1, 2, 7)), ("axes", i64(-1, 2))], opset=19)
    _compare(model, {"x": x})
    # Cropping all of an axis and padding it again: the constant value throughout.
    model = make_model([helper.make_node("Pad", ["x", "p", "v"], ["y"]),
                        helper.make_node("Add", ["y", "x1"], ["z"])],
                       [("x", x.shape), ("x1", (1, 1, 4, 5))], _outputs("z"),
                       [("p", i64(0, -2, 0, 0, 0, 1, 0, 0)), ("v", np.array(2.5, np.float32))])
    _compare(model, {"x": x, "x1": _random(1, 1, 4, 5)})
    # Opset 2: the attributes.
    model = make_model([helper.make_node("Pad", ["x"], ["y"], pads=[0, 0, 1, 1, 0, 0, 1, 1],
                                         value=-2.0)],
                       [("x", x.shape)], _outputs("y"), opset=2)
    _compare(model, {"x": x})


def test_pad_refusals():
    i64 = lambda *v: np.array(v, np.int64)  # noqa: E731
    model = make_model([helper.make_node("Pad", ["x", "p"], ["y"], name="pd", mode="reflect")],
                       [("x", (2, 3))], _outputs("y"), [("p", i64(0, 3, 0, 0))])
    _refused(model, r"ONNX node 'pd' \(Pad\): the reflect pads 3 and 0 of axis 1 are not "
                    r"smaller than its size 3")
    model = make_model([helper.make_node("Pad", ["x", "p"], ["y"], name="pd", mode="edge")],
                       [("x", (2, 3))], _outputs("y"), [("p", i64(0, -1, 0, 0))])
    _refused(model, r"negative pads \[0, -1, 0, 0\] with mode 'edge' are not supported")
    model = make_model([helper.make_node("Pad", ["x", "p"], ["y"], name="pd")],
                       [("x", (2, 3))], _outputs("y"), [("p", i64(0, 1, 0))])
    _refused(model, r"pads \[0, 1, 0\] are not valid; expected 4 sizes")


def test_gather_on_tensors_and_constants():
    x = _random(4, 5, 6)
    table = _random(7, 3)
    nodes = [
        helper.make_node("Gather", ["x", "first"], ["scalar"], axis=1),        # x[:, 0]
        helper.make_node("Gather", ["x", "evens"], ["evens_out"], axis=2),
        helper.make_node("Gather", ["x", "mixed"], ["mixed_out"], axis=-2),    # 2-D indices
        helper.make_node("Gather", ["table", "mixed"], ["embedded"], axis=0),  # folded
        helper.make_node("Add", ["embedded", "one"], ["embedded1"]),
    ]
    inits = [("first", np.array(0, np.int64)), ("evens", np.array([4, 2, 0], np.int64)),
             ("mixed", np.array([[1, -1], [3, 0], [2, 2]], np.int64)), ("table", table),
             ("one", np.ones((3, 2, 3), np.float32))]
    model = make_model(nodes, [("x", x.shape)],
                       _outputs("scalar", "evens_out", "mixed_out", "embedded1"), inits)
    _compare(model, {"x": x})


def test_gather_refusals():
    model = make_model([helper.make_node("Gather", ["x", "i"], ["y"], name="g", axis=0)],
                       [("x", (3, 2))], _outputs("y"), [("i", np.array([3], np.int64))])
    _refused(model, r"ONNX node 'g' \(Gather\): the indices \[3\] are out of range for the 3 "
                    r"elements of axis 0")
    model = make_model([helper.make_node("Gather", ["x", "x"], ["y"], name="g")],
                       [("x", (3, 2))], _outputs("y"))
    _refused(model, r"ONNX node 'g' \(Gather\): the indices \(input 1, 'x'\) are a tensor of f32; "
                    r"expected int64 \(or int32\)")


# --------------------------------------------------------------------------
# Shape computations fold into constants
# --------------------------------------------------------------------------

def test_shape_subgraph_folds_into_a_reshape():
    """torch's x.view(x.size(0), -1) and friends: Shape -> Gather -> Unsqueeze -> Concat ->
    Reshape, with integer arithmetic, Cast, Equal / Where and ConstantOfShape / Expand."""
    x = _random(2, 3, 4)
    i64 = lambda *v: np.array(v, np.int64)  # noqa: E731
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Gather", ["shape", "zero"], ["batch"], axis=0),
        helper.make_node("Unsqueeze", ["batch", "axes0"], ["batch1"]),
        helper.make_node("Shape", ["x"], ["tail"], start=1),
        helper.make_node("ReduceSum", ["tail"], ["tail_sum"], keepdims=1),  # 7 (opset 13)
        helper.make_node("Mul", ["tail_sum", "one"], ["tail_prod_like"]),
        helper.make_node("Size", ["x"], ["size"]),
        helper.make_node("Div", ["size", "batch"], ["per_row"]),               # 12
        helper.make_node("Unsqueeze", ["per_row", "axes0"], ["per_row1"]),
        helper.make_node("Concat", ["batch1", "per_row1"], ["target"], axis=0),
        helper.make_node("Reshape", ["x", "target"], ["rows"]),
        # -1 entries replaced as torch's expand() does: Where(Equal(s, -1), ones, s).
        helper.make_node("ConstantOfShape", ["two"], ["ones"],
                         value=numpy_helper.from_array(i64(1))),
        helper.make_node("Equal", ["wanted", "minus1"], ["is_free"]),
        helper.make_node("Where", ["is_free", "ones", "wanted"], ["expand_to"]),
        helper.make_node("Expand", ["rows", "expand_to"], ["expanded"]),
        helper.make_node("Range", ["r0", "r1", "r2"], ["steps"]),
        helper.make_node("Mod", ["steps", "three"], ["mods"]),
        helper.make_node("Cast", ["mods"], ["modsf"], to=TensorProto.FLOAT),
        helper.make_node("Add", ["expanded", "modsf"], ["out"]),
        helper.make_node("Squeeze", ["tail_prod_like", "axes0"], ["scalar"]),
        helper.make_node("Cast", ["scalar"], ["scalarf"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["out", "scalarf"], ["y"]),
    ]
    inits = [("zero", np.array(0, np.int64)), ("axes0", i64(0)), ("one", i64(1)), ("two", i64(3)),
             ("wanted", i64(3, -1, -1)), ("minus1", i64(-1)), ("r0", np.array(0, np.int64)),
             ("r1", np.array(12, np.int64)), ("r2", np.array(1, np.int64)), ("three", i64(3))]
    model = make_model(nodes, [("x", x.shape)], _outputs("y"), inits, opset=15)
    graph = _compare(model, {"x": x})
    text = graph.mlir()
    # Everything but the reshape, the broadcast and the two arithmetic maps was folded.
    assert text.count("hpvm.leaf") <= 4, text


def test_where_selects_between_tensors():
    x, y = _random(2, 3), _random(3)
    condition = np.array([[True, False, True], [False, False, True]])
    nodes = [helper.make_node("Where", ["c", "x", "y"], ["z"]),
             helper.make_node("Where", ["c1", "x", "k"], ["w"])]
    model = make_model(nodes, [("x", x.shape), ("y", y.shape)], _outputs("z", "w"),
                       [("c", condition), ("c1", np.array([False, True, True])),
                        ("k", np.array(7.5, np.float32))])
    _compare(model, {"x": x, "y": y})


def test_mask_operators_refuse_wrong_types():
    model = make_model([helper.make_node("Where", ["x", "x", "x"], ["y"], name="wh")],
                       [("x", (2,))], _outputs("y"))
    _refused(model, r"ONNX node 'wh' \(Where\): the condition 'x' is a tensor of float32; "
                    r"expected bool")
    model = make_model([helper.make_node("Cast", ["x"], ["y"], name="ci", to=TensorProto.UINT8)],
                       [("x", (2,))], _outputs("y"))
    _refused(model, r"ONNX node 'ci' \(Cast\): casting a tensor computed by the graph to uint8 "
                    r"is not supported")
    model = make_model([helper.make_node("Cast", ["x"], ["y"], name="cs", to=TensorProto.STRING)],
                       [("x", (2,))], _outputs("y"))
    _refused(model, r"casting to string is not supported")


def test_unsqueeze_squeeze_expand_cast_on_tensors():
    x = _random(3, 1, 4)
    i64 = lambda *v: np.array(v, np.int64)  # noqa: E731
    nodes = [helper.make_node("Unsqueeze", ["x", "a"], ["u"]),
             helper.make_node("Squeeze", ["x", "b"], ["s"]),
             helper.make_node("Squeeze", ["u"], ["all"]),
             helper.make_node("Expand", ["x", "shape"], ["e"]),
             helper.make_node("Cast", ["x"], ["half"], to=TensorProto.FLOAT16),
             helper.make_node("Cast", ["half"], ["back"], to=TensorProto.FLOAT),
             helper.make_node("Cast", ["x"], ["double"], to=TensorProto.DOUBLE)]
    model = make_model(nodes, [("x", x.shape)], _outputs("u", "s", "all", "e", "back", "double"),
                       [("a", i64(0, -1)), ("b", i64(-2)), ("shape", i64(2, 1, 5, 1))])
    model.graph.output[-1].type.tensor_type.elem_type = TensorProto.DOUBLE
    _compare(model, {"x": x})
    model = make_model([helper.make_node("Unsqueeze", ["x"], ["u"], axes=[1])],
                       [("x", x.shape)], _outputs("u"), opset=11)
    _compare(model, {"x": x})


# --------------------------------------------------------------------------
# Reductions and normalization
# --------------------------------------------------------------------------

def test_reductions_opset_13():
    x = _random(2, 3, 4, 5)
    nodes = [helper.make_node("ReduceSum", ["x", "a"], ["sum"], keepdims=0),
             helper.make_node("ReduceMean", ["x"], ["mean_hw"], axes=[2, 3], keepdims=0),
             helper.make_node("ReduceMean", ["x"], ["mean_keep"], axes=[-1, 1]),
             helper.make_node("ReduceMax", ["x"], ["max_all"], keepdims=0),
             helper.make_node("ReduceMax", ["x"], ["max_hw"], axes=[2, 3]),
             helper.make_node("ReduceMin", ["x"], ["min0"], axes=[0])]
    model = make_model(nodes, [("x", x.shape)],
                       _outputs("sum", "mean_hw", "mean_keep", "max_all", "max_hw", "min0"),
                       [("a", np.array([1, -1], np.int64))], opset=13)
    _compare(model, {"x": x})


def test_reductions_opset_18_axes_as_inputs():
    x = _random(3, 4, 5)
    nodes = [helper.make_node("ReduceMean", ["x", "a"], ["mean"]),
             helper.make_node("ReduceMax", ["x", "a"], ["max"], keepdims=0),
             helper.make_node("ReduceSum", ["x"], ["all"], keepdims=0),
             helper.make_node("ReduceSum", ["x"], ["same"], noop_with_empty_axes=1),
             helper.make_node("ReduceMean", ["x", "empty"], ["all_mean"])]
    model = make_model(nodes, [("x", x.shape)], _outputs("mean", "max", "all", "same", "all_mean"),
                       [("a", np.array([0, 2], np.int64)), ("empty", np.zeros(0, np.int64))],
                       opset=18)
    _compare(model, {"x": x})


def test_reduction_refusals():
    model = make_model([helper.make_node("ReduceMean", ["x"], ["y"], name="rm", axes=[1])],
                       [("x", (2, 3))], _outputs("y"), opset=18)
    _refused(model, r"ONNX node 'rm' \(ReduceMean\): the attribute axes is not valid in opset "
                    r"18; expected the axes as input 1")
    model = make_model([helper.make_node("ReduceSum", ["x"], ["y"], name="rs", axes=[1, -1])],
                       [("x", (2, 3))], _outputs("y"), opset=11)
    _refused(model, r"ONNX node 'rs' \(ReduceSum\): axes \[1, -1\] repeat a dimension")


def test_layer_normalization():
    x = _random(2, 5, 6) * 3 + 1
    scale, bias = _random(6), _random(6)
    scale2 = _random(5, 6)
    nodes = [helper.make_node("LayerNormalization", ["x", "scale", "bias"], ["last"]),
             helper.make_node("LayerNormalization", ["x", "scale2"], ["two"], axis=1,
                              epsilon=1e-3),
             helper.make_node("LayerNormalization", ["x", "scale", "bias"],
                              ["stats", "mean", "inv_std"], axis=-1)]
    model = make_model(nodes, [("x", x.shape)],
                       _outputs("last", "two", "stats", "mean", "inv_std"),
                       [("scale", scale), ("bias", bias), ("scale2", scale2)], opset=17)
    _compare(model, {"x": x})


def test_layer_normalization_refusals():
    model = make_model([helper.make_node("LayerNormalization", ["x", "s"], ["y"], name="ln",
                                         stash_type=0)],
                       [("x", (2, 3))], _outputs("y"), [("s", np.ones(3, np.float32))], opset=17)
    _refused(model, r"ONNX node 'ln' \(LayerNormalization\): stash_type 0 is not supported")
    model = make_model([helper.make_node("LayerNormalization", ["x", "s"], ["y"], name="ln")],
                       [("x", (2, 3))], _outputs("y"), [("s", np.ones(2, np.float32))], opset=17)
    _refused(model, r"the scale tensor<2xf32> does not broadcast to the normalized dimensions "
                    r"\[3\] of tensor<2x3xf32>")


# --------------------------------------------------------------------------
# Elementwise functions
# --------------------------------------------------------------------------

def test_activations_of_mobilenet_v3():
    x = _random(2, 3, 5, 5) * 4
    nodes = [helper.make_node("HardSwish", ["x"], ["hs"]),
             helper.make_node("HardSigmoid", ["x"], ["hsig"]),
             helper.make_node("HardSigmoid", ["x"], ["hsig2"], alpha=1 / 6, beta=0.25)]
    model = make_model(nodes, [("x", x.shape)], _outputs("hs", "hsig", "hsig2"), opset=14)
    _compare(model, {"x": x})


def test_erf_and_gelu():
    x = np.concatenate([np.linspace(-6, 6, 97, dtype=np.float32),
                        _random(47) * 2, np.array([0.0, -0.0, 1.0, -1.0, 1e-6], np.float32)])
    nodes = [helper.make_node("Erf", ["x"], ["erf"]),
             # torch's Gelu at opset 17: x * 0.5 * (1 + erf(x / sqrt(2))).
             helper.make_node("Div", ["x", "sqrt2"], ["xs"]),
             helper.make_node("Erf", ["xs"], ["e"]),
             helper.make_node("Add", ["e", "one"], ["e1"]),
             helper.make_node("Mul", ["x", "e1"], ["xe"]),
             helper.make_node("Mul", ["xe", "half"], ["gelu17"])]
    inits = [("sqrt2", np.array(math.sqrt(2), np.float32)), ("one", np.array(1, np.float32)),
             ("half", np.array(0.5, np.float32))]
    model = make_model(nodes, [("x", x.shape)], _outputs("erf", "gelu17"), inits, opset=17)
    _compare(model, {"x": x}, atol=1e-6)
    nodes = [helper.make_node("Gelu", ["x"], ["exact"]),
             helper.make_node("Gelu", ["x"], ["tanh"], approximate="tanh")]
    model = make_model(nodes, [("x", x.shape)], _outputs("exact", "tanh"), opset=20)
    _compare(model, {"x": x}, atol=1e-6)


def test_erf_in_float64_and_folded():
    x = np.linspace(-5, 5, 41)
    node = helper.make_node("Erf", ["x"], ["y"])
    graph = helper.make_graph([node, helper.make_node("Erf", ["c"], ["cy"]),
                               helper.make_node("Add", ["y", "cy"], ["z"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.DOUBLE, x.shape)],
                              [helper.make_tensor_value_info("z", TensorProto.DOUBLE, None)],
                              [numpy_helper.from_array(np.linspace(-1, 1, 41), "c")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    (z,) = hpvm.run(hpvm.onnx.load(model), [x])
    expected = [math.erf(a) + math.erf(b) for a, b in zip(x, np.linspace(-1, 1, 41))]
    np.testing.assert_allclose(z, expected, rtol=0, atol=1e-8)


def test_unary_math_and_pow():
    x = np.abs(_random(3, 4)) + 0.1
    nodes = [helper.make_node("Sqrt", ["x"], ["sqrt"]),
             helper.make_node("Exp", ["x"], ["exp"]),
             helper.make_node("Log", ["x"], ["log"]),
             helper.make_node("Neg", ["x"], ["neg"]),
             helper.make_node("Reciprocal", ["x"], ["rec"]),
             helper.make_node("Pow", ["x", "two"], ["sq"]),
             helper.make_node("Pow", ["x", "three"], ["cube"]),
             helper.make_node("Pow", ["x", "half"], ["root"]),
             helper.make_node("Pow", ["x", "row"], ["rowpow"]),
             helper.make_node("Pow", ["x", "x"], ["self"]),
             helper.make_node("Pow", ["x", "one"], ["same"]),
             helper.make_node("Pow", ["x", "ivec"], ["ipow"])]
    inits = [("two", np.array(2, np.float32)), ("three", np.array(3, np.float32)),
             ("half", np.array(0.5, np.float32)), ("row", _random(4)),
             ("one", np.array([1], np.float32)), ("ivec", np.array([1, 2, 3, 0], np.int64))]
    names = ["sqrt", "exp", "log", "neg", "rec", "sq", "cube", "root", "rowpow", "self", "same",
             "ipow"]
    model = make_model(nodes, [("x", x.shape)], _outputs(*names), inits, opset=15)
    _compare(model, {"x": x})


def test_mod_of_tensors():
    x, y = _random(3, 4) * 5, _random(4) * 3
    # fmod 1: the sign of the dividend; fmod 0 (for floats from opset 28): the sign of the
    # divisor.
    nodes = [helper.make_node("Mod", ["x", "y"], ["c"], fmod=1),
             helper.make_node("Mod", ["x", "y"], ["python"]),
             helper.make_node("Mod", ["x", "k"], ["by_constant"], fmod=1)]
    model = make_model(nodes, [("x", x.shape), ("y", y.shape)],
                       _outputs("c", "python", "by_constant"), [("k", np.array(-1.5, np.float32))],
                       opset=28)
    _compare(model, {"x": x, "y": y})
    model = make_model([helper.make_node("Mod", ["x", "x"], ["m"], name="md")],
                       [("x", x.shape)], _outputs("m"), opset=27)
    _refused(model, r"ONNX node 'md' \(Mod\): fmod 0 with float inputs is not valid in opset 27 "
                    r"\(from opset 28: the sign of the divisor\); expected fmod 1")


# --------------------------------------------------------------------------
# Resize
# --------------------------------------------------------------------------

def test_resize_nearest_and_linear():
    x = _random(1, 2, 5, 6)
    f32 = lambda *v: np.array(v, np.float32)  # noqa: E731
    i64 = lambda *v: np.array(v, np.int64)  # noqa: E731
    nodes = [
        helper.make_node("Resize", ["x", "", "up2"], ["nearest"], mode="nearest"),
        # torch's nn.Upsample(mode="nearest"): asymmetric coordinates, rounded down.
        helper.make_node("Resize", ["x", "", "", "sizes"], ["torch_nearest"], mode="nearest",
                         coordinate_transformation_mode="asymmetric", nearest_mode="floor"),
        helper.make_node("Resize", ["x", "", "", "sizes"], ["prefer_ceil"], mode="nearest",
                         nearest_mode="round_prefer_ceil"),
        helper.make_node("Resize", ["x", "", "up2"], ["bilinear"], mode="linear"),
        helper.make_node("Resize", ["x", "", "up2"], ["corners"], mode="linear",
                         coordinate_transformation_mode="align_corners"),
        helper.make_node("Resize", ["x", "", "", "down"], ["torch_bilinear"], mode="linear",
                         coordinate_transformation_mode="pytorch_half_pixel"),
        helper.make_node("Resize", ["x", "", "wide"], ["one_axis"], mode="linear"),
    ]
    inits = [("up2", f32(1, 1, 2, 2)), ("sizes", i64(1, 2, 12, 9)), ("down", i64(1, 2, 3, 4)),
             ("wide", f32(1, 1, 1, 1.5))]
    names = ["nearest", "torch_nearest", "prefer_ceil", "bilinear", "corners", "torch_bilinear",
             "one_axis"]
    model = make_model(nodes, [("x", x.shape)], _outputs(*names), inits, opset=13)
    _compare(model, {"x": x})
    # Opset 11: the unused inputs as empty tensors; opset 18: axes.
    model = make_model([helper.make_node("Resize", ["x", "roi", "scales", "sizes"], ["y"],
                                         mode="linear")],
                       [("x", x.shape)], _outputs("y"),
                       [("roi", np.zeros(0, np.float32)), ("scales", np.zeros(0, np.float32)),
                        ("sizes", i64(1, 2, 7, 3))], opset=11)
    _compare(model, {"x": x})
    model = make_model([helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], axes=[3, 2],
                                         keep_aspect_ratio_policy="not_larger")],
                       [("x", x.shape)], _outputs("y"), [("sizes", i64(18, 20))], opset=18)
    _compare(model, {"x": x})


def test_resize_refusals():
    f32 = lambda *v: np.array(v, np.float32)  # noqa: E731
    model = make_model([helper.make_node("Resize", ["x", "", "s"], ["y"], name="rs",
                                         mode="cubic")],
                       [("x", (1, 1, 2, 2))], _outputs("y"), [("s", f32(1, 1, 2, 2))])
    _refused(model, r"ONNX node 'rs' \(Resize\): mode 'cubic' is not supported; expected "
                    r"nearest or linear")
    model = make_model([helper.make_node("Resize", ["x", "", "s"], ["y"], name="rs",
                                         mode="linear", antialias=1)],
                       [("x", (1, 1, 4, 4))], _outputs("y"), [("s", f32(1, 1, 0.5, 0.5))],
                       opset=18)
    _refused(model, r"ONNX node 'rs' \(Resize\): antialias 1 is not supported")
    model = make_model([helper.make_node("Resize", ["x", "s"], ["y"], name="rs")],
                       [("x", (1, 1, 2, 2))], _outputs("y"), [("s", f32(1, 1, 2, 2))], opset=10)
    _refused(model, r"ONNX node 'rs' \(Resize\): Resize of opset 10 .* is not supported; "
                    r"expected opset 11 or later")
    model = make_model([helper.make_node("Resize", ["x", "", "s", "z"], ["y"], name="rs")],
                       [("x", (1, 1, 2, 2))], _outputs("y"),
                       [("s", f32(1, 1, 2, 2)), ("z", np.array([1, 1, 4, 4], np.int64))])
    _refused(model, r"expected exactly one of the scales \(input 2\) and the sizes \(input 3\)")


# --------------------------------------------------------------------------
# Attention: batched MatMul, Softmax on any axis
# --------------------------------------------------------------------------

def test_attention_matmuls_and_softmax():
    q, k = _random(2, 3, 5, 4), _random(2, 3, 5, 4)
    w = _random(4, 6)
    v3 = _random(3, 4, 2)
    nodes = [
        helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]),
        helper.make_node("MatMul", ["q", "kt"], ["scores"]),            # Q @ K^T, rank 4
        helper.make_node("Softmax", ["scores"], ["p"], axis=-1),
        helper.make_node("Softmax", ["scores"], ["p1"], axis=1),
        helper.make_node("MatMul", ["p", "k"], ["mixed"]),
        helper.make_node("MatMul", ["q", "w"], ["projected"]),          # rank 4 x rank 2
        helper.make_node("MatMul", ["bq", "v3"], ["broadcast"]),        # [3,1,4] x [3,4,2]
        helper.make_node("MatMul", ["q", "vec"], ["matvec"]),           # rank 4 x rank 1
    ]
    model = make_model(nodes, [("q", q.shape), ("k", k.shape), ("bq", (3, 1, 4))],
                       _outputs("p", "p1", "mixed", "projected", "broadcast", "matvec"),
                       [("w", w), ("v3", v3), ("vec", _random(4))])
    _compare(model, {"q": q, "k": k, "bq": _random(3, 1, 4)})


# --------------------------------------------------------------------------
# Every unsupported operator at once
# --------------------------------------------------------------------------

def test_every_unsupported_operator_is_reported_at_once():
    nodes = [helper.make_node("Einsum", ["x", "x"], ["a"], name="first", equation="ij,ij->ij"),
             helper.make_node("Relu", ["a"], ["b"], name="r"),
             helper.make_node("Einsum", ["b", "b"], ["c"], name="second", equation="ij,ij->ij"),
             helper.make_node("Celu", ["c"], ["d"], name="celu")]
    model = make_model(nodes, [("x", (2, 3))], _outputs("d"))
    message = _refused(model, r"ONNX node 'first' \(Einsum\): the operator Einsum is not "
                              r"supported \(2 nodes, the first is this one\); the operator Celu "
                              r"is not supported \(1 node, the first is ONNX node 'celu' "
                              r"\(Celu\)\); supported operators: Abs, Add, ")
    assert "LayerNormalization" in message


# --------------------------------------------------------------------------
# The builders behind them
# --------------------------------------------------------------------------

def test_tensor_builders_against_numpy():
    g = hpvm.TensorGraph("builders")
    x = g.input("x", (3, 4, 5))
    c = _random(3, 2, 5)
    outputs = [
        T.concat([x, g.constant(c), x], axis=1),
        T.strided_slice(x, [2, 0, 4], [-1, 2, -2], [3, 2, 3]),
        T.take(x, np.array([[3, 0], [1, 1]]), axis=1),
        T.cast(x, "f64"),
        T.reduce_axes(x, [0, 2], "mean", keepdims=True),
        T.reduce_axes(x, [1], "max"),
        T.layer_norm(x, axis=1, epsilon=1e-5),
        T.pad_border(x, [0, 1, 2], [1, 0, 3], "reflect"),
        T.pad_border(x, [1, 0, 0], [0, 2, 0], "edge"),
        T.take_axes(x, {0: [2, 2, 0], 2: [4, 1]}),
        T.lerp_axis(x, 1, [0, 1, 3], [1, 2, 3], [0.25, 0.5, 0.0]),
    ]
    g.output(*outputs)
    data = _random(3, 4, 5)
    got = hpvm.compile(g)(data)
    mean = data.mean(axis=(1, 2), keepdims=True)
    norm = (data - mean) / np.sqrt(data.var(axis=(1, 2), keepdims=True) + 1e-5)
    expected = [np.concatenate([data, c, data], axis=1), data[2::-1, 0:4:2, 4::-2],
                np.take(data, [[3, 0], [1, 1]], axis=1), data.astype(np.float64),
                data.mean(axis=(0, 2), keepdims=True), data.max(axis=1), norm,
                np.pad(data, [(0, 1), (1, 0), (2, 3)], mode="reflect"),
                np.pad(data, [(1, 0), (0, 2), (0, 0)], mode="edge"),
                data[np.ix_([2, 2, 0], range(4), [4, 1])],
                np.stack([0.75 * data[:, 0] + 0.25 * data[:, 1],
                          0.5 * data[:, 1] + 0.5 * data[:, 2], data[:, 3]], axis=1)]
    for i, (a, b) in enumerate(zip(got, expected)):
        assert a.shape == b.shape, i
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6, err_msg=str(i))


def test_tensor_builder_errors():
    g = hpvm.TensorGraph("errors")
    x = g.input("x", (3, 4))
    with pytest.raises(HPVMError, match=r"strided_slice: dimension 0 reads indices 2 to 4 of "
                                        r"tensor<3x4xf32>; expected indices in \[0, 3\)"):
        T.strided_slice(x, [2, 0], [1, 1], [3, 4])
    with pytest.raises(HPVMError, match=r"concat: tensor<3x3xf32> does not match "
                                        r"tensor<3x4xf32> outside axis 0"):
        T.concat([x, g.input("y", (3, 3))], axis=0)
    with pytest.raises(HPVMError, match=r"take: the indices \[5\] are out of range"):
        T.take(x, [5], axis=1)
    with pytest.raises(HPVMError, match=r"pad_border: reflect pads 3 and 0 of dimension 0"):
        T.pad_border(x, [3, 0], [0, 0], "reflect")
    with pytest.raises(HPVMError, match=r"reduce_axes: unknown kind 'prod'"):
        T.reduce_axes(x, [0], "prod")
    with pytest.raises(HPVMError, match=r"cast: expected a float element type"):
        T.cast(x, "i32")
