"""On the bundled US highway network (129,164 vertices), the Python API gives the Rust API's
results: the graph read from Matrix Market equals `dyng prep mtx2csr`'s, computed trees equal the
Rust oracle's (`dyng prep init`), and an adopted MOSP result updated with a batch writes the same
bytes and counters as `dyng mosp` (the Rust API behind the CLI) on the same inputs.
"""

import hashlib

import numpy as np
import pytest

import dyng
from conftest import dyng_binary, run, skip
from test_golden import fmt_costs, fmt_dist, fmt_parents

SOURCE = 531


@pytest.fixture(scope="module")
def prepared(tmp_path_factory, usroads_mtx):
    exe = dyng_binary()
    if exe is None:
        skip("cargo-build", "target/release/dyng is missing: cargo build --release builds it")
    d = tmp_path_factory.mktemp("usroads")
    run([exe, "prep", "mtx2csr", usroads_mtx, d / "g", 3, 1, 100, 12345])
    run([exe, "prep", "init", d / "g", d / "init", "--source", SOURCE])
    run([exe, "prep", "changes", d / "g", d / "changes", "--changes", 100, "--local", 8, "--seed", 9,
         "--source", SOURCE])
    run([exe, "mosp", "--graph", d / "g", "--changes", d / "changes", "--init", d / "init", "--source", SOURCE,
         "--out", d / "out", "--stats", d / "stats.txt", "--quiet"])
    return d


def test_the_graph_equals_the_converter_s(prepared, usroads):
    mine = usroads.to_csr()
    theirs = dyng.Graph.read(prepared / "g", "csr").to_csr()
    for a, b in zip(mine, theirs):
        assert np.array_equal(a, b)


def test_computed_trees_equal_the_oracle_s(prepared, usroads, par):
    for j in range(3):
        t = dyng.SsspResult.compute(par, usroads, SOURCE, j)
        d, _ = dyng.read_tree(prepared / "init" / f"obj{j}" / "distancesOriginal.txt",
                              prepared / "init" / f"obj{j}" / "SSSPTreeOriginal.txt", usroads.n)
        assert np.array_equal(t.distances, d)


def test_an_update_writes_what_the_cli_writes(prepared, par):
    g = dyng.Graph.read(prepared / "g", "csr")
    trees = []
    for j in range(3):
        d, p = dyng.read_tree(prepared / "init" / f"obj{j}" / "distancesOriginal.txt",
                              prepared / "init" / f"obj{j}" / "SSSPTreeOriginal.txt", g.n)
        trees.append(dyng.SsspResult.from_arrays(par, g, SOURCE, j, d, p, fallback="adaptive-counted"))
    m = dyng.MospResult.from_trees(par, g, SOURCE, trees)
    batch = dyng.Batch.read(prepared / "changes", g)
    assert len(batch) == 100
    dyng.update(par, g, batch, [m])
    files = {"combinedGraph/distancesCsr.txt": fmt_dist(m.combined_distances),
             "combinedGraph/SSSPTreeCsr.txt": fmt_parents(m.combined_parents),
             "combinedGraph/mospCosts.txt": fmt_costs(m.path_costs)}
    for j in range(3):
        files[f"obj{j}/distancesUpdated.txt"] = fmt_dist(m.distances[j])
        files[f"obj{j}/SSSPTreeUpdated.txt"] = fmt_parents(m.parents[j])
    for rel, data in files.items():
        assert hashlib.sha256(data).hexdigest() == hashlib.sha256((prepared / "out" / rel).read_bytes()).hexdigest(), rel
    stats = dict(l.split("=", 1) for l in (prepared / "stats.txt").read_text().splitlines() if "=" in l)
    for j, s in enumerate(m.objective_stats):
        assert str(s.invalidated) == stats[f"invalidated_obj{j}"]
    assert str(m.combine_stats["edges"]) == stats["combined_edges"]
    assert str(g.m) == stats["m_updated"]
