//! The host side of the CUDA engine: modules, launches, and the SSSP/combined-graph entry points.
//!
//! Each run fills the kernel parameters, zeroes the control block, launches the persistent kernel
//! once as a cooperative grid (`blocks per SM` from the occupancy API x SMs, 256 threads), copies
//! the control block back and maps its flags to errors. Distances and parents travel as host
//! arrays (copied in and out around the launch); the graph stays on the device, a resident graph's
//! as a mirror brought up to date by each update (`mirror.rs`). Packing follows
//! the CUDA rule (reference §6.4): packed iff (n-1)W fits next to the parent field, candidates
//! above (n-1)W are dropped; the outputs equal the host engines' bit for bit.

use super::context::{driver_error, guarded, Device};
use super::device_graph::{DeviceGraph, RowsPtr};
use super::fence::{EventFence, Fenced};
use super::nvrtc::{self, KernelSource, Output};
use super::workspace::{DeviceBuffer, DeviceWorkspace};
use crate::error::{Error, Result};
use crate::graph::Csr;
use crate::pool::WorkspacePool;
use crate::pool::PooledWorkspace;
use crate::sssp::engine::{check_changes, check_parents, check_run_args as check_args};
use crate::sssp::packing::{max_distance, parent_bits, weight_and_hops};
use crate::sssp::{check_objective, default_delta, UpdateStats};
use cudarc::driver::{CudaFunction, DeviceRepr, LaunchConfig, PushKernelArg};

/// Threads per block of every kernel (a multiple of the warp size; the reductions rely on it).
pub const BLOCK_SIZE: u32 = 256;

/// Mirror of `struct Control` in kernels/sosp.cu.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct Control {
    /// Entries of `candidates`: the invalidated vertices, then the insertion heads.
    pub list_count: i32,
    /// Entries of `frontier`.
    pub frontier_count: i32,
    /// Entries of the current near list.
    pub near_count: i32,
    /// Entries of the next near list.
    pub next_count: i32,
    /// Entries of the far pile.
    pub far_count: i32,
    /// Entries of the far pile being re-split into.
    pub far2_count: i32,
    /// Per pointer-jumping round, three rotating slots: nonzero while some vertex still jumps.
    pub active: [i32; 3],
    /// Nonzero when an input distance is negative or above the bound (the run stops).
    pub overflow: i32,
    /// Candidates that came from invalidation.
    pub invalidated: i32,
    /// Pointer-jumping rounds run.
    pub rounds: i32,
    /// Near-list rounds of the near-far search.
    pub iterations: i32,
    /// Far-pile re-splits of the near-far search.
    pub epochs: i32,
    /// The last stamp generation used (the next run starts above it).
    pub generation: i32,
    /// Nonzero when pointer jumping did not converge: the input tree has a parent cycle.
    pub not_converged: i32,
    /// Vertices whose distance or parent changed.
    pub affected: i32,
    /// Padding, always 0.
    pub reserved: i32,
    /// Blocks arrived at the current grid barrier.
    pub barrier_count: u32,
    /// Grid barriers completed.
    pub barrier_generation: u32,
    /// Vertices expanded by the near-far search.
    pub pushes: i64,
    /// The smallest packed word of the list being reduced (`PACKED_INF` when none).
    pub minimum: u64,
}

const _: () = assert!(std::mem::size_of::<Control>() == 96);

/// Mirror of `struct Params` in kernels/sosp.cu (pointers as raw device addresses).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct Params {
    /// Out-row bounds: row u is `[bounds[u * out_stride], bounds[u * out_stride + 1])`.
    pub out_bounds: u64,
    /// Head of every out-edge slot.
    pub out_col: u64,
    /// The objective's weight of every out-edge slot.
    pub out_w: u64,
    /// In-row bounds, as `out_bounds`.
    pub in_bounds: u64,
    /// Tail of every in-edge slot.
    pub in_tails: u64,
    /// The objective's weight of every in-edge slot.
    pub in_w: u64,
    /// Tails of the changed edges (`ChangeSet::from`).
    pub changed_from: u64,
    /// Heads of the changed edges (`ChangeSet::to`).
    pub changed_to: u64,
    /// Heads of the insertions (`ChangeSet::heads`).
    pub insert_heads: u64,
    /// Distances, n i64: the old tree in, the new tree out.
    pub dist: u64,
    /// Parents, n i32: the old tree in, the new tree out.
    pub parent: u64,
    /// Packed (distance, parent) words, n u64.
    pub word: u64,
    /// Per-vertex generation stamps that keep the lists duplicate-free, n i32.
    pub stamp: u64,
    /// Per-vertex flag: on the far pile, n i32.
    pub in_far: u64,
    /// Per-vertex flag: below a changed tree edge, n i32.
    pub flag: u64,
    /// Pointer-jumping ancestors (old parents in distance-only mode), n i32.
    pub ancestor: u64,
    /// Near list, n i32.
    pub list_a: u64,
    /// Next near list, n i32.
    pub list_b: u64,
    /// Far pile, n i32.
    pub far_a: u64,
    /// Far pile re-split into, n i32.
    pub far_b: u64,
    /// Vertices whose best in-edge is pulled, n i32.
    pub candidates: u64,
    /// Vertices the near-far search starts from, n i32.
    pub frontier: u64,
    /// The `Control` block.
    pub control: u64,
    /// `(n - 1) * max_weight`: no tree distance is larger (the CUDA packing rule).
    pub max_distance: u64,
    /// Bucket width of the near-far search, at least 1.
    pub delta: u64,
    /// Vertices.
    pub n: i32,
    /// The source vertex, in `[0, n)`.
    pub source: i32,
    /// Entries of `changed_from` / `changed_to`.
    pub num_changed: i32,
    /// Entries of `insert_heads`.
    pub num_heads: i32,
    /// Parent field width; 0 = distance-only mode.
    pub bits: i32,
    /// 1 for a static solve (the old tree is ignored), 0 for an update.
    pub from_scratch: i32,
    /// Pointer-jumping rounds before the tree is declared cyclic (`max_rounds`).
    pub max_rounds: i32,
    /// The stamp generation the run starts from (above every stamp the workspace holds).
    pub first_generation: i32,
    /// 1: `out_bounds` is a row pointer of n + 1 entries; 2: (start, end) pairs.
    pub out_stride: i32,
    /// As `out_stride`, for `in_bounds`.
    pub in_stride: i32,
}

const _: () = assert!(std::mem::size_of::<Params>() == 25 * 8 + 10 * 4);

// SAFETY: plain-old-data with the C layout of the kernel's struct (asserted sizes, no pointers
// the host dereferences); passing it by value as a kernel argument copies the bytes.
unsafe impl DeviceRepr for Params {}

/// The packing of the CUDA program (reference §0.3 item 2, §6.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CudaPacking {
    /// Parent field width; 0 = distance-only mode.
    pub bits: u32,
    /// (n - 1) * W: the largest possible tree distance; larger candidates are dropped.
    pub bound: u64,
}

impl CudaPacking {
    /// The packing for `n` vertices and weights up to `max_weight`; [`Error::Capacity`] when
    /// `(n - 1) * max_weight` does not fit in 62 bits.
    pub fn choose(n: usize, max_weight: i64) -> Result<Self> {
        let (w, hops) = weight_and_hops(n, max_weight)?;
        let bound = w * hops;
        let bits = parent_bits(n);
        // The CUDA rule: packed iff the largest tree distance fits (oversize candidates dropped).
        let bits = if bound <= max_distance(bits) { bits } else { 0 };
        Ok(CudaPacking { bits, bound })
    }
}

/// Pointer-jumping rounds: ceil(log2 n) + 2 (one more than the original's + 1, so that the round
/// that observes convergence always fits even for a path of n vertices).
pub fn max_rounds(n: usize) -> i32 {
    let mut r = 0;
    while (1usize << r) < n.max(1) {
        r += 1;
    }
    r + 2
}

/// Loaded kernels of one context.
pub struct Kernels {
    sosp: CudaFunction,
    in_degree: CudaFunction,
    scan: CudaFunction,
    fill_reverse: CudaFunction,
    count_edges: CudaFunction,
    fill_edges: CudaFunction,
    scatter_rows: CudaFunction,
    /// Cooperative grid size of the persistent kernel.
    grid_blocks: u32,
}

fn load(device: &Device, kernel: &KernelSource) -> Result<Vec<CudaFunction>> {
    let image = nvrtc::compile_cached(kernel, device.arch(), Output::Cubin)?;
    guarded("module load", || {
        let module = device
            .context()
            .load_module(cudarc::nvrtc::Ptx::from_binary(image.image.clone()))
            .map_err(|e| driver_error(&format!("loading {}", kernel.name), e))?;
        kernel
            .functions
            .iter()
            .map(|f| module.load_function(f).map_err(|e| driver_error(&format!("kernel {f}"), e)))
            .collect()
    })
}

fn grid_for(count: usize) -> u32 {
    (count.div_ceil(BLOCK_SIZE as usize)).clamp(1, 65_535 * 16) as u32
}

impl Kernels {
    fn new(device: &Device) -> Result<Self> {
        let mut sosp = load(device, &nvrtc::SOSP)?;
        let mut graph = load(device, &nvrtc::GRAPH)?;
        let mut combine = load(device, &nvrtc::COMBINE)?;
        let sosp = sosp.remove(0);
        let per_sm = guarded("occupancy", || {
            sosp.occupancy_max_active_blocks_per_multiprocessor(BLOCK_SIZE, 0, None)
                .map_err(|e| driver_error("occupancy query", e))
        })?;
        let grid_blocks = per_sm * device.multiprocessors().max(0) as u32;
        if grid_blocks == 0 {
            return Err(Error::NotSupported(
                "dyng: the persistent kernel cannot be resident on this device (occupancy 0)".into(),
            ));
        }
        // graph.cu order: split, in-degree, scan, fill reverse, scatter rows; combine.cu: count,
        // fill.
        let scatter_rows = graph.remove(4);
        let fill_reverse = graph.remove(3);
        let scan = graph.remove(2);
        let in_degree = graph.remove(1);
        let fill_edges = combine.remove(1);
        let count_edges = combine.remove(0);
        Ok(Kernels {
            sosp,
            in_degree,
            scan,
            fill_reverse,
            count_edges,
            fill_edges,
            scatter_rows,
            grid_blocks,
        })
    }

    fn cfg(grid: u32, block: u32) -> LaunchConfig {
        LaunchConfig {
            grid_dim: (grid, 1, 1),
            block_dim: (block, 1, 1),
            shared_mem_bytes: 0,
        }
    }

    pub(crate) fn in_degree(&self, device: &Device, col: u64, cursor: u64, m: usize) -> Result<()> {
        let m_i = m as i32;
        guarded("inDegreeKernel", || {
            let mut b = device.stream().launch_builder(&self.in_degree);
            b.arg(&col).arg(&cursor).arg(&m_i);
            // SAFETY: argument types match `inDegreeKernel(const int*, int*, int)`; both buffers
            // hold at least m (col) and n + 1 (cursor) elements and heads are < n.
            unsafe { b.launch(Self::cfg(grid_for(m), BLOCK_SIZE)) }.map_err(|e| driver_error("inDegreeKernel", e))?;
            Ok(())
        })
    }

    pub(crate) fn exclusive_scan(&self, device: &Device, input: u64, output: u64, count: usize) -> Result<()> {
        let c = count as i32;
        guarded("exclusiveScanKernel", || {
            let mut b = device.stream().launch_builder(&self.scan);
            b.arg(&input).arg(&output).arg(&c);
            // SAFETY: matches `exclusiveScanKernel(const int*, int*, int)`; both buffers hold
            // `count` elements (in-place use is supported by the kernel). One block of 1024.
            unsafe { b.launch(Self::cfg(1, 1024)) }.map_err(|e| driver_error("exclusiveScanKernel", e))?;
            Ok(())
        })
    }

    pub(crate) fn copy_i32(&self, device: &Device, src: u64, dst: u64, count: usize) -> Result<()> {
        guarded("device copy", || {
            // SAFETY: both addresses are device allocations of at least `count` i32 on this
            // context; the copy is ordered on the engine's stream.
            let r = unsafe {
                cudarc::driver::sys::cuMemcpyDtoDAsync_v2(dst, src, count * 4, device.stream().cu_stream())
            };
            r.result().map_err(|e| driver_error("device to device copy", e))
        })
    }

    pub(crate) fn fill_reverse(&self, device: &Device, ptrs: [u64; 6], n: usize, m: usize, k: usize) -> Result<()> {
        let (n_i, m_i, k_i) = (n as i32, m as i32, k as i32);
        guarded("fillReverseKernel", || {
            let mut b = device.stream().launch_builder(&self.fill_reverse);
            for p in &ptrs {
                b.arg(p);
            }
            b.arg(&n_i).arg(&m_i).arg(&k_i);
            // SAFETY: matches `fillReverseKernel(rowPtr, colInd, outWeights, cursor, inColInd,
            // inWeights, n, m, k)`; the reverse arrays hold m (x k) slots, one per edge.
            unsafe { b.launch(Self::cfg(grid_for(n), BLOCK_SIZE)) }.map_err(|e| driver_error("fillReverseKernel", e))?;
            Ok(())
        })
    }

    /// Scatters `r` staged rows of `slots` slots in all (layout: `graph/mirror.rs`) into a
    /// mirror's rows (pairs) with `k` columns of `column_len` slots.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn scatter_rows(&self, device: &Device, staged: u64, r: usize, slots: usize, k: usize, rows: [u64; 3], column_len: usize) -> Result<()> {
        let (r_i, s_i, k_i, len) = (r as i32, slots as i32, k as i32, column_len as i64);
        let [bounds, heads, weights] = rows;
        guarded("scatterRowsKernel", || {
            let mut b = device.stream().launch_builder(&self.scatter_rows);
            b.arg(&staged).arg(&r_i).arg(&s_i).arg(&k_i).arg(&bounds).arg(&heads).arg(&weights).arg(&len);
            // SAFETY: matches `scatterRowsKernel(const int*, int, int, int, int*, int*, int*,
            // i64)`; `staged` holds 4r + 1 + (k + 1) slots ints; every staged row id is below n
            // (bounds hold 2n) and every staged slot below the mirror's column_len (heads hold
            // column_len, weights k x column_len).
            unsafe { b.launch(Self::cfg(grid_for(slots.max(r)), BLOCK_SIZE)) }.map_err(|e| driver_error("scatterRowsKernel", e))?;
            Ok(())
        })
    }
}

/// A changed-edge list for one objective (same meaning as the host engine's).
#[derive(Debug, Clone, Copy, Default)]
pub struct ChangeSet<'a> {
    /// Tails of deleted or heavier edges, batch order.
    pub from: &'a [i32],
    /// Their heads.
    pub to: &'a [i32],
    /// Heads of every insertion.
    pub heads: &'a [i32],
}

/// The pooled device workspace type.
pub type PooledDeviceWorkspace = Fenced<DeviceWorkspace, EventFence>;

/// Scratch of the combined graph (n + 1 row pointers and cursors, n x K edges).
#[derive(Default)]
pub struct DeviceCombineWorkspace {
    row_ptr: DeviceBuffer<i32>,
    cursor: DeviceBuffer<i32>,
    col_ind: DeviceBuffer<i32>,
    weights: DeviceBuffer<i32>,
    parents: DeviceBuffer<i32>,
    terms: DeviceBuffer<i64>,
    sums: DeviceBuffer<u64>,
}

// SAFETY: device allocations only; uses are ordered by the pool and the fences.
unsafe impl Send for DeviceCombineWorkspace {}

impl PooledWorkspace for DeviceCombineWorkspace {
    fn bytes(&self) -> usize {
        self.row_ptr.bytes()
            + self.cursor.bytes()
            + self.col_ind.bytes()
            + self.weights.bytes()
            + self.parents.bytes()
            + self.terms.bytes()
            + self.sums.bytes()
    }
}

/// What [`CudaEngine::combined`] built and solved.
#[derive(Debug, Clone, Copy)]
pub struct CombinedSolve {
    /// Edges of the combined graph.
    pub edges: usize,
    /// The combined search's Delta (its own default).
    pub delta: i64,
    /// Counters of the static solve on the combined graph.
    pub search: UpdateStats,
}

/// The CUDA engine of one device and stream.
pub struct CudaEngine {
    device: Device,
    kernels: Kernels,
    /// The token under which graphs keep this engine's device mirrors (`mirror.rs`); shared by
    /// the engines of one context (`with_new_stream`), whose memory they all read.
    pub(crate) owner: std::sync::Arc<()>,
}

impl std::fmt::Debug for CudaEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CudaEngine")
            .field("device", &self.device)
            .field("grid_blocks", &self.kernels.grid_blocks)
            .finish()
    }
}


impl CudaEngine {
    /// Context, stream and kernels of device `ordinal`. [`Error::NotSupported`] names what is
    /// missing (driver, NVRTC, device, cooperative launch).
    pub fn new(ordinal: usize) -> Result<Self> {
        Self::from_device(Device::new(ordinal)?)
    }

    /// The engine of an opened device: compiles (or takes from the cache) and loads the kernels;
    /// [`Error::NotSupported`] when the persistent kernel cannot be resident on the device.
    pub fn from_device(device: Device) -> Result<Self> {
        let kernels = Kernels::new(&device)?;
        Ok(CudaEngine { device, kernels, owner: Default::default() })
    }

    /// The same context and kernels on a new stream (for concurrent runs).
    pub fn with_new_stream(&self) -> Result<Self> {
        Ok(CudaEngine {
            device: self.device.with_new_stream()?,
            kernels: Kernels { ..self.kernels_clone() },
            owner: self.owner.clone(),
        })
    }

    pub(crate) fn kernels(&self) -> &Kernels {
        &self.kernels
    }

    fn kernels_clone(&self) -> Kernels {
        let k = &self.kernels;
        Kernels {
            sosp: k.sosp.clone(),
            in_degree: k.in_degree.clone(),
            scan: k.scan.clone(),
            fill_reverse: k.fill_reverse.clone(),
            count_edges: k.count_edges.clone(),
            fill_edges: k.fill_edges.clone(),
            scatter_rows: k.scatter_rows.clone(),
            grid_blocks: k.grid_blocks,
        }
    }

    /// The device handle (context and stream) the engine runs on.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// Blocks of the cooperative grid.
    pub fn grid_blocks(&self) -> u32 {
        self.kernels.grid_blocks
    }

    /// Uploads a graph state.
    pub fn upload_graph(&self, g: &Csr) -> Result<DeviceGraph> {
        DeviceGraph::upload(&self.device, &self.kernels, g)
    }

    fn lease<'p>(&self, pool: &'p WorkspacePool) -> Result<crate::pool::Lease<'p, PooledDeviceWorkspace>> {
        // The fence is created eagerly so that a lease never has to fail half-way.
        let fence = EventFence::new(self.device.context())?;
        Ok(pool.lease(move || Fenced::new(DeviceWorkspace::default(), fence)))
    }

    /// Dynamic update of objective `objective`: `dist`/`parent` hold the old tree on entry and
    /// the canonical tree of `graph` on return. `max_weight` as for the host engine (at least
    /// the largest weight of the objective over the original graph and the insertions).
    #[allow(clippy::too_many_arguments)]
    pub fn sssp_update(
        &self,
        pool: &WorkspacePool,
        graph: &DeviceGraph,
        objective: usize,
        changes: ChangeSet<'_>,
        source: usize,
        delta: i64,
        max_weight: i64,
        dist: &mut [i64],
        parent: &mut [i32],
    ) -> Result<UpdateStats> {
        let n = graph.n;
        check_args(n, source, delta, dist.len(), parent.len())?;
        check_objective(objective, graph.k)?;
        check_changes(n, changes.from, changes.to, changes.heads)?;
        check_parents(n, parent)?;
        let packing = CudaPacking::choose(n, max_weight)?;
        let (out, inn) = (graph.out.view(objective), graph.in_rows()?.view(objective));
        self.run(pool, n, out, inn, Some(changes), source, delta, packing, dist, parent)
    }

    /// Static solve of objective `objective` from `source` into `dist`/`parent` (their content on
    /// entry only affects `UpdateStats::affected`). The packing is chosen from `max_weight`, the
    /// objective's largest weight, or where `None` from what the graph keeps: a CSR's largest
    /// weight, a mirror's bound above it (a static solve of a resident graph passes the exact one,
    /// as the host engines use).
    #[allow(clippy::too_many_arguments)]
    pub fn sssp_compute(
        &self,
        pool: &WorkspacePool,
        graph: &DeviceGraph,
        objective: usize,
        source: usize,
        delta: Option<i64>,
        max_weight: Option<i64>,
        dist: &mut [i64],
        parent: &mut [i32],
    ) -> Result<UpdateStats> {
        let n = graph.n;
        check_objective(objective, graph.k)?;
        let delta = delta.unwrap_or_else(|| default_delta(graph.m, n, graph.weight_sum[objective]));
        check_args(n, source, delta, dist.len(), parent.len())?;
        let packing = CudaPacking::choose(n, max_weight.unwrap_or(graph.max_weight[objective]))?;
        let out = graph.out.view(objective);
        self.run(pool, n, out, out, None, source, delta, packing, dist, parent)
    }

    /// One persistent-kernel launch on a leased workspace.
    #[allow(clippy::too_many_arguments)]
    fn run(
        &self,
        pool: &WorkspacePool,
        n: usize,
        out: RowsPtr,
        inn: RowsPtr,
        changes: Option<ChangeSet<'_>>,
        source: usize,
        delta: i64,
        packing: CudaPacking,
        dist: &mut [i64],
        parent: &mut [i32],
    ) -> Result<UpdateStats> {
        let stream = self.device.stream().clone();
        let mut lease = self.lease(pool)?;
        let (ws, _waited) = lease.begin(&stream)?;
        if ws.reserve(&stream, n, std::mem::size_of::<Control>())? {
            pool.note_growth();
        }
        if ws.generation > i32::MAX / 2 {
            ws.stamp.zero(&stream)?;
            ws.generation = 0;
        }
        ws.dist.upload(&stream, dist)?;
        ws.parent.upload(&stream, parent)?;
        let c = changes.unwrap_or_default();
        ws.changed_from.upload(&stream, c.from)?;
        ws.changed_to.upload(&stream, c.to)?;
        ws.heads.upload(&stream, c.heads)?;
        let control = Control {
            minimum: u64::MAX,
            ..Default::default()
        };
        // SAFETY: Control is repr(C) plain-old-data; viewing it as bytes reads initialised memory.
        let control_bytes: &[u8] = unsafe {
            std::slice::from_raw_parts((&control as *const Control).cast::<u8>(), std::mem::size_of::<Control>())
        };
        ws.control.upload(&stream, control_bytes)?;
        ws.generation += 1;
        let params = Params {
            out_bounds: out.bounds,
            out_col: out.heads,
            out_w: out.weights,
            in_bounds: inn.bounds,
            in_tails: inn.heads,
            in_w: inn.weights,
            changed_from: ws.changed_from.ptr(),
            changed_to: ws.changed_to.ptr(),
            insert_heads: ws.heads.ptr(),
            dist: ws.dist.ptr(),
            parent: ws.parent.ptr(),
            word: ws.packed.ptr(),
            stamp: ws.stamp.ptr(),
            in_far: ws.in_far.ptr(),
            flag: ws.flag.ptr(),
            ancestor: ws.ancestor.ptr(),
            list_a: ws.lists[0].ptr(),
            list_b: ws.lists[1].ptr(),
            far_a: ws.lists[2].ptr(),
            far_b: ws.lists[3].ptr(),
            candidates: ws.lists[4].ptr(),
            frontier: ws.lists[5].ptr(),
            control: ws.control.ptr(),
            max_distance: packing.bound,
            delta: delta as u64,
            n: n as i32,
            source: source as i32,
            num_changed: c.from.len() as i32,
            num_heads: c.heads.len() as i32,
            bits: packing.bits as i32,
            from_scratch: changes.is_none() as i32,
            max_rounds: max_rounds(n),
            first_generation: ws.generation,
            out_stride: out.stride,
            in_stride: inn.stride,
        };
        let grid = self.kernels.grid_blocks;
        guarded("sospPersistentKernel", || {
            let mut b = stream.launch_builder(&self.kernels.sosp);
            b.arg(&params);
            // SAFETY: `Params` mirrors the kernel's parameter struct; every pointer is a live
            // device allocation of the sizes the kernel indexes (n-sized workspace arrays, the
            // graph's rows at their stride, the uploaded change lists). The grid does not exceed the occupancy
            // limit, as a cooperative launch requires.
            unsafe { b.launch_cooperative(Kernels::cfg(grid, BLOCK_SIZE)) }
                .map_err(|e| driver_error("cooperative launch of sospPersistentKernel", e))?;
            Ok(())
        })?;
        let mut back = [0u8; std::mem::size_of::<Control>()];
        ws.control.download(&stream, &mut back)?;
        ws.dist.download(&stream, dist)?;
        ws.parent.download(&stream, parent)?;
        self.device.synchronize()?;
        // SAFETY: `back` holds size_of::<Control>() bytes written by the kernel; every bit
        // pattern is a valid Control (integers only); read_unaligned copes with the byte array.
        let control: Control = unsafe { std::ptr::read_unaligned(back.as_ptr().cast()) };
        ws.generation = ws.generation.max(control.generation);
        if control.overflow != 0 {
            // The lease is dropped without give_back: flags may be dirty, the workspace is discarded.
            return Err(Error::invalid(
                "dyng: an input distance is negative or larger than (n - 1) * maxWeight; the initial tree does not belong to this graph.",
            ));
        }
        if control.not_converged != 0 {
            return Err(Error::invalid("dyng: the input SOSP tree has a parent cycle"));
        }
        let stats = UpdateStats {
            invalidated: control.invalidated as i64,
            affected: control.affected as i64,
            iterations: control.iterations as i64,
            epochs: control.epochs as i64,
            pushes: control.pushes,
            packed_parents: packing.bits > 0,
            fallback_used: false,
            elapsed_ns: 0, // set by the caller, which times the whole run
            ..Default::default()
        };
        lease.end(&stream)?;
        lease.give_back();
        Ok(stats)
    }

    /// Builds the combined graph of `parents` (K arrays of n) on the device and solves it from
    /// `source` into `dist`/`parent` (the MOSP tree, distances in units of 1/L). `terms` (one per
    /// tree) and `base` are a preference vector's (`Preferences::terms`, `Preferences::base`): an
    /// edge weighs `base` less the terms of the trees that contain it.
    #[allow(clippy::too_many_arguments)]
    pub fn combined(
        &self,
        pool: &WorkspacePool,
        parents: &[&[i32]],
        source: usize,
        terms: &[i64],
        base: i64,
        dist: &mut [i64],
        parent: &mut [i32],
    ) -> Result<CombinedSolve> {
        let n = dist.len();
        let k = parents.len();
        if terms.len() != k {
            return Err(Error::invalid(format!("dyng: {} preferences for {k} trees", terms.len())));
        }
        if let Some(t) = parents.iter().position(|p| p.len() != n) {
            return Err(Error::invalid(format!("dyng: tree {t} has {} parents, want n = {n}", parents[t].len())));
        }
        check_args(n, source, 1, dist.len(), parent.len())?;
        if n.checked_mul(k.max(1)).is_none_or(|e| e > i32::MAX as usize) {
            return Err(Error::Capacity(format!("dyng: n x K = {n} x {k} edges exceed 32-bit offsets")));
        }
        let stream = self.device.stream().clone();
        let flat: Vec<i32> = parents.iter().flat_map(|p| p.iter().copied()).collect();
        let lease_fence = EventFence::new(self.device.context())?;
        let mut lease = pool.lease(move || Fenced::new(DeviceCombineWorkspace::default(), lease_fence));
        let (cw, _) = lease.begin(&stream)?;
        let mut grew = cw.parents.upload(&stream, &flat)?;
        grew |= cw.terms.upload(&stream, terms)?;
        grew |= cw.row_ptr.ensure(&stream, n + 1)?;
        grew |= cw.cursor.ensure(&stream, n + 1)?;
        grew |= cw.col_ind.ensure(&stream, n * k)?;
        grew |= cw.weights.ensure(&stream, n * k)?;
        grew |= cw.sums.ensure(&stream, 2)?;
        if grew {
            pool.note_growth();
        }
        cw.cursor.zero(&stream)?;
        cw.sums.zero(&stream)?;
        let (n_i, k_i, s_i) = (n as i32, k as i32, source as i32);
        let (pp, tp, cur, sums) = (cw.parents.ptr(), cw.terms.ptr(), cw.cursor.ptr(), cw.sums.ptr());
        guarded("countEdgesKernel", || {
            let mut b = stream.launch_builder(&self.kernels.count_edges);
            b.arg(&pp).arg(&n_i).arg(&k_i).arg(&tp).arg(&base).arg(&s_i).arg(&cur).arg(&sums);
            // SAFETY: matches `countEdgesKernel(const int*, int, int, const i64*, i64, int, int*,
            // u64*)`; parents hold K x n entries, terms K, cursor n + 1, sums 2.
            unsafe { b.launch(Kernels::cfg(grid_for(n), BLOCK_SIZE)) }.map_err(|e| driver_error("countEdgesKernel", e))?;
            Ok(())
        })?;
        self.kernels.exclusive_scan(&self.device, cur, cw.row_ptr.ptr(), n + 1)?;
        self.kernels.copy_i32(&self.device, cw.row_ptr.ptr(), cur, n + 1)?;
        let (col, wts) = (cw.col_ind.ptr(), cw.weights.ptr());
        guarded("fillEdgesKernel", || {
            let mut b = stream.launch_builder(&self.kernels.fill_edges);
            b.arg(&pp).arg(&n_i).arg(&k_i).arg(&tp).arg(&base).arg(&s_i).arg(&cur).arg(&col).arg(&wts);
            // SAFETY: matches `fillEdgesKernel(...)`; colInd and weights hold n x K slots, at
            // least the number of edges counted.
            unsafe { b.launch(Kernels::cfg(grid_for(n), BLOCK_SIZE)) }.map_err(|e| driver_error("fillEdgesKernel", e))?;
            Ok(())
        })?;
        let mut host_sums = [0u64; 2];
        cw.sums.download(&stream, &mut host_sums)?;
        self.device.synchronize()?;
        let edges = host_sums[0] as usize;
        let delta = default_delta(edges, n, host_sums[1] as i64);
        let packing = CudaPacking::choose(n, base)?;
        let out = RowsPtr { bounds: cw.row_ptr.ptr(), stride: 1, heads: cw.col_ind.ptr(), weights: cw.weights.ptr() };
        let search = self.run(pool, n, out, out, None, source, delta, packing, dist, parent)?;
        lease.end(&stream)?;
        lease.give_back();
        Ok(CombinedSolve { edges, delta, search })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sssp::packing::Packing;

    #[test]
    fn cuda_packing_matches_host_except_at_the_boundary() {
        for (n, w) in [(1usize, 1i64), (1000, 100), (1_000_000, 100), (23_900_000, 100), (5, i32::MAX as i64)] {
            let host = Packing::choose(n, w).unwrap();
            let cuda = CudaPacking::choose(n, w).unwrap();
            assert_eq!(cuda.bound, host.bound);
            assert_eq!(cuda.bits, host.bits, "n = {n}, W = {w}");
        }
        // reference B.2: (n-1)W fits next to 17 parent bits but (n-1)W + W does not.
        let n = (1usize << 16) + 1;
        assert_eq!(Packing::choose(n, i32::MAX as i64).unwrap().bits, 0);
        assert_eq!(CudaPacking::choose(n, i32::MAX as i64).unwrap().bits, 17);
        assert!(CudaPacking::choose(1 << 31, i32::MAX as i64).is_err());
    }

    #[test]
    fn rounds_cover_the_deepest_path() {
        assert_eq!(max_rounds(1), 2);
        assert_eq!(max_rounds(2), 3);
        assert_eq!(max_rounds(1 << 20), 22);
        assert_eq!(max_rounds((1 << 20) + 1), 23);
    }
}
