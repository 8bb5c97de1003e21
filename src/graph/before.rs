//! The rows a batch is about to change, kept as they were before it: with the rows it leaves
//! alone, which stay as they are until the batch is committed, they are the graph before the
//! batch, for a check of an adopted tree deferred to the update that needs it
//! (`SsspResult::from_arrays_unverified`).

use super::{BatchView, Rows};
use crate::sssp::prefetch::prefetch;

/// Rows between asking for a row's entries and copying them.
const AHEAD: usize = 16;

/// Rows of the graph before a batch, where the batch changes them (the rows of its tails).
pub(crate) struct RowsBefore {
    /// Bit u: row u is kept here.
    kept: Vec<u64>,
    /// The kept rows' vertices, ascending, and each one's entries in `heads`/`weights`.
    tails: Vec<u32>,
    row_ptr: Vec<u32>,
    heads: Vec<i32>,
    /// Objective-major: `k` columns of `heads.len()` weights.
    weights: Vec<i32>,
}

impl RowsBefore {
    /// The rows of `rows` that `batch` (validated against them) changes, as they are now.
    pub(crate) fn of(rows: &Rows<'_>, batch: &BatchView<'_>) -> Self {
        let mut tails: Vec<u32> = batch.ins_src.iter().chain(batch.del_src).map(|&u| u as u32).collect();
        tails.sort_unstable();
        tails.dedup();
        let mut kept = vec![0u64; rows.n().div_ceil(64)];
        // The rows lie anywhere in the graph's arrays: each array's entries are asked for well
        // ahead (a batch of 50K changes on the 1000^2 grid: 22 ms copied without, waiting on a
        // cache miss per array and row).
        let (bounds, stride) = rows.bounds();
        let ranges: Vec<std::ops::Range<usize>> = tails
            .iter()
            .enumerate()
            .map(|(i, &u)| {
                if let Some(&a) = tails.get(i + AHEAD) {
                    prefetch(&bounds[a as usize * stride]);
                }
                kept[u as usize / 64] |= 1 << (u % 64);
                rows.row(u as usize)
            })
            .collect();
        let mut row_ptr = Vec::with_capacity(tails.len() + 1);
        row_ptr.push(0);
        let mut heads = Vec::new();
        let copy = |column: &[i32], out: &mut Vec<i32>| {
            for (i, r) in ranges.iter().enumerate() {
                if let Some(x) = ranges.get(i + AHEAD).and_then(|a| column.get(a.start)) {
                    prefetch(x);
                }
                out.extend_from_slice(&column[r.clone()]);
            }
        };
        copy(rows.heads(), &mut heads);
        row_ptr.extend(ranges.iter().scan(0u32, |at, r| {
            *at += r.len() as u32;
            Some(*at)
        }));
        let mut weights = Vec::with_capacity(heads.len() * rows.k());
        for j in 0..rows.k() {
            copy(rows.column(j), &mut weights);
        }
        RowsBefore { kept, tails, row_ptr, heads, weights }
    }

    /// Row `u`'s heads and weights of objective `j` before the batch, where the batch changes it.
    #[inline]
    pub(crate) fn row(&self, u: usize, j: usize) -> Option<(&[i32], &[i32])> {
        if self.kept.get(u / 64).is_none_or(|w| w >> (u % 64) & 1 == 0) {
            return None;
        }
        let i = self.tails.binary_search(&(u as u32)).ok()?;
        let (s, e) = (self.row_ptr[i] as usize, self.row_ptr[i + 1] as usize);
        let m = self.heads.len();
        Some((&self.heads[s..e], &self.weights[j * m + s..j * m + e]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::{Batch, Csr, Graph};

    #[test]
    fn the_rows_a_batch_changes_read_as_before_it_the_others_as_they_are() {
        // 0 -> 1 (1, 10), 0 -> 2 (2, 20), 1 -> 2 (3, 30), 2 -> 0 (4, 40).
        let csr = Csr::from_edges(3, 2, &[0, 0, 1, 2], &[1, 2, 2, 0], &[1, 10, 2, 20, 3, 30, 4, 40]).unwrap();
        let mut g = Graph::new(csr);
        let mut b = Batch::new(2);
        b.delete(0, 1);
        b.insert(2, 1, &[5, 50]);
        b.insert(0, 2, &[6, 60]);
        let before = RowsBefore::of(&g.rows(), &b.view());
        g.apply_uncommitted(&b.view()).unwrap();
        assert_eq!(before.row(0, 0), Some((&[1, 2][..], &[1, 2][..])));
        assert_eq!(before.row(0, 1), Some((&[1, 2][..], &[10, 20][..])));
        assert_eq!(before.row(2, 1), Some((&[0][..], &[40][..])));
        assert_eq!(before.row(1, 0), None, "row 1 is not the batch's: read it off the graph");
        let rows = g.rows();
        assert_eq!(&rows.heads()[rows.row(1)], &[2]);
    }
}
