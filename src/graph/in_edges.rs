//! The reverse graph: for every vertex v the tails u of the edges u -> v, with their weights.
//!
//! Built on first use for a graph state. After a batch, when a repair first needs it, the batch is
//! applied to the previous state's reverse graph if that one was built (`apply_reversed_into`),
//! else it is built afresh. A fresh build lists row v's tails in ascending (u, position in row u)
//! order; an applied one keeps the order of the survivors and appends the new edges, so the
//! copies of one edge u -> v are always in their order in row u, while different tails may come
//! in any order. Every consumer is order-insensitive (a minimum over packed words, ties to the
//! lowest tail). Weight columns are objective-major so that one objective's pull pass streams
//! one column.

use super::csr::Csr;

#[derive(Debug, Clone, Default)]
pub struct InEdges {
    pub(crate) row_ptr: Vec<i32>,
    pub(crate) tails: Vec<i32>,
    pub(crate) weights: Vec<i32>,
}

impl InEdges {
    pub fn build(g: &Csr) -> Self {
        Self::build_into(g, InEdges::default())
    }

    /// [`InEdges::build`], into the arrays of `spare` (a reverse graph no longer needed): fresh
    /// arrays are pages to fault in while they are written.
    pub fn build_into(g: &Csr, spare: InEdges) -> Self {
        let (n, m, k) = (g.n(), g.m(), g.k());
        let InEdges { mut row_ptr, mut tails, mut weights } = spare;
        super::resize_for_overwrite(&mut row_ptr, n + 1);
        row_ptr.fill(0);
        for &v in g.col_ind() {
            row_ptr[v as usize + 1] += 1;
        }
        for v in 0..n {
            row_ptr[v + 1] += row_ptr[v];
        }
        // `row_ptr[v]` serves as v's cursor while placing, which leaves it at v + 1's start; one
        // shift restores it (no cursor array). Each weight column is then placed in a pass of its
        // own (one pass placing every column measured 12 % slower on usroads: K + 1 scattered
        // write streams at once).
        super::resize_for_overwrite(&mut tails, m);
        let mut slot_of = vec![0u32; m];
        for u in 0..n {
            for e in g.row(u) {
                let v = g.col_ind()[e] as usize;
                let s = row_ptr[v] as usize;
                row_ptr[v] += 1;
                tails[s] = u as i32;
                slot_of[e] = s as u32;
            }
        }
        row_ptr.copy_within(0..n, 1);
        row_ptr[0] = 0;
        super::resize_for_overwrite(&mut weights, m * k);
        for j in 0..k {
            let col = g.column(j);
            let out = &mut weights[j * m..(j + 1) * m];
            for e in 0..m {
                out[slot_of[e] as usize] = col[e];
            }
        }
        InEdges { row_ptr, tails, weights }
    }

    /// The in-edge index range of vertex `v`.
    #[inline]
    pub fn row(&self, v: usize) -> std::ops::Range<usize> {
        self.row_ptr[v] as usize..self.row_ptr[v + 1] as usize
    }

    pub fn tails(&self) -> &[i32] {
        &self.tails
    }

    /// The in-edge weight column of objective `j`.
    pub fn column(&self, j: usize) -> &[i32] {
        let m = self.tails.len();
        &self.weights[j * m..(j + 1) * m]
    }

    pub fn bytes(&self) -> usize {
        4 * (self.row_ptr.len() + self.tails.len() + self.weights.len())
    }

    /// Bytes allocated (the arrays' capacities).
    pub(crate) fn capacity_bytes(&self) -> usize {
        4 * (self.row_ptr.capacity() + self.tails.capacity() + self.weights.capacity())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reverse graph by definition: per head, the (tail, weights) of its in-edges in
    /// ascending (tail, position in the tail's row) order.
    fn by_definition(g: &Csr) -> Vec<Vec<(i32, Vec<i32>)>> {
        let mut rows = vec![Vec::new(); g.n()];
        for u in 0..g.n() {
            for e in g.row(u) {
                let w = (0..g.k()).map(|j| g.column(j)[e]).collect();
                rows[g.col_ind()[e] as usize].push((u as i32, w));
            }
        }
        rows
    }

    fn as_rows(r: &InEdges, k: usize) -> Vec<Vec<(i32, Vec<i32>)>> {
        (0..r.row_ptr.len() - 1)
            .map(|v| r.row(v).map(|s| (r.tails()[s], (0..k).map(|j| r.column(j)[s]).collect())).collect())
            .collect()
    }

    #[test]
    fn every_in_edge_lands_in_its_slot_for_odd_and_even_k() {
        // Parallel edges, a self loop, a vertex with no in-edges (0) and one with no out-edges.
        let (src, dst) = ([0, 0, 1, 1, 2, 3, 3, 3, 4, 1], [1, 2, 2, 2, 3, 1, 4, 3, 1, 4]);
        for k in 1..=4 {
            let w: Vec<i32> = (0..src.len() * k).map(|i| 7 + 3 * i as i32).collect();
            let g = Csr::from_edges(6, k, &src, &dst, &w).unwrap();
            let fresh = InEdges::build(&g);
            assert_eq!(as_rows(&fresh, k), by_definition(&g), "k = {k}");
            // Into the larger arrays of another graph's reverse graph.
            let big = Csr::from_edges(9, k, &[0; 30], &[1; 30], &vec![1; 30 * k]).unwrap();
            let reused = InEdges::build_into(&g, InEdges::build(&big));
            assert_eq!(as_rows(&reused, k), by_definition(&g), "k = {k}, reused arrays");
        }
    }
}
