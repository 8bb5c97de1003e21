//! The drop-in per-objective call `dyng_sosp_update_arrays`, fed the way `include/dyng.h` says,
//! against the golden corpus: a MOSP-style caller applies the batch itself, lists per objective
//! every deletion and every insertion that raised that objective's weight of an existing edge,
//! passes the heads of all insertions, the originals' Delta and largest weight, its reverse graph
//! (or none), and gets the original's trees byte for byte, non-canonical initial trees included.
//! Feeding every insertion as a changed edge instead (what the header said before) gives other
//! trees on some of those cases, so the test tells the two contracts apart. The original's
//! refusals in its update (a parent cycle, a distance above (n - 1) * maxWeight) are refusals here.

mod common;

use common::*;
use dyng::ffi::*;
use dyng::io::driver::case::{read_mosp_inputs, CasePaths};
use dyng::{Csr, SsspOptions, SsspResult};
use std::ptr;

/// How the changed edges are listed.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Listing {
    /// As the header says: deletions, then insertions that raised the objective's weight.
    Header,
    /// Deletions, then every insertion.
    EveryInsertion,
}

/// One case's inputs as the caller holds them after applying the batch itself.
struct Prepared {
    original: Csr,
    updated: Csr,
    batch: dyng::Batch,
    source: usize,
    /// The K trees before the update (canonicalized where the case asks for it).
    trees: Vec<(Vec<i64>, Vec<i32>)>,
}

fn prepare(case: &Case) -> Result<Prepared, String> {
    let paths = CasePaths { graph: &case.graph, changes: &case.changes, init: &case.init, cache: None };
    let inp = read_mosp_inputs(&paths, case.k, case.source).map_err(|e| e.to_string())?;
    let original = inp.graph.to_csr();
    let applied = dyng::apply_batch(&original, &inp.batch.view()).map_err(|e| e.to_string())?;
    let mut trees = inp.init;
    if case.canonicalize {
        // The original driver's `--canonicalize`, before its update (on the original graph).
        for (j, t) in trees.iter_mut().enumerate() {
            let r = SsspResult::from_arrays(&inp.graph, inp.source, j, t.0.clone(), t.1.clone(), true, &SsspOptions::default())
                .map_err(|e| e.to_string())?;
            t.1 = r.parents().to_vec();
        }
    }
    Ok(Prepared { original, updated: applied.csr, batch: inp.batch, source: inp.source, trees })
}

/// Objective `j`'s changed edges.
fn changed(p: &Prepared, j: usize, listing: Listing) -> (Vec<i32>, Vec<i32>) {
    let b = &p.batch;
    let (mut from, mut to) = (b.del_src.clone(), b.del_dst.clone());
    for (&u, &v) in b.ins_src.iter().zip(&b.ins_dst) {
        let raised = match (p.original.first_edge(u as usize, v), p.updated.first_edge(u as usize, v)) {
            (Some(e0), Some(e1)) => p.updated.column(j)[e1] > p.original.column(j)[e0],
            _ => false,
        };
        if raised || listing == Listing::EveryInsertion {
            from.push(u);
            to.push(v);
        }
    }
    (from, to)
}

fn text_of<T: std::fmt::Display>(values: &[T], inf: impl Fn(&T) -> bool) -> Vec<u8> {
    let mut s = String::new();
    for (v, x) in values.iter().enumerate() {
        if inf(x) {
            s.push_str(&format!("{v} INF\n"));
        } else {
            s.push_str(&format!("{v} {x}\n"));
        }
    }
    s.into_bytes()
}

/// (relative path, bytes) of each tree output file.
type Files = Vec<(String, Vec<u8>)>;

/// Runs the K per-objective calls; returns the K tree outputs and the `invalidated` counts, or
/// the first call's error message.
fn run(res: *const dyng_resources_t, p: &Prepared, listing: Listing, with_reverse: bool) -> Result<(Files, Vec<i64>), String> {
    let (n, m) = (p.updated.n(), p.updated.m());
    let mut files = Vec::new();
    let mut invalidated = Vec::new();
    for (j, (d0, p0)) in p.trees.iter().enumerate() {
        let (from, to) = changed(p, j, listing);
        let heads = &p.batch.ins_dst;
        let inserted_max = p.batch.ins_weights.iter().skip(j).step_by(p.batch.k).copied().max().unwrap_or(1);
        let max_weight = (p.original.max_weight(j).max(inserted_max).max(1)) as i64;
        let delta = dyng::sssp::default_delta(p.original.m().max(1), n, p.original.weight_sum(j));
        let graph = dyng_csr_t { n, m, k: 1, row_ptr: p.updated.row_ptr().as_ptr(), col_ind: p.updated.col_ind().as_ptr(), weights: p.updated.column(j).as_ptr() };
        let (rp, tails, rw) = common::reverse_csr(p.updated.row_ptr(), p.updated.col_ind(), p.updated.column(j));
        let rev = dyng_csr_t { n, m, k: 1, row_ptr: rp.as_ptr(), col_ind: tails.as_ptr(), weights: rw.as_ptr() };
        let (mut dist, mut parent) = (d0.clone(), p0.clone());
        let mut st = dyng_update_stats_t { struct_size: std::mem::size_of::<dyng_update_stats_t>(), invalidated: 0, affected: 0, iterations: 0, epochs: 0, pushes: 0, packed_parents: false, fallback_used: false };
        // SAFETY: every array outlives the call and holds the counts its descriptor gives.
        let status = unsafe {
            dyng_sosp_update_arrays(
                res,
                &graph,
                if with_reverse { &rev } else { ptr::null() },
                from.as_ptr(),
                to.as_ptr(),
                from.len(),
                heads.as_ptr(),
                heads.len(),
                p.source as i32,
                delta,
                max_weight,
                dist.as_mut_ptr(),
                parent.as_mut_ptr(),
                &mut st,
            )
        };
        if status != DYNG_OK {
            return Err(common::capi::last_error());
        }
        files.push((format!("obj{j}/distancesUpdated.txt"), text_of(&dist, |&d| d >= dyng::DISTANCE_INF / 2)));
        files.push((format!("obj{j}/SSSPTreeUpdated.txt"), text_of(&parent, |_| false)));
        invalidated.push(st.invalidated);
    }
    Ok((files, invalidated))
}

fn resources(threads: usize) -> *mut dyng_resources_t {
    let mut ropt = dyng_resources_options_default();
    ropt.num_threads = threads;
    let mut res = ptr::null_mut();
    // SAFETY: valid options and out pointer.
    assert_eq!(unsafe { dyng_resources_create(&ropt, &mut res) }, DYNG_OK);
    res
}

/// Replays every non-error case of `groups`; returns (runs, cases whose trees the other listing
/// changes).
fn replay(groups: &[std::path::PathBuf], threads: &[usize]) -> (usize, Vec<String>) {
    let mut failures = Vec::new();
    let (mut runs, mut told_apart) = (0, Vec::new());
    for &t in threads {
        let res = resources(t);
        for group in groups {
            for case in cases(group) {
                if case.is_error() || case.name.starts_with("quirks/") {
                    continue;
                }
                let p = prepare(&case).unwrap_or_else(|e| panic!("{}: {e}", case.name));
                let sums: std::collections::BTreeMap<_, _> = case.expected_sums().into_iter().collect();
                let stats = case.expected_stats();
                for with_reverse in [true, false] {
                    runs += 1;
                    match run(res, &p, Listing::Header, with_reverse) {
                        Err(e) => failures.push(format!("{} ({t} threads): {e}", case.name)),
                        Ok((files, invalidated)) => {
                            for (rel, bytes) in &files {
                                if sums.get(rel) != Some(&sha256_hex(bytes)) {
                                    failures.push(format!("{} ({t} threads, reverse given: {with_reverse}): {rel} differs", case.name));
                                }
                            }
                            for (j, c) in invalidated.iter().enumerate() {
                                if stats.get(&format!("invalidated_obj{j}")) != Some(&c.to_string()) {
                                    failures.push(format!("{}: invalidated_obj{j} = {c}", case.name));
                                }
                            }
                        }
                    }
                }
                if t == threads[0] {
                    if let Ok((files, _)) = run(res, &p, Listing::EveryInsertion, true) {
                        if files.iter().any(|(rel, bytes)| sums.get(rel) != Some(&sha256_hex(bytes))) {
                            told_apart.push(case.name.clone());
                        }
                    }
                }
            }
        }
        // SAFETY: created above, no longer used.
        unsafe { dyng_resources_free(res) };
    }
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
    (runs, told_apart)
}

#[test]
fn the_header_contract_gives_the_originals_trees() {
    let groups: Vec<_> = ["thesis", "handmade", "small"].iter().map(|g| local_golden().join(g)).collect();
    let (runs, told_apart) = replay(&groups, &[1, 2]);
    assert_eq!(runs, (3 + 15 + 60) * 2 * 2);
    // Listing every insertion invalidates the subtrees of tree edges whose weight went down or
    // that are new parallel copies: their non-canonical tie choices are then lost.
    assert!(!told_apart.is_empty(), "every-insertion listing matched everywhere: the test cannot tell the contracts apart");
    println!("every-insertion listing differs on {} cases: {}", told_apart.len(), told_apart.join(", "));
}

#[test]
fn the_header_contract_on_the_digest_groups() {
    let Some(shared) = shared_golden() else {
        println!("NOTICE: skipped: the digest groups need $DYNG_GOLDEN_DIR or ../shared/golden");
        return;
    };
    let special = decompressed_copy(&shared.join("special"), "drop-in-special");
    let groups = vec![shared.join("usroads-k3"), shared.join("bremen-k2"), special.clone()];
    let (runs, _) = replay(&groups, &[2]);
    let _ = std::fs::remove_dir_all(&special);
    assert_eq!(runs, (6 + 2 + 2) * 2);
}

#[test]
fn the_originals_refusals_in_the_update_are_refusals() {
    let res = resources(2);
    for name in ["e01-parent-cycle", "e14-init-distance-exceeds-bound"] {
        let case = cases(&local_golden().join("errors")).into_iter().find(|c| c.name.ends_with(name)).expect(name);
        let p = prepare(&case).unwrap_or_else(|e| panic!("{name}: the inputs read: {e}"));
        for with_reverse in [true, false] {
            let e = run(res, &p, Listing::Header, with_reverse).expect_err(name);
            let want = if name.starts_with("e01") { "parent cycle" } else { "exceeds (n - 1) * maxWeight" };
            assert!(e.contains(want), "{name}: {e}");
        }
    }
    // SAFETY: created above, no longer used.
    unsafe { dyng_resources_free(res) };
}
