"""The sizes of an ONNX graph's dynamic input dimensions.

A tensor graph has static shapes, so every dynamic dimension of a graph input gets a size
when the model is imported. A dimension with a name (`dim_param`, "batch", "sequence",
"past_sequence") is bound by name, `dims={"sequence": 128}`, or through the shape of any
input that has it, `shapes={"input_ids": (1, 128)}`: inputs that share the name share the
size, and two sources that disagree are an error naming the dimension and both. The first
dimension of an input that nothing else binds takes `batch_size` (default 1). Any other
dimension that nothing binds is an error naming it.
"""

from __future__ import annotations

from typing import Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from ..errors import HPVMError

Shape = Tuple[int, ...]


def positive_sizes(given, keyword: str) -> Dict[str, int]:
    """dims= as {name: positive int}; HPVMError for anything else."""
    if given is None:
        return {}
    if not isinstance(given, Mapping):
        raise HPVMError(f"{keyword}: expected a dict of dimension name -> size, found "
                        f"{type(given).__name__}")
    sizes = {}
    for key, size in given.items():
        if (not isinstance(size, (int, np.integer)) or isinstance(size, bool)
                or size <= 0):
            raise HPVMError(f"{keyword}[{key!r}] is {size!r}; expected a positive integer")
        sizes[str(key)] = int(size)
    return sizes


def _named(dim) -> Optional[str]:
    return dim.dim_param if dim.HasField("dim_param") and dim.dim_param else None


class DimBinder:
    """Resolves the shape of each tensor input of an ONNX graph (see the module)."""

    def __init__(self, inputs: Sequence, shapes: Mapping[str, Shape], dims: Mapping[str, int],
                 batch_size: int, batch_given: bool, keyword: str = "shapes"):
        self.shapes = dict(shapes)
        self.batch_size = batch_size
        self.batch_given = batch_given
        self.keyword = keyword
        # dimension name -> (size, what gave it: an error message names both sources).
        self.bound: Dict[str, Tuple[int, str]] = {}
        self.named: Dict[str, List[str]] = {}
        typed = {}
        for value_info in inputs:
            tensor_type = value_info.type.tensor_type
            if value_info.type.WhichOneof("value") == "tensor_type" and \
                    tensor_type.HasField("shape"):
                typed[value_info.name] = list(tensor_type.shape.dim)
                for dim in typed[value_info.name]:
                    if _named(dim):
                        self.named.setdefault(_named(dim), []).append(value_info.name)
        unknown = sorted(set(dims) - set(self.named))
        if unknown:
            known = ", ".join(f"'{n}'" for n in self.named) or "none"
            raise HPVMError(f"dims names {unknown}, which no input of the model has (its "
                            f"named dimensions: {known})")
        for name, size in dims.items():
            self.bound[name] = (size, f"dims={{'{name}': {size}}}")
        for name, given in self.shapes.items():
            if name in typed:
                self._check_given(name, typed[name], given)
        # A name still free that is the first dimension of an input takes batch_size
        # there, and so everywhere (whichever input comes first).
        for name, dims_of in typed.items():
            if name not in self.shapes and dims_of and _named(dims_of[0]):
                if _named(dims_of[0]) not in self.bound:
                    self._bind(_named(dims_of[0]), batch_size,
                               f"batch_size={batch_size}" if batch_given
                               else "the default batch size 1")

    def _bind(self, param: str, size: int, source: str) -> None:
        old = self.bound.get(param)
        if old is None:
            self.bound[param] = (size, source)
        elif old[0] != size:
            raise HPVMError(f"the dimension '{param}' is {size} in {source} but {old[0]} in "
                            f"{old[1]}; expected one size for a named dimension (the inputs "
                            f"that have it: {', '.join(sorted(set(self.named[param])))})")

    def _check_given(self, name: str, dims, given: Shape) -> None:
        label = f"{self.keyword}['{name}']"
        if len(given) != len(dims):
            raise HPVMError(f"{label} is {list(given)} of rank {len(given)}; the model's "
                            f"input has rank {len(dims)}")
        for axis, (dim, size) in enumerate(zip(dims, given)):
            if dim.HasField("dim_value") and dim.dim_value != size:
                raise HPVMError(f"{label} is {list(given)}, but dimension {axis} of the "
                                f"model's input is fixed to {dim.dim_value}")
            if _named(dim):
                self._bind(_named(dim), int(size), f"{label} (dimension {axis} of "
                                                   f"'{name}')")

    def shape(self, name: str, tensor_type) -> Shape:
        """The shape of the graph input `name` (an onnx TypeProto.Tensor)."""
        given = self.shapes.get(name)
        if not tensor_type.HasField("shape"):
            if given is None:
                raise HPVMError(f"the ONNX graph input '{name}' has no shape; give it with "
                                f"{self.keyword}={{'{name}': (...)}} (--input-shape "
                                f"{name}=AxBx...)")
            return given
        if given is not None:
            return given
        dims = list(tensor_type.shape.dim)
        return tuple(self._size(name, dims, axis) for axis in range(len(dims)))

    def _size(self, name: str, dims, axis: int) -> int:
        dim, param = dims[axis], _named(dims[axis])
        if dim.HasField("dim_value"):
            if axis == 0 and self.batch_given and dim.dim_value != self.batch_size:
                # Silently returning the model's batch would hand back fewer results.
                fixed = "x".join(str(d.dim_value) if d.HasField("dim_value") else "?"
                                 for d in dims)
                raise HPVMError(
                    f"batch_size={self.batch_size}, but the ONNX graph input '{name}' has "
                    f"the static shape {fixed}: its batch is fixed to {dim.dim_value}. "
                    f"Export the model with a dynamic batch dimension (torch.onnx.export"
                    f"(..., dynamic_axes={{'{name}': {{0: 'batch'}}}})) or with batch "
                    f"{self.batch_size}")
            return int(dim.dim_value)
        if param in self.bound:
            size, source = self.bound[param]
            if axis == 0 and self.batch_given and size != self.batch_size:
                raise HPVMError(f"batch_size={self.batch_size}, but the dimension '{param}' "
                                f"(the first of the ONNX graph input '{name}') is {size} in "
                                f"{source}")
            return size
        if axis == 0:
            return self.batch_size
        symbol = f" ('{param}')" if param else " (unnamed)"
        bind = (f"bind it with dims={{'{param}': N}} (--dim {param}=N) or give" if param
                else "give")
        raise HPVMError(
            f"the ONNX graph input '{name}' has a dynamic dimension {axis}{symbol} that "
            f"nothing binds; {bind} the input's shape with {self.keyword}={{'{name}': (...)}} "
            f"(--input-shape {name}=AxBx...), or call hpvm.onnx.compile_dynamic(model), "
            "which compiles the graph at the shapes of each call")
