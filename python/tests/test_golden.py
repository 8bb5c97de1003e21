"""The golden corpus through the Python API: every output file byte-identical to the original
program's (sha256) and the deterministic counters equal, on every engine; error cases refused.

The full-output groups travel with the project (tests/golden); the large digest-only groups
(usroads-k3, bremen-k2, special) come from $DYNG_GOLDEN_DIR or ../shared/golden, a visible skip
without them.
"""

import gzip
import hashlib
import shutil
from pathlib import Path

import numpy as np
import pytest

import dyng
from conftest import LOCAL_GOLDEN, shared_golden, skip

INF = dyng.DISTANCE_INF // 2


class Case:
    def __init__(self, d):
        self.dir = d
        self.name = f"{d.parent.name}/{d.name}"
        kv = dict(t.split("=", 1) for t in (d / "cmd.txt").read_text().split())
        self.k = None if kv["k"] == "unset" else int(kv["k"])
        self.source = int(kv["source"])
        self.pref = [int(p) for p in kv["pref"].split(",")]
        self.canonicalize = kv["canonicalize"] == "yes"
        self.graph = d / kv["graph"]
        self.changes = d / kv["changes"]
        self.init = d / kv["init"]

    @property
    def is_error(self):
        return (self.dir / "expected" / "error.txt").exists()

    def sums(self):
        lines = (self.dir / "expected" / "SHA256SUMS").read_text().splitlines()
        return {p: s for s, p in (l.split("  ", 1) for l in lines)}

    def stats(self):
        text = (self.dir / "expected" / "stats.txt").read_text().splitlines()
        return dict(l.split("=", 1) for l in text if "=" in l)


def cases(group):
    return [Case(d) for d in sorted(group.iterdir()) if (d / "cmd.txt").exists()]


def fmt_dist(d):
    return "".join(f"{v} {'INF' if x >= INF else x}\n" for v, x in enumerate(d.tolist())).encode()


def fmt_parents(p):
    return "".join(f"{v} {x}\n" for v, x in enumerate(p.tolist())).encode()


def fmt_costs(c):
    return "".join(f"{v} " + " ".join("INF" if x >= INF else str(x) for x in row) + "\n"
                   for v, row in enumerate(c.tolist())).encode()


def run_case(case, res):
    """The drop-in job on the Python API; returns ({output file: bytes}, stats or None)."""
    g = dyng.Graph.read(case.graph, "csr", k=case.k, resources=res)
    batch = dyng.Batch.read(case.changes, g)
    k = case.k if case.k is not None else g.k
    trees = []
    for j in range(k):
        d, p = dyng.read_tree(case.init / f"obj{j}" / "distancesOriginal.txt",
                              case.init / f"obj{j}" / "SSSPTreeOriginal.txt", g.n)
        # The original programs print exact counters: the drop-in policy.
        trees.append(dyng.SsspResult.from_arrays(res, g, case.source, j, d, p, canonicalize=case.canonicalize,
                                                 fallback="adaptive-counted"))
    m = dyng.MospResult.from_trees(res, g, case.source, trees, preferences=case.pref)
    dyng.update(res, g, batch, [m])
    files = {}
    for j, (d, p) in enumerate(zip(m.distances, m.parents)):
        files[f"obj{j}/distancesUpdated.txt"] = fmt_dist(d)
        files[f"obj{j}/SSSPTreeUpdated.txt"] = fmt_parents(p)
    files["combinedGraph/distancesCsr.txt"] = fmt_dist(m.combined_distances)
    files["combinedGraph/SSSPTreeCsr.txt"] = fmt_parents(m.combined_parents)
    files["combinedGraph/mospCosts.txt"] = fmt_costs(m.path_costs)
    if res.isolation == "worker":
        return files, None
    cs = m.combine_stats
    stats = {"n": g.n, "m_updated": g.m, "K": m.k, "inserts": batch.num_insertions, "deletes": batch.num_deletions,
             "combined_edges": cs["edges"], "combined_L": cs["scale"], "combined_delta": cs["delta"]}
    for j, s in enumerate(m.objective_stats):
        stats[f"invalidated_obj{j}"] = s.invalidated
    return files, {k: str(v) for k, v in stats.items()}


def check(case, res):
    files, stats = run_case(case, res)
    failures = []
    for rel, digest in case.sums().items():
        if rel not in files:
            failures.append(f"{case.name}: missing {rel}")
        elif hashlib.sha256(files[rel]).hexdigest() != digest:
            failures.append(f"{case.name}: {rel} differs")
    if stats is not None:
        for key, want in case.stats().items():
            if stats.get(key) != want:
                failures.append(f"{case.name}: {key}={stats.get(key)}, expected {want}")
    return failures


ENGINES = {
    "sequential": lambda: dyng.Resources("sequential"),
    "parallel-2": lambda: dyng.Resources("parallel", threads=2),
}


@pytest.fixture(scope="module")
def engines():
    return {name: make() for name, make in ENGINES.items()}


def replay(group, engines):
    failures, count = [], 0
    for case in cases(group):
        if case.is_error:
            continue
        for name, res in engines.items():
            failures += [f"[{name}] {f}" for f in check(case, res)]
            count += 1
    assert not failures, "\n".join(failures)
    return count


@pytest.mark.parametrize("group,count", [("thesis", 3), ("handmade", 15), ("small", 60)])
def test_local_group(group, count, engines):
    assert replay(LOCAL_GOLDEN / group, engines) == count * len(engines)


def test_local_groups_through_a_worker():
    """The same outputs with graphs and results resident in a dyng-worker process."""
    res = dyng.Resources("sequential", isolation="worker")
    assert replay(LOCAL_GOLDEN / "thesis", {"worker": res}) == 3
    assert replay(LOCAL_GOLDEN / "handmade", {"worker": res}) == 15


def shared_group(name):
    g = shared_golden()
    if g is None:
        skip("golden", f"the {name} group is not here: set DYNG_GOLDEN_DIR or provide ../shared/golden")
    return g / name


def test_usroads_group():
    assert replay(shared_group("usroads-k3"), {"parallel-2": dyng.Resources("parallel", threads=2)}) == 6


def test_bremen_group():
    assert replay(shared_group("bremen-k2"), {"parallel-2": dyng.Resources("parallel", threads=2)}) == 2


def test_special_group(tmp_path):
    group = shared_group("special")
    copy = tmp_path / "special"
    shutil.copytree(group, copy)
    for gz in copy.rglob("*.gz"):
        gz.with_suffix("").write_bytes(gzip.decompress(gz.read_bytes()))
    assert replay(copy, {"parallel-2": dyng.Resources("parallel", threads=2)}) == 2


def test_error_and_quirk_cases_are_refused(seq):
    seen = 0
    for group in ("errors", "quirks"):
        for case in cases(LOCAL_GOLDEN / group):
            with pytest.raises(dyng.DyngError):
                run_case(case, seq)
            seen += 1
    assert seen == 27
