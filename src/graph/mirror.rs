//! Copies of a graph's rows kept outside it (the CUDA engine's device mirror), and what such a
//! copy must receive to catch up with the rows: the rows changed since it last caught up, or
//! everything.
//!
//! Every [`SlackRows`] keeps a [`Journal`]: the rows each change touched, in order (an undo
//! touches them again, so a copy taken between a batch and its undo takes them back), and a
//! layout epoch that a compaction or a change of the slot count replaces (rows then move
//! everywhere: only a full copy catches up). A copy remembers the [`SyncPoint`] it reached;
//! [`plan`] tells it what to upload from there and gathers the changed rows into one staging
//! array, applied by one copy and one scatter (`scatterRowsKernel` in `kernels/graph.cu`, whose
//! host twin is `scatter` in the tests below). Only the rows' own slots are copied: the other
//! slots (slack, regions rows moved away from, room at the end) are read by no reader of rows,
//! so a copy need not match them.
//!
//! A commit leaves at most `n / 16 + 1024` rows in the journal (past that it is emptied; a copy
//! that lagged further behind takes everything again, at a cost amortised over those changes),
//! so the journal's work and memory are those of the changes. The copies themselves live in
//! [`Attached`], a slot of the graph opaque to it.

use super::rows::SlackRows;
use parking_lot::Mutex;
use std::any::Any;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};

/// Epochs are unique across stores, so that a store built anew (the in-rows after an undo that
/// dropped them) never looks like the one a copy was taken of.
static NEXT_EPOCH: AtomicU64 = AtomicU64::new(1);

fn next_epoch() -> u64 {
    NEXT_EPOCH.fetch_add(1, Ordering::Relaxed)
}

/// The rows a store's changes touched since its layout last changed (see the module doc).
#[derive(Debug)]
pub(crate) struct Journal {
    epoch: u64,
    /// Position of `rows[0]` in the store's history of touches.
    base: u64,
    rows: Vec<u32>,
}

impl Default for Journal {
    fn default() -> Self {
        Journal { epoch: next_epoch(), base: 0, rows: Vec::new() }
    }
}

impl Clone for Journal {
    /// A cloned store is another store: no copy of the original is a copy of it.
    fn clone(&self) -> Self {
        Journal::default()
    }
}

impl Journal {
    /// Notes a change of row `u`.
    #[inline]
    pub(crate) fn touch(&mut self, u: usize) {
        self.rows.push(u as u32);
    }

    /// Notes that rows moved everywhere (a compaction) or the slot count changed.
    pub(crate) fn relayout(&mut self) {
        self.epoch = next_epoch();
        self.base += self.rows.len() as u64;
        self.rows.clear();
    }

    /// At a commit: forgets the touches once they pass `n / 16 + 1024` (the capacity stays, so a
    /// stream of small batches allocates nothing).
    pub(crate) fn trim(&mut self, n: usize) {
        let cap = super::small_batch(n);
        if self.rows.len() > cap {
            self.base += self.rows.len() as u64;
            self.rows.clear();
            super::keep_room(&mut self.rows, cap);
        }
    }

    /// Where a copy that caught up now stands.
    pub(crate) fn point(&self) -> SyncPoint {
        SyncPoint { epoch: self.epoch, seq: self.base + self.rows.len() as u64 }
    }

    /// The rows touched since `p` (with repeats), or `None` when only a full copy catches up.
    pub(crate) fn since(&self, p: SyncPoint) -> Option<&[u32]> {
        if p.epoch != self.epoch || p.seq < self.base {
            return None;
        }
        self.rows.get((p.seq - self.base) as usize..)
    }

    pub(crate) fn bytes(&self) -> usize {
        4 * self.rows.capacity()
    }
}

/// Where a copy of a store stands: the layout epoch and the number of touches it has taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SyncPoint {
    epoch: u64,
    seq: u64,
}

/// What a copy must do to catch up (see [`plan`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Plan {
    /// It is up to date.
    Current,
    /// Take every array: the bounds, the heads and every column, whole.
    Full,
    /// Scatter the staged rows ([`Staging::data`]): `rows` rows of `slots` slots in all.
    Rows { rows: usize, slots: usize },
}

/// The staging array of the changed rows, reused from one plan to the next. Layout, in i32:
/// the row ids (`r`), their (start, end) pairs (`2 r`), the exclusive prefix sums of their
/// lengths (`r + 1`), their heads (`s`), then each column's weights (`s` each).
#[derive(Debug, Default)]
pub(crate) struct Staging {
    rows: Vec<u32>,
    data: Vec<i32>,
}

impl Staging {
    /// The staged rows of the last [`Plan::Rows`].
    pub(crate) fn data(&self) -> &[i32] {
        &self.data
    }
}

/// The i32 words of a full copy of `store`: its bounds, heads and columns.
pub(crate) fn full_words(store: &SlackRows) -> usize {
    let rows = store.rows();
    rows.bounds().0.len() + (rows.k() + 1) * rows.heads().len()
}

/// What a copy of `store` that stands at `at` (`None`: it holds nothing yet) must take to catch
/// up; for [`Plan::Rows`] the rows are in `staging`, each once, by id. The copy then stands at
/// `store.journal().point()`. Staging more than a quarter of a full copy's words gives way to the
/// full copy (a few large copies beat gathering most of the graph).
pub(crate) fn plan(store: &SlackRows, at: Option<SyncPoint>, staging: &mut Staging) -> Plan {
    let Some(changed) = at.and_then(|p| store.journal().since(p)) else { return Plan::Full };
    if changed.is_empty() {
        return Plan::Current;
    }
    let rows = store.rows();
    let full = full_words(store);
    let list = &mut staging.rows;
    list.clear();
    list.extend_from_slice(changed);
    list.sort_unstable();
    list.dedup();
    let r = list.len();
    let slots: usize = list.iter().map(|&u| rows.row(u as usize).len()).sum();
    if 4 * (4 * r + 1 + (rows.k() + 1) * slots) > full {
        return Plan::Full;
    }
    let data = &mut staging.data;
    data.clear();
    data.extend(list.iter().map(|&u| u as i32));
    for &u in list.iter() {
        let e = rows.row(u as usize);
        data.extend_from_slice(&[e.start as i32, e.end as i32]);
    }
    data.push(0);
    let mut at = 0;
    for &u in list.iter() {
        at += rows.row(u as usize).len() as i32;
        data.push(at);
    }
    for &u in list.iter() {
        data.extend_from_slice(&rows.heads()[rows.row(u as usize)]);
    }
    for j in 0..rows.k() {
        let c = rows.column(j);
        for &u in list.iter() {
            data.extend_from_slice(&c[rows.row(u as usize)]);
        }
    }
    Plan::Rows { rows: r, slots }
}

/// Copies of a graph kept by engines (the CUDA engine's device mirror), each under the token of
/// its owner, dropped with the graph or, once their owner is gone, at the next look-up. The graph
/// holds them without knowing their types, so that it depends on no engine; a clone of the graph
/// holds none (it is another graph).
#[derive(Default)]
pub(crate) struct Attached {
    entries: Mutex<Vec<Held>>,
}

/// One owner's copy: the owner's token and the copy.
type Held = (Weak<()>, Box<dyn Any + Send>);

impl Clone for Attached {
    fn clone(&self) -> Self {
        Attached::default()
    }
}

impl std::fmt::Debug for Attached {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Attached").field("copies", &self.entries.lock().len()).finish()
    }
}

impl Attached {
    /// Runs `f` on `owner`'s copy of type `T`, made by `T::default()` on first use. Look-ups of
    /// one graph are serialised; `f` should not block for long.
    pub(crate) fn with<T: Any + Send + Default, R>(&self, owner: &Arc<()>, f: impl FnOnce(&mut T) -> R) -> R {
        let mut entries = self.entries.lock();
        entries.retain(|(w, _)| w.strong_count() > 0);
        let mine = |w: &Weak<()>| std::ptr::eq(w.as_ptr(), Arc::as_ptr(owner));
        if !entries.iter().any(|(w, b)| mine(w) && b.is::<T>()) {
            entries.push((Arc::downgrade(owner), Box::new(T::default())));
        }
        let copy = entries
            .iter_mut()
            .find_map(|(w, b)| if mine(w) { b.downcast_mut::<T>() } else { None })
            .expect("a copy of this type was just found or made");
        f(copy)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::{Batch, Csr, Graph};

    /// The host twin of `scatterRowsKernel` (kernels/graph.cu): the same layout, the same
    /// per-slot search of its row.
    fn scatter(data: &[i32], r: usize, s: usize, bounds: &mut [i32], heads: &mut [i32], columns: &mut [Vec<i32>]) {
        let (ids, rest) = data.split_at(r);
        let (pairs, rest) = rest.split_at(2 * r);
        let (offsets, rest) = rest.split_at(r + 1);
        let (staged_heads, staged_weights) = rest.split_at(s);
        assert_eq!(staged_weights.len(), columns.len() * s, "the staging holds every column");
        for i in 0..r {
            let u = ids[i] as usize;
            bounds[2 * u] = pairs[2 * i];
            bounds[2 * u + 1] = pairs[2 * i + 1];
        }
        for i in 0..s {
            // The last row whose offset is at most i (empty rows share their offset).
            let (mut lo, mut hi) = (0, r);
            while lo + 1 < hi {
                let mid = (lo + hi) / 2;
                if offsets[mid] as usize <= i {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            let dst = (pairs[2 * lo] + i as i32 - offsets[lo]) as usize;
            heads[dst] = staged_heads[i];
            for (j, c) in columns.iter_mut().enumerate() {
                c[dst] = staged_weights[j * s + i];
            }
        }
    }

    /// A copy of a store kept as a device would keep it, caught up through [`plan`] only.
    #[derive(Default)]
    struct Replica {
        bounds: Vec<i32>,
        heads: Vec<i32>,
        columns: Vec<Vec<i32>>,
        at: Option<SyncPoint>,
        fulls: usize,
        staged_rows: usize,
        /// Changes applied to the store since the replica last caught up.
        behind: usize,
    }

    impl Replica {
        fn sync(&mut self, store: &SlackRows, staging: &mut Staging) -> Plan {
            let p = plan(store, self.at, staging);
            let rows = store.rows();
            match p {
                Plan::Current => {}
                Plan::Full => {
                    self.bounds = rows.bounds().0.to_vec();
                    self.heads = rows.heads().to_vec();
                    self.columns = (0..rows.k()).map(|j| rows.column(j).to_vec()).collect();
                    self.fulls += 1;
                }
                Plan::Rows { rows: r, slots } => {
                    assert_eq!(staging.data().len(), 4 * r + 1 + (rows.k() + 1) * slots);
                    scatter(staging.data(), r, slots, &mut self.bounds, &mut self.heads, &mut self.columns);
                    self.staged_rows += r;
                }
            }
            self.at = Some(store.journal().point());
            self.behind = 0;
            p
        }

        /// Whether the store's layout changed since the replica last caught up.
        fn relaid(&self, store: &SlackRows) -> bool {
            self.at.is_none_or(|p| p.epoch != store.journal().point().epoch)
        }

        /// Every row of the replica is the store's: bounds, heads and weights.
        fn check(&self, store: &SlackRows, what: &str) {
            let rows = store.rows();
            assert_eq!(self.bounds, rows.bounds().0, "{what}: bounds");
            for u in 0..rows.n() {
                let e = rows.row(u);
                assert_eq!(self.heads[e.clone()], rows.heads()[e.clone()], "{what}: heads of row {u}");
                for j in 0..rows.k() {
                    assert_eq!(self.columns[j][e.clone()], rows.column(j)[e.clone()], "{what}: column {j} of row {u}");
                }
            }
        }
    }

    struct Rng(u64);

    impl Rng {
        fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n as u64) as usize
        }
    }

    fn random_graph(n: usize, m: usize, k: usize, rng: &mut Rng) -> Graph {
        let src: Vec<i32> = (0..m).map(|_| rng.below(n) as i32).collect();
        let dst: Vec<i32> = (0..m).map(|_| rng.below(n) as i32).collect();
        let w: Vec<i32> = (0..m * k).map(|_| 1 + rng.below(50) as i32).collect();
        Graph::new(Csr::from_edges(n, k, &src, &dst, &w).unwrap())
    }

    /// Deletions of existing edges, reweights (upserts of existing edges), insertions of new
    /// ones (rows that fill up move), a quarter of them into eight hot rows that keep growing.
    fn random_batch(g: &Graph, changes: usize, rng: &mut Rng) -> Batch {
        let (n, k) = (g.n(), g.k());
        let mut b = Batch::new(k);
        let rows = g.rows();
        for _ in 0..changes {
            let u = if rng.below(4) == 0 { rng.below(8) } else { rng.below(n) };
            let w: Vec<i32> = (0..k).map(|_| 1 + rng.below(60) as i32).collect();
            let row = rows.row(u);
            match rng.below(3) {
                0 if !row.is_empty() => b.delete(u as i32, rows.heads()[row.start + rng.below(row.len())]),
                1 if !row.is_empty() => b.insert(u as i32, rows.heads()[row.start + rng.below(row.len())], &w),
                _ => b.insert(u as i32, rng.below(n) as i32, &w),
            }
        }
        b
    }

    /// Catches `r` up with `store` and checks it. A full copy must have a reason: a first copy, a
    /// changed layout, touches the journal forgot, or changed rows holding more than a quarter of
    /// a full copy's words; otherwise the rows staged are the distinct rows the journal lists.
    fn sync_and_check(r: &mut Replica, store: &SlackRows, staging: &mut Staging, what: &str) -> Plan {
        let listed: Option<Vec<u32>> = r.at.and_then(|p| store.journal().since(p)).map(|c| {
            let mut c = c.to_vec();
            c.sort_unstable();
            c.dedup();
            c
        });
        let p = r.sync(store, staging);
        r.check(store, what);
        let rows = store.rows();
        match (p, listed) {
            (Plan::Full, None) => {}
            (Plan::Full, Some(listed)) => {
                let slots: usize = listed.iter().map(|&u| rows.row(u as usize).len()).sum();
                let words = 4 * listed.len() + 1 + (rows.k() + 1) * slots;
                assert!(4 * words > full_words(store), "{what}: a full copy for {} rows of {slots} slots", listed.len());
            }
            (Plan::Rows { rows, .. }, Some(listed)) => assert_eq!(rows, listed.len(), "{what}"),
            (Plan::Current, Some(listed)) => assert!(listed.is_empty(), "{what}"),
            (p, None) => panic!("{what}: {p:?} for a replica that needs a full copy"),
        }
        p
    }

    /// Random streams of batches through the resident graph: replicas of the out-rows and
    /// in-rows, caught up only through the plans (after each apply, before its commit, as an
    /// update does; sometimes only after several batches; sometimes followed by an undo, as a
    /// failed update is), equal the rows every time, across compactions and growth; full copies
    /// come only from a changed layout or a large change, and a 1-change batch stages one row of
    /// each.
    #[test]
    fn replicas_caught_up_by_the_plans_equal_the_rows() {
        for seed in 1..=6u64 {
            let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ seed);
            let (n, k) = (200 + 150 * seed as usize, 1 + seed as usize % 3);
            let mut g = random_graph(n, 3 * n, k, &mut rng);
            g.in_rows();
            let (mut out, mut inn, mut staging) = (Replica::default(), Replica::default(), Staging::default());
            let (mut undone, mut skipped, mut singles) = (0, 0, 0);
            for step in 0..400 {
                let changes = match rng.below(10) {
                    0 => 1 + rng.below(n),
                    1..=3 => 1,
                    _ => 1 + rng.below(12),
                };
                let batch = random_batch(&g, changes, &mut rng);
                g.apply_uncommitted(&batch.view()).unwrap();
                out.behind += changes;
                inn.behind += changes;
                let what = format!("seed {seed}, step {step}");
                let single = changes == 1 && out.behind == 1 && inn.behind == 1 && !out.relaid(g.out_store()) && !inn.relaid(g.in_store());
                // Caught up after most applies, as an update does; left behind after some.
                let synced = rng.below(8) != 0;
                if synced {
                    let po = sync_and_check(&mut out, g.out_store(), &mut staging, &format!("{what}, out-rows"));
                    let pi = sync_and_check(&mut inn, g.in_store(), &mut staging, &format!("{what}, in-rows"));
                    if single {
                        // One change touches its tail's row and its head's in-row, nothing more.
                        assert!(matches!(po, Plan::Rows { rows: 1, .. }), "{what}: {po:?}");
                        assert!(matches!(pi, Plan::Rows { rows: 1, .. }), "{what}: {pi:?}");
                        singles += 1;
                    }
                } else {
                    skipped += 1;
                }
                if rng.below(6) == 0 {
                    // The undo touches the batch's rows again: the replicas are behind by them.
                    g.undo();
                    out.behind += changes;
                    inn.behind += changes;
                    undone += 1;
                } else {
                    g.commit();
                }
                if synced && rng.below(3) == 0 {
                    sync_and_check(&mut out, g.out_store(), &mut staging, &format!("{what}, out-rows after the commit or undo"));
                    sync_and_check(&mut inn, g.in_store(), &mut staging, &format!("{what}, in-rows after the commit or undo"));
                }
            }
            assert!(g.compactions() >= 2, "seed {seed}: the stream crosses the compaction threshold ({})", g.compactions());
            assert!(undone > 20 && skipped > 20 && singles > 20, "seed {seed}: {undone} undos, {skipped} skipped, {singles} single changes");
            assert!(out.staged_rows > 0 && inn.staged_rows > 0 && out.fulls > 1 && inn.fulls > 1);
        }
    }

    /// A journal forgets past its cap at a commit: a replica that lagged behind the forgotten
    /// touches takes everything, one that kept up, or lagged after them, does not.
    #[test]
    fn a_trimmed_journal_sends_lagging_replicas_a_full_copy() {
        let mut rng = Rng(7);
        let n = 2000;
        let mut g = random_graph(n, 3 * n, 2, &mut rng);
        let (mut kept_up, mut lagging, mut recent) = (Replica::default(), Replica::default(), Replica::default());
        let mut staging = Staging::default();
        for r in [&mut kept_up, &mut lagging] {
            r.sync(g.out_store(), &mut staging);
        }
        let epoch = g.out_store().journal().point().epoch;
        let cap = crate::graph::small_batch(n);
        for step in 0..cap + 100 {
            // Reweights only: no row moves, so no layout change.
            let u = loop {
                let u = rng.below(n);
                if !g.rows().row(u).is_empty() {
                    break u;
                }
            };
            let mut b = Batch::new(2);
            b.insert(u as i32, g.rows().heads()[g.rows().row(u).start], &[1 + step as i32 % 7, 2]);
            g.apply_uncommitted(&b.view()).unwrap();
            assert_eq!(kept_up.sync(g.out_store(), &mut staging), Plan::Rows { rows: 1, slots: g.rows().row(u).len() }, "step {step}");
            g.commit();
            assert_eq!(kept_up.sync(g.out_store(), &mut staging), Plan::Current, "step {step}");
            if step == cap + 10 {
                recent.sync(g.out_store(), &mut staging);
            }
        }
        assert_eq!(g.out_store().journal().point().epoch, epoch, "no layout change");
        assert_eq!(kept_up.fulls, 1);
        assert_eq!(lagging.sync(g.out_store(), &mut staging), Plan::Full, "the lagging replica's touches were forgotten");
        assert!(matches!(recent.sync(g.out_store(), &mut staging), Plan::Rows { .. }));
        for (r, what) in [(&kept_up, "kept up"), (&lagging, "lagging"), (&recent, "recent")] {
            r.check(g.out_store(), what);
        }
        assert!(g.out_store().journal().bytes() <= 4 * 4 * cap, "{} bytes", g.out_store().journal().bytes());
    }

    #[test]
    fn attached_copies_are_per_owner_and_dropped_with_their_owner() {
        let slot = Attached::default();
        let (a, b) = (Arc::new(()), Arc::new(()));
        slot.with(&a, |x: &mut u32| *x += 1);
        slot.with(&a, |x: &mut u32| *x += 1);
        slot.with(&b, |x: &mut u32| *x += 10);
        assert_eq!(slot.with(&a, |x: &mut u32| *x), 2);
        assert_eq!(slot.with(&b, |x: &mut u32| *x), 10);
        drop(b);
        assert_eq!(slot.with(&a, |x: &mut u32| *x), 2);
        assert_eq!(slot.entries.lock().len(), 1, "the copy of a dropped owner is freed");
        assert_eq!(slot.clone().entries.lock().len(), 0, "a clone holds no copy");
    }
}
