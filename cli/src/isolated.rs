//! `dyng mosp --isolation worker`: the same job run in a `dyng-worker` process.
//!
//! The inputs are read in this process; the graph goes to the worker, which adopts the initial
//! trees exactly as the in-process driver does (ADOPT_MOSP with extension 4's weight bounds runs
//! the same `from_arrays_unverified` per tree, with `--canonicalize`, and `from_trees_deferred`,
//! so errors come at the same step and read the same), applies the batch and updates the result,
//! which combines the trees once; the output arrays come back as zero-copy shared-memory views
//! and the counters through STATS.

use crate::fmt::ms_since;
use dyng::io::case::MospInputs;
use dyng::io::outputs::{stats_text, write_outputs, MospArrays};
use dyng::worker::messages::{BACKEND_CPU, BACKEND_CUDA, BACKEND_SEQUENTIAL};
use dyng::worker::{kind, Client, WorkerOptions};
use dyng::Error;
use std::path::Path;
use std::time::Instant;

/// What the worker runs and how, from the command line.
pub struct Job<'a> {
    pub canonicalize: bool,
    pub preferences: &'a [u32],
    pub delta: Option<i64>,
    pub backend: crate::BackendArg,
    pub out: Option<&'a Path>,
    pub quiet: bool,
    pub stats: Option<&'a Path>,
}

/// Runs the adoption and the update in a worker and writes the outputs under `job.out`.
pub fn run(inp: &MospInputs, job: &Job<'_>) -> dyng::Result<()> {
    let t0 = Instant::now();
    let backend = match job.backend {
        crate::BackendArg::Sequential => BACKEND_SEQUENTIAL,
        crate::BackendArg::Parallel => BACKEND_CPU,
        crate::BackendArg::Cuda => BACKEND_CUDA,
    };
    let client = Client::spawn(WorkerOptions { backend, ..WorkerOptions::default() })?;
    client.load_graph(&inp.graph.to_csr())?;
    let trees: Vec<(&[i64], &[i32])> = inp.init.iter().map(|(d, p)| (&d[..], &p[..])).collect();
    let bounds = crate::mosp::weight_bounds(inp);
    let deltas = vec![job.delta; inp.k];
    let r = client.adopt_mosp_as_originals(inp.source, &trees, job.canonicalize, &deltas, dyng::Fallback::AdaptiveCounted, job.preferences, &bounds)?;
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
    if let Some(dir) = job.out {
        write_outputs(dir, &arrays).map_err(|e| {
            Error::invalid(format!("cannot write the outputs to {}: {e}", dir.display()))
        })?;
    }
    // The counters cost a STATS call: read only when printed or written.
    let counters = if !job.quiet || job.stats.is_some() { Some(client.result_stats(r.id)?) } else { None };
    let comb = counters.as_ref().and_then(|c| c.combined).unwrap_or_default();
    if let Some(c) = counters.as_ref().filter(|_| !job.quiet) {
        println!(
            "graph  n={} K={}; batch {} inserts, {} deletes",
            inp.graph.n(),
            inp.k,
            inp.batch.num_insertions(),
            inp.batch.num_deletions()
        );
        println!("worker pid {}, update {update_ms:.3} ms", client.worker_pid().unwrap_or(0));
        for o in &c.objectives {
            println!(
                "obj{}   SOSP update (invalidated {}, iterations {}, epochs {}, pushes {})",
                o.objective, o.invalidated, o.iterations, o.epochs, o.pushes
            );
        }
        println!(
            "comb   combined graph + SOSP ({} edges, L={}, delta {}, iterations {}, pushes {})",
            comb.edges, comb.scale, comb.delta, comb.iterations, comb.pushes
        );
    }
    if let (Some(path), Some(c)) = (job.stats, &counters) {
        // m of the updated graph: the edge count of the worker's graph (its CHECKPOINT view).
        let m = client.checkpoint()?.arrays().iter().find(|a| a.kind == kind::COL_IND).ok_or_else(missing)?.count as usize;
        let invalidated: Vec<i64> = c.objectives.iter().map(|o| o.invalidated as i64).collect();
        let text = stats_text(
            inp.graph.n(),
            m,
            inp.batch.num_insertions(),
            inp.batch.num_deletions(),
            &invalidated,
            (comb.edges, comb.scale as u64, comb.delta),
        );
        std::fs::write(path, text).map_err(|e| Error::io(path, e))?;
    }
    println!("RESULT update_ms={update_ms:.3} end_to_end_ms={:.3} isolation=worker", ms_since(t0));
    Ok(())
}
