"""The Python layer's overhead over the Rust API, on usroads (129,164 vertices, K = 3).

Each operation runs through the Python API and, on an identical second graph, as the bare Rust
API call the Python one wraps (timed inside the extension by `dyng._dyng._time_rust_call`);
the two alternate round by round in one process. The overhead is read per round, as the
difference of the two calls made next to each other (a shared machine slows both alike), and
reported as the median over the rounds, beside the minimum of each side. Prints a Markdown table
with the overhead per call and whether it is within 5 % + 20 us of the Rust call.

Usage: python bench/python/overhead.py [--rounds 30] [--backend sequential] [--threads 0]
"""

import argparse
import statistics

import dyng
from dyng._dyng import _time_rust_call

from common import SOURCE, USROADS, Stream, summary, timed


def measure(rounds, res):
    gp = dyng.Graph.read(USROADS, k=3)
    gr = dyng.Graph.read(USROADS, k=3)
    rows = {}

    def pair(name, py, rust):
        ps, rs = [], []
        for i in range(rounds):
            if i % 2:
                ps.append(timed(py))
                rs.append(rust())
            else:
                rs.append(rust())
                ps.append(timed(py))
        rows[name] = (summary(ps), summary(rs), [p - r for p, r in zip(ps, rs)])

    pair("SSSP compute (objective 0)", lambda: dyng.SsspResult.compute(res, gp, SOURCE),
         lambda: _time_rust_call("sssp_compute", res, gr, source=SOURCE))
    pair("MOSP compute (K = 3)", lambda: dyng.MospResult.compute(res, gp, SOURCE),
         lambda: _time_rust_call("mosp_compute", res, gr, source=SOURCE))
    # The same stream of 100-change batches on both graphs, each with its own MOSP result.
    mp, mr = dyng.MospResult.compute(res, gp, SOURCE), dyng.MospResult.compute(res, gr, SOURCE)
    sp = Stream(gp, 100, seed=7)
    batches = [Stream.as_dyng(sp.batch()) for _ in range(rounds)]
    it_p, it_r = iter(batches), iter(batches)
    pair("update, 100 changes, MOSP result", lambda: dyng.update(res, gp, next(it_p), [mp]),
         lambda: _time_rust_call("update", res, gr, batch=next(it_r), result=mr))
    assert (mp.path_costs == mr.path_costs).all(), "the two streams diverged"
    tp, tr = dyng.SsspResult.compute(res, gp, SOURCE), dyng.SsspResult.compute(res, gr, SOURCE)
    pair("read distances (n int64)", lambda: tp.distances,
         lambda: _time_rust_call("read_distances", res, gr, result=tr))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--backend", default="sequential")
    ap.add_argument("--threads", type=int, default=0)
    a = ap.parse_args()
    threads = a.threads if a.backend == "parallel" else 0
    res = dyng.Resources(a.backend, threads=threads)
    rows = measure(a.rounds, res)
    print(f"Python layer over the Rust API, usroads K = 3, source {SOURCE}, {res!r}, {a.rounds} rounds "
          "interleaved; time per call: minimum (median); overhead: the median over the rounds of "
          "Python minus Rust in the same round, and that as a share of the Rust median.\n")
    print("| operation | Rust API | Python API | overhead | within 5 % + 20 us |")
    print("|---|---:|---:|---:|:---:|")
    for name, ((pmin, pmed), (rmin, rmed), diffs) in rows.items():
        over = statistics.median(diffs)
        ok = over <= 0.05 * rmed + 20_000
        print(f"| {name} | {fmt(rmin)} ({fmt(rmed)}) | {fmt(pmin)} ({fmt(pmed)}) | "
              f"{fmt(over)} ({100 * over / rmed:+.1f} %) | {'yes' if ok else 'NO'} |")


def fmt(ns):
    return f"{ns / 1e6:.2f} ms" if abs(ns) >= 1e5 else f"{ns / 1e3:.1f} us"


if __name__ == "__main__":
    main()
