//! dyng keeps shortest-path trees up to date on large dynamic graphs.
//!
//! A [`Graph`] holds K weights per edge; batches of insertions, deletions and weight changes are
//! applied once and every maintained result (single-objective SSSP trees and multi-objective MOSP
//! compromises) is brought up to date by the update engines, which lease their scratch memory from
//! the [`Resources`] handle's workspace pool. Outputs are bit-identical across engines and thread
//! counts and byte-identical to the original MOSP-OpenMP/MOSP-CUDA programs.

pub mod error;
pub mod ffi;
pub mod graph;
pub mod io;

pub use error::{Error, ErrorKind, Result};
pub use graph::{apply_batch, Batch, BatchView, Csr, Graph, WeightLayout};

/// The distance of an unreachable vertex: (2^63-1)/4, as in the originals. A distance is finite iff
/// it is below `DISTANCE_INF / 2`; writers print `INF` from there on.
pub const DISTANCE_INF: i64 = i64::MAX / 4;

pub mod mosp;
pub mod cuda;
pub mod resources;
pub mod sssp;
pub(crate) mod session;
pub mod update;
pub mod worker;

pub use mosp::{MospOptions, MospResult, Preferences};
pub use resources::{backend_available, Backend, Resources, ResourcesOptions};
pub use sssp::{sosp_solve_arrays, sosp_update_arrays, CsrArrays, Fallback, SsspOptions, SsspResult, UpdateStats};
pub use update::{update, update_one, update_timed, ResultMut, UpdateTimings};
