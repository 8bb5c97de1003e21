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
    assert!(c.generation() >= 2, "{spec}: the fault never fired");
    let st = c.worker_stats().unwrap();
    assert_eq!(st.epoch, 4, "{spec}");
    assert_eq!(st.lent_blocks, 0, "{spec}");
    assert_eq!(memfd_fds(c.worker_pid().unwrap(), "dyng:w") as u32, st.pool_blocks, "{spec}: L4");
    let wpid = c.worker_pid().unwrap();
    drop(c);
    assert!(wait_gone(wpid, Duration::from_secs(2)).is_some(), "{spec}: worker left");
    assert!(session_members(wpid).is_empty(), "{spec}: L6");
    assert_eq!(shm_listing(), shm0, "{spec}: L1");
    assert_eq!(memfd_maps(std::process::id()), 0, "{spec}: L3");
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
    assert_eq!(v.i32s(kind::COL_IND).unwrap(), lg.csr().col_ind());
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

/// A worker that does not announce the ADOPT extension (as one built before it): adoption is
/// refused host-side with NOT_SUPPORTED before anything is sent, and the rest keeps working.
#[test]
fn a_worker_without_the_adopt_capability_gives_not_supported() {
    let mut o = opts();
    o.env.push(("DYNG_TEST_NO_ADOPT".into(), "1".into()));
    o.backend = dyng::worker::messages::BACKEND_SEQUENTIAL; // downgraded to CPU for this worker
    let c = Client::spawn(o).unwrap();
    let g = grid(6, 6, 1, 3);
    c.load_graph(&g).unwrap();
    let r = c.sssp_compute(0, 0, &dyng::SsspOptions::default()).unwrap();
    let (d, p) = (c.copy_i64(r.id, kind::DIST, 0).unwrap(), c.copy_i32(r.id, kind::PARENT, 0).unwrap());
    let e = c.adopt_sssp(0, 0, &d, &p, false, &dyng::SsspOptions::default()).unwrap_err();
    assert_eq!(e.kind(), dyng::ErrorKind::NotSupported, "{e}");
    assert!(e.to_string().contains("ADOPT capability"), "{e}");
    let e = c.adopt_mosp(0, &[(&d[..], &p[..])], false, &[None], &[]).unwrap_err();
    assert_eq!(e.kind(), dyng::ErrorKind::NotSupported, "{e}");
    assert_eq!(c.worker_stats().unwrap().results, 1, "nothing was adopted");
    assert_eq!(c.generation(), 1, "a refusal is not a crash");
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
