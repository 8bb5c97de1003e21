#!/usr/bin/env bash
# The whole test suite: every Rust test (unit, golden replay through the library and the CLI,
# properties, contracts, readers' fuzz tests), the API docs (rustdoc, warnings refused), then the
# extra suites that exist in this checkout (C ABI, NVRTC kernel compilation, the GPU bundle). Run from anywhere;
# exits non-zero on the first failure.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --release --all-targets
# The worker's fault-injection matrix: a cargo feature that release builds refuse.
cargo test --features fault-injection --test worker_faults
# Broken intra-doc links and the like fail the suite rather than rot.
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --quiet
for extra in scripts/ffi-check.sh scripts/nvrtc-check.sh scripts/gpu-bundle-check.sh; do
    if [ -x "$extra" ]; then
        echo "== $extra"
        bash "$extra"
    fi
done
