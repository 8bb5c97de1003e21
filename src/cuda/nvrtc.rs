//! Run-time compilation of `kernels/*.cu` with NVRTC, to PTX and to a cubin for one `sm_XY`.
//!
//! The sources are embedded in the library, so nothing is read from disk and no CUDA toolkit is
//! needed at build time. A cubin for the device's exact architecture avoids the driver's PTX JIT;
//! PTX is kept as the portable form and for the compile test. Results are cached per process and
//! architecture, so every engine (context) after the first loads its modules without compiling.

use super::context::{guarded, probe_nvrtc};
use crate::error::{Error, Result};
use cudarc::nvrtc::sys;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::ffi::{c_char, CString};
use std::sync::{Arc, OnceLock};

/// One kernel source file.
#[derive(Debug, Clone, Copy)]
pub struct KernelSource {
    /// File name under `kernels/` (also the NVRTC program name in messages).
    pub name: &'static str,
    /// The CUDA C++ source text, built into the library.
    pub source: &'static str,
    /// Kernels (extern "C" names) the file defines.
    pub functions: &'static [&'static str],
}

/// The persistent cooperative SOSP kernel.
pub const SOSP: KernelSource = KernelSource {
    name: "sosp.cu",
    source: include_str!("../../kernels/sosp.cu"),
    functions: &["sospPersistentKernel"],
};

/// Device graph kernels (a caller's CSR with its reverse, the mirror's scatter) and the
/// exclusive scan.
pub const GRAPH: KernelSource = KernelSource {
    name: "graph.cu",
    source: include_str!("../../kernels/graph.cu"),
    functions: &[
        "splitWeightsKernel",
        "inDegreeKernel",
        "exclusiveScanKernel",
        "fillReverseKernel",
        "scatterRowsKernel",
    ],
};

/// Combined-graph kernels.
pub const COMBINE: KernelSource = KernelSource {
    name: "combine.cu",
    source: include_str!("../../kernels/combine.cu"),
    functions: &["countEdgesKernel", "fillEdgesKernel"],
};

/// Every kernel source file of the library.
pub const KERNELS: &[KernelSource] = &[SOSP, GRAPH, COMBINE];

/// What to produce.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Output {
    /// PTX for `compute_XY` (JIT-compiled by the driver on load).
    Ptx,
    /// A cubin for exactly `sm_XY`.
    Cubin,
}

/// A compiled kernel file.
#[derive(Debug, Clone)]
pub struct Compiled {
    /// Whether `image` is PTX or a cubin.
    pub output: Output,
    /// PTX text (NUL-free) or cubin bytes.
    pub image: Vec<u8>,
    /// NVRTC's log (warnings), possibly empty.
    pub log: String,
}

/// The NVRTC version (major, minor). Probes the library first.
pub fn version() -> Result<(i32, i32)> {
    probe_nvrtc()?;
    guarded("nvrtcVersion", || {
        let (mut major, mut minor) = (0, 0);
        // SAFETY: both pointers are valid for writes of one c_int each.
        let r = unsafe { sys::nvrtcVersion(&mut major, &mut minor) };
        check(r, "nvrtcVersion", "")?;
        Ok((major, minor))
    })
}

fn check(r: sys::nvrtcResult, what: &str, log: &str) -> Result<()> {
    if r == sys::nvrtcResult::NVRTC_SUCCESS {
        Ok(())
    } else if log.is_empty() {
        Err(Error::Cuda(format!("dyng: {what} failed: {r:?}")))
    } else {
        Err(Error::Cuda(format!("dyng: {what} failed: {r:?}\n{log}")))
    }
}

/// Destroys the program however compilation ends.
struct Program(sys::nvrtcProgram);

impl Drop for Program {
    fn drop(&mut self) {
        // SAFETY: the handle came from a successful nvrtcCreateProgram and is destroyed once.
        // A failure to destroy leaks host memory only, so the status is ignored.
        let _ = unsafe { sys::nvrtcDestroyProgram(&mut self.0) };
    }
}

/// Reads a size-then-bytes NVRTC output.
fn read_output(
    prog: &Program,
    size_fn: unsafe fn(sys::nvrtcProgram, *mut usize) -> sys::nvrtcResult,
    data_fn: unsafe fn(sys::nvrtcProgram, *mut c_char) -> sys::nvrtcResult,
    what: &str,
) -> Result<Vec<u8>> {
    let mut size = 0usize;
    // SAFETY: `prog.0` is a live program; `size` is valid for one write.
    check(unsafe { size_fn(prog.0, &mut size) }, what, "")?;
    let mut buf = vec![0u8; size];
    // SAFETY: `buf` has exactly the `size` bytes NVRTC just reported for this output.
    check(unsafe { data_fn(prog.0, buf.as_mut_ptr().cast()) }, what, "")?;
    Ok(buf)
}

/// Compiles one kernel file for compute capability `arch` without caching.
pub fn compile(kernel: &KernelSource, arch: (i32, i32), output: Output) -> Result<Compiled> {
    probe_nvrtc()?;
    guarded("NVRTC compilation", || compile_unguarded(kernel, arch, output))
}

fn compile_unguarded(kernel: &KernelSource, arch: (i32, i32), output: Output) -> Result<Compiled> {
    let src = CString::new(kernel.source)
        .map_err(|_| Error::Internal(format!("{} contains a NUL byte", kernel.name)))?;
    let name = CString::new(kernel.name)
        .map_err(|_| Error::Internal(format!("kernel name {:?} contains a NUL byte", kernel.name)))?;
    let arch_flag = match output {
        Output::Ptx => format!("--gpu-architecture=compute_{}{}", arch.0, arch.1),
        Output::Cubin => format!("--gpu-architecture=sm_{}{}", arch.0, arch.1),
    };
    let options: Vec<CString> = [arch_flag.as_str(), "--std=c++17", "--device-as-default-execution-space", "-lineinfo"]
        .iter()
        .map(|o| CString::new(*o).expect("option literals contain no NUL byte"))
        .collect();
    let option_ptrs: Vec<*const c_char> = options.iter().map(|o| o.as_ptr()).collect();

    let mut raw: sys::nvrtcProgram = std::ptr::null_mut();
    // SAFETY: `src` and `name` are NUL-terminated and outlive the call; no headers are passed
    // (count 0 with null arrays), which NVRTC permits.
    let r = unsafe {
        sys::nvrtcCreateProgram(&mut raw, src.as_ptr(), name.as_ptr(), 0, std::ptr::null(), std::ptr::null())
    };
    check(r, &format!("nvrtcCreateProgram({})", kernel.name), "")?;
    let prog = Program(raw);
    // SAFETY: `prog.0` is live; `option_ptrs` holds `options.len()` pointers to NUL-terminated
    // strings kept alive by `options` for the duration of the call.
    let r = unsafe { sys::nvrtcCompileProgram(prog.0, option_ptrs.len() as i32, option_ptrs.as_ptr()) };
    let log = read_output(&prog, sys::nvrtcGetProgramLogSize, sys::nvrtcGetProgramLog, "nvrtcGetProgramLog")
        .map(|bytes| String::from_utf8_lossy(bytes.split(|&b| b == 0).next().unwrap_or(&[])).trim().to_string())
        .unwrap_or_default();
    check(r, &format!("compiling {} for {arch_flag}", kernel.name), &log)?;
    let mut image = match output {
        Output::Ptx => read_output(&prog, sys::nvrtcGetPTXSize, sys::nvrtcGetPTX, "nvrtcGetPTX")?,
        Output::Cubin => read_output(&prog, sys::nvrtcGetCUBINSize, sys::nvrtcGetCUBIN, "nvrtcGetCUBIN")?,
    };
    if output == Output::Ptx {
        // The PTX size includes the terminating NUL; module loading takes the text.
        while image.last() == Some(&0) {
            image.pop();
        }
    }
    Ok(Compiled { output, image, log })
}

type CacheKey = (&'static str, (i32, i32), Output);

/// Compiles once per process, kernel, architecture and output kind.
pub fn compile_cached(kernel: &KernelSource, arch: (i32, i32), output: Output) -> Result<Arc<Compiled>> {
    static CACHE: OnceLock<Mutex<HashMap<CacheKey, Arc<Compiled>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let key = (kernel.name, arch, output);
    if let Some(hit) = cache.lock().get(&key) {
        return Ok(hit.clone());
    }
    // Compiled outside the lock: two threads may race to compile the same file, which is only
    // wasted work, while holding the lock would serialise unrelated compilations.
    let compiled = Arc::new(compile(kernel, arch, output)?);
    Ok(cache.lock().entry(key).or_insert(compiled).clone())
}
