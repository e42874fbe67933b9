"""Reduction sampling (#hpvm.knob<sample_reduction>) against the exact reduction: sums and
maxima of a 2048 x 4096 f32 tensor over the last axis and over axis 0, each compiled by
hpvm.compile exactly and with the knob at rates 2 and 4 (offset 0).

The variants of a case alternate in one process, ROUNDS times, each round timing ITERS calls
of each; the median per-call time of a variant is reported with its speedup over exact, the
fraction of the elements it reads, and its error against the exact output,
||approx - exact|| / ||exact|| in L1 and L2. Inputs are uniform in [0, 1).

    python reduction_bench.py [--rounds R] [--iters I]   (run_approx.sh runs it)
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np

import hpvm
from hpvm import tensor as T

SHAPE = (2048, 4096)
CASES = [  # (name, axis, combiner, init)
    ("sum over the last axis", 1, "add", 0.0),
    ("sum over axis 0", 0, "add", 0.0),
    ("max over the last axis", 1, "max", -np.inf),
    ("max over axis 0", 0, "max", -np.inf),
]
RATES = [None, 2, 4]  # None: exact


def compile_case(axis, combiner, init, rate):
    g = hpvm.TensorGraph("reduction")
    g.output(T.reduce(g.input("x", SHAPE), init, axis, combiner, name="fold"))
    knobs = None
    if rate is not None:
        knobs = {"knobs": [{"node": "fold", "knob": "sample_reduction", "rate": rate,
                            "offset": 0}]}
    return hpvm.compile(g, knobs=knobs)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--iters", type=int, default=5)
    args = parser.parse_args()
    x = np.random.default_rng(0).random(SHAPE, dtype=np.float32)
    for name, axis, combiner, init in CASES:
        runs = [compile_case(axis, combiner, init, rate) for rate in RATES]
        outputs = [np.array(run(x), dtype=np.float64) for run in runs]  # also warms up
        times = [[] for _ in RATES]
        for _ in range(args.rounds):
            for i, run in enumerate(runs):
                start = time.perf_counter()
                for _ in range(args.iters):
                    run(x)
                times[i].append((time.perf_counter() - start) / args.iters)
        medians = [statistics.median(t) for t in times]
        exact = outputs[0]
        print(f"\n{name}, {SHAPE[0]}x{SHAPE[1]} f32 (median of {args.rounds} alternating "
              f"rounds of {args.iters} calls, 1 thread)")
        print("| variant | time (us) | speedup | elements read | rel. L1 error | rel. L2 error |")
        print("|---|---:|---:|---:|---:|---:|")
        for rate, median, out in zip(RATES, medians, outputs):
            l1 = np.abs(out - exact).sum() / np.abs(exact).sum()
            l2 = np.linalg.norm(out - exact) / np.linalg.norm(exact)
            reads = 1.0 if rate is None else (rate - 1) / rate
            print(f"| {'exact' if rate is None else f'rate {rate}'} | {median * 1e6:.0f} | "
                  f"{medians[0] / median:.2f}x | {reads:.0%} | {l1:.4f} | {l2:.4f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
