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

/// Every output file of `m`, as (relative path, bytes).
pub fn mosp_output_files(m: &MospResult) -> Vec<(PathBuf, Vec<u8>)> {
    enum Job<'a> {
        Dist(&'a [i64]),
        Tree(&'a [i32]),
        Costs,
    }
    let mut jobs: Vec<(PathBuf, Job<'_>)> = Vec::new();
    for (j, t) in m.trees().iter().enumerate() {
        let dir = PathBuf::from(format!("obj{j}"));
        jobs.push((dir.join("distancesUpdated.txt"), Job::Dist(t.distances())));
        jobs.push((dir.join("SSSPTreeUpdated.txt"), Job::Tree(t.parents())));
    }
    let comb = PathBuf::from("combinedGraph");
    jobs.push((comb.join("distancesCsr.txt"), Job::Dist(m.combined_distances())));
    jobs.push((comb.join("SSSPTreeCsr.txt"), Job::Tree(m.combined_parents())));
    jobs.push((comb.join("mospCosts.txt"), Job::Costs));
    let n = m.combined_distances().len();
    jobs.into_par_iter()
        .map(|(path, job)| {
            let bytes = match job {
                Job::Dist(d) => format_distances(d),
                Job::Tree(p) => format_parents(p),
                Job::Costs => format_costs(n, m.graph_k(), m.path_costs()),
            };
            (path, bytes)
        })
        .collect()
}

/// Writes every output file of `m` under `dir`.
pub fn write_mosp_outputs(dir: &Path, m: &MospResult) -> Result<()> {
    let files = mosp_output_files(m);
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
    let mut s = format!(
        "n={graph_n}\nm_updated={graph_m}\nK={}\ninserts={inserts}\ndeletes={deletes}\n",
        m.k()
    );
    for (j, st) in m.objective_stats().iter().enumerate() {
        s += &format!("invalidated_obj{j}={}\n", st.invalidated);
    }
    let cs = m.combine_stats();
    s += &format!(
        "combined_edges={}\ncombined_L={}\ncombined_delta={}\n",
        cs.edges, cs.scale, cs.delta
    );
    s
}
