//! The originals' change generator `generateChangeBatch` (`mospPrep changes`, reference-behaviour
//! 7.1 and A.5), draw for draw: the same options give the same batch and the same summary line.
//!
//! The order in which random numbers are consumed is part of the contract: [local centre],
//! insertion endpoints, edge picks (or the shuffle), insertion weights, reweight weights.

use std::collections::HashSet;

use super::rng::{shuffle, uniform_int, uniform_u64, Mt19937};
use crate::error::{Error, Result};
use crate::graph::apply::apply_batch;
use crate::graph::batch::Batch;
use crate::graph::csr::Csr;
use crate::graph::dijkstra::dijkstra;
use crate::graph::rows::SlackRows;

/// How the generator picks its changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeMode {
    /// Random insertions plus deletions drawn (with replacement) from the existing edges.
    Uniform,
    /// Below-average insertions plus deletions of shortest-path-tree edges (shuffled, distinct).
    Targeted,
    /// New random weights for existing edges drawn with replacement.
    Reweight,
    /// Weight increases of tree edges (shuffled, distinct).
    Increase,
}

/// The options of `mospPrep changes`, with the originals' defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct ChangeOptions {
    /// Number of changes N.
    pub changes: usize,
    /// Share of insertions in percent (Uniform and Targeted).
    pub insert_pct: f64,
    /// How changes are picked.
    pub mode: ChangeMode,
    /// Smallest weight drawn, at least 1.
    pub wmin: i32,
    /// Largest weight drawn, at least `wmin`.
    pub wmax: i32,
    /// Seed of the `mt19937` generator every draw comes from.
    pub seed: u32,
    /// Radius of the undirected BFS ball the changes are confined to; 0 = the whole graph.
    pub local_hops: usize,
    /// Drop deletions that disconnect vertices reachable from `source` (`filterUnsafeDeletions`).
    pub safe: bool,
    /// Source of the trees (Targeted, Increase) and of the safety check.
    pub source: usize,
    /// Objectives used (`-k`); 0 = all of the graph's. It must not exceed the graph's KG. The
    /// original generates over the graph it is given, so trees, draws and every insertion cover
    /// all KG objectives whatever this value is.
    pub k: usize,
}

impl Default for ChangeOptions {
    fn default() -> Self {
        ChangeOptions {
            changes: 0,
            insert_pct: 50.0,
            mode: ChangeMode::Uniform,
            wmin: 1,
            wmax: 100,
            seed: 1,
            local_hops: 0,
            safe: false,
            source: 0,
            k: 0,
        }
    }
}

/// The BFS ball the changes are confined to (`--local`).
struct Region {
    centre: usize,
    /// Vertices in BFS discovery order.
    list: Vec<u32>,
    member: Vec<bool>,
}

/// The generator's working state: the graph, the options and the one random stream.
struct Gen<'a> {
    g: &'a Csr,
    opt: &'a ChangeOptions,
    rng: Mt19937,
    region: Option<Region>,
}

/// Generates a change batch exactly as `generateChangeBatch` does. Returns the batch (KG weights
/// per insertion) and the summary line `changes: inserts=.. reweights=.. deletes=..[ (safe: ..)][ local ..]`
/// without a trailing newline.
pub fn generate_changes(g: &Csr, opt: &ChangeOptions) -> Result<(Batch, String)> {
    check_options(g, opt)?;
    let (ins, del, rew) = change_counts(opt);
    let mut gen = Gen {
        g,
        opt,
        rng: Mt19937::new(opt.seed),
        region: None,
    };
    if opt.local_hops > 0 {
        gen.region = Some(gen.local_region()?);
    }
    let tree_based = matches!(opt.mode, ChangeMode::Targeted | ChangeMode::Increase);
    let trees = if tree_based {
        tree_parents(g, opt.source)
    } else {
        Vec::new()
    };
    let pairs = gen.insertion_pairs(ins);
    let chosen = if del > 0 || rew > 0 {
        gen.choose_edges(&trees, del.max(rew))?
    } else {
        Vec::new()
    };
    let (reweighted, deleted) = if del > 0 {
        (&[][..], &chosen[..])
    } else {
        (&chosen[..], &[][..])
    };
    let mut batch = Batch::new(g.k());
    gen.add_insertions(&mut batch, &pairs);
    gen.add_reweights(&mut batch, reweighted);
    for &(u, v) in deleted {
        batch.delete(u, v);
    }
    let mut summary = format!(
        "changes: inserts={} reweights={} deletes=",
        pairs.len(),
        reweighted.len()
    );
    if opt.safe {
        let requested = batch.num_deletions();
        let rounds = filter_unsafe_deletions(g, opt.source, &mut batch)?;
        summary += &format!(
            "{} (safe: kept {} of {requested} after {rounds} rounds)",
            batch.num_deletions(),
            batch.num_deletions()
        );
    } else {
        summary += &batch.num_deletions().to_string();
    }
    if let Some(r) = &gen.region {
        summary += &format!(
            " local centre={} hops={} region={} vertices",
            r.centre,
            opt.local_hops,
            r.list.len()
        );
    }
    Ok((batch, summary))
}

/// The originals' option rules (n >= 2, K >= 1, 1 <= wmin <= wmax, source in range), plus the
/// limits of their int-typed counts.
fn check_options(g: &Csr, opt: &ChangeOptions) -> Result<()> {
    let ok = g.n() >= 2
        && g.k() >= 1
        && opt.k <= g.k()
        && opt.wmin >= 1
        && opt.wmin <= opt.wmax
        && opt.source < g.n()
        && opt.changes <= i32::MAX as usize
        && opt.local_hops <= i32::MAX as usize
        && opt.insert_pct.is_finite();
    if ok {
        Ok(())
    } else {
        Err(Error::invalid("invalid change generator options."))
    }
}

/// (insertions, deletions, reweights) the options ask for: `llround(N * pct / 100)` clamped to
/// [0, N] insertions for Uniform and Targeted, N reweights otherwise.
pub fn change_counts(opt: &ChangeOptions) -> (usize, usize, usize) {
    let n = opt.changes;
    match opt.mode {
        ChangeMode::Uniform | ChangeMode::Targeted => {
            // f64::round rounds halves away from zero, like llround.
            let ins = (n as f64 * opt.insert_pct / 100.0)
                .round()
                .clamp(0.0, n as f64) as usize;
            (ins, n - ins, 0)
        }
        ChangeMode::Reweight | ChangeMode::Increase => (0, 0, n),
    }
}

/// The Dijkstra parent arrays of all objectives (Targeted and Increase pick tree edges).
fn tree_parents(g: &Csr, source: usize) -> Vec<Vec<i32>> {
    (0..g.k()).map(|j| dijkstra(g, j, source).1).collect()
}

/// The key of an ordered pair, for first-occurrence deduplication.
fn pair_key(u: i32, v: i32) -> u64 {
    ((u as u32 as u64) << 32) | v as u32 as u64
}

impl Gen<'_> {
    /// Draws the centre (the stream's first draw) and collects the undirected BFS ball around it:
    /// out-neighbours in CSR order, then in-neighbours in ascending-tail order; vertices at
    /// distance `local_hops` are not expanded.
    fn local_region(&mut self) -> Result<Region> {
        let n = self.g.n();
        let hops = self.opt.local_hops;
        let centre = uniform_int(&mut self.rng, 0, n as i32 - 1) as usize;
        let rev = SlackRows::reversed(&self.g.rows());
        let rev = rev.rows();
        let mut level = vec![u32::MAX; n];
        let mut list = vec![centre as u32];
        level[centre] = 0;
        let mut head = 0;
        while head < list.len() {
            let u = list[head] as usize;
            head += 1;
            if level[u] as usize >= hops {
                continue;
            }
            let outs = self.g.row(u).map(|e| self.g.col_ind()[e]);
            let ins = rev.row(u).map(|s| rev.heads()[s]);
            for x in outs.chain(ins) {
                let x = x as usize;
                if level[x] == u32::MAX {
                    level[x] = level[u] + 1;
                    list.push(x as u32);
                }
            }
        }
        if list.len() < 2 {
            return Err(Error::invalid(format!(
                "the local region around vertex {centre} ({hops} hops) has fewer than 2 vertices."
            )));
        }
        let member = level.iter().map(|&l| l != u32::MAX).collect();
        Ok(Region {
            centre,
            list,
            member,
        })
    }

    /// A vertex of the region (or of the whole graph without `--local`).
    fn random_vertex(&mut self) -> i32 {
        match &self.region {
            Some(r) => {
                let i = uniform_u64(&mut self.rng, 0, r.list.len() as u64 - 1) as usize;
                r.list[i] as i32
            }
            None => uniform_int(&mut self.rng, 0, self.g.n() as i32 - 1),
        }
    }

    fn in_region(&self, v: usize) -> bool {
        self.region.as_ref().is_none_or(|r| r.member[v])
    }

    /// `count` insertion endpoints, u then v per attempt; an attempt with u == v is discarded.
    fn insertion_pairs(&mut self, count: usize) -> Vec<(i32, i32)> {
        let mut pairs = Vec::with_capacity(count);
        while pairs.len() < count {
            let u = self.random_vertex();
            let v = self.random_vertex();
            if u != v {
                pairs.push((u, v));
            }
        }
        pairs
    }

    /// The edges to delete or reweight: `wanted` picks with replacement (Uniform, Reweight) or the
    /// first `wanted` of the shuffled candidates (Targeted, Increase).
    fn choose_edges(&mut self, trees: &[Vec<i32>], wanted: usize) -> Result<Vec<(i32, i32)>> {
        let mut cand = match self.opt.mode {
            ChangeMode::Targeted | ChangeMode::Increase => self.tree_candidates(trees),
            ChangeMode::Uniform | ChangeMode::Reweight => self.edge_candidates(),
        };
        if cand.is_empty() {
            return Err(Error::invalid("No existing edges available for the batch."));
        }
        match self.opt.mode {
            ChangeMode::Targeted | ChangeMode::Increase => {
                shuffle(&mut cand, &mut self.rng);
                cand.truncate(wanted);
                Ok(cand)
            }
            ChangeMode::Uniform | ChangeMode::Reweight => {
                let last = cand.len() as u64 - 1;
                Ok((0..wanted)
                    .map(|_| cand[uniform_u64(&mut self.rng, 0, last) as usize])
                    .collect())
            }
        }
    }

    /// Distinct tree edges (p, v) in order of v (in the region), then objective.
    fn tree_candidates(&self, trees: &[Vec<i32>]) -> Vec<(i32, i32)> {
        let mut seen = HashSet::new();
        let mut cand = Vec::new();
        for v in (0..self.g.n()).filter(|&v| self.in_region(v)) {
            for tree in trees {
                let p = tree[v];
                if p >= 0 && seen.insert(pair_key(p, v as i32)) {
                    cand.push((p, v as i32));
                }
            }
        }
        cand
    }

    /// Distinct non-loop edges (u, v) with both ends in the region, in row order.
    fn edge_candidates(&self) -> Vec<(i32, i32)> {
        let mut seen = HashSet::new();
        let mut cand = Vec::new();
        for u in (0..self.g.n()).filter(|&u| self.in_region(u)) {
            for e in self.g.row(u) {
                let v = self.g.col_ind()[e];
                if v as usize != u
                    && self.in_region(v as usize)
                    && seen.insert(pair_key(u as i32, v))
                {
                    cand.push((u as i32, v));
                }
            }
        }
        cand
    }

    /// Per-objective upper weight bound of Targeted insertions: `max(wmin, trunc(sum/m) - 1)`.
    fn below_average(&self) -> Vec<i32> {
        let m = self.g.m();
        (0..self.g.k())
            .map(|j| {
                if m == 0 {
                    return self.opt.wmin; // the original divides by zero here; any bound is moot
                }
                let avg = self.g.weight_sum(j) as f64 / m as f64;
                (avg as i64 - 1).max(self.opt.wmin as i64) as i32
            })
            .collect()
    }

    /// Appends the random insertions with their weights (per insertion, per objective).
    fn add_insertions(&mut self, batch: &mut Batch, pairs: &[(i32, i32)]) {
        let k = self.g.k();
        let (wmin, wmax) = (self.opt.wmin, self.opt.wmax);
        let upper = match self.opt.mode {
            ChangeMode::Targeted => self.below_average(),
            _ => vec![wmax; k],
        };
        let mut w = vec![0i32; k];
        for &(u, v) in pairs {
            for (slot, &hi) in w.iter_mut().zip(&upper) {
                *slot = uniform_int(&mut self.rng, wmin, hi);
            }
            batch.insert(u, v, &w);
        }
    }

    /// Appends the reweights as insertions: new weights (Reweight) or the first copy's weights plus
    /// `U[1, wmax]`, saturated at 2^31-1 (Increase).
    fn add_reweights(&mut self, batch: &mut Batch, edges: &[(i32, i32)]) {
        let k = self.g.k();
        let mut w = vec![0i32; k];
        for &(u, v) in edges {
            let first = self.g.first_edge(u as usize, v);
            for (j, slot) in w.iter_mut().enumerate() {
                *slot = match (self.opt.mode, first) {
                    (ChangeMode::Increase, Some(e)) => {
                        let add = uniform_int(&mut self.rng, 1, self.opt.wmax) as i64;
                        (self.g.column(j)[e] as i64 + add).min(i32::MAX as i64) as i32
                    }
                    _ => uniform_int(&mut self.rng, self.opt.wmin, self.opt.wmax),
                };
            }
            batch.insert(u, v, &w);
        }
    }
}

/// Vertices reachable from `source` over out-edges.
fn reachable(g: &Csr, source: usize) -> Vec<bool> {
    let mut seen = vec![false; g.n()];
    let mut stack = vec![source];
    seen[source] = true;
    while let Some(u) = stack.pop() {
        for e in g.row(u) {
            let v = g.col_ind()[e] as usize;
            if !seen[v] {
                seen[v] = true;
                stack.push(v);
            }
        }
    }
    seen
}

/// `filterUnsafeDeletions`: repeatedly applies the whole batch to a copy and drops the deletions
/// touching a vertex that was reachable from `source` before and is not after. Returns the rounds.
pub fn filter_unsafe_deletions(g: &Csr, source: usize, batch: &mut Batch) -> Result<usize> {
    if source >= g.n() {
        return Err(Error::invalid("invalid change generator options."));
    }
    let before = reachable(g, source);
    let mut rounds = 0;
    while batch.num_deletions() > 0 {
        rounds += 1;
        let applied = apply_batch(g, &batch.view())?;
        let after = reachable(&applied.csr, source);
        let lost: Vec<bool> = before.iter().zip(&after).map(|(&b, &a)| b && !a).collect();
        if !lost.iter().any(|&l| l) {
            break;
        }
        let (src, dst) = (
            std::mem::take(&mut batch.del_src),
            std::mem::take(&mut batch.del_dst),
        );
        for (&u, &v) in src.iter().zip(&dst) {
            if !lost[u as usize] && !lost[v as usize] {
                batch.delete(u, v);
            }
        }
        if batch.num_deletions() == src.len() {
            break;
        }
    }
    Ok(rounds)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::csr::WeightLayout;

    /// 0 -> 1 -> 2 and a self-loop 3 -> 3, K = 2.
    fn small() -> Csr {
        Csr::from_arrays(
            4,
            2,
            vec![0, 1, 2, 2, 3],
            vec![1, 2, 3],
            &[5, 6, 7, 8, 9, 9],
            WeightLayout::EdgeMajor,
        )
        .expect("valid")
    }

    #[test]
    fn invalid_options_are_rejected() {
        let g = small();
        for opt in [
            ChangeOptions {
                wmin: 0,
                ..Default::default()
            },
            ChangeOptions {
                wmin: 5,
                wmax: 4,
                ..Default::default()
            },
            ChangeOptions {
                source: 4,
                ..Default::default()
            },
            ChangeOptions {
                k: 3,
                ..Default::default()
            },
        ] {
            let err = generate_changes(&g, &opt).expect_err("invalid");
            assert_eq!(err.to_string(), "invalid change generator options.");
        }
    }

    #[test]
    fn no_candidate_edges_is_an_error() {
        let g = Csr::from_arrays(3, 1, vec![0, 0, 0, 0], vec![], &[], WeightLayout::EdgeMajor)
            .expect("valid");
        let opt = ChangeOptions {
            changes: 4,
            ..Default::default()
        };
        let err = generate_changes(&g, &opt).expect_err("no edges");
        assert_eq!(
            err.to_string(),
            "No existing edges available for the batch."
        );
    }

    #[test]
    fn counts_summary_and_weight_ranges() {
        let g = small();
        let opt = ChangeOptions {
            changes: 7,
            insert_pct: 50.0,
            wmax: 3,
            ..Default::default()
        };
        let (b, line) = generate_changes(&g, &opt).expect("valid");
        // llround(3.5) = 4 insertions, 3 deletions picked from the two non-loop edges.
        assert_eq!(line, "changes: inserts=4 reweights=0 deletes=3");
        assert_eq!((b.num_insertions(), b.num_deletions(), b.k), (4, 3, 2));
        assert!(b.ins_weights.iter().all(|&w| (1..=3).contains(&w)));
        assert!(b.ins_src.iter().zip(&b.ins_dst).all(|(u, v)| u != v));
        assert!(b
            .del_src
            .iter()
            .zip(&b.del_dst)
            .all(|p| matches!(p, (0, 1) | (1, 2))));
    }

    #[test]
    fn increase_raises_every_objective_of_tree_edges() {
        let g = small();
        let opt = ChangeOptions {
            changes: 5,
            mode: ChangeMode::Increase,
            ..Default::default()
        };
        let (b, line) = generate_changes(&g, &opt).expect("valid");
        // Only two distinct tree edges exist: the shuffle keeps min(2, 5) of them.
        assert_eq!(line, "changes: inserts=0 reweights=2 deletes=0");
        for i in 0..b.num_insertions() {
            let e = g
                .first_edge(b.ins_src[i] as usize, b.ins_dst[i])
                .expect("tree edge");
            for j in 0..2 {
                assert!(b.ins_weights[i * 2 + j] > g.column(j)[e]);
            }
        }
    }

    #[test]
    fn safe_filter_keeps_connecting_deletions_out() {
        let g = small();
        let mut b = Batch::new(2);
        b.delete(1, 2);
        b.delete(2, 3);
        let rounds = filter_unsafe_deletions(&g, 0, &mut b).expect("valid");
        assert_eq!((rounds, b.num_deletions()), (1, 0));
    }
}
