//! Where the work runs: in this process or in a `dyng-worker` process, behind one face.
//!
//! A [`Session`] is an execution context placed in this process ([`Session::local`]: the
//! engines run here, on its [`Resources`]) or in a worker ([`Session::worker`]: they run in a
//! `dyng-worker` process, spawned on first use, which the C ABI's worker isolation and
//! `dyng mosp --isolation worker` use). A graph loaded through a session is a [`SessionGraph`]
//! (a worker graph keeps a host mirror, always at the worker's state), and its results are
//! [`SessionResult`]s: adopting trees, updating and reading a result's arrays and counters read
//! the same either way, and give the same values and the same errors.
//!
//! ```
//! use dyng::session::Session;
//! use dyng::{Batch, Csr, Fallback, Resources, SsspOptions};
//!
//! // 0 -> 1 -> 2 with one objective; the tree from 0 as the original drivers read it.
//! let csr = Csr::from_edges(3, 1, &[0, 1], &[1, 2], &[4, 5])?;
//! let session = Session::local(Resources::sequential());
//! let mut g = session.load_graph(csr)?;
//! let opt = SsspOptions { delta: None, fallback: Fallback::AdaptiveCounted };
//! let tree = (vec![0, 4, 9], vec![-1, 0, 1]);
//! let mut r = session.adopt_mosp_as_originals(&g, 0, vec![tree], false, &[5], &[], &opt)?;
//! let mut batch = Batch::new(1);
//! batch.insert(0, 2, &[3]);
//! session.update(&mut g, &batch.view(), &mut [&mut r])?;
//! assert_eq!(r.mosp_snapshot()?.tree(0).0, &[0, 4, 3]);
//! assert_eq!(r.mosp_counters()?.objectives.len(), 1);
//! # Ok::<(), dyng::Error>(())
//! ```
//!
//! Inside, this module alone chooses between the in-process engines and the worker client, for
//! the C ABI's calls too; both paths share the checks (which result is stale, which array of
//! which tree a request names).

mod array;
mod graph;
mod mosp_arrays;
mod result;
mod update;
mod worker;

pub(crate) use array::{Array, Elements, Snapshot, TREE_COMBINED};
pub use graph::SessionGraph;
pub use mosp_arrays::{MospCounters, MospSnapshot};
pub(crate) use result::ResultKind;
pub use result::SessionResult;
pub(crate) use update::StatsSink;

use crate::error::Result;
use crate::graph::{BatchView, Csr};
use crate::sssp::SsspOptions;
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

/// An execution context and the place its graphs and results live. Clones share both (a worker
/// session's clones share its worker).
#[derive(Clone)]
pub struct Session {
    /// In process: the engines' context. In a worker: a one-thread sequential context for the
    /// work that stays host-side (caller-held arrays, `dyng_sosp_update_arrays`).
    res: Resources,
    place: Placement,
}

impl Session {
    /// Work runs in this process on `res`.
    pub fn local(res: Resources) -> Self {
        Session { res, place: Placement::Local }
    }

    /// Work runs in a worker running `backend` (which `opts.backend` is set to). The worker
    /// executable is located now (`opts.worker_path`, else `$DYNG_WORKER`, else beside the
    /// library or program; it must be trusted, see `docs/worker.md`), so that a missing one is
    /// reported here rather than by the first call; the worker is spawned on first use.
    pub fn worker(backend: Backend, mut opts: WorkerOptions) -> Result<Self> {
        crate::worker::resolve_worker_path(opts.worker_path.as_deref())?;
        opts.backend = Some(backend);
        // Sequential, so that a worker session starts no thread pool here.
        let res = Resources::new(&ResourcesOptions { backend: Backend::Sequential, num_threads: 1, device: 0 })?;
        Ok(Session { res, place: Placement::Worker(Arc::new(WorkerHost::new(opts))) })
    }

    /// The host-side context (in a worker session, the sequential one of host-side work).
    pub fn resources(&self) -> &Resources {
        &self.res
    }

    /// The process id of the session's worker once it is spawned; `None` in process.
    pub fn worker_pid(&self) -> Option<u32> {
        match &self.place {
            Placement::Local => None,
            Placement::Worker(w) => w.spawned().and_then(|c| c.worker_pid()),
        }
    }

    /// Loads `csr` as a graph of this session (into the worker first, for a worker session:
    /// spawning it if needed). A worker holds one graph: a second load while the first graph is
    /// alive is refused.
    pub fn load_graph(&self, csr: Csr) -> Result<SessionGraph> {
        self.graph(csr, "Session::load_graph")
    }

    /// Adopts the K initial trees `trees` (objective j's (distances, parents), from `source`) as
    /// one MOSP result with preferences `prefs` (empty: all ones), checked as the original
    /// drivers check theirs: each tree in one pass (ranges, the root, parents closer to the
    /// source, distances within (n - 1) x `max_weights[j]`, objective j's largest weight of the
    /// batch to come; the graph's own largest counts as well), with `canonicalize` first
    /// rewritten to the lowest-id tight in-neighbour; see
    /// [`SsspResult::from_arrays_unverified`](crate::SsspResult::from_arrays_unverified). The
    /// trees are combined by the result's first update
    /// ([`MospResult::from_trees_deferred`](crate::MospResult::from_trees_deferred)). `g` must
    /// be a graph of this session.
    #[allow(clippy::too_many_arguments)]
    pub fn adopt_mosp_as_originals(
        &self,
        g: &SessionGraph,
        source: usize,
        trees: Vec<(Vec<i64>, Vec<i32>)>,
        canonicalize: bool,
        max_weights: &[i64],
        prefs: &[u32],
        opt: &SsspOptions,
    ) -> Result<SessionResult> {
        g.adopt_mosp_as_originals(&self.res, source, trees, canonicalize, max_weights, prefs, opt)
    }

    /// Applies `batch` to `g` once and updates every result of `results` (results of `g`,
    /// current at its state), as [`crate::update()`] does in process. Everything is validated
    /// before anything changes.
    pub fn update(&self, g: &mut SessionGraph, batch: &BatchView<'_>, results: &mut [&mut SessionResult]) -> Result<()> {
        g.update(&self.res, batch, results, None, "Session::update")
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
