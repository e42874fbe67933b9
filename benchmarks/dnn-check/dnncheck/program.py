"""A release program as the check sees it: its weights, its nodes (one tensor intrinsic each)
in topological order, and every tensor's shape by ApproxHPVM's rules."""
import math
from dataclasses import dataclass, field


class CheckError(Exception):
    """A failure of one program at one step; the message says what and where."""


# The tensor intrinsics: number of tensor operands, then the kinds of the constant operands.
#   convolution(in, filter, vpad, hpad, vstride, hstride)
#   group_convolution(in, filter, vpad, hpad, vstride, hstride, conv_mode, groups)
#   batchnorm(in, gamma, beta, mean, variance, epsilon)
#   pool_max / pool_mean(in, winH, winW, vpad, hpad, vstride, hstride)
OPS = {
    "convolution": (2, "iiii"),
    "group_convolution": (2, "iiiiii"),
    "add": (2, ""),
    "mul": (2, ""),
    "relu": (1, ""),
    "tanh": (1, ""),
    "clipped_relu": (1, ""),
    "softmax": (1, ""),
    "batchnorm": (5, "f"),
    "pool_max": (1, "iiiiii"),
    "pool_mean": (1, "iiiiii"),
}
# HPVM-C calls a node function or root() may contain besides the ones we interpret.
NODE_CALLS_IGNORED = {"hint", "attributes", "node_id", "return"}
ROOT_CALLS_IGNORED = {"hint", "attributes", "node_id"}


@dataclass
class Weight:
    name: str                 # the C variable in main()
    file: str                 # the file name under the program's data directory
    dims: tuple               # (d1, d2, d3, d4) as read by readTrainedWeights
    line: int
    role: str = "unused"      # filter, dense, bias, bn_gamma, bn_beta, bn_mean, bn_var

    @property
    def count(self):
        return math.prod(self.dims)


@dataclass
class Node:
    name: str                 # var_K in root()
    func: str                 # var_K_node
    op: str                   # the intrinsic without __hpvm__tensor_
    ports: list               # input port of each tensor operand, in call order
    consts: list              # the constant operands
    line: int                 # of the intrinsic call
    # per tensor operand: ("node", var), ("input", root parameter) or ("weight", name)
    sources: list = field(default_factory=list)


@dataclass
class Program:
    name: str
    source: str
    dir_name: str = ""
    batch_size: int = 0
    input_size: int = 0
    input_chw: tuple = ()
    labels_read: int = 0      # the count of a readLabels(labels_path, N) call, if any
    weights: dict = field(default_factory=dict)   # name -> Weight, in main()'s order
    nodes: list = field(default_factory=list)     # topological order
    result: str = ""          # the node bound to root's output 0
    warnings: list = field(default_factory=list)
    shapes: dict = field(default_factory=dict)    # tensor name -> shape (our propagation)
    classes: int = 0

    @property
    def out_shape(self):
        return self.shapes[self.result]


# The role of each weight operand, by op and operand position.
ROLES = {("convolution", 1): "filter", ("group_convolution", 1): "filter",
         ("mul", 1): "dense", ("add", 0): "bias", ("add", 1): "bias",
         ("batchnorm", 1): "bn_gamma", ("batchnorm", 2): "bn_beta",
         ("batchnorm", 3): "bn_mean", ("batchnorm", 4): "bn_var"}


def assign_roles(prog):
    for node in prog.nodes:
        for i, (kind, name) in enumerate(node.sources):
            if kind != "weight":
                continue
            role = ROLES.get((node.op, i))
            if role is None:
                raise CheckError(f"node {node.name} ({node.op}): operand {i + 1} is weight "
                                 f"{name}, which the check does not expect there")
            w = prog.weights[name]
            if w.role not in ("unused", role):
                raise CheckError(f"weight {name} is used both as {w.role} and as {role}")
            w.role = role
    for w in prog.weights.values():
        if w.role == "unused":
            prog.warnings.append(f"weight {w.name} ({w.file}) is read but not used")


def propagate_shapes(prog):
    """Every tensor's shape by ApproxHPVM's rules (pure Python); mismatches are parse errors."""
    B = prog.batch_size
    sh = prog.shapes
    input_name = None
    for w in prog.weights.values():
        sh[w.name] = w.dims
    for node in prog.nodes:
        srcs = []
        for kind, name in node.sources:
            if kind == "input":
                input_name = "input"
                sh["input"] = (B,) + prog.input_chw
                srcs.append("input")
            else:
                srcs.append(name)
        ins = [sh[s] for s in srcs]
        where = f"node {node.name} ({node.op}, line {node.line})"
        op, c = node.op, node.consts
        if op in ("convolution", "group_convolution"):
            (n, ch, h, w), (f, cg, kh, kw) = ins
            vp, hp, vs, hs = c[:4]
            groups = c[5] if op == "group_convolution" else 1
            if cg * groups != ch or f % groups:
                raise CheckError(f"{where}: input {ins[0]} and filter {ins[1]} with {groups} "
                                 "groups do not fit")
            oh, ow = (h + 2 * vp - kh) // vs + 1, (w + 2 * hp - kw) // hs + 1
            if oh <= 0 or ow <= 0 or min(vs, hs) <= 0 or min(vp, hp) < 0:
                raise CheckError(f"{where}: input {ins[0]}, filter {ins[1]}, pads/strides {c}")
            out = (n, f, oh, ow)
        elif op == "add":
            a, b = ins
            if len(a) != len(b) or any(y not in (x, 1) for x, y in zip(a, b)):
                raise CheckError(f"{where}: cannot add {b} to {a}")
            out = a
        elif op == "mul":
            a, wd = ins
            k = math.prod(a[1:])
            if wd[0] != 1 or wd[1] != 1 or wd[2] != k:
                raise CheckError(f"{where}: input {a} ({k} features) times weight {wd} "
                                 "(expected 1x1xKxM with K the features)")
            out = (a[0], wd[3], 1, 1)
        elif op in ("relu", "tanh", "clipped_relu"):
            out = ins[0]
        elif op == "softmax":
            out = ins[0]
            if math.prod(out[2:]) != 1:
                raise CheckError(f"{where}: softmax of {out}, which has spatial dimensions")
        elif op == "batchnorm":
            out = ins[0]
            for s, p in zip(ins[1:], ("gamma", "beta", "mean", "variance")):
                if math.prod(s) != out[1]:
                    raise CheckError(f"{where}: {p} {s} does not have {out[1]} channels")
        elif op in ("pool_max", "pool_mean"):
            n, ch, h, w = ins[0]
            wh, ww, vp, hp, vs, hs = c
            oh, ow = (h + 2 * vp - wh) // vs + 1, (w + 2 * hp - ww) // hs + 1
            if oh <= 0 or ow <= 0 or min(vs, hs) <= 0:
                raise CheckError(f"{where}: input {ins[0]}, window/pads/strides {c}")
            if vp or hp:
                prog.warnings.append(f"{where}: pooling with padding {vp}x{hp}")
            out = (n, ch, oh, ow)
        else:  # pragma: no cover - OPS and this function go together
            raise CheckError(f"{where}: no shape rule")
        if out[0] != B:
            raise CheckError(f"{where}: batch dimension {out[0]} (expected {B})")
        sh[node.name] = tuple(out)
    if input_name is None:
        raise CheckError("the input batch feeds no node")
    prog.classes = math.prod(prog.out_shape[1:])
