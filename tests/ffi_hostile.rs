//! Hostile calls through the C ABI: every exported function, given out-of-range values, NULL,
//! freed and wrong-type handles, returns an error status (or its documented default) and never
//! `DYNG_ERR_PANIC` or `DYNG_ERR_INTERNAL`: bad input must be refused by validation, not caught
//! by the boundary's guard.
//!
//! `every_entry_point_refuses_out_of_range_values` walks each function through a fixed list of
//! such values; the `fuzz_*` tests are proptest harnesses, one per entry point, drawing arguments
//! from the same kinds of values (`DYNG_FUZZ_CASES` cases each, default 256; a soak:
//! `DYNG_FUZZ_CASES=20000 cargo test --release --test ffi_hostile`).

mod common;

use common::capi::last_error;
use dyng::ffi::*;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use std::ffi::{c_char, c_void, CString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::ptr::{null, null_mut};

/// Vertices of the fixture graph.
const N: usize = 6;
/// Objectives of the fixture graph.
const K: usize = 2;

/// The fixture graph: a ring 0 -> 1 -> .. -> 5 -> 0 plus chords 0 -> 3 and 2 -> 5.
fn edges() -> (Vec<i32>, Vec<i32>, Vec<i32>) {
    let mut src: Vec<i32> = (0..N as i32).collect();
    let mut dst: Vec<i32> = (0..N as i32).map(|v| (v + 1) % N as i32).collect();
    src.extend([0, 2]);
    dst.extend([3, 5]);
    let w = (0..src.len() * K).map(|i| 1 + (i as i32 * 7) % 9).collect();
    (src, dst, w)
}

/// The fixture's CSR arrays (objective-major weights).
fn csr_arrays() -> (Vec<i32>, Vec<i32>, Vec<i32>) {
    let (src, dst, w) = edges();
    let mut order: Vec<usize> = (0..src.len()).collect();
    order.sort_by_key(|&e| src[e]);
    let mut row_ptr = vec![0i32; N + 1];
    for &s in &src {
        row_ptr[s as usize + 1] += 1;
    }
    for v in 0..N {
        row_ptr[v + 1] += row_ptr[v];
    }
    let col_ind = order.iter().map(|&e| dst[e]).collect();
    let m = src.len();
    let weights = (0..K).flat_map(|j| order.iter().map(move |&e| (j, e))).map(|(j, e)| w[e * K + j]).collect();
    let _ = m;
    (row_ptr, col_ind, weights)
}

/// A fresh folder per call (the tests of this file run in parallel).
fn scratch(name: &str) -> PathBuf {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let i = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let d = std::env::temp_dir().join(format!("dyng-hostile-{}-{name}-{i}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn c_path(p: &Path) -> CString {
    CString::new(p.as_os_str().as_bytes()).unwrap()
}

/// Handles of every type, live, freed and of the wrong type, for the calls to be tried on.
struct World {
    res: *mut dyng_resources_t,
    g: *mut dyng_graph_t,
    sssp: *mut dyng_result_t,
    mosp: *mut dyng_result_t,
    batch: *mut dyng_batch_buffer_t,
    view: *mut dyng_view_t,
    freed_res: *mut dyng_resources_t,
    freed_g: *mut dyng_graph_t,
    freed_r: *mut dyng_result_t,
    freed_batch: *mut dyng_batch_buffer_t,
    freed_view: *mut dyng_view_t,
    dir: PathBuf,
}

/// Asserts that a fallible call failed cleanly or succeeded: never a caught panic, never an
/// internal error.
#[track_caller]
fn clean(s: dyng_status_t, what: &str) {
    assert!(
        s != DYNG_ERR_PANIC && s != DYNG_ERR_INTERNAL,
        "{what}: status {s} ({}): {}",
        status_name(s),
        last_error()
    );
}

/// Asserts a refusal: an error status other than PANIC and INTERNAL.
#[track_caller]
fn refused(s: dyng_status_t, what: &str) {
    clean(s, what);
    assert_ne!(s, DYNG_OK, "{what}: accepted");
}

fn status_name(s: dyng_status_t) -> String {
    // SAFETY: a static NUL-terminated string.
    unsafe { std::ffi::CStr::from_ptr(dyng_status_string(s)) }.to_string_lossy().into_owned()
}

/// A void function (`_free`, `_release`) must not have caught a panic: its message says so.
#[track_caller]
fn no_panic_message(what: &str) {
    let m = last_error();
    assert!(!m.contains("panic"), "{what}: {m}");
}

impl World {
    fn new() -> World {
        Self::with(DYNG_ISOLATION_IN_PROCESS)
    }

    /// The world under worker isolation: every handle's work runs in a `dyng-worker`.
    fn worker() -> World {
        Self::with(DYNG_ISOLATION_WORKER)
    }

    fn with(isolation: u32) -> World {
        let dir = scratch("world");
        std::fs::write(dir.join("insert.txt"), "0 2 1 1\n").unwrap();
        std::fs::write(dir.join("delete.txt"), "1 2\n").unwrap();
        let (src, dst, w) = edges();
        let e = dyng_edges_t { n: N, m: src.len(), k: K as u32, src: src.as_ptr(), dst: dst.as_ptr(), weights: w.as_ptr() };
        let worker = CString::new(env!("CARGO_BIN_EXE_dyng-worker")).unwrap();
        let mut opt = dyng_resources_options_default();
        opt.backend = DYNG_BACKEND_SEQUENTIAL;
        opt.isolation = isolation;
        opt.worker_path = worker.as_ptr();
        let mut w = World {
            res: null_mut(),
            g: null_mut(),
            sssp: null_mut(),
            mosp: null_mut(),
            batch: null_mut(),
            view: null_mut(),
            freed_res: null_mut(),
            freed_g: null_mut(),
            freed_r: null_mut(),
            freed_batch: null_mut(),
            freed_view: null_mut(),
            dir,
        };
        // SAFETY: every pointer is valid for its call; the world frees its handles on drop.
        unsafe {
            let ok = |s: dyng_status_t, what: &str| assert_eq!(s, DYNG_OK, "{what}: {}", last_error());
            ok(dyng_resources_create(&opt, &mut w.res), "resources");
            ok(dyng_graph_from_edges(w.res, &e, &mut w.g), "graph");
            ok(dyng_sssp_compute(w.res, w.g, 0, 0, null(), &mut w.sssp), "sssp");
            ok(dyng_mosp_compute(w.res, w.g, 0, null(), &mut w.mosp), "mosp");
            let d = c_path(&w.dir);
            ok(dyng_batch_read(d.as_ptr(), w.g, &mut w.batch), "batch");
            ok(dyng_result_view(w.res, w.mosp, DYNG_ARRAY_PATH_COSTS, 0, &mut w.view), "view");
            ok(dyng_resources_create(&opt, &mut w.freed_res), "resources 2");
            // On resources of its own: a worker holds one graph.
            ok(dyng_graph_from_edges(w.freed_res, &e, &mut w.freed_g), "graph 2");
            ok(dyng_sssp_compute(w.res, w.g, 1, 1, null(), &mut w.freed_r), "sssp 2");
            ok(dyng_batch_read(d.as_ptr(), w.g, &mut w.freed_batch), "batch 2");
            ok(dyng_result_view(w.res, w.sssp, DYNG_ARRAY_DISTANCES, 0, &mut w.freed_view), "view 2");
            dyng_resources_free(w.freed_res);
            dyng_graph_free(w.freed_g);
            dyng_result_free(w.freed_r);
            dyng_batch_buffer_free(w.freed_batch);
            dyng_view_release(w.freed_view);
        }
        w
    }

    /// `pick` 0: NULL, 1: live, 2: freed, 3: a live handle of another type.
    fn res(&self, pick: u8) -> *mut dyng_resources_t {
        [null_mut(), self.res, self.freed_res, self.g as *mut _][pick as usize % 4]
    }
    fn graph(&self, pick: u8) -> *mut dyng_graph_t {
        [null_mut(), self.g, self.freed_g, self.sssp as *mut _][pick as usize % 4]
    }
    fn result(&self, pick: u8) -> *mut dyng_result_t {
        [null_mut(), self.sssp, self.freed_r, self.view as *mut _, self.mosp][pick as usize % 5]
    }
    fn batch_buffer(&self, pick: u8) -> *mut dyng_batch_buffer_t {
        [null_mut(), self.batch, self.freed_batch, self.res as *mut _][pick as usize % 4]
    }
    fn view(&self, pick: u8) -> *mut dyng_view_t {
        [null_mut(), self.view, self.freed_view, self.batch as *mut _][pick as usize % 4]
    }
}

impl Drop for World {
    fn drop(&mut self) {
        // SAFETY: live handles created in `new`, freed once.
        unsafe {
            dyng_view_release(self.view);
            dyng_batch_buffer_free(self.batch);
            dyng_result_free(self.mosp);
            dyng_result_free(self.sssp);
            dyng_graph_free(self.g);
            dyng_resources_free(self.res);
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Signed vertex ids just outside, far outside and inside [0, N).
const BAD_VERTICES: [i32; 7] = [-1, -7, i32::MIN, N as i32, N as i32 + 1, i32::MAX, 1 << 20];
/// Enum and objective values a C caller might invent.
const BAD_U32: [u32; 6] = [5, 7, 64, 65, u32::MAX - 1, u32::MAX];
/// Weights outside [1, 2^31-1].
const BAD_WEIGHTS: [i32; 3] = [0, -1, i32::MIN];
/// `struct_size` values that are too small, odd or huge.
const BAD_SIZES: [usize; 5] = [0, 1, 7, 8, 3];

fn stats_out() -> dyng_update_stats_t {
    dyng_update_stats_t { struct_size: std::mem::size_of::<dyng_update_stats_t>(), ..Default::default() }
}

fn empty_batch() -> dyng_batch_t {
    dyng_batch_t {
        struct_size: std::mem::size_of::<dyng_batch_t>(),
        num_insertions: 0,
        ins_src: null(),
        ins_dst: null(),
        ins_weights: null(),
        num_deletions: 0,
        del_src: null(),
        del_dst: null(),
    }
}

/// The old tree of objective 0 from source 0, as a caller of `dyng_sosp_update_arrays` holds it.
fn tree0(w: &World) -> (Vec<i64>, Vec<i32>) {
    let (mut d, mut p) = (vec![0i64; N], vec![0i32; N]);
    // SAFETY: live handles; outputs of N elements.
    unsafe {
        assert_eq!(dyng_result_copy(w.res, w.sssp, DYNG_ARRAY_DISTANCES, 0, d.as_mut_ptr().cast(), N), DYNG_OK);
        assert_eq!(dyng_result_copy(w.res, w.sssp, DYNG_ARRAY_PARENTS, 0, p.as_mut_ptr().cast(), N), DYNG_OK);
    }
    (d, p)
}

/// Objective 0 of the fixture as the one-objective descriptor `dyng_sosp_update_arrays` takes.
struct OneObjective {
    row_ptr: Vec<i32>,
    col_ind: Vec<i32>,
    weights: Vec<i32>,
}

impl OneObjective {
    fn new() -> Self {
        let (row_ptr, col_ind, weights) = csr_arrays();
        let m = col_ind.len();
        OneObjective { row_ptr, col_ind, weights: weights[..m].to_vec() }
    }
    /// Its reverse graph: row v lists the tails of the edges into v, with their weights.
    fn reversed(&self) -> Self {
        let (row_ptr, col_ind, weights) = common::reverse_csr(&self.row_ptr, &self.col_ind, &self.weights);
        OneObjective { row_ptr, col_ind, weights }
    }
    fn mutate(&mut self, rp: &[Option<i32>], ci: &[Option<i32>], w: &[Option<i32>]) {
        for (x, m) in self.row_ptr.iter_mut().zip(rp) {
            *x = m.unwrap_or(*x);
        }
        for (x, m) in self.col_ind.iter_mut().zip(ci) {
            *x = m.unwrap_or(*x);
        }
        for (x, m) in self.weights.iter_mut().zip(w) {
            *x = m.unwrap_or(*x);
        }
    }
    fn desc(&self) -> dyng_csr_t {
        dyng_csr_t {
            n: self.row_ptr.len() - 1,
            m: self.col_ind.len(),
            k: 1,
            row_ptr: self.row_ptr.as_ptr(),
            col_ind: self.col_ind.as_ptr(),
            weights: self.weights.as_ptr(),
        }
    }
}

/// Calls `dyng_sosp_update_arrays` with the given old tree and changes (dist/parent are copies).
#[allow(clippy::too_many_arguments)]
fn sosp(w: &World, g: &OneObjective, rev: Option<&OneObjective>, from: &[i32], to: &[i32], heads: &[i32], source: i32, delta: i64, max_weight: i32, dist: &[i64], parent: &[i32]) -> dyng_status_t {
    let (mut d, mut p) = (dist.to_vec(), parent.to_vec());
    let mut st = stats_out();
    let r = rev.map(OneObjective::desc);
    // SAFETY: arrays hold their counts; d and p hold n = their length elements.
    let s = unsafe {
        dyng_sosp_update_arrays(
            w.res,
            &g.desc(),
            r.as_ref().map_or(null(), |r| r as *const dyng_csr_t),
            from.as_ptr(),
            to.as_ptr(),
            from.len().min(to.len()),
            heads.as_ptr(),
            heads.len(),
            source,
            delta,
            max_weight as i64,
            d.as_mut_ptr(),
            p.as_mut_ptr(),
            &mut st,
        )
    };
    if s != DYNG_OK {
        assert_eq!((&d[..], &p[..]), (dist, parent), "a failed call changed the caller's arrays");
    }
    s
}

#[test]
fn every_entry_point_refuses_out_of_range_values() {
    walk(&World::new());
}

/// The same walk through worker-isolated resources (the worker's side of every call).
#[test]
fn every_entry_point_refuses_out_of_range_values_through_the_worker() {
    walk(&World::worker());
}

fn walk(w: &World) {
    let (d0, p0) = tree0(w);
    let g1 = OneObjective::new();
    // SAFETY (the whole test): every pointer passed is NULL, a dyng handle (live, quarantined
    // or of another type) or a buffer holding the count the call reads.
    unsafe {
        // dyng_sosp_update_arrays: every caller array out of range, one entry at a time.
        for v in 0..N {
            for bad in BAD_VERTICES.iter().copied().filter(|&b| b != -1) {
                let mut p = p0.clone();
                p[v] = bad;
                refused(sosp(w, &g1, None, &[0], &[1], &[], 0, 0, 10, &d0, &p), &format!("sosp parent[{v}] = {bad}"));
                refused(sosp(w, &g1, None, &[], &[], &[], 0, 0, 10, &d0, &p), &format!("sosp, no change, parent[{v}] = {bad}"));
            }
            for bad in [-1i64, i64::MIN, i64::MAX, DYNG_DISTANCE_INF + 1] {
                let mut d = d0.clone();
                d[v] = bad;
                clean(sosp(w, &g1, None, &[0], &[1], &[], 0, 0, 10, &d, &p0), &format!("sosp dist[{v}] = {bad}"));
            }
        }
        for bad in BAD_VERTICES {
            refused(sosp(w, &g1, None, &[bad], &[1], &[], 0, 0, 10, &d0, &p0), &format!("sosp changed_src {bad}"));
            refused(sosp(w, &g1, None, &[0], &[bad], &[], 0, 0, 10, &d0, &p0), &format!("sosp changed_dst {bad}"));
            refused(sosp(w, &g1, None, &[], &[], &[bad], 0, 0, 10, &d0, &p0), &format!("sosp insert_heads {bad}"));
            refused(sosp(w, &g1, None, &[0], &[1], &[], bad, 0, 10, &d0, &p0), &format!("sosp source {bad}"));
        }
        for (delta, mw) in [(i64::MIN, 10), (-1, 10), (i64::MAX, 10), (1, i32::MIN), (1, -1), (1, i32::MAX), (i64::MAX, i32::MAX)] {
            clean(sosp(w, &g1, None, &[0], &[1], &[1], 0, delta, mw, &d0, &p0), &format!("sosp delta {delta} max_weight {mw}"));
        }
        // A cycle in the caller's tree.
        let mut p = p0.clone();
        p[1] = 2;
        p[2] = 1;
        refused(sosp(w, &g1, None, &[0], &[1], &[], 0, 0, 10, &d0, &p), "sosp parent cycle");
        // The descriptor itself.
        let mut bad = OneObjective::new();
        bad.row_ptr[2] = -3;
        refused(sosp(w, &bad, None, &[0], &[1], &[], 0, 0, 10, &d0, &p0), "sosp row_ptr negative");
        let mut bad = OneObjective::new();
        bad.col_ind[0] = N as i32;
        refused(sosp(w, &bad, None, &[0], &[1], &[], 0, 0, 10, &d0, &p0), "sosp col_ind = n");
        let mut bad = OneObjective::new();
        bad.weights[0] = 0;
        refused(sosp(w, &bad, None, &[0], &[1], &[], 0, 0, 10, &d0, &p0), "sosp weight 0");
        // With the reverse graph, Delta and max_weight given, the rows are checked as the repair
        // reads them: every entry of one kind damaged, the first read refuses the call with the
        // message of the full check.
        for (what, graph, reverse, says) in [
            ("weights 0", (None, None, Some(0)), None, "the graph"),
            ("weights above max_weight", (None, None, Some(11)), None, "above max_weight"),
            ("heads n", (None, Some(N as i32), None), None, "the graph"),
            ("reverse tails n", (None, None, None), Some((None, Some(N as i32), None)), "the reverse graph"),
            ("reverse weights 0", (None, None, None), Some((None, None, Some(0))), "the reverse graph"),
            ("reverse row_ptr -1", (None, None, None), Some((Some(-1), None, None)), "the reverse graph"),
        ] {
            let damage = |g: &mut OneObjective, (rp, ci, wt): (Option<i32>, Option<i32>, Option<i32>)| {
                let keep = |x: &mut i32, to: Option<i32>| *x = to.unwrap_or(*x);
                let last = g.row_ptr.len() - 1;
                g.row_ptr[1..last].iter_mut().for_each(|x| keep(x, rp));
                g.col_ind.iter_mut().for_each(|x| keep(x, ci));
                g.weights.iter_mut().for_each(|x| keep(x, wt));
            };
            let (mut g, mut r) = (OneObjective::new(), OneObjective::new().reversed());
            damage(&mut g, graph);
            if let Some(d) = reverse {
                damage(&mut r, d);
            }
            refused(sosp(w, &g, Some(&r), &[0], &[1], &[], 0, 1, 10, &d0, &p0), &format!("sosp guarded {what}"));
            let message = last_error();
            assert!(message.contains(says), "guarded {what}: {message}");
        }

        // Graph construction.
        let (rp, ci, wt) = csr_arrays();
        let m = ci.len();
        let csr = |rp: &[i32], ci: &[i32], wt: &[i32], k: u32| dyng_csr_t { n: rp.len() - 1, m: ci.len(), k, row_ptr: rp.as_ptr(), col_ind: ci.as_ptr(), weights: wt.as_ptr() };
        let mut out = null_mut();
        for k in [0u32, 65, u32::MAX] {
            let wk = vec![1i32; m * (k as usize).min(70)];
            refused(dyng_graph_from_csr(w.res, &csr(&rp, &ci, &wk, k), &mut out), &format!("from_csr k = {k}"));
        }
        for i in 0..=N {
            for bad in [-1, -7, i32::MIN, m as i32 + 1, i32::MAX] {
                let mut r = rp.clone();
                r[i] = bad;
                refused(dyng_graph_from_csr(w.res, &csr(&r, &ci, &wt, K as u32), &mut out), &format!("from_csr row_ptr[{i}] = {bad}"));
            }
        }
        for bad in BAD_VERTICES {
            let mut c = ci.clone();
            c[m - 1] = bad;
            refused(dyng_graph_from_csr(w.res, &csr(&rp, &c, &wt, K as u32), &mut out), &format!("from_csr col_ind {bad}"));
        }
        for bad in BAD_WEIGHTS {
            let mut x = wt.clone();
            x[m + 1] = bad;
            refused(dyng_graph_from_csr(w.res, &csr(&rp, &ci, &x, K as u32), &mut out), &format!("from_csr weight {bad}"));
        }
        let huge = dyng_csr_t { n: usize::MAX, m: usize::MAX / 2, k: 3, row_ptr: rp.as_ptr(), col_ind: ci.as_ptr(), weights: wt.as_ptr() };
        refused(dyng_graph_from_csr(w.res, &huge, &mut out), "from_csr n = SIZE_MAX");
        let huge = dyng_csr_t { n: 0, m: usize::MAX / 2, k: 3, ..huge };
        refused(dyng_graph_from_csr(w.res, &huge, &mut out), "from_csr m x K overflows");
        let (src, dst, ew) = edges();
        let el = |src: &[i32], dst: &[i32], ew: &[i32], n: usize, k: u32| dyng_edges_t { n, m: src.len(), k, src: src.as_ptr(), dst: dst.as_ptr(), weights: ew.as_ptr() };
        for bad in BAD_VERTICES {
            let mut s = src.clone();
            s[3] = bad;
            refused(dyng_graph_from_edges(w.res, &el(&s, &dst, &ew, N, K as u32), &mut out), &format!("from_edges src {bad}"));
            let mut d = dst.clone();
            d[3] = bad;
            refused(dyng_graph_from_edges(w.res, &el(&src, &d, &ew, N, K as u32), &mut out), &format!("from_edges dst {bad}"));
        }
        for bad in BAD_WEIGHTS {
            let mut x = ew.clone();
            x[5] = bad;
            refused(dyng_graph_from_edges(w.res, &el(&src, &dst, &x, N, K as u32), &mut out), &format!("from_edges weight {bad}"));
        }
        for k in [0u32, 65, u32::MAX] {
            refused(dyng_graph_from_edges(w.res, &el(&[], &[], &[], N, k), &mut out), &format!("from_edges k = {k}"));
        }
        refused(dyng_graph_from_edges(w.res, &el(&[], &[], &[], 1usize << 40, 1), &mut out), "from_edges n = 2^40");
        assert!(out.is_null(), "a refused construction wrote its output");

        // Reading files.
        let p = c_path(&w.dir.join("g"));
        for (f, what) in [(DYNG_FORMAT_CSR_TEXT, "csr"), (DYNG_FORMAT_MATRIX_MARKET, "mtx"), (DYNG_FORMAT_DIMACS, "dimacs")] {
            refused(dyng_graph_read(w.res, p.as_ptr(), f, null(), &mut out), &format!("read missing {what}"));
        }
        for f in BAD_U32 {
            refused(dyng_graph_read(w.res, p.as_ptr(), f, null(), &mut out), &format!("read format {f}"));
        }
        let mtx = w.dir.join("m.mtx");
        std::fs::write(&mtx, "%%MatrixMarket matrix coordinate pattern general\n3 3 2\n1 2\n2 3\n").unwrap();
        let mp = c_path(&mtx);
        for (k, lo, hi) in [(0u32, 1, 100), (65, 1, 100), (u32::MAX, 1, 100), (1, 0, 100), (1, -5, 100), (1, 50, 10), (1, i32::MIN, i32::MAX)] {
            let mut o = dyng_read_options_default();
            (o.k, o.weight_min, o.weight_max) = (k, lo, hi);
            refused(dyng_graph_read(w.res, mp.as_ptr(), DYNG_FORMAT_MATRIX_MARKET, &o, &mut out), &format!("read mtx k {k} weights [{lo}, {hi}]"));
        }
        let mut o = dyng_read_options_default();
        o.num_more_paths = 2;
        refused(dyng_graph_read(w.res, mp.as_ptr(), DYNG_FORMAT_DIMACS, &o, &mut out), "read dimacs more_paths NULL");
        for size in BAD_SIZES {
            let mut o = dyng_read_options_default();
            o.struct_size = size;
            refused(dyng_graph_read(w.res, mp.as_ptr(), DYNG_FORMAT_MATRIX_MARKET, &o, &mut out), &format!("read struct_size {size}"));
        }
        refused(dyng_graph_read(w.res, null(), DYNG_FORMAT_CSR_TEXT, null(), &mut out), "read path NULL");
        assert!(out.is_null());

        // Resources.
        let mut r = null_mut();
        for (backend, isolation, threads, device, flags) in [
            (7u32, 0u32, 0usize, 0i32, 0u64),
            (u32::MAX, 0, 0, 0, 0),
            (1, 5, 0, 0, 0),
            (1, u32::MAX, 0, 0, 0),
            (2, 0, 0, -1, 0),
            (2, 0, 0, i32::MIN, 0),
            (1, 1, 0, 0, 2),
            (1, 1, 0, 0, u64::MAX),
        ] {
            let mut o = dyng_resources_options_default();
            (o.backend, o.isolation, o.num_threads, o.device, o.worker_flags) = (backend, isolation, threads, device, flags);
            refused(dyng_resources_create(&o, &mut r), &format!("resources backend {backend} isolation {isolation} device {device} flags {flags:#x}"));
        }
        for size in BAD_SIZES {
            let mut o = dyng_resources_options_default();
            o.struct_size = size;
            refused(dyng_resources_create(&o, &mut r), &format!("resources struct_size {size}"));
        }
        assert!(r.is_null());
        for b in BAD_U32 {
            assert!(!dyng_backend_available(b));
        }
        for pick in [0, 2, 3] {
            refused(dyng_resources_clone(w.res(pick), &mut r), &format!("clone pick {pick}"));
            refused(dyng_release_workspaces(w.res(pick)), &format!("release pick {pick}"));
            let mut bytes = 0usize;
            refused(dyng_workspace_bytes(w.res(pick), &mut bytes), &format!("workspace_bytes pick {pick}"));
            refused(dyng_resources_warm_up(w.res(pick)), &format!("warm_up pick {pick}"));
        }

        // Computing and adopting.
        let mut res_out = null_mut();
        for bad in BAD_VERTICES {
            refused(dyng_sssp_compute(w.res, w.g, bad, 0, null(), &mut res_out), &format!("sssp source {bad}"));
            refused(dyng_mosp_compute(w.res, w.g, bad, null(), &mut res_out), &format!("mosp source {bad}"));
            refused(dyng_sssp_from_arrays(w.res, w.g, bad, 0, d0.as_ptr(), p0.as_ptr(), false, &mut res_out), &format!("from_arrays source {bad}"));
        }
        for bad in BAD_U32.iter().copied().chain([K as u32 + 2]) {
            refused(dyng_sssp_compute(w.res, w.g, 0, bad, null(), &mut res_out), &format!("sssp objective {bad}"));
            refused(dyng_sssp_from_arrays(w.res, w.g, 0, bad, d0.as_ptr(), p0.as_ptr(), false, &mut res_out), &format!("from_arrays objective {bad}"));
            let mut o = dyng_sssp_options_default();
            o.fallback = bad;
            refused(dyng_sssp_compute(w.res, w.g, 0, 0, &o, &mut res_out), &format!("sssp fallback {bad}"));
            let mut o = dyng_mosp_options_default();
            o.fallback = bad;
            refused(dyng_mosp_compute(w.res, w.g, 0, &o, &mut res_out), &format!("mosp fallback {bad}"));
            let mut o = dyng_mosp_options_default();
            o.k = bad;
            refused(dyng_mosp_compute(w.res, w.g, 0, &o, &mut res_out), &format!("mosp k {bad}"));
        }
        for delta in [-1i64, i64::MIN] {
            let mut o = dyng_sssp_options_default();
            o.delta = delta;
            refused(dyng_sssp_compute(w.res, w.g, 0, 0, &o, &mut res_out), &format!("sssp delta {delta}"));
            let mut o = dyng_mosp_options_default();
            o.delta = delta;
            refused(dyng_mosp_compute(w.res, w.g, 0, &o, &mut res_out), &format!("mosp delta {delta}"));
        }
        for prefs in [vec![0u32, 1], vec![u32::MAX, 1], vec![1], vec![1, 1, 1], vec![1 << 20, (1 << 20) - 1]] {
            let mut o = dyng_mosp_options_default();
            (o.preferences, o.num_preferences) = (prefs.as_ptr(), prefs.len());
            refused(dyng_mosp_compute(w.res, w.g, 0, &o, &mut res_out), &format!("mosp preferences {prefs:?}"));
        }
        let mut o = dyng_mosp_options_default();
        let one = [1u32];
        (o.preferences, o.num_preferences) = (one.as_ptr(), 0);
        refused(dyng_mosp_compute(w.res, w.g, 0, &o, &mut res_out), "mosp preferences with count 0");
        for size in BAD_SIZES {
            let mut o = dyng_sssp_options_default();
            o.struct_size = size;
            refused(dyng_sssp_compute(w.res, w.g, 0, 0, &o, &mut res_out), &format!("sssp struct_size {size}"));
            let mut o = dyng_mosp_options_default();
            o.struct_size = size;
            refused(dyng_mosp_compute(w.res, w.g, 0, &o, &mut res_out), &format!("mosp struct_size {size}"));
        }
        for v in 0..N {
            for bad in BAD_VERTICES.iter().copied().filter(|&b| b != -1) {
                let mut p = p0.clone();
                p[v] = bad;
                refused(dyng_sssp_from_arrays(w.res, w.g, 0, 0, d0.as_ptr(), p.as_ptr(), false, &mut res_out), &format!("from_arrays parent[{v}] = {bad}"));
                refused(dyng_sssp_from_arrays(w.res, w.g, 0, 0, d0.as_ptr(), p.as_ptr(), true, &mut res_out), &format!("from_arrays canonicalize parent[{v}] = {bad}"));
            }
            for bad in [-1i64, i64::MIN, i64::MAX, d0[v] + 1] {
                let mut d = d0.clone();
                d[v] = bad;
                refused(dyng_sssp_from_arrays(w.res, w.g, 0, 0, d.as_ptr(), p0.as_ptr(), false, &mut res_out), &format!("from_arrays dist[{v}] = {bad}"));
            }
        }
        for pick in [0u8, 2, 3] {
            refused(dyng_sssp_compute(w.res(pick), w.g, 0, 0, null(), &mut res_out), &format!("sssp res pick {pick}"));
            refused(dyng_sssp_compute(w.res, w.graph(pick), 0, 0, null(), &mut res_out), &format!("sssp g pick {pick}"));
            refused(dyng_mosp_compute(w.res, w.graph(pick), 0, null(), &mut res_out), &format!("mosp g pick {pick}"));
        }
        let mosp_trees = |trees: &[*const dyng_result_t], prefs: &[u32], source: i32, out: &mut *mut dyng_result_t| {
            dyng_mosp_from_trees(w.res, w.g, source, trees.as_ptr(), trees.len(), prefs.as_ptr(), prefs.len(), out)
        };
        let (s0, m0) = (w.sssp as *const _, w.mosp as *const _);
        for (trees, what) in [
            (vec![], "no trees"),
            (vec![null()], "NULL tree"),
            (vec![m0], "a MOSP result"),
            (vec![w.freed_r as *const _], "a freed tree"),
            (vec![w.view as *const _], "a view as tree"),
            (vec![s0, s0], "objective 0 twice"),
            (vec![s0, s0, s0], "more trees than K"),
        ] {
            refused(mosp_trees(&trees, &[], 0, &mut res_out), &format!("from_trees {what}"));
        }
        for prefs in [vec![0u32], vec![u32::MAX], vec![1, 1]] {
            refused(mosp_trees(&[s0], &prefs, 0, &mut res_out), &format!("from_trees prefs {prefs:?}"));
        }
        for bad in BAD_VERTICES.iter().copied().chain([1]) {
            refused(mosp_trees(&[s0], &[], bad, &mut res_out), &format!("from_trees source {bad}"));
        }
        assert!(res_out.is_null(), "a refused compute wrote its output");

        // Updates.
        let upd = |b: &dyng_batch_t, rs: &[*mut dyng_result_t]| {
            let mut st: Vec<dyng_update_stats_t> = rs.iter().map(|_| stats_out()).collect();
            dyng_update(w.res, w.g, b, rs.as_ptr(), rs.len(), st.as_mut_ptr())
        };
        for bad in BAD_VERTICES {
            for slot in 0..4 {
                let (mut s, mut d, iw) = ([0i32], [1i32], [1i32, 1]);
                let (mut ds, mut dd) = ([1i32], [2i32]);
                match slot {
                    0 => s[0] = bad,
                    1 => d[0] = bad,
                    2 => ds[0] = bad,
                    _ => dd[0] = bad,
                }
                let b = dyng_batch_t { num_insertions: 1, ins_src: s.as_ptr(), ins_dst: d.as_ptr(), ins_weights: iw.as_ptr(), num_deletions: 1, del_src: ds.as_ptr(), del_dst: dd.as_ptr(), ..empty_batch() };
                refused(upd(&b, &[w.sssp, w.mosp]), &format!("update vertex {bad} in slot {slot}"));
            }
        }
        for bad in BAD_WEIGHTS {
            let (s, d, iw) = ([0i32], [1i32], [1i32, bad]);
            let b = dyng_batch_t { num_insertions: 1, ins_src: s.as_ptr(), ins_dst: d.as_ptr(), ins_weights: iw.as_ptr(), ..empty_batch() };
            refused(upd(&b, &[w.sssp]), &format!("update weight {bad}"));
        }
        for size in BAD_SIZES {
            let b = dyng_batch_t { struct_size: size, ..empty_batch() };
            refused(upd(&b, &[w.sssp]), &format!("update batch struct_size {size}"));
            let mut st = [stats_out(), stats_out()];
            st[1].struct_size = size;
            let rs = [w.sssp, w.mosp];
            refused(dyng_update(w.res, w.g, &empty_batch(), rs.as_ptr(), 2, st.as_mut_ptr()), &format!("update stats[1].struct_size {size}"));
        }
        for (rs, what) in [
            (vec![w.sssp, w.sssp], "a result twice"),
            (vec![null_mut()], "a NULL result"),
            (vec![w.freed_r], "a freed result"),
            (vec![w.view as *mut _], "a view as result"),
        ] {
            refused(upd(&empty_batch(), &rs), &format!("update {what}"));
        }
        for pick in [0u8, 2, 3] {
            let rs = [w.sssp];
            refused(dyng_update(w.res, w.graph(pick), &empty_batch(), rs.as_ptr(), 1, null_mut()), &format!("update g pick {pick}"));
        }
        refused(dyng_update(w.res, w.g, null(), null(), 0, null_mut()), "update batch NULL");

        // Queries, paths, views and copies.
        for pick in [0u8, 2, 3] {
            let mut info = dyng_result_info_t { struct_size: std::mem::size_of::<dyng_result_info_t>(), ..Default::default() };
            refused(dyng_result_info(w.result(pick), &mut info), &format!("result_info pick {pick}"));
            let mut gi = dyng_graph_info_t { struct_size: std::mem::size_of::<dyng_graph_info_t>(), ..Default::default() };
            refused(dyng_graph_info(w.graph(pick), &mut gi), &format!("graph_info pick {pick}"));
            let mut b = empty_batch();
            refused(dyng_batch_buffer_get(w.batch_buffer(pick), &mut b), &format!("batch_get pick {pick}"));
            let (mut data, mut len, mut dt) = (null(), 0usize, 0u32);
            refused(dyng_view_data(w.view(pick), &mut data, &mut len, &mut dt), &format!("view_data pick {pick}"));
            let d = c_path(&w.dir);
            let mut bb = null_mut();
            refused(dyng_batch_read(d.as_ptr(), w.graph(pick), &mut bb), &format!("batch_read g pick {pick}"));
            refused(dyng_graph_copy_csr(w.res, w.graph(pick), null_mut(), null_mut(), null_mut()), &format!("copy_csr pick {pick}"));
        }
        for size in BAD_SIZES {
            let mut info = dyng_result_info_t { struct_size: size, ..Default::default() };
            refused(dyng_result_info(w.sssp, &mut info), &format!("result_info struct_size {size}"));
            let mut gi = dyng_graph_info_t { struct_size: size, ..Default::default() };
            refused(dyng_graph_info(w.g, &mut gi), &format!("graph_info struct_size {size}"));
            let mut b = dyng_batch_t { struct_size: size, ..empty_batch() };
            refused(dyng_batch_buffer_get(w.batch, &mut b), &format!("batch_get struct_size {size}"));
        }
        let mut path = [0i32; N];
        let mut len = 0usize;
        for r in [w.sssp, w.mosp] {
            for bad in BAD_VERTICES {
                refused(dyng_result_path(r, 0, bad, path.as_mut_ptr(), N, &mut len), &format!("path target {bad}"));
            }
            for k in BAD_U32.iter().copied().filter(|&k| k != DYNG_TREE_COMBINED) {
                refused(dyng_result_path(r, k, 1, path.as_mut_ptr(), N, &mut len), &format!("path k {k}"));
            }
            refused(dyng_result_path(r, 0, 5, path.as_mut_ptr(), 1, &mut len), "path cap 1");
            for array in BAD_U32.iter().copied().chain([5]) {
                let mut v = null_mut();
                refused(dyng_result_view(w.res, r, array, 0, &mut v), &format!("view array {array}"));
                refused(dyng_result_copy(w.res, r, array, 0, path.as_mut_ptr().cast(), N), &format!("copy array {array}"));
            }
            for k in BAD_U32 {
                let mut v = null_mut();
                for array in 0..5 {
                    refused(dyng_result_view(w.res, r, array, k, &mut v), &format!("view array {array} k {k}"));
                }
            }
            let mut big = vec![0i64; N * K + 8];
            for len in [0usize, 1, N - 1, N + 1, N * K + 1] {
                refused(dyng_result_copy(w.res, r, DYNG_ARRAY_DISTANCES, 0, big.as_mut_ptr().cast::<c_void>(), len), &format!("copy len {len}"));
            }
        }
        for pick in [0u8, 2, 3] {
            let mut v = null_mut();
            refused(dyng_result_view(w.res, w.result(pick), 0, 0, &mut v), &format!("view r pick {pick}"));
            refused(dyng_result_path(w.result(pick), 0, 1, path.as_mut_ptr(), N, &mut len), &format!("path r pick {pick}"));
        }
        let (mut gi, mut ri) = (std::mem::zeroed::<dyng_graph_info_t>(), std::mem::zeroed::<dyng_result_info_t>());
        (gi.struct_size, ri.struct_size) = (usize::MAX, usize::MAX);
        clean(dyng_graph_info(w.g, &mut gi), "graph_info struct_size SIZE_MAX");
        clean(dyng_result_info(w.sssp, &mut ri), "result_info struct_size SIZE_MAX");

        // Batch folders.
        let mut bb = null_mut();
        let bad_dir = w.dir.join("bad");
        std::fs::create_dir_all(&bad_dir).unwrap();
        for (ins, del) in [("0 9 1 1\n", ""), ("0 1 0 1\n", ""), ("0 1 1\n", ""), ("", "-1 2\n"), ("0 1 99999999999 1\n", "")] {
            std::fs::write(bad_dir.join("insert.txt"), ins).unwrap();
            std::fs::write(bad_dir.join("delete.txt"), del).unwrap();
            let d = c_path(&bad_dir);
            refused(dyng_batch_read(d.as_ptr(), w.g, &mut bb), &format!("batch_read {ins:?} {del:?}"));
        }
        refused(dyng_batch_read(null(), w.g, &mut bb), "batch_read NULL dir");
        assert!(bb.is_null());

        // Frees of NULL, freed and wrong-type handles are refused quietly, never by a panic.
        for pick in [0u8, 2, 3] {
            dyng_resources_free(w.res(pick));
            no_panic_message("resources_free");
            dyng_graph_free(w.graph(pick));
            no_panic_message("graph_free");
            dyng_result_free(w.result(pick));
            no_panic_message("result_free");
            dyng_batch_buffer_free(w.batch_buffer(pick));
            no_panic_message("batch_buffer_free");
            dyng_view_release(w.view(pick));
            no_panic_message("view_release");
        }
        assert_eq!(dyng_update_stats_default().struct_size, std::mem::size_of::<dyng_update_stats_t>());
        for s in [-1, 14, 15, 100, i32::MIN, i32::MAX] {
            assert!(!dyng_status_string(s).is_null());
        }
        let mut one = [0 as c_char; 1];
        assert!(dyng_last_error_message(one.as_mut_ptr(), 1) >= 1);
        assert!(dyng_last_error_message(null_mut(), 0) >= 1);
    }
}

// ---------------------------------------------------------------------------------------------
// Proptest harnesses, one per entry point.

fn fuzz_cases() -> u32 {
    std::env::var("DYNG_FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(256)
}

/// Runs `body` on `cases` inputs drawn from `strategy`; a panic or a failed assertion in the body
/// fails the test with the minimal input proptest finds.
fn fuzz<S: Strategy>(name: &str, strategy: S, body: impl Fn(S::Value))
where
    S::Value: std::fmt::Debug,
{
    let cfg = Config { cases: fuzz_cases(), failure_persistence: None, ..Config::default() };
    let mut runner = TestRunner::new(cfg);
    let out = runner.run(&strategy, |v| {
        body(v);
        Ok(())
    });
    if let Err(e) = out {
        panic!("{name}: {e}");
    }
}

/// Vertex-like values: in range, just outside, far outside.
fn vertex() -> impl Strategy<Value = i32> {
    prop_oneof![4 => 0..N as i32, 1 => proptest::sample::select(BAD_VERTICES.to_vec()), 1 => any::<i32>()]
}

/// Weight-like values.
fn weight() -> impl Strategy<Value = i32> {
    prop_oneof![4 => 1..20i32, 1 => proptest::sample::select(vec![0, -1, i32::MIN, i32::MAX]), 1 => any::<i32>()]
}

/// Distance-like values.
fn distance() -> impl Strategy<Value = i64> {
    prop_oneof![4 => 0..40i64, 1 => proptest::sample::select(vec![-1, i64::MIN, i64::MAX, DYNG_DISTANCE_INF, DYNG_DISTANCE_INF / 2]), 1 => any::<i64>()]
}

/// Enum-like values.
fn enum_value() -> impl Strategy<Value = u32> {
    prop_oneof![4 => 0..6u32, 1 => proptest::sample::select(BAD_U32.to_vec()), 1 => any::<u32>()]
}

/// `struct_size`: mostly right.
fn struct_size(right: usize) -> impl Strategy<Value = usize> {
    prop_oneof![6 => Just(right), 1 => proptest::sample::select(vec![0usize, 1, 8, right - 1, right + 8, usize::MAX])]
}

/// A handle pick (see `World::res`).
fn pick() -> impl Strategy<Value = u8> {
    prop_oneof![6 => Just(1u8), 1 => 0..5u8]
}

#[test]
fn fuzz_sosp_update_arrays() {
    let w = World::new();
    let (d0, p0) = tree0(&w);
    let tree = (
        prop::collection::vec(prop_oneof![3 => Just(None), 1 => distance().prop_map(Some)], N),
        prop::collection::vec(prop_oneof![3 => Just(None), 1 => vertex().prop_map(Some)], N),
    );
    let lists = (prop::collection::vec((vertex(), vertex()), 0..6), prop::collection::vec(vertex(), 0..4));
    let desc = (prop::collection::vec(prop_oneof![8 => Just(None), 1 => any::<i32>().prop_map(Some)], N + 1), prop::collection::vec(prop_oneof![6 => Just(None), 1 => vertex().prop_map(Some)], 8), prop::collection::vec(prop_oneof![6 => Just(None), 1 => weight().prop_map(Some)], 8));
    let scalars = (vertex(), distance(), weight());
    fuzz("dyng_sosp_update_arrays", (tree, lists, desc, scalars), |((dm, pm), (changes, heads), (rpm, cim, wm), (source, delta, max_weight))| {
        let mut g = OneObjective::new();
        // The reverse graph, given: damaged as the graph is (the repair then checks the rows it
        // reads instead of every entry first), or intact beside a damaged graph.
        let mut rev = g.reversed();
        let intact = g.reversed();
        g.mutate(&rpm, &cim, &wm);
        rev.mutate(&rpm, &cim, &wm);
        let d: Vec<i64> = d0.iter().zip(dm).map(|(&x, m)| m.unwrap_or(x)).collect();
        let p: Vec<i32> = p0.iter().zip(pm).map(|(&x, m)| m.unwrap_or(x)).collect();
        let (from, to): (Vec<i32>, Vec<i32>) = changes.into_iter().unzip();
        for r in [None, Some(&rev), Some(&intact)] {
            clean(sosp(&w, &g, r, &from, &to, &heads, source, delta, max_weight, &d, &p), "dyng_sosp_update_arrays");
        }
    });
}

#[test]
fn fuzz_graph_from_csr_and_edges() {
    let w = World::new();
    let (rp, ci, wt) = csr_arrays();
    let m = ci.len();
    let s = (
        prop::collection::vec(prop_oneof![6 => Just(None), 1 => any::<i32>().prop_map(Some), 1 => (0..m as i32 + 2).prop_map(Some)], N + 1),
        prop::collection::vec(prop_oneof![6 => Just(None), 1 => vertex().prop_map(Some)], m),
        prop::collection::vec(prop_oneof![6 => Just(None), 1 => weight().prop_map(Some)], m * K),
        prop_oneof![6 => Just(K as u32), 1 => enum_value()],
        pick(),
    );
    fuzz("dyng_graph_from_csr/edges", s, |(rpm, cim, wm, k, rp_pick)| {
        let r: Vec<i32> = rp.iter().zip(rpm).map(|(&x, m)| m.unwrap_or(x)).collect();
        let c: Vec<i32> = ci.iter().zip(cim).map(|(&x, m)| m.unwrap_or(x)).collect();
        let mut x: Vec<i32> = wt.iter().zip(wm).map(|(&x, m)| m.unwrap_or(x)).collect();
        // The weight array must hold m x k entries whatever k is (capped to what is sane).
        x.resize(m * (k as usize).clamp(1, 70), 1);
        let mut out = null_mut();
        let desc = dyng_csr_t { n: N, m, k, row_ptr: r.as_ptr(), col_ind: c.as_ptr(), weights: x.as_ptr() };
        let k_ok = (1..=64).contains(&k);
        // SAFETY: arrays hold n + 1, m and m x k entries (for k in 1..=70; beyond, k is refused
        // before the weights are read).
        unsafe {
            if k_ok || k > 70 || k == 0 {
                let s = dyng_graph_from_csr(w.res(rp_pick), &desc, &mut out);
                clean(s, "dyng_graph_from_csr");
                dyng_graph_free(out);
                out = null_mut();
            }
            let (src, _, _) = edges();
            let e = dyng_edges_t { n: N, m: src.len().min(c.len()), k, src: src.as_ptr(), dst: c.as_ptr(), weights: x.as_ptr() };
            if (k_ok || k > 70 || k == 0) && e.m * (k as usize).clamp(1, 70) <= x.len() {
                clean(dyng_graph_from_edges(w.res(rp_pick), &e, &mut out), "dyng_graph_from_edges");
                dyng_graph_free(out);
            }
        }
    });
}

#[test]
fn fuzz_compute_and_adopt() {
    fuzz_compute_and_adopt_on(&World::new());
}

#[test]
fn fuzz_compute_and_adopt_through_the_worker() {
    fuzz_compute_and_adopt_on(&World::worker());
}

fn fuzz_compute_and_adopt_on(w: &World) {
    let (d0, p0) = tree0(w);
    let s = (
        (pick(), pick(), vertex(), enum_value(), struct_size(std::mem::size_of::<dyng_sssp_options_t>()), distance(), enum_value()),
        (enum_value(), prop::collection::vec(prop_oneof![3 => 1..4u32, 1 => any::<u32>()], 0..4), struct_size(std::mem::size_of::<dyng_mosp_options_t>())),
        (prop::collection::vec(prop_oneof![3 => Just(None), 1 => distance().prop_map(Some)], N), prop::collection::vec(prop_oneof![3 => Just(None), 1 => vertex().prop_map(Some)], N), any::<bool>()),
        (prop::collection::vec(0..6u8, 0..4), prop::collection::vec(prop_oneof![3 => 1..4u32, 1 => any::<u32>()], 0..3)),
    );
    fuzz("compute/adopt", s, |((rp, gp, source, objective, ssize, delta, fallback), (mk, prefs, msize), (dm, pm, canon), (trees, tprefs))| {
        let (res, g) = (w.res(rp), w.graph(gp));
        let mut out = null_mut();
        // SAFETY: options structs are whole; arrays hold their counts; outputs are freed.
        unsafe {
            let mut o = dyng_sssp_options_default();
            (o.struct_size, o.delta, o.fallback) = (ssize.min(std::mem::size_of::<dyng_sssp_options_t>()), delta, fallback);
            clean(dyng_sssp_compute(res, g, source, objective, &o, &mut out), "dyng_sssp_compute");
            dyng_result_free(out);
            out = null_mut();
            let mut o = dyng_mosp_options_default();
            (o.struct_size, o.k, o.preferences, o.num_preferences, o.delta, o.fallback) =
                (msize.min(std::mem::size_of::<dyng_mosp_options_t>()), mk, if prefs.is_empty() { null() } else { prefs.as_ptr() }, prefs.len(), delta, fallback);
            clean(dyng_mosp_compute(res, g, source, &o, &mut out), "dyng_mosp_compute");
            dyng_result_free(out);
            out = null_mut();
            let d: Vec<i64> = d0.iter().zip(dm).map(|(&x, m)| m.unwrap_or(x)).collect();
            let p: Vec<i32> = p0.iter().zip(pm).map(|(&x, m)| m.unwrap_or(x)).collect();
            clean(dyng_sssp_from_arrays(res, g, source, objective, d.as_ptr(), p.as_ptr(), canon, &mut out), "dyng_sssp_from_arrays");
            dyng_result_free(out);
            out = null_mut();
            let ts: Vec<*const dyng_result_t> = trees.iter().map(|&t| w.result(t) as *const _).collect();
            clean(
                dyng_mosp_from_trees(res, g, source, ts.as_ptr(), ts.len(), tprefs.as_ptr(), tprefs.len(), &mut out),
                "dyng_mosp_from_trees",
            );
            dyng_result_free(out);
        }
    });
}

#[test]
fn fuzz_update() {
    fuzz_update_on(&World::new());
}

#[test]
fn fuzz_update_through_the_worker() {
    fuzz_update_on(&World::worker());
}

fn fuzz_update_on(w: &World) {
    let s = (
        prop::collection::vec((vertex(), vertex(), weight(), weight()), 0..5),
        prop::collection::vec((vertex(), vertex()), 0..4),
        prop::collection::vec(0..5u8, 0..3),
        struct_size(std::mem::size_of::<dyng_batch_t>()),
        prop::option::of(struct_size(std::mem::size_of::<dyng_update_stats_t>())),
        pick(),
    );
    fuzz("dyng_update", s, |(ins, del, rs, bsize, ssize, gp)| {
        let (is, id): (Vec<i32>, Vec<i32>) = ins.iter().map(|x| (x.0, x.1)).unzip();
        let iw: Vec<i32> = ins.iter().flat_map(|x| [x.2, x.3]).collect();
        let (ds, dd): (Vec<i32>, Vec<i32>) = del.into_iter().unzip();
        let b = dyng_batch_t {
            struct_size: bsize.min(std::mem::size_of::<dyng_batch_t>()),
            num_insertions: is.len(),
            ins_src: is.as_ptr(),
            ins_dst: id.as_ptr(),
            ins_weights: iw.as_ptr(),
            num_deletions: ds.len(),
            del_src: ds.as_ptr(),
            del_dst: dd.as_ptr(),
        };
        let results: Vec<*mut dyng_result_t> = rs.iter().map(|&p| w.result(p)).collect();
        let mut st: Vec<dyng_update_stats_t> = results.iter().map(|_| stats_out()).collect();
        let stats = match ssize {
            Some(size) => {
                st.iter_mut().for_each(|s| s.struct_size = size.min(std::mem::size_of::<dyng_update_stats_t>()));
                st.as_mut_ptr()
            }
            None => null_mut(),
        };
        // SAFETY: the batch's arrays hold their counts (K = 2 weights per insertion); results and
        // stats hold `count` entries.
        clean(unsafe { dyng_update(w.res, w.graph(gp), &b, results.as_ptr(), results.len(), stats) }, "dyng_update");
    });
}

#[test]
fn fuzz_queries_views_and_paths() {
    fuzz_queries_views_and_paths_on(&World::new());
}

#[test]
fn fuzz_queries_views_and_paths_through_the_worker() {
    fuzz_queries_views_and_paths_on(&World::worker());
}

fn fuzz_queries_views_and_paths_on(w: &World) {
    let s = (pick(), pick(), enum_value(), enum_value(), vertex(), 0..N + 3, struct_size(std::mem::size_of::<dyng_result_info_t>()), struct_size(std::mem::size_of::<dyng_graph_info_t>()), 0..N * K + 3);
    fuzz("queries", s, |(rp, gp, array, k, target, cap, isize, gsize, len)| {
        let r = w.result(rp);
        let mut buf = vec![0i64; N * K + 3];
        let mut p = vec![0i32; N + 3];
        let mut l = 0usize;
        let mut v = null_mut();
        // SAFETY: outputs hold the counts passed; views are released.
        unsafe {
            let mut info = dyng_result_info_t { struct_size: isize.min(std::mem::size_of::<dyng_result_info_t>()), ..Default::default() };
            clean(dyng_result_info(r, &mut info), "dyng_result_info");
            let mut gi = dyng_graph_info_t { struct_size: gsize.min(std::mem::size_of::<dyng_graph_info_t>()), ..Default::default() };
            clean(dyng_graph_info(w.graph(gp), &mut gi), "dyng_graph_info");
            clean(dyng_result_path(r, k, target, p.as_mut_ptr(), cap, &mut l), "dyng_result_path");
            clean(dyng_result_view(w.res(gp), r, array, k, &mut v), "dyng_result_view");
            if !v.is_null() {
                let (mut data, mut n, mut dt) = (null(), 0usize, 0u32);
                clean(dyng_view_data(v, &mut data, &mut n, &mut dt), "dyng_view_data");
                dyng_view_release(v);
            }
            clean(dyng_result_copy(w.res(gp), r, array, k, buf.as_mut_ptr().cast(), len), "dyng_result_copy");
            let (mut rpo, mut cio, mut wo) = (vec![0i32; N + 1], vec![0i32; 16], vec![0i32; 32]);
            clean(dyng_graph_copy_csr(w.res(gp), w.graph(gp), rpo.as_mut_ptr(), cio.as_mut_ptr(), wo.as_mut_ptr()), "dyng_graph_copy_csr");
            let mut b = dyng_batch_t { struct_size: isize.min(std::mem::size_of::<dyng_batch_t>()), ..empty_batch() };
            clean(dyng_batch_buffer_get(w.batch_buffer(gp), &mut b), "dyng_batch_buffer_get");
            let (mut data, mut n, mut dt) = (null(), 0usize, 0u32);
            clean(dyng_view_data(w.view(rp), &mut data, &mut n, &mut dt), "dyng_view_data");
        }
    });
}

#[test]
fn fuzz_resources() {
    let s = (enum_value(), enum_value(), prop_oneof![Just(0usize), Just(1), Just(2), Just(1usize << 40), Just(usize::MAX), Just(100_000)], any::<i32>(), prop_oneof![Just(0u64), Just(1), any::<u64>()], struct_size(std::mem::size_of::<dyng_resources_options_t>()));
    fuzz("dyng_resources_create", s, |(backend, isolation, threads, device, flags, size)| {
        let mut o = dyng_resources_options_default();
        (o.backend, o.isolation, o.num_threads, o.device, o.worker_flags, o.struct_size) =
            (backend, isolation, threads, device, flags, size.min(std::mem::size_of::<dyng_resources_options_t>()));
        let mut r = null_mut();
        // SAFETY: a whole options struct; the handle is freed.
        unsafe {
            clean(dyng_resources_create(&o, &mut r), "dyng_resources_create");
            if !r.is_null() {
                let mut c = null_mut();
                clean(dyng_resources_clone(r, &mut c), "dyng_resources_clone");
                clean(dyng_release_workspaces(c), "dyng_release_workspaces");
                let mut b = 0usize;
                clean(dyng_workspace_bytes(r, &mut b), "dyng_workspace_bytes");
                dyng_resources_free(c);
                dyng_resources_free(r);
            }
            let _ = dyng_backend_available(backend);
        }
    });
}

#[test]
fn fuzz_files() {
    let w = World::new();
    let dir = scratch("files");
    let s = (prop::collection::vec(any::<u8>(), 0..80), prop::collection::vec(any::<u8>(), 0..80), enum_value(), enum_value(), any::<i32>(), any::<i32>(), pick(), prop::collection::vec(1u8..=255, 1..12));
    fuzz("dyng_graph_read/dyng_batch_read", s, |(a, b, format, k, lo, hi, gp, name)| {
        std::fs::write(dir.join("insert.txt"), &a).unwrap();
        std::fs::write(dir.join("delete.txt"), &b).unwrap();
        for (suffix, bytes) in [("RowPtr.txt", &a), ("ColInd.txt", &b), ("Values.txt", &a)] {
            std::fs::write(dir.join(format!("g{suffix}")), bytes).unwrap();
        }
        std::fs::write(dir.join("m.mtx"), &a).unwrap();
        let mut o = dyng_read_options_default();
        (o.k, o.weight_min, o.weight_max) = (k % 70, lo, hi);
        let more = [CString::new(dir.join("m.mtx").as_os_str().as_bytes()).unwrap()];
        let more_ptrs: Vec<*const c_char> = more.iter().map(|c| c.as_ptr()).collect();
        (o.more_paths, o.num_more_paths) = (more_ptrs.as_ptr(), 1);
        // Names of any bytes: the C ABI takes them as they are.
        let odd = dir.join(std::ffi::OsStr::from_bytes(&name));
        let mut out = null_mut();
        let mut bb = null_mut();
        // SAFETY: NUL-terminated paths; handles are freed.
        unsafe {
            for p in [dir.join("g"), dir.join("m.mtx"), odd.clone()] {
                let c = c_path(&p);
                clean(dyng_graph_read(w.res, c.as_ptr(), format, &o, &mut out), "dyng_graph_read");
                dyng_graph_free(out);
                out = null_mut();
            }
            for p in [dir.clone(), odd] {
                let c = c_path(&p);
                clean(dyng_batch_read(c.as_ptr(), w.graph(gp), &mut bb), "dyng_batch_read");
                dyng_batch_buffer_free(bb);
                bb = null_mut();
            }
        }
    });
    let _ = std::fs::remove_dir_all(dir);
}

/// Paths are bytes on Unix: a graph and a batch in a folder whose name is not UTF-8 read like any
/// other (they were refused with "is not valid UTF-8").
#[test]
fn paths_that_are_not_utf8_are_accepted() {
    let w = World::new();
    let dir = scratch("bytes").join(std::ffi::OsStr::from_bytes(b"caf\xe9-\xff\xfe"));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("insert.txt"), "0 2 1 1\n").unwrap();
    std::fs::write(dir.join("delete.txt"), "").unwrap();
    let prefix = dir.join(std::ffi::OsStr::from_bytes(b"g\x80"));
    let (rp, ci, wt) = csr_arrays();
    let text = dyng::io::CsrText {
        n: N,
        k: K,
        row_ptr: rp.clone(),
        col_ind: ci.clone(),
        // The text files hold edge-major weights.
        weights: (0..ci.len()).flat_map(|e| (0..K).map(move |j| (e, j))).map(|(e, j)| wt[j * ci.len() + e]).collect(),
    };
    dyng::io::formats::csr_text::write_csr_triplet(&prefix, &text).unwrap();
    let (mut g, mut b) = (null_mut(), null_mut());
    // SAFETY: NUL-terminated paths, writable outputs; the handles are freed.
    unsafe {
        let p = c_path(&prefix);
        assert_eq!(dyng_graph_read(w.res, p.as_ptr(), DYNG_FORMAT_CSR_TEXT, null(), &mut g), DYNG_OK, "{}", last_error());
        let mut info = dyng_graph_info_t { struct_size: std::mem::size_of::<dyng_graph_info_t>(), ..Default::default() };
        assert_eq!(dyng_graph_info(g, &mut info), DYNG_OK);
        assert_eq!((info.n, info.m, info.k), (N, ci.len(), K as u32));
        let d = c_path(&dir);
        assert_eq!(dyng_batch_read(d.as_ptr(), g, &mut b), DYNG_OK, "{}", last_error());
        // A missing file under such a name is an I/O error that names the path.
        let missing = c_path(&dir.join("none"));
        assert_eq!(dyng_graph_read(w.res, missing.as_ptr(), DYNG_FORMAT_CSR_TEXT, null(), &mut null_mut()), DYNG_ERR_IO);
        assert!(last_error().contains("caf\u{fffd}-"), "{}", last_error());
        dyng_batch_buffer_free(b);
        dyng_graph_free(g);
    }
}
