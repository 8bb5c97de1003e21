"""dyng.dask on a LocalCluster of 2 worker processes (loopback): sharded results equal the
single-process ones; a rejected batch raises on the client and leaves every shard as before; a
worker killed mid-stream is reported and its shard rebuilt, or the error says why it cannot be."""

import logging
import os
import sys
import time
import warnings

import numpy as np
import pytest

import dyng
from conftest import random_batch, random_graph

distributed = pytest.importorskip("distributed")
import cloudpickle  # noqa: E402  (a dependency of distributed)

import dyng.dask  # noqa: E402

# The faults below run on the workers; they travel by value (the workers cannot import this file).
cloudpickle.register_pickle_by_value(sys.modules[__name__])

N, M, K = 3000, 14000, 2
SOURCES = [0, 7, 99, 1234, 2999, 1500]


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                       dashboard_address=None, silence_logs=logging.CRITICAL)
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


def settle(client, n=2, timeout=60.0):
    """Waits until `n` workers are listed, each answers, and the set stays the same for 1 s: a
    worker restarted by its nanny is listed before it can take work, and a killed one may still be
    listed for a moment after it died."""
    deadline = time.monotonic() + timeout
    stable_since, last = None, None
    while time.monotonic() < deadline:
        client.wait_for_workers(n, timeout=max(1.0, deadline - time.monotonic()))
        listed = frozenset(client.scheduler_info(n_workers=-1)["workers"])
        try:
            answered = frozenset(client.run(os.getpid, workers=list(listed)))
        except Exception:  # noqa: BLE001 - a worker that left during the call: look again
            answered = frozenset()
        if len(listed) == n and answered == listed:
            if listed != last:
                stable_since, last = time.monotonic(), listed
            elif time.monotonic() - stable_since >= 1.0:
                return
        else:
            stable_since, last = None, None
        time.sleep(0.1)
    raise AssertionError(f"the cluster did not settle on {n} answering workers in {timeout} s")


@pytest.fixture
def two_workers(client):
    settle(client)
    yield client
    settle(client)


class Reference:
    """The same results in this process."""

    def __init__(self, g, sources, kind="sssp"):
        self.res = dyng.Resources("sequential")
        self.g = g
        make = (lambda s: dyng.SsspResult.compute(self.res, g, s)) if kind == "sssp" else \
            (lambda s: dyng.MospResult.compute(self.res, g, s))
        self.results = {s: make(s) for s in sources}

    def update(self, b):
        dyng.update(self.res, self.g, b, list(self.results.values()))

    def array(self, s, name="distances"):
        a = getattr(self.results[s], name)
        return np.stack(a) if isinstance(a, list) else np.array(a)


def setup(client, kind="sssp", **kw):
    src, dst, w = random_graph(N, M, K, seed=31)
    g = dyng.Graph.from_edges(src, dst, w, n=N)
    trees = dyng.dask.ShardedTrees(client, g, SOURCES, kind=kind, **kw)
    ref = Reference(dyng.Graph.from_edges(src, dst, w, n=N), SOURCES, kind)
    return trees, ref, (src, dst)


def assert_equal(trees, ref, name="distances"):
    got = trees.gather(array=name)
    for i, s in enumerate(trees.sources):
        assert np.array_equal(got[i], ref.array(s, name)), (s, name)


def kill(client, worker):
    """Kills `worker`'s process and waits until the scheduler knows it is gone."""
    try:
        client.run(os._exit, 1, workers=[worker])
    except Exception:  # noqa: BLE001 - the worker's connection closes as it dies
        pass
    for _ in range(600):
        if worker not in client.scheduler_info(n_workers=-1)["workers"]:
            return
        time.sleep(0.05)
    raise AssertionError(f"{worker} is still listed 30 s after it was killed")


def test_sharded_results_equal_single_process(two_workers):
    trees, ref, edges = setup(two_workers)
    assert len({w for w, _ in trees.placement.values()}) == 2
    rng = np.random.default_rng(1)
    for _ in range(4):
        b = random_batch(rng, N, edges, K, 100)
        stats = trees.update(b)
        ref.update(b)
        assert set(stats) == set(SOURCES)
    assert trees.version == 4
    assert_equal(trees, ref)
    assert_equal(trees, ref, "parents")
    assert np.array_equal(trees.distances(99), ref.array(99))
    trees.close()


def test_mosp_shards(two_workers):
    trees, ref, edges = setup(two_workers, kind="mosp")
    rng = np.random.default_rng(2)
    for _ in range(2):
        b = random_batch(rng, N, edges, K, 100)
        trees.update(b)
        ref.update(b)
    for name in ("path_costs", "combined_distances", "distances"):
        assert_equal(trees, ref, name)
    trees.close()


def test_a_graph_read_on_the_workers(two_workers, usroads_mtx):
    trees = dyng.dask.ShardedTrees(two_workers, usroads_mtx, [531, 10, 90000], read_options={"k": 2})
    g = dyng.Graph.read(usroads_mtx, k=2)
    ref = Reference(g, [531, 10, 90000])
    indptr, indices, _ = g.to_csr()
    edges = (np.repeat(np.arange(g.n), np.diff(indptr)), indices)
    b = random_batch(np.random.default_rng(3), g.n, edges, 2, 100)
    trees.update(b)
    ref.update(b)
    assert_equal(trees, ref)
    trees.close()


def test_a_rejected_batch_raises_and_changes_no_shard(two_workers):
    trees, ref, edges = setup(two_workers)
    trees.update(random_batch(np.random.default_rng(4), N, edges, K, 100))
    before = trees.gather()
    with pytest.raises(dyng.InvalidArgument, match=f"batch deletion 0 has tail vertex {N} outside"):
        trees.update(dyng.Batch(deletions=([N], [0])))
    with pytest.raises(dyng.InvalidArgument, match="the batch has 3 weights per insertion but the graph has K = 2"):
        trees.update(dyng.Batch(insertions=([1], [2], [[1, 1, 1]])))
    assert trees.version == 1 and np.array_equal(trees.gather(), before)
    trees.update(dyng.Batch(deletions=([0], [1])))
    assert trees.version == 2
    trees.close()


def fail_next_update():
    import dyng.dask as dd

    real = dd._apply

    def once(shard, batch):
        dd._apply = real
        raise dyng.OutOfMemory("injected: this worker cannot take the batch")

    dd._apply = once


def die_in_next_update():
    import dyng.dask as dd

    def die(shard, batch):
        os._exit(1)

    dd._apply = die


def test_a_batch_one_worker_rejects_is_undone_on_the_others(two_workers):
    trees, ref, edges = setup(two_workers)
    rng = np.random.default_rng(5)
    b1 = random_batch(rng, N, edges, K, 100)
    trees.update(b1)
    ref.update(b1)
    first = next(iter(trees.placement.values()))[0]
    two_workers.run(fail_next_update, workers=[first])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dyng.dask.ShardRebuilt)
        with pytest.raises(dyng.OutOfMemory, match="injected"):
            trees.update(random_batch(rng, N, edges, K, 100))
    assert trees.version == 1
    assert_equal(trees, ref)
    b3 = random_batch(rng, N, edges, K, 100)
    trees.update(b3)
    ref.update(b3)
    assert_equal(trees, ref)
    trees.close()


def test_a_worker_killed_between_batches(two_workers):
    trees, ref, edges = setup(two_workers)
    rng = np.random.default_rng(6)
    for _ in range(2):
        b = random_batch(rng, N, edges, K, 100)
        trees.update(b)
        ref.update(b)
    key, (victim, _) = next(iter(trees.placement.items()))
    kill(two_workers, victim)
    b = random_batch(rng, N, edges, K, 100)
    with pytest.warns(dyng.dask.ShardRebuilt, match="from the graph and the 2 batches applied so far"):
        trees.update(b)
    ref.update(b)
    assert trees.rebuilds and trees.rebuilds[0][:2] == (key, victim)
    assert trees.placement[key][0] != victim
    assert_equal(trees, ref)
    trees.close()


def test_a_worker_killed_during_an_update(two_workers):
    trees, ref, edges = setup(two_workers)
    rng = np.random.default_rng(7)
    b = random_batch(rng, N, edges, K, 100)
    trees.update(b)
    ref.update(b)
    victim = next(iter(trees.placement.values()))[0]
    two_workers.run(die_in_next_update, workers=[victim])
    b = random_batch(rng, N, edges, K, 100)
    with pytest.warns(dyng.dask.ShardRebuilt, match="during an update"):
        stats = trees.update(b)
    ref.update(b)
    assert trees.version == 2 and None in stats.values()
    assert_equal(trees, ref)
    trees.close()


def test_a_shard_that_cannot_be_rebuilt_says_why(two_workers):
    trees, ref, edges = setup(two_workers, keep_graph=False)
    for worker in {w for w, _ in trees.placement.values()}:
        kill(two_workers, worker)
    two_workers.wait_for_workers(1, timeout=60)
    with pytest.raises(dyng.dask.ShardLost, match="keep_graph=False kept no copy"):
        trees.update(random_batch(np.random.default_rng(8), N, edges, K, 10))
