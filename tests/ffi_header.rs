//! The committed `include/dyng.h` stays what cbindgen generates from `src/ffi/`, compiles cleanly
//! as C99 and C++17 with warnings as errors, and agrees with the CMake package version.

#[path = "common/skip.rs"]
mod skip;
mod ffi_support;

use ffi_support::*;
use std::process::Command;

/// The pinned generator (see cbindgen.toml).
const CBINDGEN_VERSION: &str = "0.29.4";

#[test]
fn header_matches_cbindgen_output() {
    let root = root();
    let version = match Command::new("cbindgen").arg("--version").output() {
        Ok(out) if out.status.success() => String::from_utf8_lossy(&out.stdout).trim().to_string(),
        _ => {
            skip::skip(
                "ffi_header::header_matches_cbindgen_output",
                skip::CBINDGEN,
                &format!("cbindgen is not installed, so header drift is not checked (scripts/setup.sh installs it: cargo install cbindgen --version {CBINDGEN_VERSION} --locked)"),
            );
            return;
        }
    };
    assert!(
        version.ends_with(CBINDGEN_VERSION),
        "cbindgen {CBINDGEN_VERSION} is pinned, found `{version}`"
    );
    let dir = scratch("header");
    let out = dir.join("dyng.h");
    run(
        Command::new("cbindgen")
            .current_dir(&root)
            .args(["--config", "cbindgen.toml", "--quiet", "--output"])
            .arg(&out)
            .arg("src/ffi/mod.rs"),
        "cbindgen",
    );
    let fresh = std::fs::read_to_string(&out).unwrap();
    let committed = std::fs::read_to_string(root.join("include/dyng.h")).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        fresh == committed,
        "include/dyng.h drifted from src/ffi/; regenerate it with: \
         cbindgen --config cbindgen.toml --output include/dyng.h src/ffi/mod.rs"
    );
}

fn compile_header(cpp: bool) {
    let dir = scratch(if cpp { "hdr-cpp" } else { "hdr-c" });
    let src = dir.join(if cpp { "use.cpp" } else { "use.c" });
    std::fs::write(
        &src,
        "#include \"dyng.h\"\n#include \"dyng.h\" /* include guard */\n\
         int main(void) { dyng_status_t s = DYNG_OK; return s + (dyng_version() == 0); }\n",
    )
    .unwrap();
    let std = if cpp { "-std=c++17" } else { "-std=c99" };
    run(
        compiler(cpp)
            .args([std, "-Wall", "-Wextra", "-Werror", "-pedantic", "-c", "-o"])
            .arg(dir.join("use.o"))
            .arg("-I")
            .arg(root().join("include"))
            .arg(&src),
        &format!("compiling include/dyng.h with {std}"),
    );
    // Kept when the compile fails (`run` panics first), for a look at what was compiled.
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn header_compiles_as_c99() {
    compile_header(false);
}

#[test]
fn header_compiles_as_cpp17() {
    compile_header(true);
}

#[test]
fn cmake_package_version_matches_the_crate() {
    let text = std::fs::read_to_string(root().join("cmake/dyngConfigVersion.cmake")).unwrap();
    let want = format!("set(PACKAGE_VERSION \"{}\")", env!("CARGO_PKG_VERSION"));
    assert!(
        text.contains(&want),
        "cmake/dyngConfigVersion.cmake lacks `{want}`"
    );
}
