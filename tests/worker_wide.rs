//! Every K the library accepts (1..64) works the same through the worker as in process: MOSP
//! results with explicit preferences and adopted trees, their checkpoints and the replay after a
//! worker is killed (K = 33..64 used to be lost for good after the first checkpoint), through the
//! Rust client and the C ABI (`dyng mosp --isolation worker`: cli/tests/cli_worker_wide.rs); a K
//! nobody can have is refused with the in-process message.

mod common;
mod worker_util;

use common::capi::{last_error, view};
use dyng::ffi::*;
use dyng::worker::{kind, Client, WorkerOptions};
use dyng::{Graph, MospOptions, MospResult, Resources, ResultMut, SsspOptions, SsspResult};
use std::ffi::CString;
use std::ptr::{null, null_mut};
use worker_util::*;


fn prefs(k: usize) -> Vec<u32> {
    (0..k).map(|j| 1 + (j % 2) as u32).collect()
}

/// Every array of `id` in the worker equals `m`'s.
fn assert_same(c: &Client, id: u64, m: &MospResult, what: &str) {
    let v = c.view(id, 0b11100, 0).unwrap();
    assert_eq!(v.i64s(kind::COMBINED_DIST).unwrap(), m.combined_distances(), "{what}: combined distances");
    assert_eq!(v.i32s(kind::COMBINED_PARENT).unwrap(), m.combined_parents(), "{what}: combined parents");
    assert_eq!(v.i64s(kind::PATH_COSTS).unwrap(), m.path_costs(), "{what}: path costs");
    for j in [0, m.k() / 2, m.k() - 1] {
        let t = c.view(id, 0b11, j).unwrap();
        assert_eq!(t.i64s(kind::DIST).unwrap(), m.tree(j).distances(), "{what}: objective {j}");
        assert_eq!(t.i32s(kind::PARENT).unwrap(), m.tree(j).parents(), "{what}: objective {j}");
    }
}

#[test]
fn every_k_survives_checkpoints_and_a_killed_worker() {
    let _serial = serial();
    let res = Resources::sequential();
    for k in [33usize, 64] {
        let g = wide_grid(8, k, k as u64);
        let mut lg = Graph::new(g.clone());
        let mopt = MospOptions { preferences: prefs(k), ..Default::default() };
        let mut computed = MospResult::compute(&res, &lg, 0, &mopt).unwrap();
        // All objectives, all-ones preferences: the case that was lost after the first checkpoint.
        let mut plain = MospResult::compute(&res, &lg, 0, &MospOptions::default()).unwrap();
        let trees: Vec<SsspResult> = (0..k).map(|j| SsspResult::compute(&res, &lg, 0, j, &SsspOptions::default()).unwrap()).collect();
        let arrays: Vec<(Vec<i64>, Vec<i32>)> = trees.iter().map(|t| (t.distances().to_vec(), t.parents().to_vec())).collect();
        let fallback = dyng::Fallback::AdaptiveCounted;
        let adopt_opt = SsspOptions { fallback, ..Default::default() };
        let local_trees: Vec<SsspResult> = arrays
            .iter()
            .enumerate()
            .map(|(j, (d, p))| SsspResult::from_arrays(&lg, 0, j, d.clone(), p.clone(), false, &adopt_opt).unwrap())
            .collect();
        let mut adopted = MospResult::from_trees(&res, &lg, 0, local_trees, &prefs(k)).unwrap();
        let mut last = SsspResult::compute(&res, &lg, 0, k - 1, &SsspOptions::default()).unwrap();

        let c = Client::spawn(WorkerOptions { checkpoint_batches: 3, ..opts() }).unwrap();
        c.load_graph(&g).unwrap();
        let rc = c.mosp_compute(0, &mopt).unwrap();
        let rp = c.mosp_compute(0, &MospOptions::default()).unwrap();
        let views: Vec<(&[i64], &[i32])> = arrays.iter().map(|(d, p)| (&d[..], &p[..])).collect();
        let ra = c.adopt_mosp(0, &views, false, &vec![None; k], fallback, &prefs(k)).unwrap();
        let rs = c.sssp_compute(0, k - 1, &SsspOptions::default()).unwrap();
        assert_same(&c, rc.id, &computed, &format!("K = {k} computed"));
        assert_same(&c, ra.id, &adopted, &format!("K = {k} adopted"));
        for round in 0..8 {
            let b = batch(&g, 6, 6, (k * 100 + round) as u64);
            dyng::update(&res, &mut lg, &b.view(), &mut [ResultMut::Mosp(&mut computed), ResultMut::Mosp(&mut plain), ResultMut::Mosp(&mut adopted), ResultMut::Sssp(&mut last)]).unwrap();
            c.update(&b.view(), &[rc.id, rp.id, ra.id, rs.id]).unwrap();
            if round == 4 || round == 7 {
                // One SIGKILL after checkpoints: the next call respawns and replays them.
                let pid = c.worker_pid().unwrap();
                // SAFETY: signalling the worker this client spawned.
                unsafe { libc::kill(pid as i32, libc::SIGKILL) };
                assert!(wait_gone(pid, std::time::Duration::from_secs(5)).is_some());
            }
            let what = format!("K = {k} after update {round}");
            assert_same(&c, rc.id, &computed, &what);
            assert_same(&c, rp.id, &plain, &what);
            assert_same(&c, ra.id, &adopted, &what);
            assert_eq!(c.copy_i64(rs.id, kind::DIST, 0).unwrap(), last.distances(), "{what}");
        }
        let checkpoints = c.counters().checkpoints.load(std::sync::atomic::Ordering::SeqCst);
        assert!(checkpoints >= 2, "K = {k}: {checkpoints} checkpoints");
        assert_eq!(c.counters().checkpoint_failures.load(std::sync::atomic::Ordering::SeqCst), 0, "K = {k}");
        assert_eq!(c.generation(), 3, "K = {k}: two replacements");
    }
}

fn worker_resources() -> *mut dyng_resources_t {
    let path = CString::new(env!("CARGO_BIN_EXE_dyng-worker")).unwrap();
    let mut opt = dyng_resources_options_default();
    opt.backend = DYNG_BACKEND_SEQUENTIAL;
    opt.isolation = DYNG_ISOLATION_WORKER;
    opt.worker_path = path.as_ptr();
    let mut res = null_mut();
    // SAFETY: a whole options struct; the path lives through the call (the handle copies it).
    assert_eq!(unsafe { dyng_resources_create(&opt, &mut res) }, DYNG_OK, "{}", last_error());
    res
}

/// The MOSP arrays of C result `r` (combined distances and parents, path costs).
unsafe fn mosp_arrays(res: *const dyng_resources_t, r: *const dyng_result_t) -> (Vec<i64>, Vec<i32>, Vec<i64>) {
    // SAFETY: forwarded contract.
    unsafe {
        (
            view(res, r, DYNG_ARRAY_COMBINED_DISTANCES, 0).unwrap(),
            view(res, r, DYNG_ARRAY_COMBINED_PARENTS, 0).unwrap(),
            view(res, r, DYNG_ARRAY_PATH_COSTS, 0).unwrap(),
        )
    }
}

#[test]
fn the_c_abi_takes_every_k_through_the_worker() {
    let _serial = serial();
    let k = 40;
    let g = wide_grid(7, k, 5);
    let csr = dyng_csr_t { n: g.n(), m: g.m(), k: k as u32, row_ptr: g.row_ptr().as_ptr(), col_ind: g.col_ind().as_ptr(), weights: g.weights().as_ptr() };
    let p = prefs(k);
    let mut local_opt = dyng_resources_options_default();
    local_opt.backend = DYNG_BACKEND_SEQUENTIAL;
    // SAFETY: every pointer is valid for its call; handles are freed at the end.
    unsafe {
        let (wres, mut lres) = (worker_resources(), null_mut());
        assert_eq!(dyng_resources_create(&local_opt, &mut lres), DYNG_OK);
        let (mut wg, mut lg) = (null_mut(), null_mut());
        assert_eq!(dyng_graph_from_csr(wres, &csr, &mut wg), DYNG_OK, "{}", last_error());
        assert_eq!(dyng_graph_from_csr(lres, &csr, &mut lg), DYNG_OK);
        let mut mopt = dyng_mosp_options_default();
        (mopt.preferences, mopt.num_preferences) = (p.as_ptr(), k);
        let (mut wm, mut lm) = (null_mut(), null_mut());
        assert_eq!(dyng_mosp_compute(wres, wg, 0, &mopt, &mut wm), DYNG_OK, "{}", last_error());
        assert_eq!(dyng_mosp_compute(lres, lg, 0, &mopt, &mut lm), DYNG_OK);
        assert_eq!(mosp_arrays(wres, wm), mosp_arrays(lres, lm), "dyng_mosp_compute, K = {k}");
        // K trees combined.
        let (mut wt, mut lt) = (vec![], vec![]);
        for j in 0..k as u32 {
            let (mut a, mut b) = (null_mut(), null_mut());
            assert_eq!(dyng_sssp_compute(wres, wg, 0, j, null(), &mut a), DYNG_OK);
            assert_eq!(dyng_sssp_compute(lres, lg, 0, j, null(), &mut b), DYNG_OK);
            wt.push(a as *const dyng_result_t);
            lt.push(b as *const dyng_result_t);
        }
        let (mut wf, mut lf) = (null_mut(), null_mut());
        assert_eq!(dyng_mosp_from_trees(wres, wg, 0, wt.as_ptr(), k, p.as_ptr(), k, &mut wf), DYNG_OK, "{}", last_error());
        assert_eq!(dyng_mosp_from_trees(lres, lg, 0, lt.as_ptr(), k, p.as_ptr(), k, &mut lf), DYNG_OK);
        assert_eq!(mosp_arrays(wres, wf), mosp_arrays(lres, lf), "dyng_mosp_from_trees, K = {k}");
        // A K nobody can have: the in-process message, not a clamped one.
        mopt.k = u32::MAX;
        (mopt.preferences, mopt.num_preferences) = (null(), 0);
        let mut x = null_mut();
        assert_eq!(dyng_mosp_compute(lres, lg, 0, &mopt, &mut x), DYNG_ERR_INVALID_ARGUMENT);
        let local = last_error();
        assert_eq!(dyng_mosp_compute(wres, wg, 0, &mopt, &mut x), DYNG_ERR_INVALID_ARGUMENT);
        assert_eq!(last_error(), local);
        assert!(local.contains("K = 4294967295"), "{local}");
        for r in wt.into_iter().chain(lt).chain([wm as *const _, lm as *const _, wf as *const _, lf as *const _]) {
            dyng_result_free(r as *mut _);
        }
        dyng_graph_free(wg);
        dyng_graph_free(lg);
        dyng_resources_free(wres);
        dyng_resources_free(lres);
    }
}
