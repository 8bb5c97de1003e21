//! `apply_batch`: the originals' batch semantics (reference-behaviour §2), exactly.
//!
//! Deletions first (the first alive copy of (u, v) in row order), then insertions as upserts (the
//! first alive copy takes the insertion's weights, the last insertion of a pair wins; otherwise the
//! edge is appended to the row in insertion order). Rows without changes are copied verbatim. The
//! per-insertion weight-increase mask compares the first copy of (u, v) in the original row with
//! the first copy in the updated row.

use super::batch::BatchView;
use super::csr::{ColumnFacts, Csr, MAX_EDGES};
use super::in_edges::InEdges;
use crate::error::{Error, Result};
use crate::resources::PooledWorkspace;

/// The outcome of applying a batch: the updated graph and, per insertion, the bit mask of the
/// objectives whose weight increased.
#[derive(Debug, Clone)]
pub struct Applied {
    pub csr: Csr,
    pub increase_masks: Vec<u64>,
}

/// The arrays of a graph state that is no longer current (and of its reverse graph, if it was
/// built), for the next apply and reverse-graph build to write into. An update gives the replaced
/// state's arrays to the resources' pool, so a stream of batches allocates no graph arrays: fresh
/// ones were pages to fault in while written (on the 1000^2 grid, 18 of an apply's 33 ms and 21
/// of a reverse-graph build's 35 ms).
#[derive(Default)]
pub struct GraphBuffers {
    row_ptr: Vec<i32>,
    col_ind: Vec<i32>,
    weights: Vec<i32>,
    in_edges: Option<InEdges>,
}

impl GraphBuffers {
    /// The arrays of a graph state no longer needed.
    pub(crate) fn from_state(csr: Csr, in_edges: Option<InEdges>) -> Self {
        let (row_ptr, col_ind, weights) = csr.into_arrays();
        GraphBuffers { row_ptr, col_ind, weights, in_edges }
    }

    /// The arrays of a reverse graph, for `InEdges::build_into`.
    pub(crate) fn take_in_edges(&mut self) -> Option<InEdges> {
        self.in_edges.take()
    }

    /// Keeps `spare` unless reverse-graph arrays are held already.
    pub(crate) fn keep_in_edges(&mut self, spare: Option<InEdges>) {
        if self.in_edges.is_none() {
            self.in_edges = spare;
        }
    }
}

impl PooledWorkspace for GraphBuffers {
    fn bytes(&self) -> usize {
        4 * (self.row_ptr.capacity() + self.col_ind.capacity() + self.weights.capacity())
            + self.in_edges.as_ref().map_or(0, InEdges::capacity_bytes)
    }
}

/// Where a surviving entry of a changed row takes its weights from: an old edge or an insertion
/// (u32 indices: the entries of a 50K-change batch on usroads are 110K, and at 24 bytes each
/// with their heads they were fresh pages to fault in on every apply).
#[derive(Clone, Copy)]
enum Slot {
    Original(u32),
    Insertion(u32),
}

/// The arrays an apply reads: a CSR, or a reverse graph (the same layout, tails for heads).
#[derive(Clone, Copy)]
struct Rows<'a> {
    n: usize,
    k: usize,
    row_ptr: &'a [i32],
    col_ind: &'a [i32],
    /// Objective-major, `col_ind.len()` per objective.
    weights: &'a [i32],
}

impl<'a> Rows<'a> {
    fn of_csr(g: &'a Csr) -> Self {
        Rows {
            n: g.n(),
            k: g.k(),
            row_ptr: g.row_ptr(),
            col_ind: g.col_ind(),
            weights: g.weights(),
        }
    }

    fn n(&self) -> usize {
        self.n
    }

    fn k(&self) -> usize {
        self.k
    }

    fn row_ptr(&self) -> &'a [i32] {
        self.row_ptr
    }

    fn col_ind(&self) -> &'a [i32] {
        self.col_ind
    }

    fn row(&self, u: usize) -> std::ops::Range<usize> {
        self.row_ptr[u] as usize..self.row_ptr[u + 1] as usize
    }

    fn column(&self, j: usize) -> &'a [i32] {
        let m = self.col_ind.len();
        &self.weights[j * m..(j + 1) * m]
    }
}

/// Groups change indices by tail vertex, keeping batch order inside a row (a counting sort).
/// `start[u]` serves as row `u`'s cursor while placing, which leaves it at row `u + 1`'s start;
/// one shift restores it (a separate cursor array was another n-sized allocation per apply).
fn group_by_tail(n: usize, tails: &[i32]) -> (Vec<u32>, Vec<u32>) {
    let mut start = vec![0u32; n + 1];
    for &u in tails {
        start[u as usize + 1] += 1;
    }
    for u in 0..n {
        start[u + 1] += start[u];
    }
    let mut order = vec![0u32; tails.len()];
    for (i, &u) in tails.iter().enumerate() {
        let slot = &mut start[u as usize];
        order[*slot as usize] = i as u32;
        *slot += 1;
    }
    start.copy_within(0..n, 1);
    start[0] = 0;
    (start, order)
}

/// A changed row of the updated graph: the row, and its alive entries in `ChangedRows::entries`.
struct ChangedRow {
    row: u32,
    entries: std::ops::Range<u32>,
}

/// The rows a batch touches, rebuilt; every other row is copied verbatim.
struct ChangedRows {
    rows: Vec<ChangedRow>,
    /// (head, where the weights come from) of the alive entries of the changed rows.
    entries: Vec<(i32, Slot)>,
}

impl ChangedRows {
    /// Appends one array of the updated graph to `out`: spans of unchanged rows are copied from
    /// `old` (indexed like the old edges), changed rows take `pick(entry)`.
    fn assemble<T: Copy>(&self, g: Rows<'_>, old: &[T], out: &mut Vec<T>, pick: impl Fn(&(i32, Slot)) -> T) {
        let rp = g.row_ptr();
        let mut next_row = 0;
        for c in &self.rows {
            out.extend_from_slice(&old[rp[next_row] as usize..rp[c.row as usize] as usize]);
            out.extend(self.entries[c.entries.start as usize..c.entries.end as usize].iter().map(&pick));
            next_row = c.row as usize + 1;
        }
        out.extend_from_slice(&old[rp[next_row] as usize..]);
    }
}

/// Applies `batch` to `g` and returns the new graph; `g` is not modified. The batch must have been
/// validated against `g` (`BatchView::validate`).
pub fn apply_batch(g: &Csr, batch: &BatchView<'_>) -> Result<Applied> {
    apply_batch_into(g, batch, &mut GraphBuffers::default()).map(|(applied, _)| applied)
}

/// [`apply_batch`], writing the new graph into the arrays of `buffers` (left empty); also says
/// whether an array had to grow.
pub fn apply_batch_into(g: &Csr, batch: &BatchView<'_>, buffers: &mut GraphBuffers) -> Result<(Applied, bool)> {
    let arrays = [
        std::mem::take(&mut buffers.row_ptr),
        std::mem::take(&mut buffers.col_ind),
        std::mem::take(&mut buffers.weights),
    ];
    let a = apply_rows(Rows::of_csr(g), batch, arrays, true)?;
    let [row_ptr, col_ind, weights] = a.arrays;
    let applied = Applied {
        csr: Csr::from_parts_unchecked(g.n(), g.k(), row_ptr, col_ind, weights, a.facts),
        increase_masks: a.masks,
    };
    Ok((applied, a.grew))
}

/// The reverse graph after `batch` of the graph whose reverse graph before it is `old`, written
/// into the arrays of `spare`; also says whether an array had to grow.
///
/// The batch applies to the reverse graph with each edge turned around: row v of the reverse
/// graph lists the copies of every edge u -> v, and the copies of one edge keep their order in
/// row u (a fresh build lists them so, and an apply keeps the order of a row's survivors and
/// appends new edges after them in both graphs), so "the first alive copy of u -> v" is the
/// same copy in both. Only the order of different tails in a row can differ from a fresh build.
pub(crate) fn apply_reversed_into(old: &InEdges, k: usize, batch: &BatchView<'_>, spare: InEdges) -> Result<(InEdges, bool)> {
    let rows = Rows {
        n: old.row_ptr.len() - 1,
        k,
        row_ptr: &old.row_ptr,
        col_ind: &old.tails,
        weights: &old.weights,
    };
    let reversed = BatchView {
        k: batch.k,
        ins_src: batch.ins_dst,
        ins_dst: batch.ins_src,
        ins_weights: batch.ins_weights,
        del_src: batch.del_dst,
        del_dst: batch.del_src,
    };
    let InEdges { row_ptr, tails, weights } = spare;
    let a = apply_rows(rows, &reversed, [row_ptr, tails, weights], false)?;
    let [row_ptr, tails, weights] = a.arrays;
    Ok((InEdges { row_ptr, tails, weights }, a.grew))
}

/// What [`apply_rows`] produced.
struct AppliedRows {
    /// row_ptr, col_ind and the objective-major weights of the new graph.
    arrays: [Vec<i32>; 3],
    /// The columns' facts (when asked for).
    facts: Vec<ColumnFacts>,
    masks: Vec<u64>,
    grew: bool,
}

/// The apply itself, writing into `arrays` (row_ptr, col_ind, weights), whatever they held.
fn apply_rows(g: Rows<'_>, batch: &BatchView<'_>, arrays: [Vec<i32>; 3], want_facts: bool) -> Result<AppliedRows> {
    let (n, k) = (g.n(), g.k());
    batch.validate(n, k)?;
    let (del_start, del_order) = group_by_tail(n, batch.del_src);
    let (ins_start, ins_order) = group_by_tail(n, batch.ins_src);
    let [mut row_ptr, mut col_ind, mut weights] = arrays;

    let mut grew = super::reserve_for(&mut row_ptr, n + 1);
    row_ptr.push(0i32);
    let mut changed = ChangedRows {
        rows: Vec::new(),
        entries: Vec::new(),
    };
    let mut masks = vec![0u64; batch.num_insertions()];
    // Scratch for one changed row: (head, slot, alive).
    let mut scratch: Vec<(i32, Slot, bool)> = Vec::new();
    let mut total = 0usize;

    for u in 0..n {
        let dels = &del_order[del_start[u] as usize..del_start[u + 1] as usize];
        let inss = &ins_order[ins_start[u] as usize..ins_start[u + 1] as usize];
        let row = g.row(u);
        if dels.is_empty() && inss.is_empty() {
            total += row.len();
        } else {
            rebuild_row(g, batch, u, dels, inss, &mut scratch, &mut masks);
            let first = changed.entries.len();
            changed
                .entries
                .extend(scratch.iter().filter(|x| x.2).map(|&(v, slot, _)| (v, slot)));
            total += changed.entries.len() - first;
            changed.rows.push(ChangedRow {
                row: u as u32,
                entries: first as u32..changed.entries.len() as u32,
            });
        }
        if total > MAX_EDGES {
            return Err(Error::Capacity(format!(
                "dyng: the updated graph would have more than 2^31-1 edges (row {u})"
            )));
        }
        row_ptr.push(total as i32);
    }

    grew |= super::reserve_for(&mut col_ind, total);
    changed.assemble(g, g.col_ind(), &mut col_ind, |&(v, _)| v);
    // Each column is appended in place (assembling it apart and copying it in cost a second
    // graph-sized write), and its facts are taken while it is still in the cache.
    grew |= super::reserve_for(&mut weights, total * k);
    let mut facts = Vec::with_capacity(k);
    for j in 0..k {
        changed.assemble(g, g.column(j), &mut weights, |&(_, slot)| match slot {
            Slot::Original(f) => g.column(j)[f as usize],
            Slot::Insertion(i) => batch.ins_weights[i as usize * k + j],
        });
        if want_facts {
            facts.push(ColumnFacts::of(&weights[j * total..]));
        }
    }
    Ok(AppliedRows {
        arrays: [row_ptr, col_ind, weights],
        facts,
        masks,
        grew,
    })
}

/// Rebuilds row `u` into `entries` (deletions first, then upserts) and sets the weight-increase
/// masks of its insertions.
fn rebuild_row(
    g: Rows<'_>,
    batch: &BatchView<'_>,
    u: usize,
    dels: &[u32],
    inss: &[u32],
    entries: &mut Vec<(i32, Slot, bool)>,
    masks: &mut [u64],
) {
    let k = g.k();
    let row = g.row(u);
    entries.clear();
    entries.extend(row.clone().map(|e| (g.col_ind()[e], Slot::Original(e as u32), true)));
    for &d in dels {
        let v = batch.del_dst[d as usize];
        if let Some(x) = entries.iter_mut().find(|x| x.2 && x.0 == v) {
            x.2 = false;
        }
    }
    for &i in inss {
        let v = batch.ins_dst[i as usize];
        match entries.iter_mut().find(|x| x.2 && x.0 == v) {
            Some(x) => x.1 = Slot::Insertion(i),
            None => entries.push((v, Slot::Insertion(i), true)),
        }
    }
    // Every insertion of a pair compares the pair's FINAL first copy with its ORIGINAL first copy.
    for &i in inss {
        let i = i as usize;
        let v = batch.ins_dst[i];
        let original = row.clone().find(|&e| g.col_ind()[e] == v);
        let updated = entries.iter().find(|x| x.2 && x.0 == v);
        if let (Some(e), Some(&(_, slot, _))) = (original, updated) {
            let mut mask = 0u64;
            for j in 0..k {
                let new_w = match slot {
                    Slot::Original(f) => g.column(j)[f as usize],
                    Slot::Insertion(t) => batch.ins_weights[t as usize * k + j],
                };
                if new_w > g.column(j)[e] {
                    mask |= 1 << j;
                }
            }
            masks[i] = mask;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::batch::Batch;
    use crate::graph::csr::WeightLayout;
    use crate::io::rng::Mt19937;

    /// Row v of a reverse graph as (tail, weights), stably sorted by tail: the copies of one edge
    /// keep their order, which is all an applied reverse graph promises besides the multiset.
    fn by_tail(r: &InEdges, k: usize) -> Vec<Vec<(i32, Vec<i32>)>> {
        (0..r.row_ptr.len() - 1)
            .map(|v| {
                let mut row: Vec<(i32, Vec<i32>)> =
                    r.row(v).map(|s| (r.tails()[s], (0..k).map(|j| r.column(j)[s]).collect())).collect();
                row.sort_by_key(|e| e.0);
                row
            })
            .collect()
    }

    #[test]
    fn a_batch_applied_to_the_reverse_graph_gives_the_reverse_of_the_applied_graph() {
        // Few vertices and many parallel copies, so that deletions and upserts must pick the same
        // copy in both graphs; 30 batches chained, each on the previous apply's reverse graph.
        let (n, k) = (12, 2);
        let mut rng = Mt19937::new(9);
        let mut r = |m: u32| rng.next_u32() % m;
        let (mut src, mut dst, mut w) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..60 {
            src.push(r(n as u32) as i32);
            dst.push(r(n as u32) as i32);
            w.extend([1 + r(50) as i32, 1 + r(50) as i32]);
        }
        let mut g = Csr::from_edges(n, k, &src, &dst, &w).unwrap();
        let mut reverse = InEdges::build(&g);
        let mut spare = InEdges::default();
        for round in 0..30 {
            let mut b = Batch::new(k);
            for _ in 0..r(10) {
                let e = r(g.m() as u32) as usize;
                let u = g.row_ptr().partition_point(|&p| p as usize <= e) - 1;
                b.delete(u as i32, g.col_ind()[e]);
            }
            for _ in 0..r(10) {
                let (u, v) = (r(n as u32) as i32, r(n as u32) as i32);
                b.insert(u, v, &[1 + r(50) as i32, 1 + r(50) as i32]);
                if r(3) == 0 {
                    b.insert(u, v, &[1 + r(50) as i32, 1 + r(50) as i32]);
                }
            }
            b.delete(r(n as u32) as i32, r(n as u32) as i32); // most likely absent
            let next = apply_batch(&g, &b.view()).unwrap().csr;
            let (applied, _) = apply_reversed_into(&reverse, k, &b.view(), spare).unwrap();
            assert_eq!(by_tail(&applied, k), by_tail(&InEdges::build(&next), k), "round {round}");
            spare = std::mem::replace(&mut reverse, applied);
            g = next;
        }
    }

    /// The test vector at the end of reference-behaviour §2.
    #[test]
    fn reference_test_vector() {
        let g = Csr::from_arrays(
            4,
            2,
            vec![0, 3, 3, 4, 4],
            vec![1, 2, 1, 3],
            &[5, 5, 7, 7, 9, 9, 4, 4],
            WeightLayout::EdgeMajor,
        )
        .unwrap();
        let mut b = Batch::new(2);
        b.delete(0, 2);
        b.delete(2, 3);
        b.delete(0, 2);
        b.insert(0, 1, &[6, 1]);
        b.insert(2, 3, &[2, 8]);
        b.insert(0, 1, &[4, 9]);
        b.insert(3, 0, &[1, 1]);
        b.insert(2, 3, &[5, 2]);
        let a = apply_batch(&g, &b.view()).unwrap();
        assert_eq!(a.csr.row_ptr(), &[0, 2, 2, 3, 4]);
        assert_eq!(a.csr.col_ind(), &[1, 1, 3, 0]);
        assert_eq!(a.csr.weights_edge_major(), vec![4, 9, 9, 9, 5, 2, 1, 1]);
        assert_eq!(a.increase_masks, vec![2, 1, 2, 0, 1]);
    }
}
