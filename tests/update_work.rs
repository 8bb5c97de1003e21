//! An update costs what the batch changes, not what the graph holds: checked by the engines' own
//! counters (`UpdateStats::visits`, `pushes`), without a clock.

mod common;

use dyng::io::generators::changegen::{generate_changes, ChangeMode, ChangeOptions};
use dyng::io::generators::graphgen::grid;
use dyng::{Csr, Fallback, Graph, MospOptions, MospResult, Resources, SsspOptions, SsspResult, WeightLayout};

fn grid_graph(side: usize, k: usize) -> Graph {
    let t = grid(side, side, k, 1, 100, 11).unwrap();
    Graph::new(Csr::from_arrays(t.n, t.k, t.row_ptr, t.col_ind, &t.weights, WeightLayout::EdgeMajor).unwrap())
}

/// The work of one objective's update beyond its own changes: every step's visits and the
/// search's expansions.
fn work(s: &dyng::UpdateStats) -> i64 {
    s.visits.total() + s.pushes
}

#[test]
fn a_small_batch_costs_what_it_changes_on_every_engine() {
    // 250,000 vertices; one to ten changes a batch in a small square far from the source. The
    // work of each objective's update must stay within a constant of its changes and of the
    // vertices it changed, far below n (a pass over every vertex would count n).
    let mut g = grid_graph(500, 3);
    let n = g.n() as i64;
    for res in [Resources::sequential(), Resources::parallel(1).unwrap(), Resources::parallel(2).unwrap()] {
        let mut m = MospResult::compute(&res, &g, 0, &MospOptions::default()).unwrap();
        let mut s = SsspResult::compute(&res, &g, 7, 1, &SsspOptions::default()).unwrap();
        // Over the updates that change under 1 % of the vertices, the largest share of n visited.
        let (mut worst, mut small) = (0f64, 0);
        for step in 0..30u32 {
            let mode = [ChangeMode::Reweight, ChangeMode::Increase, ChangeMode::Uniform][step as usize % 3];
            let opt = ChangeOptions { changes: 1 + step as usize % 10, mode, seed: 50 + step, local_hops: 4, safe: true, ..Default::default() };
            let (batch, _) = generate_changes(&g.to_csr(), &opt).unwrap();
            let changes = (batch.num_insertions() + batch.num_deletions()) as i64;
            dyng::update(&res, &mut g, &batch.view(), &mut [(&mut m).into(), (&mut s).into()]).unwrap();
            for t in m.objective_stats().iter().chain([&s.stats()]) {
                if t.fallback_used {
                    continue;
                }
                let w = work(t);
                let bound = 64 * (changes + t.affected + t.invalidated + 1);
                assert!(w <= bound, "{res:?} step {step}: work {w} ({:?}, {} pushes) for {changes} changes and {} affected", t.visits, t.pushes, t.affected);
                if t.affected + t.invalidated < n / 100 {
                    small += 1;
                    worst = worst.max(w as f64 / n as f64);
                }
            }
            let fresh = MospResult::compute(&res, &g, 0, &MospOptions::default()).unwrap();
            assert_eq!(m.combined_parents(), fresh.combined_parents(), "step {step}");
            assert_eq!(m.path_costs(), fresh.path_costs(), "step {step}");
        }
        assert!(small >= 40, "{res:?}: {small} small updates");
        assert!(worst < 0.05, "{res:?}: a small update visited {worst:.3} n");
    }
}

#[test]
fn a_batch_that_changes_nothing_visits_almost_nothing() {
    // A weight raised on an edge outside every tree, then set back: no vertex changes.
    let res = Resources::parallel(1).unwrap();
    let mut g = grid_graph(300, 1);
    let opt = SsspOptions { fallback: Fallback::Adaptive, ..Default::default() };
    let mut r = SsspResult::compute(&res, &g, 0, 0, &opt).unwrap();
    let rows = g.rows();
    let (u, e) = (0..g.n())
        .find_map(|u| rows.row(u).find(|&e| r.parents()[rows.heads()[e] as usize] != u as i32).map(|e| (u, e)))
        .unwrap();
    let (v, w) = (rows.heads()[e], rows.column(0)[e]);
    for weight in [w + 50, w] {
        let mut b = dyng::Batch::new(1);
        b.insert(u as i32, v, &[weight]);
        let s = dyng::update_one(&res, &mut g, &b.view(), &mut r).unwrap();
        assert_eq!((s.affected, s.invalidated, s.fallback_used), (0, 0, false));
        assert!(work(&s) <= 8, "{:?}, {} pushes", s.visits, s.pushes);
    }
}

#[test]
fn an_insertion_that_changes_no_tree_visits_no_vertex() {
    // A chain 0 -> 1 -> ... of weight 3, and one edge back of the largest weight: 65,537 vertices
    // and weights to 2^31 - 1 leave the words no room for parents, so a repair would pack, pull
    // and write back every vertex. An insertion that neither lowers its head's distance nor
    // reaches it at the same distance from a lower-id tail leaves the tree as it is, with no
    // vertex visited; one that ties from a lower-id tail, or lowers the distance, is repaired.
    let n = 65_537;
    let (mut tails, mut heads, mut w): (Vec<i32>, Vec<i32>, Vec<i32>) = ((0..n - 1).collect(), (1..n).collect(), vec![3; n as usize - 1]);
    tails.push(n - 1);
    heads.push(n - 2);
    w.push(i32::MAX);
    let csr = Csr::from_edges(n as usize, 1, &tails, &heads, &w).unwrap();
    for res in [Resources::sequential(), Resources::parallel(1).unwrap(), Resources::parallel(2).unwrap()] {
        let mut g = Graph::new(csr.clone());
        let opt = SsspOptions { fallback: Fallback::Adaptive, ..Default::default() };
        let mut r = SsspResult::compute(&res, &g, 0, 0, &opt).unwrap();
        let v = n / 2;
        // Weight 7 from v - 2 is longer; 6 ties from a lower id than v's parent v - 1; 5 is shorter.
        for (weight, changes) in [(7, false), (6, true), (5, true)] {
            let mut b = dyng::Batch::new(1);
            b.insert(v - 2, v, &[weight]);
            let s = dyng::update_one(&res, &mut g, &b.view(), &mut r).unwrap();
            assert!(!s.packed_parents && !s.fallback_used, "{res:?}, weight {weight}: {s:?}");
            if changes {
                assert!(s.affected > 0, "{res:?}, weight {weight}: {s:?}");
            } else {
                assert_eq!((s.affected, s.pushes, s.visits.pack, s.visits.pull, s.visits.write_back), (0, 0, 0, 0, 0), "{res:?}: {:?}", s.visits);
                assert!(work(&s) <= 8, "{res:?}: {:?}", s.visits);
            }
            let fresh = SsspResult::compute(&res, &g, 0, 0, &opt).unwrap();
            assert_eq!((r.distances(), r.parents()), (fresh.distances(), fresh.parents()), "{res:?}, weight {weight}");
        }
    }
}

#[test]
fn a_batch_that_changes_no_tree_makes_no_in_rows() {
    // The in-rows (the reverse graph, made when a repair first pulls over in-edges) are not made
    // for a batch that leaves every tree as it is: two edges closed outside the trees. A tree
    // edge deleted next makes them. (A batch that changes a tree pulls every insertion's head,
    // whatever its weight, as the originals do.)
    for res in [Resources::sequential(), Resources::parallel(1).unwrap(), Resources::parallel(2).unwrap()] {
        let mut g = grid_graph(60, 2);
        let mut m = MospResult::compute(&res, &g, 0, &MospOptions::default()).unwrap();
        let rows = g.rows();
        let in_no_tree = |u: usize, v: i32| m.trees().iter().all(|t| t.parents()[v as usize] != u as i32);
        let outside: Vec<(i32, i32)> = (0..g.n())
            .flat_map(|u| rows.row(u).map(move |e| (u, e)))
            .filter(|&(u, e)| in_no_tree(u, rows.heads()[e]))
            .map(|(u, e)| (u as i32, rows.heads()[e]))
            .take(2)
            .collect();
        let before = g.row_bytes();
        let mut b = dyng::Batch::new(2);
        b.delete(outside[0].0, outside[0].1);
        b.delete(outside[1].0, outside[1].1);
        let fresh_check = |g: &Graph, m: &MospResult| {
            let fresh = MospResult::compute(&res, g, 0, &MospOptions::default()).unwrap();
            assert_eq!(m.combined_parents(), fresh.combined_parents());
            assert_eq!(m.path_costs(), fresh.path_costs());
        };
        let mut s = SsspResult::compute(&res, &g, 0, 1, &SsspOptions::default()).unwrap();
        let fresh_tree = |g: &Graph, s: &SsspResult| {
            let fresh = SsspResult::compute(&res, g, 0, 1, &SsspOptions::default()).unwrap();
            assert_eq!((s.distances(), s.parents()), (fresh.distances(), fresh.parents()));
        };
        dyng::update(&res, &mut g, &b.view(), &mut [(&mut m).into(), (&mut s).into()]).unwrap();
        assert_eq!(g.row_bytes(), before, "{res:?}: a batch that changes no tree made in-rows");
        fresh_check(&g, &m);
        fresh_tree(&g, &s);
        let v = 1 + g.n() as i32 / 2;
        let mut b = dyng::Batch::new(2);
        b.delete(m.trees()[0].parents()[v as usize], v);
        dyng::update(&res, &mut g, &b.view(), &mut [(&mut m).into(), (&mut s).into()]).unwrap();
        assert!(g.row_bytes() > before, "{res:?}: a deleted tree edge's repair pulls over in-edges");
        fresh_check(&g, &m);
        fresh_tree(&g, &s);
    }
}

fn arrays<'a>(row_ptr: &'a [i32], col: &'a [i32], w: &'a [i32]) -> dyng::CsrArrays<'a> {
    dyng::CsrArrays { row_ptr, col, w }
}

#[test]
fn a_drop_in_call_on_a_clean_tree_writes_back_what_it_repairs() {
    // The caller's arrays, one objective: a tree edge far from the source raised, so a small
    // subtree repairs. A clean tree (every entry in range, unreachable ones (INF, -1)) is packed
    // and written back only where the repair touches it; the result is the updated graph's tree.
    let t = grid(300, 300, 1, 1, 100, 11).unwrap();
    let n = t.n;
    let (rp, col, mut w) = (t.row_ptr.clone(), t.col_ind.clone(), t.weights.clone());
    let res = Resources::parallel(1).unwrap();
    let (mut dist, mut parent) = (vec![0i64; n], vec![0i32; n]);
    dyng::sosp_solve_arrays(&res, arrays(&rp, &col, &w), 0, 0, 0, &mut dist, &mut parent).unwrap();
    let v = n - 302;
    let u = parent[v] as usize;
    let e = (rp[u] as usize..rp[u + 1] as usize).find(|&e| col[e] as usize == v).unwrap();
    w[e] += 50;
    let max_weight = *w.iter().max().unwrap() as i64;
    let s = dyng::sosp_update_arrays(&res, arrays(&rp, &col, &w), None, &[u as i32], &[v as i32], &[], 0, 0, max_weight, &mut dist, &mut parent).unwrap();
    assert!(s.invalidated > 0 && s.affected > 0, "{s:?}");
    let done = s.visits.pack + s.visits.write_back;
    let bound = 64 * (s.affected + s.invalidated + 1);
    assert!(done <= bound && done < n as i64 / 20, "{:?} for {} affected", s.visits, s.affected);
    // Without the reverse graph the pull is one pass over the rows, counted n besides its
    // candidates (where a reverse graph was built for the call, uncounted).
    let pulled = s.visits.pull - n as i64;
    assert!((0..=bound).contains(&pulled), "{:?} for {} affected", s.visits, s.affected);
    let (mut fresh_d, mut fresh_p) = (vec![0i64; n], vec![0i32; n]);
    dyng::sosp_solve_arrays(&res, arrays(&rp, &col, &w), 0, 0, 0, &mut fresh_d, &mut fresh_p).unwrap();
    assert_eq!((&dist, &parent), (&fresh_d, &fresh_p));

    // Given the reverse graph, Delta and max_weight, the rows are checked as the repair reads
    // them: with every weight of the graph damaged, the same repair is refused by the first row
    // it reads, the tree left as it was.
    // The weight set back: a decrease, listed by its head.
    w[e] -= 50;
    let (rrp, rcol, rw) = common::reverse_csr(&rp, &col, &w);
    let rev = arrays(&rrp, &rcol, &rw);
    let s = dyng::sosp_update_arrays(&res, arrays(&rp, &col, &w), Some(rev), &[], &[], &[v as i32], 0, 100, max_weight, &mut dist, &mut parent).unwrap();
    assert!(s.affected > 0 && s.visits.write_back < n as i64 / 20, "{:?}", s.visits);
    let zero = vec![0; w.len()];
    dist[v] += 50;
    let (d0, p0) = (dist.clone(), parent.clone());
    let e = dyng::sosp_update_arrays(&res, arrays(&rp, &col, &zero), Some(rev), &[], &[], &[v as i32], 0, 100, max_weight, &mut dist, &mut parent).unwrap_err();
    assert!(e.to_string().contains("the graph") && e.to_string().contains("weight 0"), "{e}");
    assert_eq!((dist, parent), (d0, p0));
}

#[test]
fn a_drop_in_call_on_an_unclean_tree_is_normalized_as_before() {
    // 0 -> 1 -> 2 and 37 vertices without edges; vertex 3 unreachable but given a parent. The
    // unclean tree is packed whole, as the originals' packing does, and 3 written back as
    // (INF, -1); the repair is the clean tree's, which writes back what it touched only.
    let n = 40;
    let mut rp = vec![0, 1, 2];
    rp.resize(n + 1, 2);
    let (col, w) = (vec![1, 2], vec![1, 5]);
    let res = Resources::parallel(1).unwrap();
    let inf = dyng::DISTANCE_INF;
    let mut runs = Vec::new();
    for p3 in [-1, 2] {
        // Edge 1 -> 2 raised from 1 to 5.
        let (mut dist, mut parent) = (vec![inf; n], vec![-1; n]);
        dist[..3].copy_from_slice(&[0, 1, 2]);
        parent[..4].copy_from_slice(&[-1, 0, 1, p3]);
        let s = dyng::sosp_update_arrays(&res, arrays(&rp, &col, &w), None, &[1], &[2], &[], 0, 0, 5, &mut dist, &mut parent).unwrap();
        assert_eq!((&dist[..4], &parent[..4]), (&[0, 1, 6, inf][..], &[-1, 0, 1, -1][..]), "parent[3] = {p3}");
        assert!(dist[4..].iter().all(|&d| d == inf) && parent[4..].iter().all(|&p| p == -1));
        runs.push(s);
    }
    assert!(runs[0].visits.write_back < 4, "clean: {:?}", runs[0].visits);
    assert_eq!(runs[1].visits.write_back, n as i64, "unclean: {:?}", runs[1].visits);
    assert_eq!(runs[1].affected, runs[0].affected + 1);
}

#[test]
fn a_drop_in_call_whose_changes_invalidate_no_root_walks_no_vertex() {
    // Deleted non-tree edges only (the caller passes them as changed edges): no head is its
    // tree edge's, so nothing is invalidated. A tree whose parents are all closer to the source
    // than their children has no cycle, so no vertex is walked; one that is not so (here a
    // parent cycle) is walked, and refused.
    let t = grid(100, 100, 1, 1, 100, 11).unwrap();
    let n = t.n;
    let (rp, col, w) = (t.row_ptr.clone(), t.col_ind.clone(), t.weights.clone());
    let max_weight = *w.iter().max().unwrap() as i64;
    for threads in [1, 2] {
        let res = Resources::parallel(threads).unwrap();
        let (mut dist, mut parent) = (vec![0i64; n], vec![0i32; n]);
        dyng::sosp_solve_arrays(&res, arrays(&rp, &col, &w), 0, 0, 0, &mut dist, &mut parent).unwrap();
        let (mut from, mut to) = (Vec::new(), Vec::new());
        for u in (0..n).step_by(97) {
            if let Some(e) = (rp[u] as usize..rp[u + 1] as usize).find(|&e| parent[col[e] as usize] != u as i32) {
                from.push(u as i32);
                to.push(col[e]);
            }
        }
        assert!(from.len() > 50);
        let (d0, p0) = (dist.clone(), parent.clone());
        let s = dyng::sosp_update_arrays(&res, arrays(&rp, &col, &w), None, &from, &to, &[], 0, 0, max_weight, &mut dist, &mut parent).unwrap();
        assert_eq!((s.invalidated, s.affected, s.visits.invalidate), (0, 0, 0), "{threads} threads: {:?}", s.visits);
        assert_eq!((&dist, &parent), (&d0, &p0));
        // The same call on a tree with a cycle far from every change: walked, and refused.
        let (a, b) = (n - 1, parent[n - 1] as usize);
        parent[b] = a as i32;
        let e = dyng::sosp_update_arrays(&res, arrays(&rp, &col, &w), None, &from, &to, &[], 0, 0, max_weight, &mut dist, &mut parent).unwrap_err();
        assert!(e.to_string().contains("parent cycle"), "{e}");
        // A tree whose distances do not fall along its parents, but without a cycle: walked.
        parent[b] = p0[b];
        dist[b] = dist[a];
        let s = dyng::sosp_update_arrays(&res, arrays(&rp, &col, &w), None, &from, &to, &[], 0, 0, max_weight, &mut dist, &mut parent).unwrap();
        assert_eq!((s.invalidated, s.visits.invalidate), (0, n as i64), "{threads} threads");
    }
}

#[test]
fn a_drop_in_call_with_many_insertions_packs_the_whole_tree() {
    // A batch of more than n / 32 insertions spreads gains over most of the tree, which a
    // repair then meets: the clean tree is packed in one pass (n visits) instead of each word
    // loaded when met; fewer insertions leave it loaded lazily. Either way the updated graph's tree.
    let t = grid(100, 100, 1, 1, 100, 11).unwrap();
    let n = t.n;
    let res = Resources::parallel(1).unwrap();
    for (inserted, packed_whole) in [(n / 32 + 8, true), (n / 64, false)] {
        let (mut dist, mut parent) = (vec![0i64; n], vec![0i32; n]);
        dyng::sosp_solve_arrays(&res, arrays(&t.row_ptr, &t.col_ind, &t.weights), 0, 0, 0, &mut dist, &mut parent).unwrap();
        let mut g = grid_graph(100, 1);
        let mut b = dyng::Batch::new(1);
        let heads: Vec<i32> = (0..inserted).map(|i| ((i * 7919 + 13) % n) as i32).collect();
        // Weight 1, the least: an insertion of an edge the graph has never raises it, so no
        // changed edge is listed.
        for (i, &v) in heads.iter().enumerate() {
            b.insert(((i * 104_729 + 5) % n) as i32, v, &[1]);
        }
        dyng::update(&res, &mut g, &b.view(), &mut []).unwrap();
        let c = g.to_csr();
        let (rp, col, w) = (c.row_ptr(), c.col_ind(), c.weights());
        let s = dyng::sosp_update_arrays(&res, arrays(rp, col, w), None, &[], &[], &heads, 0, 0, 100, &mut dist, &mut parent).unwrap();
        assert_eq!(s.visits.pack == n as i64, packed_whole, "{inserted} insertions: {:?}", s.visits);
        let (mut fresh_d, mut fresh_p) = (vec![0i64; n], vec![0i32; n]);
        dyng::sosp_solve_arrays(&res, arrays(rp, col, w), 0, 0, 0, &mut fresh_d, &mut fresh_p).unwrap();
        assert_eq!((&dist, &parent), (&fresh_d, &fresh_p), "{inserted} insertions");
    }
}

#[test]
fn a_repair_that_invalidates_a_twelfth_of_a_large_tree_packs_it_whole() {
    // Past n / 12 invalidated vertices of a tree of 2^18 vertices or more a repair meets enough
    // of it that one pass packing it costs less than loading each word when met: n pack visits
    // then, fewer below, and fewer on a smaller tree at any share. A result's own tree and a
    // drop-in caller's clean one alike; either way the updated graph's tree.
    for (side, large) in [(520, true), (100, false)] {
        let n = side * side;
        assert_eq!(n >= 1 << 18, large);
        let res = Resources::parallel(1).unwrap();
        let tree = SsspResult::compute(&res, &grid_graph(side, 1), 0, 0, &SsspOptions::default()).unwrap();
        // Each vertex's subtree size, to pick a tree edge above a twelfth of n and one below.
        let mut size = vec![1usize; n];
        let mut by_dist: Vec<usize> = (0..n).collect();
        by_dist.sort_by_key(|&v| std::cmp::Reverse(tree.distances()[v]));
        for &v in &by_dist {
            if let Ok(p) = usize::try_from(tree.parents()[v]) {
                size[p] += size[v];
            }
        }
        let pick = |lo: usize, hi: usize| (1..n).find(|&v| (lo..hi).contains(&size[v])).unwrap();
        for (v, above) in [(pick(n / 8, n / 2), true), (pick(n / 40, n / 20), false)] {
            let packed_whole = above && large;
            let u = tree.parents()[v];
            let mut b = dyng::Batch::new(1);
            b.delete(u, v as i32);
            // A result's own tree (its graph made again: a result belongs to one graph).
            let mut g = grid_graph(side, 1);
            let mut s = SsspResult::compute(&res, &g, 0, 0, &SsspOptions::default()).unwrap();
            dyng::update(&res, &mut g, &b.view(), &mut [(&mut s).into()]).unwrap();
            let st = s.stats();
            let what = format!("n {n}, subtree of {}", size[v]);
            assert!(!st.fallback_used, "{what}");
            assert_eq!(st.visits.pack == n as i64, packed_whole, "own tree, {what}: {:?}", st.visits);
            let fresh = SsspResult::compute(&res, &g, 0, 0, &SsspOptions::default()).unwrap();
            assert_eq!((s.distances(), s.parents()), (fresh.distances(), fresh.parents()), "own tree, {what}");
            // A caller's clean tree, on the updated graph's arrays.
            let c = g.to_csr();
            let (mut dist, mut parent) = (tree.distances().to_vec(), tree.parents().to_vec());
            let st = dyng::sosp_update_arrays(&res, arrays(c.row_ptr(), c.col_ind(), c.weights()), None, &[u], &[v as i32], &[], 0, 0, 100, &mut dist, &mut parent).unwrap();
            assert_eq!(st.visits.pack == n as i64, packed_whole, "clean tree, {what}: {:?}", st.visits);
            assert_eq!((&dist[..], &parent[..]), (fresh.distances(), fresh.parents()), "clean tree, {what}");
        }
    }
}
