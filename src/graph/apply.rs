//! `apply_batch`: the originals' batch semantics (reference-behaviour §2), exactly.
//!
//! Deletions first (the first alive copy of (u, v) in row order), then insertions as upserts (the
//! first alive copy takes the insertion's weights, the last insertion of a pair wins; otherwise the
//! edge is appended to the row in insertion order). Rows without changes are copied verbatim. The
//! per-insertion weight-increase mask compares the first copy of (u, v) in the original row with
//! the first copy in the updated row.

use super::batch::BatchView;
use super::csr::{Csr, MAX_EDGES};
use crate::error::{Error, Result};

/// The outcome of applying a batch: the updated graph and, per insertion, the bit mask of the
/// objectives whose weight increased.
#[derive(Debug, Clone)]
pub struct Applied {
    pub csr: Csr,
    pub increase_masks: Vec<u64>,
}

/// Where a surviving entry of a changed row takes its weights from.
#[derive(Clone, Copy)]
enum Slot {
    Original(usize),
    Insertion(usize),
}

/// Groups change indices by tail vertex, keeping batch order inside a row (a counting sort).
fn group_by_tail(n: usize, tails: &[i32]) -> (Vec<u32>, Vec<u32>) {
    let mut start = vec![0u32; n + 1];
    for &u in tails {
        start[u as usize + 1] += 1;
    }
    for u in 0..n {
        start[u + 1] += start[u];
    }
    let mut cursor = start.clone();
    let mut order = vec![0u32; tails.len()];
    for (i, &u) in tails.iter().enumerate() {
        order[cursor[u as usize] as usize] = i as u32;
        cursor[u as usize] += 1;
    }
    (start, order)
}

/// Applies `batch` to `g` and returns the new graph; `g` is not modified. The batch must have been
/// validated against `g` (`BatchView::validate`).
pub fn apply_batch(g: &Csr, batch: &BatchView<'_>) -> Result<Applied> {
    let (n, k, m) = (g.n(), g.k(), g.m());
    batch.validate(n, k)?;
    let (del_start, del_order) = group_by_tail(n, batch.del_src);
    let (ins_start, ins_order) = group_by_tail(n, batch.ins_src);

    let mut row_ptr = Vec::with_capacity(n + 1);
    row_ptr.push(0i32);
    let mut col_ind: Vec<i32> = Vec::with_capacity(m + batch.num_insertions());
    let mut slots: Vec<Slot> = Vec::with_capacity(m + batch.num_insertions());
    let mut masks = vec![0u64; batch.num_insertions()];
    // Scratch for one changed row: (head, slot, alive).
    let mut entries: Vec<(i32, Slot, bool)> = Vec::new();

    for u in 0..n {
        let dels = &del_order[del_start[u] as usize..del_start[u + 1] as usize];
        let inss = &ins_order[ins_start[u] as usize..ins_start[u + 1] as usize];
        let row = g.row(u);
        if dels.is_empty() && inss.is_empty() {
            col_ind.extend_from_slice(&g.col_ind()[row.clone()]);
            slots.extend(row.map(Slot::Original));
        } else {
            entries.clear();
            entries.extend(row.clone().map(|e| (g.col_ind()[e], Slot::Original(e), true)));
            for &d in dels {
                let v = batch.del_dst[d as usize];
                if let Some(x) = entries.iter_mut().find(|x| x.2 && x.0 == v) {
                    x.2 = false;
                }
            }
            for &i in inss {
                let v = batch.ins_dst[i as usize];
                match entries.iter_mut().find(|x| x.2 && x.0 == v) {
                    Some(x) => x.1 = Slot::Insertion(i as usize),
                    None => entries.push((v, Slot::Insertion(i as usize), true)),
                }
            }
            for &i in inss {
                let i = i as usize;
                let v = batch.ins_dst[i];
                let original = row.clone().find(|&e| g.col_ind()[e] == v);
                let updated = entries.iter().find(|x| x.2 && x.0 == v);
                if let (Some(e), Some(&(_, slot, _))) = (original, updated) {
                    let mut mask = 0u64;
                    for j in 0..k {
                        let new_w = match slot {
                            Slot::Original(f) => g.column(j)[f],
                            Slot::Insertion(t) => batch.ins_weights[t * k + j],
                        };
                        if new_w > g.column(j)[e] {
                            mask |= 1 << j;
                        }
                    }
                    masks[i] = mask;
                }
            }
            for &(v, slot, alive) in &entries {
                if alive {
                    col_ind.push(v);
                    slots.push(slot);
                }
            }
        }
        if col_ind.len() > MAX_EDGES {
            return Err(Error::Capacity(format!(
                "dyng: the updated graph would have more than 2^31-1 edges (row {u})"
            )));
        }
        row_ptr.push(col_ind.len() as i32);
    }

    let new_m = col_ind.len();
    let mut weights = vec![0i32; new_m * k];
    for j in 0..k {
        let src = g.column(j);
        let out = &mut weights[j * new_m..(j + 1) * new_m];
        for (e, slot) in slots.iter().enumerate() {
            out[e] = match *slot {
                Slot::Original(f) => src[f],
                Slot::Insertion(i) => batch.ins_weights[i * k + j],
            };
        }
    }
    Ok(Applied {
        csr: Csr::from_parts_unchecked(n, k, row_ptr, col_ind, weights),
        increase_masks: masks,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::batch::Batch;
    use crate::graph::csr::WeightLayout;

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
