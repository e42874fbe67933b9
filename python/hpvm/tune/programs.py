"""Programs the performance auto-tuner tunes: each is a space of knobs and a cost, the
measured time of the program built and run with those knobs.

* `sgemm`: the naive HPVM-C sgemm of examples/hpvm-c (one instance per element of C, one
  internal-node instance per tile): the tile (TILE_M x TILE_N, compile-time), the vector
  lanes and rows of hpvm-vectorize (`-fhpvm-lanes`, `-fhpvm-rows`; 0: the pass
  chooses) and the runtime's threads (`HPVM_NUM_THREADS`).
* `stencil`: the 7-point 3-D stencil of examples/stencil.mlir (a 3-D grid of instances, one
  launch per step) driven by benchmarks/hpvm/stencil_bench.c: the tile of
  `hpvm-tile-nodes` (x by y, or untiled), the target (the CPU backend, or the OpenCL backend
  on the OpenCL CPU device, PoCL) and the threads.
* `edge`: the streaming edge-detection pipeline of examples/edge_detection.mlir driven by
  benchmarks/hpvm/edge_bench.c: which pair of stages `hpvm-fuse-nodes` fuses (none, or one of
  the two legal pairs), the frames in flight (the driver's slots) and the threads.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Dict, List, Optional

from ..errors import HPVMError
from .. import toolchain
from .search import Parameter, Space


class Program:
    """A program whose knobs are build steps (hpvm-opt-style transforms and hpvm-cc's build,
    both run in this process by the compiler library), run-time arguments and environment
    variables.
    Builds are cached in `workdir` by everything that
    goes into them (the knobs, the sources, the compiler); the cost is the median time the
    program prints for its HPVM version."""

    name = "program"
    source = ""  # the program, relative to the project's root
    default: Dict[str, object] = {}

    def __init__(self, root: Path, workdir: Path):
        self.root = Path(root)
        self.workdir = Path(workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.builds = 0
        self._stamp: Optional[str] = None

    # What a subclass defines.
    def space(self) -> Space:
        raise NotImplementedError

    def transforms(self, values: Dict[str, object]) -> List[str]:
        """hpvm-opt pass arguments applied to the graph before hpvm-cc (none: the source as it is)."""
        return []

    def flags(self, values: Dict[str, object]) -> List[str]:
        """hpvm-cc flags that depend on the knobs."""
        return []

    def sources(self) -> List[str]:
        """The hpvm-cc inputs after the program itself (drivers, objects), and fixed flags."""
        return []

    def arguments(self, values: Dict[str, object]) -> List[str]:
        return []

    def environment(self, values: Dict[str, object]) -> Dict[str, str]:
        return {}

    def measured_time(self, output: str) -> Optional[float]:
        """Seconds, from the program's output; None when it printed none."""
        raise NotImplementedError

    def correct(self, output: str) -> bool:
        return True

    # The build and the run.
    def _run(self, command, what: str) -> None:
        done = subprocess.run([str(c) for c in command], capture_output=True, text=True)
        if done.returncode != 0:
            raise HPVMError(f"{self.name}: {what} failed: {' '.join(map(str, command))}\n"
                            f"{done.stderr}")

    def _hpvm_cc(self, arguments, what: str) -> None:
        """`hpvm-cc <arguments>`, in this process (the compiler library's driver)."""
        status, said = toolchain.run_driver(arguments)
        if status != 0:
            raise HPVMError(f"{self.name}: {what} failed: hpvm-cc "
                            f"{' '.join(map(str, arguments))}\n{said}")

    def _inputs_stamp(self) -> str:
        """What a build depends on besides the knobs: the program's source and the files
        among its other inputs (by content), and the compiler (hpvm-cc, the compiler
        library, the runtime: by path, time and size), so that a changed program or a
        rebuilt compiler never reuses an old binary."""
        if self._stamp is None:
            digest = hashlib.sha256()
            for path in [self.root / self.source,
                         *[Path(s) for s in self.sources() if not s.startswith("-")]]:
                if path.is_file():
                    digest.update(str(path).encode() + b"\0" + path.read_bytes())
            for path in toolchain.compiler_files():
                info = path.stat()
                digest.update(f"{path}:{info.st_mtime_ns}:{info.st_size}".encode())
            self._stamp = digest.hexdigest()
        return self._stamp

    def build(self, values: Dict[str, object]) -> Path:
        transforms, flags = self.transforms(values), self.flags(values)
        key = hashlib.sha256("\0".join(transforms + ["--"] + flags + [self._inputs_stamp()])
                             .encode()).hexdigest()[:16]
        binary = self.workdir / f"{self.name}-{key}"
        if binary.exists():
            return binary
        source = self.root / self.source
        if transforms:
            # In this process (the compiler library), kept next to the build.
            transformed = self.workdir / f"{self.name}-{key}.mlir"
            try:
                text = toolchain.run_opt(source.read_text(), transforms, source.name)
            except HPVMError as error:
                raise HPVMError(f"{self.name}: the transforms for {values} failed: {error}",
                                error.diagnostics) from None
            transformed.write_text(text)
            source = transformed
        self._hpvm_cc(["-O3", *flags, source, *self.sources(), "-o", binary],
                      f"hpvm-cc for {values}")
        self.builds += 1
        return binary

    def seconds(self, values: Dict[str, object]) -> float:
        binary = self.build(values)
        env = dict(os.environ, **self.environment(values))
        done = subprocess.run([str(binary), *self.arguments(values)], capture_output=True,
                              text=True, env=env, timeout=600)
        if done.returncode != 0 or not self.correct(done.stdout):
            raise HPVMError(f"{self.name}: wrong or failed run for {values}:\n"
                            f"{done.stdout}{done.stderr}")
        seconds = self.measured_time(done.stdout)
        if seconds is None:
            raise HPVMError(f"{self.name}: no time in the output:\n{done.stdout}")
        return seconds


class Sgemm(Program):
    name = "sgemm"
    source = "examples/hpvm-c/sgemm.c"
    default = {"tile_m": 16, "tile_n": 8, "lanes": 0, "rows": 0, "threads": 2}

    def space(self) -> Space:
        return Space([Parameter("tile_m", (8, 16, 32, 64)),
                      Parameter("tile_n", (1, 2, 4, 8, 16)),
                      Parameter("lanes", (0, 8, 16, 32)),
                      Parameter("rows", (0, 1, 2, 4, 8)),
                      Parameter("threads", (1, 2))])

    def flags(self, values):
        flags = [f"-DTILE_M={values['tile_m']}", f"-DTILE_N={values['tile_n']}"]
        if values["lanes"]:
            flags.append(f"-fhpvm-lanes={values['lanes']}")
        if values["rows"]:
            flags.append(f"-fhpvm-rows={values['rows']}")
        return flags

    def arguments(self, values):
        return ["512", "512", "512", "3"]

    def environment(self, values):
        return {"HPVM_NUM_THREADS": str(values["threads"])}

    def measured_time(self, output):
        match = re.search(r"median ([0-9.]+) ms", output)
        return float(match.group(1)) / 1000.0 if match else None

    def correct(self, output: str) -> bool:
        return "wrong=0" in output


class GraphBenchmark(Program):
    """A graph of examples/ linked with its driver of benchmarks/hpvm, which times the HPVM
    version (HPVM_BENCH_ONLY=hpvm: the OpenMP and sequential versions run once, for the
    check) and prints `<name> hpvm ... median_ms=T` and `check=ok`."""

    driver = ""
    reference = ("", "")  # (directory under benchmarks/, C file): the C versions

    def sources(self):
        directory, file = self.reference
        reference = self.workdir / f"{self.name}_ref.o"
        if not reference.exists():
            compiler = shutil.which("gcc") or shutil.which("cc")
            if not compiler:
                raise HPVMError(f"{self.name}: no C compiler (gcc) for the reference versions")
            self._run([compiler, "-std=c11", "-O3", "-march=native", "-fopenmp",
                       "-ffp-contract=off", "-c", self.root / "benchmarks" / directory / file,
                       "-I", self.root / "benchmarks" / "common", "-o", reference],
                      "compiling the reference versions")
        return [str(self.root / self.driver), str(reference), "-ffp-contract=off",
                "-I", str(self.root / "benchmarks" / directory),
                "-I", str(self.root / "benchmarks" / "common"),
                "-I", str(self.root / "benchmarks" / "hpvm"),
                "-I", str(self.root / "examples"), "-lgomp", "-lm"]

    def environment(self, values):
        return {"HPVM_NUM_THREADS": str(values["threads"]), "HPVM_BENCH_ONLY": "hpvm"}

    def measured_time(self, output):
        match = re.search(rf"^{self.name} hpvm .*median_ms=([0-9.]+)", output, re.MULTILINE)
        return float(match.group(1)) / 1000.0 if match else None

    def correct(self, output):
        return "check=ok" in output


class Stencil(GraphBenchmark):
    name = "stencil"
    source = "examples/stencil.mlir"
    driver = "benchmarks/hpvm/stencil_bench.c"
    reference = ("stencil", "stencil_ref.c")
    default = {"tile_x": 0, "tile_y": 1, "target": "cpu", "threads": 2}

    def space(self):
        # tile_x 0: untiled (then tile_y is 1, so that the untiled program is one point).
        return Space([Parameter("tile_x", (0, 16, 32, 64, 128)),
                      Parameter("tile_y", (1, 2, 4, 8)),
                      Parameter("target", ("cpu", "opencl")),
                      Parameter("threads", (1, 2))],
                     legal=lambda v: v["tile_x"] != 0 or v["tile_y"] == 1)

    def transforms(self, values):
        if not values["tile_x"]:
            return []
        return [f"--hpvm-tile-nodes=nodes=stencil_point "
                f"sizes={values['tile_x']},{values['tile_y']},1"]

    def flags(self, values):
        return [f"--target={values['target']}"]

    def arguments(self, values):
        return ["128", "128", "64", "10", "--runs", "5"]


class EdgePipeline(GraphBenchmark):
    name = "edge"
    source = "examples/edge_detection.mlir"
    driver = "benchmarks/hpvm/edge_bench.c"
    reference = ("edge", "edge_ref.c")
    default = {"fuse": "none", "slots": 4, "threads": 2}

    def space(self):
        # The pairs of stages hpvm-fuse-nodes can fuse (independent, with equal grids); the
        # two share @gradient, so at most one of them.
        return Space([Parameter("fuse", ("none", "laplacian:gradient",
                                         "zero_crossings:gradient")),
                      Parameter("slots", (1, 2, 3, 4, 6, 8)),
                      Parameter("threads", (1, 2))])

    def transforms(self, values):
        if values["fuse"] == "none":
            return []
        return [f"--hpvm-fuse-nodes=pairs={values['fuse']}"]

    def arguments(self, values):
        return ["256", "256", "16", str(values["slots"]), "--runs", "5"]


PROGRAMS = {"sgemm": Sgemm, "stencil": Stencil, "edge": EdgePipeline}


def find_root(start: Optional[Path] = None) -> Path:
    """The project's source tree (for the programs' sources): $HPVM_SOURCE_DIR, or the
    directory above the build tree $HPVM_HOME points into, or above this file's."""
    for candidate in (os.environ.get("HPVM_SOURCE_DIR"),
                      os.environ.get("HPVM_HOME") and Path(os.environ["HPVM_HOME"]).parent,
                      Path(__file__).resolve().parents[3]):
        if candidate and (Path(candidate) / "examples" / "hpvm-c" / "sgemm.c").exists():
            return Path(candidate)
    raise HPVMError("cannot find the project's sources (examples/hpvm-c); set HPVM_SOURCE_DIR")
