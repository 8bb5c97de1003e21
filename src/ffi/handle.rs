//! Opaque handles with magic tags, and the quarantine that makes use-after-free detectable.
//!
//! A C handle points to a `Tagged<T>`: a per-type magic word at offset 0, then the value. Every
//! entry point checks the tag, so a wrong-type handle or a freed one is reported as
//! `DYNG_ERR_INVALID_ARGUMENT` instead of being used. Freeing drops the value at once but keeps the
//! small shell (tag set to a dead value) in a bounded quarantine, so reading the tag of a recently
//! freed handle reads memory that is still ours rather than memory the allocator reused.

use super::boundary::{invalid, non_null, FfiResult};
use parking_lot::Mutex;
use std::any::Any;
use std::collections::VecDeque;

/// The tag of a freed handle.
const DEAD: u64 = 0xDEAD_D1F6_DEAD_D1F6;

/// How many freed shells are kept before the oldest is returned to the allocator.
const QUARANTINE_LEN: usize = 4096;

/// The memory a handle pointer points to. `repr(C)` pins the tag at offset 0 for every `T`.
#[repr(C)]
pub(crate) struct Tagged<T> {
    magic: u64,
    value: Option<T>,
}

/// Ties an opaque C handle type to the Rust value it stands for.
pub(crate) trait Handle: Sized {
    type Inner: Send + 'static;
    /// Distinct per handle type.
    const MAGIC: u64;
    /// The C type name, for messages.
    const NAME: &'static str;
}

static QUARANTINE: Mutex<VecDeque<Box<dyn Any + Send>>> = Mutex::new(VecDeque::new());

/// Moves `value` to the heap and returns it as a handle of type `H`.
pub(crate) fn into_handle<H: Handle>(value: H::Inner) -> *mut H {
    Box::into_raw(Box::new(Tagged {
        magic: H::MAGIC,
        value: Some(value),
    })) as *mut H
}

/// Reads the tag of `p` and explains a mismatch.
///
/// # Safety
/// `p` must be non-NULL and point to at least 8 readable bytes (any dyng handle, live or
/// quarantined, qualifies).
unsafe fn check_tag<H: Handle>(p: *const H, func: &str, arg: &str) -> FfiResult<()> {
    // SAFETY: see the function's contract; handles are 8-aligned heap blocks.
    let magic = unsafe { std::ptr::read(p as *const u64) };
    match magic {
        m if m == H::MAGIC => Ok(()),
        DEAD => Err(invalid(format!(
            "dyng: {func}: `{arg}` is a {} that was already freed",
            H::NAME
        ))),
        _ => Err(invalid(format!(
            "dyng: {func}: `{arg}` is not a live {} (wrong handle type or corrupted pointer)",
            H::NAME
        ))),
    }
}

/// Borrows the value behind handle `p` after checking NULL and the tag.
///
/// # Safety
/// `p` must be NULL or a pointer returned by dyng (of any handle type) that nobody mutates during
/// `'a`.
pub(crate) unsafe fn get<'a, H: Handle>(
    p: *const H,
    func: &str,
    arg: &str,
) -> FfiResult<&'a H::Inner> {
    non_null(p, func, arg)?;
    // SAFETY: non-NULL dyng handle (function contract).
    unsafe { check_tag(p, func, arg)? };
    // SAFETY: the tag proves `p` points to a live `Tagged<H::Inner>`.
    let tagged = unsafe { &*(p as *const Tagged<H::Inner>) };
    tagged
        .value
        .as_ref()
        .ok_or_else(|| invalid(format!("dyng: {func}: `{arg}` is an empty {}", H::NAME)))
}

/// Mutably borrows the value behind handle `p` after checking NULL and the tag.
///
/// # Safety
/// As [`get`], and nobody else uses the handle during `'a`.
pub(crate) unsafe fn get_mut<'a, H: Handle>(
    p: *mut H,
    func: &str,
    arg: &str,
) -> FfiResult<&'a mut H::Inner> {
    non_null(p, func, arg)?;
    // SAFETY: non-NULL dyng handle (function contract).
    unsafe { check_tag(p, func, arg)? };
    // SAFETY: the tag proves `p` points to a live `Tagged<H::Inner>`; exclusive per the contract.
    let tagged = unsafe { &mut *(p as *mut Tagged<H::Inner>) };
    tagged
        .value
        .as_mut()
        .ok_or_else(|| invalid(format!("dyng: {func}: `{arg}` is an empty {}", H::NAME)))
}

/// Destroys handle `p`: NULL is a no-op; a freed or wrong-type handle is left alone and reported.
///
/// # Safety
/// `p` must be NULL or a pointer returned by dyng that no other thread uses.
pub(crate) unsafe fn free<H: Handle>(p: *mut H, func: &str) -> FfiResult<()> {
    if p.is_null() {
        return Ok(());
    }
    // SAFETY: non-NULL dyng handle (function contract).
    unsafe { check_tag(p, func, "handle")? };
    // SAFETY: the tag proves this is a live `Tagged<H::Inner>` allocated by `into_handle`.
    let mut shell = unsafe { Box::from_raw(p as *mut Tagged<H::Inner>) };
    shell.magic = DEAD;
    let value = shell.value.take();
    quarantine(shell);
    // Dropped last: a panic in a destructor must not leave the shell outside the quarantine.
    drop(value);
    Ok(())
}

fn quarantine<T: Send + 'static>(shell: Box<Tagged<T>>) {
    let evicted = {
        let mut q = QUARANTINE.lock();
        q.push_back(shell);
        if q.len() > QUARANTINE_LEN {
            q.pop_front()
        } else {
            None
        }
    };
    drop(evicted);
}

/// Ties opaque C handle type `$name` (declared in plain Rust so cbindgen sees it) to `$inner`.
macro_rules! impl_handle {
    ($name:ident => $inner:ty, $magic:expr) => {
        impl $crate::ffi::handle::Handle for $name {
            type Inner = $inner;
            const MAGIC: u64 = $magic;
            const NAME: &'static str = stringify!($name);
        }
    };
}
pub(crate) use impl_handle;
