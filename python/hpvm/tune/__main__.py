"""hpvm-tune: searches the knobs of a program (hpvm.tune.programs) with each strategy of
hpvm.tune.search on the same budget, and prints the best configuration each found after
20, 50 and 100 evaluations against the untuned default (and exhaustive search, asked for
with --exhaustive).

    hpvm-tune sgemm --budget 100 --out sgemm.json
    hpvm-tune sgemm --budget 50 --strategies bandit,surrogate --seed 3
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from ..errors import HPVMError
from .programs import PROGRAMS, find_root
from .search import STRATEGIES, best_so_far, exhaustive


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="hpvm-tune", description=__doc__.splitlines()[0])
    parser.add_argument("program", choices=sorted(PROGRAMS))
    parser.add_argument("--budget", type=int, default=100)
    parser.add_argument("--checkpoints", default="20,50,100")
    parser.add_argument("--strategies", default=",".join(sorted(STRATEGIES)))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--exhaustive", action="store_true",
                        help="also evaluate every point of the space")
    parser.add_argument("--workdir", help="where builds are cached (default: a temporary one)")
    parser.add_argument("--out", help="write the histories and answers (JSON) here")
    args = parser.parse_args(argv)
    strategies = [s for s in args.strategies.split(",") if s]
    for name in strategies:
        if name not in STRATEGIES:
            parser.error(f"unknown strategy '{name}'; expected {', '.join(sorted(STRATEGIES))}")
    checkpoints = [int(c) for c in args.checkpoints.split(",") if c]

    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="hpvm-tune-"))
    try:
        program = PROGRAMS[args.program](find_root(), workdir)
        space = program.space()
        measured = {}

        def cost(values):
            key = tuple(sorted(values.items()))
            if key not in measured:
                measured[key] = program.seconds(values)
            return measured[key]

        default = cost(program.default)
        print(f"{args.program}: {space.size()} points; default {program.default}: "
              f"{default * 1000:.2f} ms")
        out = {"program": args.program, "default": {"values": program.default,
                                                    "seconds": default}, "strategies": {}}
        for name in strategies:
            start = time.perf_counter()
            history = STRATEGIES[name](space, cost, args.budget, seed=args.seed)
            curve = best_so_far(history)
            elapsed = time.perf_counter() - start
            answers = {}
            for checkpoint in checkpoints:
                if checkpoint > len(history):
                    continue
                best = min(history[:checkpoint], key=lambda pc: pc[1])
                answers[checkpoint] = {"values": space.values(best[0]), "seconds": best[1]}
                print(f"  {name:<9} after {checkpoint:>3}: {best[1] * 1000:8.2f} ms "
                      f"({default / best[1]:.2f}x the default) {space.values(best[0])}")
            out["strategies"][name] = {
                "history": [[space.values(p), c] for p, c in history],
                "best_so_far": curve, "answers": answers, "wall_seconds": elapsed}
        if args.exhaustive:
            point, value = exhaustive(space, cost)
            out["exhaustive"] = {"values": space.values(point), "seconds": value}
            print(f"  exhaustive ({space.size()} points): {value * 1000:.2f} ms "
                  f"({default / value:.2f}x the default) {space.values(point)}")
        print(f"  {program.builds} builds, {len(measured)} configurations run")
        if args.out:
            with open(args.out, "w") as file:
                json.dump(out, file, indent=1)
    except HPVMError as error:
        print(f"hpvm-tune: error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
