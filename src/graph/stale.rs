//! Whether a result belongs to a graph's current state: the one decision of a stale result, for
//! in-process results and, through their host mirror, worker results. It lives with the graph
//! because results of every kind (SSSP, MOSP, session) ask it.

use super::Graph;
use crate::error::{Error, Result};

/// The version a result is left at by an update that failed after it began to change it (a
/// device or internal error, never bad input, which is refused before anything changes): no
/// graph state has it, so every later use of the result is refused as stale.
pub(crate) const POISONED: u64 = u64::MAX;

/// Why a result cannot be used on a graph's current state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stale {
    /// Computed on another graph.
    OtherGraph,
    /// Left unusable by an update that failed after it began to change it.
    Poisoned,
    /// Computed on version `version` of the graph, which is now at `now`.
    Behind { version: u64, now: u64 },
}

/// Whether a result at `(graph id, version)` belongs to `graph`'s current state: the one decision
/// of a stale result, for in-process results and, through their host mirror, worker results.
pub(crate) fn staleness((id, version): (u64, u64), graph: &Graph) -> Option<Stale> {
    if id != graph.id() {
        Some(Stale::OtherGraph)
    } else if version == POISONED {
        Some(Stale::Poisoned)
    } else if version != graph.version() {
        Some(Stale::Behind { version, now: graph.version() })
    } else {
        None
    }
}

/// What is wrong with the result `who` names (e.g. "dyng: result 2"), in the words every path
/// uses, in process or in a worker.
pub(crate) fn stale_message(why: Stale, who: &str) -> String {
    match why {
        Stale::OtherGraph => format!("{who} was computed on another graph"),
        Stale::Poisoned => {
            format!("{who} was left unusable by an update that failed on the device or inside dyng; compute it again")
        }
        Stale::Behind { version, now } => {
            format!("{who} belongs to version {version} of the graph, which is now at version {now}")
        }
    }
}

/// Refuses a result of another graph or of another state of this one.
pub(crate) fn check_current(i: usize, state: (u64, u64), graph: &Graph) -> Result<()> {
    match staleness(state, graph) {
        None => Ok(()),
        Some(why) => Err(Error::StaleResult(stale_message(why, &format!("dyng: result {i}")))),
    }
}
