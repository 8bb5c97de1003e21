//! The worker the CLI's tests run. Cargo builds `dyng-worker` (a program of the library's
//! package) into the folder of `dyng`, where the CLI finds it, but only when the library's
//! package is built as well, as the workspace's `cargo test` does: `cargo test --test NAME` of a
//! CLI test builds `dyng` alone, so a worker that is missing or older than a source it was built
//! from fails the test with the command that builds it, rather than testing an old worker.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::time::SystemTime;

fn modified(p: &Path) -> Option<SystemTime> {
    std::fs::metadata(p).and_then(|m| m.modified()).ok()
}

/// Every file under `dir`.
fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = entry.path();
        if p.is_dir() {
            files_under(&p, out);
        } else {
            out.push(p);
        }
    }
}

/// The sources cargo lists for `exe` in its dep-info file (`exe.d`, beside it), spaces in paths
/// escaped as `\ `. Cargo writes that file for a `cargo build`, not always for a `cargo test`:
/// without it, every file of the library's package that a program of it is built from.
fn sources(exe: &Path) -> Vec<PathBuf> {
    let dep_info = exe.with_extension("d");
    let Ok(text) = std::fs::read_to_string(&dep_info) else {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut out = vec![root.join("Cargo.toml"), root.join("build.rs")];
        files_under(&root.join("src"), &mut out);
        files_under(&root.join("kernels"), &mut out);
        return out;
    };
    let line = text.lines().next().unwrap_or_default();
    let (_, deps) = line.split_once(": ").unwrap_or_default();
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = deps.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => cur.extend(chars.next()),
            ' ' if !cur.is_empty() => out.push(PathBuf::from(std::mem::take(&mut cur))),
            ' ' => {}
            c => cur.push(c),
        }
    }
    if !cur.is_empty() {
        out.push(PathBuf::from(cur));
    }
    out
}

/// `dyng-worker` beside the `dyng` under test, checked to be built from the current sources.
pub fn worker() -> PathBuf {
    let dyng = Path::new(env!("CARGO_BIN_EXE_dyng"));
    let worker = dyng.with_file_name("dyng-worker");
    let profile = dyng.parent().and_then(Path::file_name).map(|p| p.to_string_lossy().into_owned()).unwrap_or_default();
    let build = if profile == "release" { "cargo build --release --bin dyng-worker" } else { "cargo build --bin dyng-worker" };
    let Some(built) = modified(&worker) else {
        panic!("{} is missing: run the tests from the repository root (`cargo test` builds it) or `{build}`", worker.display());
    };
    let srcs = sources(&worker);
    assert!(!srcs.is_empty(), "{}.d lists no sources", worker.display());
    if let Some(newer) = srcs.iter().find(|s| modified(s).is_none_or(|m| m > built)) {
        panic!("{} is older than {}, one of its sources: `{build}` rebuilds it", worker.display(), newer.display());
    }
    worker
}
