"""ONNX model files: `load_model` reads a path, bytes or a ModelProto, and the checks of
external data files (a regular file holding the bytes the tensor names) done before onnx
reads them."""

from __future__ import annotations

import math
import os
from typing import Optional

import numpy as np

from ..errors import HPVMError
from ..files import path_text, read_bytes, regular_file
from .nodes import onnx
from .nodes import _require_onnx


#: The largest ONNX file read: protobuf parses no message over 2 GiB.
_MODEL_LIMIT = (1 << 31) - 1


def _external_data_error(tensor, base_dir: str) -> Optional[str]:
    """What is wrong with the external data file of `tensor` (read from `base_dir`)
    before onnx reads it, or None: it must be a regular file (after links; a link to
    /dev/zero or a named pipe is refused before anything is read) that holds the bytes
    its offset and length name, and no more than the tensor needs when no length is
    given (onnx would read the rest of the file)."""
    info = {e.key: e.value for e in tensor.external_data}
    location = info.get("location", "")
    if not location:
        return "it keeps its data in an external file but names none; expected a 'location'"
    try:
        offset = int(info.get("offset") or 0)
        length = int(info["length"]) if info.get("length") else None
    except ValueError:
        return (f"the offset '{info.get('offset')}' or length '{info.get('length')}' of its "
                "external data is not an integer")
    path = os.path.join(base_dir, location)
    try:
        size = regular_file(path, "its external data file").st_size
    except HPVMError as error:
        return str(error)
    try:
        itemsize = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(tensor.data_type)).itemsize
        needed = math.prod(int(d) for d in tensor.dims) * itemsize
    except Exception:  # an unknown or packed data type: onnx's own checks decide
        needed = None
    if offset < 0 or offset > size or (length is not None and (
            length < 0 or length > size - offset)):
        return (f"its external data file '{path}' holds {size} bytes; expected "
                f"{'?' if length is None else length} bytes at byte {offset}")
    if needed is not None and (length if length is not None else size - offset) > needed:
        given = (f"a length of {length} bytes" if length is not None else
                 f"no length, and onnx would read the {size - offset} bytes after byte "
                 f"{offset}")
        return (f"its external data file '{path}' gives {given}; expected at most the "
                f"{needed} bytes of its dims {list(tensor.dims)}")
    return None


def load_model(model, load_external_data: bool = True):
    """A ModelProto from a path, serialized bytes or a ModelProto. The external data of a
    model given by path is read from the model's folder (unless `load_external_data` is
    false: then the tensors still name their files). A path must name a regular file
    (after links) of at most 2 GiB, external data files too: HPVMError otherwise."""
    _require_onnx()
    if isinstance(model, onnx.ModelProto):
        return model
    if isinstance(model, (bytes, bytearray, memoryview)):
        try:
            return onnx.load_from_string(bytes(model))
        except Exception as error:  # DecodeError and friends
            raise HPVMError(f"cannot parse the ONNX model: {error}") from None
    if isinstance(model, (str, os.PathLike)):
        path = path_text(model, "the ONNX model")
        data = read_bytes(path, "the ONNX model", _MODEL_LIMIT,
                          " (protobuf reads no larger message; a larger model keeps its "
                          "weights in external data files)")
        try:
            proto = onnx.load_from_string(data)
        except Exception as error:
            raise HPVMError(f"cannot read the ONNX model '{path}': {error}") from None
        if load_external_data:
            base_dir = os.path.dirname(os.path.abspath(path))
            tensors = getattr(onnx.external_data_helper, "_get_all_tensors",
                              lambda m: list(m.graph.initializer))(proto)
            for index, tensor in enumerate(tensors):
                if onnx.external_data_helper.uses_external_data(tensor):
                    wrong = _external_data_error(tensor, base_dir)
                    if wrong:
                        label = (f"the tensor '{tensor.name}'" if tensor.name
                                 else f"tensor #{index}")
                        raise HPVMError(f"the ONNX model '{path}': {label} (dims "
                                        f"{list(tensor.dims)}) cannot be read: {wrong}")
            try:
                onnx.external_data_helper.load_external_data_for_model(proto, base_dir)
            except Exception as error:
                raise HPVMError(f"cannot read the external data of the ONNX model '{path}': "
                                f"{error}") from None
        return proto
    raise HPVMError(f"expected an ONNX model (a path, bytes or an onnx.ModelProto), found "
                    f"{type(model).__name__}")
