//! `dyng prep`: the original `mospPrep` (its commands, files and report lines), a DIMACS
//! converter and synthetic graphs.
//!
//! Every command prints its report lines and ends with `<command> done in <ms> ms (rc=<rc>)`.
//! Outputs come from single-threaded, seeded code and are byte-stable.

use crate::fmt::{g6, ms_since};
use crate::Failure;
use clap::{Args, Subcommand, ValueEnum};
use dyng::graph::dijkstra::dijkstra;
use dyng::io::generators::changegen::{change_counts, generate_changes, ChangeMode, ChangeOptions};
use dyng::io::formats::mtx::{MtxOptions, MtxReport, MtxWeights};
use dyng::io::{formats::{batch_files, cache, csr_text, dimacs, mtx, trees}, generators::graphgen, CsrText};
use dyng::{apply_batch, Csr, Error, WeightLayout};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

#[derive(Subcommand, Debug)]
pub enum PrepCommand {
    /// Convert a Matrix Market file to the CSR text triplet with K seeded weights per edge.
    #[command(after_help = MTX2CSR_HELP)]
    Mtx2csr {
        /// The Matrix Market file (`coordinate` format; `pattern`, `integer` or `real` field).
        input: PathBuf,
        /// Prefix P of the output files PRowPtr.txt, PColInd.txt, PValues.txt.
        out_prefix: PathBuf,
        #[command(flatten)]
        w: SeededWeights,
        /// Take objective 0 from the file's values instead of drawing it (an `integer` file,
        /// or a `real` one whose values are integers or are scaled with --scale); further
        /// objectives are drawn as `widen` draws them.
        #[arg(long)]
        keep_weights: bool,
        /// With --keep-weights: multiply each value by F and round it to an integer weight.
        #[arg(long, value_name = "F", requires = "keep_weights", value_parser = positive_f64)]
        scale: Option<f64>,
    },
    /// Convert DIMACS `.gr` files (one per objective, the same arcs in each) to the CSR text
    /// triplet: K = the number of files.
    #[command(after_help = DIMACS2CSR_HELP)]
    Dimacs2csr {
        /// The `.gr` files of objectives 0, 1, ..., then the output prefix P (PRowPtr.txt,
        /// PColInd.txt, PValues.txt).
        #[arg(required = true, num_args = 2.., value_name = "FILE.gr... OUT_PREFIX")]
        paths: Vec<PathBuf>,
        /// Read an arc weight of 0 as 1 (weights must be in [1, 2^31-1]).
        #[arg(long)]
        zero_to_one: bool,
    },
    /// Append seeded objectives to a CSR graph (keeps the existing ones).
    Widen {
        /// Prefix of the input CSR text triplet.
        in_prefix: PathBuf,
        /// Prefix of the output CSR text triplet.
        out_prefix: PathBuf,
        #[command(flatten)]
        w: SeededWeights,
    },
    /// Write the binary graph cache of a CSR graph (for `dyng mosp --cache`).
    Cache {
        /// Prefix of the CSR text triplet.
        csr_prefix: PathBuf,
        /// The cache file to write.
        binary_path: PathBuf,
    },
    /// Generate a change batch (the originals' generator, bit for bit): OUT_DIR/insert.txt and
    /// OUT_DIR/delete.txt.
    #[command(after_help = CHANGES_HELP)]
    Changes(ChangesArgs),
    /// Dijkstra trees of every objective of the graph: <out>/obj<k>/{distances,SSSPTree}Original.txt.
    Init {
        /// Prefix of the CSR text triplet.
        csr_prefix: PathBuf,
        /// Output folder.
        out_dir: PathBuf,
        /// Source vertex of the trees.
        #[arg(long, default_value_t = 0)]
        source: usize,
        /// Objectives of an edgeless graph (whose empty values file cannot say); for a graph
        /// with edges at most its own K, and trees are written for all of its objectives (as
        /// the original does).
        #[arg(short = 'k', value_parser = clap::value_parser!(u32).range(1..=64))]
        k: Option<u32>,
    },
    /// Expected updated trees (Dijkstra on the updated graph): <out>/obj<k>/*Updated.txt.
    Expected {
        /// Prefix of the CSR text triplet.
        csr_prefix: PathBuf,
        /// Folder with insert.txt and delete.txt.
        changes_dir: PathBuf,
        /// Output folder.
        out_dir: PathBuf,
        /// Source vertex of the trees.
        #[arg(long, default_value_t = 0)]
        source: usize,
        /// As for `init`: K of an edgeless graph; at most the graph's own K otherwise.
        #[arg(short = 'k', value_parser = clap::value_parser!(u32).range(1..=64))]
        k: Option<u32>,
    },
    /// Generate a synthetic graph (road-like grid or random geometric graph) as a CSR triplet.
    Gen(GenArgs),
}

const MTX2CSR_HELP: &str = "\
The edges follow the original mospPrep mtx2csr rule, so that its outputs are byte-identical: both
directions of each entry of a symmetric (or skew-symmetric) file, edges sorted and deduplicated,
self-loops dropped, and K weights per edge drawn uniformly from [WMIN, WMAX] with mt19937(SEED),
edge-major; the file's values are ignored unless --keep-weights is given. Self-loops and duplicate
entries are counted in a warning on stderr.

Unlike the original, which read what it could, a file is refused (exit 1, naming line and column)
when an entry lies outside the matrix, the entries are fewer or more than the size line declares,
an entry has stray tokens, or the banner declares an `array`, `complex` or `hermitian` matrix.";

const DIMACS2CSR_HELP: &str = "\
A .gr file holds `c` comment lines, an optional header `p sp N M` and arcs `a U V W`. With the
header, vertex ids are 1-based (standard DIMACS); without it they are 0-based and n is the largest
id + 1. Every file must list the same arcs in the same order (one objective each, e.g. distance
and travel time). Rows keep the files' arc order; parallel arcs and self-loops are kept.";

const CHANGES_HELP: &str = "\
Accepted as the original accepts them, giving its batch and summary line for the same options:
--changes N (0 writes an empty batch), --ins in [0, 100], --mode, --local, --safe, --seed,
--source, --wmin/--wmax (1 <= wmin <= wmax) and -k up to the graph's K. Refused with exit 2,
where the original wrote what nobody can mean: no --changes (the original wrote an empty batch),
--ins outside [0, 100], more deletions (uniform mode) or reweights (reweight mode) than the graph
has edges, --wmin above --wmax, a --source or -k outside the graph.";

/// K objectives of seeded weights in [wmin, wmax] (the originals' positional arguments).
#[derive(Args, Debug)]
pub struct SeededWeights {
    /// Objectives per edge (1..32).
    #[arg(value_parser = clap::value_parser!(u32).range(1..=32))]
    k: u32,
    /// Smallest drawn weight (>= 1).
    #[arg(value_parser = clap::value_parser!(i32).range(1..))]
    wmin: i32,
    /// Largest drawn weight (>= WMIN, <= 2^31-1).
    #[arg(value_parser = clap::value_parser!(i32).range(1..))]
    wmax: i32,
    /// Seed of the mt19937 generator.
    seed: u32,
}

/// How the generator picks its changes.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum ModeArg {
    /// Random insertions, deletions drawn (with replacement) from the existing edges.
    Uniform,
    /// Below-average insertions, deletions of distinct shortest-path-tree edges.
    Targeted,
    /// New random weights for existing edges (drawn with replacement).
    Reweight,
    /// Weight increases of distinct tree edges.
    Increase,
}

#[derive(Args, Debug)]
pub struct ChangesArgs {
    /// Prefix of the CSR text triplet.
    csr_prefix: PathBuf,
    /// Output folder (insert.txt, delete.txt).
    out_dir: PathBuf,
    /// Number of changes N (0 writes an empty batch).
    #[arg(long, value_name = "N")]
    changes: usize,
    /// Share of insertions in percent, 0..100 (uniform and targeted modes).
    #[arg(long, default_value_t = 50.0, value_name = "PCT", value_parser = percent)]
    ins: f64,
    #[arg(long, value_enum, default_value = "uniform")]
    mode: ModeArg,
    /// Confine the changes to the ball of HOPS undirected hops around a random centre
    /// (0 = the whole graph).
    #[arg(long, default_value_t = 0, value_name = "HOPS")]
    local: usize,
    /// Drop the deletions that would disconnect vertices reachable from --source.
    #[arg(long)]
    safe: bool,
    /// Seed of the mt19937 generator.
    #[arg(long, default_value_t = 1)]
    seed: u32,
    /// Source of the trees (targeted, increase) and of the --safe check.
    #[arg(long, default_value_t = 0)]
    source: usize,
    /// Smallest weight of an insertion or reweight (>= 1).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(i32).range(1..))]
    wmin: i32,
    /// Largest weight of an insertion or reweight.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(i32).range(1..))]
    wmax: i32,
    /// Objectives used (at most the graph's K; an edgeless graph takes its K from here).
    /// Insertions always carry all of the graph's objectives, as the original writes them.
    #[arg(short = 'k', value_parser = clap::value_parser!(u32).range(1..=64))]
    k: Option<u32>,
}

/// A percentage in [0, 100].
fn percent(s: &str) -> Result<f64, String> {
    let v: f64 = s.parse().map_err(|_| format!("`{s}` is not a number"))?;
    if (0.0..=100.0).contains(&v) {
        Ok(v)
    } else {
        Err(format!("{v} is not a percentage in [0, 100]"))
    }
}

/// A finite number above 0.
fn positive_f64(s: &str) -> Result<f64, String> {
    let v: f64 = s.parse().map_err(|_| format!("`{s}` is not a number"))?;
    if v.is_finite() && v > 0.0 {
        Ok(v)
    } else {
        Err(format!("{v} is not a positive finite number"))
    }
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
    /// Prefix of the output CSR text triplet.
    out_prefix: PathBuf,
    /// Grid width (grid) or log2 of the vertex count (rgg).
    #[arg(long, default_value_t = 1000)]
    size: usize,
    /// Grid height (grid only; default = width).
    #[arg(long)]
    height: Option<usize>,
    /// Objectives per edge (1..32).
    #[arg(short = 'k', default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=32))]
    k: u32,
    /// Smallest drawn weight (>= 1).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(i32).range(1..))]
    wmin: i32,
    /// Largest drawn weight.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(i32).range(1..))]
    wmax: i32,
    /// Seed of the mt19937 generator.
    #[arg(long, default_value_t = 12345)]
    seed: u32,
}

/// Reads a CSR triplet as a graph; an edgeless graph takes K from `-k`, and a graph with edges
/// refuses a larger `-k` (a usage error).
pub fn read_csr(prefix: &Path, k: Option<u32>) -> Result<Csr, Failure> {
    let t = csr_text::read_csr_triplet(prefix).map_err(|e| explain_prefix(prefix, e))?;
    if let Some(k) = k {
        check_k(k as usize, t.k)?;
    }
    Ok(csr_from_text(t, k)?)
}

pub fn csr_from_text(mut t: CsrText, k: Option<u32>) -> dyng::Result<Csr> {
    if t.k == 0 {
        t.k = k.ok_or_else(|| {
            Error::invalid("the graph has no edges, so the number of objectives cannot be inferred from its values file (pass -k K)")
        })? as usize;
    }
    Csr::from_arrays(t.n, t.k, t.row_ptr, t.col_ind, &t.weights, WeightLayout::EdgeMajor)
}

/// `-k K` against the graph's KG (0 for an edgeless graph, which takes K from `-k`): the
/// originals silently used min(K, KG); a K above KG cannot be meant.
pub fn check_k(k: usize, kg: usize) -> Result<(), Failure> {
    if kg > 0 && k > kg {
        return Err(Failure::Usage(format!("-k {k}: the graph has {kg} objectives; -k selects at most that many")));
    }
    Ok(())
}

/// A read error of the CSR prefix P, with a hint when P is a file of another format (a DIMACS or
/// Matrix Market file given where the triplet's prefix belongs).
pub fn explain_prefix(prefix: &Path, e: Error) -> Error {
    let row_ptr = &csr_text::triplet_paths(prefix)[0];
    if row_ptr.exists() || !prefix.is_file() {
        return e;
    }
    let name = prefix.display();
    let convert = match prefix.extension().and_then(|x| x.to_str()) {
        Some("gr") => format!("a DIMACS file converts with `dyng prep dimacs2csr {name} OUT`"),
        Some("mtx") => format!("a Matrix Market file converts with `dyng prep mtx2csr {name} OUT K WMIN WMAX SEED`"),
        _ => "convert a DIMACS file with `dyng prep dimacs2csr`, a Matrix Market file with `dyng prep mtx2csr`".to_string(),
    };
    Error::invalid(format!(
        "{e}\n  {name} is a file, but a graph is given as the prefix P of the CSR text files PRowPtr.txt, PColInd.txt and PValues.txt; {convert}, then pass OUT"
    ))
}

fn check_source(g: &Csr, source: usize) -> Result<(), Failure> {
    if source >= g.n() {
        return Err(Failure::Usage(format!("--source {source} is outside the graph's vertices [0, n = {})", g.n())));
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

/// What `prep changes` refuses before generating (see CHANGES_HELP): options that cannot be
/// meant for this graph.
fn check_changes(a: &ChangesArgs, g: &Csr, opt: &ChangeOptions) -> Result<(), Failure> {
    if a.wmin > a.wmax {
        return Err(Failure::Usage(format!("--wmin {} is above --wmax {}", a.wmin, a.wmax)));
    }
    check_source(g, a.source)?;
    // Uniform deletions and reweights are drawn with replacement from the edges: more of them
    // than edges repeats edges (the other modes take distinct tree edges, at most all of them).
    let (_, deletions, reweights) = change_counts(opt);
    let (what, count, remedy) = match opt.mode {
        ChangeMode::Uniform => ("deletions", deletions, "fewer --changes or a higher --ins"),
        ChangeMode::Reweight => ("reweights", reweights, "fewer --changes"),
        ChangeMode::Targeted | ChangeMode::Increase => return Ok(()),
    };
    if count > g.m() {
        return Err(Failure::Usage(format!(
            "--changes {} asks for {count} {what} of a graph with {} edges (drawn with replacement, so edges would repeat); ask for {remedy}",
            a.changes,
            g.m()
        )));
    }
    Ok(())
}

fn name(cmd: &PrepCommand) -> &'static str {
    match cmd {
        PrepCommand::Mtx2csr { .. } => "mtx2csr",
        PrepCommand::Dimacs2csr { .. } => "dimacs2csr",
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
    let rc = outcome.as_ref().err().map_or(0, Failure::code);
    if let Err(e) = &outcome {
        eprintln!("Error: {e}");
    }
    println!("{what} done in {} ms (rc={rc})", g6(ms_since(t)));
    Ok(ExitCode::from(rc))
}

/// The warning of what the conversion dropped by the rule (nothing when it dropped nothing).
fn dropped_warning(input: &Path, r: &MtxReport) -> Option<String> {
    let mut parts = Vec::new();
    let plural = |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    if r.self_loops > 0 {
        parts.push(plural(r.self_loops, "self-loop entry", "self-loop entries"));
    }
    if r.duplicates > 0 {
        parts.push(plural(r.duplicates, "duplicate directed edge", "duplicate directed edges") + " (the first kept)");
    }
    (!parts.is_empty()).then(|| format!("warning: {}: dropped {}", input.display(), parts.join(" and ")))
}

fn run_command(cmd: PrepCommand) -> Result<(), Failure> {
    match cmd {
        PrepCommand::Mtx2csr { input, out_prefix, w, keep_weights, scale } => {
            if w.wmin > w.wmax {
                return Err(Failure::Usage(format!("WMIN {} is above WMAX {}", w.wmin, w.wmax)));
            }
            let opt = MtxOptions {
                k: w.k as usize,
                wmin: w.wmin,
                wmax: w.wmax,
                seed: w.seed,
                weights: if keep_weights { MtxWeights::File { scale } } else { MtxWeights::Drawn },
            };
            let (t, report) = mtx::convert(&input, &opt)?;
            if let Some(warning) = dropped_warning(&input, &report) {
                eprintln!("{warning}");
            }
            csr_text::write_csr_triplet(&out_prefix, &t)?;
            println!(
                "mtx2csr: n={} directed edges={} symmetric={}",
                t.n,
                t.col_ind.len(),
                u8::from(report.symmetric)
            );
        }
        PrepCommand::Dimacs2csr { mut paths, zero_to_one } => {
            let out_prefix = paths.pop().expect("clap asks for at least two paths");
            let inputs: Vec<&Path> = paths.iter().map(PathBuf::as_path).collect();
            let t = dimacs::read_dimacs_objectives(&inputs, zero_to_one)?;
            csr_text::write_csr_triplet(&out_prefix, &t)?;
            println!("dimacs2csr: n={} directed edges={} K={}", t.n, t.col_ind.len(), t.k);
        }
        PrepCommand::Widen { in_prefix, out_prefix, w } => {
            let t = csr_text::read_csr_triplet(&in_prefix).map_err(|e| explain_prefix(&in_prefix, e))?;
            let wide = mtx::widen(&t, w.k as usize, w.wmin, w.wmax, w.seed)?;
            csr_text::write_csr_triplet(&out_prefix, &wide)?;
        }
        PrepCommand::Cache { csr_prefix, binary_path } => {
            let t = csr_text::read_csr_triplet(&csr_prefix).map_err(|e| explain_prefix(&csr_prefix, e))?;
            let id = cache::text_identity(&csr_prefix)?;
            cache::write_cache(&binary_path, &id, &t)?;
        }
        PrepCommand::Changes(a) => {
            let g = read_csr(&a.csr_prefix, a.k)?;
            let opt = change_options(&a, &g);
            check_changes(&a, &g, &opt)?;
            let (batch, summary) = generate_changes(&g, &opt)?;
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
            if a.wmin > a.wmax {
                return Err(Failure::Usage(format!("--wmin {} is above --wmax {}", a.wmin, a.wmax)));
            }
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
