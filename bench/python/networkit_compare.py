"""dyng against networkit's DynDijkstra on usroads: correctness and time, side by side, in one run.

Both keep the shortest-path tree of one source (K = 1: weights drawn as `dyng prep mtx2csr`
draws them) under the same stream of batches: deletions of existing edges and new weights for
others, in three streams (weight changes only, deletions only, both). After each batch every
method's distances are compared with a static Dijkstra of networkit on the updated graph (the
reference), and each method's time per batch is taken, the methods alternating their order batch
by batch; networkit's time includes changing its graph, as dyng's update includes applying the
batch. Prints a Markdown table.

Usage: python bench/python/networkit_compare.py [--batches 20] [--size 100] [--threads 1]
Needs networkit (pip install networkit; tested with 11.3).
"""

import argparse
import statistics

import numpy as np

import dyng
from common import SOURCE, USROADS, Stream, edges_of, summary, timed

try:
    import networkit as nk
except ImportError:  # pragma: no cover
    raise SystemExit("networkit_compare.py needs networkit: pip install networkit==11.3")

STREAMS = {"weight changes only": 0.0, "deletions only": 1.0, "both (half each)": 0.5}


def nk_graph(g):
    src, dst, w = edges_of(g)
    G = nk.Graph(g.n, weighted=True, directed=True)
    G.addEdges((w[:, 0].astype(np.float64), (src.astype(np.uint64), dst.astype(np.uint64))))
    return G


def nk_distances(G):
    d = nk.distance.Dijkstra(G, SOURCE, storePaths=False)
    d.run()
    return d


def to_int(dist):
    """networkit's float distances with its unreachable marker as dyng's DISTANCE_INF."""
    a = np.asarray(dist)
    out = np.full(a.shape, dyng.DISTANCE_INF, dtype=np.int64)
    finite = a < 1e300
    out[finite] = a[finite].astype(np.int64)
    return out


def run_stream(name, share, batches, size, res_seq, res_par):
    g_seq = dyng.Graph.read(USROADS, k=1)
    g_par = dyng.Graph.read(USROADS, k=1)
    G = nk_graph(g_seq)
    t_seq = dyng.SsspResult.compute(res_seq, g_seq, SOURCE)
    t_par = dyng.SsspResult.compute(res_par, g_par, SOURCE)
    dyn = nk.distance.DynDijkstra(G, SOURCE)
    dyn.run()
    stream = Stream(g_seq, size, seed=11, deletion_share=share)
    times = {m: [] for m in METHODS}
    # (batches with a wrong distance, wrong vertices in all) of every method but the reference.
    wrong = {m: [0, 0] for m in METHODS if not m.startswith("networkit Dijkstra")}
    for i in range(batches):
        (ds, dd), (rs, rd, w) = b = stream.batch()
        batch = Stream.as_dyng(b)

        def nk_update():
            events = []
            for u, v in zip(ds.tolist(), dd.tolist()):
                G.removeEdge(u, v)
                events.append(nk.dynamics.GraphEvent(nk.dynamics.GraphEventType.EDGE_REMOVAL, u, v, 0))
            for u, v, x in zip(rs.tolist(), rd.tolist(), w[:, 0].tolist()):
                G.setWeight(u, v, float(x))
                events.append(nk.dynamics.GraphEvent(nk.dynamics.GraphEventType.EDGE_WEIGHT_UPDATE, u, v, float(x)))
            dyn.updateBatch(events)

        jobs = {
            "dyng, sequential": lambda: dyng.update(res_seq, g_seq, batch, [t_seq]),
            f"dyng, parallel ({res_par.threads} threads)": lambda: dyng.update(res_par, g_par, batch, [t_par]),
            "networkit DynDijkstra": nk_update,
        }
        order = list(jobs) if i % 2 == 0 else list(reversed(jobs))
        for m in order:
            times[m].append(timed(jobs[m]))
        ref_dijkstra = [None]
        times["networkit Dijkstra (recompute)"].append(timed(lambda: ref_dijkstra.__setitem__(0, nk_distances(G))))
        fresh = [None]
        times["dyng recompute (sequential)"].append(
            timed(lambda: fresh.__setitem__(0, dyng.SsspResult.compute(res_seq, g_seq, SOURCE))))
        ref = to_int(ref_dijkstra[0].getDistances())
        got = {"dyng, sequential": t_seq.distances, f"dyng, parallel ({res_par.threads} threads)": t_par.distances,
               "networkit DynDijkstra": to_int(dyn.getDistances()), "dyng recompute (sequential)": fresh[0].distances}
        for m, d in got.items():
            bad = int(np.count_nonzero(d != ref))
            if bad:
                wrong[m][0] += 1
                wrong[m][1] += bad
    return times, wrong


METHODS = []


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batches", type=int, default=20)
    ap.add_argument("--size", type=int, default=100, help="changes per batch")
    ap.add_argument("--threads", type=int, default=2, help="threads of dyng's parallel engine")
    a = ap.parse_args()
    nk.setNumberOfThreads(1)
    res_seq, res_par = dyng.Resources("sequential"), dyng.Resources("parallel", threads=a.threads)
    METHODS[:] = ["dyng, sequential", f"dyng, parallel ({res_par.threads} threads)", "networkit DynDijkstra",
                  "networkit Dijkstra (recompute)", "dyng recompute (sequential)"]
    g = dyng.Graph.read(USROADS, k=1)
    print(f"usroads (n = {g.n:,}, m = {g.m:,}, K = 1), source {SOURCE}, {a.batches} batches of {a.size} changes "
          f"per stream; networkit {nk.__version__} on 1 thread, dyng {dyng.__version__}. Time per batch: minimum "
          "(median); wrong: batches after which some distance differs from a static Dijkstra "
          "(vertices wrong, summed over the batches).\n")
    print("| stream | method | time per batch | vs dyng sequential (medians) | wrong |")
    print("|---|---|---:|---:|---:|")
    for name, share in STREAMS.items():
        times, wrong = run_stream(name, share, a.batches, a.size, res_seq, res_par)
        base = statistics.median(times["dyng, sequential"])
        for m in METHODS:
            lo, med = summary(times[m])
            w = f"{wrong[m][0]} of {a.batches} ({wrong[m][1]:,} vertices)" if m in wrong else "(reference)"
            print(f"| {name} | {m} | {lo / 1e6:.2f} ms ({med / 1e6:.2f} ms) | {med / base:.2f}x | {w} |")


if __name__ == "__main__":
    main()
