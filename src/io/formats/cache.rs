//! The binary graph cache in the `MOSPCSR2` layout with the identity rule (spec 1.7, 0.3 item 1),
//! followed by a dyng trailer that makes a damaged or stale cache detectable.
//!
//! The `MOSPCSR2` part records the weakly-canonical text prefix and the size and mtime (ns) of the
//! three text files, then the arrays. The trailer (`DYNGSUM1`) adds the rest of each text file's
//! identity, device, inode and ctime (ns; a rewrite that restores size and mtime still moves the
//! ctime, which no user can set), and ends with the XXH3-64 of every byte before it. A cache is
//! used only if its checksum matches, its identity equals the current one in full and its arrays
//! validate like text. Otherwise the text is parsed and the cache rewritten: silently when the
//! cache is stale or missing, or was written without the trailer (by the original programs); with
//! a warning ([`Loaded::warning`]) when it is damaged (the checksum or the layout does not hold),
//! since one byte flipped in the arrays used to pass as a valid, different graph. A failed write
//! is a warning, not an error.

use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use rayon::prelude::*;

use super::csr_text::{read_csr_triplet, triplet_paths};
use crate::io::CsrText;
use crate::error::{Error, Result};

/// The 8 magic bytes of the layout.
pub const MAGIC: &[u8; 8] = b"MOSPCSR2";

/// The 8 magic bytes of dyng's trailer.
pub const TRAILER_MAGIC: &[u8; 8] = b"DYNGSUM1";

/// Bytes of the trailer: its magic, 3 x (dev, inode, ctime), the checksum.
const TRAILER_LEN: u64 = 8 + 3 * 24 + 8;

/// What identifies the text a cache was built from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextIdentity {
    /// The weakly-canonical prefix, as bytes.
    pub prefix: Vec<u8>,
    /// Sizes of RowPtr, ColInd, Values in bytes.
    pub sizes: [i64; 3],
    /// Modification times of RowPtr, ColInd, Values in ns since the Unix epoch.
    pub mtimes_ns: [i64; 3],
    /// Devices, inodes and status-change times (ns) of RowPtr, ColInd, Values (the trailer's).
    pub devs: [u64; 3],
    /// Inode numbers of RowPtr, ColInd, Values.
    pub inodes: [u64; 3],
    /// Status-change times of RowPtr, ColInd, Values in ns since the Unix epoch.
    pub ctimes_ns: [i64; 3],
}

/// Where [`load_or_build`] got the graph from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// The binary cache: its checksum held and it was built from the current text.
    Cache,
    /// The text triplet: the cache was missing, stale or damaged (and was rewritten).
    Text,
}

/// The result of [`load_or_build`]: the graph, its source, and a warning for the caller to show.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// The graph, validated.
    pub graph: CsrText,
    /// Whether it came from the cache or from the text.
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
        devs: [0; 3],
        inodes: [0; 3],
        ctimes_ns: [0; 3],
    };
    for (i, path) in triplet_paths(prefix).iter().enumerate() {
        use std::os::unix::fs::MetadataExt;
        let meta = std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
        id.devs[i] = meta.dev();
        id.inodes[i] = meta.ino();
        id.ctimes_ns[i] = meta.ctime().saturating_mul(1_000_000_000).saturating_add(meta.ctime_nsec());
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

/// A reader that hashes what passes through it.
struct Hashing<R> {
    inner: R,
    hash: xxhash_rust::xxh3::Xxh3,
}

impl<R: Read> Read for Hashing<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.hash.update(&buf[..n]);
        Ok(n)
    }
}

impl<W: Write> Write for Hashing<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hash.update(&buf[..n]);
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Why a cache file was not used.
#[derive(Debug)]
pub enum CacheFault {
    /// It could not be opened or read.
    Unreadable(Error),
    /// A `MOSPCSR2` file without dyng's trailer (written by another program): not trusted.
    NoChecksum,
    /// The layout or the checksum does not hold: damaged.
    Corrupt(Error),
}

fn corrupt(path: &Path, why: impl std::fmt::Display) -> Error {
    Error::parse(path, 0, 0, format!("invalid binary graph cache: {why}"))
}

/// Reads a cache file: its identity and its graph, checksummed and validated like text.
pub fn read_cache(path: &Path) -> Result<(TextIdentity, CsrText)> {
    read_cache_checked(path).map_err(|f| match f {
        CacheFault::Unreadable(e) | CacheFault::Corrupt(e) => e,
        CacheFault::NoChecksum => corrupt(path, "no dyng checksum trailer (written by another program?)"),
    })
}

/// [`read_cache`], telling a damaged cache from one written without dyng's trailer.
pub fn read_cache_checked(path: &Path) -> std::result::Result<(TextIdentity, CsrText), CacheFault> {
    let file = std::fs::File::open(path).map_err(|e| CacheFault::Unreadable(Error::io(path, e)))?;
    let len = file.metadata().map_err(|e| CacheFault::Unreadable(Error::io(path, e)))?.len();
    let mut r = Hashing { inner: BufReader::new(file), hash: xxhash_rust::xxh3::Xxh3::new() };
    let bad = |e: Error| CacheFault::Corrupt(e);
    let io = |e: std::io::Error| CacheFault::Corrupt(corrupt(path, format!("truncated ({e})")));
    let mut magic = [0u8; 8];
    r.read_exact(&mut magic).map_err(io)?;
    if &magic != MAGIC {
        return Err(bad(corrupt(path, "wrong magic")));
    }
    let plen = read_i64(&mut r).map_err(io)?;
    let plen = u64::try_from(plen)
        .ok()
        .filter(|&p| p <= len)
        .ok_or_else(|| bad(corrupt(path, "bad prefix length")))?;
    let mut prefix = vec![0u8; plen as usize];
    r.read_exact(&mut prefix).map_err(io)?;
    let mut id = TextIdentity {
        prefix,
        sizes: [0; 3],
        mtimes_ns: [0; 3],
        devs: [0; 3],
        inodes: [0; 3],
        ctimes_ns: [0; 3],
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
    let left = len - header.min(len);
    let (n, k, m, trailer) = check_counts(path, n, k, m, left, len >= header).map_err(bad)?;
    let row_ptr = read_i32s(&mut r, n + 1).map_err(io)?;
    let col_ind = read_i32s(&mut r, m).map_err(io)?;
    let weights = read_i32s(&mut r, m * k).map_err(io)?;
    if !trailer {
        return Err(CacheFault::NoChecksum);
    }
    r.read_exact(&mut magic).map_err(io)?;
    if &magic != TRAILER_MAGIC {
        return Err(bad(corrupt(path, "damaged checksum trailer")));
    }
    for i in 0..3 {
        id.devs[i] = read_i64(&mut r).map_err(io)? as u64;
        id.inodes[i] = read_i64(&mut r).map_err(io)? as u64;
        id.ctimes_ns[i] = read_i64(&mut r).map_err(io)?;
    }
    let want = r.hash.digest();
    let got = read_i64(&mut r.inner).map_err(io)? as u64;
    if got != want {
        return Err(bad(corrupt(path, format!("checksum mismatch (XXH3 {want:#018x}, recorded {got:#018x})"))));
    }
    let g = CsrText {
        n,
        k,
        row_ptr,
        col_ind,
        weights,
    };
    validate(&g).map_err(|why| bad(corrupt(path, why)))?;
    Ok((id, g))
}

/// Header rules (n > 0, K > 0, m in [0, 2^31-1]) and the array bytes left, exactly, with or
/// without dyng's trailer after them (the last value: whether there is one).
fn check_counts(
    path: &Path,
    n: i32,
    k: i32,
    m: i64,
    left: u64,
    header_ok: bool,
) -> Result<(usize, usize, usize, bool)> {
    if n <= 0 || k <= 0 || !(0..=i64::from(i32::MAX)).contains(&m) || !header_ok {
        return Err(corrupt(
            path,
            format!("bad header n = {n}, K = {k}, m = {m}"),
        ));
    }
    let (n, k, m) = (n as u64, k as u64, m as u64);
    // At most (2^31) + 2^31 + 2^31 * 2^31 values: fits u64 comfortably.
    let values = (n + 1) + m + m * k;
    let bytes = values.checked_mul(4);
    let trailer = match bytes {
        Some(b) if b == left => false,
        Some(b) if b.checked_add(TRAILER_LEN) == Some(left) => true,
        _ => {
            return Err(corrupt(
                path,
                format!("size does not match n = {n}, K = {k}, m = {m}"),
            ))
        }
    };
    Ok((n as usize, k as usize, m as usize, trailer))
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
    let mut w = Hashing { inner: BufWriter::with_capacity(1 << 20, std::fs::File::create(tmp)?), hash: xxhash_rust::xxh3::Xxh3::new() };
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
    w.write_all(TRAILER_MAGIC)?;
    for i in 0..3 {
        w.write_all(&id.devs[i].to_le_bytes())?;
        w.write_all(&id.inodes[i].to_le_bytes())?;
        w.write_all(&id.ctimes_ns[i].to_le_bytes())?;
    }
    let sum = w.hash.digest();
    let mut w = w.inner;
    w.write_all(&sum.to_le_bytes())?;
    w.into_inner().map_err(|e| e.into_error())?.sync_all()
}

/// Loads the graph of text `prefix` from `cache_path` if the cache's checksum holds and it matches
/// the text's identity, else calls `build` (normally [`read_csr_triplet`]) and rewrites the cache.
/// A stale or missing cache, or one without dyng's trailer, is silently replaced; a damaged one is
/// replaced with [`Loaded::warning`] saying so, as is failing to write it.
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
    let mut damaged = None;
    match read_cache_checked(cache_path) {
        Ok((cached_id, graph)) if cached_id == id => {
            return Ok(Loaded {
                graph,
                source: Source::Cache,
                warning: None,
            });
        }
        Err(CacheFault::Corrupt(e)) => damaged = Some(e),
        _ => {}
    }
    let graph = build()?;
    let damaged = damaged.map(|e| format!("Warning: binary cache {} is damaged and was not used ({e}); rebuilt from the text", cache_path.display()));
    // The layout cannot hold an empty graph or K = 0 (the loader rejects them), so skip writing.
    let failed = if graph.n == 0 || graph.k == 0 {
        None
    } else {
        write_cache(cache_path, &id, &graph).err().map(|e| {
            format!(
                "Warning: could not write binary cache {}: {e}",
                cache_path.display()
            )
        })
    };
    let warning = match (damaged, failed) {
        (Some(a), Some(b)) => Some(format!("{a}\n{b}")),
        (a, b) => a.or(b),
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
    use crate::io::formats::csr_text::write_csr_triplet;

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

    /// Every single-byte change of a cache file is caught: the graph comes from the text, and
    /// the warning says the cache was damaged (3 of 300 flips used to pass as a valid graph).
    #[test]
    fn every_byte_flipped_is_caught() {
        let dir = std::env::temp_dir().join(format!("dyng-cache-flip-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let prefix = dir.join("graph");
        let cache = dir.join("graph.bin");
        let text = crate::io::generators::graphgen::grid(6, 6, 2, 1, 9, 4).unwrap();
        write_csr_triplet(&prefix, &text).unwrap();
        load_or_parse(&cache, &prefix).unwrap();
        let good = std::fs::read(&cache).unwrap();
        assert_eq!(load_or_parse(&cache, &prefix).unwrap().source, Source::Cache);
        for i in 0..good.len() {
            for bit in [0x01u8, 0x80] {
                let mut bad = good.clone();
                bad[i] ^= bit;
                std::fs::write(&cache, &bad).unwrap();
                let l = load_or_parse(&cache, &prefix).unwrap();
                assert_eq!((l.source, &l.graph), (Source::Text, &text), "byte {i} ^ {bit:#x} was used");
                let w = l.warning.unwrap_or_default();
                assert!(w.contains("is damaged and was not used"), "byte {i} ^ {bit:#x}: {w}");
                // The rewritten cache is the good one again.
                assert_eq!(std::fs::read(&cache).unwrap(), good, "byte {i}");
            }
        }
        std::fs::remove_dir_all(dir).ok();
    }

    /// A text file rewritten with its size and mtime restored is still a different file: its
    /// ctime moved, so the cache is rebuilt. A cache of the original programs' layout (no
    /// trailer) is rebuilt without a warning.
    #[test]
    fn the_full_identity_of_the_text_is_checked() {
        let dir = std::env::temp_dir().join(format!("dyng-cache-id-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let prefix = dir.join("graph");
        let cache = dir.join("graph.bin");
        let mut g = sample();
        write_csr_triplet(&prefix, &g).unwrap();
        load_or_parse(&cache, &prefix).unwrap();
        let paths = triplet_paths(&prefix);
        let mtimes: Vec<_> = paths.iter().map(|p| std::fs::metadata(p).unwrap().modified().unwrap()).collect();
        std::thread::sleep(std::time::Duration::from_millis(20));
        g.weights[0] = 7; // one digit for another: the same size
        write_csr_triplet(&prefix, &g).unwrap();
        for (p, t) in paths.iter().zip(mtimes) {
            std::fs::File::options().write(true).open(p).unwrap().set_modified(t).unwrap();
        }
        let l = load_or_parse(&cache, &prefix).unwrap();
        assert_eq!((l.source, &l.graph), (Source::Text, &g));
        assert!(l.warning.is_none());
        // The MOSPCSR2 part alone, as the original programs write it.
        let bytes = std::fs::read(&cache).unwrap();
        std::fs::write(&cache, &bytes[..bytes.len() - TRAILER_LEN as usize]).unwrap();
        assert!(matches!(read_cache_checked(&cache), Err(CacheFault::NoChecksum)));
        let l = load_or_parse(&cache, &prefix).unwrap();
        assert_eq!((l.source, &l.graph, l.warning), (Source::Text, &g, None));
        assert_eq!(load_or_parse(&cache, &prefix).unwrap().source, Source::Cache);
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn weakly_canonical_keeps_missing_tail() {
        let base = std::env::temp_dir().canonicalize().unwrap();
        let p = weakly_canonical(&base.join("dyng-no-such-dir/x/graph"));
        assert_eq!(p, base.join("dyng-no-such-dir/x/graph"));
    }
}
