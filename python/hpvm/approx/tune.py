"""hpvm-approx-tune: tunes the approximation knobs of the digits CNN (hpvm.approx.digits)
for quality-loss targets, and prints ApproxHPVM's table: per target, the configuration
found, its measured speedup on this CPU and its accuracy on held-out data.

    hpvm-approx-tune                              # predictive mode, targets 0.5, 1, 2 (%)
    hpvm-approx-tune --mode empirical --budget 300
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
from .tuner import (Configuration, GraphEvaluator, Tuner, accuracy, best_within, pareto,
                    report)


def main(argv=None) -> int:
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
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", help="write the report (JSON) here")
    parser.add_argument("--knobs-dir", help="write the configuration found per target here")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args(argv)
    try:
        targets = [float(t) for t in args.targets.split(",") if t]
    except ValueError:
        parser.error(f"--targets: expected numbers separated by commas, found {args.targets!r}")

    data = digits.load_data()
    calibration_x, calibration_y = data["calibration"]
    test_x, test_y = data["test"]
    evaluator = GraphEvaluator(lambda: digits.graph(len(calibration_x)), ["conv1", "conv2"],
                               calibration_x, calibration_y, repeats=args.repeats)
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
    print(f"{'target':>7}  {'configuration':<58} {'calib. loss':>11} {'speedup':>8} "
          f"{'test acc.':>9}")
    for target in targets:
        answer = best_within(results, target)
        if answer is None:
            print(f"{target:>6}%  (nothing met it)")
            continue
        held_out = test_accuracy(answer.configuration)
        out["targets"][str(target)]["test_accuracy"] = held_out
        print(f"{target:>6}%  {str(answer.configuration):<58} {answer.loss:>10.2f}% "
              f"{answer.speedup:>7.2f}x {held_out:>8.2f}%")
        if args.knobs_dir:
            os.makedirs(args.knobs_dir, exist_ok=True)
            path = os.path.join(args.knobs_dir, f"digits_knobs_{target:g}.json")
            with open(path, "w") as file:
                json.dump(answer.configuration.to_json(
                    {"model": "digits_cnn", "target_loss": target, "mode": args.mode,
                     "calibration_loss": answer.loss, "speedup": answer.speedup,
                     "test_accuracy": held_out}), file, indent=1)
    print(f"Pareto set: {len(pareto(results))} configurations")
    if args.out:
        with open(args.out, "w") as file:
            json.dump(out, file, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
