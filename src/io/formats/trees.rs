//! Distance, parent (SSSP tree) and MOSP cost files (spec 1.6).
//!
//! Readers take records `v x` separated by any whitespace, with v and x on one line, and require every
//! vertex exactly once. Writers make the exact bytes line by line with hand-written integer
//! formatting, because these files have millions of lines, and write them in pieces.

use std::path::Path;

use super::csr_text::fast;
use super::csr_text::lex::{self, Num, Tokens};
use crate::error::{Error, Result};
use crate::distance::DISTANCE_INF;

/// Which file a record reader is reading: fixes the messages and the value rule.
#[derive(Clone, Copy)]
enum Kind {
    Distances,
    Parents,
}

impl Kind {
    fn file(self) -> &'static str {
        match self {
            Kind::Distances => "distances file",
            Kind::Parents => "SSSP tree file",
        }
    }
}

/// Reads `v x` records, calling `value` to check and convert each x; returns the values by vertex.
fn read_records<T: Copy>(
    path: &Path,
    n: usize,
    kind: Kind,
    fill: T,
    mut fast_value: impl FnMut(&[u8], &mut usize) -> Option<T>,
    value: impl Fn(&[u8]) -> std::result::Result<T, String>,
) -> Result<Vec<T>> {
    let file = kind.file();
    let mut out = vec![fill; n];
    let mut records = fast::Records::new(n);
    let read = lex::read_pieces(path, |b| b == b'\n', |piece| records.feed(piece, &mut out, &mut fast_value))?;
    if read.is_some() && records.complete() {
        return Ok(out);
    }
    drop(records);
    let buf = lex::read_file(path)?;
    out.fill(fill);
    let mut seen = vec![false; n];
    let mut count = 0usize;
    let mut toks = Tokens::new(&buf);
    while let Some(vt) = toks.next() {
        let invalid = |line, col| Error::parse(path, line, col, format!("Invalid line in {file}"));
        let v = match lex::parse_i64(vt.text) {
            Num::Int(v) => v,
            _ => return Err(invalid(vt.line, vt.col)),
        };
        // The value must follow on the same line; a newline or the end of the file first is an error.
        if !toks.token_on_this_line() {
            let (line, col) = toks.position();
            return Err(invalid(line, col));
        }
        let Some(xt) = toks.next() else {
            return Err(invalid(vt.line, vt.col));
        };
        let x = value(xt.text).map_err(|msg| Error::parse(path, xt.line, xt.col, msg))?;
        let idx = usize::try_from(v).ok().filter(|&i| i < n).ok_or_else(|| {
            let msg = format!("Vertex ID out of range in {file}: vertex {v}, n = {n}");
            Error::parse(path, vt.line, vt.col, msg)
        })?;
        if seen[idx] {
            // The location prefix names the path (once).
            let msg = format!("Vertex {v} listed twice in {file}");
            return Err(Error::parse(path, vt.line, vt.col, msg));
        }
        seen[idx] = true;
        out[idx] = x;
        count += 1;
    }
    if count != n {
        let missing = seen.iter().position(|s| !s).unwrap_or(0);
        let msg = format!("{file} lists {count} of {n} vertices (vertex {missing} is missing)");
        return Err(Error::parse(path, 0, 0, msg));
    }
    Ok(out)
}

/// Reads a distances file of `n` vertices; `INF` becomes [`DISTANCE_INF`].
pub fn read_distances(path: &Path, n: usize) -> Result<Vec<i64>> {
    let shown = path.display().to_string();
    // Fast path: `INF` or up to 18 digits (distances reach 62 bits).
    let fast_value = |buf: &[u8], i: &mut usize| {
        if buf[*i..].starts_with(b"INF") && fast::ends_token(buf, *i + 3) {
            *i += 3;
            return Some(DISTANCE_INF);
        }
        fast::digits_up_to(buf, i, 18).map(|d| d as i64)
    };
    read_records(path, n, Kind::Distances, DISTANCE_INF, fast_value, |tok| {
        if tok == b"INF" {
            return Ok(DISTANCE_INF);
        }
        match lex::parse_i64(tok) {
            Num::Int(d) if d >= 0 => Ok(d),
            Num::Int(_) => Err(format!("Negative distance in distances file: {shown}")),
            _ => Err(format!("Invalid line in distances file: {shown}")),
        }
    })
}

/// Reads an SSSP tree (parents) file of `n` vertices; parents are in [-1, n).
pub fn read_parents(path: &Path, n: usize) -> Result<Vec<i32>> {
    let fast_value = |buf: &[u8], i: &mut usize| {
        if buf[*i..].starts_with(b"-1") && fast::ends_token(buf, *i + 2) {
            *i += 2;
            return Some(-1);
        }
        fast::digits(buf, i).filter(|&p| (p as usize) < n).map(|p| p as i32)
    };
    read_records(path, n, Kind::Parents, -1, fast_value, |tok| {
        match lex::parse_i64(tok) {
            Num::Int(p) if p >= -1 && p < n as i64 => Ok(p as i32),
            Num::Int(p) => Err(format!(
                "Vertex ID out of range in SSSP tree file: parent {p}, n = {n}"
            )),
            _ => Err("Invalid line in SSSP tree file".to_string()),
        }
    })
}

/// Puts `d`, or `INF` when it is not finite (d >= DISTANCE_INF/2).
#[inline]
fn put_distance(out: &mut lex::Block, d: i64) {
    if d >= DISTANCE_INF / 2 {
        out.put(b"INF");
    } else {
        out.int(d);
    }
}

/// Bytes a file is written in: a writer formats this much, hands it on and reuses its buffer, so
/// that a file's text is never held whole (its fresh pages cost more than the formatting).
const PIECE: usize = 1 << 20;

/// The text of a distances, SSSP tree or MOSP costs file, made one line per vertex.
#[derive(Clone, Copy)]
pub enum Text<'a> {
    /// `v d\n` or `v INF\n` for v = 0..n-1.
    Distances(&'a [i64]),
    /// `v p\n` for v = 0..n-1.
    Parents(&'a [i32]),
    /// `v c1 .. cKG\n` from vertex-major `costs[v*kg + j]`, with `INF` for every cost >=
    /// DISTANCE_INF/2 and for an entry beyond `costs.len()` ([`write_costs`] rejects such a short
    /// array first).
    Costs {
        /// Vertices (lines).
        n: usize,
        /// Costs per vertex.
        kg: usize,
        /// n x kg costs.
        costs: &'a [i64],
    },
}

impl Text<'_> {
    fn lines(&self) -> usize {
        match *self {
            Text::Distances(d) => d.len(),
            Text::Parents(p) => p.len(),
            Text::Costs { n, .. } => n,
        }
    }

    /// The most bytes of one line.
    fn longest_line(&self) -> usize {
        let values = match *self {
            Text::Costs { kg, .. } => 1 + kg,
            _ => 2,
        };
        values * (lex::MAX_I64_LEN + 1)
    }

    /// About the bytes of the whole text.
    fn size_hint(&self) -> usize {
        match *self {
            Text::Distances(d) => d.len() * 16,
            Text::Parents(p) => p.len() * 14,
            Text::Costs { n, kg, .. } => n * (8 + 8 * kg),
        }
    }

    /// Line `v`, whose number `id` holds.
    #[inline]
    fn line(&self, out: &mut lex::Block, v: usize, id: &lex::Counter) {
        out.counter(id);
        match *self {
            Text::Distances(d) => {
                out.byte(b' ');
                put_distance(out, d[v]);
            }
            Text::Parents(p) => {
                out.byte(b' ');
                out.int(i64::from(p[v]));
            }
            Text::Costs { kg, costs, .. } => {
                for j in 0..kg {
                    out.byte(b' ');
                    let c = v.checked_mul(kg).and_then(|i| costs.get(i + j)).copied();
                    put_distance(out, c.unwrap_or(DISTANCE_INF));
                }
            }
        }
        out.byte(b'\n');
    }

    /// Hands the text to `sink` a block of lines at a time.
    fn emit<E>(&self, mut sink: impl FnMut(&[u8]) -> std::result::Result<(), E>) -> std::result::Result<(), E> {
        let mut block = lex::Block::new();
        let mut id = lex::Counter::new();
        let longest = self.longest_line();
        for v in 0..self.lines() {
            if block.room() < longest {
                sink(block.take())?;
            }
            self.line(&mut block, v, &id);
            id.step();
        }
        sink(block.take())
    }

    /// The exact bytes, whole.
    pub fn bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.size_hint());
        let Ok(()) = self.emit::<std::convert::Infallible>(|b| {
            out.extend_from_slice(b);
            Ok(())
        });
        out
    }

    /// Writes the exact bytes to `out` in pieces of about 1 MiB.
    pub fn write_to(&self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        let mut buf = Vec::with_capacity(PIECE.min(self.size_hint()) + 8192);
        self.emit(|b| {
            buf.extend_from_slice(b);
            if buf.len() >= PIECE {
                out.write_all(&buf)?;
                buf.clear();
            }
            Ok::<(), std::io::Error>(())
        })?;
        out.write_all(&buf)
    }

    /// Writes the text to a new file at `path` (replacing one there).
    pub fn write_file(&self, path: &Path) -> Result<()> {
        let mut f = std::fs::File::create(path).map_err(|e| Error::io(path, e))?;
        self.write_to(&mut f).map_err(|e| Error::io(path, e))
    }
}

/// The exact bytes of a distances file ([`Text::Distances`]).
pub fn format_distances(d: &[i64]) -> Vec<u8> {
    Text::Distances(d).bytes()
}

/// The exact bytes of an SSSP tree file ([`Text::Parents`]).
pub fn format_parents(p: &[i32]) -> Vec<u8> {
    Text::Parents(p).bytes()
}

/// The exact bytes of `mospCosts.txt` ([`Text::Costs`]).
pub fn format_costs(n: usize, kg: usize, costs: &[i64]) -> Vec<u8> {
    Text::Costs { n, kg, costs }.bytes()
}

/// Writes a distances file (see [`Text::Distances`]).
pub fn write_distances(path: &Path, d: &[i64]) -> Result<()> {
    Text::Distances(d).write_file(path)
}

/// Writes an SSSP tree file (see [`Text::Parents`]).
pub fn write_parents(path: &Path, p: &[i32]) -> Result<()> {
    Text::Parents(p).write_file(path)
}

/// Writes `mospCosts.txt` (see [`Text::Costs`]); `costs` must hold exactly `n * kg` values.
pub fn write_costs(path: &Path, n: usize, kg: usize, costs: &[i64]) -> Result<()> {
    if n.checked_mul(kg) != Some(costs.len()) {
        return Err(Error::invalid(format!(
            "dyng: {} path costs given for n = {n} vertices and KG = {kg} objectives",
            costs.len()
        )));
    }
    Text::Costs { n, kg, costs }.write_file(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_file<T>(name: &str, body: &[u8], f: impl FnOnce(&Path) -> T) -> T {
        let p = std::env::temp_dir().join(format!("dyng-trees-{}-{name}", std::process::id()));
        std::fs::write(&p, body).unwrap();
        let r = f(&p);
        std::fs::remove_file(&p).ok();
        r
    }

    fn dist_err(body: &str, n: usize, name: &str) -> String {
        with_file(name, body.as_bytes(), |p| read_distances(p, n))
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn lenient_records_read_alike_on_both_paths() {
        // Tabs, CRs, several records per line, leading zeros, unordered vertices: the fast path.
        let d = with_file("lenient-d", b"2\tINF\r\n0 0 1 007\n\n3 123456789012345\n", |p| read_distances(p, 4)).unwrap();
        assert_eq!(d, vec![0, 7, DISTANCE_INF, 123_456_789_012_345]);
        let p = with_file("lenient-p", b"1 0\t0 -1\r\n2 1", |p| read_parents(p, 3)).unwrap();
        assert_eq!(p, vec![-1, 0, 1]);
        // `-0` and a 19-digit distance are left to the general path, which reads them as before.
        let d = with_file("general-d", b"0 -0\n1 1000000000000000000\n", |p| read_distances(p, 2)).unwrap();
        assert_eq!(d, vec![0, 1_000_000_000_000_000_000]);
        // So is every error, with its position.
        assert!(dist_err("0 0\n1\n5\n", 2, "split").contains("Invalid line"));
        assert!(dist_err("0 0\n0 1\n", 2, "twice").contains("listed twice"));
    }

    #[test]
    fn formats_are_exact() {
        let inf = DISTANCE_INF;
        assert_eq!(format_distances(&[0, 5, inf, inf / 2, inf / 2 - 1]), {
            format!("0 0\n1 5\n2 INF\n3 INF\n4 {}\n", inf / 2 - 1).into_bytes()
        });
        assert_eq!(format_parents(&[-1, 0, 1]), b"0 -1\n1 0\n2 1\n".to_vec());
        assert_eq!(
            format_costs(2, 2, &[0, 0, inf, inf]),
            b"0 0 0\n1 INF INF\n".to_vec()
        );
        assert_eq!(format_costs(1, 0, &[]), b"0\n".to_vec());
        assert!(format_distances(&[]).is_empty());
    }

    /// A text longer than a piece is written in several pieces whose bytes are the whole text's,
    /// and a failing write stops it with that error.
    #[test]
    fn texts_are_written_in_pieces() {
        struct Pieces(Vec<Vec<u8>>, usize);
        impl std::io::Write for Pieces {
            fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
                if self.0.len() == self.1 {
                    return Err(std::io::Error::from_raw_os_error(libc::ENOSPC));
                }
                self.0.push(b.to_vec());
                Ok(b.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let d: Vec<i64> = (0..300_000).map(|v| if v % 7 == 0 { DISTANCE_INF } else { v * 1_000_003 }).collect();
        let costs: Vec<i64> = d.iter().flat_map(|&x| [x, 3]).collect();
        for text in [Text::Distances(&d), Text::Costs { n: d.len(), kg: 2, costs: &costs }] {
            let whole = text.bytes();
            assert!(whole.len() > 2 * PIECE);
            let mut out = Pieces(Vec::new(), usize::MAX);
            text.write_to(&mut out).unwrap();
            assert!(out.0.len() >= 3 && out.0.iter().all(|p| p.len() < PIECE + 8192));
            assert_eq!(out.0.concat(), whole);
            let e = text.write_to(&mut Pieces(Vec::new(), 1)).unwrap_err();
            assert_eq!(e.raw_os_error(), Some(libc::ENOSPC));
        }
    }

    #[test]
    fn reads_lenient_records() {
        let d = with_file("records-d", b"1\t7\r\n\n0 0 2 INF\n", |p| read_distances(p, 3)).unwrap();
        assert_eq!(d, vec![0, 7, DISTANCE_INF]);
        let p = with_file("records-p", b"0  -1\r\n1  0", |p| read_parents(p, 2)).unwrap();
        assert_eq!(p, vec![-1, 0]);
    }

    #[test]
    fn distance_errors() {
        assert!(dist_err("0 0\n1 inf\n", 2, "e1").contains("Invalid line in distances file"));
        assert!(dist_err("0 0\n1 -3\n", 2, "e2").contains("Negative distance in distances file"));
        let e = dist_err("0 0\n", 2, "e3");
        assert!(e.contains("distances file lists 1 of 2 vertices (vertex 1 is missing)"), "{e}");
        assert_eq!(e.matches("dyng-trees-").count(), 1, "the path once: {e}");
        let e = dist_err("0 0\n0 1\n", 2, "e4");
        assert!(e.contains(":2:1: Vertex 0 listed twice in distances file"), "{e}");
        assert_eq!(e.matches("dyng-trees-").count(), 1, "the path once: {e}");
        let e = dist_err("0\n0\n1 1\n", 2, "e5");
        assert!(e.contains("Invalid line") && e.contains(":1:2:"), "{e}");
        assert!(dist_err("0 0 1\n", 2, "e6").contains("Invalid line"));
        assert!(dist_err("0 0\n2 1\n", 2, "e7").contains("Vertex ID out of range"));
    }

    #[test]
    fn parent_errors() {
        let err = |body: &str, name: &str| {
            with_file(name, body.as_bytes(), |p| read_parents(p, 2))
                .unwrap_err()
                .to_string()
        };
        assert!(err("0 -1\n1 2\n", "p1").contains("Vertex ID out of range in SSSP tree file"));
        assert!(err("0 -1\n5 0\n", "p2").contains("Vertex ID out of range in SSSP tree file"));
        assert!(err("0 -2\n1 0\n", "p3").contains("Vertex ID out of range in SSSP tree file"));
        assert!(err("1 0\n1 0\n", "p4").contains("Vertex 1 listed twice in SSSP tree file"));
        assert!(err("0 -1\n", "p5").contains("SSSP tree file lists 1 of 2 vertices"));
    }
}
