//! The oracle: a plain binary-heap Dijkstra on one objective column with the lowest-id tie rule.
//!
//! It is deliberately simple, sequential and independent of the update engines, so that tests can
//! compare every engine against it and benchmarks can use it as the from-scratch baseline. The
//! parent of v is the lowest-id in-neighbour u with `d[u] + w(u, v) = d[v]`, over all parallel copies.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::rows::Rows;
use crate::distance::DISTANCE_INF;

/// Shortest distances and lowest-id parents from `source` in objective `objective` of `g`.
///
/// Unreachable vertices get `DISTANCE_INF` and parent -1; the source gets 0 and -1. An objective or
/// source out of range leaves every vertex unreachable (the oracle never panics on bad input).
pub fn dijkstra<'a>(g: impl Into<Rows<'a>>, objective: usize, source: usize) -> (Vec<i64>, Vec<i32>) {
    let g: Rows<'a> = g.into();
    let n = g.n();
    let mut dist = vec![DISTANCE_INF; n];
    let mut parent = vec![-1i32; n];
    if objective >= g.k() || source >= n {
        return (dist, parent);
    }
    let weights = g.column(objective);
    let heads = g.heads();
    let mut done = vec![false; n];
    let mut heap = BinaryHeap::new();
    dist[source] = 0;
    heap.push(Reverse((0i64, source as u32)));
    while let Some(Reverse((d, u))) = heap.pop() {
        let u = u as usize;
        if done[u] {
            continue; // a stale heap entry
        }
        done[u] = true;
        for e in g.row(u) {
            let x = heads[e] as usize;
            let nd = d + weights[e] as i64;
            // Weights are >= 1, so every tight in-neighbour of x is settled before x: comparing
            // ids on equal distances here yields the lowest-id parent without a second pass.
            if nd < dist[x] {
                dist[x] = nd;
                parent[x] = u as i32;
                heap.push(Reverse((nd, x as u32)));
            } else if nd == dist[x] && (u as i32) < parent[x] && x != source {
                parent[x] = u as i32;
            }
        }
    }
    (dist, parent)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::csr::{Csr, WeightLayout};

    /// The thesis example of reference-behaviour B.1.
    fn thesis() -> Csr {
        let row_ptr = vec![0, 2, 3, 5, 6, 9, 10, 10];
        let col_ind = vec![1, 2, 3, 1, 3, 4, 1, 5, 6, 6];
        let w = [
            2, 1, 5, 4, 1, 1, 2, 4, 2, 10, 15, 2, 5, 16, 3, 1, 1, 1, 4, 3, 2, 1, 2, 2, 5, 6, 2, 1,
            1, 1,
        ];
        Csr::from_arrays(7, 3, row_ptr, col_ind, &w, WeightLayout::EdgeMajor).expect("valid")
    }

    #[test]
    fn thesis_initial_trees() {
        let g = thesis();
        let expect: [(&[i64], &[i32]); 3] = [
            (&[0, 2, 4, 4, 5, 6, 7], &[-1, 0, 0, 1, 3, 4, 5]),
            (&[0, 1, 1, 5, 6, 8, 9], &[-1, 0, 0, 1, 3, 4, 5]),
            (&[0, 3, 1, 4, 5, 7, 7], &[-1, 2, 0, 2, 3, 4, 4]),
        ];
        for (k, (d, p)) in expect.iter().enumerate() {
            let (dist, parent) = dijkstra(&g, k, 0);
            assert_eq!(&dist[..], *d, "objective {k}");
            assert_eq!(&parent[..], *p, "objective {k}");
        }
    }

    #[test]
    fn ties_pick_lowest_id_and_unreachable_is_inf() {
        // 0->2 (1), 0->1 (1), 2->3 (1), 1->3 (1); vertex 4 unreachable. Parent of 3 must be 1.
        let g = Csr::from_arrays(
            5,
            1,
            vec![0, 2, 3, 4, 4, 4],
            vec![2, 1, 3, 3],
            &[1, 1, 1, 1],
            WeightLayout::EdgeMajor,
        )
        .expect("valid");
        let (d, p) = dijkstra(&g, 0, 0);
        assert_eq!(d, [0, 1, 1, 2, DISTANCE_INF]);
        assert_eq!(p, [-1, 0, 0, 1, -1]);
        let (d, p) = dijkstra(&g, 1, 0);
        assert!(d.iter().all(|&x| x == DISTANCE_INF) && p.iter().all(|&x| x == -1));
    }
}
