//! The search of a team, a static solve's or a repair's: Delta-stepping with a ring of bins in
//! each member (the design of GAP's delta-stepping), where near-far re-reads its whole far pile
//! at every epoch and copies lists between members at every round.
//!
//! A round expands the current bucket's entries, shared by claiming chunks of every member's
//! published bin, and each member queues what it lowers in its own bins. It then drains its own
//! bin of the current bucket alone while that bin stays small (so a road network's thin rounds
//! cost no barrier), and the members agree on the next non-empty bucket at a barrier. A published
//! bin is read in place: its owner swaps it out of its ring and takes it back after the next
//! barrier. Entries carry their distance's place in the bucket (`wide.rs`), so an entry whose
//! vertex was queued again lower is skipped. Trees are the same as any schedule's: the packed
//! word keeps the least distance and, among equal ones, the lowest parent.
//!
//! A repair starts from its frontier (words set, distances lowered), spread over the members'
//! bins; its buckets must cover the frontier's span in the ring without being wider than
//! near-far's window (as the one-member queue's, `buckets.rs`), else near-far runs it. It reads
//! the old tree's words where it has not written them, checks a caller's rows as it reads them,
//! lists what it touches (`track`), and is abandoned past its budget of expansions, checked at
//! each round's barrier.

use super::buckets::frontier_span;
use super::dial::DialRing;
use super::exec::{Exec, Team};
use super::near_far::Search;
use super::prefetch::ask_expansion;
use super::run::{touch, Run};
use super::wide::{Learned, Wide, Widening};
use super::workspace::{Appender, Workspace};
use crate::stats::UpdateStats;
use parking_lot::{Mutex, RwLock};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicUsize, Ordering::Relaxed};

/// The most bins in a member's ring: the bucket width is widened until the largest weight fits.
const RING_MAX: usize = 4096;

/// A member drains its bin of the current bucket alone, without a barrier, while the bin holds
/// fewer entries than this (GAP's bin-size threshold).
const FUSE_BELOW: usize = 1000;

/// Entries claimed at a time from the published bins.
const GRAIN: usize = 64;

/// One member's bins: Dial's ring (`dial.rs`), a bin per bucket number, on cache lines of its
/// own: the members write their counts at every push.
#[derive(Default)]
#[repr(align(128))]
pub(crate) struct MemberBins(DialRing);

/// The bins of a team, one [`MemberBins`] and one published bin per member.
#[derive(Default)]
pub(crate) struct TeamBins {
    members: Vec<Mutex<MemberBins>>,
    /// Each member's bin of the bucket being expanded, read by every member in a round.
    published: Vec<RwLock<Vec<u32>>>,
    /// What the last static solve found of its graph's rounds.
    learned: Learned,
}

impl TeamBins {
    pub(crate) fn bytes(&self) -> usize {
        let rings: usize = self.members.iter().map(|m| m.lock().0.bytes()).sum();
        rings + 4 * self.published.iter().map(|p| p.read().capacity()).sum::<usize>()
    }
}

/// How a team's static solves widen their buckets: a round of few entries spends more on its two
/// barriers than its members gain. Usroads (weights 1-100) expands 330 entries a round in buckets
/// of 64 distances, 670 at 128 and 1,390 at 256, where its time against GAP's fell from about
/// 1.6 to 1.3-1.5; the 1000^2 grid expands 1,630 a round at 64, its best width. Wider buckets
/// also expand vertices again: a graph of few rounds keeps at least 64 (the 70^2 grid, 49 rounds
/// at 64 distances, expanded its vertices 4.6 times each in 3 rounds at 2,048).
const WIDENING: Widening = Widening { sparse: 1024, aim: 2048, most: 8, least: 64 };

/// The first bucket width (as a power of two) of a team's search of Delta `delta` with weights up
/// to `max_weight`: the largest power of two at most a quarter of Delta (the originals' default
/// Delta, 32 times the average weight over the average degree, is 404 on the 1000^2 grid, whose
/// best width is 32-64), or wider where the ring would not cover every pending distance.
fn first_shift(delta: u64, max_weight: u64) -> u32 {
    let quarter = (63 - delta.max(1).leading_zeros()).saturating_sub(2);
    quarter.max(Wide::shift_for(max_weight, RING_MAX as u64))
}

/// The search from `ws.frontier` as a team of `run.exec`'s members, where it applies (packed
/// parents; for a static solve, no old tree and no guard): a static solve's (the source alone,
/// at distance 0, every other word unwritten) or a repair's (`REPAIR`). `None` (nothing done)
/// where it does not apply. Counters: `pushes` counts expansions, `iterations` the rounds.
pub(super) fn team_search<E: Exec, const REPAIR: bool>(
    run: &Run<'_, E>,
    ws: &Workspace,
    stats: &mut UpdateStats,
    push_budget: Option<i64>,
    track: bool,
) -> Option<Search> {
    let p = run.packing;
    if !p.packed_parents() || (!REPAIR && (run.old.is_some() || run.out.guard.is_some())) {
        return None;
    }
    let mut bins = ws.team_bins.lock();
    let (lo, hi) = frontier_span(run, ws);
    let wider = if REPAIR { 0 } else { bins.learned.wider(run.out.n, p.max_weight()) };
    let first = (first_shift(run.delta, p.max_weight()) + wider).min(62);
    // Pending distances lie within the largest weight of the bucket being expanded, or in the
    // frontier's span: (the larger of the two >> shift) + 2 bins.
    let spread = p.max_weight().max(hi.saturating_sub(lo));
    let shift = (first..63).find(|&s| (spread >> s) + 2 <= RING_MAX as u64)?;
    if REPAIR && 1u64 << shift > run.delta {
        return None; // buckets wider than near-far's window re-expand more than near-far
    }
    let wide = Wide::new(run.out.n, shift);
    let ring = ((spread >> shift) as usize + 2).next_power_of_two();
    let size = run.exec.members();
    bins.members.resize_with(size, Default::default);
    bins.published.resize_with(size, Default::default);
    for m in &bins.members {
        m.lock().0.reset(ring);
    }
    for b in &bins.published {
        b.write().clear();
    }
    for i in 0..ws.frontier.len() {
        let v = ws.frontier.get(i) as usize;
        let d = p.dist(ws.packed[v].load(Relaxed));
        bins.members[i % size].lock().0.push(wide.entry::<true>(v as u32, d), wide.bucket(d));
    }
    let shared = Shared {
        next: [AtomicU64::new(u64::MAX), AtomicU64::new(u64::MAX)],
        cursors: [AtomicUsize::new(0), AtomicUsize::new(0)],
        pushes: AtomicI64::new(0),
        rounds: AtomicI64::new(0),
        abandoned: AtomicBool::new(false),
    };
    let bins_ref: &TeamBins = &bins;
    let plan = Plan { wide, first: wide.bucket(lo), budget: push_budget.unwrap_or(i64::MAX), track };
    run.exec.team(false, |team| member::<E, REPAIR>(run, ws, team, bins_ref, &shared, &plan));
    let (pushes, rounds) = (shared.pushes.into_inner(), shared.rounds.into_inner());
    if !REPAIR {
        bins.learned = Learned::after(run.out.n, p.max_weight(), wider, pushes, rounds, &WIDENING);
    }
    stats.pushes += pushes;
    stats.iterations += rounds;
    Some(if shared.abandoned.into_inner() { Search::Abandoned } else { Search::Finished })
}

/// What the members share besides the workspace and the bins.
struct Shared {
    /// The next bucket, the least over the members' bins, alternating by round parity so that
    /// it is reset a round ahead without a barrier of its own.
    next: [AtomicU64; 2],
    /// Chunk cursors over the published bins, by round parity.
    cursors: [AtomicUsize; 2],
    /// Expansions so far, added by each member before a round's first barrier and read by all
    /// between its two.
    pushes: AtomicI64,
    rounds: AtomicI64,
    /// The expansions passed the budget.
    abandoned: AtomicBool,
}

/// What every member of a search is told.
struct Plan {
    wide: Wide,
    /// The bucket of the least distance queued.
    first: u64,
    /// Expansions after which a repair is abandoned.
    budget: i64,
    track: bool,
}

fn member<E: Exec, const REPAIR: bool>(run: &Run<'_, E>, ws: &Workspace, team: &Team<'_>, bins: &TeamBins, shared: &Shared, plan: &Plan) {
    let wide = plan.wide;
    let mut own = bins.members[team.tid].lock();
    let own = &mut own.0;
    let mut touched = (REPAIR && plan.track).then(|| Appender::new(&ws.candidates));
    let mut round = 0usize;
    let mut at = plan.first;
    // The read guards of the published bins, taken for each round's expansion.
    let mut views = Vec::with_capacity(bins.published.len());
    loop {
        let mut pushes = 0;
        // Expand the published bins of bucket `at` (none in the first round: every member
        // starts from its own).
        views.extend(bins.published.iter().map(|b| b.read()));
        let total: usize = views.iter().map(|v| v.len()).sum();
        let cursor = &shared.cursors[round % 2];
        while let Some(r) = team.claim(cursor, total, GRAIN) {
            let (mut i, mut k, mut base) = (r.start, 0, 0);
            while i < r.end {
                while i >= base + views[k].len() {
                    base += views[k].len();
                    k += 1;
                }
                let stop = r.end.min(base + views[k].len());
                pushes += expand::<E, REPAIR>(run, ws, own, wide, at, &views[k][i - base..stop - base], touched.as_mut());
                i = stop;
            }
        }
        views.clear();
        // Drain this member's own bin of the bucket while it stays small.
        loop {
            let len = own.queued(at);
            if len == 0 || len >= FUSE_BELOW {
                break;
            }
            let bin = own.take(at);
            pushes += expand::<E, REPAIR>(run, ws, own, wide, at, &bin, touched.as_mut());
            own.put(at, bin);
        }
        shared.pushes.fetch_add(pushes, Relaxed);
        let slot = &shared.next[round % 2];
        slot.fetch_min(own.next(at).unwrap_or(u64::MAX), Relaxed);
        if team.tid == 0 {
            shared.next[(round + 1) % 2].store(u64::MAX, Relaxed);
            shared.cursors[(round + 1) % 2].store(0, Relaxed);
        }
        team.sync();
        let next = slot.load(Relaxed);
        round += 1;
        // Every member reads the same sum here: the next additions follow the next barrier.
        let over = REPAIR && shared.pushes.load(Relaxed) > plan.budget;
        // Every member has finished reading the published bins: take back this member's, and
        // publish its bin of the next bucket.
        {
            let mut mine = bins.published[team.tid].write();
            own.put(at, std::mem::take(&mut *mine));
            if next != u64::MAX && !over {
                *mine = own.take(next);
            }
        }
        if next == u64::MAX || over {
            if over && team.tid == 0 {
                shared.abandoned.store(true, Relaxed);
            }
            break;
        }
        at = next;
        team.sync();
    }
    if team.tid == 0 {
        shared.rounds.store(round as i64, Relaxed);
    }
}

/// Expands the live entries of `entries` (queued in bucket `at`), queueing each vertex whose
/// distance it lowers in `own`; returns the expansions. A repair (`REPAIR`) reads the old tree's
/// words where none was written, skips the source and candidates past the packing's largest,
/// checks a caller's rows, and lists in `touched` every vertex it expands or gives a lower-id
/// parent at the same distance (which is not expanded again, so listed here).
#[inline(always)]
fn expand<E: Exec, const REPAIR: bool>(
    run: &Run<'_, E>,
    ws: &Workspace,
    own: &mut DialRing,
    wide: Wide,
    at: u64,
    entries: &[u32],
    mut touched: Option<&mut Appender<'_>>,
) -> i64 {
    let (p, out) = (run.packing, run.out);
    let bits = p.bits;
    let word = |v: usize| if REPAIR { run.word(ws, v) } else { ws.packed[v].load(Relaxed) };
    let mut pushes = 0;
    let end = entries.len();
    for (i, &e) in entries.iter().enumerate() {
        ask_expansion(&out, &ws.packed, |j| wide.vertex::<true>(entries[j]), i, end);
        let u = wide.vertex::<true>(e);
        let d = word(u) >> bits;
        if !wide.live::<true>(e, at, d) {
            continue;
        }
        pushes += 1;
        if let Some(t) = touched.as_deref_mut() {
            touch(run, ws, u, t);
        }
        let row = if REPAIR { out.row(u) } else { out.unchecked_row(u) };
        let parent = u as u64;
        for (&x, &w) in out.col[row.clone()].iter().zip(&out.w[row]) {
            let x = x as usize;
            let nd = d + w as u64;
            if REPAIR && (x == run.source || nd > p.max_candidate) {
                continue;
            }
            let cand = (nd << bits) | parent;
            if cand >= word(x) {
                continue;
            }
            let old = run.exec.fetch_min(&ws.packed[x], cand);
            let old = if REPAIR { run.loaded(old, x) } else { old };
            if nd < old >> bits {
                own.push(wide.entry::<true>(x as u32, nd), wide.bucket(nd));
            } else if cand < old {
                if let Some(t) = touched.as_deref_mut() {
                    touch(run, ws, x, t);
                }
            }
        }
    }
    pushes
}

#[cfg(test)]
mod tests {
    use crate::graph::dijkstra::dijkstra;
    use crate::io::generators::graphgen::grid;
    use crate::{Csr, Graph, Resources, SsspOptions, SsspResult, WeightLayout};

    fn scaled(side: usize, wmax: i32, scale: i32) -> Graph {
        crate::sssp::dial::tests::scaled(side, wmax, scale, 5)
    }

    /// At 2 and 3 threads a team's static solve gives Dijkstra's tree, on its first solve of a
    /// graph and on the next (widened) one: weights of 1 to 3 (many ties: the lowest-id parent
    /// must win), 1 to 100, and scaled ones whose buckets span millions of distances, so that
    /// the 250^2 grid's entries keep only the high bits of their place (16 id bits).
    #[test]
    fn a_team_static_solve_is_dijkstras_tree() {
        let cases = [(70, 3, 1, 0), (70, 100, 1, 2345), (80, 60, 35_000_000, 17), (250, 60, 35_000_000, 7)];
        for threads in [2, 3] {
            let res = Resources::parallel(threads).unwrap();
            res.team_choice().force(Some(false));
            for (side, wmax, scale, source) in cases {
                let g = scaled(side, wmax, scale);
                let (d, p) = dijkstra(&g, 0, source);
                for solve in 0..2 {
                    let r = SsspResult::compute(&res, &g, source, 0, &SsspOptions::default()).unwrap();
                    let case = format!("{threads} threads, side {side}, weights up to {wmax} x {scale}, solve {solve}");
                    assert_eq!((r.distances(), r.parents()), (&d[..], &p[..]), "{case}");
                    assert_eq!(r.stats().epochs, 0, "{case}: the team's bins, not near-far");
                    assert!(r.stats().pushes >= (side * side) as i64, "{case}");
                }
            }
        }
    }

    /// At 2 and 3 threads a team's repairs give Dijkstra's trees through a stream of batches
    /// (insertions, deletions, local and spread ones), weights with many ties and wide ones, and
    /// run on the bins (near-far would count epochs).
    #[test]
    fn a_team_repair_is_dijkstras_tree() {
        use crate::io::generators::changegen::{generate_changes, ChangeOptions};
        use crate::Fallback;
        for threads in [2, 3] {
            let res = Resources::parallel(threads).unwrap();
            res.team_choice().force(Some(false));
            for (side, wmax, scale) in [(70, 3, 1), (80, 100, 1), (80, 60, 1000)] {
                let mut g = scaled(side, wmax, scale);
                let never = SsspOptions { fallback: Fallback::Never, ..Default::default() };
                let mut r = SsspResult::compute(&res, &g, 3, 0, &never).unwrap();
                let mut epochs = 0;
                for step in 0..8u32 {
                    let opt = ChangeOptions { changes: [20, 200, 2000][step as usize % 3], seed: 70 + step, local_hops: if step % 2 == 0 { 5 } else { 0 }, source: 3, ..Default::default() };
                    let (batch, _) = generate_changes(&g.to_csr(), &opt).unwrap();
                    epochs += crate::update_one(&res, &mut g, &batch.view(), &mut r).unwrap().epochs;
                    let (d, p) = dijkstra(&g, 0, 3);
                    assert_eq!((r.distances(), r.parents()), (&d[..], &p[..]), "{threads} threads, side {side}, weights up to {wmax} x {scale}, step {step}");
                }
                assert_eq!(epochs, 0, "{threads} threads, side {side}: the bins, not near-far");
            }
        }
    }

    /// A graph whose rounds are sparse takes wider buckets on its next solve, and finds the same
    /// tree, but keeps at least 64 rounds: the 10 x 1000 grid with weights up to 100 expands
    /// about 13 entries a round in buckets of 64 distances, over some 780 rounds; the 70^2 grid
    /// has 49 rounds there, and is not widened.
    #[test]
    fn sparse_rounds_are_taken_wider_on_the_next_solve() {
        let res = Resources::parallel(2).unwrap();
        res.team_choice().force(Some(false));
        for (w, h) in [(10, 1000), (70, 70)] {
            let t = grid(w, h, 1, 1, 100, 5).unwrap();
            let g = Graph::new(Csr::from_arrays(t.n, 1, t.row_ptr, t.col_ind, &t.weights, WeightLayout::EdgeMajor).unwrap());
            let (d, p) = dijkstra(&g, 0, 0);
            let rounds: Vec<i64> = (0..3)
                .map(|_| {
                    let r = SsspResult::compute(&res, &g, 0, 0, &SsspOptions::default()).unwrap();
                    assert_eq!((r.distances(), r.parents()), (&d[..], &p[..]));
                    r.stats().iterations
                })
                .collect();
            if w == 10 {
                assert!(rounds[0] > 500 && rounds[1..].iter().all(|&r| r * 4 < rounds[0] && r >= 64), "{rounds:?}");
            } else {
                assert!(rounds[0] < 64 && rounds[1..].iter().all(|&r| r * 2 > rounds[0]), "{rounds:?}");
            }
        }
    }

    /// Vertices the source does not reach stay unreached: two grids side by side, no edge
    /// between them.
    #[test]
    fn unreachable_vertices_stay_unreached_by_a_team() {
        let t = grid(70, 70, 1, 1, 100, 9).unwrap();
        let n = t.n;
        let (mut rp, mut ci, mut w) = (t.row_ptr.clone(), t.col_ind.clone(), t.weights.clone());
        let m = *rp.last().unwrap();
        rp.extend(t.row_ptr[1..].iter().map(|&x| x + m));
        ci.extend(t.col_ind.iter().map(|&x| x + n as i32));
        w.extend(&t.weights);
        let g = Graph::new(Csr::from_arrays(2 * n, 1, rp, ci, &w, WeightLayout::EdgeMajor).unwrap());
        let res = Resources::parallel(2).unwrap();
        res.team_choice().force(Some(false));
        let r = SsspResult::compute(&res, &g, 5, 0, &SsspOptions::default()).unwrap();
        let (d, p) = dijkstra(&g, 0, 5);
        assert_eq!((r.distances(), r.parents()), (&d[..], &p[..]));
        assert!(r.parents()[n..].iter().all(|&p| p == -1));
        assert!(r.distances()[n..].iter().all(|&d| !crate::distance::is_finite(d)));
    }
}
