"""ONNX models as HPVM tensor graphs.

    import hpvm, hpvm.onnx
    graph = hpvm.onnx.load("model.onnx", batch_size=4)
    run = hpvm.compile(graph)
    outputs = run(input=images)

`load` takes a path, serialized bytes or an `onnx.ModelProto` and returns a
`hpvm.TensorGraph` (one leaf per operation). `python -m hpvm.onnx model.onnx -o
model.mlir` writes the verified MLIR. `from_torch(module, example)` exports a PyTorch
module through torch's ONNX exporter first (also `hpvm.from_torch`).

Dynamic dimensions get their sizes when the model is loaded (`shapes={"input_ids": (1,
128)}`, `dims={"sequence": 128}`, `batch_size=`); `compile_dynamic(model)` is a callable
that compiles the graph at the input shapes of each call, once per set of shapes (a decoder
whose past key/values grow each step).
"""

from .from_torch import from_torch
from .importer import SUPPORTED_OPS, load, load_model
from .dynamic import DynamicGraph, compile_dynamic

__all__ = ["load", "load_model", "from_torch", "compile_dynamic", "DynamicGraph",
           "SUPPORTED_OPS"]
