"""ONNX models as HPVM tensor graphs.

    import hpvm, hpvm.onnx
    graph = hpvm.onnx.load("model.onnx", batch_size=4)
    run = hpvm.compile(graph)
    outputs = run(input=images)

`load` takes a path, serialized bytes or an `onnx.ModelProto` and returns a
`hpvm.TensorGraph` (one leaf per operation). `python -m hpvm.onnx model.onnx -o
model.mlir` writes the verified MLIR. `from_torch(module, example)` exports a PyTorch
module through torch's ONNX exporter first (also `hpvm.from_torch`).
"""

from .from_torch import from_torch
from .importer import SUPPORTED_OPS, load, load_model

__all__ = ["load", "load_model", "from_torch", "SUPPORTED_OPS"]
