"""Compiled graphs: a shared library made by `hpvm-cc -shared`, called with NumPy.

A host function `@f` of the module is called through its C interface
`_mlir_ciface_f`: memrefs are passed as pointers to MLIR's memref descriptor
(allocated and aligned pointers, offset, sizes, strides) pointing into the
NumPy arrays themselves, scalars by value. Nothing is copied unless an input
array is not already C-contiguous with the element type the function expects
(that one copy is the runtime's need: generated code reads static memrefs in
row-major order).
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import os
import threading
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from .errors import HPVMError
from .ir import MemRefType, ScalarType, TensorType, parse_type
from . import toolchain

_SCALARS = {
    "f32": ctypes.c_float,
    "f64": ctypes.c_double,
    "i1": ctypes.c_bool,
    "i8": ctypes.c_int8,
    "i16": ctypes.c_int16,
    "i32": ctypes.c_int32,
    "i64": ctypes.c_int64,
    "index": ctypes.c_int64,
}

_descriptor_types: Dict[int, type] = {}

_NOT_FAST = object()  # Function._call_fast: the arguments need the general path


def descriptor_type(rank: int) -> type:
    """MLIR's ranked memref descriptor for `rank` as a ctypes structure."""
    if rank not in _descriptor_types:
        fields = [("allocated", ctypes.c_void_p), ("aligned", ctypes.c_void_p),
                  ("offset", ctypes.c_int64)]
        if rank:
            fields += [("sizes", ctypes.c_int64 * rank), ("strides", ctypes.c_int64 * rank)]
        _descriptor_types[rank] = type(f"MemRefDescriptor{rank}D", (ctypes.Structure,),
                                       {"_fields_": fields})
    return _descriptor_types[rank]


def _descriptor(array: np.ndarray):
    rank = array.ndim
    d = descriptor_type(rank)()
    d.allocated = d.aligned = array.ctypes.data
    d.offset = 0
    if rank:
        d.sizes = (ctypes.c_int64 * rank)(*array.shape)
        d.strides = (ctypes.c_int64 * rank)(*(s // array.itemsize for s in array.strides))
    return d


class Function:
    """One host function of a compiled module, callable with NumPy arrays and numbers.

    `params` are (name, type) pairs; `outputs` (tensor graphs) are the trailing
    memref parameters the call allocates and returns."""

    def __init__(self, library: "Library", name: str, params: Sequence[Tuple[str, object]],
                 outputs: Sequence[Tuple[str, TensorType]] = ()):
        self.library = library
        self.name = name
        self.params = [(n, parse_type(t)) for n, t in params]
        for param, type_ in self.params:
            if isinstance(type_, ScalarType) and type_.name not in _SCALARS:
                # ctypes has no half type, and x86-64 passes a half in a vector register.
                raise HPVMError(f"{name}: parameter '{param}' is a {type_} scalar, which Python "
                                "cannot pass; pass it in a memref (an array) instead")
        self.outputs = [(n, t) for n, t in outputs]
        self._fast = self._fast_path()
        symbol = f"_mlir_ciface_{name}"
        try:
            self._function = getattr(library.handle, symbol)
        except AttributeError:
            raise HPVMError(f"'{library.path}' has no function '{symbol}'") from None
        self._function.restype = None

    def _fast_path(self):
        """For functions of static-shaped arrays only: one descriptor per parameter, made
        once (calls hold the library's lock, so they are never shared by two calls), and
        what an argument must be to go straight into it. None: every call takes the
        general path."""
        params = list(self.params) + [(n, MemRefType(t.shape, t.element))
                                      for n, t in self.outputs]
        slots = []
        for _, type_ in params:
            if not isinstance(type_, (MemRefType, TensorType)) or None in type_.shape:
                return None
            rank = type_.rank
            d = descriptor_type(rank)()
            if rank:
                d.sizes = (ctypes.c_int64 * rank)(*type_.shape)
                strides, step = [], 1
                for size in reversed(type_.shape):
                    strides.append(step)
                    step *= size
                d.strides = (ctypes.c_int64 * rank)(*reversed(strides))
            slots.append((d, tuple(type_.shape), np.dtype(type_.dtype)))
        return slots, [ctypes.byref(d) for d, _, _ in slots]

    def _call_fast(self, args):
        """The call for C-contiguous arrays of the declared shapes and element types passed
        by position (no conversion, no check left to make); _NOT_FAST when `args` are not
        that."""
        slots, references = self._fast
        inputs = len(self.params)
        if len(args) != inputs:
            return _NOT_FAST
        for (_, shape, dtype), value in zip(slots, args):
            if (type(value) is not np.ndarray or value.shape != shape or value.dtype != dtype
                    or not value.flags.c_contiguous):
                return _NOT_FAST
        for (name, type_), value in zip(self.params, args):
            if isinstance(type_, MemRefType) and not value.flags.writeable:
                return _NOT_FAST  # the general path says why
        results = [np.empty(shape, dtype) for _, shape, dtype in slots[inputs:]]
        with self.library.lock:
            for (d, _, _), array in zip(slots, list(args) + results):
                d.allocated = d.aligned = array.ctypes.data
            self._function(*references)
        if not results:
            return None
        return results[0] if len(results) == 1 else tuple(results)

    def __repr__(self) -> str:
        params = ", ".join(f"{n}: {t}" for n, t in self.params)
        return f"<hpvm function {self.name}({params})>"

    def _argument(self, name: str, type_, value, keep: list, writable: bool):
        if isinstance(type_, (MemRefType, TensorType)):
            if not isinstance(value, np.ndarray):
                if writable:
                    raise HPVMError(f"{self.name}: argument '{name}' expects a NumPy array of "
                                    f"{type_.dtype} (it is written), found {type(value).__name__}")
                value = np.asarray(value, dtype=type_.dtype)
            if value.ndim != type_.rank:
                raise HPVMError(f"{self.name}: argument '{name}' expects rank {type_.rank} "
                                f"({type_}), found an array of shape {value.shape}")
            for axis, (want, have) in enumerate(zip(type_.shape, value.shape)):
                if want is not None and want != have:
                    raise HPVMError(f"{self.name}: argument '{name}' expects shape "
                                    f"{tuple('?' if d is None else d for d in type_.shape)} "
                                    f"({type_}), found {value.shape}")
            if value.dtype != type_.dtype or not value.flags.c_contiguous:
                if writable:
                    raise HPVMError(f"{self.name}: argument '{name}' is written and must be a "
                                    f"C-contiguous array of {type_.dtype}, found "
                                    f"{'a non-contiguous array of ' if not value.flags.c_contiguous else ''}"
                                    f"{value.dtype}")
                value = np.ascontiguousarray(value, dtype=type_.dtype)
            if writable and not value.flags.writeable:
                raise HPVMError(f"{self.name}: argument '{name}' is written but the array is read-only")
            keep.append(value)
            descriptor = _descriptor(value)
            keep.append(descriptor)
            return ctypes.byref(descriptor)
        scalar = _SCALARS[type_.name]
        if isinstance(value, np.ndarray) and value.ndim != 0:
            raise HPVMError(f"{self.name}: argument '{name}' expects a scalar {type_}, "
                            f"found an array of shape {value.shape}")
        try:
            return scalar(type_.dtype.type(value).item())
        except (TypeError, ValueError, OverflowError):
            raise HPVMError(f"{self.name}: argument '{name}' expects a {type_}, "
                            f"found {value!r}") from None

    def __call__(self, *args, **kwargs):
        """Inputs by position or by name; for a tensor graph, returns the outputs
        (one array, or a tuple); outputs may be given as `out=[arrays]`."""
        if self._fast is not None and not kwargs:
            results = self._call_fast(args)
            if results is not _NOT_FAST:
                return results
        out = kwargs.pop("out", None)
        values = list(args)
        names = [n for n, _ in self.params]
        if len(values) > len(self.params):
            raise HPVMError(f"{self.name}: expected at most {len(self.params)} arguments "
                            f"({', '.join(names)}), found {len(values)}")
        for name in names[len(values):]:
            if name not in kwargs:
                raise HPVMError(f"{self.name}: missing argument '{name}' "
                                f"(expected {', '.join(names)})")
            values.append(kwargs.pop(name))
        if kwargs:
            raise HPVMError(f"{self.name}: unknown argument(s) {', '.join(sorted(kwargs))}; "
                            f"expected {', '.join(names)}")
        keep: list = []
        arguments = [self._argument(n, t, v, keep, writable=isinstance(t, MemRefType))
                     for (n, t), v in zip(self.params, values)]
        results: List[np.ndarray] = []
        if self.outputs:
            if out is not None and len(out) != len(self.outputs):
                raise HPVMError(f"{self.name}: out= expects {len(self.outputs)} arrays, "
                                f"found {len(out)}")
            for i, (name, type_) in enumerate(self.outputs):
                array = out[i] if out is not None else np.empty(type_.shape, type_.dtype)
                if out is not None:
                    # The graph writes its outputs while it reads its inputs (the host
                    # declares them unaliased): an overlap would corrupt both.
                    others = [(n, v) for (n, _), v in zip(self.params, values)
                              if isinstance(v, np.ndarray)]
                    others += [(self.outputs[j][0], r) for j, r in enumerate(results)]
                    for other_name, other in others:
                        if isinstance(array, np.ndarray) and np.may_share_memory(array, other):
                            raise HPVMError(f"{self.name}: out= array for '{name}' overlaps "
                                            f"'{other_name}'; expected an array of its own")
                arguments.append(self._argument(name, MemRefType(type_.shape, type_.element),
                                                array, keep, writable=True))
                results.append(array)
        with self.library.lock:
            self._function(*arguments)
        if not self.outputs:
            return None
        return results[0] if len(results) == 1 else tuple(results)


class Library:
    """A compiled module: its shared library and its host functions."""

    def __init__(self, path: str):
        self.path = path
        try:
            self.handle = ctypes.CDLL(path)
        except OSError as error:
            raise HPVMError(f"cannot load the compiled graph '{path}': {error}") from None
        # The runtime runs one graph at a time per library call; calls from
        # several Python threads are serialized.
        self.lock = threading.Lock()
        self.functions: Dict[str, Function] = {}

    def function(self, name: str, params, outputs=()) -> Function:
        function = Function(self, name, params, outputs)
        self.functions[name] = function
        return function

    def __getattr__(self, name: str) -> Function:
        functions = self.__dict__.get("functions", {})
        if name in functions:
            return functions[name]
        raise AttributeError(f"compiled module has no host function '{name}' "
                             f"(has {', '.join(functions) or 'none'})")


def cache_dir() -> Path:
    root = os.environ.get("HPVM_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "hpvm")
    path = Path(root)
    path.mkdir(parents=True, exist_ok=True)
    return path


def knob_file(knobs) -> str:
    """A knob configuration (a path, or the configuration as a dict) as a file of the
    cache named by its content: the same knobs give the same path, hence the same
    cached library."""
    if isinstance(knobs, dict):
        try:
            content = json.dumps(knobs, indent=1, sort_keys=True)
        except (TypeError, ValueError) as error:
            raise HPVMError(f"knobs: expected a JSON-serializable dict, found: {error}") from None
    else:
        try:
            content = Path(knobs).read_text()
        except (OSError, TypeError) as error:
            raise HPVMError(f"knobs: cannot read the configuration {knobs!r}: {error}") from None
    digest = hashlib.sha256(content.encode()).hexdigest()[:24]
    path = cache_dir() / f"knobs-{digest}.json"
    if not path.exists():
        partial = path.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
        partial.write_text(content)
        os.replace(partial, path)
    return str(path)


def build(text: str, name: str, target: str = "cpu", opt: str = "-O3",
          flags: Sequence[str] = (), output: Optional[str] = None, verbose: bool = False,
          passes: Sequence[str] = ()) -> str:
    """The shared library of `text`: verified, transformed by the hpvm-opt `passes`, then
    compiled into `output`, or into the cache. A cached library is keyed by the text, the
    passes, the options and the compiler (a rebuilt hpvm-cc, compiler library or runtime
    builds anew); when it exists, nothing is verified, transformed or compiled again."""

    def compile_to(path: str) -> None:
        toolchain.verify(text, f"{name}.mlir")
        ready = toolchain.run_opt(text, passes, f"{name}.mlir") if passes else text
        toolchain.compile_shared(ready, path, name, target, opt, flags, verbose=verbose)

    if output is not None:
        compile_to(output)
        return output
    stamps = [f"{p}:{p.stat().st_mtime_ns}:{p.stat().st_size}"
              for p in toolchain.compiler_files()]
    key = hashlib.sha256("\0".join([text, *passes, target, opt, *flags, *stamps])
                         .encode()).hexdigest()[:24]
    output = str(cache_dir() / f"{name}-{key}.so")
    if os.path.exists(output):
        return output
    partial = f"{output}.{os.getpid()}.{threading.get_ident()}.tmp"
    try:
        compile_to(partial)
        os.replace(partial, output)  # atomic: a concurrent build never sees half a file
    finally:
        if os.path.exists(partial):
            os.unlink(partial)
    return output
