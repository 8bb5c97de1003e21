//! The combined solve of a result that keeps no combined graph (`dyng mosp`), run over the rows
//! the trees were solved on, with no combined graph built.
//!
//! Edge p -> v of the combined graph is an edge of the updated graph whose tail p is v's parent
//! in some tree, weighted by the set of those trees. So a search can expand p by reading p's row
//! of the updated graph and keeping the heads whose parent p is; a build read the same rows to
//! write the combined ones, which the search then read again (on the 1000^2 grid the build took
//! about as long as the solve). Every combined weight is at least 1 and below [`RING`], so the
//! buckets of a ring of `RING` distances, taken in order, expand each vertex once, at its final
//! distance, after all of its tight in-neighbours: each vertex keeps the lowest-id one, the
//! canonical tree the engines' solve gives.
//!
//! A tree's parent edge missing from the updated graph (adopted trees are only trusted to hold
//! edges) would leave a combined edge out: the distinct edges the search met are counted against
//! those of the trees (a pass over the parents counts them), and the caller builds the graph from
//! the trees where they differ.

use super::combined_graph::{first_edge, unreached, weight_of, weights_by_mask, write_tails, MASK_TREES};
use crate::distance::DISTANCE_INF;
use crate::graph::MAX_OBJECTIVES;
use crate::sssp::dial::DialRing;
use crate::sssp::prefetch::prefetch;
use crate::sssp::run::OutView;
use crate::sssp::UpdateStats;

/// Distances in the ring of buckets: above every combined weight the solve takes.
const RING: usize = 64;

/// Bucket entries between the stages of asking for what an expansion reads.
const AHEAD: usize = 8;

/// Rows of at most this many edges count their parallel edges by looking back along the row;
/// longer ones through `RowsScratch::met`.
const SHORT_ROW: usize = 16;

/// The distance of a vertex not reached yet.
const UNSEEN: i32 = i32::MAX;

/// Scratch of [`solve_over_rows`] (pooled with the combine step's).
#[derive(Default)]
pub(crate) struct RowsScratch {
    ring: DialRing,
    /// A record per vertex: its parents and its distance so far.
    rec: Vec<i32>,
    /// The tail of the last edge into each vertex that the search counted from a row longer than
    /// [`SHORT_ROW`], so that parallel edges count once: a tail's row is read whole at its one
    /// expansion.
    met: Vec<i32>,
}

impl RowsScratch {
    pub(crate) fn bytes(&self) -> usize {
        4 * (self.met.capacity() + self.rec.capacity()) + self.ring.bytes()
    }
}

/// What [`solve_over_rows`] found besides the tree.
pub(crate) struct Solved {
    /// Edges of the combined graph, and the sum of their weights (its Delta's terms).
    pub edges: usize,
    pub weight_sum: i64,
    /// The largest finite distance.
    pub largest: i64,
    /// `pushes`: expansions; `iterations`: distances expanded; `affected`: vertices reached
    /// (all of them written afresh).
    pub stats: UpdateStats,
}

/// The canonical tree of the combined graph of `parents` (K trees, K from 1 to [`MASK_TREES`])
/// from `source`, into `dist`/`parent`, searched over `graph`'s rows; `None`, with
/// `dist`/`parent` overwritten, where it does not apply: a combined weight outside [1, RING),
/// rows guarded or of another size, or a tree's parent edge missing from `graph`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn solve_over_rows(
    graph: &OutView<'_>,
    parents: &[&[i32]],
    source: usize,
    terms: &[i64],
    base: i64,
    s: &mut RowsScratch,
    dist: &mut [i64],
    parent: &mut [i32],
) -> Option<Solved> {
    match parents.len() {
        1 => solve::<1>(graph, parents, source, terms, base, s, dist, parent),
        2 => solve::<2>(graph, parents, source, terms, base, s, dist, parent),
        3 => solve::<3>(graph, parents, source, terms, base, s, dist, parent),
        4 => solve::<4>(graph, parents, source, terms, base, s, dist, parent),
        _ => None,
    }
}

#[allow(clippy::too_many_arguments)]
fn solve<const K: usize>(
    graph: &OutView<'_>,
    parents: &[&[i32]],
    source: usize,
    terms: &[i64],
    base: i64,
    s: &mut RowsScratch,
    dist: &mut [i64],
    parent: &mut [i32],
) -> Option<Solved> {
    const { assert!(K <= MASK_TREES && MASK_TREES <= MAX_OBJECTIVES) };
    let n = dist.len();
    if graph.n != n || graph.guard.is_some() || parent.len() != n || parents.iter().any(|p| p.len() != n) || source >= n {
        return None;
    }
    let held: [&[i32]; K] = std::array::from_fn(|j| parents[j]);
    // An edge's weight by the set of trees that hold it, a bit each.
    let by_mask = weights_by_mask::<K>(terms, base);
    if by_mask[1..1 << K].iter().any(|w| !(1..RING as i64).contains(w)) {
        return None;
    }
    let by_mask = by_mask.map(|w| w as i32);
    // Every distance below n * RING fits the records' 32 bits.
    if (n as u64).saturating_mul(RING as u64) >= UNSEEN as u64 {
        return None;
    }
    // A record per vertex: its K parents, then its distance so far, in one cache line (the
    // search reads all of them for every head of a row it expands). The trees' edges are
    // counted as the build counts them.
    // K parents and the distance, in a power of two of words: a record never straddles lines.
    const STRIDE_OF: [usize; MASK_TREES + 1] = [1, 2, 4, 4, 8];
    let stride_k = STRIDE_OF[K];
    s.rec.clear();
    s.rec.resize(n * stride_k, UNSEEN);
    s.met.clear();
    s.met.resize(n, -1);
    let (mut edges, mut weight_sum) = (0usize, 0i64);
    let mut tails = [0i32; K];
    for v in 0..n {
        parent[v] = -1;
        let rec = &mut s.rec[v * stride_k..v * stride_k + K];
        for j in 0..K {
            rec[j] = held[j][v];
        }
        if v == source || unreached(&held, v) {
            continue;
        }
        write_tails(&held, v, source, &mut tails);
        for j in 0..K {
            if first_edge(&tails, j, v) {
                edges += 1;
                weight_sum += weight_of(&tails, tails[j], terms, base) as i64;
            }
        }
    }
    s.ring.reset(RING);
    let rec = &mut s.rec[..];
    rec[source * stride_k + K] = 0;
    s.ring.push(source as u32, 0);
    let mut met = 0usize;
    let mut stats = UpdateStats { packed_parents: true, ..Default::default() };
    let (mut d, mut largest) = (0i32, 0i32);
    let (bounds, stride) = (graph.bounds, graph.stride);
    while let Some(next) = s.ring.next(d as u64) {
        d = next as i32;
        stats.iterations += 1;
        let bucket = s.ring.take(d as u64);
        for (i, &v) in bucket.iter().enumerate() {
            // Three stages ahead: an entry's row bounds and record, then its row's heads, then
            // the heads' records.
            if let Some(&u) = bucket.get(i + 2 * AHEAD) {
                prefetch(&bounds[u as usize * stride]);
                prefetch(&rec[u as usize * stride_k]);
            }
            if let Some(&u) = bucket.get(i + AHEAD) {
                if let Some(h) = graph.col.get(graph.unchecked_row(u as usize).start) {
                    prefetch(h);
                }
            }
            if let Some(&u) = bucket.get(i + AHEAD / 2) {
                for &h in &graph.col[graph.unchecked_row(u as usize)] {
                    prefetch(&rec[h as usize * stride_k]);
                }
            }
            let v = v as usize;
            // An entry left behind when v was queued again at a lower distance.
            if rec[v * stride_k + K] != d {
                continue;
            }
            stats.pushes += 1;
            largest = d;
            let me = v as i32;
            let row = &graph.col[graph.unchecked_row(v)];
            // The heads of a short row counted so far, to count parallel edges once without
            // `met`, whose load per edge missed the cache (a quarter of the solve's samples).
            let (mut seen, mut counted) = ([0i32; SHORT_ROW], 0);
            for &h in row {
                let hu = h as usize;
                let r = &mut rec[hu * stride_k..hu * stride_k + stride_k];
                let m = (0..K).fold(0usize, |m, j| m | (((r[j] == me) as usize) << j));
                if m == 0 || hu == v || hu == source {
                    continue;
                }
                if row.len() <= SHORT_ROW {
                    if !seen[..counted].contains(&h) {
                        seen[counted] = h;
                        counted += 1;
                        met += 1;
                    }
                } else if s.met[hu] != me {
                    s.met[hu] = me;
                    met += 1;
                }
                let nd = d + by_mask[m];
                if nd < r[K] {
                    r[K] = nd;
                    parent[hu] = me;
                    s.ring.push(h as u32, nd as u64);
                } else if nd == r[K] && me < parent[hu] {
                    parent[hu] = me;
                }
            }
        }
        s.ring.put(d as u64, bucket);
    }
    // A tree edge the rows lack: the graph of the trees differs from the one searched.
    if met != edges {
        return None;
    }
    for (v, x) in dist.iter_mut().enumerate() {
        let d = rec[v * stride_k + K];
        *x = if d == UNSEEN { DISTANCE_INF } else { d as i64 };
    }
    stats.affected = stats.pushes;
    Some(Solved { edges, weight_sum, largest: largest as i64, stats })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::generators::rng::Mt19937;

    /// The canonical tree of the combined graph by its definition: edge (p, v) iff p is v's
    /// parent in some tree, weighing base minus those trees' terms; Dijkstra, ties to the lowest
    /// parent. Also the edges and their weight sum.
    fn by_definition(trees: &[Vec<i32>], source: usize, terms: &[i64], base: i64) -> (Vec<i64>, Vec<i32>, usize, i64) {
        let n = trees[0].len();
        let mut out: Vec<Vec<(usize, i64)>> = vec![Vec::new(); n];
        let (mut edges, mut sum) = (0, 0);
        for v in (0..n).filter(|&v| v != source) {
            let mut ps: Vec<i32> = trees.iter().map(|t| t[v]).filter(|&p| p >= 0 && p != v as i32).collect();
            ps.sort_unstable();
            ps.dedup();
            for p in ps {
                let w = base - trees.iter().zip(terms).filter(|(t, _)| t[v] == p).map(|(_, &x)| x).sum::<i64>();
                out[p as usize].push((v, w));
                edges += 1;
                sum += w;
            }
        }
        let (mut dist, mut parent) = (vec![DISTANCE_INF; n], vec![-1i32; n]);
        let mut done = vec![false; n];
        dist[source] = 0;
        let mut heap = std::collections::BinaryHeap::new();
        heap.push(std::cmp::Reverse((0i64, source)));
        while let Some(std::cmp::Reverse((d, u))) = heap.pop() {
            if done[u] || d != dist[u] {
                continue;
            }
            done[u] = true;
            for &(v, w) in &out[u] {
                if (d + w, u as i32) < (dist[v], if dist[v] == DISTANCE_INF { i32::MAX } else { parent[v] }) {
                    if d + w < dist[v] {
                        heap.push(std::cmp::Reverse((d + w, v)));
                    }
                    dist[v] = d + w;
                    parent[v] = u as i32;
                }
            }
        }
        (dist, parent, edges, sum)
    }

    /// K trees rooted at `source` over a random order of the vertices (a parent comes earlier in
    /// it), some vertices reached by none; and the rows of a graph holding their edges, as the
    /// combined graph's tests make them (parallel edges, self-loops, other edges, a long row).
    fn case(rng: &mut Mt19937, n: usize, k: usize, source: usize) -> (Vec<Vec<i32>>, Vec<i32>, Vec<i32>) {
        let mut order: Vec<usize> = (0..n).filter(|&v| v != source).collect();
        for i in (1..order.len()).rev() {
            order.swap(i, rng.next_u32() as usize % (i + 1));
        }
        order.insert(0, source);
        let reached: Vec<bool> = (0..n).map(|v| v == source || !rng.next_u32().is_multiple_of(7)).collect();
        let mut trees = vec![vec![-1i32; n]; k];
        for (i, &v) in order.iter().enumerate().skip(1) {
            if !reached[v] {
                continue;
            }
            for t in trees.iter_mut() {
                // Among the last few reached before v (trees that often agree), or any earlier.
                let pick = |r: u32| order[i - 1 - (r as usize % i.min(if r.is_multiple_of(3) { i } else { 3 }))];
                let mut p = pick(rng.next_u32());
                while !reached[p] {
                    p = pick(rng.next_u32());
                }
                t[v] = p as i32;
            }
        }
        let (row_ptr, col) = super::super::combined_graph::tests::graph_of(rng, &trees, source);
        (trees, row_ptr, col)
    }

    #[test]
    fn over_the_rows_it_is_the_canonical_tree_of_the_combined_graph() {
        let mut rng = Mt19937::new(31);
        let mut s = RowsScratch::default();
        for round in 0..40 {
            let k = 1 + round % MASK_TREES;
            let (n, source) = (50 + rng.next_u32() as usize % 400, rng.next_u32() as usize % 50);
            // Unit preferences (weights 1 to K), then others (weights up to base - 1).
            let terms: Vec<i64> = (0..k).map(|j| if round % 2 == 0 { 1 } else { 1 + (j as i64 * 7 + round as i64) % 5 }).collect();
            let base = terms.iter().sum::<i64>() + 1 + (round as i64 % 3);
            let (trees, row_ptr, col) = case(&mut rng, n, k, source);
            let w = vec![1; col.len()];
            let graph = OutView { bounds: &row_ptr, stride: 1, n, col: &col, w: &w, edges: col.len(), guard: None };
            let parents: Vec<&[i32]> = trees.iter().map(Vec::as_slice).collect();
            let (mut dist, mut parent) = (vec![7i64; n], vec![7i32; n]);
            let got = solve_over_rows(&graph, &parents, source, &terms, base, &mut s, &mut dist, &mut parent).expect("every tree edge is in the rows");
            let (want_dist, want_parent, edges, sum) = by_definition(&trees, source, &terms, base);
            let what = format!("round {round}: K = {k}, n = {n}");
            assert_eq!(dist, want_dist, "{what}");
            assert_eq!(parent, want_parent, "{what}");
            assert_eq!((got.edges, got.weight_sum), (edges, sum), "{what}");
            let reached = want_dist.iter().filter(|&&d| d != DISTANCE_INF).count();
            assert_eq!(got.stats.pushes as usize, reached, "{what}: each vertex expanded once");
            assert_eq!(got.largest, *want_dist.iter().filter(|&&d| d != DISTANCE_INF).max().unwrap(), "{what}");
            // A tree edge the rows lack: refused, the caller builds from the trees.
            let v = (0..n).find(|&v| v != source && trees[k - 1][v] >= 0).unwrap();
            let p = trees[k - 1][v] as usize;
            let mut cut = col.clone();
            for h in &mut cut[row_ptr[p] as usize..row_ptr[p + 1] as usize] {
                if *h == v as i32 {
                    *h = p as i32; // a self-loop in its place
                }
            }
            let graph = OutView { col: &cut, ..graph };
            assert!(solve_over_rows(&graph, &parents, source, &terms, base, &mut s, &mut dist, &mut parent).is_none(), "{what}");
        }
    }

    #[test]
    fn weights_past_the_ring_are_left_to_the_build() {
        let mut rng = Mt19937::new(4);
        let (trees, row_ptr, col) = case(&mut rng, 60, 2, 0);
        let n = 60;
        let w = vec![1; col.len()];
        let graph = OutView { bounds: &row_ptr, stride: 1, n, col: &col, w: &w, edges: col.len(), guard: None };
        let parents: Vec<&[i32]> = trees.iter().map(Vec::as_slice).collect();
        let (mut dist, mut parent) = (vec![0i64; n], vec![0i32; n]);
        let mut s = RowsScratch::default();
        // An edge of one tree weighs base - 1: RING - 1 is taken, RING is not.
        assert!(solve_over_rows(&graph, &parents, 0, &[1, 1], RING as i64, &mut s, &mut dist, &mut parent).is_some());
        assert!(solve_over_rows(&graph, &parents, 0, &[1, 1], RING as i64 + 1, &mut s, &mut dist, &mut parent).is_none());
    }
}
