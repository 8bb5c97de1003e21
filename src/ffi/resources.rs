//! `dyng_resources_t`: the execution context (backend, thread pool, workspace pool) for C callers.
//!
//! A handle wraps a [`Resources`] (an `Arc`), so `dyng_resources_clone` is cheap and clones share
//! the pools. Options arrive in a `struct_size`-versioned struct; backends and isolation modes that
//! this build lacks are refused with `DYNG_ERR_NOT_SUPPORTED` and a message saying so. The handle
//! holds a `Session`: under `DYNG_ISOLATION_WORKER` its graphs, results and pool calls run in a
//! `dyng-worker` process (shared by clones), which `crate::session` alone deals with.

use super::boundary::{guard, guard_or, invalid, non_null, read_versioned, FfiResult, Versioned};
use super::consts::*;
use super::handle::{self, impl_handle};
use crate::error::Error;
use crate::resources::{backend_available, Backend, Resources, ResourcesOptions};
use crate::session::Session;
use crate::worker::WorkerOptions;
use std::ffi::{c_char, c_void};
use std::time::Duration;

/// The execution context: backend, thread pool, workspace pool. Thread safety: thread-safe; may
/// be shared by any number of threads, and its clones share its pools.
pub struct dyng_resources_t {
    _opaque: [u8; 0],
}

/// What a resources handle holds besides the Rust context.
pub(crate) struct ResourcesHandle {
    /// The context and where its work runs (shared by clones).
    pub(crate) session: Session,
    /// Whether the caller asked for stage timings (kept for the profiler; nothing is recorded yet).
    pub(crate) profile: bool,
}

impl_handle!(dyng_resources_t => ResourcesHandle, 0xD1A6_0001_5E50_0C35);

/// How to create a resources handle. Start from `dyng_resources_options_default()`. Thread
/// safety: plain data.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct dyng_resources_options_t {
    /// `sizeof(dyng_resources_options_t)`.
    pub struct_size: usize,
    /// `DYNG_BACKEND_SEQUENTIAL`, `DYNG_BACKEND_PARALLEL` (default) or `DYNG_BACKEND_CUDA`.
    pub backend: u32,
    /// Threads of the parallel backend; 0 = `OMP_NUM_THREADS` where it is set, else all cores. At
    /// most 1,024, or 4 x the available CPUs where that is more (`DYNG_ERR_INVALID_ARGUMENT`
    /// beyond); `DYNG_ERR_RESOURCE` with the OS error when the system refuses a thread.
    pub num_threads: usize,
    /// CUDA device ordinal.
    pub device: i32,
    /// CUDA stream (`CUstream`); NULL = the per-thread default stream. Must be NULL for host backends.
    pub stream: *mut c_void,
    /// `DYNG_ISOLATION_IN_PROCESS` (default) or `DYNG_ISOLATION_WORKER`.
    pub isolation: u32,
    /// Worker executable; NULL = `$DYNG_WORKER`, else `dyng/dyng-worker` or `dyng-worker` beside
    /// the library (an installed library has it in `LIBDIR/dyng/`). It must be owned by the caller
    /// or root and not writable by others, nor any folder above it (`DYNG_ERR_NOT_SUPPORTED`
    /// naming the reason).
    pub worker_path: *const c_char,
    /// Milliseconds to wait for the worker's handshake; 0 = the default (30 s).
    pub worker_start_timeout_ms: u32,
    /// Milliseconds to wait for one worker call; 0 = no limit.
    pub worker_call_timeout_ms: u32,
    /// Record stage timings.
    pub profile: bool,
    /// `DYNG_WORKER_*` flags of worker isolation (0 = none): `DYNG_WORKER_CHECKSUMS`. Added
    /// after dyng 0.1 (a caller's older, smaller struct leaves it 0); 64 bits wide so that the
    /// struct grows and an old caller's trailing padding is never read as flags.
    pub worker_flags: u64,
}

// SAFETY: repr(C), starts with `usize struct_size`, every field is valid for any C-written value.
unsafe impl Versioned for dyng_resources_options_t {
    /// dyng 0.1's struct ended with `profile` and its padding, where `worker_flags` begins.
    const V1_SIZE: usize = std::mem::offset_of!(dyng_resources_options_t, worker_flags);
    const NAME: &'static str = "dyng_resources_options_t";
    fn defaults() -> Self {
        dyng_resources_options_t {
            struct_size: std::mem::size_of::<Self>(),
            backend: DYNG_BACKEND_PARALLEL,
            num_threads: 0,
            device: 0,
            stream: std::ptr::null_mut(),
            isolation: DYNG_ISOLATION_IN_PROCESS,
            worker_path: std::ptr::null(),
            worker_start_timeout_ms: 0,
            worker_call_timeout_ms: 0,
            profile: false,
            worker_flags: 0,
        }
    }
}

pub(crate) fn backend_from(value: u32, func: &str) -> FfiResult<Backend> {
    match value {
        DYNG_BACKEND_SEQUENTIAL => Ok(Backend::Sequential),
        DYNG_BACKEND_PARALLEL => Ok(Backend::Parallel),
        DYNG_BACKEND_CUDA => Ok(Backend::Cuda),
        v => Err(invalid(format!(
            "dyng: {func}: backend = {v} is not a DYNG_BACKEND_* value (0, 1 or 2)"
        ))),
    }
}

fn build(opt: &dyng_resources_options_t) -> FfiResult<ResourcesHandle> {
    const F: &str = "dyng_resources_create";
    let backend = backend_from(opt.backend, F)?;
    let worker = match opt.isolation {
        DYNG_ISOLATION_IN_PROCESS => false,
        DYNG_ISOLATION_WORKER => true,
        v => {
            return Err(invalid(format!(
                "dyng: {F}: isolation = {v} is not a DYNG_ISOLATION_* value (0 or 1)"
            )))
        }
    };
    if backend != Backend::Cuda && !opt.stream.is_null() {
        return Err(invalid(format!(
            "dyng: {F}: a stream was given for a host backend; streams apply to DYNG_BACKEND_CUDA only"
        )));
    }
    if !worker {
        let res = Resources::new(&ResourcesOptions {
            backend,
            num_threads: opt.num_threads,
            device: opt.device,
        })?;
        return Ok(ResourcesHandle { session: Session::local(res), profile: opt.profile });
    }
    if !opt.stream.is_null() {
        return Err(Error::NotSupported(format!(
            "dyng: {F}: a CUDA stream cannot be shared with a worker process; pass stream = NULL"
        ))
        .into());
    }
    let worker_path = if opt.worker_path.is_null() {
        None
    } else {
        // SAFETY: non-NULL, NUL-terminated (the options' documented contract).
        Some(unsafe { super::graph::c_path(opt.worker_path) })
    };
    if opt.worker_flags & !DYNG_WORKER_CHECKSUMS != 0 {
        return Err(invalid(format!(
            "dyng: {F}: worker_flags = {:#x} has bits other than DYNG_WORKER_CHECKSUMS (1)",
            opt.worker_flags
        )));
    }
    let mut wopt = WorkerOptions {
        worker_path,
        checksums: opt.worker_flags & DYNG_WORKER_CHECKSUMS != 0,
        ..WorkerOptions::default()
    };
    if opt.worker_start_timeout_ms != 0 {
        wopt.spawn_timeout = Duration::from_millis(opt.worker_start_timeout_ms.into());
    }
    if opt.worker_call_timeout_ms != 0 {
        wopt.call_timeout = Some(Duration::from_millis(opt.worker_call_timeout_ms.into()));
    }
    Ok(ResourcesHandle { session: Session::worker(backend, wopt)?, profile: opt.profile })
}

/// Borrows the Rust context behind `res`.
///
/// # Safety
/// `res` must be NULL or a dyng handle.
pub(crate) unsafe fn resources<'a>(
    res: *const dyng_resources_t,
    func: &str,
) -> FfiResult<&'a Resources> {
    // SAFETY: forwarded contract.
    Ok(unsafe { handle::get(res, func, "res") }?.session.resources())
}

/// Borrows the whole resources handle (the session).
///
/// # Safety
/// `res` must be NULL or a dyng handle.
pub(crate) unsafe fn resources_handle<'a>(
    res: *const dyng_resources_t,
    func: &str,
) -> FfiResult<&'a ResourcesHandle> {
    // SAFETY: forwarded contract.
    unsafe { handle::get(res, func, "res") }
}

/// Returns the default options (parallel backend on all cores, in process, no profiling).
/// Thread safety: thread-safe.
#[no_mangle]
pub extern "C" fn dyng_resources_options_default() -> dyng_resources_options_t {
    dyng_resources_options_t::defaults()
}

/// Creates a resources handle from `opt` (NULL = defaults) into `*out`. `DYNG_BACKEND_CUDA` loads
/// the NVIDIA driver and NVRTC 13 at run time: without them (or without a device) the call
/// returns `DYNG_ERR_NOT_SUPPORTED`, naming what is missing (`dyng_backend_available` asks first).
/// With `DYNG_ISOLATION_WORKER` the worker executable is located now (`worker_path`, else
/// `$DYNG_WORKER`, else `dyng/dyng-worker` or `dyng-worker` beside the library;
/// `DYNG_ERR_NOT_SUPPORTED` if none is found) and spawned on first use or by
/// `dyng_resources_warm_up`; clones share it; the worker runs `backend` (the parallel backend
/// on all of the worker's cores: `num_threads` is not passed on). Thread safety: thread-safe.
///
/// # Safety
/// `opt` is NULL or a readable options struct; `out` is a writable pointer.
#[no_mangle]
pub unsafe extern "C" fn dyng_resources_create(
    opt: *const dyng_resources_options_t,
    out: *mut *mut dyng_resources_t,
) -> dyng_status_t {
    guard("dyng_resources_create", || {
        non_null(out, "dyng_resources_create", "out")?;
        // SAFETY: NULL or a readable versioned struct (caller contract).
        let opt = unsafe { read_versioned(opt, "dyng_resources_create")? };
        let h = build(&opt)?;
        // SAFETY: `out` is non-NULL and writable (caller contract).
        unsafe { *out = handle::into_handle::<dyng_resources_t>(h) };
        Ok(())
    })
}

/// Creates `*out`, a new handle sharing `res`'s backend, thread pool and workspace pool; free both.
/// Thread safety: thread-safe.
///
/// # Safety
/// `res` is NULL or a dyng handle; `out` is a writable pointer.
#[no_mangle]
pub unsafe extern "C" fn dyng_resources_clone(
    res: *const dyng_resources_t,
    out: *mut *mut dyng_resources_t,
) -> dyng_status_t {
    guard("dyng_resources_clone", || {
        // SAFETY: NULL or a dyng handle (caller contract).
        let h = unsafe { handle::get(res, "dyng_resources_clone", "res")? };
        non_null(out, "dyng_resources_clone", "out")?;
        let copy = ResourcesHandle { session: h.session.clone(), profile: h.profile };
        // SAFETY: `out` is non-NULL and writable.
        unsafe { *out = handle::into_handle::<dyng_resources_t>(copy) };
        Ok(())
    })
}

/// Frees a resources handle; the shared pools live on while a clone, graph or result uses them.
/// NULL is a no-op. Thread safety: no other thread may use this handle (clones are unaffected).
///
/// # Safety
/// `res` is NULL or a dyng handle not in use elsewhere.
#[no_mangle]
pub unsafe extern "C" fn dyng_resources_free(res: *mut dyng_resources_t) {
    // SAFETY: forwarded contract.
    guard("dyng_resources_free", || unsafe {
        handle::free(res, "dyng_resources_free")
    });
}

/// Allocates, now, the workspace the host-side calls on caller arrays (`dyng_sosp_update_arrays`,
/// `dyng_sosp_solve_arrays`) need for graphs of up to `n` vertices (38 bytes per vertex), so that
/// their first call does not pay for it (the originals allocate theirs before the first update, in
/// `SospWorkspace::reserve`), and the ring of buckets a one-thread search queues on (a static
/// solve, or a repair that reaches most of the tree) at its least size, 64 buckets of 16 entries
/// (4 KB): a search whose buckets hold more grows them, and they keep the room (17 KB on a
/// 129K-vertex road network after a static solve), so that growth ends once the searches of a
/// graph have met their largest buckets. It stays in the pool like any idle workspace. Thread
/// safety: thread-safe.
///
/// # Safety
/// `res` is NULL or a dyng handle.
#[no_mangle]
pub unsafe extern "C" fn dyng_reserve_workspace(res: *const dyng_resources_t, n: usize) -> dyng_status_t {
    guard("dyng_reserve_workspace", || {
        // SAFETY: forwarded contract.
        let r = unsafe { resources(res, "dyng_reserve_workspace")? };
        r.reserve_workspace(n);
        Ok(())
    })
}

/// Frees the idle workspaces of the pool shared by `res` and its clones (worker isolation: the
/// worker's idle workspaces and free reply blocks, once it is spawned). Graphs keep their own
/// rows. Thread safety: thread-safe.
///
/// # Safety
/// `res` is NULL or a dyng handle.
#[no_mangle]
pub unsafe extern "C" fn dyng_release_workspaces(res: *const dyng_resources_t) -> dyng_status_t {
    guard("dyng_release_workspaces", || {
        // SAFETY: forwarded contract.
        let h = unsafe { resources_handle(res, "dyng_release_workspaces")? };
        Ok(h.session.release_workspaces()?)
    })
}

/// Writes to `*out` the bytes held by idle workspaces of `res`'s pool (worker isolation: the
/// worker's idle workspaces, 0 before it is spawned). A graph's own memory is not pool memory.
/// Thread safety: thread-safe.
///
/// # Safety
/// `res` is NULL or a dyng handle; `out` is a writable pointer.
#[no_mangle]
pub unsafe extern "C" fn dyng_workspace_bytes(
    res: *const dyng_resources_t,
    out: *mut usize,
) -> dyng_status_t {
    guard("dyng_workspace_bytes", || {
        // SAFETY: forwarded contract.
        let h = unsafe { resources_handle(res, "dyng_workspace_bytes")? };
        non_null(out, "dyng_workspace_bytes", "out")?;
        let bytes = h.session.workspace_bytes()?;
        // SAFETY: non-NULL, writable.
        unsafe { *out = bytes };
        Ok(())
    })
}

/// Prepares the backend ahead of the first call (CUDA: context, kernels; worker: spawn and
/// handshake, which otherwise happen on the first call that needs the worker). Host backends need
/// nothing and return `DYNG_OK`. Thread safety: thread-safe.
///
/// # Safety
/// `res` is NULL or a dyng handle.
#[no_mangle]
pub unsafe extern "C" fn dyng_resources_warm_up(res: *const dyng_resources_t) -> dyng_status_t {
    guard("dyng_resources_warm_up", || {
        // SAFETY: forwarded contract.
        let h = unsafe { resources_handle(res, "dyng_resources_warm_up")? };
        Ok(h.session.warm_up()?)
    })
}

/// Whether `backend` (a `DYNG_BACKEND_*` value) can be used on this machine and build; false for
/// unknown values. Thread safety: thread-safe.
#[no_mangle]
pub extern "C" fn dyng_backend_available(backend: u32) -> bool {
    guard_or("dyng_backend_available", false, || {
        Ok(backend_available(backend_from(
            backend,
            "dyng_backend_available",
        )?))
    })
}
