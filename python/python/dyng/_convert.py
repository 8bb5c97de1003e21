"""Arrays of scipy.sparse and networkx graphs, for `Graph.from_scipy` and `Graph.from_networkx`."""

import numpy as np

from ._errors import InvalidArgument


def _integral(values, what):
    """`values` as int64, refusing values that are not integers."""
    a = np.asarray(values)
    if a.dtype.kind in "iu":
        return a
    if a.dtype.kind == "f":
        bad = np.flatnonzero(~np.isfinite(a) | (a != np.round(a)))
        if bad.size:
            i = int(bad[0])
            raise InvalidArgument(f"dyng: {what}[{i}] = {a[i]!r} is not an integer; dyng's weights are integers")
        return a.astype(np.int64)
    raise InvalidArgument(f"dyng: {what} has dtype {a.dtype}; want integer weights")


def scipy_arrays(matrices):
    """(indptr, indices, weights (m, K)) of one scipy.sparse matrix or a list of K of them."""
    one = hasattr(matrices, "tocsr")
    ms = [matrices] if one else list(matrices)
    if not ms:
        raise InvalidArgument("dyng: from_scipy: no matrix given")
    csrs = []
    for j, m in enumerate(ms):
        if not hasattr(m, "tocsr"):
            raise InvalidArgument(f"dyng: from_scipy: matrices[{j}] is a {type(m).__name__}, not a scipy.sparse matrix")
        c = m.tocsr()
        if c.shape[0] != c.shape[1]:
            raise InvalidArgument(f"dyng: from_scipy: matrices[{j}] has shape {c.shape}; an adjacency matrix is square")
        csrs.append(c)
    first = csrs[0]
    for j, c in enumerate(csrs[1:], start=1):
        if c.shape != first.shape or not (np.array_equal(c.indptr, first.indptr) and np.array_equal(c.indices, first.indices)):
            raise InvalidArgument(
                f"dyng: from_scipy: matrices[{j}] has another sparsity structure than matrices[0]; "
                "the K matrices must hold the same entries (edges) in the same order"
            )
    name = "data" if one else "matrices[{}].data"
    weights = np.column_stack([_integral(c.data, name.format(j)) for j, c in enumerate(csrs)])
    return first.indptr, first.indices, weights.reshape(first.nnz, len(csrs))


def networkx_edges(G, weights, nodelist=None):
    """(src, dst, weights (m, K), n) of a networkx graph, vertex i being nodelist[i]; an
    undirected edge gives both directions, an undirected self-loop one edge."""
    names = [weights] if isinstance(weights, str) else list(weights)
    if not names:
        raise InvalidArgument("dyng: from_networkx: weights names no edge attribute")
    nodes = list(G) if nodelist is None else list(nodelist)
    index = {v: i for i, v in enumerate(nodes)}
    if len(index) != len(nodes):
        raise InvalidArgument("dyng: from_networkx: nodelist lists a node twice")
    src, dst, w = [], [], []
    directed = G.is_directed()
    for e in G.edges(data=True):
        u, v, data = e
        for end in (u, v):
            if end not in index:
                raise InvalidArgument(f"dyng: from_networkx: edge ({u!r}, {v!r}) has node {end!r}, which nodelist does not list")
        row = []
        for a in names:
            if a not in data:
                raise InvalidArgument(f"dyng: from_networkx: edge ({u!r}, {v!r}) has no attribute {a!r}")
            x = data[a]
            if isinstance(x, bool) or not float(x).is_integer():
                raise InvalidArgument(f"dyng: from_networkx: edge ({u!r}, {v!r}) has {a} = {x!r}; dyng's weights are integers")
            row.append(int(x))
        src.append(index[u])
        dst.append(index[v])
        w.append(row)
        if not directed and u != v:  # an undirected self-loop is one edge
            src.append(index[v])
            dst.append(index[u])
            w.append(row)
    w = np.array(w, dtype=np.int64).reshape(len(src), len(names))
    return np.array(src, dtype=np.int64), np.array(dst, dtype=np.int64), w, len(nodes)
