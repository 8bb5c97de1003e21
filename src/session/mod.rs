//! Where a call runs: in this process or in the persistent `dyng-worker` process.
//!
//! A [`Session`] is the context behind a resources handle, placed [`Placement::Local`] (the
//! engines run here) or [`Placement::Worker`] (they run in a worker, spawned on first use). A
//! graph made through a session is a [`SessionGraph`] (a worker graph keeps a host mirror), and
//! its results are [`SessionResult`]s. Compute, adoption, combining, update, info, paths, views
//! and the pool calls have one face here, and this module alone chooses between the in-process
//! engines and the worker client. Both paths share the checks: `update::staleness` decides a
//! stale result, [`array::locate`] which array of which tree a request names.

mod array;
mod graph;
mod result;
mod update;
mod worker;

pub(crate) use array::{Array, Elements, Snapshot, TREE_COMBINED};
pub(crate) use graph::SessionGraph;
pub(crate) use result::{ResultKind, SessionResult};
pub(crate) use update::StatsSink;

use crate::error::Result;
use crate::graph::Csr;
use crate::resources::{Backend, Resources, ResourcesOptions};
use crate::worker::WorkerOptions;
use std::sync::Arc;
use worker::WorkerHost;

/// Where the work of a session runs.
#[derive(Clone)]
pub(crate) enum Placement {
    Local,
    /// In a worker process, shared by the session's clones.
    Worker(Arc<WorkerHost>),
}

/// An execution context and the place its graphs and results live. Clones share both.
#[derive(Clone)]
pub(crate) struct Session {
    /// In process: the engines' context. In a worker: a one-thread sequential context for the
    /// work that stays host-side (caller-held arrays, `dyng_sosp_update_arrays`).
    res: Resources,
    place: Placement,
}

impl Session {
    /// Work runs in this process on `res`.
    pub(crate) fn local(res: Resources) -> Self {
        Session { res, place: Placement::Local }
    }

    /// Work runs in a worker running `backend` (which `opts.backend` is set to). The worker
    /// executable is located now, so that a missing one is reported here rather than by the
    /// first call; the worker is spawned on first use.
    pub(crate) fn worker(backend: Backend, mut opts: WorkerOptions) -> Result<Self> {
        crate::worker::resolve_worker_path(opts.worker_path.as_deref())?;
        opts.backend = Some(backend);
        // Sequential, so that a worker session starts no thread pool here.
        let res = Resources::new(&ResourcesOptions { backend: Backend::Sequential, num_threads: 1, device: 0 })?;
        Ok(Session { res, place: Placement::Worker(Arc::new(WorkerHost::new(opts))) })
    }

    /// The host-side context (in a worker session, the sequential one of host-side work).
    pub(crate) fn resources(&self) -> &Resources {
        &self.res
    }

    /// Prepares what the first call would otherwise start: a worker's spawn and handshake. In
    /// process there is nothing to do.
    pub(crate) fn warm_up(&self) -> Result<()> {
        if let Placement::Worker(w) = &self.place {
            w.client()?;
        }
        Ok(())
    }

    /// Frees the idle workspaces (a worker's, and its free reply blocks, once it is spawned).
    pub(crate) fn release_workspaces(&self) -> Result<()> {
        match &self.place {
            Placement::Local => self.res.release_workspaces(),
            Placement::Worker(w) => {
                if let Some(c) = w.spawned() {
                    c.release_workspaces()?;
                }
            }
        }
        Ok(())
    }

    /// Bytes held by idle workspaces (a worker's; 0 before it is spawned, which a query does not
    /// do).
    pub(crate) fn workspace_bytes(&self) -> Result<usize> {
        Ok(match &self.place {
            Placement::Local => self.res.workspace_bytes(),
            Placement::Worker(w) => match w.spawned() {
                Some(c) => usize::try_from(c.workspace_bytes()?.0).unwrap_or(usize::MAX),
                None => 0,
            },
        })
    }

    /// A graph of `csr` placed where the session runs (a worker graph is loaded into the worker
    /// first, so a failed load leaves nothing behind).
    pub(crate) fn graph(&self, csr: Csr, func: &str) -> Result<SessionGraph> {
        match &self.place {
            Placement::Local => Ok(SessionGraph::local(crate::graph::Graph::new(csr))),
            Placement::Worker(w) => {
                let (graph, remote) = w.load(csr, func)?;
                Ok(SessionGraph::in_worker(graph, remote))
            }
        }
    }
}
