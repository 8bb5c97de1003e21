#!/usr/bin/env python3
"""The device benchmark: one engine against another on the same machine, in one run.

usage:
  devbench.py --dyng BIN --data DIR --work DIR --out DIR [--backends cuda,parallel:16]
              [--graphs usroads,grid1000,grid4000] [--kinds safe,unsafe,local]
              [--sizes 50000,10000] [--deadline EPOCH_S]

Every input is made on this machine by `dyng prep` (usroads from DIR/road-usroads.mtx, the grids
by `dyng prep gen`), with the generators and seeds of `dyng bench`: K = 3 weights in [1, 100],
batches of 50 % insertions, seed 777, safe and local batches connectivity-safe, local ones inside
the ball of `hops` around a vertex. The trees, the binary graph cache and the batches are made in
parallel (each `dyng prep` is single-threaded). Each batch then runs once per engine through
`dyng mosp --timing` (the engines alternate which runs first); per objective is the mean of the K
objective updates, MOSP is apply + prepare + the K updates + the combined graph (the update
without file I/O), e2e the whole process (reading the inputs, starting the engine, writing).
The two engines' `--stats` counters must agree, and on the two small graphs their output files.
Writes bench.md (the table), bench.csv (every figure) and the logs to --out; exit status 0 when
every run of every graph ran and agreed. A graph that does not fit in the time left before
--deadline is not started, and the run then fails, naming it.
"""

import argparse
import concurrent.futures
import csv
import hashlib
import os
import platform
import shutil
import subprocess
import sys
import time

# name: source (in the giant component), hops of the local ball, seconds it needs on the device
# (prep + 6 batches x 2 engines with margin: the 1000^2 grid's costs on a 2-core host, times 16 for
# the 4000^2 grid, whose mosp runs write no outputs), whether outputs are written and compared, prep.
GRAPHS = {
    "usroads": (531, 100, 40, True, lambda a, g: ["prep", "mtx2csr", os.path.join(a.data, "road-usroads.mtx"), g, "3", "1", "100", "12345"]),
    "grid1000": (0, 110, 60, True, lambda a, g: ["prep", "gen", "grid", g, "--size", "1000"]),
    "grid4000": (0, 110, 240, False, lambda a, g: ["prep", "gen", "grid", g, "--size", "4000"]),
}
# MOSP-CUDA's published figure, the anchor of the goals below.
ANCHOR = "MOSP-CUDA: 105 ms per objective for a 50K batch on road_usa (24M vertices), RTX A5000"
GOAL_MS = 20.0
TIMING_STAGES = ("apply_batch", "prepare", "combined_graph_compute", "TOTAL_end_to_end")


class Failed(Exception):
    pass


def engine(spec):
    """'cuda' | 'parallel:16' | 'sequential' -> (label, dyng mosp arguments)."""
    name, _, threads = spec.partition(":")
    args = ["--backend", name] + (["--threads", threads] if threads else [])
    return (name + ("-" + threads if threads else "")), args


def run(a, argv, log, timeout):
    """Runs `dyng ARGV`, appending its output to LOG; raises Failed with the reason."""
    if timeout <= 0:
        raise Failed("no time left for: dyng %s" % " ".join(argv))
    t = time.time()
    with open(log, "a") as f:
        f.write("$ dyng %s\n" % " ".join(argv))
        f.flush()
        try:
            p = subprocess.run([a.dyng] + argv, stdout=f, stderr=subprocess.STDOUT, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise Failed("timed out after %.0f s: dyng %s" % (timeout, " ".join(argv[:3])))
    if p.returncode != 0:
        raise Failed("exit %d: dyng %s (see %s)" % (p.returncode, " ".join(argv[:3]), log))
    return time.time() - t


def timing(path):
    stages, counters = {}, {}
    with open(path) as f:
        for row in csv.reader(f):
            if len(row) == 3 and row[0] in ("stage", "counter"):
                (stages if row[0] == "stage" else counters)[row[1]] = float(row[2])
    objectives = [v for k, v in sorted(stages.items()) if k.startswith("obj") and k.endswith("/sosp_update_compute")]
    trees_ms = sum(objectives)
    if not objectives:
        # The trees after the first ran side by side (2 threads or more): their wall time is one
        # stage, each objective's own time a counter in microseconds.
        objectives = [v / 1000.0 for k, v in sorted(counters.items()) if k.startswith("obj") and k.endswith("/sosp_update_compute_us")]
        trees_ms = stages.get("trees_side_by_side/sosp_update_compute")
    missing = [s for s in TIMING_STAGES if s not in stages]
    if missing or not objectives or trees_ms is None:
        raise Failed("%s lacks the stages %s (has `dyng mosp --timing` changed?)" % (path, missing or "obj<k>/sosp_update_compute"))
    return {
        "obj_ms": sum(objectives) / len(objectives),
        "obj_max_ms": max(objectives),
        "mosp_ms": stages["apply_batch"] + stages["prepare"] + trees_ms + stages["combined_graph_compute"],
        "e2e_ms": stages["TOTAL_end_to_end"],
    }


def digests(folder):
    out = {}
    for dirpath, _d, files in os.walk(folder):
        for f in files:
            p = os.path.join(dirpath, f)
            with open(p, "rb") as fh:
                out[os.path.relpath(p, folder)] = hashlib.sha256(fh.read()).hexdigest()
    return out


def bench_graph(a, name, engines, rows, log):
    source, hops, _need, compare_outputs, prep = GRAPHS[name]
    work = os.path.join(a.work, name)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    g = os.path.join(work, "graph")
    left = lambda: a.deadline - time.time()
    t0 = time.time()
    run(a, prep(a, g), log, left())
    batches = [(k, s) for s in a.sizes for k in a.kinds]
    jobs = [["prep", "cache", g, g + ".bin"], ["prep", "init", g, os.path.join(work, "init"), "--source", str(source)]]
    for kind, size in batches:
        jobs.append(["prep", "changes", g, os.path.join(work, "%s%d" % (kind, size)), "--changes", str(size),
                     "--seed", "777", "--source", str(source)]
                    + (["--safe"] if kind != "unsafe" else []) + (["--local", str(hops)] if kind == "local" else []))
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, min(len(jobs), os.cpu_count() or 1))) as pool:
        logs = [os.path.join(a.out, "logs", "prep-%s-%d.log" % (name, i)) for i in range(len(jobs))]
        futures = [pool.submit(run, a, j, l, left()) for j, l in zip(jobs, logs)]
        for f in futures:
            f.result()
    print("%s: inputs made in %.1f s" % (name, time.time() - t0), flush=True)
    last = 0.0
    for i, (kind, size) in enumerate(batches):
        # Stop before a batch that would run past the deadline (judged by the one before it),
        # keeping the rows measured so far.
        if left() < 1.2 * last:
            raise Failed("%d of %d batches measured; %.0f s left, the last batch took %.0f s"
                         % (i, len(batches), left(), last))
        t_batch = time.time()
        runs = {}
        order = engines if i % 2 == 0 else engines[::-1]
        for label, eargs in order:
            tag = "%s-%s%d-%s" % (name, kind, size, label)
            out = os.path.join(work, "out-" + label)
            shutil.rmtree(out, ignore_errors=True)
            argv = ["mosp", "--graph", g, "--cache", g + ".bin", "--changes", os.path.join(work, "%s%d" % (kind, size)),
                    "--init", os.path.join(work, "init"), "--source", str(source), "--quiet",
                    "--timing", os.path.join(a.out, "timing", tag + ".csv"),
                    "--stats", os.path.join(a.out, "timing", tag + ".stats")] + eargs
            argv += ["--out", out] if compare_outputs else ["--no-output"]
            run(a, argv, os.path.join(a.out, "logs", "mosp-%s.log" % tag), left())
            r = timing(os.path.join(a.out, "timing", tag + ".csv"))
            r["stats"] = open(os.path.join(a.out, "timing", tag + ".stats")).read()
            r["outputs"] = digests(out) if compare_outputs else None
            runs[label] = r
        first, second = (runs[e[0]] for e in engines)
        agree = first["stats"] == second["stats"] and first["outputs"] == second["outputs"]
        kv = dict(l.split("=", 1) for l in first["stats"].split() if "=" in l)
        rows.append({"graph": name, "n": kv.get("n", "?"), "m_updated": kv.get("m_updated", "?"),
                     "batch": kind, "size": size, "inserts": kv.get("inserts", "?"), "deletes": kv.get("deletes", "?"),
                     "agree": agree, "runs": runs})
        print("%s %s %d: %s" % (name, kind, size, "  ".join("%s obj %.2f ms, MOSP %.2f ms" % (l, runs[l]["obj_ms"], runs[l]["mosp_ms"])
                                                           for l, _ in engines)) + ("" if agree else "  DISAGREE"), flush=True)
        last = time.time() - t_batch
        if not agree:
            raise Failed("%s %s %d: the engines' counters or outputs differ (see %s)" % (name, kind, size, os.path.join(a.out, "timing")))
    shutil.rmtree(work, ignore_errors=True)


def report(a, engines, rows, problems):
    (ca, _), (cb, _) = engines
    lines = ["# Device benchmark: %s against %s" % (ca, cb), "",
             "Host: %s, %d cores; %s. One run per engine and batch; x = %s time / %s time."
             % (platform.node(), os.cpu_count() or 0, machine(), cb, ca), "",
             "| graph | n | batch | %s obj ms | %s obj ms | x | %s MOSP ms | %s MOSP ms | x | %s e2e s | %s e2e s |"
             % (ca, cb, ca, cb, ca, cb),
             "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        A, B = r["runs"][ca], r["runs"][cb]
        lines.append("| %s | %s | %s %dK | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |" % (
            r["graph"], r["n"], r["batch"], r["size"] // 1000, A["obj_ms"], B["obj_ms"], B["obj_ms"] / A["obj_ms"],
            A["mosp_ms"], B["mosp_ms"], B["mosp_ms"] / A["mosp_ms"], A["e2e_ms"] / 1e3, B["e2e_ms"] / 1e3))
    lines.append("")
    if ca == "cuda":
        lines.append("Anchor: " + ANCHOR + ".")
        big = [r for r in rows if r["graph"] == "grid4000" and r["size"] == 50000]
        if big:
            worst = max(r["runs"][ca]["obj_max_ms"] for r in big)
            lines.append("Goal: at most %.0f ms per objective on grid4000, 50K batches: %s (slowest objective %.2f ms): %s."
                         % (GOAL_MS, ", ".join("%s %.2f" % (r["batch"], r["runs"][ca]["obj_ms"]) for r in big), worst,
                            "met" if worst <= GOAL_MS else "not met"))
        else:
            lines.append("Goal: at most %.0f ms per objective on grid4000, 50K batches: not measured." % GOAL_MS)
        fifty = [r for r in rows if r["size"] == 50000]
        faster = [r for r in fifty if r["runs"][ca]["obj_ms"] < r["runs"][cb]["obj_ms"] and r["runs"][ca]["mosp_ms"] < r["runs"][cb]["mosp_ms"]]
        slower = ["%s %s" % (r["graph"], r["batch"]) for r in fifty if r not in faster]
        lines.append("Goal: %s faster than %s on every 50K batch (per objective and MOSP): %d of %d%s: %s."
                     % (ca, cb, len(faster), len(fifty), " (not: %s)" % ", ".join(slower) if slower else "",
                        "met" if fifty and not slower and not problems else "not met"))
    for p in problems:
        lines.append("Not measured: %s." % p)
    text = "\n".join(lines) + "\n"
    open(os.path.join(a.out, "bench.md"), "w").write(text)
    with open(os.path.join(a.out, "bench.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["graph", "n", "m_updated", "batch", "size", "inserts", "deletes", "engine", "obj_mean_ms", "obj_max_ms", "mosp_ms", "e2e_ms", "agree"])
        for r in rows:
            for label, _ in engines:
                x = r["runs"][label]
                w.writerow([r["graph"], r["n"], r["m_updated"], r["batch"], r["size"], r["inserts"], r["deletes"], label,
                            "%.3f" % x["obj_ms"], "%.3f" % x["obj_max_ms"], "%.3f" % x["mosp_ms"], "%.1f" % x["e2e_ms"], r["agree"]])
    print(text, end="")


def machine():
    cpu = "?"
    try:
        cpu = next(l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    gpu = ""
    try:
        gpu = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20).stdout.strip().replace("\n", "; ")
    except (OSError, subprocess.SubprocessError):
        pass
    return cpu + ("; GPU " + gpu if gpu else "")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dyng", required=True)
    ap.add_argument("--data", required=True, help="the folder holding road-usroads.mtx")
    ap.add_argument("--work", required=True, help="scratch space (the 4000^2 grid takes a few GB)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--backends", default="cuda,parallel:16", help="candidate,baseline")
    ap.add_argument("--graphs", default="usroads,grid1000,grid4000")
    ap.add_argument("--kinds", default="safe,unsafe,local")
    # 50K first: the goals are about the 50K batches, and a graph cut short by the deadline keeps
    # the batches it finished.
    ap.add_argument("--sizes", default="50000,10000")
    ap.add_argument("--deadline", type=float, default=0, help="epoch seconds; default one hour from now")
    a = ap.parse_args()
    a.deadline = a.deadline or time.time() + 3600
    a.kinds = [k for k in a.kinds.split(",") if k]
    a.sizes = [int(s) for s in a.sizes.split(",") if s]
    engines = [engine(s) for s in a.backends.split(",") if s]
    graphs = [g for g in a.graphs.split(",") if g]
    unknown = [g for g in graphs if g not in GRAPHS] + [k for k in a.kinds if k not in ("safe", "unsafe", "local")]
    if len(engines) != 2 or unknown:
        ap.error("two engines (candidate,baseline) and known graphs and kinds are needed (unknown: %s)" % unknown)
    for d in ("logs", "timing"):
        os.makedirs(os.path.join(a.out, d), exist_ok=True)
    rows, problems = [], []
    for name in graphs:
        need = GRAPHS[name][2]
        if a.deadline - time.time() < need:
            problems.append("%s (%.0f s left of the budget, about %d s needed)" % (name, a.deadline - time.time(), need))
            print("not run: " + problems[-1], flush=True)
            continue
        try:
            bench_graph(a, name, engines, rows, os.path.join(a.out, "logs", "prep-%s.log" % name))
        except Failed as e:
            problems.append("%s: %s" % (name, e))
            print("FAIL " + problems[-1], flush=True)
    report(a, engines, rows, problems)
    return 0 if not problems and rows else 1


if __name__ == "__main__":
    sys.exit(main())
