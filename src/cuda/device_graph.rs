//! A graph on the device: its out-rows and in-rows with objective-major weight columns
//! (reference §6.2), as the persistent kernel reads them.
//!
//! Two kinds exist. A resident graph's device mirror (`mirror.rs`) holds the host's rows as they
//! are, (start, end) pairs and slots with room to grow, both directions uploaded from the host and
//! kept up to date by each update. A caller's compact CSR (`CudaEngine::upload_graph`, the drop-in
//! entry point's one-off upload) holds a row pointer; its reverse CSR is built on the device
//! (in-degree count, exclusive scan, atomic fill), so the order of tails inside an in-row is not
//! deterministic; every consumer takes a minimum over packed words and does not depend on it.

use super::context::Device;
use super::engine::{CudaEngine, Kernels};
use super::workspace::DeviceBuffer;
use crate::error::{Error, Result};
use crate::graph::Csr;

/// One direction's rows on the device: row u is `bounds[stride * u]..bounds[stride * u + 1]` of
/// the heads and of each weight column, column j starting at element `j * column_len`.
#[derive(Default)]
pub(crate) struct DeviceRows {
    pub(crate) bounds: DeviceBuffer<i32>,
    /// 1: a row pointer of n + 1 entries; 2: (start, end) pairs.
    pub(crate) stride: usize,
    pub(crate) heads: DeviceBuffer<i32>,
    pub(crate) weights: DeviceBuffer<i32>,
    pub(crate) column_len: usize,
}

/// The device addresses of one objective's rows, as the kernel's parameters take them.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct RowsPtr {
    pub(crate) bounds: u64,
    pub(crate) stride: i32,
    pub(crate) heads: u64,
    pub(crate) weights: u64,
}

impl DeviceRows {
    /// Objective `j`'s view.
    pub(crate) fn view(&self, j: usize) -> RowsPtr {
        RowsPtr {
            bounds: self.bounds.ptr(),
            stride: self.stride as i32,
            heads: self.heads.ptr(),
            weights: self.weights.ptr() + (j * self.column_len * 4) as u64,
        }
    }

    fn bytes(&self) -> usize {
        self.bounds.bytes() + self.heads.bytes() + self.weights.bytes()
    }
}

/// One graph state on the device.
#[derive(Default)]
pub struct DeviceGraph {
    pub(crate) n: usize,
    pub(crate) m: usize,
    pub(crate) k: usize,
    pub(crate) out: DeviceRows,
    /// The in-rows (a mirror holds them once an update has needed them).
    pub(crate) inn: Option<DeviceRows>,
    /// Per objective: a bound above every weight (the largest weight of a CSR) and the weight sum
    /// (for the packing and the default Delta of a static solve).
    pub(crate) max_weight: Vec<i64>,
    pub(crate) weight_sum: Vec<i64>,
}

// SAFETY: device allocations only; uses are ordered on the engine's stream.
unsafe impl Send for DeviceGraph {}
// SAFETY: no interior mutability; kernels only read the graph, and a mirror changes it only
// through `&mut` (`Arc::get_mut`), when no run holds it.
unsafe impl Sync for DeviceGraph {}

/// Refuses what the kernels cannot index with their 32-bit vertex and slot numbers.
pub(crate) fn check_indexable(n: usize, slots: usize, k: usize) -> Result<()> {
    if 2 * n + 1 > i32::MAX as usize || slots.saturating_mul(k.max(1)) > i32::MAX as usize {
        return Err(Error::Capacity(format!(
            "dyng: the CUDA backend indexes with 32 bits: n = {n}, {slots} edge slots x K = {k} too large"
        )));
    }
    Ok(())
}

impl DeviceGraph {
    /// Number of vertices.
    pub fn n(&self) -> usize {
        self.n
    }
    /// Number of edges.
    pub fn m(&self) -> usize {
        self.m
    }
    /// Objectives stored.
    pub fn k(&self) -> usize {
        self.k
    }

    /// The in-rows, which a mirror made for a static solve does not hold.
    pub(crate) fn in_rows(&self) -> Result<&DeviceRows> {
        self.inn
            .as_ref()
            .ok_or_else(|| Error::Internal("the device graph holds no in-rows for an update".into()))
    }

    /// Uploads `g` (objective-major columns as stored) and builds the reverse CSR on the device.
    pub(crate) fn upload(device: &Device, kernels: &Kernels, g: &Csr) -> Result<Self> {
        let (n, m, k) = (g.n(), g.m(), g.k());
        check_indexable(n, m, k)?;
        let s = device.stream();
        let mut out = DeviceRows { stride: 1, column_len: m, ..Default::default() };
        out.bounds.upload(s, g.row_ptr())?;
        out.heads.upload(s, g.col_ind())?;
        out.weights.upload(s, g.weights())?;
        let mut inn = DeviceRows { stride: 1, column_len: m, ..Default::default() };
        // In-degrees into a zeroed cursor of n + 1 entries, scanned in place into the row pointer.
        inn.bounds.ensure(s, n + 1)?;
        inn.bounds.zero(s)?;
        inn.heads.ensure(s, m)?;
        inn.weights.ensure(s, m * k)?;
        kernels.in_degree(device, out.heads.ptr(), inn.bounds.ptr(), m)?;
        kernels.exclusive_scan(device, inn.bounds.ptr(), inn.bounds.ptr(), n + 1)?;
        let mut cursor = DeviceBuffer::<i32>::default();
        cursor.ensure(s, n + 1)?;
        kernels.copy_i32(device, inn.bounds.ptr(), cursor.ptr(), n + 1)?;
        kernels.fill_reverse(
            device,
            [out.bounds.ptr(), out.heads.ptr(), out.weights.ptr(), cursor.ptr(), inn.heads.ptr(), inn.weights.ptr()],
            n,
            m,
            k,
        )?;
        device.synchronize()?;
        Ok(DeviceGraph {
            n,
            m,
            k,
            out,
            inn: Some(inn),
            max_weight: (0..k).map(|j| g.max_weight(j) as i64).collect(),
            weight_sum: (0..k).map(|j| g.weight_sum(j)).collect(),
        })
    }

    /// The rows as the device holds them, row by row: (head, or tail for the in-rows, and the K
    /// weights) in slot order. For checks of a mirror against the host's rows; `reverse` takes the
    /// in-rows.
    #[allow(clippy::type_complexity)]
    pub fn copy_rows(&self, engine: &CudaEngine, reverse: bool) -> Result<Vec<Vec<(i32, Vec<i32>)>>> {
        let rows = if reverse { self.in_rows()? } else { &self.out };
        let (n, k, len, stride) = (self.n, self.k, rows.column_len, rows.stride);
        let stream = engine.device().stream();
        let mut bounds = vec![0i32; if stride == 1 { n + 1 } else { 2 * n }];
        let mut heads = vec![0i32; len];
        let mut weights = vec![0i32; k * len];
        rows.bounds.download(stream, &mut bounds)?;
        rows.heads.download(stream, &mut heads)?;
        rows.weights.download(stream, &mut weights)?;
        engine.device().synchronize()?;
        (0..n)
            .map(|u| {
                let (start, end) = (bounds[stride * u], bounds[stride * u + 1]);
                if start < 0 || start > end || end as usize > len {
                    return Err(Error::Internal(format!("dyng: device row {u} spans {start}..{end} of {len} slots")));
                }
                Ok((start as usize..end as usize).map(|e| (heads[e], (0..k).map(|j| weights[j * len + e]).collect())).collect())
            })
            .collect()
    }

    /// Bytes of device memory held.
    pub fn bytes(&self) -> usize {
        self.out.bytes() + self.inn.as_ref().map_or(0, DeviceRows::bytes)
    }
}
