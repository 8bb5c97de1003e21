//! DIMACS shortest-path `.gr` files: `c` comments, an optional `p sp n m` header, arcs `a u v w`.
//!
//! With a header ids are 1-based (standard DIMACS); without one they are 0-based, like the Bremen
//! maps of `data/`, and n is the largest id + 1. [`read_dimacs_objectives`] turns several files with
//! the same arc list (one objective each) into a CSR text graph whose rows keep file order.

use std::path::Path;

use super::csr_text::lex::{self, Num};
use crate::io::CsrText;
use crate::error::{Error, Result};

/// The arcs of one `.gr` file, in file order, with 0-based ids and raw (unchecked) weights.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DimacsArcs {
    /// Vertex count: the header's n, or the largest id + 1 without a header.
    pub n: usize,
    /// Tail of each arc, 0-based.
    pub tails: Vec<i32>,
    /// Head of each arc, 0-based.
    pub heads: Vec<i32>,
    /// Weight of each arc, as written (the range is checked when the objectives are combined).
    pub weights: Vec<i64>,
}

/// A header may announce at most this many vertices per file byte (or [`MIN_VERTEX_LIMIT`]): a
/// larger count means a corrupt file, and allocating the CSR row array from it could exhaust memory.
const MAX_VERTICES_PER_BYTE: usize = 1;

/// Small vertex counts are always accepted (a few MiB of row pointers), even for tiny files.
const MIN_VERTEX_LIMIT: usize = 1 << 20;

/// The largest vertex count a file of `len` bytes may give (header n, or largest id + 1).
fn vertex_limit(len: usize) -> usize {
    (i32::MAX as usize - 1).min(
        len.saturating_mul(MAX_VERTICES_PER_BYTE)
            .max(MIN_VERTEX_LIMIT),
    )
}

/// Parses an integer token of a `.gr` line, or reports where it is not one.
fn int(path: &Path, line: usize, (col, tok): (usize, &[u8])) -> Result<i64> {
    match lex::parse_i64(tok) {
        Num::Int(v) => Ok(v),
        _ => {
            let msg = format!(
                "expected an integer, found {:?}",
                String::from_utf8_lossy(tok)
            );
            Err(Error::parse(path, line, col, msg))
        }
    }
}

/// The header `p sp n m` as parsed: n and m.
fn parse_header(
    path: &Path,
    line: usize,
    toks: &[(usize, &[u8])],
    len: usize,
) -> Result<(usize, usize)> {
    if toks.len() != 4 || toks[1].1 != b"sp" {
        return Err(Error::parse(
            path,
            line,
            1,
            "DIMACS header must read `p sp <n> <m>`",
        ));
    }
    let n = int(path, line, toks[2])?;
    let m = int(path, line, toks[3])?;
    let n_max = vertex_limit(len);
    let n_ok = usize::try_from(n).ok().filter(|&n| n <= n_max);
    let m_ok = usize::try_from(m).ok().filter(|&m| m <= i32::MAX as usize);
    match (n_ok, m_ok) {
        (Some(n), Some(m)) => Ok((n, m)),
        _ => Err(Error::parse(
            path,
            line,
            toks[2].0,
            format!(
                "DIMACS header counts n = {n}, m = {m} out of range (n <= {n_max}, m <= 2^31-1)"
            ),
        )),
    }
}

/// Checks a vertex id of an arc and converts it to 0-based.
fn arc_vertex(
    path: &Path,
    line: usize,
    tok: (usize, &[u8]),
    header_n: Option<usize>,
) -> Result<i32> {
    let raw = int(path, line, tok)?;
    let (id, limit) = match header_n {
        Some(n) => (raw.saturating_sub(1), n as i64),
        None => (raw, i32::MAX as i64 - 1),
    };
    if (0..limit).contains(&id) {
        Ok(id as i32)
    } else {
        let range = match header_n {
            Some(n) => format!("[1, {n}] (the header's n)"),
            None => "[0, 2^31-2]".to_string(),
        };
        Err(Error::parse(
            path,
            line,
            tok.0,
            format!("arc endpoint {raw} is not in {range}"),
        ))
    }
}

/// Reads one `.gr` file.
pub fn read_dimacs(path: &Path) -> Result<DimacsArcs> {
    let buf = lex::read_file(path)?;
    let mut g = DimacsArcs::default();
    let mut header: Option<(usize, usize)> = None;
    let mut max_id: i64 = -1;
    let mut toks: Vec<(usize, &[u8])> = Vec::new();
    for (line, text) in lex::lines(&buf) {
        toks.clear();
        toks.extend(lex::line_tokens(text).take(5));
        match toks.first().map(|t| t.1) {
            None | Some(b"c") => {}
            Some(b"p") if header.is_none() && g.tails.is_empty() => {
                header = Some(parse_header(path, line, &toks, buf.len())?);
            }
            Some(b"a") if toks.len() == 4 => {
                let hn = header.map(|h| h.0);
                let u = arc_vertex(path, line, toks[1], hn)?;
                let v = arc_vertex(path, line, toks[2], hn)?;
                max_id = max_id.max(i64::from(u.max(v)));
                g.tails.push(u);
                g.heads.push(v);
                g.weights.push(int(path, line, toks[3])?);
            }
            Some(_) => {
                let msg = "expected `c ...`, one `p sp n m` before the arcs, or `a u v w`";
                return Err(Error::parse(path, line, 1, msg));
            }
        }
    }
    g.n = match header {
        Some((_, m)) if m != g.tails.len() => {
            let msg = format!(
                "the header announces {m} arcs but the file holds {}",
                g.tails.len()
            );
            return Err(Error::parse(path, 0, 0, msg));
        }
        Some((n, _)) => n,
        None => (max_id + 1) as usize,
    };
    if header.is_none() && g.n > vertex_limit(buf.len()) {
        // Without a header, n comes from the largest id; bound it like a header's n.
        let msg = format!(
            "largest vertex id {max_id} is implausibly large for a {}-byte file",
            buf.len()
        );
        return Err(Error::parse(path, 0, 0, msg));
    }
    if g.tails.len() > i32::MAX as usize {
        return Err(Error::Capacity(format!(
            "{}: more than 2^31-1 arcs",
            path.display()
        )));
    }
    Ok(g)
}

/// Checks one weight for the CSR format, replacing 0 by 1 when `zero_to_one` is set.
fn checked_weight(path: &Path, g: &DimacsArcs, i: usize, zero_to_one: bool) -> Result<i32> {
    let w = g.weights[i];
    match w {
        1..=0x7fff_ffff => Ok(w as i32),
        0 if zero_to_one => Ok(1),
        _ => Err(Error::invalid(format!(
            "{}: arc {i} ({} -> {}, 0-based) has weight {w}; weights must be integers in [1, 2^31-1]{}",
            path.display(),
            g.tails[i],
            g.heads[i],
            if w == 0 { " (allow zero_to_one to map 0 to 1)" } else { "" }
        ))),
    }
}

/// Builds a CSR text graph with one objective per file. All files must hold the same arcs (same
/// tails and heads, same order) and the same n. Rows keep file order within each tail (a stable
/// grouping), so a file sorted by tail gives CSR edge order = file order.
pub fn read_dimacs_objectives(paths: &[&Path], zero_to_one: bool) -> Result<CsrText> {
    let Some(&first_path) = paths.first() else {
        return Err(Error::invalid(
            "dyng: read_dimacs_objectives needs at least one file",
        ));
    };
    let first = read_dimacs(first_path)?;
    let k = paths.len();
    let m = first.tails.len();
    let mut weights = vec![0i32; m * k];
    fill_objective(first_path, &first, 0, k, zero_to_one, &mut weights)?;
    for (j, &p) in paths.iter().enumerate().skip(1) {
        let g = read_dimacs(p)?;
        same_arcs(first_path, &first, p, &g)?;
        fill_objective(p, &g, j, k, zero_to_one, &mut weights)?;
    }
    Ok(group_by_tail(&first, k, &weights))
}

/// Writes objective `j` of every arc into the edge-major `weights` (arc order).
fn fill_objective(
    path: &Path,
    g: &DimacsArcs,
    j: usize,
    k: usize,
    zero_to_one: bool,
    weights: &mut [i32],
) -> Result<()> {
    for i in 0..g.tails.len() {
        weights[i * k + j] = checked_weight(path, g, i, zero_to_one)?;
    }
    Ok(())
}

/// The files of one graph must agree on n and on every arc's endpoints.
fn same_arcs(p0: &Path, a: &DimacsArcs, p: &Path, b: &DimacsArcs) -> Result<()> {
    let differ = |what: String| {
        Err(Error::invalid(format!(
            "dyng: {} and {} do not hold the same arc list: {what}",
            p0.display(),
            p.display()
        )))
    };
    if a.n != b.n || a.tails.len() != b.tails.len() {
        return differ(format!(
            "n = {} vs {}, m = {} vs {}",
            a.n,
            b.n,
            a.tails.len(),
            b.tails.len()
        ));
    }
    let arc = |g: &DimacsArcs, i: usize| (g.tails[i], g.heads[i]);
    match (0..a.tails.len()).find(|&i| arc(a, i) != arc(b, i)) {
        Some(i) => differ(format!("arc {i} is {:?} vs {:?}", arc(a, i), arc(b, i))),
        None => Ok(()),
    }
}

/// Counting sort of the arcs by tail, stable, into CSR arrays.
fn group_by_tail(g: &DimacsArcs, k: usize, weights: &[i32]) -> CsrText {
    let mut row_ptr = vec![0i32; g.n + 1];
    for &u in &g.tails {
        row_ptr[u as usize + 1] += 1;
    }
    for i in 0..g.n {
        row_ptr[i + 1] += row_ptr[i];
    }
    let m = g.tails.len();
    let mut cursor: Vec<usize> = row_ptr[..g.n].iter().map(|&x| x as usize).collect();
    let mut col_ind = vec![0i32; m];
    let mut out_w = vec![0i32; m * k];
    for (i, (&u, &v)) in g.tails.iter().zip(&g.heads).enumerate() {
        let slot = cursor[u as usize];
        cursor[u as usize] += 1;
        col_ind[slot] = v;
        out_w[slot * k..(slot + 1) * k].copy_from_slice(&weights[i * k..(i + 1) * k]);
    }
    CsrText {
        n: g.n,
        k,
        row_ptr,
        col_ind,
        weights: out_w,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_files<T>(bodies: &[&str], f: impl FnOnce(&[&Path]) -> T) -> T {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let id = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("dyng-gr-{}-{id}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let paths: Vec<_> = (0..bodies.len())
            .map(|i| dir.join(format!("{i}.gr")))
            .collect();
        for (p, b) in paths.iter().zip(bodies) {
            std::fs::write(p, b).unwrap();
        }
        let refs: Vec<&Path> = paths.iter().map(|p| p.as_path()).collect();
        let r = f(&refs);
        std::fs::remove_dir_all(dir).ok();
        r
    }

    #[test]
    fn zero_based_without_header_and_stable_rows() {
        let t = with_files(
            &["a 1 0 5\na 0 2 0\na 1 2 7\n", "a 1 0 6\na 0 2 9\na 1 2 8"],
            |p| read_dimacs_objectives(p, true),
        )
        .unwrap();
        assert_eq!((t.n, t.k), (3, 2));
        assert_eq!(t.row_ptr, vec![0, 1, 3, 3]);
        assert_eq!(t.col_ind, vec![2, 0, 2]);
        assert_eq!(t.weights, vec![1, 9, 5, 6, 7, 8]);
    }

    #[test]
    fn one_based_with_header() {
        let g = with_files(&["c hi\np sp 4 2\na 1 4 3\n\na 4 1 2\n"], |p| {
            read_dimacs(p[0])
        })
        .unwrap();
        assert_eq!(
            (g.n, g.tails, g.heads, g.weights),
            (4, vec![0, 3], vec![3, 0], vec![3, 2])
        );
    }

    #[test]
    fn errors() {
        let e = |bodies: &[&str], z: bool| {
            with_files(bodies, |p| read_dimacs_objectives(p, z))
                .unwrap_err()
                .to_string()
        };
        assert!(e(&["a 0 1 0\n"], false).contains("weight 0"));
        assert!(e(&["a 0 1 2147483648\n"], true).contains("[1, 2^31-1]"));
        assert!(e(&["a 0 1 1\n", "a 1 0 1\n"], true).contains("same arc list"));
        assert!(e(&["p sp 2 1\na 0 1 1\n"], true).contains("arc endpoint 0"));
        assert!(e(&["p sp 2 2\na 1 2 1\n"], true).contains("announces 2 arcs"));
        assert!(e(&["p sp 2000000000 0\n"], true).contains("out of range"));
        assert!(e(&["a 0 2147483645 1\n"], true).contains("implausibly large"));
        assert!(e(&["x 1 2\n"], true).contains(":1:1:"));
        assert!(e(&["a 1 2\n"], true).contains(":1:1:"));
    }
}
