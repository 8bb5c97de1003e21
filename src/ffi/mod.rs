//! The C ABI (`libdyng`): a thin, safe boundary over the Rust API, described by `include/dyng.h`.
//!
//! Every exported function runs through `boundary::guard` (panics caught, errors mapped to a
//! stable `dyng_status_t`, the message kept per thread), checks its pointers, enums and handle tags,
//! and writes outputs only on success. Conventions and names are those of `docs/c-api.md`; there is one
//! file per handle type. The header is generated from this module by cbindgen.

#![allow(non_camel_case_types)]
#![allow(clippy::missing_safety_doc)] // every function's `# Safety` section is in its doc comment

mod batch;
pub(crate) mod boundary;
mod consts;
mod graph;
pub(crate) mod handle;
mod resources;
mod result;
mod sosp;
mod view;

pub use batch::*;
pub use consts::*;
pub use graph::*;
pub use resources::*;
pub use result::*;
pub use sosp::*;
pub use view::*;

use std::ffi::c_char;

/// Returns the library version ("0.1.0"), a static NUL-terminated string. Thread safety:
/// thread-safe.
#[no_mangle]
pub extern "C" fn dyng_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr() as *const c_char
}

/// Returns a static, NUL-terminated name for `status` (e.g. "DYNG_ERR_STALE_RESULT"), or
/// "DYNG_ERR_UNKNOWN" for a value this version does not know. Thread safety: thread-safe.
#[no_mangle]
pub extern "C" fn dyng_status_string(status: dyng_status_t) -> *const c_char {
    let s: &'static str = match status {
        DYNG_OK => "DYNG_OK\0",
        DYNG_ERR_NULL_ARGUMENT => "DYNG_ERR_NULL_ARGUMENT\0",
        DYNG_ERR_INVALID_ARGUMENT => "DYNG_ERR_INVALID_ARGUMENT\0",
        DYNG_ERR_STALE_RESULT => "DYNG_ERR_STALE_RESULT\0",
        DYNG_ERR_IO => "DYNG_ERR_IO\0",
        DYNG_ERR_CAPACITY => "DYNG_ERR_CAPACITY\0",
        DYNG_ERR_NOT_SUPPORTED => "DYNG_ERR_NOT_SUPPORTED\0",
        DYNG_ERR_OUT_OF_MEMORY => "DYNG_ERR_OUT_OF_MEMORY\0",
        DYNG_ERR_CUDA => "DYNG_ERR_CUDA\0",
        DYNG_ERR_WORKER_LOST => "DYNG_ERR_WORKER_LOST\0",
        DYNG_ERR_TIMEOUT => "DYNG_ERR_TIMEOUT\0",
        DYNG_ERR_PROTOCOL => "DYNG_ERR_PROTOCOL\0",
        DYNG_ERR_INTERNAL => "DYNG_ERR_INTERNAL\0",
        DYNG_ERR_PANIC => "DYNG_ERR_PANIC\0",
        DYNG_ERR_RESOURCE => "DYNG_ERR_RESOURCE\0",
        DYNG_ERR_BUSY => "DYNG_ERR_BUSY\0",
        _ => "DYNG_ERR_UNKNOWN\0",
    };
    s.as_ptr() as *const c_char
}

/// Copies the calling thread's last error message into `buf` (NUL-terminated, truncated to `cap`
/// bytes; `buf` may be NULL when `cap` is 0) and returns the buffer size the whole message needs,
/// terminator included (1 when no call on this thread has failed yet). Successful calls leave the
/// message as it was. Thread safety: thread-safe (each thread has its own message).
///
/// # Safety
/// `buf` is NULL or holds `cap` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn dyng_last_error_message(buf: *mut c_char, cap: usize) -> usize {
    boundary::with_last_error(|msg| {
        if !buf.is_null() && cap > 0 {
            let n = msg.len().min(cap - 1);
            // SAFETY: `buf` holds `cap > n` writable bytes (caller contract).
            unsafe {
                std::ptr::copy_nonoverlapping(msg.as_ptr(), buf as *mut u8, n);
                *buf.add(n) = 0;
            }
        }
        msg.len() + 1
    })
}
