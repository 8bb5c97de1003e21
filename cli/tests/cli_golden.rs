//! Replays the golden corpus through the `dyng mosp` command line: every output file
//! byte-identical, the `--stats` counters equal, error cases exit 1 with `Error:` on stderr, on
//! the sequential engine and the parallel engine with 1 and 2 threads.

#[path = "../../tests/common/mod.rs"]
mod common;
mod support;

use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

fn dyng() -> Command {
    Command::new(env!("CARGO_BIN_EXE_dyng"))
}

fn run_case(case: &Case, out: &Path, engine: &[&str]) -> std::process::Output {
    mosp_command(Path::new(env!("CARGO_BIN_EXE_dyng")), case, out)
        .arg("--stats")
        .arg(out.with_extension("stats"))
        .args(engine)
        .output()
        .expect("run dyng")
}

fn check_group(group: &Path, tag: &str) -> usize {
    let tmp = std::env::temp_dir().join(format!("dyng-cli-{tag}-{}", std::process::id()));
    let engines: [&[&str]; 3] = [
        &["--backend", "sequential"],
        &["--backend", "parallel", "--threads", "1"],
        &["--backend", "parallel", "--threads", "2"],
    ];
    let mut failures = Vec::new();
    let mut runs = 0;
    for case in cases(group) {
        for (e, engine) in engines.iter().enumerate() {
            let out: PathBuf = tmp.join(format!("{}-{e}", case.name.replace('/', "_")));
            let o = run_case(&case, &out, engine);
            runs += 1;
            let stderr = String::from_utf8_lossy(&o.stderr);
            // dyng is stricter than the original: the quirks (a cyclic tree, a tree rooted
            // elsewhere) are rejected with a message naming the problem.
            let quirk = match case.name.as_str() {
                "quirks/cycle-no-changes" => Some("parent cycle"),
                "quirks/wrong-source" => Some("objective 0 is not rooted at source 3"),
                _ => None,
            };
            if case.is_error() || quirk.is_some() {
                let named = quirk.is_none_or(|q| stderr.contains(q));
                if o.status.code() != Some(1) || !stderr.starts_with("Error: ") || !named {
                    failures.push(format!("{}: exit {:?}, stderr {stderr:?}", case.name, o.status.code()));
                }
                continue;
            }
            if !o.status.success() {
                failures.push(format!("{} {engine:?}: exit {:?}: {stderr}", case.name, o.status.code()));
                continue;
            }
            check_outputs(&case, &out, &format!("{engine:?}"), &mut failures);
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
    runs
}

/// The expected output bytes and `--stats` counters of a successful run in `out`.
fn check_outputs(case: &Case, out: &Path, label: &str, failures: &mut Vec<String>) {
    for (rel, digest) in case.expected_sums() {
        let got = std::fs::read(out.join(&rel)).map(|b| sha256_hex(&b)).unwrap_or_default();
        if got != digest {
            failures.push(format!("{} {label}: {rel} differs", case.name));
        }
    }
    let got = read_kv(&out.with_extension("stats"));
    for (k, v) in case.expected_stats() {
        if got.get(&k) != Some(&v) {
            failures.push(format!("{} {label}: {k} = {:?}, expected {v}", case.name, got.get(&k)));
        }
    }
}

/// Runs `check` on the full-output groups that travel with the project; returns the runs.
fn local_groups(check: fn(&Path, &str) -> usize) -> usize {
    ["thesis", "handmade", "small", "errors", "quirks"].iter().map(|g| check(&local_golden().join(g), g)).sum()
}

/// Runs `check` on the digest-only groups of the complete corpus, if present.
fn digest_groups(check: fn(&Path, &str) -> usize, tag: &str) -> Option<usize> {
    let shared = shared_golden_or_skip(&format!("cli_golden::digest_groups ({tag})"))?;
    let special = decompressed_copy(&shared.join("special"), &format!("{tag}-special"));
    let runs = check(&shared.join("usroads-k3"), &format!("{tag}-usroads"))
        + check(&shared.join("bremen-k2"), &format!("{tag}-bremen"))
        + check(&special, &format!("{tag}-special"));
    let _ = std::fs::remove_dir_all(&special);
    Some(runs)
}

#[test]
fn full_groups_through_the_cli() {
    assert_eq!(local_groups(check_group), (3 + 15 + 60 + 25 + 2) * 3);
}

#[test]
fn digest_groups_through_the_cli() {
    if let Some(runs) = digest_groups(check_group, "cli") {
        assert_eq!(runs, (6 + 2 + 2) * 3);
    }
}

#[test]
fn usage_errors_exit_2_and_missing_files_exit_1() {
    let o = dyng().args(["mosp", "--graph", "x"]).output().expect("run");
    assert_eq!(o.status.code(), Some(2));
    let o = dyng().args(["mosp", "--graph", "/nonexistent/g", "--changes", "/x", "--init", "/y"]).output().expect("run");
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("/nonexistent/gRowPtr.txt"), "{err}");
}

#[test]
fn cuda_backend_is_refused_cleanly() {
    let case = &cases(&local_golden().join("thesis"))[0];
    let o = run_case(case, &std::env::temp_dir().join("dyng-cli-cuda"), &["--backend", "cuda"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("CUDA"));
}

/// `--isolation worker` on the sequential and the parallel engine: every case gives the
/// expected output bytes and `--stats` counters, and every error or quirk case exits as the
/// in-process run does, with the same message.
fn check_worker_group(group: &Path, tag: &str) -> usize {
    // The CLI finds the worker beside itself, as in a cargo build folder: the one checked here.
    support::worker();
    let tmp = std::env::temp_dir().join(format!("dyng-cli-worker-{tag}-{}", std::process::id()));
    let mut failures = Vec::new();
    let mut runs = 0;
    for case in cases(group) {
        for backend in ["sequential", "parallel"] {
            let out = tmp.join(format!("{}-{backend}", case.name.replace('/', "_")));
            let o = run_case(&case, &out, &["--backend", backend, "--isolation", "worker"]);
            runs += 1;
            let stderr = String::from_utf8_lossy(&o.stderr);
            if !o.status.success() {
                let local = run_case(&case, &tmp.join("in-process"), &["--backend", backend]);
                if (o.status.code(), &o.stderr) != (local.status.code(), &local.stderr) {
                    failures.push(format!(
                        "{} {backend}: exit {:?} {stderr:?}, in process exit {:?} {:?}",
                        case.name,
                        o.status.code(),
                        local.status.code(),
                        String::from_utf8_lossy(&local.stderr)
                    ));
                }
                if !case.is_error() && !case.name.starts_with("quirks/") {
                    failures.push(format!("{} {backend}: refused: {stderr}", case.name));
                }
                continue;
            }
            if case.is_error() || case.name.starts_with("quirks/") {
                failures.push(format!("{} {backend}: accepted", case.name));
                continue;
            }
            check_outputs(&case, &out, backend, &mut failures);
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
    runs
}

#[test]
fn full_groups_through_the_worker() {
    assert_eq!(local_groups(check_worker_group), (3 + 15 + 60 + 25 + 2) * 2);
}

#[test]
fn digest_groups_through_the_worker() {
    if let Some(runs) = digest_groups(check_worker_group, "worker") {
        assert_eq!(runs, (6 + 2 + 2) * 2);
    }
}
