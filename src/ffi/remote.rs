//! Worker isolation behind the C ABI: resources, graphs and results whose work runs in a
//! `dyng-worker` process (spec `worker-protocol.md` §13.1).
//!
//! A worker-isolated resources handle holds a [`WorkerRes`] shared by its clones; the worker is
//! spawned on first use (or by `dyng_resources_warm_up`). A graph built through it keeps a
//! validated host copy (for `dyng_graph_info`, `dyng_graph_copy_csr`, batch validation and batch
//! reading) and is loaded into the worker; every batch is applied to both, in place, so the host
//! copy always mirrors the worker's graph without a round trip. Results live in the worker; their
//! handles hold the remote id and the shape known host-side. In v1 a worker holds one graph at a
//! time, so a resources handle has a one-graph slot, freed when that graph handle is freed.

use super::boundary::{invalid, FfiResult};
use super::consts::*;
use super::view::no_objective_index;
use crate::error::Error;
use crate::graph::{Csr, Graph};
use crate::sssp::{Fallback, SsspOptions, UpdateStats};
use crate::worker::{kind, Client, WorkerOptions};
use parking_lot::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// The worker part of a resources handle, shared by all clones.
pub(crate) struct WorkerRes {
    opts: WorkerOptions,
    /// `None` until the first call that needs the worker (spawn is lazy, spec 13.1).
    client: Mutex<Option<Arc<Client>>>,
    /// Token of the graph resident in the worker; 0 = none (v1: one graph per worker).
    graph_slot: Mutex<u64>,
}

static NEXT_TOKEN: AtomicU64 = AtomicU64::new(1);

impl WorkerRes {
    pub(crate) fn new(opts: WorkerOptions) -> Self {
        WorkerRes {
            opts,
            client: Mutex::new(None),
            graph_slot: Mutex::new(0),
        }
    }

    /// The client, spawning the worker (and completing the handshake) on first use.
    pub(crate) fn client(&self) -> crate::Result<Arc<Client>> {
        let mut slot = self.client.lock();
        if let Some(c) = &*slot {
            return Ok(c.clone());
        }
        let c = Arc::new(Client::spawn(self.opts.clone())?);
        *slot = Some(c.clone());
        Ok(c)
    }

    /// The client if the worker was already spawned (queries must not spawn one just to say 0).
    pub(crate) fn spawned(&self) -> Option<Arc<Client>> {
        self.client.lock().clone()
    }

    /// Loads `csr` into the worker and claims the one-graph slot.
    pub(crate) fn load(self: &Arc<Self>, csr: &Csr, func: &str) -> FfiResult<RemoteGraph> {
        let mut slot = self.graph_slot.lock();
        if *slot != 0 {
            return Err(Error::NotSupported(format!(
                "dyng: {func}: this worker-isolated resources handle already holds a graph and a v1 \
                 worker holds one graph; free that graph first or create another resources handle \
                 (each has its own worker)"
            ))
            .into());
        }
        let client = self.client()?;
        client.load_graph(csr)?;
        let token = NEXT_TOKEN.fetch_add(1, Ordering::Relaxed);
        *slot = token;
        Ok(RemoteGraph {
            worker: self.clone(),
            client,
            token,
        })
    }
}

/// The worker side of a graph handle.
pub(crate) struct RemoteGraph {
    worker: Arc<WorkerRes>,
    pub(crate) client: Arc<Client>,
    /// Identifies this graph among remote results (results of another graph are stale for it).
    pub(crate) token: u64,
}

impl Drop for RemoteGraph {
    fn drop(&mut self) {
        // The worker keeps the graph until the next LOAD_GRAPH replaces it; freeing the handle
        // only makes the slot available again.
        let mut slot = self.worker.graph_slot.lock();
        if *slot == self.token {
            *slot = 0;
        }
    }
}

impl RemoteGraph {
    /// The handle of result `id`, just created in the worker on this graph (`g` is its host
    /// mirror, at the state the worker is at). `stats`: the counters when the host knows them
    /// without asking (`None`: fetched from the worker when first asked for).
    /// A resident result of this worker; `opt`: the bucket width and policy it was made with.
    pub(crate) fn result(&self, id: u64, g: &Graph, source: usize, shape: Shape, opt: SsspOptions, stats: Option<UpdateStats>) -> RemoteRes {
        RemoteRes {
            client: self.client.clone(),
            id,
            graph_token: self.token,
            source,
            shape,
            n: g.n(),
            graph_version: g.version(),
            delta: opt.delta,
            fallback: opt.fallback,
            stats: Mutex::new(stats),
        }
    }
}

/// What a remote result is, as known host-side.
#[derive(Clone, Copy)]
pub(crate) enum Shape {
    Sssp { objective: usize },
    Mosp { k: usize, graph_k: usize },
}

/// A result resident in the worker.
pub(crate) struct RemoteRes {
    pub(crate) client: Arc<Client>,
    pub(crate) id: u64,
    pub(crate) graph_token: u64,
    pub(crate) source: usize,
    pub(crate) shape: Shape,
    pub(crate) n: usize,
    /// Host graph version the result is current at (mirrors the worker's epoch check).
    pub(crate) graph_version: u64,
    /// The bucket width it was computed or adopted with (SSSP; a MOSP adoption of the tree keeps
    /// it, as `from_trees` keeps the tree's in-process).
    pub(crate) delta: Option<i64>,
    /// The adaptive-update policy it runs (a MOSP adoption of the tree needs it, as `from_trees`
    /// keeps the tree's in-process).
    pub(crate) fallback: Fallback,
    /// Counters of the last compute, adoption or update, once known: reading them costs a STATS
    /// call, so they are fetched only when a caller asks (`dyng_result_info`, `dyng_update` with
    /// a stats array) and kept until the next update.
    stats: Mutex<Option<UpdateStats>>,
}

impl RemoteRes {
    /// The counters `dyng_result_info` and `dyng_update` report (MOSP: summed over the K
    /// objectives, as in-process).
    pub(crate) fn last_stats(&self) -> crate::Result<UpdateStats> {
        let mut cached = self.stats.lock();
        if let Some(s) = *cached {
            return Ok(s);
        }
        let w = self.client.result_stats(self.id)?;
        let each: Vec<UpdateStats> = w
            .objectives
            .iter()
            .map(|o| UpdateStats {
                invalidated: o.invalidated as i64,
                affected: o.affected as i64,
                iterations: o.iterations as i64,
                epochs: o.epochs as i64,
                pushes: o.pushes as i64,
                packed_parents: o.packed,
                fallback_used: o.fallback_used,
                ..Default::default()
            })
            .collect();
        let s = UpdateStats::sum(&each);
        *cached = Some(s);
        Ok(s)
    }

    /// An update changed the counters: the next read asks the worker.
    pub(crate) fn forget_stats(&self) {
        *self.stats.lock() = None;
    }
}

impl Drop for RemoteRes {
    fn drop(&mut self) {
        // DROP_RESULT; a failure (worker gone, graph replaced) leaves nothing to free.
        let _ = self.client.drop_result(self.id);
    }
}

/// Where array `array`, tree `k`, of a remote result lives: (kind, view mask, objective).
pub(crate) fn locate(r: &RemoteRes, array: u32, k: u32, func: &str) -> FfiResult<(u16, u32, usize)> {
    let ku = k as usize;
    let tree_kind = |array: u32| if array == DYNG_ARRAY_DISTANCES { kind::DIST } else { kind::PARENT };
    let (kd, objective) = match (r.shape, array) {
        (Shape::Sssp { objective }, DYNG_ARRAY_DISTANCES | DYNG_ARRAY_PARENTS) => {
            if ku != objective {
                return Err(invalid(format!(
                    "dyng: {func}: this SSSP result holds objective {objective} only, not k = {k}"
                )));
            }
            (tree_kind(array), 0)
        }
        (Shape::Mosp { k: kk, .. }, DYNG_ARRAY_DISTANCES | DYNG_ARRAY_PARENTS) => {
            if ku >= kk {
                return Err(invalid(format!("dyng: {func}: k = {k} is outside [0, K = {kk})")));
            }
            (tree_kind(array), ku)
        }
        (Shape::Mosp { .. }, DYNG_ARRAY_COMBINED_DISTANCES) => {
            no_objective_index(k, "DYNG_ARRAY_COMBINED_DISTANCES", func)?;
            (kind::COMBINED_DIST, 0)
        }
        (Shape::Mosp { .. }, DYNG_ARRAY_COMBINED_PARENTS) => {
            no_objective_index(k, "DYNG_ARRAY_COMBINED_PARENTS", func)?;
            (kind::COMBINED_PARENT, 0)
        }
        (Shape::Mosp { .. }, DYNG_ARRAY_PATH_COSTS) => {
            no_objective_index(k, "DYNG_ARRAY_PATH_COSTS", func)?;
            (kind::PATH_COSTS, 0)
        }
        (
            Shape::Sssp { .. },
            DYNG_ARRAY_COMBINED_DISTANCES | DYNG_ARRAY_COMBINED_PARENTS | DYNG_ARRAY_PATH_COSTS,
        ) => {
            return Err(invalid(format!(
                "dyng: {func}: array {array} exists only in MOSP results"
            )))
        }
        (_, a) => {
            return Err(invalid(format!(
                "dyng: {func}: array = {a} is not a DYNG_ARRAY_* value (0..4)"
            )))
        }
    };
    Ok((kd, 1u32 << (kd - 1), objective))
}
