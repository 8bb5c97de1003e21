//! The inputs of a MOSP run as the original driver takes them: a CSR triplet (or its binary
//! cache), a batch folder and a folder of K initial trees.
//!
//! Shared by the CLI, the C ABI and the golden-corpus tests, so every entry point reads a case the
//! same way. The batch and the 2K tree files are read concurrently after the graph.

use crate::io::formats::{batch_files, cache, csr_text, trees};
use crate::error::{Error, Result};
use crate::graph::{Batch, Csr, Graph, WeightLayout};
use std::path::Path;
use std::time::Instant;

/// Where a MOSP run's inputs are and how to read them.
#[derive(Debug, Clone, Copy)]
pub struct CasePaths<'a> {
    /// Prefix of the CSR text triplet.
    pub graph: &'a Path,
    /// Folder with `insert.txt` and `delete.txt`.
    pub changes: &'a Path,
    /// Folder with `obj<k>/distancesOriginal.txt` and `obj<k>/SSSPTreeOriginal.txt`.
    pub init: &'a Path,
    /// Binary graph cache, if any.
    pub cache: Option<&'a Path>,
}

/// The inputs, read and checked.
#[derive(Debug)]
pub struct MospInputs {
    /// The graph of the CSR triplet (or its cache), at version 0.
    pub graph: Graph,
    /// The batch of `insert.txt` and `delete.txt`, checked against the graph.
    pub batch: Batch,
    /// Objectives used (K <= KG).
    pub k: usize,
    /// The source vertex of the initial trees, in `[0, n)`.
    pub source: usize,
    /// The K initial trees (distances, parents).
    pub init: Vec<(Vec<i64>, Vec<i32>)>,
    /// Set when the cache could not be written (the graph is still valid).
    pub warning: Option<String>,
    /// Nanoseconds spent reading and validating the graph.
    pub read_graph_ns: u64,
    /// Nanoseconds spent reading the batch and the initial trees.
    pub read_changes_and_trees_ns: u64,
}

/// The graph, from its binary cache (if given) or its text triplet, and the cache's warning;
/// with `then(n, K)` of it, which a text triplet's read runs alongside (see
/// `csr_text::read_graph_and`), a cache's after it.
fn read_graph<T: Send>(p: &CasePaths<'_>, k: Option<usize>, then: impl Fn(usize, usize) -> T + Sync) -> Result<(Graph, Option<String>, T, std::time::Duration)> {
    match p.cache {
        Some(c) => {
            let started = Instant::now();
            let loaded = cache::load_or_parse(c, p.graph)?;
            let t = loaded.graph;
            let k = csr_text::objectives(t.k, k)?;
            let csr = Csr::from_arrays(t.n, k, t.row_ptr, t.col_ind, &t.weights, WeightLayout::EdgeMajor)?;
            let g = Graph::new(csr);
            let took = started.elapsed();
            let then = then(g.n(), g.k());
            Ok((g, loaded.warning, then, took))
        }
        None => csr_text::read_graph_and(p.graph, k, then).map(|(g, t, took)| (g, None, t, took)),
    }
}

/// Reads the K initial trees of `dir` concurrently.
pub fn read_init_trees(dir: &Path, k: usize, n: usize) -> Result<Vec<(Vec<i64>, Vec<i32>)>> {
    let panicked = || Error::Internal("a reader thread panicked".into());
    std::thread::scope(|s| {
        let jobs: Vec<_> = (0..k)
            .map(|j| {
                crate::io::spawn_reader(s, move || -> Result<(Vec<i64>, Vec<i32>)> {
                    let obj = dir.join(format!("obj{j}"));
                    let d = trees::read_distances(&obj.join("distancesOriginal.txt"), n)?;
                    let p = trees::read_parents(&obj.join("SSSPTreeOriginal.txt"), n)?;
                    Ok((d, p))
                })
            })
            .collect::<Result<_>>()?;
        jobs.into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err(panicked())))
            .collect()
    })
}

/// Reads a case. `k` = objectives used (default all; also supplies K for an edgeless graph).
pub fn read_mosp_inputs(p: &CasePaths<'_>, k: Option<usize>, source: usize) -> Result<MospInputs> {
    let t0 = Instant::now();
    // The batch and the trees need only n and K: they are read while the graph is, and their
    // errors, if any, reported after the graph's and the source's (the order a read one after
    // the other gives).
    let others = |n: usize, kg: usize| {
        let k = k.map_or(kg, |k| k.min(kg));
        std::thread::scope(|s| -> Result<_> {
            let b = crate::io::spawn_reader(s, || batch_files::read_batch_dir(p.changes, n, kg))?;
            let t = read_init_trees(p.init, k, n);
            let b = b
                .join()
                .unwrap_or_else(|_| Err(Error::Internal("a reader thread panicked".into())));
            Ok((b, t))
        })
    };
    let (graph, warning, read, graph_took) = read_graph(p, k, others)?;
    let kg = graph.k();
    let k = k.map_or(kg, |k| k.min(kg));
    let n = graph.n();
    if source >= n {
        return Err(Error::invalid(format!(
            "invalid MOSP update input: source {source} is outside [0, n = {n})"
        )));
    }
    let (batch, init) = read?;
    // The graph's stage is the graph's read (the others beside it); theirs, what they took past it.
    let read_graph_ns = graph_took.as_nanos() as u64;
    let read_changes_and_trees_ns = (t0.elapsed().as_nanos() as u64).saturating_sub(read_graph_ns);
    Ok(MospInputs {
        graph,
        batch: batch?,
        k,
        source,
        init: init?,
        warning,
        read_graph_ns,
        read_changes_and_trees_ns,
    })
}
