//! dyng's errors as Python exceptions: one class per `ErrorKind` (defined in `dyng/_errors.py`,
//! so that they can also derive from the builtin a Python user would catch), with the library's
//! message unchanged.

use dyng::ffi::*;
use dyng::{Error, ErrorKind};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;

/// The class of an error kind: its name in `dyng._errors` is the kind's (`ErrorKind`'s variant
/// name, e.g. `InvalidArgument`); a kind newer than this package's classes raises their base,
/// `DyngError`.
fn class_name(kind: ErrorKind) -> String {
    format!("{kind:?}")
}

/// The class of a `dyng_status_t` of the C ABI (worker-isolated calls go through it): the kind
/// numbered so, or for the boundary's own conditions the nearest class.
fn status_class(status: dyng_status_t) -> String {
    match ErrorKind::from_code(status) {
        Some(kind) => class_name(kind),
        None if status == DYNG_ERR_NULL_ARGUMENT => "InvalidArgument".into(),
        None if status == DYNG_ERR_BUSY => "Busy".into(),
        None => "Internal".into(),
    }
}

/// The exception `name` of `dyng._errors` (`DyngError` if it has none such) carrying `msg`.
pub fn raise(name: &str, msg: String) -> PyErr {
    Python::attach(|py| {
        static MODULE: PyOnceLock<Py<PyModule>> = PyOnceLock::new();
        let class = MODULE.get_or_try_init(py, || py.import("dyng._errors").map(Bound::unbind)).and_then(|m| {
            let m = m.bind(py);
            m.getattr(name)
                .or_else(|_| m.getattr("DyngError"))
                .and_then(|c| c.cast_into::<PyType>().map_err(PyErr::from))
        });
        match class {
            Ok(c) => PyErr::from_type(c, msg),
            Err(e) => e,
        }
    })
}

/// A library error as its Python exception.
pub fn to_py(e: Error) -> PyErr {
    raise(&class_name(e.kind()), e.to_string())
}

/// `dyng.InvalidArgument` with `msg`.
pub fn invalid(msg: impl Into<String>) -> PyErr {
    raise("InvalidArgument", msg.into())
}

/// `dyng.NotSupported` with `msg`.
pub fn not_supported(msg: impl Into<String>) -> PyErr {
    raise("NotSupported", msg.into())
}

/// A failed C ABI call: its status and this thread's last error message.
#[derive(Debug)]
pub struct CError {
    pub status: dyng_status_t,
    pub message: String,
}

impl CError {
    /// The status and message of the call that just failed on this thread.
    pub fn last(status: dyng_status_t) -> Self {
        // SAFETY: a NULL buffer with capacity 0 only asks for the size; then `buf` holds `need`.
        let message = unsafe {
            let need = dyng_last_error_message(std::ptr::null_mut(), 0);
            let mut buf = vec![0u8; need.max(1)];
            dyng_last_error_message(buf.as_mut_ptr() as *mut std::ffi::c_char, buf.len());
            let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
            String::from_utf8_lossy(&buf[..end]).into_owned()
        };
        CError { status, message }
    }
}

impl From<CError> for PyErr {
    fn from(e: CError) -> Self {
        raise(&status_class(e.status), e.message)
    }
}

/// Either kind of failure, for code that runs without the GIL and raises once it is back.
#[derive(Debug)]
pub enum Failure {
    Lib(Error),
    C(CError),
    /// A check of this package (the class name in `dyng._errors`, the message).
    Py(&'static str, String),
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        Failure::Lib(e)
    }
}

impl From<CError> for Failure {
    fn from(e: CError) -> Self {
        Failure::C(e)
    }
}

impl From<Failure> for PyErr {
    fn from(f: Failure) -> Self {
        match f {
            Failure::Lib(e) => to_py(e),
            Failure::C(e) => e.into(),
            Failure::Py(name, msg) => raise(name, msg),
        }
    }
}

/// `Failure` for an invalid argument found by this package.
pub fn invalid_f(msg: impl Into<String>) -> Failure {
    Failure::Py("InvalidArgument", msg.into())
}

pub type FResult<T> = std::result::Result<T, Failure>;
