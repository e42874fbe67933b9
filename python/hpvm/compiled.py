"""Compiled graphs: a shared library made as `hpvm-cc -shared` makes it (toolchain), called
with NumPy.

A host function `@f` of the module is called through its C interface
`_mlir_ciface_f`: memrefs are passed as pointers to MLIR's memref descriptor
(allocated and aligned pointers, offset, sizes, strides) pointing into the
NumPy arrays themselves, scalars by value. Nothing is copied unless an input
array is not already C-contiguous with the element type the function expects
(that one copy is the runtime's need: generated code reads static memrefs in
row-major order).
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import json
import os
import re
import secrets
import threading
import time
import warnings
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from .errors import HPVMError, HPVMWarning
from .files import read_bytes
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

_BYREF = type(ctypes.byref(ctypes.c_int()))  # what ctypes.byref returns


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


def _fresh(function: str, shape, dtype, name: str = "") -> np.ndarray:
    """A new array for an output; HPVMError (not MemoryError) when memory lacks it."""
    try:
        return np.empty(shape, dtype)
    except (MemoryError, ValueError) as error:
        nbytes = int(np.prod(shape, dtype=object)) * np.dtype(dtype).itemsize
        what = f"the output '{name}'" if name else "an output"
        raise HPVMError(f"{function}: cannot allocate {what} of shape {tuple(shape)} "
                        f"({nbytes} bytes): {error or 'out of memory'}") from None


def _conflict(mine, theirs) -> bool:
    """Whether two calls must not run at once: one writes memory the other passes, or
    they pass overlapping arrays that are not the same range (each call tracks its arrays
    with the runtime, which shares an object between threads only when every thread
    tracks the same range, and refuses overlaps). `mine`, `theirs`: (array, written)."""
    for array, written in mine:
        for other, other_written in theirs:
            if not np.may_share_memory(array, other):
                continue
            if written or other_written:
                return True
            if (array.ctypes.data, array.nbytes) != (other.ctypes.data, other.nbytes):
                return True
    return False


class _Admission:
    """Calls of one library's functions from several Python threads run at once (ctypes
    releases the GIL during a call; the runtime is thread-safe and shares read-only inputs
    between launches), except calls that conflict (_conflict): a call waits until none
    in flight conflicts with it, so a call that writes an array another call passes runs
    before or after it, never during."""

    def __init__(self):
        self._condition = threading.Condition()
        self._running: List[list] = []
        #: the most calls that have been in flight at once (tests, diagnostics)
        self.peak = 0

    @contextlib.contextmanager
    def enter(self, arrays):
        with self._condition:
            while any(_conflict(arrays, other) for other in self._running):
                self._condition.wait()
            self._running.append(arrays)
            self.peak = max(self.peak, len(self._running))
        try:
            yield
        finally:
            with self._condition:
                for index, other in enumerate(self._running):
                    if other is arrays:
                        del self._running[index]
                        break
                self._condition.notify_all()


class Function:
    """One host function of a compiled module, callable with NumPy arrays and numbers.

    `params` are (name, type) pairs; `outputs` (tensor graphs) are the trailing
    memref parameters the call allocates and returns."""

    def __init__(self, library: "Library", name: str, params: Sequence[Tuple[str, object]],
                 outputs: Sequence[Tuple[str, TensorType]] = (), checks=None):
        self.library = library
        self.name = name
        self.params = [(n, parse_type(t)) for n, t in params]
        #: More checks of a call before it runs (graph.CallChecks of a Module's host
        #: function: grid extents against the arrays), or None.
        self.checks = checks if checks else None
        for param, type_ in self.params:
            if isinstance(type_, ScalarType) and type_.name not in _SCALARS:
                # ctypes has no half type, and x86-64 passes a half in a vector register.
                raise HPVMError(f"{name}: parameter '{param}' is a {type_} scalar, which Python "
                                "cannot pass; pass it in a memref (an array) instead")
        self.outputs = [(n, t) for n, t in outputs]
        self._fast = self._fast_path()
        # The fast path's descriptors are per thread: calls from several threads run at
        # once (_Admission).
        self._local = threading.local()
        symbol = f"_mlir_ciface_{name}"
        try:
            self._function = getattr(library.handle, symbol)
        except AttributeError:
            raise HPVMError(f"'{library.path}' has no function '{symbol}'") from None
        self._function.restype = None
        # Its entry point for the runtime's guard (GuardedEntryPoints.cpp), when both exist.
        self._guarded = None
        if library.call_guarded is not None:
            try:
                entry = getattr(library.handle, f"__hpvm_guarded_{name}")
                self._guarded = ctypes.cast(entry, ctypes.c_void_p)
            except AttributeError:
                pass

    def _invoke(self, arguments) -> None:
        """Calls the function (admitted by the library's _Admission) with `arguments`
        (ctypes scalars and byref'd descriptors), through the runtime's guard when the
        library has it: a runtime error raises HPVMError instead of ending the process."""
        if self._guarded is None:
            self._function(*arguments)
            return
        slots = (ctypes.c_void_p * max(len(arguments), 1))()
        for index, argument in enumerate(arguments):
            target = argument._obj if isinstance(argument, _BYREF) else argument
            slots[index] = ctypes.addressof(target)
        status = self.library.call_guarded(self._guarded, slots)
        if status:
            self.library.raise_status(self.name, status)

    def _fast_path(self):
        """For functions of static-shaped arrays only: one descriptor per parameter, made
        once per thread (so that they are never shared by two calls in flight), and
        what an argument must be to go straight into it. None: every call takes the
        general path."""
        if self.checks is not None or any(isinstance(t, MemRefType) for _, t in self.params):
            return None  # memref arguments are written: the general path checks overlaps
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
        fast = getattr(self._local, "fast", None)
        if fast is None:
            fast = self._local.fast = self._fast_path()
        slots, references = fast
        inputs = len(self.params)
        if len(args) != inputs:
            return _NOT_FAST
        for (_, shape, dtype), value in zip(slots, args):
            if (type(value) is not np.ndarray or value.shape != shape or value.dtype != dtype
                    or not value.flags.c_contiguous):
                return _NOT_FAST
        # Only read (tensor) inputs and fresh outputs here: nothing written can overlap.
        results = [_fresh(self.name, shape, dtype, name)
                   for (name, _), (_, shape, dtype) in zip(self.outputs, slots[inputs:])]
        for (d, _, _), array in zip(slots, list(args) + results):
            d.allocated = d.aligned = array.ctypes.data
        with self.library.calls.enter([(a, False) for a in args] + [(r, True) for r in results]):
            self._invoke(references)
        if not results:
            return None
        return results[0] if len(results) == 1 else tuple(results)

    def __repr__(self) -> str:
        params = ", ".join(f"{n}: {t}" for n, t in self.params)
        return f"<hpvm function {self.name}({params})>"

    def _argument(self, name: str, type_, value, keep: list, writable: bool):
        """The ctypes argument for `value`, and what the call checks see of it: the array
        passed (memrefs and tensors) or the number (scalars)."""
        if isinstance(type_, (MemRefType, TensorType)):
            if not isinstance(value, np.ndarray):
                if writable:
                    raise HPVMError(f"{self.name}: argument '{name}' expects a NumPy array of "
                                    f"{type_.dtype} (it is written), found {type(value).__name__}")
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("error")
                        value = np.asarray(value, dtype=type_.dtype)
                except (TypeError, ValueError, OverflowError, Warning) as error:
                    raise HPVMError(f"{self.name}: argument '{name}' expects an array of "
                                    f"{type_.dtype} ({type_}), found {type(value).__name__} "
                                    f"that does not convert: {error}") from None
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
                if not np.can_cast(value.dtype, type_.dtype, casting="same_kind"):
                    raise HPVMError(f"{self.name}: argument '{name}' expects an array of "
                                    f"{type_.dtype} ({type_}), found {value.dtype}, which "
                                    "does not convert to it without changing its kind")
                value = np.asarray(value, dtype=type_.dtype, order="C")  # keeps rank 0
            if writable and not value.flags.writeable:
                raise HPVMError(f"{self.name}: argument '{name}' is written but the array is read-only")
            keep.append(value)
            descriptor = _descriptor(value)
            keep.append(descriptor)
            return ctypes.byref(descriptor), value
        scalar = _SCALARS[type_.name]
        if isinstance(value, np.ndarray) and value.ndim != 0:
            raise HPVMError(f"{self.name}: argument '{name}' expects a scalar {type_}, "
                            f"found an array of shape {value.shape}")
        if not (isinstance(value, (int, float, np.number, np.bool_))
                or isinstance(value, np.ndarray) and value.dtype.kind in "biufc"):
            raise HPVMError(f"{self.name}: argument '{name}' expects a {type_}, "
                            f"found {value!r}")
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error")  # NumPy warns (not raises) on some overflows
                number = type_.dtype.type(value).item()
        except (TypeError, ValueError, OverflowError, RuntimeWarning, DeprecationWarning):
            raise HPVMError(f"{self.name}: argument '{name}' expects a {type_}, "
                            f"found {value!r}") from None
        if (type_.name in ("index", "i8", "i16", "i32", "i64")
                and np.asarray(value).dtype.kind == "f" and float(value) != number):
            raise HPVMError(f"{self.name}: argument '{name}' expects a {type_}, "
                            f"found {value!r} (not an integer)")
        return scalar(number), number

    def __call__(self, *args, **kwargs):
        """Inputs by position or by name; for a tensor graph, returns the outputs
        (one array, or a tuple); outputs may be given as `out=[arrays]`."""
        if self._fast is not None and not kwargs:
            results = self._call_fast(args)
            if results is not _NOT_FAST:
                return results
        out = kwargs.pop("out", None)
        if out is not None and not self.outputs:
            raise HPVMError(f"{self.name}: out= gives arrays for the outputs of a tensor graph; "
                            "this function has none (it writes its memref arguments)")
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
        arguments, seen = [], []
        for (n, t), v in zip(self.params, values):
            argument, value = self._argument(n, t, v, keep, writable=isinstance(t, MemRefType))
            arguments.append(argument)
            seen.append(value)
        # Arrays as given (a read input converted to a copy still counts as given: an
        # output must not overlap it either), with whether the call writes them.
        given = [(n, v, isinstance(t, MemRefType)) for (n, t), v in zip(self.params, values)
                 if isinstance(v, np.ndarray)]
        results: List[np.ndarray] = []
        if self.outputs:
            if out is not None and (not isinstance(out, (list, tuple))
                                    or len(out) != len(self.outputs)):
                found = (f"{len(out)}" if isinstance(out, (list, tuple))
                         else f"a {type(out).__name__}")
                raise HPVMError(f"{self.name}: out= expects a list of {len(self.outputs)} "
                                f"arrays, found {found}")
            for i, (name, type_) in enumerate(self.outputs):
                array = out[i] if out is not None else _fresh(self.name, type_.shape,
                                                              type_.dtype, name)
                if out is not None:
                    # The graph writes its outputs while it reads its inputs (the host
                    # declares them unaliased): an overlap would corrupt both.
                    others = [(n, v) for n, v, _ in given]
                    others += [(self.outputs[j][0], r) for j, r in enumerate(results)]
                    for other_name, other in others:
                        if isinstance(array, np.ndarray) and np.may_share_memory(array, other):
                            raise HPVMError(f"{self.name}: out= array for '{name}' overlaps "
                                            f"'{other_name}'; expected an array of its own")
                argument, _ = self._argument(name, MemRefType(type_.shape, type_.element),
                                             array, keep, writable=True)
                arguments.append(argument)
                results.append(array)
        self._check_overlaps(given)
        if self.checks is not None:
            self.checks.check(self.name, seen)
        # A memref is written unless the graph only reads it (CallChecks.read_only).
        read_only = getattr(self.checks, "read_only", ())
        passed = [(v, isinstance(t, MemRefType) and i not in read_only)
                  for i, ((_, t), v) in enumerate(zip(self.params, seen))
                  if isinstance(v, np.ndarray)]
        passed += [(r, True) for r in results]
        with self.library.calls.enter(passed):
            self._invoke(arguments)
        if not self.outputs:
            return None
        return results[0] if len(results) == 1 else tuple(results)

    def _check_overlaps(self, arrays) -> None:
        """No array the call writes may share memory with another array argument: the
        host tracks each memref as a buffer of its own (the runtime refuses two that
        overlap, even one array passed twice), and a leaf writing one while reading
        the other would read what it wrote. `arrays`: (name, array, written)."""
        for i, (name, array, written) in enumerate(arrays):
            for other, other_array, other_written in arrays[i + 1:]:
                if not (written or other_written) or not np.may_share_memory(array,
                                                                            other_array):
                    continue
                if written and other_written:
                    raise HPVMError(f"{self.name}: arguments '{name}' and '{other}' share "
                                    "memory (one array passed twice, or views of one); each "
                                    "memref argument is a buffer of its own to the runtime, "
                                    "which refuses two that overlap; expected arrays that "
                                    "do not overlap (pass a copy)")
                first, second = (name, other) if written else (other, name)
                raise HPVMError(f"{self.name}: argument '{first}' is written and shares "
                                f"memory with argument '{second}'; expected arrays that "
                                "do not overlap (pass a copy)")


class Library:
    """A compiled module: its shared library and its host functions."""

    def __init__(self, path: str):
        self.path = path
        try:
            self.handle = ctypes.CDLL(path)
        except OSError as error:
            raise HPVMError(f"cannot load the compiled graph '{path}': {error}") from None
        # Calls from several Python threads run at once unless they conflict (_Admission).
        self.calls = _Admission()
        self.functions: Dict[str, Function] = {}
        # The runtime's guard (linked into the library): an error of the compiled code comes
        # back as a status, raised as HPVMError, instead of ending the interpreter. Libraries
        # built before the guard existed are called directly.
        self.call_guarded = None
        try:
            guard = self.handle.hpvm_rt_call_guarded
        except AttributeError:
            return
        guard.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)]
        guard.restype = ctypes.c_void_p
        self.handle.hpvm_status_code.argtypes = [ctypes.c_void_p]
        self.handle.hpvm_status_code.restype = ctypes.c_int
        self.handle.hpvm_status_code_name.argtypes = [ctypes.c_int]
        self.handle.hpvm_status_code_name.restype = ctypes.c_char_p
        self.handle.hpvm_status_message.argtypes = [ctypes.c_void_p]
        self.handle.hpvm_status_message.restype = ctypes.c_char_p
        self.handle.hpvm_status_free.argtypes = [ctypes.c_void_p]
        self.handle.hpvm_status_free.restype = None
        self.call_guarded = guard

    def raise_status(self, function: str, status: int) -> None:
        """Raises the error `status` (a runtime status the caller owns) as HPVMError."""
        code = self.handle.hpvm_status_code_name(self.handle.hpvm_status_code(status))
        message = self.handle.hpvm_status_message(status)
        self.handle.hpvm_status_free(status)
        raise HPVMError(f"{function}: {code.decode()}: {message.decode(errors='replace')}")

    def function(self, name: str, params, outputs=(), checks=None) -> Function:
        function = Function(self, name, params, outputs, checks)
        self.functions[name] = function
        return function

    def __getattr__(self, name: str) -> Function:
        functions = self.__dict__.get("functions", {})
        if name in functions:
            return functions[name]
        raise AttributeError(f"compiled module has no host function '{name}' "
                             f"(has {', '.join(functions) or 'none'})")


def cache_dir() -> Path:
    """The folder of compiled graphs: $HPVM_CACHE_DIR, or $XDG_CACHE_HOME/hpvm
    (~/.cache/hpvm), made when missing."""
    root = os.environ.get("HPVM_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "hpvm")
    path = Path(root)
    where = " (HPVM_CACHE_DIR)" if os.environ.get("HPVM_CACHE_DIR") else ""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise HPVMError(f"the cache folder '{path}'{where} cannot be made: "
                        f"{error.strerror or error}; expected a folder, or a path where one "
                        "can be made (set HPVM_CACHE_DIR to another)") from None
    if not path.is_dir():
        raise HPVMError(f"the cache folder '{path}'{where} is not a folder; expected a folder "
                        "(set HPVM_CACHE_DIR to another)")
    return path


def _unique_suffix() -> str:
    """A name part no other writer (process, thread or call) uses at the same time."""
    return f"{os.getpid()}.{threading.get_ident()}.{secrets.token_hex(6)}"


def _replace_atomically(path: Path, produce, what: str) -> None:
    """`path` holds what `produce(partial)` writes into a temporary file of a unique name, or
    what it held before, never part of it: the file replaces `path` in one rename. `what`
    names the file in the error when the cache folder cannot take it."""
    partial = path.with_name(f"{path.name}.{_unique_suffix()}.tmp")
    try:
        produce(str(partial))
        os.replace(partial, path)
    except OSError as error:
        raise HPVMError(f"cannot write {what} into the cache folder: "
                        f"{error.strerror or error}; expected a writable folder "
                        "(set HPVM_CACHE_DIR to another)") from None
    finally:
        if os.path.lexists(partial):
            os.unlink(partial)


def _write_atomically(path: Path, data: bytes) -> None:
    """`path` holds `data` or what it held before, never part of it."""
    def produce(partial: str) -> None:
        with open(partial, "wb") as stream:
            stream.write(data)
    _replace_atomically(path, produce, f"'{path}'")


def pass_option_value(value: str, what: str) -> str:
    """`value` quoted for a textual pass option (toolchain.pass_option_value), a path in
    the cache."""
    return toolchain.pass_option_value(value, what, " (set HPVM_CACHE_DIR to another folder)")


def knob_file(knobs) -> str:
    """A knob configuration (a path, or the configuration as a dict) as a file of the
    cache named by its content: the same knobs give the same path, hence the same
    cached library. A file there that does not hold that content (cut short, edited)
    is written again."""
    if isinstance(knobs, dict):
        try:
            content = json.dumps(knobs, indent=1, sort_keys=True)
        except (TypeError, ValueError) as error:
            raise HPVMError(f"knobs: expected a JSON-serializable dict, found: {error}") from None
        data = content.encode()
    else:
        # A regular file of at most 64 MiB (hpvm-apply-knobs' limit), checked before it is
        # read: a link to /dev/zero would be read until memory runs out, a pipe block.
        try:
            data = read_bytes(knobs, "the file", 64 << 20, " (hpvm-apply-knobs' limit)")
        except HPVMError as error:
            raise HPVMError(f"knobs: cannot read the configuration: {error}") from None
        try:
            data.decode()
        except UnicodeDecodeError as error:
            raise HPVMError(f"knobs: the configuration {knobs!r} is not UTF-8 text: "
                            f"{error}") from None
    digest = hashlib.sha256(data).hexdigest()[:24]
    path = cache_dir() / f"knobs-{digest}.json"
    try:
        intact = path.read_bytes() == data
    except OSError:
        intact = False
    if not intact:
        _write_atomically(path, data)
    return str(path)


def file_digest(path) -> str:
    """The sha256 of a file's content, in hex."""
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


_DIGEST_LINE = re.compile(r"([0-9a-f]{64})  (\S[^\n]*)\n?")


def _digest_path(library: str) -> str:
    return f"{library}.sha256"


def _warnings_path(library: str) -> str:
    return f"{library}.warnings"


def _replay_warnings(library: str) -> None:
    """Says again the warnings the build of the cached `library` gave (none recorded:
    nothing)."""
    try:
        messages = json.loads(Path(_warnings_path(library)).read_text())
    except (OSError, ValueError):
        return
    for message in messages if isinstance(messages, list) else []:
        warnings.warn(HPVMWarning(f"{message} (said by the build of the cached '{library}')"),
                      stacklevel=3)


def cache_entry_intact(library: str) -> bool:
    """Whether the cached `library` is the file its build wrote: its sha256 is the one in
    `<library>.sha256` (written beside it, in sha256sum's format). A missing library, a
    missing or garbled digest file, a library cut short, edited or replaced: False."""
    try:
        text = Path(_digest_path(library)).read_text()
    except (OSError, UnicodeDecodeError):
        return False
    match = _DIGEST_LINE.fullmatch(text)
    if match is None or match.group(2) != os.path.basename(library):
        return False
    try:
        return file_digest(library) == match.group(1)
    except OSError:
        return False


@contextlib.contextmanager
def _entry_lock(library: str):
    """Holds `<library>.lock` (flock) so that one process (or thread) builds an entry while
    the others wait for it and then use it; where locking is not possible (a read-only
    folder, a file system without locks), builds go ahead unlocked: they still never tear
    an entry, each writing its own temporary files."""
    try:
        import fcntl
        descriptor = os.open(f"{library}.lock", os.O_RDWR | os.O_CREAT, 0o644)
    except (ImportError, OSError):
        yield
        return
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX)
        except OSError:
            pass
        yield
    finally:
        os.close(descriptor)  # releases the lock


def _remove_dead_partials(library: str) -> None:
    """Removes the temporary files of builds of `library` whose process has died (killed
    half-way): `<library>[.sha256|.warnings].<pid>.<thread>.<random>.tmp`."""
    folder, base = os.path.split(library)
    pattern = re.compile(re.escape(base) + r"(?:\.sha256|\.warnings)?\.(\d+)\.\d+\.[0-9a-f]+\.tmp")
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        match = pattern.fullmatch(name)
        if match is None:
            continue
        try:
            os.kill(int(match.group(1)), 0)
            continue  # alive (or not ours to judge)
        except ProcessLookupError:
            pass
        except (OSError, OverflowError, ValueError):
            continue
        try:
            os.unlink(os.path.join(folder, name))
        except OSError:
            pass


# The cache's size bound: HPVM_CACHE_MAX_BYTES (a number, with an optional K, M or G
# suffix; 0: no bound). Entries used within the last minute are never evicted: another
# process may be between finding one and loading it.
_CACHE_DEFAULT_MAX = 10 << 30
_CACHE_RECENT_S = 60.0
_SIZE_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def cache_max_bytes() -> int:
    """The cache's size bound in bytes, from HPVM_CACHE_MAX_BYTES (default 10G; 0: none)."""
    text = os.environ.get("HPVM_CACHE_MAX_BYTES", "").strip()
    if not text:
        return _CACHE_DEFAULT_MAX
    match = re.fullmatch(r"(\d+)([KMG]?)", text.upper())
    if match is None:
        raise HPVMError(f"HPVM_CACHE_MAX_BYTES: expected a number of bytes with an optional "
                        f"K, M or G suffix (0: no bound), found {text!r}")
    return int(match.group(1)) * _SIZE_UNITS[match.group(2)]


def _cache_entries(folder: Path):
    """(last use, bytes, files) of each compiled library in `folder`: its files are the
    library and its .sha256, .warnings and .lock; its last use is the digest's mtime."""
    sizes: Dict[str, int] = {}
    try:
        with os.scandir(folder) as listing:
            for item in listing:
                if item.is_file(follow_symlinks=False):
                    sizes[item.name] = item.stat(follow_symlinks=False).st_size
    except OSError:
        return []
    entries = []
    for name in sizes:
        if not name.endswith(".so"):
            continue
        files = [name] + [name + s for s in (".sha256", ".warnings", ".lock") if name + s in sizes]
        try:
            used = os.stat(folder / f"{name}.sha256").st_mtime
        except OSError:
            used = 0.0  # no digest: never usable, evicted first
        entries.append((used, sum(sizes[f] for f in files), files))
    return entries


def bound_cache_size(folder: Optional[Path] = None, limit: Optional[int] = None) -> int:
    """Evicts the least recently used compiled libraries of the cache until it holds at most
    `limit` bytes (HPVM_CACHE_MAX_BYTES), sparing those used within the last minute. The
    digest goes first, so a reader racing the eviction builds again rather than loading a
    half-removed entry. Returns the bytes freed."""
    folder = cache_dir() if folder is None else folder
    limit = cache_max_bytes() if limit is None else limit
    entries = sorted(_cache_entries(folder))
    total = sum(size for _, size, _ in entries)
    freed, now = 0, time.time()
    for used, size, files in entries:
        if limit <= 0 or total - freed <= limit or now - used < _CACHE_RECENT_S:
            break
        for name in sorted(files, key=lambda f: not f.endswith(".sha256")):
            try:
                os.unlink(folder / name)
            except OSError:
                pass
        freed += size
    return freed


def _mark_used(library: str) -> None:
    """Records a use of a cached library (its digest's mtime: the eviction's clock)."""
    try:
        os.utime(_digest_path(library))
    except OSError:
        pass


def build(text: str, name: str, target: str = "cpu", opt: str = "-O3",
          flags: Sequence[str] = (), output: Optional[str] = None, verbose: bool = False,
          passes: Sequence[str] = (), parameters: Optional[Mapping[str, np.ndarray]] = None
          ) -> str:
    """The shared library of `text`: verified, transformed by the hpvm-opt `passes`, then
    compiled into `output`, or into the cache. A cached library is keyed by the text, the
    passes, the options and the compiler (a rebuilt hpvm-cc, compiler library or runtime
    builds anew, and so do the device tools it found: a translator or ptxas installed since);
    it is used only when its content has the sha256 stored beside it (else it is built
    again), and then nothing is verified, transformed or compiled again. The compiler's
    warnings are HPVMWarnings, said again whenever the cached build is used. Entries
    are written whole (a temporary file, then a rename) by one process at a time: builds
    of one graph from several processes compile it once, and a build that dies leaves no
    entry that is used."""

    said: List[str] = []  # the compile's warnings, kept beside a cached library

    def compile_to(path: str) -> None:
        toolchain.verify(text, f"{name}.mlir")
        ready = toolchain.run_opt(text, passes, f"{name}.mlir") if passes else text
        toolchain.compile_shared(ready, path, name, target, opt, flags, verbose=verbose,
                                 parameters=parameters, said=said)

    if output is not None:
        compile_to(output)
        return output
    stamps = [f"{p}:{p.stat().st_mtime_ns}:{p.stat().st_size}"
              for p in toolchain.compiler_files()]
    digest = hashlib.sha256("\0".join([text, *passes, target, opt, *toolchain.SHARED_FLAGS,
                                        *flags, *stamps,
                                        *toolchain.device_tools(target)]).encode())
    for key_name, array in (parameters or {}).items():
        digest.update(f"\0{key_name}\0{array.dtype.str}\0{array.shape}\0".encode())
        digest.update(memoryview(np.ascontiguousarray(array).reshape(-1)).cast("B"))
    key = digest.hexdigest()[:24]
    output = str(cache_dir() / f"{name}-{key}.so")
    if cache_entry_intact(output):
        _mark_used(output)
        _replay_warnings(output)
        return output
    with _entry_lock(output):
        if cache_entry_intact(output):  # built by another process while this one waited
            _replay_warnings(output)
            return output
        _remove_dead_partials(output)
        # The library and its warnings first, then its digest: a reader between them (or
        # after a crash between them) finds a digest that does not match, and builds again.
        _replace_atomically(Path(output), compile_to, f"the compiled graph '{output}'")
        _write_atomically(Path(_warnings_path(output)), json.dumps(said).encode())
        digest = f"{file_digest(output)}  {os.path.basename(output)}\n"
        _write_atomically(Path(_digest_path(output)), digest.encode())
    bound_cache_size()
    return output
