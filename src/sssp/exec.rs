//! Executors: how the engine's loops and word updates run.
//!
//! The one engine (`engine.rs`) is written once over this trait. [`Sequential`] runs every loop in
//! order with plain loads and stores (the readable reference, whose counters are reproducible);
//! [`Parallel`] splits loops into chunks on the handle's rayon pool and uses atomic read-modify-
//! write operations. The near-far search, which runs thousands of short rounds, uses a *team*
//! instead: every pool thread runs the same loop and the threads meet at a spin barrier between
//! phases, so a round costs two barriers rather than a fork-join of the pool (the OpenMP and CUDA
//! programs' design). A sequential team has one member and no barrier.

use parking_lot::Mutex;
use rayon::prelude::*;
use std::ops::Range;
use std::sync::atomic::{AtomicI32, AtomicU64, AtomicU8, AtomicUsize, Ordering, Ordering::Relaxed};

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
    /// Runs `f` over chunks of `0..len` of about `grain` items.
    fn for_chunks<F: Fn(Range<usize>) + Sync + Send>(&self, len: usize, grain: usize, f: F);
    /// The maximum of `f(i)` over `0..len` (0 when empty).
    fn max_over<F: Fn(usize) -> u64 + Sync + Send>(&self, len: usize, f: F) -> u64;
    /// The sum of `f(i)` over `0..len`.
    fn sum_over<F: Fn(usize) -> usize + Sync + Send>(&self, len: usize, f: F) -> usize;
    /// The minimum of `f(i)` over `0..len` (`u64::MAX` when empty).
    fn min_over<F: Fn(usize) -> u64 + Sync + Send>(&self, len: usize, f: F) -> u64;
    /// True when loops run in index order on one thread (the reference schedule, whose counters
    /// depend on list orders).
    fn ordered(&self) -> bool;
    /// Runs `f` on every member of a team at the same time (one member when sequential, or
    /// when the graph has fewer than [`TEAM_MIN_VERTICES`] vertices: `n`).
    fn team<F: Fn(&Team<'_>) + Sync>(&self, n: usize, f: F);
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
            b.wait();
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

/// A reusable sense-counting barrier that spins briefly, then yields (the team may share cores
/// with other work, where pure spinning would starve the member it waits for).
pub(crate) struct SpinBarrier {
    size: usize,
    arrived: AtomicUsize,
    generation: AtomicUsize,
    /// Spins before yielding: none when the team has more members than the machine has cores
    /// (the member being waited for needs the core).
    spins: u32,
}

impl SpinBarrier {
    pub fn new(size: usize) -> Self {
        let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
        SpinBarrier {
            size,
            arrived: AtomicUsize::new(0),
            generation: AtomicUsize::new(0),
            spins: if size <= cores { 2000 } else { 0 },
        }
    }

    pub fn wait(&self) {
        let generation = self.generation.load(Ordering::Acquire);
        if self.arrived.fetch_add(1, Ordering::AcqRel) + 1 == self.size {
            self.arrived.store(0, Relaxed);
            self.generation.fetch_add(1, Ordering::Release);
            return;
        }
        let mut spins = 0u32;
        while self.generation.load(Ordering::Acquire) == generation {
            if spins < self.spins {
                std::hint::spin_loop();
                spins += 1;
            } else {
                std::thread::yield_now();
            }
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
    fn ordered(&self) -> bool {
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
    fn team<F: Fn(&Team<'_>) + Sync>(&self, _n: usize, f: F) {
        f(&Team {
            tid: 0,
            barrier: None,
        })
    }
}

/// The rayon executor on a pool owned by a `Resources` handle. Engine runs call it from outside
/// the pool, so that a team never waits for a pool thread that is itself blocked.
pub(crate) struct Parallel<'p> {
    pub pool: &'p rayon::ThreadPool,
    /// Serializes teams on one pool: two teams interleaving on the same threads would each wait at
    /// a barrier for members busy in the other.
    pub team_lock: &'p Mutex<()>,
}

/// Graphs smaller than this run their near-far search on one member: starting a team costs a
/// wake-up of the pool, more than a tiny graph's whole search. Narrow rounds of larger graphs run
/// solo inside the team (`engine::SOLO_BELOW`), so a team no longer loses on mid-sized
/// graphs: bremen (40K vertices) at 2 threads, teams from 64K against from 4K vertices (one
/// binary each, alternating, minimum of 7): safe 50K 2.94 -> 1.90 ms, unsafe 10K 1.59 -> 1.09,
/// safe 100 1.36 -> 1.18, local 1K 1.11 -> 1.06.
pub(crate) const TEAM_MIN_VERTICES: usize = 1 << 12;

/// Loops shorter than this run inline on the calling worker thread.
const INLINE_BELOW: usize = 512;

impl Parallel<'_> {
    /// True when a reduction over `len` items runs on the calling thread: the pool has one thread
    /// (handing the loop to it only adds a wake-up), or the loop is too short to pay for one.
    #[inline]
    fn inline(&self, len: usize) -> bool {
        len < INLINE_BELOW || self.pool.current_num_threads() == 1
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
    #[inline]
    fn claim(&self, s: &AtomicI32, g: i32) -> bool {
        // A plain read first: most claims in a round hit vertices stamped already.
        s.load(Relaxed) != g && s.swap(g, Relaxed) != g
    }
    #[inline]
    fn resolve(&self, a: &AtomicU8, v: u8) -> bool {
        a.compare_exchange(0, v, Relaxed, Relaxed).is_ok()
    }
    fn ordered(&self) -> bool {
        self.pool.current_num_threads() == 1
    }
    fn for_chunks<F: Fn(Range<usize>) + Sync + Send>(&self, len: usize, grain: usize, f: F) {
        if len < INLINE_BELOW || grain >= len || self.pool.current_num_threads() == 1 {
            return f(0..len);
        }
        let grain = grain.max(1);
        let chunks = len.div_ceil(grain);
        self.pool.install(|| {
            (0..chunks)
                .into_par_iter()
                .for_each(|c| f(c * grain..((c + 1) * grain).min(len)))
        });
    }
    fn max_over<F: Fn(usize) -> u64 + Sync + Send>(&self, len: usize, f: F) -> u64 {
        if self.inline(len) {
            return (0..len).map(f).max().unwrap_or(0);
        }
        self.pool.install(|| (0..len).into_par_iter().with_min_len(4096).map(f).max().unwrap_or(0))
    }
    fn sum_over<F: Fn(usize) -> usize + Sync + Send>(&self, len: usize, f: F) -> usize {
        if self.inline(len) {
            return (0..len).map(f).sum();
        }
        self.pool.install(|| (0..len).into_par_iter().with_min_len(4096).map(f).sum())
    }
    fn min_over<F: Fn(usize) -> u64 + Sync + Send>(&self, len: usize, f: F) -> u64 {
        if self.inline(len) {
            return (0..len).map(f).min().unwrap_or(u64::MAX);
        }
        self.pool.install(|| {
            (0..len)
                .into_par_iter()
                .with_min_len(1024)
                .map(f)
                .min()
                .unwrap_or(u64::MAX)
        })
    }
    fn team<F: Fn(&Team<'_>) + Sync>(&self, n: usize, f: F) {
        let size = self.pool.current_num_threads();
        if size == 1 || n < TEAM_MIN_VERTICES {
            return Sequential.team(n, f);
        }
        let _serial = self.team_lock.lock();
        let barrier = SpinBarrier::new(size);
        self.pool.broadcast(|ctx| {
            f(&Team {
                tid: ctx.index(),
                barrier: Some(&barrier),
            })
        });
    }
}
