//! The worker side of a session (spec `worker-protocol.md` §13.1): the lazily spawned client, the
//! graph loaded into it, and the results resident in it.
//!
//! A worker graph keeps a validated host mirror (for info, copies, batch validation and
//! reading), and every batch is applied to both, in place, so the mirror always equals the
//! worker's graph without a round trip. Results live in the worker; the host keeps their id and
//! shape. In v1 a worker holds one graph at a time, so a worker session has a one-graph slot,
//! freed when that graph is dropped.

use super::array::Shape;
use crate::error::{Error, Result};
use crate::graph::{Csr, Graph};
use crate::sssp::{Fallback, SsspOptions, UpdateStats};
use crate::worker::{Client, WorkerOptions};
use parking_lot::Mutex;
use std::sync::Arc;

/// The worker of a session, shared by its clones.
pub(crate) struct WorkerHost {
    opts: WorkerOptions,
    /// `None` until the first call that needs the worker (spawn is lazy, spec 13.1).
    client: Mutex<Option<Arc<Client>>>,
    /// Id of the host mirror of the graph resident in the worker (v1: one graph per worker).
    graph_slot: Mutex<Option<u64>>,
}

impl WorkerHost {
    pub(crate) fn new(opts: WorkerOptions) -> Self {
        WorkerHost { opts, client: Mutex::new(None), graph_slot: Mutex::new(None) }
    }

    /// The client, spawning the worker (and completing the handshake) on first use.
    pub(crate) fn client(&self) -> Result<Arc<Client>> {
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

    /// Loads `csr` into the worker, claims the one-graph slot, and returns the host mirror.
    pub(crate) fn load(self: &Arc<Self>, csr: Csr, func: &str) -> Result<(Graph, RemoteGraph)> {
        let mut slot = self.graph_slot.lock();
        if slot.is_some() {
            return Err(Error::NotSupported(format!(
                "dyng: {func}: this worker-isolated resources handle already holds a graph and a v1 \
                 worker holds one graph; free that graph first or create another resources handle \
                 (each has its own worker)"
            )));
        }
        let client = self.client()?;
        client.load_graph(&csr)?;
        let graph = Graph::new(csr);
        let graph_id = graph.id();
        *slot = Some(graph_id);
        Ok((graph, RemoteGraph { worker: self.clone(), client, graph_id }))
    }
}

/// The worker side of a graph.
pub(crate) struct RemoteGraph {
    worker: Arc<WorkerHost>,
    pub(crate) client: Arc<Client>,
    /// The host mirror's id, held in the worker's slot.
    graph_id: u64,
}

impl Drop for RemoteGraph {
    fn drop(&mut self) {
        // The worker keeps the graph until the next LOAD_GRAPH replaces it; dropping the graph
        // only makes the slot available again.
        let mut slot = self.worker.graph_slot.lock();
        if *slot == Some(self.graph_id) {
            *slot = None;
        }
    }
}

impl RemoteGraph {
    /// Result `id`, just created in the worker on this graph (`g` is its host mirror, at the
    /// state the worker is at); `opt`: the bucket width and policy it was made with; `stats`:
    /// the counters when the host knows them without asking (`None`: fetched when first asked
    /// for).
    pub(crate) fn result(&self, id: u64, g: &Graph, source: usize, shape: Shape, opt: SsspOptions, stats: Option<UpdateStats>) -> RemoteRes {
        RemoteRes {
            client: self.client.clone(),
            id,
            source,
            shape,
            n: g.n(),
            graph_id: g.id(),
            graph_version: g.version(),
            delta: opt.delta,
            fallback: opt.fallback,
            stats: Mutex::new(stats),
        }
    }
}

/// A result resident in the worker.
pub(crate) struct RemoteRes {
    pub(crate) client: Arc<Client>,
    pub(crate) id: u64,
    pub(crate) source: usize,
    pub(crate) shape: Shape,
    pub(crate) n: usize,
    /// The host mirror it was computed on, and the mirror's version it is current at (mirrors
    /// the worker's epoch check).
    pub(crate) graph_id: u64,
    pub(crate) graph_version: u64,
    /// The bucket width it was computed or adopted with (SSSP; a MOSP adoption of the tree keeps
    /// it, as `from_trees` keeps the tree's in-process).
    pub(crate) delta: Option<i64>,
    /// The adaptive-update policy it runs (a MOSP adoption of the tree needs it, as `from_trees`
    /// keeps the tree's in-process).
    pub(crate) fallback: Fallback,
    /// Counters of the last compute, adoption or update, once known: reading them costs a STATS
    /// call, so they are fetched only when a caller asks and kept until the next update.
    stats: Mutex<Option<UpdateStats>>,
}

impl RemoteRes {
    /// The (graph id, version) it belongs to, as `graph::stale::staleness` takes it.
    pub(crate) fn state(&self) -> (u64, u64) {
        (self.graph_id, self.graph_version)
    }

    /// The counters of its last compute, adoption or update (MOSP: summed over the K
    /// objectives, as in-process).
    pub(crate) fn last_stats(&self) -> Result<UpdateStats> {
        let mut cached = self.stats.lock();
        if let Some(s) = *cached {
            return Ok(s);
        }
        let w = self.client.result_stats(self.id)?;
        let each: Vec<UpdateStats> = w
            .objectives
            .iter()
            .map(|o| o.update_stats())
            .collect();
        let s = UpdateStats::sum(&each);
        *cached = Some(s);
        Ok(s)
    }

    /// An update brought it to `version` and changed its counters: the next read asks the
    /// worker.
    pub(crate) fn updated(&mut self, version: u64) {
        self.graph_version = version;
        *self.stats.lock() = None;
    }
}

impl Drop for RemoteRes {
    fn drop(&mut self) {
        // DROP_RESULT; a failure (worker gone, graph replaced) leaves nothing to free.
        let _ = self.client.drop_result(self.id);
    }
}
