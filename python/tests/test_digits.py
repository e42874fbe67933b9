"""hpvm.approx.digits: the digits CNN (scikit-learn's bundled 8x8 digits, trained in NumPy):
the data split, the shipped weights' accuracy, the HPVM graph's exact inference against the
NumPy reference (unfused and fused), and the training's determinism."""

import numpy as np
import pytest

import hpvm
from hpvm.approx import digits

DATA = digits.load_data()


def test_load_data_split():
    sizes = {name: len(y) for name, (_, y) in DATA.items()}
    assert sizes == {"train": 1077, "calibration": 360, "test": 360}
    for x, y in DATA.values():
        assert x.dtype == np.float32 and x.shape == (len(y), 1, 8, 8)
        assert y.dtype == np.int64 and set(np.unique(y)) <= set(range(10))
        assert x.min() >= 0.0 and x.max() <= 1.0
    every = np.concatenate([x for x, _ in DATA.values()])
    assert every.max() == 1.0  # pixel 16 / 16
    # the split is a permutation of all the images
    from sklearn.datasets import load_digits
    whole = load_digits().images.reshape(-1, 64)
    assert np.array_equal(sorted(map(bytes, (every * 16).astype(np.uint8).reshape(-1, 64))),
                          sorted(map(bytes, whole.astype(np.uint8))))
    # seeded: the same seed gives the same split, another seed another
    again, other = digits.load_data(0), digits.load_data(1)
    assert all(np.array_equal(DATA[k][0], again[k][0]) and np.array_equal(DATA[k][1], again[k][1])
               for k in DATA)
    assert not np.array_equal(DATA["test"][1], other["test"][1])


def test_shipped_weights():
    w = digits.weights()
    assert list(w) == list(digits.PARAMETERS)
    assert all(a.dtype == np.float32 for a in w.values())
    c1, c2 = digits.CHANNELS
    assert w["conv1.weight"].shape == (c1, 1, 3, 3)
    assert w["conv2.weight"].shape == (c2, c1, 3, 3)
    assert w["fc.weight"].shape == (c2 * 4, 10)
    for name, (x, y) in DATA.items():
        assert digits.accuracy(x, y, w) >= digits.ACCURACY[name] - 0.003, name
    assert digits.ACCURACY["test"] >= 0.96


@pytest.mark.parametrize("fuse", [False, True], ids=["unfused", "fused"])
def test_graph_matches_reference(fuse):
    x, y = DATA["test"]
    g = digits.graph(len(y))
    assert g.name == "digits_cnn" and [t.name for t in g.inputs] == ["x"]
    text = g.mlir()
    for op in ("conv1", "conv2", "bias1", "relu1", "pool1", "pool2", "fc", "softmax"):
        assert f"hpvm.leaf @{op}(" in text
    net = hpvm.compile(g, fuse=fuse)
    out = net(x=x)
    expected = digits.reference(x)
    assert out.shape == (len(y), 10) and out.dtype == np.float32
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-5)
    assert np.array_equal(out.argmax(axis=1), expected.argmax(axis=1))
    assert np.isclose(np.mean(out.argmax(axis=1) == y), digits.accuracy(x, y))


def test_graph_other_batch_and_weights():
    # a batch of 1, and weights given explicitly (freshly initialised ones)
    w = {k: v.astype(np.float32) for k, v in digits.initial(5).items()}
    x = DATA["calibration"][0][:1]
    out = hpvm.compile(digits.graph(1, w))(x)
    np.testing.assert_allclose(out, digits.reference(x, w), rtol=1e-4, atol=1e-5)


def test_train_deterministic_and_learns():
    first = digits.train(seed=3, epochs=1, data=DATA)
    second = digits.train(seed=3, epochs=1, data=DATA)
    assert list(first) == list(digits.PARAMETERS)
    assert all(a.dtype == np.float32 for a in first.values())
    assert all(np.array_equal(first[k], second[k]) for k in first)
    other = digits.train(seed=4, epochs=1, data=DATA)
    assert not np.array_equal(first["conv1.weight"], other["conv1.weight"])
    x, y = DATA["train"]
    before = digits.loss(x, y, digits.initial(3))
    trained = digits.train(seed=3, epochs=2, data=DATA)
    assert digits.loss(x, y, trained) < 0.5 * before
    assert digits.accuracy(*DATA["test"], trained) > 0.7


def test_command_line(tmp_path, capsys):
    out = tmp_path / "w.npz"
    assert digits.main(["--train", str(out), "--epochs", "1"]) == 0
    printed = capsys.readouterr().out
    assert "wrote" in printed and "test" in printed
    with np.load(out) as f:
        assert sorted(f.files) == sorted(digits.PARAMETERS)
        assert all(f[k].dtype == np.float32 for k in f.files)
