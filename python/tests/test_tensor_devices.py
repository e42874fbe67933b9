"""Tensor graphs compiled with target="opencl": every tensor node becomes an OpenCL
kernel (one thread per output element, fused chains in one kernel) and runs on the
device (PoCL in make check), with results within 1e-4 (relative) of the CPU build;
where no device runs it, the node's CPU version does."""

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
