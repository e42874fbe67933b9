"""An ONNX model compiled at the shapes of its calls.

    step = hpvm.onnx.compile_dynamic("decoder.onnx", fuse=True)
    logits, *present = step(input_ids, *past)      # compiles at these shapes (cached)

A tensor graph has static shapes, so `compile_dynamic` keeps the model and compiles it
once per set of input shapes it is called with: the first call at new shapes imports the
model at those shapes (`hpvm.onnx.load(model, shapes=...)`, which checks that inputs
sharing a named dimension agree) and compiles it (`hpvm.compile`, whose cache on disk
keeps the library for later processes); later calls at those shapes reuse it. A decoder
whose past key/values grow by one token a step compiles once per step the first time;
`compiled` lists the shapes seen.
"""

from __future__ import annotations

import os
import threading
from typing import Dict, List, Optional, Tuple

import numpy as np

from ..errors import HPVMError
from .importer import load, load_model

ShapeKey = Tuple[Tuple[int, ...], ...]


class DynamicGraph:
    """A callable ONNX model that compiles the graph per shape of its inputs (see the
    module). Inputs by position (the model's graph inputs, initializers left out) or by
    name; returns what a CompiledGraph returns (one array, or a tuple)."""

    def __init__(self, model, name: Optional[str] = None, base_dir=None, **options):
        by_path = isinstance(model, (str, os.PathLike))
        if base_dir is None and by_path:
            base_dir = os.path.dirname(os.path.abspath(os.fspath(model)))
        self.proto = load_model(model, load_external_data=not by_path)
        self.base_dir = base_dir
        self.name = name or self.proto.graph.name or "onnx_graph"
        initializers = {i.name for i in self.proto.graph.initializer}
        #: The inputs a call takes, in the model's order.
        self.input_names: List[str] = [v.name for v in self.proto.graph.input
                                       if v.name not in initializers]
        self.options = options
        #: input shapes (in input_names' order) -> the CompiledGraph at those shapes.
        self.compiled: Dict[ShapeKey, object] = {}
        self._lock = threading.Lock()

    def _arguments(self, args, kwargs) -> Dict[str, object]:
        if len(args) > len(self.input_names):
            raise HPVMError(f"{self.name}: expected at most {len(self.input_names)} "
                            f"arguments ({', '.join(self.input_names)}), found {len(args)}")
        values = dict(zip(self.input_names, args))
        for key, value in kwargs.items():
            if key not in self.input_names:
                raise HPVMError(f"{self.name}: unknown argument '{key}'; expected "
                                f"{', '.join(self.input_names)}")
            if key in values:
                raise HPVMError(f"{self.name}: argument '{key}' given twice")
            values[key] = value
        missing = [n for n in self.input_names if n not in values]
        if missing:
            raise HPVMError(f"{self.name}: missing argument(s) {', '.join(missing)} "
                            f"(expected {', '.join(self.input_names)})")
        return values

    def at(self, shapes) -> object:
        """The CompiledGraph at `shapes` ({input: shape}, or shapes in input order),
        compiled on first use."""
        if not isinstance(shapes, dict):
            shapes = dict(zip(self.input_names, shapes))
        try:
            key = tuple(tuple(int(d) for d in shapes[n]) for n in self.input_names)
        except (KeyError, TypeError, ValueError):
            raise HPVMError(f"{self.name}: expected a shape for each of "
                            f"{', '.join(self.input_names)}, found {shapes!r}") from None
        compiled = self.compiled.get(key)
        if compiled is not None:
            return compiled
        with self._lock:  # one compile per shape, also from several threads
            compiled = self.compiled.get(key)
            if compiled is None:
                compiled = self._compile(dict(zip(self.input_names, key)))
                self.compiled[key] = compiled
        return compiled

    def _compile(self, shapes):
        import hpvm
        try:
            graph = load(self.proto, shapes=shapes, name=self.name, base_dir=self.base_dir)
        except HPVMError as error:
            given = ", ".join(f"{n}: {list(s)}" for n, s in shapes.items())
            raise HPVMError(f"{self.name}: cannot import the model at the shapes of the "
                            f"call ({given}): {error}") from None
        return hpvm.compile(graph, **self.options)

    def __call__(self, *args, **kwargs):
        values = self._arguments(args, kwargs)
        shapes = {}
        for name, value in values.items():
            if value is None or isinstance(value, (str, bytes)):
                raise HPVMError(f"{self.name}: argument '{name}' is {value!r}; expected an "
                                "array")
            shapes[name] = np.shape(value)
        compiled = self.at(shapes)
        # By position (the compiled call's fast path): the graph's inputs are the model's,
        # less any it could not take (a zero-size one that no node reads).
        return compiled(*[values[n] for n in compiled.input_names])

    def __repr__(self):
        return (f"<hpvm DynamicGraph {self.name}({', '.join(self.input_names)}), "
                f"{len(self.compiled)} shape(s) compiled>")


def compile_dynamic(model, name: Optional[str] = None, base_dir=None,
                    **options) -> DynamicGraph:
    """An ONNX model (path, bytes or ModelProto) as a callable that compiles its graph at
    the input shapes of each call, once per set of shapes (module doc). `name` and
    `base_dir` are load's; `options` are hpvm.compile's (fuse=True, target=, flags=, ...)."""
    return DynamicGraph(model, name=name, base_dir=base_dir, **options)
