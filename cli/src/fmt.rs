//! Small formatting helpers shared by the report lines.

use std::time::Instant;

/// Milliseconds since `t`.
pub fn ms_since(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

/// Nanoseconds as milliseconds.
pub fn ns_to_ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

/// C's `%g` (C++ iostream's default floating-point formatting): 6 significant digits, fixed
/// notation when the exponent X of the value rounded to 6 digits is in [-4, 6), scientific
/// otherwise, trailing zeros removed.
pub fn g6(x: f64) -> String {
    const P: i32 = 6;
    if x.is_nan() {
        return if x.is_sign_negative() { "-nan" } else { "nan" }.into();
    }
    if x.is_infinite() {
        return if x < 0.0 { "-inf" } else { "inf" }.into();
    }
    // The exponent is the one of the value *after* rounding to P digits (999999.5 is 1e+06),
    // which Rust's exact `{:e}` formatting gives, rounding ties to even as glibc does.
    let sci = format!("{:.*e}", (P - 1) as usize, x);
    let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if (-4..P).contains(&exp) {
        let decimals = (P - 1 - exp) as usize;
        return trim_zeros(&format!("{x:.decimals$}")).to_string();
    }
    let sign = if exp < 0 { '-' } else { '+' };
    format!("{}e{sign}{:02}", trim_zeros(mant), exp.abs())
}

fn trim_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::g6;

    /// What the C library's `printf("%g", x)` writes.
    fn c_g(x: f64) -> String {
        let mut buf = [0u8; 64];
        // SAFETY: "%g" takes one double; snprintf writes at most buf.len() bytes, NUL included.
        let n = unsafe { libc::snprintf(buf.as_mut_ptr().cast(), buf.len(), c"%g".as_ptr(), x) };
        assert!(n >= 0 && (n as usize) < buf.len(), "snprintf returned {n}");
        String::from_utf8(buf[..n as usize].to_vec()).expect("ASCII")
    }

    #[test]
    fn like_iostream() {
        assert_eq!(g6(12.345678), "12.3457");
        assert_eq!(g6(0.5), "0.5");
        assert_eq!(g6(1234567.0), "1.23457e+06");
        assert_eq!(g6(100.0), "100");
        assert_eq!(g6(999999.5), "1e+06");
        assert_eq!(g6(0.00001), "1e-05");
        assert_eq!(g6(0.0001), "0.0001");
    }

    #[test]
    fn edge_cases_match_the_c_library() {
        let cases = [
            0.0, -0.0, 1.0, -1.0, 0.5, 1.5, 2.5, 999999.5, 999999.4, 999995.0, 9999995.0, 99999.95, 0.00001,
            0.0001, 0.000099999995, 0.00009999995, 1e-5, 1e-4, 9.999995e-5, 123456.5, 1234565.0, 0.1, 1e100,
            -1e-300, 5e-324, f64::MAX, f64::MIN_POSITIVE, 1e15, 1e16, 123456789.0, 0.000123456789, 100000.0,
            1000000.0, f64::INFINITY, f64::NEG_INFINITY, f64::NAN,
        ];
        for x in cases {
            assert_eq!(g6(x), c_g(x), "x = {x:e}");
        }
    }

    #[test]
    fn random_values_match_the_c_library() {
        // xorshift64*: random bit patterns (every magnitude) and random millisecond-like values
        // (the report lines' range), both signs, and values near the notation boundaries.
        let mut s = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            s ^= s >> 12;
            s ^= s << 25;
            s ^= s >> 27;
            s.wrapping_mul(0x2545_f491_4f6c_dd1d)
        };
        let mut mismatches = Vec::new();
        for i in 0..300_000 {
            let r = next();
            let x = match i % 4 {
                0 => f64::from_bits(r),
                1 => (r >> 11) as f64 / (1u64 << 53) as f64 * 10f64.powi((r % 16) as i32 - 8),
                2 => (r % 2_000_000_000) as f64 / 1000.0,
                _ => {
                    let base = [1e-5, 1e-4, 1e5, 1e6, 1e-3][(r % 5) as usize];
                    base * (1.0 - ((r >> 8) % 2000) as f64 * 1e-9)
                }
            };
            let x = if r & 1 << 63 != 0 && i % 4 != 0 { -x } else { x };
            if g6(x) != c_g(x) {
                mismatches.push(format!("{x:e}: {} vs C {}", g6(x), c_g(x)));
            }
        }
        assert!(mismatches.is_empty(), "{} of 300000 differ, e.g. {:?}", mismatches.len(), &mismatches[..mismatches.len().min(10)]);
    }
}
