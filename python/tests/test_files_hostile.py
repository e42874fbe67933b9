"""Files that are not what they seem, and outputs that would destroy inputs: models,
weights and parameter archives that are links to /dev/zero or named pipes, outputs that
are the model itself or its archive, /dev/stdout, archives changed after they were
written, impossible tensor sizes, torch modules whose control flow depends on the input.
Every refusal is an HPVMError (or the CLI's exit 1) naming the file or the input; nothing
is lost, nothing hangs, nothing is read until memory runs out."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import types
import warnings
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import hpvm
import hpvm.onnx
from hpvm import tensor as T
from hpvm.errors import HPVMError, HPVMWarning
from hpvm.ir import write_parameter_archive
from hpvm.onnx.examples import lenet
from test_onnx_cnn import _cli
from test_parameters import _dense_graph, _read_archive

PACKAGE_ROOT = str(Path(hpvm.__file__).resolve().parent.parent)


def _bounded(code: str, timeout: float = 60, stdin=None):
    """Runs `code` in a fresh Python with 3 GiB of address space and a time limit: a reader
    that reads /dev/zero until memory runs out, or blocks on a pipe, fails fast here
    instead of taking the machine (the test then fails on its output)."""
    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
    env = dict(os.environ, PYTHONPATH=PACKAGE_ROOT)
    try:
        return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              timeout=timeout, preexec_fn=limit, env=env, stdin=stdin)
    except subprocess.TimeoutExpired:
        pytest.fail(f"blocked for {timeout} s: {code}")


def _try(call: str) -> str:
    """Python code that prints 'HPVMError: ...' or the type of any other exception."""
    return ("import hpvm, hpvm.onnx\nfrom hpvm import tensor as T\n"
            "from hpvm.errors import HPVMError\n"
            f"try:\n    {call}\n    print('ACCEPTED')\n"
            "except HPVMError as e:\n    print('HPVMError:', e)\n"
            "except BaseException as e:\n    print('RAW', type(e).__name__, str(e)[:200])\n")


def _lenet_file(folder: Path, name: str = "lenet.onnx") -> Path:
    path = folder / name
    path.write_bytes(lenet().SerializeToString())
    return path


# -- files that are not files ------------------------------------------------------------

@pytest.mark.parametrize("kind", ["zero", "urandom", "fifo", "folder"])
def test_model_that_is_not_a_file_is_refused(tmp_path, kind):
    path = tmp_path / "model.onnx"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
    else:
        path.symlink_to(f"/dev/{kind}")
    result = _bounded(_try(f"hpvm.onnx.load({str(path)!r})"))
    expected = {"zero": "(a link to '/dev/zero') is a character device",
                "urandom": "(a link to '/dev/urandom') is a character device",
                "fifo": "is a named pipe", "folder": "is a folder"}[kind]
    assert f"HPVMError: the ONNX model '{path}' {expected}; expected a regular file" \
        in result.stdout, result.stdout + result.stderr


def test_cli_refuses_a_model_that_is_a_pipe(tmp_path):
    path = tmp_path / "model.onnx"
    os.mkfifo(path)
    result = _bounded(f"import sys\nfrom hpvm.onnx.__main__ import main\n"
                      f"sys.exit(main([{str(path)!r}, '-o', {str(tmp_path / 'm.mlir')!r}]))")
    assert result.returncode == 1, result.stderr
    assert "hpvm-onnx: error: the ONNX model" in result.stderr
    assert "is a named pipe; expected a regular file" in result.stderr


def _external_model(folder: Path, location: str, length=None) -> Path:
    """A model whose initializer 'w' (2 floats) keeps its data in `location`."""
    w = numpy_helper.from_array(np.ones(2, np.float32), "w")
    w.ClearField("raw_data")
    w.data_location = TensorProto.EXTERNAL
    for key, value in (("location", location), ("offset", "0"), ("length", length)):
        if value is not None:
            entry = w.external_data.add()
            entry.key, entry.value = key, str(value)
    graph = helper.make_graph([helper.make_node("Add", ["x", "w"], ["y"], name="add")], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
                              initializer=[w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    path = folder / "ext.onnx"
    path.write_bytes(model.SerializeToString())
    return path


@pytest.mark.parametrize("kind", ["zero", "fifo", "long"])
@pytest.mark.parametrize("how", ["load", "load_model"])
def test_external_data_that_is_not_the_tensors_is_refused(tmp_path, kind, how):
    data = tmp_path / "w.bin"
    if kind == "zero":
        data.symlink_to("/dev/zero")
    elif kind == "fifo":
        os.mkfifo(data)
    else:  # a regular file of 8 GiB (sparse), no length: onnx would read all of it
        with open(data, "wb") as stream:
            stream.truncate(8 << 30)
    path = _external_model(tmp_path, "w.bin")
    result = _bounded(_try(f"hpvm.onnx.{how}({str(path)!r})"))
    expected = {"zero": f"its external data file '{data}' (a link to '/dev/zero') is a "
                        "character device; expected a regular file",
                "fifo": f"its external data file '{data}' is a named pipe; expected a "
                        "regular file",
                "long": f"its external data file '{data}' gives no length, and onnx would "
                        f"read the {8 << 30} bytes after byte 0; expected at most the 8 bytes "
                        "of its dims [2]"}[kind]
    label = ("the initializer 'w' (dims [2], data type float) cannot be read: "
             if how == "load" else
             f"the ONNX model '{path}': the tensor 'w' (dims [2]) cannot be read: ")
    assert "HPVMError: " + label + expected in result.stdout, result.stdout + result.stderr


def test_external_data_still_loads(tmp_path):
    (tmp_path / "w.bin").write_bytes(np.array([1.5, -2.0], np.float32).tobytes())
    path = _external_model(tmp_path, "w.bin", length=8)
    graph = hpvm.onnx.load(path)
    assert graph.source == str(path)
    proto = hpvm.onnx.load_model(path)
    np.testing.assert_array_equal(numpy_helper.to_array(proto.graph.initializer[0]),
                                  [1.5, -2.0])


@pytest.mark.parametrize("kind", ["zero", "fifo"])
def test_knob_file_that_is_not_a_file_is_refused(tmp_path, kind):
    path = tmp_path / "knobs.json"
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to("/dev/zero")
    result = _bounded(_try("g = T.TensorGraph('k'); g.output(T.relu(g.input('x', (2, 2))))\n"
                           f"    hpvm.compile(g, knobs={str(path)!r})"))
    expected = ("(a link to '/dev/zero') is a character device" if kind == "zero"
                else "is a named pipe")
    assert (f"HPVMError: knobs: cannot read the configuration: the file '{path}' {expected}; "
            "expected a regular file") in result.stdout, result.stdout + result.stderr


def test_digits_weights_that_are_not_a_file_are_refused(tmp_path):
    pytest.importorskip("sklearn")
    path = tmp_path / "w.npz"
    os.mkfifo(path)
    result = _bounded("import sys\nfrom hpvm.approx.digits import main\n"
                      f"sys.exit(main(['--weights', {str(path)!r}]))", timeout=120)
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"the weights file (--weights) '{path}' is a named pipe; expected a regular file" \
        in result.stderr


# -- outputs that would destroy inputs -----------------------------------------------------

@pytest.mark.parametrize("spelling", ["same", "dot", "link"])
def test_cli_refuses_to_overwrite_its_model(tmp_path, spelling):
    model = _lenet_file(tmp_path)
    before = model.read_bytes()
    output = {"same": model, "dot": tmp_path / "." / "lenet.onnx",
              "link": tmp_path / "out.mlir"}[spelling]
    if spelling == "link":
        output.symlink_to(model)
    result = _cli(model, "-o", output)
    assert result.returncode == 1, result.stderr
    assert (f"hpvm-onnx: error: the input file '{model}' is the same as the output file "
            f"'{output}'") in result.stderr
    assert model.read_bytes() == before
    assert not (tmp_path / "lenet.params").exists()
    hpvm.onnx.load(model)  # still a model


def test_save_refuses_to_overwrite_the_source_model(tmp_path):
    model = _lenet_file(tmp_path)
    before = model.read_bytes()
    graph = hpvm.onnx.load(model)
    with pytest.raises(HPVMError, match="is the same as the output file"):
        graph.save(model)
    assert model.read_bytes() == before
    # A model named like the archive of the MLIR file: the archive would replace it.
    named = _lenet_file(tmp_path, "net.params")
    graph = hpvm.onnx.load(named)
    with pytest.raises(HPVMError, match=r"the input file '.*net\.params' is the same as the "
                                        r"output file '.*net\.params'"):
        graph.save(tmp_path / "net.mlir")
    assert named.read_bytes() == before
    assert not (tmp_path / "net.mlir").exists()


def test_mlir_is_never_written_over_an_archive(tmp_path):
    rng = np.random.default_rng(5)
    g = _dense_graph(rng.standard_normal((64, 32)).astype(np.float32),
                     np.zeros((1, 32), np.float32))
    _, archive = g.save(tmp_path / "x.mlir")
    before = Path(archive).read_bytes()
    # The archive's own name: the text would replace the archive just written.
    with pytest.raises(HPVMError, match=r"the MLIR file '.*x\.params' ends in '\.params', "
                                        r"the name of its own parameter archive; expected "
                                        r"another name, such as 'x\.mlir'"):
        g.save(tmp_path / "x.params")
    with pytest.raises(HPVMError, match="ends in '.params'"):
        g.save(tmp_path / "x.params", inline_weights=True)
    # An archive under another name.
    os.link(archive, tmp_path / "copy.mlir")
    with pytest.raises(HPVMError, match=r"'.*copy\.mlir' is a parameter archive; MLIR text "
                                        "written there would destroy it"):
        g.save(tmp_path / "copy.mlir")
    assert Path(archive).read_bytes() == before
    _read_archive(archive)
    # The CLI: -o x.params.
    model = _lenet_file(tmp_path)
    assert _cli(model, "-o", tmp_path / "lenet.mlir").returncode == 0
    before = (tmp_path / "lenet.params").read_bytes()
    for extra in ([], ["--inline-weights"]):
        result = _cli(model, "-o", tmp_path / "lenet.params", *extra)
        assert result.returncode == 1
        assert "ends in '.params', the name of its own parameter archive" in result.stderr
        assert (tmp_path / "lenet.params").read_bytes() == before


def test_archive_is_never_written_over_another_file(tmp_path):
    rng = np.random.default_rng(6)
    g = _dense_graph(rng.standard_normal((64, 32)).astype(np.float32),
                     np.zeros((1, 32), np.float32))
    mine = tmp_path / "d.params"
    mine.write_text("my notes\n")
    with pytest.raises(HPVMError, match=r"the parameter archive would replace '.*d\.params', "
                                        "a file that is not a parameter archive"):
        g.save(tmp_path / "d.mlir")
    assert mine.read_text() == "my notes\n"
    assert not (tmp_path / "d.mlir").exists()
    (tmp_path / "e.params").mkdir()
    with pytest.raises(HPVMError, match=r"would replace '.*e\.params', a folder"):
        g.save(tmp_path / "e.mlir")


@pytest.mark.parametrize("stdout", ["pipe", "file"])
def test_cli_writes_dev_stdout_with_inline_weights(tmp_path, stdout):
    model = _lenet_file(tmp_path)
    stray = Path("/dev/stdout.params")
    existed = stray.exists()
    try:
        if stdout == "pipe":
            result = _cli(model, "-o", "/dev/stdout")
            text = result.stdout
        else:
            env = dict(os.environ, PYTHONPATH=PACKAGE_ROOT)
            with open(tmp_path / "out.mlir", "w") as out:
                result = subprocess.run(
                    [sys.executable, "-m", "hpvm.onnx", str(model), "-o", "/dev/stdout"],
                    stdout=out, stderr=subprocess.PIPE, text=True, env=env)
            text = (tmp_path / "out.mlir").read_text()
        assert result.returncode == 0, result.stderr
        assert stray.exists() == existed, "wrote /dev/stdout.params"
    finally:
        if stray.exists() and not existed:
            stray.unlink()
    assert "hpvm.parameters" not in text and "dense_resource" not in text
    assert "func.func" in text
    hpvm.verify(text)


# -- archives changed after they were written ----------------------------------------------

def test_changed_archive_is_refused_by_the_compiler(tmp_path):
    rng = np.random.default_rng(7)
    weights = rng.standard_normal((64, 32)).astype(np.float32)
    g = _dense_graph(weights, np.zeros((1, 32), np.float32))
    mlir, archive = g.save(tmp_path / "d.mlir")
    data = bytearray(Path(archive).read_bytes())
    at = data.index(weights.tobytes())
    data[at + 100] ^= 0x40  # one weight changed
    Path(archive).write_bytes(bytes(data))
    hpvm_cc = os.path.join(os.environ["HPVM_HOME"], "bin", "hpvm-cc")
    result = subprocess.run([hpvm_cc, "--emit=llvm", mlir, "-o", tmp_path / "d.ll"],
                            capture_output=True, text=True)
    assert result.returncode == 1, result.stderr
    assert (f"the parameter archive '{archive}': the bytes of the entry 'fc_weight' "
            f"({weights.nbytes} at byte {at}) have the checksum") in result.stderr


def test_archive_writer_errors_are_hpvm_errors(tmp_path):
    with pytest.raises(HPVMError, match=r"the parameter archive '.*missing/p\.params': the "
                                        r"folder '.*missing' does not exist"):
        write_parameter_archive(tmp_path / "missing" / "p.params", {"a": np.ones(4)})
    (tmp_path / "p.params").mkdir()
    with pytest.raises(HPVMError, match=r"the parameter archive '.*p\.params' is a folder"):
        write_parameter_archive(tmp_path / "p.params", {"a": np.ones(4)})


# -- raw Python errors, NUL bytes, absurd sizes ------------------------------------------

def test_save_errors_are_hpvm_errors(tmp_path):
    g = T.TensorGraph("small")
    g.output(T.relu(g.input("x", (2, 2))))
    with pytest.raises(HPVMError, match=r"save: the MLIR file '.*nowhere/g\.mlir': the "
                                        r"folder '.*nowhere' does not exist"):
        g.save(tmp_path / "nowhere" / "g.mlir")
    (tmp_path / "dir.mlir").mkdir()
    with pytest.raises(HPVMError, match=r"save: the MLIR file '.*dir\.mlir' is a folder; "
                                        "expected the path of a file to write"):
        g.save(tmp_path / "dir.mlir")
    with pytest.raises(HPVMError, match="holds a NUL byte"):
        g.save(str(tmp_path / "a\0b.mlir"))
    with pytest.raises(HPVMError, match="holds a NUL byte"):
        hpvm.onnx.load(str(tmp_path / "a.onnx\0.txt"))
    with pytest.raises(HPVMError, match="expected a path"):
        g.save(3)


def test_compile_output_errors_are_hpvm_errors(tmp_path):
    g = T.TensorGraph("small")
    g.output(T.relu(g.input("x", (2, 2))))
    with pytest.raises(HPVMError, match=r"compile: output '.*nowhere/g\.so': the folder "
                                        r"'.*nowhere' does not exist; expected an existing "
                                        "folder"):
        hpvm.compile(g, output=tmp_path / "nowhere" / "g.so")
    (tmp_path / "dir.so").mkdir()
    with pytest.raises(HPVMError, match=r"compile: output '.*dir\.so' is a folder"):
        hpvm.compile(g, output=tmp_path / "dir.so")
    with pytest.raises(HPVMError, match="compile: output: the path .* holds a NUL byte"):
        hpvm.compile(g, output=str(tmp_path / "g\0.so"))


@pytest.mark.parametrize("shape", [(2 ** 40, 2 ** 30), (2 ** 62, 4), (1 << 20, 1 << 20, 1 << 9)])
def test_input_of_absurd_size_is_refused(shape):
    g = T.TensorGraph("huge")
    with pytest.raises(HPVMError) as error:
        g.input("image", shape)
    text = str(error.value)
    assert f"graph 'huge': the input 'image' of shape {'x'.join(map(str, shape))} (f32) " \
        "holds" in text
    assert "expected at most 2^48 bytes (256 TiB) per tensor" in text


def test_result_of_absurd_size_is_refused():
    g = T.TensorGraph("outer")
    a, b = g.input("a", (1 << 25, 1)), g.input("b", (1, 1 << 25))
    with pytest.raises(HPVMError, match=r"graph 'outer': the result of mul of shape "
                                        r"33554432x33554432 \(f32\) holds 1125899906842624 "
                                        "elements"):
        T.matmul(a, b)


def test_cli_refuses_an_input_shape_of_absurd_size(tmp_path):
    model = tmp_path / "relu.onnx"
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="r")], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                             ["a", "b"])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT,
                                                             ["a", "b"])])
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    proto.ir_version = 8
    model.write_bytes(proto.SerializeToString())
    result = _cli(model, "--input-shape", f"x={2 ** 40}x{2 ** 30}", "-o", tmp_path / "r.mlir")
    assert result.returncode == 1
    assert (f"hpvm-onnx: error: graph 'g': the input 'x' of shape {2 ** 40}x{2 ** 30} (f32) "
            f"holds {2 ** 70} elements") in result.stderr
    assert not (tmp_path / "r.mlir").exists()


def test_output_that_memory_cannot_hold_is_an_hpvm_error():
    g = T.TensorGraph("wide")
    x = g.input("x", (1, 1))
    g.output(T.broadcast_to(x, (1 << 23, 1 << 21)))  # 64 TiB of f32
    run = hpvm.compile(g)
    with pytest.raises(HPVMError, match=r"wide: cannot allocate the output '.*' of shape "
                                        r"\(8388608, 2097152\) \(70368744177664 bytes\)"):
        run(np.ones((1, 1), np.float32))


# -- torch modules whose control flow depends on the input -------------------------------

class _FakeTorch:
    """Just what from_torch uses of torch, with an exporter that warns as torch's tracer
    does for `if x.sum() > 0:` and then writes `model` (torch is not a test dependency)."""

    def __init__(self, model, said):
        torch = types.ModuleType("torch")

        class TracerWarning(Warning):
            pass

        class Module:
            training = False

            def eval(self):
                return self

            def train(self, mode=True):
                self.training = mode
                return self

        class no_grad:
            def __enter__(self):
                return self

            def __exit__(self, *exc):
                return False

        def export(module, args, path, **options):
            for category, text in said:
                warnings.warn(text, TracerWarning if category == "tracer" else category)
            Path(path).write_bytes(model.SerializeToString())

        torch.Tensor = type("Tensor", (), {})
        torch.nn = types.SimpleNamespace(Module=Module)
        torch.jit = types.SimpleNamespace(TracerWarning=TracerWarning)
        torch.onnx = types.SimpleNamespace(export=export)
        torch.no_grad = no_grad
        fastpath = [True]
        torch.backends = types.SimpleNamespace(mha=types.SimpleNamespace(
            get_fastpath_enabled=lambda: fastpath[0],
            set_fastpath_enabled=lambda v: fastpath.__setitem__(0, v)))
        self.torch, self.Module, self.TracerWarning = torch, Module, TracerWarning


def _relu_model():
    graph = helper.make_graph([helper.make_node("Relu", ["input"], ["y"], name="r")], "g",
                              [helper.make_tensor_value_info("input", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    proto.ir_version = 8
    return proto


TRACER_TEXT = ("Converting a tensor to a Python boolean might cause the trace to be incorrect. "
               "We can't record the data flow of Python values, so this value will be treated "
               "as a constant in the future. This means that the trace might not generalize "
               "to other inputs!")


def test_from_torch_says_that_other_inputs_take_the_traced_branch(monkeypatch):
    fake = _FakeTorch(_relu_model(), [("tracer", TRACER_TEXT), (UserWarning, "unrelated")])
    monkeypatch.setitem(sys.modules, "torch", fake.torch)

    class Branchy(fake.Module):
        pass

    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        graph = hpvm.from_torch(Branchy(), fake.torch.Tensor())
    assert graph.name == "Branchy"
    ours = [w for w in said if issubclass(w.category, HPVMWarning)]
    assert len(ours) == 1, [str(w.message) for w in said]
    text = str(ours[0].message)
    assert "from_torch: the module 'Branchy' computes a Python value from a tensor" in text
    assert "Converting a tensor to a Python boolean" in text
    assert "the graph does the same for every input, so other inputs may get wrong " \
        "results" in text
    assert ours[0].filename == __file__  # said where from_torch was called
    # torch's own warning is replaced; unrelated ones pass as they were.
    assert not any(issubclass(w.category, fake.TracerWarning) for w in said)
    assert any(str(w.message) == "unrelated" for w in said)
    with warnings.catch_warnings(), pytest.raises(
            HPVMError, match="the module 'Branchy' computes a Python value"):
        warnings.simplefilter("ignore")
        hpvm.from_torch(Branchy(), fake.torch.Tensor(), strict=True)


def test_from_torch_without_tracer_warnings_says_nothing(monkeypatch, tmp_path):
    fake = _FakeTorch(_relu_model(), [])
    monkeypatch.setitem(sys.modules, "torch", fake.torch)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        hpvm.from_torch(fake.Module(), fake.torch.Tensor(), onnx_path=tmp_path / "m.onnx")
    with pytest.raises(HPVMError, match=r"from_torch: onnx_path '.*nowhere/m\.onnx': the "
                                        "folder"):
        hpvm.from_torch(fake.Module(), fake.torch.Tensor(),
                        onnx_path=tmp_path / "nowhere" / "m.onnx")
