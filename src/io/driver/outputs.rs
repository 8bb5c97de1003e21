//! The output folder of a MOSP run, laid out and written exactly like the originals' `mosp`.
//!
//! `obj<k>/distancesUpdated.txt`, `obj<k>/SSSPTreeUpdated.txt` for the K objectives, and
//! `combinedGraph/{distancesCsr,SSSPTreeCsr,mospCosts}.txt`. Each file is formatted and written
//! on its own thread, all or nothing ([`write_all_or_nothing`]): a run that fails while writing
//! (a full disk) leaves the output folder as it was.

use crate::io::formats::trees::Text;
use crate::error::{Error, Result};
use crate::mosp::MospResult;
use rayon::prelude::*;
use std::borrow::Cow;
use std::path::{Path, PathBuf};

/// The arrays of a MOSP run's outputs, wherever they live (in process or in a worker's blocks).
pub struct MospArrays<'a> {
    /// (distances, parents) of objectives 0..K-1.
    pub trees: Vec<(&'a [i64], &'a [i32])>,
    /// Combined-graph distances (units of 1/L).
    pub combined_distances: &'a [i64],
    /// The MOSP tree's parents.
    pub combined_parents: &'a [i32],
    /// n x KG, vertex-major.
    pub path_costs: &'a [i64],
    /// Objectives of the graph (the path-cost columns).
    pub graph_k: usize,
}

impl<'a> MospArrays<'a> {
    /// Borrows the arrays of an in-process result.
    pub fn of(m: &'a MospResult) -> Self {
        MospArrays {
            trees: m.trees().iter().map(|t| (t.distances(), t.parents())).collect(),
            combined_distances: m.combined_distances(),
            combined_parents: m.combined_parents(),
            path_costs: m.path_costs(),
            graph_k: m.graph_k(),
        }
    }
}

/// Every output file of `m`, as (relative path, bytes).
pub fn mosp_output_files(m: &MospResult) -> Vec<(PathBuf, Vec<u8>)> {
    output_files(&MospArrays::of(m))
}

/// What an output file holds: a text made as it is written, or bytes made before.
pub(crate) enum Contents<'a> {
    Text(Text<'a>),
    Bytes(&'a [u8]),
}

impl Contents<'_> {
    /// Writes the contents to `out` (a text in pieces, never held whole).
    fn write_to(&self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        match self {
            Contents::Text(t) => t.write_to(out),
            Contents::Bytes(b) => out.write_all(b),
        }
    }

    /// The whole bytes.
    pub(crate) fn bytes(&self) -> Cow<'_, [u8]> {
        match self {
            Contents::Text(t) => t.bytes().into(),
            Contents::Bytes(b) => Cow::Borrowed(b),
        }
    }
}

/// One output file: its path under the output folder and its contents.
struct OutputFile<'a> {
    rel: PathBuf,
    contents: Contents<'a>,
}

/// The output files of a run, each formatted when it is written.
fn jobs<'a>(a: &'a MospArrays<'a>) -> Vec<OutputFile<'a>> {
    let mut jobs: Vec<OutputFile<'a>> = Vec::new();
    let mut push = |rel: PathBuf, text: Text<'a>| jobs.push(OutputFile { rel, contents: Contents::Text(text) });
    for (j, &(d, p)) in a.trees.iter().enumerate() {
        let dir = PathBuf::from(format!("obj{j}"));
        push(dir.join("distancesUpdated.txt"), Text::Distances(d));
        push(dir.join("SSSPTreeUpdated.txt"), Text::Parents(p));
    }
    let comb = PathBuf::from("combinedGraph");
    let (cd, cp) = (a.combined_distances, a.combined_parents);
    push(comb.join("distancesCsr.txt"), Text::Distances(cd));
    push(comb.join("SSSPTreeCsr.txt"), Text::Parents(cp));
    let (n, kg, costs) = (cd.len(), a.graph_k, a.path_costs);
    push(comb.join("mospCosts.txt"), Text::Costs { n, kg, costs });
    jobs
}

/// Every output file of a run, as (relative path, bytes), formatted in parallel.
pub fn output_files(a: &MospArrays<'_>) -> Vec<(PathBuf, Vec<u8>)> {
    jobs(a).par_iter().map(|f| (f.rel.clone(), f.contents.bytes().into_owned())).collect()
}

/// Writes every output file of `m` under `dir`.
pub fn write_mosp_outputs(dir: &Path, m: &MospResult) -> Result<()> {
    write_outputs(dir, &MospArrays::of(m))
}

/// Writes every output file of a run under `dir`, all or nothing; each file is formatted and
/// written on its own thread of the pool (as the originals write theirs concurrently), so the
/// formatting of one overlaps the writing of another and no more than the files in flight are
/// held in memory (a file is formatted and written in pieces of 1 MiB).
pub fn write_outputs(dir: &Path, a: &MospArrays<'_>) -> Result<()> {
    write_jobs(dir, &jobs(a), &write_file)
}

/// Writes `files` (relative path, bytes) under `dir` so that either all of them replace what was
/// there, or, when any write fails (`ENOSPC`, `EIO`), nothing under `dir` changed: each file is
/// written to a temporary file beside its target (`.<name>.tmp-<pid>`, so the same file system)
/// and closed, and only when every one is written are they renamed into place; after a failure
/// the temporary files and the folders this call created are removed.
pub fn write_all_or_nothing(dir: &Path, files: &[(PathBuf, Vec<u8>)]) -> Result<()> {
    write_all_or_nothing_with(dir, files, &write_file)
}

/// Creates `path`, writes `contents` and closes it, reporting a failed close.
fn write_file(path: &Path, contents: &Contents<'_>) -> std::io::Result<()> {
    use std::os::fd::IntoRawFd;
    let mut f = std::fs::File::create(path)?;
    contents.write_to(&mut f)?;
    // A network file system may report a failed write only when the file is closed, which
    // dropping `f` would ignore. (No fsync: it doubled the golden CLI runs' time, 9.8 ->
    // 16.9 s, for a durability across power loss that the originals never had.)
    let fd = f.into_raw_fd();
    // SAFETY: `fd` was just released by `f` and is closed exactly once here.
    if unsafe { libc::close(fd) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// A file's writer (tests inject failures with it).
type Writer<'w> = &'w (dyn Fn(&Path, &Contents<'_>) -> std::io::Result<()> + Sync);

/// [`write_all_or_nothing`] with the writer of one file given.
pub(crate) fn write_all_or_nothing_with(dir: &Path, files: &[(PathBuf, Vec<u8>)], write: Writer<'_>) -> Result<()> {
    let jobs: Vec<OutputFile<'_>> = files
        .iter()
        .map(|(rel, bytes)| OutputFile { rel: rel.clone(), contents: Contents::Bytes(bytes) })
        .collect();
    write_jobs(dir, &jobs, write)
}

/// The all-or-nothing write of [`write_all_or_nothing`]: the folders and temporary names on the
/// calling thread, then every file made and written on the pool, then the renames.
fn write_jobs(dir: &Path, files: &[OutputFile<'_>], write: Writer<'_>) -> Result<()> {
    let mut created: Vec<PathBuf> = Vec::new();
    let mut planned: Vec<(PathBuf, PathBuf)> = Vec::new();
    let folders = files.iter().try_for_each(|f| {
        let target = dir.join(&f.rel);
        let folder = target.parent().unwrap_or(dir).to_path_buf();
        create_dirs(&folder, &mut created)?;
        let name = target.file_name().unwrap_or_default().to_string_lossy();
        planned.push((folder.join(format!(".{name}.tmp-{}", std::process::id())), target));
        Ok(())
    });
    // The first failure in file order, whichever thread met it first.
    let outcome = folders.and_then(|()| {
        let results: Vec<Result<()>> = files
            .par_iter()
            .zip(&planned)
            .map(|(f, (tmp, target))| write(tmp, &f.contents).map_err(|e| Error::io(target, e)))
            .collect();
        results.into_iter().collect::<Result<()>>()
    });
    if let Err(e) = outcome {
        // A partly written file is removed too; a file never begun is not there to remove.
        for (tmp, _) in &planned {
            let _ = std::fs::remove_file(tmp);
        }
        for d in created.iter().rev() {
            let _ = std::fs::remove_dir(d);
        }
        return Err(e);
    }
    for (i, (tmp, target)) in planned.iter().enumerate() {
        // A rename within one folder needs no space; should it fail anyway, say what changed.
        if let Err(e) = std::fs::rename(tmp, target) {
            for (t, _) in &planned[i..] {
                let _ = std::fs::remove_file(t);
            }
            return Err(Error::Io {
                path: target.display().to_string(),
                source: std::io::Error::new(e.kind(), format!("{e}; {i} of {} output files were already replaced", planned.len())),
            });
        }
    }
    Ok(())
}

/// Creates `folder` and its missing parents, noting each one created (outermost first).
fn create_dirs(folder: &Path, created: &mut Vec<PathBuf>) -> Result<()> {
    if folder.as_os_str().is_empty() || folder.is_dir() {
        return Ok(());
    }
    if let Some(parent) = folder.parent() {
        create_dirs(parent, created)?;
    }
    match std::fs::create_dir(folder) {
        Ok(()) => created.push(folder.to_path_buf()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && folder.is_dir() => {}
        Err(e) => return Err(Error::invalid(format!("cannot create {}: {e}", folder.display()))),
    }
    Ok(())
}

/// The deterministic counters of a run with the keys of the golden corpus' `stats.txt`:
/// `graph` is the updated graph, `inserts`/`deletes` the batch's line counts.
pub fn mosp_stats_text(graph_n: usize, graph_m: usize, inserts: usize, deletes: usize, m: &MospResult) -> String {
    let invalidated: Vec<i64> = m.objective_stats().iter().map(|s| s.invalidated).collect();
    let cs = m.combine_stats();
    stats_text(graph_n, graph_m, inserts, deletes, &invalidated, (cs.edges as u64, cs.scale, cs.delta))
}

/// [`mosp_stats_text`] from the counters themselves (as they come back from a worker):
/// `invalidated` per objective (K entries), `combined` = (edges, L, delta).
pub fn stats_text(graph_n: usize, graph_m: usize, inserts: usize, deletes: usize, invalidated: &[i64], combined: (u64, u64, i64)) -> String {
    let mut s = format!(
        "n={graph_n}\nm_updated={graph_m}\nK={}\ninserts={inserts}\ndeletes={deletes}\n",
        invalidated.len()
    );
    for (j, v) in invalidated.iter().enumerate() {
        s += &format!("invalidated_obj{j}={v}\n");
    }
    let (edges, scale, delta) = combined;
    s += &format!("combined_edges={edges}\ncombined_L={scale}\ncombined_delta={delta}\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// Every file under `dir` with its bytes.
    fn tree(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
        let mut out = BTreeMap::new();
        let mut stack = vec![dir.to_path_buf()];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap().flatten() {
                let p = e.path();
                if p.is_dir() {
                    out.insert(p.strip_prefix(dir).unwrap().join(""), vec![]);
                    stack.push(p);
                } else {
                    out.insert(p.strip_prefix(dir).unwrap().to_path_buf(), std::fs::read(&p).unwrap());
                }
            }
        }
        out
    }

    fn files(tag: &str, k: usize) -> Vec<(PathBuf, Vec<u8>)> {
        (0..k)
            .flat_map(|j| {
                [
                    (PathBuf::from(format!("obj{j}/distancesUpdated.txt")), format!("{tag} d{j}\n").into_bytes()),
                    (PathBuf::from(format!("obj{j}/SSSPTreeUpdated.txt")), format!("{tag} p{j}\n").into_bytes()),
                ]
            })
            .chain([(PathBuf::from("combinedGraph/mospCosts.txt"), format!("{tag} costs\n").into_bytes())])
            .collect()
    }

    /// A write that fails at the n-th file (a full disk, injected) leaves the folder exactly as
    /// it was: the previous run's files, no new folder, no temporary file; then a good write
    /// replaces everything.
    #[test]
    fn a_failed_write_leaves_the_folder_as_it_was() {
        let dir = std::env::temp_dir().join(format!("dyng-outputs-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        write_all_or_nothing(&dir, &files("old", 2)).unwrap();
        let before = tree(&dir);
        let count = std::sync::atomic::AtomicUsize::new(0);
        for fail_at in 0..7 {
            count.store(0, std::sync::atomic::Ordering::Relaxed);
            let failing = |p: &Path, c: &Contents<'_>| {
                let b = c.bytes();
                // The files are written on several threads: which ones fail varies, not that
                // the folder stays as it was.
                if count.fetch_add(1, std::sync::atomic::Ordering::Relaxed) >= fail_at {
                    // Half the bytes reach the disk, as when it fills up mid-file.
                    std::fs::write(p, &b[..b.len() / 2])?;
                    return Err(std::io::Error::from_raw_os_error(libc::ENOSPC));
                }
                std::fs::write(p, &b)
            };
            // Three objectives now: obj2 is a new folder.
            let e = write_all_or_nothing_with(&dir, &files("new", 3), &failing).unwrap_err();
            assert!(e.to_string().contains("No space left on device"), "{e}");
            assert_eq!(tree(&dir), before, "failing at write {fail_at}");
        }
        write_all_or_nothing(&dir, &files("new", 3)).unwrap();
        let after = tree(&dir);
        assert_eq!(after.get(Path::new("obj2/SSSPTreeUpdated.txt")).unwrap(), b"new p2\n");
        assert_eq!(after.get(Path::new("obj0/distancesUpdated.txt")).unwrap(), b"new d0\n");
        assert!(after.keys().all(|p| !p.to_string_lossy().contains(".tmp-")));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
