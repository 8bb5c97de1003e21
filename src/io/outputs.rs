//! The output folder of a MOSP run, laid out and written exactly like the originals' `mosp`.
//!
//! `obj<k>/distancesUpdated.txt`, `obj<k>/SSSPTreeUpdated.txt` for the K objectives, and
//! `combinedGraph/{distancesCsr,SSSPTreeCsr,mospCosts}.txt`. Directories are created first; the
//! files are formatted in parallel and written one after another.

use super::trees::{format_costs, format_distances, format_parents};
use crate::error::{Error, Result};
use crate::mosp::MospResult;
use rayon::prelude::*;
use std::path::{Path, PathBuf};

/// The arrays of a MOSP run's outputs, wherever they live (in process or in a worker's blocks).
pub struct MospArrays<'a> {
    /// (distances, parents) of objectives 0..K-1.
    pub trees: Vec<(&'a [i64], &'a [i32])>,
    pub combined_distances: &'a [i64],
    pub combined_parents: &'a [i32],
    /// n x KG, vertex-major.
    pub path_costs: &'a [i64],
    /// Objectives of the graph (the path-cost columns).
    pub graph_k: usize,
}

impl<'a> MospArrays<'a> {
    pub fn of(m: &'a MospResult) -> Self {
        MospArrays {
            trees: m.trees().iter().map(|t| (t.distances(), t.parents())).collect(),
            combined_distances: m.combined_distances(),
            combined_parents: m.combined_parents(),
            path_costs: m.path_costs(),
            graph_k: m.graph_k(),
        }
    }
}

/// Every output file of `m`, as (relative path, bytes).
pub fn mosp_output_files(m: &MospResult) -> Vec<(PathBuf, Vec<u8>)> {
    output_files(&MospArrays::of(m))
}

/// Every output file of a run, as (relative path, bytes), formatted in parallel.
pub fn output_files(a: &MospArrays<'_>) -> Vec<(PathBuf, Vec<u8>)> {
    enum Job<'a> {
        Dist(&'a [i64]),
        Tree(&'a [i32]),
        Costs,
    }
    let mut jobs: Vec<(PathBuf, Job<'_>)> = Vec::new();
    for (j, (d, p)) in a.trees.iter().enumerate() {
        let dir = PathBuf::from(format!("obj{j}"));
        jobs.push((dir.join("distancesUpdated.txt"), Job::Dist(d)));
        jobs.push((dir.join("SSSPTreeUpdated.txt"), Job::Tree(p)));
    }
    let comb = PathBuf::from("combinedGraph");
    jobs.push((comb.join("distancesCsr.txt"), Job::Dist(a.combined_distances)));
    jobs.push((comb.join("SSSPTreeCsr.txt"), Job::Tree(a.combined_parents)));
    jobs.push((comb.join("mospCosts.txt"), Job::Costs));
    let n = a.combined_distances.len();
    jobs.into_par_iter()
        .map(|(path, job)| {
            let bytes = match job {
                Job::Dist(d) => format_distances(d),
                Job::Tree(p) => format_parents(p),
                Job::Costs => format_costs(n, a.graph_k, a.path_costs),
            };
            (path, bytes)
        })
        .collect()
}

/// Writes every output file of `m` under `dir`.
pub fn write_mosp_outputs(dir: &Path, m: &MospResult) -> Result<()> {
    write_outputs(dir, &MospArrays::of(m))
}

/// Writes every output file of a run under `dir` (directories first).
pub fn write_outputs(dir: &Path, a: &MospArrays<'_>) -> Result<()> {
    let files = output_files(a);
    for (rel, _) in &files {
        if let Some(parent) = rel.parent() {
            let d = dir.join(parent);
            std::fs::create_dir_all(&d).map_err(|e| {
                Error::invalid(format!("cannot create {}: {e}", d.display()))
            })?;
        }
    }
    for (rel, bytes) in &files {
        let path = dir.join(rel);
        std::fs::write(&path, bytes).map_err(|e| Error::io(&path, e))?;
    }
    Ok(())
}

/// The deterministic counters of a run with the keys of the golden corpus' `stats.txt`:
/// `graph` is the updated graph, `inserts`/`deletes` the batch's line counts.
pub fn mosp_stats_text(graph_n: usize, graph_m: usize, inserts: usize, deletes: usize, m: &MospResult) -> String {
    let invalidated: Vec<i64> = m.objective_stats().iter().map(|s| s.invalidated).collect();
    let cs = m.combine_stats();
    stats_text(graph_n, graph_m, inserts, deletes, &invalidated, (cs.edges as u64, cs.scale, cs.delta))
}

/// [`mosp_stats_text`] from the counters themselves (as they come back from a worker):
/// `invalidated` per objective (K entries), `combined` = (edges, L, delta).
pub fn stats_text(graph_n: usize, graph_m: usize, inserts: usize, deletes: usize, invalidated: &[i64], combined: (u64, u64, i64)) -> String {
    let mut s = format!(
        "n={graph_n}\nm_updated={graph_m}\nK={}\ninserts={inserts}\ndeletes={deletes}\n",
        invalidated.len()
    );
    for (j, v) in invalidated.iter().enumerate() {
        s += &format!("invalidated_obj{j}={v}\n");
    }
    let (edges, scale, delta) = combined;
    s += &format!("combined_edges={edges}\ncombined_L={scale}\ncombined_delta={delta}\n");
    s
}
