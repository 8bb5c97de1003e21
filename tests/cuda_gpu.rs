//! GPU checks of the CUDA engine; every test skips (with a notice) without a usable device, unless
//! `DYNG_REQUIRE=gpu` (set by the device bundle's `run.sh`, `docs/gpu-checks.md`), which turns
//! the skip into a failure. On CPU-only machines they pass as skipped.
//!
//! - static solve and dynamic update equal a lowest-id-tie Dijkstra (the canonical tree);
//! - two threads on two streams sharing one pool (the fence path) give identical results;
//! - after the first run, runs allocate no device scratch memory (pool counters).

#[path = "common/skip.rs"]
mod skip;

use dyng::cuda::{self, ChangeSet, CudaEngine};
use dyng::resources::pool::WorkspacePool;
use dyng::{Csr, DISTANCE_INF};
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
