//! The combined graph a MOSP result keeps between updates, changed in place at the vertices
//! whose parent changed in one of the K trees.
//!
//! The combined graph depends on the K parent arrays only, vertex by vertex: v's in-edges are its
//! distinct parents among the trees. An update of the trees that changes the parents of a few
//! vertices (a local batch on the 1000^2 grid: 3-5 % of them) changes only those vertices'
//! in-edges, and the out-rows of their old and new parents, where a rebuild would pay for all.
//!
//! Layout:
//! - **In-slots**, K per vertex (`v * K + j`): tree j's parent of v with the combined weight of
//!   that edge, or v itself with weight `base` where tree j has none. The slots are both the
//!   snapshot of the parents the graph was built from (what tells the changed vertices) and the
//!   reverse graph a repair pulls over: a parent shared by two trees sits in two slots with the
//!   same weight (the same candidate twice), and a self slot never improves a vertex (its
//!   candidate is the vertex's own distance plus `base`, and an invalidated vertex's word is INF).
//! - **Out-rows**: row p is `start(p)..end(p)` of `col`/`w` (the pair at `bounds[2p]`, in one
//!   cache line as a CSR's `row_ptr[p..p + 2]`: kept in two arrays, the 1M-vertex random
//!   geometric graph's combined solve waited on two cache misses per row), with room for
//!   `cap[p]` entries from its start. A full build sizes every row to its degree and fills the
//!   rows by ascending v (the originals' single-threaded order, which the sequential reference's
//!   counters follow), or, for a graph without slots on a parallel executor, reads each row off
//!   the graph the trees were solved on, in its order, end to end under a CSR row pointer (such
//!   a graph is never changed in place); a removal swaps the row's last entry in;
//!   a row that is full moves to the end of the arrays with twice the room (at least 2), leaving
//!   its old slots unused. Past as many unused slots as live ones the next update builds the
//!   graph afresh. Row order does not change a tree: ties go to the lowest id.

use crate::graph::{resize_for_overwrite, resize_for_overwrite_with_room, MAX_OBJECTIVES};
use crate::sssp::exec::Exec;
use crate::sssp::run::atomic_i32;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicI64, AtomicUsize, Ordering::Relaxed};
use crate::sssp::prefetch::{prefetch_at, AHEAD};
use crate::sssp::run::{InView, OutView};

/// The combined graph of K trees (see the module doc).
#[derive(Debug, Clone, Default)]
pub(crate) struct CombinedGraph {
    k: usize,
    source: usize,
    in_ptr: Vec<i32>,
    in_tails: Vec<i32>,
    in_w: Vec<i32>,
    /// (start, end) of each row; with `row_ptr`, the start of each row and the end of the last.
    bounds: Vec<i32>,
    /// Room of each row (empty with `row_ptr`).
    cap: Vec<i32>,
    /// Rows laid end to end, never changed in place: `bounds` is a CSR row pointer, which a
    /// build writes a third of the words of the pairs and `cap` for.
    row_ptr: bool,
    n: usize,
    col: Vec<i32>,
    w: Vec<i32>,
    edges: usize,
    weight_sum: i64,
    /// Slots of rows that moved to the end of `col`/`w`.
    unused: usize,
    /// Built for the parents of the trees as of the last combine.
    valid: bool,
}

/// Vertices a thread takes at a time in a build's passes.
const BUILD_GRAIN: usize = 1 << 14;

/// Rows of the graph up to this long drop a repeated combined edge by a look along the row.
const DEDUP_SCAN: usize = 32;

/// The most trees whose edge weights are looked up by mask (see `build_rows_by_graph`).
pub(super) const MASK_TREES: usize = 4;

/// Tree j's parent of `v`, or `v` itself where it has none or `v` is the source, which has no
/// in-edges (the slot's form).
#[inline(always)]
fn slot_tail(parents: &[&[i32]], v: usize, j: usize, source: usize) -> i32 {
    let p = parents[j][v];
    if p < 0 || v == source {
        v as i32
    } else {
        p
    }
}

/// Writes v's K slots: the tails of `parents` and their combined weights (`base` for a self slot).
#[inline(always)]
fn write_slots(parents: &[&[i32]], v: usize, source: usize, tails: &mut [i32], weights: &mut [i32], terms: &[i64], base: i64) {
    write_tails(parents, v, source, tails);
    write_weights(v, tails, weights, terms, base);
}

/// The tails of v's K slots.
#[inline(always)]
pub(super) fn write_tails(parents: &[&[i32]], v: usize, source: usize, tails: &mut [i32]) {
    for (j, t) in tails.iter_mut().enumerate() {
        *t = slot_tail(parents, v, j, source);
    }
}

/// The weights of v's K slots of `tails`.
#[inline(always)]
fn write_weights(v: usize, tails: &[i32], weights: &mut [i32], terms: &[i64], base: i64) {
    for (w, &t) in weights.iter_mut().zip(tails.iter()) {
        *w = if t == v as i32 { base as i32 } else { weight_of(tails, t, terms, base) };
    }
}

/// The weight of edge (p, v) in the combined graph of `tails` (v's K slots): base minus the
/// terms of the trees whose slot holds p.
#[inline(always)]
pub(super) fn weight_of(tails: &[i32], p: i32, terms: &[i64], base: i64) -> i32 {
    // Without a branch: whether two trees share a parent is a coin toss on most graphs, and
    // its mispredictions were most of a build's time.
    let shared: i64 = tails.iter().zip(terms).map(|(&t, &term)| std::hint::select_unpredictable(t == p, term, 0)).sum();
    (base - shared) as i32
}

/// The combined weight of an edge held by the trees of each mask of `K` bits (bit j: tree j),
/// for K up to [`MASK_TREES`]: `base` minus those trees' terms (entries past 2^K are 0).
pub(super) fn weights_by_mask<const K: usize>(terms: &[i64], base: i64) -> [i64; 1 << MASK_TREES] {
    const { assert!(K <= MASK_TREES) };
    std::array::from_fn(|m| if m >> K == 0 { base - (0..K).filter(|j| m >> j & 1 == 1).map(|j| terms[j]).sum::<i64>() } else { 0 })
}

/// Whether no tree has a parent of `v`: v has K self slots and no in-edge (most vertices where
/// the source reaches a small part of the graph: usroads from vertex 0, 352 edges in 129K rows).
#[inline(always)]
pub(super) fn unreached(parents: &[&[i32]], v: usize) -> bool {
    parents.iter().all(|p| p[v] < 0)
}

/// Whether slot `j`'s tail is an edge of its own: not a self slot, and not a tail of a slot
/// before it (compared without a branch, as in [`weight_of`]).
#[inline(always)]
pub(super) fn first_edge(tails: &[i32], j: usize, v: usize) -> bool {
    let t = tails[j];
    let seen = tails[..j].iter().fold(false, |seen, &x| seen | (x == t));
    !seen & (t != v as i32)
}

impl CombinedGraph {
    pub(crate) fn is_valid(&self) -> bool {
        self.valid
    }

    pub(crate) fn invalidate(&mut self) {
        self.valid = false;
    }

    /// Built for `n` vertices and `k` trees with its slots, and not too holed to keep.
    pub(crate) fn fits(&self, n: usize, k: usize) -> bool {
        self.valid && self.k == k && self.cap.len() == n && self.has_slots() && self.unused <= self.col.len() / 2
    }

    pub(crate) fn n(&self) -> usize {
        self.n
    }

    pub(crate) fn edges(&self) -> usize {
        self.edges
    }

    pub(crate) fn weight_sum(&self) -> i64 {
        self.weight_sum
    }

    pub(crate) fn bytes(&self) -> usize {
        4 * [&self.in_ptr, &self.in_tails, &self.in_w, &self.bounds, &self.cap, &self.col, &self.w]
            .iter()
            .map(|v| v.capacity())
            .sum::<usize>()
    }

    pub(crate) fn out_view(&self) -> OutView<'_> {
        OutView {
            bounds: &self.bounds,
            stride: if self.row_ptr { 1 } else { 2 },
            n: self.n(),
            col: &self.col,
            w: &self.w,
            edges: self.edges,
            guard: None,
        }
    }

    pub(crate) fn in_view(&self) -> InView<'_> {
        InView {
            bounds: &self.in_ptr,
            stride: 1,
            n: self.n(),
            col: &self.in_tails,
            w: &self.in_w,
            edges: self.in_tails.len(),
            guard: None,
        }
    }

    /// v's K in-slots: tails and weights.
    pub(crate) fn in_slots(&self, v: usize) -> (&[i32], &[i32]) {
        let r = v * self.k..(v + 1) * self.k;
        (&self.in_tails[r.clone()], &self.in_w[r])
    }

    /// Row p's out-edges: heads and weights.
    pub(crate) fn out_row(&self, p: usize) -> &[i32] {
        &self.col[self.out_view().unchecked_row(p)]
    }

    /// Whether one of v's parents in `parents` differs from the one the graph holds.
    #[inline(always)]
    pub(crate) fn changed(&self, parents: &[&[i32]], v: usize) -> bool {
        let tails = &self.in_tails[v * self.k..(v + 1) * self.k];
        (0..self.k).any(|j| tails[j] != slot_tail(parents, v, j, self.source))
    }

    /// Builds the graph of `parents` afresh; `source` has no in-edges. Without `slots` only the
    /// out-rows are made (a search needs no more): the graph cannot then be changed in place or
    /// pulled over, and costs 1 + 2K words a vertex less (`has_slots`).
    ///
    /// `graph`: the rows the trees were solved on, where known. A parallel executor then builds a
    /// graph without slots from them in one pass (see [`CombinedGraph::build_rows_by_graph`]).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn build<E: Exec>(
        &mut self,
        exec: &E,
        parents: &[&[i32]],
        source: usize,
        terms: &[i64],
        base: i64,
        slots: bool,
        graph: Option<&OutView<'_>>,
    ) {
        let (n, k) = (parents.first().map_or(0, |p| p.len()), parents.len());
        if k == 0 {
            // No trees (a MOSP result always has one or more): nothing to build.
            *self = CombinedGraph::default();
            return;
        }
        if !slots {
            for a in [&mut self.in_ptr, &mut self.in_tails, &mut self.in_w] {
                *a = Vec::new();
            }
        } else if self.k != k || self.in_ptr.len() != n + 1 {
            self.in_ptr.clear();
            self.in_ptr.extend((0..=n).map(|v| (v * k) as i32));
        }
        self.k = k;
        self.source = source;
        self.n = n;
        // Two to four trees are the common case: the loops of either build are unrolled for
        // them at compile time.
        let graph = graph.filter(|g| !slots && !exec.reference() && g.n == n && g.guard.is_none());
        if let Some(g) = graph {
            let built = match k {
                2 => self.build_rows_by_graph::<2, E>(exec, parents, g, n, terms, base),
                3 => self.build_rows_by_graph::<3, E>(exec, parents, g, n, terms, base),
                4 => self.build_rows_by_graph::<4, E>(exec, parents, g, n, terms, base),
                _ => self.build_rows_by_graph::<0, E>(exec, parents, g, n, terms, base),
            };
            if built {
                return;
            }
        }
        match k {
            2 => self.build_rows::<2, E>(exec, parents, n, terms, base, slots),
            3 => self.build_rows::<3, E>(exec, parents, n, terms, base, slots),
            4 => self.build_rows::<4, E>(exec, parents, n, terms, base, slots),
            _ => self.build_rows::<0, E>(exec, parents, n, terms, base, slots),
        }
    }

    /// Whether the in-slots were built (see [`CombinedGraph::build`]).
    pub(crate) fn has_slots(&self) -> bool {
        self.in_tails.len() == self.n * self.k
    }

    /// The slots (with `slots`) and rows of [`CombinedGraph::build`]; `K` is the number of
    /// trees, or 0 where it is read from `self.k`. Each pass runs over chunks of the vertices on
    /// `exec`'s threads (as the originals' two passes do); rows are filled by ascending v on one
    /// thread, in any order on more. The second pass reads the slots where they were kept, else
    /// it makes them again from `parents`.
    #[inline(always)]
    fn build_rows<const K: usize, E: Exec>(&mut self, exec: &E, parents: &[&[i32]], n: usize, terms: &[i64], base: i64, slots: bool) {
        let k = if K == 0 { self.k } else { K };
        let source = self.source;
        if slots {
            resize_for_overwrite(&mut self.in_tails, n * k);
            resize_for_overwrite(&mut self.in_w, n * k);
        }
        self.row_ptr = false;
        // Row degrees counted in `cap` first.
        self.cap.clear();
        self.cap.resize(n, 0);
        let weight_sum = AtomicI64::new(0);
        // A count or cursor moved by one; atomically only where chunks run at once (a locked add
        // on one thread cost the grid's build a third more).
        let concurrent = exec.concurrent_loops();
        let bump = |a: &AtomicI32| {
            if concurrent {
                a.fetch_add(1, Relaxed)
            } else {
                let old = a.load(Relaxed);
                a.store(old + 1, Relaxed);
                old
            }
        };
        {
            let cap = atomic_i32(&mut self.cap);
            let (in_tails, in_w) = (atomic_i32(&mut self.in_tails), atomic_i32(&mut self.in_w));
            exec.for_chunks(n, BUILD_GRAIN, |r| {
                let (mut tails, mut weights) = ([0i32; MAX_OBJECTIVES], [0i32; MAX_OBJECTIVES]);
                let (tails, weights) = (&mut tails[..k], &mut weights[..k]);
                for v in r {
                    if unreached(parents, v) {
                        if slots {
                            for j in 0..k {
                                in_tails[v * k + j].store(v as i32, Relaxed);
                                in_w[v * k + j].store(base as i32, Relaxed);
                            }
                        }
                        continue;
                    }
                    // The counts are random increments (a cache miss each on graphs whose ids do
                    // not follow their geometry): asked for ahead.
                    for p in parents {
                        prefetch_at(cap, p, v + AHEAD);
                    }
                    // The degrees need the tails only; the weights are made here for the
                    // slots, and in the second pass for the rows.
                    write_tails(parents, v, source, tails);
                    if slots {
                        write_weights(v, tails, weights, terms, base);
                    }
                    for j in 0..k {
                        let t = tails[j];
                        if slots {
                            in_tails[v * k + j].store(t, Relaxed);
                            in_w[v * k + j].store(weights[j], Relaxed);
                        }
                        if first_edge(tails, j, v) {
                            bump(&cap[t as usize]);
                        }
                    }
                }
            });
        }
        // Starts by a prefix sum; `cap` serves as the rows' cursors while they are filled (a 4n
        // array: the (start, end) pairs, twice its size, missed the cache more on the random
        // geometric graph), and is the rows' degree again after.
        resize_for_overwrite(&mut self.bounds, 2 * n);
        let mut at = 0i32;
        for (b, cap) in self.bounds.chunks_exact_mut(2).zip(self.cap.iter_mut()) {
            b[0] = at;
            at += *cap;
            *cap = b[0];
        }
        let total = at as usize;
        // Room for rows that move, so that a stream of updates seldom reallocates. Every slot up
        // to `total` is written below; slots past a row's end are never read.
        for a in [&mut self.col, &mut self.w] {
            resize_for_overwrite_with_room(a, total, total / 4);
        }
        {
            let (col, w, cursor) = (atomic_i32(&mut self.col), atomic_i32(&mut self.w), atomic_i32(&mut self.cap));
            let (in_tails, in_w) = (&self.in_tails, &self.in_w);
            exec.for_chunks(n, BUILD_GRAIN, |r| {
                let (mut made, mut made_w) = ([0i32; MAX_OBJECTIVES], [0i32; MAX_OBJECTIVES]);
                let mut sum = 0;
                for v in r {
                    if unreached(parents, v) {
                        continue;
                    }
                    let (tails, weights) = if slots {
                        for j in 0..k {
                            prefetch_at(cursor, in_tails, (v + AHEAD) * k + j);
                        }
                        (&in_tails[v * k..v * k + k], &in_w[v * k..v * k + k])
                    } else {
                        for p in parents {
                            prefetch_at(cursor, p, v + AHEAD);
                        }
                        write_slots(parents, v, source, &mut made[..k], &mut made_w[..k], terms, base);
                        (&made[..k], &made_w[..k])
                    };
                    for j in 0..k {
                        let t = tails[j];
                        if first_edge(tails, j, v) {
                            let e = bump(&cursor[t as usize]) as usize;
                            col[e].store(v as i32, Relaxed);
                            w[e].store(weights[j], Relaxed);
                            sum += weights[j] as i64;
                        }
                    }
                }
                weight_sum.fetch_add(sum, Relaxed);
            });
        }
        for (b, cap) in self.bounds.chunks_exact_mut(2).zip(self.cap.iter_mut()) {
            b[1] = *cap;
            *cap -= b[0];
        }
        self.edges = total;
        self.weight_sum = weight_sum.into_inner();
        self.unused = 0;
        self.valid = true;
    }

    /// The rows alone (no slots) of [`CombinedGraph::build`], read off `graph`, the rows the
    /// trees were solved on: row p is the edges p -> v of `graph` where p is v's parent in some
    /// tree, in `graph`'s order. A pass over the trees counts the edges by the chunk of their
    /// tail, then one pass over the rows, in order, writes every row whole at its chunk's offset,
    /// where [`CombinedGraph::build_rows`] counts and scatters by tail. False, with the rows left
    /// unusable, when `graph` lacks a tree's parent edge (adopted trees' parents are only trusted
    /// to be edges): the count of a chunk's edges then tells, and the caller builds by the trees.
    fn build_rows_by_graph<const K: usize, E: Exec>(&mut self, exec: &E, parents: &[&[i32]], graph: &OutView<'_>, n: usize, terms: &[i64], base: i64) -> bool {
        let k = if K == 0 { self.k } else { K };
        let source = self.source;
        let chunks = n.div_ceil(BUILD_GRAIN);
        let mut held: [&[i32]; MAX_OBJECTIVES] = [&[]; MAX_OBJECTIVES];
        held[..k].copy_from_slice(parents);
        let parents = &held[..k];
        let counts: Vec<AtomicUsize> = (0..chunks).map(|_| AtomicUsize::new(0)).collect();
        exec.for_chunks(n, BUILD_GRAIN, |r| {
            let mut local = vec![0usize; chunks];
            let mut tails = [0i32; MAX_OBJECTIVES];
            let tails = &mut tails[..k];
            for v in r {
                if unreached(parents, v) {
                    continue;
                }
                write_tails(parents, v, source, tails);
                for j in 0..k {
                    // Without a branch (whether two trees share a parent is a coin toss); a
                    // self slot's tail is v, in range.
                    local[tails[j] as usize / BUILD_GRAIN] += first_edge(tails, j, v) as usize;
                }
            }
            for (c, &x) in counts.iter().zip(&local) {
                if x > 0 {
                    c.fetch_add(x, Relaxed);
                }
            }
        });
        let mut starts = Vec::with_capacity(chunks + 1);
        let mut at = 0usize;
        starts.push(0);
        for c in &counts {
            at += c.load(Relaxed);
            starts.push(at);
        }
        let total = at;
        if total > i32::MAX as usize {
            return false;
        }
        // A graph without slots is never changed in place: no room for rows that move.
        resize_for_overwrite(&mut self.col, total);
        resize_for_overwrite(&mut self.w, total);
        resize_for_overwrite(&mut self.bounds, n + 1);
        self.cap = Vec::new();
        let (weight_sum, short) = (AtomicI64::new(0), AtomicBool::new(false));
        // With K known, an edge's weight by the set of trees that hold it (a bit each): a
        // compare per tree and a lookup, where the slots' form costs a third of the pass more.
        let by_mask = weights_by_mask::<K>(terms, base).map(|w| w as i32);
        {
            let (col, w) = (atomic_i32(&mut self.col), atomic_i32(&mut self.w));
            let bounds = atomic_i32(&mut self.bounds);
            exec.for_chunks(n, BUILD_GRAIN, |r| {
                let (mut at, end) = (starts[r.start / BUILD_GRAIN], starts[r.end.div_ceil(BUILD_GRAIN)]);
                let mut tails = [0i32; MAX_OBJECTIVES];
                let tails = &mut tails[..k];
                let mut long_row: Vec<(i32, i32)> = Vec::new();
                let mut sum = 0i64;
                for p in r {
                    let s = at;
                    // A vertex no tree reaches is no tree's parent.
                    if p == source || !unreached(parents, p) {
                        let row = graph.unchecked_row(p);
                        let heads = &graph.col[row];
                        // Parallel edges make a combined edge twice: the repeat (a head seen
                        // earlier in the row) is dropped, by a look back where the row is short,
                        // by a sort where it is long.
                        let long = heads.len() > DEDUP_SCAN;
                        long_row.clear();
                        for (i, &v) in heads.iter().enumerate() {
                            // Without branches: whether p is v's parent in a tree is a coin
                            // toss. An entry is written at `at` either way and kept by moving
                            // past it; the source has no in-edges.
                            let (hit, x) = if K > 0 {
                                let m = (0..K).fold(0usize, |m, j| m | ((held[j][v as usize] == p as i32) as usize) << j);
                                ((m != 0) & (v != p as i32) & (v as usize != source), by_mask[m])
                            } else {
                                write_tails(parents, v as usize, source, tails);
                                let hit = tails.iter().fold(false, |h, &t| h | (t == p as i32)) & (v != p as i32);
                                (hit, weight_of(tails, p as i32, terms, base))
                            };
                            if long {
                                if hit {
                                    long_row.push((v, x));
                                }
                                continue;
                            }
                            let keep = hit & !heads[..i].iter().fold(false, |d, &u| d | (u == v));
                            if at < end {
                                col[at].store(v, Relaxed);
                                w[at].store(x, Relaxed);
                            }
                            at += keep as usize;
                            sum += std::hint::select_unpredictable(keep, x as i64, 0);
                        }
                        if at > end {
                            short.store(true, Relaxed);
                            return;
                        }
                        if long {
                            long_row.sort_unstable();
                            long_row.dedup_by_key(|e| e.0);
                            if long_row.len() > end - at {
                                short.store(true, Relaxed);
                                return;
                            }
                            for &(v, x) in &long_row {
                                col[at].store(v, Relaxed);
                                w[at].store(x, Relaxed);
                                sum += x as i64;
                                at += 1;
                            }
                        }
                    }
                    bounds[p].store(s as i32, Relaxed);
                }
                // Fewer edges than the trees' parents: some parent edge is not in `graph`.
                if at != end {
                    short.store(true, Relaxed);
                }
                weight_sum.fetch_add(sum, Relaxed);
            });
        }
        if short.into_inner() {
            self.valid = false;
            return false;
        }
        self.bounds[n] = total as i32;
        self.row_ptr = true;
        self.edges = total;
        self.weight_sum = weight_sum.into_inner();
        self.unused = 0;
        self.valid = true;
        true
    }

    /// Brings v's in-edges, and the out-rows of its old and new parents, to `parents`.
    pub(crate) fn update_vertex(&mut self, parents: &[&[i32]], v: usize, terms: &[i64], base: i64) {
        let k = self.k;
        let slots = v * k..(v + 1) * k;
        let mut old = [0i32; crate::graph::MAX_OBJECTIVES];
        let mut old_w = [0i32; crate::graph::MAX_OBJECTIVES];
        old[..k].copy_from_slice(&self.in_tails[slots.clone()]);
        old_w[..k].copy_from_slice(&self.in_w[slots.clone()]);
        let (old, old_w) = (&old[..k], &old_w[..k]);
        write_slots(parents, v, self.source, &mut self.in_tails[slots.clone()], &mut self.in_w[slots.clone()], terms, base);
        let me = v as i32;
        // Old edges: gone, or with a new weight.
        for j in 0..k {
            let p = old[j];
            if p == me || old[..j].contains(&p) {
                continue;
            }
            match (0..k).find(|&i| self.in_tails[v * k + i] == p) {
                None => {
                    self.remove(p as usize, me);
                    self.edges -= 1;
                    self.weight_sum -= old_w[j] as i64;
                }
                Some(i) => {
                    let w = self.in_w[v * k + i];
                    if w != old_w[j] {
                        let e = self.find(p as usize, me);
                        self.w[e] = w;
                        self.weight_sum += (w - old_w[j]) as i64;
                    }
                }
            }
        }
        // New edges.
        for j in 0..k {
            let p = self.in_tails[v * k + j];
            if p == me || self.in_tails[v * k..v * k + j].contains(&p) || old.contains(&p) {
                continue;
            }
            let w = self.in_w[v * k + j];
            self.push(p as usize, me, w);
            self.edges += 1;
            self.weight_sum += w as i64;
        }
    }

    /// The slot of v in row p (present by construction).
    fn find(&self, p: usize, v: i32) -> usize {
        let (s, e) = (self.bounds[2 * p] as usize, self.bounds[2 * p + 1] as usize);
        s + self.col[s..e].iter().position(|&x| x == v).expect("a combined edge is in its row")
    }

    fn remove(&mut self, p: usize, v: i32) {
        let e = self.find(p, v);
        let last = self.bounds[2 * p + 1] as usize - 1;
        self.col[e] = self.col[last];
        self.w[e] = self.w[last];
        self.bounds[2 * p + 1] -= 1;
    }

    fn push(&mut self, p: usize, v: i32, w: i32) {
        let (s, e) = (self.bounds[2 * p] as usize, self.bounds[2 * p + 1] as usize);
        if e - s == self.cap[p] as usize {
            let cap = (2 * self.cap[p] as usize).max(2);
            let at = self.col.len();
            self.col.extend_from_within(s..e);
            self.w.extend_from_within(s..e);
            self.col.resize(at + cap, 0);
            self.w.resize(at + cap, 0);
            self.unused += self.cap[p] as usize;
            self.bounds[2 * p] = at as i32;
            self.bounds[2 * p + 1] = (at + e - s) as i32;
            self.cap[p] = cap as i32;
        }
        let e = self.bounds[2 * p + 1] as usize;
        self.col[e] = v;
        self.w[e] = w;
        self.bounds[2 * p + 1] += 1;
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::io::generators::rng::Mt19937;

    /// The distinct (p, v, weight) edges of a graph, sorted.
    fn edges_of(g: &CombinedGraph, n: usize) -> Vec<(i32, i32, i32)> {
        let out = g.out_view();
        let mut e: Vec<_> = (0..n).flat_map(|p| out.row(p).map(move |i| (p as i32, out.col[i], out.w[i]))).collect();
        e.sort_unstable();
        e
    }

    /// The combined graph by its definition: (p, v) iff p is v's parent in some tree, weighing
    /// base minus the terms of those trees.
    fn by_definition(parents: &[Vec<i32>], source: usize, terms: &[i64], base: i64) -> Vec<(i32, i32, i32)> {
        let n = parents[0].len();
        let mut e = Vec::new();
        for v in (0..n).filter(|&v| v != source) {
            let mut ps: Vec<i32> = parents.iter().map(|t| t[v]).filter(|&p| p >= 0).collect();
            ps.sort_unstable();
            ps.dedup();
            for p in ps {
                let shared: i64 = parents.iter().zip(terms).filter(|(t, _)| t[v] == p).map(|(_, &x)| x).sum();
                e.push((p, v as i32, (base - shared) as i32));
            }
        }
        e.sort_unstable();
        e
    }

    fn random_parents(rng: &mut Mt19937, n: usize, near: &[i32]) -> Vec<i32> {
        (0..n)
            .map(|v| match rng.next_u32() % 8 {
                0 => -1,
                1..=3 => near[v],
                _ => ((v as u32 + 1 + rng.next_u32() % 5) % n as u32) as i32,
            })
            .collect()
    }

    #[test]
    fn built_on_several_threads_it_is_the_graph_of_its_trees() {
        // Enough vertices for several chunks a thread.
        let pool = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
        let (lock, choice) = (parking_lot::Mutex::new(()), crate::resources::team_choice::TeamChoice::default());
        let exec = crate::sssp::exec::Parallel { pool: &pool, team_lock: &lock, choice: &choice, inline_all: Default::default() };
        assert!(exec.concurrent_loops());
        let (n, source) = (5 * BUILD_GRAIN + 17, 11);
        let mut rng = Mt19937::new(9);
        let near: Vec<i32> = (0..n).map(|v| ((v + n - 1) % n) as i32).collect();
        for terms in term_sets() {
            let base = 60 * (terms.len() as i64 + 1);
            let mut trees: Vec<Vec<i32>> = terms.iter().map(|_| random_parents(&mut rng, n, &near)).collect();
            // A run that no tree reaches, longer than a chunk (no in-edge, K self slots).
            for t in trees.iter_mut() {
                t[BUILD_GRAIN / 2..2 * BUILD_GRAIN].fill(-1);
            }
            let p: Vec<&[i32]> = trees.iter().map(Vec::as_slice).collect();
            let (mut par, mut seq) = (CombinedGraph::default(), CombinedGraph::default());
            par.build(&exec, &p, source, &terms, base, true, None);
            seq.build(&crate::sssp::exec::Sequential, &p, source, &terms, base, true, None);
            let want = by_definition(&trees, source, &terms, base);
            assert_eq!(edges_of(&par, n), want, "K = {}", terms.len());
            assert_eq!((par.edges(), par.weight_sum()), (seq.edges(), seq.weight_sum()));
            assert_eq!((par.in_tails.clone(), par.in_w.clone(), par.cap.clone()), (seq.in_tails.clone(), seq.in_w.clone(), seq.cap.clone()));
            assert!((0..n).all(|v| !par.changed(&p, v)));
            let k = terms.len();
            let (mut tails, mut weights) = (vec![0; k], vec![0; k]);
            for v in 0..n {
                write_slots(&p, v, source, &mut tails, &mut weights, &terms, base);
                assert_eq!(par.in_slots(v), (&tails[..], &weights[..]), "K = {k}, v {v}: slots");
            }
            assert!(par.has_slots() && par.fits(n, terms.len()));
            // Without its slots, over a graph built with them: the same rows (in the
            // sequential order on one thread), no slots, and not to be changed in place.
            for (g, e) in [(&mut par, true), (&mut seq, false)] {
                let before = (g.bounds.clone(), g.col[..g.edges()].to_vec(), g.w[..g.edges()].to_vec());
                if e {
                    g.build(&exec, &p, source, &terms, base, false, None);
                    assert_eq!(edges_of(g, n), want);
                } else {
                    g.build(&crate::sssp::exec::Sequential, &p, source, &terms, base, false, None);
                    assert_eq!((g.bounds.clone(), g.col[..g.edges()].to_vec(), g.w[..g.edges()].to_vec()), before);
                }
                assert!(!g.has_slots() && !g.fits(n, terms.len()) && g.in_tails.capacity() == 0);
            }
        }
    }

    /// The trees' terms the build tests take: K = 2, 3 and 4 (the unrolled passes) and 5 (the
    /// general ones).
    fn term_sets() -> [Vec<i64>; 4] {
        [vec![6, 3], vec![6, 3, 2], vec![12, 6, 4, 3], vec![60, 30, 20, 15, 12]]
    }

    /// A CSR with every tree edge of `trees`, each repeated at random (parallel edges), random
    /// other edges and self-loops, and a row from `hub` longer than a look back covers.
    pub(in crate::mosp) fn graph_of(rng: &mut Mt19937, trees: &[Vec<i32>], hub: usize) -> (Vec<i32>, Vec<i32>) {
        let n = trees[0].len();
        let mut rows: Vec<Vec<i32>> = vec![Vec::new(); n];
        for t in trees {
            for (v, &p) in t.iter().enumerate() {
                if p >= 0 {
                    rows[p as usize].push(v as i32);
                }
            }
        }
        for (u, row) in rows.iter_mut().enumerate() {
            match rng.next_u32() % 6 {
                0 => row.push(u as i32),
                1 => row.push((rng.next_u32() % n as u32) as i32),
                2 if !row.is_empty() => row.push(row[0]),
                _ => {}
            }
            for i in (1..row.len()).rev() {
                row.swap(i, rng.next_u32() as usize % (i + 1));
            }
        }
        let heads: Vec<i32> = (0..3 * DEDUP_SCAN).map(|i| ((hub + 1 + i % (2 * DEDUP_SCAN)) % n) as i32).collect();
        rows[hub].extend(heads);
        let mut row_ptr = vec![0i32];
        let mut col = Vec::new();
        for row in rows {
            col.extend(row);
            row_ptr.push(col.len() as i32);
        }
        (row_ptr, col)
    }

    #[test]
    fn built_from_the_graph_it_is_the_graph_of_its_trees() {
        let pools: Vec<rayon::ThreadPool> = [1, 3].iter().map(|&t| rayon::ThreadPoolBuilder::new().num_threads(t).build().unwrap()).collect();
        let (lock, choice) = (parking_lot::Mutex::new(()), crate::resources::team_choice::TeamChoice::default());
        let (n, source) = (3 * BUILD_GRAIN + 17, 11);
        let mut rng = Mt19937::new(23);
        let near: Vec<i32> = (0..n).map(|v| ((v + n - 1) % n) as i32).collect();
        for terms in term_sets() {
            let base = 60 * (terms.len() as i64 + 1);
            let mut trees: Vec<Vec<i32>> = terms.iter().map(|_| random_parents(&mut rng, n, &near)).collect();
            for t in trees.iter_mut() {
                t[source] = -1;
                // A run that no tree reaches, and children of the source past a look back's reach.
                t[BUILD_GRAIN / 2..2 * BUILD_GRAIN].fill(-1);
                for p in &mut t[source + 1..source + 2 * DEDUP_SCAN] {
                    if rng.next_u32().is_multiple_of(2) {
                        *p = source as i32;
                    }
                }
            }
            // Trees: no parent that no tree reaches (a solved tree's parents are reached).
            let mut settled = false;
            while !settled {
                settled = true;
                let dead: Vec<bool> = (0..n).map(|v| v != source && trees.iter().all(|t| t[v] < 0)).collect();
                for t in trees.iter_mut() {
                    for p in t.iter_mut().filter(|p| **p >= 0 && dead[**p as usize]) {
                        (*p, settled) = (-1, false);
                    }
                }
            }
            let (row_ptr, col) = graph_of(&mut rng, &trees, source);
            let w = vec![1; col.len()];
            let view = OutView { bounds: &row_ptr, stride: 1, n, col: &col, w: &w, edges: col.len(), guard: None };
            for pool in &pools {
                let exec = crate::sssp::exec::Parallel { pool, team_lock: &lock, choice: &choice, inline_all: Default::default() };
                // The trees' parent edges in the graph; then one that is not (v's parent in tree
                // 1 moved to a vertex with no edge to v), and one from a vertex that no tree
                // reaches: both are built by the trees.
                let mut trees = trees.clone();
                for case in 0..3 {
                    if case == 1 {
                        let v = 3 * BUILD_GRAIN;
                        let p = (0..n).find(|&p| p != v && !col[row_ptr[p] as usize..row_ptr[p + 1] as usize].contains(&(v as i32))).unwrap();
                        trees[1][v] = p as i32;
                    } else if case == 2 {
                        let last = trees.len() - 1;
                        trees[last][BUILD_GRAIN + 5] = BUILD_GRAIN as i32;
                    }
                    let p: Vec<&[i32]> = trees.iter().map(Vec::as_slice).collect();
                    let mut g = CombinedGraph::default();
                    g.build(&exec, &p, source, &terms, base, false, Some(&view));
                    let want = by_definition(&trees, source, &terms, base);
                    let what = format!("K = {}, {} threads, case {case}", terms.len(), pool.current_num_threads());
                    assert_eq!(edges_of(&g, n), want, "{what}");
                    assert_eq!(g.edges(), want.len(), "{what}");
                    assert_eq!(g.weight_sum(), want.iter().map(|e| e.2 as i64).sum::<i64>(), "{what}");
                    assert!(!g.has_slots() && g.is_valid(), "{what}");
                    // Rows are whole and laid end to end: under a row pointer when read off the
                    // graph, else each within its room.
                    assert_eq!(g.row_ptr, case == 0, "{what}");
                    if g.row_ptr {
                        assert!(g.cap.is_empty() && g.bounds.len() == n + 1 && g.bounds[0] == 0 && g.bounds[n] as usize == g.edges(), "{what}");
                        assert!(g.bounds.windows(2).all(|b| b[0] <= b[1]), "{what}");
                    } else {
                        let mut at = 0;
                        for v in 0..n {
                            let (s, e) = (g.bounds[2 * v] as usize, g.bounds[2 * v + 1] as usize);
                            assert!(s == at && e - s == g.cap[v] as usize, "{what}: row {v}");
                            at = e;
                        }
                    }
                    if case == 0 {
                        // Read off the graph, rows follow its order (the source's row aside,
                        // sorted): here a build by the trees would list them by ascending head.
                        let (s, e) = (row_ptr[source + 1] as usize, row_ptr[source + 2] as usize);
                        let mut by_graph: Vec<i32> = col[s..e].iter().copied().filter(|&v| trees.iter().any(|t| t[v as usize] == (source + 1) as i32)).collect();
                        let mut seen = std::collections::HashSet::new();
                        by_graph.retain(|&v| v != (source + 1) as i32 && seen.insert(v));
                        assert_eq!(g.out_row(source + 1), &by_graph[..], "{what}");
                    }
                }
            }
        }
    }

    #[test]
    fn updated_in_place_it_stays_the_graph_of_its_trees() {
        let (n, source) = (200, 3);
        let terms = [6i64, 3, 2];
        let base = 6 * 4;
        let mut rng = Mt19937::new(5);
        let near: Vec<i32> = (0..n).map(|v| ((v + n - 1) % n) as i32).collect();
        let mut trees: Vec<Vec<i32>> = (0..3).map(|_| random_parents(&mut rng, n, &near)).collect();
        for t in trees.iter_mut() {
            t[source] = -1;
        }
        let mut g = CombinedGraph::default();
        g.build(&crate::sssp::exec::Sequential, &trees.iter().map(Vec::as_slice).collect::<Vec<_>>(), source, &terms, base, true, None);
        assert_eq!(edges_of(&g, n), by_definition(&trees, source, &terms, base));
        let mut moved = false;
        for round in 0..60 {
            // Change a few vertices' parents in some trees; every 10th round, many of one row's.
            for _ in 0..1 + rng.next_u32() % 12 {
                let v = rng.next_u32() as usize % n;
                let j = rng.next_u32() as usize % 3;
                let p = (rng.next_u32() % n as u32) as i32;
                // No tree makes a vertex its own parent.
                if v != source {
                    trees[j][v] = if rng.next_u32().is_multiple_of(6) || p == v as i32 { -1 } else { p };
                }
            }
            if round % 10 == 0 {
                let hub = (rng.next_u32() % n as u32) as i32;
                for v in (0..n).filter(|&v| v != source && v as i32 != hub).take(30) {
                    trees[0][v] = hub;
                }
            }
            let p: Vec<&[i32]> = trees.iter().map(Vec::as_slice).collect();
            let changed: Vec<usize> = (0..n).filter(|&v| g.changed(&p, v)).collect();
            for &v in &changed {
                g.update_vertex(&p, v, &terms, base);
            }
            moved |= g.unused > 0;
            assert!((0..n).all(|v| !g.changed(&p, v)), "round {round}: the slots hold the trees");
            let want = by_definition(&trees, source, &terms, base);
            assert_eq!(edges_of(&g, n), want, "round {round}");
            assert_eq!(g.edges(), want.len());
            assert_eq!(g.weight_sum(), want.iter().map(|e| e.2 as i64).sum::<i64>());
            // The in-slots are the reverse graph, self slots aside.
            let mut rev: Vec<(i32, i32, i32)> = (0..n)
                .flat_map(|v| {
                    let (t, w) = g.in_slots(v);
                    t.iter().zip(w).filter(|(&p, _)| p != v as i32).map(move |(&p, &w)| (p, v as i32, w)).collect::<Vec<_>>()
                })
                .collect();
            rev.sort_unstable();
            rev.dedup();
            assert_eq!(rev, want, "round {round}: in-slots");
        }
        assert!(moved, "some row outgrew its room and moved");
    }
}
