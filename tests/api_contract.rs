//! The library's contracts: rejected inputs change nothing, stale results are refused, the
//! workspace pool reuses, discards and releases as c-api §4 says, and the workspace fits in 38
//! bytes per vertex.

mod common;

use dyng::io::generators::graphgen::grid;
use dyng::internals::Workspace;
use dyng::{
    Batch, Csr, Error, Graph, MospOptions, MospResult, Resources, ResultMut, SsspOptions, SsspResult, UpdateStats,
    WeightLayout,
};

fn grid_graph(w: usize, k: usize) -> Graph {
    let t = grid(w, w, k, 1, 20, 7).unwrap();
    Graph::new(Csr::from_arrays(t.n, t.k, t.row_ptr, t.col_ind, &t.weights, WeightLayout::EdgeMajor).unwrap())
}

fn some_batch(g: &Graph, seed: usize) -> Batch {
    let mut b = Batch::new(g.k());
    let n = g.n();
    for i in 0..20 {
        let u = (i * 7919 + seed * 31) % n;
        if let Some(e) = g.rows().row(u).next() {
            b.delete(u as i32, g.rows().heads()[e]);
        }
        let v = (u * 13 + 5 + seed) % n;
        b.insert(u as i32, v as i32, &vec![1 + (i % 9) as i32; g.k()]);
    }
    b
}

/// A graph's arrays, version and the trees of its results, to compare before and after.
type Snapshot = (Csr, u64, Vec<(Vec<i64>, Vec<i32>)>);

fn snapshot(g: &Graph, rs: &[&SsspResult]) -> Snapshot {
    (
        g.to_csr(),
        g.version(),
        rs.iter().map(|r| (r.distances().to_vec(), r.parents().to_vec())).collect(),
    )
}

#[test]
fn rejected_batches_change_nothing() {
    let res = Resources::parallel(2).unwrap();
    let mut g = grid_graph(20, 2);
    let mut a = SsspResult::compute(&res, &g, 0, 0, &SsspOptions::default()).unwrap();
    let mut b = SsspResult::compute(&res, &g, 5, 1, &SsspOptions::default()).unwrap();
    let n = g.n() as i32;
    let mut bad = Vec::new();
    let mut x = some_batch(&g, 1);
    x.insert(0, n, &[1, 1]);
    bad.push(("insertion head out of range", x));
    let mut x = some_batch(&g, 2);
    x.delete(-1, 3);
    bad.push(("deletion tail negative", x));
    let mut x = some_batch(&g, 3);
    x.insert(1, 2, &[1, 0]);
    bad.push(("zero weight", x));
    let mut x = some_batch(&g, 4);
    x.insert(1, 2, &[1, -5]);
    bad.push(("negative weight", x));
    let mut x = some_batch(&g, 5);
    x.k = 3;
    bad.push(("wrong K", x));
    let mut x = some_batch(&g, 6);
    x.ins_weights.pop();
    bad.push(("short weight array", x));
    let mut x = some_batch(&g, 7);
    x.del_dst.pop();
    bad.push(("deletion arrays disagree", x));
    for (what, batch) in bad {
        let before = snapshot(&g, &[&a, &b]);
        let r = dyng::update(&res, &mut g, &batch.view(), &mut [(&mut a).into(), (&mut b).into()]);
        assert!(matches!(r, Err(Error::InvalidArgument(_))), "{what}: {r:?}");
        assert_eq!(snapshot(&g, &[&a, &b]), before, "{what} changed something");
    }
    // A good batch still works afterwards.
    let good = some_batch(&g, 9);
    dyng::update(&res, &mut g, &good.view(), &mut [(&mut a).into(), (&mut b).into()]).unwrap();
}

#[test]
fn stale_results_are_refused() {
    let res = Resources::sequential();
    let mut g = grid_graph(10, 1);
    let mut other = grid_graph(10, 1);
    let mut r = SsspResult::compute(&res, &g, 0, 0, &SsspOptions::default()).unwrap();
    let mut from_other = SsspResult::compute(&res, &other, 0, 0, &SsspOptions::default()).unwrap();
    let batch = some_batch(&g, 0);
    // Another graph's result.
    let before = snapshot(&g, &[&r]);
    let e = dyng::update(&res, &mut g, &batch.view(), &mut [(&mut r).into(), (&mut from_other).into()]);
    assert!(matches!(e, Err(Error::StaleResult(_))), "{e:?}");
    assert_eq!(snapshot(&g, &[&r]), before);
    // An older state of this graph: a copy of r that misses the next update.
    let mut old = r.clone();
    dyng::update_one(&res, &mut g, &batch.view(), &mut r).unwrap();
    let e = dyng::update_one(&res, &mut g, &batch.view(), &mut old);
    assert!(matches!(e, Err(Error::StaleResult(_))), "{e:?}");
    dyng::update_one(&res, &mut other, &batch.view(), &mut from_other).unwrap();
}

#[test]
fn adoption_rejects_invalid_trees() {
    let res = Resources::sequential();
    let g = grid_graph(6, 1);
    let good = SsspResult::compute(&res, &g, 0, 0, &SsspOptions::default()).unwrap();
    let (d, p) = (good.distances().to_vec(), good.parents().to_vec());
    let adopt = |d: Vec<i64>, p: Vec<i32>| SsspResult::from_arrays(&g, 0, 0, d, p, false, &SsspOptions::default());
    assert!(adopt(d.clone(), p.clone()).is_ok());
    let mut p2 = p.clone();
    p2[0] = 3;
    assert!(adopt(d.clone(), p2).unwrap_err().to_string().contains("not rooted"));
    let mut d2 = d.clone();
    d2[7] += 1;
    assert!(adopt(d2, p.clone()).is_err(), "inconsistent distance");
    let mut d3 = d.clone();
    d3[35] = dyng::DISTANCE_INF;
    let mut p3 = p.clone();
    p3[35] = -1;
    assert!(adopt(d3, p3).unwrap_err().to_string().contains("not a shortest-path tree"));
    let mut p4 = p.clone();
    p4[1] = 2;
    p4[2] = 1;
    assert!(adopt(d.clone(), p4).unwrap_err().to_string().contains("cycle"));
    assert!(adopt(d[..5].to_vec(), p.clone()).is_err());
}

#[test]
fn unverified_adoption_checks_what_the_originals_check() {
    let res = Resources::sequential();
    let g = grid_graph(6, 1);
    let good = SsspResult::compute(&res, &g, 0, 0, &SsspOptions::default()).unwrap();
    let (d, p) = (good.distances().to_vec(), good.parents().to_vec());
    let max_w = g.max_weight(0) as i64;
    let adopt = |d: Vec<i64>, p: Vec<i32>| SsspResult::from_arrays_unverified(&res, &g, 0, 0, d, p, false, max_w, &SsspOptions::default());
    let t = adopt(d.clone(), p.clone()).unwrap();
    assert!(!t.is_canonical(), "below ADAPTIVE_MIN_VERTICES no update recomputes: canonicity is not looked for");
    let mut p2 = p.clone();
    p2[0] = 3;
    assert!(adopt(d.clone(), p2).unwrap_err().to_string().contains("not rooted"));
    let mut p4 = p.clone();
    p4[1] = 2;
    p4[2] = 1;
    assert!(adopt(d.clone(), p4).unwrap_err().to_string().contains("cycle"));
    let mut d5 = d.clone();
    d5[35] = 35 * max_w + 1;
    assert!(adopt(d5, p.clone()).unwrap_err().to_string().contains("exceeds (n - 1) * maxWeight"));
    let mut d6 = d.clone();
    d6[35] = dyng::DISTANCE_INF;
    assert!(adopt(d6, p.clone()).unwrap_err().to_string().contains("unreachable (INF) but has parent"));
    let mut p7 = p.clone();
    p7[35] = 99;
    assert!(adopt(d.clone(), p7).is_err());
    // What it trusts: a distance no edge gives is taken as it is (the originals take it too).
    let mut d8 = d.clone();
    d8[35] += 1;
    assert!(adopt(d8, p.clone()).is_ok());
}

/// On graphs where an update may recompute (and its fallback lets it), whether an unverified tree
/// is canonical is found out by the first update that would recompute it, on the graph before its
/// batch: a computed tree is, and is recomputed; the same tree with one tie parent moved to
/// another tight in-neighbour is not, nor one with a parent of lower id off the shortest paths,
/// and both are repaired, never recomputed. Until then no adopted tree is known canonical.
#[test]
fn unverified_adoption_finds_canonical_trees_when_an_update_would_recompute() {
    let res = Resources::sequential();
    let g = grid_graph(70, 1);
    let r = SsspResult::compute(&res, &g, 0, 0, &SsspOptions::default()).unwrap();
    let (d, p) = (r.distances().to_vec(), r.parents().to_vec());
    let adopt = |g: &Graph, p: Vec<i32>, opt: &SsspOptions| SsspResult::from_arrays_unverified(&res, g, 0, 0, d.clone(), p, false, 20, opt).unwrap();
    // The source's out-edges closed, one reopened heavier: every path changes, so an update
    // would recompute a tree it may recompute.
    let mut batch = Batch::new(1);
    let csr = g.to_csr();
    for e in csr.row(0) {
        batch.delete(0, csr.col_ind()[e]);
    }
    batch.insert(0, 1, &[20]);
    // Updated through the public API: whether it recomputed, and whether it is known canonical
    // before and after; a shortest-path tree's update must be that of the same tree adopted
    // with every check made (which refuses a parent off the shortest paths).
    let update = |p: Vec<i32>, opt: &SsspOptions| {
        let mut g1 = g.clone();
        let mut t = adopt(&g1, p.clone(), opt);
        let known_before = t.is_canonical();
        let s = dyng::update_one(&res, &mut g1, &batch.view(), &mut t).unwrap();
        let mut g2 = g.clone();
        if let Ok(mut checked) = SsspResult::from_arrays(&g2, 0, 0, d.clone(), p, false, opt) {
            dyng::update_one(&res, &mut g2, &batch.view(), &mut checked).unwrap();
            assert_eq!((t.distances(), t.parents()), (checked.distances(), checked.parents()));
        }
        (known_before, s.fallback_used, t.is_canonical())
    };
    let opt = SsspOptions::default();
    assert_eq!(update(p.clone(), &opt), (false, true, true), "a computed tree: recomputed, then known canonical");
    // A vertex with two tight in-neighbours: give it the higher one.
    let tie = (0..g.n()).find_map(|v| {
        let tails: Vec<usize> = (0..g.n())
            .filter(|&u| csr.row(u).any(|e| csr.col_ind()[e] as usize == v && d[u] + csr.column(0)[e] as i64 == d[v]))
            .collect();
        (tails.len() > 1).then(|| (v, *tails.iter().max().unwrap()))
    });
    let (v, higher) = tie.expect("a grid with weights in [1, 20] has ties");
    let mut moved = p.clone();
    moved[v] = higher as i32;
    assert_eq!(update(moved, &opt), (false, false, false), "a tie moved: repaired");
    // A parent of lower id whose edge is not tight: no edge is lower than a tight one, but the
    // tree's own edge into the vertex is missing.
    let loose = (0..g.n()).find_map(|v| {
        csr.row_ptr().windows(2).enumerate().find_map(|(u, b)| {
            let tight = |e: usize| d[u] + csr.column(0)[e] as i64 == d[v];
            ((b[0] as usize..b[1] as usize).any(|e| csr.col_ind()[e] as usize == v && !tight(e)) && (u as i32) < p[v]).then_some((v, u))
        })
    });
    let (v, u) = loose.expect("a grid vertex has a lower-id in-neighbour off its shortest paths");
    let mut moved = p.clone();
    moved[v] = u as i32;
    assert!(SsspResult::from_arrays(&g, 0, 0, d.clone(), moved.clone(), false, &opt).is_err());
    assert_eq!(update(moved, &opt), (false, false, false), "a parent off the shortest paths: repaired");
    // A tree that is never recomputed is never asked about: with `Fallback::Never` it is repaired.
    let never = SsspOptions { fallback: dyng::Fallback::Never, ..Default::default() };
    assert_eq!(update(p, &never), (false, false, false));
}

/// A deferred MOSP result combines once, in its first update, into what a combined one gives.
#[test]
fn a_deferred_mosp_result_combines_in_its_first_update() {
    use dyng::io::generators::changegen::{generate_changes, ChangeOptions};
    for res in [Resources::sequential(), Resources::parallel(2).unwrap()] {
        let mut g1 = grid_graph(40, 3);
        let mut g2 = grid_graph(40, 3);
        let computed = MospResult::compute(&res, &g1, 0, &MospOptions::default()).unwrap();
        let trees = |g: &Graph, unverified: bool| -> Vec<SsspResult> {
            (0..3)
                .map(|j| {
                    let t = computed.tree(j);
                    let (d, p) = (t.distances().to_vec(), t.parents().to_vec());
                    if unverified {
                        SsspResult::from_arrays_unverified(&res, g, 0, j, d, p, false, 100, &SsspOptions::default()).unwrap()
                    } else {
                        SsspResult::from_arrays(g, 0, j, d, p, false, &SsspOptions::default()).unwrap()
                    }
                })
                .collect()
        };
        let mut combined = MospResult::from_trees(&res, &g1, 0, trees(&g1, false), &[2, 1, 3]).unwrap();
        let mut deferred = MospResult::from_trees_deferred(&g2, 0, trees(&g2, true), &[2, 1, 3]).unwrap();
        assert!(combined.is_combined() && !deferred.is_combined());
        let (batch, _) = generate_changes(&g1.to_csr(), &ChangeOptions { changes: 300, seed: 5, ..Default::default() }).unwrap();
        dyng::update_one(&res, &mut g1, &batch.view(), &mut combined).unwrap();
        dyng::update_one(&res, &mut g2, &batch.view(), &mut deferred).unwrap();
        assert!(deferred.is_combined());
        for j in 0..3 {
            assert_eq!(combined.tree(j).distances(), deferred.tree(j).distances());
            assert_eq!(combined.tree(j).parents(), deferred.tree(j).parents());
        }
        assert_eq!(combined.combined_distances(), deferred.combined_distances());
        assert_eq!(combined.combined_parents(), deferred.combined_parents());
        assert_eq!(combined.path_costs(), deferred.path_costs());
    }
}

#[test]
fn pool_steady_state_allocates_nothing() {
    let res = Resources::parallel(2).unwrap();
    let mut g = grid_graph(40, 3);
    let mut m = MospResult::compute(&res, &g, 0, &MospOptions::default()).unwrap();
    let mut s = SsspResult::compute(&res, &g, 17, 1, &SsspOptions::default()).unwrap();
    // Two updates first: the first makes the graph's in-rows and every scratch list.
    for i in 0..2 {
        let b = some_batch(&g, 100 + i);
        dyng::update(&res, &mut g, &b.view(), &mut [(&mut m).into(), (&mut s).into()]).unwrap();
    }
    let counters = res.workspaces().counters();
    let bytes = res.workspace_bytes();
    assert!(bytes > 0);
    for i in 1..21 {
        let b = some_batch(&g, i);
        dyng::update(&res, &mut g, &b.view(), &mut [(&mut m).into(), (&mut s).into()]).unwrap();
    }
    let after = res.workspaces().counters();
    assert_eq!(after.created, counters.created, "no new workspace in steady state");
    assert_eq!(after.grown, counters.grown, "no workspace growth in steady state");
    assert!(after.reused > counters.reused);
    assert_eq!(res.workspace_bytes(), bytes);
    // One SSSP workspace serves every objective and result of a call, plus the combine scratch
    // and the per-objective change lists.
    assert_eq!(res.workspaces().idle_count(), 3);
}

#[test]
fn a_stream_of_batches_changes_the_rows_in_place() {
    // Repairs (no fallback): the first one makes the in-rows, which every later batch keeps in
    // step. The rows' arrays stay where they are until a compaction rewrites them or a batch
    // needs more room than they have (a resize).
    let res = Resources::parallel(1).unwrap();
    let mut g = grid_graph(40, 2);
    let opt = SsspOptions { fallback: dyng::Fallback::Never, ..Default::default() };
    let mut s = SsspResult::compute(&res, &g, 0, 0, &opt).unwrap();
    let arrays = |g: &Graph| (g.rows().heads().as_ptr(), g.rows().column(1).as_ptr(), g.in_rows().heads().as_ptr());
    let mut before = None;
    let mut kept = 0;
    for i in 0..12 {
        let b = some_batch(&g, i);
        let layout = (g.compactions(), g.resizes());
        dyng::update(&res, &mut g, &b.view(), &mut [(&mut s).into()]).unwrap();
        let now = arrays(&g);
        if let Some(before) = before {
            if (g.compactions(), g.resizes()) == layout {
                assert_eq!(now, before, "update {i}");
                kept += 1;
            }
        }
        before = Some(now);
        let fresh = SsspResult::compute(&res, &g, 0, 0, &SsspOptions::default()).unwrap();
        assert_eq!((s.distances(), s.parents()), (fresh.distances(), fresh.parents()));
    }
    assert!(kept >= 4, "{kept} of 11 updates without a compaction");
}

#[test]
fn clones_share_the_pool_and_release_frees() {
    let res = Resources::sequential();
    let clone = res.clone();
    let g = grid_graph(10, 1);
    SsspResult::compute(&clone, &g, 0, 0, &SsspOptions::default()).unwrap();
    assert_eq!(res.workspace_bytes(), 100 * Workspace::BYTES_PER_VERTEX);
    res.release_workspaces();
    assert_eq!(clone.workspace_bytes(), 0);
}

#[test]
fn failed_runs_discard_their_workspace() {
    let res = Resources::sequential();
    let g = grid_graph(8, 1);
    let n = g.n();
    SsspResult::compute(&res, &g, 0, 0, &SsspOptions::default()).unwrap();
    let c0 = res.workspaces().counters();
    // A parent cycle found by the invalidation walk: the run fails after leasing.
    let mut dist = vec![1i64; n];
    dist[0] = 0;
    let mut parent: Vec<i32> = (0..n as i32).map(|v| if v == 0 { -1 } else { v ^ 1 }).collect();
    parent[1] = 0;
    let csr = g.to_csr();
    let e = dyng::sosp_update_arrays(&res, dyng::CsrArrays::of(&csr, 0), None, &[0], &[1], &[], 0, 10, 20, &mut dist, &mut parent);
    assert!(e.unwrap_err().to_string().contains("parent cycle"));
    let c1 = res.workspaces().counters();
    assert_eq!(c1.discarded, c0.discarded + 1);
    assert_eq!(res.workspaces().idle_count(), 0);
    SsspResult::compute(&res, &g, 0, 0, &SsspOptions::default()).unwrap();
    assert_eq!(res.workspaces().counters().created, c1.created + 1, "a fresh workspace after a discard");
}

#[test]
fn concurrent_runs_lease_distinct_workspaces() {
    let res = Resources::parallel(2).unwrap();
    let g = grid_graph(60, 1);
    std::thread::scope(|s| {
        for t in 0..4 {
            let (res, g) = (res.clone(), &g);
            s.spawn(move || {
                for _ in 0..5 {
                    let r = SsspResult::compute(&res, g, t * 10, 0, &SsspOptions::default()).unwrap();
                    let (d, p) = dyng::graph::dijkstra::dijkstra(g, 0, t * 10);
                    assert_eq!((r.distances(), r.parents()), (&d[..], &p[..]));
                }
            });
        }
    });
    assert!(res.workspaces().counters().created >= 1);
    assert!(res.workspaces().idle_count() <= 4);
}

#[test]
fn workspace_is_38_bytes_per_vertex_and_reported() {
    assert_eq!(Workspace::BYTES_PER_VERTEX, 38);
    let res = Resources::sequential();
    let g = grid_graph(30, 2);
    let s = SsspResult::compute(&res, &g, 0, 0, &SsspOptions::default()).unwrap();
    assert_eq!(res.workspace_bytes(), 38 * g.n());
    assert_eq!(s.bytes(), 12 * g.n());
}

#[test]
fn snapshots_do_not_change_when_the_result_is_updated() {
    let res = Resources::sequential();
    let mut g = grid_graph(15, 1);
    let mut r = SsspResult::compute(&res, &g, 0, 0, &SsspOptions::default()).unwrap();
    let view = r.distances_snapshot();
    let copy = view.to_vec();
    let mut b = Batch::new(1);
    b.delete(0, 1);
    b.delete(0, 15);
    dyng::update(&res, &mut g, &b.view(), &mut [ResultMut::from(&mut r)]).unwrap();
    assert_eq!(*view, copy);
    assert_ne!(r.distances(), &copy[..]);
}

#[test]
fn fallback_policies_give_bit_identical_trees() {
    use dyng::Fallback;
    for res in [Resources::sequential(), Resources::parallel(2).unwrap()] {
        let mut outcomes = Vec::new();
        for policy in [Fallback::Never, Fallback::Always, Fallback::Adaptive, Fallback::AdaptiveCounted] {
            let mut g = grid_graph(80, 2);
            let opt = SsspOptions { fallback: policy, ..Default::default() };
            let mut r = SsspResult::compute(&res, &g, 0, 1, &opt).unwrap();
            let mut used = Vec::new();
            for i in 0..6 {
                let b = some_batch(&g, i);
                let s = dyng::update_one(&res, &mut g, &b.view(), &mut r).unwrap();
                let (d, p) = dyng::graph::dijkstra::dijkstra(&g, 1, 0);
                assert_eq!((r.distances(), r.parents()), (&d[..], &p[..]), "{policy:?}");
                used.push(s.fallback_used);
            }
            match policy {
                Fallback::Never => assert!(used.iter().all(|&u| !u)),
                Fallback::Always => assert!(used.iter().all(|&u| u)),
                _ => {}
            }
            outcomes.push((r.distances().to_vec(), r.parents().to_vec()));
        }
        assert!(outcomes.windows(2).all(|w| w[0] == w[1]));
    }
}

#[test]
fn non_canonical_trees_never_fall_back() {
    // An adopted tree whose ties were moved keeps the originals' semantics: no recompute.
    let res = Resources::sequential();
    let mut g = grid_graph(70, 1);
    let c = SsspResult::compute(&res, &g, 0, 0, &SsspOptions::default()).unwrap();
    let (d, mut p) = (c.distances().to_vec(), c.parents().to_vec());
    // Move one tie to a higher-id tight in-neighbour, if the grid has one.
    let csr = g.to_csr();
    let mut moved = false;
    for u in 0..csr.n() {
        for e in csr.row(u) {
            let v = csr.col_ind()[e] as usize;
            if v != 0 && !moved && (u as i32) > p[v] && d[u] + csr.column(0)[e] as i64 == d[v] {
                p[v] = u as i32;
                moved = true;
            }
        }
    }
    assert!(moved, "the weights 1..20 grid has ties");
    let opt = SsspOptions { fallback: dyng::Fallback::Always, ..Default::default() };
    let mut r = SsspResult::from_arrays(&g, 0, 0, d, p, false, &opt).unwrap();
    assert!(!r.is_canonical());
    let b = some_batch(&g, 3);
    let s = dyng::update_one(&res, &mut g, &b.view(), &mut r).unwrap();
    assert!(!s.fallback_used);
}

/// Scattered cheap shortcuts make a repair expand vertices again and again: the adaptive update
/// abandons it past its budget and recomputes, with the same trees as a plain repair.
/// The pushes of a static solve of objective 0 from `source` on `g` (what the adaptive update
/// measures a repair against, and what a recompute triggered before any repair costs).
fn static_pushes(res: &Resources, g: &Graph, source: usize) -> i64 {
    SsspResult::compute(res, g, source, 0, &SsspOptions::default()).unwrap().stats().pushes
}

#[test]
fn an_expensive_repair_is_abandoned_for_a_recompute() {
    use dyng::Fallback;
    let res = Resources::parallel(2).unwrap();
    let mut abandoned = 0;
    for seed in 0..6usize {
        let mut trees = Vec::new();
        for policy in [Fallback::Adaptive, Fallback::Never] {
            let mut g = grid_graph(100, 1);
            let opt = SsspOptions { fallback: policy, ..Default::default() };
            let mut r = SsspResult::compute(&res, &g, 0, 0, &opt).unwrap();
            let budget = r.stats().pushes;
            // Many short shortcuts (two columns ahead, weight 1) into leaves of the tree, spread
            // over the whole grid: too few heads, none long enough and none above a subtree
            // (nothing for the sample to see), yet together they improve nearly every vertex,
            // several times over.
            let mut is_parent = vec![false; g.n()];
            for &p in r.parents() {
                if p >= 0 {
                    is_parent[p as usize] = true;
                }
            }
            let mut b = Batch::new(1);
            for i in 0..20_000usize {
                let u = (i * 7919 + seed * 104_729) % (g.n() - 2);
                if !is_parent[u + 2] && b.num_insertions() < 1500 {
                    b.insert(u as i32, u as i32 + 2, &[1]);
                }
            }
            let s = dyng::update_one(&res, &mut g, &b.view(), &mut r).unwrap();
            let (d, p) = dyng::graph::dijkstra::dijkstra(&g, 0, 0);
            assert_eq!((r.distances(), r.parents()), (&d[..], &p[..]), "{policy:?}");
            // Abandoned: more than the budget's expansions, then a whole static solve's.
            if policy == Fallback::Adaptive && s.fallback_used && s.pushes > budget * 3 / 2 {
                abandoned += 1;
            }
            trees.push((r.distances().to_vec(), r.parents().to_vec()));
        }
        assert_eq!(trees[0], trees[1]);
    }
    assert!(abandoned > 0, "no repair exceeded its budget");
}

#[test]
fn a_long_shortcut_recomputes_before_any_repair() {
    use dyng::Fallback;
    // One thread: the expansions compared below are deterministic only there (from 4K vertices
    // two threads run the search as a team, whose expansion count depends on the schedule).
    let res = Resources::parallel(1).unwrap();
    let mut trees = Vec::new();
    for policy in [Fallback::Adaptive, Fallback::Never] {
        let mut g = grid_graph(100, 1);
        let opt = SsspOptions { fallback: policy, ..Default::default() };
        let mut r = SsspResult::compute(&res, &g, 0, 0, &opt).unwrap();
        // One edge from near the source to the middle of the grid, far shorter than the path.
        let mut b = Batch::new(1);
        b.insert(1, 50 * 100 + 50, &[1]);
        let s = dyng::update_one(&res, &mut g, &b.view(), &mut r).unwrap();
        assert_eq!(s.invalidated, 0);
        assert_eq!(s.fallback_used, policy == Fallback::Adaptive, "{policy:?}");
        if policy == Fallback::Adaptive {
            // Not a single repair expansion: the recompute started before the repair.
            assert_eq!(s.pushes, static_pushes(&res, &g, 0));
        }
        trees.push((r.distances().to_vec(), r.parents().to_vec()));
    }
    assert_eq!(trees[0], trees[1]);
}

/// A drop-in call without any change (its one-pass path) does what the engine's packing and
/// write-back do: every vertex checked, unreachable ones normalized to (INF, -1), nothing else
/// touched; a single insertion head takes the engine's path, with the same result.
#[test]
fn a_drop_in_call_without_changes_checks_and_normalizes_only() {
    use dyng::{sosp_update_arrays, CsrArrays};
    let res = Resources::parallel(2).unwrap();
    let g = grid_graph(70, 1);
    let r = SsspResult::compute(&res, &g, 0, 0, &SsspOptions::default()).unwrap();
    let max_w = g.max_weight(0) as i64;
    let csr = g.to_csr();
    let (mut d, mut p) = (r.distances().to_vec(), r.parents().to_vec());
    // An unreachable vertex as some tools write it: a large distance and a stale parent.
    let far = g.n() - 1;
    d[far] = dyng::DISTANCE_INF / 2 + 7;
    p[far] = 3;
    let (d0, p0) = (d.clone(), p.clone());
    let s = sosp_update_arrays(&res, CsrArrays::of(&csr, 0), None, &[], &[], &[], 0, 10, max_w, &mut d, &mut p).unwrap();
    assert_eq!((s.affected, s.invalidated, s.pushes), (1, 0, 0));
    assert_eq!((d[far], p[far]), (dyng::DISTANCE_INF, -1));
    let (mut d2, mut p2) = (d0.clone(), p0.clone());
    // The source as its own insertion head is skipped by the engine: nothing to repair either.
    sosp_update_arrays(&res, CsrArrays::of(&csr, 0), None, &[], &[], &[0], 0, 10, max_w, &mut d2, &mut p2).unwrap();
    assert_eq!((d2, p2), (d.clone(), p.clone()));
    // The packing's refusals.
    let (mut d3, mut p3) = (d0.clone(), p0.clone());
    d3[5] = (g.n() as i64 - 1) * max_w + 1;
    let given = (d3.clone(), p3.clone());
    let e = sosp_update_arrays(&res, CsrArrays::of(&csr, 0), None, &[], &[], &[], 0, 10, max_w, &mut d3, &mut p3);
    assert!(e.unwrap_err().to_string().contains("exceeds (n - 1) * maxWeight"));
    assert_eq!((d3, p3), given, "unchanged on error");
    let (mut d4, mut p4) = (d0.clone(), p0);
    p4[9] = g.n() as i32;
    assert!(sosp_update_arrays(&res, CsrArrays::of(&csr, 0), None, &[], &[], &[], 0, 10, max_w, &mut d4, &mut p4).is_err());
}

#[test]
fn invalidation_counts_agree_between_the_top_down_and_bottom_up_walks() {
    use dyng::{sosp_update_arrays, Fallback};
    // Few deletions (the invalidated side is walked to the end first) and deletions of most
    // tree edges near the source (the valid side ends first and the count is the rest). `Never`
    // walks the invalidated side only (no recompute can follow); `Always` walks both sides.
    let cases = [(30usize, false), (400, true), (3000, false)];
    for ((deletions, near_source), policy) in cases.into_iter().flat_map(|c| [(c, Fallback::Never), (c, Fallback::Always)]) {
        for res in [Resources::sequential(), Resources::parallel(2).unwrap()] {
            let mut g = grid_graph(60, 1);
            let opt = SsspOptions { fallback: policy, ..Default::default() };
            let mut r = SsspResult::compute(&res, &g, 0, 0, &opt).unwrap();
            let (mut dist, mut parent) = (r.distances().to_vec(), r.parents().to_vec());
            let mut b = Batch::new(1);
            for i in 0..deletions {
                let v = if near_source { 1 + i % 300 } else { (i * 7919 + 13) % g.n() };
                if parent[v] >= 0 {
                    b.delete(parent[v], v as i32);
                }
                b.insert(v as i32, ((v * 31 + 7) % g.n()) as i32, &[30]);
            }
            let trusted = dyng::update_one(&res, &mut g, &b.view(), &mut r).unwrap();
            let mut from = b.del_src.clone();
            let mut to = b.del_dst.clone();
            from.extend(&b.ins_src);
            to.extend(&b.ins_dst);
            let max_w = g.max_weight(0) as i64;
            let delta = trusted_delta(&g);
            let csr = g.to_csr();
            let walked = sosp_update_arrays(&res, dyng::CsrArrays::of(&csr, 0), None, &from, &to, &b.ins_dst, 0, delta, max_w, &mut dist, &mut parent).unwrap();
            assert_eq!((trusted.invalidated, trusted.affected), (walked.invalidated, walked.affected), "{deletions} deletions, {policy:?}");
            assert!(trusted.invalidated > 0);
            assert_eq!((r.distances(), r.parents()), (&dist[..], &parent[..]));
        }
    }
}

/// The default Delta of a result on `g` (so the drop-in entry point runs the same search).
fn trusted_delta(g: &Graph) -> i64 {
    dyng::sssp::default_delta(g.m(), g.n(), g.weight_sum(0))
}

/// `common::trees::heavy_binary_tree` as a graph.
fn heavy_binary_tree(heavy: usize) -> Graph {
    let (src, dst, w) = common::trees::heavy_binary_tree(heavy);
    Graph::new(Csr::from_edges(common::trees::HEAVY_TREE_N, 1, &src, &dst, &w).unwrap())
}

/// Runs one batch on `heavy_binary_tree(heavy)` under the adaptive policy, `Never` and
/// `AdaptiveCounted`; the trees must agree. Returns the three stats and the pushes of a static
/// solve.
fn adaptive_and_never(heavy: usize, batch: Batch) -> (UpdateStats, UpdateStats, i64, UpdateStats) {
    use dyng::Fallback;
    // One thread, for deterministic expansion counts (see a_long_shortcut_recomputes_...).
    let res = Resources::parallel(1).unwrap();
    let mut out = Vec::new();
    let mut trees = Vec::new();
    let mut pushes = 0;
    for policy in [Fallback::Adaptive, Fallback::Never, Fallback::AdaptiveCounted] {
        let mut g = heavy_binary_tree(heavy);
        let opt = SsspOptions { fallback: policy, ..Default::default() };
        let mut r = SsspResult::compute(&res, &g, 0, 0, &opt).unwrap();
        out.push(dyng::update_one(&res, &mut g, &batch.view(), &mut r).unwrap());
        trees.push((r.distances().to_vec(), r.parents().to_vec()));
        pushes = static_pushes(&res, &g, 0);
    }
    assert!(trees.windows(2).all(|w| w[0] == w[1]));
    (out[0], out[1], pushes, out[2])
}

#[test]
fn an_insertion_above_much_of_the_tree_recomputes_before_any_repair() {
    // 2 -> 1 (weight 700) shortens vertex 1 by 299, below the shortcut rule's 40 % of the
    // largest distance (1011), but also the 4094 vertices below it: the sample finds half the
    // tree to search, although only one insertion head improves and nothing is invalidated.
    let mut b = Batch::new(1);
    b.insert(2, 1, &[700]);
    let (adaptive, never, static_pushes, _) = adaptive_and_never(1, b);
    assert!(!never.fallback_used);
    assert!(adaptive.fallback_used);
    assert_eq!(adaptive.pushes, static_pushes, "not a single repair expansion");
    assert_eq!((adaptive.invalidated, never.invalidated), (0, 0));
}

#[test]
fn an_insertion_above_little_of_the_tree_is_repaired() {
    // The same shortcut into vertex 7 (8 -> 7): an eighth of the tree to search, below the
    // policy's share.
    let mut b = Batch::new(1);
    b.insert(8, 7, &[700]);
    let (adaptive, never, _, _) = adaptive_and_never(7, b);
    assert!(!adaptive.fallback_used);
    assert_eq!(adaptive.pushes, never.pushes);
}

#[test]
fn a_deletion_above_most_of_the_tree_recomputes_with_an_estimated_count() {
    // Deleting the tree edge 0 -> 1 invalidates vertex 1 and the 4094 below it (the spare edge
    // 2 -> 1 keeps them reachable). The adaptive update recomputes from its sample, without the
    // exact walk, and reports the sample's estimate; the repair counts exactly.
    let mut b = Batch::new(1);
    b.delete(0, 1);
    let (adaptive, never, static_pushes, counted) = adaptive_and_never(1, b);
    assert_eq!(never.invalidated, 4095);
    assert!(counted.fallback_used);
    assert_eq!(counted.invalidated, 4095, "AdaptiveCounted walks for the exact count");
    assert!(adaptive.fallback_used);
    assert_eq!(adaptive.pushes, static_pushes);
    let error = (adaptive.invalidated - never.invalidated).unsigned_abs() as f64 / 8191.0;
    assert!(error < 0.15, "estimate {} for {}", adaptive.invalidated, never.invalidated);
}

#[test]
fn the_estimate_counts_invalidated_vertices_below_an_improving_head() {
    // Deleting 0 -> 1 invalidates 4095 vertices; inserting 2 -> 3 (weight 700) shortens vertex
    // 3, which lies below 1, by 299, under the shortcut rule's 40 % of the largest distance
    // (1011): the sample decides, and the sampled vertices below 3 are below the root 1 as
    // well, and count as invalidated in the estimate.
    let mut b = Batch::new(1);
    b.delete(0, 1);
    b.insert(2, 3, &[700]);
    let (adaptive, never, _, counted) = adaptive_and_never(1, b);
    assert_eq!(never.invalidated, 4095);
    assert_eq!(counted.invalidated, 4095);
    assert!(adaptive.fallback_used);
    let error = (adaptive.invalidated - never.invalidated).unsigned_abs() as f64 / 8191.0;
    assert!(error < 0.15, "estimate {} for {}", adaptive.invalidated, never.invalidated);
}

#[test]
fn a_shortcut_that_decides_before_the_sample_reports_the_distinct_roots() {
    // As above with weight 1: 3 gets shorter by 999, a shortcut. The tree's largest distance is
    // known (it was computed), so the rule decides before any sample, and `invalidated` is the
    // number of distinct roots, a lower bound (`AdaptiveCounted` still walks for the count).
    let mut b = Batch::new(1);
    b.delete(0, 1);
    b.insert(2, 3, &[1]);
    let (adaptive, never, static_pushes, counted) = adaptive_and_never(1, b);
    assert!(adaptive.fallback_used && counted.fallback_used);
    assert_eq!(adaptive.pushes, static_pushes, "not a single repair expansion");
    assert_eq!((adaptive.invalidated, never.invalidated, counted.invalidated), (1, 4095, 4095));
}

#[test]
fn a_mosp_update_repairs_its_combined_tree_into_the_one_a_fresh_combine_builds() {
    // 4,900 vertices (the adaptive policy's size), batches drawn by the original generator from
    // the current state, local ones repaired: after each update the combined tree and the path
    // costs equal those of a MOSP computed on the updated graph, on one thread and on two.
    use dyng::io::generators::changegen::{generate_changes, ChangeOptions};
    for threads in [1, 2] {
        let res = Resources::parallel(threads).unwrap();
        let mut g = grid_graph(70, 3);
        let mut m = MospResult::compute(&res, &g, 0, &MospOptions::default()).unwrap();
        let mut repaired = 0;
        for seed in 1..=8 {
            let opt = ChangeOptions { changes: 40, seed, safe: seed % 2 == 0, local_hops: if seed % 4 < 2 { 6 } else { 0 }, ..Default::default() };
            let (b, _) = generate_changes(&g.to_csr(), &opt).unwrap();
            dyng::update(&res, &mut g, &b.view(), &mut [(&mut m).into()]).unwrap();
            let fresh = MospResult::compute(&res, &g, 0, &MospOptions::default()).unwrap();
            assert_eq!(m.combined_distances(), fresh.combined_distances(), "seed {seed}");
            assert_eq!(m.combined_parents(), fresh.combined_parents(), "seed {seed}");
            assert_eq!(m.path_costs(), fresh.path_costs(), "seed {seed}");
            let search = m.combine_stats().search;
            if !search.fallback_used && search.pushes < g.n() as i64 / 2 {
                repaired += 1;
            }
        }
        assert!(repaired >= 2, "{threads} threads: {repaired} combined trees repaired");
    }
}

/// What a service shares between threads is `Send + Sync`; a type that stops being so fails this
/// test's build.
#[test]
fn shared_types_are_send_and_sync() {
    fn shareable<T: Send + Sync>() {}
    shareable::<Resources>();
    shareable::<Graph>();
    shareable::<SsspResult>();
    shareable::<MospResult>();
    shareable::<Batch>();
    shareable::<Error>();
    shareable::<UpdateStats>();
    shareable::<dyng::worker::Client>();
}
