"""HPVM_PROFILE=1 in a process that calls a compiled graph: at exit the runtime linked into the
graph's library prints one `hpvm-profile:` line per leaf that ran (as many runs as calls),
largest total first, then the total (docs/Runtime.md, "Where the time goes"); unset, it prints
nothing; a malformed value makes the call raise HPVMError naming the variable. Each case runs
in a child process: the report is made at the process's exit."""

from __future__ import annotations

import os
import re
import subprocess
import sys

CALLS = 3

# Builds and compiles the graph (fused or not, argv[1]), prints its leaves, calls it CALLS
# times (an HPVMError is printed, not raised).
_CHILD = f"""
import re, sys
import numpy as np
import hpvm
from hpvm import tensor as T
g = hpvm.TensorGraph("profiled_" + sys.argv[1])
rng = np.random.default_rng(3)
x = g.input("x", (1, 2, 8, 8))
y = T.max_pool(T.relu(T.add(T.conv2d(x, g.constant(rng.random((3, 2, 3, 3), np.float32))),
                            g.constant(rng.random((1, 3, 1, 1), np.float32)))), (2, 2))
g.output(T.tanh(y))
fuse = sys.argv[1] == "fused"
run = hpvm.compile(g, fuse=fuse)
print(" ".join(re.findall(r"hpvm\\.leaf @([\\w.$-]+)\\(", g.mlir())))
data = rng.random((1, 2, 8, 8), np.float32)
for _ in range({CALLS}):
    try:
        run(data)
    except hpvm.HPVMError as error:
        print("HPVMError:", error)
"""


def _child(kind: str, profile=None):
    env = dict(os.environ)
    env.pop("HPVM_PROFILE", None)
    if profile is not None:
        env["HPVM_PROFILE"] = profile
    result = subprocess.run([sys.executable, "-c", _CHILD, kind], capture_output=True,
                            text=True, env=env, timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout, result.stderr


def _profile_lines(stderr: str):
    nodes, total = [], None
    for line in stderr.splitlines():
        if not line.startswith("hpvm-profile: "):
            continue
        if line.startswith("hpvm-profile: total "):
            total = re.fullmatch(r"hpvm-profile: total [0-9.]+ ms in (\d+) runs of (\d+) nodes",
                                 line)
            assert total, line
            continue
        match = re.fullmatch(r"hpvm-profile: ([0-9.]+) (\d+) [0-9.]+ [0-9.]+% (\S+)", line)
        assert match, line
        nodes.append((float(match[1]), int(match[2]), match[3]))
    return nodes, total


def test_every_leaf_of_the_unfused_graph_is_timed_per_call():
    stdout, stderr = _child("unfused", "1")
    leaves = stdout.split("\n")[0].split()
    nodes, total = _profile_lines(stderr)
    assert len(leaves) == 5  # conv2d, add, relu, max_pool, tanh
    assert sorted(name for _, _, name in nodes) == sorted(leaves)
    assert all(runs == CALLS for _, runs, _ in nodes)
    assert [ms for ms, _, _ in nodes] == sorted((ms for ms, _, _ in nodes), reverse=True)
    assert total and int(total[1]) == CALLS * len(leaves) and int(total[2]) == len(leaves)


def test_fused_leaves_are_timed_under_their_fused_names():
    _, stderr = _child("fused", "1")
    nodes, total = _profile_lines(stderr)
    # conv + add + relu + pool become one leaf; tanh may join it or stay on its own.
    assert 1 <= len(nodes) < 5 and total
    assert all(runs == CALLS for _, runs, _ in nodes)
    assert any("conv2d" in name for _, _, name in nodes)


def test_unset_or_zero_prints_nothing():
    for value in (None, "0", ""):
        stdout, stderr = _child("unfused", value)
        assert "hpvm-profile" not in stderr
        assert "HPVMError" not in stdout


def test_a_malformed_value_is_an_error_naming_the_variable():
    stdout, stderr = _child("unfused", "yes")
    errors = [line for line in stdout.splitlines() if line.startswith("HPVMError:")]
    assert len(errors) == CALLS, stdout
    assert "HPVM_PROFILE='yes': expected a decimal integer from 0 to 1" in errors[0]
    assert "hpvm-profile" not in stderr
