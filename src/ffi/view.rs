//! `dyng_view_t`: zero-copy snapshots of one result array, and `dyng_result_copy`.
//!
//! A view handle holds a `Snapshot` (`crate::session`): an `Arc` of an in-process array, which an
//! update after the view was taken copies (`Arc::make_mut`), or a worker's lent shared-memory
//! block, into which no update writes; releasing it unmaps the block and sends the CONSUMED ack.
//! Either way the view is a snapshot.

use super::boundary::{guard, invalid, non_null, slice_mut, FfiResult};
use super::consts::*;
use super::handle::{self, impl_handle};
use super::resources::{dyng_resources_t, resources};
use super::result::{dyng_result_t, result};
use crate::session::{Array, Elements, SessionResult, Snapshot};
use std::ffi::c_void;

/// An immutable snapshot of one array of a result, valid until released whatever happens to the
/// result. Thread safety: immutable; may be read from any number of threads.
pub struct dyng_view_t {
    _opaque: [u8; 0],
}

impl_handle!(dyng_view_t => Snapshot, 0xD1A6_0005_71E3_0C35);

// The C ABI's numbers are the arrays' own codes.
const _: () = {
    assert!(Array::Distances as u32 == DYNG_ARRAY_DISTANCES);
    assert!(Array::Parents as u32 == DYNG_ARRAY_PARENTS);
    assert!(Array::CombinedDistances as u32 == DYNG_ARRAY_COMBINED_DISTANCES);
    assert!(Array::CombinedParents as u32 == DYNG_ARRAY_COMBINED_PARENTS);
    assert!(Array::PathCosts as u32 == DYNG_ARRAY_PATH_COSTS);
};

/// (pointer, element count, DYNG_DTYPE_*) of a snapshot's array.
fn raw(snap: &Snapshot, func: &str) -> FfiResult<(*const c_void, usize, u32)> {
    Ok(match snap.elements(func)? {
        Elements::I32(a) => (a.as_ptr() as *const c_void, a.len(), DYNG_DTYPE_INT32),
        Elements::I64(a) => (a.as_ptr() as *const c_void, a.len(), DYNG_DTYPE_INT64),
    })
}

/// Takes the snapshot of `array` (a `DYNG_ARRAY_*` value) for objective `k` of a result.
fn snapshot(h: &SessionResult, array: u32, k: u32, func: &str) -> FfiResult<Snapshot> {
    let a = Array::from_code(array)
        .ok_or_else(|| invalid(format!("dyng: {func}: array = {array} is not a DYNG_ARRAY_* value (0..4)")))?;
    Ok(h.snapshot(a, k, func)?)
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
            let (p, n, t) = raw(snap, F)?;
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
            // A worker's view is released (unmapped, acknowledged) when `snap` drops here.
            let snap = snapshot(h, array, k, F)?;
            match snap.elements(F)? {
                Elements::I32(a) => copy_exact(a, out as *mut i32, len, F),
                Elements::I64(a) => copy_exact(a, out as *mut i64, len, F),
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
