"""The GIL is released while dyng computes, reads and updates, so other Python threads run, and
concurrent calls on one graph are safe.

Whether a call releases the GIL is seen without a clock: with a switch interval of 100 s no
thread is made to give up the GIL, so a second thread (which gives it up after each step) only
advances while the first is inside a call that released it.
"""

import sys
import threading
import time

import numpy as np
import pytest

import dyng
from conftest import random_batch


def steps_of_another_thread_during(f):
    ticks, stop, started = [0], threading.Event(), threading.Event()

    def spin():
        started.set()
        while not stop.is_set():
            ticks[0] += 1
            time.sleep(0)  # gives up the GIL at every step

    # The interval is set before the thread starts: a wait for the GIL begun under the old one
    # (5 ms) could still end in a forced switch during f().
    old = sys.getswitchinterval()
    sys.setswitchinterval(100.0)
    th = threading.Thread(target=spin)
    try:
        th.start()
        started.wait()
        before = ticks[0]
        f()
        during = ticks[0] - before
    finally:
        sys.setswitchinterval(old)
        stop.set()
        if th.is_alive():
            th.join()
    return during


def busy_python():
    x = 0
    for i in range(3_000_000):
        x += i
    return x


def test_the_method_sees_a_call_that_keeps_the_gil():
    assert steps_of_another_thread_during(busy_python) == 0


@pytest.fixture(scope="module")
def big(usroads_mtx):
    g = dyng.Graph.read(usroads_mtx, k=2)
    return g


def test_computes_release_the_gil(big, par, seq):
    assert steps_of_another_thread_during(lambda: dyng.SsspResult.compute(seq, big, 531)) > 0
    assert steps_of_another_thread_during(lambda: dyng.MospResult.compute(par, big, 531)) > 0


def test_reading_and_building_release_the_gil(usroads_mtx):
    g = [None]
    assert steps_of_another_thread_during(lambda: g.__setitem__(0, dyng.Graph.read(usroads_mtx, k=2))) > 0
    indptr, indices, w = g[0].to_csr()
    assert steps_of_another_thread_during(lambda: dyng.Graph.from_csr(indptr, indices, w)) > 0


def test_updates_release_the_gil(usroads_mtx, seq):
    g = dyng.Graph.read(usroads_mtx, k=2)
    m = dyng.MospResult.compute(seq, g, 531)
    indptr, indices, _ = g.to_csr()
    src = np.repeat(np.arange(g.n), np.diff(indptr))
    batch = random_batch(np.random.default_rng(2), g.n, (src, indices), 2, 10_000)
    assert steps_of_another_thread_during(lambda: dyng.update(seq, g, batch, [m])) > 0


def test_two_threads_computing_on_one_graph(big, seq, par):
    sources = [0, 531, 7000, 100_000]
    want = {s: np.array(dyng.SsspResult.compute(seq, big, s).distances) for s in sources}
    got, errors = {}, []

    def work(res, mine):
        try:
            for s in mine:
                got[(res.backend, s)] = dyng.SsspResult.compute(res, big, s).distances
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(r, sources)) for r in (seq, par)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for (backend, s), d in got.items():
        assert np.array_equal(d, want[s]), (backend, s)


def test_an_update_among_computes(usroads_mtx, seq):
    """Computes running while another thread updates the graph see one state or the other."""
    g = dyng.Graph.read(usroads_mtx, k=1)
    before = np.array(dyng.SsspResult.compute(seq, g, 531).distances)
    indptr, indices, _ = g.to_csr()
    src = np.repeat(np.arange(g.n), np.diff(indptr))
    rng = np.random.default_rng(4)
    batches = [random_batch(rng, g.n, (src, indices), 1, 2000) for _ in range(3)]
    seen, errors = [], []

    def computes():
        try:
            for _ in range(6):
                t = dyng.SsspResult.compute(seq, g, 531)
                seen.append((t.graph_version, np.array(t.distances)))
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    def updates():
        try:
            for b in batches:
                dyng.update(seq, g, b, [])
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=computes), threading.Thread(target=updates)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    # The state of each version, recomputed alone.
    replay = dyng.Graph.read(usroads_mtx, k=1)
    states = {0: before}
    for v, b in enumerate(batches, start=1):
        dyng.update(seq, replay, b, [])
        states[v] = np.array(dyng.SsspResult.compute(seq, replay, 531).distances)
    for version, d in seen:
        assert np.array_equal(d, states[version]), version


def test_two_computes_on_one_graph_overlap(big):
    """Two threads computing on one graph at the same time: with a switch interval of 100 s the
    second thread runs only while the first has released the GIL, so a compute that the second
    starts and finishes while the first's is still running shows the two side by side. The first
    runs a MOSP compute (two trees and their combination), the second one tree: a few tries allow
    for the host's scheduling."""
    res_a, res_b = dyng.Resources("sequential"), dyng.Resources("sequential")
    old = sys.getswitchinterval()
    overlapped = []
    try:
        for _ in range(5):
            started, a_done, b_saw = threading.Event(), [False], []

            def a():
                sys.setswitchinterval(100.0)
                started.set()
                dyng.MospResult.compute(res_a, big, 531)
                a_done[0] = True

            def b():
                started.wait()
                assert not a_done[0]
                dyng.SsspResult.compute(res_b, big, 7000)
                b_saw.append(a_done[0])

            threads = [threading.Thread(target=b), threading.Thread(target=a)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            sys.setswitchinterval(old)
            overlapped.append(b_saw == [False])
            if overlapped[-1]:
                break
    finally:
        sys.setswitchinterval(old)
    assert any(overlapped), f"no try ran the two computes side by side: {overlapped}"
