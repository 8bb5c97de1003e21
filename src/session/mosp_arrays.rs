//! What a caller reads of a MOSP result wherever it lives: its arrays, held together
//! ([`MospSnapshot`]), and its counters ([`MospCounters`]).

use super::result::{Held, SessionResult};
use crate::error::{Error, Result};
use crate::mosp::CombineStats;
use crate::sssp::UpdateStats;
use crate::worker::{kind, View};
use std::sync::Arc;

/// One tree's distances and parents, shared with the in-process result that made them.
type TreeArrays = (Arc<Vec<i64>>, Arc<Vec<i32>>);

/// The combined distances and parents and the path costs, shared likewise.
type CombinedArrays = (Arc<Vec<i64>>, Arc<Vec<i32>>, Arc<Vec<i64>>);

/// Where a snapshot's arrays are: `Arc`s of an in-process result (an update writes into copies
/// while a snapshot is held) or the worker's lent blocks (an update writes into other blocks).
enum Parts {
    Local { trees: Vec<TreeArrays>, combined: CombinedArrays },
    /// One block per tree (its distances and parents), then one of the combined arrays.
    Worker { trees: Vec<View>, combined: View },
}

/// Every output array of a MOSP result, as it was when taken: the trees of its K objectives,
/// the combined distances and parents (the MOSP tree) and the path costs. Unchanged by later
/// updates of the result.
pub struct MospSnapshot {
    parts: Parts,
    graph_k: usize,
}

impl MospSnapshot {
    /// Objectives held (K).
    pub fn k(&self) -> usize {
        match &self.parts {
            Parts::Local { trees, .. } => trees.len(),
            Parts::Worker { trees, .. } => trees.len(),
        }
    }

    /// Objectives of the graph: the columns of [`MospSnapshot::path_costs`].
    pub fn graph_k(&self) -> usize {
        self.graph_k
    }

    /// The distances and parents of objective `j`'s tree (`j < K`).
    pub fn tree(&self, j: usize) -> (&[i64], &[i32]) {
        match &self.parts {
            Parts::Local { trees, .. } => (&trees[j].0, &trees[j].1),
            // Checked when the snapshot was taken.
            Parts::Worker { trees, .. } => (trees[j].i64s(kind::DIST).unwrap_or(&[]), trees[j].i32s(kind::PARENT).unwrap_or(&[])),
        }
    }

    /// The combined graph's distances (in units of 1/L).
    pub fn combined_distances(&self) -> &[i64] {
        match &self.parts {
            Parts::Local { combined, .. } => &combined.0,
            Parts::Worker { combined, .. } => combined.i64s(kind::COMBINED_DIST).unwrap_or(&[]),
        }
    }

    /// The MOSP tree's parents.
    pub fn combined_parents(&self) -> &[i32] {
        match &self.parts {
            Parts::Local { combined, .. } => &combined.1,
            Parts::Worker { combined, .. } => combined.i32s(kind::COMBINED_PARENT).unwrap_or(&[]),
        }
    }

    /// The costs of the MOSP tree's paths in the graph's objectives: n x graph_k, vertex-major.
    pub fn path_costs(&self) -> &[i64] {
        match &self.parts {
            Parts::Local { combined, .. } => &combined.2,
            Parts::Worker { combined, .. } => combined.i64s(kind::PATH_COSTS).unwrap_or(&[]),
        }
    }
}

/// The counters of a MOSP result's last adoption, compute or update: each objective's and the
/// combine step's. A worker reports no times: `elapsed_ns` and `costs_ns` are 0 there, and
/// `in_place` is `None`.
#[derive(Debug, Clone)]
pub struct MospCounters {
    /// Objectives 0..K-1.
    pub objectives: Vec<UpdateStats>,
    /// The combine step (the combined graph's build and solve, the path costs).
    pub combined: CombineStats,
}

impl SessionResult {
    /// A snapshot of every output array of this MOSP result (in a worker: one view per tree and
    /// one of the combined arrays, mapped, not copied). A result adopted as the originals is
    /// refused until its first update, which combines its trees.
    pub fn mosp_snapshot(&self) -> Result<MospSnapshot> {
        match &self.held {
            Held::Mosp(m) => {
                // As a worker refuses it: the arrays would be those of no tree.
                if !m.is_combined() {
                    return Err(Error::invalid(
                        "dyng: this result was adopted as the originals check and is combined by its first update: it has no combined tree or path costs yet",
                    ));
                }
                let trees = (0..m.k()).map(|j| (m.tree(j).distances_snapshot(), m.tree(j).parents_snapshot())).collect();
                let combined = (m.combined_distances_snapshot(), m.combined_parents_snapshot(), m.path_costs_snapshot());
                Ok(MospSnapshot { parts: Parts::Local { trees, combined }, graph_k: m.graph_k() })
            }
            Held::Worker(r) => {
                let super::array::Shape::Mosp { k, graph_k } = r.shape else { return Err(not_mosp()) };
                let missing = || Error::Protocol("dyng worker: a view lacks an output array".into());
                let tree_mask = (1 << (kind::DIST - 1)) | (1 << (kind::PARENT - 1));
                let trees = (0..k)
                    .map(|j| {
                        let v = r.client.view(r.id, tree_mask, j)?;
                        if v.i64s(kind::DIST).is_none() || v.i32s(kind::PARENT).is_none() {
                            return Err(missing());
                        }
                        Ok(v)
                    })
                    .collect::<Result<Vec<_>>>()?;
                // Mask 0: a MOSP result's combined arrays.
                let combined = r.client.view(r.id, 0, 0)?;
                if combined.i64s(kind::COMBINED_DIST).is_none() || combined.i32s(kind::COMBINED_PARENT).is_none() || combined.i64s(kind::PATH_COSTS).is_none() {
                    return Err(missing());
                }
                Ok(MospSnapshot { parts: Parts::Worker { trees, combined }, graph_k })
            }
            Held::Sssp(_) => Err(not_mosp()),
        }
    }

    /// The counters of this MOSP result's last adoption, compute or update (in a worker: read
    /// with one STATS call).
    pub fn mosp_counters(&self) -> Result<MospCounters> {
        match &self.held {
            Held::Mosp(m) => Ok(MospCounters { objectives: m.objective_stats(), combined: m.combine_stats() }),
            Held::Worker(r) if matches!(r.shape, super::array::Shape::Mosp { .. }) => {
                let w = r.client.result_stats(r.id)?;
                let objectives = w
                    .objectives
                    .iter()
                    .map(|o| o.update_stats())
                    .collect();
                let c = w.combined.unwrap_or_default();
                let combined = CombineStats {
                    edges: c.edges as usize,
                    scale: u64::from(c.scale),
                    delta: c.delta,
                    search: UpdateStats { iterations: c.iterations as i64, pushes: c.pushes as i64, ..Default::default() },
                    ..Default::default()
                };
                Ok(MospCounters { objectives, combined })
            }
            _ => Err(not_mosp()),
        }
    }
}

fn not_mosp() -> Error {
    Error::invalid("dyng: this result is an SSSP result; only a MOSP result has combined arrays and per-objective counters")
}
