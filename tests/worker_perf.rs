//! Worker isolation costs on the 1M-vertex grid (spec 17.4 T21, in small): view latency and copy
//! cost through the worker against in-process snapshots, and the consumed-ack round trip.
//! Run with `cargo test --release --test worker_perf -- --ignored --nocapture`.

mod worker_util;

use dyng::worker::{kind, Client};
use dyng::{Csr, Graph, Resources, SsspOptions, SsspResult, WeightLayout};
use std::time::Instant;
use worker_util::*;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

#[test]
#[ignore]
fn view_and_copy_costs_on_a_million_vertices() {
    // DYNG_PERF_SIDE=2000 measures the 4M-vertex grid.
    let side: usize = std::env::var("DYNG_PERF_SIDE").ok().and_then(|s| s.parse().ok()).unwrap_or(1000);
    let t = dyng::io::generators::graphgen::grid(side, side, 3, 1, 100, 12345).unwrap();
    let csr = Csr::from_arrays(t.n, t.k, t.row_ptr, t.col_ind, &t.weights, WeightLayout::EdgeMajor).unwrap();
    let res = Resources::parallel(0).unwrap();
    let g = Graph::new(csr.clone());
    let t0 = Instant::now();
    let local = SsspResult::compute(&res, &g, 0, 0, &SsspOptions::default()).unwrap();
    let local_compute = t0.elapsed().as_secs_f64() * 1e3;
    // DYNG_PERF_CHECKSUMS=0 measures without the XXH3 checksums the functional tests use.
    let checksums = std::env::var("DYNG_PERF_CHECKSUMS").map_or(true, |v| v != "0");
    let c = Client::spawn(dyng::worker::WorkerOptions { checksums, ..opts() }).unwrap();
    let t0 = Instant::now();
    c.load_graph(&csr).unwrap();
    let load = t0.elapsed().as_secs_f64() * 1e3;
    let t0 = Instant::now();
    let r = c.sssp_compute(0, 0, &SsspOptions::default()).unwrap();
    let remote_compute = t0.elapsed().as_secs_f64() * 1e3;
    drop(c.view(r.id, 0, 0).unwrap()); // warm the pool
    let reps = 20;
    let (mut view_ms, mut copy_ms, mut local_copy_ms, mut snap_us, mut ack_us) = (vec![], vec![], vec![], vec![], vec![]);
    for _ in 0..reps {
        let t0 = Instant::now();
        let v = c.view(r.id, 0, 0).unwrap();
        view_ms.push(t0.elapsed().as_secs_f64() * 1e3);
        assert_eq!(v.i64s(kind::DIST).unwrap().len(), side * side);
        drop(v);
        let t0 = Instant::now();
        let d = c.copy_i64(r.id, kind::DIST, 0).unwrap();
        copy_ms.push(t0.elapsed().as_secs_f64() * 1e3);
        assert_eq!(d, local.distances());
        let t0 = Instant::now();
        let d2 = local.distances().to_vec();
        local_copy_ms.push(t0.elapsed().as_secs_f64() * 1e3);
        drop(d2);
        let t0 = Instant::now();
        let s = local.distances_snapshot();
        snap_us.push(t0.elapsed().as_secs_f64() * 1e6);
        drop(s);
        // Ack round trip: a release followed by a call that observes it (worker_stats is a
        // small call, so this is one ack plus one call round trip).
        let v = c.view(r.id, 0b1, 0).unwrap();
        let t0 = Instant::now();
        drop(v);
        let st = c.worker_stats().unwrap();
        ack_us.push(t0.elapsed().as_secs_f64() * 1e6);
        assert_eq!(st.lent_blocks, 0);
    }
    let t0 = Instant::now();
    for _ in 0..200 {
        c.worker_stats().unwrap();
    }
    let call_us = t0.elapsed().as_secs_f64() * 1e6 / 200.0;
    println!("worker perf, grid {side}x{side} K=3 (n = {}), checksums {checksums}, {reps} reps, medians:", side * side);
    println!("  load_graph through worker      {load:9.1} ms");
    println!("  sssp compute in-process        {local_compute:9.1} ms");
    println!("  sssp compute through worker    {remote_compute:9.1} ms");
    println!("  view dist+parent ({} MiB) LENT {:9.2} ms", (12 * side * side) >> 20, median(view_ms));
    println!("  copy dist ({} MiB) via worker   {:9.2} ms", (8 * side * side) >> 20, median(copy_ms));
    println!("  copy dist in-process (to_vec)  {:9.2} ms", median(local_copy_ms));
    println!("  in-process snapshot (Arc)      {:9.2} us", median(snap_us));
    println!("  release + ack + small call     {:9.1} us", median(ack_us));
    println!("  small call round trip          {call_us:9.1} us");
}
