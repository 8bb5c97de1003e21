//! Replays the golden corpus through the C ABI (the exported `extern "C"` functions, called the
//! way a C program calls them): graph and batch read by dyng, trees adopted with
//! `dyng_sssp_from_arrays`, combined with `dyng_mosp_from_trees`, one `dyng_update`, and every
//! output array read through zero-copy views; all files byte-identical (sha256), error cases
//! refused with a non-OK status.

mod common;

use common::capi::{ok, view};
use common::*;
use dyng::ffi::*;
use std::ffi::CString;
use std::ptr;



struct Owned {
    res: *mut dyng_resources_t,
    graph: *mut dyng_graph_t,
    results: Vec<*mut dyng_result_t>,
    batch: *mut dyng_batch_buffer_t,
}

impl Drop for Owned {
    fn drop(&mut self) {
        // SAFETY: every pointer is NULL or a live handle created by this test; _free(NULL) is a no-op.
        unsafe {
            for &r in &self.results {
                dyng_result_free(r);
            }
            dyng_batch_buffer_free(self.batch);
            dyng_graph_free(self.graph);
            dyng_resources_free(self.res);
        }
    }
}

/// Runs one case; returns (relative path, bytes) of every output file.
fn run_case(case: &Case, backend: u32, threads: usize) -> Result<Vec<(String, Vec<u8>)>, String> {
    let mut o = Owned { res: ptr::null_mut(), graph: ptr::null_mut(), results: Vec::new(), batch: ptr::null_mut() };
    let mut ropt = dyng_resources_options_default();
    ropt.backend = backend;
    ropt.num_threads = threads;
    // SAFETY (this block and below): arguments are live handles, valid C strings and writable outs.
    unsafe {
        ok(dyng_resources_create(&ropt, &mut o.res), "dyng_resources_create")?;
        let prefix = CString::new(case.graph.to_str().unwrap()).unwrap();
        let mut gopt = dyng_read_options_default();
        gopt.k = case.k.unwrap_or(0) as u32;
        ok(dyng_graph_read(o.res, prefix.as_ptr(), DYNG_FORMAT_CSR_TEXT, &gopt, &mut o.graph), "dyng_graph_read")?;
        let mut info = dyng_graph_info_t { struct_size: std::mem::size_of::<dyng_graph_info_t>(), n: 0, m: 0, k: 0, version: 0 };
        ok(dyng_graph_info(o.graph, &mut info), "dyng_graph_info")?;
        let (n, kg) = (info.n, info.k as usize);
        let k = case.k.map_or(kg, |k| k.min(kg));
        if case.source >= n {
            return Err(format!("source {} outside n = {n}", case.source));
        }
        let trees = dyng::io::case::read_init_trees(&case.init, k, n).map_err(|e| e.to_string())?;
        for (j, (d, p)) in trees.iter().enumerate() {
            let mut r = ptr::null_mut();
            ok(
                dyng_sssp_from_arrays(o.res, o.graph, case.source as i32, j as u32, d.as_ptr(), p.as_ptr(), case.canonicalize, &mut r),
                "dyng_sssp_from_arrays",
            )?;
            o.results.push(r);
        }
        let trees_c: Vec<*const dyng_result_t> = o.results.iter().map(|&r| r as *const _).collect();
        let mut mosp = ptr::null_mut();
        ok(
            dyng_mosp_from_trees(o.res, o.graph, case.source as i32, trees_c.as_ptr(), k, case.pref.as_ptr(), case.pref.len(), &mut mosp),
            "dyng_mosp_from_trees",
        )?;
        o.results.push(mosp);
        let dir = CString::new(case.changes.to_str().unwrap()).unwrap();
        ok(dyng_batch_read(dir.as_ptr(), o.graph, &mut o.batch), "dyng_batch_read")?;
        let mut b: dyng_batch_t = std::mem::zeroed();
        b.struct_size = std::mem::size_of::<dyng_batch_t>();
        ok(dyng_batch_buffer_get(o.batch, &mut b), "dyng_batch_buffer_get")?;
        ok(dyng_update(o.res, o.graph, &b, &mosp, 1, ptr::null_mut()), "dyng_update")?;

        let mut files = Vec::new();
        for j in 0..k as u32 {
            let d: Vec<i64> = view(o.res, mosp, DYNG_ARRAY_DISTANCES, j)?;
            let p: Vec<i32> = view(o.res, mosp, DYNG_ARRAY_PARENTS, j)?;
            files.push((format!("obj{j}/distancesUpdated.txt"), dyng::io::trees::format_distances(&d)));
            files.push((format!("obj{j}/SSSPTreeUpdated.txt"), dyng::io::trees::format_parents(&p)));
        }
        let cd: Vec<i64> = view(o.res, mosp, DYNG_ARRAY_COMBINED_DISTANCES, 0)?;
        let cp: Vec<i32> = view(o.res, mosp, DYNG_ARRAY_COMBINED_PARENTS, 0)?;
        let costs: Vec<i64> = view(o.res, mosp, DYNG_ARRAY_PATH_COSTS, 0)?;
        files.push(("combinedGraph/distancesCsr.txt".into(), dyng::io::trees::format_distances(&cd)));
        files.push(("combinedGraph/SSSPTreeCsr.txt".into(), dyng::io::trees::format_parents(&cp)));
        files.push(("combinedGraph/mospCosts.txt".into(), dyng::io::trees::format_costs(n, kg, &costs)));
        Ok(files)
    }
}

fn replay(group: &std::path::Path) -> usize {
    let mut failures = Vec::new();
    let mut runs = 0;
    for case in cases(group) {
        for (backend, threads) in [(DYNG_BACKEND_SEQUENTIAL, 1), (DYNG_BACKEND_PARALLEL, 2)] {
            runs += 1;
            let outcome = run_case(&case, backend, threads);
            let reject = case.is_error() || case.name.starts_with("quirks/");
            match (reject, outcome) {
                (true, Ok(_)) => failures.push(format!("{}: accepted", case.name)),
                (true, Err(_)) => {}
                (false, Err(e)) => failures.push(format!("{}: {e}", case.name)),
                (false, Ok(files)) => {
                    let files: std::collections::BTreeMap<_, _> = files.into_iter().collect();
                    for (rel, digest) in case.expected_sums() {
                        if files.get(&rel).map(|b| sha256_hex(b)) != Some(digest) {
                            failures.push(format!("{} [backend {backend}]: {rel} differs", case.name));
                        }
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
    runs
}

#[test]
fn full_groups_through_the_c_abi() {
    let mut runs = 0;
    for g in ["thesis", "handmade", "small", "errors", "quirks"] {
        runs += replay(&local_golden().join(g));
    }
    assert_eq!(runs, (3 + 15 + 60 + 25 + 2) * 2);
}

#[test]
fn digest_groups_through_the_c_abi() {
    let Some(shared) = shared_golden() else {
        println!("notice: usroads-k3 and bremen-k2 skipped: set DYNG_GOLDEN_DIR or provide ../shared/golden");
        return;
    };
    assert_eq!(replay(&shared.join("usroads-k3")) + replay(&shared.join("bremen-k2")), (6 + 2) * 2);
}
