//! The resident graph against a literal oracle of the originals' batch semantics: long random
//! streams of insertions, deletions, upserts, parallel edges, self-loops and disconnections, the
//! graph compared after every batch with the CSR the semantics give (rebuilt from scratch), its
//! in-rows with the reverse of that CSR, the weight-increase masks, and the results of every
//! engine with fresh ones.

use dyng::graph::dijkstra::dijkstra;
use dyng::io::generators::rng::Mt19937;
use dyng::{Batch, Csr, Fallback, Graph, MospOptions, MospResult, Resources, SsspOptions, SsspResult};

/// Rows of (head, weights), changed as the originals' apply does, written the plain way.
#[derive(Clone)]
struct Oracle {
    k: usize,
    rows: Vec<Vec<(i32, Vec<i32>)>>,
}

impl Oracle {
    fn of(g: &Csr) -> Self {
        let rows = (0..g.n())
            .map(|u| g.row(u).map(|e| (g.col_ind()[e], (0..g.k()).map(|j| g.column(j)[e]).collect())).collect())
            .collect();
        Oracle { k: g.k(), rows }
    }

    /// Deletions first (first copy), then upserts in batch order; the masks compare each
    /// insertion's pair's first copy before the batch with its first copy after it.
    fn apply(&mut self, b: &Batch) -> Vec<u64> {
        let before = self.rows.clone();
        for i in 0..b.num_deletions() {
            let row = &mut self.rows[b.del_src[i] as usize];
            if let Some(p) = row.iter().position(|x| x.0 == b.del_dst[i]) {
                row.remove(p);
            }
        }
        for i in 0..b.num_insertions() {
            let w = b.ins_weights[i * self.k..(i + 1) * self.k].to_vec();
            let row = &mut self.rows[b.ins_src[i] as usize];
            match row.iter_mut().find(|x| x.0 == b.ins_dst[i]) {
                Some(x) => x.1 = w,
                None => row.push((b.ins_dst[i], w)),
            }
        }
        (0..b.num_insertions())
            .map(|i| {
                let (u, v) = (b.ins_src[i] as usize, b.ins_dst[i]);
                let old = before[u].iter().find(|x| x.0 == v);
                let new = self.rows[u].iter().find(|x| x.0 == v).expect("an inserted edge exists");
                old.map_or(0, |o| (0..self.k).filter(|&j| new.1[j] > o.1[j]).fold(0, |m, j| m | 1u64 << j))
            })
            .collect()
    }

    fn csr(&self) -> Csr {
        let (mut src, mut dst, mut w) = (Vec::new(), Vec::new(), Vec::new());
        for (u, row) in self.rows.iter().enumerate() {
            for (v, ws) in row {
                src.push(u as i32);
                dst.push(*v);
                w.extend_from_slice(ws);
            }
        }
        Csr::from_edges(self.rows.len(), self.k, &src, &dst, &w).unwrap()
    }

    /// Per head, the (tail, weights) of its in-edges, by tail, the copies of one edge in their
    /// row order: what an in-row promises.
    fn reverse(&self) -> Vec<Vec<(i32, Vec<i32>)>> {
        let mut rev = vec![Vec::new(); self.rows.len()];
        for (u, row) in self.rows.iter().enumerate() {
            for (v, w) in row {
                rev[*v as usize].push((u as i32, w.clone()));
            }
        }
        rev
    }
}

fn in_rows_by_tail(g: &Graph) -> Vec<Vec<(i32, Vec<i32>)>> {
    let r = g.in_rows();
    (0..g.n())
        .map(|v| {
            let mut row: Vec<(i32, Vec<i32>)> = r.row(v).map(|s| (r.heads()[s], (0..g.k()).map(|j| r.column(j)[s]).collect())).collect();
            row.sort_by_key(|e| e.0);
            row
        })
        .collect()
}

/// A random batch on a graph of `n` vertices: deletions of existing edges and of absent pairs,
/// upserts of existing edges (reweights), new edges, repeated pairs, self-loops; sometimes a whole
/// vertex cut off.
fn batch(rng: &mut Mt19937, o: &Oracle, n: usize, wmax: u32) -> Batch {
    let mut r = |m: u32| rng.next_u32() % m.max(1);
    let k = o.k;
    let mut b = Batch::new(k);
    let w = |r: &mut dyn FnMut(u32) -> u32| (0..k).map(|_| 1 + r(wmax) as i32).collect::<Vec<_>>();
    for _ in 0..r(12) {
        let u = r(n as u32) as usize;
        match (r(5), o.rows[u].is_empty()) {
            (0, _) => b.delete(u as i32, r(n as u32) as i32),
            (1 | 2, false) => {
                let v = o.rows[u][r(o.rows[u].len() as u32) as usize].0;
                b.delete(u as i32, v);
            }
            (3, false) => {
                let v = o.rows[u][r(o.rows[u].len() as u32) as usize].0;
                let ws = w(&mut r);
                b.insert(u as i32, v, &ws);
            }
            _ => {
                let v = if r(10) == 0 { u as i32 } else { r(n as u32) as i32 };
                let ws = w(&mut r);
                b.insert(u as i32, v, &ws);
                if r(4) == 0 {
                    let ws = w(&mut r);
                    b.insert(u as i32, v, &ws);
                }
            }
        }
    }
    if r(15) == 0 {
        // A closure of every road out of one vertex.
        let u = r(n as u32) as usize;
        for (v, _) in &o.rows[u] {
            b.delete(u as i32, *v);
        }
    }
    b
}

fn random_csr(rng: &mut Mt19937, n: usize, m: usize, k: usize, wmax: u32) -> Csr {
    let mut r = |x: u32| rng.next_u32() % x;
    let src: Vec<i32> = (0..m).map(|_| r(n as u32) as i32).collect();
    let dst: Vec<i32> = (0..m).map(|_| r(n as u32) as i32).collect();
    let w: Vec<i32> = (0..m * k).map(|_| 1 + r(wmax) as i32).collect();
    Csr::from_edges(n, k, &src, &dst, &w).unwrap()
}

#[test]
fn long_streams_keep_the_originals_csr_and_in_rows() {
    for (seed, n, k) in [(1u32, 8usize, 1usize), (2, 40, 2), (3, 200, 3), (4, 25, 4)] {
        let mut rng = Mt19937::new(seed);
        let csr = random_csr(&mut rng, n, 3 * n, k, 20);
        let mut oracle = Oracle::of(&csr);
        let mut g = Graph::new(csr);
        let _ = g.in_rows();
        for step in 0..600 {
            let b = batch(&mut rng, &oracle, n, 20);
            let masks = g.apply(&b.view()).unwrap();
            assert_eq!(masks, oracle.apply(&b), "seed {seed} step {step}: masks");
            assert_eq!(g.to_csr(), oracle.csr(), "seed {seed} step {step}");
            assert_eq!(g.m(), oracle.csr().m());
            if step % 7 == 0 {
                assert_eq!(in_rows_by_tail(&g), oracle.reverse(), "seed {seed} step {step}: in-rows");
                let c = oracle.csr();
                for j in 0..k {
                    assert_eq!(g.max_weight(j), c.max_weight(j), "seed {seed} step {step}: largest weight");
                    assert_eq!(g.weight_sum(j), c.weight_sum(j), "seed {seed} step {step}: weight sum");
                }
            }
        }
        // (The 8-vertex graph stays below the few dozen unused slots any graph may keep.)
        if n >= 25 {
            assert!(g.compactions() >= 3, "seed {seed}: {} compactions in the stream", g.compactions());
        }
    }
}

#[test]
fn a_rejected_batch_leaves_the_graph_as_it_was() {
    let mut rng = Mt19937::new(9);
    let csr = random_csr(&mut rng, 30, 90, 2, 20);
    let mut oracle = Oracle::of(&csr);
    let mut g = Graph::new(csr);
    let _ = g.in_rows();
    for step in 0..50 {
        let b = batch(&mut rng, &oracle, 30, 20);
        // Valid changes first, then one bad one: nothing of the batch may land.
        let mut bad = b.clone();
        bad.insert(1, 30, &[1, 1]);
        let (rows, in_rows, version, bytes) = (g.to_csr(), in_rows_by_tail(&g), g.version(), g.bytes());
        let ptrs = (g.rows().heads().as_ptr(), g.in_rows().heads().as_ptr());
        assert!(g.apply(&bad.view()).unwrap_err().to_string().contains("outside"));
        assert_eq!((g.to_csr(), in_rows_by_tail(&g), g.version(), g.bytes()), (rows, in_rows, version, bytes), "step {step}");
        assert_eq!((g.rows().heads().as_ptr(), g.in_rows().heads().as_ptr()), ptrs);
        g.apply(&b.view()).unwrap();
        oracle.apply(&b);
        assert_eq!(g.to_csr(), oracle.csr());
    }
}

#[test]
fn results_follow_the_stream_on_every_engine() {
    // Trees of one graph through a stream that crosses the compaction threshold several times,
    // against fresh results and the Dijkstra oracle, on every engine and thread count.
    let engines = [Resources::sequential(), Resources::parallel(1).unwrap(), Resources::parallel(2).unwrap()];
    for (e, res) in engines.iter().enumerate() {
        let mut rng = Mt19937::new(20 + e as u32);
        let (n, k) = (300, 2);
        let csr = random_csr(&mut rng, n, 4 * n, k, 50);
        let mut oracle = Oracle::of(&csr);
        let mut g = Graph::new(csr);
        let opt = MospOptions::default();
        let mut mosp = MospResult::compute(res, &g, 0, &opt).unwrap();
        let sopt = SsspOptions { fallback: Fallback::Never, ..Default::default() };
        let mut sssp = SsspResult::compute(res, &g, 5, 1, &sopt).unwrap();
        for step in 0..150 {
            let b = batch(&mut rng, &oracle, n, 50);
            oracle.apply(&b);
            dyng::update(res, &mut g, &b.view(), &mut [(&mut mosp).into(), (&mut sssp).into()]).unwrap();
            let (d, p) = dijkstra(&g, 1, 5);
            assert_eq!((sssp.distances(), sssp.parents()), (&d[..], &p[..]), "engine {e} step {step}");
            let fresh = MospResult::compute(res, &g, 0, &opt).unwrap();
            assert_eq!(mosp.combined_distances(), fresh.combined_distances(), "engine {e} step {step}");
            assert_eq!(mosp.combined_parents(), fresh.combined_parents(), "engine {e} step {step}");
            assert_eq!(mosp.path_costs(), fresh.path_costs(), "engine {e} step {step}");
        }
        assert_eq!(g.to_csr(), oracle.csr());
        assert!(g.compactions() >= 2, "engine {e}: {} compactions", g.compactions());
    }
}


/// A graph fresh from a CSR holds the compact arrays of its out-rows and in-rows plus, per side,
/// a second bound per row (4 bytes per vertex) and the room at the end (1/32 of the edges and 16
/// slots, each a head and K weights): nothing more, whatever capacity the CSR's arrays had.
#[test]
fn a_fresh_graph_holds_the_compact_arrays_plus_its_bounds_and_room() {
    for (side, k) in [(40, 3), (200, 1), (300, 2)] {
        let t = dyng::io::generators::graphgen::grid(side, side, k, 1, 100, 7).unwrap();
        let csr = Csr::from_arrays(t.n, t.k, t.row_ptr, t.col_ind, &t.weights, dyng::WeightLayout::EdgeMajor).unwrap();
        let (n, m) = (csr.n(), csr.m());
        let g = Graph::new(csr);
        let _ = g.in_rows();
        let compact = 2 * 4 * (n + 1 + m * (k + 1));
        let room = 2 * 4 * (m / 32 + 16) * (k + 1);
        let bound = compact + 2 * 4 * (n - 1) + room;
        assert!(g.bytes() <= bound, "grid {side}^2, K = {k}: {} bytes, at most {bound} expected (compact {compact})", g.bytes());
    }
}

#[test]
fn a_batch_that_takes_every_edge_leaves_the_edgeless_largest_weight() {
    // One edge of weight 766: deleted, the graph is edgeless and its largest weight is 1, as a
    // graph built edgeless has it (and its CSR the same column facts).
    let csr = Csr::from_arrays(2, 1, vec![0, 1, 1], vec![1], &[766], dyng::WeightLayout::EdgeMajor).unwrap();
    let mut g = Graph::new(csr);
    assert_eq!(g.max_weight(0), 766);
    let mut b = Batch::new(1);
    b.delete(0, 1);
    dyng::update(&Resources::sequential(), &mut g, &b.view(), &mut []).unwrap();
    assert_eq!((g.m(), g.max_weight(0)), (0, 1));
    let empty = Csr::from_arrays(2, 1, vec![0, 0, 0], vec![], &[], dyng::WeightLayout::EdgeMajor).unwrap();
    assert_eq!(Graph::new(g.to_csr()).max_weight(0), Graph::new(empty).max_weight(0));
}
