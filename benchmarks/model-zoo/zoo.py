"""Models from the field: torchvision's model definitions (random weights, eval mode),
exported to ONNX at run time, imported by hpvm.onnx, compiled, checked against
onnxruntime and timed against it (and IREE when it is installed). No weights are
committed; nothing here is part of `make check` (torch is large): `make zoo-check`.

    python zoo.py [--only resnet18,vit_b_16] [--batch 1,8] [--rounds R] [--threads N]
                  [--work DIR] [--no-bench]

For each family and batch: `hpvm.from_torch` (torch.onnx.export, dynamo=False, opset 17,
fixed batch, then `hpvm.onnx.load`; the exported model is onnxruntime's), `hpvm.compile(fuse=True)` (compile time and the compiler's
peak memory), one run compared with onnxruntime (max |diff| / max |ref| <= 1e-4 and the
same top class), then R alternated rounds of hpvm and onnxruntime, each side in a process of
its own (2 warm-up calls, 5 timed; min / median / max ms). Exit status 1 when a model fails to import, compile or match."""

from __future__ import annotations

import argparse
import os
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
for _ in range(2):
    call()
for _ in range(5):
    t = time.perf_counter()
    call()
    print((time.perf_counter() - t) * 1e3)
"""


def timed_in_child(side, path, name, args):
    env = dict(os.environ, HPVM_NUM_THREADS=str(args.threads), OMP_NUM_THREADS=str(args.threads))
    result = subprocess.run([sys.executable, "-c", _TIMER, side, path, name, str(args.threads),
                             os.path.join(args.work, "input.npy"), args.flags],
                            capture_output=True, text=True, env=env)
    if result.returncode != 0:
        raise RuntimeError(f"the {side} timer failed: {result.stderr[-2000:]}")
    return [float(v) for v in result.stdout.split()]


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
            ours += timed_in_child("hpvm", path, graph.name, args)
            theirs += timed_in_child("onnxruntime", path, graph.name, args)
        row["hpvm"], row["ort"] = fmt(ours), fmt(theirs)
        ratio = sorted(theirs)[len(theirs) // 2] / sorted(ours)[len(ours) // 2]
        row["speed"] = f"{ratio:.2f}"
        print(f"   hpvm {row['hpvm']} ms, onnxruntime {row['ort']} ms: {ratio:.2f}x", flush=True)
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
    print(f"\nzoo: {len(rows) - len(failed)} of {len(rows)} ok" +
          (f"; failed: {', '.join(failed)}" if failed else ""))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
