//! The originals' random numbers, bit for bit: `std::mt19937` and the libstdc++ 12 algorithms of
//! `uniform_int_distribution` and `std::shuffle` (reference-behaviour Appendix A).
//!
//! Every seeded output of the preparation tools (weights, change batches) depends on these exact
//! streams, so nothing here may be "improved": the draw counts and orders are part of the format.

const N: usize = 624;
const M: usize = 397;
const MATRIX_A: u32 = 0x9908_b0df;
const UPPER_MASK: u32 = 0x8000_0000;
const LOWER_MASK: u32 = 0x7fff_ffff;

/// The 32-bit Mersenne Twister `std::mt19937`.
#[derive(Clone)]
pub struct Mt19937 {
    state: [u32; N],
    index: usize,
}

impl std::fmt::Debug for Mt19937 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mt19937")
            .field("index", &self.index)
            .finish_non_exhaustive()
    }
}

impl Mt19937 {
    /// The standard seeding (`mt[i] = 1812433253 * (mt[i-1] ^ (mt[i-1] >> 30)) + i`).
    pub fn new(seed: u32) -> Self {
        let mut state = [0u32; N];
        state[0] = seed;
        for i in 1..N {
            let prev = state[i - 1];
            state[i] = 1_812_433_253u32
                .wrapping_mul(prev ^ (prev >> 30))
                .wrapping_add(i as u32);
        }
        Mt19937 { state, index: N }
    }

    /// Regenerates the whole state block (the "twist").
    fn twist(&mut self) {
        for i in 0..N {
            let y = (self.state[i] & UPPER_MASK) | (self.state[(i + 1) % N] & LOWER_MASK);
            let mag = if y & 1 == 1 { MATRIX_A } else { 0 };
            self.state[i] = self.state[(i + M) % N] ^ (y >> 1) ^ mag;
        }
        self.index = 0;
    }

    /// The next tempered output.
    pub fn next_u32(&mut self) -> u32 {
        if self.index >= N {
            self.twist();
        }
        let mut y = self.state[self.index];
        self.index += 1;
        y ^= y >> 11;
        y ^= (y << 7) & 0x9d2c_5680;
        y ^= (y << 15) & 0xefc6_0000;
        y ^ (y >> 18)
    }
}

/// Lemire's nearly divisionless reduction of one 32-bit draw to `[0, r)` (libstdc++ `_S_nd` with a
/// 64-bit product); `r` is in `1..=2^32-1`. Rejected draws consume further outputs.
fn reduce_lemire(rng: &mut Mt19937, r: u32) -> u32 {
    let mut x = rng.next_u32() as u64 * r as u64;
    let mut lo = x as u32;
    if lo < r {
        let threshold = r.wrapping_neg() % r;
        while lo < threshold {
            x = rng.next_u32() as u64 * r as u64;
            lo = x as u32;
        }
    }
    (x >> 32) as u32
}

/// An offset uniform in `[0, range]` exactly as libstdc++ 12's `uniform_int_distribution` draws it
/// from a generator with range `2^32-1`: Lemire when the range is smaller, one raw draw when it is
/// equal, and the recursive "upscaling" loop when it is wider (only possible for 64-bit types).
fn uniform_offset(rng: &mut Mt19937, range: u64) -> u64 {
    const URNG_RANGE: u64 = u32::MAX as u64;
    if range < URNG_RANGE {
        reduce_lemire(rng, (range + 1) as u32) as u64
    } else if range == URNG_RANGE {
        rng.next_u32() as u64
    } else {
        loop {
            // tmp = 2^32 * U[0, range / 2^32]; the sum must not exceed range nor wrap around.
            let high = uniform_offset(rng, range / (URNG_RANGE + 1));
            let tmp = high.wrapping_mul(URNG_RANGE + 1);
            let ret = tmp.wrapping_add(rng.next_u32() as u64);
            if ret <= range && ret >= tmp {
                return ret;
            }
        }
    }
}

/// `std::uniform_int_distribution<int>(a, b)(rng)` (also right for `unsigned` ranges that fit in
/// i32). Requires `a <= b`; with `a > b` it returns `a` without drawing, where C++ is undefined.
pub fn uniform_int(rng: &mut Mt19937, a: i32, b: i32) -> i32 {
    if a > b {
        return a;
    }
    let range = (b as i64 - a as i64) as u64;
    (a as i64 + uniform_offset(rng, range) as i64) as i32
}

/// `std::uniform_int_distribution<size_t>(a, b)(rng)` with a 32-bit generator. For ranges below
/// 2^32-1 this is the same stream as [`uniform_int`]. Returns `a` without drawing if `a > b`.
pub fn uniform_u64(rng: &mut Mt19937, a: u64, b: u64) -> u64 {
    if a > b {
        return a;
    }
    a + uniform_offset(rng, b - a)
}

/// `std::shuffle(v.begin(), v.end(), rng)` of libstdc++ 12: two swap positions per draw while
/// `len^2` fits in the generator's range, classic forward Fisher-Yates otherwise.
pub fn shuffle<T>(v: &mut [T], rng: &mut Mt19937) {
    let len = v.len() as u64;
    if len == 0 {
        return;
    }
    if u32::MAX as u64 / len >= len {
        shuffle_paired(v, rng);
    } else {
        for i in 1..v.len() {
            let j = uniform_u64(rng, 0, i as u64) as usize;
            v.swap(i, j);
        }
    }
}

/// The paired branch: one draw in `[0, s(s+1))` yields positions for `v[i]` (`x / (s+1)`) and
/// `v[i+1]` (`x % (s+1)`), with `s = i + 1`; an even length first swaps `v[1]` alone.
fn shuffle_paired<T>(v: &mut [T], rng: &mut Mt19937) {
    let len = v.len();
    let mut i = 1usize;
    if len.is_multiple_of(2) {
        let j = uniform_u64(rng, 0, 1) as usize;
        v.swap(i, j);
        i += 1;
    }
    while i < len {
        let s = i as u64 + 1;
        let x = uniform_u64(rng, 0, s * (s + 1) - 1);
        v.swap(i, (x / (s + 1)) as usize);
        i += 1;
        v.swap(i, (x % (s + 1)) as usize);
        i += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mt19937_default_seed_10000th_output() {
        // The C++ standard's required check ([rand.predef]).
        let mut g = Mt19937::new(5489);
        let mut last = 0;
        for _ in 0..10000 {
            last = g.next_u32();
        }
        assert_eq!(last, 4_123_659_995);
    }

    #[test]
    fn mt19937_seed_one_first_outputs() {
        let mut g = Mt19937::new(1);
        let got: Vec<u32> = (0..5).map(|_| g.next_u32()).collect();
        assert_eq!(
            got,
            [
                1_791_095_845,
                4_282_876_139,
                3_093_770_124,
                4_005_303_368,
                491_263
            ]
        );
    }

    #[test]
    fn mt19937_default_seed_first_output() {
        let mut g = Mt19937::new(5489);
        assert_eq!(g.next_u32(), 3_499_211_612);
    }

    #[test]
    fn uniform_stays_in_range_and_matches_between_types() {
        let mut a = Mt19937::new(42);
        let mut b = Mt19937::new(42);
        for i in 0..2000u32 {
            let hi = (i % 97) as i32 + 3;
            let x = uniform_int(&mut a, 3, hi);
            let y = uniform_u64(&mut b, 3, hi as u64);
            assert!((3..=hi).contains(&x));
            assert_eq!(x as u64, y);
        }
    }

    #[test]
    fn uniform_full_range_is_one_raw_draw() {
        let mut a = Mt19937::new(7);
        let mut b = Mt19937::new(7);
        let x = uniform_int(&mut a, i32::MIN, i32::MAX);
        assert_eq!(x as i64 - i32::MIN as i64, b.next_u32() as i64);
    }

    #[test]
    fn uniform_wide_u64_range_stays_in_range() {
        let mut g = Mt19937::new(9);
        for _ in 0..1000 {
            let x = uniform_u64(&mut g, 10, 10 + (1u64 << 40));
            assert!((10..=10 + (1u64 << 40)).contains(&x));
        }
    }

    #[test]
    fn shuffle_is_a_permutation_for_both_branches() {
        let mut g = Mt19937::new(3);
        for len in [0usize, 1, 2, 3, 10, 11, 70_000] {
            let mut v: Vec<usize> = (0..len).collect();
            shuffle(&mut v, &mut g);
            let mut s = v.clone();
            s.sort_unstable();
            assert_eq!(s, (0..len).collect::<Vec<_>>());
        }
    }
}
