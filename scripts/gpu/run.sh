#!/usr/bin/env bash
# The device checks of the CUDA engine, run from the bundle that scripts/gpu-bundle.sh builds
# (docs/gpu-checks.md). Needs bash, coreutils and python3, the NVIDIA driver and NVRTC 13 (CUDA's
# own or the wheel nvidia-cuda-nvrtc); no Rust toolchain, no network. One PASS/FAIL line per step,
# then a summary; logs in $OUT (default ./gpu-bundle-out), scratch in $DYNG_GPU_WORK (default a
# fresh folder under $TMPDIR). The steps share a budget of $DYNG_GPU_BUDGET_S seconds (470: the
# whole run fits in 8 minutes); the benchmark gets what the checks before it leave.
# Exit status: 0 every step passed; 1 a step failed; 2 stopped at the driver step (no CUDA driver
# or device), with every GPU step not run.
set -uo pipefail
BUNDLE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
OUT="${OUT:-$PWD/gpu-bundle-out}"
BUDGET_S="${DYNG_GPU_BUDGET_S:-470}"
START_S=$(date +%s)
STEPS=(bundle nvrtc driver gpu-tests fence steady-state mirror golden-cuda golden-worker bench)
# Tests of tests/cuda_gpu.rs that have steps of their own (MIRROR_TESTS: every test whose name
# starts with it, at least MIRROR_COUNT of them).
FENCE_TEST=two_threads_two_streams_share_one_pool
ALLOC_TEST=steady_state_allocates_nothing
MIRROR_TESTS=mirror_
MIRROR_COUNT=2
declare -A STATUS=() DETAIL=()

mkdir -p "$OUT/logs"
WORK="${DYNG_GPU_WORK:-$(mktemp -d "${TMPDIR:-/tmp}/dyng-gpu.XXXXXX")}"
mkdir -p "$WORK"

left_s() { echo $((BUDGET_S - ($(date +%s) - START_S))); }
# A timeout for the next command: what the budget leaves, at least 1 s.
budget() { local l; l=$(left_s); echo $((l > 1 ? l : 1)); }

# result STEP PASS|FAIL DETAIL
result() {
    STATUS[$1]=$2
    DETAIL[$1]=$3
    printf '%s %s: %s (%ds)\n' "$2" "$1" "$3" $(($(date +%s) - START_S))
}

header() { echo; echo "=== $1 ($(date +%T), $(left_s) s of the budget left)"; }

# first_line REGEX FILE: prints the first line of FILE matching the bash REGEX (no grep needed).
first_line() {
    local line
    while IFS= read -r line; do
        if [[ $line =~ $1 ]]; then printf '%s\n' "$line"; return 0; fi
    done <"$2"
    return 1
}

# run_tests STEP LOG MIN_PASSED BINARY ARGS...: a bundled test binary; it must exit 0, pass at
# least MIN_PASSED tests and print no SKIPPED notice.
run_tests() {
    local step=$1 log=$2 min=$3 bin=$4
    shift 4
    local limit; limit=$(left_s)
    [ "$limit" -gt 240 ] && limit=240
    if [ "$limit" -le 0 ]; then result "$step" FAIL "no time left in the budget"; return; fi
    timeout "$limit" "$bin" --test-threads=1 --nocapture "$@" >"$log" 2>&1
    local rc=$?
    tail -n 15 "$log"
    local passed=0 line
    while IFS= read -r line; do
        [[ $line =~ ^test\ result:.*\ ([0-9]+)\ passed\; ]] && passed=$((passed + BASH_REMATCH[1]))
    done <"$log"
    if [ "$rc" -ne 0 ]; then
        result "$step" FAIL "exit $rc$([ "$rc" -eq 124 ] && echo ' (timed out)'), see $log"
    elif first_line SKIPPED "$log" >/dev/null; then
        result "$step" FAIL "a test skipped: $(first_line SKIPPED "$log")"
    elif [ "$passed" -lt "$min" ]; then
        result "$step" FAIL "$passed test(s) passed, at least $min expected"
    else
        result "$step" PASS "$passed test(s) passed"
    fi
}

summary() {
    local failed=0 ran=0 s
    echo
    echo "=== summary"
    {
        for s in "${STEPS[@]}"; do
            if [ -n "${STATUS[$s]:-}" ]; then
                ran=$((ran + 1))
                [ "${STATUS[$s]}" = PASS ] || failed=$((failed + 1))
                printf '%-4s %-13s %s\n' "${STATUS[$s]}" "$s" "${DETAIL[$s]}"
            else
                printf '%-4s %-13s %s\n' "-" "$s" "not run"
            fi
        done
        if [ "$failed" -eq 0 ] && [ "$ran" -eq "${#STEPS[@]}" ]; then
            echo "gpu checks: PASS (${#STEPS[@]} steps in $(($(date +%s) - START_S)) s)"
        else
            echo "gpu checks: FAIL ($failed of $ran steps run failed, $((${#STEPS[@]} - ran)) not run; $(($(date +%s) - START_S)) s)"
        fi
    } | tee "$OUT/summary.txt"
}

main() {
    local line
    echo "dyng device checks: bundle $BUNDLE, logs $OUT, scratch $WORK, budget $BUDGET_S s"
    while IFS= read -r line; do echo "  $line"; done <"$BUNDLE/BUILD-INFO"

    header "bundle: files intact, binaries run"
    if ! (cd "$BUNDLE" && sha256sum --quiet -c MANIFEST.sha256) >"$OUT/logs/bundle.log" 2>&1; then
        cat "$OUT/logs/bundle.log"
        result bundle FAIL "files differ from MANIFEST.sha256 (rebuild with scripts/gpu-bundle.sh)"
    elif ! version=$("$BUNDLE/bin/dyng" --version 2>&1); then
        result bundle FAIL "bin/dyng does not run: $version"
    else
        result bundle PASS "$(wc -l <"$BUNDLE/MANIFEST.sha256") files verified, $version"
    fi

    header "nvrtc: find NVRTC 13, compile every kernel (no GPU needed)"
    local nvrtc
    if ! nvrtc=$(python3 "$BUNDLE/lib/cudalibs.py" nvrtc 2>"$OUT/logs/nvrtc-find.log"); then
        cat "$OUT/logs/nvrtc-find.log"
        result nvrtc FAIL "no NVRTC 13 library found (see above); the GPU steps need it: stopped"
        summary
        return 1
    fi
    cat "$OUT/logs/nvrtc-find.log"
    export DYNG_NVRTC_LIB="$nvrtc"
    export LD_LIBRARY_PATH="$(dirname "$nvrtc")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    # The test that reads kernels/ from the source tree ran where the bundle was built.
    DYNG_REQUIRE_NVRTC=1 run_tests nvrtc "$OUT/logs/nvrtc.log" 2 "$BUNDLE/tests/cuda_nvrtc" \
        --skip every_kernel_directory_file_is_embedded

    header "driver: load libcuda.so.1, list the devices (the first GPU step)"
    local driver_dir
    if ! driver_dir=$(python3 "$BUNDLE/lib/cudalibs.py" driver 2>"$OUT/logs/driver.log"); then
        cat "$OUT/logs/driver.log"
        result driver FAIL "$(tail -n 1 "$OUT/logs/driver.log"); the remaining steps need a GPU: stopped"
        [ -n "${DYNG_GPU_WORK:-}" ] || rm -rf "$WORK"
        summary
        return 2
    fi
    cat "$OUT/logs/driver.log"
    [ -n "$driver_dir" ] && export LD_LIBRARY_PATH="$driver_dir:$LD_LIBRARY_PATH"
    command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader
    result driver PASS "$(first_line '^CUDA driver' "$OUT/logs/driver.log")"
    # As the original MOSP-CUDA does: modules load when the context is made, not on first launch.
    export CUDA_MODULE_LOADING="${CUDA_MODULE_LOADING:-EAGER}"
    export DYNG_REQUIRE="${DYNG_REQUIRE:+$DYNG_REQUIRE,}gpu"

    header "gpu-tests: the engine against a canonical Dijkstra (must not skip)"
    local others=() t
    for t in "$BUNDLE"/tests/*; do
        case "$(basename "$t")" in cuda_nvrtc) ;; *) others+=("$t") ;; esac
    done
    for t in "${others[@]}"; do
        run_tests gpu-tests "$OUT/logs/gpu-tests-$(basename "$t").log" 1 "$t" --skip "$FENCE_TEST" --skip "$ALLOC_TEST" \
            --skip "$MIRROR_TESTS"
        [ "${STATUS[gpu-tests]}" = PASS ] || break
    done

    header "fence: two host threads, two streams, one pool"
    run_tests fence "$OUT/logs/fence.log" 1 "$BUNDLE/tests/cuda_gpu" --exact "$FENCE_TEST"

    header "steady-state: no device allocation after the first run"
    run_tests steady-state "$OUT/logs/steady-state.log" 1 "$BUNDLE/tests/cuda_gpu" --exact "$ALLOC_TEST"

    header "mirror: a resident graph's device mirror follows a stream of batches"
    run_tests mirror "$OUT/logs/mirror.log" "$MIRROR_COUNT" "$BUNDLE/tests/cuda_gpu" "$MIRROR_TESTS"

    header "golden-cuda: every golden case on --backend cuda against the expected digests"
    if timeout "$(budget)" python3 "$BUNDLE/lib/replay.py" --dyng "$BUNDLE/bin/dyng" --golden-tar "$BUNDLE/golden.tar.gz" \
        --work "$WORK" --backend cuda --jobs 4 --log "$OUT/logs/golden-cuda.tsv" >"$OUT/logs/golden-cuda.log" 2>&1; then
        result golden-cuda PASS "$(tail -n 1 "$OUT/logs/golden-cuda.log")"
    else
        head -n 40 "$OUT/logs/golden-cuda.log"
        result golden-cuda FAIL "$(tail -n 1 "$OUT/logs/golden-cuda.log")"
    fi

    header "golden-worker: the CUDA engine inside dyng-worker (thesis, handmade, errors, usroads s531)"
    if timeout "$(budget)" python3 "$BUNDLE/lib/replay.py" --dyng "$BUNDLE/bin/dyng" --golden-tar "$BUNDLE/golden.tar.gz" \
        --work "$WORK" --backend cuda --isolation worker --jobs 4 --only thesis/,handmade/,errors/,usroads-k3/s531- \
        --log "$OUT/logs/golden-worker.tsv" >"$OUT/logs/golden-worker.log" 2>&1; then
        result golden-worker PASS "$(tail -n 1 "$OUT/logs/golden-worker.log")"
    else
        head -n 40 "$OUT/logs/golden-worker.log"
        result golden-worker FAIL "$(tail -n 1 "$OUT/logs/golden-worker.log")"
    fi

    header "bench: cuda against parallel --threads ${DYNG_BENCH_THREADS:-16}, usroads, grid 1000^2 and 4000^2"
    [ "$(nproc)" -ge "${DYNG_BENCH_THREADS:-16}" ] || echo "notice: $(nproc) cores for ${DYNG_BENCH_THREADS:-16} threads"
    if python3 "$BUNDLE/lib/devbench.py" --dyng "$BUNDLE/bin/dyng" --data "$BUNDLE/data" --work "$WORK/bench" \
        --out "$OUT/bench" --backends "cuda,parallel:${DYNG_BENCH_THREADS:-16}" \
        --deadline $((START_S + BUDGET_S)) 2>&1 | tee "$OUT/logs/bench.log"; then
        result bench PASS "every run agreed; table in $OUT/bench/bench.md"
    else
        result bench FAIL "$(first_line '^(FAIL|not run|Traceback)' "$OUT/logs/bench.log" || echo "see $OUT/logs/bench.log")"
    fi

    [ -n "${DYNG_GPU_WORK:-}" ] || rm -rf "$WORK"
    summary
    first_line '^gpu checks: PASS' "$OUT/summary.txt" >/dev/null
}

main "$@" 2>&1 | tee "$OUT/run.log"
exit "${PIPESTATUS[0]}"
