#!/usr/bin/env python3
"""Turns the output of benchmarks/hpvm/run_cpu.sh (run by `make bench`) into the tables of
docs/Performance.md: one line saying when, where and under what load, then a table with the
min / median / max of every version and of the per-run ratios.

A goal is "met" only when the whole range of the ratio meets it (its max, for a goal of the
form ratio <= G): a single median on a noisy machine says little.

usage: bash benchmarks/hpvm/run_cpu.sh | tee bench.txt; scripts/perf-tables.py bench.txt
"""
import re
import sys

# Ratio goals (HPVM time / OpenMP time must not exceed them), by benchmark.
GOALS = {"sgemm": 1.10, "stencil": 1.10, "edge": 1.10, "edge (fused)": 1.10}

TIMES = re.compile(r"^(?P<bench>sgemm|stencil|edge) (?P<version>\w+) (?P<shape>.*?) runs=(?P<runs>\d+) "
                   r"median_ms=(?P<median>[\d.]+) min_ms=(?P<min>[\d.]+) max_ms=(?P<max>[\d.]+)")
RATIO = re.compile(r"^(?P<bench>sgemm|stencil|edge) (?:ratio hpvm/omp|speedup untiled/tiled)="
                   r"(?P<median>[\d.]+) min=(?P<min>[\d.]+) max=(?P<max>[\d.]+).*check=(?P<check>\w+)")
HPVMC = re.compile(r"^hpvm-c sgemm (?P<shape>\S+): median (?P<median>[\d.]+) ms \(min (?P<min>[\d.]+), "
                   r"max (?P<max>[\d.]+)\).* of (?P<runs>\d+), sequential C (?P<seq>[\d.]+) ms")


def spread(low, mid, high, unit=""):
    return "%s / **%s** / %s%s" % (low, mid, high, unit)


# Fewer runs than this say nothing about the spread: no verdict.
MIN_RUNS = 5


def verdict(name, ratio, runs):
    goal = GOALS.get(name)
    if goal is None or ratio is None:
        return "—"
    if runs < MIN_RUNS:
        return "≤ %.2f — not judged (%d runs; at least %d needed)" % (goal, runs, MIN_RUNS)
    low, high = float(ratio["min"]), float(ratio["max"])
    if high <= goal:
        return "≤ %.2f — met (every run)" % goal
    if low > goal:
        return "≤ %.2f — not met (no run)" % goal
    return "≤ %.2f — not met (%s to %s straddles it)" % (goal, ratio["min"], ratio["max"])


def parse(lines):
    header, blocks, current, seen = [], [], None, {}
    hpvmc = None
    for line in lines:
        line = line.rstrip("\n")
        if line.startswith("# ") and ("UTC" in line or "uptime" in line or "runs:" in line):
            header.append(line[2:])
            continue
        match = TIMES.match(line)
        if match:
            bench, version = match["bench"], match["version"]
            if current is None or current["bench"] != bench or version in current["times"]:
                # A new block: edge twice (unfused, fused), sgemm twice (versions, tiling).
                name = bench
                if version in ("untiled", "tiled"):
                    name = "sgemm tiling (untiled / tiled)"
                elif bench in seen:
                    name = bench + " (fused)"
                seen[bench] = True
                current = {"bench": bench, "name": name, "shape": match["shape"],
                           "runs": match["runs"], "times": {}, "ratio": None}
                blocks.append(current)
            current["times"][version] = match
            continue
        match = RATIO.match(line)
        if match and current is not None:
            current["ratio"] = match
            current = None
            continue
        match = HPVMC.match(line)
        if match:
            hpvmc = match
    return header, blocks, hpvmc


def main():
    lines = open(sys.argv[1]).readlines() if len(sys.argv) > 1 else sys.stdin.readlines()
    header, blocks, hpvmc = parse(lines)
    print("Run: " + "; ".join(header) + ".")
    print()
    print("Times in ms as min / **median** / max of the runs; ratios per pair of runs "
          "(HPVM run r against OpenMP run r, next to it).")
    print()
    print("| benchmark | runs | HPVM (ms) | OpenMP (ms) | sequential (ms) | HPVM / OpenMP | goal |")
    print("|---|---|---|---|---|---|---|")
    for block in blocks:
        if block["name"].startswith("sgemm tiling"):
            continue
        cells = []
        for version in ("hpvm", "omp", "seq"):
            t = block["times"].get(version)
            cells.append(spread(t["min"], t["median"], t["max"]) if t else "—")
        ratio = block["ratio"]
        ratio_cell = spread(ratio["min"], ratio["median"], ratio["max"]) if ratio else "—"
        if ratio and ratio["check"] != "ok":
            ratio_cell += " (results differ!)"
        print("| %s %s | %s | %s | %s | %s | %s | %s |" % (
            block["name"], block["shape"], block["runs"], *cells, ratio_cell,
            verdict(block["name"], ratio, int(block["runs"]))))
    for block in blocks:
        if not block["name"].startswith("sgemm tiling"):
            continue
        untiled, tiled = block["times"].get("untiled"), block["times"].get("tiled")
        ratio = block["ratio"]
        print()
        print("| sgemm %s, %s runs | untiled (ms) | tiled (ms) | speedup untiled / tiled |"
              % (block["shape"], block["runs"]))
        print("|---|---|---|---|")
        print("| | %s | %s | %s |" % (
            spread(untiled["min"], untiled["median"], untiled["max"]),
            spread(tiled["min"], tiled["median"], tiled["max"]),
            spread(ratio["min"], ratio["median"], ratio["max"]) if ratio else "—"))
    if hpvmc:
        print()
        print("HPVM-C sgemm %s: %s ms (of %s runs); sequential C %s ms." % (
            hpvmc["shape"], spread(hpvmc["min"], hpvmc["median"], hpvmc["max"]),
            hpvmc["runs"], hpvmc["seq"]))


if __name__ == "__main__":
    main()
