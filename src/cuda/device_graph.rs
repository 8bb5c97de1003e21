//! A graph on the device: objective-major weight columns and the reverse CSR (reference §6.2).
//!
//! Uploaded once per graph state and shared by the K objective updates. The reverse CSR is built
//! on the device (in-degree count, exclusive scan, atomic fill), so the order of tails inside an
//! in-row is not deterministic; every consumer takes a minimum over packed words and does not
//! depend on it.

use super::context::Device;
use super::engine::Kernels;
use super::workspace::DeviceBuffer;
use crate::error::{Error, Result};
use crate::graph::Csr;

/// One graph state on the device.
pub struct DeviceGraph {
    pub(crate) n: usize,
    pub(crate) m: usize,
    pub(crate) k: usize,
    pub(crate) row_ptr: DeviceBuffer<i32>,
    pub(crate) col_ind: DeviceBuffer<i32>,
    /// Objective-major: weight(e, j) at `j * m + e`.
    pub(crate) out_weights: DeviceBuffer<i32>,
    pub(crate) in_row_ptr: DeviceBuffer<i32>,
    pub(crate) in_tails: DeviceBuffer<i32>,
    pub(crate) in_weights: DeviceBuffer<i32>,
    /// Per objective: the largest weight and the weight sum (for the packing and the default Delta).
    pub(crate) max_weight: Vec<i64>,
    pub(crate) weight_sum: Vec<i64>,
}

// SAFETY: device allocations only; uses are ordered on the engine's stream.
unsafe impl Send for DeviceGraph {}
// SAFETY: no interior mutability after construction; kernels only read the graph.
unsafe impl Sync for DeviceGraph {}

impl DeviceGraph {
    pub fn n(&self) -> usize {
        self.n
    }
    pub fn m(&self) -> usize {
        self.m
    }
    /// Objectives stored.
    pub fn k(&self) -> usize {
        self.k
    }

    /// Device address of objective `j`'s out-weight column.
    pub(crate) fn out_column(&self, j: usize) -> u64 {
        self.out_weights.ptr() + (j * self.m * 4) as u64
    }

    /// Device address of objective `j`'s in-weight column.
    pub(crate) fn in_column(&self, j: usize) -> u64 {
        self.in_weights.ptr() + (j * self.m * 4) as u64
    }

    /// Uploads `g` (objective-major columns as stored) and builds the reverse CSR on the device.
    pub(crate) fn upload(device: &Device, kernels: &Kernels, g: &Csr) -> Result<Self> {
        let (n, m, k) = (g.n(), g.m(), g.k());
        if n + 1 > i32::MAX as usize || m * k.max(1) > i32::MAX as usize {
            return Err(Error::Capacity(format!(
                "dyng: the CUDA backend indexes with 32 bits: n = {n}, m x K = {} too large",
                m * k
            )));
        }
        let s = device.stream();
        let mut dg = DeviceGraph {
            n,
            m,
            k,
            row_ptr: DeviceBuffer::default(),
            col_ind: DeviceBuffer::default(),
            out_weights: DeviceBuffer::default(),
            in_row_ptr: DeviceBuffer::default(),
            in_tails: DeviceBuffer::default(),
            in_weights: DeviceBuffer::default(),
            max_weight: (0..k).map(|j| g.max_weight(j) as i64).collect(),
            weight_sum: (0..k).map(|j| g.weight_sum(j)).collect(),
        };
        dg.row_ptr.upload(s, g.row_ptr())?;
        dg.col_ind.upload(s, g.col_ind())?;
        dg.out_weights.upload(s, g.weights())?;
        // In-degrees into a zeroed cursor of n + 1 entries, scanned in place into the row pointer.
        dg.in_row_ptr.ensure(s, n + 1)?;
        dg.in_row_ptr.zero(s)?;
        dg.in_tails.ensure(s, m)?;
        dg.in_weights.ensure(s, m * k)?;
        kernels.in_degree(device, dg.col_ind.ptr(), dg.in_row_ptr.ptr(), m)?;
        kernels.exclusive_scan(device, dg.in_row_ptr.ptr(), dg.in_row_ptr.ptr(), n + 1)?;
        let mut cursor = DeviceBuffer::<i32>::default();
        cursor.ensure(s, n + 1)?;
        kernels.copy_i32(device, dg.in_row_ptr.ptr(), cursor.ptr(), n + 1)?;
        kernels.fill_reverse(
            device,
            [dg.row_ptr.ptr(), dg.col_ind.ptr(), dg.out_weights.ptr(), cursor.ptr(), dg.in_tails.ptr(), dg.in_weights.ptr()],
            n,
            m,
            k,
        )?;
        device.synchronize()?;
        Ok(dg)
    }

    /// Bytes of device memory held.
    pub fn bytes(&self) -> usize {
        self.row_ptr.bytes()
            + self.col_ind.bytes()
            + self.out_weights.bytes()
            + self.in_row_ptr.bytes()
            + self.in_tails.bytes()
            + self.in_weights.bytes()
    }
}
