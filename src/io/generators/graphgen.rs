//! Seeded synthetic graphs for benchmarks (`dyng prep gen`): a road-like grid and a random
//! geometric graph in the DIMACS10 `rgg_n_2_*` style. Not part of the originals; every graph is a
//! pure function of its arguments (all randomness comes from one `mt19937(seed)` stream), so a
//! benchmark input can be regenerated anywhere from its parameters.

use super::rng::{uniform_int, Mt19937};
use crate::io::CsrText;
use crate::error::{Error, Result};

/// One in `DIAGONAL_ODDS` grid cells gets a diagonal shortcut (down-right, both directions).
const DIAGONAL_ODDS: i32 = 8;

/// The largest `rgg` scale: n = 2^30 vertices still fits the 32-bit ids.
pub const MAX_RGG_SCALE: u32 = 30;

/// A `width` x `height` road-like grid; vertex `y * width + x`.
///
/// For every vertex, in id order: the right and the down neighbour are linked in both directions,
/// and with probability 1/8 (one draw `U[0, 7] == 0` per vertex that has a down-right neighbour,
/// taken after the down link) the down-right diagonal too. Each link draws K weights in
/// `[wmin, wmax]` for the forward direction, then K for the backward one, so the two directions
/// have independent weights. Row u lists its edges in creation order.
pub fn grid(
    width: usize,
    height: usize,
    k: usize,
    wmin: i32,
    wmax: i32,
    seed: u32,
) -> Result<CsrText> {
    crate::io::formats::mtx::check_weight_options(k, wmin, wmax)?;
    let n = width
        .checked_mul(height)
        .filter(|&n| n >= 1 && n <= i32::MAX as usize)
        .ok_or_else(|| {
            Error::invalid(format!(
                "grid {width} x {height}: need 1 to 2^31-1 vertices"
            ))
        })?;
    let mut rng = Mt19937::new(seed);
    let mut edges = EdgeList::new(k);
    for y in 0..height {
        for x in 0..width {
            let u = y * width + x;
            if x + 1 < width {
                edges.link(u, u + 1, &mut rng, wmin, wmax);
            }
            if y + 1 < height {
                edges.link(u, u + width, &mut rng, wmin, wmax);
            }
            if x + 1 < width && y + 1 < height && uniform_int(&mut rng, 0, DIAGONAL_ODDS - 1) == 0 {
                edges.link(u, u + width + 1, &mut rng, wmin, wmax);
            }
        }
    }
    edges.into_csr(n)
}

/// A random geometric graph with n = 2^scale points uniform in the unit square, linked (both
/// directions) when closer than the DIMACS10 radius `r = 0.55 * sqrt(ln n / n)`.
///
/// Points draw x then y, each a 53-bit double from two outputs (`genrand_res53`). Neighbours are
/// found through a grid of cells at least r wide (O(n) expected); rows are sorted by head. The K
/// weights of every directed edge are then drawn edge-major in CSR order, like `mtx2csr` does.
pub fn rgg(scale: u32, k: usize, wmin: i32, wmax: i32, seed: u32) -> Result<CsrText> {
    crate::io::formats::mtx::check_weight_options(k, wmin, wmax)?;
    if scale > MAX_RGG_SCALE {
        return Err(Error::invalid(format!(
            "rgg scale {scale}: at most {MAX_RGG_SCALE} (2^scale vertices must fit 32-bit ids)"
        )));
    }
    let n = 1usize << scale;
    let mut rng = Mt19937::new(seed);
    let points: Vec<(f64, f64)> = (0..n).map(|_| (unit(&mut rng), unit(&mut rng))).collect();
    let r = 0.55 * ((n as f64).ln() / n as f64).sqrt();
    let cells = CellGrid::build(&points, r);
    let (row_ptr, col_ind) = cells.neighbour_rows(&points, r)?;
    let m = col_ind.len();
    let weights = (0..m * k)
        .map(|_| uniform_int(&mut rng, wmin, wmax))
        .collect();
    Ok(CsrText {
        n,
        k,
        row_ptr,
        col_ind,
        weights,
    })
}

/// A double uniform in [0, 1) with 53 random bits, from two outputs (`genrand_res53`).
fn unit(rng: &mut Mt19937) -> f64 {
    let a = (rng.next_u32() >> 5) as f64;
    let b = (rng.next_u32() >> 6) as f64;
    (a * 67_108_864.0 + b) / 9_007_199_254_740_992.0
}

/// Directed edges in creation order with edge-major weights.
struct EdgeList {
    k: usize,
    src: Vec<u32>,
    dst: Vec<u32>,
    weights: Vec<i32>,
}

impl EdgeList {
    fn new(k: usize) -> Self {
        EdgeList {
            k,
            src: Vec::new(),
            dst: Vec::new(),
            weights: Vec::new(),
        }
    }

    /// Adds u -> v and v -> u, each with its own K fresh weights (forward drawn first).
    fn link(&mut self, u: usize, v: usize, rng: &mut Mt19937, wmin: i32, wmax: i32) {
        for (a, b) in [(u, v), (v, u)] {
            self.src.push(a as u32);
            self.dst.push(b as u32);
            for _ in 0..self.k {
                self.weights.push(uniform_int(rng, wmin, wmax));
            }
        }
    }

    /// Groups the edges by tail (stable, so rows keep creation order).
    fn into_csr(self, n: usize) -> Result<CsrText> {
        let m = self.src.len();
        if m > i32::MAX as usize {
            return Err(Error::Capacity(format!(
                "{m} edges exceed the 32-bit limit 2^31-1"
            )));
        }
        let k = self.k;
        let mut row_ptr = vec![0i32; n + 1];
        for &u in &self.src {
            row_ptr[u as usize + 1] += 1;
        }
        for u in 0..n {
            row_ptr[u + 1] += row_ptr[u];
        }
        let mut cursor: Vec<i32> = row_ptr[..n].to_vec();
        let mut col_ind = vec![0i32; m];
        let mut weights = vec![0i32; m * k];
        for e in 0..m {
            let u = self.src[e] as usize;
            let slot = cursor[u] as usize;
            cursor[u] += 1;
            col_ind[slot] = self.dst[e] as i32;
            weights[slot * k..slot * k + k].copy_from_slice(&self.weights[e * k..e * k + k]);
        }
        Ok(CsrText {
            n,
            k,
            row_ptr,
            col_ind,
            weights,
        })
    }
}

/// Points bucketed into `side` x `side` square cells, each at least r wide.
struct CellGrid {
    side: usize,
    /// Cell c holds `members[start[c]..start[c + 1]]` (ascending point ids).
    start: Vec<usize>,
    members: Vec<u32>,
}

impl CellGrid {
    fn build(points: &[(f64, f64)], r: f64) -> Self {
        // About one point per cell at most, and never cells narrower than r.
        let max_side = ((points.len() as f64).sqrt().ceil() as usize).max(1);
        let side = if r > 0.0 {
            ((1.0 / r).floor() as usize).clamp(1, max_side)
        } else {
            1
        };
        let mut start = vec![0usize; side * side + 1];
        let cell_of: Vec<usize> = points.iter().map(|&p| Self::cell(side, p)).collect();
        for &c in &cell_of {
            start[c + 1] += 1;
        }
        for c in 0..side * side {
            start[c + 1] += start[c];
        }
        let mut cursor = start.clone();
        let mut members = vec![0u32; points.len()];
        for (i, &c) in cell_of.iter().enumerate() {
            members[cursor[c]] = i as u32;
            cursor[c] += 1;
        }
        CellGrid {
            side,
            start,
            members,
        }
    }

    fn cell(side: usize, (x, y): (f64, f64)) -> usize {
        let cx = ((x * side as f64) as usize).min(side - 1);
        let cy = ((y * side as f64) as usize).min(side - 1);
        cy * side + cx
    }

    /// CSR rows: for every point the ids of the other points closer than r, ascending.
    fn neighbour_rows(&self, points: &[(f64, f64)], r: f64) -> Result<(Vec<i32>, Vec<i32>)> {
        let r2 = r * r;
        let mut row_ptr = Vec::with_capacity(points.len() + 1);
        row_ptr.push(0i32);
        let mut col_ind: Vec<i32> = Vec::new();
        let mut row: Vec<i32> = Vec::new();
        for (u, &(x, y)) in points.iter().enumerate() {
            row.clear();
            let c = Self::cell(self.side, (x, y));
            let (cx, cy) = (c % self.side, c / self.side);
            for ny in cy.saturating_sub(1)..=(cy + 1).min(self.side - 1) {
                for nx in cx.saturating_sub(1)..=(cx + 1).min(self.side - 1) {
                    let cell = ny * self.side + nx;
                    for &v in &self.members[self.start[cell]..self.start[cell + 1]] {
                        let (vx, vy) = points[v as usize];
                        let (dx, dy) = (x - vx, y - vy);
                        if v as usize != u && dx * dx + dy * dy < r2 {
                            row.push(v as i32);
                        }
                    }
                }
            }
            row.sort_unstable();
            col_ind.extend_from_slice(&row);
            if col_ind.len() > i32::MAX as usize {
                return Err(Error::Capacity("rgg: more than 2^31-1 edges".into()));
            }
            row_ptr.push(col_ind.len() as i32);
        }
        Ok((row_ptr, col_ind))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    fn edge_set(t: &CsrText) -> HashSet<(usize, i32)> {
        (0..t.n)
            .flat_map(|u| (t.row_ptr[u] as usize..t.row_ptr[u + 1] as usize).map(move |e| (u, e)))
            .map(|(u, e)| (u, t.col_ind[e]))
            .collect()
    }

    fn assert_symmetric(t: &CsrText) {
        let set = edge_set(t);
        for &(u, v) in &set {
            assert!(
                set.contains(&(v as usize, u as i32)),
                "{u}->{v} has no reverse"
            );
            assert_ne!(u, v as usize, "self-loop");
        }
    }

    #[test]
    fn grid_sizes_symmetry_and_determinism() {
        let t = grid(30, 20, 2, 1, 9, 7).expect("valid");
        assert_eq!(t.n, 600);
        let m = t.col_ind.len();
        let straight = 2 * (20 * 29 + 30 * 19);
        let diagonals = (m - straight) / 2;
        assert!(m >= straight && (m - straight).is_multiple_of(2));
        assert!(
            diagonals > 20 && diagonals < 150,
            "{diagonals} diagonals of 551 cells"
        );
        assert_eq!(t.weights.len(), 2 * m);
        assert!(t.weights.iter().all(|&w| (1..=9).contains(&w)));
        assert_symmetric(&t);
        assert_eq!(t, grid(30, 20, 2, 1, 9, 7).expect("valid"));
        assert_ne!(t, grid(30, 20, 2, 1, 9, 8).expect("valid"));
        assert!(grid(0, 5, 1, 1, 1, 1).is_err());
        assert!(grid(5, 5, 0, 1, 1, 1).is_err());
    }

    #[test]
    fn rgg_sizes_symmetry_and_determinism() {
        let t = rgg(12, 3, 1, 100, 5).expect("valid");
        assert_eq!(t.n, 4096);
        assert_eq!(t.row_ptr.len(), 4097);
        let m = t.col_ind.len();
        // Expected mean degree pi * r^2 * n = 0.3025 * pi * ln n = 7.9 (less at the border).
        let mean = m as f64 / t.n as f64;
        assert!(mean > 6.0 && mean < 9.0, "mean degree {mean}");
        assert_eq!(t.weights.len(), 3 * m);
        assert_symmetric(&t);
        for u in 0..t.n {
            let row = &t.col_ind[t.row_ptr[u] as usize..t.row_ptr[u + 1] as usize];
            assert!(row.windows(2).all(|w| w[0] < w[1]), "row {u} not sorted");
        }
        assert_eq!(t, rgg(12, 3, 1, 100, 5).expect("valid"));
        assert_ne!(t, rgg(12, 3, 1, 100, 6).expect("valid"));
        assert_eq!(rgg(0, 1, 1, 1, 1).expect("valid").col_ind.len(), 0);
        assert!(rgg(31, 1, 1, 1, 1).is_err());
    }

    #[test]
    fn rgg_cell_grid_finds_exactly_the_close_pairs() {
        let (scale, seed) = (9u32, 11u32);
        let t = rgg(scale, 1, 1, 1, seed).expect("valid");
        let n = 1usize << scale;
        let mut rng = Mt19937::new(seed);
        let pts: Vec<(f64, f64)> = (0..n).map(|_| (unit(&mut rng), unit(&mut rng))).collect();
        let r = 0.55 * ((n as f64).ln() / n as f64).sqrt();
        let mut brute = HashSet::new();
        for u in 0..n {
            for v in 0..n {
                let (dx, dy) = (pts[u].0 - pts[v].0, pts[u].1 - pts[v].1);
                if u != v && dx * dx + dy * dy < r * r {
                    brute.insert((u, v as i32));
                }
            }
        }
        assert_eq!(edge_set(&t), brute);
    }
}
