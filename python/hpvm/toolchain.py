"""Where the project's tools and libraries are, and the calls into them.

Everything the HPVM compiler does for the package runs in this process, through the
compiler library `libHPVMCompiler.so` (ctypes, include/HPVM/C/Compiler.h); only clang
runs as a process, to make objects and the shared library, with `hpvm-cc`'s commands: the
library builds them from the command line (hpvmDriverCompileCommand, hpvmDriverLinkCommand).
`run_driver(arguments)` is hpvm-cc itself (its driver, hpvmDriverMain), in this process.

* `verify(text)`: parses and verifies MLIR text (hpvmRunPassPipeline, no passes); the
  dialect's verifier reports, and its diagnostics come back in an `HPVMError`.
* `run_opt(text, passes)`: hpvm-opt-style pass arguments (`--hpvm-fuse-tensor-nodes`,
  `--hpvm-apply-knobs=file=...`) as one textual pass pipeline (hpvmRunPassPipeline).
* `compile_shared(text, ...)`: what `hpvm-cc -shared` makes of a module: the module
  compiled to LLVM bitcode (hpvmCompileBuffer, its options hpvm-lower-to-llvm-pipeline's
  string), split into parts for the cores (hpvmSplitBitcode, `compile_jobs()`:
  $HPVM_COMPILE_JOBS, else the CPUs), then clang's objects, made at once, linked with the
  runtime into a shared library. The lowering's flags (the option table's
  `-f[no-]hpvm-*` switches, `--target=`, `--knobs=`) are read by the compiler library
  (hpvmDriverOptionsTake), as hpvm-cc reads them; `pipeline_text(flags)` is the pass
  pipeline they build (`hpvm-cc --print-pipeline`).

The tools are found, in this order, under `$HPVM_HOME` (a build or install tree:
`bin/hpvm-cc`, `lib/libHPVMCompiler.so`), next to `hpvm-cc` on `PATH`; clang is the one
`hpvm-cc` runs (hpvmDriverClang: the one the build found).
"""

from __future__ import annotations

import ctypes
import os
import re
import shutil
import subprocess
import sys
import tempfile
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import List, Optional, Sequence, Tuple

from .errors import HPVMError, HPVMWarning


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


def device_tools(target: str) -> List[str]:
    """The external tools a build for `target` runs, as the compiler finds them
    (hpvmDeviceTools): the SPIR-V translator for opencl (its SPIR 1.2 fallback), ptxas and
    fatbinary for gpu (cubins), each as `name:path:mtime`, or `name:-` when missing. A
    build keyed by them is built again once a missing tool is installed or one changes."""
    wanted = {"opencl": ("llvm-spirv",), "gpu": ("ptxas", "fatbinary")}.get(target, ())
    if not wanted:
        return []
    library = _compiler_library()
    found = dict(line.split("\t", 1) for line in
                 _take(library, ctypes.c_void_p(library.hpvmDeviceTools())).decode()
                 .splitlines())
    stamps = []
    for name in wanted:
        path = found.get(name, "")
        try:
            stamps.append(f"{name}:{path}:{os.stat(path).st_mtime_ns}" if path else f"{name}:-")
        except OSError:
            stamps.append(f"{name}:-")
    return stamps


@lru_cache(maxsize=1)
def clang() -> str:
    """The clang `hpvm-cc` runs: the one CMake found (clang-22, else clang)."""
    library = _compiler_library()
    return os.fsdecode(_take(library, ctypes.c_void_p(library.hpvmDriverClang())))


_INPUT_MLIR = 0
_EMIT_LLVM_BITCODE = 3
_TEXT = ctypes.POINTER(ctypes.c_void_p)


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
    library.hpvmRunPassPipeline.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p,
                                            ctypes.c_char_p, _TEXT, _TEXT]
    library.hpvmRunPassPipeline.restype = ctypes.c_bool
    library.hpvmCompileBuffer.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p,
                                          ctypes.c_int, ctypes.c_int, ctypes.c_char_p, _TEXT,
                                          ctypes.POINTER(ctypes.c_size_t), _TEXT]
    library.hpvmCompileBuffer.restype = ctypes.c_bool
    library.hpvmSplitBitcode.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_uint,
                                         ctypes.c_size_t, _TEXT, ctypes.POINTER(ctypes.c_size_t),
                                         ctypes.POINTER(ctypes.c_uint), _TEXT]
    library.hpvmSplitBitcode.restype = ctypes.c_bool
    library.hpvmDeviceTools.argtypes = []
    library.hpvmDeviceTools.restype = ctypes.c_void_p
    library.hpvmCompileFreeText.argtypes = [ctypes.c_void_p]
    library.hpvmCompileFreeText.restype = None
    library.hpvmDriverOptionsCreate.argtypes = []
    library.hpvmDriverOptionsCreate.restype = ctypes.c_void_p
    library.hpvmDriverOptionsDestroy.argtypes = [ctypes.c_void_p]
    library.hpvmDriverOptionsDestroy.restype = None
    library.hpvmDriverOptionsTake.argtypes = [ctypes.c_void_p, ctypes.c_char_p, _TEXT]
    library.hpvmDriverOptionsTake.restype = ctypes.c_int
    library.hpvmDriverOptionsSet.argtypes = [ctypes.c_void_p, ctypes.c_char_p,
                                             ctypes.c_char_p, _TEXT]
    library.hpvmDriverOptionsSet.restype = ctypes.c_bool
    library.hpvmDriverOptionsGet.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    library.hpvmDriverOptionsGet.restype = ctypes.c_void_p
    for name in ("hpvmDriverOptionsString", "hpvmDriverOptionsPipeline"):
        getattr(library, name).argtypes = [ctypes.c_void_p]
        getattr(library, name).restype = ctypes.c_void_p
    library.hpvmDriverOptionsFlags.argtypes = []
    library.hpvmDriverOptionsFlags.restype = ctypes.c_void_p
    library.hpvmDriverOptionsProbeVectorBits.argtypes = [
        ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_char_p), ctypes.c_size_t]
    library.hpvmDriverOptionsProbeVectorBits.restype = ctypes.c_bool
    library.hpvmDriverMain.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p),
                                       ctypes.c_uint]
    library.hpvmDriverMain.restype = ctypes.c_int
    _command_prototypes(library)
    return library


def _command_prototypes(library) -> None:
    """hpvmDriverCompileCommand, hpvmDriverLinkCommand, hpvmDriverClang."""
    argv = ctypes.POINTER(ctypes.c_char_p)
    library.hpvmDriverCompileCommand.argtypes = [ctypes.c_int, argv, ctypes.c_char_p,
                                                 ctypes.c_char_p,
                                                 ctypes.POINTER(ctypes.c_size_t), _TEXT]
    library.hpvmDriverLinkCommand.argtypes = [ctypes.c_int, argv, argv, ctypes.c_size_t,
                                              ctypes.c_char_p,
                                              ctypes.POINTER(ctypes.c_size_t), _TEXT]
    for name in ("hpvmDriverCompileCommand", "hpvmDriverLinkCommand"):
        getattr(library, name).restype = ctypes.c_void_p
    library.hpvmDriverClang.argtypes = []
    library.hpvmDriverClang.restype = ctypes.c_void_p


def _take(library, text: ctypes.c_void_p, size: Optional[int] = None) -> bytes:
    """The library's text (`size` bytes, else up to its NUL), freed."""
    if not text.value:
        return b""
    data = ctypes.string_at(text.value, size) if size is not None else ctypes.string_at(text.value)
    library.hpvmCompileFreeText(text)
    return data


def _run_pipeline(text: str, pipeline: str, name: str, failure: str) -> str:
    """hpvmRunPassPipeline: `text` parsed (as the buffer `name`), verified and transformed
    by `pipeline` ("": none); the printed module, or HPVMError(`failure`, diagnostics)."""
    library = _compiler_library()
    data = text.encode()
    output, diagnostics = ctypes.c_void_p(), ctypes.c_void_p()
    ok = library.hpvmRunPassPipeline(data, len(data), name.encode(), pipeline.encode(),
                                     ctypes.byref(output), ctypes.byref(diagnostics))
    report = _take(library, diagnostics).decode(errors="replace")
    result = _take(library, output).decode()
    if not ok:
        raise HPVMError(failure, report)
    return result


def verify(text: str, name: str = "graph.mlir") -> None:
    """Parses and verifies `text` with the dialect's verifier; raises HPVMError
    carrying the diagnostics when it is not a valid program."""
    _run_pipeline(text, "", name, "the hpvm dialect's verifier rejected the graph")


def pass_option_value(value: str, what: str, hint: str = "") -> str:
    """`value` quoted for a textual pass option (`--pass=key=VALUE`, `pass{key=VALUE}`):
    MLIR's option parser ends a value at a space unless it is quoted, and a quote ends at
    the same quote."""
    if '"' not in value:
        return f'"{value}"'
    if "'" not in value:
        return f"'{value}'"
    raise HPVMError(f"{what} '{value}' holds both kinds of quote (' and \"), which a pass "
                    f"option cannot carry; expected a path without one of them{hint}")


_PASS_ARGUMENT = re.compile(r"--([A-Za-z0-9][\w.-]*)(?:=(.*))?", re.S)


def pass_pipeline(passes: Sequence[str]) -> str:
    """hpvm-opt pass arguments (`--NAME`, `--NAME=OPTIONS`) as the textual pipeline hpvm-opt
    runs for them: `builtin.module(NAME,NAME{OPTIONS})`."""
    elements = []
    for argument in passes:
        match = _PASS_ARGUMENT.fullmatch(argument)
        if match is None:
            raise HPVMError(f"'{argument}' is not a pass argument; expected --NAME or "
                            "--NAME=OPTIONS, as hpvm-opt takes them")
        name, options = match.groups()
        elements.append(name if options is None else f"{name}{{{options}}}")
    return f"builtin.module({','.join(elements)})"


def run_opt(text: str, passes: Sequence[str], name: str = "graph.mlir") -> str:
    """What `hpvm-opt <passes>` makes of `text`, in this process; returns the module."""
    return _run_pipeline(text, pass_pipeline(passes) if passes else "", name,
                         f"the passes {' '.join(passes)} failed on '{name}'")


# What every compile of the package gets (part of the cache key), as `hpvm-cc -shared`
# flags: the package runs the blocked layout and the tensor-node fusion itself (the
# fusion when asked: `fuse`), so the module arrives as it should be compiled.
SHARED_FLAGS = ("-fno-hpvm-blocked-layout", "-fno-hpvm-fuse-tensor-nodes")


class DriverOptions:
    """The lowering's options of a driver command line, kept by the compiler library
    (hpvmDriverOptions*, HPVM/C/Compiler.h): created with hpvm-cc's defaults, they take
    the flags the option table declares, as hpvm-cc takes them."""

    def __init__(self):
        self._library = _compiler_library()
        self._handle = ctypes.c_void_p(self._library.hpvmDriverOptionsCreate())

    def __del__(self):
        if getattr(self, "_handle", None):
            self._library.hpvmDriverOptionsDestroy(self._handle)
            self._handle = None

    def take(self, argument: str) -> bool:
        """Whether `argument` is one of the lowering's flags (then set); HPVMError when it
        is one with a wrong value."""
        error = ctypes.c_void_p()
        taken = self._library.hpvmDriverOptionsTake(self._handle, argument.encode(),
                                                    ctypes.byref(error))
        message = _take(self._library, error).decode(errors="replace")
        if taken < 0:
            raise HPVMError(message)
        return taken > 0

    def set(self, key: str, value: str) -> None:
        """Sets the pipeline option `key` (as the options string writes it)."""
        error = ctypes.c_void_p()
        if not self._library.hpvmDriverOptionsSet(self._handle, key.encode(), value.encode(),
                                                  ctypes.byref(error)):
            raise HPVMError(_take(self._library, error).decode(errors="replace"))

    def get(self, key: str) -> str:
        """The pipeline option `key` as text."""
        text = ctypes.c_void_p(self._library.hpvmDriverOptionsGet(self._handle, key.encode()))
        if not text.value:
            raise HPVMError(f"no pipeline option '{key}'")
        return _take(self._library, text).decode()

    def string(self) -> str:
        """The options string of hpvmCompileBuffer."""
        return _take(self._library, ctypes.c_void_p(
            self._library.hpvmDriverOptionsString(self._handle))).decode()

    def pipeline(self) -> str:
        """The textual pass pipeline the options build."""
        return _take(self._library, ctypes.c_void_p(
            self._library.hpvmDriverOptionsPipeline(self._handle))).decode()

    def probe_vector_bits(self, codegen: Sequence[str]) -> None:
        """vector-bits from the CPU that -march=/-mcpu= among `codegen` names (clang's
        predefined macros), when vectorizing; else left as it is (0: the host's)."""
        flags = (ctypes.c_char_p * max(1, len(codegen)))(*[f.encode() for f in codegen])
        self._library.hpvmDriverOptionsProbeVectorBits(self._handle, clang().encode(), flags,
                                                       len(codegen))


def run_driver(arguments: Sequence[str]) -> Tuple[int, str]:
    """`hpvm-cc <arguments>` in this process (hpvmDriverMain: the driver of the compiler
    library, which hpvm-cc is the main of; clang runs as processes, as hpvm-cc runs it):
    its exit status (0, 1 for an error in the program, 70 for an internal error) and what
    it and clang printed on stderr."""
    library = _compiler_library()
    argv = [b"hpvm-cc", *[str(a).encode() for a in arguments]]
    array = (ctypes.c_char_p * (len(argv) + 1))(*argv, None)
    with tempfile.TemporaryFile() as said:
        sys.stderr.flush()
        saved = os.dup(2)
        try:
            os.dup2(said.fileno(), 2)
            status = library.hpvmDriverMain(len(argv), array, 0)
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        said.seek(0)
        return status, said.read().decode(errors="replace")


def driver_flags() -> List[Tuple[str, str, str, str]]:
    """The lowering's flags the option table declares: (kind, flag, key, detail) with kind
    "switch" (-fFLAG, -fno-FLAG; detail the default), "count" (-fFLAG=N; detail LOW-HIGH)
    or "choice" (-fFLAG=VALUE; detail the choices, a|b|c)."""
    library = _compiler_library()
    text = _take(library, ctypes.c_void_p(library.hpvmDriverOptionsFlags())).decode()
    return [tuple(line.split("\t")) for line in text.splitlines()]


def pipeline_text(flags: Sequence[str] = ()) -> str:
    """The pass pipeline that `hpvm-cc -shared --target=cpu <SHARED_FLAGS> <flags>` lowers a
    module with (`hpvm-cc --print-pipeline`), as the package compiles it."""
    build = SharedBuild.parse(["-O3", "--target=cpu", *SHARED_FLAGS, *flags])
    build.finish_options("")
    return build.options.pipeline()


def _strings(items: Sequence) -> "ctypes.Array":
    """`items` (paths, flags) as a NULL-terminated array of C strings."""
    return (ctypes.c_char_p * (len(items) + 1))(*[os.fsencode(str(i)) for i in items], None)


def _driver_command(call: str, argv: Sequence[str], *request) -> List[str]:
    """The clang command that the compiler library's `call` (hpvmDriverCompileCommand,
    hpvmDriverLinkCommand) builds for the hpvm-cc command line `argv`, as a list."""
    library = _compiler_library()
    size, error = ctypes.c_size_t(), ctypes.c_void_p()
    text = ctypes.c_void_p(getattr(library, call)(len(argv), _strings(argv), *request,
                                                  ctypes.byref(size), ctypes.byref(error)))
    message = _take(library, error).decode(errors="replace")
    if not text.value:
        raise HPVMError(message)
    return [os.fsdecode(a) for a in _take(library, text, size.value).split(b"\0")[:-1]]


@dataclass
class SharedBuild:
    """An `hpvm-cc -shared` command line for one module, taken apart as hpvm-cc takes it
    apart: the pipeline options of the compiler library, and clang's flags. Its clang
    commands are hpvm-cc's, built by the library from the command line."""

    opt: str = "-O2"
    verbose: bool = False
    # The lowering's options (hpvm-cc's defaults, the table's flags set them).
    options: DriverOptions = field(default_factory=DriverOptions)
    debug_info: bool = False
    codegen: List[str] = field(default_factory=list)
    # The command line as given (the library reads it again for the clang commands).
    arguments: List[str] = field(default_factory=list)

    @classmethod
    def parse(cls, arguments: Sequence[str]) -> "SharedBuild":
        build = cls(arguments=[str(a) for a in arguments])
        rest = list(build.arguments)
        while rest:
            build._take(rest.pop(0), rest)
        return build

    def _take(self, arg: str, rest: List[str]) -> None:
        """One argument of the command line (the value of `-L DIR` and the like from `rest`)."""
        if arg in ("-L", "-l", "-Xlinker", "-I", "-D"):
            if not rest:
                raise HPVMError(f"option '{arg}' expects a value")
            value = rest.pop(0)
            if arg in ("-L", "-l"):  # -I, -D: no C source here; -Xlinker: any value
                self._take(arg + value, rest)
            return
        if self.options.take(arg):
            if arg.startswith("--knobs="):  # a path the options string can carry
                pass_option_value(arg[8:], "the knob file's path")
            return
        if arg == "-v":
            self.verbose = True
        elif re.fullmatch(r"-O.*", arg):
            if arg not in ("-O0", "-O1", "-O2", "-O3"):
                raise HPVMError(f"unknown optimization level '{arg}'; expected -O0, -O1, -O2 "
                                "or -O3")
            self.opt = arg
        elif arg.startswith("-L") or arg.startswith("-l") or arg.startswith("-Wl,"):
            pass  # the link's
        elif arg.startswith(("-f", "-W", "-m")) or arg in ("-g", "-w"):
            self.debug_info = self.debug_info or arg == "-g"
            self.codegen.append(arg)
        elif arg.startswith("-"):
            raise HPVMError(f"unknown option '{arg}' (see hpvm-cc --help; a shared library of "
                            "the package takes its code generation and link options)")
        elif re.search(r"\.(mlir|c|cc|cpp|ll|bc)$", arg):
            raise HPVMError(f"'{arg}': a shared library of the package is made of its module "
                            "alone; expected objects or libraries as further inputs")
        elif not os.path.exists(arg):
            raise HPVMError(f"no such file: '{arg}'")

    def finish_options(self, constants_asm: str) -> None:
        """The lowering's options that other flags set, as hpvm-cc sets them: -v (remarks),
        -g (line tables), -march=/-mcpu= (the vector width), and where the large constants
        go."""
        self.options.set("vectorize-remarks", "true" if self.verbose else "false")
        self.options.set("line-tables", "true" if self.debug_info else "false")
        pass_option_value(constants_asm, "the temporary folder", " (set TMPDIR)")
        self.options.set("constants-asm", constants_asm)
        self.options.probe_vector_bits(self.codegen)

    def pipeline_options(self, constants_asm: str, vector_bits: Optional[int] = None) -> str:
        """The options string of hpvm-lower-to-llvm-pipeline hpvm-cc gives the library
        (`vector_bits` None: from -march=/-mcpu=, as hpvm-cc finds it)."""
        self.finish_options(constants_asm)
        if vector_bits is not None:
            self.options.set("vector-bits", str(vector_bits))
        return self.options.string()

    def _argv(self) -> List[str]:
        """The command line as hpvm-cc takes it: `hpvm-cc -shared <arguments>`."""
        return ["hpvm-cc", "-shared", *self.arguments]

    def object_command(self, source: Path, obj: Path) -> List[str]:
        """clang's compile of the LLVM IR (or the constants' assembly, `.s`) into an object:
        hpvm-cc's (hpvmDriverCompileCommand)."""
        return _driver_command("hpvmDriverCompileCommand", self._argv(), os.fsencode(source),
                               os.fsencode(obj))

    def link_command(self, objects: Sequence[Path], output: str) -> List[str]:
        """The link with the runtime into a shared library: hpvm-cc's
        (hpvmDriverLinkCommand)."""
        return _driver_command("hpvmDriverLinkCommand", self._argv(), _strings(objects),
                               len(objects), os.fsencode(output))

    def run(self, command: List[str], stage: str, check: bool = True):
        """Runs one clang stage (printed with -v); HPVMError when it fails."""
        if self.verbose:
            print(" ".join(command))
        done = subprocess.run(command, capture_output=True, text=True)
        if check and done.returncode != 0:
            raise HPVMError(f"{stage} failed (exit status {done.returncode}): "
                            f"{' '.join(command)}", done.stderr)
        if self.verbose and done.stderr:
            print(done.stderr, end="")
        return done


def _compile_bitcode(text: str, source: Path, options: str, verbose: bool,
                     said: Optional[List[str]] = None) -> bytes:
    """hpvmCompileBuffer: the module (named `source` in diagnostics and for the parameter
    archive beside it) lowered and exported as LLVM bitcode."""
    library = _compiler_library()
    data = text.encode()
    output, diagnostics, size = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_size_t()
    if verbose:
        print(f"libHPVMCompiler: {source} -> LLVM bitcode ({options})")
    ok = library.hpvmCompileBuffer(data, len(data), str(source).encode(), _INPUT_MLIR,
                                   _EMIT_LLVM_BITCODE, options.encode(), ctypes.byref(output),
                                   ctypes.byref(size), ctypes.byref(diagnostics))
    report = _take(library, diagnostics).decode(errors="replace")
    bitcode = _take(library, output, size.value)
    if not ok:
        raise HPVMError(f"the compile of '{source.name}' failed", report)
    if verbose and report:
        print(report, end="")
    for warning in compiler_warnings(report):
        warnings.warn(HPVMWarning(warning), stacklevel=2)
        if said is not None:
            said.append(warning)
    return bitcode


# The fewest LLVM instructions a part of a split module has: below it, a clang process
# more costs more than the part saves.
SPLIT_MIN_INSTRUCTIONS = 2000


def compile_jobs() -> int:
    """How many clang processes compile one module's parts at once: $HPVM_COMPILE_JOBS, else
    the CPUs this process may run on."""
    text = os.environ.get("HPVM_COMPILE_JOBS", "").strip()
    if not text:
        return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                   else os.cpu_count() or 1)
    if not re.fullmatch(r"[0-9]+", text) or not 1 <= int(text) <= 256:
        raise HPVMError(f"HPVM_COMPILE_JOBS is '{text}'; expected a count from 1 to 256")
    return int(text)


def split_bitcode(bitcode: bytes, parts: int, min_size: Optional[int] = None) -> List[bytes]:
    """hpvmSplitBitcode: the module as at most `parts` modules, compiled apart and linked
    together (one when it is smaller than two parts of `min_size` instructions, None:
    SPLIT_MIN_INSTRUCTIONS)."""
    min_size = SPLIT_MIN_INSTRUCTIONS if min_size is None else min_size
    library = _compiler_library()
    output, diagnostics, count = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_uint()
    sizes = (ctypes.c_size_t * parts)()
    ok = library.hpvmSplitBitcode(bitcode, len(bitcode), parts, min_size,
                                  ctypes.byref(output), sizes, ctypes.byref(count),
                                  ctypes.byref(diagnostics))
    report = _take(library, diagnostics).decode(errors="replace")
    if not ok:
        raise HPVMError("the split of the module for parallel code generation failed", report)
    data = _take(library, output, sum(sizes[:count.value]))
    offsets = [0]
    for size in sizes[:count.value]:
        offsets.append(offsets[-1] + size)
    return [data[start:end] for start, end in zip(offsets, offsets[1:])]


def _compile_objects(build: "SharedBuild", bitcode: Path, constants: Path,
                     jobs: int) -> List[Path]:
    """The objects of the module: its bitcode split into up to `jobs` parts, each compiled
    by a clang of its own, `jobs` at a time, beside the assembly of the constants (which
    mostly waits on the disk)."""
    sources = [bitcode]
    if jobs > 1:
        parts = split_bitcode(bitcode.read_bytes(), jobs)
        if len(parts) > 1:
            sources = [bitcode.with_suffix(f".part{i}.bc") for i in range(len(parts))]
            for source, part in zip(sources, parts):
                source.write_bytes(part)
            if build.verbose:
                print(f"libHPVMCompiler: {bitcode} split into {len(parts)} parts")
    if constants.exists():
        sources.append(constants)
    objects = [source.with_suffix(".o") for source in sources]
    if len(sources) == 1:
        build.run(build.object_command(sources[0], objects[0]), "compile LLVM IR")
        return objects
    workers = min(len(sources), jobs + (1 if constants.exists() else 0))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        runs = [pool.submit(build.run, build.object_command(source, obj), "compile LLVM IR")
                for source, obj in zip(sources, objects)]
        for run in runs:
            run.result()
    return objects


def compiler_warnings(report: str) -> List[str]:
    """The warnings of a compiler report, one line each (the notes after them, which may
    print a whole module, left out)."""
    return [line.strip()[:2000] for line in report.splitlines() if ": warning: " in line
            or line.startswith("warning: ")]


def compile_shared(text: str, output: str, name: str = "graph", target: str = "cpu",
                   opt: str = "-O3", flags: Sequence[str] = (), verbose: bool = False,
                   parameters=None, said: Optional[List[str]] = None,
                   jobs: Optional[int] = None) -> str:
    """What `hpvm-cc -shared <opt> --target=<target> <SHARED_FLAGS> <flags>` makes of the
    module `text`, into `output`: compiled in this process (the compiler library), then
    clang's objects linked with the runtime. `parameters` (key -> array) is written as the
    parameter archive `<name>.params` beside the module, which the text names. The
    compiler's warnings are HPVMWarnings, and go into `said` too when it is given. A large
    module's LLVM IR is compiled in up to `jobs` parts at once (None: compile_jobs()), which
    compute what the whole module computes, bit for bit."""
    if target not in ("cpu", "gpu", "opencl"):
        raise HPVMError(f"unknown target '{target}'; expected cpu, gpu or opencl")
    build = SharedBuild.parse([opt, f"--target={target}", *SHARED_FLAGS, *flags])
    if build.options.get("distribute") != "none":
        raise HPVMError("--distribute=mpi: distributed streams are programs that mpirun "
                        "starts (hpvm-cc --distribute=mpi prog.c); a shared library of the "
                        "package runs in this process")
    build.verbose = build.verbose or verbose
    with tempfile.TemporaryDirectory(prefix="hpvm-py-") as directory:
        folder = Path(directory)
        if parameters:
            from .ir import write_parameter_archive
            write_parameter_archive(folder / f"{name}.params", parameters)
        # As hpvm-cc: the large constants (a model's weights) in an assembly file of
        # .incbin directives, never in the LLVM IR.
        bitcode, constants = folder / f"{name}.bc", folder / f"{name}.constants.s"
        options = build.pipeline_options(str(constants))
        bitcode.write_bytes(_compile_bitcode(text, folder / f"{name}.mlir", options,
                                             build.verbose, said))
        objects = _compile_objects(build, bitcode, constants,
                                   compile_jobs() if jobs is None else jobs)
        build.run(build.link_command(objects, output), "link")
    return output
