"""hpvm.approx.digits: the digits CNN (scikit-learn's bundled 8x8 digits upsampled to 16x16,
trained in NumPy): the upsampling, the data split, the shipped weights' accuracy, the HPVM graph's exact inference against the
NumPy reference (unfused and fused), and the training's determinism."""

import numpy as np
import pytest

import hpvm
from hpvm.approx import digits

DATA = digits.load_data()


def test_upsample():
    # the documented formula, element by element (half-pixel centres, clamped at the edges)
    rng = np.random.default_rng(0)
    image = rng.random((8, 6))
    out = digits.upsample(image)
    assert out.shape == (16, 12) and out.dtype == np.float64

    def axis(n, i):
        s = min(max((i + 0.5) / 2 - 0.5, 0.0), n - 1.0)
        lo = int(np.floor(s))
        hi = min(lo + 1, n - 1)
        return lo, hi, s - lo

    expected = np.empty((16, 12))
    for i in range(16):
        r0, r1, fr = axis(8, i)
        for j in range(12):
            c0, c1, fc = axis(6, j)
            top = (1 - fc) * image[r0, c0] + fc * image[r0, c1]
            bottom = (1 - fc) * image[r1, c0] + fc * image[r1, c1]
            expected[i, j] = (1 - fr) * top + fr * bottom
    np.testing.assert_allclose(out, expected, rtol=0, atol=1e-15)
    # the 0.75 / 0.25 weights of the docstring, and leading axes are kept
    row = np.array([[0.0, 4.0, 8.0]])
    np.testing.assert_array_equal(digits.upsample(row)[0], [0.0, 1.0, 3.0, 5.0, 7.0, 8.0])
    batch = rng.random((3, 2, 8, 8))
    assert np.array_equal(digits.upsample(batch)[2, 1], digits.upsample(batch[2, 1]))
    assert np.array_equal(digits.upsample(np.full((8, 8), 0.5)), np.full((16, 16), 0.5))


def test_load_data_split():
    sizes = {name: len(y) for name, (_, y) in DATA.items()}
    assert sizes == {"train": 1077, "calibration": 360, "test": 360}
    for x, y in DATA.values():
        assert x.dtype == np.float32 and x.shape == (len(y), 1, 16, 16)
        assert y.dtype == np.int64 and set(np.unique(y)) <= set(range(10))
        assert x.min() >= 0.0 and x.max() <= 1.0
    every = np.concatenate([x for x, _ in DATA.values()])
    assert every.max() == 1.0  # a 2x2 patch of pixels 16 / 16
    # the split is a permutation of all the images, upsampled
    from sklearn.datasets import load_digits
    whole = digits.upsample(load_digits().images / 16.0).astype(np.float32)
    assert np.array_equal(sorted(map(bytes, every.reshape(-1, 256))),
                          sorted(map(bytes, whole.reshape(-1, 256))))
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
    assert (c1, c2) == (32, 64)
    assert w["conv1.weight"].shape == (c1, 1, 5, 5) and w["conv1.bias"].shape == (c1,)
    assert w["conv2.weight"].shape == (c2, c1, 5, 5) and w["conv2.bias"].shape == (c2,)
    assert w["fc.weight"].shape == (c2 * 4 * 4, 10) and w["fc.bias"].shape == (10,)
    for name, (x, y) in DATA.items():
        assert digits.accuracy(x, y, w) >= digits.ACCURACY[name] - 0.003, name
    assert digits.ACCURACY["test"] >= 0.98


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


# The training tests: one epoch on the first 256 train images, batches of 16 (16 steps).
SMALL = dict(DATA, train=(DATA["train"][0][:256], DATA["train"][1][:256]))


def test_train_deterministic_and_learns():
    first = digits.train(seed=3, epochs=1, batch=16, data=SMALL)
    second = digits.train(seed=3, epochs=1, batch=16, data=SMALL)
    assert list(first) == list(digits.PARAMETERS)
    assert all(a.dtype == np.float32 for a in first.values())
    assert first["conv1.weight"].shape == (32, 1, 5, 5)
    assert first["fc.weight"].shape == (1024, 10)
    assert all(np.array_equal(first[k], second[k]) for k in first)
    other = digits.train(seed=4, epochs=1, batch=16, data=SMALL)
    assert not np.array_equal(first["conv1.weight"], other["conv1.weight"])
    x, y = SMALL["train"]
    before = digits.loss(x, y, digits.initial(3))
    assert digits.loss(x, y, first) < 0.8 * before
    assert digits.accuracy(*DATA["test"], first) > 0.4  # chance: 0.1


def test_command_line(tmp_path, capsys):
    out = tmp_path / "w.npz"
    assert digits.main(["--train", str(out), "--epochs", "1", "--train-images", "64"]) == 0
    printed = capsys.readouterr().out
    assert "wrote" in printed and "test" in printed
    with np.load(out) as f:
        assert sorted(f.files) == sorted(digits.PARAMETERS)
        assert all(f[k].dtype == np.float32 for k in f.files)
        assert f["conv2.weight"].shape == (64, 32, 5, 5)
