//! A batch of edge changes: insertions (upserts carrying K weights) and deletions.
//!
//! The batch is plain data in the originals' layout (edge-major weights: insertion `i` carries its K
//! weights at `[i*K, i*K+K)`). [`BatchView`] borrows the same arrays, so callers that hold their own
//! buffers (the C ABI) pass them without a copy. Semantics are those of `apply` (MOSP's rules).

use crate::error::{Error, Result};

/// An owned change batch.
///
/// Deletions are applied first (each removes the first copy of its edge in the tail's row, if
/// any), then insertions, which are upserts: the first copy of an existing edge takes the new
/// weights (the last insertion of a pair wins), otherwise the edge is appended to its row.
///
/// ```
/// use dyng::{Batch, ErrorKind};
///
/// let mut b = Batch::new(2);
/// b.insert(0, 1, &[3, 4]); // upsert 0 -> 1 with weights (3, 4)
/// b.delete(2, 0);
/// assert_eq!((b.num_insertions(), b.num_deletions()), (1, 1));
/// assert_eq!(b.ins_weights, [3, 4]);
///
/// // Checked against a graph's n and K when applied, or by hand:
/// assert!(b.view().validate(3, 2).is_ok());
/// let err = b.view().validate(2, 2).unwrap_err(); // vertex 2 is outside [0, 2)
/// assert_eq!(err.kind(), ErrorKind::InvalidArgument);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Batch {
    /// Weights per insertion (the graph's objective count).
    pub k: usize,
    /// Tail vertex of each insertion, in `[0, n)`.
    pub ins_src: Vec<i32>,
    /// Head vertex of each insertion, in `[0, n)`.
    pub ins_dst: Vec<i32>,
    /// Edge-major: `ins_weights[i*k + j]` is objective j of insertion i, in `[1, 2^31-1]`.
    pub ins_weights: Vec<i32>,
    /// Tail vertex of each deletion, in `[0, n)`.
    pub del_src: Vec<i32>,
    /// Head vertex of each deletion, in `[0, n)`.
    pub del_dst: Vec<i32>,
}

/// A borrowed change batch (same layout as [`Batch`]).
///
/// ```
/// use dyng::BatchView;
///
/// // Arrays the caller already holds: insert 0 -> 1 (weight 7), delete 1 -> 2.
/// let (src, dst, w) = ([0], [1], [7]);
/// let view = BatchView { k: 1, ins_src: &src, ins_dst: &dst, ins_weights: &w, del_src: &[1], del_dst: &[2] };
/// assert_eq!(view.insertion_weights(0), [7]);
/// assert!(view.validate(3, 1).is_ok());
/// ```
#[derive(Debug, Clone, Copy)]
pub struct BatchView<'a> {
    /// Weights per insertion (the graph's objective count).
    pub k: usize,
    /// Tail vertex of each insertion.
    pub ins_src: &'a [i32],
    /// Head vertex of each insertion.
    pub ins_dst: &'a [i32],
    /// Edge-major: `ins_weights[i*k + j]` is objective j of insertion i.
    pub ins_weights: &'a [i32],
    /// Tail vertex of each deletion.
    pub del_src: &'a [i32],
    /// Head vertex of each deletion.
    pub del_dst: &'a [i32],
}

impl Batch {
    /// An empty batch for a graph with `k` objectives.
    pub fn new(k: usize) -> Self {
        Batch {
            k,
            ..Default::default()
        }
    }

    /// Appends the insertion (upsert) `u -> v` with the given `k` weights.
    pub fn insert(&mut self, u: i32, v: i32, weights: &[i32]) {
        self.ins_src.push(u);
        self.ins_dst.push(v);
        self.ins_weights.extend_from_slice(weights);
    }

    /// Appends the deletion of `u -> v` (the first alive copy).
    pub fn delete(&mut self, u: i32, v: i32) {
        self.del_src.push(u);
        self.del_dst.push(v);
    }

    /// Number of insertions (upserts).
    pub fn num_insertions(&self) -> usize {
        self.ins_src.len()
    }

    /// Number of deletions.
    pub fn num_deletions(&self) -> usize {
        self.del_src.len()
    }

    /// True when the batch has neither insertions nor deletions.
    pub fn is_empty(&self) -> bool {
        self.ins_src.is_empty() && self.del_src.is_empty()
    }

    /// Borrows the batch.
    pub fn view(&self) -> BatchView<'_> {
        BatchView {
            k: self.k,
            ins_src: &self.ins_src,
            ins_dst: &self.ins_dst,
            ins_weights: &self.ins_weights,
            del_src: &self.del_src,
            del_dst: &self.del_dst,
        }
    }
}

impl<'a> BatchView<'a> {
    /// Number of insertions (upserts).
    pub fn num_insertions(&self) -> usize {
        self.ins_src.len()
    }

    /// Number of deletions.
    pub fn num_deletions(&self) -> usize {
        self.del_src.len()
    }

    /// The K weights of insertion `i`.
    pub fn insertion_weights(&self, i: usize) -> &'a [i32] {
        &self.ins_weights[i * self.k..(i + 1) * self.k]
    }

    /// Checks every rule that does not depend on the graph beyond its size `n` and objective count
    /// `k`: array lengths, vertex ranges and weight ranges. Names the first offending change.
    pub fn validate(&self, n: usize, k: usize) -> Result<()> {
        if self.k != k {
            return Err(Error::invalid(format!(
                "dyng: the batch has {} weights per insertion but the graph has K = {k} objectives",
                self.k
            )));
        }
        let ni = self.ins_src.len();
        if self.ins_dst.len() != ni || self.ins_weights.len() != ni * k {
            return Err(Error::invalid(format!(
                "dyng: batch insertion arrays disagree: {} sources, {} targets, {} weights (want {} = {ni} x K)",
                ni,
                self.ins_dst.len(),
                self.ins_weights.len(),
                ni * k
            )));
        }
        if self.del_dst.len() != self.del_src.len() {
            return Err(Error::invalid(format!(
                "dyng: batch deletion arrays disagree: {} sources, {} targets",
                self.del_src.len(),
                self.del_dst.len()
            )));
        }
        let in_range = |x: i32| x >= 0 && (x as usize) < n;
        for i in 0..ni {
            for (what, x) in [("tail", self.ins_src[i]), ("head", self.ins_dst[i])] {
                if !in_range(x) {
                    return Err(Error::invalid(format!(
                        "dyng: batch insertion {i} has {what} vertex {x} outside [0, n = {n})"
                    )));
                }
            }
            for (j, &w) in self.insertion_weights(i).iter().enumerate() {
                if w < 1 {
                    return Err(Error::invalid(format!(
                        "dyng: batch insertion {i} ({} -> {}) has weight {w} for objective {j}; weights must be integers in [1, 2^31-1]",
                        self.ins_src[i], self.ins_dst[i]
                    )));
                }
            }
        }
        for i in 0..self.del_src.len() {
            for (what, x) in [("tail", self.del_src[i]), ("head", self.del_dst[i])] {
                if !in_range(x) {
                    return Err(Error::invalid(format!(
                        "dyng: batch deletion {i} has {what} vertex {x} outside [0, n = {n})"
                    )));
                }
            }
        }
        Ok(())
    }
}
