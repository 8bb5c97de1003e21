//! The invalidation of an update: the vertices whose old tree paths pass a changed tree edge.
//!
//! A result's own (trusted) tree is walked top-down from the roots, the heads of changed tree
//! edges, through the out-edges whose heads have them as parent; when a recompute may still
//! follow, the valid tree is walked from the source beside it and the first walk to end gives the
//! exact count. A caller's arrays (which may hold a parent cycle) are resolved bottom-up instead,
//! every vertex walking up its parents. Either way the invalidated vertices are left stamped `g0`.

use super::run::{is_finite, lowers, Changes, InView, Run, GRAIN_LIST, GRAIN_VERTICES, UNKNOWN};
use super::exec::Exec;
use super::prefetch::{prefetch, prefetch_at, AHEAD};
use super::workspace::{Appender, VertexList, Workspace};
use crate::error::{Error, Result};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};

const VALID: u8 = 1;
const INVALID: u8 = 2;

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
pub(super) fn invalidate_top_down<E: Exec>(
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

/// What a quick invalidation needs to re-attach a root instead of invalidating its subtree.
pub(super) struct Reattach<'a> {
    pub inn: InView<'a>,
    pub dist: &'a [i64],
    /// Scratch for the roots by distance.
    pub by_distance: &'a parking_lot::Mutex<Vec<(i64, i32)>>,
}

/// The invalidation of a small batch, walked top-down from its roots without the valid side:
/// the invalidated vertices stamped `g0` and listed in `candidates`, and their number; `None` once
/// they pass `cap` (the walk stops there and leaves its stamps, of a generation no later step
/// uses).
///
/// With `reattach`, the roots are taken by ascending old distance, and a root with a tight
/// in-edge (in the updated graph) from a vertex that keeps its old path keeps its distance: it is
/// listed (to take its best in-edge in the pull) but its subtree is not invalidated, since every
/// vertex below it keeps its path's length and its parent. Such a tail has a smaller distance, so
/// every root above it was taken before and has marked its subtree: a tail not stamped `g0`
/// keeps its path. On graphs with many ties (the combined graph of a MOSP result) most roots
/// are re-attached. The count returned is then the vertices invalidated, without the roots
/// re-attached.
pub(super) fn invalidate_capped<E: Exec>(
    run: &Run<'_, E>,
    ws: &Workspace,
    changes: &Changes<'_>,
    parent: &[i32],
    g0: i32,
    cap: usize,
    reattach: Option<Reattach<'_>>,
) -> Option<usize> {
    ws.candidates.clear();
    {
        let mut listed = Appender::new(&ws.candidates);
        for to in roots(changes, parent, &ws.stamp) {
            if run.exec.claim(&ws.stamp[to], g0) {
                listed.push(to as i32);
            }
        }
    }
    let Some(r) = reattach else {
        let mut at = 0;
        while at < ws.candidates.len() {
            if ws.candidates.len() > cap {
                return None;
            }
            at = tree_level(run, ws, &ws.candidates, at, parent, g0, None);
        }
        return (ws.candidates.len() <= cap).then(|| ws.candidates.len());
    };
    let mut by_distance = r.by_distance.lock();
    by_distance.clear();
    let roots = ws.candidates.len();
    if by_distance.capacity() < roots {
        by_distance.reserve_exact(roots.max(cap));
    }
    by_distance.extend((0..roots).map(|i| {
        let v = ws.candidates.get(i);
        (r.dist[v as usize], v)
    }));
    by_distance.sort_unstable();
    ws.candidates.clear();
    let mut kept = 0;
    for &(dv, v) in by_distance.iter() {
        let row = r.inn.row(v as usize);
        let tight = r.inn.col[row.clone()].iter().zip(&r.inn.w[row]).any(|(&u, &w)| {
            let du = r.dist[u as usize];
            u != v && is_finite(du) && du + w as i64 == dv && ws.stamp[u as usize].load(Relaxed) != g0
        });
        let at = ws.candidates.len();
        ws.candidates.push(v);
        if tight {
            kept += 1;
            continue;
        }
        let mut level = at;
        while level < ws.candidates.len() {
            if ws.candidates.len() - kept > cap {
                return None;
            }
            level = tree_level(run, ws, &ws.candidates, level, parent, g0, None);
        }
    }
    let invalidated = ws.candidates.len() - kept;
    (invalidated <= cap).then_some(invalidated)
}

/// The vertices below the improving insertion heads of a small batch (heads whose distance the
/// insertion lowers, below no invalidated vertex: their old subtrees all get shorter, so a repair
/// searches them), walked top-down into `frontier` with stamp `g`, stopping at invalidated
/// vertices (`g0`); their number, or `None` once they pass `cap`.
#[allow(clippy::too_many_arguments)]
pub(super) fn count_below_heads<E: Exec>(run: &Run<'_, E>, ws: &Workspace, changes: &Changes<'_>, dist: &[i64], parent: &[i32], g0: i32, g: i32, cap: usize) -> Option<usize> {
    ws.frontier.clear();
    if let Some(ins) = changes.inserted {
        let mut listed = Appender::new(&ws.frontier);
        for (i, (&u, &v)) in ins.from.iter().zip(changes.heads).enumerate() {
            let (du, dv) = (dist[u as usize], dist[v as usize]);
            let stamp = &ws.stamp[v as usize];
            if lowers(du, ins.weight(i), dv) && v as usize != run.source && stamp.load(Relaxed) != g0 && run.exec.claim(stamp, g) {
                listed.push(v);
            }
        }
    }
    let mut at = 0;
    while at < ws.frontier.len() {
        if ws.frontier.len() > cap {
            return None;
        }
        at = tree_level(run, ws, &ws.frontier, at, parent, g, Some(g0));
    }
    (ws.frontier.len() <= cap).then(|| ws.frontier.len())
}

/// How far `invalidate_top_down` got.
#[derive(Clone, Copy)]
pub(super) enum Invalidation {
    /// Every invalidated vertex is stamped and listed.
    Listed(usize),
    /// The count is exact, but only the vertices before `listed_up_to` have had their children
    /// listed.
    Counted { count: usize, listed_up_to: usize },
}

impl Invalidation {
    pub(super) fn count(self) -> usize {
        match self {
            Invalidation::Listed(c) | Invalidation::Counted { count: c, .. } => c,
        }
    }
}

/// Lists the invalidated subtrees from entry `at` of the candidates on (the rest after a
/// `Counted` invalidation, or all of them from the roots).
pub(super) fn finish_invalidation<E: Exec>(run: &Run<'_, E>, ws: &Workspace, parent: &[i32], g0: i32, mut at: usize) {
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
/// again; with `list` they are also appended to the candidates. Returns how many were
/// invalidated, and whether the vertices were walked: where the changes hold no root and every
/// parent is closer to the source than its child ([`descending`]), there is nothing to
/// invalidate and no cycle to find, so they are not.
pub(super) fn invalidate_bottom_up<E: Exec>(run: &Run<'_, E>, ws: &Workspace, c: &Changes<'_>, dist: &[i64], parent: &[i32], g0: i32, list: bool) -> Result<(usize, bool)> {
    let n = parent.len();
    // Every state is UNKNOWN between runs (each run that sets one resets it).
    debug_assert!(ws.state[..n].iter().all(|s| s.load(Relaxed) == UNKNOWN));
    let roots = mark_roots(ws, c, parent);
    if roots == 0 && descending(run.exec, dist, parent) {
        return Ok((0, false));
    }
    let walked = invalidate_subtrees(run, ws, parent);
    run.exec.for_chunks(n, GRAIN_VERTICES * 4, |r| {
        let mut cand = Appender::new(&ws.candidates);
        for v in r {
            if ws.state[v].load(Relaxed) == INVALID {
                ws.stamp[v].store(g0, Relaxed);
                if list {
                    cand.push(v as i32);
                }
            }
            ws.state[v].store(UNKNOWN, Relaxed);
        }
    });
    Ok((roots + walked?, true))
}

/// Whether `dist[parent[v]] < dist[v]` wherever v has a parent (in range, as checked before):
/// then no parent path closes a cycle, since its distances would fall forever. A tree of positive
/// weights always is so. One pass, a gather per vertex; it stops at the first chunk that is not.
fn descending<E: Exec>(exec: &E, dist: &[i64], parent: &[i32]) -> bool {
    let up = AtomicBool::new(false);
    exec.for_chunks(parent.len(), GRAIN_VERTICES * 4, |r| {
        if up.load(Relaxed) {
            return;
        }
        let found = r.clone().zip(&parent[r.clone()]).any(|(v, &p)| {
            // The parents' distances are gathers: asked for ahead.
            prefetch_at(dist, parent, v + AHEAD);
            p >= 0 && dist[p as usize] >= dist[v]
        });
        if found {
            up.store(true, Relaxed);
        }
    });
    !up.into_inner()
}

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
                // Every walk through a vertex finds it the same answer (its path up the tree is
                // fixed, the roots marked before): only the invalidated need the one claim that
                // keeps the count exact, the valid ones a plain store.
                if r == VALID {
                    ws.state[u as usize].store(VALID, Relaxed);
                } else if run.exec.resolve(&ws.state[u as usize], r) {
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
