//! Path costs of the MOSP tree in every objective of the graph.
//!
//! Each tree edge p -> v costs the weights of the FIRST p -> v edge of row p in the updated graph
//! (CSR order), not the cheapest parallel copy, exactly as the originals do.

use crate::error::{Error, Result};
use crate::graph::Csr;
use crate::DISTANCE_INF;

/// Costs `n x KG`, vertex-major; unreached vertices have `DISTANCE_INF` in every column.
///
/// The vertices are taken in id order, each walking up the tree to the source or to a vertex whose
/// costs are known, then adding the edges' weights down the walked path. Graphs whose ids follow
/// their geometry (road networks, grids) find most parents already known and next to the vertex
/// in memory; a breadth-first walk from the source, which visited the ids in wavefronts, waited
/// on a cache miss per array at every vertex (57 ms on the 1000^2 grid, K = 3).
pub(crate) fn path_costs(g: &Csr, tree: &[i32], source: usize, costs: &mut Vec<i64>) -> Result<()> {
    let (n, kg) = (g.n(), g.k());
    costs.clear();
    costs.resize(n * kg, DISTANCE_INF);
    costs[source * kg..source * kg + kg].fill(0);
    let known = |costs: &[i64], x: usize| x == source || costs[x * kg] != DISTANCE_INF;
    let mut path = Vec::new();
    for v in 0..n {
        let mut x = v;
        while !known(costs, x) && tree[x] >= 0 {
            if path.len() == n {
                return Err(Error::Internal("dyng: the MOSP tree has a parent cycle".into()));
            }
            path.push(x);
            x = tree[x] as usize;
        }
        if !known(costs, x) {
            // Below a vertex the tree does not reach: unreached too.
            path.clear();
            continue;
        }
        while let Some(y) = path.pop() {
            let p = tree[y] as usize;
            let e = g.first_edge(p, y as i32).ok_or_else(|| {
                Error::invalid(format!(
                    "dyng: an edge of the MOSP tree is missing from the updated graph ({p} -> {y}; do the initial trees belong to this graph?)"
                ))
            })?;
            for j in 0..kg {
                costs[y * kg + j] = costs[p * kg + j] + g.column(j)[e] as i64;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::rng::Mt19937;

    /// Costs by a breadth-first walk of the children from the source.
    fn breadth_first(g: &Csr, tree: &[i32], source: usize) -> Vec<i64> {
        let (n, kg) = (g.n(), g.k());
        let mut costs = vec![DISTANCE_INF; n * kg];
        costs[source * kg..source * kg + kg].fill(0);
        let mut queue = vec![source];
        while let Some(p) = queue.pop() {
            for v in (0..n).filter(|&v| v != source && tree[v] == p as i32) {
                let e = g.first_edge(p, v as i32).unwrap();
                for j in 0..kg {
                    costs[v * kg + j] = costs[p * kg + j] + g.column(j)[e] as i64;
                }
                queue.push(v);
            }
        }
        costs
    }

    #[test]
    fn costs_follow_the_first_copy_of_each_tree_edge_in_any_id_order() {
        // A random tree on shuffled ids (parents of higher and lower ids), every tree edge present
        // twice with other weights on the second copy, plus random edges; vertex 7 unreached,
        // with a subtree below it.
        let n = 300;
        let mut rng = Mt19937::new(11);
        let mut ids: Vec<usize> = (0..n).collect();
        for i in (1..n).rev() {
            ids.swap(i, rng.next_u32() as usize % (i + 1));
        }
        let mut tree = vec![-1i32; n];
        for i in 1..n {
            tree[ids[i]] = ids[rng.next_u32() as usize % i] as i32;
        }
        let source = ids[0];
        let (src, dst): (Vec<i32>, Vec<i32>) = (0..n).filter(|&v| tree[v] >= 0).map(|v| (tree[v], v as i32)).unzip();
        let mut edges: Vec<(i32, i32, [i32; 2])> = Vec::new();
        for (&u, &v) in src.iter().zip(&dst) {
            edges.push((u, v, [1 + (rng.next_u32() % 20) as i32, 1 + (rng.next_u32() % 20) as i32]));
        }
        for (&u, &v) in src.iter().zip(&dst) {
            edges.push((u, v, [1000, 1000]));
            edges.push((u, (v + 1) % n as i32, [1 + (rng.next_u32() % 50) as i32, 7]));
        }
        let unreached = if ids[0] == 7 { 8 } else { 7 };
        tree[unreached] = -1;
        let csr = Csr::from_edges(
            n,
            2,
            &edges.iter().map(|e| e.0).collect::<Vec<_>>(),
            &edges.iter().map(|e| e.1).collect::<Vec<_>>(),
            &edges.iter().flat_map(|e| e.2).collect::<Vec<_>>(),
        )
        .unwrap();
        let mut costs = Vec::new();
        path_costs(&csr, &tree, source, &mut costs).unwrap();
        let expected = breadth_first(&csr, &tree, source);
        assert_eq!(costs, expected);
        assert_eq!(costs[unreached * 2], DISTANCE_INF);
        assert!(costs.iter().filter(|&&c| c == DISTANCE_INF).count() >= 2, "the unreached subtree too");
        // First copies weigh at most 20 and the tree is shallow; a second copy weighs 1000.
        assert!(costs.iter().all(|&c| c == DISTANCE_INF || c < 1000), "first copies only");
    }
}
