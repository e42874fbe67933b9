"""hpvm.Module: general graphs (leaf and internal nodes, grids, edges, binds) built
from Python, verified by the dialect's verifier and run by the runtime."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import hpvm

VADD_BODY = """
  %i = hpvm.instance_id x : index
  %x = memref.load %a[%i] : memref<?xf32>
  %y = memref.load %b[%i] : memref<?xf32>
  %s = arith.addf %x, %y : f32
  memref.store %s, %c[%i] : memref<?xf32>
"""


def vector_add_module(name="vadd", targets=("cpu",)):
    m = hpvm.Module(name)
    leaf = m.leaf("vadd_leaf", [("a", "memref<?xf32>", "in"), ("b", "memref<?xf32>", "in"),
                                ("c", "memref<?xf32>", "out")], VADD_BODY, targets=targets)
    root = m.internal("vadd_root", [("a", "memref<?xf32>"), ("b", "memref<?xf32>"),
                                    ("c", "memref<?xf32>"), ("n", "index")])
    node = root.create_node(leaf, grid=[root.arg("n")])
    for port, name in enumerate("abc"):
        root.bind_in(root.arg(name), node, port)
    m.host("vadd", root)
    return m


def test_vector_add_runs_in_place():
    m = vector_add_module()
    text = m.verify()
    assert "hpvm.create_node @vadd_leaf [%n] : !hpvm.node" in text
    assert "hpvm.track %a : memref<?xf32>" in text
    library = hpvm.compile(m)
    n = 100003
    a = np.arange(n, dtype=np.float32)
    b = np.full(n, 0.5, np.float32)
    c = np.zeros(n, np.float32)
    assert library.vadd(a, b, c, n) is None
    np.testing.assert_array_equal(c, a + b)


def test_two_level_grid_with_an_edge_and_parent_ids():
    """A producer leaf computes a scale that flows along an all-to-all edge into a 2-level
    (tiles x instances) consumer that reads its parent's instance id."""
    m = hpvm.Module("scaled")
    producer = m.leaf("scale", [("s", "f32")], results=["f32"], body="""
        %two = arith.constant 2.0 : f32
        %t = arith.mulf %s, %two : f32
        hpvm.return %t : f32
    """)
    consumer = m.leaf("apply", [("x", "memref<?xf32>", "inout"), ("t", "f32")], body="""
        %l = hpvm.instance_id x : index
        %w = hpvm.num_instances x : index
        %g = hpvm.instance_id x level 1 : index
        %base = arith.muli %g, %w : index
        %i = arith.addi %base, %l : index
        %v = memref.load %x[%i] : memref<?xf32>
        %r = arith.mulf %v, %t : f32
        memref.store %r, %x[%i] : memref<?xf32>
    """)
    tile = m.internal("tile", [("x", "memref<?xf32>"), ("t", "f32")])
    inner = tile.create_node(consumer, grid=[16])
    tile.bind_in(tile.arg("x"), inner, 0)
    tile.bind_in(tile.arg("t"), inner, 1)
    root = m.internal("root", [("x", "memref<?xf32>"), ("s", "f32"), ("tiles", "index")])
    p = root.create_node(producer)
    q = root.create_node(tile, grid=[root.arg("tiles")])
    root.bind_in(root.arg("s"), p, 0)
    root.bind_in(root.arg("x"), q, 0)
    root.edge(p, 0, q, 1, "all_to_all")
    m.host("run", root)
    library = hpvm.compile(m)
    x = np.arange(64, dtype=np.float32)
    library.run(x, 1.5, 4)
    np.testing.assert_array_equal(x, np.arange(64, dtype=np.float32) * 3.0)


def test_verifier_rejects_a_type_mismatched_edge():
    m = hpvm.Module("bad")
    producer = m.leaf("producer", [], results=["f32"], body="""
        %f = arith.constant 1.0 : f32
        hpvm.return %f : f32
    """)
    consumer = m.leaf("consumer", [("x", "i64")], body="")
    root = m.internal("root", [])
    p, q = root.create_node(producer), root.create_node(consumer)
    root.edge(p, 0, q, 0)
    with pytest.raises(hpvm.HPVMError) as error:
        m.verify()
    assert "error:" in error.value.diagnostics
    assert "'hpvm.edge' op" in error.value.diagnostics
    with pytest.raises(hpvm.HPVMError):
        hpvm.compile(m)


def test_builder_errors_name_what_was_expected():
    m = hpvm.Module("errors")
    with pytest.raises(hpvm.HPVMError, match="access 'write'; expected one of in, out, inout"):
        m.leaf("l", [("a", "memref<?xf32>", "write")], "")
    with pytest.raises(hpvm.HPVMError, match="unsupported type 'vector<4xf32>'"):
        m.leaf("l", [("a", "vector<4xf32>")], "")
    with pytest.raises(hpvm.HPVMError, match="unknown target 'fpga'"):
        m.leaf("l", [], "", targets=["fpga"])
    leaf = m.leaf("l", [("a", "memref<?xf32>")], "")
    with pytest.raises(hpvm.HPVMError, match="already defines 'l'"):
        m.leaf("l", [], "")
    root = m.internal("root", [("a", "memref<?xf32>"), ("x", "f32")])
    with pytest.raises(hpvm.HPVMError, match="has type f32; expected index"):
        root.create_node(leaf, grid=[root.arg("x")])
    with pytest.raises(hpvm.HPVMError, match="at most 3 dimensions"):
        root.create_node(leaf, grid=[1, 2, 3, 4])
    with pytest.raises(hpvm.HPVMError, match="no parameter 'b'"):
        root.arg("b")
    node = root.create_node(leaf, grid=[8])
    with pytest.raises(hpvm.HPVMError, match="unknown replication"):
        root.edge(node, 0, node, 0, "many_to_many")
    with_results = m.internal("with_results", [], results=["f32"])
    with pytest.raises(hpvm.HPVMError, match="has outputs"):
        m.host("run", with_results)


def test_call_checks_arguments():
    library = hpvm.compile(vector_add_module())
    a = np.zeros(4, np.float32)
    with pytest.raises(hpvm.HPVMError, match="argument 'c' is written and must be a C-contiguous "
                                             "array of float32, found float64"):
        library.vadd(a, a, np.zeros(4), 4)
    with pytest.raises(hpvm.HPVMError, match="expects rank 1"):
        library.vadd(a, a, np.zeros((2, 2), np.float32), 4)
    with pytest.raises(hpvm.HPVMError, match="argument 'n' expects a index, found 'four'"):
        library.vadd(a, a, a, "four")
    with pytest.raises(AttributeError, match="no host function 'vmul'"):
        library.vmul


def test_half_scalar_parameters_are_refused_before_any_call():
    m = hpvm.Module("half")
    leaf = m.leaf("scale", [("s", "f16"), ("x", "memref<?xf16>", "inout")], body="""
        %i = hpvm.instance_id x : index
        %v = memref.load %x[%i] : memref<?xf16>
        %r = arith.mulf %v, %s : f16
        memref.store %r, %x[%i] : memref<?xf16>
    """)
    root = m.internal("root", [("s", "f16"), ("x", "memref<?xf16>"), ("n", "index")])
    node = root.create_node(leaf, grid=[root.arg("n")])
    root.bind_in(root.arg("s"), node, 0)
    root.bind_in(root.arg("x"), node, 1)
    m.host("run", root)
    with pytest.raises(hpvm.HPVMError, match="parameter 's' is a f16 scalar, which Python "
                                             "cannot pass"):
        hpvm.compile(m)


def test_gpu_hinted_leaf_runs_on_the_opencl_device(tmp_path):
    """target="opencl" gives the GPU-hinted leaf an OpenCL kernel (PoCL in make check); the
    runtime's trace names the device that ran it, and the result is the CPU's."""
    script = tmp_path / "opencl_vadd.py"
    script.write_text(f"""
import numpy as np, hpvm, sys
sys.path.insert(0, {str(Path(__file__).parent)!r})
from test_graph import vector_add_module
m = vector_add_module("vadd_opencl", targets=["cpu", "gpu"])
library = hpvm.compile(m, target="opencl")
a = np.arange(4099, dtype=np.float32); b = np.full(4099, 0.25, np.float32)
c = np.zeros(4099, np.float32)
library.vadd(a, b, c, 4099)
print("equal" if np.array_equal(c, a + b) else "different")
""")
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                            env=dict(os.environ, HPVM_TRACE="1"))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "equal"
    assert "hpvm-trace: vadd_leaf on opencl:" in result.stderr
