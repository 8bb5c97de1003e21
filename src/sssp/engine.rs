//! The SSSP engine: static solve and dynamic update with near-far (Delta-stepping) propagation.
//!
//! One implementation for every host backend, generic over an [`Exec`]: with `Sequential` it is
//! the readable reference whose counters reproduce the original single-threaded program; with
//! `Parallel` the same steps run on rayon. The result is the canonical tree (exact distances,
//! lowest-id parent among tight in-neighbours) whatever the schedule, because the packed word's
//! order is (distance, parent) and every tight edge from a changed vertex is offered to its head.
//!
//! Update steps (reference-behaviour §3): pack the old tree; roots (heads of changed tree edges);
//! invalidate their subtrees (detecting parent cycles); add insertion heads; pull every candidate's
//! best in-edge; propagate with near/far piles; unpack.

use super::buckets::{bucket_search, ring_size};
use super::exec::{Exec, Team};
use super::packing::{Packing, PACKED_INF};
use super::predict::{predict_affected, Question};
use super::prefetch::{prefetch, prefetch_at, AHEAD};
use super::stats::UpdateStats;
use super::team_choice::SearchKind;
use super::workspace::{Appender, VertexList, Workspace};
use crate::error::{Error, Result};
use crate::DISTANCE_INF;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicI64, AtomicU64, AtomicUsize, Ordering::Relaxed};

/// One objective's out-edges with one weight column: row u is `bounds[s u]..bounds[s u + 1]` of
/// `col`/`w`, for the stride s. A CSR passes its `row_ptr` (stride 1); the combined graph a MOSP
/// result keeps passes (start, end) pairs (stride 2), its rows having room to grow between them
/// (`mosp::combined_graph`). Either way a row's two bounds share a cache line.
#[derive(Clone, Copy)]
pub(crate) struct OutView<'a> {
    pub bounds: &'a [i32],
    pub stride: usize,
    pub n: usize,
    pub col: &'a [i32],
    pub w: &'a [i32],
    /// Edges in the rows (`col.len()` for a CSR).
    pub edges: usize,
}

impl<'a> OutView<'a> {
    pub(crate) fn csr(row_ptr: &'a [i32], col: &'a [i32], w: &'a [i32]) -> Self {
        OutView {
            bounds: row_ptr,
            stride: 1,
            n: row_ptr.len().saturating_sub(1),
            col,
            w,
            edges: col.len(),
        }
    }

    pub(crate) fn n(&self) -> usize {
        self.n
    }

    #[inline(always)]
    pub(crate) fn row(&self, u: usize) -> std::ops::Range<usize> {
        let i = u * self.stride;
        let b = &self.bounds[i..i + 2];
        b[0] as usize..b[1] as usize
    }
}

/// One objective's in-edges (the reverse CSR with the same weight column).
#[derive(Clone, Copy)]
pub(crate) struct InView<'a> {
    pub row_ptr: &'a [i32],
    pub tails: &'a [i32],
    pub w: &'a [i32],
}

/// What changed for one objective: possible roots (deleted or heavier edges, batch order) and the
/// heads of all insertions (with their tails and weights when the caller has them).
#[derive(Clone, Copy, Default)]
pub(crate) struct Changes<'a> {
    pub from: &'a [i32],
    pub to: &'a [i32],
    pub heads: &'a [i32],
    pub inserted: Option<Inserted<'a>>,
}

/// The tails and this objective's weights of the insertions whose heads are `Changes::heads`.
#[derive(Clone, Copy)]
pub(crate) struct Inserted<'a> {
    pub from: &'a [i32],
    /// Edge-major: insertion `i` has this objective's weight at `i * stride + column`.
    pub weights: &'a [i32],
    pub stride: usize,
    pub column: usize,
}

const GRAIN_VERTICES: usize = 4096;
const GRAIN_LIST: usize = 64;

const _: () = assert!(std::mem::align_of::<AtomicI64>() == std::mem::align_of::<i64>());
const _: () = assert!(std::mem::align_of::<AtomicI32>() == std::mem::align_of::<i32>());

fn atomic_i64(s: &mut [i64]) -> &[AtomicI64] {
    // SAFETY: AtomicI64 has the size and (asserted above) alignment of i64, and the exclusive borrow
    // guarantees no other access to the slice while the atomic view lives.
    unsafe { &*(s as *mut [i64] as *const [AtomicI64]) }
}

fn atomic_i32(s: &mut [i32]) -> &[AtomicI32] {
    // SAFETY: as in `atomic_i64`, for i32.
    unsafe { &*(s as *mut [i32] as *const [AtomicI32]) }
}

#[inline]
pub(crate) fn is_finite(d: i64) -> bool {
    d < DISTANCE_INF / 2
}

/// The parameters shared by the steps of one run.
pub(super) struct Run<'a, E: Exec> {
    pub(super) exec: &'a E,
    pub(super) out: OutView<'a>,
    pub(super) source: usize,
    delta: u64,
    pub(super) packing: Packing,
}

impl<'a, E: Exec> Run<'a, E> {
    /// Chooses the packing, sizes the workspace and starts the stats of one run.
    fn prepare(
        exec: &'a E,
        out: OutView<'a>,
        source: usize,
        delta: i64,
        max_weight: i64,
        ws: &mut Workspace,
    ) -> Result<(Self, UpdateStats)> {
        let n = out.n();
        let packing = Packing::choose(n, max_weight)?;
        ws.reserve(n);
        ws.touched_listed = false;
        let stats = UpdateStats {
            packed_parents: packing.packed_parents(),
            ..Default::default()
        };
        let delta = delta as u64;
        Ok((Run { exec, out, source, delta, packing }, stats))
    }
}

/// Static solve from `source` (used for a fresh SSSP result and for the combined graph).
/// Returns the stats and the tree's largest finite distance.
#[allow(clippy::too_many_arguments)]
pub(crate) fn compute<E: Exec>(
    exec: &E,
    out: OutView<'_>,
    source: usize,
    delta: i64,
    max_weight: i64,
    ws: &mut Workspace,
    dist: &mut [i64],
    parent: &mut [i32],
) -> Result<(UpdateStats, i64)> {
    let n = out.n();
    check_run_args(n, source, delta, dist.len(), parent.len())?;
    let (run, mut stats) = Run::prepare(exec, out, source, delta, max_weight, ws)?;
    let mut gens = Generations(ws.generation);
    let shared: &Workspace = ws;
    solve_from_source(&run, shared, &mut gens, &mut stats);
    let (affected, largest) = unpack(&run, shared, &mut gens, dist, parent);
    stats.affected = affected as i64;
    ws.generation = gens.0;
    Ok((stats, largest))
}

/// The static search: every word INF but the source's, then near-far from the source.
fn solve_from_source<E: Exec>(run: &Run<'_, E>, ws: &Workspace, gens: &mut Generations, stats: &mut UpdateStats) {
    let n = run.out.n();
    run.exec.for_chunks(n, GRAIN_VERTICES, |r| {
        for v in r {
            ws.packed[v].store(PACKED_INF, Relaxed);
        }
    });
    ws.packed[run.source].store(run.packing.pack(0, -1), Relaxed);
    ws.frontier.clear();
    ws.frontier.push(run.source as i32);
    near_far(run, ws, gens, stats, None, false, SearchKind::Static, None);
}

/// How far the engine may trust the old tree it is given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum OldTree {
    /// A result's own tree: rooted, acyclic and made of edges of the graph (validated when it was
    /// computed or adopted, kept so by every update), updated by a batch whose vertex ids were
    /// validated. Invalidation then walks down from the roots only, and the write-back visits only
    /// the vertices the search touched.
    Trusted,
    /// Caller-owned arrays (the drop-in entry point): every vertex is walked up to a resolved one,
    /// which also detects parent cycles, and every vertex is written back.
    Unchecked,
}

/// When the adaptive update recomputes instead of repairing (see `Fallback::Adaptive`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Adaptive {
    /// Candidates (invalidated vertices plus insertion heads) from which to recompute at once.
    pub recompute_at: usize,
    /// Recompute when some insertion lowers a distance by more than this share of the largest
    /// old distance, from a tail that keeps its distance. Checked by the prediction, so only
    /// with `predict_share` and for a result's own tree (`OldTree::Trusted`).
    pub shortcut: Option<f64>,
    /// Expansions after which a repair is abandoned for a recompute.
    pub push_budget: i64,
    /// Recompute when `predict_affected` finds at least this share: at once, before any walk,
    /// unless `exact_count`.
    pub predict_share: Option<f64>,
    /// Walk the invalidated subtrees even when recomputing, for an exact `invalidated`.
    pub exact_count: bool,
    /// Recompute with this Delta, the updated graph's default (for a result with no Delta of its
    /// own), instead of the run's.
    pub fresh_delta: Option<i64>,
}

/// Dynamic update: on entry `dist`/`parent` hold the tree of the old graph, on return the tree of
/// the updated graph described by `out` and the in-edges `inn` gives (asked for only by a
/// repair, when it pulls: a recompute needs no reverse graph).
///
/// `adaptive`: when to restart the search from the source instead. Only valid for a canonical old
/// tree: the static search yields the canonical tree, which the update also yields from a
/// canonical input, so the result is bit-identical either way. Returns the stats and, when a
/// static solve ran, its expansions.
///
/// `largest`: on entry the old tree's largest finite distance if known (the shortcut rule then
/// needs no pass over the distances), on return the new tree's if known.
#[allow(clippy::too_many_arguments)]
pub(crate) fn update<'i, E: Exec>(
    exec: &E,
    out: OutView<'_>,
    inn: impl FnOnce() -> InView<'i>,
    changes: Changes<'_>,
    source: usize,
    delta: i64,
    max_weight: i64,
    adaptive: Option<Adaptive>,
    old_tree: OldTree,
    ws: &mut Workspace,
    dist: &mut [i64],
    parent: &mut [i32],
    largest: &mut Option<i64>,
) -> Result<(UpdateStats, Option<i64>)> {
    let n = out.n();
    check_run_args(n, source, delta, dist.len(), parent.len())?;
    if old_tree == OldTree::Unchecked {
        check_changes(n, changes.from, changes.to, changes.heads)?;
    } else {
        // A result's update lists the changes of a batch validated before it was applied.
        debug_assert!(check_changes(n, changes.from, changes.to, changes.heads).is_ok());
    }
    let (run, mut stats) = Run::prepare(exec, out, source, delta, max_weight, ws)?;
    let mut gens = Generations(ws.generation);
    let shared: &Workspace = ws;
    // The old tree's largest distance, once known (given, or taken by the shortcut rule).
    let old_largest = std::cell::Cell::new(*largest);
    let touched_listed = std::cell::Cell::new(false);
    // The search's expansions when it recomputed, and the new tree's largest distance if known.
    let result = (|| -> Result<(Option<i64>, Option<i64>)> {
        let ws = shared;
        let recompute = |stats: &mut UpdateStats, gens: &mut Generations, dist: &mut [i64], parent: &mut [i32]| {
            exec.loops_inline(false);
            stats.fallback_used = true;
            let before = stats.pushes;
            // The Delta a fresh solve of the updated graph takes, so that falling back costs
            // what a recompute costs: a repair keeps the old graph's Delta (the originals'
            // counters depend on it), which a large batch can move far (bremen safe50k: 25 %
            // more expansions).
            let delta = match adaptive {
                Some(Adaptive { fresh_delta: Some(d), .. }) => d as u64,
                _ => run.delta,
            };
            let run = Run { delta, ..run };
            solve_from_source(&run, ws, gens, stats);
            let (affected, largest) = unpack(&run, ws, gens, dist, parent);
            stats.affected = affected as i64;
            (Some(stats.pushes - before), Some(largest))
        };
        // Insertion heads counted as candidates by the policy: all of them, or the improving ones
        // when the prediction found them.
        let mut heads = changes.heads.len();
        let mut predicted = false;
        // Whether a recompute may still follow the exact walk: then the walk also follows the
        // valid side, to stop early when most of the tree is invalidated.
        let mut may_recompute = adaptive.is_some();
        // The prediction listed the invalidation roots in `candidates` already.
        let mut roots_listed = false;
        if let (Some(a @ Adaptive { predict_share: Some(share), .. }), OldTree::Trusted) = (adaptive, old_tree) {
            let largest = || match old_largest.get() {
                Some(l) => l,
                None => {
                    let l = largest_distance(exec, dist);
                    old_largest.set(Some(l));
                    l
                }
            };
            let q = Question {
                ws,
                changes: &changes,
                source,
                dist,
                parent,
                enough: a.recompute_at,
                share,
                shortcut: a.shortcut,
                largest: &largest,
                largest_known: old_largest.get().is_some(),
            };
            let p = predict_affected(&q, &mut gens);
            heads = p.improving_heads;
            roots_listed = p.roots_listed;
            predicted = p.recompute(share);
            may_recompute = predicted || !p.informative;
            if predicted && !a.exact_count {
                // The walk that would count the invalidated vertices exactly costs up to half a
                // recompute when both sides of the cut are large (usroads safe1k: 54K vertices
                // invalidated, 75K valid); the sampled estimate stands in for it.
                stats.invalidated = p.invalidated;
                return Ok(recompute(&mut stats, &mut gens, dist, parent));
            }
        }
        // Where the sample has chosen to repair, the search's way is chosen before the walk,
        // so that a walk whose search will run on one member runs on the calling thread too
        // (see below). In a slow phase of the host, where the choice takes one member, the
        // walk handed to the pool cost more than inline: usroads local 50K at 2 threads,
        // rounds of the two binaries interleaved, 60 each: invalidation 1.66 -> 1.15 ms,
        // update 0.88-0.91x; in a fast phase within 3 % either way. (Session 10 tried asking
        // before every walk, min of 7 rounds, and saw no gain.)
        let early = (!may_recompute).then(|| {
            let solo = exec.solo(SearchKind::Repair, n, run.out.edges);
            exec.loops_inline(solo);
            solo
        });
        // Invalidation next: its count decides between repairing and recomputing, and a
        // recompute needs neither the packed old tree nor the candidate list. Invalidated
        // vertices leave it stamped `g0`.
        let g0 = gens.next(ws);
        if !roots_listed {
            ws.candidates.clear();
        }
        let mut invalidation = Invalidation::Listed(0);
        if !changes.from.is_empty() {
            invalidation = match old_tree {
                OldTree::Trusted => {
                    let gv = may_recompute.then(|| gens.next(ws));
                    invalidate_top_down(&run, ws, (!roots_listed).then_some(&changes), dist, parent, g0, gv)
                }
                OldTree::Unchecked => Invalidation::Listed(invalidate_bottom_up(&run, ws, &changes, parent, g0)?),
            };
            stats.invalidated = invalidation.count() as i64;
        }
        let candidates = stats.invalidated as usize + heads;
        if predicted || adaptive.is_some_and(|a| candidates >= a.recompute_at) {
            return Ok(recompute(&mut stats, &mut gens, dist, parent));
        }
        // A repair from here on. Its search's way is chosen now (or was, before the walk), and
        // where the search runs on one member the other loops of the repair run on the calling
        // thread too: they are smaller than the search, and a hand-off to the pool costs more
        // than they do.
        let solo = early.unwrap_or_else(|| exec.solo(SearchKind::Repair, n, run.out.edges));
        exec.loops_inline(solo);
        if let Invalidation::Counted { listed_up_to, .. } = invalidation {
            finish_invalidation(&run, ws, parent, g0, listed_up_to);
        }
        // The packing pass, which visits every vertex in order anyway, lists the invalidated
        // vertices again, in ascending id order (a parallel pass: in id order within each
        // chunk): the sequential reference's counters depend on that order, and the loops over
        // the list that follow (the pull, the write-back) read the arrays in order instead of
        // in the walk's order. Until session 11 parallel runs kept the walk's order; usroads
        // local 50K at 2 threads, the two interleaved, 60 rounds each, in a slow phase of the
        // host: pull 1.8-1.9 -> 1.2-1.3 ms, write-back 0.41-0.43 -> 0.26-0.27, packing
        // 0.52-0.54 -> 0.55-0.59, update 0.89-0.90x; local 10K 0.91x; the grid's local 10K
        // 0.94x (its packing 1.3 -> 1.9 ms, its pull 3.6 -> 2.7).
        ws.candidates.clear();
        pack_old_tree(&run, ws, dist, parent, g0)?;
        for (i, &v) in changes.heads.iter().enumerate() {
            prefetch_at(&ws.stamp, changes.heads, i + AHEAD);
            if v as usize != source && exec.claim(&ws.stamp[v as usize], g0) {
                ws.candidates.push(v);
            }
        }
        let track = old_tree == OldTree::Trusted && run.packing.packed_parents();
        if track {
            mark_touched(&run, ws);
        }
        let g1 = gens.next(ws);
        pull(&run, inn(), ws, g1);
        let budget = adaptive.map(|a| a.push_budget);
        let search = near_far(&run, ws, &mut gens, &mut stats, budget, track, SearchKind::Repair, Some(solo));
        if search == Search::Abandoned {
            if track {
                clear_touched(&run, ws);
            }
            return Ok(recompute(&mut stats, &mut gens, dist, parent));
        }
        let (affected, new_largest) = if track {
            touched_listed.set(true);
            unpack_touched(&run, ws, dist, parent, old_largest.get())
        } else {
            let (affected, l) = unpack(&run, ws, &mut gens, dist, parent);
            (affected, Some(l))
        };
        stats.affected = affected as i64;
        Ok((None, new_largest))
    })();
    exec.loops_inline(false);
    ws.generation = gens.0;
    ws.touched_listed = touched_listed.get() && result.is_ok();
    *largest = None;
    let (solved, new_largest) = result?;
    *largest = new_largest;
    Ok((stats, solved))
}

pub(crate) fn check_run_args(n: usize, source: usize, delta: i64, dl: usize, pl: usize) -> Result<()> {
    if dl != n || pl != n {
        return Err(Error::invalid(format!(
            "dyng: distance and parent arrays have {dl} and {pl} entries, want n = {n}"
        )));
    }
    super::check_vertex("source", source, n)?;
    if delta <= 0 {
        return Err(Error::invalid(format!("dyng: delta = {delta} must be > 0")));
    }
    Ok(())
}

/// Checks a changed-edge list and the insertion heads against `n` (shared with the CUDA engine).
pub(crate) fn check_changes(n: usize, from: &[i32], to: &[i32], heads: &[i32]) -> Result<()> {
    if from.len() != to.len() {
        return Err(Error::invalid(format!(
            "dyng: {} changed-edge sources but {} targets",
            from.len(),
            to.len()
        )));
    }
    for (what, list) in [("changed source", from), ("changed target", to), ("insertion head", heads)] {
        if let Some(&v) = list.iter().find(|&&v| v < 0 || v as usize >= n) {
            return Err(Error::invalid(format!(
                "dyng: {what} vertex {v} is outside [0, n = {n})"
            )));
        }
    }
    Ok(())
}

/// Packs the old tree into words. Invalidated vertices (stamped `g0`) instead lose their word
/// and are appended to the candidates (in ascending id order on one thread, within each chunk
/// on several).
fn pack_old_tree<E: Exec>(
    run: &Run<'_, E>,
    ws: &Workspace,
    dist: &[i64],
    parent: &[i32],
    g0: i32,
) -> Result<()> {
    let bad = AtomicUsize::new(usize::MAX);
    let p = run.packing;
    let n = dist.len() as i64;
    // One pass over every vertex: zipped slices (no per-array bounds checks) and one branch for
    // the common case, a valid finite word (callgrind: 41 -> 29 instructions per vertex).
    run.exec.for_chunks(dist.len(), GRAIN_VERTICES, |r| {
        let mut cand = Appender::new(&ws.candidates);
        let rows = dist[r.clone()].iter().zip(&parent[r.clone()]);
        let slots = ws.stamp[r.clone()].iter().zip(&ws.packed[r.clone()]);
        for (v, ((&d, &par), (stamp, slot))) in r.zip(rows.zip(slots)) {
            let word = if stamp.load(Relaxed) == g0 {
                cand.push(v as i32);
                PACKED_INF
            } else if (par as i64) < n && par >= -1 && (d as u64) <= p.bound {
                p.pack(d as u64, par)
            } else if !is_finite(d) && (par as i64) < n && par >= -1 {
                PACKED_INF
            } else {
                bad.fetch_min(v, Relaxed);
                PACKED_INF
            };
            slot.store(word, Relaxed);
        }
    });
    match bad.load(Relaxed) {
        usize::MAX => Ok(()),
        v => Err(Error::invalid(format!(
            "dyng: an input distance exceeds (n - 1) * maxWeight, is negative, or its parent is out of range: distance[{v}] = {}, parent[{v}] = {} (bound {}, n = {}); does the tree belong to this graph?",
            dist[v], parent[v], p.bound, dist.len()
        ))),
    }
}

/// The largest finite distance of `dist`.
fn largest_distance<E: Exec>(exec: &E, dist: &[i64]) -> i64 {
    exec.max_over(dist.len(), |v| if is_finite(dist[v]) { dist[v] as u64 } else { 0 }) as i64
}

/// The invalidation roots of a change list, with repeats: heads of changed edges that were their
/// tree edge in `parent`. `marks` is the array the caller marks the roots in: its lines are
/// asked for ahead with `parent`'s (see `prefetch`).
fn roots<'a, T>(c: &'a Changes<'_>, parent: &'a [i32], marks: &'a [T]) -> impl Iterator<Item = usize> + 'a {
    let to = &c.to[..c.from.len()];
    (0..to.len()).filter_map(move |i| {
        prefetch_at(parent, to, i + AHEAD);
        prefetch_at(marks, to, i + AHEAD);
        (parent[to[i] as usize] == c.from[i]).then_some(to[i] as usize)
    })
}

/// Top-down invalidation of a trusted tree. The invalidated vertices are the roots (heads of
/// changed edges that were their tree edge) and their old subtrees; they are found breadth-first,
/// stamped `g0` and listed in `candidates`. The children of `u` are the out-neighbours `x` with
/// `parent[x] == u`: a tree edge no longer in the graph was deleted, so its head is a root itself.
///
/// When most of the tree is invalidated, walking it costs as much as the recompute that will
/// follow, so a second search walks the *valid* tree down from the source (stopping at roots,
/// stamped `gv`, listed in `frontier`) and the two advance alternately, the smaller first: if the
/// valid walk ends first, the count is the reachable vertices minus the valid ones, and the
/// invalidated ones are listed only if the caller goes on to repair (`finish_invalidation`).
/// Either way the work is about twice the smaller side's out-degrees, never a pass over all
/// vertices but one sequential count of the reachable ones.
///
/// The roots are found by a pass over `changes`, or, without them, are those `candidates` lists
/// already (the prediction's marking listed them).
///
/// Without `gv` only the invalidated side is walked: when no recompute can follow (no adaptive
/// policy) or the sample has already chosen to repair, every invalidated vertex must be listed
/// anyway, and the valid walk would only double the work (usroads local 10K: 27,766 invalidated
/// vertices, and as many valid ones walked beside them).
fn invalidate_top_down<E: Exec>(
    run: &Run<'_, E>,
    ws: &Workspace,
    changes: Option<&Changes<'_>>,
    dist: &[i64],
    parent: &[i32],
    g0: i32,
    gv: Option<i32>,
) -> Invalidation {
    if let Some(c) = changes {
        let mut listed = Appender::new(&ws.candidates);
        for to in roots(c, parent, &ws.stamp) {
            if run.exec.claim(&ws.stamp[to], g0) {
                listed.push(to as i32);
            }
        }
    } else {
        // Distinct already: each is stamped, none is claimed twice.
        for i in 0..ws.candidates.len() {
            if i + AHEAD < ws.candidates.len() {
                prefetch(&ws.stamp[ws.candidates.get(i + AHEAD) as usize]);
            }
            ws.stamp[ws.candidates.get(i) as usize].store(g0, Relaxed);
        }
    }
    let Some(gv) = gv else {
        finish_invalidation(run, ws, parent, g0, 0);
        return Invalidation::Listed(ws.candidates.len());
    };
    ws.frontier.clear();
    if dist[run.source] == 0 {
        ws.stamp[run.source].store(gv, Relaxed);
        ws.frontier.push(run.source as i32);
    }
    let (mut invalid_at, mut valid_at) = (0, 0);
    loop {
        if invalid_at == ws.candidates.len() {
            return Invalidation::Listed(invalid_at);
        }
        if valid_at == ws.frontier.len() {
            let reachable = run.exec.sum_over(dist.len(), |v| is_finite(dist[v]) as usize);
            return Invalidation::Counted { count: reachable - valid_at, listed_up_to: invalid_at };
        }
        if ws.candidates.len() <= ws.frontier.len() {
            invalid_at = tree_level(run, ws, &ws.candidates, invalid_at, parent, g0, None);
        } else {
            valid_at = tree_level(run, ws, &ws.frontier, valid_at, parent, gv, Some(g0));
        }
    }
}

/// How far `invalidate_top_down` got.
#[derive(Clone, Copy)]
enum Invalidation {
    /// Every invalidated vertex is stamped and listed.
    Listed(usize),
    /// The count is exact, but only the vertices before `listed_up_to` have had their children
    /// listed.
    Counted { count: usize, listed_up_to: usize },
}

impl Invalidation {
    fn count(self) -> usize {
        match self {
            Invalidation::Listed(c) | Invalidation::Counted { count: c, .. } => c,
        }
    }
}

/// Lists the invalidated subtrees from entry `at` of the candidates on (the rest after a
/// `Counted` invalidation, or all of them from the roots).
fn finish_invalidation<E: Exec>(run: &Run<'_, E>, ws: &Workspace, parent: &[i32], g0: i32, mut at: usize) {
    while at < ws.candidates.len() {
        at = tree_level(run, ws, &ws.candidates, at, parent, g0, None);
    }
}

/// Expands one level of a top-down tree walk: the children of `list[from..]` (as it was on entry)
/// are claimed with stamp `g` and appended, except vertices stamped `stop`. Returns where the
/// next level starts.
fn tree_level<E: Exec>(
    run: &Run<'_, E>,
    ws: &Workspace,
    list: &VertexList,
    from: usize,
    parent: &[i32],
    g: i32,
    stop: Option<i32>,
) -> usize {
    let out = run.out;
    let end = list.len();
    // A level is latency-bound (two random reads per edge); splitting one across the pool only
    // pays off for wide levels, and a deep tree has thousands of narrow ones.
    let grain = if end - from < GRAIN_VERTICES { usize::MAX } else { GRAIN_LIST * 16 };
    run.exec.for_chunks(end - from, grain, |r| {
        let mut next = Appender::new(list);
        for i in r {
            let u = list.get(from + i);
            let row = out.row(u as usize);
            for &x in &out.col[row] {
                let stamp = &ws.stamp[x as usize];
                if parent[x as usize] == u
                    && (stop.is_none() || stop != Some(stamp.load(Relaxed)))
                    && run.exec.claim(stamp, g)
                {
                    next.push(x);
                }
            }
        }
    });
    end
}

/// Bottom-up invalidation of caller-owned arrays: every vertex is resolved by walking up its
/// parents (detecting cycles); the invalidated ones are stamped `g0` and the states left unknown
/// again. Returns how many were invalidated.
fn invalidate_bottom_up<E: Exec>(run: &Run<'_, E>, ws: &Workspace, c: &Changes<'_>, parent: &[i32], g0: i32) -> Result<usize> {
    let n = parent.len();
    reset_states(run, ws, n);
    let roots = mark_roots(ws, c, parent);
    let walked = invalidate_subtrees(run, ws, parent);
    run.exec.for_chunks(n, GRAIN_VERTICES * 4, |r| {
        for v in r {
            if ws.state[v].load(Relaxed) == INVALID {
                ws.stamp[v].store(g0, Relaxed);
            }
            ws.state[v].store(UNKNOWN, Relaxed);
        }
    });
    Ok(roots + walked?)
}

/// The touched flags (`state` = 1) of the candidates: the write-back visits exactly the flagged
/// vertices, which it lists in `candidates` (see `relax_range`). All flags are 0 between runs.
fn mark_touched<E: Exec>(run: &Run<'_, E>, ws: &Workspace) {
    run.exec.for_chunks(ws.candidates.len(), GRAIN_VERTICES, |r| {
        for i in r {
            ws.state[ws.candidates.get(i) as usize].store(TOUCHED, Relaxed);
        }
    });
}

/// Clears the touched flags of a search that will not be written back from its list.
fn clear_touched<E: Exec>(run: &Run<'_, E>, ws: &Workspace) {
    run.exec.for_chunks(ws.candidates.len(), GRAIN_VERTICES, |r| {
        for i in r {
            ws.state[ws.candidates.get(i) as usize].store(UNKNOWN, Relaxed);
        }
    });
}

/// Flags `v` touched and lists it, once.
#[inline]
pub(super) fn touch<E: Exec>(run: &Run<'_, E>, ws: &Workspace, v: usize, touched: &mut Appender<'_>) {
    if ws.state[v].load(Relaxed) == UNKNOWN && run.exec.set_flag(&ws.state[v]) == UNKNOWN {
        touched.push(v as i32);
    }
}

/// Every vertex starts the invalidation walk unknown.
fn reset_states<E: Exec>(run: &Run<'_, E>, ws: &Workspace, n: usize) {
    run.exec.for_chunks(n, GRAIN_VERTICES * 4, |r| {
        for v in r {
            ws.state[v].store(UNKNOWN, Relaxed);
        }
    });
}

const UNKNOWN: u8 = 0;
const VALID: u8 = 1;
const INVALID: u8 = 2;
/// In a trusted update's search: the vertex's word may differ from the old tree's.
const TOUCHED: u8 = 1;

/// Marks the roots (see [`roots`]) invalid. Returns how many distinct roots there are.
fn mark_roots(ws: &Workspace, c: &Changes<'_>, parent: &[i32]) -> usize {
    let mut marked = 0;
    for to in roots(c, parent, &ws.state) {
        let state = &ws.state[to];
        if state.load(Relaxed) != INVALID {
            state.store(INVALID, Relaxed);
            marked += 1;
        }
    }
    marked
}

/// Resolves every vertex to valid or invalid by walking its parent path up to a resolved vertex
/// (path-compressing: the whole walked path takes the answer). A walk longer than n is a cycle.
/// Returns how many vertices it marked invalid (each is claimed once, so the count is exact with
/// any number of threads).
fn invalidate_subtrees<E: Exec>(run: &Run<'_, E>, ws: &Workspace, parent: &[i32]) -> Result<usize> {
    let n = parent.len();
    let cyclic = AtomicBool::new(false);
    let invalidated = AtomicUsize::new(0);
    run.exec.for_chunks(n, 1024, |r| {
        let mut local = 0;
        for v in r {
            if ws.state[v].load(Relaxed) != UNKNOWN || cyclic.load(Relaxed) {
                continue;
            }
            let mut u = v;
            let mut steps = 0usize;
            while ws.state[u].load(Relaxed) == UNKNOWN && parent[u] >= 0 && steps <= n {
                u = parent[u] as usize;
                steps += 1;
            }
            if steps > n {
                cyclic.store(true, Relaxed);
                continue;
            }
            let r = match ws.state[u].load(Relaxed) {
                UNKNOWN => VALID,
                s => s,
            };
            let mut u = v as i32;
            while u >= 0 && ws.state[u as usize].load(Relaxed) == UNKNOWN {
                if run.exec.resolve(&ws.state[u as usize], r) && r == INVALID {
                    local += 1;
                }
                u = parent[u as usize];
            }
        }
        invalidated.fetch_add(local, Relaxed);
    });
    if cyclic.load(Relaxed) {
        return Err(Error::invalid(
            "dyng: the input SOSP tree has a parent cycle".to_string(),
        ));
    }
    Ok(invalidated.into_inner())
}

/// Every candidate takes its best in-edge; a strict distance decrease puts it on the frontier.
fn pull<E: Exec>(run: &Run<'_, E>, inn: InView<'_>, ws: &Workspace, g1: i32) {
    let p = run.packing;
    ws.frontier.clear();
    run.exec.for_chunks(ws.candidates.len(), GRAIN_LIST, |r| {
        let mut frontier = Appender::new(&ws.frontier);
        for i in r {
            let v = ws.candidates.get(i) as usize;
            let cur = ws.packed[v].load(Relaxed);
            let mut best = cur;
            let row = inn.row_ptr[v] as usize..inn.row_ptr[v + 1] as usize;
            for (&u, &w) in inn.tails[row.clone()].iter().zip(&inn.w[row]) {
                let wu = ws.packed[u as usize].load(Relaxed);
                if wu == PACKED_INF {
                    continue;
                }
                let nd = p.dist(wu) + w as u64;
                if nd <= p.max_candidate {
                    best = best.min(p.pack(nd, u));
                }
            }
            if best < cur {
                let old = run.exec.fetch_min(&ws.packed[v], best);
                if p.dist(best) < p.dist(old) && run.exec.claim(&ws.stamp[v], g1) {
                    frontier.push(v as i32);
                }
            }
        }
    });
}

/// The smallest finite distance over a list's words (`None` if all are INF or the list is empty).
fn min_distance<E: Exec>(run: &Run<'_, E>, ws: &Workspace, list: &VertexList) -> Option<u64> {
    let m = run.exec.min_over(list.len(), |i| ws.packed[list.get(i) as usize].load(Relaxed));
    (m != PACKED_INF).then(|| run.packing.dist(m))
}

/// How a near-far search ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Search {
    Finished,
    /// Stopped when its expansions exceeded the budget; the far flags are cleared again.
    Abandoned,
}

/// The search from the frontier, on one member or as a team (`Exec::solo`, unless `chosen` says
/// how: a repair chooses before its other loops), timed for that choice when it finishes.
/// `kind`: what the search is; a repair is measured by the vertices it touched, which are listed
/// only when `track`.
#[allow(clippy::too_many_arguments)]
fn near_far<E: Exec>(
    run: &Run<'_, E>,
    ws: &Workspace,
    gens: &mut Generations,
    stats: &mut UpdateStats,
    push_budget: Option<i64>,
    track: bool,
    kind: SearchKind,
    chosen: Option<bool>,
) -> Search {
    if ws.frontier.is_empty() {
        return Search::Finished;
    }
    let (n, m) = (run.out.n(), run.out.edges);
    let solo = chosen.unwrap_or_else(|| run.exec.solo(kind, n, m));
    let clock = std::time::Instant::now();
    let end = search(run, ws, gens, stats, push_budget, track, solo);
    let work = match kind {
        SearchKind::Static => Some(n),
        SearchKind::Repair => track.then(|| ws.candidates.len()),
    };
    if let (Search::Finished, Some(work)) = (end, work) {
        run.exec.searched(kind, n, m, solo, clock.elapsed().as_nanos() as u64, work);
    }
    end
}

/// Delta-stepping with a near frontier and a far pile (reference-behaviour §3.8), or, on one
/// member of a non-reference executor, the bucket queue (`buckets.rs`) where it applies.
///
/// Run by a team: every member executes the same control flow on the same shared list lengths
/// (read after a barrier), so all agree on thresholds, generations and counters; work inside a
/// phase is shared by claiming chunks of the list. With one member the phases run in list order,
/// exactly the original single-threaded schedule.
fn search<E: Exec>(
    run: &Run<'_, E>,
    ws: &Workspace,
    gens: &mut Generations,
    stats: &mut UpdateStats,
    push_budget: Option<i64>,
    track: bool,
    solo: bool,
) -> Search {
    let n = run.out.n();
    let mut push_budget = push_budget;
    if solo && run.exec.bucket_queue() {
        if let Some(b) = ring_size(n, run.packing.max_weight()) {
            let before = stats.pushes;
            if let Some(end) = bucket_search(run, ws, b, stats, push_budget, track) {
                return end;
            }
            // Near-far finishes from the queued vertices, within what is left of the budget.
            push_budget = push_budget.map(|p| p - (stats.pushes - before));
        }
    }
    let threshold = min_distance(run, ws, &ws.frontier).unwrap_or(0).saturating_add(run.delta);
    let g = gens.next(ws);
    ws.near_a.clear();
    ws.near_b.clear();
    ws.far.clear();
    ws.far2.clear();
    split(run, ws, &ws.frontier, threshold, g, &ws.near_a, &ws.far, None);
    let shared = TeamShared {
        cursors: [AtomicUsize::new(0), AtomicUsize::new(0), AtomicUsize::new(0)],
        minimum: [AtomicU64::new(PACKED_INF), AtomicU64::new(PACKED_INF)],
        outcome: parking_lot::Mutex::new(None),
        solo: parking_lot::Mutex::new(None),
    };
    let start = TeamState {
        threshold,
        generation: g,
        iterations: 0,
        epochs: 0,
        pushes: 0,
        budget: push_budget.unwrap_or(i64::MAX),
        abandoned: false,
        far_is_second: false,
        near_len: ws.near_a.len(),
    };
    run.exec.team(solo, |team| team_near_far(run, ws, team, &shared, start, track));
    let end = shared
        .outcome
        .into_inner()
        .expect("member 0 of every team publishes the outcome");
    stats.iterations += end.iterations;
    stats.epochs += end.epochs;
    stats.pushes += end.pushes;
    gens.0 = end.generation;
    if !end.abandoned {
        return Search::Finished;
    }
    // Every flagged vertex is in the far pile exactly once: clearing them restores the invariant
    // that the flags are all zero between searches.
    let far = if end.far_is_second { &ws.far2 } else { &ws.far };
    for i in 0..far.len() {
        ws.in_far[far.get(i) as usize].store(0, Relaxed);
    }
    Search::Abandoned
}

/// What the members of a near-far team share besides the workspace.
struct TeamShared {
    /// Chunk cursors, used round-robin by the phases: the one a phase will use next is reset two
    /// phases after its last use, so no barrier is needed just to reset it.
    cursors: [AtomicUsize; 3],
    /// Minimum word over the far pile, alternating by epoch parity for the same reason.
    minimum: [AtomicU64; 2],
    /// Counters and generation published by member 0.
    outcome: parking_lot::Mutex<Option<TeamState>>,
    /// The state after member 0's solo rounds, and whether `near_a` is then the near list.
    solo: parking_lot::Mutex<Option<(TeamState, bool)>>,
}

/// Near lists shorter than this are relaxed by member 0 alone, round after round without
/// barriers, while the other members wait at one: two barriers per round cost more than a short
/// round (bremen, 40K vertices: 600 rounds of about 80 vertices, 1.2 us more per round at two
/// members than at one).
const SOLO_BELOW: usize = 4 * GRAIN_LIST;

/// Member 0's rounds while the near list stays below [`SOLO_BELOW`] (and is not empty): the team
/// loop's round, on one member; `near` and `next` end swapped as many times as it ran rounds.
#[allow(clippy::too_many_arguments)]
fn solo_rounds<'w, E: Exec>(
    run: &Run<'_, E>,
    ws: &'w Workspace,
    st: &mut TeamState,
    near: &mut &'w VertexList,
    next: &mut &'w VertexList,
    far: &'w VertexList,
    track: bool,
) {
    while st.near_len > 0 && st.near_len < SOLO_BELOW {
        if !st.start_round(near.len()) {
            return;
        }
        st.generation = Generations(st.generation).next(ws);
        {
            let mut next_app = Appender::new(next);
            let mut far_app = Appender::new(far);
            let mut touched = track.then(|| Appender::new(&ws.candidates));
            relax_range(run, ws, near, 0..near.len(), &mut next_app, &mut far_app, touched.as_mut(), st.threshold, st.generation);
        }
        std::mem::swap(near, next);
        next.clear();
        st.near_len = near.len();
    }
}

/// The control state every member keeps identically.
#[derive(Clone, Copy)]
struct TeamState {
    threshold: u64,
    generation: i32,
    iterations: i64,
    epochs: i64,
    pushes: i64,
    /// Expansions after which the search is abandoned.
    budget: i64,
    abandoned: bool,
    /// Which workspace list holds the far pile at the end (they swap every epoch).
    far_is_second: bool,
    /// The near list's length, read where no member can be changing it (between two barriers):
    /// member 0 may start solo rounds as soon as it leaves a barrier.
    near_len: usize,
}

impl TeamState {
    /// Counts a round over `len` near vertices; false, and abandoned, once the expansions have
    /// passed the budget.
    fn start_round(&mut self, len: usize) -> bool {
        if self.pushes > self.budget {
            self.abandoned = true;
            return false;
        }
        self.iterations += 1;
        self.pushes += len as i64;
        true
    }
}

/// With `track`, every vertex whose word the search lowers is flagged touched and listed in
/// `candidates` (the write-back list of a trusted update).
fn team_near_far<E: Exec>(run: &Run<'_, E>, ws: &Workspace, team: &Team<'_>, shared: &TeamShared, mut st: TeamState, track: bool) {
    let (mut near, mut next) = (&ws.near_a, &ws.near_b);
    let (mut far, mut far2) = (&ws.far, &ws.far2);
    let mut phase = 0usize;
    // Every phase: claim chunks from its cursor; member 0 resets the cursor of the phase after next.
    let end_phase = |phase: &mut usize| {
        if team.tid == 0 {
            shared.cursors[(*phase + 1) % 3].store(0, Relaxed);
        }
        *phase += 1;
        team.sync();
    };
    'search: loop {
        while st.near_len > 0 {
            if !team.is_alone() && st.near_len < SOLO_BELOW {
                // Nobody else touches the lists or the state until the barrier; member 0
                // publishes what it did, which the others read before the next barrier (the next
                // solo episode comes at least one barrier later).
                if team.tid == 0 {
                    solo_rounds(run, ws, &mut st, &mut near, &mut next, far, track);
                    *shared.solo.lock() = Some((st, std::ptr::eq(near, &ws.near_a)));
                }
                team.sync();
                if team.tid != 0 {
                    let (state, near_is_a) = shared.solo.lock().expect("member 0 published its solo rounds");
                    st = state;
                    (near, next) = if near_is_a { (&ws.near_a, &ws.near_b) } else { (&ws.near_b, &ws.near_a) };
                }
                if st.abandoned {
                    break 'search;
                }
                continue;
            }
            if !st.start_round(near.len()) {
                break 'search;
            }
            st.generation = next_generation_in_team(ws, team, st.generation);
            {
                let mut next_app = Appender::new(next);
                let mut far_app = Appender::new(far);
                let mut touched = track.then(|| Appender::new(&ws.candidates));
                while let Some(r) = team.claim(&shared.cursors[phase % 3], near.len(), GRAIN_LIST) {
                    relax_range(run, ws, near, r, &mut next_app, &mut far_app, touched.as_mut(), st.threshold, st.generation);
                }
            }
            end_phase(&mut phase);
            std::mem::swap(&mut near, &mut next);
            st.near_len = near.len();
            // The old near list is read by nobody now; it becomes the next round's output.
            if team.tid == 0 {
                next.clear();
            }
            team.sync();
        }
        if far.is_empty() {
            break;
        }
        st.epochs += 1;
        let slot = &shared.minimum[st.epochs as usize % 2];
        let mut local = PACKED_INF;
        while let Some(r) = team.claim(&shared.cursors[phase % 3], far.len(), GRAIN_VERTICES) {
            for i in r {
                local = local.min(ws.packed[far.get(i) as usize].load(Relaxed));
            }
        }
        slot.fetch_min(local, Relaxed);
        if team.tid == 0 {
            shared.minimum[(st.epochs as usize + 1) % 2].store(PACKED_INF, Relaxed);
        }
        end_phase(&mut phase);
        let m = slot.load(Relaxed);
        let far_min = if m == PACKED_INF { 0 } else { run.packing.dist(m) };
        st.threshold = st.threshold.max(far_min).saturating_add(run.delta);
        st.generation = next_generation_in_team(ws, team, st.generation);
        {
            let mut near_app = Appender::new(near);
            let mut far_app = Appender::new(far2);
            while let Some(r) = team.claim(&shared.cursors[phase % 3], far.len(), GRAIN_VERTICES) {
                split_range(run, ws, far, r, &mut near_app, &mut far_app, st.threshold, st.generation, true);
            }
        }
        end_phase(&mut phase);
        st.near_len = near.len();
        std::mem::swap(&mut far, &mut far2);
        st.far_is_second = !st.far_is_second;
        if team.tid == 0 {
            far2.clear();
        }
        team.sync();
    }
    if team.tid == 0 {
        *shared.outcome.lock() = Some(st);
    }
}

/// The next stamp generation, identical in every member; on overflow the stamps are reset by
/// member 0 between two barriers.
fn next_generation_in_team(ws: &Workspace, team: &Team<'_>, g: i32) -> i32 {
    if g != i32::MAX {
        return g + 1;
    }
    team.sync();
    if team.tid == 0 {
        for s in &ws.stamp {
            s.store(0, Relaxed);
        }
    }
    team.sync();
    1
}

/// The stamp generation counter of one run (written back to the workspace at the end).
pub(super) struct Generations(pub(super) i32);

impl Generations {
    /// The next generation; stamps are reset when the counter would overflow.
    pub(super) fn next(&mut self, ws: &Workspace) -> i32 {
        if self.0 == i32::MAX {
            for s in &ws.stamp {
                s.store(0, Relaxed);
            }
            self.0 = 0;
        }
        self.0 += 1;
        self.0
    }
}

/// Splits `list` into `near` (distance below the threshold, claimed) and the far pile.
#[allow(clippy::too_many_arguments)]
fn split<E: Exec>(
    run: &Run<'_, E>,
    ws: &Workspace,
    list: &VertexList,
    threshold: u64,
    g: i32,
    near: &VertexList,
    far_out: &VertexList,
    refile: Option<()>,
) {
    run.exec.for_chunks(list.len(), GRAIN_VERTICES, |r| {
        let mut near_app = Appender::new(near);
        let mut far_app = Appender::new(far_out);
        split_range(run, ws, list, r, &mut near_app, &mut far_app, threshold, g, refile.is_some());
    });
}

/// Splits entries `r` of `list`: below the threshold to `near` (claimed), else to the far pile.
/// For the far re-split (`refile`), vertices already flagged stay far without touching the flag.
#[allow(clippy::too_many_arguments)]
#[inline]
fn split_range<E: Exec>(
    run: &Run<'_, E>,
    ws: &Workspace,
    list: &VertexList,
    r: std::ops::Range<usize>,
    near: &mut Appender<'_>,
    far: &mut Appender<'_>,
    threshold: u64,
    g: i32,
    refile: bool,
) {
    let p = run.packing;
    for i in r {
        let v = list.get(i) as usize;
        let d = p.dist(ws.packed[v].load(Relaxed));
        if d < threshold {
            if refile {
                ws.in_far[v].store(0, Relaxed);
            }
            if run.exec.claim(&ws.stamp[v], g) {
                near.push(v as i32);
            }
        } else if refile || run.exec.set_flag(&ws.in_far[v]) == 0 {
            far.push(v as i32);
        }
    }
}

/// Expands entries `r` of the near list: relaxes their out-edges; strict improvements below the
/// threshold go to `next`, others to the far pile. With `touched`, a word lowered without a
/// distance decrease (a lower-id parent at the same distance) is listed there: such a vertex is
/// never expanded, so nothing else would list it for the write-back.
#[allow(clippy::too_many_arguments)]
#[inline]
fn relax_range<E: Exec>(
    run: &Run<'_, E>,
    ws: &Workspace,
    near: &VertexList,
    r: std::ops::Range<usize>,
    next: &mut Appender<'_>,
    far: &mut Appender<'_>,
    mut touched: Option<&mut Appender<'_>>,
    threshold: u64,
    g: i32,
) {
    let p = run.packing;
    let out = run.out;
    let source = run.source;
    for i in r {
        let u = near.get(i) as usize;
        let wu = ws.packed[u].load(Relaxed);
        if wu == PACKED_INF {
            continue;
        }
        if let Some(t) = touched.as_deref_mut() {
            touch(run, ws, u, t);
        }
        let du = p.dist(wu);
        let row = out.row(u);
        // Zipped row slices: one bounds check per row instead of two per edge.
        for (&x, &w) in out.col[row.clone()].iter().zip(&out.w[row]) {
            let x = x as usize;
            if x == source {
                continue;
            }
            let nd = du + w as u64;
            if nd > p.max_candidate {
                continue;
            }
            let cand = p.pack(nd, u as i32);
            if cand >= ws.packed[x].load(Relaxed) {
                continue;
            }
            let old = run.exec.fetch_min(&ws.packed[x], cand);
            if nd < p.dist(old) {
                if nd < threshold {
                    if run.exec.claim(&ws.stamp[x], g) {
                        next.push(x as i32);
                    }
                } else if run.exec.set_flag(&ws.in_far[x]) == 0 {
                    far.push(x as i32);
                }
            } else if cand < old {
                if let Some(t) = touched.as_deref_mut() {
                    touch(run, ws, x, t);
                }
            }
        }
    }
}

/// Writes back the words of the touched vertices (listed in `candidates`; every other word is
/// the old tree's) and clears their flags; returns how many vertices changed and the new tree's
/// largest finite distance where `old_largest`, the old tree's, tells it: the untouched
/// vertices keep their distances, so the largest is the old one or a touched vertex's new one,
/// unless a touched vertex held the old largest and lost it (then `None`).
fn unpack_touched<E: Exec>(
    run: &Run<'_, E>,
    ws: &Workspace,
    dist: &mut [i64],
    parent: &mut [i32],
    old_largest: Option<i64>,
) -> (usize, Option<i64>) {
    let p = run.packing;
    let changed = AtomicUsize::new(0);
    let (top, lost) = (AtomicI64::new(0), AtomicBool::new(false));
    let held = old_largest.unwrap_or(DISTANCE_INF);
    let dist_a = atomic_i64(dist);
    let parent_a = atomic_i32(parent);
    run.exec.for_chunks(ws.candidates.len(), GRAIN_VERTICES, |r| {
        let (mut local, mut local_top, mut local_lost) = (0, 0, false);
        let end = r.end;
        for i in r {
            // The list is in the order the walk and the search found the vertices, random in
            // memory: each entry's four lines are asked for ahead (usroads local 50K at 2
            // threads, 34K vertices in the walk's order: 0.55 -> 0.31 ms in a slow phase of the
            // host; in id order, as one thread lists them, no change).
            if i + AHEAD < end {
                let u = ws.candidates.get(i + AHEAD) as usize;
                prefetch(&ws.state[u]);
                prefetch(&ws.packed[u]);
                prefetch(&dist_a[u]);
                prefetch(&parent_a[u]);
            }
            let v = ws.candidates.get(i) as usize;
            ws.state[v].store(UNKNOWN, Relaxed);
            let w = ws.packed[v].load(Relaxed);
            let d = if w == PACKED_INF { DISTANCE_INF } else { p.dist(w) as i64 };
            local_lost |= dist_a[v].load(Relaxed) == held && (w == PACKED_INF || d < held);
            if w != PACKED_INF {
                local_top = local_top.max(d);
            }
            local += write_word(p, w, &dist_a[v], &parent_a[v]);
        }
        changed.fetch_add(local, Relaxed);
        top.fetch_max(local_top, Relaxed);
        if local_lost {
            lost.store(true, Relaxed);
        }
    });
    let largest = match old_largest {
        Some(l) if !lost.into_inner() => Some(l.max(top.into_inner())),
        _ => None,
    };
    (changed.into_inner(), largest)
}

/// Writes one packed word back as distance and parent; 1 if they changed, else 0.
#[inline]
fn write_word(p: Packing, w: u64, dist: &AtomicI64, parent: &AtomicI32) -> usize {
    let (d, par) = if w == PACKED_INF {
        (DISTANCE_INF, -1)
    } else {
        (p.dist(w) as i64, p.parent(w))
    };
    if dist.load(Relaxed) == d && parent.load(Relaxed) == par {
        return 0;
    }
    dist.store(d, Relaxed);
    parent.store(par, Relaxed);
    1
}

/// Writes the words back as distances and parents; returns how many vertices changed and the
/// largest finite distance (taken on the way: the loop reads every word anyway).
fn unpack<E: Exec>(
    run: &Run<'_, E>,
    ws: &Workspace,
    gens: &mut Generations,
    dist: &mut [i64],
    parent: &mut [i32],
) -> (usize, i64) {
    let p = run.packing;
    let n = dist.len();
    let changed = AtomicUsize::new(0);
    let largest = AtomicI64::new(0);
    let dist_a = atomic_i64(dist);
    let parent_a = atomic_i32(parent);
    if p.packed_parents() {
        run.exec.for_chunks(n, GRAIN_VERTICES, |r| {
            let (mut local, mut top) = (0, 0);
            for v in r {
                let w = ws.packed[v].load(Relaxed);
                // Words order by distance first, so the largest finite word has the largest
                // distance.
                if w != PACKED_INF {
                    top = top.max(w);
                }
                local += write_word(p, w, &dist_a[v], &parent_a[v]);
            }
            changed.fetch_add(local, Relaxed);
            largest.fetch_max(p.dist(top) as i64, Relaxed);
        });
        return (changed.into_inner(), largest.into_inner());
    }
    // Distance-only mode: parents are the lowest tight in-neighbours, found by offering every
    // tight edge to its head. The old parents are kept in the stamp array meanwhile (stamps are
    // reset afterwards, which the generation counter allows at any time).
    let source = run.source;
    run.exec.for_chunks(n, GRAIN_VERTICES, |r| {
        let (mut local, mut top) = (0, 0);
        for v in r {
            let w = ws.packed[v].load(Relaxed);
            let d = if w == PACKED_INF { DISTANCE_INF } else { w as i64 };
            if w != PACKED_INF {
                top = top.max(d);
            }
            if dist_a[v].load(Relaxed) != d {
                local += 1;
                ws.stamp[v].store(i32::MIN, Relaxed); // never equal to a parent: counted already
            } else {
                ws.stamp[v].store(parent_a[v].load(Relaxed), Relaxed);
            }
            dist_a[v].store(d, Relaxed);
            let none = w == PACKED_INF || v == source;
            parent_a[v].store(if none { -1 } else { i32::MAX }, Relaxed);
        }
        changed.fetch_add(local, Relaxed);
        largest.fetch_max(top, Relaxed);
    });
    let out = run.out;
    run.exec.for_chunks(n, GRAIN_VERTICES, |r| {
        for u in r {
            let wu = ws.packed[u].load(Relaxed);
            if wu == PACKED_INF {
                continue;
            }
            for e in out.row(u) {
                let x = out.col[e] as usize;
                if x != source && wu + out.w[e] as u64 == ws.packed[x].load(Relaxed) {
                    run.exec.fetch_min_i32(&parent_a[x], u as i32);
                }
            }
        }
    });
    run.exec.for_chunks(n, GRAIN_VERTICES, |r| {
        let mut local = 0;
        for v in r {
            let old = ws.stamp[v].swap(0, Relaxed);
            if old != i32::MIN && old != parent_a[v].load(Relaxed) {
                local += 1;
            }
        }
        changed.fetch_add(local, Relaxed);
    });
    gens.0 = 0;
    (changed.into_inner(), largest.into_inner())
}
