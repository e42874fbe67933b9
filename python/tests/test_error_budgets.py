"""Error budgets (hpvm.error) from Python: the end-to-end budget of a TensorGraph on its root,
a node's budget on its leaf, and the accuracy tuner measuring both (relative L1 / L2 of the
outputs, and of each budgeted node's output in an unfused probe build, against the exact
ones): a configuration beyond any budget is never an answer."""

import numpy as np
import pytest

import hpvm
from hpvm import tensor as T
from hpvm.approx.tuner import Knob, Tuner

rng = np.random.default_rng(29)



def test_graph_error_budget_in_the_ir():
    g = hpvm.TensorGraph("budgeted", error=(0.01, 1e-5))
    x = g.input("x", (2, 3))
    g.output(T.relu(x, name="r"))
    assert ("hpvm.internal @budgeted_root(%in0: tensor<2x3xf32>) -> (tensor<2x3xf32>) "
            "attributes {hpvm.error = #hpvm.error<l1 = 1.000000000e-02, "
            "l2 = 1.000000000e-05>}") in g.mlir()
    np.testing.assert_array_equal(hpvm.compile(g)(np.ones((2, 3), np.float32)), 1.0)
    with pytest.raises(hpvm.HPVMError, match="expected a finite l2 budget >= 0, found nan"):
        g.set_error_budget(0.1, float("nan"))


def test_relative_errors():
    from hpvm.approx.tuner import relative_errors
    exact = [np.array([3.0, -4.0]), np.array([0.0])]
    assert relative_errors(exact, exact) == (0.0, 0.0)
    l1, l2 = relative_errors([np.array([3.0, -4.0]), np.array([1.0])], exact)
    assert l1 == pytest.approx(1 / 7) and l2 == pytest.approx(1 / 5)
    assert relative_errors([np.zeros(2)], [np.zeros(2)]) == (0.0, 0.0)
    assert relative_errors([np.ones(2)], [np.zeros(2)]) == (float("inf"), float("inf"))


def test_node_error_budgets():
    # conv (5x5 on 12x12) -> relu -> pool: a budget on the convolution's own output and a
    # looser one end to end. Perforation at rate 2 leaves half the rows interpolated: far
    # beyond a 1e-6 budget on the convolution, and sampling as well.
    from hpvm.approx.tuner import GraphEvaluator

    local = np.random.default_rng(5)
    w = local.standard_normal((4, 1, 5, 5)).astype(np.float32)

    def build(node_l1=1e-6):
        g = hpvm.TensorGraph("probe", error=(10.0, 10.0))
        x = g.input("x", (2, 1, 12, 12))
        c = T.conv2d(x, g.constant(w, "w"), name="conv")
        g.set_error_budget(node_l1, 10.0, node=c)
        g.output(T.max_pool(T.relu(c, name="relu"), (2, 2), strides=(2, 2), name="pool"))
        return g

    text = build().mlir()
    assert ("hpvm.leaf @conv(%a0: tensor<2x1x12x12xf32>) -> (tensor<2x4x8x8xf32>) attributes "
            "{hpvm.error = #hpvm.error<l1 = 1.000000000e-06, l2 = 1.000000000e+01>}") in text
    assert build().node_budgets()["conv"][1] == (1e-6, 10.0)
    inputs = local.standard_normal((2, 1, 12, 12)).astype(np.float32)
    quality = lambda outputs, labels: 0.0  # noqa: E731
    tight = GraphEvaluator(build, ["conv"], inputs, None, repeats=1, quality=quality)
    assert tight.node_budgets == {"conv": (1e-6, 10.0)} and tight.budget == (10.0, 10.0)
    choices = [Knob("exact"), Knob("perforate_rows", 2, 0), Knob("sample_filter", 2, 1)]
    results = Tuner(tight, choices=choices).empirical(budget=3, max_loss=1.0)
    by_knob = {str(r.configuration): r for r in results}
    assert by_knob["exact"].within_budget and by_knob["exact"].node_errors["conv"] == (0.0, 0.0)
    for name in ("conv: perforate_rows/2@0", "conv: sample_filter/2@1"):
        assert not by_knob[name].within_budget
        assert by_knob[name].node_errors["conv"][0] > 1e-6
    # A loose node budget admits them (the end-to-end one is loose too).
    loose = GraphEvaluator(lambda: build(node_l1=5.0), ["conv"], inputs, None, repeats=1,
                           quality=quality)
    results = Tuner(loose, choices=choices).empirical(budget=3, max_loss=1.0)
    assert all(r.within_budget for r in results)
    with pytest.raises(hpvm.HPVMError, match="is a graph input, not the result of an op"):
        g = hpvm.TensorGraph("bad")
        g.set_error_budget(0.1, 0.1, node=g.input("x", (2,)))


def test_an_op_named_like_its_graph_is_renamed_with_a_warning():
    g = hpvm.TensorGraph("fc")
    x = g.input("x", (2, 3))
    with pytest.warns(UserWarning, match="the op name 'fc' is the graph's own symbol; its leaf "
                                         "is named 'fc_1'"):
        y = T.relu(x, name="fc")
    assert y.op.name == "fc_1"
