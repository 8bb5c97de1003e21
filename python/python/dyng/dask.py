"""Scale-out on Dask distributed: shard the results, not the graph.

When one process is not enough for the results (thousands of sources, or of scenarios), each Dask
worker holds the whole graph and its share of the results; every batch is broadcast to all of
them and each applies it with `dyng.update` to its own graph and results. The graph reaches the
workers once, read there from a path or scattered from the client; a batch travels as its few
arrays.

    from dask.distributed import Client, LocalCluster
    import dyng, dyng.dask
    client = Client(LocalCluster(n_workers=2))
    trees = dyng.dask.ShardedTrees(client, "roads.mtx", sources=range(1000), read_options={"k": 2})
    trees.update(dyng.Batch(insertions=(src, dst, w), deletions=(dsrc, ddst)))
    d = trees.distances(17)                    # a numpy array from the worker holding source 17
    block = trees.gather([1, 2, 3])            # (3, n)

Failures (docs/scale-out.md):
- a batch that a worker rejects raises on the client, as `dyng.update` raised it there, and
  leaves every shard as it was (`dyng.update` changes nothing on a rejected batch; should some
  shards have applied it and others not, those that did are rebuilt without it);
- a worker that leaves (it died, or was killed) is noticed at the next call: its shard is rebuilt
  on a live worker from the graph and the batches applied so far, and a `ShardRebuilt` warning
  says so; a rebuild that cannot be done (the graph's data lost with every worker that held it,
  and not kept on the client) raises `ShardLost`, saying why.

Requires `dask[distributed]` (pip install "dask[distributed]").
"""

import itertools
import os
import threading
import uuid
import warnings

import numpy as np

import dyng

try:
    import distributed
    from distributed import get_worker
    from distributed.scheduler import KilledWorker
except ImportError as e:  # pragma: no cover - the message is the point
    raise ImportError('dyng.dask needs Dask distributed: pip install "dask[distributed]"') from e

__all__ = ["ShardedTrees", "ShardRebuilt", "ShardLost"]

#: Seconds between checks that the workers running a call are still there.
POLL_SECONDS = 0.5


class ShardRebuilt(UserWarning):
    """A worker holding a shard left; the shard was rebuilt on another worker."""


class ShardLost(dyng.DyngError):
    """A shard could not be rebuilt (the message says why); the sharded results are unusable."""

    kind = "ShardLost"


# ---- worker side ------------------------------------------------------------------------------

_SHARDS = {}
_SHARDS_LOCK = threading.Lock()


class _Shard:
    """A worker's graph and results."""

    def __init__(self, graph, res, kind, sources, options):
        self.graph, self.res, self.kind, self.options = graph, res, kind, options
        self.lock = threading.Lock()
        self.results = {int(s): _compute(res, graph, kind, int(s), options) for s in sources}


def _compute(res, graph, kind, source, options):
    if kind == "sssp":
        return dyng.SsspResult.compute(res, graph, source, options["objective"], fallback=options["fallback"])
    return dyng.MospResult.compute(res, graph, source, preferences=options["preferences"], k=options["k"],
                                   fallback=options["fallback"])


def _batch_of(arrays):
    ins_src, ins_dst, ins_w, del_src, del_dst, k = arrays
    return dyng.Batch(insertions=(ins_src, ins_dst, ins_w), deletions=(del_src, del_dst), k=k)


def _arrays_of(batch):
    s, d, w = batch.insertions
    ds, dd = batch.deletions
    return (s, d, w, ds, dd, batch.k)


def _load_graph(spec, res):
    how, what, read_options = spec
    if how == "path":
        return dyng.Graph.read(what, **read_options)
    indptr, indices, weights = what
    return dyng.Graph.from_csr(indptr, indices, weights)


def _open(key, spec, res_options, kind, sources, options, log):
    """Loads the graph, applies the batches of `log` to it, computes the shard's results."""
    res = dyng.Resources(**res_options)
    graph = _load_graph(spec, res)
    for arrays in log:
        dyng.update(res, graph, _batch_of(arrays), [])
    shard = _Shard(graph, res, kind, sources, options)
    with _SHARDS_LOCK:
        _SHARDS[key] = shard
    return {"version": graph.version, "worker": get_worker().address}


def _apply(shard, batch):
    """One batch on one shard (its own function, so that tests can replace it on a worker)."""
    return dyng.update(shard.res, shard.graph, batch, list(shard.results.values()))


def _update(key, version, arrays):
    shard = _shard(key)
    with shard.lock:
        if shard.graph.version != version:
            raise dyng.Internal(
                f"dyng.dask: shard {key} is at version {shard.graph.version}, the client expected {version}"
            )
        stats = _apply(shard, _batch_of(arrays))
        return [s.as_dict() for s in stats]


def _get(key, sources, array):
    shard = _shard(key)
    with shard.lock:
        out = []
        for s in sources:
            r = shard.results[int(s)]
            a = getattr(r, array)
            out.append(np.stack(a) if isinstance(a, (list, tuple)) else np.array(a))
        return out


def _close(key):
    with _SHARDS_LOCK:
        _SHARDS.pop(key, None)


def _shard(key):
    with _SHARDS_LOCK:
        shard = _SHARDS.get(key)
    if shard is None:
        raise ShardLost(f"dyng.dask: this worker holds no shard {key} (it was restarted)")
    return shard


# ---- client side ------------------------------------------------------------------------------

_ARRAYS = {
    "sssp": ("distances", "parents"),
    "mosp": ("distances", "parents", "combined_distances", "combined_parents", "path_costs"),
}


class _Placement:
    def __init__(self, worker, sources):
        self.worker, self.sources = worker, sources


class ShardedTrees:
    """Shortest-path results of many sources, sharded over the workers of a Dask cluster.

    ShardedTrees(client, graph_source, sources, *, kind="sssp", objective=0, preferences=None,
                 k=None, fallback=None, backend="sequential", threads=0, read_options=None,
                 keep_graph=True)

    graph_source: a path (read on every worker by `dyng.Graph.read(path, **read_options)`, so it
        must be readable there), or a `dyng.Graph` or (indptr, indices, weights) arrays,
        scattered once to every worker.
    sources: the source vertices; they are split into one shard per worker.
    kind: "sssp" (a tree of `objective` per source) or "mosp" (a MOSP result per source, with
        `preferences` and `k`).
    backend, threads: each worker's `dyng.Resources` (in process).
    keep_graph: keep a scattered graph's arrays on the client too, so that a shard can still be
        rebuilt when every worker holding them is gone.
    """

    def __init__(self, client, graph_source, sources, *, kind="sssp", objective=0, preferences=None, k=None,
                 fallback=None, backend="sequential", threads=0, read_options=None, keep_graph=True):
        if kind not in _ARRAYS:
            raise dyng.InvalidArgument(f'dyng.dask: kind = {kind!r}; want "sssp" or "mosp"')
        self.client = client
        self.kind = kind
        self.sources = [int(s) for s in sources]
        if not self.sources:
            raise dyng.InvalidArgument("dyng.dask: no sources given")
        if len(set(self.sources)) != len(self.sources):
            raise dyng.InvalidArgument("dyng.dask: a source is listed twice")
        self._options = {"objective": objective, "preferences": preferences, "k": k, "fallback": fallback}
        self._res_options = {"backend": backend, "threads": threads}
        self._log = []
        self._kept = None
        if isinstance(graph_source, (str, os.PathLike)):
            self._spec = ("path", os.fspath(graph_source), dict(read_options or {}))
        else:
            if read_options:
                raise dyng.InvalidArgument("dyng.dask: read_options apply to a graph given as a path")
            arrays = graph_source.to_csr() if isinstance(graph_source, dyng.Graph) else tuple(graph_source)
            if len(arrays) != 3:
                raise dyng.InvalidArgument("dyng.dask: graph_source is a path, a dyng.Graph or (indptr, indices, weights)")
            self._kept = arrays if keep_graph else None
            self._spec = ("arrays", client.scatter(arrays, broadcast=True, hash=False), {})
        workers = self._alive()
        if not workers:
            raise dyng.InvalidArgument("dyng.dask: the cluster has no worker")
        self._key = f"dyng-{uuid.uuid4().hex[:12]}"
        chunks = [c.tolist() for c in np.array_split(np.array(self.sources), len(workers)) if len(c)]
        self._shards = {f"{self._key}-{i}": _Placement(w, c) for i, (w, c) in enumerate(zip(workers, chunks))}
        self._where = {s: key for key, p in self._shards.items() for s in p.sources}
        self.version = 0
        #: (shard, old worker, new worker) of every rebuild, in order.
        self.rebuilds = []
        futures = {key: self._submit(_open, key, p.worker, self._spec, self._res_options, kind, p.sources,
                                     self._options, []) for key, p in self._shards.items()}
        outcome = self._wait(futures)
        failed = [(key, o) for key, o in outcome.items() if o[0] != "ok"]
        if failed:
            self.close()
            key, (state, err) = failed[0]
            if state == "error":
                raise err
            raise ShardLost(f"dyng.dask: the worker of shard {key} left while the shard was being built")

    # -- the calls --

    def update(self, batch):
        """Applies `batch` (a `dyng.Batch`) on every shard; returns {source: stats dict}.

        A batch that a worker rejects raises the error `dyng.update` raised there, and every shard
        is left as it was.
        """
        self._recover()
        arrays = _arrays_of(batch)
        futures = {key: self._submit(_update, key, p.worker, self.version, arrays)
                   for key, p in self._shards.items()}
        outcome = self._wait(futures)
        rejected = [(key, o[1]) for key, o in outcome.items() if o[0] == "error"]
        applied = [key for key, o in outcome.items() if o[0] == "ok"]
        lost = [key for key, o in outcome.items() if o[0] == "lost"]
        if rejected:
            # dyng.update changes nothing on a rejected batch; shards that did apply it (a failure
            # that struck one worker only) go back, rebuilt without it.
            for key in applied + lost:
                self._rebuild(key, "it applied a batch that another shard rejected" if key in applied
                              else "its worker left")
            raise rejected[0][1]
        self._log.append(arrays)
        self.version += 1
        for key in lost:
            self._rebuild(key, "its worker left during an update")
        stats = {}
        for key in applied:
            for s, st in zip(self._shards[key].sources, outcome[key][1]):
                stats[s] = st
        for key in lost:
            for s in self._shards[key].sources:
                stats[s] = None
        return stats

    def get(self, source, array="distances"):
        """Array `array` of the result of `source` (a copy fetched from its worker).

        SSSP: "distances", "parents". MOSP: "distances" and "parents" ((K, n): row j the tree
        of objective j), "combined_distances", "combined_parents", "path_costs" ((n, KG)).
        """
        return self.gather([source], array)[0]

    def distances(self, source):
        """The distances of the result of `source` (see `get`)."""
        return self.get(source, "distances")

    def gather(self, sources=None, array="distances"):
        """Array `array` of the results of `sources` (default: all), stacked in that order."""
        if array not in _ARRAYS[self.kind]:
            raise dyng.InvalidArgument(f"dyng.dask: array = {array!r}; a {self.kind} result has {_ARRAYS[self.kind]}")
        sources = self.sources if sources is None else [int(s) for s in sources]
        for s in sources:
            if s not in self._where:
                raise dyng.InvalidArgument(f"dyng.dask: source {s} is not one of the sharded sources")
        self._recover()
        by_shard = {}
        for i, s in enumerate(sources):
            by_shard.setdefault(self._where[s], []).append((i, s))
        futures = {key: self._submit(_get, key, self._shards[key].worker, [s for _, s in items], array)
                   for key, items in by_shard.items()}
        outcome = self._wait(futures)
        out = [None] * len(sources)
        for key, (state, value) in outcome.items():
            if state == "error":
                raise value
            if state == "lost":
                self._rebuild(key, "its worker left")
                return self.gather(sources, array)
            for (i, _), a in zip(by_shard[key], value):
                out[i] = a
        return np.stack(out)

    @property
    def placement(self):
        """{shard: (worker address, sources)}."""
        return {key: (p.worker, list(p.sources)) for key, p in self._shards.items()}

    def close(self):
        """Drops the shards from the workers."""
        for key, p in self._shards.items():
            if p.worker in self._alive():
                self._submit(_close, key, p.worker).release()
        self._shards = {}

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return (f"<dyng.dask.ShardedTrees {self.kind} sources={len(self.sources)} shards={len(self._shards)} "
                f"version={self.version}>")

    # -- plumbing --

    def _alive(self):
        return sorted(self.client.scheduler_info(n_workers=-1)["workers"])

    def _submit(self, fn, key, worker, *args):
        """Runs fn(key, *args) on `worker` only."""
        return self.client.submit(fn, key, *args, workers=[worker], allow_other_workers=False, pure=False,
                                  key=f"{fn.__name__.lstrip('_')}-{key}-{next(_SEQ)}")

    def _wait(self, futures):
        """{key: ("ok", value) | ("error", exception) | ("lost", None)} of every future."""
        pending, out = dict(futures), {}
        while pending:
            try:
                distributed.wait(list(pending.values()), timeout=POLL_SECONDS, return_when="FIRST_COMPLETED")
            except (TimeoutError, distributed.TimeoutError):
                pass
            for key, f in list(pending.items()):
                if f.done():
                    del pending[key]
                    if f.status == "finished":
                        out[key] = ("ok", f.result())
                    else:
                        err = f.exception()
                        gone = isinstance(err, (KilledWorker, ShardLost))
                        out[key] = ("lost", None) if gone else ("error", err)
            if pending:
                alive = set(self._alive())
                for key in [k for k in pending if self._shards[k].worker not in alive]:
                    pending.pop(key).cancel()
                    out[key] = ("lost", None)
        return out

    def _recover(self):
        """Rebuilds the shards whose worker left since the last call."""
        alive = set(self._alive())
        for key in [k for k, p in self._shards.items() if p.worker not in alive]:
            self._rebuild(key, "its worker left")

    def _rebuild(self, key, why):
        """Rebuilds shard `key` at the client's version on the live worker holding fewest shards."""
        old = self._shards[key].worker
        for attempt in range(2):
            alive = self._alive()
            if not alive:
                raise ShardLost(f"dyng.dask: shard {key} cannot be rebuilt ({why}): the cluster has no worker left")
            load = {w: 0 for w in alive}
            for p in self._shards.values():
                if p.worker in load:
                    load[p.worker] += 1
            if old in load:
                load[old] -= 1
            new = min(alive, key=lambda w: (load[w], w != old, w))
            spec = self._graph_spec(key, why)
            fut = self._submit(_open, key, new, spec, self._res_options, self.kind, self._shards[key].sources,
                               self._options, list(self._log))
            state, value = self._wait({key: fut})[key]
            if state == "ok":
                self._shards[key].worker = new
                self.rebuilds.append((key, old, new))
                if new != old or why != "it applied a batch that another shard rejected":
                    warnings.warn(ShardRebuilt(f"dyng.dask: shard {key} ({why}) was rebuilt on {new} from the graph "
                                               f"and the {len(self._log)} batches applied so far"), stacklevel=3)
                return
            if state == "error":
                raise ShardLost(f"dyng.dask: shard {key} ({why}) could not be rebuilt: {value}") from value
        raise ShardLost(f"dyng.dask: shard {key} ({why}) could not be rebuilt: the workers left twice while it was")

    def _graph_spec(self, key, why):
        how, what, read_options = self._spec
        if how == "path":
            return self._spec
        if any(f.status != "finished" for f in what):
            if self._kept is None:
                raise ShardLost(f"dyng.dask: shard {key} ({why}) cannot be rebuilt: the scattered graph was lost "
                                "with the workers that held it, and keep_graph=False kept no copy on the client")
            self._spec = ("arrays", self.client.scatter(self._kept, broadcast=True, hash=False), {})
        return self._spec


_SEQ = itertools.count()
