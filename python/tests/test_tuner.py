"""The accuracy tuner on synthetic costs with a known optimum: what it measures, what it
predicts, and what it answers per quality-loss target."""

import itertools
import json

import pytest

from hpvm.approx.tuner import (EXACT, Configuration, Evaluator, Knob, Tuner, best_within,
                               knob_choices, pareto, report)


class Additive(Evaluator):
    """Each (op, knob) costs a fixed loss and saves a fixed share of the time: losses and
    savings add, which is exactly what the predictive mode assumes."""

    def __init__(self, nodes, interaction=0.0):
        self.nodes = nodes
        self.table = {}
        for i, node in enumerate(nodes):
            for j, knob in enumerate(knob_choices()[1:]):
                loss = 0.1 + 0.37 * ((3 * i + 5 * j) % 7)
                saving = 0.05 + 0.04 * ((2 * i + 3 * j) % 5)
                self.table[(node, knob)] = (loss, saving)
        self.interaction = interaction
        self.calls = 0

    def loss(self, configuration):
        self.calls += 1
        losses = [self.table[(n, k)][0] for n, k in configuration.knobs]
        # An interaction the additive model does not know: several knobs at once cost more.
        return sum(losses) + self.interaction * max(len(losses) - 1, 0)

    def seconds(self, configuration):
        return 1.0 - sum(self.table[(n, k)][1] for n, k in configuration.knobs)


def exhaustive_best(evaluator, target):
    best = None
    for knobs in itertools.product(knob_choices(), repeat=len(evaluator.nodes)):
        c = Configuration.of(dict(zip(evaluator.nodes, knobs)))
        if evaluator.loss(c) <= target:
            speedup = 1.0 / evaluator.seconds(c)
            if best is None or speedup > best[1]:
                best = (c, speedup)
    return best


def test_the_space_and_configuration_files():
    choices = knob_choices()
    assert choices[0] == EXACT and len(choices) == 1 + (2 + 3) * 2 + (2 + 4)
    c = Configuration.of({"conv2": Knob("sample_filter", 4, 3), "conv1": EXACT})
    assert c.to_json({"speedup": 1.5}) == {
        "knobs": [{"node": "conv2", "knob": "sample_filter", "rate": 4, "offset": 3}],
        "info": {"speedup": 1.5}}
    assert str(Configuration()) == "exact"


@pytest.mark.parametrize("target", [0.5, 1.0, 2.0])
def test_empirical_search_of_a_small_space_is_exhaustive(target):
    evaluator = Additive(["conv1", "conv2"])
    tuner = Tuner(evaluator)
    results = tuner.empirical(budget=17 * 17, max_loss=target)
    assert len(results) == 17 * 17
    found = best_within(results, target)
    expected = exhaustive_best(evaluator, target)
    assert found.loss <= target
    assert found.speedup == pytest.approx(expected[1])  # the optimum (ties: any of them)


@pytest.mark.parametrize("target", [0.5, 1.0, 2.0])
def test_predictive_mode_finds_the_optimum_of_an_additive_cost_in_few_measurements(target):
    evaluator = Additive(["conv1", "conv2", "conv3"])
    tuner = Tuner(evaluator)
    results = tuner.predictive([target], validate=3)
    found = best_within(results, target)
    expected = exhaustive_best(evaluator, target)
    assert found.loss <= target
    assert found.speedup == pytest.approx(expected[1])
    # 1 exact + 16 knobs x 3 ops profiled + at most 3 validated, against 17**3 = 4913.
    assert len(tuner.measured) <= 1 + 16 * 3 + 3
    assert found.predicted_loss == pytest.approx(found.loss)


def test_predictions_that_miss_are_caught_by_validation():
    # Knobs interact: the predicted loss is too small; validation measures the truth, and
    # a configuration is only answered for a target it met when measured.
    evaluator = Additive(["conv1", "conv2"], interaction=1.5)
    tuner = Tuner(evaluator)
    results = tuner.predictive([1.0], validate=5)
    answer = best_within(results, 1.0)
    assert answer is not None and answer.loss <= 1.0
    assert any(r.predicted_loss is not None and r.loss > r.predicted_loss for r in results)


def test_empirical_search_within_a_budget_on_a_large_space():
    evaluator = Additive(["a", "b", "c", "d"])
    tuner = Tuner(evaluator, seed=3)
    results = tuner.empirical(budget=80, max_loss=2.0)
    assert len(results) == 80 and evaluator.calls == 80
    answer = best_within(results, 2.0)
    assert answer.loss <= 2.0 and answer.speedup > 1.0
    # Deterministic for a seed.
    again = Tuner(Additive(["a", "b", "c", "d"]), seed=3).empirical(budget=80, max_loss=2.0)
    assert [r.configuration for r in again] == [r.configuration for r in results]


def test_pareto_front_and_report():
    evaluator = Additive(["conv1", "conv2"])
    results = Tuner(evaluator).empirical(budget=1000, max_loss=2.0)
    front = pareto(results)
    losses = [r.loss for r in front]
    speedups = [r.speedup for r in front]
    assert losses == sorted(losses) and speedups == sorted(speedups)
    for r in results:  # nothing measured dominates a point of the front
        assert not any(r.loss <= f.loss and r.speedup > f.speedup for f in front if r is not f)
    data = report(results, [0.5, 2.0])
    json.dumps(data)  # plain data
    assert data["targets"]["2.0"]["loss"] <= 2.0
    assert data["measured"] == len(results)


class Budgeted(Additive):
    """Additive, with an end-to-end error per knob: configurations whose summed error
    exceeds the budget are never answers, however fast."""

    def __init__(self, budget):
        super().__init__(["conv1", "conv2"])
        self.budget = budget

    def output_error(self, configuration):
        error = sum(0.01 * (1 + len(k.kind) % 3) * k.rate for _, k in configuration.knobs)
        return error, error / 2


def test_configurations_beyond_the_error_budget_are_never_answers():
    evaluator = Budgeted((0.05, 1.0))
    tuner = Tuner(evaluator)
    results = tuner.empirical(budget=tuner.space_size(), max_loss=10.0)
    over = [r for r in results if not r.within_budget]
    assert over and all(r.error[0] > 0.05 for r in over)
    assert all(r.error[0] <= 0.05 for r in results if r.within_budget)
    for target in (0.5, 1.0, 2.0):
        best = best_within(results, target)
        expected = max((r for r in results if r.loss <= target and r.error[0] <= 0.05),
                       key=lambda r: r.speedup)
        assert best.configuration == expected.configuration
        # The fastest within the target alone is beyond the budget here.
        assert max((r for r in results if r.loss <= target), key=lambda r: r.speedup).speedup \
            >= best.speedup
    assert all(r.within_budget for r in pareto(results))
    assert report(results, [1.0])["over_budget"] == len(over)
    # Without a budget nothing is measured against one.
    plain = Tuner(Additive(["conv1"]))
    assert all(r.error is None and r.within_budget
               for r in plain.empirical(budget=5, max_loss=10.0))
