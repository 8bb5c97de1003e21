//! GPU checks of the CUDA engine; every test skips (with a notice) without a usable device, unless
//! `DYNG_REQUIRE=gpu` (set by the device bundle's `run.sh`, `docs/gpu-checks.md`), which turns
//! the skip into a failure. On CPU-only machines they pass as skipped.
//!
//! - static solve and dynamic update equal a lowest-id-tie Dijkstra (the canonical tree);
//! - two threads on two streams sharing one pool (the fence path) give identical results;
//! - after the first run, runs allocate no device scratch memory (pool counters);
//! - `mirror_*`: a resident graph's device mirror equals the host's rows, both directions, after
//!   every batch of a stream (compactions, growth, lags included), a 1-change update uploads its
//!   two rows and nothing else, and updates through it equal the sequential engine's.

#[path = "common/skip.rs"]
mod skip;

use dyng::internals::cuda::{self, ChangeSet, CudaEngine};
use dyng::graph::Rows;
use dyng::io::generators::changegen::{generate_changes, ChangeMode, ChangeOptions};
use dyng::resources::pool::WorkspacePool;
use dyng::{update, Backend, Batch, Csr, Graph, MospOptions, MospResult, Resources, ResourcesOptions, SsspOptions, SsspResult, WeightLayout, DISTANCE_INF};
use std::collections::BinaryHeap;

fn engine_or_skip() -> Option<CudaEngine> {
    if !cuda::available() {
        // The engine's own error names what is missing (driver, NVRTC or device).
        let why = CudaEngine::new(0).err().map_or("no device".to_string(), |e| e.to_string());
        skip::skip("cuda_gpu (the GPU tests)", skip::GPU, &format!("no usable CUDA device, driver or NVRTC: {why}"));
        return None;
    }
    Some(CudaEngine::new(0).expect("a CUDA device is available"))
}

/// Deterministic pseudo-random graph: n vertices, about `deg` out-edges each, weights 1..=maxw.
fn graph(n: usize, deg: usize, maxw: u64, seed: u64) -> (Vec<i32>, Vec<i32>, Vec<i32>) {
    let mut s = seed;
    let mut next = || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    let (mut src, mut dst, mut w) = (vec![], vec![], vec![]);
    for u in 0..n {
        for _ in 0..deg {
            src.push(u as i32);
            dst.push((next() % n as u64) as i32);
            w.push((1 + next() % maxw) as i32);
        }
    }
    (src, dst, w)
}

/// Dijkstra with the canonical tie rule: the lowest-id tight in-neighbour is the parent.
fn canonical(n: usize, src: &[i32], dst: &[i32], w: &[i32], source: usize) -> (Vec<i64>, Vec<i32>) {
    let mut adj = vec![vec![]; n];
    for e in 0..src.len() {
        adj[src[e] as usize].push((dst[e] as usize, w[e] as i64));
    }
    let mut d = vec![DISTANCE_INF; n];
    d[source] = 0;
    let mut heap = BinaryHeap::new();
    heap.push(std::cmp::Reverse((0i64, source)));
    while let Some(std::cmp::Reverse((du, u))) = heap.pop() {
        if du > d[u] {
            continue;
        }
        for &(x, wx) in &adj[u] {
            if du + wx < d[x] {
                d[x] = du + wx;
                heap.push(std::cmp::Reverse((d[x], x)));
            }
        }
    }
    let mut p = vec![-1i32; n];
    for e in 0..src.len() {
        let (u, x) = (src[e] as usize, dst[e] as usize);
        if x != source && d[u] < DISTANCE_INF && d[u] + w[e] as i64 == d[x] && (p[x] < 0 || (u as i32) < p[x]) {
            p[x] = u as i32;
        }
    }
    (d, p)
}

#[test]
fn compute_and_update_are_canonical() {
    let Some(engine) = engine_or_skip() else { return };
    let pool = WorkspacePool::new();
    for (n, deg, maxw, seed) in [(50, 3, 5, 1u64), (2000, 4, 100, 2), (20000, 6, 3, 3), (5000, 2, 1 << 30, 4)] {
        let (src, dst, w) = graph(n, deg, maxw, seed);
        let g = Csr::from_edges(n, 1, &src, &dst, &w).unwrap();
        let dg = engine.upload_graph(&g).unwrap();
        let (mut d, mut p) = (vec![0i64; n], vec![0i32; n]);
        engine.sssp_compute(&pool, &dg, 0, 0, None, None, &mut d, &mut p).unwrap();
        assert_eq!((d.clone(), p.clone()), canonical(n, &src, &dst, &w, 0), "static n = {n}");
        // Update: every 7th edge heavier (a possible root), every 11th lighter (an insertion head).
        let mut w2 = w.clone();
        let (mut from, mut to, mut heads) = (vec![], vec![], vec![]);
        for e in 0..w.len() {
            if e % 7 == 0 {
                w2[e] = w[e].saturating_add(3);
                from.push(src[e]);
                to.push(dst[e]);
            } else if e % 11 == 0 && w[e] > 1 {
                w2[e] = w[e] - 1;
                heads.push(dst[e]);
            }
        }
        let g2 = Csr::from_edges(n, 1, &src, &dst, &w2).unwrap();
        let dg2 = engine.upload_graph(&g2).unwrap();
        let maxw2 = w.iter().chain(&w2).copied().max().unwrap() as i64;
        let changes = ChangeSet { from: &from, to: &to, heads: &heads };
        let stats = engine
            .sssp_update(&pool, &dg2, 0, changes, 0, 16, maxw2, &mut d, &mut p)
            .unwrap();
        assert_eq!((d, p), canonical(n, &src, &dst, &w2, 0), "update n = {n}");
        eprintln!("n = {n}: {stats:?}");
    }
}

#[test]
fn steady_state_allocates_nothing() {
    let Some(engine) = engine_or_skip() else { return };
    let pool = WorkspacePool::new();
    let n = 10000;
    let (src, dst, w) = graph(n, 4, 50, 9);
    let dg = engine.upload_graph(&Csr::from_edges(n, 1, &src, &dst, &w).unwrap()).unwrap();
    let (mut d, mut p) = (vec![0i64; n], vec![0i32; n]);
    engine.sssp_compute(&pool, &dg, 0, 0, None, None, &mut d, &mut p).unwrap();
    let first = pool.counters();
    let bytes = pool.idle_bytes();
    for _ in 0..10 {
        engine.sssp_compute(&pool, &dg, 0, 0, None, None, &mut d, &mut p).unwrap();
    }
    let after = pool.counters();
    assert_eq!(after.created, first.created, "no new workspace");
    assert_eq!(after.grown, first.grown, "no growth");
    assert_eq!(pool.idle_bytes(), bytes);
    assert!(bytes >= 48 * n);
}

#[test]
fn two_threads_two_streams_share_one_pool() {
    let Some(engine) = engine_or_skip() else { return };
    let other = engine.with_new_stream().unwrap();
    let pool = WorkspacePool::new();
    let n = 30000;
    let (src, dst, w) = graph(n, 5, 1000, 5);
    let dg = engine.upload_graph(&Csr::from_edges(n, 1, &src, &dst, &w).unwrap()).unwrap();
    let expected = canonical(n, &src, &dst, &w, 0);
    std::thread::scope(|s| {
        for e in [&engine, &other] {
            let (pool, dg, expected) = (&pool, &dg, &expected);
            s.spawn(move || {
                for _ in 0..20 {
                    let (mut d, mut p) = (vec![0i64; n], vec![0i32; n]);
                    e.sssp_compute(pool, dg, 0, 0, None, None, &mut d, &mut p).unwrap();
                    assert_eq!(&(d, p), expected);
                }
            });
        }
    });
    assert!(pool.counters().created <= 2, "{:?}", pool.counters());
}

/// A road-like grid of `side`^2 vertices with K objectives.
fn grid_graph(side: usize, k: usize, seed: u32) -> Graph {
    let t = dyng::io::generators::graphgen::grid(side, side, k, 1, 100, seed).unwrap();
    Graph::new(Csr::from_arrays(t.n, t.k, t.row_ptr, t.col_ind, &t.weights, WeightLayout::EdgeMajor).unwrap())
}

/// Batch `step` of the mirror streams: 100, 1, 10, 1, 2,000 and 1 changes in turn, uniform with
/// half insertions (rows fill up and move; the large batches cross the compaction threshold),
/// reweights and weight increases, global or within 6 hops.
fn stream_batch(g: &Graph, step: u32) -> Batch {
    let opt = ChangeOptions {
        changes: [100, 1, 10, 1, 2000, 1][step as usize % 6],
        mode: [ChangeMode::Uniform, ChangeMode::Reweight, ChangeMode::Uniform, ChangeMode::Increase][step as usize % 4],
        seed: 500 + step,
        local_hops: if step.is_multiple_of(3) { 0 } else { 6 },
        ..Default::default()
    };
    generate_changes(&g.to_csr(), &opt).unwrap().0
}

/// Rows as (head, weights) in slot order, the form of `DeviceGraph::copy_rows`.
fn host_rows(r: Rows<'_>) -> Vec<Vec<(i32, Vec<i32>)>> {
    (0..r.n()).map(|u| r.row(u).map(|e| (r.heads()[e], (0..r.k()).map(|j| r.column(j)[e]).collect())).collect()).collect()
}

#[test]
fn mirror_equals_the_rows_after_every_batch() {
    let Some(engine) = engine_or_skip() else { return };
    let mut g = grid_graph(40, 2, 5);
    for step in 0..40u32 {
        // Every fifth batch the mirror is left behind, to catch up two batches at once.
        if step % 5 != 4 {
            let dg = engine.mirror(&g, true).unwrap();
            assert_eq!(dg.copy_rows(&engine, false).unwrap(), host_rows(g.rows()), "step {step}: out-rows");
            assert_eq!(dg.copy_rows(&engine, true).unwrap(), host_rows(g.in_rows()), "step {step}: in-rows");
        }
        let b = stream_batch(&g, step);
        g.apply(&b.view()).unwrap();
    }
    let c = engine.mirror_counters(&g);
    eprintln!("{c:?}, {} compactions", g.compactions());
    assert!(g.compactions() >= 1, "the stream crosses the compaction threshold");
    // Full uploads: the first (both directions), then after compactions and growth; the other
    // catch-ups upload rows.
    assert!(c.full_uploads >= 2 && c.row_uploads >= 10 && c.syncs == 32, "{c:?}");
    // The engines of one context share the mirror; a clone of the graph is another graph.
    assert_eq!(engine.with_new_stream().unwrap().mirror_counters(&g), c);
    let copy = g.clone();
    let dg = engine.mirror(&copy, true).unwrap();
    assert_eq!(dg.copy_rows(&engine, true).unwrap(), host_rows(copy.in_rows()));
    assert_eq!(engine.mirror_counters(&copy).full_uploads, 2);
}

#[test]
fn mirror_updates_match_the_host_engines() {
    if engine_or_skip().is_none() {
        return;
    }
    let res = Resources::new(&ResourcesOptions { backend: Backend::Cuda, ..Default::default() }).unwrap();
    let host = Resources::sequential();
    let mut gd = grid_graph(60, 3, 11);
    let mut gh = grid_graph(60, 3, 11);
    let (sopt, mopt) = (SsspOptions::default(), MospOptions::default());
    let compute = |res: &Resources, g: &Graph| {
        (SsspResult::compute(res, g, 0, 1, &sopt).unwrap(), MospResult::compute(res, g, 0, &mopt).unwrap())
    };
    let same = |(s, m): &(SsspResult, MospResult), (hs, hm): &(SsspResult, MospResult), what: &str| {
        assert_eq!((s.distances(), s.parents()), (hs.distances(), hs.parents()), "{what}: the SSSP tree");
        for j in 0..3 {
            assert_eq!((m.tree(j).distances(), m.tree(j).parents()), (hm.tree(j).distances(), hm.tree(j).parents()), "{what}: tree {j}");
        }
        assert_eq!((m.combined_distances(), m.combined_parents()), (hm.combined_distances(), hm.combined_parents()), "{what}: the MOSP tree");
        assert_eq!(m.path_costs(), hm.path_costs(), "{what}: the path costs");
    };
    let (mut rd, mut rh) = (compute(&res, &gd), compute(&host, &gh));
    same(&rd, &rh, "compute");
    let mut singles = 0;
    for step in 0..36u32 {
        let b = stream_batch(&gh, step);
        let what = format!("step {step}");
        if step % 9 == 8 {
            // Applied without results: the recomputes' solves catch the mirror up.
            gd.apply(&b.view()).unwrap();
            gh.apply(&b.view()).unwrap();
            (rd, rh) = (compute(&res, &gd), compute(&host, &gh));
        } else {
            let before = (res.mirror_counters(&gd).unwrap(), gd.compactions(), gd.bytes());
            update(&res, &mut gd, &b.view(), &mut [(&mut rd.0).into(), (&mut rd.1).into()]).unwrap();
            update(&host, &mut gh, &b.view(), &mut [(&mut rh.0).into(), (&mut rh.1).into()]).unwrap();
            let after = res.mirror_counters(&gd).unwrap();
            if b.num_deletions() + b.num_insertions() == 1 && step > 0 && (gd.compactions(), gd.bytes()) == (before.1, before.2) {
                // One changed edge: its tail's row and its head's in-row, nothing more.
                assert_eq!(after.full_uploads, before.0.full_uploads, "{what}: {after:?}");
                assert!((1..=2).contains(&(after.rows_uploaded - before.0.rows_uploaded)), "{what}: {after:?}");
                singles += 1;
            }
        }
        same(&rd, &rh, &what);
    }
    let c = res.mirror_counters(&gd).unwrap();
    eprintln!("{c:?}, {} compactions, {singles} single-change updates checked", gd.compactions());
    assert!(singles >= 8 && gd.compactions() >= 1, "{singles} single-change updates, {} compactions", gd.compactions());
}
