"""Approximation knobs from Python: hpvm.compile(graph, knobs=...) sets them
(hpvm-apply-knobs), and the compiled graph computes what each knob defines."""

import numpy as np
import pytest

import hpvm
from hpvm import tensor as T

from test_tensor import conv_ref

rng = np.random.default_rng(7)


def rand(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def perforate(exact, axis, rate, offset):
    """ApproxTuner's perforated convolution on the exact output: rows (axis 2) or
    columns (axis 3) i with i % rate == offset are the mean of their neighbours (the
    one neighbour at an edge)."""
    out = exact.copy()
    size = exact.shape[axis]
    take = lambda i: np.take(exact, i, axis=axis)  # noqa: E731
    for i in range(size):
        if i % rate != offset or size == 1:
            continue
        neighbours = [take(j) for j in (i - 1, i + 1) if 0 <= j < size]
        index = [slice(None)] * 4
        index[axis] = i
        out[tuple(index)] = sum(neighbours) / len(neighbours)
    return out


def sampled_filter(w, rate, offset):
    flat = w.reshape(w.shape[0], -1).astype(np.float64).copy()
    keep = (np.arange(flat.shape[1]) % rate) != offset
    flat[:, ~keep] = 0.0
    flat[:, keep] *= rate / (rate - 1.0)
    return flat.reshape(w.shape)


X = rand(2, 3, 10, 12)
W = rand(5, 3, 3, 3)
B = rand(1, 5, 1, 1)


def graph():
    g = hpvm.TensorGraph("knobbed")
    x = g.input("x", X.shape)
    c = T.conv2d(x, g.constant(W), padding=(1, 1), name="conv")
    g.output(T.relu(T.add(c, g.constant(B), name="bias"), name="act"))
    return g


def exact_output():
    return np.maximum(conv_ref(X, W, (1, 1), (1, 1)) + B, 0)


@pytest.mark.parametrize("fuse", [False, True])
@pytest.mark.parametrize("knob,rate,offset", [("perforate_rows", 2, 1), ("perforate_rows", 3, 0),
                                              ("perforate_cols", 2, 0), ("perforate_cols", 3, 2)])
def test_perforation_interpolates_the_skipped_rows_and_columns(fuse, knob, rate, offset):
    knobs = {"knobs": [{"node": "conv", "knob": knob, "rate": rate, "offset": offset}]}
    out = hpvm.compile(graph(), fuse=fuse, knobs=knobs)(X)
    exact = exact_output()
    if fuse:  # bias and relu run in the kernel: the interpolation is of final outputs
        expected = perforate(exact, 2 if knob == "perforate_rows" else 3, rate, offset)
    else:  # the bias and relu nodes come after the interpolated convolution
        raw = perforate(conv_ref(X, W, (1, 1), (1, 1)), 2 if knob == "perforate_rows" else 3,
                        rate, offset)
        expected = np.maximum(raw + B, 0)
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4)
    assert not np.allclose(out, exact, rtol=1e-3, atol=1e-3)  # the knob did something


@pytest.mark.parametrize("rate,offset", [(2, 0), (2, 1), (4, 3)])
def test_filter_sampling_skips_and_rescales_weights(rate, offset):
    knobs = {"knobs": [{"node": "conv", "knob": "sample_filter", "rate": rate,
                        "offset": offset}]}
    out = hpvm.compile(graph(), knobs=knobs)(X)
    expected = np.maximum(conv_ref(X, sampled_filter(W, rate, offset), (1, 1), (1, 1)) + B, 0)
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4)


def test_knob_files_and_exact(tmp_path):
    path = tmp_path / "knobs.json"
    path.write_text('{"knobs": [{"node": "conv", "knob": "exact"}]}')
    np.testing.assert_allclose(hpvm.compile(graph(), knobs=str(path))(X), exact_output(),
                               rtol=1e-4, atol=1e-4)


def test_bad_knobs_are_errors_naming_the_entry():
    with pytest.raises(hpvm.HPVMError) as error:
        hpvm.compile(graph(), knobs={"knobs": [{"node": "bias", "knob": "perforate_rows",
                                                "rate": 2, "offset": 0}]})
    assert "knobs[0]: 'bias' holds 0 hpvm.tensor.conv2d ops" in str(error.value) + \
        (error.value.diagnostics or "")
    with pytest.raises(hpvm.HPVMError, match="cannot read the configuration"):
        hpvm.compile(graph(), knobs="/nonexistent/knobs.json")
