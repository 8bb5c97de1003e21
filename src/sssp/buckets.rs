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
//! wraps onto itself. A bucket is a chain of blocks of [`BLOCK`] slots holding vertex ids; a vertex
//! whose distance drops is queued again in its new bucket and its old entry is skipped when met
//! (its word no longer has that distance). A drained bucket's blocks go back to a free list, so
//! the blocks in use hold about the frontier's entries. Everything lives in the workspace's
//! near-far lists, which a one-member search does not use: the blocks in `near_a` and `near_b`
//! (n / 4 blocks), the first block of each bucket in `far`, the append position of each bucket and
//! a two-level bitmap of the non-empty buckets in `far2`.
//!
//! Where the ring does not fit (a starting frontier spanning `B` distances or more, weights of `B`
//! or more, or the blocks run out), the search goes on with near-far from the queued vertices.
//! Only the parallel executor uses it, and only where its team would have one member: the
//! sequential reference keeps the near-far schedule, whose counters reproduce the originals'.
//! A static solve runs on the contiguous buckets of `dial.rs` instead, which cost less per entry
//! but grow with the entries queued: this fixed pool serves the repairs, whose starting
//! frontiers spread over many distances.
//! Counters: `pushes` counts expansions, `iterations` the distances expanded (non-empty buckets),
//! `epochs` stays 0.

use super::prefetch::{ask_in_stages, ask_row, ask_word_and_row, ASK_FIRST};
use super::run::{touch, Run};
use super::near_far::Search;
use super::exec::Exec;
use super::packing::Packing;
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

/// The ring size for a search of `n` vertices whose weights are at most `max_weight`: the
/// largest power of two whose append positions and bitmap fit in one list of n slots, if it
/// exceeds the largest weight.
pub(super) fn ring_size(n: usize, max_weight: u64) -> Option<usize> {
    let fits = |b: usize| {
        let (words, words1) = bitmap_words(b);
        b + words + words1 <= n
    };
    let mut b = 1usize << (usize::BITS - 1 - n.max(1).leading_zeros());
    while b > 1 && !fits(b) {
        b /= 2;
    }
    (fits(b) && max_weight < b as u64).then_some(b)
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

    /// Appends `v` to bucket `b`.
    #[inline(always)]
    fn push(&mut self, v: usize, b: usize) -> Result<(), Full> {
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
        self.pool.at(at).store(v as i32, Relaxed);
        self.tail[b].store(at as i32 + 1, Relaxed);
        Ok(())
    }

    /// The entries of a bucket from pool position `at` up to `end` (its tail), following the
    /// block links.
    fn entries(&self, mut at: usize, end: usize) -> impl Iterator<Item = usize> + '_ {
        std::iter::from_fn(move || {
            while at != end {
                if at % BLOCK == BLOCK - 1 {
                    at = self.pool.at(at).load(Relaxed) as usize * BLOCK;
                    continue;
                }
                at += 1;
                return Some(self.pool.at(at - 1).load(Relaxed) as usize);
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

/// Runs the search from `ws.frontier` (words set, distances strictly lowered) on a ring of `b`
/// buckets. Returns `None` when near-far must finish it from `ws.frontier`: the frontier spans
/// `b` distances or more (nothing done), or the blocks ran out (the frontier then lists every
/// vertex queued at its current word's distance; the expanded ones are final and counted in
/// `stats`). With `track`, as near-far: every vertex whose word it lowers is flagged touched and
/// listed in `candidates`.
// Kept out of line: inlined into `near_far` it executes more instructions.
#[inline(never)]
pub(super) fn bucket_search<E: Exec>(
    run: &Run<'_, E>,
    ws: &Workspace,
    b: usize,
    stats: &mut UpdateStats,
    push_budget: Option<i64>,
    track: bool,
) -> Option<Search> {
    let p = run.packing;
    let dist = |v: usize| p.dist(ws.packed[v].load(Relaxed));
    if ws.frontier.is_empty() {
        return Some(Search::Finished);
    }
    let (mut lo, mut hi) = (u64::MAX, 0);
    for i in 0..ws.frontier.len() {
        let d = dist(ws.frontier.get(i) as usize);
        lo = lo.min(d);
        hi = hi.max(d);
    }
    if hi - lo >= b as u64 {
        return None;
    }
    let mut ring = Ring::new(ws, b);
    for i in 0..ws.frontier.len() {
        let v = ws.frontier.get(i) as usize;
        if ring.push(v, dist(v) as usize & ring.mask).is_err() {
            return None; // the frontier alone fills the blocks: near-far takes it as it is
        }
    }
    let budget = push_budget.unwrap_or(i64::MAX);
    let (mut pushes, mut iterations) = (0i64, 0i64);
    let mut touched = track.then(|| Appender::new(&ws.candidates));
    let out = run.out;
    let (mut at, mut d) = (lo as usize & ring.mask, lo);
    let end = 'search: loop {
        if pushes > budget {
            break Some(Search::Abandoned);
        }
        let Some(next) = ring.first_from(at) else {
            break Some(Search::Finished);
        };
        d += (next.wrapping_sub(at) & ring.mask) as u64;
        at = next;
        iterations += 1;
        // Expanding distance d queues larger distances only, all in other buckets (weights >= 1
        // and < B), so this bucket does not grow while it is drained; its blocks are released as
        // the walk leaves them (the link is read first).
        let tail = ring.tail[at].load(Relaxed) as usize;
        let mut pos = ring.first[at].load(Relaxed) as usize * BLOCK;
        ring.clear(at);
        ask_in_stages(&out, &ws.packed, || ring.entries(pos, tail).take(ASK_FIRST));
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
                    ask_word_and_row(&out, &ws.packed, u);
                }
            } else if drained % ASK_FIRST == 0 {
                for u in ring.entries(pos, tail).take(ASK_FIRST) {
                    ask_row(&out, u);
                }
            }
            let u = ring.pool.at(pos).load(Relaxed) as usize;
            let wu = ws.packed[u].load(Relaxed);
            if p.dist(wu) != d {
                pos += 1;
                continue; // queued again at a smaller distance and expanded there
            }
            let row = out.row(u);
            if ring.available() < row.len() {
                hand_over(&ring, ws, p, (pos, tail), at, d);
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
                    if ring.push(x, nd as usize & ring.mask).is_err() {
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
/// current word's distance: the entries of the bucket being expanded (`at`, distance `d`) from
/// pool position `rest.0` on, and those of every other bucket. A vertex's live entry is the one
/// in the bucket of its distance, so each is listed once.
fn hand_over(ring: &Ring<'_>, ws: &Workspace, p: Packing, rest: (usize, usize), at: usize, d: u64) {
    let live = |v: usize, bucket_distance: u64| p.dist(ws.packed[v].load(Relaxed)) == bucket_distance;
    let frontier = &ws.frontier;
    frontier.clear();
    let mut out = Appender::new(frontier);
    for v in ring.entries(rest.0, rest.1) {
        if live(v, d) {
            out.push(v as i32);
        }
    }
    let mut from = 0;
    while let Some(b) = ring.first_in(from) {
        let bd = d + (b.wrapping_sub(at) & ring.mask) as u64;
        let start = ring.first[b].load(Relaxed) as usize * BLOCK;
        for v in ring.entries(start, ring.tail[b].load(Relaxed) as usize) {
            if live(v, bd) {
                out.push(v as i32);
            }
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
    fn weights_as_wide_as_the_ring_run_near_far() {
        // 900 vertices: a ring of 512 distances; weights up to 5000 do not fit it, so a repair
        // runs near-far (a static solve runs on `dial.rs`'s buckets of several distances).
        let res = Resources::parallel(1).unwrap();
        let mut g = grid_graph(30, 5000);
        let never = SsspOptions { fallback: Fallback::Never, ..Default::default() };
        let mut r = SsspResult::compute(&res, &g, 0, 0, &never).unwrap();
        assert_oracle(&g, &r);
        let opt = ChangeOptions { changes: 60, seed: 5, safe: false, source: 0, ..Default::default() };
        let (batch, _) = generate_changes(&g.to_csr(), &opt).unwrap();
        let s = crate::update_one(&res, &mut g, &batch.view(), &mut r).unwrap();
        assert_oracle(&g, &r);
        assert!(!s.fallback_used && s.epochs > 0, "near-far ran: {s:?}");
    }

    /// A broom: the source reaches `hubs` hubs (weight 1), each hub `leaves` leaves, leaf `l` of
    /// hub `h` at weight `1 + h * leaves + l` (`distinct`: every leaf in a bucket of its own) or
    /// `1 + l`; every leaf has an edge of weight 1 to the next hub's first leaf. `n` vertices in
    /// all, the rest isolated.
    fn broom(hubs: usize, leaves: usize, distinct: bool, n: usize) -> Graph {
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
                w.push(1 + l as i32 + if distinct { (h * leaves) as i32 } else { 0 });
                src.push(leaf);
                dst.push((hub((h + 1) % hubs) + 1) as i32);
                w.push(1);
            }
        }
        Graph::new(Csr::from_edges(n, 1, &src, &dst, &w).unwrap())
    }

    /// The broom's tree after its hubs were cut off from the source and joined again: a repair
    /// from the 10 hubs at distance 1 (a static solve runs on `dial.rs`'s ring instead).
    fn rejoined(res: &Resources, distinct: bool) -> (Graph, SsspResult, crate::UpdateStats) {
        let mut g = broom(10, 60, distinct, 1100);
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
        let (g, r, s) = rejoined(&res, true);
        assert_oracle(&g, &r);
        // 610 vertices to reach: near-far re-expands some of them, the bucket queue never does.
        assert!(s.pushes > 610, "near-far finished the search: {s:?}");
        // The leaves of all hubs share 60 buckets: the bucket queue alone.
        let (g, r, s) = rejoined(&res, false);
        assert_oracle(&g, &r);
        assert_eq!((s.epochs, s.pushes), (0, 610));
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
