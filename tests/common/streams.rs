//! Deterministic graphs and batches of the worker tests, shared by the library's tests (through
//! tests/worker_util) and the CLI's (cli/tests/cli_worker_wide.rs), which compare the same streams.
#![allow(dead_code)]

use dyng::{Batch, Csr, WeightLayout};

/// A w x w grid (one objective's links) with `k` weight columns drawn from a small LCG.
pub fn wide_grid(w: usize, k: usize, seed: u64) -> Csr {
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

/// A deterministic mixed batch: `ins` insertions and `del` deletions of existing edges.
pub fn batch(g: &Csr, ins: usize, del: usize, seed: u64) -> Batch {
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
