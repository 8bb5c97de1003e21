//! The public session (`dyng::session`): the same job through a local and a worker session
//! (adopting K trees as the originals check theirs, one update, every output array and counter)
//! gives what the in-process calls give, and a tree refused by the originals' checks is refused
//! with the same message either way.

use dyng::session::{MospSnapshot, Session};
use dyng::worker::WorkerOptions;
use dyng::{update, Backend, Batch, Csr, Fallback, Graph, MospResult, Resources, ResultMut, SsspOptions, SsspResult, WeightLayout};

fn grid(w: usize, k: usize) -> Csr {
    let t = dyng::io::generators::graphgen::grid(w, w, k, 1, 20, 7).unwrap();
    Csr::from_arrays(t.n, t.k, t.row_ptr, t.col_ind, &t.weights, WeightLayout::EdgeMajor).unwrap()
}

fn trees(g: &Csr, source: usize) -> Vec<(Vec<i64>, Vec<i32>)> {
    let lg = Graph::new(g.clone());
    (0..g.k())
        .map(|j| {
            let t = SsspResult::compute(&Resources::sequential(), &lg, source, j, &SsspOptions::default()).unwrap();
            (t.distances().to_vec(), t.parents().to_vec())
        })
        .collect()
}

fn batch(g: &Csr) -> Batch {
    let mut b = Batch::new(g.k());
    b.insert(0, (g.n() - 1) as i32, &vec![3; g.k()]);
    b.insert(5, 40, &vec![1; g.k()]);
    let e = g.row(12).start;
    b.delete(12, g.col_ind()[e]);
    b
}

fn worker() -> Session {
    let opts = WorkerOptions { worker_path: Some(env!("CARGO_BIN_EXE_dyng-worker").into()), ..Default::default() };
    Session::worker(Backend::Sequential, opts).unwrap()
}

const OPT: SsspOptions = SsspOptions { delta: None, fallback: Fallback::AdaptiveCounted };
const PREFS: [u32; 3] = [2, 1, 3];

/// What [`run`] reads: each tree's distances and parents, the combined distances, parents and
/// path costs, the trees' counters and the combine step's.
type Outcome = (Vec<(Vec<i64>, Vec<i32>)>, Vec<i64>, Vec<i32>, Vec<i64>, Vec<[i64; 4]>, [i64; 5]);

/// Adopts, updates once and returns the snapshot and the counters (times left out).
fn run(session: &Session, g: &Csr, b: &Batch) -> Outcome {
    let mut sg = session.load_graph(g.clone()).unwrap();
    let mut r = session.adopt_mosp_as_originals(&sg, 0, trees(g, 0), false, &[20, 20, 20], &PREFS, &OPT).unwrap();
    // Combined by the first update: nothing to read before it.
    let e = r.mosp_snapshot().err().expect("no combined arrays before the update");
    assert_eq!(e.kind(), dyng::ErrorKind::InvalidArgument, "{e}");
    assert!(e.to_string().contains("is combined by its first update"), "{e}");
    session.update(&mut sg, &b.view(), &mut [&mut r]).unwrap();
    assert_eq!(sg.graph().version(), 1);
    let s: MospSnapshot = r.mosp_snapshot().unwrap();
    assert_eq!((s.k(), s.graph_k()), (3, 3));
    let c = r.mosp_counters().unwrap();
    let objectives = c.objectives.iter().map(|o| [o.invalidated, o.iterations, o.epochs, o.pushes]).collect();
    let cs = &c.combined;
    let combined = [cs.edges as i64, cs.scale as i64, cs.delta, cs.search.iterations, cs.search.pushes];
    let t = (0..s.k()).map(|j| (s.tree(j).0.to_vec(), s.tree(j).1.to_vec())).collect();
    (t, s.combined_distances().to_vec(), s.combined_parents().to_vec(), s.path_costs().to_vec(), objectives, combined)
}

#[test]
fn a_local_and_a_worker_session_give_the_in_process_result() {
    let g = grid(12, 3);
    let b = batch(&g);
    // The in-process calls the drop-in driver makes.
    let res = Resources::sequential();
    let mut lg = Graph::new(g.clone());
    let adopted = trees(&g, 0)
        .into_iter()
        .enumerate()
        .map(|(j, (d, p))| SsspResult::from_arrays_unverified(&res, &lg, 0, j, d, p, false, 20, &OPT).unwrap())
        .collect();
    let mut m = MospResult::from_trees_deferred(&lg, 0, adopted, &PREFS).unwrap();
    update(&res, &mut lg, &b.view(), &mut [ResultMut::Mosp(&mut m)]).unwrap();
    let local = run(&Session::local(Resources::sequential()), &g, &b);
    let tree_arrays: Vec<_> = (0..3).map(|j| (m.tree(j).distances().to_vec(), m.tree(j).parents().to_vec())).collect();
    assert_eq!(local.0, tree_arrays);
    assert_eq!((&local.1, &local.2, &local.3), (&m.combined_distances().to_vec(), &m.combined_parents().to_vec(), &m.path_costs().to_vec()));
    let w = worker();
    assert_eq!(w.worker_pid(), None, "spawned before the first use");
    assert_eq!(run(&w, &g, &b), local);
    assert!(w.worker_pid().is_some());
}

#[test]
fn a_refused_tree_reads_the_same_in_a_worker() {
    let g = grid(6, 3);
    let mut t = trees(&g, 0);
    // A parent no farther from the source than its child: the originals' check refuses it.
    t[1].1[7] = 7;
    let refuse = |s: &Session| {
        let sg = s.load_graph(g.clone()).unwrap();
        let e = s.adopt_mosp_as_originals(&sg, 0, t.clone(), false, &[20, 20, 20], &PREFS, &OPT).err().expect("refused");
        (e.kind(), e.to_string())
    };
    let local = refuse(&Session::local(Resources::sequential()));
    assert!(local.1.contains("objective 1"), "{}", local.1);
    assert_eq!(refuse(&worker()), local);
    // One weight bound per tree.
    let s = Session::local(Resources::sequential());
    let sg = s.load_graph(g.clone()).unwrap();
    let e = s.adopt_mosp_as_originals(&sg, 0, trees(&g, 0), false, &[20], &PREFS, &OPT).err().expect("refused");
    assert!(e.to_string().contains("1 weight bounds for 3 trees"), "{e}");
}
