//! Counters of one engine run and the default bucket width.

/// What one SSSP update (or static solve) did.
///
/// `invalidated`, `affected` and `packed_parents` are deterministic; `iterations`, `epochs` and
/// `pushes` depend on the schedule (they reproduce the originals' with the sequential engine; a
/// one-thread parallel engine runs a bucket queue, whose `iterations` count the distances it
/// expanded, with no epochs).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UpdateStats {
    /// Vertices whose old tree path contained a root (a deleted or heavier tree edge). When the
    /// adaptive update chose to recompute from its sample, before walking the tree, this is the
    /// sample's estimate, a lower bound when a subset of a large batch decided, and the number
    /// of distinct roots, a lower bound too, when a shortcut decided before any sample
    /// (`fallback_used` is then true; see `Fallback::Adaptive`).
    pub invalidated: i64,
    /// Vertices whose distance or parent changed.
    pub affected: i64,
    /// Push rounds over a non-empty near list (bucket queue: distances expanded).
    pub iterations: i64,
    /// Far-pile threshold raises.
    pub epochs: i64,
    /// Vertex expansions (sum of the near list sizes).
    pub pushes: i64,
    /// True when parents travelled in the packed word (false: distance-only fallback).
    pub packed_parents: bool,
    /// True when the update recomputed from scratch instead (adaptive update).
    pub fallback_used: bool,
    /// Wall-clock time of the engine run in nanoseconds (not deterministic).
    pub elapsed_ns: u64,
    /// Vertices each step of the run visited besides the search's expansions (`pushes`), a pass
    /// over every vertex counting n: what an update costs, measured without a clock.
    pub visits: Visits,
}

/// Vertices visited by the steps of one run (see [`UpdateStats::visits`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Visits {
    /// The adaptive policy's prediction: changes marked and tree steps sampled.
    pub predict: i64,
    /// The invalidation walk (both sides when it counts).
    pub invalidate: i64,
    /// Vertices whose words were set before the search: every vertex for a full packing or a
    /// static solve, the invalidated ones for a trusted repair (the others are read from the
    /// old tree when met).
    pub pack: i64,
    /// Candidates that pulled their best in-edge.
    pub pull: i64,
    /// Vertices written back (every vertex, or the ones the repair touched).
    pub write_back: i64,
}

impl Visits {
    /// Every step's visits.
    pub fn total(&self) -> i64 {
        self.predict + self.invalidate + self.pack + self.pull + self.write_back
    }

    fn add(&mut self, o: &Visits) {
        self.predict += o.predict;
        self.invalidate += o.invalidate;
        self.pack += o.pack;
        self.pull += o.pull;
        self.write_back += o.write_back;
    }
}

impl UpdateStats {
    /// The counters of several runs added up (a MOSP result's K objectives): packed only if every
    /// run was, a fallback if any run fell back.
    pub fn sum<'a>(runs: impl IntoIterator<Item = &'a UpdateStats>) -> UpdateStats {
        let mut sum = UpdateStats {
            packed_parents: true,
            ..Default::default()
        };
        for s in runs {
            sum.invalidated += s.invalidated;
            sum.affected += s.affected;
            sum.iterations += s.iterations;
            sum.epochs += s.epochs;
            sum.pushes += s.pushes;
            sum.packed_parents &= s.packed_parents;
            sum.fallback_used |= s.fallback_used;
            sum.elapsed_ns += s.elapsed_ns;
            sum.visits.add(&s.visits);
        }
        sum
    }
}

/// The originals' default Delta: 32 x average weight / average out-degree, in double precision in
/// this order (reference-behaviour §3.14).
pub fn default_delta(m: usize, n: usize, weight_sum: i64) -> i64 {
    if m == 0 || n == 0 {
        return 1;
    }
    let (m, n) = (m as f64, n as f64);
    let d = (32.0 * (weight_sum as f64 / m)) / (m / n);
    (d as i64).max(1)
}

/// The default Delta of objective `j` of a graph.
pub(crate) fn graph_delta(g: &crate::Graph, j: usize) -> i64 {
    default_delta(g.m(), g.n(), g.weight_sum(j))
}

#[cfg(test)]
mod tests {
    #[test]
    fn thesis_combined_delta() {
        // reference-behaviour B.1: 9 edges, weight sum 108, n = 7 -> 298.
        assert_eq!(super::default_delta(9, 7, 108), 298);
        assert_eq!(super::default_delta(0, 7, 0), 1);
    }
}
