#!/usr/bin/env bash
# Builds the self-contained bundle of the CUDA device checks (docs/gpu-checks.md) into gpu-bundle/
# (ignored by git; $DYNG_GPU_BUNDLE elsewhere): the stripped release dyng and dyng-worker, the
# stripped test binaries of tests/cuda_*.rs (those that need a device or NVRTC), the golden corpus
# with its expected digests, the bundled usroads data, the runner run.sh and its Python helpers
# (scripts/gpu/), BUILD-INFO and MANIFEST.sha256. The device then needs no Rust toolchain and no
# network. The corpus comes from $DYNG_GOLDEN_DIR or ../shared/golden (every group), else from
# tests/golden (the full-output groups only, with a notice). Fails above 40 MiB: the device
# receives the project tree and the bundle together, 64 MiB at most.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
DEST="${DYNG_GPU_BUNDLE:-$ROOT/gpu-bundle}"
LIMIT_MIB=40
# tests/cuda_*.rs that check the host side only (without a driver) and stay out of the bundle.
HOST_ONLY=(cuda_no_driver)

GOLDEN="${DYNG_GOLDEN_DIR:-$ROOT/../shared/golden}"
if [ ! -f "$GOLDEN/MANIFEST.tsv" ] || [ ! -d "$GOLDEN/usroads-k3" ]; then
    echo "notice: no complete golden corpus at $GOLDEN: the bundle holds tests/golden's groups only (usroads-k3, bremen-k2 and special are left out; set DYNG_GOLDEN_DIR)"
    GOLDEN="$ROOT/tests/golden"
fi

gpu_tests=()
for f in tests/cuda_*.rs; do
    t="$(basename "$f" .rs)"
    [[ " ${HOST_ONLY[*]} " == *" $t "* ]] || gpu_tests+=("$t")
done

echo "== building (release): dyng, dyng-worker, ${gpu_tests[*]}"
cargo build --release --bins --quiet
json="$(mktemp)"
trap 'rm -f "$json"' EXIT
cargo test --release --no-run --quiet --message-format=json $(printf -- '--test %s ' "${gpu_tests[@]}") >"$json"

rm -rf "$DEST"
mkdir -p "$DEST/bin" "$DEST/tests" "$DEST/lib" "$DEST/data"
strip -o "$DEST/bin/dyng" target/release/dyng
strip -o "$DEST/bin/dyng-worker" target/release/dyng-worker
# The test executables, by name, from cargo's own messages (their file names carry a hash).
python3 - "$json" "$DEST/tests" "${gpu_tests[@]}" <<'EOF' | while read -r name exe; do strip -o "$DEST/tests/$name" "$exe"; done
import json, sys
path, dest, wanted = sys.argv[1], sys.argv[2], set(sys.argv[3:])
found = {}
for line in open(path):
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["kind"] == ["test"] and m["target"]["name"] in wanted and m.get("executable"):
        found[m["target"]["name"]] = m["executable"]
missing = wanted - found.keys()
if missing:
    sys.exit("cargo built no test executable for: %s" % ", ".join(sorted(missing)))
for name, exe in sorted(found.items()):
    print(name, exe)
EOF
for t in "${gpu_tests[@]}"; do
    [ -x "$DEST/tests/$t" ] || { echo "FAIL: test executable $t missing from the bundle" >&2; exit 1; }
done

install -m 755 scripts/gpu/run.sh "$DEST/run.sh"
install -m 644 scripts/gpu/cudalibs.py scripts/gpu/replay.py scripts/gpu/devbench.py "$DEST/lib/"
install -m 644 data/road-usroads.mtx data/README.md "$DEST/data/"
# Reproducible archive: sorted names, no owners or times.
tar -C "$GOLDEN" --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -cf - . | gzip -9n >"$DEST/golden.tar.gz"

# Case counts per group, of the cases present (tests/golden lists the digest-only groups too).
groups="$(tail -n +2 "$GOLDEN/MANIFEST.tsv" | cut -f1 | while read -r c; do [ -f "$GOLDEN/$c/cmd.txt" ] && echo "${c%%/*}"; done \
    | uniq -c | awk '{printf "%s%s %s", sep, $2, $1; sep=", "}')"
commit="$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)"
git diff --quiet HEAD 2>/dev/null || commit="$commit + uncommitted changes"
{
    echo "dyng $(target/release/dyng --version | awk '{print $2}') at $commit, built $(date -u +%FT%TZ) with $(rustc --version)"
    echo "golden corpus from $GOLDEN: $groups"
    echo "tests: ${gpu_tests[*]}"
} >"$DEST/BUILD-INFO"
(cd "$DEST" && find . -type f ! -name MANIFEST.sha256 | LC_ALL=C sort | xargs sha256sum >MANIFEST.sha256)

bytes="$(du -sb "$DEST" | cut -f1)"
python3 - "$DEST" "$bytes" "$LIMIT_MIB" <<'EOF'
import os, sys
dest, total, limit = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for dirpath, _d, files in sorted(os.walk(dest)):
    for f in sorted(files):
        p = os.path.join(dirpath, f)
        print("  %8.2f MiB  %s" % (os.path.getsize(p) / 2**20, os.path.relpath(p, dest)))
print("bundle: %s, %.1f MiB (limit %d MiB)" % (dest, total / 2**20, limit))
if total > limit * 2**20:
    sys.exit("FAIL: the bundle is above %d MiB; leave golden groups out" % limit)
EOF
echo "run it on the device from the project root: OUT=<log folder> bash ${DEST#"$ROOT"/}/run.sh"
