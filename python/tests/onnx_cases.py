"""Shared helpers of the ONNX importer tests: the ONNX backend node test cases
for the supported operators, and small model builders."""

from __future__ import annotations

import functools
import warnings
from typing import Dict, List, Sequence, Tuple

import numpy as np
import onnx
import onnxruntime
from onnx import TensorProto, numpy_helper

from hpvm.onnx import SUPPORTED_OPS
from hpvm.onnx.examples import make_model  # noqa: F401  (the tests build models with it)

#: Element types of graph inputs that are parameters (shapes, modes), not data:
#: the node tests bind them to their test values as initializers, since a graph
#: takes only float tensors (an exported model has them as initializers too).
PARAMETER_TYPES = (TensorProto.INT64, TensorProto.BOOL)


@functools.lru_cache(maxsize=1)
def node_cases() -> Dict[str, object]:
    """The ONNX backend node test cases (`onnx.backend.test.case.node`) whose
    nodes all have a supported op type, by name."""
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
    return selected


def bind_parameters(model, inputs: Sequence[np.ndarray]) -> Tuple[object, List[np.ndarray]]:
    """`model` with its int64 / bool graph inputs turned into initializers holding
    `inputs`' values; the remaining inputs, in order."""
    model = onnx.ModelProto.FromString(model.SerializeToString())
    graph = model.graph
    initialized = {init.name for init in graph.initializer}
    real = [v for v in graph.input if v.name not in initialized]
    kept_values, bound = [], set()
    for value_info, value in zip(real, inputs):
        type_ = value_info.type
        if (type_.WhichOneof("value") == "tensor_type"
                and type_.tensor_type.elem_type in PARAMETER_TYPES
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
