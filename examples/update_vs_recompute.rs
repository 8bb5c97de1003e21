//! Times one objective's update against a static recompute on the bundled usroads graph (K = 3,
//! source 531, a 10K safe batch from the original generator), on the engine chosen by the first
//! argument (`sequential` or a thread count). Used to profile the engine (e.g. under callgrind).

use dyng::io::changegen::{generate_changes, ChangeOptions};
use dyng::{Csr, Fallback, Graph, Resources, SsspOptions, SsspResult, WeightLayout};
use std::time::Instant;

fn main() -> dyng::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let res = match args.get(1).map(String::as_str) {
        None | Some("sequential") => Resources::sequential(),
        Some(t) => Resources::parallel(t.parse().unwrap_or(1))?,
    };
    let local = args.get(2).is_some_and(|a| a == "local");
    let fallback = match args.get(3).map(String::as_str) {
        Some("always") => Fallback::Always,
        Some("adaptive") => Fallback::Adaptive,
        _ => Fallback::Never,
    };
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data/road-usroads.mtx");
    let (t, _) = dyng::io::mtx::mtx_to_csr(&path, 3, 1, 100, 12345)?;
    let csr = Csr::from_arrays(t.n, 3, t.row_ptr, t.col_ind, &t.weights, WeightLayout::EdgeMajor)?;
    let opt = ChangeOptions {
        changes: 10_000,
        seed: 777,
        safe: true,
        source: 531,
        local_hops: if local { 100 } else { 0 },
        ..Default::default()
    };
    let (batch, summary) = generate_changes(&csr, &opt)?;
    println!("{summary}");
    let mut g = Graph::new(csr);
    let sopt = SsspOptions { fallback, ..Default::default() };
    let mut r = SsspResult::compute(&res, &g, 531, 0, &sopt)?;
    let t0 = Instant::now();
    let s = dyng::update_one(&res, &mut g, &batch.view(), &mut r)?;
    println!("update+apply {:.3} ms, engine {:.3} ms: {s:?}", t0.elapsed().as_secs_f64() * 1e3, s.elapsed_ns as f64 / 1e6);
    let t0 = Instant::now();
    let c = SsspResult::compute(&res, &g, 531, 0, &sopt)?;
    println!("recompute {:.3} ms: {:?}", t0.elapsed().as_secs_f64() * 1e3, c.stats());
    assert_eq!(c.distances(), r.distances());
    Ok(())
}
