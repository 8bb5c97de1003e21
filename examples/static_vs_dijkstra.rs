//! Static solve of dyng (sequential and parallel engines) against the binary-heap Dijkstra
//! baseline on the generated 1000 x 1000 grid (K = 1), medians of five runs measured alternately.

use dyng::graph::dijkstra::dijkstra;
use dyng::io::generators::graphgen::grid;
use dyng::{Csr, Graph, Resources, SsspOptions, SsspResult, WeightLayout};
use std::time::Instant;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn main() -> dyng::Result<()> {
    let side: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(1000);
    let t = grid(side, side, 1, 1, 100, 12345)?;
    let g = Graph::new(Csr::from_arrays(t.n, 1, t.row_ptr, t.col_ind, &t.weights, WeightLayout::EdgeMajor)?);
    let engines = [("sequential", Resources::sequential()), ("parallel-1", Resources::parallel(1)?), ("parallel-2", Resources::parallel(2)?)];
    let mut times = vec![Vec::new(); engines.len() + 1];
    for _ in 0..5 {
        for (i, (_, res)) in engines.iter().enumerate() {
            let t0 = Instant::now();
            let r = SsspResult::compute(res, &g, 0, 0, &SsspOptions { delta: std::env::args().nth(2).and_then(|d| d.parse().ok()), ..Default::default() })?;
            times[i].push(t0.elapsed().as_secs_f64() * 1e3);
            std::hint::black_box(r);
        }
        let t0 = Instant::now();
        std::hint::black_box(dijkstra(&g, 0, 0));
        times[engines.len()].push(t0.elapsed().as_secs_f64() * 1e3);
    }
    let dij = median(times[engines.len()].clone());
    println!("grid {side}x{side}: n = {}, m = {}; binary-heap Dijkstra {dij:.1} ms", g.n(), g.m());
    for (i, (name, _)) in engines.iter().enumerate() {
        let m = median(times[i].clone());
        let st = SsspResult::compute(&engines[i].1, &g, 0, 0, &SsspOptions::default())?.stats();
        println!(
            "  {name:<11} static solve {m:8.1} ms   Dijkstra / this = {:.2}x   (iterations {}, epochs {}, pushes {})",
            dij / m,
            st.iterations,
            st.epochs,
            st.pushes
        );
    }
    Ok(())
}
