"""Calls of one compiled graph from several Python threads that share a read-only input:
8 threads x 200 calls, each thread with its own output, every result checked. The calls run
at once (ctypes releases the GIL; compiled._Admission admits calls that do not conflict):
each tracks the shared input for itself, and the runtime shares it between the threads that
hold it (docs/Runtime.md, "Objects shared by threads"). Calls that write an array another
call passes wait for each other."""

import threading

import numpy as np

import hpvm
from hpvm.compiled import _conflict

from test_graph import vector_add_module

THREADS = 8
CALLS = 200


def test_eight_threads_share_a_read_only_input():
    library = hpvm.compile(vector_add_module("shared_vadd"))
    n = 200_000
    shared = np.arange(n, dtype=np.float32) * 0.5  # read by every call of every thread
    start = threading.Barrier(THREADS)
    errors, wrong = [], [0] * THREADS

    def launcher(index):
        try:
            b = np.full(n, float(index), np.float32)
            c = np.empty(n, np.float32)
            start.wait()
            for call in range(CALLS):
                b[0] = call
                library.vadd(shared, b, c, n)
                wrong[index] += int(np.count_nonzero(c != shared + b))
        except Exception as error:  # reported below, with the thread
            errors.append((index, error))

    threads = [threading.Thread(target=launcher, args=(i,)) for i in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    assert wrong == [0] * THREADS
    np.testing.assert_array_equal(shared, np.arange(n, dtype=np.float32) * 0.5)
    # The calls ran at once (they were serialized by one lock per library).
    assert library.calls.peak > 1


def test_which_calls_wait_for_each_other():
    a = np.zeros(16, np.float32)
    other = np.zeros(16, np.float32)
    # The same array read by both: at once. Written by either: one after the other.
    assert not _conflict([(a, False)], [(a, False)])
    assert _conflict([(a, True)], [(a, False)])
    assert _conflict([(a, False)], [(a, True)])
    # Overlapping views that are not the same range: the runtime tracks one range per
    # object, so they wait even when both only read.
    assert _conflict([(a[:8], False)], [(a[4:12], False)])
    assert not _conflict([(a[:8], False)], [(a[8:], True)])
    assert not _conflict([(a, True)], [(other, True)])


def test_a_graph_that_writes_its_input_is_not_read_only():
    m = vector_add_module("written_vadd")
    checks = m.call_checks("vadd")
    assert checks.read_only == {0, 1}  # a and b are "in"; c is "out"
