//! Worker isolation: graphs and results resident in a `dyng-worker` process, through the
//! library's C ABI, which holds the one implementation of worker-resident graphs and results
//! (the host mirror of the graph, the stale checks, the shared-memory views). Each handle type
//! here owns one C handle and frees it on drop; every call returns the C status as a [`CError`]
//! with the library's message.

use crate::errors::CError;
use dyng::ffi::*;
use dyng::{Batch, Csr, UpdateStats};
use std::ffi::CString;
use std::ptr::{null, null_mut};
use std::sync::Arc;

type CResult<T> = std::result::Result<T, CError>;

fn check(status: dyng_status_t) -> CResult<()> {
    if status == DYNG_OK {
        Ok(())
    } else {
        Err(CError::last(status))
    }
}

/// A worker-isolated resources handle (the worker is spawned on first use or by `warm_up`).
pub struct WorkerResources {
    ptr: *mut dyng_resources_t,
}

// SAFETY: resources handles are thread-safe (dyng.h: every call on them is "thread-safe").
unsafe impl Send for WorkerResources {}
unsafe impl Sync for WorkerResources {}

impl Drop for WorkerResources {
    fn drop(&mut self) {
        // SAFETY: our own handle, freed once; graphs and results keep the pools alive.
        unsafe { dyng_resources_free(self.ptr) }
    }
}

/// How to start the worker.
pub struct WorkerSpec {
    pub backend: u32,
    pub device: i32,
    pub worker_path: Option<CString>,
    pub start_timeout_ms: u32,
    pub call_timeout_ms: u32,
}

impl WorkerResources {
    pub fn new(spec: &WorkerSpec) -> CResult<Arc<Self>> {
        let mut opt = dyng_resources_options_default();
        opt.backend = spec.backend;
        opt.device = spec.device;
        opt.isolation = DYNG_ISOLATION_WORKER;
        opt.worker_path = spec.worker_path.as_ref().map_or(null(), |p| p.as_ptr());
        opt.worker_start_timeout_ms = spec.start_timeout_ms;
        opt.worker_call_timeout_ms = spec.call_timeout_ms;
        let mut ptr = null_mut();
        // SAFETY: a filled options struct (the path outlives the call) and a writable out pointer.
        check(unsafe { dyng_resources_create(&opt, &mut ptr) })?;
        Ok(Arc::new(WorkerResources { ptr }))
    }

    pub fn warm_up(&self) -> CResult<()> {
        // SAFETY: our live handle.
        check(unsafe { dyng_resources_warm_up(self.ptr) })
    }

    pub fn release_workspaces(&self) -> CResult<()> {
        // SAFETY: our live handle.
        check(unsafe { dyng_release_workspaces(self.ptr) })
    }

    pub fn workspace_bytes(&self) -> CResult<usize> {
        let mut out = 0usize;
        // SAFETY: our live handle and a writable out value.
        check(unsafe { dyng_workspace_bytes(self.ptr, &mut out) })?;
        Ok(out)
    }
}

/// A graph resident in the worker (with the library's host mirror).
pub struct WorkerGraph {
    res: Arc<WorkerResources>,
    ptr: *mut dyng_graph_t,
}

// SAFETY: the C ABI allows concurrent reads of a graph; `dyng_update` needs it alone, which the
// caller's lock (`graph::GraphCell`) ensures.
unsafe impl Send for WorkerGraph {}
unsafe impl Sync for WorkerGraph {}

impl Drop for WorkerGraph {
    fn drop(&mut self) {
        // SAFETY: our own handle, freed once, no call in flight (we are being dropped).
        unsafe { dyng_graph_free(self.ptr) }
    }
}

/// n, m, K and the version of a graph.
pub struct Info {
    pub n: usize,
    pub m: usize,
    pub k: usize,
    pub version: u64,
}

impl WorkerGraph {
    /// Loads `csr` (already validated in this process, so the messages are the in-process ones)
    /// into the worker of `res`.
    pub fn load(res: &Arc<WorkerResources>, csr: &Csr) -> CResult<Self> {
        let desc = dyng_csr_t {
            n: csr.n(),
            m: csr.m(),
            k: csr.k() as u32,
            row_ptr: csr.row_ptr().as_ptr(),
            col_ind: csr.col_ind().as_ptr(),
            weights: csr.weights().as_ptr(),
        };
        let mut ptr = null_mut();
        // SAFETY: the descriptor's arrays hold its counts for the duration of the call.
        check(unsafe { dyng_graph_from_csr(res.ptr, &desc, &mut ptr) })?;
        Ok(WorkerGraph { res: res.clone(), ptr })
    }

    pub fn resources(&self) -> &Arc<WorkerResources> {
        &self.res
    }

    pub fn info(&self) -> CResult<Info> {
        let mut i = dyng_graph_info_t { struct_size: std::mem::size_of::<dyng_graph_info_t>(), ..Default::default() };
        // SAFETY: our live handle and a sized output struct.
        check(unsafe { dyng_graph_info(self.ptr, &mut i) })?;
        Ok(Info { n: i.n, m: i.m, k: i.k as usize, version: i.version })
    }

    /// The current graph as (row_ptr, col_ind, objective-major weights).
    pub fn copy_csr(&self) -> CResult<(Vec<i32>, Vec<i32>, Vec<i32>)> {
        let i = self.info()?;
        let (mut rp, mut ci, mut w) = (vec![0i32; i.n + 1], vec![0i32; i.m], vec![0i32; i.m * i.k]);
        // SAFETY: each output holds the count `dyng_graph_info` gave.
        check(unsafe { dyng_graph_copy_csr(self.res.ptr, self.ptr, rp.as_mut_ptr(), ci.as_mut_ptr(), w.as_mut_ptr()) })?;
        Ok((rp, ci, w))
    }

    pub fn sssp_compute(&self, source: i32, objective: u32, delta: Option<i64>, fallback: u32) -> CResult<WorkerResult> {
        let mut opt = dyng_sssp_options_default();
        opt.delta = delta.unwrap_or(0);
        opt.fallback = fallback;
        let mut ptr = null_mut();
        // SAFETY: live handles, a filled options struct, a writable out pointer.
        check(unsafe { dyng_sssp_compute(self.res.ptr, self.ptr, source, objective, &opt, &mut ptr) })?;
        Ok(WorkerResult::new(&self.res, ptr))
    }

    pub fn mosp_compute(&self, source: i32, k: Option<u32>, prefs: &[u32], delta: Option<i64>, fallback: u32) -> CResult<WorkerResult> {
        let mut opt = dyng_mosp_options_default();
        opt.k = k.unwrap_or(0);
        if !prefs.is_empty() {
            opt.preferences = prefs.as_ptr();
            opt.num_preferences = prefs.len();
        }
        opt.delta = delta.unwrap_or(0);
        opt.fallback = fallback;
        let mut ptr = null_mut();
        // SAFETY: as above; `prefs` outlives the call.
        check(unsafe { dyng_mosp_compute(self.res.ptr, self.ptr, source, &opt, &mut ptr) })?;
        Ok(WorkerResult::new(&self.res, ptr))
    }

    /// Adopts a tree (the C ABI checks the array lengths against n first, here).
    pub fn sssp_from_arrays(&self, source: i32, objective: u32, dist: &[i64], parent: &[i32], canonicalize: bool) -> CResult<WorkerResult> {
        let n = self.info()?.n;
        if dist.len() != n || parent.len() != n {
            return Err(CError {
                status: DYNG_ERR_INVALID_ARGUMENT,
                message: format!(
                    "dyng: from_arrays: {} distances and {} parents given, want n = {n} of each",
                    dist.len(),
                    parent.len()
                ),
            });
        }
        let mut ptr = null_mut();
        // SAFETY: both arrays hold n elements (checked above).
        check(unsafe {
            dyng_sssp_from_arrays(self.res.ptr, self.ptr, source, objective, dist.as_ptr(), parent.as_ptr(), canonicalize, &mut ptr)
        })?;
        Ok(WorkerResult::new(&self.res, ptr))
    }

    pub fn mosp_from_trees(&self, source: i32, trees: &[&WorkerResult], prefs: &[u32]) -> CResult<WorkerResult> {
        let ptrs: Vec<*const dyng_result_t> = trees.iter().map(|t| t.ptr as *const _).collect();
        let mut ptr = null_mut();
        let (p, np) = if prefs.is_empty() { (null(), 0) } else { (prefs.as_ptr(), prefs.len()) };
        // SAFETY: `ptrs` holds k live result handles; `prefs` outlives the call.
        check(unsafe { dyng_mosp_from_trees(self.res.ptr, self.ptr, source, ptrs.as_ptr(), ptrs.len(), p, np, &mut ptr) })?;
        Ok(WorkerResult::new(&self.res, ptr))
    }

    /// `dyng_update`: applies `batch` and updates `results`; returns their counters.
    pub fn update(&mut self, batch: &Batch, results: &mut [&mut WorkerResult]) -> CResult<Vec<UpdateStats>> {
        let b = dyng_batch_t {
            struct_size: std::mem::size_of::<dyng_batch_t>(),
            num_insertions: batch.ins_src.len(),
            ins_src: batch.ins_src.as_ptr(),
            ins_dst: batch.ins_dst.as_ptr(),
            ins_weights: batch.ins_weights.as_ptr(),
            num_deletions: batch.del_src.len(),
            del_src: batch.del_src.as_ptr(),
            del_dst: batch.del_dst.as_ptr(),
        };
        let ptrs: Vec<*mut dyng_result_t> = results.iter().map(|r| r.ptr).collect();
        let mut stats = vec![dyng_update_stats_default(); ptrs.len()];
        let stats_ptr = if stats.is_empty() { null_mut() } else { stats.as_mut_ptr() };
        // SAFETY: the batch's arrays hold its counts; `ptrs` holds live handles that nobody else
        // uses (the callers' locks); `stats` holds one sized entry per result.
        check(unsafe { dyng_update(self.res.ptr, self.ptr, &b, ptrs.as_ptr(), ptrs.len(), stats_ptr) })?;
        Ok(stats.iter().map(stats_from_c).collect())
    }
}

fn stats_from_c(s: &dyng_update_stats_t) -> UpdateStats {
    UpdateStats {
        invalidated: s.invalidated,
        affected: s.affected,
        iterations: s.iterations,
        epochs: s.epochs,
        pushes: s.pushes,
        packed_parents: s.packed_parents,
        fallback_used: s.fallback_used,
        ..Default::default()
    }
}

/// A result resident in the worker.
pub struct WorkerResult {
    res: Arc<WorkerResources>,
    ptr: *mut dyng_result_t,
}

// SAFETY: as `WorkerGraph`: reads may overlap, `dyng_update` holds the caller's write lock.
unsafe impl Send for WorkerResult {}
unsafe impl Sync for WorkerResult {}

impl Drop for WorkerResult {
    fn drop(&mut self) {
        // SAFETY: our own handle, freed once; views taken from it stay valid.
        unsafe { dyng_result_free(self.ptr) }
    }
}

/// What `dyng_result_info` says of a result.
pub struct ResultInfo {
    pub source: usize,
    pub objective: usize,
    pub k: usize,
    pub graph_k: usize,
    pub n: usize,
    pub graph_version: u64,
    pub stats: UpdateStats,
}

impl WorkerResult {
    fn new(res: &Arc<WorkerResources>, ptr: *mut dyng_result_t) -> Self {
        WorkerResult { res: res.clone(), ptr }
    }

    pub fn info(&self) -> CResult<ResultInfo> {
        let mut i = dyng_result_info_t {
            struct_size: std::mem::size_of::<dyng_result_info_t>(),
            kind: 0,
            source: 0,
            objective: 0,
            k: 0,
            graph_k: 0,
            n: 0,
            graph_version: 0,
            last_stats: dyng_update_stats_default(),
        };
        // SAFETY: our live handle and a sized output struct.
        check(unsafe { dyng_result_info(self.ptr, &mut i) })?;
        Ok(ResultInfo {
            source: i.source as usize,
            objective: i.objective as usize,
            k: i.k as usize,
            graph_k: i.graph_k as usize,
            n: i.n,
            graph_version: i.graph_version,
            stats: stats_from_c(&i.last_stats),
        })
    }

    /// A zero-copy snapshot of `array` (`DYNG_ARRAY_*`) of tree `k`.
    pub fn view(&self, array: u32, k: u32) -> CResult<WorkerView> {
        let mut v = null_mut();
        // SAFETY: live handles and a writable out pointer.
        check(unsafe { dyng_result_view(self.res.ptr, self.ptr, array, k, &mut v) })?;
        // Owned at once, so that it is released on every path below.
        let mut view = WorkerView { ptr: v, data: null(), len: 0, dtype: 0 };
        // SAFETY: a live view and writable outputs.
        check(unsafe { dyng_view_data(view.ptr, &mut view.data, &mut view.len, &mut view.dtype) })?;
        Ok(view)
    }

    /// A copy of `array` (`DYNG_ARRAY_*`) of tree `k` in new memory: `len` elements of the
    /// array's type (`i64` for distances and path costs, `i32` for parents), no shared memory.
    pub fn copy_array<T: Copy + Default>(&self, array: u32, k: u32, len: usize) -> CResult<Vec<T>> {
        let mut out = vec![T::default(); len];
        // SAFETY: live handles; `out` holds `len` writable elements of the type the caller
        // names for `array` (the library checks `len` against the array's length).
        check(unsafe { dyng_result_copy(self.res.ptr, self.ptr, array, k, out.as_mut_ptr() as *mut std::ffi::c_void, len) })?;
        Ok(out)
    }

    /// The path from the source to `target` in tree `k` (`DYNG_TREE_COMBINED`: the MOSP tree).
    pub fn path(&self, k: u32, target: i32) -> CResult<Vec<i32>> {
        let mut len = 0usize;
        // SAFETY: a NULL buffer with cap 0 asks for the length only.
        check(unsafe { dyng_result_path(self.ptr, k, target, null_mut(), 0, &mut len) })?;
        let mut out = vec![0i32; len];
        // SAFETY: `out` holds `len` writable elements.
        check(unsafe { dyng_result_path(self.ptr, k, target, out.as_mut_ptr(), len, &mut len) })?;
        out.truncate(len);
        Ok(out)
    }
}

/// A zero-copy view of a worker result's array: shared memory mapped read-only, released (and
/// acknowledged to the worker) when this drops.
pub struct WorkerView {
    ptr: *mut dyng_view_t,
    data: *const std::ffi::c_void,
    len: usize,
    dtype: u32,
}

// SAFETY: a view is immutable memory; releasing it is done once, on drop.
unsafe impl Send for WorkerView {}
unsafe impl Sync for WorkerView {}

impl Drop for WorkerView {
    fn drop(&mut self) {
        // SAFETY: our own view, released once.
        unsafe { dyng_view_release(self.ptr) }
    }
}

impl WorkerView {
    /// Elements in the view.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn i64s(&self) -> Option<&[i64]> {
        // SAFETY: the view holds `len` elements of its dtype until released (on drop of self).
        (self.dtype == DYNG_DTYPE_INT64).then(|| unsafe { slice(self.data as *const i64, self.len) })
    }

    pub fn i32s(&self) -> Option<&[i32]> {
        // SAFETY: as in `i64s`.
        (self.dtype == DYNG_DTYPE_INT32).then(|| unsafe { slice(self.data as *const i32, self.len) })
    }
}

/// A slice of `len` elements at `p` (an empty array may come with a NULL pointer).
unsafe fn slice<'a, T>(p: *const T, len: usize) -> &'a [T] {
    if len == 0 {
        &[]
    } else {
        // SAFETY: the caller's contract.
        unsafe { std::slice::from_raw_parts(p, len) }
    }
}
