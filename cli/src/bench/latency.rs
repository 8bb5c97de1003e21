//! `dyng bench latency`: small batches, the live-traffic case. On each graph one resident MOSP
//! result is updated by streams of local batches of 1, 10, 100 and 1,000 changes of three kinds
//! drawn from the current state by the original change generator (`traffic`: new weights of
//! existing roads, `congestion`: weights raised on tree roads, `closures`: roads deleted), and by
//! the 10K batches of the other suites for continuity. Every batch's MOSP update is timed end to
//! end with its parts (the balls are a few hops wide, `hops`); a MOSP compute is timed before the first stream and after each, each case set against the two around it, so both
//! sides come from one run. Per graph a line time = a + b changes + c affected is fitted to every
//! update, and the memory of the resident graph is set against the compact CSR and reverse CSR.

use super::cases::GraphSpec;
use super::measure::{median, ms, peak_rss_bytes};
use dyng::io::generators::changegen::{generate_changes, ChangeMode, ChangeOptions};
use dyng::{Csr, Graph, MospOptions, MospResult, Resources};
use serde::Serialize;
use std::time::Instant;

/// Hops of the ball a small batch of `size` changes is drawn in: about as many roads as the
/// batch changes, so that a batch stays local (a driver's view of a city district).
pub fn hops(size: usize) -> usize {
    match size {
        0..=1 => 3,
        2..=10 => 6,
        11..=100 => 12,
        _ => 30,
    }
}

/// One kind of batch of a latency case.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// New weights of existing edges (traffic).
    Traffic,
    /// Weights raised on tree edges (congestion).
    Congestion,
    /// Deletions (closures).
    Closures,
    /// The 10K batches of the other suites: safe, unsafe, local.
    Safe,
    Unsafe,
    Local,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Traffic => "traffic",
            Kind::Congestion => "congestion",
            Kind::Closures => "closures",
            Kind::Safe => "safe",
            Kind::Unsafe => "unsafe",
            Kind::Local => "local",
        }
    }

    fn options(self, size: usize, seed: u32, source: usize, spec_hops: usize) -> ChangeOptions {
        let base = ChangeOptions { changes: size, seed, source, ..Default::default() };
        let hops = hops(size);
        match self {
            Kind::Traffic => ChangeOptions { mode: ChangeMode::Reweight, local_hops: hops, ..base },
            Kind::Congestion => ChangeOptions { mode: ChangeMode::Increase, local_hops: hops, ..base },
            Kind::Closures => ChangeOptions { insert_pct: 0.0, local_hops: hops, ..base },
            Kind::Safe => ChangeOptions { safe: true, ..base },
            Kind::Unsafe => base,
            Kind::Local => ChangeOptions { safe: true, local_hops: spec_hops, ..base },
        }
    }
}

/// The cases of one graph: (kind, changes per batch).
pub fn cases(full: bool) -> Vec<(Kind, usize)> {
    if !full {
        return vec![(Kind::Traffic, 1), (Kind::Traffic, 100)];
    }
    let mut c = Vec::new();
    for kind in [Kind::Traffic, Kind::Congestion, Kind::Closures] {
        for size in [1, 10, 100, 1_000] {
            c.push((kind, size));
        }
    }
    c.extend([(Kind::Safe, 10_000), (Kind::Unsafe, 10_000), (Kind::Local, 10_000)]);
    c
}

/// One update of a stream.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Update {
    pub changes: usize,
    /// Vertices whose distance or parent changed, summed over the K trees and the combined tree.
    pub affected: i64,
    pub ms: f64,
    /// Some tree was recomputed (the adaptive policy's fallback): a compute's cost, not a repair's.
    pub recomputed: bool,
}

/// One measured case: medians over its stream's batches.
#[derive(Debug, Clone, Serialize)]
pub struct LatencyCase {
    pub graph: String,
    pub n: usize,
    pub threads: usize,
    pub kind: &'static str,
    pub size: usize,
    pub batches: usize,
    /// The MOSP update end to end, and its parts.
    pub update_ms: f64,
    pub apply_ms: f64,
    pub prepare_ms: f64,
    pub trees_ms: f64,
    pub combine_ms: f64,
    pub costs_ms: f64,
    /// The MOSP compute on the case's states: the mean of the computes timed just before and
    /// just after its stream (a stream of 10K batches can change what a compute costs, the graph's
    /// edges, not their layout).
    pub compute_ms: f64,
    pub update_over_compute: f64,
    /// Medians over the batches: changes, affected (K trees and combined), invalidated (K trees).
    pub changes: f64,
    pub affected: f64,
    pub invalidated: f64,
    /// Updates in which some tree recomputed (the adaptive policy's fallback).
    pub recomputed: usize,
    pub updates: Vec<Update>,
}

/// time = a + b changes + c affected, in ms, fitted to the repairs of a graph's small batches
/// (1 to 1,000 changes, no tree recomputed) by least squares of the relative error: the times
/// span four orders of magnitude and a shared machine's noise scales them, so that plain least
/// squares let the largest updates set the intercept (it ranged from -0.12 to 4.4 ms).
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Fit {
    pub a_ms: f64,
    pub b_ms_per_change: f64,
    pub c_ms_per_affected: f64,
}

/// One graph at one thread count.
#[derive(Debug, Clone, Serialize)]
pub struct LatencyGraph {
    pub graph: String,
    pub n: usize,
    pub m: usize,
    pub k: usize,
    pub threads: usize,
    /// The median of the computes timed around the small batches' streams (what the fit's c is
    /// set against).
    pub compute_ms: f64,
    /// Every compute of the run, in order: before the first stream, then after each.
    pub computes_ms: Vec<f64>,
    pub fit: Option<Fit>,
    /// The median of the small batches' updates that changed no vertex of any tree (the constant
    /// term read without a fit), and how many there were.
    pub unchanged_ms: Option<f64>,
    pub unchanged_updates: usize,
    /// The resident graph (rows with room to grow and the in-rows), against the compact CSR and
    /// reverse CSR of the same edges: 2 x 4 (n + 1 + m (K + 1)) bytes.
    pub graph_bytes: usize,
    /// The rows alone (without the undo log, the journal and the apply's scratch).
    pub row_bytes: usize,
    pub compact_bytes: usize,
    pub graph_bytes_per_vertex: f64,
    pub graph_bytes_per_edge: f64,
    pub compactions: u64,
    pub peak_rss_bytes: u64,
}

impl LatencyGraph {
    /// Bytes of the resident graph over the compact arrays, less one.
    pub fn overhead(&self) -> f64 {
        self.graph_bytes as f64 / self.compact_bytes as f64 - 1.0
    }

    /// Bytes of the rows (their slack and room) over the compact arrays, less one.
    pub fn row_overhead(&self) -> f64 {
        self.row_bytes as f64 / self.compact_bytes as f64 - 1.0
    }

    /// What the MOSP compute spends per vertex of one tree, in ms: `affected` counts a vertex
    /// once in each of the K trees and the combined tree it changed in, so c compares with this.
    pub fn compute_ms_per_tree_vertex(&self) -> f64 {
        self.compute_ms / (self.n as f64 * (self.k + 1) as f64)
    }
}

/// The latency results of a run.
#[derive(Debug, Clone, Default)]
pub struct Latency {
    pub graphs: Vec<LatencyGraph>,
    pub cases: Vec<LatencyCase>,
}

/// Solves the weighted normal equations of the fit (Gaussian elimination with pivoting); `None`
/// when the updates do not determine the three terms.
fn fit(updates: &[Update]) -> Option<Fit> {
    let mut a = [[0f64; 4]; 3];
    for u in updates.iter().filter(|u| u.ms > 0.0) {
        let x = [1.0, u.changes as f64, u.affected as f64];
        let w = 1.0 / (u.ms * u.ms);
        for (row, &xi) in a.iter_mut().zip(&x) {
            for (cell, &xj) in row.iter_mut().zip(&x) {
                *cell += w * xi * xj;
            }
            row[3] += w * xi * u.ms;
        }
    }
    for col in 0..3 {
        let p = (col..3).max_by(|&x, &y| a[x][col].abs().total_cmp(&a[y][col].abs()))?;
        if a[p][col].abs() < 1e-9 * (1.0 + a[p][col].abs()) {
            return None;
        }
        a.swap(col, p);
        let pivot = a[col];
        for (r, row) in a.iter_mut().enumerate() {
            if r != col {
                let f = row[col] / pivot[col];
                for (cell, &p) in row.iter_mut().zip(&pivot).skip(col) {
                    *cell -= f * p;
                }
            }
        }
    }
    let x: Vec<f64> = (0..3).map(|i| a[i][3] / a[i][i]).collect();
    Some(Fit { a_ms: x[0], b_ms_per_change: x[1], c_ms_per_affected: x[2] })
}

/// From the computes of a graph's run (one before its first case, one after each) and its cases'
/// batch sizes: each case's compute, the mean of the two around its stream, and the graph's, the
/// median of those around the small batches' streams (all of them if there are none).
fn case_computes(computes: &[f64], sizes: &[usize]) -> (Vec<f64>, f64) {
    debug_assert_eq!(computes.len(), sizes.len() + 1);
    let per_case = (0..sizes.len()).map(|i| (computes[i] + computes[i + 1]) / 2.0).collect();
    let small = |i: usize| sizes.get(i).is_some_and(|&s| s <= 1_000);
    let around: Vec<f64> = (0..computes.len()).filter(|&i| (i > 0 && small(i - 1)) || small(i)).map(|i| computes[i]).collect();
    (per_case, median(if around.is_empty() { computes.to_vec() } else { around }))
}

/// Streams of `batches` batches per case on one graph, at each of `threads`.
pub fn measure_graph(spec: &GraphSpec, csr: &Csr, threads: &[usize], plan: &[(Kind, usize)], batches: impl Fn(usize) -> usize) -> dyng::Result<(Vec<LatencyGraph>, Vec<LatencyCase>)> {
    let (mut graphs, mut cases) = (Vec::new(), Vec::new());
    for &t in threads {
        let res = Resources::parallel(t)?;
        let mut g = Graph::new(csr.clone());
        let opt = MospOptions::default();
        let mut m = MospResult::compute(&res, &g, spec.source, &opt)?;
        // The first repair makes the in-rows, which every later batch keeps in step: made here,
        // the streams measure the steady state.
        let _ = g.in_rows();
        let mut computes = Vec::new();
        let compute = |g: &Graph, computes: &mut Vec<f64>| -> dyng::Result<()> {
            let c = Instant::now();
            let _ = std::hint::black_box(MospResult::compute(&res, g, spec.source, &opt)?);
            computes.push(ms(c));
            Ok(())
        };
        compute(&g, &mut computes)?;
        let mut seed = 1;
        let first_case = cases.len();
        for &(kind, size) in plan {
            let mut c = Columns::default();
            for _ in 0..batches(size) {
                // A ball around a vertex the source does not reach has no tree edge to congest:
                // the next seeds draw other centres.
                let csr = g.to_csr();
                let mut tries = 0;
                let batch = loop {
                    seed += 1;
                    match generate_changes(&csr, &kind.options(size, seed, spec.source, spec.local_hops)) {
                        Ok((b, _)) => break b,
                        Err(_) if tries < 16 => tries += 1,
                        Err(e) => return Err(e),
                    }
                };
                drop(csr);
                let clock = Instant::now();
                let (stats, timings) = dyng::update_timed(&res, &mut g, &batch.view(), &mut [(&mut m).into()])?;
                let total = ms(clock);
                let trees = m.objective_stats();
                let affected = stats[0].affected + m.combine_stats().search.affected;
                let recomputed = trees.iter().any(|s| s.fallback_used);
                c.updates.push(Update { changes: batch.num_insertions() + batch.num_deletions(), affected, ms: total, recomputed });
                c.apply.push(timings.apply_ns as f64 / 1e6);
                c.prepare.push(timings.prepare_ns as f64 / 1e6);
                c.trees.push(timings.trees_ns as f64 / 1e6);
                c.combine.push(m.combine_stats().elapsed_ns as f64 / 1e6);
                c.costs.push(m.combine_stats().costs_ns as f64 / 1e6);
                c.invalidated.push(stats[0].invalidated as f64);
                c.recomputed += recomputed as usize;
            }
            compute(&g, &mut computes)?;
            let case = c.case(spec.name, g.n(), t, kind, size);
            eprintln!("{}", line(&case));
            cases.push(case);
        }
        let sizes: Vec<usize> = cases[first_case..].iter().map(|c| c.size).collect();
        let (per_case, compute_ms) = case_computes(&computes, &sizes);
        for (c, compute) in cases[first_case..].iter_mut().zip(per_case) {
            c.compute_ms = compute;
            c.update_over_compute = c.update_ms / compute;
        }
        // The line is that of the repairs of the small batches: an update that recomputed a tree
        // costs a compute, and the 10K batches mostly do.
        let small = |c: &&LatencyCase| c.size <= 1_000;
        let all: Vec<Update> = cases[first_case..].iter().filter(small).flat_map(|c| c.updates.iter().copied()).filter(|u| !u.recomputed).collect();
        let unchanged: Vec<f64> = all.iter().filter(|u| u.affected == 0).map(|u| u.ms).collect();
        // The memory is set against a CSR and a reverse CSR: the in-rows are counted made and in
        // step, as a repair reads them (a stream of 10K batches may have dropped them, to be made
        // again when next read, which left the out-rows alone to count).
        let _ = g.in_rows();
        let (n, mm, k) = (g.n(), g.m(), g.k());
        let compact = 2 * 4 * (n + 1 + mm * (k + 1));
        graphs.push(LatencyGraph {
            graph: spec.name.to_string(),
            n,
            m: mm,
            k,
            threads: t,
            compute_ms,
            computes_ms: computes,
            fit: fit(&all),
            unchanged_updates: unchanged.len(),
            unchanged_ms: (!unchanged.is_empty()).then(|| median(unchanged)),
            graph_bytes: g.bytes(),
            row_bytes: g.row_bytes(),
            compact_bytes: compact,
            graph_bytes_per_vertex: g.bytes() as f64 / n as f64,
            graph_bytes_per_edge: g.bytes() as f64 / mm.max(1) as f64,
            compactions: g.compactions(),
            peak_rss_bytes: peak_rss_bytes(),
        });
    }
    Ok((graphs, cases))
}

/// The samples of one case.
#[derive(Default)]
struct Columns {
    updates: Vec<Update>,
    apply: Vec<f64>,
    prepare: Vec<f64>,
    trees: Vec<f64>,
    combine: Vec<f64>,
    costs: Vec<f64>,
    invalidated: Vec<f64>,
    recomputed: usize,
}

impl Columns {
    fn case(self, graph: &str, n: usize, threads: usize, kind: Kind, size: usize) -> LatencyCase {
        let of = |f: fn(&Update) -> f64| median(self.updates.iter().map(f).collect());
        LatencyCase {
            graph: graph.to_string(),
            n,
            threads,
            kind: kind.name(),
            size,
            batches: self.updates.len(),
            update_ms: of(|u| u.ms),
            apply_ms: median(self.apply),
            prepare_ms: median(self.prepare),
            trees_ms: median(self.trees),
            combine_ms: median(self.combine),
            costs_ms: median(self.costs),
            compute_ms: f64::NAN,
            update_over_compute: f64::NAN,
            changes: of(|u| u.changes as f64),
            affected: of(|u| u.affected as f64),
            invalidated: median(self.invalidated),
            recomputed: self.recomputed,
            updates: self.updates,
        }
    }
}

/// One case as a line of the run's log.
pub fn line(c: &LatencyCase) -> String {
    format!(
        "latency {} {} {} t={}: MOSP update {:.3} ms (apply {:.3}, trees {:.3}, combine {:.3}, costs {:.3}), {:.0} affected{}",
        c.graph,
        c.kind,
        c.size,
        c.threads,
        c.update_ms,
        c.apply_ms,
        c.trees_ms,
        c.combine_ms,
        c.costs_ms,
        c.affected,
        if c.recomputed > 0 { format!(", {} of {} recomputed a tree", c.recomputed, c.batches) } else { String::new() }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_case_is_set_against_the_computes_around_its_stream() {
        // Two small cases, then a 10K stream after which a compute costs three times as much.
        let (per_case, graph) = case_computes(&[10.0, 12.0, 14.0, 42.0], &[1, 100, 10_000]);
        assert_eq!(per_case, vec![11.0, 13.0, 28.0]);
        assert_eq!(graph, 12.0, "the median of the computes around the small streams");
        let (_, only_large) = case_computes(&[10.0, 30.0], &[10_000]);
        assert_eq!(only_large, 30.0, "the upper middle of two, as `median` takes it");
    }

    #[test]
    fn the_fit_recovers_a_line() {
        let updates: Vec<Update> = (0..40)
            .map(|i| {
                let (changes, affected) = (1 + i % 7, ((i * i) % 53) as i64);
                Update { changes, affected, ms: 0.02 + 0.003 * changes as f64 + 0.0001 * affected as f64, recomputed: false }
            })
            .collect();
        let f = fit(&updates).expect("determined");
        assert!((f.a_ms - 0.02).abs() < 1e-9 && (f.b_ms_per_change - 0.003).abs() < 1e-9 && (f.c_ms_per_affected - 0.0001).abs() < 1e-9, "{f:?}");
        // Updates from none to 100K vertices affected, a tenth more on the largest (a shared
        // machine's noise): the relative fit keeps the intercept within a percent, where plain
        // least squares moved it by a multiple of itself.
        let mut wide: Vec<Update> = (0..40)
            .map(|i| {
                let (changes, affected) = (1 + i % 7, (i * i * i * 2) as i64);
                Update { changes, affected, ms: 0.02 + 0.003 * changes as f64 + 0.0001 * affected as f64, recomputed: false }
            })
            .collect();
        wide.last_mut().expect("updates").ms *= 1.1;
        let f = fit(&wide).expect("determined");
        assert!((f.a_ms - 0.02).abs() < 0.0002, "{f:?}");
        let flat: Vec<Update> = (0..5).map(|_| Update { changes: 1, affected: 0, ms: 1.0, recomputed: false }).collect();
        assert!(fit(&flat).is_none());
    }
}
