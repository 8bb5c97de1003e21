#!/usr/bin/env python3
"""Replays the golden corpus through `dyng mosp` and compares every run with the expected digests.

usage:
  replay.py --dyng BIN (--golden DIR | --golden-tar FILE) --work DIR [--backend cuda]
            [--threads N] [--isolation in-process|worker] [--only PREFIX,...] [--jobs N]
            [--timeout-s S] [--log FILE]

The corpus' own check.py judges each run (sha256 of every output file, the `--stats` counters,
the exit status of error cases). Error cases must also print `Error: ` on stderr; the two quirk
cases, whose invalid inputs the original accepts, must be rejected the same way (dyng is stricter;
cli/tests/cli_golden.rs asserts the messages). `.gz` inputs are expanded in the work copy. Prints one
line per failing case and a summary; exit status 0 when every selected case passed.
"""

import argparse
import concurrent.futures
import gzip
import os
import shutil
import subprocess
import sys
import tarfile
import time

# Groups whose expected outcome is a rejection (exit 1, `Error: ` on stderr).
REJECTED = ("errors/", "quirks/")


def expand(golden_tar, work):
    """Extracts the corpus into work/golden once and decompresses every .gz input there."""
    root = os.path.join(work, "golden")
    done = os.path.join(root, ".expanded")
    if os.path.exists(done):
        return root
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(root)
    with tarfile.open(golden_tar) as t:
        for member in t.getmembers():
            # The archive is built by scripts/gpu-bundle.sh; refuse anything that would land outside.
            if member.name.startswith("/") or ".." in member.name.split("/"):
                raise SystemExit("refusing archive member %r" % member.name)
        t.extractall(root)
    for dirpath, _dirs, files in os.walk(root):
        for f in files:
            if f.endswith(".gz"):
                src = os.path.join(dirpath, f)
                with gzip.open(src, "rb") as i, open(src[:-3], "wb") as o:
                    shutil.copyfileobj(i, o)
                os.remove(src)
    open(done, "w").close()
    return root


def cases(golden):
    """(name, folder) of every case of MANIFEST.tsv, in its order."""
    out = []
    with open(os.path.join(golden, "MANIFEST.tsv")) as f:
        for line in f:
            name = line.split("\t", 1)[0]
            if name and name != "case":
                out.append((name, os.path.join(golden, name)))
    return out


def command(a, case_dir, out):
    kv = dict(tok.split("=", 1) for tok in open(os.path.join(case_dir, "cmd.txt")).read().split() if "=" in tok)
    args = [a.dyng, "mosp",
            "--graph", os.path.join(case_dir, kv["graph"]),
            "--changes", os.path.join(case_dir, kv["changes"]),
            "--init", os.path.join(case_dir, kv["init"]),
            "--source", kv["source"], "--quiet", "--backend", a.backend,
            "--out", out, "--stats", out + ".stats"]
    if kv.get("k", "unset") != "unset":
        args += ["-k", kv["k"]]
    if kv.get("pref"):
        args += ["--pref", kv["pref"]]
    if kv.get("canonicalize") == "yes":
        args.append("--canonicalize")
    if a.threads:
        args += ["--threads", str(a.threads)]
    if a.isolation != "in-process":
        args += ["--isolation", a.isolation]
    return args


def run_case(a, golden, name, case_dir):
    """(name, ok, detail, seconds)."""
    out = os.path.join(a.work, "out", a.tag, name)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(os.path.dirname(out), exist_ok=True)
    t = time.time()
    try:
        p = subprocess.run(command(a, case_dir, out), capture_output=True, text=True, timeout=a.timeout_s)
    except subprocess.TimeoutExpired:
        return name, False, "timed out after %d s" % a.timeout_s, time.time() - t
    took = time.time() - t
    if name.startswith(REJECTED):
        if p.returncode == 1 and p.stderr.startswith("Error: "):
            if name.startswith("errors/"):
                chk = subprocess.run([sys.executable, os.path.join(golden, "check.py"), case_dir, out,
                                      "--exit-code", str(p.returncode)], capture_output=True, text=True)
                if chk.returncode != 0:
                    return name, False, chk.stdout.strip(), took
            return name, True, "", took
        return name, False, "expected a rejection (exit 1, Error: on stderr), got exit %d: %s" % (
            p.returncode, (p.stderr or p.stdout).strip()[:300]), took
    if p.returncode != 0:
        return name, False, "exit %d: %s" % (p.returncode, p.stderr.strip()[:300]), took
    chk = subprocess.run([sys.executable, os.path.join(golden, "check.py"), case_dir, out,
                          "--stats", out + ".stats", "--exit-code", "0"], capture_output=True, text=True)
    if chk.returncode != 0:
        bad = [l for l in chk.stdout.splitlines() if l.startswith("FAIL")]
        return name, False, "; ".join(bad)[:500], took
    shutil.rmtree(out, ignore_errors=True)  # the big groups' outputs are tens of MB each
    return name, True, "", took


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dyng", required=True)
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--golden", help="an expanded corpus folder")
    src.add_argument("--golden-tar", help="the bundle's golden.tar.gz")
    ap.add_argument("--work", required=True)
    ap.add_argument("--backend", default="cuda")
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--isolation", default="in-process", choices=["in-process", "worker"])
    ap.add_argument("--only", default="", help="comma-separated case-name prefixes (default: every case)")
    ap.add_argument("--jobs", type=int, default=4)
    ap.add_argument("--timeout-s", type=int, default=120)
    ap.add_argument("--log", help="write one line per case (status, seconds, name, detail) here")
    a = ap.parse_args()
    a.tag = "%s-%s" % (a.backend, a.isolation)
    golden = a.golden or expand(a.golden_tar, a.work)
    selected = cases(golden)
    if a.only:
        prefixes = tuple(p for p in a.only.split(",") if p)
        selected = [c for c in selected if c[0].startswith(prefixes)]
    # A bundle built without the complete corpus lacks the digest-only groups (BUILD-INFO says so).
    absent = [c for c in selected if not os.path.exists(os.path.join(c[1], "cmd.txt"))]
    selected = [c for c in selected if c not in absent]
    if absent:
        print("notice: %d selected cases are not in this copy of the corpus, not replayed: groups %s"
              % (len(absent), ", ".join(sorted({n.split("/", 1)[0] for n, _ in absent}))))
    if not selected:
        print("FAIL no golden case selected (--only %r)" % a.only)
        return 1
    t = time.time()
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as pool:
        results = list(pool.map(lambda c: run_case(a, golden, *c), selected))
    failed = [r for r in results if not r[1]]
    for name, _ok, detail, _s in failed:
        print("FAIL %s: %s" % (name, detail))
    if a.log:
        with open(a.log, "w") as f:
            for name, ok, detail, s in results:
                f.write("%s\t%.2f\t%s\t%s\n" % ("PASS" if ok else "FAIL", s, name, detail))
    groups = sorted({n.split("/", 1)[0] for n, _ in selected})
    slowest = max(results, key=lambda r: r[3])
    print("golden replay (--backend %s, %s): %d cases (%s), %d passed, %d failed%s in %.1f s (slowest %s %.1f s)"
          % (a.backend, a.isolation, len(results), ", ".join(groups), len(results) - len(failed), len(failed),
             ", %d absent" % len(absent) if absent else "", time.time() - t, slowest[0], slowest[3]))
    return 0 if not failed else 1


if __name__ == "__main__":
    sys.exit(main())
