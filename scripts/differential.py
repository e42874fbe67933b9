#!/usr/bin/env python3
"""Differential testing: every optimization choice of hpvm-cc leaves a program's
answer unchanged, bit for bit, run after run.

For each program (an HPVM-C .c/.cpp with a main that prints its results):

* builds it with hpvm-cc -O2 as a user would (the reference build), and once per
  variant below, each turning one optimization off or changing its shape;
* runs the reference build three times and every variant build three times:
  with the default thread count, with HPVM_NUM_THREADS=1 and with
  HPVM_NUM_THREADS=3 (more threads than these machines' cores);
* compares the exit status and the output of every run with the reference
  build's first run. Only what a program computes is compared: for programs
  that print timings (the release-style benchmarks), the checksums they print.

Prints one line per program, "<name>: same output in B builds x 3 runs", or
"<name>: FAILED ..." with the first difference, and exits 1 if any failed.

The variants (docs/CPUBackend.md has what each choice does):
  no-lanes        -fno-hpvm-lanes: each instance on its own, no SIMD across
                  instances, no contraction plans
  lanes-5x3       -fhpvm-lanes=5 -fhpvm-rows=3: groups that never divide the
                  grids evenly (tails in x and in y)
  contract-always the reference build with HPVM_CONTRACT_MIN=1: every
                  contraction plan whose checks hold computes the sums in the
                  runtime, however small the product
  nested-grids    -fno-hpvm-collapse-grids: one parallel-for per tile level
  no-inline       -fno-hpvm-inline-leaves: leaves stay functions of their own
  fused           -fhpvm-fuse-nodes: every legal pair of sibling leaves fused
  tensor-unfused  -fno-hpvm-fuse-tensor-nodes: each tensor op a node of its own
                  (by default chains conv->add->act->pool are one node)
  tensor-whole-batch  -fno-hpvm-tile-tensor-batch: each tensor op of a leaf over
                  the whole batch (by default a convolution and the ops after
                  it run a few images at a time)
  tensor-nchw     -fno-hpvm-blocked-layout: every image NCHW (by default the
                  images between convolutions have their channels in blocks)

A program compiled with -ffp-contract=off (FMA contraction is a choice of the
C compiler, not of HPVM) must match in every variant; the programs here need no
tolerance: the lowering promises bit-identical results (Rationale.md).
"""
import argparse
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys

VARIANTS = [
    ("no-lanes", ["-fno-hpvm-lanes"], {}),
    ("lanes-5x3", ["-fhpvm-lanes=5", "-fhpvm-rows=3"], {}),
    ("contract-always", None, {"HPVM_CONTRACT_MIN": "1"}),
    ("nested-grids", ["-fno-hpvm-collapse-grids"], {}),
    ("no-inline", ["-fno-hpvm-inline-leaves"], {}),
    ("fused", ["-fhpvm-fuse-nodes"], {}),
    ("tensor-unfused", ["-fno-hpvm-fuse-tensor-nodes"], {}),
    ("tensor-whole-batch", ["-fno-hpvm-tile-tensor-batch"], {}),
    ("tensor-nchw", ["-fno-hpvm-blocked-layout"], {}),
]

RUNS = [{}, {"HPVM_NUM_THREADS": "1"}, {"HPVM_NUM_THREADS": "3"}]

# Programs that print timings: small arguments, and only their checksums compared.
TIMED = {
    "stencil": ["66", "34", "10", "2", "1"],
    "sgemm": ["64", "32", "16", "1"],
    "spmv": ["1000", "2", "1"],
    "lbm": ["18", "10", "6", "2", "1"],
    "cava": ["37", "45", "1", "1"],
}
CHECKSUM = re.compile(r"checksum \S+")


def run(command, env=None, timeout=600):
    result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=env, timeout=timeout, text=True, errors="replace")
    return result.returncode, result.stdout, result.stderr


def observed(exe, arguments, extra_env, timed):
    env = dict(os.environ)
    env.pop("HPVM_NUM_THREADS", None)
    env.pop("HPVM_CONTRACT_MIN", None)
    env.update(extra_env)
    code, out, err = run([exe] + arguments, env=env)
    if timed:
        out = "\n".join(CHECKSUM.findall(out))
    return code, out, err


def check(args, index, path):
    name = os.path.splitext(os.path.basename(path))[0]
    # Programs of one name may come from several directories.
    out = os.path.join(args.out, "%d-%s" % (index, os.path.basename(path)))
    os.makedirs(out, exist_ok=True)
    timed = os.path.dirname(os.path.abspath(path)).endswith(os.path.join("benchmarks", "release"))
    arguments = TIMED.get(name, []) if timed else []
    include = ["-I", os.path.dirname(os.path.abspath(path))]
    flags = ["-O2"] + args.cflags.split() + include
    if timed:
        flags.append("-ffp-contract=off")
    builds = [("reference", [], {})]
    builds += [(v, f if f is not None else [], e) for v, f, e in VARIANTS]
    exes = {}
    for variant, extra, _ in builds:
        if variant != "reference" and not extra:
            continue  # the reference build, run with other settings
        exe = os.path.join(out, variant)
        code, _, err = run([args.hpvm_cc] + flags + extra + [path, "-o", exe])
        if code != 0:
            return name, "FAILED to build (%s): %s" % (variant, err.strip())
        exes[variant] = exe
    reference = None
    count = 0
    for variant, extra, env in builds:
        exe = exes.get(variant, exes["reference"])
        count += 1
        for runs in RUNS:
            setting = dict(env)
            setting.update(runs)
            got = observed(exe, arguments, setting, timed)
            if reference is None:
                reference = got
                if got[0] != 0:
                    return name, "FAILED: the reference build exits %d:\n%s%s" % (
                        got[0], got[1], got[2])
                continue
            where = "%s%s" % (variant, "".join(" %s=%s" % kv for kv in sorted(runs.items())))
            if got[0] != reference[0]:
                return name, "FAILED: %s exits %d, the reference %d:\n%s" % (
                    where, got[0], reference[0], got[2])
            if got[1] != reference[1]:
                return name, "FAILED: %s differs from the reference build\n--- reference\n" \
                    "%s\n--- %s\n%s" % (where, reference[1], where, got[1])
    if not args.keep:
        shutil.rmtree(out, ignore_errors=True)
    return name, "same output in %d builds x %d runs" % (count, len(RUNS))


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True, help="a directory for the builds")
    parser.add_argument("--hpvm-cc", default=shutil.which("hpvm-cc") or "hpvm-cc")
    parser.add_argument("--cflags", default="", help="more hpvm-cc flags for every build")
    parser.add_argument("--jobs", type=int, default=1, help="programs checked at once")
    parser.add_argument("--keep", action="store_true", help="keep the builds")
    parser.add_argument("programs", nargs="+")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    failed = False
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = [pool.submit(check, args, index, path)
                   for index, path in enumerate(args.programs)]
        for future in futures:  # in the order given
            try:
                name, verdict = future.result()
            except subprocess.TimeoutExpired as timeout:
                name, verdict = "?", "FAILED: timed out: %s" % " ".join(timeout.cmd)
            failed |= verdict.startswith("FAILED")
            print("%s: %s" % (name, verdict), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
