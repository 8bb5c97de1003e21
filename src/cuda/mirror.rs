//! The CUDA engine's device mirror of a resident graph: its out-rows and in-rows as the host holds
//! them ((start, end) pairs, slots with room to grow, K columns), brought up to date before each
//! use by uploading what changed since the last one, as the rows' journals tell
//! (`graph/mirror.rs`): the rows a batch touched, their bounds and slots gathered into one staging
//! array, copied once and scattered by one kernel per direction (`scatterRowsKernel`). A full
//! upload happens on first use, after a compaction or a change of the slot count, when the journal
//! forgot what a lagging mirror missed, or when the changed rows are a large share of the graph.
//!
//! The graph holds its mirrors (an opaque slot, `graph::mirror::Attached`, keyed by the engine's
//! token) rather than the engine holding a map by graph id: a mirror then lives exactly as long as
//! its graph, where a map would keep a dropped graph's device memory until some eviction, and the
//! graph still names no CUDA type. A mirror whose engine is gone is freed at the graph's next
//! look-up.
//!
//! A failed update undoes its batch on the host after the mirror took it; the undo touches the
//! batch's rows again, so the next use uploads them as they are again. A failure while uploading
//! leaves the mirror empty: the next use uploads everything.

use super::device_graph::{check_indexable, DeviceGraph, DeviceRows};
use super::engine::CudaEngine;
use super::workspace::DeviceBuffer;
use crate::error::{Error, Result};
use crate::graph::mirror::{plan, Plan, Staging, SyncPoint};
use crate::graph::rows::SlackRows;
use crate::graph::Graph;
use std::sync::Arc;

/// What a graph's device mirror has uploaded so far (clock-free checks of what an update costs).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MirrorCounters {
    /// Times the mirror was brought up to date (once per solve or update that used it).
    pub syncs: u64,
    /// Whole uploads of the out-rows or of the in-rows (each direction counts once).
    pub full_uploads: u64,
    /// Uploads of changed rows (one copy and one scatter each).
    pub row_uploads: u64,
    /// The rows those row uploads carried.
    pub rows_uploaded: u64,
    /// The edge slots (with each row's room to grow) those row uploads carried.
    pub slots_uploaded: u64,
}

/// One engine's mirror of one graph.
#[derive(Default)]
pub(crate) struct Mirror {
    /// `None` until the first use and after a failed upload.
    graph: Option<Arc<DeviceGraph>>,
    /// Where each direction's copy stands in its rows' journal.
    out_at: Option<SyncPoint>,
    in_at: Option<SyncPoint>,
    staging: Staging,
    staged: DeviceBuffer<i32>,
    counters: MirrorCounters,
}

// SAFETY: device allocations and host vectors only; uses are ordered on the engine's stream and
// serialised by the graph's slot lock.
unsafe impl Send for Mirror {}

impl CudaEngine {
    /// The device mirror of `graph` for this engine, brought up to date: its out-rows, and its
    /// in-rows when `with_in_rows` (an update pulls over them) or once the mirror holds them.
    pub fn mirror(&self, graph: &Graph, with_in_rows: bool) -> Result<Arc<DeviceGraph>> {
        graph.mirrors().with(&self.owner, |m: &mut Mirror| m.sync(self, graph, with_in_rows))
    }

    /// What the device mirror of `graph` has uploaded so far (zeros where it has none).
    pub fn mirror_counters(&self, graph: &Graph) -> MirrorCounters {
        graph.mirrors().with(&self.owner, |m: &mut Mirror| m.counters)
    }
}

/// Whether a copy at `at` of `store` is up to date.
fn current(store: &SlackRows, at: Option<SyncPoint>) -> bool {
    at.and_then(|p| store.journal().since(p)).is_some_and(<[u32]>::is_empty)
}

impl Mirror {
    fn sync(&mut self, engine: &CudaEngine, graph: &Graph, with_in_rows: bool) -> Result<Arc<DeviceGraph>> {
        self.counters.syncs += 1;
        let out = graph.out_store();
        let inn = (with_in_rows || self.in_at.is_some()).then(|| graph.in_store());
        if let Some(dg) = &self.graph {
            if current(out, self.out_at) && inn.is_none_or(|s| current(s, self.in_at)) {
                return Ok(dg.clone());
            }
        }
        // Changed in place, unless a run still holds it: none does while the graph can change
        // (a run borrows the graph, and its device work ends before it returns), but one holding
        // it gets a fresh mirror rather than a changing one.
        let unshared = |a: &Arc<DeviceGraph>| Arc::strong_count(a) == 1 && Arc::weak_count(a) == 0;
        let (mut out_at, mut in_at) = (self.out_at.take(), self.in_at.take());
        let mut arc = match self.graph.take().filter(unshared) {
            Some(a) => a,
            None => {
                (out_at, in_at) = (None, None);
                Arc::new(DeviceGraph::default())
            }
        };
        let dg = Arc::get_mut(&mut arc).ok_or_else(|| Error::Internal("a fresh device mirror is shared".into()))?;
        let (n, k) = (graph.n(), graph.k());
        let slots = out.rows().heads().len().max(inn.map_or(0, |s| s.rows().heads().len()));
        check_indexable(n, slots, k)?;
        (dg.n, dg.m, dg.k) = (n, graph.m(), k);
        dg.max_weight.clear();
        dg.max_weight.extend((0..k).map(|j| graph.max_weight_bound(j) as i64));
        dg.weight_sum.clear();
        dg.weight_sum.extend((0..k).map(|j| graph.weight_sum(j)));
        let mut uploaded = self.catch_up(engine, out, &mut out_at, &mut dg.out)?;
        if let Some(store) = inn {
            uploaded |= self.catch_up(engine, store, &mut in_at, dg.inn.get_or_insert_with(Default::default))?;
        }
        if uploaded {
            // Runs on the engines of other streams of this context read it too.
            engine.device().synchronize()?;
        }
        (self.out_at, self.in_at) = (out_at, in_at);
        self.graph = Some(arc.clone());
        Ok(arc)
    }

    /// Brings `rows`, a copy of `store` standing at `at`, up to date; true when it uploaded.
    fn catch_up(&mut self, engine: &CudaEngine, store: &SlackRows, at: &mut Option<SyncPoint>, rows: &mut DeviceRows) -> Result<bool> {
        let host = store.rows();
        let stream = engine.device().stream();
        let mut p = plan(store, *at, &mut self.staging);
        if matches!(p, Plan::Rows { .. }) && (rows.column_len != host.heads().len() || rows.stride != 2) {
            // Rows are placed by slot: a copy of another slot count takes everything.
            p = Plan::Full;
        }
        match p {
            Plan::Current => {}
            Plan::Full => {
                let (bounds, stride) = host.bounds();
                let slots = host.heads().len();
                rows.bounds.upload(stream, bounds)?;
                rows.heads.upload(stream, host.heads())?;
                rows.weights.ensure(stream, host.k() * slots)?;
                for j in 0..host.k() {
                    rows.weights.upload_at(stream, j * slots, host.column(j))?;
                }
                (rows.stride, rows.column_len) = (stride, slots);
                self.counters.full_uploads += 1;
            }
            Plan::Rows { rows: count, slots } => {
                self.staged.upload(stream, self.staging.data())?;
                let targets = [rows.bounds.ptr(), rows.heads.ptr(), rows.weights.ptr()];
                engine.kernels().scatter_rows(engine.device(), self.staged.ptr(), count, slots, host.k(), targets, rows.column_len)?;
                self.counters.row_uploads += 1;
                self.counters.rows_uploaded += count as u64;
                self.counters.slots_uploaded += slots as u64;
            }
        }
        *at = Some(store.journal().point());
        Ok(p != Plan::Current)
    }
}
