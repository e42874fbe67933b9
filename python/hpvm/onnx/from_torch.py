"""PyTorch modules as tensor graphs, through torch's ONNX exporter.

    import torch, torchvision, hpvm
    model = torchvision.models.resnet18(weights=None).eval()
    graph = hpvm.from_torch(model, torch.randn(8, 3, 224, 224))
    run = hpvm.compile(graph, fuse=True)

The module is exported in eval mode without gradients (`torch.onnx.export(...,
dynamo=False)`, opset 17 by default; attention's fused fast path is turned off, since it
has no ONNX form), then imported by `hpvm.onnx.load`. The graph's shapes are the example
inputs' shapes: to run another batch size, export again with an example of that size.
torch is not a dependency of the package; it is imported here only."""

from __future__ import annotations

import os
import tempfile
from typing import Optional, Sequence

from ..errors import HPVMError


def from_torch(module, example_inputs, name: Optional[str] = None, opset: int = 17,
               input_names: Optional[Sequence[str]] = None, onnx_path: Optional[str] = None):
    """A `hpvm.TensorGraph` of `module` (a `torch.nn.Module`) at the shapes of
    `example_inputs` (a tensor or a tuple of tensors). `input_names` name the graph's
    inputs (default input0, input1, ...; one input: "input"); `name` the graph (default:
    the module's class name); `onnx_path`, when given, keeps the exported model there
    (to run it with onnxruntime, say)."""
    try:
        import torch
    except ImportError:
        raise HPVMError("hpvm.from_torch needs the 'torch' package: pip install torch") from None
    if not isinstance(module, torch.nn.Module):
        raise HPVMError(f"from_torch: expected a torch.nn.Module, found {type(module).__name__}")
    examples = example_inputs if isinstance(example_inputs, (tuple, list)) else (example_inputs,)
    if not examples or not all(isinstance(x, torch.Tensor) for x in examples):
        raise HPVMError("from_torch: expected example inputs as a torch.Tensor or a tuple of "
                        f"them, found {example_inputs!r:.200}")
    if input_names is None:
        input_names = ["input"] if len(examples) == 1 else [f"input{i}" for i in
                                                             range(len(examples))]
    if len(input_names) != len(examples):
        raise HPVMError(f"from_torch: {len(input_names)} input names for {len(examples)} "
                        "example inputs")
    from .importer import load
    was_training = module.training
    module.eval()
    fastpath = torch.backends.mha.get_fastpath_enabled()
    torch.backends.mha.set_fastpath_enabled(False)
    try:
        with tempfile.TemporaryDirectory(prefix="hpvm-torch-") as directory:
            path = os.fspath(onnx_path) if onnx_path else os.path.join(directory, "model.onnx")
            with torch.no_grad():
                torch.onnx.export(module, tuple(examples), path, dynamo=False,
                                  opset_version=opset, input_names=list(input_names))
            return load(path, name=name or type(module).__name__)
    finally:
        torch.backends.mha.set_fastpath_enabled(fastpath)
        module.train(was_training)
