//! The one gate every exported function passes through.
//!
//! [`guard`] runs an entry point's body inside `catch_unwind`, turns its `Result` into a
//! `dyng_status_t`, and stores the message of a failure as the calling thread's last error. The
//! helpers below turn raw C arguments (pointers, counts, enums as `uint32_t`, `struct_size`-
//! versioned structs) into checked Rust values, so entry points never touch a raw pointer twice.

use super::consts::*;
use crate::error::Error;
use std::cell::{Cell, RefCell};
use std::ffi::CString;
use std::panic::{self, AssertUnwindSafe};
use std::sync::Once;

/// Why an entry point failed: a library error, or a NULL argument (which has no `Error` variant
/// because the Rust API cannot receive NULL).
#[derive(Debug)]
pub(crate) enum Fail {
    Null(String),
    /// A handle in use by another call against the header's thread-safety rule (C only: the
    /// Rust API's borrows rule it out).
    Busy(String),
    Lib(Error),
}

impl From<Error> for Fail {
    fn from(e: Error) -> Self {
        Fail::Lib(e)
    }
}

pub(crate) type FfiResult<T = ()> = Result<T, Fail>;

/// Shorthand for an invalid-argument failure.
pub(crate) fn invalid(msg: impl Into<String>) -> Fail {
    Fail::Lib(Error::invalid(msg))
}

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
    /// Depth of entry points running on this thread; the panic hook stays silent while > 0.
    static IN_ENTRY_POINT: Cell<u32> = const { Cell::new(0) };
    /// The message (with location) of the last panic caught on this thread.
    static PANIC_MESSAGE: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Replaces the calling thread's last error message.
pub(crate) fn set_last_error(msg: &str) {
    // An interior NUL would truncate the C string silently; replace it visibly instead.
    let c = CString::new(msg.replace('\0', "\\0")).unwrap_or_default();
    LAST_ERROR.with(|e| *e.borrow_mut() = c);
}

/// Runs `f` with the thread's last error message as bytes (no NUL).
pub(crate) fn with_last_error<R>(f: impl FnOnce(&[u8]) -> R) -> R {
    LAST_ERROR.with(|e| f(e.borrow().as_bytes()))
}

/// Library code never prints: while an entry point runs, the panic hook records the message
/// instead of writing it to stderr. Panics elsewhere in the process reach the previous hook.
fn install_quiet_panic_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if IN_ENTRY_POINT.with(Cell::get) > 0 {
                let msg = match info.payload().downcast_ref::<&str>() {
                    Some(s) => s.to_string(),
                    None => info
                        .payload()
                        .downcast_ref::<String>()
                        .cloned()
                        .unwrap_or_else(|| "non-string panic payload".into()),
                };
                let at = info
                    .location()
                    .map(|l| format!(" at {}:{}", l.file(), l.line()))
                    .unwrap_or_default();
                PANIC_MESSAGE.with(|p| *p.borrow_mut() = Some(format!("{msg}{at}")));
            } else {
                previous(info);
            }
        }));
    });
}

/// Decrements the entry-point depth even if the body unwinds.
struct DepthGuard;

impl DepthGuard {
    fn enter() -> Self {
        IN_ENTRY_POINT.with(|d| d.set(d.get() + 1));
        DepthGuard
    }
}

impl Drop for DepthGuard {
    fn drop(&mut self) {
        IN_ENTRY_POINT.with(|d| d.set(d.get().saturating_sub(1)));
    }
}

/// Runs the body of entry point `name`: `DYNG_OK` on success; otherwise the failure's status, with
/// its message stored as the last error. A panic becomes `DYNG_ERR_PANIC`.
pub(crate) fn guard(name: &str, body: impl FnOnce() -> FfiResult) -> dyng_status_t {
    match catch(name, body) {
        Ok(()) => DYNG_OK,
        Err(status) => status,
    }
}

/// Like [`guard`] for infallible entry points: a failure or panic yields `fallback`.
pub(crate) fn guard_or<T>(name: &str, fallback: T, body: impl FnOnce() -> FfiResult<T>) -> T {
    catch(name, body).unwrap_or(fallback)
}

fn catch<T>(name: &str, body: impl FnOnce() -> FfiResult<T>) -> Result<T, dyng_status_t> {
    install_quiet_panic_hook();
    let depth = DepthGuard::enter();
    let held = super::handle::held_mark();
    // The body only reaches caller memory through raw pointers and our handles; after a panic the
    // handle involved may hold a half-updated value, which the status tells the caller about.
    let outcome = panic::catch_unwind(AssertUnwindSafe(body));
    super::handle::release_held(held);
    drop(depth);
    match outcome {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(Fail::Null(msg))) => {
            set_last_error(&msg);
            Err(DYNG_ERR_NULL_ARGUMENT)
        }
        Ok(Err(Fail::Busy(msg))) => {
            set_last_error(&msg);
            Err(DYNG_ERR_BUSY)
        }
        Ok(Err(Fail::Lib(e))) => {
            set_last_error(&e.to_string());
            Err(e.kind().code())
        }
        Err(_) => {
            let what = PANIC_MESSAGE
                .with(|p| p.borrow_mut().take())
                .unwrap_or_else(|| "unknown panic".into());
            set_last_error(&format!("dyng: panic in {name}: {what}"));
            Err(DYNG_ERR_PANIC)
        }
    }
}

/// Checks that pointer argument `arg` of `func` is not NULL.
pub(crate) fn non_null<T>(p: *const T, func: &str, arg: &str) -> FfiResult<()> {
    if p.is_null() {
        Err(Fail::Null(format!(
            "dyng: {func}: argument `{arg}` is NULL"
        )))
    } else {
        Ok(())
    }
}

/// Borrows `len` elements at `p` (NULL allowed only when `len` is 0).
///
/// # Safety
/// When non-NULL, `p` must point to `len` readable, initialised elements that outlive `'a`.
pub(crate) unsafe fn slice<'a, T>(
    p: *const T,
    len: usize,
    func: &str,
    arg: &str,
) -> FfiResult<&'a [T]> {
    if len == 0 {
        return Ok(&[]);
    }
    non_null(p, func, arg)?;
    // SAFETY: non-NULL, and the caller guarantees `len` readable elements.
    Ok(unsafe { std::slice::from_raw_parts(p, len) })
}

/// Mutably borrows `len` elements at `p` (NULL allowed only when `len` is 0).
///
/// # Safety
/// When non-NULL, `p` must point to `len` writable elements, not aliased during `'a`.
pub(crate) unsafe fn slice_mut<'a, T>(
    p: *mut T,
    len: usize,
    func: &str,
    arg: &str,
) -> FfiResult<&'a mut [T]> {
    if len == 0 {
        return Ok(&mut []);
    }
    non_null(p, func, arg)?;
    // SAFETY: non-NULL, and the caller guarantees `len` writable, unaliased elements.
    Ok(unsafe { std::slice::from_raw_parts_mut(p, len) })
}

/// Converts a signed C vertex or objective id to an index, refusing negatives.
pub(crate) fn index(value: i32, what: &str) -> FfiResult<usize> {
    usize::try_from(value).map_err(|_| invalid(format!("dyng: {what} = {value} is negative")))
}

/// A struct whose first field is `size_t struct_size` and whose later fields are only appended.
///
/// # Safety
/// Implementors must be `#[repr(C)]`, start with a `usize` field, and be valid for any bytes a C
/// caller of the same or an older header can write (integers, pointers, C `bool`s).
pub(crate) unsafe trait Versioned: Copy {
    /// `sizeof` the struct in dyng 0.1, the smallest size a caller may pass.
    const V1_SIZE: usize;
    const NAME: &'static str;
    fn defaults() -> Self;
}

/// `Versioned` for an output struct (`#[derive(Default)]`) whose defaults are zeros but for its
/// `struct_size`: `versioned_output!(type)`, after a `// SAFETY:` comment saying why the type meets
/// the trait's contract.
macro_rules! versioned_output {
    ($t:ident) => {
        unsafe impl $crate::ffi::boundary::Versioned for $t {
            const V1_SIZE: usize = std::mem::size_of::<$t>();
            const NAME: &'static str = stringify!($t);
            fn defaults() -> Self {
                $t {
                    struct_size: std::mem::size_of::<Self>(),
                    ..Default::default()
                }
            }
        }
    };
}
pub(crate) use versioned_output;

fn check_struct_size<T: Versioned>(size: usize, func: &str) -> FfiResult<()> {
    if size < T::V1_SIZE {
        return Err(invalid(format!(
            "dyng: {func}: {}.struct_size = {size}, want at least {} (set it to sizeof({}))",
            T::NAME,
            T::V1_SIZE,
            T::NAME
        )));
    }
    Ok(())
}

/// Reads a versioned input struct: fields the caller's (older) struct lacks keep their defaults;
/// NULL means all defaults.
///
/// # Safety
/// When non-NULL, `p` must point to a readable struct of at least its `struct_size` bytes.
pub(crate) unsafe fn read_versioned<T: Versioned>(p: *const T, func: &str) -> FfiResult<T> {
    let mut value = T::defaults();
    if p.is_null() {
        return Ok(value);
    }
    // SAFETY: every versioned struct starts with `size_t struct_size`.
    let size = unsafe { std::ptr::read(p as *const usize) };
    check_struct_size::<T>(size, func)?;
    let n = size.min(std::mem::size_of::<T>());
    // SAFETY: the caller's struct has `size >= n` readable bytes; `value` has size_of::<T>() >= n;
    // the bytes are a valid prefix of T (see the trait's contract).
    unsafe {
        std::ptr::copy_nonoverlapping(p as *const u8, &mut value as *mut T as *mut u8, n);
    }
    Ok(value)
}

/// The caller's `struct_size` of the output struct at `p` (checked; `p` must not be NULL).
///
/// # Safety
/// `p` must point to at least `size_of::<usize>()` readable bytes.
pub(crate) unsafe fn output_size<T: Versioned>(p: *const T, func: &str) -> FfiResult<usize> {
    // SAFETY: every versioned struct starts with `size_t struct_size`.
    let size = unsafe { std::ptr::read(p as *const usize) };
    check_struct_size::<T>(size, func)?;
    Ok(size)
}

/// Writes `value` into the caller's struct of `size` bytes: the common prefix is copied and
/// `struct_size` is set to the number of bytes dyng filled in.
///
/// # Safety
/// `p` must point to `size` writable bytes (as checked by [`output_size`]).
pub(crate) unsafe fn write_versioned<T: Versioned>(p: *mut T, size: usize, mut value: T) {
    let n = size.min(std::mem::size_of::<T>());
    // SAFETY: `T` starts with its `usize` struct_size field.
    unsafe { std::ptr::write(&mut value as *mut T as *mut usize, n) };
    // SAFETY: the caller's struct has `size >= n` writable bytes.
    unsafe { std::ptr::copy_nonoverlapping(&value as *const T as *const u8, p as *mut u8, n) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_a_status_and_a_message() {
        let status = guard("dyng_test", || panic!("boom {}", 7));
        assert_eq!(status, DYNG_ERR_PANIC);
        with_last_error(|m| {
            let m = std::str::from_utf8(m).unwrap();
            assert!(m.starts_with("dyng: panic in dyng_test: boom 7 at "), "{m}");
        });
        assert_eq!(guard_or("dyng_test", 5, || panic!("x")), 5);
    }

    #[test]
    fn errors_map_to_their_status() {
        let status = guard("t", || Err(Error::StaleResult("old".into()).into()));
        assert_eq!(status, DYNG_ERR_STALE_RESULT);
        let status = guard("t", || non_null(std::ptr::null::<u8>(), "dyng_f", "g"));
        assert_eq!(status, DYNG_ERR_NULL_ARGUMENT);
        with_last_error(|m| assert_eq!(m, b"dyng: dyng_f: argument `g` is NULL"));
    }
}
