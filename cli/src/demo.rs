//! `dyng demo`: the main job on the bundled US highway network, told as a user meets it.
//!
//! Converts `data/road-usroads.mtx` with K = 3 seeded random weights and computes the MOSP from
//! the giant component's vertex 531. Then two kinds of change, each updated and set against a
//! recompute from scratch on the same graph:
//!   1. live traffic: a stream of batches in one area (roads slowed down, earlier jams cleared,
//!      a road closed and the previous one reopened), which the update repairs locally;
//!   2. a random batch of 10K changes all over the network, which reroutes most shortest paths:
//!      the adaptive policy recomputes, and the demo measures what a forced repair would cost.
//!
//! Every figure printed is measured in this run; the trees are checked against the recompute.

use crate::fmt::{ms_since, ns_to_ms};
use crate::progress::{print_line, spinner};
use crate::{resources, BackendArg};
use clap::Args;
use dyng::io::generators::changegen::{generate_changes, ChangeOptions};
use dyng::io::formats::mtx;
use dyng::io::generators::rng::{uniform_int, uniform_u64, Mt19937};
use dyng::{
    Batch, Csr, Error, Fallback, Graph, MospOptions, MospResult, Resources, UpdateStats, WeightLayout, DISTANCE_INF,
};
use indicatif::ProgressBar;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

#[derive(Args, Debug)]
pub struct DemoArgs {
    /// The Matrix Market graph (default: the bundled data/road-usroads.mtx).
    #[arg(long)]
    data: Option<PathBuf>,
    /// Source vertex (531 is the lowest id of the 126,146-vertex giant component).
    #[arg(long, default_value_t = 531)]
    source: usize,
    /// Changes in the random batch.
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..))]
    changes: u64,
    /// Batches in the live-traffic stream.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..=1000))]
    traffic_batches: u64,
    #[arg(long, value_enum, default_value = "parallel")]
    backend: BackendArg,
    /// Threads of the parallel engine (0 = all cores).
    #[arg(long, default_value_t = 0)]
    threads: usize,
}

/// Objectives of the demo graph (seeded random weights in [1, 100], as the originals' benchmarks).
const K: usize = 3;
/// Hops of the area the traffic stream changes (about 4,000 two-way roads on usroads).
const TRAFFIC_HOPS: usize = 40;
/// Roads slowed down per traffic batch (each in both directions).
const JAMS: usize = 30;

fn default_data() -> PathBuf {
    let local = PathBuf::from("data/road-usroads.mtx");
    if local.exists() {
        return local;
    }
    crate::repo_dir().join("data/road-usroads.mtx")
}

/// The state the demo updates: the graph and its MOSP result.
struct Live<'a> {
    res: &'a Resources,
    graph: Graph,
    mosp: MospResult,
    source: usize,
    pb: ProgressBar,
}

/// One update set against a recompute of the same state.
struct Measured {
    update_ms: f64,
    /// Parts of the update: applying the batch, preparing the change lists (and the reverse
    /// graph a repair reads), the K trees, the combined graph and path costs.
    apply_ms: f64,
    prepare_ms: f64,
    trees_ms: f64,
    combine_ms: f64,
    recompute_ms: f64,
    stats: Vec<UpdateStats>,
    same: bool,
}

impl Live<'_> {
    /// Applies `batch` and updates the MOSP result (timed end to end: apply, K trees, combined
    /// graph, path costs), then computes a MOSP result from scratch on the updated graph (timed)
    /// and compares the two.
    fn update(&mut self, batch: &Batch) -> dyng::Result<Measured> {
        let t = Instant::now();
        let (_, timings) = dyng::update_timed(self.res, &mut self.graph, &batch.view(), &mut [(&mut self.mosp).into()])?;
        let update_ms = ms_since(t);
        let stats = self.mosp.objective_stats();
        let cs = self.mosp.combine_stats();
        let apply_ms = ns_to_ms(timings.apply_ns);
        let prepare_ms = ns_to_ms(timings.prepare_ns);
        let trees_ms = ns_to_ms(timings.trees_ns);
        let combine_ms = ns_to_ms(cs.elapsed_ns + cs.costs_ns);
        let t = Instant::now();
        let fresh = MospResult::compute(self.res, &self.graph, self.source, &MospOptions::default())?;
        let recompute_ms = ms_since(t);
        let same = same_result(&fresh, &self.mosp);
        Ok(Measured { update_ms, apply_ms, prepare_ms, trees_ms, combine_ms, recompute_ms, stats, same })
    }

    fn say(&self, line: &str) {
        print_line(&self.pb, line);
    }
}

fn same_result(a: &MospResult, b: &MospResult) -> bool {
    (0..a.k()).all(|j| a.tree(j).distances() == b.tree(j).distances() && a.tree(j).parents() == b.tree(j).parents())
        && a.combined_parents() == b.combined_parents()
        && a.path_costs() == b.path_costs()
}

impl Measured {
    /// "update 9.5 ms (apply 2.1, prepare 1.0, 3 trees repaired 3.0, combined graph + path costs 4.4; paths
    /// changed for 812 / 790 / 1020 vertices)".
    fn update_line(&self) -> String {
        format!(
            "update {:.1} ms (apply {:.1}, prepare {:.1}, {} {:.1}, combined graph + path costs {:.1}; paths changed for {} vertices)",
            self.update_ms,
            self.apply_ms,
            self.prepare_ms,
            how(&self.stats),
            self.trees_ms,
            self.combine_ms,
            changed(&self.stats)
        )
    }
}

/// "3 trees repaired" / "2 of 3 trees recomputed by the adaptive policy".
fn how(stats: &[UpdateStats]) -> String {
    let recomputed = stats.iter().filter(|s| s.fallback_used).count();
    match recomputed {
        0 => format!("{} trees repaired", stats.len()),
        r => format!("{r} of {} trees recomputed by the adaptive policy", stats.len()),
    }
}

/// "812 / 790 / 1020": vertices whose distance or parent changed, per tree.
fn changed(stats: &[UpdateStats]) -> String {
    stats.iter().map(|s| s.affected.to_string()).collect::<Vec<_>>().join(" / ")
}

/// A road of the traffic area: an edge u -> v with u < v whose reverse exists too, with the
/// weights of both directions before the stream.
#[derive(Clone)]
struct Road {
    u: i32,
    v: i32,
    forth: Vec<i32>,
    back: Vec<i32>,
}

/// The two-way roads within `hops` out-edge hops of `centre`.
fn roads_around(g: &Csr, centre: usize, hops: usize) -> Vec<Road> {
    let mut level = vec![u32::MAX; g.n()];
    let mut queue = vec![centre];
    level[centre] = 0;
    let mut head = 0;
    while head < queue.len() {
        let u = queue[head];
        head += 1;
        if level[u] as usize >= hops {
            continue;
        }
        for e in g.row(u) {
            let x = g.col_ind()[e] as usize;
            if level[x] == u32::MAX {
                level[x] = level[u] + 1;
                queue.push(x);
            }
        }
    }
    let weights = |e: usize| (0..g.k()).map(|j| g.column(j)[e]).collect::<Vec<_>>();
    let mut roads = Vec::new();
    for &u in &queue {
        for e in g.row(u) {
            let v = g.col_ind()[e];
            if (u as i32) < v {
                if let Some(r) = g.first_edge(v as usize, u as i32) {
                    roads.push(Road { u: u as i32, v, forth: weights(e), back: weights(r) });
                }
            }
        }
    }
    roads
}

/// The traffic stream's batches: each slows `JAMS` roads down (every weight times 1.5-3),
/// clears the previous batch's jams (weights back), closes one road and reopens the one the
/// previous batch closed.
fn traffic_batches(roads: &[Road], count: usize, seed: u32) -> Vec<(Batch, usize, usize)> {
    let mut rng = Mt19937::new(seed);
    let pick = |rng: &mut Mt19937| roads[uniform_u64(rng, 0, roads.len() as u64 - 1) as usize].clone();
    let mut jams: Vec<Road> = Vec::new();
    let mut closed: Option<Road> = None;
    let mut out = Vec::new();
    for _ in 0..count {
        let mut b = Batch::new(K);
        let cleared = jams.len();
        for r in jams.drain(..) {
            b.insert(r.u, r.v, &r.forth);
            b.insert(r.v, r.u, &r.back);
        }
        if let Some(r) = closed.take() {
            b.insert(r.u, r.v, &r.forth);
            b.insert(r.v, r.u, &r.back);
        }
        for _ in 0..JAMS {
            let r = pick(&mut rng);
            let factor = uniform_int(&mut rng, 150, 300) as i64;
            let slow = |w: &[i32]| w.iter().map(|&x| (x as i64 * factor / 100).min(i32::MAX as i64) as i32).collect::<Vec<_>>();
            b.insert(r.u, r.v, &slow(&r.forth));
            b.insert(r.v, r.u, &slow(&r.back));
            jams.push(r);
        }
        // A closed road is neither jammed nor reinserted in this batch (an insertion would
        // reopen it: deletions apply first).
        let close = loop {
            let r = pick(&mut rng);
            if !jams.iter().any(|j| j.u == r.u && j.v == r.v) {
                break r;
            }
        };
        b.delete(close.u, close.v);
        b.delete(close.v, close.u);
        closed = Some(close);
        out.push((b, JAMS, cleared));
    }
    out
}

pub fn run(a: DemoArgs) -> dyng::Result<ExitCode> {
    let res = resources(a.backend, a.threads)?;
    let path = a.data.clone().unwrap_or_else(default_data);
    let pb = spinner("reading the graph");
    let t = Instant::now();
    let (text, _) = mtx::mtx_to_csr(&path, K, 1, 100, 12345)?;
    let csr = Csr::from_arrays(text.n, K, text.row_ptr, text.col_ind, &text.weights, WeightLayout::EdgeMajor)?;
    let read_ms = ms_since(t);
    if a.source >= csr.n() {
        return Err(Error::invalid(format!("source {} is outside [0, n = {})", a.source, csr.n())));
    }
    let graph = Graph::new(csr);
    pb.set_message("computing the MOSP");
    let t = Instant::now();
    let mosp = MospResult::compute(&res, &graph, a.source, &MospOptions::default())?;
    let compute_ms = ms_since(t);
    let mut live = Live { res: &res, graph, mosp, source: a.source, pb };
    live.say(&format!(
        "dyng demo: {} ({} vertices, {} directed edges), K = {K} objectives with seeded random weights in [1, 100], source {}",
        path.display(),
        live.graph.n(),
        live.graph.m(),
        a.source
    ));
    live.say(&format!("  read + convert {read_ms:.1} ms; MOSP computed from scratch in {compute_ms:.1} ms ({} threads, {:?} engine)", res.threads(), res.backend()));
    let mut all_same = true;

    // 1. Live traffic in one area around a reachable vertex.
    live.pb.set_message("live traffic");
    let mut rng = Mt19937::new(2024);
    let reachable: Vec<usize> = (0..live.graph.n()).filter(|&v| live.mosp.combined_distances()[v] < DISTANCE_INF / 2).collect();
    let centre = reachable[uniform_u64(&mut rng, 0, reachable.len() as u64 - 1) as usize];
    let roads = roads_around(&live.graph.to_csr(), centre, TRAFFIC_HOPS);
    if roads.len() < 2 * JAMS {
        return Err(Error::invalid(format!(
            "the {TRAFFIC_HOPS}-hop area around vertex {centre} has {} two-way roads; the traffic stream needs {}",
            roads.len(),
            2 * JAMS
        )));
    }
    live.say("");
    live.say(&format!(
        "1. Live traffic: {} batches in the {TRAFFIC_HOPS}-hop area around vertex {centre} ({} two-way roads). Each batch slows {JAMS} roads down",
        a.traffic_batches,
        roads.len()
    ));
    live.say("   (every weight x1.5-3, both directions), clears the previous batch's jams, closes one road and reopens the last one closed.");
    let (mut upd_total, mut rec_total) = (0.0, 0.0);
    for (i, (batch, jams, cleared)) in traffic_batches(&roads, a.traffic_batches as usize, 7).iter().enumerate() {
        let m = live.update(batch)?;
        all_same &= m.same;
        upd_total += m.update_ms;
        rec_total += m.recompute_ms;
        live.say(&format!(
            "   batch {}: {jams} slowed, {cleared} cleared, 1 closed: {}, recompute {:.1} ms",
            i + 1,
            m.update_line(),
            m.recompute_ms
        ));
    }
    live.say(&format!(
        "   the stream: updates {upd_total:.1} ms in all, recomputes {rec_total:.1} ms: the update took {:.2}x of a recompute; results identical to the recompute: {}",
        upd_total / rec_total,
        if all_same { "yes" } else { "NO" }
    ));

    // 2. A random batch all over the network.
    live.pb.set_message("the random batch");
    let gen = ChangeOptions { changes: a.changes as usize, seed: 777, safe: true, source: a.source, ..Default::default() };
    let (batch, summary) = generate_changes(&live.graph.to_csr(), &gen)?;
    // The same batch on the same state, repaired with the adaptive policy off, for comparison.
    let forced_graph = Graph::new(live.graph.to_csr());
    let never = MospOptions { fallback: Fallback::Never, ..Default::default() };
    let forced_mosp = MospResult::compute(&res, &forced_graph, a.source, &never)?;
    let mut forced = Live { res: &res, graph: forced_graph, mosp: forced_mosp, source: a.source, pb: ProgressBar::hidden() };
    live.say("");
    live.say(&format!(
        "2. A random batch: {} changes all over the network, from the original generator (uniform mode, seed 777): {}.",
        a.changes,
        summary.trim_start_matches("changes: ")
    ));
    let m = live.update(&batch)?;
    all_same &= m.same;
    live.say(&format!(
        "   {}, recompute {:.1} ms: {:.2}x",
        m.update_line(),
        m.recompute_ms,
        m.update_ms / m.recompute_ms
    ));
    live.pb.set_message("the random batch, repaired with the adaptive policy off");
    let f = forced.update(&batch)?;
    all_same &= f.same && same_result(&forced.mosp, &live.mosp);
    let recomputed = m.stats.iter().any(|s| s.fallback_used);
    let verdict = if f.update_ms > m.update_ms { "more" } else { "less" };
    let why = if recomputed {
        format!(
            "   Why: such a batch changes shortest paths almost everywhere, so a repair would search most of the tree. The adaptive policy\n   estimates that share from a sample before it starts, and recomputed. With the policy off the repair took {:.1} ms, {verdict} than\n   the adaptive update's {:.1} ms.",
            f.update_ms, m.update_ms
        )
    } else {
        format!(
            "   The adaptive policy judged a repair cheaper and repaired; with the policy off the repair took {:.1} ms.",
            f.update_ms
        )
    };
    live.say(&why);
    live.pb.finish_and_clear();

    println!();
    let reachable = live.mosp.combined_distances().iter().filter(|&&d| d < DISTANCE_INF / 2).count();
    println!("The MOSP tree reaches {reachable} of {} vertices; the costs of its paths in the 3 objectives, for a few:", live.graph.n());
    for v in [0usize, 1000, 50_000, 100_000, 129_000].into_iter().filter(|&v| v < live.graph.n()) {
        let c = &live.mosp.path_costs()[v * K..v * K + K];
        if c[0] >= DISTANCE_INF / 2 {
            println!("  vertex {v:>6}: unreachable");
        } else {
            println!("  vertex {v:>6}: {c:?} over {} edges", live.mosp.path_to(v)?.len().saturating_sub(1));
        }
    }
    println!("Every update's result equals the recompute's (trees, MOSP tree, path costs): {}", if all_same { "yes" } else { "NO" });
    Ok(if all_same { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
