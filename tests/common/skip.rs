//! Visible skips. A test that cannot run on this machine (the golden corpus, a tool or a device
//! is missing) calls [`skip`]: cargo's output shows such a test as `ok`, so the skip is also
//! appended to `$DYNG_SKIP_LOG`, which `scripts/test-all.sh` sets and prints as its last lines.
//! A skip whose `need` is listed in `$DYNG_REQUIRE` (comma-separated, e.g. `golden,cbindgen`;
//! CI sets it) fails the test instead.
#![allow(dead_code)]

use std::io::Write as _;

/// What a skipped test lacks: the key `DYNG_REQUIRE` lists to make the skip a failure.
pub const GOLDEN: &str = "golden";
pub const CBINDGEN: &str = "cbindgen";
pub const GPU: &str = "gpu";
pub const NVRTC: &str = "nvrtc";

/// Whether `$DYNG_REQUIRE` lists `need`.
pub fn required(need: &str) -> bool {
    std::env::var("DYNG_REQUIRE").is_ok_and(|v| v.split([',', ' ']).any(|w| w.trim() == need))
}

/// Records that `test` did not run because `need` is missing (`reason` says how to provide it);
/// panics instead when `$DYNG_REQUIRE` lists `need`.
pub fn skip(test: &str, need: &str, reason: &str) {
    if required(need) {
        panic!("{test} needs {need}, which DYNG_REQUIRE lists: {reason}");
    }
    eprintln!("SKIPPED {test} (needs {need}): {reason}");
    if let Some(path) = std::env::var_os("DYNG_SKIP_LOG") {
        // One write per line with O_APPEND: lines of concurrent tests do not interleave.
        let line = format!("{test}\t{need}\t{reason}\n");
        let file = std::fs::OpenOptions::new().create(true).append(true).open(&path);
        if let Err(e) = file.and_then(|mut f| f.write_all(line.as_bytes())) {
            panic!("cannot record the skip of {test} in {}: {e}", std::path::Path::new(&path).display());
        }
    }
}

/// The skip of a test that needs the complete golden corpus.
pub fn skip_golden(test: &str) {
    skip(test, GOLDEN, "the digest-only golden groups are not here: set DYNG_GOLDEN_DIR or provide ../shared/golden");
}
