"""Programs the performance auto-tuner tunes: each is a space of knobs and a cost, the
measured time of the program built and run with those knobs.

* `sgemm`: the naive HPVM-C sgemm of examples/hpvm-c (one instance per element of C, one
  internal-node instance per tile): the tile (TILE_M x TILE_N, compile-time), the vector
  lanes and rows of convert-hpvm-to-vector (`-fhpvm-lanes`, `-fhpvm-rows`; 0: the pass
  chooses) and the runtime's threads (`HPVM_NUM_THREADS`).
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
from pathlib import Path
from typing import Dict, Optional

from ..errors import HPVMError
from .. import toolchain
from .search import Parameter, Space


class HPVMCProgram:
    """An HPVM-C program whose knobs are hpvm-cc flags and environment variables. Builds are
    cached by their flags in `workdir`; the cost is the median time the program prints."""

    name = "program"
    source = ""
    arguments: tuple = ()
    default: Dict[str, object] = {}

    def __init__(self, root: Path, workdir: Path):
        self.root = Path(root)
        self.workdir = Path(workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.builds = 0

    def space(self) -> Space:
        raise NotImplementedError

    def flags(self, values: Dict[str, object]) -> list:
        raise NotImplementedError

    def environment(self, values: Dict[str, object]) -> Dict[str, str]:
        return {}

    def build(self, values: Dict[str, object]) -> Path:
        flags = self.flags(values)
        key = hashlib.sha256("\0".join(flags).encode()).hexdigest()[:16]
        binary = self.workdir / f"{self.name}-{key}"
        if not binary.exists():
            command = [toolchain.tool("hpvm-cc"), "-O3", *flags,
                       str(self.root / self.source), "-o", str(binary)]
            done = subprocess.run(command, capture_output=True, text=True)
            if done.returncode != 0:
                raise HPVMError(f"{self.name}: hpvm-cc failed for {values}:\n{done.stderr}")
            self.builds += 1
        return binary

    def seconds(self, values: Dict[str, object]) -> float:
        binary = self.build(values)
        env = dict(os.environ, **self.environment(values))
        done = subprocess.run([str(binary), *map(str, self.arguments)], capture_output=True,
                              text=True, env=env, timeout=600)
        if done.returncode != 0 or not self.correct(done.stdout):
            raise HPVMError(f"{self.name}: wrong or failed run for {values}:\n"
                            f"{done.stdout}{done.stderr}")
        match = re.search(r"median ([0-9.]+) ms", done.stdout)
        if not match:
            raise HPVMError(f"{self.name}: no time in the output:\n{done.stdout}")
        return float(match.group(1)) / 1000.0

    def correct(self, output: str) -> bool:
        return True


class Sgemm(HPVMCProgram):
    name = "sgemm"
    source = "examples/hpvm-c/sgemm.c"
    arguments = (512, 512, 512, 3)
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

    def environment(self, values):
        return {"HPVM_NUM_THREADS": str(values["threads"])}

    def correct(self, output: str) -> bool:
        return "wrong=0" in output


PROGRAMS = {"sgemm": Sgemm}


def find_root(start: Optional[Path] = None) -> Path:
    """The project's source tree (for the programs' sources): $HPVM_SOURCE_DIR, or the
    directory above the build tree $HPVM_HOME points into, or above this file's."""
    for candidate in (os.environ.get("HPVM_SOURCE_DIR"),
                      os.environ.get("HPVM_HOME") and Path(os.environ["HPVM_HOME"]).parent,
                      Path(__file__).resolve().parents[3]):
        if candidate and (Path(candidate) / "examples" / "hpvm-c" / "sgemm.c").exists():
            return Path(candidate)
    raise HPVMError("cannot find the project's sources (examples/hpvm-c); set HPVM_SOURCE_DIR")
