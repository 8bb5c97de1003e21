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
//! canonical tree the engines' solve gives. The K parents and distance of each vertex are kept
//! in one record ([`Dense`]), unless the trees reach a small part of the graph ([`Sparse`]).
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
    /// A record per vertex: its parents and its distance so far (see [`Dense`]).
    rec: Vec<i32>,
    /// The tail of the last edge into each vertex that the search counted from a row longer than
    /// [`SHORT_ROW`], so that parallel edges count once: a tail's row is read whole at its one
    /// expansion. Empty until a search meets such a row.
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
/// rows guarded or of another size, or a tree's parent edge missing from `graph`. `little`:
/// the trees reach a small part of the graph ([`trees_reach_little`]), and the search keeps no
/// records.
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
    little: bool,
) -> Option<Solved> {
    match parents.len() {
        1 => solve::<1>(graph, parents, source, terms, base, s, dist, parent, little),
        2 => solve::<2>(graph, parents, source, terms, base, s, dist, parent, little),
        3 => solve::<3>(graph, parents, source, terms, base, s, dist, parent, little),
        4 => solve::<4>(graph, parents, source, terms, base, s, dist, parent, little),
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
    little: bool,
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
    let (mut edges, mut weight_sum) = (0usize, 0i64);
    let mut tails = [0i32; K];
    let mut count = |v: usize| {
        if v == source || unreached(&held, v) {
            return;
        }
        write_tails(&held, v, source, &mut tails);
        for j in 0..K {
            // Without a branch: whether two trees share a parent is a coin toss.
            let first = first_edge(&tails, j, v);
            edges += first as usize;
            weight_sum += std::hint::select_unpredictable(first, weight_of(&tails, tails[j], terms, base) as i64, 0);
        }
    };
    // The trees' edges are counted as the build counts them, in the pass that sets up the
    // records.
    let solved = if little {
        for v in 0..n {
            parent[v] = -1;
            dist[v] = DISTANCE_INF;
            count(v);
        }
        search(graph, source, &by_mask, &mut s.ring, &mut s.met, parent, &mut Sparse { held, dist })
    } else {
        // K parents and the distance, in a power of two of words: a record never straddles
        // lines.
        const STRIDE_OF: [usize; MASK_TREES + 1] = [1, 2, 4, 4, 8];
        let stride = STRIDE_OF[K];
        // Each record written once, whole (a fill first, then the parents, wrote it twice).
        s.rec.clear();
        s.rec.reserve(n * stride);
        for v in 0..n {
            parent[v] = -1;
            let mut r = [UNSEEN; STRIDE_OF[MASK_TREES]];
            for (r, p) in r.iter_mut().zip(held) {
                *r = p[v];
            }
            s.rec.extend_from_slice(&r[..stride]);
            count(v);
        }
        let solved = search(graph, source, &by_mask, &mut s.ring, &mut s.met, parent, &mut Dense::<K> { rec: &mut s.rec, stride });
        for (v, x) in dist.iter_mut().enumerate() {
            let d = s.rec[v * stride + K];
            *x = if d == UNSEEN { DISTANCE_INF } else { d as i64 };
        }
        solved
    };
    let (met, largest, stats) = solved;
    // A tree edge the rows lack: the graph of the trees differs from the one searched.
    if met != edges {
        return None;
    }
    Some(Solved { edges, weight_sum, largest: largest as i64, stats })
}

/// Vertices sampled, evenly spread over the ids, by [`trees_reach_little`].
const PROBES: usize = 256;

/// The trees reach a small part of the graph where they reach under one sampled vertex in this
/// many.
const SPARSE_SHARE: usize = 16;

/// Whether the trees `parents` reach under one vertex in [`SPARSE_SHARE`] of a sample: then the
/// solve over the rows keeps no records (see [`Sparse`]), and costs less than a parallel build
/// on any number of threads.
pub(crate) fn trees_reach_little(parents: &[&[i32]], source: usize) -> bool {
    let n = parents.first().map_or(0, |p| p.len());
    let step = (n / PROBES).max(1);
    let (mut probes, mut reached) = (0, 0);
    for v in (0..n).step_by(step) {
        probes += 1;
        reached += (v == source || !unreached(parents, v)) as usize;
    }
    reached * SPARSE_SHARE < probes
}

/// What the search keeps of each vertex: its K parents and its distance so far.
trait Records {
    /// The trees (a bit each) in which `me` is `h`'s parent.
    fn mask(&self, h: usize, me: i32) -> usize;
    fn dist(&self, h: usize) -> i32;
    fn set_dist(&mut self, h: usize, d: i32);
    /// Asks for what [`Records::mask`] and [`Records::dist`] of `h` read.
    fn ask(&self, h: usize);
}

/// A record per vertex, its K parents then its distance, in one cache line: the search reads
/// all of them for every head of a row it expands.
struct Dense<'a, const K: usize> {
    rec: &'a mut [i32],
    stride: usize,
}

impl<const K: usize> Records for Dense<'_, K> {
    #[inline(always)]
    fn mask(&self, h: usize, me: i32) -> usize {
        let r = &self.rec[h * self.stride..h * self.stride + K];
        (0..K).fold(0usize, |m, j| m | (((r[j] == me) as usize) << j))
    }
    #[inline(always)]
    fn dist(&self, h: usize) -> i32 {
        self.rec[h * self.stride + K]
    }
    #[inline(always)]
    fn set_dist(&mut self, h: usize, d: i32) {
        self.rec[h * self.stride + K] = d;
    }
    #[inline(always)]
    fn ask(&self, h: usize) {
        prefetch(&self.rec[h * self.stride]);
    }
}

/// Where the trees reach a small part of the graph (usroads from vertex 0: 352 vertices of
/// 129K), the parents are read from the trees and the distances kept in the result's: the
/// records' pages, written whole for a few hundred vertices, took half of the solve.
struct Sparse<'a, const K: usize> {
    held: [&'a [i32]; K],
    dist: &'a mut [i64],
}

impl<const K: usize> Records for Sparse<'_, K> {
    #[inline(always)]
    fn mask(&self, h: usize, me: i32) -> usize {
        (0..K).fold(0usize, |m, j| m | (((self.held[j][h] == me) as usize) << j))
    }
    #[inline(always)]
    fn dist(&self, h: usize) -> i32 {
        match self.dist[h] {
            DISTANCE_INF => UNSEEN,
            d => d as i32,
        }
    }
    #[inline(always)]
    fn set_dist(&mut self, h: usize, d: i32) {
        self.dist[h] = d as i64;
    }
    #[inline(always)]
    fn ask(&self, _h: usize) {}
}

/// The search of [`solve_over_rows`] from `source` over `rec`, every vertex unreached but the
/// source, its parents in `parent` all -1: the distinct tree edges it met, the largest distance
/// and the counters.
fn search<R: Records>(
    graph: &OutView<'_>,
    source: usize,
    by_mask: &[i32; 1 << MASK_TREES],
    ring: &mut DialRing,
    met_by: &mut Vec<i32>,
    parent: &mut [i32],
    rec: &mut R,
) -> (usize, i32, UpdateStats) {
    let n = parent.len();
    met_by.clear();
    ring.reset(RING);
    rec.set_dist(source, 0);
    ring.push(source as u32, 0);
    let mut met = 0usize;
    let mut stats = UpdateStats { packed_parents: true, ..Default::default() };
    let (mut d, mut largest) = (0i32, 0i32);
    let (bounds, stride) = (graph.bounds, graph.stride);
    while let Some(next) = ring.next(d as u64) {
        d = next as i32;
        stats.iterations += 1;
        let bucket = ring.take(d as u64);
        for (i, &v) in bucket.iter().enumerate() {
            // Three stages ahead: an entry's row bounds and record, then its row's heads, then
            // the heads' records.
            if let Some(&u) = bucket.get(i + 2 * AHEAD) {
                prefetch(&bounds[u as usize * stride]);
                rec.ask(u as usize);
            }
            if let Some(&u) = bucket.get(i + AHEAD) {
                if let Some(h) = graph.col.get(graph.unchecked_row(u as usize).start) {
                    prefetch(h);
                }
            }
            if let Some(&u) = bucket.get(i + AHEAD / 2) {
                for &h in &graph.col[graph.unchecked_row(u as usize)] {
                    rec.ask(h as usize);
                }
            }
            let v = v as usize;
            // An entry left behind when v was queued again at a lower distance.
            if rec.dist(v) != d {
                continue;
            }
            stats.pushes += 1;
            largest = d;
            let me = v as i32;
            let row = &graph.col[graph.unchecked_row(v)];
            // The heads of a short row counted so far, to count parallel edges once without
            // `met_by`, whose load per edge missed the cache (a quarter of the solve's samples).
            let (mut seen, mut counted) = ([0i32; SHORT_ROW], 0);
            for &h in row {
                let hu = h as usize;
                let m = rec.mask(hu, me);
                if m == 0 || hu == v || hu == source {
                    continue;
                }
                if row.len() <= SHORT_ROW {
                    if !seen[..counted].contains(&h) {
                        seen[counted] = h;
                        counted += 1;
                        met += 1;
                    }
                } else {
                    // Made at the first long row: road networks have none.
                    if met_by.len() != n {
                        met_by.resize(n, -1);
                    }
                    if met_by[hu] != me {
                        met_by[hu] = me;
                        met += 1;
                    }
                }
                let nd = d + by_mask[m];
                let old = rec.dist(hu);
                if nd < old {
                    rec.set_dist(hu, nd);
                    parent[hu] = me;
                    ring.push(h as u32, nd as u64);
                } else if nd == old && me < parent[hu] {
                    parent[hu] = me;
                }
            }
        }
        ring.put(d as u64, bucket);
    }
    stats.affected = stats.pushes;
    (met, largest, stats)
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
    /// it), some vertices reached by none (most, where `few`); and the rows of a graph holding
    /// their edges, as the combined graph's tests make them (parallel edges, self-loops, other
    /// edges, a long row).
    fn case(rng: &mut Mt19937, n: usize, k: usize, source: usize, few: bool) -> (Vec<Vec<i32>>, Vec<i32>, Vec<i32>) {
        let mut order: Vec<usize> = (0..n).filter(|&v| v != source).collect();
        for i in (1..order.len()).rev() {
            order.swap(i, rng.next_u32() as usize % (i + 1));
        }
        order.insert(0, source);
        let reached: Vec<bool> = (0..n).map(|v| v == source || if few { rng.next_u32().is_multiple_of(60) } else { !rng.next_u32().is_multiple_of(7) }).collect();
        let mut trees = vec![vec![-1i32; n]; k];
        // The vertices reached so far, in order (where `few`: most earlier ones are not).
        let mut earlier = vec![source];
        for (i, &v) in order.iter().enumerate().skip(1) {
            if !reached[v] {
                continue;
            }
            for t in trees.iter_mut() {
                // Among the last few reached before v (trees that often agree), or any earlier.
                let p = if few {
                    let r = rng.next_u32() as usize;
                    earlier[earlier.len() - 1 - r / 3 % if r.is_multiple_of(3) { earlier.len() } else { earlier.len().min(3) }]
                } else {
                    let pick = |r: u32| order[i - 1 - (r as usize % i.min(if r.is_multiple_of(3) { i } else { 3 }))];
                    let mut p = pick(rng.next_u32());
                    while !reached[p] {
                        p = pick(rng.next_u32());
                    }
                    p
                };
                t[v] = p as i32;
            }
            earlier.push(v);
        }
        let (row_ptr, col) = super::super::combined_graph::tests::graph_of(rng, &trees, source);
        (trees, row_ptr, col)
    }

    #[test]
    fn over_the_rows_it_is_the_canonical_tree_of_the_combined_graph() {
        let mut rng = Mt19937::new(31);
        let mut s = RowsScratch::default();
        for round in 0..60 {
            let k = 1 + round % MASK_TREES;
            // From round 40 the trees reach a few vertices of many: the search keeps no records.
            let few = round >= 40;
            let (n, source) = if few { (3000 + rng.next_u32() as usize % 3000, rng.next_u32() as usize % 3000) } else { (50 + rng.next_u32() as usize % 400, rng.next_u32() as usize % 50) };
            if few {
                s = RowsScratch::default();
            }
            // Unit preferences (weights 1 to K), then others (weights up to base - 1).
            let terms: Vec<i64> = (0..k).map(|j| if round % 2 == 0 { 1 } else { 1 + (j as i64 * 7 + round as i64) % 5 }).collect();
            let base = terms.iter().sum::<i64>() + 1 + (round as i64 % 3);
            let (trees, row_ptr, col) = case(&mut rng, n, k, source, few);
            let w = vec![1; col.len()];
            let graph = OutView { bounds: &row_ptr, stride: 1, n, col: &col, w: &w, edges: col.len(), guard: None };
            let parents: Vec<&[i32]> = trees.iter().map(Vec::as_slice).collect();
            let (mut dist, mut parent) = (vec![7i64; n], vec![7i32; n]);
            assert_eq!(trees_reach_little(&parents, source), few, "round {round}: the sample");
            let got = solve_over_rows(&graph, &parents, source, &terms, base, &mut s, &mut dist, &mut parent, few).expect("every tree edge is in the rows");
            let (want_dist, want_parent, edges, sum) = by_definition(&trees, source, &terms, base);
            let what = format!("round {round}: K = {k}, n = {n}");
            assert_eq!(s.rec.is_empty(), few, "{what}: records kept");
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
            assert!(solve_over_rows(&graph, &parents, source, &terms, base, &mut s, &mut dist, &mut parent, few).is_none(), "{what}");
        }
    }

    #[test]
    fn weights_past_the_ring_are_left_to_the_build() {
        let mut rng = Mt19937::new(4);
        let (trees, row_ptr, col) = case(&mut rng, 60, 2, 0, false);
        let n = 60;
        let w = vec![1; col.len()];
        let graph = OutView { bounds: &row_ptr, stride: 1, n, col: &col, w: &w, edges: col.len(), guard: None };
        let parents: Vec<&[i32]> = trees.iter().map(Vec::as_slice).collect();
        let (mut dist, mut parent) = (vec![0i64; n], vec![0i32; n]);
        let mut s = RowsScratch::default();
        // An edge of one tree weighs base - 1: RING - 1 is taken, RING is not.
        assert!(solve_over_rows(&graph, &parents, 0, &[1, 1], RING as i64, &mut s, &mut dist, &mut parent, false).is_some());
        assert!(solve_over_rows(&graph, &parents, 0, &[1, 1], RING as i64 + 1, &mut s, &mut dist, &mut parent, false).is_none());
    }
}
