//! Protocol extension 4 (docs/worker.md): a worker adopts trees as the originals check theirs,
//! as `dyng mosp` does in process (`from_arrays_unverified` with a weight bound per tree, then
//! `from_trees_deferred`): the same arrays after every update, through worker kills before and
//! after the first update and through checkpoints; the same refusals, at the same step, with the
//! same message, for trees only a full verification would refuse at adoption.

mod worker_util;

use dyng::worker::{kind, Client, WorkerOptions};
use dyng::{Csr, Fallback, Graph, MospResult, Resources, ResultMut, SsspOptions, SsspResult, WeightLayout};
use std::sync::atomic::Ordering;
use std::time::Duration;
use worker_util::*;

/// A w x w grid with `k` objectives and weights 1..3, so that most vertices have tied parents.
fn tied_grid(w: usize, k: usize, seed: u32) -> Csr {
    let t = dyng::io::generators::graphgen::grid(w, w, k, 1, 3, seed).unwrap();
    Csr::from_arrays(t.n, t.k, t.row_ptr, t.col_ind, &t.weights, WeightLayout::EdgeMajor).unwrap()
}

/// Objective `j`'s tree from `source` with every parent moved to the highest-id tight
/// in-neighbour: a shortest-path tree that is not the canonical one (the originals keep such tie
/// choices through their updates). Returns the tree and how many parents moved.
fn tied_tree(g: &Csr, j: usize, source: usize) -> (Vec<i64>, Vec<i32>, usize) {
    let t = SsspResult::compute(&Resources::sequential(), &Graph::new(g.clone()), source, j, &SsspOptions::default()).unwrap();
    let (d, mut p) = (t.distances().to_vec(), t.parents().to_vec());
    let m = g.m();
    let mut moved = 0;
    for u in 0..g.n() {
        for e in g.row(u) {
            let v = g.col_ind()[e] as usize;
            let w = g.weights()[j * m + e] as i64;
            if v != source && d[u] != dyng::DISTANCE_INF && d[u] + w == d[v] && (u as i32) > p[v] {
                p[v] = u as i32;
                moved += 1;
            }
        }
    }
    (d, p, moved)
}

/// Tree j's weight bound as `dyng mosp` takes it: the batch's largest inserted weight of j.
fn bounds(b: &dyng::Batch, k: usize) -> Vec<i64> {
    let v = b.view();
    (0..k).map(|j| v.ins_weights.iter().skip(j).step_by(k).copied().max().unwrap_or(1) as i64).collect()
}

fn kill(c: &Client) {
    let pid = c.worker_pid().unwrap();
    // SAFETY: signalling the worker this client spawned.
    unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    assert!(wait_gone(pid, Duration::from_secs(5)).is_some());
}

/// Every array of MOSP result `id` in the worker equals `m`'s.
fn assert_same(c: &Client, id: u64, m: &MospResult, what: &str) {
    let v = c.view(id, 0b11100, 0).unwrap();
    assert_eq!(v.i64s(kind::COMBINED_DIST).unwrap(), m.combined_distances(), "{what}: combined distances");
    assert_eq!(v.i32s(kind::COMBINED_PARENT).unwrap(), m.combined_parents(), "{what}: combined parents");
    assert_eq!(v.i64s(kind::PATH_COSTS).unwrap(), m.path_costs(), "{what}: path costs");
    for j in 0..m.k() {
        let t = c.view(id, 0b11, j).unwrap();
        assert_eq!(t.i64s(kind::DIST).unwrap(), m.tree(j).distances(), "{what}: objective {j}");
        assert_eq!(t.i32s(kind::PARENT).unwrap(), m.tree(j).parents(), "{what}: objective {j}");
    }
}

/// Non-canonical trees on a graph where the adaptive update may recompute (n >= 4096), adopted
/// lightly in the worker and in process: the worker is killed before the first update (the replay
/// adopts them again, uncombined) and after a later one (replayed from a checkpoint, which adopts
/// the updated trees verified), and gives the in-process arrays after every update.
#[test]
fn light_adoptions_replay_as_in_process_after_kills_and_checkpoints() {
    let _serial = serial();
    let (k, source) = (2, 0);
    let g = tied_grid(70, k, 5);
    let res = Resources::sequential();
    let mut lg = Graph::new(g.clone());
    let trees: Vec<(Vec<i64>, Vec<i32>)> = (0..k)
        .map(|j| {
            let (d, p, moved) = tied_tree(&g, j, source);
            assert!(moved > 100, "objective {j}: only {moved} tie parents moved");
            (d, p)
        })
        .collect();
    let batches: Vec<dyng::Batch> = (0..7).map(|i| batch(&g, 20, 20, 40 + i)).collect();
    let w = bounds(&batches[0], k);
    let opt = SsspOptions { fallback: Fallback::AdaptiveCounted, ..Default::default() };
    let adopt_local = |j: usize, lg: &Graph| {
        SsspResult::from_arrays_unverified(&res, lg, source, j, trees[j].0.clone(), trees[j].1.clone(), false, w[j], &opt).unwrap()
    };
    let local_trees = (0..k).map(|j| adopt_local(j, &lg)).collect();
    let mut local = MospResult::from_trees_deferred(&lg, source, local_trees, &[2, 1]).unwrap();
    let mut local_sssp = adopt_local(1, &lg);

    let c = Client::spawn(WorkerOptions { checkpoint_batches: 2, ..opts() }).unwrap();
    c.load_graph(&g).unwrap();
    let views: Vec<(&[i64], &[i32])> = trees.iter().map(|(d, p)| (&d[..], &p[..])).collect();
    let r = c.adopt_mosp_as_originals(source, &views, false, &[None, None], Fallback::AdaptiveCounted, &[2, 1], &w).unwrap();
    let rs = c.adopt_sssp_as_originals(source, 1, &trees[1].0, &trees[1].1, false, w[1], &opt).unwrap();
    // Not combined before its first update, as in process: the trees are there, the rest refused.
    let e = c.view(r.id, 0b11100, 0).unwrap_err();
    assert!(e.to_string().contains("combined by its first update"), "{e}");
    assert_eq!(c.view(r.id, 0b11, 1).unwrap().i32s(kind::PARENT).unwrap(), &trees[1].1[..]);
    kill(&c);
    // The replacement adopted them again the same way: still uncombined.
    let e = c.view(r.id, 0b11100, 0).unwrap_err();
    assert!(e.to_string().contains("combined by its first update"), "{e}");
    assert_eq!(c.generation(), 2);
    for (i, b) in batches.iter().enumerate() {
        dyng::update(&res, &mut lg, &b.view(), &mut [ResultMut::Mosp(&mut local), ResultMut::Sssp(&mut local_sssp)]).unwrap();
        c.update(&b.view(), &[r.id, rs.id]).unwrap();
        if i == 4 {
            kill(&c);
        }
        let what = format!("after update {i}");
        assert!(local.is_combined(), "{what}");
        assert_same(&c, r.id, &local, &what);
        assert_eq!(c.copy_i32(rs.id, kind::PARENT, 0).unwrap(), local_sssp.parents(), "{what}: SSSP parents");
        assert_eq!(c.copy_i64(rs.id, kind::DIST, 0).unwrap(), local_sssp.distances(), "{what}: SSSP distances");
    }
    assert_eq!(c.generation(), 3, "two replacements (a third within 60 s is a crash loop)");
    let checkpoints = c.counters().checkpoints.load(Ordering::SeqCst);
    assert!(checkpoints >= 2, "{checkpoints} checkpoints");
    assert_eq!(c.counters().checkpoint_failures.load(Ordering::SeqCst), 0);
}

/// A tree whose parent edge is not in the graph (golden errors/e13): a full verification refuses
/// it at adoption; adopted as the originals check, it is refused by the update, at the path costs,
/// with the in-process message, and the worker's state is as before. A distance above the bound
/// (errors/e14) is refused at adoption with the in-process message; so are bounds that do not fit.
#[test]
fn light_adoptions_refuse_where_in_process_refuses() {
    let _serial = serial();
    let g = tied_grid(12, 1, 9);
    let res = Resources::sequential();
    let (d, mut p, _) = tied_tree(&g, 0, 0);
    // A vertex of the last row gets a parent of the first row: closer, not a neighbour.
    let (v, u) = (12 * 11 + 5, 5);
    assert!(d[u] < d[v] && !g.col_ind()[g.row(u)].contains(&(v as i32)));
    p[v] = u as i32;
    let b = batch(&g, 3, 3, 7);
    let w = bounds(&b, 1);
    let opt = SsspOptions { fallback: Fallback::AdaptiveCounted, ..Default::default() };
    let c = Client::spawn(opts()).unwrap();
    c.load_graph(&g).unwrap();

    let mut lg = Graph::new(g.clone());
    let full = SsspResult::from_arrays(&lg, 0, 0, d.clone(), p.clone(), false, &opt).unwrap_err();
    let e = c.adopt_mosp(0, &[(&d, &p)], false, &[None], Fallback::AdaptiveCounted, &[]).unwrap_err();
    assert_eq!((e.kind(), e.to_string()), (full.kind(), full.to_string()), "verified");

    let tree = SsspResult::from_arrays_unverified(&res, &lg, 0, 0, d.clone(), p.clone(), false, w[0], &opt).unwrap();
    let mut local = MospResult::from_trees_deferred(&lg, 0, vec![tree], &[]).unwrap();
    let r = c.adopt_mosp_as_originals(0, &[(&d, &p)], false, &[None], Fallback::AdaptiveCounted, &[], &w).unwrap();
    let want = dyng::update(&res, &mut lg, &b.view(), &mut [ResultMut::Mosp(&mut local)]).unwrap_err();
    assert!(want.to_string().contains("missing from the updated graph"), "{want}");
    let epoch = c.worker_stats().unwrap().epoch;
    let e = c.update(&b.view(), &[r.id]).unwrap_err();
    assert_eq!((e.kind(), e.to_string()), (want.kind(), want.to_string()), "at the update");
    assert_eq!(c.worker_stats().unwrap().epoch, epoch, "the batch was not applied");
    assert_eq!(c.generation(), 1, "a refusal is not a crash");

    // A leaf's distance beyond (n - 1) x the largest weight.
    let leaf = (1..g.n()).find(|x| !p.contains(&(*x as i32))).unwrap();
    let mut far = d.clone();
    far[leaf] = 1 << 40;
    let want = SsspResult::from_arrays_unverified(&res, &lg, 0, 0, far.clone(), p.clone(), false, w[0], &opt).unwrap_err();
    let e = c.adopt_sssp_as_originals(0, 0, &far, &p, false, w[0], &opt).unwrap_err();
    assert_eq!((e.kind(), e.to_string()), (want.kind(), want.to_string()), "beyond the bound");
    let e = c.adopt_mosp_as_originals(0, &[(&far, &p)], false, &[None], Fallback::AdaptiveCounted, &[], &w).unwrap_err();
    assert_eq!((e.kind(), e.to_string()), (want.kind(), want.to_string()), "beyond the bound (MOSP)");

    for bad in [&[-1i64][..], &[1, 1]] {
        let e = c.adopt_mosp_as_originals(0, &[(&d, &p)], false, &[None], Fallback::AdaptiveCounted, &[], bad).unwrap_err();
        assert_eq!(e.kind(), dyng::ErrorKind::InvalidArgument, "{bad:?}: {e}");
    }
    assert_eq!(c.worker_stats().unwrap().results, 1, "only the light MOSP result is resident");
}
