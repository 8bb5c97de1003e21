//! Matrix Market input and the originals' `mospPrep mtx2csr` and `widen` rules (reference-behaviour
//! 1.8, 7.2): both directions of a symmetric entry, edges sorted and deduplicated, K weights per
//! edge drawn edge-major from `mt19937(seed)`.
//!
//! A file that ends before its declared entry count stops silently, as the OpenMP original does.

use std::path::Path;

use super::rng::{uniform_int, Mt19937};
use super::CsrText;
use crate::error::{Error, Result};

/// The largest objective count the preparation tools accept.
const MAX_K: usize = 32;

/// The size line of a coordinate file.
struct SizeLine {
    rows: i64,
    entries: i64,
}

/// Reads a SuiteSparse coordinate file and converts it with the `mtx2csr` rule: K weights per edge,
/// uniform in `[wmin, wmax]`, drawn from `mt19937(seed)` over the edge-major weight array.
/// Returns the graph and whether the banner declared the matrix symmetric.
pub fn mtx_to_csr(
    path: &Path,
    k: usize,
    wmin: i32,
    wmax: i32,
    seed: u32,
) -> Result<(CsrText, bool)> {
    check_weight_options(k, wmin, wmax)?;
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    let (n, symmetric, keys) = read_coordinate_keys(path, &bytes)?;
    let mut t = csr_from_sorted_keys(n, &keys)?;
    t.k = k;
    t.weights = draw_weights(keys.len(), k, wmin, wmax, seed)?;
    Ok((t, symmetric))
}

/// `mospPrep widen`: keeps the existing objectives of every edge and appends `k_new - t.k` new ones,
/// drawing one weight per new (edge, objective) in edge-major order from `mt19937(seed)`.
pub fn widen(t: &CsrText, k_new: usize, wmin: i32, wmax: i32, seed: u32) -> Result<CsrText> {
    check_weight_options(k_new, wmin, wmax)?;
    let m = t.col_ind.len();
    if k_new < t.k {
        return Err(Error::invalid(format!(
            "widen: the graph has {} objectives; the new count {k_new} must not be smaller",
            t.k
        )));
    }
    if t.weights.len() != m * t.k {
        return Err(Error::invalid(format!(
            "widen: {} weights for {m} edges x {} objectives",
            t.weights.len(),
            t.k
        )));
    }
    let mut weights = try_vec::<i32>(m * k_new)?;
    let mut rng = Mt19937::new(seed);
    for e in 0..m {
        for j in 0..k_new {
            let w = if j < t.k {
                t.weights[e * t.k + j]
            } else {
                uniform_int(&mut rng, wmin, wmax)
            };
            weights.push(w);
        }
    }
    Ok(CsrText {
        n: t.n,
        k: k_new,
        row_ptr: t.row_ptr.clone(),
        col_ind: t.col_ind.clone(),
        weights,
    })
}

/// The option rules of `mtx2csr`, `widen` and the graph generators: K in 1..32 and
/// 1 <= wmin <= wmax.
pub(crate) fn check_weight_options(k: usize, wmin: i32, wmax: i32) -> Result<()> {
    if k == 0 || k > MAX_K {
        return Err(Error::invalid(format!(
            "K = {k} objectives; the generators accept 1 to {MAX_K}"
        )));
    }
    if wmin < 1 || wmin > wmax {
        return Err(Error::invalid(format!(
            "weight range [{wmin}, {wmax}]; need 1 <= wmin <= wmax <= 2^31-1"
        )));
    }
    Ok(())
}

/// An empty vector with room for `len` items, or an out-of-memory error instead of an abort.
fn try_vec<T>(len: usize) -> Result<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(len)
        .map_err(|_| Error::OutOfMemory(format!("cannot allocate {len} items")))?;
    Ok(v)
}

/// One weight per (edge, objective), edge-major, in draw order.
fn draw_weights(m: usize, k: usize, wmin: i32, wmax: i32, seed: u32) -> Result<Vec<i32>> {
    let mut rng = Mt19937::new(seed);
    let mut w = try_vec::<i32>(m * k)?;
    for _ in 0..m * k {
        w.push(uniform_int(&mut rng, wmin, wmax));
    }
    Ok(w)
}

/// Builds the CSR arrays (without weights) from sorted, distinct `(x << 32) | y` keys.
fn csr_from_sorted_keys(n: usize, keys: &[u64]) -> Result<CsrText> {
    if keys.len() > i32::MAX as usize {
        return Err(Error::Capacity(format!(
            "{} directed edges exceed the 32-bit limit 2^31-1",
            keys.len()
        )));
    }
    let mut row_ptr = try_vec::<i32>(n + 1)?;
    row_ptr.resize(n + 1, 0);
    let mut col_ind = try_vec::<i32>(keys.len())?;
    for &key in keys {
        row_ptr[(key >> 32) as usize + 1] += 1;
        col_ind.push((key & 0xffff_ffff) as i32);
    }
    for u in 0..n {
        row_ptr[u + 1] += row_ptr[u];
    }
    Ok(CsrText {
        n,
        k: 0,
        row_ptr,
        col_ind,
        weights: Vec::new(),
    })
}

/// Parses the file into `n`, the symmetric flag and the sorted, deduplicated edge keys.
fn read_coordinate_keys(path: &Path, bytes: &[u8]) -> Result<(usize, bool, Vec<u64>)> {
    let mut lines = bytes.split(|&b| b == b'\n').enumerate();
    let banner = match lines.next() {
        Some((_, l)) => l,
        None => {
            return Err(Error::parse(
                path,
                1,
                1,
                "empty file: no Matrix Market banner",
            ))
        }
    };
    let symmetric = contains(banner, b"symmetric");
    let size = read_size_line(path, &mut lines)?;
    let n = size.rows as usize;
    // A symmetric entry yields two keys; an entry needs at least 4 bytes ("a b\n"), so the file
    // size bounds the key count whatever the declared entry count says.
    let per_entry = if symmetric { 2 } else { 1 };
    let bound = (bytes.len() / 4 + 1) * per_entry;
    let declared = (size.entries as u64).saturating_mul(per_entry as u64);
    let mut keys = try_vec::<u64>(declared.min(bound as u64) as usize)?;
    let mut remaining = size.entries;
    while remaining > 0 {
        let Some((idx, line)) = lines.next() else {
            break; // a truncated file stops silently (OpenMP behaviour)
        };
        let line = strip_cr(line);
        if is_blank(line) || line.first() == Some(&b'%') {
            continue;
        }
        remaining -= 1;
        let (a, b) = read_entry(path, idx + 1, line)?;
        push_entry_keys(&mut keys, a, b, size.rows, symmetric);
    }
    keys.sort_unstable();
    keys.dedup();
    Ok((n, symmetric, keys))
}

/// Appends the key(s) of entry (a, b) (1-based); loops and out-of-range entries are dropped.
fn push_entry_keys(keys: &mut Vec<u64>, a: i64, b: i64, rows: i64, symmetric: bool) {
    let in_range = |x: i64| x >= 1 && x <= rows;
    if a == b || !in_range(a) || !in_range(b) {
        return;
    }
    let (x, y) = ((a - 1) as u64, (b - 1) as u64);
    keys.push((x << 32) | y);
    if symmetric {
        keys.push((y << 32) | x);
    }
}

/// Skips comment and blank lines and parses `rows cols entries` (rows == cols in (0, 2^31-1]).
fn read_size_line<'a>(
    path: &Path,
    lines: &mut impl Iterator<Item = (usize, &'a [u8])>,
) -> Result<SizeLine> {
    for (idx, line) in lines {
        let line = strip_cr(line);
        if is_blank(line) || line.first() == Some(&b'%') {
            continue;
        }
        let lineno = idx + 1;
        let tokens = tokens(line);
        if tokens.len() < 3 {
            return Err(Error::parse(
                path,
                lineno,
                1,
                "size line needs three integers: rows cols entries",
            ));
        }
        let mut v = [0i64; 3];
        for (slot, &(col, tok)) in v.iter_mut().zip(tokens.iter()) {
            *slot = parse_i64(tok)
                .ok_or_else(|| Error::parse(path, lineno, col, "size line: not an integer"))?;
        }
        let [rows, cols, entries] = v;
        if rows != cols {
            return Err(Error::parse(
                path,
                lineno,
                tokens[1].0,
                format!("the matrix is {rows} x {cols}; a graph needs rows == cols"),
            ));
        }
        if rows <= 0 || rows > i32::MAX as i64 {
            return Err(Error::parse(
                path,
                lineno,
                tokens[0].0,
                format!("{rows} rows; need 1 to 2^31-1"),
            ));
        }
        if entries < 0 {
            return Err(Error::parse(
                path,
                lineno,
                tokens[2].0,
                format!("negative entry count {entries}"),
            ));
        }
        return Ok(SizeLine { rows, entries });
    }
    Err(Error::parse(path, 1, 1, "no size line after the banner"))
}

/// The first two integers of an entry line (row a, column b; any value column is ignored).
fn read_entry(path: &Path, lineno: usize, line: &[u8]) -> Result<(i64, i64)> {
    let toks = tokens(line);
    if toks.len() < 2 {
        return Err(Error::parse(
            path,
            lineno,
            1,
            "entry line needs a row and a column",
        ));
    }
    let parse = |(col, tok): (usize, &[u8])| {
        parse_i64(tok).ok_or_else(|| Error::parse(path, lineno, col, "entry: not an integer"))
    };
    Ok((parse(toks[0])?, parse(toks[1])?))
}

/// Whitespace-separated tokens with their 1-based byte columns.
fn tokens(line: &[u8]) -> Vec<(usize, &[u8])> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < line.len() {
        if is_space(line[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < line.len() && !is_space(line[i]) {
            i += 1;
        }
        out.push((start + 1, &line[start..i]));
    }
    out
}

/// A decimal integer with an optional sign; `None` on anything else or on overflow.
fn parse_i64(tok: &[u8]) -> Option<i64> {
    std::str::from_utf8(tok).ok()?.parse::<i64>().ok()
}

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\x0b' | b'\x0c')
}

fn is_blank(line: &[u8]) -> bool {
    line.iter().all(|&b| is_space(b))
}

fn strip_cr(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file under the temp dir, removed when dropped.
    struct TmpFile(std::path::PathBuf);

    impl Drop for TmpFile {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }

    impl std::ops::Deref for TmpFile {
        type Target = std::path::Path;
        fn deref(&self) -> &std::path::Path {
            &self.0
        }
    }

    fn write_tmp(name: &str, text: &str) -> TmpFile {
        let p = std::env::temp_dir().join(format!("dyng-mtx-{}-{name}", std::process::id()));
        std::fs::write(&p, text).expect("temp file");
        TmpFile(p)
    }

    #[test]
    fn symmetric_file_gives_both_directions_sorted_and_deduplicated() {
        let p = write_tmp(
            "sym.mtx",
            "%%MatrixMarket matrix coordinate pattern symmetric\n% c\n3 3 4\n2 1\n3 1\n3 3\n1 2\n",
        );
        let (t, sym) = mtx_to_csr(&p, 2, 1, 5, 1).expect("valid file");
        assert!(sym);
        assert_eq!(t.row_ptr, [0, 2, 3, 4]);
        assert_eq!(t.col_ind, [1, 2, 0, 0]);
        assert_eq!(t.weights.len(), 8);
        let mut rng = Mt19937::new(1);
        let expect: Vec<i32> = (0..8).map(|_| uniform_int(&mut rng, 1, 5)).collect();
        assert_eq!(t.weights, expect);
    }

    #[test]
    fn truncated_file_stops_silently_and_drops_out_of_range() {
        let p = write_tmp(
            "trunc.mtx",
            "%%MatrixMarket matrix coordinate real general\n3 3 9\n1 2 0.5\n4 1 1\n",
        );
        let (t, sym) = mtx_to_csr(&p, 1, 1, 1, 1).expect("valid file");
        assert!(!sym);
        assert_eq!(t.row_ptr, [0, 1, 1, 1]);
        assert_eq!(t.col_ind, [1]);
    }

    #[test]
    fn header_errors_name_line_and_column() {
        let p = write_tmp("bad.mtx", "%%MatrixMarket\n%\n3 4 1\n");
        let err = mtx_to_csr(&p, 1, 1, 1, 1).expect_err("not square");
        assert!(err.to_string().contains(":3:3:"), "{err}");
        let p = write_tmp("bad2.mtx", "%%MatrixMarket\n3 3 x\n");
        let err = mtx_to_csr(&p, 1, 1, 1, 1).expect_err("not a number");
        assert!(err.to_string().contains(":2:5:"), "{err}");
    }

    #[test]
    fn widen_keeps_old_objectives_and_draws_new_ones() {
        let t = CsrText {
            n: 2,
            k: 1,
            row_ptr: vec![0, 1, 2],
            col_ind: vec![1, 0],
            weights: vec![7, 9],
        };
        let w = widen(&t, 3, 1, 50, 4).expect("valid");
        let mut rng = Mt19937::new(4);
        let mut d = || uniform_int(&mut rng, 1, 50);
        let expect = vec![7, d(), d(), 9, d(), d()];
        assert_eq!(w.weights, expect);
        assert!(widen(&t, 0, 1, 50, 4).is_err());
    }
}
