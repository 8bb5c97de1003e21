//! A graph of a session and the results made on it: compute, adoption and combining, in process
//! or in the worker.

use super::array::Shape;
use super::result::{Held, SessionResult};
use super::worker::{RemoteGraph, RemoteRes};
use crate::error::{Error, Result};
use crate::graph::Graph;
use crate::mosp::{check_trees, MospOptions, MospResult, TreeFacts};
use crate::resources::Resources;
use crate::sssp::{SsspOptions, SsspResult, UpdateStats};
use crate::graph::stale::staleness;
use crate::worker::kind;

/// A graph: in process, or resident in a worker with its host mirror in `graph`.
pub struct SessionGraph {
    pub(super) graph: Graph,
    pub(super) worker: Option<RemoteGraph>,
}

impl SessionGraph {
    pub(super) fn local(graph: Graph) -> Self {
        SessionGraph { graph, worker: None }
    }

    pub(super) fn in_worker(graph: Graph, remote: RemoteGraph) -> Self {
        SessionGraph { graph, worker: Some(remote) }
    }

    /// The graph (a worker graph's host mirror, always at the worker's state).
    pub fn graph(&self) -> &Graph {
        &self.graph
    }

    /// The shortest-path tree of `objective` from `source` on the current state.
    pub(crate) fn sssp_compute(&self, res: &Resources, source: usize, objective: usize, opt: &SsspOptions) -> Result<SessionResult> {
        let g = &self.graph;
        Ok(match &self.worker {
            None => SessionResult::sssp(SsspResult::compute(res, g, source, objective, opt)?),
            Some(rg) => {
                let rr = rg.client.sssp_compute(source, objective, opt)?;
                SessionResult::worker(rg.result(rr.id, g, source, Shape::Sssp { objective }, *opt, None))
            }
        })
    }

    /// A MOSP result from `source` on the current state.
    pub(crate) fn mosp_compute(&self, res: &Resources, source: usize, opt: &MospOptions) -> Result<SessionResult> {
        let g = &self.graph;
        Ok(match &self.worker {
            None => SessionResult::mosp(MospResult::compute(res, g, source, opt)?),
            Some(rg) => {
                let rr = rg.client.mosp_compute(source, opt)?;
                let shape = Shape::Mosp { k: rr.k, graph_k: g.k() };
                let sopt = SsspOptions { delta: opt.delta, fallback: opt.fallback };
                SessionResult::worker(rg.result(rr.id, g, source, shape, sopt, None))
            }
        })
    }

    /// Adopts the tree `(dist, parent)` of `objective` after checking it (in a worker: by the
    /// same code, there).
    pub(crate) fn adopt_sssp(&self, source: usize, objective: usize, (dist, parent): (&[i64], &[i32]), canonicalize: bool, opt: &SsspOptions) -> Result<SessionResult> {
        let g = &self.graph;
        Ok(match &self.worker {
            None => SessionResult::sssp(SsspResult::from_arrays(g, source, objective, dist.to_vec(), parent.to_vec(), canonicalize, opt)?),
            Some(rg) => {
                let rr = rg.client.adopt_sssp(source, objective, dist, parent, canonicalize, opt)?;
                SessionResult::worker(rg.result(rr.id, g, source, Shape::Sssp { objective }, *opt, None))
            }
        })
    }

    /// A MOSP result adopting the K trees `trees` (objectives 0..K-1, from `source`) as the
    /// original drivers check theirs: each by `SsspResult::from_arrays_unverified` with its
    /// weight bound `max_weights[j]`, then `MospResult::from_trees_deferred`, which combines them
    /// at the first update. In a worker the same code runs there (ADOPT_MOSP with the bounds), so
    /// a tree is refused at the same step with the same message.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn adopt_mosp_as_originals(
        &self,
        res: &Resources,
        source: usize,
        trees: Vec<(Vec<i64>, Vec<i32>)>,
        canonicalize: bool,
        max_weights: &[i64],
        prefs: &[u32],
        opt: &SsspOptions,
    ) -> Result<SessionResult> {
        if max_weights.len() != trees.len() {
            return Err(Error::invalid(format!(
                "dyng: {} weight bounds for {} trees; pass one per tree",
                max_weights.len(),
                trees.len()
            )));
        }
        let g = &self.graph;
        match &self.worker {
            None => {
                let adopted = trees
                    .into_iter()
                    .zip(max_weights)
                    .enumerate()
                    .map(|(j, ((d, p), &bound))| SsspResult::from_arrays_unverified(res, g, source, j, d, p, canonicalize, bound, opt))
                    .collect::<Result<Vec<_>>>()?;
                Ok(SessionResult::mosp(MospResult::from_trees_deferred(g, source, adopted, prefs)?))
            }
            Some(rg) => {
                let arrays: Vec<(&[i64], &[i32])> = trees.iter().map(|(d, p)| (&d[..], &p[..])).collect();
                let deltas = vec![opt.delta; trees.len()];
                let rr = rg.client.adopt_mosp_as_originals(source, &arrays, canonicalize, &deltas, opt.fallback, prefs, max_weights)?;
                let shape = Shape::Mosp { k: rr.k, graph_k: g.k() };
                Ok(SessionResult::worker(rg.result(rr.id, g, source, shape, *opt, None)))
            }
        }
    }

    /// A MOSP result combining SSSP results `trees` (objectives 0..k-1, all from `source`), which
    /// stay valid and independent. The caller has refused MOSP results among them.
    pub(crate) fn mosp_from_trees(&self, res: &Resources, source: usize, trees: &[&SessionResult], prefs: &[u32], func: &str) -> Result<SessionResult> {
        match &self.worker {
            None => {
                let mut copies = Vec::with_capacity(trees.len());
                for (j, t) in trees.iter().enumerate() {
                    match &t.held {
                        Held::Sssp(s) => copies.push(s.clone()),
                        _ => {
                            return Err(Error::invalid(format!(
                                "dyng: {func}: trees[{j}] is resident in a worker but g is an in-process graph; pass results of g"
                            )))
                        }
                    }
                }
                Ok(SessionResult::mosp(MospResult::from_trees(res, &self.graph, source, copies, prefs)?))
            }
            Some(rg) => Ok(SessionResult::worker(self.mosp_from_worker_trees(rg, source, trees, prefs, func)?)),
        }
    }

    /// [`SessionGraph::mosp_from_trees`] in the worker: `from_trees`' checks run host-side in its
    /// order (an in-process tree belongs to another graph), then the trees' arrays are read from
    /// the worker (one view each, mapped, not copied) and adopted with ADOPT_MOSP. The new result
    /// reports the trees' counters summed, as the in-process copy of the trees does, until its
    /// first update.
    fn mosp_from_worker_trees(&self, rg: &RemoteGraph, source: usize, trees: &[&SessionResult], prefs: &[u32], func: &str) -> Result<RemoteRes> {
        let g = &self.graph;
        let facts: Vec<TreeFacts> = trees
            .iter()
            .map(|t| match (t.in_worker(), t.shape()) {
                (Some(rr), Shape::Sssp { objective }) => {
                    TreeFacts { objective, source: rr.source, current: staleness(rr.state(), g).is_none() }
                }
                (None, Shape::Sssp { objective }) => TreeFacts { objective, source: t.source(), current: false },
                (_, Shape::Mosp { .. }) => TreeFacts { objective: usize::MAX, source, current: false },
            })
            .collect();
        check_trees(g, source, &facts, prefs)?;
        // Every tree is current on this graph, so it is a result of this worker.
        let remote: Vec<&RemoteRes> = trees.iter().filter_map(|t| t.in_worker()).collect();
        let views = remote
            .iter()
            .map(|rr| rr.client.view(rr.id, (1 << (kind::DIST - 1)) | (1 << (kind::PARENT - 1)), 0))
            .collect::<Result<Vec<_>>>()?;
        let missing = || Error::Protocol("dyng worker: a tree view lacks its distances or parents".into());
        let arrays = views
            .iter()
            .map(|v| Ok((v.i64s(kind::DIST).ok_or_else(missing)?, v.i32s(kind::PARENT).ok_or_else(missing)?)))
            .collect::<Result<Vec<_>>>()?;
        let deltas: Vec<Option<i64>> = remote.iter().map(|rr| rr.delta).collect();
        // ADOPT_MOSP carries one policy for its K trees; in process each tree keeps its own.
        let fallback = remote[0].fallback;
        if remote.iter().any(|rr| rr.fallback != fallback) {
            return Err(Error::NotSupported(format!(
                "dyng: {func}: the trees run different fallback policies, which a MOSP result in a worker cannot keep (it has one policy for its trees)"
            )));
        }
        let each = remote.iter().map(|rr| rr.last_stats()).collect::<Result<Vec<_>>>()?;
        let rr = rg.client.adopt_mosp(source, &arrays, false, &deltas, fallback, prefs)?;
        let shape = Shape::Mosp { k: remote.len(), graph_k: g.k() };
        Ok(rg.result(rr.id, g, source, shape, SsspOptions { delta: None, fallback }, Some(UpdateStats::sum(&each))))
    }
}
