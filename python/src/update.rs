//! `dyng.update`: one batch applied once to a graph, every listed result brought up to date.

use crate::batch::PyBatch;
use crate::errors::{invalid, invalid_f, FResult};
use crate::graph::{GraphState, PyGraph};
use crate::resources::{Context, PyResources};
use crate::results::{context, PyMosp, PySssp, PyStats, ResultCell, ResultState};
use dyng::ResultMut;
use parking_lot::RwLockWriteGuard;
use pyo3::prelude::*;
use std::sync::Arc;

/// The cells of `results` (a result, or an iterable of them).
fn cells(results: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<ResultCell>> {
    let Some(results) = results else { return Ok(Vec::new()) };
    let one = |r: &Bound<'_, PyAny>| -> Option<ResultCell> {
        if let Ok(s) = r.cast::<PySssp>() {
            return Some(s.get().cell.clone());
        }
        r.cast::<PyMosp>().ok().map(|m| m.get().cell.clone())
    };
    if let Some(c) = one(results) {
        return Ok(vec![c]);
    }
    let mut out = Vec::new();
    let iter = results
        .try_iter()
        .map_err(|_| invalid("dyng: update: results must be a result or a list of SsspResult and MospResult objects"))?;
    for (i, r) in iter.enumerate() {
        let r = r?;
        out.push(one(&r).ok_or_else(|| {
            let t = r.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "?".into());
            invalid(format!("dyng: update: results[{i}] is a {t}, not a dyng.SsspResult or dyng.MospResult"))
        })?);
    }
    Ok(out)
}

/// Write-locks `cells` in address order (every caller locks results in that order, after the
/// graph, so no two calls wait on each other); refuses a result listed twice.
fn lock_all(cells: &[ResultCell]) -> FResult<Vec<RwLockWriteGuard<'_, ResultState>>> {
    let mut order: Vec<usize> = (0..cells.len()).collect();
    order.sort_by_key(|&i| Arc::as_ptr(&cells[i]) as usize);
    for w in order.windows(2) {
        if Arc::ptr_eq(&cells[w[0]], &cells[w[1]]) {
            let (a, b) = (w[0].min(w[1]), w[0].max(w[1]));
            return Err(invalid_f(format!("dyng: update: results[{b}] is results[{a}] again; list each result once")));
        }
    }
    let mut guards: Vec<Option<RwLockWriteGuard<'_, ResultState>>> = (0..cells.len()).map(|_| None).collect();
    for i in order {
        guards[i] = Some(cells[i].write());
    }
    Ok(guards.into_iter().map(|g| g.expect("every result locked")).collect())
}

/// Applies `batch` to `graph` once (in place; its version goes up by one) and brings every
/// result in `results` (SsspResult and MospResult objects of this graph's current state, or a
/// single one) up to date, repairing what the batch changed or, where the adaptive policy
/// predicts that costs more, recomputing. Returns one `dyng.UpdateStats` per result (a MOSP
/// result's counters summed over its objectives).
///
/// Everything is checked before anything changes: a bad batch (ids outside [0, n), weights
/// outside [1, 2^31-1], another K) or a stale result (of another graph, or of an older version)
/// raises `dyng.InvalidArgument` or `dyng.StaleResult` and leaves the graph and every result as
/// they were. Arrays taken from the results before the call keep their state. The GIL is
/// released while it runs; other calls on the graph or the results wait for it.
#[pyfunction]
#[pyo3(signature = (resources, graph, batch, results = None))]
pub fn update(
    py: Python<'_>,
    resources: &Bound<'_, PyResources>,
    graph: &Bound<'_, PyGraph>,
    batch: &Bound<'_, PyBatch>,
    results: Option<&Bound<'_, PyAny>>,
) -> PyResult<Vec<PyStats>> {
    let g = graph.get();
    let ctx = context(resources.get(), g)?;
    let cells = cells(results)?;
    let b = batch.get().for_graph(g.k)?;
    let gc = g.cell.clone();
    let stats = py.detach(move || -> FResult<Vec<dyng::UpdateStats>> {
        let mut graph = gc.write();
        let mut guards = lock_all(&cells)?;
        match (&mut *graph, &ctx) {
            (GraphState::Local(g), Context::Local(r)) => {
                let mut list = guards
                    .iter_mut()
                    .enumerate()
                    .map(|(i, s)| match &mut **s {
                        ResultState::Sssp(s) => Ok(ResultMut::Sssp(s)),
                        ResultState::Mosp(m) => Ok(ResultMut::Mosp(m)),
                        ResultState::Worker(_) => Err(invalid_f(format!(
                            "dyng: update: results[{i}] lives in a worker but the graph is in this process; list only results of the graph"
                        ))),
                    })
                    .collect::<FResult<Vec<_>>>()?;
                Ok(crate::bench::inner(|| dyng::update(r, g, &b.view(), &mut list))?)
            }
            (GraphState::Worker(g), _) => {
                let mut list = guards
                    .iter_mut()
                    .enumerate()
                    .map(|(i, s)| match &mut **s {
                        ResultState::Worker(w) => Ok(w),
                        _ => Err(invalid_f(format!(
                            "dyng: update: results[{i}] is an in-process result but the graph lives in a worker; list only results of the graph"
                        ))),
                    })
                    .collect::<FResult<Vec<_>>>()?;
                Ok(g.update(&b, &mut list)?)
            }
            (GraphState::Local(_), Context::Worker(_)) => unreachable!("context() pairs them"),
        }
    })?;
    Ok(stats.into_iter().map(PyStats::from).collect())
}
