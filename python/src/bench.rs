//! The Rust side of `bench/python/overhead.py`: one call of the Rust API, timed inside the
//! extension, on the same objects the Python API works on, so that the benchmark can set the
//! Python call beside the library call it wraps (interleaved, in one process); and the time the
//! last Python call on this thread spent inside the Rust API call it wraps (`inner`), so that the
//! layer's own cost is read within one call, which a loaded host slows far less than two.

use crate::batch::PyBatch;
use crate::errors::{invalid, invalid_f, FResult};
use crate::graph::{GraphState, PyGraph};
use crate::resources::{Context, PyResources};
use crate::results::{PyMosp, PySssp, ResultState};
use pyo3::prelude::*;
use std::cell::Cell;
use std::time::Instant;

thread_local! {
    static INNER_NS: Cell<u64> = const { Cell::new(0) };
}

/// Runs `f` (the Rust API call a Python call wraps), noting its time for `_last_inner_ns`.
pub fn inner<T>(f: impl FnOnce() -> T) -> T {
    let t = Instant::now();
    let out = f();
    INNER_NS.with(|c| c.set(t.elapsed().as_nanos() as u64));
    out
}

/// _last_inner_ns() -> int
///
/// Nanoseconds the last compute, update or array read of this thread spent inside the Rust API
/// call it wraps (in process only); for the overhead benchmark.
#[pyfunction]
pub fn _last_inner_ns() -> u64 {
    INNER_NS.with(Cell::get)
}

/// _time_rust_call(op, resources, graph, *, source=0, batch=None, result=None) -> int
///
/// Nanoseconds of one Rust API call: "sssp_compute" (objective 0 from `source`),
/// "mosp_compute", "update" (`batch` on `graph` and `result`), "read_distances" (the distances
/// snapshot of `result`, an SsspResult). In process only; for the overhead benchmark.
#[pyfunction]
#[pyo3(signature = (op, resources, graph, *, source = 0, batch = None, result = None))]
pub fn _time_rust_call(
    py: Python<'_>,
    op: &str,
    resources: &PyResources,
    graph: &PyGraph,
    source: usize,
    batch: Option<&PyBatch>,
    result: Option<&Bound<'_, PyAny>>,
) -> PyResult<u64> {
    let Context::Local(r) = &resources.ctx else { return Err(invalid("dyng: _time_rust_call: in-process resources only")) };
    let cell = match result {
        Some(x) => Some(if let Ok(s) = x.cast::<PySssp>() { s.get().cell.clone() } else { x.cast::<PyMosp>()?.get().cell.clone() }),
        None => None,
    };
    let b = batch.map(|b| b.for_graph(graph.k)).transpose()?;
    let gc = graph.cell.clone();
    let op = op.to_string();
    Ok(py.detach(move || -> FResult<u64> {
        let mut g = gc.write();
        let GraphState::Local(g) = &mut *g else { return Err(invalid_f("dyng: _time_rust_call: an in-process graph only")) };
        let mut res = cell.as_ref().map(|c| c.write());
        let view = b.as_ref().map(|b| b.view());
        let t = Instant::now();
        // What the call returns is dropped after the clock stops, as the Python side does.
        let kept: Box<dyn std::any::Any + Send> = match (op.as_str(), res.as_deref_mut(), view) {
            ("sssp_compute", _, _) => Box::new(dyng::SsspResult::compute(r, g, source, 0, &Default::default())?),
            ("mosp_compute", _, _) => Box::new(dyng::MospResult::compute(r, g, source, &Default::default())?),
            ("update", Some(ResultState::Sssp(s)), Some(v)) => Box::new(dyng::update_one(r, g, &v, s)?),
            ("update", Some(ResultState::Mosp(m)), Some(v)) => Box::new(dyng::update_one(r, g, &v, m)?),
            ("read_distances", Some(ResultState::Sssp(s)), _) => Box::new(std::hint::black_box(s.distances_snapshot())),
            (other, _, _) => return Err(invalid_f(format!("dyng: _time_rust_call: {other:?} with these arguments is not an op"))),
        };
        let ns = t.elapsed().as_nanos() as u64;
        drop(kept);
        Ok(ns)
    })?)
}
