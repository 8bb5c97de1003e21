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
}

fn suite_name(s: Suite) -> &'static str {
    match s {
        Suite::Quick => "quick",
        Suite::Full => "full",
    }
}

pub fn run(a: BenchArgs) -> dyng::Result<ExitCode> {
    let runs = a.runs as usize;
    if runs < interval::MIN_RUNS {
        eprintln!("notice: {runs} runs per case: below {} the report has no intervals, and the targets read with the run's noise stay unresolved", interval::MIN_RUNS);
    }
    let mut plan = cases::plan(a.suite, a.data.as_deref())?;
    if !a.only.is_empty() {
        plan.graphs.retain(|(g, _)| a.only.iter().any(|o| o == g.name));
        if plan.graphs.is_empty() {
            return Err(dyng::Error::invalid(format!(
                "--only {}: no graph of this suite has that name (usroads, grid1000; full: also bremen, rgg_n_2_20)",
                a.only.join(",")
            )));
        }
    }
    let cases: usize = plan.graphs.iter().map(|(_, b)| b.len()).sum::<usize>() * a.threads.len();
    let streams = if a.stream_batches > 0 { plan.graphs.len() * a.threads.len() } else { 0 };
    eprintln!("dyng bench {}: {cases} cases of {runs} runs and {streams} streams of {} batches; a line per case as it ends", suite_name(a.suite), a.stream_batches);
    let before = machine::core_round_trip();
    let (results, streams) = measure::run_plan(&plan, &a.threads, runs, a.stream_batches)?;
    let after = machine::core_round_trip();
    let host = machine::Host { round_trip_ns: [before.0, after.0], worst_us: [before.1, after.1] };
    let name = suite_name(a.suite);
    std::fs::create_dir_all(&a.out).map_err(|e| dyng::Error::io(&a.out, e))?;
    let written = report::write_all(&a.out, name, &results, &streams, &host)?;
    print!("{}", report::markdown(name, &results, &streams, &host));
    for p in written {
        eprintln!("wrote {}", p.display());
    }
    Ok(ExitCode::SUCCESS)
}
