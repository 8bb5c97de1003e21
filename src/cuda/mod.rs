//! The CUDA backend: the persistent cooperative SOSP kernel, device graphs and device workspaces.
//!
//! Everything is loaded at run time (cudarc with dynamic loading; kernels compiled by NVRTC from
//! the embedded `kernels/*.cu`), so dyng builds and runs on machines without CUDA: every entry
//! point then returns [`Error::NotSupported`](crate::Error::NotSupported) naming the missing
//! library, and [`available`] is false.
//!
//! Rust API (`Resources` runs it through `resources::device`):
//! - [`CudaEngine::new`]`(ordinal)`: context, stream, compiled modules, grid size.
//! - [`CudaEngine::mirror`]: the [`DeviceGraph`] mirror of a resident [`Graph`](crate::Graph),
//!   kept with the graph and brought up to date by uploading the rows each batch changed
//!   ([`mirror`]); what `update` and the static solves of a CUDA handle use.
//! - [`CudaEngine::upload_graph`]: a one-off [`DeviceGraph`] of a compact CSR (objective-major
//!   columns, the reverse CSR built on the device), for the drop-in entry point.
//! - [`CudaEngine::sssp_update`] / [`CudaEngine::sssp_compute`]: one objective's tree, host
//!   arrays in and out, canonical (bit-identical to the host engines).
//! - [`CudaEngine::combined`]: the combined graph of K trees and its static solve (the MOSP tree).
//!
//! Scratch memory is leased from a [`WorkspacePool`](crate::pool::WorkspacePool) as
//! [`Fenced`](fence::Fenced)`<`[`DeviceWorkspace`](workspace::DeviceWorkspace)`,
//! `[`EventFence`](fence::EventFence)`>`: allocated with `cuMemAllocAsync` on the engine's
//! stream, fenced between streams (see [`fence`]).

pub mod context;
pub mod fence;
pub mod nvrtc;

pub use context::{available, Device};
pub mod device_graph;
pub mod engine;
pub mod mirror;
pub mod workspace;

pub use device_graph::DeviceGraph;
pub use engine::{ChangeSet, CudaEngine};
pub use mirror::MirrorCounters;
