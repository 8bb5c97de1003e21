#!/usr/bin/env bash
# The C library end to end, as a user meets it. Installs nothing system-wide: it needs cmake,
# pkg-config, python3, binutils and a C/C++ compiler (gcc with AddressSanitizer); scripts/setup.sh
# installs them.
#   1. scripts/install.sh staged into a DESTDIR, then moved to its prefix (as a package is):
#      no installed file names the staging folder; binaries and the .so carry no debug info
#   2. examples-c: cmake configure (find_package(dyng)), build, ctest (outputs checked; one
#      example runs under DYNG_ISOLATION_WORKER with no DYNG_WORKER set: the installed library
#      finds its own worker)
#   3. pkg-config: a program built with `--cflags --libs` and the .pc's rpath variable runs
#      without LD_LIBRARY_PATH; one linked with `--static --libs` against libdyng.a (Libs.private)
#      runs and does not need libdyng.so
#   4. the installed `dyng` CLI: prep init, then mosp in process and through the worker
#      (byte-identical outputs)
#   5. the installed tree moved elsewhere: cmake finds it there and the worker still starts
#   6. a multiarch install (--libdir lib/x86_64-linux-gnu): cmake and pkg-config
#   7. the Python ctypes example
#   8. the C harness (tests/c/harness.c) under AddressSanitizer + LeakSanitizer, nothing suppressed
# Ends with a summary line "N passed, F failed"; exits non-zero when F > 0. A step that cannot
# run here is recorded in $DYNG_SKIP_LOG (scripts/test-all.sh lists them).
set -uo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/dyng-ffi-check.XXXXXX")"
trap 'rm -rf "$work"' EXIT
prefix="$work/prefix"
passed=0
failed=0
results=()
# Nothing from the caller's environment may point the library at a worker or a library.
unset DYNG_WORKER LD_LIBRARY_PATH

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

skipped() {
    echo "SKIPPED $1: $2"
    [ -z "${DYNG_SKIP_LOG:-}" ] || printf 'ffi-check: %s\tgolden\t%s\n' "$1" "$2" >>"$DYNG_SKIP_LOG"
}

# The shared data corpus, if this checkout has one beside or inside it.
usroads=""
for d in "${DYNG_SHARED_DIR:-}" "$root/shared" "$root/../shared"; do
    if [ -n "$d" ] && [ -f "$d/golden/usroads-k3/graph/graphRowPtr.txt" ]; then
        usroads="$(cd "$d/golden/usroads-k3" && pwd)"
        break
    fi
done

staged_install() {
    local stage="$work/stage"
    bash scripts/install.sh --destdir "$stage" "$prefix" || return 1
    [ ! -e "$prefix" ] || { echo "install wrote outside DESTDIR: $prefix exists"; return 1; }
    if grep -rl --binary-files=text -F "$stage" "$stage"; then
        echo "the files above name the staging folder $stage"
        return 1
    fi
    mv "$stage$prefix" "$prefix" && rm -rf "$stage"
    ls -lL "$prefix/lib" "$prefix/lib/dyng" "$prefix/bin"
    local f
    for f in "$prefix/lib/libdyng.so" "$prefix/lib/dyng/dyng-worker" "$prefix/bin/dyng"; do
        if readelf -S "$f" | grep -q '\.debug_info'; then
            echo "$f is not stripped"
            return 1
        fi
    done
    [ "$(readlink -f "$prefix/bin/dyng-worker")" = "$(readlink -f "$prefix/lib/dyng/dyng-worker")" ] \
        || { echo "bin/dyng-worker does not lead to lib/dyng/dyng-worker"; return 1; }
    # Bad usage is refused with exit 2.
    bash scripts/install.sh --no-such-option "$work/x" && return 1
    [ $? -eq 2 ]
}
step install staged_install

cmake_examples() {
    local build="$1" pfx="$2"
    cmake -S examples-c -B "$build" -DCMAKE_PREFIX_PATH="$pfx" -DCMAKE_BUILD_TYPE=Release \
        -DDYNG_USROADS_DIR="$usroads" &&
        cmake --build "$build" -j 2 &&
        ctest --test-dir "$build" --output-on-failure | tee "$build/ctest.out" &&
        grep -q "sssp_basic_worker .*Passed" "$build/ctest.out"
}
step cmake-examples cmake_examples "$work/build" "$prefix"
[ -n "$usroads" ] || skipped "the usroads example" "the golden corpus is not here (set DYNG_SHARED_DIR)"

pkgconfig_shared() {
    local flags rpath
    flags="$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs dyng)" || return 1
    rpath="$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --variable=rpath dyng)" || return 1
    [ "$rpath" = "-Wl,-rpath,$prefix/lib" ] || { echo "rpath variable: $rpath"; return 1; }
    # shellcheck disable=SC2086 # the flags are words
    cc -std=c99 -Wall -Wextra -Werror examples-c/sssp_basic.c $flags $rpath -o "$work/sssp_pkgconfig" &&
        "$work/sssp_pkgconfig" | grep -q "after: 0 2 4 9 10 11 12" &&
        "$work/sssp_pkgconfig" --worker | grep -q "after: 0 2 4 9 10 11 12"
}
step pkg-config pkgconfig_shared

pkgconfig_static() {
    local flags
    flags="$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --static --libs dyng)" || return 1
    echo "pkg-config --static --libs dyng: $flags"
    # The archive itself, not the .so beside it; every other library comes from Libs.private.
    flags="${flags/-ldyng/-l:libdyng.a}"
    # shellcheck disable=SC2086 # the flags are words
    cc -std=c99 -Wall -Wextra -Werror examples-c/sssp_basic.c $flags -o "$work/sssp_static" || return 1
    if readelf -d "$work/sssp_static" | grep -q 'libdyng'; then
        echo "the static build needs libdyng.so"
        return 1
    fi
    "$work/sssp_static" | grep -q "after: 0 2 4 9 10 11 12"
}
step pkg-config-static pkgconfig_static

installed_cli() {
    local dyng="$prefix/bin/dyng" thesis="examples-c/data/thesis" out="$work/cli"
    "$dyng" --version &&
        "$dyng" prep init "$thesis/graph" "$out/init" &&
        "$dyng" mosp --graph "$thesis/graph" --changes "$thesis/changes" --init "$out/init" \
            --out "$out/in-process" --quiet &&
        "$dyng" mosp --graph "$thesis/graph" --changes "$thesis/changes" --init "$out/init" \
            --out "$out/worker" --quiet --isolation worker &&
        diff -r "$out/in-process" "$out/worker" &&
        [ "$(find "$out/worker" -type f | wc -l)" -eq 9 ]
}
step installed-cli installed_cli

moved_install() {
    mv "$prefix" "$work/moved" || return 1
    local rc=0
    cmake_examples "$work/build-moved" "$work/moved" || rc=1
    mv "$work/moved" "$prefix"
    return $rc
}
step moved-install moved_install

multiarch_install() {
    local pfx="$work/multiarch" flags
    bash scripts/install.sh --libdir lib/x86_64-linux-gnu --bindir bin "$pfx" || return 1
    [ -f "$pfx/lib/x86_64-linux-gnu/dyng/dyng-worker" ] || return 1
    [ -f "$pfx/lib/x86_64-linux-gnu/cmake/dyng/dyngConfig.cmake" ] || return 1
    cmake_examples "$work/build-multiarch" "$pfx" || return 1
    flags="$(PKG_CONFIG_PATH="$pfx/lib/x86_64-linux-gnu/pkgconfig" pkg-config --cflags --libs dyng)" || return 1
    # shellcheck disable=SC2086,SC2046 # the flags are words
    cc -std=c99 examples-c/sssp_basic.c $flags \
        $(PKG_CONFIG_PATH="$pfx/lib/x86_64-linux-gnu/pkgconfig" pkg-config --variable=rpath dyng) \
        -o "$work/sssp_multiarch" && "$work/sssp_multiarch" --worker | grep -q "after: 0 2 4 9 10 11 12"
}
step multiarch-install multiarch_install

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
