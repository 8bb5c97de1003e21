//! The reverse graph: for every vertex v the tails u of the edges u -> v, with their weights.
//!
//! Built on first use for a graph state and rebuilt (lazily) after a batch. Tails appear in ascending
//! (u, position in row u) order, which makes the single-threaded engine's pull order reproducible;
//! every consumer is order-insensitive anyway (minimum over packed words). Weight columns are
//! objective-major so that one objective's pull pass streams one column.

use super::csr::Csr;

#[derive(Debug, Clone)]
pub struct InEdges {
    pub(crate) row_ptr: Vec<i32>,
    pub(crate) tails: Vec<i32>,
    pub(crate) weights: Vec<i32>,
}

impl InEdges {
    pub fn build(g: &Csr) -> Self {
        let (n, m, k) = (g.n(), g.m(), g.k());
        let mut row_ptr = vec![0i32; n + 1];
        for &v in g.col_ind() {
            row_ptr[v as usize + 1] += 1;
        }
        for v in 0..n {
            row_ptr[v + 1] += row_ptr[v];
        }
        let mut cursor: Vec<i32> = row_ptr[..n].to_vec();
        let mut tails = vec![0i32; m];
        let mut slot_of = vec![0u32; m];
        for u in 0..n {
            for e in g.row(u) {
                let v = g.col_ind()[e] as usize;
                let s = cursor[v] as usize;
                cursor[v] += 1;
                tails[s] = u as i32;
                slot_of[e] = s as u32;
            }
        }
        let mut weights = vec![0i32; m * k];
        for j in 0..k {
            let col = g.column(j);
            let out = &mut weights[j * m..(j + 1) * m];
            for e in 0..m {
                out[slot_of[e] as usize] = col[e];
            }
        }
        InEdges {
            row_ptr,
            tails,
            weights,
        }
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
}
