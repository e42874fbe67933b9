"""Compiling the release's programs with hpvm-cc and running them."""
import os
import re
import signal
import subprocess
import time

from .program import CheckError


def run_cmd(cmd, log_out, log_err, env=None, timeout=None, cwd=None):
    """Runs cmd (its own process group, killed as a whole on timeout); returns (rc, seconds)."""
    t0 = time.monotonic()
    with open(log_out, "wb") as out, open(log_err, "wb") as err:
        p = subprocess.Popen(cmd, stdout=out, stderr=err, env=env, cwd=cwd,
                             start_new_session=True)
        try:
            rc = p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
            rc = None
    return rc, time.monotonic() - t0


def first_error(path):
    """The first line of a log that looks like an error, for the summary table."""
    try:
        with open(path, errors="replace") as f:
            for ln in f:
                if re.search(r"\berror\b|\bfatal\b|Assertion|Aborted|Segmentation", ln, re.I):
                    return ln.strip()[:200]
    except OSError:
        pass
    return ""


def tail(path, n=20):
    try:
        with open(path, errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return ""
    return "\n".join("      | " + ln for ln in lines[-n:])


def compile_program(prog, args, work):
    """hpvm-cc -O3 -DMODEL_PARAMS_DIR=WORK/params SOURCE -o WORK/bin/<name>; -> (secs, peak MB)."""
    exe = os.path.join(work, "bin", prog.name)
    if os.path.exists(exe):
        os.remove(exe)
    log = os.path.join(work, "logs", prog.name + ".compile.log")
    timefile = os.path.join(work, "logs", prog.name + ".compile.time")
    cmd = [args.hpvm_cc, "-O3", f"--target={args.target}", *args.flags.split(),
           "-DMODEL_PARAMS_DIR=" + os.path.join(work, "params"), prog.source, "-o", exe]
    timev = "/usr/bin/time" if os.access("/usr/bin/time", os.X_OK) else None
    full = ([timev, "-v", "-o", timefile] + cmd) if timev else cmd
    rc, secs = run_cmd(full, log, log, timeout=args.timeout)
    if rc is None:
        raise CheckError(f"hpvm-cc ran past {args.timeout} s; log {log}:\n{tail(log)}")
    if rc != 0 or not os.path.isfile(exe):
        what = f"exit status {rc}" if rc else f"no {exe}"
        raise CheckError(f"hpvm-cc failed ({what}): {first_error(log) or 'see the log'}\n"
                         f"      log {log}:\n{tail(log)}")
    peak = None
    if timev:
        with open(timefile, errors="replace") as f:
            m = re.search(r"Maximum resident set size \(kbytes\):\s*(\d+)", f.read())
        peak = int(m.group(1)) / 1024 if m else None
    return exe, secs, peak


STATS_RE = re.compile(r"hpvm-tensor: batch (\d+): ([0-9.eE+-]+) ms")


def run_program(prog, exe, args, work, dump):
    """One run of the compiled program over K batches; -> per-batch ms from the stats lines."""
    env = dict(os.environ, HPVM_TENSOR_BATCHES=str(args.batches), HPVM_TENSOR_STATS="1",
               OMP_NUM_THREADS=str(args.threads), HPVM_NUM_THREADS=str(args.threads))
    env.pop("HPVM_TENSOR_DUMP", None)
    if args.target != "cpu":
        env["HPVM_TRACE"] = "1"  # where each node ran (placement())
    if dump:
        if os.path.exists(dump):
            os.remove(dump)  # the runtime appends
        env["HPVM_TENSOR_DUMP"] = dump
    out = os.path.join(work, "logs", prog.name + ".run.out")
    err = os.path.join(work, "logs", prog.name + ".run.err")
    rc, secs = run_cmd([exe], out, err, env=env, timeout=args.timeout, cwd=work)
    if rc is None:
        raise CheckError(f"the program ran past {args.timeout} s; stderr {err}:\n{tail(err)}")
    if rc != 0:
        what = f"signal {-rc}" if rc < 0 else f"exit status {rc}"
        msg = f"the program failed ({what})"
        hint = first_error(err) or first_error(out)
        msg += f": {hint}" if hint else ""
        msg += f"\n      stderr {err}:\n{tail(err, 12)}"
        if os.path.getsize(out):
            msg += f"\n      stdout {out}:\n{tail(out, 8)}"
        raise CheckError(msg)
    with open(err, errors="replace") as f:
        stats = {int(i): float(ms) for i, ms in STATS_RE.findall(f.read())}
    times = [stats.get(i) for i in range(args.batches)]
    return times, secs


TRACE_RE = re.compile(r"^hpvm-trace: (\S+) on (\w+)", re.M)


def placement(prog, work):
    """Where the last run's nodes ran (HPVM_TRACE): 'N of M node runs on DEVICE'."""
    with open(os.path.join(work, "logs", prog.name + ".run.err"), errors="replace") as f:
        runs = TRACE_RE.findall(f.read())
    devices = sorted({device for _, device in runs if device != "cpu"})
    on_device = sum(1 for _, device in runs if device != "cpu")
    where = ", ".join(devices) or "a device"
    cpu = sorted({node for node, device in runs if device == "cpu"})
    text = f"{on_device} of {len(runs)} node runs on {where}"
    return text + (f" (on the CPU: {', '.join(cpu[:6])})" if cpu else "")
