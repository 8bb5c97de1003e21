//! Change batch directories: `insert.txt` (`u v w1 .. wKG`) and `delete.txt` (`u v`), spec 1.5.
//!
//! Both files are line-oriented with blanks (space, tab, CR) between tokens; blank lines are skipped
//! and extra tokens are ignored. Messages carry the original's text plus path, line and column.

use std::path::Path;

use super::csr_text::lex::{self, Num};
use crate::error::{Error, Result};
use crate::graph::Batch;

/// The largest weight (2^31-1).
const W_MAX: i64 = i32::MAX as i64;

/// Parses a vertex token of a batch line; `None` when it is not an integer at all.
fn vertex(tok: &[u8], n: usize) -> Option<std::result::Result<i32, i64>> {
    match lex::parse_i64(tok) {
        Num::Int(v) if v >= 0 && (v as u64) < n as u64 => Some(Ok(v as i32)),
        Num::Int(v) => Some(Err(v)),
        // Too large for 64 bits: certainly out of range, not malformed.
        Num::Overflow => Some(Err(i64::MAX)),
        Num::NotNumber => None,
    }
}

/// Parses the endpoints of a batch line, naming `what` ("Inserted"/"Deleted") on a range error.
fn endpoints(
    path: &Path,
    line_no: usize,
    toks: &[(usize, &[u8])],
    n: usize,
    what: &str,
    invalid: &str,
) -> Result<(i32, i32)> {
    let mut out = [0i32; 2];
    for (slot, &(col, tok)) in out.iter_mut().zip(toks) {
        *slot = match vertex(tok, n) {
            Some(Ok(v)) => v,
            Some(Err(v)) => {
                let msg = format!("{what} edge endpoint out of range: {v} is not in [0, n = {n})");
                return Err(Error::parse(path, line_no, col, msg));
            }
            None => return Err(Error::parse(path, line_no, col, invalid.to_string())),
        };
    }
    Ok((out[0], out[1]))
}

/// Parses `insert.txt` into `b` (which holds `b.k` weights per insertion).
fn parse_inserts(path: &Path, buf: &[u8], n: usize, b: &mut Batch) -> Result<()> {
    let kg = b.k;
    let mut toks: Vec<(usize, &[u8])> = Vec::new();
    for (line_no, line) in lex::lines(buf) {
        toks.clear();
        toks.extend(lex::line_tokens(line).take(2 + kg));
        if toks.is_empty() {
            continue;
        }
        if toks.len() < 2 + kg {
            let msg = format!(
                "Invalid insert line: {} tokens, want u v and {kg} weights",
                toks.len()
            );
            return Err(Error::parse(path, line_no, 1, msg));
        }
        let (u, v) = endpoints(path, line_no, &toks, n, "Inserted", "Invalid insert line")?;
        b.ins_src.push(u);
        b.ins_dst.push(v);
        for &(col, tok) in &toks[2..] {
            match lex::parse_i64(tok) {
                Num::Int(w) if (1..=W_MAX).contains(&w) => b.ins_weights.push(w as i32),
                _ => {
                    let msg = format!(
                        "Invalid insert line: weights must be integers in [1, 2^31-1] (found {:?})",
                        String::from_utf8_lossy(tok)
                    );
                    return Err(Error::parse(path, line_no, col, msg));
                }
            }
        }
    }
    Ok(())
}

/// Parses `delete.txt` into `b`; lines with fewer than 2 tokens are ignored, like the original.
fn parse_deletes(path: &Path, buf: &[u8], n: usize, b: &mut Batch) -> Result<()> {
    let mut toks: Vec<(usize, &[u8])> = Vec::new();
    for (line_no, line) in lex::lines(buf) {
        toks.clear();
        toks.extend(lex::line_tokens(line).take(2));
        if toks.len() < 2 {
            continue;
        }
        let (u, v) = endpoints(path, line_no, &toks, n, "Deleted", "Invalid delete line")?;
        b.delete(u, v);
    }
    Ok(())
}

/// Reads `dir/insert.txt` and `dir/delete.txt` for a graph of `n` vertices and `kg` objectives.
pub fn read_batch_dir(dir: &Path, n: usize, kg: usize) -> Result<Batch> {
    let ins_path = dir.join("insert.txt");
    let del_path = dir.join("delete.txt");
    let ins = lex::read_file(&ins_path)?;
    let del = lex::read_file(&del_path)?;
    let mut b = Batch::new(kg);
    parse_inserts(&ins_path, &ins, n, &mut b)?;
    parse_deletes(&del_path, &del, n, &mut b)?;
    Ok(b)
}

/// The exact bytes of `insert.txt`: `u v w1 .. wK\n` per insertion.
pub fn format_inserts(b: &Batch) -> Vec<u8> {
    let mut out = Vec::with_capacity(b.ins_src.len() * (12 + 6 * b.k));
    for (i, (&u, &v)) in b.ins_src.iter().zip(&b.ins_dst).enumerate() {
        lex::push_i64(&mut out, i64::from(u));
        out.push(b' ');
        lex::push_i64(&mut out, i64::from(v));
        let ws = b.ins_weights.get(i * b.k..(i + 1) * b.k).unwrap_or(&[]);
        for &w in ws {
            out.push(b' ');
            lex::push_i64(&mut out, i64::from(w));
        }
        out.push(b'\n');
    }
    out
}

/// The exact bytes of `delete.txt`: `u v\n` per deletion.
pub fn format_deletes(b: &Batch) -> Vec<u8> {
    let mut out = Vec::with_capacity(b.del_src.len() * 12);
    for (&u, &v) in b.del_src.iter().zip(&b.del_dst) {
        lex::push_i64(&mut out, i64::from(u));
        out.push(b' ');
        lex::push_i64(&mut out, i64::from(v));
        out.push(b'\n');
    }
    out
}

/// Writes `dir/insert.txt` and `dir/delete.txt` (creating `dir`) with the original's exact bytes.
pub fn write_batch_dir(dir: &Path, b: &Batch) -> Result<()> {
    let ni = b.ins_src.len();
    if b.ins_dst.len() != ni
        || b.ins_weights.len() != ni * b.k
        || b.del_dst.len() != b.del_src.len()
    {
        return Err(Error::invalid(format!(
            "dyng: batch arrays disagree: {} insertion tails, {} heads, {} weights for K = {}; {} deletion tails, {} heads",
            ni,
            b.ins_dst.len(),
            b.ins_weights.len(),
            b.k,
            b.del_src.len(),
            b.del_dst.len()
        )));
    }
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    lex::write_file(&dir.join("insert.txt"), &format_inserts(b))?;
    lex::write_file(&dir.join("delete.txt"), &format_deletes(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir_with(name: &str, ins: &str, del: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("dyng-batch-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("insert.txt"), ins).unwrap();
        std::fs::write(d.join("delete.txt"), del).unwrap();
        d
    }

    fn read(name: &str, ins: &str, del: &str, n: usize, kg: usize) -> Result<Batch> {
        let d = dir_with(name, ins, del);
        let r = read_batch_dir(&d, n, kg);
        std::fs::remove_dir_all(d).ok();
        r
    }

    #[test]
    fn lenient_lines_and_round_trip() {
        let b = read(
            "ok",
            "  3 0\t3 2\r\n17\t1 1 1 99 x\n\r\n",
            "7\n0 1\r\n\n1 0 5 6\n3",
            20,
            2,
        )
        .unwrap();
        assert_eq!(
            (b.ins_src.clone(), b.ins_dst.clone()),
            (vec![3, 17], vec![0, 1])
        );
        assert_eq!(b.ins_weights, vec![3, 2, 1, 1]);
        assert_eq!(
            (b.del_src.clone(), b.del_dst.clone()),
            (vec![0, 1], vec![1, 0])
        );
        assert_eq!(format_inserts(&b), b"3 0 3 2\n17 1 1 1\n".to_vec());
        assert_eq!(format_deletes(&b), b"0 1\n1 0\n".to_vec());
        let d = std::env::temp_dir().join(format!("dyng-batch-{}-w/sub", std::process::id()));
        write_batch_dir(&d, &b).unwrap();
        assert_eq!(read_batch_dir(&d, 20, 2).unwrap(), b);
        std::fs::remove_dir_all(d.parent().unwrap()).ok();
    }

    #[test]
    fn errors_carry_the_original_text() {
        let e =
            |ins: &str, del: &str, name: &str| read(name, ins, del, 4, 2).unwrap_err().to_string();
        assert!(e("0 4 1 1\n", "", "b1").contains("Inserted edge endpoint out of range"));
        let s = e("0 1 1\n", "", "b2");
        assert!(
            s.contains("Invalid insert line") && s.contains("insert.txt:1:1:"),
            "{s}"
        );
        let s = e("0 1 1 0\n", "", "b3");
        assert!(
            s.contains("Invalid insert line: weights must be integers in [1, 2^31-1]"),
            "{s}"
        );
        assert!(s.contains(":1:7:"), "{s}");
        assert!(e("0 1 1 4294967299\n", "", "b4").contains("weights must be integers"));
        assert!(e("", "\n0 -1\n", "b5").contains("Deleted edge endpoint out of range"));
        assert!(e("a 1 1 1\n", "", "b6").contains("Invalid insert line"));
        let d = std::env::temp_dir().join(format!("dyng-batch-{}-none", std::process::id()));
        let s = read_batch_dir(&d, 4, 2).unwrap_err().to_string();
        assert!(s.contains("insert.txt"), "{s}");
    }
}
