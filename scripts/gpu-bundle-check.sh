#!/usr/bin/env bash
# Checks the device bundle without a GPU (docs/gpu-checks.md): builds it with scripts/gpu-bundle.sh
# into a temporary folder (reusing the suite's release build), checks its contents and size, runs
# its replay and benchmark helpers on the CPU engines (with a tampered digest that must fail), then
# rehearses run.sh with only bash, coreutils and python3 on PATH: it must pass the steps that need
# no GPU and stop at the driver step with "no CUDA driver". Needs NVRTC as scripts/nvrtc-check.sh
# installs it.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
B="$tmp/gpu-bundle"
fail() { echo "FAIL: gpu-bundle-check: $*" >&2; exit 1; }

DYNG_GPU_BUNDLE="$B" bash scripts/gpu-bundle.sh >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; fail "scripts/gpu-bundle.sh failed"; }
# gpu-bundle.sh itself fails above its size limit; its last lines give the size.
grep -E '^(notice|bundle):' "$tmp/build.log"

echo "== contents"
for f in run.sh BUILD-INFO MANIFEST.sha256 golden.tar.gz bin/dyng bin/dyng-worker lib/cudalibs.py lib/replay.py \
    lib/devbench.py data/road-usroads.mtx; do
    [ -s "$B/$f" ] || fail "$f is missing or empty"
done
for f in tests/cuda_*.rs; do
    t="$(basename "$f" .rs)"
    [ "$t" = cuda_no_driver ] || [ -x "$B/tests/$t" ] || fail "no test executable for $f in the bundle"
done
[ -x "$B/run.sh" ] || fail "run.sh is not executable"
for f in "$B"/bin/* "$B"/tests/*; do
    [ -x "$f" ] || fail "${f#"$B"/} is not executable"
    nm "$f" 2>&1 | grep -q 'no symbols' || fail "${f#"$B"/} is not stripped"
done
# The tests run.sh gives steps of their own exist under those names.
# (The list is read whole first: grep -q stopping early would break the test binary's pipe.)
listed="$("$B/tests/cuda_gpu" --list)"
for var in FENCE_TEST ALLOC_TEST; do
    name="$(sed -n "s/^$var=//p" "$B/run.sh")"
    grep -qx "$name: test" <<<"$listed" || fail "run.sh's $var=$name is not a test of tests/cuda_gpu.rs"
done
prefix="$(sed -n 's/^MIRROR_TESTS=//p' "$B/run.sh")"
count="$(sed -n 's/^MIRROR_COUNT=//p' "$B/run.sh")"
found="$(grep -c "^$prefix.*: test$" <<<"$listed" || true)"
[ -n "$prefix" ] && [ "$found" -eq "$count" ] || fail "run.sh's MIRROR_TESTS=$prefix names $found tests of tests/cuda_gpu.rs, MIRROR_COUNT=$count"
(cd "$B" && sha256sum --quiet -c MANIFEST.sha256) || fail "MANIFEST.sha256 does not match the files"
listed="$(wc -l <"$B/MANIFEST.sha256")"
present="$(cd "$B" && find . -type f ! -name MANIFEST.sha256 | wc -l)"
[ "$listed" -eq "$present" ] || fail "MANIFEST.sha256 lists $listed files, the bundle holds $present"
python3 - "$B/golden.tar.gz" <<'EOF' || fail "golden.tar.gz is incomplete"
import sys, tarfile
names = set(n.lstrip("./") for n in tarfile.open(sys.argv[1]).getnames())
cases = [l.split("\t", 1)[0] for l in tarfile.open(sys.argv[1]).extractfile("./MANIFEST.tsv").read().decode().splitlines()[1:]]
# Without the complete corpus the bundle holds tests/golden's groups only (gpu-bundle.sh says so).
present = [c for c in cases if c.split("/", 1)[0] in names]
missing = [c for c in present if c + "/cmd.txt" not in names
           or not ({c + "/expected/SHA256SUMS", c + "/expected/error.txt"} & names)]
if "check.py" not in names or not present or missing:
    sys.exit("cases without cmd.txt or expected digests: %s" % missing[:5])
absent = sorted({c.split("/", 1)[0] for c in cases if c not in present})
print("golden.tar.gz: %d cases, each with cmd.txt and its expected digests or error%s"
      % (len(present), "; groups absent: " + ", ".join(absent) if absent else ""))
EOF

echo "== the helpers on the CPU engines"
W="$tmp/work"
python3 "$B/lib/replay.py" --dyng "$B/bin/dyng" --golden-tar "$B/golden.tar.gz" --work "$W" --backend parallel --threads 2 \
    --jobs 2 --only thesis/,handmade/,errors/,quirks/,special/,usroads-k3/s531-local2k,bremen-k2/local1k \
    || fail "the replay fails on the parallel engine"
python3 "$B/lib/replay.py" --dyng "$B/bin/dyng" --golden "$W/golden" --work "$W" --backend parallel --isolation worker \
    --only thesis/,errors/e01 || fail "the replay through dyng-worker fails"
# A replay that cannot fail checks nothing: one wrong digest must fail it.
sums="$W/golden/thesis/b1-pref-default/expected/SHA256SUMS"
{ printf '%064d  %s\n' 0 "$(head -n 1 "$sums" | cut -d' ' -f3)"; tail -n +2 "$sums"; } >"$tmp/sums" && cp "$tmp/sums" "$sums"
if python3 "$B/lib/replay.py" --dyng "$B/bin/dyng" --golden "$W/golden" --work "$W" --backend parallel --only thesis/ >"$tmp/tampered.log"; then
    fail "the replay passed a case whose expected digest was changed"
fi
grep -q '^FAIL thesis/b1-pref-default' "$tmp/tampered.log" || fail "the tampered case is not the one reported"
python3 "$B/lib/devbench.py" --dyng "$B/bin/dyng" --data "$B/data" --work "$W/bench" --out "$tmp/bench" \
    --backends parallel:2,sequential --graphs usroads --kinds safe,local --sizes 2000 >"$tmp/bench.log" \
    || { cat "$tmp/bench.log"; fail "the benchmark helper fails on the CPU engines"; }
[ "$(grep -c '^| usroads ' "$tmp/bench/bench.md")" -eq 2 ] || fail "bench.md lacks its two usroads rows"
echo "devbench: usroads safe and local 2K batches on parallel-2 and sequential, the engines agree"

echo "== rehearsal: run.sh with only bash, coreutils and python3 (no GPU here: it must stop at the driver step)"
if python3 -c 'import ctypes; ctypes.CDLL("libcuda.so.1")' 2>/dev/null; then
    echo "notice: rehearsal skipped: this machine has libcuda.so.1, so run.sh would run the device checks (run it yourself: OUT=DIR bash gpu-bundle/run.sh)"
    exit 0
fi
P="$tmp/path"
mkdir -p "$P"
if command -v dpkg >/dev/null; then
    for tool in $(dpkg -L coreutils | grep -E '/s?bin/[^/]+$'); do ln -sf "$tool" "$P/"; done
    ln -sf "$(command -v bash)" "$P/bash"
    # The interpreter itself, not a version manager's shim script.
    ln -sf "$(python3 -c 'import sys; print(sys.executable)')" "$P/python3"
    path="$P"
else
    echo "notice: no dpkg to list coreutils' programs: the rehearsal runs with the full PATH"
    path="$PATH"
fi
rc=0
OUT="$tmp/out" PATH="$path" DYNG_GPU_WORK="$tmp/rehearsal" bash "$B/run.sh" >"$tmp/rehearsal.log" 2>&1 || rc=$?
summary="$(sed -n '/^=== summary/,$p' "$tmp/rehearsal.log")"
echo "$summary"
[ "$rc" -eq 2 ] || { cat "$tmp/rehearsal.log"; fail "run.sh exited $rc, expected 2 (stopped at the driver step)"; }
echo "$summary" | grep -q '^PASS bundle' || fail "the bundle step did not pass"
echo "$summary" | grep -q '^PASS nvrtc' || fail "the nvrtc step did not pass (is NVRTC installed? scripts/nvrtc-check.sh installs it)"
echo "$summary" | grep -q '^FAIL driver .*no CUDA driver' || fail "the driver step did not stop with 'no CUDA driver'"
[ "$(echo "$summary" | grep -c 'not run$')" -eq 7 ] || fail "steps after the driver step ran"
cmp -s "$tmp/out/summary.txt" <(echo "$summary" | tail -n +2) || fail "\$OUT/summary.txt differs from the printed summary"
echo "== gpu-bundle-check: PASS"
