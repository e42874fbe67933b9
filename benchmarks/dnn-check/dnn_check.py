#!/usr/bin/env python3
"""dnn_check.py - the HPVM release's ApproxHPVM DNN programs, compiled unchanged by hpvm-cc,
checked against the same networks run by onnxruntime.

Usage (normally through run.sh, which finds the build's Python):
  dnn_check.py RELEASE_ROOT [--build BUILD_DIR] [--only name,name] [--batches K]
               [--work DIR] [--bench ROUNDS] [--threads N] [--timeout S]
               [--reference-only] [--save-onnx] [--float64-check]

RELEASE_ROOT is the directory that holds hpvm/test/dnn_benchmarks (the release is never copied
into this repository). For each selected program <name> (its source is
RELEASE_ROOT/hpvm/test/dnn_benchmarks/hpvm-c/benchmarks/<name>/<name>.cpp):

 1. parse: the node functions (one __hpvm__tensor_* call each), root()'s graph (createNodeND,
    bindIn, edge, bindOut) and main()'s weight files, batch size and input shape. The programs
    are machine generated and very regular, so regular expressions suffice; anything that does
    not fit is reported as an error of that program, and the others go on.
 2. data: seeded weights, inputs and labels in the release's file format (raw little-endian
    float32 without a header; labels uint32) under WORK/params/<dir>/, reused on later runs
    when a stamp file says they were made by the same generator and their sizes match. The
    batchnorms' means and variances are not drawn but measured (calibrate(): those of each
    batchnorm's input on the first batch, by a NumPy forward pass), and the last layer of every
    residual branch is scaled down (residual_scales()), so that activations and logits stay
    O(1) like a trained network's and the softmax is not saturated.
 3. reference: the same network as an ONNX model (checked by onnx.checker and shape inference
    against our own shape propagation), run by onnxruntime on the same batches.
 4. compile: BUILD/bin/hpvm-cc -O3 -DMODEL_PARAMS_DIR=WORK/params SOURCE, unchanged.
 5. run: with HPVM_TENSOR_BATCHES=K (the runtime stops after K batches), HPVM_TENSOR_DUMP (it
    appends every batch's result tensor, raw float32) and HPVM_TENSOR_STATS=1 (one line
    "hpvm-tensor: batch <i>: <ms> ms" per batch on stderr).
 6. compare: max|hpvm - ref| / max|ref| <= 1e-4 and the same argmax for every image. With
    --float64-check, also the first batch by NumPy in float64 (numpy_forward(); slow) and how
    far onnxruntime and hpvm each are from it: which one is nearer when they disagree.
 7. with --bench R: R alternating rounds of (hpvm run, onnxruntime run), per-batch times
    without each run's first batch, as a Markdown table (also WORK/table.md).

--reference-only stops after step 3 (no compiler needed) and prints the output shapes (and,
with --float64-check, how far onnxruntime is from float64). The exit status is 1 when any
selected program fails a step, 2 for a bad command line.

This script is the driver; the steps are modules of the dnncheck package beside it (parse,
data, network, reference, running, compare; see its __init__.py).
"""

import argparse
import os
import re
import statistics
import sys
import time

import numpy as np

from dnncheck.compare import compare, float64_check, output_stats
from dnncheck.data import write_data
from dnncheck.parse import parse_program
from dnncheck.program import CheckError
from dnncheck.reference import Reference, build_onnx
from dnncheck.running import compile_program, placement, run_program

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RELEASE_SUBDIR = os.path.join("hpvm", "test", "dnn_benchmarks", "hpvm-c", "benchmarks")
PROGRAMS = ["lenet_mnist", "alexnet_cifar10", "alexnet2_cifar10", "alexnet_imagenet",
            "vgg16_cifar10", "vgg16_cifar100", "vgg16_imagenet", "resnet18_cifar10",
            "resnet50_imagenet", "mobilenet_cifar10"]


def fmt_ms(xs):
    xs = [x for x in xs if x is not None]
    if not xs:
        return "-", "-", "-", None
    med = statistics.median(xs)
    return f"{min(xs):.1f}", f"{med:.1f}", f"{max(xs):.1f}", med


class ProgramCheck:
    """The steps of one program's check; `step` names the one under way (for a failure) and
    `row` is its line of the summary table."""

    def __init__(self, name, args, work):
        self.name, self.args, self.work = name, args, work
        self.source = os.path.join(args.release, RELEASE_SUBDIR, name, name + ".cpp")
        self.row = {"program": name, "result": "", "detail": "", "compile": "-", "rss": "-",
                    "stats": "-"}
        self.step = "parse"

    def run(self, bench_rows):
        """All steps; -> whether the program passed (a CheckError when a step fails)."""
        self.parse()
        self.step = "data"
        self.write_data()
        self.step = "reference"
        self.reference()
        if self.args.reference_only:
            self.row.update(result="reference ok",
                            detail=f"output {self.ref_shape} x {self.args.batches}; "
                                   f"{self.stats}")
            if self.args.float64_check:
                self.step = "float64 check"
                print("   float64: "
                      f"{float64_check(self.prog, self.ddir.dir, self.input_path, self.ref, None)}")
            return True
        self.step = "compile"
        self.compile()
        self.step = "run"
        self.run_once()
        self.step = "compare"
        if not self.compare():
            return False
        if self.args.bench:
            self.step = "bench"
            self.bench(bench_rows)
        return True

    def parse(self):
        if not os.path.isfile(self.source):
            raise CheckError(f"no source {self.source}")
        prog = self.prog = parse_program(self.name, self.source)
        ops = {}
        for n in prog.nodes:
            ops[n.op] = ops.get(n.op, 0) + 1
        opstr = ", ".join(f"{k} {v}" for k, v in ops.items())
        mbytes = sum(w.count for w in prog.weights.values()) * 4 / 2**20
        print(f"   parsed: {len(prog.nodes)} nodes ({opstr}), "
              f"{len(prog.weights)} weights ({mbytes:.1f} MB), "
              f"batch {prog.batch_size} of {prog.input_chw}, output {prog.out_shape}")
        for w in prog.warnings:
            print(f"   note: {w}")

    def write_data(self):
        prog, args = self.prog, self.args
        if args.batches > prog.input_size // prog.batch_size:
            raise CheckError(f"--batches {args.batches}, but the program runs only "
                             f"{prog.input_size // prog.batch_size} batches (input_size "
                             f"{prog.input_size}, batch_size {prog.batch_size})")
        t0 = time.monotonic()
        self.input_path, self.ddir, csecs = write_data(prog, os.path.join(self.work, "params"),
                                                       args.batches)
        calib = f", batchnorm statistics calibrated in {csecs:.1f} s" if csecs is not None else ""
        print(f"   data: {self.ddir.dir} ({self.ddir.made} files written, {self.ddir.reused} "
              f"reused, {time.monotonic() - t0:.1f} s{calib})")

    def reference(self):
        name, args = self.name, self.args
        model = build_onnx(self.prog, self.ddir.dir)
        if args.save_onnx:
            import onnx
            os.makedirs(os.path.join(self.work, "onnx"), exist_ok=True)
            onnx.save(model, os.path.join(self.work, "onnx", name + ".onnx"))
        ref_sess = self.ref_sess = Reference(self.prog, model, self.input_path, args.threads)
        del model
        outs, rtimes = [], []
        for i in range(args.batches):
            y, secs = ref_sess.run(i)
            outs.append(y)
            rtimes.append(secs * 1000)
        ref = self.ref = np.concatenate(outs)
        ref.astype("<f4").tofile(os.path.join(self.work, "out", name + ".ref.f32"))
        logits = (np.concatenate([ref_sess.logits[i] for i in range(args.batches)])
                  if ref_sess.logits else None)
        self.stats = output_stats(ref, logits)
        self.ref_shape = list(outs[0].shape)
        self.row["stats"] = f"{float(ref.max(axis=1).mean()):.3f}"
        print(f"   reference: onnxruntime output {self.ref_shape} x {args.batches} batches, "
              f"{statistics.median(rtimes):.1f} ms/batch, {self.stats}")

    def compile(self):
        self.exe, csecs, peak = compile_program(self.prog, self.args, self.work)
        self.row["compile"] = f"{csecs:.1f} s"
        self.row["rss"] = f"{peak:.0f} MB" if peak is not None else "-"
        print(f"   compile: {csecs:.1f} s, peak RSS {self.row['rss']}")

    def run_once(self):
        prog, args = self.prog, self.args
        dump = self.dump = os.path.join(self.work, "out", self.name + ".f32")
        times, rsecs = run_program(prog, self.exe, args, self.work, dump)
        if not os.path.isfile(dump):
            raise CheckError(f"the program wrote no dump {dump} (does the runtime know "
                             "HPVM_TENSOR_DUMP?)")
        print(f"   run: {rsecs:.1f} s, batches " +
              ", ".join("?" if t is None else f"{t:.1f} ms" for t in times))
        if args.target != "cpu":
            self.row["placement"] = placement(prog, self.work)
            print(f"   placement: {self.row['placement']}")
        if None in times:
            print("   note: not every batch printed 'hpvm-tensor: batch <i>: <ms> ms' "
                  "(HPVM_TENSOR_STATS=1)")

    def compare(self):
        """PASS or FAIL (and the float64 check when asked); -> whether it passed."""
        hpvm = np.fromfile(self.dump, dtype="<f4")
        ok, msg = compare(self.prog, hpvm, self.ref)
        self.row.update(result="PASS" if ok else "FAIL", detail=msg)
        print(f"   {'PASS' if ok else 'FAIL'}: {msg}")
        if self.args.float64_check:
            self.step = "float64 check"
            f64 = float64_check(self.prog, self.ddir.dir, self.input_path, self.ref, hpvm)
            self.row["detail"] += f"; float64 check: {f64}"
            print(f"   float64: {f64}")
        return ok

    def bench(self, bench_rows):
        """Alternating rounds of (hpvm run, onnxruntime run): a row of the bench table."""
        args = self.args
        ht, ot = [], []
        for r in range(args.bench):
            times, _ = run_program(self.prog, self.exe, args, self.work, None)
            if None in times:
                raise CheckError("the program did not print 'hpvm-tensor: batch <i>: <ms> ms' "
                                 f"for every batch (HPVM_TENSOR_STATS): {times}")
            ht += times[1:]
            ot += [self.ref_sess.run(i)[1] * 1000 for i in range(args.batches)][1:]
        h, o = fmt_ms(ht), fmt_ms(ot)
        ratio = f"{h[3] / o[3]:.2f}" if h[3] and o[3] else "-"
        bench_rows.append(f"| {self.name} | {self.prog.batch_size} | {h[0]} / {h[1]} / {h[2]} | "
                          f"{o[0]} / {o[1]} / {o[2]} | {ratio} | {self.row['compile']} | "
                          f"{self.row['rss']} |")
        print(f"   bench: hpvm median {h[1]} ms, onnxruntime median {o[1]} ms, ratio {ratio}")


def check_program(name, args, work, bench_rows):
    """All steps for one program; returns (ok, summary-table row)."""
    check = ProgramCheck(name, args, work)
    try:
        return check.run(bench_rows), check.row
    except CheckError as e:
        msg = str(e)
    except MemoryError:
        msg = "out of memory"
    except Exception as e:  # a bug here or in a library: report it, go on with the others
        import traceback
        msg = f"{type(e).__name__}: {e}\n{traceback.format_exc()}"
    print(f"   FAIL ({check.step}): {msg}")
    first = msg.splitlines()[0] if msg else ""
    check.row.update(result=f"FAIL ({check.step})", detail=first)
    return False, check.row


def parse_args():
    ap = argparse.ArgumentParser(
        description="The HPVM release's DNN programs compiled unchanged by hpvm-cc, checked "
                    "against onnxruntime.")
    ap.add_argument("release", metavar="RELEASE_ROOT",
                    help="the directory that holds hpvm/test/dnn_benchmarks")
    ap.add_argument("--build", default=os.path.join(REPO_ROOT, "build"),
                    help="the build directory (hpvm-cc in BUILD/bin; default: build)")
    ap.add_argument("--only", default="",
                    help="comma-separated programs (default: all: " + ",".join(PROGRAMS) + ")")
    ap.add_argument("--batches", type=int, default=2, help="batches per run (default 2)")
    ap.add_argument("--target", default="cpu", choices=("cpu", "opencl", "gpu"),
                    help="hpvm-cc --target (default cpu); with a device, the run is traced "
                         "and the placement of the node runs reported")
    ap.add_argument("--work", default=None,
                    help="data, binaries, logs and outputs (default BUILD/dnn-check)")
    ap.add_argument("--bench", type=int, default=0, metavar="ROUNDS",
                    help="rounds of (hpvm run, onnxruntime run) after the check (default 0)")
    ap.add_argument("--flags", default="",
                    help="more hpvm-cc flags, space-separated (e.g. "
                         "--flags=-fno-hpvm-tile-tensor-batch: the same programs built "
                         "another way)")
    ap.add_argument("--threads", type=int, default=2,
                    help="threads of both (OMP/HPVM_NUM_THREADS, onnxruntime intra-op; default 2)")
    ap.add_argument("--timeout", type=int, default=3600,
                    help="seconds allowed to one compile or run (default 3600)")
    ap.add_argument("--reference-only", action="store_true",
                    help="parse, write the data and run the onnxruntime reference only")
    ap.add_argument("--save-onnx", action="store_true", help="also write WORK/onnx/<name>.onnx")
    ap.add_argument("--float64-check", action="store_true",
                    help="also run the first batch in float64 by NumPy (slow) and print how far "
                         "hpvm and onnxruntime each are from it")
    return ap.parse_args()


def die(msg):
    print(f"dnn_check.py: {msg}", file=sys.stderr)
    sys.exit(2)


def check_args(args):
    """Checks the command line (exit status 2 when it is wrong); -> (program names, bench
    directory, work directory), the work directory's subdirectories made."""
    args.release = os.path.abspath(args.release)
    args.build = os.path.abspath(args.build)
    bench_dir = os.path.join(args.release, RELEASE_SUBDIR)
    if not os.path.isdir(bench_dir):
        die(f"{args.release} has no {RELEASE_SUBDIR} (give the release's root directory)")
    names = [n for n in args.only.split(",") if n] if args.only else PROGRAMS
    unknown = [n for n in names if n not in PROGRAMS]
    if unknown:
        die(f"unknown program(s) {', '.join(unknown)}; known: {', '.join(PROGRAMS)}")
    if args.batches < 1:
        die("--batches must be at least 1")
    if args.bench < 0 or (args.bench and args.batches < 2):
        die("--bench needs --batches 2 or more (each run's first batch is a warm-up)")
    if args.reference_only and args.bench:
        die("--bench needs the compiled programs; it cannot go with --reference-only")
    args.hpvm_cc = os.path.join(args.build, "bin", "hpvm-cc")
    if not args.reference_only and not os.access(args.hpvm_cc, os.X_OK):
        die(f"no {args.hpvm_cc} (build first, or give --build)")
    work = os.path.abspath(args.work or os.path.join(args.build, "dnn-check"))
    # The programs stringify MODEL_PARAMS_DIR with the preprocessor: the path must be made of
    # tokens that stringify to themselves (no spaces or quotes, no predefined macro names).
    params = os.path.join(work, "params")
    if (re.search(r"[\s\"'\\#,()]", params) or
            re.search(r"(?<![\w.])(linux|unix|i386|__\w+)(?![\w])", params)):
        die(f"the data directory {params} cannot go through the preprocessor's stringification "
            "(spaces, quotes, or names like 'linux'/'unix' that are macros); choose --work")
    for sub in ("params", "bin", "logs", "out"):
        os.makedirs(os.path.join(work, sub), exist_ok=True)
    return names, bench_dir, work


def print_summary(args, work, rows, bench_rows):
    """The summary table, and the bench table (also WORK/table.md) when there is one."""
    print("\n| program | result | details | mean top prob (ref) | compile | compile peak RSS |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        detail = r["detail"].replace("|", "\\|")
        print(f"| {r['program']} | {r['result']} | {detail} | {r['stats']} | {r['compile']} | "
              f"{r['rss']} |")
    if bench_rows:
        table = [f"DNN programs: hpvm-cc -O3 vs onnxruntime, {args.threads} threads, "
                 f"{args.bench} round(s) of {args.batches} batches (first batch of each run "
                 "left out); ms per batch, min / median / max", "",
                 "| program | batch | hpvm ms | onnxruntime ms | hpvm/ort (median) | compile | "
                 "compile peak RSS |", "|---|---|---|---|---|---|---|"] + bench_rows
        text = "\n".join(table) + "\n"
        with open(os.path.join(work, "table.md"), "w") as f:
            f.write(text)
        print("\n" + text + f"(also in {os.path.join(work, 'table.md')})")


def main():
    args = parse_args()
    names, bench_dir, work = check_args(args)
    print(f"dnn-check: {len(names)} program(s) from {bench_dir}, {args.batches} batch(es) each, "
          f"work in {work}" + (" (reference only)" if args.reference_only else ""))
    rows, bench_rows, failed = [], [], []
    for name in names:
        print(f"== {name}")
        ok, row = check_program(name, args, work, bench_rows)
        rows.append(row)
        if not ok:
            failed.append(name)
    print_summary(args, work, rows, bench_rows)
    if failed:
        print(f"\ndnn-check: FAILED: {', '.join(failed)}")
        return 1
    print(f"\ndnn-check: all {len(names)} program(s) "
          + ("built and ran their references" if args.reference_only else "passed"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
