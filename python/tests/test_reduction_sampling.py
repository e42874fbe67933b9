"""Reduction sampling from Python: hpvm.compile(graph, knobs=...) puts
#hpvm.knob<sample_reduction> on an hpvm.tensor.reduce, and the compiled graph computes
the sampled reduction: along the axis the elements k with k % rate == offset skipped, a
sum scaled by n / kept (plus init), a maximum or minimum not scaled."""

import numpy as np
import pytest

import hpvm
from hpvm import tensor as T
from hpvm.approx.tuner import KINDS, REDUCTION_RATES, Configuration, Knob, knob_choices

rng = np.random.default_rng(11)

NUMPY = {"add": np.sum, "max": np.max, "min": np.min}


def sampled_reduction(x, init, axis, combiner, rate, offset):
    """The reduction of x along axis over the kept elements, in float64."""
    n = x.shape[axis]
    keep = np.arange(n) % rate != offset
    kept = np.compress(keep, x.astype(np.float64), axis=axis)
    shape = x.shape[:axis] + x.shape[axis + 1:]
    if not keep.any():
        return np.full(shape, init)
    folded = NUMPY[combiner](kept, axis=axis)
    if combiner == "add":
        return init + folded * (n / keep.sum())
    return (np.maximum if combiner == "max" else np.minimum)(folded, init)


def compiled(shape, init, axis, combiner, knob=None):
    g = hpvm.TensorGraph("reduction")
    x = g.input("x", shape)
    g.output(T.reduce(x, init, axis, combiner, name="fold"))
    knobs = None if knob is None else {"knobs": [dict(node="fold", **knob)]}
    return hpvm.compile(g, knobs=knobs)


# Shapes whose reduced extent is not a multiple of the rates (partial last blocks).
@pytest.mark.parametrize("shape,axis", [((13, 37), 0), ((13, 37), 1), ((3, 11, 6), 2),
                                        ((3, 11, 6), 1)])
# Rates above 8 are lowered as runs of consecutive kept elements; 50 and 40 exceed some
# extents (a partial block only; at offset 39, nothing skipped where n <= 39).
@pytest.mark.parametrize("rate,offset", [(2, 0), (2, 1), (3, 2), (4, 1), (4, 3), (9, 4),
                                         (50, 10), (40, 39)])
@pytest.mark.parametrize("combiner,init", [("add", 0.0), ("add", 1.5), ("max", -np.inf)])
def test_sampled_reduction_matches_numpy(shape, axis, rate, offset, combiner, init):
    x = rng.standard_normal(shape).astype(np.float32)
    knob = {"knob": "sample_reduction", "rate": rate, "offset": offset}
    out = compiled(shape, init, axis, combiner, knob)(x)
    expected = sampled_reduction(x, init, axis, combiner, rate, offset)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-4)
    exact = sampled_reduction(x, init, axis, combiner, x.shape[axis] + 1, x.shape[axis])
    if combiner == "add" and offset < x.shape[axis]:
        assert not np.allclose(out, exact, rtol=1e-3, atol=1e-3)  # the knob did something


def test_minimum_by_op_name_and_exact():
    x = rng.standard_normal((9, 10)).astype(np.float32)
    knob = {"op": "reduce", "knob": "sample_reduction", "rate": 3, "offset": 0}
    out = compiled(x.shape, np.inf, 0, "min", knob)(x)
    np.testing.assert_allclose(out, sampled_reduction(x, np.inf, 0, "min", 3, 0), rtol=1e-6)
    exact = compiled(x.shape, np.inf, 0, "min", {"knob": "exact"})(x)
    np.testing.assert_allclose(exact, x.min(axis=0), rtol=1e-6)


def test_nothing_kept_gives_init():
    # One element along the axis, and it is the skipped one.
    x = rng.standard_normal((1, 6)).astype(np.float32)
    out = compiled(x.shape, 2.5, 0, "add",
                   {"knob": "sample_reduction", "rate": 2, "offset": 0})(x)
    np.testing.assert_allclose(out, np.full(6, 2.5, np.float32))


def test_tuner_configurations_of_reductions():
    assert "sample_reduction" in KINDS
    choices = knob_choices(REDUCTION_RATES)
    assert [str(k) for k in choices[:3]] == ["exact", "sample_reduction/2@0",
                                             "sample_reduction/2@1"]
    assert len(choices) == 1 + 2 + 4
    assert all(k.kind != "sample_reduction" for k in knob_choices())  # conv knobs unchanged
    config = Configuration.of({"fold": Knob("sample_reduction", 4, 2)}).to_json()
    x = rng.standard_normal((5, 22)).astype(np.float32)
    g = hpvm.TensorGraph("tuned")
    g.output(T.reduce(g.input("x", x.shape), 0.0, 1, "add", name="fold"))
    np.testing.assert_allclose(hpvm.compile(g, knobs=config)(x),
                               sampled_reduction(x, 0.0, 1, "add", 4, 2), rtol=1e-5, atol=1e-4)
    with pytest.raises(ValueError, match="unknown knob kind 'sample_rows'"):
        Knob("sample_rows", 2, 0)
    with pytest.raises(ValueError, match="expected rate >= 2 and 0 <= offset < rate"):
        Knob("sample_reduction", 2, 2)


def test_unsupported_combiners_and_ops_are_errors_naming_the_entry():
    x_shape = (4, 6)
    with pytest.raises(hpvm.HPVMError) as error:
        compiled(x_shape, 1.0, 1, "mul", {"knob": "sample_reduction", "rate": 2, "offset": 0})
    message = str(error.value) + (error.value.diagnostics or "")
    assert ("knobs[0]: op 0 of 'fold': #hpvm.knob<sample_reduction> expects a combiner that "
            "is one arith.addf") in message
    assert "found 'arith.mulf'" in message
    with pytest.raises(hpvm.HPVMError) as error:
        compiled(x_shape, 0.0, 1, "add", {"knob": "sample_filter", "rate": 2, "offset": 0})
    assert "knobs[0]: 'fold' holds 0 hpvm.tensor.conv2d ops" in \
        str(error.value) + (error.value.diagnostics or "")
