//! Distances: the value of an unreachable vertex and what counts as finite, for every engine,
//! reader and writer.

/// The distance of an unreachable vertex: (2^63-1)/4, as in the originals. A distance is finite iff
/// it is below `DISTANCE_INF / 2`; writers print `INF` from there on.
pub const DISTANCE_INF: i64 = i64::MAX / 4;

/// Whether `d` is a finite distance (below `DISTANCE_INF / 2`).
#[inline]
pub(crate) fn is_finite(d: i64) -> bool {
    d < DISTANCE_INF / 2
}
