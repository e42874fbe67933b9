"""The package compiles in its own process: verifying, transforming and
compiling a graph go through the compiler library (hpvmRunPassPipeline, hpvmCompileBuffer);
the only processes started are clang's, for the objects and the link, as hpvm-cc starts
them. No hpvm-opt, no hpvm-cc."""

import os
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

import hpvm
from hpvm import toolchain

from test_knobs import X, exact_output, graph


@pytest.fixture
def commands(monkeypatch):
    """Every command the test starts (subprocess.run starts them through Popen)."""
    started = []

    class Recording(subprocess.Popen):
        def __init__(self, args, *rest, **options):
            started.append([str(a) for a in ([args] if isinstance(args, (str, bytes))
                                             else args)])
            super().__init__(args, *rest, **options)
    monkeypatch.setattr(subprocess, "Popen", Recording)
    return started


def test_verify_transform_compile_and_call_start_no_hpvm_tool(tmp_path, commands):
    g = graph()
    text = hpvm.verify(g)
    fused = toolchain.run_opt(text, ["--hpvm-fuse-tensor-nodes"], "knobbed.mlir")
    assert "hpvm.create_node @conv_bias_act" in fused
    # A new library (output=): verified, transformed by the knobs and the fusion, compiled.
    compiled = hpvm.compile(g, fuse=True, output=str(tmp_path / "knobbed.so"),
                            knobs={"knobs": [{"node": "conv", "knob": "exact"}]})
    np.testing.assert_allclose(compiled(X), exact_output(), rtol=1e-4, atol=1e-4)
    programs = {os.path.basename(c[0]) for c in commands}
    assert programs and all(p.startswith("clang") for p in programs), commands
    assert not [c for c in commands
                if any(os.path.basename(a) in ("hpvm-opt", "hpvm-cc") for a in c)], commands


def test_pass_arguments_become_one_pipeline():
    assert toolchain.pass_pipeline(["--hpvm-fuse-tensor-nodes",
                                    '--hpvm-apply-knobs=file="/a b/k.json"',
                                    "--hpvm-tile-nodes=nodes=p sizes=4,4,1"]) == (
        'builtin.module(hpvm-fuse-tensor-nodes,hpvm-apply-knobs{file="/a b/k.json"},'
        "hpvm-tile-nodes{nodes=p sizes=4,4,1})")
    with pytest.raises(hpvm.HPVMError, match="'fuse' is not a pass argument"):
        toolchain.pass_pipeline(["fuse"])


def test_errors_of_the_library_come_back_as_diagnostics():
    text = hpvm.verify(graph())
    with pytest.raises(hpvm.HPVMError, match="no-such-pass' does not refer to a registered"):
        toolchain.run_opt(text, ["--no-such-pass"])
    with pytest.raises(hpvm.HPVMError, match="no such option bogus"):
        toolchain.run_opt(text, ["--hpvm-fuse-tensor-nodes=bogus=1"])
    with pytest.raises(hpvm.HPVMError, match=r"graph.mlir:1:1: error"):
        toolchain.verify("hpvm.nonsense\n")
    with pytest.raises(hpvm.HPVMError, match="'-fhpvm-lanes=99' expects a count from 2 to 64"):
        toolchain.compile_shared(text, "/dev/null", flags=["-fhpvm-lanes=99"])
    with pytest.raises(hpvm.HPVMError,
                       match="'-fhpvm-tensor-tiles=some' expects auto, always or never, found 'some'"):
        toolchain.compile_shared(text, "/dev/null", flags=["-fhpvm-tensor-tiles=some"])
    with pytest.raises(hpvm.HPVMError, match="unknown option '--emit=llvm'"):
        toolchain.compile_shared(text, "/dev/null", flags=["--emit=llvm"])


def _clang_commands(printed: str) -> list:
    """The clang command lines in `printed` (hpvm-cc -v's or compile_shared's), the
    temporary folders' names made one."""
    commands = []
    for line in printed.splitlines():
        line = re.sub(r"^hpvm-cc: \[[^]]*\] ", "", line)
        if line.startswith(toolchain.clang()):
            commands.append(re.sub(r"/[^ ]*/hpvm-(cc|py)-[^/ ]+/", "TMP/", line))
    return commands


def test_the_objects_and_the_link_are_hpvm_cc_s(tmp_path, capsys):
    # The same clang commands as `hpvm-cc -shared` with the same flags (a CPU named, so that
    # -march=native is not added, line tables, a linker flag). The probe of the named CPU's
    # vector width is the compiler library's, for both.
    source = Path(__file__).parents[2] / "examples" / "vector_add.mlir"
    flags = ["-march=x86-64-v2", "-g", "-Wl,-z,now", "-fno-hpvm-inline-leaves"]
    output = str(tmp_path / "vector_add.so")
    done = subprocess.run([toolchain.tool("hpvm-cc"), "-v", "-shared", "-O2", "--target=cpu",
                           *toolchain.SHARED_FLAGS, *flags, str(source), "-o", output],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    expected = _clang_commands(done.stderr)
    toolchain.compile_shared(source.read_text(), output, "vector_add", opt="-O2", flags=flags,
                             verbose=True)
    assert _clang_commands(capsys.readouterr().out) == expected
    assert len(expected) == 2 and "-march=native" not in expected[0]
    assert "vector width" in done.stderr


def test_the_commands_come_from_the_library(tmp_path):
    # hpvmDriverCompileCommand and hpvmDriverLinkCommand read the command line as hpvm-cc
    # does: its flags, its link inputs, its mistakes.
    archive = tmp_path / "extra.a"
    archive.write_bytes(b"!<arch>\n")
    build = toolchain.SharedBuild.parse(["-O1", "-march=x86-64", "-fprofile-generate", "-L",
                                         str(tmp_path), "-lz", str(archive)])
    compile_ir = build.object_command(Path("m.part0.bc"), Path("m.part0.o"))
    assert compile_ir == [toolchain.clang(), "-O1", "-fPIC", "-march=x86-64",
                          "-fprofile-generate", "-Wno-override-module", "-c", "m.part0.bc",
                          "-o", "m.part0.o"]
    assert build.object_command(Path("m.s"), Path("m.s.o"))[-5] == (
        "-Wno-unused-command-line-argument")
    link = build.link_command([Path("a.o"), Path("b c.o")], "out.so")
    assert link[:3] == [toolchain.clang(), "-O1", "-shared"]
    assert link[link.index("a.o"):link.index("a.o") + 3] == ["a.o", "b c.o", str(archive)]
    assert link[-9:] == ["-L", str(tmp_path), "-lz", "-fprofile-generate", "-lpthread", "-ldl",
                         "-lm", "-o", "out.so"]
    assert os.path.basename(link[-10]) == "libhpvm_rt.a"
    with pytest.raises(hpvm.HPVMError, match="unknown optimization level '-O7'"):
        toolchain._driver_command("hpvmDriverCompileCommand", ["hpvm-cc", "-O7"], b"m.bc",
                                  b"m.o")
    with pytest.raises(hpvm.HPVMError, match="'--help' asks for hpvm-cc's help text"):
        toolchain._driver_command("hpvmDriverCompileCommand", ["hpvm-cc", "--help"], b"m.bc",
                                  b"m.o")


def test_device_tools_are_the_compilers(monkeypatch, tmp_path):
    """The cache key's device tools come from the compiler library (hpvmDeviceTools), which
    finds them as the device builds do: HPVM_LLVM_SPIRV names the translator, a missing
    one is `-`, the CPU has none."""
    assert toolchain.device_tools("cpu") == []
    fake = tmp_path / "my-translator"
    fake.write_text("#!/bin/sh\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("HPVM_LLVM_SPIRV", str(fake))
    assert toolchain.device_tools("opencl") == [
        f"llvm-spirv:{fake}:{fake.stat().st_mtime_ns}"]
    monkeypatch.setenv("HPVM_LLVM_SPIRV", str(tmp_path / "nowhere"))
    assert toolchain.device_tools("opencl") == ["llvm-spirv:-"]
    assert [stamp.split(":")[0] for stamp in toolchain.device_tools("gpu")] == [
        "ptxas", "fatbinary"]
