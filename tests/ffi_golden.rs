//! Replays the golden corpus through the C ABI (the exported `extern "C"` functions, called the
//! way a C program calls them): graph and batch read by dyng, trees adopted with
//! `dyng_sssp_from_arrays`, combined with `dyng_mosp_from_trees`, one `dyng_update`, and every
//! output array read through zero-copy views; all files byte-identical (sha256), error cases
//! refused with a non-OK status.

mod common;

use common::capi::{ok, run_golden_case};
use common::*;
use dyng::ffi::*;
use std::ptr;



/// Runs one case on a fresh resources handle of `backend`; returns (relative path, bytes) of
/// every output file.
fn run_case(case: &Case, backend: u32, threads: usize) -> Result<Vec<(String, Vec<u8>)>, String> {
    let mut ropt = dyng_resources_options_default();
    ropt.backend = backend;
    ropt.num_threads = threads;
    let mut res = ptr::null_mut();
    // SAFETY: valid options and out pointer; `res` is freed after its last use.
    unsafe {
        ok(dyng_resources_create(&ropt, &mut res), "dyng_resources_create")?;
        let run = run_golden_case(res, case);
        dyng_resources_free(res);
        run.map(|r| r.files)
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
    let Some(shared) = shared_golden_or_skip("ffi_golden::digest_groups_through_the_c_abi") else {
        return;
    };
    assert_eq!(replay(&shared.join("usroads-k3")) + replay(&shared.join("bremen-k2")), (6 + 2) * 2);
}
