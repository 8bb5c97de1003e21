//! Helpers for tests that call the C ABI's exported functions from Rust.
#![allow(dead_code)]

use dyng::ffi::*;
use std::ptr;

/// The calling thread's last error message.
pub fn last_error() -> String {
    let mut buf = vec![0u8; 1024];
    // SAFETY: buf is writable for its length.
    let len = unsafe { dyng_last_error_message(buf.as_mut_ptr() as *mut _, buf.len()) };
    buf.truncate(len.min(buf.len()).saturating_sub(1));
    String::from_utf8_lossy(&buf).into_owned()
}

/// `Ok` for `DYNG_OK`, else the status and the last error message.
pub fn ok(s: dyng_status_t, what: &str) -> Result<(), String> {
    if s == DYNG_OK {
        return Ok(());
    }
    Err(format!("{what}: status {s}: {}", last_error()))
}

/// Copies a view of `array`/`k` of `r` out (and releases the view).
///
/// # Safety
/// `res` and `r` are live handles.
pub unsafe fn view<T: Copy>(
    res: *const dyng_resources_t,
    r: *const dyng_result_t,
    array: u32,
    k: u32,
) -> Result<Vec<T>, String> {
    let mut v = ptr::null_mut();
    // SAFETY: caller contract; `v` is writable.
    ok(unsafe { dyng_result_view(res, r, array, k, &mut v) }, "dyng_result_view")?;
    let (mut data, mut len, mut dtype) = (ptr::null(), 0usize, 0u32);
    // SAFETY: `v` is the live view just created; the outs are writable.
    ok(unsafe { dyng_view_data(v, &mut data, &mut len, &mut dtype) }, "dyng_view_data")?;
    assert_eq!(std::mem::size_of::<T>(), if dtype == DYNG_DTYPE_INT64 { 8 } else { 4 });
    // SAFETY: the view holds `len` elements of its dtype until released.
    let out = unsafe { std::slice::from_raw_parts(data as *const T, len) }.to_vec();
    // SAFETY: released once, after its last use.
    unsafe { dyng_view_release(v) };
    Ok(out)
}
