"""The data in the release's format under WORK/params/<dir>/: seeded weights, input batches and
labels, reused when a stamp says they were made the same way, and the batchnorm statistics
calibrated on the first batch."""
import json
import math
import os
import time
import zlib

import numpy as np

from .network import file_weights, numpy_forward
from .program import CheckError


GENERATOR_VERSION = 2    # bump when the data generation changes (invalidates reused files)
CALIBRATED = ("bn_mean", "bn_var")   # measured on the first input batch (calibrate())
STAMP_NAME = "dnn-check-stamp.json"


def file_seed(prog, file):
    """A fixed seed per program and file (independent of the order files are written in)."""
    return zlib.crc32(f"dnn-check/{prog.name}/{file}".encode())


def weight_values(w, rng):
    """The float32 values of a weight by its role (scales that keep deep nets' activations sane).
    Batchnorm means and variances are not drawn: calibrate() measures them."""
    n = w.count
    if w.role == "filter":       # F x C x KH x KW: He normal
        return rng.standard_normal(n, dtype=np.float32) * np.float32(
            math.sqrt(2.0 / (w.dims[1] * w.dims[2] * w.dims[3])))
    if w.role == "dense":        # 1 x 1 x K x M: He normal, fan-in K
        return rng.standard_normal(n, dtype=np.float32) * np.float32(math.sqrt(2.0 / w.dims[2]))
    if w.role == "bn_gamma":
        return rng.uniform(0.5, 1.5, n).astype(np.float32)
    if w.role == "bn_beta":
        return rng.standard_normal(n, dtype=np.float32) * np.float32(0.1)
    if w.role in CALIBRATED:  # pragma: no cover - write_data does not ask
        raise CheckError(f"internal: {w.name} ({w.role}) is calibrated, not drawn")
    return rng.standard_normal(n, dtype=np.float32) * np.float32(0.01)   # bias, unused


def residual_scales(prog):
    """{weight name: factor} for the last layer of every residual branch.

    A residual add is an add of two nodes; its branch is the operand farther from the input
    (the longest path; a projection shortcut is one convolution, the branch two or three). The
    branch's last layer is scaled by 1/sqrt(number of residual adds): its last batchnorm's gamma
    and beta when it has one (a calibrated batchnorm undoes any scaling of the convolution before
    it), else its last convolution's filter and bias. Then the variance of the sum grows by a
    factor of about (1 + 1/n) per block, at most e-fold in all, like the small or zero last
    gamma of trained resnets' initializations.

    Without it, He initialization keeps the branch's variance that of its input, so without
    batchnorm every block doubles the variance (resnet18: 9 blocks, logits of +-25, a saturated
    softmax), and with calibrated batchnorms each branch amplifies small errors about 1.1-fold
    per layer (a batchnorm scales by 1/std of its input, a ReLU's output has a large mean):
    resnet50's float32 results would be 4e-5 from float64, too near the check's tolerance."""
    nodes = {n.name: n for n in prog.nodes}
    depth = {}
    for n in prog.nodes:
        depth[n.name] = 1 + max([depth[s] for k, s in n.sources if k == "node"], default=0)
    adds = [n for n in prog.nodes if n.op == "add" and all(k == "node" for k, _ in n.sources)]
    scales = {}
    for add in adds:
        (_, a), (_, b) = add.sources
        node = nodes[a if depth[a] >= depth[b] else b]
        names = []
        while True:
            wsrc = [s for k, s in node.sources if k == "weight"]
            nsrc = [s for k, s in node.sources if k == "node"]
            if node.op == "batchnorm" and all(k == "weight" for k, _ in node.sources[1:]):
                names = [node.sources[1][1], node.sources[2][1]]   # gamma, beta
                break
            if node.op == "add" and len(wsrc) == 1 and len(nsrc) == 1:
                names.append(wsrc[0])                              # a bias: scale, go on
                node = nodes[nsrc[0]]
                continue
            if node.op in ("convolution", "group_convolution") and node.sources[1][0] == "weight":
                names.append(node.sources[1][1])
            else:
                names = []   # anything else ends the branch: leave it alone
            break
        for name in names:
            if name in scales:
                raise CheckError(f"weight {name} ends more than one residual branch")
            scales[name] = 1 / math.sqrt(len(adds))
    return scales


def calibrate(prog, data_dir, input_path):
    """Each batchnorm's mean and variance: those of its input (per channel, over the batch and
    the pixels) on the first input batch, the network before it already calibrated, as
    data-dependent initialization would set them. A float32 NumPy forward pass; -> {weight
    name: float32 values}."""
    stats = {}

    def on_batchnorm(node, x):
        m = x.mean(axis=(0, 2, 3), dtype=np.float64)
        v = x.var(axis=(0, 2, 3), dtype=np.float64)
        names = [node.sources[3][1], node.sources[4][1]]
        for name in names:
            if name in stats:
                raise CheckError(f"weight {name} is the mean or variance of more than one "
                                 "batchnorm; it cannot be calibrated")
        stats[names[0]], stats[names[1]] = m.astype("<f4"), v.astype("<f4")
        return stats[names[0]], stats[names[1]]
    numpy_forward(prog, input_batch(prog, input_path, 0), np.float32,
                  file_weights(prog, data_dir), on_batchnorm)
    return stats


class DataDir:
    """WORK/params/<dir>: the files and a stamp (generator version, seed, size of each file)."""

    def __init__(self, root, prog):
        self.dir = os.path.join(root, prog.dir_name)
        os.makedirs(self.dir, exist_ok=True)
        self.stamp_path = os.path.join(self.dir, STAMP_NAME)
        try:
            with open(self.stamp_path) as f:
                self.stamp = json.load(f)
        except (OSError, ValueError):
            self.stamp = {}
        self.made = self.reused = 0

    def _want(self, seed, nbytes, extra):
        return {"version": GENERATOR_VERSION, "seed": seed, "bytes": nbytes, **(extra or {})}

    def current(self, file, seed, nbytes, extra=None):
        """Whether FILE is there as the stamp says it was made, made the way asked."""
        path = os.path.join(self.dir, file)
        return (self.stamp.get(file) == self._want(seed, nbytes, extra) and os.path.isfile(path)
                and os.path.getsize(path) == nbytes)

    def ensure(self, file, seed, nbytes, make, extra=None, force=False):
        """Writes FILE from make() unless (not force and) the stamp says it is already there as
        asked."""
        path = os.path.join(self.dir, file)
        if not force and self.current(file, seed, nbytes, extra):
            self.reused += 1
            return path
        tmp = path + ".tmp"
        arr = make()
        if arr.nbytes != nbytes:
            raise CheckError(f"internal: {file} would have {arr.nbytes} bytes, not {nbytes}")
        arr.tofile(tmp)
        os.replace(tmp, path)
        self.stamp[file] = self._want(seed, nbytes, extra)
        with open(self.stamp_path + ".tmp", "w") as f:
            json.dump(self.stamp, f, indent=1, sort_keys=True)
        os.replace(self.stamp_path + ".tmp", self.stamp_path)
        self.made += 1
        return path


def write_data(prog, params_root, batches):
    """Weights, K batches of inputs, the labels, then the calibrated batchnorm statistics;
    returns (input path, DataDir, seconds of calibration or None when reused)."""
    d = DataDir(params_root, prog)
    scales = residual_scales(prog)
    drawn = [w for w in prog.weights.values() if w.role not in CALIBRATED]
    measured = [w for w in prog.weights.values() if w.role in CALIBRATED]
    for w in drawn:
        seed, s = file_seed(prog, w.file), scales.get(w.name, 1.0)
        extra = {"role": w.role, **({"scale": s} if s != 1.0 else {})}
        d.ensure(w.file, seed, 4 * w.count,
                 lambda w=w, seed=seed, s=s: (weight_values(w, np.random.default_rng(seed)) *
                                              np.float32(s)).astype("<f4"), extra)
    weights_made = d.made
    B, (C, H, W) = prog.batch_size, prog.input_chw
    seed = file_seed(prog, "test_input.bin")

    def make_input():
        # Batch i from its own generator, so the first batches do not depend on K.
        return np.concatenate([np.random.default_rng([seed, i]).random(B * C * H * W,
                                                                       dtype=np.float32)
                               for i in range(batches)]).astype("<f4")
    input_path = d.ensure("test_input.bin", seed, 4 * batches * B * C * H * W, make_input)
    nlabels = max(prog.input_size, prog.labels_read)
    seed = file_seed(prog, "test_labels.bin")
    d.ensure("test_labels.bin", seed, 4 * nlabels,
             lambda: np.random.default_rng(seed).integers(0, prog.classes, nlabels,
                                                         dtype=np.uint32).astype("<u4"),
             {"classes": prog.classes})
    # The statistics depend on every weight before them and on the first input batch (which
    # depends only on its seed): measured again when a weight was written or a file is stale.
    ask = {w.name: (w.file, file_seed(prog, w.file), 4 * w.count,
                    {"role": w.role, "calibrated": "first input batch"}) for w in measured}
    secs = None
    if measured and (weights_made or not all(d.current(*a) for a in ask.values())):
        t0 = time.monotonic()
        stats = calibrate(prog, d.dir, input_path)
        secs = time.monotonic() - t0
        for w in measured:
            if w.name not in stats:
                raise CheckError(f"weight {w.name} ({w.role}) was not calibrated (it feeds no "
                                 "batchnorm the result depends on)")
            d.ensure(*ask[w.name][:3], lambda a=stats[w.name]: a, ask[w.name][3], force=True)
    else:
        d.reused += len(measured)
    return input_path, d, secs


def input_batch(prog, path, i):
    B, (C, H, W) = prog.batch_size, prog.input_chw
    n = B * C * H * W
    return np.fromfile(path, dtype="<f4", count=n, offset=4 * n * i).reshape(B, C, H, W)
