//! Without the CUDA driver the backend reports `NotSupported` naming the missing piece; nothing
//! panics or aborts. Skips (with a notice) on a machine that has `libcuda.so.1`.

#[path = "common/skip.rs"]
mod skip;

use dyng::internals::cuda::{self, context};
use dyng::ErrorKind;

fn driver_present() -> bool {
    context::probe_driver().is_ok()
}

#[test]
fn no_driver_means_not_supported() {
    if driver_present() {
        skip::skip("cuda_no_driver::no_driver_means_not_supported", "no-cuda-driver", "libcuda.so.1 is present on this machine");
        return;
    }
    assert!(!cuda::available());
    let e = cuda::Device::new(0).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotSupported, "{e}");
    assert!(e.to_string().contains("libcuda.so.1"), "the message names the missing library: {e}");
    let e = cuda::CudaEngine::new(0).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotSupported, "{e}");
    // Repeated calls give the same answer (the probe is cached, not retried into a panic).
    assert!(!cuda::available());
}

#[test]
fn missing_nvrtc_path_is_named() {
    // Only meaningful when the probe has not run yet in this process with another setting; this
    // test binary sets nothing else, so the variable decides.
    if std::env::var_os(context::NVRTC_ENV).is_some() {
        skip::skip("cuda_no_driver::missing_nvrtc_path_is_named", "nvrtc-env-unset", &format!("{} is set by the caller", context::NVRTC_ENV));
        return;
    }
    match context::probe_nvrtc() {
        Ok(found) => eprintln!("NVRTC found on the loader path: {found}"),
        Err(e) => {
            assert_eq!(e.kind(), ErrorKind::NotSupported);
            assert!(e.to_string().contains("NVRTC"), "{e}");
        }
    }
}
