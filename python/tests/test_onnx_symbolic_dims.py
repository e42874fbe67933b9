"""Symbolic dimensions of ONNX inputs: named dimensions bound by `dims=` or through
`shapes=`, one size per name (an error naming the dimension and both sources otherwise),
an error naming a dimension that nothing binds; and `hpvm.onnx.compile_dynamic`, which
compiles a graph per set of input shapes: a decoder-shaped graph whose past keys and values
grow by a token a step runs a greedy loop that gives onnxruntime's tokens."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper

import hpvm
import hpvm.onnx
from hpvm import HPVMError

F, I64 = TensorProto.FLOAT, TensorProto.INT64


def _relu_pair():
    """Two inputs sharing 'batch' and 'sequence'; y = relu(a) + b."""
    nodes = [helper.make_node("Relu", ["a"], ["r"]), helper.make_node("Add", ["r", "b"], ["y"])]
    graph = helper.make_graph(
        nodes, "pair", [helper.make_tensor_value_info("a", F, ("batch", "sequence")),
                        helper.make_tensor_value_info("b", F, ("batch", "sequence"))],
        [helper.make_tensor_value_info("y", F, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_named_dims_bind_every_input():
    model = _relu_pair()
    for options in ({"dims": {"batch": 2, "sequence": 5}}, {"shapes": {"a": (2, 5)}},
                    {"input_shapes": {"b": (2, 5)}}, {"dims": {"sequence": 5}, "batch_size": 2},
                    {"shapes": {"b": (2, 5)}, "dims": {"sequence": 5}}):
        graph = hpvm.onnx.load(model, **options)
        assert [t.shape for t in graph.inputs] == [(2, 5), (2, 5)], options
    # The first dimension takes batch_size (default 1) when nothing else binds it, also
    # where its name is another dimension of an input before it.
    assert hpvm.onnx.load(model, dims={"sequence": 3}).inputs[1].shape == (1, 3)
    graph = helper.make_graph(
        [helper.make_node("Relu", ["a"], ["y"]), helper.make_node("Relu", ["b"], ["z"])],
        "late", [helper.make_tensor_value_info("a", F, ("m", "n")),
                 helper.make_tensor_value_info("b", F, ("n", 2))],
        [helper.make_tensor_value_info("y", F, None), helper.make_tensor_value_info("z", F, None)])
    late = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    assert [t.shape for t in hpvm.onnx.load(late, batch_size=3).inputs] == [(3, 3), (3, 2)]
    assert [t.shape for t in hpvm.onnx.load(late).inputs] == [(1, 1), (1, 2)]


def test_named_dims_errors_name_the_dimension():
    model = _relu_pair()
    with pytest.raises(HPVMError, match=r"graph input 'a' has a dynamic dimension 1 "
                                        r"\('sequence'\) that nothing binds; bind it with "
                                        r"dims=\{'sequence': N\}.*shapes=\{'a'"):
        hpvm.onnx.load(model)
    with pytest.raises(HPVMError, match=r"the dimension 'sequence' is 6 in shapes\['b'\] "
                                        r"\(dimension 1 of 'b'\) but 5 in shapes\['a'\] "
                                        r"\(dimension 1 of 'a'\).*inputs that have it: a, b"):
        hpvm.onnx.load(model, shapes={"a": (2, 5), "b": (2, 6)})
    with pytest.raises(HPVMError, match=r"the dimension 'batch' is 3 in shapes\['a'\] .* but "
                                        r"2 in dims=\{'batch': 2\}"):
        hpvm.onnx.load(model, shapes={"a": (3, 5)}, dims={"batch": 2})
    with pytest.raises(HPVMError, match=r"dims names \['seq'\], which no input of the model "
                                        r"has \(its named dimensions: 'batch', 'sequence'\)"):
        hpvm.onnx.load(model, dims={"seq": 5})
    with pytest.raises(HPVMError, match=r"batch_size=4, but the dimension 'batch'"):
        hpvm.onnx.load(model, dims={"batch": 2, "sequence": 5}, batch_size=4)
    with pytest.raises(HPVMError, match=r"shapes= and input_shapes= are one argument"):
        hpvm.onnx.load(model, shapes={"a": (1, 1)}, input_shapes={"a": (1, 1)})
    for bad in ({"batch": 0}, {"batch": 1.5}, {"batch": True}, ["batch"]):
        with pytest.raises(HPVMError, match=r"dims"):
            hpvm.onnx.load(model, dims=bad)
    with pytest.raises(HPVMError, match=r"shapes\['a'\] is \[2, 5, 1\] of rank 3"):
        hpvm.onnx.load(model, shapes={"a": (2, 5, 1)})


def test_cli_dim(tmp_path):
    path = tmp_path / "pair.onnx"
    path.write_bytes(_relu_pair().SerializeToString())
    env = dict(os.environ)
    package_root = str(Path(hpvm.__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
    result = subprocess.run([sys.executable, "-m", "hpvm.onnx", str(path), "--dim",
                             "sequence=7", "--dim", "batch=2"],
                            capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stderr
    assert "memref<2x7xf32>" in result.stdout


D, HEADS, VOCAB, CONTEXT = 16, 2, 11, 32


def _decoder():
    """One attention layer over a key/value cache: input_ids [batch, sequence], past_key
    and past_value [batch, heads, past_sequence, head size] -> logits of the last token,
    present_key and present_value (past_sequence + sequence). Positions and the causal mask
    come from the inputs' shapes (Shape, Range, comparisons): folded at each shape."""
    rng = np.random.default_rng(7)
    dh = D // HEADS
    weights = {"embed": rng.standard_normal((VOCAB, D)), "pos": rng.standard_normal((CONTEXT, D)),
               "wq": rng.standard_normal((D, D)) / 4, "wk": rng.standard_normal((D, D)) / 4,
               "wv": rng.standard_normal((D, D)) / 4, "wo": rng.standard_normal((D, D)) / 4,
               "head": rng.standard_normal((D, VOCAB)),
               "heads_shape": np.array([0, 0, HEADS, dh]), "merge": np.array([0, 0, D]),
               "zero": np.array(0), "one": np.array(1), "two": np.array(2),
               "axis1": np.array([1]), "last": np.array([-1]), "big": np.array([2 ** 31]),
               "scale": np.array(1 / np.sqrt(dh)), "neg": np.array(-1e9)}
    inits = [numpy_helper.from_array(a.astype(np.float32) if a.dtype == np.float64 else a, n)
             for n, a in weights.items()]
    n = helper.make_node
    nodes = [
        n("Shape", ["input_ids"], ["ids_shape"]), n("Gather", ["ids_shape", "one"], ["seq"]),
        n("Shape", ["past_key"], ["past_shape"]), n("Gather", ["past_shape", "two"], ["past"]),
        n("Add", ["past", "seq"], ["total"]),
        n("Range", ["past", "total", "one"], ["positions"]),
        n("Gather", ["embed", "input_ids"], ["tok"]), n("Gather", ["pos", "positions"], ["pe"]),
        n("Add", ["tok", "pe"], ["h"]),
        *[n("MatMul", ["h", w], [w + "_h"]) for w in ("wq", "wk", "wv")],
        *[n("Reshape", [w + "_h", "heads_shape"], [w + "_r"]) for w in ("wq", "wk", "wv")],
        *[n("Transpose", [w + "_r"], [w + "_t"], perm=[0, 2, 1, 3]) for w in ("wq", "wk", "wv")],
        n("Concat", ["past_key", "wk_t"], ["present_key"], axis=2),
        n("Concat", ["past_value", "wv_t"], ["present_value"], axis=2),
        n("Transpose", ["present_key"], ["kt"], perm=[0, 1, 3, 2]),
        n("MatMul", ["wq_t", "kt"], ["s0"]), n("Mul", ["s0", "scale"], ["scores"]),
        # Causal: key j is seen by query i when j <= past + i.
        n("Range", ["zero", "total", "one"], ["cols"]),
        n("Unsqueeze", ["positions", "last"], ["rows"]),
        n("LessOrEqual", ["cols", "rows"], ["seen"]),
        n("Where", ["seen", "scores", "neg"], ["masked"]),
        n("Softmax", ["masked"], ["p"], axis=-1), n("MatMul", ["p", "present_value"], ["ctx"]),
        n("Transpose", ["ctx"], ["ctx_t"], perm=[0, 2, 1, 3]),
        n("Reshape", ["ctx_t", "merge"], ["merged"]), n("MatMul", ["merged", "wo"], ["o"]),
        n("Add", ["o", "h"], ["res"]),
        n("Slice", ["res", "last", "big", "axis1"], ["last_h"]),  # the last token
        n("MatMul", ["last_h", "head"], ["logits"]),
    ]
    cache = ("batch", HEADS, "past_sequence", dh)
    graph = helper.make_graph(
        nodes, "decoder",
        [helper.make_tensor_value_info("input_ids", I64, ("batch", "sequence")),
         helper.make_tensor_value_info("past_key", F, cache),
         helper.make_tensor_value_info("past_value", F, cache)],
        [helper.make_tensor_value_info("logits", F, None),
         helper.make_tensor_value_info("present_key", F, None),
         helper.make_tensor_value_info("present_value", F, None)], initializer=inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _greedy(step, prompt, past, steps):
    """Tokens of a greedy loop; `step(ids, key, value)` -> (logits, key, value)."""
    ids, (key, value), tokens, all_logits = prompt, past, [], []
    for _ in range(steps):
        logits, key, value = step(ids, key, value)
        token = int(np.argmax(logits[0, -1]))
        tokens.append(token)
        all_logits.append(logits)
        ids = np.array([[token]], dtype=np.int64)
    return tokens, all_logits


def test_compile_dynamic_greedy_decoder_matches_onnxruntime():
    model = _decoder()
    session = onnxruntime.InferenceSession(model.SerializeToString(),
                                           providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(3)
    past = tuple(rng.standard_normal((1, HEADS, 1, D // HEADS)).astype(np.float32)
                 for _ in range(2))
    prompt = np.array([[3, 1, 4]], dtype=np.int64)

    def reference(ids, key, value):
        return session.run(None, {"input_ids": ids, "past_key": key, "past_value": value})

    step = hpvm.onnx.compile_dynamic(model, fuse=True)
    expected, expected_logits = _greedy(reference, prompt, past, 4)
    tokens, logits = _greedy(step, prompt, past, 4)
    assert tokens == expected
    for got, want in zip(logits, expected_logits):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    # One compile per shape: the prompt (sequence 3, past 1), then past 4, 5 and 6.
    assert sorted(key[2][2] for key in step.compiled) == [1, 4, 5, 6]
    again, _ = _greedy(step, prompt, past, 4)
    assert again == expected and len(step.compiled) == 4
    with pytest.raises(HPVMError, match=r"the dimension 'past_sequence' is 3 in "
                                        r"shapes\['past_value'\] .* but 2 in "
                                        r"shapes\['past_key'\]"):
        step(prompt, np.zeros((1, HEADS, 2, D // HEADS), np.float32),
             np.zeros((1, HEADS, 3, D // HEADS), np.float32))
    with pytest.raises(HPVMError, match=r"missing argument\(s\) past_value"):
        step(prompt, past[0])
    with pytest.raises(HPVMError, match=r"dimension 1 of the model's input is fixed to 2"):
        step(input_ids=prompt, past_key=np.zeros((1, 3, 2, 8), np.float32),
             past_value=np.zeros((1, 3, 2, 8), np.float32))
