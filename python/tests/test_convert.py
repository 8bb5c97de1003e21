"""Graphs from scipy, networkx, files and arrays all describe the same graph; batches and trees
read back what was given."""

import numpy as np
import pytest

import dyng
from conftest import random_graph

scipy_sparse = pytest.importorskip("scipy.sparse")
nx = pytest.importorskip("networkx")

N, M, K = 50, 300, 2


def csr_equal(a, b):
    return all(np.array_equal(x, y) for x, y in zip(a.to_csr(), b.to_csr()))


@pytest.fixture
def edges():
    src, dst, w = random_graph(N, M, K, seed=21)
    # One copy of each (u, v): scipy would sum duplicates on conversion.
    _, keep = np.unique(src * N + dst, return_index=True)
    keep.sort()
    return src[keep], dst[keep], w[keep]


def test_from_scipy_one_and_k_matrices(edges):
    src, dst, w = edges
    ref = dyng.Graph.from_edges(src, dst, w, n=N)
    mats = [scipy_sparse.csr_matrix((w[:, j].astype(float), (src, dst)), shape=(N, N)) for j in range(K)]
    # csr_matrix sorts each row by column; so does the reference once its rows are sorted.
    order = np.lexsort((dst, src))
    ref = dyng.Graph.from_edges(src[order], dst[order], w[order], n=N)
    assert csr_equal(dyng.Graph.from_scipy(mats), ref)
    one = dyng.Graph.from_scipy(mats[0].tocoo())
    assert one.k == 1 and one.m == len(src)
    with pytest.raises(dyng.InvalidArgument, match="is not an integer"):
        dyng.Graph.from_scipy(mats[0] * 0.5)
    other = scipy_sparse.csr_matrix((w[1:, 1], (src[1:], dst[1:])), shape=(N, N))
    with pytest.raises(dyng.InvalidArgument, match="another sparsity structure"):
        dyng.Graph.from_scipy([mats[0], other])
    with pytest.raises(dyng.InvalidArgument, match="square"):
        dyng.Graph.from_scipy(scipy_sparse.csr_matrix(np.ones((2, 3))))


def test_from_networkx(edges):
    src, dst, w = edges
    G = nx.DiGraph()
    G.add_nodes_from(range(N))
    for u, v, row in zip(src, dst, w):
        G.add_edge(int(u), int(v), length=int(row[0]), time=int(row[1]))
    g = dyng.Graph.from_networkx(G, ["length", "time"])
    # networkx keeps each node's edges in insertion order, grouped by tail.
    assert csr_equal(g, dyng.Graph.from_edges(src, dst, w, n=N))
    U = nx.Graph()
    U.add_edge("a", "b", length=3)
    u = dyng.Graph.from_networkx(U, "length")
    assert (u.n, u.m, u.k) == (2, 2, 1)
    U.add_edge("b", "b", length=4)
    assert dyng.Graph.from_networkx(U, "length").m == 3
    U.add_edge("b", "c")
    with pytest.raises(dyng.InvalidArgument, match=r"edge \('b', 'c'\) has no attribute 'length'"):
        dyng.Graph.from_networkx(U, "length")


def test_read_every_format(tmp_path, edges, seq):
    src, dst, w = edges
    # DIMACS, one file per objective.
    files = []
    for j in range(K):
        p = tmp_path / f"g{j}.gr"
        lines = [f"p sp {N} {len(src)}"] + [f"a {u + 1} {v + 1} {x}" for u, v, x in zip(src, dst, w[:, j])]
        p.write_text("\n".join(lines) + "\n")
        files.append(p)
    d = dyng.Graph.read(files)
    assert d.k == K and d.m == len(src)
    # CSR text written from that graph reads back as it.
    indptr, indices, weights = d.to_csr()
    (tmp_path / "cRowPtr.txt").write_text(" ".join(map(str, indptr)) + "\n")
    (tmp_path / "cColInd.txt").write_text(" ".join(map(str, indices)) + "\n")
    (tmp_path / "cValues.txt").write_text("".join(" ".join(map(str, r)) + "\n" for r in weights))
    assert csr_equal(dyng.Graph.read(tmp_path / "c"), d)
    # Matrix Market, weights kept from the file for objective 0.
    mtx = tmp_path / "g.mtx"
    mtx.write_text("%%MatrixMarket matrix coordinate integer general\n"
                   f"{N} {N} {len(src)}\n" + "".join(f"{u + 1} {v + 1} {x}\n" for u, v, x in zip(src, dst, w[:, 0])))
    kept = dyng.Graph.read(mtx, keep_weights=True)
    drawn = dyng.Graph.read(mtx, k=3, weight_range=(5, 9), seed=1)
    assert kept.k == 1 and drawn.k == 3
    kw = kept.to_csr()[2][:, 0]
    assert sorted(kw.tolist()) == sorted(w[src != dst, 0].tolist())
    dw = drawn.to_csr()[2]
    assert dw.min() >= 5 and dw.max() <= 9
    with pytest.raises(dyng.InvalidArgument, match="zero_to_one applies"):
        dyng.Graph.read(mtx, zero_to_one=True)


def test_batches_read_back(tmp_path):
    b = dyng.Batch(insertions=(np.array([1, 2], np.int16), [3, 4], [[5, 6], [7, 8]]), deletions=([0], [9]))
    s, d, w = b.insertions
    assert s.dtype == np.int32 and w.shape == (2, 2) and w.tolist() == [[5, 6], [7, 8]]
    assert [a.tolist() for a in b.deletions] == [[0], [9]]
    assert (len(b), b.k, b.num_insertions, b.num_deletions) == (3, 2, 2, 1)
    assert dyng.Batch(deletions=([1], [2])).k is None
    (tmp_path / "insert.txt").write_text("1 3 5 6\n2 4 7 8\n")
    (tmp_path / "delete.txt").write_text("0 9\n")
    g = dyng.Graph.from_edges([0], [9], [[1, 1]], n=10)
    r = dyng.Batch.read(tmp_path, g)
    assert [a.tolist() for a in r.insertions] == [a.tolist() for a in b.insertions]
    with pytest.raises(dyng.InvalidArgument, match="insert.txt:1"):
        (tmp_path / "insert.txt").write_text("1 30 5 6\n")
        dyng.Batch.read(tmp_path, g)


def test_read_tree(tmp_path, seq):
    src, dst, w = random_graph(N, M, 1, seed=2)
    g = dyng.Graph.from_edges(src, dst, w, n=N)
    t = dyng.SsspResult.compute(seq, g, 0)
    inf = dyng.DISTANCE_INF // 2
    (tmp_path / "d.txt").write_text("".join(f"{v} {'INF' if x >= inf else x}\n" for v, x in enumerate(t.distances)))
    (tmp_path / "p.txt").write_text("".join(f"{v} {x}\n" for v, x in enumerate(t.parents)))
    d, p = dyng.read_tree(tmp_path / "d.txt", tmp_path / "p.txt", N)
    assert np.array_equal(d, t.distances) and np.array_equal(p, t.parents)
    with pytest.raises(dyng.InvalidArgument, match="lists"):
        dyng.read_tree(tmp_path / "d.txt", tmp_path / "p.txt", N + 1)
