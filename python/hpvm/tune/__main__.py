"""hpvm-tune: searches the knobs of a program (hpvm.tune.programs) with each strategy of
hpvm.tune.search on the same budget, and prints the best configuration each found after
20, 50 and 100 evaluations against the untuned default (and exhaustive search, asked for
with --exhaustive).

    hpvm-tune sgemm --budget 100 --out sgemm.json
    hpvm-tune stencil --exhaustive --seeds 9 --out stencil.json --plot stencil.png

Every configuration is measured once per session, right after a run of the default
configuration whose time it is scaled by (the machine's speed drifts; --unpaired times each
alone): the strategies (and the seeds of each) share the measurements, so that they are
compared on the same numbers. With --exhaustive
the whole space is measured first, and every search then replays those measurements: the
strategies are compared over many seeds at the cost of one sweep, and "within 5% of the
exhaustive optimum" is checked against the same numbers.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from ..errors import HPVMError
from .programs import PROGRAMS, find_root
from .search import STRATEGIES, best_so_far, exhaustive

# An answer "reaches" the optimum when it is within this factor of it.
WITHIN = 1.05
# --confirm times the best points of an exhaustive sweep again, this many.
TOP_OF_SWEEP = 5


def evaluations_to_reach(curve, target):
    """The number of evaluations after which `curve` (best so far) is at or below `target`;
    None when it never is."""
    for count, value in enumerate(curve, start=1):
        if value <= target:
            return count
    return None


def plot(out, path):
    """Best-so-far against evaluations (median over seeds, the band between the best and
    the worst seed) for each strategy, with the default and the exhaustive optimum."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as error:
        raise HPVMError("--plot needs matplotlib (pip install -r "
                        "benchmarks/tune/requirements.txt)") from error
    figure, axes = plt.subplots(figsize=(6.4, 4.0), dpi=110)
    for name, data in out["strategies"].items():
        curves = [run["best_so_far"] for run in data["runs"]]
        length = min(len(c) for c in curves)
        x = list(range(1, length + 1))
        to_ms = lambda column: [v * 1000 for v in column]
        median = to_ms(statistics.median(c[i] for c in curves) for i in range(length))
        low = to_ms(min(c[i] for c in curves) for i in range(length))
        high = to_ms(max(c[i] for c in curves) for i in range(length))
        line, = axes.plot(x, median, label=f"{name} (median of {len(curves)} seeds)")
        if len(curves) > 1:
            axes.fill_between(x, low, high, color=line.get_color(), alpha=0.15)
    axes.axhline(out["default"]["seconds"] * 1000, color="grey", linestyle="--",
                 label="default")
    if "exhaustive" in out:
        axes.axhline(out["exhaustive"]["seconds"] * 1000, color="black", linestyle=":",
                     label=f"exhaustive optimum ({out['space_size']} points)")
    axes.set_xlabel("evaluations")
    axes.set_ylabel("best time found (ms)")
    axes.set_title(f"hpvm-tune {out['program']}")
    axes.set_xscale("log")
    axes.set_yscale("log")
    axes.grid(True, which="both", alpha=0.3)
    axes.legend(fontsize="small")
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)


def confirm(out, program, repeats):
    """Times the default, the exhaustive optimum (and the sweep's next best points) and each
    strategy's answer at its last checkpoint again, `repeats` rounds alternating between
    them (the machine is shared: one measurement per point can be lucky), and records the
    median of each with its speedup and which was fastest."""
    candidates = {"default": out["default"]["values"]}
    if "exhaustive" in out:
        candidates["exhaustive"] = out["exhaustive"]["values"]
        # The runners-up of the sweep too: its minimum is partly luck, and the point that
        # is fastest when timed again is the optimum to compare with.
        ranked = sorted(out["exhaustive"]["measured"], key=lambda entry: entry[1])
        for place, (values, _) in enumerate(ranked[1:TOP_OF_SWEEP], start=2):
            candidates[f"sweep #{place}"] = values
    for name, data in out["strategies"].items():
        if data["answers"]:
            last = max(data["answers"], key=int)
            candidates[f"{name} after {last}"] = data["answers"][last]["values"]
    # Labels naming the same configuration share its measurements.
    key = lambda values: tuple(sorted(values.items()))
    distinct = {key(values): values for values in candidates.values()}
    samples = {k: [] for k in distinct}
    for _ in range(repeats):
        for k, values in distinct.items():
            samples[k].append(program.seconds(values))
    base = statistics.median(samples[key(candidates["default"])])
    out["confirmed"] = {}
    print(f"  timed again ({repeats} rounds, alternating; medians):")
    for label, values in candidates.items():
        median = statistics.median(samples[key(values)])
        out["confirmed"][label] = {"values": values, "seconds": median,
                                   "samples": samples[key(values)], "speedup": base / median}
        print(f"    {label:<20} {median * 1000:8.2f} ms  {base / median:5.2f}x  {values}")
    best = min(out["confirmed"], key=lambda label: out["confirmed"][label]["seconds"])
    out["confirmed_best"] = best
    print(f"  fastest when timed again: {best} "
          f"({out['confirmed'][best]['speedup']:.2f}x the default)")


def _arguments(argv):
    """The command line: (its arguments, the strategies, the checkpoints); exits with a
    usage message on a wrong one."""
    parser = argparse.ArgumentParser(prog="hpvm-tune", description=__doc__.splitlines()[0])
    parser.add_argument("program", choices=sorted(PROGRAMS))
    parser.add_argument("--budget", type=int, default=100)
    parser.add_argument("--checkpoints", default="20,50,100")
    parser.add_argument("--strategies", default=",".join(sorted(STRATEGIES)))
    parser.add_argument("--seed", type=int, default=0, help="the first seed")
    parser.add_argument("--seeds", type=int, default=1,
                        help="searches per strategy, seeds SEED, SEED+1, ... (medians reported)")
    parser.add_argument("--unpaired", action="store_true",
                        help="time each configuration alone (default: right after a run of "
                             "the default configuration, and scaled by it)")
    parser.add_argument("--exhaustive", action="store_true",
                        help="measure every point of the space first")
    parser.add_argument("--workdir", help="where builds are cached (default: a temporary one)")
    parser.add_argument("--out", help="write the histories and answers (JSON) here")
    parser.add_argument("--plot", help="draw best-so-far curves (PNG) here; needs matplotlib")
    parser.add_argument("--confirm", type=int, default=0, metavar="K",
                        help="time the default, the sweep's best points and each strategy's "
                             "last answer again K times, alternating, and report the medians")
    args = parser.parse_args(argv)
    strategies = [s for s in args.strategies.split(",") if s]
    for name in strategies:
        if name not in STRATEGIES:
            parser.error(f"unknown strategy '{name}'; expected {', '.join(sorted(STRATEGIES))}")
    try:
        checkpoints = [int(c) for c in args.checkpoints.split(",") if c]
    except ValueError:
        parser.error(f"--checkpoints expects numbers separated by commas, found "
                     f"'{args.checkpoints}'")
    if args.budget < 1 or args.seeds < 1 or any(c < 1 for c in checkpoints):
        parser.error("--budget, --seeds and the checkpoints must be at least 1")
    return args, strategies, checkpoints


def _cost(program, paired: bool, measured: dict):
    """The cost of a configuration, each measured once (kept in `measured`).

    Paired measurements: the machine is shared, and its speed drifts by 2x over minutes.
    Each configuration runs right after the default, and its time is scaled by the
    default's reference time over the default's adjacent time: every cost is in seconds
    at the speed the machine had when the reference was taken. Returns (the cost
    function, whether it is paired)."""
    reference = None
    if paired:
        reference = statistics.median(program.seconds(program.default) for _ in range(3))

    def cost(values):
        key = tuple(sorted(values.items()))
        if key not in measured:
            if reference is None:
                measured[key] = program.seconds(values)
            else:
                adjacent = program.seconds(program.default)
                measured[key] = program.seconds(values) * reference / adjacent
        return measured[key]

    return cost, reference is not None


def _search(name, space, cost, args, checkpoints, default, optimum):
    """The searches of one strategy (one per seed): their histories, the answer at each
    checkpoint (the median over seeds), and, after an exhaustive sweep, how many reached
    the optimum; printed as they come."""
    runs = []
    for seed in range(args.seed, args.seed + args.seeds):
        start = time.perf_counter()
        history = STRATEGIES[name](space, cost, args.budget, seed=seed)
        runs.append({"seed": seed, "history": [[space.values(p), c] for p, c in history],
                     "best_so_far": best_so_far(history),
                     "wall_seconds": time.perf_counter() - start})
    answers = {}
    for checkpoint in checkpoints:
        if any(checkpoint > len(run["history"]) for run in runs):
            continue
        bests = [min(run["history"][:checkpoint], key=lambda vc: vc[1]) for run in runs]
        times = sorted(b[1] for b in bests)
        median = statistics.median(times)
        # The configuration of the median run (the lower middle one for even counts).
        chosen = sorted(bests, key=lambda b: b[1])[(len(bests) - 1) // 2]
        answers[checkpoint] = {"values": chosen[0], "seconds": median,
                               "min_seconds": times[0], "max_seconds": times[-1]}
        spread = (f" (seeds: {times[0] * 1000:.2f}-{times[-1] * 1000:.2f})"
                  if len(runs) > 1 else "")
        print(f"  {name:<9} after {checkpoint:>3}: {median * 1000:8.2f} ms "
              f"({default / median:.2f}x the default){spread} {chosen[0]}")
    reached = None
    if optimum is not None:
        counts = [evaluations_to_reach(run["best_so_far"], optimum * WITHIN) for run in runs]
        found = sorted(c for c in counts if c is not None)
        reached = {"runs_reaching": len(found), "runs": len(runs),
                   "median_evaluations": statistics.median(found) if found else None}
        print(f"  {name:<9} within {round((WITHIN - 1) * 100)}% of the optimum in "
              f"{len(found)} of {len(runs)} runs"
              + (f", after a median of {reached['median_evaluations']} evaluations"
                 if found else ""))
    return {"runs": runs, "answers": answers, "reached": reached}


def main(argv=None) -> int:
    args, strategies, checkpoints = _arguments(argv)
    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="hpvm-tune-"))
    try:
        program = PROGRAMS[args.program](find_root(), workdir)
        space = program.space()
        measured = {}
        cost, paired = _cost(program, not args.unpaired, measured)
        started = time.perf_counter()
        default = cost(program.default)
        legal = sum(1 for _ in space.all_points())
        print(f"{args.program}: {legal} points; default {program.default}: "
              f"{default * 1000:.2f} ms")
        out = {"program": args.program, "space_size": legal, "within": WITHIN,
               "paired": paired,
               "default": {"values": program.default, "seconds": default}, "strategies": {}}
        optimum = None
        if args.exhaustive:
            point, optimum = exhaustive(space, cost)
            out["exhaustive"] = {"values": space.values(point), "seconds": optimum,
                                 "measured": [[dict(k), v] for k, v in measured.items()]}
            print(f"  exhaustive ({legal} points): {optimum * 1000:.2f} ms "
                  f"({default / optimum:.2f}x the default) {space.values(point)}")
        for name in strategies:
            out["strategies"][name] = _search(name, space, cost, args, checkpoints, default,
                                              optimum)
        if args.confirm > 0:
            confirm(out, program, args.confirm)
        out["builds"] = program.builds
        out["configurations_run"] = len(measured)
        out["wall_seconds"] = time.perf_counter() - started
        print(f"  {program.builds} builds, {len(measured)} configurations run, "
              f"{out['wall_seconds']:.0f} s")
        if args.out:
            with open(args.out, "w") as file:
                json.dump(out, file, indent=1)
        if args.plot:
            plot(out, args.plot)
    except HPVMError as error:
        print(f"hpvm-tune: error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
