#!/usr/bin/env python3
"""Builds HPVM programs with kernels for a device and checks them.

For each program (HPVM-C .c/.cpp with a main, or an .mlir example):

* .c/.cpp: builds it for the CPU and, with every node hinted GPU_TARGET, for
  --target (gpu or opencl); validates the kernels (spirv-val for opencl,
  ptxas for sm_80 and sm_90 for gpu, when ptxas exists; a build whose CUDA
  image could not get cubins fails); runs both builds with
  HPVM_TRACE=1 and compares their output and exit status. Prints one line:
  "<name>: same output; on <device>: <nodes>" ("on cpu only" when no node ran
  on a device).
* .mlir: compiles the kernels (--emit=spirv or --emit=ptx) and validates them:
  "<name>: kernels valid" ("<name>: no kernels" without GPU-hinted nodes that
  can be kernels).

With --split the nodes are hinted CPU_OR_GPU_TARGET (CPU_OR_SPIR_TARGET for
opencl) instead, so that the runtime splits their grids between the device and
the CPU; the line then ends with "; split: <nodes>" (the nodes whose grids ran
on both).

Anything else ("<name>: FAILED ...") makes the exit status 1.

For a device on another machine: --bundle DIR builds the .c/.cpp programs
here, runs their CPU builds, and puts the device builds, the CPU builds'
results and this script in DIR; there, `python3 DIR/device-programs.py
--run-bundle DIR` runs the device builds and prints the same lines.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys

TRACE = re.compile(r"^hpvm-trace: (\S+) on (\S+)")
SPLIT = re.compile(r"^hpvm-trace: (\S+) on .* \[0, \d+\) and cpu \[")


def run(command, env=None, timeout=600):
    result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=env, timeout=timeout, text=True, errors="replace")
    return result.returncode, result.stdout, result.stderr


def validate(args, image, name):
    """Checks a kernel image; returns an error text or ''."""
    if args.target == "opencl":
        code, _, err = run(["spirv-val", "--target-env", "opencl2.1", image])
        return "" if code == 0 else "spirv-val: " + err.strip()
    if not args.ptxas:
        return ""
    for arch in ("sm_80", "sm_90"):
        code, _, err = run([args.ptxas, "-arch=" + arch, image, "-o", os.devnull])
        if code != 0:
            return "ptxas -arch=%s: %s" % (arch, err.strip())
    return ""


def check_mlir(args, path, name, out):
    kind = "spirv" if args.target == "opencl" else "ptx"
    image = os.path.join(out, name + "." + kind)
    code, _, err = run([args.hpvm_cc, "--target=" + args.target, "--emit=" + kind, path,
                        "-o", image])
    if code != 0 and "became a kernel" in err:
        return "no kernels"
    if code != 0:
        return "FAILED to compile the kernels: " + err.strip()
    error = validate(args, image, name)
    return "FAILED: " + error if error else "kernels valid"


def hinted_text(text, target, cpp):
    """`text` with its CPU hints turned into `target`'s."""
    hinted = text.replace("__hpvm__hint(CPU_TARGET)", "__hpvm__hint(%s)" % target).replace(
        "__hpvm__hint(hpvm::CPU_TARGET)", "__hpvm__hint(hpvm::%s)" % target)
    # Hetero-C++ hints name DEVICE, which hpvm-cc defines as the CPU target.
    gpu = "hpvm::" + target if cpp else target
    return hinted.replace("__hetero_hint(DEVICE)", "__hetero_hint(%s)" % gpu)


def hinted_headers(text, source_dir, target, cpp, folder):
    """The program's own headers (`#include "X"` found beside it), hinted as the program is,
    into `folder`, which goes first on the device build's include path: leaves defined in a
    shared header go to the device too."""
    for header in re.findall(r'#include "([^"]+)"', text):
        original = os.path.join(source_dir, header)
        if not os.path.isfile(original):
            continue
        copy_path = os.path.join(folder, header)
        os.makedirs(os.path.dirname(copy_path), exist_ok=True)
        with open(original) as source, open(copy_path, "w") as copy:
            copy.write(hinted_text(source.read(), target, cpp))


def check_c(args, path, name, out):
    with open(path) as source:
        text = source.read()
    target = "GPU_TARGET"
    if args.split:
        target = "CPU_OR_SPIR_TARGET" if args.target == "opencl" else "CPU_OR_GPU_TARGET"
    cpp = path.endswith((".cpp", ".cc"))
    suffix = os.path.splitext(path)[1]
    hinted_path = os.path.join(out, name + ".gpu" + suffix)
    with open(hinted_path, "w") as copy:
        copy.write(hinted_text(text, target, cpp))
    source_dir = os.path.dirname(os.path.abspath(path))
    headers = os.path.join(out, name + ".headers")
    hinted_headers(text, source_dir, target, cpp, headers)
    cpu_exe = os.path.join(out, name + ".cpu")
    dev_exe = os.path.join(out, name + "." + args.target)
    # The hinted program is compiled with its hinted headers, then the directory of the
    # original, on the include path (programs include their own headers).
    include = ["-I", source_dir]
    flags = args.cflags.split()
    code, _, err = run([args.hpvm_cc, "-O2"] + flags + include + [path, "-o", cpu_exe])
    if code != 0:
        return "FAILED to build for the CPU: " + err.strip()
    include = ["-I", headers] + include
    code, _, err = run([args.hpvm_cc, "-O2", "--target=" + args.target] + flags + include +
                       [hinted_path, "-o", dev_exe])
    if code != 0:
        return "FAILED to build for %s: %s" % (args.target, err.strip())
    # With the CUDA toolkit there, the image must hold machine code, not only PTX
    # for the driver to compile at run time.
    if "holds PTX only" in err:
        return "FAILED: no cubins: " + err.strip()
    kind = "spirv" if args.target == "opencl" else "ptx"
    image = os.path.join(out, name + "." + kind)
    code, _, err = run([args.hpvm_cc, "--target=" + args.target, "--emit=" + kind] +
                       include + [hinted_path, "-o", image])
    if code == 0:
        error = validate(args, image, name)
        if error:
            return "FAILED: " + error
    elif "became a kernel" not in err:
        return "FAILED to compile the kernels: " + err.strip()
    env = dict(os.environ)
    env["HPVM_TRACE"] = "1"
    cpu = run([cpu_exe], env=env)
    if args.bundle:
        # Run elsewhere (--run-bundle): the device build and what the CPU build gave.
        # Named after the source file: host_blocks.c and host_blocks.cpp both exist.
        exe = os.path.basename(path) + "." + args.target
        shutil.copy(dev_exe, os.path.join(args.bundle, exe))
        args.manifest.append({"name": name, "exe": exe,
                              "status": cpu[0], "stdout": cpu[1]})
        return "bundled"
    return compare(args, cpu, run([dev_exe], env=env))


def compare(args, cpu, dev):
    """The verdict on a device build's run `dev` against the CPU build's `cpu`
    ((status, stdout, stderr) each)."""
    if cpu[0] != dev[0]:
        return "FAILED: exit status %d on the CPU build, %d on the %s build:\n%s" % (
            cpu[0], dev[0], args.target, dev[2])
    if cpu[1] != dev[1]:
        return "FAILED: outputs differ\n--- cpu\n%s--- %s\n%s%s" % (
            cpu[1], args.target, dev[1], dev[2])
    devices = {}
    split = set()
    for line in dev[2].splitlines():
        match = TRACE.match(line)
        if match and match.group(2) != "cpu":
            devices.setdefault(match.group(2).split(":")[0], set()).add(match.group(1))
        match = SPLIT.match(line)
        if match:
            split.add(match.group(1))
    if not devices:
        return "same output; on cpu only"
    verdict = "same output; " + "; ".join(
        "on %s: %s" % (device, ",".join(sorted(nodes))) for device, nodes in sorted(devices.items()))
    if args.split:
        verdict += "; split: " + (",".join(sorted(split)) or "none")
    return verdict


def run_bundle(args):
    """Runs the device builds of a bundle and compares them with the CPU builds'
    recorded results; needs neither hpvm-cc nor the sources."""
    with open(os.path.join(args.run_bundle, "manifest.json")) as manifest:
        bundle = json.load(manifest)
    args.target = bundle["target"]
    env = dict(os.environ)
    env["HPVM_TRACE"] = "1"
    failed = False
    for entry in bundle["programs"]:
        try:
            dev = run([os.path.join(args.run_bundle, entry["exe"])], env=env)
            verdict = compare(args, (entry["status"], entry["stdout"], ""), dev)
        except (OSError, subprocess.TimeoutExpired) as error:
            verdict = "FAILED: %s" % error
        failed |= verdict.startswith("FAILED")
        print("%s: %s" % (entry["name"], verdict), flush=True)
    return 1 if failed else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--target", choices=["gpu", "opencl"])
    parser.add_argument("--out", help="a directory for the builds")
    parser.add_argument("--bundle", metavar="DIR",
                        help="build only: put the device builds of the .c/.cpp programs "
                        "and the CPU builds' results in DIR, for --run-bundle")
    parser.add_argument("--run-bundle", metavar="DIR",
                        help="run the device builds of a bundle (where the device is) "
                        "and compare them with the CPU builds' results")
    parser.add_argument("--hpvm-cc", default=shutil.which("hpvm-cc") or "hpvm-cc")
    parser.add_argument("--ptxas", default=shutil.which("ptxas") or
                        ("/usr/local/cuda/bin/ptxas"
                         if os.path.exists("/usr/local/cuda/bin/ptxas") else ""))
    parser.add_argument("--split", action="store_true",
                        help="hint the nodes for the CPU and the device (split grids)")
    parser.add_argument("--cflags", default="",
                        help="more hpvm-cc flags for both builds, space-separated (a "
                        "bundle for another machine: -march=x86-64-v3)")
    parser.add_argument("programs", nargs="*")
    args = parser.parse_args()
    if args.run_bundle:
        return run_bundle(args)
    if not args.target or not args.out or not args.programs:
        parser.error("--target, --out and programs are required (or --run-bundle)")
    os.makedirs(args.out, exist_ok=True)
    args.manifest = []
    if args.bundle:
        os.makedirs(args.bundle, exist_ok=True)
    failed = False
    for path in args.programs:
        name = os.path.splitext(os.path.basename(path))[0]
        if args.bundle and path.endswith(".mlir"):
            continue  # no host of their own
        check = check_mlir if path.endswith(".mlir") else check_c
        try:
            verdict = check(args, path, name, args.out)
        except subprocess.TimeoutExpired as timeout:
            verdict = "FAILED: timed out: %s" % " ".join(timeout.cmd)
        failed |= verdict.startswith("FAILED")
        print("%s: %s" % (name, verdict), flush=True)
    if args.bundle:
        with open(os.path.join(args.bundle, "manifest.json"), "w") as manifest:
            json.dump({"target": args.target, "programs": args.manifest}, manifest, indent=1)
        shutil.copy(os.path.abspath(__file__), os.path.join(args.bundle, "device-programs.py"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
