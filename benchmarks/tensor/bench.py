"""Throughput of ONNX models on the CPU: hpvm (hpvm.onnx.load, compiled by hpvm-cc, tensor
nodes fused or not) against onnxruntime on the same machine.

Each measurement runs in its own process (an idle thread pool of one library must not spin
beside the other's), the runners alternate, and each reports the best of ROUNDS repeats of
ITERS inferences after a warm-up; the ratio is hpvm's throughput over onnxruntime's.

    python bench.py                      # every model, every runner, a table
    python bench.py --one hpvm lenet     # one measurement (what the table runs)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

MODELS = {
    # name: (builder arguments, batch description)
    "lenet": dict(batch=64),
    "mobilenet_block": dict(batch=8, channels=32, out_channels=64, size=56),
}
RUNNERS = ["onnxruntime", "hpvm", "hpvm-fused"]


def build(name):
    from hpvm.onnx import examples
    return getattr(examples, name)(**MODELS[name])


def measure(runner: str, name: str, rounds: int, iters: int) -> dict:
    model = build(name)
    shape = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    if runner == "onnxruntime":
        import onnxruntime
        session = onnxruntime.InferenceSession(model.SerializeToString(),
                                               providers=["CPUExecutionProvider"])
        feed = {model.graph.input[0].name: x}
        run = lambda: session.run(None, feed)  # noqa: E731
    else:
        import hpvm
        import hpvm.onnx
        compiled = hpvm.compile(hpvm.onnx.load(model), fuse=runner == "hpvm-fused")
        run = lambda: compiled(x)  # noqa: E731
    for _ in range(3):
        run()
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(iters):
            run()
        best = min(best, (time.perf_counter() - start) / iters)
    return {"runner": runner, "model": name, "seconds": best, "images_per_s": shape[0] / best}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--one", nargs=2, metavar=("RUNNER", "MODEL"))
    parser.add_argument("--rounds", type=int, default=int(os.environ.get("ROUNDS", 5)))
    parser.add_argument("--iters", type=int, default=int(os.environ.get("ITERS", 20)))
    parser.add_argument("--repeat", type=int, default=int(os.environ.get("REPEAT", 2)),
                        help="alternations of the runners per model")
    args = parser.parse_args()
    if args.one:
        print(json.dumps(measure(args.one[0], args.one[1], args.rounds, args.iters)))
        return 0
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")  # NumPy's BLAS threads stay idle
    print(f"{'model':<16} {'runner':<12} {'images/s':>10} {'ms/batch':>9} {'vs ORT':>7}")
    for name in MODELS:
        best = {}
        for _ in range(args.repeat):
            for runner in RUNNERS:
                out = subprocess.run([sys.executable, __file__, "--one", runner, name,
                                      "--rounds", str(args.rounds), "--iters", str(args.iters)],
                                     capture_output=True, text=True, env=env)
                if out.returncode != 0:
                    print(out.stderr, file=sys.stderr)
                    return 1
                result = json.loads(out.stdout.strip().splitlines()[-1])
                best[runner] = max(best.get(runner, 0.0), result["images_per_s"])
        for runner in RUNNERS:
            ratio = best[runner] / best["onnxruntime"]
            print(f"{name:<16} {runner:<12} {best[runner]:>10.0f} "
                  f"{1000 * MODELS[name]['batch'] / best[runner]:>9.2f} {ratio:>6.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
