"""Tensor kernels on the OpenCL device against the CPU backend: LeNet, the MobileNet-style
block and ResNet-18 from hpvm.onnx, each compiled twice by hpvm.compile (target="cpu", and
target="opencl": every node a kernel), fused; the two alternated ROUNDS times, medians of
REPEAT calls per round, and their ratio per round. PoCL's CPU device in make bench is a
correctness target (the kernels run on the same two cores as the CPU backend); the speed
target is on a GPU (docs/Performance.md)."""

from __future__ import annotations

import os
import statistics
import time

import numpy as np

import hpvm
import hpvm.onnx
from hpvm.onnx.examples import lenet, mobilenet_block, resnet18

ROUNDS = int(os.environ.get("ROUNDS", "3"))
REPEAT = int(os.environ.get("REPEAT", "5"))

MODELS = [
    ("lenet (batch 4)", lenet(), (4, 1, 28, 28)),
    ("mobilenet block (batch 2)", mobilenet_block(), (2, 8, 16, 16)),
    ("resnet18 64x64 (batch 1)", resnet18(size=64), (1, 3, 64, 64)),
    ("resnet18 224x224 (batch 1)", resnet18(size=224), (1, 3, 224, 224)),
]


def median_ms(compiled, x):
    times = []
    for _ in range(REPEAT):
        start = time.perf_counter()
        compiled(x)
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def main():
    print(f"tensor kernels, OpenCL device vs the CPU backend: {ROUNDS} alternated rounds, "
          f"median of {REPEAT} calls each")
    print("| model | CPU backend (ms) | OpenCL kernels (ms) | OpenCL / CPU (per round) | max abs diff |")
    print("|---|---|---|---|---|")
    for name, model, shape in MODELS:
        graph = hpvm.onnx.load(model)
        x = np.random.default_rng(3).standard_normal(shape).astype(np.float32)
        cpu = hpvm.compile(graph, fuse=True)
        device = hpvm.compile(graph, target="opencl", fuse=True)
        diff = float(np.max(np.abs(np.asarray(cpu(x)) - np.asarray(device(x)))))
        ratios, cpu_ms, device_ms = [], [], []
        for _ in range(ROUNDS):
            c = median_ms(cpu, x)
            d = median_ms(device, x)
            cpu_ms.append(c)
            device_ms.append(d)
            ratios.append(d / c)
        print(f"| {name} | {statistics.median(cpu_ms):.2f} | {statistics.median(device_ms):.2f} "
              f"| {statistics.median(ratios):.2f} ({', '.join(f'{r:.2f}' for r in ratios)}) "
              f"| {diff:.1e} |", flush=True)


if __name__ == "__main__":
    main()
