//! Shared helpers of the integration tests: locating and reading golden-corpus cases.
#![allow(dead_code)]

pub mod capi;
pub mod skip;
pub mod trees;

use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The reverse of a one-objective CSR (`row_ptr`, `col`, `w`): row v lists the tails of the edges
/// into v, with their weights, by ascending tail; the drop-in calls take it as their reverse graph.
pub fn reverse_csr(row_ptr: &[i32], col: &[i32], w: &[i32]) -> (Vec<i32>, Vec<i32>, Vec<i32>) {
    let n = row_ptr.len() - 1;
    let mut rp = vec![0i32; n + 1];
    for &v in col {
        rp[v as usize + 1] += 1;
    }
    for v in 0..n {
        rp[v + 1] += rp[v];
    }
    let mut fill = rp[..n].to_vec();
    let (mut tails, mut weights) = (vec![0i32; col.len()], vec![0i32; col.len()]);
    for u in 0..n {
        for e in row_ptr[u] as usize..row_ptr[u + 1] as usize {
            let s = &mut fill[col[e] as usize];
            (tails[*s as usize], weights[*s as usize]) = (u as i32, w[e]);
            *s += 1;
        }
    }
    (rp, tails, weights)
}

/// One case of the golden corpus.
#[derive(Debug, Clone)]
pub struct Case {
    pub dir: PathBuf,
    pub name: String,
    pub k: Option<usize>,
    pub source: usize,
    pub pref: Vec<u32>,
    pub canonicalize: bool,
    pub graph: PathBuf,
    pub changes: PathBuf,
    pub init: PathBuf,
}

impl Case {
    pub fn is_error(&self) -> bool {
        self.dir.join("expected/error.txt").exists()
    }

    /// (relative path, sha256) of every expected output file.
    pub fn expected_sums(&self) -> Vec<(String, String)> {
        let text = std::fs::read_to_string(self.dir.join("expected/SHA256SUMS")).expect("SHA256SUMS");
        text.lines()
            .map(|l| {
                let (d, p) = l.split_once("  ").expect("sha256sum line");
                (p.to_string(), d.to_string())
            })
            .collect()
    }

    pub fn expected_stats(&self) -> BTreeMap<String, String> {
        read_kv(&self.dir.join("expected/stats.txt"))
    }
}

pub fn read_kv(path: &Path) -> BTreeMap<String, String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// The repository root: the library's folder, one above the CLI's (`cli/`), whose tests share
/// these helpers.
pub fn repo_root() -> PathBuf {
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    if env!("CARGO_PKG_NAME") == "dyng-cli" {
        return here.parent().expect("cli/ has a parent").to_path_buf();
    }
    here
}

/// The copy of the full-output groups that travels with the project.
pub fn local_golden() -> PathBuf {
    repo_root().join("tests/golden")
}

/// The complete corpus (with the large digest-only groups), if present: `$DYNG_GOLDEN_DIR`, or
/// `../shared/golden` beside the project.
pub fn shared_golden() -> Option<PathBuf> {
    let candidates = [
        std::env::var_os("DYNG_GOLDEN_DIR").map(PathBuf::from),
        Some(repo_root().join("../shared/golden")),
    ];
    candidates.into_iter().flatten().find(|p| p.join("MANIFEST.tsv").exists())
}

/// [`shared_golden`], or a recorded skip of `test` (see `skip.rs`) when the corpus is absent.
pub fn shared_golden_or_skip(test: &str) -> Option<PathBuf> {
    let found = shared_golden();
    if found.is_none() {
        skip::skip_golden(test);
    }
    found
}

/// Every case folder (holding cmd.txt) under `group`, sorted.
pub fn cases(group: &Path) -> Vec<Case> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(group)
        .unwrap_or_else(|e| panic!("{}: {e}", group.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("cmd.txt").exists())
        .collect();
    dirs.sort();
    dirs.into_iter().map(|d| parse_case(&d)).collect()
}

fn parse_case(dir: &Path) -> Case {
    let cmd = std::fs::read_to_string(dir.join("cmd.txt")).expect("cmd.txt");
    let kv: BTreeMap<&str, &str> = cmd.split_whitespace().filter_map(|t| t.split_once('=')).collect();
    let group = dir.parent().and_then(|p| p.file_name()).unwrap_or_default().to_string_lossy();
    Case {
        dir: dir.to_path_buf(),
        name: format!("{group}/{}", dir.file_name().unwrap_or_default().to_string_lossy()),
        k: kv["k"].parse().ok(),
        source: kv["source"].parse().expect("source"),
        pref: kv["pref"].split(',').map(|p| p.parse().expect("pref")).collect(),
        canonicalize: kv["canonicalize"] == "yes",
        graph: dir.join(kv["graph"]),
        changes: dir.join(kv["changes"]),
        init: dir.join(kv["init"]),
    }
}

/// A copy of `group` with every `*.gz` file decompressed (the `special` group), in a temp dir.
pub fn decompressed_copy(group: &Path, tag: &str) -> PathBuf {
    let dst = std::env::temp_dir().join(format!("dyng-golden-{tag}-{}", std::process::id()));
    copy_tree(group, &dst);
    dst
}

fn copy_tree(src: &Path, dst: &Path) {
    std::fs::create_dir_all(dst).expect("mkdir");
    for e in std::fs::read_dir(src).expect("read_dir").flatten() {
        let p = e.path();
        let name = e.file_name().to_string_lossy().to_string();
        if p.is_dir() {
            copy_tree(&p, &dst.join(&name));
        } else if let Some(stem) = name.strip_suffix(".gz") {
            let mut out = Vec::new();
            let f = std::fs::File::open(&p).expect("open gz");
            std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(f), &mut out).expect("gunzip");
            std::fs::write(dst.join(stem), out).expect("write");
        } else {
            std::fs::copy(&p, dst.join(&name)).expect("copy");
        }
    }
}

/// The engines every replay runs on: sequential, and parallel on 1, 2 and 4 threads.
pub fn engines() -> Vec<(String, dyng::Resources)> {
    let mut v = vec![("sequential".to_string(), dyng::Resources::sequential())];
    for t in [1, 2, 4] {
        v.push((format!("parallel-{t}"), dyng::Resources::parallel(t).expect("thread pool")));
    }
    v
}

/// `dyng mosp` (the program at `exe`) on `case` with `--out out --quiet`; the caller adds what it
/// needs (engine, isolation, cache) and runs it.
pub fn mosp_command(exe: &Path, case: &Case, out: &Path) -> std::process::Command {
    let pref: Vec<String> = case.pref.iter().map(u32::to_string).collect();
    let mut cmd = std::process::Command::new(exe);
    cmd.arg("mosp")
        .arg("--graph")
        .arg(&case.graph)
        .arg("--changes")
        .arg(&case.changes)
        .arg("--init")
        .arg(&case.init)
        .args(["--source", &case.source.to_string(), "--pref", &pref.join(","), "--quiet"])
        .arg("--out")
        .arg(out);
    if let Some(k) = case.k {
        cmd.args(["-k", &k.to_string()]);
    }
    if case.canonicalize {
        cmd.arg("--canonicalize");
    }
    cmd
}

/// Writes a MOSP case for `g` under `dir` as the drop-in driver reads it: the graph triplet
/// `dir/graph`, the batch folder `dir/changes`, and the static trees from source 0 of every
/// objective in `dir/init` (as `mospPrep` writes them). The case runs all K objectives with
/// `pref` (empty: all ones).
pub fn write_mosp_case(dir: &Path, g: &dyng::Csr, batch: &dyng::Batch, pref: &[u32]) -> Case {
    use dyng::io::{formats::{batch_files, csr_text, trees}, CsrText};
    let (n, m, k) = (g.n(), g.m(), g.k());
    // The text files hold edge-major weights; a Csr holds them objective-major.
    let weights = (0..m).flat_map(|e| (0..k).map(move |j| (e, j))).map(|(e, j)| g.weights()[j * m + e]).collect();
    let text = CsrText { n, k, row_ptr: g.row_ptr().to_vec(), col_ind: g.col_ind().to_vec(), weights };
    std::fs::create_dir_all(dir.join("changes")).expect("mkdir");
    csr_text::write_csr_triplet(&dir.join("graph"), &text).expect("graph");
    batch_files::write_batch_dir(&dir.join("changes"), batch).expect("batch");
    let lg = dyng::Graph::new(g.clone());
    for j in 0..k {
        let t = dyng::SsspResult::compute(&dyng::Resources::sequential(), &lg, 0, j, &Default::default()).expect("tree");
        let obj = dir.join(format!("init/obj{j}"));
        std::fs::create_dir_all(&obj).expect("mkdir");
        trees::write_distances(&obj.join("distancesOriginal.txt"), t.distances()).expect("distances");
        trees::write_parents(&obj.join("SSSPTreeOriginal.txt"), t.parents()).expect("parents");
    }
    Case {
        dir: dir.to_path_buf(),
        name: dir.file_name().unwrap_or_default().to_string_lossy().into_owned(),
        k: Some(k),
        source: 0,
        pref: if pref.is_empty() { vec![1; k] } else { pref.to_vec() },
        canonicalize: false,
        graph: dir.join("graph"),
        changes: dir.join("changes"),
        init: dir.join("init"),
    }
}
