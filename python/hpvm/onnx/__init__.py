"""ONNX models as HPVM tensor graphs.

    import hpvm, hpvm.onnx
    graph = hpvm.onnx.load("model.onnx", batch_size=4)
    run = hpvm.compile(graph)
    outputs = run(input=images)

`load` takes a path, serialized bytes or an `onnx.ModelProto` and returns a
`hpvm.TensorGraph` (one leaf per operation). `python -m hpvm.onnx model.onnx -o
model.mlir` writes the verified MLIR.
"""

from .importer import SUPPORTED_OPS, load, load_model

__all__ = ["load", "load_model", "SUPPORTED_OPS"]
