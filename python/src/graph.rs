//! `dyng.Graph`: a directed graph with K integer weights per edge, resident and changed in place
//! by `dyng.update`.

use crate::arrays;
use crate::errors::{invalid, to_py};
use crate::isolated::WorkerGraph;
use crate::resources::{Context, PyResources};
use dyng::io::formats::mtx::{MtxOptions, MtxWeights};
use dyng::io::CsrText;
use dyng::{Csr, WeightLayout};
use parking_lot::RwLock;
use pyo3::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Where the graph lives (one per Python graph, behind its lock: the sizes do not matter).
#[allow(clippy::large_enum_variant)]
pub enum GraphState {
    Local(dyng::Graph),
    Worker(WorkerGraph),
}

/// A graph shared by the Python object and the calls that run without the GIL: computes read it
/// together, an update has it alone (and waits for the computes in flight).
pub type GraphCell = Arc<RwLock<GraphState>>;

/// A directed graph with K integer weights per edge (K objectives: distance, time, ...).
///
/// Build one with `Graph.from_csr`, `Graph.from_edges`, `Graph.from_scipy`,
/// `Graph.from_networkx` or `Graph.read`. Vertex ids are 0..n-1; weights are integers in
/// [1, 2^31-1]; parallel edges and self-loops are allowed. The graph is changed in place by
/// `dyng.update`, each batch incrementing `version`; results of an older version are stale.
/// Pass `resources=` a worker-isolated `dyng.Resources` to keep the graph in that worker.
#[pyclass(frozen, module = "dyng", name = "Graph")]
pub struct PyGraph {
    pub cell: GraphCell,
    /// Vertices and objectives: fixed for the life of the graph.
    pub n: usize,
    pub k: usize,
    /// The resources of a worker-resident graph (results and updates must use them).
    pub worker_res: Option<Py<PyResources>>,
}

/// `path` as a file path, or a list of them (DIMACS: one file per objective).
#[derive(FromPyObject)]
pub enum Paths {
    One(PathBuf),
    Many(Vec<PathBuf>),
}

impl PyGraph {
    /// A graph of `csr`, in this process or in the worker of `resources`.
    pub fn make(py: Python<'_>, csr: Csr, resources: Option<Bound<'_, PyResources>>) -> PyResult<Self> {
        let (n, k) = (csr.n(), csr.k());
        let (state, worker_res) = match resources {
            Some(r) if matches!(r.get().ctx, Context::Worker(_)) => {
                let Context::Worker(w) = &r.get().ctx else { unreachable!() };
                let w = w.clone();
                let g = py.detach(|| WorkerGraph::load(&w, &csr))?;
                (GraphState::Worker(g), Some(r.unbind()))
            }
            _ => (GraphState::Local(py.detach(|| dyng::Graph::new(csr))), None),
        };
        Ok(PyGraph { cell: Arc::new(RwLock::new(state)), n, k, worker_res })
    }

    fn from_text(py: Python<'_>, t: CsrText, resources: Option<Bound<'_, PyResources>>) -> PyResult<Self> {
        let csr = Csr::from_arrays(t.n, t.k, t.row_ptr, t.col_ind, &t.weights, WeightLayout::EdgeMajor).map_err(to_py)?;
        Self::make(py, csr, resources)
    }

    /// (m, version) of the current state.
    pub fn m_version(&self, py: Python<'_>) -> PyResult<(usize, u64)> {
        let cell = self.cell.clone();
        py.detach(move || match &*cell.read() {
            GraphState::Local(g) => Ok((g.m(), g.version())),
            GraphState::Worker(g) => g.info().map(|i| (i.m, i.version)),
        })
        .map_err(PyErr::from)
    }
}

fn format_of(path: &Paths, format: Option<&str>) -> PyResult<&'static str> {
    let one = match path {
        Paths::One(p) => p,
        Paths::Many(_) => return match format {
            None | Some("dimacs") => Ok("dimacs"),
            Some(f) => Err(invalid(format!("dyng: Graph.read: a list of paths is read as DIMACS (one file per objective), not as {f:?}"))),
        },
    };
    match format {
        Some("csr") => Ok("csr"),
        Some("mtx") => Ok("mtx"),
        Some("dimacs") => Ok("dimacs"),
        Some(f) => Err(invalid(format!("dyng: Graph.read: format = {f:?}; want \"csr\", \"mtx\" or \"dimacs\""))),
        None => Ok(match one.extension().and_then(|e| e.to_str()) {
            Some("mtx") => "mtx",
            Some("gr") => "dimacs",
            _ => "csr",
        }),
    }
}

#[pymethods]
impl PyGraph {
    /// A graph from CSR arrays: `indptr` (n+1 offsets), `indices` (m heads) and `weights`, an
    /// (m, K) array (row e: the K weights of edge e) or an (m,) array for K = 1. Any integer
    /// dtype is accepted (values must fit 32 bits); the arrays are copied. Row order matters:
    /// a deletion removes the first matching edge of its row, as in the original programs.
    #[staticmethod]
    #[pyo3(signature = (indptr, indices, weights, *, resources = None))]
    fn from_csr(
        py: Python<'_>,
        indptr: &Bound<'_, PyAny>,
        indices: &Bound<'_, PyAny>,
        weights: &Bound<'_, PyAny>,
        resources: Option<Bound<'_, PyResources>>,
    ) -> PyResult<Self> {
        let rp = arrays::i32s(indptr, "indptr", &[1])?.values;
        let ci = arrays::i32s(indices, "indices", &[1])?.values;
        if rp.is_empty() {
            return Err(invalid("dyng: indptr is empty; want n + 1 offsets (at least [0])"));
        }
        let (w, k) = arrays::weights(weights, "weights", ci.len())?;
        let n = rp.len() - 1;
        let csr = py.detach(|| Csr::from_arrays(n, k, rp, ci, &w, WeightLayout::EdgeMajor)).map_err(to_py)?;
        Self::make(py, csr, resources)
    }

    /// A graph from an edge list: edge e goes from `src[e]` to `dst[e]` with the K weights of
    /// row e of `weights` ((m, K), or (m,) for K = 1). `n` defaults to the largest id + 1.
    /// Edges keep their list order within each tail's row.
    #[staticmethod]
    #[pyo3(signature = (src, dst, weights, *, n = None, resources = None))]
    fn from_edges(
        py: Python<'_>,
        src: &Bound<'_, PyAny>,
        dst: &Bound<'_, PyAny>,
        weights: &Bound<'_, PyAny>,
        n: Option<usize>,
        resources: Option<Bound<'_, PyResources>>,
    ) -> PyResult<Self> {
        let s = arrays::i32s(src, "src", &[1])?.values;
        let d = arrays::i32s(dst, "dst", &[1])?.values;
        let (w, k) = arrays::weights(weights, "weights", s.len())?;
        let n = n.unwrap_or_else(|| s.iter().chain(&d).map(|&v| v.max(-1) + 1).max().unwrap_or(0) as usize);
        let csr = py.detach(|| Csr::from_edges(n, k, &s, &d, &w)).map_err(to_py)?;
        Self::make(py, csr, resources)
    }

    /// A graph from a scipy.sparse matrix (entry (u, v) = the weight of edge u -> v), or from a
    /// list of K matrices with the same sparsity structure, one per objective. Stored entries are
    /// the edges, in CSR order (explicit zeros are edges of weight 0, which dyng refuses); values
    /// must be integers, in any dtype.
    #[staticmethod]
    #[pyo3(signature = (matrices, *, resources = None))]
    fn from_scipy(py: Python<'_>, matrices: &Bound<'_, PyAny>, resources: Option<Bound<'_, PyResources>>) -> PyResult<Self> {
        let (indptr, indices, weights): (Bound<'_, PyAny>, Bound<'_, PyAny>, Bound<'_, PyAny>) =
            py.import("dyng._convert")?.call_method1("scipy_arrays", (matrices,))?.extract()?;
        Self::from_csr(py, &indptr, &indices, &weights, resources)
    }

    /// A graph from a networkx graph: vertex i is `nodelist[i]` (default `list(G)`), and the K
    /// weights of an edge are its attributes named in `weights` (e.g. ["length", "time"]; a
    /// string for K = 1). An undirected graph gives both directions of each edge (a self-loop
    /// once); a multigraph gives each of its edges. An edge without one of the attributes, or
    /// with a non-integer value, is refused, naming it.
    #[staticmethod]
    #[pyo3(signature = (G, weights, *, nodelist = None, resources = None))]
    #[allow(non_snake_case)]
    fn from_networkx(
        py: Python<'_>,
        G: &Bound<'_, PyAny>,
        weights: &Bound<'_, PyAny>,
        nodelist: Option<&Bound<'_, PyAny>>,
        resources: Option<Bound<'_, PyResources>>,
    ) -> PyResult<Self> {
        let (src, dst, w, n): (Bound<'_, PyAny>, Bound<'_, PyAny>, Bound<'_, PyAny>, usize) =
            py.import("dyng._convert")?.call_method1("networkx_edges", (G, weights, nodelist))?.extract()?;
        Self::from_edges(py, &src, &dst, &w, Some(n), resources)
    }

    /// Reads a graph file, with the errors naming path, line and column:
    /// - "csr": the CSR text files `<path>RowPtr.txt`, `<path>ColInd.txt`, `<path>Values.txt`
    ///   (`k`: K when the files hold no edge);
    /// - "mtx": a Matrix Market coordinate file, converted as `dyng prep mtx2csr` does (both
    ///   directions of a symmetric entry, duplicates and self-loops dropped): `k` weights per
    ///   edge (default 1) drawn uniformly from `weight_range` by mt19937(`seed`), or, with
    ///   `keep_weights`, objective 0 taken from the file's values;
    /// - "dimacs": a DIMACS `.gr` file, or a list of them, one per objective (same arcs in each);
    ///   `zero_to_one` reads weight 0 as 1 instead of refusing it.
    /// Without `format`, `.mtx` is Matrix Market, `.gr` or a list is DIMACS, anything else a CSR
    /// prefix.
    #[staticmethod]
    #[pyo3(
        signature = (path, format = None, *, k = None, weight_range = (1, 100), seed = 12345, keep_weights = false, zero_to_one = false, resources = None),
        text_signature = "(path, format=None, *, k=None, weight_range=(1, 100), seed=12345, keep_weights=False, zero_to_one=False, resources=None)"
    )]
    #[allow(clippy::too_many_arguments)]
    fn read(
        py: Python<'_>,
        path: Paths,
        format: Option<&str>,
        k: Option<usize>,
        weight_range: (i32, i32),
        seed: u32,
        keep_weights: bool,
        zero_to_one: bool,
        resources: Option<Bound<'_, PyResources>>,
    ) -> PyResult<Self> {
        let fmt = format_of(&path, format)?;
        let paths: Vec<PathBuf> = match path {
            Paths::One(p) => vec![p],
            Paths::Many(v) => v,
        };
        let only = |what: &str, ok: bool| -> PyResult<()> {
            if ok { Ok(()) } else { Err(invalid(format!("dyng: Graph.read: {what} applies to another format than {fmt:?}"))) }
        };
        only("zero_to_one", !zero_to_one || fmt == "dimacs")?;
        only("keep_weights", !keep_weights || fmt == "mtx")?;
        only("k", k.is_none() || fmt != "dimacs")?;
        let text = py.detach(|| -> dyng::Result<CsrText> {
            match fmt {
                "csr" => {
                    let mut t = dyng::io::formats::csr_text::read_csr_triplet(&paths[0])?;
                    if t.k == 0 {
                        // An edgeless graph's Values file cannot tell K.
                        t.k = k.unwrap_or(1).max(1);
                    }
                    Ok(t)
                }
                "mtx" => {
                    let weights = if keep_weights { MtxWeights::File { scale: None } } else { MtxWeights::Drawn };
                    let opt = MtxOptions { k: k.unwrap_or(1), wmin: weight_range.0, wmax: weight_range.1, seed, weights };
                    Ok(dyng::io::formats::mtx::convert(&paths[0], &opt)?.0)
                }
                _ => {
                    let refs: Vec<&Path> = paths.iter().map(PathBuf::as_path).collect();
                    dyng::io::formats::dimacs::read_dimacs_objectives(&refs, zero_to_one)
                }
            }
        });
        Self::from_text(py, text.map_err(to_py)?, resources)
    }

    /// Vertices.
    #[getter]
    fn n(&self) -> usize {
        self.n
    }

    /// Objectives (weight columns).
    #[getter]
    fn k(&self) -> usize {
        self.k
    }

    /// Edges (current state).
    #[getter]
    fn m(&self, py: Python<'_>) -> PyResult<usize> {
        Ok(self.m_version(py)?.0)
    }

    /// Batches applied so far.
    #[getter]
    fn version(&self, py: Python<'_>) -> PyResult<u64> {
        Ok(self.m_version(py)?.1)
    }

    /// "in-process" or "worker".
    #[getter]
    fn isolation(&self) -> &'static str {
        if self.worker_res.is_some() { "worker" } else { "in-process" }
    }

    /// Bytes the graph holds in this process (its rows with their room to grow, and its in-rows
    /// once an update made them); a worker's graph is not counted.
    #[getter]
    fn bytes(&self, py: Python<'_>) -> usize {
        let cell = self.cell.clone();
        py.detach(move || match &*cell.read() {
            GraphState::Local(g) => g.bytes(),
            GraphState::Worker(_) => 0,
        })
    }

    /// The current state as new CSR arrays (int32): indptr (n+1), indices (m) and weights
    /// (m, K), rows in the order deletions search them.
    fn to_csr<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>, Bound<'py, PyAny>)> {
        let cell = self.cell.clone();
        let (rp, ci, w, k) = py
            .detach(move || -> Result<_, crate::errors::CError> {
                match &*cell.read() {
                    GraphState::Local(g) => {
                        let c = g.to_csr();
                        Ok((c.row_ptr().to_vec(), c.col_ind().to_vec(), c.weights_edge_major(), c.k()))
                    }
                    GraphState::Worker(g) => {
                        let k = g.info()?.k;
                        let (rp, ci, w) = g.copy_csr()?;
                        let m = ci.len();
                        let mut em = vec![0i32; m * k];
                        for j in 0..k {
                            for e in 0..m {
                                em[e * k + j] = w[j * m + e];
                            }
                        }
                        Ok((rp, ci, em, k))
                    }
                }
            })?;
        Ok((arrays::owned_i32(py, rp), arrays::owned_i32(py, ci), arrays::owned_i32_2d(py, w, k)?))
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let (m, version) = self.m_version(py)?;
        let worker = if self.worker_res.is_some() { ", in a worker" } else { "" };
        Ok(format!("<dyng.Graph n={} m={m} k={} version={version}{worker}>", self.n, self.k))
    }
}
