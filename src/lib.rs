//! dyng keeps shortest-path trees up to date on large dynamic graphs.
//!
//! A [`Graph`] holds K weights per edge; batches of insertions, deletions and weight changes are
//! applied once and every maintained result (single-objective SSSP trees and multi-objective MOSP
//! compromises) is brought up to date by the update engines, which lease their scratch memory from
//! the [`Resources`] handle's workspace pool. Outputs are bit-identical across engines and thread
//! counts and byte-identical to the original MOSP-OpenMP/MOSP-CUDA programs.
//!
//! The main calls:
//! - build a graph: [`Csr::from_edges`] or [`Csr::from_arrays`], then [`Graph::new`];
//! - choose the engine: [`Resources::new`] (or [`Resources::sequential`], [`Resources::parallel`]);
//! - compute results: [`SsspResult::compute`] (one objective), [`MospResult::compute`] (the
//!   compromise of K objectives under a preference vector), or adopt trees computed elsewhere
//!   with [`SsspResult::from_arrays`] and [`MospResult::from_trees`];
//! - change the graph: a [`Batch`] of insertions (upserts) and deletions, applied once for every
//!   result by [`update()`] (or [`update_one`], [`update_timed`]). A batch that breaks a rule is
//!   refused with an [`Error`] before anything changes;
//! - run the same work in a `dyng-worker` process instead of this one: [`session`].
//!
//! Vertex ids are `0..n`, weights are integers in `[1, 2^31-1]`, distances are `i64` with
//! [`DISTANCE_INF`] for unreachable vertices, parents are `i32` with -1 for the source and
//! unreachable vertices. Ties go to the lowest-id parent, so every engine gives the same tree.
//!
//! # Example
//!
//! Four junctions and four roads, each with two objectives (length, time); the shortest tree by
//! length and the compromise of both are kept up to date under one batch:
//!
//! ```
//! use dyng::{update, Batch, Csr, Graph, MospOptions, MospResult, Resources, SsspOptions, SsspResult};
//!
//! // Roads 0 -> 1, 0 -> 2, 1 -> 3, 2 -> 3; weights edge-major: (length, time) per road.
//! let csr = Csr::from_edges(4, 2, &[0, 0, 1, 2], &[1, 2, 3, 3], &[1, 5, 4, 1, 1, 5, 4, 1])?;
//! let mut graph = Graph::new(csr);
//! let res = Resources::sequential();
//!
//! let mut shortest = SsspResult::compute(&res, &graph, 0, 0, &SsspOptions::default())?;
//! let mut both = MospResult::compute(&res, &graph, 0, &MospOptions::default())?;
//! assert_eq!(shortest.distances(), [0, 1, 4, 2]);
//! assert_eq!(shortest.parents(), [-1, 0, 0, 1]);
//! assert_eq!(shortest.path_to(3)?, [0, 1, 3]);
//! // The compromise ties between 0 -> 1 -> 3 and 0 -> 2 -> 3 and takes the lowest-id parent;
//! // path costs are n x K, vertex-major: that path's length and time.
//! assert_eq!(both.path_to(3)?, [0, 1, 3]);
//! assert_eq!(both.path_costs()[3 * 2..], [2, 10]);
//!
//! // Road 1 -> 3 closes and a direct road 0 -> 3 opens: one batch, applied once for both.
//! let mut batch = Batch::new(2);
//! batch.delete(1, 3);
//! batch.insert(0, 3, &[3, 3]);
//! update(&res, &mut graph, &batch.view(), &mut [(&mut shortest).into(), (&mut both).into()])?;
//! assert_eq!(shortest.distances(), [0, 1, 4, 3]);
//! assert_eq!(shortest.path_to(3)?, [0, 3]);
//! assert_eq!(both.path_to(3)?, [0, 3]);
//! assert_eq!(both.path_costs()[3 * 2..], [3, 3]);
//! assert_eq!(graph.version(), 1);
//! # Ok::<(), dyng::Error>(())
//! ```

#![warn(missing_docs)]

mod distance;
pub mod error;
pub mod ffi;
pub mod graph;
pub mod io;

pub use error::{Error, ErrorKind, Result};
pub use graph::{apply_batch, Batch, BatchView, Csr, Graph, WeightLayout};

pub use distance::DISTANCE_INF;

pub mod mosp;
#[doc(hidden)]
pub mod pool; // documented as `resources::pool`
pub(crate) mod cuda;
pub mod resources;
pub mod sssp;
pub mod session;
mod stats;
pub mod update;
pub mod worker;

#[doc(hidden)]
pub mod internals;

pub use mosp::{MospOptions, MospResult, Preferences};
pub use resources::{backend_available, Backend, Resources, ResourcesOptions};
pub use sssp::{sosp_solve_arrays, sosp_update_arrays, CsrArrays, Fallback, SsspOptions, SsspResult, UpdateStats};
pub use update::{update, update_one, update_timed, ResultMut, UpdateTimings};
