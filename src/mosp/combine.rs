//! The combined graph of K trees and its static solve (the MOSP tree).
//!
//! An edge (p, v) exists iff p is v's parent in at least one tree; its weight is the base minus
//! the terms of the trees that contain it. At most K in-edges per vertex, so the scratch CSR is
//! sized n x K once and pooled like every other workspace.
//!
//! After an update of the K trees the combined tree is repaired rather than solved again, where
//! the executor is not the sequential reference (whose counters are the originals'): the new
//! combined graph is compared with the old combined tree, vertex by vertex (a tree edge gone or
//! heavier is a root, an in-edge that improves on a vertex's old distance and parent a head), and
//! the engine's update turns the old canonical tree into the new one, as for any batch; its
//! adaptive policy recomputes when most of the tree changes, and an update that recomputed one
//! of the K trees solves the combined graph afresh (that tree alone changed a third of the
//! vertices or more). The result is the canonical tree of the new combined graph either way. On
//! the 1000^2 grid's local batches the combine step fell from 82 to 46 ms (K = 3, 1 thread).
//!
//! The scratch is 12 + 16 K bytes per vertex (the combined graph both ways), plus the change lists
//! of a repair.

use super::preferences::Preferences;
use crate::error::Result;
use crate::graph::{reserve_for, resize_for_overwrite};
use crate::resources::{PooledWorkspace, Resources};
use crate::sssp::engine::is_finite;
use crate::sssp::exec::Exec;
use crate::sssp::{default_delta, engine, with_exec, Fallback, UpdateStats, Workspace};

/// Scratch for building the combined graph.
#[derive(Default)]
pub struct CombineWorkspace {
    row_ptr: Vec<i32>,
    col_ind: Vec<i32>,
    weights: Vec<i32>,
    cursor: Vec<i32>,
    /// The repair's reverse graph and changes (see [`Repair`]).
    repair: Repair,
}

/// What repairing the combined tree needs besides the combined graph: its in-edges (row v: v's
/// distinct parents among the trees, with their weights) and the changes against the old tree.
#[derive(Default)]
struct Repair {
    in_row_ptr: Vec<i32>,
    in_tails: Vec<i32>,
    in_weights: Vec<i32>,
    /// Old tree edges gone from the new combined graph or heavier in it.
    from: Vec<i32>,
    to: Vec<i32>,
    /// Vertices with an in-edge better than their old (distance, parent), and that edge.
    heads: Vec<i32>,
    head_tails: Vec<i32>,
    head_weights: Vec<i32>,
}

impl Repair {
    /// The in-edges of the combined graph of `parents`: row v holds v's distinct parents in tree
    /// order, with their weights; true when an array had to grow.
    fn build_in_edges(&mut self, parents: &[&[i32]], source: usize, terms: &[i64], base: i64) -> bool {
        let (n, k) = (parents.first().map_or(0, |p| p.len()), parents.len());
        let before = self.capacity();
        self.in_row_ptr.clear();
        self.in_row_ptr.reserve(n + 1);
        self.in_row_ptr.push(0);
        self.in_tails.clear();
        self.in_weights.clear();
        for v in 0..n {
            if v != source {
                for j in 0..k {
                    if let Some(w) = first_occurrence_weight(parents, v, j, terms, base) {
                        self.in_tails.push(parents[j][v]);
                        self.in_weights.push(w as i32);
                    }
                }
            }
            self.in_row_ptr.push(self.in_tails.len() as i32);
        }
        self.capacity() > before
    }

    /// Lists the changes of the combined graph (its in-edges built) against the old combined
    /// tree `dist`/`parent`: old tree edges gone or heavier (roots), and vertices with an in-edge
    /// better than their old (distance, parent) (heads); true when an array had to grow.
    fn diff(&mut self, source: usize, dist: &[i64], parent: &[i32]) -> bool {
        let before = self.capacity();
        for list in [&mut self.from, &mut self.to, &mut self.heads, &mut self.head_tails, &mut self.head_weights] {
            list.clear();
        }
        for v in (0..dist.len()).filter(|&v| v != source) {
            let row = self.in_row_ptr[v] as usize..self.in_row_ptr[v + 1] as usize;
            let (tails, weights) = (&self.in_tails[row.clone()], &self.in_weights[row]);
            let (dv, pv) = (dist[v], parent[v]);
            if pv >= 0 {
                let old = dv - dist[pv as usize];
                let now = tails.iter().position(|&p| p == pv).map(|e| weights[e] as i64);
                if now.map_or(true, |w| w > old) {
                    self.from.push(pv);
                    self.to.push(v as i32);
                }
            }
            let mut best: Option<((i64, i32), i32)> = None;
            for (&p, &w) in tails.iter().zip(weights) {
                let dp = dist[p as usize];
                if !is_finite(dp) {
                    continue;
                }
                let cand = (dp + w as i64, p);
                if (!is_finite(dv) || cand < (dv, pv)) && best.map_or(true, |(b, _)| cand < b) {
                    best = Some((cand, w));
                }
            }
            if let Some(((_, p), w)) = best {
                self.heads.push(v as i32);
                self.head_tails.push(p);
                self.head_weights.push(w);
            }
        }
        self.capacity() > before
    }

    fn capacity(&self) -> usize {
        [&self.in_row_ptr, &self.in_tails, &self.in_weights, &self.from, &self.to, &self.heads, &self.head_tails, &self.head_weights]
            .iter()
            .map(|v| v.capacity())
            .sum()
    }
}

impl PooledWorkspace for CombineWorkspace {
    fn bytes(&self) -> usize {
        4 * (self.row_ptr.capacity()
            + self.col_ind.capacity()
            + self.weights.capacity()
            + self.cursor.capacity()
            + self.repair.capacity())
    }
}

impl CombineWorkspace {
    /// Makes room for `n` vertices and `k` trees, `row_ptr` zeroed; true when it had to allocate.
    /// The other arrays keep what they held: the build overwrites every entry it reads.
    fn reserve(&mut self, n: usize, k: usize) -> bool {
        let grew = self.row_ptr.capacity() < n + 1 || self.col_ind.capacity() < n * k;
        self.row_ptr.clear();
        self.row_ptr.resize(n + 1, 0);
        resize_for_overwrite(&mut self.cursor, n + 1);
        for a in [&mut self.col_ind, &mut self.weights] {
            if a.capacity() < n * k {
                reserve_for(a, n * k);
            }
        }
        grew
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
    /// Counters of the static solve on the combined graph.
    pub search: UpdateStats,
    /// Wall-clock time of building and solving the combined graph, in nanoseconds.
    pub elapsed_ns: u64,
}

/// The weight of edge `(parents[k][v], v)` if this is its first occurrence among the trees.
#[inline(always)]
fn first_occurrence_weight(parents: &[&[i32]], v: usize, k: usize, terms: &[i64], base: i64) -> Option<i64> {
    let p = parents[k][v];
    if p < 0 || parents[..k].iter().any(|t| t[v] == p) {
        return None;
    }
    let shared: i64 = (k + 1..parents.len())
        .filter(|&j| parents[j][v] == p)
        .map(|j| terms[j])
        .sum();
    Some(base - terms[k] - shared)
}

/// Repairs the old combined tree `dist`/`parent` into the canonical tree of the combined graph
/// `out`, from the in-edges and changes in `scratch` (`Repair::build_in_edges`, `Repair::diff`);
/// the adaptive policy may recompute instead.
#[allow(clippy::too_many_arguments)]
fn repair<E: Exec>(
    e: &E,
    out: engine::OutView<'_>,
    scratch: &Repair,
    source: usize,
    delta: i64,
    base: i64,
    ws: &mut Workspace,
    dist: &mut [i64],
    parent: &mut [i32],
) -> Result<UpdateStats> {
    let n = dist.len();
    let inn = || engine::InView {
        row_ptr: &scratch.in_row_ptr,
        tails: &scratch.in_tails,
        w: &scratch.in_weights,
    };
    let changes = engine::Changes {
        from: &scratch.from,
        to: &scratch.to,
        heads: &scratch.heads,
        inserted: Some(engine::Inserted {
            from: &scratch.head_tails,
            weights: &scratch.head_weights,
            stride: 1,
            column: 0,
        }),
    };
    let policy = Fallback::Adaptive.policy(n, true, None, None);
    // The combined tree keeps no largest distance between updates: the shortcut rule takes its
    // pass when it needs one.
    let (stats, _) = engine::update(e, out, inn, changes, source, delta, base, policy, engine::OldTree::Trusted, ws, dist, parent, &mut None)?;
    Ok(stats)
}

/// Builds the combined graph of `parents` (one array per tree) and solves it from `source` into
/// `dist`/`parent`. Rows are filled by ascending v, then k (the single-threaded order).
///
/// `previous`: `dist`/`parent` hold the combined tree of the trees before their last update (the
/// canonical tree of the combined graph then), which a parallel executor repairs.
#[allow(clippy::too_many_arguments)]
pub(crate) fn combine_and_solve(
    res: &Resources,
    parents: &[&[i32]],
    source: usize,
    prefs: &Preferences,
    ws: &mut Workspace,
    dist: &mut [i64],
    parent: &mut [i32],
    previous: bool,
) -> Result<CombineStats> {
    let started = std::time::Instant::now();
    if let Some(cuda) = res.cuda() {
        let stats = cuda.combined(res.workspaces(), parents, source, prefs, dist, parent)?;
        return Ok(CombineStats {
            elapsed_ns: started.elapsed().as_nanos() as u64,
            ..stats
        });
    }
    let n = dist.len();
    let k = parents.len();
    let terms = prefs.terms();
    let base = prefs.base();
    let mut cw = res.workspaces().lease(CombineWorkspace::default);
    if cw.reserve(n, k) {
        res.workspaces().note_growth();
    }
    let cw_ref: &mut CombineWorkspace = &mut cw;
    let CombineWorkspace { row_ptr, col_ind, weights, cursor, repair: rep } = cw_ref;
    // The in-edges first (each vertex's distinct parents, found once), then the out-edges by
    // a counting sort of them: rows filled by ascending v, then tree.
    let mut grew = rep.build_in_edges(parents, source, &terms, base);
    for &p in &rep.in_tails {
        row_ptr[p as usize + 1] += 1;
    }
    for u in 0..n {
        row_ptr[u + 1] += row_ptr[u];
    }
    let edges = row_ptr[n] as usize;
    cursor.copy_from_slice(row_ptr);
    // Each slot below is written once, so what the arrays held need not be cleared.
    resize_for_overwrite(col_ind, edges);
    resize_for_overwrite(weights, edges);
    let mut weight_sum = 0i64;
    for v in 0..n {
        for e in rep.in_row_ptr[v] as usize..rep.in_row_ptr[v + 1] as usize {
            let p = rep.in_tails[e] as usize;
            let slot = cursor[p] as usize;
            cursor[p] += 1;
            col_ind[slot] = v as i32;
            weights[slot] = rep.in_weights[e];
            weight_sum += rep.in_weights[e] as i64;
        }
    }
    let delta = default_delta(edges, n, weight_sum);
    let out = engine::OutView { row_ptr, col: col_ind, w: weights };
    let search = with_exec!(res, |e| if previous && !e.reference() {
        grew |= rep.diff(source, dist, parent);
        repair(e, out, rep, source, delta, base, ws, dist, parent)
    } else {
        engine::compute(e, out, source, delta, base, ws, dist, parent).map(|(stats, _)| stats)
    })?;
    if grew {
        res.workspaces().note_growth();
    }
    cw.give_back();
    Ok(CombineStats {
        edges,
        scale: prefs.scale(),
        delta,
        search,
        elapsed_ns: started.elapsed().as_nanos() as u64,
    })
}
