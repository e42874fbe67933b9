"""Building long graphs costs linear work in Python: counted in operations, not
timed. Naming the n-th unnamed op of a kind used to try n names (20,000 relus took 47 s
to build). The compile time of long chains (hpvm-cc) is not Python's; benchmarks of
it belong in `make bench`."""

import hpvm
from hpvm import tensor as T


class CountingSet(set):
    """A set that counts membership tests."""

    def __init__(self, *args):
        super().__init__(*args)
        self.lookups = 0

    def __contains__(self, item):
        self.lookups += 1
        return super().__contains__(item)


def test_naming_n_unnamed_ops_is_linear():
    g = hpvm.TensorGraph("chain")
    g._symbols = CountingSet(g._symbols)
    y = g.input("x", (1, 4))
    n = 2000
    for _ in range(n):
        y = T.relu(y)
    g.output(y)
    assert g._symbols.lookups <= 3 * n  # was n * (n + 1) / 2
    names = [line.split("@")[1].split("(")[0] for line in g.mlir().splitlines()
             if line.startswith("hpvm.leaf")]
    assert names == ["relu"] + [f"relu_{k}" for k in range(1, n)]


def test_generated_names_skip_names_given_by_the_user():
    """The same names as before the counters: the smallest free suffix."""
    g = hpvm.TensorGraph("names")
    x = g.input("x", (2,))
    a = T.relu(x, name="relu_2")
    b = T.relu(a)
    c = T.relu(b)
    d = T.relu(c)
    e = T.relu(d, name="relu")
    assert [t.op.name for t in (a, b, c, d, e)] == ["relu_2", "relu", "relu_1", "relu_3",
                                                   "relu_4"]


def test_module_names_are_checked_in_constant_time():
    m = hpvm.Module("many")
    m.nodes = CountingList()
    m.hosts = CountingList()
    for k in range(500):
        m.leaf(f"leaf{k}", [], "")
    assert m.nodes.iterations + m.hosts.iterations == 0  # a set of names, not a scan


class CountingList(list):
    def __init__(self, *args):
        super().__init__(*args)
        self.iterations = 0

    def __iter__(self):
        self.iterations += 1
        return super().__iter__()
