#!/usr/bin/env python3
"""Mutation test: hpvm-opt must never crash, hang or abort on malformed input.

Mutates the IR corpus (the dialect tests and the examples) line by line and
token by token, runs the tools on every mutant and fails if any run ends in a
signal, an unexpected exit code, an LLVM crash banner or a timeout. Valid or
invalid, every mutant must get exit code 0 (accepted) or 1 (diagnosed).
Deterministic for a given --seed.
"""
import argparse
import concurrent.futures
import os
import random
import re
import subprocess
import sys
import tempfile

CRASH_MARKERS = ("PLEASE submit a bug report", "Stack dump", "LLVM ERROR",
                 "Assertion", "UNREACHABLE", "Segmentation fault",
                 "terminate called", "AddressSanitizer")

NUMBERS = ["-1", "0", "1", "2", "3", "4", "7", "64", "2147483647", "2147483648",
           "-2147483649", "4294967296", "99999999999999999999", "1.5", "-0.0",
           "1e309", "0x10"]
TYPES = ["f32", "f16", "i1", "i32", "i64", "index", "memref<?xf32>",
         "memref<4x?xi32>", "memref<*xf32>", "tensor<1x8x26x26xf32>", "tensor<?xf32>",
         "tensor<4xi32>", "tensor<*xf32>", "vector<4xf32>", "!hpvm.node",
         "!hpvm.graph", "!llvm.ptr", "none", "()"]
KEYWORDS = ["one_to_one", "all_to_all", "streaming", "level", "x", "y", "z", "w",
            "max", "min", "mean", "in", "out", "inout", "cpu", "gpu", "tensor",
            "axis", "private", "attributes", "->", ":", ",", "(", ")", "[", "]",
            "{", "}", "<", ">"]
OPS = ["hpvm.leaf", "hpvm.internal", "hpvm.create_node", "hpvm.edge",
       "hpvm.bind_in", "hpvm.bind_out", "hpvm.return", "hpvm.instance_id",
       "hpvm.num_instances", "hpvm.barrier", "hpvm.alloc", "hpvm.launch",
       "hpvm.wait", "hpvm.push", "hpvm.pop", "hpvm.track", "hpvm.untrack",
       "hpvm.request", "hpvm.tensor.add", "hpvm.tensor.mul", "hpvm.tensor.conv2d",
       "hpvm.tensor.pool", "hpvm.tensor.relu", "hpvm.tensor.map",
       "hpvm.tensor.reduce", "hpvm.tensor.yield", "hpvm.tensor.batchnorm",
       "func.return", "func.func", "arith.constant"]

NUMBER_RE = re.compile(r"(?<![\w%@#.])-?\d+(\.\d+)?(e[+-]?\d+)?(?![\w])")
SYMBOL_RE = re.compile(r"@[\w.$]+")
SSA_RE = re.compile(r"%[\w.$#]+")
TYPE_RE = re.compile(r"\b(f16|f32|f64|i1|i32|i64|index)\b|"
                     r"(memref|tensor|vector)<[^<>]*>|!hpvm\.(node|graph)|!llvm\.ptr")
WORD_RE = re.compile(r"\b[a-z_][a-z_0-9.]*\b")


def load_corpus(paths):
    """Each `// -----` chunk of each .mlir file is one corpus entry."""
    chunks = []
    for path in paths:
        files = [path] if os.path.isfile(path) else sorted(
            os.path.join(root, name) for root, _, names in os.walk(path)
            for name in names if name.endswith(".mlir"))
        for name in files:
            with open(name) as f:
                for chunk in f.read().split("// -----"):
                    lines = [l for l in chunk.splitlines()
                             if l.strip() and not l.lstrip().startswith("//")]
                    if lines:
                        chunks.append(lines)
    return chunks


def import_hpvm_c(args):
    """Compiles HPVM-C sources as hpvm-cc does and imports them into MLIR."""
    chunks = []
    with tempfile.TemporaryDirectory() as work:
        for index, source in enumerate(args.hpvm_c):
            ll = os.path.join(work, f"{index}.ll")
            subprocess.run([args.clang, "-O1", "-g", "-S", "-emit-llvm", "-w", "-Wno-return-type",
                            "-I", args.include, "-I", os.path.join(args.include, "hpvm"),
                            "-DDEVICE=CPU_TARGET", source, "-o", ll], check=True)
            imported = subprocess.run([args.hpvm_translate, "--import-llvm", ll],
                                      check=True, capture_output=True, text=True)
            lines = [l for l in imported.stdout.splitlines() if l.strip()]
            chunks.append(lines)
    return chunks


def replace_match(line, regex, choices, rng):
    matches = list(regex.finditer(line))
    if not matches:
        return None
    m = rng.choice(matches)
    return line[:m.start()] + rng.choice(choices) + line[m.end():]


def mutate(lines, rng):
    """One random mutation of a chunk; returns (kind, text)."""
    lines = list(lines)
    text = "\n".join(lines)
    i = rng.randrange(len(lines))
    kind = rng.choice(["delete", "duplicate", "swap", "number", "symbol", "ssa",
                       "type", "keyword", "op", "truncate", "char", "double"])
    if kind == "delete":
        del lines[i]
    elif kind == "duplicate":
        lines.insert(i, lines[i])
    elif kind == "swap":
        j = rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
    elif kind == "number":
        new = replace_match(lines[i], NUMBER_RE, NUMBERS, rng)
        lines[i] = new if new is not None else lines[i] + " 0"
    elif kind == "symbol":
        symbols = sorted(set(SYMBOL_RE.findall(text))) + ["@missing", "@"]
        new = replace_match(lines[i], SYMBOL_RE, symbols, rng)
        if new is not None:
            lines[i] = new
    elif kind == "ssa":
        names = sorted(set(SSA_RE.findall(text))) + ["%undefined", "%0", "%"]
        new = replace_match(lines[i], SSA_RE, names, rng)
        if new is not None:
            lines[i] = new
    elif kind == "type":
        new = replace_match(lines[i], TYPE_RE, TYPES, rng)
        if new is not None:
            lines[i] = new
    elif kind == "keyword":
        new = replace_match(lines[i], WORD_RE, KEYWORDS, rng)
        if new is not None:
            lines[i] = new
    elif kind == "op":
        new = replace_match(lines[i], re.compile(r"\b(hpvm|func|arith|memref)\.[\w.]+"),
                            OPS, rng)
        if new is not None:
            lines[i] = new
    elif kind == "truncate":
        cut = rng.randrange(len(text) + 1)
        return kind, text[:cut]
    elif kind == "char":
        pos = rng.randrange(len(text) + 1)
        return kind, text[:pos] + rng.choice("{}()[]<>%@:,=\"#^!-") + text[pos:]
    elif kind == "double":
        # Two mutations compound: more invalid-but-parseable programs.
        _, first = mutate(lines, rng)
        return kind, mutate(first.splitlines() or [""], rng)[1]
    return kind, "\n".join(lines)


def run_one(job):
    index, kind, text, command, timeout = job
    with tempfile.NamedTemporaryFile("w", suffix=".mlir", delete=False) as f:
        f.write(text)
        path = f.name
    try:
        proc = subprocess.run(command + [path], capture_output=True, text=True,
                              timeout=timeout)
        output = proc.stdout[-4000:] + proc.stderr[-4000:]
        crashed = (proc.returncode not in (0, 1)
                   or any(marker in output for marker in CRASH_MARKERS))
        verdict = "crash" if crashed else ("accepted" if proc.returncode == 0
                                           else "rejected")
        detail = f"exit code {proc.returncode}\n{proc.stderr[-2000:]}"
    except subprocess.TimeoutExpired:
        verdict, detail = "crash", f"timed out after {timeout} s (hang)"
    finally:
        os.unlink(path)
    return index, kind, verdict, detail, text, command


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--hpvm-opt", required=True)
    parser.add_argument("--hpvm-translate")
    parser.add_argument("--count", type=int, default=600)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=30)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--save", help="directory for crashing mutants")
    parser.add_argument("--hpvm-c", nargs="*", default=[],
                        help="HPVM-C sources: their imported LLVM IR is mutated and "
                             "raised with hpvm-raise-c (and lowered)")
    parser.add_argument("--hpvm-c-count", type=int, default=0)
    parser.add_argument("--clang", default="clang")
    parser.add_argument("--include", help="the directory holding hpvm/hpvm.h")
    parser.add_argument("corpus", nargs="+")
    args = parser.parse_args()

    rng = random.Random(args.seed)
    c_corpus = import_hpvm_c(args) if args.hpvm_c else []
    corpus = load_corpus(args.corpus)
    if not corpus:
        sys.exit("mutate.py: empty corpus")
    # Parse/verify/print is the main target; some mutants also go through the
    # generic printer, canonicalization, the CPU lowering, node fusion, tiling and the
    # DOT exporter.
    commands = [[args.hpvm_opt], [args.hpvm_opt, "--mlir-print-op-generic"],
                [args.hpvm_opt, "--canonicalize", "--cse"],
                [args.hpvm_opt, "--hpvm-lower-to-llvm-pipeline"],
                [args.hpvm_opt, "--hpvm-fuse-nodes=greedy=true"],
                [args.hpvm_opt, "--hpvm-tile-nodes=sizes=4 scratch=f32"],
                [args.hpvm_opt, "--hpvm-tile-nodes=sizes=4,3",
                 "--hpvm-lower-to-llvm-pipeline"],
                [args.hpvm_opt, "--hpvm-assign-targets=available=cpu,gpu policy=all"],
                [args.hpvm_opt, "--hpvm-assign-targets=fallback=cpu",
                 "--hpvm-lower-to-llvm-pipeline"],
                [args.hpvm_opt, "--hpvm-fuse-tensor-nodes"],
                [args.hpvm_opt, "--hpvm-fuse-tensor-nodes", "--convert-hpvm-tensor-to-linalg"]]
    if args.hpvm_translate:
        commands.append([args.hpvm_translate, "--hpvm-to-dot"])
    jobs = []
    for index in range(args.count):
        kind, text = mutate(rng.choice(corpus), rng)
        command = commands[0] if index % 2 == 0 else rng.choice(commands)
        jobs.append((index, kind, text, command, args.timeout))
    # Imported HPVM-C: the frontend must diagnose, never crash, whatever the
    # llvm-dialect module it is given.
    raise_commands = [[args.hpvm_opt, "--hpvm-raise-c"],
                      [args.hpvm_opt, "--hpvm-raise-c", "--hpvm-lower-to-llvm-pipeline"]]
    for index in range(args.count, args.count + args.hpvm_c_count):
        if not c_corpus:
            break
        kind, text = mutate(rng.choice(c_corpus), rng)
        jobs.append((index, kind, text, rng.choice(raise_commands), args.timeout))
    args.count = len(jobs)

    counts = {"accepted": 0, "rejected": 0, "crash": 0}
    crashes = []
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for index, kind, verdict, detail, text, command in pool.map(run_one, jobs):
            counts[verdict] += 1
            if verdict == "crash":
                crashes.append((index, kind, detail, text, command))

    for index, kind, detail, text, command in crashes:
        print(f"CRASH in mutant {index} ({kind}) running {' '.join(command)}:")
        print(detail)
        print("--- mutant ---")
        print(text)
        if args.save:
            os.makedirs(args.save, exist_ok=True)
            with open(os.path.join(args.save, f"mutant{index}.mlir"), "w") as f:
                f.write(text)
    print(f"mutants: {args.count}, accepted: {counts['accepted']}, "
          f"rejected: {counts['rejected']}, crashes: {counts['crash']}")
    sys.exit(1 if crashes else 0)


if __name__ == "__main__":
    main()
