//! Every K the library accepts works the same through `dyng mosp --isolation worker` as in
//! process (tests/worker_wide.rs checks the Rust client and the C ABI): K = 40 gives the same
//! files either way.

#[path = "../../tests/common/mod.rs"]
mod common;
mod support;

use dyng::{Batch, Csr, WeightLayout};
use std::path::Path;

/// A w x w grid (one objective's links) with `k` weight columns drawn from a small LCG (as
/// tests/worker_wide.rs makes it).
fn wide_grid(w: usize, k: usize, seed: u64) -> Csr {
    let t = dyng::io::generators::graphgen::grid(w, w, 1, 1, 9, seed as u32).unwrap();
    let mut s = seed;
    let weights: Vec<i32> = (0..t.col_ind.len() * k)
        .map(|_| {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            1 + ((s >> 33) % 50) as i32
        })
        .collect();
    Csr::from_arrays(t.n, k, t.row_ptr, t.col_ind, &weights, WeightLayout::EdgeMajor).unwrap()
}

fn prefs(k: usize) -> Vec<u32> {
    (0..k).map(|j| 1 + (j % 2) as u32).collect()
}

/// A deterministic mixed batch: `ins` insertions and `del` deletions of existing edges (as
/// tests/worker_util makes it).
fn batch(g: &Csr, ins: usize, del: usize, seed: u64) -> Batch {
    let mut s = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    let mut next = move || {
        s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (s >> 33) as usize
    };
    let (n, k) = (g.n(), g.k());
    let mut b = Batch::new(k);
    for _ in 0..ins {
        let w: Vec<i32> = (0..k).map(|_| 1 + (next() % 100) as i32).collect();
        b.insert((next() % n) as i32, (next() % n) as i32, &w);
    }
    for _ in 0..del {
        let u = next() % n;
        let r = g.row(u);
        if !r.is_empty() {
            let e = r.start + next() % r.len();
            b.delete(u as i32, g.col_ind()[e]);
        }
    }
    b
}

#[test]
fn dyng_mosp_through_the_worker_takes_every_k() {
    let dir = std::env::temp_dir().join(format!("dyng-wide-cli-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let k = 40;
    let g = wide_grid(6, k, 9);
    let case = common::write_mosp_case(&dir, &g, &batch(&g, 8, 8, 77), &prefs(k));
    let worker = support::worker();
    let run = |isolation: &str| {
        let out = dir.join(format!("out-{isolation}"));
        let o = common::mosp_command(Path::new(env!("CARGO_BIN_EXE_dyng")), &case, &out)
            .args(["--backend", "sequential", "--isolation", isolation])
            .env("DYNG_WORKER", &worker)
            .output()
            .unwrap();
        assert!(o.status.success(), "--isolation {isolation}: {}", String::from_utf8_lossy(&o.stderr));
        out
    };
    let (a, b) = (run("in-process"), run("worker"));
    for rel in ["combinedGraph/distancesCsr.txt", "combinedGraph/SSSPTreeCsr.txt", "combinedGraph/mospCosts.txt", "obj39/SSSPTreeUpdated.txt", "obj0/distancesUpdated.txt"] {
        assert_eq!(std::fs::read(a.join(rel)).unwrap(), std::fs::read(b.join(rel)).unwrap(), "{rel}");
    }
    std::fs::remove_dir_all(dir).unwrap();
}
