//! How far one run of the bench can be trusted on a ratio: a bootstrap interval over its runs.
//!
//! The host is shared and noisy: the same static solve moves by ±30 % between invocations and by
//! 2x between phases of the host (docs/performance.md). A ratio of two medians of a few runs
//! then carries an error that a point estimate hides; where an update is a static solve timed
//! against a static solve (the adaptive update's fallback), that error alone decides whether
//! the ratio lands above or below 1.05. The interval says which cases one run resolves: a case
//! whose whole interval lies above a bound is slower than it with this run's evidence, one whose
//! interval straddles the bound is not resolved by this run either way.
//!
//! Percentile bootstrap: the runs are resampled with replacement [`RESAMPLES`] times and the
//! ratio of medians taken on each resample; the interval is the central [`COVERAGE`] of those
//! ratios. Paired samples (a case's update and recompute, timed back to back in each run) are
//! resampled by run, keeping each run's two times together; independent ones (two cases) each on
//! their own. The generator is seeded, so a report is reproducible from its JSON.

use super::measure::median;

/// Runs below which no interval is taken: resampling fewer runs says more about the resampling
/// than about the host (one run gives a zero-width interval, three give at most ten distinct
/// resamples), and a case without an interval counts as not resolved.
pub const MIN_RUNS: usize = 5;
/// Resamples per interval.
pub const RESAMPLES: usize = 2000;
/// The share of the resampled ratios the interval holds.
pub const COVERAGE: f64 = 0.90;

/// A small seeded generator (SplitMix64): reproducible, and good enough to draw run indices.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// An index in `0..len` (the modulo bias is below 1e-15 for run counts).
    fn index(&mut self, len: usize) -> usize {
        (self.next() % len as u64) as usize
    }
}

/// An interval `(low, high)` of a ratio.
pub type Interval = (f64, f64);

/// How the two samples of a ratio were taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sampling {
    /// `a[i]` and `b[i]` come from the same run: resampled together.
    Paired,
    /// Unrelated runs: each sample resampled on its own.
    Independent,
}

/// The central [`COVERAGE`] interval of `median(a) / median(b)` over bootstrap resamples, or
/// `None` when a sample has fewer than [`MIN_RUNS`] runs (or, paired, the two differ in length)
/// or a median is not a positive number.
pub fn ratio_of_medians(a: &[f64], b: &[f64], sampling: Sampling) -> Option<Interval> {
    if a.len().min(b.len()) < MIN_RUNS || (sampling == Sampling::Paired && a.len() != b.len()) {
        return None;
    }
    let mut rng = SplitMix(0x00D1_46B0_0575_7A7E);
    let mut ratios = Vec::with_capacity(RESAMPLES);
    for _ in 0..RESAMPLES {
        let (ra, rb): (Vec<f64>, Vec<f64>) = match sampling {
            Sampling::Paired => (0..a.len()).map(|_| rng.index(a.len())).map(|i| (a[i], b[i])).unzip(),
            Sampling::Independent => {
                let ra = (0..a.len()).map(|_| a[rng.index(a.len())]).collect();
                (ra, (0..b.len()).map(|_| b[rng.index(b.len())]).collect())
            }
        };
        let r = median(ra) / median(rb);
        if !r.is_finite() || r <= 0.0 {
            return None;
        }
        ratios.push(r);
    }
    ratios.sort_by(f64::total_cmp);
    let tail = (1.0 - COVERAGE) / 2.0;
    let at = |q: f64| ratios[((q * (RESAMPLES - 1) as f64).round() as usize).min(RESAMPLES - 1)];
    Some((at(tail), at(1.0 - tail)))
}

/// Where an interval lies against a bound that the ratio should not exceed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The whole interval is at or below the bound.
    Below,
    /// The interval holds the bound: this run does not say.
    Straddles,
    /// The whole interval is above the bound.
    Above,
}

pub fn against(interval: Interval, bound: f64) -> Verdict {
    if interval.1 <= bound {
        Verdict::Below
    } else if interval.0 > bound {
        Verdict::Above
    } else {
        Verdict::Straddles
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constant_runs_give_a_point() {
        let (lo, hi) = ratio_of_medians(&[2.0; 5], &[4.0; 5], Sampling::Paired).unwrap();
        assert_eq!((lo, hi), (0.5, 0.5));
        let (lo, hi) = ratio_of_medians(&[3.0; 5], &[3.0; 7], Sampling::Independent).unwrap();
        assert_eq!((lo, hi), (1.0, 1.0));
    }

    #[test]
    fn the_interval_holds_the_estimate_and_widens_with_the_spread() {
        let b = [10.0, 10.2, 9.9, 10.1, 10.0, 9.8, 10.3];
        let tight = [10.4, 10.5, 10.3, 10.6, 10.5, 10.2, 10.7];
        let loose = [8.0, 13.0, 9.0, 12.5, 10.5, 7.5, 14.0];
        let point = median(tight.to_vec()) / median(b.to_vec());
        let (lo, hi) = ratio_of_medians(&tight, &b, Sampling::Paired).unwrap();
        assert!(lo <= point && point <= hi, "{lo} <= {point} <= {hi}");
        let (llo, lhi) = ratio_of_medians(&loose, &b, Sampling::Paired).unwrap();
        assert!(lhi - llo > 2.0 * (hi - lo), "loose {llo}..{lhi} against tight {lo}..{hi}");
        // Seeded: the same samples give the same interval.
        assert_eq!(ratio_of_medians(&loose, &b, Sampling::Paired), Some((llo, lhi)));
    }

    #[test]
    fn pairing_keeps_a_shared_slow_phase_out_of_the_ratio() {
        // Every run's two sides slowed alike by the host: each run's own ratio is 1.1, so
        // every paired resample's ratio of medians is too; resampled independently, the
        // medians come from different phases and spread.
        let u: Vec<f64> = [1.0, 2.0, 1.0, 2.0, 1.5, 2.5, 1.0].iter().map(|x| x * 11.0).collect();
        let r: Vec<f64> = [1.0, 2.0, 1.0, 2.0, 1.5, 2.5, 1.0].iter().map(|x| x * 10.0).collect();
        let (lo, hi) = ratio_of_medians(&u, &r, Sampling::Paired).unwrap();
        assert!((lo - 1.1).abs() < 1e-12 && (hi - 1.1).abs() < 1e-12, "{lo}..{hi}");
        let (ilo, ihi) = ratio_of_medians(&u, &r, Sampling::Independent).unwrap();
        assert!(ilo < 1.0 && ihi > 1.2, "{ilo}..{ihi}");
    }

    #[test]
    fn verdicts_and_refusals() {
        assert_eq!(against((0.9, 1.04), 1.05), Verdict::Below);
        assert_eq!(against((1.0, 1.1), 1.05), Verdict::Straddles);
        assert_eq!(against((1.06, 1.2), 1.05), Verdict::Above);
        assert_eq!(ratio_of_medians(&[], &[1.0; 5], Sampling::Independent), None);
        assert_eq!(ratio_of_medians(&[1.0; 4], &[1.0; 4], Sampling::Paired), None, "too few runs");
        assert_eq!(ratio_of_medians(&[1.0; 6], &[1.0; 5], Sampling::Paired), None, "unpaired lengths");
        assert_eq!(ratio_of_medians(&[1.0; 5], &[0.0; 5], Sampling::Paired), None);
    }
}
