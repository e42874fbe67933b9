#!/usr/bin/env python3
"""dnn_check.py - the HPVM release's ApproxHPVM DNN programs, compiled unchanged by hpvm-cc,
checked against the same networks run by onnxruntime.

Usage (normally through run.sh, which finds the build's Python):
  dnn_check.py RELEASE_ROOT [--build BUILD_DIR] [--only name,name] [--batches K]
               [--work DIR] [--bench ROUNDS] [--threads N] [--timeout S]
               [--reference-only] [--save-onnx] [--float64-check]

RELEASE_ROOT is the directory that holds hpvm/test/dnn_benchmarks (the release is never copied
into this repository). For each selected program <name> (its source is
RELEASE_ROOT/hpvm/test/dnn_benchmarks/hpvm-c/benchmarks/<name>/<name>.cpp):

 1. parse: the node functions (one __hpvm__tensor_* call each), root()'s graph (createNodeND,
    bindIn, edge, bindOut) and main()'s weight files, batch size and input shape. The programs
    are machine generated and very regular, so regular expressions suffice; anything that does
    not fit is reported as an error of that program, and the others go on.
 2. data: seeded weights, inputs and labels in the release's file format (raw little-endian
    float32 without a header; labels uint32) under WORK/params/<dir>/, reused on later runs
    when a stamp file says they were made by the same generator and their sizes match. The
    batchnorms' means and variances are not drawn but measured (calibrate(): those of each
    batchnorm's input on the first batch, by a NumPy forward pass), and the last layer of every
    residual branch is scaled down (residual_scales()), so that activations and logits stay
    O(1) like a trained network's and the softmax is not saturated.
 3. reference: the same network as an ONNX model (checked by onnx.checker and shape inference
    against our own shape propagation), run by onnxruntime on the same batches.
 4. compile: BUILD/bin/hpvm-cc -O3 -DMODEL_PARAMS_DIR=WORK/params SOURCE, unchanged.
 5. run: with HPVM_TENSOR_BATCHES=K (the runtime stops after K batches), HPVM_TENSOR_DUMP (it
    appends every batch's result tensor, raw float32) and HPVM_TENSOR_STATS=1 (one line
    "hpvm-tensor: batch <i>: <ms> ms" per batch on stderr).
 6. compare: max|hpvm - ref| / max|ref| <= 1e-4 and the same argmax for every image. With
    --float64-check, also the first batch by NumPy in float64 (numpy_forward(); slow) and how
    far onnxruntime and hpvm each are from it: which one is nearer when they disagree.
 7. with --bench R: R alternating rounds of (hpvm run, onnxruntime run), per-batch times
    without each run's first batch, as a Markdown table (also WORK/table.md).

--reference-only stops after step 3 (no compiler needed) and prints the output shapes (and,
with --float64-check, how far onnxruntime is from float64). The exit status is 1 when any
selected program fails a step, 2 for a bad command line.
"""

import argparse
import json
import math
import os
import re
import signal
import statistics
import subprocess
import sys
import time
import zlib
from dataclasses import dataclass, field

import numpy as np

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RELEASE_SUBDIR = os.path.join("hpvm", "test", "dnn_benchmarks", "hpvm-c", "benchmarks")
PROGRAMS = ["lenet_mnist", "alexnet_cifar10", "alexnet2_cifar10", "alexnet_imagenet",
            "vgg16_cifar10", "vgg16_cifar100", "vgg16_imagenet", "resnet18_cifar10",
            "resnet50_imagenet", "mobilenet_cifar10"]

TOLERANCE = 1e-4         # max |hpvm - ref| / max |ref|
GENERATOR_VERSION = 2    # bump when the data generation changes (invalidates reused files)
CALIBRATED = ("bn_mean", "bn_var")   # measured on the first input batch (calibrate())
STAMP_NAME = "dnn-check-stamp.json"
ONNX_OPSET = 17
ONNX_IR_VERSION = 8


class CheckError(Exception):
    """A failure of one program at one step; the message says what and where."""


# ----------------------------------------------------------------------------------------------
# Parsing
# ----------------------------------------------------------------------------------------------

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


def strip_comments(text):
    """The text with comments blanked out (newlines kept, so line numbers stay right)."""
    pat = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
    return pat.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)) if m.group(0)[0] == "/"
                   else m.group(0), text)


def line_of(text, pos):
    return text.count("\n", 0, pos) + 1


def functions(text):
    """{name: (params text, body text, body offset)} of every function definition."""
    out = {}
    for m in re.finditer(r"\b(?:void|int)\s+(\w+)\s*\(([^()]*)\)\s*\{", text):
        depth, i = 1, m.end()
        while depth and i < len(text):
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        if depth:
            raise CheckError(f"line {line_of(text, m.start())}: unbalanced braces in "
                             f"{m.group(1)}()")
        out[m.group(1)] = (m.group(2), text[m.end():i - 1], m.end())
    return out


def split_params(params):
    """[(type, name)] of a C parameter list."""
    out = []
    for p in params.split(","):
        p = " ".join(p.split())
        if not p or p == "void":
            continue
        m = re.fullmatch(r"(.*?)\s*\b(\w+)", p)
        if not m:
            raise CheckError(f"cannot read parameter '{p}'")
        out.append((m.group(1).replace(" ", ""), m.group(2)))
    return out


def split_args(args):
    return [" ".join(a.split()) for a in args.split(",")] if args.strip() else []


def parse_number(text, kind):
    t = text.strip()
    try:
        if kind == "i":
            return int(t, 0)
        return float(t.rstrip("fF"))
    except ValueError:
        what = "an integer" if kind == "i" else "a number"
        raise CheckError(f"'{t}' is not {what} constant")


def parse_node(name, params, body, offset, text):
    """The Node of one node function (its name, ports and constants; sources come later)."""
    plist = split_params(params)
    index = {pname: i for i, (_, pname) in enumerate(plist)}
    for call in re.finditer(r"__hpvm__(\w+)", body):
        c = call.group(1)
        if c not in NODE_CALLS_IGNORED and not c.startswith("tensor_"):
            raise CheckError(f"line {line_of(text, offset + call.start())}: {name}() calls "
                             f"__hpvm__{c}, which the check does not know")
    calls = list(re.finditer(r"__hpvm__tensor_(\w+)\s*\(([^()]*)\)", body))
    if len(calls) != 1:
        raise CheckError(f"line {line_of(text, offset)}: {name}() has {len(calls)} tensor "
                         "intrinsic calls (expected exactly one)")
    m = calls[0]
    line = line_of(text, offset + m.start())
    op, args = m.group(1), split_args(m.group(2))
    if op not in OPS:
        raise CheckError(f"line {line}: {name}() calls __hpvm__tensor_{op}, which the check "
                         "does not handle")
    ntensors, kinds = OPS[op]
    if len(args) != ntensors + len(kinds):
        raise CheckError(f"line {line}: __hpvm__tensor_{op} has {len(args)} operands, "
                         f"expected {ntensors + len(kinds)}")
    ports = []
    for a in args[:ntensors]:
        if a not in index or "*" not in plist[index[a]][0]:
            raise CheckError(f"line {line}: tensor operand '{a}' of __hpvm__tensor_{op} is not "
                             f"a pointer parameter of {name}()")
        i = index[a]
        # Every tensor parameter is followed by its size (size_t); both are ports.
        if i + 1 >= len(plist) or plist[i + 1][0] != "size_t":
            raise CheckError(f"line {line}: parameter '{a}' of {name}() is not followed by "
                             "its size_t parameter")
        ports.append(i)
    consts = [parse_number(a, k) for a, k in zip(args[ntensors:], kinds)]
    ret = re.search(r"__hpvm__return\s*\(\s*2\s*,\s*(\w+)", body)
    before = body[:m.start()]
    res = re.search(r"(\w+)\s*=\s*$", before)
    if not ret or not res or ret.group(1) != res.group(1):
        raise CheckError(f"line {line}: {name}() does not return its intrinsic's result "
                         "(expected __hpvm__return(2, r, ...) of 'r = __hpvm__tensor_...')")
    return Node(name="", func=name, op=op, ports=ports, consts=consts, line=line)


def parse_program(name, source):
    """The Program of one release source file; raises CheckError on anything unexpected."""
    with open(source, encoding="utf-8", errors="replace") as f:
        text = strip_comments(f.read())
    prog = Program(name=name, source=source)
    funcs = functions(text)
    for required in ("root", "main"):
        if required not in funcs:
            raise CheckError(f"no {required}() function found")

    # -- main(): data directory, weights, input, arguments --------------------------------------
    _, main, moff = funcs["main"]
    m = re.search(r'\bdir_prefix\s*=\s*std::string\s*\(\s*MODEL_PARAMS_DIR_STR\s*\)\s*\+\s*'
                  r'"([^"]*)"\s*;', main)
    if not m:
        raise CheckError("main(): no 'dir_prefix = std::string(MODEL_PARAMS_DIR_STR) + \"/DIR/\"'")
    prog.dir_name = m.group(1).strip("/")
    if not prog.dir_name or "/" in prog.dir_name or ".." in prog.dir_name:
        raise CheckError(f"main(): unexpected data directory '{m.group(1)}'")
    paths = {}
    for m in re.finditer(r'\bstd::string\s+(\w+)\s*=\s*dir_prefix\s*\+\s*'
                         r'std::string\s*\(\s*"([^"]+)"\s*\)\s*;', main):
        paths[m.group(1)] = m.group(2)
    wpat = re.compile(r"\bvoid\s*\*\s*(\w+)\s*=\s*readTrainedWeights\s*\(\s*(\w+)\s*\.\s*c_str"
                      r"\s*\(\s*\)" + r"\s*,\s*(\d+)" * 5 + r"\s*\)")
    spans = []
    for m in wpat.finditer(main):
        spans.append((m.start(), m.end()))
        wname, pvar, dtype = m.group(1), m.group(2), int(m.group(3))
        line = line_of(text, moff + m.start())
        if pvar not in paths:
            raise CheckError(f"line {line}: weight {wname} is read from '{pvar}', which is not "
                             "a 'dir_prefix + std::string(\"FILE\")' path")
        if dtype != 0:
            raise CheckError(f"line {line}: weight {wname} has data type {dtype} (only 0, "
                             "float32, is known)")
        if wname in prog.weights:
            raise CheckError(f"line {line}: weight {wname} is read twice")
        dims = tuple(int(m.group(i)) for i in range(4, 8))
        if min(dims) <= 0:
            raise CheckError(f"line {line}: weight {wname} has dimensions {dims}")
        prog.weights[wname] = Weight(wname, paths[pvar], dims, line)
    for m in re.finditer(r"\breadTrainedWeights\s*\(", main):
        if not any(a <= m.start() < b for a, b in spans):
            raise CheckError(f"line {line_of(text, moff + m.start())}: a readTrainedWeights "
                             "call of an unexpected form (expected 'void *NAME = "
                             "readTrainedWeights(NAME_path.c_str(), 0, d1, d2, d3, d4)')")
    if not prog.weights:
        raise CheckError("main(): no readTrainedWeights calls found")
    files = {}
    for w in prog.weights.values():
        if w.file in files:
            raise CheckError(f"weights {files[w.file]} and {w.name} read the same file {w.file}")
        files[w.file] = w.name
        if w.file in ("test_input.bin", "test_labels.bin") or "/" in w.file:
            raise CheckError(f"line {w.line}: weight {w.name} reads file '{w.file}'")

    ipat = re.compile(r"\bvoid\s*\*\s*(\w+)\s*=\s*readInputBatch\s*\(\s*(\w+)\s*\.\s*c_str\s*\("
                      r"\s*\)\s*,\s*nchw\s*,\s*(\w+)\s*,\s*(\w+)\s*,\s*(\d+)\s*,\s*(\d+)\s*,"
                      r"\s*(\d+)\s*\)")
    ins = list(ipat.finditer(main))
    if len(ins) != 1 or len(re.findall(r"\breadInputBatch\s*\(", main)) != 1:
        raise CheckError("main(): expected one 'void *X = readInputBatch(PATH.c_str(), nchw, "
                         "start, end, C, H, W)'")
    m = ins[0]
    input_var = m.group(1)
    if paths.get(m.group(2)) != "test_input.bin":
        raise CheckError(f"main(): the input is read from '{m.group(2)}', not a path to "
                         "test_input.bin")
    if (m.group(3), m.group(4)) != ("start", "end"):
        raise CheckError(f"main(): readInputBatch reads ({m.group(3)}, {m.group(4)}), "
                         "expected (start, end)")
    if not re.search(r"\bstart\s*=\s*i\s*\*\s*batch_size\s*,\s*end\s*=\s*start\s*\+\s*"
                     r"batch_size\b", main):
        raise CheckError("main(): batch i is not images [i*batch_size, (i+1)*batch_size)")
    prog.input_chw = tuple(int(m.group(i)) for i in (5, 6, 7))
    labels = [v for v, f in paths.items() if f == "test_labels.bin"]
    for m in re.finditer(r"\breadLabels\w*\s*\(\s*(\w+)\s*\.\s*c_str\s*\(\s*\)\s*,\s*(\d+)\s*\)",
                         main):
        if m.group(1) in labels:
            prog.labels_read = max(prog.labels_read, int(m.group(2)))
            prog.warnings.append(f"main() reads {m.group(2)} labels up front "
                                 f"(line {line_of(text, moff + m.start())})")

    for var in ("batch_size", "input_size"):
        found = re.findall(r"\b(?:const\s+)?int\b[^;]*?\b" + var + r"\s*=\s*(\d+)", text)
        if len(found) != 1:
            raise CheckError(f"expected one 'int {var} = N' definition, found {len(found)}")
        setattr(prog, var, int(found[0]))
    if prog.batch_size <= 0 or prog.input_size < prog.batch_size:
        raise CheckError(f"batch_size {prog.batch_size}, input_size {prog.input_size}")

    args = {}
    for m in re.finditer(r"\bargs\s*->\s*(\w+)\s*=\s*([^;]+);", main):
        args[m.group(1)] = " ".join(m.group(2).split())

    # -- root(): parameters, nodes, edges ---------------------------------------------------------
    rparams, rbody, roff = funcs["root"]
    rplist = split_params(rparams)
    bound = {}  # root parameter index -> ("input"|"weight", name)
    for i, (ptype, pname) in enumerate(rplist):
        if "*" not in ptype:
            continue
        if i + 1 >= len(rplist) or rplist[i + 1][0] != "size_t":
            raise CheckError(f"root(): parameter '{pname}' is not followed by its size_t")
        val = args.get(pname)
        if val is None:
            raise CheckError(f"main(): root's parameter '{pname}' is never set (args->{pname})")
        if val == input_var:
            bound[i] = ("input", pname)
        elif val in prog.weights:
            bound[i] = ("weight", val)
        else:
            raise CheckError(f"main(): args->{pname} = {val}, which is neither the input batch "
                             "nor a weight")
    if sum(1 for k, _ in bound.values() if k == "input") != 1:
        raise CheckError("root(): expected exactly one parameter bound to the input batch")

    for call in re.finditer(r"__hpvm__(\w+)\s*\(([^()]*)\)", rbody):
        c, line = call.group(1), line_of(text, roff + call.start())
        if c not in ROOT_CALLS_IGNORED | {"createNodeND", "bindIn", "edge", "bindOut"}:
            raise CheckError(f"line {line}: root() calls __hpvm__{c}, which the check does "
                             "not know")
    nodes, binds, edges, outs = {}, [], [], []
    for m in re.finditer(r"\bvoid\s*\*\s*(\w+)\s*=\s*__hpvm__createNodeND\s*\(\s*(\d+)\s*,"
                         r"\s*(\w+)\s*\)", rbody):
        var, ndims, fn = m.group(1), int(m.group(2)), m.group(3)
        line = line_of(text, roff + m.start())
        if ndims != 0:
            raise CheckError(f"line {line}: node {var} has {ndims} dimensions (expected 0)")
        if fn not in funcs:
            raise CheckError(f"line {line}: node {var} runs {fn}, which is not defined")
        if var in nodes:
            raise CheckError(f"line {line}: node {var} is created twice")
        try:
            node = parse_node(fn, *funcs[fn], text)
        except CheckError as e:
            raise CheckError(f"node {var}: {e}")
        node.name = var
        nodes[var] = node
    if len(nodes) != len(re.findall(r"__hpvm__createNodeND\s*\(", rbody)):
        raise CheckError("root(): a __hpvm__createNodeND call of an unexpected form")

    def ints(call, kind, n):
        args_ = split_args(call.group(1))
        line = line_of(text, roff + call.start())
        if len(args_) != n:
            raise CheckError(f"line {line}: __hpvm__{kind} has {len(args_)} operands")
        for a in args_[:2 if kind == "edge" else 1]:
            if a not in nodes:
                raise CheckError(f"line {line}: __hpvm__{kind} names '{a}', not a node")
        return args_, [parse_number(a, "i") for a in args_[(2 if kind == "edge" else 1):]], line

    for call in re.finditer(r"__hpvm__bindIn\s*\(([^()]*)\)", rbody):
        a, (rport, nport, stream), line = ints(call, "bindIn", 4)
        if stream != 0:
            raise CheckError(f"line {line}: streaming bindIn")
        binds.append((a[0], rport, nport, line))
    for call in re.finditer(r"__hpvm__edge\s*\(([^()]*)\)", rbody):
        a, (repl, sport, dport, stream), line = ints(call, "edge", 6)
        if repl != 1 or stream != 0:
            raise CheckError(f"line {line}: edge of type {repl}, streaming {stream} "
                             "(expected type 1, all-to-all, and streaming 0)")
        edges.append((a[0], a[1], sport, dport, line))
    for call in re.finditer(r"__hpvm__bindOut\s*\(([^()]*)\)", rbody):
        a, (nport, rport, stream), line = ints(call, "bindOut", 4)
        outs.append((a[0], nport, rport, line))

    # Each tensor operand's source: exactly one bindIn or edge into its port.
    for node in nodes.values():
        for port in node.ports:
            srcs = []
            for var, rport, nport, line in binds:
                if var == node.name and nport == port:
                    if rport not in bound:
                        raise CheckError(f"line {line}: bindIn of root port {rport}, which is "
                                         "not a tensor parameter of root()")
                    srcs.append(bound[rport])
            for src, dst, sport, dport, line in edges:
                if dst == node.name and dport == port:
                    if sport != 0:
                        raise CheckError(f"line {line}: edge from output {sport} of {src} into "
                                         f"tensor port {port} of {dst} (expected output 0)")
                    srcs.append(("node", src))
            if len(srcs) != 1:
                raise CheckError(f"node {node.name} ({node.op}): input port {port} has "
                                 f"{len(srcs)} sources (expected 1)")
            node.sources.append(srcs[0])
        # The size ports should come along with their tensors (a warning only: unused here).
        for port, src in zip(node.ports, node.sources):
            if src[0] == "node" and not any(s == src[1] and d == node.name and sp == 1 and
                                            dp == port + 1 for s, d, sp, dp, _ in edges):
                prog.warnings.append(f"{node.name}: port {port + 1} (size) is not fed by "
                                     f"{src[1]}'s output 1")

    res = [o for o in outs if o[2] == 0]
    if len(res) != 1 or res[0][1] != 0:
        raise CheckError("root(): expected one '__hpvm__bindOut(var, 0, 0, 0)' (the result)")
    prog.result = res[0][0]

    # Topological order (creation order among the ready ones); cycles are errors.
    order, done, pending = [], set(), list(nodes)
    while pending:
        ready = [v for v in pending
                 if all(k != "node" or s in done for k, s in nodes[v].sources)]
        if not ready:
            raise CheckError("root(): the graph has a cycle or unknown sources among "
                             f"{pending[:5]}")
        order.append(ready[0])
        done.add(ready[0])
        pending.remove(ready[0])
    # Only the nodes the result depends on matter; others would be dead code.
    needed, stack = set(), [prog.result]
    while stack:
        v = stack.pop()
        if v not in needed:
            needed.add(v)
            stack += [s for k, s in nodes[v].sources if k == "node"]
    dead = [v for v in order if v not in needed]
    if dead:
        prog.warnings.append(f"nodes not feeding the result: {', '.join(dead)}")
    prog.nodes = [nodes[v] for v in order if v in needed]
    assign_roles(prog)
    propagate_shapes(prog)
    return prog


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


# ----------------------------------------------------------------------------------------------
# Data in the release's format
# ----------------------------------------------------------------------------------------------

def file_seed(prog, file):
    """A fixed seed per program and file (independent of the order files are written in)."""
    return zlib.crc32(f"dnn-check/{prog.name}/{file}".encode())


def weight_values(w, rng):
    """The float32 values of a weight by its role (scales that keep deep nets' activations sane).
    Batchnorm means and variances are not drawn: calibrate() measures them."""
    n = w.count
    if w.role == "filter":       # F x C x KH x KW: He normal
        return rng.standard_normal(n, dtype=np.float32) * np.float32(
            math.sqrt(2.0 / (w.dims[1] * w.dims[2] * w.dims[3])))
    if w.role == "dense":        # 1 x 1 x K x M: He normal, fan-in K
        return rng.standard_normal(n, dtype=np.float32) * np.float32(math.sqrt(2.0 / w.dims[2]))
    if w.role == "bn_gamma":
        return rng.uniform(0.5, 1.5, n).astype(np.float32)
    if w.role == "bn_beta":
        return rng.standard_normal(n, dtype=np.float32) * np.float32(0.1)
    if w.role in CALIBRATED:  # pragma: no cover - write_data does not ask
        raise CheckError(f"internal: {w.name} ({w.role}) is calibrated, not drawn")
    return rng.standard_normal(n, dtype=np.float32) * np.float32(0.01)   # bias, unused


def residual_scales(prog):
    """{weight name: factor} for the last layer of every residual branch.

    A residual add is an add of two nodes; its branch is the operand farther from the input
    (the longest path; a projection shortcut is one convolution, the branch two or three). The
    branch's last layer is scaled by 1/sqrt(number of residual adds): its last batchnorm's gamma
    and beta when it has one (a calibrated batchnorm undoes any scaling of the convolution before
    it), else its last convolution's filter and bias. Then the variance of the sum grows by a
    factor of about (1 + 1/n) per block, at most e-fold in all, like the small or zero last
    gamma of trained resnets' initializations.

    Without it, He initialization keeps the branch's variance that of its input, so without
    batchnorm every block doubles the variance (resnet18: 9 blocks, logits of +-25, a saturated
    softmax), and with calibrated batchnorms each branch amplifies small errors about 1.1-fold
    per layer (a batchnorm scales by 1/std of its input, a ReLU's output has a large mean):
    resnet50's float32 results would be 4e-5 from float64, too near the check's tolerance."""
    nodes = {n.name: n for n in prog.nodes}
    depth = {}
    for n in prog.nodes:
        depth[n.name] = 1 + max([depth[s] for k, s in n.sources if k == "node"], default=0)
    adds = [n for n in prog.nodes if n.op == "add" and all(k == "node" for k, _ in n.sources)]
    scales = {}
    for add in adds:
        (_, a), (_, b) = add.sources
        node = nodes[a if depth[a] >= depth[b] else b]
        names = []
        while True:
            wsrc = [s for k, s in node.sources if k == "weight"]
            nsrc = [s for k, s in node.sources if k == "node"]
            if node.op == "batchnorm" and all(k == "weight" for k, _ in node.sources[1:]):
                names = [node.sources[1][1], node.sources[2][1]]   # gamma, beta
                break
            if node.op == "add" and len(wsrc) == 1 and len(nsrc) == 1:
                names.append(wsrc[0])                              # a bias: scale, go on
                node = nodes[nsrc[0]]
                continue
            if node.op in ("convolution", "group_convolution") and node.sources[1][0] == "weight":
                names.append(node.sources[1][1])
            else:
                names = []   # anything else ends the branch: leave it alone
            break
        for name in names:
            if name in scales:
                raise CheckError(f"weight {name} ends more than one residual branch")
            scales[name] = 1 / math.sqrt(len(adds))
    return scales


def calibrate(prog, data_dir, input_path):
    """Each batchnorm's mean and variance: those of its input (per channel, over the batch and
    the pixels) on the first input batch, the network before it already calibrated, as
    data-dependent initialization would set them. A float32 NumPy forward pass; -> {weight
    name: float32 values}."""
    stats = {}

    def on_batchnorm(node, x):
        m = x.mean(axis=(0, 2, 3), dtype=np.float64)
        v = x.var(axis=(0, 2, 3), dtype=np.float64)
        names = [node.sources[3][1], node.sources[4][1]]
        for name in names:
            if name in stats:
                raise CheckError(f"weight {name} is the mean or variance of more than one "
                                 "batchnorm; it cannot be calibrated")
        stats[names[0]], stats[names[1]] = m.astype("<f4"), v.astype("<f4")
        return stats[names[0]], stats[names[1]]
    numpy_forward(prog, input_batch(prog, input_path, 0), np.float32,
                  file_weights(prog, data_dir), on_batchnorm)
    return stats


class DataDir:
    """WORK/params/<dir>: the files and a stamp (generator version, seed, size of each file)."""

    def __init__(self, root, prog):
        self.dir = os.path.join(root, prog.dir_name)
        os.makedirs(self.dir, exist_ok=True)
        self.stamp_path = os.path.join(self.dir, STAMP_NAME)
        try:
            with open(self.stamp_path) as f:
                self.stamp = json.load(f)
        except (OSError, ValueError):
            self.stamp = {}
        self.made = self.reused = 0

    def _want(self, seed, nbytes, extra):
        return {"version": GENERATOR_VERSION, "seed": seed, "bytes": nbytes, **(extra or {})}

    def current(self, file, seed, nbytes, extra=None):
        """Whether FILE is there as the stamp says it was made, made the way asked."""
        path = os.path.join(self.dir, file)
        return (self.stamp.get(file) == self._want(seed, nbytes, extra) and os.path.isfile(path)
                and os.path.getsize(path) == nbytes)

    def ensure(self, file, seed, nbytes, make, extra=None, force=False):
        """Writes FILE from make() unless (not force and) the stamp says it is already there as
        asked."""
        path = os.path.join(self.dir, file)
        if not force and self.current(file, seed, nbytes, extra):
            self.reused += 1
            return path
        tmp = path + ".tmp"
        arr = make()
        if arr.nbytes != nbytes:
            raise CheckError(f"internal: {file} would have {arr.nbytes} bytes, not {nbytes}")
        arr.tofile(tmp)
        os.replace(tmp, path)
        self.stamp[file] = self._want(seed, nbytes, extra)
        with open(self.stamp_path + ".tmp", "w") as f:
            json.dump(self.stamp, f, indent=1, sort_keys=True)
        os.replace(self.stamp_path + ".tmp", self.stamp_path)
        self.made += 1
        return path


def write_data(prog, params_root, batches):
    """Weights, K batches of inputs, the labels, then the calibrated batchnorm statistics;
    returns (input path, DataDir, seconds of calibration or None when reused)."""
    d = DataDir(params_root, prog)
    scales = residual_scales(prog)
    drawn = [w for w in prog.weights.values() if w.role not in CALIBRATED]
    measured = [w for w in prog.weights.values() if w.role in CALIBRATED]
    for w in drawn:
        seed, s = file_seed(prog, w.file), scales.get(w.name, 1.0)
        extra = {"role": w.role, **({"scale": s} if s != 1.0 else {})}
        d.ensure(w.file, seed, 4 * w.count,
                 lambda w=w, seed=seed, s=s: (weight_values(w, np.random.default_rng(seed)) *
                                              np.float32(s)).astype("<f4"), extra)
    weights_made = d.made
    B, (C, H, W) = prog.batch_size, prog.input_chw
    seed = file_seed(prog, "test_input.bin")

    def make_input():
        # Batch i from its own generator, so the first batches do not depend on K.
        return np.concatenate([np.random.default_rng([seed, i]).random(B * C * H * W,
                                                                       dtype=np.float32)
                               for i in range(batches)]).astype("<f4")
    input_path = d.ensure("test_input.bin", seed, 4 * batches * B * C * H * W, make_input)
    nlabels = max(prog.input_size, prog.labels_read)
    seed = file_seed(prog, "test_labels.bin")
    d.ensure("test_labels.bin", seed, 4 * nlabels,
             lambda: np.random.default_rng(seed).integers(0, prog.classes, nlabels,
                                                         dtype=np.uint32).astype("<u4"),
             {"classes": prog.classes})
    # The statistics depend on every weight before them and on the first input batch (which
    # depends only on its seed): measured again when a weight was written or a file is stale.
    ask = {w.name: (w.file, file_seed(prog, w.file), 4 * w.count,
                    {"role": w.role, "calibrated": "first input batch"}) for w in measured}
    secs = None
    if measured and (weights_made or not all(d.current(*a) for a in ask.values())):
        t0 = time.monotonic()
        stats = calibrate(prog, d.dir, input_path)
        secs = time.monotonic() - t0
        for w in measured:
            if w.name not in stats:
                raise CheckError(f"weight {w.name} ({w.role}) was not calibrated (it feeds no "
                                 "batchnorm the result depends on)")
            d.ensure(*ask[w.name][:3], lambda a=stats[w.name]: a, ask[w.name][3], force=True)
    else:
        d.reused += len(measured)
    return input_path, d, secs


def input_batch(prog, path, i):
    B, (C, H, W) = prog.batch_size, prog.input_chw
    n = B * C * H * W
    return np.fromfile(path, dtype="<f4", count=n, offset=4 * n * i).reshape(B, C, H, W)


# ----------------------------------------------------------------------------------------------
# The network in NumPy (batchnorm calibration in float32, the --float64-check reference)
# ----------------------------------------------------------------------------------------------

PATCH_BYTES = 256 << 20   # the im2col matrix of one chunk of images stays under this


def np_conv(x, w, pads, strides, groups):
    """Cross-correlation of x (N, C, H, W) with w (F, C/groups, KH, KW) by im2col and matmul,
    in x's dtype (images in chunks, so the patch matrices stay small)."""
    from numpy.lib.stride_tricks import sliding_window_view
    N, C, H, W = x.shape
    F, Cg, KH, KW = w.shape
    (vp, hp), (vs, hs), G = pads, strides, groups
    if vp or hp:
        x = np.pad(x, ((0, 0), (0, 0), (vp, vp), (hp, hp)))
    OH, OW = (H + 2 * vp - KH) // vs + 1, (W + 2 * hp - KW) // hs + 1
    K, Fg = Cg * KH * KW, F // G
    wg = w.reshape(G, Fg, K)
    out = np.empty((N, F, OH, OW), x.dtype)
    step = max(1, PATCH_BYTES // (C * KH * KW * OH * OW * x.itemsize))
    for n0 in range(0, N, step):
        xs = x[n0:n0 + step]
        n = xs.shape[0]
        win = sliding_window_view(xs, (KH, KW), axis=(2, 3))[:, :, ::vs, ::hs][:, :, :OH, :OW]
        # (n, C, OH, OW, KH, KW) -> (n, G, OH*OW, Cg*KH*KW)
        pat = win.reshape(n, G, Cg, OH, OW, KH, KW).transpose(0, 1, 3, 4, 2, 5, 6).reshape(
            n, G, OH * OW, K)
        if G == 1:
            y = (pat.reshape(n * OH * OW, K) @ wg[0].T).reshape(n, 1, OH * OW, F)
        elif Fg == 1:   # depthwise
            y = np.einsum("ngpk,gk->ngp", pat, wg[:, 0, :])[..., None]
        else:
            y = np.einsum("ngpk,gfk->ngpf", pat, wg)
        out[n0:n0 + n] = y.transpose(0, 1, 3, 2).reshape(n, F, OH, OW)
    return out


def np_pool(x, op, c):
    from numpy.lib.stride_tricks import sliding_window_view
    wh, ww, vp, hp, vs, hs = c
    if vp or hp:  # max pooling ignores the padding, mean pooling counts it (as zeros)
        x = np.pad(x, ((0, 0), (0, 0), (vp, vp), (hp, hp)),
                   constant_values=-np.inf if op == "pool_max" else 0)
    win = sliding_window_view(x, (wh, ww), axis=(2, 3))[:, :, ::vs, ::hs]
    return win.max(axis=(4, 5)) if op == "pool_max" else win.mean(axis=(4, 5))


def numpy_forward(prog, x, dtype, weight, on_batchnorm=None, on_node=None):
    """The network on one batch x, every operation in dtype; weight(name) -> the values of a
    weight (as in its file). on_batchnorm(node, input) may supply a batchnorm's (mean, variance)
    instead of its files; on_node(node, output) sees every node's output. Returns (result,
    logits: the softmax's input or None)."""
    last_use = {}
    for i, node in enumerate(prog.nodes):
        for k, s in node.sources:
            if k == "node":
                last_use[s] = i
    vals, logits = {}, None
    for i, node in enumerate(prog.nodes):
        op, c = node.op, node.consts

        def arg(j, shape=None):
            k, s = node.sources[j]
            if k == "input":
                return x.astype(dtype, copy=False)
            if k == "node":
                return vals[s]
            a = np.asarray(weight(s)).astype(dtype, copy=False)
            return a.reshape(shape or prog.weights[s].dims)
        if op in ("convolution", "group_convolution"):
            y = np_conv(arg(0), arg(1), c[0:2], c[2:4], c[5] if op == "group_convolution" else 1)
        elif op == "add":
            y = arg(0) + arg(1)
        elif op == "mul":
            a, d = arg(0), prog.weights[node.sources[1][1]].dims
            y = (a.reshape(a.shape[0], -1) @ arg(1, (d[2], d[3]))).reshape(a.shape[0], d[3], 1, 1)
        elif op == "relu":
            y = np.maximum(arg(0), 0)
        elif op == "tanh":
            y = np.tanh(arg(0))
        elif op == "clipped_relu":
            y = np.clip(arg(0), 0, 6)
        elif op == "softmax":
            a = arg(0)
            logits = a.reshape(a.shape[0], -1)
            e = np.exp(a - a.max(axis=1, keepdims=True))
            y = e / e.sum(axis=1, keepdims=True)
        elif op == "batchnorm":
            a = arg(0)
            ch = (1, a.shape[1], 1, 1)
            given = on_batchnorm(node, a) if on_batchnorm else None
            if given is not None:
                mean, var = (np.asarray(v).astype(dtype).reshape(ch) for v in given)
            else:
                mean, var = arg(3, ch), arg(4, ch)
            y = (a - mean) / np.sqrt(var + dtype(c[0])) * arg(1, ch) + arg(2, ch)
        elif op in ("pool_max", "pool_mean"):
            y = np_pool(arg(0), op, c)
        else:  # pragma: no cover - OPS and this function go together
            raise CheckError(f"node {node.name}: no NumPy rule for {op}")
        if y.shape != prog.shapes[node.name] or y.dtype != dtype:
            raise CheckError(f"internal: NumPy gives node {node.name} ({op}) {y.dtype} "
                             f"{y.shape}, expected {prog.shapes[node.name]}")
        vals[node.name] = y
        if on_node:
            on_node(node, y)
        for k, s in node.sources:
            if k == "node" and last_use[s] == i:
                vals.pop(s, None)
    res = vals[prog.result]
    return res.reshape(res.shape[0], -1), logits


def file_weights(prog, data_dir):
    """weight(name) for numpy_forward: the float32 values of the weight's file."""
    def weight(name):
        w = prog.weights[name]
        arr = np.fromfile(os.path.join(data_dir, w.file), dtype="<f4")
        if arr.size != w.count:
            raise CheckError(f"{w.file} has {arr.size} floats, expected {w.count}")
        return arr
    return weight


# ----------------------------------------------------------------------------------------------
# The ONNX reference
# ----------------------------------------------------------------------------------------------

def build_onnx(prog, data_dir):
    """The network as an ONNX model, initializers from the .bin files; checked by onnx."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    inits, onodes, made = [], [], set()

    def init(name, arr):
        if name not in made:
            made.add(name)
            inits.append(numpy_helper.from_array(np.ascontiguousarray(arr), name))
        return name

    def weight(name, shape):
        w = prog.weights[name]
        key = f"{name}__{'x'.join(map(str, shape))}"
        if key in made:
            return key
        arr = np.fromfile(os.path.join(data_dir, w.file), dtype="<f4")
        if arr.size != w.count:
            raise CheckError(f"{w.file} has {arr.size} floats, expected {w.count}")
        return init(key, arr.astype(np.float32).reshape(shape))

    for node in prog.nodes:
        op, c, out = node.op, node.consts, node.name
        a = [("input" if k == "input" else s) for k, s in node.sources]
        if op in ("convolution", "group_convolution"):
            # The release lowers both to cross-correlation whatever conv_mode says.
            f = prog.weights[a[1]].dims
            onodes.append(helper.make_node(
                "Conv", [a[0], weight(a[1], f)], [out], name=out, kernel_shape=[f[2], f[3]],
                pads=[c[0], c[1], c[0], c[1]], strides=[c[2], c[3]], dilations=[1, 1],
                group=c[5] if op == "group_convolution" else 1))
        elif op == "add":
            b = [weight(x, prog.weights[x].dims) if k == "weight" else x
                 for (k, _), x in zip(node.sources, a)]
            onodes.append(helper.make_node("Add", b, [out], name=out))
        elif op == "mul":
            d = prog.weights[a[1]].dims
            onodes += [
                helper.make_node("Flatten", [a[0]], [out + "_flat"], name=out + "_flat", axis=1),
                helper.make_node("MatMul", [out + "_flat", weight(a[1], (d[2], d[3]))],
                                 [out + "_mm"], name=out + "_mm"),
                helper.make_node("Reshape", [out + "_mm", init(f"shape_{d[3]}", np.array(
                    [prog.batch_size, d[3], 1, 1], dtype=np.int64))], [out], name=out)]
        elif op in ("relu", "tanh"):
            onodes.append(helper.make_node(op.capitalize(), a, [out], name=out))
        elif op == "clipped_relu":
            onodes.append(helper.make_node(
                "Clip", [a[0], init("clip_lo", np.array(0, np.float32)),
                         init("clip_hi", np.array(6, np.float32))], [out], name=out))
        elif op == "softmax":
            onodes.append(helper.make_node("Softmax", a, [out], name=out, axis=1))
        elif op == "batchnorm":
            ch = prog.shapes[out][1]
            onodes.append(helper.make_node(
                "BatchNormalization", [a[0]] + [weight(x, (ch,)) for x in a[1:]], [out],
                name=out, epsilon=float(c[0])))
        elif op in ("pool_max", "pool_mean"):
            attrs = dict(kernel_shape=[c[0], c[1]], pads=[c[2], c[3], c[2], c[3]],
                         strides=[c[4], c[5]])
            if op == "pool_mean":
                attrs["count_include_pad"] = 1
            onodes.append(helper.make_node("MaxPool" if op == "pool_max" else "AveragePool",
                                           a, [out], name=out, **attrs))
    B = prog.batch_size
    onodes.append(helper.make_node("Reshape", [prog.result, init("shape_out", np.array(
        [B, prog.classes], dtype=np.int64))], ["output"], name="output"))
    outputs = [helper.make_tensor_value_info("output", TensorProto.FLOAT, [B, prog.classes])]
    last = next(n for n in prog.nodes if n.name == prog.result)
    if last.op == "softmax" and last.sources[0][0] == "node":
        # The softmax's input too (output_stats: how saturated the softmax is).
        onodes.append(helper.make_node("Reshape", [last.sources[0][1], "shape_out"], ["logits"],
                                       name="logits"))
        outputs.append(helper.make_tensor_value_info("logits", TensorProto.FLOAT,
                                                     [B, prog.classes]))
    graph = helper.make_graph(
        onodes, prog.name,
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [B, *prog.input_chw])],
        outputs, inits)
    model = helper.make_model(graph, producer_name="hpvm dnn-check",
                              opset_imports=[helper.make_opsetid("", ONNX_OPSET)])
    model.ir_version = ONNX_IR_VERSION
    try:
        onnx.checker.check_model(model)
        inferred = onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
    except Exception as e:  # onnx raises several exception types
        raise CheckError(f"the ONNX model of the parsed network is not valid: {e}")
    # Our shape propagation (the parse) and ONNX's shape inference must agree on every node.
    onnx_shapes = {vi.name: tuple(d.dim_value for d in vi.type.tensor_type.shape.dim)
                   for vi in list(inferred.graph.value_info) + list(inferred.graph.output)}
    for node in prog.nodes:
        if onnx_shapes.get(node.name) != prog.shapes[node.name]:
            raise CheckError(f"node {node.name} ({node.op}): shape {prog.shapes[node.name]} by "
                             f"the parse, {onnx_shapes.get(node.name)} by ONNX shape inference")
    return model


class Reference:
    """An onnxruntime session of the model; run(i) -> (output of batch i, seconds)."""

    def __init__(self, prog, model, input_path, threads):
        import onnxruntime as ort
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        so.log_severity_level = 3
        self.session = ort.InferenceSession(model.SerializeToString(), so,
                                            providers=["CPUExecutionProvider"])
        self.prog, self.input_path = prog, input_path
        self.names = [o.name for o in self.session.get_outputs()]
        self.logits = {}   # batch -> the softmax's input, when the model gives it

    def run(self, i):
        x = input_batch(self.prog, self.input_path, i)
        t0 = time.perf_counter()
        ys = self.session.run(self.names, {"input": x})
        secs = time.perf_counter() - t0
        if len(ys) > 1:
            self.logits[i] = ys[1]
        return ys[0], secs


# ----------------------------------------------------------------------------------------------
# Compiling and running
# ----------------------------------------------------------------------------------------------

def run_cmd(cmd, log_out, log_err, env=None, timeout=None, cwd=None):
    """Runs cmd (its own process group, killed as a whole on timeout); returns (rc, seconds)."""
    t0 = time.monotonic()
    with open(log_out, "wb") as out, open(log_err, "wb") as err:
        p = subprocess.Popen(cmd, stdout=out, stderr=err, env=env, cwd=cwd,
                             start_new_session=True)
        try:
            rc = p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
            rc = None
    return rc, time.monotonic() - t0


def first_error(path):
    """The first line of a log that looks like an error, for the summary table."""
    try:
        with open(path, errors="replace") as f:
            for ln in f:
                if re.search(r"\berror\b|\bfatal\b|Assertion|Aborted|Segmentation", ln, re.I):
                    return ln.strip()[:200]
    except OSError:
        pass
    return ""


def tail(path, n=20):
    try:
        with open(path, errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return ""
    return "\n".join("      | " + ln for ln in lines[-n:])


def compile_program(prog, args, work):
    """hpvm-cc -O3 -DMODEL_PARAMS_DIR=WORK/params SOURCE -o WORK/bin/<name>; -> (secs, peak MB)."""
    exe = os.path.join(work, "bin", prog.name)
    if os.path.exists(exe):
        os.remove(exe)
    log = os.path.join(work, "logs", prog.name + ".compile.log")
    timefile = os.path.join(work, "logs", prog.name + ".compile.time")
    cmd = [args.hpvm_cc, "-O3", f"--target={args.target}",
           "-DMODEL_PARAMS_DIR=" + os.path.join(work, "params"), prog.source, "-o", exe]
    timev = "/usr/bin/time" if os.access("/usr/bin/time", os.X_OK) else None
    full = ([timev, "-v", "-o", timefile] + cmd) if timev else cmd
    rc, secs = run_cmd(full, log, log, timeout=args.timeout)
    if rc is None:
        raise CheckError(f"hpvm-cc ran past {args.timeout} s; log {log}:\n{tail(log)}")
    if rc != 0 or not os.path.isfile(exe):
        what = f"exit status {rc}" if rc else f"no {exe}"
        raise CheckError(f"hpvm-cc failed ({what}): {first_error(log) or 'see the log'}\n"
                         f"      log {log}:\n{tail(log)}")
    peak = None
    if timev:
        with open(timefile, errors="replace") as f:
            m = re.search(r"Maximum resident set size \(kbytes\):\s*(\d+)", f.read())
        peak = int(m.group(1)) / 1024 if m else None
    return exe, secs, peak


STATS_RE = re.compile(r"hpvm-tensor: batch (\d+): ([0-9.eE+-]+) ms")


def run_program(prog, exe, args, work, dump):
    """One run of the compiled program over K batches; -> per-batch ms from the stats lines."""
    env = dict(os.environ, HPVM_TENSOR_BATCHES=str(args.batches), HPVM_TENSOR_STATS="1",
               OMP_NUM_THREADS=str(args.threads), HPVM_NUM_THREADS=str(args.threads))
    env.pop("HPVM_TENSOR_DUMP", None)
    if args.target != "cpu":
        env["HPVM_TRACE"] = "1"  # where each node ran (placement())
    if dump:
        if os.path.exists(dump):
            os.remove(dump)  # the runtime appends
        env["HPVM_TENSOR_DUMP"] = dump
    out = os.path.join(work, "logs", prog.name + ".run.out")
    err = os.path.join(work, "logs", prog.name + ".run.err")
    rc, secs = run_cmd([exe], out, err, env=env, timeout=args.timeout, cwd=work)
    if rc is None:
        raise CheckError(f"the program ran past {args.timeout} s; stderr {err}:\n{tail(err)}")
    if rc != 0:
        what = f"signal {-rc}" if rc < 0 else f"exit status {rc}"
        msg = f"the program failed ({what})"
        hint = first_error(err) or first_error(out)
        msg += f": {hint}" if hint else ""
        msg += f"\n      stderr {err}:\n{tail(err, 12)}"
        if os.path.getsize(out):
            msg += f"\n      stdout {out}:\n{tail(out, 8)}"
        raise CheckError(msg)
    with open(err, errors="replace") as f:
        stats = {int(i): float(ms) for i, ms in STATS_RE.findall(f.read())}
    times = [stats.get(i) for i in range(args.batches)]
    return times, secs


TRACE_RE = re.compile(r"^hpvm-trace: (\S+) on (\w+)", re.M)


def placement(prog, work):
    """Where the last run's nodes ran (HPVM_TRACE): 'N of M node runs on DEVICE'."""
    with open(os.path.join(work, "logs", prog.name + ".run.err"), errors="replace") as f:
        runs = TRACE_RE.findall(f.read())
    devices = sorted({device for _, device in runs if device != "cpu"})
    on_device = sum(1 for _, device in runs if device != "cpu")
    where = ", ".join(devices) or "a device"
    cpu = sorted({node for node, device in runs if device == "cpu"})
    text = f"{on_device} of {len(runs)} node runs on {where}"
    return text + (f" (on the CPU: {', '.join(cpu[:6])})" if cpu else "")


def compare(prog, hpvm, ref):
    """-> (ok, message): max |h - r| / max |r| and the argmax of each image."""
    if hpvm.size != ref.size:
        return False, (f"the dump has {hpvm.size} floats, expected {ref.size} "
                       f"({ref.shape[0]} images x {prog.classes} classes)")
    hpvm = hpvm.reshape(ref.shape)
    if not np.isfinite(hpvm).all():
        bad = np.argwhere(~np.isfinite(hpvm))[0]
        return False, (f"non-finite values in the hpvm result (first at image {bad[0]}, "
                       f"class {bad[1]})")
    scale = float(np.abs(ref).max())
    diff = np.abs(hpvm.astype(np.float64) - ref.astype(np.float64))
    rel = float(diff.max()) / scale if scale > 0 else float(diff.max())
    worst = np.unravel_index(int(diff.argmax()), diff.shape)
    ah, ar = hpvm.argmax(axis=1), ref.argmax(axis=1)
    same = int((ah == ar).sum())
    n = ref.shape[0]
    msg = (f"rel err {rel:.2e} (ref max abs {scale:.3g}; worst: image {worst[0]} class {worst[1]}, "
           f"hpvm {hpvm[worst]:.6g} ref {ref[worst]:.6g}), argmax {same}/{n} equal")
    if same != n:
        bad = np.flatnonzero(ah != ar)
        i = int(bad[0])
        # How far the reference prefers its class over hpvm's: a gap under the tolerance is a
        # tie at the check's precision (still a failure, but said so).
        gaps = ref[bad, ar[bad]] - ref[bad, ah[bad]]
        ties = int((gaps <= TOLERANCE * scale).sum())
        msg += (f" (first differs: image {i}, hpvm class {ah[i]}, ref class {ar[i]}, ref prefers "
                f"its class by {gaps[0]:.3g}; {ties} of the {len(bad)} differing images are "
                "ties within the tolerance)")
    return rel <= TOLERANCE and same == n, msg


def float64_check(prog, data_dir, input_path, ref, hpvm):
    """The first batch in float64 (NumPy, from the same float32 files): how far onnxruntime and
    hpvm (when given) each are from it, by the same measure as compare()."""
    t0 = time.monotonic()
    x = input_batch(prog, input_path, 0).astype(np.float64)
    exact, _ = numpy_forward(prog, x, np.float64, file_weights(prog, data_dir))
    secs = time.monotonic() - t0
    B = prog.batch_size
    scale = float(np.abs(exact).max())
    parts = []
    for what, y in (("onnxruntime", ref), ("hpvm", hpvm)):
        if y is None:
            continue
        if y.size < exact.size or y.size % exact.shape[1]:
            parts.append(f"{what}: no first batch of {exact.shape[1]} classes")
            continue
        y = y.reshape(-1, exact.shape[1])[:B].astype(np.float64)
        rel = float(np.abs(y - exact).max()) / scale if scale > 0 else float("nan")
        same = int((y.argmax(axis=1) == exact.argmax(axis=1)).sum())
        parts.append(f"{what} rel err {rel:.2e} (argmax {same}/{B} equal)")
    return f"vs float64 NumPy on batch 0 ({secs:.0f} s): " + ", ".join(parts)


def output_stats(ref, logits=None):
    """How informative the random network's outputs are (degenerate nets compare weakly, and a
    saturated softmax hides its input's errors)."""
    text = f"mean top prob {float(ref.max(axis=1).mean()):.3f}"
    if logits is not None:
        spread = logits.max(axis=1) - logits.min(axis=1)
        text += (f", logits max abs {float(np.abs(logits).max()):.3g}, "
                 f"spread (max - min) {float(spread.mean()):.3g} mean")
    return text + f", {len(np.unique(ref.argmax(axis=1)))} distinct argmax"


# ----------------------------------------------------------------------------------------------
# Driver
# ----------------------------------------------------------------------------------------------

def fmt_ms(xs):
    xs = [x for x in xs if x is not None]
    if not xs:
        return "-", "-", "-", None
    med = statistics.median(xs)
    return f"{min(xs):.1f}", f"{med:.1f}", f"{max(xs):.1f}", med


def check_program(name, args, work, bench_rows):
    """All steps for one program; returns (ok, summary-table row)."""
    source = os.path.join(args.release, RELEASE_SUBDIR, name, name + ".cpp")
    row = {"program": name, "result": "", "detail": "", "compile": "-", "rss": "-",
           "stats": "-"}
    step = "parse"
    try:
        if not os.path.isfile(source):
            raise CheckError(f"no source {source}")
        prog = parse_program(name, source)
        ops = {}
        for n in prog.nodes:
            ops[n.op] = ops.get(n.op, 0) + 1
        opstr = ", ".join(f"{k} {v}" for k, v in ops.items())
        mbytes = sum(w.count for w in prog.weights.values()) * 4 / 2**20
        print(f"   parsed: {len(prog.nodes)} nodes ({opstr}), "
              f"{len(prog.weights)} weights ({mbytes:.1f} MB), "
              f"batch {prog.batch_size} of {prog.input_chw}, output {prog.out_shape}")
        for w in prog.warnings:
            print(f"   note: {w}")
        step = "data"
        if args.batches > prog.input_size // prog.batch_size:
            raise CheckError(f"--batches {args.batches}, but the program runs only "
                             f"{prog.input_size // prog.batch_size} batches (input_size "
                             f"{prog.input_size}, batch_size {prog.batch_size})")

        step = "data"
        t0 = time.monotonic()
        input_path, ddir, csecs = write_data(prog, os.path.join(work, "params"), args.batches)
        calib = f", batchnorm statistics calibrated in {csecs:.1f} s" if csecs is not None else ""
        print(f"   data: {ddir.dir} ({ddir.made} files written, {ddir.reused} reused, "
              f"{time.monotonic() - t0:.1f} s{calib})")

        step = "reference"
        model = build_onnx(prog, ddir.dir)
        if args.save_onnx:
            import onnx
            os.makedirs(os.path.join(work, "onnx"), exist_ok=True)
            onnx.save(model, os.path.join(work, "onnx", name + ".onnx"))
        ref_sess = Reference(prog, model, input_path, args.threads)
        del model
        outs, rtimes = [], []
        for i in range(args.batches):
            y, secs = ref_sess.run(i)
            outs.append(y)
            rtimes.append(secs * 1000)
        ref = np.concatenate(outs)
        ref.astype("<f4").tofile(os.path.join(work, "out", name + ".ref.f32"))
        logits = (np.concatenate([ref_sess.logits[i] for i in range(args.batches)])
                  if ref_sess.logits else None)
        stats = output_stats(ref, logits)
        row["stats"] = f"{float(ref.max(axis=1).mean()):.3f}"
        print(f"   reference: onnxruntime output {list(outs[0].shape)} x {args.batches} batches, "
              f"{statistics.median(rtimes):.1f} ms/batch, {stats}")
        if args.reference_only:
            row.update(result="reference ok",
                       detail=f"output {list(outs[0].shape)} x {args.batches}; {stats}")
            if args.float64_check:
                step = "float64 check"
                print(f"   float64: {float64_check(prog, ddir.dir, input_path, ref, None)}")
            return True, row

        step = "compile"
        exe, csecs, peak = compile_program(prog, args, work)
        row["compile"] = f"{csecs:.1f} s"
        row["rss"] = f"{peak:.0f} MB" if peak is not None else "-"
        print(f"   compile: {csecs:.1f} s, peak RSS {row['rss']}")

        step = "run"
        dump = os.path.join(work, "out", name + ".f32")
        times, rsecs = run_program(prog, exe, args, work, dump)
        if not os.path.isfile(dump):
            raise CheckError(f"the program wrote no dump {dump} (does the runtime know "
                             "HPVM_TENSOR_DUMP?)")
        print(f"   run: {rsecs:.1f} s, batches " +
              ", ".join("?" if t is None else f"{t:.1f} ms" for t in times))
        if args.target != "cpu":
            row["placement"] = placement(prog, work)
            print(f"   placement: {row['placement']}")
        if None in times:
            print("   note: not every batch printed 'hpvm-tensor: batch <i>: <ms> ms' "
                  "(HPVM_TENSOR_STATS=1)")

        step = "compare"
        hpvm = np.fromfile(dump, dtype="<f4")
        ok, msg = compare(prog, hpvm, ref)
        row.update(result="PASS" if ok else "FAIL", detail=msg)
        print(f"   {'PASS' if ok else 'FAIL'}: {msg}")
        if args.float64_check:
            step = "float64 check"
            f64 = float64_check(prog, ddir.dir, input_path, ref, hpvm)
            row["detail"] += f"; float64 check: {f64}"
            print(f"   float64: {f64}")
        if not ok:
            return False, row

        if args.bench:
            step = "bench"
            ht, ot = [], []
            for r in range(args.bench):
                times, _ = run_program(prog, exe, args, work, None)
                if None in times:
                    raise CheckError("the program did not print 'hpvm-tensor: batch <i>: <ms> ms' "
                                     f"for every batch (HPVM_TENSOR_STATS): {times}")
                ht += times[1:]
                ot += [ref_sess.run(i)[1] * 1000 for i in range(args.batches)][1:]
            h, o = fmt_ms(ht), fmt_ms(ot)
            ratio = f"{h[3] / o[3]:.2f}" if h[3] and o[3] else "-"
            bench_rows.append(f"| {name} | {prog.batch_size} | {h[0]} / {h[1]} / {h[2]} | "
                              f"{o[0]} / {o[1]} / {o[2]} | {ratio} | {row['compile']} | "
                              f"{row['rss']} |")
            print(f"   bench: hpvm median {h[1]} ms, onnxruntime median {o[1]} ms, ratio {ratio}")
        return True, row
    except CheckError as e:
        msg = str(e)
    except MemoryError:
        msg = "out of memory"
    except Exception as e:  # a bug here or in a library: report it, go on with the others
        import traceback
        msg = f"{type(e).__name__}: {e}\n{traceback.format_exc()}"
    print(f"   FAIL ({step}): {msg}")
    first = msg.splitlines()[0] if msg else ""
    row.update(result=f"FAIL ({step})", detail=first)
    return False, row


def main():
    ap = argparse.ArgumentParser(
        description="The HPVM release's DNN programs compiled unchanged by hpvm-cc, checked "
                    "against onnxruntime.")
    ap.add_argument("release", metavar="RELEASE_ROOT",
                    help="the directory that holds hpvm/test/dnn_benchmarks")
    ap.add_argument("--build", default=os.path.join(REPO_ROOT, "build"),
                    help="the build directory (hpvm-cc in BUILD/bin; default: build)")
    ap.add_argument("--only", default="",
                    help="comma-separated programs (default: all: " + ",".join(PROGRAMS) + ")")
    ap.add_argument("--batches", type=int, default=2, help="batches per run (default 2)")
    ap.add_argument("--target", default="cpu", choices=("cpu", "opencl", "gpu"),
                    help="hpvm-cc --target (default cpu); with a device, the run is traced "
                         "and the placement of the node runs reported")
    ap.add_argument("--work", default=None,
                    help="data, binaries, logs and outputs (default BUILD/dnn-check)")
    ap.add_argument("--bench", type=int, default=0, metavar="ROUNDS",
                    help="rounds of (hpvm run, onnxruntime run) after the check (default 0)")
    ap.add_argument("--threads", type=int, default=2,
                    help="threads of both (OMP/HPVM_NUM_THREADS, onnxruntime intra-op; default 2)")
    ap.add_argument("--timeout", type=int, default=3600,
                    help="seconds allowed to one compile or run (default 3600)")
    ap.add_argument("--reference-only", action="store_true",
                    help="parse, write the data and run the onnxruntime reference only")
    ap.add_argument("--save-onnx", action="store_true", help="also write WORK/onnx/<name>.onnx")
    ap.add_argument("--float64-check", action="store_true",
                    help="also run the first batch in float64 by NumPy (slow) and print how far "
                         "hpvm and onnxruntime each are from it")
    args = ap.parse_args()

    def die(msg):
        print(f"dnn_check.py: {msg}", file=sys.stderr)
        sys.exit(2)

    args.release = os.path.abspath(args.release)
    args.build = os.path.abspath(args.build)
    bench_dir = os.path.join(args.release, RELEASE_SUBDIR)
    if not os.path.isdir(bench_dir):
        die(f"{args.release} has no {RELEASE_SUBDIR} (give the release's root directory)")
    names = [n for n in args.only.split(",") if n] if args.only else PROGRAMS
    unknown = [n for n in names if n not in PROGRAMS]
    if unknown:
        die(f"unknown program(s) {', '.join(unknown)}; known: {', '.join(PROGRAMS)}")
    if args.batches < 1:
        die("--batches must be at least 1")
    if args.bench < 0 or (args.bench and args.batches < 2):
        die("--bench needs --batches 2 or more (each run's first batch is a warm-up)")
    if args.reference_only and args.bench:
        die("--bench needs the compiled programs; it cannot go with --reference-only")
    args.hpvm_cc = os.path.join(args.build, "bin", "hpvm-cc")
    if not args.reference_only and not os.access(args.hpvm_cc, os.X_OK):
        die(f"no {args.hpvm_cc} (build first, or give --build)")
    work = os.path.abspath(args.work or os.path.join(args.build, "dnn-check"))
    # The programs stringify MODEL_PARAMS_DIR with the preprocessor: the path must be made of
    # tokens that stringify to themselves (no spaces or quotes, no predefined macro names).
    params = os.path.join(work, "params")
    if (re.search(r"[\s\"'\\#,()]", params) or
            re.search(r"(?<![\w.])(linux|unix|i386|__\w+)(?![\w])", params)):
        die(f"the data directory {params} cannot go through the preprocessor's stringification "
            "(spaces, quotes, or names like 'linux'/'unix' that are macros); choose --work")
    for sub in ("params", "bin", "logs", "out"):
        os.makedirs(os.path.join(work, sub), exist_ok=True)

    print(f"dnn-check: {len(names)} program(s) from {bench_dir}, {args.batches} batch(es) each, "
          f"work in {work}" + (" (reference only)" if args.reference_only else ""))
    rows, bench_rows, failed = [], [], []
    for name in names:
        print(f"== {name}")
        ok, row = check_program(name, args, work, bench_rows)
        rows.append(row)
        if not ok:
            failed.append(name)

    print("\n| program | result | details | mean top prob (ref) | compile | compile peak RSS |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        detail = r["detail"].replace("|", "\\|")
        print(f"| {r['program']} | {r['result']} | {detail} | {r['stats']} | {r['compile']} | "
              f"{r['rss']} |")
    if bench_rows:
        table = [f"DNN programs: hpvm-cc -O3 vs onnxruntime, {args.threads} threads, "
                 f"{args.bench} round(s) of {args.batches} batches (first batch of each run "
                 "left out); ms per batch, min / median / max", "",
                 "| program | batch | hpvm ms | onnxruntime ms | hpvm/ort (median) | compile | "
                 "compile peak RSS |", "|---|---|---|---|---|---|---|"] + bench_rows
        text = "\n".join(table) + "\n"
        with open(os.path.join(work, "table.md"), "w") as f:
            f.write(text)
        print("\n" + text + f"(also in {os.path.join(work, 'table.md')})")
    if failed:
        print(f"\ndnn-check: FAILED: {', '.join(failed)}")
        return 1
    print(f"\ndnn-check: all {len(names)} program(s) "
          + ("built and ran their references" if args.reference_only else "passed"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
