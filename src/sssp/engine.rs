//! The SSSP engine: static solve and dynamic update with near-far (Delta-stepping) propagation.
//!
//! One implementation for every host backend, generic over an [`Exec`]: with `Sequential` it is
//! the readable reference whose counters reproduce the original single-threaded program; with
//! `Parallel` the same steps run on rayon. The result is the canonical tree (exact distances,
//! lowest-id parent among tight in-neighbours) whatever the schedule, because the packed word's
//! order is (distance, parent) and every tight edge from a changed vertex is offered to its head.
//!
//! Update steps (reference-behaviour §3): the adaptive policy's prediction (`predict.rs`); roots
//! (heads of changed tree edges) and the invalidation of their subtrees, detecting parent cycles
//! in a caller's arrays (`invalidate.rs`); pack the old tree; add insertion heads; pull every
//! candidate's best in-edge; propagate with near/far piles or a bucket queue (`near_far.rs`,
//! `buckets.rs`); write back. This module holds the steps' order and the passes over every
//! vertex or candidate (packing, the pull, the write-back); what the steps share is in `run.rs`.

use super::exec::Exec;
use super::run::{atomic_i32, atomic_i64, is_finite, lowers, Changes, Generations, InView, OldWords, OutView, Run, GRAIN_LIST, GRAIN_VERTICES, NOT_LOADED, TOUCHED, UNKNOWN};
use super::invalidate::{count_below_heads, finish_invalidation, invalidate_bottom_up, invalidate_capped, invalidate_top_down, Invalidation, Reattach};
use super::near_far::{near_far, Search};
use super::packing::{Packing, PACKED_INF};
use super::predict::{predict_affected, shortcut_after_walk, Question};
use super::prefetch::{ask_pull, prefetch, prefetch_at, AHEAD};
use crate::stats::UpdateStats;
use crate::resources::team_choice::SearchKind;
use super::workspace::{Appender, Workspace};
use crate::error::{Error, Result};
use crate::distance::DISTANCE_INF;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicI64, AtomicU64, AtomicUsize, Ordering::Relaxed};

/// A drop-in repair starting from more than n / WIDE_SHARE candidates packs the whole tree and
/// checks the caller's rows in one pass each first; below, it loads the words and checks the rows
/// it meets (a repair of a tenth to a fifth of the tree is faster that way: docs/performance.md).
const WIDE_SHARE: usize = 3;

/// A repair that pulls more than n / SCAN_PULL_SHARE vertices finds their in-edges by a pass over
/// the out-rows, even where it has in-rows.
const SCAN_PULL_SHARE: usize = 2;

/// A repair whose batch inserts more than n / INSERTED_WIDE_SHARE edges packs the whole tree
/// first, of a result's own tree or a drop-in caller's clean one.
const INSERTED_WIDE_SHARE: usize = 32;

/// A repair that invalidates more than n / INVALIDATED_WIDE_SHARE vertices of a tree of at least
/// INVALIDATED_WIDE_MIN packs the whole tree first (a result's own or a clean one). Smaller
/// trees' arrays stay in a core's caches, where a word loaded when met costs little (usroads,
/// 129K vertices: its 1,000-change batches 1.12-1.17x slower packed).
const INVALIDATED_WIDE_SHARE: usize = 12;
const INVALIDATED_WIDE_MIN: usize = 1 << 18;

/// A tree's batch of at most `QUICK_CHANGES + n / QUICK_SHARE` changed edges and insertions is
/// invalidated exactly before any sample (see `update`, `Adaptive::quick_changes`).
const QUICK_CHANGES: usize = 64;
const QUICK_SHARE: usize = 1024;

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
    solve_from_source(&run, shared, &mut gens, &mut stats, true);
    let (affected, largest) = unpack(&run, shared, &mut gens, dist, parent, false);
    stats.affected = affected as i64;
    ws.generation = gens.0;
    Ok((stats, largest))
}

/// The static search: every word unwritten (`NOT_LOADED`, which the search reads as INF) but
/// the source's, then near-far from the source. `clean`: every slot holds `NOT_LOADED` already,
/// as between runs; else a pass resets them.
fn solve_from_source<E: Exec>(run: &Run<'_, E>, ws: &Workspace, gens: &mut Generations, stats: &mut UpdateStats, clean: bool) {
    let n = run.out.n();
    if !clean {
        run.exec.for_chunks(n, GRAIN_VERTICES, |r| {
            for v in r {
                ws.packed[v].store(NOT_LOADED, Relaxed);
            }
        });
    }
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
    /// Caller-owned arrays that one pass found clean (`validate::scan_caller_tree`: every parent
    /// in range, every distance within the packing's bound, every unreachable vertex (INF, -1)):
    /// walked as `Unchecked`, but packed and written back only where the repair touches them, as
    /// a result's own tree, since packing the rest would refuse or rewrite nothing.
    Clean,
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
    /// Batches of at most this many changed edges and insertions are invalidated by an exact
    /// walk before any sample (see `update`).
    pub quick_changes: usize,
}

impl Adaptive {
    /// The quick walk's limit of a tree's update: 64 + n / 1024 changes.
    pub(crate) fn quick_changes_of(n: usize) -> usize {
        QUICK_CHANGES + n / QUICK_SHARE
    }
}

/// Where a repair finds the in-edges of the vertices it pulls.
pub(crate) enum InEdges<'a> {
    /// Rows of in-edges: a graph's in-rows, a caller's reverse graph, a combined graph's in-slots.
    Rows(InView<'a>),
    /// None kept (a graph updated once): one pass over the out-rows offers every edge into a
    /// candidate to its head, and adds its time to the cell (the preparation's, as making the
    /// in-rows is: see `Graph::keep_in_rows`).
    Scan(&'a std::cell::Cell<u64>),
}

/// Whether an old tree (distances, parents) is canonical: asked by [`update`] before it recomputes.
pub(crate) type CanonicalCheck<'a> = &'a dyn Fn(&[i64], &[i32]) -> bool;

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
///
/// `canonical`, where given, is asked before the update recomputes (once, with the old tree,
/// none of whose words is written then): an old tree it does not find canonical is repaired.
#[allow(clippy::too_many_arguments)]
pub(crate) fn update<'i, E: Exec>(
    exec: &E,
    out: OutView<'_>,
    inn: impl FnOnce() -> InEdges<'i>,
    changes: Changes<'_>,
    source: usize,
    delta: i64,
    max_weight: i64,
    adaptive: Option<Adaptive>,
    canonical: Option<CanonicalCheck<'_>>,
    old_tree: OldTree,
    ws: &mut Workspace,
    dist: &mut [i64],
    parent: &mut [i32],
    largest: &mut Option<i64>,
) -> Result<(UpdateStats, Option<i64>)> {
    let n = out.n();
    check_run_args(n, source, delta, dist.len(), parent.len())?;
    if old_tree != OldTree::Trusted {
        check_changes(n, changes.from, changes.to, changes.heads)?;
        if old_tree == OldTree::Unchecked {
            check_parents(n, parent)?;
        }
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
    // The in-edges, made once, when first asked for (by the quick walk or the pull).
    let inn = std::cell::RefCell::new(Some(inn));
    let in_cell = std::cell::OnceCell::new();
    let in_edges = || in_cell.get_or_init(|| (inn.borrow_mut().take().expect("the in-edges are made once"))());
    let in_view = || match in_edges() {
        InEdges::Rows(v) => Some(*v),
        InEdges::Scan(_) => None,
    };
    // A guarded view that read a bad row (caller-owned arrays): refused before any write-back.
    let bad_rows = || Error::invalid("dyng: a row the repair read has bounds outside the edges, a head outside [0, n) or a weight outside [1, max_weight]");
    let faulted = || {
        if out.faulted() || in_cell.get().is_some_and(|e: &InEdges<'_>| matches!(e, InEdges::Rows(v) if v.faulted())) {
            Err(bad_rows())
        } else {
            Ok(())
        }
    };
    // Whether the old tree may be recomputed, asked only where the update would recompute.
    let asked = std::cell::Cell::new(None);
    let may = |dist: &[i64], parent: &[i32]| match canonical {
        None => true,
        Some(c) => match asked.get() {
            Some(yes) => yes,
            None => {
                let yes = c(dist, parent);
                asked.set(Some(yes));
                yes
            }
        },
    };
    let result = (|| -> Result<(Option<i64>, Option<i64>)> {
        let ws = shared;
        // `clean`: no word was written yet (see `solve_from_source`).
        let recompute = |stats: &mut UpdateStats, gens: &mut Generations, dist: &mut [i64], parent: &mut [i32], clean: bool| {
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
            solve_from_source(&run, ws, gens, stats, clean);
            faulted()?;
            let (affected, largest) = unpack(&run, ws, gens, dist, parent, false);
            stats.affected = affected as i64;
            Ok((Some(stats.pushes - before), Some(largest)))
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
        // A small batch is walked exactly at once (`quick`: its invalidation's generation and
        // count), without the sample: its roots' subtrees are most often a few vertices, where
        // the sample's walks up the tree cost thousands of steps. A walk
        // that passes the cap falls back to the sample, having cost no more than it would.
        let mut quick: Option<(i32, usize)> = None;
        // The vertices the repair is expected to search, where known: a quick walk's invalidated
        // ones and those below its improving heads (where the search stays, but for shortcuts),
        // else the sample's estimate of them. Too few to time, the search runs on one member:
        // never timed, such repairs would otherwise run as a team for good (a wake-up and two
        // barriers a round, 1.5-2x one member's time on usroads' 100-change batches).
        let mut expected_work = None;
        if let (Some(a @ Adaptive { predict_share: Some(share), .. }), OldTree::Trusted) = (adaptive, old_tree) {
            let largest = || match old_largest.get() {
                Some(l) => l,
                None => {
                    let l = largest_distance(exec, dist);
                    old_largest.set(Some(l));
                    l
                }
            };
            if changes.from.len() + changes.heads.len() <= a.quick_changes {
                // The repair searches the invalidated subtrees and those below improving heads:
                // together they must stay below the cap. Where the count need not be the
                // originals', a root that keeps its distance through another in-edge is
                // re-attached instead of invalidating its subtree.
                let cap = a.recompute_at.min(n / 16);
                let g0 = gens.next(ws);
                let reattach = (!a.exact_count).then(in_view).flatten().map(|inn| Reattach { inn, dist, by_distance: &ws.sort_pairs });
                quick = invalidate_capped(&run, ws, &changes, parent, g0, cap, reattach).map(|count| (g0, count));
                stats.visits.invalidate += ws.candidates.len() as i64;
                if let Some((g0, count)) = quick {
                    let g = gens.next(ws);
                    let below = count_below_heads(&run, ws, &changes, dist, parent, g0, g, cap - count);
                    stats.visits.predict += (changes.heads.len() + ws.frontier.len()) as i64;
                    quick = quick.filter(|_| below.is_some());
                    expected_work = below.map(|b| ws.candidates.len() + b + changes.heads.len());
                }
            }
            // Nothing to repair: no vertex invalidated or re-attached, and no insertion lowers a
            // distance or offers a lower-id parent at the same one. The tree stays as it is, with
            // no pass over its vertices (a tree whose words hold no parents would take three).
            if quick.is_some() && ws.candidates.is_empty() && ws.frontier.is_empty() && heads_change_nothing(&changes, dist, parent, source) {
                touched_listed.set(true);
                return Ok((None, old_largest.get()));
            }
            if let Some((g0, count)) = quick {
                may_recompute = false;
                if a.shortcut.is_some_and(|share| shortcut_after_walk(&changes, dist, ws, g0, share, &largest)) && may(dist, parent) {
                    stats.invalidated = count as i64;
                    return recompute(&mut stats, &mut gens, dist, parent, true);
                }
            } else {
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
                stats.visits.predict += p.visited as i64;
                heads = p.improving_heads;
                roots_listed = p.roots_listed;
                expected_work = p.searched;
                predicted = p.recompute(share) && may(dist, parent);
                may_recompute = predicted || !p.informative;
                if predicted && !a.exact_count {
                    // The walk that would count the invalidated vertices exactly costs up to half
                    // a recompute when both sides of the cut are large; the sampled estimate
                    // stands in for it.
                    stats.invalidated = p.invalidated;
                    return recompute(&mut stats, &mut gens, dist, parent, true);
                }
            }
        }
        // Where the sample has chosen to repair, the search's way is chosen before the walk,
        // so that a walk whose search will run on one member runs on the calling thread too
        // (see below): handed to the pool, such a walk cost more than inline. Asking before
        // every walk gained nothing (docs/performance.md, "Tried and not kept").
        let early = (!may_recompute).then(|| {
            let solo = exec.solo(SearchKind::Repair, n, run.out.edges, expected_work);
            exec.loops_inline(solo);
            solo
        });
        // Invalidation next: its count decides between repairing and recomputing, and a
        // recompute needs neither the packed old tree nor the candidate list. Invalidated
        // vertices leave it stamped `g0`.
        let (g0, invalidation) = match quick {
            Some((g0, count)) => (g0, Invalidation::Listed(count)),
            None => {
                let g0 = gens.next(ws);
                if !roots_listed {
                    ws.candidates.clear();
                }
                let mut invalidation = Invalidation::Listed(0);
                if !changes.from.is_empty() {
                    invalidation = match old_tree {
                        OldTree::Trusted => {
                            let gv = may_recompute.then(|| gens.next(ws));
                            let walked = invalidate_top_down(&run, ws, (!roots_listed).then_some(&changes), dist, parent, g0, gv);
                            stats.visits.invalidate += (ws.candidates.len() + if gv.is_some() { ws.frontier.len() } else { 0 }) as i64;
                            walked
                        }
                        OldTree::Unchecked | OldTree::Clean => {
                            let list = old_tree == OldTree::Clean;
                            let (count, walked) = invalidate_bottom_up(&run, ws, &changes, dist, parent, g0, list)?;
                            if walked {
                                stats.visits.invalidate += n as i64;
                            }
                            Invalidation::Listed(count)
                        }
                    };
                }
                (g0, invalidation)
            }
        };
        stats.invalidated = invalidation.count() as i64;
        let candidates = stats.invalidated as usize + heads;
        if predicted || (adaptive.is_some_and(|a| candidates >= a.recompute_at) && may(dist, parent)) {
            return recompute(&mut stats, &mut gens, dist, parent, true);
        }
        // A repair from here on. Its search's way is chosen now (or was, before the walk), and
        // where the search runs on one member the other loops of the repair run on the calling
        // thread too: they are smaller than the search, and a hand-off to the pool costs more
        // than they do.
        let solo = early.unwrap_or_else(|| exec.solo(SearchKind::Repair, n, run.out.edges, None));
        exec.loops_inline(solo);
        if let Invalidation::Counted { listed_up_to, .. } = invalidation {
            let before = ws.candidates.len();
            finish_invalidation(&run, ws, parent, g0, listed_up_to);
            stats.visits.invalidate += (ws.candidates.len() - before) as i64;
        }
        // The invalidated vertices are listed again in ascending id order: the sequential
        // reference's counters depend on that order, and the loops over the list that follow
        // (the pull, the write-back) then read the arrays in order instead of in the walk's.
        // A trusted or clean tree with parents in its words is not packed: the search reads the
        // words of the vertices it meets from the old tree (`Run::word`) and the invalidated ones
        // lose theirs here; any other run packs every vertex, which lists them on the way. A
        // clean tree whose repair starts from more than n / WIDE_SHARE candidates is packed too:
        // the repair then meets most vertices, where one pass in order costs less than loading
        // each word when met and writing the touched ones back in the search's order (grid
        // 1000^2, 96 % invalidated: 1.2-1.3x the packed run's time); either where its batch
        // inserts more than n / INSERTED_WIDE_SHARE edges or invalidates more than
        // n / INVALIDATED_WIDE_SHARE vertices.
        let wide = (stats.invalidated as usize + changes.heads.len()) * WIDE_SHARE > n;
        // Gains spread from that many insertions reach most vertices, whatever the invalidated
        // count or the sample's improving heads say; a twelfth of a large tree invalidated is
        // searched again from INF, and the words met around it cost more loaded one by one
        // (docs/performance.md).
        let reaches_most = changes.heads.len() * INSERTED_WIDE_SHARE > n
            || (n >= INVALIDATED_WIDE_MIN && stats.invalidated as usize * INVALIDATED_WIDE_SHARE > n);
        let lazy = run.packing.packed_parents()
            && match old_tree {
                OldTree::Trusted => !reaches_most,
                OldTree::Clean => !wide && !reaches_most,
                OldTree::Unchecked => false,
            };
        // Likewise, guarded rows (caller-owned arrays) are all checked in one pass first where
        // the repair will read most of them (grid 1000^2, 96 % invalidated: the search took
        // 1.11x as long checking each row as read).
        let run = match unguarded(run.out, wide, exec) {
            Some(out) => Run { out, ..run },
            None => return Err(bad_rows()),
        };
        if lazy {
            unpack_invalidated(&run, ws, g0);
        } else {
            ws.candidates.clear();
            pack_old_tree(&run, ws, dist, parent, g0)?;
        }
        stats.visits.pack += if lazy { ws.candidates.len() } else { n } as i64;
        for (i, &v) in changes.heads.iter().enumerate() {
            prefetch_at(&ws.stamp, changes.heads, i + AHEAD);
            if v as usize != source && exec.claim(&ws.stamp[v as usize], g0) {
                ws.candidates.push(v);
            }
        }
        // Every vertex whose word a trusted repair writes is listed for the write-back, which
        // also gives its slot back to `NOT_LOADED`.
        let track = lazy;
        if track {
            mark_touched(&run, ws);
        }
        let g1 = gens.next(ws);
        let search = {
            let run = Run { old: lazy.then_some(OldWords { dist: &*dist, parent: &*parent }), ..run };
            stats.visits.pull += ws.candidates.len() as i64;
            // Nothing to pull (a batch that invalidates nothing and inserts nothing here): the
            // in-edges, which a first repair may have to make, are not asked for.
            if ws.candidates.is_empty() {
                ws.frontier.clear();
            } else {
                match in_edges() {
                    // Most vertices to pull: one pass over the out-rows in order offers what a
                    // pull through the in-rows would, and reads only the valid tails' words
                    // (the reference keeps the pull, whose order its counters follow).
                    InEdges::Rows(_) if ws.candidates.len() * SCAN_PULL_SHARE > n && !exec.reference() => {
                        pull_by_scan(&run, ws, g1);
                        stats.visits.pull += n as i64;
                    }
                    InEdges::Rows(inn) => {
                        let Some(inn) = unguarded(*inn, wide, exec) else {
                            return Err(bad_rows());
                        };
                        pull(&run, inn, ws, g1);
                    }
                    InEdges::Scan(took) => {
                        let clock = std::time::Instant::now();
                        pull_by_scan(&run, ws, g1);
                        took.set(took.get() + clock.elapsed().as_nanos() as u64);
                        stats.visits.pull += n as i64;
                    }
                }
            }
            // A search past its budget is abandoned for a recompute: not for a tree not known
            // to be canonical, whose repair is not asked to stop (its check costs a pass).
            let budget = adaptive.filter(|_| canonical.is_none() || asked.get() == Some(true)).map(|a| a.push_budget);
            near_far(&run, ws, &mut gens, &mut stats, budget, track, SearchKind::Repair, Some(solo))
        };
        if search == Search::Abandoned {
            // Not clean: an abandoned search leaves words it lowered but never expanded (so
            // never listed), and any other run packed every word.
            if track {
                clear_touched(&run, ws);
            }
            return recompute(&mut stats, &mut gens, dist, parent, false);
        }
        if let Err(e) = faulted() {
            if track {
                clear_touched(&run, ws);
            }
            return Err(e);
        }
        let (affected, new_largest) = if track {
            touched_listed.set(true);
            stats.visits.write_back += ws.candidates.len() as i64;
            unpack_touched(&run, ws, dist, parent, old_largest.get())
        } else {
            stats.visits.write_back += n as i64;
            // A result's own tree packed whole lists its reparented vertices all the same.
            let list = old_tree == OldTree::Trusted && run.packing.packed_parents();
            touched_listed.set(list);
            let (affected, l) = unpack(&run, ws, &mut gens, dist, parent, list);
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

/// Whether no insertion of `changes` changes the tree `dist`/`parent`: none lowers its head's
/// distance or reaches it at the same distance from a lower-id tail (the canonical parent).
/// False where the insertions' tails and weights are not known.
fn heads_change_nothing(changes: &Changes<'_>, dist: &[i64], parent: &[i32], source: usize) -> bool {
    let Some(ins) = changes.inserted else {
        return changes.heads.is_empty();
    };
    ins.from.iter().zip(changes.heads).enumerate().all(|(i, (&u, &v))| {
        let (du, dv, w) = (dist[u as usize], dist[v as usize], ins.weight(i));
        let ties_lower = is_finite(du) && du + w == dv && u < parent[v as usize];
        v as usize == source || !(lowers(du, w, dv) || ties_lower)
    })
}

/// `v`, with every row checked at once where the repair is `wide` (see `update`).
fn unguarded<'v, E: Exec>(v: OutView<'v>, wide: bool, e: &E) -> Option<OutView<'v>> {
    if wide {
        v.checked_all(e)
    } else {
        Some(v)
    }
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

/// Checks a caller's parent array against `n` before any walk follows it (shared with the CUDA
/// engine): a parent outside [-1, n) is refused, not used as an index.
pub(crate) fn check_parents(n: usize, parent: &[i32]) -> Result<()> {
    match parent.iter().position(|&p| p < -1 || p as i64 >= n as i64) {
        None => Ok(()),
        Some(v) => Err(Error::invalid(format!("dyng: parent[{v}] = {} is outside [-1, n = {n})", parent[v]))),
    }
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
    // the common case, a valid finite word.
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

/// The invalidated vertices (stamped `g0`, listed in `candidates` by the walk) lose their words
/// and are listed again in ascending id order: sorted (through `frontier`, free until the pull),
/// or, when they are many, by a pass over the stamps (as the packing pass of a full run lists
/// them).
fn unpack_invalidated<E: Exec>(run: &Run<'_, E>, ws: &Workspace, g0: i32) {
    let (len, n) = (ws.candidates.len(), ws.stamp.len().min(run.out.n()));
    run.exec.for_chunks(len, GRAIN_VERTICES, |r| {
        for i in r {
            ws.packed[ws.candidates.get(i) as usize].store(PACKED_INF, Relaxed);
        }
    });
    if len * 16 <= n {
        ws.candidates.sort(&ws.frontier, n);
        return;
    }
    ws.candidates.clear();
    run.exec.for_chunks(n, GRAIN_VERTICES, |r| {
        let mut cand = Appender::new(&ws.candidates);
        for v in r {
            if ws.stamp[v].load(Relaxed) == g0 {
                cand.push(v as i32);
            }
        }
    });
}

/// The largest finite distance of `dist`.
fn largest_distance<E: Exec>(exec: &E, dist: &[i64]) -> i64 {
    exec.max_over(dist.len(), |v| if is_finite(dist[v]) { dist[v] as u64 } else { 0 }) as i64
}

/// The touched flags (`state` = 1) of the candidates: the write-back visits exactly the flagged
/// vertices, which it lists in `candidates` (see `near_far::relax_range`). All flags are 0 between runs.
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

/// Every candidate takes its best in-edge; a strict distance decrease puts it on the frontier.
/// A tail already there offers nothing ([`entered_frontier`]; the reference takes its offers).
fn pull<E: Exec>(run: &Run<'_, E>, inn: InView<'_>, ws: &Workspace, g1: i32) {
    let p = run.packing;
    ws.frontier.clear();
    let old = run.old.as_ref().map(|t| (t.dist, t.parent));
    let fresh = !run.exec.reference();
    run.exec.for_chunks(ws.candidates.len(), GRAIN_LIST, |r| {
        let mut frontier = Appender::new(&ws.frontier);
        let end = r.end;
        for i in r {
            // The candidates lie anywhere in memory (a batch's heads, or the walk's order): the
            // reads of later ones are asked for ahead, a stage at a time.
            ask_pull(&inn, &ws.packed, old, |j| ws.candidates.get(j) as usize, i, end);
            let v = ws.candidates.get(i) as usize;
            let cur = run.word(ws, v);
            let mut best = cur;
            let row = inn.row(v);
            for (&u, &w) in inn.col[row.clone()].iter().zip(&inn.w[row]) {
                let wu = run.word(ws, u as usize);
                if wu == PACKED_INF || (fresh && entered_frontier(ws, u as usize, g1)) {
                    continue;
                }
                let nd = p.dist(wu) + w as u64;
                if nd <= p.max_candidate {
                    best = best.min(p.pack(nd, u));
                }
            }
            if best < cur {
                let old = run.loaded(run.exec.fetch_min(&ws.packed[v], best), v);
                if p.dist(best) < p.dist(old) && run.exec.claim(&ws.stamp[v], g1) {
                    frontier.push(v as i32);
                }
            }
        }
    });
}

/// [`pull`] without in-edges: the candidates are flagged in `in_far` (a byte each, zero outside
/// a search: a quarter of the stamps' memory, which the pass reads once per edge), then one pass
/// over every out-row offers each edge into a candidate to its head (a tail's word read only for
/// such an edge, as most rows hold none), and the flags are cleared. A head takes the least
/// offer and enters the frontier once its distance drops below its word's, as in [`pull`], and
/// from then on offers nothing ([`entered_frontier`]); a tail whose row comes before its own
/// offers lowered it offers the word it held, which [`pull`] may have read lowered. Either is an
/// upper bound, so the search ends at the same tree (its counters may differ: the reference keeps
/// [`pull`]).
fn pull_by_scan<E: Exec>(run: &Run<'_, E>, ws: &Workspace, g1: i32) {
    let (p, out) = (run.packing, run.out);
    let flag = |on: u8| {
        run.exec.for_chunks(ws.candidates.len(), GRAIN_VERTICES, |r| {
            for i in r {
                ws.in_far[ws.candidates.get(i) as usize].store(on, Relaxed);
            }
        })
    };
    flag(1);
    ws.frontier.clear();
    let fresh = !run.exec.reference();
    run.exec.for_chunks(out.n(), GRAIN_VERTICES, |r| {
        let mut frontier = Appender::new(&ws.frontier);
        for u in r {
            if fresh && entered_frontier(ws, u, g1) {
                continue;
            }
            let row = out.row(u);
            for (&v, &w) in out.col[row.clone()].iter().zip(&out.w[row]) {
                let v = v as usize;
                if ws.in_far[v].load(Relaxed) == 0 {
                    continue;
                }
                let wu = run.word(ws, u);
                let nd = p.dist(wu) + w as u64;
                if wu == PACKED_INF || nd > p.max_candidate {
                    continue;
                }
                let offer = p.pack(nd, u as i32);
                if offer < run.word(ws, v) {
                    let old = run.loaded(run.exec.fetch_min(&ws.packed[v], offer), v);
                    if p.dist(offer) < p.dist(old) && run.exec.claim(&ws.stamp[v], g1) {
                        frontier.push(v as i32);
                    }
                }
            }
        }
    });
    flag(0);
}

/// Whether `u` entered the frontier in the pull of generation `g1`: it offers nothing more there,
/// since the search expands it. A pull whose candidates read each other's words as they were
/// lowered (in the order they were listed, or the rows were scanned) passed offers on down the
/// list, from vertices invalidated a moment before, and handed the search a frontier of most of
/// them (a drop-in call that invalidates nine tenths of usroads' tree sorted 120K entries where
/// the boundary holds a few thousand, and took 1.6x as long). The originals do so, and the
/// sequential reference with them, for their counters.
#[inline(always)]
fn entered_frontier(ws: &Workspace, u: usize, g1: i32) -> bool {
    ws.stamp[u].load(Relaxed) == g1
}

/// Writes back the words of the touched vertices (listed in `candidates`; every other word is
/// the old tree's) and clears their flags; returns how many vertices changed and the new tree's
/// largest finite distance where `old_largest`, the old tree's, tells it: the untouched
/// vertices keep their distances, so the largest is the old one or a touched vertex's new one,
/// unless a touched vertex held the old largest and lost it (then `None`).
///
/// `candidates` then lists the vertices whose parent changed (gathered in `frontier`, free after
/// the search), all that the MOSP steps read of a repair: the combined graph and the path costs
/// depend on the trees' parents only, and most touched vertices keep their parent and only move.
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
    ws.frontier.clear();
    run.exec.for_chunks(ws.candidates.len(), GRAIN_VERTICES, |r| {
        let (mut local, mut local_top, mut local_lost) = (0, 0, false);
        let mut reparented = Appender::new(&ws.frontier);
        let end = r.end;
        for i in r {
            // The list is in the order the walk and the search found the vertices, random in
            // memory: each entry's four lines are asked for ahead (in id order, as one thread
            // lists them, this changes nothing).
            if i + AHEAD < end {
                let u = ws.candidates.get(i + AHEAD) as usize;
                prefetch(&ws.state[u]);
                prefetch(&ws.packed[u]);
                prefetch(&dist_a[u]);
                prefetch(&parent_a[u]);
            }
            let v = ws.candidates.get(i) as usize;
            ws.state[v].store(UNKNOWN, Relaxed);
            // A candidate the search never lowered still holds `NOT_LOADED`: its old word.
            let w = take_word(&ws.packed[v]);
            let w = if w == NOT_LOADED { pack_old(p, dist_a[v].load(Relaxed), parent_a[v].load(Relaxed)) } else { w };
            let d = if w == PACKED_INF { DISTANCE_INF } else { p.dist(w) as i64 };
            local_lost |= dist_a[v].load(Relaxed) == held && (w == PACKED_INF || d < held);
            if w != PACKED_INF {
                local_top = local_top.max(d);
            }
            let (moved, new_parent) = write_word(p, w, &dist_a[v], &parent_a[v]);
            local += moved as usize;
            if new_parent {
                reparented.push(v as i32);
            }
        }
        changed.fetch_add(local, Relaxed);
        top.fetch_max(local_top, Relaxed);
        if local_lost {
            lost.store(true, Relaxed);
        }
    });
    ws.candidates.clear();
    let mut listed = Appender::new(&ws.candidates);
    for i in 0..ws.frontier.len() {
        listed.push(ws.frontier.get(i));
    }
    drop(listed);
    let largest = match old_largest {
        Some(l) if !lost.into_inner() => Some(l.max(top.into_inner())),
        _ => None,
    };
    (changed.into_inner(), largest)
}

/// The word of a tree's vertex (the packing must hold parents).
#[inline]
fn pack_old(p: Packing, d: i64, parent: i32) -> u64 {
    if is_finite(d) {
        p.pack(d as u64, parent)
    } else {
        PACKED_INF
    }
}

/// Writes one packed word back as distance and parent; whether they changed, and whether the
/// parent did.
#[inline]
fn write_word(p: Packing, w: u64, dist: &AtomicI64, parent: &AtomicI32) -> (bool, bool) {
    let (d, par) = if w == PACKED_INF {
        (DISTANCE_INF, -1)
    } else {
        (p.dist(w) as i64, p.parent(w))
    };
    let new_parent = parent.load(Relaxed) != par;
    if dist.load(Relaxed) == d && !new_parent {
        return (false, false);
    }
    dist.store(d, Relaxed);
    parent.store(par, Relaxed);
    (true, new_parent)
}

/// A word of a static solve's search, with a slot it never wrote (`NOT_LOADED`) as INF.
#[inline(always)]
fn unwritten_as_inf(w: u64) -> u64 {
    if w == NOT_LOADED {
        PACKED_INF
    } else {
        w
    }
}

/// A solve's write-back of fewer vertices runs on the calling thread: waking the pool for it
/// after a team's search waited milliseconds, where the loop alone takes under one
/// (docs/performance.md).
const WRITE_BACK_ALONE_BELOW: usize = 1 << 18;

/// A word read and reset to `NOT_LOADED` for the next run, by the one thread that owns its vertex
/// in a write-back: a load and a store, where an atomic swap is a locked exchange.
#[inline(always)]
fn take_word(w: &AtomicU64) -> u64 {
    let x = w.load(Relaxed);
    w.store(NOT_LOADED, Relaxed);
    x
}

/// Writes the words back as distances and parents; returns how many vertices changed and the
/// largest finite distance (taken on the way: the loop reads every word anyway). With `list`
/// (and parents in the words), `candidates` then lists the vertices whose parent changed, as
/// [`unpack_touched`] leaves it, in id order per thread.
fn unpack<E: Exec>(
    run: &Run<'_, E>,
    ws: &Workspace,
    gens: &mut Generations,
    dist: &mut [i64],
    parent: &mut [i32],
    list: bool,
) -> (usize, i64) {
    let p = run.packing;
    let n = dist.len();
    let changed = AtomicUsize::new(0);
    let largest = AtomicI64::new(0);
    let dist_a = atomic_i64(dist);
    let parent_a = atomic_i32(parent);
    if p.packed_parents() {
        let grain = if n < WRITE_BACK_ALONE_BELOW { n } else { GRAIN_VERTICES };
        if list {
            ws.candidates.clear();
        }
        run.exec.for_chunks(n, grain, |r| {
            let (mut local, mut top) = (0, 0);
            let mut reparented = list.then(|| Appender::new(&ws.candidates));
            for v in r {
                let w = unwritten_as_inf(take_word(&ws.packed[v]));
                // Words order by distance first, so the largest finite word has the largest
                // distance.
                if w != PACKED_INF {
                    top = top.max(w);
                }
                let (moved, new_parent) = write_word(p, w, &dist_a[v], &parent_a[v]);
                local += moved as usize;
                if let Some(l) = reparented.as_mut().filter(|_| new_parent) {
                    l.push(v as i32);
                }
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
            if w == NOT_LOADED {
                ws.packed[v].store(PACKED_INF, Relaxed); // the passes below read INF
            }
            let w = unwritten_as_inf(w);
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
            ws.packed[v].store(NOT_LOADED, Relaxed);
        }
        changed.fetch_add(local, Relaxed);
    });
    gens.0 = 0;
    (changed.into_inner(), largest.into_inner())
}

#[cfg(test)]
mod tests {
    use super::{pull, pull_by_scan};
    use crate::sssp::packing::PACKED_INF;
    use crate::sssp::run::{InView, OutView, Run};
    use crate::sssp::with_exec;
    use crate::sssp::workspace::Workspace;
    use crate::Resources;
    use std::sync::atomic::Ordering::Relaxed;

    #[test]
    fn a_pull_takes_no_offer_from_a_vertex_it_put_on_the_frontier() {
        // The path 0 -> 1 -> ... -> 7 of weight 1 has lost its first edge: 1 to 7 are
        // invalidated, and a second road 0 -> 1 of weight 5 is left. The pull lowers 1 from 0
        // and leaves 2 to 7 to the search, which expands 1 once its distance is final. The
        // sequential reference reads 1's lowered word, as the originals do, and hands all seven
        // to the frontier.
        let n = 8;
        let (rp, col, w): (Vec<i32>, Vec<i32>, Vec<i32>) = ((0..=n as i32).map(|v| v.min(7)).collect(), (1..8).collect(), std::iter::once(5).chain(std::iter::repeat_n(1, 6)).collect());
        let (irp, tails, iw): (Vec<i32>, Vec<i32>, Vec<i32>) = ((0..=n as i32).map(|v| (v - 1).max(0)).collect(), (0..7).collect(), w.clone());
        let out = OutView { bounds: &rp, stride: 1, n, col: &col, w: &w, edges: 7, guard: None };
        let inn: InView<'_> = OutView { bounds: &irp, stride: 1, n, col: &tails, w: &iw, edges: 7, guard: None };
        for (res, expected) in [(Resources::parallel(1).unwrap(), 1), (Resources::sequential(), 7)] {
            for by_scan in [false, true] {
                if by_scan && expected == 7 {
                    continue; // the reference always pulls through in-rows
                }
                with_exec!(&res, |e| {
                    let mut ws = Workspace::new();
                    let (run, _) = Run::prepare(e, out, 0, 1, 5, &mut ws).unwrap();
                    let (g0, g1) = (1, 2);
                    ws.packed[0].store(run.packing.pack(0, -1), Relaxed);
                    ws.candidates.clear();
                    for v in 1..n {
                        ws.packed[v].store(PACKED_INF, Relaxed);
                        ws.stamp[v].store(g0, Relaxed);
                        ws.candidates.push(v as i32);
                    }
                    if by_scan {
                        pull_by_scan(&run, &ws, g1);
                    } else {
                        pull(&run, inn, &ws, g1);
                    }
                    let frontier: Vec<i32> = (0..ws.frontier.len()).map(|i| ws.frontier.get(i)).collect();
                    assert_eq!(frontier.len(), expected, "by scan: {by_scan}: {frontier:?}");
                    assert_eq!(frontier[0], 1);
                    assert_eq!(run.packing.dist(ws.packed[1].load(Relaxed)), 5);
                });
            }
        }
    }
}
