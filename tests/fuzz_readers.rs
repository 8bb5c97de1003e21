//! Proptest harnesses, one per reader, and one over mutated golden cases: whatever bytes a file
//! holds, a reader returns a graph, a batch, a tree or an error that is not `Internal`, and never
//! panics; a damaged cache is never used; a mutated case runs through adoption and an update or
//! fails with a clear error. `DYNG_FUZZ_CASES` cases each (default 256; a soak:
//! `DYNG_FUZZ_CASES=20000 cargo test --release --test fuzz_readers`).

mod common;

use dyng::io::{driver::case, formats::{batch_files, cache, csr_text, dimacs, mtx, trees}};
use dyng::{ErrorKind, MospResult, Resources, SsspOptions, SsspResult};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use std::path::{Path, PathBuf};

fn cases() -> u32 {
    std::env::var("DYNG_FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(256)
}

/// Runs `body` on `cases()` inputs from `strategy` in a fresh scratch folder each.
fn fuzz<S: Strategy>(name: &str, strategy: S, body: impl Fn(&Path, S::Value))
where
    S::Value: std::fmt::Debug,
{
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!("dyng-fuzz-{}-{name}-{}", std::process::id(), NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)));
    let mut runner = TestRunner::new(Config { cases: cases(), failure_persistence: None, ..Config::default() });
    let out = runner.run(&strategy, |v| {
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        body(&dir, v);
        Ok(())
    });
    let _ = std::fs::remove_dir_all(&dir);
    if let Err(e) = out {
        panic!("{name}: {e}");
    }
}

/// An error a reader may give for bad bytes: anything but a broken invariant.
#[track_caller]
fn clean<T>(r: dyng::Result<T>, what: &str) -> Option<T> {
    match r {
        Ok(v) => Some(v),
        Err(e) => {
            assert_ne!(e.kind(), ErrorKind::Internal, "{what}: {e}");
            None
        }
    }
}

/// Text that looks like the formats (numbers, signs, keywords, blanks) or is any bytes.
fn text() -> impl Strategy<Value = Vec<u8>> {
    let token = prop_oneof![
        (0u32..40).prop_map(|v| v.to_string()),
        proptest::sample::select(vec!["-1", "0", "2147483647", "2147483648", "99999999999999999999", "INF", "a", "p", "sp", "c", "%", "%%MatrixMarket", "matrix", "coordinate", "pattern", "symmetric", "general", "+3", "1e5"])
            .prop_map(str::to_string),
        proptest::sample::select(vec![" ", "\t", "\n", "\r\n", "\n\n"]).prop_map(str::to_string),
    ];
    prop_oneof![
        prop::collection::vec(any::<u8>(), 0..200),
        prop::collection::vec(token.clone(), 0..80).prop_map(|t| t.join(" ").into_bytes()),
        prop::collection::vec(token, 0..80).prop_map(|t| t.concat().into_bytes()),
    ]
}

#[test]
fn fuzz_csr_triplet() {
    fuzz("csr", (text(), text(), text()), |dir, (a, b, c)| {
        let prefix = dir.join("g");
        for (p, bytes) in csr_text::triplet_paths(&prefix).iter().zip([a, b, c]) {
            std::fs::write(p, bytes).unwrap();
        }
        clean(csr_text::read_csr_triplet(&prefix), "read_csr_triplet");
    });
}

#[test]
fn fuzz_batch_folder() {
    fuzz("batch", (text(), text(), 0usize..30, 0usize..4), |dir, (ins, del, n, kg)| {
        std::fs::write(dir.join("insert.txt"), ins).unwrap();
        std::fs::write(dir.join("delete.txt"), del).unwrap();
        clean(batch_files::read_batch_dir(dir, n, kg), "read_batch_dir");
    });
}

#[test]
fn fuzz_trees() {
    fuzz("trees", (text(), 0usize..30), |dir, (bytes, n)| {
        let f = dir.join("t.txt");
        std::fs::write(&f, bytes).unwrap();
        clean(trees::read_distances(&f, n), "read_distances");
        clean(trees::read_parents(&f, n), "read_parents");
    });
}

#[test]
fn fuzz_dimacs() {
    fuzz("dimacs", (text(), text(), any::<bool>()), |dir, (a, b, zero)| {
        let (f, g) = (dir.join("a.gr"), dir.join("b.gr"));
        std::fs::write(&f, a).unwrap();
        std::fs::write(&g, b).unwrap();
        clean(dimacs::read_dimacs(&f), "read_dimacs");
        clean(dimacs::read_dimacs_objectives(&[f.as_path(), g.as_path()], zero), "read_dimacs_objectives");
    });
}

#[test]
fn fuzz_matrix_market() {
    let header = prop_oneof![
        Just(b"%%MatrixMarket matrix coordinate pattern general\n".to_vec()),
        Just(b"%%MatrixMarket matrix coordinate real symmetric\n".to_vec()),
        Just(Vec::new()),
    ];
    fuzz("mtx", (header, text(), 0usize..5, -3i32..5, 0i32..200, any::<u32>()), |dir, (h, body, k, lo, hi, seed)| {
        let f = dir.join("m.mtx");
        std::fs::write(&f, [h, body].concat()).unwrap();
        clean(mtx::mtx_to_csr(&f, k, lo, hi, seed), "mtx_to_csr");
    });
}

/// A valid cache with random edits is never used as a graph other than the text's.
#[test]
fn fuzz_cache() {
    let edit = (any::<prop::sample::Index>(), prop_oneof![Just(0u8), Just(1), Just(2), Just(3)], any::<u8>());
    fuzz("cache", (prop::collection::vec(edit, 1..4), 2usize..7), |dir, (edits, side)| {
        let t = dyng::io::generators::graphgen::grid(side, side, 2, 1, 9, side as u32).unwrap();
        let prefix = dir.join("g");
        csr_text::write_csr_triplet(&prefix, &t).unwrap();
        let c = dir.join("g.bin");
        cache::load_or_parse(&c, &prefix).unwrap();
        let good = std::fs::read(&c).unwrap();
        let mut bytes = good.clone();
        for (at, kind, v) in edits {
            let i = at.index(bytes.len().max(1));
            match kind {
                0 if !bytes.is_empty() => bytes[i] ^= v | 1,
                1 => bytes.insert(i.min(bytes.len()), v),
                2 if !bytes.is_empty() => {
                    bytes.remove(i);
                }
                _ => bytes.truncate(i),
            }
        }
        std::fs::write(&c, &bytes).unwrap();
        let raw = clean(cache::read_cache(&c), "read_cache");
        assert!(raw.is_none() || bytes == good, "an edited cache was read");
        let l = cache::load_or_parse(&c, &prefix).unwrap();
        assert_eq!(l.graph, t);
    });
}

/// Golden cases with random edits of one of their files run through the drop-in driver's steps
/// (read, adopt the trees, combine, update) or fail with a clear error.
#[test]
fn fuzz_mutated_golden_cases() {
    let golden: Vec<common::Case> = common::cases(&common::local_golden().join("small")).into_iter().filter(|c| !c.is_error()).collect();
    let edit = (any::<prop::sample::Index>(), 0u8..4, prop_oneof![any::<u8>(), proptest::sample::select(b"0123456789 -\n".to_vec())]);
    let s = (any::<prop::sample::Index>(), any::<prop::sample::Index>(), prop::collection::vec(edit, 1..4));
    let res = Resources::sequential();
    fuzz("golden", s, |dir, (which, file, edits)| {
        let case = &golden[which.index(golden.len())];
        let mut files: Vec<(PathBuf, PathBuf)> = Vec::new();
        for (from, to) in csr_text::triplet_paths(&case.graph).into_iter().zip(csr_text::triplet_paths(&dir.join("graph"))) {
            files.push((from, to));
        }
        for f in ["insert.txt", "delete.txt"] {
            files.push((case.changes.join(f), dir.join("changes").join(f)));
        }
        let mut objs: Vec<PathBuf> = std::fs::read_dir(&case.init).unwrap().flatten().map(|e| e.path()).collect();
        objs.sort();
        for obj in objs {
            let name = obj.file_name().unwrap().to_owned();
            for f in ["distancesOriginal.txt", "SSSPTreeOriginal.txt"] {
                files.push((obj.join(f), dir.join("init").join(&name).join(f)));
            }
        }
        let victim = file.index(files.len());
        for (i, (from, to)) in files.iter().enumerate() {
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            let mut bytes = std::fs::read(from).unwrap_or_default();
            if i == victim {
                for (at, kind, v) in &edits {
                    let at = at.index(bytes.len().max(1));
                    match kind {
                        0 if !bytes.is_empty() => bytes[at] = *v,
                        1 => bytes.insert(at.min(bytes.len()), *v),
                        2 if !bytes.is_empty() => {
                            bytes.remove(at);
                        }
                        _ => bytes.truncate(at),
                    }
                }
            }
            std::fs::write(to, bytes).unwrap();
        }
        let paths = case::CasePaths { graph: &dir.join("graph"), changes: &dir.join("changes"), init: &dir.join("init"), cache: None };
        let Some(mut inp) = clean(case::read_mosp_inputs(&paths, case.k, case.source), "read_mosp_inputs") else { return };
        let opt = SsspOptions { fallback: dyng::Fallback::AdaptiveCounted, ..Default::default() };
        let trees: Option<Vec<SsspResult>> = std::mem::take(&mut inp.init)
            .into_iter()
            .enumerate()
            .map(|(j, (d, p))| clean(SsspResult::from_arrays(&inp.graph, inp.source, j, d, p, case.canonicalize, &opt), "from_arrays"))
            .collect();
        let Some(trees) = trees else { return };
        let Some(mut m) = clean(MospResult::from_trees(&res, &inp.graph, inp.source, trees, &case.pref), "from_trees") else { return };
        clean(dyng::update(&res, &mut inp.graph, &inp.batch.view(), &mut [(&mut m).into()]), "update");
    });
}
