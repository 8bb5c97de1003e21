//! Single-source shortest-path trees: static solve, adoption of existing trees, dynamic update.
//!
//! [`SsspResult`] holds one objective's tree (distances i64, parents i32) on one graph state; it
//! owns only its arrays (scratch memory is leased from the resources' pool per run). Arrays are
//! reference-counted so that views taken by readers stay unchanged when an update writes (copy on
//! write).

mod buckets;
pub(crate) mod engine;
pub(crate) mod exec;
mod invalidate;
mod near_far;
pub mod packing;
mod predict;
pub(crate) mod prefetch;
pub(crate) mod run;
pub(crate) mod team_choice;
pub mod stats;
pub(crate) mod validate;
pub mod workspace;

use crate::error::{Error, Result};
use crate::graph::{Csr, Graph, Rows};
use crate::resources::{Lease, Resources};
use run::{Changes, OutView};
use std::sync::Arc;

pub use stats::{default_delta, UpdateStats};
pub(crate) use stats::graph_delta;

pub use workspace::Workspace;

/// Runs `$body` with `$e` bound to the executor of `$res` (sequential or parallel).
macro_rules! with_exec {
    ($res:expr, |$e:ident| $body:expr) => {{
        let res: &$crate::resources::Resources = $res;
        match res.thread_pool() {
            Some(pool) => {
                let $e = &$crate::sssp::exec::Parallel {
                    pool,
                    team_lock: res.team_lock(),
                    choice: res.team_choice(),
                    inline_all: Default::default(),
                };
                $body
            }
            None => {
                let $e = &$crate::sssp::exec::Sequential;
                $body
            }
        }
    }};
}
pub(crate) use with_exec;

/// Objective `j` of `rows`, as the engines read it.
pub(crate) fn view<'a>(rows: &Rows<'a>, j: usize) -> OutView<'a> {
    OutView::of(rows, j)
}

/// Leases an SSSP workspace sized for `n` vertices (counting the growth if it had to allocate).
/// The CUDA engine keeps its scratch on the device, so its host workspace stays empty.
pub(crate) fn lease_workspace(res: &Resources, n: usize) -> Lease<'_, Workspace> {
    let mut ws = res.workspaces().lease(Workspace::new);
    let n = if res.cuda().is_some() { 0 } else { n };
    if ws.reserve(n) {
        res.workspaces().note_growth();
    }
    ws
}

/// When an update restarts the search from the source instead of repairing the tree.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Fallback {
    /// Recompute when repairing is predicted to cost more (measured with `dyng bench`, see
    /// docs/performance.md): before any walk, when a sample of 64 reachable vertices finds
    /// [`ADAPTIVE_FRACTION`] of them below an invalidated tree edge or below an insertion head
    /// the insertion brings closer (their old paths get longer or shorter, so the repair must
    /// search them); after the exact invalidation walk, when the invalidated vertices plus
    /// the improving insertion heads reach that share of the vertices; when an insertion
    /// shortens some distance by more than [`ADAPTIVE_SHORTCUT`] of the tree's largest
    /// distance (such a shortcut reroutes most of the graph, beyond the head's old subtree); or,
    /// during the repair, once it has expanded as many vertices as the tree's last static solve
    /// did. Graphs below [`ADAPTIVE_MIN_VERTICES`] always update.
    ///
    /// The shortcut rule too is checked before any walk, for a result's own tree, and before the
    /// sample when the tree's largest distance is known (every computed or adopted tree, and
    /// most repaired ones). When the sample or the rule decides, the exact walk does not run
    /// and `UpdateStats::invalidated` is the sample's estimate: from 32 to 64 vertices, and for
    /// a batch with more than n/8 changes possibly from an even subset of its changes (then it
    /// counts the vertices below that subset's roots only, a lower bound: bremen safe 50K reads
    /// 24K of 33K). When the rule decides before the sample, it is the number of distinct
    /// roots, a lower bound too.
    #[default]
    Adaptive,
    /// As `Adaptive`, but the invalidated subtrees are always walked, so that
    /// `UpdateStats::invalidated` is exact: the choice of the drop-in entry points
    /// (`dyng_sssp_from_arrays`, `dyng mosp`, in process or through the worker), whose outputs
    /// print the counter as the originals do. Costs up to half a
    /// recompute more when the sample chooses to recompute and both sides of the cut are large.
    AdaptiveCounted,
    /// Always repair the tree incrementally.
    Never,
    /// Always recompute from scratch (for comparisons).
    Always,
}

/// The share of the vertices to search (sampled, then counted) from which the adaptive update
/// recomputes.
pub const ADAPTIVE_FRACTION: f64 = 0.3;
/// The share of the largest old distance by which one vertex's distance must drop for the
/// adaptive update to recompute.
pub const ADAPTIVE_SHORTCUT: f64 = 0.4;
/// The policy of trees adopted through the drop-in entry points (`dyng_sssp_from_arrays`, its
/// worker op, `dyng mosp`): exact counters, which the originals' outputs print.
pub(crate) const DROP_IN_FALLBACK: Fallback = Fallback::AdaptiveCounted;
/// Graphs smaller than this always update incrementally (recomputing saves nothing measurable).
pub const ADAPTIVE_MIN_VERTICES: usize = 4096;

impl Fallback {
    /// The policy's number in the C ABI (`DYNG_FALLBACK_*`) and the worker protocol.
    pub(crate) const fn code(self) -> u32 {
        match self {
            Fallback::Adaptive => 0,
            Fallback::Never => 1,
            Fallback::Always => 2,
            Fallback::AdaptiveCounted => 3,
        }
    }

    /// The policy numbered `code` (see [`Fallback::code`]).
    pub(crate) fn from_code(code: u32) -> Option<Self> {
        [Fallback::Adaptive, Fallback::Never, Fallback::Always, Fallback::AdaptiveCounted]
            .into_iter()
            .find(|f| f.code() == code)
    }

    /// The engine's policy for a run on `n` vertices. Recomputing is only allowed for a
    /// canonical tree: it gives the canonical tree, which an update of a canonical tree also
    /// gives, so the result is bit-identical either way.
    /// `fresh_delta`: the Delta a recompute takes when it is not the run's own (the updated
    /// graph's default, for a result without a Delta of its own).
    pub(crate) fn policy(self, n: usize, canonical: bool, static_pushes: Option<i64>, fresh_delta: Option<i64>) -> Option<engine::Adaptive> {
        match (self, canonical) {
            (_, false) | (Fallback::Never, _) => None,
            (Fallback::Always, true) => Some(engine::Adaptive {
                recompute_at: 0,
                shortcut: None,
                push_budget: i64::MAX,
                predict_share: None,
                exact_count: true,
                fresh_delta,
                quick_changes: 0,
            }),
            (Fallback::Adaptive | Fallback::AdaptiveCounted, true) if n >= ADAPTIVE_MIN_VERTICES => Some(engine::Adaptive {
                recompute_at: (n as f64 * ADAPTIVE_FRACTION).ceil() as usize,
                shortcut: Some(ADAPTIVE_SHORTCUT),
                // An adopted tree has no measured solve yet: 1.5 expansions per vertex stand in
                // (static solves expand 1.1-1.6 times per vertex on the bench's road networks and
                // grid, 2.3 on rgg, 4 on bremen's travel times).
                push_budget: static_pushes.unwrap_or(n as i64 * 3 / 2).max(n as i64 / 2),
                predict_share: Some(ADAPTIVE_FRACTION),
                exact_count: self == Fallback::AdaptiveCounted,
                fresh_delta,
                quick_changes: engine::Adaptive::quick_changes_of(n),
            }),
            (Fallback::Adaptive | Fallback::AdaptiveCounted, true) => None,
        }
    }
}

/// Options of an SSSP result.
#[derive(Debug, Clone, Copy, Default)]
pub struct SsspOptions {
    /// Bucket width of the near-far search; `None` = the originals' default for the objective.
    pub delta: Option<i64>,
    /// The adaptive-update policy.
    pub fallback: Fallback,
}

/// A maintained single-objective shortest-path tree.
#[derive(Debug, Clone)]
pub struct SsspResult {
    pub(crate) graph_id: u64,
    pub(crate) version: u64,
    pub(crate) source: usize,
    pub(crate) objective: usize,
    pub(crate) delta: Option<i64>,
    pub(crate) fallback: Fallback,
    /// Every parent is the lowest-id tight in-neighbour (computed trees, canonicalized or
    /// verified adopted trees, and their updates).
    pub(crate) canonical: bool,
    pub(crate) dist: Arc<Vec<i64>>,
    pub(crate) parent: Arc<Vec<i32>>,
    pub(crate) stats: UpdateStats,
    /// Expansions of this tree's last static solve on the host: the yardstick against which
    /// the adaptive update measures a repair (`None` for an adopted tree).
    pub(crate) static_pushes: Option<i64>,
    /// The largest finite distance, where the host engines know it: taken by every solve's
    /// write-back or at adoption and kept through repairs (see `engine::update`); `None` after
    /// the CUDA engine, or after a repair that lowered the vertex that had it. Spares the
    /// shortcut rule of the adaptive update a pass over every distance (50 us on usroads).
    pub(crate) largest: Option<i64>,
}

/// Refuses an objective index outside `[0, k)` (every engine and entry point).
pub(crate) fn check_objective(objective: usize, k: usize) -> Result<()> {
    if objective >= k {
        return Err(Error::invalid(format!(
            "dyng: objective {objective} is outside [0, K = {k})"
        )));
    }
    Ok(())
}

/// Refuses a vertex (`what`: source, target, ...) outside `[0, n)`.
pub(crate) fn check_vertex(what: &str, v: usize, n: usize) -> Result<()> {
    if v >= n {
        return Err(Error::invalid(format!(
            "dyng: {what} {v} is outside [0, n = {n})"
        )));
    }
    Ok(())
}

pub(crate) fn check_source(g: &Graph, source: usize) -> Result<()> {
    check_vertex("source", source, g.n())
}

fn check_delta(delta: Option<i64>) -> Result<()> {
    match delta {
        Some(d) if d <= 0 => Err(Error::invalid(format!("dyng: delta = {d} must be > 0"))),
        _ => Ok(()),
    }
}

/// What `solve` returns: the tree's distances and parents, the stats, and the largest finite
/// distance where the engine took it (the host engines do).
type Solved = (Vec<i64>, Vec<i32>, UpdateStats, Option<i64>);

/// Static solve of objective `j` of `g` from `source` into fresh arrays, on a leased workspace.
pub(crate) fn solve(res: &Resources, g: &Graph, j: usize, source: usize, delta: Option<i64>) -> Result<Solved> {
    let n = g.n();
    let delta = delta.unwrap_or_else(|| graph_delta(g, j));
    // Filled here, on the calling thread, rather than zeroed: zeroed arrays of this size are
    // fresh pages that fault in during the parallel write-back, where both members fault at once
    // (grid 1000^2 at 2 threads on a new graph: 4,848 faults and 59 ms against 2,929 faults and
    // 50 ms when filled first).
    let mut dist = vec![crate::DISTANCE_INF; n];
    let mut parent = vec![-1i32; n];
    if let Some(cuda) = res.cuda() {
        let dg = cuda.mirror(g, false)?;
        let max_weight = Some(g.max_weight(j) as i64);
        let stats = cuda.sssp_compute(res.workspaces(), &dg, j, source, Some(delta), max_weight, &mut dist, &mut parent)?;
        return Ok((dist, parent, stats, None));
    }
    let mut ws = lease_workspace(res, n);
    let (stats, largest) = with_exec!(res, |e| engine::compute(
        e,
        view(&g.rows(), j),
        source,
        delta,
        g.max_weight(j) as i64,
        &mut ws,
        &mut dist,
        &mut parent
    ))?;
    ws.give_back();
    Ok((dist, parent, stats, Some(largest)))
}

impl SsspResult {
    /// Computes the tree of `objective` from `source` on the graph's current state.
    pub fn compute(
        res: &Resources,
        graph: &Graph,
        source: usize,
        objective: usize,
        opt: &SsspOptions,
    ) -> Result<Self> {
        check_source(graph, source)?;
        check_objective(objective, graph.k())?;
        check_delta(opt.delta)?;
        let (dist, parent, stats, largest) = solve(res, graph, objective, source, opt.delta)?;
        Ok(SsspResult {
            graph_id: graph.id(),
            version: graph.version(),
            source,
            objective,
            delta: opt.delta,
            fallback: opt.fallback,
            canonical: true,
            dist: Arc::new(dist),
            parent: Arc::new(parent),
            static_pushes: Some(stats.pushes),
            largest,
            stats,
        })
    }

    /// Adopts an existing tree of `objective` on the graph's current state. With `canonicalize`,
    /// parents are first moved to lower-id tight in-neighbours (the originals' one-pass rule);
    /// without it, the given tie choices are kept where later updates do not touch them. The tree
    /// must be rooted at `source`, acyclic, consistent and optimal.
    pub fn from_arrays(
        graph: &Graph,
        source: usize,
        objective: usize,
        mut dist: Vec<i64>,
        mut parent: Vec<i32>,
        canonicalize: bool,
        opt: &SsspOptions,
    ) -> Result<Self> {
        check_objective(objective, graph.k())?;
        check_delta(opt.delta)?;
        let what = format!("the tree of objective {objective}");
        validate::check_shape(graph.n(), source, &mut dist, &parent, &what)?;
        if canonicalize {
            validate::canonicalize(&graph.rows(), objective, source, &dist, &mut parent);
        }
        let canonical = validate::check_on_graph(&graph.rows(), objective, source, &dist, &parent, &what)?;
        // One more pass after the validation's passes over every vertex and edge, so that the
        // first update of an adopted tree finds it as the next updates do.
        let largest = dist.iter().copied().filter(|&d| crate::sssp::run::is_finite(d)).max();
        Ok(SsspResult {
            graph_id: graph.id(),
            version: graph.version(),
            source,
            objective,
            delta: opt.delta,
            fallback: opt.fallback,
            canonical,
            dist: Arc::new(dist),
            parent: Arc::new(parent),
            stats: UpdateStats::default(),
            static_pushes: None,
            largest,
        })
    }

    pub fn source(&self) -> usize {
        self.source
    }

    pub fn objective(&self) -> usize {
        self.objective
    }

    /// Distances (`DISTANCE_INF` for unreachable vertices).
    pub fn distances(&self) -> &[i64] {
        &self.dist
    }

    /// Parents (-1 for the source and unreachable vertices).
    pub fn parents(&self) -> &[i32] {
        &self.parent
    }

    /// A snapshot of the distances that later updates never change.
    pub fn distances_snapshot(&self) -> Arc<Vec<i64>> {
        Arc::clone(&self.dist)
    }

    /// A snapshot of the parents that later updates never change.
    pub fn parents_snapshot(&self) -> Arc<Vec<i32>> {
        Arc::clone(&self.parent)
    }

    /// True when every parent is the lowest-id tight in-neighbour.
    pub fn is_canonical(&self) -> bool {
        self.canonical
    }

    /// Counters of the last update (or of the static solve).
    pub fn stats(&self) -> UpdateStats {
        self.stats
    }

    /// The graph version this result belongs to.
    pub fn graph_version(&self) -> u64 {
        self.version
    }

    /// Bytes held by the result's arrays.
    pub fn bytes(&self) -> usize {
        self.dist.len() * 12
    }

    /// The path from the source to `target` (source first); empty if `target` is unreachable.
    pub fn path_to(&self, target: usize) -> Result<Vec<i32>> {
        tree_path(&self.parent, self.source, target)
    }
}

/// Walks parents from `target` back to `source`.
pub(crate) fn tree_path(parent: &[i32], source: usize, target: usize) -> Result<Vec<i32>> {
    check_vertex("target", target, parent.len())?;
    let mut path = vec![target as i32];
    let mut v = target;
    while v != source {
        let p = parent[v];
        if p < 0 || path.len() > parent.len() {
            return Ok(Vec::new());
        }
        path.push(p);
        v = p as usize;
    }
    path.reverse();
    Ok(path)
}

/// The originals' per-objective update on caller-owned arrays (`sospUpdateCpu`, the drop-in
/// entry point): `graph` is the UPDATED graph (objective `objective` is used), `dist`/`parent`
/// the canonical tree of the old graph in, of the updated graph out. Scratch memory is leased from
/// `res`. The reverse graph is built per call.
#[allow(clippy::too_many_arguments)]
pub fn sosp_update_arrays(
    res: &Resources,
    graph: &Csr,
    objective: usize,
    changed_from: &[i32],
    changed_to: &[i32],
    insert_heads: &[i32],
    source: usize,
    delta: i64,
    max_weight: i64,
    dist: &mut [i64],
    parent: &mut [i32],
) -> Result<UpdateStats> {
    check_objective(objective, graph.k())?;
    if graph.n() == 0 {
        return Ok(UpdateStats::default());
    }
    let max_weight = max_weight.max(graph.max_weight(objective) as i64);
    if let Some(cuda) = res.cuda() {
        let dg = cuda.upload_graph(graph)?;
        let changes = crate::cuda::ChangeSet {
            from: changed_from,
            to: changed_to,
            heads: insert_heads,
        };
        return cuda.sssp_update(res.workspaces(), &dg, objective, changes, source, delta, max_weight, dist, parent);
    }
    let in_rows = crate::graph::rows::SlackRows::reversed(&graph.rows());
    let changes = Changes {
        from: changed_from,
        to: changed_to,
        heads: insert_heads,
        inserted: None,
    };
    let mut ws = lease_workspace(res, graph.n());
    let (stats, _) = with_exec!(res, |e| engine::update(
        e,
        view(&graph.rows(), objective),
        || view(&in_rows.rows(), objective),
        changes,
        source,
        delta,
        max_weight,
        None,
        engine::OldTree::Unchecked,
        &mut ws,
        dist,
        parent,
        &mut None
    ))?;
    ws.give_back();
    Ok(stats)
}
