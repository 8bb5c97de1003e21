//! Loading the CUDA libraries and creating the device context and streams.
//!
//! cudarc loads `libcuda` and NVRTC at run time and panics when one is missing, so every entry
//! point first probes the libraries with `dlopen` and turns a missing piece into
//! [`Error::NotSupported`] naming it; calls into cudarc are additionally wrapped in
//! `catch_unwind` as a second line of defence. `DYNG_NVRTC_LIB` may name the NVRTC library file
//! (for example one shipped in the `nvidia-cuda-nvrtc` wheel); it is loaded by path once, and
//! cudarc's later load by name then finds it by its SONAME.

use crate::error::{Error, Result};
use std::ffi::{CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, OnceLock};

pub use cudarc::driver::{CudaContext, CudaStream};

/// The driver library's name (the only name the driver ships under on Linux).
pub const DRIVER_LIBRARY: &str = "libcuda.so.1";

/// NVRTC names tried when `DYNG_NVRTC_LIB` is not set; each is one that cudarc also tries, so a
/// successful probe means cudarc's own load succeeds.
pub const NVRTC_LIBRARIES: &[&str] = &["libnvrtc.so.13", "libnvrtc.so"];

/// The environment variable naming an NVRTC library file to load by path.
pub const NVRTC_ENV: &str = "DYNG_NVRTC_LIB";

/// Opens a shared library and keeps it loaded for the life of the process (the handle is never
/// closed: cudarc holds its own handle to the same object, and unloading CUDA libraries while
/// kernels or programs exist is undefined). `global` exports its symbols for later loads.
fn dlopen_keep(name: &str, global: bool) -> std::result::Result<(), String> {
    let c_name = CString::new(name).map_err(|_| format!("{name:?} contains a NUL byte"))?;
    let flags = libc::RTLD_NOW | if global { libc::RTLD_GLOBAL } else { libc::RTLD_LOCAL };
    // SAFETY: `c_name` is a valid NUL-terminated string that outlives the call; dlopen runs the
    // library's initialisers, which for the CUDA libraries have no preconditions.
    let handle = unsafe { libc::dlopen(c_name.as_ptr(), flags) };
    if handle.is_null() {
        // SAFETY: dlerror returns NULL or a pointer to a NUL-terminated string owned by libc,
        // valid until the next dl* call on this thread; it is copied at once.
        let reason = unsafe {
            let e = libc::dlerror();
            if e.is_null() {
                "unknown dlopen error".to_string()
            } else {
                CStr::from_ptr(e).to_string_lossy().into_owned()
            }
        };
        return Err(reason);
    }
    Ok(())
}

/// Probes the driver library once per process.
pub fn probe_driver() -> Result<()> {
    static PROBE: OnceLock<std::result::Result<(), String>> = OnceLock::new();
    PROBE
        .get_or_init(|| dlopen_keep(DRIVER_LIBRARY, false))
        .clone()
        .map_err(|why| {
            Error::NotSupported(format!(
                "dyng: CUDA driver library {DRIVER_LIBRARY} not found ({why}); install the NVIDIA driver or run on a machine with a GPU"
            ))
        })
}

/// Probes NVRTC once per process: the file named by `DYNG_NVRTC_LIB` if set, else the usual
/// names on the loader path. Returns the name or path that was loaded.
pub fn probe_nvrtc() -> Result<String> {
    static PROBE: OnceLock<std::result::Result<String, String>> = OnceLock::new();
    PROBE
        .get_or_init(|| {
            if let Some(path) = std::env::var_os(NVRTC_ENV) {
                let path = path.to_string_lossy().into_owned();
                // NVRTC opens its builtins library by name at compile time; wheels ship it next
                // to libnvrtc without a RUNPATH, so it is preloaded from the same folder (a later
                // load by name then matches its SONAME). Missing builtins surface as a compile
                // error naming the file, so a failure here is not fatal.
                if let Some(dir) = std::path::Path::new(&path).parent() {
                    if let Ok(entries) = std::fs::read_dir(dir) {
                        for entry in entries.flatten() {
                            let name = entry.file_name().to_string_lossy().into_owned();
                            if name.starts_with("libnvrtc-builtins.so") {
                                let _ = dlopen_keep(&entry.path().to_string_lossy(), true);
                            }
                        }
                    }
                }
                // Global, so that NVRTC's own dlopen of its builtins and cudarc's load by SONAME
                // both resolve to this object.
                return dlopen_keep(&path, true)
                    .map(|()| path.clone())
                    .map_err(|why| format!("{NVRTC_ENV}={path} cannot be loaded: {why}"));
            }
            let mut reasons = Vec::new();
            for name in NVRTC_LIBRARIES {
                match dlopen_keep(name, true) {
                    Ok(()) => return Ok((*name).to_string()),
                    Err(why) => reasons.push(why),
                }
            }
            Err(format!(
                "tried {}: {}",
                NVRTC_LIBRARIES.join(", "),
                reasons.join("; ")
            ))
        })
        .clone()
        .map_err(|why| {
            Error::NotSupported(format!(
                "dyng: NVRTC library not found ({why}); install the CUDA 13 toolkit or the `nvidia-cuda-nvrtc` wheel and set {NVRTC_ENV} or LD_LIBRARY_PATH"
            ))
        })
}

/// Runs a closure that calls into cudarc, turning a panic (cudarc panics on a missing symbol or
/// library) into an error instead of unwinding into the caller.
pub fn guarded<T>(what: &str, f: impl FnOnce() -> Result<T>) -> Result<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(payload) => {
            let msg = payload
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| payload.downcast_ref::<&str>().copied())
                .unwrap_or("panic without a message");
            Err(Error::Cuda(format!("dyng: CUDA call failed in {what}: {msg}")))
        }
    }
}

/// Maps a driver error to [`Error::Cuda`] (out of memory to [`Error::OutOfMemory`]).
pub fn driver_error(what: &str, e: cudarc::driver::DriverError) -> Error {
    use cudarc::driver::sys::CUresult;
    if e.0 == CUresult::CUDA_ERROR_OUT_OF_MEMORY {
        Error::OutOfMemory(format!("dyng: {what}: device out of memory"))
    } else {
        Error::Cuda(format!("dyng: {what}: {e:?}"))
    }
}

/// True when the driver and NVRTC load and at least one device exists. Never panics.
pub fn available() -> bool {
    if probe_driver().is_err() || probe_nvrtc().is_err() {
        return false;
    }
    guarded("device count", || {
        CudaContext::device_count().map_err(|e| driver_error("device count", e))
    })
    .is_ok_and(|count| count > 0)
}

/// A device context and the stream dyng's work is ordered on.
#[derive(Clone)]
pub struct Device {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    arch: (i32, i32),
    multiprocessors: i32,
}

impl std::fmt::Debug for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Device")
            .field("ordinal", &self.ctx.ordinal())
            .field("arch", &self.arch)
            .finish()
    }
}

impl Device {
    /// Creates the primary context of device `ordinal` and a new non-default stream on it.
    /// Fails with [`Error::NotSupported`] when the driver or NVRTC is missing, the device does not
    /// exist or cannot run cooperative kernels. (Drivers should export `CUDA_MODULE_LOADING=EAGER`
    /// before the first context, as the original `mosp` does; the library never touches the
    /// environment.)
    pub fn new(ordinal: usize) -> Result<Self> {
        probe_driver()?;
        probe_nvrtc()?;
        guarded("context creation", || {
            let count = CudaContext::device_count().map_err(|e| driver_error("device count", e))?;
            if ordinal >= count.max(0) as usize {
                return Err(Error::NotSupported(format!(
                    "dyng: CUDA device {ordinal} does not exist ({count} device(s) present)"
                )));
            }
            let ctx = CudaContext::new(ordinal).map_err(|e| driver_error("context creation", e))?;
            // dyng orders its buffers itself (one stream per engine, event fences between
            // streams); cudarc's per-buffer event tracking would add events to every launch.
            // SAFETY: called before any buffer or stream exists on this context.
            unsafe { ctx.disable_event_tracking() };
            use cudarc::driver::sys::CUdevice_attribute as A;
            let attr = |a: A, what: &str| ctx.attribute(a).map_err(|e| driver_error(what, e));
            if attr(A::CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH, "cooperative launch attribute")? == 0 {
                return Err(Error::NotSupported(format!(
                    "dyng: CUDA device {ordinal} cannot launch cooperative kernels"
                )));
            }
            let arch = ctx
                .compute_capability()
                .map_err(|e| driver_error("compute capability", e))?;
            let multiprocessors = attr(A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, "multiprocessor count")?;
            let stream = ctx.new_stream().map_err(|e| driver_error("stream creation", e))?;
            Ok(Device {
                ctx,
                stream,
                arch,
                multiprocessors,
            })
        })
    }

    /// The device's primary context, shared by every handle of the device.
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    /// The stream all of this device handle's work is ordered on.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// A device handle on the same context with its own new stream.
    pub fn with_new_stream(&self) -> Result<Self> {
        let stream = guarded("stream creation", || {
            self.ctx.new_stream().map_err(|e| driver_error("stream creation", e))
        })?;
        Ok(Device {
            stream,
            ..self.clone()
        })
    }

    /// Compute capability (major, minor).
    pub fn arch(&self) -> (i32, i32) {
        self.arch
    }

    /// Streaming multiprocessors of the device (the cooperative grid is sized from them).
    pub fn multiprocessors(&self) -> i32 {
        self.multiprocessors
    }

    /// Waits until all work on this handle's stream is done.
    pub fn synchronize(&self) -> Result<()> {
        guarded("stream synchronize", || {
            self.stream.synchronize().map_err(|e| driver_error("stream synchronize", e))
        })
    }
}
