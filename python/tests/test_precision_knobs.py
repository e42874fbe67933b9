"""The precision knobs from Python: hpvm.compile(graph, knobs=...) puts #hpvm.knob<fp16> or
<bf16> on an hpvm.tensor.mul, and the compiled product reads its operands stored in that
format (a constant converted at compile time, an input where the product runs), sums in f32
and rounds its result (after bias and activation) to the format. Checked against NumPy:
np.float16 for fp16, and a round-to-nearest-even on the f32 bits for bfloat16."""

import numpy as np
import pytest

import hpvm
from hpvm import tensor as T
from hpvm.approx.tuner import (EXACT, PRECISIONS, Configuration, Evaluator, Knob, Tuner,
                               knob_choices, precision_choices)

rng = np.random.default_rng(23)


def to_bf16(x):
    """x (f32) rounded to bfloat16 (to nearest, ties to even) and widened back."""
    bits = np.ascontiguousarray(x, np.float32).view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
    return rounded.astype(np.uint32).view(np.float32)


ROUND = {"fp16": lambda x: np.asarray(x, np.float32).astype(np.float16).astype(np.float32),
         "bf16": to_bf16}


def product(m, k, n, knob, bias=False, relu=False, constant_weights=True, batch=None):
    g = hpvm.TensorGraph("dense")
    shape = (m, k) if batch is None else (batch, m, k)
    x = g.input("x", shape)
    w_shape = (k, n) if batch is None else (batch, k, n)
    w_value = rng.standard_normal(w_shape).astype(np.float32)
    w = g.constant(w_value, "w") if constant_weights else g.input("w", w_shape)
    h = T.matmul(x, w, name="fc")
    b_value = rng.standard_normal((1, n)).astype(np.float32)
    if bias:
        h = T.add(h, g.constant(b_value, "b"), name="fc_bias")
    if relu:
        h = T.relu(h, name="fc_relu")
    g.output(h)
    knobs = None if knob is None else {"knobs": [{"node": "fc", "knob": knob}]}
    return hpvm.compile(g, knobs=knobs, fuse=True), w_value, b_value


@pytest.mark.parametrize("knob", PRECISIONS)
@pytest.mark.parametrize("m,k,n", [(1, 1, 1), (3, 37, 21), (1, 1024, 300), (17, 64, 40)])
@pytest.mark.parametrize("bias,relu", [(False, False), (True, True)])
def test_product_in_half_storage_matches_numpy(knob, m, k, n, bias, relu):
    run, w, b = product(m, k, n, knob, bias, relu)
    x = (rng.standard_normal((m, k)) * 3).astype(np.float32)
    got = run(x)
    round_ = ROUND[knob]
    exact = round_(x).astype(np.float64) @ round_(w).astype(np.float64)
    if bias:
        exact = exact + b
    if relu:
        exact = np.maximum(exact, 0.0)
    # Every result is a value of the format...
    np.testing.assert_array_equal(round_(got), got)
    # ...within f32 summation error plus half an ulp of the format of the exact result.
    terms = np.abs(round_(x)).astype(np.float64) @ np.abs(round_(w)).astype(np.float64)
    half_ulp = 2.0 ** -11 if knob == "fp16" else 2.0 ** -8
    bound = k * 2.0 ** -23 * (terms + (abs(b) if bias else 0)) * 2 + half_ulp * np.abs(exact)
    assert np.all(np.abs(got - exact) <= bound + 1e-30)
    # And it is not the f32 product: the knob did something.
    if k > 1 and not relu:
        f32 = x.astype(np.float64) @ w.astype(np.float64) + (b if bias else 0.0)
        assert not np.allclose(got, f32, rtol=1e-6, atol=0)


@pytest.mark.parametrize("knob", PRECISIONS)
def test_inputs_not_constant_and_batches(knob):
    run, _, _ = product(4, 9, 5, knob, constant_weights=False, batch=3)
    x = rng.standard_normal((3, 4, 9)).astype(np.float32)
    w = rng.standard_normal((3, 9, 5)).astype(np.float32)
    got = run(x, w)
    round_ = ROUND[knob]
    exact = np.matmul(round_(x).astype(np.float64), round_(w).astype(np.float64))
    np.testing.assert_array_equal(round_(got), got)
    np.testing.assert_allclose(got, exact, rtol=2 ** -7 if knob == "bf16" else 2 ** -10,
                               atol=1e-6)


def test_fp16_overflow_is_infinity():
    run, w, _ = product(1, 2, 1, "fp16")
    got = run(np.array([[1.0e5, 0.0]], np.float32))  # 1e5 is beyond fp16's 65504
    assert np.isinf(got[0, 0]) or w[0, 0] == 0.0


def test_precision_knob_refusals():
    g = hpvm.TensorGraph("convolution")
    x = g.input("x", (1, 1, 6, 6))
    g.output(T.conv2d(x, g.constant(np.ones((2, 1, 3, 3), np.float32), "w"), name="conv"))
    with pytest.raises(hpvm.HPVMError, match=r"#hpvm.knob<fp16> applies to hpvm.tensor.mul only"):
        hpvm.compile(g, knobs={"knobs": [{"node": "conv", "op": 0, "knob": "fp16"}]})
    with pytest.raises(ValueError, match="takes no rate or offset"):
        Knob("bf16", 2, 0)
    assert str(Knob("bf16")) == "bf16"
    assert Configuration.of({"fc": Knob("fp16")}).to_json() == {
        "knobs": [{"node": "fc", "knob": "fp16"}]}


class PerNode(Evaluator):
    """conv takes the convolution knobs, fc the precisions: each knob has a fixed loss and
    saving, so the best configuration within a target is known."""

    def __init__(self):
        self.nodes = ["conv", "fc"]
        self.table = {("conv", k): (0.3 * (i % 4), 0.05 * (i % 5))
                      for i, k in enumerate(knob_choices()[1:], 1)}
        self.table[("fc", Knob("fp16"))] = (0.2, 0.15)
        self.table[("fc", Knob("bf16"))] = (0.9, 0.16)

    def loss(self, configuration):
        return sum(self.table[(n, k)][0] for n, k in configuration.knobs)

    def seconds(self, configuration):
        return 1.0 - sum(self.table[(n, k)][1] for n, k in configuration.knobs)


def test_tuner_with_choices_per_op():
    evaluator = PerNode()
    choices = {"conv": knob_choices(), "fc": precision_choices()}
    tuner = Tuner(evaluator, choices=choices)
    assert tuner.space_size() == len(knob_choices()) * 3
    configurations = list(tuner.all_configurations())
    assert len(configurations) == tuner.space_size()
    assert all(k.kind in PRECISIONS for c in configurations for n, k in c.knobs if n == "fc")
    results = tuner.empirical(budget=tuner.space_size(), max_loss=1.0)
    best = max((r for r in results if r.loss <= 0.5), key=lambda r: r.speedup)
    assert best.configuration.as_dict().get("fc") == Knob("fp16")
    with pytest.raises(ValueError, match="no knob choices for fc"):
        Tuner(evaluator, choices={"conv": knob_choices()})
    assert precision_choices()[0] == EXACT

