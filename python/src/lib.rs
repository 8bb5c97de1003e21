//! The `dyng._dyng` extension module: the classes and functions the `dyng` package exports.
//!
//! In-process work runs on dyng's Rust API; worker-isolated work on the C ABI, which holds the
//! library's implementation of worker-resident graphs and results (`isolated.rs`). Every call
//! that computes, reads a file or updates runs without the GIL.

mod arrays;
mod batch;
mod bench;
mod errors;
mod graph;
mod isolated;
mod resources;
mod results;
mod update;

use pyo3::prelude::*;

/// The library version ("0.1.0").
#[pyfunction]
fn version() -> &'static str {
    dyng_version_str()
}

fn dyng_version_str() -> &'static str {
    // SAFETY: dyng_version returns a static NUL-terminated string.
    unsafe { std::ffi::CStr::from_ptr(dyng::ffi::dyng_version()) }.to_str().unwrap_or("?")
}

/// Reads a tree as the original programs write it: a distances file (`v d` or `v INF` per
/// vertex) and a parents file (`v p`, -1 for the source and unreachable vertices), each listing
/// every vertex of 0..n-1 once. Returns (int64 distances with `DISTANCE_INF`, int32 parents),
/// ready for `SsspResult.from_arrays`; errors name the path and the line.
#[pyfunction]
fn read_tree<'py>(
    py: Python<'py>,
    distances: std::path::PathBuf,
    parents: std::path::PathBuf,
    n: usize,
) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
    let (d, p) = py
        .detach(|| -> dyng::Result<_> {
            Ok((dyng::io::formats::trees::read_distances(&distances, n)?, dyng::io::formats::trees::read_parents(&parents, n)?))
        })
        .map_err(errors::to_py)?;
    Ok((numpy::PyArray::from_vec(py, d).into_any(), arrays::owned_i32(py, p)))
}

#[pymodule]
fn _dyng(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<resources::PyResources>()?;
    m.add_class::<graph::PyGraph>()?;
    m.add_class::<batch::PyBatch>()?;
    m.add_class::<results::PySssp>()?;
    m.add_class::<results::PyMosp>()?;
    m.add_class::<results::PyStats>()?;
    m.add_class::<arrays::Snapshot>()?;
    m.add_function(wrap_pyfunction!(update::update, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(read_tree, m)?)?;
    m.add_function(wrap_pyfunction!(bench::_time_rust_call, m)?)?;
    m.add_function(wrap_pyfunction!(bench::_last_inner_ns, m)?)?;
    m.add("DISTANCE_INF", dyng::DISTANCE_INF)?;
    m.add("__version__", dyng_version_str())?;
    Ok(())
}
