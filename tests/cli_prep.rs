//! The preparation pipeline through the command line on the bundled US highway network:
//! `prep mtx2csr`, `prep init`, `prep changes`, `prep expected`, then `mosp`. `expected` and
//! `mosp` must write byte-identical trees; with the shared corpus present, every generated file
//! must also equal the golden `usroads-k3` inputs and outputs (sha256).

mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

fn dyng(args: &[&str]) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_dyng")).args(args).output().expect("run dyng");
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(o.status.success(), "dyng {args:?} failed: {out}{}", String::from_utf8_lossy(&o.stderr));
    out
}

fn sums(path: &Path) -> Vec<(String, String)> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| {
            let (d, p) = l.split_once("  ").unwrap();
            (p.to_string(), d.to_string())
        })
        .collect()
}

fn sha_of(path: &Path) -> String {
    sha256_hex(&std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())))
}

#[test]
fn usroads_pipeline_through_the_cli() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let tmp = std::env::temp_dir().join(format!("dyng-cli-prep-{}", std::process::id()));
    let t = |p: &str| tmp.join(p).to_string_lossy().into_owned();
    std::fs::create_dir_all(tmp.join("g")).unwrap();
    let mtx = root.join("data/road-usroads.mtx");
    let out = dyng(&["prep", "mtx2csr", mtx.to_str().unwrap(), &t("g/graph"), "3", "1", "100", "12345"]);
    assert!(out.contains("mtx2csr: n=129164 directed edges=330870 symmetric=1"), "{out}");
    assert!(out.contains("mtx2csr done in"), "{out}");
    let out = dyng(&["prep", "init", &t("g/graph"), &t("init"), "--source", "531"]);
    assert_eq!(out.matches("dijkstra obj").count(), 3, "{out}");
    let out = dyng(&[
        "prep", "changes", &t("g/graph"), &t("ch"), "--changes", "2000", "--ins", "50", "--seed", "777",
        "--local", "100", "--safe", "--source", "531",
    ]);
    assert!(
        out.contains("changes: inserts=1000 reweights=0 deletes=975 (safe: kept 975 of 1000 after 2 rounds) local centre=19718 hops=100 region=11722 vertices"),
        "{out}"
    );
    dyng(&["prep", "expected", &t("g/graph"), &t("ch"), &t("exp"), "--source", "531"]);
    dyng(&[
        "mosp", "--graph", &t("g/graph"), "--changes", &t("ch"), "--init", &t("init"), "--source", "531",
        "--out", &t("out"), "--quiet", "--validate",
    ]);
    for j in 0..3 {
        for f in ["distancesUpdated.txt", "SSSPTreeUpdated.txt"] {
            let rel = format!("obj{j}/{f}");
            assert_eq!(sha_of(&tmp.join("exp").join(&rel)), sha_of(&tmp.join("out").join(&rel)), "{rel}");
        }
    }
    match shared_golden() {
        None => skip::skip_golden("cli_prep::usroads_pipeline_through_the_cli (the golden comparison)"),
        Some(g) => {
            let group = g.join("usroads-k3");
            for (rel, digest) in sums(&group.join("inputs.SHA256SUMS")) {
                let mine = match rel.split_once('/') {
                    Some(("graph", f)) => tmp.join("g").join(f),
                    Some(("init-s531", f)) => tmp.join("init").join(f),
                    Some(("s531-local2k", f)) => tmp.join("ch").join(f.trim_start_matches("changes/")),
                    _ => continue,
                };
                assert_eq!(sha_of(&mine), digest, "{rel}");
            }
            for (rel, digest) in sums(&group.join("s531-local2k/expected/SHA256SUMS")) {
                assert_eq!(sha_of(&tmp.join("out").join(&rel)), digest, "{rel}");
            }
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
}

#[test]
fn prep_usage_and_input_errors() {
    let o = Command::new(env!("CARGO_BIN_EXE_dyng")).args(["prep", "mtx2csr", "x"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    let o = Command::new(env!("CARGO_BIN_EXE_dyng"))
        .args(["prep", "init", "/nonexistent/graph", "/tmp/x"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stdout).contains("init done in"));
    assert!(String::from_utf8_lossy(&o.stderr).contains("Error: "));
}

/// A closed stdout (`dyng ... | head`) ends the program quietly, as the C++ drivers do.
#[test]
fn a_closed_stdout_ends_quietly() {
    use std::os::unix::process::ExitStatusExt;
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_dyng"))
        .args(["prep", "gen", "grid", "/nonexistent-dir/g", "--size", "3"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(out.status.signal() == Some(libc::SIGPIPE) || out.status.code() == Some(1), "{:?}", out.status);
}
