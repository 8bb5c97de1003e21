//! What the bench records about the machine besides its name: how far apart its cores are right
//! now. On a shared VM the round trip between two threads changes by 2-4x from minute to minute,
//! and 2-thread figures with it, so a run that records it can be read for what it was.

use std::sync::atomic::{AtomicU64, Ordering::{Acquire, Release}};
use std::time::Instant;

/// The core-to-core round trip before and after the cases.
#[derive(Debug, Clone, Copy)]
pub struct Host {
    /// Median round trip of a cache line between two threads (ns), before and after.
    pub round_trip_ns: [f64; 2],
    /// The worst single round trip (us), before and after.
    pub worst_us: [f64; 2],
}

/// Waits for `line` to hold `want`: spins, yielding now and then so that a machine with one free
/// core still gets through (at worst slowly).
fn await_value(line: &AtomicU64, want: u64) {
    let mut spins = 0u32;
    while line.load(Acquire) != want {
        spins += 1;
        if spins.is_multiple_of(1024) {
            std::thread::yield_now();
        } else {
            std::hint::spin_loop();
        }
    }
}

/// Median over batches of the round trip (ns) of one cache line between two threads spinning on
/// it, and the worst single round trip (us; a vCPU away shows as milliseconds). NaN on a machine
/// with one core.
pub fn core_round_trip() -> (f64, f64) {
    const ROUNDS: u64 = 20_000;
    const BATCHES: usize = 5;
    if std::thread::available_parallelism().map_or(1, |c| c.get()) < 2 {
        return (f64::NAN, f64::NAN);
    }
    let line = AtomicU64::new(0);
    let mut batches = Vec::with_capacity(BATCHES);
    let mut worst = 0f64;
    std::thread::scope(|s| {
        s.spawn(|| {
            for i in 0..ROUNDS * BATCHES as u64 {
                await_value(&line, 2 * i + 1);
                line.store(2 * i + 2, Release);
            }
        });
        for b in 0..BATCHES as u64 {
            let start = Instant::now();
            for i in b * ROUNDS..(b + 1) * ROUNDS {
                let one = Instant::now();
                line.store(2 * i + 1, Release);
                await_value(&line, 2 * i + 2);
                worst = worst.max(one.elapsed().as_secs_f64() * 1e6);
            }
            batches.push(start.elapsed().as_secs_f64() * 1e9 / ROUNDS as f64);
        }
    });
    batches.sort_by(|a, b| a.total_cmp(b));
    (batches[BATCHES / 2], worst)
}
