"""Comparing hpvm's results with onnxruntime's (and, on request, both with float64 NumPy)."""
import time

import numpy as np

from .data import input_batch
from .network import file_weights, numpy_forward


TOLERANCE = 1e-4         # max |hpvm - ref| / max |ref|


def compare(prog, hpvm, ref):
    """-> (ok, message): max |h - r| / max |r| and the argmax of each image."""
    if hpvm.size != ref.size:
        return False, (f"the dump has {hpvm.size} floats, expected {ref.size} "
                       f"({ref.shape[0]} images x {prog.classes} classes)")
    hpvm = hpvm.reshape(ref.shape)
    if not np.isfinite(hpvm).all():
        bad = np.argwhere(~np.isfinite(hpvm))[0]
        return False, (f"non-finite values in the hpvm result (first at image {bad[0]}, "
                       f"class {bad[1]})")
    scale = float(np.abs(ref).max())
    diff = np.abs(hpvm.astype(np.float64) - ref.astype(np.float64))
    rel = float(diff.max()) / scale if scale > 0 else float(diff.max())
    worst = np.unravel_index(int(diff.argmax()), diff.shape)
    ah, ar = hpvm.argmax(axis=1), ref.argmax(axis=1)
    same = int((ah == ar).sum())
    n = ref.shape[0]
    msg = (f"rel err {rel:.2e} (ref max abs {scale:.3g}; worst: image {worst[0]} class {worst[1]}, "
           f"hpvm {hpvm[worst]:.6g} ref {ref[worst]:.6g}), argmax {same}/{n} equal")
    if same != n:
        bad = np.flatnonzero(ah != ar)
        i = int(bad[0])
        # How far the reference prefers its class over hpvm's: a gap under the tolerance is a
        # tie at the check's precision (still a failure, but said so).
        gaps = ref[bad, ar[bad]] - ref[bad, ah[bad]]
        ties = int((gaps <= TOLERANCE * scale).sum())
        msg += (f" (first differs: image {i}, hpvm class {ah[i]}, ref class {ar[i]}, ref prefers "
                f"its class by {gaps[0]:.3g}; {ties} of the {len(bad)} differing images are "
                "ties within the tolerance)")
    return rel <= TOLERANCE and same == n, msg


def float64_check(prog, data_dir, input_path, ref, hpvm):
    """The first batch in float64 (NumPy, from the same float32 files): how far onnxruntime and
    hpvm (when given) each are from it, by the same measure as compare()."""
    t0 = time.monotonic()
    x = input_batch(prog, input_path, 0).astype(np.float64)
    exact, _ = numpy_forward(prog, x, np.float64, file_weights(prog, data_dir))
    secs = time.monotonic() - t0
    B = prog.batch_size
    scale = float(np.abs(exact).max())
    parts = []
    for what, y in (("onnxruntime", ref), ("hpvm", hpvm)):
        if y is None:
            continue
        if y.size < exact.size or y.size % exact.shape[1]:
            parts.append(f"{what}: no first batch of {exact.shape[1]} classes")
            continue
        y = y.reshape(-1, exact.shape[1])[:B].astype(np.float64)
        rel = float(np.abs(y - exact).max()) / scale if scale > 0 else float("nan")
        same = int((y.argmax(axis=1) == exact.argmax(axis=1)).sum())
        parts.append(f"{what} rel err {rel:.2e} (argmax {same}/{B} equal)")
    return f"vs float64 NumPy on batch 0 ({secs:.0f} s): " + ", ".join(parts)


def output_stats(ref, logits=None):
    """How informative the random network's outputs are (degenerate nets compare weakly, and a
    saturated softmax hides its input's errors)."""
    text = f"mean top prob {float(ref.max(axis=1).mean()):.3f}"
    if logits is not None:
        spread = logits.max(axis=1) - logits.min(axis=1)
        text += (f", logits max abs {float(np.abs(logits).max()):.3g}, "
                 f"spread (max - min) {float(spread.mean()):.3g} mean")
    return text + f", {len(np.unique(ref.argmax(axis=1)))} distinct argmax"
