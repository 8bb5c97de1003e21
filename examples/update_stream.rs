//! A stream of batches applied to one graph, the way a routing service runs dyng: every batch is
//! drawn from the current state by the original change generator (seeds 1, 2, ...), then one
//! MOSP update (K trees and the combined tree) brings the result up to date. Prints the medians,
//! over the stream, of the update end to end, of its apply, of its preparation (building the
//! reverse graph when a repair needs it), of the K trees (their wall time), of the combine step
//! and of the path costs.
//!
//! `update_stream [threads] [batch] [graph] [size] [count]`: threads (1); batch `safe`, `unsafe`
//! or `local`; graph `usroads` (bundled, source 531), `grid` (1000x1000, source 0) or `rgg`
//! (rgg_n_2_20, source 0); size of each
//! batch (10000); batches in the stream (12).

use dyng::io::generators::changegen::{generate_changes, ChangeOptions};
use dyng::io::{formats::mtx, generators::graphgen};
use dyng::{Csr, Graph, MospOptions, MospResult, Resources, WeightLayout};
use std::path::Path;
use std::time::Instant;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn main() -> dyng::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let arg = |i: usize| args.get(i).map(String::as_str);
    let threads = arg(1).and_then(|s| s.parse().ok()).unwrap_or(1);
    let kind = arg(2).unwrap_or("local");
    let (t, source, hops) = match arg(3).unwrap_or("usroads") {
        "grid" => (graphgen::grid(1000, 1000, 3, 1, 100, 12345)?, 0, 110),
        "rgg" => (graphgen::rgg(20, 3, 1, 100, 12345)?, 0, 110),
        _ => {
            let root = Path::new(env!("CARGO_MANIFEST_DIR"));
            (mtx::mtx_to_csr(&root.join("data/road-usroads.mtx"), 3, 1, 100, 12345)?.0, 531, 100)
        }
    };
    let size = arg(4).and_then(|s| s.parse().ok()).unwrap_or(10_000);
    let count = arg(5).and_then(|s| s.parse().ok()).unwrap_or(12);
    let res = Resources::parallel(threads)?;
    let mut g = Graph::new(Csr::from_arrays(t.n, t.k, t.row_ptr, t.col_ind, &t.weights, WeightLayout::EdgeMajor)?);
    let mut m = MospResult::compute(&res, &g, source, &MospOptions::default())?;
    let (mut total, mut apply, mut prepare, mut engines, mut combine, mut costs) = (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for seed in 1..=count {
        let opt = ChangeOptions {
            changes: size,
            seed,
            safe: kind != "unsafe",
            source,
            local_hops: if kind == "local" { hops } else { 0 },
            ..Default::default()
        };
        let (batch, _) = generate_changes(&g.to_csr(), &opt)?;
        let clock = Instant::now();
        let (_, timings) = dyng::update_timed(&res, &mut g, &batch.view(), &mut [(&mut m).into()])?;
        total.push(clock.elapsed().as_secs_f64() * 1e3);
        apply.push(timings.apply_ns as f64 / 1e6);
        prepare.push(timings.prepare_ns as f64 / 1e6);
        engines.push(timings.trees_ns as f64 / 1e6);
        combine.push(m.combine_stats().elapsed_ns as f64 / 1e6);
        costs.push(m.combine_stats().costs_ns as f64 / 1e6);
    }
    println!(
        "{count} updates: median {:.2} ms end to end, apply {:.2} ms, prepare {:.2} ms, K trees {:.2} ms, combine {:.2} ms, path costs {:.2} ms; pool {:.1} B/vertex",
        median(total),
        median(apply),
        median(prepare),
        median(engines),
        median(combine),
        median(costs),
        res.workspace_bytes() as f64 / g.n() as f64
    );
    Ok(())
}
