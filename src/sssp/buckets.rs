//! The one-member search: a bucket queue with one bucket per distance (Dial's algorithm).
//!
//! With integer weights of at least 1, every vertex in the bucket of the smallest pending
//! distance is final: nothing pending can lower it. So a search that takes the buckets in order
//! expands each vertex once, at its final distance, where the near-far search of a one-member team
//! re-expands a vertex whenever its distance drops again inside the near window (1.6 expansions
//! per vertex on the 1000^2 grid, 1.8 per changed vertex in its local 10K repair). The packed word
//! still decides ties, so the tree is the same canonical tree: every tight in-neighbour of a
//! vertex has a smaller distance and is expanded before it, offering its edge.
//!
//! The buckets form a ring of `B` distances (a power of two below n): every pending distance lies
//! within `max_weight` of the one being expanded, so a ring wider than the largest weight never
//! wraps onto itself. A bucket is a chain of blocks of [`BLOCK`] slots holding vertex ids (coded
//! with a place where buckets are wide, below); a vertex
//! whose distance drops is queued again in its new bucket and its old entry is skipped when met
//! (its word no longer has that distance). A drained bucket's blocks go back to a free list, so
//! the blocks in use hold about the frontier's entries. Everything lives in the workspace's
//! near-far lists, which a one-member search does not use: the blocks in `near_a` and `near_b`
//! (n / 4 blocks), the first block of each bucket in `far`, the append position of each bucket and
//! a two-level bitmap of the non-empty buckets in `far2`.
//!
//! Weights of `B` or more, or a starting frontier spanning `B` distances or more, take buckets of
//! 2^shift distances instead, the least width that fits (`wide.rs`: a bucket is drained in
//! rounds, its entries coded with their place in it): bremen's metres and seconds, whose repairs
//! ran near-far before. Where the ring is too small for that, the buckets would be wider than
//! near-far's window (see [`fitting`]), or the blocks run out, the search goes on with near-far
//! from the queued vertices.
//! Only the parallel executor uses it, and only where its team would have one member: the
//! sequential reference keeps the near-far schedule, whose counters reproduce the originals'.
//! A static solve runs on the contiguous buckets of `dial.rs` instead, which cost less per entry
//! but grow with the entries queued: this fixed pool serves the repairs, whose starting
//! frontiers spread over many distances.
//! Counters: `pushes` counts expansions, `iterations` the buckets drained (a wide bucket once per
//! round), `epochs` stays 0.

use super::prefetch::{ask_in_stages, ask_row, ask_word_and_row, ASK_FIRST};
use super::run::{touch, Generations, Run};
use super::near_far::Search;
use super::exec::Exec;
use super::wide::Wide;
use crate::stats::UpdateStats;
use super::workspace::{Appender, Workspace};
use std::sync::atomic::{AtomicI32, Ordering::Relaxed};

/// Slots per block: `BLOCK - 1` vertex ids, then the index of the bucket's next block. Small,
/// because a repair's starting frontier spreads over many distances and every non-empty bucket
/// holds a block of its own (with 32 slots the frontier of usroads local 10K ran out of blocks
/// and went to near-far; a static solve of the grid measured the same with 8 or 32).
const BLOCK: usize = 8;

/// No block.
const NONE: i32 = -1;

/// The ring size for a search of `n` vertices: the largest power of two whose append positions
/// and bitmap fit in one list of n slots.
pub(super) fn ring_size(n: usize) -> Option<usize> {
    let fits = |b: usize| {
        let (words, words1) = bitmap_words(b);
        b + words + words1 <= n
    };
    let mut b = 1usize << (usize::BITS - 1 - n.max(1).leading_zeros());
    while b > 1 && !fits(b) {
        b /= 2;
    }
    fits(b).then_some(b)
}

/// Buckets of several distances take a ring of at least this many: in fewer, each would span a
/// large share of the distances, and its rounds would re-expand vertices as near-far's do.
const WIDE_RING: usize = 256;

/// How a search whose weights are at most `max_weight`, from a frontier whose distances span
/// `lo..=hi`, fits a ring of `b` buckets: a bucket per distance where the weights and the span
/// fit, else buckets of the least number of distances 2^shift that fits both, in a ring of
/// [`WIDE_RING`] or more and no wider than near-far's window `delta` (`None`: near-far).
///
/// A bucket wider than the window re-expands more than near-far would: where a few weights are
/// far above the rest (one of 2^31 - 1 among weights of 1 to 10), a width set by the largest
/// holds every distance, drained in rounds (3.4 expansions per vertex on the large-weights grid's
/// repair, against near-far's 2.1 with the caller's Delta), while near-far's far pile keeps the
/// heavy edges' heads aside.
fn fitting(n: usize, b: usize, max_weight: u64, (lo, hi): (u64, u64), delta: u64) -> Option<Wide> {
    if max_weight < b as u64 && hi - lo < b as u64 {
        return Some(Wide::new(n, 0));
    }
    if b < WIDE_RING {
        return None;
    }
    let b = b as u64;
    let shift = (1..63).find(|&s| (max_weight >> s) + 2 <= b && (hi >> s) - (lo >> s) < b)?;
    (1u64 << shift <= delta).then(|| Wide::new(n, shift))
}

/// The words of the two bitmap levels of a ring of `b` buckets.
fn bitmap_words(b: usize) -> (usize, usize) {
    let words = b.div_ceil(32);
    (words, words.div_ceil(32))
}

/// The ring of buckets over the workspace's lists.
struct Ring<'w> {
    mask: usize,
    /// The blocks: `near_a`'s slots, then `near_b`'s.
    pool: Pool<'w>,
    first: &'w [AtomicI32],
    /// The pool position the bucket's next entry goes to.
    tail: &'w [AtomicI32],
    /// Bit `b` of word `b / 32`: bucket `b` is not empty.
    level0: &'w [AtomicI32],
    /// Bit `w` of word `w / 32`: `level0[w]` is not zero.
    level1: &'w [AtomicI32],
    free: i32,
    /// Blocks on the free list.
    freed: usize,
    /// Blocks never used yet: `unused..pool.len() / BLOCK`.
    unused: usize,
}

/// The blocks ran out.
struct Full;

/// Two lists of slots addressed as one.
struct Pool<'w>(&'w [AtomicI32], &'w [AtomicI32]);

impl Pool<'_> {
    #[inline(always)]
    fn at(&self, i: usize) -> &AtomicI32 {
        match i.checked_sub(self.0.len()) {
            None => &self.0[i],
            Some(j) => &self.1[j],
        }
    }

    fn len(&self) -> usize {
        self.0.len() + self.1.len()
    }
}

// One thread owns the ring: plain loads and stores, no read-modify-write instructions.
impl<'w> Ring<'w> {
    fn new(ws: &'w Workspace, b: usize) -> Self {
        let (words, words1) = bitmap_words(b);
        let (tail, bits) = ws.far2.slots().split_at(b);
        let (level0, rest) = bits.split_at(words);
        let level1 = &rest[..words1];
        // A search that drained its ring leaves the bitmap clear (`Workspace::ring_clear`), so a
        // stream of small repairs does not clear n / 32 words each.
        if ws.ring_clear.swap(0, Relaxed) != b {
            for w in level0.iter().chain(level1) {
                w.store(0, Relaxed);
            }
        }
        Ring {
            mask: b - 1,
            pool: Pool(ws.near_a.slots(), ws.near_b.slots()),
            first: ws.far.slots(),
            tail,
            level0,
            level1,
            free: NONE,
            freed: 0,
            unused: 0,
        }
    }

    #[inline(always)]
    fn occupied(&self, b: usize) -> bool {
        self.level0[b / 32].load(Relaxed) as u32 & (1 << (b % 32)) != 0
    }

    #[inline(always)]
    fn set(&self, b: usize) {
        let w = b / 32;
        let old = self.level0[w].load(Relaxed);
        self.level0[w].store(old | 1 << (b % 32), Relaxed);
        if old == 0 {
            let l = &self.level1[w / 32];
            l.store(l.load(Relaxed) | 1 << (w % 32), Relaxed);
        }
    }

    #[inline(always)]
    fn clear(&self, b: usize) {
        let w = b / 32;
        let left = self.level0[w].load(Relaxed) & !(1 << (b % 32));
        self.level0[w].store(left, Relaxed);
        if left == 0 {
            let l = &self.level1[w / 32];
            l.store(l.load(Relaxed) & !(1 << (w % 32)), Relaxed);
        }
    }

    #[inline(always)]
    fn alloc(&mut self) -> Result<usize, Full> {
        if self.free != NONE {
            let k = self.free as usize;
            self.free = self.pool.at(k * BLOCK + BLOCK - 1).load(Relaxed);
            self.freed -= 1;
            return Ok(k);
        }
        if (self.unused + 1) * BLOCK > self.pool.len() {
            return Err(Full);
        }
        self.unused += 1;
        Ok(self.unused - 1)
    }

    #[inline]
    fn release(&mut self, k: usize) {
        self.pool.at(k * BLOCK + BLOCK - 1).store(self.free, Relaxed);
        self.free = k as i32;
        self.freed += 1;
    }

    /// Blocks that can still be taken: a vertex of out-degree k needs at most k.
    #[inline(always)]
    fn available(&self) -> usize {
        self.freed + self.pool.len() / BLOCK - self.unused
    }

    /// Appends entry `e` to bucket `b`.
    #[inline(always)]
    fn push(&mut self, e: u32, b: usize) -> Result<(), Full> {
        let mut at = if self.occupied(b) {
            self.tail[b].load(Relaxed) as usize
        } else {
            let k = self.alloc()?;
            self.first[b].store(k as i32, Relaxed);
            self.set(b);
            k * BLOCK
        };
        if at % BLOCK == BLOCK - 1 {
            let k = self.alloc()?;
            self.pool.at(at).store(k as i32, Relaxed);
            at = k * BLOCK;
        }
        self.pool.at(at).store(e as i32, Relaxed);
        self.tail[b].store(at as i32 + 1, Relaxed);
        Ok(())
    }

    /// The entries of a bucket from pool position `at` up to `end` (its tail), following the
    /// block links.
    fn entries(&self, mut at: usize, end: usize) -> impl Iterator<Item = u32> + '_ {
        std::iter::from_fn(move || {
            while at != end {
                if at % BLOCK == BLOCK - 1 {
                    at = self.pool.at(at).load(Relaxed) as usize * BLOCK;
                    continue;
                }
                at += 1;
                return Some(self.pool.at(at - 1).load(Relaxed) as u32);
            }
            None
        })
    }

    /// The first non-empty bucket at or after `from`, in ring order.
    fn first_from(&self, from: usize) -> Option<usize> {
        self.first_in(from).or_else(|| self.first_in(0))
    }

    /// The first non-empty bucket in `from..B`.
    fn first_in(&self, from: usize) -> Option<usize> {
        let w = from / 32;
        if w >= self.level0.len() {
            return None;
        }
        let here = self.level0[w].load(Relaxed) as u32 & (u32::MAX << (from % 32));
        if here != 0 {
            return Some(w * 32 + here.trailing_zeros() as usize);
        }
        let start = w + 1;
        if start >= self.level0.len() {
            return None;
        }
        let mut j = start / 32;
        let mut m = self.level1[j].load(Relaxed) as u32 & (u32::MAX << (start % 32));
        loop {
            if m != 0 {
                let w = j * 32 + m.trailing_zeros() as usize;
                let bits = self.level0[w].load(Relaxed) as u32;
                return Some(w * 32 + bits.trailing_zeros() as usize);
            }
            j += 1;
            if j >= self.level1.len() {
                return None;
            }
            m = self.level1[j].load(Relaxed) as u32;
        }
    }
}

/// The least and the largest distance of `ws.frontier`'s words (set for every entry).
pub(super) fn frontier_span<E: Exec>(run: &Run<'_, E>, ws: &Workspace) -> (u64, u64) {
    (0..ws.frontier.len()).fold((u64::MAX, 0), |(lo, hi), i| {
        let d = run.packing.dist(ws.packed[ws.frontier.get(i) as usize].load(Relaxed));
        (lo.min(d), hi.max(d))
    })
}

/// Runs the search from `ws.frontier` (words set, distances strictly lowered) on a ring of `b`
/// buckets. Returns `None` when near-far must finish it from `ws.frontier`: the frontier or the
/// weights do not fit the ring (nothing done; see [`fitting`]), or the blocks ran out (the
/// frontier then lists every vertex queued at its current word's distance; the expanded ones are
/// final and counted in `stats`). With `track`, as near-far: every vertex whose word it lowers is
/// flagged touched and listed in `candidates`.
pub(super) fn bucket_search<E: Exec>(
    run: &Run<'_, E>,
    ws: &Workspace,
    b: usize,
    gens: &mut Generations,
    stats: &mut UpdateStats,
    push_budget: Option<i64>,
    track: bool,
) -> Option<Search> {
    let p = run.packing;
    if ws.frontier.is_empty() {
        return Some(Search::Finished);
    }
    let (lo, hi) = frontier_span(run, ws);
    let wide = fitting(run.out.n, b, p.max_weight(), (lo, hi), run.delta)?;
    if wide.shift() == 0 {
        drain::<E, false>(run, ws, (b, wide), lo, gens, stats, push_budget, track)
    } else {
        drain::<E, true>(run, ws, (b, wide), lo, gens, stats, push_budget, track)
    }
}

/// [`bucket_search`] on a ring of `b` buckets coded by `wide`, the least distance queued being
/// `lo`. `WIDE`: buckets of several distances, drained in rounds until they stay empty (a vertex
/// whose distance drops inside the bucket being drained is queued in it again); else a bucket per
/// distance, each final when it is drained.
// Kept out of line: inlined into `near_far` it executes more instructions.
#[inline(never)]
#[allow(clippy::too_many_arguments)]
fn drain<E: Exec, const WIDE: bool>(
    run: &Run<'_, E>,
    ws: &Workspace,
    (b, wide): (usize, Wide),
    lo: u64,
    gens: &mut Generations,
    stats: &mut UpdateStats,
    push_budget: Option<i64>,
    track: bool,
) -> Option<Search> {
    let p = run.packing;
    let vertex = |e: u32| wide.vertex::<WIDE>(e);
    let mut ring = Ring::new(ws, b);
    for i in 0..ws.frontier.len() {
        let v = ws.frontier.get(i) as usize;
        let d = p.dist(ws.packed[v].load(Relaxed));
        if ring.push(wide.entry::<WIDE>(v as u32, d), wide.bucket(d) as usize & ring.mask).is_err() {
            return None; // the frontier alone fills the blocks: near-far takes it as it is
        }
    }
    let budget = push_budget.unwrap_or(i64::MAX);
    let (mut pushes, mut iterations) = (0i64, 0i64);
    let mut touched = track.then(|| Appender::new(&ws.candidates));
    let out = run.out;
    // The bucket being drained: its ring index and its number (its distance, one per bucket).
    let (mut at, mut bucket) = (wide.bucket(lo) as usize & ring.mask, wide.bucket(lo));
    let end = 'search: loop {
        if pushes > budget {
            break Some(Search::Abandoned);
        }
        let Some(next) = ring.first_from(at) else {
            break Some(Search::Finished);
        };
        bucket += (next.wrapping_sub(at) & ring.mask) as u64;
        at = next;
        iterations += 1;
        // The entries queued so far; the blocks are released as the walk leaves them (the link
        // is read first). With a bucket per distance, expanding one queues larger distances
        // only, all in other buckets (weights >= 1 and < B); a wide bucket's entries queued
        // meanwhile start a chain of their own, the next round.
        let tail = ring.tail[at].load(Relaxed) as usize;
        let mut pos = ring.first[at].load(Relaxed) as usize * BLOCK;
        ring.clear(at);
        ask_in_stages(&out, &ws.packed, || ring.entries(pos, tail).take(ASK_FIRST).map(vertex));
        let mut drained = 0;
        while pos != tail {
            if pos % BLOCK == BLOCK - 1 {
                let link = ring.pool.at(pos).load(Relaxed) as usize;
                ring.release(pos / BLOCK);
                pos = link * BLOCK;
                continue;
            }
            // A large bucket (a wide repair's, or the combined graph's with its weights of 1 to
            // K: 170 entries on average on the 1000^2 grid) is asked for as it drains, a stage at
            // a time: the words and row bounds of the next 32 entries half a batch before the
            // last batch runs out, their rows half a batch later, once the bounds are in (all
            // stages at once stalled on the bounds they read).
            drained += 1;
            if drained % ASK_FIRST == ASK_FIRST / 2 {
                for u in ring.entries(pos, tail).skip(ASK_FIRST / 2).take(ASK_FIRST) {
                    ask_word_and_row(&out, &ws.packed, vertex(u));
                }
            } else if drained % ASK_FIRST == 0 {
                for u in ring.entries(pos, tail).take(ASK_FIRST) {
                    ask_row(&out, vertex(u));
                }
            }
            let e = ring.pool.at(pos).load(Relaxed) as u32;
            let u = vertex(e);
            let d = p.dist(ws.packed[u].load(Relaxed));
            if !wide.live::<WIDE>(e, bucket, d) {
                pos += 1;
                continue; // queued again at a smaller distance since (and expanded there)
            }
            let row = out.row(u);
            if ring.available() < row.len() {
                hand_over(run, &ring, ws, wide, (pos, tail), (at, bucket), gens.next(ws));
                break 'search None;
            }
            pos += 1;
            pushes += 1;
            if let Some(t) = touched.as_mut() {
                touch(run, ws, u, t);
            }
            for (&x, &w) in out.col[row.clone()].iter().zip(&out.w[row]) {
                let x = x as usize;
                if x == run.source {
                    continue;
                }
                let nd = d + w as u64;
                if nd > p.max_candidate {
                    continue;
                }
                let cand = p.pack(nd, u as i32);
                let old = run.word(ws, x);
                if cand >= old {
                    continue;
                }
                ws.packed[x].store(cand, Relaxed);
                if nd < p.dist(old) {
                    if ring.push(wide.entry::<WIDE>(x as u32, nd), wide.bucket(nd) as usize & ring.mask).is_err() {
                        unreachable!("a block per out-edge was checked to be available");
                    }
                } else if let Some(t) = touched.as_mut() {
                    // A lower-id parent at the same distance: not expanded again, so listed here.
                    touch(run, ws, x, t);
                }
            }
        }
        ring.release((tail - 1) / BLOCK);
    };
    if end == Some(Search::Finished) {
        // Every bucket was drained: the bitmap is clear again.
        ws.ring_clear.store(b, Relaxed);
    }
    drop(touched);
    stats.pushes += pushes;
    stats.iterations += iterations;
    end
}

/// Lists in `ws.frontier`, for near-far to finish the search, every vertex still queued at its
/// current word's distance: the entries of the bucket being expanded (ring index `at`, number
/// `bucket`) from pool position `rest.0` on, and those of every other bucket (the one being
/// expanded again, where a wide one's next round has begun). Each is listed once: stamped with
/// generation `g`, since a vertex whose entries keep part of their place only may have two live
/// ones (`wide.rs`).
fn hand_over<E: Exec>(run: &Run<'_, E>, ring: &Ring<'_>, ws: &Workspace, wide: Wide, rest: (usize, usize), (at, bucket): (usize, u64), g: i32) {
    let frontier = &ws.frontier;
    frontier.clear();
    let mut out = Appender::new(frontier);
    let mut list = |e: u32, bucket: u64| {
        let v = wide.vertex::<true>(e);
        if wide.live::<true>(e, bucket, run.packing.dist(ws.packed[v].load(Relaxed))) && run.exec.claim(&ws.stamp[v], g) {
            out.push(v as i32);
        }
    };
    for e in ring.entries(rest.0, rest.1) {
        list(e, bucket);
    }
    let mut from = 0;
    while let Some(b) = ring.first_in(from) {
        let number = bucket + (b.wrapping_sub(at) & ring.mask) as u64;
        let start = ring.first[b].load(Relaxed) as usize * BLOCK;
        for e in ring.entries(start, ring.tail[b].load(Relaxed) as usize) {
            list(e, number);
        }
        from = b + 1;
    }
}

#[cfg(test)]
mod tests {
    use crate::graph::dijkstra::dijkstra;
    use crate::io::generators::changegen::{generate_changes, ChangeOptions};
    use crate::io::generators::graphgen::grid;
    use crate::{Csr, Fallback, Graph, Resources, SsspOptions, SsspResult, WeightLayout};

    fn grid_graph(side: usize, wmax: i32) -> Graph {
        let t = grid(side, side, 1, 1, wmax, 7).unwrap();
        Graph::new(Csr::from_arrays(t.n, 1, t.row_ptr, t.col_ind, &t.weights, WeightLayout::EdgeMajor).unwrap())
    }

    fn assert_oracle(g: &Graph, r: &SsspResult) {
        let (d, p) = dijkstra(g, 0, r.source());
        assert_eq!(r.distances(), &d[..]);
        assert_eq!(r.parents(), &p[..]);
    }

    #[test]
    fn a_static_solve_expands_every_reachable_vertex_once() {
        let g = grid_graph(40, 100);
        let res = Resources::parallel(1).unwrap();
        let r = SsspResult::compute(&res, &g, 5, 0, &SsspOptions::default()).unwrap();
        assert_oracle(&g, &r);
        let s = r.stats();
        assert_eq!((s.pushes, s.epochs), (1600, 0), "one expansion per vertex, no far pile");
        // The sequential reference keeps near-far (its counters are the originals').
        let seq = SsspResult::compute(&Resources::sequential(), &g, 5, 0, &SsspOptions::default()).unwrap();
        assert!(seq.stats().pushes > 1600 && seq.stats().epochs > 0);
        assert_eq!((seq.distances(), seq.parents()), (r.distances(), r.parents()));
    }

    #[test]
    fn a_ring_fits_the_weights_and_the_frontier_or_near_far_runs() {
        let shift = |b, w, span| super::fitting(1000, b, w, span, 1 << 20).map(|x| x.shift());
        assert_eq!(shift(512, 511, (7, 518)), Some(0), "a bucket per distance");
        assert_eq!(shift(512, 512, (7, 7)), Some(1), "(512 >> 1) + 2 buckets");
        assert_eq!(shift(512, 5000, (0, 0)), Some(4), "(5000 >> 4) + 2 = 314; >> 3 needs 627");
        assert_eq!(shift(512, 100, (0, 100_000)), Some(8), "the frontier's span sets it");
        assert_eq!(shift(128, 5000, (0, 0)), None, "too few buckets to widen");
        assert_eq!(shift(4, 16, (9, 14)), None);
        // Buckets wider than near-far's window: near-far.
        assert_eq!(super::fitting(1000, 512, 5000, (0, 0), 16).map(|x| x.shift()), Some(4));
        assert_eq!(super::fitting(1000, 512, 5000, (0, 0), 15).map(|x| x.shift()), None);
    }

    #[test]
    fn weights_wider_than_the_ring_take_buckets_of_several_distances() {
        // 900 vertices: a ring of 512 buckets; weights up to 5000 (and, scaled, up to 2.1e9,
        // with ties) do not fit a bucket per distance, so a repair drains buckets of 16 (2^22)
        // distances in rounds, and near-far never runs.
        let res = Resources::parallel(1).unwrap();
        for (wmax, scale) in [(5000, 1), (60, 35_000_000)] {
            let t = grid(30, 30, 1, 1, wmax, 7).unwrap();
            let w: Vec<i32> = t.weights.iter().map(|&w| w * scale).collect();
            let mut g = Graph::new(Csr::from_arrays(t.n, 1, t.row_ptr, t.col_ind, &w, WeightLayout::EdgeMajor).unwrap());
            let never = SsspOptions { fallback: Fallback::Never, ..Default::default() };
            let mut r = SsspResult::compute(&res, &g, 0, 0, &never).unwrap();
            assert_oracle(&g, &r);
            for seed in 1..4 {
                let opt = ChangeOptions { changes: 60, seed, safe: false, source: 0, ..Default::default() };
                let (batch, _) = generate_changes(&g.to_csr(), &opt).unwrap();
                let s = crate::update_one(&res, &mut g, &batch.view(), &mut r).unwrap();
                assert_oracle(&g, &r);
                assert!(!s.fallback_used && s.pushes > 0 && s.epochs == 0, "the bucket queue alone: {s:?}");
            }
        }
    }

    /// A broom: the source reaches `hubs` hubs (weight 1), each hub `leaves` leaves, leaf `l` of
    /// hub `h` at weight `scale * (1 + h * leaves + l)` (`distinct`: every leaf in a bucket of its
    /// own) or `scale * (1 + l)`; every leaf has an edge of weight 1 to the next hub's first leaf.
    /// `n` vertices in all, the rest isolated.
    fn broom(hubs: usize, leaves: usize, distinct: bool, scale: i32, n: usize) -> Graph {
        let (mut src, mut dst, mut w) = (Vec::new(), Vec::new(), Vec::new());
        let hub = |h: usize| 1 + h * (1 + leaves);
        for h in 0..hubs {
            src.push(0);
            dst.push(hub(h) as i32);
            w.push(1);
            for l in 0..leaves {
                let leaf = (hub(h) + 1 + l) as i32;
                src.push(hub(h) as i32);
                dst.push(leaf);
                w.push(scale * (1 + l as i32 + if distinct { (h * leaves) as i32 } else { 0 }));
                src.push(leaf);
                dst.push((hub((h + 1) % hubs) + 1) as i32);
                w.push(1);
            }
        }
        Graph::new(Csr::from_edges(n, 1, &src, &dst, &w).unwrap())
    }

    /// The broom's tree after its hubs were cut off from the source and joined again: a repair
    /// from the 10 hubs at distance 1 (a static solve runs on `dial.rs`'s ring instead).
    fn rejoined(res: &Resources, distinct: bool, scale: i32) -> (Graph, SsspResult, crate::UpdateStats) {
        let mut g = broom(10, 60, distinct, scale, 1100);
        let never = SsspOptions { fallback: Fallback::Never, ..Default::default() };
        let mut r = SsspResult::compute(res, &g, 0, 0, &never).unwrap();
        let hubs = || (0..10i32).map(|h| 1 + h * 61);
        let mut cut = crate::Batch::new(1);
        let mut join = crate::Batch::new(1);
        for h in hubs() {
            cut.delete(0, h);
            join.insert(0, h, &[1]);
        }
        crate::update_one(res, &mut g, &cut.view(), &mut r).unwrap();
        assert!(r.parents()[1..].iter().all(|&p| p < 0), "cut off");
        let s = crate::update_one(res, &mut g, &join.view(), &mut r).unwrap();
        assert!(!s.fallback_used);
        (g, r, s)
    }

    #[test]
    fn running_out_of_blocks_hands_the_queued_vertices_to_near_far() {
        // 1100 vertices: a ring of 1024 distances and 275 blocks of 7 entries. Each hub's 60
        // leaves open 60 buckets of their own, so the fifth hub no longer finds a block per
        // out-edge and near-far finishes from the queued vertices.
        let res = Resources::parallel(1).unwrap();
        let (g, r, s) = rejoined(&res, true, 1);
        assert_oracle(&g, &r);
        // 610 vertices to reach: near-far re-expands some of them, the bucket queue never does.
        assert!(s.pushes > 610, "near-far finished the search: {s:?}");
        // The leaves of all hubs share 60 buckets: the bucket queue alone.
        let (g, r, s) = rejoined(&res, false, 1);
        assert_oracle(&g, &r);
        assert_eq!((s.epochs, s.pushes), (0, 610));
        // Weights up to 600,000 take buckets of 1,024 distances, one per leaf nearly: the blocks
        // run out as well, and the live entries of the wide buckets are handed over.
        let (g, r, s) = rejoined(&res, true, 1000);
        assert_oracle(&g, &r);
        assert!(s.pushes > 610, "near-far finished the search: {s:?}");
        let (g, r, s) = rejoined(&res, false, 1000);
        assert_oracle(&g, &r);
        assert_eq!((s.epochs, s.pushes, s.iterations), (0, 610, 61), "the hubs' bucket, then the leaves' 60");
    }

    #[test]
    fn repairs_match_a_fresh_solve() {
        let res = Resources::parallel(1).unwrap();
        // Weights up to 3 make many ties: vertices that only change parent.
        for (safe, hops, wmax) in [(true, 0, 100), (false, 0, 100), (true, 6, 100), (true, 0, 3), (false, 6, 3)] {
            let mut g = grid_graph(150, wmax);
            let opt = ChangeOptions { changes: 300, seed: 777, safe, local_hops: hops, source: 3, ..Default::default() };
            let (batch, _) = generate_changes(&g.to_csr(), &opt).unwrap();
            let never = SsspOptions { fallback: Fallback::Never, ..Default::default() };
            let mut r = SsspResult::compute(&res, &g, 3, 0, &never).unwrap();
            let old = r.distances().to_vec();
            let s = crate::update_one(&res, &mut g, &batch.view(), &mut r).unwrap();
            assert!(!s.fallback_used && s.pushes > 0);
            assert_oracle(&g, &r);
            // Expanded: the vertices whose distance dropped, and invalidated ones, each once.
            let dropped = r.distances().iter().zip(&old).filter(|(new, old)| new < old).count() as i64;
            assert_eq!(s.epochs, 0);
            assert!(s.pushes >= dropped && s.pushes <= dropped + s.invalidated, "{s:?}, {dropped} dropped");
        }
    }
}
