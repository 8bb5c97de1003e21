//! Graphs with K objectives, change batches and their application.
//!
//! A [`Graph`] is a [`Csr`] plus an identity (to refuse results of other graphs), a version that
//! every applied batch increments (to refuse results of older states), and the reverse graph,
//! built on first use for each state.

pub mod apply;
pub mod batch;
pub mod csr;
pub mod dijkstra;
pub mod in_edges;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

pub use apply::{apply_batch, apply_batch_into, Applied, GraphBuffers};
pub use batch::{Batch, BatchView};
pub use csr::{Csr, WeightLayout, MAX_OBJECTIVES};
pub use in_edges::InEdges;

static NEXT_GRAPH_ID: AtomicU64 = AtomicU64::new(1);

/// Empties `v` and makes room for `len` entries in the memory it has, if it has enough; returns
/// true when it had to allocate. It then takes 1/32 more than `len`, so that a graph growing by a
/// few edges a batch does not reallocate every batch (nor double, as `reserve` would: the spare
/// arrays of a stream of batches held twice their size).
pub(crate) fn reserve_for<T>(v: &mut Vec<T>, len: usize) -> bool {
    v.clear();
    let grows = v.capacity() < len;
    if grows {
        v.reserve_exact(len + len / 32);
    }
    grows
}

/// Makes `v` `len` entries long for a caller that overwrites every one: what it held is kept
/// where it still fits (zeroing recycled arrays would be one more pass over them), any new entries
/// are zero; returns true when it had to allocate (as [`reserve_for`]).
// Inline: as a call of its own (which it became in some builds) the reverse graph's build ran 5 %
// more instructions (callgrind, update_vs_recompute on usroads).
#[inline]
pub(crate) fn resize_for_overwrite<T: Copy + Default>(v: &mut Vec<T>, len: usize) -> bool {
    let grows = v.capacity() < len;
    if grows {
        reserve_for(v, len);
    }
    v.resize(len, T::default());
    grows
}

/// A directed graph with K weight columns, maintained under batches of changes.
#[derive(Debug)]
pub struct Graph {
    csr: Csr,
    in_edges: OnceLock<InEdges>,
    id: u64,
    version: u64,
}

impl Clone for Graph {
    /// A clone is a new graph (new identity): results of the original are stale for it.
    fn clone(&self) -> Self {
        Graph::new(self.csr.clone())
    }
}

impl Graph {
    /// Wraps a validated CSR.
    pub fn new(csr: Csr) -> Self {
        Graph {
            csr,
            in_edges: OnceLock::new(),
            id: NEXT_GRAPH_ID.fetch_add(1, Ordering::Relaxed),
            version: 0,
        }
    }

    pub fn csr(&self) -> &Csr {
        &self.csr
    }

    pub fn n(&self) -> usize {
        self.csr.n()
    }

    pub fn m(&self) -> usize {
        self.csr.m()
    }

    pub fn k(&self) -> usize {
        self.csr.k()
    }

    /// Unique identity of this graph object.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Number of batches applied so far.
    pub fn version(&self) -> u64 {
        self.version
    }

    /// The reverse graph of the current state (built on first use).
    pub fn in_edges(&self) -> &InEdges {
        self.in_edges.get_or_init(|| InEdges::build(&self.csr))
    }

    /// Whether the reverse graph of the current state has been built.
    #[cfg(test)]
    pub(crate) fn has_in_edges(&self) -> bool {
        self.in_edges.get().is_some()
    }

    /// The reverse graph of the current state, if it has been built.
    pub(crate) fn built_in_edges(&self) -> Option<&InEdges> {
        self.in_edges.get()
    }

    /// Replaces the state by an updated CSR (same n and K) and bumps the version; returns the
    /// replaced state's arrays.
    pub(crate) fn commit(&mut self, csr: Csr) -> GraphBuffers {
        debug_assert_eq!(csr.n(), self.csr.n());
        let in_edges = self.in_edges.take();
        self.version += 1;
        GraphBuffers::from_state(std::mem::replace(&mut self.csr, csr), in_edges)
    }

    /// Replaces the state by an updated CSR whose reverse graph is already built; returns the
    /// replaced state's arrays.
    pub(crate) fn commit_with_in_edges(&mut self, csr: Csr, in_edges: InEdges) -> GraphBuffers {
        let replaced = self.commit(csr);
        let _ = self.in_edges.set(in_edges);
        replaced
    }

    /// Applies a batch without updating any result (results of the old state become stale).
    pub fn apply(&mut self, batch: &BatchView<'_>) -> crate::Result<Vec<u64>> {
        let applied = apply_batch(&self.csr, batch)?;
        self.commit(applied.csr);
        Ok(applied.increase_masks)
    }
}
