//! `dyng mosp`: the original `mosp` driver (reference-behaviour §7.4) on the dyng library.
//!
//! Read the graph (or its binary cache), the batch and the K initial trees; adopt the trees
//! (optionally canonicalized); apply the batch once and update the MOSP result; write the output
//! folder; print the report lines; optionally validate against Dijkstra.

use crate::fmt::{ms_since, ns_to_ms};
use crate::{resources, BackendArg};
use clap::Args;
use dyng::io::{batch_files, cache, csr_text, outputs, timing::Timing, trees, CsrText};
use dyng::{Batch, Csr, Error, Graph, MospResult, SsspOptions, SsspResult, WeightLayout};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

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
    /// Objectives used (1..=64); default all objectives of the graph.
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
    /// Binary graph cache (identity-checked MOSPCSR2 layout).
    #[arg(long)]
    pub cache: Option<PathBuf>,
    /// Rewrite each initial parent to the lowest-id tight in-neighbour first.
    #[arg(long)]
    pub canonicalize: bool,
    /// Output folder.
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
    #[arg(long, value_enum, default_value = "parallel")]
    pub backend: BackendArg,
    /// Threads of the parallel engine (0 = all cores).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
}

/// The graph text as read, with K resolved from `-k` for an edgeless graph.
fn read_graph(args: &MospArgs, warnings: &mut Vec<String>) -> dyng::Result<CsrText> {
    let mut text = match &args.cache {
        Some(c) => {
            let loaded = cache::load_or_parse(c, &args.graph)?;
            warnings.extend(loaded.warning);
            loaded.graph
        }
        None => csr_text::read_csr_triplet(&args.graph)?,
    };
    if text.k == 0 {
        text.k = args.k.ok_or_else(|| {
            Error::invalid(
                "the graph has no edges, so the number of objectives cannot be inferred from its values file (pass -k K)",
            )
        })? as usize;
    }
    Ok(text)
}

fn read_trees(dir: &Path, k: usize, n: usize) -> dyng::Result<Vec<(Vec<i64>, Vec<i32>)>> {
    std::thread::scope(|s| {
        let jobs: Vec<_> = (0..k)
            .map(|j| {
                s.spawn(move || -> dyng::Result<(Vec<i64>, Vec<i32>)> {
                    let obj = dir.join(format!("obj{j}"));
                    let d = trees::read_distances(&obj.join("distancesOriginal.txt"), n)?;
                    let p = trees::read_parents(&obj.join("SSSPTreeOriginal.txt"), n)?;
                    Ok((d, p))
                })
            })
            .collect();
        jobs.into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err(Error::Internal("reader thread panicked".into()))))
            .collect()
    })
}

struct Inputs {
    graph: Graph,
    batch: Batch,
    k: usize,
    source: usize,
    read_ms: f64,
    read_graph_ms: f64,
}

fn read_inputs(args: &MospArgs, timing: &mut Timing, warnings: &mut Vec<String>) -> dyng::Result<(Inputs, Vec<(Vec<i64>, Vec<i32>)>)> {
    let t0 = Instant::now();
    let text = read_graph(args, warnings)?;
    let kg = text.k;
    let k = args.k.map_or(kg, |k| (k as usize).min(kg));
    let csr = Csr::from_arrays(text.n, kg, text.row_ptr, text.col_ind, &text.weights, WeightLayout::EdgeMajor)?;
    let read_graph_ms = ms_since(t0);
    timing.stage("read_graph", read_graph_ms);
    let n = csr.n();
    let source = args.source as usize;
    if n == 0 || source >= n {
        return Err(Error::invalid(format!(
            "invalid MOSP update input: source {source} is outside [0, n = {n})"
        )));
    }
    let t1 = Instant::now();
    let (batch, init) = std::thread::scope(|s| {
        let b = s.spawn(|| batch_files::read_batch_dir(&args.changes, n, kg));
        let t = read_trees(&args.init, k, n);
        (b.join().unwrap_or_else(|_| Err(Error::Internal("reader thread panicked".into()))), t)
    });
    let (batch, init) = (batch?, init?);
    timing.stage("read_changes_and_trees", ms_since(t1));
    Ok((
        Inputs {
            graph: Graph::new(csr),
            batch,
            k,
            source,
            read_ms: ms_since(t0),
            read_graph_ms,
        },
        init,
    ))
}

pub fn run(args: MospArgs) -> dyng::Result<ExitCode> {
    let t_start = Instant::now();
    let mut timing = Timing::new();
    let mut warnings = Vec::new();
    let res = resources(args.backend, args.threads)?;
    let (mut inp, init) = read_inputs(&args, &mut timing, &mut warnings)?;
    for w in &warnings {
        eprintln!("{w}");
    }
    let sopt = SsspOptions { delta: args.delta };
    let t_canon = Instant::now();
    let trees = init
        .into_iter()
        .enumerate()
        .map(|(j, (d, p))| SsspResult::from_arrays(&inp.graph, inp.source, j, d, p, args.canonicalize, &sopt))
        .collect::<dyng::Result<Vec<_>>>()?;
    let canon_ms = ms_since(t_canon);
    let mut mosp = MospResult::from_trees(&res, &inp.graph, inp.source, trees, &args.pref)?;
    let validate = args.validate;
    let (_, timings) = dyng::update_timed(&res, &mut inp.graph, &inp.batch.view(), &mut [(&mut mosp).into()])?;
    timing.stage("apply_batch", ns_to_ms(timings.apply_ns));
    timing.stage("prepare", ns_to_ms(timings.prepare_ns));
    let mut compute_ms = 0.0;
    for (j, s) in mosp.objective_stats().iter().enumerate() {
        timing.stage(&format!("obj{j}/sosp_update_compute"), ns_to_ms(s.elapsed_ns));
        compute_ms += ns_to_ms(s.elapsed_ns);
    }
    let cs = mosp.combine_stats();
    timing.stage("combined_graph_compute", ns_to_ms(cs.elapsed_ns));
    compute_ms += ns_to_ms(cs.elapsed_ns);

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
        println!(
            "host   threads {}, read inputs {:.1} ms, canonicalize {:.1} ms, apply batch {:.1} ms, prepare {:.1} ms, write {:.1} ms",
            res.threads(),
            inp.read_ms,
            canon_ms,
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
    let _ = inp.read_graph_ms;
    if let Some(path) = &args.stats {
        write_stats(path, &inp, &mosp)?;
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

/// The deterministic counters, with the keys of the golden corpus' `stats.txt`.
fn write_stats(path: &Path, inp: &Inputs, m: &MospResult) -> dyng::Result<()> {
    let mut s = format!(
        "n={}\nm_updated={}\nK={}\ninserts={}\ndeletes={}\n",
        inp.graph.n(),
        inp.graph.m(),
        inp.k,
        inp.batch.num_insertions(),
        inp.batch.num_deletions()
    );
    for (j, st) in m.objective_stats().iter().enumerate() {
        s += &format!("invalidated_obj{j}={}\n", st.invalidated);
    }
    let cs = m.combine_stats();
    s += &format!(
        "combined_edges={}\ncombined_L={}\ncombined_delta={}\n",
        cs.edges, cs.scale, cs.delta
    );
    std::fs::write(path, s).map_err(|e| Error::io(path, e))
}
