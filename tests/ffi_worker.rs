//! The C ABI under `DYNG_ISOLATION_WORKER` (the exported `extern "C"` functions, called the way a
//! C program calls them): the thesis example through a `dyng-worker` process gives the in-process
//! arrays, views are snapshots that survive updates and release cleanly over many calls, and
//! every golden case (adopted with `dyng_sssp_from_arrays`, combined with `dyng_mosp_from_trees`,
//! updated once) gives byte-identical outputs, the same counters on the sequential engine, and
//! for error cases the same status and message as in-process.
//!
//! The worker executable is the one cargo built for this test (`CARGO_BIN_EXE_dyng-worker`),
//! passed as `worker_path`, as `tests/worker_basic.rs` does.

mod common;

use common::capi::{last_error, ok, run_golden_case, view};
use common::*;
use dyng::ffi::*;
use std::ffi::CString;
use std::ptr;



fn worker_path() -> CString {
    CString::new(env!("CARGO_BIN_EXE_dyng-worker")).unwrap()
}

/// Worker-isolated resources (the path string must outlive the create call only).
fn worker_resources() -> *mut dyng_resources_t {
    worker_resources_on(DYNG_BACKEND_PARALLEL)
}

fn worker_resources_on(backend: u32) -> *mut dyng_resources_t {
    let path = worker_path();
    let mut opt = dyng_resources_options_default();
    opt.backend = backend;
    opt.isolation = DYNG_ISOLATION_WORKER;
    opt.worker_path = path.as_ptr();
    opt.worker_start_timeout_ms = 20_000;
    // Every functional test runs with checksums on (spec 17.1).
    opt.worker_flags = DYNG_WORKER_CHECKSUMS;
    let mut res = ptr::null_mut();
    // SAFETY: valid options and out pointer.
    ok(unsafe { dyng_resources_create(&opt, &mut res) }, "dyng_resources_create").unwrap();
    res
}


/// Copies through `dyng_result_copy` (VIEW, copy, release inside the library).
unsafe fn copy<T: Copy + Default>(res: *const dyng_resources_t, r: *const dyng_result_t, array: u32, k: u32, n: usize) -> Vec<T> {
    let mut out = vec![T::default(); n];
    ok(unsafe { dyng_result_copy(res, r, array, k, out.as_mut_ptr() as *mut _, n) }, "dyng_result_copy").unwrap();
    out
}

// The thesis example (spec/reference-behaviour.md B.1), as in tests/c/harness.c.
const N: usize = 7;
const M: usize = 10;
const K: usize = 3;
const ROW_PTR: [i32; N + 1] = [0, 2, 3, 5, 6, 9, 10, 10];
const COL_IND: [i32; M] = [1, 2, 3, 1, 3, 4, 1, 5, 6, 6];
const W_EDGE_MAJOR: [i32; M * K] = [2, 1, 5, 4, 1, 1, 2, 4, 2, 10, 15, 2, 5, 16, 3, 1, 1, 1, 4, 3, 2, 1, 2, 2, 5, 6, 2, 1, 1, 1];
const INIT_DIST: [[i64; N]; K] = [[0, 2, 4, 4, 5, 6, 7], [0, 1, 1, 5, 6, 8, 9], [0, 3, 1, 4, 5, 7, 7]];
const UPD_DIST: [[i64; N]; K] = [[0, 2, 4, 9, 10, 11, 12], [0, 1, 1, 17, 18, 2, 3], [0, 3, 1, 4, 5, 7, 7]];
const UPD_PARENT: [[i32; N]; K] = [[-1, 0, 0, 2, 3, 4, 5], [-1, 0, 0, 2, 3, 1, 5], [-1, 2, 0, 2, 3, 4, 4]];
const COMBINED: [i64; N] = [0, 11, 10, 20, 30, 23, 34];
const MOSP_TREE: [i32; N] = [-1, 0, 0, 2, 3, 1, 5];
const COSTS: [i64; N * K] = [0, 0, 0, 2, 1, 5, 4, 1, 1, 9, 17, 4, 10, 18, 5, 14, 2, 19, 15, 3, 20];
const INS_SRC: [i32; 2] = [3, 1];
const INS_DST: [i32; 2] = [5, 5];
const INS_W: [i32; 2 * K] = [10, 2, 12, 12, 1, 14];
const DEL_SRC: [i32; 2] = [1, 4];
const DEL_DST: [i32; 2] = [3, 1];

fn objective_major() -> Vec<i32> {
    let mut w = vec![0; K * M];
    for e in 0..M {
        for j in 0..K {
            w[j * M + e] = W_EDGE_MAJOR[e * K + j];
        }
    }
    w
}

unsafe fn thesis_graph(res: *const dyng_resources_t, w: &[i32]) -> Result<*mut dyng_graph_t, dyng_status_t> {
    let c = dyng_csr_t { n: N, m: M, k: K as u32, row_ptr: ROW_PTR.as_ptr(), col_ind: COL_IND.as_ptr(), weights: w.as_ptr() };
    let mut g = ptr::null_mut();
    // SAFETY: the descriptor points to live arrays of the stated sizes.
    match unsafe { dyng_graph_from_csr(res, &c, &mut g) } {
        DYNG_OK => Ok(g),
        s => Err(s),
    }
}

fn thesis_batch() -> dyng_batch_t {
    dyng_batch_t {
        struct_size: std::mem::size_of::<dyng_batch_t>(),
        num_insertions: 2,
        ins_src: INS_SRC.as_ptr(),
        ins_dst: INS_DST.as_ptr(),
        ins_weights: INS_W.as_ptr(),
        num_deletions: 2,
        del_src: DEL_SRC.as_ptr(),
        del_dst: DEL_DST.as_ptr(),
    }
}

#[test]
fn thesis_example_through_the_worker() {
    let w = objective_major();
    let prefs = [4u32, 1, 4];
    let b = thesis_batch();
    // SAFETY (whole test): every handle is live until freed at the end; outs are writable.
    unsafe {
        let res = worker_resources();
        ok(dyng_resources_warm_up(res), "warm_up").unwrap();
        let mut clone = ptr::null_mut();
        ok(dyng_resources_clone(res, &mut clone), "clone").unwrap();
        let g = thesis_graph(res, &w).unwrap();
        // v1: one graph per worker; the clone shares the worker, so it is refused there too.
        assert_eq!(thesis_graph(clone, &w).unwrap_err(), DYNG_ERR_NOT_SUPPORTED);
        assert!(last_error().contains("another resources handle"), "{}", last_error());

        let mut mo = dyng_mosp_options_default();
        mo.preferences = prefs.as_ptr();
        mo.num_preferences = 3;
        let (mut m, mut s0, mut stale) = (ptr::null_mut(), ptr::null_mut(), ptr::null_mut());
        ok(dyng_mosp_compute(res, g, 0, &mo, &mut m), "mosp_compute").unwrap();
        ok(dyng_sssp_compute(res, g, 0, 0, ptr::null(), &mut s0), "sssp_compute").unwrap();
        ok(dyng_sssp_compute(res, g, 0, 1, ptr::null(), &mut stale), "sssp_compute").unwrap();
        for (j, want) in INIT_DIST.iter().enumerate() {
            assert_eq!(&view::<i64>(res, m, DYNG_ARRAY_DISTANCES, j as u32).unwrap(), want);
        }
        let mut before = ptr::null_mut();
        ok(dyng_result_view(res, s0, DYNG_ARRAY_DISTANCES, 0, &mut before), "view before").unwrap();

        let mut ri: dyng_result_info_t = std::mem::zeroed();
        ri.struct_size = std::mem::size_of::<dyng_result_info_t>();
        ok(dyng_result_info(m, &mut ri), "result_info").unwrap();
        assert_eq!((ri.kind, ri.source, ri.k, ri.graph_k, ri.n, ri.graph_version), (DYNG_RESULT_MOSP, 0, 3, 3, N, 0));

        // Adoption through the worker: a tree read back from it is adopted again; combining
        // refuses what in-process refuses, with its message.
        let mut adopted = ptr::null_mut();
        let p0: Vec<i32> = view(res, s0, DYNG_ARRAY_PARENTS, 0).unwrap();
        ok(dyng_sssp_from_arrays(res, g, 0, 0, INIT_DIST[0].as_ptr(), p0.as_ptr(), false, &mut adopted), "from_arrays").unwrap();
        assert_eq!(view::<i32>(res, adopted, DYNG_ARRAY_PARENTS, 0).unwrap(), p0);
        let mut bad = p0.clone();
        bad[3] = 3;
        let mut out = ptr::null_mut();
        assert_eq!(dyng_sssp_from_arrays(res, g, 0, 0, INIT_DIST[0].as_ptr(), bad.as_ptr(), false, &mut out), DYNG_ERR_INVALID_ARGUMENT);
        assert!(last_error().contains("cycle"), "{}", last_error());
        let wrong_order = [stale as *const dyng_result_t];
        assert_eq!(dyng_mosp_from_trees(res, g, 0, wrong_order.as_ptr(), 1, ptr::null(), 0, &mut out), DYNG_ERR_INVALID_ARGUMENT);
        assert!(last_error().contains("tree 0 is for objective 1"), "{}", last_error());
        let not_sssp = [m as *const dyng_result_t];
        assert_eq!(dyng_mosp_from_trees(res, g, 0, not_sssp.as_ptr(), 1, ptr::null(), 0, &mut out), DYNG_ERR_INVALID_ARGUMENT);
        let mut one = ptr::null_mut();
        let trees = [adopted as *const dyng_result_t];
        ok(dyng_mosp_from_trees(res, g, 0, trees.as_ptr(), 1, ptr::null(), 0, &mut one), "from_trees").unwrap();
        assert_eq!(view::<i64>(res, one, DYNG_ARRAY_DISTANCES, 0).unwrap(), INIT_DIST[0]);
        assert_eq!(view::<i32>(res, one, DYNG_ARRAY_PARENTS, 0).unwrap(), p0);
        dyng_result_free(one);

        // Mixing an in-process result into a worker graph's update is refused before any change.
        let local_res = {
            let mut r = ptr::null_mut();
            ok(dyng_resources_create(ptr::null(), &mut r), "local res").unwrap();
            r
        };
        let lg = thesis_graph(local_res, &w).unwrap();
        let mut local = ptr::null_mut();
        ok(dyng_sssp_compute(local_res, lg, 0, 0, ptr::null(), &mut local), "local compute").unwrap();
        let mixed = [s0, local];
        assert_eq!(dyng_update(res, g, &b, mixed.as_ptr(), 2, ptr::null_mut()), DYNG_ERR_INVALID_ARGUMENT);
        let mixed = [local, s0];
        assert_eq!(dyng_update(local_res, lg, &b, mixed.as_ptr(), 2, ptr::null_mut()), DYNG_ERR_INVALID_ARGUMENT);
        // An invalid batch gives the in-process message and changes nothing.
        let bad_src = [3i32, 9000];
        let mut bad = b;
        bad.ins_src = bad_src.as_ptr();
        let list = [m, s0];
        assert_eq!(dyng_update(res, g, &bad, list.as_ptr(), 2, ptr::null_mut()), DYNG_ERR_INVALID_ARGUMENT);
        assert!(last_error().contains("vertex 9000"), "{}", last_error());

        // The update: once, two results.
        let mut stats = [dyng_update_stats_t { struct_size: std::mem::size_of::<dyng_update_stats_t>(), ..Default::default() }; 2];
        ok(dyng_update(res, g, &b, list.as_ptr(), 2, stats.as_mut_ptr()), "update").unwrap();
        let mut gi = dyng_graph_info_t { struct_size: std::mem::size_of::<dyng_graph_info_t>(), ..Default::default() };
        ok(dyng_graph_info(g, &mut gi), "graph_info").unwrap();
        assert_eq!((gi.n, gi.m, gi.k, gi.version), (N, M, K as u32, 1));
        for j in 0..K {
            assert_eq!(view::<i64>(res, m, DYNG_ARRAY_DISTANCES, j as u32).unwrap(), UPD_DIST[j], "dist {j}");
            assert_eq!(view::<i32>(res, m, DYNG_ARRAY_PARENTS, j as u32).unwrap(), UPD_PARENT[j], "parent {j}");
            assert_eq!(copy::<i32>(res, m, DYNG_ARRAY_PARENTS, j as u32, N), UPD_PARENT[j], "copied parent {j}");
        }
        assert_eq!(view::<i64>(res, m, DYNG_ARRAY_COMBINED_DISTANCES, 0).unwrap(), COMBINED);
        assert_eq!(view::<i32>(res, m, DYNG_ARRAY_COMBINED_PARENTS, 0).unwrap(), MOSP_TREE);
        assert_eq!(view::<i64>(res, m, DYNG_ARRAY_PATH_COSTS, 0).unwrap(), COSTS);
        assert_eq!(copy::<i64>(res, m, DYNG_ARRAY_COMBINED_DISTANCES, 0, N), COMBINED);
        assert_eq!(view::<i64>(res, s0, DYNG_ARRAY_DISTANCES, 0).unwrap(), UPD_DIST[0]);
        ok(dyng_result_info(s0, &mut ri), "result_info").unwrap();
        assert_eq!((ri.kind, ri.objective, ri.graph_version), (DYNG_RESULT_SSSP, 0, 1));

        // The view taken before the update still shows the old distances.
        let (mut data, mut len, mut dtype) = (ptr::null(), 0usize, 0u32);
        ok(dyng_view_data(before, &mut data, &mut len, &mut dtype), "view_data before").unwrap();
        assert_eq!((len, dtype), (N, DYNG_DTYPE_INT64));
        assert_eq!(std::slice::from_raw_parts(data as *const i64, len), INIT_DIST[0]);
        dyng_view_release(before);

        // A result not listed in the update is stale, in views and in the next update.
        let mut sv = ptr::null_mut();
        assert_eq!(dyng_result_view(res, stale, DYNG_ARRAY_DISTANCES, 1, &mut sv), DYNG_ERR_STALE_RESULT);
        assert!(sv.is_null());
        let with_stale = [stale];
        assert_eq!(dyng_update(res, g, &b, with_stale.as_ptr(), 1, ptr::null_mut()), DYNG_ERR_STALE_RESULT);

        // Paths walk a parent array copied from the worker.
        let mut path = [0i32; 8];
        let mut plen = 0usize;
        ok(dyng_result_path(m, DYNG_TREE_COMBINED, 6, path.as_mut_ptr(), path.len(), &mut plen), "result_path").unwrap();
        assert_eq!(&path[..plen], &[0, 1, 5, 6]);

        // Host copy of the graph follows the batch.
        let (mut rp, mut ci, mut wt) = (vec![0i32; N + 1], vec![0i32; M], vec![0i32; M * K]);
        ok(dyng_graph_copy_csr(res, g, rp.as_mut_ptr(), ci.as_mut_ptr(), wt.as_mut_ptr()), "copy_csr").unwrap();
        assert_eq!(rp[N] as usize, M);

        // Views release cleanly over many calls (each release unmaps and acknowledges).
        for i in 0..600 {
            let a = if i % 2 == 0 { DYNG_ARRAY_COMBINED_DISTANCES } else { DYNG_ARRAY_PATH_COSTS };
            let mut v = ptr::null_mut();
            ok(dyng_result_view(res, m, a, 0, &mut v), "view loop").unwrap();
            ok(dyng_view_data(v, &mut data, &mut len, &mut dtype), "view_data loop").unwrap();
            assert_eq!(len, if i % 2 == 0 { N } else { N * K });
            dyng_view_release(v);
        }
        assert_eq!(view::<i64>(res, m, DYNG_ARRAY_COMBINED_DISTANCES, 0).unwrap(), COMBINED);

        let mut bytes = 0usize;
        ok(dyng_workspace_bytes(res, &mut bytes), "workspace_bytes").unwrap();
        ok(dyng_release_workspaces(clone), "release_workspaces").unwrap();
        ok(dyng_workspace_bytes(res, &mut bytes), "workspace_bytes").unwrap();
        assert_eq!(bytes, 0);

        // A tree of an older state is stale for combining, as in-process.
        let trees = [adopted as *const dyng_result_t];
        assert_eq!(dyng_mosp_from_trees(res, g, 0, trees.as_ptr(), 1, ptr::null(), 0, &mut out), DYNG_ERR_STALE_RESULT);
        for r in [m, s0, stale, local, adopted] {
            dyng_result_free(r);
        }
        dyng_graph_free(g);
        dyng_graph_free(lg);
        // The graph slot is free again: a new graph loads into the same worker.
        let g2 = thesis_graph(clone, &w).unwrap();
        let mut s = ptr::null_mut();
        ok(dyng_sssp_compute(clone, g2, 0, 0, ptr::null(), &mut s), "compute on g2").unwrap();
        assert_eq!(view::<i64>(clone, s, DYNG_ARRAY_DISTANCES, 0).unwrap(), INIT_DIST[0]);
        dyng_result_free(s);
        dyng_graph_free(g2);
        dyng_resources_free(clone);
        dyng_resources_free(res);
        dyng_resources_free(local_res);
    }
}

#[test]
fn missing_worker_is_reported_by_create() {
    let path = CString::new("/nonexistent/dyng-worker").unwrap();
    let mut opt = dyng_resources_options_default();
    opt.isolation = DYNG_ISOLATION_WORKER;
    opt.worker_path = path.as_ptr();
    let mut res = ptr::null_mut();
    // SAFETY: valid options and out pointer.
    assert_eq!(unsafe { dyng_resources_create(&opt, &mut res) }, DYNG_ERR_NOT_SUPPORTED);
    assert!(res.is_null());
    assert!(last_error().contains("no dyng-worker executable"), "{}", last_error());
}

/// `worker_flags` is checked, and versioned: a caller built against dyng 0.1 passes a struct
/// that ends before it (`struct_size` = its offset), and whatever lies beyond is not read.
#[test]
fn worker_flags_are_checked_and_versioned() {
    let path = worker_path();
    let mut opt = dyng_resources_options_default();
    opt.isolation = DYNG_ISOLATION_WORKER;
    opt.worker_path = path.as_ptr();
    opt.worker_flags = DYNG_WORKER_CHECKSUMS | 0x80;
    let mut res = ptr::null_mut();
    // SAFETY: valid options and out pointer.
    assert_eq!(unsafe { dyng_resources_create(&opt, &mut res) }, DYNG_ERR_INVALID_ARGUMENT);
    assert!(last_error().contains("worker_flags = 0x81"), "{}", last_error());
    opt.struct_size = std::mem::offset_of!(dyng_resources_options_t, worker_flags);
    // SAFETY: as above; the struct is larger than the size it declares.
    ok(unsafe { dyng_resources_create(&opt, &mut res) }, "a dyng 0.1 struct").unwrap();
    // SAFETY: created above.
    unsafe { dyng_resources_free(res) };
    opt.struct_size = std::mem::offset_of!(dyng_resources_options_t, worker_flags) - 1;
    // SAFETY: as above.
    assert_eq!(unsafe { dyng_resources_create(&opt, &mut res) }, DYNG_ERR_INVALID_ARGUMENT, "smaller than dyng 0.1's");
}

/// Every case of `groups` through the worker and in process (sequential engine on both sides):
/// the same files (and the expected sha256), the same counters, or the same error.
fn compare_groups(groups: &[std::path::PathBuf]) -> usize {
    let worker = worker_resources_on(DYNG_BACKEND_SEQUENTIAL);
    let mut local = ptr::null_mut();
    let mut lopt = dyng_resources_options_default();
    lopt.backend = DYNG_BACKEND_SEQUENTIAL;
    // SAFETY: valid options and out pointer.
    ok(unsafe { dyng_resources_create(&lopt, &mut local) }, "local resources").unwrap();
    let (mut runs, mut failures) = (0, Vec::new());
    for group in groups {
        for case in cases(group) {
            runs += 1;
            // SAFETY: both handles are live until freed below.
            let (w, l) = unsafe { (run_golden_case(worker, &case), run_golden_case(local, &case)) };
            match (w, l) {
                (Ok(w), Ok(l)) => {
                    let files: std::collections::BTreeMap<_, _> = w.files.into_iter().collect();
                    for (rel, digest) in case.expected_sums() {
                        if files.get(&rel).map(|b| sha256_hex(b)) != Some(digest) {
                            failures.push(format!("{}: {rel} differs", case.name));
                        }
                    }
                    if w.counters != l.counters {
                        failures.push(format!("{}: counters {:?} in the worker, {:?} in process", case.name, w.counters, l.counters));
                    }
                }
                (Err(w), Err(l)) if w == l => {}
                (w, l) => failures.push(format!("{}: worker {:?}, in process {:?}", case.name, w.map(|_| "ok"), l.map(|_| "ok"))),
            }
        }
    }
    // SAFETY: created above, no longer used.
    unsafe {
        dyng_resources_free(worker);
        dyng_resources_free(local);
    }
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
    runs
}

#[test]
fn every_golden_case_through_the_worker() {
    let groups: Vec<_> = ["thesis", "handmade", "small", "errors", "quirks"].iter().map(|g| local_golden().join(g)).collect();
    assert_eq!(compare_groups(&groups), 3 + 15 + 60 + 25 + 2);
}

#[test]
fn digest_groups_through_the_worker() {
    let Some(shared) = shared_golden_or_skip("ffi_worker::digest_groups_through_the_worker") else {
        return;
    };
    assert_eq!(compare_groups(&[shared.join("usroads-k3"), shared.join("bremen-k2")]), 6 + 2);
}

/// Resources on the sequential engine in process and in a worker (whose counters then equal the
/// in-process ones).
fn sequential_local_and_worker() -> (*mut dyng_resources_t, *mut dyng_resources_t) {
    let mut lopt = dyng_resources_options_default();
    lopt.backend = DYNG_BACKEND_SEQUENTIAL;
    let mut local = ptr::null_mut();
    // SAFETY: valid options, a writable out.
    ok(unsafe { dyng_resources_create(&lopt, &mut local) }, "local").unwrap();
    (local, worker_resources_on(DYNG_BACKEND_SEQUENTIAL))
}

/// Counters through the worker equal the in-process ones (sequential engine on both sides) for
/// computed trees, a MOSP result combined from them (which reports the trees' counters summed
/// until its first update), and `dyng_update` with a stats array; they are read only on demand.
#[test]
fn counters_of_computed_trees_and_updates_equal_in_process() {
    let w = objective_major();
    let b = thesis_batch();
    // SAFETY (whole test): every handle is live until freed at the end; outs are writable.
    unsafe {
        let (local, remote) = sequential_local_and_worker();
        let mut seen = Vec::new();
        for res in [local, remote] {
            let g = thesis_graph(res, &w).unwrap();
            let mut trees = Vec::new();
            let mut counters = Vec::new();
            for j in 0..K as u32 {
                let mut opt = dyng_sssp_options_default();
                opt.delta = 2 + j as i64; // each tree keeps its own bucket width
                let mut t = ptr::null_mut();
                ok(dyng_sssp_compute(res, g, 0, j, &opt, &mut t), "compute").unwrap();
                trees.push(t);
            }
            let tc: Vec<*const dyng_result_t> = trees.iter().map(|&t| t as *const _).collect();
            let mut m = ptr::null_mut();
            ok(dyng_mosp_from_trees(res, g, 0, tc.as_ptr(), K, ptr::null(), 0, &mut m), "from_trees").unwrap();
            let mut all = trees.clone();
            all.push(m);
            for &r in &all {
                let mut ri: dyng_result_info_t = std::mem::zeroed();
                ri.struct_size = std::mem::size_of::<dyng_result_info_t>();
                ok(dyng_result_info(r, &mut ri), "info").unwrap();
                counters.push(format!("{:?}", stats_tuple(&ri.last_stats)));
            }
            let mut st = [dyng_update_stats_t { struct_size: std::mem::size_of::<dyng_update_stats_t>(), ..Default::default() }; K + 1];
            ok(dyng_update(res, g, &b, all.as_ptr(), all.len(), st.as_mut_ptr()), "update").unwrap();
            counters.extend(st.iter().map(|s| format!("{:?}", stats_tuple(s))));
            counters.push(format!("{:?}", view::<i64>(res, m, DYNG_ARRAY_COMBINED_DISTANCES, 0).unwrap()));
            assert!(st.iter().any(|s| s.pushes > 0), "the update must do work");
            for r in all {
                dyng_result_free(r);
            }
            dyng_graph_free(g);
            seen.push(counters);
        }
        assert!(seen[0].iter().take(K).any(|c| !c.starts_with("(0, 0, 0")), "computes report counters: {:?}", seen[0]);
        assert_eq!(seen[1], seen[0], "worker vs in-process");
        dyng_resources_free(local);
        dyng_resources_free(remote);
    }
}

/// The options' fallback policy reaches the worker (extension 2): trees computed with
/// `DYNG_FALLBACK_ALWAYS` recompute on every update there as in process, alone and combined
/// with `dyng_mosp_from_trees`; trees of different policies cannot be combined in a worker (one
/// policy per ADOPT_MOSP), which is refused with `NOT_SUPPORTED`, and in process they can.
#[test]
fn the_fallback_policy_reaches_the_worker_through_the_c_abi() {
    let w = objective_major();
    let b = thesis_batch();
    // SAFETY (whole test): every handle is live until freed at the end; outs are writable.
    unsafe {
        let (local, remote) = sequential_local_and_worker();
        for (res, in_worker) in [(local, false), (remote, true)] {
            let g = thesis_graph(res, &w).unwrap();
            let compute = |j: u32, fallback: u32| {
                let mut opt = dyng_sssp_options_default();
                opt.fallback = fallback;
                let mut t = ptr::null_mut();
                ok(dyng_sssp_compute(res, g, 0, j, &opt, &mut t), "compute").unwrap();
                t
            };
            let always: Vec<*mut dyng_result_t> = (0..K as u32).map(|j| compute(j, DYNG_FALLBACK_ALWAYS)).collect();
            let tc: Vec<*const dyng_result_t> = always.iter().map(|&t| t as *const _).collect();
            let mut m = ptr::null_mut();
            ok(dyng_mosp_from_trees(res, g, 0, tc.as_ptr(), K, ptr::null(), 0, &mut m), "from_trees").unwrap();
            let mixed = [compute(0, DYNG_FALLBACK_NEVER) as *const dyng_result_t, tc[1], tc[2]];
            let mut out = ptr::null_mut();
            let st = dyng_mosp_from_trees(res, g, 0, mixed.as_ptr(), K, ptr::null(), 0, &mut out);
            if in_worker {
                assert_eq!(st, DYNG_ERR_NOT_SUPPORTED);
                assert!(last_error().contains("different fallback policies"), "{}", last_error());
            } else {
                assert_eq!(st, DYNG_OK, "{}", last_error());
                dyng_result_free(out);
            }
            let mut all = always.clone();
            all.push(m);
            let mut st = [dyng_update_stats_t { struct_size: std::mem::size_of::<dyng_update_stats_t>(), ..Default::default() }; K + 1];
            ok(dyng_update(res, g, &b, all.as_ptr(), all.len(), st.as_mut_ptr()), "update").unwrap();
            assert!(st.iter().all(|s| s.fallback_used), "in_worker {in_worker}: every tree recomputed: {:?}", st.iter().map(|s| s.fallback_used).collect::<Vec<_>>());
            dyng_result_free(mixed[0] as *mut _);
            for r in all {
                dyng_result_free(r);
            }
            dyng_graph_free(g);
        }
        dyng_resources_free(local);
        dyng_resources_free(remote);
    }
}

fn stats_tuple(s: &dyng_update_stats_t) -> (i64, i64, i64, i64, i64, bool, bool) {
    (s.invalidated, s.affected, s.iterations, s.epochs, s.pushes, s.packed_parents, s.fallback_used)
}

/// The CSR of `g` as `dyng_graph_copy_csr` gives it.
unsafe fn csr_of(res: *const dyng_resources_t, g: *const dyng_graph_t) -> (Vec<i32>, Vec<i32>, Vec<i32>) {
    let mut gi = dyng_graph_info_t { struct_size: std::mem::size_of::<dyng_graph_info_t>(), ..Default::default() };
    ok(unsafe { dyng_graph_info(g, &mut gi) }, "graph_info").unwrap();
    let (n, m, k) = (gi.n, gi.m, gi.k as usize);
    let (mut rp, mut ci, mut wt) = (vec![0i32; n + 1], vec![0i32; m], vec![0i32; m * k]);
    ok(unsafe { dyng_graph_copy_csr(res, g, rp.as_mut_ptr(), ci.as_mut_ptr(), wt.as_mut_ptr()) }, "copy_csr").unwrap();
    (rp, ci, wt)
}

#[test]
fn the_host_copy_of_a_worker_graph_follows_a_stream_of_batches() {
    // Every batch after the first is applied, host-side, into the arrays of the state before
    // last (growing and shrinking rows, parallel edges): the host copy must stay the graph an
    // in-process handle holds after the same batches, and `dyng_release_workspaces` frees its
    // spare arrays with the worker's.
    let w = objective_major();
    let mut rng = dyng::io::generators::rng::Mt19937::new(5);
    // SAFETY: the C ABI's contracts, as in the tests above.
    unsafe {
        let res = worker_resources();
        let mut local_res = ptr::null_mut();
        ok(dyng_resources_create(ptr::null(), &mut local_res), "local res").unwrap();
        let (g, lg) = (thesis_graph(res, &w).unwrap(), thesis_graph(local_res, &w).unwrap());
        let mut s = ptr::null_mut();
        ok(dyng_sssp_compute(res, g, 0, 0, ptr::null(), &mut s), "compute").unwrap();
        for step in 0..12 {
            let (rp, ci, _) = csr_of(local_res, lg);
            let mut r = |m: u32| (rng.next_u32() % m) as i32;
            // Deletions of present edges, insertions of new and present ones.
            let (mut del_src, mut del_dst) = (vec![], vec![]);
            for _ in 0..r(3) {
                if ci.is_empty() {
                    break;
                }
                let e = r(ci.len() as u32) as usize;
                del_src.push(rp.iter().rposition(|&start| start as usize <= e).unwrap() as i32);
                del_dst.push(ci[e]);
            }
            let inserts = 1 + r(4) as usize;
            let ins_src: Vec<i32> = (0..inserts).map(|_| r(N as u32)).collect();
            let ins_dst: Vec<i32> = (0..inserts).map(|_| r(N as u32)).collect();
            let ins_w: Vec<i32> = (0..inserts * K).map(|_| 1 + r(20)).collect();
            let b = dyng_batch_t {
                struct_size: std::mem::size_of::<dyng_batch_t>(),
                num_insertions: inserts,
                ins_src: ins_src.as_ptr(),
                ins_dst: ins_dst.as_ptr(),
                ins_weights: ins_w.as_ptr(),
                num_deletions: del_src.len(),
                del_src: del_src.as_ptr(),
                del_dst: del_dst.as_ptr(),
            };
            let list = [s];
            ok(dyng_update(res, g, &b, list.as_ptr(), 1, ptr::null_mut()), "worker update").unwrap();
            ok(dyng_update(local_res, lg, &b, ptr::null(), 0, ptr::null_mut()), "local update").unwrap();
            assert_eq!(csr_of(res, g), csr_of(local_res, lg), "step {step}");
        }
        let mut bytes = 0usize;
        ok(dyng_workspace_bytes(res, &mut bytes), "workspace_bytes").unwrap();
        assert!(bytes > 0);
        ok(dyng_release_workspaces(res), "release_workspaces").unwrap();
        ok(dyng_workspace_bytes(res, &mut bytes), "workspace_bytes").unwrap();
        assert_eq!(bytes, 0);
        dyng_result_free(s);
        dyng_graph_free(g);
        dyng_graph_free(lg);
        dyng_resources_free(res);
        dyng_resources_free(local_res);
    }
}
