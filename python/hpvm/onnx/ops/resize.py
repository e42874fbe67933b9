"""Resize (nearest and linear modes, by scales or sizes) as gathers and interpolations
along each resized axis."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Optional

import numpy as np

from ... import tensor as T
from ..nodes import _Node, _fail
from .common import _check_unknown_attributes, _constant_input, _normalize_axes

if TYPE_CHECKING:
    from ..importer import Importer


_COORDINATE_MODES = ("half_pixel", "half_pixel_symmetric", "pytorch_half_pixel",
                     "align_corners", "asymmetric", "tf_half_pixel_for_nn")


def _optional_constant(im: Importer, node: _Node, i: int, what: str) -> Optional[np.ndarray]:
    """Input `i` as a constant, or None when it is absent or empty (opset 11 models give
    the unused one of scales / sizes as an empty tensor)."""
    if not node.input(i):
        return None
    value = _constant_input(im, node, i, what)
    return value if value.size else None


def _source_coordinates(mode: str, size: int, out: int, scale: float) -> np.ndarray:
    """The coordinate in the input of each output position along one axis, as ONNX's
    coordinate_transformation_mode defines it (in float64). The output length in these
    formulas is `scale * size` before rounding, as in ONNX's reference implementation and
    backend tests; with scales whose product is fractional, onnxruntime's align_corners
    uses the rounded length instead (the two then differ; with sizes they agree)."""
    y = np.arange(out, dtype=np.float64)
    width = scale * size  # the output size before it is rounded down
    if mode == "align_corners":
        return np.zeros(out) if width == 1 else y * (size - 1) / (width - 1)
    if mode == "asymmetric":
        return y / scale
    if mode == "tf_half_pixel_for_nn":
        return (y + 0.5) / scale
    if mode == "pytorch_half_pixel":
        return np.full(out, -0.5) if width == 1 else (y + 0.5) / scale - 0.5
    if mode == "half_pixel_symmetric":
        offset = size / 2 * (1 - out / width)
        return offset + (y + 0.5) / scale - 0.5
    return (y + 0.5) / scale - 0.5  # half_pixel


def _nearest_indices(x: np.ndarray, rounding: str, size: int) -> np.ndarray:
    low = np.floor(x)
    fraction = x - low
    if rounding == "floor":
        up = np.zeros(x.shape, bool)
    elif rounding == "ceil":
        up = fraction > 0
    elif rounding == "round_prefer_ceil":
        up = fraction >= 0.5
    else:  # round_prefer_floor
        up = fraction > 0.5
    return np.clip(low + up, 0, size - 1).astype(np.int64)


def _resize(im: Importer, node: _Node) -> None:
    _check_unknown_attributes(node, ["mode", "coordinate_transformation_mode", "nearest_mode",
                                     "cubic_coeff_a", "exclude_outside", "extrapolation_value",
                                     "antialias", "axes", "keep_aspect_ratio_policy"])
    if im.opset < 11:
        _fail(f"Resize of opset {im.opset} (scales as input 1, its own rounding) is not "
              "supported; expected opset 11 or later")
    mode = node.string("mode", "nearest")
    if mode not in ("nearest", "linear", "cubic"):
        _fail(f"mode '{mode}' is not valid; expected nearest, linear or cubic")
    if mode == "cubic":
        _fail("mode 'cubic' is not supported; expected nearest or linear")
    transform = node.string("coordinate_transformation_mode", "half_pixel")
    if transform == "tf_crop_and_resize":
        _fail("coordinate_transformation_mode 'tf_crop_and_resize' is not supported; expected "
              + ", ".join(_COORDINATE_MODES))
    if transform not in _COORDINATE_MODES:
        _fail(f"coordinate_transformation_mode '{transform}' is not valid; expected "
              + ", ".join(_COORDINATE_MODES))
    rounding = node.string("nearest_mode", "round_prefer_floor")
    if rounding not in ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil"):
        _fail(f"nearest_mode '{rounding}' is not valid; expected round_prefer_floor, "
              "round_prefer_ceil, floor or ceil")
    if int(node.attr("antialias", 0)) and mode != "nearest":
        _fail("antialias 1 is not supported; expected 0")
    policy = node.string("keep_aspect_ratio_policy", "stretch")
    if policy not in ("stretch", "not_larger", "not_smaller"):
        _fail(f"keep_aspect_ratio_policy '{policy}' is not valid; expected stretch, not_larger "
              "or not_smaller")
    x = im.tensor(node, 0)
    axes = node.ints("axes")
    axes = list(range(x.rank)) if axes is None else _normalize_axes(axes, x.rank)
    scales = _optional_constant(im, node, 2, "the scales")
    sizes = _optional_constant(im, node, 3, "the sizes")
    if (scales is None) == (sizes is None):
        _fail("expected exactly one of the scales (input 2) and the sizes (input 3)")
    given = scales if scales is not None else sizes
    if given.ndim != 1 or given.size != len(axes):
        _fail(f"the {'scales' if scales is not None else 'sizes'} {given.tolist()} do not "
              f"give one value for each of the {len(axes)} axes {axes}")
    factor = [1.0] * x.rank
    out = list(x.shape)
    if scales is not None:
        if scales.dtype.kind != "f" or not np.all(np.isfinite(scales)) or np.any(scales <= 0):
            _fail(f"the scales {scales.tolist()} are not valid; expected positive numbers")
        for a, s in zip(axes, scales.astype(np.float64)):
            factor[a], out[a] = float(s), int(float(s) * x.shape[a])
    else:
        if sizes.dtype.kind not in "iu" or np.any(sizes <= 0):
            _fail(f"the sizes {sizes.tolist()} are not valid; expected positive integers")
        ratios = [int(n) / x.shape[a] for a, n in zip(axes, sizes)]
        if policy != "stretch":
            ratio = min(ratios) if policy == "not_larger" else max(ratios)
            ratios = [ratio] * len(axes)
            sizes = [int(math.floor(ratio * x.shape[a] + 0.5)) for a in axes]
        for a, r, n in zip(axes, ratios, sizes):
            factor[a], out[a] = r, int(n)
    if 0 in out:
        _fail(f"the output shape {out} has a zero-size dimension; expected sizes >= 1")
    y = x
    resized = [a for a in range(x.rank) if not (out[a] == x.shape[a] and factor[a] == 1.0)]
    if mode == "nearest":
        indices = {a: _nearest_indices(_source_coordinates(transform, x.shape[a], out[a],
                                                           factor[a]), rounding, x.shape[a])
                   for a in resized}
        y = T.take_axes(x, indices, name=node.leaf_name)
    else:
        for k, a in enumerate(resized):
            source = _source_coordinates(transform, x.shape[a], out[a], factor[a])
            low = np.floor(source)
            weight = source - low
            lower = np.clip(low, 0, x.shape[a] - 1).astype(np.int64)
            upper = np.clip(low + 1, 0, x.shape[a] - 1).astype(np.int64)
            last = k == len(resized) - 1
            y = T.lerp_axis(y, a, lower, upper, weight, name=node.leaf_name if last else None)
    im.set_output(node, y)


#: The operators of this module.
HANDLERS = {
    "Resize": _resize,
}
