//! Multi-objective shortest paths: K trees, their combined graph, the MOSP tree and path costs.
//!
//! A [`MospResult`] holds one SSSP tree per objective 0..K-1, the combined graph's distances (in
//! units of 1/L) and tree, and the cost of every MOSP-tree path in all KG objectives of the graph.
//! It is updated by the same one-apply `update` call as SSSP results.

pub mod combine;
pub(crate) mod combined_graph;
pub(crate) mod costs;
mod over_rows;
pub mod preferences;

use crate::error::{Error, Result};
use crate::graph::{BatchView, Graph};
use crate::resources::Resources;
use crate::sssp::{check_source, lease_workspace, tree_path, with_exec, SsspOptions, SsspResult, UpdateStats, Workspace};
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
    /// The combined graph of the current trees, kept to be changed in place by the next update.
    pub(crate) combined: Box<combined_graph::CombinedGraph>,
    /// The combined tree is that of the current trees (set by a successful combine; a failed one
    /// leaves it false, and the next combine solves from scratch).
    pub(crate) combined_current: bool,
    /// The path costs are those of the combined tree (a failed update leaves it false, and the
    /// next one computes every vertex's).
    pub(crate) costs_current: bool,
    /// Set by an update whose K trees were repaired with their touched vertices listed:
    /// `touched` then lists (with repeats) every vertex whose parent changed in a tree,
    /// the vertices the combine step looks at instead of every vertex.
    pub(crate) touched: Vec<i32>,
    pub(crate) touched_listed: bool,
    /// The combined tree's largest finite distance, where known (as `SsspResult::largest`).
    pub(crate) combined_largest: Option<i64>,
    /// Whether the combine keeps the combined graph's in-slots for the next update
    /// ([`MospResult::keep_combined_graph`]).
    pub(crate) keep_combined: bool,
}

fn resolve_k(graph: &Graph, k: Option<usize>) -> Result<usize> {
    resolve_objectives(graph.k(), k)
}

/// The objectives a MOSP result uses on a graph with `graph_k`: `k`, default all (shared with the
/// worker's host side, which checks before sending).
pub(crate) fn resolve_objectives(graph_k: usize, k: Option<usize>) -> Result<usize> {
    let k = k.unwrap_or(graph_k);
    if k == 0 || k > graph_k {
        return Err(Error::invalid(format!("dyng: K = {k} objectives requested; the graph has {graph_k}")));
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
    ///
    /// The combined graph holds the K trees' edges; an edge in the trees of the objectives `J`
    /// weighs `L (K + 1) - sum over j in J of L / pref_j` (L = lcm of the preferences), so a
    /// preference of 1 counts an objective most and larger values count it less. Its distances
    /// are in units of 1/L. Errors: [`Error::InvalidArgument`] for a source outside `[0, n)`, a K
    /// of 0 or above the graph's, or a bad preference vector ([`Preferences::new`]); then as
    /// [`SsspResult::compute`].
    ///
    /// ```
    /// use dyng::{Csr, Graph, MospOptions, MospResult, Resources};
    ///
    /// // Roads 0 -> 1, 0 -> 2, 1 -> 3, 2 -> 3 with (length, time).
    /// let g = Graph::new(Csr::from_edges(4, 2, &[0, 0, 1, 2], &[1, 2, 3, 3], &[1, 5, 4, 1, 1, 5, 4, 1])?);
    /// let res = Resources::sequential();
    ///
    /// // Time counts twice as much as length: 0 -> 2 -> 3, the fast way.
    /// let opt = MospOptions { preferences: vec![2, 1], ..Default::default() };
    /// let m = MospResult::compute(&res, &g, 0, &opt)?;
    /// assert_eq!(m.path_to(3)?, [0, 2, 3]);
    /// assert_eq!(m.path_costs()[3 * m.graph_k()..], [8, 2]); // its length and time
    /// assert_eq!(m.preferences().scale(), 2);
    /// assert_eq!(m.combined_distances()[3], 7); // 3.5 in units of 1/L = 1/2
    /// assert_eq!(m.tree(0).path_to(3)?, [0, 1, 3]); // the shortest tree is kept too
    ///
    /// // Length counts most: 0 -> 1 -> 3.
    /// let opt = MospOptions { preferences: vec![1, 2], ..Default::default() };
    /// assert_eq!(MospResult::compute(&res, &g, 0, &opt)?.path_to(3)?, [0, 1, 3]);
    /// # Ok::<(), dyng::Error>(())
    /// ```
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
    ///
    /// Tree `j` must be of objective `j` from `source` ([`Error::InvalidArgument`]) and of the
    /// graph's current state ([`Error::StaleResult`]); `preferences` as for
    /// [`MospOptions::preferences`].
    ///
    /// ```
    /// use dyng::{Csr, Graph, MospResult, Resources, SsspOptions, SsspResult};
    ///
    /// let g = Graph::new(Csr::from_edges(3, 2, &[0, 0, 1], &[1, 2, 2], &[1, 9, 5, 1, 1, 9])?);
    /// let opt = SsspOptions::default();
    /// // Trees read from elsewhere: by objective 0 vertex 2 is reached through 1, by objective 1
    /// // directly.
    /// let t0 = SsspResult::from_arrays(&g, 0, 0, vec![0, 1, 2], vec![-1, 0, 1], false, &opt)?;
    /// let t1 = SsspResult::from_arrays(&g, 0, 1, vec![0, 9, 1], vec![-1, 0, 0], false, &opt)?;
    /// let m = MospResult::from_trees(&Resources::sequential(), &g, 0, vec![t0, t1], &[])?;
    /// assert_eq!(m.k(), 2);
    /// assert_eq!(m.combined_parents(), [-1, 0, 0]);
    /// # Ok::<(), dyng::Error>(())
    /// ```
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
                current: crate::graph::stale::staleness((t.graph_id, t.version), graph).is_none(),
            })
            .collect();
        let prefs = check_trees(graph, source, &facts, preferences)?;
        Self::assemble(res, graph, source, prefs, trees)
    }

    /// [`MospResult::from_trees`] without combining the K trees: the combined tree and the path
    /// costs are those of the next update, which combines the trees it updated (a one-shot driver
    /// such as `dyng mosp` never reads the combination of the trees before their update). Until
    /// that update [`MospResult::is_combined`] is false, and the combined arrays and the path
    /// costs hold nothing to read.
    pub fn from_trees_deferred(graph: &Graph, source: usize, trees: Vec<SsspResult>, preferences: &[u32]) -> Result<Self> {
        let facts: Vec<TreeFacts> = trees
            .iter()
            .map(|t| TreeFacts {
                objective: t.objective,
                source: t.source,
                current: t.graph_id == graph.id() && t.version == graph.version(),
            })
            .collect();
        let prefs = check_trees(graph, source, &facts, preferences)?;
        Ok(Self::uncombined(graph, source, prefs, trees))
    }

    /// The result before its first combine.
    fn uncombined(graph: &Graph, source: usize, prefs: Preferences, trees: Vec<SsspResult>) -> Self {
        MospResult {
            graph_id: graph.id(),
            version: graph.version(),
            source,
            prefs,
            trees,
            // Sized for the combine, which solves into them. Written now: a write-back reads a
            // vertex before it writes it, and a zeroed page read first is copied at the write,
            // a second fault that flushes every thread's TLB (the 1000^2 grid at 2 threads: the
            // combine's write-back 16 ms, most of it those faults).
            combined_dist: Arc::new(vec![crate::distance::DISTANCE_INF; graph.n()]),
            combined_parent: Arc::new(vec![-1; graph.n()]),
            costs: Arc::new(Vec::new()),
            kg: graph.k(),
            combine_stats: CombineStats::default(),
            combined: Default::default(),
            combined_current: false,
            costs_current: false,
            touched: Vec::new(),
            touched_listed: false,
            combined_largest: None,
            keep_combined: true,
        }
    }

    /// Whether the combine keeps what lets the next update change the combined graph and repair
    /// the combined tree at the vertices whose parents changed (the default, `true`), or builds
    /// only what the combined solve reads, 28 bytes a vertex less (K = 3), and solves the
    /// combined graph afresh at every update (on one thread over the graph's rows, building
    /// none): for a driver that updates a result once, as `dyng mosp` does. Takes effect at the
    /// next combine.
    pub fn keep_combined_graph(&mut self, keep: bool) {
        self.keep_combined = keep;
    }

    /// Whether the combined tree and the path costs are those of the trees (false only for a
    /// result of [`MospResult::from_trees_deferred`] before its first update).
    pub fn is_combined(&self) -> bool {
        self.costs_current
    }

    fn assemble(
        res: &Resources,
        graph: &Graph,
        source: usize,
        prefs: Preferences,
        trees: Vec<SsspResult>,
    ) -> Result<Self> {
        let mut r = Self::uncombined(graph, source, prefs, trees);
        let mut ws = lease_workspace(res, graph.n());
        r.recombine(res, graph, &mut ws, None)?;
        ws.give_back();
        Ok(r)
    }

    /// Brings the combined graph to the current trees, solves it (repairs the combined tree of
    /// the trees before their update, when it holds one), and brings the path costs up to date:
    /// after `batch` (the update's), only below the vertices the repair touched, else all of them.
    pub(crate) fn recombine(
        &mut self,
        res: &Resources,
        graph: &Graph,
        ws: &mut Workspace,
        batch: Option<&BatchView<'_>>,
    ) -> Result<()> {
        // A tree recomputed by its update changed too much for a repair of the combined tree
        // to pay (its adaptive policy found a third of it or more to search): solve afresh.
        let repaired = self.trees.iter().all(|t| !t.stats.fallback_used);
        let previous = std::mem::take(&mut self.combined_current) && repaired;
        // Costs before this update, to be changed below the touched vertices only.
        let costs_current = std::mem::take(&mut self.costs_current);
        let parents: Vec<&[i32]> = self.trees.iter().map(|t| t.parents()).collect();
        let dist = Arc::make_mut(&mut self.combined_dist);
        let parent = Arc::make_mut(&mut self.combined_parent);
        let mut cw = res.workspaces().lease(combine::CombineWorkspace::default);
        // The lease's lists grow at most once to their bounds; counted once, after both steps.
        let held = crate::resources::PooledWorkspace::bytes(&*cw);
        if self.touched_listed {
            combine::sort_distinct(&mut self.touched, graph.n(), &mut cw.bits);
        }
        let touched = std::mem::take(&mut self.touched_listed).then_some(&self.touched[..]);
        let rows = graph.rows();
        let (stats, solved) = combine::combine_and_solve(
            res,
            &crate::sssp::view(&rows, 0),
            &parents,
            touched,
            self.source,
            &self.prefs,
            &mut self.combined,
            &mut cw,
            ws,
            dist,
            parent,
            &mut self.combined_largest,
            previous,
            self.keep_combined,
        )
        .inspect_err(|_| self.combined.invalidate())?;
        self.combine_stats = stats;
        self.combined_current = true;
        let costs = Arc::make_mut(&mut self.costs);
        let started = std::time::Instant::now();
        let result = match (batch, solved) {
            (Some(batch), combine::Solved::Touched) if costs_current && self.combined.is_valid() => {
                let touched = (0..ws.candidates.len()).map(|i| ws.candidates.get(i) as usize);
                costs::update_path_costs(
                    &graph.rows(),
                    &self.combined,
                    parent,
                    dist,
                    self.source,
                    touched,
                    batch,
                    costs,
                    &mut cw.costs,
                )
            }
            _ => with_exec!(res, |e| costs::path_costs(e, &graph.rows(), parent, self.source, costs)),
        };
        self.combine_stats.costs_ns = started.elapsed().as_nanos() as u64;
        if crate::resources::PooledWorkspace::bytes(&*cw) > held {
            res.workspaces().note_growth();
        }
        cw.give_back();
        result?;
        self.costs_current = true;
        Ok(())
    }

    /// The source vertex of every tree.
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

    /// The preference vector the combined graph is weighted by.
    pub fn preferences(&self) -> &Preferences {
        &self.prefs
    }

    /// The tree of objective `j < K`.
    pub fn tree(&self, j: usize) -> &SsspResult {
        &self.trees[j]
    }

    /// The K trees, objective `j` at index `j`.
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

    /// A snapshot of [`MospResult::combined_distances`] that later updates never change.
    pub fn combined_distances_snapshot(&self) -> Arc<Vec<i64>> {
        Arc::clone(&self.combined_dist)
    }

    /// A snapshot of [`MospResult::combined_parents`] that later updates never change.
    pub fn combined_parents_snapshot(&self) -> Arc<Vec<i32>> {
        Arc::clone(&self.combined_parent)
    }

    /// A snapshot of [`MospResult::path_costs`] that later updates never change.
    pub fn path_costs_snapshot(&self) -> Arc<Vec<i64>> {
        Arc::clone(&self.costs)
    }

    /// Counters and times of the last combine step (building and solving the combined graph).
    pub fn combine_stats(&self) -> CombineStats {
        self.combine_stats
    }

    /// Stats of the K objective updates.
    pub fn objective_stats(&self) -> Vec<UpdateStats> {
        self.trees.iter().map(|t| t.stats).collect()
    }

    /// The graph version this result belongs to ([`Graph::version`]).
    pub fn graph_version(&self) -> u64 {
        self.version
    }

    /// Bytes held by the result's arrays.
    pub fn bytes(&self) -> usize {
        self.trees.iter().map(SsspResult::bytes).sum::<usize>()
            + self.combined_dist.len() * 12
            + self.costs.len() * 8
            + self.combined.bytes()
            + self.touched.capacity() * 4
    }

    /// The MOSP-tree path from the source to `target`; empty if unreachable.
    pub fn path_to(&self, target: usize) -> Result<Vec<i32>> {
        tree_path(&self.combined_parent, self.source, target)
    }
}
