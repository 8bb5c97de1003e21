//! Readers and writers of `dyng::io` against the golden corpus of `shared/golden` (inputs re-read
//! after writing, the lenient case, the error cases, the Bremen DIMACS conversion) and against
//! random bytes (readers return `Ok` or `Err`, never panic). Corpus tests skip when it is absent.

#[path = "common/skip.rs"]
mod skip;

use std::path::{Path, PathBuf};

use dyng::io::formats::csr_text::{read_csr_triplet, triplet_paths, write_csr_triplet};
use dyng::io::formats::trees::{read_distances, read_parents, write_distances, write_parents};
use dyng::io::{formats::{batch_files, cache, dimacs}, CsrText};
use dyng::{Batch, Error};
use proptest::prelude::*;
use sha2::{Digest, Sha256};

/// The shared folder: `$DYNG_SHARED_DIR`, `../shared` or `shared` next to the crate.
fn shared_dir() -> Option<PathBuf> {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut candidates: Vec<PathBuf> = std::env::var_os("DYNG_SHARED_DIR")
        .map(PathBuf::from)
        .into_iter()
        .collect();
    candidates.push(manifest.join("../shared"));
    candidates.push(manifest.join("shared"));
    let found = candidates.into_iter().find(|p| p.join("golden").is_dir());
    if found.is_none() {
        skip::skip("io_formats (the corpus tests)", skip::GOLDEN, "the shared folder is not here: set DYNG_SHARED_DIR or provide ../shared");
    }
    found
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("dyng-io-formats-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The `key=value` pairs of a case's `cmd.txt`.
struct Cmd {
    k: Option<usize>,
    graph: String,
    changes: String,
    init: String,
}

fn read_cmd(case: &Path) -> Cmd {
    let text = std::fs::read_to_string(case.join("cmd.txt")).unwrap();
    let get = |key: &str| {
        text.split_whitespace()
            .find_map(|t| t.strip_prefix(key).and_then(|r| r.strip_prefix('=')))
            .unwrap_or_default()
            .to_string()
    };
    Cmd {
        k: get("k").parse().ok(),
        graph: get("graph"),
        changes: get("changes"),
        init: get("init"),
    }
}

/// Every input of a case, as the `mosp` driver loads them.
struct Inputs {
    graph: CsrText,
    batch: Batch,
    trees: Vec<(Vec<i64>, Vec<i32>)>,
}

fn tree_paths(init: &Path, j: usize) -> (PathBuf, PathBuf) {
    let d = init.join(format!("obj{j}"));
    (
        d.join("distancesOriginal.txt"),
        d.join("SSSPTreeOriginal.txt"),
    )
}

fn load_case(case: &Path) -> Result<Inputs, Error> {
    let cmd = read_cmd(case);
    let graph = read_csr_triplet(&case.join(&cmd.graph))?;
    // An edgeless graph has K = 0 in its Values file; `-k` then supplies it (resolveObjectives).
    let kg = if graph.k == 0 {
        cmd.k.unwrap_or(0)
    } else {
        graph.k
    };
    let k = cmd.k.unwrap_or(kg);
    let batch = batch_files::read_batch_dir(&case.join(&cmd.changes), graph.n, kg)?;
    let mut trees = Vec::new();
    for j in 0..k {
        let (dp, pp) = tree_paths(&case.join(&cmd.init), j);
        trees.push((read_distances(&dp, graph.n)?, read_parents(&pp, graph.n)?));
    }
    Ok(Inputs {
        graph,
        batch,
        trees,
    })
}

fn cases(shared: &Path, groups: &[&str]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for g in groups {
        let Ok(rd) = std::fs::read_dir(shared.join("golden").join(g)) else {
            continue;
        };
        out.extend(
            rd.filter_map(|e| e.ok())
                .map(|e| e.path())
                .filter(|p| p.join("cmd.txt").is_file()),
        );
    }
    out.sort();
    out
}

fn same_bytes(a: &Path, b: &Path) -> bool {
    std::fs::read(a).ok() == std::fs::read(b).ok()
}

/// Writes every input of a case back, re-reads it, and (for canonical inputs) compares the bytes.
fn round_trip(case: &Path, out: &Path) {
    let cmd = read_cmd(case);
    let inp = load_case(case).unwrap_or_else(|e| panic!("{}: {e}", case.display()));
    let canonical = !case.ends_with("format-lenient");
    let prefix = out.join("graph");
    write_csr_triplet(&prefix, &inp.graph).unwrap();
    assert_eq!(
        read_csr_triplet(&prefix).unwrap(),
        inp.graph,
        "{}",
        case.display()
    );
    let bdir = out.join("changes");
    batch_files::write_batch_dir(&bdir, &inp.batch).unwrap();
    let batch = batch_files::read_batch_dir(&bdir, inp.graph.n, inp.batch.k).unwrap();
    assert_eq!(batch, inp.batch, "{}", case.display());
    let mut pairs: Vec<(PathBuf, PathBuf)> = triplet_paths(&case.join(&cmd.graph))
        .into_iter()
        .zip(triplet_paths(&prefix))
        .collect();
    for f in ["insert.txt", "delete.txt"] {
        pairs.push((case.join(&cmd.changes).join(f), bdir.join(f)));
    }
    for (j, (d, p)) in inp.trees.iter().enumerate() {
        let (dp, pp) = tree_paths(out, j);
        std::fs::create_dir_all(dp.parent().unwrap()).unwrap();
        write_distances(&dp, d).unwrap();
        write_parents(&pp, p).unwrap();
        assert_eq!(&read_distances(&dp, inp.graph.n).unwrap(), d);
        assert_eq!(&read_parents(&pp, inp.graph.n).unwrap(), p);
        let (odp, opp) = tree_paths(&case.join(&cmd.init), j);
        pairs.push((odp, dp));
        pairs.push((opp, pp));
    }
    if canonical {
        for (orig, ours) in pairs {
            assert!(
                same_bytes(&orig, &ours),
                "{} differs from the rewrite {}",
                orig.display(),
                ours.display()
            );
        }
    }
}

#[test]
fn golden_inputs_round_trip() {
    let Some(shared) = shared_dir() else { return };
    let all = cases(&shared, &["thesis", "handmade", "small"]);
    assert!(
        all.len() > 50,
        "expected the corpus cases, found {}",
        all.len()
    );
    let out = scratch("rt");
    for (i, case) in all.iter().enumerate() {
        let dir = out.join(i.to_string());
        std::fs::create_dir_all(&dir).unwrap();
        round_trip(case, &dir);
    }
    std::fs::remove_dir_all(out).ok();
}

#[test]
fn format_lenient_parses_like_canonical() {
    let Some(shared) = shared_dir() else { return };
    let case = shared.join("golden/handmade/format-lenient");
    let inp = load_case(&case).unwrap();
    assert_eq!((inp.graph.k, inp.trees.len()), (2, 2));
    assert_eq!(inp.graph.row_ptr.len(), inp.graph.n + 1);
    // Leading blanks, tabs and CRLF; extra tokens ignored (`17\t16 1 1 99 100`).
    assert_eq!(&inp.batch.ins_src[..2], &[3, 17]);
    assert_eq!(&inp.batch.ins_dst[..2], &[0, 16]);
    assert_eq!(&inp.batch.ins_weights[..4], &[3, 2, 1, 1]);
    // `7` (first line) and the unterminated `3` (last) have fewer than 2 tokens: ignored.
    assert_eq!((inp.batch.del_src[0], inp.batch.del_dst[0]), (0, 14));
    assert!(inp
        .batch
        .del_src
        .iter()
        .zip(&inp.batch.del_dst)
        .all(|(&u, &v)| u != 7 && (u, v) != (3, 0)));
}

#[test]
fn error_cases_report_the_original_text() {
    let Some(shared) = shared_dir() else { return };
    let wanted = [
        2, 3, 4, 5, 6, 7, 8, 9, 10, 15, 17, 18, 20, 21, 22, 23, 24, 25,
    ];
    let mut seen = 0;
    for case in cases(&shared, &["errors"]) {
        let name = case.file_name().unwrap().to_string_lossy().to_string();
        let num: usize = name[1..3].parse().unwrap();
        if !wanted.contains(&num) {
            continue;
        }
        seen += 1;
        let expected = std::fs::read_to_string(case.join("expected/error.txt")).unwrap();
        let line = expected
            .lines()
            .find_map(|l| l.strip_prefix("Error: "))
            .unwrap();
        // The original text, without its final period and without the `: <case>/path` tail.
        let (text, path) = match line.split_once(": <case>/") {
            Some((t, p)) => (t, Some(p)),
            None => (line.trim_end_matches('.'), None),
        };
        let err = match load_case(&case) {
            Ok(_) => panic!("{name}: expected an error containing {text:?}"),
            Err(e) => e.to_string(),
        };
        assert!(err.contains(text), "{name}: {err:?} lacks {text:?}");
        if let Some(p) = path {
            assert!(
                err.contains(&case.join(p).display().to_string()),
                "{name}: {err:?} lacks {p}"
            );
        }
        assert!(
            matches!(load_case(&case), Err(Error::Parse { .. })),
            "{name}: not a parse error"
        );
    }
    assert_eq!(seen, wanted.len());
}

#[test]
fn bremen_dimacs_matches_the_corpus_graph() {
    let Some(shared) = shared_dir() else { return };
    let data = shared.join("data");
    let (a, b) = (data.join("bremen_dist.gr"), data.join("bremen_time.gr"));
    let g = dimacs::read_dimacs_objectives(&[a.as_path(), b.as_path()], true).unwrap();
    assert_eq!((g.n, g.k, g.col_ind.len()), (40461, 2, 86475));
    let out = scratch("bremen");
    write_csr_triplet(&out.join("graph"), &g).unwrap();
    let sums = std::fs::read_to_string(shared.join("golden/bremen-k2/inputs.SHA256SUMS")).unwrap();
    for part in ["RowPtr", "ColInd", "Values"] {
        let want = sums
            .lines()
            .find_map(|l| l.strip_suffix(&format!("graph/graph{part}.txt")))
            .map(|h| h.trim().to_string())
            .unwrap();
        let bytes = std::fs::read(out.join(format!("graph{part}.txt"))).unwrap();
        let got: String = Sha256::digest(&bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(got, want, "graph{part}.txt");
    }
    std::fs::remove_dir_all(out).ok();
    // Without zero_to_one the 21 zero weights are an error naming the arc.
    let e = dimacs::read_dimacs_objectives(&[a.as_path()], false)
        .unwrap_err()
        .to_string();
    assert!(e.contains("weight 0") && e.contains("arc "), "{e}");
}

/// Tokens that stress the readers: huge and negative numbers, near-misses of keywords, blanks.
fn token() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("0".to_string()),
        Just("1".to_string()),
        Just("2".to_string()),
        Just("-1".to_string()),
        Just("INF".to_string()),
        Just("inf".to_string()),
        Just("2147483647".to_string()),
        Just("2147483648".to_string()),
        Just("4000000000".to_string()),
        Just("99999999999999999999999".to_string()),
        Just("-9223372036854775808".to_string()),
        Just("a".to_string()),
        Just("p".to_string()),
        Just("sp".to_string()),
        Just("c".to_string()),
        Just("+3".to_string()),
        Just("MOSPCSR2".to_string()),
        Just(" ".to_string()),
        Just("\t".to_string()),
        Just("\r\n".to_string()),
        Just("\n".to_string()),
        Just("\n\n".to_string()),
        (0u32..40).prop_map(|v| v.to_string()),
    ]
}

fn text() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        prop::collection::vec(any::<u8>(), 0..200),
        prop::collection::vec(token(), 0..60).prop_map(|t| t.join(" ").into_bytes()),
        prop::collection::vec(token(), 0..60).prop_map(|t| t.concat().into_bytes()),
    ]
}

/// Feeds the same bytes to every reader; any `Ok`/`Err` is fine, a panic fails the test.
fn feed_all(dir: &Path, files: &[Vec<u8>; 3], n: usize) {
    let prefix = dir.join("g");
    for (p, b) in triplet_paths(&prefix).iter().zip(files) {
        std::fs::write(p, b).unwrap();
    }
    let _ = read_csr_triplet(&prefix);
    let _ = cache::load_or_parse(&dir.join("cache.bin"), &prefix);
    std::fs::write(dir.join("insert.txt"), &files[0]).unwrap();
    std::fs::write(dir.join("delete.txt"), &files[1]).unwrap();
    for kg in [0, 1, 2] {
        let _ = batch_files::read_batch_dir(dir, n, kg);
    }
    let f = dir.join("f.txt");
    std::fs::write(&f, &files[2]).unwrap();
    let _ = read_distances(&f, n);
    let _ = read_parents(&f, n);
    let _ = dimacs::read_dimacs(&f);
    let g2 = dir.join("g2.gr");
    std::fs::write(&g2, &files[0]).unwrap();
    for z in [false, true] {
        let _ = dimacs::read_dimacs_objectives(&[f.as_path(), g2.as_path()], z);
    }
    std::fs::write(dir.join("raw.bin"), files.concat()).unwrap();
    let _ = cache::read_cache(&dir.join("raw.bin"));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn readers_never_panic(a in text(), b in text(), c in text(), n in 0usize..40) {
        let dir = scratch("fuzz");
        feed_all(&dir, &[a, b, c], n);
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn truncated_valid_files_never_panic(cut in 0usize..200, n in 1usize..6) {
        let dir = scratch("trunc");
        let rp = b"0 2 3\n3\n".to_vec();
        let full: [Vec<u8>; 3] = [rp, b"1 2\n0\n".to_vec(), b"3 1\n2 2\n1 1\n".to_vec()];
        let cut_files = full.map(|f| f[..cut.min(f.len())].to_vec());
        feed_all(&dir, &cut_files, n);
        std::fs::remove_dir_all(dir).ok();
    }
}

#[test]
fn huge_counts_are_rejected_without_allocating() {
    let dir = scratch("huge");
    let gr = dir.join("h.gr");
    std::fs::write(&gr, "p sp 2147483646 2147483647\n").unwrap();
    assert!(dimacs::read_dimacs(&gr).is_err());
    std::fs::write(&gr, "a 0 2147483645 1\n").unwrap();
    assert!(dimacs::read_dimacs(&gr).is_err());
    // A cache header claiming 2^31 - 1 vertices in a few bytes.
    let mut bytes = b"MOSPCSR2".to_vec();
    bytes.extend_from_slice(&0i64.to_le_bytes());
    bytes.extend_from_slice(&[0u8; 48]);
    bytes.extend_from_slice(&i32::MAX.to_le_bytes());
    bytes.extend_from_slice(&2i32.to_le_bytes());
    bytes.extend_from_slice(&i64::from(i32::MAX).to_le_bytes());
    std::fs::write(dir.join("c.bin"), &bytes).unwrap();
    assert!(cache::read_cache(&dir.join("c.bin")).is_err());
    std::fs::remove_dir_all(dir).ok();
}

/// A case's batch and trees are read alongside its graph, yet a case with several faults reports
/// the one a read in order meets first: the graph's, then the source's, then the batch's, then
/// the trees'.
#[test]
fn a_case_reports_its_first_fault_in_reading_order() {
    use dyng::io::driver::case::{read_mosp_inputs, CasePaths};
    let dir = std::env::temp_dir().join(format!("dyng-first-fault-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let (changes, init) = (dir.join("changes"), dir.join("init"));
    std::fs::create_dir_all(&changes).unwrap();
    std::fs::create_dir_all(init.join("obj0")).unwrap();
    let graph = dir.join("graph");
    let write = |name: &str, text: &str| std::fs::write(dir.join(name), text).unwrap();
    // A 3-vertex path 0 -> 1 -> 2, K = 1; no trees at all (both files missing).
    write("graphRowPtr.txt", "0 1 2 2\n");
    write("graphValues.txt", "1\n1\n");
    std::fs::write(changes.join("delete.txt"), "").unwrap();
    let paths = CasePaths { graph: &graph, changes: &changes, init: &init, cache: None };
    let fault = |source: usize| read_mosp_inputs(&paths, None, source).map(|_| ()).expect_err("a faulty case").to_string();
    // The graph's fault first: a head outside [0, n).
    write("graphColInd.txt", "1\n7\n");
    std::fs::write(changes.join("insert.txt"), "9 1 1\n").unwrap();
    assert!(fault(5).contains("CSR column index out of range"), "{}", fault(5));
    // Then the source's.
    write("graphColInd.txt", "1\n2\n");
    assert!(fault(5).contains("source 5 is outside"), "{}", fault(5));
    // Then the batch's, then the trees'.
    let batch = fault(0);
    assert!(batch.contains("insert.txt"), "{batch}");
    std::fs::write(changes.join("insert.txt"), "0 2 1\n").unwrap();
    let trees = fault(0);
    assert!(trees.contains("distancesOriginal.txt"), "{trees}");
    std::fs::remove_dir_all(&dir).ok();
}
