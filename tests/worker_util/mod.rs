//! Shared helpers of the worker tests: options pointing at the built `dyng-worker`, small graphs
//! and batches, and the leak checks of spec 17.3 (L1-L4, L6) read from `/proc`.
#![allow(dead_code)]

use dyng::worker::Pong;
use dyng::worker::{Client, WorkerOptions};
use dyng::{Csr, WeightLayout};
use std::collections::BTreeSet;
use std::time::{Duration, Instant};

#[path = "../common/streams.rs"]
mod streams;
#[allow(unused_imports)] // each test takes what it needs
pub use streams::{batch, wide_grid};

/// Options of every functional test: the built worker, and checksums on (spec 17.1), so every
/// array crossing the socket in either direction is verified.
pub fn opts() -> WorkerOptions {
    WorkerOptions {
        worker_path: Some(env!("CARGO_BIN_EXE_dyng-worker").into()),
        hang_timeout: Duration::from_secs(5),
        checksums: true,
        ..Default::default()
    }
}

/// A w x h grid with k objectives.
pub fn grid(w: usize, h: usize, k: usize, seed: u32) -> Csr {
    let t = dyng::io::generators::graphgen::grid(w, h, k, 1, 100, seed).expect("grid");
    Csr::from_arrays(t.n, t.k, t.row_ptr, t.col_ind, &t.weights, WeightLayout::EdgeMajor).expect("csr")
}


/// The leak checks after a scenario (17.3), given the last PONG counters `st` of client `c`:
/// no block lent, L4 (the worker's memfds are its pool), then after closing the client: the
/// worker gone, L6, L1, L3 and L2 (host fds back to `fds0`). Returns the worker's pid.
pub fn close_and_check_leaks(c: Client, st: &Pong, shm0: &BTreeSet<String>, fds0: usize, what: &str) -> u32 {
    assert_eq!(st.lent_blocks, 0, "{what}");
    let wpid = c.worker_pid().unwrap();
    assert_eq!(memfd_fds(wpid, "dyng:w") as u32, st.pool_blocks, "{what}: L4");
    drop(c);
    assert!(wait_gone(wpid, Duration::from_secs(2)).is_some(), "{what}: worker left");
    assert!(session_members(wpid).is_empty(), "{what}: L6");
    assert_eq!(&shm_listing(), shm0, "{what}: L1");
    assert_eq!(memfd_maps(std::process::id()), 0, "{what}: L3");
    assert_eq!(self_fd_count(), fds0, "{what}: L2, host fds back to the baseline");
    wpid
}

pub fn shm_listing() -> BTreeSet<String> {
    ["/dev/shm", "/run/shm"]
        .iter()
        .flat_map(|d| std::fs::read_dir(d).into_iter().flatten().flatten())
        .map(|e| e.path().display().to_string())
        .collect()
}

/// Targets of `/proc/<pid>/fd` links.
pub fn fd_targets(pid: u32) -> Vec<String> {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| std::fs::read_link(e.path()).ok())
        .map(|p| p.display().to_string())
        .collect()
}

pub fn memfd_fds(pid: u32, prefix: &str) -> usize {
    fd_targets(pid).iter().filter(|t| t.starts_with(&format!("/memfd:{prefix}"))).count()
}

/// Mappings of dyng memfds in `/proc/<pid>/maps`.
pub fn memfd_maps(pid: u32) -> usize {
    std::fs::read_to_string(format!("/proc/{pid}/maps"))
        .unwrap_or_default()
        .lines()
        .filter(|l| l.contains("/memfd:dyng"))
        .count()
}

pub fn alive(pid: u32) -> bool {
    // A zombie has exited; only running processes count.
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| s.rsplit(')').next().map(|r| !r.trim_start().starts_with('Z')))
        .unwrap_or(false)
}

/// Waits (bounded) until `pid` is gone; returns how long it took.
pub fn wait_gone(pid: u32, limit: Duration) -> Option<Duration> {
    let t0 = Instant::now();
    while t0.elapsed() < limit {
        if !alive(pid) {
            return Some(t0.elapsed());
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    None
}

/// The pids in `/proc` for which `keep` holds.
pub fn pids_where(keep: impl Fn(u32) -> bool) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| keep(*pid))
        .collect()
}

/// Processes whose session id (stat field 6) is `sid`.
pub fn session_members(sid: u32) -> Vec<u32> {
    pids_where(|pid| {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|s| s.rsplit(')').next().and_then(|r| r.split_whitespace().nth(3)?.parse::<u32>().ok()))
            == Some(sid)
            && alive(pid)
    })
}

pub fn self_fd_count() -> usize {
    fd_targets(std::process::id()).len()
}

/// Serializes the tests of one binary that read process-wide counters (fds, mappings), and the
/// tests that open fds beside them (a spawned client's socket and pidfd, a child's pipes): in
/// `worker_basic.rs` every test that spawns takes it, as an exact host fd count fails whenever
/// another test's client comes or goes meanwhile.
pub fn serial() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

/// The role a test binary re-executed by [`run_role`] plays (`DYNG_TEST_ROLE`); a role test
/// returns at once unless it is the one asked for, so it passes as a no-op under `--ignored`.
pub fn is_role(name: &str) -> bool {
    std::env::var("DYNG_TEST_ROLE").is_ok_and(|r| r == name)
}

/// Re-executes this test binary to run only the ignored test `test` as role `role`, with `env`:
/// a host that may crash or be killed must not be the test process itself.
pub fn run_role(test: &str, role: &str, env: &[(&str, &str)]) -> std::process::Child {
    std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", test, "--ignored", "--test-threads=1", "--nocapture"])
        .env("DYNG_TEST_ROLE", role)
        .envs(env.iter().copied())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

/// Live workers spawned by host `host_pid`, found through the `DYNG_PARENT_PID` the host puts in
/// their environment: this finds them even after they were reparented.
pub fn workers_of(host_pid: u32) -> Vec<u32> {
    let needle = format!("DYNG_PARENT_PID={host_pid}");
    pids_where(|pid| {
        std::fs::read(format!("/proc/{pid}/environ")).is_ok_and(|env| env.split(|b| *b == 0).any(|kv| kv == needle.as_bytes()))
            && alive(pid)
    })
}

/// fds or mappings of memfds whose name starts with `prefix`, in any process: after both ends
/// of a worker connection are dead, none may remain (nothing persists).
pub fn memfd_holders(prefix: &str) -> Vec<u32> {
    let fd_name = format!("/memfd:{prefix}");
    pids_where(|pid| {
        fd_targets(pid).iter().any(|t| t.starts_with(&fd_name))
            || std::fs::read_to_string(format!("/proc/{pid}/maps")).is_ok_and(|m| m.contains(&fd_name))
    })
}

/// After host `host` died: within 1 s none of its workers lives (L6; stragglers are killed before
/// the failure is reported), nothing is left in the sessions of `workers` (those seen), and no
/// memfd of the host or of those workers is held or mapped by any process: nothing persists.
pub fn assert_nothing_outlives_host(host: u32, workers: &[u32], what: &str) {
    let died = Instant::now();
    // Both conditions share the 1 s: an exiting worker stops showing its environment (its memory
    // is released) a moment before it stops being a live member of its session, so one look at
    // the sessions right after the workers vanished could still see it.
    // A replacement worker the host started after `workers` was read is not among them, and it
    // stops showing its environment before its fds close: the memfds share the 1 s too.
    let sessions_empty = || workers.iter().all(|w| session_members(*w).is_empty());
    let blocks_gone = || {
        memfd_holders(&format!("dyng:h{host}:")).is_empty()
            && workers.iter().all(|w| memfd_holders(&format!("dyng:w{w}:")).is_empty())
    };
    while (!workers_of(host).is_empty() || !sessions_empty() || !blocks_gone()) && died.elapsed() < Duration::from_secs(1) {
        std::thread::sleep(Duration::from_millis(5));
    }
    let left = workers_of(host);
    for p in &left {
        // SAFETY (test): clean up a straggler before failing.
        unsafe { libc::kill(*p as i32, libc::SIGKILL) };
    }
    assert!(left.is_empty(), "{what}: workers {left:?} alive 1 s after their host died (L6)");
    for w in workers {
        assert!(session_members(*w).is_empty(), "{what}: L6, the session of worker {w}");
        assert!(memfd_holders(&format!("dyng:w{w}:")).is_empty(), "{what}: blocks of worker {w} persist");
    }
    assert!(memfd_holders(&format!("dyng:h{host}:")).is_empty(), "{what}: inputs of host {host} persist");
}

/// The runner's end of the deterministic kill harness (`DYNG_FAULT=<point>:SYNC`, `DYNG_TEST_SYNC`):
/// each process that reaches a SYNC point connects, names the point and its pid, and waits.
pub struct SyncRunner {
    pub path: std::path::PathBuf,
    listener: std::os::unix::net::UnixListener,
}

/// A process held at a fault point until [`Held::resume`] (or until it is killed).
pub struct Held {
    pub point: String,
    pub pid: u32,
    stream: std::os::unix::net::UnixStream,
}

impl Held {
    pub fn resume(mut self) {
        use std::io::Write;
        let _ = self.stream.write_all(b"c");
    }
}

impl SyncRunner {
    pub fn new(tag: &str) -> SyncRunner {
        let path = std::env::temp_dir().join(format!("dyng-sync-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
        listener.set_nonblocking(true).unwrap();
        SyncRunner { path, listener }
    }

    /// The next process to reach a SYNC point, waiting up to `limit` or until `give_up` says so.
    pub fn next(&self, limit: Duration, mut give_up: impl FnMut() -> bool) -> Option<Held> {
        use std::io::BufRead;
        let t0 = Instant::now();
        while t0.elapsed() < limit {
            if let Ok((stream, _)) = self.listener.accept() {
                stream.set_nonblocking(false).unwrap();
                stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
                let mut line = String::new();
                std::io::BufReader::new(&stream).read_line(&mut line).unwrap();
                let mut it = line.split_whitespace();
                let point = it.next().unwrap_or_default().to_string();
                let pid = it.next().and_then(|p| p.parse().ok()).unwrap_or(0);
                return Some(Held { point, pid, stream });
            }
            if give_up() {
                return None;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        None
    }
}

impl Drop for SyncRunner {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}
