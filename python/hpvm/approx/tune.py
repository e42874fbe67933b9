"""hpvm-approx-tune: tunes the approximation knobs of the digits CNN (hpvm.approx.digits)
for quality-loss targets, and prints ApproxHPVM's table: per target, the configuration
found, its measured speedup on this CPU and its accuracy on held-out data.

    hpvm-approx-tune                              # predictive mode, targets 0.5, 1, 2 (%)
    hpvm-approx-tune --mode empirical --budget 300
    hpvm-approx-tune --error-budget 0.05,0.05     # outputs within 5% of the exact ones
    hpvm-approx-tune --out results.json --knobs-dir knobs/   # the answers as knob files

The configurations it writes are what `hpvm-cc --knobs=FILE` and `hpvm.compile(knobs=...)`
read.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time


from . import digits
from .tuner import (Configuration, GraphEvaluator, Tuner, accuracy, pareto,
                    report)


def confirm_speedup(evaluator: GraphEvaluator, configuration: Configuration,
                    rounds: int = 7) -> float:
    """The speedup of an answer measured again: the median of `rounds` ratios, each of the
    exact configuration and this one timed one after the other (the search's single
    measurement may have met a quiet or a busy moment of a shared machine)."""
    if not configuration.knobs:
        return 1.0
    ratios = sorted(evaluator.seconds(Configuration()) / evaluator.seconds(configuration)
                    for _ in range(rounds))
    return ratios[rounds // 2]


def _arguments(argv):
    """The command line: (its arguments, the quality-loss targets, the error budget or
    None); exits with a usage message on a wrong one."""
    parser = argparse.ArgumentParser(prog="hpvm-approx-tune",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=["predictive", "empirical"], default="predictive")
    parser.add_argument("--targets", default="0.5,1,2",
                        help="quality-loss targets, percentage points of accuracy")
    parser.add_argument("--budget", type=int, default=300,
                        help="empirical mode: configurations measured at most")
    parser.add_argument("--validate", type=int, default=3,
                        help="predictive mode: predictions measured per target")
    parser.add_argument("--repeats", type=int, default=20, help="timing runs per measurement")
    parser.add_argument("--confirm", type=int, default=5,
                        help="candidates per target timed again before answering")
    parser.add_argument("--error-budget", metavar="L1,L2",
                        help="the end-to-end error budget (relative L1 and L2 of the "
                             "probabilities against the exact ones) on the graph: "
                             "configurations beyond it are never answers")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", help="write the report (JSON) here")
    parser.add_argument("--knobs-dir", help="write the configuration found per target here")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args(argv)
    try:
        targets = [float(t) for t in args.targets.split(",") if t]
    except ValueError:
        parser.error(f"--targets: expected numbers separated by commas, found {args.targets!r}")

    budget = None
    if args.error_budget is not None:
        try:
            budget = tuple(float(b) for b in args.error_budget.split(","))
        except ValueError:
            budget = ()
        if len(budget) != 2 or not all(b >= 0 for b in budget):
            parser.error(f"--error-budget: expected two numbers >= 0 (L1,L2), found "
                         f"{args.error_budget!r}")
    return args, targets, budget


def main(argv=None) -> int:
    args, targets, budget = _arguments(argv)
    data = digits.load_data()
    calibration_x, calibration_y = data["calibration"]
    test_x, test_y = data["test"]

    def build():
        graph = digits.graph(len(calibration_x))
        if budget is not None:
            graph.set_error_budget(*budget)
        return graph

    evaluator = GraphEvaluator(build, ["conv1", "conv2"], calibration_x, calibration_y,
                               repeats=args.repeats)
    tuner = Tuner(evaluator, seed=args.seed,
                  log=(lambda line: print(line, file=sys.stderr)) if args.verbose else
                  (lambda line: None))
    start = time.perf_counter()
    if args.mode == "empirical":
        results = tuner.empirical(args.budget, max(targets))
    else:
        results = tuner.predictive(targets, args.validate)
    elapsed = time.perf_counter() - start

    # Held-out accuracy of each answer (the test images, the same batch size).
    def test_accuracy(configuration: Configuration) -> float:
        return accuracy(evaluator.compiled(configuration)(test_x), test_y)

    exact_test = test_accuracy(Configuration())
    out = report(results, targets)
    out.update(mode=args.mode, seconds=elapsed, exact_test_accuracy=exact_test,
               exact_calibration_accuracy=accuracy(evaluator.outputs(Configuration()),
                                                   calibration_y))
    print(f"digits CNN, {args.mode} mode: {len(results)} configurations measured in "
          f"{elapsed:.0f} s; exact accuracy {exact_test:.2f}% (test)")
    if budget is not None:
        print(f"error budget L1 {budget[0]:g}, L2 {budget[1]:g} on the probabilities: "
              f"{out['over_budget']} of {len(results)} configurations beyond it")
    print(f"{'target':>7}  {'configuration':<58} {'calib. loss':>11} {'speedup':>8} "
          f"{'test acc.':>9}  (speedup: median of 7 alternated timings)")
    _answer_targets(evaluator, results, targets, args, out, test_accuracy)
    print(f"Pareto set: {len(pareto(results))} configurations")
    if args.out:
        with open(args.out, "w") as file:
            json.dump(out, file, indent=1)
    return 0


def _answer_targets(evaluator, results, targets, args, out, test_accuracy) -> None:
    """For each target, the configuration answered (in `out["targets"]`, printed, and
    written to --knobs-dir): of those measured within the target and the error budget,
    the fastest when the few fastest are timed again."""
    confirmed_speedups = {}
    for target in targets:
        # The search timed each configuration once: the few fastest within the target are
        # timed again (alternated with the exact one) and the fastest then is the answer.
        fitting = sorted((r for r in results if r.loss <= target and r.within_budget),
                         key=lambda r: -r.speedup)
        if not fitting:
            print(f"{target:>6}%  (nothing met it)")
            continue
        for candidate in fitting[:args.confirm]:
            if candidate.configuration not in confirmed_speedups:
                confirmed_speedups[candidate.configuration] = confirm_speedup(
                    evaluator, candidate.configuration)
        answer = max(fitting[:args.confirm],
                     key=lambda r: confirmed_speedups[r.configuration])
        confirmed = confirmed_speedups[answer.configuration]
        held_out = test_accuracy(answer.configuration)
        out["targets"][str(target)] = dict(answer.as_dict(), test_accuracy=held_out,
                                           confirmed_speedup=confirmed)
        print(f"{target:>6}%  {str(answer.configuration):<58} {answer.loss:>10.2f}% "
              f"{confirmed:>7.2f}x {held_out:>8.2f}%")
        if args.knobs_dir:
            os.makedirs(args.knobs_dir, exist_ok=True)
            path = os.path.join(args.knobs_dir, f"digits_knobs_{target:g}.json")
            with open(path, "w") as file:
                json.dump(answer.configuration.to_json(
                    {"model": "digits_cnn", "target_loss": target, "mode": args.mode,
                     "calibration_loss": answer.loss, "speedup": answer.speedup,
                     "test_accuracy": held_out}), file, indent=1)


if __name__ == "__main__":
    sys.exit(main())
