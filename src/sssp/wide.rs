//! Buckets of 2^shift distances, for weights too wide for a bucket per distance (a road network's
//! metres or seconds: bremen's reach 88,514 and 63 million).
//!
//! A bucket's vertices are then not all final, so a bucket is drained in rounds until it stays
//! empty, and a vertex whose distance drops inside its bucket is queued again there. Each entry
//! carries, above the vertex id, the place of the distance it was queued at within its bucket, so
//! that an entry is expanded only while it is its vertex's latest: a vertex is expanded once at
//! its last distance in the bucket, with no per-vertex flag to load and store beside its word (a
//! byte per vertex flagging it queued cost 14 % of a static solve on the 1000^2 grid). Where the
//! id leaves too few bits, the place keeps its high bits only: two entries of one vertex may then
//! both read as its latest, and the vertex is expanded twice at the same distance, which offers
//! no new candidate. Trees are the same either way.

/// How a queue of buckets of 2^`shift` distances codes its entries for graphs of `n` vertices.
#[derive(Clone, Copy, Debug)]
pub(super) struct Wide {
    shift: u32,
    /// Bits of the entry that hold the vertex id (ids below n).
    id_bits: u32,
    /// Low bits of the place that do not fit above the id.
    dropped: u32,
}

impl Wide {
    pub(super) fn new(n: usize, shift: u32) -> Self {
        debug_assert!(shift < 64);
        let id_bits = (usize::BITS - n.saturating_sub(1).leading_zeros()).max(1);
        Wide { shift, id_bits, dropped: shift.saturating_sub(32 - id_bits) }
    }

    /// The least shift whose buckets keep every pending distance within `buckets` - 1 buckets of
    /// the one being drained, where no weight exceeds `max_weight`.
    pub(super) fn shift_for(max_weight: u64, buckets: u64) -> u32 {
        (0..63).find(|&s| (max_weight >> s) + 2 <= buckets).unwrap_or(63)
    }

    pub(super) fn shift(&self) -> u32 {
        self.shift
    }

    /// The bucket of distance `d`.
    #[inline(always)]
    pub(super) fn bucket(&self, d: u64) -> u64 {
        d >> self.shift
    }

    /// What is kept of distance `d`'s place in its bucket.
    #[inline(always)]
    fn place(&self, d: u64) -> u64 {
        (d & ((1u64 << self.shift) - 1)) >> self.dropped
    }

    // Each entry method takes `PLACED`: false where the shift is known to be 0 (a bucket per
    // distance, its entries plain vertex ids), so that a queue's loop compiled for that case does
    // no coding; true reads the shift, 0 included.

    /// The entry of vertex `v` queued at distance `d`.
    #[inline(always)]
    pub(super) fn entry<const PLACED: bool>(&self, v: u32, d: u64) -> u32 {
        debug_assert!(PLACED || self.shift == 0);
        if !PLACED {
            return v;
        }
        (v as u64 | self.place(d) << self.id_bits) as u32
    }

    /// The vertex of entry `e`.
    #[inline(always)]
    pub(super) fn vertex<const PLACED: bool>(&self, e: u32) -> usize {
        if !PLACED {
            return e as usize;
        }
        (e as u64 & ((1u64 << self.id_bits) - 1)) as usize
    }

    /// Whether entry `e`, taken from bucket `b`, is its vertex's latest, the vertex's distance
    /// being `d` now (a vertex queued again at a smaller distance has a later entry).
    #[inline(always)]
    pub(super) fn live<const PLACED: bool>(&self, e: u32, b: u64, d: u64) -> bool {
        if !PLACED {
            return d == b;
        }
        self.bucket(d) == b && self.place(d) == (e as u64) >> self.id_bits
    }
}

/// When static solves widen their buckets: a solve that expanded fewer than `sparse` entries per
/// bucket (or round) drained takes buckets wider by the least power of two that brings it to
/// `aim`, at most `most` doublings over its first width, on the next solve of the same graph
/// shape, and only as far as leaves it `least` drains (0: no such bound).
pub(super) struct Widening {
    pub(super) sparse: i64,
    pub(super) aim: i64,
    pub(super) most: u32,
    pub(super) least: i64,
}

/// The last static solve's graph shape (vertices, largest weight) and how many times wider than
/// its first width its buckets were taken, as a power of two.
#[derive(Default, Clone, Copy, PartialEq, Eq, Debug)]
pub(super) struct Learned {
    n: usize,
    max_weight: u64,
    pub(super) wider: u32,
}

impl Learned {
    /// How much wider than the first width the next solve of `n` vertices whose weights are at
    /// most `max_weight` takes its buckets.
    pub(super) fn wider(&self, n: usize, max_weight: u64) -> u32 {
        if (self.n, self.max_weight) == (n, max_weight) {
            self.wider
        } else {
            0
        }
    }

    /// After a solve that took its buckets `wider` times wider (a power of two) and expanded
    /// `pushes` entries in `drains` drains.
    pub(super) fn after(n: usize, max_weight: u64, wider: u32, pushes: i64, drains: i64, how: &Widening) -> Learned {
        let per = pushes / drains.max(1);
        let wider = if per < how.sparse {
            // The least power of two that brings the entries per drain to the aim.
            let more = (how.aim as u64).div_ceil(per.max(1) as u64).next_power_of_two().trailing_zeros();
            let room = match how.least {
                0 => u32::MAX,
                least => (drains / least).max(1).ilog2(),
            };
            (wider + more.min(room)).min(how.most)
        } else {
            wider
        };
        Learned { n, max_weight, wider }
    }
}

#[cfg(test)]
mod tests {
    use super::Wide;

    #[test]
    fn an_entry_is_live_only_at_the_distance_it_was_queued_at() {
        // 1,000 vertices (10 id bits) and buckets of 2^12 distances: the place fits.
        let w = Wide::new(1000, 12);
        let e = w.entry::<true>(999, (7 << 12) + 5);
        assert_eq!(w.vertex::<true>(e), 999);
        assert!(w.live::<true>(e, 7, (7 << 12) + 5));
        assert!(!w.live::<true>(e, 7, (7 << 12) + 4), "queued again lower in the bucket");
        assert!(!w.live::<true>(e, 7, (6 << 12) + 5), "queued again in an earlier bucket");
        // 2^28 ids leave 4 bits for a place of 12: the 8 low bits are dropped, so distances
        // that differ only there read alike (a second expansion at the same distance).
        let w = Wide::new(1 << 28, 12);
        let e = w.entry::<true>((1 << 28) - 1, (3 << 12) + 0x5ff);
        assert_eq!(w.vertex::<true>(e), (1 << 28) - 1);
        assert!(w.live::<true>(e, 3, (3 << 12) + 0x500));
        assert!(!w.live::<true>(e, 3, (3 << 12) + 0x4ff));
        // A bucket per distance: entries are ids, live at their bucket's distance.
        let w = Wide::new(u32::MAX as usize + 1, 0);
        assert_eq!((w.entry::<true>(u32::MAX, 9), w.vertex::<true>(u32::MAX)), (u32::MAX, u32::MAX as usize));
        assert!(w.live::<true>(u32::MAX, 9, 9) && !w.live::<true>(u32::MAX, 9, 8));
        assert_eq!((Wide::shift_for(4094, 4096), Wide::shift_for(4095, 4096), Wide::shift_for(63_730_080, 4096)), (0, 1, 14));
    }

    #[test]
    fn sparse_drains_widen_by_the_power_of_two_that_reaches_the_aim_within_the_bounds() {
        use super::{Learned, Widening};
        let how = Widening { sparse: 100, aim: 400, most: 5, least: 0 };
        // 10 entries a drain: 400 / 10 = 40, rounded up to 64, six doublings, capped at five.
        assert_eq!(Learned::after(7, 9, 0, 1000, 100, &how).wider, 5);
        // 50 a drain: 8 times wider, on top of the width taken; dense drains keep it.
        assert_eq!(Learned::after(7, 9, 1, 5000, 100, &how).wider, 4);
        assert_eq!(Learned::after(7, 9, 2, 50_000, 100, &how).wider, 2);
        // At least `least` drains left: 100 drains and 16 kept allow two doublings (100 / 16 = 6),
        // and none under 32.
        let kept = Widening { least: 16, ..how };
        assert_eq!(Learned::after(7, 9, 0, 1000, 100, &kept).wider, 2);
        assert_eq!(Learned::after(7, 9, 1, 300, 30, &kept).wider, 1);
        // Another graph shape starts from its first width.
        let l = Learned::after(7, 9, 0, 1000, 100, &how);
        assert_eq!((l.wider(7, 9), l.wider(8, 9), l.wider(7, 10)), (5, 0, 0));
    }
}
