//! Does the C ABI add measurable cost to an update? Times `dyng_update` through the exported C
//! functions against `dyng::update` through the Rust API on the same grid graph and batches, and
//! prints the ratio of the medians. Ignored by default (a measurement, not a check):
//!   cargo test --release --test ffi_overhead -- --ignored --nocapture

use dyng::ffi::*;
use dyng::*;
use std::time::{Duration, Instant};

const SIDE: usize = 400; // 160,000 vertices, ~640,000 edges
const CHANGED: usize = 400;
const ROUNDS: usize = 30;

/// A SIDE x SIDE grid with edges both ways, weights from a small LCG.
fn grid() -> (usize, Vec<i32>, Vec<i32>, Vec<i32>) {
    let (mut src, mut dst, mut w) = (vec![], vec![], vec![]);
    let mut seed = 12345u64;
    let mut next = || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        1 + ((seed >> 33) % 100) as i32
    };
    for r in 0..SIDE {
        for c in 0..SIDE {
            let v = (r * SIDE + c) as i32;
            for (dr, dc) in [(0i64, 1i64), (1, 0), (0, -1), (-1, 0)] {
                let (rr, cc) = (r as i64 + dr, c as i64 + dc);
                if rr >= 0 && cc >= 0 && (rr as usize) < SIDE && (cc as usize) < SIDE {
                    src.push(v);
                    dst.push((rr as usize * SIDE + cc as usize) as i32);
                    w.push(next());
                }
            }
        }
    }
    (SIDE * SIDE, src, dst, w)
}

/// Round r re-weights the same edges: heavy on even rounds, back to the original on odd ones, so
/// every round has real work and the graph does not drift.
fn batch(round: usize, src: &[i32], dst: &[i32], w: &[i32]) -> Batch {
    let mut b = Batch::new(1);
    let step = src.len() / CHANGED;
    for i in 0..CHANGED {
        let e = i * step;
        let weight = if round.is_multiple_of(2) { 1000 } else { w[e] };
        b.insert(src[e], dst[e], &[weight]);
    }
    b
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn through_rust(n: usize, src: &[i32], dst: &[i32], w: &[i32]) -> Duration {
    let res = Resources::sequential();
    let mut g = Graph::new(Csr::from_edges(n, 1, src, dst, w).unwrap());
    let mut r = SsspResult::compute(&res, &g, 0, 0, &SsspOptions::default()).unwrap();
    let times = (0..ROUNDS)
        .map(|round| {
            let b = batch(round, src, dst, w);
            let t = Instant::now();
            update(&res, &mut g, &b.view(), &mut [ResultMut::Sssp(&mut r)]).unwrap();
            t.elapsed()
        })
        .collect();
    median(times)
}

fn through_c(n: usize, src: &[i32], dst: &[i32], w: &[i32]) -> Duration {
    let mut opt = dyng_resources_options_default();
    opt.backend = DYNG_BACKEND_SEQUENTIAL;
    let (mut res, mut g, mut r) = (
        std::ptr::null_mut(),
        std::ptr::null_mut(),
        std::ptr::null_mut(),
    );
    let edges = dyng_edges_t {
        n,
        m: src.len(),
        k: 1,
        src: src.as_ptr(),
        dst: dst.as_ptr(),
        weights: w.as_ptr(),
    };
    // SAFETY: every pointer below is valid for its call; handles are freed once at the end.
    unsafe {
        assert_eq!(dyng_resources_create(&opt, &mut res), DYNG_OK);
        assert_eq!(dyng_graph_from_edges(res, &edges, &mut g), DYNG_OK);
        assert_eq!(
            dyng_sssp_compute(res, g, 0, 0, std::ptr::null(), &mut r),
            DYNG_OK
        );
        let times = (0..ROUNDS)
            .map(|round| {
                let b = batch(round, src, dst, w);
                let cb = dyng_batch_t {
                    struct_size: std::mem::size_of::<dyng_batch_t>(),
                    num_insertions: b.num_insertions(),
                    ins_src: b.ins_src.as_ptr(),
                    ins_dst: b.ins_dst.as_ptr(),
                    ins_weights: b.ins_weights.as_ptr(),
                    num_deletions: 0,
                    del_src: std::ptr::null(),
                    del_dst: std::ptr::null(),
                };
                let mut stats = dyng_update_stats_t {
                    struct_size: std::mem::size_of::<dyng_update_stats_t>(),
                    ..Default::default()
                };
                let t = Instant::now();
                assert_eq!(dyng_update(res, g, &cb, &r, 1, &mut stats), DYNG_OK);
                t.elapsed()
            })
            .collect();
        dyng_result_free(r);
        dyng_graph_free(g);
        dyng_resources_free(res);
        median(times)
    }
}

#[test]
#[ignore = "a measurement; run with --ignored --nocapture in release mode"]
fn c_abi_update_overhead() {
    let (n, src, dst, w) = grid();
    // Interleave to spread machine noise over both paths.
    let (mut rust, mut c) = (vec![], vec![]);
    for _ in 0..3 {
        rust.push(through_rust(n, &src, &dst, &w));
        c.push(through_c(n, &src, &dst, &w));
    }
    let (rust, c) = (median(rust), median(c));
    println!(
        "grid {SIDE}x{SIDE} (n = {n}, m = {}), {CHANGED} re-weighted edges per batch, median of {ROUNDS} updates x 3 runs:",
        src.len()
    );
    println!(
        "  Rust API: {:.3} ms   C ABI: {:.3} ms   C/Rust = {:.3}",
        rust.as_secs_f64() * 1e3,
        c.as_secs_f64() * 1e3,
        c.as_secs_f64() / rust.as_secs_f64()
    );
}

/// What a call through the boundary costs when the work is nothing: ns per call of
/// `dyng_graph_info` and `dyng_result_info` (guard, handle checks, output struct), median of 7
/// runs of 1,000,000 calls each. Ignored by default (a measurement):
///   cargo test --release --test ffi_overhead entry_point_cost -- --ignored --nocapture
#[test]
#[ignore = "a measurement; run with --ignored --nocapture in release mode"]
fn entry_point_cost() {
    const CALLS: u32 = 1_000_000;
    let (n, src, dst, w) = (4, vec![0, 1, 2], vec![1, 2, 3], vec![1, 1, 1]);
    let edges = dyng_edges_t { n, m: 3, k: 1, src: src.as_ptr(), dst: dst.as_ptr(), weights: w.as_ptr() };
    let mut opt = dyng_resources_options_default();
    opt.backend = DYNG_BACKEND_SEQUENTIAL;
    let (mut res, mut g, mut r) = (std::ptr::null_mut(), std::ptr::null_mut(), std::ptr::null_mut());
    // SAFETY: every pointer is valid for its call; handles are freed at the end.
    unsafe {
        assert_eq!(dyng_resources_create(&opt, &mut res), DYNG_OK);
        assert_eq!(dyng_graph_from_edges(res, &edges, &mut g), DYNG_OK);
        assert_eq!(dyng_sssp_compute(res, g, 0, 0, std::ptr::null(), &mut r), DYNG_OK);
        let mut gi = dyng_graph_info_t { struct_size: std::mem::size_of::<dyng_graph_info_t>(), ..Default::default() };
        let mut ri = dyng_result_info_t { struct_size: std::mem::size_of::<dyng_result_info_t>(), ..Default::default() };
        let per_call = |f: &mut dyn FnMut()| {
            let mut runs: Vec<f64> = (0..7)
                .map(|_| {
                    let t = Instant::now();
                    for _ in 0..CALLS {
                        f();
                    }
                    t.elapsed().as_secs_f64() * 1e9 / f64::from(CALLS)
                })
                .collect();
            runs.sort_by(f64::total_cmp);
            runs[runs.len() / 2]
        };
        let graph_info = per_call(&mut || assert_eq!(dyng_graph_info(g, &mut gi), DYNG_OK));
        let result_info = per_call(&mut || assert_eq!(dyng_result_info(r, &mut ri), DYNG_OK));
        println!(
            "per call: dyng_graph_info {graph_info:.1} ns, dyng_result_info {result_info:.1} ns (median of 7 x {CALLS})"
        );
        dyng_result_free(r);
        dyng_graph_free(g);
        dyng_resources_free(res);
    }
}
