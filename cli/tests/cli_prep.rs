//! The preparation pipeline through the command line on the bundled US highway network:
//! `prep mtx2csr`, `prep init`, `prep changes`, `prep expected`, then `mosp`. `expected` and
//! `mosp` must write byte-identical trees; with the shared corpus present, every generated file
//! must also equal the golden `usroads-k3` inputs and outputs (sha256).

#[path = "../../tests/common/mod.rs"]
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
    let root = common::repo_root();
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

/// Runs dyng; returns (exit code, stdout, stderr).
fn run(args: &[&str]) -> (Option<i32>, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_dyng")).args(args).output().expect("run dyng");
    (o.status.code(), String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
}

/// A scratch folder removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(tag: &str) -> Self {
        let d = std::env::temp_dir().join(format!("dyng-cli-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        Scratch(d)
    }

    fn path(&self, name: &str) -> String {
        self.0.join(name).to_string_lossy().into_owned()
    }

    fn write(&self, name: &str, text: &str) -> String {
        std::fs::write(self.0.join(name), text).unwrap();
        self.path(name)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn mtx2csr_refuses_what_it_cannot_read_whole() {
    let s = Scratch::new("mtx-bad");
    let out = s.path("g");
    let pattern = "%%MatrixMarket matrix coordinate pattern general\n";
    let cases = [
        ("range.mtx", format!("{pattern}3 3 2\n1 2\n2 7\n"), ":4:3: entry index 7 lies outside the 3 x 3 matrix"),
        ("short.mtx", format!("{pattern}3 3 5\n1 2\n2 3\n"), "the size line declares 5 entries but the file ends after 2"),
        ("long.mtx", format!("{pattern}3 3 1\n1 2\n2 3\n"), ":4:1: more entries than the 1 the size line declares"),
        ("complex.mtx", "%%MatrixMarket matrix coordinate complex general\n3 3 1\n1 2 1 0\n".into(), "the `complex` field is not supported"),
        ("junk.mtx", format!("{pattern}3 3 1\n1 2 junk\n"), ":3:5: an entry holds row and column (a pattern file); this line has 3 words"),
        ("array.mtx", "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n".into(), "the `array` (dense) format is not supported"),
    ];
    for (name, text, want) in cases {
        let mtx = s.write(name, &text);
        let (code, stdout, stderr) = run(&["prep", "mtx2csr", &mtx, &out, "1", "1", "10", "7"]);
        assert_eq!(code, Some(1), "{name}: {stderr}");
        assert!(stderr.contains(want), "{name}: {stderr}");
        assert!(stdout.contains("mtx2csr done in") && stdout.contains("(rc=1)"), "{name}: {stdout}");
        assert!(!s.0.join("gRowPtr.txt").exists(), "{name}: nothing is written");
    }
}

#[test]
fn mtx2csr_keeps_the_files_weights_on_request_and_warns_of_what_it_drops() {
    let s = Scratch::new("mtx-keep");
    let mtx = s.write("w.mtx", "%%MatrixMarket matrix coordinate real symmetric\n3 3 4\n2 1 5\n3 2 7.0\n3 3 1\n1 2 9\n");
    let (code, stdout, stderr) = run(&["prep", "mtx2csr", &mtx, &s.path("g"), "1", "1", "10", "7", "--keep-weights"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("mtx2csr: n=3 directed edges=4 symmetric=1"), "{stdout}");
    assert!(stderr.contains("warning: ") && stderr.contains("dropped 1 self-loop entry and 2 duplicate directed edges (the first kept)"), "{stderr}");
    assert_eq!(std::fs::read_to_string(s.0.join("gValues.txt")).unwrap(), "5\n5\n7\n7\n");
    // Without the option the weights are drawn (the original's rule), whatever the values.
    let (code, _, _) = run(&["prep", "mtx2csr", &mtx, &s.path("d"), "1", "100", "100", "7"]);
    assert_eq!(code, Some(0));
    assert_eq!(std::fs::read_to_string(s.0.join("dValues.txt")).unwrap(), "100\n100\n100\n100\n");
    // A real value that is no integer needs --scale.
    let frac = s.write("f.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 2 2.5\n");
    let (code, _, stderr) = run(&["prep", "mtx2csr", &frac, &s.path("f"), "1", "1", "10", "7", "--keep-weights"]);
    assert_eq!(code, Some(1));
    assert!(stderr.contains("not an integer weight"), "{stderr}");
    let (code, _, stderr) = run(&["prep", "mtx2csr", &frac, &s.path("f"), "1", "1", "10", "7", "--keep-weights", "--scale", "10"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(std::fs::read_to_string(s.0.join("fValues.txt")).unwrap(), "25\n");
}

#[test]
fn dimacs2csr_converts_one_file_per_objective_and_mosp_points_gr_files_to_it() {
    let s = Scratch::new("dimacs");
    let d = s.write("d.gr", "c distances\np sp 3 3\na 1 2 4\na 2 3 5\na 3 1 6\n");
    let t = s.write("t.gr", "p sp 3 3\na 1 2 40\na 2 3 50\na 3 1 60\n");
    let (code, stdout, stderr) = run(&["prep", "dimacs2csr", &d, &t, &s.path("g")]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("dimacs2csr: n=3 directed edges=3 K=2"), "{stdout}");
    assert_eq!(std::fs::read_to_string(s.0.join("gValues.txt")).unwrap(), "4 40\n5 50\n6 60\n");
    let (code, _, _) = run(&["prep", "init", &s.path("g"), &s.path("init")]);
    assert_eq!(code, Some(0));
    s.write("insert.txt", "0 2 1 1\n");
    s.write("delete.txt", "");
    let (code, _, stderr) = run(&["mosp", "--graph", &s.path("g"), "--changes", &s.path(""), "--init", &s.path("init"), "--no-output", "--validate"]);
    assert_eq!(code, Some(0), "{stderr}");
    // A .gr file where the CSR prefix belongs: the error says how to convert it.
    let (code, _, stderr) = run(&["mosp", "--graph", &d, "--changes", &s.path(""), "--init", &s.path("init")]);
    assert_eq!(code, Some(1));
    assert!(stderr.contains("is a file, but a graph is given as the prefix P") && stderr.contains("dyng prep dimacs2csr"), "{stderr}");
    // One file is not enough: the output prefix comes last.
    let (code, _, _) = run(&["prep", "dimacs2csr", &d]);
    assert_eq!(code, Some(2));
}

#[test]
fn prep_and_mosp_refuse_options_that_cannot_be_meant() {
    let s = Scratch::new("options");
    let g = s.path("g");
    let (code, _, _) = run(&["prep", "gen", "grid", &g, "--size", "4", "-k", "3"]);
    assert_eq!(code, Some(0));
    let ch = s.path("ch");
    let init = s.path("init");
    let refused = [
        (vec!["prep", "changes", &g, &ch], "--changes <N>"),
        (vec!["prep", "changes", &g, &ch, "--changes", "10", "--ins", "150"], "150 is not a percentage in [0, 100]"),
        (vec!["prep", "changes", &g, &ch, "--changes", "5000000"], "asks for 2500000 deletions of a graph with 48 edges"),
        (vec!["prep", "changes", &g, &ch, "--changes", "100", "--mode", "reweight"], "asks for 100 reweights of a graph with 48 edges"),
        (vec!["prep", "changes", &g, &ch, "--changes", "10", "--wmin", "9", "--wmax", "3"], "--wmin 9 is above --wmax 3"),
        (vec!["prep", "changes", &g, &ch, "--changes", "10", "--source", "16"], "--source 16 is outside the graph's vertices [0, n = 16)"),
        (vec!["prep", "changes", &g, &ch, "--changes", "10", "-k", "5"], "-k 5: the graph has 3 objectives"),
        (vec!["prep", "init", &g, &init, "-k", "5"], "-k 5: the graph has 3 objectives"),
        (vec!["prep", "mtx2csr", "x.mtx", &g, "3", "9", "3", "1"], "WMIN 9 is above WMAX 3"),
    ];
    for (args, want) in &refused {
        let (code, _, stderr) = run(args);
        assert_eq!(code, Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(want), "{args:?}: {stderr}");
    }
    assert!(!s.0.join("ch").exists() && !s.0.join("init").exists(), "a refused command writes nothing");
    // What the originals accept and the drop-in needs: -k below the graph's K, an explicit 0.
    let (code, _, stderr) = run(&["prep", "changes", &g, &ch, "--changes", "0", "-k", "2"]);
    assert_eq!(code, Some(0), "{stderr}");
    let (code, _, _) = run(&["prep", "init", &g, &init, "-k", "2"]);
    assert_eq!(code, Some(0));
    assert!(s.0.join("init/obj2").exists(), "init writes every objective of the graph");
    let (code, _, stderr) = run(&["mosp", "--graph", &g, "--changes", &ch, "--init", &init, "-k", "5", "--no-output"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("-k 5: the graph has 3 objectives"), "{stderr}");
    let (code, stdout, stderr) = run(&["mosp", "--graph", &g, "--changes", &ch, "--init", &init, "-k", "2", "--no-output"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("K=2;"), "{stdout}");
}

#[test]
fn help_documents_every_argument() {
    let help = |args: &[&str]| run(args).1;
    let mtx = help(&["prep", "mtx2csr", "--help"]);
    for want in ["<K>", "Objectives per edge", "<WMIN>", "Smallest drawn weight", "<WMAX>", "<SEED>", "--keep-weights", "--scale", "byte-identical", "refused"] {
        assert!(mtx.contains(want), "prep mtx2csr --help lacks {want:?}:\n{mtx}");
    }
    let changes = help(&["prep", "changes", "--help"]);
    for want in ["--changes <N>", "Number of changes", "--ins <PCT>", "Share of insertions", "--local <HOPS>", "--safe", "Drop the deletions", "-k <K>", "Objectives used", "Refused with exit 2"] {
        assert!(changes.contains(want), "prep changes --help lacks {want:?}:\n{changes}");
    }
    let dimacs = help(&["prep", "dimacs2csr", "--help"]);
    assert!(dimacs.contains("--zero-to-one") && dimacs.contains("1-based"), "{dimacs}");
    let mosp = help(&["mosp", "--help"]);
    for want in ["--backend <BACKEND>", "single-threaded", "-k <K>", "refused"] {
        assert!(mosp.contains(want), "mosp --help lacks {want:?}:\n{mosp}");
    }
}

/// An incomplete tree file names its path once (the reader's prefix), not twice.
#[test]
fn a_tree_file_error_names_its_path_once() {
    let s = Scratch::new("tree-err");
    let g = s.path("g");
    run(&["prep", "gen", "grid", &g, "--size", "3", "-k", "1"]);
    run(&["prep", "init", &g, &s.path("init")]);
    run(&["prep", "changes", &g, &s.path("ch"), "--changes", "2"]);
    let dist = s.0.join("init/obj0/distancesOriginal.txt");
    let text = std::fs::read_to_string(&dist).unwrap();
    std::fs::write(&dist, text.lines().take(4).map(|l| format!("{l}\n")).collect::<String>()).unwrap();
    let (code, _, stderr) = run(&["mosp", "--graph", &g, "--changes", &s.path("ch"), "--init", &s.path("init"), "--no-output"]);
    assert_eq!(code, Some(1));
    assert!(stderr.contains("distances file lists 4 of 9 vertices (vertex 4 is missing)"), "{stderr}");
    assert_eq!(stderr.matches("distancesOriginal.txt").count(), 1, "{stderr}");
}
