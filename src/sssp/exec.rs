//! Executors: how the engine's loops and word updates run.
//!
//! The one engine (`engine.rs`) is written once over this trait. [`Sequential`] runs every loop in
//! order with plain loads and stores (the readable reference, whose counters are reproducible);
//! [`Parallel`] splits loops into chunks on the handle's rayon pool and uses atomic read-modify-
//! write operations. Small loops run inline even in parallel mode: a round with a few dozen vertices
//! costs less than waking the pool.

use rayon::prelude::*;
use std::ops::Range;
use std::sync::atomic::{AtomicI32, AtomicU64, AtomicU8, Ordering::Relaxed};

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
    /// The minimum of `f(i)` over `0..len` (`u64::MAX` when empty).
    fn min_over<F: Fn(usize) -> u64 + Sync + Send>(&self, len: usize, f: F) -> u64;
    /// Runs the whole engine inside the executor's thread pool.
    fn install<R: Send, F: FnOnce() -> R + Send>(&self, f: F) -> R;
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
    fn for_chunks<F: Fn(Range<usize>) + Sync + Send>(&self, len: usize, _grain: usize, f: F) {
        f(0..len)
    }
    fn min_over<F: Fn(usize) -> u64 + Sync + Send>(&self, len: usize, f: F) -> u64 {
        (0..len).map(f).min().unwrap_or(u64::MAX)
    }
    fn install<R: Send, F: FnOnce() -> R + Send>(&self, f: F) -> R {
        f()
    }
}

/// The rayon executor on a pool owned by a `Resources` handle.
pub(crate) struct Parallel<'p> {
    pub pool: &'p rayon::ThreadPool,
}

/// Loops shorter than this run inline on the calling worker thread.
const INLINE_BELOW: usize = 512;

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
    fn for_chunks<F: Fn(Range<usize>) + Sync + Send>(&self, len: usize, grain: usize, f: F) {
        if len < INLINE_BELOW || self.pool.current_num_threads() == 1 {
            return f(0..len);
        }
        let grain = grain.max(1);
        let chunks = len.div_ceil(grain);
        (0..chunks)
            .into_par_iter()
            .for_each(|c| f(c * grain..((c + 1) * grain).min(len)));
    }
    fn min_over<F: Fn(usize) -> u64 + Sync + Send>(&self, len: usize, f: F) -> u64 {
        if len < INLINE_BELOW {
            return (0..len).map(f).min().unwrap_or(u64::MAX);
        }
        (0..len)
            .into_par_iter()
            .with_min_len(1024)
            .map(f)
            .min()
            .unwrap_or(u64::MAX)
    }
    fn install<R: Send, F: FnOnce() -> R + Send>(&self, f: F) -> R {
        self.pool.install(f)
    }
}
