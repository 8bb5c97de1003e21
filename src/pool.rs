//! `WorkspacePool`: idle scratch workspaces keyed by their type, leased per engine run.
//!
//! Results never own scratch memory: every engine run leases a workspace of its type, grows it if
//! needed and gives it back, so the K objectives of one update share one workspace (one per
//! thread where a result's trees are repaired side by side) and a steady state allocates
//! nothing. The most recently returned workspace is reused first; a lease that is
//! dropped without `give_back` (an error or a panic unwound through it) discards its workspace,
//! since its flags may be dirty. Each idle list is behind its own short mutex section.

use parking_lot::Mutex;
use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

/// Scratch memory that can live in the pool.
pub trait PooledWorkspace: Any + Send {
    /// Bytes of memory this workspace holds.
    fn bytes(&self) -> usize;
}

/// Counters of the pool's decisions, for tests and reports.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PoolCounters {
    /// Workspaces created because no idle one of the type was available.
    pub created: u64,
    /// Leases served from the idle list.
    pub reused: u64,
    /// Leases that ended without `give_back` (error or panic) and dropped their workspace.
    pub discarded: u64,
    /// Times a leased workspace had to grow its arrays (reported by the workspace's user).
    pub grown: u64,
}

/// How to size an idle workspace of one type.
type BytesOf = fn(&(dyn Any + Send)) -> usize;

/// Idle scratch workspaces of every type, shared by the clones of one [`crate::Resources`]
/// handle; thread-safe.
#[derive(Default)]
pub struct WorkspacePool {
    idle: Mutex<HashMap<TypeId, Vec<Box<dyn Any + Send>>>>,
    bytes_of: Mutex<HashMap<TypeId, BytesOf>>,
    created: AtomicU64,
    reused: AtomicU64,
    discarded: AtomicU64,
    grown: AtomicU64,
}

/// A workspace on loan from the pool. Call [`Lease::give_back`] when the run succeeded; dropping
/// the lease otherwise discards the workspace.
pub struct Lease<'p, T: PooledWorkspace> {
    pool: &'p WorkspacePool,
    ws: Option<Box<T>>,
}

fn bytes_of<T: PooledWorkspace>(any: &(dyn Any + Send)) -> usize {
    any.downcast_ref::<T>().map_or(0, T::bytes)
}

impl WorkspacePool {
    /// An empty pool.
    pub fn new() -> Self {
        Self::default()
    }

    /// Leases a workspace of type `T`: the most recently returned idle one, or a new one from
    /// `create`.
    pub fn lease<T: PooledWorkspace>(&self, create: impl FnOnce() -> T) -> Lease<'_, T> {
        let reused = {
            let mut idle = self.idle.lock();
            idle.get_mut(&TypeId::of::<T>()).and_then(Vec::pop)
        };
        let ws = match reused.and_then(|b| b.downcast::<T>().ok()) {
            Some(ws) => {
                self.reused.fetch_add(1, Ordering::Relaxed);
                ws
            }
            None => {
                self.created.fetch_add(1, Ordering::Relaxed);
                self.bytes_of
                    .lock()
                    .entry(TypeId::of::<T>())
                    .or_insert(bytes_of::<T>);
                Box::new(create())
            }
        };
        Lease {
            pool: self,
            ws: Some(ws),
        }
    }

    /// Records that a leased workspace grew its arrays (an allocation in the run).
    pub fn note_growth(&self) {
        self.grown.fetch_add(1, Ordering::Relaxed);
    }

    /// Bytes held by idle workspaces.
    pub fn idle_bytes(&self) -> usize {
        let sizers = self.bytes_of.lock();
        let idle = self.idle.lock();
        idle.iter()
            .map(|(t, list)| {
                let f = sizers.get(t).copied();
                list.iter()
                    .map(|w| f.map_or(0, |f| f(w.as_ref())))
                    .sum::<usize>()
            })
            .sum()
    }

    /// Bytes held by idle workspaces of type `T`.
    pub fn idle_bytes_of<T: PooledWorkspace>(&self) -> usize {
        let idle = self.idle.lock();
        idle.get(&TypeId::of::<T>())
            .map_or(0, |list| list.iter().map(|w| bytes_of::<T>(w.as_ref())).sum())
    }

    /// Number of idle workspaces of every type.
    pub fn idle_count(&self) -> usize {
        self.idle.lock().values().map(Vec::len).sum()
    }

    /// Frees every idle workspace.
    pub fn release(&self) {
        let drained: Vec<_> = self.idle.lock().drain().collect();
        drop(drained); // freed outside the lock
    }

    /// The pool's counters since it was made.
    pub fn counters(&self) -> PoolCounters {
        PoolCounters {
            created: self.created.load(Ordering::Relaxed),
            reused: self.reused.load(Ordering::Relaxed),
            discarded: self.discarded.load(Ordering::Relaxed),
            grown: self.grown.load(Ordering::Relaxed),
        }
    }
}

impl<T: PooledWorkspace> Lease<'_, T> {
    /// Returns the workspace to the pool for reuse (after a successful run).
    pub fn give_back(mut self) {
        if let Some(ws) = self.ws.take() {
            let mut idle = self.pool.idle.lock();
            idle.entry(TypeId::of::<T>()).or_default().push(ws);
        }
    }
}

impl<T: PooledWorkspace> std::ops::Deref for Lease<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        self.ws.as_ref().expect("a lease holds its workspace until it ends")
    }
}

impl<T: PooledWorkspace> std::ops::DerefMut for Lease<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        self.ws.as_mut().expect("a lease holds its workspace until it ends")
    }
}

impl<T: PooledWorkspace> Drop for Lease<'_, T> {
    fn drop(&mut self) {
        if self.ws.take().is_some() {
            self.pool.discarded.fetch_add(1, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Scratch(Vec<u8>);
    impl PooledWorkspace for Scratch {
        fn bytes(&self) -> usize {
            self.0.len()
        }
    }

    #[test]
    fn reuse_discard_release() {
        let pool = WorkspacePool::new();
        let a = pool.lease(|| Scratch(vec![0; 100]));
        a.give_back();
        assert_eq!(pool.idle_bytes(), 100);
        let b = pool.lease(|| Scratch(vec![0; 7]));
        assert_eq!(b.0.len(), 100, "the idle workspace is reused");
        drop(b); // no give_back: discarded
        assert_eq!(pool.idle_count(), 0);
        let c = pool.lease(|| Scratch(vec![0; 7]));
        assert_eq!(c.0.len(), 7, "a fresh one after a discard");
        c.give_back();
        let c = pool.counters();
        assert_eq!((c.created, c.reused, c.discarded), (2, 1, 1));
        pool.release();
        assert_eq!(pool.idle_bytes(), 0);
    }

    #[test]
    fn a_panic_discards_the_leased_workspace() {
        let pool = WorkspacePool::new();
        pool.lease(|| Scratch(vec![0; 10])).give_back();
        let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _lease = pool.lease(|| Scratch(vec![0; 1]));
            panic!("engine failure");
        }));
        assert!(unwound.is_err());
        assert_eq!(pool.idle_count(), 0, "the dirty workspace is not returned");
        assert_eq!(pool.counters().discarded, 1);
    }

    #[test]
    fn concurrent_leases_are_distinct() {
        let pool = WorkspacePool::new();
        pool.lease(|| Scratch(vec![1])).give_back();
        let x = pool.lease(|| Scratch(vec![2]));
        let y = pool.lease(|| Scratch(vec![3]));
        assert_ne!(x.0[0], y.0[0]);
        assert_ne!(&*x as *const Scratch, &*y as *const Scratch);
        x.give_back();
        y.give_back();
        assert_eq!(pool.idle_count(), 2);
        // Most recently returned first.
        assert_eq!(pool.lease(|| Scratch(vec![9])).0[0], 3);
    }
}
