"""Comparisons, logic, Abs, Sign, Where and Cast over float, integer and bool tensors
(graph inputs of int64 token ids and bool / int64 masks), checked against onnxruntime:
exactly for integer and bool results. Each graph is one node of graph inputs (and a
broadcast constant), so the op runs in the compiled graph, not folded."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from onnx import TensorProto, helper

import hpvm
import hpvm.onnx
from hpvm import HPVMError

from onnx_cases import run_onnxruntime

_ONNX = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.float64): TensorProto.DOUBLE,
         np.dtype(np.float16): TensorProto.FLOAT16, np.dtype(np.int64): TensorProto.INT64,
         np.dtype(np.int32): TensorProto.INT32, np.dtype(np.int8): TensorProto.INT8,
         np.dtype(np.bool_): TensorProto.BOOL}


def _model(op, feeds, out_type, initializers=(), opset=17, **attrs):
    inputs = [helper.make_tensor_value_info(n, _ONNX[a.dtype], a.shape) for n, a in feeds]
    names = [n for n, _ in feeds] + [t.name for t in initializers]
    node = helper.make_node(op, names, ["y"], name="n0", **attrs)
    graph = helper.make_graph([node], "g", inputs,
                              [helper.make_tensor_value_info("y", out_type, None)],
                              initializer=list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _check(model, feeds):
    expected = run_onnxruntime(model, dict(feeds))
    run = hpvm.compile(hpvm.onnx.load(model))
    got = run(**dict(feeds))
    got = got if isinstance(got, tuple) else (got,)
    for g, e in zip(got, expected):
        assert g.dtype == e.dtype and g.shape == e.shape
        if g.dtype.kind in "biu":
            np.testing.assert_array_equal(g, e)
        else:
            np.testing.assert_allclose(g, e, rtol=1e-6, atol=0, equal_nan=True)


def _values(dtype, shape, seed=0):
    rng = np.random.default_rng(seed)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if np.dtype(dtype).kind == "i":
        return rng.integers(-3, 4, shape).astype(dtype)
    x = rng.integers(-3, 4, shape).astype(dtype)
    x.flat[0] = np.nan
    if x.size > 2:
        x.flat[1], x.flat[2] = np.inf, -np.inf
    return x


COMPARE = ["Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual"]
NUMBERS = [np.float32, np.float64, np.int64, np.int32, np.int8]


@pytest.mark.parametrize("dtype", NUMBERS, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("op", COMPARE)
def test_comparison_broadcast(op, dtype):
    a = _values(dtype, (2, 3, 4), 1)
    b = _values(dtype, (3, 1), 2)
    _check(_model(op, [("a", a), ("b", b)], TensorProto.BOOL), [("a", a), ("b", b)])


def test_equal_bool_and_scalar_constant():
    a = _values(np.bool_, (4, 5))
    const = helper.make_tensor("k", TensorProto.BOOL, [], [True])
    _check(_model("Equal", [("a", a)], TensorProto.BOOL, [const]), [("a", a)])
    ids = np.array([[101, 7, 0, 0]], np.int64)
    pad = helper.make_tensor("pad", TensorProto.INT64, [], [0])
    _check(_model("Equal", [("ids", ids)], TensorProto.BOOL, [pad]), [("ids", ids)])


@pytest.mark.parametrize("op", ["And", "Or", "Xor"])
def test_logic_broadcast(op):
    a, b = _values(np.bool_, (3, 1, 4), 1), _values(np.bool_, (2, 4), 2)
    _check(_model(op, [("a", a), ("b", b)], TensorProto.BOOL), [("a", a), ("b", b)])


def test_not_rank_0_and_rank_3():
    for shape in [(), (2, 3, 4)]:
        a = np.asarray(_values(np.bool_, shape))
        _check(_model("Not", [("a", a)], TensorProto.BOOL), [("a", a)])


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16], ids=lambda d: np.dtype(d).name)
def test_isnan_isinf(dtype):
    x = _values(dtype, (3, 5))
    _check(_model("IsNaN", [("x", x)], TensorProto.BOOL), [("x", x)])
    if dtype == np.float16:  # IsInf takes float16 from opset 20
        return
    for negative in (0, 1):
        for positive in (0, 1):
            _check(_model("IsInf", [("x", x)], TensorProto.BOOL, detect_negative=negative,
                          detect_positive=positive), [("x", x)])


@pytest.mark.parametrize("op", ["Abs", "Sign"])
@pytest.mark.parametrize("dtype", NUMBERS, ids=lambda d: np.dtype(d).name)
def test_abs_sign(op, dtype):
    x = _values(dtype, (4, 6))
    if op == "Abs":
        x = np.where(np.isnan(x), 2, x).astype(dtype) if x.dtype.kind == "f" else x
    if x.dtype.kind == "i":
        x.flat[0] = np.iinfo(dtype).min + 1
    _check(_model(op, [("x", x)], _ONNX[x.dtype]), [("x", x)])


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.int32], ids=lambda d: np.dtype(d).name)
def test_where_broadcast(dtype):
    c = _values(np.bool_, (2, 1, 4), 3)
    x, z = _values(dtype, (3, 4), 4), _values(dtype, (1,), 5)
    _check(_model("Where", [("c", c), ("x", x), ("z", z)], _ONNX[np.dtype(dtype)]),
           [("c", c), ("x", x), ("z", z)])


@pytest.mark.parametrize("source,target", [
    (np.int64, TensorProto.FLOAT), (np.bool_, TensorProto.FLOAT), (np.bool_, TensorProto.INT64),
    (np.int64, TensorProto.BOOL), (np.float32, TensorProto.BOOL),
    (np.float32, TensorProto.INT64), (np.int64, TensorProto.INT32),
    (np.int32, TensorProto.INT64), (np.float32, TensorProto.DOUBLE)])
def test_cast_tensors(source, target):
    x = _values(source, (3, 4))
    if x.dtype.kind == "f":
        x = np.where(np.isfinite(x), x * 1.75, 0.5).astype(source)
    _check(_model("Cast", [("x", x)], target, to=target), [("x", x)])


def test_folded_constants_and_zero_size():
    # All inputs constant: folded in NumPy (0-size tensors too).
    for shape in [(0,), (2, 0, 3)]:
        a = helper.make_tensor("a", TensorProto.INT64, shape, [])
        b = helper.make_tensor("b", TensorProto.INT64, [1], [1])
        x = np.ones((2,), np.float32)
        model = _model("Less", [], TensorProto.BOOL, [a, b])
        graph = model.graph
        graph.input.append(helper.make_tensor_value_info("x", TensorProto.FLOAT, [2]))
        graph.node.append(helper.make_node("Identity", ["x"], ["z"]))
        graph.output.append(helper.make_tensor_value_info("z", TensorProto.FLOAT, [2]))
        del graph.output[0]  # y is a constant: inspected, not an output
        importer = hpvm.onnx.importer.Importer(model)
        importer.build()
        assert importer.values["y"].shape == shape and importer.values["y"].dtype == np.bool_


def test_bad_types_refused():
    a = np.zeros((2,), np.int64)
    b = np.zeros((2,), np.float32)
    with pytest.raises(HPVMError, match=r"'n0' \(Less\).*different element types"):
        hpvm.onnx.load(_model("Less", [("a", a), ("b", b)], TensorProto.BOOL))
    with pytest.raises(HPVMError, match=r"'n0' \(And\).*int64; expected bool"):
        hpvm.onnx.load(_model("And", [("a", a), ("b", a)], TensorProto.BOOL))
    with pytest.raises(HPVMError, match=r"'n0' \(Where\).*condition 'a' is a tensor of int64"):
        hpvm.onnx.load(_model("Where", [("a", a), ("b", b), ("c", b)], TensorProto.FLOAT))
    with pytest.raises(HPVMError, match=r"'n0' \(IsNaN\).*int64; expected float"):
        hpvm.onnx.load(_model("IsNaN", [("a", a)], TensorProto.BOOL))
    for op in ("Relu", "ReduceSum", "ReduceMax", "Softmax", "Neg"):
        with pytest.raises(HPVMError, match=rf"'n0' \({op}\).*int64; this operator takes float"):
            hpvm.onnx.load(_model(op, [("a", a)], TensorProto.INT64))
    with pytest.raises(HPVMError, match=r"'n0' \(Mod\).*int64; this operator takes float"):
        hpvm.onnx.load(_model("Mod", [("a", a), ("b", a)], TensorProto.INT64))


def test_bert_style_attention_mask():
    """int64 token ids and an int64 or bool attention mask: Equal (padding), Cast, Not,
    Where mask a float score tensor, as BERT's and DistilBERT's exports do."""
    h = helper
    seq = 6
    for mask_type in (TensorProto.INT64, TensorProto.BOOL):
        nodes = [
            h.make_node("Equal", ["input_ids", "pad"], ["is_pad"], name="eq"),
            h.make_node("Cast", ["attention_mask"], ["mask_b"], to=TensorProto.BOOL, name="cb"),
            h.make_node("Not", ["is_pad"], ["not_pad"], name="not"),
            h.make_node("And", ["mask_b", "not_pad"], ["keep"], name="and"),
            h.make_node("Unsqueeze", ["keep", "axes"], ["keep4"], name="unsq"),
            h.make_node("Cast", ["keep4"], ["keepf"], to=TensorProto.FLOAT, name="cf"),
            h.make_node("Sub", ["one", "keepf"], ["inv"], name="sub"),
            h.make_node("Mul", ["inv", "big"], ["bias"], name="mul"),
            h.make_node("Add", ["scores", "bias"], ["masked"], name="add"),
            h.make_node("Not", ["keep4"], ["drop"], name="not2"),
            h.make_node("Where", ["drop", "neg", "masked"], ["out"], name="where"),
        ]
        inits = [h.make_tensor("pad", TensorProto.INT64, [], [0]),
                 h.make_tensor("axes", TensorProto.INT64, [2], [1, 2]),
                 h.make_tensor("one", TensorProto.FLOAT, [], [1.0]),
                 h.make_tensor("big", TensorProto.FLOAT, [], [-10000.0]),
                 h.make_tensor("neg", TensorProto.FLOAT, [], [-3.0e38])]
        graph = h.make_graph(
            nodes, "bert_mask",
            [h.make_tensor_value_info("input_ids", TensorProto.INT64, [2, seq]),
             h.make_tensor_value_info("attention_mask", mask_type, [2, seq]),
             h.make_tensor_value_info("scores", TensorProto.FLOAT, [2, 3, seq, seq])],
            [h.make_tensor_value_info("out", TensorProto.FLOAT, None),
             h.make_tensor_value_info("keep", TensorProto.BOOL, None)],
            initializer=inits)
        model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])
        ids = np.array([[101, 7, 8, 102, 0, 0], [101, 5, 102, 0, 0, 0]], np.int64)
        mask = (ids != 0)
        mask[0, 2] = False
        mask = mask.astype(np.int64 if mask_type == TensorProto.INT64 else np.bool_)
        scores = np.random.default_rng(0).standard_normal((2, 3, seq, seq)).astype(np.float32)
        _check(model, [("input_ids", ids), ("attention_mask", mask), ("scores", scores)])


@pytest.mark.parametrize("dtype", [np.int64, np.bool_], ids=lambda d: np.dtype(d).name)
def test_data_movement_of_int_and_bool_tensors(dtype):
    """Reshape, Unsqueeze, Squeeze, Transpose, Concat, Slice, Expand and Identity move
    int64 and bool tensors as they move floats."""
    h = helper
    x = _values(dtype, (2, 1, 3), 7)
    t = _ONNX[np.dtype(dtype)]
    i64 = lambda name, *v: h.make_tensor(name, TensorProto.INT64, [len(v)], list(v))  # noqa
    nodes = [h.make_node("Reshape", ["x", "shape"], ["r"]),
             h.make_node("Unsqueeze", ["x", "ax0"], ["u"]),
             h.make_node("Squeeze", ["u", "ax0"], ["s"]),
             h.make_node("Transpose", ["x"], ["tr"], perm=[2, 0, 1]),
             h.make_node("Concat", ["x", "s"], ["c"], axis=1),
             h.make_node("Slice", ["x", "starts", "ends", "axes"], ["sl"]),
             h.make_node("Expand", ["x", "big"], ["e"]),
             h.make_node("Identity", ["x"], ["id"])]
    outs = ["r", "tr", "c", "sl", "e", "id"]
    graph = h.make_graph(nodes, "moves", [h.make_tensor_value_info("x", t, [2, 1, 3])],
                         [h.make_tensor_value_info(o, t, None) for o in outs],
                         initializer=[i64("shape", 3, 2), i64("ax0", 0), i64("starts", 1),
                                      i64("ends", 3), i64("axes", 2), i64("big", 2, 4, 3)])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])
    _check(model, [("x", x)])


@pytest.mark.parametrize("op", ["Max", "Min", "Sum", "Mean"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.int32],
                         ids=lambda d: np.dtype(d).name)
def test_variadic_broadcast(op, dtype):
    if op in ("Sum", "Mean") and np.dtype(dtype).kind == "i":  # ONNX: floats only
        a = np.zeros((2,), dtype)
        with pytest.raises(HPVMError, match=rf"'n0' \({op}\).*int\d+; expected float"):
            hpvm.onnx.load(_model(op, [("a", a), ("b", a)], _ONNX[a.dtype]))
        return
    feeds = [("a", _values(dtype, (2, 1, 4), 1)), ("b", _values(dtype, (3, 1), 2)),
             ("c", _values(dtype, (4,), 3))]
    for n in (1, 2, 3):
        model = _model(op, feeds[:n], _ONNX[np.dtype(dtype)])
        if op == "Mean" and dtype == np.float64:  # onnxruntime's CPU provider has none
            arrays = [a for _, a in feeds[:n]]
            with np.errstate(invalid="ignore"):  # inf + -inf
                expected = functools.reduce(np.add, arrays) / n
            (got,) = hpvm.run(hpvm.onnx.load(model), arrays)
            np.testing.assert_allclose(got, expected, rtol=1e-15, equal_nan=True)
            continue
        _check(model, feeds[:n])


@pytest.mark.parametrize("op", ["Floor", "Ceil", "Round"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=lambda d: np.dtype(d).name)
def test_rounding(op, dtype):
    x = np.array([[0.5, 1.5, 2.5, -0.5, -1.5, 2.4], [-2.6, np.nan, np.inf, -np.inf, 0.0, 7.0]],
                 dtype)
    _check(_model(op, [("x", x)], _ONNX[x.dtype]), [("x", x)])


@pytest.mark.parametrize("dtype", [np.float32, np.int64], ids=lambda d: np.dtype(d).name)
def test_trilu(dtype):
    x = _values(dtype, (2, 4, 5), 9)
    x = np.where(np.isnan(x), 1, x).astype(dtype) if x.dtype.kind == "f" else x
    for upper in (0, 1):
        for k in (-7, -1, 0, 2, 9, None):
            inits = [] if k is None else [helper.make_tensor("k", TensorProto.INT64, [], [k])]
            _check(_model("Trilu", [("x", x)], _ONNX[x.dtype], inits, opset=14, upper=upper),
                   [("x", x)])


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.int32],
                         ids=lambda d: np.dtype(d).name)
def test_cumsum(dtype):
    x = _values(dtype, (2, 5, 3), 11)
    x = np.where(np.isfinite(x), x, 0.25).astype(dtype) if x.dtype.kind == "f" else x
    for axis in (1, -1, 0):
        for exclusive in (0, 1):
            for reverse in (0, 1):
                inits = [helper.make_tensor("axis", TensorProto.INT64, [], [axis])]
                _check(_model("CumSum", [("x", x)], _ONNX[x.dtype], inits, opset=14,
                              exclusive=exclusive, reverse=reverse), [("x", x)])


def test_roberta_position_ids():
    """RoBERTa's position ids from int64 token ids: Not(Equal(ids, pad)) cast to int32, its
    CumSum along the sequence, times the mask, plus the pad id."""
    h = helper
    nodes = [h.make_node("Equal", ["ids", "pad"], ["is_pad"]),
             h.make_node("Not", ["is_pad"], ["keep"]),
             h.make_node("Cast", ["keep"], ["mask"], to=TensorProto.INT32),
             h.make_node("CumSum", ["mask", "axis"], ["run"]),
             h.make_node("Mul", ["run", "mask"], ["kept"]),
             h.make_node("Cast", ["kept"], ["kept64"], to=TensorProto.INT64),
             h.make_node("Add", ["kept64", "pad"], ["positions"])]
    graph = h.make_graph(nodes, "roberta_positions",
                         [h.make_tensor_value_info("ids", TensorProto.INT64, [2, 7])],
                         [h.make_tensor_value_info("positions", TensorProto.INT64, None)],
                         initializer=[h.make_tensor("pad", TensorProto.INT64, [], [1]),
                                      h.make_tensor("axis", TensorProto.INT64, [], [1])])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 14)])
    ids = np.array([[0, 31, 414, 2, 1, 1, 1], [0, 9, 2, 1, 1, 1, 1]], np.int64)
    _check(model, [("ids", ids)])


@pytest.mark.parametrize("op", ["Add", "Sub", "Mul"])
@pytest.mark.parametrize("dtype", [np.int64, np.int32], ids=lambda d: np.dtype(d).name)
def test_integer_arithmetic_of_tensors(op, dtype):
    a = _values(dtype, (2, 3, 4), 1)
    a.flat[0] = np.iinfo(dtype).max  # wraps around, as onnxruntime
    b = _values(dtype, (3, 1), 2)
    b.flat[0] = 2
    _check(_model(op, [("a", a), ("b", b)], _ONNX[a.dtype]), [("a", a), ("b", b)])


def test_integer_div_of_tensors_refused():
    a = np.ones((2,), np.int64)
    with pytest.raises(HPVMError, match=r"'n0' \(Div\): Div of integer tensors computed by "
                                        r"the graph is not supported"):
        hpvm.onnx.load(_model("Div", [("a", a), ("b", a)], TensorProto.INT64))
    with pytest.raises(HPVMError, match=r"'n0' \(Add\).*different element types"):
        hpvm.onnx.load(_model("Add", [("a", a), ("b", a.astype(np.int32))], TensorProto.INT64))


def test_zero_size_tensor_inputs_refused():
    """A graph input with a zero-size dimension is refused by the node that reads it (a
    compiled graph has no 0-size tensors; constants of 0 size fold)."""
    ids = np.zeros((2, 0), np.int64)
    pad = helper.make_tensor("pad", TensorProto.INT64, [], [0])
    with pytest.raises(HPVMError, match=r"'n0' \(Equal\): the graph input 'ids' has the shape "
                                        r"\[2, 0\] with a zero-size dimension"):
        hpvm.onnx.load(_model("Equal", [("ids", ids)], TensorProto.BOOL, [pad]))
    mask = np.zeros((0,), np.bool_)
    with pytest.raises(HPVMError, match=r"'n0' \(Not\): the graph input 'm' has the shape \[0\]"):
        hpvm.onnx.load(_model("Not", [("m", mask)], TensorProto.BOOL))


def test_causal_mask_with_padding_and_nan_guard():
    """The masking code of GPT-2 / Llama exports: a causal mask from Range and
    LessOrEqual (folded: the shapes are static), And with a bool padding mask input,
    Where on the scores, then IsNaN guarding the softmax of fully masked rows."""
    h = helper
    seq = 5
    nodes = [
        h.make_node("Range", ["zero", "seq", "one"], ["pos"]),
        h.make_node("Unsqueeze", ["pos", "ax0"], ["row"]),
        h.make_node("Unsqueeze", ["pos", "ax1"], ["col"]),
        h.make_node("LessOrEqual", ["row", "col"], ["causal"]),
        h.make_node("Unsqueeze", ["padding", "ax12"], ["pad4"]),
        h.make_node("And", ["causal", "pad4"], ["allowed"]),
        h.make_node("Where", ["allowed", "scores", "neginf"], ["masked"]),
        h.make_node("Softmax", ["masked"], ["probs"], axis=-1),
        h.make_node("IsNaN", ["probs"], ["nan"]),
        h.make_node("Where", ["nan", "zerof", "probs"], ["out"]),
    ]
    i64 = lambda name, dims, vals: h.make_tensor(name, TensorProto.INT64, dims, vals)  # noqa
    inits = [i64("zero", [], [0]), i64("seq", [], [seq]), i64("one", [], [1]),
             i64("ax0", [1], [0]), i64("ax1", [1], [1]), i64("ax12", [2], [1, 2]),
             h.make_tensor("neginf", TensorProto.FLOAT, [], [-np.inf]),
             h.make_tensor("zerof", TensorProto.FLOAT, [], [0.0])]
    graph = h.make_graph(
        nodes, "causal",
        [h.make_tensor_value_info("padding", TensorProto.BOOL, [2, seq]),
         h.make_tensor_value_info("scores", TensorProto.FLOAT, [2, 2, seq, seq])],
        [h.make_tensor_value_info("out", TensorProto.FLOAT, None)], initializer=inits)
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])
    padding = np.array([[True] * seq, [False, False, True, True, True]])
    scores = np.random.default_rng(1).standard_normal((2, 2, seq, seq)).astype(np.float32)
    _check(model, [("padding", padding), ("scores", scores)])
