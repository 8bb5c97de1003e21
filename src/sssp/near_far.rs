//! The near-far (Delta-stepping) search of the engine, on one member or as a team, and where
//! the others apply instead: the one-member bucket queues (`dial.rs` for static solves,
//! `buckets.rs`) and a team's bins (`binned.rs`).

use super::binned::team_search;
use super::buckets::{bucket_search, ring_size};
use super::dial::{plain_search, repair_search};
use super::run::{touch, Generations, Run, GRAIN_LIST, GRAIN_VERTICES};
use super::exec::{Exec, Team};
use super::packing::PACKED_INF;
use super::prefetch::ask_expansion;
use crate::stats::UpdateStats;
use crate::resources::team_choice::SearchKind;
use super::workspace::{Appender, VertexList, Workspace};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};

/// The smallest finite distance over a list's words (`None` if all are INF or the list is empty).
fn min_distance<E: Exec>(run: &Run<'_, E>, ws: &Workspace, list: &VertexList) -> Option<u64> {
    let m = run.exec.min_over(list.len(), |i| ws.packed[list.get(i) as usize].load(Relaxed));
    (m != PACKED_INF).then(|| run.packing.dist(m))
}

/// How a near-far search ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Search {
    Finished,
    /// Stopped when its expansions exceeded the budget; the far flags are cleared again.
    Abandoned,
}

/// The search from the frontier, on one member or as a team (`Exec::solo`, unless `chosen` says
/// how: a repair chooses before its other loops), timed for that choice when it finishes.
/// `kind`: what the search is; a repair is measured by the vertices it touched, which are listed
/// only when `track`.
#[allow(clippy::too_many_arguments)]
pub(super) fn near_far<E: Exec>(
    run: &Run<'_, E>,
    ws: &Workspace,
    gens: &mut Generations,
    stats: &mut UpdateStats,
    push_budget: Option<i64>,
    track: bool,
    kind: SearchKind,
    chosen: Option<bool>,
) -> Search {
    if ws.frontier.is_empty() {
        return Search::Finished;
    }
    let (n, m) = (run.out.n(), run.out.edges);
    let solo = chosen.unwrap_or_else(|| run.exec.solo(kind, n, m, None));
    let clock = std::time::Instant::now();
    let end = search(run, ws, gens, stats, push_budget, track, solo, kind);
    let work = match kind {
        SearchKind::Static => Some(n),
        SearchKind::Repair => track.then(|| ws.candidates.len()),
    };
    if let (Search::Finished, Some(work)) = (end, work) {
        run.exec.searched(kind, n, m, solo, clock.elapsed().as_nanos() as u64, work);
    }
    end
}

/// Delta-stepping with a near frontier and a far pile (reference-behaviour §3.8), or, for a
/// non-reference executor, the bucket queue (`buckets.rs`) on one member or the bins
/// (`binned.rs`) as a team, where they apply.
///
/// Run by a team: every member executes the same control flow on the same shared list lengths
/// (read after a barrier), so all agree on thresholds, generations and counters; work inside a
/// phase is shared by claiming chunks of the list. With one member the phases run in list order,
/// exactly the original single-threaded schedule.
#[allow(clippy::too_many_arguments)]
fn search<E: Exec>(
    run: &Run<'_, E>,
    ws: &Workspace,
    gens: &mut Generations,
    stats: &mut UpdateStats,
    push_budget: Option<i64>,
    track: bool,
    solo: bool,
    kind: SearchKind,
) -> Search {
    let n = run.out.n();
    let mut push_budget = push_budget;
    if solo && run.exec.bucket_queue() {
        let plain = match kind {
            SearchKind::Static => plain_search(run, ws, stats),
            // A repair on the ring where the chained blocks' queue would run: not where its words
            // are loaded when met and listed when written (`track`), which that queue does.
            SearchKind::Repair if !track && ring_size(n).is_some() => repair_search(run, ws, stats, push_budget),
            SearchKind::Repair => None,
        };
        if let Some(end) = plain {
            return end;
        }
        if let Some(b) = ring_size(n) {
            let before = stats.pushes;
            if let Some(end) = bucket_search(run, ws, b, gens, stats, push_budget, track) {
                return end;
            }
            // Near-far finishes from the queued vertices, within what is left of the budget.
            push_budget = push_budget.map(|p| p - (stats.pushes - before));
        }
    } else if !solo && run.exec.bucket_queue() {
        let end = match kind {
            SearchKind::Static => team_search::<E, false>(run, ws, stats, push_budget, track),
            SearchKind::Repair => team_search::<E, true>(run, ws, stats, push_budget, track),
        };
        if let Some(end) = end {
            return end;
        }
    }
    let threshold = min_distance(run, ws, &ws.frontier).unwrap_or(0).saturating_add(run.delta);
    let g = gens.next(ws);
    // The far piles overwrite the bucket queue's bitmap.
    ws.ring_clear.store(0, Relaxed);
    ws.near_a.clear();
    ws.near_b.clear();
    ws.far.clear();
    ws.far2.clear();
    split(run, ws, &ws.frontier, threshold, g, &ws.near_a, &ws.far, None);
    let shared = TeamShared {
        cursors: [AtomicUsize::new(0), AtomicUsize::new(0), AtomicUsize::new(0)],
        minimum: [AtomicU64::new(PACKED_INF), AtomicU64::new(PACKED_INF)],
        outcome: parking_lot::Mutex::new(None),
        solo: parking_lot::Mutex::new(None),
    };
    let start = TeamState {
        threshold,
        generation: g,
        iterations: 0,
        epochs: 0,
        pushes: 0,
        budget: push_budget.unwrap_or(i64::MAX),
        abandoned: false,
        far_is_second: false,
        near_len: ws.near_a.len(),
    };
    run.exec.team(solo, |team| team_near_far(run, ws, team, &shared, start, track));
    let end = shared
        .outcome
        .into_inner()
        .expect("member 0 of every team publishes the outcome");
    stats.iterations += end.iterations;
    stats.epochs += end.epochs;
    stats.pushes += end.pushes;
    gens.0 = end.generation;
    if !end.abandoned {
        return Search::Finished;
    }
    // Every flagged vertex is in the far pile exactly once: clearing them restores the invariant
    // that the flags are all zero between searches.
    let far = if end.far_is_second { &ws.far2 } else { &ws.far };
    for i in 0..far.len() {
        ws.in_far[far.get(i) as usize].store(0, Relaxed);
    }
    Search::Abandoned
}

/// What the members of a near-far team share besides the workspace.
struct TeamShared {
    /// Chunk cursors, used round-robin by the phases: the one a phase will use next is reset two
    /// phases after its last use, so no barrier is needed just to reset it.
    cursors: [AtomicUsize; 3],
    /// Minimum word over the far pile, alternating by epoch parity for the same reason.
    minimum: [AtomicU64; 2],
    /// Counters and generation published by member 0.
    outcome: parking_lot::Mutex<Option<TeamState>>,
    /// The state after member 0's solo rounds, and whether `near_a` is then the near list.
    solo: parking_lot::Mutex<Option<(TeamState, bool)>>,
}

/// Near lists shorter than this are relaxed by member 0 alone, round after round without
/// barriers, while the other members wait at one: two barriers per round cost more than a short
/// round.
const SOLO_BELOW: usize = 4 * GRAIN_LIST;

/// Member 0's rounds while the near list stays below [`SOLO_BELOW`] (and is not empty): the team
/// loop's round, on one member; `near` and `next` end swapped as many times as it ran rounds.
#[allow(clippy::too_many_arguments)]
fn solo_rounds<'w, E: Exec>(
    run: &Run<'_, E>,
    ws: &'w Workspace,
    st: &mut TeamState,
    near: &mut &'w VertexList,
    next: &mut &'w VertexList,
    far: &'w VertexList,
    track: bool,
) {
    while st.near_len > 0 && st.near_len < SOLO_BELOW {
        if !st.start_round(near.len()) {
            return;
        }
        st.generation = Generations(st.generation).next(ws);
        {
            let mut next_app = Appender::new(next);
            let mut far_app = Appender::new(far);
            let mut touched = track.then(|| Appender::new(&ws.candidates));
            relax_range(run, ws, near, 0..near.len(), &mut next_app, &mut far_app, touched.as_mut(), st.threshold, st.generation);
        }
        std::mem::swap(near, next);
        next.clear();
        st.near_len = near.len();
    }
}

/// The control state every member keeps identically.
#[derive(Clone, Copy)]
struct TeamState {
    threshold: u64,
    generation: i32,
    iterations: i64,
    epochs: i64,
    pushes: i64,
    /// Expansions after which the search is abandoned.
    budget: i64,
    abandoned: bool,
    /// Which workspace list holds the far pile at the end (they swap every epoch).
    far_is_second: bool,
    /// The near list's length, read where no member can be changing it (between two barriers):
    /// member 0 may start solo rounds as soon as it leaves a barrier.
    near_len: usize,
}

impl TeamState {
    /// Counts a round over `len` near vertices; false, and abandoned, once the expansions have
    /// passed the budget.
    fn start_round(&mut self, len: usize) -> bool {
        if self.pushes > self.budget {
            self.abandoned = true;
            return false;
        }
        self.iterations += 1;
        self.pushes += len as i64;
        true
    }
}

/// With `track`, every vertex whose word the search lowers is flagged touched and listed in
/// `candidates` (the write-back list of a trusted update).
fn team_near_far<E: Exec>(run: &Run<'_, E>, ws: &Workspace, team: &Team<'_>, shared: &TeamShared, mut st: TeamState, track: bool) {
    let (mut near, mut next) = (&ws.near_a, &ws.near_b);
    let (mut far, mut far2) = (&ws.far, &ws.far2);
    let mut phase = 0usize;
    // Every phase: claim chunks from its cursor; member 0 resets the cursor of the phase after next.
    let end_phase = |phase: &mut usize| {
        if team.tid == 0 {
            shared.cursors[(*phase + 1) % 3].store(0, Relaxed);
        }
        *phase += 1;
        team.sync();
    };
    'search: loop {
        while st.near_len > 0 {
            if !team.is_alone() && st.near_len < SOLO_BELOW {
                // Nobody else touches the lists or the state until the barrier; member 0
                // publishes what it did, which the others read before the next barrier (the next
                // solo episode comes at least one barrier later).
                if team.tid == 0 {
                    solo_rounds(run, ws, &mut st, &mut near, &mut next, far, track);
                    *shared.solo.lock() = Some((st, std::ptr::eq(near, &ws.near_a)));
                }
                team.sync();
                if team.tid != 0 {
                    let (state, near_is_a) = shared.solo.lock().expect("member 0 published its solo rounds");
                    st = state;
                    (near, next) = if near_is_a { (&ws.near_a, &ws.near_b) } else { (&ws.near_b, &ws.near_a) };
                }
                if st.abandoned {
                    break 'search;
                }
                continue;
            }
            if !st.start_round(near.len()) {
                break 'search;
            }
            st.generation = next_generation_in_team(ws, team, st.generation);
            {
                let mut next_app = Appender::new(next);
                let mut far_app = Appender::new(far);
                let mut touched = track.then(|| Appender::new(&ws.candidates));
                while let Some(r) = team.claim(&shared.cursors[phase % 3], near.len(), GRAIN_LIST) {
                    relax_range(run, ws, near, r, &mut next_app, &mut far_app, touched.as_mut(), st.threshold, st.generation);
                }
            }
            end_phase(&mut phase);
            std::mem::swap(&mut near, &mut next);
            st.near_len = near.len();
            // The old near list is read by nobody now; it becomes the next round's output.
            if team.tid == 0 {
                next.clear();
            }
            team.sync();
        }
        if far.is_empty() {
            break;
        }
        st.epochs += 1;
        let slot = &shared.minimum[st.epochs as usize % 2];
        let mut local = PACKED_INF;
        while let Some(r) = team.claim(&shared.cursors[phase % 3], far.len(), GRAIN_VERTICES) {
            for i in r {
                local = local.min(ws.packed[far.get(i) as usize].load(Relaxed));
            }
        }
        slot.fetch_min(local, Relaxed);
        if team.tid == 0 {
            shared.minimum[(st.epochs as usize + 1) % 2].store(PACKED_INF, Relaxed);
        }
        end_phase(&mut phase);
        let m = slot.load(Relaxed);
        let far_min = if m == PACKED_INF { 0 } else { run.packing.dist(m) };
        st.threshold = st.threshold.max(far_min).saturating_add(run.delta);
        st.generation = next_generation_in_team(ws, team, st.generation);
        {
            let mut near_app = Appender::new(near);
            let mut far_app = Appender::new(far2);
            while let Some(r) = team.claim(&shared.cursors[phase % 3], far.len(), GRAIN_VERTICES) {
                split_range(run, ws, far, r, &mut near_app, &mut far_app, st.threshold, st.generation, true);
            }
        }
        end_phase(&mut phase);
        st.near_len = near.len();
        std::mem::swap(&mut far, &mut far2);
        st.far_is_second = !st.far_is_second;
        if team.tid == 0 {
            far2.clear();
        }
        team.sync();
    }
    if team.tid == 0 {
        *shared.outcome.lock() = Some(st);
    }
}

/// The next stamp generation, identical in every member; on overflow the stamps are reset by
/// member 0 between two barriers.
fn next_generation_in_team(ws: &Workspace, team: &Team<'_>, g: i32) -> i32 {
    if g != i32::MAX {
        return g + 1;
    }
    team.sync();
    if team.tid == 0 {
        for s in &ws.stamp {
            s.store(0, Relaxed);
        }
    }
    team.sync();
    1
}

/// Splits `list` into `near` (distance below the threshold, claimed) and the far pile.
#[allow(clippy::too_many_arguments)]
fn split<E: Exec>(
    run: &Run<'_, E>,
    ws: &Workspace,
    list: &VertexList,
    threshold: u64,
    g: i32,
    near: &VertexList,
    far_out: &VertexList,
    refile: Option<()>,
) {
    run.exec.for_chunks(list.len(), GRAIN_VERTICES, |r| {
        let mut near_app = Appender::new(near);
        let mut far_app = Appender::new(far_out);
        split_range(run, ws, list, r, &mut near_app, &mut far_app, threshold, g, refile.is_some());
    });
}

/// Splits entries `r` of `list`: below the threshold to `near` (claimed), else to the far pile.
/// For the far re-split (`refile`), vertices already flagged stay far without touching the flag.
#[allow(clippy::too_many_arguments)]
#[inline]
fn split_range<E: Exec>(
    run: &Run<'_, E>,
    ws: &Workspace,
    list: &VertexList,
    r: std::ops::Range<usize>,
    near: &mut Appender<'_>,
    far: &mut Appender<'_>,
    threshold: u64,
    g: i32,
    refile: bool,
) {
    let p = run.packing;
    for i in r {
        let v = list.get(i) as usize;
        let d = p.dist(ws.packed[v].load(Relaxed));
        if d < threshold {
            if refile {
                ws.in_far[v].store(0, Relaxed);
            }
            if run.exec.claim(&ws.stamp[v], g) {
                near.push(v as i32);
            }
        } else if refile || run.exec.set_flag(&ws.in_far[v]) == 0 {
            far.push(v as i32);
        }
    }
}

/// Expands entries `r` of the near list: relaxes their out-edges; strict improvements below the
/// threshold go to `next`, others to the far pile. With `touched`, a word lowered without a
/// distance decrease (a lower-id parent at the same distance) is listed there: such a vertex is
/// never expanded, so nothing else would list it for the write-back.
#[allow(clippy::too_many_arguments)]
#[inline]
fn relax_range<E: Exec>(
    run: &Run<'_, E>,
    ws: &Workspace,
    near: &VertexList,
    r: std::ops::Range<usize>,
    next: &mut Appender<'_>,
    far: &mut Appender<'_>,
    mut touched: Option<&mut Appender<'_>>,
    threshold: u64,
    g: i32,
) {
    let p = run.packing;
    let out = run.out;
    let source = run.source;
    let end = r.end;
    for i in r {
        ask_expansion(&out, &ws.packed, |j| near.get(j) as usize, i, end);
        let u = near.get(i) as usize;
        let wu = ws.packed[u].load(Relaxed);
        if wu == PACKED_INF {
            continue;
        }
        if let Some(t) = touched.as_deref_mut() {
            touch(run, ws, u, t);
        }
        let du = p.dist(wu);
        let row = out.row(u);
        // Zipped row slices: one bounds check per row instead of two per edge.
        for (&x, &w) in out.col[row.clone()].iter().zip(&out.w[row]) {
            let x = x as usize;
            if x == source {
                continue;
            }
            let nd = du + w as u64;
            if nd > p.max_candidate {
                continue;
            }
            let cand = p.pack(nd, u as i32);
            if cand >= run.word(ws, x) {
                continue;
            }
            let old = run.loaded(run.exec.fetch_min(&ws.packed[x], cand), x);
            if nd < p.dist(old) {
                if nd < threshold {
                    if run.exec.claim(&ws.stamp[x], g) {
                        next.push(x as i32);
                    }
                } else if run.exec.set_flag(&ws.in_far[x]) == 0 {
                    far.push(x as i32);
                }
            } else if cand < old {
                if let Some(t) = touched.as_deref_mut() {
                    touch(run, ws, x, t);
                }
            }
        }
    }
}
