"""`python -m hpvm.onnx model.onnx -o model.mlir`: an ONNX model as verified MLIR
of the hpvm dialect (a tensor graph: leaves, the root internal node and the host
function). Weights of 4 KiB or more go into a parameter archive beside the MLIR file
(`model.params`, which the module names), unless `--inline-weights` keeps them in the
text (as on standard output and other streams, which have no folder to put it in);
`hpvm-cc model.mlir` compiles either. The output is never the model itself (refused as
"the input file is the same as the output file") nor an existing parameter archive."""

from __future__ import annotations

import argparse
import sys
from typing import Dict, Optional, Sequence, Tuple

from ..errors import HPVMError

PROG = "hpvm-onnx"


def _input_shape(text: str) -> Tuple[str, Tuple[int, ...]]:
    """'name=1x3x224x224' (or 1,3,224,224) as (name, shape)."""
    name, sep, dims = text.rpartition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(
            f"expected NAME=SHAPE such as 'input=1x3x224x224', found '{text}'")
    try:
        shape = tuple(int(d) for d in dims.replace(",", "x").split("x") if d.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"the shape of '{name}' is '{dims}'; expected sizes separated by 'x', "
            "such as 1x3x224x224") from None
    if not shape or any(d <= 0 for d in shape):
        raise argparse.ArgumentTypeError(
            f"the shape of '{name}' is '{dims}'; expected positive sizes such as 1x3x224x224")
    return name, shape


def _dim(text: str) -> Tuple[str, int]:
    """'sequence=128' as (name, size)."""
    name, sep, size = text.rpartition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(
            f"expected NAME=SIZE such as 'sequence=128', found '{text}'")
    return name, _positive(size)


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive integer, found '{text}'")
    return value


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG, description="Converts an ONNX model into a tensor graph of the hpvm "
        "dialect (MLIR), verified by the dialect's verifier.")
    parser.add_argument("model", help="the ONNX model (.onnx)")
    parser.add_argument("-o", "--output", default="-",
                        help="the MLIR file to write (default: standard output); never the "
                        "model itself or a parameter archive")
    parser.add_argument("--batch-size", type=_positive, default=None, metavar="N",
                        help="the size of dynamic first dimensions of inputs (default 1)")
    parser.add_argument("--input-shape", type=_input_shape, action="append", default=[],
                        metavar="NAME=SHAPE",
                        help="the static shape of an input, e.g. input=1x3x224x224 "
                        "(may be repeated)")
    parser.add_argument("--dim", type=_dim, action="append", default=[], metavar="NAME=N",
                        help="the size of a named dynamic dimension (an ONNX dim_param) of "
                        "every input that has it, e.g. sequence=128 (may be repeated)")
    parser.add_argument("--inline-weights", action="store_true",
                        help="write every weight into the MLIR text instead of a parameter "
                        "archive beside it (always so on standard output and other streams: "
                        "/dev/stdout, a pipe)")
    parser.add_argument("--name", default=None,
                        help="the name of the graph's host function (default: the ONNX "
                        "graph's name)")
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    """The command line; returns the exit status (0, or 1 after an error)."""
    args = _parser().parse_args(argv)
    shapes: Dict[str, Tuple[int, ...]] = {}
    for name, shape in args.input_shape:
        shapes[name] = shape
    try:
        from . import load
        from ..files import path_text, same_file
        if args.output != "-" and same_file(path_text(args.output, "-o"), args.model):
            raise HPVMError(f"the input file '{args.model}' is the same as the output file "
                            f"'{args.output}'; expected another output (the model would "
                            "be lost)")
        graph = load(args.model, shapes=shapes or None, batch_size=args.batch_size,
                     name=args.name, dims=dict(args.dim) or None)
        if args.output == "-":
            sys.stdout.write(graph.verify())
        else:
            graph.save(args.output, inline_weights=args.inline_weights)  # verified first
    except HPVMError as error:
        print(f"{PROG}: error: {error}", file=sys.stderr)
        return 1
    except OSError as error:  # writing standard output
        print(f"{PROG}: error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
