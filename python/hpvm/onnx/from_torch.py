"""PyTorch modules as tensor graphs, through torch's ONNX exporter.

    import torch, torchvision, hpvm
    model = torchvision.models.resnet18(weights=None).eval()
    graph = hpvm.from_torch(model, torch.randn(8, 3, 224, 224))
    run = hpvm.compile(graph, fuse=True)

The module is exported in eval mode without gradients (`torch.onnx.export(...,
dynamo=False)`, opset 17 by default; attention's fused fast path is turned off, since it
has no ONNX form), then imported by `hpvm.onnx.load`. The graph's shapes are the example
inputs' shapes: to run another batch size, export again with an example of that size.
torch is not a dependency of the package; it is imported here only.

The exporter traces the module: Python control flow that depends on an input's values
(`if x.sum() > 0:`) runs once, on the example inputs, and the graph holds only the branch
they took; every other input takes that branch too. torch says so with a TracerWarning;
`from_torch` says it as an HPVMWarning naming the module and the consequence (with
`strict=True`, an HPVMError)."""

from __future__ import annotations

import os
import sys
import tempfile
import warnings
from typing import Optional, Sequence

from ..errors import HPVMError, HPVMWarning
from ..files import check_output


def from_torch(module, example_inputs, name: Optional[str] = None, opset: int = 17,
               input_names: Optional[Sequence[str]] = None, onnx_path: Optional[str] = None,
               strict: bool = False):
    """A `hpvm.TensorGraph` of `module` (a `torch.nn.Module`) at the shapes of
    `example_inputs` (a tensor or a tuple of tensors). `input_names` name the graph's
    inputs (default input0, input1, ...; one input: "input"); `name` the graph (default:
    the module's class name); `onnx_path`, when given, keeps the exported model there
    (to run it with onnxruntime, say). A module whose control flow depends on its inputs'
    values gets an HPVMWarning saying that the graph holds the traced branch only (an
    HPVMError with `strict`)."""
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
    if onnx_path is not None:
        onnx_path = check_output(onnx_path, "from_torch: onnx_path")
    from .importer import load
    was_training = module.training
    module.eval()
    fastpath = torch.backends.mha.get_fastpath_enabled()
    torch.backends.mha.set_fastpath_enabled(False)
    try:
        with tempfile.TemporaryDirectory(prefix="hpvm-torch-") as directory:
            path = os.fspath(onnx_path) if onnx_path else os.path.join(directory, "model.onnx")
            with torch.no_grad(), warnings.catch_warnings(record=True) as said:
                warnings.simplefilter("always")
                try:
                    torch.onnx.export(module, tuple(examples), path, dynamo=False,
                                      opset_version=opset, input_names=list(input_names))
                except OSError as error:  # onnx_path cannot be written
                    raise HPVMError(f"from_torch: cannot write the exported model "
                                    f"'{path}': {error.strerror or error}") from None
            _say_again(said, torch, type(module).__name__, strict)
            return load(path, name=name or type(module).__name__)
    finally:
        torch.backends.mha.set_fastpath_enabled(fastpath)
        module.train(was_training)


def _say_again(said, torch, module_name: str, strict: bool) -> None:
    """Warnings the export gave (`said`, recorded), said again: torch's TracerWarnings as
    one HPVMWarning (or HPVMError with `strict`) that names the consequence, the others
    as they were."""
    tracer = getattr(getattr(torch, "jit", None), "TracerWarning", None)
    traced = []
    for record in said:
        if tracer is not None and issubclass(record.category, tracer):
            traced.append(record)
        else:
            warnings.warn_explicit(record.message, record.category, record.filename,
                                   record.lineno, source=record.source)
    if not traced:
        return
    first = traced[0]
    where = f"{os.path.basename(first.filename)}:{first.lineno}" if first.filename else "?"
    text = " ".join(str(first.message).split())
    more = f", and {len(traced) - 1} more such places" if len(traced) > 1 else ""
    message = (f"from_torch: the module '{module_name}' computes a Python value from a "
               f"tensor (torch's tracer at {where}: \"{text[:300]}\"{more}): tracing ran "
               "it once, on the example inputs, and kept what it gave them, such as the "
               "branch they took; the graph does the same for every input, so other inputs "
               "may get wrong results. Expected branches written as tensor ops "
               "(torch.where), or pass strict=True to refuse such modules")
    if strict:
        raise HPVMError(message)
    warnings.warn(HPVMWarning(message), stacklevel=_caller_level())


def _caller_level() -> int:
    """The `stacklevel` that names the first caller outside the package (the line that
    called from_torch, through hpvm.from_torch or hpvm.onnx.from_torch)."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
    frame, level = sys._getframe(2), 2  # level 1: the caller of warnings.warn
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package):
        frame, level = frame.f_back, level + 1
    return level
