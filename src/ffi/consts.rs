//! The C ABI's constants: status codes, the values of enums passed as `uint32_t`, and versions.
//!
//! Enums cross the boundary as plain integers (`int32_t` status, `uint32_t` inputs) so that a value
//! a C caller invents can be checked instead of being undefined behaviour in Rust. Values are
//! stable; new ones are only appended.

#![allow(non_camel_case_types)]

/// Status of a fallible call: `DYNG_OK` (0) or one of the `DYNG_ERR_*` codes. Thread safety: a
/// plain value.
pub type dyng_status_t = i32;

/// Success.
pub const DYNG_OK: dyng_status_t = 0;
/// A required pointer argument is NULL.
pub const DYNG_ERR_NULL_ARGUMENT: dyng_status_t = 1;
/// An argument breaks a documented rule (range, size, enum value, freed or wrong-type handle).
pub const DYNG_ERR_INVALID_ARGUMENT: dyng_status_t = 2;
/// A result belongs to another graph or to an older state of the graph.
pub const DYNG_ERR_STALE_RESULT: dyng_status_t = 3;
/// A file could not be opened or read (the message names path, line and column).
pub const DYNG_ERR_IO: dyng_status_t = 4;
/// A size limit of the data model (32-bit ids, 62-bit distances) or of an output buffer is exceeded.
pub const DYNG_ERR_CAPACITY: dyng_status_t = 5;
/// The backend or feature is not available in this build or on this machine.
pub const DYNG_ERR_NOT_SUPPORTED: dyng_status_t = 6;
/// An allocation failed.
pub const DYNG_ERR_OUT_OF_MEMORY: dyng_status_t = 7;
/// The CUDA driver or NVRTC reported an error.
pub const DYNG_ERR_CUDA: dyng_status_t = 8;
/// The worker process died or became unreachable.
pub const DYNG_ERR_WORKER_LOST: dyng_status_t = 9;
/// The worker did not answer in time.
pub const DYNG_ERR_TIMEOUT: dyng_status_t = 10;
/// The worker sent a malformed or unexpected message.
pub const DYNG_ERR_PROTOCOL: dyng_status_t = 11;
/// A broken internal invariant (a bug in dyng; please report it).
pub const DYNG_ERR_INTERNAL: dyng_status_t = 12;
/// A panic was caught at the boundary (a bug in dyng; the message says where).
pub const DYNG_ERR_PANIC: dyng_status_t = 13;
/// The operating system refused a resource dyng needed (a thread: `ulimit -u`, memory for its
/// stack; a process); the message gives the OS error. Added after dyng 0.1.
pub const DYNG_ERR_RESOURCE: dyng_status_t = 14;
/// A handle is in use by a call on another thread against its Thread safety rule (a result or
/// graph that `dyng_update` changes, or a handle being freed, used by another call meanwhile):
/// the call did nothing. Added after dyng 0.1.
pub const DYNG_ERR_BUSY: dyng_status_t = 15;

/// Major version of this header.
pub const DYNG_VERSION_MAJOR: u32 = 0;
/// Minor version of this header.
pub const DYNG_VERSION_MINOR: u32 = 1;
/// Patch version of this header.
pub const DYNG_VERSION_PATCH: u32 = 0;

/// Backend: the single-threaded reference engine.
pub const DYNG_BACKEND_SEQUENTIAL: u32 = 0;
/// Backend: the multi-threaded engine on a thread pool owned by the resources handle.
pub const DYNG_BACKEND_PARALLEL: u32 = 1;
/// Backend: the CUDA engine (driver and NVRTC loaded at run time; `DYNG_ERR_NOT_SUPPORTED`, naming
/// what is missing, on a machine without them).
pub const DYNG_BACKEND_CUDA: u32 = 2;

/// Isolation: run the engines in the calling process.
pub const DYNG_ISOLATION_IN_PROCESS: u32 = 0;
/// Isolation: run the engines in a persistent `dyng-worker` process (crash isolation; results come
/// back as shared-memory blocks; `DYNG_ERR_NOT_SUPPORTED` when the worker executable is not found).
pub const DYNG_ISOLATION_WORKER: u32 = 1;

/// `dyng_resources_options_t.worker_flags`: XXH3-64 checksums of every array crossing to and
/// from the worker, verified by the reader (`DYNG_ERR_PROTOCOL` on a mismatch). Costs a hash of
/// every array on each side.
pub const DYNG_WORKER_CHECKSUMS: u64 = 1;

/// Adaptive update: recompute from the source when that is predicted to be cheaper (30 % of a
/// sample of the vertices below an invalidated tree edge or an improving insertion head, 30 % of
/// the vertices invalidated or improved once counted, an insertion shortening a distance by over
/// 40 % of the largest, or a repair outgrowing the tree's last static solve); canonical trees of
/// graphs with at least 4096 vertices only; results are bit-identical either way. When the
/// sample or the shortcut rule decides before any walk, `invalidated` in the stats is the
/// sample's estimate (a lower bound when a batch with more than n/8 changes was judged on a
/// subset of them), or the number of distinct roots, a lower bound too, when the shortcut rule
/// decided before the sample (it goes first when the tree's largest distance is known).
pub const DYNG_FALLBACK_ADAPTIVE: u32 = 0;
/// Always repair the tree incrementally.
pub const DYNG_FALLBACK_NEVER: u32 = 1;
/// Always recompute from scratch (for comparisons).
pub const DYNG_FALLBACK_ALWAYS: u32 = 2;
/// As `DYNG_FALLBACK_ADAPTIVE`, with `invalidated` always exact: the invalidated subtrees are
/// walked even when the sample chooses to recompute (up to half a recompute more). Trees adopted
/// by `dyng_sssp_from_arrays` run this policy, in process and through the worker.
pub const DYNG_FALLBACK_ADAPTIVE_COUNTED: u32 = 3;

/// Graph file format: the CSR text triplet (docs/formats.md); `path` is the prefix P of
/// `PRowPtr.txt`, `PColInd.txt`, `PValues.txt`.
pub const DYNG_FORMAT_CSR_TEXT: u32 = 0;
/// Graph file format: a Matrix Market `coordinate` file (pattern, integer or real), converted
/// with the MOSP rule of docs/formats.md: both directions of a symmetric entry, edges sorted and
/// deduplicated, self-loops dropped, K random weights in [weight_min, weight_max] drawn from
/// mt19937(seed) (the file's values are ignored). A file with entries outside the matrix, an
/// entry count other than its size line's, or an array or complex banner is refused.
pub const DYNG_FORMAT_MATRIX_MARKET: u32 = 1;
/// Graph file format: DIMACS-style `.gr` arc lists, one file per objective: `path` gives objective 0,
/// `dyng_read_options_t.more_paths` objectives 1, 2, ...; all files list the same arcs in the same
/// order.
pub const DYNG_FORMAT_DIMACS: u32 = 2;

/// Result array: distances of objective k (`int64_t`, n entries).
pub const DYNG_ARRAY_DISTANCES: u32 = 0;
/// Result array: parents of objective k's tree (`int32_t`, n entries, -1 = none).
pub const DYNG_ARRAY_PARENTS: u32 = 1;
/// Result array: MOSP combined-graph distances (`int64_t`, n entries): the MOSP tree's path
/// lengths in the combined graph, whose edge weights are scaled by L = the least common multiple
/// of the preferences (1 with the default all-ones preferences), so a distance d stands for d / L
/// of the unscaled weights (docs/formats.md, "The MOSP result").
pub const DYNG_ARRAY_COMBINED_DISTANCES: u32 = 2;
/// Result array: the MOSP tree's parents (`int32_t`, n entries).
pub const DYNG_ARRAY_COMBINED_PARENTS: u32 = 3;
/// Result array: MOSP path costs in all KG graph objectives (`int64_t`, n x KG, vertex-major).
pub const DYNG_ARRAY_PATH_COSTS: u32 = 4;

/// Element type of a view or array: `int32_t`.
pub const DYNG_DTYPE_INT32: u32 = 0;
/// Element type of a view or array: `int64_t`.
pub const DYNG_DTYPE_INT64: u32 = 1;

/// Result kind: a single-objective SSSP tree.
pub const DYNG_RESULT_SSSP: u32 = 0;
/// Result kind: a multi-objective MOSP result.
pub const DYNG_RESULT_MOSP: u32 = 1;

/// `k` argument of `dyng_result_path` that selects the MOSP tree (the combined graph's tree).
pub const DYNG_TREE_COMBINED: u32 = u32::MAX;

/// The distance of an unreachable vertex: (2^63-1)/4. A distance is finite iff it is below
/// `DYNG_DISTANCE_INF / 2`.
pub const DYNG_DISTANCE_INF: i64 = i64::MAX / 4;

#[cfg(test)]
mod tests {
    #[test]
    fn version_macros_match_the_crate() {
        assert_eq!(
            super::DYNG_VERSION_MAJOR.to_string(),
            env!("CARGO_PKG_VERSION_MAJOR")
        );
        assert_eq!(
            super::DYNG_VERSION_MINOR.to_string(),
            env!("CARGO_PKG_VERSION_MINOR")
        );
        assert_eq!(
            super::DYNG_VERSION_PATCH.to_string(),
            env!("CARGO_PKG_VERSION_PATCH")
        );
        assert_eq!(super::DYNG_DISTANCE_INF, crate::DISTANCE_INF);
    }

    use super::*;
    use crate::error::ErrorKind;

    /// The header's literal codes (cbindgen writes constants, not calls) are the kinds' own.
    #[test]
    fn the_c_status_of_each_kind_is_its_code() {
        let c = [
            (ErrorKind::InvalidArgument, DYNG_ERR_INVALID_ARGUMENT),
            (ErrorKind::StaleResult, DYNG_ERR_STALE_RESULT),
            (ErrorKind::Io, DYNG_ERR_IO),
            (ErrorKind::Capacity, DYNG_ERR_CAPACITY),
            (ErrorKind::NotSupported, DYNG_ERR_NOT_SUPPORTED),
            (ErrorKind::OutOfMemory, DYNG_ERR_OUT_OF_MEMORY),
            (ErrorKind::Cuda, DYNG_ERR_CUDA),
            (ErrorKind::WorkerLost, DYNG_ERR_WORKER_LOST),
            (ErrorKind::Timeout, DYNG_ERR_TIMEOUT),
            (ErrorKind::Protocol, DYNG_ERR_PROTOCOL),
            (ErrorKind::Internal, DYNG_ERR_INTERNAL),
            (ErrorKind::Resource, DYNG_ERR_RESOURCE),
        ];
        assert_eq!(c.len(), ErrorKind::ALL.len());
        for (k, status) in c {
            assert_eq!(k.code(), status, "{k:?}");
        }
        for status in [DYNG_OK, DYNG_ERR_NULL_ARGUMENT, DYNG_ERR_PANIC, DYNG_ERR_BUSY] {
            assert_eq!(ErrorKind::from_code(status), None);
        }
    }
}
