//! `dyng prep`: the original `mospPrep` (reference-behaviour §7.5) plus synthetic graphs.
//!
//! Every command prints its report lines and ends with `<command> done in <ms> ms (rc=<rc>)`.
//! Outputs come from single-threaded, seeded code and are byte-stable.

use crate::fmt::{g6, ms_since};
use clap::{Args, Subcommand, ValueEnum};
use dyng::graph::dijkstra::dijkstra;
use dyng::io::changegen::{generate_changes, ChangeMode, ChangeOptions};
use dyng::io::{batch_files, cache, csr_text, graphgen, mtx, trees, CsrText};
use dyng::{apply_batch, Csr, Error, WeightLayout};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

#[derive(Subcommand, Debug)]
pub enum PrepCommand {
    /// Convert a Matrix Market file to the CSR text triplet with K seeded weights per edge.
    Mtx2csr {
        input: PathBuf,
        out_prefix: PathBuf,
        #[command(flatten)]
        w: SeededWeights,
    },
    /// Append seeded objectives to a CSR graph (keeps the existing ones).
    Widen {
        in_prefix: PathBuf,
        out_prefix: PathBuf,
        #[command(flatten)]
        w: SeededWeights,
    },
    /// Write the binary graph cache of a CSR graph.
    Cache { csr_prefix: PathBuf, binary_path: PathBuf },
    /// Generate a change batch (the originals' generator, bit for bit).
    Changes(ChangesArgs),
    /// Dijkstra trees of every objective: <out>/obj<k>/{distances,SSSPTree}Original.txt.
    Init {
        csr_prefix: PathBuf,
        out_dir: PathBuf,
        #[arg(long, default_value_t = 0)]
        source: usize,
        #[arg(short = 'k', value_parser = clap::value_parser!(u32).range(1..=64))]
        k: Option<u32>,
    },
    /// Expected updated trees (Dijkstra on the updated graph): <out>/obj<k>/*Updated.txt.
    Expected {
        csr_prefix: PathBuf,
        changes_dir: PathBuf,
        out_dir: PathBuf,
        #[arg(long, default_value_t = 0)]
        source: usize,
        #[arg(short = 'k', value_parser = clap::value_parser!(u32).range(1..=64))]
        k: Option<u32>,
    },
    /// Generate a synthetic graph (road-like grid or random geometric graph) as a CSR triplet.
    Gen(GenArgs),
}

/// K objectives of seeded weights in [wmin, wmax] (the originals' positional arguments).
#[derive(Args, Debug)]
pub struct SeededWeights {
    #[arg(value_parser = clap::value_parser!(u32).range(1..=64))]
    k: u32,
    #[arg(value_parser = clap::value_parser!(i32).range(1..))]
    wmin: i32,
    #[arg(value_parser = clap::value_parser!(i32).range(1..))]
    wmax: i32,
    seed: u32,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum ModeArg {
    Uniform,
    Targeted,
    Reweight,
    Increase,
}

#[derive(Args, Debug)]
pub struct ChangesArgs {
    csr_prefix: PathBuf,
    out_dir: PathBuf,
    #[arg(long, default_value_t = 0)]
    changes: usize,
    #[arg(long, default_value_t = 50.0)]
    ins: f64,
    #[arg(long, value_enum, default_value = "uniform")]
    mode: ModeArg,
    #[arg(long, default_value_t = 0)]
    local: usize,
    #[arg(long)]
    safe: bool,
    #[arg(long, default_value_t = 1)]
    seed: u32,
    #[arg(long, default_value_t = 0)]
    source: usize,
    #[arg(long, default_value_t = 1)]
    wmin: i32,
    #[arg(long, default_value_t = 100)]
    wmax: i32,
    #[arg(short = 'k', value_parser = clap::value_parser!(u32).range(1..=64))]
    k: Option<u32>,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum GenKind {
    Grid,
    Rgg,
}

#[derive(Args, Debug)]
pub struct GenArgs {
    #[arg(value_enum)]
    kind: GenKind,
    out_prefix: PathBuf,
    /// Grid width (grid) or log2 of the vertex count (rgg).
    #[arg(long, default_value_t = 1000)]
    size: usize,
    /// Grid height (grid only; default = width).
    #[arg(long)]
    height: Option<usize>,
    #[arg(short = 'k', default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=64))]
    k: u32,
    #[arg(long, default_value_t = 1)]
    wmin: i32,
    #[arg(long, default_value_t = 100)]
    wmax: i32,
    #[arg(long, default_value_t = 12345)]
    seed: u32,
}

/// Reads a CSR triplet as a graph; an edgeless graph takes K from `-k`.
pub fn read_csr(prefix: &Path, k: Option<u32>) -> dyng::Result<Csr> {
    let t = csr_text::read_csr_triplet(prefix)?;
    csr_from_text(t, k)
}

pub fn csr_from_text(mut t: CsrText, k: Option<u32>) -> dyng::Result<Csr> {
    if t.k == 0 {
        t.k = k.ok_or_else(|| {
            Error::invalid("the graph has no edges, so the number of objectives cannot be inferred from its values file (pass -k K)")
        })? as usize;
    }
    Csr::from_arrays(t.n, t.k, t.row_ptr, t.col_ind, &t.weights, WeightLayout::EdgeMajor)
}

fn check_source(g: &Csr, source: usize) -> dyng::Result<()> {
    if source >= g.n() {
        return Err(Error::invalid(format!(
            "source {source} is outside [0, n = {})",
            g.n()
        )));
    }
    Ok(())
}

/// Dijkstra trees of every objective written as `<dir>/obj<k>/<dist_name>`, `<tree_name>`.
fn write_dijkstra_trees(g: &Csr, source: usize, dir: &Path, dist_name: &str, tree_name: &str) -> dyng::Result<()> {
    for j in 0..g.k() {
        let t = Instant::now();
        let (d, p) = dijkstra(g, j, source);
        println!("dijkstra obj{j}: {} ms", g6(ms_since(t)));
        let obj = dir.join(format!("obj{j}"));
        std::fs::create_dir_all(&obj).map_err(|e| Error::io(&obj, e))?;
        trees::write_distances(&obj.join(dist_name), &d)?;
        trees::write_parents(&obj.join(tree_name), &p)?;
    }
    Ok(())
}

fn change_options(a: &ChangesArgs, g: &Csr) -> ChangeOptions {
    ChangeOptions {
        changes: a.changes,
        insert_pct: a.ins,
        mode: match a.mode {
            ModeArg::Uniform => ChangeMode::Uniform,
            ModeArg::Targeted => ChangeMode::Targeted,
            ModeArg::Reweight => ChangeMode::Reweight,
            ModeArg::Increase => ChangeMode::Increase,
        },
        wmin: a.wmin,
        wmax: a.wmax,
        seed: a.seed,
        local_hops: a.local,
        safe: a.safe,
        source: a.source,
        k: a.k.map_or(g.k(), |k| k as usize),
    }
}

fn name(cmd: &PrepCommand) -> &'static str {
    match cmd {
        PrepCommand::Mtx2csr { .. } => "mtx2csr",
        PrepCommand::Widen { .. } => "widen",
        PrepCommand::Cache { .. } => "cache",
        PrepCommand::Changes(_) => "changes",
        PrepCommand::Init { .. } => "init",
        PrepCommand::Expected { .. } => "expected",
        PrepCommand::Gen(_) => "gen",
    }
}

pub fn run(cmd: PrepCommand) -> dyng::Result<ExitCode> {
    let t = Instant::now();
    let what = name(&cmd);
    let outcome = run_command(cmd);
    let rc = i32::from(outcome.is_err());
    if let Err(e) = &outcome {
        eprintln!("Error: {e}");
    }
    println!("{what} done in {} ms (rc={rc})", g6(ms_since(t)));
    Ok(ExitCode::from(rc as u8))
}

fn run_command(cmd: PrepCommand) -> dyng::Result<()> {
    match cmd {
        PrepCommand::Mtx2csr { input, out_prefix, w } => {
            let (t, symmetric) = mtx::mtx_to_csr(&input, w.k as usize, w.wmin, w.wmax, w.seed)?;
            csr_text::write_csr_triplet(&out_prefix, &t)?;
            println!(
                "mtx2csr: n={} directed edges={} symmetric={}",
                t.n,
                t.col_ind.len(),
                u8::from(symmetric)
            );
        }
        PrepCommand::Widen { in_prefix, out_prefix, w } => {
            let t = csr_text::read_csr_triplet(&in_prefix)?;
            let wide = mtx::widen(&t, w.k as usize, w.wmin, w.wmax, w.seed)?;
            csr_text::write_csr_triplet(&out_prefix, &wide)?;
        }
        PrepCommand::Cache { csr_prefix, binary_path } => {
            let t = csr_text::read_csr_triplet(&csr_prefix)?;
            let id = cache::text_identity(&csr_prefix)?;
            cache::write_cache(&binary_path, &id, &t)?;
        }
        PrepCommand::Changes(a) => {
            let g = read_csr(&a.csr_prefix, a.k)?;
            let (batch, summary) = generate_changes(&g, &change_options(&a, &g))?;
            batch_files::write_batch_dir(&a.out_dir, &batch)?;
            println!("{summary}");
        }
        PrepCommand::Init { csr_prefix, out_dir, source, k } => {
            let g = read_csr(&csr_prefix, k)?;
            check_source(&g, source)?;
            write_dijkstra_trees(&g, source, &out_dir, "distancesOriginal.txt", "SSSPTreeOriginal.txt")?;
        }
        PrepCommand::Expected { csr_prefix, changes_dir, out_dir, source, k } => {
            let g = read_csr(&csr_prefix, k)?;
            check_source(&g, source)?;
            let batch = batch_files::read_batch_dir(&changes_dir, g.n(), g.k())?;
            let updated = apply_batch(&g, &batch.view())?.csr;
            write_dijkstra_trees(&updated, source, &out_dir, "distancesUpdated.txt", "SSSPTreeUpdated.txt")?;
        }
        PrepCommand::Gen(a) => {
            let t = match a.kind {
                GenKind::Grid => graphgen::grid(a.size, a.height.unwrap_or(a.size), a.k as usize, a.wmin, a.wmax, a.seed)?,
                GenKind::Rgg => graphgen::rgg(a.size as u32, a.k as usize, a.wmin, a.wmax, a.seed)?,
            };
            csr_text::write_csr_triplet(&a.out_prefix, &t)?;
            println!("gen: n={} directed edges={} K={}", t.n, t.col_ind.len(), t.k);
        }
    }
    Ok(())
}
