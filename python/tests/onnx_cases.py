"""Shared helpers of the ONNX importer tests: the ONNX backend node test cases
for the supported operators, and small model builders."""

from __future__ import annotations

import functools
import re
import warnings
from typing import Dict, List, Sequence, Tuple

import numpy as np
import onnx
import onnxruntime
from onnx import TensorProto, numpy_helper

import hpvm
from hpvm.onnx import SUPPORTED_OPS
from hpvm.onnx.examples import make_model  # noqa: F401  (the tests build models with it)

#: Element types of graph inputs that are parameters (shapes, modes), not data:
#: the node tests bind them to their test values as initializers, since the importer
#: takes shapes, axes and modes as constants only (an exported model has them as
#: initializers too).
PARAMETER_TYPES = (TensorProto.INT64, TensorProto.BOOL)
#: Operators whose int64 / bool inputs are data (masks, token ids): those stay graph
#: inputs when every node that reads them is one of these.
DATA_OPS = frozenset({"Abs", "And", "Cast", "Equal", "Greater", "GreaterOrEqual", "IsInf",
                      "IsNaN", "Less", "LessOrEqual", "Not", "Or", "Sign", "Where", "Xor"})
#: Inputs of operators that are parameters too, of any type (bound the same way):
#: Resize's roi and scales, Pad's constant value, Range's start, limit and delta,
#: CumSum's axis.
PARAMETER_SLOTS = {"Resize": (1, 2), "Pad": (2,), "Range": (0, 1, 2), "CumSum": (1,)}


@functools.lru_cache(maxsize=1)
def node_cases() -> Dict[str, object]:
    """The ONNX backend node test cases (`onnx.backend.test.case.node`) whose
    nodes all have a supported op type, by name. A case `..._expanded` (a function
    operator written as its body) counts when the operator itself is supported (its case
    without the suffix is selected): the expansions of RMSNormalization, FlexAttention,
    CastLike, ... test operators the importer does not have, and would only slow the
    suite down."""
    from onnx.backend.test.case.node import collect_testcases

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the case generators' overflow warnings
        cases = collect_testcases(None)
    supported = set(SUPPORTED_OPS)
    selected = {}
    for case in cases:
        if case.model is None or not case.data_sets:
            continue
        if all(node.op_type in supported for node in case.model.graph.node):
            selected[case.name] = case
    for name in list(selected):
        operator = re.sub(r"_expanded(_ver\d+)?$", "", name)
        if operator != name and operator not in selected:
            del selected[name]
    return selected


def case_arrays(values: Sequence) -> List:
    """A case's inputs or outputs as arrays (some cases hold TensorProtos)."""
    return [numpy_helper.to_array(v) if isinstance(v, TensorProto) else v for v in values]


def bind_parameters(model, inputs: Sequence[np.ndarray]) -> Tuple[object, List[np.ndarray]]:
    """`model` with its int64 / bool graph inputs (and the float parameters of
    PARAMETER_SLOTS) turned into initializers holding `inputs`' values; the remaining
    inputs, in order."""
    model = onnx.ModelProto.FromString(model.SerializeToString())
    graph = model.graph
    initialized = {init.name for init in graph.initializer}
    real = [v for v in graph.input if v.name not in initialized]
    parameters = {node.input[i] for node in graph.node
                  for i in PARAMETER_SLOTS.get(node.op_type, ()) if i < len(node.input)}
    readers: Dict[str, set] = {}
    for node in graph.node:
        for name in node.input:
            readers.setdefault(name, set()).add(node.op_type)
    data = {name for name, ops in readers.items() if ops <= DATA_OPS}
    kept_values, bound = [], set()
    for value_info, value in zip(real, inputs):
        type_ = value_info.type
        if (type_.WhichOneof("value") == "tensor_type"
                and (type_.tensor_type.elem_type in PARAMETER_TYPES
                     and value_info.name not in data
                     or value_info.name in parameters)
                and isinstance(value, (np.ndarray, np.generic))):
            graph.initializer.append(numpy_helper.from_array(np.asarray(value), value_info.name))
            bound.add(value_info.name)
        else:
            kept_values.append(value)
    if bound:
        kept = [onnx.ValueInfoProto.FromString(v.SerializeToString())
                for v in graph.input if v.name not in bound]
        del graph.input[:]
        graph.input.extend(kept)
    return model, kept_values


def run_onnxruntime(model, feeds: Dict[str, np.ndarray]) -> List[np.ndarray]:
    session = onnxruntime.InferenceSession(model.SerializeToString(),
                                           providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


def compare_with_onnxruntime(model, feeds: Dict[str, np.ndarray], rtol=1e-4, atol=1e-5):
    """Imports `model`, runs it with `feeds` and checks every output (its shape, element
    type and values) against onnxruntime's; returns the graph."""
    expected = run_onnxruntime(model, feeds)
    graph = hpvm.onnx.load(model)
    got = hpvm.run(graph, feeds)
    assert len(got) == len(expected)
    for name, g, e in zip(graph.output_names, got, expected):
        assert g.shape == e.shape, name
        assert g.dtype == e.dtype, name
        np.testing.assert_allclose(g, e, rtol=rtol, atol=atol, err_msg=name)
    return graph


def outputs(*names):
    """The graph outputs `names` for make_model, their types inferred."""
    return [(n, None) for n in names]
