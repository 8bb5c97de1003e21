#!/usr/bin/env bash
# The whole test suite, set-up included: on a fresh machine it first installs what is missing
# (scripts/setup.sh: system packages, the pinned cbindgen, a Python venv), then runs every Rust
# test (unit, golden replay through the library and the CLI, properties, contracts, readers'
# fuzz tests), the worker's fault-injection matrix, the API docs (rustdoc, warnings refused), the
# Python package's tests (scripts/python-check.sh), the NVRTC kernel compilation, a build and rehearsal of the GPU bundle, then the README's commands and the C library checks
# (scripts/ffi-check.sh) on a fresh copy of the tree (scripts/fresh-clone-check.sh). Run from
# anywhere; exits non-zero on the first failure.
#
# Tests that cannot run here (no golden corpus, no GPU, ...) are skipped visibly: each is listed
# at the end. DYNG_REQUIRE=golden,cbindgen,... turns the skips of those kinds into failures.
set -euo pipefail
cd "$(dirname "$0")/.."

DYNG_SKIP_LOG="$(mktemp "${TMPDIR:-/tmp}/dyng-skips.XXXXXX")"
export DYNG_SKIP_LOG
report_skips() {
    local rc=$?
    echo
    if [ -s "$DYNG_SKIP_LOG" ]; then
        echo "== skipped checks ($(sort -u "$DYNG_SKIP_LOG" | wc -l)); DYNG_REQUIRE=<need>,... makes them fail:"
        sort -u "$DYNG_SKIP_LOG" | awk -F'\t' '{ printf "  SKIPPED %s (needs %s): %s\n", $1, $2, $3 }'
    else
        echo "== skipped checks: none"
    fi
    rm -f "$DYNG_SKIP_LOG"
    if [ "$rc" -eq 0 ]; then echo "== test-all: PASS"; else echo "== test-all: FAIL (exit $rc)"; fi
    exit "$rc"
}
trap report_skips EXIT

. scripts/setup.sh

cargo test --release --all-targets
# The examples in the API docs: `--all-targets` leaves doctests out.
cargo test --release --doc
# The worker's fault-injection matrix: a cargo feature that release builds refuse.
cargo test --features fault-injection --test worker_faults
# Broken intra-doc links and the like fail the suite rather than rot.
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --quiet
echo "== scripts/python-check.sh"
bash scripts/python-check.sh
echo "== scripts/nvrtc-check.sh"
bash scripts/nvrtc-check.sh
# It ran the kernel compilation with NVRTC required, which the first pass may have skipped.
sed -i '/^cuda_nvrtc /d' "$DYNG_SKIP_LOG"
echo "== scripts/gpu-bundle-check.sh"
bash scripts/gpu-bundle-check.sh
echo "== scripts/fresh-clone-check.sh"
bash scripts/fresh-clone-check.sh
