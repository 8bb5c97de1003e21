//! The combined graph of K trees and its static solve (the MOSP tree).
//!
//! An edge (p, v) exists iff p is v's parent in at least one tree; its weight is the base minus
//! the terms of the trees that contain it. At most K in-edges per vertex, so the scratch CSR is
//! sized n x K once and pooled like every other workspace.

use super::preferences::Preferences;
use crate::error::Result;
use crate::graph::{reserve_for, resize_for_overwrite};
use crate::resources::{PooledWorkspace, Resources};
use crate::sssp::{default_delta, engine, with_exec, UpdateStats, Workspace};

/// Scratch for building the combined graph.
#[derive(Default)]
pub struct CombineWorkspace {
    row_ptr: Vec<i32>,
    col_ind: Vec<i32>,
    weights: Vec<i32>,
    cursor: Vec<i32>,
}

impl PooledWorkspace for CombineWorkspace {
    fn bytes(&self) -> usize {
        4 * (self.row_ptr.capacity()
            + self.col_ind.capacity()
            + self.weights.capacity()
            + self.cursor.capacity())
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

/// The weight of edge (parents[k][v], v) if this is its first occurrence among the trees.
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

/// Builds the combined graph of `parents` (one array per tree) and solves it from `source` into
/// `dist`/`parent`. Rows are filled by ascending v, then k (the single-threaded order).
pub(crate) fn combine_and_solve(
    res: &Resources,
    parents: &[&[i32]],
    source: usize,
    prefs: &Preferences,
    ws: &mut Workspace,
    dist: &mut [i64],
    parent: &mut [i32],
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
    let mut weight_sum = 0i64;
    for v in (0..n).filter(|&v| v != source) {
        for j in 0..k {
            if first_occurrence_weight(parents, v, j, &terms, base).is_some() {
                cw_ref.row_ptr[parents[j][v] as usize + 1] += 1;
            }
        }
    }
    for u in 0..n {
        cw_ref.row_ptr[u + 1] += cw_ref.row_ptr[u];
    }
    let edges = cw_ref.row_ptr[n] as usize;
    cw_ref.cursor.copy_from_slice(&cw_ref.row_ptr);
    // Each slot below is written once (a vertex's first-occurrence edges, one per distinct
    // parent), so what the arrays held need not be cleared.
    resize_for_overwrite(&mut cw_ref.col_ind, edges);
    resize_for_overwrite(&mut cw_ref.weights, edges);
    for v in (0..n).filter(|&v| v != source) {
        for j in 0..k {
            if let Some(w) = first_occurrence_weight(parents, v, j, &terms, base) {
                let p = parents[j][v] as usize;
                let slot = cw_ref.cursor[p] as usize;
                cw_ref.cursor[p] += 1;
                cw_ref.col_ind[slot] = v as i32;
                cw_ref.weights[slot] = w as i32;
                weight_sum += w;
            }
        }
    }
    let delta = default_delta(edges, n, weight_sum);
    let out = engine::OutView {
        row_ptr: &cw_ref.row_ptr,
        col: &cw_ref.col_ind,
        w: &cw_ref.weights,
    };
    let search = with_exec!(res, |e| engine::compute(e, out, source, delta, base, ws, dist, parent))?;
    cw.give_back();
    Ok(CombineStats {
        edges,
        scale: prefs.scale(),
        delta,
        search,
        elapsed_ns: started.elapsed().as_nanos() as u64,
    })
}
