#!/usr/bin/env python3
"""Builds HPVM programs with kernels for a device and checks them.

For each program (HPVM-C .c/.cpp with a main, or an .mlir example):

* .c/.cpp: builds it for the CPU and, with every node hinted GPU_TARGET, for
  --target (gpu or opencl); validates the kernels (spirv-val for opencl,
  ptxas for sm_80 and sm_90 for gpu, when ptxas exists); runs both builds with
  HPVM_TRACE=1 and compares their output and exit status. Prints one line:
  "<name>: same output; on <device>: <nodes>" ("on cpu only" when no node ran
  on a device).
* .mlir: compiles the kernels (--emit=spirv or --emit=ptx) and validates them:
  "<name>: kernels valid" ("<name>: no kernels" without GPU-hinted nodes that
  can be kernels).

Anything else ("<name>: FAILED ...") makes the exit status 1.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

TRACE = re.compile(r"^hpvm-trace: (\S+) on (\S+)")


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


def check_c(args, path, name, out):
    with open(path) as source:
        text = source.read()
    hinted = text.replace("__hpvm__hint(CPU_TARGET)", "__hpvm__hint(GPU_TARGET)").replace(
        "__hpvm__hint(hpvm::CPU_TARGET)", "__hpvm__hint(hpvm::GPU_TARGET)")
    suffix = os.path.splitext(path)[1]
    hinted_path = os.path.join(out, name + ".gpu" + suffix)
    with open(hinted_path, "w") as copy:
        copy.write(hinted)
    cpu_exe = os.path.join(out, name + ".cpu")
    dev_exe = os.path.join(out, name + "." + args.target)
    # The hinted program is compiled with the directory of the original on
    # the include path (programs include their own headers).
    include = ["-I", os.path.dirname(os.path.abspath(path))]
    code, _, err = run([args.hpvm_cc, "-O2"] + include + [path, "-o", cpu_exe])
    if code != 0:
        return "FAILED to build for the CPU: " + err.strip()
    code, _, err = run([args.hpvm_cc, "-O2", "--target=" + args.target] + include +
                       [hinted_path, "-o", dev_exe])
    if code != 0:
        return "FAILED to build for %s: %s" % (args.target, err.strip())
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
    dev = run([dev_exe], env=env)
    if cpu[0] != dev[0]:
        return "FAILED: exit status %d on the CPU build, %d on the %s build:\n%s" % (
            cpu[0], dev[0], args.target, dev[2])
    if cpu[1] != dev[1]:
        return "FAILED: outputs differ\n--- cpu\n%s--- %s\n%s%s" % (
            cpu[1], args.target, dev[1], dev[2])
    devices = {}
    for line in dev[2].splitlines():
        match = TRACE.match(line)
        if match and match.group(2) != "cpu":
            devices.setdefault(match.group(2).split(":")[0], set()).add(match.group(1))
    if not devices:
        return "same output; on cpu only"
    return "same output; " + "; ".join(
        "on %s: %s" % (device, ",".join(sorted(nodes))) for device, nodes in sorted(devices.items()))


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--target", choices=["gpu", "opencl"], required=True)
    parser.add_argument("--out", required=True, help="a directory for the builds")
    parser.add_argument("--hpvm-cc", default=shutil.which("hpvm-cc") or "hpvm-cc")
    parser.add_argument("--ptxas", default=shutil.which("ptxas") or
                        ("/usr/local/cuda/bin/ptxas"
                         if os.path.exists("/usr/local/cuda/bin/ptxas") else ""))
    parser.add_argument("programs", nargs="+")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    failed = False
    for path in args.programs:
        name = os.path.splitext(os.path.basename(path))[0]
        check = check_mlir if path.endswith(".mlir") else check_c
        try:
            verdict = check(args, path, name, args.out)
        except subprocess.TimeoutExpired as timeout:
            verdict = "FAILED: timed out: %s" % " ".join(timeout.cmd)
        failed |= verdict.startswith("FAILED")
        print("%s: %s" % (name, verdict), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
