"""Results' arrays are zero-copy and read-only, and keep the state they were taken from."""

import numpy as np
import pytest

import dyng
from conftest import random_batch, random_graph

N, M, K = 3000, 15000, 2


def graph_and_edges(resources=None, seed=3):
    src, dst, w = random_graph(N, M, K, seed=seed)
    return dyng.Graph.from_edges(src, dst, w, n=N, resources=resources), (src, dst)


def base_of(a):
    while isinstance(a, np.ndarray) and a.base is not None:
        a = a.base
    return a


def test_the_base_is_the_snapshot_and_two_reads_share_it(seq):
    g, _ = graph_and_edges()
    t = dyng.SsspResult.compute(seq, g, 0)
    a, b = t.distances, t.distances
    assert type(base_of(a)).__name__ == "_Snapshot"
    assert a.__array_interface__["data"][0] == b.__array_interface__["data"][0]
    assert np.shares_memory(a, b)
    assert a.flags.owndata is False


def test_mosp_arrays_too(seq):
    g, _ = graph_and_edges()
    m = dyng.MospResult.compute(seq, g, 0)
    for get in (lambda: m.combined_distances, lambda: m.combined_parents, lambda: m.path_costs,
                lambda: m.distances[1], lambda: m.parents[0]):
        a, b = get(), get()
        assert np.shares_memory(a, b)
        assert type(base_of(a)).__name__ == "_Snapshot"
    assert m.path_costs.shape == (N, K)


def test_arrays_are_read_only(seq):
    g, _ = graph_and_edges()
    t = dyng.SsspResult.compute(seq, g, 0)
    d = t.distances
    with pytest.raises(ValueError):
        d[0] = 5
    with pytest.raises(ValueError):
        d.setflags(write=True)
    p = dyng.MospResult.compute(seq, g, 0).path_costs
    with pytest.raises(ValueError):
        p[1, 1] = 0


@pytest.mark.parametrize("isolation", ["in-process", "worker"])
def test_an_update_after_taking_an_array_does_not_change_it(isolation):
    res = dyng.Resources("sequential", isolation=isolation)
    g, edges = graph_and_edges(res)
    m = dyng.MospResult.compute(res, g, 0)
    t = dyng.SsspResult.compute(res, g, 0, 1)
    taken = [m.combined_distances, m.path_costs, m.distances[0], m.parents[1], t.distances, t.parents]
    before = [a.copy() for a in taken]
    rng = np.random.default_rng(5)
    changed = False
    for _ in range(3):
        dyng.update(res, g, random_batch(rng, N, edges, K, 200), [m, t])
        changed |= not np.array_equal(m.combined_distances, before[0])
    assert changed, "the batches changed no distance, so the test shows nothing"
    for a, b in zip(taken, before):
        assert np.array_equal(a, b)
    # New reads show the new state: what a recompute gives.
    fresh = dyng.MospResult.compute(res, g, 0)
    assert np.array_equal(m.combined_distances, fresh.combined_distances)
    assert np.array_equal(m.path_costs, fresh.path_costs)


def test_an_update_copies_only_what_is_shared(seq):
    """While nobody holds an array, an update changes it in place; while someone does, it copies."""
    g, edges = graph_and_edges()
    t = dyng.SsspResult.compute(seq, g, 0)
    rng = np.random.default_rng(9)
    held = t.distances
    ptr = held.__array_interface__["data"][0]
    dyng.update(seq, g, random_batch(rng, N, edges, K, 50), [t])
    assert t.distances.__array_interface__["data"][0] != ptr
    del held
    ptr = t.distances.__array_interface__["data"][0]  # the array is dropped at once
    dyng.update(seq, g, random_batch(rng, N, edges, K, 50), [t])
    assert t.distances.__array_interface__["data"][0] == ptr


def test_copy_is_independent(seq):
    g, edges = graph_and_edges()
    t = dyng.SsspResult.compute(seq, g, 0)
    c = t.copy()
    dyng.update(seq, g, random_batch(np.random.default_rng(1), N, edges, K, 300), [t])
    assert c.graph_version == 0 and t.graph_version == 1
    with pytest.raises(dyng.StaleResult):
        dyng.update(seq, g, dyng.Batch(k=K), [c])


@pytest.mark.parametrize("isolation", ["in-process", "worker"])
def test_copy_variants_own_their_memory(isolation):
    res = dyng.Resources("sequential", isolation=isolation)
    g, edges = graph_and_edges(res, seed=4)
    t = dyng.SsspResult.compute(res, g, 0, 1)
    m = dyng.MospResult.compute(res, g, 0, preferences=[1, 2])
    pairs = [(t.distances_copy(), t.distances, np.int64), (t.parents_copy(), t.parents, np.int32),
             (m.distances_copy(1), m.distances[1], np.int64), (m.parents_copy(0), m.parents[0], np.int32),
             (m.distances_copy(), np.stack(m.distances), np.int64), (m.parents_copy(), np.stack(m.parents), np.int32),
             (m.combined_distances_copy(), m.combined_distances, np.int64),
             (m.combined_parents_copy(), m.combined_parents, np.int32), (m.path_costs_copy(), m.path_costs, np.int64)]
    for copy, view, dtype in pairs:
        assert copy.dtype == dtype and copy.shape == view.shape
        assert np.array_equal(copy, view)
        assert copy.flags.writeable and not np.shares_memory(copy, view)
        assert type(base_of(copy)).__name__ != "_Snapshot"
    assert m.distances_copy().shape == (K, N) and m.path_costs_copy().shape == (N, K)
    with pytest.raises(dyng.InvalidArgument, match=r"objective 2 is outside \[0, K = 2\)"):
        m.distances_copy(2)
    kept = [c.copy() for c, _, _ in pairs]
    dyng.update(res, g, random_batch(np.random.default_rng(6), N, edges, K, 200), [t, m])
    for (c, _, _), before in zip(pairs, kept):
        assert np.array_equal(c, before)


def test_a_copy_holds_no_snapshot(seq):
    """Holding only a copy, an update changes the result's memory in place (no copy made)."""
    g, edges = graph_and_edges()
    t = dyng.SsspResult.compute(seq, g, 0)
    kept = t.distances_copy()
    ptr = t.distances.__array_interface__["data"][0]
    dyng.update(seq, g, random_batch(np.random.default_rng(10), N, edges, K, 50), [t])
    assert t.distances.__array_interface__["data"][0] == ptr
    kept[0] = 7  # writable, and nobody else's
    assert t.distances[0] == 0
