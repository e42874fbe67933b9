"""Memory across calls: a compiled graph called again and again keeps its memory bounded.
An output that fans out to branches the graph does not order (a downsampling residual
block's two convolutions, an inception module's three) was kept by every receiver, 2.4 MB a
call of regnet_x_400mf; now the last receiver to finish frees it (hpvm_rt_buffer_last_use),
and the results stay the same call after call (freed too early, a branch would read a reused
buffer)."""

from __future__ import annotations

import numpy as np

import hpvm
from hpvm import tensor as T


def _rss_kib() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS in /proc/self/status")


def _forks():
    rng = np.random.default_rng(3)

    def weights(*shape):
        return (rng.standard_normal(shape) * 0.1).astype(np.float32)

    g = hpvm.TensorGraph("forks")
    x = g.input("x", (1, 16, 128, 128))
    # 2 MiB that fans out to two unordered branches, joined by an add.
    y = T.relu(T.conv2d(x, g.constant(weights(32, 16, 3, 3)), padding=(1, 1)))
    a = T.conv2d(y, g.constant(weights(32, 32, 3, 3)), padding=(1, 1), strides=(2, 2))
    b = T.conv2d(y, g.constant(weights(32, 32, 1, 1)), strides=(2, 2))
    z = T.relu(T.add(a, b))
    # Three branches of one input, joined by a concatenation.
    branches = [T.conv2d(z, g.constant(weights(8, 32, k, k)), padding=(k // 2, k // 2))
                for k in (1, 3, 5)]
    g.output(T.concat(branches, axis=1))
    return g


def test_fanned_out_buffers_are_freed_and_results_stay():
    run = hpvm.compile(_forks(), fuse=True)
    x = np.random.default_rng(0).standard_normal((1, 16, 128, 128)).astype(np.float32)
    first = run(x=x)
    for _ in range(5):
        run(x=x)
    before = _rss_kib()
    calls = 60
    for _ in range(calls):
        out = run(x=x)
    grown = _rss_kib() - before
    # Kept, the fanned-out buffers added 0.5 MiB a call (30 MiB here).
    assert grown < 8 * 1024, f"RSS grew {grown} KiB over {calls} calls"
    assert np.array_equal(out, first)
