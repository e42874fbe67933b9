"""A small real model for the approximation tuner: a LeNet-like CNN on scikit-learn's
bundled digits (`sklearn.datasets.load_digits`: 1797 8x8 images of the digits 0-9, pixel
values 0..16; nothing is downloaded) upsampled to 16x16, trained here in NumPy, with its
trained weights shipped in `data/digits_cnn.npz`.

The network (NCHW, in the shape HPVM's tensor ops express it)::

    x (N, 1, 16, 16), pixels / 16 in [0, 1], upsampled 2x (bilinear, see `upsample`)
    conv1  5x5, padding 2, 1 -> 32 channels   bias1 (add of a (1, 32, 1, 1) constant), relu1
    pool1  max 2x2, stride 2                  -> (N, 32, 8, 8)
    conv2  5x5, padding 2, 32 -> 64 channels  bias2, relu2
    pool2  max 2x2, stride 2                  -> (N, 64, 4, 4)
    flatten (reshape to (N, 1024), C-H-W order)
    fc     (N, 1024) x (1024, 10)             bias3
    softmax (axis 1)                          -> (N, 10) class probabilities

The images are upsampled and the network widened so that the convolutions dominate the
inference time (per image, conv2 is 3.28 million multiply-adds, conv1 0.20 million and fc
0.01 million) and so that perforation and filter sampling, the tuner's knobs, act on
feature maps of some size (16x16 and 8x8).

* `load_data(seed)`: the seeded split into 1077 train / 360 calibration / 360 test images;
* `upsample(images)`: the bilinear 2x upsampling (half-pixel centres) of the 8x8 digits;
* `weights()`: the shipped weights; `reference(x)`: the exact inference in NumPy;
* `graph(batch)`: the same network as an `hpvm.TensorGraph` ("digits_cnn", input "x"), its
  convolutions named "conv1" and "conv2" (the leaves that knob configurations name);
* `train(seed, epochs)`: the NumPy training (im2col convolutions, Adam, cross-entropy).

The shipped weights were made with::

    python -m hpvm.approx.digits --train python/hpvm/approx/data/digits_cnn.npz

that is `train(seed=0, epochs=40)`: Adam (learning rate 0.003, betas 0.9 / 0.999, cosine
decay to 0), batches of 32, L2 weight decay 1e-4, He-normal initialisation, float64
arithmetic, stored as float32 (228 KB, compressed); about 63 s on 2 cores, and the same
file again bit for bit on this machine. With `reference` they reach the accuracies in
`ACCURACY` on the `load_data(0)` split: train 100% (1077/1077), calibration 98.6%
(355/360), test 99.4% (358/360).
"""

from __future__ import annotations

import argparse
import io
import math
import os
import sys
import time
from typing import Dict, Optional, Tuple

import numpy as np

from ..errors import HPVMError
from ..files import read_bytes

#: Accuracy of the shipped weights with `reference` on the `load_data(0)` split.
ACCURACY = {"train": 1.0, "calibration": 0.9861, "test": 0.9944}

#: Channels of conv1 and conv2.
CHANNELS = (32, 64)

#: The names (and the order) of the arrays in the weights dict.
PARAMETERS = ("conv1.weight", "conv1.bias", "conv2.weight", "conv2.bias", "fc.weight", "fc.bias")

SPLIT = {"train": 1077, "calibration": 360, "test": 360}
CLASSES = 10
IMAGE = (1, 16, 16)

#: The side of the convolution kernels and their zero padding (stride 1, "same" size).
KERNEL, PAD = 5, 2

_DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "digits_cnn.npz")


# ---------------------------------------------------------------------------
# Data and weights
# ---------------------------------------------------------------------------

def upsample(images: np.ndarray) -> np.ndarray:
    """Bilinear 2x upsampling, half-pixel centres (as OpenCV's `resize` with INTER_LINEAR
    and PyTorch's `interpolate(..., mode="bilinear", align_corners=False)`): (..., H, W) ->
    (..., 2H, 2W), float64. Separable: along each axis, output index i samples the input at
    s = (i + 0.5) / 2 - 0.5, clamped to [0, H - 1], linearly between floor(s) and floor(s) + 1;
    that is, for an input row x[0..H-1] and k = i // 2,

        out[2k]     = 0.75 * x[k] + 0.25 * x[max(k - 1, 0)]
        out[2k + 1] = 0.75 * x[k] + 0.25 * x[min(k + 1, H - 1)]

    (the weights are exact in binary floating point; a convex combination, so [0, 1] stays
    [0, 1]). Computed as U @ image @ V.T with the interpolation matrices U (2H, H), V (2W, W)."""
    images = np.asarray(images, np.float64)

    def matrix(n: int) -> np.ndarray:
        u = np.zeros((2 * n, n))
        for k in range(n):
            u[2 * k, k] += 0.75
            u[2 * k, max(k - 1, 0)] += 0.25
            u[2 * k + 1, k] += 0.75
            u[2 * k + 1, min(k + 1, n - 1)] += 0.25
        return u

    h, w = images.shape[-2:]
    return matrix(h) @ images @ matrix(w).T


def load_data(seed: int = 0) -> Dict[str, Tuple[np.ndarray, np.ndarray]]:
    """{"train": (x, y), "calibration": (x, y), "test": (x, y)}: x float32 (N, 1, 16, 16),
    each 8x8 digit scaled to [0, 1] (pixel / 16) and upsampled 2x by `upsample` (bilinear),
    y int64 labels; a fixed split of the 1797 images (1077 train / 360 calibration / 360
    test) by a permutation seeded with `seed`."""
    from sklearn.datasets import load_digits  # bundled with scikit-learn; no download

    digits = load_digits()
    x = upsample(np.asarray(digits.images, np.float64) / 16.0).astype(np.float32)
    x = x.reshape((-1,) + IMAGE)
    y = np.asarray(digits.target, np.int64)
    order = np.random.default_rng(seed).permutation(len(y))
    parts, start = {}, 0
    for name, size in SPLIT.items():
        index = order[start:start + size]
        parts[name] = (np.ascontiguousarray(x[index]), y[index].copy())
        start += size
    return parts


def weights() -> Dict[str, np.ndarray]:
    """The shipped trained weights (float32 arrays) from data/digits_cnn.npz."""
    with np.load(_DATA) as data:
        return {name: data[name].copy() for name in PARAMETERS}


def save(path: str, w: Dict[str, np.ndarray]) -> None:
    """Writes the weights (as float32) to an .npz file that `np.load` reads back."""
    np.savez_compressed(path, **{name: np.asarray(w[name], np.float32) for name in PARAMETERS})


# ---------------------------------------------------------------------------
# NumPy layers (forward and backward), float64
# ---------------------------------------------------------------------------

def _im2col(x: np.ndarray, k: int = KERNEL, pad: int = PAD) -> np.ndarray:
    """(N, C, H, W) -> (N * H * W, C * k * k) patches of a stride-1 'same' convolution."""
    n, c, h, w = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    windows = np.lib.stride_tricks.sliding_window_view(xp, (k, k), axis=(2, 3))  # N C H W k k
    return windows.transpose(0, 2, 3, 1, 4, 5).reshape(n * h * w, c * k * k)


def _col2im(cols: np.ndarray, shape, k: int = KERNEL, pad: int = PAD) -> np.ndarray:
    """The adjoint of `_im2col`: patch gradients summed back into (N, C, H, W)."""
    n, c, h, w = shape
    cols = cols.reshape(n, h, w, c, k, k)
    dxp = np.zeros((n, c, h + 2 * pad, w + 2 * pad))
    for i in range(k):
        for j in range(k):
            dxp[:, :, i:i + h, j:j + w] += cols[:, :, :, :, i, j].transpose(0, 3, 1, 2)
    return dxp[:, :, pad:pad + h, pad:pad + w]


def _conv(x, weight, bias):
    """5x5 convolution, padding 2, stride 1 (cross-correlation, as hpvm.tensor.conv2d),
    plus bias; returns the output and the patches."""
    n, _, h, w = x.shape
    cols = _im2col(x)
    out = cols @ weight.reshape(weight.shape[0], -1).T + bias
    return out.reshape(n, h, w, -1).transpose(0, 3, 1, 2), cols


def _conv_backward(dout, x_shape, weight, cols, need_input: bool):
    f = weight.shape[0]
    d = dout.transpose(0, 2, 3, 1).reshape(-1, f)
    dweight = (d.T @ cols).reshape(weight.shape)
    dbias = d.sum(axis=0)
    dx = _col2im(d @ weight.reshape(f, -1), x_shape) if need_input else None
    return dx, dweight, dbias


def _pool(x):
    """Max pooling 2x2, stride 2; returns the output and the (first) argmax of each window."""
    n, c, h, w = x.shape
    windows = x.reshape(n, c, h // 2, 2, w // 2, 2).transpose(0, 1, 2, 4, 3, 5)
    windows = windows.reshape(n, c, h // 2, w // 2, 4)
    return windows.max(axis=-1), windows.argmax(axis=-1)


def _pool_backward(dout, argmax, x_shape):
    n, c, h, w = x_shape
    d = np.zeros(argmax.shape + (4,))
    np.put_along_axis(d, argmax[..., None], dout[..., None], axis=-1)
    return d.reshape(n, c, h // 2, w // 2, 2, 2).transpose(0, 1, 2, 4, 3, 5).reshape(x_shape)


def _softmax(z):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _forward(x, w, keep: bool = False, chunk: int = 128):
    """Logits of the network for images x (float64 arithmetic); with `keep`, also the
    values the backward pass needs. Without `keep`, `chunk` images at a time (the patches
    of conv2 take 400 KB an image)."""
    p = {name: np.asarray(w[name], np.float64) for name in PARAMETERS}
    x = np.asarray(x, np.float64).reshape((-1,) + IMAGE)
    if not keep and len(x) > chunk:
        return np.concatenate([_forward(x[i:i + chunk], p, chunk=chunk)
                               for i in range(0, len(x), chunk)])
    c1, cols1 = _conv(x, p["conv1.weight"], p["conv1.bias"])
    a1 = np.maximum(c1, 0.0)
    p1, arg1 = _pool(a1)
    c2, cols2 = _conv(p1, p["conv2.weight"], p["conv2.bias"])
    a2 = np.maximum(c2, 0.0)
    p2, arg2 = _pool(a2)
    flat = p2.reshape(len(x), -1)
    logits = flat @ p["fc.weight"] + p["fc.bias"]
    if not keep:
        return logits
    return logits, dict(p=p, x=x, c1=c1, cols1=cols1, a1=a1, p1=p1, arg1=arg1, c2=c2,
                        cols2=cols2, a2=a2, p2=p2, arg2=arg2, flat=flat)


def _backward(dlogits, cache) -> Dict[str, np.ndarray]:
    p = cache["p"]
    grads = {"fc.weight": cache["flat"].T @ dlogits, "fc.bias": dlogits.sum(axis=0)}
    dflat = dlogits @ p["fc.weight"].T
    dp2 = dflat.reshape(cache["p2"].shape)
    da2 = _pool_backward(dp2, cache["arg2"], cache["a2"].shape)
    dc2 = da2 * (cache["c2"] > 0)
    dp1, grads["conv2.weight"], grads["conv2.bias"] = _conv_backward(
        dc2, cache["p1"].shape, p["conv2.weight"], cache["cols2"], need_input=True)
    da1 = _pool_backward(dp1, cache["arg1"], cache["a1"].shape)
    dc1 = da1 * (cache["c1"] > 0)
    _, grads["conv1.weight"], grads["conv1.bias"] = _conv_backward(
        dc1, cache["x"].shape, p["conv1.weight"], cache["cols1"], need_input=False)
    return grads


def reference(x: np.ndarray, w: Optional[Dict[str, np.ndarray]] = None) -> np.ndarray:
    """Exact inference in NumPy (float64 arithmetic on the given, by default the shipped,
    weights): class probabilities (N, 10), float64."""
    return _softmax(_forward(x, weights() if w is None else w))


def accuracy(x: np.ndarray, y: np.ndarray, w: Optional[Dict[str, np.ndarray]] = None) -> float:
    """The fraction of images `reference` classifies as their label."""
    return float(np.mean(reference(x, w).argmax(axis=1) == y))


def loss(x: np.ndarray, y: np.ndarray, w: Dict[str, np.ndarray]) -> float:
    """Mean cross-entropy of the network on (x, y)."""
    return _cross_entropy(_forward(x, w), y)


def _cross_entropy(z: np.ndarray, y: np.ndarray) -> float:
    z = z - z.max(axis=1, keepdims=True)
    log_p = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    return float(-log_p[np.arange(len(y)), y].mean())


# ---------------------------------------------------------------------------
# Training
# ---------------------------------------------------------------------------

def initial(seed: int = 0, channels: Tuple[int, int] = CHANNELS) -> Dict[str, np.ndarray]:
    """He-normal weights and zero biases (float64), from a generator seeded with `seed`."""
    rng = np.random.default_rng(seed)
    c1, c2 = channels
    flat = c2 * (IMAGE[1] // 4) * (IMAGE[2] // 4)
    area = KERNEL * KERNEL

    def he(shape, fan_in):
        return rng.standard_normal(shape) * math.sqrt(2.0 / fan_in)

    return {"conv1.weight": he((c1, 1, KERNEL, KERNEL), area), "conv1.bias": np.zeros(c1),
            "conv2.weight": he((c2, c1, KERNEL, KERNEL), c1 * area), "conv2.bias": np.zeros(c2),
            "fc.weight": rng.standard_normal((flat, CLASSES)) * math.sqrt(1.0 / flat),
            "fc.bias": np.zeros(CLASSES)}


def train(seed: int = 0, epochs: int = 40, batch: int = 32, rate: float = 3e-3,
          decay: float = 1e-4, channels: Tuple[int, int] = CHANNELS,
          data: Optional[dict] = None, verbose: bool = False) -> Dict[str, np.ndarray]:
    """Trains the network with NumPy on the train split of `load_data(seed)` (or `data`):
    Adam (learning rate `rate` with a cosine decay to 0 over the run, betas 0.9 / 0.999),
    cross-entropy, shuffled batches of `batch`, L2 weight decay `decay`; `channels` of conv1
    and conv2; float64 arithmetic. Deterministic for a seed. Returns the weights as float32 arrays."""
    data = load_data(seed) if data is None else data
    x, y = data["train"]
    x = np.asarray(x, np.float64)
    rng = np.random.default_rng(seed + 1)
    w = initial(seed, channels)
    m = {k: np.zeros_like(v) for k, v in w.items()}
    v2 = {k: np.zeros_like(v) for k, v in w.items()}
    beta1, beta2, eps = 0.9, 0.999, 1e-8
    steps_per_epoch = math.ceil(len(y) / batch)
    total, step = epochs * steps_per_epoch, 0
    for epoch in range(epochs):
        order = rng.permutation(len(y))
        for start in range(0, len(y), batch):
            index = order[start:start + batch]
            logits, cache = _forward(x[index], w, keep=True)
            probabilities = _softmax(logits)
            dlogits = probabilities
            dlogits[np.arange(len(index)), y[index]] -= 1.0
            dlogits /= len(index)
            grads = _backward(dlogits, cache)
            step += 1
            lr = rate * 0.5 * (1.0 + math.cos(math.pi * (step - 1) / total))
            for k in PARAMETERS:
                g = grads[k] + (decay * w[k] if k.endswith("weight") else 0.0)
                m[k] = beta1 * m[k] + (1 - beta1) * g
                v2[k] = beta2 * v2[k] + (1 - beta2) * g * g
                mhat = m[k] / (1 - beta1 ** step)
                vhat = v2[k] / (1 - beta2 ** step)
                w[k] = w[k] - lr * mhat / (np.sqrt(vhat) + eps)
        if verbose:
            print(f"epoch {epoch + 1:3d}: train loss {loss(x, y, w):.4f}", file=sys.stderr)
    return {k: w[k].astype(np.float32) for k in PARAMETERS}


# ---------------------------------------------------------------------------
# The HPVM tensor graph
# ---------------------------------------------------------------------------

def graph(batch: int, w: Optional[Dict[str, np.ndarray]] = None):
    """The network as an `hpvm.TensorGraph` named "digits_cnn": input "x" of shape
    (batch, 1, 16, 16), output the probabilities (batch, 10). Its ops are named conv1, bias1,
    relu1, pool1, conv2, bias2, relu2, pool2, flatten, fc, bias3 and softmax (one leaf
    each; knob configurations name the convolutions conv1 and conv2)."""
    import hpvm
    from hpvm import tensor as T

    w = weights() if w is None else w
    p = {name: np.asarray(w[name], np.float32) for name in PARAMETERS}
    c1, c2 = p["conv1.weight"].shape[0], p["conv2.weight"].shape[0]
    g = hpvm.TensorGraph("digits_cnn")
    x = g.input("x", (int(batch),) + IMAGE)
    h = T.conv2d(x, g.constant(p["conv1.weight"], "conv1_w"), padding=(PAD, PAD), name="conv1")
    h = T.add(h, g.constant(p["conv1.bias"].reshape(1, c1, 1, 1), "conv1_b"), name="bias1")
    h = T.relu(h, name="relu1")
    h = T.max_pool(h, (2, 2), strides=(2, 2), name="pool1")
    h = T.conv2d(h, g.constant(p["conv2.weight"], "conv2_w"), padding=(PAD, PAD), name="conv2")
    h = T.add(h, g.constant(p["conv2.bias"].reshape(1, c2, 1, 1), "conv2_b"), name="bias2")
    h = T.relu(h, name="relu2")
    h = T.max_pool(h, (2, 2), strides=(2, 2), name="pool2")
    h = T.reshape(h, (int(batch), -1), name="flatten")
    h = T.matmul(h, g.constant(p["fc.weight"], "fc_w"), name="fc")
    h = T.add(h, g.constant(p["fc.bias"].reshape(1, -1), "fc_b"), name="bias3")
    g.output(T.softmax(h, axis=1, name="softmax"), names=["probabilities"])
    return g


# ---------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------

def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m hpvm.approx.digits",
        description="Trains the digits CNN in NumPy (--train OUT.npz) or evaluates weights.")
    parser.add_argument("--train", metavar="OUT.npz", help="train and write the weights here")
    parser.add_argument("--weights", metavar="IN.npz",
                        help="evaluate these weights (default: the shipped ones)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=40)
    parser.add_argument("--train-images", type=int, metavar="N",
                        help="train on the first N images of the train split (default: all)")
    parser.add_argument("--verbose", action="store_true", help="print the loss of each epoch")
    args = parser.parse_args(argv)
    data = load_data(args.seed)
    if args.train:
        start = time.perf_counter()
        x, y = data["train"]
        subset = dict(data, train=(x[:args.train_images], y[:args.train_images]))
        w = train(args.seed, args.epochs, data=subset, verbose=args.verbose)
        print(f"trained {args.epochs} epochs in {time.perf_counter() - start:.1f} s")
        save(args.train, w)
        print(f"wrote {args.train} ({os.path.getsize(args.train)} bytes)")
    elif args.weights:
        # Read as a regular file first: np.load of a named pipe would block forever, of a
        # link to /dev/zero read until memory runs out.
        try:
            data_file = io.BytesIO(read_bytes(args.weights, "the weights file (--weights)",
                                              1 << 30))
            with np.load(data_file) as f:
                w = {name: f[name] for name in PARAMETERS}
        except HPVMError as error:
            print(f"{parser.prog}: error: {error}", file=sys.stderr)
            return 1
        except (ValueError, KeyError, OSError) as error:
            print(f"{parser.prog}: error: the weights file '{args.weights}' is not an .npz "
                  f"file of the digits CNN's arrays ({', '.join(PARAMETERS)}): {error}",
                  file=sys.stderr)
            return 1
    else:
        w = weights()
    for name, (x, y) in data.items():
        z = _forward(x, w)
        print(f"{name:12s} {len(y):5d} images  accuracy {np.mean(z.argmax(axis=1) == y):.4f}  "
              f"loss {_cross_entropy(z, y):.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
