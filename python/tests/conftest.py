"""Shared fixtures of the Python tests, and visible skips.

A test that cannot run here calls `skip(need, reason)`: pytest reports it as skipped, it is
appended to $DYNG_SKIP_LOG (scripts/test-all.sh lists those at its end), and when $DYNG_REQUIRE
lists `need` the test fails instead (as tests/common/skip.rs does for the Rust tests).
"""

import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

import dyng

ROOT = Path(__file__).resolve().parents[2]
LOCAL_GOLDEN = ROOT / "tests" / "golden"


def required(need):
    return need in [w.strip() for w in os.environ.get("DYNG_REQUIRE", "").replace(" ", ",").split(",")]


def skip(need, reason):
    """Skips the calling test visibly (or fails it when DYNG_REQUIRE lists `need`)."""
    test = os.environ.get("PYTEST_CURRENT_TEST", "pytest").split(" ")[0]
    if required(need):
        pytest.fail(f"{test} needs {need}, which DYNG_REQUIRE lists: {reason}")
    log = os.environ.get("DYNG_SKIP_LOG")
    if log:
        with open(log, "a") as f:
            f.write(f"pytest {test}\t{need}\t{reason}\n")
    pytest.skip(f"(needs {need}) {reason}")


def shared_golden():
    for d in (os.environ.get("DYNG_GOLDEN_DIR"), ROOT.parent / "shared" / "golden"):
        if d and (Path(d) / "MANIFEST.tsv").exists():
            return Path(d)
    return None


def dyng_binary(name="dyng"):
    """The release binary cargo built in this tree (`cargo build --release` makes it)."""
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    exe = target / "release" / name
    return exe if exe.exists() else None


def random_graph(n, m, k, seed=1, wmax=100):
    """A reproducible random graph as (src, dst, weights)."""
    rng = np.random.default_rng(seed)
    src = rng.integers(0, n, m)
    dst = rng.integers(0, n, m)
    w = rng.integers(1, wmax + 1, (m, k))
    return src, dst, w


def random_batch(rng, n, edges, k, count, wmax=100):
    """`count` changes: half re-weights or insertions, half deletions of existing edges."""
    src, dst = edges
    ni = count // 2
    nd = count - ni
    pick = rng.choice(len(src), size=nd, replace=False)
    ins_src = rng.integers(0, n, ni)
    ins_dst = rng.integers(0, n, ni)
    return dyng.Batch(insertions=(ins_src, ins_dst, rng.integers(1, wmax + 1, (ni, k))),
                      deletions=(src[pick], dst[pick]))


@pytest.fixture(scope="session")
def seq():
    return dyng.Resources("sequential")


@pytest.fixture(scope="session")
def par():
    return dyng.Resources("parallel", threads=2)


@pytest.fixture(scope="session")
def usroads_mtx():
    p = ROOT / "data" / "road-usroads.mtx"
    assert p.exists(), f"{p} is part of the tree"
    return p


@pytest.fixture(scope="session")
def usroads(usroads_mtx):
    """usroads with K = 3 weights as `dyng prep mtx2csr IN OUT 3 1 100 12345` draws them."""
    return dyng.Graph.read(usroads_mtx, k=3, weight_range=(1, 100), seed=12345)


def run(cmd, **kw):
    return subprocess.run([str(c) for c in cmd], check=True, capture_output=True, text=True, **kw)
