#!/usr/bin/env bash
# The Python package (python/): builds and installs it into the test venv as `pip install ./python`
# does (without build isolation: the venv holds the pinned maturin), then runs its tests
# (python/tests: the golden corpus through the Python API, zero-copy arrays, bad input, threads,
# worker isolation from the installed package, Dask on a LocalCluster of 2 worker processes, the
# ctypes example's structs against the header) and both Python benchmarks on a few rounds, so
# that they keep working. Run by scripts/test-all.sh after the Rust tests (it uses the release
# binaries they build); skips are recorded in $DYNG_SKIP_LOG.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${DYNG_VENV:?run it through scripts/test-all.sh, or set DYNG_VENV to a venv made by scripts/setup.sh}"
py="$DYNG_VENV/bin/python"
# maturin's PEP 517 hooks run the maturin program of the venv.
export PATH="$DYNG_VENV/bin:$PATH"

echo "== pip install ./python (into $DYNG_VENV)"
"$py" -m pip install --quiet --disable-pip-version-check --no-build-isolation --no-deps --force-reinstall ./python
# The ctypes example's tests load target/release/libdyng.so, which `cargo test` does not make.
echo "== cargo build --release --lib (libdyng.so, for the ctypes example)"
cargo build --release --locked --lib --quiet
echo "== pytest python/tests"
# From a folder without the package's source, so that the installed package is the one tested.
(cd python/tests && "$py" -m pytest -q -rs -p no:cacheprovider .)
echo "== bench/python, a few rounds"
"$py" bench/python/overhead.py --rounds 3 >/dev/null
"$py" bench/python/networkit_compare.py --batches 2 >/dev/null
echo "== python-check: PASS"
