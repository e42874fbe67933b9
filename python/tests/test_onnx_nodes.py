"""The ONNX backend node tests of every supported operator through hpvm.onnx.

The cases come from `onnx.backend.test.case.node.collect_testcases` (the onnx
wheel ships no test data directory): every case whose nodes all have a supported
op type is imported, compiled and run, and compared with the case's outputs at the
case's own tolerances (rtol 1e-3, atol 1e-7 by default; float32 tanh, sigmoid and
softmax meet them, so no case needs a wider atol). int64 / bool graph inputs that are
parameters (Reshape's shape, Dropout's training_mode) and the float parameters of Resize,
Pad and Range are bound to their test values as initializers first: the importer takes
shapes, axes and modes as constants, as exported models carry them; int64 / bool inputs
read only by comparisons, logic, Where, Cast, ... (onnx_cases.DATA_OPS) stay graph
inputs. The cases of one opset run
in batches, side by side in one model (one compile for up to 16 cases; each case checks
its own outputs, and a batch that fails runs its cases one by one).

A case that uses something the importer refuses is listed in EXPECTED_REFUSALS with
a part of the message it must raise, and test_node_refused checks that it does. No
case is skipped silently: test_every_case_is_accounted_for checks the list.
"""

from __future__ import annotations

import functools
import re

import numpy as np
import onnx
import onnx.compose
import pytest

import hpvm
import hpvm.onnx
from hpvm import HPVMError  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from onnx_cases import (bind_parameters, case_arrays, make_model, node_cases,  # noqa: E402
                        run_onnxruntime)

CASES = node_cases()

_INT_INPUT = ("is a tensor of {}; only float16, float32, float64, bool, int8, int16, int32 and "
              "int64 tensors are supported")
_FLOAT_ONLY = "is a tensor of {}; this operator takes float16, float32 and float64 tensors only"
_INT_DIV = "Div of integer tensors computed by the graph is not supported"
_CAST = "casting to {} is not supported; expected a float, integer or bool type"
_CONSTANT_OUTPUT = "is a constant tensor of {}; graph outputs are float16, float32, float64"
_ZERO_INPUT = "the graph input '{}' has the shape {} with a zero-size dimension"
_NARROW = (r"(FLOAT8E4M3FNUZ|FLOAT8E4M3FN|FLOAT8E5M2FNUZ|FLOAT8E5M2|FLOAT8E8M0|FLOAT4E2M1|"
           r"BFLOAT16|U?INT[24])")


def _cast_refusals():
    """The Cast and CastLike cases of types a tensor graph has not: a graph input of such
    a type (refused as an input), or a cast to one."""
    refusals = {}
    for name in CASES:
        match = re.fullmatch(r"test_cast(?:like)?_(?:no_saturate_|e8m0_)?(\w+?)_to_(\w+?)"
                             r"(?:_expanded)?", name)
        if not match:
            continue
        source, target = match.groups()
        if re.fullmatch(_NARROW, source):
            refusals[name] = _INT_INPUT.format(source.lower())
        elif re.fullmatch(_NARROW, target):
            refusals[name] = _CAST.format(target.lower())
    # Opset 26's rounding mode of casts to float8e8m0.
    for name in ("test_cast_e8m0_FLOAT16_to_FLOAT8E8M0", "test_cast_e8m0_FLOAT_to_FLOAT8E8M0"):
        refusals[name] = "the attribute(s) ['round_mode'] are not supported"
    return refusals

_RANK5 = "only 1-D and 2-D windows are supported"
_TRAINING = "training_mode is true; only inference"
_MASK = "the mask is a boolean tensor"

#: Cases load() must refuse: test name -> a part of the HPVMError message.
EXPECTED_REFUSALS = {
    # Unsigned integer tensors (graph inputs are floats, bool and signed integers).
    **{f"test_{op}_{t}": _INT_INPUT.format(t)
       for op in ("add", "sub", "mul", "div", "equal", "mod", "less", "less_equal", "greater",
                  "greater_equal", "max", "min")
       for t in ("uint8", "uint16", "uint32", "uint64")},
    **{f"test_{op}_{t}_expanded": _INT_INPUT.format(t)
       for op in ("less_equal", "greater_equal") for t in ("uint8", "uint16", "uint32", "uint64")},
    # Integer tensors into operators of float tensors.
    **{f"test_div_{t}": _INT_DIV for t in ("int8", "int16", "int32_trunc")},
    "test_clip_default_int8_min": _FLOAT_ONLY.format("int8"),
    "test_clip_default_int8_max": _FLOAT_ONLY.format("int8"),
    "test_clip_default_int8_inbounds": _FLOAT_ONLY.format("int8"),
    "test_maxpool_2d_uint8": _INT_INPUT.format("uint8"),
    # Inputs that are not tensors.
    "test_identity_opt": "is an optional; expected a (dense) tensor",
    "test_identity_sequence": "is a sequence; expected a (dense) tensor",
    # Zero-size tensors.
    "test_reshape_allowzero_reordered": "with a zero-size dimension",
    # Dilations.
    "test_averagepool_2d_dilations": "dilations [2, 2] are not supported; expected [1, 1]",
    "test_maxpool_2d_dilations": "dilations [2, 2] are not supported; expected [1, 1]",
    # 3-D windows.
    "test_averagepool_3d_default": _RANK5,
    "test_averagepool_3d_dilations_small": _RANK5,
    "test_averagepool_3d_dilations_large_count_include_pad_is_0_ceil_mode_is_False": _RANK5,
    "test_averagepool_3d_dilations_large_count_include_pad_is_0_ceil_mode_is_True": _RANK5,
    "test_averagepool_3d_dilations_large_count_include_pad_is_1_ceil_mode_is_False": _RANK5,
    "test_averagepool_3d_dilations_large_count_include_pad_is_1_ceil_mode_is_True": _RANK5,
    "test_maxpool_3d_default": _RANK5,
    "test_maxpool_3d_dilations": _RANK5,
    "test_maxpool_3d_dilations_use_ref_impl": _RANK5,
    "test_maxpool_3d_dilations_use_ref_impl_large": _RANK5,
    # Integer outputs (MaxPool's Indices, Dropout's mask).
    "test_maxpool_with_argmax_2d_precomputed_pads": "the Indices output of MaxPool",
    "test_maxpool_with_argmax_2d_precomputed_strides": "the Indices output of MaxPool",
    "test_dropout_default_mask": _MASK,
    "test_dropout_default_mask_ratio": _MASK,
    "test_training_dropout_default_mask": _MASK,
    "test_training_dropout_mask": _MASK,
    "test_training_dropout_zero_ratio_mask": _MASK,
    # Training mode.
    "test_training_dropout": _TRAINING,
    "test_training_dropout_default": _TRAINING,
    "test_training_dropout_zero_ratio": _TRAINING,
    "test_batchnorm_example_training_mode": "training_mode 1 is not supported",
    "test_batchnorm_epsilon_training_mode": "training_mode 1 is not supported",
    # Integer and string tensors of the shape and arithmetic operators as graph inputs.
    **{f"test_{op}": _FLOAT_ONLY.format("int32")
       for op in ("edge_pad", "reflect_pad", "wrap_pad", "mod_broadcast",
                  "mod_mixed_sign_int32", "pow_types_int32_float32", "pow_types_int32_int32")},
    "test_pow_types_float32_int32": "the base tensor<3xf32> and the exponent tensor<3xi32> "
                                    "have different element types",
    "test_mod_mixed_sign_int16": _FLOAT_ONLY.format("int16"),
    "test_mod_mixed_sign_int8": _FLOAT_ONLY.format("int8"),
    "test_pow_types_float32_uint32": _INT_INPUT.format("uint32"),
    "test_pow_types_float32_uint64": _INT_INPUT.format("uint64"),
    "test_equal_string": _INT_INPUT.format("string"),
    "test_equal_string_broadcast": _INT_INPUT.format("string"),
    "test_pow_types_int64_float32": "input 0 'x' is a tensor of int64; only float16, float32",
    # Results that are constants of a type a tensor graph has not, or of zero size.
    "test_range_bfloat16_type_positive_delta": _CONSTANT_OUTPUT.format("bfloat16"),
    "test_shape_start_greater_than_end": "the graph output 'y' has the shape [0] with a "
                                         "zero-size dimension",
    "test_constantofshape_int_shape_zero": "the graph output 'y' has the shape [0] with a "
                                           "zero-size dimension",
    # Resize: cubic interpolation, antialiasing and crops.
    **{f"test_resize_{name}": "mode 'cubic' is not supported; expected nearest or linear"
       for name in ("upsample_scales_cubic", "upsample_scales_cubic_align_corners",
                    "downsample_scales_cubic", "downsample_scales_cubic_align_corners",
                    "upsample_sizes_cubic", "downsample_sizes_cubic",
                    "upsample_scales_cubic_A_n0p5_exclude_outside",
                    "downsample_scales_cubic_A_n0p5_exclude_outside",
                    "upsample_scales_cubic_asymmetric", "downsample_scales_cubic_antialias",
                    "downsample_sizes_cubic_antialias")},
    **{f"test_resize_downsample_{by}_linear_antialias": "antialias 1 is not supported"
       for by in ("scales", "sizes")},
    **{f"test_resize_tf_crop_and_resize{axes}": "coordinate_transformation_mode "
       "'tf_crop_and_resize' is not supported"
       for axes in ("", "_extrapolation_value", "_axes_2_3", "_axes_3_2")},
    # Zero-size tensors.
    **{f"test_reduce_{name}": _ZERO_INPUT.format("data", "[2, 0, 4]")
       for name in ("max_empty_set", "min_empty_set", "sum_empty_set", "l2_empty_set",
                    "sum_empty_set_non_reduced_axis_zero")},
    "test_reduce_max_empty_set_bool": "the input [2, 0, 4] is empty; expected elements to reduce",
    "test_split_zero_size_splits_opset13": _ZERO_INPUT.format("input", "[0]"),
    "test_tril_zero": "the graph output 'y' has the shape [3, 0, 5] with a zero-size",
    "test_triu_zero": "the graph output 'y' has the shape [0, 5] with a zero-size",
    "test_split_zero_size_splits_opset18": _ZERO_INPUT.format("input", "[0]"),
    "test_slice_start_out_of_bounds": "the graph output 'y' has the shape [20, 0, 5] with a "
                                      "zero-size dimension",
    **_cast_refusals(),
}

RUN = sorted(set(CASES) - set(EXPECTED_REFUSALS))


def _check_outputs(case, outputs, expected):
    assert len(outputs) == len(expected)
    for got, want in zip(outputs, expected):
        assert got.shape == np.asarray(want).shape
        np.testing.assert_allclose(got, want, rtol=case.rtol, atol=case.atol)


def _run_case(case):
    for inputs, expected in case.data_sets:
        inputs, expected = case_arrays(inputs), case_arrays(expected)
        model, inputs = bind_parameters(case.model, inputs)
        graph = hpvm.onnx.load(model)
        _check_outputs(case, hpvm.run(graph, inputs), expected)


# Compiling a graph costs about 0.15 s besides its leaves, so the cases run in batches:
# up to _BATCH cases of one opset (and one data set each) side by side in one model, their
# names prefixed, compiled once. Each case still checks its own outputs; when a batch
# cannot be imported or compiled, its cases run one by one (which reports the culprit).
_BATCH = 16
_BATCH_RESULTS: dict = {}


@functools.lru_cache(maxsize=1)
def _batches():
    """Case name -> the names of its batch (a tuple), for the cases that run batched."""
    groups: dict = {}
    for name in RUN:
        model = CASES[name].model
        if len(CASES[name].data_sets) != 1 or len(model.functions):
            continue
        key = (tuple((o.domain, o.version) for o in model.opset_import), model.ir_version)
        groups.setdefault(key, []).append(name)
    batch_of = {}
    for names in groups.values():
        for i in range(0, len(names), _BATCH):
            for name in names[i:i + _BATCH]:
                batch_of[name] = tuple(names[i:i + _BATCH])
    return batch_of


def _run_batch(names):
    """The outputs of each case of `names`, computed by one merged model."""
    nodes, inputs, outputs, initializers, feeds, counts = [], [], [], [], {}, []
    for k, name in enumerate(names):
        case = CASES[name]
        model, values = bind_parameters(case.model, case_arrays(case.data_sets[0][0]))
        model = onnx.compose.add_prefix(model, f"c{k}_")
        graph = model.graph
        nodes += graph.node
        outputs += graph.output
        initializers += graph.initializer
        initialized = {init.name for init in graph.initializer}
        real = [v for v in graph.input if v.name not in initialized]
        inputs += real
        feeds.update({v.name: value for v, value in zip(real, values)})
        counts.append(len(graph.output))
    first = CASES[names[0]].model
    merged = helper.make_model(helper.make_graph(nodes, "batch", inputs, outputs, initializers),
                               opset_imports=first.opset_import, ir_version=first.ir_version)
    results = hpvm.run(hpvm.onnx.load(merged), feeds)
    by_case, at = {}, 0
    for name, count in zip(names, counts):
        by_case[name] = results[at:at + count]
        at += count
    return by_case


@pytest.mark.parametrize("name", RUN)
def test_node(name):
    case = CASES[name]
    batch = _batches().get(name)
    if batch is not None and batch not in _BATCH_RESULTS:
        try:
            _BATCH_RESULTS[batch] = _run_batch(batch)
        except Exception:  # noqa: BLE001 - the cases then run (and fail) one by one
            _BATCH_RESULTS[batch] = None
    results = _BATCH_RESULTS.get(batch)
    if results is None:
        _run_case(case)
        return
    _check_outputs(case, results[name], case_arrays(case.data_sets[0][1]))


@pytest.mark.parametrize("name", sorted(EXPECTED_REFUSALS))
def test_node_refused(name):
    case = CASES[name]
    model, _ = bind_parameters(case.model, case_arrays(case.data_sets[0][0]))
    with pytest.raises(HPVMError) as error:
        hpvm.onnx.load(model)
    message = str(error.value)
    assert EXPECTED_REFUSALS[name] in message
    assert message.startswith("ONNX node ")  # names the node and its op type
    assert any(f"({node.op_type}" in message for node in case.model.graph.node)


def test_every_case_is_accounted_for():
    stale = set(EXPECTED_REFUSALS) - set(CASES)
    assert not stale, f"listed cases that node_cases() does not select: {sorted(stale)}"
    ops = {node.op_type for name in RUN for node in CASES[name].model.graph.node}
    # Every supported op is run by at least one backend case except those the
    # cases do not cover with float inputs; those have tests below.
    # (Equal and Pad: the cases give them integer inputs or a pad value computed by the
    # graph; test_onnx_ops_zoo.py runs them.)
    assert set(hpvm.onnx.SUPPORTED_OPS) - ops <= {"Constant", "Equal", "Pad"}, ops


# --------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------

def _single(op, inputs, outputs, initializers=(), opset=13, node_name="n0", **attrs):
    node = helper.make_node(op, [n for n, _ in inputs] + [n for n, _ in initializers],
                            [n for n, _ in outputs], name=node_name, **attrs)
    return make_model([node], inputs, outputs, initializers, opset=opset)


def test_unsupported_op_names_op_and_node():
    node = helper.make_node("Einsum", ["a", "b"], ["c"], name="contract7", equation="ij,jk->ik")
    model = make_model([node], [("a", (2, 3)), ("b", (3, 4))], [("c", (2, 4))])
    with pytest.raises(HPVMError, match=r"ONNX node 'contract7' \(Einsum\): the operator "
                                        r"Einsum is not supported"):
        hpvm.onnx.load(model)


def test_unnamed_node_is_named_by_index_and_output():
    relu = helper.make_node("Relu", ["x"], ["r"])
    node = helper.make_node("Einsum", ["r"], ["y"], equation="ij->ji")
    model = make_model([relu, node], [("x", (2, 3))], [("y", (3, 2))])
    with pytest.raises(HPVMError, match=r"ONNX node #1 \(Einsum, output 'y'\)"):
        hpvm.onnx.load(model)


def test_conv_dilations_refused():
    w = np.ones((2, 1, 3, 3), np.float32)
    model = _single("Conv", [("x", (1, 1, 8, 8))], [("y", None)], [("w", w)],
                    node_name="conv3", dilations=[2, 2])
    with pytest.raises(HPVMError) as error:
        hpvm.onnx.load(model)
    assert str(error.value) == ("ONNX node 'conv3' (Conv): dilations [2, 2] are not "
                                "supported; expected [1, 1]")


def test_unknown_attribute_refused():
    model = _single("Relu", [("x", (2,))], [("y", (2,))], node_name="r", alpha=0.5)
    with pytest.raises(HPVMError, match=r"ONNX node 'r' \(Relu\): the attribute\(s\) "
                                        r"\['alpha'\] are not supported"):
        hpvm.onnx.load(model)


def test_integer_constant_in_arithmetic_refused():
    model = _single("Add", [("x", (3,))], [("y", (3,))], [("k", np.arange(3))],
                    node_name="add1")
    with pytest.raises(HPVMError, match=r"ONNX node 'add1' \(Add\): input 1 'k' is a tensor "
                                        r"of int64; only float16, float32 and float64"):
        hpvm.onnx.load(model)


def test_reshape_shape_from_graph_refused():
    node = helper.make_node("Reshape", ["x", "s"], ["y"], name="rs")
    graph = helper.make_graph([node], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, (2, 3)),
                               helper.make_tensor_value_info("s", TensorProto.INT64, (2,))],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    with pytest.raises(HPVMError, match=r"ONNX node 'rs' \(Reshape\): the shape \(input 1, "
                                        r"'s'\) must be a constant"):
        hpvm.onnx.load(model)


def test_pool_ceil_mode_with_auto_pad_refused():
    model = _single("MaxPool", [("x", (1, 1, 5, 5))], [("y", None)], node_name="mp",
                    kernel_shape=[2, 2], ceil_mode=1, auto_pad="VALID")
    with pytest.raises(HPVMError, match=r"ONNX node 'mp' \(MaxPool\): ceil_mode 1 with auto_pad "
                                        r"'VALID' is not supported; expected auto_pad NOTSET"):
        hpvm.onnx.load(model)


def test_dynamic_dimensions():
    node = helper.make_node("Relu", ["x"], ["y"], name="r")
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ("N", 3, "H"))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    with pytest.raises(HPVMError, match=r"graph input 'x' has a dynamic dimension 2 \('H'\).*"
                                        r"shapes="):
        hpvm.onnx.load(model)
    graph = hpvm.onnx.load(model, input_shapes={"x": (2, 3, 5)})
    assert graph.inputs[0].shape == (2, 3, 5)
    with pytest.raises(HPVMError, match=r"dimension 1 of the model's input is fixed to 3"):
        hpvm.onnx.load(model, input_shapes={"x": (2, 4, 5)})
    with pytest.raises(HPVMError, match=r"not inputs of the model"):
        hpvm.onnx.load(model, input_shapes={"z": (1,)})
    # Only the batch dimension is dynamic: batch_size (default 1) fills it.
    graph_proto = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ("N", 3))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph_proto, opset_imports=[helper.make_opsetid("", 13)])
    assert hpvm.onnx.load(model).inputs[0].shape == (1, 3)
    assert hpvm.onnx.load(model, batch_size=4).inputs[0].shape == (4, 3)
    # A static batch that batch_size contradicts is refused (it would return fewer rows).
    graph_proto = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, (1, 3))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph_proto, opset_imports=[helper.make_opsetid("", 13)])
    with pytest.raises(HPVMError, match=r"batch_size=8, but the ONNX graph input 'x' has the "
                                        r"static shape 1x3: its batch is fixed to 1.*dynamic_axes"):
        hpvm.onnx.load(model, batch_size=8)
    assert hpvm.onnx.load(model, batch_size=1).inputs[0].shape == (1, 3)


def test_bad_model_argument():
    with pytest.raises(HPVMError, match="does not exist"):
        hpvm.onnx.load("/nonexistent/model.onnx")
    with pytest.raises(HPVMError, match="expected an ONNX model"):
        hpvm.onnx.load(42)


# --------------------------------------------------------------------------
# Forms the backend cases do not cover, checked against onnxruntime
# --------------------------------------------------------------------------

RNG = np.random.default_rng(1234)


def _random(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def _compare(model, feeds, rtol=1e-4, atol=1e-5, **load_options):
    expected = run_onnxruntime(model, feeds)
    graph = hpvm.onnx.load(model, **load_options)
    got = hpvm.run(graph, feeds)
    assert [name for name in graph.output_names] == [o.name for o in model.graph.output]
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=rtol, atol=atol)
    return graph


def test_grouped_and_depthwise_conv_with_bias():
    x = _random(2, 6, 9, 8)
    for group, filters, pads in ((3, 9, [1, 0, 1, 0]), (6, 6, [1, 2, 0, 1])):
        w, b = _random(filters, 6 // group, 3, 3), _random(filters)
        model = _single("Conv", [("x", x.shape)], [("y", None)], [("w", w), ("b", b)],
                        group=group, pads=pads, strides=[2, 1])
        _compare(model, {"x": x})


def test_conv_1d_and_same_lower():
    x = _random(1, 2, 11)
    model = _single("Conv", [("x", x.shape)], [("y", None)], [("w", _random(4, 2, 4))],
                    auto_pad="SAME_LOWER", strides=[2])
    _compare(model, {"x": x})


def test_pools_with_asymmetric_pads():
    x = _random(2, 3, 7, 6)
    for op, extra in (("MaxPool", {}), ("AveragePool", {"count_include_pad": 0}),
                      ("AveragePool", {"count_include_pad": 1})):
        model = _single(op, [("x", x.shape)], [("y", None)], kernel_shape=[3, 2],
                        pads=[2, 0, 0, 1], strides=[2, 1], **extra)
        _compare(model, {"x": x})


def test_softmax_opset_11_flattens_at_axis():
    x = _random(2, 3, 4)
    for axis in (0, 1, 2, -1):
        model = _single("Softmax", [("x", x.shape)], [("y", x.shape)], opset=11, axis=axis)
        _compare(model, {"x": x})


def test_clip_attributes_opset_6():
    x = _random(3, 4) * 3
    model = _single("Clip", [("x", x.shape)], [("y", x.shape)], opset=6, min=-1.0, max=0.5)
    _compare(model, {"x": x})
    model = _single("Clip", [("x", x.shape)], [("y", x.shape)], opset=6, max=0.5)
    _compare(model, {"x": x})


def test_gemm_with_constant_weights_and_folding():
    x = _random(3, 5)
    w, c = _random(4, 5), _random(4)
    # Transpose (of a constant) and Reshape of constants fold in NumPy.
    nodes = [helper.make_node("Transpose", ["w"], ["wt"], perm=[1, 0]),
             helper.make_node("Transpose", ["wt"], ["wtt"], perm=[1, 0]),
             helper.make_node("Gemm", ["x", "wtt", "c"], ["y"], alpha=0.5, beta=2.0,
                              transB=1)]
    model = make_model(nodes, [("x", x.shape)], [("y", (3, 4))], [("w", w), ("c", c)])
    graph = _compare(model, {"x": x})
    assert "linalg.transpose" not in graph.mlir()


def test_initializer_listed_as_input_is_constant():
    x = _random(2, 3)
    b = _random(3)
    node = helper.make_node("Add", ["x", "b"], ["y"])
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape),
                      helper.make_tensor_value_info("b", TensorProto.FLOAT, b.shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(b, "b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    loaded = _compare(model, {"x": x})
    assert [t.name for t in loaded.inputs] == ["x"]


def test_outputs_in_model_order_with_names():
    x = _random(2, 3)
    nodes = [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Tanh", ["x"], ["t"]),
             helper.make_node("Sigmoid", ["r"], ["s"])]
    model = make_model(nodes, [("x", x.shape)], [("s", x.shape), ("x", x.shape),
                                                 ("r", x.shape)])
    graph = _compare(model, {"x": x})
    assert graph.output_names == ["s", "x", "r"]


def test_float64_graph():
    x = RNG.standard_normal((2, 3))
    node = helper.make_node("Mul", ["x", "x"], ["y"])
    graph = helper.make_graph([node], "g",
                              [helper.make_tensor_value_info("x", TensorProto.DOUBLE, x.shape)],
                              [helper.make_tensor_value_info("y", TensorProto.DOUBLE, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    (y,) = hpvm.run(hpvm.onnx.load(model), [x])
    assert y.dtype == np.float64
    np.testing.assert_allclose(y, x * x, rtol=1e-12)


def test_run_takes_models_paths_and_bytes(tmp_path):
    x = _random(2, 3)
    model = make_model([helper.make_node("Relu", ["x"], ["y"])], [("x", x.shape)],
                       [("y", x.shape)])
    path = tmp_path / "relu.onnx"
    path.write_bytes(model.SerializeToString())
    for source in (model, str(path), path, model.SerializeToString()):
        (y,) = hpvm.run(source, {"x": x})
        np.testing.assert_array_equal(y, np.maximum(x, 0))
