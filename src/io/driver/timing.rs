//! The timing CSV of `--timing FILE` (spec 1.9): header `kind,name,value`, then one row per stage
//! (`stage,<name>,<ms, 6 decimals>`) and counter (`counter,<name>,<%.0f>`) in recording order.
//!
//! Rust's `{:.6}`/`{:.0}` round like C's `%f` (exact value, ties to even), so only non-finite
//! values need special spelling to match glibc (`nan`, `-nan`, `inf`, `-inf`).

use std::fmt::Write as _;
use std::path::Path;

use crate::error::{Error, Result};

/// Whether a row is a stage time or a counter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowKind {
    /// A stage's duration in milliseconds (`stage,<name>,<ms>`).
    Stage,
    /// A count (`counter,<name>,<value>`).
    Counter,
}

/// Collects timing rows in completion order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Timing {
    rows: Vec<(RowKind, String, f64)>,
}

impl Timing {
    /// An empty record.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records a completed stage that took `ms` milliseconds.
    pub fn stage(&mut self, name: &str, ms: f64) {
        self.rows.push((RowKind::Stage, name.to_string(), ms));
    }

    /// Records a counter value.
    pub fn counter(&mut self, name: &str, value: f64) {
        self.rows.push((RowKind::Counter, name.to_string(), value));
    }

    /// The rows recorded so far.
    pub fn rows(&self) -> &[(RowKind, String, f64)] {
        &self.rows
    }

    /// The CSV text, every line terminated by `\n`.
    pub fn to_csv(&self) -> String {
        let mut out = String::from("kind,name,value\n");
        for (kind, name, value) in &self.rows {
            let (label, digits) = match kind {
                RowKind::Stage => ("stage", 6),
                RowKind::Counter => ("counter", 0),
            };
            // Writing into a String cannot fail.
            let _ = writeln!(out, "{label},{name},{}", c_fixed(*value, digits));
        }
        out
    }

    /// Writes [`Timing::to_csv`] to `path`.
    pub fn write(&self, path: &Path) -> Result<()> {
        std::fs::write(path, self.to_csv()).map_err(|e| Error::io(path, e))
    }
}

/// `printf("%.*f", digits, v)` as glibc prints it.
fn c_fixed(v: f64, digits: usize) -> String {
    if v.is_nan() {
        return if v.is_sign_negative() { "-nan" } else { "nan" }.to_string();
    }
    if v.is_infinite() {
        return if v < 0.0 { "-inf" } else { "inf" }.to_string();
    }
    format!("{v:.digits$}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_bytes() {
        let mut t = Timing::new();
        t.stage("read_graph", 1.5);
        t.counter("pushes", 2.5);
        t.stage("obj0/sosp_update_compute", 0.0000004);
        t.counter("x", f64::NAN);
        let want = "kind,name,value\nstage,read_graph,1.500000\ncounter,pushes,2\n\
                    stage,obj0/sosp_update_compute,0.000000\ncounter,x,nan\n";
        assert_eq!(t.to_csv(), want);
        assert_eq!(Timing::new().to_csv(), "kind,name,value\n");
    }

    #[test]
    fn writes_file() {
        let p = std::env::temp_dir().join(format!("dyng-timing-{}.csv", std::process::id()));
        let mut t = Timing::new();
        t.stage("TOTAL_end_to_end", 12.25);
        t.write(&p).unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        std::fs::remove_file(&p).ok();
        assert_eq!(text, "kind,name,value\nstage,TOTAL_end_to_end,12.250000\n");
    }
}
