"""What the Python benchmarks share: the graph, the batches, the timing."""

import statistics
import time
from pathlib import Path

import numpy as np

import dyng

ROOT = Path(__file__).resolve().parents[2]
USROADS = ROOT / "data" / "road-usroads.mtx"
SOURCE = 531


def edges_of(g):
    """(src, dst, weights) of the graph's current edges."""
    indptr, indices, w = g.to_csr()
    return np.repeat(np.arange(g.n, dtype=np.int32), np.diff(indptr)), indices, w


class Stream:
    """Batches of `size` changes on a graph: deletions of existing edges (each at most once) and
    new weights for other existing edges (a road's travel time changing)."""

    def __init__(self, g, size, seed, deletion_share=0.5, wmax=100):
        self.src, self.dst, _ = edges_of(g)
        self.k, self.size, self.wmax = g.k, size, wmax
        self.rng = np.random.default_rng(seed)
        self.order = self.rng.permutation(len(self.src))
        self.next = 0
        self.deletions = int(round(size * deletion_share))

    def batch(self):
        """The next batch: (deletions (src, dst), reweights (src, dst, weights))."""
        nd, nr = self.deletions, self.size - self.deletions
        take = self.order[self.next:self.next + nd + nr]
        self.next += nd + nr
        d, r = take[:nd], take[nd:]
        w = self.rng.integers(1, self.wmax + 1, (nr, self.k))
        return (self.src[d], self.dst[d]), (self.src[r], self.dst[r], w)

    @staticmethod
    def as_dyng(b):
        (ds, dd), (rs, rd, w) = b
        return dyng.Batch(insertions=(rs, rd, w), deletions=(ds, dd))


def timed(f):
    """Nanoseconds of f(); what it returns is dropped after the clock stops."""
    t = time.perf_counter_ns()
    out = f()  # noqa: F841 - kept until the clock has stopped
    dt = time.perf_counter_ns() - t
    del out
    return dt


def summary(ns):
    return min(ns), statistics.median(ns)
