"""A module's LLVM IR compiled in parts at once (hpvmSplitBitcode, HPVM_COMPILE_JOBS): the
parts' objects compute what the whole module's object computes, bit for bit, and the shared
library exports nothing more."""

import ctypes
import shutil
import subprocess

import numpy as np
import pytest

import hpvm
import hpvm.onnx
from hpvm import toolchain
from hpvm.onnx.examples import lenet


@pytest.fixture
def clang_objects(monkeypatch):
    """The objects each clang command of the test makes (subprocess.run starts them)."""
    made = []

    class Recording(subprocess.Popen):
        def __init__(self, args, *rest, **options):
            if "-c" in args:
                made.append(str(args[args.index("-o") + 1]))
            super().__init__(args, *rest, **options)
    monkeypatch.setattr(subprocess, "Popen", Recording)
    return made


def _compile(tmp_path, monkeypatch, jobs: int):
    monkeypatch.setenv("HPVM_COMPILE_JOBS", str(jobs))
    # Parts as small as lenet's leaves: the test's model is far below the default minimum.
    monkeypatch.setattr(toolchain, "SPLIT_MIN_INSTRUCTIONS", 50)
    graph = hpvm.onnx.load(lenet(batch=2), name=f"lenet_jobs{jobs}")
    return hpvm.compile(graph, fuse=True, output=str(tmp_path / f"lenet{jobs}.so"))


def test_parts_compute_what_the_whole_module_computes(tmp_path, monkeypatch, clang_objects):
    x = np.random.default_rng(3).random((2, 1, 28, 28), dtype=np.float32)
    whole = _compile(tmp_path, monkeypatch, 1)(x)
    whole_objects = list(clang_objects)
    clang_objects.clear()
    parts = _compile(tmp_path, monkeypatch, 2)(x)
    assert not [o for o in whole_objects if ".part" in o]
    assert len([o for o in clang_objects if ".part" in o]) == 2, clang_objects
    assert whole.dtype == parts.dtype and whole.shape == parts.shape
    assert np.array_equal(whole.view(np.uint32), parts.view(np.uint32))
    # The symbols a part shares with another are hidden: the library exports what it did.
    if shutil.which("nm"):
        def exported(path):
            listed = subprocess.run(["nm", "-D", "--defined-only", path], capture_output=True,
                                    text=True, check=True).stdout
            return sorted(line.split()[-1] for line in listed.splitlines())
        one, two = exported(str(tmp_path / "lenet1.so")), exported(str(tmp_path / "lenet2.so"))
        assert [s.replace("jobs2", "jobs1") for s in two] == one
        assert not [s for s in two if ".hpvm." in s]


def test_a_small_module_stays_whole():
    graph = hpvm.onnx.load(lenet(batch=2), name="lenet_small")
    text = toolchain.run_opt(graph.mlir(), ["--hpvm-fuse-tensor-nodes"])
    build = toolchain.SharedBuild.parse(["-O3", *toolchain.SHARED_FLAGS])
    bitcode = toolchain._compile_bitcode(text, toolchain.Path("lenet_small.mlir"),
                                         build.pipeline_options("", 0), False)
    assert toolchain.split_bitcode(bitcode, 4) == [bitcode]
    assert toolchain.split_bitcode(bitcode, 1, min_size=0) == [bitcode]
    parts = toolchain.split_bitcode(bitcode, 2, min_size=0)
    assert len(parts) == 2 and all(p.startswith(b"BC\xc0\xde") for p in parts)
    # No more parts than clusters: lenet's live functions hang off a few leaves.
    assert 2 <= len(toolchain.split_bitcode(bitcode, 64, min_size=0)) < 64
    with pytest.raises(hpvm.HPVMError, match="cannot read the bitcode"):
        toolchain.split_bitcode(b"not bitcode", 2)


def test_jobs_come_from_the_environment(monkeypatch):
    monkeypatch.setenv("HPVM_COMPILE_JOBS", "3")
    assert toolchain.compile_jobs() == 3
    monkeypatch.delenv("HPVM_COMPILE_JOBS")
    assert toolchain.compile_jobs() >= 1
    for bad in ("0", "two", "-1"):
        monkeypatch.setenv("HPVM_COMPILE_JOBS", bad)
        with pytest.raises(hpvm.HPVMError, match="HPVM_COMPILE_JOBS is"):
            toolchain.compile_jobs()


# A module with what a split must keep apart or together: a mutable local (one copy, shared),
# a private table (a copy per part that reads it), a linkonce function (a copy per part)
# calling a local one, noinline functions, a dead one, llvm.used.
_IR = """
@counter = internal global i64 0
@table = private unnamed_addr constant [4 x i64] [i64 3, i64 5, i64 7, i64 11]
@keep = internal global i64 42
@llvm.used = appending global [1 x ptr] [ptr @keep], section "llvm.metadata"
define internal i64 @helper(i64 %x) {
  %i = and i64 %x, 3
  %p = getelementptr [4 x i64], ptr @table, i64 0, i64 %i
  %t = load i64, ptr %p
  %r = mul i64 %x, %t
  ret i64 %r
}
define linkonce_odr hidden i64 @odr(i64 %x) {
  %r = call i64 @plus(i64 %x)
  ret i64 %r
}
define internal i64 @plus(i64 %x) {
  %r = add i64 %x, 1000
  ret i64 %r
}
define internal i64 @big1(i64 %x) noinline {
  %c = load i64, ptr @counter
  %c1 = add i64 %c, 1
  store i64 %c1, ptr @counter
  %h = call i64 @helper(i64 %x)
  %o = call i64 @odr(i64 %h)
  ret i64 %o
}
define internal i64 @big2(i64 %x) noinline {
  %c = load i64, ptr @counter
  %c1 = add i64 %c, 10
  store i64 %c1, ptr @counter
  %i = and i64 %x, 3
  %p = getelementptr [4 x i64], ptr @table, i64 0, i64 %i
  %t = load i64, ptr %p
  %o = call i64 @odr(i64 %t)
  ret i64 %o
}
define internal i64 @dead() {
  %r = call i64 @big1(i64 1)
  ret i64 %r
}
define i64 @entry(i64 %x) {
  %a = call i64 @big1(i64 %x)
  %b = call i64 @big2(i64 %x)
  %s = add i64 %a, %b
  %c = load i64, ptr @counter
  %k = load i64, ptr @keep
  %s2 = add i64 %s, %c
  %s3 = add i64 %s2, %k
  ret i64 %s3
}
"""


def test_parts_of_a_module_link_into_its_program(tmp_path):
    clang = toolchain.clang()
    source = tmp_path / "m.ll"
    source.write_text(_IR)
    subprocess.run([clang, "-c", "-emit-llvm", "-Wno-override-module", str(source), "-o",
                    str(tmp_path / "m.bc")], check=True)
    parts = toolchain.split_bitcode((tmp_path / "m.bc").read_bytes(), 3, min_size=0)
    assert len(parts) == 3

    def library(name, bitcodes):
        objects = []
        for i, bitcode in enumerate(bitcodes):
            (tmp_path / f"{name}{i}.bc").write_bytes(bitcode)
            objects.append(str(tmp_path / f"{name}{i}.o"))
            subprocess.run([clang, "-O2", "-fPIC", "-Wno-override-module", "-c",
                            str(tmp_path / f"{name}{i}.bc"), "-o", objects[-1]], check=True)
        subprocess.run([clang, "-shared", *objects, "-o", str(tmp_path / f"{name}.so")],
                       check=True)
        entry = ctypes.CDLL(str(tmp_path / f"{name}.so")).entry
        entry.restype, entry.argtypes = ctypes.c_int64, [ctypes.c_int64]
        return entry

    whole = library("whole", [(tmp_path / "m.bc").read_bytes()])
    split = library("parts", parts)
    # One counter (both calls see each other's increments), the table in both parts.
    assert [split(x) for x in (5, 6, 7)] == [whole(x) for x in (5, 6, 7)]
