//! The graphs and batches of each suite.

use super::Suite;
use dyng::io::{formats::{dimacs, mtx}, generators::graphgen, CsrText};
use dyng::{Csr, Error, WeightLayout};
use std::path::{Path, PathBuf};

/// A graph of the plan, built lazily (the grid has a million vertices).
pub struct GraphSpec {
    pub name: &'static str,
    pub k: usize,
    /// A source in the giant component.
    pub source: usize,
    /// Hops of the local batches' ball.
    pub local_hops: usize,
    pub build: Box<dyn Fn() -> dyng::Result<Csr>>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BatchKind {
    Safe,
    Unsafe,
    Local,
}

impl BatchKind {
    pub fn name(self) -> &'static str {
        match self {
            BatchKind::Safe => "safe",
            BatchKind::Unsafe => "unsafe",
            BatchKind::Local => "local",
        }
    }
}

pub struct Plan {
    pub graphs: Vec<(GraphSpec, Vec<(BatchKind, usize)>)>,
}

fn csr(t: CsrText) -> dyng::Result<Csr> {
    Csr::from_arrays(t.n, t.k, t.row_ptr, t.col_ind, &t.weights, WeightLayout::EdgeMajor)
}

fn bundled(name: &str) -> PathBuf {
    let local = PathBuf::from("data").join(name);
    if local.exists() {
        return local;
    }
    crate::repo_dir().join("data").join(name)
}

fn usroads() -> GraphSpec {
    GraphSpec {
        name: "usroads",
        k: 3,
        source: 531,
        local_hops: 100,
        build: Box::new(|| csr(mtx::mtx_to_csr(&bundled("road-usroads.mtx"), 3, 1, 100, 12345)?.0)),
    }
}

fn grid1000() -> GraphSpec {
    grid(1000, "grid1000")
}

/// The generated road-like grid of `side`^2 vertices.
fn grid(side: usize, name: &'static str) -> GraphSpec {
    GraphSpec {
        name,
        k: 3,
        source: 0,
        local_hops: 110,
        build: Box::new(move || csr(graphgen::grid(side, side, 3, 1, 100, 12345)?)),
    }
}

/// Bytes a latency run holds per vertex of a grid at most (the resident graph with its in-rows,
/// the MOSP result and a computed one beside it, the workspaces, and the change generator's
/// copy of the graph with its reverse).
const LATENCY_BYTES_PER_VERTEX: u64 = 640;

fn available_bytes() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let kb = info.lines().find(|l| l.starts_with("MemAvailable:"))?.split_whitespace().nth(1)?.parse::<u64>().ok()?;
    Some(kb * 1024)
}

/// The graphs of the latency suite: usroads and the grids from 500^2 to 4000^2 (a size that
/// does not fit in the memory available is skipped, with a notice), bremen from `data`; `quick`
/// takes usroads and the 500^2 grid.
pub fn latency_graphs(full: bool, data: Option<&Path>) -> Vec<GraphSpec> {
    let mut g = vec![usroads(), grid(500, "grid500")];
    if !full {
        return g;
    }
    let avail = available_bytes();
    for (side, name) in [(1000, "grid1000"), (2000, "grid2000"), (4000, "grid4000")] {
        let need = (side * side) as u64 * LATENCY_BYTES_PER_VERTEX;
        match avail {
            Some(a) if a < need => eprintln!("notice: {name} skipped: it needs about {} MiB, {} MiB are available", need >> 20, a >> 20),
            _ => g.push(grid(side, name)),
        }
    }
    match shared_data(data) {
        Some(dir) => g.push(bremen(dir)),
        None => eprintln!("notice: bremen skipped (no bremen_*.gr; pass --data DIR)"),
    }
    g
}

fn bremen(dir: PathBuf) -> GraphSpec {
    GraphSpec {
        name: "bremen",
        k: 2,
        source: 0,
        local_hops: 40,
        build: Box::new(move || {
            let d = dir.join("bremen_dist.gr");
            let t = dir.join("bremen_time.gr");
            csr(dimacs::read_dimacs_objectives(&[&d, &t], true)?)
        }),
    }
}

fn rgg20() -> GraphSpec {
    GraphSpec {
        name: "rgg_n_2_20",
        k: 3,
        source: 0,
        local_hops: 110,
        build: Box::new(|| csr(graphgen::rgg(20, 3, 1, 100, 12345)?)),
    }
}

fn shared_data(given: Option<&Path>) -> Option<PathBuf> {
    let candidates = [given.map(Path::to_path_buf), Some(PathBuf::from("../shared/data"))];
    candidates.into_iter().flatten().find(|d| d.join("bremen_dist.gr").exists())
}

pub fn plan(suite: Suite, data: Option<&Path>) -> dyng::Result<Plan> {
    let kinds = [BatchKind::Safe, BatchKind::Unsafe, BatchKind::Local];
    let graphs = match suite {
        Suite::Latency => return Ok(Plan { graphs: Vec::new() }),
        Suite::Quick => {
            let batches: Vec<_> = kinds.iter().map(|&k| (k, 10_000)).collect();
            vec![(usroads(), batches.clone()), (grid1000(), batches)]
        }
        Suite::Full => {
            let sizes = [100, 1_000, 10_000, 50_000];
            let batches: Vec<_> = kinds
                .iter()
                .flat_map(|&k| sizes.iter().map(move |&s| (k, s)))
                .collect();
            let mut g = vec![(usroads(), batches.clone()), (grid1000(), batches.clone()), (rgg20(), batches.clone())];
            match shared_data(data) {
                Some(dir) => g.insert(1, (bremen(dir), batches)),
                None => eprintln!("notice: bremen skipped (no bremen_*.gr; pass --data DIR)"),
            }
            g
        }
    };
    if graphs.is_empty() {
        return Err(Error::invalid("empty benchmark plan"));
    }
    Ok(Plan { graphs })
}
