//! `update`: apply a batch once and bring every listed result up to date.
//!
//! Validate, then commit: the batch, the results' freshness and every capacity limit are checked
//! before anything changes, and the updated graph is committed only when every result has been
//! updated. Results adopted through `from_arrays` or computed by dyng are valid trees, so once
//! validation passed the engines cannot fail on their input. All results of one call run one after
//! another on one leased workspace.

use crate::error::{Error, Result};
use crate::graph::apply::apply_reversed_into;
use crate::graph::{apply_batch_into, BatchView, Csr, Graph, GraphBuffers, InEdges};
use crate::mosp::MospResult;
use crate::resources::Resources;
use crate::sssp::engine::{self, Changes};
use crate::sssp::packing::Packing;
use crate::sssp::{
    default_delta, graph_delta, in_view, lease_workspace, out_view, with_exec, SsspResult,
    UpdateStats, Workspace,
};
use std::cell::Cell;
use std::sync::{Arc, OnceLock};

/// A result to bring up to date.
pub enum ResultMut<'a> {
    Sssp(&'a mut SsspResult),
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
}

/// Per-objective facts of the graph BEFORE the batch, plus the batch's inserted weights: the
/// originals' inputs to packing (max weight) and to the default Delta (original m and weight sum).
struct ObjectiveFacts {
    max_weight: i64,
    weight_sum: i64,
}

fn objective_facts(g: &Csr, batch: &BatchView<'_>, j: usize) -> ObjectiveFacts {
    let inserted = (0..batch.num_insertions())
        .map(|i| batch.ins_weights[i * batch.k + j])
        .max()
        .unwrap_or(1);
    ObjectiveFacts {
        max_weight: (g.max_weight(j).max(inserted)) as i64,
        weight_sum: g.weight_sum(j),
    }
}

/// Where the time of one `update` call went (nanoseconds; the engines' own times are in the
/// results' stats).
#[derive(Debug, Clone, Copy, Default)]
pub struct UpdateTimings {
    /// Applying the batch to the graph.
    pub apply_ns: u64,
    /// Building the per-objective change lists, leasing the workspace, and building the reverse
    /// graph if a repair needed it (a recompute does not; when every result recomputed, the
    /// reverse graph is never built).
    pub prepare_ns: u64,
}

/// Applies `batch` to `graph` once and updates every result. Returns one stats record per result
/// (a MOSP result's counters are summed over its K objectives).
pub fn update(
    res: &Resources,
    graph: &mut Graph,
    batch: &BatchView<'_>,
    results: &mut [ResultMut<'_>],
) -> Result<Vec<UpdateStats>> {
    update_timed(res, graph, batch, results).map(|(stats, _)| stats)
}

/// [`update`], also reporting where the time went.
pub fn update_timed(
    res: &Resources,
    graph: &mut Graph,
    batch: &BatchView<'_>,
    results: &mut [ResultMut<'_>],
) -> Result<(Vec<UpdateStats>, UpdateTimings)> {
    let (n, kg) = (graph.n(), graph.k());
    batch.validate(n, kg)?;
    for (i, r) in results.iter().enumerate() {
        let (id, version) = r.graph_state();
        if id != graph.id() {
            return Err(Error::StaleResult(format!(
                "dyng: result {i} was computed on another graph"
            )));
        }
        if version != graph.version() {
            return Err(Error::StaleResult(format!(
                "dyng: result {i} belongs to version {version} of the graph, which is now at version {}",
                graph.version()
            )));
        }
    }
    let mut facts: Vec<Option<ObjectiveFacts>> = (0..kg).map(|_| None).collect();
    for r in results.iter() {
        for j in r.objectives() {
            if facts[j].is_none() {
                let f = objective_facts(graph.csr(), batch, j);
                Packing::choose(n, f.max_weight)?;
                facts[j] = Some(f);
            }
        }
        if let ResultMut::Mosp(m) = r {
            Packing::choose(n, m.prefs.base())?;
        }
    }

    let clock = std::time::Instant::now();
    // The new state is written into the arrays of a replaced one, kept in the pool (see
    // `GraphBuffers`); the state this update replaces goes back in their place.
    let mut buffers = res.workspaces().lease(GraphBuffers::default);
    let (applied, grew) = apply_batch_into(graph.csr(), batch, &mut buffers)?;
    if grew {
        res.workspaces().note_growth();
    }
    let mut timings = UpdateTimings {
        apply_ns: clock.elapsed().as_nanos() as u64,
        ..Default::default()
    };
    let clock = std::time::Instant::now();
    let new_csr = applied.csr;
    // What the engines read besides the updated CSR, built once for all results: the host
    // engines the reverse graph, the CUDA engine one device copy of the graph.
    let prepared = match res.cuda() {
        Some(cuda) => Prepared::Device(cuda.upload_graph(&new_csr)?),
        None => Prepared::Host(LazyInEdges {
            spare: Cell::new(buffers.take_in_edges()),
            before: graph.built_in_edges().map(|old| (old, *batch)),
            cell: OnceLock::new(),
            build_ns: Cell::new(0),
            grew: Cell::new(false),
        }),
    };
    let changed = ChangedLists::new(batch, &applied.increase_masks);
    let original_m = graph.m().max(1);
    let mut ws = lease_workspace(res, n);
    timings.prepare_ns = clock.elapsed().as_nanos() as u64;
    let mut all_stats = Vec::with_capacity(results.len());
    let ctx = Ctx {
        res,
        csr: &new_csr,
        prepared: &prepared,
        changed: &changed,
        facts: &facts,
        original_m,
    };
    for r in results.iter_mut() {
        let stats = match r {
            ResultMut::Sssp(s) => ctx.update_tree(s, &mut ws)?,
            ResultMut::Mosp(m) => {
                let mut each = Vec::with_capacity(m.trees.len());
                // The vertices whose parents may have changed, for the combine step to look at.
                m.touched.clear();
                m.touched.resize(n.div_ceil(64), 0);
                let mut listed = true;
                for t in m.trees.iter_mut() {
                    ws.touched_listed = false;
                    each.push(ctx.update_tree(t, &mut ws)?);
                    listed &= ws.touched_listed;
                    if listed {
                        for i in 0..ws.candidates.len() {
                            let v = ws.candidates.get(i) as usize;
                            m.touched[v / 64] |= 1 << (v % 64);
                        }
                    }
                }
                m.touched_listed = listed;
                UpdateStats::sum(&each)
            }
        };
        all_stats.push(stats);
    }
    *buffers = match prepared {
        Prepared::Host(lazy) => {
            timings.prepare_ns += lazy.build_ns.get();
            if lazy.grew.get() {
                res.workspaces().note_growth();
            }
            let unused = lazy.spare.take();
            let mut replaced = match lazy.cell.into_inner() {
                Some(in_edges) => graph.commit_with_in_edges(new_csr, in_edges),
                None => graph.commit(new_csr),
            };
            replaced.keep_in_edges(unused);
            replaced
        }
        Prepared::Device(_) => graph.commit(new_csr),
    };
    buffers.give_back();
    for r in results.iter_mut() {
        if let ResultMut::Mosp(m) = r {
            m.recombine(res, graph, &mut ws, Some(batch))?;
        }
    }
    ws.give_back();
    for r in results.iter_mut() {
        match r {
            ResultMut::Sssp(s) => s.version = graph.version(),
            ResultMut::Mosp(m) => {
                m.version = graph.version();
                for t in m.trees.iter_mut() {
                    t.version = graph.version();
                }
            }
        }
    }
    Ok((all_stats, timings))
}

/// The per-objective changed-edge lists: all deletions (batch order, duplicates kept), then every
/// insertion whose mask has the objective's bit.
struct ChangedLists<'b> {
    batch: &'b BatchView<'b>,
    masks: &'b [u64],
}

impl<'b> ChangedLists<'b> {
    fn new(batch: &'b BatchView<'b>, masks: &'b [u64]) -> Self {
        ChangedLists { batch, masks }
    }

    fn for_objective(&self, j: usize) -> (Vec<i32>, Vec<i32>) {
        let b = self.batch;
        let mut from = b.del_src.to_vec();
        let mut to = b.del_dst.to_vec();
        for (i, &mask) in self.masks.iter().enumerate() {
            if mask >> j & 1 == 1 {
                from.push(b.ins_src[i]);
                to.push(b.ins_dst[i]);
            }
        }
        (from, to)
    }
}

/// The engine-specific form of the updated graph (one per `update` call, so the size difference
/// of the variants does not matter).
#[allow(clippy::large_enum_variant)]
enum Prepared<'g> {
    Host(LazyInEdges<'g>),
    Device(crate::cuda::DeviceGraph),
}

impl Prepared<'_> {
    /// Time spent so far building the host reverse graph (0 for a device graph).
    fn in_edges_build_ns(&self) -> u64 {
        match self {
            Prepared::Host(lazy) => lazy.build_ns.get(),
            Prepared::Device(_) => 0,
        }
    }
}

/// The reverse graph of the updated CSR, made when a repair first pulls (a recompute never
/// does: on usroads K = 3 with a 10K-change batch that every objective recomputes, building it
/// took 2.7-3.3 ms of a 38 ms MOSP update, on the 1000^2 grid 39-69 of 570 ms). Its time counts
/// as preparation, as when it was built up front, not as the objective's engine time.
///
/// Where the state before the batch has a reverse graph, the batch is applied to it (edges
/// turned around, `apply_reversed_into`) instead: an apply copies unchanged rows, where a build
/// scatters every edge (the 1M-vertex random geometric graph: 240 ms to build, about an apply's
/// 30-70 ms to apply).
struct LazyInEdges<'g> {
    /// The reverse graph of the state before the batch, and the batch.
    before: Option<(&'g InEdges, BatchView<'g>)>,
    cell: OnceLock<InEdges>,
    build_ns: Cell<u64>,
    /// Arrays of a replaced state's reverse graph, to build into (see `GraphBuffers`).
    spare: Cell<Option<InEdges>>,
    /// The build had to allocate (no spare arrays, or too small ones).
    grew: Cell<bool>,
}

impl LazyInEdges<'_> {
    fn get(&self, csr: &Csr) -> &InEdges {
        self.cell.get_or_init(|| {
            let clock = std::time::Instant::now();
            let spare = self.spare.take().unwrap_or_default();
            let held = spare.capacity_bytes();
            // The batch was validated and applied to the CSR already, so applying it to the
            // reverse graph cannot fail; were it to, a build gives the same graph.
            let built = match self.before {
                Some((old, batch)) => match apply_reversed_into(old, csr.k(), &batch, spare) {
                    Ok((in_edges, _)) => in_edges,
                    Err(_) => InEdges::build(csr),
                },
                None => InEdges::build_into(csr, spare),
            };
            self.grew.set(built.capacity_bytes() > held);
            self.build_ns.set(clock.elapsed().as_nanos() as u64);
            built
        })
    }
}

struct Ctx<'a> {
    res: &'a Resources,
    csr: &'a Csr,
    prepared: &'a Prepared<'a>,
    changed: &'a ChangedLists<'a>,
    facts: &'a [Option<ObjectiveFacts>],
    original_m: usize,
}

impl Ctx<'_> {
    fn update_tree(&self, t: &mut SsspResult, ws: &mut Workspace) -> Result<UpdateStats> {
        let j = t.objective;
        let f = self.facts[j]
            .as_ref()
            .ok_or_else(|| Error::Internal("objective facts missing".into()))?;
        let delta = t
            .delta
            .unwrap_or_else(|| default_delta(self.original_m, self.csr.n(), f.weight_sum));
        let (from, to) = self.changed.for_objective(j);
        let b = self.changed.batch;
        let changes = Changes {
            from: &from,
            to: &to,
            heads: b.ins_dst,
            inserted: Some(engine::Inserted {
                from: b.ins_src,
                weights: b.ins_weights,
                stride: b.k,
                column: j,
            }),
        };
        let started = std::time::Instant::now();
        let built_before = self.prepared.in_edges_build_ns();
        let dist = Arc::make_mut(&mut t.dist);
        let parent = Arc::make_mut(&mut t.parent);
        let stats = match (self.prepared, self.res.cuda()) {
            (Prepared::Device(dg), Some(cuda)) => {
                let set = crate::cuda::ChangeSet {
                    from: changes.from,
                    to: changes.to,
                    heads: changes.heads,
                };
                // The device engine does not track the largest distance.
                t.largest = None;
                (cuda.sssp_update(self.res.workspaces(), dg, j, set, t.source, delta, f.max_weight, dist, parent)?, None)
            }
            (Prepared::Device(_), None) => {
                return Err(Error::Internal("a device graph without a CUDA engine".into()))
            }
            (Prepared::Host(lazy), _) => with_exec!(self.res, |e| engine::update(
            e,
            out_view(self.csr, j),
            || in_view(lazy.get(self.csr), j),
            changes,
            t.source,
            delta,
            f.max_weight,
            t.fallback.policy(self.csr.n(), t.canonical, t.static_pushes, t.delta.is_none().then(|| graph_delta(self.csr, j))),
            engine::OldTree::Trusted,
            ws,
            dist,
            parent,
            &mut t.largest
        ))?,
        };
        let (stats, solved) = stats;
        if solved.is_some() {
            t.static_pushes = solved;
        }
        // A reverse graph built during this run is preparation (see `LazyInEdges`).
        let built = self.prepared.in_edges_build_ns() - built_before;
        t.stats = UpdateStats {
            elapsed_ns: (started.elapsed().as_nanos() as u64).saturating_sub(built),
            ..stats
        };
        Ok(t.stats)
    }
}

/// Convenience: update a single result.
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
    use crate::graph::Batch;
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
        let (d, p) = crate::graph::dijkstra::dijkstra(g.csr(), 0, 0);
        assert_eq!((r.distances(), r.parents()), (&d[..], &p[..]));
        (s[0].fallback_used, g.has_in_edges())
    }

    #[test]
    fn the_reverse_graph_is_built_only_for_a_repair() {
        assert_eq!(builds_in_edges(Fallback::Never), (false, true));
        assert_eq!(builds_in_edges(Fallback::Always), (true, false));
    }

    /// At two threads a repair runs as a team or on one member, by `TeamChoice` (static solves
    /// always as a team): forced either way, a stream of repairs gives the same trees (those of
    /// Dijkstra), and the expansions show which way ran (the one-member bucket queue expands
    /// each touched vertex once, near-far some of them again).
    #[test]
    fn a_team_and_one_member_give_the_same_trees() {
        use crate::io::changegen::{generate_changes, ChangeOptions};
        let t = crate::io::graphgen::grid(70, 70, 1, 1, 100, 3).unwrap();
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
                let (batch, _) = generate_changes(g.csr(), &change).unwrap();
                repair_pushes += update_one(&res, &mut g, &batch.view(), &mut r).unwrap().pushes;
                let (d, p) = crate::graph::dijkstra::dijkstra(g.csr(), 0, 0);
                assert_eq!((r.distances(), r.parents()), (&d[..], &p[..]), "step {step}, solo {solo}");
                trees.push((d, p));
            }
            runs.push((static_pushes, repair_pushes, trees));
        }
        res.team_choice().force(None);
        assert!(runs[0].0 > 4900 && runs[1].0 > 4900, "static solves: near-far teams either way");
        assert!(runs[1].1 < runs[0].1, "repairs: the bucket queue on one member {} < near-far {}", runs[1].1, runs[0].1);
        assert_eq!(runs[0].2, runs[1].2);
    }

    /// The largest distance a result keeps for the shortcut rule is, whenever it is known, the
    /// tree's largest finite distance, through a stream of repairs and recomputes (deletions
    /// that cut vertices off, shortcuts that lower the farthest ones).
    #[test]
    fn a_known_largest_distance_is_the_trees_largest() {
        use crate::io::changegen::{generate_changes, ChangeOptions};
        let t = crate::io::graphgen::grid(70, 70, 1, 1, 100, 7).unwrap();
        let csr = Csr::from_arrays(t.n, t.k, t.row_ptr, t.col_ind, &t.weights, crate::WeightLayout::EdgeMajor).unwrap();
        for threads in [1, 2] {
            let res = Resources::parallel(threads).unwrap();
            let mut g = Graph::new(csr.clone());
            let opt = SsspOptions { fallback: Fallback::Adaptive, ..Default::default() };
            let mut r = SsspResult::compute(&res, &g, 0, 0, &opt).unwrap();
            let truth = |r: &SsspResult| r.distances().iter().copied().filter(|&d| d != crate::DISTANCE_INF).max();
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
                let (batch, _) = generate_changes(g.csr(), &change).unwrap();
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
}
