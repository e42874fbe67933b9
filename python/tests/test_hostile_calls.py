"""Calls of compiled Modules with arguments the runtime cannot take: one array
passed twice, overlapping views, negative extents, grids of more than 2^63 instances,
grids larger than the arrays their leaves index. Each is an HPVMError (before the call
runs, or from the compiled code through the runtime's guard); none may end the interpreter (the runtime exits on its errors) or write outside an
array. The calls run in a child process, so that a regression fails the test instead of
ending the test session."""

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import hpvm

from test_graph import vector_add_module

HERE = Path(__file__).parent

SAXPY = """
import numpy as np, hpvm

def saxpy_module():
    m = hpvm.Module("saxpy")
    leaf = m.leaf("saxpy_leaf",
                  [("a", "f32"), ("x", "memref<?xf32>", "in"), ("y", "memref<?xf32>", "inout")],
                  body='''
                    %i = hpvm.instance_id x : index
                    %xi = memref.load %x[%i] : memref<?xf32>
                    %yi = memref.load %y[%i] : memref<?xf32>
                    %ax = arith.mulf %a, %xi : f32
                    %s = arith.addf %ax, %yi : f32
                    memref.store %s, %y[%i] : memref<?xf32>
                  ''')
    root = m.internal("root", [("a", "f32"), ("x", "memref<?xf32>"), ("y", "memref<?xf32>"),
                               ("n", "index")])
    node = root.create_node(leaf, grid=[root.arg("n")])
    for port, name in enumerate(["a", "x", "y"]):
        root.bind_in(root.arg(name), node, port)
    m.host("saxpy", root)
    return m
"""


def run_isolated(body: str) -> str:
    """Runs `body` in a child Python (the package and test_graph importable); it prints
    what it finds. Returns stdout; fails when the child did not exit normally."""
    script = (f"import sys\nsys.path.insert(0, {str(HERE)!r})\n" + SAXPY + "\n"
              + textwrap.dedent(body))
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, (f"the call ended the interpreter (exit status "
                                     f"{result.returncode}): {result.stderr[-2000:]}")
    return result.stdout


def expect_errors(calls: str) -> list:
    """Each line of `calls` (a call) must raise HPVMError; returns their messages."""
    lines = [line.strip() for line in calls.strip().splitlines() if line.strip()]
    body = "results = []\n"
    for line in lines:
        body += (f"try:\n    {line}\n    print('NO ERROR: ' + {line!r})\n"
                 f"except hpvm.HPVMError as error:\n    print('HPVMError:', str(error).replace('\\n', ' '))\n")
    out = run_isolated(PRELUDE + body).splitlines()
    assert len(out) == len(lines), out
    for line, message in zip(lines, out):
        assert message.startswith("HPVMError: "), f"{line}: {message}"
    return [m[len("HPVMError: "):] for m in out]


PRELUDE = """
from test_graph import vector_add_module
lib = hpvm.compile(saxpy_module())
vadd = hpvm.compile(vector_add_module())
xs = np.arange(1000, dtype=np.float32)
ys = np.ones(1000, dtype=np.float32)
"""


def test_one_array_as_two_arguments_is_an_error():
    messages = expect_errors("""
        lib.saxpy(2.0, xs, xs, 1000)
        lib.saxpy(2.0, xs[1:], xs[:-1], 999)
        lib.saxpy(2.0, xs[:500], xs[499:999], 500)
        vadd.vadd(xs, xs, ys, 1000)
        vadd.vadd(xs, ys, ys, 1000)
    """)
    assert messages[0] == ("saxpy: arguments 'x' and 'y' share memory (one array passed "
                           "twice, or views of one); each memref argument is a buffer of its "
                           "own to the runtime, which refuses two that overlap; expected "
                           "arrays that do not overlap (pass a copy)")
    assert "arguments 'x' and 'y' share memory" in messages[1]
    assert "arguments 'x' and 'y' share memory" in messages[2]
    assert "arguments 'a' and 'b' share memory" in messages[3]
    assert "arguments 'b' and 'c' share memory" in messages[4]


def test_negative_extents_and_huge_grids_are_errors():
    messages = expect_errors("""
        lib.saxpy(2.0, xs, ys, -1)
        lib.saxpy(2.0, xs, ys, 4_000_000)
        lib.saxpy(2.0, xs, ys, 2**63 - 1)
        lib.saxpy(2.0, xs, ys, 2**63)
        vadd.vadd(xs, ys, np.zeros(10, np.float32), 1000)
    """)
    assert messages[0] == ("saxpy: argument 'n' is -1, the number of instances of "
                           "'saxpy_leaf' along a grid dimension; expected a size >= 0")
    # Grids larger than the arrays: found by the compiled code, returned by the guard.
    assert messages[1].startswith("saxpy: OUT_OF_RANGE: "), messages[1]
    assert messages[1].endswith("running @saxpy_leaf: node 'saxpy_leaf' runs 4000000 "
                                "instances along x, and each indexes dimension 0 of input 1 "
                                "by its x id, which has 1000 elements; expected at most 1000 "
                                "instances (or an array of at least 4000000)"), messages[1]
    assert "runs 9223372036854775807 instances along x" in messages[2], messages[2]
    assert "argument 'n' expects a index, found 9223372036854775808" in messages[3]
    assert "node 'vadd_leaf' runs 1000 instances along x, and each indexes dimension 0 of " \
        "input 2 by its x id, which has 10 elements" in messages[4], messages[4]


def test_grids_of_more_than_2_63_instances_are_errors():
    out = run_isolated("""
        m = hpvm.Module("grid2")
        leaf = m.leaf("noop", [("a", "memref<?xf32>", "in")], "")
        root = m.internal("root", [("a", "memref<?xf32>"), ("n", "index"), ("k", "index")])
        node = root.create_node(leaf, grid=[root.arg("n"), root.arg("k"), 4])
        root.bind_in(root.arg("a"), node, 0)
        m.host("run", root)
        lib = hpvm.compile(m)
        a = np.zeros(4, np.float32)
        for n, k in ((2**32, 2**32), (2**31, 2**30), (3, -2)):
            try:
                lib.run(a, n, k)
                print("ran", n, k)
            except hpvm.HPVMError as error:
                print(error)
    """).splitlines()
    assert out == [
        "run: the grid of 'noop' has 4294967296 x 4294967296 x 4 = 73786976294838206464 "
        "instances; expected at most 2^63 - 1",
        "run: the grid of 'noop' has 2147483648 x 1073741824 x 4 = 9223372036854775808 "
        "instances; expected at most 2^63 - 1",
        "run: argument 'k' is -2, the number of instances of 'noop' along a grid dimension; "
        "expected a size >= 0"]


def test_the_checks_follow_binds_through_internal_nodes():
    """A tiled graph: the extent reaches the leaf through an internal node's parameter
    (negative: refused before the call), and its leaf indexes the array at its own
    instance id (a collapsed grid: the compiled code checks the tile against the array,
    on the axis the id indexes)."""
    out = run_isolated("""
        m = hpvm.Module("tiled")
        leaf = m.leaf("scale", [("x", "memref<?x8xf32>", "inout")], body='''
            %i = hpvm.instance_id x : index
            %j = hpvm.instance_id y : index
            %v = memref.load %x[%i, %j] : memref<?x8xf32>
            %r = arith.addf %v, %v : f32
            memref.store %r, %x[%i, %j] : memref<?x8xf32>
        ''')
        inner = m.internal("inner", [("x", "memref<?x8xf32>"), ("rows", "index")])
        child = inner.create_node(leaf, grid=[inner.arg("rows"), 8])
        inner.bind_in(inner.arg("x"), child, 0)
        root = m.internal("root", [("x", "memref<?x8xf32>"), ("rows", "index")])
        node = root.create_node(inner, grid=[1])
        root.bind_in(root.arg("x"), node, 0)
        root.bind_in(root.arg("rows"), node, 1)
        m.host("run", root)
        lib = hpvm.compile(m)
        x = np.ones((5, 8), np.float32)
        lib.run(x, 5)
        print(x.sum())
        for rows, shape in ((6, (5, 8)), (-1, (5, 8))):
            try:
                lib.run(np.ones(shape, np.float32), rows)
                print("ran", rows)
            except hpvm.HPVMError as error:
                print(error)
        try:
            lib.run(np.ones((5, 4), np.float32), 5)
        except hpvm.HPVMError as error:
            print(error)
    """).splitlines()
    assert out[0] == "80.0"
    # A collapsed grid of tiles: the leaf's ids run over the tile, checked against x.
    assert out[1].startswith("run: OUT_OF_RANGE: "), out[1]
    assert out[1].endswith("node 'scale' runs 6 instances along x, and each indexes "
                           "dimension 0 of input 0 by its x id, which has 5 elements; expected "
                           "at most 5 instances (or an array of at least 6)"), out[1]
    assert out[2].startswith("run: argument 'rows' is -1")
    assert out[3].startswith("run: argument 'x' expects shape ('?', 8)")


def test_correct_calls_still_run():
    """The rules reject no correct call: a grid smaller than the arrays, an empty grid,
    a leaf that guards its access (scf.if), an id of a parent level, disjoint views of
    one array, and arrays only read by a tensor graph given twice."""
    lib = hpvm.compile(vector_add_module())
    big = np.arange(16, dtype=np.float32)
    c = np.zeros(8, np.float32)
    lib.vadd(big[:8], big[8:], c, 8)
    np.testing.assert_array_equal(c, big[:8] + big[8:])
    lib.vadd(big[:8], big[8:], c, 3)
    lib.vadd(big[:8], big[8:], c, 0)
    empty = np.zeros(0, np.float32)
    lib.vadd(empty, empty, empty, 0)  # no memory, nothing shared

    m = hpvm.Module("guarded")
    leaf = m.leaf("guarded_leaf", [("x", "memref<?xf32>", "inout"), ("len", "index")], body="""
        %i = hpvm.instance_id x : index
        %inside = arith.cmpi ult, %i, %len : index
        scf.if %inside {
          %v = memref.load %x[%i] : memref<?xf32>
          %r = arith.addf %v, %v : f32
          memref.store %r, %x[%i] : memref<?xf32>
        }
    """)
    root = m.internal("root", [("x", "memref<?xf32>"), ("len", "index"), ("n", "index")])
    node = root.create_node(leaf, grid=[root.arg("n")])
    root.bind_in(root.arg("x"), node, 0)
    root.bind_in(root.arg("len"), node, 1)
    m.host("run", root)
    x = np.ones(10, np.float32)
    hpvm.compile(m).run(x, 10, 64)  # 64 instances, the guard keeps them inside
    np.testing.assert_array_equal(x, np.full(10, 2, np.float32))

    from hpvm import tensor as T
    g = hpvm.TensorGraph("twice")
    a, b = g.input("a", (4,)), g.input("b", (4,))
    g.output(T.add(a, b))
    v = np.arange(4, dtype=np.float32)
    np.testing.assert_array_equal(hpvm.compile(g)(v, v), v + v)


def test_scalar_arguments_that_do_not_convert_are_errors():
    lib = hpvm.compile(vector_add_module())
    a = np.zeros(4, np.float32)
    for bad in (2.5, float("nan"), "4", None, [4], 2**64):
        with pytest.raises(hpvm.HPVMError, match="argument 'n' expects a index"):
            lib.vadd(a, a.copy(), a.copy(), bad)
    with pytest.raises(hpvm.HPVMError, match="out= gives arrays for the outputs of a tensor "
                                             "graph; this function has none"):
        lib.vadd(a, a.copy(), a.copy(), 4, out=[a.copy()])


def test_runtime_errors_come_back_as_hpvm_errors():
    """What the checks above miss still cannot end the interpreter: compiled calls go through
    the runtime's guard (hpvm_rt_call_guarded), which returns the error the compiled code
    would exit for. Here the Python checks are bypassed (Function._invoke) to pass one array
    as two arguments; the runtime's ALREADY_EXISTS becomes an HPVMError, and the same arrays
    work in the next call (what the abandoned call tracked was untracked)."""
    out = run_isolated("""
        import ctypes
        from hpvm.compiled import _descriptor
        from test_graph import vector_add_module
        vadd = hpvm.compile(vector_add_module())
        function = vadd.vadd
        assert function._guarded is not None, "no guarded entry point"
        xs = np.arange(1000, dtype=np.float32)
        ys = np.zeros(1000, dtype=np.float32)
        dx, dy = _descriptor(xs), _descriptor(ys)
        args = [ctypes.byref(dx), ctypes.byref(dx), ctypes.byref(dy), ctypes.c_int64(1000)]
        try:
            function._invoke(args)
            print("no error")
        except hpvm.HPVMError as error:
            print("HPVMError:", error)
        function(xs, xs.copy(), ys, 1000)
        print("after:", float(ys[999]))
    """)
    lines = out.splitlines()
    assert lines[0].startswith("HPVMError: vadd: ALREADY_EXISTS: "), out
    assert "hpvm.track" in lines[0] and "is already tracked" in lines[0], out
    assert lines[1] == "after: 1998.0", out


def test_failed_assert_in_a_leaf_is_an_error_not_an_abort():
    # A leaf's cf.assert (the checks tensor ops and frontends compile into leaves) fails
    # through the runtime (hpvm_rt_assert_failed), so the guard returns it as an HPVMError
    # naming the message and the assert's line; the interpreter goes on, and the next call
    # with good data works. (Before: puts + abort, SIGABRT ended the interpreter.)
    out = run_isolated("""
        m = hpvm.Module("checked")
        leaf = m.leaf("positive_leaf",
                      [("x", "memref<?xf32>", "in"), ("y", "memref<?xf32>", "inout")],
                      body='''
                        %i = hpvm.instance_id x : index
                        %xi = memref.load %x[%i] : memref<?xf32>
                        %zero = arith.constant 0.0 : f32
                        %ok = arith.cmpf oge, %xi, %zero : f32
                        cf.assert %ok, "x must not be negative"
                        %s = math.sqrt %xi : f32
                        memref.store %s, %y[%i] : memref<?xf32>
                      ''')
        root = m.internal("root", [("x", "memref<?xf32>"), ("y", "memref<?xf32>"), ("n", "index")])
        node = root.create_node(leaf, grid=[root.arg("n")])
        root.bind_in(root.arg("x"), node, 0)
        root.bind_in(root.arg("y"), node, 1)
        m.host("roots", root)
        lib = hpvm.compile(m)
        xs = np.arange(100, dtype=np.float32)
        ys = np.zeros(100, dtype=np.float32)
        bad = xs.copy(); bad[37] = -1.0
        try:
            lib.roots(bad, ys, 100)
            print("NO ERROR")
        except hpvm.HPVMError as error:
            print("HPVMError:", str(error).replace("\\n", " "))
        lib.roots(xs, ys, 100)
        print("then:", bool(np.allclose(ys, np.sqrt(xs))))
    """).splitlines()
    assert out[0].startswith("HPVMError: roots: FAILED_PRECONDITION: "), out
    assert out[0].endswith("x must not be negative"), out
    assert out[1] == "then: True", out
