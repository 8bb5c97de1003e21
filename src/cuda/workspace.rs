//! Device scratch memory of the persistent kernel: 48 bytes per vertex (reference §6.3).
//!
//! `packed` u64; `stamp`, `inFar`, `flag`, `ancestor` i32; six i32 lists (near, next, far, far2,
//! candidates, frontier); the control block. Allocated with `cuMemAllocAsync` on the engine's
//! stream (cudarc uses the stream-ordered allocator when the device supports it) and grown, never
//! shrunk. Staging buffers for the host arrays of one run (distances, parents, changed edges) live
//! here too, so a steady-state update allocates nothing.

use super::context::{driver_error, guarded};
use crate::error::Result;
use crate::pool::PooledWorkspace;
use cudarc::driver::{CudaSlice, CudaStream, DeviceRepr, ValidAsZeroBits};
use std::sync::Arc;

/// A device array that grows on demand (contents are not preserved when it grows).
pub struct DeviceBuffer<T> {
    slice: Option<CudaSlice<T>>,
}

impl<T> Default for DeviceBuffer<T> {
    fn default() -> Self {
        DeviceBuffer { slice: None }
    }
}

impl<T: DeviceRepr + ValidAsZeroBits> DeviceBuffer<T> {
    /// Makes room for `len` elements (at least one, so that a pointer always exists); true when it
    /// allocated.
    pub fn ensure(&mut self, stream: &Arc<CudaStream>, len: usize) -> Result<bool> {
        let len = len.max(1);
        if self.slice.as_ref().is_some_and(|s| s.len() >= len) {
            return Ok(false);
        }
        self.slice = None; // free (stream-ordered) before allocating the larger one
        let slice = guarded("device allocation", || {
            // SAFETY: the contents are uninitialised; every user writes before reading, or zeroes
            // the buffer explicitly (`zero`).
            unsafe { stream.alloc::<T>(len) }.map_err(|e| driver_error("device allocation", e))
        })?;
        self.slice = Some(slice);
        Ok(true)
    }

    /// The raw device address (0 before the first `ensure`).
    pub fn ptr(&self) -> u64 {
        self.slice.as_ref().map_or(0, |s| {
            use cudarc::driver::DevicePtr;
            // Event tracking is disabled on dyng's contexts, so the guard records nothing.
            let (ptr, _guard) = s.device_ptr(s.stream());
            ptr
        })
    }

    /// Bytes allocated (0 before the first `ensure`).
    pub fn bytes(&self) -> usize {
        self.slice.as_ref().map_or(0, |s| s.num_bytes())
    }

    /// Zeroes the whole buffer on `stream`.
    pub fn zero(&mut self, stream: &Arc<CudaStream>) -> Result<()> {
        if let Some(s) = self.slice.as_mut() {
            guarded("device memset", || {
                stream.memset_zeros(s).map_err(|e| driver_error("device memset", e))
            })?;
        }
        Ok(())
    }

    /// Copies `host` to the start of the buffer (growing it if needed).
    pub fn upload(&mut self, stream: &Arc<CudaStream>, host: &[T]) -> Result<bool> {
        let grew = self.ensure(stream, host.len())?;
        if !host.is_empty() {
            let dst = self.slice.as_mut().expect("ensured above");
            guarded("host to device copy", || {
                let mut view = dst.slice_mut(..host.len());
                stream.memcpy_htod(host, &mut view).map_err(|e| driver_error("host to device copy", e))
            })?;
        }
        Ok(grew)
    }

    /// Copies `host` to elements `at..at + host.len()` of a buffer that already holds them.
    pub fn upload_at(&mut self, stream: &Arc<CudaStream>, at: usize, host: &[T]) -> Result<()> {
        if host.is_empty() {
            return Ok(());
        }
        let dst = self.slice.as_mut().filter(|s| s.len() >= at + host.len()).ok_or_else(|| {
            crate::error::Error::Internal("upload past the end of a device buffer".into())
        })?;
        guarded("host to device copy", || {
            let mut view = dst.slice_mut(at..at + host.len());
            stream.memcpy_htod(host, &mut view).map_err(|e| driver_error("host to device copy", e))
        })
    }

    /// Queues a copy of the first `host.len()` elements into `host`; the caller synchronises the
    /// stream before reading `host`.
    pub fn download(&self, stream: &Arc<CudaStream>, host: &mut [T]) -> Result<()> {
        if host.is_empty() {
            return Ok(());
        }
        let src = self.slice.as_ref().ok_or_else(|| {
            crate::error::Error::Internal("download from an unallocated device buffer".into())
        })?;
        guarded("device to host copy", || {
            let view = src.slice(..host.len());
            stream.memcpy_dtoh(&view, host).map_err(|e| driver_error("device to host copy", e))
        })
    }
}

/// The persistent kernel's scratch memory for up to `capacity` vertices.
#[derive(Default)]
pub struct DeviceWorkspace {
    pub(crate) capacity: usize,
    /// The host copy of the stamp generation counter (max of host and device after each run).
    pub(crate) generation: i32,
    pub(crate) packed: DeviceBuffer<u64>,
    pub(crate) stamp: DeviceBuffer<i32>,
    pub(crate) in_far: DeviceBuffer<i32>,
    pub(crate) flag: DeviceBuffer<i32>,
    pub(crate) ancestor: DeviceBuffer<i32>,
    pub(crate) lists: [DeviceBuffer<i32>; 6],
    pub(crate) control: DeviceBuffer<u8>,
    // Staging for the host arrays of one run.
    pub(crate) dist: DeviceBuffer<i64>,
    pub(crate) parent: DeviceBuffer<i32>,
    pub(crate) changed_from: DeviceBuffer<i32>,
    pub(crate) changed_to: DeviceBuffer<i32>,
    pub(crate) heads: DeviceBuffer<i32>,
}

// SAFETY: the workspace owns device allocations and handles only; they may be used from any
// thread as long as uses are ordered, which the pool (one lease at a time) and the fences do.
unsafe impl Send for DeviceWorkspace {}

/// Bytes per vertex of the search arrays (u64 word + 4 i32 arrays + 6 i32 lists).
#[cfg(test)]
const BYTES_PER_VERTEX: usize = 8 + 4 * 4 + 6 * 4;

impl DeviceWorkspace {
    /// Grows to `n` vertices (a no-op once large enough); zeroes stamps, far flags and invalidation
    /// flags when it allocates. Returns true when it allocated.
    pub fn reserve(&mut self, stream: &Arc<CudaStream>, n: usize, control_bytes: usize) -> Result<bool> {
        let mut grew = self.control.ensure(stream, control_bytes)?;
        if n <= self.capacity && self.capacity > 0 {
            return Ok(grew);
        }
        self.packed.ensure(stream, n)?;
        for b in [&mut self.stamp, &mut self.in_far, &mut self.flag, &mut self.ancestor] {
            b.ensure(stream, n)?;
        }
        for l in &mut self.lists {
            l.ensure(stream, n)?;
        }
        self.stamp.zero(stream)?;
        self.in_far.zero(stream)?;
        self.flag.zero(stream)?;
        self.capacity = n;
        self.generation = 0;
        grew = true;
        Ok(grew)
    }
}

impl PooledWorkspace for DeviceWorkspace {
    fn bytes(&self) -> usize {
        self.packed.bytes()
            + self.stamp.bytes()
            + self.in_far.bytes()
            + self.flag.bytes()
            + self.ancestor.bytes()
            + self.lists.iter().map(DeviceBuffer::bytes).sum::<usize>()
            + self.control.bytes()
            + self.dist.bytes()
            + self.parent.bytes()
            + self.changed_from.bytes()
            + self.changed_to.bytes()
            + self.heads.bytes()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn forty_eight_bytes_per_vertex() {
        assert_eq!(super::BYTES_PER_VERTEX, 48);
    }
}
