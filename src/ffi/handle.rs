//! Opaque handles with magic tags, in-use counters, and the quarantine that makes use-after-free
//! detectable.
//!
//! A C handle points to a `Tagged<T>`: a per-type magic word at offset 0, an in-use counter, then
//! the value. Every entry point checks the tag, so a wrong-type handle or a freed one is reported
//! as `DYNG_ERR_INVALID_ARGUMENT` instead of being used. Freeing drops the value at once but keeps
//! the small shell (tag set to a dead value) in a bounded quarantine, so reading the tag of a
//! recently freed handle reads memory that is still ours rather than memory the allocator reused.
//!
//! The counter enforces the header's thread-safety rule: a handle a call reads ([`get`]) counts
//! one reader, a handle a call changes or frees ([`get_mut`], [`free`]) takes the writer bit, and
//! either fails with `DYNG_ERR_BUSY` when the other is held, so forbidden concurrent use is an
//! error instead of a data race (a double free under AddressSanitizer). What a call took is
//! released when it returns (`release_held`, run by the boundary's guard, panics included).

use super::boundary::{invalid, non_null, FfiResult, Fail};
use parking_lot::Mutex;
use std::any::Any;
use std::cell::RefCell;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU32, Ordering};

/// The tag of a freed handle.
const DEAD: u64 = 0xDEAD_D1F6_DEAD_D1F6;

/// How many freed shells are kept before the oldest is returned to the allocator.
const QUARANTINE_LEN: usize = 4096;

/// The in-use counter's writer bit; the bits below count readers.
const WRITER: u32 = 1 << 31;

/// The memory a handle pointer points to. `repr(C)` pins the tag at offset 0 for every `T`.
#[repr(C)]
pub(crate) struct Tagged<T> {
    magic: u64,
    /// Readers in calls now, plus [`WRITER`] while a call changes or frees the value (kept set on
    /// a freed shell, so a call that read the live tag just before the free sees it).
    users: AtomicU32,
    value: Option<T>,
}

thread_local! {
    /// What the calls running on this thread took: (counter address, amount to give back).
    static HELD: RefCell<Vec<(usize, u32)>> = const { RefCell::new(Vec::new()) };
}

/// How many takes this thread holds; the guard gives back everything above it when a call ends.
pub(crate) fn held_mark() -> usize {
    HELD.with(|h| h.borrow().len())
}

/// Gives back what was taken since `mark` (see [`held_mark`]).
pub(crate) fn release_held(mark: usize) {
    HELD.with(|h| {
        let mut h = h.borrow_mut();
        for (counter, amount) in h.drain(mark..) {
            // SAFETY: the counter belongs to a handle this thread holds in use, which nobody can
            // free meanwhile (freeing needs the counter at 0).
            unsafe { &*(counter as *const AtomicU32) }.fetch_sub(amount, Ordering::Release);
        }
    });
}

fn busy(func: &str, arg: &str, name: &str, writing: bool) -> Fail {
    let what = if writing { "this call changes or frees it" } else { "this call reads it" };
    Fail::Busy(format!(
        "dyng: {func}: `{arg}` ({name}) is in use by another call and {what}; a handle that \
         dyng_update changes or a _free destroys must not be used by any other thread meanwhile \
         (the Thread safety rule of its type in dyng.h)"
    ))
}

/// Counts one reader on `users`, or fails when a call holds the writer bit.
fn take_shared(users: &AtomicU32, func: &str, arg: &str, name: &str) -> FfiResult<()> {
    if users.fetch_add(1, Ordering::Acquire) & WRITER != 0 {
        users.fetch_sub(1, Ordering::Release);
        return Err(busy(func, arg, name, false));
    }
    HELD.with(|h| h.borrow_mut().push((users as *const AtomicU32 as usize, 1)));
    Ok(())
}

/// Takes the writer bit of `users`, or fails when any call holds the handle.
fn take_exclusive(users: &AtomicU32, func: &str, arg: &str, name: &str) -> FfiResult<()> {
    users
        .compare_exchange(0, WRITER, Ordering::Acquire, Ordering::Relaxed)
        .map_err(|_| busy(func, arg, name, true))?;
    HELD.with(|h| h.borrow_mut().push((users as *const AtomicU32 as usize, WRITER)));
    Ok(())
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
        users: AtomicU32::new(0),
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

/// Borrows the value behind handle `p` after checking NULL and the tag, counting the running call
/// as a reader until it returns (`DYNG_ERR_BUSY` while another call changes or frees it).
///
/// # Safety
/// `p` must be NULL or a pointer returned by dyng (of any handle type); `'a` must not outlive the
/// running entry point.
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
    take_shared(&tagged.users, func, arg, H::NAME)?;
    tagged
        .value
        .as_ref()
        .ok_or_else(|| invalid(format!("dyng: {func}: `{arg}` is an empty {}", H::NAME)))
}

/// Mutably borrows the value behind handle `p` after checking NULL and the tag, holding the
/// writer bit until the running call returns (`DYNG_ERR_BUSY` while another call uses it).
///
/// # Safety
/// As [`get`].
pub(crate) unsafe fn get_mut<'a, H: Handle>(
    p: *mut H,
    func: &str,
    arg: &str,
) -> FfiResult<&'a mut H::Inner> {
    non_null(p, func, arg)?;
    // SAFETY: non-NULL dyng handle (function contract).
    unsafe { check_tag(p, func, arg)? };
    // SAFETY: the tag proves `p` points to a live `Tagged<H::Inner>`.
    let users = unsafe { &(*(p as *const Tagged<H::Inner>)).users };
    take_exclusive(users, func, arg, H::NAME)?;
    // SAFETY: the writer bit makes this call the only user of the value until it returns.
    let tagged = unsafe { &mut *(p as *mut Tagged<H::Inner>) };
    tagged
        .value
        .as_mut()
        .ok_or_else(|| invalid(format!("dyng: {func}: `{arg}` is an empty {}", H::NAME)))
}

/// Destroys handle `p`: NULL is a no-op; a freed or wrong-type handle, or one another call is
/// using (`DYNG_ERR_BUSY`), is left alone and reported.
///
/// # Safety
/// `p` must be NULL or a pointer returned by dyng.
pub(crate) unsafe fn free<H: Handle>(p: *mut H, func: &str) -> FfiResult<()> {
    if p.is_null() {
        return Ok(());
    }
    // SAFETY: non-NULL dyng handle (function contract).
    unsafe { check_tag(p, func, "handle")? };
    // SAFETY: the tag proves `p` points to a live `Tagged<H::Inner>`.
    let users = unsafe { &(*(p as *const Tagged<H::Inner>)).users };
    // Never given back: the shell keeps the writer bit for the calls that read the live tag just
    // before the free.
    users
        .compare_exchange(0, WRITER, Ordering::Acquire, Ordering::Relaxed)
        .map_err(|_| busy(func, "handle", H::NAME, true))?;
    // SAFETY: the tag proves this is a live `Tagged<H::Inner>` allocated by `into_handle`, and
    // the writer bit that nobody else uses it.
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ffi::boundary::guard;
    use crate::ffi::consts::*;
    use std::sync::Barrier;

    struct Thing {
        _opaque: [u8; 0],
    }
    impl_handle!(Thing => Vec<u32>, 0xD1A6_00FF_7E57_0C35);

    /// A handle some call reads cannot be changed or freed meanwhile, and a handle some call
    /// changes cannot be read; once the calls return, all of it works again.
    #[test]
    fn a_handle_in_use_refuses_a_writer_and_is_released_on_return() {
        let p = into_handle::<Thing>(vec![1, 2, 3]) as usize;
        let (inside, done) = (Barrier::new(2), Barrier::new(2));
        std::thread::scope(|s| {
            s.spawn(|| {
                // SAFETY (test): a live handle of this type.
                let st = guard("reader", || unsafe {
                    let v = get::<Thing>(p as *const Thing, "reader", "t")?;
                    inside.wait();
                    done.wait();
                    assert_eq!(v.len(), 3);
                    Ok(())
                });
                assert_eq!(st, DYNG_OK);
            });
            inside.wait();
            // SAFETY (test): as above.
            unsafe {
                assert_eq!(guard("writer", || get_mut::<Thing>(p as *mut Thing, "writer", "t").map(drop)), DYNG_ERR_BUSY);
                assert_eq!(guard("free", || free::<Thing>(p as *mut Thing, "free")), DYNG_ERR_BUSY);
                // Another reader is fine.
                assert_eq!(guard("reader 2", || get::<Thing>(p as *const Thing, "reader 2", "t").map(drop)), DYNG_OK);
            }
            done.wait();
        });
        // SAFETY (test): as above; everything was given back when the calls returned.
        unsafe {
            assert_eq!(guard("writer", || get_mut::<Thing>(p as *mut Thing, "writer", "t").map(|v| v.push(4))), DYNG_OK);
            assert_eq!(guard("reader", || get::<Thing>(p as *const Thing, "reader", "t").map(|v| assert_eq!(v.len(), 4))), DYNG_OK);
            // A panic in a call gives back what it took too.
            assert_eq!(guard("panics", || { get_mut::<Thing>(p as *mut Thing, "panics", "t")?; panic!("boom") }), DYNG_ERR_PANIC);
            assert_eq!(guard("free", || free::<Thing>(p as *mut Thing, "free")), DYNG_OK);
            assert_eq!(guard("after", || get::<Thing>(p as *const Thing, "after", "t").map(drop)), DYNG_ERR_INVALID_ARGUMENT);
        }
    }
}
