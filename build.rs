//! Build script: gives the shared library its SONAME on Linux (`libdyng.so.MAJOR.MINOR`; before
//! 1.0 the minor version breaks the ABI), and nothing else.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        let major = std::env::var("CARGO_PKG_VERSION_MAJOR").unwrap_or_default();
        let minor = std::env::var("CARGO_PKG_VERSION_MINOR").unwrap_or_default();
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libdyng.so.{major}.{minor}");
    }
}
