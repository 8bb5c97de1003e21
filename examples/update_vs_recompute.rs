//! Times one objective's update against a static recompute, for profiling the engine (e.g. under
//! callgrind, whose instruction counts do not move with the machine's load).
//!
//! `update_vs_recompute [engine] [batch] [fallback] [graph] [size] [objective]`:
//! engine `sequential` or a thread count; batch `safe`, `unsafe` or `local`; fallback `never`,
//! `always` or `adaptive`; graph `usroads` (bundled, source 531), `bremen` (from
//! `../shared/data`, source 0) or `grid` (1000x1000, source 0) or `rgg` (rgg_n_2_20, source 0); size of the batch (10000);
//! objective (0). Batches come from the original change generator (seed 777).

use dyng::io::generators::changegen::{generate_changes, ChangeOptions};
use dyng::io::{formats::{dimacs, mtx}, generators::graphgen, CsrText};
use dyng::{Csr, Fallback, Graph, Resources, SsspOptions, SsspResult, WeightLayout};
use std::path::Path;
use std::time::Instant;

fn load(name: &str) -> dyng::Result<(CsrText, usize, usize)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    Ok(match name {
        "bremen" => {
            let dir = root.join("../shared/data");
            let t = dimacs::read_dimacs_objectives(&[&dir.join("bremen_dist.gr"), &dir.join("bremen_time.gr")], true)?;
            (t, 0, 40)
        }
        "grid" => (graphgen::grid(1000, 1000, 3, 1, 100, 12345)?, 0, 110),
        "rgg" => (graphgen::rgg(20, 3, 1, 100, 12345)?, 0, 110),
        _ => (mtx::mtx_to_csr(&root.join("data/road-usroads.mtx"), 3, 1, 100, 12345)?.0, 531, 100),
    })
}

fn main() -> dyng::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let arg = |i: usize| args.get(i).map(String::as_str);
    let res = match arg(1) {
        None | Some("sequential") => Resources::sequential(),
        Some(t) => Resources::parallel(t.parse().unwrap_or(1))?,
    };
    let kind = arg(2).unwrap_or("safe");
    let fallback = match arg(3) {
        Some("always") => Fallback::Always,
        Some("adaptive") => Fallback::Adaptive,
        _ => Fallback::Never,
    };
    let (t, source, hops) = load(arg(4).unwrap_or("usroads"))?;
    let size = arg(5).and_then(|s| s.parse().ok()).unwrap_or(10_000);
    let objective = arg(6).and_then(|s| s.parse().ok()).unwrap_or(0);
    let csr = Csr::from_arrays(t.n, t.k, t.row_ptr, t.col_ind, &t.weights, WeightLayout::EdgeMajor)?;
    let opt = ChangeOptions {
        changes: size,
        seed: 777,
        safe: kind != "unsafe",
        source,
        local_hops: if kind == "local" { hops } else { 0 },
        ..Default::default()
    };
    let (batch, summary) = generate_changes(&csr, &opt)?;
    println!("{summary}");
    let base = Graph::new(csr);
    let sopt = SsspOptions { fallback, ..Default::default() };
    // Several alternating rounds (odd rounds recompute first, on a copy updated beforehand); the
    // minimum is the figure least disturbed by other load.
    let mut updated = base.clone();
    dyng::update(&res, &mut updated, &batch.view(), &mut [])?;
    // Each recompute runs on a fresh copy of the updated graph, as the update runs on the graph
    // its batch just built: both sides read arrays allocated moments before (fresh pages can be
    // backed differently from long-lived ones; 2-thread runs moved by up to 2x with that).
    let recompute = || -> dyng::Result<(SsspResult, f64)> {
        let fresh = Graph::new(updated.to_csr());
        let t0 = Instant::now();
        let c = SsspResult::compute(&res, &fresh, source, objective, &sopt)?;
        Ok((c, t0.elapsed().as_secs_f64() * 1e3))
    };
    let (mut upd, mut rec) = (Vec::new(), Vec::new());
    for round in 0..7 {
        let mut g = base.clone();
        let mut r = SsspResult::compute(&res, &g, source, objective, &sopt)?;
        let first = if round % 2 == 1 { Some(recompute()?) } else { None };
        let s = dyng::update_one(&res, &mut g, &batch.view(), &mut r)?;
        upd.push(s.elapsed_ns as f64 / 1e6);
        if std::env::var_os("SHOW_ROUNDS").is_some() {
            println!("round {round}: update {:.2} ms, {} pushes, {} iterations", s.elapsed_ns as f64 / 1e6, s.pushes, s.iterations);
        }
        let (c, ms) = match first {
            Some(done) => done,
            None => recompute()?,
        };
        rec.push(ms);
        assert_eq!(c.distances(), r.distances());
        assert_eq!(c.parents(), r.parents());
        if round == 0 {
            println!("update: {s:?}\nrecompute: {:?}", c.stats());
        }
    }
    let min = |v: &[f64]| v.iter().cloned().fold(f64::INFINITY, f64::min);
    if std::env::var_os("SHOW_ROUNDS").is_some() {
        println!("update rounds {upd:.2?}\nrecompute rounds {rec:.2?}");
    }
    println!(
        "engine update min {:.3} ms, recompute min {:.3} ms, ratio {:.3}",
        min(&upd),
        min(&rec),
        min(&upd) / min(&rec)
    );
    Ok(())
}
