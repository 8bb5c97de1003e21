//! Streams: the steady state of a service, which the cases (one batch on a freshly built state,
//! several times) do not show. One MOSP result is updated by a stream of local batches, each
//! drawn from the current state by the original change generator (seeds 1, 2, ...), so that
//! every update finds what the one before left: the pool's graph arrays, the reverse graph, the
//! kept combined graph. Each batch's MOSP update is set against what a program without dyng's
//! update does: apply the batch to its own copy of the graph (through the same pool, so into
//! recycled arrays: the cheapest apply the library has), then compute a MOSP result from scratch,
//! both timed; first for odd batches, after the update for even ones, so that neither side always
//! runs second.

use super::cases::GraphSpec;
use super::measure::{median, ms};
use dyng::io::generators::changegen::{generate_changes, ChangeOptions};
use dyng::{Csr, Graph, MospOptions, MospResult, Resources};
use std::time::Instant;

/// Batches per stream.
pub const BATCHES: usize = 8;
/// Changes per batch.
pub const SIZE: usize = 10_000;

/// One measured stream: medians over its batches.
#[derive(Debug, Clone)]
pub struct StreamResult {
    pub graph: String,
    pub k: usize,
    pub size: usize,
    pub batches: usize,
    pub threads: usize,
    /// The MOSP update end to end, and its parts.
    pub mosp_ms: f64,
    pub apply_ms: f64,
    pub prepare_ms: f64,
    pub trees_ms: f64,
    pub combine_ms: f64,
    /// The MOSP tree's path costs, after the combine step.
    pub costs_ms: f64,
    /// The batch applied to a copy of the graph, then a MOSP result computed from scratch.
    pub mosp_recompute_ms: f64,
    /// Updates in which some tree recomputed (the adaptive policy's fallback).
    pub trees_recomputed: usize,
    /// Updates whose kept combined graph was changed in place (not built afresh).
    pub combined_in_place: usize,
}

/// Runs one stream of `batches` local batches of `size` changes on `csr` at `threads` threads.
pub fn measure(spec: &GraphSpec, csr: &Csr, threads: usize, batches: usize, size: usize) -> dyng::Result<StreamResult> {
    let res = Resources::parallel(threads)?;
    let mut g = Graph::new(csr.clone());
    let mut copy = Graph::new(csr.clone());
    let opt = MospOptions::default();
    let mut m = MospResult::compute(&res, &g, spec.source, &opt)?;
    let (mut mosp, mut apply, mut prepare, mut trees, mut combine, mut costs, mut recompute) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut trees_recomputed, mut combined_in_place) = (0, 0);
    for seed in 1..=batches as u32 {
        let gen = ChangeOptions {
            changes: size,
            seed,
            safe: true,
            source: spec.source,
            local_hops: spec.local_hops,
            ..Default::default()
        };
        let (batch, _) = generate_changes(&g.to_csr(), &gen)?;
        let recompute_on = |copy: &mut Graph, recompute: &mut Vec<f64>| -> dyng::Result<()> {
            let t = Instant::now();
            dyng::update(&res, copy, &batch.view(), &mut [])?;
            let _ = std::hint::black_box(MospResult::compute(&res, copy, spec.source, &opt)?);
            recompute.push(ms(t));
            Ok(())
        };
        if seed % 2 == 1 {
            recompute_on(&mut copy, &mut recompute)?;
        }
        let t = Instant::now();
        let (_, timings) = dyng::update_timed(&res, &mut g, &batch.view(), &mut [(&mut m).into()])?;
        mosp.push(ms(t));
        apply.push(timings.apply_ns as f64 / 1e6);
        prepare.push(timings.prepare_ns as f64 / 1e6);
        let stats = m.objective_stats();
        trees.push(timings.trees_ns as f64 / 1e6);
        combine.push(m.combine_stats().elapsed_ns as f64 / 1e6);
        costs.push(m.combine_stats().costs_ns as f64 / 1e6);
        trees_recomputed += stats.iter().any(|s| s.fallback_used) as usize;
        combined_in_place += m.combine_stats().in_place.is_some() as usize;
        if seed % 2 == 0 {
            recompute_on(&mut copy, &mut recompute)?;
        }
    }
    Ok(StreamResult {
        graph: spec.name.to_string(),
        k: m.k(),
        size,
        batches,
        threads,
        mosp_ms: median(mosp),
        apply_ms: median(apply),
        prepare_ms: median(prepare),
        trees_ms: median(trees),
        combine_ms: median(combine),
        costs_ms: median(costs),
        mosp_recompute_ms: median(recompute),
        trees_recomputed,
        combined_in_place,
    })
}
