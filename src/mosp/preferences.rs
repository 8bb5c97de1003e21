//! Preference vectors: one integer weight >= 1 per objective, scaled to integers by their lcm.
//!
//! The combined graph's weight of an edge is `L (K+1) - sum over the trees that contain it of
//! L / Pref_k` (the thesis weight `K + 1 - sum 1/Pref_k`, scaled by L so it stays integral).

use crate::error::{Error, Result};

/// The largest accepted scale L = lcm(Pref).
pub const MAX_SCALE: u64 = 1 << 20;

/// A validated preference vector.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Preferences {
    prefs: Vec<u32>,
    scale: u64,
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

impl Preferences {
    /// `prefs` empty means all ones. Otherwise it needs exactly `k` values >= 1 whose lcm is at
    /// most 2^20; anything else is [`Error::InvalidArgument`].
    ///
    /// ```
    /// use dyng::Preferences;
    ///
    /// let p = Preferences::new(3, &[4, 1, 4])?;
    /// assert_eq!(p.scale(), 4);
    /// assert_eq!(p.terms(), [1, 4, 1]); // L / pref, what a tree's edge takes off its weight
    /// assert_eq!(p.base(), 16); // L (K + 1), the weight of an edge no tree has
    /// assert_eq!(Preferences::new(2, &[])?.values(), [1, 1]);
    /// assert!(Preferences::new(2, &[1, 0]).is_err());
    /// # Ok::<(), dyng::Error>(())
    /// ```
    pub fn new(k: usize, prefs: &[u32]) -> Result<Self> {
        let prefs = if prefs.is_empty() {
            vec![1; k]
        } else {
            prefs.to_vec()
        };
        let invalid = |why: String| {
            Error::invalid(format!(
                "dyng: invalid preference vector (need K values >= 1): {why}"
            ))
        };
        if prefs.len() != k {
            return Err(invalid(format!("{} values given for K = {k}", prefs.len())));
        }
        let mut scale = 1u64;
        for &p in &prefs {
            if p < 1 {
                return Err(invalid(format!("value {p} < 1")));
            }
            scale = scale / gcd(scale, p as u64) * p as u64;
            if scale > MAX_SCALE {
                return Err(invalid(format!("lcm exceeds 2^20 = {MAX_SCALE}")));
            }
        }
        Ok(Preferences { prefs, scale })
    }

    /// The K values, each at least 1.
    pub fn values(&self) -> &[u32] {
        &self.prefs
    }

    /// L = lcm of the values.
    pub fn scale(&self) -> u64 {
        self.scale
    }

    /// `L / Pref_k` for every objective.
    pub fn terms(&self) -> Vec<i64> {
        self.prefs.iter().map(|&p| (self.scale / p as u64) as i64).collect()
    }

    /// `L (K + 1)`: the weight of an edge that belongs to no tree, and the largest weight.
    pub fn base(&self) -> i64 {
        (self.scale * (self.prefs.len() as u64 + 1)) as i64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scale_and_limits() {
        assert_eq!(Preferences::new(3, &[4, 1, 4]).unwrap().scale(), 4);
        assert_eq!(Preferences::new(3, &[]).unwrap().scale(), 1);
        assert_eq!(Preferences::new(3, &[1048576, 1, 1]).unwrap().scale(), 1 << 20);
        assert!(Preferences::new(2, &[1048576, 3]).is_err());
        assert!(Preferences::new(3, &[1, 2]).is_err());
        assert!(Preferences::new(2, &[0, 2]).is_err());
        assert_eq!(Preferences::new(3, &[4, 1, 4]).unwrap().terms(), vec![1, 4, 1]);
    }
}
