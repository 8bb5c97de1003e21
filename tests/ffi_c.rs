//! Compiles the C harness `tests/c/harness.c` against the `libdyng.so` of this build and runs it:
//! every exported function, every error path reachable from C, and concurrent readers on pthreads.

#[path = "common/skip.rs"]
mod skip;
mod ffi_support;

use ffi_support::*;

#[test]
fn c_harness_passes() {
    if !is_linux() {
        skip::skip("ffi_c::c_harness_passes", "linux", "the C harness build is set up for Linux only");
        return;
    }
    let root = root();
    let dir = scratch("harness");
    let lib = stage_shared_lib(&dir);
    let exe = dir.join("harness");
    run(
        compiler(false)
            .args(["-std=c99", "-Wall", "-Wextra", "-Werror", "-I"])
            .arg(root.join("include"))
            .arg(root.join("tests/c/harness.c"))
            .arg("-o")
            .arg(&exe)
            .arg(format!("-L{}", path_str(&lib)))
            .arg(format!("-Wl,-rpath,{}", path_str(&lib)))
            .args(["-ldyng", "-lpthread"]),
        "compiling tests/c/harness.c",
    );
    let files = dir.join("files");
    std::fs::create_dir_all(&files).unwrap();
    let out = run(
        std::process::Command::new(&exe).arg(&files),
        "running the C harness",
    );
    println!("{out}");
    assert!(out.contains(", 0 failed"), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}
