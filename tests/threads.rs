//! Thread counts: a count beyond the documented cap is refused at once (it used to start threads
//! until the system refused them), and a thread the system refuses is `DYNG_ERR_RESOURCE` /
//! `ErrorKind::Resource` with the OS error, not `DYNG_ERR_INTERNAL` ("a bug in dyng").

mod common;

use common::capi::last_error;
use dyng::ffi::*;
use dyng::resources::max_threads;
use dyng::{ErrorKind, Resources};
use std::process::Command;
use std::time::{Duration, Instant};

#[test]
fn counts_beyond_the_cap_are_refused_at_once() {
    let t = Instant::now();
    let cap = max_threads();
    assert!(cap >= 1024);
    for n in [cap + 1, 99_999_999_999, 1 << 40, usize::MAX] {
        let e = Resources::parallel(n).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{n}: {e}");
        assert!(e.to_string().contains(&format!("num_threads = {n} exceeds the limit of {cap} threads")), "{e}");
        let mut opt = dyng_resources_options_default();
        opt.num_threads = n;
        let mut res = std::ptr::null_mut();
        // SAFETY: a whole options struct and a writable output.
        assert_eq!(unsafe { dyng_resources_create(&opt, &mut res) }, DYNG_ERR_INVALID_ARGUMENT);
        assert!(res.is_null());
        assert!(last_error().contains("exceeds the limit"), "{}", last_error());
    }
    // The CLI's `--threads` is refused the same way: cli/tests/cli_threads.rs.
    assert!(t.elapsed() < Duration::from_secs(60), "refusals took {:?}", t.elapsed());
    // Within the cap still works.
    assert_eq!(Resources::parallel(3).unwrap().threads(), 3);
}

/// Runs in a child process whose address space has room for a few thread stacks only, so that
/// the system refuses the threads of a 512-thread pool (RLIMIT_AS also binds root, which
/// `ulimit -u` does not).
#[test]
#[ignore = "run by a_refused_thread_is_a_resource_error in a child process"]
fn child_with_a_small_address_space() {
    if std::env::var_os("DYNG_TEST_SMALL_AS").is_none() {
        return;
    }
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let vm_kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmSize:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap();
    let limit = (vm_kb + 64 * 1024) * 1024;
    let rl = libc::rlimit { rlim_cur: limit, rlim_max: limit };
    // SAFETY: setrlimit with a valid struct; affects this child process only.
    assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_AS, &rl) }, 0);
    let e = Resources::parallel(512).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Resource, "{e}");
    assert!(e.to_string().contains("cannot start 512 threads") && e.to_string().contains("os error"), "{e}");
    let mut opt = dyng_resources_options_default();
    opt.num_threads = 512;
    let mut res = std::ptr::null_mut();
    // SAFETY: a whole options struct and a writable output.
    assert_eq!(unsafe { dyng_resources_create(&opt, &mut res) }, DYNG_ERR_RESOURCE, "{}", last_error());
    assert!(last_error().contains("os error"), "{}", last_error());
    println!("CHILD-OK {}", last_error());
}

#[test]
fn a_refused_thread_is_a_resource_error() {
    let o = Command::new(std::env::current_exe().unwrap())
        .args(["--ignored", "--exact", "child_with_a_small_address_space", "--nocapture", "--test-threads=1"])
        .env("DYNG_TEST_SMALL_AS", "1")
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success() && out.contains("CHILD-OK"), "{out}\n{}", String::from_utf8_lossy(&o.stderr));
}
