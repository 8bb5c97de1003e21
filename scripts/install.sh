#!/usr/bin/env bash
# Builds dyng in release mode and installs the C library, its header, its CMake and pkg-config
# packages, the command-line tool and the worker:
#   LIBDIR/libdyng.so.X.Y.Z, libdyng.so.X.Y (the SONAME) and libdyng.so (links), libdyng.a
#   LIBDIR/dyng/dyng-worker       the worker process of DYNG_ISOLATION_WORKER; the library looks
#                                 here first (beside itself), so no DYNG_WORKER is needed
#   LIBDIR/cmake/dyng/            dyngConfig.cmake, dyngConfigVersion.cmake  (find_package(dyng))
#   LIBDIR/pkgconfig/dyng.pc      (pkg-config dyng; `pkg-config --variable=rpath dyng` gives the
#                                 linker flag that lets a program find libdyng.so at run time)
#   BINDIR/dyng, BINDIR/dyng-worker (a link to LIBDIR/dyng/dyng-worker)
#   INCLUDEDIR/dyng.h, PREFIX/share/doc/dyng/ (licences, README)
# Binaries and the shared library are stripped (the static library keeps its symbols, not its
# debug information); --no-strip keeps everything.
#
# Usage: scripts/install.sh [--libdir DIR] [--bindir DIR] [--includedir DIR] [--destdir DIR]
#                           [--no-strip] PREFIX
#   PREFIX is where the files will live; they are written under DESTDIR/PREFIX (DESTDIR, from
#   --destdir or the environment, is empty by default), for packages staged and moved later.
#   Relative directories are taken under PREFIX (defaults lib, bin, include; e.g. --libdir
#   lib/x86_64-linux-gnu). CARGO_TARGET_DIR is honoured; STRIP names the strip program.
set -euo pipefail

usage() {
    echo "usage: $0 [--libdir DIR] [--bindir DIR] [--includedir DIR] [--destdir DIR] [--no-strip] PREFIX" >&2
    exit 2
}

libdir=lib
bindir=bin
includedir=include
destdir="${DESTDIR:-}"
strip=1
prefix=""
while [ $# -gt 0 ]; do
    case "$1" in
        --libdir) libdir="${2:?--libdir needs a value}"; shift 2 ;;
        --libdir=*) libdir="${1#*=}"; shift ;;
        --bindir) bindir="${2:?--bindir needs a value}"; shift 2 ;;
        --bindir=*) bindir="${1#*=}"; shift ;;
        --includedir) includedir="${2:?--includedir needs a value}"; shift 2 ;;
        --includedir=*) includedir="${1#*=}"; shift ;;
        --destdir) destdir="${2:?--destdir needs a value}"; shift 2 ;;
        --destdir=*) destdir="${1#*=}"; shift ;;
        --no-strip) strip=0; shift ;;
        -h | --help) usage ;;
        -*) echo "install.sh: unknown option $1" >&2; usage ;;
        *)
            [ -z "$prefix" ] || { echo "install.sh: one PREFIX only (got $prefix and $1)" >&2; usage; }
            prefix="$1"
            shift
            ;;
    esac
done
[ -n "$prefix" ] || usage
cd "$(dirname "$0")/.."
# PREFIX and DESTDIR as absolute, normalized paths (they need not exist yet).
prefix="$(realpath -m "$prefix")"
[ -z "$destdir" ] || destdir="$(realpath -m "$destdir")"
under_prefix() { case "$1" in /*) realpath -m "$1" ;; *) realpath -m "$prefix/$1" ;; esac; }
libdir="$(under_prefix "$libdir")"
bindir="$(under_prefix "$bindir")"
includedir="$(under_prefix "$includedir")"
cmakedir="$libdir/cmake/dyng"
pkgdir="$libdir/pkgconfig"
docdir="$prefix/share/doc/dyng"

version="$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n1)"
major_minor="${version%.*}"
target_dir="${CARGO_TARGET_DIR:-target}"
release="$target_dir/release"

cargo build --release --lib --bins --quiet

# What a program linking libdyng.a needs besides it: what rustc lists for a static library of
# this toolchain (std's system libraries; dyng links nothing else natively).
nsl_dir="$(mktemp -d "${TMPDIR:-/tmp}/dyng-nsl.XXXXXX")"
trap 'rm -rf "$nsl_dir"' EXIT
echo 'pub fn f() {}' >"$nsl_dir/lib.rs"
libs_private="$("${RUSTC:-rustc}" --crate-type staticlib --crate-name nsl --print native-static-libs \
    -o "$nsl_dir/libnsl.a" "$nsl_dir/lib.rs" 2>&1 | sed -n 's/^note: native-static-libs: //p')"
[ -n "$libs_private" ] || { echo "install.sh: rustc --print native-static-libs printed nothing" >&2; exit 1; }

D="$destdir"
mkdir -p "$D$libdir/dyng" "$D$cmakedir" "$D$pkgdir" "$D$bindir" "$D$includedir" "$D$docdir"
install -m 755 "$release/libdyng.so" "$D$libdir/libdyng.so.$version"
ln -sfn "libdyng.so.$version" "$D$libdir/libdyng.so.$major_minor"
ln -sfn "libdyng.so.$major_minor" "$D$libdir/libdyng.so"
install -m 644 "$release/libdyng.a" "$D$libdir/libdyng.a"
install -m 755 "$release/dyng-worker" "$D$libdir/dyng/dyng-worker"
install -m 755 "$release/dyng" "$D$bindir/dyng"
ln -sfn "$(realpath -m --relative-to="$bindir" "$libdir/dyng/dyng-worker")" "$D$bindir/dyng-worker"
install -m 644 include/dyng.h "$D$includedir/dyng.h"
install -m 644 LICENSE-MIT LICENSE-APACHE README.md "$D$docdir/"
if [ "$strip" -eq 1 ]; then
    "${STRIP:-strip}" --strip-unneeded "$D$libdir/libdyng.so.$version" "$D$libdir/dyng/dyng-worker" "$D$bindir/dyng"
    "${STRIP:-strip}" --strip-debug "$D$libdir/libdyng.a"
fi

# The CMake package finds everything relative to itself, so the installed tree can be moved.
rel() { realpath -m --relative-to="$cmakedir" "$1"; }
sed -e "s|@LIBDIR_FROM_HERE@|$(rel "$libdir")|" -e "s|@INCLUDEDIR_FROM_HERE@|$(rel "$includedir")|" \
    -e "s|@LIBS_PRIVATE@|$libs_private|" cmake/dyngConfig.cmake.in >"$D$cmakedir/dyngConfig.cmake"
install -m 644 cmake/dyngConfigVersion.cmake "$D$cmakedir/"
sed -e "s|@PREFIX@|$prefix|" -e "s|@LIBDIR@|$libdir|" -e "s|@INCLUDEDIR@|$includedir|" \
    -e "s|@VERSION@|$version|" -e "s|@LIBS_PRIVATE@|$libs_private|" dyng.pc.in >"$D$pkgdir/dyng.pc"
chmod 644 "$D$cmakedir/dyngConfig.cmake" "$D$pkgdir/dyng.pc"
echo "installed dyng $version into ${D:+$D (staged for) }$prefix (lib: $libdir, bin: $bindir)"
