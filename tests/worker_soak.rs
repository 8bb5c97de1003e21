//! T13, the chaos soak (spec 17.4): random SIGKILLs of the worker, and in a variant whose host is
//! a child process, of the host too, during loops of UPDATE and VIEW on an SSSP and a MOSP
//! result. Every call returns within a bound (its deadline plus the restart it may include), every
//! VIEW is byte-equal to the in-process result at the same epoch, and nothing leaks (L1-L4, L6).
//!
//! CI runs a short soak (`soak_with_worker_kills`, `soak_with_host_kills`). The long ones are
//! ignored by default; sizes come from the environment:
//!
//! ```text
//! DYNG_SOAK_ITERS=1000 DYNG_SOAK_SIDE=200 DYNG_SOAK_HOST_KILLS=50 \
//!     cargo test --release --test worker_soak -- --ignored long_
//! ```
//!
//! `DYNG_SOAK_ITERS`: loop iterations (default 1000); `DYNG_SOAK_SIDE`: the grid is SIDE x SIDE
//! with 2 objectives (default 200); `DYNG_SOAK_HOST_KILLS`: host children killed (default 50);
//! `DYNG_SOAK_KILL_MS`: the worker soak's kills come 0 to this many ms apart (default 300); on
//! large grids it must exceed a journal replay, or the soak hardly progresses.
//! `DYNG_SOAK_SEED`: the random seed of the calls and kill gaps (default: from the clock,
//! printed); a rerun repeats the calls, not the exact kill moments.

mod worker_util;

use dyng::worker::{kind, Client, WorkerOptions};
use dyng::{ErrorKind, Graph, MospOptions, MospResult, Resources, ResultMut, SsspOptions, SsspResult};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use worker_util::*;

/// The deadline of every call of the soaked client.
const CALL_TIMEOUT: Duration = Duration::from_secs(20);

/// Longest a call may take: the call deadline, the cancel grace and the hang timeout (a call
/// can meet each once), plus respawns and journal replays on a loaded 2-core machine (a replay
/// is not bounded by the deadline of the call that triggers it; see docs/worker.md).
const CALL_BOUND: Duration = Duration::from_secs(60);

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn seed() -> u64 {
    let s = env_or("DYNG_SOAK_SEED", std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64);
    println!("soak seed {s} (DYNG_SOAK_SEED={s} reruns it)");
    s
}

/// A small deterministic generator (xorshift64*): the soak must be rerunnable from its seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// Options of the soaked client: checksums on (17.1), a call deadline, and the crash-loop guard
/// widened, since the soak kills far more often than 3 times a minute on purpose.
fn soak_opts() -> WorkerOptions {
    WorkerOptions {
        call_timeout: Some(CALL_TIMEOUT),
        crash_loop_deaths: usize::MAX,
        // Checkpoints (12.3) every few batches, so that kills also land in and between them.
        checkpoint_batches: 8,
        ..opts()
    }
}

fn bytes<T: Copy>(v: &[T]) -> &[u8] {
    // SAFETY: plain integers, no padding.
    unsafe { std::slice::from_raw_parts(v.as_ptr() as *const u8, std::mem::size_of_val(v)) }
}

/// What a soak did, for its report and for the checks that it did anything at all.
#[derive(Debug, Default)]
struct Tally {
    updates: u64,
    updates_dropped: u64,
    views: u64,
    lost: u64,
    max_call: Duration,
}

/// The client and its in-process twin: the graph and an SSSP and a MOSP result updated with
/// the same batches.
struct Soak {
    c: Client,
    res: Resources,
    lg: Graph,
    s: SsspResult,
    m: MospResult,
    ids: (u64, u64),
    epoch: u64,
    iteration: u64,
    tally: Tally,
}

/// Times one call: it must return within `CALL_BOUND`. Its error is tolerated (counted as lost)
/// if it is one that kills can cause: `WorkerLost` (an idempotent call is retried once, so two
/// kills in one call give it), or `Timeout` once the call's deadline has passed (respawns and
/// replays use up the deadline); any other error fails the soak.
fn timed<T>(tally: &mut Tally, what: &str, f: impl FnOnce() -> dyng::Result<T>) -> Option<T> {
    let t0 = Instant::now();
    let r = f();
    let took = t0.elapsed();
    tally.max_call = tally.max_call.max(took);
    assert!(took < CALL_BOUND, "{what}: took {took:?}");
    match r {
        Ok(v) => Some(v),
        Err(e) if e.kind() == ErrorKind::WorkerLost || e.kind() == ErrorKind::Timeout && took >= CALL_TIMEOUT => {
            tally.lost += 1;
            None
        }
        Err(e) => panic!("{what} (after {took:?}): {e}"),
    }
}

/// Runs `f` until it succeeds (see `timed`).
fn until_ok<T>(tally: &mut Tally, what: &str, mut f: impl FnMut() -> dyng::Result<T>) -> T {
    for _ in 0..50 {
        if let Some(v) = timed(tally, what, &mut f) {
            return v;
        }
    }
    panic!("{what}: 50 tries lost their worker");
}

impl Soak {
    fn new(side: usize) -> Soak {
        let g = grid(side, side, 2, 31);
        let res = Resources::sequential();
        let lg = Graph::new(g.clone());
        let s = SsspResult::compute(&res, &lg, 0, 1, &SsspOptions::default()).unwrap();
        let m = MospResult::compute(&res, &lg, 0, &MospOptions::default()).unwrap();
        let mut tally = Tally::default();
        // The host-kill soak may kill the first worker before its handshake is done.
        let c = until_ok(&mut tally, "spawn", || Client::spawn(soak_opts()));
        let mut soak = Soak { c, res, lg, s, m, ids: (0, 0), epoch: 0, iteration: 0, tally };
        soak.reload();
        soak
    }

    /// LOAD_GRAPH of the in-process graph as it is now, then both results computed on it: a
    /// fresh journal base besides the checkpoints. Computed results equal the updated in-process
    /// ones byte for byte (12.2 rule 4), which the next views check.
    fn reload(&mut self) {
        let csr = self.lg.to_csr();
        let t = &mut self.tally;
        let c = &self.c;
        self.epoch = until_ok(t, "load", || c.load_graph(&csr)).epoch;
        let sid = until_ok(t, "sssp", || c.sssp_compute(0, 1, &SsspOptions::default())).id;
        let mid = until_ok(t, "mosp", || c.mosp_compute(0, &MospOptions::default())).id;
        self.ids = (sid, mid);
    }

    /// UPDATE of both results with a random batch; applied in-process exactly when the worker
    /// applied it (Ok), not when the client reports it dropped as a poison batch.
    fn update(&mut self, rng: &mut Rng) {
        let b = batch(&self.lg.to_csr(), 1 + rng.below(6) as usize, 1 + rng.below(6) as usize, rng.next());
        let (c, ids) = (&self.c, [self.ids.0, self.ids.1]);
        let mut dropped = false;
        let out = timed(&mut self.tally, "update", || match c.update(&b.view(), &ids) {
            Err(e) if e.to_string().contains("dropped") => {
                dropped = true;
                Err(e)
            }
            r => r,
        });
        match out {
            Some(epoch) => {
                let mut rs = [ResultMut::Sssp(&mut self.s), ResultMut::Mosp(&mut self.m)];
                dyng::update(&self.res, &mut self.lg, &b.view(), &mut rs).unwrap();
                self.epoch += 1;
                assert_eq!(epoch, self.epoch, "the update was applied exactly once");
                self.tally.updates += 1;
            }
            // A failed update is not applied (the client's contract): for example the worker
            // died and its replacement was killed replaying this very batch (12.2 rule 5,
            // "dropped"), or the replacement could not be started.
            None => self.tally.updates_dropped += dropped as u64,
        }
    }

    /// A VIEW of the SSSP result (DIST, PARENT) or of the MOSP result (the combined arrays, or
    /// one objective's tree), byte-equal to the in-process arrays at the same epoch.
    fn view(&mut self, rng: &mut Rng) {
        let (which, j) = (rng.below(3), rng.below(2) as usize);
        let (id, mask, objective) = match which {
            0 => (self.ids.0, 0, 0),
            1 => (self.ids.1, 0, 0),
            _ => (self.ids.1, 0b11, j),
        };
        let c = &self.c;
        let Some(v) = timed(&mut self.tally, &format!("view {which}"), || c.view(id, mask, objective)) else { return };
        let at = format!("view {which} at epoch {}", self.epoch);
        assert_eq!(v.epoch(), self.epoch, "{at}");
        match which {
            0 => {
                assert_eq!(bytes(v.i64s(kind::DIST).unwrap()), bytes(self.s.distances()), "{at}: dist");
                assert_eq!(bytes(v.i32s(kind::PARENT).unwrap()), bytes(self.s.parents()), "{at}: parent");
            }
            1 => {
                assert_eq!(bytes(v.i64s(kind::COMBINED_DIST).unwrap()), bytes(self.m.combined_distances()), "{at}");
                assert_eq!(bytes(v.i32s(kind::COMBINED_PARENT).unwrap()), bytes(self.m.combined_parents()), "{at}");
                assert_eq!(bytes(v.i64s(kind::PATH_COSTS).unwrap()), bytes(self.m.path_costs()), "{at}");
            }
            _ => {
                assert_eq!(bytes(v.i64s(kind::DIST).unwrap()), bytes(self.m.tree(j).distances()), "{at}: tree {j}");
                assert_eq!(bytes(v.i32s(kind::PARENT).unwrap()), bytes(self.m.tree(j).parents()), "{at}: tree {j}");
            }
        }
        drop(v);
        // L3 after every release: no block of any generation stays mapped (I10).
        assert_eq!(memfd_maps(std::process::id()), 0, "{at}: a released view is still mapped");
        self.tally.views += 1;
    }

    /// `iters` iterations: 4 in 10 update, the rest view; one in 100 reloads.
    fn run(&mut self, iters: u64, rng: &mut Rng) {
        for _ in 0..iters {
            self.iteration += 1;
            if self.iteration % 100 == 20 {
                self.reload();
            } else if rng.below(10) < 4 {
                self.update(rng);
            } else {
                self.view(rng);
            }
        }
    }
}

/// SIGKILLs the workers of this process at random intervals (up to `max_gap_ms` apart) until
/// `stop`, counting them in `kills`; returns the pids killed.
fn killer(stop: Arc<AtomicBool>, kills: Arc<AtomicUsize>, max_gap_ms: u64, seed: u64) -> std::thread::JoinHandle<Vec<u32>> {
    std::thread::spawn(move || {
        let mut rng = Rng(seed | 1);
        let mut killed = Vec::new();
        while !stop.load(Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(rng.below(max_gap_ms)));
            let now = kill_workers_of(std::process::id());
            kills.fetch_add(now.len(), Ordering::SeqCst);
            killed.extend(now);
        }
        killed
    })
}

/// SIGKILLs every live worker of `host` (found as `workers_of` finds them) through a pidfd;
/// returns their pids.
fn kill_workers_of(host: u32) -> Vec<u32> {
    let mut killed = Vec::new();
    for pid in workers_of(host) {
        let Ok(fd) = dyng::internals::pidfd_open(pid as i32) else { continue };
        // The pidfd names one process for good: if the pid is still a worker of `host` after it
        // was opened, the signal goes to that worker, never to a process that reused the pid.
        if workers_of(host).contains(&pid) && dyng::internals::pidfd_signal(std::os::fd::AsRawFd::as_raw_fd(&fd), libc::SIGKILL).is_ok() {
            killed.push(pid);
        }
    }
    killed
}

/// The worker soak in this process: `iters` iterations with a killer thread, and more until it has
/// killed `min_kills` workers; then the leak checks: no block lent, L4, and after closing the
/// client L6, L1, L3, L2, and no memfd of any killed worker held or mapped anywhere.
fn worker_kill_soak(iters: u64, min_kills: usize, side: usize, max_gap_ms: u64) {
    let _serial = serial();
    let (shm0, fds0) = (shm_listing(), self_fd_count());
    let mut rng = Rng(seed() | 1);
    let t0 = Instant::now();
    let mut soak = Soak::new(side);
    let (stop, kills) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicUsize::new(0)));
    let k = killer(stop.clone(), kills.clone(), max_gap_ms, rng.next());
    let mut done = 0;
    while done < iters || kills.load(Ordering::SeqCst) < min_kills {
        assert!(done < 100 * iters, "{done} iterations and only {} kills", kills.load(Ordering::SeqCst));
        soak.run(1, &mut rng);
        done += 1;
    }
    stop.store(true, Ordering::SeqCst);
    let killed = k.join().unwrap();
    // A last round without kills: the state after all of them is still exact.
    soak.run(5, &mut rng);
    let Soak { c, tally, .. } = soak;
    let (ckpt, ckpt_failed) = (c.counters().checkpoints.load(Ordering::SeqCst), c.counters().checkpoint_failures.load(Ordering::SeqCst));
    println!(
        "{done} iterations on {side}x{side} in {:?}: {} kills, generation {}, checkpoints {ckpt} ({ckpt_failed} failed), {tally:?}",
        t0.elapsed(),
        killed.len(),
        c.generation()
    );
    assert!(tally.views > 0 && tally.updates > 0, "{tally:?}");
    assert!(ckpt > 0, "no checkpoint was taken");
    let st = c.worker_stats().unwrap();
    let wpid = close_and_check_leaks(c, &st, &shm0, fds0, "soak");
    for w in killed.iter().chain([&wpid]) {
        assert!(!alive(*w) && session_members(*w).is_empty(), "L6: worker {w} or its session lives on");
        assert!(memfd_holders(&format!("dyng:w{w}:")).is_empty(), "blocks of dead worker {w} persist");
    }
}

/// CI-sized (a few seconds): 300 iterations and at least 30 kills on a 30 x 30 grid, the worker
/// killed every 0-50 ms.
#[test]
fn soak_with_worker_kills() {
    worker_kill_soak(300, 30, 30, 50);
}

#[test]
#[ignore]
fn long_soak_with_worker_kills() {
    let iters = env_or("DYNG_SOAK_ITERS", 1000);
    worker_kill_soak(iters, (iters / 10) as usize, env_or("DYNG_SOAK_SIDE", 200) as usize, env_or("DYNG_SOAK_KILL_MS", 300));
}

/// The host of the host-kill soak, in a child process: the soak loop until the runner kills it
/// (at most 2 minutes), with its own checks of every view.
#[test]
#[ignore]
fn role_soak_host() {
    if !is_role("soak_host") {
        return;
    }
    let mut rng = Rng(env_or("DYNG_SOAK_SEED", 1) | 1);
    let mut soak = Soak::new(env_or("DYNG_SOAK_SIDE", 12) as usize);
    // Bounded, so that a host whose runner failed does not run on.
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs(120) {
        soak.run(10, &mut rng);
    }
}

/// The host-kill soak: `rounds` host children, each killed at a random moment of its loop,
/// alone, after its worker, or together with it. Within 1 s of the host's death no worker of it
/// remains (L6), and no memfd of the host or of its workers is held or mapped anywhere; /dev/shm
/// is unchanged (L1).
fn host_kill_soak(rounds: u64, side: usize) {
    let _serial = serial();
    let shm0 = shm_listing();
    let mut rng = Rng(seed() | 1);
    for round in 0..rounds {
        let side_s = side.to_string();
        let seed_s = rng.next().to_string();
        let mut child = run_role("role_soak_host", "soak_host", &[("DYNG_SOAK_SIDE", &side_s), ("DYNG_SOAK_SEED", &seed_s)]);
        let host = child.id();
        // Wait for the host's first worker, then let the loop run for a random while.
        let t0 = Instant::now();
        let mut workers: Vec<u32> = Vec::new();
        while workers.is_empty() {
            assert!(t0.elapsed() < Duration::from_secs(60), "round {round}: the host never started a worker");
            if let Some(st) = child.try_wait().unwrap() {
                let out = child.wait_with_output().unwrap();
                panic!("round {round}: the host exited ({st}):\n{}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
            }
            workers = workers_of(host);
            std::thread::sleep(Duration::from_millis(2));
        }
        std::thread::sleep(Duration::from_millis(50 + rng.below(400)));
        let mode = rng.below(3);
        if mode != 0 {
            workers.extend(kill_workers_of(host));
            if mode == 1 {
                std::thread::sleep(Duration::from_millis(rng.below(100)));
            }
        }
        workers.extend(workers_of(host));
        if let Some(st) = child.try_wait().unwrap() {
            let out = child.wait_with_output().unwrap();
            panic!("round {round}: the host exited before it was killed ({st}):\n{}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        }
        child.kill().unwrap();
        let st = child.wait().unwrap();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(st.signal(), Some(libc::SIGKILL), "round {round}: {st}");
        workers.sort_unstable();
        workers.dedup();
        assert_nothing_outlives_host(host, &workers, &format!("round {round} (mode {mode})"));
        assert_eq!(shm_listing(), shm0, "round {round}: L1");
    }
}

/// CI-sized: 6 host children killed.
#[test]
fn soak_with_host_kills() {
    host_kill_soak(6, 30);
}

#[test]
#[ignore]
fn long_soak_with_host_kills() {
    host_kill_soak(env_or("DYNG_SOAK_HOST_KILLS", 50), env_or("DYNG_SOAK_SIDE", 200) as usize);
}
