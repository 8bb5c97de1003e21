//! In-rows that lag behind the out-rows: a batch changes the out-rows at once, and the in-rows
//! only when something first reads them (a repair's pull), so that an update whose trees are all
//! recomputed or left as they were does not pay for keeping them in step.
//!
//! While they lag, each batch's edits of the in-rows are kept as a list, in the order an apply in
//! step makes them (by tail row, deletions before insertions, batch order within a row). Catching
//! up replays them batch by batch, each batch reserving its room, applied and committed as an
//! apply in step does, so the caught-up rows are the same rows; the batch still open (applied,
//! not yet committed or undone) is replayed without its commit. Edits of one in-row from different
//! tails touch different copies, except appends, which keep the order of their tails' rows in
//! both ways. Once the lag's edits pass `m / LAG_SHARE` they are dropped with the rows, and the
//! in-rows are made afresh when next read: replaying costs about a dozen times per edit what a
//! build costs per edge (usroads: 3.6 ms for a local batch of 10K changes against 9 ms for the
//! build of 330K edges), so past that share the build is the cheaper way back.

use super::rows::SlackRows;

/// The lag is dropped once its edits pass `m / LAG_SHARE`.
const LAG_SHARE: usize = 16;

/// The kinds of edit, the first word of each.
const REMOVE: i32 = 0;
const REWEIGHT: i32 = 1;
const APPEND: i32 = 2;

/// In-rows behind the out-rows by the batches whose edits it lists (see the module doc).
#[derive(Debug, Clone, Default)]
pub(crate) struct Lag {
    rows: Option<SlackRows>,
    k: usize,
    /// Edits of `3 + k` words each: kind, in-row, tail, then k weights (zero for a removal).
    edits: Vec<i32>,
    /// Where each batch's edits end in `edits`.
    ends: Vec<usize>,
    /// The last batch is applied but neither committed nor undone.
    open: bool,
    /// Scratch of a batch's replay: the in-rows its appends go to.
    appended: Vec<u32>,
}

impl Lag {
    /// Whether there are lagging rows (edits are listed only then).
    pub(crate) fn holds_rows(&self) -> bool {
        self.rows.is_some()
    }

    /// Starts a lag from in-rows in step (at a batch's apply).
    pub(crate) fn start(&mut self, rows: SlackRows) {
        debug_assert!(self.rows.is_none() && self.ends.is_empty());
        self.k = rows.rows().k();
        self.rows = Some(rows);
        self.edits.clear();
    }

    /// Opens a batch's list of edits.
    pub(crate) fn open_batch(&mut self) {
        debug_assert!(self.rows.is_some() && !self.open);
        self.open = true;
    }

    /// Lists the removal of the first copy of `u -> v` from in-row `v`.
    pub(crate) fn remove(&mut self, v: i32, u: usize) {
        self.push(REMOVE, v, u, |_| 0);
    }

    /// Lists the new weights of the first copy of `u -> v` in in-row `v`.
    pub(crate) fn reweight(&mut self, v: i32, u: usize, w: impl Fn(usize) -> i32) {
        self.push(REWEIGHT, v, u, w);
    }

    /// Lists an append of `u -> v` to in-row `v`.
    pub(crate) fn append(&mut self, v: i32, u: usize, w: impl Fn(usize) -> i32) {
        self.push(APPEND, v, u, w);
    }

    fn push(&mut self, kind: i32, v: i32, u: usize, w: impl Fn(usize) -> i32) {
        self.edits.extend_from_slice(&[kind, v, u as i32]);
        self.edits.extend((0..self.k).map(w));
    }

    /// Closes the open batch at its commit; past the share of `m` edges, drops the lag.
    pub(crate) fn commit(&mut self, m: usize) {
        if !self.open {
            return;
        }
        self.open = false;
        self.ends.push(self.edits.len());
        if self.edits.len() / (3 + self.k) > m / LAG_SHARE {
            // Their memory goes with them: such a lag comes of large batches.
            *self = Lag::default();
        }
    }

    /// Forgets the open batch's edits at its undo; returns the rows when no batch is left behind
    /// (they are in step again).
    pub(crate) fn undo(&mut self) -> Option<SlackRows> {
        if self.open {
            self.open = false;
            self.edits.truncate(self.ends.last().copied().unwrap_or(0));
        }
        if self.ends.is_empty() {
            return self.rows.take();
        }
        None
    }

    /// The rows caught up with every listed batch (the open one applied, not committed), or
    /// `None` when there are none or a batch's room cannot be had (the caller builds them).
    pub(crate) fn catch_up(&mut self) -> Option<SlackRows> {
        let mut rows = self.rows.take()?;
        let stride = 3 + self.k;
        let open = self.open.then_some(self.edits.len());
        let mut from = 0;
        let mut ok = true;
        for (i, end) in self.ends.iter().copied().chain(open).enumerate() {
            let batch = &self.edits[from..end];
            from = end;
            self.appended.clear();
            self.appended.extend(batch.chunks_exact(stride).filter(|e| e[0] == APPEND).map(|e| e[1] as u32));
            self.appended.sort_unstable();
            let room = self.appended.chunk_by(|a, b| a == b).map(|g| rows.room_for(g[0] as usize, 0, g.len())).sum();
            if rows.reserve_room(room).is_err() {
                ok = false;
                break;
            }
            for e in batch.chunks_exact(stride) {
                let (v, u, w) = (e[1] as usize, e[2], &e[3..]);
                match e[0] {
                    REMOVE => {
                        let s = rows.find(v, u).expect("the in-rows hold every edge");
                        rows.remove(v, s);
                    }
                    REWEIGHT => {
                        let s = rows.find(v, u).expect("the in-rows hold every edge");
                        rows.reweight(v, s, |j| w[j]);
                    }
                    _ => rows.append(v, u, |j| w[j]),
                }
            }
            if i < self.ends.len() {
                rows.commit();
            }
        }
        self.ends.clear();
        self.edits.clear();
        // Room for a small batch's edits, not for the largest lag so far.
        super::keep_room(&mut self.edits, stride * super::small_batch(rows.rows().n()));
        // The open batch, if any, is now the rows' own: their commit or undo takes it.
        self.open = false;
        ok.then_some(rows)
    }

    /// Bytes held: the lagging rows and the edit lists.
    pub(crate) fn bytes(&self) -> usize {
        self.rows.as_ref().map_or(0, SlackRows::bytes) + 4 * (self.edits.capacity() + self.appended.capacity()) + 8 * self.ends.capacity()
    }

    pub(crate) fn rows(&self) -> Option<&SlackRows> {
        self.rows.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use crate::graph::{Batch, Csr, Graph, Rows};
    use crate::io::generators::rng::Mt19937;

    /// Every row's heads and weights, in row order.
    fn content(r: Rows<'_>) -> Vec<(Vec<i32>, Vec<Vec<i32>>)> {
        (0..r.n()).map(|v| (r.heads()[r.row(v)].to_vec(), (0..r.k()).map(|j| r.column(j)[r.row(v)].to_vec()).collect())).collect()
    }

    /// What the in-rows promise, as a build from the current out-rows makes them: per in-row, its
    /// (tail, weights) by tail, the copies of one edge in their order in the tail's row.
    fn by_tail(r: Rows<'_>) -> Vec<Vec<(i32, Vec<i32>)>> {
        (0..r.n())
            .map(|v| {
                let mut row: Vec<_> = r.row(v).map(|s| (r.heads()[s], (0..r.k()).map(|j| r.column(j)[s]).collect())).collect();
                row.sort_by_key(|e: &(i32, Vec<i32>)| e.0);
                row
            })
            .collect()
    }

    fn built(g: &Graph) -> Vec<Vec<(i32, Vec<i32>)>> {
        by_tail(super::SlackRows::reversed(&g.rows()).rows())
    }

    fn graph(rng: &mut Mt19937, n: usize, m: usize) -> Graph {
        let mut r = |x: u32| (rng.next_u32() % x) as i32;
        let (src, dst): (Vec<i32>, Vec<i32>) = (0..m).map(|_| (r(n as u32), r(n as u32))).unzip();
        let w: Vec<i32> = (0..2 * m).map(|_| 1 + r(30)).collect();
        Graph::new(Csr::from_edges(n, 2, &src, &dst, &w).unwrap())
    }

    /// Removals, reweights, appends (parallel edges among them) of a few random rows.
    fn batch(rng: &mut Mt19937, g: &Graph, changes: usize) -> Batch {
        let n = g.n() as u32;
        let mut b = Batch::new(2);
        for _ in 0..changes {
            let u = (rng.next_u32() % n) as usize;
            let row = g.rows().row(u);
            let existing = (!row.is_empty()).then(|| g.rows().heads()[row.start + rng.next_u32() as usize % row.len()]);
            let v = match (rng.next_u32() % 3, existing) {
                (0, Some(v)) => {
                    b.delete(u as i32, v);
                    continue;
                }
                (1, Some(v)) => v,
                _ => (rng.next_u32() % n) as i32,
            };
            b.insert(u as i32, v, &[1 + (rng.next_u32() % 30) as i32, 1 + (rng.next_u32() % 30) as i32]);
        }
        b
    }

    #[test]
    fn lagging_in_rows_catch_up_to_the_rows_a_build_makes() {
        let mut rng = Mt19937::new(3);
        let mut g = graph(&mut rng, 500, 2000);
        // A twin whose in-rows catch up after every batch, as rows kept in step would be.
        let mut twin = g.clone();
        let (_, _) = (g.in_rows(), twin.in_rows());
        let mut caught_up = 0;
        for step in 0..60 {
            let b = batch(&mut rng, &g, 8);
            g.apply(&b.view()).unwrap();
            twin.apply(&b.view()).unwrap();
            let _ = twin.in_rows();
            assert!(!g.has_in_rows(), "step {step}: a batch leaves the in-rows behind");
            if step % 4 == 3 {
                // Behind by 4 batches of 8 changes: within the share, so caught up, not rebuilt.
                assert!(g.keeps_in_rows(), "step {step}");
                assert!(!g.in_store().is_fresh(), "step {step}: caught up");
                caught_up += 1;
                assert_eq!(content(g.in_rows()), content(twin.in_rows()), "step {step}: the rows kept in step");
                assert_eq!(by_tail(g.in_rows()), built(&g), "step {step}");
            }
        }
        assert_eq!(caught_up, 15);
        assert!(g.in_store().compactions() > 0, "the replays compacted the rows");
    }

    #[test]
    fn a_lag_past_its_share_is_dropped_and_the_in_rows_built_again() {
        let mut rng = Mt19937::new(4);
        let mut g = graph(&mut rng, 100, 400);
        let _ = g.in_rows();
        // 400 / 16 = 25 edits at most: the fourth batch of 8 changes passes it.
        for _ in 0..4 {
            let b = batch(&mut rng, &g, 8);
            g.apply(&b.view()).unwrap();
        }
        assert!(!g.keeps_in_rows());
        assert!(g.in_store().is_fresh());
        assert_eq!(by_tail(g.in_rows()), built(&g));
    }

    #[test]
    fn an_undo_leaves_the_in_rows_as_they_were_lagging_or_caught_up() {
        let mut rng = Mt19937::new(5);
        let mut g = graph(&mut rng, 300, 1200);
        let _ = g.in_rows();
        for step in 0..40 {
            // A batch kept, the in-rows left behind by it or read, then a batch undone: before
            // anything read the in-rows (they lag) or after a read caught them up with it. A twin
            // that only keeps the first batch tells what the rows must be.
            let kept = batch(&mut rng, &g, 6);
            let mut twin = g.clone();
            twin.apply(&kept.view()).unwrap();
            g.apply(&kept.view()).unwrap();
            let read_before = step % 4 < 2;
            if read_before {
                let _ = g.in_rows();
            }
            let b = batch(&mut rng, &g, 6);
            g.apply_uncommitted(&b.view()).unwrap();
            let read_open = step % 2 == 1;
            if read_open {
                assert_eq!(by_tail(g.in_rows()), built(&g), "step {step}: caught up with the open batch");
            }
            g.undo();
            assert_eq!(g.has_in_rows(), read_before || read_open, "step {step}");
            assert!(g.keeps_in_rows());
            assert_eq!(content(g.rows()), content(twin.rows()), "step {step}");
            assert_eq!(content(g.in_rows()), content(twin.in_rows()), "step {step}: in-rows after the undo");
        }
    }
}
