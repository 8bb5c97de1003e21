//! The binary graph cache in the `MOSPCSR2` layout with the identity rule (spec 1.7, 0.3 item 1).
//!
//! A cache records the weakly-canonical text prefix and the size and mtime (ns) of the three text
//! files; it is used only if that identity equals the current one and its arrays validate like text.
//! Otherwise the text is parsed and the cache rewritten; a failed write is a warning, not an error.

use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use rayon::prelude::*;

use super::csr_text::{read_csr_triplet, triplet_paths};
use super::CsrText;
use crate::error::{Error, Result};

/// The 8 magic bytes of the layout.
pub const MAGIC: &[u8; 8] = b"MOSPCSR2";

/// What identifies the text a cache was built from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextIdentity {
    /// The weakly-canonical prefix, as bytes.
    pub prefix: Vec<u8>,
    /// Sizes of RowPtr, ColInd, Values in bytes.
    pub sizes: [i64; 3],
    /// Modification times of RowPtr, ColInd, Values in ns since the Unix epoch.
    pub mtimes_ns: [i64; 3],
}

/// Where [`load_or_build`] got the graph from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    Cache,
    Text,
}

/// The result of [`load_or_build`]: the graph, its source, and a warning for the caller to show.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub graph: CsrText,
    pub source: Source,
    /// Set when the cache could not be (re)written; the graph is still valid.
    pub warning: Option<String>,
}

/// `std::filesystem::weakly_canonical`: canonicalize the longest existing ancestor, append the rest.
pub fn weakly_canonical(p: &Path) -> PathBuf {
    let abs = std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    let mut rest = Vec::new();
    let mut cur = abs.as_path();
    loop {
        if let Ok(c) = cur.canonicalize() {
            return rest
                .iter()
                .rev()
                .fold(c, |acc: PathBuf, part| acc.join(part));
        }
        match (cur.parent(), cur.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_owned());
                cur = parent;
            }
            _ => return abs,
        }
    }
}

/// The identity of the text triplet at `prefix` (fails if a file cannot be stat'ed).
pub fn text_identity(prefix: &Path) -> Result<TextIdentity> {
    let mut id = TextIdentity {
        prefix: weakly_canonical(prefix)
            .as_os_str()
            .as_encoded_bytes()
            .to_vec(),
        sizes: [0; 3],
        mtimes_ns: [0; 3],
    };
    for (i, path) in triplet_paths(prefix).iter().enumerate() {
        let meta = std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
        id.sizes[i] = i64::try_from(meta.len()).unwrap_or(i64::MAX);
        let mtime = meta.modified().map_err(|e| Error::io(path, e))?;
        id.mtimes_ns[i] = match mtime.duration_since(UNIX_EPOCH) {
            Ok(d) => i64::try_from(d.as_nanos()).unwrap_or(i64::MAX),
            Err(e) => -i64::try_from(e.duration().as_nanos()).unwrap_or(i64::MAX),
        };
    }
    Ok(id)
}

fn read_i64(r: &mut impl Read) -> std::io::Result<i64> {
    let mut b = [0u8; 8];
    r.read_exact(&mut b)?;
    Ok(i64::from_le_bytes(b))
}

fn read_i32(r: &mut impl Read) -> std::io::Result<i32> {
    let mut b = [0u8; 4];
    r.read_exact(&mut b)?;
    Ok(i32::from_le_bytes(b))
}

/// Reads `count` little-endian i32 values in bounded chunks (count is already checked against the
/// file size, so the allocation is bounded by what the file holds).
fn read_i32s(r: &mut impl Read, count: usize) -> std::io::Result<Vec<i32>> {
    const CHUNK: usize = 1 << 18;
    let mut out = Vec::with_capacity(count);
    let mut buf = vec![0u8; 4 * CHUNK.min(count)];
    while out.len() < count {
        let take = CHUNK.min(count - out.len());
        let bytes = &mut buf[..4 * take];
        r.read_exact(bytes)?;
        out.extend(
            bytes
                .chunks_exact(4)
                .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]])),
        );
    }
    Ok(out)
}

fn corrupt(path: &Path, why: impl std::fmt::Display) -> Error {
    Error::parse(path, 0, 0, format!("invalid binary graph cache: {why}"))
}

/// Reads a cache file: its identity and its graph, validated like text.
pub fn read_cache(path: &Path) -> Result<(TextIdentity, CsrText)> {
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let len = file.metadata().map_err(|e| Error::io(path, e))?.len();
    let mut r = BufReader::new(file);
    let io = |e: std::io::Error| corrupt(path, format!("truncated ({e})"));
    let mut magic = [0u8; 8];
    r.read_exact(&mut magic).map_err(io)?;
    if &magic != MAGIC {
        return Err(corrupt(path, "wrong magic"));
    }
    let plen = read_i64(&mut r).map_err(io)?;
    let plen = u64::try_from(plen)
        .ok()
        .filter(|&p| p <= len)
        .ok_or_else(|| corrupt(path, "bad prefix length"))?;
    let mut prefix = vec![0u8; plen as usize];
    r.read_exact(&mut prefix).map_err(io)?;
    let mut id = TextIdentity {
        prefix,
        sizes: [0; 3],
        mtimes_ns: [0; 3],
    };
    for s in id.sizes.iter_mut().chain(id.mtimes_ns.iter_mut()) {
        *s = read_i64(&mut r).map_err(io)?;
    }
    let (n, k, m) = (
        read_i32(&mut r).map_err(io)?,
        read_i32(&mut r).map_err(io)?,
        read_i64(&mut r).map_err(io)?,
    );
    let header = 8 + 8 + plen + 48 + 16;
    let (n, k, m) = check_counts(path, n, k, m, len - header.min(len), len >= header)?;
    let row_ptr = read_i32s(&mut r, n + 1).map_err(io)?;
    let col_ind = read_i32s(&mut r, m).map_err(io)?;
    let weights = read_i32s(&mut r, m * k).map_err(io)?;
    let g = CsrText {
        n,
        k,
        row_ptr,
        col_ind,
        weights,
    };
    validate(&g).map_err(|why| corrupt(path, why))?;
    Ok((id, g))
}

/// Header rules (n > 0, K > 0, m in [0, 2^31-1]) and an exact match of the array bytes left.
fn check_counts(
    path: &Path,
    n: i32,
    k: i32,
    m: i64,
    left: u64,
    header_ok: bool,
) -> Result<(usize, usize, usize)> {
    if n <= 0 || k <= 0 || !(0..=i64::from(i32::MAX)).contains(&m) || !header_ok {
        return Err(corrupt(
            path,
            format!("bad header n = {n}, K = {k}, m = {m}"),
        ));
    }
    let (n, k, m) = (n as u64, k as u64, m as u64);
    // At most (2^31) + 2^31 + 2^31 * 2^31 values: fits u64 comfortably.
    let values = (n + 1) + m + m * k;
    if values.checked_mul(4) != Some(left) {
        return Err(corrupt(
            path,
            format!("size does not match n = {n}, K = {k}, m = {m}"),
        ));
    }
    Ok((n as usize, k as usize, m as usize))
}

/// The text reader's rules applied to arrays: row pointers from 0, monotone, ending at m; columns
/// in [0, n); weights in [1, 2^31-1].
pub fn validate(g: &CsrText) -> std::result::Result<(), String> {
    let rp = &g.row_ptr;
    if rp.len() != g.n + 1 || rp[0] != 0 || rp[g.n] as usize != g.col_ind.len() {
        return Err("row pointers must start at 0 and end at m".into());
    }
    if rp.par_windows(2).any(|w| w[1] < w[0]) {
        return Err("row pointers are not monotone".into());
    }
    let n = g.n as i64;
    if g.col_ind.par_iter().any(|&c| c < 0 || i64::from(c) >= n) {
        return Err("column index out of range".into());
    }
    if g.weights.len() != g.col_ind.len() * g.k || g.weights.par_iter().any(|&w| w < 1) {
        return Err("weights must be integers in [1, 2^31-1]".into());
    }
    Ok(())
}

/// Writes `g` with identity `id` to `path` (through a temporary file renamed into place, so a
/// reader never sees a half-written cache).
pub fn write_cache(path: &Path, id: &TextIdentity, g: &CsrText) -> Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".tmp{}", std::process::id()));
    let tmp = PathBuf::from(tmp);
    let result = write_to(&tmp, id, g).and_then(|()| std::fs::rename(&tmp, path));
    result.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        Error::io(path, e)
    })
}

fn write_to(tmp: &Path, id: &TextIdentity, g: &CsrText) -> std::io::Result<()> {
    let mut w = BufWriter::with_capacity(1 << 20, std::fs::File::create(tmp)?);
    w.write_all(MAGIC)?;
    w.write_all(&(id.prefix.len() as i64).to_le_bytes())?;
    w.write_all(&id.prefix)?;
    for v in id.sizes.iter().chain(&id.mtimes_ns) {
        w.write_all(&v.to_le_bytes())?;
    }
    let bad = || {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "graph too large for the cache",
        )
    };
    w.write_all(&i32::try_from(g.n).map_err(|_| bad())?.to_le_bytes())?;
    w.write_all(&i32::try_from(g.k).map_err(|_| bad())?.to_le_bytes())?;
    w.write_all(&(g.col_ind.len() as i64).to_le_bytes())?;
    for arr in [&g.row_ptr, &g.col_ind, &g.weights] {
        for x in arr.iter() {
            w.write_all(&x.to_le_bytes())?;
        }
    }
    w.into_inner().map_err(|e| e.into_error())?.sync_all()
}

/// Loads the graph of text `prefix` from `cache_path` if the cache matches the text's identity,
/// else calls `build` (normally [`read_csr_triplet`]) and rewrites the cache. A stale, missing or
/// corrupt cache is silently replaced; failing to write it yields [`Loaded::warning`].
pub fn load_or_build(
    cache_path: &Path,
    prefix: &Path,
    build: impl FnOnce() -> Result<CsrText>,
) -> Result<Loaded> {
    let Ok(id) = text_identity(prefix) else {
        // Without an identity nothing can be trusted or recorded; `build` reports missing files.
        return Ok(Loaded {
            graph: build()?,
            source: Source::Text,
            warning: None,
        });
    };
    if let Ok((cached_id, graph)) = read_cache(cache_path) {
        if cached_id == id {
            return Ok(Loaded {
                graph,
                source: Source::Cache,
                warning: None,
            });
        }
    }
    let graph = build()?;
    // The layout cannot hold an empty graph or K = 0 (the loader rejects them), so skip writing.
    let warning = if graph.n == 0 || graph.k == 0 {
        None
    } else {
        write_cache(cache_path, &id, &graph).err().map(|e| {
            format!(
                "Warning: could not write binary cache {}: {e}",
                cache_path.display()
            )
        })
    };
    Ok(Loaded {
        graph,
        source: Source::Text,
        warning,
    })
}

/// [`load_or_build`] with the text reader.
pub fn load_or_parse(cache_path: &Path, prefix: &Path) -> Result<Loaded> {
    load_or_build(cache_path, prefix, || read_csr_triplet(prefix))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::csr_text::write_csr_triplet;

    fn sample() -> CsrText {
        CsrText {
            n: 3,
            k: 2,
            row_ptr: vec![0, 2, 3, 3],
            col_ind: vec![1, 2, 0],
            weights: vec![1, 2, 3, 4, 5, 6],
        }
    }

    #[test]
    fn build_then_use_then_detect_change() {
        let dir = std::env::temp_dir().join(format!("dyng-cache-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let prefix = dir.join("graph");
        let cache = dir.join("graph.bin");
        write_csr_triplet(&prefix, &sample()).unwrap();
        let a = load_or_parse(&cache, &prefix).unwrap();
        assert_eq!(
            (a.source, a.warning.is_none(), &a.graph),
            (Source::Text, true, &sample())
        );
        let b = load_or_parse(&cache, &prefix).unwrap();
        assert_eq!((b.source, &b.graph), (Source::Cache, &sample()));
        // A changed text file (different size) invalidates the cache.
        let mut g = sample();
        g.weights[0] = 100;
        write_csr_triplet(&prefix, &g).unwrap();
        let c = load_or_parse(&cache, &prefix).unwrap();
        assert_eq!((c.source, &c.graph), (Source::Text, &g));
        // A corrupted cache is rebuilt, not trusted.
        let mut bytes = std::fs::read(&cache).unwrap();
        let last = bytes.len() - 4;
        bytes[last..].copy_from_slice(&0i32.to_le_bytes());
        std::fs::write(&cache, &bytes).unwrap();
        assert!(read_cache(&cache).is_err());
        assert_eq!(load_or_parse(&cache, &prefix).unwrap().graph, g);
        // Truncations never panic.
        for cut in 0..bytes.len() {
            std::fs::write(&cache, &bytes[..cut]).unwrap();
            assert!(read_cache(&cache).is_err());
        }
        // An unwritable cache path gives a warning, not an error.
        let d = load_or_parse(&dir.join("no/such/dir/c.bin"), &prefix).unwrap();
        assert!(d.warning.unwrap().contains("could not write binary cache"));
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn weakly_canonical_keeps_missing_tail() {
        let base = std::env::temp_dir().canonicalize().unwrap();
        let p = weakly_canonical(&base.join("dyng-no-such-dir/x/graph"));
        assert_eq!(p, base.join("dyng-no-such-dir/x/graph"));
    }
}
