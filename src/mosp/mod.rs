//! Multi-objective shortest paths: K trees, their combined graph, the MOSP tree and path costs.
//!
//! A [`MospResult`] holds one SSSP tree per objective 0..K-1, the combined graph's distances (in
//! units of 1/L) and tree, and the cost of every MOSP-tree path in all KG objectives of the graph.
//! It is updated by the same one-apply `update` call as SSSP results.

pub mod combine;
pub(crate) mod costs;
pub mod preferences;

use crate::error::{Error, Result};
use crate::graph::Graph;
use crate::resources::Resources;
use crate::sssp::{check_source, lease_workspace, tree_path, SsspOptions, SsspResult, UpdateStats, Workspace};
use std::sync::Arc;

pub use combine::CombineStats;
pub use preferences::Preferences;

/// Options of a MOSP result.
#[derive(Debug, Clone, Default)]
pub struct MospOptions {
    /// Objectives used: 0..k. `None` = all objectives of the graph.
    pub k: Option<usize>,
    /// Preference vector (K values >= 1); empty = all ones.
    pub preferences: Vec<u32>,
    /// Bucket width of the K objective searches (`None` = each objective's default). The
    /// combined search always uses its own default.
    pub delta: Option<i64>,
    /// The adaptive-update policy of the K trees.
    pub fallback: crate::sssp::Fallback,
}

/// A maintained multi-objective result.
#[derive(Debug, Clone)]
pub struct MospResult {
    pub(crate) graph_id: u64,
    pub(crate) version: u64,
    pub(crate) source: usize,
    pub(crate) prefs: Preferences,
    pub(crate) trees: Vec<SsspResult>,
    pub(crate) combined_dist: Arc<Vec<i64>>,
    pub(crate) combined_parent: Arc<Vec<i32>>,
    pub(crate) costs: Arc<Vec<i64>>,
    pub(crate) kg: usize,
    pub(crate) combine_stats: CombineStats,
    /// The combined tree is that of the current trees (set by a successful combine; a failed one
    /// leaves it false, and the next combine solves from scratch).
    pub(crate) combined_current: bool,
}

fn resolve_k(graph: &Graph, k: Option<usize>) -> Result<usize> {
    let k = k.unwrap_or(graph.k());
    if k == 0 || k > graph.k() {
        return Err(Error::invalid(format!(
            "dyng: K = {k} objectives requested; the graph has {}",
            graph.k()
        )));
    }
    Ok(k)
}

/// What [`MospResult::from_trees`] checks about one tree, known without its arrays: the C ABI
/// checks trees resident in a worker with it before it fetches them.
pub(crate) struct TreeFacts {
    pub objective: usize,
    pub source: usize,
    /// Belongs to the graph's current state.
    pub current: bool,
}

/// The checks of [`MospResult::from_trees`], in its order: source, K, preferences, each tree.
pub(crate) fn check_trees(graph: &Graph, source: usize, trees: &[TreeFacts], preferences: &[u32]) -> Result<Preferences> {
    check_source(graph, source)?;
    let k = resolve_k(graph, Some(trees.len()))?;
    let prefs = Preferences::new(k, preferences)?;
    for (j, t) in trees.iter().enumerate() {
        if t.objective != j || t.source != source {
            return Err(Error::invalid(format!(
                "dyng: tree {j} is for objective {} from source {}; want objective {j} from source {source}",
                t.objective, t.source
            )));
        }
        if !t.current {
            return Err(Error::StaleResult(format!(
                "dyng: tree {j} belongs to another graph or an older state of this graph"
            )));
        }
    }
    Ok(prefs)
}

impl MospResult {
    /// Computes the K trees from scratch and combines them.
    pub fn compute(res: &Resources, graph: &Graph, source: usize, opt: &MospOptions) -> Result<Self> {
        check_source(graph, source)?;
        let k = resolve_k(graph, opt.k)?;
        let prefs = Preferences::new(k, &opt.preferences)?;
        let sopt = SsspOptions {
            delta: opt.delta,
            fallback: opt.fallback,
        };
        let trees = (0..k)
            .map(|j| SsspResult::compute(res, graph, source, j, &sopt))
            .collect::<Result<Vec<_>>>()?;
        Self::assemble(res, graph, source, prefs, trees)
    }

    /// Builds a MOSP result from K existing trees of objectives 0..K-1 (e.g. adopted with
    /// [`SsspResult::from_arrays`]) on the graph's current state.
    pub fn from_trees(
        res: &Resources,
        graph: &Graph,
        source: usize,
        trees: Vec<SsspResult>,
        preferences: &[u32],
    ) -> Result<Self> {
        let facts: Vec<TreeFacts> = trees
            .iter()
            .map(|t| TreeFacts {
                objective: t.objective,
                source: t.source,
                current: t.graph_id == graph.id() && t.version == graph.version(),
            })
            .collect();
        let prefs = check_trees(graph, source, &facts, preferences)?;
        Self::assemble(res, graph, source, prefs, trees)
    }

    fn assemble(
        res: &Resources,
        graph: &Graph,
        source: usize,
        prefs: Preferences,
        trees: Vec<SsspResult>,
    ) -> Result<Self> {
        let mut r = MospResult {
            graph_id: graph.id(),
            version: graph.version(),
            source,
            prefs,
            trees,
            combined_dist: Arc::new(vec![0; graph.n()]),
            combined_parent: Arc::new(vec![0; graph.n()]),
            costs: Arc::new(Vec::new()),
            kg: graph.k(),
            combine_stats: CombineStats::default(),
            combined_current: false,
        };
        let mut ws = lease_workspace(res, graph.n());
        r.recombine(res, graph, &mut ws)?;
        ws.give_back();
        Ok(r)
    }

    /// Rebuilds the combined graph from the current trees, solves it (repairs the combined tree
    /// of the trees before their update, when it holds one), and recomputes path costs.
    pub(crate) fn recombine(&mut self, res: &Resources, graph: &Graph, ws: &mut Workspace) -> Result<()> {
        // A tree recomputed by its update changed too much for a repair of the combined tree
        // to pay (its adaptive policy found a third of it or more to search): solve afresh.
        let repaired = self.trees.iter().all(|t| !t.stats.fallback_used);
        let previous = std::mem::take(&mut self.combined_current) && repaired;
        let parents: Vec<&[i32]> = self.trees.iter().map(|t| t.parents()).collect();
        let dist = Arc::make_mut(&mut self.combined_dist);
        let parent = Arc::make_mut(&mut self.combined_parent);
        self.combine_stats =
            combine::combine_and_solve(res, &parents, self.source, &self.prefs, ws, dist, parent, previous)?;
        self.combined_current = true;
        costs::path_costs(graph.csr(), parent, self.source, Arc::make_mut(&mut self.costs))
    }

    pub fn source(&self) -> usize {
        self.source
    }

    /// Objectives used (K).
    pub fn k(&self) -> usize {
        self.trees.len()
    }

    /// Objectives of the graph (KG): the number of path-cost columns.
    pub fn graph_k(&self) -> usize {
        self.kg
    }

    pub fn preferences(&self) -> &Preferences {
        &self.prefs
    }

    /// The tree of objective `j < K`.
    pub fn tree(&self, j: usize) -> &SsspResult {
        &self.trees[j]
    }

    pub fn trees(&self) -> &[SsspResult] {
        &self.trees
    }

    /// Combined-graph distances in units of 1/L (`DISTANCE_INF` if unreachable).
    pub fn combined_distances(&self) -> &[i64] {
        &self.combined_dist
    }

    /// The MOSP tree.
    pub fn combined_parents(&self) -> &[i32] {
        &self.combined_parent
    }

    /// Path costs, `n x KG` vertex-major.
    pub fn path_costs(&self) -> &[i64] {
        &self.costs
    }

    pub fn combined_distances_snapshot(&self) -> Arc<Vec<i64>> {
        Arc::clone(&self.combined_dist)
    }

    pub fn combined_parents_snapshot(&self) -> Arc<Vec<i32>> {
        Arc::clone(&self.combined_parent)
    }

    pub fn path_costs_snapshot(&self) -> Arc<Vec<i64>> {
        Arc::clone(&self.costs)
    }

    pub fn combine_stats(&self) -> CombineStats {
        self.combine_stats
    }

    /// Stats of the K objective updates.
    pub fn objective_stats(&self) -> Vec<UpdateStats> {
        self.trees.iter().map(|t| t.stats).collect()
    }

    pub fn graph_version(&self) -> u64 {
        self.version
    }

    /// Bytes held by the result's arrays.
    pub fn bytes(&self) -> usize {
        self.trees.iter().map(SsspResult::bytes).sum::<usize>()
            + self.combined_dist.len() * 12
            + self.costs.len() * 8
    }

    /// The MOSP-tree path from the source to `target`; empty if unreachable.
    pub fn path_to(&self, target: usize) -> Result<Vec<i32>> {
        tree_path(&self.combined_parent, self.source, target)
    }
}
