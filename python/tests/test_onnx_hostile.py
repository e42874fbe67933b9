"""ONNX models the importer must refuse as onnxruntime does: a value defined
twice, two graph inputs or two nodes of one name, an initializer that does not match the
graph input of its name, data that does not fill its dims; external data of a model
given without its folder. Every refusal is an HPVMError naming what was expected."""

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper

import hpvm
import hpvm.onnx


def value(name, shape=(2,), elem=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem, list(shape))


def model(nodes, inputs, outputs, initializers=()):
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(initializers))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


W = numpy_helper.from_array(np.ones(2, np.float32), "w")


def bad_data():
    tensor = numpy_helper.from_array(np.ones(2, np.float32), "w")
    tensor.dims[:] = [3]
    return tensor


CASES = {
    "two nodes write one value": (
        model([helper.make_node("Relu", ["x"], ["y"], name="a"),
               helper.make_node("Sigmoid", ["x"], ["y"], name="b")], [value("x")], [value("y")]),
        "the value 'y' is defined twice, as an output of ONNX node 'a' (Relu) and as an "
        "output of ONNX node 'b' (Sigmoid); expected each value defined once"),
    "a node writes a graph input": (
        model([helper.make_node("Relu", ["x"], ["x"]), helper.make_node("Relu", ["x"], ["y"])],
              [value("x")], [value("y")]),
        "the value 'x' is defined twice, as the graph input 'x' and as an output of ONNX "
        "node #0 (Relu, output 'x')"),
    "a node writes an initializer": (
        model([helper.make_node("Relu", ["x"], ["w"]), helper.make_node("Add", ["x", "w"], ["y"])],
              [value("x")], [value("y")], [W]),
        "the value 'w' is defined twice, as the initializer 'w' and as an output of ONNX node"),
    "two graph inputs of one name": (
        model([helper.make_node("Relu", ["x"], ["y"])], [value("x"), value("x")], [value("y")]),
        "the ONNX graph has two inputs named 'x'; expected each input once"),
    "two nodes of one name": (
        model([helper.make_node("Relu", ["x"], ["t"], name="n"),
               helper.make_node("Relu", ["t"], ["y"], name="n")], [value("x")], [value("y")]),
        "the ONNX graph has two nodes named 'n' (#0 and #1); expected unique node names"),
    "an initializer of another shape than its input": (
        model([helper.make_node("Add", ["x", "w"], ["y"])], [value("x"), value("w", (3,))],
              [value("y")], [W]),
        "the initializer 'w' has the shape [2] but the graph input of its name has the shape "
        "[3]; expected the same shape"),
    "an initializer of another type than its input": (
        model([helper.make_node("Add", ["x", "w"], ["y"])],
              [value("x"), value("w", (2,), TensorProto.DOUBLE)], [value("y")], [W]),
        "the initializer 'w' holds float but the graph input of its name is a tensor of "
        "double; expected the same type"),
    "data that does not fill its dims": (
        model([helper.make_node("Add", ["x", "w"], ["y"])], [value("x")], [value("y")],
              [bad_data()]),
        "the initializer 'w' (dims [3], data type float) cannot be read: cannot reshape array "
        "of size 2 into shape (3,); expected data that matches its dims and data type"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_models_onnxruntime_refuses_are_errors(case):
    proto, message = CASES[case]
    with pytest.raises(Exception):  # onnxruntime refuses it too
        onnxruntime.InferenceSession(proto.SerializeToString(),
                                     providers=["CPUExecutionProvider"])
    with pytest.raises(hpvm.HPVMError) as error:
        hpvm.onnx.load(proto)
    assert message in str(error.value)


def test_two_initializers_of_one_name_are_an_error():
    """onnxruntime warns and takes the last one; the ONNX checker refuses the model, and
    so does the importer (the later one used to win silently)."""
    proto = model([helper.make_node("Add", ["x", "w"], ["y"])], [value("x")], [value("y")],
                  [W, numpy_helper.from_array(np.zeros(2, np.float32), "w")])
    with pytest.raises(onnx.checker.ValidationError):
        onnx.checker.check_model(proto)
    with pytest.raises(hpvm.HPVMError, match="the ONNX graph has two initializers named 'w'"):
        hpvm.onnx.load(proto)


def test_what_onnxruntime_accepts_still_loads():
    """Unnamed nodes, an initializer listed as an input of its own shape, one value as two
    graph outputs."""
    proto = model([helper.make_node("Relu", ["x"], ["t"]), helper.make_node("Add", ["t", "w"], ["y"])],
                  [value("x"), value("w")], [value("y"), value("y")], [W])
    graph = hpvm.onnx.load(proto)
    x = np.array([1, -1], np.float32)
    first, second = hpvm.compile(graph)(x)
    np.testing.assert_array_equal(first, [2, 1])
    np.testing.assert_array_equal(second, [2, 1])


def external_model(tmp_path):
    """A model whose weight lives in 'weights.bin' next to 'model.onnx' in tmp_path."""
    proto = model([helper.make_node("Add", ["x", "w"], ["y"])], [value("x")], [value("y")],
                  [numpy_helper.from_array(np.array([10, 20], np.float32), "w")])
    path = tmp_path / "model.onnx"
    onnx.save(proto, str(path), save_as_external_data=True, all_tensors_to_one_file=True,
              location="weights.bin", size_threshold=0)
    return path


def test_external_data_needs_its_folder(tmp_path, monkeypatch):
    path = external_model(tmp_path)
    x = np.array([1, 2], np.float32)
    # By path: the model's folder, wherever the process runs.
    monkeypatch.chdir("/")
    np.testing.assert_array_equal(hpvm.compile(hpvm.onnx.load(path))(x), [11, 22])
    # As bytes or a ModelProto, the folder is unknown: the current directory is not taken.
    data = path.read_bytes()
    proto = onnx.load(str(path), load_external_data=False)
    monkeypatch.chdir(tmp_path)  # where the file is: still refused without base_dir
    for given in (data, proto):
        with pytest.raises(hpvm.HPVMError) as error:
            hpvm.onnx.load(given)
        assert ("the initializer 'w' keeps its data in the external file 'weights.bin', and "
                "the model was given as bytes or a ModelProto") in str(error.value)
        assert "expected base_dir=" in str(error.value)
    monkeypatch.chdir("/")
    for given in (data, proto):
        graph = hpvm.onnx.load(given, base_dir=tmp_path)
        np.testing.assert_array_equal(hpvm.compile(graph)(x), [11, 22])
    with pytest.raises(hpvm.HPVMError, match="base_dir: expected the folder"):
        hpvm.onnx.load(data, base_dir=tmp_path / "missing")
    (tmp_path / "weights.bin").unlink()
    with pytest.raises(hpvm.HPVMError, match="the initializer 'w' .* cannot be read"):
        hpvm.onnx.load(path)


def test_malformed_attributes_and_shapes_are_errors():
    """Errors the handlers did not foresee are still HPVMErrors naming the node."""
    proto = model([helper.make_node("Softmax", ["x"], ["y"], axis="one")], [value("x")],
                  [value("y")])
    with pytest.raises(hpvm.HPVMError, match="ONNX node #0 \\(Softmax, output 'y'\\)"):
        hpvm.onnx.load(proto)
    relu = model([helper.make_node("Relu", ["x"], ["y"])], [value("x", ("N", 2))], [value("y")])
    for shapes in ({"x": "ab"}, {"x": (2, 2.5)}, {"x": (0, 2)}, ["x"]):
        with pytest.raises(hpvm.HPVMError, match="input_shapes"):
            hpvm.onnx.load(relu, input_shapes=shapes)


def test_a_transpose_of_a_scalar_does_not_crash_the_verifier():
    """MLIR's verifier crashes (SIGSEGV, in this process: the verifier runs in
    libHPVMCompiler through ctypes) on a rank-0 linalg.transpose; a transpose of a scalar
    is the scalar itself. Found by test_fuzz.py. Run in a child process, so that a
    regression fails this test instead of ending the session."""
    import subprocess
    import sys
    proto = model([helper.make_node("Transpose", ["x"], ["t"]),
                   helper.make_node("Relu", ["t"], ["y"])], [value("x", ())], [value("y", ())])
    script = ("import sys, numpy as np, onnx, hpvm, hpvm.onnx\n"
              "graph = hpvm.onnx.load(onnx.load_from_string(sys.stdin.buffer.read()))\n"
              "graph.verify()\n"
              "print(hpvm.compile(graph)(np.array(-2.5, np.float32)),"
              " hpvm.compile(graph)(np.array(1.5, np.float32)))\n")
    result = subprocess.run([sys.executable, "-c", script], input=proto.SerializeToString(),
                            capture_output=True, timeout=300)
    assert result.returncode == 0, result.stderr.decode()[-2000:]
    assert result.stdout.decode().split() == ["0.0", "1.5"]


def test_scalar_constants_keep_their_rank():
    """A transposed scalar initializer as the output: rank 0, as onnxruntime gives it
    (np.ascontiguousarray turned it into shape (1,)). Found by test_fuzz.py."""
    proto = model([helper.make_node("Transpose", ["c"], ["y"])], [value("x", (1,))],
                  [value("y", ())], [numpy_helper.from_array(np.array(0.125, np.float32), "c")])
    out = hpvm.compile(hpvm.onnx.load(proto))(np.zeros(1, np.float32))
    assert out.shape == () and out == np.float32(0.125)
    g = hpvm.TensorGraph("scalar_input")
    s = g.input("s", ())
    g.output(hpvm.tensor.relu(s))
    assert hpvm.compile(g)(np.float64(-3.0)).shape == ()
