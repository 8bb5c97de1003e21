//! `dyng.Batch`: edge insertions (upserts with K weights) and deletions, from numpy arrays.

use crate::arrays;
use crate::errors::{invalid, to_py};
use crate::graph::PyGraph;
use pyo3::prelude::*;
use std::path::PathBuf;

/// A batch of edge changes.
///
/// insertions: (src, dst, weights): insertion i sets edge src[i] -> dst[i] to the K weights of
///     row i of `weights` ((count, K), or (count,) for K = 1): the first such edge of the row
///     takes them, or the edge is added.
/// deletions: (src, dst): deletion i removes the first edge src[i] -> dst[i] (none: nothing).
/// k: the graph's K, when the batch has no insertions to tell it (default: any graph).
/// Any integer dtype is accepted; the arrays are copied. Ids and weights are checked against
/// the graph by `dyng.update`, which refuses a bad batch and changes nothing.
#[pyclass(frozen, module = "dyng", name = "Batch")]
pub struct PyBatch {
    /// The batch; its `k` is only meaningful when `k_known` (a batch of deletions only fits any K).
    pub batch: dyng::Batch,
    pub k_known: bool,
}

impl PyBatch {
    /// The batch for a graph of `k` objectives, or the error that it carries another K.
    pub fn for_graph(&self, k: usize) -> PyResult<std::borrow::Cow<'_, dyng::Batch>> {
        if !self.k_known {
            let mut b = self.batch.clone();
            b.k = k;
            return Ok(std::borrow::Cow::Owned(b));
        }
        Ok(std::borrow::Cow::Borrowed(&self.batch))
    }
}

#[pymethods]
impl PyBatch {
    #[new]
    #[pyo3(signature = (insertions = None, deletions = None, *, k = None))]
    fn new(insertions: Option<&Bound<'_, PyAny>>, deletions: Option<&Bound<'_, PyAny>>, k: Option<usize>) -> PyResult<Self> {
        let mut b = dyng::Batch::new(k.unwrap_or(0));
        let mut k_known = k.is_some();
        if let Some(ins) = insertions {
            let (s, d, w): (Bound<'_, PyAny>, Bound<'_, PyAny>, Bound<'_, PyAny>) = ins.extract().map_err(|_| {
                invalid("dyng: Batch: insertions must be a tuple (src, dst, weights)")
            })?;
            b.ins_src = arrays::i32s(&s, "insertions src", &[1])?.values;
            b.ins_dst = arrays::i32s(&d, "insertions dst", &[1])?.values;
            if b.ins_dst.len() != b.ins_src.len() {
                return Err(invalid(format!(
                    "dyng: Batch: {} insertion sources but {} targets",
                    b.ins_src.len(),
                    b.ins_dst.len()
                )));
            }
            let (w, wk) = arrays::weights(&w, "insertions weights", b.ins_src.len())?;
            // An empty list tells no K (a (0,) array would otherwise read as K = 1).
            if !b.ins_src.is_empty() {
                if let Some(k) = k.filter(|&k| k != wk) {
                    return Err(invalid(format!(
                        "dyng: Batch: the insertions carry {wk} weights each but k = {k}"
                    )));
                }
                b.k = wk;
                k_known = true;
            }
            b.ins_weights = w;
        }
        if let Some(del) = deletions {
            let (s, d): (Bound<'_, PyAny>, Bound<'_, PyAny>) =
                del.extract().map_err(|_| invalid("dyng: Batch: deletions must be a tuple (src, dst)"))?;
            b.del_src = arrays::i32s(&s, "deletions src", &[1])?.values;
            b.del_dst = arrays::i32s(&d, "deletions dst", &[1])?.values;
            if b.del_dst.len() != b.del_src.len() {
                return Err(invalid(format!(
                    "dyng: Batch: {} deletion sources but {} targets",
                    b.del_src.len(),
                    b.del_dst.len()
                )));
            }
        }
        Ok(PyBatch { batch: b, k_known })
    }

    /// Reads a batch folder as the original programs write it: `path/insert.txt` (`u v w1 .. wK`
    /// per line, K = the graph's) and `path/delete.txt` (`u v` per line); errors name path, line
    /// and column.
    #[staticmethod]
    fn read(py: Python<'_>, path: PathBuf, graph: &PyGraph) -> PyResult<Self> {
        let (n, k) = (graph.n, graph.k);
        let batch = py.detach(|| dyng::io::formats::batch_files::read_batch_dir(&path, n, k)).map_err(to_py)?;
        Ok(PyBatch { batch, k_known: true })
    }

    /// Weights per insertion (None for a batch of deletions only made without `k`).
    #[getter]
    fn k(&self) -> Option<usize> {
        self.k_known.then_some(self.batch.k)
    }

    /// Insertions in the batch.
    #[getter]
    fn num_insertions(&self) -> usize {
        self.batch.num_insertions()
    }

    /// Deletions in the batch.
    #[getter]
    fn num_deletions(&self) -> usize {
        self.batch.num_deletions()
    }

    /// (src, dst, weights) of the insertions, as new int32 arrays (weights: (count, K)).
    #[getter]
    fn insertions<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>, Bound<'py, PyAny>)> {
        let b = &self.batch;
        Ok((
            arrays::owned_i32(py, b.ins_src.clone()),
            arrays::owned_i32(py, b.ins_dst.clone()),
            arrays::owned_i32_2d(py, b.ins_weights.clone(), b.k.max(1))?,
        ))
    }

    /// (src, dst) of the deletions, as new int32 arrays.
    #[getter]
    fn deletions<'py>(&self, py: Python<'py>) -> (Bound<'py, PyAny>, Bound<'py, PyAny>) {
        (arrays::owned_i32(py, self.batch.del_src.clone()), arrays::owned_i32(py, self.batch.del_dst.clone()))
    }

    fn __len__(&self) -> usize {
        self.batch.num_insertions() + self.batch.num_deletions()
    }

    fn __repr__(&self) -> String {
        let k = if self.k_known { self.batch.k.to_string() } else { "any".into() };
        format!(
            "<dyng.Batch insertions={} deletions={} k={k}>",
            self.batch.num_insertions(),
            self.batch.num_deletions()
        )
    }
}
