"""Search strategies of the performance auto-tuner over a discrete space of choices, with a
measured cost (seconds) to minimize and a budget of evaluations:

* `random_search`: uniform samples of the space, without repeats;
* `bandit_tree`: SRTuner-style Monte-Carlo tree search over the sequence of choices (one
  tree level per parameter, UCB1 at each node, rewards from the costs seen so far);
* `surrogate_gradient`: Mind Mappings-style: a small differentiable model of the cost
  (a two-layer network in NumPy) is fitted to the samples; gradient steps in the relaxed
  space (each parameter a number in [0, 1]) from the best points found move toward lower
  predicted cost, and are projected back to the nearest legal choice.

Every strategy is deterministic for a seed, never evaluates a point twice, and returns the
history of (point, cost) in evaluation order; `best_so_far` turns it into the curve the
tuning comparison plots.
"""

from __future__ import annotations

import itertools
import math
import random
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

Point = Tuple[int, ...]  # an index into each parameter's choices


@dataclass(frozen=True)
class Parameter:
    name: str
    choices: Tuple[object, ...]


class Space:
    """Named parameters, each with its list of choices; `legal` may exclude points."""

    def __init__(self, parameters: Sequence[Parameter],
                 legal: Callable[[Dict[str, object]], bool] = lambda _: True):
        self.parameters = list(parameters)
        self.legal_values = legal

    def size(self) -> int:
        return math.prod(len(p.choices) for p in self.parameters)

    def values(self, point: Point) -> Dict[str, object]:
        return {p.name: p.choices[i] for p, i in zip(self.parameters, point)}

    def legal(self, point: Point) -> bool:
        return self.legal_values(self.values(point))

    def all_points(self):
        ranges = [range(len(p.choices)) for p in self.parameters]
        return (point for point in itertools.product(*ranges) if self.legal(point))

    def random_point(self, rng: random.Random) -> Point:
        for _ in range(1000):
            point = tuple(rng.randrange(len(p.choices)) for p in self.parameters)
            if self.legal(point):
                return point
        raise ValueError("no legal point found in 1000 random draws")


History = List[Tuple[Point, float]]


class _Evaluations:
    """Evaluates points once each, within the budget."""

    def __init__(self, space: Space, cost: Callable[[Dict[str, object]], float], budget: int):
        self.space, self.cost, self.budget = space, cost, budget
        self.history: History = []
        self.seen: Dict[Point, float] = {}

    def full(self) -> bool:
        return len(self.history) >= self.budget or len(self.seen) >= self.space.size()

    def __call__(self, point: Point) -> float:
        if point not in self.seen:
            value = float(self.cost(self.space.values(point)))
            self.seen[point] = value
            self.history.append((point, value))
        return self.seen[point]


def random_search(space: Space, cost, budget: int, seed: int = 0) -> History:
    rng = random.Random(seed)
    evaluate = _Evaluations(space, cost, budget)
    attempts = 0
    while not evaluate.full() and attempts < 100 * budget:
        attempts += 1
        point = space.random_point(rng)
        if point not in evaluate.seen:
            evaluate(point)
    return evaluate.history


def bandit_tree(space: Space, cost, budget: int, seed: int = 0,
                exploration: float = 0.7) -> History:
    """Monte-Carlo tree search: a path from the root picks one choice per parameter (UCB1
    on the mean reward of each child, unvisited children first); the reward of a complete
    point is its rank among the costs seen so far (1 best, 0 worst), so that the scale of
    the costs does not matter."""
    rng = random.Random(seed)
    evaluate = _Evaluations(space, cost, budget)
    visits: Dict[Point, int] = {}
    totals: Dict[Point, float] = {}
    n = len(space.parameters)
    stuck = 0
    while not evaluate.full() and stuck < 50:
        prefix: Point = ()
        for depth in range(n):
            children = [prefix + (i,) for i in range(len(space.parameters[depth].choices))]
            unvisited = [c for c in children if c not in visits]
            if unvisited:
                prefix = rng.choice(unvisited)
                # The rest at random: a rollout.
                while len(prefix) < n:
                    prefix += (rng.randrange(len(space.parameters[len(prefix)].choices)),)
                break
            parent = visits.get(prefix, 1) if prefix else max(1, len(evaluate.history))
            prefix = max(children, key=lambda c: totals[c] / visits[c] + exploration *
                         math.sqrt(math.log(parent) / visits[c]) + 1e-9 * rng.random())
        point = prefix
        if not space.legal(point) or point in evaluate.seen:
            stuck += 1
            if point in evaluate.seen:  # revisit: count it, so the search moves on
                reward = _rank(evaluate.seen[point], evaluate.history)
                _backpropagate(point, reward, visits, totals)
            else:
                _backpropagate(point, 0.0, visits, totals)
            continue
        stuck = 0
        value = evaluate(point)
        _backpropagate(point, _rank(value, evaluate.history), visits, totals)
    # Never short of the budget: the rest at random (while unseen points turn up).
    for _ in range(100 * budget):
        if evaluate.full():
            break
        point = space.random_point(rng)
        if point not in evaluate.seen:
            evaluate(point)
    return evaluate.history


def _rank(value: float, history: History) -> float:
    if len(history) < 2:
        return 0.5
    worse = sum(1 for _, c in history if c > value)
    return worse / (len(history) - 1)


def _backpropagate(point: Point, reward: float, visits, totals) -> None:
    for depth in range(1, len(point) + 1):
        prefix = point[:depth]
        visits[prefix] = visits.get(prefix, 0) + 1
        totals[prefix] = totals.get(prefix, 0.0) + reward


class _Surrogate:
    """A two-layer network (tanh hidden layer) mapping a relaxed point in [0, 1]^d to the
    predicted log cost, fitted by full-batch gradient descent."""

    def __init__(self, dimensions: int, hidden: int, rng: np.random.Generator):
        self.w1 = rng.normal(0, 1.0, (dimensions, hidden))
        self.b1 = np.zeros(hidden)
        self.w2 = rng.normal(0, 1.0 / math.sqrt(hidden), hidden)
        self.b2 = 0.0

    def predict(self, x: np.ndarray) -> np.ndarray:
        return np.tanh(x @ self.w1 + self.b1) @ self.w2 + self.b2

    def fit(self, x: np.ndarray, y: np.ndarray, steps: int = 400, rate: float = 0.05) -> None:
        for _ in range(steps):
            h = np.tanh(x @ self.w1 + self.b1)
            error = h @ self.w2 + self.b2 - y
            g_out = 2 * error / len(y)
            g_w2 = h.T @ g_out
            g_b2 = g_out.sum()
            g_h = np.outer(g_out, self.w2) * (1 - h * h)
            self.w1 -= rate * (x.T @ g_h)
            self.b1 -= rate * g_h.sum(axis=0)
            self.w2 -= rate * g_w2
            self.b2 -= rate * g_b2

    def gradient(self, x: np.ndarray) -> np.ndarray:
        h = np.tanh(x @ self.w1 + self.b1)
        return self.w1 @ (self.w2 * (1 - h * h))


def surrogate_gradient(space: Space, cost, budget: int, seed: int = 0, initial: int = 0,
                       steps: int = 20, step_size: float = 0.08) -> History:
    """Random samples first (a sixth of the budget, at least 4), then rounds of: fit the
    surrogate to (relaxed point, log cost) of everything measured; from the best points
    (and a random one), follow the negative gradient of the predicted cost in [0, 1]^d,
    projecting to the nearest legal unseen choice after each step; measure the first new
    point each descent reaches."""
    rng = random.Random(seed)
    nrng = np.random.default_rng(seed)
    evaluate = _Evaluations(space, cost, budget)
    sizes = np.array([len(p.choices) for p in space.parameters], dtype=float)
    relax = lambda point: (np.array(point, dtype=float) + 0.5) / sizes  # noqa: E731
    project = lambda x: tuple(int(v) for v in np.clip(np.floor(x * sizes), 0, sizes - 1))  # noqa: E731
    for _ in range(max(4, initial or budget // 6)):
        if evaluate.full():
            break
        point = space.random_point(rng)
        if point not in evaluate.seen:
            evaluate(point)
    model = _Surrogate(len(sizes), 16, nrng)
    misses = 0
    while not evaluate.full() and misses < 100:
        points = [p for p, _ in evaluate.history]
        x = np.array([relax(p) for p in points])
        y = np.log(np.array([c for _, c in evaluate.history]))
        y = (y - y.mean()) / (y.std() + 1e-9)
        model.fit(x, y)
        starts = [p for p, _ in sorted(evaluate.history, key=lambda pc: pc[1])[:3]]
        starts.append(space.random_point(rng))
        found = None
        for start in starts:
            current = relax(start) + nrng.normal(0, 0.02, len(sizes))
            for _ in range(steps):
                current = np.clip(current - step_size * model.gradient(current), 0, 1)
                candidate = project(current)
                if candidate not in evaluate.seen and space.legal(candidate):
                    found = candidate
                    break
            if found:
                break
        if found is None:  # every descent stayed on measured points: explore
            found = space.random_point(rng)
            if found in evaluate.seen:
                misses += 1
                continue
        misses = 0
        evaluate(found)
    return evaluate.history


STRATEGIES = {"random": random_search, "bandit": bandit_tree, "surrogate": surrogate_gradient}


def best_so_far(history: History) -> List[float]:
    best, curve = math.inf, []
    for _, value in history:
        best = min(best, value)
        curve.append(best)
    return curve


def exhaustive(space: Space, cost) -> Tuple[Optional[Point], float]:
    best, value = None, math.inf
    for point in space.all_points():
        c = cost(space.values(point))
        if c < value:
            best, value = point, c
    return best, value
