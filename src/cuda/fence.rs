//! Fences between the streams that share a pooled device workspace (c-api §4).
//!
//! A device workspace may be leased by runs on different streams one after the other. Its fence
//! (a CUDA event) is recorded on the stream of each lease when the lease ends; the next lease
//! makes its stream wait on the fence unless it runs on the same stream, where stream order
//! already serialises the work (so the single-stream steady state costs one event record per
//! run). Release and destruction wait for the fence on the host before the memory is freed; a
//! lease that ends in an error is discarded by the pool and therefore also waits.
//!
//! The policy ([`FencedSlot`], [`Fenced`]) is generic over a [`Fence`] so that it is tested on the
//! CPU with a fake fence that records calls; [`EventFence`] is the CUDA implementation.

use super::context::{driver_error, guarded};
use crate::error::Result;
use crate::pool::PooledWorkspace;
use cudarc::driver::{CudaContext, CudaEvent, CudaStream};
use std::sync::Arc;

/// Identifies a stream for the same-stream test (the raw `CUstream` handle for CUDA).
pub type StreamId = u64;

/// The primitive operations of a fence.
pub trait Fence: Send + 'static {
    /// The stream type the fence is recorded on and waited from.
    type Stream: ?Sized;
    /// A stable identity of `stream`.
    fn stream_id(stream: &Self::Stream) -> StreamId;
    /// Records the fence after the work queued so far on `stream`.
    fn record(&mut self, stream: &Self::Stream) -> Result<()>;
    /// Makes future work on `stream` wait for the last recorded point (device-side wait).
    fn make_wait(&self, stream: &Self::Stream) -> Result<()>;
    /// Blocks the host until the last recorded point has completed.
    fn synchronize(&self) -> Result<()>;
}

/// The fence of one workspace and the stream it was last recorded on.
pub struct FencedSlot<F: Fence> {
    fence: F,
    recorded_on: Option<StreamId>,
}

impl<F: Fence> FencedSlot<F> {
    /// A slot around `fence`, never recorded yet (the first lease waits for nothing).
    pub fn new(fence: F) -> Self {
        FencedSlot {
            fence,
            recorded_on: None,
        }
    }

    /// Called when a lease begins on `stream`: waits on the fence if the last use was on another
    /// stream. Returns whether a wait was queued.
    pub fn wait_if_needed(&self, stream: &F::Stream) -> Result<bool> {
        match self.recorded_on {
            Some(last) if last != F::stream_id(stream) => {
                self.fence.make_wait(stream)?;
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    /// Called when a lease ends on `stream`: records the fence there.
    pub fn record(&mut self, stream: &F::Stream) -> Result<()> {
        self.fence.record(stream)?;
        self.recorded_on = Some(F::stream_id(stream));
        Ok(())
    }

    /// Blocks until the last use has finished (before freeing); a no-op if never recorded.
    pub fn synchronize(&self) -> Result<()> {
        if self.recorded_on.is_some() {
            self.fence.synchronize()?;
        }
        Ok(())
    }
}

/// A pooled workspace guarded by a fence. Use [`Fenced::begin`] at the start of a run and
/// [`Fenced::end`] when it succeeded, then give the lease back; dropping (pool release, pool
/// destruction, or a discarded lease after an error) waits for the fence before freeing.
pub struct Fenced<W: PooledWorkspace, F: Fence> {
    slot: FencedSlot<F>,
    inner: Option<W>,
}

impl<W: PooledWorkspace, F: Fence> Fenced<W, F> {
    /// Guards `inner` with `fence`.
    pub fn new(inner: W, fence: F) -> Self {
        Fenced {
            slot: FencedSlot::new(fence),
            inner: Some(inner),
        }
    }

    /// Starts a run on `stream`; returns the workspace and whether a cross-stream wait was queued.
    pub fn begin(&mut self, stream: &F::Stream) -> Result<(&mut W, bool)> {
        let waited = self.slot.wait_if_needed(stream)?;
        let inner = self
            .inner
            .as_mut()
            .expect("the workspace is present until the wrapper is dropped");
        Ok((inner, waited))
    }

    /// Ends a successful run on `stream`: records the fence there.
    pub fn end(&mut self, stream: &F::Stream) -> Result<()> {
        self.slot.record(stream)
    }
}

impl<W: PooledWorkspace, F: Fence> PooledWorkspace for Fenced<W, F> {
    fn bytes(&self) -> usize {
        self.inner.as_ref().map_or(0, W::bytes)
    }
}

impl<W: PooledWorkspace, F: Fence> Drop for Fenced<W, F> {
    fn drop(&mut self) {
        // The memory may still be in use by a stream other than the one that frees it: wait
        // first. A failed wait means the context is broken; freeing is then all that is left.
        let _ = self.slot.synchronize();
        drop(self.inner.take());
    }
}

/// The CUDA fence: one event, created without timing (cheaper to record).
pub struct EventFence {
    event: CudaEvent,
}

// SAFETY: a CUDA event handle may be recorded, waited on and synchronised from any thread of the
// process; cudarc's CudaEvent holds only the handle and an Arc of the (thread-safe) context.
unsafe impl Send for EventFence {}

impl EventFence {
    /// A timing-free event on `ctx`; [`crate::Error::Cuda`] when the driver refuses one.
    pub fn new(ctx: &Arc<CudaContext>) -> Result<Self> {
        use cudarc::driver::sys::CUevent_flags;
        guarded("event creation", || {
            let event = ctx
                .new_event(Some(CUevent_flags::CU_EVENT_DISABLE_TIMING))
                .map_err(|e| driver_error("event creation", e))?;
            Ok(EventFence { event })
        })
    }
}

impl Fence for EventFence {
    type Stream = CudaStream;

    fn stream_id(stream: &CudaStream) -> StreamId {
        stream.cu_stream() as usize as StreamId
    }

    fn record(&mut self, stream: &CudaStream) -> Result<()> {
        guarded("event record", || {
            self.event.record(stream).map_err(|e| driver_error("event record", e))
        })
    }

    fn make_wait(&self, stream: &CudaStream) -> Result<()> {
        guarded("stream wait", || {
            stream.wait(&self.event).map_err(|e| driver_error("stream wait on event", e))
        })
    }

    fn synchronize(&self) -> Result<()> {
        guarded("event synchronize", || {
            self.event.synchronize().map_err(|e| driver_error("event synchronize", e))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use crate::pool::WorkspacePool;
    use parking_lot::Mutex;

    #[derive(Debug, Clone, PartialEq, Eq)]
    enum Call {
        Record(StreamId),
        Wait(StreamId),
        Synchronize,
        Freed,
    }

    type Log = Arc<Mutex<Vec<Call>>>;

    struct FakeFence(Log);

    impl Fence for FakeFence {
        type Stream = StreamId;
        fn stream_id(stream: &StreamId) -> StreamId {
            *stream
        }
        fn record(&mut self, stream: &StreamId) -> Result<()> {
            self.0.lock().push(Call::Record(*stream));
            Ok(())
        }
        fn make_wait(&self, stream: &StreamId) -> Result<()> {
            self.0.lock().push(Call::Wait(*stream));
            Ok(())
        }
        fn synchronize(&self) -> Result<()> {
            self.0.lock().push(Call::Synchronize);
            Ok(())
        }
    }

    struct FakeMemory(Log);

    impl PooledWorkspace for FakeMemory {
        fn bytes(&self) -> usize {
            48
        }
    }

    impl Drop for FakeMemory {
        fn drop(&mut self) {
            self.0.lock().push(Call::Freed);
        }
    }

    type Ws = Fenced<FakeMemory, FakeFence>;

    fn make(log: &Log) -> impl FnOnce() -> Ws + '_ {
        move || Fenced::new(FakeMemory(log.clone()), FakeFence(log.clone()))
    }

    /// One successful run on `stream` through the pool; returns whether it waited.
    fn run(pool: &WorkspacePool, log: &Log, stream: StreamId) -> bool {
        let mut lease = pool.lease(make(log));
        let (_, waited) = lease.begin(&stream).unwrap();
        lease.end(&stream).unwrap();
        lease.give_back();
        waited
    }

    #[test]
    fn same_stream_does_not_wait() {
        let log = Log::default();
        let pool = WorkspacePool::new();
        assert!(!run(&pool, &log, 7), "a fresh workspace has nothing to wait for");
        assert!(!run(&pool, &log, 7));
        assert!(!run(&pool, &log, 7));
        assert_eq!(*log.lock(), vec![Call::Record(7); 3], "one record per run, no wait");
        assert_eq!(pool.counters().created, 1);
    }

    #[test]
    fn other_stream_waits() {
        let log = Log::default();
        let pool = WorkspacePool::new();
        assert!(!run(&pool, &log, 1));
        assert!(run(&pool, &log, 2), "stream 2 must wait for stream 1's last use");
        assert!(run(&pool, &log, 1));
        assert_eq!(
            *log.lock(),
            vec![
                Call::Record(1),
                Call::Wait(2),
                Call::Record(2),
                Call::Wait(1),
                Call::Record(1)
            ]
        );
    }

    #[test]
    fn release_waits_before_freeing() {
        let log = Log::default();
        let pool = WorkspacePool::new();
        run(&pool, &log, 3);
        log.lock().clear();
        pool.release();
        assert_eq!(*log.lock(), vec![Call::Synchronize, Call::Freed]);
    }

    #[test]
    fn pool_destruction_waits_before_freeing() {
        let log = Log::default();
        {
            let pool = WorkspacePool::new();
            run(&pool, &log, 3);
            log.lock().clear();
        }
        assert_eq!(*log.lock(), vec![Call::Synchronize, Call::Freed]);
    }

    #[test]
    fn error_discards_after_waiting() {
        let log = Log::default();
        let pool = WorkspacePool::new();
        run(&pool, &log, 1);
        log.lock().clear();
        let failed = || -> Result<()> {
            let mut lease = pool.lease(make(&log));
            let (_, waited) = lease.begin(&2)?;
            assert!(waited);
            Err(Error::Cuda("kernel failed".into())) // the lease drops without give_back
        };
        assert!(failed().is_err());
        assert_eq!(pool.counters().discarded, 1);
        assert_eq!(pool.idle_count(), 0, "a discarded workspace is not reused");
        assert_eq!(*log.lock(), vec![Call::Wait(2), Call::Synchronize, Call::Freed]);
        // The next lease creates a fresh workspace, which has nothing to wait for.
        assert!(!run(&pool, &log, 2));
        assert_eq!(pool.counters().created, 2);
    }

    #[test]
    fn never_used_workspace_frees_without_waiting() {
        let log = Log::default();
        drop(make(&log)());
        assert_eq!(*log.lock(), vec![Call::Freed]);
    }
}
