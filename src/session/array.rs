//! Which array of which tree a request names, and the snapshots that hold one.
//!
//! [`locate`] is the one check of an (array, objective) request against a result's shape, for
//! in-process results and worker results alike; a [`Snapshot`] keeps the array alive: an `Arc`
//! of an in-process array (an update writes through `Arc::make_mut`, so it copies while a
//! snapshot is held) or a worker's lent block (an update writes into another block).

use crate::error::{Error, Result};
use crate::worker::{kind, View};
use std::sync::Arc;

/// The objective index that names the MOSP tree in a path request (`DYNG_TREE_COMBINED`).
pub(crate) const TREE_COMBINED: u32 = u32::MAX;

/// An array of a result; the numbers are the C ABI's `DYNG_ARRAY_*`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Array {
    Distances = 0,
    Parents = 1,
    CombinedDistances = 2,
    CombinedParents = 3,
    PathCosts = 4,
}

impl Array {
    pub(crate) fn from_code(code: u32) -> Option<Array> {
        [Array::Distances, Array::Parents, Array::CombinedDistances, Array::CombinedParents, Array::PathCosts]
            .into_iter()
            .find(|a| a.code() == code)
    }

    pub(crate) fn code(self) -> u32 {
        self as u32
    }

    /// The worker protocol's kind of this array.
    pub(crate) fn kind(self) -> u16 {
        match self {
            Array::Distances => kind::DIST,
            Array::Parents => kind::PARENT,
            Array::CombinedDistances => kind::COMBINED_DIST,
            Array::CombinedParents => kind::COMBINED_PARENT,
            Array::PathCosts => kind::PATH_COSTS,
        }
    }

    /// The worker's VIEW mask of this array alone.
    fn mask(self) -> u32 {
        1u32 << (self.kind() - 1)
    }

    fn name(self) -> &'static str {
        match self {
            Array::Distances => "DYNG_ARRAY_DISTANCES",
            Array::Parents => "DYNG_ARRAY_PARENTS",
            Array::CombinedDistances => "DYNG_ARRAY_COMBINED_DISTANCES",
            Array::CombinedParents => "DYNG_ARRAY_COMBINED_PARENTS",
            Array::PathCosts => "DYNG_ARRAY_PATH_COSTS",
        }
    }
}

/// What a result is, known without its arrays.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Shape {
    Sssp { objective: usize },
    Mosp { k: usize, graph_k: usize },
}

/// Refuses an objective index for an array that has none (the combined tree, path costs).
fn no_objective_index(k: u32, what: &str, func: &str) -> Result<()> {
    if k != 0 {
        return Err(Error::invalid(format!("dyng: {func}: {what} has no objective index; pass k = 0 (got {k})")));
    }
    Ok(())
}

/// Checks that a result of `shape` holds `array` for objective `k` and returns the objective the
/// array belongs to (0 for the combined arrays and path costs).
pub(crate) fn locate(shape: Shape, array: Array, k: u32, func: &str) -> Result<usize> {
    let ku = k as usize;
    match (shape, array) {
        (Shape::Sssp { objective }, Array::Distances | Array::Parents) => {
            if ku != objective {
                return Err(Error::invalid(format!(
                    "dyng: {func}: this SSSP result holds objective {objective} only, not k = {k}"
                )));
            }
            Ok(ku)
        }
        (Shape::Mosp { k: kk, .. }, Array::Distances | Array::Parents) => {
            if ku >= kk {
                return Err(Error::invalid(format!("dyng: {func}: k = {k} is outside [0, K = {kk})")));
            }
            Ok(ku)
        }
        (Shape::Mosp { .. }, a) => {
            no_objective_index(k, a.name(), func)?;
            Ok(0)
        }
        (Shape::Sssp { .. }, a) => Err(Error::invalid(format!(
            "dyng: {func}: array {} exists only in MOSP results",
            a.code()
        ))),
    }
}

/// An immutable snapshot of one array of a result, valid whatever happens to the result.
pub(crate) enum Snapshot {
    I32(Arc<Vec<i32>>),
    I64(Arc<Vec<i64>>),
    /// A lent worker block holding exactly one array (the view mask names one), of this kind.
    Worker(View, u16),
}

/// The elements of a snapshot.
pub(crate) enum Elements<'a> {
    I32(&'a [i32]),
    I64(&'a [i64]),
}

impl Snapshot {
    /// A worker's view of `array`, objective `objective`, of result `id`.
    pub(crate) fn from_worker(client: &crate::worker::Client, id: u64, array: Array, objective: usize) -> Result<Snapshot> {
        Ok(Snapshot::Worker(client.view(id, array.mask(), objective)?, array.kind()))
    }

    pub(crate) fn elements(&self, func: &str) -> Result<Elements<'_>> {
        Ok(match self {
            Snapshot::I32(a) => Elements::I32(a),
            Snapshot::I64(a) => Elements::I64(a),
            Snapshot::Worker(v, kind) => {
                if let Some(a) = v.i64s(*kind) {
                    Elements::I64(a)
                } else if let Some(a) = v.i32s(*kind) {
                    Elements::I32(a)
                } else {
                    return Err(Error::Protocol(format!("dyng worker: {func}: the lent block lacks array kind {kind}")));
                }
            }
        })
    }
}
