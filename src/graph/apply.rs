//! A batch applied in place: the originals' batch semantics (deletions first, then upserts),
//! exactly, on a resident graph's out-rows and, where they are built, its in-rows (whose edits are
//! listed here and made when the in-rows are next read, `lag.rs`).
//!
//! Deletions remove the first copy of (u, v) in row order; insertions are upserts (the first copy
//! takes the insertion's weights, the last insertion of a pair wins; otherwise the edge is
//! appended to the row in insertion order). The per-insertion weight-increase mask compares the
//! first copy of (u, v) in the row before the batch with the first copy after it.
//!
//! The in-rows follow with each edge turned around: row v lists the copies of every edge u -> v,
//! and the copies of one edge keep their order in row u (a fresh build lists them so; a removal
//! keeps the order of the rest and an append goes last, in both), so "the first copy of u -> v"
//! is the same copy in both. A change costs a scan of its tail's row, and of its head's in-row when
//! that is next read.

use super::batch::BatchView;
use super::csr::{ColumnFacts, Csr, MAX_EDGES};
use super::Graph;
use crate::error::{Error, Result};

/// The outcome of applying a batch to a CSR: the updated graph and, per insertion, the bit mask
/// of the objectives whose weight increased.
#[derive(Debug, Clone)]
pub struct Applied {
    /// The graph after the batch.
    pub csr: Csr,
    /// Per insertion, bit `j` set when the batch made objective `j` of an existing edge heavier
    /// (0 for an edge the batch added).
    pub increase_masks: Vec<u64>,
}

/// Applies `batch` to `g` and returns the new graph; `g` is not modified.
pub fn apply_batch(g: &Csr, batch: &BatchView<'_>) -> Result<Applied> {
    let mut graph = Graph::new(g.clone());
    let increase_masks = graph.apply(batch)?;
    Ok(Applied { csr: graph.to_csr(), increase_masks })
}

/// The scratch memory of the applies of one graph, kept between batches.
#[derive(Debug, Clone, Default)]
pub(crate) struct ApplyScratch {
    /// Per insertion, the bit mask of the objectives whose weight increased.
    pub(crate) masks: Vec<u64>,
    /// (row, change) sorted by row, batch order within a row: deletions are `2 i`, insertions
    /// `2 i + 1`.
    by_row: Vec<(u32, u32)>,
    /// One row's (head, copies) while its room is planned.
    copies: Vec<(i32, u32)>,
    /// Per insertion of the row being changed, the K weights of the first copy of its edge
    /// before the batch (unset where there was none).
    before: Vec<i32>,
    had: Vec<bool>,
    /// The facts before the batch, for the undo.
    facts: Vec<ColumnFacts>,
}

impl ApplyScratch {
    pub(crate) fn bytes(&self) -> usize {
        8 * (self.masks.capacity() + self.by_row.capacity() + self.copies.capacity()) + 4 * self.before.capacity() + self.had.capacity()
    }
}

/// Where a batch stands in a graph between its apply and its commit.
impl Graph {
    /// Validates `batch`, then applies it to the rows (out and, if built, in) without committing;
    /// the masks are left in `scratch.masks`. On error nothing has changed.
    pub(crate) fn apply_uncommitted(&mut self, batch: &BatchView<'_>) -> Result<()> {
        let (n, k) = (self.n(), self.k());
        batch.validate(n, k)?;
        if self.m() + batch.num_insertions() > MAX_EDGES {
            return Err(Error::Capacity(format!(
                "dyng: the updated graph could have more than 2^31-1 edges ({} + {} insertions)",
                self.m(),
                batch.num_insertions()
            )));
        }
        let s = &mut self.scratch;
        s.by_row.clear();
        s.by_row.extend(batch.del_src.iter().enumerate().map(|(i, &u)| (u as u32, 2 * i as u32)));
        s.by_row.extend(batch.ins_src.iter().enumerate().map(|(i, &u)| (u as u32, 2 * i as u32 + 1)));
        // Stable: deletions (all listed first) before insertions, each in batch order.
        s.by_row.sort_by_key(|&(u, _)| u);
        // Room for the rows that will move, reserved before anything changes.
        let out_room = self.plan_room(batch);
        self.out.reserve_room(out_room)?;
        // In-rows in step start to lag: this batch's edits of them are listed, and made when
        // something first reads them (`lag.rs`).
        let lag = self.in_lag.get_mut();
        if let Some(rows) = self.in_rows.take() {
            lag.start(rows);
        }
        if lag.holds_rows() {
            lag.open_batch();
        }
        let s = &mut self.scratch;
        s.facts.clone_from(&self.facts);
        s.masks.clear();
        s.masks.resize(batch.num_insertions(), 0);
        let mut at = 0;
        let by_row = std::mem::take(&mut s.by_row);
        while at < by_row.len() {
            let u = by_row[at].0;
            let end = at + by_row[at..].iter().position(|x| x.0 != u).unwrap_or(by_row.len() - at);
            self.change_row(u as usize, &by_row[at..end], batch);
            at = end;
        }
        self.scratch.by_row = by_row;
        Ok(())
    }

    /// The slots the batch's moves will take at the end of the out-rows: per changed row, its
    /// edges removed and appended, counted as the apply will find them (a deletion takes a copy if
    /// one is left, an insertion appends when no copy of its edge is).
    fn plan_room(&mut self, batch: &BatchView<'_>) -> usize {
        let s = &mut self.scratch;
        let mut out_room = 0;
        let mut at = 0;
        while at < s.by_row.len() {
            let u = s.by_row[at].0 as usize;
            let end = at + s.by_row[at..].iter().position(|x| x.0 as usize != u).unwrap_or(s.by_row.len() - at);
            s.copies.clear();
            let (mut removed, mut appended) = (0, 0);
            for &(_, c) in &s.by_row[at..end] {
                let (v, insertion) = if c % 2 == 0 { (batch.del_dst[c as usize / 2], false) } else { (batch.ins_dst[c as usize / 2], true) };
                let i = match s.copies.iter().position(|x| x.0 == v) {
                    Some(i) => i,
                    None => {
                        let r = self.out.rows();
                        let copies = r.heads()[r.row(u)].iter().filter(|&&x| x == v).count() as u32;
                        s.copies.push((v, copies));
                        s.copies.len() - 1
                    }
                };
                let copies = &mut s.copies[i].1;
                match (insertion, *copies) {
                    (false, 0) | (true, 1..) => {}
                    (false, _) => {
                        *copies -= 1;
                        removed += 1;
                    }
                    (true, 0) => {
                        *copies = 1;
                        appended += 1;
                    }
                }
            }
            out_room += self.out.room_for(u, removed, appended);
            at = end;
        }
        out_room
    }

    /// Applies row `u`'s deletions and insertions (`changes`, batch order, deletions first) and
    /// sets its insertions' masks.
    fn change_row(&mut self, u: usize, changes: &[(u32, u32)], batch: &BatchView<'_>) {
        let k = self.k();
        let Graph { out, in_lag, facts, scratch: s, .. } = self;
        let lag = in_lag.get_mut();
        let listed = lag.holds_rows();
        let first_ins = changes.iter().position(|x| x.1 % 2 == 1).unwrap_or(changes.len());
        let (dels, inss) = changes.split_at(first_ins);
        // The first copies before the batch, for the masks.
        s.before.clear();
        s.had.clear();
        for &(_, c) in inss {
            let v = batch.ins_dst[c as usize / 2];
            match out.find(u, v) {
                Some(e) => {
                    s.had.push(true);
                    s.before.extend((0..k).map(|j| out.weight(j, e)));
                }
                None => {
                    s.had.push(false);
                    s.before.extend(std::iter::repeat_n(0, k));
                }
            }
        }
        for &(_, c) in dels {
            let v = batch.del_dst[c as usize / 2];
            let Some(e) = out.find(u, v) else { continue };
            for (j, f) in facts.iter_mut().enumerate() {
                f.remove(out.weight(j, e));
            }
            out.remove(u, e);
            if listed {
                lag.remove(v, u);
            }
        }
        for &(_, c) in inss {
            let i = c as usize / 2;
            let (v, w) = (batch.ins_dst[i], batch.insertion_weights(i));
            match out.find(u, v) {
                Some(e) => {
                    for (j, f) in facts.iter_mut().enumerate() {
                        f.remove(out.weight(j, e));
                        f.add(w[j]);
                    }
                    out.reweight(u, e, |j| w[j]);
                    if listed {
                        lag.reweight(v, u, |j| w[j]);
                    }
                }
                None => {
                    for (j, f) in facts.iter_mut().enumerate() {
                        f.add(w[j]);
                    }
                    out.append(u, v, |j| w[j]);
                    if listed {
                        lag.append(v, u, |j| w[j]);
                    }
                }
            }
        }
        // Every insertion of a pair compares the pair's final first copy with its first copy
        // before the batch.
        for (x, &(_, c)) in inss.iter().enumerate() {
            if !s.had[x] {
                continue;
            }
            let i = c as usize / 2;
            let e = out.find(u, batch.ins_dst[i]).expect("an inserted edge is in its row");
            let before = &s.before[x * k..(x + 1) * k];
            s.masks[i] = (0..k).filter(|&j| out.weight(j, e) > before[j]).fold(0, |m, j| m | 1 << j);
        }
    }

    /// Keeps the applied batch: a new version of the graph.
    pub(crate) fn commit(&mut self) {
        self.out.commit();
        if let Some(inn) = self.in_rows.get_mut() {
            inn.commit();
        }
        let m = self.m();
        self.in_lag.get_mut().commit(m);
        self.version += 1;
    }

    /// Reverts the applied batch: the graph is exactly as before it (an in-rows built since the
    /// apply is of the new state, so it is dropped).
    pub(crate) fn undo(&mut self) {
        self.out.undo();
        if self.in_rows.get().is_some_and(|r| r.is_fresh()) {
            self.in_rows.take();
        } else if let Some(inn) = self.in_rows.get_mut() {
            inn.undo();
        }
        if let Some(rows) = self.in_lag.get_mut().undo() {
            let _ = self.in_rows.set(rows);
        }
        std::mem::swap(&mut self.facts, &mut self.scratch.facts);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::batch::Batch;
    use crate::graph::csr::WeightLayout;

    /// The test vector at the end of reference-behaviour §2.
    #[test]
    fn reference_test_vector() {
        let g = Csr::from_arrays(
            4,
            2,
            vec![0, 3, 3, 4, 4],
            vec![1, 2, 1, 3],
            &[5, 5, 7, 7, 9, 9, 4, 4],
            WeightLayout::EdgeMajor,
        )
        .unwrap();
        let mut b = Batch::new(2);
        b.delete(0, 2);
        b.delete(2, 3);
        b.delete(0, 2);
        b.insert(0, 1, &[6, 1]);
        b.insert(2, 3, &[2, 8]);
        b.insert(0, 1, &[4, 9]);
        b.insert(3, 0, &[1, 1]);
        b.insert(2, 3, &[5, 2]);
        let a = apply_batch(&g, &b.view()).unwrap();
        assert_eq!(a.csr.row_ptr(), &[0, 2, 2, 3, 4]);
        assert_eq!(a.csr.col_ind(), &[1, 1, 3, 0]);
        assert_eq!(a.csr.weights_edge_major(), vec![4, 9, 9, 9, 5, 2, 1, 1]);
        assert_eq!(a.increase_masks, vec![2, 1, 2, 0, 1]);
    }
}
