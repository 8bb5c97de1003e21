//! `dyng bench`: named suites of update-versus-recompute measurements.
//!
//! Every case builds a graph, K trees from a source in the giant component and a batch from the
//! original change generator, then measures in one run (so ratios are meaningful on a noisy shared
//! machine): the per-objective update, the MOSP update end to end and its compute part, a static
//! recompute with the same engine, and a plain binary-heap Dijkstra. Medians of several runs.
//! Then on each graph a stream of local batches (`stream.rs`): the steady state of a service.
//! Writes `<out>/<suite>.json`, `<suite>.md` and `<suite>.svg`.

mod cases;
mod interval;
mod latency;
mod latency_report;
mod machine;
mod measure;
mod report;
mod stream;
mod targets;

use clap::{Args, ValueEnum};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Suite {
    /// usroads K=3 and the 1000x1000 grid, safe/unsafe/local 10K batches, 1 and 2 threads.
    Quick,
    /// Every graph, batch type and size (100, 1K, 10K, 50K), 1 and 2 threads.
    Full,
    /// Small batches on a resident MOSP result (1 to 1,000 changes of live traffic, congestion and
    /// closures, and the 10K batches): usroads, grids of 500^2 to 4000^2, bremen from --data.
    Latency,
}

#[derive(Args, Debug)]
pub struct BenchArgs {
    #[arg(value_enum, default_value = "quick")]
    pub suite: Suite,
    /// Output folder.
    #[arg(long, default_value = "bench-results")]
    pub out: PathBuf,
    /// Runs per case: the report gives medians and, from 5 runs up, a 90 % bootstrap interval
    /// of each update/recompute ratio (fewer runs leave every interval empty).
    #[arg(long, default_value_t = interval::MIN_RUNS as u64, value_parser = clap::value_parser!(u64).range(1..))]
    pub runs: u64,
    /// Folder with bremen_dist.gr and bremen_time.gr (full suite; default ../shared/data if present).
    #[arg(long)]
    pub data: Option<PathBuf>,
    /// Thread counts to measure.
    #[arg(long, value_delimiter = ',', default_value = "1,2")]
    pub threads: Vec<usize>,
    /// Only these graphs of the suite (usroads, bremen, grid1000, rgg_n_2_20).
    #[arg(long, value_delimiter = ',')]
    pub only: Vec<String>,
    /// Batches in each graph's stream (the steady state: one MOSP result updated by local 10K
    /// batches drawn from the current state); 0 runs no stream.
    #[arg(long, default_value_t = stream::BATCHES)]
    pub stream_batches: usize,
    /// Only the latency cases of these batch sizes (1, 10, 100, 1000; 10000 for the safe, unsafe
    /// and local batches), e.g. `latency --sizes 1,10` for the constant term on the largest grid.
    #[arg(long, value_delimiter = ',')]
    pub sizes: Vec<usize>,
}

fn suite_name(s: Suite) -> &'static str {
    match s {
        Suite::Quick => "quick",
        Suite::Full => "full",
        Suite::Latency => "latency",
    }
}

/// Batches per latency case: fewer on the largest grids, whose batches take a copy of the graph
/// to draw (the generator works on a compact CSR), but for batches of 10 changes or fewer, whose
/// medians stand for the constant term.
fn latency_batches(n: usize, full: bool, size: usize) -> usize {
    match (full, n) {
        (false, _) => 4,
        (true, n) if n > 4_000_000 && size > 10 => 4,
        _ => 8,
    }
}

/// The latency cases of the suite (`full`: the latency suite's) of the batch sizes in `sizes`
/// (all when empty).
fn latency_plan(full: bool, sizes: &[usize]) -> dyng::Result<Vec<(latency::Kind, usize)>> {
    let mut plan = latency::cases(full);
    if !sizes.is_empty() {
        plan.retain(|(_, size)| sizes.contains(size));
        if plan.is_empty() {
            let all: std::collections::BTreeSet<usize> = latency::cases(full).iter().map(|c| c.1).collect();
            return Err(dyng::Error::invalid(format!(
                "--sizes {}: no latency case of this suite has that size (its sizes: {})",
                sizes.iter().map(usize::to_string).collect::<Vec<_>>().join(","),
                all.iter().map(usize::to_string).collect::<Vec<_>>().join(", ")
            )));
        }
    }
    Ok(plan)
}

/// The latency streams of `graphs` (see `latency.rs`), of the cases in `plan`.
fn run_latency(graphs: &[cases::GraphSpec], threads: &[usize], full: bool, plan: &[(latency::Kind, usize)]) -> dyng::Result<latency::Latency> {
    let mut out = latency::Latency::default();
    for spec in graphs {
        eprintln!("latency {}: building", spec.name);
        let csr = (spec.build)()?;
        let n = csr.n();
        let (g, c) = latency::measure_graph(spec, &csr, threads, plan, |size| latency_batches(n, full, size))?;
        out.graphs.extend(g);
        out.cases.extend(c);
    }
    Ok(out)
}

pub fn run(a: BenchArgs) -> dyng::Result<ExitCode> {
    let runs = a.runs as usize;
    if runs < interval::MIN_RUNS {
        eprintln!("notice: {runs} runs per case: below {} the report has no intervals, and the targets read with the run's noise stay unresolved", interval::MIN_RUNS);
    }
    let mut plan = cases::plan(a.suite, a.data.as_deref())?;
    let latency_cases = latency_plan(a.suite == Suite::Latency, &a.sizes)?;
    let mut latency_graphs = match a.suite {
        Suite::Full => Vec::new(),
        s => cases::latency_graphs(s == Suite::Latency, a.data.as_deref()),
    };
    if !a.only.is_empty() {
        plan.graphs.retain(|(g, _)| a.only.iter().any(|o| o == g.name));
        latency_graphs.retain(|g| a.only.iter().any(|o| o == g.name));
        if plan.graphs.is_empty() && latency_graphs.is_empty() {
            return Err(dyng::Error::invalid(format!(
                "--only {}: no graph of this suite has that name (usroads, grid1000; full: also bremen, rgg_n_2_20; latency: usroads, grid500, grid1000, grid2000, grid4000, bremen)",
                a.only.join(",")
            )));
        }
    }
    let cases: usize = plan.graphs.iter().map(|(_, b)| b.len()).sum::<usize>() * a.threads.len();
    let streams = if a.stream_batches > 0 { plan.graphs.len() * a.threads.len() } else { 0 };
    eprintln!("dyng bench {}: {cases} cases of {runs} runs and {streams} streams of {} batches; a line per case as it ends", suite_name(a.suite), a.stream_batches);
    let before = machine::core_round_trip();
    let (results, streams) = if plan.graphs.is_empty() { Default::default() } else { measure::run_plan(&plan, &a.threads, runs, a.stream_batches)? };
    let latency = if latency_graphs.is_empty() { None } else { Some(run_latency(&latency_graphs, &a.threads, a.suite == Suite::Latency, &latency_cases)?) };
    let after = machine::core_round_trip();
    let host = machine::Host { round_trip_ns: [before.0, after.0], worst_us: [before.1, after.1] };
    let name = suite_name(a.suite);
    std::fs::create_dir_all(&a.out).map_err(|e| dyng::Error::io(&a.out, e))?;
    let written = report::write_all(&a.out, name, &results, &streams, latency.as_ref(), &host)?;
    print!("{}", report::markdown(name, &results, &streams, latency.as_ref(), &host));
    for p in written {
        eprintln!("wrote {}", p.display());
    }
    Ok(ExitCode::SUCCESS)
}
