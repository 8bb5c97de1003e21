//! Shared helpers of the FFI tests: where cargo put `libdyng`, and a C compiler from the `cc` crate.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// The repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The folder holding the `libdyng.so`/`libdyng.a` built for this test run (`target/<profile>/deps`,
/// next to the test executable).
pub fn lib_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test knows its own path");
    let deps = exe
        .parent()
        .expect("test executables live in target/<profile>/deps")
        .to_path_buf();
    assert!(
        deps.join("libdyng.so").exists() || deps.join("libdyng.a").exists(),
        "libdyng not found in {}",
        deps.display()
    );
    deps
}

/// Lays out `libdyng.so` of this build in `dir` the way an install does (`libdyng.so.0.1`, the
/// SONAME the linker records, plus the `libdyng.so` link) and returns `dir`.
pub fn stage_shared_lib(dir: &Path) -> PathBuf {
    let soname = format!(
        "libdyng.so.{}.{}",
        env!("CARGO_PKG_VERSION_MAJOR"),
        env!("CARGO_PKG_VERSION_MINOR")
    );
    let lib = dir.join("lib");
    std::fs::create_dir_all(&lib).unwrap();
    std::fs::copy(lib_dir().join("libdyng.so"), lib.join(&soname)).expect("copy libdyng.so");
    let _ = std::fs::remove_file(lib.join("libdyng.so"));
    std::os::unix::fs::symlink(&soname, lib.join("libdyng.so")).expect("symlink libdyng.so");
    lib
}

/// The host triple as the `cc` crate wants it (tests run on the host).
fn host_triple() -> String {
    format!(
        "{}-unknown-{}-gnu",
        std::env::consts::ARCH,
        std::env::consts::OS
    )
}

/// A C (or, with `cpp`, C++) compiler command configured by the `cc` crate.
pub fn compiler(cpp: bool) -> Command {
    let triple = host_triple();
    let mut b = cc::Build::new();
    b.cargo_metadata(false)
        .cpp(cpp)
        .target(&triple)
        .host(&triple)
        .opt_level(0)
        .debug(true)
        .warnings(false);
    b.get_compiler().to_command()
}

/// A fresh scratch folder under the system temp dir.
pub fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("dyng-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir is writable");
    dir
}

/// Runs `cmd`, panicking with its output when it fails; returns stdout.
pub fn run(cmd: &mut Command, what: &str) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("{what}: cannot start: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
    stdout
}

pub fn is_linux() -> bool {
    cfg!(target_os = "linux")
}

pub fn path_str(p: &Path) -> &str {
    p.to_str().expect("test paths are UTF-8")
}
