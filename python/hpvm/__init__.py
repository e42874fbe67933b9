"""HPVM from Python: dataflow and tensor graphs in the hpvm dialect, compiled in this
process by the compiler library (clang makes the shared library, as hpvm-cc does) and run by
the HPVM runtime, with NumPy arrays in and out.

* `TensorGraph` and `hpvm.tensor`: graphs of `hpvm.tensor.*` operations.
* `Module`: general graphs (leaf and internal nodes, edges, binds, grids).
* `compile(graph)`: a shared library (as `hpvm-cc -shared`, in process), its host functions
  callable with NumPy arrays; `run(graph, inputs)` compiles (cached) and runs.
* `hpvm.onnx.load(model)`: an ONNX model as a TensorGraph (`shapes=`, `dims=` size its
  dynamic dimensions); `hpvm.onnx.compile_dynamic(model)` compiles it per set of input
  shapes; `from_torch(module, example_inputs)`: a PyTorch module, through torch's ONNX
  exporter.

The tools are found under `$HPVM_HOME` (a build or install tree) or on `PATH`.
"""

from __future__ import annotations

import os

from typing import Dict, Mapping, Optional, Sequence, Union

import numpy as np

from .errors import HPVMError, HPVMWarning
from . import files as _files
from .ir import MemRefType, ScalarType, TensorType, memref, parse_type
from .graph import Module
from .tensor import Tensor, TensorGraph
from . import tensor
from . import compiled as _compiled
from . import toolchain

__all__ = ["HPVMError", "HPVMWarning", "Module", "TensorGraph", "Tensor", "tensor", "compile", "run",
           "verify", "memref", "CompiledGraph", "from_torch"]


def from_torch(module, example_inputs, **options):
    """A PyTorch module as a TensorGraph (hpvm.onnx.from_torch: exported through
    torch's ONNX exporter at the shapes of `example_inputs`, then imported)."""
    from .onnx import from_torch as _from_torch
    return _from_torch(module, example_inputs, **options)
__version__ = "0.1.0"


def verify(graph: Union[TensorGraph, Module, str]) -> str:
    """Checks a graph (or MLIR text) with the dialect's verifier; returns the text.
    Raises HPVMError carrying the diagnostics when it is invalid."""
    text = graph if isinstance(graph, str) else graph.mlir()
    toolchain.verify(text)
    return text


class CompiledGraph:
    """A compiled TensorGraph: call it with the inputs (by position or name);
    it returns the output array, or a tuple of them."""

    def __init__(self, graph: TensorGraph, library: _compiled.Library):
        inputs, outputs = graph.signature()
        self.name = graph.name
        self.input_names = [n for n, _ in inputs]
        self.output_names = [n for n, _ in outputs]
        self.library = library
        self.function = library.function(graph.name, inputs, outputs)
        self.path = library.path
        # Indices read at run time (tensor.gather): checked here, before the call.
        reachable = {id(op) for op in graph._reachable_ops()}
        self._index_checks = [(self.input_names.index(name), name, n, what, where)
                              for value, name, n, what, where in graph.index_checks
                              if id(value.op) in reachable]

    def __call__(self, *args, **kwargs):
        for position, name, n, what, where in self._index_checks:
            value = kwargs.get(name) if name in kwargs else (
                args[position] if position < len(args) else None)
            _check_indices(self.name, value, name, n, what, where)
        return self.function(*args, **kwargs)

    def __repr__(self):
        return (f"<hpvm CompiledGraph {self.name}({', '.join(self.input_names)}) -> "
                f"({', '.join(self.output_names)}) from {self.path}>")


def _check_indices(graph: str, value, name: str, n: int, what: str, where: str) -> None:
    """HPVMError when the argument `name` holds an index outside [-n, n) (a value the
    call itself refuses, or a missing one, is left to it)."""
    try:
        array = np.asarray(value)
    except Exception:  # the call reports what it cannot convert
        return
    if value is None or array.dtype.kind not in "iuf" or array.size == 0:
        return
    bad = (array < -n) | (array >= n) | (array != array)
    if not np.any(bad):
        return
    at = tuple(int(i) for i in np.argwhere(bad)[0])
    index = array[at].item()
    raise HPVMError(f"{graph}: {what}: the index {index} at {list(at)} of the argument "
                    f"'{name}' is out of range; expected an index in [{-n}, {n}) for the {n} "
                    f"elements of {where}")


def compile(graph: Union[TensorGraph, Module], target: str = "cpu", opt: str = "-O3",
            flags: Sequence[str] = (), output: Optional[str] = None, fuse: bool = False,
            verbose: bool = False, knobs: Union[None, str, os.PathLike, dict] = None):
    """Compiles a graph as `hpvm-cc -shared` does (`target`: cpu, gpu or opencl; CPU
    versions are always kept: a TensorGraph's nodes become device kernels for gpu and
    opencl, and run on the CPU where no device is found). `knobs` sets approximation knobs of tensor ops, as a
    configuration file or its content as a dict (`{"knobs": [{"node": ..., "knob": ...,
    "rate": ..., "offset": ...}]}`, see hpvm-apply-knobs), naming the leaves of the graph
    as built. `fuse` joins tensor-op chains then (hpvm-fuse-tensor-nodes). Returns a
    CompiledGraph (TensorGraph) or a library whose host functions are attributes
    (Module). The library is cached under $HPVM_CACHE_DIR (default ~/.cache/hpvm) unless
    `output` names a path; a cached graph whose file still has the sha256 stored beside it
    is loaded without being verified or compiled again (else it is built anew).

    A call of a Module's host function is checked before it runs: arrays it writes must
    not overlap other array arguments, grid extents must be >= 0 and a grid at most 2^63
    - 1 instances, and a grid may not be larger than an array its leaf indexes at the
    instance id (graph.CallChecks); HPVMError says which rule a call breaks."""
    if not isinstance(graph, (TensorGraph, Module)):
        raise HPVMError(f"compile: expected a TensorGraph or a Module, found {type(graph).__name__}")
    if output is not None:  # a file in an existing folder, not a folder (HPVMError)
        output = _files.check_output(output, "compile: output")
    passes = []
    if knobs is not None:
        path = _compiled.knob_file(knobs)
        passes.append("--hpvm-apply-knobs=file="
                      + _compiled.pass_option_value(path, "the knob file's path"))
    # The CPU's images between convolutions in blocks of 16 channels, before the fusion
    # (the same values; -fno-hpvm-blocked-layout keeps them NCHW).
    if target == "cpu" and "-fno-hpvm-blocked-layout" not in flags:
        passes.append("--hpvm-block-tensor-layout")
    if fuse:
        passes.append("--hpvm-fuse-tensor-nodes")
    if isinstance(graph, TensorGraph):
        # Weights travel as data: an archive beside the module, never as text.
        archive = f"{graph.name}.params"
        text, parameters = graph._module(archive, device=target != "cpu")
    else:
        text, parameters = graph.mlir(), {}
    path = _compiled.build(text, graph.name, target, opt, flags, output, verbose, passes,
                           parameters)
    library = _compiled.Library(path)
    if isinstance(graph, TensorGraph):
        return CompiledGraph(graph, library)
    for name, params in graph.functions():
        library.function(name, params, checks=graph.call_checks(name))
    return library


def run(graph, inputs: Union[Mapping[str, np.ndarray], Sequence[np.ndarray]], **options):
    """Compiles `graph` (a TensorGraph, or anything `hpvm.onnx.load` takes) and runs
    it on `inputs` (by name or in order); returns the list of outputs."""
    if not isinstance(graph, TensorGraph):
        from . import onnx as _onnx
        graph = _onnx.load(graph)
    compiled = compile(graph, **options)
    result = compiled(**inputs) if isinstance(inputs, Mapping) else compiled(*inputs)
    return list(result) if isinstance(result, tuple) else [result]
