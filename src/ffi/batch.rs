//! Change batches: `dyng_batch_t` (borrowed C arrays) and `dyng_batch_buffer_t` (read from files).
//!
//! A `dyng_batch_t` maps to a [`BatchView`] over the caller's arrays without copying; the K of the
//! view is the graph's K, which is how insertions' weight arrays are sized. A batch buffer owns a
//! [`Batch`] read from a MOSP batch folder and lends it out as a `dyng_batch_t`.

use super::boundary::{
    guard, non_null, read_versioned, slice, write_versioned, FfiResult, Versioned,
};
use super::consts::*;
use super::graph::{dyng_graph_t, graph, path_arg};
use super::handle::{self, impl_handle};
use crate::graph::{Batch, BatchView};
use crate::io;

/// A batch of changes (borrowed for the call): insertions (upserts with K edge-major weights each)
/// and deletions, applied as docs/formats.md says (all deletions first, each removing the first
/// remaining copy of its edge; then each insertion overwrites the weights of an existing edge or
/// appends a new one). Thread safety: plain data; dyng only reads it.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct dyng_batch_t {
    /// `sizeof(dyng_batch_t)`.
    pub struct_size: usize,
    /// Insertions.
    pub num_insertions: usize,
    /// Tails of the insertions, in [0, n).
    pub ins_src: *const i32,
    /// Heads of the insertions, in [0, n).
    pub ins_dst: *const i32,
    /// K weights per insertion, edge-major: `ins_weights[i*K + j]`, each in [1, 2^31-1].
    pub ins_weights: *const i32,
    /// Deletions.
    pub num_deletions: usize,
    /// Tails of the deletions, in [0, n).
    pub del_src: *const i32,
    /// Heads of the deletions, in [0, n).
    pub del_dst: *const i32,
}

// SAFETY: repr(C), starts with `usize struct_size`, integers and pointers only.
unsafe impl Versioned for dyng_batch_t {
    const V1_SIZE: usize = std::mem::size_of::<dyng_batch_t>();
    const NAME: &'static str = "dyng_batch_t";
    fn defaults() -> Self {
        dyng_batch_t {
            struct_size: std::mem::size_of::<Self>(),
            num_insertions: 0,
            ins_src: std::ptr::null(),
            ins_dst: std::ptr::null(),
            ins_weights: std::ptr::null(),
            num_deletions: 0,
            del_src: std::ptr::null(),
            del_dst: std::ptr::null(),
        }
    }
}

/// A batch read from a folder, owning its arrays. Thread safety: read-only; may be shared.
pub struct dyng_batch_buffer_t {
    _opaque: [u8; 0],
}

impl_handle!(dyng_batch_buffer_t => Batch, 0xD1A6_0003_BA7C_0C35);

/// Borrows the caller's batch as a [`BatchView`] for a graph with `k` objectives.
///
/// # Safety
/// `b` must be non-NULL and readable, its arrays holding the documented counts for `'a`.
pub(crate) unsafe fn batch_view<'a>(
    b: *const dyng_batch_t,
    k: usize,
    func: &str,
) -> FfiResult<BatchView<'a>> {
    // SAFETY: caller contract (non-NULL; NULL would mean "defaults", which callers exclude).
    let d = unsafe { read_versioned(b, func)? };
    let wlen = d.num_insertions.checked_mul(k).ok_or_else(|| {
        super::boundary::invalid(format!(
            "dyng: {func}: {} insertions x K overflows",
            d.num_insertions
        ))
    })?;
    // SAFETY: caller contract: the documented counts are readable.
    unsafe {
        Ok(BatchView {
            k,
            ins_src: slice(d.ins_src, d.num_insertions, func, "batch->ins_src")?,
            ins_dst: slice(d.ins_dst, d.num_insertions, func, "batch->ins_dst")?,
            ins_weights: slice(d.ins_weights, wlen, func, "batch->ins_weights")?,
            del_src: slice(d.del_src, d.num_deletions, func, "batch->del_src")?,
            del_dst: slice(d.del_dst, d.num_deletions, func, "batch->del_dst")?,
        })
    }
}

/// Reads the batch folder `dir` (`insert.txt`: `u v w1 .. wK` per line with K = the graph's K;
/// `delete.txt`: `u v` per line) for graph `g` into a new buffer `*out`. Errors name path, line and
/// column. Thread safety: thread-safe on a graph nobody updates.
///
/// # Safety
/// `dir` is NULL or NUL-terminated; `g` is NULL or a dyng handle; `out` is writable.
#[no_mangle]
pub unsafe extern "C" fn dyng_batch_read(
    dir: *const std::ffi::c_char,
    g: *const dyng_graph_t,
    out: *mut *mut dyng_batch_buffer_t,
) -> dyng_status_t {
    const F: &str = "dyng_batch_read";
    guard(F, || {
        // SAFETY: caller contract for every pointer below.
        unsafe {
            let dir = path_arg(dir, F, "dir")?;
            let g = graph(g, F)?;
            non_null(out, F, "out")?;
            let b = io::formats::batch_files::read_batch_dir(&dir, g.n(), g.k())?;
            *out = handle::into_handle::<dyng_batch_buffer_t>(b);
        }
        Ok(())
    })
}

/// Fills `*out` (set `out->struct_size` first) with pointers into the buffer, valid until
/// `dyng_batch_buffer_free`. Thread safety: thread-safe.
///
/// # Safety
/// `b` is NULL or a dyng handle; `out` is NULL or a writable struct of `out->struct_size` bytes.
#[no_mangle]
pub unsafe extern "C" fn dyng_batch_buffer_get(
    b: *const dyng_batch_buffer_t,
    out: *mut dyng_batch_t,
) -> dyng_status_t {
    const F: &str = "dyng_batch_buffer_get";
    guard(F, || {
        // SAFETY: caller contract for every pointer below.
        unsafe {
            let b = handle::get(b, F, "b")?;
            non_null(out, F, "out")?;
            let size = super::boundary::output_size(out, F)?;
            let d = dyng_batch_t {
                struct_size: 0,
                num_insertions: b.num_insertions(),
                ins_src: b.ins_src.as_ptr(),
                ins_dst: b.ins_dst.as_ptr(),
                ins_weights: b.ins_weights.as_ptr(),
                num_deletions: b.num_deletions(),
                del_src: b.del_src.as_ptr(),
                del_dst: b.del_dst.as_ptr(),
            };
            write_versioned(out, size, d);
        }
        Ok(())
    })
}

/// Frees a batch buffer; NULL is a no-op. Thread safety: no other thread may use the buffer.
///
/// # Safety
/// `b` is NULL or a dyng handle not in use elsewhere.
#[no_mangle]
pub unsafe extern "C" fn dyng_batch_buffer_free(b: *mut dyng_batch_buffer_t) {
    // SAFETY: forwarded contract.
    guard("dyng_batch_buffer_free", || unsafe {
        handle::free(b, "dyng_batch_buffer_free")
    });
}
