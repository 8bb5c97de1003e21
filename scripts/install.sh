#!/usr/bin/env bash
# Builds libdyng in release mode and installs it under PREFIX:
#   PREFIX/lib/libdyng.so.X.Y.Z, libdyng.so.X.Y (SONAME) and libdyng.so (links), libdyng.a
#   PREFIX/include/dyng.h
#   PREFIX/lib/cmake/dyng/dyngConfig.cmake, dyngConfigVersion.cmake   (find_package(dyng))
#   PREFIX/lib/pkgconfig/dyng.pc                                      (pkg-config dyng)
# Usage: scripts/install.sh PREFIX        (CARGO_TARGET_DIR is honoured)
set -euo pipefail
if [ $# -ne 1 ]; then
    echo "usage: $0 PREFIX" >&2
    exit 2
fi
cd "$(dirname "$0")/.."
mkdir -p "$1"
prefix="$(cd "$1" && pwd)"
version="$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n1)"
major_minor="${version%.*}"
target_dir="${CARGO_TARGET_DIR:-target}"

cargo build --release --lib --quiet
mkdir -p "$prefix/lib/cmake/dyng" "$prefix/lib/pkgconfig" "$prefix/include"
install -m 755 "$target_dir/release/libdyng.so" "$prefix/lib/libdyng.so.$version"
ln -sf "libdyng.so.$version" "$prefix/lib/libdyng.so.$major_minor"
ln -sf "libdyng.so.$major_minor" "$prefix/lib/libdyng.so"
install -m 644 "$target_dir/release/libdyng.a" "$prefix/lib/libdyng.a"
install -m 644 include/dyng.h "$prefix/include/dyng.h"
install -m 644 cmake/dyngConfig.cmake cmake/dyngConfigVersion.cmake "$prefix/lib/cmake/dyng/"
sed -e "s|@PREFIX@|$prefix|" -e "s|@VERSION@|$version|" dyng.pc.in > "$prefix/lib/pkgconfig/dyng.pc"
echo "installed dyng $version into $prefix"
