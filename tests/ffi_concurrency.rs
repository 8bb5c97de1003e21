//! Forbidden concurrency through the C ABI is an error, not a heap corruption: `dyng_update` on a
//! result while another thread reads it (views, copies, info) gets `DYNG_ERR_BUSY` on one side
//! or the other, every call returns OK or BUSY, and the arrays read are always a whole tree
//! (before or after an update), never a torn one.

mod common;

use common::capi::last_error;
use dyng::ffi::*;
use std::ptr::{null, null_mut};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
use std::time::{Duration, Instant};

const SIDE: usize = 60;

fn grid() -> (usize, Vec<i32>, Vec<i32>, Vec<i32>) {
    let (mut src, mut dst, mut w) = (vec![], vec![], vec![]);
    for r in 0..SIDE {
        for c in 0..SIDE {
            let v = (r * SIDE + c) as i32;
            if c + 1 < SIDE {
                src.extend([v, v + 1]);
                dst.extend([v + 1, v]);
                w.extend([1 + (v % 7), 1 + (v % 5)]);
            }
            if r + 1 < SIDE {
                src.extend([v, v + SIDE as i32]);
                dst.extend([v + SIDE as i32, v]);
                w.extend([1 + (v % 3), 1 + (v % 11)]);
            }
        }
    }
    (SIDE * SIDE, src, dst, w)
}

#[test]
fn update_while_another_thread_reads_is_busy_not_a_race() {
    let (n, src, dst, w) = grid();
    let edges = dyng_edges_t { n, m: src.len(), k: 1, src: src.as_ptr(), dst: dst.as_ptr(), weights: w.as_ptr() };
    let (mut res, mut g, mut r) = (null_mut(), null_mut(), null_mut());
    // SAFETY: valid pointers; the handles are freed at the end.
    unsafe {
        assert_eq!(dyng_resources_create(null(), &mut res), DYNG_OK);
        assert_eq!(dyng_graph_from_edges(res, &edges, &mut g), DYNG_OK);
        assert_eq!(dyng_sssp_compute(res, g, 0, 0, null(), &mut r), DYNG_OK);
    }
    let (res_p, g_p, r_p) = (res as usize, g as usize, r as usize);
    let stop = AtomicBool::new(false);
    let (busy_reads, busy_updates, reads, updates) = (AtomicUsize::new(0), AtomicUsize::new(0), AtomicUsize::new(0), AtomicUsize::new(0));
    let t0 = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                let mut d = vec![0i64; n];
                while !stop.load(Relaxed) {
                    let (res, r) = (res_p as *const dyng_resources_t, r_p as *const dyng_result_t);
                    // SAFETY: live handles; `d` holds n elements; views are released.
                    unsafe {
                        let mut v = null_mut();
                        let st = dyng_result_view(res, r, DYNG_ARRAY_PARENTS, 0, &mut v);
                        assert!(st == DYNG_OK || st == DYNG_ERR_BUSY, "view: {st}: {}", last_error());
                        if st == DYNG_OK {
                            let (mut data, mut len, mut dt) = (null(), 0usize, 0u32);
                            assert_eq!(dyng_view_data(v, &mut data, &mut len, &mut dt), DYNG_OK);
                            assert_eq!(len, n);
                            dyng_view_release(v);
                        }
                        let st = dyng_result_copy(res, r, DYNG_ARRAY_DISTANCES, 0, d.as_mut_ptr().cast(), n);
                        assert!(st == DYNG_OK || st == DYNG_ERR_BUSY, "copy: {st}: {}", last_error());
                        if st == DYNG_OK {
                            // A whole tree: the source at 0, every vertex of the grid reachable.
                            assert_eq!(d[0], 0);
                            assert!(d.iter().all(|&x| (0..DYNG_DISTANCE_INF / 2).contains(&x)), "a torn copy");
                        } else {
                            assert!(last_error().contains("in use by another call"), "{}", last_error());
                            busy_reads.fetch_add(1, Relaxed);
                        }
                        reads.fetch_add(1, Relaxed);
                    }
                }
            });
        }
        s.spawn(|| {
            let mut round = 0;
            while t0.elapsed() < Duration::from_secs(20)
                && (busy_reads.load(Relaxed) < 3 || busy_updates.load(Relaxed) < 3 || round < 200)
            {
                // Re-weight one row of edges: heavy on even rounds, back on odd ones.
                let (bs, bd): (Vec<i32>, Vec<i32>) = (0..SIDE as i32 - 1).map(|c| (c, c + 1)).unzip();
                let bw = vec![if round % 2 == 0 { 50 } else { 1 }; bs.len()];
                let b = dyng_batch_t {
                    struct_size: std::mem::size_of::<dyng_batch_t>(),
                    num_insertions: bs.len(),
                    ins_src: bs.as_ptr(),
                    ins_dst: bd.as_ptr(),
                    ins_weights: bw.as_ptr(),
                    num_deletions: 0,
                    del_src: null(),
                    del_dst: null(),
                };
                let rs = [r_p as *mut dyng_result_t];
                // SAFETY: live handles; the batch's arrays hold their counts.
                let st = unsafe { dyng_update(res_p as *const _, g_p as *mut _, &b, rs.as_ptr(), 1, null_mut()) };
                assert!(st == DYNG_OK || st == DYNG_ERR_BUSY, "update: {st}: {}", last_error());
                if st == DYNG_ERR_BUSY {
                    busy_updates.fetch_add(1, Relaxed);
                } else {
                    round += 1;
                }
                updates.fetch_add(1, Relaxed);
            }
            stop.store(true, Relaxed);
        });
    });
    println!(
        "{} reads ({} busy), {} updates ({} busy)",
        reads.load(Relaxed),
        busy_reads.load(Relaxed),
        updates.load(Relaxed),
        busy_updates.load(Relaxed)
    );
    assert!(busy_reads.load(Relaxed) + busy_updates.load(Relaxed) > 0, "no overlap was detected in 20 s");
    // Once nobody else uses them, the handles work as before, and free.
    // SAFETY: live handles, freed once.
    unsafe {
        let mut info = dyng_result_info_t { struct_size: std::mem::size_of::<dyng_result_info_t>(), ..Default::default() };
        assert_eq!(dyng_result_info(r, &mut info), DYNG_OK);
        dyng_result_free(r);
        dyng_graph_free(g);
        dyng_resources_free(res);
    }
}
