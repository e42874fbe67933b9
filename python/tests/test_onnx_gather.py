"""Gather by indices that are a graph input (int64 / int32 token ids of any rank, any
axis, negative indices), checked exactly against onnxruntime; an embedding lookup shaped
like BERT's; an index out of range is an HPVMError from the call, and the process goes on."""

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


def _gather_model(table, indices, axis, table_input=False):
    inputs = [helper.make_tensor_value_info("ids", _ONNX[indices.dtype], indices.shape)]
    initializers = []
    if table_input:
        inputs.insert(0, helper.make_tensor_value_info("table", _ONNX[table.dtype], table.shape))
    else:
        initializers.append(numpy_helper.from_array(table, "table"))
    node = helper.make_node("Gather", ["table", "ids"], ["y"], name="gather0", axis=axis)
    graph = helper.make_graph([node], "g", inputs,
                              [helper.make_tensor_value_info("y", _ONNX[table.dtype], None)],
                              initializer=initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _check(model, feeds):
    expected = run_onnxruntime(model, dict(feeds))
    got = hpvm.compile(hpvm.onnx.load(model))(**dict(feeds))
    got = got if isinstance(got, tuple) else (got,)
    for g, e in zip(got, expected):
        assert g.dtype == e.dtype and g.shape == e.shape
        np.testing.assert_array_equal(g, e)


@pytest.mark.parametrize("dtype", [np.int64, np.int32])
@pytest.mark.parametrize("axis,shape", [(0, (5,)), (0, (2, 3)), (1, (4,)), (1, (2, 2)),
                                        (-1, (3,))])
def test_gather_runtime_indices(dtype, axis, shape):
    rng = np.random.default_rng(0)
    table = rng.standard_normal((6, 7)).astype(np.float32)
    n = table.shape[axis]
    ids = rng.integers(-n, n, shape).astype(dtype)
    ids.flat[0] = -1  # a negative index counts from the end
    _check(_gather_model(table, ids, axis), {"ids": ids})


@pytest.mark.parametrize("dtype", [np.int64, np.bool_, np.float32])
def test_gather_runtime_indices_data_input(dtype):
    rng = np.random.default_rng(1)
    table = (rng.integers(-5, 5, (3, 4, 5)) > 0 if dtype == np.bool_
             else rng.integers(-5, 5, (3, 4, 5)).astype(dtype))
    ids = np.array([[3, -4], [0, 2]], dtype=np.int64)
    _check(_gather_model(table, ids, 1, table_input=True), {"table": table, "ids": ids})


def test_bert_embedding_lookup():
    """input_ids [1, 8] (int64, a graph input) into a [30, 16] word table, plus position
    embeddings: the embedding layer of BERT."""
    rng = np.random.default_rng(2)
    words = numpy_helper.from_array(rng.standard_normal((30, 16)).astype(np.float32), "words")
    positions = numpy_helper.from_array(rng.standard_normal((1, 8, 16)).astype(np.float32),
                                        "positions")
    nodes = [helper.make_node("Gather", ["words", "input_ids"], ["embedded"], name="word_emb"),
             helper.make_node("Add", ["embedded", "positions"], ["y"], name="add_pos")]
    graph = helper.make_graph(
        nodes, "bert_embeddings",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, [1, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        initializer=[words, positions])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    ids = np.array([[0, 7, 29, 3, 3, 12, 1, 28]], dtype=np.int64)
    expected = run_onnxruntime(model, {"input_ids": ids})[0]
    run = hpvm.compile(hpvm.onnx.load(model))
    got = run(input_ids=ids)
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=0)
    got = run(ids)  # by position
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=0)


@pytest.mark.parametrize("bad", [30, -31, 1000])
def test_gather_index_out_of_range_is_an_error(bad):
    table = np.arange(60, dtype=np.float32).reshape(30, 2)
    ids = np.array([[1, 2], [3, 4]], dtype=np.int64)
    run = hpvm.compile(hpvm.onnx.load(_gather_model(table, ids, 0)))
    wrong = ids.copy()
    wrong[1, 0] = bad
    with pytest.raises(HPVMError) as error:
        run(ids=wrong)
    message = str(error.value)
    assert "ONNX node 'gather0' (Gather)" in message, message
    assert f"the index {bad} at [1, 0] of the argument 'ids' is out of range" in message
    assert "expected an index in [-30, 30)" in message, message
    # The process survives, and the next call is right.
    np.testing.assert_array_equal(run(ids=ids), np.take(table, ids, axis=0))


def test_gather_computed_indices_refused():
    """Indices computed by the graph (here an Add of two inputs) have no check yet."""
    table = numpy_helper.from_array(np.ones((4, 2), np.float32), "table")
    nodes = [helper.make_node("Add", ["a", "b"], ["ids"], name="add0"),
             helper.make_node("Gather", ["table", "ids"], ["y"], name="gather0")]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info(n, TensorProto.INT64, [2]) for n in "ab"],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], initializer=[table])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(HPVMError, match=r"ONNX node 'gather0' \(Gather\).*are computed by "
                                        r"the graph; expected a constant or a graph input"):
        hpvm.onnx.load(model)
