"""Where the project's tools and libraries are, and the calls into them.

* `verify(text)`: parses and verifies MLIR text in this process through the
  compiler library `libHPVMCompiler.so` (ctypes); the dialect's verifier
  reports, and its diagnostics come back in an `HPVMError`.
* `compile_shared(text, ...)`: `hpvm-cc -shared` makes a shared library of a
  module (the runtime linked in).

The tools are found, in this order, under `$HPVM_HOME` (a build or install
tree: `bin/hpvm-cc`, `lib/libHPVMCompiler.so`), next to `hpvm-cc` on `PATH`.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
import tempfile
import threading
from functools import lru_cache
from pathlib import Path
from typing import List, Optional, Sequence

from .errors import HPVMError


def _home() -> Optional[Path]:
    home = os.environ.get("HPVM_HOME")
    if home:
        path = Path(home)
        if not (path / "bin" / "hpvm-cc").exists():
            raise HPVMError(f"HPVM_HOME is '{home}', but '{path / 'bin' / 'hpvm-cc'}' does not "
                            "exist; expected a build or install tree of the HPVM project")
        return path
    found = shutil.which("hpvm-cc")
    return Path(found).resolve().parent.parent if found else None


def tool(name: str) -> str:
    home = _home()
    if home is None:
        raise HPVMError(f"cannot find '{name}': set HPVM_HOME to the project's build (or install) "
                        "directory, or put its bin/ on PATH")
    path = home / "bin" / name
    if not path.exists():
        raise HPVMError(f"cannot find '{name}' in '{home / 'bin'}'")
    return str(path)


def compiler_files() -> List[Path]:
    """The files whose change changes what a compile gives: hpvm-cc, the compiler
    library and the runtime library (build tree or install tree)."""
    home = Path(tool("hpvm-cc")).parent.parent
    candidates = [home / "bin" / "hpvm-cc", home / "lib" / "libHPVMCompiler.so",
                  home / "lib" / "libhpvm_rt.a", home / "runtime" / "libhpvm_rt.a"]
    return [p for p in candidates if p.exists()]


class _CompileOptions(ctypes.Structure):
    """HPVMCompileOptions of include/HPVM/C/Compiler.h, field for field."""

    _fields_ = [
        ("input", ctypes.c_int),
        ("emit", ctypes.c_int),
        ("devices", ctypes.c_char_p),
        ("dump_kernels_dir", ctypes.c_char_p),
        ("collapse_grids", ctypes.c_bool),
        ("print_locations", ctypes.c_bool),
        ("on_diagnostic", ctypes.c_void_p),
        ("user_data", ctypes.c_void_p),
        ("vectorize", ctypes.c_bool),
        ("vectorize_remarks", ctypes.c_bool),
        ("vector_bits", ctypes.c_uint),
        ("lanes", ctypes.c_uint),
        ("rows", ctypes.c_uint),
        ("knobs_file", ctypes.c_char_p),
        ("line_tables", ctypes.c_bool),
        ("inline_leaves", ctypes.c_bool),
        ("fuse_nodes", ctypes.c_bool),
        ("fuse_tensor_nodes", ctypes.c_bool),
        ("constants_asm", ctypes.c_char_p),
    ]


_EMIT_HPVM = 0
_INPUT_MLIR = 0


@lru_cache(maxsize=1)
def _compiler_library():
    home = _home()
    if home is None:
        raise HPVMError("cannot find libHPVMCompiler.so: set HPVM_HOME to the project's build "
                        "(or install) directory, or put its bin/ on PATH")
    path = home / "lib" / "libHPVMCompiler.so"
    try:
        library = ctypes.CDLL(str(path))
    except OSError as error:
        raise HPVMError(f"cannot load the compiler library '{path}': {error}") from None
    library.hpvmCompileOptionsInit.argtypes = [ctypes.POINTER(_CompileOptions)]
    library.hpvmCompileOptionsInit.restype = None
    library.hpvmCompileFile.argtypes = [ctypes.c_char_p, ctypes.c_char_p,
                                        ctypes.POINTER(_CompileOptions),
                                        ctypes.POINTER(ctypes.c_void_p)]
    library.hpvmCompileFile.restype = ctypes.c_bool
    library.hpvmCompileFreeText.argtypes = [ctypes.c_void_p]
    library.hpvmCompileFreeText.restype = None
    return library


def verify(text: str, name: str = "graph.mlir") -> None:
    """Parses and verifies `text` with the dialect's verifier; raises HPVMError
    carrying the diagnostics when it is not a valid program."""
    library = _compiler_library()
    options = _CompileOptions()
    library.hpvmCompileOptionsInit(ctypes.byref(options))
    options.input = _INPUT_MLIR
    options.emit = _EMIT_HPVM
    with tempfile.TemporaryDirectory(prefix="hpvm-py-") as directory:
        source = Path(directory) / name
        source.write_text(text)
        diagnostics = ctypes.c_void_p()
        ok = library.hpvmCompileFile(str(source).encode(), os.devnull.encode(),
                                     ctypes.byref(options), ctypes.byref(diagnostics))
        report = ""
        if diagnostics.value:
            report = ctypes.string_at(diagnostics.value).decode(errors="replace")
            library.hpvmCompileFreeText(diagnostics)
    if not ok:
        raise HPVMError("the hpvm dialect's verifier rejected the graph", report)


_cache_lock = threading.Lock()


# What every `hpvm-cc -shared` of the package gets (part of the cache key): the package
# runs the tensor-node fusion itself when asked (`fuse`), so the module arrives as it
# should be compiled.
SHARED_FLAGS = ("-fno-hpvm-fuse-tensor-nodes",)


def compile_shared(text: str, output: str, name: str = "graph", target: str = "cpu",
                   opt: str = "-O3", flags: Sequence[str] = (), sources: Sequence[str] = (),
                   verbose: bool = False, parameters=None) -> str:
    """`hpvm-cc -shared` of the module `text` (and C `sources`) into `output`;
    `parameters` (key -> array) is written as the parameter archive `<name>.params`
    beside the module, which the text names."""
    if target not in ("cpu", "gpu", "opencl"):
        raise HPVMError(f"unknown target '{target}'; expected cpu, gpu or opencl")
    with tempfile.TemporaryDirectory(prefix="hpvm-py-") as directory:
        source = Path(directory) / f"{name}.mlir"
        source.write_text(text)
        if parameters:
            from .ir import write_parameter_archive
            write_parameter_archive(Path(directory) / f"{name}.params", parameters)
        command: List[str] = [tool("hpvm-cc"), "-shared", opt, f"--target={target}",
                              *SHARED_FLAGS, *flags, str(source), *sources, "-o", output]
        if verbose:
            print(" ".join(command))
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode != 0:
            raise HPVMError(f"hpvm-cc failed (exit status {result.returncode})",
                            result.stderr)
        if verbose and result.stderr:
            print(result.stderr, end="")
    return output


def run_opt(text: str, passes: Sequence[str], name: str = "graph.mlir") -> str:
    """`hpvm-opt <passes>` on `text`; returns the transformed module."""
    with tempfile.TemporaryDirectory(prefix="hpvm-py-") as directory:
        source = Path(directory) / name
        source.write_text(text)
        result = subprocess.run([tool("hpvm-opt"), *passes, str(source)],
                                capture_output=True, text=True)
    if result.returncode != 0:
        raise HPVMError(f"hpvm-opt {' '.join(passes)} failed (exit status {result.returncode})",
                        result.stderr)
    return result.stdout
