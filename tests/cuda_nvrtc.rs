//! Every kernel in `kernels/` compiles with NVRTC to PTX and to an `sm_90` cubin.
//!
//! Needs an NVRTC library (CUDA 13): `DYNG_NVRTC_LIB=/path/libnvrtc.so.13` or one on the loader
//! path. Without one the test records a skip (`tests/common/skip.rs`) and passes, unless
//! `DYNG_REQUIRE_NVRTC=1` (set by `scripts/nvrtc-check.sh`, so that CI really compiles) or
//! `DYNG_REQUIRE` lists `nvrtc`. No GPU is needed.

#[path = "common/skip.rs"]
mod skip;

use dyng::internals::cuda::nvrtc::{self, Output, KERNELS};

fn nvrtc_or_skip() -> bool {
    match nvrtc::version() {
        Ok((major, minor)) => {
            eprintln!("NVRTC {major}.{minor}");
            true
        }
        Err(e) => {
            if std::env::var("DYNG_REQUIRE_NVRTC").is_ok_and(|v| v == "1") {
                panic!("DYNG_REQUIRE_NVRTC=1 but NVRTC is unavailable: {e}");
            }
            skip::skip("cuda_nvrtc (kernel compilation)", skip::NVRTC, &format!("no NVRTC library ({e}); scripts/nvrtc-check.sh installs one"));
            false
        }
    }
}

#[test]
fn every_kernel_directory_file_is_embedded() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("kernels");
    let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".cu"))
        .collect();
    on_disk.sort();
    let mut embedded: Vec<String> = KERNELS.iter().map(|k| k.name.to_string()).collect();
    embedded.sort();
    assert_eq!(on_disk, embedded, "kernels/*.cu and nvrtc::KERNELS must list the same files");
}

#[test]
fn kernels_compile_to_ptx_and_sm90_cubin() {
    if !nvrtc_or_skip() {
        return;
    }
    let (major, _) = nvrtc::version().unwrap();
    assert!(major >= 13, "NVRTC {major}.x: dyng's kernels are built with CUDA 13");
    for k in KERNELS {
        let ptx = nvrtc::compile(k, (9, 0), Output::Ptx)
            .unwrap_or_else(|e| panic!("{} does not compile to PTX:\n{e}", k.name));
        let text = String::from_utf8(ptx.image.clone()).expect("PTX is text");
        assert!(text.contains(".target sm_90"), "{}: unexpected PTX target", k.name);
        for f in k.functions {
            assert!(text.contains(&format!(".entry {f}")), "{}: PTX lacks kernel {f}", k.name);
        }
        let cubin = nvrtc::compile(k, (9, 0), Output::Cubin)
            .unwrap_or_else(|e| panic!("{} does not compile to an sm_90 cubin:\n{e}", k.name));
        assert_eq!(&cubin.image[..4], b"\x7fELF", "{}: a cubin is an ELF image", k.name);
        assert!(ptx.log.is_empty() || !ptx.log.contains("error"), "{}: {}", k.name, ptx.log);
        eprintln!(
            "{}: PTX {} bytes, sm_90 cubin {} bytes{}",
            k.name,
            ptx.image.len(),
            cubin.image.len(),
            if ptx.log.is_empty() { String::new() } else { format!("; log: {}", ptx.log) }
        );
    }
}

#[test]
fn cache_returns_the_same_image() {
    if !nvrtc_or_skip() {
        return;
    }
    let a = nvrtc::compile_cached(&nvrtc::GRAPH, (9, 0), Output::Ptx).unwrap();
    let b = nvrtc::compile_cached(&nvrtc::GRAPH, (9, 0), Output::Ptx).unwrap();
    assert!(std::sync::Arc::ptr_eq(&a, &b));
}

/// The persistent kernel takes its parameters as one struct whose Rust mirror is
/// `dyng::internals::cuda::Params`: the PTX declares its size, which must be the mirror's.
#[test]
fn the_kernel_parameter_block_is_the_size_of_its_rust_mirror() {
    if !nvrtc_or_skip() {
        return;
    }
    let ptx = nvrtc::compile(&nvrtc::SOSP, (9, 0), Output::Ptx).unwrap();
    let text = String::from_utf8(ptx.image).expect("PTX is text");
    let want = format!("sospPersistentKernel_param_0[{}]", std::mem::size_of::<dyng::internals::cuda::Params>());
    let declared = text.lines().find(|l| l.contains("sospPersistentKernel_param_0")).unwrap_or("none");
    assert!(declared.contains(&want), "PTX declares {declared:?}, the Rust mirror wants {want}");
}
