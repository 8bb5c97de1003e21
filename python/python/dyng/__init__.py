"""dyng keeps shortest-path trees up to date on large dynamic graphs.

A `Graph` holds K integer weights per edge (distance, time, fuel, ...). `SsspResult` is the
shortest-path tree of one objective from one source; `MospResult` the multi-objective compromise
of K trees (their combined graph's tree and the cost of each of its paths in every objective).
Batches of edge insertions, deletions and weight changes (`Batch`) are applied to the graph in
place by `update`, which brings every listed result up to date, repairing what the batch changed.
`Resources` chooses the engine: sequential, parallel (threads) or CUDA, in this process or in an
isolated worker process.

    import dyng, numpy as np
    res = dyng.Resources("parallel")
    g = dyng.Graph.from_edges(src, dst, weights)          # weights: (m, K) integers
    m = dyng.MospResult.compute(res, g, source=0)
    t = dyng.SsspResult.compute(res, g, source=0, objective=1)
    b = dyng.Batch(insertions=(ins_src, ins_dst, ins_w), deletions=(del_src, del_dst))
    stats = dyng.update(res, g, b, [m, t])
    m.path_costs       # (n, K) zero-copy, read-only; keeps this state after later updates

Arrays of results are zero-copy read-only numpy arrays; the GIL is released during computes,
reads and updates. Errors are `dyng.DyngError` subclasses named after the library's error kinds
(`dyng.InvalidArgument`, `dyng.StaleResult`, ...), with the library's messages. `dyng.dask` shards
results over a Dask cluster.
"""

from ._errors import (  # noqa: F401
    Busy,
    Capacity,
    Cuda,
    DyngError,
    Internal,
    InvalidArgument,
    Io,
    NotSupported,
    OutOfMemory,
    Protocol,
    Resource,
    StaleResult,
    Timeout,
    WorkerLost,
)
from ._dyng import (  # noqa: F401
    DISTANCE_INF,
    Batch,
    Graph,
    MospResult,
    Resources,
    SsspResult,
    UpdateStats,
    __version__,
    read_tree,
    update,
    version,
)

__all__ = [
    "DISTANCE_INF", "Batch", "Graph", "MospResult", "Resources", "SsspResult", "UpdateStats",
    "update", "read_tree", "version", "__version__",
    "DyngError", "InvalidArgument", "StaleResult", "Io", "Capacity", "NotSupported", "OutOfMemory",
    "Cuda", "WorkerLost", "Timeout", "Protocol", "Resource", "Internal", "Busy",
]
