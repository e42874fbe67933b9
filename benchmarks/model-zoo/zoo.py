"""Models from the field: torchvision's model definitions (random weights, eval mode),
exported to ONNX at run time, imported by hpvm.onnx, compiled, checked against
onnxruntime and timed against it (and IREE when it is installed). No weights are
committed; nothing here is part of `make check` (torch is large): `make zoo-check`.

    python zoo.py [--only resnet18,vit_b_16] [--batch 1,8] [--rounds R] [--threads N]
                  [--work DIR] [--flags '...'] [--profile] [--cpu-time CALLS]

For each family and batch: `hpvm.from_torch` (torch.onnx.export, dynamo=False, opset 17,
fixed batch, then `hpvm.onnx.load`; the exported model is onnxruntime's), `hpvm.compile(fuse=True)` (compile time and the compiler's
peak memory), one run compared with onnxruntime (max |diff| / max |ref| <= 1e-4 and the
same top class), then R alternated rounds of hpvm and onnxruntime, each side in a process of
its own (2 warm-up calls, 5 timed, more for models under 50 ms: at least 0.25 s of calls;
min / median / max ms). With --profile, hpvm's side once
more with HPVM_PROFILE=1 (2 warm-up + 10 calls): time per op class of the fused graph's leaves
and the 10 slowest leaves (GFLOP/s of convolutions and products). With --cpu-time CALLS, both
sides on one thread in one process, alternated call by call: the CPU time of each call. Exit
status 1 when a model fails to import, compile or match."""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
import traceback

import numpy as np

FAMILIES = {
    # name: (constructor, input size)
    "lenet5": (None, 28),
    "alexnet": ("alexnet", 224),
    "vgg11": ("vgg11", 224),
    "vgg16": ("vgg16", 224),
    "resnet18": ("resnet18", 224),
    "resnet18_32": ("resnet18", 32),
    "resnet50": ("resnet50", 224),
    "squeezenet1_1": ("squeezenet1_1", 224),
    "googlenet": ("googlenet", 224),
    "densenet121": ("densenet121", 224),
    "mobilenet_v2": ("mobilenet_v2", 224),
    "mobilenet_v3_small": ("mobilenet_v3_small", 224),
    "shufflenet_v2_x1_0": ("shufflenet_v2_x1_0", 224),
    "efficientnet_b0": ("efficientnet_b0", 224),
    "regnet_x_400mf": ("regnet_x_400mf", 224),
    "mnasnet0_5": ("mnasnet0_5", 224),
    "convnext_tiny": ("convnext_tiny", 224),
    "vit_b_16": ("vit_b_16", 224),
    "transformer_encoder": (None, 0),
}

RTOL = 1e-4


def lenet5(torch):
    nn = torch.nn
    return nn.Sequential(nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                         nn.Linear(400, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(),
                         nn.Linear(84, 10))


def transformer_encoder(torch):
    nn = torch.nn
    layer = nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128,
                                       batch_first=True, dropout=0.0)
    return nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)


def model_and_input(torch, name, batch):
    ctor, size = FAMILIES[name]
    torch.manual_seed(0)
    if name == "lenet5":
        model, shape = lenet5(torch), (batch, 1, 28, 28)
    elif name == "transformer_encoder":
        model, shape = transformer_encoder(torch), (batch, 16, 64)
    else:
        import torchvision
        kwargs = {"aux_logits": False, "init_weights": True} if name == "googlenet" else {}
        model, shape = getattr(torchvision.models, ctor)(weights=None, **kwargs), \
            (batch, 3, size, size)
    model.eval()
    x = torch.randn(*shape)
    return model, x


def compiler_peak_mb(graph, work):
    """The peak memory of `hpvm-cc -shared -O3` (and of the clang and linker it runs) on
    the graph saved as MLIR and its parameter archive."""
    import hpvm
    folder = os.path.join(work, "mlir")
    os.makedirs(folder, exist_ok=True)
    mlir, _ = graph.save(os.path.join(folder, f"{graph.name}.mlir"))
    hpvm_cc = os.path.join(os.environ["HPVM_HOME"], "bin", "hpvm-cc")
    # Spawned from a small Python: a process started from this one (torch loaded) would
    # count this process's pages as its own peak until its exec.
    result = subprocess.run([sys.executable, "-c", _PEAK, hpvm_cc, "-shared", "-O3", mlir, "-o",
                             os.path.join(folder, f"{graph.name}.so")],
                            capture_output=True, text=True)
    if result.returncode != 0:
        raise hpvm.HPVMError(f"hpvm-cc failed on {mlir}: {result.stderr[-2000:]}")
    return int(result.stdout.split()[-1]) / 1024


# Runs argv[1:], prints its peak resident set in KiB, exits with its status.
_PEAK = ("import os, sys\n"
         "pid = os.posix_spawn(sys.argv[1], sys.argv[1:], os.environ)\n"
         "_, status, usage = os.wait4(pid, 0)\n"
         "print(usage.ru_maxrss)\n"
         "sys.exit(os.waitstatus_to_exitcode(status))\n")


# One side's timing (argv: side, model, graph name, threads, input .npy): 2 warm-up calls,
# then 5 timed ones, printed in ms. hpvm's library comes from the cache (hpvm.compile of the
# same model and name: nothing is compiled again).
_TIMER = """
import sys, time, numpy as np
side, path, name, threads, data = sys.argv[1:6]
flags = sys.argv[6].split()
x = np.load(data)
if side == "hpvm":
    import hpvm, hpvm.onnx
    run = hpvm.compile(hpvm.onnx.load(path, name=name), fuse=True, flags=flags)
    call = lambda: run(x)
else:
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads, so.inter_op_num_threads = int(threads), 1
    session = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    feed = {session.get_inputs()[0].name: x}
    call = lambda: session.run(None, feed)
warm, timed = (int(v) for v in sys.argv[7:9]) if len(sys.argv) > 8 else (2, 5)
least = float(sys.argv[9]) if len(sys.argv) > 9 else 0.0
# Small models: warm-up and timed calls go on until each phase took `least` seconds (a quarter
# of it to warm up; at most 500 calls), so that a model of 0.1 ms is timed over many calls.
start, done = time.perf_counter(), 0
while done < warm or (time.perf_counter() - start < least / 4 and done < 500):
    call()
    done += 1
spent, done = 0.0, 0
while done < timed or (spent < least and done < 500):
    t = time.perf_counter()
    call()
    t = time.perf_counter() - t
    spent, done = spent + t, done + 1
    print(t * 1e3)
"""


def timed_in_child(side, path, name, args, calls=(2, 5), env=None, least=0.25):
    """The times (ms) of `calls` = (warm-up, timed) calls of one side in a process of its own,
    more where they take less than `least` seconds, and that process's stderr."""
    env = dict(os.environ, HPVM_NUM_THREADS=str(args.threads), OMP_NUM_THREADS=str(args.threads),
               **(env or {}))
    result = subprocess.run([sys.executable, "-c", _TIMER, side, path, name, str(args.threads),
                             os.path.join(args.work, "input.npy"), args.flags,
                             *(str(c) for c in calls), str(least)],
                            capture_output=True, text=True, env=env)
    if result.returncode != 0:
        raise RuntimeError(f"the {side} timer failed: {result.stderr[-2000:]}")
    return [float(v) for v in result.stdout.split()], result.stderr


# --cpu-time: both libraries on one thread in one process, alternated call by call, each call's
# CPU time (time.process_time): on a machine busy with other work the wall clock counts the
# time other processes hold the CPU, and a process's CPU time much less so. argv: model, graph
# name, inputs (.npy: the model's one input; .npz: by name), calls of each, hpvm-cc flags.
_ALTERNATE = """
import sys, time, numpy as np
path, name, data, rounds = sys.argv[1:5]
flags = sys.argv[5].split()
import hpvm, hpvm.onnx, onnxruntime as ort
run = hpvm.compile(hpvm.onnx.load(path, name=name), fuse=True, flags=flags)
so = ort.SessionOptions()
so.intra_op_num_threads, so.inter_op_num_threads = 1, 1
session = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
loaded = np.load(data)
if hasattr(loaded, "files"):
    feeds = dict(loaded)
    theirs = {i.name: feeds[i.name] for i in session.get_inputs()}
    calls = [lambda: run(**feeds), lambda: session.run(None, theirs)]
else:
    calls = [lambda: run(loaded), lambda: session.run(None, {session.get_inputs()[0].name: loaded})]
for call in calls:
    call()
times = [[], []]
for _ in range(int(rounds)):
    for side, call in enumerate(calls):
        t = time.process_time()
        call()
        times[side].append((time.process_time() - t) * 1e3)
for side in times:
    print(" ".join(str(v) for v in side))
"""


def cpu_times(path, name, data, rounds, flags=""):
    """hpvm's and onnxruntime's CPU times (ms) of `rounds` calls each, one thread, alternated
    call by call in a process of their own (after a warm-up call of each); a summary line."""
    env = dict(os.environ, HPVM_NUM_THREADS="1", OMP_NUM_THREADS="1", HPVM_SPIN_US="0")
    result = subprocess.run([sys.executable, "-c", _ALTERNATE, path, name, data, str(rounds),
                             flags], capture_output=True, text=True, env=env)
    if result.returncode != 0:
        raise RuntimeError(f"the alternating timer failed: {result.stderr[-2000:]}")
    ours, theirs = ([float(v) for v in line.split()]
                    for line in result.stdout.strip().splitlines()[-2:])
    median = lambda ts: sorted(ts)[len(ts) // 2]  # noqa: E731
    return (f"one thread, CPU time min / median: hpvm {min(ours):.2f} / {median(ours):.2f} ms, "
            f"onnxruntime {min(theirs):.2f} / {median(theirs):.2f} ms, ort/hpvm "
            f"{median(theirs) / median(ours):.2f} ({rounds} calls each, alternated)")


# --profile: where hpvm's time goes, by the runtime's HPVM_PROFILE lines and the fused graph's
# leaves (which hpvm.tensor ops each holds).
PROFILE_CALLS = (2, 10)
_LEAF = re.compile(r'^(\s*)hpvm\.leaf @("[^"]*"|[\w.$-]+)\(')
_OP = re.compile(r'hpvm\.tensor\.(\w+)')
_TYPES = re.compile(r'tensor<([0-9x]+)x[a-z][a-z0-9]*>')
_FLOAT_MATH = re.compile(r'\b(arith\.(add|sub|mul|div|max|min)[a-z]*f|math\.)')
_ELEMENTWISE = {"add", "relu", "clipped_relu", "sigmoid", "tanh", "map", "yield"}


def fused_leaves(graph, work):
    """{leaf name: (op class, conv/matmul flops per call or 0)} of `graph` after
    hpvm-block-tensor-layout and hpvm-fuse-tensor-nodes (what hpvm.compile(fuse=True)
    compiles for the CPU), from the MLIR text."""
    folder = os.path.join(work, "mlir")
    os.makedirs(folder, exist_ok=True)
    mlir, _ = graph.save(os.path.join(folder, f"{graph.name}.mlir"))
    # hpvm-opt --hpvm-fuse-tensor-nodes, in this process (the compiler library).
    from hpvm import toolchain
    with open(mlir) as f:
        fused = toolchain.run_opt(
            f.read(), ["--hpvm-block-tensor-layout", "--hpvm-fuse-tensor-nodes"], mlir)
    leaves, name, indent, body = {}, None, "", []
    for line in fused.splitlines():
        start = _LEAF.match(line)
        if start:
            name, indent, body = start.group(2).strip('"'), start.group(1), []
        elif name is not None and line == indent + "}":
            leaves[name] = classify(body)
            name = None
        elif name is not None:
            body.append(line)
    return leaves


def _shape(text):
    return [int(d) for d in text.split("x")]


def _image(shape):
    """[n, c, h, w] of an NCHW image or of one with its channels in blocks
    ([n, c / b, h, w, b])."""
    return shape if len(shape) == 4 else [shape[0], shape[1] * shape[4], shape[2], shape[3]]


def classify(body):
    """The op class of a leaf's body (its first heavy op: convolution, product, pool, other;
    else elementwise) and the flops of its convolutions and products. A leaf without
    hpvm.tensor ops (the importer's linalg for broadcasts, concatenations, slices, erf, ...)
    is elementwise when it computes in floating point, else data movement."""
    kind, flops, ops = None, 0, 0
    for line in body:
        for op in _OP.findall(line):
            ops += 1
            types = [_shape(t) for t in _TYPES.findall(line)]
            if op == "conv2d" and len(types) >= 3:
                (n, c, _, _), (f, cg, kh, kw) = _image(types[0]), types[1]
                out = _image(types[-1])
                flops += 2 * n * f * out[2] * out[3] * cg * kh * kw
                if kind is None:
                    groups = c // cg if cg else 1
                    kind = ("conv depthwise" if groups == c and c > 1 else
                            "conv grouped" if groups > 1 else f"conv {kh}x{kw}")
            elif op == "mul" and len(types) >= 3:  # the matrix product
                out, depth = types[-1], types[0][-1]
                size = 1
                for d in out:
                    size *= d
                flops += 2 * size * depth
                kind = kind or "matmul"
            elif op == "pool":
                kind = kind or "pool " + line.split("hpvm.tensor.pool", 1)[1].split()[0]
            elif op not in _ELEMENTWISE:
                kind = kind or op
    if not ops:
        computes = any(_FLOAT_MATH.search(line) for line in body)
        return ("elementwise" if computes else "data movement"), 0
    return kind or "elementwise", flops


def profile(graph, path, args):
    """hpvm's side with HPVM_PROFILE=1 in a process of its own (PROFILE_CALLS: warm-up and
    timed calls, all profiled), its lines grouped by op class; prints and returns the summary.
    With --against-ort, onnxruntime's profile too, layer by layer (against_ort)."""
    leaves = fused_leaves(graph, args.work)
    times, err = timed_in_child("hpvm", path, graph.name, args, PROFILE_CALLS,
                                {"HPVM_PROFILE": "1"}, least=0.0)
    summary = summarize(leaves, times, err, args.threads)
    if args.against_ort:
        against_ort(leaves, err, ort_node_times(path, args), args.against_ort)
    return summary


# --against-ort: onnxruntime in a process of its own with its profiler on (the same calls as
# hpvm's profile), each node's kernel time in ms per call. argv: model, input (.npy), threads,
# warm-up calls, timed calls, the profile's file prefix.
_ORT_PROFILE = """
import sys, json, numpy as np, onnxruntime as ort
path, data, threads, warm, timed, prefix = sys.argv[1:7]
so = ort.SessionOptions()
so.intra_op_num_threads, so.inter_op_num_threads = int(threads), 1
so.enable_profiling, so.profile_file_prefix = True, prefix
session = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
feeds = {session.get_inputs()[0].name: np.load(data)}
for _ in range(int(warm) + int(timed)):
    session.run(None, feeds)
events = json.load(open(session.end_profiling()))
runs = sum(1 for e in events if e.get("cat") == "Session" and e["name"] == "model_run")
nodes = {}
for e in events:
    if e.get("cat") == "Node" and e["name"].endswith("_kernel_time"):
        name = e["name"][:-len("_kernel_time")]
        nodes[name] = nodes.get(name, 0.0) + e["dur"] / 1e3 / max(runs, 1)
print(json.dumps(nodes))
"""


def ort_node_times(path, args):
    """onnxruntime's time per node (ms per call) from its profiler (_ORT_PROFILE)."""
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads))
    result = subprocess.run([sys.executable, "-c", _ORT_PROFILE, path,
                             os.path.join(args.work, "input.npy"), str(args.threads),
                             *(str(c) for c in PROFILE_CALLS),
                             os.path.join(args.work, "ort-profile")],
                            capture_output=True, text=True, env=env)
    if result.returncode != 0:
        raise RuntimeError(f"onnxruntime's profile failed: {result.stderr[-2000:]}")
    return json.loads(result.stdout.splitlines()[-1])


def _node_key(name):
    """An ONNX node's name as hpvm's leaf names spell it ('/a/b.0/Conv' and the NCHWc node
    onnxruntime names after its output, '/a/b.0/Conv_output_0_nchwc', as 'a_b.0_Conv')."""
    name = re.sub(r"_output_0(_nchwc)?$", "", name)
    return name.replace("/", "_").replace("-", "_").strip("_")


def against_ort(leaves, err, ort_nodes, count):
    """Prints each hpvm leaf beside the onnxruntime nodes it computes (a fused leaf's name
    joins its ops' names with '__'; an onnxruntime node counts for the first leaf that names
    its op), the `count` that lose the most first; nodes no leaf names (onnxruntime's layout
    reorders, ops hpvm folded away) are summed apart."""
    ours = leaf_times(err)
    theirs = {}
    for name, ms in ort_nodes.items():
        theirs[_node_key(name)] = theirs.get(_node_key(name), 0.0) + ms
    rows, taken = [], set()
    for ms, leaf in ours:
        matched = 0.0
        for op in leaf.split("__")[1:] or [leaf]:
            for key in [k for k in theirs if k not in taken and k.startswith(op.strip("_"))]:
                matched += theirs[key]
                taken.add(key)
        rows.append((ms - matched, ms, matched, leaf))
    rest = sum(ms for key, ms in theirs.items() if key not in taken)
    print(f"   against onnxruntime (its profiler on, {sum(ort_nodes.values()):.3g} ms per call "
          f"in nodes, {rest:.3g} ms of them in nodes no leaf names); the {count} leaves that "
          f"lose the most:")
    print(f"   {'hpvm ms':>9} {'ort ms':>8} {'ort/hpvm':>8}  op class: leaf")
    for _, ms, matched, leaf in sorted(rows, reverse=True)[:count]:
        ratio = f"{matched / ms:8.2f}" if ms and matched else f"{'-':>8}"
        print(f"   {ms:9.3f} {matched:8.3f} {ratio}  "
              f"{leaves.get(leaf, ('other', 0))[0]}: {leaf[:100]}")


def leaf_times(err):
    """(ms per call, leaf) of each `hpvm-profile:` line of a profiled child's stderr
    (PROFILE_CALLS calls)."""
    calls = sum(PROFILE_CALLS)
    return [(float(parts[1]) / calls, parts[5]) for parts in
            (line.split(" ", 5) for line in err.splitlines())
            if parts[0] == "hpvm-profile:" and parts[1] != "total" and len(parts) == 6]


def summarize(leaves, times, err, threads):
    """Prints and returns the summary of a profiled child: `leaves` as fused_leaves gives
    them, the child's call times (ms) and its stderr (the hpvm-profile: lines)."""
    median = sorted(times)[len(times) // 2]
    nodes = leaf_times(err)
    total = sum(ms for ms, _ in nodes)
    if not total:
        raise RuntimeError("HPVM_PROFILE printed no leaf times: " + err[-2000:])
    classes = {}
    for ms, node in nodes:
        kind = leaves.get(node, ("other", 0))[0]
        got = classes.setdefault(kind, [0.0, 0])
        got[0] += ms
        got[1] += 1
    ranked = sorted(classes.items(), key=lambda item: -item[1][0])
    print(f"   profile: {total:.3g} ms per call in {len(nodes)} leaves, a call {median:.3g} ms "
          f"(median of the {PROFILE_CALLS[1]} after {PROFILE_CALLS[0]} warm-up calls, all "
          f"profiled; HPVM_PROFILE=1, {threads} threads)")
    print(f"   {'op class':<22} {'ms/call':>9} {'share':>7} {'leaves':>6}")
    for kind, (ms, count) in ranked:
        print(f"   {kind:<22} {ms:9.3f} {100 * ms / total:6.1f}% {count:6d}")
    print(f"   top 10 layers {'ms/call':>17} {'share':>7} {'GFLOP/s':>8}  op class: leaf")
    for ms, node in sorted(nodes, reverse=True)[:10]:
        kind, flops = leaves.get(node, ("other", 0))
        rate = f"{flops / (ms * 1e6):8.1f}" if flops and ms else f"{'-':>8}"
        print(f"   {ms:31.3f} {100 * ms / total:6.1f}% {rate}  {kind}: {node}")
    return ", ".join(f"{kind} {100 * ms / total:.0f}%" for kind, (ms, _) in ranked[:5]
                     if 100 * ms / total >= 0.5) + f" ({total:.3g} ms in leaves, call {median:.3g} ms)"


def fmt(ts):
    ts = sorted(ts)
    return f"{ts[0]:.2f} / {ts[len(ts) // 2]:.2f} / {ts[-1]:.2f}"


def check(name, batch, args, torch, rows):
    import onnx
    import onnxruntime as ort
    import hpvm
    import hpvm.onnx

    path = os.path.join(args.work, f"{name}_b{batch}.onnx")
    model, x = model_and_input(torch, name, batch)
    feeds = x.numpy()
    t0 = time.perf_counter()
    try:
        # The package's own path from PyTorch; the export it makes is onnxruntime's model.
        graph = hpvm.from_torch(model, x, name=f"{name}_b{batch}", onnx_path=path)
    except hpvm.HPVMError as error:
        graph = error
    t_import = time.perf_counter() - t0
    so = ort.SessionOptions()
    so.intra_op_num_threads = args.threads
    so.inter_op_num_threads = 1
    session = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    ref = session.run(None, {session.get_inputs()[0].name: feeds})[0]
    row = {"model": name, "batch": batch}
    try:
        if isinstance(graph, Exception):
            raise graph
        t1 = time.perf_counter()
        compiled = hpvm.compile(graph, fuse=True, flags=args.flags.split())
        t2 = time.perf_counter()
        row["import"] = f"{t_import:.1f} s"  # export and import
        row["compile"] = f"{t2 - t1:.1f} s"
        row["rss"] = f"{compiler_peak_mb(graph, args.work):.0f} MB"
    except Exception as error:  # noqa: BLE001 - reported in the table
        row["result"] = "refused: " + str(error).splitlines()[0][:300]
        rows.append(row)
        print(f"   {row['result']}", flush=True)
        return False
    got = compiled(feeds)
    got = got[0] if isinstance(got, tuple) else got
    err = float(np.max(np.abs(got - ref)) / max(np.max(np.abs(ref)), 1e-30))
    flat_ref, flat_got = ref.reshape(ref.shape[0], -1), got.reshape(got.shape[0], -1)
    same = bool(np.all(flat_ref.argmax(1) == flat_got.argmax(1)))
    ok = err <= RTOL and same
    row["result"] = ("ok" if ok else "MISMATCH") + f" ({err:.1e})"
    print(f"   {row['result']}, compile {row['compile']}, peak {row['rss']}", flush=True)
    if ok and args.rounds:
        # Each side in processes of its own, alternated: an idle thread pool of one library
        # spins beside the other's in one process (onnxruntime's did, for hpvm's turns).
        np.save(os.path.join(args.work, "input.npy"), feeds)
        ours, theirs = [], []
        for _ in range(args.rounds):
            ours += timed_in_child("hpvm", path, graph.name, args)[0]
            theirs += timed_in_child("onnxruntime", path, graph.name, args)[0]
        row["hpvm"], row["ort"] = fmt(ours), fmt(theirs)
        ratio = sorted(theirs)[len(theirs) // 2] / sorted(ours)[len(ours) // 2]
        row["speed"] = f"{ratio:.2f}"
        print(f"   hpvm {row['hpvm']} ms, onnxruntime {row['ort']} ms: {ratio:.2f}x", flush=True)
    if ok and args.profile:
        np.save(os.path.join(args.work, "input.npy"), feeds)
        row["profile"] = profile(graph, path, args)
    if ok and args.cpu_time:
        data = os.path.join(args.work, "input.npy")
        np.save(data, feeds)
        row["cpu"] = cpu_times(path, graph.name, data, args.cpu_time, args.flags)
        print(f"   {row['cpu']}", flush=True)
    rows.append(row)
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="", help="comma-separated families (default: all)")
    ap.add_argument("--batch", default="1", help="comma-separated batch sizes (default 1)")
    ap.add_argument("--rounds", type=int, default=3, help="timing rounds (0: no timing)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--work", default=os.path.join(os.getcwd(), "zoo-work"))
    ap.add_argument("--flags", default="",
                    help="hpvm-cc flags for hpvm's side, e.g. '-fno-hpvm-parallel-leaves'")
    ap.add_argument("--profile", action="store_true",
                    help="also run hpvm's side with HPVM_PROFILE=1: time per op class and the "
                         "10 slowest layers")
    ap.add_argument("--against-ort", type=int, default=0, metavar="N",
                    help="with --profile: onnxruntime's profile too, and the N hpvm leaves that "
                         "lose the most against the onnxruntime nodes they compute")
    ap.add_argument("--cpu-time", type=int, default=0, metavar="CALLS",
                    help="also both sides on one thread in one process, alternated call by "
                         "call: the CPU time of CALLS calls each (robust to a busy machine)")
    args = ap.parse_args()
    names = [n for n in args.only.split(",") if n] or list(FAMILIES)
    unknown = [n for n in names if n not in FAMILIES]
    if unknown:
        sys.exit(f"zoo.py: unknown families {unknown}; known: {', '.join(FAMILIES)}")
    os.makedirs(args.work, exist_ok=True)
    os.environ.setdefault("OMP_NUM_THREADS", str(args.threads))
    import torch
    torch.set_num_threads(args.threads)
    rows, failed = [], []
    for name in names:
        for batch in [int(b) for b in args.batch.split(",")]:
            print(f"== {name} batch {batch}", flush=True)
            try:
                if not check(name, batch, args, torch, rows):
                    failed.append(f"{name}/{batch}")
            except Exception:  # noqa: BLE001
                traceback.print_exc()
                rows.append({"model": name, "batch": batch, "result": "error (see log)"})
                failed.append(f"{name}/{batch}")
    print("\n| model | batch | result | compile | compiler peak RSS | hpvm ms | "
          "onnxruntime ms | ort/hpvm |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['model']} | {r['batch']} | {r.get('result', '')} | {r.get('compile', '-')} | "
              f"{r.get('rss', '-')} | {r.get('hpvm', '-')} | {r.get('ort', '-')} | "
              f"{r.get('speed', '-')} |")
    for r in rows:
        if r.get("cpu"):
            print(f"{r['model']} batch {r['batch']}: {r['cpu']}")
    if args.profile:
        print("\n| model | batch | share of the time in leaves per op class (hpvm) |")
        print("|---|---|---|")
        for r in rows:
            print(f"| {r['model']} | {r['batch']} | {r.get('profile', '-')} |")
    print(f"\nzoo: {len(rows) - len(failed)} of {len(rows)} ok" +
          (f"; failed: {', '.join(failed)}" if failed else ""))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
