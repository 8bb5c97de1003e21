//! `dyng.SsspResult`, `dyng.MospResult` and `dyng.UpdateStats`: maintained results with their
//! arrays as zero-copy read-only numpy arrays.

use crate::arrays;
use crate::errors::{invalid, invalid_f, not_supported, FResult, Failure};
use crate::graph::{GraphState, PyGraph};
use crate::isolated::WorkerResult;
use crate::resources::{Context, PyResources};
use dyng::ffi::*;
use dyng::{Fallback, MospOptions, SsspOptions, UpdateStats};
use parking_lot::RwLock;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::sync::Arc;

/// A result, in this process or in the worker.
pub enum ResultState {
    Sssp(dyng::SsspResult),
    Mosp(dyng::MospResult),
    Worker(WorkerResult),
}

/// Shared by the Python object and the calls running without the GIL; `dyng.update` takes it
/// alone.
pub type ResultCell = Arc<RwLock<ResultState>>;

fn cell(s: ResultState) -> ResultCell {
    Arc::new(RwLock::new(s))
}

/// Counters of one compute or update of one result (a MOSP result's: summed over its K
/// objectives). Fields: invalidated, affected, iterations, epochs, pushes, packed_parents,
/// fallback_used, elapsed_ns (0 for a worker's result).
#[pyclass(frozen, module = "dyng", name = "UpdateStats")]
#[derive(Clone)]
pub struct PyStats {
    /// Vertices whose old tree path held a deleted or heavier tree edge (an estimate where the
    /// adaptive policy recomputed before walking the tree; exact under "adaptive-counted").
    #[pyo3(get)]
    invalidated: i64,
    /// Vertices whose distance or parent changed.
    #[pyo3(get)]
    affected: i64,
    /// Push rounds of the search.
    #[pyo3(get)]
    iterations: i64,
    /// Far-pile threshold raises.
    #[pyo3(get)]
    epochs: i64,
    /// Vertex expansions.
    #[pyo3(get)]
    pushes: i64,
    /// Parents travelled in the packed word.
    #[pyo3(get)]
    packed_parents: bool,
    /// The update recomputed from scratch instead of repairing.
    #[pyo3(get)]
    fallback_used: bool,
    /// Wall-clock time of the engine run, in nanoseconds (0 where unknown).
    #[pyo3(get)]
    elapsed_ns: u64,
}

impl From<UpdateStats> for PyStats {
    fn from(s: UpdateStats) -> Self {
        PyStats {
            invalidated: s.invalidated,
            affected: s.affected,
            iterations: s.iterations,
            epochs: s.epochs,
            pushes: s.pushes,
            packed_parents: s.packed_parents,
            fallback_used: s.fallback_used,
            elapsed_ns: s.elapsed_ns,
        }
    }
}

#[pymethods]
impl PyStats {
    /// The counters as a dict.
    fn as_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("invalidated", self.invalidated)?;
        d.set_item("affected", self.affected)?;
        d.set_item("iterations", self.iterations)?;
        d.set_item("epochs", self.epochs)?;
        d.set_item("pushes", self.pushes)?;
        d.set_item("packed_parents", self.packed_parents)?;
        d.set_item("fallback_used", self.fallback_used)?;
        d.set_item("elapsed_ns", self.elapsed_ns)?;
        Ok(d)
    }

    fn __repr__(&self) -> String {
        format!(
            "dyng.UpdateStats(invalidated={}, affected={}, iterations={}, epochs={}, pushes={}, packed_parents={}, fallback_used={}, elapsed_ns={})",
            self.invalidated,
            self.affected,
            self.iterations,
            self.epochs,
            self.pushes,
            if self.packed_parents { "True" } else { "False" },
            if self.fallback_used { "True" } else { "False" },
            self.elapsed_ns
        )
    }
}

/// "adaptive" (default), "adaptive-counted", "never" or "always".
fn fallback_of(name: Option<&str>) -> PyResult<Fallback> {
    match name.unwrap_or("adaptive") {
        "adaptive" => Ok(Fallback::Adaptive),
        "adaptive-counted" => Ok(Fallback::AdaptiveCounted),
        "never" => Ok(Fallback::Never),
        "always" => Ok(Fallback::Always),
        other => Err(invalid(format!(
            "dyng: fallback = {other:?}; want \"adaptive\", \"adaptive-counted\", \"never\" or \"always\""
        ))),
    }
}

fn fallback_code(f: Fallback) -> u32 {
    match f {
        Fallback::Never => DYNG_FALLBACK_NEVER,
        Fallback::Always => DYNG_FALLBACK_ALWAYS,
        Fallback::AdaptiveCounted => DYNG_FALLBACK_ADAPTIVE_COUNTED,
        _ => DYNG_FALLBACK_ADAPTIVE,
    }
}

/// A vertex argument: negative values get the library's message too.
fn vertex(what: &str, v: i64, n: usize) -> PyResult<usize> {
    if v < 0 || v as u64 >= n as u64 {
        return Err(invalid(format!("dyng: {what} {v} is outside [0, n = {n})")));
    }
    Ok(v as usize)
}

fn objective(j: i64, k: usize) -> PyResult<usize> {
    if j < 0 || j as u64 >= k as u64 {
        return Err(invalid(format!("dyng: objective {j} is outside [0, K = {k})")));
    }
    Ok(j as usize)
}

fn delta_of(delta: Option<i64>) -> PyResult<Option<i64>> {
    match delta {
        Some(d) if d <= 0 => Err(invalid(format!("dyng: delta = {d} must be > 0"))),
        d => Ok(d),
    }
}

/// Checks that `res` and `graph` live in the same place; returns the resources' context.
pub fn context(res: &PyResources, graph: &PyGraph) -> PyResult<Context> {
    match (&res.ctx, &graph.worker_res) {
        (Context::Local(_), None) => Ok(res.ctx.clone()),
        (Context::Worker(w), Some(gr)) => match &gr.get().ctx {
            Context::Worker(gw) if Arc::ptr_eq(w, gw) => Ok(res.ctx.clone()),
            _ => Err(invalid(
                "dyng: the graph lives in the worker of another dyng.Resources; use the resources it was made with",
            )),
        },
        (Context::Local(_), Some(_)) => Err(invalid(
            "dyng: the graph lives in a worker (made with isolation=\"worker\" resources); pass those resources",
        )),
        (Context::Worker(_), None) => Err(invalid(
            "dyng: these resources are worker-isolated but the graph lives in this process; make the graph with resources= these resources",
        )),
    }
}

fn read<T: Send>(c: &ResultCell, py: Python<'_>, f: impl FnOnce(&ResultState) -> T + Send) -> T {
    let c = c.clone();
    py.detach(move || f(&c.read_recursive()))
}

/// A snapshot of one array of a result: the library's shared `Arc`, or a worker's view.
enum Got {
    I64(Arc<Vec<i64>>),
    I32(Arc<Vec<i32>>),
    View(crate::isolated::WorkerView),
}

/// Array `array` (`DYNG_ARRAY_*`) of `s`; `tree`: the objective (a MOSP tree's, or an SSSP
/// result's own).
fn snapshot(s: &ResultState, array: u32, tree: usize) -> FResult<Got> {
    Ok(match s {
        ResultState::Sssp(r) if array == DYNG_ARRAY_DISTANCES => Got::I64(r.distances_snapshot()),
        ResultState::Sssp(r) => Got::I32(r.parents_snapshot()),
        ResultState::Mosp(m) => match array {
            DYNG_ARRAY_DISTANCES => Got::I64(m.tree(tree).distances_snapshot()),
            DYNG_ARRAY_PARENTS => Got::I32(m.tree(tree).parents_snapshot()),
            DYNG_ARRAY_COMBINED_DISTANCES => Got::I64(m.combined_distances_snapshot()),
            DYNG_ARRAY_COMBINED_PARENTS => Got::I32(m.combined_parents_snapshot()),
            _ => Got::I64(m.path_costs_snapshot()),
        },
        ResultState::Worker(w) => Got::View(w.view(array, tree as u32)?),
    })
}

/// The arrays of a result as numpy arrays (zero-copy).
fn tree_array<'py>(py: Python<'py>, c: &ResultCell, array: u32, tree: usize) -> PyResult<Bound<'py, PyAny>> {
    match read(c, py, |s| crate::bench::inner(|| snapshot(s, array, tree)))? {
        Got::I64(a) => arrays::from_i64(py, a, None),
        Got::I32(a) => arrays::from_i32(py, a),
        Got::View(v) => arrays::from_view(py, v, None),
    }
}

/// Copies of one array of `trees` (each the objective of a MOSP tree, or an SSSP result's own),
/// end to end in new memory that holds no snapshot; `len`: the array's length (n, or n x KG for
/// path costs). A worker's result is copied by the library without a shared-memory view.
fn tree_copies<'py>(py: Python<'py>, c: &ResultCell, array: u32, trees: &[usize], len: usize) -> PyResult<Bound<'py, PyAny>> {
    enum Owned {
        I64(Vec<i64>),
        I32(Vec<i32>),
    }
    let wide = matches!(array, DYNG_ARRAY_DISTANCES | DYNG_ARRAY_COMBINED_DISTANCES | DYNG_ARRAY_PATH_COSTS);
    let trees = trees.to_vec();
    let got = read(c, py, move |s| -> FResult<Owned> {
        let (mut a64, mut a32) = (Vec::new(), Vec::new());
        for &j in &trees {
            match s {
                ResultState::Worker(w) if wide => a64.extend(w.copy_array::<i64>(array, j as u32, len)?),
                ResultState::Worker(w) => a32.extend(w.copy_array::<i32>(array, j as u32, len)?),
                _ => match snapshot(s, array, j)? {
                    Got::I64(a) => a64.extend_from_slice(&a),
                    Got::I32(a) => a32.extend_from_slice(&a),
                    Got::View(_) => unreachable!("only a worker's result has views"),
                },
            }
        }
        Ok(if wide { Owned::I64(a64) } else { Owned::I32(a32) })
    })?;
    Ok(match got {
        Owned::I64(v) => arrays::owned(py, v),
        Owned::I32(v) => arrays::owned(py, v),
    })
}

fn stats_of(py: Python<'_>, c: &ResultCell) -> PyResult<PyStats> {
    let s = read(c, py, |s| -> FResult<UpdateStats> {
        Ok(match s {
            ResultState::Sssp(r) => r.stats(),
            ResultState::Mosp(m) => UpdateStats::sum(&m.objective_stats()),
            ResultState::Worker(w) => w.info()?.stats,
        })
    })?;
    Ok(s.into())
}

fn version_of(py: Python<'_>, c: &ResultCell) -> PyResult<u64> {
    Ok(read(c, py, |s| -> FResult<u64> {
        Ok(match s {
            ResultState::Sssp(r) => r.graph_version(),
            ResultState::Mosp(m) => m.graph_version(),
            ResultState::Worker(w) => w.info()?.graph_version,
        })
    })?)
}

/// `tree`: the objective's tree (an SSSP result's own), or None for the MOSP tree.
fn path_of<'py>(py: Python<'py>, c: &ResultCell, n: usize, tree: Option<usize>, target: i64) -> PyResult<Bound<'py, PyAny>> {
    let t = vertex("target", target, n)?;
    let p = read(c, py, |s| -> FResult<Vec<i32>> {
        Ok(match (s, tree) {
            (ResultState::Sssp(r), _) => r.path_to(t)?,
            (ResultState::Mosp(m), None) => m.path_to(t)?,
            (ResultState::Mosp(m), Some(j)) => m.tree(j).path_to(t)?,
            (ResultState::Worker(w), None) => w.path(DYNG_TREE_COMBINED, t as i32)?,
            (ResultState::Worker(w), Some(j)) => w.path(j as u32, t as i32)?,
        })
    })?;
    Ok(arrays::owned_i32(py, p))
}

fn copy_of(py: Python<'_>, c: &ResultCell) -> PyResult<ResultCell> {
    let s = read(c, py, |s| match s {
        ResultState::Sssp(r) => Some(ResultState::Sssp(r.clone())),
        ResultState::Mosp(m) => Some(ResultState::Mosp(m.clone())),
        ResultState::Worker(_) => None,
    });
    s.map(cell).ok_or_else(|| not_supported("dyng: copy() of a result resident in a worker is not supported"))
}

/// A maintained single-objective shortest-path tree.
///
/// Made by `SsspResult.compute` or `SsspResult.from_arrays`, brought up to date by
/// `dyng.update`. `distances`, `parents` are zero-copy read-only numpy arrays of the state they
/// were taken from: a later update does not change an array already taken (unreachable
/// vertices have distance `dyng.DISTANCE_INF` and parent -1, as does the source's parent).
#[pyclass(frozen, module = "dyng", name = "SsspResult")]
pub struct PySssp {
    pub cell: ResultCell,
    /// Vertices.
    #[pyo3(get)]
    n: usize,
    /// The source vertex.
    #[pyo3(get)]
    source: usize,
    /// The objective (weight column) of the tree.
    #[pyo3(get)]
    objective: usize,
}

/// A maintained multi-objective result: K shortest-path trees, their combined graph's tree (the
/// MOSP tree) and the cost of every MOSP-tree path in all KG objectives of the graph.
///
/// Made by `MospResult.compute`, `MospResult.from_trees` or `MospResult.from_arrays`, brought
/// up to date by `dyng.update`. Its arrays are zero-copy read-only numpy arrays of the state
/// they were taken from.
#[pyclass(frozen, module = "dyng", name = "MospResult")]
pub struct PyMosp {
    pub cell: ResultCell,
    /// Vertices.
    #[pyo3(get)]
    n: usize,
    /// The source vertex.
    #[pyo3(get)]
    source: usize,
    /// Objectives of the result (K).
    #[pyo3(get)]
    k: usize,
    /// Objectives of the graph (KG): the columns of `path_costs`.
    #[pyo3(get)]
    graph_k: usize,
    /// The preference vector (K values).
    #[pyo3(get)]
    preferences: Vec<u32>,
}

impl PySssp {
    fn of(cell: ResultCell, n: usize, source: usize, objective: usize) -> Self {
        PySssp { cell, n, source, objective }
    }
}

impl PyMosp {
    /// Copies of one array of every tree ((K, n)), or of tree `objective` ((n,)).
    fn trees_copy<'py>(&self, py: Python<'py>, array: u32, objective: Option<i64>) -> PyResult<Bound<'py, PyAny>> {
        match objective {
            Some(j) => tree_copies(py, &self.cell, array, &[self::objective(j, self.k)?], self.n),
            None => {
                let all: Vec<usize> = (0..self.k).collect();
                tree_copies(py, &self.cell, array, &all, self.n)?.call_method1("reshape", ((self.k, self.n),))
            }
        }
    }

    /// The MOSP result of K adopted or computed trees of `g` from `s` (`from_trees`, `from_arrays`).
    fn combine(py: Python<'_>, g: &PyGraph, ctx: Context, s: usize, trees: Vec<ResultCell>, prefs: Vec<u32>) -> PyResult<Self> {
        let given = prefs.clone();
        let gc = g.cell.clone();
        let state = py.detach(move || {
            let graph = gc.read();
            with_trees(&trees, |t| mosp_from_trees_state(&graph, &ctx, s, t, &prefs))
        })?;
        let c = cell(state);
        let (k, kg) = mosp_shape(py, &c)?;
        Ok(Self::of(py, c, g.n, s, k, kg, &given))
    }

    /// `given`: the preferences the caller passed (a worker's result does not report them;
    /// none given means all ones).
    fn of(py: Python<'_>, c: ResultCell, n: usize, source: usize, k: usize, graph_k: usize, given: &[u32]) -> Self {
        let preferences = read(&c, py, |s| match s {
            ResultState::Mosp(m) => m.preferences().values().to_vec(),
            _ if given.is_empty() => vec![1; k],
            _ => given.to_vec(),
        });
        PyMosp { cell: c, n, source, k, graph_k, preferences }
    }
}

#[pymethods]
impl PySssp {
    /// Computes the shortest-path tree of `objective` from `source` on the graph's current
    /// state. `delta`: the bucket width of the search (speed only; default: the graph's);
    /// `fallback`: when an update recomputes instead of repairing ("adaptive", "adaptive-counted":
    /// the same with exact `invalidated` counters, "never", "always"). The GIL is released while
    /// it runs.
    #[staticmethod]
    #[pyo3(signature = (resources, graph, source, objective = 0, *, delta = None, fallback = None))]
    fn compute(
        py: Python<'_>,
        resources: &Bound<'_, PyResources>,
        graph: &Bound<'_, PyGraph>,
        source: i64,
        objective: i64,
        delta: Option<i64>,
        fallback: Option<&str>,
    ) -> PyResult<Self> {
        let g = graph.get();
        let ctx = context(resources.get(), g)?;
        let (s, j) = (vertex("source", source, g.n)?, self::objective(objective, g.k)?);
        let opt = SsspOptions { delta: delta_of(delta)?, fallback: fallback_of(fallback)? };
        let gc = g.cell.clone();
        let state = py.detach(move || -> FResult<ResultState> {
            Ok(match (&*gc.read(), &ctx) {
                (GraphState::Local(g), Context::Local(r)) => ResultState::Sssp(crate::bench::inner(|| dyng::SsspResult::compute(r, g, s, j, &opt))?),
                (GraphState::Worker(g), _) => ResultState::Worker(g.sssp_compute(s as i32, j as u32, opt.delta, fallback_code(opt.fallback))?),
                (GraphState::Local(_), Context::Worker(_)) => unreachable!("context() pairs them"),
            })
        })?;
        Ok(Self::of(cell(state), g.n, s, j))
    }

    /// Adopts an existing tree of `objective` rooted at `source` (n distances, n parents with -1
    /// for the source and unreachable vertices) after checking that it is a shortest-path tree
    /// of the graph's current state. With `canonicalize`, parents first move to the lowest-id
    /// tight in-neighbour (the original programs' rule). The arrays are copied. A worker adopts
    /// with the drop-in policy ("adaptive-counted", the default delta) and takes no other.
    #[staticmethod]
    #[pyo3(signature = (resources, graph, source, objective, distances, parents, *, canonicalize = false, delta = None, fallback = None))]
    #[allow(clippy::too_many_arguments)]
    fn from_arrays(
        py: Python<'_>,
        resources: &Bound<'_, PyResources>,
        graph: &Bound<'_, PyGraph>,
        source: i64,
        objective: i64,
        distances: &Bound<'_, PyAny>,
        parents: &Bound<'_, PyAny>,
        canonicalize: bool,
        delta: Option<i64>,
        fallback: Option<&str>,
    ) -> PyResult<Self> {
        let g = graph.get();
        let ctx = context(resources.get(), g)?;
        let (s, j) = (vertex("source", source, g.n)?, self::objective(objective, g.k)?);
        let dist = arrays::i64s(distances, "distances", &[1])?.values;
        let parent = arrays::i32s(parents, "parents", &[1])?.values;
        let state = adopt(py, g, &ctx, s, j, dist, parent, canonicalize, delta, fallback)?;
        Ok(Self::of(cell(state), g.n, s, j))
    }

    /// Distances (int64, n), zero-copy and read-only; `dyng.DISTANCE_INF` where unreachable.
    #[getter]
    fn distances<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        tree_array(py, &self.cell, DYNG_ARRAY_DISTANCES, self.objective)
    }

    /// Parents (int32, n), zero-copy and read-only; -1 for the source and unreachable vertices.
    #[getter]
    fn parents<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        tree_array(py, &self.cell, DYNG_ARRAY_PARENTS, self.objective)
    }

    /// A copy of the distances: a new, writable int64 array (n) that holds no snapshot (a
    /// later update does not have to copy the result's memory for it).
    fn distances_copy<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        tree_copies(py, &self.cell, DYNG_ARRAY_DISTANCES, &[self.objective], self.n)
    }

    /// A copy of the parents: a new, writable int32 array (n) that holds no snapshot.
    fn parents_copy<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        tree_copies(py, &self.cell, DYNG_ARRAY_PARENTS, &[self.objective], self.n)
    }

    /// Counters of the last compute or update (`dyng.UpdateStats`).
    #[getter]
    fn stats(&self, py: Python<'_>) -> PyResult<PyStats> {
        stats_of(py, &self.cell)
    }

    /// The graph version the result belongs to.
    #[getter]
    fn graph_version(&self, py: Python<'_>) -> PyResult<u64> {
        version_of(py, &self.cell)
    }

    /// The tree path from the source to `target`, source first (int32); empty if `target` is
    /// unreachable.
    fn path<'py>(&self, py: Python<'py>, target: i64) -> PyResult<Bound<'py, PyAny>> {
        path_of(py, &self.cell, self.n, Some(self.objective), target)
    }

    /// An independent copy of the result at its present state (in process only): later
    /// updates of either leave the other as it is.
    fn copy(&self, py: Python<'_>) -> PyResult<Self> {
        Ok(Self::of(copy_of(py, &self.cell)?, self.n, self.source, self.objective))
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "<dyng.SsspResult source={} objective={} n={} graph_version={}>",
            self.source,
            self.objective,
            self.n,
            version_of(py, &self.cell)?
        ))
    }
}

/// Adopts one tree in the result's place (shared by both result classes).
#[allow(clippy::too_many_arguments)]
fn adopt(
    py: Python<'_>,
    g: &PyGraph,
    ctx: &Context,
    s: usize,
    j: usize,
    dist: Vec<i64>,
    parent: Vec<i32>,
    canonicalize: bool,
    delta: Option<i64>,
    fallback: Option<&str>,
) -> PyResult<ResultState> {
    let delta = delta_of(delta)?;
    let fb = fallback_of(fallback)?;
    if matches!(ctx, Context::Worker(_)) && (delta.is_some() || !matches!(fallback, None | Some("adaptive-counted"))) {
        return Err(not_supported(
            "dyng: from_arrays: a worker adopts a tree with the drop-in policy (fallback=\"adaptive-counted\", the default delta); delta and fallback cannot be chosen there",
        ));
    }
    let gc = g.cell.clone();
    let opt = SsspOptions { delta, fallback: fb };
    Ok(py.detach(move || -> FResult<ResultState> {
        Ok(match &*gc.read() {
            GraphState::Local(g) => ResultState::Sssp(dyng::SsspResult::from_arrays(g, s, j, dist, parent, canonicalize, &opt)?),
            GraphState::Worker(g) => ResultState::Worker(g.sssp_from_arrays(s as i32, j as u32, &dist, &parent, canonicalize)?),
        })
    })?)
}

/// The K trees of a MOSP adoption, read-locked in address order (the order every caller takes
/// result locks in), as they are given.
fn with_trees<T>(trees: &[ResultCell], f: impl FnOnce(&[&ResultState]) -> T) -> T {
    let mut order: Vec<usize> = (0..trees.len()).collect();
    order.sort_by_key(|&i| Arc::as_ptr(&trees[i]) as usize);
    let mut guards: Vec<Option<parking_lot::RwLockReadGuard<'_, ResultState>>> = (0..trees.len()).map(|_| None).collect();
    for i in order {
        guards[i] = Some(trees[i].read_recursive());
    }
    let states: Vec<&ResultState> = guards.iter().map(|g| &**g.as_ref().expect("every tree locked")).collect();
    f(&states)
}

fn mosp_from_trees_state(g: &GraphState, ctx: &Context, s: usize, trees: &[&ResultState], prefs: &[u32]) -> FResult<ResultState> {
    Ok(match (g, ctx) {
        (GraphState::Local(g), Context::Local(r)) => {
            let owned = trees
                .iter()
                .enumerate()
                .map(|(i, t)| match t {
                    ResultState::Sssp(t) => Ok(t.clone()),
                    _ => Err(invalid_f(format!("dyng: from_trees: trees[{i}] is not an in-process SsspResult"))),
                })
                .collect::<FResult<Vec<_>>>()?;
            ResultState::Mosp(dyng::MospResult::from_trees(r, g, s, owned, prefs)?)
        }
        (GraphState::Worker(g), _) => {
            let refs = trees
                .iter()
                .enumerate()
                .map(|(i, t)| match t {
                    ResultState::Worker(w) => Ok(w),
                    _ => Err(invalid_f(format!(
                        "dyng: from_trees: trees[{i}] is an in-process result but the graph lives in a worker"
                    ))),
                })
                .collect::<FResult<Vec<_>>>()?;
            ResultState::Worker(g.mosp_from_trees(s as i32, &refs, prefs)?)
        }
        (GraphState::Local(_), Context::Worker(_)) => unreachable!("context() pairs them"),
    })
}

fn preferences_of(p: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<u32>> {
    let Some(p) = p else { return Ok(Vec::new()) };
    let why = |w: String| invalid(format!("dyng: invalid preference vector (need K values >= 1): {w}"));
    arrays::i64s(p, "preferences", &[1])?
        .values
        .into_iter()
        .map(|x| match x {
            x if x < 1 => Err(why(format!("value {x} < 1"))),
            x => u32::try_from(x).map_err(|_| why(format!("lcm exceeds 2^20 = {}", 1u32 << 20))),
        })
        .collect()
}

/// Where a MOSP result that just came to be lives, and its shape.
fn mosp_shape(py: Python<'_>, c: &ResultCell) -> PyResult<(usize, usize)> {
    Ok(read(c, py, |s| -> FResult<(usize, usize)> {
        Ok(match s {
            ResultState::Mosp(m) => (m.k(), m.graph_k()),
            ResultState::Worker(w) => {
                let i = w.info()?;
                (i.k, i.graph_k)
            }
            ResultState::Sssp(_) => return Err(Failure::Py("Internal", "dyng: not a MOSP result".into())),
        })
    })?)
}

#[pymethods]
impl PyMosp {
    /// Computes the K trees (objectives 0..k-1, default all of the graph's) from `source`, their
    /// combined graph under `preferences` (K integers >= 1, default all ones; lcm <= 2^20), its
    /// tree and the path costs. The GIL is released while it runs.
    #[staticmethod]
    #[pyo3(signature = (resources, graph, source, *, preferences = None, k = None, delta = None, fallback = None))]
    #[allow(clippy::too_many_arguments)]
    fn compute(
        py: Python<'_>,
        resources: &Bound<'_, PyResources>,
        graph: &Bound<'_, PyGraph>,
        source: i64,
        preferences: Option<&Bound<'_, PyAny>>,
        k: Option<usize>,
        delta: Option<i64>,
        fallback: Option<&str>,
    ) -> PyResult<Self> {
        let g = graph.get();
        let ctx = context(resources.get(), g)?;
        let s = vertex("source", source, g.n)?;
        let opt = MospOptions { k, preferences: preferences_of(preferences)?, delta: delta_of(delta)?, fallback: fallback_of(fallback)? };
        let given = opt.preferences.clone();
        let gc = g.cell.clone();
        let state = py.detach(move || -> FResult<ResultState> {
            Ok(match (&*gc.read(), &ctx) {
                (GraphState::Local(g), Context::Local(r)) => ResultState::Mosp(crate::bench::inner(|| dyng::MospResult::compute(r, g, s, &opt))?),
                (GraphState::Worker(g), _) => {
                    let k = opt.k.map(|k| u32::try_from(k).unwrap_or(u32::MAX));
                    ResultState::Worker(g.mosp_compute(s as i32, k, &opt.preferences, opt.delta, fallback_code(opt.fallback))?)
                }
                (GraphState::Local(_), Context::Worker(_)) => unreachable!("context() pairs them"),
            })
        })?;
        let c = cell(state);
        let (k, kg) = mosp_shape(py, &c)?;
        Ok(Self::of(py, c, g.n, s, k, kg, &given))
    }

    /// Combines K existing SSSP results of the graph's current state, one per objective
    /// 0..K-1 in that order and all from `source` (typically adopted with
    /// `SsspResult.from_arrays`). The trees are copied; they stay valid and independent.
    #[staticmethod]
    #[pyo3(signature = (resources, graph, source, trees, *, preferences = None))]
    fn from_trees(
        py: Python<'_>,
        resources: &Bound<'_, PyResources>,
        graph: &Bound<'_, PyGraph>,
        source: i64,
        trees: Vec<PyRef<'_, PySssp>>,
        preferences: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let g = graph.get();
        let ctx = context(resources.get(), g)?;
        let s = vertex("source", source, g.n)?;
        let prefs = preferences_of(preferences)?;
        let cells: Vec<ResultCell> = trees.iter().map(|t| t.cell.clone()).collect();
        Self::combine(py, g, ctx, s, cells, prefs)
    }

    /// Adopts K existing trees: `distances` and `parents` are (K, n) arrays, row j the tree of
    /// objective j (see `SsspResult.from_arrays`), then combines them (see `from_trees`).
    #[staticmethod]
    #[pyo3(signature = (resources, graph, source, distances, parents, *, canonicalize = false, preferences = None, delta = None, fallback = None))]
    #[allow(clippy::too_many_arguments)]
    fn from_arrays(
        py: Python<'_>,
        resources: &Bound<'_, PyResources>,
        graph: &Bound<'_, PyGraph>,
        source: i64,
        distances: &Bound<'_, PyAny>,
        parents: &Bound<'_, PyAny>,
        canonicalize: bool,
        preferences: Option<&Bound<'_, PyAny>>,
        delta: Option<i64>,
        fallback: Option<&str>,
    ) -> PyResult<Self> {
        let g = graph.get();
        let ctx = context(resources.get(), g)?;
        let s = vertex("source", source, g.n)?;
        let d = arrays::i64s(distances, "distances", &[2])?;
        let p = arrays::i32s(parents, "parents", &[2])?;
        if d.shape != p.shape {
            return Err(invalid(format!(
                "dyng: from_arrays: distances has shape {} but parents {}; want (K, n) each",
                arrays::shape_text(&d.shape),
                arrays::shape_text(&p.shape)
            )));
        }
        let (k, n) = (d.shape[0], d.shape[1]);
        let prefs = preferences_of(preferences)?;
        let mut trees = Vec::with_capacity(k);
        for j in 0..k {
            let dj = d.values[j * n..(j + 1) * n].to_vec();
            let pj = p.values[j * n..(j + 1) * n].to_vec();
            trees.push(cell(adopt(py, g, &ctx, s, j, dj, pj, canonicalize, delta, fallback)?));
        }
        Self::combine(py, g, ctx, s, trees, prefs)
    }

    /// The K trees' distances: a list of K zero-copy read-only int64 arrays.
    #[getter]
    fn distances<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyAny>>> {
        (0..self.k).map(|j| tree_array(py, &self.cell, DYNG_ARRAY_DISTANCES, j)).collect()
    }

    /// The K trees' parents: a list of K zero-copy read-only int32 arrays.
    #[getter]
    fn parents<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyAny>>> {
        (0..self.k).map(|j| tree_array(py, &self.cell, DYNG_ARRAY_PARENTS, j)).collect()
    }

    /// Distances on the combined graph (int64, n), in units of 1/L (L = lcm of the
    /// preferences); `dyng.DISTANCE_INF` where unreachable.
    #[getter]
    fn combined_distances<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        tree_array(py, &self.cell, DYNG_ARRAY_COMBINED_DISTANCES, 0)
    }

    /// The MOSP tree's parents (int32, n).
    #[getter]
    fn combined_parents<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        tree_array(py, &self.cell, DYNG_ARRAY_COMBINED_PARENTS, 0)
    }

    /// The cost of every MOSP-tree path in all KG objectives: an (n, KG) zero-copy read-only
    /// int64 array; `dyng.DISTANCE_INF` where unreachable.
    #[getter]
    fn path_costs<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let flat = tree_array(py, &self.cell, DYNG_ARRAY_PATH_COSTS, 0)?;
        flat.call_method1("reshape", ((self.n, self.graph_k),))
    }

    /// Copies of the K trees' distances: a new, writable (K, n) int64 array (row j: objective j)
    /// that holds no snapshot; with `objective`, that tree's only, as an (n,) array.
    #[pyo3(signature = (objective = None))]
    fn distances_copy<'py>(&self, py: Python<'py>, objective: Option<i64>) -> PyResult<Bound<'py, PyAny>> {
        self.trees_copy(py, DYNG_ARRAY_DISTANCES, objective)
    }

    /// Copies of the K trees' parents: a new, writable (K, n) int32 array; with `objective`, that
    /// tree's only, as an (n,) array.
    #[pyo3(signature = (objective = None))]
    fn parents_copy<'py>(&self, py: Python<'py>, objective: Option<i64>) -> PyResult<Bound<'py, PyAny>> {
        self.trees_copy(py, DYNG_ARRAY_PARENTS, objective)
    }

    /// A copy of `combined_distances`: a new, writable int64 array (n) that holds no snapshot.
    fn combined_distances_copy<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        tree_copies(py, &self.cell, DYNG_ARRAY_COMBINED_DISTANCES, &[0], self.n)
    }

    /// A copy of `combined_parents`: a new, writable int32 array (n) that holds no snapshot.
    fn combined_parents_copy<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        tree_copies(py, &self.cell, DYNG_ARRAY_COMBINED_PARENTS, &[0], self.n)
    }

    /// A copy of `path_costs`: a new, writable (n, KG) int64 array that holds no snapshot.
    fn path_costs_copy<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let flat = tree_copies(py, &self.cell, DYNG_ARRAY_PATH_COSTS, &[0], self.n * self.graph_k)?;
        flat.call_method1("reshape", ((self.n, self.graph_k),))
    }

    /// Counters of the last compute or update, summed over the K objectives.
    #[getter]
    fn stats(&self, py: Python<'_>) -> PyResult<PyStats> {
        stats_of(py, &self.cell)
    }

    /// Counters of each of the K objectives (in process only).
    #[getter]
    fn objective_stats(&self, py: Python<'_>) -> PyResult<Vec<PyStats>> {
        let s = read(&self.cell, py, |s| match s {
            ResultState::Mosp(m) => Some(m.objective_stats()),
            _ => None,
        });
        s.map(|v| v.into_iter().map(PyStats::from).collect())
            .ok_or_else(|| not_supported("dyng: objective_stats of a worker's MOSP result are not available (stats gives their sum)"))
    }

    /// What the last combine step did (in process only): a dict with edges (of the combined
    /// graph), scale (L), delta, in_place (vertices whose in-edges changed in place, or None),
    /// elapsed_ns, costs_ns and search (the combined search's `dyng.UpdateStats`).
    #[getter]
    fn combine_stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let s = read(&self.cell, py, |s| match s {
            ResultState::Mosp(m) => Some(m.combine_stats()),
            _ => None,
        });
        let s = s.ok_or_else(|| not_supported("dyng: combine_stats of a worker's MOSP result are not available"))?;
        let d = PyDict::new(py);
        d.set_item("edges", s.edges)?;
        d.set_item("scale", s.scale)?;
        d.set_item("delta", s.delta)?;
        d.set_item("in_place", s.in_place)?;
        d.set_item("elapsed_ns", s.elapsed_ns)?;
        d.set_item("costs_ns", s.costs_ns)?;
        d.set_item("search", PyStats::from(s.search))?;
        Ok(d)
    }

    /// The graph version the result belongs to.
    #[getter]
    fn graph_version(&self, py: Python<'_>) -> PyResult<u64> {
        version_of(py, &self.cell)
    }

    /// The path from the source to `target` in the MOSP tree (or, with `objective`, in that
    /// objective's tree), source first (int32); empty if unreachable.
    #[pyo3(signature = (target, objective = None))]
    fn path<'py>(&self, py: Python<'py>, target: i64, objective: Option<i64>) -> PyResult<Bound<'py, PyAny>> {
        let tree = objective.map(|j| self::objective(j, self.k)).transpose()?;
        path_of(py, &self.cell, self.n, tree, target)
    }

    /// An independent copy of the result at its present state (in process only).
    fn copy(&self, py: Python<'_>) -> PyResult<Self> {
        let c = copy_of(py, &self.cell)?;
        Ok(PyMosp { cell: c, n: self.n, source: self.source, k: self.k, graph_k: self.graph_k, preferences: self.preferences.clone() })
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "<dyng.MospResult source={} k={} graph_k={} n={} graph_version={}>",
            self.source,
            self.k,
            self.graph_k,
            self.n,
            version_of(py, &self.cell)?
        ))
    }
}
