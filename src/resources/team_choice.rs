//! Whether a search on a multi-threaded pool runs as a team or on one member, chosen
//! from how each way ran lately on this host. The parallel executor asks for repairs and static
//! solves alike (`Parallel::chooses`), each kind timed on its own.
//!
//! A team (near-far for a repair, bins for a static solve) pays two barriers per round, each
//! about a core-to-core round trip, and a member whose CPU is taken away stops the whole team.
//! On a shared host both move within minutes (see docs/performance.md, "The machine"), so that a
//! team is faster than one thread in some minutes and slower in others. The one-member bucket
//! queue pays for none of it. So each resources handle keeps, per graph shape and kind of
//! search, a recent best time per vertex of either way, and runs the faster one (one member
//! only when clearly faster, [`SOLO_MARGIN`]); one search in [`PROBE_EVERY`] runs the other way,
//! to notice when the host changes. The trees are the same either way (the engines are bit-identical); only the
//! schedule-dependent counters differ.

use std::sync::atomic::{AtomicU64, AtomicU8, Ordering::Relaxed};

/// What a search does, for comparing like with like: static solves expand every reachable
/// vertex, repairs the vertices they touch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SearchKind {
    Static = 0,
    Repair = 1,
}

/// One search in this many runs the way that is not the chosen one: at pseudo-random positions
/// (a hash of the search's index), so that a workload repeating a fixed sequence of searches
/// (the bench's runs, a service's update cycle) does not always probe at the same step.
pub(crate) const PROBE_EVERY: u64 = 16;

/// One member is chosen over a team only when its time per vertex is below this share of the
/// team's: where the two are close, noise would flip the choice back and forth, and a team is
/// what a multi-threaded pool was asked for.
pub(crate) const SOLO_MARGIN: f64 = 0.9;

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
    /// Tests: repairs chosen to run as a team.
    #[cfg(test)]
    pub(crate) team_repairs: AtomicU64,
}

/// Whether search `i` of a slot is a probe: one in [`PROBE_EVERY`], by Fibonacci hashing.
fn is_probe(i: u64) -> bool {
    const _: () = assert!(PROBE_EVERY.is_power_of_two());
    i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - PROBE_EVERY.trailing_zeros()) == 0
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
    /// member. `work`: the vertices the search is expected to touch, where known (a repair's
    /// quick walk counts them, its sample estimates them): below [`MIN_WORK`], too few to be
    /// timed for the choice, it runs on one member (a team's wake-up costs more than such a
    /// search).
    pub(crate) fn solo(&self, kind: SearchKind, n: usize, m: usize, work: Option<usize>) -> bool {
        let solo = self.choose(kind, n, m, work);
        #[cfg(test)]
        if !solo && kind == SearchKind::Repair {
            self.team_repairs.fetch_add(1, Relaxed);
        }
        solo
    }

    fn choose(&self, kind: SearchKind, n: usize, m: usize, work: Option<usize>) -> bool {
        match self.forced.load(Relaxed) {
            1 => return false,
            2 => return true,
            _ => {}
        }
        if work.is_some_and(|w| w < MIN_WORK) {
            return true;
        }
        let slot = self.slot(Self::key(kind, n, m));
        let i = slot.searches.fetch_add(1, Relaxed);
        let probe = is_probe(i);
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
        (solo < SOLO_MARGIN * team) != probe
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

    /// How many of `count` successive searches of `kind` on a graph of shape `g` run on one
    /// member, and how many of them are probes (the slot's searches `from..from + count`).
    fn solos(c: &TeamChoice, kind: SearchKind, g: (usize, usize), from: u64, count: u64) -> (usize, usize) {
        let solos = (0..count).filter(|_| c.solo(kind, g.0, g.1, None)).count();
        (solos, (from..from + count).filter(|&i| is_probe(i)).count())
    }

    fn record(c: &TeamChoice, kind: SearchKind, g: (usize, usize), solo: bool, ns: u64) {
        c.record(kind, g.0, g.1, solo, ns, 100_000);
    }

    #[test]
    fn probes_are_one_in_16_and_not_periodic() {
        let probes: Vec<u64> = (0..16_000).filter(|&i| is_probe(i)).collect();
        assert!((950..=1050).contains(&probes.len()), "{}", probes.len());
        // A cycle of 8 or 16 searches is probed at every position, not always at the same one.
        for cycle in [7, 8, 16] {
            let positions: std::collections::HashSet<u64> = probes.iter().map(|i| i % cycle).collect();
            assert_eq!(positions.len() as u64, cycle, "cycle {cycle}");
        }
    }

    #[test]
    fn the_faster_way_runs_and_the_other_is_probed() {
        let c = TeamChoice::default();
        let s = SearchKind::Static;
        // Untimed: a team (search 0).
        assert_eq!(solos(&c, s, ROAD, 0, 1).0, 0);
        record(&c, s, ROAD, false, 4_000_000);
        // A team time but no solo time: search 1 and the probes take one member.
        assert_eq!(solos(&c, s, ROAD, 1, 1).0, 1);
        let (solo, probes) = solos(&c, s, ROAD, 2, 200);
        assert_eq!(solo, probes);
        assert!(probes >= 6);
        // One member clearly faster (3 against 4): it runs, a team at the probes.
        record(&c, s, ROAD, true, 3_000_000);
        let (solo, probes) = solos(&c, s, ROAD, 202, 200);
        assert_eq!(solo, 200 - probes);
        // The other kind is chosen on its own times: still untimed, teams.
        assert_eq!(solos(&c, SearchKind::Repair, ROAD, 0, 20).0, 0);
        // Teams faster again (one probe at a quarter of the time): the choice turns.
        record(&c, s, ROAD, false, 1_000_000);
        let (solo, probes) = solos(&c, s, ROAD, 402, 200);
        assert_eq!(solo, probes);
        // One slow team search (a preempted member) does not turn it while one member's times
        // are 3x a team's; a host on which teams got slower for good does, within a few.
        record(&c, s, ROAD, false, 9_000_000);
        let (solo, probes) = solos(&c, s, ROAD, 602, 100);
        assert_eq!(solo, probes);
        for _ in 0..14 {
            record(&c, s, ROAD, false, 9_000_000);
        }
        let (solo, probes) = solos(&c, s, ROAD, 702, 100);
        assert_eq!(solo, 100 - probes);
    }

    #[test]
    fn one_member_must_be_clearly_faster() {
        let c = TeamChoice::default();
        let s = SearchKind::Repair;
        solos(&c, s, ROAD, 0, 1);
        record(&c, s, ROAD, false, 4_000_000);
        record(&c, s, ROAD, true, 3_800_000);
        let (solo, probes) = solos(&c, s, ROAD, 1, 100);
        assert_eq!(solo, probes, "5 % faster: still a team");
        record(&c, s, ROAD, true, 3_000_000);
        let (solo, probes) = solos(&c, s, ROAD, 101, 100);
        assert_eq!(solo, 100 - probes, "25 % faster: one member");
    }

    #[test]
    fn each_graph_shape_is_chosen_on_its_own_times() {
        let c = TeamChoice::default();
        let s = SearchKind::Static;
        // One member faster on the road network (searches 0 and 1 time both ways).
        solos(&c, s, ROAD, 0, 1);
        record(&c, s, ROAD, false, 9_000_000);
        record(&c, s, ROAD, true, 3_000_000);
        let (solo, probes) = solos(&c, s, ROAD, 1, 10);
        assert_eq!(solo, 10 - probes);
        // Its combined graph (same vertices, about 1.3 edges each) has no times: a team.
        assert_eq!(solos(&c, s, (ROAD.0, ROAD.0 * 13 / 10), 0, 1).0, 0);
        // A batch that moves the edge count a little keeps the shape.
        let (solo, probes) = solos(&c, s, (ROAD.0, ROAD.1 + 20_000), 11, 10);
        assert_eq!(solo, 10 - probes);
        // Past the slots, the oldest shape is forgotten (untimed again: a team).
        for n in 1..=SLOTS {
            solos(&c, s, (ROAD.0 + n, ROAD.1), 0, 1);
        }
        assert_eq!(solos(&c, s, ROAD, 0, 1).0, 0);
    }

    #[test]
    fn short_searches_are_not_recorded_and_tests_can_force_a_way() {
        let c = TeamChoice::default();
        let r = SearchKind::Repair;
        solos(&c, r, ROAD, 0, 1);
        c.record(r, ROAD.0, ROAD.1, false, 1_000, MIN_WORK - 1);
        assert_eq!(solos(&c, r, ROAD, 1, 3).0, 0, "no team time: no probe");
        c.force(Some(true));
        assert_eq!(solos(&c, r, ROAD, 0, 5).0, 5);
        c.force(Some(false));
        assert_eq!(solos(&c, r, ROAD, 0, 5).0, 0);
        c.force(None);
    }
}
