"""Worker isolation from the installed package: the wheel ships dyng-worker next to the extension
module, where the library finds it; results equal the in-process ones; a missing or untrusted
worker is a clear error."""

import os
import shutil
import stat
from pathlib import Path

import numpy as np
import pytest

import dyng
from conftest import random_batch, random_graph

N, M, K = 2000, 9000, 2


def test_the_package_ships_its_worker():
    worker = Path(dyng._dyng.__file__).parent / "dyng-worker"
    assert worker.is_file()
    mode = worker.stat().st_mode
    assert mode & stat.S_IXUSR and not mode & stat.S_IWOTH


def test_results_equal_the_in_process_ones(seq):
    wres = dyng.Resources("sequential", isolation="worker")
    wres.warm_up()
    src, dst, w = random_graph(N, M, K, seed=11)
    gl = dyng.Graph.from_edges(src, dst, w, n=N)
    gw = dyng.Graph.from_edges(src, dst, w, n=N, resources=wres)
    assert gw.isolation == "worker" and (gw.n, gw.m, gw.k) == (gl.n, gl.m, gl.k)
    local = [dyng.MospResult.compute(seq, gl, 0, preferences=[1, 3]), dyng.SsspResult.compute(seq, gl, 5, 1)]
    remote = [dyng.MospResult.compute(wres, gw, 0, preferences=[1, 3]), dyng.SsspResult.compute(wres, gw, 5, 1)]
    rng = np.random.default_rng(3)
    for _ in range(4):
        b = random_batch(rng, N, (src, dst), K, 300)
        sl = dyng.update(seq, gl, b, local)
        sw = dyng.update(wres, gw, b, remote)
        assert [(s.invalidated, s.affected, s.fallback_used) for s in sl] == \
               [(s.invalidated, s.affected, s.fallback_used) for s in sw]
    (ml, tl), (mw, tw) = local, remote
    for a, b in [(ml.combined_distances, mw.combined_distances), (ml.combined_parents, mw.combined_parents),
                 (ml.path_costs, mw.path_costs), (ml.distances[1], mw.distances[1]), (tl.parents, tw.parents)]:
        assert np.array_equal(a, b)
    assert np.array_equal(ml.path(17), mw.path(17)) and np.array_equal(tl.path(17), tw.path(17))
    assert gw.version == gl.version == 4 and mw.graph_version == 4
    assert mw.preferences == ml.preferences == [1, 3]
    assert dyng.MospResult.compute(wres, gw, 2).preferences == [1, 1]
    for a, b in zip(gl.to_csr(), gw.to_csr()):
        assert np.array_equal(a, b)
    # Adoption in the worker.
    d, p = np.array(tl.distances), np.array(tl.parents)
    t2 = dyng.SsspResult.from_arrays(wres, gw, 5, 1, d, p)
    assert np.array_equal(t2.distances, d)


def test_places_must_match(seq):
    wres = dyng.Resources("sequential", isolation="worker")
    src, dst, w = random_graph(N, M, K, seed=12)
    gl = dyng.Graph.from_edges(src, dst, w, n=N)
    gw = dyng.Graph.from_edges(src, dst, w, n=N, resources=wres)
    with pytest.raises(dyng.InvalidArgument, match="the graph lives in a worker"):
        dyng.SsspResult.compute(seq, gw, 0)
    with pytest.raises(dyng.InvalidArgument, match="the graph lives in this process"):
        dyng.SsspResult.compute(wres, gl, 0)
    other = dyng.Resources("sequential", isolation="worker")
    with pytest.raises(dyng.InvalidArgument, match="another dyng.Resources"):
        dyng.SsspResult.compute(other, gw, 0)
    with pytest.raises(dyng.NotSupported, match="holds one graph"):
        dyng.Graph.from_edges(src, dst, w, n=N, resources=wres)
    with pytest.raises(dyng.NotSupported, match="drop-in policy"):
        dyng.SsspResult.from_arrays(wres, gw, 0, 0, np.zeros(N, np.int64), np.zeros(N, np.int32), delta=5)
    with pytest.raises(dyng.NotSupported, match="copy"):
        dyng.SsspResult.compute(wres, gw, 0).copy()


def test_a_missing_worker_is_a_clear_error(tmp_path, monkeypatch):
    with pytest.raises(dyng.NotSupported, match="no dyng-worker executable found") as e:
        dyng.Resources("sequential", isolation="worker", worker_path=tmp_path / "dyng-worker")
    assert str(tmp_path / "dyng-worker") in str(e.value)
    monkeypatch.setenv("DYNG_WORKER", str(tmp_path / "elsewhere"))
    with pytest.raises(dyng.NotSupported, match="elsewhere"):
        dyng.Resources("sequential", isolation="worker")


def test_an_untrusted_worker_is_refused(tmp_path):
    shipped = Path(dyng._dyng.__file__).parent / "dyng-worker"
    open_dir = tmp_path / "open"
    open_dir.mkdir()
    planted = open_dir / "dyng-worker"
    shutil.copy(shipped, planted)
    os.chmod(planted, 0o777)
    with pytest.raises(dyng.NotSupported, match=r"writable by others \(mode 0777\)"):
        dyng.Resources("sequential", isolation="worker", worker_path=planted)
    os.chmod(planted, 0o755)
    os.chmod(open_dir, 0o777)
    with pytest.raises(dyng.NotSupported, match="its folder .* is writable by others"):
        dyng.Resources("sequential", isolation="worker", worker_path=planted)
    os.chmod(open_dir, 0o755)
    dyng.Resources("sequential", isolation="worker", worker_path=planted).warm_up()
