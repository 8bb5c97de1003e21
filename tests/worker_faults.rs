//! Fault injection through `DYNG_FAULT` (spec 17.2, a subset of T11 and T17): crash and SIGKILL
//! at named worker points, the journal's exactly-once replay, a poison batch and the crash-loop
//! guard, each followed by the leak checks. Built only with `--features fault-injection`.
#![cfg(feature = "fault-injection")]

mod worker_util;

use dyng::worker::{kind, Client, WorkerOptions};
use dyng::{Graph, MospOptions, MospResult, Resources};
use std::time::Duration;
use worker_util::*;

fn with_fault(spec: &str) -> WorkerOptions {
    let mut o = opts();
    o.env.push(("DYNG_FAULT".into(), spec.into()));
    o
}

/// Runs LOAD, MOSP, 3 updates and a view with `spec` active in generation 1 only; the caller
/// must get the in-process result and the next call must run on a fresh generation.
fn scenario(spec: &str) {
    let shm0 = shm_listing();
    let fds0 = self_fd_count();
    let g = grid(25, 25, 2, 11);
    let res = Resources::sequential();
    let mut lg = Graph::new(g.clone());
    let mut m = MospResult::compute(&res, &lg, 0, &MospOptions::default()).unwrap();
    let c = Client::spawn(with_fault(&format!("{spec}:1"))).unwrap();
    c.load_graph(&g).unwrap();
    let r = c.mosp_compute(0, &MospOptions::default()).unwrap();
    for i in 0..3 {
        let b = batch(&g, 8, 8, 100 + i);
        dyng::update_one(&res, &mut lg, &b.view(), &mut m).unwrap();
        assert_eq!(c.update(&b.view(), &[r.id]).unwrap(), 2 + i, "{spec}: update {i} applied exactly once");
    }
    {
        let v = c.view(r.id, 0, 0).unwrap();
        assert_eq!(v.i64s(kind::COMBINED_DIST).unwrap(), m.combined_distances(), "{spec}");
        assert_eq!(v.i64s(kind::PATH_COSTS).unwrap(), m.path_costs(), "{spec}");
    }
    // The stats call comes first: a fault on the view's CONSUMED (W7) is seen by it.
    let st = c.worker_stats().unwrap();
    assert!(c.generation() >= 2, "{spec}: the fault never fired");
    assert_eq!(st.epoch, 4, "{spec}");
    close_and_check_leaks(c, &st, &shm0, fds0, spec);
}

// Hits of W3 in generation 1: LOAD (1), MOSP (2), updates (3, 4, 5). W2 hits every call.
#[test]
fn crash_mid_update_is_replayed_exactly_once() {
    let _serial = serial();
    scenario("W3:CRASH:4");
}

#[test]
fn sigkill_mid_update_is_replayed_exactly_once() {
    let _serial = serial();
    scenario("W3:SIGKILL_SELF:5");
}

#[test]
fn crash_when_a_call_is_received() {
    let _serial = serial();
    scenario("W2:CRASH:3");
}

#[test]
fn sigkill_mid_compute() {
    let _serial = serial();
    scenario("W3:SIGKILL_SELF:2");
}

#[test]
fn crash_with_a_filled_block_before_sending() {
    let _serial = serial();
    scenario("W4:CRASH:3");
}

#[test]
fn sigkill_right_after_reply_ok() {
    let _serial = serial();
    scenario("W5:SIGKILL_SELF:2");
}

#[test]
fn exit0_when_a_call_is_received() {
    let _serial = serial();
    scenario("W2:EXIT0:4");
}

#[test]
fn crash_on_consumed_ack() {
    let _serial = serial();
    // Acks arrive while the next call runs; the death is seen by that call or the one after.
    let c = Client::spawn(with_fault("W7:CRASH:1:1")).unwrap();
    let g = grid(20, 20, 1, 12);
    c.load_graph(&g).unwrap();
    let r = c.sssp_compute(0, 0, &Default::default()).unwrap();
    let expect = dyng::SsspResult::compute(&Resources::sequential(), &Graph::new(g.clone()), 0, 0, &Default::default()).unwrap();
    for _ in 0..3 {
        let v = c.view(r.id, 0, 0).unwrap();
        assert_eq!(v.i64s(kind::DIST).unwrap(), expect.distances());
    }
    assert_eq!(c.generation(), 2);
    assert!(c.counters().acks_dropped.load(std::sync::atomic::Ordering::SeqCst) <= 1);
}

#[test]
fn crash_before_welcome_fails_the_spawn_cleanly() {
    let _serial = serial();
    let e = Client::spawn(with_fault("W1:CRASH")).err().expect("spawn must fail");
    assert_eq!(e.kind(), dyng::ErrorKind::WorkerLost, "{e}");
}

#[test]
fn poison_batch_is_dropped_and_the_state_rebuilt_without_it() {
    let _serial = serial();
    let g = grid(20, 20, 1, 13);
    // Generation 1 dies in its 3rd W3 (the 2nd update); generation 2 dies replaying that same
    // batch (LOAD 1, update 1 = 2, update 2 = 3); generation 3 is clean.
    let mut o = opts();
    o.env.push(("DYNG_FAULT".into(), "W3:CRASH:3:1,W3:CRASH:3:2".into()));
    let c = Client::spawn(o).unwrap();
    c.load_graph(&g).unwrap();
    c.update(&batch(&g, 5, 5, 1).view(), &[]).unwrap();
    let e = c.update(&batch(&g, 5, 5, 2).view(), &[]).unwrap_err();
    assert_eq!(e.kind(), dyng::ErrorKind::WorkerLost, "{e}");
    assert!(e.to_string().contains("dropped"), "{e}");
    // Rebuilt without the poison batch: epoch 2, and the checkpoint equals LOAD + batch 1.
    let mut lg = Graph::new(g.clone());
    lg.apply(&batch(&g, 5, 5, 1).view()).unwrap();
    let v = c.checkpoint().unwrap();
    assert_eq!(v.epoch(), 2);
    assert_eq!(v.i32s(kind::COL_IND).unwrap(), lg.to_csr().col_ind());
    assert_eq!(c.generation(), 3);
}

#[test]
fn crash_loop_stops_with_a_clear_error() {
    let _serial = serial();
    let c = Client::spawn(with_fault("W2:CRASH:1")).unwrap();
    let e = c.load_graph(&grid(5, 5, 1, 14)).unwrap_err();
    let mut last = e.to_string();
    for _ in 0..4 {
        match c.worker_stats() {
            Err(e) => last = e.to_string(),
            Ok(_) => panic!("a worker that always crashes answered"),
        }
    }
    assert!(last.contains("unstable"), "{last}");
    assert!(c.worker_pid().is_none());
}

#[test]
fn seal_fallback_mode_serves_views() {
    let _serial = serial();
    let mut o = opts();
    o.env.push(("DYNG_TEST_NO_FUTURE_WRITE".into(), "1".into()));
    let c = Client::spawn(o).unwrap();
    let g = grid(20, 20, 1, 15);
    c.load_graph(&g).unwrap();
    let r = c.sssp_compute(0, 0, &Default::default()).unwrap();
    let expect = dyng::SsspResult::compute(&Resources::sequential(), &Graph::new(g), 0, 0, &Default::default()).unwrap();
    for _ in 0..10 {
        assert_eq!(c.view(r.id, 0, 0).unwrap().i64s(kind::DIST).unwrap(), expect.distances());
    }
    assert_eq!(c.worker_stats().unwrap().pool_blocks, 1);
}

/// Double kill (T12): the worker is SIGKILLed in an update, and its replacement is SIGKILLed
/// again while the journal replays the graph load; the third worker replays everything and the
/// caller gets the in-process result, with nothing leaked.
#[test]
fn double_kill_during_replay_recovers_on_the_third_worker() {
    let _serial = serial();
    let shm0 = shm_listing();
    let g = grid(20, 20, 2, 15);
    let res = Resources::sequential();
    let mut lg = Graph::new(g.clone());
    let mut m = MospResult::compute(&res, &lg, 0, &MospOptions::default()).unwrap();
    // Generation 1: W3 hits LOAD (1), MOSP (2), the update (3). Generation 2: its first call is
    // the replayed LOAD, killed at W2.
    let c = Client::spawn(with_fault("W3:SIGKILL_SELF:3:1,W2:SIGKILL_SELF:1:2")).unwrap();
    c.load_graph(&g).unwrap();
    let r = c.mosp_compute(0, &MospOptions::default()).unwrap();
    let b = batch(&g, 6, 6, 7);
    dyng::update_one(&res, &mut lg, &b.view(), &mut m).unwrap();
    let outcome = c.update(&b.view(), &[r.id]);
    if let Err(e) = &outcome {
        // A kill of the replacement counts against the batch only if it died replaying it.
        panic!("double kill: {e}");
    }
    {
        let v = c.view(r.id, 0, 0).unwrap();
        assert_eq!(v.i64s(kind::COMBINED_DIST).unwrap(), m.combined_distances());
    }
    assert_eq!(c.generation(), 3, "both kills fired");
    let wpid = c.worker_pid().unwrap();
    drop(c);
    assert!(wait_gone(wpid, Duration::from_secs(2)).is_some());
    assert_eq!(shm_listing(), shm0);
    assert_eq!(memfd_maps(std::process::id()), 0);
}

/// The actions of the crash matrix (T11): an abort and a SIGKILL of the process at the point.
const KILLS: [&str; 2] = ["CRASH", "SIGKILL_SELF"];

/// T11, worker side: every worker fault point the code has (W6 is GPU-only) with both kills.
/// W2-W5, W7 and W9 run `scenario` with the journal (the caller gets the in-process result, the
/// next call runs on generation + 1, L1-L4 and L6) and `scenario_without_journal`; `nth` is the
/// hit of the point in generation 1 that kills: W2, W4 hit on every call, W3 on LOAD, MOSP and
/// each update, W5 after each reply, W7 on the view's CONSUMED and W9 when the view's block is
/// filled. W1 and W8 need their own workloads.
#[test]
fn crash_matrix_of_every_worker_point() {
    let _serial = serial();
    let rows = [("W2", 3), ("W3", 4), ("W4", 3), ("W5", 2), ("W7", 1), ("W9", 1)];
    for (point, nth) in rows {
        for action in KILLS {
            scenario(&format!("{point}:{action}:{nth}"));
            scenario_without_journal(&format!("{point}:{action}:{nth}"));
        }
    }
    for action in KILLS {
        death_before_welcome(action);
        death_during_ttl_retire(action);
    }
}

/// The workload of `scenario` with the journal off, stopped at the first failure: exactly one
/// call must fail, with `WorkerLost` ("restarted without journal", section 11); the replacement
/// (generation 2) has neither the graph nor the result, a reload works, and nothing leaks.
fn scenario_without_journal(spec: &str) {
    let what = format!("{spec}, journal off");
    let (shm0, fds0) = (shm_listing(), self_fd_count());
    let g = grid(25, 25, 2, 11);
    let c = Client::spawn(WorkerOptions { journal: false, ..with_fault(&format!("{spec}:1")) }).unwrap();
    let mut id = 0;
    let mut lost = None;
    for step in 0..7u64 {
        let out = match step {
            0 => c.load_graph(&g).map(drop),
            1 => c.mosp_compute(0, &MospOptions::default()).map(|r| id = r.id),
            2..=4 => c.update(&batch(&g, 8, 8, 98 + step).view(), &[id]).map(drop),
            5 => c.view(id, 0, 0).map(drop),
            _ => c.worker_stats().map(drop),
        };
        if let Err(e) = out {
            lost = Some(e);
            break;
        }
    }
    let e = lost.unwrap_or_else(|| panic!("{what}: no call saw the death"));
    assert_eq!(e.kind(), dyng::ErrorKind::WorkerLost, "{what}: {e}");
    assert!(e.to_string().contains("restarted without journal"), "{what}: {e}");
    assert!(id != 0 && c.view(id, 0, 0).is_err(), "{what}: the replacement must not have the result");
    assert_eq!((c.generation(), c.graph_info()), (2, None), "{what}");
    c.load_graph(&g).unwrap();
    let r = c.sssp_compute(0, 0, &Default::default()).unwrap();
    drop(c.view(r.id, 0, 0).unwrap());
    let st = c.worker_stats().unwrap();
    assert_eq!(c.generation(), 2, "{what}");
    close_and_check_leaks(c, &st, &shm0, fds0, &what);
}

/// W1 (after HELLO, before WELCOME): the spawn fails with `WorkerLost`, the worker is reaped,
/// nothing leaks, and a new client works.
fn death_before_welcome(action: &str) {
    let (shm0, fds0) = (shm_listing(), self_fd_count());
    let e = Client::spawn(with_fault(&format!("W1:{action}"))).err().expect("spawn must fail");
    assert_eq!(e.kind(), dyng::ErrorKind::WorkerLost, "W1 {action}: {e}");
    assert!(workers_of(std::process::id()).is_empty(), "W1 {action}: a worker is left");
    assert_eq!(shm_listing(), shm0, "W1 {action}: L1");
    assert_eq!(self_fd_count(), fds0, "W1 {action}: L2");
    let c = Client::spawn(opts()).unwrap();
    c.load_graph(&grid(5, 5, 1, 16)).unwrap();
}

/// W8 (during a TTL retire): a view held past the lend TTL makes the worker retire its block and
/// die there. The held view stays readable (the host's mapping keeps the pages), the next call
/// runs on generation 2 with the journal replayed, and nothing leaks.
fn death_during_ttl_retire(action: &str) {
    let what = format!("W8 {action}");
    let (shm0, fds0) = (shm_listing(), self_fd_count());
    let g = grid(20, 20, 1, 17);
    let expect = dyng::SsspResult::compute(&Resources::sequential(), &Graph::new(g.clone()), 0, 0, &Default::default()).unwrap();
    let o = WorkerOptions { lend_ttl: Duration::from_millis(100), heartbeat: Duration::from_millis(20), ..with_fault(&format!("W8:{action}:1:1")) };
    let c = Client::spawn(o).unwrap();
    c.load_graph(&g).unwrap();
    let r = c.sssp_compute(0, 0, &Default::default()).unwrap();
    let wpid = c.worker_pid().unwrap();
    let held = c.view(r.id, 0, 0).unwrap();
    assert!(wait_gone(wpid, Duration::from_secs(5)).is_some(), "{what}: the worker did not die in the retire");
    assert_eq!(held.i64s(kind::DIST).unwrap(), expect.distances(), "{what}: a held view survives its worker");
    drop(held);
    assert_eq!(c.copy_i64(r.id, kind::DIST, 0).unwrap(), expect.distances(), "{what}");
    assert_eq!(c.generation(), 2, "{what}");
    let st = c.worker_stats().unwrap();
    close_and_check_leaks(c, &st, &shm0, fds0, &what);
}

/// A reply the host must refuse (section 11, T4): the worker tampers with its lent block at W4 in
/// generation 1 (the 3rd W4 hit: LOAD, SSSP, the view) with `action`. The call fails with
/// `Protocol` naming the check that caught it (`in_message`), the refused block is still
/// acknowledged (I5), the worker is killed at once (it can no longer be trusted), and the next
/// call runs on generation 2 with the journal replayed and gives the in-process result; nothing
/// leaks. No SIGBUS either: this test process survives every mode.
fn refused_reply(action: &str, in_message: &str) {
    let what = format!("W4:{action}");
    let (shm0, fds0) = (shm_listing(), self_fd_count());
    let g = grid(20, 20, 1, 18);
    let expect = dyng::SsspResult::compute(&Resources::sequential(), &Graph::new(g.clone()), 0, 0, &Default::default()).unwrap();
    let c = Client::spawn(with_fault(&format!("W4:{action}:3:1"))).unwrap();
    c.load_graph(&g).unwrap();
    let r = c.sssp_compute(0, 0, &Default::default()).unwrap();
    let wpid = c.worker_pid().unwrap();
    let acks = || c.counters().acks_sent.load(std::sync::atomic::Ordering::SeqCst);
    let acks0 = acks();
    let e = c.copy_i64(r.id, kind::DIST, 0).unwrap_err();
    assert_eq!(e.kind(), dyng::ErrorKind::Protocol, "{what}: {e}");
    assert!(e.to_string().contains(in_message), "{what}: {e}");
    assert_eq!(acks(), acks0 + 1, "{what}: the refused block is acknowledged (I5)");
    assert!(!alive(wpid), "{what}: the worker that broke the protocol was killed");
    assert_eq!(memfd_maps(std::process::id()), 0, "{what}: nothing of the refused block is mapped");
    assert_eq!(c.copy_i64(r.id, kind::DIST, 0).unwrap(), expect.distances(), "{what}: after the replay");
    assert_eq!(c.generation(), 2, "{what}: a fresh worker");
    let st = c.worker_stats().unwrap();
    close_and_check_leaks(c, &st, &shm0, fds0, &what);
}

/// Checksums end to end (6.6, T4's wrong-checksum mode): the worker flips a byte of a lent block
/// after hashing it (`W4:CORRUPT`). With checksums the host refuses the view with `Protocol` and
/// replaces the worker; without them the same fault yields wrong data, which shows the fault
/// really corrupts.
#[test]
fn a_corrupted_reply_is_refused_with_protocol() {
    let _serial = serial();
    refused_reply("CORRUPT", "checksum");
    let g = grid(20, 20, 1, 18);
    let expect = dyng::SsspResult::compute(&Resources::sequential(), &Graph::new(g.clone()), 0, 0, &Default::default()).unwrap();
    let c = Client::spawn(WorkerOptions { checksums: false, ..with_fault("W4:CORRUPT:3:1") }).unwrap();
    c.load_graph(&g).unwrap();
    let r = c.sssp_compute(0, 0, &Default::default()).unwrap();
    assert_ne!(c.copy_i64(r.id, kind::DIST, 0).unwrap(), expect.distances(), "the fault did not corrupt the block");
    assert_eq!(c.copy_i64(r.id, kind::DIST, 0).unwrap(), expect.distances());
    assert_eq!(c.generation(), 1, "nothing was detected, so nothing was replaced");
}

/// T4's malicious worker modes: an unsealed block, a block one page shorter than `total_len`, a
/// page 0 that differs from REPLY_OK, and a REPLY_OK announcing another `lend_seq` than page 0.
#[test]
fn malicious_replies_are_refused_and_the_worker_replaced() {
    let _serial = serial();
    let modes = [("UNSEALED", "seals"), ("SHORT", "total_len"), ("BAD_HEADER", "page 0 differs"), ("BAD_LEND_SEQ", "page 0 differs")];
    for (action, in_message) in modes {
        refused_reply(action, in_message);
    }
}

/// An update sent right after a worker was condemned (here for a bad block) is applied exactly
/// once: the respawn at the start of the update's call replays the journal, which must not hold
/// that batch yet, or the batch would be applied by the replay and again when it is sent.
#[test]
fn an_update_after_a_protocol_violation_is_applied_once() {
    let _serial = serial();
    let g = grid(15, 15, 1, 21);
    let res = Resources::sequential();
    let mut lg = Graph::new(g.clone());
    let mut s = dyng::SsspResult::compute(&res, &lg, 0, 0, &Default::default()).unwrap();
    let c = Client::spawn(with_fault("W4:BAD_HEADER:3:1")).unwrap();
    c.load_graph(&g).unwrap();
    let r = c.sssp_compute(0, 0, &Default::default()).unwrap();
    assert_eq!(c.view(r.id, 0, 0).unwrap_err().kind(), dyng::ErrorKind::Protocol);
    assert!(c.worker_pid().is_none(), "the worker is gone before the update");
    let b = batch(&g, 10, 10, 3);
    dyng::update_one(&res, &mut lg, &b.view(), &mut s).unwrap();
    assert_eq!(c.update(&b.view(), &[r.id]).unwrap(), 2, "one batch after the load");
    assert_eq!(c.generation(), 2);
    assert_eq!(c.copy_i64(r.id, kind::DIST, 0).unwrap(), s.distances());
    assert_eq!(c.checkpoint().unwrap().i32s(kind::COL_IND).unwrap(), lg.to_csr().col_ind());
}

/// A confirmed batch is never a poison batch (12.2 rule 5 is about the UPDATE in flight): the
/// worker dies while idle after an update, and its replacement dies replaying that batch (W3 of
/// generation 2: the replayed LOAD, then the UPDATE). The batch stays in the journal, a third
/// worker replays it, and the call gets the in-process result.
#[test]
fn a_confirmed_batch_survives_a_death_during_its_replay() {
    let _serial = serial();
    let g = grid(15, 15, 1, 24);
    let res = Resources::sequential();
    let mut lg = Graph::new(g.clone());
    let mut s = dyng::SsspResult::compute(&res, &lg, 0, 0, &Default::default()).unwrap();
    let c = Client::spawn(with_fault("W3:SIGKILL_SELF:2:2")).unwrap();
    c.load_graph(&g).unwrap();
    let r = c.sssp_compute(0, 0, &Default::default()).unwrap();
    let b = batch(&g, 10, 10, 5);
    dyng::update_one(&res, &mut lg, &b.view(), &mut s).unwrap();
    assert_eq!(c.update(&b.view(), &[r.id]).unwrap(), 2);
    let pid = c.worker_pid().unwrap();
    // SAFETY (test): SIGKILL to the worker we spawned.
    unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    assert!(wait_gone(pid, Duration::from_secs(2)).is_some());
    assert_eq!(c.copy_i64(r.id, kind::DIST, 0).unwrap(), s.distances(), "the batch was kept");
    assert_eq!(c.generation(), 3, "the fault fired in generation 2");
    let b = batch(&lg.to_csr(), 5, 5, 6);
    dyng::update_one(&res, &mut lg, &b.view(), &mut s).unwrap();
    assert_eq!(c.update(&b.view(), &[r.id]).unwrap(), 3);
    assert_eq!(c.copy_i32(r.id, kind::PARENT, 0).unwrap(), s.parents());
}

/// The host of the host-side scenarios, run in a child process (it crashes or is killed): every
/// host fault point H1-H7 is reached in this order, each at its first hit.
#[test]
#[ignore]
fn host_role_for_host_faults() {
    if !is_role("host") {
        return;
    }
    let c = Client::spawn(opts()).unwrap(); // H1
    let g = grid(20, 20, 1, 19);
    c.load_graph(&g).unwrap(); // H2, H3
    let r = c.sssp_compute(0, 0, &Default::default()).unwrap();
    let v = c.view(r.id, 0, 0).unwrap(); // H4
    drop(v); // H6, H7
    c.copy_i64(r.id, kind::DIST, 0).unwrap(); // H5
}

/// Runs `host_role_for_host_faults` with `fault` and SYNC points in `held_at` (host or worker)
/// and hands each process that reaches one to `on_held`; returns the host's pid and exit status
/// and the workers seen, after checking L1 and L6: within 1 s of the host's death no worker of it
/// remains, nothing of its session survives, and no memfd of the host or its workers persists.
fn host_scenario(what: &str, fault: &str, holds: usize, mut on_held: impl FnMut(Held, &mut std::process::Child)) -> (std::process::ExitStatus, Vec<u32>) {
    let shm0 = shm_listing();
    let sync = SyncRunner::new("host");
    let mut child = run_role(
        "host_role_for_host_faults",
        "host",
        &[("DYNG_FAULT", fault), ("DYNG_TEST_SYNC", sync.path.to_str().unwrap())],
    );
    let host = child.id();
    let mut workers = Vec::new();
    for _ in 0..holds {
        let Some(h) = sync.next(Duration::from_secs(60), || matches!(child.try_wait(), Ok(Some(_)))) else { break };
        if h.point.starts_with('W') {
            workers.push(h.pid);
        }
        on_held(h, &mut child);
    }
    let t0 = std::time::Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        assert!(t0.elapsed() < Duration::from_secs(60), "{what}: the host never died");
        std::thread::sleep(Duration::from_millis(1));
    };
    assert_nothing_outlives_host(host, &workers, what);
    assert_eq!(shm_listing(), shm0, "{what}: L1");
    (status, workers)
}

/// T11, host side: the host dies (abort or SIGKILL) at each of H1-H7 with its worker running;
/// the worker reports itself at W1 (SYNC) so the runner knows it. The host must die of that very
/// signal (the point was reached), and its worker must be gone within 1 s (L6).
#[test]
fn host_death_at_every_host_point_takes_the_worker_down() {
    let _serial = serial();
    for point in ["H1", "H2", "H3", "H4", "H5", "H6", "H7"] {
        for (action, signal) in [("CRASH", libc::SIGABRT), ("SIGKILL_SELF", libc::SIGKILL)] {
            let what = format!("{point} {action}");
            let (status, workers) = host_scenario(&what, &format!("{point}:{action},W1:SYNC"), 1, |h, child| {
                // The runner's way of finding the host's workers sees this one while it lives
                // (from H2 on, the host is waiting for READY; at H1 it may be dead already).
                if point != "H1" {
                    assert_eq!(workers_of(child.id()), vec![h.pid], "{what}");
                }
                h.resume()
            });
            use std::os::unix::process::ExitStatusExt;
            assert_eq!(status.signal(), Some(signal), "{what}: the host did not die at the point ({status})");
            // At H1 the host may die before its worker reaches W1; from H2 on the worker had
            // sent HELLO, so the scenario must have seen it.
            assert!(point == "H1" || workers.len() == 1, "{what}: the worker never reported");
        }
    }
}

/// T12: host and worker both SIGKILLed while each is held at a fault point, host first, worker
/// first, or both at once; afterwards no worker remains, nothing of either process persists.
#[test]
fn double_kill_of_host_and_worker_leaves_nothing() {
    let _serial = serial();
    // Step pairs: the handshake (host spawned, worker after HELLO), mid-compute of the SSSP call
    // (host waiting after sending it), the view's block lent (worker right after REPLY_OK) while
    // the host maps it, and the view's CONSUMED (host after sending it, worker on receiving it).
    let steps = ["H1:SYNC,W1:SYNC", "H2:SYNC:2,W3:SYNC:2", "H4:SYNC:1,W5:SYNC:3", "H7:SYNC:1,W7:SYNC:1"];
    for fault in steps {
        for order in ["host first", "worker first", "together"] {
            let what = format!("{fault} {order}");
            let mut held: Vec<Held> = Vec::new();
            let (status, workers) = host_scenario(&what, fault, 2, |h, child| {
                held.push(h);
                if held.len() < 2 {
                    return;
                }
                let (hosts, wk): (Vec<&Held>, Vec<&Held>) = held.iter().partition(|h| h.point.starts_with('H'));
                assert_eq!((hosts.len(), wk.len()), (1, 1), "{what}: both must be held");
                assert_eq!(hosts[0].pid, child.id());
                let wfd = dyng::internals::pidfd_open(wk[0].pid as i32).unwrap();
                let kill_worker = || dyng::internals::pidfd_signal(std::os::fd::AsRawFd::as_raw_fd(&wfd), libc::SIGKILL).unwrap();
                match order {
                    "host first" => {
                        child.kill().unwrap();
                        let _ = child.wait();
                        // PDEATHSIG may have killed the worker already; signalling a dead
                        // process through its pidfd is harmless (never another process).
                        let _ = dyng::internals::pidfd_signal(std::os::fd::AsRawFd::as_raw_fd(&wfd), libc::SIGKILL);
                    }
                    "worker first" => {
                        kill_worker();
                        let _ = dyng::internals::poll_in(&[std::os::fd::AsRawFd::as_raw_fd(&wfd)], 2000);
                        child.kill().unwrap();
                    }
                    _ => {
                        kill_worker();
                        child.kill().unwrap();
                    }
                }
            });
            use std::os::unix::process::ExitStatusExt;
            assert_eq!(status.signal(), Some(libc::SIGKILL), "{what}: {status}");
            assert_eq!(held.len(), 2, "{what}: both processes must have reached their points");
            assert_eq!(workers.len(), 1, "{what}");
        }
    }
}

/// A worker that does not announce the ADOPT extension (as one built before it): adoption is
/// refused host-side with NOT_SUPPORTED before anything is sent, and so is a compute with another
/// adaptive-update policy than the default (such a worker would run the default: extension 2
/// came later still); the rest keeps working; the host takes no checkpoint (its replay would
/// adopt), so the journal keeps every batch.
#[test]
fn a_worker_without_the_adopt_capability_gives_not_supported() {
    let _serial = serial(); // the leak checks of the other tests count this process's fds
    let mut o = WorkerOptions { checkpoint_batches: 1, ..opts() };
    o.env.push(("DYNG_TEST_NO_ADOPT".into(), "1".into()));
    o.backend = Some(dyng::Backend::Sequential); // downgraded to CPU for this worker
    let c = Client::spawn(o).unwrap();
    let g = grid(6, 6, 1, 3);
    c.load_graph(&g).unwrap();
    let r = c.sssp_compute(0, 0, &dyng::SsspOptions::default()).unwrap();
    for fallback in [dyng::Fallback::Never, dyng::Fallback::Always, dyng::Fallback::AdaptiveCounted] {
        let e = c.sssp_compute(0, 0, &dyng::SsspOptions { fallback, ..Default::default() }).unwrap_err();
        assert_eq!(e.kind(), dyng::ErrorKind::NotSupported, "{e}");
        assert!(e.to_string().contains("POLICY capability"), "{e}");
        let e = c.mosp_compute(0, &dyng::MospOptions { fallback, ..Default::default() }).unwrap_err();
        assert_eq!(e.kind(), dyng::ErrorKind::NotSupported, "{e}");
    }
    let (d, p) = (c.copy_i64(r.id, kind::DIST, 0).unwrap(), c.copy_i32(r.id, kind::PARENT, 0).unwrap());
    let e = c.adopt_sssp(0, 0, &d, &p, false, &dyng::SsspOptions::default()).unwrap_err();
    assert_eq!(e.kind(), dyng::ErrorKind::NotSupported, "{e}");
    assert!(e.to_string().contains("ADOPT capability"), "{e}");
    let e = c.adopt_mosp(0, &[(&d[..], &p[..])], false, &[None], dyng::Fallback::AdaptiveCounted, &[]).unwrap_err();
    assert_eq!(e.kind(), dyng::ErrorKind::NotSupported, "{e}");
    assert_eq!(c.worker_stats().unwrap().results, 1, "nothing was adopted");
    assert_eq!(c.generation(), 1, "a refusal is not a crash");
    for i in 0..3 {
        c.update(&batch(&g, 2, 2, i).view(), &[]).unwrap();
    }
    assert_eq!(c.counters().checkpoints.load(std::sync::atomic::Ordering::SeqCst), 0);
    assert_eq!(c.journal_size().0, 3);
}

/// A worker without extension 4 (as one built before it): an adoption as the originals check is
/// refused host-side with NOT_SUPPORTED before anything is sent, and the worker stays up; the
/// adoption that verifies the trees still works.
#[test]
fn a_worker_without_light_adoption_gives_not_supported() {
    let _serial = serial();
    let mut o = opts();
    o.env.push(("DYNG_TEST_NO_LIGHT_ADOPT".into(), "1".into()));
    let c = Client::spawn(o).unwrap();
    let g = grid(6, 6, 1, 3);
    c.load_graph(&g).unwrap();
    let r = c.sssp_compute(0, 0, &dyng::SsspOptions::default()).unwrap();
    let (d, p) = (c.copy_i64(r.id, kind::DIST, 0).unwrap(), c.copy_i32(r.id, kind::PARENT, 0).unwrap());
    let fallback = dyng::Fallback::AdaptiveCounted;
    let e = c.adopt_sssp_as_originals(0, 0, &d, &p, false, 100, &dyng::SsspOptions::default()).unwrap_err();
    assert_eq!(e.kind(), dyng::ErrorKind::NotSupported, "{e}");
    assert!(e.to_string().contains("LIGHT_ADOPT capability"), "{e}");
    let e = c.adopt_mosp_as_originals(0, &[(&d[..], &p[..])], false, &[None], fallback, &[], &[100]).unwrap_err();
    assert_eq!(e.kind(), dyng::ErrorKind::NotSupported, "{e}");
    assert_eq!(c.worker_stats().unwrap().results, 1, "nothing was adopted");
    assert_eq!(c.generation(), 1, "a refusal is not a crash");
    c.adopt_mosp(0, &[(&d[..], &p[..])], false, &[None], fallback, &[]).unwrap();
    assert_eq!(c.worker_stats().unwrap().results, 2);
}

/// An adoption in flight when the worker is SIGKILLed is retried on the replacement with its
/// input block, and gives the in-process tree.
#[test]
fn sigkill_mid_adopt_is_retried() {
    let _serial = serial();
    let g = grid(12, 12, 1, 4);
    let lg = Graph::new(g.clone());
    let s = dyng::SsspResult::compute(&Resources::sequential(), &lg, 0, 0, &dyng::SsspOptions::default()).unwrap();
    // W3 hits: LOAD (1), ADOPT_SSSP (2).
    let c = Client::spawn(with_fault("W3:SIGKILL_SELF:2:1")).unwrap();
    c.load_graph(&g).unwrap();
    let r = c.adopt_sssp(0, 0, s.distances(), s.parents(), false, &dyng::SsspOptions::default()).unwrap();
    assert_eq!(c.generation(), 2, "the fault fired and the call was retried");
    assert_eq!(c.copy_i32(r.id, kind::PARENT, 0).unwrap(), s.parents());
    assert_eq!(c.copy_i64(r.id, kind::DIST, 0).unwrap(), s.distances());
}

/// The C ABI's `DYNG_WORKER_CHECKSUMS` reaches the worker. In a child process, because the C ABI
/// has no option for the worker's environment and the worker inherits the host's, with
/// `DYNG_FAULT=W4:CORRUPT:3:1` (LOAD, SSSP, then the copy's VIEW): with the flag the corrupted
/// copy gives `DYNG_ERR_PROTOCOL`, without it wrong distances; the next copy is exact either way.
#[test]
#[ignore]
fn role_c_abi_checksums() {
    if !is_role("c_checksums") {
        return;
    }
    use dyng::ffi::*;
    use std::ptr::{null, null_mut};
    let g = grid(10, 10, 1, 22);
    let expect = dyng::SsspResult::compute(&Resources::sequential(), &Graph::new(g.clone()), 0, 0, &Default::default()).unwrap();
    let path = std::ffi::CString::new(env!("CARGO_BIN_EXE_dyng-worker")).unwrap();
    for flags in [DYNG_WORKER_CHECKSUMS, 0] {
        // SAFETY (test): options, descriptors and out pointers are live and of the stated sizes;
        // every handle is freed once, after its last use.
        unsafe {
            let mut opt = dyng_resources_options_default();
            opt.isolation = DYNG_ISOLATION_WORKER;
            opt.worker_path = path.as_ptr();
            opt.worker_flags = flags;
            let mut res = null_mut();
            assert_eq!(dyng_resources_create(&opt, &mut res), DYNG_OK);
            let csr = dyng_csr_t { n: g.n(), m: g.m(), k: 1, row_ptr: g.row_ptr().as_ptr(), col_ind: g.col_ind().as_ptr(), weights: g.weights().as_ptr() };
            let mut gh = null_mut();
            assert_eq!(dyng_graph_from_csr(res, &csr, &mut gh), DYNG_OK);
            let mut r = null_mut();
            assert_eq!(dyng_sssp_compute(res, gh, 0, 0, null(), &mut r), DYNG_OK);
            let mut d = vec![0i64; g.n()];
            let copy = |d: &mut Vec<i64>| dyng_result_copy(res, r, DYNG_ARRAY_DISTANCES, 0, d.as_mut_ptr() as *mut _, d.len());
            if flags == DYNG_WORKER_CHECKSUMS {
                assert_eq!(copy(&mut d), DYNG_ERR_PROTOCOL, "checksums on: the corrupted block is refused");
            } else {
                assert_eq!(copy(&mut d), DYNG_OK);
                assert_ne!(d, expect.distances(), "checksums off: the fault did corrupt the block");
            }
            assert_eq!(copy(&mut d), DYNG_OK);
            assert_eq!(d, expect.distances());
            dyng_result_free(r);
            dyng_graph_free(gh);
            dyng_resources_free(res);
        }
    }
    println!("role c_checksums done");
}

#[test]
fn c_abi_checksum_flag_reaches_the_worker() {
    let _serial = serial();
    let out = run_role("role_c_abi_checksums", "c_checksums", &[("DYNG_FAULT", "W4:CORRUPT:3:1")]).wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && stdout.contains("role c_checksums done"), "{}\n{stdout}\n{}", out.status, String::from_utf8_lossy(&out.stderr));
}

/// A worker that dies while the host takes a checkpoint (SIGKILL at the third lend: CHECKPOINT,
/// the SSSP tree, then objective 0 of the MOSP result) costs the checkpoint, not the update that
/// triggered it: the update succeeds, the journal keeps its base and batches, the next call
/// replays them into the same state, and the next update takes the checkpoint on the new worker.
#[test]
fn a_death_during_a_checkpoint_keeps_the_journal() {
    use std::sync::atomic::Ordering::SeqCst;
    let _serial = serial();
    let g = grid(15, 15, 2, 31);
    let res = Resources::sequential();
    let mut lg = Graph::new(g.clone());
    let mut s = dyng::SsspResult::compute(&res, &lg, 0, 1, &Default::default()).unwrap();
    let mut m = MospResult::compute(&res, &lg, 3, &MospOptions::default()).unwrap();
    let o = WorkerOptions { checkpoint_batches: 3, checkpoint_bytes: 0, ..with_fault("W9:SIGKILL_SELF:3:1") };
    let c = Client::spawn(o).unwrap();
    c.load_graph(&g).unwrap();
    let rs = c.sssp_compute(0, 1, &Default::default()).unwrap();
    let rm = c.mosp_compute(3, &MospOptions::default()).unwrap();
    let mut step = |c: &Client, seed: u64| {
        let b = batch(&lg.to_csr(), 6, 6, seed);
        let mut both = [dyng::ResultMut::Sssp(&mut s), dyng::ResultMut::Mosp(&mut m)];
        dyng::update(&res, &mut lg, &b.view(), &mut both).unwrap();
        c.update(&b.view(), &[rs.id, rm.id]).unwrap()
    };
    for i in 0..4 {
        assert_eq!(step(&c, i), i + 2);
    }
    assert_eq!(c.counters().checkpoint_failures.load(SeqCst), 1, "the worker died in the checkpoint");
    assert_eq!(c.counters().checkpoints.load(SeqCst), 0);
    assert_eq!(c.journal_size().0, 4, "the journal is kept whole");
    assert_eq!(c.generation(), 1, "the death is noticed, the respawn waits for the next call");
    assert_eq!(step(&c, 4), 6);
    assert_eq!(c.generation(), 2);
    assert_eq!(c.counters().checkpoints.load(SeqCst), 1, "the next update checkpoints on the new worker");
    assert_eq!(c.journal_size().0, 0);
    let pid = c.worker_pid().unwrap();
    // SAFETY (test): SIGKILL to the worker we spawned.
    unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    assert!(wait_gone(pid, Duration::from_secs(2)).is_some());
    assert_eq!(c.copy_i64(rs.id, kind::DIST, 0).unwrap(), s.distances());
    assert_eq!(c.copy_i32(rs.id, kind::PARENT, 0).unwrap(), s.parents());
    assert_eq!(c.copy_i64(rm.id, kind::COMBINED_DIST, 0).unwrap(), m.combined_distances());
    assert_eq!(c.copy_i32(rm.id, kind::COMBINED_PARENT, 0).unwrap(), m.combined_parents());
    for j in 0..2 {
        assert_eq!(c.copy_i32(rm.id, kind::PARENT, j).unwrap(), m.tree(j).parents());
    }
    assert_eq!(c.generation(), 3);
    assert_eq!(c.graph_info().unwrap().epoch, 6);
}

/// Every field of a reply is checked against what the host expects (section 11): the worker
/// tampers with REPLY_OK of the first UPDATE (the 3rd W4 hit: LOAD, SSSP, UPDATE) in generation 1
/// (`BAD_EPOCH`: epoch + 1000; `BAD_RESULT_ID`; `BAD_EXTRA`: one byte more), or with the reply of
/// the compute (`BAD_RESULT_ID` at the 2nd hit). The call fails with `Protocol`, the worker is
/// killed, and the next calls run on generation 2 with the journal replayed: the failed update
/// is not applied, the same update then is, once, and the results read as in process. A trusted
/// corrupted epoch made every later call fail with `STALE_RESULT`.
#[test]
fn tampered_reply_fields_are_refused_and_the_worker_replaced() {
    let _serial = serial();
    let g = grid(15, 15, 1, 23);
    let res = Resources::sequential();
    for (action, nth, in_message) in [
        ("BAD_EPOCH", 3, "says epoch 1002, the host expects 2"),
        ("BAD_RESULT_ID", 3, "says result id 7, the host expects 0"),
        ("BAD_EXTRA", 3, "extra fields"),
        ("BAD_RESULT_ID", 2, "says result id 8, the host expects 1"),
    ] {
        let what = format!("W4:{action}:{nth}");
        let mut lg = Graph::new(g.clone());
        let mut s = dyng::SsspResult::compute(&res, &lg, 0, 0, &Default::default()).unwrap();
        let c = Client::spawn(with_fault(&format!("W4:{action}:{nth}:1"))).unwrap();
        c.load_graph(&g).unwrap();
        let b = batch(&g, 10, 10, 5);
        let wpid = c.worker_pid().unwrap();
        let r = if nth == 2 {
            let e = c.sssp_compute(0, 0, &Default::default()).unwrap_err();
            assert_eq!(e.kind(), dyng::ErrorKind::Protocol, "{what}: {e}");
            assert!(e.to_string().contains(in_message), "{what}: {e}");
            c.sssp_compute(0, 0, &Default::default()).unwrap()
        } else {
            let r = c.sssp_compute(0, 0, &Default::default()).unwrap();
            let e = c.update(&b.view(), &[r.id]).unwrap_err();
            assert_eq!(e.kind(), dyng::ErrorKind::Protocol, "{what}: {e}");
            assert!(e.to_string().contains(in_message), "{what}: {e}");
            r
        };
        assert!(!alive(wpid), "{what}: the worker that broke the protocol was killed");
        dyng::update_one(&res, &mut lg, &b.view(), &mut s).unwrap();
        assert_eq!(c.update(&b.view(), &[r.id]).unwrap(), 2, "{what}: one batch after the load");
        assert_eq!(c.generation(), 2, "{what}");
        assert_eq!(c.copy_i64(r.id, kind::DIST, 0).unwrap(), s.distances(), "{what}");
        assert_eq!(c.copy_i32(r.id, kind::PARENT, 0).unwrap(), s.parents(), "{what}");
    }
}
