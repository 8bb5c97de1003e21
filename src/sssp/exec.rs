//! Executors: how the engine's loops and word updates run.
//!
//! The one engine (`engine.rs`) is written once over this trait. [`Sequential`] runs every loop in
//! order with plain loads and stores (the readable reference, whose counters are reproducible);
//! [`Parallel`] splits loops into chunks on the handle's rayon pool and uses atomic read-modify-
//! write operations. The near-far search, which runs thousands of short rounds, uses a *team*
//! instead: every pool thread runs the same loop and the threads meet at a spin barrier between
//! phases, so a round costs two barriers rather than a fork-join of the pool (the OpenMP and CUDA
//! programs' design). A sequential team has one member and no barrier.

use crate::resources::team_choice::{SearchKind, TeamChoice};
use parking_lot::Mutex;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, AtomicU8, AtomicUsize, Ordering, Ordering::Relaxed};

pub(crate) trait Exec: Sync {
    /// Lowers `a` to `v` if smaller; returns the previous value.
    fn fetch_min(&self, a: &AtomicU64, v: u64) -> u64;
    /// Lowers `a` to `v` if smaller (i32 parents of the distance-only recovery).
    fn fetch_min_i32(&self, a: &AtomicI32, v: i32);
    /// Sets a flag; returns its previous value.
    fn set_flag(&self, a: &AtomicU8) -> u8;
    /// Stamps `s` with generation `g`; true iff it was not stamped `g` already.
    fn claim(&self, s: &AtomicI32, g: i32) -> bool;
    /// Moves an invalidation state from unknown (0) to `v`; true for the one caller that did.
    fn resolve(&self, a: &AtomicU8, v: u8) -> bool;
    /// Whether `for_chunks` may run its chunks on more than one thread at once (loops that
    /// count into shared cells then need atomic adds).
    fn concurrent_loops(&self) -> bool;
    /// Runs `f` over chunks of `0..len` of about `grain` items.
    fn for_chunks<F: Fn(Range<usize>) + Sync + Send>(&self, len: usize, grain: usize, f: F);
    /// The maximum of `f(i)` over `0..len` (0 when empty).
    fn max_over<F: Fn(usize) -> u64 + Sync + Send>(&self, len: usize, f: F) -> u64;
    /// The sum of `f(i)` over `0..len`.
    fn sum_over<F: Fn(usize) -> usize + Sync + Send>(&self, len: usize, f: F) -> usize;
    /// The minimum of `f(i)` over `0..len` (`u64::MAX` when empty).
    fn min_over<F: Fn(usize) -> u64 + Sync + Send>(&self, len: usize, f: F) -> u64;
    /// True for the sequential reference, whose counters reproduce the originals' (a one-thread
    /// parallel executor runs its loops in index order too, but is free to choose other
    /// schedules).
    fn reference(&self) -> bool;
    /// Runs `f` on every member of a team at the same time, or on one member when `solo` (see
    /// [`Exec::solo`]).
    fn team<F: Fn(&Team<'_>) + Sync>(&self, solo: bool, f: F);
    /// True when a search of `kind` over `n` vertices and `m` edges runs on one member: always when
    /// sequential, on a one-thread pool, inside a member's part (`side_by_side`) or where it can
    /// reach fewer than [`TEAM_MIN_VERTICES`] vertices (below that many, or with fewer edges), and
    /// otherwise,
    /// for a repair, when one member has lately been clearly faster than a team (`TeamChoice`),
    /// or when it touches fewer vertices than a choice is timed on (`work`, where known).
    /// Asked once per search.
    fn solo(&self, kind: SearchKind, n: usize, m: usize, work: Option<usize>) -> bool;
    /// True when a one-member search may run the bucket queue (`buckets.rs`): not for the
    /// reference, whose counters follow the originals' near-far schedule.
    fn bucket_queue(&self) -> bool;
    /// The members a team of this executor has (1 for the sequential one).
    fn members(&self) -> usize;
    /// Records a finished search for the team-or-solo choice: its way, time and vertices.
    fn searched(&self, _kind: SearchKind, _n: usize, _m: usize, _solo: bool, _ns: u64, _work: usize) {}
    /// Runs every loop on the calling thread while `on` (a repair whose search runs on one
    /// member: its other loops are smaller than the search).
    fn loops_inline(&self, _on: bool) {}
}

/// A member of a team: its index and the barrier the members meet at.
pub(crate) struct Team<'a> {
    pub tid: usize,
    barrier: Option<&'a SpinBarrier>,
}

impl Team<'_> {
    /// Waits until every member arrived; everything written before is visible after.
    #[inline]
    pub fn sync(&self) {
        if let Some(b) = self.barrier {
            b.wait(self.tid);
        }
    }

    /// True for the only member of a team.
    #[inline]
    pub fn is_alone(&self) -> bool {
        self.barrier.is_none()
    }

    /// The next chunk of `0..len` claimed from `cursor` (chunks in order for a single member).
    #[inline]
    pub fn claim(&self, cursor: &AtomicUsize, len: usize, grain: usize) -> Option<Range<usize>> {
        let start = cursor.fetch_add(grain, Relaxed);
        (start < len).then(|| start..(start + grain).min(len))
    }
}

/// A reusable sense-counting barrier that spins briefly, then yields; it does not spin while it
/// shares its CPU with a member it may be waiting for.
///
/// A member spinning on the CPU of the member it waits for keeps that CPU from it until its spins
/// run out, at every barrier, and the scheduler may take milliseconds to move one of them (the
/// balancer does not move a thread that ran a moment ago). Rayon's broadcast from a caller that
/// then blocked woke both members of 2-thread teams onto one CPU in most searches (figures in
/// docs/performance.md, "What the engine does"). So each
/// member notes its CPU at every barrier and, when another member was last seen on it, yields at
/// once; the team also starts on the calling thread (see [`Parallel::team`]).
pub(crate) struct SpinBarrier {
    size: usize,
    arrived: AtomicUsize,
    generation: AtomicUsize,
    /// Spins before yielding: none when the team has more members than the machine has cores
    /// (the member being waited for needs the core).
    spins: u32,
    /// The CPU each member ran on when it last arrived (`usize::MAX`: not known), one cache line
    /// each (every member writes its own).
    cpus: Vec<Padded>,
}

#[repr(align(128))]
struct Padded(AtomicUsize);

/// The CPU the calling thread runs on (`usize::MAX` where the platform does not say).
fn current_cpu() -> usize {
    // SAFETY: sched_getcpu has no preconditions; it returns -1 on failure.
    let cpu = unsafe { libc::sched_getcpu() };
    usize::try_from(cpu).unwrap_or(usize::MAX)
}

impl SpinBarrier {
    pub fn new(size: usize) -> Self {
        let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
        SpinBarrier {
            size,
            arrived: AtomicUsize::new(0),
            generation: AtomicUsize::new(0),
            spins: if size <= cores { 2000 } else { 0 },
            cpus: (0..size).map(|_| Padded(AtomicUsize::new(usize::MAX))).collect(),
        }
    }

    /// Waits until every member arrived; `tid` is the caller's member index.
    pub fn wait(&self, tid: usize) {
        let cpu = current_cpu();
        if let Some(slot) = self.cpus.get(tid) {
            if slot.0.load(Relaxed) != cpu {
                slot.0.store(cpu, Relaxed);
            }
        }
        let generation = self.generation.load(Ordering::Acquire);
        if self.arrived.fetch_add(1, Ordering::AcqRel) + 1 == self.size {
            self.arrived.store(0, Relaxed);
            self.generation.fetch_add(1, Ordering::Release);
            return;
        }
        let released = || self.generation.load(Ordering::Acquire) != generation;
        let crowded = cpu != usize::MAX
            && self.cpus.iter().enumerate().any(|(i, c)| i != tid && c.0.load(Relaxed) == cpu);
        if !crowded {
            for _ in 0..self.spins {
                if released() {
                    return;
                }
                std::hint::spin_loop();
            }
        }
        while !released() {
            std::thread::yield_now();
        }
    }
}

/// The single-threaded reference executor.
pub(crate) struct Sequential;

impl Exec for Sequential {
    #[inline]
    fn fetch_min(&self, a: &AtomicU64, v: u64) -> u64 {
        let old = a.load(Relaxed);
        if v < old {
            a.store(v, Relaxed);
        }
        old
    }
    #[inline]
    fn fetch_min_i32(&self, a: &AtomicI32, v: i32) {
        if v < a.load(Relaxed) {
            a.store(v, Relaxed);
        }
    }
    #[inline]
    fn set_flag(&self, a: &AtomicU8) -> u8 {
        let old = a.load(Relaxed);
        a.store(1, Relaxed);
        old
    }
    fn concurrent_loops(&self) -> bool {
        false
    }
    #[inline]
    fn claim(&self, s: &AtomicI32, g: i32) -> bool {
        let old = s.load(Relaxed);
        s.store(g, Relaxed);
        old != g
    }
    #[inline]
    fn resolve(&self, a: &AtomicU8, v: u8) -> bool {
        let unknown = a.load(Relaxed) == 0;
        if unknown {
            a.store(v, Relaxed);
        }
        unknown
    }
    fn reference(&self) -> bool {
        true
    }
    fn for_chunks<F: Fn(Range<usize>) + Sync + Send>(&self, len: usize, _grain: usize, f: F) {
        f(0..len)
    }
    fn max_over<F: Fn(usize) -> u64 + Sync + Send>(&self, len: usize, f: F) -> u64 {
        (0..len).map(f).max().unwrap_or(0)
    }
    fn sum_over<F: Fn(usize) -> usize + Sync + Send>(&self, len: usize, f: F) -> usize {
        (0..len).map(f).sum()
    }
    fn min_over<F: Fn(usize) -> u64 + Sync + Send>(&self, len: usize, f: F) -> u64 {
        (0..len).map(f).min().unwrap_or(u64::MAX)
    }
    fn team<F: Fn(&Team<'_>) + Sync>(&self, _solo: bool, f: F) {
        f(&Team {
            tid: 0,
            barrier: None,
        })
    }
    fn solo(&self, _kind: SearchKind, _n: usize, _m: usize, _work: Option<usize>) -> bool {
        true
    }
    fn bucket_queue(&self) -> bool {
        false
    }
    fn members(&self) -> usize {
        1
    }
}

/// The rayon executor on a pool owned by a `Resources` handle. Engine runs call it from outside
/// the pool, so that a team never waits for a pool thread that is itself blocked.
pub(crate) struct Parallel<'p> {
    pub pool: &'p rayon::ThreadPool,
    /// Serializes teams on one pool: two teams interleaving on the same threads would each wait at
    /// a barrier for members busy in the other.
    pub team_lock: &'p Mutex<()>,
    /// Whether a search runs as a team or on one member, from how each ran lately.
    pub choice: &'p TeamChoice,
    /// Every loop runs on the calling thread (see `Exec::loops_inline`).
    pub inline_all: AtomicBool,
}

/// Graphs smaller than this run their near-far search on one member: starting a team costs a
/// wake-up of the pool, more than a tiny graph's whole search. Narrow rounds of larger graphs run
/// solo inside the team (`near_far::SOLO_BELOW`), so a team no longer loses on mid-sized graphs
/// such as bremen (40K vertices).
pub(crate) const TEAM_MIN_VERTICES: usize = 1 << 12;

/// Loops shorter than this run inline on the calling worker thread.
const INLINE_BELOW: usize = 512;

thread_local! {
    /// Set while the thread runs a member's part: of a team (see [`Parallel::team`]), or of runs
    /// side by side (see [`side_by_side`]). A member's runs stay on its thread.
    static IN_TEAM: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

fn in_team() -> bool {
    IN_TEAM.with(|t| t.get())
}

/// Marks the calling thread as a member until dropped.
struct Member(bool);

impl Member {
    fn enter() -> Self {
        Member(IN_TEAM.with(|t| t.replace(true)))
    }
}

impl Drop for Member {
    fn drop(&mut self) {
        IN_TEAM.with(|t| t.set(self.0));
    }
}

/// See [`Parallel::on_caller_and_pool`].
fn on_caller_and_pool<F: Fn(usize) + Sync>(pool: &rayon::ThreadPool, size: usize, f: F) {
    let f = &f;
    pool.in_place_scope(|scope| {
        for i in 1..size {
            scope.spawn(move |_| f(i));
        }
        f(0);
    });
}

/// Runs `f(member)` for every member in `0..members` at once, the calling thread as member 0 and
/// pool threads as the others, each a one-member run: whatever an engine runs inside stays on its
/// thread (no team, no loop handed to the pool), so that independent runs, such as a MOSP
/// result's K trees, share the pool's threads instead of each taking all of them in turn.
pub(crate) fn side_by_side<F: Fn(usize) + Sync>(pool: &rayon::ThreadPool, members: usize, f: F) {
    on_caller_and_pool(pool, members.min(pool.current_num_threads()), |i| {
        let _member = Member::enter();
        f(i)
    });
}

impl Parallel<'_> {
    /// True when a reduction over `len` items runs on the calling thread: the pool has one thread
    /// (handing the loop to it only adds a wake-up), the loop is too short to pay for one, or the
    /// caller is a team member. A member must not wait for the pool: a pool thread that waits
    /// runs other jobs meanwhile, and one of them may be another member's part, which would then
    /// wait at the team's barrier for the member below it on the same stack (a loop called from
    /// a member hung that way in a test at 3 threads).
    #[inline]
    fn inline(&self, len: usize) -> bool {
        len < INLINE_BELOW || self.pool.current_num_threads() == 1 || self.inline_all.load(Relaxed) || in_team()
    }

    /// Runs `f(i)` for every `i` in `0..size` at once: `f(0)` on the calling thread, the others
    /// on pool threads, and returns when all have. The caller is already running, so the
    /// scheduler puts the woken threads on other, idle CPUs; work handed to the pool from a
    /// caller that then blocked (a broadcast, or `install`) woke both threads of a 2-thread pool
    /// onto one CPU in about half the calls (teams: see [`Parallel::team`]; loops: see
    /// [`Parallel::chunks`]).
    fn on_caller_and_pool<F: Fn(usize) + Sync>(&self, size: usize, f: F) {
        on_caller_and_pool(self.pool, size, f)
    }

    /// Runs `f` over `0..len` in chunks of `grain`, claimed from one cursor by the calling thread
    /// and the pool's threads (`on_caller_and_pool`). Handed to the pool by rayon's `install`
    /// from a caller that then blocked, a loop ran at one thread's speed in about half the calls.
    fn chunks<F: Fn(Range<usize>) + Sync>(&self, len: usize, grain: usize, f: F) {
        let grain = grain.max(1);
        let cursor = AtomicUsize::new(0);
        self.on_caller_and_pool(self.pool.current_num_threads(), |_| loop {
            let start = cursor.fetch_add(grain, Relaxed);
            if start >= len {
                break;
            }
            f(start..(start + grain).min(len));
        });
    }

    /// True when a team for a search of `n` vertices and `m` edges has one member: the pool has
    /// one thread, or the search can reach fewer than [`TEAM_MIN_VERTICES`] vertices (at most
    /// m + 1 of the n: usroads' combined graph from vertex 0 has 352 edges in 129K rows, whose
    /// search a team of two ran five times slower than one member).
    fn one_member(&self, n: usize, m: usize) -> bool {
        self.pool.current_num_threads() == 1 || n.min(m.saturating_add(1)) < TEAM_MIN_VERTICES
    }

    /// True when the team-or-solo choice decides a search over `n` vertices and `m` edges: one
    /// whose team would have more than one member, a repair or a static solve. A static solve's
    /// team (`binned.rs`) and one member's bucket queue (`dial.rs`) are close on some graphs
    /// (bremen at 2 threads), and on a shared host either may be the faster for minutes.
    fn chooses(&self, n: usize, m: usize) -> bool {
        !self.one_member(n, m)
    }
}

impl Exec for Parallel<'_> {
    #[inline]
    fn fetch_min(&self, a: &AtomicU64, v: u64) -> u64 {
        a.fetch_min(v, Relaxed)
    }
    #[inline]
    fn fetch_min_i32(&self, a: &AtomicI32, v: i32) {
        a.fetch_min(v, Relaxed);
    }
    #[inline]
    fn set_flag(&self, a: &AtomicU8) -> u8 {
        a.swap(1, Relaxed)
    }
    fn concurrent_loops(&self) -> bool {
        self.pool.current_num_threads() > 1 && !self.inline_all.load(Relaxed)
    }
    #[inline]
    fn claim(&self, s: &AtomicI32, g: i32) -> bool {
        // A plain read first: most claims in a round hit vertices stamped already.
        s.load(Relaxed) != g && s.swap(g, Relaxed) != g
    }
    #[inline]
    fn resolve(&self, a: &AtomicU8, v: u8) -> bool {
        a.compare_exchange(0, v, Relaxed, Relaxed).is_ok()
    }
    fn reference(&self) -> bool {
        false
    }
    fn for_chunks<F: Fn(Range<usize>) + Sync + Send>(&self, len: usize, grain: usize, f: F) {
        if grain >= len || self.inline(len) {
            return f(0..len);
        }
        self.chunks(len, grain, f);
    }
    fn max_over<F: Fn(usize) -> u64 + Sync + Send>(&self, len: usize, f: F) -> u64 {
        if self.inline(len) {
            return (0..len).map(f).max().unwrap_or(0);
        }
        let best = AtomicU64::new(0);
        self.chunks(len, 4096, |r| {
            best.fetch_max(r.map(&f).max().unwrap_or(0), Relaxed);
        });
        best.into_inner()
    }
    fn sum_over<F: Fn(usize) -> usize + Sync + Send>(&self, len: usize, f: F) -> usize {
        if self.inline(len) {
            return (0..len).map(f).sum();
        }
        let sum = AtomicUsize::new(0);
        self.chunks(len, 4096, |r| {
            sum.fetch_add(r.map(&f).sum(), Relaxed);
        });
        sum.into_inner()
    }
    fn min_over<F: Fn(usize) -> u64 + Sync + Send>(&self, len: usize, f: F) -> u64 {
        if self.inline(len) {
            return (0..len).map(f).min().unwrap_or(u64::MAX);
        }
        let least = AtomicU64::new(u64::MAX);
        self.chunks(len, 1024, |r| {
            least.fetch_min(r.map(&f).min().unwrap_or(u64::MAX), Relaxed);
        });
        least.into_inner()
    }
    fn solo(&self, kind: SearchKind, n: usize, m: usize, work: Option<usize>) -> bool {
        if in_team() {
            true
        } else if self.chooses(n, m) {
            self.choice.solo(kind, n, m, work)
        } else {
            self.one_member(n, m)
        }
    }
    fn bucket_queue(&self) -> bool {
        true
    }
    fn members(&self) -> usize {
        self.pool.current_num_threads()
    }
    fn loops_inline(&self, on: bool) {
        self.inline_all.store(on, Relaxed);
    }
    fn searched(&self, kind: SearchKind, n: usize, m: usize, solo: bool, ns: u64, work: usize) {
        // Only searches whose way the choice made are timed for it: others would take its
        // slots for shapes it is never asked about, and a member's would time it beside others.
        if self.chooses(n, m) && !in_team() {
            self.choice.record(kind, n, m, solo, ns, work);
        }
    }
    fn team<F: Fn(&Team<'_>) + Sync>(&self, solo: bool, f: F) {
        let size = self.pool.current_num_threads();
        if solo || size == 1 || in_team() {
            return Sequential.team(true, f);
        }
        let _serial = self.team_lock.lock();
        let barrier = SpinBarrier::new(size);
        // The calling thread is member 0 and wakes size - 1 pool threads: a broadcast to all
        // pool threads from a caller that then blocked woke both members of a 2-thread team onto
        // one CPU in most searches (see `SpinBarrier`).
        self.on_caller_and_pool(size, |tid| {
            let _member = Member::enter();
            f(&Team { tid, barrier: Some(&barrier) })
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every member sees all increments of a round after the barrier, and none of the next.
    fn rounds(size: usize, rounds: usize) {
        let barrier = SpinBarrier::new(size);
        let count = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for tid in 0..size {
                let (barrier, count) = (&barrier, &count);
                s.spawn(move || {
                    for r in 0..rounds {
                        count.fetch_add(1, Relaxed);
                        barrier.wait(tid);
                        assert_eq!(count.load(Relaxed), (r + 1) * size, "member {tid}, round {r}");
                        barrier.wait(tid);
                    }
                });
            }
        });
    }

    #[test]
    fn the_barrier_separates_rounds() {
        rounds(2, 20_000);
        // More members than cores: no spinning, every wait yields.
        rounds(std::thread::available_parallelism().map_or(1, |c| c.get()) + 2, 2_000);
    }

    /// What a `Parallel` executor borrows, on a pool of `threads`.
    struct Fixture {
        pool: rayon::ThreadPool,
        lock: Mutex<()>,
        choice: TeamChoice,
    }

    impl Fixture {
        fn new(threads: usize) -> Self {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            Fixture { pool, lock: Mutex::new(()), choice: TeamChoice::default() }
        }

        fn exec(&self) -> Parallel<'_> {
            Parallel { pool: &self.pool, team_lock: &self.lock, choice: &self.choice, inline_all: Default::default() }
        }
    }

    #[test]
    fn loops_and_reductions_cover_every_index_once_from_outside_and_inside_the_pool() {
        let fixture = Fixture::new(3);
        let exec = fixture.exec();
        let check = |len: usize, grain: usize| {
            let hits: Vec<AtomicUsize> = (0..len).map(|_| AtomicUsize::new(0)).collect();
            exec.for_chunks(len, grain, |r| {
                for i in r {
                    hits[i].fetch_add(1, Relaxed);
                }
            });
            assert!(hits.iter().all(|h| h.load(Relaxed) == 1), "len {len}, grain {grain}");
            let f = |i: usize| (i as u64 * 2_654_435_761) % 1_000_003;
            assert_eq!(exec.max_over(len, f), (0..len).map(f).max().unwrap_or(0), "max, len {len}");
            assert_eq!(exec.min_over(len, f), (0..len).map(f).min().unwrap_or(u64::MAX), "min, len {len}");
            assert_eq!(exec.sum_over(len, |i| i % 7), (0..len).map(|i| i % 7).sum::<usize>(), "sum, len {len}");
        };
        for (len, grain) in [(0, 64), (511, 64), (512, 64), (5000, 64), (100_003, 4096), (100_003, 1), (70_000, 0)] {
            check(len, grain);
        }
        // From a team member on a pool thread too, before any barrier (when another member's
        // part may not have started yet): the loop runs on the member's own thread, as every
        // member's loops do, and only theirs.
        assert!(!exec.inline(100_003));
        exec.team(false, |team| {
            assert!(exec.inline(100_003), "member {}: its loops go to the pool", team.tid);
            if team.tid == 1 {
                check(100_003, 4096);
                let me = std::thread::current().id();
                let elsewhere = AtomicUsize::new(0);
                exec.for_chunks(100_003, 64, |_| {
                    if std::thread::current().id() != me {
                        elsewhere.fetch_add(1, Relaxed);
                    }
                });
                assert_eq!(elsewhere.into_inner(), 0, "a member's loop ran on other threads");
            }
            team.sync();
        });
        assert!(!exec.inline(100_003), "the caller is no member after its team");
        exec.team(false, |team| team.sync());
        check(100_003, 4096);
    }

    #[test]
    fn a_team_runs_each_member_once_with_the_caller_as_member_0() {
        let fixture = Fixture::new(3);
        let exec = fixture.exec();
        let caller = std::thread::current().id();
        let seen = Mutex::new(Vec::new());
        assert!(!exec.solo(SearchKind::Static, TEAM_MIN_VERTICES, 4 * TEAM_MIN_VERTICES, None), "untimed: a team");
        exec.team(false, |team| {
            team.sync();
            seen.lock().push((team.tid, std::thread::current().id() == caller));
            team.sync();
        });
        let mut seen = seen.into_inner();
        seen.sort();
        assert_eq!(seen, vec![(0, true), (1, false), (2, false)]);
        // Below the size threshold the caller runs alone, in vertices or in edges (a search
        // reaches at most m + 1 vertices), for a solve and for a repair.
        assert!(exec.solo(SearchKind::Static, TEAM_MIN_VERTICES - 1, 4 * TEAM_MIN_VERTICES, None));
        assert!(exec.solo(SearchKind::Static, 32 * TEAM_MIN_VERTICES, TEAM_MIN_VERTICES - 2, None));
        assert!(!exec.solo(SearchKind::Static, 32 * TEAM_MIN_VERTICES, TEAM_MIN_VERTICES - 1, None));
        assert!(exec.solo(SearchKind::Repair, 32 * TEAM_MIN_VERTICES, TEAM_MIN_VERTICES - 2, None));
        let alone = AtomicUsize::new(0);
        exec.team(true, |team| {
            assert!(team.is_alone());
            alone.fetch_add(1, Relaxed);
        });
        assert_eq!(alone.into_inner(), 1);
    }
}
