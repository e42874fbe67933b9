"""python/README.md runs as written: its Python blocks in order (one namespace, in a
temporary directory), then its `hpvm-onnx` commands, and what it says they print."""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def blocks(language: str):
    return re.findall(rf"```{language}\n(.*?)```", README.read_text(), re.S)


def test_tutorial_runs_and_prints_what_it_says(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "readme"}
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        for code in blocks("python"):
            exec(compile(code, str(README), "exec"), namespace)
    text = printed.getvalue()
    assert "hpvm.leaf @conv2d" in text
    assert "(4, 8, 6, 6)" in text
    assert "'hpvm.tensor.softmax' op" in text and "axis" in text
    assert "True" in text
    assert "[1. 3. 5.]" in text
    # The hostile calls of section 3: refused before they run, or by the compiled code.
    assert "saxpy: arguments 'x' and 'y' share memory (one arr" in text
    assert "saxpy: OUT_OF_RANGE: " in text
    assert "saxpy: argument 'n' is -1, the number of instances" in text
    assert text.count("True") >= 2  # the approximate digits CNN's accuracy
    # Symbolic dimensions: bound by name or through a shape, errors naming the dimension,
    # and compile_dynamic's two shapes.
    assert "(1, 5)\n(2, 5)\n" in text
    assert "input 'a' has a dynamic dimension 1 ('sequence') that not" in text
    assert "the dimension 'sequence' is 6 in shapes['b'] (dimension 1 of 'b') but 5" in text
    assert "[[2. 2. 2.]]\n(2, 4)\n2\n" in text
    assert (tmp_path / "lenet.onnx").exists()

    # The shell block's hpvm-onnx commands, with the console script this environment installed.
    script = Path(sys.executable).parent / "hpvm-onnx"
    commands = [line.split("#")[0].strip() for code in blocks("sh") for line in code.splitlines()
                if line.startswith("hpvm-onnx ")]
    assert len(commands) == 2
    for command in commands:
        argv = shlex.split(command)
        result = subprocess.run([str(script), *argv[1:]], capture_output=True, text=True,
                                env=dict(os.environ))
        assert result.returncode == 0, result.stderr
    assert "hpvm.tensor.conv2d" in (tmp_path / "lenet.mlir").read_text()
    assert "func.func @digits(" in (tmp_path / "digits.mlir").read_text()
