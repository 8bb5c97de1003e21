//! `dyng demo`: the main job on the bundled US highway network.
//!
//! Converts `data/road-usroads.mtx` with K = 3 seeded weights, computes the MOSP from the giant
//! component's vertex 531, generates a 10K-change safe batch with the original generator, updates,
//! recomputes from scratch for comparison, and prints a short summary with timings.

use crate::fmt::{ms_since, ns_to_ms};
use crate::progress::spinner;
use crate::{resources, BackendArg};
use clap::Args;
use dyng::io::changegen::{generate_changes, ChangeOptions};
use dyng::io::mtx;
use dyng::{Csr, Error, Graph, MospOptions, MospResult, WeightLayout, DISTANCE_INF};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

#[derive(Args, Debug)]
pub struct DemoArgs {
    /// The Matrix Market graph (default: the bundled data/road-usroads.mtx).
    #[arg(long)]
    data: Option<PathBuf>,
    /// Source vertex (531 is the lowest id of the 126,146-vertex giant component).
    #[arg(long, default_value_t = 531)]
    source: usize,
    /// Changes in the batch.
    #[arg(long, default_value_t = 10_000)]
    changes: usize,
    #[arg(long, value_enum, default_value = "parallel")]
    backend: BackendArg,
    #[arg(long, default_value_t = 0)]
    threads: usize,
}

fn default_data() -> PathBuf {
    let local = PathBuf::from("data/road-usroads.mtx");
    if local.exists() {
        return local;
    }
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/road-usroads.mtx")
}

pub fn run(a: DemoArgs) -> dyng::Result<ExitCode> {
    let res = resources(a.backend, a.threads)?;
    let path = a.data.clone().unwrap_or_else(default_data);
    let pb = spinner("reading the graph");
    let t = Instant::now();
    let (text, _) = mtx::mtx_to_csr(&path, 3, 1, 100, 12345)?;
    let csr = Csr::from_arrays(text.n, 3, text.row_ptr, text.col_ind, &text.weights, WeightLayout::EdgeMajor)?;
    let read_ms = ms_since(t);
    if a.source >= csr.n() {
        return Err(Error::invalid(format!("source {} is outside [0, n = {})", a.source, csr.n())));
    }
    println!("dyng demo: {} ({} vertices, {} directed edges, K = 3 weights in [1, 100], seed 12345)", path.display(), csr.n(), csr.m());
    println!("  read + convert            {read_ms:9.1} ms");
    let mut graph = Graph::new(csr);

    pb.set_message("computing the MOSP");
    let opt = MospOptions::default();
    let t = Instant::now();
    let mut mosp = MospResult::compute(&res, &graph, a.source, &opt)?;
    println!("  compute MOSP (3 trees + combined) {:5.1} ms  ({} threads, {:?})", ms_since(t), res.threads(), res.backend());

    pb.set_message("generating the batch");
    let t = Instant::now();
    let gen = ChangeOptions {
        changes: a.changes,
        seed: 777,
        safe: true,
        source: a.source,
        ..Default::default()
    };
    let (batch, summary) = generate_changes(graph.csr(), &gen)?;
    println!("  generate batch            {:9.1} ms  ({summary})", ms_since(t));

    pb.set_message("updating");
    let (_, timings) = dyng::update_timed(&res, &mut graph, &batch.view(), &mut [(&mut mosp).into()])?;
    let stats = mosp.objective_stats();
    let upd_ms: f64 = stats.iter().map(|s| ns_to_ms(s.elapsed_ns)).sum();
    let comb_ms = ns_to_ms(mosp.combine_stats().elapsed_ns);
    println!("  apply batch               {:9.1} ms", ns_to_ms(timings.apply_ns));
    for (j, s) in stats.iter().enumerate() {
        // A recompute chosen from the sample reports the sample's estimate of `invalidated`.
        let how = if s.fallback_used { "recomputed, invalidated ~" } else { "repaired, invalidated " };
        println!(
            "  update obj{j}               {:9.1} ms  ({how}{}, affected {})",
            ns_to_ms(s.elapsed_ns),
            s.invalidated,
            s.affected
        );
    }
    println!("  combined graph + MOSP     {comb_ms:9.1} ms  ({} edges)", mosp.combine_stats().edges);

    pb.set_message("recomputing from scratch for comparison");
    let t = Instant::now();
    let fresh = MospResult::compute(&res, &graph, a.source, &opt)?;
    let recompute_ms = ms_since(t);
    pb.finish_and_clear();
    let same = (0..3).all(|j| {
        fresh.tree(j).distances() == mosp.tree(j).distances() && fresh.tree(j).parents() == mosp.tree(j).parents()
    }) && fresh.combined_parents() == mosp.combined_parents();
    println!(
        "  recompute from scratch    {recompute_ms:9.1} ms  -> update (3 trees + combined) took {:.2}x of it; trees identical: {}",
        (upd_ms + comb_ms) / recompute_ms,
        if same { "yes" } else { "NO" }
    );
    let reachable = mosp.combined_distances().iter().filter(|&&d| d < DISTANCE_INF / 2).count();
    println!("  MOSP tree reaches {reachable} of {} vertices; path costs (distance, time, fuel) of a few:", graph.n());
    for v in [0usize, 1000, 50_000, 100_000, 129_000].into_iter().filter(|&v| v < graph.n()) {
        let c = &mosp.path_costs()[v * 3..v * 3 + 3];
        if c[0] >= DISTANCE_INF / 2 {
            println!("    vertex {v:>6}: unreachable");
        } else {
            println!("    vertex {v:>6}: {:?} over {} edges", c, mosp.path_to(v)?.len().saturating_sub(1));
        }
    }
    Ok(if same { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
