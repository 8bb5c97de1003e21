//! File formats and generators of the original programs, byte for byte.
//!
//! Readers never size an allocation from a count the file cannot hold and report path, line and
//! column on malformed input; writers produce the originals' exact bytes.
//!
//! - [`formats`]: the graph, batch, tree and cache files;
//! - [`generators`]: the originals' random numbers, change batches and synthetic graphs;
//! - [`driver`]: the drop-in driver's case inputs, output folder and timing CSV.

pub mod driver;
pub mod formats;
pub mod generators;

/// Starts a reader thread in `scope`: a thread the system refuses (`ulimit -u`) is
/// [`Error::Resource`](crate::Error::Resource) with the OS error, not the panic of `Scope::spawn`.
pub(crate) fn spawn_reader<'scope, T: Send + 'scope>(
    scope: &'scope std::thread::Scope<'scope, '_>,
    f: impl FnOnce() -> T + Send + 'scope,
) -> crate::Result<std::thread::ScopedJoinHandle<'scope, T>> {
    std::thread::Builder::new()
        .spawn_scoped(scope, f)
        .map_err(|e| crate::Error::Resource(format!("dyng: cannot start a reader thread: {e}")))
}

/// A graph as the text formats hold it: CSR arrays with edge-major weights (`weights[e*k + j]`).
/// `k` is 0 when the Values file is empty (the caller then supplies K).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CsrText {
    /// Vertex count.
    pub n: usize,
    /// Weights per edge (objectives); 0 for an empty Values file.
    pub k: usize,
    /// Row offsets, `n + 1` entries.
    pub row_ptr: Vec<i32>,
    /// Head of every edge, row by row.
    pub col_ind: Vec<i32>,
    /// Edge-major weights, `m * k` entries.
    pub weights: Vec<i32>,
}
