"""The ONNX operators, in modules by family, and their registry: `HANDLERS` maps each op type
to the function that converts one node of it, `handler(importer, node)`, which reads its
inputs from and writes its outputs to the importer's value table (python/hpvm/onnx/importer.py
walks the graph). A family module lists its operators in its own `HANDLERS`; an op type
that two modules claim is an error when the package is imported.

The names with a leading underscore are the package's own: shared between its modules,
not part of `hpvm.onnx`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Dict

from . import (arithmetic, constants, convolution, elementwise, erf, gather, logic, matmul,
               movement, normalization, pooling, reductions, resize, shape)

if TYPE_CHECKING:
    from ..importer import Importer
    from ..nodes import _Node

FAMILIES = (arithmetic, constants, convolution, elementwise, erf, gather, logic, matmul,
            movement, normalization, pooling, reductions, resize, shape)


def _registry() -> Dict[str, Callable[[Importer, _Node], None]]:
    handlers: Dict[str, Callable[[Importer, _Node], None]] = {}
    for family in FAMILIES:
        for op_type, handler in family.HANDLERS.items():
            if op_type in handlers:
                raise RuntimeError(f"the ONNX operator {op_type} is converted by two modules "
                                   f"(the second is {family.__name__})")
            handlers[op_type] = handler
    return handlers


#: op type -> its handler.
HANDLERS = _registry()

#: The ONNX operators `load` converts.
SUPPORTED_OPS = tuple(sorted(HANDLERS))
