#!/usr/bin/env bash
# GPU checks of the CUDA backend (needs an NVIDIA GPU, the driver, and NVRTC 13). Budget: < 8 min
# on an H200. Steps:
#   1. build release;  2. GPU tests (canonical trees vs Dijkstra, two threads/two streams on one
#   pool = fence path, no steady-state allocation);  3. golden replay with --backend cuda,
#   compared by sha256 (golden/check.py);  4. benchmark cuda vs parallel on the largest cases.
# NVRTC: set DYNG_NVRTC_LIB, or put the wheel's files under $DYNG_NVRTC_DIR (searched), or have
# libnvrtc.so.13 on the loader path. The machine may be offline: build dependencies must already
# be in ~/.cargo or the carried target/ (cargo runs with --offline when CARGO_OFFLINE=1).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
GOLDEN="${DYNG_GOLDEN:-$ROOT/shared/golden}"
[ -d "$GOLDEN" ] || GOLDEN=/work/shared/golden
OUTROOT="${OUT:-$ROOT/gpu-check-out}"
mkdir -p "$OUTROOT"
OFFLINE=(); [ "${CARGO_OFFLINE:-0}" = 1 ] && OFFLINE=(--offline)
export CUDA_MODULE_LOADING="${CUDA_MODULE_LOADING:-EAGER}"
step() { echo; echo "=== $* ($(date +%T))"; }
fail=0

step "environment"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || echo "nvidia-smi unavailable"
if [ -z "${DYNG_NVRTC_LIB:-}" ]; then
    for d in "${DYNG_NVRTC_DIR:-}" "${XDG_CACHE_HOME:-$HOME/.cache}/dyng-nvrtc" /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
        [ -n "$d" ] && [ -d "$d" ] || continue
        cand="$(find "$d" -name 'libnvrtc.so.13' -not -name '*alt*' 2>/dev/null | head -n 1)"
        if [ -n "$cand" ]; then export DYNG_NVRTC_LIB="$cand"; break; fi
    done
fi
if [ -n "${DYNG_NVRTC_LIB:-}" ]; then
    export LD_LIBRARY_PATH="$(dirname "$DYNG_NVRTC_LIB")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
echo "DYNG_NVRTC_LIB=${DYNG_NVRTC_LIB:-<loader path>}"

step "build (release)"
cargo build --release "${OFFLINE[@]}" --bins --tests 2>&1 | tail -n 3

step "GPU tests (must not skip)"
tests_log="$OUTROOT/gpu-tests.log"
if timeout 180 cargo test --release "${OFFLINE[@]}" --test cuda_gpu -- --nocapture --test-threads=1 2>&1 | tee "$tests_log" | tail -n 20; then
    if grep -q SKIPPED "$tests_log"; then echo "FAIL: GPU tests skipped (no usable device?)"; fail=1; fi
else
    echo "FAIL: GPU tests"; fail=1
fi
timeout 60 cargo test --release "${OFFLINE[@]}" --test cuda_nvrtc -- --nocapture 2>&1 | tail -n 6 || { echo "FAIL: NVRTC test"; fail=1; }

step "golden replay with --backend cuda"
BIN="$ROOT/target/release/dyng"
if ! "$BIN" mosp --help 2>&1 | grep -q -- '--backend'; then
    echo "FAIL: 'dyng mosp' has no --backend option yet (the CUDA engine is not wired into the CLI)"
    fail=1
else
    pass=0; bad=0; work="$OUTROOT/golden"; rm -rf "$work"; mkdir -p "$work"
    while IFS=$'\t' read -r case kind _rest; do
        [ "$case" = case ] && continue
        case "$case" in errors/*|quirks/*) continue;; esac
        dir="$GOLDEN/$case"; [ -f "$dir/cmd.txt" ] || continue
        # Inputs may be gzipped: replay from a copy with every .gz expanded.
        if find "$dir" "$dir/.." -maxdepth 3 -name '*.gz' 2>/dev/null | grep -q .; then
            copy="$work/in/$case"; mkdir -p "$copy"
            cp -r "$dir/." "$copy/"
            [ -d "$dir/../graph" ] && { mkdir -p "$copy/../graph"; cp -r "$dir/../graph/." "$copy/../graph/"; }
            find "$copy" "$copy/.." -maxdepth 3 -name '*.gz' -exec gunzip -f {} + 2>/dev/null || true
            dir="$copy"
        fi
        declare -A kv=(); for tok in $(cat "$dir/cmd.txt"); do kv["${tok%%=*}"]="${tok#*=}"; done
        args=(mosp --graph "$dir/${kv[graph]}" --changes "$dir/${kv[changes]}" --init "$dir/${kv[init]}"
              --source "${kv[source]}" --backend cuda --out "$work/out/$case")
        [ "${kv[k]:-unset}" != unset ] && args+=(-k "${kv[k]}")
        [ -n "${kv[pref]:-}" ] && args+=(--pref "${kv[pref]}")
        [ "${kv[canonicalize]:-no}" = yes ] && args+=(--canonicalize)
        mkdir -p "$work/out/$case"
        if timeout 60 "$BIN" "${args[@]}" >"$work/out/$case.log" 2>&1 \
            && python3 "$GOLDEN/check.py" "$GOLDEN/$case" "$work/out/$case" >"$work/out/$case.check" 2>&1 \
            && ! grep -q FAIL "$work/out/$case.check"; then
            pass=$((pass + 1))
        else
            bad=$((bad + 1)); echo "FAIL: $case (see $work/out/$case.log, .check)"
        fi
        unset kv
    done < "$GOLDEN/MANIFEST.tsv"
    echo "golden: $pass passed, $bad failed"
    [ "$bad" -eq 0 ] || fail=1
fi

step "benchmark: cuda vs parallel (largest golden cases)"
if "$BIN" mosp --help 2>&1 | grep -q -- '--backend'; then
    for case in usroads-k3 bremen-k2; do
        cmd="$(ls "$GOLDEN/$case"/*/cmd.txt 2>/dev/null | head -n 1)"; [ -n "$cmd" ] || continue
        first="$(dirname "$cmd")"; mkdir -p "$OUTROOT/bench"
        declare -A kv=(); for tok in $(cat "$first/cmd.txt"); do kv["${tok%%=*}"]="${tok#*=}"; done
        for backend in parallel cuda; do
            start=$EPOCHREALTIME
            timeout 120 "$BIN" mosp --graph "$first/${kv[graph]}" --changes "$first/${kv[changes]}" --init "$first/${kv[init]}" \
                --source "${kv[source]}" ${kv[k]:+-k ${kv[k]}} ${kv[pref]:+--pref ${kv[pref]}} \
                --backend "$backend" --out "$OUTROOT/bench/$case-$backend" >"$OUTROOT/bench-$case-$backend.log" 2>&1 \
                || echo "bench $case $backend failed (see $OUTROOT/bench-$case-$backend.log)"
            end=$EPOCHREALTIME
            printf '%-12s %-9s %8.3f s  %s\n' "$case" "$backend" "$(python3 -c "print($end - $start)")" \
                "$(grep -h 'RESULT' "$OUTROOT/bench-$case-$backend.log" | tail -n 1 || true)"
        done
        unset kv
    done
else
    echo "skipped: no --backend option in the CLI"
fi

echo
if [ "$fail" -eq 0 ]; then echo "=== gpu-check: PASS"; else echo "=== gpu-check: FAIL"; fi
exit "$fail"
