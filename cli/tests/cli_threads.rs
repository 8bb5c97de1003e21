//! Thread counts through the CLI: `--threads` beyond the documented cap is refused at once with
//! the library's message (tests/threads.rs checks the library and the C ABI).

use std::process::Command;
use std::time::{Duration, Instant};

#[test]
fn the_cli_refuses_counts_beyond_the_cap_at_once() {
    let t = Instant::now();
    let o = Command::new(env!("CARGO_BIN_EXE_dyng"))
        .args(["mosp", "--graph", "x", "--changes", "y", "--init", "z", "--threads", "99999999999"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("num_threads = 99999999999 exceeds the limit"), "{err}");
    assert!(t.elapsed() < Duration::from_secs(60), "the refusal took {:?}", t.elapsed());
}
