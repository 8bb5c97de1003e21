//! The adaptive-update policies through the C ABI: `dyng_sssp_options_t.fallback` accepts every
//! `DYNG_FALLBACK_*` value and refuses others; `DYNG_FALLBACK_ADAPTIVE_COUNTED` and adopted trees
//! report the exact `invalidated`, `DYNG_FALLBACK_ADAPTIVE` the sample's estimate when it
//! recomputes before walking.

mod common;

use common::trees::{heavy_binary_tree, HEAVY_TREE_N as N};
use dyng::ffi::*;
use std::ptr::null_mut;

/// The heavy edge into vertex 1: deleting 0 -> 1 invalidates the 4095 vertices below 1.
fn edges() -> (Vec<i32>, Vec<i32>, Vec<i32>) {
    heavy_binary_tree(1)
}

fn last_error() -> String {
    let mut buf = vec![0u8; 512];
    // SAFETY: `buf` holds 512 writable bytes.
    unsafe { dyng_last_error_message(buf.as_mut_ptr() as *mut std::os::raw::c_char, buf.len()) };
    String::from_utf8_lossy(&buf[..buf.iter().position(|&b| b == 0).unwrap_or(0)]).into_owned()
}

/// Computes (or adopts, `fallback = None`) a tree from 0, deletes 0 -> 1, returns the stats.
fn delete_above_half(fallback: Option<u32>) -> dyng_update_stats_t {
    let (src, dst, w) = edges();
    let graph = dyng_edges_t { n: N, m: src.len(), k: 1, src: src.as_ptr(), dst: dst.as_ptr(), weights: w.as_ptr() };
    let (mut res, mut g, mut r) = (null_mut(), null_mut(), null_mut());
    let (del_src, del_dst) = ([0i32], [1i32]);
    let batch = dyng_batch_t {
        struct_size: std::mem::size_of::<dyng_batch_t>(),
        num_insertions: 0,
        ins_src: std::ptr::null(),
        ins_dst: std::ptr::null(),
        ins_weights: std::ptr::null(),
        num_deletions: 1,
        del_src: del_src.as_ptr(),
        del_dst: del_dst.as_ptr(),
    };
    let mut stats = dyng_update_stats_t { struct_size: std::mem::size_of::<dyng_update_stats_t>(), ..Default::default() };
    // SAFETY: every pointer is valid for its call; the handles are freed at the end.
    unsafe {
        assert_eq!(dyng_resources_create(&dyng_resources_options_default(), &mut res), DYNG_OK);
        assert_eq!(dyng_graph_from_edges(res, &graph, &mut g), DYNG_OK);
        match fallback {
            Some(f) => {
                let mut opt = dyng_sssp_options_default();
                opt.fallback = f;
                assert_eq!(dyng_sssp_compute(res, g, 0, 0, &opt, &mut r), DYNG_OK, "{}", last_error());
            }
            None => {
                let mut c = null_mut();
                assert_eq!(dyng_sssp_compute(res, g, 0, 0, std::ptr::null(), &mut c), DYNG_OK);
                let (mut d, mut p) = (vec![0i64; N], vec![0i32; N]);
                let copy = |array, out: *mut std::ffi::c_void| dyng_result_copy(res, c, array, 0, out, N);
                assert_eq!(copy(DYNG_ARRAY_DISTANCES, d.as_mut_ptr().cast()), DYNG_OK, "{}", last_error());
                assert_eq!(copy(DYNG_ARRAY_PARENTS, p.as_mut_ptr().cast()), DYNG_OK, "{}", last_error());
                dyng_result_free(c);
                assert_eq!(dyng_sssp_from_arrays(res, g, 0, 0, d.as_ptr(), p.as_ptr(), false, &mut r), DYNG_OK);
            }
        }
        assert_eq!(dyng_update(res, g, &batch, &r, 1, &mut stats), DYNG_OK, "{}", last_error());
        dyng_result_free(r);
        dyng_graph_free(g);
        dyng_resources_free(res);
    }
    stats
}

#[test]
fn counted_and_adopted_trees_report_the_exact_count() {
    for policy in [Some(DYNG_FALLBACK_ADAPTIVE_COUNTED), None] {
        let s = delete_above_half(policy);
        assert!(s.fallback_used, "{policy:?}");
        assert_eq!(s.invalidated, 4095, "{policy:?}");
    }
    let never = delete_above_half(Some(DYNG_FALLBACK_NEVER));
    assert!(!never.fallback_used);
    assert_eq!(never.invalidated, 4095);
}

#[test]
fn the_adaptive_default_reports_the_sample_estimate() {
    let s = delete_above_half(Some(DYNG_FALLBACK_ADAPTIVE));
    assert!(s.fallback_used);
    assert!((s.invalidated - 4095).abs() < N as i64 * 15 / 100, "estimate {}", s.invalidated);
}

#[test]
fn an_unknown_fallback_value_is_refused() {
    let (src, dst, w) = edges();
    let graph = dyng_edges_t { n: N, m: src.len(), k: 1, src: src.as_ptr(), dst: dst.as_ptr(), weights: w.as_ptr() };
    let (mut res, mut g, mut r) = (null_mut(), null_mut(), null_mut());
    // SAFETY: as above.
    unsafe {
        assert_eq!(dyng_resources_create(&dyng_resources_options_default(), &mut res), DYNG_OK);
        assert_eq!(dyng_graph_from_edges(res, &graph, &mut g), DYNG_OK);
        let mut opt = dyng_sssp_options_default();
        opt.fallback = 4;
        assert_eq!(dyng_sssp_compute(res, g, 0, 0, &opt, &mut r), DYNG_ERR_INVALID_ARGUMENT);
        assert!(r.is_null());
        assert!(last_error().contains("DYNG_FALLBACK_"), "{}", last_error());
        dyng_graph_free(g);
        dyng_resources_free(res);
    }
}
