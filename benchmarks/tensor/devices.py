"""Tensor kernels on the OpenCL device against the CPU backend: LeNet, the MobileNet-style
block and ResNet-18 from hpvm.onnx, and two VGG blocks (conv + bias + relu + max pool, fused
into one leaf each, whose tiles fold the pools), each compiled twice by hpvm.compile (target="cpu", and
target="opencl": every node a kernel, its convolutions and products in work-group tiles
where they fill them; and once more with -fhpvm-tensor-tiles=never: one thread per element),
fused; the three alternated ROUNDS times, medians of REPEAT calls per round, and their ratios
per round. PoCL's CPU device in make bench is a
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

def vgg_blocks(size: int = 64):
    """Two VGG blocks on 3 x size x size images: conv 3->64 and 64->128 (3 x 3, padded),
    each with its bias, relu and 2 x 2 max pool."""
    from hpvm import tensor as T
    rng = np.random.default_rng(5)

    def weights(*shape):
        return (rng.standard_normal(shape) / np.sqrt(np.prod(shape[1:]))).astype(np.float32)

    g = hpvm.TensorGraph("vgg_blocks")
    x = g.input("x", (1, 3, size, size))
    for i, (cin, cout) in enumerate([(3, 64), (64, 128)]):
        c = T.conv2d(x, g.constant(weights(cout, cin, 3, 3), f"w{i}"), padding=(1, 1),
                     name=f"conv{i}")
        b = T.add(c, g.constant(weights(1, cout, 1, 1), f"b{i}"), name=f"bias{i}")
        x = T.max_pool(T.relu(b, name=f"relu{i}"), (2, 2), name=f"pool{i}")
    g.output(x)
    return g


MODELS = [
    ("vgg blocks 64x64 (batch 1)", vgg_blocks(), (1, 3, 64, 64)),
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
    print("| model | CPU backend (ms) | OpenCL kernels (ms) | OpenCL / CPU (per round) "
          "| OpenCL, no tiles (ms) | tiles / no tiles (per round) | max abs diff |")
    print("|---|---|---|---|---|---|---|")
    for name, model, shape in MODELS:
        graph = model if isinstance(model, hpvm.TensorGraph) else hpvm.onnx.load(model)
        x = np.random.default_rng(3).standard_normal(shape).astype(np.float32)
        cpu = hpvm.compile(graph, fuse=True)
        device = hpvm.compile(graph, target="opencl", fuse=True)
        untiled = hpvm.compile(graph, target="opencl", fuse=True,
                               flags=["-fhpvm-tensor-tiles=never"])
        diff = float(np.max(np.abs(np.asarray(cpu(x)) - np.asarray(device(x)))))
        times = {"cpu": [], "device": [], "untiled": []}
        ratios, tile_ratios = [], []
        for _ in range(ROUNDS):
            for key, compiled in (("cpu", cpu), ("device", device), ("untiled", untiled)):
                times[key].append(median_ms(compiled, x))
            ratios.append(times["device"][-1] / times["cpu"][-1])
            tile_ratios.append(times["device"][-1] / times["untiled"][-1])
        median = {key: statistics.median(values) for key, values in times.items()}
        print(f"| {name} | {median['cpu']:.2f} | {median['device']:.2f} "
              f"| {statistics.median(ratios):.2f} ({', '.join(f'{r:.2f}' for r in ratios)}) "
              f"| {median['untiled']:.2f} | {statistics.median(tile_ratios):.2f} "
              f"({', '.join(f'{r:.2f}' for r in tile_ratios)}) | {diff:.1e} |", flush=True)


if __name__ == "__main__":
    main()
