"""The compile cache and knob files against hostile file systems: a cached
library cut short, edited, replaced or missing its digest is built again (never loaded:
that crashed with SIGBUS or ran the wrong code); builds of one graph from several
processes compile it once and leave one whole entry; a build killed half-way leaves no
entry; cache folders with spaces and quotes in their path take knobs; a cache folder
that cannot be made is an HPVMError."""

import hashlib
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

import hpvm
from hpvm import compiled

from test_knobs import X, graph as knob_graph, sampled_filter
from test_tensor import conv_ref

HERE = Path(__file__).parent

GRAPH = """
import numpy as np, hpvm
from hpvm import tensor as T

def scaled(factor):
    g = hpvm.TensorGraph("cached")
    x = g.input("x", (3, 4))
    g.output(T.relu(T.multiply(x, g.constant(np.full((3, 4), factor, np.float32)))))
    return g

X = np.arange(12, dtype=np.float32).reshape(3, 4) - 5
"""


def child(cache: Path, body: str, check: bool = True) -> subprocess.CompletedProcess:
    """`body` run by a child Python with HPVM_CACHE_DIR=cache (a library loaded there is
    never corrupted under this process's feet)."""
    script = f"import sys\nsys.path.insert(0, {str(HERE)!r})\n" + GRAPH + textwrap.dedent(body)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            env=dict(os.environ, HPVM_CACHE_DIR=str(cache)), timeout=300)
    if check:
        assert result.returncode == 0, (f"exit status {result.returncode}: "
                                        f"{result.stderr[-3000:]}")
    return result


RUN = """
f = hpvm.compile(scaled(2.0))
out = f(X)
assert np.array_equal(out, np.maximum(X * 2, 0)), out
print(f.path)
"""


def entry(cache: Path) -> Path:
    (library,) = [p for p in cache.glob("cached-*.so")]
    return library


def digest_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def assert_intact(library: Path) -> None:
    text = Path(f"{library}.sha256").read_text()
    assert text == f"{digest_of(library)}  {library.name}\n"
    assert compiled.cache_entry_intact(str(library))


def test_cached_libraries_are_checked_before_they_are_loaded(tmp_path):
    cache = tmp_path / "cache"
    path = Path(child(cache, RUN).stdout.strip())
    assert path == entry(cache)
    assert_intact(path)
    original = path.stat().st_ino

    # Used as it is while intact: not built again.
    child(cache, RUN)
    assert path.stat().st_ino == original

    def corrupt_and_rerun(damage):
        damage(path)
        assert not compiled.cache_entry_intact(str(path))
        before = path.stat().st_ino if path.exists() else None
        result = child(cache, RUN, check=False)
        assert result.returncode == 0, (damage.__name__, result.returncode, result.stderr[-2000:])
        assert path.stat().st_ino != before, damage.__name__  # built again
        assert_intact(path)

    def truncate(p):  # in place, as a full disk or a killed copy leaves it
        size = p.stat().st_size
        with open(p, "r+b") as stream:
            stream.truncate(size // 3)

    def flip_a_byte(p):
        data = bytearray(p.read_bytes())
        data[len(data) // 2] ^= 0x40
        with open(p, "r+b") as stream:
            stream.write(data)

    def replace_with_another_library(p):
        other = Path(child(tmp_path / "other", """
            f = hpvm.compile(scaled(-3.0))
            print(f.path)
        """).stdout.strip())
        p.write_bytes(other.read_bytes())  # same function and signature, other code

    def garble_the_digest(p):
        Path(f"{p}.sha256").write_text("not a digest\n")

    def remove_the_digest(p):
        Path(f"{p}.sha256").unlink()

    def remove_the_library(p):
        p.unlink()

    for damage in (truncate, flip_a_byte, replace_with_another_library, garble_the_digest,
                   remove_the_digest, remove_the_library):
        corrupt_and_rerun(damage)


def test_concurrent_builds_compile_once_and_leave_one_entry(tmp_path):
    """Four processes build the same new graph at once: one compiles, the others wait for
    its entry and load it; no temporary file is left."""
    cache = tmp_path / "cache"
    go = tmp_path / "go"
    body = f"""
        import os, time
        from hpvm import toolchain
        real = toolchain.compile_shared
        def counted(*args, **kwargs):
            print("compiled", flush=True)
            return real(*args, **kwargs)
        toolchain.compile_shared = counted
        while not os.path.exists({str(go)!r}):
            time.sleep(0.01)
        f = hpvm.compile(scaled(5.0))
        assert np.array_equal(f(X), np.maximum(X * 5, 0))
        print("ran")
    """
    script = f"import sys\nsys.path.insert(0, {str(HERE)!r})\n" + GRAPH + textwrap.dedent(body)
    env = dict(os.environ, HPVM_CACHE_DIR=str(cache))
    processes = [subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True, env=env)
                 for _ in range(4)]
    time.sleep(1.0)  # all of them imported hpvm and wait
    go.write_text("")
    outputs = [p.communicate(timeout=300) for p in processes]
    for process, (out, err) in zip(processes, outputs):
        assert process.returncode == 0, err[-2000:]
        assert out.splitlines()[-1] == "ran"
    assert sum(out.count("compiled") for out, _ in outputs) == 1
    library = entry(cache)
    assert_intact(library)
    assert not list(cache.glob("*.tmp"))


def test_a_build_killed_half_way_leaves_no_entry(tmp_path):
    cache = tmp_path / "cache"
    killed = child(cache, """
        import os, signal
        from hpvm import toolchain
        def dies(text, output, *args, **kwargs):
            with open(output, "wb") as stream:
                stream.write(b"\\x7fELF half a library")
            os.kill(os.getpid(), signal.SIGKILL)
        toolchain.compile_shared = dies
        hpvm.compile(scaled(2.0))
    """, check=False)
    assert killed.returncode == -9
    assert not list(cache.glob("cached-*.so"))
    assert len(list(cache.glob("*.tmp"))) == 1  # what the dead build wrote
    path = Path(child(cache, RUN).stdout.strip())
    assert_intact(path)
    assert not list(cache.glob("*.tmp"))  # the dead build's file is cleaned up


@pytest.mark.parametrize("folder", ["cache with spaces", "it's {braced}", 'a "quoted" one'])
def test_knobs_work_from_cache_folders_with_spaces_and_quotes(tmp_path, monkeypatch, folder):
    monkeypatch.setenv("HPVM_CACHE_DIR", str(tmp_path / folder))
    knobs = {"knobs": [{"node": "conv", "knob": "sample_filter", "rate": 2, "offset": 0}]}
    out = hpvm.compile(knob_graph(), knobs=knobs)(X)
    from test_knobs import W, B
    expected = np.maximum(conv_ref(X, sampled_filter(W, 2, 0), (1, 1), (1, 1)) + B, 0)
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4)


def test_a_path_with_both_quotes_is_an_error():
    with pytest.raises(hpvm.HPVMError, match="holds both kinds of quote"):
        compiled.pass_option_value("/tmp/it's \"x\"/k.json", "the knob file's path")


def test_a_cache_folder_that_cannot_be_made_is_an_error(tmp_path, monkeypatch):
    regular = tmp_path / "file"
    regular.write_text("not a folder")
    for where in (regular / "cache", regular):
        monkeypatch.setenv("HPVM_CACHE_DIR", str(where))
        with pytest.raises(hpvm.HPVMError) as error:
            hpvm.compile(knob_graph())
        assert f"the cache folder '{where}' (HPVM_CACHE_DIR) cannot be made" in str(error.value)
        assert "set HPVM_CACHE_DIR to another" in str(error.value)


def test_a_damaged_knob_file_is_written_again(tmp_path, monkeypatch):
    """Knob files are named by their content; one that no longer holds it (cut short) would
    give the library other knobs than asked for."""
    monkeypatch.setenv("HPVM_CACHE_DIR", str(tmp_path))
    knobs = {"knobs": [{"node": "conv", "knob": "exact"}]}
    path = Path(compiled.knob_file(knobs))
    content = path.read_text()
    path.write_text(content[:10])
    assert Path(compiled.knob_file(knobs)) == path
    assert path.read_text() == content


def fake_entry(folder: Path, name: str, size: int, used: float) -> None:
    """A cache entry of `size` bytes last used at `used` (seconds since the epoch)."""
    library = folder / f"{name}.so"
    library.write_bytes(b"\0" * size)
    digest = folder / f"{name}.so.sha256"
    digest.write_text(f"{compiled.file_digest(library)}  {library.name}\n")
    (folder / f"{name}.so.lock").write_bytes(b"")
    os.utime(digest, (used, used))


def test_the_cache_evicts_least_recently_used_entries_past_its_bound(tmp_path):
    now = time.time()
    for age, name in ((4000, "oldest"), (3000, "older"), (2000, "old"), (5, "recent")):
        fake_entry(tmp_path, name, 1000, now - age)
    (tmp_path / "knobs-x.json").write_text("{}")  # not an entry: kept
    freed = compiled.bound_cache_size(tmp_path, 2500)
    assert 2000 < freed < 2200  # two libraries and their digests
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == ["knobs-x.json", "old.so", "old.so.lock", "old.so.sha256",
                    "recent.so", "recent.so.lock", "recent.so.sha256"], left
    # An entry used within the last minute is kept even past the bound.
    assert 1000 < compiled.bound_cache_size(tmp_path, 10) < 1100
    assert (tmp_path / "recent.so").exists() and not (tmp_path / "old.so").exists()
    # No bound: nothing evicted.
    fake_entry(tmp_path, "ancient", 1000, now - 9000)
    assert compiled.bound_cache_size(tmp_path, 0) == 0


def test_a_cache_hit_counts_as_a_use(tmp_path, monkeypatch):
    monkeypatch.setenv("HPVM_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("HPVM_CACHE_MAX_BYTES", "0")
    first = child(tmp_path, RUN).stdout.strip()
    old = time.time() - 4000
    os.utime(f"{first}.sha256", (old, old))
    assert child(tmp_path, RUN).stdout.strip() == first
    assert os.stat(f"{first}.sha256").st_mtime > old + 3000
    # Past the bound, the one entry (just used) stays; a stale one would go.
    assert compiled.bound_cache_size(tmp_path, 1) == 0
    os.utime(f"{first}.sha256", (old, old))
    assert compiled.bound_cache_size(tmp_path, 1) > 0
    assert not os.path.exists(first) and not os.path.exists(f"{first}.sha256")


@pytest.mark.parametrize("text, expected", [("", 10 << 30), ("0", 0), ("512", 512),
                                            ("3M", 3 << 20), ("2g", 2 << 30)])
def test_the_cache_bound_is_read_from_the_environment(monkeypatch, text, expected):
    monkeypatch.setenv("HPVM_CACHE_MAX_BYTES", text)
    assert compiled.cache_max_bytes() == expected


@pytest.mark.parametrize("text", ["-1", "1.5G", "ten", "4T"])
def test_a_malformed_cache_bound_is_an_error(monkeypatch, text):
    monkeypatch.setenv("HPVM_CACHE_MAX_BYTES", text)
    with pytest.raises(hpvm.HPVMError, match="HPVM_CACHE_MAX_BYTES: expected a number"):
        compiled.cache_max_bytes()
