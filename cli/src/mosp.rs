//! `dyng mosp`: the original `mosp` driver (reference-behaviour §7.4) on the dyng library.
//!
//! Read the graph (or its binary cache), the batch and the K initial trees; adopt the trees
//! (optionally canonicalized), checked as the originals check theirs, or verified against the
//! graph with `--validate`; apply the batch once, update the trees and combine them once; write
//! the output folder; print the report lines; optionally validate against Dijkstra. `--timing`
//! records every step, the stages summing to the end-to-end time.

use crate::fmt::{ms_since, ns_to_ms};
use crate::progress::spinner;
use crate::{resources, BackendArg, Failure};
use clap::{Args, ValueEnum};
use dyng::io::driver::case::{read_mosp_inputs, CasePaths, MospInputs};
use dyng::io::driver::outputs::{self, mosp_stats_text};
use dyng::io::driver::timing::Timing;
use dyng::{Error, MospResult, Resources, SsspOptions, SsspResult};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

/// Where the engines run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Isolation {
    InProcess,
    Worker,
}

#[derive(Args, Debug)]
pub struct MospArgs {
    /// Prefix of the CSR text triplet (<prefix>RowPtr.txt, <prefix>ColInd.txt, <prefix>Values.txt).
    #[arg(long)]
    pub graph: PathBuf,
    /// Folder with insert.txt and delete.txt.
    #[arg(long)]
    pub changes: PathBuf,
    /// Folder with obj<k>/distancesOriginal.txt and obj<k>/SSSPTreeOriginal.txt.
    #[arg(long)]
    pub init: PathBuf,
    /// Objectives used: the first K of the graph's (as the original; K above the graph's is
    /// refused, where the original silently used all); default all. An edgeless graph takes
    /// its K from here.
    #[arg(short = 'k', value_parser = clap::value_parser!(u32).range(1..=64))]
    pub k: Option<u32>,
    /// Source vertex of the trees.
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(i64).range(0..=i32::MAX as i64))]
    pub source: i64,
    /// Preference vector p1,..,pK (each >= 1, lcm <= 2^20); default all ones.
    #[arg(long, value_delimiter = ',', value_parser = clap::value_parser!(u32).range(1..))]
    pub pref: Vec<u32>,
    /// Bucket width of the objective searches (default: each objective's own).
    #[arg(long, value_parser = clap::value_parser!(i64).range(1..))]
    pub delta: Option<i64>,
    /// Binary graph cache (MOSPCSR2 layout plus a dyng trailer: the text files' full identity
    /// and an XXH3 checksum). Used only if both hold; a stale cache is rebuilt from the text, a
    /// damaged one too, with a warning on stderr.
    #[arg(long)]
    pub cache: Option<PathBuf>,
    /// Rewrite each initial parent to the lowest-id tight in-neighbour first.
    #[arg(long)]
    pub canonicalize: bool,
    /// Output folder; written all or nothing (a run that fails while writing, e.g. on a full disk,
    /// leaves it as it was).
    #[arg(long, default_value = "mosp-output")]
    pub out: PathBuf,
    /// Write no output files.
    #[arg(long, conflicts_with = "out")]
    pub no_output: bool,
    /// Check every tree against Dijkstra on the updated graph.
    #[arg(long)]
    pub validate: bool,
    /// Write stage timings as CSV.
    #[arg(long)]
    pub timing: Option<PathBuf>,
    /// Print only the RESULT and VALIDATE lines.
    #[arg(long)]
    pub quiet: bool,
    /// Write the deterministic counters as key=value lines (the golden corpus' stats.txt keys).
    #[arg(long)]
    pub stats: Option<PathBuf>,
    /// Engine: `parallel` (all cores, or --threads), `sequential` (the single-threaded
    /// reference) or `cuda` (needs an NVIDIA driver and NVRTC 13). Every engine writes the same
    /// files.
    #[arg(long, value_enum, default_value = "parallel")]
    pub backend: BackendArg,
    /// Run the adoption and the update in this process or in a `dyng-worker` process.
    #[arg(long, value_enum, default_value = "in-process", conflicts_with_all = ["validate", "timing"])]
    pub isolation: Isolation,
    /// Threads of the parallel engine (0 = OMP_NUM_THREADS where it is set, else all cores).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
}

/// Tree j's weight bound when adopted as the originals check theirs: objective j's largest
/// inserted weight of the batch (the graph's own largest weight counts as well, in the library).
pub fn weight_bounds(inp: &MospInputs) -> Vec<i64> {
    let batch = inp.batch.view();
    (0..inp.k)
        .map(|j| batch.ins_weights.iter().skip(j).step_by(batch.k.max(1)).copied().max().unwrap_or(1) as i64)
        .collect()
}

/// Adopts the initial trees: checked as the originals check theirs (one pass each, the batch's
/// largest weights in the distance bound), or verified against the graph with `--validate`.
fn adopt(res: &Resources, inp: &MospInputs, init: Vec<(Vec<i64>, Vec<i32>)>, args: &MospArgs, sopt: &SsspOptions) -> dyng::Result<Vec<SsspResult>> {
    let bounds = weight_bounds(inp);
    init.into_iter()
        .enumerate()
        .map(|(j, (d, p))| {
            if args.validate {
                SsspResult::from_arrays(&inp.graph, inp.source, j, d, p, args.canonicalize, sopt)
            } else {
                SsspResult::from_arrays_unverified(res, &inp.graph, inp.source, j, d, p, args.canonicalize, bounds[j], sopt)
            }
        })
        .collect()
}

pub fn run(args: MospArgs) -> Result<ExitCode, Failure> {
    let t_start = Instant::now();
    let mut timing = Timing::new();
    let res = resources(args.backend, args.threads)?;
    let start_ms = ms_since(t_start);
    let pb = spinner("reading the inputs");
    let paths = CasePaths {
        graph: &args.graph,
        changes: &args.changes,
        init: &args.init,
        cache: args.cache.as_deref(),
    };
    let t_read = Instant::now();
    let mut inp = read_mosp_inputs(&paths, args.k.map(|k| k as usize), args.source as usize)
        .map_err(|e| crate::prep::explain_prefix(&args.graph, e))?;
    if let Some(k) = args.k {
        crate::prep::check_k(k as usize, inp.graph.k())?;
    }
    let read_ms = ms_since(t_read);
    timing.stage("start_threads", start_ms);
    timing.stage("read_graph", ns_to_ms(inp.read_graph_ns));
    timing.stage("read_changes_and_trees", read_ms - ns_to_ms(inp.read_graph_ns));
    if let Some(w) = &inp.warning {
        eprintln!("{w}");
    }
    // The drop-in driver prints `invalidated` as the originals do: exact, whichever way the
    // adaptive update goes. Whether a tree may be recomputed is found out only by an update that
    // would recompute it (see `SsspResult::from_arrays_unverified`).
    let sopt = SsspOptions { delta: args.delta, fallback: dyng::Fallback::AdaptiveCounted };
    if args.isolation == Isolation::Worker {
        pb.finish_and_clear();
        // The worker adopts the trees as `adopt` does without `--validate` (which `--isolation
        // worker` refuses), so a tree is refused at the same step with the same message.
        let job = crate::isolated::Job {
            canonicalize: args.canonicalize,
            preferences: &args.pref,
            delta: args.delta,
            backend: args.backend.backend(),
            out: (!args.no_output).then_some(args.out.as_path()),
            quiet: args.quiet,
            stats: args.stats.as_deref(),
        };
        crate::isolated::run(&mut inp, &job)?;
        return Ok(ExitCode::SUCCESS);
    }
    // Verified trees (--validate) also let the update recompute where that is faster.
    let t_adopt = Instant::now();
    let init = std::mem::take(&mut inp.init);
    let trees = adopt(&res, &inp, init, &args, &sopt)?;
    // The one-shot driver never reads the combination of the trees before the batch: it is
    // combined once, after the update.
    let mut mosp = MospResult::from_trees_deferred(&inp.graph, inp.source, trees, &args.pref)?;
    // One update: nothing changes the combined graph in place after it, and a repair finds the
    // in-edges it pulls without making the graph's in-rows.
    mosp.keep_combined_graph(false);
    inp.graph.keep_in_rows(false);
    let adopt_ms = ms_since(t_adopt);
    let adopt_label = match (args.canonicalize, args.validate) {
        (true, true) => "canonicalize_and_verify_trees",
        (true, false) => "canonicalize_and_check_trees",
        (false, true) => "verify_trees",
        (false, false) => "check_trees",
    };
    timing.stage(adopt_label, adopt_ms);
    let validate = args.validate;
    pb.set_message("updating");
    let t_update = Instant::now();
    let (_, timings) = dyng::update_timed(&res, &mut inp.graph, &inp.batch.view(), &mut [(&mut mosp).into()])?;
    let update_ms = ms_since(t_update);
    timing.stage("apply_batch", ns_to_ms(timings.apply_ns));
    timing.stage("prepare", ns_to_ms(timings.prepare_ns));
    let mut compute_ms = ns_to_ms(timings.trees_ns);
    let mut parts_ms = ns_to_ms(timings.apply_ns) + ns_to_ms(timings.prepare_ns);
    if timings.side_by_side {
        // The trees ran at once, each on a thread: the stage is their wall time, and each
        // objective's own time, which overlaps the others', a counter.
        timing.stage("trees_side_by_side/sosp_update_compute", ns_to_ms(timings.trees_ns));
        for (j, s) in mosp.objective_stats().iter().enumerate() {
            timing.counter(&format!("obj{j}/sosp_update_compute_us"), s.elapsed_ns as f64 / 1e3);
        }
    } else {
        for (j, s) in mosp.objective_stats().iter().enumerate() {
            timing.stage(&format!("obj{j}/sosp_update_compute"), ns_to_ms(s.elapsed_ns));
        }
    }
    let cs = mosp.combine_stats();
    timing.stage("combined_graph_compute", ns_to_ms(cs.elapsed_ns));
    timing.stage("path_costs", ns_to_ms(cs.costs_ns));
    compute_ms += ns_to_ms(cs.elapsed_ns);
    parts_ms += compute_ms + ns_to_ms(cs.costs_ns);
    // The update's own checks and bookkeeping around the timed steps.
    timing.stage("update_checks_and_commit", (update_ms - parts_ms).max(0.0));

    pb.set_message("writing the outputs");
    let t_write = Instant::now();
    if !args.no_output {
        outputs::write_mosp_outputs(&args.out, &mosp).map_err(|e| {
            Error::invalid(format!("cannot write the outputs to {}: {e}", args.out.display()))
        })?;
    }
    let write_ms = ms_since(t_write);
    timing.stage("write_outputs", write_ms);
    let total_ms = ms_since(t_start);
    timing.stage("TOTAL_end_to_end", total_ms);

    pb.finish_and_clear();
    let g = &inp.graph;
    if !args.quiet {
        println!(
            "graph  n={} m={} K={}; batch {} inserts, {} deletes",
            g.n(),
            g.m(),
            inp.k,
            inp.batch.num_insertions(),
            inp.batch.num_deletions()
        );
        // The originals' line, with the adoption's label saying what ran.
        let adopted = if args.canonicalize { "canonicalize + check trees" } else { "check trees" };
        println!(
            "host   threads {}, read inputs {:.1} ms, {adopted} {:.1} ms, apply batch {:.1} ms, prepare {:.1} ms, write {:.1} ms",
            res.threads(),
            read_ms,
            adopt_ms,
            ns_to_ms(timings.apply_ns),
            ns_to_ms(timings.prepare_ns),
            write_ms
        );
        for (j, s) in mosp.objective_stats().iter().enumerate() {
            println!(
                "obj{j}   SOSP update {:.3} ms (invalidated {}, iterations {}, epochs {}, pushes {})",
                ns_to_ms(s.elapsed_ns),
                s.invalidated,
                s.iterations,
                s.epochs,
                s.pushes
            );
        }
        println!(
            "comb   combined graph + SOSP {:.3} ms ({} edges, L={}, delta {}, iterations {}, pushes {})",
            ns_to_ms(cs.elapsed_ns),
            cs.edges,
            cs.scale,
            cs.delta,
            cs.search.iterations,
            cs.search.pushes
        );
    }
    println!(
        "RESULT compute_ms={compute_ms:.3} end_to_end_ms={total_ms:.3} threads={}",
        res.threads()
    );
    if let Some(path) = &args.stats {
        let text = mosp_stats_text(g.n(), g.m(), inp.batch.num_insertions(), inp.batch.num_deletions(), &mosp);
        std::fs::write(path, text).map_err(|e| Error::io(path, e))?;
    }
    let mut ok = true;
    if validate {
        ok = crate::validate::report(g, &mosp, args.canonicalize);
    }
    if let Some(path) = &args.timing {
        if let Err(e) = timing.write(path) {
            eprintln!("Error: cannot write the timing CSV: {e}");
            return Ok(ExitCode::from(1));
        }
    }
    Ok(if ok { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
