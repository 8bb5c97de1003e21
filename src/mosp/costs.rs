//! Path costs of the MOSP tree in every objective of the graph.
//!
//! Each tree edge p -> v costs the weights of the FIRST p -> v edge of row p in the updated graph
//! (CSR order), not the cheapest parallel copy, exactly as the originals do.

use super::combine::reserve_total;
use super::combined_graph::CombinedGraph;
use crate::error::{Error, Result};
use crate::graph::{BatchView, Rows};
use crate::sssp::run::atomic_i64;
use crate::sssp::exec::Exec;
use crate::sssp::prefetch::{prefetch, AHEAD};
use std::sync::atomic::{AtomicI64, Ordering::{Acquire, Relaxed, Release}};
use crate::distance::DISTANCE_INF;

/// Costs `n x KG`, vertex-major; unreached vertices have `DISTANCE_INF` in every column.
///
/// The vertices are taken in id order, each walking up the tree to the source or to a vertex whose
/// costs are known, then adding the edges' weights down the walked path. Graphs whose ids follow
/// their geometry (road networks, grids) find most parents already known and next to the vertex
/// in memory; a breadth-first walk from the source, which visited the ids in wavefronts, waited
/// on a cache miss per array at every vertex.
///
/// A parallel executor takes chunks of ids on every thread. A walk that meets a vertex another
/// thread is writing, or has not reached yet, walks on past it and writes it too: both write
/// the same sums, and a vertex's first column, stored last (release), says its costs are all
/// there.
pub(crate) fn path_costs<E: Exec>(exec: &E, g: &Rows<'_>, tree: &[i32], source: usize, costs: &mut Vec<i64>) -> Result<()> {
    path_costs_in_chunks(exec, CHUNK, g, tree, source, costs)
}

/// [`path_costs`] with `chunk` ids a time on each thread.
fn path_costs_in_chunks<E: Exec>(exec: &E, chunk: usize, g: &Rows<'_>, tree: &[i32], source: usize, costs: &mut Vec<i64>) -> Result<()> {
    let (n, kg) = (g.n(), g.k());
    costs.clear();
    costs.resize(n * kg, DISTANCE_INF);
    costs[source * kg..source * kg + kg].fill(0);
    let cells = atomic_i64(costs);
    let failed = parking_lot::Mutex::new(None);
    exec.for_chunks(n, chunk, |r| {
        if let Err(e) = costs_of(g, tree, source, cells, r) {
            failed.lock().get_or_insert(e);
        }
    });
    failed.into_inner().map_or(Ok(()), Err)
}

/// Vertices whose ids a thread takes at a time in [`path_costs`].
const CHUNK: usize = 4096;

/// The walks of [`path_costs`] from the vertices `r`.
fn costs_of(g: &Rows<'_>, tree: &[i32], source: usize, cells: &[AtomicI64], r: std::ops::Range<usize>) -> Result<()> {
    let (n, kg) = (g.n(), g.k());
    let known = |x: usize| x == source || cells[x * kg].load(Acquire) != DISTANCE_INF;
    // The walked path: on the stack, where a walk on a graph whose ids follow its geometry takes
    // a step or two; longer walks go on in `spill`, allocated only for them.
    let mut near = [0i32; 64];
    let mut spill = Vec::new();
    let ((bounds, stride), col) = (g.bounds(), g.heads());
    for v in r {
        // Where ids do not follow the geometry (the random geometric graph) every parent's
        // costs and row are cache misses: asked for ahead, the row's start once its bounds have
        // had time to arrive.
        if let Some(&p) = tree.get(v + 2 * AHEAD) {
            if p >= 0 {
                prefetch(&bounds[p as usize * stride]);
                prefetch(&cells[p as usize * kg]);
            }
        }
        if let Some(&p) = tree.get(v + AHEAD) {
            if p >= 0 {
                let s = bounds[p as usize * stride] as usize;
                if let Some(c) = col.get(s) {
                    prefetch(c);
                    for j in 0..kg {
                        prefetch(&g.column(j)[s]);
                    }
                }
            }
        }
        let (mut x, mut len) = (v, 0);
        while !known(x) && tree[x] >= 0 {
            if len == n {
                return Err(Error::Internal("dyng: the MOSP tree has a parent cycle".into()));
            }
            match near.get_mut(len) {
                Some(slot) => *slot = x as i32,
                None => spill.push(x as i32),
            }
            len += 1;
            x = tree[x] as usize;
        }
        if known(x) {
            // Down the path, the top first.
            for &y in spill.iter().rev().chain(near[..len.min(near.len())].iter().rev()) {
                let y = y as usize;
                cost_from_parent(g, cells, tree[y] as usize, y)?;
            }
        }
        // Else below a vertex the tree does not reach: unreached too.
        spill.clear();
    }
    Ok(())
}

/// Sorts `roots` (vertex ids) by (combined distance, vertex), ids left in the low 32 bits. Where
/// the distances span less than 2^32 - 1 (unreached last), each key is the distance above the
/// least one, then the id: sorting 8-byte keys took about half the time of (distance, id) pairs.
fn sort_roots(roots: &mut [u64], dist: &[i64]) {
    let (low, high) = roots.iter().map(|&v| dist[v as usize]).filter(|&d| d != DISTANCE_INF).fold((i64::MAX, i64::MIN), |(l, h), d| (l.min(d), h.max(d)));
    const UNREACHED: u64 = u32::MAX as u64;
    if low > high {
        // None reached: any order.
        roots.sort_unstable();
    } else if ((high - low) as u64) < UNREACHED {
        for r in roots.iter_mut() {
            let d = dist[*r as usize];
            let rank = if d == DISTANCE_INF { UNREACHED } else { (d - low) as u64 };
            *r |= rank << 32;
        }
        roots.sort_unstable();
    } else {
        roots.sort_unstable_by_key(|&v| (dist[v as usize], v));
    }
}

/// Scratch of [`update_path_costs`] (pooled with the combine step's).
#[derive(Default)]
pub(crate) struct CostsScratch {
    /// The vertices whose costs may have changed at them, as keys that sort by (combined
    /// distance, vertex): see [`sort_roots`].
    roots: Vec<u64>,
    /// One bit per vertex: its costs were written in this update.
    visited: Vec<u64>,
    stack: Vec<i32>,
}

impl CostsScratch {
    pub(crate) fn bytes(&self) -> usize {
        8 * self.roots.capacity() + 8 * self.visited.capacity() + 4 * self.stack.capacity()
    }

    /// Clears `v`'s bit.
    #[inline(always)]
    fn unvisit(&mut self, v: usize) {
        self.visited[v / 64] &= !(1u64 << (v % 64));
    }

    /// Marks `v` visited; false if it was already.
    #[inline(always)]
    fn visit(&mut self, v: usize) -> bool {
        let (word, bit) = (v / 64, 1u64 << (v % 64));
        if self.visited[word] & bit != 0 {
            return false;
        }
        self.visited[word] |= bit;
        true
    }
}

/// Costs of `v` from its parent `p`'s (which are final): the first p -> v edge's weights added.
/// `v`'s first column is written last, with release ordering: a thread that reads it finite (with
/// acquire) reads every column (see [`path_costs`]).
#[inline(always)]
fn cost_from_parent(g: &Rows<'_>, costs: &[AtomicI64], p: usize, v: usize) -> Result<()> {
    let kg = g.k();
    let e = g.first_edge(p, v as i32).ok_or_else(|| {
        Error::invalid(format!(
            "dyng: an edge of the MOSP tree is missing from the updated graph ({p} -> {v}; do the initial trees belong to this graph?)"
        ))
    })?;
    for j in (0..kg).rev() {
        let c = costs[p * kg + j].load(Relaxed) + g.column(j)[e] as i64;
        costs[v * kg + j].store(c, if j == 0 { Release } else { Relaxed });
    }
    Ok(())
}

/// Brings the costs of the MOSP tree before an update to those of `tree`, the tree after it,
/// rewriting only the subtrees whose paths changed.
///
/// `roots`: every vertex whose MOSP parent changed (the combined repair lists them); `batch`:
/// the update's changes, whose edges into a vertex from its MOSP parent may have changed that
/// vertex's first edge. The costs of a vertex outside their subtrees are unchanged: its path and
/// every edge on it are. The roots are taken by ascending combined distance (an ancestor before
/// its descendants: every combined weight is at least 1), each writing its subtree top-down
/// (children from the combined graph's out-rows, which hold every MOSP tree edge); a root
/// already written by an earlier one is skipped.
#[allow(clippy::too_many_arguments)]
pub(crate) fn update_path_costs(
    g: &Rows<'_>,
    combined: &CombinedGraph,
    tree: &[i32],
    combined_dist: &[i64],
    source: usize,
    roots: impl Iterator<Item = usize>,
    batch: &BatchView<'_>,
    costs: &mut [i64],
    s: &mut CostsScratch,
) -> Result<()> {
    let (n, kg) = (g.n(), g.k());
    debug_assert_eq!(costs.len(), n * kg);
    // Each list holds a vertex at most once (the bits mark the roots listed, then the vertices
    // visited), so n entries bound them, reserved once; the bits are all clear between updates
    // (the ones set are cleared from the lists), so nothing here is a pass over every vertex.
    s.roots.clear();
    reserve_total(&mut s.roots, n);
    s.stack.clear();
    reserve_total(&mut s.stack, n);
    if s.visited.len() != n.div_ceil(64) {
        s.visited.clear();
        s.visited.resize(n.div_ceil(64), 0);
    }
    let edges = batch.ins_src.iter().chain(batch.del_src).zip(batch.ins_dst.iter().chain(batch.del_dst));
    let from_batch = edges.filter(|&(&u, &v)| tree[v as usize] == u).map(|(_, &v)| v as usize);
    for v in roots.chain(from_batch) {
        if v != source && s.visit(v) {
            s.roots.push(v as u64);
        }
    }
    sort_roots(&mut s.roots, combined_dist);
    let roots = std::mem::take(&mut s.roots);
    for &r in &roots {
        s.unvisit(r as u32 as usize);
    }
    let costs = atomic_i64(costs);
    // The subtrees are written top-down in `stack`, taken in order as a queue: at the end it
    // lists every vertex written, whose bits are then cleared.
    let result = (|| {
        for &r in &roots {
            let r = r as u32 as usize;
            if !s.visit(r) {
                continue;
            }
            let p = tree[r];
            if p < 0 {
                // Unreached: so is every vertex below it, and none has it as parent.
                for c in &costs[r * kg..r * kg + kg] {
                    c.store(DISTANCE_INF, Relaxed);
                }
                s.stack.push(r as i32);
                continue;
            }
            let mut at = s.stack.len();
            s.stack.push(r as i32);
            cost_from_parent(g, costs, p as usize, r)?;
            while at < s.stack.len() {
                let x = s.stack[at];
                at += 1;
                for &c in combined.out_row(x as usize) {
                    if tree[c as usize] == x && s.visit(c as usize) {
                        s.stack.push(c);
                        cost_from_parent(g, costs, x as usize, c as usize)?;
                    }
                }
            }
        }
        Ok(())
    })();
    for i in 0..s.stack.len() {
        let v = s.stack[i] as usize;
        s.unvisit(v);
    }
    s.roots = roots;
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::Csr;
    use crate::io::generators::rng::Mt19937;

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
        let expected = breadth_first(&csr, &tree, source);
        let costs = every_way(&csr, &tree, source);
        assert_eq!(costs, expected);
        assert_eq!(costs[unreached * 2], DISTANCE_INF);
        assert!(costs.iter().filter(|&&c| c == DISTANCE_INF).count() >= 2, "the unreached subtree too");
        // First copies weigh at most 20 and the tree is shallow; a second copy weighs 1000.
        assert!(costs.iter().all(|&c| c == DISTANCE_INF || c < 1000), "first copies only");
    }

    /// The costs of `tree` by the sequential executor, checked equal to those of a parallel one
    /// taking chunks of 1, 7 and 64 ids (walks that pass into other threads' chunks).
    fn every_way(g: &Csr, tree: &[i32], source: usize) -> Vec<i64> {
        let mut costs = Vec::new();
        path_costs(&crate::sssp::exec::Sequential, &g.rows(), tree, source, &mut costs).unwrap();
        let res = crate::Resources::parallel(2).unwrap();
        for chunk in [1, 7, 64] {
            let mut again = vec![5; 3];
            crate::sssp::with_exec!(&res, |e| path_costs_in_chunks(e, chunk, &g.rows(), tree, source, &mut again)).unwrap();
            assert_eq!(again, costs, "chunks of {chunk}");
        }
        costs
    }

    #[test]
    fn a_walk_longer_than_its_stack_goes_on_in_the_spill() {
        // A path n-1 -> n-2 -> ... -> 0 from source n-1: vertex 0 walks 999 steps.
        let n = 1000;
        let (src, dst): (Vec<i32>, Vec<i32>) = (1..n as i32).map(|v| (v, v - 1)).unzip();
        let w: Vec<i32> = (1..n as i32).flat_map(|v| [v % 5 + 1, 2]).collect();
        let csr = Csr::from_edges(n, 2, &src, &dst, &w).unwrap();
        let tree: Vec<i32> = (0..n as i32).map(|v| if v == n as i32 - 1 { -1 } else { v + 1 }).collect();
        assert_eq!(every_way(&csr, &tree, n - 1), breadth_first(&csr, &tree, n - 1));
    }

    #[test]
    fn roots_sort_by_distance_then_id_whatever_the_distances_span() {
        // Narrow and wide spans (the packed keys and the pairs), unreached roots last.
        for span in [10i64, 1 << 40] {
            let dist: Vec<i64> = (0..200i64).map(|v| if v % 17 == 0 { DISTANCE_INF } else { 5 + (v * 7919 % 13) * span / 10 }).collect();
            let mut roots: Vec<u64> = (0..200u64).rev().filter(|v| v % 3 != 1).collect();
            let mut want: Vec<(i64, u64)> = roots.iter().map(|&v| (dist[v as usize], v)).collect();
            want.sort_unstable();
            sort_roots(&mut roots, &dist);
            let got: Vec<(i64, u64)> = roots.iter().map(|&r| (dist[r as u32 as usize], r as u32 as u64)).collect();
            assert_eq!(got, want, "span {span}");
        }
        let mut none = vec![3u64, 1, 2];
        sort_roots(&mut none, &[DISTANCE_INF; 4]);
        assert_eq!(none, [1, 2, 3]);
    }

    #[test]
    fn a_parent_cycle_is_an_error() {
        let csr = Csr::from_edges(3, 1, &[0, 1, 2], &[1, 2, 1], &[1, 1, 1]).unwrap();
        let err = path_costs(&crate::sssp::exec::Sequential, &csr.rows(), &[-1, 2, 1], 0, &mut Vec::new()).unwrap_err();
        assert!(err.to_string().contains("cycle"), "{err}");
    }
}
