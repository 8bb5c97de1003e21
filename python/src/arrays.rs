//! numpy in and out.
//!
//! In: any integer array-like (a numpy array of any integer dtype, strided or not, a list, a
//! range) is read into the library's integer type, each value checked to fit; floats, booleans
//! and objects are refused, naming the argument. Out: results' arrays are zero-copy, read-only
//! numpy arrays whose base is a [`Snapshot`] holding the library's `Arc` snapshot (or a worker's
//! shared-memory view), so they keep the state they were taken from while the result is updated
//! (an update then copies the array it changes instead of writing into it).

use crate::errors::invalid;
use crate::isolated::WorkerView;
use numpy::ndarray::{ArrayView1, ArrayView2};
use numpy::{
    Element, PyArray, PyArrayDyn, PyArrayMethods, PyUntypedArray, PyUntypedArrayMethods,
};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use std::fmt::Display;
use std::sync::Arc;

/// An integer array read from Python: its values and its shape.
pub struct Ints<T> {
    pub values: Vec<T>,
    pub shape: Vec<usize>,
}

fn asarray<'py>(obj: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyUntypedArray>> {
    if let Ok(a) = obj.cast::<PyUntypedArray>() {
        return Ok(a.clone());
    }
    let py = obj.py();
    static ASARRAY: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let f = ASARRAY.get_or_try_init(py, || py.import("numpy")?.getattr("asarray").map(Bound::unbind))?;
    Ok(f.bind(py).call1((obj,))?.cast_into::<PyUntypedArray>()?)
}

/// A shape as numpy prints it: `(5,)`, `(2, 3)`.
pub fn shape_text(shape: &[usize]) -> String {
    match shape {
        [one] => format!("({one},)"),
        _ => format!("({})", shape.iter().map(usize::to_string).collect::<Vec<_>>().join(", ")),
    }
}

/// Where flat index `i` of an array of `shape` is, as numpy prints an index.
fn index_text(i: usize, shape: &[usize]) -> String {
    match shape {
        [_, cols] if *cols > 0 => format!("[{}, {}]", i / cols, i % cols),
        _ => format!("[{i}]"),
    }
}

fn convert<S, T>(a: &Bound<'_, PyUntypedArray>, what: &str) -> PyResult<Option<Ints<T>>>
where
    S: Element + Copy + Display + TryInto<T>,
{
    let Ok(typed) = a.cast::<PyArrayDyn<S>>() else { return Ok(None) };
    let ro = typed.try_readonly()?;
    let view = ro.as_array();
    let shape = view.shape().to_vec();
    let mut values = Vec::with_capacity(view.len());
    for (i, &x) in view.iter().enumerate() {
        match x.try_into() {
            Ok(v) => values.push(v),
            Err(_) => {
                return Err(invalid(format!(
                    "dyng: {what}{} = {x} does not fit the {}-bit integers dyng stores it in",
                    index_text(i, &shape),
                    std::mem::size_of::<T>() * 8
                )))
            }
        }
    }
    Ok(Some(Ints { values, shape }))
}

macro_rules! any_int {
    ($a:expr, $what:expr, $t:ty) => {{
        let (a, what) = ($a, $what);
        if let Some(x) = convert::<$t, _>(a, what)? { Some(x) }
        else if let Some(x) = convert::<i64, _>(a, what)? { Some(x) }
        else if let Some(x) = convert::<i32, _>(a, what)? { Some(x) }
        else if let Some(x) = convert::<u64, _>(a, what)? { Some(x) }
        else if let Some(x) = convert::<u32, _>(a, what)? { Some(x) }
        else if let Some(x) = convert::<i16, _>(a, what)? { Some(x) }
        else if let Some(x) = convert::<u16, _>(a, what)? { Some(x) }
        else if let Some(x) = convert::<i8, _>(a, what)? { Some(x) }
        else { convert::<u8, _>(a, what)? }
    }};
}

fn dtype_error(a: &Bound<'_, PyUntypedArray>, what: &str) -> PyErr {
    let dtype = a.dtype().str().map(|s| s.to_string()).unwrap_or_else(|_| "?".into());
    invalid(format!("dyng: {what} has dtype {dtype}; want an array of integers"))
}

fn check_ndim(a: &Bound<'_, PyUntypedArray>, what: &str, ndims: &[usize]) -> PyResult<()> {
    if !ndims.contains(&a.ndim()) {
        let want = match ndims {
            [1] => "a 1-D array".to_string(),
            [2] => "a 2-D array".to_string(),
            _ => "a 1-D or 2-D array".to_string(),
        };
        return Err(invalid(format!("dyng: {what} has shape {}; want {want}", shape_text(a.shape()))));
    }
    Ok(())
}

/// Reads `obj` as 32-bit integers (an array of `ndims` dimensions).
pub fn i32s(obj: &Bound<'_, PyAny>, what: &str, ndims: &[usize]) -> PyResult<Ints<i32>> {
    let a = asarray(obj)?;
    check_ndim(&a, what, ndims)?;
    if a.len() == 0 {
        return Ok(Ints { values: Vec::new(), shape: a.shape().to_vec() });
    }
    any_int!(&a, what, i32).ok_or_else(|| dtype_error(&a, what))
}

/// Reads `obj` as 64-bit integers.
pub fn i64s(obj: &Bound<'_, PyAny>, what: &str, ndims: &[usize]) -> PyResult<Ints<i64>> {
    let a = asarray(obj)?;
    check_ndim(&a, what, ndims)?;
    if a.len() == 0 {
        return Ok(Ints { values: Vec::new(), shape: a.shape().to_vec() });
    }
    any_int!(&a, what, i64).ok_or_else(|| dtype_error(&a, what))
}

/// Edge-major weights of `m` rows and K columns from a (m, K) array, or a (m,) array for K = 1;
/// returns (weights, K).
pub fn weights(obj: &Bound<'_, PyAny>, what: &str, m: usize) -> PyResult<(Vec<i32>, usize)> {
    let w = i32s(obj, what, &[1, 2])?;
    let (rows, k) = match w.shape[..] {
        [rows] => (rows, 1),
        [rows, k] => (rows, k),
        _ => unreachable!("checked to be 1-D or 2-D"),
    };
    if rows != m {
        return Err(invalid(format!(
            "dyng: {what} has shape {}; want {m} rows (one per edge), each with the K weights of the edge",
            shape_text(&w.shape)
        )));
    }
    if k == 0 {
        return Err(invalid(format!("dyng: {what} has shape {}; want at least one objective", shape_text(&w.shape))));
    }
    Ok((w.values, k))
}

/// What a numpy array made here points into; the array's `base`.
#[pyclass(frozen, module = "dyng._dyng", name = "_Snapshot")]
pub struct Snapshot {
    held: Held,
}

enum Held {
    I64(Arc<Vec<i64>>),
    I32(Arc<Vec<i32>>),
    View(WorkerView),
}

#[pymethods]
impl Snapshot {
    fn __repr__(&self) -> String {
        match &self.held {
            Held::I64(a) => format!("<dyng snapshot of {} int64 values>", a.len()),
            Held::I32(a) => format!("<dyng snapshot of {} int32 values>", a.len()),
            Held::View(v) => format!("<dyng worker shared-memory view of {} values>", v.len()),
        }
    }
}

fn read_only<'py, T: Element, D: numpy::ndarray::Dimension>(a: Bound<'py, PyArray<T, D>>) -> Bound<'py, PyAny> {
    a.readwrite().make_nonwriteable();
    a.into_any()
}

/// A read-only array over `data` of `shape` ((n,) or (rows, cols)), whose base keeps `held` (which
/// owns the memory `data` points into) alive.
fn wrap<'py, T: Element>(py: Python<'py>, held: Held, data: *const T, len: usize, cols: Option<usize>) -> PyResult<Bound<'py, PyAny>> {
    let owner = Bound::new(py, Snapshot { held })?.into_any();
    // SAFETY: `data` points to `len` elements owned by `held`, which the array's base keeps alive
    // and which nobody writes: an Arc snapshot is copied by the library before it changes what
    // another holder shares, and a worker view is a read-only mapping of a sealed block.
    let data: &[T] = if len == 0 { &[] } else { unsafe { std::slice::from_raw_parts(data, len) } };
    Ok(match cols {
        None => read_only(unsafe { PyArray::borrow_from_array(&ArrayView1::from(data), owner) }),
        Some(c) => {
            let rows = len.checked_div(c).unwrap_or(0);
            let v = ArrayView2::from_shape((rows, c), data).map_err(|e| invalid(format!("dyng: array shape: {e}")))?;
            read_only(unsafe { PyArray::borrow_from_array(&v, owner) })
        }
    })
}

/// A zero-copy read-only array of an `i64` snapshot; `cols`: the row width of a 2-D array.
pub fn from_i64<'py>(py: Python<'py>, a: Arc<Vec<i64>>, cols: Option<usize>) -> PyResult<Bound<'py, PyAny>> {
    let (p, len) = (a.as_ptr(), a.len());
    wrap(py, Held::I64(a), p, len, cols)
}

/// A zero-copy read-only array of an `i32` snapshot.
pub fn from_i32<'py>(py: Python<'py>, a: Arc<Vec<i32>>) -> PyResult<Bound<'py, PyAny>> {
    let (p, len) = (a.as_ptr(), a.len());
    wrap(py, Held::I32(a), p, len, None)
}

/// A zero-copy read-only array of a worker view.
pub fn from_view<'py>(py: Python<'py>, v: WorkerView, cols: Option<usize>) -> PyResult<Bound<'py, PyAny>> {
    if let Some(s) = v.i64s() {
        let (p, len) = (s.as_ptr(), s.len());
        return wrap(py, Held::View(v), p, len, cols);
    }
    if let Some(s) = v.i32s() {
        let (p, len) = (s.as_ptr(), s.len());
        return wrap(py, Held::View(v), p, len, cols);
    }
    Err(crate::errors::raise("Protocol", "dyng: a worker view of an unknown element type".into()))
}

/// A new, writable numpy array that owns `v`.
pub fn owned<T: Element>(py: Python<'_>, v: Vec<T>) -> Bound<'_, PyAny> {
    PyArray::from_vec(py, v).into_any()
}

/// A new, writable numpy int32 array that owns `v`.
pub fn owned_i32(py: Python<'_>, v: Vec<i32>) -> Bound<'_, PyAny> {
    owned(py, v)
}

/// A new, writable (rows, cols) numpy array that owns `v` (row-major).
pub fn owned_2d<T: Element>(py: Python<'_>, v: Vec<T>, cols: usize) -> PyResult<Bound<'_, PyAny>> {
    let rows = v.len().checked_div(cols).unwrap_or(0);
    let a = numpy::ndarray::Array2::from_shape_vec((rows, cols), v).map_err(|e| invalid(format!("dyng: array shape: {e}")))?;
    Ok(PyArray::from_owned_array(py, a).into_any())
}

/// A new, writable (rows, cols) numpy int32 array that owns `v` (row-major).
pub fn owned_i32_2d(py: Python<'_>, v: Vec<i32>, cols: usize) -> PyResult<Bound<'_, PyAny>> {
    owned_2d(py, v, cols)
}
