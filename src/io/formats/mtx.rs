//! Matrix Market input and the originals' `mospPrep mtx2csr` and `widen` rules (docs/formats.md):
//! both directions of a symmetric entry, edges sorted and deduplicated, self-loops dropped, K
//! weights per edge drawn edge-major from `mt19937(seed)` (or, on request, objective 0 taken
//! from the file's values).
//!
//! Unlike the originals, a file is read whole or refused: an entry outside the matrix, an entry
//! count that differs from the size line's, an unsupported banner (`array`, `complex`,
//! `hermitian`) or a stray token is an error naming path, line and column. What the rule drops
//! (self-loops, duplicate entries) is counted in [`MtxReport`] for the caller to report.

use std::path::Path;

use crate::io::generators::rng::{uniform_int, Mt19937};
use crate::io::CsrText;
use crate::error::{Error, Result};

/// The largest objective count the preparation tools accept.
const MAX_K: usize = 32;

/// Where the converted graph's weights come from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MtxWeights {
    /// K weights per edge, uniform in `[wmin, wmax]`, drawn from `mt19937(seed)` over the
    /// edge-major weight array (the originals' rule; the file's values are ignored).
    Drawn,
    /// Objective 0 is each entry's value (an `integer` or `real` file), multiplied by `scale` and
    /// rounded when a scale is given, else required to be an integer; it must land in
    /// [1, 2^31-1]. Objectives 1..K-1 are drawn as `widen` draws them. A duplicate entry keeps
    /// the first value.
    File {
        /// Factor applied to each value before rounding; `None` = values must be integers.
        scale: Option<f64>,
    },
}

/// How to convert a Matrix Market file.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MtxOptions {
    /// Objectives per edge, 1 to 32.
    pub k: usize,
    /// Smallest drawn weight, at least 1.
    pub wmin: i32,
    /// Largest drawn weight, at least `wmin`.
    pub wmax: i32,
    /// Seed of the `mt19937` generator the weights are drawn from.
    pub seed: u32,
    /// Where objective 0's weights come from.
    pub weights: MtxWeights,
}

/// What a conversion found besides the graph.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MtxReport {
    /// The banner declared the matrix symmetric (or skew-symmetric): every entry gave both
    /// directions.
    pub symmetric: bool,
    /// Entries dropped because row == column.
    pub self_loops: usize,
    /// Directed edges dropped because an earlier entry gave the same edge.
    pub duplicates: usize,
}

/// The value type of a file's entries, from its banner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Pattern,
    Integer,
    Real,
    /// The banner does not say: entries may carry one value or none.
    Unknown,
}

/// The banner's qualifiers, as far as the graph needs them.
struct Banner {
    field: Field,
    symmetric: bool,
    skew: bool,
}

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
    let opt = MtxOptions { k, wmin, wmax, seed, weights: MtxWeights::Drawn };
    convert(path, &opt).map(|(t, report)| (t, report.symmetric))
}

/// Reads a SuiteSparse coordinate file and converts it as `opt` says; returns the graph and what
/// the conversion dropped.
pub fn convert(path: &Path, opt: &MtxOptions) -> Result<(CsrText, MtxReport)> {
    check_weight_options(opt.k, opt.wmin, opt.wmax)?;
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    let keep = matches!(opt.weights, MtxWeights::File { .. });
    let (n, report, keys, values) = read_coordinate_edges(path, &bytes, opt.weights)?;
    let mut t = csr_from_sorted_keys(n, &keys)?;
    if keep {
        t.k = 1;
        t.weights = values;
        if opt.k > 1 {
            t = widen(&t, opt.k, opt.wmin, opt.wmax, opt.seed)?;
        }
    } else {
        t.k = opt.k;
        t.weights = draw_weights(keys.len(), opt.k, opt.wmin, opt.wmax, opt.seed)?;
    }
    Ok((t, report))
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

/// The edges of a file: sorted, deduplicated `(x << 32) | y` keys and, with `MtxWeights::File`,
/// each edge's weight (empty otherwise).
type Edges = (Vec<u64>, Vec<i32>);

/// Parses the file into `n`, what was dropped, and its edges.
fn read_coordinate_edges(path: &Path, bytes: &[u8], weights: MtxWeights) -> Result<(usize, MtxReport, Vec<u64>, Vec<i32>)> {
    let mut lines = bytes.split(|&b| b == b'\n').enumerate();
    let banner = match lines.next() {
        Some((_, l)) => read_banner(path, strip_cr(l))?,
        None => return Err(Error::parse(path, 1, 1, "empty file: no Matrix Market banner")),
    };
    if let MtxWeights::File { .. } = weights {
        if banner.field == Field::Pattern {
            return Err(Error::parse(path, 1, 1, "a pattern file holds no values to keep as weights (drop --keep-weights to draw them)"));
        }
        if banner.skew {
            return Err(Error::parse(path, 1, 1, "a skew-symmetric file's mirrored entries have negated values, which cannot be weights (drop --keep-weights to draw them)"));
        }
    }
    let size = read_size_line(path, &mut lines)?;
    let n = size.rows as usize;
    // A symmetric entry yields two edges; an entry needs at least 4 bytes ("a b\n"), so the file
    // size bounds the edge count whatever the declared entry count says.
    let per_entry = if banner.symmetric { 2 } else { 1 };
    let bound = (bytes.len() / 4 + 1) * per_entry;
    let declared = (size.entries as u64).saturating_mul(per_entry as u64);
    let capacity = declared.min(bound as u64) as usize;
    let keep = matches!(weights, MtxWeights::File { .. });
    let mut keys = try_vec::<u64>(capacity)?;
    let mut values = try_vec::<i32>(if keep { capacity } else { 0 })?;
    let mut report = MtxReport { symmetric: banner.symmetric, ..Default::default() };
    let mut read = 0i64;
    let mut last_line = 1;
    for (idx, line) in lines {
        let line = strip_cr(line);
        last_line = idx + 1;
        if is_blank(line) || line.first() == Some(&b'%') {
            continue;
        }
        if read == size.entries {
            return Err(Error::parse(path, idx + 1, 1, format!("more entries than the {} the size line declares", size.entries)));
        }
        read += 1;
        let (a, b, w) = read_entry(path, idx + 1, line, &banner, size.rows, weights)?;
        if a == b {
            report.self_loops += 1;
            continue;
        }
        let (x, y) = ((a - 1) as u64, (b - 1) as u64);
        keys.push((x << 32) | y);
        if banner.symmetric {
            keys.push((y << 32) | x);
        }
        if keep {
            values.resize(values.len() + per_entry, w);
        }
    }
    if read < size.entries {
        let msg = format!("the size line declares {} entries but the file ends after {read}", size.entries);
        return Err(Error::parse(path, last_line, 1, msg));
    }
    let before = keys.len();
    let (keys, values) = sort_dedup(keys, values)?;
    report.duplicates = before - keys.len();
    Ok((n, report, keys, values))
}

/// Sorts the keys and drops repeated ones; with values, stably, so that a repeated edge keeps its
/// first value in file order.
fn sort_dedup(mut keys: Vec<u64>, values: Vec<i32>) -> Result<Edges> {
    if values.is_empty() {
        keys.sort_unstable();
        keys.dedup();
        return Ok((keys, values));
    }
    if keys.len() > u32::MAX as usize {
        return Err(Error::Capacity(format!("{} directed edges exceed the 32-bit limit 2^31-1", keys.len())));
    }
    let mut order = try_vec::<u32>(keys.len())?;
    order.extend(0..keys.len() as u32);
    order.sort_by_key(|&i| keys[i as usize]);
    order.dedup_by_key(|i| keys[*i as usize]);
    let sorted_keys = order.iter().map(|&i| keys[i as usize]).collect();
    let sorted_values = order.iter().map(|&i| values[i as usize]).collect();
    Ok((sorted_keys, sorted_values))
}

/// `%%MatrixMarket matrix coordinate <field> <symmetry>`; qualifiers the banner leaves out are
/// taken as coordinate, unknown field, general.
fn read_banner(path: &Path, line: &[u8]) -> Result<Banner> {
    let toks = tokens(line);
    let word = |i: usize| toks.get(i).map(|&(col, t)| (col, String::from_utf8_lossy(t).to_ascii_lowercase()));
    match word(0) {
        Some((_, w)) if w == "%%matrixmarket" => {}
        _ => {
            let msg = "not a Matrix Market file: line 1 must be the banner `%%MatrixMarket matrix coordinate <field> <symmetry>`";
            return Err(Error::parse(path, 1, 1, msg));
        }
    }
    let unsupported = |(col, w): (usize, String), what: &str| Err(Error::parse(path, 1, col, format!("{what} `{w}` is not supported")));
    if let Some((col, w)) = word(1) {
        if w != "matrix" {
            return unsupported((col, w), "the object");
        }
    }
    if let Some((col, w)) = word(2) {
        match w.as_str() {
            "coordinate" => {}
            "array" => return Err(Error::parse(path, 1, col, "the `array` (dense) format is not supported: dyng reads sparse `coordinate` files")),
            _ => return unsupported((col, w), "the format"),
        }
    }
    let field = match word(3) {
        None => Field::Unknown,
        Some((col, w)) => match w.as_str() {
            "pattern" => Field::Pattern,
            "integer" => Field::Integer,
            "real" | "double" => Field::Real,
            "complex" => return Err(Error::parse(path, 1, col, "the `complex` field is not supported: weights are real or integer")),
            _ => return unsupported((col, w), "the field"),
        },
    };
    let (symmetric, skew) = match word(4) {
        None => (false, false),
        Some((col, w)) => match w.as_str() {
            "general" => (false, false),
            "symmetric" => (true, false),
            "skew-symmetric" => (true, true),
            _ => return unsupported((col, w), "the symmetry"),
        },
    };
    if let Some(&(col, _)) = toks.get(5) {
        return Err(Error::parse(path, 1, col, "the banner has more than five words"));
    }
    Ok(Banner { field, symmetric, skew })
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
        if tokens.len() != 3 {
            let msg = format!("the size line needs three integers, rows cols entries; it has {} words", tokens.len());
            return Err(Error::parse(path, lineno, 1, msg));
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

/// One entry line: row a and column b (1-based, in [1, rows]) and, with `MtxWeights::File`, the
/// weight made of its value.
fn read_entry(path: &Path, lineno: usize, line: &[u8], banner: &Banner, rows: i64, weights: MtxWeights) -> Result<(i64, i64, i32)> {
    let toks = tokens(line);
    let (want, shape) = match banner.field {
        Field::Pattern => (2..=2, "row and column (a pattern file)"),
        Field::Integer | Field::Real => (3..=3, "row, column and value"),
        Field::Unknown => (2..=3, "row, column and at most one value"),
    };
    if !want.contains(&toks.len()) {
        let col = toks.get(*want.end()).map_or(1, |t| t.0);
        let msg = format!("an entry holds {shape}; this line has {} words", toks.len());
        return Err(Error::parse(path, lineno, col, msg));
    }
    let index = |(col, tok): (usize, &[u8])| -> Result<i64> {
        let v = parse_i64(tok).ok_or_else(|| Error::parse(path, lineno, col, "entry: not an integer"))?;
        if v < 1 || v > rows {
            let msg = format!("entry index {v} lies outside the {rows} x {rows} matrix (indices are 1-based)");
            return Err(Error::parse(path, lineno, col, msg));
        }
        Ok(v)
    };
    let (a, b) = (index(toks[0])?, index(toks[1])?);
    let value = match toks.get(2) {
        None => None,
        Some(&(col, tok)) => Some((col, parse_value(path, lineno, col, tok, banner.field)?)),
    };
    let w = match (weights, value) {
        (MtxWeights::File { scale }, Some((col, v))) => file_weight(path, lineno, col, v, scale)?,
        (MtxWeights::File { .. }, None) => {
            return Err(Error::parse(path, lineno, 1, "an entry without a value cannot give its weight"));
        }
        (MtxWeights::Drawn, _) => 0,
    };
    Ok((a, b, w))
}

/// An entry's value: an integer in an `integer` file, a finite number otherwise.
fn parse_value(path: &Path, lineno: usize, col: usize, tok: &[u8], field: Field) -> Result<f64> {
    if field == Field::Integer {
        return parse_i64(tok)
            .map(|v| v as f64)
            .ok_or_else(|| Error::parse(path, lineno, col, "an `integer` file's value must be an integer"));
    }
    std::str::from_utf8(tok)
        .ok()
        .and_then(|t| t.parse::<f64>().ok())
        .filter(|v| v.is_finite())
        .ok_or_else(|| Error::parse(path, lineno, col, "the value is not a finite number"))
}

/// The weight of a value: scaled and rounded, or exactly an integer, in [1, 2^31-1].
fn file_weight(path: &Path, lineno: usize, col: usize, v: f64, scale: Option<f64>) -> Result<i32> {
    let w = match scale {
        Some(s) => (v * s).round(),
        None if v.fract() == 0.0 => v,
        None => {
            let msg = format!("the value {v} is not an integer weight (pass a scale to multiply and round the values)");
            return Err(Error::parse(path, lineno, col, msg));
        }
    };
    if !(1.0..=i32::MAX as f64).contains(&w) {
        let msg = format!("the value {v} gives the weight {w}, outside [1, 2^31-1]");
        return Err(Error::parse(path, lineno, col, msg));
    }
    Ok(w as i32)
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
        // `3 3` is a self-loop; `1 2` repeats the mirror of `2 1` in both directions.
        let opt = MtxOptions { k: 2, wmin: 1, wmax: 5, seed: 1, weights: MtxWeights::Drawn };
        let (_, report) = convert(&p, &opt).expect("valid file");
        assert_eq!(report, MtxReport { symmetric: true, self_loops: 1, duplicates: 2 });
    }

    fn drawn_err(name: &str, text: &str) -> String {
        let p = write_tmp(name, text);
        mtx_to_csr(&p, 1, 1, 1, 1).expect_err("refused").to_string()
    }

    #[test]
    fn malformed_files_are_refused_with_line_and_column() {
        let general = "%%MatrixMarket matrix coordinate pattern general\n";
        let e = drawn_err("range.mtx", &format!("{general}3 3 2\n1 2\n2 7\n"));
        assert!(e.contains(":4:3:") && e.contains("entry index 7 lies outside the 3 x 3 matrix"), "{e}");
        let e = drawn_err("zero.mtx", &format!("{general}3 3 1\n0 2\n"));
        assert!(e.contains(":3:1:") && e.contains("index 0"), "{e}");
        let e = drawn_err("short.mtx", &format!("{general}3 3 5\n1 2\n2 3\n"));
        assert!(e.contains("declares 5 entries but the file ends after 2"), "{e}");
        let e = drawn_err("long.mtx", &format!("{general}3 3 1\n1 2\n% c\n2 3\n"));
        assert!(e.contains(":5:1:") && e.contains("more entries than the 1 the size line declares"), "{e}");
        let e = drawn_err("junk.mtx", &format!("{general}3 3 1\n1 2 x\n"));
        assert!(e.contains(":3:5:") && e.contains("this line has 3 words"), "{e}");
        let e = drawn_err("junk-real.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 1\n1 2 x\n");
        assert!(e.contains(":3:5:") && e.contains("not a finite number"), "{e}");
        let e = drawn_err("int.mtx", "%%MatrixMarket matrix coordinate integer general\n3 3 1\n1 2 1.5\n");
        assert!(e.contains("must be an integer"), "{e}");
        let e = drawn_err("complex.mtx", "%%MatrixMarket matrix coordinate complex general\n3 3 1\n1 2 1 0\n");
        assert!(e.contains(":1:34:") && e.contains("`complex` field is not supported"), "{e}");
        let e = drawn_err("array.mtx", "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n");
        assert!(e.contains(":1:23:") && e.contains("`array` (dense) format is not supported"), "{e}");
        let e = drawn_err("hermitian.mtx", "%%MatrixMarket matrix coordinate real hermitian\n2 2 1\n1 2 1\n");
        assert!(e.contains("the symmetry `hermitian` is not supported"), "{e}");
        let e = drawn_err("nobanner.mtx", "3 3 1\n1 2\n");
        assert!(e.contains(":1:1:") && e.contains("not a Matrix Market file"), "{e}");
        let e = drawn_err("size.mtx", &format!("{general}3 3\n"));
        assert!(e.contains(":2:1:") && e.contains("size line needs three integers"), "{e}");
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

    fn keep(k: usize, scale: Option<f64>) -> MtxOptions {
        MtxOptions { k, wmin: 1, wmax: 50, seed: 4, weights: MtxWeights::File { scale } }
    }

    #[test]
    fn kept_weights_come_from_the_values_and_further_objectives_are_drawn() {
        let p = write_tmp(
            "keep.mtx",
            "%%MatrixMarket matrix coordinate integer symmetric\n3 3 3\n2 1 7\n3 2 9\n1 2 4\n",
        );
        // 1->2 and 2->1 come from `2 1 7` first; `1 2 4` repeats them and keeps nothing.
        let (t, report) = convert(&p, &keep(1, None)).expect("valid");
        assert_eq!((t.k, t.row_ptr.clone(), t.col_ind.clone()), (1, vec![0, 1, 3, 4], vec![1, 0, 2, 1]));
        assert_eq!(t.weights, [7, 7, 9, 9]);
        assert_eq!(report.duplicates, 2);
        let (t2, _) = convert(&p, &keep(3, None)).expect("valid");
        assert_eq!(t2, widen(&t, 3, 1, 50, 4).expect("widen"));

        let p = write_tmp("real.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 2 2.5\n2 1 0.26\n");
        let e = convert(&p, &keep(1, None)).expect_err("2.5 is no integer").to_string();
        assert!(e.contains(":3:5:") && e.contains("not an integer weight"), "{e}");
        let (t, _) = convert(&p, &keep(1, Some(10.0))).expect("scaled");
        assert_eq!(t.weights, [25, 3]);
        let e = convert(&p, &keep(1, Some(1.0))).expect_err("0.26 rounds to 0").to_string();
        assert!(e.contains(":4:5:") && e.contains("outside [1, 2^31-1]"), "{e}");

        let p = write_tmp("pattern.mtx", "%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 2\n");
        let e = convert(&p, &keep(1, None)).expect_err("no values").to_string();
        assert!(e.contains("pattern file holds no values"), "{e}");
        let p = write_tmp("skew.mtx", "%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 1\n2 1 3\n");
        let e = convert(&p, &keep(1, None)).expect_err("negated mirror").to_string();
        assert!(e.contains("skew-symmetric"), "{e}");
        // Drawn weights ignore the values of a skew-symmetric file: both directions, as before.
        assert_eq!(mtx_to_csr(&p, 1, 1, 1, 1).expect("drawn").0.col_ind, [1, 0]);
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
