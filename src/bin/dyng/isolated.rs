//! `dyng mosp --isolation worker`: the same job run in a `dyng-worker` process.
//!
//! The inputs are read and the initial trees validated in this process; the graph goes to the
//! worker, which computes the MOSP result from scratch, applies the batch and updates it; the
//! output arrays come back as zero-copy shared-memory views. The v1 protocol cannot adopt trees,
//! so the initial trees must be canonical (a canonical tree equals the one computed from
//! scratch, which keeps the outputs byte-identical); `--canonicalize` makes them so.

use crate::fmt::ms_since;
use dyng::io::case::MospInputs;
use dyng::io::outputs::{write_outputs, MospArrays};
use dyng::worker::{kind, Client, WorkerOptions};
use dyng::{Error, MospOptions, SsspResult};
use std::path::Path;
use std::time::Instant;

/// Runs the update in a worker and writes the outputs under `out` (unless `None`).
#[allow(clippy::too_many_arguments)]
pub fn run(
    inp: &MospInputs,
    trees: &[SsspResult],
    preferences: &[u32],
    delta: Option<i64>,
    out: Option<&Path>,
    quiet: bool,
    stats: Option<&Path>,
) -> dyng::Result<()> {
    if let Some(j) = trees.iter().position(|t| !t.is_canonical()) {
        return Err(Error::invalid(format!(
            "--isolation worker needs canonical initial trees, and the tree of objective {j} keeps a higher-id tie parent; pass --canonicalize"
        )));
    }
    let t0 = Instant::now();
    let client = Client::spawn(WorkerOptions::default())?;
    client.load_graph(inp.graph.csr())?;
    let opt = MospOptions {
        k: Some(inp.k),
        preferences: preferences.to_vec(),
        delta,
        ..Default::default()
    };
    let r = client.mosp_compute(inp.source, &opt)?;
    let t_update = Instant::now();
    client.update(&inp.batch.view(), &[r.id])?;
    let update_ms = ms_since(t_update);
    let tree_views = (0..inp.k)
        .map(|j| client.view(r.id, 0b11, j))
        .collect::<dyng::Result<Vec<_>>>()?;
    let combined = client.view(r.id, 0, 0)?;
    let missing = || Error::Protocol("the worker's reply lacks an output array".into());
    let mut arrays = MospArrays {
        trees: Vec::with_capacity(inp.k),
        combined_distances: combined.i64s(kind::COMBINED_DIST).ok_or_else(missing)?,
        combined_parents: combined.i32s(kind::COMBINED_PARENT).ok_or_else(missing)?,
        path_costs: combined.i64s(kind::PATH_COSTS).ok_or_else(missing)?,
        graph_k: inp.graph.k(),
    };
    for v in &tree_views {
        arrays.trees.push((v.i64s(kind::DIST).ok_or_else(missing)?, v.i32s(kind::PARENT).ok_or_else(missing)?));
    }
    if let Some(dir) = out {
        write_outputs(dir, &arrays).map_err(|e| {
            Error::invalid(format!("cannot write the outputs to {}: {e}", dir.display()))
        })?;
    }
    if !quiet {
        println!(
            "graph  n={} K={}; batch {} inserts, {} deletes",
            inp.graph.n(),
            inp.k,
            inp.batch.num_insertions(),
            inp.batch.num_deletions()
        );
        println!(
            "worker pid {}, update {update_ms:.3} ms (counters are not reported across the worker boundary)",
            client.worker_pid().unwrap_or(0)
        );
    }
    if let Some(path) = stats {
        let text = format!(
            "n={}\nK={}\ninserts={}\ndeletes={}\n",
            inp.graph.n(),
            inp.k,
            inp.batch.num_insertions(),
            inp.batch.num_deletions()
        );
        std::fs::write(path, text).map_err(|e| Error::io(path, e))?;
    }
    println!("RESULT update_ms={update_ms:.3} end_to_end_ms={:.3} isolation=worker", ms_since(t0));
    Ok(())
}
