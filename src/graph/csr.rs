//! Compressed sparse rows with K weight columns stored objective-major.
//!
//! Row `u` holds the out-edges of `u` in a fixed order (the order matters: batch semantics and
//! path costs use "the first copy in the row"). Vertex ids and edge offsets are i32, as in the
//! originals; weights are integers in [1, 2^31-1], column `k` is `weights[k*m .. (k+1)*m]`.

use super::rows::Rows;
use crate::error::{Error, Result};

/// The largest number of objectives a graph may carry (the weight-increase mask is 64 bits wide).
pub const MAX_OBJECTIVES: usize = 64;

/// Largest edge count and vertex count representable with i32 offsets and ids.
pub const MAX_EDGES: usize = i32::MAX as usize;

/// A validated CSR graph with K objective-major weight columns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Csr {
    n: usize,
    k: usize,
    row_ptr: Vec<i32>,
    col_ind: Vec<i32>,
    weights: Vec<i32>,
    /// Per objective, computed once when the graph is built: every solve and every update asks
    /// for the largest weight (the packing) and the weight sum (the default Delta), and a pass
    /// over a column would be paid several times per MOSP objective and update.
    facts: Vec<ColumnFacts>,
}

/// What the engines need to know of one weight column, kept by a resident graph's batches: the
/// sum exactly, the largest weight as a bound that is exact while some edge has it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ColumnFacts {
    /// The largest weight, at least 1 (also for an edgeless graph); once a batch took the last
    /// edge of that weight (`at_max` 0), a bound above every weight.
    pub(crate) max: i32,
    /// Edges whose weight is `max`.
    pub(crate) at_max: usize,
    pub(crate) sum: i64,
}

/// Weights [`ColumnFacts::of_slice`] takes at a time (16 KiB).
const FACTS_CHUNK: usize = 4096;

impl ColumnFacts {
    pub(crate) fn of(w: impl IntoIterator<Item = i32>) -> Self {
        let mut f = ColumnFacts { max: 1, at_max: 0, sum: 0 };
        for w in w {
            f.sum += w as i64;
            if w > f.max {
                (f.max, f.at_max) = (w, 1);
            } else if w == f.max {
                f.at_max += 1;
            }
        }
        f
    }

    /// [`ColumnFacts::of`] a slice: by chunks that stay in the cache, each a maximum and a sum
    /// the compiler vectorizes, and a count of the maximum only where it reaches the largest so
    /// far (edge by edge, the compare with the maximum goes either way).
    pub(crate) fn of_slice(w: &[i32]) -> Self {
        let mut f = ColumnFacts { max: 1, at_max: 0, sum: 0 };
        for chunk in w.chunks(FACTS_CHUNK) {
            let top = chunk.iter().fold(i32::MIN, |a, &x| a.max(x));
            f.sum += chunk.iter().map(|&x| x as i64).sum::<i64>();
            if top >= f.max {
                let at = chunk.iter().filter(|&&x| x == top).count();
                if top > f.max {
                    (f.max, f.at_max) = (top, at);
                } else {
                    f.at_max += at;
                }
            }
        }
        f
    }

    /// The facts of two parts of a column.
    pub(crate) fn merge(self, other: Self) -> Self {
        let sum = self.sum + other.sum;
        match self.max.cmp(&other.max) {
            std::cmp::Ordering::Greater => ColumnFacts { sum, ..self },
            std::cmp::Ordering::Less => ColumnFacts { sum, ..other },
            std::cmp::Ordering::Equal => ColumnFacts { at_max: self.at_max + other.at_max, sum, ..self },
        }
    }

    fn of_columns(weights: &[i32], k: usize) -> Vec<Self> {
        let m = weights.len() / k;
        (0..k).map(|j| ColumnFacts::of_slice(&weights[j * m..(j + 1) * m])).collect()
    }

    /// Counts an edge of weight `w` in.
    #[inline]
    pub(crate) fn add(&mut self, w: i32) {
        self.sum += w as i64;
        if w > self.max {
            (self.max, self.at_max) = (w, 1);
        } else if w == self.max {
            self.at_max += 1;
        }
    }

    /// Counts an edge of weight `w` out (the largest then stays a bound if it was the last of it).
    #[inline]
    pub(crate) fn remove(&mut self, w: i32) {
        self.sum -= w as i64;
        if w == self.max && self.at_max > 0 {
            self.at_max -= 1;
        }
    }

    /// Whether `max` is the largest weight itself (or the edgeless graph's 1: a batch that took
    /// every edge leaves the old largest weight here, which is then no longer exact).
    pub(crate) fn exact(&self, edges: usize) -> bool {
        self.at_max > 0 || (edges == 0 && self.max == 1)
    }
}

/// How the weights passed to a constructor are laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WeightLayout {
    /// `weights[e*k + j]` (the originals' files and `dyng_edges_t`).
    EdgeMajor,
    /// `weights[j*m + e]` (`dyng_csr_t`).
    ObjectiveMajor,
}

impl Csr {
    /// Builds a graph from CSR arrays after checking every rule; names the first offending entry.
    ///
    /// `row_ptr` has `n + 1` non-decreasing entries from 0 to m, `col_ind` the m heads in
    /// `[0, n)`, `weights` the `m * k` weights in `[1, 2^31-1]` laid out as `layout` says; K is
    /// 1 to [`MAX_OBJECTIVES`]. A broken rule is [`Error::InvalidArgument`], n beyond 2^31-1
    /// is [`Error::Capacity`].
    ///
    /// ```
    /// use dyng::{Csr, ErrorKind, WeightLayout};
    ///
    /// // Row 0: 0 -> 1, 0 -> 2; row 1: 1 -> 2; row 2 empty. One objective.
    /// let g = Csr::from_arrays(3, 1, vec![0, 2, 3, 3], vec![1, 2, 2], &[4, 9, 3], WeightLayout::ObjectiveMajor)?;
    /// assert_eq!((g.n(), g.m()), (3, 3));
    /// assert_eq!(g.row(0), 0..2);
    /// assert_eq!(g.first_edge(0, 2), Some(1));
    ///
    /// // The arrays of the generators and the text readers, edge-major weights.
    /// let t = dyng::io::generators::graphgen::grid(3, 3, 2, 1, 9, 7)?;
    /// let grid = Csr::from_arrays(t.n, t.k, t.row_ptr, t.col_ind, &t.weights, WeightLayout::EdgeMajor)?;
    /// assert_eq!((grid.n(), grid.k()), (9, 2));
    ///
    /// // A head outside [0, n) is refused.
    /// let err = Csr::from_arrays(2, 1, vec![0, 1, 1], vec![2], &[1], WeightLayout::EdgeMajor).unwrap_err();
    /// assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    /// # Ok::<(), dyng::Error>(())
    /// ```
    pub fn from_arrays(
        n: usize,
        k: usize,
        row_ptr: Vec<i32>,
        col_ind: Vec<i32>,
        weights: &[i32],
        layout: WeightLayout,
    ) -> Result<Self> {
        check_objectives(k)?;
        if n > MAX_EDGES {
            return Err(Error::Capacity(format!(
                "dyng: n = {n} vertices exceeds the 32-bit limit 2^31-1"
            )));
        }
        if row_ptr.len() != n + 1 {
            return Err(Error::invalid(format!(
                "dyng: row_ptr has {} entries, want n + 1 = {}",
                row_ptr.len(),
                n + 1
            )));
        }
        if row_ptr[0] != 0 {
            return Err(Error::invalid(format!(
                "dyng: row_ptr[0] = {}, must be 0",
                row_ptr[0]
            )));
        }
        for u in 0..n {
            if row_ptr[u + 1] < row_ptr[u] {
                return Err(Error::invalid(format!(
                    "dyng: row_ptr is not monotone: row_ptr[{}] = {} < row_ptr[{u}] = {}",
                    u + 1,
                    row_ptr[u + 1],
                    row_ptr[u]
                )));
            }
        }
        let m = row_ptr[n] as usize;
        if col_ind.len() != m {
            return Err(Error::invalid(format!(
                "dyng: col_ind has {} entries but row_ptr[n] = {m}",
                col_ind.len()
            )));
        }
        if let Some(e) = col_ind.iter().position(|&v| v < 0 || v as usize >= n) {
            return Err(Error::invalid(format!(
                "dyng: edge {e} has head {} outside [0, n = {n})",
                col_ind[e]
            )));
        }
        if weights.len() != m * k {
            return Err(Error::invalid(format!(
                "dyng: {} weights given, want m x K = {m} x {k} = {}",
                weights.len(),
                m * k
            )));
        }
        let columns = match layout {
            WeightLayout::ObjectiveMajor => weights.to_vec(),
            WeightLayout::EdgeMajor => {
                let mut cols = vec![0i32; m * k];
                for e in 0..m {
                    for j in 0..k {
                        cols[j * m + e] = weights[e * k + j];
                    }
                }
                cols
            }
        };
        if let Some(i) = columns.iter().position(|&w| w < 1) {
            let (j, e) = (i / m.max(1), i % m.max(1));
            return Err(Error::invalid(format!(
                "dyng: edge {e} has weight {} for objective {j}; weights must be integers in [1, 2^31-1]",
                columns[i]
            )));
        }
        Ok(Csr {
            n,
            k,
            row_ptr,
            col_ind,
            facts: ColumnFacts::of_columns(&columns, k),
            weights: columns,
        })
    }

    /// Builds a graph from an edge list; edges keep their list order inside each source row.
    ///
    /// `src` and `dst` hold the m tails and heads in `[0, n)`, `weights_edge_major` the K
    /// weights of each edge in turn (`[e*k + j]`), each in `[1, 2^31-1]`. Errors as
    /// [`Csr::from_arrays`].
    ///
    /// ```
    /// use dyng::{Csr, ErrorKind};
    ///
    /// // 0 -> 1 with weights (10, 1) and 0 -> 2 with (20, 2).
    /// let g = Csr::from_edges(3, 2, &[0, 0], &[1, 2], &[10, 1, 20, 2])?;
    /// assert_eq!((g.n(), g.m(), g.k()), (3, 2, 2));
    /// assert_eq!(g.row_ptr(), [0, 2, 2, 2]);
    /// assert_eq!(g.column(1), [1, 2]); // objective 1, edge by edge
    ///
    /// // Weights must be at least 1; the message names the edge and the objective.
    /// let err = Csr::from_edges(3, 1, &[0], &[1], &[0]).unwrap_err();
    /// assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    /// # Ok::<(), dyng::Error>(())
    /// ```
    pub fn from_edges(
        n: usize,
        k: usize,
        src: &[i32],
        dst: &[i32],
        weights_edge_major: &[i32],
    ) -> Result<Self> {
        check_objectives(k)?;
        let m = src.len();
        if dst.len() != m || weights_edge_major.len() != m * k {
            return Err(Error::invalid(format!(
                "dyng: edge arrays disagree: {m} sources, {} targets, {} weights (want {} = m x K)",
                dst.len(),
                weights_edge_major.len(),
                m * k
            )));
        }
        if m > MAX_EDGES || n > MAX_EDGES {
            return Err(Error::Capacity(format!(
                "dyng: {m} edges / {n} vertices exceed the 32-bit limit 2^31-1"
            )));
        }
        for e in 0..m {
            for (what, x) in [("source", src[e]), ("target", dst[e])] {
                if x < 0 || x as usize >= n {
                    return Err(Error::invalid(format!(
                        "dyng: edge {e} has {what} {x} outside [0, n = {n})"
                    )));
                }
            }
        }
        let mut row_ptr = vec![0i32; n + 1];
        for &u in src {
            row_ptr[u as usize + 1] += 1;
        }
        for u in 0..n {
            row_ptr[u + 1] += row_ptr[u];
        }
        let mut cursor: Vec<i32> = row_ptr[..n].to_vec();
        let mut col_ind = vec![0i32; m];
        let mut w = vec![0i32; m * k];
        for e in 0..m {
            let slot = cursor[src[e] as usize] as usize;
            cursor[src[e] as usize] += 1;
            col_ind[slot] = dst[e];
            w[slot * k..slot * k + k].copy_from_slice(&weights_edge_major[e * k..e * k + k]);
        }
        Csr::from_arrays(n, k, row_ptr, col_ind, &w, WeightLayout::EdgeMajor)
    }

    /// Assembles a graph whose invariants the caller has established, with the facts of its
    /// columns (used by `apply`, which finds them while each column is still in the cache).
    pub(crate) fn from_parts_unchecked(
        n: usize,
        k: usize,
        row_ptr: Vec<i32>,
        col_ind: Vec<i32>,
        weights: Vec<i32>,
        facts: Vec<ColumnFacts>,
    ) -> Self {
        debug_assert_eq!(row_ptr.len(), n + 1);
        debug_assert_eq!(weights.len(), col_ind.len() * k);
        debug_assert_eq!(facts, ColumnFacts::of_columns(&weights, k));
        Csr {
            n,
            k,
            row_ptr,
            col_ind,
            weights,
            facts,
        }
    }

    /// The arrays (row_ptr, col_ind, weights) and the columns' facts.
    pub(crate) fn into_parts(self) -> (Vec<i32>, Vec<i32>, Vec<i32>, Vec<ColumnFacts>) {
        (self.row_ptr, self.col_ind, self.weights, self.facts)
    }

    /// The rows, as every reader of a graph takes them.
    pub fn rows(&self) -> Rows<'_> {
        Rows::compact(self.n, self.k, &self.row_ptr, &self.col_ind, &self.weights)
    }

    /// Number of vertices.
    pub fn n(&self) -> usize {
        self.n
    }

    /// Number of edges.
    pub fn m(&self) -> usize {
        self.col_ind.len()
    }

    /// Number of objectives (weight columns).
    pub fn k(&self) -> usize {
        self.k
    }

    /// Row offsets: `n + 1` entries, `row_ptr[0] == 0`, non-decreasing, `row_ptr[n] == m`.
    pub fn row_ptr(&self) -> &[i32] {
        &self.row_ptr
    }

    /// Head vertex of every edge (`m` entries in `[0, n)`), row by row.
    pub fn col_ind(&self) -> &[i32] {
        &self.col_ind
    }

    /// All columns, objective-major.
    pub fn weights(&self) -> &[i32] {
        &self.weights
    }

    /// The weight column of objective `j`.
    pub fn column(&self, j: usize) -> &[i32] {
        let m = self.m();
        &self.weights[j * m..(j + 1) * m]
    }

    /// The edge index range of row `u`.
    #[inline]
    pub fn row(&self, u: usize) -> std::ops::Range<usize> {
        self.row_ptr[u] as usize..self.row_ptr[u + 1] as usize
    }

    /// Edge-major copy of the weights (`[e*k + j]`), as the text files store them.
    pub fn weights_edge_major(&self) -> Vec<i32> {
        let (m, k) = (self.m(), self.k);
        let mut out = vec![0i32; m * k];
        for j in 0..k {
            for e in 0..m {
                out[e * k + j] = self.weights[j * m + e];
            }
        }
        out
    }

    /// The largest weight of objective `j` (at least 1, also for an edgeless graph).
    pub fn max_weight(&self, j: usize) -> i32 {
        self.facts[j].max
    }

    /// The sum of the weights of objective `j`.
    pub fn weight_sum(&self, j: usize) -> i64 {
        self.facts[j].sum
    }

    /// The first edge `u -> v` in row `u` (CSR order), if any.
    pub fn first_edge(&self, u: usize, v: i32) -> Option<usize> {
        self.row(u).find(|&e| self.col_ind[e] == v)
    }
}

pub(crate) fn check_objectives(k: usize) -> Result<()> {
    if k == 0 || k > MAX_OBJECTIVES {
        return Err(Error::invalid(format!(
            "dyng: K = {k} objectives; a graph needs 1 to {MAX_OBJECTIVES}"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{ColumnFacts, FACTS_CHUNK};
    use crate::io::generators::rng::Mt19937;

    #[test]
    fn facts_of_a_slice_are_those_of_its_weights_one_by_one() {
        let mut rng = Mt19937::new(7);
        // Empty, below 1 only, one chunk, and several, with the largest weight first met in a
        // later chunk and tied across chunks.
        let mut cases = vec![vec![], vec![0, -3]];
        for len in [5, FACTS_CHUNK, 3 * FACTS_CHUNK + 11] {
            for top in [3, 1 << 20] {
                let mut w: Vec<i32> = (0..len).map(|_| (rng.next_u32() % top) as i32 + 1).collect();
                w[len - 1] = top as i32 + 5;
                if len > FACTS_CHUNK {
                    w[FACTS_CHUNK / 2] = top as i32 + 5;
                    w[len / 2] = top as i32 + 5;
                }
                cases.push(w);
            }
        }
        for w in cases {
            assert_eq!(ColumnFacts::of_slice(&w), ColumnFacts::of(w.iter().copied()), "{} weights", w.len());
        }
    }
}
