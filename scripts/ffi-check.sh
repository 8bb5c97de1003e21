#!/usr/bin/env bash
# The C ABI end to end, as a user meets it. Installs nothing system-wide: it needs cmake, python3 and
# a C/C++ compiler (gcc with AddressSanitizer) on the machine, and pkg-config optionally.
#   1. scripts/install.sh into a temporary prefix
#   2. examples-c: cmake configure (find_package(dyng)), build, ctest (outputs checked)
#   3. pkg-config: compile and run an example with `pkg-config --cflags --libs dyng`
#   4. the Python ctypes example
#   5. the C harness (tests/c/harness.c) under AddressSanitizer + LeakSanitizer, nothing suppressed
# Ends with a summary line "N passed, F failed"; exits non-zero when F > 0.
set -uo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/dyng-ffi-check.XXXXXX")"
trap 'rm -rf "$work"' EXIT
prefix="$work/prefix"
passed=0
failed=0
results=()

# step NAME COMMAND...: runs a step, logging to $work/NAME.log, and records PASS/FAIL.
step() {
    local name="$1"
    shift
    echo "== $name"
    if "$@" >"$work/$name.log" 2>&1; then
        passed=$((passed + 1))
        results+=("PASS $name")
    else
        failed=$((failed + 1))
        results+=("FAIL $name")
        echo "-- $name failed; its log:"
        tail -n 60 "$work/$name.log"
    fi
}

# The shared data corpus, if this checkout has one beside or inside it.
usroads=""
for d in "${DYNG_SHARED_DIR:-}" "$root/shared" "$root/../shared"; do
    if [ -n "$d" ] && [ -f "$d/golden/usroads-k3/graph/graphRowPtr.txt" ]; then
        usroads="$(cd "$d/golden/usroads-k3" && pwd)"
        break
    fi
done

step install bash scripts/install.sh "$prefix"
step cmake-configure cmake -S examples-c -B "$work/build" -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_BUILD_TYPE=Release -DDYNG_USROADS_DIR="$usroads"
step cmake-build cmake --build "$work/build" -j 2
step ctest ctest --test-dir "$work/build" --output-on-failure
if [ -z "$usroads" ]; then
    echo "NOTICE: shared/golden/usroads-k3 not found; the usroads example test was not configured"
fi

pkgconfig_example() {
    local flags
    flags="$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs dyng)" || return 1
    # shellcheck disable=SC2086 # the flags are words
    cc -std=c99 -Wall -Wextra -Werror examples-c/sssp_basic.c $flags -Wl,-rpath,"$prefix/lib" \
        -o "$work/sssp_pkgconfig" && "$work/sssp_pkgconfig" | grep -q "after: 0 2 4 9 10 11 12"
}
if command -v pkg-config >/dev/null; then
    step pkg-config pkgconfig_example
else
    echo "NOTICE: pkg-config not installed; the pkg-config step was skipped"
fi

step python-ctypes python3 examples/python/dyng_ctypes.py "$prefix/lib/libdyng.so"

asan_harness() {
    cc -std=c99 -Wall -Wextra -Werror -g -O1 -fsanitize=address -fno-omit-frame-pointer \
        -I "$prefix/include" tests/c/harness.c -o "$work/harness-asan" \
        -L "$prefix/lib" -ldyng -Wl,-rpath,"$prefix/lib" -lpthread || return 1
    mkdir -p "$work/harness-files"
    # Any ASan/LSan report makes the harness exit non-zero.
    ASAN_OPTIONS=detect_leaks=1:halt_on_error=1 "$work/harness-asan" "$work/harness-files" \
        >"$work/harness.out" || return 1
    cat "$work/harness.out"
    grep -q ", 0 failed" "$work/harness.out"
}
step asan-harness asan_harness
grep -h "^harness:" "$work/asan-harness.log" 2>/dev/null

echo
echo "ffi-check summary:"
printf '  %s\n' "${results[@]}"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
