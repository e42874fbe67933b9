"""The accuracy tuner: which approximation knobs to give which convolutions of a tensor
graph, so that it runs fastest within a loss of quality (ApproxTuner's two modes).

* Empirical: measure the quality and the time of candidate configurations on calibration
  inputs, and keep the best within each target.
* Predictive: measure each knob alone on each op once, predict a configuration's quality
  loss as the sum of its knobs' losses and its time from its knobs' savings, then measure
  only the most promising predictions.

Either way the result is the Pareto set of measured (speedup, quality loss) configurations
and, per quality-loss target, the fastest configuration that met it on the calibration
inputs. What is measured is behind `Evaluator`: `GraphEvaluator` compiles and runs a
`TensorGraph` (every configuration is a knob file given to `hpvm.compile`); tests use a
synthetic one whose optimum is known.
"""

from __future__ import annotations

import itertools
import random
import time
from dataclasses import dataclass
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple, Union

import numpy as np

# The knobs of a convolution and their rates (ApproxTuner's: perforation skips one row or
# column in 2 or 3, filter sampling one element in 2 or 4), every offset of each.
RATES = {"perforate_rows": (2, 3), "perforate_cols": (2, 3), "sample_filter": (2, 4)}

# The knob of a reduction (hpvm.tensor.reduce whose combiner is a sum, a maximum or a
# minimum): one element in 2 or 4 along the axis skipped, a sum rescaled. Not among
# knob_choices()'s defaults, which are a convolution's: knob_choices(REDUCTION_RATES).
REDUCTION_RATES = {"sample_reduction": (2, 4)}

# The knobs of a product (hpvm.tensor.mul in f32): its operands stored in IEEE half precision
# or bfloat16, products summed in f32, the result rounded to the format. No rate, no offset.
PRECISIONS = ("fp16", "bf16")

#: Every knob kind hpvm-apply-knobs accepts.
KINDS = ("exact",) + tuple(RATES) + tuple(REDUCTION_RATES) + PRECISIONS


def precision_choices() -> List["Knob"]:
    """The knobs of a product, exact first."""
    return [EXACT] + [Knob(kind) for kind in PRECISIONS]


@dataclass(frozen=True)
class Knob:
    kind: str  # one of KINDS
    rate: int = 0
    offset: int = 0

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"unknown knob kind {self.kind!r}; expected one of {', '.join(KINDS)}")
        if self.takes_rate and not (self.rate >= 2 and 0 <= self.offset < self.rate):
            raise ValueError(f"knob {self.kind}: expected rate >= 2 and 0 <= offset < rate, "
                             f"found rate {self.rate}, offset {self.offset}")
        if not self.takes_rate and (self.rate or self.offset):
            raise ValueError(f"knob {self.kind}: takes no rate or offset, found rate "
                             f"{self.rate}, offset {self.offset}")

    @property
    def takes_rate(self) -> bool:
        """The sampling knobs skip one element in `rate`; exact and the precisions do not."""
        return self.kind != "exact" and self.kind not in PRECISIONS

    def __str__(self) -> str:
        return f"{self.kind}/{self.rate}@{self.offset}" if self.takes_rate else self.kind


EXACT = Knob("exact")


def knob_choices(rates: Dict[str, Sequence[int]] = RATES) -> List[Knob]:
    """Every knob of a convolution (or of the kinds of `rates`), exact first."""
    return [EXACT] + [Knob(kind, rate, offset) for kind, rates_of_kind in rates.items()
                      for rate in rates_of_kind for offset in range(rate)]


@dataclass(frozen=True)
class Configuration:
    """A knob per op (leaf name -> knob); ops not named run exactly."""
    knobs: Tuple[Tuple[str, Knob], ...] = ()

    @staticmethod
    def of(mapping: Dict[str, Knob]) -> "Configuration":
        return Configuration(tuple(sorted((n, k) for n, k in mapping.items() if k != EXACT)))

    def as_dict(self) -> Dict[str, Knob]:
        return dict(self.knobs)

    def to_json(self, info: Optional[dict] = None) -> dict:
        """The configuration file `hpvm-apply-knobs` and `hpvm-cc --knobs` read."""
        entries = [{"node": node, "knob": knob.kind, "rate": knob.rate, "offset": knob.offset}
                   if knob.takes_rate else {"node": node, "knob": knob.kind}
                   for node, knob in self.knobs]
        out = {"knobs": entries}
        if info:
            out["info"] = info
        return out

    def __str__(self) -> str:
        return ", ".join(f"{n}: {k}" for n, k in self.knobs) or "exact"


class Evaluator:
    """What the tuner measures: the quality loss of a configuration (percentage points of
    the quality metric against the exact configuration, on calibration inputs) and its time
    (seconds per run). `nodes` are the ops that take knobs. Where the program carries an
    end-to-end error budget (`budget`: relative L1, relative L2 of its outputs against the
    exact ones, the `hpvm.error` of its root), `output_error` measures a configuration's."""

    nodes: Sequence[str] = ()
    budget: Optional[Tuple[float, float]] = None
    #: Budgets of inner nodes (leaf name -> (l1, l2) of that node's output), measured by
    #: `node_errors`.
    node_budgets: Dict[str, Tuple[float, float]] = {}

    def loss(self, configuration: Configuration) -> float:
        raise NotImplementedError

    def seconds(self, configuration: Configuration) -> float:
        raise NotImplementedError

    def output_error(self, configuration: Configuration) -> Tuple[float, float]:
        raise NotImplementedError

    def node_errors(self, configuration: Configuration) -> Dict[str, Tuple[float, float]]:
        raise NotImplementedError


def _as_list(outputs) -> List[np.ndarray]:
    """A compiled graph's outputs as a list (a graph of one output returns the array)."""
    return list(outputs) if isinstance(outputs, (tuple, list)) else [outputs]


def within(error: Tuple[float, float], budget: Tuple[float, float]) -> bool:
    """Both the relative L1 and L2 errors at most the budget's."""
    return error[0] <= budget[0] and error[1] <= budget[1]


def relative_errors(approx: Sequence[np.ndarray], exact: Sequence[np.ndarray]) -> Tuple[float, float]:
    """(sum |a - e| / sum |e|, ||a - e||_2 / ||e||_2) over all outputs together (0 where the
    exact outputs are all zero and the approximate ones equal them; inf where they differ)."""
    a = np.concatenate([np.asarray(x, np.float64).ravel() for x in approx])
    e = np.concatenate([np.asarray(x, np.float64).ravel() for x in exact])
    d = a - e
    ratios = []
    for num, den in ((np.abs(d).sum(), np.abs(e).sum()),
                     (np.sqrt((d * d).sum()), np.sqrt((e * e).sum()))):
        ratios.append(float(num / den) if den > 0 else (0.0 if num == 0 else float("inf")))
    return ratios[0], ratios[1]


@dataclass
class Measured:
    configuration: Configuration
    loss: float  # quality loss on the calibration inputs (percentage points)
    speedup: float  # exact time / this configuration's time
    predicted_loss: Optional[float] = None
    predicted_speedup: Optional[float] = None
    # Against the program's end-to-end budget, where it has one: the relative (L1, L2)
    # error of the outputs, and whether both are within the budget.
    error: Optional[Tuple[float, float]] = None
    within_budget: bool = True
    # The relative (L1, L2) error of each node that has a budget of its own.
    node_errors: Optional[Dict[str, Tuple[float, float]]] = None

    def as_dict(self) -> dict:
        return {"configuration": self.configuration.to_json()["knobs"], "loss": self.loss,
                "speedup": self.speedup, "predicted_loss": self.predicted_loss,
                "predicted_speedup": self.predicted_speedup,
                "error": list(self.error) if self.error else None,
                "node_errors": ({n: list(e) for n, e in self.node_errors.items()}
                                if self.node_errors else None),
                "within_budget": self.within_budget}


def pareto(results: Iterable[Measured]) -> List[Measured]:
    """The measured configurations within the program's error budget that no other is both
    faster and more accurate than, by increasing loss."""
    front: List[Measured] = []
    for r in sorted((r for r in results if r.within_budget), key=lambda r: (r.loss, -r.speedup)):
        if not front or r.speedup > front[-1].speedup:
            front.append(r)
    return front


def best_within(results: Iterable[Measured], target: float) -> Optional[Measured]:
    """The fastest measured configuration whose loss is at most `target` (and which is
    within the program's error budget)."""
    fitting = [r for r in results if r.loss <= target and r.within_budget]
    return max(fitting, key=lambda r: r.speedup) if fitting else None


class Tuner:
    """Searches the configurations of `evaluator`'s ops within a budget of measurements.
    `choices`: the knobs every op may take (default: a convolution's, knob_choices()), or a
    dict from op to its own (a product's are precision_choices()); exact first."""

    def __init__(self, evaluator: Evaluator,
                 choices: Union[None, Sequence[Knob], Dict[str, Sequence[Knob]]] = None,
                 seed: int = 0, log: Callable[[str], None] = lambda _: None):
        self.evaluator = evaluator
        if isinstance(choices, dict):
            missing = [n for n in evaluator.nodes if n not in choices]
            if missing:
                raise ValueError(f"no knob choices for {', '.join(missing)}")
            self.choices = {n: list(choices[n]) for n in evaluator.nodes}
        else:
            common = list(choices or knob_choices())
            self.choices = {n: common for n in evaluator.nodes}
        self.random = random.Random(seed)
        self.log = log
        self.measured: Dict[Configuration, Measured] = {}

    # -- measurements ------------------------------------------------------------------
    def measure(self, configuration: Configuration, **predicted) -> Measured:
        if configuration not in self.measured:
            loss = self.evaluator.loss(configuration)
            # The exact configuration timed again next to each one: on a shared machine the
            # ratio of neighbouring measurements is what holds.
            seconds = self.evaluator.seconds(configuration)
            exact = self.evaluator.seconds(Configuration()) if configuration.knobs else seconds
            speedup = exact / seconds
            result = Measured(configuration, loss, speedup)
            budget = self.evaluator.budget
            if budget is not None:
                result.error = self.evaluator.output_error(configuration)
                result.within_budget = within(result.error, budget)
            if self.evaluator.node_budgets:
                result.node_errors = self.evaluator.node_errors(configuration)
                result.within_budget &= all(
                    within(result.node_errors[n], b)
                    for n, b in self.evaluator.node_budgets.items())
            self.measured[configuration] = result
            self.log(f"measured {configuration}: loss {loss:.3f}, speedup {speedup:.2f}x" +
                     ("" if result.error is None else
                      f", error L1 {result.error[0]:.2e} L2 {result.error[1]:.2e}" +
                      ("" if result.within_budget else " (over the budget)")))
        result = self.measured[configuration]
        for key, value in predicted.items():
            setattr(result, key, value)
        return result

    def space_size(self) -> int:
        return int(np.prod([len(self.choices[n]) for n in self.evaluator.nodes]))

    def all_configurations(self) -> Iterable[Configuration]:
        nodes = list(self.evaluator.nodes)
        for knobs in itertools.product(*(self.choices[n] for n in nodes)):
            yield Configuration.of(dict(zip(nodes, knobs)))

    # -- empirical -----------------------------------------------------------------------
    def empirical(self, budget: int, max_loss: float) -> List[Measured]:
        """Measures up to `budget` configurations: all of them when the space is that small;
        else the exact one, the single-op knobs (in random order), then random combinations
        of the knobs whose loss alone was at most `max_loss`. Returns everything measured."""
        self.measure(Configuration())
        if self.space_size() <= budget:
            for configuration in self.all_configurations():
                self.measure(configuration)
            return list(self.measured.values())
        nodes = list(self.evaluator.nodes)
        singles = [Configuration.of({n: k}) for n in nodes for k in self.choices[n]
                   if k != EXACT]
        self.random.shuffle(singles)
        for configuration in singles:
            if len(self.measured) >= budget:
                return list(self.measured.values())
            self.measure(configuration)
        usable = {n: [EXACT] + [c.knobs[0][1] for c, r in self.measured.items()
                                if len(c.knobs) == 1 and c.knobs[0][0] == n and
                                r.loss <= max_loss]
                  for n in nodes}
        size = int(np.prod([len(usable[n]) for n in nodes]))
        if size <= 16 * budget:  # enumerate them, in random order
            combinations = sorted({Configuration.of(dict(zip(nodes, picks)))
                                   for picks in itertools.product(*(usable[n] for n in nodes))},
                                  key=str)
            self.random.shuffle(combinations)
        else:  # too many: draw them
            combinations = (Configuration.of({n: self.random.choice(usable[n]) for n in nodes})
                            for _ in range(16 * budget))
        for configuration in combinations:
            if len(self.measured) >= budget:
                break
            self.measure(configuration)
        return list(self.measured.values())

    # -- predictive ----------------------------------------------------------------------
    def profile(self) -> Dict[Tuple[str, Knob], Measured]:
        """Each knob alone on each op, measured once."""
        self.measure(Configuration())
        return {(n, k): self.measure(Configuration.of({n: k}))
                for n in self.evaluator.nodes for k in self.choices[n] if k != EXACT}

    def predict(self, configuration: Configuration,
                profile: Dict[Tuple[str, Knob], Measured]) -> Tuple[float, float]:
        """(loss, speedup) of a configuration from its knobs measured alone: losses add, and
        so do the time savings (as shares of the exact time)."""
        loss, saved = 0.0, 0.0
        for node, knob in configuration.knobs:
            alone = profile[(node, knob)]
            loss += max(alone.loss, 0.0)
            saved += 1.0 - 1.0 / alone.speedup
        return loss, 1.0 / max(1.0 - saved, 1e-12)

    def predictive(self, targets: Sequence[float], validate: int) -> List[Measured]:
        """Profiles every knob alone, predicts every configuration, and measures for each
        target the `validate` predicted fastest among those predicted within it."""
        profile = self.profile()
        predictions = [(c, *self.predict(c, profile)) for c in self.all_configurations()]
        for target in targets:
            fitting = sorted((p for p in predictions if p[1] <= target), key=lambda p: -p[2])
            for configuration, loss, speedup in fitting[:validate]:
                self.measure(configuration, predicted_loss=loss, predicted_speedup=speedup)
        return list(self.measured.values())


# -- a compiled tensor graph as the thing measured --------------------------------------------

def accuracy(probabilities: np.ndarray, labels: np.ndarray) -> float:
    """Classification accuracy in percent."""
    return 100.0 * float(np.mean(np.argmax(probabilities, axis=1) == labels))


class GraphEvaluator(Evaluator):
    """Compiles `build()` (an hpvm.TensorGraph of one input) with each configuration's knobs
    and runs it on the calibration inputs: the loss is the exact accuracy minus this one's
    (percentage points), the time the best of `repeats` runs."""

    def __init__(self, build: Callable[[], object], nodes: Sequence[str], inputs: np.ndarray,
                 labels: np.ndarray, fuse: bool = True, repeats: int = 20,
                 quality: Callable[[np.ndarray, np.ndarray], float] = accuracy):
        self.build = build
        self.nodes = list(nodes)
        self.inputs = np.ascontiguousarray(inputs, dtype=np.float32)
        self.labels = labels
        self.fuse = fuse
        self.repeats = repeats
        self.quality = quality
        self._compiled: Dict[Configuration, object] = {}
        self._exact_quality: Optional[float] = None
        self._exact_outputs: Optional[List[np.ndarray]] = None
        # The graph's end-to-end budget (TensorGraph.error) and its nodes' budgets, checked
        # for every configuration.
        graph = build()
        self.budget = graph.error
        self.node_budgets = {name: budget for name, (_, budget) in graph.node_budgets().items()}
        self._node_names = list(self.node_budgets)
        self._probes: Dict[Configuration, object] = {}
        self._exact_nodes: Optional[List[np.ndarray]] = None

    def compiled(self, configuration: Configuration):
        import hpvm
        if configuration not in self._compiled:
            knobs = configuration.to_json() if configuration.knobs else None
            self._compiled[configuration] = hpvm.compile(self.build(), fuse=self.fuse,
                                                         knobs=knobs)
        return self._compiled[configuration]

    def outputs(self, configuration: Configuration, inputs: Optional[np.ndarray] = None):
        return self.compiled(configuration)(self.inputs if inputs is None else inputs)

    def loss(self, configuration: Configuration) -> float:
        if self._exact_quality is None:
            self._exact_quality = self.quality(self.outputs(Configuration()), self.labels)
        return self._exact_quality - self.quality(self.outputs(configuration), self.labels)

    def output_error(self, configuration: Configuration) -> Tuple[float, float]:
        if self._exact_outputs is None:
            self._exact_outputs = _as_list(self.outputs(Configuration()))
        return relative_errors(_as_list(self.outputs(configuration)), self._exact_outputs)

    def node_errors(self, configuration: Configuration) -> Dict[str, Tuple[float, float]]:
        """Each budgeted node's output against the exact one, from a probe build: the graph
        with those outputs added, unfused (every op its own leaf, as the knobs name them),
        compiled apart from the one timed."""
        import hpvm

        def probe_outputs(configuration):
            if configuration not in self._probes:
                graph = self.build()
                budgeted = [tensor for tensor, _ in graph.node_budgets().values()]
                graph.output(*budgeted)
                knobs = configuration.to_json() if configuration.knobs else None
                self._probes[configuration] = (hpvm.compile(graph, fuse=False, knobs=knobs),
                                               len(budgeted))
            run, count = self._probes[configuration]
            outputs = _as_list(run(self.inputs))
            return outputs[len(outputs) - count:]

        if self._exact_nodes is None:
            self._exact_nodes = probe_outputs(Configuration())
        approx = probe_outputs(configuration)
        return {name: relative_errors([a], [e])
                for name, a, e in zip(self._node_names, approx, self._exact_nodes)}

    def seconds(self, configuration: Configuration) -> float:
        run = self.compiled(configuration)
        run(self.inputs)  # warm: buffers, pages
        best = float("inf")
        for _ in range(self.repeats):
            start = time.perf_counter()
            run(self.inputs)
            best = min(best, time.perf_counter() - start)
        return best


def report(results: Sequence[Measured], targets: Sequence[float]) -> dict:
    """The tuner's answer as data: the Pareto set and the best configuration per target."""
    return {
        "pareto": [r.as_dict() for r in pareto(results)],
        "targets": {str(t): (best_within(results, t).as_dict()
                             if best_within(results, t) else None) for t in targets},
        "measured": len(results),
        "over_budget": sum(1 for r in results if not r.within_budget),
    }
