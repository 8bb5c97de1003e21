//! Dial's bucket queue over a ring of contiguous buckets, for searches on one thread: a static
//! solve's (`plain_search`) and the combined solve over the graph's rows (`mosp/over_rows.rs`);
//! the ring also holds each team member's bins (`binned.rs`), one per bucket number.
//!
//! With integer weights of at least 1, every vertex in the bucket of the smallest pending distance
//! is final, so taking the buckets in order expands each vertex once, at its final distance; the
//! packed word decides ties, so the tree is the canonical one. A ring wider than the largest weight
//! never wraps onto itself; larger weights take buckets of several distances (see
//! [`plain_search`]). Each bucket is a vector of vertex ids that keeps its capacity from run to
//! run (counted in the workspace's bytes): a push is a store and an increment, and a drained
//! bucket is a slice the loop can look ahead in, where the chained blocks of the repairs' queue
//! (`buckets.rs`) cost a block walk per entry. See docs/performance.md for what it gains.

use super::exec::Exec;
use super::near_far::Search;
use super::prefetch::{ask_heads, ask_in_stages, ask_row, ask_word_and_row, ASK_FIRST};
use super::run::Run;
use super::wide::{Learned, Wide, Widening};
use super::workspace::Workspace;
use crate::stats::UpdateStats;
use std::sync::atomic::{AtomicI32, Ordering::Relaxed};

/// The most buckets in the ring: 4096 empty vectors cost 96 KiB.
const WIDEST: usize = 4096;

/// A ring of buckets, one per distance (or per range of distances, as its user maps them), with
/// a bitmap of the non-empty ones.
#[derive(Default)]
pub(crate) struct DialRing {
    buckets: Vec<Vec<u32>>,
    /// Bit `b % 64` of word `b / 64`: bucket `b` is not empty.
    busy: Vec<u64>,
    /// Entries queued and not yet taken.
    pending: usize,
    /// An empty vector with room, which takes the place of a bucket taken out: a search whose
    /// buckets span several distances queues into the bucket it drains.
    spare: Vec<u32>,
    /// What the static solves on this ring found of their graph's buckets.
    learned: Learned,
}

/// How the static solves on this ring widen sparse buckets: a road network's bucket per distance
/// holds 5.5 vertices (usroads), too few to ask for their reads ahead, and each drain costs a
/// bitmap scan and a vector swap besides; the 1000^2 grid's hold 25, and gain nothing wider.
const WIDENING: Widening = Widening { sparse: 12, aim: 64, most: 6, least: 0 };

/// Entries each bucket of a reserved ring has room for (a cache line).
const RESERVED_ROOM: usize = 16;

impl DialRing {
    /// Empties the ring and sizes it for weights below `above` (a power of two at least that,
    /// 64 or more). Buckets keep their capacity.
    pub(crate) fn reset(&mut self, above: usize) {
        let size = above.next_power_of_two().max(64);
        self.buckets.resize_with(size.max(self.buckets.len()), Vec::new);
        self.buckets.truncate(size);
        for b in &mut self.buckets {
            b.clear();
        }
        self.busy.clear();
        self.busy.resize(size / 64, 0);
        self.pending = 0;
    }

    /// Queues `v` at distance `d`.
    #[inline(always)]
    pub(crate) fn push(&mut self, v: u32, d: u64) {
        let b = d as usize & (self.buckets.len() - 1);
        self.buckets[b].push(v);
        self.busy[b / 64] |= 1 << (b % 64);
        self.pending += 1;
    }

    /// The smallest distance at or after `d` whose bucket is not empty, if any is queued.
    #[inline]
    pub(crate) fn next(&self, d: u64) -> Option<u64> {
        if self.pending == 0 {
            return None;
        }
        let mask = self.buckets.len() - 1;
        let at = d as usize & mask;
        let words = self.busy.len();
        // The word of `at` (bits from `at` on), the other words in ring order, then the word of
        // `at` again for the bits before it.
        for k in 0..=words {
            let w = (at / 64 + k) % words;
            let mut bits = self.busy[w];
            if k == 0 {
                bits &= u64::MAX << (at % 64);
            }
            if bits != 0 {
                let b = w * 64 + bits.trailing_zeros() as usize;
                return Some(d + (b.wrapping_sub(at) & mask) as u64);
            }
        }
        None
    }

    /// The entries queued at distance `d`.
    #[inline]
    pub(crate) fn queued(&self, d: u64) -> usize {
        self.buckets[d as usize & (self.buckets.len() - 1)].len()
    }

    /// Takes the entries of distance `d` out of the ring (give the vector back with
    /// [`DialRing::put`]); entries queued at `d` meanwhile wait for the next take.
    #[inline]
    pub(crate) fn take(&mut self, d: u64) -> Vec<u32> {
        let b = d as usize & (self.buckets.len() - 1);
        self.busy[b / 64] &= !(1 << (b % 64));
        let bucket = std::mem::replace(&mut self.buckets[b], std::mem::take(&mut self.spare));
        self.pending -= bucket.len();
        bucket
    }

    /// Gives back the vector drained from distance `d`, emptied, with its capacity: to its
    /// bucket, or, where entries were queued there meanwhile, as the spare.
    #[inline]
    pub(crate) fn put(&mut self, d: u64, mut bucket: Vec<u32>) {
        bucket.clear();
        let b = d as usize & (self.buckets.len() - 1);
        if self.buckets[b].is_empty() {
            std::mem::swap(&mut self.buckets[b], &mut bucket);
        }
        if bucket.capacity() > self.spare.capacity() {
            self.spare = bucket;
        }
    }

    /// Gives the ring its least size (64 buckets) unless it has more, and each bucket and the
    /// spare room for a line of entries: what a workspace reserved ahead holds
    /// (`Resources::reserve_workspace`), so that a small graph's first search allocates nothing.
    pub(crate) fn reserve(&mut self) {
        if self.buckets.len() < 64 {
            self.reset(64);
        }
        for b in self.buckets.iter_mut().chain(std::iter::once(&mut self.spare)) {
            b.reserve(RESERVED_ROOM.saturating_sub(b.len()));
        }
    }

    pub(crate) fn bytes(&self) -> usize {
        4 * (self.buckets.iter().map(Vec::capacity).sum::<usize>() + self.spare.capacity())
            + std::mem::size_of::<Vec<u32>>() * self.buckets.capacity()
            + 8 * self.busy.capacity()
    }
}

/// Entries of a bucket between the stages of asking for what an expansion reads.
const AHEAD: usize = 8;

/// The static search from `ws.frontier` (the source alone, at distance 0, every other word
/// unwritten) on the ring, where it applies: no old tree to load words from, no guard, packed
/// parents. Returns `None` (nothing done) where it does not. Counters as the chained queue's:
/// `pushes` counts expansions, `iterations` the buckets drained. No candidate exceeds the
/// packing's largest (every expanded distance is a tree distance) and none undercuts the
/// source's word, so neither is tested.
///
/// Weights of [`WIDEST`] or more take buckets of 2^shift distances, the least width that fits the
/// ring (Delta-stepping with one thread; see `wide.rs`): near-far, which such weights ran on
/// before, expanded 1.3-4.3 times as many vertices on bremen. A graph whose buckets held fewer
/// than [`WIDENING`]'s sparse entries per drain in the last solve on this ring takes buckets wider
/// than that (`Learned`).
pub(super) fn plain_search<E: Exec>(run: &Run<'_, E>, ws: &Workspace, stats: &mut UpdateStats) -> Option<Search> {
    let p = run.packing;
    if run.old.is_some() || run.out.guard.is_some() || !p.packed_parents() {
        return None;
    }
    debug_assert!(ws.frontier.len() == 1 && ws.frontier.get(0) as usize == run.source);
    debug_assert!(p.dist(ws.packed[run.source].load(Relaxed)) == 0);
    let mut guard = ws.dial.lock();
    let ring: &mut DialRing = &mut guard;
    let (wide, wider) = size_ring(run, ring);
    ring.push(run.source as u32, 0);
    let (pushes, iterations, _) = drain_by_width::<E, false>(run, ws, ring, wide, Feed::NONE, i64::MAX);
    ring.learned = Learned::after(run.out.n, p.max_weight(), wider, pushes, iterations, &WIDENING);
    stats.pushes += pushes;
    stats.iterations += iterations;
    Some(Search::Finished)
}

/// A one-member repair's search on the ring, where it applies: as [`plain_search`]'s (every word
/// packed, packed parents; a caller's rows that no pass checked are checked as read), from the
/// frontier the pull left in `ws.frontier` at any distances, within `push_budget` expansions.
/// The frontier is sorted by distance (through `ws.near_a`; its distances above the least are
/// kept beside it in `ws.near_b`: both lists are near-far's only) and each entry queued when the
/// drain reaches its bucket (the ring spans the largest weight only), unless its word dropped
/// since, when the expansion that lowered it queued it. With every word packed, the repairs' queue of chained blocks (`buckets.rs`) costs
/// more per expansion (docs/performance.md). Buckets are as wide as the last static solve on
/// this ring took them. Returns `None` (nothing done) where it does not apply, or where the
/// frontier's distances span 2^31 or more.
pub(super) fn repair_search<E: Exec>(run: &Run<'_, E>, ws: &Workspace, stats: &mut UpdateStats, push_budget: Option<i64>) -> Option<Search> {
    let p = run.packing;
    // The source's word is final at 0, so no candidate undercuts it (as in a static solve).
    if run.old.is_some() || !p.packed_parents() || p.dist(ws.packed[run.source].load(Relaxed)) != 0 {
        return None;
    }
    let frontier = &ws.frontier;
    let dist = |v: i32| p.dist(ws.packed[v as usize].load(Relaxed));
    let (least, most) = (0..frontier.len()).map(|i| dist(frontier.get(i))).fold((u64::MAX, 0), |(l, m), d| (l.min(d), m.max(d)));
    let span = most.saturating_sub(least);
    if span > i32::MAX as u64 {
        return None;
    }
    frontier.sort_by_key(&ws.near_a, span, |v| dist(v) - least);
    ws.near_b.clear();
    for i in 0..frontier.len() {
        ws.near_b.push((dist(frontier.get(i)) - least) as i32);
    }
    let mut guard = ws.dial.lock();
    let ring: &mut DialRing = &mut guard;
    let (wide, _) = size_ring(run, ring);
    let feed = Feed { vertices: &frontier.slots()[..frontier.len()], above: &ws.near_b.slots()[..frontier.len()], least };
    let (pushes, iterations, end) = drain_by_width::<E, true>(run, ws, ring, wide, feed, push_budget.unwrap_or(i64::MAX));
    stats.pushes += pushes;
    stats.iterations += iterations;
    Some(end)
}

/// Empties `ring` and sizes it for the packing's largest weight, its buckets as wide as the last
/// static solve on it took them: their coding, and the widening learned. Pending distances lie
/// within the largest weight of the one expanded: (max_weight >> shift) + 1 buckets past it at
/// most.
fn size_ring<E: Exec>(run: &Run<'_, E>, ring: &mut DialRing) -> (Wide, u32) {
    let p = run.packing;
    let wider = ring.learned.wider(run.out.n, p.max_weight());
    let wide = Wide::new(run.out.n, Wide::shift_for(p.max_weight(), WIDEST as u64) + wider);
    ring.reset((p.max_weight() >> wide.shift()) as usize + 2);
    (wide, wider)
}

/// [`drain`] of the kind `wide`'s buckets take: a distance each, or several.
fn drain_by_width<E: Exec, const REPAIR: bool>(run: &Run<'_, E>, ws: &Workspace, ring: &mut DialRing, wide: Wide, feed: Feed<'_>, budget: i64) -> (i64, i64, Search) {
    if wide.shift() == 0 {
        drain::<E, false, REPAIR>(run, ws, ring, wide, feed, budget)
    } else {
        drain::<E, true, REPAIR>(run, ws, ring, wide, feed, budget)
    }
}

/// A repair's frontier for [`drain`]: its vertices by distance, each distance as `least` plus
/// the entry of `above` beside it.
#[derive(Clone, Copy)]
struct Feed<'a> {
    vertices: &'a [AtomicI32],
    above: &'a [AtomicI32],
    least: u64,
}

impl Feed<'_> {
    const NONE: Feed<'static> = Feed { vertices: &[], above: &[], least: 0 };

    /// Entry `i`: its vertex and the distance it was sorted at.
    #[inline(always)]
    fn get(&self, i: usize) -> Option<(u32, u64)> {
        let v = self.vertices.get(i)?.load(Relaxed) as u32;
        Some((v, self.least + self.above[i].load(Relaxed) as u64))
    }
}

/// Takes the buckets in order; returns the expansions, the buckets drained and how the search
/// ended. `WIDE`: buckets of several distances, taken in rounds, their entries coded by `wide`
/// (else a bucket per distance, its entries vertex ids). `REPAIR`: the queue also takes `feed`'s
/// entries, in order, as the drain reaches their buckets, candidates past the packing's largest
/// are dropped, and the search is abandoned past `budget` expansions.
// Out of line: each kind of bucket gets its own registers.
#[inline(never)]
fn drain<E: Exec, const WIDE: bool, const REPAIR: bool>(run: &Run<'_, E>, ws: &Workspace, ring: &mut DialRing, wide: Wide, feed: Feed<'_>, budget: i64) -> (i64, i64, Search) {
    let (p, out) = (run.packing, run.out);
    let bits = p.bits;
    let (mut pushes, mut iterations) = (0i64, 0i64);
    let vertex = |e: u32| wide.vertex::<WIDE>(e);
    let (mut at, mut fed) = (0, 0);
    loop {
        let queued = ring.next(at);
        let next = match feed.get(fed) {
            Some((_, d)) if REPAIR => queued.map_or(wide.bucket(d), |q| q.min(wide.bucket(d))),
            _ => match queued {
                Some(q) => q,
                None => break,
            },
        };
        if REPAIR {
            if pushes > budget {
                return (pushes, iterations, Search::Abandoned);
            }
            // The entries sorted into this bucket; a word that dropped since was queued by the
            // expansion that lowered it.
            while let Some((v, d)) = feed.get(fed).filter(|&(_, d)| wide.bucket(d) == next) {
                if p.dist(ws.packed[v as usize].load(Relaxed)) == d {
                    ring.push(wide.entry::<WIDE>(v, d), next);
                }
                fed += 1;
            }
            if ring.queued(next) == 0 {
                continue;
            }
        }
        at = next;
        iterations += 1;
        let bucket = ring.take(at);
        // The first entries' reads stage by stage before the drain, later entries' ahead of them.
        ask_in_stages(&out, &ws.packed, || bucket.iter().take(ASK_FIRST).map(|&e| vertex(e)));
        for (i, &e) in bucket.iter().enumerate() {
            if let Some(&x) = bucket.get(i + 4 * AHEAD).filter(|_| i + 4 * AHEAD >= ASK_FIRST) {
                ask_word_and_row(&out, &ws.packed, vertex(x));
            }
            if let Some(&x) = bucket.get(i + 2 * AHEAD).filter(|_| i + 2 * AHEAD >= ASK_FIRST) {
                ask_row(&out, vertex(x));
            }
            if let Some(&x) = bucket.get(i + AHEAD).filter(|_| i + AHEAD >= ASK_FIRST) {
                ask_heads(&out, &ws.packed, vertex(x));
            }
            let u = vertex(e);
            let word_d = ws.packed[u].load(Relaxed) >> bits;
            if !wide.live::<WIDE>(e, at, word_d) {
                continue; // queued again at a smaller distance since
            }
            // With a bucket per distance the bucket's is u's: the relaxations need not wait for
            // the load of u's word (predicted past the test above, they overlap its miss).
            let d = if WIDE { word_d } else { at };
            pushes += 1;
            // A caller's rows that no pass checked are checked as read (a bad one reads empty and
            // is reported after the search); a static solve's rows are never guarded.
            let row = if REPAIR { out.row(u) } else { out.unchecked_row(u) };
            let parent = u as u64;
            for (&x, &w) in out.col[row.clone()].iter().zip(&out.w[row]) {
                let nd = d + w as u64;
                if REPAIR && nd > p.max_candidate {
                    continue;
                }
                let cand = (nd << bits) | parent;
                let slot = &ws.packed[x as usize];
                let old = slot.load(Relaxed);
                if cand < old {
                    slot.store(cand, Relaxed);
                    let was = old >> bits;
                    if nd < was {
                        ring.push(wide.entry::<WIDE>(x as u32, nd), wide.bucket(nd));
                    }
                }
            }
        }
        ring.put(at, bucket);
    }
    (pushes, iterations, Search::Finished)
}

#[cfg(test)]
pub(super) mod tests {
    use super::DialRing;
    use crate::graph::dijkstra::dijkstra;
    use crate::io::generators::changegen::{generate_changes, ChangeOptions};
    use crate::io::generators::graphgen::grid;
    use crate::{Csr, Fallback, Graph, Resources, SsspOptions, SsspResult, WeightLayout};

    #[test]
    fn the_ring_hands_out_distances_in_order_across_its_wrap() {
        let mut r = DialRing::default();
        r.reset(100); // 128 buckets
        assert_eq!(r.next(0), None);
        r.push(7, 120);
        r.push(8, 127);
        assert_eq!(r.next(0), Some(120));
        assert_eq!(r.take(120), vec![7]);
        // 127 is pending; 130 and 240 wrap to buckets 2 and 112, both ahead of 127 in ring order.
        r.push(9, 240);
        r.push(10, 130);
        r.push(11, 130);
        assert_eq!(r.next(121), Some(127));
        assert_eq!(r.take(127), vec![8]);
        assert_eq!(r.next(128), Some(130));
        let b = r.take(130);
        assert_eq!(b, vec![10, 11]);
        r.put(130, b);
        assert_eq!(r.next(131), Some(240));
        assert_eq!(r.take(240), vec![9]);
        assert_eq!(r.next(241), None);
        // A reset keeps the drained buckets' room, and drops what a search left queued.
        let room = r.bytes();
        r.reset(100);
        assert_eq!((r.bytes(), r.next(0)), (room, None));
        r.push(1, 5);
        r.reset(100);
        assert_eq!(r.next(0), None);
        r.push(2, 9);
        assert_eq!((r.next(0), r.take(9)), (Some(9), vec![2]));
    }

    fn arrays(c: &Csr) -> crate::CsrArrays<'_> {
        crate::CsrArrays { row_ptr: c.row_ptr(), col: c.col_ind(), w: c.weights() }
    }

    /// The reverse graph of `c`'s edges (row v lists the tails of the edges into v).
    fn reversed(c: &Csr) -> Csr {
        let tails: Vec<i32> = (0..c.n()).flat_map(|u| std::iter::repeat_n(u as i32, (c.row_ptr()[u + 1] - c.row_ptr()[u]) as usize)).collect();
        Csr::from_edges(c.n(), 1, c.col_ind(), &tails, c.weights()).unwrap()
    }

    /// The grid of `side`^2 with weights 1..=`wmax` times `scale` (a scale keeps the ties).
    pub(in crate::sssp) fn scaled(side: usize, wmax: i32, scale: i32, seed: u32) -> Graph {
        let t = grid(side, side, 1, 1, wmax, seed).unwrap();
        let w: Vec<i32> = t.weights.iter().map(|&w| w * scale).collect();
        Graph::new(Csr::from_arrays(t.n, 1, t.row_ptr, t.col_ind, &w, WeightLayout::EdgeMajor).unwrap())
    }

    #[test]
    fn a_static_solve_on_one_thread_is_dijkstras_tree() {
        let res = Resources::parallel(1).unwrap();
        // Weights of 1 to 3 make many ties (the lowest-id parent must win); up to 4094 a bucket
        // per distance, each vertex expanded once; past that buckets of several distances, scaled
        // ties included (bremen's weights reach 63 million); on the 250^2 grid the entries keep
        // only the high bits of a distance's place in its bucket (16 id bits, buckets of 2^19
        // distances). The workspace is reused, and each tree is then repaired.
        let cases = [(30, 3, 1, 0), (40, 100, 1, 17), (25, 4094, 1, 311), (25, 4096, 1, 5), (30, 3, 1_000_000, 2), (30, 60, 35_000_000, 44), (250, 60, 35_000_000, 7)];
        for (side, wmax, scale, source) in cases {
            let mut g = scaled(side, wmax, scale, 11);
            let never = SsspOptions { fallback: Fallback::Never, ..Default::default() };
            let mut r = SsspResult::compute(&res, &g, source, 0, &never).unwrap();
            let (d, p) = dijkstra(&g, 0, source);
            let case = format!("side {side}, weights up to {wmax} x {scale}");
            assert_eq!((r.distances(), r.parents()), (&d[..], &p[..]), "{case}");
            let s = r.stats();
            assert_eq!(s.epochs, 0, "{case}: no near-far");
            if (wmax as i64) * (scale as i64) < 4094 {
                assert_eq!(s.pushes, (side * side) as i64, "{case}: once per vertex");
            }
            let opt = ChangeOptions { changes: 40, seed: 9, safe: false, source, ..Default::default() };
            let (batch, _) = generate_changes(&g.to_csr(), &opt).unwrap();
            crate::update_one(&res, &mut g, &batch.view(), &mut r).unwrap();
            let (d, p) = dijkstra(&g, 0, source);
            assert_eq!((r.distances(), r.parents()), (&d[..], &p[..]), "{case}, repaired");
        }
    }

    #[test]
    fn a_one_thread_repair_of_a_packed_tree_is_dijkstras_tree() {
        // Batches that insert more than n / 32 edges have the whole tree packed, and a
        // one-member repair of a result's own tree then runs on the ring (`repair_search`): its
        // frontier spans many distances, and a frontier vertex lowered before its bucket's turn
        // is queued by that expansion only. A bucket per distance, and buckets of several.
        let res = Resources::parallel(1).unwrap();
        let never = SsspOptions { fallback: Fallback::Never, ..Default::default() };
        for (side, wmax, scale, source) in [(30, 3, 1, 0), (40, 100, 1, 17), (25, 4096, 1, 5), (30, 60, 35_000_000, 44)] {
            let mut g = scaled(side, wmax, scale, 11);
            let mut r = SsspResult::compute(&res, &g, source, 0, &never).unwrap();
            for seed in 0..6 {
                let opt = ChangeOptions { changes: side * side / 8, insert_pct: 80.0, seed, source, ..Default::default() };
                let (batch, _) = generate_changes(&g.to_csr(), &opt).unwrap();
                assert!(batch.num_insertions() * 32 > side * side);
                crate::update_one(&res, &mut g, &batch.view(), &mut r).unwrap();
                let (d, p) = dijkstra(&g, 0, source);
                let case = format!("side {side}, weights up to {wmax} x {scale}, batch {seed}");
                assert_eq!((r.distances(), r.parents()), (&d[..], &p[..]), "{case}");
                assert!(!r.stats().fallback_used, "{case}: repaired");
            }
        }
    }

    #[test]
    fn a_drop_in_repair_of_most_of_a_tree_is_dijkstras_tree_and_checks_the_rows_it_reads() {
        // A caller's arrays' repair whose insertions reach most of the tree runs on the ring; with
        // the Delta, the weight bound and the reverse graph given and fewer than a third of the
        // tree invalidated, no pass checks the rows first: each is checked as read. Dijkstra's
        // tree of the updated graph, by a repair; and a weight above the caller's max_weight in a
        // row the repair reads is refused, the arrays left as they were.
        for (side, wmax, scale, source) in [(30, 3, 1, 0), (40, 100, 1, 17), (30, 60, 35_000_000, 44)] {
            let n = side * side;
            let g = scaled(side, wmax, scale, 11);
            let old = g.to_csr();
            let mut heads = Vec::new();
            let mut b = crate::Batch::new(1);
            // New edges only (an existing one's raised weight would be a changed edge to list).
            for i in 0..n / 16 {
                let (u, v) = ((i * 104_729 + 5) % n, (i * 7919 + 13) % n);
                if u != v && !old.col_ind()[old.row_ptr()[u] as usize..old.row_ptr()[u + 1] as usize].contains(&(v as i32)) && !heads.contains(&(v as i32)) {
                    b.insert(u as i32, v as i32, &[(1 + (i as i32 * 37) % wmax) * scale]);
                    heads.push(v as i32);
                }
            }
            assert!(heads.len() * 32 > n && heads.len() * 3 < n);
            let mut updated = scaled(side, wmax, scale, 11);
            crate::update(&Resources::sequential(), &mut updated, &b.view(), &mut []).unwrap();
            let (d, p) = dijkstra(&updated, 0, source);
            let new = updated.to_csr();
            let res = Resources::parallel(1).unwrap();
            let (mut d0, mut p0) = (vec![0i64; n], vec![0i32; n]);
            crate::sosp_solve_arrays(&res, arrays(&old), source, 0, 0, &mut d0, &mut p0).unwrap();
            let max_weight = (wmax * scale) as i64;
            let delta = crate::sssp::default_delta(new.m(), n, (0..new.m()).map(|e| new.weights()[e] as i64).sum());
            let reverse = reversed(&new);
            let rev = || Some(arrays(&reverse));
            let case = format!("side {side}, weights up to {wmax} x {scale}");
            let (mut dist, mut parent) = (d0.clone(), p0.clone());
            let st = crate::sosp_update_arrays(&res, arrays(&new), rev(), &[], &[], &heads, source, delta, max_weight, &mut dist, &mut parent).unwrap();
            assert!(!st.fallback_used, "{case}: repaired");
            assert_eq!((&dist[..], &parent[..]), (&d[..], &p[..]), "{case}");
            // A vertex the insertions brought closer is expanded: its row is read.
            let v = (0..n).find(|&v| d[v] < d0[v] && new.row_ptr()[v] < new.row_ptr()[v + 1]).unwrap();
            let mut w = new.weights().to_vec();
            w[new.row_ptr()[v] as usize] = max_weight as i32 + 1;
            let bad = crate::CsrArrays { row_ptr: new.row_ptr(), col: new.col_ind(), w: &w };
            let (mut dist, mut parent) = (d0.clone(), p0.clone());
            let e = crate::sosp_update_arrays(&res, bad, rev(), &[], &[], &heads, source, delta, max_weight, &mut dist, &mut parent).unwrap_err();
            assert!(e.to_string().contains("weight"), "{case}: {e}");
            assert_eq!((&dist[..], &parent[..]), (&d0[..], &p0[..]), "{case}: refused, arrays kept");
        }
    }

    #[test]
    fn sparse_buckets_are_taken_wider_on_the_next_solve_of_the_graph() {
        use super::{Learned, WIDENING as W};
        // 5 entries per drain: 64 / 5 rounds up to 16 times wider; 40 is enough; the most is 2^6.
        assert_eq!(Learned::after(9, 100, 0, 500, 100, &W).wider, 4);
        assert_eq!(Learned::after(9, 100, 1, 4000, 100, &W).wider, 1);
        assert_eq!(Learned::after(9, 100, 4, 0, 0, &W).wider, 6);
        let l = Learned::after(9, 100, 0, 500, 100, &W);
        assert_eq!((l.wider(9, 100), l.wider(9, 101), l.wider(10, 100)), (4, 0, 0));
        // The 40^2 grid with weights up to 100 holds under one vertex per distance: the second
        // solve drains buckets of several distances, and finds the same tree.
        let res = Resources::parallel(1).unwrap();
        let g = scaled(40, 100, 1, 11);
        let (d, p) = dijkstra(&g, 0, 17);
        let drains: Vec<i64> = (0..3)
            .map(|_| {
                let r = SsspResult::compute(&res, &g, 17, 0, &SsspOptions::default()).unwrap();
                assert_eq!((r.distances(), r.parents()), (&d[..], &p[..]));
                r.stats().iterations
            })
            .collect();
        assert!(drains[1] * 8 < drains[0] && drains[2] == drains[1], "{drains:?}");
    }

    #[test]
    fn unreachable_vertices_stay_unreached() {
        // Edges 0 -> 1 -> 2 and 3 -> 4: from 0, vertices 3 and 4 are never queued.
        let g = Graph::new(Csr::from_edges(5, 1, &[0, 1, 3], &[1, 2, 4], &[5, 7, 1]).unwrap());
        let r = SsspResult::compute(&Resources::parallel(1).unwrap(), &g, 0, 0, &SsspOptions::default()).unwrap();
        assert_eq!(r.parents(), &[-1, 0, 1, -1, -1]);
        assert_eq!(&r.distances()[..3], &[0, 5, 12]);
        assert!(r.distances()[3..].iter().all(|&d| !crate::distance::is_finite(d)));
        assert_eq!(r.stats().pushes, 3);
    }
}
