//! Single-source shortest-path trees: static solve, adoption of existing trees, dynamic update.
//!
//! [`SsspResult`] holds one objective's tree (distances i64, parents i32) on one graph state; it
//! owns only its arrays (scratch memory is leased from the resources' pool per run). Arrays are
//! reference-counted so that views taken by readers stay unchanged when an update writes (copy on
//! write).

mod binned;
mod buckets;
pub(crate) mod dial;
pub(crate) mod engine;
pub(crate) mod exec;
mod invalidate;
mod near_far;
pub(crate) mod packing;
mod predict;
pub(crate) mod prefetch;
pub(crate) mod run;
pub(crate) mod validate;
pub(crate) mod workspace;
mod wide;

use crate::error::{Error, Result};
use crate::graph::{Csr, Graph, Rows};
use crate::resources::{Lease, Resources};
use packing::Packing;
use run::{Changes, OutView};
use std::sync::Arc;

pub use crate::stats::{default_delta, UpdateStats, Visits};
pub(crate) use crate::stats::graph_delta;

pub(crate) use workspace::Workspace;

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

/// Whether `res` runs the sequential reference, whose counters are the originals' (so whose
/// pull takes in-rows in the candidates' order: see `engine::InEdges`).
pub(crate) fn runs_reference(res: &Resources) -> bool {
    with_exec!(res, |e| exec::Exec::reference(e))
}

/// Objective `j` of `rows`, as the engines read it.
pub(crate) fn view<'a>(rows: &Rows<'a>, j: usize) -> OutView<'a> {
    OutView::of(rows, j)
}

/// Leases an SSSP workspace sized for `n` vertices (counting the growth if it had to allocate).
/// The CUDA engine keeps its scratch on the device, so its host workspace stays empty.
pub(crate) fn lease_workspace(res: &Resources, n: usize) -> Lease<'_, Workspace> {
    let mut ws = res.workspaces().lease(Workspace::new);
    if ws.reserve(res.device().host_scratch(n)) {
        res.workspaces().note_growth();
    }
    ws
}

// Here rather than in `resources`, which stays below the engines and knows no workspace type.
impl Resources {
    /// Allocates an SSSP workspace for up to `n` vertices now and keeps it idle in the pool, so that
    /// the next run on that many vertices does not allocate its lists (see
    /// `dyng_reserve_workspace`; the one-thread searches' ring of buckets gets its least size).
    pub fn reserve_workspace(&self, n: usize) {
        let ws = lease_workspace(self, n);
        if self.device().is_host() {
            ws.dial.lock().reserve();
        }
        ws.give_back();
    }
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
    /// Whether every parent is the lowest-id tight in-neighbour (computed trees, canonicalized
    /// or verified adopted trees, and their updates are; an adopted tree checked as the
    /// originals check theirs is found out when an update would recompute it).
    pub(crate) canonical: Canonical,
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

/// Whether a tree is canonical: what lets an update recompute it instead of repairing it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Canonical {
    Yes,
    No,
    /// Not checked: the first update that would recompute the tree checks it then, on the graph
    /// before its batch (`validate::is_canonical_before`), and repairs it if it is not. An update
    /// that repairs keeps the answer: a repair of a canonical tree is canonical, of another not.
    Unchecked,
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
    let mut dist = vec![crate::distance::DISTANCE_INF; n];
    let mut parent = vec![-1i32; n];
    let (stats, largest) = res.device().solve(res, g, j, source, delta, &mut dist, &mut parent, |dist, parent| {
        let mut ws = lease_workspace(res, n);
        let (stats, largest) = with_exec!(res, |e| engine::compute(
            e,
            view(&g.rows(), j),
            source,
            delta,
            g.max_weight(j) as i64,
            &mut ws,
            dist,
            parent
        ))?;
        ws.give_back();
        Ok((stats, Some(largest)))
    })?;
    Ok((dist, parent, stats, largest))
}

impl SsspResult {
    /// Computes the tree of `objective` from `source` on the graph's current state.
    ///
    /// Errors: [`Error::InvalidArgument`] for a source outside `[0, n)`, an objective outside
    /// `[0, K)` or a Delta below 1; [`Error::Capacity`] when `(n - 1)` times the largest weight
    /// does not fit in 62 bits.
    ///
    /// ```
    /// use dyng::{Csr, ErrorKind, Graph, Resources, SsspOptions, SsspResult, DISTANCE_INF};
    ///
    /// // 0 -> 1 (2), 1 -> 2 (2), 0 -> 2 (5); vertex 3 has no in-edge.
    /// let g = Graph::new(Csr::from_edges(4, 1, &[0, 1, 0], &[1, 2, 2], &[2, 2, 5])?);
    /// let res = Resources::parallel(2)?;
    /// let opt = SsspOptions::default();
    /// let tree = SsspResult::compute(&res, &g, 0, 0, &opt)?;
    /// assert_eq!(tree.distances(), [0, 2, 4, DISTANCE_INF]);
    /// assert_eq!(tree.parents(), [-1, 0, 1, -1]);
    /// assert_eq!(tree.path_to(2)?, [0, 1, 2]);
    /// assert!(tree.path_to(3)?.is_empty()); // unreachable
    ///
    /// let err = SsspResult::compute(&res, &g, 4, 0, &opt).unwrap_err();
    /// assert_eq!(err.kind(), ErrorKind::InvalidArgument); // no vertex 4
    /// # Ok::<(), dyng::Error>(())
    /// ```
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
            canonical: Canonical::Yes,
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
    ///
    /// `dist` and `parent` have n entries; a distance from `DISTANCE_INF / 2` on means
    /// unreachable. A tree that breaks a rule is [`Error::InvalidArgument`] naming the vertex;
    /// one that passes can be updated like a computed one.
    ///
    /// ```
    /// use dyng::{update_one, Batch, Csr, ErrorKind, Graph, Resources, SsspOptions, SsspResult};
    ///
    /// // 0 -> 1 (1), 0 -> 2 (2), 1 -> 2 (1), 2 -> 3 (5), 0 -> 3 (9): vertex 2 has two tight
    /// // parents, 0 and 1.
    /// let g = Graph::new(Csr::from_edges(4, 1, &[0, 0, 1, 2, 0], &[1, 2, 2, 3, 3], &[1, 2, 1, 5, 9])?);
    /// let opt = SsspOptions::default();
    /// let dist = vec![0, 1, 2, 7];
    ///
    /// let kept = SsspResult::from_arrays(&g, 0, 0, dist.clone(), vec![-1, 0, 1, 2], false, &opt)?;
    /// assert_eq!(kept.parents(), [-1, 0, 1, 2]);
    /// assert!(!kept.is_canonical());
    /// let canonical = SsspResult::from_arrays(&g, 0, 0, dist, vec![-1, 0, 1, 2], true, &opt)?;
    /// assert_eq!(canonical.parents(), [-1, 0, 0, 2]); // the lowest-id tight parent
    /// assert!(canonical.is_canonical());
    ///
    /// // Consistent but not optimal (0 -> 2 -> 3 is shorter than 9): refused.
    /// let err = SsspResult::from_arrays(&g, 0, 0, vec![0, 1, 2, 9], vec![-1, 0, 0, 0], false, &opt);
    /// assert_eq!(err.unwrap_err().kind(), ErrorKind::InvalidArgument);
    ///
    /// // An adopted tree is kept up to date like a computed one.
    /// let (res, mut tree) = (Resources::sequential(), canonical);
    /// let mut g = g;
    /// let mut b = Batch::new(1);
    /// b.delete(2, 3);
    /// update_one(&res, &mut g, &b.view(), &mut tree)?;
    /// assert_eq!(tree.distances()[3], 9);
    /// # Ok::<(), dyng::Error>(())
    /// ```
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
        let canonical = match validate::check_on_graph(&graph.rows(), objective, source, &dist, &parent, &what)? {
            true => Canonical::Yes,
            false => Canonical::No,
        };
        // One more pass after the validation's passes over every vertex and edge, so that the
        // first update of an adopted tree finds it as the next updates do.
        let largest = dist.iter().copied().filter(|&d| crate::sssp::run::is_finite(d)).max();
        Ok(Self::adopted(graph, source, objective, opt, canonical, dist, parent, largest))
    }

    /// Adopts a tree checked only as the originals check theirs before an update, in one pass
    /// over the vertices (the drop-in driver `dyng mosp` without `--validate`): rooted at `source`,
    /// parents in range, every reachable vertex's parent closer to the source (so no cycle), every
    /// finite distance at most (n - 1) x `max_weight` (the objective's largest weight before and
    /// after the batch to come, as the originals bound it). That the parent edges are edges of the
    /// graph with those distances is trusted, as the originals trust it: a tree of another graph
    /// gives other trees than theirs, or fails at the path costs. With `canonicalize`, the
    /// originals' one-pass rule first.
    ///
    /// On graphs where the adaptive update may recompute (from [`ADAPTIVE_MIN_VERTICES`], and
    /// `opt.fallback` other than [`Fallback::Never`]), a canonical tree may be recomputed where
    /// that is faster (its update and its recompute are the same tree), any other is always
    /// repaired, keeping the tie choices the batch does not touch, as the originals do. Whether
    /// the tree is canonical (one pass over the edges) is found out by the first update that would
    /// recompute it, on the graph before that update's batch and on its threads; an update that
    /// repairs does not ask, so a stream of repairs never pays for the pass. `res` is not used.
    #[allow(clippy::too_many_arguments)]
    pub fn from_arrays_unverified(
        _res: &Resources,
        graph: &Graph,
        source: usize,
        objective: usize,
        mut dist: Vec<i64>,
        mut parent: Vec<i32>,
        canonicalize: bool,
        max_weight: i64,
        opt: &SsspOptions,
    ) -> Result<Self> {
        check_objective(objective, graph.k())?;
        check_delta(opt.delta)?;
        let what = format!("the tree of objective {objective}");
        validate::check_ranges(graph.n(), source, &mut dist, &parent, &what)?;
        if canonicalize {
            validate::canonicalize(&graph.rows(), objective, source, &dist, &mut parent);
        }
        let bound = Packing::choose(graph.n(), max_weight.max(graph.max_weight(objective) as i64))?.bound;
        let largest = validate::check_unverified(source, &dist, &parent, bound, &what)?;
        // Only a recompute needs to know, and most updates repair: the update that would
        // recompute the tree finds out (see `Canonical::Unchecked`).
        let canonical = if opt.fallback != Fallback::Never && graph.n() >= ADAPTIVE_MIN_VERTICES {
            Canonical::Unchecked
        } else {
            Canonical::No
        };
        Ok(Self::adopted(graph, source, objective, opt, canonical, dist, parent, Some(largest)))
    }

    /// The result both adoptions make of a tree they accepted, current at `graph`'s version.
    #[allow(clippy::too_many_arguments)]
    fn adopted(
        graph: &Graph,
        source: usize,
        objective: usize,
        opt: &SsspOptions,
        canonical: Canonical,
        dist: Vec<i64>,
        parent: Vec<i32>,
        largest: Option<i64>,
    ) -> Self {
        SsspResult {
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
        }
    }

    /// The source vertex (root) of the tree.
    pub fn source(&self) -> usize {
        self.source
    }

    /// The objective (weight column) the tree is of, in `[0, K)`.
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

    /// True when every parent is known to be the lowest-id tight in-neighbour (a tree adopted by
    /// [`SsspResult::from_arrays_unverified`] is not known to be until an update has needed to
    /// know, and has recomputed it).
    pub fn is_canonical(&self) -> bool {
        self.canonical == Canonical::Yes
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

/// One objective of a graph in CSR form on arrays the caller owns (the drop-in entry points):
/// row `u` is `col[row_ptr[u]..row_ptr[u + 1]]`, with the weights `w` beside `col`. A reverse
/// graph takes the same form, `col` holding the tails of the edges into each vertex.
///
/// Borrowed, never copied. A call that reads the graph checks it first in one pass on the
/// executor (offsets, heads, weights), which also gives the facts the originals take from it.
#[derive(Clone, Copy, Debug)]
pub struct CsrArrays<'a> {
    /// `n + 1` row offsets into `col` and `w`.
    pub row_ptr: &'a [i32],
    /// The heads (or, in a reverse graph, the tails) of the edges, row by row.
    pub col: &'a [i32],
    /// The weight of each edge, beside `col`.
    pub w: &'a [i32],
}

impl<'a> CsrArrays<'a> {
    /// Objective `j` of `g`.
    pub fn of(g: &'a Csr, j: usize) -> Self {
        CsrArrays { row_ptr: g.row_ptr(), col: g.col_ind(), w: g.column(j) }
    }

    /// Vertices.
    pub fn n(&self) -> usize {
        self.row_ptr.len().saturating_sub(1)
    }

    /// The shape (n + 1 offsets from 0 to m, m heads and weights).
    fn check(&self, what: &str) -> Result<()> {
        let m = self.col.len();
        let first = self.row_ptr.first().copied();
        let last = self.row_ptr.last().copied();
        if first != Some(0) || last.map(|l| l as i64) != Some(m as i64) || self.w.len() != m {
            return Err(Error::invalid(format!(
                "dyng: {what}: {} row offsets (first {first:?}, last {last:?}), {m} heads and {} weights; want n + 1 offsets from 0 to m and m weights",
                self.row_ptr.len(),
                self.w.len()
            )));
        }
        Ok(())
    }

    /// The rows of this one-objective CSR.
    fn rows(&self) -> Rows<'a> {
        Rows::compact(self.n(), 1, self.row_ptr, self.col, self.w)
    }

    fn out(&self) -> OutView<'a> {
        OutView::of(&self.rows(), 0)
    }

    /// Checks every entry (offsets non-decreasing, heads in [0, n), with `weights` also weights in
    /// [1, 2^31-1]) in one pass on `e`; returns the largest weight (at least 1) and the weight sum
    /// (1 and 0 without `weights`).
    fn scan<E: exec::Exec>(&self, e: &E, weights: bool, what: &str) -> Result<(i64, i64)> {
        use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering::Relaxed};
        let n = self.n();
        let bad_row = AtomicUsize::new(usize::MAX);
        e.for_chunks(n, run::GRAIN_VERTICES * 16, |r| {
            // Plain loops over slices, which vectorize (one zipped loop with an early exit ran at
            // a sixth of the memory's speed).
            if run::offsets_descend(&self.row_ptr[r.start..r.end + 1]) {
                let u = r.clone().find(|&u| self.row_ptr[u + 1] < self.row_ptr[u]).unwrap_or(r.start);
                bad_row.fetch_min(u, Relaxed);
            }
        });
        let u = bad_row.into_inner();
        if u != usize::MAX {
            return Err(Error::invalid(format!(
                "dyng: {what}: row_ptr is not monotone: row_ptr[{}] = {} < row_ptr[{u}] = {}",
                u + 1,
                self.row_ptr[u + 1],
                self.row_ptr[u]
            )));
        }
        let (bad_edge, max, sum) = (AtomicUsize::new(usize::MAX), AtomicI64::new(1), AtomicI64::new(0));
        e.for_chunks(self.col.len(), run::GRAIN_VERTICES * 16, |r| {
            let (col, w) = (&self.col[r.clone()], &self.w[r.clone()]);
            // A negative head is a huge u32: one comparison covers both ends. With weights, one
            // zipped loop without an exit (it vectorizes) checks and sums them.
            let bad = if weights {
                let (mut bad, mut top, mut total) = (false, 1i32, 0i64);
                for (&v, &x) in col.iter().zip(w) {
                    bad |= (v as u32 as usize >= n) | (x < 1);
                    top = top.max(x);
                    total += x as i64;
                }
                max.fetch_max(top as i64, Relaxed);
                sum.fetch_add(total, Relaxed);
                bad
            } else {
                col.iter().fold(false, |bad, &v| bad | (v as u32 as usize >= n))
            };
            if bad {
                let i = (0..col.len()).find(|&i| col[i] as u32 as usize >= n || (weights && w[i] < 1)).unwrap_or(0);
                bad_edge.fetch_min(r.start + i, Relaxed);
            }
        });
        let i = bad_edge.into_inner();
        if i != usize::MAX {
            return Err(Error::invalid(format!(
                "dyng: {what}: edge {i} has head {} and weight {}; heads must be in [0, n = {n}) and weights in [1, 2^31-1]",
                self.col[i], self.w[i]
            )));
        }
        Ok((max.into_inner(), sum.into_inner()))
    }

    /// A validated copy, for the engines that need a [`Csr`] (the reverse graph's build, CUDA).
    fn to_csr(self) -> Result<Csr> {
        Csr::from_arrays(self.n(), 1, self.row_ptr.to_vec(), self.col.to_vec(), self.w, crate::graph::WeightLayout::ObjectiveMajor)
    }
}

/// The checks of a drop-in call that reads the graph: its entries (one pass, see
/// [`CsrArrays::scan`]), every weight at most `max_weight`, and the run's arguments. Returns the
/// Delta and the largest weight to use (`delta` and `max_weight` <= 0: the graph's own).
fn drop_in_args(res: &Resources, graph: &CsrArrays<'_>, source: usize, delta: i64, max_weight: i64, dist: &[i64], parent: &[i32]) -> Result<(i64, i64, Packing)> {
    let n = graph.n();
    let (largest, sum) = check_graph(res, graph, max_weight)?;
    let delta = if delta > 0 { delta } else { default_delta(graph.col.len(), n, sum) };
    let max_weight = if max_weight > 0 { max_weight } else { largest };
    engine::check_run_args(n, source, delta, dist.len(), parent.len())?;
    Ok((delta, max_weight, Packing::choose(n, max_weight)?))
}

/// The graph's entries checked in one pass ([`CsrArrays::scan`]), every weight at most
/// `max_weight` where it is > 0; returns the largest weight and the weight sum.
fn check_graph(res: &Resources, graph: &CsrArrays<'_>, max_weight: i64) -> Result<(i64, i64)> {
    let (largest, sum) = with_exec!(res, |e| graph.scan(e, true, "the graph"))?;
    if max_weight > 0 && largest > max_weight {
        return Err(Error::invalid(format!(
            "dyng: the graph has a weight {largest} above max_weight = {max_weight} (which must bound every weight before and after the batch)"
        )));
    }
    Ok((largest, sum))
}

/// The originals' per-objective update on caller-owned arrays (`sospUpdateCpu`, the drop-in entry
/// point): `graph` is the UPDATED graph (one objective), `reverse` its reverse graph (`None`: when
/// there are changes, a parallel engine's repair finds the in-edges it pulls by a pass over the
/// edges, and the sequential reference builds a reverse graph for the call), `dist`/`parent` the
/// tree of the old graph in, of the updated graph out (written in place, only once nothing can
/// fail).
///
/// `changed_from`/`changed_to` are the edges that can invalidate a subtree as the originals list
/// them: every deletion and every insertion that raised this objective's weight of an existing
/// edge (reference-behaviour 2); `insert_heads` the heads of all insertions. The tree is repaired
/// as the originals repair it (no recompute): tie choices of a non-canonical tree are kept where
/// the batch does not touch them. `delta` <= 0: the default; `max_weight` <= 0: the graph's largest
/// weight (each a pass over the weights), else at least every weight of the graph and the batch.
///
/// Per call: the shapes (O(1)); one pass over the tree (its ranges, and the distance bound the
/// originals check before a walk) and the walk; the graphs' entries, checked as the repair reads
/// their rows where `reverse`, `delta` and `max_weight` are given, else in one pass over the
/// edges first. A clean tree is packed and written back only where the repair touches it. A
/// call without changes reads only the tree (one pass).
/// Scratch memory is leased from `res`.
#[allow(clippy::too_many_arguments)]
pub fn sosp_update_arrays(
    res: &Resources,
    graph: CsrArrays<'_>,
    reverse: Option<CsrArrays<'_>>,
    changed_from: &[i32],
    changed_to: &[i32],
    insert_heads: &[i32],
    source: usize,
    delta: i64,
    max_weight: i64,
    dist: &mut [i64],
    parent: &mut [i32],
) -> Result<UpdateStats> {
    graph.check("the graph")?;
    if graph.n() == 0 && dist.is_empty() && parent.is_empty() {
        return Ok(UpdateStats::default());
    }
    let n = graph.n();
    engine::check_changes(n, changed_from, changed_to, insert_heads)?;
    let repairs = !changed_from.is_empty() || !insert_heads.is_empty();
    if !repairs && max_weight > 0 && res.device().is_host() {
        // Nothing reads the graph: only the tree is checked (and normalized).
        engine::check_run_args(n, source, 1, dist.len(), parent.len())?;
        let packing = Packing::choose(n, max_weight)?;
        if packing.packed_parents() {
            return with_exec!(res, |e| unchanged_tree(e, packing.bound, dist, parent));
        }
    }
    // With the Delta and the weight bound given, words that hold parents and the reverse graph
    // given, a repair reads only the rows it meets, each checked then (`RowGuard`): no pass over
    // the edges first. Otherwise every entry is checked first (the defaults, a distance-only run
    // and the build of a reverse graph read every row).
    let given = delta > 0 && max_weight > 0 && reverse.is_some() && res.device().is_host();
    let given = given.then(|| Packing::choose(n, max_weight)).transpose()?.filter(|p| p.packed_parents());
    let guarded = given.is_some();
    let (delta, max_weight, packing) = match given {
        Some(packing) => {
            engine::check_run_args(n, source, delta, dist.len(), parent.len())?;
            (delta, max_weight, packing)
        }
        None => drop_in_args(res, &graph, source, delta, max_weight, dist, parent)?,
    };
    if let (Some(r), true) = (&reverse, repairs) {
        r.check("the reverse graph")?;
        if r.n() != n || r.col.len() != graph.col.len() {
            return Err(Error::invalid(format!(
                "dyng: the reverse graph has n = {} and m = {}; the graph n = {n} and m = {}",
                r.n(),
                r.col.len(),
                graph.col.len()
            )));
        }
        if !guarded {
            // Its offsets and tails, which the pull indexes by. Its weights only enter
            // candidates that the packing bounds (a reverse graph that is not the graph's gives
            // a wrong tree, which no check short of comparing the two could tell).
            with_exec!(res, |e| r.scan(e, false, "the reverse graph"))?;
        }
    }
    if !repairs && packing.packed_parents() && res.device().is_host() {
        return with_exec!(res, |e| unchanged_tree(e, packing.bound, dist, parent));
    }
    let bad_row = std::sync::atomic::AtomicBool::new(false);
    let guard = guarded.then_some(run::RowGuard { bad: &bad_row, max_weight });
    // A tree that one pass finds clean passes every check below and the packing's: the repair
    // then packs and writes back only the vertices it touches.
    let clean = packing.packed_parents() && res.device().is_host() && with_exec!(res, |e| validate::scan_caller_tree(e, packing.bound, dist, parent)).clean();
    if !changed_from.is_empty() && !clean {
        // The walk up the parents comes before the packing pass that checks the distances: the
        // originals check every vertex before it, invalidated or not (golden errors/e14).
        validate::check_caller_distances(dist, packing.bound)?;
    }
    let old_tree = if clean { engine::OldTree::Clean } else { engine::OldTree::Unchecked };
    let set = crate::resources::device::ChangeSet {
        from: changed_from,
        to: changed_to,
        heads: insert_heads,
    };
    res.device().update_arrays(res, || graph.to_csr(), set, source, delta, max_weight, dist, parent, |dist, parent| {
        // Without the caller's reverse graph a repair on the parallel engine finds its in-edges
        // by a pass over the rows (`engine::InEdges::Scan`), a fraction of what building one for
        // a single call costs; the reference builds it, its pull's order giving the originals'
        // counters.
        let built = match (reverse, repairs) {
            (None, true) if runs_reference(res) => Some(with_exec!(res, |e| crate::graph::rows::SlackRows::reversed_on(e, &graph.rows()))),
            _ => None,
        };
        let scanned = std::cell::Cell::new(0);
        let inn = match (&built, reverse) {
            (Some(r), _) => engine::InEdges::Rows(view(&r.rows(), 0)),
            (None, Some(r)) => engine::InEdges::Rows(r.out().guarded(guard)),
            (None, None) if repairs => engine::InEdges::Scan(&scanned),
            // Without changes nothing is pulled (no candidates), so no reverse graph is read.
            (None, None) => engine::InEdges::Rows(graph.out()),
        };
        let changes = Changes {
            from: changed_from,
            to: changed_to,
            heads: insert_heads,
            inserted: None,
        };
        let mut ws = lease_workspace(res, n);
        let updated = with_exec!(res, |e| engine::update(
            e,
            graph.out().guarded(guard),
            || inn,
            changes,
            source,
            delta,
            max_weight,
            None,
            None,
            old_tree,
            &mut ws,
            dist,
            parent,
            &mut None
        ));
        let (stats, _) = match updated {
            // A bad row: the message of the full check, which finds the first bad entry.
            Err(e) if bad_row.load(std::sync::atomic::Ordering::Relaxed) => return Err(explain_bad_rows(res, &graph, reverse.as_ref(), max_weight).unwrap_or(e)),
            r => r?,
        };
        ws.give_back();
        Ok(stats)
    })
}

/// The error the full check of the graph (entries, weights at most `max_weight`) and of the
/// reverse graph (offsets and tails) gives, if any.
fn explain_bad_rows(res: &Resources, graph: &CsrArrays<'_>, reverse: Option<&CsrArrays<'_>>, max_weight: i64) -> Option<Error> {
    if let Err(e) = check_graph(res, graph, max_weight) {
        return Some(e);
    }
    let r = reverse?;
    if let Err(e) = with_exec!(res, |e| r.scan(e, false, "the reverse graph")) {
        return Some(e);
    }
    let w = r.w.iter().copied().find(|&w| w < 1 || w as i64 > max_weight)?;
    Some(Error::invalid(format!("dyng: the reverse graph has a weight {w} outside [1, max_weight = {max_weight}]")))
}

/// A drop-in update without any change: what the engine's passes would do, in one. It packs every
/// vertex (refusing a distance above the bound, a negative one or a parent out of range) and
/// unpacks it again, which in packed mode changes nothing but an unreachable vertex's entries
/// (INF, -1). So this checks every vertex as the packing does and writes only those. (In
/// distance-only mode the engine recovers every parent, so it runs there.)
fn unchanged_tree<E: exec::Exec>(e: &E, bound: u64, dist: &mut [i64], parent: &mut [i32]) -> Result<UpdateStats> {
    let n = dist.len();
    let scan = validate::scan_caller_tree(e, bound, dist, parent);
    if let Some(v) = scan.first_bad {
        return Err(Error::invalid(format!(
            "dyng: an input distance exceeds (n - 1) * maxWeight, is negative, or its parent is out of range: distance[{v}] = {}, parent[{v}] = {} (bound {bound}, n = {n}); does the tree belong to this graph?",
            dist[v], parent[v]
        )));
    }
    let affected = scan.unnormal;
    if affected > 0 {
        for (dv, pv) in dist.iter_mut().zip(parent.iter_mut()) {
            if !run::is_finite(*dv) {
                (*dv, *pv) = (crate::distance::DISTANCE_INF, -1);
            }
        }
    }
    Ok(UpdateStats {
        affected: affected as i64,
        packed_parents: true,
        ..Default::default()
    })
}

/// The originals' static solve on caller-owned arrays (`sospFromScratchCpu`): the canonical tree of
/// `graph` from `source` into `dist`/`parent` (n each). `delta` and `max_weight` as for
/// [`sosp_update_arrays`].
pub fn sosp_solve_arrays(
    res: &Resources,
    graph: CsrArrays<'_>,
    source: usize,
    delta: i64,
    max_weight: i64,
    dist: &mut [i64],
    parent: &mut [i32],
) -> Result<UpdateStats> {
    graph.check("the graph")?;
    if graph.n() == 0 && dist.is_empty() && parent.is_empty() {
        return Ok(UpdateStats::default());
    }
    let (delta, max_weight, _) = drop_in_args(res, &graph, source, delta, max_weight, dist, parent)?;
    res.device().solve_arrays(res, || graph.to_csr(), source, delta, max_weight, dist, parent, |dist, parent| {
        let mut ws = lease_workspace(res, graph.n());
        let (stats, _) = with_exec!(res, |e| engine::compute(e, graph.out(), source, delta, max_weight, &mut ws, dist, parent))?;
        ws.give_back();
        Ok(stats)
    })
}
