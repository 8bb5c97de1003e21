//! `dyng_view_t`: zero-copy snapshots of one result array, and `dyng_result_copy`.
//!
//! A view holds an `Arc` of the array it shows. Updates write through `Arc::make_mut`, so an update
//! after a view was taken copies the array and the view keeps the old one: that is the snapshot
//! guarantee, with no copy when nobody holds a view.
//!
//! A view of a worker result holds the worker's lent shared-memory block ([`crate::worker::View`]):
//! `dyng_view_data` points into the read-only mapping, and releasing the view unmaps it and sends
//! the CONSUMED ack. An update writes into a different block, so the snapshot guarantee holds too.

use super::boundary::{guard, invalid, non_null, slice_mut, FfiResult};
use super::consts::*;
use super::handle::{self, impl_handle};
use super::resources::{dyng_resources_t, resources};
use super::result::{dyng_result_t, result, AnyResult, ResultHandle};
use super::remote;
use crate::worker::View;
use std::ffi::c_void;
use std::sync::Arc;

/// An immutable snapshot of one array of a result, valid until released whatever happens to the
/// result. Thread safety: immutable; may be read from any number of threads.
pub struct dyng_view_t {
    _opaque: [u8; 0],
}

/// The array a view keeps alive.
pub(crate) enum Snapshot {
    I32(Arc<Vec<i32>>),
    I64(Arc<Vec<i64>>),
    /// A lent worker block holding array `kind` (exactly one array: the view mask names one).
    Remote(View, u16),
}

impl Snapshot {
    /// (pointer, element count, DYNG_DTYPE_*) of the array.
    fn raw(&self, func: &str) -> FfiResult<(*const c_void, usize, u32)> {
        Ok(match self {
            Snapshot::I32(a) => (a.as_ptr() as *const c_void, a.len(), DYNG_DTYPE_INT32),
            Snapshot::I64(a) => (a.as_ptr() as *const c_void, a.len(), DYNG_DTYPE_INT64),
            Snapshot::Remote(v, kind) => {
                if let Some(a) = v.i64s(*kind) {
                    (a.as_ptr() as *const c_void, a.len(), DYNG_DTYPE_INT64)
                } else if let Some(a) = v.i32s(*kind) {
                    (a.as_ptr() as *const c_void, a.len(), DYNG_DTYPE_INT32)
                } else {
                    return Err(crate::Error::Protocol(format!(
                        "dyng worker: {func}: the lent block lacks array kind {kind}"
                    ))
                    .into());
                }
            }
        })
    }
}

impl_handle!(dyng_view_t => Snapshot, 0xD1A6_0005_71E3_0C35);

/// Refuses an objective index for an array that has none (the combined tree, path costs).
pub(crate) fn no_objective_index(k: u32, what: &str, func: &str) -> FfiResult<()> {
    if k != 0 {
        return Err(invalid(format!(
            "dyng: {func}: {what} has no objective index; pass k = 0 (got {k})"
        )));
    }
    Ok(())
}

/// Takes the snapshot of `array` (a `DYNG_ARRAY_*` value) for objective `k` of a result.
fn snapshot(h: &ResultHandle, array: u32, k: u32, func: &str) -> FfiResult<Snapshot> {
    let ku = k as usize;
    match (&h.result, array) {
        (AnyResult::Remote(rr), _) => {
            let (kind, mask, objective) = remote::locate(rr, array, k, func)?;
            Ok(Snapshot::Remote(rr.client.view(rr.id, mask, objective)?, kind))
        }
        (AnyResult::Sssp(s), DYNG_ARRAY_DISTANCES | DYNG_ARRAY_PARENTS) => {
            if ku != s.objective() {
                return Err(invalid(format!(
                    "dyng: {func}: this SSSP result holds objective {} only, not k = {k}",
                    s.objective()
                )));
            }
            Ok(if array == DYNG_ARRAY_DISTANCES {
                Snapshot::I64(s.distances_snapshot())
            } else {
                Snapshot::I32(s.parents_snapshot())
            })
        }
        (AnyResult::Mosp(m), DYNG_ARRAY_DISTANCES | DYNG_ARRAY_PARENTS) => {
            if ku >= m.k() {
                return Err(invalid(format!(
                    "dyng: {func}: k = {k} is outside [0, K = {})",
                    m.k()
                )));
            }
            let t = m.tree(ku);
            Ok(if array == DYNG_ARRAY_DISTANCES {
                Snapshot::I64(t.distances_snapshot())
            } else {
                Snapshot::I32(t.parents_snapshot())
            })
        }
        (AnyResult::Mosp(m), DYNG_ARRAY_COMBINED_DISTANCES) => {
            no_objective_index(k, "DYNG_ARRAY_COMBINED_DISTANCES", func)?;
            Ok(Snapshot::I64(m.combined_distances_snapshot()))
        }
        (AnyResult::Mosp(m), DYNG_ARRAY_COMBINED_PARENTS) => {
            no_objective_index(k, "DYNG_ARRAY_COMBINED_PARENTS", func)?;
            Ok(Snapshot::I32(m.combined_parents_snapshot()))
        }
        (AnyResult::Mosp(m), DYNG_ARRAY_PATH_COSTS) => {
            no_objective_index(k, "DYNG_ARRAY_PATH_COSTS", func)?;
            Ok(Snapshot::I64(m.path_costs_snapshot()))
        }
        (
            AnyResult::Sssp(_),
            DYNG_ARRAY_COMBINED_DISTANCES | DYNG_ARRAY_COMBINED_PARENTS | DYNG_ARRAY_PATH_COSTS,
        ) => Err(invalid(format!(
            "dyng: {func}: array {array} exists only in MOSP results"
        ))),
        (_, a) => Err(invalid(format!(
            "dyng: {func}: array = {a} is not a DYNG_ARRAY_* value (0..4)"
        ))),
    }
}

/// Creates `*out`, a zero-copy snapshot of `array` (`DYNG_ARRAY_*`) of objective `k` (SSSP: its
/// objective; MOSP: 0..K-1; combined arrays and path costs: 0). Thread safety: thread-safe on a
/// result nobody updates.
///
/// # Safety
/// `res` and `r` are NULL or dyng handles; `out` is writable.
#[no_mangle]
pub unsafe extern "C" fn dyng_result_view(
    res: *const dyng_resources_t,
    r: *const dyng_result_t,
    array: u32,
    k: u32,
    out: *mut *mut dyng_view_t,
) -> dyng_status_t {
    const F: &str = "dyng_result_view";
    guard(F, || {
        // SAFETY: caller contract for every pointer below.
        unsafe {
            resources(res, F)?;
            let h = result(r, F)?;
            non_null(out, F, "out")?;
            let snap = snapshot(h, array, k, F)?;
            *out = handle::into_handle::<dyng_view_t>(snap);
        }
        Ok(())
    })
}

/// Writes the view's first element's address to `*data`, its element count to `*len` and its
/// element type (`DYNG_DTYPE_*`) to `*dtype`. The memory stays valid until `dyng_view_release`.
/// Thread safety: thread-safe.
///
/// # Safety
/// `v` is NULL or a dyng handle; `data`, `len` and `dtype` are writable.
#[no_mangle]
pub unsafe extern "C" fn dyng_view_data(
    v: *const dyng_view_t,
    data: *mut *const c_void,
    len: *mut usize,
    dtype: *mut u32,
) -> dyng_status_t {
    const F: &str = "dyng_view_data";
    guard(F, || {
        // SAFETY: caller contract for every pointer below.
        unsafe {
            let snap = handle::get(v, F, "v")?;
            non_null(data, F, "data")?;
            non_null(len, F, "len")?;
            non_null(dtype, F, "dtype")?;
            let (p, n, t) = snap.raw(F)?;
            *data = p;
            *len = n;
            *dtype = t;
        }
        Ok(())
    })
}

/// Releases a view; NULL is a no-op. Thread safety: no other thread may use the view.
///
/// # Safety
/// `v` is NULL or a dyng handle not in use elsewhere.
#[no_mangle]
pub unsafe extern "C" fn dyng_view_release(v: *mut dyng_view_t) {
    // SAFETY: forwarded contract.
    guard("dyng_view_release", || unsafe {
        handle::free(v, "dyng_view_release")
    });
}

/// Copies `array` (as in `dyng_result_view`) into `out`, which holds exactly `len` elements of the
/// array's type (`int64_t` for distances and path costs, `int32_t` for parents); `len` must equal
/// the array's length (n, or n*KG for path costs). Thread safety: thread-safe on a result nobody
/// updates.
///
/// # Safety
/// `res` and `r` are NULL or dyng handles; `out` is NULL or holds `len` writable elements of the
/// array's type.
#[no_mangle]
pub unsafe extern "C" fn dyng_result_copy(
    res: *const dyng_resources_t,
    r: *const dyng_result_t,
    array: u32,
    k: u32,
    out: *mut c_void,
    len: usize,
) -> dyng_status_t {
    const F: &str = "dyng_result_copy";
    guard(F, || {
        // SAFETY: caller contract for every pointer below.
        unsafe {
            resources(res, F)?;
            let h = result(r, F)?;
            non_null(out, F, "out")?;
            match snapshot(h, array, k, F)? {
                Snapshot::I32(a) => copy_exact(&a, out as *mut i32, len, F),
                Snapshot::I64(a) => copy_exact(&a, out as *mut i64, len, F),
                remote @ Snapshot::Remote(..) => {
                    // The view is released (unmapped, acknowledged) when `remote` drops here.
                    let (p, n, t) = remote.raw(F)?;
                    if t == DYNG_DTYPE_INT64 {
                        // SAFETY: `raw` returned an i64 array of `n` elements in the live mapping.
                        copy_exact(std::slice::from_raw_parts(p as *const i64, n), out as *mut i64, len, F)
                    } else {
                        // SAFETY: as above, i32.
                        copy_exact(std::slice::from_raw_parts(p as *const i32, n), out as *mut i32, len, F)
                    }
                }
            }
        }
    })
}

/// # Safety
/// `out` holds `len` writable elements.
unsafe fn copy_exact<T: Copy>(src: &[T], out: *mut T, len: usize, func: &str) -> FfiResult<()> {
    if len != src.len() {
        return Err(invalid(format!(
            "dyng: {func}: len = {len} but the array has {} elements",
            src.len()
        )));
    }
    // SAFETY: forwarded contract.
    unsafe { slice_mut(out, len, func, "out")? }.copy_from_slice(src);
    Ok(())
}
