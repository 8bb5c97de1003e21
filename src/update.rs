//! `update`: apply a batch once and bring every listed result up to date.
//!
//! Validate, then commit: the batch, the results' freshness and every capacity limit are checked
//! before anything changes, and the updated graph is committed only when every result has been
//! updated. Results adopted through `from_arrays` or computed by dyng are valid trees, so once
//! validation passed the engines cannot fail on their input. All results of one call run one after
//! another on one leased workspace.

use crate::error::{Error, Result};
use crate::graph::{BatchView, Graph};
use crate::graph::stale::POISONED;
use crate::graph::stale::check_current;
use crate::mosp::MospResult;
use crate::resources::device::Prepared;
use crate::resources::team_choice::MIN_WORK;
use crate::resources::{PooledWorkspace, Resources};
use crate::sssp::engine;
use crate::sssp::run::Changes;
use crate::sssp::packing::Packing;
use crate::sssp::validate::is_canonical_before;
use crate::sssp::{default_delta, graph_delta, lease_workspace, runs_reference, view, with_exec, Canonical, SsspResult, UpdateStats, Workspace};
use crate::graph::before::RowsBefore;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

/// A result to bring up to date.
pub enum ResultMut<'a> {
    /// A single-objective tree.
    Sssp(&'a mut SsspResult),
    /// A multi-objective result: its K trees, combined tree and path costs.
    Mosp(&'a mut MospResult),
}

impl<'a> From<&'a mut SsspResult> for ResultMut<'a> {
    fn from(r: &'a mut SsspResult) -> Self {
        ResultMut::Sssp(r)
    }
}

impl<'a> From<&'a mut MospResult> for ResultMut<'a> {
    fn from(r: &'a mut MospResult) -> Self {
        ResultMut::Mosp(r)
    }
}


impl ResultMut<'_> {
    fn graph_state(&self) -> (u64, u64) {
        match self {
            ResultMut::Sssp(r) => (r.graph_id, r.version),
            ResultMut::Mosp(r) => (r.graph_id, r.version),
        }
    }

    /// Objectives this result needs updated.
    fn objectives(&self) -> std::ops::Range<usize> {
        match self {
            ResultMut::Sssp(r) => r.objective..r.objective + 1,
            ResultMut::Mosp(r) => 0..r.trees.len(),
        }
    }

    /// Sets the graph version of the result (and of a MOSP result's trees).
    fn set_version(&mut self, version: u64) {
        match self {
            ResultMut::Sssp(s) => s.version = version,
            ResultMut::Mosp(m) => {
                m.version = version;
                for t in m.trees.iter_mut() {
                    t.version = version;
                }
            }
        }
    }
}


/// Per-objective facts of the graph BEFORE the batch, plus the batch's inserted weights: the
/// originals' inputs to packing (max weight) and to the default Delta (original m and weight sum).
struct ObjectiveFacts {
    max_weight: i64,
    weight_sum: i64,
}

/// The facts of objective `j`. The largest weight is the graph's bound (kept without a pass over
/// the column when a batch takes the last edge of the largest weight) where that bound leaves the
/// words room for parents, as the exact weight then does too; only where it does not is the
/// column read for the exact one, which the originals' packing rule is defined on.
fn objective_facts(g: &mut Graph, batch: &BatchView<'_>, j: usize) -> ObjectiveFacts {
    let inserted = (0..batch.num_insertions())
        .map(|i| batch.ins_weights[i * batch.k + j])
        .max()
        .unwrap_or(1);
    let bound = g.max_weight_bound(j).max(inserted) as i64;
    if !Packing::choose(g.n(), bound).is_ok_and(|p| p.packed_parents()) {
        g.settle_max_weight(j);
    }
    ObjectiveFacts {
        max_weight: (g.max_weight_bound(j).max(inserted)) as i64,
        weight_sum: g.weight_sum(j),
    }
}

/// Where the time of one `update` call went (nanoseconds; the engines' own times are in the
/// results' stats, the combine step's in the MOSP results' combine stats).
#[derive(Debug, Clone, Copy, Default)]
pub struct UpdateTimings {
    /// Applying the batch to the graph's rows (listing its edits of the in-rows, once made), and
    /// the compaction that may follow it once the batch is kept.
    pub apply_ns: u64,
    /// Building the per-objective change lists, leasing the workspace, and, when a repair first
    /// reads the graph's in-rows, bringing them up to date with the batches since they were last
    /// read, or making them (a recompute reads none).
    pub prepare_ns: u64,
    /// The results' trees, from the first tree's run to the last one's end, less what the
    /// preparation counts: what the engines' times in the results' stats add up to where the trees
    /// ran one after the other, less where a MOSP result's trees ran side by side.
    pub trees_ns: u64,
    /// Whether a MOSP result's trees after the first were repaired side by side, each on one
    /// thread of the pool (on 2 threads or more, after a first repair long enough to pay for
    /// waking a thread and local enough to gain less from a team): their engine times overlap.
    pub side_by_side: bool,
}

/// Applies `batch` to `graph` once and updates every result. Returns one stats record per result
/// (a MOSP result's counters are summed over its K objectives).
///
/// Everything is checked before anything changes: a batch that breaks a rule
/// ([`Error::InvalidArgument`]: a vertex outside `[0, n)`, a weight outside `[1, 2^31-1]`,
/// arrays of different lengths, K not the graph's), a result of another graph or of an older
/// state ([`Error::StaleResult`]) or a size limit ([`Error::Capacity`]) leaves the graph and
/// every result as they were. A failure inside an engine (a device or internal error) leaves
/// the graph as it was and the results it had begun to change refused as stale from then on.
///
/// ```
/// use dyng::{update, Batch, Csr, ErrorKind, Graph, MospOptions, MospResult, Resources, SsspOptions, SsspResult};
///
/// let mut g = Graph::new(Csr::from_edges(3, 2, &[0, 1], &[1, 2], &[1, 1, 1, 1])?);
/// let res = Resources::sequential();
/// let mut tree = SsspResult::compute(&res, &g, 0, 1, &SsspOptions::default())?;
/// let mut mosp = MospResult::compute(&res, &g, 0, &MospOptions::default())?;
///
/// // Vertex 7 does not exist: the batch is refused and nothing changes.
/// let mut bad = Batch::new(2);
/// bad.insert(0, 2, &[1, 1]);
/// bad.delete(7, 0);
/// let err = update(&res, &mut g, &bad.view(), &mut [(&mut tree).into(), (&mut mosp).into()]).unwrap_err();
/// assert_eq!(err.kind(), ErrorKind::InvalidArgument);
/// assert_eq!(err.kind().code(), 2); // DYNG_ERR_INVALID_ARGUMENT in the C ABI
/// assert_eq!((g.version(), g.m()), (0, 2));
/// assert_eq!(tree.distances(), [0, 1, 2]);
///
/// // The same results take the corrected batch.
/// let mut good = Batch::new(2);
/// good.insert(0, 2, &[1, 1]);
/// let stats = update(&res, &mut g, &good.view(), &mut [(&mut tree).into(), (&mut mosp).into()])?;
/// assert_eq!(stats.len(), 2);
/// assert_eq!(tree.distances(), [0, 1, 1]);
/// assert_eq!(mosp.path_to(2)?, [0, 2]);
/// assert_eq!((g.version(), tree.graph_version(), mosp.graph_version()), (1, 1, 1));
/// # Ok::<(), dyng::Error>(())
/// ```
pub fn update(
    res: &Resources,
    graph: &mut Graph,
    batch: &BatchView<'_>,
    results: &mut [ResultMut<'_>],
) -> Result<Vec<UpdateStats>> {
    update_timed(res, graph, batch, results).map(|(stats, _)| stats)
}

/// [`update`], also reporting where the time went.
///
/// ```
/// use dyng::{update_timed, Batch, Csr, Graph, Resources, SsspOptions, SsspResult};
///
/// let mut g = Graph::new(Csr::from_edges(2, 1, &[0], &[1], &[4])?);
/// let res = Resources::sequential();
/// let mut tree = SsspResult::compute(&res, &g, 0, 0, &SsspOptions::default())?;
/// let mut b = Batch::new(1);
/// b.insert(0, 1, &[2]); // 0 -> 1 gets lighter
/// let (stats, timings) = update_timed(&res, &mut g, &b.view(), &mut [(&mut tree).into()])?;
/// assert_eq!(tree.distances(), [0, 2]);
/// assert_eq!(stats[0].affected, 1);
/// // Nanoseconds of the apply, of the preparation and of the engine run.
/// let _total_ns = timings.apply_ns + timings.prepare_ns + stats[0].elapsed_ns;
/// # Ok::<(), dyng::Error>(())
/// ```
pub fn update_timed(
    res: &Resources,
    graph: &mut Graph,
    batch: &BatchView<'_>,
    results: &mut [ResultMut<'_>],
) -> Result<(Vec<UpdateStats>, UpdateTimings)> {
    let (n, kg) = (graph.n(), graph.k());
    batch.validate(n, kg)?;
    for (i, r) in results.iter().enumerate() {
        check_current(i, r.graph_state(), graph)?;
    }
    let mut facts: Vec<Option<ObjectiveFacts>> = (0..kg).map(|_| None).collect();
    for r in results.iter() {
        for j in r.objectives() {
            if facts[j].is_none() {
                let f = objective_facts(&mut *graph, batch, j);
                Packing::choose(n, f.max_weight)?;
                facts[j] = Some(f);
            }
        }
        if let ResultMut::Mosp(m) = r {
            Packing::choose(n, m.prefs.base())?;
        }
    }
    let original_m = graph.m().max(1);
    // The rows the batch changes as they are now, where a tree's check waits for an update
    // that would recompute it: the check reads the graph before the batch.
    let unchecked = |t: &SsspResult| t.canonical == Canonical::Unchecked;
    let before = results
        .iter()
        .any(|r| match r {
            ResultMut::Sssp(t) => unchecked(t),
            ResultMut::Mosp(m) => m.trees.iter().any(unchecked),
        })
        .then(|| RowsBefore::of(&graph.rows(), batch));

    let clock = std::time::Instant::now();
    graph.apply_uncommitted(batch)?;
    let mut timings = UpdateTimings {
        apply_ns: clock.elapsed().as_nanos() as u64,
        ..Default::default()
    };
    let mut done = 0;
    let outcome = update_results(res, graph, batch, before.as_ref(), results, &facts, original_m, &mut timings, &mut done);
    match outcome {
        Ok(stats) => {
            // A commit may compact the rows: part of the apply's cost.
            let clock = std::time::Instant::now();
            graph.commit();
            timings.apply_ns += clock.elapsed().as_nanos() as u64;
            for r in results.iter_mut() {
                r.set_version(graph.version());
            }
            Ok((stats, timings))
        }
        Err(e) => {
            graph.undo();
            for r in results[..done].iter_mut() {
                r.set_version(POISONED);
            }
            Err(e)
        }
    }
}

/// The engines' part of an update, on the graph with the batch applied: every result's trees,
/// then the MOSP results' combined trees and path costs. `done` counts the results that may have
/// changed so far.
#[allow(clippy::too_many_arguments)]
fn update_results(
    res: &Resources,
    graph: &Graph,
    batch: &BatchView<'_>,
    before: Option<&RowsBefore>,
    results: &mut [ResultMut<'_>],
    facts: &[Option<ObjectiveFacts>],
    original_m: usize,
    timings: &mut UpdateTimings,
    done: &mut usize,
) -> Result<Vec<UpdateStats>> {
    let clock = std::time::Instant::now();
    let n = graph.n();
    // What the engines read besides the graph's rows: the CUDA engine the graph's device mirror,
    // brought up to date once for all results (the rows the batch changed).
    let device = res.device().prepare(graph)?;
    let mut lists = res.workspaces().lease(ChangedLists::default);
    let mut ws = lease_workspace(res, n);
    let had_in_rows = graph.keeps_in_rows();
    let ctx = Ctx { res, graph, device: &device, batch, before, masks: graph.increase_masks(), facts, original_m, in_rows_ns: AtomicU64::new(0) };
    timings.prepare_ns = clock.elapsed().as_nanos() as u64;
    let mut all_stats = Vec::with_capacity(results.len());
    let trees = std::time::Instant::now();
    for r in results.iter_mut() {
        *done += 1;
        let stats = match r {
            ResultMut::Sssp(s) => ctx.update_tree(s, &mut ws, &mut lists)?,
            ResultMut::Mosp(m) => {
                m.touched.clear();
                let pool = side_by_side_pool(res, m.trees.len());
                let mut listed = true;
                for i in 0..m.trees.len() {
                    // The first tree's repair tells whether the others' go side by side.
                    if let Some(pool) = pool.filter(|_| i == 1 && worth_side_by_side(&m.trees[0].stats)) {
                        timings.side_by_side = true;
                        listed = ctx.update_trees_side_by_side(pool, &mut m.trees[1..], &mut m.touched, listed, &mut ws, &mut lists)?;
                        break;
                    }
                    listed &= ctx.update_tree_listing(&mut m.trees[i], &mut ws, &mut lists)?;
                    if listed {
                        m.touched.extend(touched_by(&ws));
                    }
                }
                m.touched_listed = listed;
                UpdateStats::sum(m.trees.iter().map(|t| &t.stats))
            }
        };
        all_stats.push(stats);
    }
    let in_rows_ns = ctx.in_rows_ns.load(Relaxed);
    timings.trees_ns = (trees.elapsed().as_nanos() as u64).saturating_sub(in_rows_ns);
    timings.prepare_ns += in_rows_ns;
    if !had_in_rows && graph.has_in_rows() {
        res.workspaces().note_growth();
    }
    for r in results.iter_mut() {
        if let ResultMut::Mosp(m) = r {
            m.recombine(res, graph, &mut ws, Some(batch))?;
        }
    }
    ws.give_back();
    lists.give_back();
    Ok(all_stats)
}

/// The pool whose threads may repair a MOSP result's trees after the first side by side, each
/// tree on one thread: a parallel engine of 2 threads or more, and K = 3 or more (with two, the
/// second tree alone would be left). Whether they do is told by the first tree's repair
/// ([`worth_side_by_side`]).
fn side_by_side_pool(res: &Resources, k: usize) -> Option<&rayon::ThreadPool> {
    let pool = res.thread_pool()?;
    (k > 2 && pool.current_num_threads() > 1).then_some(pool)
}

/// The vertices whose parents the repair just run on `ws` changed, where it listed them (the
/// combine step's input).
fn touched_by(ws: &Workspace) -> impl Iterator<Item = i32> + '_ {
    (0..ws.candidates.len()).map(|i| ws.candidates.get(i))
}

/// Whether the trees after one repaired as `first` was go side by side. Its repair was long
/// enough for the others' to pay for waking a pool thread (100-500 us on a shared VM): its walk,
/// pull and expansions came to [`SIDE_BY_SIDE_WORK`]; a small batch's repairs are often a few
/// microseconds. And it was a repair: a recompute runs as a team's Delta-stepping on bins,
/// which gains more from the threads than trees side by side. A repair gains less from a team,
/// whether its rounds are narrow (a local batch) or it reaches most of the graph, which one
/// member repairs on the static solve's ring (`dyng mosp` at 2 threads, the K trees: usroads
/// s531-local2k 0.78x, the 1000^2 grid's local10k 0.70x; usroads safe10k and unsafe10k from
/// vertex 0, whose repairs meet every vertex, 0.70-0.85x).
fn worth_side_by_side(first: &UpdateStats) -> bool {
    // The steps whose visits are random accesses: the walk, the pull and the search (the pack
    // and the write-back may count a streaming pass over every vertex).
    let v = &first.visits;
    let work = (first.pushes + v.invalidate + v.pull) as usize;
    !first.fallback_used && work >= SIDE_BY_SIDE_WORK
}

/// The work of a first repair past which the trees after it go side by side: about 2 ms of
/// repair on road networks and grids. Below, a pool thread's wake-up and the two threads'
/// contention for the caches took what the second thread gave (the 1000^2 grid's 10-change
/// batches, about 0.7 ms and 8K of this work a tree: 1.04-1.12x in three alternating pairs).
const SIDE_BY_SIDE_WORK: usize = 4 * MIN_WORK;

/// A MOSP result's trees, shared by the threads of [`Ctx::update_trees_side_by_side`], each tree
/// reached by one of them.
struct Trees(*mut SsspResult, usize);

// SAFETY: each tree is reached by one thread only (`Trees::get`), and an `SsspResult` may move
// between threads.
unsafe impl Sync for Trees {}

impl Trees {
    fn len(&self) -> usize {
        self.1
    }

    /// Tree `i` (below `len`).
    ///
    /// # Safety
    /// No other reference to tree `i` may be alive, and the slice it came from must outlive the
    /// one returned (`side_by_side` returns when every member has).
    #[allow(clippy::mut_from_ref)]
    unsafe fn get(&self, i: usize) -> &mut SsspResult {
        debug_assert!(i < self.1);
        // SAFETY: in bounds, and unique by the caller's promise.
        unsafe { &mut *self.0.add(i) }
    }
}

/// The per-objective changed-edge lists of one update (pooled): all deletions (batch order,
/// duplicates kept), then every insertion whose mask has the objective's bit.
#[derive(Default)]
struct ChangedLists {
    from: Vec<i32>,
    to: Vec<i32>,
}

impl PooledWorkspace for ChangedLists {
    fn bytes(&self) -> usize {
        4 * (self.from.capacity() + self.to.capacity())
    }
}

impl ChangedLists {
    fn fill(&mut self, batch: &BatchView<'_>, masks: &[u64], j: usize) {
        self.from.clear();
        self.to.clear();
        self.from.extend_from_slice(batch.del_src);
        self.to.extend_from_slice(batch.del_dst);
        for (i, &mask) in masks.iter().enumerate() {
            if mask >> j & 1 == 1 {
                self.from.push(batch.ins_src[i]);
                self.to.push(batch.ins_dst[i]);
            }
        }
    }
}

struct Ctx<'a> {
    res: &'a Resources,
    graph: &'a Graph,
    device: &'a Prepared<'a>,
    batch: &'a BatchView<'a>,
    /// The rows the batch changed, as they were, where a tree's check waits (`Canonical::Unchecked`).
    before: Option<&'a RowsBefore>,
    masks: &'a [u64],
    facts: &'a [Option<ObjectiveFacts>],
    original_m: usize,
    /// Time spent making the graph's in-rows, or finding a repair's in-edges without them
    /// (preparation, not an objective's engine time).
    in_rows_ns: AtomicU64,
}

impl Ctx<'_> {
    /// Repairs `trees` on the pool's threads side by side (see [`side_by_side_pool`]): of m
    /// threads, thread i takes trees i, i + m, ..., with its own workspace and lists (the calling
    /// thread, thread 0, with `ws` and `lists`), and appends the vertices whose parents its trees
    /// changed to `touched` (the combine step sorts them). Fixed shares keep what each workspace
    /// grows to the same from one update to the next, so that a steady state allocates nothing.
    /// Returns whether every tree listed them; the first error of a tree, in the trees' order, is
    /// returned once all have run.
    fn update_trees_side_by_side(
        &self,
        pool: &rayon::ThreadPool,
        trees: &mut [SsspResult],
        touched: &mut Vec<i32>,
        listed: bool,
        ws: &mut Workspace,
        lists: &mut ChangedLists,
    ) -> Result<bool> {
        let listed = AtomicBool::new(listed);
        let touched = parking_lot::Mutex::new(touched);
        let failed: parking_lot::Mutex<Option<(usize, Error)>> = parking_lot::Mutex::new(None);
        let caller = parking_lot::Mutex::new((ws, lists));
        let trees = Trees(trees.as_mut_ptr(), trees.len());
        let members = pool.current_num_threads().min(trees.len());
        // Repairs a member's trees; false if one failed (its workspace may be dirty).
        let run = |member: usize, ws: &mut Workspace, lists: &mut ChangedLists| -> bool {
            let mut ok = true;
            for i in (member..trees.len()).step_by(members) {
                // SAFETY: each index is one member's.
                let t = unsafe { trees.get(i) };
                match self.update_tree_listing(t, ws, lists) {
                    Ok(true) if listed.load(Relaxed) => touched.lock().extend(touched_by(ws)),
                    Ok(_) => listed.store(false, Relaxed),
                    Err(e) => {
                        ok = false;
                        let mut f = failed.lock();
                        if f.as_ref().is_none_or(|(j, _)| i < *j) {
                            *f = Some((i, e));
                        }
                    }
                }
            }
            ok
        };
        crate::sssp::exec::side_by_side(pool, members, |member| {
            if member == 0 {
                let mut c = caller.lock();
                let (ws, lists) = &mut *c;
                run(0, ws, lists);
            } else {
                let mut ws = lease_workspace(self.res, self.graph.n());
                let mut lists = self.res.workspaces().lease(ChangedLists::default);
                if run(member, &mut ws, &mut lists) {
                    ws.give_back();
                    lists.give_back();
                }
            }
        });
        match failed.into_inner() {
            Some((_, e)) => Err(e),
            None => Ok(listed.into_inner()),
        }
    }

    /// [`Ctx::update_tree`] for a MOSP result's tree: returns whether the repair listed the
    /// vertices whose parents it changed ([`touched_by`]).
    fn update_tree_listing(&self, t: &mut SsspResult, ws: &mut Workspace, lists: &mut ChangedLists) -> Result<bool> {
        ws.touched_listed = false;
        self.update_tree(t, ws, lists)?;
        Ok(ws.touched_listed)
    }

    fn update_tree(&self, t: &mut SsspResult, ws: &mut Workspace, lists: &mut ChangedLists) -> Result<UpdateStats> {
        let j = t.objective;
        let f = self.facts[j]
            .as_ref()
            .ok_or_else(|| Error::Internal("objective facts missing".into()))?;
        let n = self.graph.n();
        let delta = t
            .delta
            .unwrap_or_else(|| default_delta(self.original_m, n, f.weight_sum));
        lists.fill(self.batch, self.masks, j);
        let b = self.batch;
        let changes = Changes {
            from: &lists.from,
            to: &lists.to,
            heads: b.ins_dst,
            inserted: Some(crate::sssp::run::Inserted {
                from: b.ins_src,
                weights: b.ins_weights,
                stride: b.k,
                column: j,
            }),
        };
        let started = std::time::Instant::now();
        // Time this tree's run spent on in-edges (see `in_rows_ns`).
        let took = std::cell::Cell::new(0);
        let dist = Arc::make_mut(&mut t.dist);
        let parent = Arc::make_mut(&mut t.parent);
        let set = crate::resources::device::ChangeSet {
            from: changes.from,
            to: changes.to,
            heads: changes.heads,
        };
        let tree = (&mut dist[..], &mut parent[..], &mut t.largest);
        let found = std::cell::Cell::new(None);
        let (stats, solved) = self.device.update(self.res, j, set, t.source, delta, f.max_weight, tree, |(dist, parent, largest)| {
            let rows = self.graph.rows();
            let in_rows = || {
                // The reference's pull, over in-rows in the candidates' order, gives the
                // originals' counters: it makes them whatever the graph's setting.
                if !runs_reference(self.res) && !self.graph.makes_in_rows() && !self.graph.keeps_in_rows() {
                    return engine::InEdges::Scan(&took);
                }
                let clock = std::time::Instant::now();
                let made = self.graph.has_in_rows();
                let v = view(&with_exec!(self.res, |e| self.graph.in_store_on(e)).rows(), j);
                if !made {
                    took.set(took.get() + clock.elapsed().as_nanos() as u64);
                }
                engine::InEdges::Rows(v)
            };
            // A tree not checked yet is checked on the graph before the batch, if the update
            // would recompute it.
            let before = self.before.filter(|_| t.canonical == Canonical::Unchecked);
            let policy = t.fallback.policy(n, t.canonical == Canonical::Yes || before.is_some(), t.static_pushes, t.delta.is_none().then(|| graph_delta(self.graph, j)));
            let check = |dist: &[i64], parent: &[i32]| {
                let yes = before.is_some_and(|b| with_exec!(self.res, |e| is_canonical_before(e, &rows, b, j, t.source, dist, parent)));
                found.set(Some(yes));
                yes
            };
            with_exec!(self.res, |e| engine::update(
                e,
                view(&rows, j),
                in_rows,
                changes,
                t.source,
                delta,
                f.max_weight,
                policy,
                before.is_some().then_some(&check as engine::CanonicalCheck<'_>),
                engine::OldTree::Trusted,
                ws,
                dist,
                parent,
                largest
            ))
        })?;
        if solved.is_some() {
            t.static_pushes = solved;
        }
        // A recomputed tree is canonical; a repaired one is if the old one was.
        t.canonical = match (found.get(), stats.fallback_used) {
            (_, true) => Canonical::Yes,
            (Some(false), _) => Canonical::No,
            _ => t.canonical,
        };
        // In-rows made during this run are preparation.
        let made = took.get();
        self.in_rows_ns.fetch_add(made, Relaxed);
        t.stats = UpdateStats {
            elapsed_ns: (started.elapsed().as_nanos() as u64).saturating_sub(made),
            ..stats
        };
        Ok(t.stats)
    }
}

/// Convenience: update a single result (an [`SsspResult`] or a [`MospResult`]), as [`update`].
///
/// ```
/// use dyng::{update_one, Batch, Csr, Graph, Resources, SsspOptions, SsspResult, WeightLayout};
///
/// // A 3 x 3 grid (vertex y * 3 + x), weights in [1, 9].
/// let t = dyng::io::generators::graphgen::grid(3, 3, 1, 1, 9, 42)?;
/// let mut g = Graph::new(Csr::from_arrays(t.n, t.k, t.row_ptr, t.col_ind, &t.weights, WeightLayout::EdgeMajor)?);
/// let res = Resources::sequential();
/// let opt = SsspOptions::default();
/// let mut tree = SsspResult::compute(&res, &g, 0, 0, &opt)?;
///
/// // Close 0 -> 1 and open a shortcut 0 -> 8 of weight 1.
/// let mut b = Batch::new(1);
/// b.delete(0, 1);
/// b.insert(0, 8, &[1]);
/// let stats = update_one(&res, &mut g, &b.view(), &mut tree)?;
/// assert_eq!((tree.distances()[8], tree.parents()[8]), (1, 0));
/// assert!(stats.affected >= 1);
///
/// // The updated tree is the one a recompute of the new state gives.
/// let fresh = SsspResult::compute(&res, &g, 0, 0, &opt)?;
/// assert_eq!((tree.distances(), tree.parents()), (fresh.distances(), fresh.parents()));
/// # Ok::<(), dyng::Error>(())
/// ```
pub fn update_one<'a>(
    res: &Resources,
    graph: &mut Graph,
    batch: &BatchView<'_>,
    result: impl Into<ResultMut<'a>>,
) -> Result<UpdateStats> {
    let mut rs = [result.into()];
    Ok(update(res, graph, batch, &mut rs)?[0])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::{Batch, Csr};
    use crate::sssp::{Fallback, SsspOptions};

    /// A path 0 -> 1 -> ... -> n-1 (weight 1) plus the edge 0 -> n-1 (weight n).
    fn path(n: usize) -> Graph {
        let mut src: Vec<i32> = (0..n as i32 - 1).collect();
        let mut dst: Vec<i32> = (1..n as i32).collect();
        let mut w = vec![1; n - 1];
        src.push(0);
        dst.push(n as i32 - 1);
        w.push(n as i32);
        Graph::new(Csr::from_edges(n, 1, &src, &dst, &w).unwrap())
    }

    /// Whether the update built the reverse graph: only a repair pulls in-edges.
    fn builds_in_edges(policy: Fallback) -> (bool, bool) {
        let res = Resources::sequential();
        let mut g = path(10_000);
        let opt = SsspOptions { fallback: policy, ..Default::default() };
        let mut r = SsspResult::compute(&res, &g, 0, 0, &opt).unwrap();
        let mut b = Batch::new(1);
        b.insert(5, 7, &[1]);
        let s = update(&res, &mut g, &b.view(), &mut [(&mut r).into()]).unwrap();
        let (d, p) = crate::graph::dijkstra::dijkstra(&g, 0, 0);
        assert_eq!((r.distances(), r.parents()), (&d[..], &p[..]));
        (s[0].fallback_used, g.has_in_rows())
    }

    #[test]
    fn the_reverse_graph_is_built_only_for_a_repair() {
        assert_eq!(builds_in_edges(Fallback::Never), (false, true));
        assert_eq!(builds_in_edges(Fallback::Always), (true, false));
    }

    /// A graph that keeps no in-rows has a parallel engine's repair find its in-edges by a pass
    /// over the out-rows: none are made, the trees are those of a repair that pulls over the
    /// in-rows, and the pass visits every vertex. The reference still makes them: its pull, in
    /// the candidates' order, gives the originals' counters, which are checked unchanged.
    #[test]
    fn a_repair_without_in_rows_equals_one_with_them() {
        use crate::io::generators::changegen::{generate_changes, ChangeOptions};
        let t = crate::io::generators::graphgen::grid(40, 40, 2, 1, 30, 5).unwrap();
        let csr = Csr::from_arrays(t.n, t.k, t.row_ptr, t.col_ind, &t.weights, crate::WeightLayout::EdgeMajor).unwrap();
        for res in [Resources::sequential(), Resources::parallel(1).unwrap(), Resources::parallel(3).unwrap()] {
            let reference = runs_reference(&res);
            let opt = SsspOptions { fallback: Fallback::Never, ..Default::default() };
            let (mut kept, mut scanned) = (Graph::new(csr.clone()), Graph::new(csr.clone()));
            scanned.keep_in_rows(false);
            let mut a = SsspResult::compute(&res, &kept, 0, 1, &opt).unwrap();
            let mut b = SsspResult::compute(&res, &scanned, 0, 1, &opt).unwrap();
            for step in 0..6u32 {
                let change = ChangeOptions { changes: [20, 200][step as usize % 2], seed: 60 + step, ..Default::default() };
                let (batch, _) = generate_changes(&kept.to_csr(), &change).unwrap();
                let sa = update_one(&res, &mut kept, &batch.view(), &mut a).unwrap();
                let sb = update_one(&res, &mut scanned, &batch.view(), &mut b).unwrap();
                assert_eq!((a.distances(), a.parents()), (b.distances(), b.parents()), "step {step}");
                let (d, p) = crate::graph::dijkstra::dijkstra(&scanned, 1, 0);
                assert_eq!((b.distances(), b.parents()), (&d[..], &p[..]), "step {step}");
                assert!(sa.invalidated > 0, "step {step}: a repair with something to pull");
                assert_eq!((sa.invalidated, sa.affected), (sb.invalidated, sb.affected), "step {step}");
                if reference {
                    assert_eq!(sa, UpdateStats { elapsed_ns: sa.elapsed_ns, ..sb }, "step {step}: the originals' counters");
                } else {
                    assert_eq!(sb.visits.pull, sa.visits.pull + scanned.n() as i64, "step {step}: the pass over every vertex, counted");
                }
            }
            assert!(kept.has_in_rows());
            assert_eq!(scanned.has_in_rows() || scanned.keeps_in_rows(), reference);
        }
    }

    /// At two threads a search runs as a team or on one member, by `TeamChoice`: forced either
    /// way, a static solve and a stream of repairs give the same trees (those of Dijkstra), and
    /// the expansions show which way ran (the one-member bucket queues expand each vertex once,
    /// a team's bins and near-far some of them again).
    #[test]
    fn a_team_and_one_member_give_the_same_trees() {
        use crate::io::generators::changegen::{generate_changes, ChangeOptions};
        let t = crate::io::generators::graphgen::grid(70, 70, 1, 1, 100, 3).unwrap();
        let csr = Csr::from_arrays(t.n, t.k, t.row_ptr, t.col_ind, &t.weights, crate::WeightLayout::EdgeMajor).unwrap();
        let res = Resources::parallel(2).unwrap();
        let mut runs = Vec::new();
        for solo in [false, true] {
            res.team_choice().force(Some(solo));
            let mut g = Graph::new(csr.clone());
            let opt = SsspOptions { fallback: Fallback::Never, ..Default::default() };
            let mut r = SsspResult::compute(&res, &g, 0, 0, &opt).unwrap();
            let static_pushes = r.stats().pushes;
            let (mut trees, mut repair_pushes) = (Vec::new(), 0);
            for step in 0..12u32 {
                let change = ChangeOptions { changes: [30, 300, 3000][step as usize % 3], seed: 40 + step, local_hops: if step % 2 == 0 { 6 } else { 0 }, ..Default::default() };
                let (batch, _) = generate_changes(&g.to_csr(), &change).unwrap();
                repair_pushes += update_one(&res, &mut g, &batch.view(), &mut r).unwrap().pushes;
                let (d, p) = crate::graph::dijkstra::dijkstra(&g, 0, 0);
                assert_eq!((r.distances(), r.parents()), (&d[..], &p[..]), "step {step}, solo {solo}");
                trees.push((d, p));
            }
            runs.push((static_pushes, repair_pushes, trees));
        }
        res.team_choice().force(None);
        assert!(runs[0].0 > 4900 && runs[1].0 == 4900, "static solves: a team's bins, then one member");
        assert!(runs[1].1 < runs[0].1, "repairs: the bucket queue on one member {} < near-far {}", runs[1].1, runs[0].1);
        assert_eq!(runs[0].2, runs[1].2);
    }

    /// A repair that the sample (not a quick walk) lets go on, and that it expects to search
    /// fewer vertices than a search is timed for, runs on one member: never timed, such searches
    /// would otherwise run as a team for good on a handle that has timed no team repair yet.
    #[test]
    fn a_small_repair_past_the_quick_walk_runs_on_one_member() {
        use crate::mosp::{MospOptions, MospResult};
        use std::sync::atomic::Ordering::Relaxed;
        let side = 250;
        let t = crate::io::generators::graphgen::grid(side, side, 3, 1, 100, 5).unwrap();
        let mut g = Graph::new(Csr::from_arrays(t.n, t.k, t.row_ptr, t.col_ind, &t.weights, crate::WeightLayout::EdgeMajor).unwrap());
        let quick = crate::sssp::engine::Adaptive::quick_changes_of(g.n());
        let res = Resources::parallel(2).unwrap();
        let opt = MospOptions::default();
        let mut m = MospResult::compute(&res, &g, 0, &opt).unwrap();
        // Every tree edge into the 16 x 16 corner farthest from the source, heavier by `raise`
        // in every objective: more changes than the quick walk takes, whose subtrees stay
        // near the corner.
        for raise in [3, 1, 7] {
            let mut b = Batch::new(3);
            for v in (side - 16..side).flat_map(|y| (side - 16..side).map(move |x| y * side + x)) {
                let p = m.tree(0).parents()[v] as usize;
                let e = g.rows().first_edge(p, v as i32).unwrap();
                let w: Vec<i32> = (0..3).map(|j| g.rows().column(j)[e] + raise).collect();
                b.insert(p as i32, v as i32, &w);
            }
            assert!(b.view().ins_dst.len() > quick);
            let teams = res.team_choice().team_repairs.load(Relaxed);
            update(&res, &mut g, &b.view(), &mut [(&mut m).into()]).unwrap();
            for s in m.objective_stats() {
                assert!(!s.fallback_used && (s.pushes as usize) < MIN_WORK && s.visits.predict > 0, "raise {raise}: {s:?}");
            }
            assert_eq!(res.team_choice().team_repairs.load(Relaxed), teams, "raise {raise}: a team ran");
            let fresh = MospResult::compute(&res, &g, 0, &opt).unwrap();
            assert_eq!(m.combined_parents(), fresh.combined_parents(), "raise {raise}");
            assert_eq!(m.path_costs(), fresh.path_costs(), "raise {raise}");
        }
    }

    /// The largest distance a result keeps for the shortcut rule is, whenever it is known, the
    /// tree's largest finite distance, through a stream of repairs and recomputes (deletions
    /// that cut vertices off, shortcuts that lower the farthest ones).
    #[test]
    fn a_known_largest_distance_is_the_trees_largest() {
        use crate::io::generators::changegen::{generate_changes, ChangeOptions};
        let t = crate::io::generators::graphgen::grid(70, 70, 1, 1, 100, 7).unwrap();
        let csr = Csr::from_arrays(t.n, t.k, t.row_ptr, t.col_ind, &t.weights, crate::WeightLayout::EdgeMajor).unwrap();
        for threads in [1, 2] {
            let res = Resources::parallel(threads).unwrap();
            let mut g = Graph::new(csr.clone());
            let opt = SsspOptions { fallback: Fallback::Adaptive, ..Default::default() };
            let mut r = SsspResult::compute(&res, &g, 0, 0, &opt).unwrap();
            let truth = |r: &SsspResult| r.distances().iter().copied().filter(|&d| d != crate::distance::DISTANCE_INF).max();
            assert_eq!(r.largest, truth(&r));
            let (mut known_after_repair, mut repairs) = (0, 0);
            for step in 0..40u32 {
                let change = ChangeOptions {
                    changes: [20, 200, 2000][step as usize % 3],
                    seed: 100 + step,
                    safe: step % 4 == 0,
                    local_hops: if step % 2 == 0 { 8 } else { 0 },
                    source: 0,
                    ..Default::default()
                };
                let (batch, _) = generate_changes(&g.to_csr(), &change).unwrap();
                let s = update_one(&res, &mut g, &batch.view(), &mut r).unwrap();
                if let Some(l) = r.largest {
                    assert_eq!(Some(l), truth(&r), "step {step}, {threads} threads");
                }
                if !s.fallback_used {
                    repairs += 1;
                    known_after_repair += r.largest.is_some() as usize;
                }
            }
            // Repairs keep it known unless they lower the vertex that had it.
            assert!(repairs >= 10 && known_after_repair * 2 > repairs, "{known_after_repair} of {repairs}");
        }
    }

    /// A vertex of `t` (a canonical tree of objective 0 of `g`) with a tight in-neighbour of a
    /// higher id than its parent, both in `keep`, and that neighbour.
    fn second_tight_parent(g: &Graph, t: &SsspResult, keep: &[bool]) -> (usize, i32) {
        let rows = g.rows();
        let (d, p) = (t.distances(), t.parents());
        let weight = |u: usize, v: usize| rows.heads()[rows.row(u)].iter().zip(&rows.column(0)[rows.row(u)]).find(|(&h, _)| h as usize == v).map(|(_, &w)| w as i64);
        (0..g.n())
            .filter(|&v| keep[v] && p[v] >= 0)
            .find_map(|v| (0..g.n()).find(|&u| keep[u] && u as i32 > p[v] && weight(u, v).is_some_and(|w| d[u] + w == d[v])).map(|u| (v, u as i32)))
            .expect("a grid with weights of 1 and 2 has ties")
    }

    /// The check of an adopted tree waits for the update that would recompute it, and reads the
    /// graph before the batch: a canonical tree is recomputed, then known canonical; a tree that
    /// is not is repaired, keeping its tie choices where the batch does not reach, and so is
    /// known not to be.
    #[test]
    fn an_unchecked_tree_is_recomputed_only_if_it_was_canonical() {
        let t = crate::io::generators::graphgen::grid(70, 70, 1, 1, 2, 3).unwrap();
        let csr = Csr::from_arrays(t.n, t.k, t.row_ptr, t.col_ind, &t.weights, crate::WeightLayout::EdgeMajor).unwrap();
        assert!(t.n >= crate::sssp::ADAPTIVE_MIN_VERTICES);
        let opt = SsspOptions { fallback: Fallback::AdaptiveCounted, ..Default::default() };
        for res in [Resources::sequential(), Resources::parallel(2).unwrap()] {
            let g0 = Graph::new(csr.clone());
            let fresh = SsspResult::compute(&res, &g0, 0, 0, &opt).unwrap();
            // The source's heavier tree edge reweighted: its subtree, about half of the tree,
            // is invalidated, enough for the update to recompute a tree it may recompute.
            let p = fresh.parents();
            let child = (0..g0.n()).filter(|&v| p[v] == 0).max_by_key(|&c| (0..g0.n()).filter(|&v| crate::sssp::tree_path(p, 0, v).is_ok_and(|path| path.contains(&(c as i32)))).count()).unwrap();
            let below: Vec<bool> = (0..g0.n()).map(|v| crate::sssp::tree_path(p, 0, v).is_ok_and(|path| path.contains(&(child as i32)))).collect();
            let keep: Vec<bool> = below.iter().map(|&b| !b).collect();
            let (v, u) = second_tight_parent(&g0, &fresh, &keep);
            let mut moved = p.to_vec();
            moved[v] = u;
            let mut b = Batch::new(1);
            b.insert(0, child as i32, &[20]);
            for (parents, canonical) in [(p.to_vec(), true), (moved, false)] {
                let (mut g, mut g2) = (g0.clone(), g0.clone());
                let mut r = SsspResult::from_arrays_unverified(&res, &g, 0, 0, fresh.distances().to_vec(), parents.clone(), false, 20, &opt).unwrap();
                assert!(!r.is_canonical(), "not known before an update needs it");
                let mut checked = SsspResult::from_arrays(&g2, 0, 0, fresh.distances().to_vec(), parents, false, &opt).unwrap();
                assert_eq!(checked.is_canonical(), canonical);
                let s = update_one(&res, &mut g, &b.view(), &mut r).unwrap();
                let s2 = update_one(&res, &mut g2, &b.view(), &mut checked).unwrap();
                assert_eq!(s.fallback_used, canonical, "recomputed iff canonical ({} threads)", res.threads());
                assert_eq!((r.distances(), r.parents()), (checked.distances(), checked.parents()));
                assert_eq!((s.fallback_used, s.invalidated), (s2.fallback_used, s2.invalidated));
                assert_eq!(r.is_canonical(), canonical, "known after the update that asked");
                if !canonical {
                    assert_eq!(r.parents()[v], u, "the repair keeps the tie choice");
                }
            }
        }
    }

    /// A batch that raises the weights of the first tree's edges into four vertices of `g` (a
    /// 250 x 250 grid, from vertex 0), which reroutes about a tenth of the tree without
    /// recomputing it, and the batch that sets them back.
    fn raise_and_restore(g: &Graph, tree: &SsspResult) -> (Batch, Batch) {
        let (mut raise, mut restore) = (Batch::new(g.k()), Batch::new(g.k()));
        let rows = g.rows();
        for v in [5020usize, 5021, 15070, 15071] {
            let u = tree.parents()[v] as usize;
            let e = rows.row(u).find(|&e| rows.heads()[e] as usize == v).unwrap();
            let old: Vec<i32> = (0..g.k()).map(|j| rows.column(j)[e]).collect();
            raise.insert(u as i32, v as i32, &old.iter().map(|w| w + 50).collect::<Vec<_>>());
            restore.insert(u as i32, v as i32, &old);
        }
        (raise, restore)
    }

    /// Past a first tree whose local repair did some 20K vertices' work, the trees are repaired
    /// side by side, each thread with its own workspace: the trees are a fresh MOSP result's, and
    /// a steady state (repairs side by side and in turn) allocates nothing. The searches are
    /// forced onto one member, whose structures then grow the same way from one update to the
    /// next (a team's probes would grow its bins at pseudo-random updates).
    #[test]
    fn trees_repaired_side_by_side_allocate_nothing_in_steady_state() {
        use crate::mosp::{MospOptions, MospResult};
        let t = crate::io::generators::graphgen::grid(250, 250, 3, 1, 20, 7).unwrap();
        let mut g = Graph::new(Csr::from_arrays(t.n, t.k, t.row_ptr, t.col_ind, &t.weights, crate::WeightLayout::EdgeMajor).unwrap());
        let res = Resources::parallel(2).unwrap();
        res.team_choice().force(Some(true));
        let opt = MospOptions::default();
        let mut m = MospResult::compute(&res, &g, 0, &opt).unwrap();
        let (raise, restore) = raise_and_restore(&g, m.tree(0));
        let step = |g: &mut Graph, m: &mut MospResult| {
            for b in [&raise, &restore] {
                let (_, timings) = update_timed(&res, g, &b.view(), &mut [m.into()]).unwrap();
                // The raise's first repair walks, pulls and expands 7K vertices each, the
                // restore's expands 7K.
                assert_eq!(timings.side_by_side, std::ptr::eq(b, &raise));
                let fresh = MospResult::compute(&res, g, 0, &opt).unwrap();
                for j in 0..3 {
                    assert_eq!(m.tree(j).parents(), fresh.tree(j).parents(), "tree {j}");
                }
                assert_eq!(m.combined_parents(), fresh.combined_parents());
                assert_eq!(m.path_costs(), fresh.path_costs());
            }
        };
        for _ in 0..2 {
            step(&mut g, &mut m);
        }
        let counters = res.workspaces().counters();
        let bytes = res.workspace_bytes();
        for _ in 0..8 {
            step(&mut g, &mut m);
        }
        let after = res.workspaces().counters();
        assert_eq!(after.created, counters.created, "no new workspace in steady state");
        assert_eq!(after.grown, counters.grown, "no workspace growth in steady state");
        assert_eq!(after.discarded, 0);
        assert_eq!(res.workspace_bytes(), bytes);
        // The calling thread's SSSP workspace and change lists, the second thread's, and the
        // combine scratch.
        assert_eq!(res.workspaces().idle_count(), 2 * 2 + 1);
        res.team_choice().force(None);
    }

    /// A first tree recomputed leaves the trees one after the other (a team's bins gain more on
    /// a static solve); a first repair that expands more than half the vertices has them go side
    /// by side, as a local one does.
    #[test]
    fn trees_after_a_recompute_go_one_after_the_other_and_after_a_wide_repair_side_by_side() {
        use crate::mosp::{MospOptions, MospResult};
        let t = crate::io::generators::graphgen::grid(120, 120, 3, 1, 20, 7).unwrap();
        let csr = Csr::from_arrays(t.n, t.k, t.row_ptr, t.col_ind, &t.weights, crate::WeightLayout::EdgeMajor).unwrap();
        let res = Resources::parallel(2).unwrap();
        for fallback in [Fallback::Never, Fallback::Always] {
            let mut g = Graph::new(csr.clone());
            let opt = MospOptions { fallback, ..Default::default() };
            let mut m = MospResult::compute(&res, &g, 0, &opt).unwrap();
            // Both edges out of the source, heavier: every other vertex's path changes.
            let mut b = Batch::new(3);
            for v in [1, 120] {
                b.insert(0, v, &[500, 500, 500]);
            }
            let (_, timings) = update_timed(&res, &mut g, &b.view(), &mut [(&mut m).into()]).unwrap();
            let first = &m.tree(0).stats;
            match fallback {
                Fallback::Never => assert!(first.pushes as usize > g.n() / 2 && !first.fallback_used && timings.side_by_side),
                _ => assert!(first.fallback_used && !timings.side_by_side),
            }
            let fresh = MospResult::compute(&res, &g, 0, &opt).unwrap();
            assert_eq!(m.combined_parents(), fresh.combined_parents());
        }
    }
}
