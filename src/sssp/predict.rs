//! The adaptive update's prediction: before any walk of the tree, a sample of the reachable
//! vertices estimates the share a repair would have to search, so that a batch that reroutes
//! most of the tree is recomputed at once and pays almost nothing for the decision.
//!
//! A vertex must be searched when its old tree path passes an invalidation root (the head of a
//! changed tree edge) or an insertion head whose distance the insertion strictly lowers (every
//! old descendant of such a head gets shorter by as much). The roots and improving heads are
//! marked in the stamps, then up to [`PREDICT_SAMPLES`] reachable vertices walk up their old tree
//! paths (see [`sample`]).
//!
//! Marking costs one random access per change, sampling a few thousand path steps. For a batch
//! with many changes per vertex the marking dominates (on bremen a 50K-change batch's marking is
//! a quarter of a static solve), so such a batch is first judged on an evenly
//! strided subset of its changes: the vertices below a subset's roots and heads are a subset of
//! those below all of them, so a subset that already reaches the share decides for the whole
//! batch. Only a batch that the subset does not decide is marked in full and sampled again.

use super::run::{is_finite, lowers, Changes, Generations};
use super::prefetch::{prefetch_at, AHEAD};
use super::workspace::{Appender, Workspace};
use std::sync::atomic::Ordering::Relaxed;

/// Reachable vertices sampled by `predict_affected`.
pub(super) const PREDICT_SAMPLES: usize = 64;

/// A batch with more than `n / SUBSET_FROM` changes is first judged on `n / SUBSET_OF` of them:
/// below that, marking costs under 2.5 % of a static solve (6 ns per change against 25-95 ns per
/// vertex on the bench's graphs), and a subset is not worth its second sample.
const SUBSET_FROM: usize = 8;
const SUBSET_OF: usize = 32;

/// What `predict_affected` sampled.
#[derive(Clone, Copy, Debug)]
pub(super) struct Prediction {
    /// Share of the sampled reachable vertices under an invalidation root or an improving
    /// insertion head of the changes examined.
    pub affected: f64,
    /// Estimated number of invalidated vertices (under a root of the changes examined: a lower
    /// bound of the sample's estimate when a subset decided; the distinct roots, a lower bound
    /// too, when the shortcut rule decided before any sample).
    pub invalidated: i64,
    /// Estimated number of vertices a repair searches (under a root or an improving head of the
    /// changes examined), where the sample was informative.
    pub searched: Option<usize>,
    /// Insertion heads whose distance the insertion strictly lowers (exact when every change was
    /// examined and `enough` is false).
    pub improving_heads: usize,
    /// The distinct roots and improving heads alone reached the recompute threshold.
    pub enough: bool,
    /// Enough vertices were sampled for `affected` to mean anything.
    pub informative: bool,
    /// Changes (changed edges plus insertions) marked for the verdict (read by the tests, which
    /// check which stage decided).
    #[cfg_attr(not(test), allow(dead_code))]
    pub examined: usize,
    /// Reachable vertices sampled (read by the tests).
    #[cfg_attr(not(test), allow(dead_code))]
    pub sampled: usize,
    /// The shortcut rule holds (checked when the sample alone does not decide).
    pub shortcut: bool,
    /// `candidates` lists the distinct invalidation roots of every changed edge, in the order of
    /// their first change: the list the invalidation walk starts from, made by the marking of
    /// all changes (a subset's marking lists nothing).
    pub roots_listed: bool,
    /// Changes marked and tree vertices the sample's walks stamped, over every judgement.
    pub visited: usize,
}

impl Prediction {
    /// Whether the prediction alone tells the update to recompute.
    pub fn recompute(&self, share: f64) -> bool {
        self.enough || self.shortcut || (self.informative && self.affected >= share)
    }
}

/// What `predict_affected` is asked about: a batch, the old tree it changes, and the policy.
pub(super) struct Question<'a> {
    pub ws: &'a Workspace,
    pub changes: &'a Changes<'a>,
    pub source: usize,
    pub dist: &'a [i64],
    pub parent: &'a [i32],
    /// The policy's candidate threshold. Every root and improving head is a candidate of the
    /// repair itself, so once the distinct ones reach it the decision is made and the remaining
    /// changes are skipped.
    pub enough: usize,
    /// The policy's share of the vertices from which to recompute.
    pub share: f64,
    /// The shortcut rule's share of the largest old distance, if the policy has the rule.
    pub shortcut: Option<f64>,
    /// The largest finite old distance (asked for only when an insertion shortens a distance).
    pub largest: &'a dyn Fn() -> i64,
    /// `largest` is known already and costs nothing (see `judge`).
    pub largest_known: bool,
}

/// Predicts the share of the reachable vertices a repair must search (see the module comment).
pub(super) fn predict_affected(q: &Question<'_>, gens: &mut Generations) -> Prediction {
    let n = q.dist.len();
    let changes = q.changes.from.len() + q.changes.heads.len();
    let subset = (n / SUBSET_OF).max(1);
    let mut visited = 0;
    if changes > n / SUBSET_FROM && changes > subset {
        let p = judge(q, gens, changes.div_ceil(subset), PREDICT_SAMPLES / 2);
        if p.recompute(q.share) {
            return p;
        }
        visited = p.visited;
    }
    let p = judge(q, gens, 1, PREDICT_SAMPLES);
    Prediction { visited: visited + p.visited, ..p }
}

/// Marks every `stride`-th change and samples up to `samples` reachable vertices (a subset takes
/// half of them: on the bench's graphs every subset that decided had at least 21 of its first 32
/// samples affected, while one that does not decide costs its repair a second sample).
fn judge(q: &Question<'_>, gens: &mut Generations, stride: usize, samples: usize) -> Prediction {
    let n = q.dist.len();
    let marks = Verdicts::new(q.ws, gens, q.source);
    let m = mark(q, [marks.0[3], marks.0[4], marks.0[5]], stride);
    // With the largest distance known, the shortcut rule costs a pass over the insertions and a
    // walk up from a tail or two, far less than the sample's walks, and a
    // batch it decides needs no sample (the bench's 100-change fallbacks on usroads and bremen
    // are all shortcuts): it goes first. Otherwise the sample goes first, as the largest
    // distance the sample meets may spare the rule its pass over every distance.
    let shortcut_first = stride == 1 && q.largest_known;
    if let (true, Some(share)) = (shortcut_first, q.shortcut) {
        if is_shortcut(q, &marks, share, 0) {
            return Prediction {
                affected: 0.0,
                invalidated: m.distinct_roots as i64,
                searched: None,
                improving_heads: m.improving_heads,
                enough: false,
                informative: false,
                examined: m.examined,
                sampled: 0,
                shortcut: true,
                roots_listed: m.roots_listed,
                visited: m.examined,
            };
        }
    }
    let need = (q.share * PREDICT_SAMPLES as f64).ceil() as usize;
    let s = sample(q, &marks, need, samples);
    // Too few samples (most vertices unreachable, or a tree so deep that the walks hit the step
    // bound first) predict nothing: the exact walk decides. Not even `enough` decides then: the
    // heads counted so far, with the exact walk's count of invalidated vertices (the distinct
    // roots at least), still reach the threshold.
    let informative = s.reachable >= PREDICT_SAMPLES / 4;
    let mut p = Prediction {
        affected: if informative { s.affected as f64 / s.reachable as f64 } else { 0.0 },
        invalidated: if informative { (s.rooted as f64 / s.probes as f64 * n as f64).round() as i64 } else { 0 },
        searched: informative.then(|| (s.affected as f64 / s.probes as f64 * n as f64).round() as usize),
        improving_heads: m.improving_heads,
        enough: informative && m.reached,
        informative,
        examined: m.examined,
        sampled: s.reachable,
        shortcut: false,
        roots_listed: m.roots_listed,
        visited: m.examined + s.steps,
    };
    if let (1, Some(share), false, false) = (stride, q.shortcut, shortcut_first, p.recompute(q.share)) {
        p.shortcut = is_shortcut(q, &marks, share, s.deepest);
    }
    p
}

struct Marked {
    distinct_roots: usize,
    roots_listed: bool,
    improving_heads: usize,
    reached: bool,
    examined: usize,
}

/// Pre-marks the roots and improving insertion heads among every `stride`-th change in their
/// stamps (`pre`: root, head, both). The roots are all marked (for the sample's estimate of
/// `invalidated`); the heads only until the distinct roots and improving heads reach `enough`.
/// With every change examined (`stride` 1) the distinct roots are also listed in `candidates`,
/// so that a repair's invalidation walk starts from them without a second pass over the changed
/// edges.
fn mark(q: &Question<'_>, pre: [i32; 3], stride: usize) -> Marked {
    let Question { ws, changes: c, dist, parent, enough, .. } = *q;
    let [pre_root, pre_head, pre_both] = pre;
    let mut distinct_roots = 0;
    let mut examined = 0;
    // Ranges, not zipped slices, are strided: `step_by` over a `Zip` walks element by element,
    // which cost several times the whole marking.
    let to = &c.to[..c.from.len()];
    ws.candidates.clear();
    let mut listed = (stride == 1).then(|| Appender::new(&ws.candidates));
    for i in (0..c.from.len()).step_by(stride) {
        let ahead = i + AHEAD * stride;
        prefetch_at(parent, to, ahead);
        prefetch_at(&ws.stamp, to, ahead);
        let (from, to) = (c.from[i], to[i]);
        examined += 1;
        if parent[to as usize] != from {
            continue;
        }
        let stamp = &ws.stamp[to as usize];
        if stamp.load(Relaxed) != pre_root {
            stamp.store(pre_root, Relaxed);
            distinct_roots += 1;
            if let Some(l) = listed.as_mut() {
                l.push(to);
            }
        }
    }
    drop(listed);
    let mut improving_heads = 0;
    let mut reached = distinct_roots >= enough;
    if let (Some(ins), false) = (c.inserted, reached) {
        let heads = &c.heads[..ins.from.len()];
        for i in (0..ins.from.len()).step_by(stride) {
            let (u, v) = (ins.from[i], heads[i]);
            if distinct_roots + improving_heads >= enough {
                reached = true;
                break;
            }
            examined += 1;
            let ahead = i + AHEAD * stride;
            prefetch_at(dist, ins.from, ahead);
            prefetch_at(dist, heads, ahead);
            prefetch_at(&ws.stamp, heads, ahead);
            let (du, dv) = (dist[u as usize], dist[v as usize]);
            if lowers(du, ins.weight(i), dv) {
                let stamp = &ws.stamp[v as usize];
                let s = stamp.load(Relaxed);
                if s != pre_head && s != pre_both {
                    improving_heads += 1;
                    stamp.store(if s == pre_root { pre_both } else { pre_head }, Relaxed);
                }
            }
        }
    }
    Marked { distinct_roots, roots_listed: stride == 1, improving_heads, reached, examined }
}

struct Sampled {
    probes: usize,
    reachable: usize,
    rooted: usize,
    affected: usize,
    /// The largest distance of a sampled vertex.
    deepest: i64,
    /// Vertices the walks stamped.
    steps: usize,
}

/// Walks the sample climbs at once. A walk is a chain of dependent loads (each parent read
/// gives the next address), one cache miss per step on a cold tree; independent walks stepped
/// in turn let the CPU overlap their misses.
const LANES: usize = 8;

/// Up to `samples` reachable vertices, spread over the ids by a multiplicative hash, walk
/// up the old tree to the source, a vertex an earlier sample resolved or the first root; the
/// path is then resolved (below a root, else below a head or not) and stamped with one of the
/// verdicts `marks[0..3]`, so later samples stop where earlier ones passed and each vertex is
/// resolved at most once, reading two arrays per step. A walk ends at the first root it meets:
/// below a root a vertex is invalidated and must be searched whatever lies above. Cost: the
/// union of the sampled paths, a few thousand vertices on the bench's graphs; sampling stops once the walks have passed n/16 vertices, and once half the samples
/// are taken and `need` of them are affected: the share over all of them would reach
/// `need / PREDICT_SAMPLES` whatever the rest found.
///
/// The walks climb [`LANES`] at a time (`Verdicts::climb`, which writes nothing), then settle
/// one by one in probe order (`Verdicts::settle`), so every count and stopping rule is that of
/// walking them one after the other.
fn sample(q: &Question<'_>, marks: &Verdicts, need: usize, samples: usize) -> Sampled {
    let n = q.dist.len();
    let (mut probes, mut reachable, mut rooted, mut affected, mut steps) = (0usize, 0usize, 0usize, 0usize, 0usize);
    let mut deepest = 0;
    // The next reachable probes and their climbs, made together; `next` is the one `v` is.
    let (mut starts, mut climbs) = ([0usize; LANES], [Climb::default(); LANES]);
    let (mut next, mut filled) = (0, 0);
    while reachable < samples && probes < 4 * samples && steps <= n / 16 {
        if affected >= need && reachable >= PREDICT_SAMPLES / 2 {
            break;
        }
        let v = probe(probes, n);
        probes += 1;
        if !is_finite(q.dist[v]) {
            continue;
        }
        reachable += 1;
        deepest = deepest.max(q.dist[v]);
        if next == filled {
            // `v` and the reachable probes after it, no more than the samples left.
            starts[0] = v;
            let (mut k, mut ahead) = (1, probes);
            while k < LANES && reachable + k <= samples && ahead < 4 * samples {
                let u = probe(ahead, n);
                ahead += 1;
                if is_finite(q.dist[u]) {
                    starts[k] = u;
                    k += 1;
                }
            }
            marks.climb(q, &starts[..k], &mut climbs[..k]);
            (next, filled) = (0, k);
        }
        debug_assert_eq!(starts[next], v);
        let climb = climbs[next];
        next += 1;
        steps += marks.settle(q, v, climb);
        let verdict = climb.verdict();
        rooted += verdict >> 1;
        affected += (verdict != 0) as usize;
    }
    Sampled { probes, reachable, rooted, affected, deepest, steps }
}

/// The `i`-th probe of `n` ids. The golden-ratio sequence frac(i * phi), scaled to the id range,
/// spreads consecutive probes evenly over it (the first 64 probes leave no gap above 2.5 % of the
/// ids). The high bits are scaled, not reduced mod n: a residue mod n of the same products is an
/// arithmetic progression, which put 6 of 64 probes in the top quarter of 4000 ids.
fn probe(i: usize, n: usize) -> usize {
    let frac = (i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32;
    ((frac * n as u64) >> 32) as usize
}

/// What a walk's climb found: the verdict where it stopped and the marks on its path.
#[derive(Clone, Copy, Default)]
struct Climb {
    /// The verdict of the vertex it stopped at (resolved before), 0 past the source or at a
    /// root (the root's own mark then decides).
    end: usize,
    /// Vertices on the path (the start, and up to the vertex before `end`'s, or the root).
    len: usize,
    /// Marked roots (or root-and-head vertices) on the path.
    roots: u32,
    /// Marked improving heads (or root-and-head vertices) on the path.
    heads: u32,
}

impl Climb {
    /// The verdict of the walk's start.
    fn verdict(&self) -> usize {
        verdict(self.end, self.roots, self.heads)
    }
}

/// Verdict of a vertex below a root (1: below an improving head only, 0: below neither).
const ROOTED: usize = 2;

/// The verdict below a vertex of verdict `end` of a path with `roots` and `heads` marks.
fn verdict(end: usize, roots: u32, heads: u32) -> usize {
    if end == ROOTED || roots > 0 {
        ROOTED
    } else {
        end | (heads > 0) as usize
    }
}

/// What a stamp says to a walk.
enum Seen {
    /// Resolved before: its verdict.
    Resolved(usize),
    /// Not yet: its pre-mark bits (2: root, 1: improving head).
    Marks(usize),
}

/// The stamps of one judgement: `[0..3]` the verdicts (0: below neither, 1: below an improving
/// head only, [`ROOTED`]), `[3..6]` the pre-marks of roots, improving heads and both.
struct Verdicts([i32; 6]);

impl Verdicts {
    fn new(ws: &Workspace, gens: &mut Generations, source: usize) -> Self {
        let marks = Verdicts(std::array::from_fn(|_| gens.next(ws)));
        ws.stamp[source].store(marks.0[0], Relaxed);
        marks
    }

    fn seen(&self, s: i32) -> Seen {
        let m = &self.0;
        match m[..3].iter().position(|&g| g == s) {
            Some(known) => Seen::Resolved(known),
            None => Seen::Marks(if s == m[5] { 3 } else if s == m[3] { 2 } else { (s == m[4]) as usize }),
        }
    }

    /// The climbs of reachable `starts` (at most [`LANES`]), one step of each in turn: up the old
    /// tree to the source, a vertex resolved before or a root, counting the marks passed. Writes no
    /// stamp, so walks that meet share the path above and each counts all of it.
    fn climb(&self, q: &Question<'_>, starts: &[usize], out: &mut [Climb]) {
        out.fill(Climb::default());
        let mut at = [0usize; LANES];
        at[..starts.len()].copy_from_slice(starts);
        let mut live = (1u32 << starts.len()) - 1;
        while live != 0 {
            for (i, c) in out.iter_mut().enumerate() {
                if live >> i & 1 == 0 {
                    continue;
                }
                let x = at[i];
                match self.seen(q.ws.stamp[x].load(Relaxed)) {
                    Seen::Resolved(known) => {
                        c.end = known;
                        live &= !(1 << i);
                    }
                    Seen::Marks(b) => {
                        c.len += 1;
                        c.roots += (b >> 1) as u32;
                        c.heads += (b & 1) as u32;
                        // Below a root the verdict is known, whatever lies above.
                        match q.parent[x] {
                            p if p < 0 || b >> 1 == 1 => live &= !(1 << i),
                            p => at[i] = p as usize,
                        }
                    }
                }
            }
        }
    }

    /// Stamps the path of `start`'s climb with each vertex's verdict, bottom-up, up to the end or
    /// to a vertex an earlier walk settled (all above it are settled too: the paths join there).
    /// Returns the vertices stamped.
    fn settle(&self, q: &Question<'_>, start: usize, c: Climb) -> usize {
        let (mut x, mut roots, mut heads) = (start, c.roots, c.heads);
        for walked in 0..c.len {
            let stamp = &q.ws.stamp[x];
            let b = match self.seen(stamp.load(Relaxed)) {
                Seen::Resolved(_) => return walked,
                Seen::Marks(b) => b,
            };
            stamp.store(self.0[verdict(c.end, roots, heads)], Relaxed);
            roots -= (b >> 1) as u32;
            heads -= (b & 1) as u32;
            if walked + 1 < c.len {
                x = q.parent[x] as usize;
            }
        }
        c.len
    }

    /// The verdict of reachable `v` (below a marked root: bit 1; below a marked head: bit 0)
    /// and the vertices walked to find it.
    fn resolve(&self, q: &Question<'_>, v: usize) -> (usize, usize) {
        let mut c = [Climb::default()];
        self.climb(q, &[v], &mut c);
        (c[0].verdict(), self.settle(q, v, c[0]))
    }
}

/// The shortcut rule, checked before any walk: some insertion `u -> v` lowers `v`'s distance by
/// more than `share` of the largest old distance, from a tail `u` that keeps its distance (below
/// no root: every root is marked when this runs). Such a shortcut reroutes much more than `v`'s
/// old subtree, which is all the sample sees. Checked before the walk, it saves the walk. `deepest`, the
/// largest distance the sample met, bounds the largest from below: a batch whose drops stay
/// under `share` of it needs no pass over every distance.
fn is_shortcut(q: &Question<'_>, marks: &Verdicts, share: f64, deepest: i64) -> bool {
    let Some(best) = drops(q.changes, q.dist).map(|(_, d)| d).max() else { return false };
    if best <= 0 || best as f64 <= share * deepest as f64 {
        return false;
    }
    let bar = share * (q.largest)() as f64;
    best as f64 > bar && drops(q.changes, q.dist).any(|(u, d)| d as f64 > bar && marks.resolve(q, u).0 & 2 == 0)
}

/// The shortcut rule after an exact invalidation walk (the invalidated vertices stamped `g0`):
/// some insertion from a tail that keeps its path lowers its head's distance by more than `share`
/// of the largest old distance (`largest`, asked for only when an insertion lowers one at all).
pub(super) fn shortcut_after_walk(c: &Changes<'_>, dist: &[i64], ws: &Workspace, g0: i32, share: f64, largest: &dyn Fn() -> i64) -> bool {
    let Some(best) = drops(c, dist).map(|(_, d)| d).max() else { return false };
    if best <= 0 {
        return false;
    }
    let bar = share * largest() as f64;
    best as f64 > bar && drops(c, dist).any(|(u, d)| d as f64 > bar && ws.stamp[u].load(Relaxed) != g0)
}

/// The tail and the drop `dist[v] - dist[u] - w` of every insertion `u -> v` (weight `w`)
/// between reachable vertices, for the shortcut rule. A large drop reroutes most of the graph
/// behind `v`: on the road networks and grids of `dyng bench`, batches with drops above 0.5 of
/// the largest distance changed 65-95 % of all distances, and the local batches (drops of
/// 0.14-0.27) 26-30 %.
fn drops<'a>(c: &'a Changes<'_>, dist: &'a [i64]) -> impl Iterator<Item = (usize, i64)> + 'a {
    c.inserted.into_iter().flat_map(move |ins| {
        ins.from.iter().zip(c.heads).enumerate().filter_map(move |(i, (&u, &v))| {
            prefetch_at(dist, ins.from, i + AHEAD);
            prefetch_at(dist, c.heads, i + AHEAD);
            let (du, dv) = (dist[u as usize], dist[v as usize]);
            (is_finite(du) && is_finite(dv)).then_some((u as usize, dv - du - ins.weight(i)))
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sssp::run::Inserted;

    /// A star around vertex 0 (weight 10 to every other vertex) and its tree.
    fn star(n: usize) -> (Vec<i64>, Vec<i32>) {
        let dist = (0..n).map(|v| if v == 0 { 0 } else { 10 }).collect();
        let parent = (0..n).map(|v| if v == 0 { -1 } else { 0 }).collect();
        (dist, parent)
    }

    /// Insertions 0 -> v of weight 1 shorten each of the first `heads` leaves from 10 to 1.
    fn predict_star(heads: usize, enough: usize) -> Prediction {
        let n = 2000;
        let (dist, parent) = star(n);
        let mut ws = Workspace::new();
        ws.reserve(n);
        let from = vec![0; heads];
        let to: Vec<i32> = (1..=heads as i32).collect();
        let weights = vec![1; heads];
        let changes = Changes {
            from: &[],
            to: &[],
            heads: &to,
            inserted: Some(Inserted { from: &from, weights: &weights, stride: 1, column: 0 }),
        };
        let largest = || 10;
        let q = Question { ws: &ws, changes: &changes, source: 0, dist: &dist, parent: &parent, enough, share: 0.3, shortcut: None, largest: &largest, largest_known: false };
        predict_affected(&q, &mut Generations(0))
    }

    #[test]
    fn marking_stops_once_the_roots_and_improving_heads_reach_the_threshold() {
        let p = predict_star(1000, 300);
        assert!(p.enough);
        assert_eq!(p.improving_heads, 300, "the remaining heads are not looked at");
        let p = predict_star(1000, 5000);
        assert!(!p.enough);
        assert_eq!(p.improving_heads, 1000);
        assert!(p.affected > 0.3 && p.affected < 0.7, "1000 of 1999 leaves improve: {}", p.affected);
    }

    #[test]
    fn a_subset_that_does_not_decide_leads_to_every_change_being_examined() {
        // 1000 improving heads (half the leaves): a 1-in-16 subset finds 3 % of the leaves
        // affected, below the share, so the whole batch is marked and the verdict is the same
        // as with no subset.
        let p = predict_star(1000, 5000);
        assert_eq!(p.examined, 1000);
        assert!(p.recompute(0.3));
        assert!(p.sampled < PREDICT_SAMPLES, "half the leaves affected: sampling stopped early");
    }

    /// A binary heap-shaped tree on `n` vertices (parent of v is (v - 1) / 2, unit weights),
    /// whose tree edges into `deleted` are deleted and into which the edges `inserted` (tail,
    /// head, weight) are inserted; the shortcut rule at `shortcut` of the largest distance.
    fn predict_heap(n: usize, deleted: std::ops::Range<i32>, inserted: &[(i32, i32, i32)], shortcut: Option<f64>) -> Prediction {
        predict_heap_asking(n, deleted, inserted, shortcut, false).0
    }

    /// `predict_heap`, and whether it asked for the largest distance; `known`: the largest
    /// distance is given as known (cached by the result).
    fn predict_heap_asking(n: usize, deleted: std::ops::Range<i32>, inserted: &[(i32, i32, i32)], shortcut: Option<f64>, known: bool) -> (Prediction, bool) {
        let parent: Vec<i32> = (0..n as i32).map(|v| if v == 0 { -1 } else { (v - 1) / 2 }).collect();
        let dist: Vec<i64> = (0..n).map(|v| (usize::BITS - (v + 1).leading_zeros() - 1) as i64).collect();
        let mut ws = Workspace::new();
        ws.reserve(n);
        let to: Vec<i32> = deleted.collect();
        let from: Vec<i32> = to.iter().map(|&v| parent[v as usize]).collect();
        let tails: Vec<i32> = inserted.iter().map(|e| e.0).collect();
        let heads: Vec<i32> = inserted.iter().map(|e| e.1).collect();
        let weights: Vec<i32> = inserted.iter().map(|e| e.2).collect();
        let changes = Changes {
            from: &from,
            to: &to,
            heads: &heads,
            inserted: Some(Inserted { from: &tails, weights: &weights, stride: 1, column: 0 }),
        };
        let asked = std::cell::Cell::new(false);
        let largest = || {
            asked.set(true);
            *dist.iter().max().unwrap()
        };
        let q = Question { ws: &ws, changes: &changes, source: 0, dist: &dist, parent: &parent, enough: n, share: 0.3, shortcut, largest: &largest, largest_known: known };
        let p = predict_affected(&q, &mut Generations(0));
        (p, asked.get())
    }

    fn predict_heap_deletions(n: usize, first: usize, count: usize) -> Prediction {
        predict_heap(n, first as i32..(first + count) as i32, &[], Some(0.4))
    }

    #[test]
    fn a_shortcut_from_a_tail_that_keeps_its_distance_decides_before_any_walk() {
        // Vertex 7's subtree (1/8 of the tree) is invalidated. 17 (depth 4, outside it) -> 3500
        // (depth 11) of weight 1 lowers 3500 by 6, above 40 % of the largest distance (11); the
        // sample finds too little to search.
        let p = predict_heap(4000, 7..8, &[(17, 3500, 1)], Some(0.4));
        assert!(p.affected < 0.3, "affected {}", p.affected);
        assert!(p.shortcut && p.recompute(0.3));
        // Without the rule, or with a bar above the drop, nothing decides.
        assert!(!predict_heap(4000, 7..8, &[(17, 3500, 1)], None).recompute(0.3));
        assert!(!predict_heap(4000, 7..8, &[(17, 3500, 1)], Some(0.6)).recompute(0.3));
    }

    #[test]
    fn drops_below_the_share_of_a_sampled_distance_need_no_pass_over_all_distances() {
        // 17 -> 3500 of weight 5 lowers 3500 by 2, under 40 % of the depth-11 leaves sampled.
        let (p, asked) = predict_heap_asking(4000, 7..8, &[(17, 3500, 5)], Some(0.4), false);
        assert!(!p.shortcut && !asked);
        let (p, asked) = predict_heap_asking(4000, 7..8, &[(17, 3500, 1)], Some(0.4), false);
        assert!(p.shortcut && asked);
    }

    #[test]
    fn with_the_largest_distance_known_a_shortcut_decides_before_the_sample() {
        // The shortcut of `a_shortcut_from_a_tail_that_keeps_its_distance_decides_before_any_walk`.
        let (unknown, _) = predict_heap_asking(4000, 7..8, &[(17, 3500, 1)], Some(0.4), false);
        let (known, _) = predict_heap_asking(4000, 7..8, &[(17, 3500, 1)], Some(0.4), true);
        assert!(unknown.shortcut && unknown.sampled > 0);
        assert!(known.shortcut && known.recompute(0.3));
        assert_eq!(known.sampled, 0, "no sample once the shortcut decided");
        // The estimate is then the distinct roots: vertex 7 alone.
        assert_eq!(known.invalidated, 1);
        // No shortcut (a drop under the bar, or from an invalidated tail): the sample runs and
        // decides as without the known distance. (Its size may differ: the path the rule walked
        // up from a tail is resolved already, and the sample stops after n/16 steps of its own.)
        for inserted in [[(17, 3500, 5)], [(15, 3500, 1)]] {
            let (unknown, _) = predict_heap_asking(4000, 7..8, &inserted, Some(0.4), false);
            let (known, _) = predict_heap_asking(4000, 7..8, &inserted, Some(0.4), true);
            assert!(!known.shortcut && known.sampled > 0);
            assert_eq!(known.recompute(0.3), unknown.recompute(0.3));
        }
    }

    #[test]
    fn a_shortcut_from_an_invalidated_tail_does_not_count() {
        // 15 lies below the root 7: its old distance is no bound of its new one.
        let p = predict_heap(4000, 7..8, &[(15, 3500, 1)], Some(0.4));
        assert!(!p.shortcut && !p.recompute(0.3), "{p:?}");
    }

    #[test]
    fn a_subset_that_reaches_the_share_decides_for_the_whole_batch() {
        // The tree edges into vertices 1..=1000 deleted: every vertex but the source is
        // invalidated, and the subset's first root (vertex 1) alone holds half the tree.
        let n = 4000;
        let p = predict_heap_deletions(n, 1, 1000);
        assert!(p.recompute(0.3));
        assert_eq!(p.examined, n / SUBSET_OF, "a subset decided");
        assert!(p.sampled < PREDICT_SAMPLES, "sampling stopped early: {} samples", p.sampled);
        // The estimate counts the vertices below the subset's roots only: a lower bound.
        assert!(p.invalidated > n as i64 * 4 / 10 && p.invalidated < n as i64, "estimate {}", p.invalidated);
    }

    #[test]
    fn a_subset_below_the_share_does_not_decide_alone() {
        // The tree edges into the last 1000 leaves deleted: 25 % of the vertices invalidated,
        // under the share of 30 %. The subset finds too few, so the full batch is examined and
        // decides the same.
        let p = predict_heap_deletions(4000, 3000, 1000);
        assert_eq!(p.examined, 1000);
        assert!(!p.recompute(0.3), "affected {}", p.affected);
        assert!(p.affected > 0.1, "affected {}", p.affected);
    }

    #[test]
    fn walks_climbed_together_settle_as_one_walk_after_another() {
        // A random recursive tree (each vertex's parent a random lower id, so the walks meet and
        // share their upper parts) with tree edges deleted and insertions from the source: the
        // sample's counts, and every stamp it writes, must be those of walking its probes one
        // at a time, found here by walking each vertex to the source with no stamps at all.
        let n = 20_000;
        let mut rng = crate::io::generators::rng::Mt19937::new(7);
        let parent: Vec<i32> = (0..n as u32).map(|v| if v == 0 { -1 } else { (rng.next_u32() % v) as i32 }).collect();
        let mut dist = vec![0i64; n];
        for v in 1..n {
            dist[v] = dist[parent[v] as usize] + 1;
        }
        // Low ids: large subtrees, deep enough for ancestors of their own on the paths.
        let to: Vec<i32> = (2..90).step_by(3).collect();
        let from: Vec<i32> = to.iter().map(|&v| parent[v as usize]).collect();
        let heads: Vec<i32> = (3..90).step_by(4).collect();
        let tails = vec![0; heads.len()];
        let weights = vec![1; heads.len()];
        let changes = Changes {
            from: &from,
            to: &to,
            heads: &heads,
            inserted: Some(Inserted { from: &tails, weights: &weights, stride: 1, column: 0 }),
        };
        let mut ws = Workspace::new();
        ws.reserve(n);
        let largest = || *dist.iter().max().unwrap();
        let q = Question { ws: &ws, changes: &changes, source: 0, dist: &dist, parent: &parent, enough: n, share: 0.3, shortcut: None, largest: &largest, largest_known: false };
        let mut gens = Generations(0);
        let marks = Verdicts::new(&ws, &mut gens, 0);
        mark(&q, [marks.0[3], marks.0[4], marks.0[5]], 1);
        // An insertion 0 -> h of weight 1 improves h unless h is a child of the source.
        let (root, head): (Vec<bool>, Vec<bool>) = (0..n).map(|v| (to.contains(&(v as i32)), heads.contains(&(v as i32)) && dist[v] > 1)).unzip();
        // A vertex's verdict and its path as the sample walks it: up to the first root (then
        // ROOTED) or to the source (then whether it passed a head).
        let path = |mut v: usize| {
            let mut walked = vec![];
            while v != 0 {
                walked.push(v);
                if root[v] {
                    return (ROOTED, walked);
                }
                v = parent[v] as usize;
            }
            ((walked.iter().any(|&x| head[x])) as usize, walked)
        };
        let truth = |v: usize| path(v).0;
        let s = sample(&q, &marks, usize::MAX, PREDICT_SAMPLES);
        assert_eq!(s.reachable, PREDICT_SAMPLES);
        let probed: Vec<usize> = (0..s.probes).map(|i| probe(i, n)).collect();
        assert_eq!(s.affected, probed.iter().filter(|&&v| truth(v) != 0).count());
        assert_eq!(s.rooted, probed.iter().filter(|&&v| truth(v) == ROOTED).count());
        // Every vertex on a sampled path, and no other, carries its verdict.
        let mut on_path = vec![false; n];
        for &v in &probed {
            for x in path(v).1 {
                on_path[x] = true;
            }
        }
        for (v, &walked) in on_path.iter().enumerate().skip(1) {
            let stamp = ws.stamp[v].load(Relaxed);
            let settled = marks.0[..3].iter().position(|&g| g == stamp);
            assert_eq!(settled, walked.then(|| truth(v)), "vertex {v}");
        }
        assert!(probed.iter().map(|&v| truth(v)).collect::<std::collections::HashSet<_>>().len() >= 3, "the marks reach different verdicts");
    }
}
