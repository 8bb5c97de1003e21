//! Whether a search on a multi-threaded pool runs as a near-far team or on one member, chosen
//! from how each way ran lately on this host.
//!
//! A near-far team pays two barriers per round, each about a core-to-core round trip, and a
//! member whose CPU is taken away stops the whole team. On a shared host both move within
//! minutes (see docs/performance.md, "The machine"): a static solve of usroads at 2 threads took
//! 4.3 ms against 5.7 at one thread, 7.0 against 5.6 while another process kept the second CPU
//! busy, and 10 against 5.4 in the bench's slow phase. The one-member bucket queue pays for
//! none of it. So each resources handle keeps, per graph shape and kind of search, a recent best
//! time per vertex of either way, and runs the faster one; every [`PROBE_EVERY`]-th search runs
//! the other way, to notice when the host changes. The trees are the same either way (the engines
//! are bit-identical); only the schedule-dependent counters differ.

use std::sync::atomic::{AtomicU64, AtomicU8, Ordering::Relaxed};

/// What a search does, for comparing like with like: static solves expand every reachable
/// vertex, repairs the vertices they touch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SearchKind {
    Static = 0,
    Repair = 1,
}

/// One search in this many runs the way that is not the faster one.
pub(crate) const PROBE_EVERY: u64 = 16;

/// Searches over fewer vertices are too short to time well, and are not recorded.
pub(crate) const MIN_WORK: usize = 4096;

/// A way's time is the minimum of its newest one and its previous time times this. Noise on a
/// shared host is one-sided (a preempted member, another process's cache traffic), so a minimum
/// keeps one slow search from turning the choice unless the two ways are within 10 %; a way
/// that has become slower for good is followed within a few of its searches.
const DECAY: f64 = 1.1;

/// Graph shapes a handle keeps times for. What a team gains depends on the graph's rounds (the
/// combined graph of K trees, a sparse near-tree of long narrow rounds, gains less than its road
/// network), so the times of one shape do not decide for another: a search of a shape not held
/// takes the oldest slot.
const SLOTS: usize = 8;

/// The times of one graph shape and kind of search.
#[derive(Debug, Default)]
struct Slot {
    /// The shape and kind (see `TeamChoice::key`); 0: free.
    key: AtomicU64,
    /// Recent best nanoseconds per vertex (see [`DECAY`]), `[solo]`, as f64 bits (0: none yet).
    rates: [AtomicU64; 2],
    /// Searches chosen so far (for the probes).
    searches: AtomicU64,
}

/// The choice's state, shared by the clones of a resources handle. Concurrent searches may race
/// on a slot; the worst outcome is a less apt choice, never another tree.
#[derive(Debug, Default)]
pub(crate) struct TeamChoice {
    slots: [Slot; SLOTS],
    /// The slot a new shape takes next (round robin).
    next: AtomicU64,
    /// Tests: 1 forces a team, 2 one member (0: choose).
    forced: AtomicU8,
}

impl TeamChoice {
    /// A graph of `n` vertices and `m` edges and a kind of search, as a slot key: the average
    /// degree at half-degree steps, which the batches of a stream rarely move (50K changes on
    /// usroads: 0.15) and which sets a combined graph (1-1.5) apart from its graph (2.6-4.2).
    fn key(kind: SearchKind, n: usize, m: usize) -> u64 {
        let degree = (2 * m / n.max(1)) as u64;
        1 << 63 | (n as u64) << 16 | degree.min(0x7fff) << 1 | kind as u64
    }

    /// The slot of `key`, taking the oldest one for a shape not held.
    fn slot(&self, key: u64) -> &Slot {
        if let Some(s) = self.slots.iter().find(|s| s.key.load(Relaxed) == key) {
            return s;
        }
        let s = &self.slots[(self.next.fetch_add(1, Relaxed) % SLOTS as u64) as usize];
        for a in s.rates.iter().chain([&s.searches]) {
            a.store(0, Relaxed);
        }
        s.key.store(key, Relaxed);
        s
    }

    /// True when the next search of `kind` on a graph of `n` vertices and `m` edges runs on one
    /// member.
    pub(crate) fn solo(&self, kind: SearchKind, n: usize, m: usize) -> bool {
        match self.forced.load(Relaxed) {
            1 => return false,
            2 => return true,
            _ => {}
        }
        let slot = self.slot(Self::key(kind, n, m));
        let i = slot.searches.fetch_add(1, Relaxed);
        let probe = i % PROBE_EVERY == PROBE_EVERY - 1;
        let rate = |solo: usize| f64::from_bits(slot.rates[solo].load(Relaxed));
        let (team, solo) = (rate(0), rate(1));
        if team == 0.0 {
            // A team until it has been timed (the way before this choice existed).
            return false;
        }
        if solo == 0.0 {
            // The first solo time as soon as a team time exists (a fresh handle learns within
            // its first searches), then at the probes.
            return probe || i == 1;
        }
        (solo < team) != probe
    }

    /// Records a finished search of `kind` on a graph of `n` vertices and `m` edges that ran on
    /// one member (`solo`) or as a team and took `ns` for `work` vertices.
    pub(crate) fn record(&self, kind: SearchKind, n: usize, m: usize, solo: bool, ns: u64, work: usize) {
        if work < MIN_WORK {
            return;
        }
        let slot = &self.slot(Self::key(kind, n, m)).rates[solo as usize];
        let (old, now) = (f64::from_bits(slot.load(Relaxed)), ns as f64 / work as f64);
        let new = if old == 0.0 { now } else { (old * DECAY).min(now) };
        slot.store(new.max(f64::MIN_POSITIVE).to_bits(), Relaxed);
    }

    /// Tests: always a team (`Some(false)`), always one member (`Some(true)`), or choose.
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) fn force(&self, solo: Option<bool>) {
        self.forced.store(solo.map_or(0, |s| 1 + s as u8), Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A road-network-like shape (usroads: 129K vertices, 332K edges).
    const ROAD: (usize, usize) = (129_164, 332_000);

    /// The ways `count` successive searches of `kind` on a graph of shape `g` take.
    fn next(c: &TeamChoice, kind: SearchKind, g: (usize, usize), count: usize) -> Vec<bool> {
        (0..count).map(|_| c.solo(kind, g.0, g.1)).collect()
    }

    fn record(c: &TeamChoice, kind: SearchKind, g: (usize, usize), solo: bool, ns: u64) {
        c.record(kind, g.0, g.1, solo, ns, 100_000);
    }

    #[test]
    fn the_faster_way_runs_and_the_other_is_probed_every_16_searches() {
        let c = TeamChoice::default();
        let s = SearchKind::Static;
        // Untimed: teams, and no probe before a team time exists.
        assert!(!next(&c, s, ROAD, 1)[0]);
        record(&c, s, ROAD, false, 4_000_000);
        // A team time but no solo time: the second search and the probes take one member.
        assert!(next(&c, s, ROAD, 1)[0]);
        assert_eq!(next(&c, s, ROAD, 34).iter().filter(|&&s| s).count(), 2);
        // One member faster: it runs, a team every 16th search.
        record(&c, s, ROAD, true, 3_000_000);
        assert_eq!(next(&c, s, ROAD, 32).iter().filter(|&&s| !s).count(), 2);
        // The other kind is chosen on its own times: still untimed, teams.
        assert!(next(&c, SearchKind::Repair, ROAD, 20).iter().all(|&s| !s));
        // Teams become faster again (one probe at a quarter of the time): the choice turns.
        record(&c, s, ROAD, false, 1_000_000);
        assert_eq!(next(&c, s, ROAD, 32).iter().filter(|&&s| s).count(), 2);
        // One slow team search (a preempted member) does not turn it while one member's times
        // are 3x a team's; a host on which teams got slower for good does, within a few.
        record(&c, s, ROAD, false, 9_000_000);
        assert_eq!(next(&c, s, ROAD, 16).iter().filter(|&&s| s).count(), 1);
        for _ in 0..12 {
            record(&c, s, ROAD, false, 9_000_000);
        }
        assert_eq!(next(&c, s, ROAD, 16).iter().filter(|&&s| !s).count(), 1);
    }

    #[test]
    fn each_graph_shape_is_chosen_on_its_own_times() {
        let c = TeamChoice::default();
        let s = SearchKind::Static;
        // One member faster on the road network.
        next(&c, s, ROAD, 1);
        record(&c, s, ROAD, false, 9_000_000);
        record(&c, s, ROAD, true, 3_000_000);
        assert!(next(&c, s, ROAD, 10).iter().all(|&s| s));
        // Its combined graph (same vertices, about 1.3 edges each) has no times: teams.
        let combined = (ROAD.0, ROAD.0 * 13 / 10);
        assert!(next(&c, s, combined, 1).iter().all(|&s| !s));
        // A batch that moves the edge count a little keeps the shape.
        assert!(next(&c, s, (ROAD.0, ROAD.1 + 20_000), 4).iter().all(|&s| s));
        // Past the slots, the oldest shape is forgotten (untimed again: a team).
        for n in 1..=SLOTS {
            next(&c, s, (ROAD.0 + n, ROAD.1), 1);
        }
        assert!(!next(&c, s, ROAD, 1)[0]);
    }

    #[test]
    fn short_searches_are_not_recorded_and_tests_can_force_a_way() {
        let c = TeamChoice::default();
        next(&c, SearchKind::Repair, ROAD, 1);
        c.record(SearchKind::Repair, ROAD.0, ROAD.1, false, 1_000, MIN_WORK - 1);
        assert!(!next(&c, SearchKind::Repair, ROAD, 3).iter().any(|&s| s), "no team time, no probe");
        c.force(Some(true));
        assert!(next(&c, SearchKind::Repair, ROAD, 5).iter().all(|&s| s));
        c.force(Some(false));
        assert!(next(&c, SearchKind::Repair, ROAD, 5).iter().all(|&s| !s));
        c.force(None);
    }
}
