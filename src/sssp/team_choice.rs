//! Whether a search on a multi-threaded pool runs as a near-far team or on one member, chosen
//! from how each way ran lately on this host.
//!
//! A near-far team pays two barriers per round, each about a core-to-core round trip, and a
//! member whose CPU is taken away stops the whole team. On a shared host both move within
//! minutes (see docs/performance.md, "The machine"): a static solve of usroads at 2 threads took
//! 4.3 ms against 5.7 at one thread, 7.0 against 5.6 while another process kept the second CPU
//! busy, and 10 against 5.4 in the bench's slow phase. The one-member bucket queue pays for
//! none of it. So each resources handle keeps, per kind of search, a recent best time per vertex
//! of either way, and runs the faster one; every [`PROBE_EVERY`]-th search runs the other way,
//! to notice when the host changes. The trees are the same either way (the engines
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

/// The choice's state, shared by the clones of a resources handle.
#[derive(Debug, Default)]
pub(crate) struct TeamChoice {
    /// Recent best nanoseconds per vertex (see [`DECAY`]), `[kind][solo]`, as f64 bits (0:
    /// none yet).
    rates: [[AtomicU64; 2]; 2],
    /// Searches chosen so far, per kind (for the probes).
    searches: [AtomicU64; 2],
    /// Tests: 1 forces a team, 2 one member (0: choose).
    forced: AtomicU8,
}

impl TeamChoice {
    /// True when the next search of `kind` runs on one member.
    pub(crate) fn solo(&self, kind: SearchKind) -> bool {
        match self.forced.load(Relaxed) {
            1 => return false,
            2 => return true,
            _ => {}
        }
        let k = kind as usize;
        let i = self.searches[k].fetch_add(1, Relaxed);
        let probe = i % PROBE_EVERY == PROBE_EVERY - 1;
        let rate = |solo: usize| f64::from_bits(self.rates[k][solo].load(Relaxed));
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

    /// Records a finished search of `kind` that ran on one member (`solo`) or as a team and
    /// took `ns` for `work` vertices.
    pub(crate) fn record(&self, kind: SearchKind, solo: bool, ns: u64, work: usize) {
        if work < MIN_WORK {
            return;
        }
        let slot = &self.rates[kind as usize][solo as usize];
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

    /// The ways `n` successive searches of `kind` take.
    fn next(c: &TeamChoice, kind: SearchKind, n: usize) -> Vec<bool> {
        (0..n).map(|_| c.solo(kind)).collect()
    }

    #[test]
    fn the_faster_way_runs_and_the_other_is_probed_every_16_searches() {
        let c = TeamChoice::default();
        // Untimed: teams, and no probe before a team time exists.
        assert!(next(&c, SearchKind::Static, 1).iter().all(|&s| !s));
        c.record(SearchKind::Static, false, 4_000_000, 100_000);
        // A team time but no solo time: the second search and the probes take one member.
        assert!(next(&c, SearchKind::Static, 1)[0]);
        let ways = next(&c, SearchKind::Static, 34);
        assert_eq!(ways.iter().filter(|&&s| s).count(), 2);
        // One member faster: it runs, a team every 16th search.
        c.record(SearchKind::Static, true, 3_000_000, 100_000);
        let ways = next(&c, SearchKind::Static, 32);
        assert_eq!(ways.iter().filter(|&&s| !s).count(), 2);
        // The other kind is chosen on its own times: still untimed, teams.
        assert!(next(&c, SearchKind::Repair, 20).iter().all(|&s| !s));
        // Teams become faster again (one probe at a quarter of the time): the choice turns.
        c.record(SearchKind::Static, false, 1_000_000, 100_000);
        let ways = next(&c, SearchKind::Static, 32);
        assert_eq!(ways.iter().filter(|&&s| s).count(), 2);
        // One slow team search (a preempted member) does not turn it while one member's times
        // are 3x a team's; a host on which teams got slower for good does, within a few.
        c.record(SearchKind::Static, false, 9_000_000, 100_000);
        assert_eq!(next(&c, SearchKind::Static, 16).iter().filter(|&&s| s).count(), 1);
        for _ in 0..12 {
            c.record(SearchKind::Static, false, 9_000_000, 100_000);
        }
        assert_eq!(next(&c, SearchKind::Static, 16).iter().filter(|&&s| !s).count(), 1);
    }

    #[test]
    fn short_searches_are_not_recorded_and_tests_can_force_a_way() {
        let c = TeamChoice::default();
        c.record(SearchKind::Repair, false, 1_000, MIN_WORK - 1);
        assert_eq!(c.rates[1][0].load(Relaxed), 0);
        c.force(Some(true));
        assert!(next(&c, SearchKind::Repair, 5).iter().all(|&s| s));
        c.force(Some(false));
        assert!(next(&c, SearchKind::Repair, 5).iter().all(|&s| !s));
        c.force(None);
    }
}
