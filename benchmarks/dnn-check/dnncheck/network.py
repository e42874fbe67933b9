"""The network in NumPy: the batchnorm calibration in float32 and the --float64-check
reference."""
import os

import numpy as np

from .program import CheckError


PATCH_BYTES = 256 << 20   # the im2col matrix of one chunk of images stays under this


def np_conv(x, w, pads, strides, groups):
    """Cross-correlation of x (N, C, H, W) with w (F, C/groups, KH, KW) by im2col and matmul,
    in x's dtype (images in chunks, so the patch matrices stay small)."""
    from numpy.lib.stride_tricks import sliding_window_view
    N, C, H, W = x.shape
    F, Cg, KH, KW = w.shape
    (vp, hp), (vs, hs), G = pads, strides, groups
    if vp or hp:
        x = np.pad(x, ((0, 0), (0, 0), (vp, vp), (hp, hp)))
    OH, OW = (H + 2 * vp - KH) // vs + 1, (W + 2 * hp - KW) // hs + 1
    K, Fg = Cg * KH * KW, F // G
    wg = w.reshape(G, Fg, K)
    out = np.empty((N, F, OH, OW), x.dtype)
    step = max(1, PATCH_BYTES // (C * KH * KW * OH * OW * x.itemsize))
    for n0 in range(0, N, step):
        xs = x[n0:n0 + step]
        n = xs.shape[0]
        win = sliding_window_view(xs, (KH, KW), axis=(2, 3))[:, :, ::vs, ::hs][:, :, :OH, :OW]
        # (n, C, OH, OW, KH, KW) -> (n, G, OH*OW, Cg*KH*KW)
        pat = win.reshape(n, G, Cg, OH, OW, KH, KW).transpose(0, 1, 3, 4, 2, 5, 6).reshape(
            n, G, OH * OW, K)
        if G == 1:
            y = (pat.reshape(n * OH * OW, K) @ wg[0].T).reshape(n, 1, OH * OW, F)
        elif Fg == 1:   # depthwise
            y = np.einsum("ngpk,gk->ngp", pat, wg[:, 0, :])[..., None]
        else:
            y = np.einsum("ngpk,gfk->ngpf", pat, wg)
        out[n0:n0 + n] = y.transpose(0, 1, 3, 2).reshape(n, F, OH, OW)
    return out


def np_pool(x, op, c):
    from numpy.lib.stride_tricks import sliding_window_view
    wh, ww, vp, hp, vs, hs = c
    if vp or hp:  # max pooling ignores the padding, mean pooling counts it (as zeros)
        x = np.pad(x, ((0, 0), (0, 0), (vp, vp), (hp, hp)),
                   constant_values=-np.inf if op == "pool_max" else 0)
    win = sliding_window_view(x, (wh, ww), axis=(2, 3))[:, :, ::vs, ::hs]
    return win.max(axis=(4, 5)) if op == "pool_max" else win.mean(axis=(4, 5))


def numpy_forward(prog, x, dtype, weight, on_batchnorm=None, on_node=None):
    """The network on one batch x, every operation in dtype; weight(name) -> the values of a
    weight (as in its file). on_batchnorm(node, input) may supply a batchnorm's (mean, variance)
    instead of its files; on_node(node, output) sees every node's output. Returns (result,
    logits: the softmax's input or None)."""
    last_use = {}
    for i, node in enumerate(prog.nodes):
        for k, s in node.sources:
            if k == "node":
                last_use[s] = i
    vals, logits = {}, None
    for i, node in enumerate(prog.nodes):
        op, c = node.op, node.consts

        def arg(j, shape=None):
            k, s = node.sources[j]
            if k == "input":
                return x.astype(dtype, copy=False)
            if k == "node":
                return vals[s]
            a = np.asarray(weight(s)).astype(dtype, copy=False)
            return a.reshape(shape or prog.weights[s].dims)
        if op in ("convolution", "group_convolution"):
            y = np_conv(arg(0), arg(1), c[0:2], c[2:4], c[5] if op == "group_convolution" else 1)
        elif op == "add":
            y = arg(0) + arg(1)
        elif op == "mul":
            a, d = arg(0), prog.weights[node.sources[1][1]].dims
            y = (a.reshape(a.shape[0], -1) @ arg(1, (d[2], d[3]))).reshape(a.shape[0], d[3], 1, 1)
        elif op == "relu":
            y = np.maximum(arg(0), 0)
        elif op == "tanh":
            y = np.tanh(arg(0))
        elif op == "clipped_relu":
            y = np.clip(arg(0), 0, 6)
        elif op == "softmax":
            a = arg(0)
            logits = a.reshape(a.shape[0], -1)
            e = np.exp(a - a.max(axis=1, keepdims=True))
            y = e / e.sum(axis=1, keepdims=True)
        elif op == "batchnorm":
            a = arg(0)
            ch = (1, a.shape[1], 1, 1)
            given = on_batchnorm(node, a) if on_batchnorm else None
            if given is not None:
                mean, var = (np.asarray(v).astype(dtype).reshape(ch) for v in given)
            else:
                mean, var = arg(3, ch), arg(4, ch)
            y = (a - mean) / np.sqrt(var + dtype(c[0])) * arg(1, ch) + arg(2, ch)
        elif op in ("pool_max", "pool_mean"):
            y = np_pool(arg(0), op, c)
        else:  # pragma: no cover - OPS and this function go together
            raise CheckError(f"node {node.name}: no NumPy rule for {op}")
        if y.shape != prog.shapes[node.name] or y.dtype != dtype:
            raise CheckError(f"internal: NumPy gives node {node.name} ({op}) {y.dtype} "
                             f"{y.shape}, expected {prog.shapes[node.name]}")
        vals[node.name] = y
        if on_node:
            on_node(node, y)
        for k, s in node.sources:
            if k == "node" and last_use[s] == i:
                vals.pop(s, None)
    res = vals[prog.result]
    return res.reshape(res.shape[0], -1), logits


def file_weights(prog, data_dir):
    """weight(name) for numpy_forward: the float32 values of the weight's file."""
    def weight(name):
        w = prog.weights[name]
        arr = np.fromfile(os.path.join(data_dir, w.file), dtype="<f4")
        if arr.size != w.count:
            raise CheckError(f"{w.file} has {arr.size} floats, expected {w.count}")
        return arr
    return weight
