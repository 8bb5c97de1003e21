//! Path costs of the MOSP tree in every objective of the graph.
//!
//! Each tree edge p -> v costs the weights of the FIRST p -> v edge of row p in the updated graph
//! (CSR order), not the cheapest parallel copy, exactly as the originals do.

use crate::error::{Error, Result};
use crate::graph::Csr;
use crate::DISTANCE_INF;

/// Costs `n x KG`, vertex-major; unreached vertices have `DISTANCE_INF` in every column.
pub(crate) fn path_costs(g: &Csr, tree: &[i32], source: usize, costs: &mut Vec<i64>) -> Result<()> {
    let (n, kg) = (g.n(), g.k());
    costs.clear();
    costs.resize(n * kg, DISTANCE_INF);
    // Children lists by counting sort (ascending child id per parent), walked breadth-first.
    let mut start = vec![0u32; n + 1];
    for v in 0..n {
        if v != source && tree[v] >= 0 {
            start[tree[v] as usize + 1] += 1;
        }
    }
    for u in 0..n {
        start[u + 1] += start[u];
    }
    let mut cursor = start.clone();
    let mut children = vec![0u32; start[n] as usize];
    for (v, &p) in tree.iter().enumerate().take(n) {
        if v != source && p >= 0 {
            let p = p as usize;
            children[cursor[p] as usize] = v as u32;
            cursor[p] += 1;
        }
    }
    costs[source * kg..source * kg + kg].fill(0);
    let mut queue = vec![source as u32];
    let mut head = 0;
    while head < queue.len() {
        let p = queue[head] as usize;
        head += 1;
        for &v in &children[start[p] as usize..start[p + 1] as usize] {
            let e = g.first_edge(p, v as i32).ok_or_else(|| {
                Error::invalid(format!(
                    "dyng: an edge of the MOSP tree is missing from the updated graph ({p} -> {v}; do the initial trees belong to this graph?)"
                ))
            })?;
            for j in 0..kg {
                costs[v as usize * kg + j] = costs[p * kg + j] + g.column(j)[e] as i64;
            }
            queue.push(v);
        }
    }
    Ok(())
}
