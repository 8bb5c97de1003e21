"""Bad input raises the exception of its kind with the library's message, and changes nothing."""

import numpy as np
import pytest

import dyng
from conftest import random_graph

N, M, K = 200, 1000, 3


@pytest.fixture
def g():
    src, dst, w = random_graph(N, M, K, seed=7)
    return dyng.Graph.from_edges(src, dst, w, n=N)


def state(g, results):
    """Everything an update could change."""
    return (g.version, g.m, [a.tobytes() for a in g.to_csr()],
            [(r.graph_version, r.distances.tobytes() if isinstance(r, dyng.SsspResult) else r.path_costs.tobytes())
             for r in results])


def raises(cls, text, f, *a, **kw):
    with pytest.raises(cls) as e:
        f(*a, **kw)
    assert text in str(e.value), str(e.value)
    assert isinstance(e.value, dyng.DyngError)
    return e.value


@pytest.mark.parametrize("bad,text", [
    (np.array([0.5, 1.0]), "has dtype float64; want an array of integers"),
    (np.array([True, False]), "has dtype bool; want an array of integers"),
    (np.array(["a"]), "want an array of integers"),
    (np.zeros((2, 2), dtype=np.int32), "has shape (2, 2); want a 1-D array"),
    (np.array([0, 2**40]), "does not fit the 32-bit integers"),
])
def test_wrong_dtypes_and_shapes(bad, text):
    raises(dyng.InvalidArgument, text, dyng.Graph.from_csr, bad, [0], [1])
    raises(dyng.InvalidArgument, text, dyng.Graph.from_edges, bad, [0, 1], [[1], [1]])


def test_the_library_s_graph_rules():
    raises(dyng.InvalidArgument, "row_ptr is not monotone", dyng.Graph.from_csr, [0, 2, 1, 3], [0, 1, 2], [1, 1, 1])
    raises(dyng.InvalidArgument, "edge 1 has head 7 outside [0, n = 3)", dyng.Graph.from_csr, [0, 1, 2, 2], [0, 7], [1, 1])
    raises(dyng.InvalidArgument, "row_ptr[0] = 1, must be 0", dyng.Graph.from_csr, [1, 2], [0], [1])
    raises(dyng.InvalidArgument, "weights must be integers in [1, 2^31-1]", dyng.Graph.from_edges, [0], [1], [0])
    raises(dyng.InvalidArgument, "edge 0 has source -1 outside [0, n = 2)", dyng.Graph.from_edges, [-1], [1], [1], n=2)
    raises(dyng.InvalidArgument, "want 2 rows (one per edge)", dyng.Graph.from_edges, [0, 1], [1, 0], [[1, 2, 3]])
    raises(dyng.InvalidArgument, "does not fit the 32-bit", dyng.Graph.from_edges, [0], [1], [2**31])
    raises(dyng.InvalidArgument, "want a 1-D or 2-D array", dyng.Graph.from_edges, [0], [1], np.ones((1, 1, 1)))


def test_non_contiguous_arrays_are_read_by_value(seq):
    src, dst, w = random_graph(N, M, K, seed=7)
    wide = np.zeros((M, 2 * K), dtype=np.int64)
    wide[:, ::2] = w
    s2 = np.repeat(src, 2)[::2]
    assert not wide[:, ::2].flags.c_contiguous and not s2.flags.c_contiguous
    a = dyng.Graph.from_edges(s2, dst, wide[:, ::2], n=N)
    b = dyng.Graph.from_edges(src, dst, np.asfortranarray(w), n=N)
    ref = dyng.Graph.from_edges(src.astype(np.int32), dst, w.astype(np.int32), n=N)
    for x in (a, b):
        for u, v in zip(x.to_csr(), ref.to_csr()):
            assert np.array_equal(u, v)


def test_bad_batches_change_nothing(g, seq):
    t = dyng.SsspResult.compute(seq, g, 0, 1)
    m = dyng.MospResult.compute(seq, g, 0)
    before = state(g, [t, m])
    cases = [
        (dyng.Batch(insertions=([0], [N], [[1, 1, 1]])), dyng.InvalidArgument, f"batch insertion 0 has head vertex {N} outside [0, n = {N})"),
        (dyng.Batch(insertions=([-3], [1], [[1, 1, 1]])), dyng.InvalidArgument, "batch insertion 0 has tail vertex -3 outside"),
        (dyng.Batch(deletions=([1, 5], [2, -1])), dyng.InvalidArgument, "batch deletion 1 has head vertex -1 outside"),
        (dyng.Batch(insertions=([0], [1], [[1, 0, 1]])), dyng.InvalidArgument, "has weight 0 for objective 1; weights must be integers in [1, 2^31-1]"),
        (dyng.Batch(insertions=([0], [1], [[1, 2]])), dyng.InvalidArgument, "the batch has 2 weights per insertion but the graph has K = 3 objectives"),
        (dyng.Batch(k=2), dyng.InvalidArgument, "the batch has 2 weights per insertion but the graph has K = 3"),
    ]
    for batch, cls, text in cases:
        raises(cls, text, dyng.update, seq, g, batch, [t, m])
        assert state(g, [t, m]) == before
    raises(dyng.InvalidArgument, "insertions must be a tuple (src, dst, weights)", dyng.Batch, insertions=([0], [1]))
    raises(dyng.InvalidArgument, "1 insertion sources but 2 targets", dyng.Batch, insertions=([0], [1, 2], [[1, 1, 1]]))
    raises(dyng.InvalidArgument, "the insertions carry 3 weights each but k = 2", dyng.Batch, insertions=([0], [1], [[1, 1, 1]]), k=2)


def test_stale_and_misused_results_change_nothing(g, seq):
    t = dyng.SsspResult.compute(seq, g, 0)
    old = t.copy()
    dyng.update(seq, g, dyng.Batch(deletions=([0], [1])), [t])
    before = state(g, [t])
    raises(dyng.StaleResult, "result 1 belongs to version 0 of the graph, which is now at version 1",
           dyng.update, seq, g, dyng.Batch(k=K), [t, old])
    other = dyng.Graph.from_edges([0], [1], [[1, 1, 1]], n=N)
    raises(dyng.StaleResult, "result 0 was computed on another graph", dyng.update, seq, other, dyng.Batch(k=K), [t])
    raises(dyng.InvalidArgument, "results[1] is results[0] again", dyng.update, seq, g, dyng.Batch(k=K), [t, t])
    raises(dyng.InvalidArgument, "results[1] is a int, not a dyng.SsspResult", dyng.update, seq, g, dyng.Batch(k=K), [t, 3])
    assert state(g, [t]) == before


def test_bad_compute_arguments(g, seq):
    raises(dyng.InvalidArgument, f"source {N} is outside [0, n = {N})", dyng.SsspResult.compute, seq, g, N)
    raises(dyng.InvalidArgument, f"source -1 is outside [0, n = {N})", dyng.MospResult.compute, seq, g, -1)
    raises(dyng.InvalidArgument, "objective 3 is outside [0, K = 3)", dyng.SsspResult.compute, seq, g, 0, 3)
    raises(dyng.InvalidArgument, "delta = 0 must be > 0", dyng.SsspResult.compute, seq, g, 0, delta=0)
    raises(dyng.InvalidArgument, 'fallback = "sometimes"', dyng.SsspResult.compute, seq, g, 0, fallback="sometimes")
    raises(dyng.InvalidArgument, "2 values given for K = 3", dyng.MospResult.compute, seq, g, 0, preferences=[1, 2])
    raises(dyng.InvalidArgument, "value 0 < 1", dyng.MospResult.compute, seq, g, 0, preferences=[1, 0, 1])
    raises(dyng.InvalidArgument, "value -4 < 1", dyng.MospResult.compute, seq, g, 0, preferences=[1, -4, 1])
    raises(dyng.InvalidArgument, "lcm exceeds 2^20", dyng.MospResult.compute, seq, g, 0, preferences=[1048576, 3, 1])
    raises(dyng.InvalidArgument, "K = 4 objectives requested; the graph has 3", dyng.MospResult.compute, seq, g, 0, k=4)
    raises(dyng.InvalidArgument, f"target {N} is outside [0, n = {N})", dyng.SsspResult.compute(seq, g, 0).path, N)
    raises(dyng.InvalidArgument, 'backend = "gpu"', dyng.Resources, "gpu")
    raises(dyng.InvalidArgument, 'isolation = "thread"', dyng.Resources, "sequential", isolation="thread")
    raises(dyng.InvalidArgument, "num_threads = 100000000 exceeds the limit", dyng.Resources, "parallel", threads=100_000_000)


def test_bad_adoptions(g, seq):
    t = dyng.SsspResult.compute(seq, g, 0)
    d, p = np.array(t.distances), np.array(t.parents)
    raises(dyng.InvalidArgument, "want an array of integers", dyng.SsspResult.from_arrays, seq, g, 0, 0, d.astype(float), p)
    bad = d.copy()
    reachable = np.flatnonzero((d < dyng.DISTANCE_INF // 2) & (p >= 0))
    bad[reachable[0]] += 1
    e = raises(dyng.InvalidArgument, "", dyng.SsspResult.from_arrays, seq, g, 0, 0, bad, p)
    assert "tree" in str(e)
    raises(dyng.InvalidArgument, "", dyng.SsspResult.from_arrays, seq, g, 0, 0, d[:-1], p[:-1])
    trees = [dyng.SsspResult.compute(seq, g, 0, j) for j in (0, 2)]
    raises(dyng.InvalidArgument, "tree 1 is for objective 2 from source 0; want objective 1", dyng.MospResult.from_trees, seq, g, 0, trees)
    raises(dyng.InvalidArgument, f"distances has shape (2, {N}) but parents (3, {N})", dyng.MospResult.from_arrays, seq, g, 0,
           np.zeros((2, N), dtype=np.int64), np.zeros((3, N), dtype=np.int32))


def test_files(tmp_path):
    raises(dyng.Io, str(tmp_path / "none.mtx"), dyng.Graph.read, tmp_path / "none.mtx")
    (tmp_path / "bad.mtx").write_text("%%MatrixMarket matrix coordinate pattern general\n3 3 2\n1 2\n2 7\n")
    raises(dyng.InvalidArgument, "bad.mtx:4", dyng.Graph.read, tmp_path / "bad.mtx")
    raises(dyng.InvalidArgument, 'format = "xml"', dyng.Graph.read, tmp_path / "bad.mtx", "xml")
    assert issubclass(dyng.Io, OSError) and issubclass(dyng.InvalidArgument, ValueError)
