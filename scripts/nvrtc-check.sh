#!/usr/bin/env bash
# Compiles every kernel in kernels/ with NVRTC 13.0 (PTX and sm_90 cubin). No GPU needed.
# Finds the pinned NVRTC wheel in $DYNG_NVRTC_DIR (scripts/setup.sh's venv when run by test-all.sh;
# default ~/.cache/dyng-nvrtc, installed there with pip --target when missing), points
# dyng at it and runs tests/cuda_nvrtc.rs with DYNG_REQUIRE_NVRTC=1, so a missing library FAILS
# here instead of skipping.
set -euo pipefail
cd "$(dirname "$0")/.."

# The pin lives in the test suite's Python requirements (scripts/setup.sh installs them).
WHEEL="$(grep -m1 '^nvidia-cuda-nvrtc==' scripts/requirements-test.txt)"
TARGET="${DYNG_NVRTC_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/dyng-nvrtc}"
PYTHON="${PYTHON:-python3}"

if ! ls "$TARGET"/nvidia/*/lib/libnvrtc.so.13 >/dev/null 2>&1 && ! ls "$TARGET"/nvidia/cuda_nvrtc/lib/libnvrtc.so.13 >/dev/null 2>&1; then
    echo "== installing $WHEEL into $TARGET"
    "$PYTHON" -m pip install --quiet --no-deps --target "$TARGET" "$WHEEL"
fi

LIB="$(find "$TARGET" -name 'libnvrtc.so.13' -not -name '*alt*' | head -n 1)"
if [ -z "$LIB" ]; then
    echo "FAIL: libnvrtc.so.13 not found under $TARGET after installing $WHEEL" >&2
    exit 1
fi
echo "== NVRTC: $LIB"
export DYNG_NVRTC_LIB="$LIB"
# Belt and braces: NVRTC also finds its builtins library through the loader path.
export LD_LIBRARY_PATH="$(dirname "$LIB")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export DYNG_REQUIRE_NVRTC=1

cargo test --release --test cuda_nvrtc -- --nocapture
echo "== nvrtc-check: PASS"
