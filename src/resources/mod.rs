//! `Resources`: the execution context shared by graphs, results and their clones.
//!
//! A cheap cloneable handle (an `Arc`) owning the backend choice, the rayon thread pool of the
//! parallel engine (never rayon's global pool, so a library user's own pool is left alone) and the
//! workspace pool from which every engine run leases its scratch memory.

pub(crate) mod device;
pub(crate) mod team_choice;

use crate::error::{Error, Result};
use device::Device;
use team_choice::TeamChoice;
use crate::pool::WorkspacePool;
use std::sync::Arc;

pub use crate::pool;
pub use crate::pool::{Lease, PoolCounters, PooledWorkspace};
pub use crate::cuda::MirrorCounters;

/// Which engine runs the algorithms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Backend {
    /// The readable single-threaded reference engine.
    Sequential,
    /// The rayon engine on a thread pool owned by the handle.
    Parallel,
    /// The CUDA engine.
    Cuda,
}

/// How to build a [`Resources`] handle.
#[derive(Debug, Clone)]
pub struct ResourcesOptions {
    /// The engine; [`Backend::Parallel`] by default.
    pub backend: Backend,
    /// Threads of the parallel engine; 0 means `OMP_NUM_THREADS` where it is set (its first
    /// value, as OpenMP reads it), else all cores. At most [`max_threads`].
    pub num_threads: usize,
    /// CUDA device ordinal (`>= 0`; used by [`Backend::Cuda`] only).
    pub device: i32,
}

impl Default for ResourcesOptions {
    fn default() -> Self {
        ResourcesOptions {
            backend: Backend::Parallel,
            num_threads: 0,
            device: 0,
        }
    }
}

struct Inner {
    backend: Backend,
    threads: usize,
    thread_pool: Option<rayon::ThreadPool>,
    /// Which device runs the calls, chosen here once (see `device`).
    device: Device,
    workspaces: WorkspacePool,
    /// One engine team at a time on the thread pool (see `sssp::exec::Parallel`).
    team_lock: parking_lot::Mutex<()>,
    /// Whether a search runs as a team or on one member (see `team_choice`).
    team_choice: TeamChoice,
}

/// The execution context. Clones share the thread pool and the workspace pool.
#[derive(Clone)]
pub struct Resources {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Resources {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Resources")
            .field("backend", &self.inner.backend)
            .field("threads", &self.inner.threads)
            .finish()
    }
}

/// The most threads a parallel handle may ask for: 1,024, or 4 x the available CPUs where that is
/// more. A count beyond it is a mistake (a stray `--threads 99999999999` would start threads
/// until the system refuses them), refused with [`Error::InvalidArgument`].
pub fn max_threads() -> usize {
    available_cpus().saturating_mul(4).max(1024)
}

fn available_cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Whether a backend can be used on this machine and build.
pub fn backend_available(backend: Backend) -> bool {
    match backend {
        Backend::Sequential | Backend::Parallel => true,
        Backend::Cuda => crate::cuda::available(),
    }
}

/// The thread count of `num_threads = 0`: `OMP_NUM_THREADS` where it holds a positive count (a
/// drop-in for an OpenMP program takes the count its users set for it; a list such as `4,2` gives
/// its first level), else all cores.
pub fn default_threads() -> usize {
    omp_threads(std::env::var("OMP_NUM_THREADS").ok().as_deref())
        .unwrap_or_else(available_cpus)
}

/// The thread count an `OMP_NUM_THREADS` value asks for, if it asks for one.
fn omp_threads(value: Option<&str>) -> Option<usize> {
    value
        .and_then(|v| v.split(',').next())
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|&t| t > 0)
}

impl Resources {
    /// A handle for `opt.backend`: starts the parallel engine's threads, or opens the CUDA
    /// device. Errors: [`Error::InvalidArgument`] for more than [`max_threads`] threads or a
    /// negative device, [`Error::Resource`] when the system refuses a thread,
    /// [`Error::NotSupported`] when CUDA is asked for but the driver, NVRTC or the device is
    /// missing, [`Error::Cuda`] when the device fails to start.
    ///
    /// ```
    /// use dyng::{Backend, ErrorKind, Resources, ResourcesOptions};
    ///
    /// let res = Resources::new(&ResourcesOptions { num_threads: 2, ..Default::default() })?;
    /// assert_eq!((res.backend(), res.threads()), (Backend::Parallel, 2));
    /// // Clones share the thread pool and the workspace pool.
    /// assert!(res.clone().same_as(&res));
    ///
    /// let seq = Resources::new(&ResourcesOptions { backend: Backend::Sequential, ..Default::default() })?;
    /// assert_eq!(seq.threads(), 1);
    ///
    /// let too_many = ResourcesOptions { num_threads: dyng::resources::max_threads() + 1, ..Default::default() };
    /// assert_eq!(Resources::new(&too_many).unwrap_err().kind(), ErrorKind::InvalidArgument);
    /// # Ok::<(), dyng::Error>(())
    /// ```
    pub fn new(opt: &ResourcesOptions) -> Result<Self> {
        let mut device = Device::Host;
        let (threads, thread_pool) = match opt.backend {
            Backend::Sequential => (1, None),
            Backend::Parallel => {
                let threads = if opt.num_threads == 0 { default_threads() } else { opt.num_threads };
                if threads > max_threads() {
                    return Err(Error::invalid(format!(
                        "dyng: num_threads = {threads} exceeds the limit of {} threads (1,024, or 4 x the {} available CPUs where that is more)",
                        max_threads(),
                        available_cpus()
                    )));
                }
                // The only way this fails is the system refusing a thread (rayon stops the
                // threads it had started).
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .thread_name(|i| format!("dyng-{i}"))
                    .build()
                    .map_err(|e| Error::Resource(format!("dyng: cannot start {threads} threads: {e}")))?;
                (threads, Some(pool))
            }
            Backend::Cuda => {
                let ordinal = usize::try_from(opt.device).map_err(|_| {
                    Error::invalid(format!("dyng: CUDA device ordinal {} is negative", opt.device))
                })?;
                // Probes the driver and NVRTC before any CUDA call: NotSupported names what is missing.
                device = Device::Cuda(crate::cuda::CudaEngine::new(ordinal)?);
                (1, None)
            }
        };
        Ok(Resources {
            inner: Arc::new(Inner {
                backend: opt.backend,
                threads,
                thread_pool,
                device,
                workspaces: WorkspacePool::new(),
                team_lock: parking_lot::Mutex::new(()),
                team_choice: Default::default(),
            }),
        })
    }

    /// The sequential reference engine.
    pub fn sequential() -> Self {
        Self::new(&ResourcesOptions {
            backend: Backend::Sequential,
            ..Default::default()
        })
        .expect("the sequential backend needs no system resources")
    }

    /// The parallel engine with `threads` threads (0 = all cores).
    pub fn parallel(threads: usize) -> Result<Self> {
        Self::new(&ResourcesOptions {
            backend: Backend::Parallel,
            num_threads: threads,
            ..Default::default()
        })
    }

    /// The engine this handle runs.
    pub fn backend(&self) -> Backend {
        self.inner.backend
    }

    /// Threads used by the engine (1 for the sequential engine).
    pub fn threads(&self) -> usize {
        self.inner.threads
    }

    pub(crate) fn thread_pool(&self) -> Option<&rayon::ThreadPool> {
        self.inner.thread_pool.as_ref()
    }

    pub(crate) fn team_lock(&self) -> &parking_lot::Mutex<()> {
        &self.inner.team_lock
    }

    pub(crate) fn team_choice(&self) -> &TeamChoice {
        &self.inner.team_choice
    }

    /// The device that runs this handle's calls.
    pub(crate) fn device(&self) -> &Device {
        &self.inner.device
    }

    /// What the device mirror of `graph` kept by this handle's CUDA engine has uploaded so far;
    /// `None` for a handle of another backend.
    pub fn mirror_counters(&self, graph: &crate::Graph) -> Option<MirrorCounters> {
        self.device().cuda().map(|c| c.mirror_counters(graph))
    }

    /// The workspace pool shared by every clone of this handle.
    pub fn workspaces(&self) -> &WorkspacePool {
        &self.inner.workspaces
    }

    /// Bytes held by idle workspaces.
    pub fn workspace_bytes(&self) -> usize {
        self.inner.workspaces.idle_bytes()
    }

    /// Frees every idle workspace.
    pub fn release_workspaces(&self) {
        self.inner.workspaces.release()
    }

    /// True when `other` is a clone of this handle.
    pub fn same_as(&self, other: &Resources) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}

#[cfg(test)]
mod tests {
    use super::omp_threads;

    #[test]
    fn omp_num_threads_gives_the_first_positive_count() {
        assert_eq!(omp_threads(Some("3")), Some(3));
        assert_eq!(omp_threads(Some(" 2 ")), Some(2));
        assert_eq!(omp_threads(Some("4,2")), Some(4));
        for unset in [None, Some(""), Some("0"), Some("-1"), Some("four")] {
            assert_eq!(omp_threads(unset), None, "{unset:?}");
        }
    }
}
