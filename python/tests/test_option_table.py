"""The option table (include/HPVM/Pipelines/Options.def): every flag it declares is taken by
hpvm-cc and by the package alike and reaches the pass pipeline, so that a new option is a line
of the table and the option of its pass, with nothing to add to either driver."""

import subprocess

import pytest

import hpvm
from hpvm import toolchain

# Every pass a flag can reach is in the pipeline: the kernels' too.
BASE = ["--target=gpu"]


def hpvm_cc_pipeline(flags):
    """`hpvm-cc --print-pipeline` with the package's fixed flags and `flags`."""
    done = subprocess.run([toolchain.tool("hpvm-cc"), "--print-pipeline", *toolchain.SHARED_FLAGS,
                           *BASE, *flags], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def python_pipeline(flags):
    return toolchain.pipeline_text([*BASE, *flags])


def settings(kind, flag, detail):
    """The command lines that set the flag `flag` of `kind` each way it can be set."""
    if kind == "switch":
        return [[f"-f{flag}"], [f"-fno-{flag}"]]
    if kind == "count":
        low, high = detail.split("-")
        return [[f"-f{flag}={low}"], [f"-f{flag}={high}"]]
    assert kind == "choice"
    return [[f"-f{flag}={choice}"] for choice in detail.split("|")]


FLAGS = toolchain.driver_flags()


def test_the_table_declares_the_known_flags():
    flags = {flag for _, flag, _, _ in FLAGS}
    assert {"hpvm-lanes", "hpvm-rows", "hpvm-inline-leaves", "hpvm-collapse-grids",
            "hpvm-parallel-leaves", "hpvm-fuse-nodes", "hpvm-fuse-tensor-nodes",
            "hpvm-tensor-tiles"} <= flags


@pytest.mark.parametrize("kind,flag,key,detail", FLAGS, ids=[f"{k}-{f}" for k, f, _, _ in FLAGS])
def test_every_flag_reaches_the_pipeline_from_both_drivers(kind, flag, key, detail):
    default = python_pipeline([])
    assert hpvm_cc_pipeline([]) == default
    pipelines = []
    for flags in settings(kind, flag, detail):
        # Both drivers take it, and build the same pipeline from it.
        pipeline = python_pipeline(flags)
        assert hpvm_cc_pipeline(flags) == pipeline, flags
        pipelines.append(pipeline)
    # Each setting gives a pipeline of its own: the flag reaches a pass.
    assert len(set(pipelines)) == len(pipelines), (flag, pipelines)
    if kind == "count":
        assert default not in pipelines


@pytest.mark.parametrize("kind,flag,key,detail", [f for f in FLAGS if f[0] != "switch"],
                         ids=[f"{k}-{f}" for k, f, _, _ in FLAGS if k != "switch"])
def test_a_wrong_value_is_the_same_error_from_both_drivers(kind, flag, key, detail):
    wrong = f"-f{flag}=99x"
    done = subprocess.run([toolchain.tool("hpvm-cc"), "--print-pipeline", wrong],
                          capture_output=True, text=True)
    assert done.returncode == 1
    message = done.stderr.strip().removeprefix("hpvm-cc: error: ")
    assert message.startswith(f"'{wrong}' expects ")
    with pytest.raises(hpvm.HPVMError) as error:
        toolchain.pipeline_text([wrong])
    assert str(error.value).splitlines()[0] == message


def test_the_options_string_reaches_the_pipeline():
    build = toolchain.SharedBuild.parse(["-fno-hpvm-inline-leaves", "-fhpvm-lanes=8",
                                         "--target=opencl"])
    options = build.pipeline_options("/tmp/a b/x.s")
    for setting in ("inline-leaves=false", "lanes=8", "vectorize=true", "devices=opencl",
                    'constants-asm="/tmp/a b/x.s"'):
        assert setting in options.split(" ") or setting in options
    pipeline = build.options.pipeline()
    assert "inline-leaves=false" in pipeline and "lanes=8" in pipeline
    assert "devices={opencl}" in pipeline


def test_a_wrong_option_of_the_library_is_an_error():
    options = toolchain.DriverOptions()
    with pytest.raises(hpvm.HPVMError, match="invalid option 'bogus=.*no such option bogus"):
        options.set("bogus", "1")
    with pytest.raises(hpvm.HPVMError, match="invalid option 'lanes="):
        options.set("lanes", "many")
    with pytest.raises(hpvm.HPVMError, match="no pipeline option 'bogus'"):
        options.get("bogus")
    options.set("devices", "cuda,opencl")
    assert options.get("devices") == "cuda,opencl"
    options.set("devices", "")
    assert options.get("devices") == "" and "devices=" not in options.string()


def test_the_driver_runs_in_this_process(tmp_path):
    # hpvm-cc's driver through the library: its exit status and its diagnostics.
    status, said = toolchain.run_driver(["--target=tpu", "x.mlir"])
    assert status == 1 and "unknown target 'tpu'; expected cpu, gpu or opencl" in said
    source = tmp_path / "broken.mlir"
    source.write_text("hpvm.nonsense\n")
    status, said = toolchain.run_driver(["--emit=llvm", str(source), "-o", str(tmp_path / "x.ll")])
    assert status == 1 and "broken.mlir:1:1: error" in said
    assert "hpvm-cc: error: compilation failed" in said


def test_the_language_flags_reach_the_driver(tmp_path):
    # -std= and -x are clang's flags that hpvm-cc takes; the package's driver is hpvm-cc's.
    source = tmp_path / "cxx.c"
    source.write_text('#include <cstdio>\nint main() { std::printf("%ld\\n", __cplusplus); }\n')
    program = tmp_path / "cxx"
    status, said = toolchain.run_driver(["-std=gnu++14", "-x", "c++", str(source), "-o",
                                         str(program)])
    assert status == 0, said
    ran = subprocess.run([str(program)], capture_output=True, text=True)
    assert ran.stdout == "201402\n"
    status, said = toolchain.run_driver(["-x", "fortran", str(source)])
    assert status == 1 and "-x expects the language of the inputs after it" in said
    assert "found 'fortran'" in said
