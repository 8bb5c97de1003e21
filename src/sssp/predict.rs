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
//! with many changes per vertex the marking dominates (a 50K-change batch on bremen's 40K vertices:
//! 0.3 ms of marking against a 1.3 ms static solve), so such a batch is first judged on an evenly
//! strided subset of its changes: the vertices below a subset's roots and heads are a subset of
//! those below all of them, so a subset that already reaches the share decides for the whole
//! batch. Only a batch that the subset does not decide is marked in full and sampled again.

use super::engine::{is_finite, Changes, Generations};
use super::workspace::Workspace;
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
    /// bound of the sample's estimate when a subset decided).
    pub invalidated: i64,
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
}

/// Predicts the share of the reachable vertices a repair must search (see the module comment).
pub(super) fn predict_affected(q: &Question<'_>, gens: &mut Generations) -> Prediction {
    let n = q.dist.len();
    let changes = q.changes.from.len() + q.changes.heads.len();
    let subset = (n / SUBSET_OF).max(1);
    if changes > n / SUBSET_FROM && changes > subset {
        let p = judge(q, gens, changes.div_ceil(subset), PREDICT_SAMPLES / 2);
        if p.recompute(q.share) {
            return p;
        }
    }
    judge(q, gens, 1, PREDICT_SAMPLES)
}

/// Marks every `stride`-th change and samples up to `samples` reachable vertices (a subset takes
/// half of them: on the bench's graphs every subset that decided had at least 21 of its first 32
/// samples affected, while one that does not decide costs its repair a second sample).
fn judge(q: &Question<'_>, gens: &mut Generations, stride: usize, samples: usize) -> Prediction {
    let n = q.dist.len();
    let marks = Verdicts::new(q.ws, gens, q.source);
    let m = mark(q, [marks.0[4], marks.0[5], marks.0[6]], stride);
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
        improving_heads: m.improving_heads,
        enough: informative && m.reached,
        informative,
        examined: m.examined,
        sampled: s.reachable,
        shortcut: false,
    };
    if let (1, Some(share), false) = (stride, q.shortcut, p.recompute(q.share)) {
        p.shortcut = is_shortcut(q, &marks, share, s.deepest);
    }
    p
}

struct Marked {
    improving_heads: usize,
    reached: bool,
    examined: usize,
}

/// Pre-marks the roots and improving insertion heads among every `stride`-th change in their
/// stamps (`pre`: root, head, both). The roots are all marked (for the sample's estimate of
/// `invalidated`); the heads only until the distinct roots and improving heads reach `enough`.
fn mark(q: &Question<'_>, pre: [i32; 3], stride: usize) -> Marked {
    let Question { ws, changes: c, dist, parent, enough, .. } = *q;
    let [pre_root, pre_head, pre_both] = pre;
    let mut distinct_roots = 0;
    let mut examined = 0;
    // Ranges, not zipped slices, are strided: `step_by` over a `Zip` walks element by element
    // (usroads, 10K changes: 230 us against 60 us for the whole marking).
    let to = &c.to[..c.from.len()];
    for i in (0..c.from.len()).step_by(stride) {
        let (from, to) = (c.from[i], to[i]);
        examined += 1;
        if parent[to as usize] != from {
            continue;
        }
        let stamp = &ws.stamp[to as usize];
        if stamp.load(Relaxed) != pre_root {
            stamp.store(pre_root, Relaxed);
            distinct_roots += 1;
        }
    }
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
            let (du, dv) = (dist[u as usize], dist[v as usize]);
            let w = ins.weights[i * ins.stride + ins.column] as i64;
            if is_finite(du) && (!is_finite(dv) || du + w < dv) {
                let stamp = &ws.stamp[v as usize];
                let s = stamp.load(Relaxed);
                if s != pre_head && s != pre_both {
                    improving_heads += 1;
                    stamp.store(if s == pre_root { pre_both } else { pre_head }, Relaxed);
                }
            }
        }
    }
    Marked { improving_heads, reached, examined }
}

struct Sampled {
    probes: usize,
    reachable: usize,
    rooted: usize,
    affected: usize,
    /// The largest distance of a sampled vertex.
    deepest: i64,
}

/// Up to `samples` reachable vertices, spread over the ids by a multiplicative hash, walk
/// up the old tree to the source or a vertex an earlier sample resolved; the path is then
/// resolved top-down (below a root? below a head?) and stamped with one of the verdicts
/// `marks[0..4]` (index `2 * below_root + below_head`), so later samples stop where earlier ones
/// passed and each vertex is walked at most once, reading two arrays per step. Cost: the union of
/// the sampled paths, a few thousand vertices on the bench's graphs (0.03 ms on bremen, 0.06 ms on
/// usroads); sampling stops once the walks have passed n/16 vertices, and once half the samples
/// are taken and `need` of them are affected: the share over all of them would reach
/// `need / PREDICT_SAMPLES` whatever the rest found.
fn sample(q: &Question<'_>, marks: &Verdicts, need: usize, samples: usize) -> Sampled {
    let n = q.dist.len();
    let (mut probes, mut reachable, mut rooted, mut affected, mut steps) = (0usize, 0usize, 0usize, 0usize, 0usize);
    let mut deepest = 0;
    while reachable < samples && probes < 4 * samples && steps <= n / 16 {
        if affected >= need && reachable >= PREDICT_SAMPLES / 2 {
            break;
        }
        // The golden-ratio sequence frac(i * phi), scaled to the id range, spreads consecutive
        // probes evenly over it (the first 64 probes leave no gap above 2.5 % of the ids). The
        // high bits are scaled, not reduced mod n: a residue mod n of the same products is an
        // arithmetic progression, which put 6 of 64 probes in the top quarter of 4000 ids.
        let frac = (probes as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32;
        let v = ((frac * n as u64) >> 32) as usize;
        probes += 1;
        if !is_finite(q.dist[v]) {
            continue;
        }
        reachable += 1;
        deepest = deepest.max(q.dist[v]);
        let (verdict, walked) = marks.resolve(q, v);
        steps += walked;
        rooted += verdict >> 1;
        affected += (verdict != 0) as usize;
    }
    Sampled { probes, reachable, rooted, affected, deepest }
}

/// The stamps of one judgement: `[0..4]` the verdicts (index `2 * below_root + below_head`),
/// `[4..7]` the pre-marks of roots, improving heads and both.
struct Verdicts([i32; 7]);

impl Verdicts {
    fn new(ws: &Workspace, gens: &mut Generations, source: usize) -> Self {
        let marks = Verdicts(std::array::from_fn(|_| gens.next(ws)));
        ws.stamp[source].store(marks.0[0], Relaxed);
        marks
    }

    /// The verdict of reachable `v` (below a marked root: bit 1; below a marked head: bit 0)
    /// and the vertices walked to find it: up the old tree to the source or to a vertex
    /// resolved before, then every vertex of the path is stamped with its own verdict, top-down.
    fn resolve(&self, q: &Question<'_>, v: usize) -> (usize, usize) {
        let m = &self.0;
        let (ws, path) = (q.ws, &q.ws.frontier);
        path.clear();
        let mut x = v;
        let mut verdict = loop {
            if let Some(known) = m[..4].iter().position(|&g| g == ws.stamp[x].load(Relaxed)) {
                break known;
            }
            path.push(x as i32);
            match q.parent[x] {
                p if p < 0 => break 0,
                p => x = p as usize,
            }
        };
        let walked = path.len();
        for i in (0..walked).rev() {
            let stamp = &ws.stamp[path.get(i) as usize];
            let s = stamp.load(Relaxed);
            verdict |= if s == m[6] { 3 } else if s == m[4] { 2 } else { (s == m[5]) as usize };
            stamp.store(m[verdict], Relaxed);
        }
        path.clear();
        (verdict, walked)
    }
}

/// The shortcut rule, checked before any walk: some insertion `u -> v` lowers `v`'s distance by
/// more than `share` of the largest old distance, from a tail `u` that keeps its distance (below
/// no root: every root is marked when this runs). Such a shortcut reroutes much more than `v`'s
/// old subtree, which is all the sample sees. Checked before the walk, it saves the walk: grid
/// safe 1K spent 3 ms of a 95 ms update walking before the rule recomputed. `deepest`, the
/// largest distance the sample met, bounds the largest from below: a batch whose drops stay
/// under `share` of it needs no pass over every distance (1 ms on the 1000^2 grid).
fn is_shortcut(q: &Question<'_>, marks: &Verdicts, share: f64, deepest: i64) -> bool {
    let Some(best) = drops(q.changes, q.dist).map(|(_, d)| d).max() else { return false };
    if best <= 0 || best as f64 <= share * deepest as f64 {
        return false;
    }
    let bar = share * (q.largest)() as f64;
    best as f64 > bar && drops(q.changes, q.dist).any(|(u, d)| d as f64 > bar && marks.resolve(q, u).0 & 2 == 0)
}

/// The tail and the drop `dist[v] - dist[u] - w` of every insertion `u -> v` (weight `w`)
/// between reachable vertices, for the shortcut rule. A large drop reroutes most of the graph
/// behind `v`: on the road networks and grids of `dyng bench`, batches with drops above 0.5 of
/// the largest distance changed 65-95 % of all distances, and the local batches (drops of
/// 0.14-0.27) 26-30 %.
fn drops<'a>(c: &'a Changes<'_>, dist: &'a [i64]) -> impl Iterator<Item = (usize, i64)> + 'a {
    c.inserted.into_iter().flat_map(move |ins| {
        ins.from.iter().zip(c.heads).enumerate().filter_map(move |(i, (&u, &v))| {
            let (du, dv) = (dist[u as usize], dist[v as usize]);
            let w = ins.weights[i * ins.stride + ins.column] as i64;
            (is_finite(du) && is_finite(dv)).then_some((u as usize, dv - du - w))
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sssp::engine::Inserted;

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
        let q = Question { ws: &ws, changes: &changes, source: 0, dist: &dist, parent: &parent, enough, share: 0.3, shortcut: None, largest: &largest };
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
        predict_heap_asking(n, deleted, inserted, shortcut).0
    }

    /// `predict_heap`, and whether it asked for the largest distance.
    fn predict_heap_asking(n: usize, deleted: std::ops::Range<i32>, inserted: &[(i32, i32, i32)], shortcut: Option<f64>) -> (Prediction, bool) {
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
        let q = Question { ws: &ws, changes: &changes, source: 0, dist: &dist, parent: &parent, enough: n, share: 0.3, shortcut, largest: &largest };
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
        let (p, asked) = predict_heap_asking(4000, 7..8, &[(17, 3500, 5)], Some(0.4));
        assert!(!p.shortcut && !asked);
        let (p, asked) = predict_heap_asking(4000, 7..8, &[(17, 3500, 1)], Some(0.4));
        assert!(p.shortcut && asked);
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
}
