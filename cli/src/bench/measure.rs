//! Running the cases: medians of several runs, every ratio's two sides measured in the same run.

use super::cases::{BatchKind, Plan};
use super::interval::{self, Interval, Sampling};
use super::stream::{self, StreamResult};
use crate::progress::{bar, eprint_line};
use dyng::graph::dijkstra::dijkstra;
use dyng::io::generators::changegen::{generate_changes, ChangeOptions};
use dyng::internals::Workspace;
use dyng::{Batch, Csr, Graph, MospOptions, MospResult, Resources, SsspOptions, SsspResult};
use std::time::Instant;

/// One measured case.
#[derive(Debug, Clone, Default)]
pub struct CaseResult {
    pub graph: String,
    pub n: usize,
    pub m: usize,
    pub k: usize,
    pub source: usize,
    pub batch: &'static str,
    pub size: usize,
    pub inserts: usize,
    pub deletes: usize,
    pub threads: usize,
    /// Objective 0's update (the same objective as `recompute_ms` and `dijkstra_ms`).
    pub update_ms: f64,
    pub apply_ms: f64,
    pub recompute_ms: f64,
    pub dijkstra_ms: f64,
    pub mosp_ms: f64,
    pub mosp_compute_ms: f64,
    pub mosp_recompute_ms: f64,
    /// Every run's objective-0 update and recompute, in run order (run i's two are timed next
    /// to each other, so their ratio is the least exposed to the host's slow phases).
    pub update_runs_ms: Vec<f64>,
    pub recompute_runs_ms: Vec<f64>,
    pub affected: i64,
    pub invalidated: i64,
    pub fallback_used: bool,
    pub workspace_bytes_per_vertex: f64,
    pub combine_bytes_per_vertex: f64,
    /// The resident graph: its rows with their room to grow, and its in-rows.
    pub graph_bytes_per_vertex: f64,
    pub result_bytes_per_vertex: f64,
    pub peak_rss_bytes: u64,
}

impl CaseResult {
    /// The 1-thread case of `cases` with this case's graph, batch and size (for the thread
    /// speedups).
    pub fn one_thread<'a>(&self, cases: &'a [CaseResult]) -> Option<&'a CaseResult> {
        cases.iter().find(|o| o.threads == 1 && o.graph == self.graph && o.batch == self.batch && o.size == self.size)
    }

    /// Update over recompute as the ratio of the two medians.
    pub fn ratio(&self) -> f64 {
        self.update_ms / self.recompute_ms
    }

    /// Update over recompute as the median of the runs' own ratios: each run's update and
    /// recompute are timed back to back (in alternating order), so a phase of the host that
    /// slows one run slows both sides of its ratio, where the ratio of two medians can take
    /// its update from a fast run and its recompute from a slow one.
    pub fn paired_ratio(&self) -> f64 {
        median(self.update_runs_ms.iter().zip(&self.recompute_runs_ms).map(|(u, r)| u / r).collect())
    }

    /// The 90 % bootstrap interval of [`CaseResult::ratio`] over this case's runs, each run's
    /// update and recompute resampled together (`bench::interval`).
    pub fn ratio_interval(&self) -> Option<Interval> {
        interval::ratio_of_medians(&self.update_runs_ms, &self.recompute_runs_ms, Sampling::Paired)
    }

    /// This case's 1-thread twin's update median over its own (the thread speedup), with its
    /// 90 % bootstrap interval (the two cases' runs resampled independently).
    pub fn speedup_over(&self, one: &CaseResult) -> (f64, Option<Interval>) {
        let interval = interval::ratio_of_medians(&one.update_runs_ms, &self.update_runs_ms, Sampling::Independent);
        (one.update_ms / self.update_ms, interval)
    }
}

/// The median of `v` (the upper one of an even count; NaN when empty).
pub(super) fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    if v.is_empty() {
        return f64::NAN;
    }
    v[v.len() / 2]
}

/// Milliseconds since `t`.
pub(super) fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

/// Peak resident set size of this process (VmHWM), 0 where unknown.
pub fn peak_rss_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        })
        .map_or(0, |kb| kb * 1024)
}

/// The base state of a case: trees of the original graph, adopted fresh for every run.
struct Base {
    csr: Csr,
    trees: Vec<(Vec<i64>, Vec<i32>)>,
}

impl Base {
    /// The base state as a service holds it between batches: the resident graph with its
    /// in-rows (which the first repair makes and every later batch keeps in step), and the MOSP
    /// result.
    fn fresh(&self, res: &Resources, source: usize) -> dyng::Result<(Graph, MospResult)> {
        let g = Graph::new(self.csr.clone());
        let _ = g.in_rows();
        let trees = self
            .trees
            .iter()
            .enumerate()
            .map(|(j, (d, p))| SsspResult::from_arrays(&g, source, j, d.clone(), p.clone(), false, &SsspOptions::default()))
            .collect::<dyng::Result<Vec<_>>>()?;
        let m = MospResult::from_trees(res, &g, source, trees, &[])?;
        Ok((g, m))
    }
}

fn batch_for(csr: &Csr, kind: BatchKind, size: usize, source: usize, hops: usize) -> dyng::Result<Batch> {
    let opt = ChangeOptions {
        changes: size,
        seed: 777,
        safe: kind != BatchKind::Unsafe,
        local_hops: if kind == BatchKind::Local { hops } else { 0 },
        source,
        ..Default::default()
    };
    Ok(generate_changes(csr, &opt)?.0)
}

/// The timings of every run of one case (milliseconds).
#[derive(Default)]
struct Samples {
    update: Vec<f64>,
    apply: Vec<f64>,
    recompute: Vec<f64>,
    dijkstra: Vec<f64>,
    mosp: Vec<f64>,
    mosp_compute: Vec<f64>,
    mosp_recompute: Vec<f64>,
}

/// Runs one case `runs` times; returns the samples and the last run's updated state.
///
/// The update and the recompute alternate which one runs first (the recompute on its own copy
/// of the updated graph), so that neither side always finds the caches warmed by the other, and
/// each follows the same untimed prelude.
fn measure_case(res: &Resources, base: &Base, batch: &Batch, source: usize, runs: usize) -> dyng::Result<(Samples, MospResult, Graph)> {
    let mut s = Samples::default();
    let mut last = None;
    let mut updated = Graph::new(base.csr.clone());
    updated.apply(&batch.view())?;
    // Steady state: the pool's threads started and a workspace in the pool before the first
    // timed run (otherwise whichever side runs first in run 0 pays for both).
    let _ = SsspResult::compute(res, &updated, source, 0, &SsspOptions::default())?;
    for run in 0..runs {
        // Each recompute reads its own copy of the updated graph, made by the update's own
        // prelude: a fresh base state with its MOSP result (whose combine runs over the graph),
        // then the batch applied into the pool's graph arrays. The timed regions then start
        // from the same state, so the ratio is the update's against the recompute's alone.
        // Where the graph was allocated and what ran just before moves a solve by more than
        // the 5 % the target allows (a plain clone of the updated graph left the copy in the
        // caches and favoured the recompute). The Dijkstra baseline runs on a copy of its own,
        // made by the same prelude, so that each of the three timed regions starts right after
        // an apply and none reads the graph into the cache for another (figures in
        // docs/performance.md, "The protocol").
        let prelude = || -> dyng::Result<(Graph, MospResult)> {
            let (mut copy, held) = base.fresh(res, source)?;
            dyng::update(res, &mut copy, &batch.view(), &mut [])?;
            Ok((copy, held))
        };
        let recompute = |s: &mut Samples| -> dyng::Result<SsspResult> {
            let (copy, _held) = prelude()?;
            let t = Instant::now();
            let fresh = SsspResult::compute(res, &copy, source, 0, &SsspOptions::default())?;
            s.recompute.push(ms(t));
            Ok(fresh)
        };
        let baseline = |s: &mut Samples| -> dyng::Result<()> {
            let (copy, _held) = prelude()?;
            let t = Instant::now();
            let _ = std::hint::black_box(dijkstra(&copy, 0, source));
            s.dijkstra.push(ms(t));
            Ok(())
        };
        let early = if run % 2 == 1 { Some(recompute(&mut s)?) } else { None };
        let (mut g, mut m) = base.fresh(res, source)?;
        let t = Instant::now();
        let (_, timings) = dyng::update_timed(res, &mut g, &batch.view(), &mut [(&mut m).into()])?;
        s.mosp.push(ms(t));
        let per_obj: Vec<f64> = m.objective_stats().iter().map(|st| st.elapsed_ns as f64 / 1e6).collect();
        // Objective 0 on both sides of the ratio: objectives differ in cost (bremen's travel
        // times expand 2.5x more vertices than its distances), so a mean over K against one
        // objective's recompute would compare unlike things.
        s.update.push(per_obj[0]);
        s.apply.push(timings.apply_ns as f64 / 1e6);
        s.mosp_compute.push(timings.trees_ns as f64 / 1e6 + m.combine_stats().elapsed_ns as f64 / 1e6);
        let fresh = match early {
            Some(f) => f,
            None => recompute(&mut s)?,
        };
        if fresh.distances() != m.tree(0).distances() || fresh.parents() != m.tree(0).parents() {
            return Err(dyng::Error::Internal("update and recompute disagree".into()));
        }
        let t = Instant::now();
        let _ = MospResult::compute(res, &g, source, &MospOptions::default())?;
        s.mosp_recompute.push(ms(t));
        baseline(&mut s)?;
        last = Some((m, g));
    }
    let (m, g) = last.ok_or_else(|| dyng::Error::invalid("runs must be >= 1"))?;
    Ok((s, m, g))
}

/// Runs every case of `plan`, then on each graph a stream of `stream_batches` local batches
/// (none when 0) at each thread count.
pub fn run_plan(plan: &Plan, threads: &[usize], runs: usize, stream_batches: usize) -> dyng::Result<(Vec<CaseResult>, Vec<StreamResult>)> {
    let streams_per_graph = if stream_batches > 0 { threads.len() } else { 0 };
    let total: usize = plan.graphs.iter().map(|(_, b)| b.len() * threads.len() + streams_per_graph).sum();
    let pb = bar(total as u64, "bench");
    let mut out = Vec::new();
    let mut streams = Vec::new();
    for (spec, batches) in &plan.graphs {
        pb.set_message(format!("bench {}: building", spec.name));
        let csr = (spec.build)()?;
        let seq = Resources::parallel(0)?;
        let g0 = Graph::new(csr.clone());
        let trees = (0..spec.k)
            .map(|j| SsspResult::compute(&seq, &g0, spec.source, j, &SsspOptions::default()).map(|r| (r.distances().to_vec(), r.parents().to_vec())))
            .collect::<dyng::Result<Vec<_>>>()?;
        let base = Base { csr, trees };
        for &(kind, size) in batches {
            let batch = batch_for(&base.csr, kind, size, spec.source, spec.local_hops)?;
            for &t in threads {
                pb.set_message(format!("bench {} {} {} t={t}", spec.name, kind.name(), size));
                let res = Resources::parallel(t)?;
                let (s, m, g) = measure_case(&res, &base, &batch, spec.source, runs)?;
                let stats = m.objective_stats();
                out.push(CaseResult {
                    graph: spec.name.to_string(),
                    n: g.n(),
                    m: base.csr.m(),
                    k: spec.k,
                    source: spec.source,
                    batch: kind.name(),
                    size,
                    inserts: batch.num_insertions(),
                    deletes: batch.num_deletions(),
                    threads: t,
                    update_runs_ms: s.update.clone(),
                    recompute_runs_ms: s.recompute.clone(),
                    update_ms: median(s.update),
                    apply_ms: median(s.apply),
                    recompute_ms: median(s.recompute),
                    dijkstra_ms: median(s.dijkstra),
                    mosp_ms: median(s.mosp),
                    mosp_compute_ms: median(s.mosp_compute),
                    mosp_recompute_ms: median(s.mosp_recompute),
                    affected: stats[0].affected,
                    invalidated: stats[0].invalidated,
                    fallback_used: stats[0].fallback_used,
                    workspace_bytes_per_vertex: Workspace::BYTES_PER_VERTEX as f64,
                    combine_bytes_per_vertex: res.workspace_bytes() as f64 / g.n() as f64 - Workspace::BYTES_PER_VERTEX as f64,
                    graph_bytes_per_vertex: g.bytes() as f64 / g.n() as f64,
                    result_bytes_per_vertex: m.bytes() as f64 / g.n() as f64,
                    peak_rss_bytes: peak_rss_bytes(),
                });
                eprint_line(&pb, &super::report::case_line(out.last().expect("just pushed")));
                pb.inc(1);
            }
        }
        for &t in threads.iter().take(streams_per_graph) {
            pb.set_message(format!("bench {} stream of {stream_batches} local batches t={t}", spec.name));
            streams.push(stream::measure(spec, &base.csr, t, stream_batches, stream::SIZE)?);
            eprint_line(&pb, &super::report::stream_line(streams.last().expect("just pushed")));
            pb.inc(1);
        }
    }
    pb.finish_and_clear();
    Ok((out, streams))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_paired_ratio_follows_each_run_and_the_plain_one_mixes_runs() {
        // Two runs in a phase twice as slow for both sides, and one whose recompute alone was
        // slow: each run's own ratio is 1 but in that one, while the medians take the update
        // from the fast runs and the recompute from the slow ones.
        let update = vec![10.0, 10.0, 20.0, 20.0, 10.0];
        let recompute = vec![10.0, 10.0, 20.0, 20.0, 20.0];
        let c = CaseResult {
            update_ms: median(update.clone()),
            recompute_ms: median(recompute.clone()),
            update_runs_ms: update,
            recompute_runs_ms: recompute,
            ..Default::default()
        };
        assert_eq!(c.ratio(), 0.5);
        assert_eq!(c.paired_ratio(), 1.0);
    }
}
