//! The seeded generators against the golden corpus: `mtx2csr` must reproduce the usroads graph
//! files (sha256) and the change generator every generated batch of MANIFEST.tsv byte for byte,
//! with the same summary line. Skipped, with a notice, when the shared folder is missing.

#[path = "common/skip.rs"]
mod skip;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use dyng::io::generators::changegen::{generate_changes, ChangeMode, ChangeOptions};
use dyng::io::formats::mtx::mtx_to_csr;
use dyng::io::CsrText;
use dyng::{Batch, Csr, WeightLayout};
use sha2::{Digest, Sha256};

/// `DYNG_SHARED_DIR`, else `../shared` next to the crate.
fn shared_dir() -> Option<PathBuf> {
    let candidates = [
        std::env::var_os("DYNG_SHARED_DIR").map(PathBuf::from),
        Some(Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared")),
    ];
    let found = candidates
        .into_iter()
        .flatten()
        .find(|p| p.join("golden/MANIFEST.tsv").is_file());
    if found.is_none() {
        skip::skip("generators (against the golden corpus)", skip::GOLDEN, "the shared folder is not here: set DYNG_SHARED_DIR or provide ../shared");
    }
    found
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The three graph files as `writeCsrGraph` writes them.
fn format_graph(t: &CsrText) -> [(String, String); 3] {
    let mut rp = String::new();
    for x in &t.row_ptr {
        rp += &format!("{x}\n");
    }
    let mut ci = String::new();
    for x in &t.col_ind {
        ci += &format!("{x}\n");
    }
    let mut vals = String::new();
    for w in t.weights.chunks(t.k) {
        let line: Vec<String> = w.iter().map(|x| x.to_string()).collect();
        vals += &line.join(" ");
        vals.push('\n');
    }
    [
        ("graph/graphRowPtr.txt".into(), rp),
        ("graph/graphColInd.txt".into(), ci),
        ("graph/graphValues.txt".into(), vals),
    ]
}

/// The batch as `writeChangeBatch` writes it: (insert.txt, delete.txt).
fn format_batch(b: &Batch) -> (String, String) {
    let mut ins = String::new();
    for i in 0..b.num_insertions() {
        ins += &format!("{} {}", b.ins_src[i], b.ins_dst[i]);
        for w in &b.ins_weights[i * b.k..(i + 1) * b.k] {
            ins += &format!(" {w}");
        }
        ins.push('\n');
    }
    let mut del = String::new();
    for i in 0..b.num_deletions() {
        del += &format!("{} {}\n", b.del_src[i], b.del_dst[i]);
    }
    (ins, del)
}

fn to_csr(t: &CsrText) -> Csr {
    Csr::from_arrays(
        t.n,
        t.k,
        t.row_ptr.clone(),
        t.col_ind.clone(),
        &t.weights,
        WeightLayout::EdgeMajor,
    )
    .expect("valid golden graph")
}

/// Reads `<prefix>{RowPtr,ColInd,Values}.txt` (canonical golden files).
fn read_graph(prefix: &Path) -> Csr {
    let file = |s: &str| read(&PathBuf::from(format!("{}{s}.txt", prefix.display())));
    let ints = |s: &str| -> Vec<i32> {
        file(s)
            .split_ascii_whitespace()
            .map(|x| x.parse().expect("integer"))
            .collect()
    };
    let row_ptr = ints("RowPtr");
    let col_ind = ints("ColInd");
    let values = file("Values");
    let k = values
        .lines()
        .next()
        .map_or(0, |l| l.split_ascii_whitespace().count());
    let weights: Vec<i32> = values
        .split_ascii_whitespace()
        .map(|x| x.parse().expect("integer"))
        .collect();
    let n = row_ptr.len() - 1;
    Csr::from_arrays(n, k, row_ptr, col_ind, &weights, WeightLayout::EdgeMajor)
        .expect("valid golden graph")
}

fn usroads(shared: &Path) -> &'static (CsrText, Csr) {
    static G: OnceLock<(CsrText, Csr)> = OnceLock::new();
    G.get_or_init(|| {
        let (t, sym) =
            mtx_to_csr(&shared.join("data/road-usroads.mtx"), 3, 1, 100, 12345).expect("mtx");
        assert!(sym);
        let g = to_csr(&t);
        (t, g)
    })
}

/// The MANIFEST row of `case`: (generator options, expected summary after `=> `).
fn manifest_batch(shared: &Path, case: &str) -> (ChangeOptions, String) {
    let manifest = read(&shared.join("golden/MANIFEST.tsv"));
    let row = manifest
        .lines()
        .find(|l| l.split('\t').next() == Some(case))
        .unwrap_or_else(|| panic!("{case} not in MANIFEST"));
    let batch = row.split('\t').nth(14).expect("batch column");
    let (args, summary) = batch.split_once(" => ").expect("changegen row");
    (parse_options(args), summary.to_string())
}

fn parse_options(args: &str) -> ChangeOptions {
    let mut opt = ChangeOptions::default();
    let mut it = args.split_ascii_whitespace().skip(1);
    while let Some(flag) = it.next() {
        if flag == "--safe" {
            opt.safe = true;
            continue;
        }
        let val = it.next().expect("option value");
        match flag {
            "--changes" => opt.changes = val.parse().expect("N"),
            "--ins" => opt.insert_pct = val.parse().expect("pct"),
            "--seed" => opt.seed = val.parse().expect("seed"),
            "--wmin" => opt.wmin = val.parse().expect("wmin"),
            "--wmax" => opt.wmax = val.parse().expect("wmax"),
            "--source" => opt.source = val.parse().expect("source"),
            "--local" => opt.local_hops = val.parse().expect("hops"),
            "--mode" => {
                opt.mode = match val {
                    "uniform" => ChangeMode::Uniform,
                    "targeted" => ChangeMode::Targeted,
                    "reweight" => ChangeMode::Reweight,
                    "increase" => ChangeMode::Increase,
                    other => panic!("unknown mode {other}"),
                }
            }
            other => panic!("unknown option {other}"),
        }
    }
    opt
}

/// Generates the batch of `case` on `g` and compares files and summary with the corpus.
fn check_case(shared: &Path, case: &str, g: &Csr) {
    let (opt, summary) = manifest_batch(shared, case);
    let (batch, line) = generate_changes(g, &opt).unwrap_or_else(|e| panic!("{case}: {e}"));
    assert_eq!(line, format!("changes: {summary}"), "{case}: summary");
    let (ins, del) = format_batch(&batch);
    let dir = shared.join("golden").join(case).join("changes");
    assert!(
        ins == read(&dir.join("insert.txt")),
        "{case}: insert.txt differs"
    );
    assert!(
        del == read(&dir.join("delete.txt")),
        "{case}: delete.txt differs"
    );
}

#[test]
fn mtx2csr_reproduces_usroads_graph_files() {
    let Some(shared) = shared_dir() else { return };
    let (t, _) = usroads(&shared);
    assert_eq!((t.n, t.col_ind.len()), (129_164, 330_870));
    let sums = read(&shared.join("golden/usroads-k3/inputs.SHA256SUMS"));
    for (name, text) in format_graph(t) {
        let want = sums
            .lines()
            .find_map(|l| l.strip_suffix(name.as_str()).map(|h| h.trim().to_string()))
            .unwrap_or_else(|| panic!("{name} not listed"));
        assert_eq!(sha256_hex(text.as_bytes()), want, "{name}");
    }
}

#[test]
fn changegen_reproduces_usroads_batches() {
    let Some(shared) = shared_dir() else { return };
    let (_, g) = usroads(&shared);
    for case in [
        "safe10k",
        "unsafe10k",
        "local2k",
        "s531-safe10k",
        "s531-unsafe10k",
        "s531-local2k",
    ] {
        check_case(&shared, &format!("usroads-k3/{case}"), g);
    }
}

#[test]
fn changegen_reproduces_bremen_batches() {
    let Some(shared) = shared_dir() else { return };
    let g = read_graph(&shared.join("golden/bremen-k2/graph/graph"));
    for case in ["safe5k", "local1k"] {
        check_case(&shared, &format!("bremen-k2/{case}"), &g);
    }
}

#[test]
fn changegen_reproduces_small_generated_batches() {
    let Some(shared) = shared_dir() else { return };
    let manifest = read(&shared.join("golden/MANIFEST.tsv"));
    let cases: Vec<&str> = manifest
        .lines()
        .filter(|l| l.starts_with("small/") && l.contains("changegen.py"))
        .filter_map(|l| l.split('\t').next())
        .collect();
    assert!(cases.len() >= 7, "generated small cases: {cases:?}");
    for case in cases {
        let g = read_graph(&shared.join("golden").join(case).join("graph"));
        check_case(&shared, case, &g);
    }
}

/// `v d` / `v INF` and `v p` lines, as the originals' tree writers print them.
fn format_tree(dist: &[i64], parent: &[i32]) -> (String, String) {
    let (mut d, mut p) = (String::new(), String::new());
    for (v, (&x, &q)) in dist.iter().zip(parent).enumerate() {
        if x >= dyng::DISTANCE_INF / 2 {
            d += &format!("{v} INF\n");
        } else {
            d += &format!("{v} {x}\n");
        }
        p += &format!("{v} {q}\n");
    }
    (d, p)
}

/// The oracle must reproduce the original's Dijkstra trees (`mospPrep init`) of a group.
fn check_init_trees(g: &dyng::Csr, sums: &str, init: &str, source: usize) {
    let digest = |name: &str| {
        sums.lines()
            .find_map(|l| l.strip_suffix(name).map(|h| h.trim().to_string()))
            .unwrap_or_else(|| panic!("{name} not listed"))
    };
    for k in 0..g.k() {
        let start = std::time::Instant::now();
        let (dist, parent) = dyng::graph::dijkstra::dijkstra(g, k, source);
        println!("dijkstra n={} obj{k}: {:?}", g.n(), start.elapsed());
        let (d, p) = format_tree(&dist, &parent);
        let dname = format!("{init}/obj{k}/distancesOriginal.txt");
        let pname = format!("{init}/obj{k}/SSSPTreeOriginal.txt");
        assert_eq!(sha256_hex(d.as_bytes()), digest(&dname), "{dname}");
        assert_eq!(sha256_hex(p.as_bytes()), digest(&pname), "{pname}");
    }
}

#[test]
fn dijkstra_reproduces_original_init_trees() {
    let Some(shared) = shared_dir() else { return };
    let (_, g) = usroads(&shared);
    let sums = read(&shared.join("golden/usroads-k3/inputs.SHA256SUMS"));
    check_init_trees(g, &sums, "init-s0", 0);
    check_init_trees(g, &sums, "init-s531", 531);
    let bremen = read_graph(&shared.join("golden/bremen-k2/graph/graph"));
    let sums = read(&shared.join("golden/bremen-k2/inputs.SHA256SUMS"));
    check_init_trees(&bremen, &sums, "init-s0", 0);
}
