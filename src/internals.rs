//! Internals that the project's own tests, benches and programs reach into (the worker process's
//! entry point, the CUDA backend's parts, the scratch workspace's size). Not a stable API: hidden
//! from the docs and free to change in any release.

pub use crate::sssp::workspace::Workspace;
pub use crate::worker::server::run_from_env as worker_main;
pub use crate::worker::sys::{pidfd_open, pidfd_signal, poll_in};

/// The CUDA backend's parts, for its own tests.
pub mod cuda {
    pub use crate::cuda::engine::Params;
    pub use crate::cuda::{available, context, nvrtc, ChangeSet, CudaEngine, Device, DeviceGraph};
}
