"""--distribute=mpi (the option table's -fhpvm-distribute) in the package: the flag is taken as
hpvm-cc takes it, and a shared library of the package refuses it with the reason (distributed
streams are programs that mpirun starts)."""

import pytest

import hpvm
from hpvm import toolchain

from test_knobs import graph


def test_distribute_reaches_the_pipeline_options_and_shared_libraries_refuse_it():
    build = toolchain.SharedBuild.parse(["--distribute=mpi"])
    assert build.options.get("distribute") == "mpi"
    assert toolchain.SharedBuild.parse(["-fhpvm-distribute=none"]).options.get(
        "distribute") == "none"
    text = hpvm.verify(graph())
    for flag in ("--distribute=mpi", "-fhpvm-distribute=mpi"):
        with pytest.raises(hpvm.HPVMError, match="programs that mpirun starts"):
            toolchain.compile_shared(text, "/dev/null", flags=[flag])
    with pytest.raises(hpvm.HPVMError, match="expects none or mpi, found 'tcp'"):
        toolchain.compile_shared(text, "/dev/null", flags=["--distribute=tcp"])
