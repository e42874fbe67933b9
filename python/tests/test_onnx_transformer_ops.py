"""Operators of transformers exported from Hugging Face definitions (rotary embeddings'
Sin / Cos, GatherElements, Gather by position ids computed from token ids), each checked
against onnxruntime; indices the graph computes are taken only when their range is known
to lie inside the axis (an index out of range is an HPVMError, never a read outside)."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import hpvm
import hpvm.onnx
from hpvm import HPVMError

from onnx_cases import run_onnxruntime

_ONNX = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.int64): TensorProto.INT64,
         np.dtype(np.int32): TensorProto.INT32, np.dtype(np.bool_): TensorProto.BOOL}


def _model(nodes, inputs, initializers=(), outputs=(("y", TensorProto.FLOAT),), opset=17):
    """A model of `nodes`; `inputs` maps names to example arrays (their types and shapes),
    `outputs` are (name, element type)."""
    graph = helper.make_graph(
        nodes, "g",
        [helper.make_tensor_value_info(n, _ONNX[a.dtype], a.shape) for n, a in inputs.items()],
        [helper.make_tensor_value_info(o, t, None) for o, t in outputs],
        initializer=[numpy_helper.from_array(a, n) for n, a in dict(initializers).items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _check(model, feeds, rtol=0.0, atol=0.0):
    expected = run_onnxruntime(model, dict(feeds))
    got = hpvm.compile(hpvm.onnx.load(model), fuse=True)(**dict(feeds))
    got = got if isinstance(got, tuple) else (got,)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g.dtype == e.dtype and g.shape == e.shape
        np.testing.assert_allclose(g, e, rtol=rtol, atol=atol)


@pytest.mark.parametrize("op", ["Sin", "Cos"])
def test_sin_cos(op):
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((2, 3, 8)) * 10).astype(np.float32)
    x.flat[:3] = [0.0, np.pi, -100.0]
    model = _model([helper.make_node(op, ["x"], ["y"], name="trig")], {"x": x})
    _check(model, {"x": x}, atol=2e-6)


def test_rotary_embedding_folds():
    """cos / sin of constant position times frequencies fold into constants."""
    positions = np.arange(6, dtype=np.float32).reshape(6, 1)
    frequencies = np.array([[1.0, 0.1, 0.01]], np.float32)
    x = np.ones((6, 3), np.float32)
    nodes = [helper.make_node("MatMul", ["pos", "freq"], ["angles"]),
             helper.make_node("Cos", ["angles"], ["c"]),
             helper.make_node("Sin", ["angles"], ["s"]),
             helper.make_node("Mul", ["x", "c"], ["xc"]),
             helper.make_node("Add", ["xc", "s"], ["y"])]
    model = _model(nodes, {"x": x}, {"pos": positions, "freq": frequencies})
    _check(model, {"x": x}, atol=1e-6)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_gather_elements_constant_indices(axis):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 4)).astype(np.float32)
    n = x.shape[axis]
    shape = (2, 3) if axis == 0 else (3, 5) if axis == 1 else (2, 2)
    indices = rng.integers(-n, n, shape).astype(np.int64)
    model = _model([helper.make_node("GatherElements", ["x", "i"], ["y"], name="ge", axis=axis)],
                   {"x": x}, {"i": indices})
    _check(model, {"x": x})
    # All constant: folded.
    model = _model([helper.make_node("GatherElements", ["c", "i"], ["g"], axis=axis),
                    helper.make_node("Shape", ["g"], ["s"]),
                    helper.make_node("Expand", ["x0", "s"], ["e"]),
                    helper.make_node("Mul", ["g", "e"], ["y"])],
                   {"x0": np.ones(1, np.float32)}, {"c": x, "i": indices})
    _check(model, {"x0": np.full(1, 2.0, np.float32)})


@pytest.mark.parametrize("dtype", [np.int64, np.int32])
def test_gather_elements_input_indices_checked(dtype):
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    ids = np.array([[0, -1, 2, 3], [3, 2, 1, -4]], dtype=dtype)
    model = _model([helper.make_node("GatherElements", ["x", "ids"], ["y"], name="ge0",
                                     axis=1)], {"x": x, "ids": ids})
    _check(model, {"x": x, "ids": ids})
    run = hpvm.compile(hpvm.onnx.load(model))
    for bad in (4, -5):
        wrong = ids.copy()
        wrong[1, 2] = bad
        with pytest.raises(HPVMError) as error:
            run(x=x, ids=wrong)
        message = str(error.value)
        assert "ONNX node 'ge0' (GatherElements)" in message, message
        assert f"the index {bad} at [1, 2] of the argument 'ids' is out of range" in message
        assert "expected an index in [-4, 4)" in message, message
    np.testing.assert_array_equal(run(x=x, ids=ids), np.take_along_axis(x[:2], ids, 1))


def test_gather_elements_constant_out_of_range_refused():
    model = _model([helper.make_node("GatherElements", ["x", "i"], ["y"], name="ge1", axis=0)],
                   {"x": np.ones((2, 2), np.float32)},
                   {"i": np.array([[0, 1], [2, 0]], np.int64)})
    with pytest.raises(HPVMError, match=r"'ge1' \(GatherElements\): the index 2 at \[1, 0\] is "
                                        r"out of range for the 2 elements of axis 0"):
        hpvm.onnx.load(model)


def _roberta_positions(table_rows, padding=1, op="Gather", extra=()):
    """RoBERTa's position ids: cumsum(ids != padding) * (ids != padding) + padding, then
    a lookup into a table of `table_rows` rows (Gather) or GatherElements on axis 1."""
    nodes = [helper.make_node("Equal", ["ids", "pad"], ["is_pad"]),
             helper.make_node("Not", ["is_pad"], ["keep"]),
             helper.make_node("Cast", ["keep"], ["keep32"], to=TensorProto.INT32),
             helper.make_node("CumSum", ["keep32", "axis"], ["count"]),
             helper.make_node("Mul", ["count", "keep32"], ["masked"]),
             helper.make_node("Cast", ["masked"], ["masked64"], to=TensorProto.INT64),
             helper.make_node("Add", ["masked64", "pad"], ["pos"]), *extra]
    constants = {"pad": np.array(padding, np.int64), "axis": np.array(1, np.int64)}
    if op == "Gather":
        nodes.append(helper.make_node("Gather", ["table", "pos"], ["y"], name="lookup"))
        constants["table"] = np.random.default_rng(2).standard_normal(
            (table_rows, 8)).astype(np.float32)
    else:
        nodes.append(helper.make_node("GatherElements", ["table", "pos"], ["y"], name="lookup",
                                      axis=1))
        constants["table"] = np.random.default_rng(3).standard_normal(
            (2, table_rows)).astype(np.float32)
    return constants, nodes


@pytest.mark.parametrize("op", ["Gather", "GatherElements"])
def test_positions_computed_from_token_ids(op):
    """Indices the graph computes whose range is known (cumsum of a 0/1 mask over 6
    tokens, plus 1: [1, 7]) read a table of 8 rows without a check at the call."""
    ids = np.array([[5, 9, 1, 3, 1, 1], [2, 2, 2, 2, 2, 2]], np.int64)
    constants, nodes = _roberta_positions(8, op=op)
    model = _model(nodes, {"ids": ids}, constants)
    _check(model, {"ids": ids})
    graph = hpvm.onnx.load(model)
    assert not graph.index_checks


@pytest.mark.parametrize("op", ["Gather", "GatherElements"])
def test_positions_that_may_overflow_refused(op):
    """The same positions into a table of 7 rows: position 7 could be read; refused."""
    constants, nodes = _roberta_positions(7, op=op)
    model = _model(nodes, {"ids": np.zeros((2, 6), np.int64)}, constants)
    with pytest.raises(HPVMError, match=rf"'lookup' \({op}\): the indices \(input 1, 'pos'\) "
                                        r"are computed by the graph and may take values in "
                                        r"\[1, 7\], outside \[-7, 7\)"):
        hpvm.onnx.load(model)


@pytest.mark.parametrize("op", ["Gather", "GatherElements"])
def test_indices_of_unknown_range_refused(op):
    """Token ids plus one: their range is the caller's, unknown when the graph is built."""
    constants, nodes = _roberta_positions(8, op=op)
    nodes = [helper.make_node("Add", ["ids", "pad"], ["pos"])] + nodes[-1:]
    model = _model(nodes, {"ids": np.zeros((2, 6), np.int64)}, constants)
    with pytest.raises(HPVMError, match=rf"'lookup' \({op}\): the indices \(input 1, 'pos'\) "
                                        r"are computed by the graph; expected a constant or a "
                                        r"graph input"):
        hpvm.onnx.load(model)


@pytest.mark.parametrize("op", ["ArgMax", "ArgMin"])
@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.int32])
@pytest.mark.parametrize("axis,keepdims,last", [(0, 1, 0), (1, 0, 0), (-1, 1, 1), (2, 0, 1)])
def test_arg_max_min(op, dtype, axis, keepdims, last):
    rng = np.random.default_rng(4)
    x = rng.integers(-3, 4, (3, 4, 5)).astype(dtype)  # many ties: first / last index
    model = _model([helper.make_node(op, ["x"], ["y"], name="arg", axis=axis,
                                     keepdims=keepdims, select_last_index=last)],
                   {"x": x}, outputs=(("y", TensorProto.INT64),))
    _check(model, {"x": x})


def test_arg_max_folds_and_refuses_scalars():
    x = np.array([1.0, 5.0, 5.0, 2.0], np.float32)
    nodes = [helper.make_node("ArgMax", ["c"], ["i"], keepdims=1, select_last_index=1),
             helper.make_node("Cast", ["i"], ["f"], to=TensorProto.FLOAT),
             helper.make_node("Add", ["x", "f"], ["y"])]
    model = _model(nodes, {"x": np.zeros(1, np.float32)}, {"c": x})
    _check(model, {"x": np.ones(1, np.float32)})
    model = _model([helper.make_node("ArgMax", ["x"], ["y"], name="arg0", keepdims=0)],
                   {"x": x}, outputs=(("y", TensorProto.INT64),))
    with pytest.raises(HPVMError, match=r"'arg0' \(ArgMax\): the result would be a scalar"):
        hpvm.onnx.load(model)


def test_last_token_pooling():
    """GPT-2's sequence classification: the last token that is not padding, found by
    ArgMax over (ids != pad) * positions, picks one row of each sequence's logits through
    a Gather of the flattened rows by batch * seq + position (bounds [0, 11])."""
    ids = np.array([[5, 7, 9, 0, 0, 0], [4, 4, 4, 4, 4, 8]], np.int64)
    logits = np.random.default_rng(5).standard_normal((2, 6, 3)).astype(np.float32)
    nodes = [helper.make_node("Equal", ["ids", "pad"], ["is_pad"]),
             helper.make_node("Not", ["is_pad"], ["keep"]),
             helper.make_node("Cast", ["keep"], ["keep64"], to=TensorProto.INT64),
             helper.make_node("Mul", ["keep64", "positions"], ["scored"]),
             helper.make_node("ArgMax", ["scored"], ["last"], axis=-1, keepdims=0),
             helper.make_node("Add", ["last", "offsets"], ["rows"]),
             helper.make_node("Reshape", ["logits", "flat"], ["table"]),
             helper.make_node("Gather", ["table", "rows"], ["y"], name="pool", axis=0)]
    constants = {"pad": np.array(0, np.int64), "positions": np.arange(6, dtype=np.int64),
                 "offsets": np.array([0, 6], np.int64), "flat": np.array([12, 3], np.int64)}
    model = _model(nodes, {"ids": ids, "logits": logits}, constants)
    _check(model, {"ids": ids, "logits": logits})
    assert not hpvm.onnx.load(model).index_checks


@pytest.mark.parametrize("repeats", [[2, 1, 3], [1, 1, 1], [1, 4, 1]])
@pytest.mark.parametrize("dtype", [np.float32, np.int64])
def test_tile(repeats, dtype):
    x = np.arange(12).reshape(2, 3, 2).astype(dtype)
    model = _model([helper.make_node("Tile", ["x", "r"], ["y"], name="tile")], {"x": x},
                   {"r": np.array(repeats, np.int64)},
                   outputs=(("y", _ONNX[np.dtype(dtype)]),))
    _check(model, {"x": x})


def test_tile_refusals():
    x = {"x": np.ones((2, 3), np.float32)}
    for repeats, message in (([2], r"have 1 elements; expected one per dimension"),
                             ([1, 0], r"make a zero-size dimension")):
        model = _model([helper.make_node("Tile", ["x", "r"], ["y"], name="tile")], x,
                       {"r": np.array(repeats, np.int64)})
        with pytest.raises(HPVMError, match=r"'tile' \(Tile\): the repeats .*" + message):
            hpvm.onnx.load(model)


@pytest.mark.parametrize("batch_dims,indices", [
    (0, [[0, 1], [2, 0], [1, 3]]),         # whole-row pairs: x[i, j, :]
    (0, [[[2], [0]], [[1], [-1]]]),         # rows: x[i, :, :]
    (1, [[1], [3], [0]]),                   # per batch: x[b, i, :]
    (0, [[0, 1, 1], [2, 3, 0]]),            # single elements
])
@pytest.mark.parametrize("dtype", [np.float32, np.bool_])
def test_gather_nd_constant_indices(batch_dims, indices, dtype):
    rng = np.random.default_rng(6)
    x = rng.standard_normal((3, 4, 2)).astype(np.float32)
    x = (x > 0) if dtype == np.bool_ else x
    model = _model([helper.make_node("GatherND", ["x", "i"], ["y"], name="gnd",
                                     batch_dims=batch_dims)],
                   {"x": x}, {"i": np.array(indices, np.int64)},
                   outputs=(("y", _ONNX[np.dtype(dtype)]),))
    _check(model, {"x": x})


def test_gather_nd_refusals():
    x = {"x": np.ones((3, 4), np.float32)}
    model = _model([helper.make_node("GatherND", ["x", "i"], ["y"], name="gnd")], x,
                   {"i": np.array([[0, 4]], np.int64)})
    with pytest.raises(HPVMError, match=r"'gnd' \(GatherND\): the index 4 at \[0, 1\] is out "
                                        r"of range for the 4 elements of axis 1"):
        hpvm.onnx.load(model)
    ids = {"x": np.ones((3, 4), np.float32), "i": np.zeros((1, 2), np.int64)}
    model = _model([helper.make_node("GatherND", ["x", "i"], ["y"], name="gnd")], ids)
    with pytest.raises(HPVMError, match=r"'gnd' \(GatherND\): the indices .* are a graph "
                                        r"input; expected a constant"):
        hpvm.onnx.load(model)


@pytest.mark.parametrize("low,high", [(-2, 3), (None, 1), (4, 2)])
def test_clip_integers_bounds_positions(low, high):
    """Clip of int64 relative positions (DeBERTa's buckets) by constants; the clipped
    values index a table of 7 rows shifted by 3 (bounds [-2, 3] + 3 inside [0, 7))."""
    x = np.array([[-5, -2, 0, 1, 3, 9]], np.int64)
    inputs = ["x", "lo" if low is not None else "", "hi"]
    constants = {"hi": np.array(high, np.int64)}
    if low is not None:
        constants["lo"] = np.array(low, np.int64)
    model = _model([helper.make_node("Clip", inputs, ["y"], name="clip")], {"x": x}, constants,
                   outputs=(("y", TensorProto.INT64),))
    _check(model, {"x": x})
    if (low, high) == (-2, 3):
        nodes = [helper.make_node("Clip", inputs, ["c"]),
                 helper.make_node("Add", ["c", "three"], ["rows"]),
                 helper.make_node("Gather", ["table", "rows"], ["y"])]
        constants.update(three=np.array(3, np.int64),
                         table=np.arange(14, dtype=np.float32).reshape(7, 2))
        model = _model(nodes, {"x": x}, constants)
        _check(model, {"x": x})


@pytest.mark.parametrize("last", [0, 1])
def test_arg_max_rank1_keepdims(last):
    x = np.array([3.0, -1.0, 7.0, 7.0, 2.0], np.float32)
    model = _model([helper.make_node("ArgMax", ["x"], ["y"], keepdims=1, select_last_index=last)],
                   {"x": x}, outputs=(("y", TensorProto.INT64),))
    _check(model, {"x": x})


def _pool_one_token(table_rows=2, batch_column=(0, 1)):
    """The dynamo exporter's `hidden[arange(batch), argmax(ids == eos)]`: GatherND by a
    Concat of constant batch positions and ArgMax's token positions."""
    nodes = [helper.make_node("Equal", ["ids", "eos"], ["is_eos"]),
             helper.make_node("Cast", ["is_eos"], ["eos64"], to=TensorProto.INT64),
             helper.make_node("ArgMax", ["eos64"], ["last"], axis=-1, keepdims=0),
             helper.make_node("Unsqueeze", ["last", "minus1"], ["column"]),
             helper.make_node("Concat", ["batch", "column"], ["where"], axis=-1),
             helper.make_node("GatherND", ["hidden", "where"], ["y"], name="pool")]
    constants = {"eos": np.array(2, np.int64), "minus1": np.array([-1], np.int64),
                 "batch": np.array(batch_column, np.int64).reshape(2, 1)}
    inputs = {"ids": np.array([[5, 2, 7, 9], [3, 3, 3, 2]], np.int64),
              "hidden": np.random.default_rng(7).standard_normal(
                  (table_rows, 4, 3)).astype(np.float32)}
    return _model(nodes, inputs, constants), inputs


def test_gather_nd_computed_indices():
    model, inputs = _pool_one_token()
    _check(model, inputs)
    assert not hpvm.onnx.load(model).index_checks


def test_gather_nd_computed_indices_out_of_range_refused():
    model, _ = _pool_one_token(batch_column=(0, 2))  # batch position 2 of 2 rows
    with pytest.raises(HPVMError, match=r"'pool' \(GatherND\): the indices .* coordinate 0 may "
                                        r"take values in \[0, 2\], outside \[-2, 2\)"):
        hpvm.onnx.load(model)


@pytest.mark.parametrize("indices", [[[1], [3]], [[0, 2], [2, 1], [-1, 0]], [[[3]], [[0]]]])
@pytest.mark.parametrize("dtype", [np.float32, np.int64])
def test_scatter_nd(indices, dtype):
    rng = np.random.default_rng(8)
    x = rng.integers(-9, 9, (4, 3, 2)).astype(dtype)
    indices = np.array(indices, np.int64)
    updates = rng.integers(-9, 9, indices.shape[:-1] + x.shape[indices.shape[-1]:]).astype(dtype)
    onnx_type = _ONNX[np.dtype(dtype)]
    # Data and updates computed by the graph (a tensor input, and the input plus one).
    nodes = [helper.make_node("Add", ["u", "one"], ["u1"]),
             helper.make_node("ScatterND", ["x", "i", "u1"], ["y"], name="scatter")]
    model = _model(nodes, {"x": x, "u": updates},
                   {"i": indices, "one": np.array(1, dtype)}, outputs=(("y", onnx_type),))
    _check(model, {"x": x, "u": updates})
    # All constant (BEiT's relative position index): folded.
    nodes = [helper.make_node("ScatterND", ["c", "i", "cu"], ["s"], reduction="add"),
             helper.make_node("Add", ["s", "x"], ["y"])]
    model = _model(nodes, {"x": x}, {"c": x, "i": indices, "cu": updates},
                   outputs=(("y", onnx_type),), opset=18)
    _check(model, {"x": x})


def test_scatter_nd_refusals():
    x = np.zeros((4, 2), np.float32)
    for indices, message in (([[4]], r"the index 4 at \[0, 0\] is out of range for the 4 "
                                      r"elements of axis 0"),
                             ([[0], [1]], r"the updates \[1, 2\] do not fit: expected \[2, 2\]")):
        model = _model([helper.make_node("ScatterND", ["x", "i", "u"], ["y"], name="sc")],
                       {"x": x}, {"i": np.array(indices, np.int64),
                                  "u": np.ones((1, 2), np.float32)})
        with pytest.raises(HPVMError, match=r"'sc' \(ScatterND\): " + message):
            hpvm.onnx.load(model)
    model = _model([helper.make_node("ScatterND", ["x", "i", "u"], ["y"], name="sc",
                                     reduction="add")],
                   {"x": x > 0}, {"i": np.array([[1]], np.int64), "u": np.ones((1, 2), bool)},
                   outputs=(("y", TensorProto.BOOL),), opset=18)
    with pytest.raises(HPVMError, match=r"'sc' \(ScatterND\): input 0 'x' is a tensor of bool"):
        hpvm.onnx.load(model)


@pytest.mark.parametrize("reduction", ["add", "mul", "max", "min"])
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_scatter_nd_reductions(reduction, dtype):
    """Rows named more than once combine with each update in turn."""
    rng = np.random.default_rng(10)
    x = rng.integers(-5, 5, (4, 3)).astype(dtype)
    indices = np.array([[1], [3], [1], [1], [0]], np.int64)
    updates = rng.integers(-5, 5, (5, 3)).astype(dtype)
    model = _model([helper.make_node("ScatterND", ["x", "i", "u"], ["y"], name="sc",
                                     reduction=reduction)],
                   {"x": x, "u": updates}, {"i": indices},
                   outputs=(("y", _ONNX[np.dtype(dtype)]),), opset=18)
    _check(model, {"x": x, "u": updates})


def test_large_bool_constant_stays_in_the_text():
    """A causal mask of 128 x 128 (16 KiB of bools, past the 4 KiB where weights go to the
    parameter archive) compiles: bools are not archived."""
    mask = np.tril(np.ones((128, 128), bool))
    mask[5, 3] = False
    x = np.random.default_rng(9).standard_normal((128, 128)).astype(np.float32)
    nodes = [helper.make_node("Where", ["mask", "x", "low"], ["y"], name="causal")]
    model = _model(nodes, {"x": x}, {"mask": mask, "low": np.array(-1e9, np.float32)})
    _check(model, {"x": x})
    graph = hpvm.onnx.load(model)
    assert not graph.parameters()
