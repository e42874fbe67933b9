#!/usr/bin/env python3
"""static.py - the benchmark kernels' machine code, HPVM's against nvcc -O3's, without a GPU.

For every benchmark kernel (benchmarks/gpu/run.sh's programs, the edge pipeline's stages, the
tensor kernels of test/Integration/Devices/Inputs/tensor_tiles.c), HPVM's PTX (hpvm-cc
--target=gpu --emit=ptx) and the hand-written CUDA of benchmarks/gpu (nvcc -O3 -cubin) are
assembled by ptxas for one architecture (sm_90) and read back:
  regs      registers per thread (ptxas -v)
  spills    spill stores + loads in bytes (ptxas -v)
  loop      SASS instructions of the kernel's hot loop (the innermost loop with the most
            floating-point arithmetic), per floating-point operation in it: per source-level
            iteration for loops of one FMA per iteration; the whole kernel where it has no loop
  lead      loads (LDG, LDS) issued in that loop before its first floating-point operation
HPVM's kernels come twice: `<kernel>` (64-bit index arithmetic) and `<kernel>__i32` (the
variant the runtime launches when grid and buffers fit 2^31). The SASS comes from nvdisasm
(scripts/bootstrap-gpu-tools.sh installs it from PyPI); without it the SASS columns say n/a.
Goals: regs <= nvcc's + 10%, no spills where nvcc has none, loop <= nvcc's + 10%.
Usage: static.py [--hpvm-cc PATH] [--only NAME,...] [--arch sm_90] [--work DIR]
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OPENCL = os.path.join(ROOT, "benchmarks", "opencl")
GPU = os.path.join(ROOT, "benchmarks", "gpu")

# name, HPVM source and flags, the HPVM kernel's entry, CUDA source and flags (None: none).
KERNELS = [
    ("vadd", ["benchmarks/opencl/vadd.c", "-I", OPENCL], "vadd_leaf",
     ("vadd_cuda.cu", [])),
    ("stencil", ["benchmarks/opencl/stencil.c", "-I", OPENCL, "-ffp-contract=off"],
     "stencil_leaf", ("stencil_cuda.cu", ["--fmad=false"])),
    ("sgemm", ["benchmarks/opencl/sgemm.c", "-I", OPENCL], "sgemm_leaf",
     ("sgemm_cuda.cu", [])),
    ("sgemm_tiled", ["benchmarks/opencl/sgemm_tiled.c", "-I", OPENCL], None,
     ("sgemm_cuda.cu", ["-DSGEMM_TILED"])),
    ("sgemm_blocked", ["benchmarks/gpu/sgemm_blocked.c", "-I", GPU], None,
     ("sgemm_cuda.cu", ["-DSGEMM_BLOCKED"])),
    ("edge", ["examples/edge_detection.mlir"], None, None),
    ("tensor_tiles", ["test/Integration/Devices/Inputs/tensor_tiles.c"], None, None),
]

FLOAT_OPS = re.compile(r"\b(FFMA|FADD|FMUL|HFMA2|DFMA)\b")
LOADS = re.compile(r"\b(LDG|LDS|LD)\b")


def run(command, **kwargs):
    result = subprocess.run(command, capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        sys.exit("static.py: %s failed (exit %d):\n%s" %
                 (" ".join(command), result.returncode, result.stderr[-3000:]))
    return result


def ptxas_info(text):
    """{function: (registers, spill bytes)} from ptxas -v's report."""
    info, current = {}, None
    for line in text.splitlines():
        m = re.search(r"Compiling entry function '([^']+)'", line)
        if m:
            current = m.group(1)
            continue
        m = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if m and current:
            info.setdefault(current, [0, 0])[1] = int(m.group(1)) + int(m.group(2))
        m = re.search(r"Used (\d+) registers", line)
        if m and current:
            info.setdefault(current, [0, 0])[0] = int(m.group(1))
    return {name: tuple(values) for name, values in info.items()}


def sass_functions(text):
    """{function: [(address, label or None, instruction)]} from nvdisasm -c."""
    functions, current, label = {}, None, None
    for line in text.splitlines():
        m = re.match(r"\s*\.text\.(\S+):", line)
        if m:
            current = functions.setdefault(m.group(1), [])
            continue
        m = re.match(r"^(\.L_x_\d+):", line)
        if m:
            label = m.group(1)
            continue
        m = re.match(r"\s*/\*([0-9a-f]+)\*/\s+(.*?)\s*;", line)
        if m and current is not None:
            current.append((int(m.group(1), 16), label, m.group(2)))
            label = None
    return functions


def loops(code):
    """(start, end) index ranges of the backward branches' loops, innermost first."""
    labels = {entry[1]: i for i, entry in enumerate(code) if entry[1]}
    found = []
    for i, (_, _, instruction) in enumerate(code):
        m = re.search(r"\bBRA\b.*`\((\.L_x_\d+)\)", instruction)
        if m and m.group(1) in labels and labels[m.group(1)] <= i:
            found.append((labels[m.group(1)], i))
    return sorted(found, key=lambda r: r[1] - r[0])


def hot_loop(code):
    """The body (instructions) of the loop with the most floating-point operations (of those,
    the smallest: an outer loop around it adds nothing), or the function up to its last EXIT
    when no loop computes."""
    best = None
    for start, end in loops(code):
        body = [entry[2] for entry in code[start:end + 1]]
        count = sum(1 for i in body if FLOAT_OPS.search(i))
        if count and (best is None or count > best[0]):
            best = (count, body)
    if best:
        return best[1], True
    last_exit = max((i for i, e in enumerate(code) if re.search(r"\bEXIT\b", e[2])), default=None)
    body = [entry[2] for entry in code[:None if last_exit is None else last_exit + 1]]
    return body, False


def sass_metrics(code):
    """(instructions per floating-point op, instructions, float ops, loads before the first
    float op, in a loop) of a function's hot loop."""
    body, in_loop = hot_loop(code)
    floats = sum(1 for i in body if FLOAT_OPS.search(i))
    lead = 0
    for instruction in body:
        if FLOAT_OPS.search(instruction):
            break
        if LOADS.search(instruction):
            lead += 1
    per = len(body) / floats if floats and in_loop else float(len(body))
    return per, len(body), floats, lead, in_loop


def assemble(ptxas, nvdisasm, source_ptx, cubin, arch):
    """{function: (regs, spills, metrics or None)} of a PTX file assembled for `arch`."""
    report = run([ptxas, "-O3", "-arch=" + arch, "-v", source_ptx, "-o", cubin])
    return describe(report.stderr + report.stdout, nvdisasm, cubin)


def describe(ptxas_report, nvdisasm, cubin):
    info = ptxas_info(ptxas_report)
    functions = sass_functions(run([nvdisasm, "-c", cubin]).stdout) if nvdisasm else {}
    return {name: (regs, spills, sass_metrics(functions[name]) if name in functions else None)
            for name, (regs, spills) in info.items()}


def ours(args, tools, name, sources):
    ptx = os.path.join(args.work, name + ".ptx")
    command = [args.hpvm_cc, "--target=gpu", "-O3", "--emit=ptx"]
    command += [os.path.join(ROOT, s) if s.endswith((".c", ".mlir")) else s for s in sources]
    run(command + ["-o", ptx])
    return assemble(tools["ptxas"], tools["nvdisasm"], ptx,
                    os.path.join(args.work, name + ".cubin"), args.arch)


def nvcc(args, tools, name, cuda):
    source, flags = cuda
    cubin = os.path.join(args.work, name + "_nvcc.cubin")
    report = run([tools["nvcc"], "-O3", "-cubin", "-arch=" + args.arch, "-Xptxas", "-v"] +
                 flags + [os.path.join(GPU, source), "-o", cubin])
    return describe(report.stderr + report.stdout, tools["nvdisasm"], cubin)


def cells(entry):
    regs, spills, metrics = entry
    if metrics is None:
        return [str(regs), str(spills), "n/a", "n/a"]
    per, count, floats, lead, in_loop = metrics
    loop = "%.2f (%d/%d)" % (per, count, floats) if in_loop else "%d (no loop)" % count
    return [str(regs), str(spills), loop, str(lead)]


def verdict(mine, theirs):
    """The goals of one of our kernels against nvcc's: 'yes' or what is missed."""
    if theirs is None:
        return "no nvcc kernel"
    missed = []
    if mine[0] > theirs[0] * 1.10:
        missed.append("regs")
    if mine[1] > 0 and theirs[1] == 0:
        missed.append("spills")
    if mine[2] and theirs[2] and mine[2][0] > theirs[2][0] * 1.10:
        missed.append("loop")
    return "yes" if not missed else "missed: " + ", ".join(missed)


def table_rows(name, mine, theirs):
    """Rows of one benchmark: each of our kernels against nvcc's kernel (when there is one)."""
    reference = next(iter(theirs.values())) if theirs and len(theirs) == 1 else None
    rows = []
    if reference:
        rows.append([name, "nvcc -O3"] + cells(reference) + [""])
    for function in sorted(mine):
        rows.append([name, function] + cells(mine[function]) + [verdict(mine[function], reference)])
    return rows


def find_tools(hpvm_cc):
    """ptxas, nvcc, nvdisasm: the variables PTXAS, NVCC, NVDISASM, PATH, CUDA_HOME's bin, and for
    nvdisasm the build's gpu-tools-venv (scripts/bootstrap-gpu-tools.sh); None where absent."""
    cuda = os.environ.get("CUDA_HOME", "/usr/local/cuda")
    build = os.path.dirname(os.path.dirname(os.path.realpath(shutil.which(hpvm_cc) or hpvm_cc)))
    tools = {}
    for tool in ("ptxas", "nvcc", "nvdisasm"):
        path = os.environ.get(tool.upper()) or shutil.which(tool)
        if not path and os.path.exists(os.path.join(cuda, "bin", tool)):
            path = os.path.join(cuda, "bin", tool)
        tools[tool] = path
    if not tools["nvdisasm"]:
        for folder, _, files in os.walk(os.path.join(build, "gpu-tools-venv")):
            if "nvdisasm" in files and folder.endswith("bin"):
                tools["nvdisasm"] = os.path.join(folder, "nvdisasm")
    return tools


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hpvm-cc", default=os.path.join(ROOT, "build", "bin", "hpvm-cc"))
    parser.add_argument("--only", default="", help="benchmarks to compare (comma-separated)")
    parser.add_argument("--arch", default="sm_90")
    parser.add_argument("--work", default=None, help="where the PTX and cubins go")
    args = parser.parse_args()
    tools = find_tools(args.hpvm_cc)
    if not tools["ptxas"]:
        print("static.py: no ptxas (CUDA toolkit): nothing to compare")
        return 0
    args.work = args.work or tempfile.mkdtemp(prefix="hpvm-gpu-static-")
    os.makedirs(args.work, exist_ok=True)
    only = set(filter(None, args.only.split(",")))
    header = ["benchmark", "kernel", "regs", "spills (B)", "loop: SASS per FP op (SASS/FP ops)",
              "loads before 1st FP op", "goals"]
    print("| " + " | ".join(header) + " |")
    print("|" + " --- |" * len(header))
    for name, sources, _, cuda in KERNELS:
        if only and name not in only:
            continue
        mine = ours(args, tools, name, sources)
        theirs = nvcc(args, tools, name, cuda) if cuda and tools["nvcc"] else None
        for row in table_rows(name, mine, theirs):
            print("| " + " | ".join(row) + " |")
    print("\n(%s; ptxas %s; SASS by %s)" % (args.arch, tools["ptxas"],
                                            tools["nvdisasm"] or "none: n/a"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
