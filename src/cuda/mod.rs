//! The CUDA backend: the persistent cooperative SOSP kernel, device graphs and device workspaces.
//!
//! Everything is loaded at run time (cudarc with dynamic loading; kernels compiled by NVRTC from
//! the embedded `kernels/*.cu`), so dyng builds and runs on machines without CUDA: every entry
//! point then returns [`Error::NotSupported`](crate::Error::NotSupported) naming the missing
//! library, and [`available`] is false.
//!
//! Rust API (not yet wired into `Resources`/`update`):
//! - [`CudaEngine::new`]`(ordinal)`: context, stream, compiled modules, grid size.
//! - [`CudaEngine::upload_graph`]: a [`DeviceGraph`] (objective-major columns and the reverse CSR).
//! - [`CudaEngine::sssp_update`] / [`CudaEngine::sssp_compute`]: one objective's tree, host
//!   arrays in and out, canonical (bit-identical to the host engines).
//! - [`CudaEngine::combined`]: the combined graph of K trees and its static solve (the MOSP tree).
//!
//! Scratch memory is leased from a [`WorkspacePool`](crate::resources::pool::WorkspacePool) as
//! [`Fenced`]`<`[`DeviceWorkspace`]`, `[`EventFence`]`>`: allocated with `cuMemAllocAsync` on the
//! engine's stream, fenced between streams (see [`fence`]).

pub mod context;
pub mod fence;
pub mod nvrtc;

pub use context::{available, Device};
pub use fence::{EventFence, Fence, Fenced, FencedSlot};
pub mod device_graph;
pub mod engine;
pub mod workspace;

pub use device_graph::DeviceGraph;
pub use engine::{ChangeSet, CudaEngine};
pub use workspace::DeviceWorkspace;
