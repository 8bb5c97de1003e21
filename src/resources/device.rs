//! Which device runs it: the host engines (sequential or parallel) or the CUDA engine.
//!
//! The choice is made once, when the [`Resources`] handle is made, and is read here only: the
//! SSSP, MOSP and update code ask the handle's [`Device`] to run a static solve, an update or a
//! combine, and pass the host engines' run as a closure that this module calls on a host handle.
//! Each operation's device side (uploads, mirrors, kernel launches) is in this file.

use super::Resources;
pub(crate) use crate::cuda::ChangeSet;
use crate::cuda::{CudaEngine, DeviceGraph};
use crate::error::Result;
use crate::graph::{Csr, Graph};
use crate::stats::UpdateStats;
use std::sync::Arc;

/// The device of a handle.
#[derive(Debug)]
pub(crate) enum Device {
    /// The host engines, on the handle's executor (its thread pool, or the calling thread).
    Host,
    /// The CUDA engine of one device and stream.
    Cuda(CudaEngine),
}

/// The tree arrays and the largest finite distance an engine run reads and writes.
pub(crate) type Tree<'t> = (&'t mut [i64], &'t mut [i32], &'t mut Option<i64>);

/// What a combine step's solve returns, on either device.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Combined {
    /// Edges of the combined graph.
    pub edges: usize,
    /// The combined search's Delta.
    pub delta: i64,
    /// Counters of the combined solve.
    pub search: UpdateStats,
    /// The vertices the kept combined graph changed in place (`None`: built afresh).
    pub in_place: Option<usize>,
    /// Whether the host's combined graph was brought to the trees (false when the device built
    /// its own: the host's is then stale).
    pub host_graph_kept: bool,
}

/// The device side of one update: the graph's mirror, brought up to date once for every result.
pub(crate) enum Prepared<'r> {
    /// Nothing to prepare on the host.
    Host,
    /// The CUDA engine and the graph's device mirror.
    Cuda(&'r CudaEngine, Arc<DeviceGraph>),
}

impl Device {
    /// The vertices a host SSSP workspace is sized for: the CUDA engine keeps its scratch on the
    /// device, so its host workspace stays empty.
    pub(crate) fn host_scratch(&self, n: usize) -> usize {
        match self {
            Device::Host => n,
            Device::Cuda(_) => 0,
        }
    }

    /// Whether the host engines run the calls (the drop-in entry points check a tree without
    /// changes on the host only; the device checks it in the kernel).
    pub(crate) fn is_host(&self) -> bool {
        matches!(self, Device::Host)
    }

    /// The CUDA engine, for the counters of its mirrors.
    pub(crate) fn cuda(&self) -> Option<&CudaEngine> {
        match self {
            Device::Host => None,
            Device::Cuda(c) => Some(c),
        }
    }

    /// Static solve of objective `j` of the resident graph `g` from `source` with bucket width
    /// `delta` into `dist`/`parent`; returns the stats and the largest finite distance where the
    /// engine takes it (the host engines do).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn solve(
        &self,
        res: &Resources,
        g: &Graph,
        j: usize,
        source: usize,
        delta: i64,
        dist: &mut [i64],
        parent: &mut [i32],
        host: impl FnOnce(&mut [i64], &mut [i32]) -> Result<(UpdateStats, Option<i64>)>,
    ) -> Result<(UpdateStats, Option<i64>)> {
        match self {
            Device::Host => host(dist, parent),
            Device::Cuda(cuda) => {
                let dg = cuda.mirror(g, false)?;
                let max_weight = Some(g.max_weight(j) as i64);
                let stats = cuda.sssp_compute(res.workspaces(), &dg, j, source, Some(delta), max_weight, dist, parent)?;
                Ok((stats, None))
            }
        }
    }

    /// The drop-in static solve of a one-objective CSR (`graph`, made by `csr` on the device
    /// only) into caller-owned arrays.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn solve_arrays(
        &self,
        res: &Resources,
        csr: impl FnOnce() -> Result<Csr>,
        source: usize,
        delta: i64,
        max_weight: i64,
        dist: &mut [i64],
        parent: &mut [i32],
        host: impl FnOnce(&mut [i64], &mut [i32]) -> Result<UpdateStats>,
    ) -> Result<UpdateStats> {
        match self {
            Device::Host => host(dist, parent),
            Device::Cuda(cuda) => {
                let dg = cuda.upload_graph(&csr()?)?;
                cuda.sssp_compute(res.workspaces(), &dg, 0, source, Some(delta), Some(max_weight), dist, parent)
            }
        }
    }

    /// The drop-in update of a one-objective CSR (made by `csr` on the device only) from the
    /// changed-edge lists `changes`, on caller-owned arrays.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn update_arrays(
        &self,
        res: &Resources,
        csr: impl FnOnce() -> Result<Csr>,
        changes: ChangeSet<'_>,
        source: usize,
        delta: i64,
        max_weight: i64,
        dist: &mut [i64],
        parent: &mut [i32],
        host: impl FnOnce(&mut [i64], &mut [i32]) -> Result<UpdateStats>,
    ) -> Result<UpdateStats> {
        match self {
            Device::Host => host(dist, parent),
            Device::Cuda(cuda) => {
                let dg = cuda.upload_graph(&csr()?)?;
                cuda.sssp_update(res.workspaces(), &dg, 0, changes, source, delta, max_weight, dist, parent)
            }
        }
    }

    /// Prepares an update of `graph` (its batch applied): the device mirror, once for every
    /// result.
    pub(crate) fn prepare(&self, graph: &Graph) -> Result<Prepared<'_>> {
        Ok(match self {
            Device::Host => Prepared::Host,
            Device::Cuda(cuda) => Prepared::Cuda(cuda, cuda.mirror(graph, true)?),
        })
    }

    /// Builds the combined graph of the trees `parents` with the preference terms `terms` and
    /// `base` (`mosp::Preferences`) and solves it from `source` into `tree`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn combine(
        &self,
        res: &Resources,
        parents: &[&[i32]],
        source: usize,
        terms: &[i64],
        base: i64,
        tree: Tree<'_>,
        host: impl FnOnce(Tree<'_>) -> Result<Combined>,
    ) -> Result<Combined> {
        match self {
            Device::Host => host(tree),
            Device::Cuda(cuda) => {
                let (dist, parent, largest) = tree;
                // The device engine does not track the largest distance.
                *largest = None;
                let c = cuda.combined(res.workspaces(), parents, source, terms, base, dist, parent)?;
                Ok(Combined { edges: c.edges, delta: c.delta, search: c.search, in_place: None, host_graph_kept: false })
            }
        }
    }
}

impl Prepared<'_> {
    /// Update of objective `j` from the changed-edge lists `changes` (the host run also reads
    /// the inserted edges), on `tree`; returns the stats and, where the run recomputed, its
    /// pushes (the host engines report them).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn update(
        &self,
        res: &Resources,
        j: usize,
        changes: ChangeSet<'_>,
        source: usize,
        delta: i64,
        max_weight: i64,
        tree: Tree<'_>,
        host: impl FnOnce(Tree<'_>) -> Result<(UpdateStats, Option<i64>)>,
    ) -> Result<(UpdateStats, Option<i64>)> {
        match self {
            Prepared::Host => host(tree),
            Prepared::Cuda(cuda, dg) => {
                let (dist, parent, largest) = tree;
                // The device engine does not track the largest distance.
                *largest = None;
                Ok((cuda.sssp_update(res.workspaces(), dg, j, changes, source, delta, max_weight, dist, parent)?, None))
            }
        }
    }
}
