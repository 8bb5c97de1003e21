//! Graphs with K objectives, change batches and their application.
//!
//! A [`Graph`] is resident: a batch changes its rows in place (`apply.rs`), at a cost of what the
//! batch changes, not of what the graph holds. Its out-rows and, once an update first needs them,
//! its in-rows have room to grow (`rows.rs`); the in-rows take a batch's changes when next read
//! (`lag.rs`); whatever is copied out ([`Graph::to_csr`]) is the
//! compact CSR the originals' semantics give, row by row. A graph also has an identity (to refuse
//! results of other graphs) and a version that every applied batch increments (to refuse results
//! of older states).

pub mod apply;
pub mod batch;
pub mod csr;
pub mod dijkstra;
mod lag;
pub(crate) mod before;
pub(crate) mod mirror;
pub(crate) mod rows;
pub(crate) mod stale;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

pub use apply::{apply_batch, Applied};
pub use batch::{Batch, BatchView};
pub use csr::{Csr, WeightLayout, MAX_OBJECTIVES};
pub use rows::Rows;

use apply::ApplyScratch;
use lag::Lag;
use csr::ColumnFacts;
use mirror::Attached;
use rows::SlackRows;

static NEXT_GRAPH_ID: AtomicU64 = AtomicU64::new(1);

/// Makes `v` `len` entries long for a caller that overwrites every one: what it held is kept
/// where it still fits (zeroing recycled arrays would be one more pass over them), any new entries
/// are zero; returns true when it had to allocate. It then takes 1/32 more than `len`, so that a
/// graph growing by a few edges a batch does not reallocate every batch.
#[inline]
pub(crate) fn resize_for_overwrite<T: Copy + Default>(v: &mut Vec<T>, len: usize) -> bool {
    resize_for_overwrite_with_room(v, len, len / 32)
}

/// [`resize_for_overwrite`] taking `room` more entries than `len` when it allocates.
#[inline]
pub(crate) fn resize_for_overwrite_with_room<T: Copy + Default>(v: &mut Vec<T>, len: usize, room: usize) -> bool {
    let grows = v.capacity() < len;
    if grows {
        // Zeroed by the system (calloc): untouched until written, by whichever threads write.
        *v = Vec::new();
        *v = vec![T::default(); len + room];
        v.truncate(len);
    } else {
        v.resize(len, T::default());
    }
    grows
}

/// The changes of a small batch, as a share of the vertices: what the lists a graph keeps between
/// batches (the rows' journal, the in-rows' edits) keep room for, so that a stream of small
/// batches allocates nothing while a large batch's room is given back.
pub(crate) fn small_batch(n: usize) -> usize {
    n / 16 + 1024
}

/// Gives back the memory of `v` past `keep` entries once it has room for four times that.
pub(crate) fn keep_room<T>(v: &mut Vec<T>, keep: usize) {
    if v.capacity() > 4 * keep {
        v.shrink_to(keep);
    }
}

/// A directed graph with K weight columns, maintained in place under batches of changes.
#[derive(Debug)]
pub struct Graph {
    out: SlackRows,
    /// The reverse rows in step with the out-rows, made when first needed (a repair's pull).
    in_rows: OnceLock<SlackRows>,
    /// Or the reverse rows behind by the batches since they were last read, with their edits
    /// (`lag.rs`); at most one of the two holds rows.
    in_lag: parking_lot::Mutex<Lag>,
    facts: Vec<ColumnFacts>,
    id: u64,
    version: u64,
    scratch: ApplyScratch,
    /// Engines' copies of the rows (the CUDA engine's device mirror), kept with the graph so that
    /// they live as long as it does and an update brings them up to date from the rows' journals.
    mirrors: Attached,
    /// Whether a repair makes the in-rows when it first needs them (see [`Graph::keep_in_rows`]).
    make_in_rows: bool,
}

impl Clone for Graph {
    /// A clone is a new graph (new identity): results of the original are stale for it.
    fn clone(&self) -> Self {
        Graph {
            out: self.out.clone(),
            in_rows: self.in_rows.clone(),
            in_lag: parking_lot::Mutex::new(self.in_lag.lock().clone()),
            facts: self.facts.clone(),
            id: NEXT_GRAPH_ID.fetch_add(1, Ordering::Relaxed),
            version: 0,
            scratch: ApplyScratch::default(),
            mirrors: Attached::default(),
            make_in_rows: self.make_in_rows,
        }
    }
}

impl Graph {
    /// Takes a validated CSR (its arrays become the graph's rows); the graph starts at version 0
    /// with a new identity.
    ///
    /// ```
    /// use dyng::{Csr, Graph};
    ///
    /// let g = Graph::new(Csr::from_edges(3, 1, &[0, 1], &[1, 2], &[5, 7])?);
    /// assert_eq!((g.n(), g.m(), g.k(), g.version()), (3, 2, 1, 0));
    /// assert_eq!(g.max_weight(0), 7);
    /// assert_eq!(g.to_csr().col_ind(), [1, 2]);
    /// # Ok::<(), dyng::Error>(())
    /// ```
    pub fn new(csr: Csr) -> Self {
        let (n, k) = (csr.n(), csr.k());
        let (row_ptr, col_ind, weights, facts) = csr.into_parts();
        Self::of_rows(SlackRows::from_compact(n, k, &row_ptr, col_ind, weights), facts)
    }

    /// The graph of a compact CSR checked already, its weights in K columns of m (see
    /// [`SlackRows::from_columns`]; a reader that gives each its room hands them over uncopied).
    pub(crate) fn from_columns(row_ptr: &[i32], heads: Vec<i32>, columns: Vec<Vec<i32>>, facts: Vec<ColumnFacts>) -> Self {
        let n = row_ptr.len() - 1;
        Self::of_rows(SlackRows::from_columns(n, columns.len(), row_ptr, heads, columns), facts)
    }

    fn of_rows(out: SlackRows, facts: Vec<ColumnFacts>) -> Self {
        Graph {
            out,
            in_rows: OnceLock::new(),
            in_lag: Default::default(),
            facts,
            id: NEXT_GRAPH_ID.fetch_add(1, Ordering::Relaxed),
            version: 0,
            scratch: ApplyScratch::default(),
            mirrors: Attached::default(),
            make_in_rows: true,
        }
    }

    /// Number of vertices.
    pub fn n(&self) -> usize {
        self.out.rows().n()
    }

    /// Number of edges.
    pub fn m(&self) -> usize {
        self.out.edges()
    }

    /// Number of objectives (weight columns).
    pub fn k(&self) -> usize {
        self.facts.len()
    }

    /// Unique identity of this graph object.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Number of batches applied so far.
    pub fn version(&self) -> u64 {
        self.version
    }

    /// The out-rows (row order is the originals' CSR order).
    pub fn rows(&self) -> Rows<'_> {
        self.out.rows()
    }

    /// The in-rows: row v lists the tails of the edges into v (made on first use).
    pub fn in_rows(&self) -> Rows<'_> {
        self.in_store().rows()
    }

    /// The store of the out-rows (for copies kept elsewhere, `mirror.rs`).
    pub(crate) fn out_store(&self) -> &SlackRows {
        &self.out
    }

    /// The store of the in-rows: caught up with the batches since they were last read, or made
    /// when there are none to catch up.
    pub(crate) fn in_store(&self) -> &SlackRows {
        self.in_store_on(&crate::sssp::exec::Sequential)
    }

    /// [`Graph::in_store`], made on `e`'s threads where there is no lag to catch up.
    pub(crate) fn in_store_on<E: crate::sssp::exec::Exec>(&self, e: &E) -> &SlackRows {
        self.in_rows.get_or_init(|| self.in_lag.lock().catch_up().unwrap_or_else(|| SlackRows::reversed_on(e, &self.out.rows())))
    }

    /// The engines' copies of the rows.
    pub(crate) fn mirrors(&self) -> &Attached {
        &self.mirrors
    }

    /// Whether the in-rows are made and in step with the out-rows.
    pub(crate) fn has_in_rows(&self) -> bool {
        self.in_rows.get().is_some()
    }

    /// Whether a repair makes the in-rows when it first needs them: the default, for a graph
    /// updated batch after batch, which then keeps them in step. A graph updated once (a one-shot
    /// run such as `dyng mosp`) pays less without them: `keep_in_rows(false)` drops any, and a
    /// repair on the parallel engine then finds the in-edges of the vertices it pulls by one pass
    /// over the out-rows, a fraction of what making them costs (docs/performance.md), counted as
    /// the update's preparation as making them is. Results are the same either way; the
    /// sequential reference, whose counters are the originals', and [`Graph::in_rows`] (and so the
    /// CUDA engine) still make them.
    ///
    /// ```
    /// use dyng::{Batch, Csr, Graph, Resources, SsspOptions, SsspResult};
    ///
    /// let mut g = Graph::new(Csr::from_edges(3, 1, &[0, 0, 1], &[1, 2, 2], &[1, 5, 1])?);
    /// g.keep_in_rows(false);
    /// let res = Resources::parallel(1)?;
    /// let mut tree = SsspResult::compute(&res, &g, 0, 0, &SsspOptions::default())?;
    /// // Deleting 1 -> 2 makes vertex 2 take its other in-edge, found without the in-rows.
    /// let mut batch = Batch::new(1);
    /// batch.delete(1, 2);
    /// dyng::update_one(&res, &mut g, &batch.view(), &mut tree)?;
    /// assert_eq!((tree.distances()[2], tree.parents()[2]), (5, 0));
    /// # Ok::<(), dyng::Error>(())
    /// ```
    pub fn keep_in_rows(&mut self, keep: bool) {
        self.make_in_rows = keep;
        if !keep {
            self.in_rows = OnceLock::new();
            *self.in_lag.get_mut() = Lag::default();
        }
    }

    /// Whether a repair makes the in-rows when it first needs them (see [`Graph::keep_in_rows`]).
    pub(crate) fn makes_in_rows(&self) -> bool {
        self.make_in_rows
    }

    /// Whether the in-rows are made, in step or lagging.
    pub(crate) fn keeps_in_rows(&self) -> bool {
        self.has_in_rows() || self.in_lag.lock().holds_rows()
    }

    /// `f` of the in-rows' store, in step or lagging (the default when there are none), for the
    /// counts of what the graph holds.
    fn of_in_rows<T: Default>(&self, f: impl Fn(&SlackRows) -> T) -> T {
        match self.in_rows.get() {
            Some(r) => f(r),
            None => self.in_lag.lock().rows().map(f).unwrap_or_default(),
        }
    }

    /// The compact CSR of the current state, row by row as the originals' semantics give it.
    pub fn to_csr(&self) -> Csr {
        let (row_ptr, col_ind, weights) = self.rows().to_compact();
        let m = col_ind.len();
        let facts = (0..self.k())
            .map(|j| match self.facts[j] {
                f if f.exact(m) => f,
                _ => ColumnFacts::of_slice(&weights[j * m..(j + 1) * m]),
            })
            .collect();
        Csr::from_parts_unchecked(self.n(), self.k(), row_ptr, col_ind, weights, facts)
    }

    /// The largest weight of objective `j` (at least 1, also for an edgeless graph). Exact: after
    /// a batch that took the last edge of the largest weight, this reads the column.
    pub fn max_weight(&self, j: usize) -> i32 {
        let f = self.facts[j];
        if f.exact(self.m()) {
            return f.max;
        }
        let rows = self.rows();
        let c = rows.column(j);
        (0..self.n()).flat_map(|u| c[rows.row(u)].iter().copied()).max().unwrap_or(1).max(1)
    }

    /// A bound above every weight of objective `j`: the largest weight, or, after a batch that
    /// took the last edge of the largest, that weight (what the packing of an update is chosen
    /// from, unless only the exact largest weight leaves room for parents in the words).
    pub(crate) fn max_weight_bound(&self, j: usize) -> i32 {
        self.facts[j].max
    }

    /// Makes the largest weight of objective `j` exact again (a pass over the column).
    pub(crate) fn settle_max_weight(&mut self, j: usize) {
        if !self.facts[j].exact(self.m()) {
            let sum = self.facts[j].sum;
            let rows = self.out.rows();
            let c = rows.column(j);
            self.facts[j] = ColumnFacts::of((0..rows.n()).flat_map(|u| c[rows.row(u)].iter().copied()));
            debug_assert_eq!(self.facts[j].sum, sum);
        }
    }

    /// The sum of the weights of objective `j`.
    pub fn weight_sum(&self, j: usize) -> i64 {
        self.facts[j].sum
    }

    /// Bytes the graph holds: its rows (with their room to grow), its in-rows once made, and the
    /// scratch of its applies.
    pub fn bytes(&self) -> usize {
        self.out.bytes() + self.in_rows.get().map_or(0, SlackRows::bytes) + self.in_lag.lock().bytes() + self.scratch.bytes()
    }

    /// Bytes of the rows alone (out-rows and in-rows once made: bounds, heads and weights, with
    /// the slack rows keep, the room left by rows that moved and the room at the end), without
    /// the undo log, the journal and the apply's scratch that [`Graph::bytes`] adds.
    pub fn row_bytes(&self) -> usize {
        self.out.row_bytes() + self.of_in_rows(SlackRows::row_bytes)
    }

    /// Compactions of the rows so far (each rewrites every row; they are amortised over the
    /// batches that left rows moved or slack unused).
    pub fn compactions(&self) -> u64 {
        self.out.compactions() + self.of_in_rows(SlackRows::compactions)
    }

    /// Times the rows' arrays were given a new size so far: grown when a batch needs more room
    /// than they have, or shrunk after a compaction left a quarter unused. Like a compaction, each
    /// moves the arrays (and is amortised over the batches that did not need one).
    pub fn resizes(&self) -> u64 {
        self.out.resizes() + self.of_in_rows(SlackRows::resizes)
    }

    /// Applies a batch without updating any result (results of the old state become stale).
    /// Returns, per insertion, the bit mask of the objectives whose weight increased. A rejected
    /// batch ([`crate::Error::InvalidArgument`], or [`crate::Error::Capacity`] beyond 2^31-1
    /// edges) changes nothing. To keep results up to date, apply it with [`crate::update()`].
    ///
    /// ```
    /// use dyng::{update_one, Batch, Csr, ErrorKind, Graph, Resources, SsspOptions, SsspResult};
    ///
    /// let mut g = Graph::new(Csr::from_edges(3, 2, &[0, 1], &[1, 2], &[1, 1, 1, 1])?);
    /// let res = Resources::sequential();
    /// let mut tree = SsspResult::compute(&res, &g, 0, 0, &SsspOptions::default())?;
    ///
    /// let mut b = Batch::new(2);
    /// b.insert(0, 1, &[1, 4]); // 0 -> 1 exists: objective 1 gets heavier
    /// b.insert(0, 2, &[5, 5]); // a new edge
    /// assert_eq!(g.apply(&b.view())?, [0b10, 0]);
    /// assert_eq!((g.version(), g.m()), (1, 3));
    ///
    /// // The tree belongs to version 0: updating it now is refused.
    /// let err = update_one(&res, &mut g, &Batch::new(2).view(), &mut tree).unwrap_err();
    /// assert_eq!(err.kind(), ErrorKind::StaleResult);
    /// # Ok::<(), dyng::Error>(())
    /// ```
    pub fn apply(&mut self, batch: &BatchView<'_>) -> crate::Result<Vec<u64>> {
        self.apply_uncommitted(batch)?;
        self.commit();
        Ok(self.scratch.masks.clone())
    }

    /// The weight-increase masks of the batch applied last (see [`Graph::apply`]).
    pub(crate) fn increase_masks(&self) -> &[u64] {
        &self.scratch.masks
    }
}
