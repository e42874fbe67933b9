"""Types and attributes of the hpvm dialect as MLIR text.

The package has no MLIR Python bindings (Debian ships none): it prints the
dialect's textual form and lets the compiler library parse and verify it.
This module holds the small vocabulary every builder shares: element types,
tensor and memref types, dense constants and symbol names.
"""

from __future__ import annotations

import os
import re
import zlib
from dataclasses import dataclass
from typing import Iterable, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from .errors import HPVMError
from .files import write_atomically

#: Element types the tensor ops take, with the NumPy type of their data.
FLOAT_TYPES = {"f16": np.float16, "f32": np.float32, "f64": np.float64}
#: Scalar types host functions and leaves may take besides floats.
SCALAR_TYPES = {
    **FLOAT_TYPES,
    "i1": np.bool_,
    "i8": np.int8,
    "i16": np.int16,
    "i32": np.int32,
    "i64": np.int64,
    "index": np.int64,
}


def element_type_of(dtype) -> str:
    """The MLIR element type of a NumPy dtype (float16/32/64 and integers)."""
    dtype = np.dtype(dtype)
    for name, numpy_type in SCALAR_TYPES.items():
        if name != "index" and np.dtype(numpy_type) == dtype:
            return name
    raise HPVMError(f"unsupported element type {dtype}; expected one of "
                    "float16, float32, float64, bool, int8, int16, int32, int64")


def numpy_type_of(element: str):
    try:
        return np.dtype(SCALAR_TYPES[element])
    except KeyError:
        raise HPVMError(f"unknown element type '{element}'; expected one of "
                        f"{', '.join(SCALAR_TYPES)}") from None


Shape = Tuple[int, ...]


def _check_shape(shape: Iterable, what: str, dynamic: bool = False) -> Tuple[Optional[int], ...]:
    try:
        dims = tuple(shape)
    except TypeError:
        raise HPVMError(f"{what}: expected a shape (a sequence of sizes), found {shape!r}") from None
    for d in dims:
        if d is None and dynamic:
            continue
        if not isinstance(d, (int, np.integer)) or isinstance(d, bool) or d < 0:
            expected = "non-negative integers or None" if dynamic else "non-negative integers"
            raise HPVMError(f"{what}: expected sizes that are {expected}, found {shape!r}")
    return tuple(None if d is None else int(d) for d in dims)


#: The most bytes a tensor may hold: 2^48 (256 TiB), more than any machine's memory and
#: the address space of x86-64 with 4-level pages; a larger shape is a mistake (a
#: dimension of 2^40), refused when the tensor is made rather than when memory runs out.
MAX_TENSOR_BYTES = 1 << 48


def check_tensor_size(type_, what: str) -> None:
    """HPVMError naming `what` when a tensor of `type_` would hold more than
    MAX_TENSOR_BYTES bytes (its element count may not even fit in 64 bits)."""
    elements = 1
    for d in type_.shape:
        elements *= 1 if d is None else d
    size = elements * type_.dtype.itemsize
    if size > MAX_TENSOR_BYTES:
        shape = "x".join("?" if d is None else str(d) for d in type_.shape)
        raise HPVMError(f"{what} of shape {shape} ({type_.element}) holds {elements} elements "
                        f"({size} bytes, 2^{size.bit_length() - 1} or more); expected at most "
                        f"2^48 bytes (256 TiB) per tensor")


class _Shaped:
    """What tensor and memref types share: a shape and an element type."""

    shape: Tuple[Optional[int], ...]
    element: str
    _kind = ""
    _dynamic = False

    def __post_init__(self):
        object.__setattr__(self, "shape",
                           _check_shape(self.shape, f"{self._kind} type", self._dynamic))
        numpy_type_of(self.element)

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def dtype(self):
        return numpy_type_of(self.element)

    def __str__(self) -> str:
        dims = "".join(("?" if d is None else str(d)) + "x" for d in self.shape)
        return f"{self._kind}<{dims}{self.element}>"


@dataclass(frozen=True)
class TensorType(_Shaped):
    """`tensor<AxBxf32>`: a ranked tensor of static shape (value semantics)."""

    shape: Shape
    element: str = "f32"
    _kind = "tensor"


@dataclass(frozen=True)
class MemRefType(_Shaped):
    """`memref<?x4xf32>`: a buffer; None in the shape is a dynamic size."""

    shape: Tuple[Optional[int], ...]
    element: str = "f32"
    _kind = "memref"
    _dynamic = True


@dataclass(frozen=True)
class ScalarType:
    """A scalar: `f32`, `i64`, `index`, ..."""

    name: str

    def __post_init__(self):
        numpy_type_of(self.name)

    @property
    def dtype(self):
        return numpy_type_of(self.name)

    def __str__(self) -> str:
        return self.name


Type = Union[TensorType, MemRefType, ScalarType]

_MEMREF = re.compile(r"^memref<((?:(?:\?|\d+)x)*)(\w+)>$")
_TENSOR = re.compile(r"^tensor<((?:\d+x)*)(\w+)>$")


def parse_type(value) -> Type:
    """A type from its MLIR spelling ('memref<?xf32>', 'tensor<2x3xf32>', 'index')
    or a type object."""
    if isinstance(value, (TensorType, MemRefType, ScalarType)):
        return value
    if not isinstance(value, str):
        raise HPVMError(f"expected a type (e.g. 'memref<?xf32>', 'f32'), found {value!r}")
    text = value.strip()
    match = _MEMREF.match(text)
    if match:
        dims = [None if d == "?" else int(d) for d in match.group(1).split("x") if d]
        return MemRefType(tuple(dims), match.group(2))
    match = _TENSOR.match(text)
    if match:
        dims = [int(d) for d in match.group(1).split("x") if d]
        return TensorType(tuple(dims), match.group(2))
    if text in SCALAR_TYPES:
        return ScalarType(text)
    raise HPVMError(f"unsupported type '{value}'; expected a memref (memref<?x4xf32>), a "
                    f"static tensor (tensor<2x3xf32>) or a scalar ({', '.join(SCALAR_TYPES)})")


def memref(element: str, *shape) -> MemRefType:
    """`hpvm.memref("f32", None, 4)` is `memref<?x4xf32>`."""
    return MemRefType(tuple(shape), element)


def tensor(element: str, *shape) -> TensorType:
    return TensorType(tuple(shape), element)


def dense_attr(array: np.ndarray, type_: TensorType) -> str:
    """`dense<...>` of a constant: one splat value, or the raw little-endian bytes
    in hex (what MLIR parses fastest and prints exactly)."""
    data = np.asarray(array, dtype=type_.dtype, order="C")
    if data.dtype == np.bool_:  # i1: the elements written out (no byte per element in hex)
        if is_splat(data):
            return f"dense<{'true' if data.flat[0] else 'false'}>"
        return "dense<" + _nested(data.tolist()) + ">"
    if data.dtype.kind in "iu" and is_splat(data):
        return f"dense<{int(data.flat[0])}>"
    if is_splat(data):
        return f"dense<{float_literal(float(data.flat[0]), type_.element)}>"
    little = data.astype(data.dtype.newbyteorder("<"), copy=False)
    return 'dense<"0x' + little.tobytes().hex().upper() + '">'


def _nested(value) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(_nested(v) for v in value) + "]"
    return "true" if value else "false"


#: Constants of at least this many bytes travel in a parameter archive when a module
#: has one (as the compiler's hpvm-externalize-constants takes them out of the IR).
PARAMETER_MIN_BYTES = 4096

_ARCHIVE_MAGIC = b"HPVMPRM2"
_ARCHIVE_ALIGN = 64


def is_splat(array: np.ndarray) -> bool:
    """Whether every element of `array` is its first one (dense_attr writes it as one
    value); NaN never is."""
    return bool(array.size and np.all(array == array.flat[0]) and not np.isnan(array.flat[0]))


def write_parameter_archive(path, entries: Mapping[str, np.ndarray]) -> None:
    """Writes `entries` (key -> array) as a parameter archive, the file a module's
    `dense_resource<key>` constants name with `hpvm.parameters` (the format of
    docs/Transforms.md, hpvm-externalize-constants): the magic "HPVMPRM2", the entry
    count and the index size (u64 each), the CRC-32 of those 24 bytes and the index (u32)
    and 4 zero bytes, the index (per entry: u64 offset, u64 size, u32 CRC-32 of its bytes,
    u32 key length, the key, zeros to a multiple of 8), then each entry's little-endian
    bytes at an offset aligned to 64, no two entries sharing a byte. The file is written
    beside `path` and renamed to it when complete; HPVMError when it cannot be."""
    index = bytearray()
    arrays = []
    for key, array in entries.items():
        data = np.ascontiguousarray(array)
        arrays.append(data.astype(data.dtype.newbyteorder("<"), copy=False))
        name = key.encode()
        index += b"\0" * 20 + len(name).to_bytes(4, "little") + name
        index += b"\0" * (-len(index) % 8)
    offset = 32 + len(index)
    at = 0
    for data in arrays:  # the offsets, now that the index size is known
        offset += -offset % _ARCHIVE_ALIGN
        name_size = int.from_bytes(index[at + 20:at + 24], "little")
        checksum = zlib.crc32(memoryview(data.reshape(-1)).cast("B"))
        index[at:at + 20] = (offset.to_bytes(8, "little") + data.nbytes.to_bytes(8, "little")
                             + checksum.to_bytes(4, "little"))
        at += 24 + name_size
        at += -at % 8
        offset += data.nbytes
    head = _ARCHIVE_MAGIC + len(arrays).to_bytes(8, "little") + len(index).to_bytes(8, "little")
    head += zlib.crc32(bytes(index), zlib.crc32(head)).to_bytes(4, "little") + bytes(4)

    def write(stream) -> None:
        stream.write(head + bytes(index))
        position = 32 + len(index)
        for data in arrays:
            stream.write(b"\0" * (-position % _ARCHIVE_ALIGN))
            position += -position % _ARCHIVE_ALIGN
            stream.write(memoryview(data.reshape(-1)).cast("B"))
            position += data.nbytes

    write_atomically(path, write, "the parameter archive")


def is_parameter_archive(path) -> bool:
    """Whether `path` is a regular file that starts like a parameter archive (of any
    version of the format)."""
    try:
        if not os.path.isfile(path):
            return False
        with open(path, "rb") as stream:
            return stream.read(8)[:7] == _ARCHIVE_MAGIC[:7]
    except (OSError, ValueError):
        return False


def string_literal(text: str) -> str:
    """`text` as an MLIR string literal."""
    escaped = "".join(c if c not in '"\\' and 32 <= ord(c) < 127 else f"\\{ord(c):02X}"
                      for c in text)
    return f'"{escaped}"'


def float_literal(value: float, element: str = "f64") -> str:
    """A float as MLIR reads it back exactly: the shortest round-trip decimal
    (with a '.' in the mantissa, as MLIR requires), or, for infinities and NaN,
    the bits of the `element` type in hex."""
    value = float(value)
    if not np.isfinite(value):
        if element not in FLOAT_TYPES:
            raise HPVMError(f"non-finite constant {value} needs a float element type, "
                            f"found '{element}'")
        bits = np.array(value, dtype=FLOAT_TYPES[element])
        width = bits.dtype.itemsize * 2
        return "0x" + format(int(bits.view(f"u{bits.dtype.itemsize}")), f"0{width}X")
    text = repr(value)
    mantissa, _, exponent = text.partition("e")
    if "." not in mantissa:
        mantissa += ".0"
    return mantissa + ("e" + exponent if exponent else "")


_SYMBOL = re.compile(r"[^A-Za-z0-9_$.]")


def symbol_name(name: str) -> str:
    """A valid MLIR symbol from a user's name (ONNX node names carry '/', ':', ...)."""
    cleaned = _SYMBOL.sub("_", str(name)) or "node"
    if cleaned[0].isdigit():
        cleaned = "n" + cleaned
    return cleaned


def unique(name: str, taken: set, next_suffix: Optional[dict] = None) -> str:
    """`name` as a symbol not in `taken` (then added to it): the name itself, or
    `<name>_<k>` with the smallest free k. `next_suffix` (base -> the k to try first,
    kept by the caller across calls) makes n names of one base cost O(n), not O(n^2):
    every smaller k was found taken before, and names are never released."""
    base = symbol_name(name)
    candidate = base
    if candidate in taken:
        k = next_suffix.get(base, 1) if next_suffix is not None else 1
        candidate = f"{base}_{k}"
        while candidate in taken:
            k += 1
            candidate = f"{base}_{k}"
        if next_suffix is not None:
            next_suffix[base] = k + 1
    taken.add(candidate)
    return candidate


def format_list(values: Sequence) -> str:
    return "[" + ", ".join(str(v) for v in values) + "]"
