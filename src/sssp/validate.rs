//! Adopting a tree from arrays: validation and the originals' canonicalization.
//!
//! dyng is stricter than the originals: an adopted tree must be rooted at the source, acyclic,
//! consistent (every reachable vertex's parent edge is tight) and optimal (no edge can shorten a
//! distance). A tree that passes cannot make a later update fail, which is what lets `update`
//! validate everything before it changes anything.

use crate::error::{Error, Result};
use crate::graph::Rows;
use crate::distance::{is_finite, DISTANCE_INF};

/// Checks ranges and the root, normalizes unreachable distances to `DISTANCE_INF`.
pub(crate) fn check_shape(
    n: usize,
    source: usize,
    dist: &mut [i64],
    parent: &[i32],
    what: &str,
) -> Result<()> {
    check_ranges(n, source, dist, parent, what)?;
    if let Some(v) = find_parent_cycle(parent) {
        return Err(Error::invalid(format!(
            "dyng: {what}: the input SOSP tree has a parent cycle through vertex {v}"
        )));
    }
    Ok(())
}

/// [`check_shape`] without the cycle walk.
pub(crate) fn check_ranges(
    n: usize,
    source: usize,
    dist: &mut [i64],
    parent: &[i32],
    what: &str,
) -> Result<()> {
    if dist.len() != n || parent.len() != n {
        return Err(Error::invalid(format!(
            "dyng: {what}: {} distances and {} parents given, want n = {n}",
            dist.len(),
            parent.len()
        )));
    }
    super::check_vertex("source", source, n)?;
    for v in 0..n {
        if dist[v] < 0 {
            return Err(Error::invalid(format!(
                "dyng: {what}: negative distance {} at vertex {v}",
                dist[v]
            )));
        }
        if !is_finite(dist[v]) {
            dist[v] = DISTANCE_INF;
        }
        if parent[v] < -1 || parent[v] as i64 >= n as i64 {
            return Err(Error::invalid(format!(
                "dyng: {what}: parent {} of vertex {v} is outside [-1, n = {n})",
                parent[v]
            )));
        }
    }
    if dist[source] != 0 || parent[source] != -1 {
        return Err(Error::invalid(format!(
            "dyng: {what} is not rooted at source {source}: its distance is {} and its parent {} (want 0 and -1)",
            dist[source], parent[source]
        )));
    }
    Ok(())
}

/// A vertex on a parent cycle, if there is one (each vertex is walked once).
fn find_parent_cycle(parent: &[i32]) -> Option<usize> {
    // 0 = unvisited, 1 = on the current walk, 2 = known to reach a root.
    let mut mark = vec![0u8; parent.len()];
    let mut path = Vec::new();
    for start in 0..parent.len() {
        let mut u = start as i32;
        path.clear();
        while u >= 0 && mark[u as usize] == 0 {
            mark[u as usize] = 1;
            path.push(u as usize);
            u = parent[u as usize];
        }
        if u >= 0 && mark[u as usize] == 1 {
            return Some(u as usize);
        }
        for &v in &path {
            mark[v] = 2;
        }
    }
    None
}

/// The checks of an adopted tree that is not verified against the graph
/// ([`SsspResult::from_arrays_unverified`](super::SsspResult::from_arrays_unverified)): one pass
/// over the vertices, as light as the originals' own (they check every vertex's distance against
/// the bound before their update). Every reachable vertex other than the source has a parent
/// whose distance is smaller (weights are at least 1, so this also rules out parent cycles), every
/// unreachable one none, and every finite distance is at most `bound`. Returns the largest finite
/// distance.
pub(crate) fn check_unverified(source: usize, dist: &[i64], parent: &[i32], bound: u64, what: &str) -> Result<i64> {
    let mut largest = 0;
    for (v, (&d, &p)) in dist.iter().zip(parent).enumerate() {
        if !is_finite(d) {
            if p != -1 {
                return Err(Error::invalid(format!(
                    "dyng: {what}: vertex {v} is unreachable (INF) but has parent {p}"
                )));
            }
            continue;
        }
        if d as u64 > bound {
            return Err(Error::invalid(format!(
                "dyng: {what}: an input distance exceeds (n - 1) * maxWeight = {bound}: distance[{v}] = {d}"
            )));
        }
        largest = largest.max(d);
        if v == source {
            continue;
        }
        // check_shape has put every parent in [-1, n).
        if p < 0 || dist[p as usize] >= d {
            return Err(Error::invalid(format!(
                "dyng: {what}: vertex {v} has distance {d} and parent {p} of distance {}: not a shortest-path tree (or the input SOSP tree has a parent cycle)",
                if p < 0 { "none".to_string() } else if is_finite(dist[p as usize]) { dist[p as usize].to_string() } else { "INF".to_string() }
            )));
        }
    }
    Ok(largest)
}

/// Whether the tree is canonical on objective `j` of the graph as it was before the batch `g`
/// holds uncommitted (the rows the batch changed as `before` kept them, the others as they are):
/// every reachable vertex's parent is the lowest-id in-neighbour u with d(u) + w(u, v) = d(v)
/// (which makes every parent edge a tight edge of the graph). One pass over the edges on the
/// executor, stopping at the first lower tight tail; nothing is reported, a tree that is not
/// canonical (or not a shortest-path tree) is only said not to be.
pub(crate) fn is_canonical_before<E: super::exec::Exec>(
    e: &E,
    g: &Rows<'_>,
    before: &crate::graph::before::RowsBefore,
    j: usize,
    source: usize,
    dist: &[i64],
    parent: &[i32],
) -> bool {
    let (col, w) = (g.heads(), g.column(j));
    canonical_over(e, g.n(), |u| before.row(u, j).unwrap_or_else(|| (&col[g.row(u)], &w[g.row(u)])), source, dist, parent)
}

/// [`is_canonical_before`] over the rows `row` gives (each vertex's heads and weights).
fn canonical_over<'r, E: super::exec::Exec>(
    e: &E,
    n: usize,
    row: impl Fn(usize) -> (&'r [i32], &'r [i32]) + Sync,
    source: usize,
    dist: &[i64],
    parent: &[i32],
) -> bool {
    use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering::Relaxed};
    // Byte v: the tight edge from parent[v] was seen (a byte, so that marking is a plain store,
    // not a read-modify-write, which as a bit set cost a quarter of the pass). Only row
    // parent[v] marks v, so each vertex is counted once, and the counts need no pass of their own.
    let tight_parent: Vec<AtomicU8> = (0..n).map(|_| AtomicU8::new(0)).collect();
    let lower = AtomicBool::new(false);
    let (reached, marked) = (AtomicUsize::new(0), AtomicUsize::new(0));
    e.for_chunks(n, 1 << 14, |r| {
        if lower.load(Relaxed) {
            return;
        }
        let (mut here, mut seen) = (0, 0);
        for u in r {
            let du = dist[u];
            if !is_finite(du) {
                continue;
            }
            here += (u != source) as usize;
            let (heads, weights) = row(u);
            for (&v, &wv) in heads.iter().zip(weights) {
                let v = v as usize;
                let d = du + wv as i64;
                let dv = dist[v];
                if d > dv {
                    continue;
                }
                let pv = parent[v];
                if d < dv || (v != source && (u as i32) < pv) {
                    lower.store(true, Relaxed);
                    return;
                }
                if pv == u as i32 && v != source && tight_parent[v].load(Relaxed) == 0 {
                    tight_parent[v].store(1, Relaxed);
                    seen += 1;
                }
            }
        }
        reached.fetch_add(here, Relaxed);
        marked.fetch_add(seen, Relaxed);
    });
    // Every reached vertex but the source has its tight parent edge.
    !lower.into_inner() && marked.into_inner() == reached.into_inner()
}

/// The distance check the originals make of a caller's tree before walking it (reference-behaviour
/// 3.3, the drop-in entry point): no negative distance, every finite one within the packing's
/// `bound` ((n - 1) * maxWeight). One pass, stopping at the first bad vertex (the engine checks
/// the parents' range before its walk).
pub(crate) fn check_caller_distances(dist: &[i64], bound: u64) -> Result<()> {
    match dist.iter().position(|&d| d < 0 || (is_finite(d) && d as u64 > bound)) {
        None => Ok(()),
        Some(v) => Err(Error::invalid(format!(
            "dyng: an input distance exceeds (n - 1) * maxWeight = {bound} or is negative: distance[{v}] = {}",
            dist[v]
        ))),
    }
}

/// What one pass over a caller's tree finds (the drop-in calls): the first vertex whose parent is
/// outside [-1, n), whose distance is negative or whose finite distance is above `bound`, and how
/// many unreachable vertices are not written (INF, -1).
pub(crate) struct CallerTreeScan {
    pub(crate) first_bad: Option<usize>,
    pub(crate) unnormal: usize,
}

impl CallerTreeScan {
    /// Every vertex within range and written as the engines write it: nothing the packing would
    /// refuse or rewrite.
    pub(crate) fn clean(&self) -> bool {
        self.first_bad.is_none() && self.unnormal == 0
    }
}

/// One pass over a caller's tree on the executor: see [`CallerTreeScan`].
pub(crate) fn scan_caller_tree<E: super::exec::Exec>(e: &E, bound: u64, dist: &[i64], parent: &[i32]) -> CallerTreeScan {
    use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
    let n = dist.len();
    let (bad, unnormal) = (AtomicUsize::new(usize::MAX), AtomicUsize::new(0));
    e.for_chunks(n, super::run::GRAIN_VERTICES * 4, |r| {
        let mut local = 0;
        for (v, (&d, &p)) in r.clone().zip(dist[r.clone()].iter().zip(&parent[r])) {
            if p < -1 || p as i64 >= n as i64 || d < 0 || (is_finite(d) && d as u64 > bound) {
                bad.fetch_min(v, Relaxed);
            } else if !is_finite(d) && (d != DISTANCE_INF || p != -1) {
                local += 1;
            }
        }
        unnormal.fetch_add(local, Relaxed);
    });
    CallerTreeScan {
        first_bad: Some(bad.into_inner()).filter(|&v| v != usize::MAX),
        unnormal: unnormal.into_inner(),
    }
}

/// The originals' `canonicalizeTree`: one ascending pass moving each parent to a lower-id tight
/// in-neighbour, over the out-edges of objective `j` in CSR order.
pub(crate) fn canonicalize(g: &Rows<'_>, j: usize, source: usize, dist: &[i64], parent: &mut [i32]) {
    let w = g.column(j);
    for u in 0..g.n() {
        if !is_finite(dist[u]) {
            continue;
        }
        for e in g.row(u) {
            let v = g.heads()[e] as usize;
            if v != source && (u as i32) < parent[v] && dist[u] + w[e] as i64 == dist[v] {
                parent[v] = u as i32;
            }
        }
    }
}

/// Checks that the tree is consistent with objective `j` of `g` and optimal on it; returns whether
/// it is also canonical (every parent the lowest-id tight in-neighbour).
pub(crate) fn check_on_graph(
    g: &Rows<'_>,
    j: usize,
    source: usize,
    dist: &[i64],
    parent: &[i32],
    what: &str,
) -> Result<bool> {
    let w = g.column(j);
    for v in 0..g.n() {
        if v == source {
            continue;
        }
        let p = parent[v];
        match (is_finite(dist[v]), p) {
            (false, -1) => {}
            (false, p) => {
                return Err(Error::invalid(format!(
                    "dyng: {what}: vertex {v} is unreachable (INF) but has parent {p}"
                )))
            }
            (true, -1) => {
                return Err(Error::invalid(format!(
                    "dyng: {what}: vertex {v} has distance {} but no parent",
                    dist[v]
                )))
            }
            (true, p) => {
                let pu = p as usize;
                let tight = is_finite(dist[pu])
                    && g.row(pu).any(|e| {
                        g.heads()[e] as usize == v && dist[pu] + w[e] as i64 == dist[v]
                    });
                if !tight {
                    return Err(Error::invalid(format!(
                        "dyng: {what}: vertex {v} has distance {} and parent {p}, but no edge {p} -> {v} of objective {j} gives that distance (does the tree belong to this graph?)",
                        dist[v]
                    )));
                }
            }
        }
    }
    let mut lowest_tight = vec![i32::MAX; g.n()];
    for u in 0..g.n() {
        if !is_finite(dist[u]) {
            continue;
        }
        for e in g.row(u) {
            let v = g.heads()[e] as usize;
            if dist[u] + w[e] as i64 == dist[v] {
                lowest_tight[v] = lowest_tight[v].min(u as i32);
            }
            if dist[u] + (w[e] as i64) < dist[v] {
                return Err(Error::invalid(format!(
                    "dyng: {what} is not a shortest-path tree: edge {u} -> {v} (weight {}) gives vertex {v} distance {} < {}",
                    w[e],
                    dist[u] + w[e] as i64,
                    if is_finite(dist[v]) { dist[v].to_string() } else { "INF".into() }
                )));
            }
        }
    }
    let canonical = (0..g.n()).all(|v| v == source || parent[v] == -1 || parent[v] == lowest_tight[v]);
    Ok(canonical)
}
