//! Worker isolation end to end (Linux): results through `dyng-worker` equal the in-process ones
//! byte for byte, the consumed-ack pool stays bounded, the TTL never invalidates a host view, a
//! dead or hung worker is detected and replaced, and nothing leaks (spec 17.3 L1-L4, L6).

mod common;
mod worker_util;

use dyng::worker::{kind, Client, WorkerOptions};
use dyng::{Graph, MospOptions, MospResult, Resources, ResultMut, SsspOptions, SsspResult};
use std::time::{Duration, Instant};
use worker_util::*;

fn bytes<T: Copy>(v: &[T]) -> &[u8] {
    // SAFETY: plain integers, no padding.
    unsafe { std::slice::from_raw_parts(v.as_ptr() as *const u8, std::mem::size_of_val(v)) }
}

/// Every array of a MOSP result through the worker equals the in-process array.
fn assert_mosp_equal(c: &Client, id: u64, m: &MospResult, what: &str) {
    let v = c.view(id, 0b11100, 0).unwrap();
    assert_eq!(bytes(v.i64s(kind::COMBINED_DIST).unwrap()), bytes(m.combined_distances()), "{what}: combined dist");
    assert_eq!(bytes(v.i32s(kind::COMBINED_PARENT).unwrap()), bytes(m.combined_parents()), "{what}: combined parent");
    assert_eq!(bytes(v.i64s(kind::PATH_COSTS).unwrap()), bytes(m.path_costs()), "{what}: path costs");
    for j in 0..m.k() {
        let t = c.view(id, 0b11, j).unwrap();
        assert_eq!(t.i64s(kind::DIST).unwrap(), m.tree(j).distances(), "{what}: dist of objective {j}");
        assert_eq!(t.i32s(kind::PARENT).unwrap(), m.tree(j).parents(), "{what}: parent of objective {j}");
    }
}

#[test]
fn golden_cases_through_the_worker_equal_in_process() {
    let _serial = serial();
    let c = Client::spawn(opts()).unwrap();
    let res = Resources::sequential();
    let mut checked = 0;
    for case in common::cases(&common::local_golden().join("small")).iter().filter(|c| !c.is_error()).take(15) {
        let (source, pref) = (case.source, case.pref.clone());
        let paths = dyng::io::driver::case::CasePaths { graph: &case.graph, changes: &case.changes, init: &case.init, cache: None };
        let Ok(inp) = dyng::io::driver::case::read_mosp_inputs(&paths, case.k, source) else { continue };
        let dir = &case.dir;
        let mut g = Graph::new(inp.graph.to_csr());
        let mopt = MospOptions { k: Some(inp.k), preferences: pref.clone(), ..Default::default() };
        let Ok(mut m) = MospResult::compute(&res, &g, source, &mopt) else { continue };
        let mut s = SsspResult::compute(&res, &g, source, 0, &SsspOptions::default()).unwrap();
        c.load_graph(&g.to_csr()).unwrap();
        let rm = c.mosp_compute(source, &mopt).unwrap();
        let rs = c.sssp_compute(source, 0, &SsspOptions::default()).unwrap();
        assert_mosp_equal(&c, rm.id, &m, &format!("{} before update", dir.display()));
        let in_proc = dyng::update(&res, &mut g, &inp.batch.view(), &mut [ResultMut::Mosp(&mut m), ResultMut::Sssp(&mut s)]);
        let remote = c.update(&inp.batch.view(), &[rm.id, rs.id]);
        assert_eq!(in_proc.is_ok(), remote.is_ok(), "{}: {in_proc:?} vs {remote:?}", dir.display());
        if in_proc.is_err() {
            continue;
        }
        assert_mosp_equal(&c, rm.id, &m, &format!("{} after update", dir.display()));
        let v = c.view(rs.id, 0, 0).unwrap();
        assert_eq!(v.i64s(kind::DIST).unwrap(), s.distances());
        assert_eq!(v.i32s(kind::PARENT).unwrap(), s.parents());
        checked += 1;
    }
    assert!(checked >= 5, "only {checked} golden cases were compared");
}

/// Checksums (6.6): with them on, every array of a reply carries the XXH3 of its bytes (which the
/// host has verified before handing out the view); with them off the field is 0 (not computed).
#[test]
fn reply_arrays_carry_their_checksums_when_negotiated() {
    let _serial = serial();
    let g = grid(15, 15, 2, 9);
    for checksums in [true, false] {
        let c = Client::spawn(WorkerOptions { checksums, ..opts() }).unwrap();
        c.load_graph(&g).unwrap();
        let r = c.mosp_compute(0, &MospOptions::default()).unwrap();
        c.update(&batch(&g, 5, 5, 1).view(), &[r.id]).unwrap();
        let v = c.view(r.id, 0, 0).unwrap();
        assert_eq!(v.arrays().len(), 3);
        for d in v.arrays() {
            let want = if checksums { xxhash_rust::xxh3::xxh3_64(v.bytes(d.kind).unwrap()) } else { 0 };
            assert_eq!(d.xxh3, want, "checksums {checksums}, kind {}", d.kind);
        }
    }
}

#[test]
fn errors_travel_with_the_in_process_status_and_message() {
    let _serial = serial();
    let c = Client::spawn(opts()).unwrap();
    let g = grid(10, 10, 2, 1);
    c.load_graph(&g).unwrap();
    let e = c.sssp_compute(1000, 0, &SsspOptions::default()).unwrap_err();
    let local = SsspResult::compute(&Resources::sequential(), &Graph::new(g.clone()), 1000, 0, &SsspOptions::default()).unwrap_err();
    assert_eq!(e.kind(), local.kind());
    assert_eq!(e.to_string(), local.to_string());
    let r = c.sssp_compute(0, 0, &SsspOptions::default()).unwrap();
    let mut b = dyng::Batch::new(2);
    b.insert(0, 5000, &[1, 1]);
    let e = c.update(&b.view(), &[r.id]).unwrap_err();
    assert_eq!(e.kind(), dyng::ErrorKind::InvalidArgument, "{e}");
    // Unchanged state: the next update applies at the same epoch.
    let before = c.graph_info().unwrap().epoch;
    let ok = c.update(&batch(&g, 5, 5, 3).view(), &[r.id]).unwrap();
    assert_eq!(ok, before + 1);
    // A result that was not listed becomes stale, as in process.
    let r2 = c.sssp_compute(0, 1, &SsspOptions::default()).unwrap();
    c.update(&batch(&g, 5, 5, 4).view(), &[r.id]).unwrap();
    assert_eq!(c.view(r2.id, 0, 0).unwrap_err().kind(), dyng::ErrorKind::StaleResult);
    assert_eq!(c.view(999, 0, 0).unwrap_err().kind(), dyng::ErrorKind::StaleResult, "unknown id = NOT_FOUND");
    assert_eq!(c.view(r.id, 0b100, 0).unwrap_err().kind(), dyng::ErrorKind::InvalidArgument);
}

#[test]
fn thousand_views_with_prompt_release_keep_the_pool_constant() {
    let _serial = serial();
    let c = Client::spawn(opts()).unwrap();
    let g = grid(40, 40, 1, 2);
    c.load_graph(&g).unwrap();
    let r = c.sssp_compute(0, 0, &SsspOptions::default()).unwrap();
    let wpid = c.worker_pid().unwrap();
    let first = c.view(r.id, 0, 0).unwrap();
    let expect = first.i64s(kind::DIST).unwrap().to_vec();
    drop(first);
    let base = c.worker_stats().unwrap();
    let fds0 = self_fd_count();
    for i in 0..1000 {
        let v = c.view(r.id, 0, 0).unwrap();
        if i % 100 == 0 {
            assert_eq!(v.i64s(kind::DIST).unwrap(), &expect[..]);
        }
    }
    let after = c.worker_stats().unwrap();
    assert_eq!(after.pool_blocks, base.pool_blocks, "pool reuse");
    assert_eq!(after.lent_blocks, 0);
    assert_eq!(after.acks_ignored, 0);
    // L4: the worker's memfd count equals the pool size it reports.
    assert_eq!(memfd_fds(wpid, "dyng:w") as u32, after.pool_blocks);
    assert_eq!(self_fd_count(), fds0, "host fd count");
    assert_eq!(memfd_maps(std::process::id()), 0, "L3: no mapping left");
    assert_eq!(c.counters().live_replies.load(std::sync::atomic::Ordering::SeqCst), 0);
}

#[test]
fn ttl_retires_a_leaked_view_which_stays_readable_and_unchanged() {
    let _serial = serial();
    let o = WorkerOptions { lend_ttl: Duration::from_millis(200), heartbeat: Duration::from_millis(50), ..opts() };
    let c = Client::spawn(o).unwrap();
    let g = grid(30, 30, 1, 3);
    c.load_graph(&g).unwrap();
    let r = c.sssp_compute(0, 0, &SsspOptions::default()).unwrap();
    let leaked = c.view(r.id, 0, 0).unwrap();
    let snapshot = leaked.i64s(kind::DIST).unwrap().to_vec();
    let t0 = Instant::now();
    while c.worker_stats().unwrap().retired_total == 0 {
        assert!(t0.elapsed() < Duration::from_secs(5), "no retire within 5 s");
        std::thread::sleep(Duration::from_millis(50));
    }
    // Five more calls that change the tree and view it: the retired block is never reused.
    for i in 0..5 {
        c.update(&batch(&g, 20, 20, 10 + i).view(), &[r.id]).unwrap();
        drop(c.view(r.id, 0, 0).unwrap());
    }
    assert_eq!(leaked.i64s(kind::DIST).unwrap(), &snapshot[..], "a timer never corrupts a host view");
    let ignored = c.worker_stats().unwrap().acks_ignored;
    drop(leaked); // a late ack
    let t0 = Instant::now();
    while c.worker_stats().unwrap().acks_ignored == ignored {
        assert!(t0.elapsed() < Duration::from_secs(2), "late ack not counted");
    }
    assert_eq!(c.worker_stats().unwrap().lent_blocks, 0, "credits recovered");
}

#[test]
fn checkpoint_and_echo_round_trip() {
    let _serial = serial();
    let c = Client::spawn(opts()).unwrap();
    let g = grid(12, 9, 3, 4);
    c.load_graph(&g).unwrap();
    let v = c.checkpoint().unwrap();
    assert_eq!(v.i32s(kind::ROW_PTR).unwrap(), g.row_ptr());
    assert_eq!(v.i32s(kind::COL_IND).unwrap(), g.col_ind());
    assert_eq!(v.i32s(kind::WEIGHTS).unwrap(), g.weights());
    let payload: Vec<u8> = (0..4096u32).map(|i| (i * 7) as u8).collect();
    let e = c.echo(&payload).unwrap();
    assert_eq!(e.bytes(kind::ECHO_BYTES).unwrap(), &payload[..]);
    let (ws, pool) = c.workspace_bytes().unwrap();
    assert!(pool > 0);
    let _ = ws;
    drop((v, e));
    assert!(c.release_workspaces().unwrap() >= pool);
}

#[test]
fn killed_worker_is_replaced_and_replayed_and_nothing_leaks() {
    let _serial = serial();
    let shm0 = shm_listing();
    let fds0 = self_fd_count();
    let g = grid(30, 30, 2, 5);
    let res = Resources::sequential();
    let mut lg = Graph::new(g.clone());
    let mopt = MospOptions::default();
    let mut m = MospResult::compute(&res, &lg, 0, &mopt).unwrap();
    {
        let c = Client::spawn(opts()).unwrap();
        c.load_graph(&g).unwrap();
        let rm = c.mosp_compute(0, &mopt).unwrap();
        for i in 0..3 {
            let b = batch(&g, 10, 10, i);
            dyng::update_one(&res, &mut lg, &b.view(), &mut m).unwrap();
            c.update(&b.view(), &[rm.id]).unwrap();
        }
        let held = c.view(rm.id, 0, 0).unwrap(); // a host mapping that outlives its worker
        let pid = c.worker_pid().unwrap();
        let gen = c.generation();
        // SAFETY (test): SIGKILL to the worker we spawned.
        unsafe { libc::kill(pid as i32, libc::SIGKILL) };
        assert!(wait_gone(pid, Duration::from_secs(2)).is_some(), "the killed worker is gone");
        assert_eq!(held.i64s(kind::COMBINED_DIST).unwrap(), m.combined_distances(), "reply readable after death");
        // The next call runs on generation + 1, replayed to the same state and result ids.
        assert_mosp_equal(&c, rm.id, &m, "after restart");
        assert_eq!(c.generation(), gen + 1);
        assert_ne!(c.worker_pid().unwrap(), pid);
        drop(held);
        let b = batch(&g, 10, 10, 99);
        dyng::update_one(&res, &mut lg, &b.view(), &mut m).unwrap();
        assert_eq!(c.update(&b.view(), &[rm.id]).unwrap(), 5);
        assert_mosp_equal(&c, rm.id, &m, "update after restart");
        let wpid = c.worker_pid().unwrap();
        let sid = wpid; // the worker leads its own session
        drop(c);
        assert!(wait_gone(wpid, Duration::from_secs(2)).is_some(), "worker left after drop");
        assert!(session_members(sid).is_empty(), "L6: nothing left in the worker's session");
    }
    assert_eq!(shm_listing(), shm0, "L1: /dev/shm unchanged");
    assert_eq!(memfd_maps(std::process::id()), 0, "L3");
    // Other tests run concurrently in this process, so allow their fds to come and go; ours are
    // checked precisely by the dedicated leak test in worker_faults.rs (single-threaded).
    let _ = fds0;
}

#[test]
fn stopped_worker_is_reported_hung_within_the_timeout() {
    let _serial = serial();
    let o = WorkerOptions { hang_timeout: Duration::from_millis(500), heartbeat: Duration::from_millis(100), journal: false, ..opts() };
    let c = Client::spawn(o).unwrap();
    c.load_graph(&grid(10, 10, 1, 6)).unwrap();
    let pid = c.worker_pid().unwrap();
    // SAFETY (test): SIGSTOP to our worker.
    unsafe { libc::kill(pid as i32, libc::SIGSTOP) };
    let t0 = Instant::now();
    let e = c.sssp_compute(0, 0, &SsspOptions::default()).unwrap_err();
    assert_eq!(e.kind(), dyng::ErrorKind::WorkerLost, "{e}");
    assert!(e.to_string().contains("hung"), "{e}");
    assert!(t0.elapsed() < Duration::from_millis(1500));
    assert!(wait_gone(pid, Duration::from_secs(2)).is_some(), "the hung worker was killed");
    // Journal off: the next call runs on a fresh worker without the graph.
    assert!(c.sssp_compute(0, 0, &SsspOptions::default()).is_err());
    c.load_graph(&grid(10, 10, 1, 6)).unwrap();
    c.sssp_compute(0, 0, &SsspOptions::default()).unwrap();
}

#[test]
fn call_deadline_gives_timeout() {
    let _serial = serial();
    // A 1M-vertex compute takes far longer than 1 ms; the call is cancelled or the worker killed.
    let o = WorkerOptions { call_timeout: Some(Duration::from_millis(1)), cancel_grace: Duration::from_millis(200), ..opts() };
    let c = Client::spawn(o).unwrap();
    let e = c.load_graph(&grid(500, 500, 1, 7));
    if let Err(e) = e {
        assert_eq!(e.kind(), dyng::ErrorKind::Timeout, "{e}");
    }
}

/// When run as the host child of `parent_death_kills_the_worker_within_a_second`, spawns a
/// worker, writes its pid to the file named by `DYNG_TEST_HOST_CHILD` and stays in long calls
/// until killed.
#[test]
#[ignore]
fn host_child_for_parent_death() {
    let Some(path) = std::env::var_os("DYNG_TEST_HOST_CHILD") else { return };
    let c = Client::spawn(opts()).unwrap();
    let g = grid(300, 300, 2, 8);
    std::fs::write(&path, c.worker_pid().unwrap().to_string()).unwrap();
    // Bounded: the parent kills this process long before.
    for _ in 0..1000 {
        c.load_graph(&g).unwrap();
        let _ = c.mosp_compute(0, &MospOptions::default());
    }
}

#[test]
fn parent_death_kills_the_worker_within_a_second() {
    let _serial = serial();
    let file = std::env::temp_dir().join(format!("dyng-host-child-{}", std::process::id()));
    let _ = std::fs::remove_file(&file);
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "host_child_for_parent_death", "--ignored", "--test-threads=1"])
        .env("DYNG_TEST_HOST_CHILD", &file)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    let wpid: u32 = loop {
        if let Some(p) = std::fs::read_to_string(&file).ok().and_then(|s| s.trim().parse().ok()) {
            break p;
        }
        assert!(t0.elapsed() < Duration::from_secs(60), "host child never reported its worker");
        std::thread::sleep(Duration::from_millis(20));
    };
    let _ = std::fs::remove_file(&file);
    assert!(alive(wpid));
    std::thread::sleep(Duration::from_millis(300)); // let it get into a long call
    child.kill().unwrap();
    child.wait().unwrap();
    let took = wait_gone(wpid, Duration::from_secs(1));
    if took.is_none() {
        // SAFETY (test): clean up the straggler before failing.
        unsafe { libc::kill(wpid as i32, libc::SIGKILL) };
    }
    assert!(took.is_some(), "worker {wpid} still alive 1 s after its host died");
}

/// Runs role test `test` in a child process and fails with its output unless it passed.
fn assert_role_passes(test: &str, role: &str) {
    // The child's pipes are this process's fds while it runs: serialized with the tests that
    // count them.
    let _serial = serial();
    let out = run_role(test, role, &[]).wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{role} ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // The role ran (a role that returned early prints no such line).
    assert!(String::from_utf8_lossy(&out.stdout).contains(&format!("role {role} done")), "{role} did not run");
}

/// Open fds of this process, as numbers (without the one the listing itself used).
fn fd_numbers() -> std::collections::BTreeSet<i32> {
    let listed: Vec<i32> = std::fs::read_dir("/proc/self/fd").unwrap().flatten().filter_map(|e| e.file_name().to_str()?.parse().ok()).collect();
    listed.into_iter().filter(|fd| std::fs::read_link(format!("/proc/self/fd/{fd}")).is_ok()).collect()
}

/// T18: 10,000 calls keep the host's fd count constant; every fd dyng opens has FD_CLOEXEC; an
/// exec'd probe inherits none of them. In a child process, so no other test's fds interfere.
#[test]
fn fd_hygiene_over_ten_thousand_calls_and_an_exec_probe() {
    assert_role_passes("role_fd_hygiene", "fds");
}

#[test]
#[ignore]
fn role_fd_hygiene() {
    if !is_role("fds") {
        return;
    }
    let before = fd_numbers();
    let c = Client::spawn(opts()).unwrap();
    let g = grid(10, 10, 1, 20);
    c.load_graph(&g).unwrap(); // its input block stays in the journal
    let r = c.sssp_compute(0, 0, &SsspOptions::default()).unwrap();
    let held = c.view(r.id, 0, 0).unwrap(); // a lent block stays mapped
    let expect = held.i64s(kind::DIST).unwrap().to_vec();
    let count = self_fd_count();
    for i in 0..10_000 {
        match i % 3 {
            0 => assert_eq!(c.worker_stats().unwrap().lent_blocks, 1),
            1 => drop(c.view(r.id, 0, 0).unwrap()),
            _ => assert_eq!(c.copy_i64(r.id, kind::DIST, 0).unwrap(), expect),
        }
        if i % 1000 == 0 {
            assert_eq!(self_fd_count(), count, "fd count after {i} calls");
        }
    }
    assert_eq!(self_fd_count(), count, "fd count after 10,000 calls");
    let ours: Vec<(i32, String)> = fd_numbers()
        .difference(&before)
        .map(|fd| (*fd, std::fs::read_link(format!("/proc/self/fd/{fd}")).unwrap().display().to_string()))
        .collect();
    let has = |p: &str| ours.iter().any(|(_, t)| t.starts_with(p));
    assert!(has("socket:") && has("/memfd:dyng:h") && has("/memfd:dyng:w") && has("anon_inode:[pidfd]"), "{ours:?}");
    for (fd, target) in &ours {
        let info = std::fs::read_to_string(format!("/proc/self/fdinfo/{fd}")).unwrap();
        let flags = info.lines().find_map(|l| l.strip_prefix("flags:")).map(|f| i64::from_str_radix(f.trim(), 8).unwrap()).unwrap();
        assert_ne!(flags & libc::O_CLOEXEC as i64, 0, "fd {fd} ({target}) lacks FD_CLOEXEC");
    }
    // The probe lists its own fds: none of ours may be there.
    let probe = std::process::Command::new("ls").args(["-l", "/proc/self/fd/"]).output().unwrap();
    let listing = String::from_utf8_lossy(&probe.stdout);
    assert!(probe.status.success() && listing.contains("/proc/"), "{listing}");
    for (_, target) in &ours {
        assert!(!listing.contains(target.as_str()), "the exec'd probe inherited {target}:\n{listing}");
    }
    drop(held);
    println!("role fds done");
}

/// T8 (I10): after a view is released, a forked child reading its old pointer gets SIGSEGV; while
/// the view lives, the same read in a forked child sees the data.
#[test]
fn a_released_view_faults_instead_of_reading_stale_memory() {
    assert_role_passes("role_read_after_release", "segv");
}

/// Forks; the child reads the i64 at `addr` and exits 0 if it equals `expect` (1 if not). Returns
/// the wait status.
fn read_in_forked_child(addr: usize, expect: i64) -> i32 {
    // SAFETY (test): the child only reads and `_exit`s (async-signal-safe); a fault kills only it.
    unsafe {
        let pid = libc::fork();
        assert!(pid >= 0);
        if pid == 0 {
            let v = std::ptr::read_volatile(addr as *const i64);
            libc::_exit(if v == expect { 0 } else { 1 });
        }
        let mut st = 0;
        assert_eq!(libc::waitpid(pid, &mut st, 0), pid);
        st
    }
}

#[test]
#[ignore]
fn role_read_after_release() {
    if !is_role("segv") {
        return;
    }
    let c = Client::spawn(opts()).unwrap();
    c.load_graph(&grid(30, 30, 1, 21)).unwrap();
    let r = c.sssp_compute(0, 0, &SsspOptions::default()).unwrap();
    let v = c.view(r.id, 0, 0).unwrap();
    let d = v.i64s(kind::DIST).unwrap();
    let (addr, expect) = (&d[d.len() - 1] as *const i64 as usize, d[d.len() - 1]);
    assert!(expect > 0);
    let live = read_in_forked_child(addr, expect);
    assert!(libc::WIFEXITED(live) && libc::WEXITSTATUS(live) == 0, "a live view reads back ({live:#x})");
    drop(v);
    // Read right after the release: a later mapping (the next view, say) may be placed at the
    // freed address, and then the old pointer reads that mapping instead.
    let st = read_in_forked_child(addr, expect);
    assert!(libc::WIFSIGNALED(st) && libc::WTERMSIG(st) == libc::SIGSEGV, "read after release: status {st:#x}");
    println!("role segv done");
}

/// T3: with `RLIMIT_NOFILE` so low that the block's fd cannot be received (`MSG_CTRUNC`), the
/// view fails with `Io` (RESOURCE), CONSUMED is still sent (the worker's block is FREE again),
/// no fd leaks, and the next view works once fds are available.
#[test]
fn out_of_fds_gives_resource_and_still_acknowledges() {
    assert_role_passes("role_out_of_fds", "nofile");
}

#[test]
#[ignore]
fn role_out_of_fds() {
    if !is_role("nofile") {
        return;
    }
    let c = Client::spawn(opts()).unwrap();
    c.load_graph(&grid(20, 20, 1, 22)).unwrap();
    let r = c.sssp_compute(0, 0, &SsspOptions::default()).unwrap();
    let expect = c.copy_i64(r.id, kind::DIST, 0).unwrap();
    let count = self_fd_count();
    // The lowest free fd number (what a new fd gets) as the limit: every new fd would be at or
    // above it.
    // SAFETY (test): opening and closing a scratch fd.
    let lowest_free = unsafe {
        let fd = libc::open(c"/dev/null".as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC);
        assert!(fd >= 0);
        libc::close(fd);
        fd
    };
    let mut old = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY (test): reading and lowering this process's soft fd limit.
    unsafe {
        assert_eq!(libc::getrlimit(libc::RLIMIT_NOFILE, &mut old), 0);
        let low = libc::rlimit { rlim_cur: lowest_free as libc::rlim_t, rlim_max: old.rlim_max };
        assert_eq!(libc::setrlimit(libc::RLIMIT_NOFILE, &low), 0);
    }
    let e = c.view(r.id, 0, 0).unwrap_err();
    // SAFETY (test): restoring the limit.
    unsafe { assert_eq!(libc::setrlimit(libc::RLIMIT_NOFILE, &old), 0) };
    assert_eq!(e.kind(), dyng::ErrorKind::Io, "{e}");
    assert!(e.to_string().contains("MSG_CTRUNC"), "{e}");
    let st = c.worker_stats().unwrap();
    assert_eq!((st.lent_blocks, st.acks_ignored), (0, 0), "CONSUMED for the dropped block was accepted");
    assert_eq!(self_fd_count(), count, "no fd leaked");
    assert_eq!(c.copy_i64(r.id, kind::DIST, 0).unwrap(), expect);
    println!("role nofile done");
}

/// A golden case whose initial trees are not canonical (MANIFEST init = perturbed).
fn perturbed_case() -> dyng::io::driver::case::MospInputs {
    let case = common::cases(&common::local_golden().join("small")).into_iter().find(|c| c.name == "small/s010").unwrap();
    let paths = dyng::io::driver::case::CasePaths { graph: &case.graph, changes: &case.changes, init: &case.init, cache: None };
    dyng::io::driver::case::read_mosp_inputs(&paths, case.k, case.source).unwrap()
}

fn tree_slices(init: &[(Vec<i64>, Vec<i32>)]) -> Vec<(&[i64], &[i32])> {
    init.iter().map(|(d, p)| (&d[..], &p[..])).collect()
}

/// Adopted trees are journaled with their arrays: a SIGKILLed worker's replacement adopts them
/// again at their epoch and replays the updates they went through, so the results (which a
/// recompute would not give: the trees keep non-canonical tie parents) and their ids survive;
/// an adopted result left out of an update is stale after the replay too.
#[test]
fn adopted_trees_survive_a_killed_worker() {
    let _serial = serial();
    let inp = perturbed_case();
    let (src, k) = (inp.source, inp.k);
    let res = Resources::sequential();
    let mut lg = Graph::new(inp.graph.to_csr());
    let sopt = SsspOptions::default();
    let adopt = |g: &Graph, j: usize| SsspResult::from_arrays(g, src, j, inp.init[j].0.clone(), inp.init[j].1.clone(), false, &sopt).unwrap();
    let trees: Vec<SsspResult> = (0..k).map(|j| adopt(&lg, j)).collect();
    assert!(trees.iter().any(|t| !t.is_canonical()), "the case must exercise non-canonical trees");
    let mut m = MospResult::from_trees(&res, &lg, src, trees, &[]).unwrap();
    let mut s = adopt(&lg, 1);
    let c = Client::spawn(opts()).unwrap();
    c.load_graph(&lg.to_csr()).unwrap();
    let rm = c.adopt_mosp(src, &tree_slices(&inp.init), false, &vec![None; k], dyng::Fallback::AdaptiveCounted, &[]).unwrap();
    let rs = c.adopt_sssp(src, 1, &inp.init[1].0, &inp.init[1].1, false, &sopt).unwrap();
    assert_eq!(rm.scale, m.preferences().scale() as u32);
    assert_mosp_equal(&c, rm.id, &m, "adopted");
    let batches = [inp.batch.clone(), batch(&lg.to_csr(), 8, 8, 1)];
    let stale = c.adopt_sssp(src, 0, &inp.init[0].0, &inp.init[0].1, true, &sopt).unwrap();
    for b in &batches {
        dyng::update(&res, &mut lg, &b.view(), &mut [ResultMut::Mosp(&mut m), ResultMut::Sssp(&mut s)]).unwrap();
        c.update(&b.view(), &[rm.id, rs.id]).unwrap();
    }
    // A recompute of the final graph differs, so a replay that recomputed would be caught.
    let fresh = MospResult::compute(&res, &lg, src, &MospOptions::default()).unwrap();
    assert!((0..k).any(|j| fresh.tree(j).parents() != m.tree(j).parents()), "the adopted ties must persist");
    let pid = c.worker_pid().unwrap();
    let gen = c.generation();
    // SAFETY (test): SIGKILL to the worker we spawned.
    unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    assert!(wait_gone(pid, Duration::from_secs(2)).is_some());
    assert_mosp_equal(&c, rm.id, &m, "after restart");
    assert_eq!(c.generation(), gen + 1);
    let v = c.view(rs.id, 0, 0).unwrap();
    assert_eq!(v.i64s(kind::DIST).unwrap(), s.distances());
    assert_eq!(v.i32s(kind::PARENT).unwrap(), s.parents());
    drop(v);
    assert_eq!(c.view(stale.id, 0, 0).unwrap_err().kind(), dyng::ErrorKind::StaleResult);
    // The replayed results keep being updated like the in-process ones.
    let b = batch(&lg.to_csr(), 8, 8, 2);
    dyng::update(&res, &mut lg, &b.view(), &mut [ResultMut::Mosp(&mut m), ResultMut::Sssp(&mut s)]).unwrap();
    c.update(&b.view(), &[rm.id, rs.id]).unwrap();
    assert_mosp_equal(&c, rm.id, &m, "update after restart");
    assert_eq!(c.copy_i32(rs.id, kind::PARENT, 0).unwrap(), s.parents());
}

/// Adoption errors come back with the in-process status and text.
#[test]
fn adoption_errors_equal_in_process() {
    let _serial = serial();
    let inp = perturbed_case();
    let (src, k) = (inp.source, inp.k);
    let g = Graph::new(inp.graph.to_csr());
    let c = Client::spawn(opts()).unwrap();
    c.load_graph(&g.to_csr()).unwrap();
    let mut bad = inp.init.clone();
    bad[1].1[7] = 7; // a self-parent: a cycle
    let sopt = SsspOptions::default();
    let local = SsspResult::from_arrays(&g, src, 1, bad[1].0.clone(), bad[1].1.clone(), false, &sopt).unwrap_err();
    let remote = c.adopt_sssp(src, 1, &bad[1].0, &bad[1].1, false, &sopt).unwrap_err();
    assert_eq!((remote.kind(), remote.to_string()), (local.kind(), local.to_string()));
    let remote = c.adopt_mosp(src, &tree_slices(&bad), false, &vec![None; k], dyng::Fallback::AdaptiveCounted, &[]).unwrap_err();
    assert_eq!((remote.kind(), remote.to_string()), (local.kind(), local.to_string()));
    // Preferences are checked by `from_trees` after the trees, as in-process.
    let trees: Vec<SsspResult> = (0..k)
        .map(|j| SsspResult::from_arrays(&g, src, j, inp.init[j].0.clone(), inp.init[j].1.clone(), false, &sopt).unwrap())
        .collect();
    let local = MospResult::from_trees(&Resources::sequential(), &g, src, trees, &[1, 2]).unwrap_err();
    let remote = c.adopt_mosp(src, &tree_slices(&inp.init), false, &vec![None; k], dyng::Fallback::AdaptiveCounted, &[1, 2]).unwrap_err();
    assert_eq!((remote.kind(), remote.to_string()), (local.kind(), local.to_string()));
    let remote = c.adopt_sssp(src, 1, &bad[1].0[1..], &bad[1].1, false, &sopt).unwrap_err();
    assert_eq!(remote.kind(), dyng::ErrorKind::InvalidArgument, "{remote}");
}

/// STATS through the worker on the sequential engine equal the in-process counters of the same
/// compute, adoption and update.
#[test]
fn result_stats_equal_in_process_on_the_sequential_engine() {
    let _serial = serial();
    let inp = perturbed_case();
    let (src, k) = (inp.source, inp.k);
    let res = Resources::sequential();
    let mut lg = Graph::new(inp.graph.to_csr());
    let sopt = SsspOptions::default();
    let trees: Vec<SsspResult> = (0..k)
        .map(|j| SsspResult::from_arrays(&lg, src, j, inp.init[j].0.clone(), inp.init[j].1.clone(), false, &sopt).unwrap())
        .collect();
    let mut m = MospResult::from_trees(&res, &lg, src, trees, &[]).unwrap();
    let mut s = SsspResult::compute(&res, &lg, src, 2, &sopt).unwrap();
    let c = Client::spawn(WorkerOptions { backend: Some(dyng::Backend::Sequential), ..opts() }).unwrap();
    c.load_graph(&lg.to_csr()).unwrap();
    let rm = c.adopt_mosp(src, &tree_slices(&inp.init), false, &vec![None; k], dyng::Fallback::AdaptiveCounted, &[]).unwrap();
    let rs = c.sssp_compute(src, 2, &sopt).unwrap();
    let check = |c: &Client, m: &MospResult, s: &SsspResult, what: &str| {
        let w = c.result_stats(rs.id).unwrap();
        assert_eq!(w.kind, 1);
        assert_eq!(w.objectives.len(), 1);
        assert_same(&w.objectives[0], &s.stats(), what);
        let w = c.result_stats(rm.id).unwrap();
        assert_eq!(w.objectives.len(), k);
        for (j, o) in w.objectives.iter().enumerate() {
            assert_eq!(o.objective as usize, j);
            assert_same(o, &m.objective_stats()[j], what);
        }
        let (cw, cs) = (w.combined.unwrap(), m.combine_stats());
        assert_eq!((cw.edges, cw.scale as u64, cw.delta, cw.iterations, cw.pushes), (cs.edges as u64, cs.scale, cs.delta, cs.search.iterations as u64, cs.search.pushes as u64), "{what}: combined");
    };
    check(&c, &m, &s, "after compute and adoption");
    dyng::update(&res, &mut lg, &inp.batch.view(), &mut [ResultMut::Mosp(&mut m), ResultMut::Sssp(&mut s)]).unwrap();
    c.update(&inp.batch.view(), &[rm.id, rs.id]).unwrap();
    assert!(m.objective_stats().iter().any(|t| t.pushes > 0 && t.affected > 0), "the update must do work");
    check(&c, &m, &s, "after the update");
    assert_eq!(c.result_stats(999).unwrap_err().kind(), dyng::ErrorKind::StaleResult, "unknown id = NOT_FOUND");
}

/// Each adaptive-update policy of a compute reaches the worker (extension 2) and outlives a
/// replacement of the worker after a checkpoint (whose replay recreates each result by adopting
/// its trees): on the sequential engine every update's counters, `fallback_used` among them,
/// equal those of the same policy in process.
/// A 70 x 70 grid (4,900 vertices) is large enough for the adaptive policies to choose.
#[test]
fn the_fallback_policy_reaches_the_worker_and_survives_checkpoints() {
    // It spawns and kills workers: the tests that count this process's fds must not run beside it.
    let _serial = serial();
    use dyng::Fallback;
    let g0 = grid(70, 70, 2, 11);
    let res = Resources::sequential();
    let c = Client::spawn(WorkerOptions { backend: Some(dyng::Backend::Sequential), checkpoint_batches: 1, ..opts() }).unwrap();
    c.load_graph(&g0).unwrap();
    let mut lg = Graph::new(g0.clone());
    let policies = [Fallback::Adaptive, Fallback::Never, Fallback::Always, Fallback::AdaptiveCounted];
    let mut local = Vec::new();
    let mut remote = Vec::new();
    for &fallback in &policies {
        let sopt = SsspOptions { fallback, ..Default::default() };
        local.push(SsspResult::compute(&res, &lg, 0, 1, &sopt).unwrap());
        remote.push(c.sssp_compute(0, 1, &sopt).unwrap().id);
    }
    let mopt = MospOptions { fallback: Fallback::Never, ..Default::default() };
    let mut lm = MospResult::compute(&res, &lg, 0, &mopt).unwrap();
    let rm = c.mosp_compute(0, &mopt).unwrap().id;
    let mut fell_back = [false; 4];
    for round in 0..4u64 {
        // A batch of many changes (most of the tree moves) and one of few, in turn, so that the
        // adaptive policies both repair and recompute.
        let b = if round % 2 == 0 { batch(&lg.to_csr(), 3000, 3000, round) } else { batch(&lg.to_csr(), 5, 5, round) };
        let mut all: Vec<ResultMut> = local.iter_mut().map(ResultMut::Sssp).collect();
        all.push(ResultMut::Mosp(&mut lm));
        dyng::update(&res, &mut lg, &b.view(), &mut all).unwrap();
        let mut ids = remote.clone();
        ids.push(rm);
        if round == 2 {
            let before = kill_worker(&c);
            c.update(&b.view(), &ids).unwrap();
            assert!(c.generation() > before, "the worker was replaced and the checkpoint replayed");
        } else {
            c.update(&b.view(), &ids).unwrap();
        }
        for (i, (l, &r)) in local.iter().zip(&remote).enumerate() {
            let w = c.result_stats(r).unwrap();
            assert_same(&w.objectives[0], &l.stats(), &format!("{:?}, round {round}", policies[i]));
            fell_back[i] |= l.stats().fallback_used;
        }
        for (j, o) in c.result_stats(rm).unwrap().objectives.iter().enumerate() {
            assert_same(o, &lm.objective_stats()[j], &format!("MOSP tree {j} (Never), round {round}"));
            assert!(!o.fallback_used, "round {round}: a Never tree recomputed");
        }
    }
    assert!(c.counters().checkpoints.load(std::sync::atomic::Ordering::SeqCst) > 0, "checkpoints were taken");
    assert_eq!(fell_back, [true, false, true, true], "Adaptive, Never, Always, AdaptiveCounted");
    // Gone before the next serialized test counts fds.
    let wpid = c.worker_pid().unwrap();
    drop(c);
    assert!(wait_gone(wpid, Duration::from_secs(2)).is_some(), "the worker left");
}

fn assert_same(w: &dyng::worker::ObjectiveStats, s: &dyng::UpdateStats, what: &str) {
    let got = (w.invalidated as i64, w.affected as i64, w.iterations as i64, w.epochs as i64, w.pushes as i64, w.packed, w.fallback_used);
    let want = (s.invalidated, s.affected, s.iterations, s.epochs, s.pushes, s.packed_parents, s.fallback_used);
    assert_eq!(got, want, "{what}");
}

/// SIGKILLs the client's worker and waits until it is gone; returns its generation.
fn kill_worker(c: &Client) -> u32 {
    let pid = c.worker_pid().unwrap();
    let gen = c.generation();
    // SAFETY (test): SIGKILL to the worker we spawned.
    unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    assert!(wait_gone(pid, Duration::from_secs(2)).is_some(), "the killed worker is gone");
    gen
}

/// With a checkpoint every 3 batches (12.3), ten updates leave at most 3 batches in the journal,
/// and a SIGKILLed worker's replacement, rebuilt from the checkpoint (graph + adopted arrays),
/// holds byte-identical arrays under the same ids at the same epoch: a computed SSSP tree, a
/// computed MOSP result and an adopted MOSP result whose non-canonical ties a recompute would
/// not give. The replayed results keep updating like the in-process ones, through a second
/// checkpoint and a second kill.
#[test]
fn checkpoints_bound_the_journal_and_replay_byte_identical() {
    let _serial = serial();
    let inp = perturbed_case();
    let (src, k) = (inp.source, inp.k);
    let res = Resources::sequential();
    let mut lg = Graph::new(inp.graph.to_csr());
    let sopt = SsspOptions { delta: Some(7), ..Default::default() };
    let mopt = MospOptions { k: Some(2), preferences: vec![2, 1], ..Default::default() };
    let mut s = SsspResult::compute(&res, &lg, src, 1, &sopt).unwrap();
    let mut m = MospResult::compute(&res, &lg, src, &mopt).unwrap();
    let trees: Vec<SsspResult> = (0..k)
        .map(|j| SsspResult::from_arrays(&lg, src, j, inp.init[j].0.clone(), inp.init[j].1.clone(), false, &SsspOptions::default()).unwrap())
        .collect();
    let mut am = MospResult::from_trees(&res, &lg, src, trees, &[]).unwrap();
    let c = Client::spawn(WorkerOptions { checkpoint_batches: 3, checkpoint_bytes: 0, ..opts() }).unwrap();
    c.load_graph(&lg.to_csr()).unwrap();
    let rs = c.sssp_compute(src, 1, &sopt).unwrap();
    let rm = c.mosp_compute(src, &mopt).unwrap();
    let ram = c.adopt_mosp(src, &tree_slices(&inp.init), false, &vec![None; k], dyng::Fallback::AdaptiveCounted, &[]).unwrap();
    let ids = [rs.id, rm.id, ram.id];
    let step = |c: &Client, lg: &mut Graph, s: &mut SsspResult, m: &mut MospResult, am: &mut MospResult, seed: u64| {
        let b = batch(&lg.to_csr(), 8, 8, seed);
        let mut rs = [ResultMut::Sssp(s), ResultMut::Mosp(m), ResultMut::Mosp(am)];
        dyng::update(&res, lg, &b.view(), &mut rs).unwrap();
        let epoch = c.update(&b.view(), &ids).unwrap();
        assert!(c.journal_size().0 <= 3, "the journal holds at most the threshold's batches");
        epoch
    };
    let mut epoch = 0;
    for i in 0..10 {
        epoch = step(&c, &mut lg, &mut s, &mut m, &mut am, i);
    }
    assert_eq!(c.counters().checkpoints.load(std::sync::atomic::Ordering::SeqCst), 2, "checkpoints after batches 4 and 8");
    assert_eq!(c.counters().checkpoint_failures.load(std::sync::atomic::Ordering::SeqCst), 0);
    assert_eq!(c.journal_size().0, 2);
    let fresh = MospResult::compute(&res, &lg, src, &MospOptions::default()).unwrap();
    assert!((0..k).any(|j| fresh.tree(j).parents() != am.tree(j).parents()), "the adopted ties must persist");
    let check = |c: &Client, s: &SsspResult, m: &MospResult, am: &MospResult, lg: &Graph, epoch: u64, what: &str| {
        let v = c.view(rs.id, 0, 0).unwrap();
        assert_eq!(v.epoch(), epoch, "{what}: epoch");
        assert_eq!(bytes(v.i64s(kind::DIST).unwrap()), bytes(s.distances()), "{what}: sssp dist");
        assert_eq!(bytes(v.i32s(kind::PARENT).unwrap()), bytes(s.parents()), "{what}: sssp parent");
        drop(v);
        assert_mosp_equal(c, rm.id, m, &format!("{what}: computed mosp"));
        assert_mosp_equal(c, ram.id, am, &format!("{what}: adopted mosp"));
        let g = c.checkpoint().unwrap();
        assert_eq!(g.i32s(kind::ROW_PTR).unwrap(), lg.to_csr().row_ptr(), "{what}: graph");
        assert_eq!(g.i32s(kind::COL_IND).unwrap(), lg.to_csr().col_ind(), "{what}: graph");
        assert_eq!(g.i32s(kind::WEIGHTS).unwrap(), lg.to_csr().weights(), "{what}: graph");
        assert_eq!(c.graph_info().unwrap().epoch, epoch);
    };
    check(&c, &s, &m, &am, &lg, epoch, "before the kill");
    let gen = kill_worker(&c);
    check(&c, &s, &m, &am, &lg, epoch, "after the kill");
    assert_eq!(c.generation(), gen + 1);
    // A new result gets the next id: the replayed worker knows the ids in use.
    let next = c.sssp_compute(src, 0, &SsspOptions::default()).unwrap();
    assert_eq!(next.id, ids.iter().max().unwrap() + 1);
    c.drop_result(next.id).unwrap();
    for i in 10..15 {
        epoch = step(&c, &mut lg, &mut s, &mut m, &mut am, i);
    }
    assert_eq!(c.counters().checkpoints.load(std::sync::atomic::Ordering::SeqCst), 3, "a checkpoint of the replayed state");
    check(&c, &s, &m, &am, &lg, epoch, "after updates on the replayed worker");
    let gen = kill_worker(&c);
    check(&c, &s, &m, &am, &lg, epoch, "after the second kill");
    assert_eq!(c.generation(), gen + 1);
}

/// A result left out of an update is stale, and stays stale through checkpoints and the replay
/// of a killed worker (VIEW and UPDATE refuse it, DROP_RESULT frees it), computed or adopted,
/// while the results kept current come back byte-identical.
#[test]
fn stale_results_stay_stale_across_checkpoint_and_replay() {
    let _serial = serial();
    let g = grid(20, 20, 2, 3);
    let res = Resources::sequential();
    let mut lg = Graph::new(g.clone());
    let sopt = SsspOptions::default();
    let mut s = SsspResult::compute(&res, &lg, 0, 0, &sopt).unwrap();
    let mut m = MospResult::compute(&res, &lg, 7, &MospOptions::default()).unwrap();
    let c = Client::spawn(WorkerOptions { checkpoint_batches: 1, checkpoint_bytes: 0, ..opts() }).unwrap();
    c.load_graph(&g).unwrap();
    let live = c.sssp_compute(0, 0, &sopt).unwrap();
    let live_m = c.mosp_compute(7, &MospOptions::default()).unwrap(); // K = 0: all objectives
    let stale = c.sssp_compute(5, 1, &sopt).unwrap();
    let stale_m = c.mosp_compute(3, &MospOptions::default()).unwrap();
    let adopted = c.adopt_sssp(0, 0, s.distances(), s.parents(), false, &sopt).unwrap();
    let mut epoch = 0;
    for i in 0..4 {
        let b = batch(&lg.to_csr(), 6, 6, 40 + i);
        dyng::update(&res, &mut lg, &b.view(), &mut [ResultMut::Sssp(&mut s), ResultMut::Mosp(&mut m)]).unwrap();
        epoch = c.update(&b.view(), &[live.id, live_m.id]).unwrap();
    }
    assert!(c.counters().checkpoints.load(std::sync::atomic::Ordering::SeqCst) >= 2, "checkpoints with stale results");
    assert_eq!(c.counters().checkpoint_failures.load(std::sync::atomic::Ordering::SeqCst), 0);
    assert!(c.journal_size().0 <= 1);
    let assert_state = |s: &SsspResult, m: &MospResult, epoch: u64, what: &str| {
        assert_mosp_equal(&c, live_m.id, m, what);
        for id in [stale.id, stale_m.id, adopted.id] {
            assert_eq!(c.view(id, 0, 0).unwrap_err().kind(), dyng::ErrorKind::StaleResult, "{what}: view of {id}");
        }
        let v = c.view(live.id, 0, 0).unwrap();
        assert_eq!(v.epoch(), epoch, "{what}");
        assert_eq!(bytes(v.i64s(kind::DIST).unwrap()), bytes(s.distances()), "{what}");
        assert_eq!(bytes(v.i32s(kind::PARENT).unwrap()), bytes(s.parents()), "{what}");
    };
    assert_state(&s, &m, epoch, "before the kill");
    let gen = kill_worker(&c);
    assert_state(&s, &m, epoch, "after the kill");
    assert_eq!(c.generation(), gen + 1);
    let b = batch(&lg.to_csr(), 6, 6, 99);
    let e = c.update(&b.view(), &[live.id, live_m.id, stale.id]).unwrap_err();
    assert_eq!(e.kind(), dyng::ErrorKind::StaleResult, "{e}");
    assert_eq!(c.graph_info().unwrap().epoch, epoch, "the refused update is not applied");
    dyng::update(&res, &mut lg, &b.view(), &mut [ResultMut::Sssp(&mut s), ResultMut::Mosp(&mut m)]).unwrap();
    epoch = c.update(&b.view(), &[live.id, live_m.id]).unwrap();
    c.drop_result(stale.id).unwrap();
    let gen = kill_worker(&c);
    let e = c.view(stale.id, 0, 0).unwrap_err();
    assert!(e.to_string().contains("is not resident"), "a dropped result stays dropped: {e}");
    assert_state(&s, &m, epoch, "after a second kill");
    assert_eq!(c.generation(), gen + 1);
}

/// The byte threshold alone triggers checkpoints (each batch here is 96 bytes of input: 4
/// insertions of 16 bytes at K = 2 and 4 deletions of 8), and with both thresholds 0 the journal
/// keeps every batch.
#[test]
fn checkpoint_byte_threshold_and_no_checkpoints() {
    use std::sync::atomic::Ordering::SeqCst;
    let _serial = serial();
    let g = grid(12, 12, 2, 9);
    let c = Client::spawn(WorkerOptions { checkpoint_batches: 0, checkpoint_bytes: 150, ..opts() }).unwrap();
    c.load_graph(&g).unwrap();
    let r = c.sssp_compute(0, 0, &SsspOptions::default()).unwrap();
    let mut lg = Graph::new(g.clone());
    for i in 0..6 {
        let b = batch(&lg.to_csr(), 4, 4, i);
        lg.apply(&b.view()).unwrap();
        c.update(&b.view(), &[r.id]).unwrap();
        assert_eq!(c.journal_size(), ((i as usize + 1) % 2, 96 * ((i + 1) % 2)), "after batch {i}");
    }
    assert_eq!(c.counters().checkpoints.load(SeqCst), 3);
    let c = Client::spawn(WorkerOptions { checkpoint_batches: 0, checkpoint_bytes: 0, ..opts() }).unwrap();
    c.load_graph(&g).unwrap();
    for i in 0..70 {
        c.update(&batch(&g, 1, 0, i).view(), &[]).unwrap();
    }
    assert_eq!((c.counters().checkpoints.load(SeqCst), c.journal_size().0), (0, 70));
}
