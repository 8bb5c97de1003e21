#!/usr/bin/env bash
# The project as a user gets it: a fresh copy of the tree (the files git tracks or would track,
# nothing ignored, no ../shared beside it, no DYNG_* variables), where the README's commands run
# as written:
#   1. "Run the main job" (cargo run --release -- demo): it needs the bundled data only;
#   2. "The C library": install.sh, then the cmake/ctest line (the prefix /opt/dyng replaced by
#      a temporary one);
#   3. "The Python package" (pip install ./python) into a new venv, then the installed package
#      used as a user would: a MOSP result on the bundled data, in process and through the
#      dyng-worker the wheel ships;
#   4. a digest-only golden group: without the corpus it is a recorded skip (DYNG_SKIP_LOG),
#      and with DYNG_REQUIRE=golden a failure;
#   5. scripts/ffi-check.sh in the copy: staged install, CMake, pkg-config (rpath and static
#      link), the installed CLI and worker isolation from the installed library, a moved and a
#      multiarch install, Python, AddressSanitizer.
# Also checks, in this tree, that `cargo package` has nothing to warn about and that the README's
# cmake build folder is ignored by git.
# The copy is built in target/fresh-clone/target (kept between runs, so only dyng itself is
# rebuilt); DYNG_FRESH_DIR moves it. The golden corpus, when this tree has one, is passed to
# ffi-check for its optional usroads example only.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
fresh="${DYNG_FRESH_DIR:-$root/target/fresh-clone}"
copy="$fresh/dyng"

echo "== package metadata and ignores"
# The library's crate, the one published (the CLI's, cli/, is not: publish = false).
if cargo package -p dyng --list --allow-dirty 2>&1 >/dev/null | grep -i "warning"; then
    echo "FAIL: cargo package warns (above)" >&2
    exit 1
fi
git check-ignore -q build || { echo "FAIL: the README's build/ folder is not ignored by git" >&2; exit 1; }

echo "== copying the tree to $copy"
rm -rf "$copy"
mkdir -p "$copy"
git ls-files -z --cached --others --exclude-standard |
    while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
    tar --null -T - -cf - | tar -xf - -C "$copy"

shared=""
for d in "${DYNG_SHARED_DIR:-}" "$root/shared" "$root/../shared"; do
    if [ -n "$d" ] && [ -d "$d/golden" ]; then shared="$(cd "$d" && pwd)"; break; fi
done
# A user's environment: none of the project's variables, the copy's own target folder.
unset DYNG_GOLDEN_DIR DYNG_SHARED_DIR DYNG_WORKER DYNG_NVRTC_LIB LD_LIBRARY_PATH
export CARGO_TARGET_DIR="$fresh/target"

# The shell lines of the first ```sh block after the README heading "$1".
readme_block() {
    awk -v head="$1" '
        $0 == head { found = 1; next }
        found && /^```sh/ { inside = 1; next }
        inside && /^```/ { exit }
        inside { sub(/[[:space:]]+#.*$/, ""); if ($0 ~ /^[[:space:]]*#/ || $0 ~ /^[[:space:]]*$/) next; print }
    ' README.md
}

cd "$copy"
main_job="$(readme_block "## Run the main job")"
[ -n "$main_job" ] || { echo "FAIL: no command under 'Run the main job' in README.md" >&2; exit 1; }
echo "== README, the main job: $main_job"
bash -euo pipefail -c "$main_job" | tee "$fresh/demo.out"
grep -q "^dyng demo: " "$fresh/demo.out" || { echo "FAIL: the demo printed no summary" >&2; exit 1; }

prefix="$fresh/prefix"
rm -rf "$prefix" build
c_library="$(readme_block "## The C library" | sed "s|/opt/dyng|$prefix|g")"
[ -n "$c_library" ] || { echo "FAIL: no commands under 'The C library' in README.md" >&2; exit 1; }
echo "== README, the C library:"
echo "$c_library"
bash -euo pipefail -c "$c_library"

python_package="$(readme_block "## The Python package")"
[ -n "$python_package" ] || { echo "FAIL: no command under 'The Python package' in README.md" >&2; exit 1; }
echo "== README, the Python package: $python_package"
venv="$fresh/venv"
rm -rf "$venv"
python3 -m venv "$venv"
(
    . "$venv/bin/activate"
    bash -euo pipefail -c "$python_package"
    cd "$fresh"  # not the source tree: the installed package is the one used
    python - "$copy/data/road-usroads.mtx" <<'PY'
import sys
from pathlib import Path
import numpy as np
import dyng
worker = Path(dyng._dyng.__file__).parent / "dyng-worker"
assert worker.is_file(), f"the installed package has no {worker}"
g = dyng.Graph.read(sys.argv[1], k=2)
indptr, indices, _ = g.to_csr()
batch = dyng.Batch(deletions=([531], [int(indices[indptr[531]])]), k=2)
costs = []
for isolation in ("in-process", "worker"):
    res = dyng.Resources("sequential", isolation=isolation)
    graph = g if isolation == "in-process" else dyng.Graph.from_csr(*g.to_csr(), resources=res)
    m = dyng.MospResult.compute(res, graph, 531)
    dyng.update(res, graph, batch, [m])
    costs.append(np.array(m.path_costs))
assert np.array_equal(costs[0], costs[1]), "the worker's result differs from the in-process one"
print(f"python package: OK (dyng {dyng.__version__}, worker {worker})")
PY
)

# Without the golden corpus a digest-only group is a recorded skip, and a failure when required.
echo "== a golden group without the corpus: a visible skip"
skips="$fresh/skips.log"
rm -f "$skips"
# CI requires the golden corpus (DYNG_REQUIRE); this check is of the skip, so it runs without that.
env -u DYNG_REQUIRE DYNG_SKIP_LOG="$skips" cargo test --release --quiet --test golden_replay usroads_group
grep -q "^golden_replay: the usroads-k3 group	golden	" "$skips" ||
    { echo "FAIL: the skipped usroads group was not recorded in DYNG_SKIP_LOG" >&2; exit 1; }
if DYNG_REQUIRE=golden cargo test --release --quiet --test golden_replay usroads_group >"$fresh/required.log" 2>&1; then
    echo "FAIL: DYNG_REQUIRE=golden did not make the skip a failure" >&2
    exit 1
fi
grep -q "needs golden, which DYNG_REQUIRE lists" "$fresh/required.log" ||
    { cat "$fresh/required.log"; echo "FAIL: the required skip failed for another reason" >&2; exit 1; }

echo "== scripts/ffi-check.sh in the copy"
DYNG_SHARED_DIR="$shared" bash scripts/ffi-check.sh
echo "== fresh-clone-check: PASS"
