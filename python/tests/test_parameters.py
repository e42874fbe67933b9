"""Weights as data: constants of 4 KiB or more travel in a parameter archive beside the
module (never as MLIR text, never as LLVM IR), and come back bit for bit."""

from __future__ import annotations

import os
import struct
import subprocess
import zlib
from pathlib import Path

import numpy as np
import pytest

import hpvm
import hpvm.onnx
from hpvm import tensor as T
from hpvm.compiled import Library
from hpvm.errors import HPVMError
from hpvm.ir import PARAMETER_MIN_BYTES, write_parameter_archive
from hpvm.onnx.examples import lenet
from test_onnx_cnn import _cli


def _read_archive(path):
    """An independent reader of the format (include/HPVM/Transforms/ParameterArchive.h),
    checking every checksum and that no two entries share bytes."""
    data = Path(path).read_bytes()
    assert data[:8] == b"HPVMPRM2"
    count, index_size, index_crc, zero = struct.unpack_from("<QQII", data, 8)
    assert zero == 0
    assert index_crc == zlib.crc32(data[32:32 + index_size], zlib.crc32(data[:24]))
    at, entries, spans = 32, {}, []
    for _ in range(count):
        offset, size, crc, key_size = struct.unpack_from("<QQII", data, at)
        key = data[at + 24:at + 24 + key_size].decode()
        at += 24 + key_size
        at += -at % 8
        assert offset % 64 == 0 and offset >= 32 + index_size
        entries[key] = data[offset:offset + size]
        assert zlib.crc32(entries[key]) == crc, key
        spans.append((offset, offset + size))
    assert at == 32 + index_size
    spans.sort()
    assert all(end <= start for (_, end), (start, _) in zip(spans, spans[1:]))
    return entries


def test_archive_format_round_trips(tmp_path):
    arrays = {"a": np.arange(7, dtype=np.float32), "conv.w": np.ones((2, 3), np.float64),
              "h": np.array([1.5, -2.0], dtype=np.float16),
              "big_endian": np.arange(5, dtype=">i4")}
    write_parameter_archive(tmp_path / "p.params", arrays)
    entries = _read_archive(tmp_path / "p.params")
    assert list(entries) == list(arrays)
    for key, array in arrays.items():
        little = array.astype(array.dtype.newbyteorder("<"))
        assert entries[key] == little.tobytes(), key


def _dense_graph(weights, bias, name="dense"):
    g = T.TensorGraph(name)
    x = g.input("x", (4, weights.shape[0]))
    y = T.relu(T.add(T.matmul(x, g.constant(weights, name="fc.weight")),
                     g.constant(bias, name="fc.bias")))
    g.output(y)
    return g


def _reference(x, weights, bias):
    return np.maximum(x @ weights + bias, 0)


def test_large_constants_leave_the_text():
    rng = np.random.default_rng(1)
    weights = rng.standard_normal((64, 32)).astype(np.float32)  # 8 KiB: to the archive
    bias = rng.standard_normal((1, 32)).astype(np.float32)  # 128 bytes: stays
    g = _dense_graph(weights, bias)
    inline = g.mlir()
    assert "dense_resource" not in inline and "hpvm.parameters" not in inline
    text = g.mlir(parameters="dense.params")
    assert 'module attributes {hpvm.parameters = "dense.params"}' in text
    assert "arith.constant dense_resource<fc_weight> : tensor<64x32xf32>" in text
    assert len(text) < len(inline) - 2 * weights.nbytes + 1024
    parameters = g.parameters()
    assert list(parameters) == ["fc_weight"]
    assert parameters["fc_weight"].tobytes() == weights.tobytes()
    hpvm.verify(text)
    # A splat stays a splat in the text, whatever its size.
    g2 = _dense_graph(np.full((64, 32), 0.5, np.float32), bias)
    assert g2.parameters() == {}


def test_compiled_with_the_archive_matches_numpy():
    rng = np.random.default_rng(2)
    weights = rng.standard_normal((256, 64)).astype(np.float32)
    bias = rng.standard_normal((1, 64)).astype(np.float32)
    x = rng.standard_normal((4, 256)).astype(np.float32)
    g = _dense_graph(weights, bias)
    assert weights.nbytes >= PARAMETER_MIN_BYTES
    for fuse in (False, True):
        got = hpvm.compile(g, fuse=fuse)(x)
        np.testing.assert_allclose(got, _reference(x, weights, bias), rtol=1e-5, atol=1e-5)


def test_the_cache_tells_weights_apart():
    # The same graph text with other weights must not reuse the compiled library.
    rng = np.random.default_rng(3)
    bias = np.zeros((1, 32), np.float32)
    x = rng.standard_normal((4, 64)).astype(np.float32)
    results = []
    for seed in (10, 11):
        weights = np.random.default_rng(seed).standard_normal((64, 32)).astype(np.float32)
        g = _dense_graph(weights, bias)
        got = hpvm.compile(g)(x)
        np.testing.assert_allclose(got, _reference(x, weights, bias), rtol=1e-5, atol=1e-5)
        results.append(got)
    assert not np.array_equal(results[0], results[1])


def test_saved_module_compiles_with_hpvm_cc(tmp_path):
    rng = np.random.default_rng(4)
    weights = rng.standard_normal((128, 32)).astype(np.float32)
    bias = rng.standard_normal((1, 32)).astype(np.float32)
    g = _dense_graph(weights, bias)
    os.makedirs(tmp_path / "model")
    mlir, archive = g.save(tmp_path / "model" / "dense.mlir")
    assert archive == str(tmp_path / "model" / "dense.params")
    assert _read_archive(archive)["fc_weight"] == weights.tobytes()
    hpvm_cc = os.path.join(os.environ["HPVM_HOME"], "bin", "hpvm-cc")
    library = tmp_path / "dense.so"
    # From another folder: the archive is found beside the module.
    subprocess.run([hpvm_cc, "-shared", "-O2", mlir, "-o", library], check=True,
                   cwd=tmp_path)
    x = rng.standard_normal((4, 128)).astype(np.float32)
    got = hpvm.CompiledGraph(g, Library(str(library)))(x)
    np.testing.assert_allclose(got, _reference(x, weights, bias), rtol=1e-5, atol=1e-5)
    # The weights are bytes of the library, not text: the .so holds them verbatim.
    assert weights.tobytes() in library.read_bytes()
    # Without its archive the module does not compile, and says why.
    os.remove(archive)
    result = subprocess.run([hpvm_cc, "-shared", mlir, "-o", tmp_path / "x.so"],
                            capture_output=True, text=True)
    assert result.returncode != 0
    assert "cannot read the parameter archive" in result.stderr
    assert "dense.params" in result.stderr
    # Emitting LLVM IR reads the archive's bytes into the IR (self-contained).
    g.save(tmp_path / "model" / "dense.mlir")
    ll = tmp_path / "dense.ll"
    subprocess.run([hpvm_cc, "--emit=llvm", mlir, "-o", ll], check=True)
    assert "__hpvm_const" not in ll.read_text()


def test_cli_writes_the_archive_beside_the_module(tmp_path):
    model_path = tmp_path / "lenet.onnx"
    model_path.write_bytes(lenet().SerializeToString())
    result = _cli(model_path, "-o", tmp_path / "lenet.mlir")
    assert result.returncode == 0, result.stderr
    text = (tmp_path / "lenet.mlir").read_text()
    assert 'hpvm.parameters = "lenet.params"' in text and "dense_resource<" in text
    entries = _read_archive(tmp_path / "lenet.params")
    assert entries and all(len(b) >= PARAMETER_MIN_BYTES for b in entries.values())
    result = _cli(model_path, "-o", tmp_path / "inline.mlir", "--inline-weights")
    assert result.returncode == 0, result.stderr
    assert "dense_resource" not in (tmp_path / "inline.mlir").read_text()
    assert not (tmp_path / "inline.params").exists()


def test_invalid_graph_is_not_saved(tmp_path):
    g = T.TensorGraph("empty")
    with pytest.raises(HPVMError):
        g.save(tmp_path / "empty.mlir")
    assert not (tmp_path / "empty.mlir").exists()
