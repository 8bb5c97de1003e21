//! Packed (distance, parent) words: `(distance << b) | parent`.
//!
//! The distance sits in the high bits, so the unsigned order of words is the lexicographic order of
//! (distance, parent id) and an atomic minimum keeps the shortest distance with the lowest parent:
//! the canonical tie rule falls out of the word order. When distances do not leave room for the
//! parent field, the engine runs in distance-only mode (b = 0) and recovers parents afterwards.

use crate::error::{Error, Result};

/// The word of an unreachable vertex (all ones).
pub const PACKED_INF: u64 = u64::MAX;

/// The largest representable finite distance: `DISTANCE_INF / 2 - 1`.
pub const OUTPUT_MAX: i64 = crate::distance::DISTANCE_INF / 2 - 1;

/// `max(W, 1)` and `max(n - 1, 1)`, refusing distances beyond 62 bits (shared by the host and
/// CUDA packing rules).
pub fn weight_and_hops(n: usize, max_weight: i64) -> Result<(u64, u64)> {
    let w = max_weight.max(1) as u64;
    let hops = n.saturating_sub(1).max(1) as u64;
    if w > OUTPUT_MAX as u64 / hops {
        return Err(Error::Capacity(format!(
            "dyng: distances up to {w} * {hops} do not fit in 62 bits"
        )));
    }
    Ok((w, hops))
}

/// The parent field width: the smallest b >= 1 with 2^b - 1 >= n (all ones = no parent).
pub fn parent_bits(n: usize) -> u32 {
    let mut bits = 1u32;
    while ((1u64 << bits) - 1) < n as u64 {
        bits += 1;
    }
    bits
}

/// The largest distance a word with a `bits`-wide parent field can hold (all ones = INF).
pub fn max_distance(bits: u32) -> u64 {
    (u64::MAX >> bits) - 1
}

/// The packing chosen for one run (the OpenMP rule, reference-behaviour §3.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Packing {
    /// Parent field width; 0 in distance-only mode.
    pub bits: u32,
    /// The largest possible tree distance, `max_weight * (n - 1)`.
    pub bound: u64,
    /// The largest candidate (`bound + max_weight`); larger candidates can never be shortest.
    pub max_candidate: u64,
}

impl Packing {
    /// Chooses the packing for `n` vertices and edge weights up to `max_weight`.
    pub fn choose(n: usize, max_weight: i64) -> Result<Self> {
        let (w, hops) = weight_and_hops(n, max_weight)?;
        let bound = w * hops;
        let bits = parent_bits(n);
        let bits = if bound + w <= max_distance(bits) { bits } else { 0 };
        Ok(Packing {
            bits,
            bound,
            max_candidate: bound + w,
        })
    }

    /// The weight bound the packing was chosen for (at least 1).
    #[inline]
    pub fn max_weight(&self) -> u64 {
        self.max_candidate - self.bound
    }

    /// True when parents travel in the word.
    #[inline]
    pub fn packed_parents(&self) -> bool {
        self.bits > 0
    }

    /// The parent field value meaning "no parent".
    #[inline]
    fn none(&self) -> u64 {
        (1u64 << self.bits) - 1
    }

    /// The word of `distance` with `parent` (-1 for none) in the low bits; the distance alone
    /// when parents are not packed. `distance` must be at most the packing's largest candidate.
    #[inline]
    pub fn pack(&self, distance: u64, parent: i32) -> u64 {
        if self.bits == 0 {
            return distance;
        }
        // -1 (no parent) sign-extends to all ones, which the mask turns into `none`.
        debug_assert!(parent >= -1);
        (distance << self.bits) | (parent as i64 as u64 & self.none())
    }

    /// The distance of a word (`u64::MAX >> b` for [`PACKED_INF`], above every real distance).
    #[inline]
    pub fn dist(&self, word: u64) -> u64 {
        word >> self.bits
    }

    /// The parent of a packed word (-1 for none); meaningless in distance-only mode.
    #[inline]
    pub fn parent(&self, word: u64) -> i32 {
        let p = word & self.none();
        if word == PACKED_INF || p == self.none() {
            -1
        } else {
            p as i32
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths() {
        assert_eq!(Packing::choose(1_000_000, 100).unwrap().bits, 20);
        assert_eq!(Packing::choose(23_900_000, 100).unwrap().bits, 25);
        assert_eq!(Packing::choose(1, 1).unwrap().bits, 1);
    }

    /// reference-behaviour B.2: (n-1)W fits next to 17 parent bits but (n-1)W + W does not.
    #[test]
    fn packing_boundary_selects_distance_only() {
        let n = (1usize << 16) + 1;
        let p = Packing::choose(n, i32::MAX as i64).unwrap();
        assert_eq!(p.bits, 0);
        assert!(!p.packed_parents());
    }

    #[test]
    fn order_is_distance_then_parent() {
        let p = Packing::choose(100, 10).unwrap();
        assert!(p.pack(5, 3) < p.pack(5, 4));
        assert!(p.pack(5, 99) < p.pack(6, 0));
        assert!(p.pack(5, -1) > p.pack(5, 99));
        assert_eq!(p.parent(p.pack(7, 42)), 42);
        assert_eq!(p.dist(p.pack(7, 42)), 7);
        assert_eq!(p.parent(PACKED_INF), -1);
    }

    #[test]
    fn overflow_is_an_error() {
        assert!(Packing::choose(1 << 31, i32::MAX as i64).is_err());
    }
}
