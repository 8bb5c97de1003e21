//! `dyng_graph_t`: graphs with K objectives built from C arrays or read from files.
//!
//! C arrays are borrowed for the call and copied into a validated [`Csr`]; every rule (sizes,
//! vertex ranges, weights >= 1) is checked by the Rust constructors, whose messages name the
//! offending entry. File formats are those of `crate::io`.
//!
//! A handle holds a `SessionGraph`, placed where its resources handle's session runs: through
//! worker-isolated resources the graph is also loaded into the worker, and the handle keeps the
//! host mirror, so `dyng_graph_info` and `dyng_graph_copy_csr` answer host-side (no CHECKPOINT
//! round trip).

use super::boundary::{
    guard, index, invalid, non_null, output_size, read_versioned, slice, slice_mut,
    versioned_output, write_versioned, FfiResult, Versioned,
};
use super::consts::*;
use super::handle::{self, impl_handle};
use super::resources::{dyng_resources_t, resources, resources_handle, ResourcesHandle};
use crate::graph::{Csr, Graph, WeightLayout};
use crate::io::{self, CsrText};
use crate::session::SessionGraph;
use std::ffi::{c_char, CStr};
use std::path::{Path, PathBuf};

/// A directed graph with K integer weight columns (objectives). Thread safety: read-only calls may
/// run concurrently; `dyng_update` on it must not overlap any other use (detected: the later call
/// gets `DYNG_ERR_BUSY` and does nothing).
pub struct dyng_graph_t {
    _opaque: [u8; 0],
}

impl_handle!(dyng_graph_t => SessionGraph, 0xD1A6_0002_6EA9_0C35);

/// A graph in CSR form with objective-major weights (borrowed for the call). Thread safety: plain
/// data.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct dyng_csr_t {
    /// Vertices.
    pub n: usize,
    /// Edges.
    pub m: usize,
    /// Objectives (weight columns), 1..64.
    pub k: u32,
    /// n+1 offsets, `row_ptr[0] = 0`, `row_ptr[n] = m`, non-decreasing.
    pub row_ptr: *const i32,
    /// m heads in [0, n).
    pub col_ind: *const i32,
    /// k*m weights in [1, 2^31-1], objective-major: `weights[j*m + e]`.
    pub weights: *const i32,
}

/// A graph as an edge list with edge-major weights (borrowed for the call). Thread safety: plain
/// data.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct dyng_edges_t {
    /// Vertices.
    pub n: usize,
    /// Edges.
    pub m: usize,
    /// Objectives, 1..64.
    pub k: u32,
    /// m tails in [0, n); edges keep their list order within each tail's row.
    pub src: *const i32,
    /// m heads in [0, n).
    pub dst: *const i32,
    /// m*k weights in [1, 2^31-1], edge-major: `weights[e*k + j]`.
    pub weights: *const i32,
}

/// Options of `dyng_graph_read`. Start from `dyng_read_options_default()`. Thread safety: plain
/// data.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct dyng_read_options_t {
    /// `sizeof(dyng_read_options_t)`.
    pub struct_size: usize,
    /// Matrix Market: objectives to draw (default 1). CSR text: K when the file holds no edge.
    pub k: u32,
    /// Matrix Market: smallest drawn weight (default 1).
    pub weight_min: i32,
    /// Matrix Market: largest drawn weight (default 100).
    pub weight_max: i32,
    /// Matrix Market: seed of the mt19937 generator (default 12345).
    pub seed: u32,
    /// DIMACS: files of objectives 1, 2, ... (`path` is objective 0); NULL when `num_more_paths` is 0.
    pub more_paths: *const *const c_char,
    /// DIMACS: entries of `more_paths`.
    pub num_more_paths: usize,
    /// DIMACS: read weight 0 as 1 instead of refusing it.
    pub zero_to_one: bool,
}

// SAFETY: repr(C), starts with `usize struct_size`, every field is valid for any C-written value.
unsafe impl Versioned for dyng_read_options_t {
    const V1_SIZE: usize = std::mem::size_of::<dyng_read_options_t>();
    const NAME: &'static str = "dyng_read_options_t";
    fn defaults() -> Self {
        dyng_read_options_t {
            struct_size: std::mem::size_of::<Self>(),
            k: 1,
            weight_min: 1,
            weight_max: 100,
            seed: 12345,
            more_paths: std::ptr::null(),
            num_more_paths: 0,
            zero_to_one: false,
        }
    }
}

/// Size and state of a graph, filled by `dyng_graph_info`. Thread safety: plain data.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct dyng_graph_info_t {
    /// `sizeof(dyng_graph_info_t)`; dyng sets it to the bytes it filled.
    pub struct_size: usize,
    /// Vertices.
    pub n: usize,
    /// Edges.
    pub m: usize,
    /// Objectives.
    pub k: u32,
    /// Batches applied so far.
    pub version: u64,
}

// SAFETY: repr(C), starts with `usize struct_size`, plain integers.
versioned_output!(dyng_graph_info_t);

/// Borrows graph handle `g`.
///
/// # Safety
/// `g` must be NULL or a dyng handle not mutated during `'a`.
pub(crate) unsafe fn graph<'a>(g: *const dyng_graph_t, func: &str) -> FfiResult<&'a Graph> {
    // SAFETY: forwarded contract.
    Ok(unsafe { handle::get(g, func, "g") }?.graph())
}

/// Borrows the whole graph handle (the graph and where it lives).
///
/// # Safety
/// `g` must be NULL or a dyng handle that nobody mutates during `'a`.
pub(crate) unsafe fn graph_handle<'a>(g: *const dyng_graph_t, func: &str) -> FfiResult<&'a SessionGraph> {
    // SAFETY: forwarded contract.
    unsafe { handle::get(g, func, "g") }
}

/// Wraps `csr` in a new graph handle at `*out`, placed by `res`'s session (a failed load into a
/// worker writes no output).
///
/// # Safety
/// `out` must be non-NULL and writable.
unsafe fn emit(out: *mut *mut dyng_graph_t, res: &ResourcesHandle, csr: Csr, func: &str) -> FfiResult<()> {
    let h = res.session.graph(csr, func)?;
    // SAFETY: forwarded contract.
    unsafe { *out = handle::into_handle::<dyng_graph_t>(h) };
    Ok(())
}

/// K of a descriptor, checked before the weight array's length is computed from it.
fn objectives(k: u32) -> FfiResult<usize> {
    crate::graph::csr::check_objectives(k as usize)?;
    Ok(k as usize)
}

/// Copies a borrowed `dyng_csr_t` into a validated [`Csr`].
///
/// # Safety
/// The descriptor's pointers must hold the documented counts of readable elements.
pub(crate) unsafe fn csr_from_desc(d: &dyng_csr_t, func: &str) -> FfiResult<Csr> {
    let k = objectives(d.k)?;
    let wlen =
        d.m.checked_mul(k)
            .ok_or_else(|| invalid(format!("dyng: {func}: m x K = {} x {k} overflows", d.m)))?;
    let rows =
        d.n.checked_add(1)
            .ok_or_else(|| invalid(format!("dyng: {func}: n = {} is too large", d.n)))?;
    // SAFETY: the caller guarantees the documented counts.
    let (row_ptr, col_ind, weights) = unsafe {
        (
            slice(d.row_ptr, rows, func, "csr->row_ptr")?,
            slice(d.col_ind, d.m, func, "csr->col_ind")?,
            slice(d.weights, wlen, func, "csr->weights")?,
        )
    };
    if row_ptr[d.n] as i64 != d.m as i64 {
        return Err(invalid(format!(
            "dyng: {func}: row_ptr[n] = {} but csr->m = {}",
            row_ptr[d.n], d.m
        )));
    }
    Ok(Csr::from_arrays(
        d.n,
        k,
        row_ptr.to_vec(),
        col_ind.to_vec(),
        weights,
        WeightLayout::ObjectiveMajor,
    )?)
}

/// Builds a graph from CSR arrays (objective-major weights), copying them. Thread safety:
/// thread-safe.
///
/// # Safety
/// `res` is NULL or a dyng handle; `csr` is NULL or a descriptor whose arrays hold the documented
/// counts; `out` is writable.
#[no_mangle]
pub unsafe extern "C" fn dyng_graph_from_csr(
    res: *const dyng_resources_t,
    csr: *const dyng_csr_t,
    out: *mut *mut dyng_graph_t,
) -> dyng_status_t {
    const F: &str = "dyng_graph_from_csr";
    guard(F, || {
        // SAFETY: caller contract for every pointer below.
        unsafe {
            let rh = resources_handle(res, F)?;
            non_null(csr, F, "csr")?;
            non_null(out, F, "out")?;
            let g = csr_from_desc(&*csr, F)?;
            emit(out, rh, g, F)?;
        }
        Ok(())
    })
}

/// Builds a graph from an edge list (edge-major weights), copying it; edges keep their list order
/// within each tail's row. Thread safety: thread-safe.
///
/// # Safety
/// `res` is NULL or a dyng handle; `edges` is NULL or a descriptor whose arrays hold the documented
/// counts; `out` is writable.
#[no_mangle]
pub unsafe extern "C" fn dyng_graph_from_edges(
    res: *const dyng_resources_t,
    edges: *const dyng_edges_t,
    out: *mut *mut dyng_graph_t,
) -> dyng_status_t {
    const F: &str = "dyng_graph_from_edges";
    guard(F, || {
        // SAFETY: caller contract for every pointer below.
        unsafe {
            let rh = resources_handle(res, F)?;
            non_null(edges, F, "edges")?;
            non_null(out, F, "out")?;
            let d = &*edges;
            let k = objectives(d.k)?;
            let wlen = d
                .m
                .checked_mul(k)
                .ok_or_else(|| invalid(format!("dyng: {F}: m x K = {} x {k} overflows", d.m)))?;
            let src = slice(d.src, d.m, F, "edges->src")?;
            let dst = slice(d.dst, d.m, F, "edges->dst")?;
            let w = slice(d.weights, wlen, F, "edges->weights")?;
            emit(out, rh, Csr::from_edges(d.n, k, src, dst, w)?, F)?;
        }
        Ok(())
    })
}

/// Returns the default read options (K = 1, weights in [1, 100], seed 12345, no extra paths).
/// Thread safety: thread-safe.
#[no_mangle]
pub extern "C" fn dyng_read_options_default() -> dyng_read_options_t {
    dyng_read_options_t::defaults()
}

/// A C path argument as a `PathBuf`: any bytes but NUL, as the file system takes them (messages
/// show a path that is not UTF-8 with replacement characters).
///
/// # Safety
/// `p` is NULL or a NUL-terminated string.
pub(crate) unsafe fn path_arg(p: *const c_char, func: &str, arg: &str) -> FfiResult<PathBuf> {
    non_null(p, func, arg)?;
    // SAFETY: non-NULL, NUL-terminated (caller contract).
    Ok(unsafe { c_path(p) })
}

/// The bytes of NUL-terminated `p` as a path.
///
/// # Safety
/// `p` is a non-NULL, NUL-terminated string.
pub(crate) unsafe fn c_path(p: *const c_char) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;
    // SAFETY: forwarded contract.
    let bytes = unsafe { CStr::from_ptr(p) }.to_bytes();
    PathBuf::from(std::ffi::OsStr::from_bytes(bytes))
}

/// Reads a graph file in `format` into CSR text form.
///
/// # Safety
/// `opt.more_paths` holds `opt.num_more_paths` NUL-terminated strings.
unsafe fn read_text(
    path: &Path,
    format: u32,
    opt: &dyng_read_options_t,
    func: &str,
) -> FfiResult<CsrText> {
    match format {
        DYNG_FORMAT_CSR_TEXT => {
            let mut t = io::formats::csr_text::read_csr_triplet(path)?;
            if t.k == 0 {
                // An edgeless graph's Values file cannot tell K; the caller's option does.
                t.k = (opt.k as usize).max(1);
            }
            Ok(t)
        }
        DYNG_FORMAT_MATRIX_MARKET => Ok(io::formats::mtx::mtx_to_csr(
            path,
            opt.k as usize,
            opt.weight_min,
            opt.weight_max,
            opt.seed,
        )?
        .0),
        DYNG_FORMAT_DIMACS => {
            // SAFETY: caller contract.
            let more =
                unsafe { slice(opt.more_paths, opt.num_more_paths, func, "opt->more_paths")? };
            let mut paths = vec![path.to_path_buf()];
            for (i, &p) in more.iter().enumerate() {
                // SAFETY: caller contract.
                paths.push(unsafe { path_arg(p, func, &format!("opt->more_paths[{i}]"))? });
            }
            let refs: Vec<&Path> = paths.iter().map(PathBuf::as_path).collect();
            Ok(io::formats::dimacs::read_dimacs_objectives(&refs, opt.zero_to_one)?)
        }
        f => Err(invalid(format!(
            "dyng: {func}: format = {f} is not a DYNG_FORMAT_* value (0, 1 or 2)"
        ))),
    }
}

/// Reads a graph from `path` in `format` (`DYNG_FORMAT_CSR_TEXT`: `path` is the file prefix;
/// `DYNG_FORMAT_MATRIX_MARKET`; `DYNG_FORMAT_DIMACS`: `path` is objective 0's file, further
/// objectives in `opt->more_paths`). `opt` NULL = defaults. Errors name path, line and column.
/// Thread safety: thread-safe.
///
/// # Safety
/// `res` is NULL or a dyng handle; `path` is NULL or NUL-terminated; `opt` is NULL or readable;
/// `out` is writable.
#[no_mangle]
pub unsafe extern "C" fn dyng_graph_read(
    res: *const dyng_resources_t,
    path: *const c_char,
    format: u32,
    opt: *const dyng_read_options_t,
    out: *mut *mut dyng_graph_t,
) -> dyng_status_t {
    const F: &str = "dyng_graph_read";
    guard(F, || {
        // SAFETY: caller contract for every pointer below.
        unsafe {
            let rh = resources_handle(res, F)?;
            let path = path_arg(path, F, "path")?;
            let opt = read_versioned(opt, F)?;
            non_null(out, F, "out")?;
            let t = read_text(&path, format, &opt, F)?;
            let csr = Csr::from_arrays(
                t.n,
                t.k,
                t.row_ptr,
                t.col_ind,
                &t.weights,
                WeightLayout::EdgeMajor,
            )?;
            emit(out, rh, csr, F)?;
        }
        Ok(())
    })
}

/// Fills `*out` (set `out->struct_size` first) with n, m, K and the version (batches applied).
/// Thread safety: thread-safe on a graph nobody updates.
///
/// # Safety
/// `g` is NULL or a dyng handle; `out` is NULL or a writable struct of `out->struct_size` bytes.
#[no_mangle]
pub unsafe extern "C" fn dyng_graph_info(
    g: *const dyng_graph_t,
    out: *mut dyng_graph_info_t,
) -> dyng_status_t {
    const F: &str = "dyng_graph_info";
    guard(F, || {
        // SAFETY: caller contract for every pointer below.
        unsafe {
            let g = graph(g, F)?;
            non_null(out, F, "out")?;
            let size = output_size(out, F)?;
            let info = dyng_graph_info_t {
                struct_size: 0,
                n: g.n(),
                m: g.m(),
                k: g.k() as u32,
                version: g.version(),
            };
            write_versioned(out, size, info);
        }
        Ok(())
    })
}

/// Copies the current CSR: `row_ptr` (n+1), `col_ind` (m), `weights` (K*m, objective-major), sized
/// from `dyng_graph_info`. Any of the three may be NULL to skip that array. Thread safety:
/// thread-safe on a graph nobody updates.
///
/// # Safety
/// `res` and `g` are NULL or dyng handles; each non-NULL output holds its count of writable
/// elements.
#[no_mangle]
pub unsafe extern "C" fn dyng_graph_copy_csr(
    res: *const dyng_resources_t,
    g: *const dyng_graph_t,
    row_ptr: *mut i32,
    col_ind: *mut i32,
    weights: *mut i32,
) -> dyng_status_t {
    const F: &str = "dyng_graph_copy_csr";
    guard(F, || {
        // SAFETY: caller contract for every pointer below.
        unsafe {
            resources(res, F)?;
            let csr = graph(g, F)?.to_csr();
            for (dst, src) in [
                (row_ptr, csr.row_ptr()),
                (col_ind, csr.col_ind()),
                (weights, csr.weights()),
            ] {
                if !dst.is_null() {
                    slice_mut(dst, src.len(), F, "output")?.copy_from_slice(src);
                }
            }
        }
        Ok(())
    })
}

/// Frees a graph; NULL is a no-op. Results computed on it stay readable. Thread safety: no other
/// thread may use the graph.
///
/// # Safety
/// `g` is NULL or a dyng handle not in use elsewhere.
#[no_mangle]
pub unsafe extern "C" fn dyng_graph_free(g: *mut dyng_graph_t) {
    // SAFETY: forwarded contract.
    guard("dyng_graph_free", || unsafe {
        handle::free(g, "dyng_graph_free")
    });
}

/// Checks that vertex `v` (a C `int32_t`) lies in `[0, n)` and returns it as an index.
pub(crate) fn vertex(v: i32, n: usize, what: &str, func: &str) -> FfiResult<usize> {
    let i = index(v, &format!("{func}: {what}"))?;
    if i >= n {
        return Err(invalid(format!(
            "dyng: {func}: {what} {v} is outside [0, n = {n})"
        )));
    }
    Ok(i)
}
