//! `dyng.Resources`: the execution context (backend, threads, workspace pool), in this process or
//! in a `dyng-worker` process.

use crate::errors::{invalid, to_py};
use crate::isolated::{WorkerResources, WorkerSpec};
use dyng::ffi::{DYNG_BACKEND_CUDA, DYNG_BACKEND_PARALLEL, DYNG_BACKEND_SEQUENTIAL};
use dyng::{Backend, ResourcesOptions};
use pyo3::prelude::*;
use std::ffi::CString;
use std::sync::Arc;

/// Where a resources handle runs its work.
#[derive(Clone)]
pub enum Context {
    Local(dyng::Resources),
    Worker(Arc<WorkerResources>),
}

/// The execution context of computes and updates.
///
/// backend: "sequential" (the reference engine), "parallel" (rayon, `threads` threads, 0 = all
///     cores) or "cuda" (needs an NVIDIA driver and NVRTC 13; `device` is the ordinal).
/// isolation: "in-process", or "worker": graphs made with these resources, and their results,
///     live in a persistent `dyng-worker` process (crash isolation; arrays come back as
///     zero-copy shared memory). The worker is `worker_path`, else `$DYNG_WORKER`, else the
///     `dyng-worker` the package ships next to its extension module; it must be owned by you or
///     root and not writable by others. The worker runs `backend` on all of its cores.
/// worker_start_timeout, worker_call_timeout: seconds (None = 30 s to start, no call limit).
///
/// One handle can serve many threads; clones of it are not needed.
#[pyclass(frozen, module = "dyng", name = "Resources")]
pub struct PyResources {
    pub ctx: Context,
    backend: &'static str,
    isolation: &'static str,
    threads: usize,
}

fn backend_of(name: &str) -> PyResult<(Backend, &'static str, u32)> {
    match name {
        "sequential" => Ok((Backend::Sequential, "sequential", DYNG_BACKEND_SEQUENTIAL)),
        "parallel" => Ok((Backend::Parallel, "parallel", DYNG_BACKEND_PARALLEL)),
        "cuda" => Ok((Backend::Cuda, "cuda", DYNG_BACKEND_CUDA)),
        other => Err(invalid(format!(
            "dyng: backend = {other:?}; want \"sequential\", \"parallel\" or \"cuda\""
        ))),
    }
}

fn millis(what: &str, seconds: Option<f64>) -> PyResult<u32> {
    match seconds {
        None => Ok(0),
        Some(s) if s.is_finite() && s > 0.0 && s * 1000.0 <= u32::MAX as f64 => Ok(((s * 1000.0).ceil()) as u32),
        Some(s) => Err(invalid(format!("dyng: {what} = {s}; want seconds > 0 (at most 49 days), or None"))),
    }
}

#[pymethods]
impl PyResources {
    #[new]
    #[pyo3(signature = (backend = "parallel", threads = 0, isolation = "in-process", *, device = 0, worker_path = None, worker_start_timeout = None, worker_call_timeout = None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        backend: &str,
        threads: usize,
        isolation: &str,
        device: i32,
        worker_path: Option<std::path::PathBuf>,
        worker_start_timeout: Option<f64>,
        worker_call_timeout: Option<f64>,
    ) -> PyResult<Self> {
        let (b, name, code) = backend_of(backend)?;
        match isolation {
            "in-process" => {
                if worker_path.is_some() || worker_start_timeout.is_some() || worker_call_timeout.is_some() {
                    return Err(invalid(
                        "dyng: worker_path and the worker timeouts apply to isolation=\"worker\" only",
                    ));
                }
                let opt = ResourcesOptions { backend: b, num_threads: threads, device };
                let r = py.detach(|| dyng::Resources::new(&opt)).map_err(to_py)?;
                let threads = r.threads();
                Ok(PyResources { ctx: Context::Local(r), backend: name, isolation: "in-process", threads })
            }
            "worker" => {
                if threads != 0 {
                    return Err(invalid(
                        "dyng: threads applies to isolation=\"in-process\" only; the worker runs its backend on all of its cores",
                    ));
                }
                let worker_path = match worker_path {
                    None => None,
                    Some(p) => Some(CString::new(p.as_os_str().as_encoded_bytes()).map_err(|_| {
                        invalid(format!("dyng: worker_path {} contains a NUL byte", p.display()))
                    })?),
                };
                let spec = WorkerSpec {
                    backend: code,
                    device,
                    worker_path,
                    start_timeout_ms: millis("worker_start_timeout", worker_start_timeout)?,
                    call_timeout_ms: millis("worker_call_timeout", worker_call_timeout)?,
                };
                let r = py.detach(|| WorkerResources::new(&spec))?;
                Ok(PyResources { ctx: Context::Worker(r), backend: name, isolation: "worker", threads: 0 })
            }
            other => Err(invalid(format!(
                "dyng: isolation = {other:?}; want \"in-process\" or \"worker\""
            ))),
        }
    }

    /// "sequential", "parallel" or "cuda".
    #[getter]
    fn backend(&self) -> &'static str {
        self.backend
    }

    /// "in-process" or "worker".
    #[getter]
    fn isolation(&self) -> &'static str {
        self.isolation
    }

    /// Threads of the engine (1 for the sequential engine; 0 for a worker, which uses all of its
    /// cores).
    #[getter]
    fn threads(&self) -> usize {
        self.threads
    }

    /// Prepares the backend ahead of the first call: starts the worker (and its handshake), or
    /// the CUDA context and kernels. Nothing to do for the host backends in process.
    fn warm_up(&self, py: Python<'_>) -> PyResult<()> {
        match &self.ctx {
            Context::Local(_) => Ok(()),
            Context::Worker(w) => py.detach(|| w.warm_up()).map_err(PyErr::from),
        }
    }

    /// Bytes held by idle workspaces of the pool (a worker's: 0 before it started).
    #[getter]
    fn workspace_bytes(&self, py: Python<'_>) -> PyResult<usize> {
        match &self.ctx {
            Context::Local(r) => Ok(r.workspace_bytes()),
            Context::Worker(w) => py.detach(|| w.workspace_bytes()).map_err(PyErr::from),
        }
    }

    /// Frees the idle workspaces of the pool (graphs and results keep their own memory).
    fn release_workspaces(&self, py: Python<'_>) -> PyResult<()> {
        match &self.ctx {
            Context::Local(r) => {
                r.release_workspaces();
                Ok(())
            }
            Context::Worker(w) => py.detach(|| w.release_workspaces()).map_err(PyErr::from),
        }
    }

    /// Whether `backend` ("sequential", "parallel", "cuda") can be used on this machine.
    #[staticmethod]
    fn backend_available(backend: &str) -> PyResult<bool> {
        Ok(dyng::backend_available(backend_of(backend)?.0))
    }

    fn __repr__(&self) -> String {
        match self.isolation {
            "worker" => format!("dyng.Resources(backend={:?}, isolation=\"worker\")", self.backend),
            _ => format!("dyng.Resources(backend={:?}, threads={})", self.backend, self.threads),
        }
    }
}
