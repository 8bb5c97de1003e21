//! Replays the golden corpus through the library on every engine: all output files byte-identical
//! (sha256), the deterministic counters equal, error cases rejected.
//!
//! The full-output groups travel with the project (`tests/golden`); the large digest-only groups
//! (`usroads-k3`, `bremen-k2`, `special`) are read from `$DYNG_GOLDEN_DIR` or `../shared/golden`
//! and skipped when absent (a recorded skip: `tests/common/skip.rs`).

mod common;

use common::*;
use dyng::io::driver::case::{read_mosp_inputs, CasePaths, MospInputs};
use dyng::io::driver::outputs::{mosp_output_files, mosp_stats_text};
use dyng::{MospResult, Resources, ResultMut, SsspOptions, SsspResult};
use std::collections::BTreeMap;
use std::path::Path;

fn read(case: &Case) -> dyng::Result<MospInputs> {
    let paths = CasePaths {
        graph: &case.graph,
        changes: &case.changes,
        init: &case.init,
        cache: None,
    };
    read_mosp_inputs(&paths, case.k, case.source)
}

fn adopt(case: &Case, inp: &mut MospInputs) -> dyng::Result<Vec<SsspResult>> {
    std::mem::take(&mut inp.init)
        .into_iter()
        .enumerate()
        .map(|(j, (d, p))| {
            // The originals' counters are exact: the drop-in driver's policy.
            let opt = SsspOptions { fallback: dyng::Fallback::AdaptiveCounted, ..Default::default() };
            SsspResult::from_arrays(&inp.graph, case.source, j, d, p, case.canonicalize, &opt)
        })
        .collect()
}

/// Runs a case through a MOSP result; returns (files, stats text).
/// Output files by name, with their bytes.
type Files = Vec<(String, Vec<u8>)>;

fn run_mosp(case: &Case, res: &Resources) -> dyng::Result<(Files, String)> {
    let mut inp = read(case)?;
    let trees = adopt(case, &mut inp)?;
    let mut m = MospResult::from_trees(res, &inp.graph, case.source, trees, &case.pref)?;
    dyng::update_one(res, &mut inp.graph, &inp.batch.view(), &mut m)?;
    let files = mosp_output_files(&m)
        .into_iter()
        .map(|(p, b)| (p.to_string_lossy().into_owned(), b))
        .collect();
    let stats = mosp_stats_text(
        inp.graph.n(),
        inp.graph.m(),
        inp.batch.num_insertions(),
        inp.batch.num_deletions(),
        &m,
    );
    Ok((files, stats))
}

fn check_case(case: &Case, engine: &str, res: &Resources) -> Vec<String> {
    let mut failures = Vec::new();
    let (files, stats) = match run_mosp(case, res) {
        Ok(x) => x,
        Err(e) => return vec![format!("{} [{engine}]: failed: {e}", case.name)],
    };
    let files: BTreeMap<_, _> = files.into_iter().collect();
    for (rel, digest) in case.expected_sums() {
        match files.get(&rel) {
            None => failures.push(format!("{} [{engine}]: missing {rel}", case.name)),
            Some(b) if sha256_hex(b) != digest => {
                failures.push(format!("{} [{engine}]: {rel} differs", case.name))
            }
            _ => {}
        }
    }
    let got = read_kv_text(&stats);
    for (k, v) in case.expected_stats() {
        if got.get(&k) != Some(&v) {
            failures.push(format!("{} [{engine}]: {k}={:?}, expected {v}", case.name, got.get(&k)));
        }
    }
    failures
}

fn read_kv_text(s: &str) -> BTreeMap<String, String> {
    s.lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn replay_group(group: &Path) -> usize {
    let engines = engines();
    let mut failures = Vec::new();
    let mut count = 0;
    for case in cases(group).iter().filter(|c| !c.is_error()) {
        for (name, res) in &engines {
            failures.extend(check_case(case, name, res));
            count += 1;
        }
    }
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
    count
}

#[test]
fn thesis_group() {
    assert_eq!(replay_group(&local_golden().join("thesis")), 3 * 4);
}

#[test]
fn handmade_group() {
    assert_eq!(replay_group(&local_golden().join("handmade")), 15 * 4);
}

#[test]
fn small_group() {
    assert_eq!(replay_group(&local_golden().join("small")), 60 * 4);
}

fn shared_group(name: &str) -> Option<std::path::PathBuf> {
    shared_golden_or_skip(&format!("golden_replay: the {name} group")).map(|g| g.join(name))
}

#[test]
fn usroads_group() {
    if let Some(g) = shared_group("usroads-k3") {
        assert_eq!(replay_group(&g), 6 * 4);
    }
}

#[test]
fn bremen_group() {
    if let Some(g) = shared_group("bremen-k2") {
        assert_eq!(replay_group(&g), 2 * 4);
    }
}

#[test]
fn special_group() {
    if let Some(g) = shared_group("special") {
        let copy = decompressed_copy(&g, "special");
        let n = replay_group(&copy);
        let _ = std::fs::remove_dir_all(&copy);
        assert_eq!(n, 2 * 4);
    }
}

/// The SSSP part alone: every objective as its own SSSP result, all updated by one call (one
/// apply), compared with the per-objective expected files and `invalidated` counters.
#[test]
fn sssp_results_updated_together() {
    let mut groups = vec![local_golden().join("thesis"), local_golden().join("handmade"), local_golden().join("small")];
    if let Some(g) = shared_golden() {
        groups.push(g.join("usroads-k3"));
        groups.push(g.join("bremen-k2"));
    }
    let mut failures = Vec::new();
    for group in groups {
        for case in cases(&group).iter().filter(|c| !c.is_error()) {
            for (engine, res) in engines() {
                let mut inp = read(case).expect("inputs");
                let mut trees = adopt(case, &mut inp).expect("trees");
                let mut refs: Vec<ResultMut> = trees.iter_mut().map(ResultMut::from).collect();
                dyng::update(&res, &mut inp.graph, &inp.batch.view(), &mut refs).expect("update");
                let sums: BTreeMap<_, _> = case.expected_sums().into_iter().collect();
                let stats = case.expected_stats();
                for (j, t) in trees.iter().enumerate() {
                    let d = dyng::io::formats::trees::format_distances(t.distances());
                    let p = dyng::io::formats::trees::format_parents(t.parents());
                    if sha256_hex(&d) != sums[&format!("obj{j}/distancesUpdated.txt")]
                        || sha256_hex(&p) != sums[&format!("obj{j}/SSSPTreeUpdated.txt")]
                    {
                        failures.push(format!("{} [{engine}] obj{j} differs", case.name));
                    }
                    if stats[&format!("invalidated_obj{j}")] != t.stats().invalidated.to_string() {
                        failures.push(format!("{} [{engine}] invalidated_obj{j}", case.name));
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Every error case (and every quirk: dyng is stricter than the original) is rejected by some
/// step of the library pipeline.
#[test]
fn error_and_quirk_cases_are_rejected() {
    let res = Resources::sequential();
    let mut seen = 0;
    for group in ["errors", "quirks"] {
        for case in cases(&local_golden().join(group)) {
            assert!(run_mosp(&case, &res).is_err(), "{} was accepted", case.name);
            seen += 1;
        }
    }
    assert_eq!(seen, 27);
}
