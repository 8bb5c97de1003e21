#!/usr/bin/env python3
"""Side by side: the original MOSP-OpenMP `mosp`, `dyng mosp` and a drop-in client, same cases.

usage:
  side-by-side.py --original PATH [--dropin PATH] [--dyng PATH] [--golden DIR] [--no-golden]
                  [--case DIR]... [--threads 1,2] [--rounds 7] [--min-vertices 10000]
                  [--markdown FILE] [--json FILE]

--original  a built `mosp` of MOSP-OpenMP (branch fix/correctness-perf)
--dropin    a built drop-in client: the original driver with its `sospUpdateCpu` replaced by
            `dyng_sosp_update_arrays` (for example through examples-c/mosp_shim); same command line
            and report lines as the original
--dyng      the `dyng` binary (default: target/release/dyng next to this script's repository)
--golden    the golden corpus (default: $DYNG_GOLDEN_DIR, else ../shared/golden)
--case DIR  any other case, laid out as a golden case: DIR/cmd.txt (k=, source=, pref=,
            canonicalize=, graph=, changes=, init=; paths relative to DIR or absolute) and optionally
            DIR/expected/SHA256SUMS; without expected/ the outputs are compared with the original's
--rounds    timed rounds of every case with at least --min-vertices vertices; the programs run
            interleaved (round by round, case by case, in an order that rotates each round) and
            every figure is the minimum over the rounds. Smaller cases run once per thread count,
            for the output check only.

Every run writes its outputs and its `--timing` CSV into a temporary folder; the outputs are
checked byte for byte (sha256) against expected/SHA256SUMS where the case has it, else against the
original's outputs of the same case. Error cases must exit with the expected status; the corpus'
quirks (invalid inputs the original does not detect) may be refused.

Printed (Markdown): per case and thread count, the ratios dyng mosp / original and drop-in /
original of each stage's minimum, and the output check. Stages are taken from the timing CSVs:
  read      read_* (graph, changes, trees)
  check     the adoption of the initial trees (dyng: check_trees, verify_trees or with
            canonicalize_; the original: canonicalize, untimed by its CSV unless asked for)
  apply     apply_batch
  prepare   prepare (the original: reverse graph and weight columns)
  objective obj<k>/* (the K per-objective updates; the range over k, and objective 0), or
            dyng's trees_side_by_side/* where its trees after the first ran at once (one
            stage for them all: shown as all K against the original's sum)
  combined  combined_graph_* (combined graph and its SSSP)
  write     write_outputs, plus dyng's path_costs (the original computes its path costs inside
            write_outputs)
  other     the rest (dyng: start_threads, update_checks_and_commit)
  total     TOTAL_end_to_end (inside the program) and the wall time of the process
Ratios below 1 mean faster than the original. The machine's load is printed with the table: on a
shared host take the figures from a run at low load.
"""

import argparse
import gzip
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


class Case:
    """A case: its options, its (materialized) input paths, what to check against."""

    def __init__(self, name, folder, tmp_root):
        self.name = name
        self.folder = folder
        cmd = {}
        with open(os.path.join(folder, "cmd.txt")) as f:
            for tok in f.read().split():
                k, _, v = tok.partition("=")
                cmd[k] = v
        self.cmd = cmd
        self.k = None if cmd.get("k", "unset") == "unset" else int(cmd["k"])
        self.source = int(cmd.get("source", "0"))
        self.pref = cmd.get("pref", "")
        self.canonicalize = cmd.get("canonicalize", "no") == "yes"
        resolve = lambda p: p if os.path.isabs(p) else os.path.normpath(os.path.join(folder, p))
        self.graph = resolve(cmd.get("graph", "graph"))
        self.changes = resolve(cmd.get("changes", "changes"))
        self.init = resolve(cmd.get("init", "init"))
        exp = os.path.join(folder, "expected")
        self.sums = None
        self.exit_code = None
        if os.path.exists(os.path.join(exp, "error.txt")):
            with open(os.path.join(exp, "error.txt")) as f:
                self.exit_code = int(f.readline().split("=")[1])
        elif os.path.exists(os.path.join(exp, "SHA256SUMS")):
            self.sums = {}
            with open(os.path.join(exp, "SHA256SUMS")) as f:
                for line in f:
                    digest, rel = line.split()
                    self.sums[rel.lstrip("*")] = digest
        self._materialize(tmp_root)
        self.n = self._vertices()

    def _materialize(self, tmp_root):
        """Decompresses `<name>.gz` inputs (the corpus stores some inputs gzipped)."""
        wanted = [self.graph + s for s in ("RowPtr.txt", "ColInd.txt", "Values.txt")]
        wanted += [os.path.join(self.changes, f) for f in ("insert.txt", "delete.txt")]
        if os.path.isdir(self.init):
            for d in sorted(os.listdir(self.init)):
                for f in ("distancesOriginal.txt", "SSSPTreeOriginal.txt"):
                    wanted.append(os.path.join(self.init, d, f))
        if all(os.path.exists(p) for p in wanted):
            return
        root = os.path.join(tmp_root, "inputs", self.name.replace("/", "_"))
        moved = {}
        for p in wanted:
            rel = os.path.relpath(p, self.folder).replace("..", "up")
            target = os.path.join(root, rel)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            if os.path.exists(p):
                shutil.copyfile(p, target)
            elif os.path.exists(p + ".gz"):
                with gzip.open(p + ".gz", "rb") as src, open(target, "wb") as dst:
                    shutil.copyfileobj(src, dst)
            moved[p] = target
        relocate = lambda p: os.path.join(root, os.path.relpath(p, self.folder).replace("..", "up"))
        self.graph = relocate(self.graph)
        self.changes = relocate(self.changes)
        self.init = relocate(self.init)

    def _vertices(self):
        path = self.graph + "RowPtr.txt"
        if not os.path.exists(path):
            return 0
        with open(path, "rb") as f:
            return max(0, len(f.read().split()) - 1)

    def args(self, out, timing):
        a = ["--graph", self.graph, "--changes", self.changes, "--init", self.init,
             "--source", str(self.source), "--out", out, "--timing", timing]
        if self.k is not None:
            a += ["-k", str(self.k)]
        if self.pref:
            a += ["--pref", self.pref]
        if self.canonicalize:
            a.append("--canonicalize")
        return a


class Program:
    def __init__(self, label, argv, dyng):
        self.label = label
        self.argv = argv
        self.dyng = dyng

    def command(self, case, threads, out, timing):
        extra = ["--threads", str(threads)] if self.dyng else []
        return self.argv + case.args(out, timing) + extra


def read_timing(path):
    stages = []
    if not os.path.exists(path):
        return stages
    with open(path) as f:
        next(f, None)
        for line in f:
            kind, name, value = line.rstrip("\n").split(",", 2)
            if kind == "stage":
                stages.append((name, float(value)))
    return stages


def categorize(stages):
    """Sums the timing rows into the compared stages (see the module doc)."""
    cat = {}
    objectives = {}
    for name, ms in stages:
        if name == "TOTAL_end_to_end":
            cat["total"] = ms
            continue
        if name.startswith("read_"):
            key = "read"
        elif name == "canonicalize" or name.endswith("_trees"):
            key = "check"
        elif name == "apply_batch":
            key = "apply"
        elif name == "prepare":
            key = "prepare"
        elif name.startswith("trees_side_by_side/"):
            # The trees after the first ran at once: only their wall time is a stage.
            key = "objectives"
        elif name.startswith("obj") and "/" in name:
            j = int(name[3:name.index("/")])
            objectives[j] = objectives.get(j, 0.0) + ms
            key = "objectives"
        elif name.startswith("combined_graph"):
            key = "combined"
        elif name in ("write_outputs", "path_costs"):
            key = "write"
        else:
            key = "other"
        cat[key] = cat.get(key, 0.0) + ms
    cat["accounted"] = sum(v for k, v in cat.items() if k != "total")
    return cat, objectives


def run_once(prog, case, threads, tmp):
    out = tempfile.mkdtemp(prefix="out-", dir=tmp)
    timing = os.path.join(out, "timing.csv")
    outdir = os.path.join(out, "o")
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    cmd = prog.command(case, threads, outdir, timing)
    t0 = time.perf_counter()
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    wall = (time.perf_counter() - t0) * 1000.0
    files = {}
    if os.path.isdir(outdir):
        for root, _, names in os.walk(outdir):
            for fn in names:
                full = os.path.join(root, fn)
                files[os.path.relpath(full, outdir)] = sha256(full)
    stages = read_timing(timing)
    shutil.rmtree(out, ignore_errors=True)
    return {"rc": p.returncode, "wall": wall, "files": files, "stages": stages,
            "stderr": p.stderr.decode(errors="replace")[-400:]}


def check(case, run, reference):
    """Whether a run's outputs are the expected ones (see the module doc)."""
    if case.exit_code is not None:
        return run["rc"] == case.exit_code
    if case.name.startswith("quirks/") and run["rc"] != 0:
        return True  # invalid inputs the original does not detect: refusing them is allowed
    if run["rc"] != 0:
        return False
    want = case.sums if case.sums is not None else (reference or {}).get("files")
    if want is None:
        return False
    return all(run["files"].get(rel) == digest for rel, digest in want.items())


def golden_cases(golden):
    names = []
    with open(os.path.join(golden, "MANIFEST.tsv")) as f:
        next(f)
        for line in f:
            names.append(line.split("\t")[0])
    return [(n, os.path.join(golden, n)) for n in names]


def fmt_ratio(r):
    return "-" if r is None else "%.2f" % r


def ratio(a, b):
    return None if a is None or b is None or b <= 0 else a / b


def span(values):
    values = [v for v in values if v is not None]
    if not values:
        return "-"
    lo, hi = min(values), max(values)
    return "%.2f" % lo if abs(hi - lo) < 0.005 else "%.2f-%.2f" % (lo, hi)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--original", required=True)
    ap.add_argument("--dropin")
    ap.add_argument("--dyng", default=os.path.join(REPO, "target", "release", "dyng"))
    ap.add_argument("--golden", default=os.environ.get("DYNG_GOLDEN_DIR", os.path.join(REPO, "..", "shared", "golden")))
    ap.add_argument("--no-golden", action="store_true")
    ap.add_argument("--case", action="append", default=[])
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--min-vertices", type=int, default=10000)
    ap.add_argument("--markdown")
    ap.add_argument("--json")
    a = ap.parse_args()

    progs = [Program("original", [a.original], False)]
    if a.dyng:
        progs.append(Program("dyng", [a.dyng, "mosp"], True))
    if a.dropin:
        progs.append(Program("drop-in", [a.dropin], False))
    for p in progs:
        if not os.access(p.argv[0], os.X_OK):
            sys.exit("side-by-side: %s is not an executable: %s" % (p.label, p.argv[0]))
    threads = [int(t) for t in a.threads.split(",")]
    tmp = tempfile.mkdtemp(prefix="side-by-side-")
    try:
        listed = []
        if not a.no_golden:
            if not os.path.exists(os.path.join(a.golden, "MANIFEST.tsv")):
                sys.exit("side-by-side: no golden corpus at %s (pass --golden or --no-golden)" % a.golden)
            listed += golden_cases(a.golden)
        for d in a.case:
            d = os.path.abspath(d)
            listed.append((os.path.relpath(d, os.path.dirname(os.path.dirname(d))), d))
        cases = [Case(n, d, tmp) for n, d in listed]
        timed = [c for c in cases if c.n >= a.min_vertices and c.exit_code is None]
        small = [c for c in cases if c not in timed]
        runs = {}  # (case, threads, program) -> [run]

        def record(c, t, p, r):
            runs.setdefault((c.name, t, p.label), []).append(r)

        total = len(small) * len(threads) * len(progs) + len(timed) * len(threads) * len(progs) * a.rounds
        done = 0
        for t in threads:
            for c in small:
                for p in progs:
                    record(c, t, p, run_once(p, c, t, tmp))
                    done += 1
        for r in range(a.rounds):
            for t in threads:
                for i, c in enumerate(timed):
                    shift = (r + i) % len(progs)
                    for p in progs[shift:] + progs[:shift]:
                        record(c, t, p, run_once(p, c, t, tmp))
                        done += 1
            print("side-by-side: round %d of %d done (%d of %d runs)" % (r + 1, a.rounds, done, total), file=sys.stderr)

        # The output check of every run.
        checked = {p.label: [0, 0] for p in progs}
        failures = []
        for c in cases:
            for t in threads:
                ref = runs.get((c.name, t, "original"), [None])[0]
                for p in progs:
                    for r in runs.get((c.name, t, p.label), []):
                        ok = check(c, r, ref if p.label != "original" else None)
                        if p.label == "original" and c.sums is None and c.exit_code is None:
                            ok = r["rc"] == 0  # the reference itself
                        checked[p.label][0] += ok
                        checked[p.label][1] += 1
                        if not ok:
                            failures.append("%s %s (%d threads): exit %d %s" % (p.label, c.name, t, r["rc"], r["stderr"].strip().splitlines()[-1:] if r["stderr"].strip() else ""))

        lines = []
        load = os.getloadavg()
        lines.append("Side by side, %d round(s) of every case with n >= %d (minimum of the rounds), interleaved; load average %.2f %.2f %.2f at the end." % (a.rounds, a.min_vertices, *load))
        lines.append("")
        lines.append("Output check (byte for byte, every run): " + ", ".join(
            "%s %d of %d" % (k, v[0], v[1]) for k, v in checked.items()))
        for f in failures[:40]:
            lines.append("- FAIL " + f)
        lines.append("")

        def mins(c, t, label):
            rs = [r for r in runs.get((c.name, t, label), []) if r["rc"] == 0]
            if not rs:
                return None
            cats = [categorize(r["stages"]) for r in rs]
            keys = set().union(*[set(x[0]) for x in cats])
            m = {k: min(x[0][k] for x in cats if k in x[0]) for k in keys}
            objs = set().union(*[set(x[1]) for x in cats])
            m["obj"] = {j: min(x[1][j] for x in cats if j in x[1]) for j in objs}
            m["wall"] = min(r["wall"] for r in rs)
            # The share of the end-to-end time the stages account for, per run (worst run).
            m["accounted_share"] = min(x[0].get("accounted", 0.0) / x[0]["total"] for x in cats if x[0].get("total"))
            return m

        summary = []
        if "dyng" in [p.label for p in progs] and timed:
            lines.append("### dyng mosp / original (below 1: dyng faster)")
            lines.append("")
            lines.append("| case | n | threads | per-objective update | combined step | apply | prepare | read | check | write | end to end | end to end (wall) | stages/total | original e2e ms |")
            lines.append("|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
            for c in timed:
                for t in threads:
                    o, d = mins(c, t, "original"), mins(c, t, "dyng")
                    if o is None or d is None:
                        lines.append("| %s | %d | %d | failed | | | | | | | | | | |" % (c.name, c.n, t))
                        continue
                    per = [ratio(d["obj"].get(j), o["obj"].get(j)) for j in sorted(o["obj"])]
                    # Trees repaired side by side have one stage for them all: their sum against
                    # the original's objectives, one after the other.
                    trees = ratio(d.get("objectives"), o.get("objectives"))
                    per_cell = span(per) if any(v is not None for v in per) else "all K %s (side by side)" % fmt_ratio(trees)
                    row = {
                        "objectives": per,
                        "trees": trees,
                        "combined": ratio(d.get("combined"), o.get("combined")),
                        "apply": ratio(d.get("apply"), o.get("apply")),
                        "prepare": ratio(d.get("prepare", 0.0), o.get("prepare")),
                        "read": ratio(d.get("read"), o.get("read")),
                        "write": ratio(d.get("write"), o.get("write")),
                        "total": ratio(d.get("total"), o.get("total")),
                        "wall": ratio(d["wall"], o["wall"]),
                    }
                    summary.append({"table": "dyng", "case": c.name, "threads": t, "ratios": row, "original": o, "dyng": d})
                    lines.append("| %s | %d | %d | %s | %s | %s | %s | %s | %.1f ms | %s | %s | %s | %.1f %% | %.0f |" % (
                        c.name, c.n, t, per_cell, fmt_ratio(row["combined"]), fmt_ratio(row["apply"]),
                        fmt_ratio(row["prepare"]), fmt_ratio(row["read"]), d.get("check", 0.0), fmt_ratio(row["write"]),
                        fmt_ratio(row["total"]), fmt_ratio(row["wall"]), 100.0 * d["accounted_share"], o.get("total", 0.0)))
            lines.append("")
            lines.append("`check` is dyng's time to adopt the initial trees (the original has no such stage); `prepare` is 0 where dyng builds nothing up front. `stages/total`: the share of dyng's end-to-end time its stages account for (the worst run).")
            lines.append("")
        if "drop-in" in [p.label for p in progs] and timed:
            lines.append("### drop-in client / original (the original driver, its sospUpdateCpu replaced by dyng_sosp_update_arrays)")
            lines.append("")
            lines.append("| case | n | threads | per objective | objective 0 | combined step | end to end (wall) | original per objective ms | drop-in per objective ms |")
            lines.append("|---|---:|---:|---|---:|---:|---:|---|---|")
            for c in timed:
                for t in threads:
                    o, d = mins(c, t, "original"), mins(c, t, "drop-in")
                    if o is None or d is None:
                        lines.append("| %s | %d | %d | failed | | | | | |" % (c.name, c.n, t))
                        continue
                    ks = sorted(o["obj"])
                    per = [ratio(d["obj"].get(j), o["obj"].get(j)) for j in ks]
                    summary.append({"table": "drop-in", "case": c.name, "threads": t, "ratios": {"objectives": per, "wall": ratio(d["wall"], o["wall"])}, "original": o, "drop-in": d})
                    lines.append("| %s | %d | %d | %s | %s | %s | %s | %s | %s |" % (
                        c.name, c.n, t, span(per), fmt_ratio(per[0] if per else None),
                        fmt_ratio(ratio(d.get("combined"), o.get("combined"))), fmt_ratio(ratio(d["wall"], o["wall"])),
                        " ".join("%.2f" % o["obj"][j] for j in ks), " ".join("%.2f" % d["obj"].get(j, float("nan")) for j in ks)))
            lines.append("")
        text = "\n".join(lines)
        print(text)
        if a.markdown:
            with open(a.markdown, "w") as f:
                f.write(text + "\n")
        if a.json:
            with open(a.json, "w") as f:
                json.dump({"summary": summary, "checked": checked, "failures": failures,
                           "runs": {"|".join(map(str, k)): v for k, v in runs.items()}}, f, indent=1, default=str)
        return 0 if not failures else 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
