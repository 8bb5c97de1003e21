//! `dyng mosp --isolation worker`: the same job run in a `dyng-worker` process.
//!
//! The inputs are read in this process; the graph goes to a worker session, which adopts the
//! initial trees exactly as the in-process driver does (the same `from_arrays_unverified` per
//! tree, with `--canonicalize`, and `from_trees_deferred`, run in the worker, so errors come at
//! the same step and read the same), applies the batch and updates the result, which combines
//! the trees once; the output arrays come back as zero-copy shared-memory views and the counters
//! in one call.

use crate::fmt::ms_since;
use dyng::io::driver::case::MospInputs;
use dyng::io::driver::outputs::{stats_text, write_outputs, MospArrays};
use dyng::session::Session;
use dyng::{Error, Fallback, SsspOptions};
use std::path::Path;
use std::time::Instant;

/// What the worker runs and how, from the command line.
pub struct Job<'a> {
    pub canonicalize: bool,
    pub preferences: &'a [u32],
    pub delta: Option<i64>,
    pub backend: dyng::Backend,
    pub out: Option<&'a Path>,
    pub quiet: bool,
    pub stats: Option<&'a Path>,
}

/// Runs the adoption and the update in a worker and writes the outputs under `job.out`.
pub fn run(inp: &mut MospInputs, job: &Job<'_>) -> dyng::Result<()> {
    let t0 = Instant::now();
    let session = Session::worker(job.backend, Default::default())?;
    let mut graph = session.load_graph(inp.graph.to_csr())?;
    let bounds = crate::mosp::weight_bounds(inp);
    let sopt = SsspOptions { delta: job.delta, fallback: Fallback::AdaptiveCounted };
    let init = std::mem::take(&mut inp.init);
    let mut mosp = session.adopt_mosp_as_originals(&graph, inp.source, init, job.canonicalize, &bounds, job.preferences, &sopt)?;
    let t_update = Instant::now();
    session.update(&mut graph, &inp.batch.view(), &mut [&mut mosp])?;
    let update_ms = ms_since(t_update);
    let snap = mosp.mosp_snapshot()?;
    let arrays = MospArrays {
        trees: (0..snap.k()).map(|j| snap.tree(j)).collect(),
        combined_distances: snap.combined_distances(),
        combined_parents: snap.combined_parents(),
        path_costs: snap.path_costs(),
        graph_k: snap.graph_k(),
    };
    if let Some(dir) = job.out {
        write_outputs(dir, &arrays).map_err(|e| {
            Error::invalid(format!("cannot write the outputs to {}: {e}", dir.display()))
        })?;
    }
    // The counters cost a call to the worker: read only when printed or written.
    let counters = if !job.quiet || job.stats.is_some() { Some(mosp.mosp_counters()?) } else { None };
    if let Some(c) = counters.as_ref().filter(|_| !job.quiet) {
        println!(
            "graph  n={} K={}; batch {} inserts, {} deletes",
            inp.graph.n(),
            inp.k,
            inp.batch.num_insertions(),
            inp.batch.num_deletions()
        );
        println!("worker pid {}, update {update_ms:.3} ms", session.worker_pid().unwrap_or(0));
        for (j, o) in c.objectives.iter().enumerate() {
            println!(
                "obj{j}   SOSP update (invalidated {}, iterations {}, epochs {}, pushes {})",
                o.invalidated, o.iterations, o.epochs, o.pushes
            );
        }
        let comb = &c.combined;
        println!(
            "comb   combined graph + SOSP ({} edges, L={}, delta {}, iterations {}, pushes {})",
            comb.edges, comb.scale, comb.delta, comb.search.iterations, comb.search.pushes
        );
    }
    if let (Some(path), Some(c)) = (job.stats, &counters) {
        // m of the updated graph: the session's graph is the worker's, mirrored here.
        let invalidated: Vec<i64> = c.objectives.iter().map(|o| o.invalidated).collect();
        let comb = &c.combined;
        let text = stats_text(
            inp.graph.n(),
            graph.graph().m(),
            inp.batch.num_insertions(),
            inp.batch.num_deletions(),
            &invalidated,
            (comb.edges as u64, comb.scale, comb.delta),
        );
        std::fs::write(path, text).map_err(|e| Error::io(path, e))?;
    }
    println!("RESULT update_ms={update_ms:.3} end_to_end_ms={:.3} isolation=worker", ms_since(t0));
    Ok(())
}
