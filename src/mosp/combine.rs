//! The combined graph of K trees and its solve (the MOSP tree).
//!
//! An edge (p, v) exists iff p is v's parent in at least one tree; its weight is the base minus
//! the terms of the trees that contain it. A MOSP result keeps its combined graph
//! (`combined_graph.rs`) and, after an update of the K trees, changes it at the vertices whose
//! parent changed in a tree (found by comparing the trees with the graph's in-slots), unless
//! they are more than `n / REBUILD_SHARE` or the executor is the sequential reference (whose
//! counters are the originals': it builds the graph afresh, rows in their order, and solves it).
//!
//! The combined tree is then repaired rather than solved again: the changed vertices' in-edges
//! are compared with the old combined tree (a tree edge gone or heavier is a root, an in-edge that
//! improves on a vertex's old distance and parent a head; a vertex whose in-edges did not change
//! has neither), and the engine's update turns the old canonical tree into the new one, as for
//! any batch; its adaptive policy recomputes when most of the tree changes, and an update that
//! recomputed one of the K trees solves the combined graph afresh (that tree alone changed a
//! third of the vertices or more). The result is the canonical tree of the new combined graph
//! either way.
//!
//! The pooled scratch is the change lists of a repair (a few per changed vertex).

use super::combined_graph::CombinedGraph;
use super::preferences::Preferences;
use crate::error::Result;
use crate::resources::device::Combined;
use crate::resources::{PooledWorkspace, Resources};
use crate::sssp::run::{is_finite, OutView};
use crate::sssp::exec::Exec;
use crate::sssp::{default_delta, engine, with_exec, Fallback, UpdateStats, Workspace};

/// Past `n / REBUILD_SHARE` changed vertices the combined graph is built afresh: changing a
/// vertex in place costs a few times what building it does (two row scans per changed edge).
const REBUILD_SHARE: usize = 4;

/// Makes room for `len` entries in all (a one-time allocation at the bound of the list).
pub(super) fn reserve_total<T>(v: &mut Vec<T>, len: usize) {
    if v.capacity() < len {
        v.reserve_exact(len - v.len());
    }
}

/// Scratch of the combine step (pooled).
#[derive(Default)]
pub struct CombineWorkspace {
    /// Vertices whose parent changed in a tree.
    changed: Vec<i32>,
    /// Old tree edges gone from the new combined graph or heavier in it.
    from: Vec<i32>,
    to: Vec<i32>,
    /// Vertices with an in-edge better than their old (distance, parent), and that edge.
    heads: Vec<i32>,
    head_tails: Vec<i32>,
    head_weights: Vec<i32>,
    /// The path-cost update's scratch.
    pub(super) costs: super::costs::CostsScratch,
    /// A bit per vertex, for [`sort_distinct`].
    pub(super) bits: Vec<u64>,
    /// The solve over the graph's rows (a result that keeps no combined graph).
    rows: super::over_rows::RowsScratch,
}

/// Sorts `list` (ids below `n`) and drops its repeats: by a sort while it is short, else by a
/// bitmap of n bits, a pass over n/64 words (the grid's local 10K batch lists 904K touched
/// vertices in its three trees, 316K distinct: 14 ms to sort).
pub(super) fn sort_distinct(list: &mut Vec<i32>, n: usize, bits: &mut Vec<u64>) {
    if list.len() < n / 16 {
        list.sort_unstable();
        list.dedup();
        return;
    }
    bits.clear();
    bits.resize(n.div_ceil(64), 0);
    for &v in list.iter() {
        bits[v as usize / 64] |= 1 << (v as usize % 64);
    }
    list.clear();
    for (w, &word) in bits.iter().enumerate() {
        let mut x = word;
        while x != 0 {
            list.push((w * 64 + x.trailing_zeros() as usize) as i32);
            x &= x - 1;
        }
    }
}

impl CombineWorkspace {
    fn lists(&self) -> [&Vec<i32>; 6] {
        [&self.changed, &self.from, &self.to, &self.heads, &self.head_tails, &self.head_weights]
    }

    /// Lists in `changed`, by ascending id (which keeps the changes in place near each other in
    /// memory: in the touched lists' search order they cost twice as much), the vertices whose
    /// parents in `parents` differ from those `g` was built from, looking only at `touched`
    /// (ascending, distinct) when given; false, with the list incomplete, once there are more
    /// than `limit`.
    fn list_changed(&mut self, g: &CombinedGraph, parents: &[&[i32]], touched: Option<&[i32]>, limit: usize) -> bool {
        self.changed.clear();
        reserve_total(&mut self.changed, limit);
        let mut look = |v: usize| {
            if g.changed(parents, v) {
                if self.changed.len() == limit {
                    return false;
                }
                self.changed.push(v as i32);
            }
            true
        };
        match touched {
            Some(list) => list.iter().all(|&v| look(v as usize)),
            None => (0..g.n()).all(look),
        }
    }

    /// Capacity of the lists, in entries.
    fn capacity(&self) -> usize {
        self.lists().iter().map(|v| v.capacity()).sum()
    }

    /// Lists the changes of the combined graph at `v` against the old combined tree
    /// `dist`/`parent`: the old tree edge into v if it is gone or heavier (a root), and v's best
    /// in-edge if it improves on v's old (distance, parent) (a head).
    fn diff_vertex(&mut self, g: &CombinedGraph, v: usize, dist: &[i64], parent: &[i32]) {
        let (tails, weights) = g.in_slots(v);
        let (dv, pv) = (dist[v], parent[v]);
        if pv >= 0 {
            let old = dv - dist[pv as usize];
            let now = tails.iter().position(|&p| p == pv).map(|e| weights[e] as i64);
            if now.is_none_or(|w| w > old) {
                self.from.push(pv);
                self.to.push(v as i32);
            }
        }
        let mut best: Option<((i64, i32), i32)> = None;
        for (&p, &w) in tails.iter().zip(weights) {
            // A self slot stands for a tree without a parent of v.
            if p == v as i32 {
                continue;
            }
            let dp = dist[p as usize];
            if !is_finite(dp) {
                continue;
            }
            let cand = (dp + w as i64, p);
            if (!is_finite(dv) || cand < (dv, pv)) && best.is_none_or(|(b, _)| cand < b) {
                best = Some((cand, w));
            }
        }
        if let Some(((_, p), w)) = best {
            self.heads.push(v as i32);
            self.head_tails.push(p);
            self.head_weights.push(w);
        }
    }

    /// The changes at `vertices` (every vertex but the source when `None`).
    fn diff(&mut self, g: &CombinedGraph, source: usize, vertices: Option<&[i32]>, dist: &[i64], parent: &[i32]) {
        // Room for every vertex once, so that no later batch grows the lists.
        for list in [&mut self.from, &mut self.to, &mut self.heads, &mut self.head_tails, &mut self.head_weights] {
            list.clear();
            reserve_total(list, dist.len());
        }
        match vertices {
            Some(vs) => {
                for &v in vs {
                    self.diff_vertex(g, v as usize, dist, parent);
                }
            }
            None => {
                for v in (0..dist.len()).filter(|&v| v != source) {
                    self.diff_vertex(g, v, dist, parent);
                }
            }
        }
    }
}

impl PooledWorkspace for CombineWorkspace {
    fn bytes(&self) -> usize {
        4 * self.capacity() + self.costs.bytes() + 8 * self.bits.capacity() + self.rows.bytes()
    }
}

/// What the combine step did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CombineStats {
    /// Edges of the combined graph.
    pub edges: usize,
    /// L = lcm(Pref).
    pub scale: u64,
    /// The combined search's Delta (its own default).
    pub delta: i64,
    /// The vertices whose in-edges the kept combined graph changed in place (their parents
    /// changed in a tree); `None` where it was built afresh.
    pub in_place: Option<usize>,
    /// Counters of the static solve on the combined graph.
    pub search: UpdateStats,
    /// Wall-clock time of building and solving the combined graph, in nanoseconds.
    pub elapsed_ns: u64,
    /// Wall-clock time of the MOSP tree's path costs that followed (written afresh, or below
    /// the vertices the combined repair touched), in nanoseconds.
    pub costs_ns: u64,
}

/// Repairs the old combined tree `dist`/`parent` into the canonical tree of `g`, from the
/// changes listed in `cw` (`CombineWorkspace::diff`); the adaptive policy may recompute instead.
#[allow(clippy::too_many_arguments)]
fn repair<E: Exec>(
    e: &E,
    g: &CombinedGraph,
    cw: &CombineWorkspace,
    source: usize,
    delta: i64,
    base: i64,
    ws: &mut Workspace,
    dist: &mut [i64],
    parent: &mut [i32],
    largest: &mut Option<i64>,
) -> Result<UpdateStats> {
    let n = dist.len();
    let changes = crate::sssp::run::Changes {
        from: &cw.from,
        to: &cw.to,
        heads: &cw.heads,
        inserted: Some(crate::sssp::run::Inserted {
            from: &cw.head_tails,
            weights: &cw.head_weights,
            stride: 1,
            column: 0,
        }),
    };
    // The combined graph's changes are its trees' touched vertices, a few times a batch's
    // changes: its quick walk takes up to n / 32 of them.
    let policy = Fallback::Adaptive.policy(n, true, None, None).map(|a| engine::Adaptive { quick_changes: n / 32, ..a });
    let inn = || engine::InEdges::Rows(g.in_view());
    let (stats, _) = engine::update(e, g.out_view(), inn, changes, source, delta, base, policy, None, engine::OldTree::Trusted, ws, dist, parent, largest)?;
    Ok(stats)
}

/// How the combined tree was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Solved {
    /// Solved afresh (or on a device): every vertex may have changed.
    Afresh,
    /// Repaired, and the SSSP workspace lists every vertex whose combined parent changed
    /// (`Workspace::touched_listed`).
    Touched,
}

/// Brings the combined graph `g` to the trees `parents` (one array per tree), solved on `graph`,
/// and solves it from `source` into `dist`/`parent`.
///
/// `previous`: `dist`/`parent` hold the combined tree of the trees before their last update (the
/// canonical tree of `g` as it was), which a parallel executor repairs. `largest`: that tree's
/// largest finite distance where known, on return the new tree's (see `SsspResult::largest`).
/// `keep`: the graph is kept for the next update, with its in-slots (else it is built without
/// them and solved afresh: see `MospResult::keep_combined_graph`).
#[allow(clippy::too_many_arguments)]
pub(crate) fn combine_and_solve(
    res: &Resources,
    graph: &OutView<'_>,
    parents: &[&[i32]],
    touched: Option<&[i32]>,
    source: usize,
    prefs: &Preferences,
    g: &mut CombinedGraph,
    cw: &mut CombineWorkspace,
    ws: &mut Workspace,
    dist: &mut [i64],
    parent: &mut [i32],
    largest: &mut Option<i64>,
    previous: bool,
    keep: bool,
) -> Result<(CombineStats, Solved)> {
    let started = std::time::Instant::now();
    if !previous {
        *largest = None;
    }
    let (n, k) = (dist.len(), parents.len());
    let terms = prefs.terms();
    let base = prefs.base();
    let mut solved = Solved::Afresh;
    let combined = res.device().combine(res, parents, source, &terms, base, (dist, parent, largest), |(dist, parent, largest)| {
        with_exec!(res, |e| {
            // The previous combined tree is repaired, and the graph changed in place where it
            // fits, unless the executor is the reference, the result keeps no graph, or there is
            // no previous tree (after a tree's recompute, a third or more of its vertices
            // searched, the parents changed at more vertices than pay for changes in place:
            // usroads local 10K, 30-60 %).
            let repairs = previous && keep && !e.reference();
            // Nothing kept, nothing to repair and one thread: no combined graph is built (see
            // `over_rows`). With more threads the build's passes and a team's search are faster
            // (the 1000^2 grid's local 10K batch at 2 threads: 0.69x of the solve over the rows),
            // unless the trees reach a small part of the graph.
            let afresh = !previous && !keep && !e.reference();
            let little = afresh && super::over_rows::trees_reach_little(parents, source);
            if afresh && (little || !e.concurrent_loops()) {
                if let Some(s) = super::over_rows::solve_over_rows(graph, parents, source, &terms, base, &mut cw.rows, dist, parent, little) {
                    *largest = Some(s.largest);
                    return Ok(Combined {
                        edges: s.edges,
                        delta: default_delta(s.edges, n, s.weight_sum),
                        search: s.stats,
                        in_place: None,
                        host_graph_kept: false,
                    });
                }
            }
            // The vertices whose parent changed, when the graph can be changed at them.
            let mut in_place = false;
            cw.changed.clear();
            if repairs && g.fits(n, k) {
                in_place = cw.list_changed(g, parents, touched, n / REBUILD_SHARE);
                if in_place {
                    for &v in &cw.changed {
                        g.update_vertex(parents, v as usize, &terms, base);
                    }
                }
            }
            if !in_place {
                g.build(e, parents, source, &terms, base, keep, Some(graph));
            }
            let delta = default_delta(g.edges(), n, g.weight_sum());
            if repairs {
                let changed = std::mem::take(&mut cw.changed);
                cw.diff(g, source, in_place.then_some(&changed[..]), dist, parent);
                cw.changed = changed;
                repair(e, g, cw, source, delta, base, ws, dist, parent, largest).inspect(|_| {
                    if ws.touched_listed {
                        solved = Solved::Touched;
                    }
                })
            } else {
                engine::compute(e, g.out_view(), source, delta, base, ws, dist, parent).map(|(stats, l)| {
                    *largest = Some(l);
                    stats
                })
            }
            .map(|search| Combined {
                edges: g.edges(),
                delta,
                search,
                in_place: in_place.then_some(cw.changed.len()),
                host_graph_kept: true,
            })
        })
    })?;
    if !combined.host_graph_kept {
        g.invalidate();
    }
    let stats = CombineStats {
        edges: combined.edges,
        scale: prefs.scale(),
        delta: combined.delta,
        in_place: combined.in_place,
        search: combined.search,
        elapsed_ns: started.elapsed().as_nanos() as u64,
        costs_ns: 0, // timed by the caller, which writes the costs
    };
    Ok((stats, solved))
}

#[cfg(test)]
mod tests {
    use super::sort_distinct;
    use crate::io::generators::rng::Mt19937;

    /// Short lists are sorted, long ones go through the bitmap: both give the ascending distinct ids.
    #[test]
    fn sort_distinct_sorts_and_drops_repeats_either_way() {
        let mut rng = Mt19937::new(17);
        let mut bits = Vec::new();
        for (n, len) in [(1000, 10), (1000, 62), (1000, 63), (1000, 3000), (4097, 9000), (64, 64), (1, 5)] {
            let list: Vec<i32> = (0..len).map(|_| (rng.next_u32() % n as u32) as i32).collect();
            let mut want = list.clone();
            want.sort_unstable();
            want.dedup();
            let mut got = list;
            sort_distinct(&mut got, n, &mut bits);
            assert_eq!(got, want, "n {n}, {len} ids");
        }
    }
}
