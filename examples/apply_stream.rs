//! The apply alone: a stream of 12 batches of 10K changes on the bundled usroads graph (K = 3),
//! applied to a resident graph through `update_timed` with no result, the stream replayed from
//! the same start `rounds` times. Prints, per batch, the least apply time over the rounds (the
//! compaction a kept batch may run included), their sum, and what the rows hold at the end.
//!
//! `cargo run --release --example apply_stream -- [in|out] [local|safe|unsafe] [rounds]`
//! (`in`, the default: with the in-rows, read after every batch as a repair would, so that each
//! batch's time includes their catching up with it).

use dyng::io::formats::mtx;
use dyng::io::generators::changegen::{generate_changes, ChangeOptions};
use dyng::{Csr, Graph, Resources, WeightLayout};
use std::path::Path;

fn main() -> dyng::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let with_in = args.get(1).is_none_or(|s| s == "in");
    let kind = args.get(2).map(String::as_str).unwrap_or("local");
    let rounds: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(20);
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/road-usroads.mtx");
    let t = mtx::mtx_to_csr(&path, 3, 1, 100, 12345)?.0;
    let start = Csr::from_arrays(t.n, t.k, t.row_ptr, t.col_ind, &t.weights, WeightLayout::EdgeMajor)?;
    // The batches, each drawn from the state the ones before it left.
    let mut batches = Vec::new();
    let mut state = start.clone();
    for seed in 1..=12u32 {
        let local_hops = if kind == "local" { 100 } else { 0 };
        let opt = ChangeOptions { changes: 10_000, seed, safe: kind != "unsafe", source: 531, local_hops, ..Default::default() };
        let (b, _) = generate_changes(&state, &opt)?;
        state = dyng::apply_batch(&state, &b.view())?.csr;
        batches.push(b);
    }
    let res = Resources::parallel(1)?;
    let mut best = vec![f64::MAX; batches.len()];
    let fresh = || {
        let g = Graph::new(start.clone());
        if with_in {
            let _ = g.in_rows();
        }
        g
    };
    let mut g = fresh();
    for round in 0..rounds.max(1) {
        if round > 0 {
            g = fresh();
        }
        for (b, best) in batches.iter().zip(best.iter_mut()) {
            let (_, timings) = dyng::update_timed(&res, &mut g, &b.view(), &mut [])?;
            let clock = std::time::Instant::now();
            if with_in {
                let _ = g.in_rows();
            }
            *best = best.min(timings.apply_ns as f64 / 1e6 + clock.elapsed().as_secs_f64() * 1e3);
        }
    }
    let per_batch: Vec<String> = best.iter().map(|x| format!("{x:.2}")).collect();
    println!("apply, least of {rounds} rounds: {:.2} ms over {} batches [{}]", best.iter().sum::<f64>(), best.len(), per_batch.join(", "));
    println!(
        "n {} m {}, in-rows {with_in}: {} bytes ({} in the rows), {} compactions, {} resizes",
        g.n(),
        g.m(),
        g.bytes(),
        g.row_bytes(),
        g.compactions(),
        g.resizes()
    );
    Ok(())
}
