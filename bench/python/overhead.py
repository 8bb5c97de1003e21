"""The Python layer's overhead over the Rust API, on usroads (129,164 vertices, K = 3).

Each operation runs through the Python API and, on an identical second graph, as the bare Rust
API call the Python one wraps (timed inside the extension by `dyng._dyng._time_rust_call`);
the two alternate round by round in one process. The layer's cost is read within each Python
call: its time minus the time it spent inside the Rust API call it wraps
(`dyng._dyng._last_inner_ns`), so that a loaded host, which makes two calls differ by
milliseconds, does not hide microseconds; the median over the rounds is reported, beside the
median of the paired differences (Python call minus the bare call next to it). Prints a Markdown
table with the overhead per call and whether it is within 5 % + 20 us of the Rust call.

A row on a 3-vertex graph shows the layer with warm caches; after a usroads compute the same code
runs with the engine's memory traffic having evicted the interpreter's data.

Usage: python bench/python/overhead.py [--rounds 30] [--backend sequential] [--threads 0]
"""

import argparse
import statistics

import dyng
from dyng._dyng import _last_inner_ns, _time_rust_call

from common import SOURCE, USROADS, Stream, summary, timed


def measure(rounds, res):
    gp = dyng.Graph.read(USROADS, k=3)
    gr = dyng.Graph.read(USROADS, k=3)
    rows = {}

    def pair(name, py, rust):
        ps, rs, own = [], [], []

        def python_call():
            ps.append(timed(py))
            own.append(ps[-1] - _last_inner_ns())

        for i in range(rounds):
            if i % 2:
                python_call()
                rs.append(rust())
            else:
                rs.append(rust())
                python_call()
        rows[name] = (summary(ps), summary(rs), own, [p - r for p, r in zip(ps, rs)])

    # The layer alone: on a 3-vertex graph the engine's share is nanoseconds and the caches stay warm.
    tiny = [dyng.Graph.from_edges([0, 1], [1, 2], [[1, 1, 1], [2, 2, 2]]) for _ in range(2)]
    pair("SSSP compute, 3-vertex graph", lambda: dyng.SsspResult.compute(res, tiny[0], 0),
         lambda: _time_rust_call("sssp_compute", res, tiny[1], source=0))
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
          "interleaved; time per call: minimum (median); overhead: the median over the calls of the "
          "Python call's time minus its time inside the Rust API call, and that as a share of the "
          "bare Rust call's median; paired: the median of Python minus bare Rust in the same round.\n")
    print("| operation | Rust API | Python API | overhead | paired | within 5 % + 20 us |")
    print("|---|---:|---:|---:|---:|:---:|")
    for name, ((pmin, pmed), (rmin, rmed), own, diffs) in rows.items():
        over = statistics.median(own)
        ok = over <= 0.05 * rmed + 20_000
        share = f" ({100 * over / rmed:+.2f} %)" if rmed >= 1e5 else ""
        print(f"| {name} | {fmt(rmin)} ({fmt(rmed)}) | {fmt(pmin)} ({fmt(pmed)}) | "
              f"{fmt(over)}{share} | {fmt(statistics.median(diffs))} | {'yes' if ok else 'NO'} |")


def fmt(ns):
    return f"{ns / 1e6:.2f} ms" if abs(ns) >= 1e5 else f"{ns / 1e3:.1f} us"


if __name__ == "__main__":
    main()
