//! A result of a session: an SSSP tree or a MOSP result, in process or resident in the worker,
//! with one face for info, paths and snapshots.

use super::array::{locate, Array, Shape, Snapshot, TREE_COMBINED};
use super::worker::RemoteRes;
use crate::error::{Error, Result};
use crate::mosp::MospResult;
use crate::sssp::{SsspResult, UpdateStats};

/// Where a result lives and what it is.
pub(super) enum Held {
    Sssp(SsspResult),
    Mosp(MospResult),
    Worker(RemoteRes),
}

/// A maintained result.
pub struct SessionResult {
    pub(super) held: Held,
    /// Counters of the last compute or update of an in-process result (MOSP: summed over its K
    /// objectives); a worker result keeps its own, read when first asked for.
    pub(super) last_stats: UpdateStats,
}

/// SSSP or MOSP.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ResultKind {
    Sssp,
    Mosp,
}

/// What a result is, as `dyng_result_info` reports it.
pub(crate) struct ResultInfo {
    pub(crate) kind: ResultKind,
    pub(crate) source: usize,
    /// SSSP: its objective; MOSP: 0.
    pub(crate) objective: usize,
    /// Objectives held: 1 for SSSP, K for MOSP.
    pub(crate) k: usize,
    /// Objectives of the graph for MOSP, 0 for SSSP.
    pub(crate) graph_k: usize,
    pub(crate) n: usize,
    pub(crate) graph_version: u64,
    pub(crate) last_stats: UpdateStats,
}

impl SessionResult {
    pub(super) fn sssp(s: SsspResult) -> Self {
        let last_stats = s.stats();
        SessionResult { held: Held::Sssp(s), last_stats }
    }

    pub(super) fn mosp(m: MospResult) -> Self {
        let last_stats = UpdateStats::sum(&m.objective_stats());
        SessionResult { held: Held::Mosp(m), last_stats }
    }

    pub(super) fn worker(r: RemoteRes) -> Self {
        // Unused: a worker result keeps its own (lazily read) counters.
        SessionResult { held: Held::Worker(r), last_stats: UpdateStats::default() }
    }

    /// The worker result, if it lives in a worker.
    pub(super) fn in_worker(&self) -> Option<&RemoteRes> {
        match &self.held {
            Held::Worker(r) => Some(r),
            _ => None,
        }
    }

    pub(super) fn shape(&self) -> Shape {
        match &self.held {
            Held::Sssp(s) => Shape::Sssp { objective: s.objective() },
            Held::Mosp(m) => Shape::Mosp { k: m.k(), graph_k: m.graph_k() },
            Held::Worker(r) => r.shape,
        }
    }

    pub(super) fn source(&self) -> usize {
        match &self.held {
            Held::Sssp(s) => s.source(),
            Held::Mosp(m) => m.source(),
            Held::Worker(r) => r.source,
        }
    }

    pub(crate) fn is_mosp(&self) -> bool {
        matches!(self.shape(), Shape::Mosp { .. })
    }

    /// The counters of the last compute, adoption or update (a worker result's are read from the
    /// worker on the first call after any of those, so this can fail with the worker's
    /// conditions).
    pub(crate) fn last_stats(&self) -> Result<UpdateStats> {
        match &self.held {
            Held::Worker(r) => r.last_stats(),
            _ => Ok(self.last_stats),
        }
    }

    pub(crate) fn info(&self) -> Result<ResultInfo> {
        let last_stats = self.last_stats()?;
        let (kind, objective, k, graph_k) = match self.shape() {
            Shape::Sssp { objective } => (ResultKind::Sssp, objective, 1, 0),
            Shape::Mosp { k, graph_k } => (ResultKind::Mosp, 0, k, graph_k),
        };
        let (n, graph_version) = match &self.held {
            Held::Sssp(s) => (s.distances().len(), s.graph_version()),
            Held::Mosp(m) => (m.combined_distances().len(), m.graph_version()),
            Held::Worker(r) => (r.n, r.graph_version),
        };
        Ok(ResultInfo { kind, source: self.source(), objective, k, graph_k, n, graph_version, last_stats })
    }

    /// The snapshot of `array` for objective `k` (see [`locate`]).
    pub(crate) fn snapshot(&self, array: Array, k: u32, func: &str) -> Result<Snapshot> {
        let objective = locate(self.shape(), array, k, func)?;
        let snap = match (&self.held, array) {
            (Held::Worker(r), a) => return Snapshot::from_worker(&r.client, r.id, a, objective),
            (Held::Sssp(s), Array::Distances) => Snapshot::I64(s.distances_snapshot()),
            (Held::Sssp(s), Array::Parents) => Snapshot::I32(s.parents_snapshot()),
            (Held::Mosp(m), Array::Distances) => Snapshot::I64(m.tree(objective).distances_snapshot()),
            (Held::Mosp(m), Array::Parents) => Snapshot::I32(m.tree(objective).parents_snapshot()),
            (Held::Mosp(m), Array::CombinedDistances) => Snapshot::I64(m.combined_distances_snapshot()),
            (Held::Mosp(m), Array::CombinedParents) => Snapshot::I32(m.combined_parents_snapshot()),
            (Held::Mosp(m), Array::PathCosts) => Snapshot::I64(m.path_costs_snapshot()),
            (Held::Sssp(_), a) => {
                return Err(Error::Internal(format!("dyng: {func}: locate accepted array {} of an SSSP result", a.code())))
            }
        };
        Ok(snap)
    }

    /// The parent array and source of tree `k` (objective k, or [`TREE_COMBINED`] for the MOSP
    /// tree). A worker result's array is copied out of one view, walked host-side (spec 13.1).
    pub(crate) fn tree(&self, k: u32, func: &str) -> Result<(Vec<i32>, usize)> {
        let (array, kk) = if k == TREE_COMBINED { (Array::CombinedParents, 0) } else { (Array::Parents, k) };
        let objective = locate(self.shape(), array, kk, func).map_err(|_| {
            Error::invalid(format!(
                "dyng: {func}: k = {k} names no tree of this result (SSSP: its objective; MOSP: 0..K-1 or DYNG_TREE_COMBINED)"
            ))
        })?;
        Ok(match (&self.held, array) {
            (Held::Worker(r), a) => (r.client.copy_i32(r.id, a.kind(), objective)?, r.source),
            (Held::Sssp(s), _) => (s.parents().to_vec(), s.source()),
            (Held::Mosp(m), Array::CombinedParents) => (m.combined_parents().to_vec(), m.source()),
            (Held::Mosp(m), _) => {
                let t = m.tree(objective);
                (t.parents().to_vec(), t.source())
            }
        })
    }
}
