//! Rows of edges with K weight columns: the borrowed view every reader takes ([`Rows`]), and the
//! store a resident graph changes in place ([`SlackRows`]).
//!
//! Row `u` is `bounds[s * u]..bounds[s * u + 1]` of the heads and of each weight column, for the
//! stride `s`: 1 for a compact CSR (`row_ptr`), 2 for a store whose rows have room to grow
//! ((start, end) pairs, so a row's two bounds share a cache line as in a CSR).
//!
//! In a [`SlackRows`] each row owns a region of slots: its edges in order, then its slack, slots
//! holding `!u` (the row's own id, inverted), so that a row has room for one more edge exactly when
//! the slot after its end holds its mark. A deletion shifts the rest of the row down by one (the
//! order of a row is part of the batch semantics: "the first copy of (u, v)"); an insertion takes
//! the first slack slot, or moves the row to the end of the arrays with half again its length as
//! room, leaving its old region unused. Unused slots are reclaimed by a compaction, in place, once
//! they pass a share of the edges or the end of the arrays has no room left for the moves a batch
//! may make.

use super::mirror::Journal;
use crate::error::{Error, Result};

/// The largest slot index (bounds are i32).
const MAX_SLOTS: usize = i32::MAX as usize;

/// Slots never handed to a row (past `used`): no row's mark.
const FREE: i32 = i32::MIN;

/// Ranges of tails a reverse build splits its passes into where loops run at once (each keeps a
/// count per row: `REVERSE_PARTS` x 4n bytes while it runs), and the fewest vertices a range takes.
const REVERSE_PARTS: usize = 2;
const REVERSE_MIN_PART: usize = 1 << 15;

/// Extra slots a compaction leaves at the end, as a share of the edges (1/32), for rows that move.
const TAIL_SHARE: usize = 32;

/// A compaction runs when a kept batch leaves the regions rows moved away from over
/// `edges / DEAD_SHARE` slots, or the rows' slack over `edges / SLACK_SHARE`, so that both stay a
/// small share of the graph between batches.
const DEAD_SHARE: usize = 16;
const SLACK_SHARE: usize = 16;

/// A compaction keeps the rows' slack while it is at most `edges / KEEP_SLACK_SHARE` slots.
const KEEP_SLACK_SHARE: usize = 32;

/// The slots a full row of `len` edges takes when an append moves it: half again its length
/// and the new edge, as a growing vector does (amortised moves; twice the length left road
/// graphs' rows, of two or three edges, with more slack than edges after a stream of batches).
fn moved_capacity(len: usize) -> usize {
    len + 1 + (len + 2) / 2
}

/// Borrowed rows: the view of a CSR or of a resident graph's out- or in-edges.
#[derive(Clone, Copy, Debug)]
pub struct Rows<'a> {
    n: usize,
    k: usize,
    bounds: &'a [i32],
    stride: usize,
    heads: &'a [i32],
    columns: Columns<'a>,
    edges: usize,
}

/// The weight columns of [`Rows`]: one objective-major array (a CSR), or one array per column
/// (a [`SlackRows`], whose columns grow apart).
#[derive(Clone, Copy, Debug)]
enum Columns<'a> {
    Strided { weights: &'a [i32], slots: usize },
    Separate(&'a [Vec<i32>]),
}

impl<'a> Rows<'a> {
    /// A compact CSR's rows (`row_ptr` of n + 1 entries, objective-major weights).
    pub(crate) fn compact(n: usize, k: usize, row_ptr: &'a [i32], heads: &'a [i32], weights: &'a [i32]) -> Self {
        debug_assert_eq!(row_ptr.len(), n + 1);
        debug_assert_eq!(weights.len(), heads.len() * k);
        Rows { n, k, bounds: row_ptr, stride: 1, heads, columns: Columns::Strided { weights, slots: heads.len() }, edges: heads.len() }
    }

    /// Number of vertices.
    pub fn n(&self) -> usize {
        self.n
    }

    /// Number of weight columns.
    pub fn k(&self) -> usize {
        self.k
    }

    /// Number of edges in the rows.
    pub fn edges(&self) -> usize {
        self.edges
    }

    /// The slot range of row `u`.
    #[inline(always)]
    pub fn row(&self, u: usize) -> std::ops::Range<usize> {
        let i = u * self.stride;
        let b = &self.bounds[i..i + 2];
        b[0] as usize..b[1] as usize
    }

    /// The heads (tails, for in-edges) by slot.
    #[inline(always)]
    pub fn heads(&self) -> &'a [i32] {
        self.heads
    }

    /// The weights of objective `j` by slot.
    #[inline(always)]
    pub fn column(&self, j: usize) -> &'a [i32] {
        match self.columns {
            Columns::Strided { weights, slots } => &weights[j * slots..(j + 1) * slots],
            Columns::Separate(c) => &c[j],
        }
    }

    /// The first slot of row `u` whose head is `v`, in row order.
    #[inline]
    pub fn first_edge(&self, u: usize, v: i32) -> Option<usize> {
        let r = self.row(u);
        let s = r.start;
        self.heads[r].iter().position(|&x| x == v).map(|i| s + i)
    }

    /// The bounds array and its stride (for the engines' views).
    pub(crate) fn bounds(&self) -> (&'a [i32], usize) {
        (self.bounds, self.stride)
    }

    /// Row by row, the compact CSR of these rows: `row_ptr`, heads, objective-major weights.
    pub(crate) fn to_compact(self) -> (Vec<i32>, Vec<i32>, Vec<i32>) {
        let (n, k, m) = (self.n, self.k, self.edges);
        let mut row_ptr = Vec::with_capacity(n + 1);
        let mut heads = Vec::with_capacity(m);
        row_ptr.push(0);
        for u in 0..n {
            heads.extend_from_slice(&self.heads[self.row(u)]);
            row_ptr.push(heads.len() as i32);
        }
        let mut weights = Vec::with_capacity(m * k);
        for j in 0..k {
            let c = self.column(j);
            for u in 0..n {
                weights.extend_from_slice(&c[self.row(u)]);
            }
        }
        (row_ptr, heads, weights)
    }
}

impl<'a> From<&'a super::Csr> for Rows<'a> {
    fn from(g: &'a super::Csr) -> Self {
        g.rows()
    }
}

impl<'a> From<&'a super::Graph> for Rows<'a> {
    fn from(g: &'a super::Graph) -> Self {
        g.rows()
    }
}

/// One change of a [`SlackRows`], kept until the batch is committed so that it can be undone.
#[derive(Clone, Copy, Debug)]
enum Step {
    /// An edge was removed from `row` at `slot`; its head and weights are in `saved` at `at`.
    Removed { row: u32, slot: u32, at: u32 },
    /// The weights of `slot` (in `row`) were replaced; the old ones are in `saved` at `at`.
    Reweighted { row: u32, slot: u32, at: u32 },
    /// An edge was appended to `row` in its own region.
    Appended { row: u32 },
    /// `row` moved to the end of the arrays from its old bounds, leaving `dead` slots.
    Moved { row: u32, start: i32, end: i32, used: u32, dead: u32 },
}

/// Rows with room to grow (see the module doc), changed in place and undoable until committed.
#[derive(Debug, Clone, Default)]
pub(crate) struct SlackRows {
    n: usize,
    k: usize,
    /// (start, end) of each row.
    bounds: Vec<i32>,
    /// Heads by slot; a row's slack holds `!row`; slots past `used` hold `FREE`.
    heads: Vec<i32>,
    /// K columns of `slots` entries, each its own array: growing one is a reallocation that the
    /// allocator can do without a copy (a large block is remapped), where columns in one array
    /// would all move.
    weights: Vec<Vec<i32>>,
    slots: usize,
    /// Slots handed to rows so far: `used..slots` is room for rows that move.
    used: usize,
    edges: usize,
    /// Slots of the regions rows moved away from (below `used`, in no row).
    dead: usize,
    /// Changes since the last commit, and the heads and weights they replaced.
    log: Vec<Step>,
    saved: Vec<i32>,
    /// Compactions so far (each rewrites every row).
    compactions: u64,
    /// Times the arrays were given a new size (grown for room, or shrunk after a compaction).
    resizes: u64,
    /// Built since the last commit (by [`SlackRows::reversed`]): an undo drops it instead.
    fresh: bool,
    /// The rows changed (and undone) and the layout changes, for copies kept elsewhere (the CUDA
    /// engine's device mirror, `graph/mirror.rs`).
    journal: Journal,
}

impl SlackRows {
    /// The rows of a compact CSR (`row_ptr`, heads, objective-major weights), with room at the end
    /// for rows that will move. The heads and the first weight column keep the CSR's arrays.
    pub(crate) fn from_compact(n: usize, k: usize, row_ptr: &[i32], heads: Vec<i32>, weights: Vec<i32>) -> Self {
        let m = heads.len();
        let slots = Self::slots_for(m, 0);
        let mut columns: Vec<Vec<i32>> = (1..k)
            .map(|j| {
                let mut c = Vec::with_capacity(slots);
                c.extend_from_slice(&weights[j * m..(j + 1) * m]);
                c
            })
            .collect();
        // Column 0 is the front of the CSR's array: cut to it (a large block shrinks in place),
        // its pages are not written again.
        if k > 0 {
            columns.insert(0, weights);
        }
        Self::from_columns(n, k, row_ptr, heads, columns)
    }

    /// Capacity for one column of `m` edges that [`SlackRows::from_columns`] keeps as it is.
    pub(crate) fn column_capacity(m: usize) -> usize {
        Self::slots_for(m, 0)
    }

    /// [`SlackRows::from_compact`] from the heads and the K weight columns (each starting with
    /// its m weights), kept as they are where they have [`SlackRows::column_capacity`] room.
    pub(crate) fn from_columns(n: usize, k: usize, row_ptr: &[i32], heads: Vec<i32>, columns: Vec<Vec<i32>>) -> Self {
        let m = heads.len();
        let slots = Self::slots_for(m, 0);
        // Exactly: a plain resize past the capacity doubles it (a CSR's arrays, taken over, are
        // full), which left the rows holding twice the heads they need.
        let fit = |mut v: Vec<i32>, room: i32| {
            v.truncate(m);
            v.reserve_exact(slots.saturating_sub(m));
            v.resize(slots, room);
            if v.capacity() > slots + slots / 4 {
                v.shrink_to_fit();
            }
            v
        };
        let heads = fit(heads, FREE);
        let columns = columns.into_iter().map(|c| fit(c, 0)).collect();
        Self::assemble(n, k, row_ptr, m, heads, columns)
    }

    /// The rows of `row_ptr` over `heads` and `weights`, each `slots_for(m, 0)` long: m edges in
    /// their first m slots, room after them.
    fn assemble(n: usize, k: usize, row_ptr: &[i32], m: usize, heads: Vec<i32>, weights: Vec<Vec<i32>>) -> Self {
        let mut bounds = Vec::with_capacity(2 * n);
        for u in 0..n {
            bounds.extend_from_slice(&row_ptr[u..u + 2]);
        }
        debug_assert!(weights.len() == k && weights.iter().all(|c| c.len() == heads.len()));
        SlackRows { n, k, bounds, edges: m, used: m, slots: heads.len(), heads, weights, ..Default::default() }
    }

    /// The reverse rows of `rows`: row v lists the tails u of the edges u -> v with their weights,
    /// by ascending tail and, for the copies of one edge, in their order in row u.
    pub(crate) fn reversed(rows: &Rows<'_>) -> Self {
        Self::reversed_on(&crate::sssp::exec::Sequential, rows)
    }

    /// [`SlackRows::reversed`], its passes over the edges on `e`'s threads: the tails are split
    /// into [`REVERSE_PARTS`] ranges where loops run at once, each counting its edges into each
    /// row first, so that every edge's slot is the one a single pass gives (the same rows).
    pub(crate) fn reversed_on<E: crate::sssp::exec::Exec>(e: &E, rows: &Rows<'_>) -> Self {
        use crate::sssp::run::atomic_i32;
        use std::sync::atomic::Ordering::Relaxed;
        let (n, k, m) = (rows.n(), rows.k(), rows.edges());
        let parts = if e.concurrent_loops() && n >= REVERSE_PARTS * REVERSE_MIN_PART { REVERSE_PARTS } else { 1 };
        let part = n.div_ceil(parts).max(1);
        let range = |c: usize| (c * part).min(n)..((c + 1) * part).min(n);
        // The loops' chunks of `part` vertices are the parts. Each part's count of its edges into
        // each row (`counts[c * n + v]`), then where its first edge into v goes; and where its
        // edges start in row order (for the slot list).
        let mut counts = vec![0i32; parts * n];
        {
            let counts = atomic_i32(&mut counts);
            e.for_chunks(n, part, |r| {
                for c in r.start / part..r.end.div_ceil(part) {
                    let mine = &counts[c * n..(c + 1) * n];
                    for u in range(c) {
                        for &v in &rows.heads()[rows.row(u)] {
                            let x = &mine[v as usize];
                            x.store(x.load(Relaxed) + 1, Relaxed);
                        }
                    }
                }
            });
        }
        let mut row_ptr = vec![0i32; n + 1];
        for v in 0..n {
            let mut at = row_ptr[v];
            for c in 0..parts {
                let here = counts[c * n + v];
                counts[c * n + v] = at;
                at += here;
            }
            row_ptr[v + 1] = at;
        }
        let mut first_edge = vec![0usize; parts + 1];
        for c in 0..parts {
            first_edge[c + 1] = first_edge[c] + range(c).map(|u| rows.row(u).len()).sum::<usize>();
        }
        // Each edge's slot in the reverse rows, placed by the cursors; each weight column is then
        // placed in a pass of its own (K + 1 scattered write streams at once measured slower).
        // They are placed in arrays of the rows' full length at once (zeroed by the system, so
        // the room stays untouched): a compact copy first, moved into longer arrays after, had
        // twice the pages to fault in.
        let slots = Self::slots_for(m, 0);
        let mut tails = vec![0i32; slots];
        tails[m..].fill(FREE);
        let mut slot_of = vec![0i32; m];
        {
            let (cursor, tails, slot_of) = (atomic_i32(&mut counts), atomic_i32(&mut tails), atomic_i32(&mut slot_of));
            e.for_chunks(n, part, |r| {
                for c in r.start / part..r.end.div_ceil(part) {
                    let cursor = &cursor[c * n..(c + 1) * n];
                    let mut e = first_edge[c];
                    for u in range(c) {
                        for &v in &rows.heads()[rows.row(u)] {
                            let x = &cursor[v as usize];
                            let s = x.load(Relaxed);
                            x.store(s + 1, Relaxed);
                            tails[s as usize].store(u as i32, Relaxed);
                            slot_of[e].store(s, Relaxed);
                            e += 1;
                        }
                    }
                }
            });
        }
        drop(counts);
        let weights = (0..k)
            .map(|j| {
                let col = rows.column(j);
                let mut out = vec![0i32; slots];
                let at = atomic_i32(&mut out);
                e.for_chunks(n, part, |r| {
                    for (c, &first) in first_edge.iter().enumerate().take(r.end.div_ceil(part)).skip(r.start / part) {
                        let mut e = first;
                        for u in range(c) {
                            for &w in &col[rows.row(u)] {
                                at[slot_of[e] as usize].store(w, Relaxed);
                                e += 1;
                            }
                        }
                    }
                });
                out
            })
            .collect();
        SlackRows { fresh: true, ..Self::assemble(n, k, &row_ptr, m, tails, weights) }
    }

    /// Built since the last commit.
    pub(crate) fn is_fresh(&self) -> bool {
        self.fresh
    }

    /// Slots for `edges` edges and `room` more slots asked for, with the tail share on top.
    fn slots_for(edges: usize, room: usize) -> usize {
        (edges + room + edges / TAIL_SHARE + 16).min(MAX_SLOTS.max(edges + room))
    }

    pub(crate) fn rows(&self) -> Rows<'_> {
        Rows {
            n: self.n,
            k: self.k,
            bounds: &self.bounds,
            stride: 2,
            heads: &self.heads,
            columns: Columns::Separate(&self.weights),
            edges: self.edges,
        }
    }

    pub(crate) fn edges(&self) -> usize {
        self.edges
    }

    /// What changed since a copy of these rows last caught up (`mirror.rs`).
    pub(crate) fn journal(&self) -> &Journal {
        &self.journal
    }

    /// Compactions so far.
    pub(crate) fn compactions(&self) -> u64 {
        self.compactions
    }

    pub(crate) fn resizes(&self) -> u64 {
        self.resizes
    }

    /// Bytes allocated.
    /// Bytes of the rows themselves: bounds, heads and weights, with their slack and room.
    pub(crate) fn row_bytes(&self) -> usize {
        4 * (self.bounds.capacity() + self.heads.capacity() + self.weights.iter().map(Vec::capacity).sum::<usize>())
    }

    pub(crate) fn bytes(&self) -> usize {
        self.row_bytes()
            + 8 * self.log.capacity()
            + 4 * self.saved.capacity()
            + self.journal.bytes()
    }

    #[inline]
    fn row(&self, u: usize) -> std::ops::Range<usize> {
        self.bounds[2 * u] as usize..self.bounds[2 * u + 1] as usize
    }

    /// The first slot of row `u` holding head `v`.
    #[inline]
    pub(crate) fn find(&self, u: usize, v: i32) -> Option<usize> {
        let r = self.row(u);
        let s = r.start;
        self.heads[r].iter().position(|&x| x == v).map(|i| s + i)
    }

    /// The weight of objective `j` at `slot`.
    #[inline]
    pub(crate) fn weight(&self, j: usize, slot: usize) -> i32 {
        self.weights[j][slot]
    }

    /// Whether the regions rows moved away from and the slack are within their shares.
    fn tidy(&self) -> bool {
        self.dead <= self.edges / DEAD_SHARE + 64 && self.slack_total() <= self.edges / SLACK_SHARE + 64
    }

    /// The slack of all rows: every used slot is an edge, a dead slot or a row's slack.
    fn slack_total(&self) -> usize {
        self.used - self.edges - self.dead
    }

    /// The slots the moves of a batch that removes `removed` edges of row `u` and then appends
    /// `appended` take: none while the row's capacity (its edges and slack) holds them, else a
    /// move each time the row is full, to [`moved_capacity`] (as [`SlackRows::append`]).
    pub(crate) fn room_for(&self, u: usize, removed: usize, appended: usize) -> usize {
        if appended == 0 {
            return 0;
        }
        let len = self.row(u).len();
        let (mut cap, mut total) = (len + self.slack(u), 0);
        while cap < len - removed + appended {
            cap = moved_capacity(cap);
            total += cap;
        }
        total
    }

    /// Row `u`'s slack: the slots after its end that hold its mark.
    fn slack(&self, u: usize) -> usize {
        let (end, mark) = (self.bounds[2 * u + 1] as usize, !(u as i32));
        self.heads[end..].iter().take_while(|&&h| h == mark).count()
    }

    /// Makes `extra` slots of room at the end (the worst case of the moves a batch may make, see
    /// [`SlackRows::room_for`]): the arrays grow (a large block is remapped, not copied), or it
    /// refuses when the rows cannot be addressed with 32-bit offsets. Nothing is reclaimed here:
    /// between batches the rows are tidy (a commit compacts them when they are not).
    pub(crate) fn reserve_room(&mut self, extra: usize) -> Result<()> {
        debug_assert!(self.log.is_empty() && self.tidy());
        if self.used + extra <= self.slots {
            return Ok(());
        }
        if self.used + extra > MAX_SLOTS {
            return Err(Error::Capacity(format!(
                "dyng: the updated graph would need more than 2^31-1 edge slots ({} edges)",
                self.edges
            )));
        }
        self.resize_slots(Self::slots_for(self.used, extra));
        let used = self.used;
        self.heads[used..].fill(FREE);
        Ok(())
    }

    /// Moves every row down to close the regions rows moved away from, in place: rows are taken by
    /// where they start, so a row's new place never covers a row not yet moved (the rows before it
    /// took at most the slots they spanned). Rows keep their slack (a row that grew is likely to
    /// grow again: traffic is local) unless the slack alone passes `edges / KEEP_SLACK_SHARE`.
    /// The arrays then shrink to the tail share of room at the end, if that frees an eighth.
    /// Nothing is allocated but a bit per slot: fresh arrays are pages to fault in (a sort of the
    /// rows by start took half of a compaction, most of it in its buffers' faults).
    fn compact(&mut self) {
        let n = self.n;
        let keep = self.slack_total() <= self.edges / KEEP_SLACK_SHARE;
        // The rows that keep slots are found by their first slot: a bit marks it, and the row's
        // id stands in it meanwhile, its head waiting in the row's start bound (regions are
        // disjoint, so no two such rows start at one slot). A row left without slots is put at
        // the end, its start bound set to `NO_SLOTS` until then.
        const NO_SLOTS: i32 = -1;
        let mut starts = vec![0u64; self.used.div_ceil(64)];
        for u in 0..n {
            let (start, end) = (self.bounds[2 * u] as usize, self.bounds[2 * u + 1] as usize);
            // A stand-in id is never a mark, so this reads the slack's first slot truly.
            if start == end && !(keep && self.heads.get(end) == Some(&!(u as i32))) {
                self.bounds[2 * u] = NO_SLOTS;
                continue;
            }
            starts[start / 64] |= 1 << (start % 64);
            self.bounds[2 * u] = self.heads[start];
            self.heads[start] = u as i32;
        }
        // Rows that lie next to each other and stay so move as one block (a copy per row and
        // column was most of a compaction: usroads' 129K rows of three edges).
        let (mut at, mut block) = (0, (0, 0, 0));
        for (w, &word) in starts.iter().enumerate() {
            let mut bits = word;
            while bits != 0 {
                let start = 64 * w + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let u = self.heads[start] as usize;
                self.heads[start] = self.bounds[2 * u];
                let len = self.bounds[2 * u + 1] as usize - start;
                // Read before any move: a row's slack lies in its own region, after its end.
                let region = len + if keep { self.slack(u) } else { 0 };
                let (src, size, dst) = block;
                if start == src + size && at == dst + size {
                    block.1 += region;
                } else {
                    self.move_block(block);
                    block = (start, region, at);
                }
                self.bounds[2 * u] = at as i32;
                self.bounds[2 * u + 1] = (at + len) as i32;
                at += region;
            }
        }
        self.move_block(block);
        for u in 0..n {
            if self.bounds[2 * u] == NO_SLOTS {
                self.bounds[2 * u] = at as i32;
                self.bounds[2 * u + 1] = at as i32;
            }
        }
        self.used = at;
        self.dead = 0;
        self.resize_slots(Self::slots_for(at, 0));
        self.heads[self.used..].fill(FREE);
        self.compactions += 1;
        self.journal.relayout();
    }

    /// Moves `(from, size, to)` slots down, in the heads and every column.
    fn move_block(&mut self, (from, size, to): (usize, usize, usize)) {
        if from == to || size == 0 {
            return;
        }
        self.heads.copy_within(from..from + size, to);
        for c in &mut self.weights {
            c.copy_within(from..from + size, to);
        }
    }

    /// Gives the heads and every column `slots` slots (at least `used`); shrinks only when an
    /// eighth would be left unused.
    fn resize_slots(&mut self, slots: usize) {
        let old = self.slots;
        if slots <= old && slots + slots / 8 >= old {
            return;
        }
        for c in std::iter::once(&mut self.heads).chain(self.weights.iter_mut()) {
            if slots > old {
                c.reserve_exact(slots - c.len());
            }
            c.resize(slots, 0);
            if slots < old {
                c.shrink_to_fit();
            }
        }
        self.slots = slots;
        self.resizes += 1;
        self.journal.relayout();
    }

    /// Saves the head and weights of `slot` for the undo.
    fn save(&mut self, slot: usize) -> u32 {
        let at = self.saved.len() as u32;
        self.saved.push(self.heads[slot]);
        for j in 0..self.k {
            self.saved.push(self.weights[j][slot]);
        }
        at
    }

    /// Removes the edge at `slot` of row `u`, keeping the order of the rest of the row.
    pub(crate) fn remove(&mut self, u: usize, slot: usize) {
        let at = self.save(slot);
        self.log.push(Step::Removed { row: u as u32, slot: slot as u32, at });
        self.journal.touch(u);
        let end = self.bounds[2 * u + 1] as usize;
        self.heads.copy_within(slot + 1..end, slot);
        self.heads[end - 1] = !(u as i32);
        for c in &mut self.weights {
            c.copy_within(slot + 1..end, slot);
        }
        self.bounds[2 * u + 1] -= 1;
        self.edges -= 1;
    }

    /// Replaces the weights at `slot` of row `u`.
    pub(crate) fn reweight(&mut self, u: usize, slot: usize, weights: impl Fn(usize) -> i32) {
        debug_assert!(self.row(u).contains(&slot));
        let at = self.save(slot);
        self.log.push(Step::Reweighted { row: u as u32, slot: slot as u32, at });
        self.journal.touch(u);
        for j in 0..self.k {
            self.weights[j][slot] = weights(j);
        }
    }

    /// Appends the edge `u -> v` to row `u`, moving the row to the end of the arrays when it has
    /// no slack left. The room for the move must have been reserved ([`SlackRows::reserve_room`]).
    pub(crate) fn append(&mut self, u: usize, v: i32, weights: impl Fn(usize) -> i32) {
        let (start, end) = (self.bounds[2 * u] as usize, self.bounds[2 * u + 1] as usize);
        let mark = !(u as i32);
        self.journal.touch(u);
        if self.heads.get(end) == Some(&mark) {
            self.log.push(Step::Appended { row: u as u32 });
        } else {
            let len = end - start;
            let room = moved_capacity(len);
            let to = self.used;
            assert!(to + room <= self.slots, "room for a row's move was reserved before the batch");
            // The row is full: its region is its edges.
            self.dead += len;
            self.log.push(Step::Moved { row: u as u32, start: start as i32, end: end as i32, used: to as u32, dead: len as u32 });
            self.heads.copy_within(start..end, to);
            self.heads[to + len..to + room].fill(mark);
            for c in &mut self.weights {
                c.copy_within(start..end, to);
            }
            self.bounds[2 * u] = to as i32;
            self.bounds[2 * u + 1] = (to + len) as i32;
            self.used = to + room;
        }
        let e = self.bounds[2 * u + 1] as usize;
        self.heads[e] = v;
        for j in 0..self.k {
            self.weights[j][e] = weights(j);
        }
        self.bounds[2 * u + 1] += 1;
        self.edges += 1;
    }

    /// Keeps every change since the last commit.
    pub(crate) fn commit(&mut self) {
        self.fresh = false;
        self.log.clear();
        self.saved.clear();
        self.journal.trim(self.n);
        // Here rather than before the next batch, so that a graph at rest holds no more than the
        // shares: a large batch's dead regions and slack otherwise stayed until the next one.
        if !self.tidy() {
            self.compact();
        }
    }

    /// Reverts every change since the last commit, newest first: the rows, their bounds and the
    /// arrays' use are exactly as they were.
    pub(crate) fn undo(&mut self) {
        while let Some(step) = self.log.pop() {
            // A copy that took the batch's rows must take them again as they were.
            let (Step::Removed { row, .. } | Step::Reweighted { row, .. } | Step::Appended { row } | Step::Moved { row, .. }) = step;
            self.journal.touch(row as usize);
            match step {
                Step::Removed { row, slot, at } => {
                    let (u, slot, at) = (row as usize, slot as usize, at as usize);
                    let end = self.bounds[2 * u + 1] as usize;
                    self.heads.copy_within(slot..end, slot + 1);
                    self.heads[slot] = self.saved[at];
                    for (j, c) in self.weights.iter_mut().enumerate() {
                        c.copy_within(slot..end, slot + 1);
                        c[slot] = self.saved[at + 1 + j];
                    }
                    self.bounds[2 * u + 1] += 1;
                    self.edges += 1;
                }
                Step::Reweighted { slot, at, .. } => {
                    for j in 0..self.k {
                        self.weights[j][slot as usize] = self.saved[at as usize + 1 + j];
                    }
                }
                Step::Appended { row } => {
                    let u = row as usize;
                    self.bounds[2 * u + 1] -= 1;
                    self.heads[self.bounds[2 * u + 1] as usize] = !(row as i32);
                    self.edges -= 1;
                }
                Step::Moved { row, start, end, used, dead } => {
                    let u = row as usize;
                    self.dead -= dead as usize;
                    // The append that followed the move was undone already.
                    self.heads[used as usize..self.used].fill(FREE);
                    self.bounds[2 * u] = start;
                    self.bounds[2 * u + 1] = end;
                    self.used = used as usize;
                    self.edges -= 1;
                }
            }
        }
        self.saved.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows_of(s: &SlackRows) -> Vec<Vec<(i32, Vec<i32>)>> {
        let r = s.rows();
        (0..r.n())
            .map(|u| r.row(u).map(|e| (r.heads()[e], (0..r.k()).map(|j| r.column(j)[e]).collect())).collect())
            .collect()
    }

    fn sample() -> SlackRows {
        // Rows 0: [1, 2], 1: [], 2: [0, 0, 1]; K = 2.
        SlackRows::from_compact(3, 2, &[0, 2, 2, 5], vec![1, 2, 0, 0, 1], vec![1, 2, 3, 4, 5, 10, 20, 30, 40, 50])
    }

    #[test]
    fn removals_keep_the_order_and_appends_move_full_rows() {
        let mut s = sample();
        let before = rows_of(&s);
        s.remove(2, 3); // the second copy of 2 -> 0
        assert_eq!(rows_of(&s)[2], vec![(0, vec![3, 30]), (1, vec![5, 50])]);
        s.append(2, 2, |j| [7, 70][j]); // into the slack the removal left
        s.append(0, 0, |j| [8, 80][j]); // row 0 is full: it moves
        s.append(1, 1, |j| [9, 90][j]); // an empty row moves too
        s.append(1, 2, |j| [6, 60][j]);
        s.reweight(0, s.find(0, 2).unwrap(), |j| [11, 110][j]);
        assert_eq!(
            rows_of(&s),
            vec![
                vec![(1, vec![1, 10]), (2, vec![11, 110]), (0, vec![8, 80])],
                vec![(1, vec![9, 90]), (2, vec![6, 60])],
                vec![(0, vec![3, 30]), (1, vec![5, 50]), (2, vec![7, 70])],
            ]
        );
        assert_eq!(s.edges(), 8);
        let (row_ptr, heads, _) = s.rows().to_compact();
        assert_eq!((row_ptr, heads), (vec![0, 3, 5, 8], vec![1, 2, 0, 1, 2, 0, 1, 2]));
        s.undo();
        assert_eq!(rows_of(&s), before);
        let fresh = sample();
        assert_eq!((s.bounds.clone(), s.heads.clone(), s.used, s.edges), (fresh.bounds, fresh.heads, fresh.used, fresh.edges));
    }

    #[test]
    fn a_compaction_keeps_every_row_and_frees_the_moved_rows_regions() {
        let mut s = sample();
        for i in 0..40 {
            // As a batch does; the commit compacts once the moved row's old regions pile up.
            s.reserve_room(s.room_for(0, 0, 1)).unwrap();
            s.append(0, i % 3, |j| (i + 1 + j as i32) * 2);
            s.commit();
        }
        let want = rows_of(&s);
        let (bytes, edges) = (s.bytes(), s.edges());
        s.compact();
        assert_eq!(rows_of(&s), want);
        assert!(s.used <= edges + edges / KEEP_SLACK_SHARE, "{} slots used for {edges} edges", s.used);
        assert!(s.bytes() <= bytes);
        assert!(s.compactions() >= 1);
    }

    #[test]
    fn a_compaction_keeps_a_small_slack_and_places_rows_without_slots() {
        // 100 rows of three edges but row 3, empty; K = 1.
        let n = 100;
        let mut row_ptr = vec![0i32];
        let mut heads = Vec::new();
        for u in 0..n {
            if u != 3 {
                heads.extend([(u + 1) % n, (u + 2) % n, (u + 3) % n].map(|v| v as i32));
            }
            row_ptr.push(heads.len() as i32);
        }
        let weights: Vec<i32> = (1..=heads.len() as i32).collect();
        let mut s = SlackRows::from_compact(n, 1, &row_ptr, heads, weights.clone());
        for _ in 0..3 {
            let e = s.row(5).start;
            s.remove(5, e); // row 5 empties, leaving three slots of slack
        }
        s.remove(7, s.row(7).start + 1);
        s.commit();
        // One batch of four appends to row 9, its room reserved first as an apply does.
        s.reserve_room(s.room_for(9, 0, 4)).unwrap();
        for i in 0..4 {
            s.append(9, i, |_| 100 + i);
        }
        s.commit();
        assert!(s.dead > 0);
        let want = rows_of(&s);
        let slack: Vec<usize> = (0..n).map(|u| s.slack(u)).collect();
        s.compact();
        assert_eq!(rows_of(&s), want);
        // The slack is small, so every row keeps its own, the emptied row 5 included.
        assert_eq!((0..n).map(|u| s.slack(u)).collect::<Vec<_>>(), slack);
        assert_eq!((slack[5], slack[7], slack[3]), (3, 1, 0));
        assert_eq!(s.used, s.edges + slack.iter().sum::<usize>());
        assert_eq!(s.dead, 0);
        // Rows are where their bounds say and nowhere else: every used slot is a row's.
        let mut owned = vec![false; s.used];
        for (u, &kept) in slack.iter().enumerate() {
            let r = s.row(u);
            for (slot, o) in owned.iter_mut().enumerate().take(r.end + kept).skip(r.start) {
                assert!(!std::mem::replace(o, true), "slot {slot} has two rows");
            }
        }
        assert!(owned.iter().all(|&o| o));
        // The graph still takes appends, into the kept slack and by moves.
        s.append(5, 0, |_| 7);
        s.append(3, 0, |_| 8);
        assert_eq!(rows_of(&s)[5], vec![(0, vec![7])]);
        assert_eq!(rows_of(&s)[3], vec![(0, vec![8])]);
    }

    #[test]
    fn reversed_on_threads_is_the_reverse_of_one_pass() {
        // Parts of more than the least a part takes, parallel edges and rows of room (a store
        // read at stride 2): the same slots, tails and weights as the one-pass build.
        let n = 2 * REVERSE_MIN_PART + 77;
        let mut rng = crate::io::generators::rng::Mt19937::new(3);
        let mut row_ptr = vec![0i32];
        let (mut col, mut w0, mut w1) = (Vec::new(), Vec::new(), Vec::new());
        for u in 0..n {
            for _ in 0..rng.next_u32() % 5 {
                let v = if rng.next_u32().is_multiple_of(4) { (u + 1) % n } else { rng.next_u32() as usize % n };
                col.push(v as i32);
                w0.push((rng.next_u32() % 100 + 1) as i32);
                w1.push((rng.next_u32() % 100 + 1) as i32);
            }
            if u % 7 == 0 && !col.is_empty() {
                // A repeat of the row's last edge.
                col.push(*col.last().unwrap());
                w0.push(1);
                w1.push(2);
            }
            row_ptr.push(col.len() as i32);
        }
        let m = col.len();
        let store = SlackRows::assemble(n, 2, &row_ptr, m, col, vec![w0, w1]);
        let pool = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
        let (lock, choice) = (parking_lot::Mutex::new(()), crate::resources::team_choice::TeamChoice::default());
        let exec = crate::sssp::exec::Parallel { pool: &pool, team_lock: &lock, choice: &choice, inline_all: Default::default() };
        let (one, many) = (SlackRows::reversed(&store.rows()), SlackRows::reversed_on(&exec, &store.rows()));
        assert_eq!((&one.bounds, &one.heads, &one.weights), (&many.bounds, &many.heads, &many.weights));
        assert_eq!((one.edges, one.used, one.slots), (many.edges, many.used, many.slots));
        // And the one pass is the reverse: every edge u -> v once in row v, by ascending tail.
        let mut want: Vec<Vec<(i32, Vec<i32>)>> = vec![Vec::new(); n];
        for (u, row) in rows_of(&store).into_iter().enumerate() {
            for (v, ws) in row {
                want[v as usize].push((u as i32, ws));
            }
        }
        assert_eq!(rows_of(&many), want);
    }

    #[test]
    fn reversed_rows_list_every_in_edge_by_tail() {
        let s = sample();
        let r = SlackRows::reversed(&s.rows());
        assert_eq!(
            rows_of(&r),
            vec![vec![(2, vec![3, 30]), (2, vec![4, 40])], vec![(0, vec![1, 10]), (2, vec![5, 50])], vec![(0, vec![2, 20])]]
        );
    }
}
