//! The graphs and batches of each suite.

use super::Suite;
use dyng::io::{dimacs, graphgen, mtx, CsrText};
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
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data").join(name)
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
    GraphSpec {
        name: "grid1000",
        k: 3,
        source: 0,
        local_hops: 110,
        build: Box::new(|| csr(graphgen::grid(1000, 1000, 3, 1, 100, 12345)?)),
    }
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
