"""Tensor graphs compiled with target="opencl": every tensor node becomes an OpenCL
kernel (one thread per output element, fused chains in one kernel; convolutions and
products in work-group tiles) and runs on the device (PoCL in make check), with results
within 1e-4 (relative) of the CPU build; where no device runs it, the node's CPU version
does."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = """
import sys
import numpy as np, hpvm, hpvm.onnx
from hpvm.onnx.examples import lenet, mobilenet_block, resnet18
models = {{"lenet": (lenet(), (4, 1, 28, 28)),
          "mobilenet_block": (mobilenet_block(), (2, 8, 16, 16)),
          "resnet18": (resnet18(size=64), (1, 3, 64, 64))}}
model, shape = models[{model!r}]
graph = hpvm.onnx.load(model)
x = (np.random.default_rng(5).standard_normal(shape) * 2).astype(np.float32)
fuse = {fuse!r}
cpu = hpvm.run(graph, {{"input": x}}, fuse=fuse)[0]
print("device run", file=sys.stderr, flush=True)
device = hpvm.run(graph, {{"input": x}}, target="opencl", fuse=fuse)[0]
np.testing.assert_allclose(device, cpu, rtol=1e-4, atol=1e-5)
print("close", float(np.max(np.abs(device - cpu))))
"""


def _run(model: str, fuse: bool, env: dict):
    return subprocess.run([sys.executable, "-c", SCRIPT.format(model=model, fuse=fuse)],
                          capture_output=True, text=True, env=dict(os.environ, **env))


@pytest.mark.parametrize("model", ["lenet", "mobilenet_block", "resnet18"])
@pytest.mark.parametrize("fuse", [False, True])
def test_tensor_nodes_run_on_the_opencl_device(model, fuse):
    result = _run(model, fuse, {"HPVM_TRACE": "1"})
    assert result.returncode == 0, result.stderr[-4000:]
    assert result.stdout.startswith("close"), result.stdout
    # The trace lines after the CPU build's run: every node on the device.
    device_trace = result.stderr.split("device run", 1)[1]
    lines = [line for line in device_trace.splitlines() if line.startswith("hpvm-trace:")]
    assert lines, result.stderr[-4000:]
    elsewhere = [line for line in lines if " on opencl:" not in line]
    assert not elsewhere, elsewhere


def test_tensor_kernels_fall_back_to_the_cpu_without_a_device():
    """HPVM_DEVICE=cpu: the same executable runs every node's CPU version."""
    result = _run("lenet", True, {"HPVM_TRACE": "1", "HPVM_DEVICE": "cpu"})
    assert result.returncode == 0, result.stderr[-4000:]
    device_trace = result.stderr.split("device run", 1)[1]
    runs = [line for line in device_trace.splitlines()
            if line.startswith("hpvm-trace:") and " on " in line]
    assert runs and all(line.endswith(" on cpu") for line in runs), runs
    assert "falls back to cpu: HPVM_DEVICE=cpu" in device_trace


KNOB_SCRIPT = """
import sys
import numpy as np, hpvm
from hpvm import tensor as T
sys.path.insert(0, {tests!r})
from test_precision_knobs import ROUND
knob, (m, k, n) = {knob!r}, {shape!r}
rng = np.random.default_rng(11)
g = hpvm.TensorGraph("dense")
x = g.input("x", (m, k))
w = rng.standard_normal((k, n)).astype(np.float32)
b = rng.standard_normal((1, n)).astype(np.float32)
h = T.relu(T.add(T.matmul(x, g.constant(w, "w"), name="fc"), g.constant(b, "b"), name="fc_bias"),
           name="fc_relu")
g.output(h)
xv = (rng.standard_normal((m, k)) * 3).astype(np.float32)
xv[0, 0] = 7e4  # beyond fp16's range: infinity there
got = hpvm.compile(g, knobs={{"knobs": [{{"node": "fc", "knob": knob}}]}}, fuse=True,
                   target="opencl", flags=["-fhpvm-tensor-tiles=" + {tiles!r}])(xv)
round_ = ROUND[knob]
assert np.array_equal(round_(got), got), "a result that is not a value of the format"
with np.errstate(over="ignore", invalid="ignore"):
    exact = np.maximum(round_(xv).astype(np.float64) @ round_(w).astype(np.float64) + b, 0.0)
    terms = np.abs(round_(xv)).astype(np.float64) @ np.abs(round_(w)).astype(np.float64)
half_ulp = 2.0 ** -11 if knob == "fp16" else 2.0 ** -8
finite = np.isfinite(exact)
bound = k * 2.0 ** -23 * (terms + abs(b)) * 2 + half_ulp * np.abs(exact)
assert np.all(np.abs(got - exact)[finite] <= bound[finite] + 1e-30)
if knob == "fp16":
    assert np.all(np.isinf(got[0]) | (got[0] == 0) | ~np.isfinite(exact[0]))
print("within", knob)
"""


@pytest.mark.parametrize("knob", ["fp16", "bf16"])
@pytest.mark.parametrize("shape", [(3, 37, 21), (1, 1024, 300)])
@pytest.mark.parametrize("tiles", ["auto", "always"])
def test_precision_knobs_on_the_opencl_device(knob, shape, tiles):
    """The fp16 / bf16 knobs in a tensor kernel: operands stored in the format, f32 sums,
    the result (after bias and relu) rounded once; within the documented bound of the
    exact product of the rounded operands (docs/Approximation.md), on the device; the
    same in a tiled product (rounded as they enter work-group memory)."""
    script = KNOB_SCRIPT.format(tests=str(Path(__file__).parent), knob=knob, shape=shape,
                                tiles=tiles)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            env=dict(os.environ, HPVM_TRACE="1"))
    assert result.returncode == 0, result.stderr[-4000:]
    assert result.stdout.strip() == f"within {knob}"
    assert "hpvm-trace: fc_fc_bias_fc_relu on opencl:" in result.stderr, result.stderr[-2000:]


SAMPLING_SCRIPT = """
import sys
import numpy as np, hpvm
from hpvm import tensor as T
sys.path.insert(0, {tests!r})
import test_knobs
from test_reduction_sampling import compiled, sampled_reduction
knob, rate, offset = {knob!r}, {rate!r}, {offset!r}
if knob == "sample_filter":
    knobs = {{"knobs": [{{"node": "conv", "knob": knob, "rate": rate, "offset": offset}}]}}
    for fuse, tiles in ((False, "auto"), (True, "auto"), (True, "always")):
        cpu = hpvm.compile(test_knobs.graph(), knobs=knobs, fuse=fuse)(test_knobs.X)
        device = hpvm.compile(test_knobs.graph(), knobs=knobs, fuse=fuse, target="opencl",
                              flags=["-fhpvm-tensor-tiles=" + tiles])(test_knobs.X)
        np.testing.assert_allclose(device, cpu, rtol=1e-4, atol=1e-5)
else:
    x = np.random.default_rng(4).standard_normal((3, 11, 5)).astype(np.float32)
    for combiner, init in (("add", 0.5), ("max", -1.0)):
        g = hpvm.TensorGraph("reduction")
        g.output(T.reduce(g.input("x", x.shape), init, 1, combiner, name="fold"))
        g_knobs = {{"knobs": [{{"node": "fold", "knob": knob, "rate": rate, "offset": offset}}]}}
        device = hpvm.compile(g, knobs=g_knobs, target="opencl")(x)
        expected = sampled_reduction(x, init, 1, combiner, rate, offset)
        np.testing.assert_allclose(device, expected, rtol=1e-5, atol=1e-5)
print("close", knob)
"""


@pytest.mark.parametrize("knob,rate,offset", [("sample_filter", 2, 1), ("sample_filter", 4, 3),
                                              ("sample_reduction", 2, 0),
                                              ("sample_reduction", 3, 2)])
def test_sampling_knobs_on_the_opencl_device(knob, rate, offset):
    """Filter and reduction sampling in a tensor kernel: the same taps and elements skipped,
    the same rescaling as the CPU's kernels (docs/Approximation.md), on the device."""
    script = SAMPLING_SCRIPT.format(tests=str(Path(__file__).parent), knob=knob, rate=rate,
                                    offset=offset)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            env=dict(os.environ, HPVM_TRACE="1"))
    assert result.returncode == 0, result.stderr[-4000:]
    assert result.stdout.strip() == f"close {knob}"
    node = "conv" if knob == "sample_filter" else "fold"
    assert f"hpvm-trace: {node} on opencl:" in result.stderr, result.stderr[-2000:]


# The end of a script whose graph `g` takes `inputs`: compiled for the CPU and for the
# OpenCL device with tiles always and never; both device builds within 1e-4 of the CPU's
# (sums of hundreds of terms of magnitude ~10 in another order: elements that cancel to
# near zero differ by a few ulps of the terms) and the same bits as each other (the tiles
# sum, and fold pools, in the per-element kernels' order).
TILES_BOTH_WAYS = """
cpu = hpvm.compile(g, fuse=True)(*inputs)
device = {}
for tiles in ("always", "never"):
    print("device run", tiles, file=sys.stderr, flush=True)
    device[tiles] = hpvm.compile(g, fuse=True, target="opencl",
                                 flags=["-fhpvm-tensor-tiles=" + tiles])(*inputs)
    for got, want in zip(device[tiles], cpu):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6 * np.abs(want).max())
for tiled, per_element in zip(device["always"], device["never"]):
    np.testing.assert_array_equal(tiled, per_element)
print("close")
"""

TILES_SCRIPT = """
import sys
import numpy as np, hpvm
from hpvm import tensor as T
rng = np.random.default_rng(9)
def rand(*shape):
    return rng.standard_normal(shape).astype(np.float32)
g = hpvm.TensorGraph("tiles")
x = g.input("x", (2, 5, 23, 19))
# Sizes that are no multiples of the tiles (64 x 64, 16 deep): the edges of every tile.
c = T.conv2d(x, g.constant(rand(70, 5, 3, 3), "w1"), padding=(1, 1), name="conv")
h = T.relu(T.add(c, g.constant(rand(1, 70, 1, 1), "b1"), name="bias"), name="act")
d = T.conv2d(h, g.constant(rand(33, 70, 3, 2), "w2"), padding=(2, 0), strides=(2, 3),
             name="strided")
f = T.reshape(d, (2, 33 * 13 * 6), name="flat")
y = T.tanh(T.add(T.matmul(f, g.constant(rand(33 * 13 * 6, 67), "m"), name="fc"),
                 g.constant(rand(1, 67), "mb"), name="fc_bias"), name="fc_tanh")
b = g.input("b", (3, 70, 37))
z = T.matmul(b, g.constant(rand(3, 37, 65), "bm"), name="batched")
g.output(d, y, z)
inputs = rand(2, 5, 23, 19), rand(3, 70, 37)
""" + TILES_BOTH_WAYS


def _run_on_the_device(script: str) -> None:
    """Runs a script that ends with TILES_BOTH_WAYS: it says "close", and every node of
    its device runs is on the device."""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True,
                            text=True, env=dict(os.environ, HPVM_TRACE="1"))
    assert result.returncode == 0, result.stderr[-4000:]
    assert result.stdout.strip() == "close", result.stdout
    for run in result.stderr.split("device run")[1:]:
        lines = [line for line in run.splitlines() if line.startswith("hpvm-trace:")]
        assert lines and all(" on opencl:" in line for line in lines), lines


def test_tiled_products_on_the_opencl_device():
    """Convolutions (padded, strided, odd sizes) and products (with bias and activation,
    batched) in work-group tiles and one thread per element: both within 1e-4 of the CPU
    build and bit for bit equal to each other, every node on the device."""
    _run_on_the_device(TILES_SCRIPT)


POOLED_SCRIPT = """
import sys
import numpy as np, hpvm
from hpvm import tensor as T
rng = np.random.default_rng(11)
def rand(*shape):
    return rng.standard_normal(shape).astype(np.float32)
g = hpvm.TensorGraph("pooled")
x = g.input("x", (2, 6, 21, 17))
# conv + bias + relu + 2 x 2 max pool (odd sizes: the pool drops the last row and column).
c = T.conv2d(x, g.constant(rand(70, 6, 3, 3), "w1"), padding=(1, 1), name="conv1")
a = T.relu(T.add(c, g.constant(rand(1, 70, 1, 1), "b1"), name="bias1"), name="act1")
p = T.max_pool(a, (2, 2), name="pool1")
# conv + bias + tanh + 3 x 3 mean pool, stride 2, padded (overlapping windows, padding
# taps), then relu after the pool.
d = T.conv2d(p, g.constant(rand(36, 70, 3, 3), "w2"), padding=(1, 1), name="conv2")
t = T.tanh(T.add(d, g.constant(rand(1, 36, 1, 1), "b2"), name="bias2"), name="act2")
q = T.relu(T.mean_pool(t, (3, 3), strides=(2, 2), padding=(1, 1), name="pool2"), name="post")
# A convolution and bias into a 2 x 3 min pool of stride 1 (no activation between).
e = T.conv2d(q, g.constant(rand(40, 36, 2, 2), "w3"), name="conv3")
e = T.add(e, g.constant(rand(1, 40, 1, 1), "b3"), name="bias3")
m = T.min_pool(e, (2, 3), strides=(1, 1), name="pool3")
g.output(p, q, m)
inputs = (rand(2, 6, 21, 17),)
""" + TILES_BOTH_WAYS


def test_tiled_convolutions_into_pools_on_the_opencl_device():
    """A convolution, its bias (and activation) and a pool in one leaf (max; mean with padded
    overlapping windows; min with a non-square stride-1 window): in tiles whose columns are
    window taps and one thread per element, both within 1e-4 of the CPU build and bit for bit
    equal to each other, every node on the device. (The SPIR-V of the pooled tiles once lost
    its SPIR 1.2 fallback to an OpIAddCarry, and every node ran on the CPU.)"""
    _run_on_the_device(POOLED_SCRIPT)


WARNED_SCRIPT = """
import os, sys, tempfile, warnings
import numpy as np, hpvm
from hpvm import tensor as T
os.environ["HPVM_CACHE_DIR"] = tempfile.mkdtemp()
g = hpvm.TensorGraph("warned")
x = g.input("x", (1, 3, 8, 8))
w = g.constant(np.ones((4, 3, 3, 3), np.float32), "w")
g.output(T.relu(T.conv2d(x, w, name="conv"), name="act"))
def build():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        compiled = hpvm.compile(g, target="opencl")
    said = [str(c.message) for c in caught if issubclass(c.category, hpvm.HPVMWarning)]
    path = compiled.library.path
    return (path, os.stat(path).st_mtime_ns), said
# A translator that fails: the image has no SPIR 1.2 fallback, which the compile says,
# and the cached build says again.
os.environ["HPVM_LLVM_SPIRV"] = "false"
built, said = build()
print("failing translator:", len(said), all("no SPIR 1.2 fallback" in m for m in said))
cached, said = build()
print("cached:", len(said), all("cached" in m for m in said), cached == built)
# Another translator: another build, without the warning, then cached.
del os.environ["HPVM_LLVM_SPIRV"]
first, said = build()
print("translator:", len(said), first != built)
again, said = build()
print("cached:", len(said), again == first)
"""


def test_compile_warnings_are_said_and_keyed_by_the_device_tools():
    """A compile's warnings reach Python as HPVMWarning (before, they were dropped unless
    verbose) and a cached build says them again; the cache key includes the device tools
    found, so another translator builds again (and cleanly here)."""
    result = subprocess.run([sys.executable, "-c", WARNED_SCRIPT], capture_output=True,
                            text=True)
    assert result.returncode == 0, result.stderr[-4000:]
    assert result.stdout.split("\n")[:4] == [
        "failing translator: 1 True", "cached: 1 True True", "translator: 0 True",
        "cached: 0 True"], result.stdout


PERFORATION_SCRIPT = """
import sys
import numpy as np, hpvm
sys.path.insert(0, {tests!r})
import test_knobs
knobs = {{"knobs": [{{"node": "conv", "knob": {knob!r}, "rate": {rate!r},
                     "offset": {offset!r}}}]}}
cpu = {{fuse: hpvm.compile(test_knobs.graph(), knobs=knobs, fuse=fuse)(test_knobs.X)
        for fuse in (False, True)}}
for fuse in (False, True):
    print("device run", fuse, file=sys.stderr, flush=True)
    device = hpvm.compile(test_knobs.graph(), knobs=knobs, fuse=fuse,
                          target="opencl")(test_knobs.X)
    np.testing.assert_allclose(device, cpu[fuse], rtol=1e-4, atol=1e-5)
print("close")
"""


@pytest.mark.parametrize("knob,rate,offset", [("perforate_rows", 2, 1), ("perforate_rows", 3, 0),
                                              ("perforate_cols", 2, 0), ("perforate_cols", 3, 2)])
def test_perforation_knobs_on_the_opencl_device(knob, rate, offset):
    """Row and column perforation in a tensor kernel: the kept outputs computed, the skipped
    ones the mean of their neighbours (a copy at an edge) after the bias and activation, as
    the CPU's kernels do (docs/Approximation.md); every node on the device."""
    script = PERFORATION_SCRIPT.format(tests=str(Path(__file__).parent), knob=knob, rate=rate,
                                       offset=offset)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            env=dict(os.environ, HPVM_TRACE="1"))
    assert result.returncode == 0, result.stderr[-4000:]
    assert result.stdout.strip() == "close", result.stdout
    for run in result.stderr.split("device run")[1:]:
        lines = [line for line in run.splitlines() if line.startswith("hpvm-trace:")]
        assert lines and all(" on opencl:" in line for line in lines), lines


REPEATED_SCRIPT = """
import sys, tempfile
import numpy as np, hpvm, hpvm.onnx
from hpvm.onnx.examples import lenet
graph = hpvm.onnx.load(lenet())
x = np.random.default_rng(2).standard_normal((4, 1, 28, 28)).astype(np.float32)
with tempfile.TemporaryDirectory() as folder:
    builds = [hpvm.compile(graph, target="opencl", fuse=True, output=f"{folder}/lenet{i}.so")
              for i in range(12)]
    results = [compiled(x) for compiled in builds]
for result in results[1:]:
    np.testing.assert_array_equal(result, results[0])
print("same")
"""


def test_many_device_compiles_in_one_process():
    """Twelve OpenCL builds of one graph in one process: every image loads and every node runs
    on the device. (LLVM's SPIR-V backend keeps per-module state in a static that a later
    module in the same process collided with: from about the sixth build on, images had ids
    defined twice and nodes ran on the CPU; the backend now runs in a child process.)"""
    result = subprocess.run([sys.executable, "-c", REPEATED_SCRIPT], capture_output=True,
                            text=True, env=dict(os.environ, HPVM_TRACE="1"))
    assert result.returncode == 0, result.stderr[-4000:]
    assert result.stdout.strip() == "same", result.stdout
    lines = [line for line in result.stderr.splitlines() if line.startswith("hpvm-trace:")]
    assert len(lines) == 12 * 6, lines[:12]
    assert all(" on opencl:" in line for line in lines), [
        line for line in lines if " on opencl:" not in line][:3]
    assert "warning" not in result.stderr, result.stderr[-2000:]
