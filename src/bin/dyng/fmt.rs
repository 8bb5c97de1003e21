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

/// C++ iostream's default floating-point formatting (6 significant digits, `%g`).
pub fn g6(x: f64) -> String {
    if x == 0.0 {
        return "0".into();
    }
    let exp = x.abs().log10().floor() as i32;
    if !(-5..6).contains(&exp) {
        let s = format!("{:.5e}", x);
        // Rust writes 1.23457e6; C++ writes 1.23457e+06, and trims trailing zeros.
        let (mant, e) = s.split_once('e').unwrap_or((&s, "0"));
        let mant = trim_zeros(mant);
        let e: i32 = e.parse().unwrap_or(0);
        return format!("{mant}e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs());
    }
    let decimals = (5 - exp).max(0) as usize;
    trim_zeros(&format!("{:.*}", decimals, x)).to_string()
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
    #[test]
    fn like_iostream() {
        assert_eq!(super::g6(12.345678), "12.3457");
        assert_eq!(super::g6(0.5), "0.5");
        assert_eq!(super::g6(1234567.0), "1.23457e+06");
        assert_eq!(super::g6(100.0), "100");
    }
}
