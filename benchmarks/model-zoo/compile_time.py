"""Cold compile time of ONNX models: `hpvm.onnx.load` then `hpvm.compile(fuse=True)`, each in a
process of its own with an empty cache, alternated between HPVM_COMPILE_JOBS values (the LLVM
IR compiled whole, and in parts at once), R rounds; prints each run and the medians.

    python compile_time.py MODEL.onnx [MODEL.onnx ...] [--jobs 1,2] [--rounds 3]

Each run: wall seconds of the import and of the compile, and the CPU seconds of the process
and its children (clang); the load average beside it says what else ran."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

_CHILD = """
import os, resource, sys, tempfile, time
os.environ["HPVM_CACHE_DIR"] = tempfile.mkdtemp(prefix="hpvm-cold-")
import hpvm, hpvm.onnx
def cpu():
    own, kids = (resource.getrusage(w) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime
t0, c0 = time.perf_counter(), cpu()
graph = hpvm.onnx.load(sys.argv[1], name=sys.argv[2])
t1 = time.perf_counter()
hpvm.compile(graph, fuse=True)
t2 = time.perf_counter()
print(f"{t1 - t0:.2f} {t2 - t1:.2f} {cpu() - c0:.2f}")
import shutil; shutil.rmtree(os.environ["HPVM_CACHE_DIR"])
"""


def cold_compile(model: Path, jobs: str):
    """(import s, compile s, CPU s) of one cold compile of `model` with HPVM_COMPILE_JOBS=jobs."""
    env = dict(os.environ, HPVM_COMPILE_JOBS=jobs)
    name = model.stem.replace("-", "_")
    done = subprocess.run([sys.executable, "-c", _CHILD, str(model), name], env=env,
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{model}: the compile failed: {done.stderr[-2000:]}")
    return tuple(float(v) for v in done.stdout.split()[-3:])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="+", type=Path)
    parser.add_argument("--jobs", default="1,2", help="HPVM_COMPILE_JOBS values, alternated")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    jobs = args.jobs.split(",")
    runs = {}
    for _ in range(args.rounds):
        for model in args.models:
            for j in jobs:
                imported, compiled, cpu = cold_compile(model, j)
                load = os.getloadavg()[0]
                runs.setdefault((model.stem, j), []).append(imported + compiled)
                print(f"{model.stem} jobs={j}: import {imported:.2f} s, compile {compiled:.2f} s, "
                      f"CPU {cpu:.2f} s (load {load:.1f})", flush=True)
    print("\n| model | " + " | ".join(f"HPVM_COMPILE_JOBS={j}" for j in jobs) + " |")
    print("|---|" + "---|" * len(jobs))
    for model in args.models:
        medians = [sorted(runs[(model.stem, j)])[len(runs[(model.stem, j)]) // 2] for j in jobs]
        print(f"| {model.stem} | " + " | ".join(f"{m:.1f} s" for m in medians) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
